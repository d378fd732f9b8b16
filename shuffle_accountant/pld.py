"""Pessimistic privacy-loss distribution (PLD) of one shuffled round, on Google's
``dp_accounting`` (optional extra: ``pip install 'shuffle-accountant[pld]'``).

Construction
------------
Take the clone pair ``(P, Q)`` of an upper-bound analysis (:func:`.analyses.pair_for`,
``delta_true = scale * delta_pair`` for ``eps >= 0``). On the grid ``eps_i = i * D``
(``D`` = ``discretization``, ``i = -I_rev .. I_fwd``) compute *certified upper bounds*
``d_i >= delta_{P||Q}(eps_i)``:

* ``i >= 0``: the block upper bound of :mod:`.numeric.clones` on one fixed refined
  partition of totals, evaluated for the whole grid at once (:meth:`.clones.Direction.upper_on_grid`);
* ``i < 0``: the identity ``H_{e^eps}(P||Q) = 1 - e^eps + e^eps H_{e^-eps}(Q||P)``
  (``H_g(P||Q) = sum (P - g Q)_+``; split ``P = (P - gQ)_+ - (gQ - P)_+ + gQ``), with the
  certified upper bound of the reverse direction.

The sequence is made non-increasing (running minimum: still upper bounds, since the true
``delta`` is non-increasing) and handed to ``dp_accounting``'s pessimistic
Connect-the-Dots discretisation (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi, PETS 2022,
arXiv 2207.04380, Algorithm 1; ``pld_pmf.create_pmf_pessimistic_connect_dots_fixed_gap``).
The last grid point's value becomes the mass at ``+inf`` (the tail beyond the grid is
charged in full).

Why feeding *upper bounds* keeps the result an upper bound (proof; the paper states
the pessimistic property for the exact ``delta_i``, we need it for upper bounds on them)
-----------------------------------------------------------------------------------
Write ``delta_w(eps) = E_{L ~ w}[(1 - e^{eps - L})_+]`` for a PLD ``w`` (``L = +inf``
contributes 1), so ``delta_w = H_{e^eps}(P||Q)`` for all real ``eps``. The
Connect-the-Dots PLD ``w~`` has atoms on the grid and at ``+inf`` only, and (DGKKM22
Algorithm 1; checked numerically in ``tests/test_pld_route.py``) ``delta_w~(eps_i) = d_i``;
negative masses are clipped to 0, which only raises ``delta_w~``. Hence ``delta_w~`` is
affine in ``g = e^eps`` between consecutive grid points, affine on ``g in [0, e^{eps_1}]``
with value ``>= 1`` at ``g = 0`` (total mass), and constant ``= d_n`` beyond the last
point. The true ``delta`` is convex in ``g`` (a supremum over events ``S`` of the affine
``P(S) - g Q(S)``), non-increasing, and equals 1 at ``g = 0``. A convex function lies
below its chords, and the chord is monotone in its end values, so
``delta_{P||Q}(eps) <= delta_w~(eps)`` for **every real** ``eps``.

Pointwise domination on all of ``R`` is exactly "``w~`` is a dominating pair for
``(P, Q)``" (Zhu, Dong, Wang, AISTATS 2022, arXiv 2106.08567, Definition 7), and it is
preserved by (adaptive) composition (ibid., Theorem 10): the composed ``w~`` bounds the
``delta`` of ``T`` adaptive rounds, each of which is dominated by the clone pair
(FMT21, arXiv 2012.12803, Theorem 3.2). Both orders are built (``pmf_remove`` = ``P||Q``,
``pmf_add`` = ``Q||P``); ``dp_accounting`` composes each and reports the max, i.e.
replace-one neighbours in either order. For ``r0 = r1`` the two coincide and one is kept.

What is *not* certified: ``dp_accounting`` computes the Connect-the-Dots masses and the
FFT convolutions in plain floating point. :func:`composed_epsilon` therefore asks for
``delta - margin`` with ``margin = FLOAT_MARGIN_REL * delta + FLOAT_MARGIN_ABS`` (a
budget for that rounding, checked against exact convolution in the tests, not a proof)
and refuses ``delta`` below ``MIN_DELTA``. ``dp_accounting``'s own tail truncation is
pessimistic (truncated mass goes to ``+inf``).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Sequence

import numpy as np

from .analyses import ScaledPair, get_method, pair_for
from .errors import CertificationError, InvalidParameter, ShuffleAccountantError
from .numeric.clones import Direction, HockeyStick
from .results import Bound
from .validation import check_int, check_positive

#: ``pip`` line shown when the extra is missing.
PLD_INSTALL = "pip install 'shuffle-accountant[pld]'"
#: Default spacing of the privacy-loss grid.
DEFAULT_DISCRETIZATION = 1e-4
#: The grid stops where the certified ``delta`` drops below this; the rest goes to ``+inf``.
DEFAULT_TAIL = 1e-18
#: Floating-point budget for dp_accounting's (uncertified) arithmetic, see module docstring.
FLOAT_MARGIN_REL = 1e-4
FLOAT_MARGIN_ABS = 1e-13
#: Below this target delta the floating-point budget is not small enough to be meaningful.
MIN_DELTA = 1e-11
#: Auto discretization: refine (down to AUTO_FINEST) until every round has this many points.
AUTO_MIN_POINTS = 64
AUTO_FINEST = 1e-7
#: Largest number of grid points per direction (memory/time guard).
MAX_GRID = 400_000
DGKKM22 = "Doroshenko, Ghazi, Kamath, Kumar, Manurangsi, PETS 2022 (arXiv 2207.04380), Algorithm 1 (pessimistic Connect-the-Dots)"
ZDW22 = "Zhu, Dong, Wang, AISTATS 2022 (arXiv 2106.08567), Theorem 10 (composition of dominating pairs)"


class PldUnavailable(ShuffleAccountantError, ImportError):
    """``dp_accounting`` is not installed; the message says how to get it."""


def import_dp_accounting() -> ModuleType:
    """``dp_accounting.pld.privacy_loss_distribution``, imported lazily (~1-2 s).

    Deprecation/future warnings raised *while importing dp_accounting's own modules*
    (e.g. by its dependencies' shims) are silenced for the import only; nothing else is.
    Raises :class:`PldUnavailable` with the install line when the extra is missing.
    """
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"(dp_accounting|absl)(\.|$)")
            warnings.filterwarnings("ignore", category=PendingDeprecationWarning, module=r"(dp_accounting|absl)(\.|$)")
            from dp_accounting.pld import privacy_loss_distribution as pld_module
    except ImportError as exc:
        raise PldUnavailable(
            f"the privacy-loss-distribution route needs Google's dp_accounting: {PLD_INSTALL} ({exc})"
        ) from None
    return pld_module


# ---------------------------------------------------------------------------------------
# Certified delta(eps) on a whole grid, on one fixed refined partition.
# ---------------------------------------------------------------------------------------


def _tail_index(direction: Direction, scale: float, step: float, tail: float, top: int) -> int:
    """Smallest grid index ``i <= top`` with certified ``scale * delta(i * step) <= tail``
    (or ``top``, where ``delta = 0``), by doubling then bisection on coarse bounds."""

    def small(i: int) -> bool:
        if i >= top:
            return True
        return scale * direction.bounds(i * step, 0.5).upper * (1.0 + 1e-15) <= tail

    hi = 1
    while not small(hi):
        hi *= 2
    hi = min(hi, top)
    lo = hi // 2
    if lo == 0 and small(0):
        return 0
    while hi - lo > 1:  # small(hi) holds, small(lo) does not
        mid = (lo + hi) // 2
        if small(mid):
            hi = mid
        else:
            lo = mid
    return hi


@dataclass(frozen=True)
class DirectionProfile:
    """Certified ``upper[i] >= delta(i * discretization)``, ``i = 0 .. len-1``, of one
    direction (scale applied). The value at the last index is also an upper bound for
    every larger ``eps``."""

    discretization: float
    upper: np.ndarray
    blocks: int


def direction_profile(
    pair: ScaledPair, mirrored: bool, discretization: float, tail: float, rtol: float
) -> DirectionProfile:
    """:class:`DirectionProfile` of ``P||Q`` (``mirrored=False``) or ``Q||P``."""
    p = pair.pair.mirrored() if mirrored else pair.pair
    L = p.max_log_ratio
    top = math.ceil(L / discretization) if math.isfinite(L) else MAX_GRID
    top = min(top, MAX_GRID)
    finder = HockeyStick(p).direction()
    n_pts = _tail_index(finder, pair.scale, discretization, tail, top) + 1
    # Refine one partition at a few points of the grid, where delta is not negligible.
    d = HockeyStick(p).direction()
    span = (n_pts - 1) * discretization
    for x in np.linspace(0.0, span, 6)[:-1]:
        if x < L:
            d.bounds(float(x), rtol)
    grid = np.arange(n_pts) * discretization
    up = d.upper_on_grid(grid) * pair.scale * (1.0 + 1e-15)
    up[grid >= L] = 0.0  # every likelihood ratio is within e^{+-L}
    return DirectionProfile(discretization, np.minimum(up, 1.0), d.partition.size)


def pessimistic_deltas(forward: DirectionProfile, reverse: DirectionProfile) -> tuple[int, np.ndarray]:
    """Upper bounds on ``delta_{P||Q}(i * D)`` for ``i = -(len(reverse)-1) .. len(forward)-1``
    (the negative side from the reverse direction, see the module docstring), made
    non-increasing by a running minimum. Returns ``(lowest index, deltas)``."""
    D = forward.discretization
    m = reverse.upper.size - 1
    x = np.arange(m, 0, -1) * D  # -eps for eps = -m*D .. -D
    r = reverse.upper[m:0:-1]
    neg = (-np.expm1(-x) + np.exp(-x) * r) * (1.0 + 1e-15)  # a few roundings, upwards
    deltas = np.minimum(np.concatenate((neg, forward.upper)), 1.0)
    return -m, np.minimum.accumulate(deltas)


# ---------------------------------------------------------------------------------------
# dp_accounting objects
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RoundPld:
    """The ``dp_accounting`` PLD of one round and what went into it."""

    pld: Any  # dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
    discretization: float
    grid_points: int
    infinity_mass: float
    symmetric: bool
    blocks: int


def round_pld(
    eps0: float,
    n: int,
    method: str = "clones",
    k: int | None = None,
    discretization: float = DEFAULT_DISCRETIZATION,
    tail: float = DEFAULT_TAIL,
    rtol: float = 1e-4,
) -> RoundPld:
    """Pessimistic PLD of one shuffled round (see the module docstring for the proof that
    it dominates the analysis' clone pair in both orders)."""
    eps0 = check_positive("eps0", eps0)
    n = check_int("n", n)
    if not (isinstance(discretization, (int, float)) and 1e-7 <= discretization <= 0.1):
        raise InvalidParameter(f"discretization must be in [1e-7, 0.1], got {discretization!r}")
    if not 0.0 < tail < 1e-6:
        raise InvalidParameter(f"tail must be in (0, 1e-6), got {tail!r}")
    m = get_method(method)
    if m.kind != "upper" or not m.numerical:
        raise InvalidParameter(
            f"the PLD of a round needs a numerical upper-bound method (clones, stronger-clones, krr), got {method!r}"
        )
    return pair_pld(pair_for(method, eps0, n, k), discretization, tail, rtol)


def pair_pld(
    sp: ScaledPair, discretization: float = DEFAULT_DISCRETIZATION, tail: float = DEFAULT_TAIL, rtol: float = 1e-4
) -> RoundPld:
    """Pessimistic PLD of any clone pair (``pmf_remove`` = ``P||Q``, ``pmf_add`` = ``Q||P``,
    one pmf when the pair is symmetric)."""
    plm = import_dp_accounting()
    from dp_accounting.pld import pld_pmf

    fwd = direction_profile(sp, False, discretization, tail, rtol)
    rev = fwd if sp.pair.symmetric else direction_profile(sp, True, discretization, tail, rtol)

    def pmf(a: DirectionProfile, b: DirectionProfile) -> Any:
        lo, deltas = pessimistic_deltas(a, b)
        return pld_pmf.create_pmf_pessimistic_connect_dots_fixed_gap(discretization, lo, lo + deltas.size - 1, deltas)

    remove = pmf(fwd, rev)
    add = None if sp.pair.symmetric else pmf(rev, fwd)
    pld = plm.PrivacyLossDistribution(remove, add)
    inf_mass = max(float(fwd.upper[-1]), float(rev.upper[-1]))
    return RoundPld(pld, discretization, fwd.upper.size + rev.upper.size - 1, inf_mass, sp.pair.symmetric,
                    fwd.blocks + (0 if rev is fwd else rev.blocks))


def compose_plds(parts: Sequence[tuple[Any, int]]) -> Any:
    """``prod_j pld_j^{count_j}`` (``self_compose`` for repeated rounds, then ``compose``);
    ``dp_accounting``'s tail truncation is pessimistic."""
    total = None
    for pld, count in parts:
        p = pld.self_compose(count) if count > 1 else pld
        total = p if total is None else total.compose(p)
    if total is None:
        raise InvalidParameter("at least one round is needed")
    return total


def composed_epsilon(pld: Any, delta: float) -> tuple[float, float]:
    """``eps`` with ``delta_pld(eps) <= delta - margin`` (the floating-point budget of the
    module docstring), and the margin. Raises :class:`InvalidParameter` for
    ``delta < MIN_DELTA``."""
    if delta < MIN_DELTA:
        raise InvalidParameter(
            f"delta = {delta:.3g} is below {MIN_DELTA:g}, where the floating-point FFT composition of the PLD route "
            "is not trustworthy"
        )
    margin = FLOAT_MARGIN_REL * delta + FLOAT_MARGIN_ABS
    eps = float(pld.get_epsilon_for_delta(delta - margin))
    return (eps * (1.0 + 1e-12) if math.isfinite(eps) else math.inf), margin


# ---------------------------------------------------------------------------------------
# The `compose` row
# ---------------------------------------------------------------------------------------

PLD_ROUTE = "pessimistic PLD (Connect-the-Dots on certified delta(eps) upper bounds), composed by dp_accounting"


def pld_route(
    rounds: Sequence[tuple[float, int, int]],
    delta: float,
    method: str,
    k: int | None,
    discretization: float | None = None,
    inputs: dict[str, Any] | None = None,
) -> Bound:
    """The PLD row of ``shuffle-acct compose``: ``(eps0, n, count)`` rounds, identical
    rounds grouped and ``self_compose``-d, ``eps`` read off at ``delta`` minus the
    floating-point margin. ``kind = "upper"``; ``not applicable`` (with the reason and,
    when the extra is missing, the install line) otherwise.

    ``discretization=None`` (auto): ``DEFAULT_DISCRETIZATION``, divided by 10 (down to
    ``AUTO_FINEST``) while some round's grid has fewer than ``AUTO_MIN_POINTS`` points
    (very large ``n``: the losses of one round span only a few steps, and a coarse grid is
    sound but loose)."""
    inputs = dict(inputs or {}, discretization=discretization)
    citation = f"{DGKKM22}; {ZDW22}; Google dp_accounting"
    m = get_method(method)

    def not_applicable(reason: str) -> Bound:
        return Bound("epsilon", None, "not applicable", "pld", citation, inputs, reason)

    if m.kind != "upper" or not m.numerical:
        return not_applicable(f"PLD route: only for numerical upper-bound methods, not {method!r}")
    grouped: dict[tuple[float, int], int] = {}
    for eps0, n, count in rounds:
        grouped[(eps0, n)] = grouped.get((eps0, n), 0) + count
    try:
        auto = discretization is None
        step = DEFAULT_DISCRETIZATION if discretization is None else discretization
        while True:
            built = [(round_pld(eps0, n, method, k, step), count) for (eps0, n), count in grouped.items()]
            if not auto or step <= AUTO_FINEST * 1.0001 or min(b.grid_points for b, _ in built) >= AUTO_MIN_POINTS:
                break
            step /= 10.0
        discretization = step
        total = compose_plds([(b.pld, count) for b, count in built])
        eps, margin = composed_epsilon(total, delta)
    except PldUnavailable:
        return not_applicable(f"privacy-loss-distribution route: needs Google's dp_accounting ({PLD_INSTALL})")
    except (InvalidParameter, CertificationError) as exc:
        return not_applicable(f"PLD route: {exc}")
    warn: tuple[str, ...] = ()
    if not math.isfinite(eps):
        warn = ("the composed PLD's mass at +inf exceeds delta: refine --discretization or use another route",)
    inputs["discretization"] = discretization
    details = {
        "construction": PLD_ROUTE,
        "discretization": discretization,
        "tail_mass_per_round": DEFAULT_TAIL,
        "float_margin": margin,
        "grid_points": [b.grid_points for b, _ in built],
        "infinity_mass_per_round": [b.infinity_mass for b, _ in built],
        "note": "upper bound of the dominating pair's eps; for T = 1 it exceeds the exact eps by at most about one "
                "discretization step",
    }
    return Bound("epsilon", eps, "upper", "pld", citation, inputs,
                 f"{m.name}: {m.assumes}; {PLD_ROUTE} (discretization {discretization:g})", warn, details)

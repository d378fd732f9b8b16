"""Pessimistic privacy-loss distribution (PLD) of one shuffled round, on Google's
``dp_accounting`` (optional extra: ``pip install 'shuffle-accountant[pld]'``).

Construction
------------
Take the clone pair ``(P, Q)`` of an upper-bound analysis (:func:`.analyses.pair_for`,
``delta_true = scale * delta_pair`` for ``eps >= 0``). On the grid ``eps_i = i * D``
(``D`` = ``discretization``, ``i = -I_rev .. I_fwd``) compute *certified upper bounds*
``d_i >= delta_{P||Q}(eps_i)``:

* ``i >= 0``: the block upper bound of :mod:`.numeric.clones` on one fixed refined
  partition of totals, evaluated for the whole grid at once (:func:`grid_upper`: the
  hockey-stick divergence of the blocks' weighted kernel pairs, from one sort of their
  outcomes by privacy loss, or for long outcome lists from closed-form cuts and tail sums;
  the same bound as :meth:`.clones.Direction.upper_on_grid`);
* ``i < 0``: the identity ``H_{e^eps}(P||Q) = 1 - e^eps + e^eps H_{e^-eps}(Q||P)``
  (``H_g(P||Q) = sum (P - g Q)_+``; split ``P = (P - gQ)_+ - (gQ - P)_+ + gQ``), with the
  certified upper bound of the reverse direction.

The grid runs from 0 to the ``eps`` where the certified ``delta`` falls below the tail
(:func:`tail_epsilon`); by default its step is that ``eps`` over :data:`AUTO_POINTS`
(:func:`auto_discretization`), so the grid follows each round's own loss scale.

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
FFT convolutions in plain floating point (a repeated round is self-composed here with the same
method on dp_accounting's pmf objects and truncation bounds, by a real FFT,
:func:`_self_compose_pmf`; eps is read off as dp_accounting does, :func:`_pmf_epsilon`). :func:`composed_epsilon` therefore asks for
``delta - margin`` with ``margin = FLOAT_MARGIN_REL * delta + FLOAT_MARGIN_ABS +
composed_error`` and refuses ``delta`` below ``MIN_DELTA``. ``dp_accounting``'s own tail
truncation is pessimistic (truncated mass goes to ``+inf``).

``composed_error`` (:class:`Composed`) bounds the 1-norm of the FFT rounding in the composed
pmf, computed from the spectra at run time (:func:`fft_power_error`, :func:`fft_product_error`):
with one stated assumption (A), each output of a length-``L`` FFT of ``x`` (forward, or
inverse before the ``1/L`` scaling) is within ``FFT_ULPS * u * ceil(log2 L) * ||x||_1`` of
the exact DFT (``u = 2^-53``; the standard butterfly bound, Higham, *Accuracy and Stability
of Numerical Algorithms*, 2nd ed., §24.1, with a generous constant; measured in the tests
against an exact convolution). A pmf error moves every ``delta(eps)`` by at most its 1-norm
(``delta`` is ``inf_mass + sum_l p_l (1 - e^(eps - l))_+``, weights in ``[0, 1]``), and a
round's error ``e`` becomes at most ``T e`` after ``T`` compositions (``||a^T - b^T||_1 <= T
||a - b||_1`` for sub-probability-like vectors of 1-norm ``<= 1``). Each fresh round's
Connect-the-Dots masses are charged :data:`ROUND_FLOAT_ERROR` (measured ~5e-16, see the
tests), so long compositions at tiny ``delta`` are refused rather than trusted.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from .analyses import ScaledPair, get_method, pair_for
from .errors import CertificationError, InvalidParameter, ShuffleAccountantError
from .numeric import binomial as bn
from .numeric import fp
from .numeric.clones import Direction, HockeyStick
from .numeric.profile import PrivacyProfile
from .randomizers import randomizer_at
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
#: Assumption (A) of the module docstring: an FFT output's error, in units of
#: ``u * ceil(log2 L) * ||input||_1`` (the tests measure well below 1).
FFT_ULPS = 8.0
#: 1-norm charged for the floating-point Connect-the-Dots masses of one fresh round (the
#: ``delta`` they imply falls below the certified input by <= ~5e-16, measured in the tests).
ROUND_FLOAT_ERROR = 1e-14
_U = 2.0 ** -53
#: Auto discretization (``discretization=None``): the grid step is the narrowest round's
#: tail ``eps`` (:func:`tail_epsilon`) over this many points. Measured against much finer
#: grids, the composed ``eps`` is then within about 1e-5 (relative) of its limit for every n
#: and T tried (10^2 .. 10^8 users, 1 .. 10^4 rounds); a step of the tail over 300 points
#: gives about 6e-5, the former fixed 1e-4 about 5e-4 at n = 10^6.
AUTO_POINTS = 1000
AUTO_FINEST = 1e-7
AUTO_COARSEST = 1e-2
#: Relative width to which the partition behind the grid is refined (at a few grid points).
#: 1e-3 instead of 1e-4 changes the composed eps by about 1e-6 (relative; measured) and
#: needs far fewer blocks at large n.
PROFILE_RTOL = 1e-3
#: The partition is refined at ``0, 0.2, .., 0.8`` of the grid's span, to ``PROFILE_RTOL`` times
#: these factors. The last point (delta there ~1e-12) at 2e-3: at n = 1e6 that is ~500 blocks
#: instead of ~1400 (the grid ~3x faster) and moves the composed eps by at most 1.2e-5
#: (relative, looser; measured for eps0 0.5-3, n 1e3-1e8, T 1-1e4; 0 at n <= 3e5). Only
#: tightness is at stake: every block's bound is certified whatever the partition.
PROFILE_RTOL_FACTORS = (1.0, 1.0, 1.0, 1.0, 2.0)
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


def tail_epsilon(direction: Direction, scale: float, tail: float) -> float:
    """An ``eps`` with certified ``scale * delta(eps) <= tail`` (at most ~1% beyond the smallest
    such ``eps``): where the privacy-loss grid of the route stops (the mass beyond goes to
    ``+inf``). 0 when ``delta(0)`` is already below ``tail``; the pair's ``max_log_ratio``
    (``delta = 0`` there) at most. Found on coarse bounds: a bracket by doubling from 0.1, then
    interpolation steps on ``log delta`` (smooth and concave-like in ``eps``: few steps), every end
    decided by the certified upper bound; the end is rounded up to a power of ``2^(1/128)``."""
    L = direction.pair.max_log_ratio
    top = min(L, 745.0) if math.isfinite(L) else 745.0

    def gap(e: float) -> float:
        """log of the certified upper bound over ``tail`` (<= 0: small enough)."""
        if e >= L:
            return -math.inf
        up = scale * direction.bounds(e, 0.5).upper * (1.0 + 1e-15)
        return math.log(up / tail) if up > 0.0 else -math.inf

    f0 = gap(0.0)
    if f0 <= 0.0:
        return 0.0
    root0 = math.sqrt(f0)

    def h(e: float) -> float:
        """Positive while not small enough; about linear in ``e`` for a Gaussian-like tail
        (``log delta(0) - log delta(e)`` about quadratic): the steps below interpolate it."""
        f = gap(e)
        return root0 - math.sqrt(f0 - f) if f < f0 else root0

    lo, h_lo, hi = 0.0, root0, min(0.1, top)
    h_hi = h(hi)
    while h_hi > 0.0:  # the tail is further out
        if hi >= top:
            return float(top)
        lo, h_lo = hi, h_hi
        hi = min(2.0 * hi, top)
        h_hi = h(hi)
    repeats, last = 0, 0  # interpolate; bisect after two moves of the same end (no stalling)
    while hi - lo > 1e-2 * hi:
        frac = h_lo / (h_lo - h_hi) if math.isfinite(h_hi) and repeats < 2 else 0.5
        x = lo + (hi - lo) * min(max(frac, 0.02), 0.98)
        v = h(x)
        moved = 1 if v <= 0.0 else -1
        repeats, last = (repeats + 1 if moved == last else 1), moved
        if v <= 0.0:
            hi, h_hi = x, v
        else:
            lo, h_lo = x, v
    # rounded up to a fixed geometric grid (ratio 2^(1/128)): nearby rounds (a planner's search)
    # then get the same grid end and step, so the route's eps is smooth in eps0 and n; delta only
    # decreases beyond hi, so the rounded end is as good
    quantum = 2.0 ** (math.ceil(128.0 * math.log2(hi)) / 128.0) if hi > 0.0 else hi
    return float(min(max(quantum, hi), top))


#: Kernels with more than this many outcomes between the cutoffs at the two ends of the grid
#: are not listed as atoms (:func:`_atoms`) ...
ATOM_WINDOW = 16_384
#: ... and kernels with at least ``1 / CUT_RATIO`` times as many outcomes as the grid has points
#: go by closed-form cuts (:func:`_cut_grid`: no sort, work per outcome and per grid point), up
#: to this many outcomes; longer ones are evaluated point by point
#: (:meth:`.clones.TotalsGeometry.h`).
CUT_RATIO = 2.4
CUT_WINDOW = 1 << 22
#: Relative error allowed for computed log likelihood ratios (their rounding is ~1e-15).
LOG_RATIO_SLACK = 1e-13


def _windows(c: np.ndarray, u: np.ndarray, v: np.ndarray, s: np.ndarray, eps_max: float
             ) -> tuple[np.ndarray, np.ndarray]:
    """First and last outcome of each kernel's list in :func:`_atoms` (``u > v``)."""
    n1 = c + 1.0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        g1 = math.expm1(eps_max)
        cb = (u - v) - g1 * v
        rho_top = np.where(cb > 0.0, ((u - v) + g1 * (1.0 - v)) / cb, np.inf)
        a_top = np.where(np.isfinite(rho_top), rho_top * s * n1 / ((1.0 - s) + rho_top * s), n1)
    start = np.clip(np.floor(s * n1) - 2.0, 0.0, n1)
    end = np.clip(np.floor(np.nan_to_num(a_top, nan=0.0, posinf=1e300)) + 2.0, 0.0, n1)
    return start, end


#: A Boost binomial tail below this is not trusted to its relative budget (its sf underflows
#: before the pmf does); :func:`_binomial_rows` bounds it from the pmf instead.
TAIL_TRUST = 1e-280
#: Relative error charged per step of the pmf ratio recurrence of :func:`_binomial_rows` (the
#: ratio's four roundings and the product's one, with room to spare).
STEP_ROUNDING = 6e-16


def _scan(x: np.ndarray, op: Any, reverse: bool = False) -> np.ndarray:
    """Running ``op`` (``np.add``, ``np.multiply``) down the first axis, in place: one vector
    operation per row when the rows are long (much faster than ``np.cumsum(axis=0)``), else
    ``op.accumulate`` (same order of operations, same numbers)."""
    if x.shape[1] < 256:
        if reverse:
            x[::-1] = op.accumulate(x[::-1], axis=0)
        else:
            x[:] = op.accumulate(x, axis=0)
        return x
    rows = range(x.shape[0] - 2, -1, -1) if reverse else range(1, x.shape[0])
    d = 1 if reverse else -1
    for i in rows:
        op(x[i + d], x[i], out=x[i])
    return x


def _binomial_rows(c: np.ndarray, s: np.ndarray, start: np.ndarray, end: np.ndarray, rel: float
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``B(j) = P[Bin(c, s) = j]`` of many kernels, ``j = start - 1 .. end``: array ``b[i, r]``
    with ``j = start[r] - 1 + i`` (one column per kernel, zero-padded to the longest), the
    relative error charged to row ``i`` (the same for every kernel), the tails ``P[Bin(c, s) >
    end]`` and their relative errors.

    ``B`` is one Boost pmf at ``j = max(start - 1, 0)`` times the running product of the exact
    ratios ``B(j)/B(j-1) = (c - j + 1) s / (j (1 - s))`` (:data:`STEP_ROUNDING` per step; values
    that underflow count as 0, an absolute error below 1e-300 per kernel, which its bound adds).
    The tail is one Boost sf with its budget (:func:`.numeric.binomial.tail_error_budget`); a
    tail below :data:`TAIL_TRUST` (where Boost's sf underflows before the pmf) is replaced by a
    bound from the pmf at ``end``: beyond the mode the pmf ratio ``r = (c - end) s / ((end + 1)
    (1 - s))`` is non-increasing, so the tail is at most ``B(end) r / (1 - r)``, and at most
    ``(c - end) B(end)``."""
    width = int(np.max(end - start)) + 2
    i = np.arange(width, dtype=float)
    top = np.minimum(c, end)
    first = np.maximum(start - 1.0, 0.0)
    ratio = np.add.outer(i, start - 1.0)  # j
    with np.errstate(divide="ignore", invalid="ignore"):
        np.divide(np.subtract((c + 1.0)[None, :], ratio), ratio, out=ratio)
    ratio *= (s / (1.0 - s))[None, :]  # B(j) / B(j-1), exact ratio rounded four times
    ratio[0] = 0.0  # j = start - 1 (the anchor) or -1; set below
    ratio[1, start == 0.0] = 1.0  # j = 0 is the anchor when start = 0
    for r in np.flatnonzero(top - (start - 1.0) + 1.0 < width):  # beyond min(c, end): B = 0
        ratio[int(top[r] - (start[r] - 1.0)) + 1:, r] = 0.0
    b0, t_above, t_rel = np.empty(c.size), np.empty(c.size), np.empty(c.size)
    for sv in np.unique(s):
        sel = s == sv
        b0[sel] = bn.pmf(first[sel], c[sel], float(sv))
        t_above[sel] = bn.sf(end[sel], c[sel], float(sv))  # P[Bin > end]
        t_rel[sel] = bn.tail_error_budget(end[sel], c[sel], float(sv))
    ratio[0] = b0
    with np.errstate(under="ignore"):
        b = _scan(ratio, np.multiply)
    b[0, start == 0.0] = 0.0  # row 0 is j = -1 there
    rel_b = rel + STEP_ROUNDING * (i + 1.0)
    tiny = (t_above < TAIL_TRUST) & (end < c)
    if np.any(tiny):
        cols = np.arange(c.size)
        ie = (end - (start - 1.0)).astype(np.int64)
        b_end = b[ie, cols] * (1.0 + rel_b[ie])
        with np.errstate(divide="ignore", invalid="ignore"):
            r = (c - end) * s / ((end + 1.0) * (1.0 - s))
            geo = np.where(r < 1.0, b_end * r / (1.0 - r), np.inf)
        bound = np.minimum(geo, (c - end) * b_end) * (1.0 + 1e-12) + 1e-320
        t_above = np.where(tiny, np.maximum(t_above, bound), t_above)
    return b, rel_b, t_above, np.maximum(t_rel, rel) + 4e-16


def _atoms(c: np.ndarray, u: np.ndarray, v: np.ndarray, s: np.ndarray, weight: np.ndarray, eps_max: float,
           rel: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The outcomes of kernel pairs (:mod:`.clones`) as weighted atoms ``(loss, weight P,
    weight Q, relative error)``, for many kernels at once (padded to the longest list), and
    the summed masses and error term of the atoms at ``+inf`` (one-element arrays).

    Kernel pair: ``P(a) = u B(a-1) + (1-u) B(a)``, ``Q(a) = v B(a-1) + (1-v) B(a)``,
    ``B = Bin(c, s)``, ``u > v``; the ratio ``L(a) = P(a)/Q(a)`` increases in ``a`` (FMT21,
    arXiv 2012.12803, Appendix F). Listed: the outcomes between the cutoffs at ``eps = 0`` and
    at ``eps_max`` (closed form, two places of margin; :func:`_windows`), with their loss
    ``log L(a)`` and masses (:func:`_binomial_rows`); everything above them is one atom at loss
    ``+inf``; below them ``L <= 1``, never counted at ``eps >= 0``."""
    nb = c.size
    n1 = c + 1.0
    start, end = _windows(c, u, v, s, eps_max)
    b, rel_b, t_above, t_rel = _binomial_rows(c, s, start, end, rel)
    a = start[None, :] + np.arange(b.shape[0] - 1, dtype=float)[:, None]
    listed = a <= end[None, :]
    uu, vv, ss = u[None, :], v[None, :], s[None, :]
    p_a = uu * b[:-1] + (1.0 - uu) * b[1:]
    q_a = vv * b[:-1] + (1.0 - vv) * b[1:]
    rho = np.broadcast_to((rel_b[1:] + 4e-16)[:, None], p_a.shape)
    x = a / n1[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        loss = (np.log(uu * x / ss + (1.0 - uu) * (1.0 - x) / (1.0 - ss))
                - np.log(vv * x / ss + (1.0 - vv) * (1.0 - x) / (1.0 - ss)))
    loss = np.nan_to_num(loss, nan=-np.inf)
    b_end = b[(end - (start - 1.0)).astype(np.int64), np.arange(nb)]
    t_end = t_above + b_end
    p_top, q_top = u * t_end + (1.0 - u) * t_above, v * t_end + (1.0 - v) * t_above
    loss[~listed | (p_a <= 0.0)] = -np.inf  # padding and empty outcomes: never counted
    w = weight[None, :]
    p_a *= w
    q_a *= w
    top = (weight * p_top, weight * q_top, np.full(nb, t_rel + rel_b[-1]) + 4e-16)  # the atoms at +inf
    top_p, top_q, top_e = (np.array([np.sum(x)]) for x in (top[0], top[1], top[2] * (top[0] + top[1])))
    return loss.ravel(), p_a.ravel(), q_a.ravel(), rho.ravel(), top_p, top_q, top_e


def _cut_grid(c: np.ndarray, u: np.ndarray, v: np.ndarray, s: np.ndarray, eps: np.ndarray, rel: float
              ) -> tuple[np.ndarray, np.ndarray]:
    """Certified upper bounds on the hockey-stick divergences ``H_{e^eps}`` of kernel pairs
    (as in :func:`_atoms`, ``u > v``) at every ``eps`` of an ascending grid: ``(G, kernels)``.

    For long outcome lists (large clone counts), instead of sorting atoms: the optimal set at
    ``g = e^eps`` is the tail ``a >= k*``, ``k*`` the first ``a`` whose ratio ``L(a)`` exceeds
    ``g``. ``L(a) > g`` is ``r(a) = B(a-1)/B(a) = a (1-s) / ((c-a+1) s) > rho`` with ``rho = ((u-v) +
    (g-1)(1-v)) / ((u-v) - (g-1) v)`` (``L`` increases in ``r``), i.e. ``a > rho s (c+1) / ((1-s) +
    rho s)``: a closed-form cut ``k``. With the tails ``TB(j) = P[Bin >= j]`` (:func:`_binomial_rows`,
    summed from the top), ``sum_{a >= k} P(a) = u TB(k-1) + (1-u) TB(k)`` (``Q`` alike), and the
    divergence is ``P_tail - g Q_tail`` at ``k*``. Where the computed cut could differ from ``k*``
    (the closed form within its rounding of an integer, or clipped to the window), the bound adds
    ``sum_{a = k-2, k-1} (P(a) - g Q(a))_+ + sum_{a = k, k+1} (g Q(a) - P(a))_+``: the terms that
    move any ``k`` with ``|k - k*| <= 2`` to ``k*``, each clipped at 0. Kernels whose cut rounding
    reaches half an outcome are flagged (``ok`` false) for the caller to evaluate otherwise.
    Outcomes above the window of :func:`_windows` enter through the tail ``P[Bin > end]`` (they
    are above every cut). The sum is computed as ``(u - g v) B(k-1) - (g - 1) TB(k)``, so the
    budget (the masses' relative errors and the summation's rounding) falls on ``(u + g v)
    B(k-1) + (g - 1) TB(k)`` and the corrected outcomes' masses. Returns ``(bounds, ok)``."""
    nb = c.size
    n1 = c + 1.0
    start, end = _windows(c, u, v, s, float(eps[-1]))
    b, rel_b, t_above, t_rel = _binomial_rows(c, s, start, end, rel)
    width = b.shape[0]
    tb = np.empty((width + 1, nb))  # TB(j), j = start - 1 .. start + width - 1
    tb[:-1] = b
    tb[-1] = t_above
    _scan(tb, np.add, reverse=True)
    g = np.exp(eps)[:, None]
    g1 = np.expm1(eps)[:, None]
    uu, vv, ss = u[None, :], v[None, :], s[None, :]
    duv = uu - vv
    # (every (grid point, kernel) array below is written in place where it can be: fresh arrays of
    # this size cost page faults, as much as the arithmetic; the operations are those of the
    # plain expressions, in the same order, so the numbers are the same)
    # a > rho s (c+1) / ((1-s) + rho s) = s (c+1) num / ((1-s) den + s num), num = (u-v) + (g-1)(1-v),
    # den = (u-v) - (g-1) v, and (1-s) den + s num = (u-v) + (g-1)(s-v); no outcome qualifies when
    # den <= 0 (g >= u/v, the largest ratio), which only kernels whose den is small at the grid's
    # top need to check
    top_g1 = float(g1[-1, 0])
    flat_den = np.flatnonzero(u - v - top_g1 * v <= 1.6e-15 * (u - v + top_g1 * v))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        a_thr = np.multiply(g1, 1.0 - vv)
        a_thr += duv  # num
        a_thr *= ss * n1[None, :]
        work = np.multiply(g1, ss - vv)
        work += duv
        a_thr /= work
        if flat_den.size:
            den = duv[:, flat_den] - g1 * vv[:, flat_den]
            a_thr[:, flat_den] = np.where(den > 0.0, a_thr[:, flat_den], np.inf)
    # Rounding of a_thr: relative kappa: num to 3 ulps (positive terms), the denominator to 2 ulps
    # of u-v + (g-1)|s-v| <= max(1, (s+v)/(1-v)) num <= max(1, (s+v)/(1-v)) / s times itself, and
    # 3 more; doubled. Kernels where it could reach a quarter of an outcome inside the window (a_thr
    # below end + 8; beyond, the cut is end + 1 either way) are left to the caller.
    kappa = 1.2e-16 * (24.0 + 4.0 * np.maximum(1.0, (s + v) / (1.0 - v)) / s)
    ok = kappa * (end + 8.0) <= 0.25
    fl = np.floor(np.minimum(a_thr, 4e18, out=work) if flat_den.size else a_thr, out=work)
    # where the cut could differ from the exact one: a_thr within its rounding of an integer (at
    # most 2 kappa (end + 8) + 1e-9 of one), below the window (k clipped up: only where start = 0),
    # or den within its rounding of 0 (only where the grid reaches g = u/v)
    low_rows = np.flatnonzero(start < 1.0)
    below = fl[:, low_rows] + 1.0 < (start[low_rows] + 2.0)[None, :] if low_rows.size else None
    near = float(np.max(2.0 * kappa * (end + 8.0), initial=0.0)) + 1e-9
    frac = a_thr
    frac -= fl
    frac -= 0.5
    unsure = np.abs(frac, out=frac) >= 0.5 - near
    if below is not None:
        unsure[:, low_rows] |= below
    if flat_den.size:
        dv = duv[:, flat_den] + g1 * vv[:, flat_den]
        unsure[:, flat_den] |= np.abs(den) <= 8e-16 * dv
    k = fl
    k += 1.0
    np.clip(k, (start + 2.0)[None, :], (end + 1.0)[None, :], out=k)
    flat = k.astype(np.int64)  # row k - start of b: B(k-1)
    flat *= nb
    flat += (np.arange(nb) - start * nb).astype(np.int64)[None, :]
    b_km1 = np.take(b.ravel(), flat)
    flat += nb
    t_k = np.take(tb.ravel(), flat, out=frac)  # TB(k)
    # sum_{a >= k} (P(a) - g Q(a)) = (u - g v) B(k-1) - (g - 1) TB(k): the tail enters only times
    # g - 1, so its error (summation included) is charged only that much
    gv = g * vv
    tail = np.multiply(t_k, g1, out=t_k)
    value = np.subtract(uu, gv)
    value *= b_km1
    value -= tail
    rel_row = rel_b[-1] + 4e-16
    c1 = (rel_row + 4e-16) * (1.0 + 1e-12)
    c2 = (rel_row + t_rel + 4e-16 * (width + 8)) * (1.0 + 1e-12)
    gv += uu
    gv *= b_km1
    gv *= c1
    tail *= c2[None, :]
    err = gv
    err += tail
    if np.any(unsure):
        gi, ri = np.nonzero(unsure)
        kk, gg = k[gi, ri], g[gi, 0]
        cc = (kk - start[ri]).astype(np.int64)
        fb = b.ravel()
        corr, extra = np.zeros(gi.size), np.zeros(gi.size)
        for d, sign in ((-2, 1.0), (-1, 1.0), (0, -1.0), (1, -1.0)):
            inside = kk + d <= end[ri]
            bm1 = fb[np.clip(cc + d, 0, width - 1) * nb + ri]
            ba = fb[np.clip(cc + d + 1, 0, width - 1) * nb + ri]
            pa = u[ri] * bm1 + (1.0 - u[ri]) * ba
            qa = v[ri] * bm1 + (1.0 - v[ri]) * ba
            corr += np.where(inside, np.maximum(sign * (pa - gg * qa), 0.0), 0.0)
            extra += np.where(inside, pa + gg * qa, 0.0)
        value[gi, ri] += corr
        err[gi, ri] += (rel_row + 8e-16) * (1.0 + 1e-12) * extra
    np.maximum(value, 0.0, out=value)
    value += err
    # underflowed masses: below 2.3e-308 each, at most 2^22 of them in a tail (times g - 1)
    value += 1e-300 * (1.0 + g1)
    return value, ok


#: Atoms (listed outcomes, padding included) per batch of kernels in :func:`grid_upper`; cells
#: (outcomes and grid points) per batch of kernels evaluated by cuts (:func:`_cut_grid`).
BATCH_ATOMS = 1 << 18
BATCH_CUT = 1 << 18


def _delta_from_atoms(loss: np.ndarray, wp: np.ndarray, wq: np.ndarray, rho: np.ndarray,
                      top_p: np.ndarray, top_q: np.ndarray, top_e: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """Certified upper bound, at each ``eps`` of the grid, on the hockey-stick divergence of
    the mixture whose outcomes are the atoms: ``sum over atoms with loss > eps of (wp - e^eps
    wq)`` (each kernel's optimal set is a tail of its outcomes, so this is the sum of the
    kernels' divergences); ``top_p, top_q, top_e`` are the summed masses and error terms of the
    atoms at loss ``+inf`` (counted everywhere). Each atom is binned by the number of grid points below its loss
    (one ``searchsorted`` on the grid, no sort of the atoms), the bins summed and their suffix
    sums taken. Error budget: the atoms' relative errors on ``P_tail + e^eps Q_tail``, the
    rounding of the sums, and the atoms whose computed loss lies within
    :data:`LOG_RATIO_SLACK` of the grid point (their side is uncertain: each is charged ``|P -
    e^eps Q| <= e^eps Q (e^(2 tau) - 1)``)."""
    size = eps.size
    j = np.searchsorted(eps, loss, side="left")  # the atom counts at grid points i < j
    def tails(w: np.ndarray, top: np.ndarray) -> np.ndarray:
        h = np.bincount(j, weights=w, minlength=size + 1)
        h[-1] += float(top[0])
        return np.cumsum(h[::-1])[::-1][1:]  # at i: the bins j >= i + 1
    p_tail, q_tail, se = tails(wp, top_p), tails(wq, top_q), tails(rho * (wp + wq), top_e)
    g = np.exp(eps)
    tau = LOG_RATIO_SLACK * (1.0 + np.abs(eps))
    near_q = np.zeros(size)
    for cand in (j, j - 1):  # the grid points just above and just below each loss
        c = np.clip(cand, 0, size - 1)
        m = (cand >= 0) & (cand < size) & (np.abs(loss - eps[c]) <= tau[c])
        if np.any(m):
            near_q += np.bincount(c[m], weights=wq[m], minlength=size)
    near = g * near_q * 3.0 * tau
    rounding = 4e-16 * (loss.size + size + 8)
    return (np.maximum(p_tail - g * q_tail, 0.0) + g * se * (1.0 + rounding) + near * (1.0 + 1e-12)
            + rounding * (p_tail + g * q_tail) + 1e-300)


def _batches(rows: np.ndarray, width: np.ndarray, extra: int, cells: int = BATCH_ATOMS) -> list[np.ndarray]:
    """The indices of ``rows`` (a mask) in batches of similar ``width`` (little padding), each
    batch holding at most about ``cells`` cells of ``width + extra`` per row."""
    idx = np.flatnonzero(rows)
    idx = idx[np.argsort(width[idx], kind="stable")]
    w = width[idx] + extra
    out, first = [], 0
    while first < idx.size:  # the padded size (rows times the widest) grows with the batch's end
        size = np.arange(1, idx.size - first + 1) * w[first:]
        last = first + max(1, int(np.searchsorted(size, cells, side="right")))
        out.append(idx[first:last])
        first = last
    return out


def grid_upper(direction: Direction, eps: np.ndarray) -> np.ndarray:
    """Certified upper bounds on ``delta(eps)`` of one direction on an ascending grid of
    ``eps >= 0``, on the direction's current partition: the bound of
    :meth:`.clones.Direction.upper_on_grid` (each block contributes ``(W + err_W) h(lo - 1,
    lam(hi))``, by monotonicity in the clone count and in ``lam``; FMT21 Lemma F.2), computed
    as the hockey-stick divergence of that weighted mixture of kernel pairs: the kernels'
    outcomes between their cutoffs at the ends of the grid (:func:`_atoms`), sorted by privacy
    loss, and two suffix sums (:func:`_delta_from_atoms`), in batches of similar kernels;
    instead of a kernel evaluation per block and grid point. Kernels with at least
    ``1 / CUT_RATIO`` times as many outcomes as grid points go by closed-form cuts
    (:func:`_cut_grid`); kernels whose cuts cannot be certified that way, or with more than
    :data:`CUT_WINDOW` outcomes, are evaluated point by point
    (:meth:`~.clones.TotalsGeometry.h`)."""
    eps = np.asarray(eps, dtype=float)
    part = direction.partition
    counted = part.hi >= 1.0  # block {t = 0}: nothing counted, identical laws
    t = np.maximum(part.lo, 1.0)
    lam = direction.lam(part.hi)
    u = lam * direction.pa1 + (1.0 - lam) * direction.s
    v = lam * direction.pb1 + (1.0 - lam) * direction.s
    w_up = part.mass + part.mass_err
    flip = u < v  # mirror a -> c + 1 - a: the ratio then increases in a
    uu, vv = np.where(flip, 1.0 - u, u), np.where(flip, 1.0 - v, v)
    ss = np.where(flip, 1.0 - direction.s, direction.s)
    live = counted & (uu > vv) & (0.0 < ss) & (ss < 1.0)
    start, end = _windows(t - 1.0, uu, vv, ss, float(eps[-1]))
    width = end - start + 1.0
    by_cut = live & (width * CUT_RATIO >= eps.size) & (width <= CUT_WINDOW)
    listed = live & ~by_cut & (width <= ATOM_WINDOW)
    out = np.zeros(eps.size)
    for b in _batches(listed, width, 0):
        out += _delta_from_atoms(*_atoms(t[b] - 1.0, uu[b], vv[b], ss[b], w_up[b], float(eps[-1]), direction.rel), eps)
    for b in _batches(by_cut, width, eps.size, BATCH_CUT):
        bound, ok = _cut_grid(t[b] - 1.0, uu[b], vv[b], ss[b], eps, direction.rel)
        out += fp.matvec(bound[:, ok], w_up[b][ok])
        listed[b[ok]] = True
    rest = np.flatnonzero(counted & (uu > vv) & ~listed)  # point-mass splits, very long lists
    for chunk in np.array_split(rest, max(1, rest.size * eps.size // 400_000 + 1)) if rest.size else ():
        hh, hh_err = direction.h(t[chunk][:, None], lam[chunk][:, None], eps[None, :])
        out = out + fp.matvec(hh.T, w_up[chunk]) + fp.matvec(hh_err.T, part.mass[chunk])
    # (non-negative terms summed in any order, fp.matvec's included: 4e-16 (size + 2) relative)
    return out * (1.0 + 4e-16 * (part.size + 2))


@dataclass(frozen=True)
class DirectionProfile:
    """Certified ``upper[i] >= delta(i * discretization)``, ``i = 0 .. len-1``, of one
    direction (scale applied). The value at the last index is also an upper bound for
    every larger ``eps``."""

    discretization: float
    upper: np.ndarray
    blocks: int


def direction_profile(
    pair: ScaledPair, mirrored: bool, discretization: float, tail: float, rtol: float,
    eps_tail: float | None = None,
) -> DirectionProfile:
    """:class:`DirectionProfile` of ``P||Q`` (``mirrored=False``) or ``Q||P``: certified
    upper bounds on the grid ``0, D, 2D, ...`` up to the first point at or beyond ``eps_tail``
    (:func:`tail_epsilon`, computed when not given), on one partition refined (to ``rtol``) at
    a few points of the grid."""
    p = pair.pair.mirrored() if mirrored else pair.pair
    L = p.max_log_ratio
    d = HockeyStick(p).direction()
    if eps_tail is None:
        eps_tail = tail_epsilon(d, pair.scale, tail)
    top = math.ceil(L / discretization) if math.isfinite(L) else MAX_GRID
    n_pts = min(math.ceil(eps_tail / discretization * (1.0 + 1e-12)), top, MAX_GRID) + 1
    # Refine one partition at a few points of the grid, where delta is not negligible. (From the
    # tail down gives fewer blocks at large n, 230 instead of 1400 at n = 1e6, but a composed eps
    # up to 5e-5 looser, e.g. eps0 = 3, n = 5000, T = 1000: not done.)
    span = (n_pts - 1) * discretization
    for x, factor in zip(np.linspace(0.0, span, 6)[:-1], PROFILE_RTOL_FACTORS):
        if x < L:
            d.bounds(float(x), rtol * factor)
    grid = np.arange(n_pts) * discretization
    up = grid_upper(d, grid) * pair.scale * (1.0 + 1e-15)
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
    discretization: float | None = DEFAULT_DISCRETIZATION,
    tail: float = DEFAULT_TAIL,
    rtol: float = PROFILE_RTOL,
) -> RoundPld:
    """Pessimistic PLD of one shuffled round (see the module docstring for the proof that
    it dominates the analysis' clone pair in both orders). ``discretization=None`` sizes the
    grid from the round itself (:func:`auto_discretization`)."""
    eps0 = check_positive("eps0", eps0)
    n = check_int("n", n)
    if discretization is not None and not (isinstance(discretization, (int, float)) and 1e-7 <= discretization <= 0.1):
        raise InvalidParameter(f"discretization must be in [1e-7, 0.1], got {discretization!r}")
    if not 0.0 < tail < 1e-6:
        raise InvalidParameter(f"tail must be in (0, 1e-6), got {tail!r}")
    m = get_method(method)
    if m.kind != "upper" or not m.numerical:
        raise InvalidParameter(
            f"the PLD of a round needs a numerical upper-bound method (clones, stronger-clones, krr), got {method!r}"
        )
    sp = pair_for(method, eps0, n, k)
    tails = round_tails(sp, tail)
    step = auto_discretization([tails]) if discretization is None else float(discretization)
    return pair_pld(sp, step, tail, rtol, tails)


@functools.lru_cache(maxsize=64)
def round_tails(sp: ScaledPair, tail: float = DEFAULT_TAIL) -> tuple[float, float]:
    """:func:`tail_epsilon` of both directions of a pair (equal for symmetric pairs); cached,
    so that repeated questions about the same round (``compose`` at several ``T`` or
    ``delta``, the planners' re-checks) compute it once."""
    fwd = tail_epsilon(HockeyStick(sp.pair).direction(), sp.scale, tail)
    rev = fwd if sp.pair.symmetric else tail_epsilon(HockeyStick(sp.pair.mirrored()).direction(), sp.scale, tail)
    return fwd, rev


def auto_discretization(tails: Sequence[tuple[float, float]]) -> float:
    """The grid step for rounds with these tail ``eps`` (``(forward, reverse)`` each): the
    narrowest round's tail over :data:`AUTO_POINTS`, within ``[AUTO_FINEST, AUTO_COARSEST]``,
    and coarse enough that the widest round stays within :data:`MAX_GRID` points."""
    spans = [max(f, r_) for f, r_ in tails]
    narrow = min(spans) if spans else 0.0
    step = narrow / AUTO_POINTS if narrow > 0.0 else AUTO_COARSEST
    step = max(step, max(spans, default=0.0) / (0.5 * MAX_GRID))
    return float(min(max(step, AUTO_FINEST), AUTO_COARSEST))


def pair_pld(
    sp: ScaledPair, discretization: float = DEFAULT_DISCRETIZATION, tail: float = DEFAULT_TAIL,
    rtol: float = PROFILE_RTOL, tails: tuple[float, float] | None = None,
) -> RoundPld:
    """Pessimistic PLD of any clone pair (``pmf_remove`` = ``P||Q``, ``pmf_add`` = ``Q||P``,
    one pmf when the pair is symmetric); cached per ``(pair, grid, tail, rtol)``: the PLD
    objects of ``dp_accounting`` are not changed by composition, so a repeated round is
    built once. ``tails``: the pair's :func:`round_tails` when already known."""
    import_dp_accounting()  # a cached round must not hide a missing extra
    return _pair_pld(sp, float(discretization), float(tail), float(rtol), tails)


@functools.lru_cache(maxsize=32)
def _pair_pld(sp: ScaledPair, discretization: float, tail: float, rtol: float,
              tails: tuple[float, float] | None) -> RoundPld:
    plm = import_dp_accounting()
    from dp_accounting.pld import pld_pmf

    if tails is None:
        tails = round_tails(sp, tail)
    fwd = direction_profile(sp, False, discretization, tail, rtol, tails[0])
    rev = fwd if sp.pair.symmetric else direction_profile(sp, True, discretization, tail, rtol, tails[1])

    def pmf(a: DirectionProfile, b: DirectionProfile) -> Any:
        lo, deltas = pessimistic_deltas(a, b)
        return pld_pmf.create_pmf_pessimistic_connect_dots_fixed_gap(discretization, lo, lo + deltas.size - 1, deltas)

    remove = pmf(fwd, rev)
    add = None if sp.pair.symmetric else pmf(rev, fwd)
    pld = plm.PrivacyLossDistribution(remove, add)
    inf_mass = max(float(fwd.upper[-1]), float(rev.upper[-1]))
    return RoundPld(pld, discretization, fwd.upper.size + rev.upper.size - 1, inf_mass, sp.pair.symmetric,
                    fwd.blocks + (0 if rev is fwd else rev.blocks))


#: Chord refinement of a generic profile (:func:`profile_direction`): an interval is split
#: while the chord at its midpoint exceeds the certified upper bound there by more than this
#: (relative), up to :data:`PROFILE_MAX_EVALUATIONS` profile evaluations.
CHORD_RTOL = 3e-2
PROFILE_MAX_EVALUATIONS = 120
#: Initial number of evaluated points of a generic profile (uniform in eps).
PROFILE_START_POINTS = 9
#: Absolute tolerance of the chords of a generic profile, relative to the composition's
#: ``delta / T`` (:func:`pld_route`). Measured on k-RR (k = 10, eps0 = 1, n = 1e3 and 1e5, T = 1..100):
#: the composed eps is within 0.05 % of the one from 160 evaluations at ``CHORD_RTOL = 2e-3``.
PROFILE_FLOOR_FRACTION = 1e-2


def _chord_values(g_at: np.ndarray, d_at: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Upper bounds at ``g = e^eps`` from upper bounds ``d_at`` at ascending ``g_at``: the chord
    of the two evaluated neighbours, rounded upwards (the interpolation weight is within a few
    ulps, so the value moves by at most ``4u (d_a + d_b)``; the products and sum add ``3u``)."""
    i = np.clip(np.searchsorted(g_at, g, side="right") - 1, 0, g_at.size - 2)
    da, db = d_at[i], d_at[i + 1]
    w = np.clip((g - g_at[i]) / (g_at[i + 1] - g_at[i]), 0.0, 1.0)
    return (da * (1.0 - w) + db * w) * (1.0 + 4e-16) + 1e-15 * (da + db)


def profile_direction(profile: PrivacyProfile, discretization: float, n_pts: int, rtol: float = PROFILE_RTOL,
                      chord_rtol: float = CHORD_RTOL, floor: float = DEFAULT_TAIL) -> DirectionProfile:
    """:class:`DirectionProfile` of any certified privacy profile on the grid ``i * D``,
    ``i = 0 .. n_pts - 1`` (or fewer, see below), from few evaluations of it (the
    privacy-blanket bounds, whose evaluation is far dearer than a clone pair's grid pass).

    Soundness: for every pair of neighbouring datasets ``(P, Q)`` the exact ``delta_{P||Q}`` is
    convex in ``g = e^eps`` (a supremum of the affine ``P(S) - g Q(S)``), so between two points
    ``g_a < g_b`` it lies below the chord of its values, and hence below the chord of any upper
    bounds ``d_a >= delta(g_a)``, ``d_b >= delta(g_b)``. The profile's certified upper bounds at
    the evaluated points and their chords (rounded up, :func:`_chord_values`) at the others are
    therefore upper bounds at every grid point, for every pair the profile covers; a running
    minimum keeps them upper bounds (``delta`` is non-increasing). The grid ends at the first
    evaluated point whose upper bound is at most ``floor / 100`` (that value, an upper bound for
    every larger ``eps``, becomes the mass at ``+inf``).

    Where to evaluate: first :data:`PROFILE_START_POINTS` grid points spread uniformly, then
    every interval whose chord at the (evaluated) midpoint exceeds the upper bound there by
    more than ``chord_rtol`` (relative) plus ``floor`` (absolute) is split, until none does or
    :data:`PROFILE_MAX_EVALUATIONS` points are evaluated (only tightness is at stake). Points
    whose coarse bound is already below ``floor`` are not refined to ``rtol``.
    """
    L = profile.max_log_ratio
    upper: dict[int, float] = {}

    def evaluate(i: int) -> float:
        if i not in upper:
            e = i * discretization
            if e >= L:
                upper[i] = 0.0
            else:
                b = profile.bounds(e, 0.5)
                upper[i] = float(b.upper) if b.upper <= floor else float(profile.bounds(e, rtol).upper)
        return upper[i]

    last = n_pts - 1
    for i in np.unique(np.linspace(0, last, min(PROFILE_START_POINTS, n_pts)).round().astype(int)):
        if evaluate(int(i)) <= 0.01 * floor:
            last = int(i)
            break
    todo = sorted(upper)
    pending = list(zip(todo[:-1], todo[1:]))
    while pending and len(upper) < PROFILE_MAX_EVALUATIONS:
        a, b = pending.pop(0)
        if b - a < 2:
            continue
        mid = (a + b) // 2
        da, db, dm = evaluate(a), evaluate(b), evaluate(mid)
        ga, gb, gm = (math.exp(x * discretization) for x in (a, b, mid))
        chord = (da * (gb - gm) + db * (gm - ga)) / (gb - ga)
        if chord > dm * (1.0 + chord_rtol) + floor:
            pending += [(a, mid), (mid, b)]
    idx = np.array(sorted(upper))
    d_at = np.minimum.accumulate(np.array([upper[int(i)] for i in idx]))  # delta is non-increasing
    g_at = np.exp(idx * discretization)
    grid = np.arange(last + 1)
    values = _chord_values(g_at, d_at, np.exp(grid * discretization))
    values[idx] = d_at
    values[grid * discretization >= L] = 0.0
    return DirectionProfile(discretization, np.minimum(values, 1.0), len(upper))


def profile_pld(profile: PrivacyProfile, discretization: float, eps_tail: float, rtol: float = PROFILE_RTOL,
                floor: float = DEFAULT_TAIL) -> RoundPld:
    """Pessimistic PLD of a *symmetric* certified profile (one that bounds both orders of
    every neighbouring pair, as the privacy-blanket bound does: it is a maximum over ordered
    input pairs), on the grid ``0 .. eps_tail`` in steps of ``discretization``
    (:func:`profile_direction`; the negative side and the Connect-the-Dots step as for the
    clone pairs, module docstring). The last grid value becomes the mass at ``+inf``."""
    plm = import_dp_accounting()
    from dp_accounting.pld import pld_pmf

    top = math.ceil(profile.max_log_ratio / discretization) if math.isfinite(profile.max_log_ratio) else MAX_GRID
    n_pts = min(math.ceil(eps_tail / discretization * (1.0 + 1e-12)), top, MAX_GRID) + 1
    fwd = profile_direction(profile, discretization, n_pts, rtol, floor=floor)
    lo, deltas = pessimistic_deltas(fwd, fwd)
    pmf = pld_pmf.create_pmf_pessimistic_connect_dots_fixed_gap(discretization, lo, lo + deltas.size - 1, deltas)
    return RoundPld(plm.PrivacyLossDistribution(pmf), discretization, 2 * fwd.upper.size - 1,
                    float(fwd.upper[-1]), True, fwd.blocks)


#: Auto discretization: the step is coarsened (for many rounds) so that the composed
#: privacy-loss grid, about ``COMPOSED_SPAN`` standard deviations of the composed loss wide,
#: has at most this many points. The composed eps then still moves by about 1e-5 (relative;
#: measured): the composed loss's spread grows like sqrt(T), its discretisation error does not.
COMPOSED_POINTS = 1 << 19
COMPOSED_SPAN = 30.0


def round_moments(b: RoundPld) -> tuple[float, float]:
    """Mean and variance of a round's privacy loss, read off its pmfs (finite part; the larger
    of the two orders for an asymmetric pair). The mean is ``KL(P||Q)`` of the discretised
    pair."""
    mean = var = 0.0
    for pmf in (b.pld._pmf_remove, b.pld._pmf_add):
        dense = pmf.to_dense_pmf()
        probs = np.asarray(dense._probs, dtype=float)
        loss = (dense._lower_loss + np.arange(probs.size)) * dense._discretization
        total = float(np.sum(probs))
        if total > 0.0:
            m = float(np.dot(probs, loss)) / total
            mean, var = max(mean, m), max(var, float(np.dot(probs, (loss - m) ** 2)) / total)
        if b.symmetric:
            break
    return mean, var


def composed_step(built: Sequence[tuple[RoundPld, int]], step: float) -> float:
    """The grid step for composing ``built`` (``(round PLD, count)`` pairs at step ``step``):
    ``step``, or coarser when the composed loss (variance: the sum of the rounds'
    variances, read off their pmfs) would need more than :data:`COMPOSED_POINTS` points."""
    var = sum(count * round_moments(b)[1] for b, count in built)
    need = COMPOSED_SPAN * math.sqrt(max(var, 0.0)) / COMPOSED_POINTS
    return float(min(max(step, need), AUTO_COARSEST))


#: The PLD route is skipped, with the reason, when the composed privacy-loss grid that
#: dp_accounting allocates for its FFT would exceed this many points (about 240 MB per
#: array, and it holds several; measured: 7e6 points take 4.5 s).
MAX_COMPOSED_POINTS = 30_000_000
#: Ratio of ``D_1.25`` to ``KL`` for a Gaussian-like privacy loss (``D_alpha = alpha KL``): the
#: size estimate below was calibrated with ``D_1.25`` in place of the mean loss.
SIZE_KL_FACTOR = 1.25


def composed_size(built: Sequence[tuple[RoundPld, int]], spans: Sequence[float], step: float) -> float:
    """Estimated number of points of the composed privacy-loss grid (an estimate, made before
    the composition allocates anything): each round's grid, ``spans[i] / step`` points (at most
    ``2 MAX_GRID``), and for ``T`` repeated rounds ``T * 3 KL / step + 20 sqrt(2 T KL) / step``
    more (mean and spread of the composed loss; ``KL`` the round's mean loss times
    :data:`SIZE_KL_FACTOR`, and a factor 3 for the pessimistic discretisation; checked against
    dp_accounting's own truncation bounds, which it over-estimates by about 2)."""
    composed = 0.0
    for (b, count), span in zip(built, spans):
        composed += min(span / step, 2.0 * MAX_GRID)
        if count > 1:
            kl = SIZE_KL_FACTOR * max(round_moments(b)[0], 0.0)
            composed += count * 3.0 * kl / step + 20.0 * math.sqrt(2.0 * count * kl) / step
    return composed


#: Tail mass dp_accounting's ``self_compose`` may truncate (its default), charged at ``+inf``.
SELF_COMPOSE_TRUNCATION = 1e-15


def _self_convolve_bounds(probs: np.ndarray, times: int, truncation: float) -> tuple[int, int]:
    """dp_accounting's ``common.compute_self_convolve_bounds`` (Chernoff bounds on the composed
    index at the orders ``+-1..20 / len``, each tail at most ``truncation / 2``), with all
    orders in one vectorised log-sum-exp, widened by one index each way against rounding."""
    size = probs.size
    orders = np.concatenate((np.arange(-20, 0), np.arange(1, 21))) / size
    with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
        a = orders[:, None] * np.arange(size)[None, :] + np.log(probs)[None, :]
        peak = np.max(a, axis=1)
        log_mgf = peak + np.log(np.sum(np.exp(a - peak[:, None]), axis=1))  # log-sum-exp per order
    lower, upper = 0, (size - 1) * times
    for order, value in zip(orders, log_mgf):
        bound = (times * float(value) + math.log(2.0 / truncation)) / float(order)
        if not math.isfinite(bound):
            continue
        if order > 0:
            upper = min(upper, math.ceil(bound) + 1)
        else:
            lower = max(lower, math.floor(bound) - 1)
    return lower, upper


def _power(z: np.ndarray, times: int) -> np.ndarray:
    """``z ** times`` by repeated squaring (a few complex products instead of a complex ``pow``
    per element; the same rounding order of magnitude, ``times`` ulps)."""
    result, base = None, z
    while times:
        if times & 1:
            result = base.copy() if result is None else result * base
        times >>= 1
        if times:
            base = base * base
    assert result is not None
    return result


def _fft_gamma(length: int) -> float:
    """Assumption (A): an FFT output's error per unit of the input's 1-norm."""
    return FFT_ULPS * _U * max(1, math.ceil(math.log2(max(length, 2))))


def _full_weights(half: int, length: int) -> np.ndarray:
    """Multiplicity of each ``rfft`` coefficient in the full length-``length`` spectrum."""
    w = np.full(half, 2.0)
    w[0] = 1.0
    if length % 2 == 0:
        w[-1] = 1.0
    return w


def fft_power_error(spectrum: np.ndarray, powered: np.ndarray, length: int, times: int, norm1: float,
                    input_error: float) -> float:
    """Bound on the 1-norm error of ``irfft(rfft(p)^times)`` (length ``length``) against the
    exact ``times``-fold cyclic convolution of the exact ``p``, where the computed ``p`` has
    1-norm ``norm1`` and is within ``input_error`` (1-norm) of the exact one.

    Proof (assumption (A) of the module docstring). Forward: ``|X~_k - X_k| <= e =
    gamma ||p||_1`` for every ``k``. Power: ``|a^T - b^T| <= T max(|a|, |b|)^(T-1) |a - b|``
    for complex ``a, b``, so ``|X~_k^T - X_k^T| <= T e A_k^(T-1)`` with ``A_k = |X~_k| + e``;
    repeated squaring multiplies at most ``T + 2 log2 T`` relative errors of one complex
    product each (<= ``sqrt(5) u``, Brent-Percival-Zimmermann 2007), i.e. ``<= 3 (T + 2 log2 T
    + 2) u A_k^T``. An exact inverse DFT maps a spectrum error ``E`` to an error of 1-norm
    ``<= sqrt(L) ||IDFT E||_2 = ||E||_2`` (Cauchy-Schwarz, Parseval; ``E`` over the full
    spectrum). The computed inverse adds ``<= gamma sum_k |Y~_k| / L`` per output, ``gamma
    ||Y~||_1`` in all. An input error ``input_error`` becomes ``<= T input_error
    max(1, norm1 + input_error)^(T-1)``."""
    gamma = _fft_gamma(length)
    e = gamma * norm1
    w = _full_weights(spectrum.size, length)
    log_a = np.log(np.abs(spectrum) + e)
    with np.errstate(under="ignore"):
        a_pow = np.exp((times - 1) * log_a)  # A_k^(T-1)
    per_k = times * e * a_pow + 3.0 * (times + 2.0 * math.log2(max(times, 2)) + 2.0) * _U * a_pow * np.exp(log_a)
    spectral = math.sqrt(float(np.sum(w * per_k * per_k)))
    inverse = gamma * float(np.sum(w * np.abs(powered)))
    growth = max(1.0, norm1 + input_error) ** (times - 1)
    return (spectral + inverse) * 1.01 + times * input_error * growth


def fft_product_error(a: np.ndarray, b: np.ndarray, err_a: float, err_b: float) -> float:
    """Bound on the 1-norm error of a computed linear convolution ``a * b`` (dp_accounting's
    ``scipy.signal.fftconvolve`` of two dense pmfs, any FFT length ``L >= len(a) + len(b) - 1``
    it picks, bounded here by ``4 (len(a) + len(b))``) against the exact convolution of the
    exact operands, which are within ``err_a``, ``err_b`` (1-norm) of ``a``, ``b``.

    Proof (assumption (A)): forward errors ``<= gamma ||a||_1`` per coefficient, so the
    product's spectral error has 2-norm ``<= gamma (||a||_1 ||B||_2 + ||b||_1 ||A||_2) +
    sqrt(5) u ||A||_2 ||B||_inf``-type terms, with ``||A||_2 = sqrt(L) ||a||_2`` (Parseval) and
    ``||B||_inf <= ||b||_1``; it maps to a 1-norm error ``<= ||E||_2`` (as in
    :func:`fft_power_error`). The inverse adds ``<= gamma ||A B||_1 <= gamma ||A||_2 ||B||_2 =
    gamma L ||a||_2 ||b||_2``. Operand errors add ``err_a ||b||_1 + err_b ||a||_1 + err_a
    err_b``."""
    length = 4 * (a.size + b.size)
    gamma = _fft_gamma(length)
    n1a, n1b = float(np.sum(np.abs(a))), float(np.sum(np.abs(b)))
    n2a, n2b = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    root = math.sqrt(length)
    spectral = (gamma + 3.0 * _U) * root * (n1a * n2b + n1b * n2a) + gamma * gamma * root * n1a * n2b
    inverse = gamma * length * n2a * n2b * (1.0 + gamma)
    return (spectral + inverse) * 1.01 + err_a * n1b + err_b * n1a + err_a * err_b


@dataclass(frozen=True)
class Composed:
    """A composed ``dp_accounting`` PLD and a bound on the 1-norm floating-point error of
    each of its pmfs (module docstring; :func:`composed_epsilon` charges it)."""

    pld: Any
    error: float


def _pmf_probs(pmf: Any) -> np.ndarray:
    return np.asarray(pmf.to_dense_pmf()._probs, dtype=float)


def _self_compose_pmf(pmf: Any, times: int, truncation: float = SELF_COMPOSE_TRUNCATION,
                      input_error: float = ROUND_FLOAT_ERROR) -> tuple[Any, float]:
    """``pmf.self_compose(times)`` of dp_accounting for a dense pmf (any pmf whose
    ``size**times`` exceeds dp_accounting's sparse limit is made dense there too), with the
    FFT of real input (``rfft``, half the work of the complex one; the same cyclic convolution
    on a window of the Chernoff bounds, whose out-of-window mass, at most ``truncation``, goes
    to ``+inf`` as in dp_accounting). Sparse pmfs with few points keep dp_accounting's own
    (direct sums: at most ``times * size`` products and additions per output, relative error
    ``<= 2 times size u``). Returns the pmf and the bound on its 1-norm error
    (:func:`fft_power_error`)."""
    from dp_accounting.pld import pld_pmf
    from scipy import fft

    if not isinstance(pmf, pld_pmf.DensePLDPmf) and pmf.size ** min(times, 64) <= 1000:
        out_pmf = pmf.self_compose(times, truncation)
        mass = float(np.sum(_pmf_probs(out_pmf)))
        return out_pmf, 2.0 * times * pmf.size * _U * mass * 1.01 + times * input_error * (1.0 + input_error) ** times
    dense = pmf.to_dense_pmf()
    probs = np.asarray(dense._probs, dtype=float)
    lower, upper = _self_convolve_bounds(probs, times, truncation)
    length = upper - lower + 1
    fast = fft.next_fast_len(max(length, probs.size), real=True)
    spectrum = fft.rfft(probs, fast)
    powered = _power(spectrum, times)
    out = fft.irfft(powered, fast)
    out = np.roll(out, -lower)[:length]
    inf_mass = truncation - math.expm1(times * math.log1p(-dense._infinity_mass))
    error = fft_power_error(spectrum, powered, fast, times, float(np.sum(np.abs(probs))), input_error)
    return pld_pmf.DensePLDPmf(dense._discretization, dense._lower_loss * times + lower, out, inf_mass,
                               dense._pessimistic_estimate), error


def _compose_pmfs(a: Any, err_a: float, b: Any, err_b: float) -> tuple[Any, float]:
    """dp_accounting's ``compose_pmfs(a, b)`` (its default tail truncation) and the bound on its 1-norm error
    (:func:`fft_product_error`; also covers its direct sums for sparse pmfs)."""
    from dp_accounting.pld import pld_pmf

    out = pld_pmf.compose_pmfs(a, b, SELF_COMPOSE_TRUNCATION)  # as PrivacyLossDistribution.compose
    return out, fft_product_error(_pmf_probs(a), _pmf_probs(b), err_a, err_b)


def compose_plds(parts: Sequence[tuple[Any, int]]) -> Composed:
    """``prod_j pld_j^{count_j}`` (self-composition for repeated rounds, :func:`_self_compose_pmf`,
    then dp_accounting's pmf ``compose``), and the bound on each pmf's floating-point error;
    the tail truncation is pessimistic."""
    plm = import_dp_accounting()
    total: tuple[Any, float, Any, float, bool] | None = None  # remove, its error, add, its error, symmetric
    for pld, count in parts:
        if count > 1:
            remove, err_r = _self_compose_pmf(pld._pmf_remove, count)
            add, err_a = (remove, err_r) if pld._symmetric else _self_compose_pmf(pld._pmf_add, count)
        else:
            remove, err_r = pld._pmf_remove, ROUND_FLOAT_ERROR
            add, err_a = (remove, err_r) if pld._symmetric else (pld._pmf_add, ROUND_FLOAT_ERROR)
        if total is None:
            total = (remove, err_r, add, err_a, bool(pld._symmetric))
            continue
        r0, e0, a0, f0, sym = total
        remove, err_r = _compose_pmfs(r0, e0, remove, err_r)
        if sym and pld._symmetric:
            add, err_a = remove, err_r
        else:
            add, err_a = _compose_pmfs(a0, f0, add, err_a)
        total = (remove, err_r, add, err_a, sym and bool(pld._symmetric))
    if total is None:
        raise InvalidParameter("at least one round is needed")
    remove, err_r, add, err_a, sym = total
    return Composed(plm.PrivacyLossDistribution(remove, None if sym else add), max(err_r, err_a))


def _pmf_epsilon(pmf: Any, delta: float) -> float:
    """dp_accounting's ``get_epsilon_for_delta`` of one pmf (the smallest ``eps >= 0`` with
    ``inf_mass + sum_{loss > eps} p (1 - e^(eps - loss)) <= delta``), vectorised for a dense pmf:
    the same running sums from the largest loss down (in the same order), the same stopping
    rule, in array operations instead of a Python loop."""
    from dp_accounting.pld import pld_pmf

    if not isinstance(pmf, pld_pmf.DensePLDPmf):
        return float(pmf.get_epsilon_for_delta(delta))
    inf_mass = float(pmf._infinity_mass)
    if inf_mass > delta:
        return math.inf
    probs = np.asarray(pmf._probs, dtype=float)[::-1]
    top = pmf._lower_loss + probs.size - 1
    mu, ml = inf_mass, 0.0  # running sums before the current chunk
    start = 0
    while start < probs.size:  # chunks from the largest loss down: eps is usually near the top
        p = probs[start:start + EPS_CHUNK]
        loss = (top - start - np.arange(p.size, dtype=float)) * pmf._discretization
        with np.errstate(over="ignore", under="ignore"):
            upper = mu + np.cumsum(p)  # after adding each loss
            lower = ml + np.cumsum(np.exp(-loss) * p)
        before_u = np.concatenate(([mu], upper[:-1]))
        before_l = np.concatenate(([ml], lower[:-1]))
        # a ratio that overflows to inf stops the read-off there, as its (huge) log would
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            stop = (before_u > delta) & (before_l > 0.0) & (np.log((before_u - delta) / before_l) >= loss)
        big = (upper >= delta) & (lower == 0.0)  # e^-loss underflowed: eps is this loss
        i_stop = int(np.argmax(stop)) if stop.any() else p.size
        i_big = int(np.argmax(big)) if big.any() else p.size
        if i_big < i_stop:
            return max(0.0, float(loss[i_big]))
        if i_stop < p.size:
            mu, ml = float(before_u[i_stop]), float(before_l[i_stop])
            break
        mu, ml = float(upper[-1]), float(lower[-1])
        start += p.size
    if mu <= ml + delta:
        return 0.0
    return math.log((mu - delta) / ml)


#: Losses per chunk of :func:`_pmf_epsilon`.
EPS_CHUNK = 1 << 14


def composed_epsilon(composed: Composed, delta: float) -> tuple[float, float]:
    """``eps`` with ``delta_pld(eps) <= delta - margin`` and the margin: ``FLOAT_MARGIN_REL *
    delta + FLOAT_MARGIN_ABS`` for the read-off and the Connect-the-Dots arithmetic, plus the
    composition's certified FFT error bound (module docstring; both orders of an asymmetric
    PLD, the larger eps; as dp_accounting's ``get_epsilon_for_delta``, :func:`_pmf_epsilon`).
    Raises :class:`InvalidParameter` for ``delta < MIN_DELTA`` and :class:`CertificationError`
    when the rounding bound is not small against ``delta``."""
    if delta < MIN_DELTA:
        raise InvalidParameter(
            f"delta = {delta:.3g} is below {MIN_DELTA:g}, where the floating-point FFT composition of the PLD route "
            "is not trustworthy"
        )
    margin = FLOAT_MARGIN_REL * delta + FLOAT_MARGIN_ABS + composed.error
    if margin > 0.5 * delta:
        raise CertificationError(
            f"the floating-point error bound of the FFT composition ({composed.error:.2g}) is not small against "
            f"delta = {delta:.3g}: use a larger delta or the RDP route")
    pld = composed.pld
    eps = _pmf_epsilon(pld._pmf_remove, delta - margin)
    if not pld._symmetric:
        eps = max(eps, _pmf_epsilon(pld._pmf_add, delta - margin))
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
    randomizer: Any = None,
) -> Bound:
    """The PLD row of ``shuffle-acct compose``: ``(eps0, n, count)`` rounds, identical
    rounds grouped and ``self_compose``-d, ``eps`` read off at ``delta`` minus the
    floating-point margin. ``kind = "upper"``; ``not applicable`` (with the reason and,
    when the extra is missing, the install line) otherwise.

    ``randomizer`` (a :class:`.randomizers.RandomizerFamily`, or one randomizer when every
    round has its eps0): each round's PLD is built from the exact privacy-blanket bound of
    that randomizer (:func:`profile_pld`) instead of ``method``'s clone pair. Its grid runs
    to the stronger-clones pair's tail ``eps``: the blanket bound is below that pair's
    ``delta`` (``docs/generic_bounds.md``), and whatever the blanket's certified upper bound
    is at the last grid point is charged at ``+inf``, so the choice only affects tightness.

    ``discretization=None`` (auto): the grid is sized from the rounds themselves
    (:func:`auto_discretization`: the narrowest round's tail ``eps`` over
    :data:`AUTO_POINTS` points; coarser for very many rounds, :func:`composed_step`), so that
    the discretisation changes the composed ``eps`` by about 1e-5 (relative) at every ``n``
    and ``T`` (within 2e-5 of the former fixed step 1e-4 where that was fine enough, and
    tighter where it was not)."""
    inputs = dict(inputs or {}, discretization=discretization)
    citation = f"{DGKKM22}; {ZDW22}; Google dp_accounting"
    m = get_method(method)

    def not_applicable(reason: str) -> Bound:
        return Bound("epsilon", None, "not applicable", "pld", citation, inputs, reason)

    if randomizer is None and (m.kind != "upper" or not m.numerical):
        return not_applicable(f"PLD route: only for numerical upper-bound methods, not {method!r}")
    grouped: dict[tuple[float, int], int] = {}
    for eps0, n, count in rounds:
        grouped[(eps0, n)] = grouped.get((eps0, n), 0) + count
    try:
        import_dp_accounting()  # first: cached rounds must not hide a missing extra
        tail_method = method if randomizer is None else "stronger-clones"
        pairs = {key: pair_for(tail_method, check_positive("eps0", key[0]), check_int("n", key[1]), k)
                 for key in grouped}
        tails = {key: round_tails(sp, DEFAULT_TAIL) for key, sp in pairs.items()}

        def build(step: float) -> list[tuple[RoundPld, int]]:
            if randomizer is None:
                return [(pair_pld(pairs[key], step, DEFAULT_TAIL, PROFILE_RTOL, tails[key]), count)
                        for key, count in grouped.items()]
            floor = max(DEFAULT_TAIL, PROFILE_FLOOR_FRACTION * delta / sum(grouped.values()))
            return [(_blanket_pld(randomizer_at(randomizer, key[0]), key[1], step, max(tails[key]), floor), count)
                    for key, count in grouped.items()]

        step = auto_discretization(list(tails.values())) if discretization is None else float(discretization)
        built = build(step)
        size = composed_size(built, [sum(tails[key]) for key in grouped], step)
        if size > MAX_COMPOSED_POINTS:
            hint = "" if discretization is None else " (or a coarser --discretization)"
            return not_applicable(
                f"PLD route: composing {sum(grouped.values())} rounds needs a privacy-loss grid of about {size:.2g} "
                f"points at discretization {step:.3g} (limit {MAX_COMPOSED_POINTS:g}, memory); the RDP route covers "
                f"any T{hint}")
        if discretization is None:  # keep the composed grid within COMPOSED_POINTS (many rounds)
            coarser = composed_step(built, step)
            if coarser > step:
                step = coarser
                built = build(step)
        discretization = step
        total = compose_plds([(b.pld, count) for b, count in built])
        eps, margin = composed_epsilon(total, delta)
        fft_error = total.error
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
        "fft_error_bound": fft_error,
        "grid_points": [b.grid_points for b, _ in built],
        "infinity_mass_per_round": [b.infinity_mass for b, _ in built],
        "note": "upper bound of the dominating pair's eps; for T = 1 it exceeds the exact eps by at most about one "
                "discretization step",
    }
    if randomizer is not None:
        details["per_round_profile"] = f"blanket: exact privacy-blanket bound of {randomizer.describe()}"
        details["profile_evaluations"] = [b.blocks for b, _ in built]
        validity = (f"blanket of {randomizer.describe()}, the same randomizer in every round (datasets may be chosen "
                    f"adaptively); {PLD_ROUTE} (discretization {discretization:g})")
    else:
        validity = f"{m.name}: {m.assumes}; {PLD_ROUTE} (discretization {discretization:g})"
    return Bound("epsilon", eps, "upper", "pld", citation, inputs, validity, warn, details)


@functools.lru_cache(maxsize=16)
def _blanket_pld(randomizer: Any, n: int, discretization: float, eps_tail: float, floor: float) -> RoundPld:
    """:func:`profile_pld` of the privacy-blanket bound of ``randomizer`` with ``n`` users
    (cached: a repeated round, or a planner's re-check, builds it once)."""
    from .analyses import Query

    blanket = get_method("blanket")
    assert blanket.profile is not None
    profile = blanket.profile(Query(randomizer.eps0, n, None, 0.0, randomizer))
    return profile_pld(profile, discretization, eps_tail, floor=floor)

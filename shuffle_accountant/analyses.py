"""The analyses the accountant offers, as small objects that carry their own computation.

A :class:`Method` declares what it produces (an ``upper`` or ``lower`` bound), what it
assumes and what it needs (``k``, a randomizer, support for (eps0, delta0)-DP local
randomizers), and *how* it computes: either a certified privacy profile
(:attr:`Method.profile`, a :class:`~.numeric.profile.PrivacyProfile` that the certified
``eps(delta)`` search, ``delta``, the planners and the tables evaluate) or a closed form
(:attr:`Method.closed_epsilon` / :attr:`Method.closed_delta`). The API dispatches on these
capabilities only, never on method names.

Clone-pair analyses map onto the family of Feldman, McMillan, Talwar (FOCS 2021, arXiv
2012.12803) with a multiplier on the divergence (``scale``, for the k-RR bound that
reveals the clone count); see ``docs/math/amplification.md`` §1.

Plug-ins add methods through the entry-point group ``shuffle_accountant.methods`` (each
entry point a :class:`Method`, or a callable returning one or several) or by calling
:func:`register_method`; registered methods appear in ``methods``, ``epsilon``, ``delta``,
``table`` and ``check``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from importlib.metadata import entry_points
from typing import Any, Callable

from . import closed_forms
from .comparators import BLANKET19, COMPARATOR_METHODS, ERLINGSSON19, Outcome, comparator_delta, comparator_epsilon
from .errors import InvalidParameter
from .numeric import fp
from .numeric.clones import ClonePair, HockeyStick
from .numeric.profile import MaxProfile, PrivacyProfile, ScaledProfile

FMT21 = "Feldman, McMillan, Talwar, FOCS 2021 (arXiv 2012.12803)"
FMT23 = "Feldman, McMillan, Talwar, SODA 2023 (arXiv 2208.04591)"
WANG24 = "Wang et al., VLDB 2024 (arXiv 2304.05007)"

RANDOMIZER_LABELS = {
    "generic": "any eps0-DP local randomizer shared by all users (non-adaptive; the blanket theorem's assumption)",
    "krr": "k-ary randomized response only",
    "laplace": "Laplace mechanism on [0, 1] (scale 1/eps0) only",
}
RANDOMIZER_SHORT = {"generic": "non-adaptive randomizers", "krr": "k-RR only", "laplace": "Laplace only"}


@dataclass(frozen=True)
class Query:
    """The validated inputs a method computes from."""

    eps0: float
    n: int
    k: int | None = None
    delta0: float = 0.0
    randomizer: Any = None  # a shuffle_accountant.randomizers object, for mechanism-aware methods


ProfileFactory = Callable[[Query], PrivacyProfile]
ClosedEpsilon = Callable[[Query, float, float], Outcome]  # (query, delta, rtol)
ClosedDelta = Callable[[Query, float], Outcome]  # (query, eps)


@dataclass(frozen=True)
class Method:
    """An analysis: what it computes, what it assumes, where it comes from, and how."""

    name: str
    kind: str  # kind of the eps it produces: "upper" or "lower"
    generic: bool  # valid for every eps0-DP local randomizer
    citation: str
    assumes: str
    short: str = ""  # a few words for the text table
    needs_k: bool = False
    needs_randomizer: bool = False
    supports_delta0: bool = False
    profile: ProfileFactory | None = field(default=None, repr=False, compare=False)
    closed_epsilon: ClosedEpsilon | None = field(default=None, repr=False, compare=False)
    closed_delta: ClosedDelta | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.kind not in ("upper", "lower"):
            raise ValueError(f"method kind must be 'upper' or 'lower', got {self.kind!r}")
        if (self.profile is None) == (self.closed_epsilon is None or self.closed_delta is None):
            raise ValueError(f"method {self.name!r} needs either a profile or both closed forms")

    @property
    def numerical(self) -> bool:
        """Computed from a certified privacy profile (so usable by RDP/PLD composition and
        the planners), as opposed to a closed form."""
        return self.profile is not None


def _clone_profile(name: str) -> ProfileFactory:
    return lambda q: profile_for(name, q.eps0, q.n, q.k)


def _fmt21_epsilon(q: Query, delta: float, rtol: float) -> Outcome:
    return closed_forms.theorem_epsilon(q.eps0, q.n, delta, q.delta0)


def _fmt21_delta(q: Query, eps: float) -> Outcome:
    return closed_forms.theorem_delta(q.eps0, q.n, eps, q.delta0)


def _comparator(name: str) -> dict[str, Any]:
    return {
        "closed_epsilon": lambda q, delta, rtol: comparator_epsilon(name, q.eps0, q.n, delta, q.k, rtol),
        "closed_delta": lambda q, eps: comparator_delta(name, q.eps0, q.n, eps, q.k),
    }


METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method(
            "clones",
            "upper",
            True,
            f"{FMT21}, Theorem 3.2 (numerical bound of Appendix F)",
            "any eps0-DP local randomizers, also chosen adaptively; the default",
            short="any randomizers, adaptive ok",
            supports_delta0=True,
            profile=_clone_profile("clones"),
        ),
        Method(
            "stronger-clones",
            "upper",
            True,
            f"{FMT23}; proved for non-adaptive randomizers in {WANG24}, Lemma 4.4 (it also follows from the "
            "privacy-blanket bound of Balle et al. CRYPTO 2019, docs/generic_bounds.md)",
            "non-adaptive eps0-DP local randomizers only (the FMT23 errata restricts the general claim)",
            short="non-adaptive randomizers only",
            profile=_clone_profile("stronger-clones"),
        ),
        Method(
            "krr",
            "upper",
            False,
            f"{FMT21}, Section 4.1 clone decomposition of k-RR with the clone count revealed",
            "k-ary randomized response (k >= 2) only, every dataset",
            short="k-RR only",
            needs_k=True,
            profile=_clone_profile("krr"),
        ),
        Method(
            "krr-lower",
            "lower",
            False,
            f"{FMT21}, Section 4.1; {WANG24}, Eq. 13: shuffled k-RR when all other users hold one third value, "
            "seen through the counts of the two differing values",
            "k-ary randomized response: a post-processing of a concrete dataset's output (exact for k <= 3, "
            "below that dataset's value for k >= 4), so a lower bound on shuffled k-RR; 'dataset-lower' is tighter",
            short="k-RR, one dataset (projected)",
            needs_k=True,
            profile=_clone_profile("krr-lower"),
        ),
        Method(
            "binary-rr-lower",
            "lower",
            True,
            f"{FMT21}, Appendix G: shuffled binary randomized response, other users all holding the same value",
            "attained by binary RR on a concrete dataset: a lower bound for every generic eps0 analysis",
            short="attained by binary RR",
            profile=_clone_profile("binary-rr-lower"),
        ),
        Method(
            "generic-lower",
            "lower",
            True,
            f"{FMT21}, Appendix G (binary RR, other users all holding one value) and Section 4.1 (3-ary RR, "
            "other users all holding a third value): the larger attained value",
            "attained by a concrete eps0-DP randomizer on a concrete dataset: a lower bound for every generic "
            "eps0 analysis. 3-ary RR leaks more than binary RR for eps0 > ln 2 at large n (docs/generic_bounds.md)",
            short="attained (best of binary and 3-ary RR)",
            profile=lambda q: MaxProfile(profile_for("binary-rr-lower", q.eps0, q.n),
                                         profile_for("krr-lower", q.eps0, q.n, 3)),
        ),
        Method(
            "blanket",
            "upper",
            False,
            f"{BLANKET19.split(',')[0]}, {BLANKET19.split(',')[1].strip()}, evaluated exactly (not through "
            "Hoeffding/Bennett); certified in this package (k-RR: numeric/blanket_krr.py; other randomizers: "
            "numeric/blanket_matrix.py); optimal among clone-type decompositions (Su, Cheng, Wang, arXiv 2504.07414)",
            "the given randomizer (--randomizer / --randomizer-file), used by every user (non-adaptive); every dataset",
            short="this randomizer, every dataset",
            needs_randomizer=True,
            profile=lambda q: _blanket_profile(q),
        ),
        Method(
            "dataset-lower",
            "lower",
            False,
            "exact hockey-stick divergence of concrete neighbouring datasets of the given randomizer, the largest "
            "over a family (k-RR: other users holding x1 or one third value; binary RR: m users holding x1; other "
            "randomizers: all other users holding x1 (exact) or one third value (projected on the reports' hits of "
            "x1 and x1', or, at n up to ~300-1000, with the reports that hit the third value lumped), "
            "numeric/dataset_lower.py)",
            "a lower bound on the given randomizer's shuffled eps from concrete neighbouring datasets (their exact "
            "divergence, or for a projected family the divergence of a post-processing, which is at most theirs)",
            short="this randomizer, concrete datasets",
            needs_randomizer=True,
            profile=lambda q: _dataset_lower_profile(q),
        ),
        Method(
            "closed-form",
            "upper",
            True,
            f"{FMT21}, Theorem 3.1",
            "any eps0-DP local randomizers (adaptive); only when eps0 <= log(n / (16 log(2/delta)))",
            short="regime: eps0 <= log(n/(16 log(2/delta)))",
            supports_delta0=True,
            closed_epsilon=_fmt21_epsilon,
            closed_delta=_fmt21_delta,
        ),
        # Published comparators (looser analyses; spec §3). Math in comparators.py.
        Method(
            "erlingsson",
            "upper",
            True,
            ERLINGSSON19,
            "published comparator (looser): any eps0-DP randomizers, only for eps0 <= 1/2, n >= 1000, delta <= 1/100",
            short="published, looser; eps0 <= 1/2 only",
            **_comparator("erlingsson"),
        ),
        *(
            Method(
                f"blanket-{ineq}{'' if rand == 'generic' else '-' + rand}",
                "upper",
                rand == "generic",
                f"{BLANKET19}, {ineq.capitalize()} variant, {RANDOMIZER_LABELS[rand]}",
                f"published comparator (looser): {RANDOMIZER_LABELS[rand]}",
                short=f"published, looser; {RANDOMIZER_SHORT[rand]}",
                needs_k=rand == "krr",
                **_comparator(f"blanket-{ineq}{'' if rand == 'generic' else '-' + rand}"),
            )
            for rand in ("generic", "krr", "laplace")
            for ineq in ("hoeffding", "bennett")
        ),
    )
}

#: Methods shown by ``shuffle-acct epsilon`` when none are requested.
DEFAULT_METHODS: tuple[str, ...] = ("clones", "stronger-clones", "closed-form", "generic-lower")


assert set(COMPARATOR_METHODS) <= set(METHODS)

#: Entry-point group through which plug-ins register analyses.
METHOD_GROUP = "shuffle_accountant.methods"
_plugins_loaded = False


def register_method(method: Method) -> None:
    """Add an analysis (a plug-in's) to the registry; refuses a name already taken."""
    if not isinstance(method, Method):
        raise TypeError(f"register_method needs a Method, got {type(method).__name__}")
    if method.name in METHODS:
        raise InvalidParameter(f"a method named {method.name!r} is already registered")
    METHODS[method.name] = method


def load_plugin_methods() -> None:
    """Register the methods of every installed plug-in (once). A broken plug-in is
    reported as a warning and skipped, never allowed to break the tool."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    import warnings

    for ep in entry_points(group=METHOD_GROUP):
        try:
            obj = ep.load()
            found = obj() if callable(obj) and not isinstance(obj, Method) else obj
            for m in (found if isinstance(found, (list, tuple)) else [found]):
                if m.name not in METHODS or METHODS[m.name] is not m:
                    register_method(m)
        except Exception as exc:  # noqa: BLE001 - a third party's failure must not break the tool
            warnings.warn(f"plug-in method {ep.name!r} failed to load: {exc}", RuntimeWarning, stacklevel=2)


def all_methods() -> dict[str, Method]:
    """Every registered analysis, plug-ins included."""
    load_plugin_methods()
    return METHODS


#: Published analyses deliberately *not* offered, with the reason (shown by ``methods`` and
#: given when one is asked for by name).
NOT_OFFERED: dict[str, str] = {
    "variation-ratio": (
        f"{WANG24}, variation-ratio bound: NOT an upper bound where the first user can report a "
        "third value (pi0 > 0, e.g. k-RR with k >= 3). For k-RR its parameters give exactly the "
        "third-value pair projected on two counts, which concrete datasets exceed: n = 100, eps0 = 3, "
        "k = 3, delta = 1e-6: the bound says eps = 2.7028, but the dataset where all other users hold "
        "x1 has eps = 2.9867; n = 10, eps0 = 1, k = 3: 0.9412 vs 0.9998. The gap is in the step that "
        "restores the first user's leftover symbol (their appendix C, Lemma 4.5): its probability is "
        "taken given a + b, but depends on a and on the dataset. Use 'blanket' (mechanism-aware upper "
        "bound) or 'stronger-clones' instead."
    ),
}


def get_method(name: str) -> Method:
    """The analysis called ``name``; an unknown name is refused, listing the known ones."""
    methods = all_methods()
    if name in NOT_OFFERED:
        raise InvalidParameter(f"method {name!r} is not offered: {NOT_OFFERED[name]}")
    try:
        return methods[name]
    except KeyError:
        raise InvalidParameter(f"unknown method {name!r}; choose from {', '.join(methods)}") from None


@dataclass(frozen=True)
class ScaledPair:
    """A clone pair whose hockey-stick and ``exp((alpha-1) D_alpha)``-type divergences are
    mixed with an identical branch: the true object is ``scale * pair + (1-scale) * (same
    law under both)``. ``delta(eps) = scale * delta_pair(eps)`` for ``eps >= 0``."""

    pair: ClonePair
    scale: float = 1.0


#: the analyses with a clone pair (:func:`pair_for`; the ``renyi`` command's methods)
CLONE_METHODS = ("clones", "stronger-clones", "krr", "krr-lower", "binary-rr-lower")


#: ulps by which :func:`pair_for` moves a clone rate or an upper bound's ``scale`` computed from ``eps0``
#: (each within 8 ulps of the exact value: ``exp`` within 1 ulp, then at most four roundings; ``scale`` is
#: formed as ``(e^eps0 + 1) / (e^eps0 + k - 1)``, not as ``1 - p0``, which cancels)
_PAIR_ULPS = 16


def _ulps(x: float, toward: float) -> float:
    """``x`` moved :data:`_PAIR_ULPS` ulps toward ``toward`` (``nextafter`` stops there)."""
    for _ in range(_PAIR_ULPS):
        x = math.nextafter(x, toward)
    return x


def _first_user_up(pb: float) -> tuple[float, float]:
    """The upper bounds' first user ``(pa', pb')`` for a computed ``pb`` (within 8 ulps of the exact
    ``1/(e^eps0 + 1)``): ``pb'`` is ``pb`` moved :data:`_PAIR_ULPS` ulps down (at most the exact value) and
    ``pa'`` the least float with ``pa' + pb' >= 1`` (checked exactly), so ``pa' >= 1 - pb' >= pa*``."""
    lo = _ulps(pb, 0.0)
    return fp.up(1 - Fraction(lo)), lo


def _grid_up(x: float) -> float:
    """The least multiple of ``2^-53`` at or above ``x`` moved :data:`_PAIR_ULPS` ulps up (so at least the exact
    value ``x`` approximates to 8 ulps); exact in floating point (power-of-two scalings, an integer ceiling)."""
    return math.ceil(_ulps(x, 1.0) * 2.0**53) / 2.0**53


def _exact_rr_pair(n: int, q: float, k: int) -> ClonePair:
    """The clone pair of k-RR (``k >= 2``) whose other-value probability is ``q``, a multiple of ``2^-53`` with
    ``k q <= 1``: ``p = 1 - (k - 1) q``, ``p0 = (k - 2) q`` and the rates ``q`` are exact floats (integer numerators
    below ``2^53``), so the engines' pair is exactly a k-RR. ``k = 2``: binary RR (clone rates ``q``, ``p``)."""
    p = 1.0 - (k - 1) * q
    if k == 2:
        return ClonePair(n, q, p, p, q, 0.0)
    return ClonePair(n, q, q, p, q, (k - 2) * q)


def _lower_pair(n: int, q: float, k: int, corner: bool) -> ClonePair:
    """A lower bound's pair: an exact k-RR whose ``e^eps0'' = p/q`` is at most ``e^eps0`` (``q`` from
    :func:`_grid_up` of the computed ``1/(e^eps0 + k - 1)``), or the exact corner ``(1, 0)`` at ``eps0 = inf``.
    Where no grid point lies in ``[q*, 1/k]`` (``eps0`` below ``~k^2 2^-53``) the pair of ``eps0'' = 0``
    (divergence 0, a lower bound)."""
    if corner:
        return ClonePair(n, 0.0, 1.0, 1.0, 0.0, 0.0) if k == 2 else ClonePair(n, 0.0, 0.0, 1.0, 0.0, 0.0)
    g = _grid_up(q)
    m = round(g * 2.0**53)
    if k * m > 2**53:  # k q'' > 1: no k-RR with q'' >= q* and eps0'' >= 0 on the grid
        m = 2**53 // k
        g = m / 2.0**53
        return ClonePair(n, g, g, g, g, 1.0 - 2.0 * g)
    return _exact_rr_pair(n, g, k)


def pair_for(method: str, eps0: float, n: int, k: int | None = None) -> ScaledPair:
    """The clone pair of a numerical analysis (spec §1 table).

    ``eps0`` may be ``math.inf`` (the family's corner); callers validate user input.

    Rounding (*derived*): the numbers are computed from ``eps0`` in floating point and the engines take the
    floats as exact, so each is moved to the side where the divergences can only grow (upper bounds) or only
    shrink (lower bounds):

    * upper bounds (``clones``, ``stronger-clones``, ``krr``; ``p0 = 0``, ``r0 = r1``): the clone rate ``r`` is
      moved :data:`_PAIR_ULPS` ulps down and the non-identical share ``scale`` (``krr``) up, well past the
      computation's error: the divergences (hockey-stick and Rényi) are non-increasing in each clone rate (a
      post-processing turns non-clones into clones: FMT21 Lemma F.2's argument,
      :func:`.numeric.renyi._rate_rounded_pair`), and ``delta = scale * delta_pair``. Unmoved the rate's error
      reaches every binomial mass as ``~n u`` in the log (``1e-7`` relative at ``n = 1e9``). The first user is
      :func:`_first_user_up`: ``pb' <= pb*`` and ``pa' >= 1 - pb' >= pa*``; the engines use it normalised,
      ``u = pa'/fl(pa' + pb') >= pa*`` and ``v = pb'/fl(pa' + pb') <= pb*`` (checked at 80 digits by review
      rev93p). *Mixing lemma*: write the first user by its probabilities ``(x, y)`` of reporting the first
      value under the two inputs. The exact ``(pa*, pb*)`` lies in the triangle ``v <= y <= x <= u`` with
      corners ``(u, v)``, ``(u, u)``, ``(v, v)``, so it is a convex combination of them with the same weights
      under both inputs; at the last two corners both inputs give the same law, so by joint convexity the
      hockey-stick divergence (both directions), and ``sum P^α Q^(1-α)`` for ``α > 1`` (a perspective of
      ``x^α``; the corners' terms are 1 ``<=`` the pair's), of the exact pair are at most the engines' pair's.
      The pair's own log-ratio is then a few ulps above ``eps0``; it carries ``ratio_cap = eps0`` (:attr:`.numeric.clones.ClonePair.ratio_cap`: the
      exact mechanism is ``eps0``-DP after shuffling, so ``delta(eps) = 0`` from ``eps0`` on).
    * lower bounds (``binary-rr-lower``, ``krr-lower``): each is the divergence of a fixed pair of datasets (or
      a projection of it) under k-RR, and k-RR at ``eps0'' <= eps0`` is a garbling of k-RR at ``eps0``
      (replace each report by a uniform value with some probability; it commutes with the shuffler), so the
      pair of an *exact* k-RR at ``eps0''`` is a lower bound: :func:`_lower_pair` (``q`` on the ``2^-53`` grid,
      every probability an exact float; loss: ``e^eps0''`` within ``(e^eps0 + k - 1)^2 2^-53`` of ``e^eps0``, and
      ``eps0''`` at most ``~36.7`` where ``q* < 2^-53``).
    """
    if method not in CLONE_METHODS:
        raise InvalidParameter(f"method {method!r} is not a clone-pair analysis")
    e = math.exp(eps0) if eps0 < 709.0 else math.inf
    corner = math.isinf(eps0)
    # first user (e^eps0, 1) / (e^eps0 + 1), written to stay exact for large eps0
    pb = 1.0 / (e + 1.0) if math.isfinite(e) else 0.0
    pa_up, pb_up = _first_user_up(pb)
    if method == "clones":
        r = _ulps(0.5 * math.exp(-eps0), 0.0)
        return ScaledPair(ClonePair(n, r, r, pa_up, pb_up, 0.0, eps0))
    if method == "stronger-clones":
        r = _ulps(pb, 0.0)
        return ScaledPair(ClonePair(n, r, r, pa_up, pb_up, 0.0, eps0))
    if method == "binary-rr-lower":
        return ScaledPair(_lower_pair(n, pb, 2, corner))
    if k is None:
        raise InvalidParameter(f"method {method!r} needs --k (the alphabet size, k >= 2)")
    if isinstance(k, bool) or not isinstance(k, int) or k < 2:
        raise InvalidParameter(f"k must be an integer >= 2, got {k!r}")
    if k == 2:
        # Binary RR: the k-RR decomposition with k = 2 is the stronger-clone pair
        # (each other user reports either value with probability >= 1/(e^eps0 + 1)).
        if method == "krr-lower":
            return ScaledPair(_lower_pair(n, pb, 2, corner))
        r = _ulps(pb, 0.0)
        return ScaledPair(ClonePair(n, r, r, pa_up, pb_up, 0.0, eps0))
    denom = (e + k - 1.0) if math.isfinite(e) else math.inf
    r = 1.0 / denom if math.isfinite(denom) else 0.0
    if method == "krr-lower":
        return ScaledPair(_lower_pair(n, r, k, corner))
    # Upper bound: the other users are clones of value 0 / value 1 with probability r each;
    # the first user reports a third value with probability (k-2)/denom, identical under
    # both inputs. Revealing the clone count (a post-processing the analyst is given) makes
    # the silent branch a separate, identical component, so delta = (1 - p0) delta'.
    # (The unrevealed pair of the spec table is exact only when all other users hold a
    # third value; tests/oracle.py shows it is exceeded by other datasets.)
    r = _ulps(r, 0.0)
    scale = _ulps((e + 1.0) / denom, 1.0) if math.isfinite(denom) else 1.0  # 1 - p0, p0 = (k - 2)/denom
    return ScaledPair(ClonePair(n, r, r, pa_up, pb_up, 0.0, eps0), scale=scale)


def profile_for(method: str, eps0: float, n: int, k: int | None = None) -> PrivacyProfile:
    """The certified privacy profile ``eps -> delta(eps)`` of a numerical analysis: what
    the ``eps(delta)`` search, ``delta`` and the planners evaluate."""
    sp = pair_for(method, eps0, n, k)
    hs = HockeyStick(sp.pair)
    return hs if sp.scale == 1.0 else ScaledProfile(hs, sp.scale)


def _krr_k(q: Query) -> int | None:
    """The alphabet size when the query's randomizer is k-ary randomized response."""
    from .randomizers import KRR

    return q.randomizer.k if isinstance(q.randomizer, KRR) else None


def _blanket_profile(q: Query) -> PrivacyProfile:
    """The exact privacy-blanket bound of the query's randomizer: the fast certified k-RR
    path for k-RR, the general finite-randomizer path otherwise."""
    from .numeric.blanket_krr import KrrBlanket
    from .numeric.blanket_matrix import BlanketProfile

    k = _krr_k(q)
    return KrrBlanket(q.n, k, q.eps0) if k is not None else BlanketProfile(q.randomizer, q.n)


def _dataset_lower_profile(q: Query) -> PrivacyProfile:
    """Attained lower bound of the query's randomizer: k-RR's own family, or, for every other
    randomizer, the datasets of :mod:`.numeric.dataset_lower` (others all holding x1, or a
    third value)."""
    from .numeric.blanket_krr import KrrDatasetLower
    from .numeric.dataset_lower import DatasetLowerProfile

    k = _krr_k(q)
    if k is None:
        return DatasetLowerProfile(q.randomizer, q.n)
    return KrrDatasetLower(q.n, k, q.eps0)


def applies_to(m: Method, randomizer: Any) -> bool:
    """Whether ``m`` answers for this randomizer: generic analyses for every one, k-RR
    analyses for k-RR only, mechanism-aware ones when a randomizer is given."""
    if randomizer is None:
        return not m.needs_randomizer
    if m.needs_k:
        from .randomizers import KRR

        return isinstance(randomizer, KRR)
    return True

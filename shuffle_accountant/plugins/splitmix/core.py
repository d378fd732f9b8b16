"""Security of split and mix: closed-form bounds and the labelled API.

Split and mix (Ishai–Kushilevitz–Ostrovsky–Sahai, "Cryptography from anonymity",
FOCS'06): each of ``n`` parties splits ``x_i ∈ Z_q`` into ``m`` uniformly random shares
that sum to ``x_i`` and sends them through a shuffler. It is *σ-secure* when any two
inputs with the same sum give views at statistical distance at most ``2^−σ``. With
corrupted parties every statement holds with ``n`` = the number of honest parties
(Ghazi–Manurangsi–Pagh–Velingker, EUROCRYPT'20, end of §1.1, after Ishai et al.).

Bounds implemented (all numbers rounded in the safe direction):

* **Upper bound on the distance**, Balle–Bell–Gascón–Nissim (BBGN; "Improved summation
  from shuffling", arXiv 1909.11225; "Private summation in the multi-message shuffle
  model", CCS'20, arXiv 2002.00817): σ-security when ``n > e``, ``m ≥ 3`` and
  ``m > (2σ + log₂ q)/(log₂ n − log₂ e) + 1``, for any abelian group of order ``q``
  (:mod:`.._shared.secure_sum`).
* **Lower bound on the distance of split and mix** (derived here from the distinguisher
  of GMPV §4.2, "warm-up" for Ishai et al.'s protocol): take inputs ``x = 0`` and ``x'``
  with the same sum and as many non-zero coordinates as possible (all ``n`` when
  ``q ≥ 3``; ``n − 1`` when ``q = 2``, which keeps the bound monotone in ``n``). Accept iff
  the first ``m`` shares of the shuffled view sum to 0. If those shares come from one
  party (each party: probability ``1/C(nm, m)``) the test accepts under ``x`` and rejects
  under ``x'`` for every party with ``x'_i ≠ 0``; otherwise some party contributes
  between 1 and ``m − 1`` shares, which are i.i.d. uniform, so the sum is uniform under
  both inputs. Hence the distance is at least ``n_eff / C(nm, m)``. For ``m = 1`` the
  view is the multiset of inputs and the distance is exactly 1 (``n ≥ 2``).
* **Field-dependent lower bound for every protocol**, GMPV Theorem 4.1 with Lemmas 4–6
  (EUROCRYPT 2020, arXiv 1909.11073, §4.1): a shuffled output of ``nm`` messages can be
  split among the parties in at most ``K = (nm)!/(m!)^n`` ways, and each party's messages
  determine its input (their Lemma 3), so at most ``K`` of the ``q^(n−1)`` inputs with a
  given sum can produce it; averaging over pairs, some two inputs with the same sum are
  at statistical distance at least ``1 − K/q^(n−1)``. A σ-secure protocol therefore needs
  ``(nm)!/(m!)^n >= (1 − 2^−σ) q^(n−1)``: the least such ``m`` is a floor on the
  messages of *any* one-round protocol (``m = Ω(log q / log n)``). It reproduces the
  numbers worked from the paper: 10 messages at ``n = 100``, ``q = 2^64``, ``σ = 10``; 46 at
  ``n = 50``, ``q = 2^256``, ``σ = 20``.
* GMPV Theorem 1.1 states ``m = O(1 + (σ + log q)/log n)`` without constants, so it
  certifies no number; it is reported as *not applicable*, and the exact computation
  of :mod:`.exactdist` is offered instead for small sizes.

All logarithms of the huge integers involved are taken with mpmath at 60 digits and
compared with a margin of ``1e-25`` bits, so the thresholds are exact decisions.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import mpmath

from ...plugin_api import Bound, CertificationError, check_int, fp
from .._shared.population import honest_count
from .._shared.secure_sum import (
    BBGN_CITATION,
    bbgn_messages,
    bbgn_sigma,
    check_modulus,
    check_sigma,
    describe_modulus,
    log2_int,
)
from .exactdist import ExactResult, exact_distance, exact_search, mod2_exact_distance

__all__ = [
    "BBGN_CITATION",
    "GMPV_CITATION",
    "GMPV_FIELD_CITATION",
    "LOWER_CITATION",
    "bbgn_messages",
    "bbgn_sigma",
    "check_modulus",
    "exact_bound",
    "exact_distance",
    "field_lower_bound_messages",
    "honest_parties",
    "log2_field_lower_bound_distance",
    "log2_lower_bound_distance",
    "lower_bound_distance",
    "lower_bound_messages",
    "messages_needed",
    "mod2_exact_distance",
    "security_bounds",
]

GMPV_CITATION = (
    "Ghazi, Manurangsi, Pagh, Velingker: Private aggregation from fewer anonymous messages "
    "(EUROCRYPT 2020, arXiv 1909.11073), Theorem 1.1 (asymptotic, no explicit constants)"
)
GMPV_FIELD_CITATION = (
    "Ghazi, Manurangsi, Pagh, Velingker: Private aggregation from fewer anonymous messages "
    "(EUROCRYPT 2020, arXiv 1909.11073), Theorem 4.1 with Lemmas 4-6 (field-dependent bound, every protocol): "
    "(nm)!/(m!)^n >= (1 - 2^-sigma) q^(n-1)"
)
LOWER_CITATION = (
    "distinguisher of Ghazi, Manurangsi, Pagh, Velingker (EUROCRYPT 2020), Section 4.2 warm-up "
    "for Ishai et al.'s protocol; constant n_eff / C(nm, m) derived in shuffle_accountant"
)
HONEST_NOTE = "with corrupted parties, n is the number of honest parties (GMPV Section 1.1, after Ishai et al.)"

_DPS = 60
_MARGIN_BITS = mpmath.mpf(10) ** -25
#: Largest binomial coefficient (in bits) :func:`lower_bound_distance` returns exactly.
_EXACT_BITS = 2_000_000


def _log2_factorial(k: int) -> mpmath.mpf:
    return mpmath.loggamma(mpmath.mpf(k) + 1) / mpmath.log(2)


def _log2_comb(total: int, k: int) -> mpmath.mpf:
    return _log2_factorial(total) - _log2_factorial(k) - _log2_factorial(total - k)


def _n_eff(n: int, q: int) -> int:
    """Parties the distinguisher catches: non-zero coordinates of the alternative input
    (``n`` for ``q ≥ 3``; ``n − 1`` for ``q = 2``, attained for odd ``n``, a slight
    weakening for even ``n`` that keeps the bound monotone in ``n``)."""
    if n < 2:
        return 0
    return n - 1 if q == 2 else n


def log2_lower_bound_distance(n: int, m: int, q: int) -> mpmath.mpf:
    """``log2`` of the distinguisher lower bound ``n_eff / C(nm, m)`` (``0`` for ``m = 1``,
    ``-inf`` for one party), at 60 digits."""
    n = check_int("n", n, low=1)
    m = check_int("m", m, low=1, high=10**6)
    q = check_modulus(q)
    with mpmath.workdps(_DPS):
        if n < 2:
            return mpmath.ninf
        if m == 1:
            return mpmath.mpf(0)
        return log2_int(_n_eff(n, q)) - _log2_comb(n * m, m)


def lower_bound_distance(n: int, m: int, q: int) -> Fraction:
    """A pair of equal-sum inputs whose views are at least this far apart (exact):
    ``n_eff / C(nm, m)``, derived from the distinguisher of GMPV §4.2, and 1 for ``m = 1``
    (module docstring). Raises :class:`CertificationError` when ``C(nm, m)`` has more than
    two million bits (use :func:`log2_lower_bound_distance`)."""
    n = check_int("n", n, low=1)
    m = check_int("m", m, low=1, high=10**6)
    q = check_modulus(q)
    if m == 1 and n >= 2:
        return Fraction(1)
    if m * math.log2(max(n * m, 2)) > _EXACT_BITS:
        raise CertificationError(f"C({n}*{m}, {m}) is too large to write exactly; use log2_lower_bound_distance")
    return Fraction(_n_eff(n, q), math.comb(n * m, m))


def log2_field_lower_bound_distance(n: int, m: int, q: int) -> mpmath.mpf:
    """``log2`` of GMPV's field-dependent distance bound ``1 − (nm)!/((m!)^n q^(n−1))`` for
    every protocol with ``m`` messages per party (``-inf`` when it is not positive)."""
    n = check_int("n", n, low=1)
    m = check_int("m", m, low=1, high=10**6)
    q = check_modulus(q)
    with mpmath.workdps(_DPS):
        log_ratio = _log2_factorial(n * m) - n * _log2_factorial(m) - (n - 1) * log2_int(q)
        if log_ratio >= -_MARGIN_BITS:
            return mpmath.ninf
        ratio = mpmath.power(2, log_ratio)
        return mpmath.log(1 - ratio, 2) - _MARGIN_BITS


def _first_not_excluded(excluded: Any) -> int:
    """Smallest ``m >= 1`` with ``excluded(m)`` false, for a predicate that is true up to
    some point and false after (doubling, then bisection)."""
    lo, hi = 0, 1  # invariant: lo excluded (or 0)
    while excluded(hi):
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if excluded(mid) else (lo, mid)
    return hi


def lower_bound_messages(n: int, q: int, sigma: float) -> int:
    """Every ``m`` below this value is certainly *not* σ-secure for split and mix (by the
    distinguisher lower bound)."""
    n = check_int("n", n, low=1)
    q = check_modulus(q)
    sigma = check_sigma(sigma)
    if n < 2:
        return 1

    def excluded(m: int) -> bool:  # the distance bound certainly exceeds 2^-sigma
        with mpmath.workdps(_DPS):
            return bool(log2_lower_bound_distance(n, m, q) > -mpmath.mpf(sigma) + _MARGIN_BITS)

    return _first_not_excluded(excluded)


def field_lower_bound_messages(n: int, q: int, sigma: float) -> int:
    """GMPV Theorem 4.1: the least ``m`` with ``(nm)!/(m!)^n >= (1 − 2^−σ) q^(n−1)``; any
    σ-secure one-round protocol over a group of order ``q`` (split and mix included) needs
    at least this many messages per party."""
    n = check_int("n", n, low=1)
    q = check_modulus(q)
    sigma = check_sigma(sigma)
    with mpmath.workdps(_DPS):
        need = (n - 1) * log2_int(q) + mpmath.log(1 - mpmath.power(2, -mpmath.mpf(sigma)), 2)

        def excluded(m: int) -> bool:
            with mpmath.workdps(_DPS):
                return bool(_log2_factorial(n * m) - n * _log2_factorial(m) < need - _MARGIN_BITS)

        return _first_not_excluded(excluded)


def honest_parties(n: int, honest_fraction: float = 1.0) -> int:
    """``⌈γ n⌉`` honest parties, reading ``γ`` as the decimal it is printed as (so that
    ``0.1 × 30`` is 3, not 4 as binary floating point would give)."""
    return honest_count(n, honest_fraction, name="honest fraction")


def _inputs(**kwargs: Any) -> dict[str, Any]:
    return {k: (describe_modulus(v) if k == "q" else v) for k, v in kwargs.items() if v is not None}


def _float_of_log2(x: mpmath.mpf) -> float:
    """The largest double ``<= 2^x`` (0.0 below the smallest subnormal, a valid lower end)."""
    if x == mpmath.ninf:
        return 0.0
    with mpmath.workdps(_DPS):
        return fp.down(mpmath.power(2, x)) if x > -1074 else 0.0


def _sigma_up(log2_distance: mpmath.mpf) -> float:
    """``-log2`` of a distance lower bound, rounded up (an upper bound on σ)."""
    return math.inf if log2_distance == mpmath.ninf else fp.up(-log2_distance)


def messages_needed(n: int, sigma: float, q: int, honest_fraction: float = 1.0) -> tuple[Bound, ...]:
    """Messages per party for σ-security of ``n``-party split and mix over ``Z_q``, by every
    bound this module implements (``quantity="messages"``):

    * BBGN (``upper``: that many suffice), with the σ it certifies at that ``m``;
    * the stronger of the two floors (``lower``: fewer can never be σ-secure): the
      distinguisher bound for split and mix and GMPV Theorem 4.1 for every protocol (both
      values in ``details``);
    * GMPV Theorem 1.1 (``not applicable``: asymptotic only).
    """
    sigma = check_sigma(sigma)
    q = check_modulus(q)
    h = honest_parties(n, honest_fraction)
    inputs = _inputs(n=n, honest_parties=h, q=q, sigma=sigma)
    warnings = (HONEST_NOTE,) if h != n else ()
    m_dist = lower_bound_messages(h, q, sigma)
    m_field = field_lower_bound_messages(h, q, sigma)
    m_low = max(m_dist, m_field)
    field_wins = m_field > m_dist
    with mpmath.workdps(_DPS):
        if field_wins:
            at_m = log2_field_lower_bound_distance(h, m_low, q)
            below = log2_field_lower_bound_distance(h, m_low - 1, q) if m_low > 1 else mpmath.ninf
        else:
            at_m = log2_lower_bound_distance(h, m_low, q)
            below = log2_lower_bound_distance(h, m_low - 1, q) if m_low > 1 else mpmath.ninf
    lower = Bound(
        "messages", m_low, "lower",
        "GMPV Theorem 4.1 (field-dependent)" if field_wins else "distinguisher lower bound",
        GMPV_FIELD_CITATION if field_wins else LOWER_CITATION, inputs,
        validity=("any one-round protocol, any n, q; exact combinatorial bound" if field_wins
                  else "any n >= 2, q >= 2; exact combinatorial bound (a concrete attack)"),
        warnings=warnings,
        details=_inputs(
            distance_lower_at_m_minus_1=_float_of_log2(below) if m_low > 1 else None,
            sigma_upper_at_m=_sigma_up(at_m),
            distinguisher_messages=m_dist,
            gmpv_theorem_4_1_messages=m_field,
            floor="GMPV Theorem 4.1" if field_wins else "distinguisher",
        ),
    )
    gmpv = Bound(
        "messages", None, "not applicable", "GMPV Theorem 1.1", GMPV_CITATION, inputs,
        validity="m = O(1 + (sigma + log q)/log n); constants not given, so no number is certified",
        details={"alternative": "exact distance for small sizes: shuffle-acct splitmix exact"},
    )
    if h <= 2:
        bbgn = Bound(
            "messages", None, "not applicable", "BBGN", BBGN_CITATION, inputs,
            validity="needs n > e (at least 3 honest parties)", warnings=warnings,
        )
        return (bbgn, lower, gmpv)
    m = bbgn_messages(h, q, sigma)
    certified = bbgn_sigma(h, m, q)
    bbgn = Bound(
        "messages", m, "upper", "BBGN", BBGN_CITATION, inputs,
        validity="n > e, m >= 3; any abelian group of order q", warnings=warnings,
        details={"sigma_certified": certified, "distance_upper": _pow2_neg_up(certified)},
    )
    return (bbgn, lower, gmpv)


def _pow2_neg_up(sigma: float) -> float:
    """A double ``≥ 2^−sigma`` (never 0: underflow returns the smallest subnormal)."""
    with mpmath.workdps(_DPS):
        return max(fp.up(mpmath.power(2, -mpmath.mpf(sigma))), 5e-324)


def security_bounds(n: int, m: int, q: int) -> tuple[Bound, ...]:
    """Statistical distance (worst case over equal-sum inputs) certified for ``m`` messages
    (``quantity="distance"``): BBGN ``upper`` (``2^−σ``), the stronger of the two lower
    bounds (``lower``: distinguisher, GMPV Theorem 4.1), GMPV Theorem 1.1 ``not applicable``.
    Each record's ``details`` give the matching σ."""
    n = check_int("n", n, low=1)
    m = check_int("m", m, low=1, high=10**6)
    q = check_modulus(q)
    inputs = _inputs(n=n, m=m, q=q)
    sigma = bbgn_sigma(n, m, q)
    if sigma > 0:
        bbgn = Bound(
            "distance", _pow2_neg_up(sigma), "upper", "BBGN", BBGN_CITATION, inputs,
            validity="n > e, m >= 3; any abelian group of order q", details={"sigma": sigma},
        )
    else:
        bbgn = Bound(
            "distance", 1.0, "upper", "BBGN", BBGN_CITATION, inputs,
            validity="n > e, m >= 3 and (m-1)(log2 n - log2 e) > log2 q needed for a non-trivial bound",
            warnings=("the BBGN bound certifies nothing here; only the trivial bound 1 holds",),
            details={"sigma": 0.0},
        )
    with mpmath.workdps(_DPS):
        dist = log2_lower_bound_distance(n, m, q)
        field = log2_field_lower_bound_distance(n, m, q)
        field_wins = field > dist
        best = field if field_wins else dist
    details: dict[str, Any] = {"sigma_upper": _sigma_up(best), "log2_distance_lower": float(fp.down(best))
                               if best != mpmath.ninf else -math.inf,
                               "distinguisher_log2": float(fp.down(dist)) if dist != mpmath.ninf else -math.inf,
                               "gmpv_theorem_4_1_log2": float(fp.down(field)) if field != mpmath.ninf else -math.inf}
    if not field_wins and n * m <= 10**4 and m > 1 and n >= 2:
        details["fraction"] = str(lower_bound_distance(n, m, q))
    lower = Bound(
        "distance", _float_of_log2(best), "lower",
        "GMPV Theorem 4.1 (field-dependent)" if field_wins else "distinguisher lower bound",
        GMPV_FIELD_CITATION if field_wins else LOWER_CITATION, inputs,
        validity=("any one-round protocol with m messages; exact combinatorial bound" if field_wins
                  else "any n >= 2, q >= 2; exact combinatorial bound (a concrete attack)"),
        details=details,
    )
    gmpv = Bound(
        "distance", None, "not applicable", "GMPV Theorem 1.1", GMPV_CITATION, inputs,
        validity="asymptotic only; no explicit constants",
    )
    return (bbgn, lower, gmpv)


def exact_bound(n: int, m: int, q: int) -> Bound:
    """The exact worst-case distance (``kind="exact"``), with the exact fraction, a worst
    pair of input multisets and the matching σ in ``details``; see :mod:`.exactdist`."""
    n = check_int("n", n, low=1)
    m = check_int("m", m, low=1, high=10**6)
    q = check_modulus(q)
    result: ExactResult = exact_search(n, m, q)
    d = result.distance
    with mpmath.workdps(_DPS):
        sigma = float(-mpmath.log(mpmath.mpf(d.numerator) / d.denominator, 2)) if d else math.inf
    return Bound(
        "distance", float(d), "exact", "exact enumeration",
        "definition of sigma-security (Ishai et al. FOCS'06; GMPV Definition 4), computed exactly",
        _inputs(n=n, m=m, q=q),
        validity="exact rational arithmetic over all input multisets (up to symmetry)",
        details={
            "fraction": f"{d.numerator}/{d.denominator}",
            "sigma": sigma,
            "worst_pair": [list(result.worst_pair[0]), list(result.worst_pair[1])],
            "input_types": result.types,
            "pairs_screened": result.pairs_screened,
            "pairs_exact": result.pairs_exact,
        },
    )

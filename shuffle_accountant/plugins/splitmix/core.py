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
  ``m > (2σ + log₂ q)/(log₂ n − log₂ e) + 1``, for any abelian group of order ``q``.
  This is the explicit-constant form of their experiments; it reproduces the example
  of their abstract (32-bit inputs, ``n = 10⁴``, 12 messages, ``2^−40``).
* **Lower bound on the distance** (derived here from the distinguisher of GMPV §4.2,
  "warm-up" for Ishai et al.'s protocol): take inputs ``x = 0`` and ``x'`` with the
  same sum and as many non-zero coordinates as possible (all ``n`` when ``q ≥ 3``;
  ``n − 1`` when ``q = 2``, which keeps the bound monotone in ``n``). Accept iff the
  first ``m`` shares of the shuffled view sum to 0. If those shares come from one party
  (each party: probability ``1/C(nm, m)``) the test accepts under ``x`` and rejects
  under ``x'`` for every party with ``x'_i ≠ 0``; otherwise some party contributes
  between 1 and ``m − 1`` shares, which are i.i.d. uniform, so the sum is uniform
  under both inputs. Hence the distance is at least ``n_eff / C(nm, m)`` with
  ``n_eff`` the number of non-zero coordinates of ``x'``. For ``m = 1`` the view is the
  multiset of inputs and the distance is exactly 1 (``n ≥ 2``).
* GMPV Theorem 1.1 states ``m = O(1 + (σ + log q)/log n)`` without constants (the
  authors say they "do not attempt to optimize the constants"), so it certifies no
  number; it is reported as *not applicable*, and the exact computation of
  :mod:`.exactdist` is offered instead for small sizes.
"""

from __future__ import annotations

import math
from fractions import Fraction
from numbers import Integral
from typing import Any

import mpmath

from ...errors import InvalidParameter
from ...results import Bound
from ...validation import check_int, check_positive, check_real
from .exactdist import ExactResult, exact_distance, exact_search, mod2_exact_distance

__all__ = [
    "BBGN_CITATION",
    "GMPV_CITATION",
    "LOWER_CITATION",
    "bbgn_messages",
    "bbgn_sigma",
    "check_modulus",
    "exact_bound",
    "exact_distance",
    "honest_parties",
    "lower_bound_distance",
    "lower_bound_messages",
    "messages_needed",
    "mod2_exact_distance",
    "security_bounds",
]

BBGN_CITATION = (
    "Balle, Bell, Gascón, Nissim: Improved summation from shuffling (arXiv 1909.11225) and "
    "Private summation in the multi-message shuffle model (CCS 2020, arXiv 2002.00817): "
    "sigma-secure if n > e, m >= 3 and m > (2 sigma + log2 q)/(log2 n - log2 e) + 1"
)
GMPV_CITATION = (
    "Ghazi, Manurangsi, Pagh, Velingker: Private aggregation from fewer anonymous messages "
    "(EUROCRYPT 2020, arXiv 1909.11073), Theorem 1.1 (asymptotic, no explicit constants)"
)
LOWER_CITATION = (
    "distinguisher of Ghazi, Manurangsi, Pagh, Velingker (EUROCRYPT 2020), Section 4.2 warm-up "
    "for Ishai et al.'s protocol; constant n_eff / C(nm, m) derived in shuffle_accountant"
)
HONEST_NOTE = "with corrupted parties, n is the number of honest parties (GMPV Section 1.1, after Ishai et al.)"

_DPS = 50  # decimal digits for the closed forms; their inputs are exact integers and one float
_MAX_Q_BITS = 1 << 16  # moduli up to 2^65536


def check_modulus(q: object, name: str = "q") -> int:
    """An integer modulus ``q ≥ 2`` (arbitrarily large, up to ``2^65536``)."""
    if isinstance(q, bool) or not isinstance(q, Integral):
        if isinstance(q, float) and q.is_integer():
            q = int(q)
        else:
            raise InvalidParameter(f"{name} must be an integer >= 2, got {q!r}")
    q = int(q)
    if q < 2 or q.bit_length() > _MAX_Q_BITS:
        raise InvalidParameter(f"{name} out of range: need 2 <= {name} <= 2^{_MAX_Q_BITS}, got {q}")
    return q


def _log2(k: int) -> mpmath.mpf:
    return mpmath.log(mpmath.mpf(k), 2)


def _float_down(x: Any) -> float:
    """The largest double not above the real number ``x`` (mpf or Fraction)."""
    f = float(x)
    return math.nextafter(f, -math.inf) if f > x else f


def _float_up(x: Any) -> float:
    """The smallest double not below the real number ``x`` (mpf or Fraction)."""
    f = float(x)
    return math.nextafter(f, math.inf) if f < x else f


def _pow2_neg_up(sigma: float) -> float:
    """A double ``≥ 2^−sigma`` (never 0: underflow returns the smallest subnormal)."""
    with mpmath.workdps(_DPS):
        return max(_float_up(mpmath.power(2, -mpmath.mpf(sigma))), 5e-324)


def bbgn_messages(n: int, q: int, sigma: float) -> int:
    """Smallest ``m`` that the Balle–Bell–Gascón–Nissim bound certifies σ-secure.

    ``m = max(3, ⌊(2σ + log₂ q)/(log₂ n − log₂ e) + 1⌋ + 1)`` (arXiv 1909.11225 /
    2002.00817, explicit-constant form; see the module docstring).

    Raises:
        InvalidParameter: invalid inputs, or ``n ≤ e`` (the bound certifies nothing).
    """
    n = check_int("n", n, low=1)
    q = check_modulus(q)
    sigma = check_positive("sigma", sigma)
    if n <= 2:
        raise InvalidParameter(
            f"the Balle-Bell-Gascon-Nissim bound needs n > e (at least 3 honest parties), got n={n}"
        )
    with mpmath.workdps(_DPS):
        threshold = (2 * mpmath.mpf(sigma) + _log2(q)) / (_log2(n) - mpmath.log(mpmath.e, 2)) + 1
        m = int(mpmath.floor(threshold)) + 1
        if m - threshold < mpmath.mpf(10) ** (10 - _DPS):  # too close to call: be safe
            m += 1
    return max(3, m)


def bbgn_sigma(n: int, m: int, q: int) -> float:
    """The σ the Balle–Bell–Gascón–Nissim bound certifies for ``m`` messages.

    ``σ = ((m − 1)(log₂ n − log₂ e) − log₂ q)/2``, rounded down; ``0.0`` when the bound
    certifies nothing (``n ≤ e``, ``m < 3`` or the expression is not positive), i.e.
    only the trivial distance bound 1 holds.
    """
    n = check_int("n", n, low=1)
    m = check_int("m", m, low=1, high=10**9)
    q = check_modulus(q)
    if n <= 2 or m < 3:
        return 0.0
    with mpmath.workdps(_DPS):
        sigma = ((m - 1) * (_log2(n) - mpmath.log(mpmath.e, 2)) - _log2(q)) / 2
        return max(0.0, _float_down(sigma - mpmath.mpf(10) ** (10 - _DPS)))


def _n_eff(n: int, q: int) -> int:
    """Parties the distinguisher catches: non-zero coordinates of the alternative input
    (``n`` for ``q ≥ 3``; ``n − 1`` for ``q = 2``, attained for odd ``n``, a slight
    weakening for even ``n`` that keeps the bound monotone in ``n``)."""
    if n < 2:
        return 0
    return n - 1 if q == 2 else n


def lower_bound_distance(n: int, m: int, q: int) -> Fraction:
    """A pair of equal-sum inputs whose views are at least this far apart (exact).

    ``n_eff / C(nm, m)``, derived from the distinguisher of GMPV §4.2, and 1 for ``m = 1``
    (module docstring).
    """
    n = check_int("n", n, low=1)
    m = check_int("m", m, low=1, high=10**6)
    q = check_modulus(q)
    if m == 1 and n >= 2:
        return Fraction(1)
    return Fraction(_n_eff(n, q), math.comb(n * m, m))


def _excluded(n: int, m: int, q: int, sigma: float) -> bool:
    """True when the lower bound at ``m`` certainly exceeds ``2^−σ``: ``m`` is not σ-secure."""
    bound = lower_bound_distance(n, m, q)
    with mpmath.workdps(_DPS):
        gap = _log2(bound.denominator) - _log2(bound.numerator) - mpmath.mpf(sigma)
        return bool(gap < -(mpmath.mpf(10) ** (10 - _DPS)))


def lower_bound_messages(n: int, q: int, sigma: float) -> int:
    """Every ``m`` below this value is certainly *not* σ-secure (by the lower bound)."""
    n = check_int("n", n, low=1)
    q = check_modulus(q)
    sigma = check_positive("sigma", sigma)
    if n < 2:
        return 1
    lo, hi = 0, 1  # invariant: lo excluded (or 0); the bound decreases in m
    while _excluded(n, hi, q, sigma):
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if _excluded(n, mid, q, sigma) else (lo, mid)
    return hi


def honest_parties(n: int, honest_fraction: float = 1.0) -> int:
    """``⌈γ n⌉`` honest parties, reading ``γ`` as the decimal it is printed as (so that
    ``0.1 × 30`` is 3, not 4 as binary floating point would give)."""
    n = check_int("n", n, low=1)
    gamma = check_real("honest fraction", honest_fraction, low=0.0, high=1.0, low_open=True)
    return max(1, math.ceil(Fraction(str(gamma)) * n))


def _inputs(**kwargs: Any) -> dict[str, Any]:
    return {k: v for k, v in kwargs.items() if v is not None}


def messages_needed(n: int, sigma: float, q: int, honest_fraction: float = 1.0) -> tuple[Bound, ...]:
    """Messages per party for σ-security of ``n``-party split and mix over ``Z_q``, by every
    bound this module implements (``quantity="messages"``):

    * BBGN (``upper``: that many suffice), with the σ it certifies at that ``m``;
    * the distinguisher lower bound (``lower``: fewer can never be σ-secure);
    * GMPV Theorem 1.1 (``not applicable``: asymptotic only).
    """
    sigma = check_positive("sigma", sigma)
    q = check_modulus(q)
    h = honest_parties(n, honest_fraction)
    inputs = _inputs(n=n, honest_parties=h, q=q, sigma=sigma)
    warnings = (HONEST_NOTE,) if h != n else ()
    m_low = lower_bound_messages(h, q, sigma)
    low_dist = lower_bound_distance(h, m_low - 1, q) if m_low > 1 else None
    lower = Bound(
        "messages", m_low, "lower", "distinguisher lower bound", LOWER_CITATION, inputs,
        validity="any n >= 2, q >= 2; exact combinatorial bound (a concrete attack)",
        warnings=warnings,
        details=_inputs(
            distance_lower_at_m_minus_1=None if low_dist is None else _float_down(low_dist),
            sigma_upper_at_m=_float_up(_sigma_from_distance(lower_bound_distance(h, m_low, q))),
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


def _sigma_from_distance(distance: Fraction) -> Any:
    with mpmath.workdps(_DPS):
        return -mpmath.log(mpmath.mpf(distance.numerator) / distance.denominator, 2) if distance else mpmath.inf


def security_bounds(n: int, m: int, q: int) -> tuple[Bound, ...]:
    """Statistical distance (worst case over equal-sum inputs) certified for ``m`` messages
    (``quantity="distance"``): BBGN ``upper`` (``2^−σ``), distinguisher ``lower``, GMPV
    ``not applicable``. Each record's ``details`` give the matching σ."""
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
    low = lower_bound_distance(n, m, q)
    lower = Bound(
        "distance", _float_down(low), "lower", "distinguisher lower bound", LOWER_CITATION, inputs,
        validity="any n >= 2, q >= 2; exact combinatorial bound (a concrete attack)",
        details={"sigma_upper": _float_up(_sigma_from_distance(low)) if low else math.inf, "fraction": str(low)},
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
    return Bound(
        "distance", float(d), "exact", "exact enumeration",
        "definition of sigma-security (Ishai et al. FOCS'06; GMPV Definition 4), computed exactly",
        _inputs(n=n, m=m, q=q),
        validity="exact rational arithmetic over all input multisets (up to symmetry)",
        details={
            "fraction": f"{d.numerator}/{d.denominator}",
            "sigma": float(_sigma_from_distance(d)) if d else math.inf,
            "worst_pair": [list(result.worst_pair[0]), list(result.worst_pair[1])],
            "input_types": result.types,
            "pairs_screened": result.pairs_screened,
            "pairs_exact": result.pairs_exact,
        },
    )

"""The floating-point policy of the package: unit roundoff, directed rounding, and the
*measured* relative error of the scipy (Boost.Math) probability functions it relies on.

Every certified number is computed in IEEE double precision and then widened by the
budgets below, so a budget must cover the real error of the function it describes.
The budgets are not taken from documentation: they were measured against an
independent 40-digit reference (mpmath ``loggamma`` for probabilities, exact-ratio sums
in fixed-point integer arithmetic for tails), and ``tests/test_fp.py`` re-measures them
on a sample of points (sizes up to ``1e12``, values down to ``1e-300``) and fails if a
budget does not cover the measured error with a margin.

Measured (worst relative error seen, sizes ``1e2 .. 1e12``, values ``>= 1e-300``):

* **Binomial pmf** (``scipy.special._ufuncs._binom_pmf``, Boost ``ibeta_derivative``):
  about ``1.2e-14·sqrt(n)`` at ``n = 1e4``, ``1.5e-9`` at ``n = 1e11``, ``7.5e-9`` at
  ``n = 1e12`` (deep tails); never more than ``1.2e-14·sqrt(n)``.
* **Binomial cdf / sf** (Boost ``ibeta``/``ibetac``): the same ``sqrt(n)`` behaviour, plus
  one path that is far worse: when ``min(k + 1, n - k) < 40`` and ``n < 2^31`` Boost sums
  the binomial series with ``y = 1 - p`` rounded to a double, so ``y^(n-k)`` carries a
  relative error up to ``(n - k)·u/2``. Measured ``0.49·n·u``: ``5e-8`` at ``n = 1e9``,
  ``1e-7`` at ``n = 2e9`` for a mean near 10 (e.g. ``Bin(1e9, 3e-9)`` at ``k = 1``). For
  ``n >= 2^31`` that path is not taken (errors below ``1e-13`` at small means).
* **Poisson** through Boost's chi-square (``gamma_p``/``gamma_q`` and
  ``gamma_p_derivative``; :func:`poisson_route`): about ``1.45·mu·u`` for large means
  (``1.5e-10`` at ``mu = 1e6``, ``1.3e-6`` at ``1e10``), ``1.3e-14·sqrt(mu)`` for small
  ones; beyond ``mu ~ 1e11`` Boost's series give up. scipy's own ``poisson`` is *not*
  usable there: its pmf ``exp(xlogy(k, mu) - gammaln(k+1) - mu)`` loses ``k·log(mu)·u``
  (``2.4e-9`` at ``mu = 1e6``, ``4e-3`` at ``1e12``) and its ``pdtrc`` (Cephes ``igam``)
  is off by 30% at ``mu = 7.5e7`` four standard deviations out.
* **Negative binomial** pmf/cdf/sf (Boost ``ibeta``): at most ``2e-14·sqrt(size)`` with
  ``size = max(r, r(1-p)/p)``; ``8.3e-9`` at ``r = 1e12``.

Each budget below is at least three times the worst measured error.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction
from numbers import Real
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy only where an array helper runs: plug-in help imports this module
    import numpy as np

#: Unit roundoff of IEEE double precision (half the distance from 1 to the next double).
UNIT_ROUNDOFF = 2.0**-53
#: Smallest positive normal double; below it relative precision is lost (subnormals).
SMALLEST_NORMAL = sys.float_info.min
#: Largest ``x`` whose ``e^x`` the package evaluates: finite, with headroom for a factor
#: ``10^4`` (``log`` of the largest double is 709.78).
MAX_EXP_ARG = 700.0
#: Smallest probability a user may ask for and the floor under which a certified upper
#: bound is reported as this value (subnormals start at 2.2e-308).
MIN_PROBABILITY = 1e-300
#: Largest size parameter (binomial ``n``, negative-binomial size) the budgets were measured at.
MAX_MEASURED_SIZE = 1e12
#: Largest Poisson mean the Poisson budget covers (Boost's gamma series fail near 1e11).
MAX_POISSON_MEAN = 1e10
#: ``n`` below which Boost's binomial cdf/sf may take the ``y = 1 - p`` series path.
_BOOST_INT_PATH = 2.0**32  # the path needs n < INT_MAX = 2^31 - 1; 2^32 keeps a margin


# ---------------------------------------------------------------------------------------
# Directed rounding
# ---------------------------------------------------------------------------------------


def sum_error(count: int) -> float:
    """Relative error bound of numpy's sum (``np.sum``, ``np.add.reduceat``: pairwise, blocks of
    128 with 8 accumulators) of ``count`` non-negative floats: every term passes through at most
    ``16 + 3 + log2(count)`` additions; doubled for safety."""
    return (40.0 + 2.0 * math.log2(max(count, 2))) * UNIT_ROUNDOFF


def exp_gap_down(a: float, b: float) -> float:
    """A lower bound on ``e^b - e^a`` for ``a <= b`` (a few ``u`` below): ``e^a expm1(b - a)``,
    where the difference ``b - a`` of two nearby doubles is exact (Sterbenz) and ``exp``,
    ``expm1`` and the product round by at most ``8 u`` together."""
    return math.exp(a) * math.expm1(b - a) * (1.0 - 8 * UNIT_ROUNDOFF)


def matvec(m: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``m @ w`` by numpy's own loops (``einsum``), not BLAS: a multithreaded BLAS leaves its
    threads spinning after each call, which on a shared machine costs more CPU time than these
    products (measured: one blanket lattice evaluation at n = 1e7, 234 -> 129 ms CPU). The order
    of summation is unspecified: callers charge it as for any sum of that many terms."""
    import numpy

    return numpy.einsum("ij,j->i", m, w)


def next_up(x: float, steps: int = 1) -> float:
    """The double ``steps`` units in the last place above ``x`` (``inf`` stays ``inf``)."""
    for _ in range(steps):
        x = math.nextafter(x, math.inf)
    return x


def next_down(x: float, steps: int = 1) -> float:
    """The double ``steps`` units in the last place below ``x``."""
    for _ in range(steps):
        x = math.nextafter(x, -math.inf)
    return x


def _exact(x: Any) -> Fraction | None:
    """``x`` as an exact rational when that is possible (``None`` for mpmath numbers)."""
    if isinstance(x, Fraction):
        return x
    if isinstance(x, int):
        return Fraction(x)
    if isinstance(x, float):
        return Fraction(x) if math.isfinite(x) else None
    return None


def up(x: Any) -> float:
    """The smallest double ``>= x`` for an exact number (int, Fraction, float) or an mpmath
    number (compared at its own precision); ``inf`` when ``x`` exceeds every double."""
    try:
        f = float(x)
    except OverflowError:
        return math.inf
    if math.isinf(f) or math.isnan(f):
        return f
    exact = _exact(x)
    below = (Fraction(f) < exact) if exact is not None else bool(f < x)
    return math.nextafter(f, math.inf) if below else f


def down(x: Any) -> float:
    """The largest double ``<= x`` (see :func:`up`)."""
    try:
        f = float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf
    if math.isinf(f) or math.isnan(f):
        return f
    exact = _exact(x)
    above = (Fraction(f) > exact) if exact is not None else bool(f > x)
    return math.nextafter(f, -math.inf) if above else f


def widen(value: float, rel: float, absolute: float = 0.0) -> tuple[float, float]:
    """A certified ``(lower, upper)`` around a computed ``value`` whose error is at most
    ``rel·|value| + absolute``, rounded outwards (the widening itself costs one ulp)."""
    err = rel * abs(value) + absolute
    return next_down(value - err), next_up(value + err)


def exp_checked(x: float, what: str = "e^x") -> float:
    """``e^x`` for ``x <= MAX_EXP_ARG``; raises ``OverflowError`` naming ``what`` beyond."""
    if x > MAX_EXP_ARG:
        raise OverflowError(f"{what} = e^{x:g} exceeds double precision (limit e^{MAX_EXP_ARG:g})")
    return math.exp(x)


# ---------------------------------------------------------------------------------------
# Measured budgets
# ---------------------------------------------------------------------------------------


def _size(value: Real | float, name: str) -> float:
    x = float(value)
    if not (x >= 0.0) or math.isinf(x):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return x


def binomial_pmf_budget(n: float) -> float:
    """Relative error charged to one Boost binomial pmf value at size ``n``:
    ``1e-12 + 3e-14·sqrt(n)`` (measured at most ``1.2e-14·sqrt(n)``)."""
    n = _size(n, "n")
    return 1e-12 + 3e-14 * math.sqrt(max(n, 1.0))


def binomial_tail_budget(n: float) -> float:
    """Relative error charged to one Boost binomial cdf or sf value at size ``n``: the pmf
    budget plus ``2·n·u`` while ``n < 2^32`` (Boost's ``y = 1 - p`` series path, measured
    at most ``0.49·n·u``; see the module docstring)."""
    n = _size(n, "n")
    extra = 2.0 * n * UNIT_ROUNDOFF if n < _BOOST_INT_PATH else 0.0
    return binomial_pmf_budget(n) + extra


def binomial_budget(n: float) -> float:
    """One budget covering every Boost binomial value (pmf, cdf, sf) at size ``n``.

    Never below the package's earlier ``1e-12 + 1e-14·sqrt(n)``; larger where the
    measurement requires it (the ``sqrt(n)`` coefficient, for a margin of three at
    ``n = 1e12``; the cdf/sf path of :func:`binomial_tail_budget` for ``n < 2^32``).
    """
    return max(binomial_pmf_budget(n), binomial_tail_budget(n))


def poisson_budget(mu: float) -> float:
    """Relative error charged to one Poisson pmf, cdf or sf value at mean ``mu`` computed
    through Boost's chi-square functions (:func:`poisson_route`):
    ``1e-12 + 3e-14·sqrt(mu) + 6·mu·u`` (measured at most ``1.45·mu·u + 1.3e-14·sqrt(mu)``)."""
    mu = _size(mu, "mu")
    return 1e-12 + 3e-14 * math.sqrt(max(mu, 1.0)) + 6.0 * mu * UNIT_ROUNDOFF


def negbin_size(r: float, p: float) -> float:
    """The size a negative-binomial budget is indexed by: ``max(r, r(1-p)/p)``."""
    return max(float(r), float(r) * (1.0 - float(p)) / float(p))


def negbin_budget(r: float, p: float) -> float:
    """Relative error charged to one Boost negative-binomial pmf, cdf or sf value of
    ``NB(r, p)``: ``1e-12 + 5e-14·sqrt(size)`` with ``size = max(r, r(1-p)/p)`` (measured at
    most ``2e-14·sqrt(size)``)."""
    size = _size(negbin_size(r, p), "size")
    return 1e-12 + 5e-14 * math.sqrt(max(size, 1.0))


def poisson_route() -> str:
    """How Poisson probabilities are evaluated under :func:`poisson_budget`."""
    return (
        "Boost chi-square with 2k+2 degrees of freedom at 2 mu (scipy.special.chndtr for the sf, "
        "its complement for the cdf, the density for the pmf)"
    )


__all__ = [
    "MAX_EXP_ARG",
    "MAX_MEASURED_SIZE",
    "MAX_POISSON_MEAN",
    "MIN_PROBABILITY",
    "SMALLEST_NORMAL",
    "UNIT_ROUNDOFF",
    "binomial_budget",
    "binomial_pmf_budget",
    "binomial_tail_budget",
    "down",
    "exp_checked",
    "exp_gap_down",
    "matvec",
    "negbin_budget",
    "negbin_size",
    "next_down",
    "next_up",
    "poisson_budget",
    "poisson_route",
    "up",
    "widen",
]

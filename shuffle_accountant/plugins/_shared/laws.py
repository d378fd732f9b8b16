"""Binomial, Poisson and negative-binomial probabilities for the plug-ins, each with the
measured relative error budget of :mod:`shuffle_accountant.numeric.fp`.

All values come from Boost.Math through scipy's ufuncs (no per-call distribution
objects). The Poisson law is evaluated through Boost's chi-square functions
(``P[Poi(mu) <= k] = P[chi2(2k+2) > 2mu]``, the pmf from the chi-square density), because
scipy's own ``poisson`` loses accuracy fast as the mean grows (see the ``fp`` module).
Arguments outside the support get their exact values (Boost returns NaN there); tails
are never ``1 - cdf``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

from ...plugin_api import CertificationError, fp


def _boost(name: str, fallback: str) -> Any:
    """The Boost-backed ufunc ``scipy.special._ufuncs.<name>`` that ``scipy.stats`` itself
    calls, or the same computation through ``scipy.stats`` (``"<dist>.<method>"``) on
    scipy layouts without it."""
    from scipy.special import _ufuncs

    found = getattr(_ufuncs, name, None)
    if found is not None:
        return found
    from scipy import stats  # pragma: no cover - other scipy layouts

    dist, method = fallback.split(".")  # pragma: no cover
    fn = getattr(getattr(stats, dist), method)  # pragma: no cover
    return (lambda x, df, nc: fn(x, df)) if dist == "chi2" else fn  # pragma: no cover


_binom_pmf, _binom_cdf, _binom_sf = (_boost(f"_binom_{m}", f"binom.{m}") for m in ("pmf", "cdf", "sf"))
_nbinom_pmf, _nbinom_cdf, _nbinom_sf = (_boost(f"_nbinom_{m}", f"nbinom.{m}") for m in ("pmf", "cdf", "sf"))
_ncx2_pdf, _ncx2_sf = _boost("_ncx2_pdf", "chi2.pdf"), _boost("_ncx2_sf", "chi2.sf")


def _poisson_pmf(k: Any, mu: float) -> Any:
    return 2.0 * _ncx2_pdf(2.0 * mu, 2.0 * k + 2.0, 0.0)


def _poisson_cdf(k: Any, mu: float) -> Any:
    return _ncx2_sf(2.0 * mu, 2.0 * k + 2.0, 0.0)


def _poisson_sf(k: Any, mu: float) -> Any:
    return special.chndtr(2.0 * mu, 2.0 * k + 2.0, 0.0)


class Law:
    """A law on ``{0, 1, ...}`` (binomial ``(n, p)``, Poisson ``(mu,)`` or negative binomial
    ``(r, p)``) with vectorised ``pmf``, ``cdf`` (``P[X <= k]``), ``sf`` (``P[X > k]``), the
    relative error ``budget`` of every value (``pmf_budget`` for the pmf alone, which is
    smaller for the binomial) and its support's upper end ``top`` (``inf`` if unbounded).

    Raises :class:`CertificationError` when the size is beyond the range where the
    budget was measured (binomial ``n`` or negative-binomial size above ``1e12``,
    Poisson mean above ``1e10``).
    """

    __slots__ = ("_f", "args", "budget", "family", "pmf_budget", "top")

    def __init__(self, family: str, *args: float) -> None:
        self.family, self.args = family, tuple(float(a) for a in args)
        if family == "binomial":
            n, p = self.args
            if n > fp.MAX_MEASURED_SIZE:
                raise CertificationError(
                    f"a binomial law with {n:.4g} trials is beyond the {fp.MAX_MEASURED_SIZE:g} "
                    "trials at which its floating-point error was measured")
            self.budget, self.top = fp.binomial_budget(n), n
            self.pmf_budget = fp.binomial_pmf_budget(n)
            self._f = (_binom_pmf, _binom_cdf, _binom_sf)
        elif family == "poisson":
            (mu,) = self.args
            if mu > fp.MAX_POISSON_MEAN:
                raise CertificationError(
                    f"a Poisson law with mean {mu:.4g} is beyond the mean {fp.MAX_POISSON_MEAN:g} at which its "
                    "floating-point error was measured (Boost's gamma series fail near 1e11)")
            self.budget, self.top = fp.poisson_budget(mu), math.inf
            self.pmf_budget = self.budget
            self._f = (_poisson_pmf, _poisson_cdf, _poisson_sf)
        elif family == "negbin":
            r, p = self.args
            size = fp.negbin_size(r, p)
            if not size <= fp.MAX_MEASURED_SIZE:
                raise CertificationError(
                    f"a negative binomial law NB({r:.4g}, {p:.4g}) of size max(r, mean) = {size:.4g} is beyond "
                    f"the size {fp.MAX_MEASURED_SIZE:g} at which its floating-point error was measured")
            self.budget, self.top = fp.negbin_budget(r, p), math.inf
            self.pmf_budget = self.budget
            self._f = (_nbinom_pmf, _nbinom_cdf, _nbinom_sf)
        else:
            raise ValueError(f"unknown law {family!r}")

    def _masked(self, which: int, k: Any, below: float, above: float, inclusive: bool) -> np.ndarray:
        k = np.atleast_1d(np.asarray(k, dtype=float))
        out = np.where(k < 0, below, above).astype(float)
        inside = (k >= 0) & ((k <= self.top) if inclusive else (k < self.top))
        if np.any(inside):
            out[inside] = self._f[which](k[inside], *self.args)
        return out

    def pmf(self, k: Any) -> np.ndarray:
        """``P[X = k]`` (0 outside the support)."""
        return self._masked(0, k, 0.0, 0.0, True)

    def cdf(self, k: Any) -> np.ndarray:
        """``P[X <= k]``."""
        return self._masked(1, k, 0.0, 1.0, False)

    def sf(self, k: Any) -> np.ndarray:
        """``P[X > k]``."""
        return self._masked(2, k, 1.0, 0.0, False)

    def mass(self, lo: float, hi: float) -> tuple[float, float]:
        """``(P[lo <= X <= hi], absolute error bound)`` for integer or infinite ends.

        One tail where the interval reaches an end of the support; otherwise the
        difference of the two tails on the side of the median away from the interval,
        whose error is charged to both terms (so cancellation is accounted for).
        """
        lo, hi = max(lo, 0.0), min(hi, self.top)
        if hi < lo:
            return 0.0, 0.0
        eta = self.budget
        if lo == 0.0:
            v = 1.0 if math.isinf(hi) else float(self.cdf(hi)[0])
            return v, eta * v
        if hi >= self.top:
            v = float(self.sf(lo - 1)[0])
            return v, eta * v
        a, b = float(self.cdf(hi)[0]), float(self.cdf(lo - 1)[0])
        if a <= 0.5:
            return max(0.0, a - b), eta * (a + b) + fp.UNIT_ROUNDOFF * a
        a, b = float(self.sf(lo - 1)[0]), float(self.sf(hi)[0])
        return max(0.0, a - b), eta * (a + b) + fp.UNIT_ROUNDOFF * a

    def mean(self) -> float:
        if self.family == "binomial":
            return self.args[0] * self.args[1]
        if self.family == "poisson":
            return self.args[0]
        r, p = self.args
        return r * (1.0 - p) / p

    def variance(self) -> float:
        if self.family == "binomial":
            n, p = self.args
            return n * p * (1.0 - p)
        if self.family == "poisson":
            return self.args[0]
        r, p = self.args
        return r * (1.0 - p) / p**2


__all__ = ["Law"]

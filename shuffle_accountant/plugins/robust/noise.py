"""Exact hockey-stick accounting of distributed noise for a sensitivity-1 count.

A protocol in which every user adds a share of an infinitely divisible noise to a
count releases, up to post-processing, ``count + Z`` where ``Z`` is the noise summed
over the users that follow the protocol (seed 000, Definition 2.9 and footnote 5:
dropping out is the worst malicious users can do, their extra messages are
post-processing). Its privacy is the hockey-stick divergence between ``Z`` and
``Z + 1`` in both directions (Ghazi–Kumar–Manurangsi–Pagh, ICML'20, Observation 8:
the distributed protocol is exactly as private as the central ``Z``-mechanism).

Laws (``honest`` = number of honest users, noise summed over them only):

* ``binomial``  – ``Bin(N, p)``, every user adds ``Bin(t, p)`` (``N = honest·t``);
* ``poisson``   – ``Poi(μ)``;
* ``negbin``    – ``NB(r, p)`` (Pólya; scipy's ``nbinom``: failures before the r-th success);
* ``dlap``      – ``NB(r, p) − NB(r, p)`` with ``p = 1 − e^{−a}``; ``r = 1`` is the discrete
  Laplace law ``DLap(a)`` (pmf ∝ e^{−a|k|}); users add Pólya differences with shape ``1/h``.

For the first three, the likelihood ratio ``f(k)/f(k−1)`` is monotone in ``k`` (it is
``(N−k+1)p/(k(1−p))``, ``μ/k`` and ``(k+r−1)(1−p)/k``), so each set
``{f(k) > e^ε f(k−1)}`` is an integer interval and ``δ(ε)`` is a difference of two
interval masses, evaluated with Boost-backed ``pmf``/``cdf``/``sf`` (never ``1 − cdf``).
This is what keeps ``N = 10⁹`` at a few tens of microseconds per evaluation.

Certification: every interval mass ``m`` is taken with a relative error allowance
``RELATIVE_ERROR`` (far above the measured accuracy of Boost's incomplete beta/gamma
functions and of pmf sums of at most ``PMF_SUM_LIMIT`` terms), the upper bound uses
``m⁺(1+η) − e^ε m⁻(1−η)`` and the lower bound the reverse. Interval end-points computed
in floating point are perturbed by ±1 and the largest value is kept: each candidate set
gives a valid lower bound on the supremum and the optimal set is among them.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cached_property, lru_cache
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np
from scipy import stats

from ...errors import CertificationError, InvalidParameter
from ...results import Bound
from ...validation import check_int, check_positive, check_real

#: Relative error allowed on every probability mass computed with scipy (Boost).
RELATIVE_ERROR = 1e-10
#: Intervals shorter than this are summed term by term from the pmf.
PMF_SUM_LIMIT = 4096

LAWS = ("binomial", "poisson", "negbin", "dlap")

CITE_EXACT = (
    "exact hockey-stick of Z vs Z+1 (Ghazi-Kumar-Manurangsi-Pagh ICML'20, Observation 8); "
    "robustness: Balcer-Cheu-Joseph-Mao 2020 (seed 000), Definition 2.9"
)

INF = math.inf


class RecordMixin:
    """``to_dict`` for the small frozen result records of this plug-in (nested records and
    mappings are converted too)."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in self.__dict__.items():
            if hasattr(value, "to_dict"):
                value = value.to_dict()
            elif isinstance(value, Mapping):
                value = dict(value)
            out[key] = value
        return out


class _Dist:
    """A scipy discrete law with bound arguments, without scipy's (slow) freezing."""

    __slots__ = ("dist", "args")

    def __init__(self, dist: Any, args: tuple[float, ...]) -> None:
        self.dist, self.args = dist, args

    def pmf(self, k: Any) -> Any:
        return self.dist.pmf(k, *self.args)

    def cdf(self, k: Any) -> Any:
        return self.dist.cdf(k, *self.args)

    def sf(self, k: Any) -> Any:
        return self.dist.sf(k, *self.args)

    def mean(self) -> float:
        return float(self.dist.mean(*self.args))

    def std(self) -> float:
        return float(self.dist.std(*self.args))


@dataclass(frozen=True)
class NoiseLaw:
    """A central noise law ``Z`` on the integers (the noise summed over honest users).

    Attributes:
        family: one of :data:`LAWS`.
        size: ``N`` (binomial trials), ``r`` (negbin/dlap shape); unused for poisson.
        p: success probability (binomial ``p``; negbin/dlap ``p`` of ``NB(r, p)``).
        mean: the Poisson mean ``μ``.
    """

    family: str
    size: float = 0.0
    p: float = 0.0
    mean: float = 0.0

    def __post_init__(self) -> None:
        if self.family not in LAWS:
            raise InvalidParameter(f"noise law must be one of {', '.join(LAWS)}, got {self.family!r}")
        if self.family == "binomial":
            if not (float(self.size).is_integer() and self.size >= 1):
                raise InvalidParameter(f"binomial trials must be an integer >= 1, got {self.size!r}")
            check_real("p", self.p, low=0.0, high=1.0, low_open=True, high_open=True)
        elif self.family == "poisson":
            check_positive("Poisson mean", self.mean)
        else:
            check_positive("shape r", self.size)
            check_real("p", self.p, low=0.0, high=1.0, low_open=True, high_open=True)

    # -- basic distribution facts -------------------------------------------------
    @cached_property
    def _rv(self) -> "_Dist":
        if self.family == "binomial":
            return _Dist(stats.binom, (int(self.size), self.p))
        if self.family == "poisson":
            return _Dist(stats.poisson, (self.mean,))
        return _Dist(stats.nbinom, (self.size, self.p))

    @property
    def variance(self) -> float:
        """Variance of ``Z``."""
        if self.family == "binomial":
            return self.size * self.p * (1.0 - self.p)
        if self.family == "poisson":
            return self.mean
        one = self.size * (1.0 - self.p) / self.p**2
        return 2.0 * one if self.family == "dlap" else one

    @property
    def expectation(self) -> float:
        """Mean of ``Z`` (the analyzer subtracts it)."""
        if self.family == "binomial":
            return self.size * self.p
        if self.family == "poisson":
            return self.mean
        if self.family == "negbin":
            return self.size * (1.0 - self.p) / self.p
        return 0.0

    def describe(self) -> str:
        if self.family == "binomial":
            return f"Bin({int(self.size)}, {self.p:.6g})"
        if self.family == "poisson":
            return f"Poi({self.mean:.6g})"
        if self.family == "negbin":
            return f"NB({self.size:.6g}, {self.p:.6g})"
        a = -math.log1p(-self.p)
        if self.size == 1.0:
            return f"DLap({a:.6g})"
        return f"NB({self.size:.6g}, {self.p:.6g}) - NB({self.size:.6g}, {self.p:.6g})"

    def to_dict(self) -> dict[str, Any]:
        return {"family": self.family, "law": self.describe(), "size": self.size, "p": self.p, "mean": self.mean}

    # -- interval masses ----------------------------------------------------------
    def mass(self, lo: float, hi: float) -> float:
        """``Pr[lo <= Z <= hi]`` for integer (or infinite) end-points, tail-accurate."""
        return _mass(self, lo, hi)

    def _mass(self, lo: float, hi: float) -> float:
        if hi < lo:
            return 0.0
        if self.family == "dlap":
            raise AssertionError("dlap masses are computed by dlap_delta")
        rv = self._rv
        lo = max(lo, 0.0)
        if self.family == "binomial":
            hi = min(hi, self.size)
        if hi < lo:
            return 0.0
        if math.isfinite(hi) and hi - lo <= PMF_SUM_LIMIT:
            ks = np.arange(int(lo), int(hi) + 1)
            return float(math.fsum(rv.pmf(ks)))
        if not math.isfinite(hi):
            return float(rv.sf(lo - 1))
        upper = float(rv.cdf(hi))
        if upper < 0.5:
            return max(0.0, upper - float(rv.cdf(lo - 1)))
        return max(0.0, float(rv.sf(lo - 1)) - float(rv.sf(hi)))

    # -- the monotone likelihood ratio f(k)/f(k-1) -------------------------------
    def _ratio_sets(self, eps: float) -> tuple[tuple[float, float], tuple[float, float]]:
        """Integer intervals ``A1 = {f(k) > e^ε f(k−1)}`` and ``A2 = {f(k−1) > e^ε f(k)}``."""
        t1, t2 = math.exp(eps), math.exp(-eps)
        if self.family == "binomial":
            n, p = self.size, self.p
            x1 = (n + 1) * p / (p + t1 * (1 - p))  # k < x1
            x2 = (n + 1) * p / (p + t2 * (1 - p))  # k > x2
            return (0.0, math.ceil(x1) - 1.0), (math.floor(x2) + 1.0, n + 1.0)
        if self.family == "poisson":
            mu = self.mean
            return (0.0, math.ceil(mu * t2) - 1.0), (math.floor(mu * t1) + 1.0, INF)
        r, q = self.size, 1.0 - self.p
        # A1: k = 0 always (f(-1) = 0); k >= 1 with k (e^eps - q) < (r - 1) q.
        x1 = (r - 1.0) * q / (t1 - q)
        a1 = (0.0, max(0.0, math.ceil(x1) - 1.0))
        # A2: k >= 1 with k (e^-eps - q) > (r - 1) q.
        c = t2 - q
        if c > 0:
            a2 = (max(1.0, math.floor((r - 1.0) * q / c) + 1.0), INF)
        elif c < 0:
            a2 = (1.0, math.ceil((1.0 - r) * q / (-c)) - 1.0) if r < 1 else (1.0, 0.0)
        else:
            a2 = (1.0, INF) if r < 1 else (1.0, 0.0)
        return a1, a2


@lru_cache(maxsize=4096)
def _mass(law: NoiseLaw, lo: float, hi: float) -> float:
    return law._mass(lo, hi)


@dataclass(frozen=True)
class DeltaResult:
    """Certified δ(ε) of one noise law: both directions, upper and lower ends."""

    eps: float
    upper: float
    lower: float
    forward_upper: float  # D_{e^ε}(Z+1 ‖ Z)... direction "count+1 vs count" (see noise.delta)
    backward_upper: float
    law: NoiseLaw
    details: Mapping[str, Any] = field(default_factory=dict)

    def bound(self, inputs: Mapping[str, Any] | None = None, method: str = "exact") -> Bound:
        return Bound(
            quantity="delta",
            value=self.upper,
            kind="upper",
            method=f"{method} hockey-stick of {self.law.describe()}",
            citation=CITE_EXACT,
            inputs=dict(inputs or {}, eps=self.eps),
            validity="exact up to a relative rounding allowance of 1e-10 (certified upper end shown)",
            details={"lower": self.lower, "forward": self.forward_upper, "backward": self.backward_upper},
        )


def _interval_delta(law: NoiseLaw, eps: float, interval: tuple[float, float], shift_first: bool) -> tuple[float, float]:
    """Certified (upper, lower) of ``Σ_{k∈A} (f(k) − e^ε f(k−1))`` (``shift_first=False``)
    or ``Σ_{k∈A} (f(k−1) − e^ε f(k))`` (``shift_first=True``), maximised over ±1
    perturbations of the interval end-points."""
    lo0, hi0 = interval
    best_up, best_lo = 0.0, 0.0
    t = math.exp(eps)
    eta = RELATIVE_ERROR
    support_top = law.size + 1 if law.family == "binomial" else INF
    lo_moves = (0.0,) if lo0 <= 0 else (-1.0, 0.0, 1.0)
    hi_moves = (0.0,) if hi0 >= support_top else (-1.0, 0.0, 1.0)
    for dlo in lo_moves:
        for dhi in hi_moves:
            lo, hi = lo0 + dlo, hi0 + dhi
            if hi < lo:
                continue
            m_k = law.mass(lo, hi)
            m_k1 = law.mass(lo - 1, hi - 1)
            plus, minus = (m_k1, m_k) if shift_first else (m_k, m_k1)
            best_up = max(best_up, plus * (1 + eta) - t * minus * (1 - eta))
            best_lo = max(best_lo, plus * (1 - eta) - t * minus * (1 + eta))
    return min(1.0, max(0.0, best_up)), min(1.0, max(0.0, best_lo))


def dlap_delta(a: float, eps: float) -> tuple[float, float]:
    """Exact ``δ(ε)`` of the discrete Laplace mechanism ``DLap(a)`` (pmf ∝ e^{−a|k|}).

    The privacy loss of ``Z`` vs ``Z + 1`` only takes the values ``±a``; for ``ε < a`` the
    set ``{k <= 0}`` carries it and ``δ = Pr[Z <= 0](1 − e^{ε−a}) = (1 − e^{ε−a})/(1 + e^{−a})``
    (both directions, by symmetry); ``δ = 0`` for ``ε >= a`` (Ghosh–Roughgarden–Sundararajan
    STOC'09: the geometric mechanism is ``a``-DP). Returns (upper, lower) with a relative
    rounding allowance.
    """
    if eps >= a:
        return 0.0, 0.0
    value = -math.expm1(eps - a) / (1.0 + math.exp(-a))
    return min(1.0, value * (1 + RELATIVE_ERROR)), value * (1 - RELATIVE_ERROR)


def _symnb_delta(law: NoiseLaw, eps: float, tail: float = 1e-18) -> tuple[float, float]:
    """δ(ε) of ``NB(r,p) − NB(r,p)`` for ``r != 1`` by a full sum on a finite window.

    The pmf of the difference is the correlation of the truncated ``NB(r, p)`` pmf with
    itself; truncating each factor at mass ``t`` removes at most ``2t`` from the
    difference law, which is added to the upper end (and ``e^ε·2t`` taken off the lower).
    """
    rv = stats.nbinom(law.size, law.p)
    top = quantile_window(rv, tail)[1] + 2
    if top > 20000:
        raise CertificationError(
            f"NB({law.size:g}, {law.p:g}) difference needs a window of {top} points (limit 20000); "
            "use a larger per-user shape or the dlap design with shares 1/h"
        )
    f = rv.pmf(np.arange(top + 1))
    lost = 2.0 * float(rv.sf(top))
    d = np.correlate(f, f, mode="full")  # index i -> k = i - top
    d = np.clip(d, 0.0, None)
    prev = np.concatenate(([0.0], d))
    cur = np.concatenate((d, [0.0]))
    t = math.exp(eps)
    forward = float(math.fsum(np.clip(cur - t * prev, 0.0, None)))
    backward = float(math.fsum(np.clip(prev - t * cur, 0.0, None)))
    raw = max(forward, backward)
    margin = 1e-12 * (1 + t)  # float error of a correlation of <= 20001 terms, generous
    return min(1.0, raw + lost + margin), max(0.0, raw - t * lost - margin)


def delta(law: NoiseLaw, eps: float) -> DeltaResult:
    """Certified exact ``δ(ε) = max(D_{e^ε}(Z‖Z+1), D_{e^ε}(Z+1‖Z))`` of ``law``."""
    eps = check_real("eps", eps, low=0.0)
    if law.family == "dlap":
        a = -math.log1p(-law.p)
        if law.size == 1.0:
            up, lo = dlap_delta(a, eps)
            return DeltaResult(eps, up, lo, up, up, law, {"closed_form": True})
        up, lo = _symnb_delta(law, eps)
        return DeltaResult(eps, up, lo, up, up, law, {"window_sum": True})
    a1, a2 = law._ratio_sets(eps)
    f_up, f_lo = _interval_delta(law, eps, a1, shift_first=False)
    b_up, b_lo = _interval_delta(law, eps, a2, shift_first=True)
    return DeltaResult(eps, max(f_up, b_up), max(f_lo, b_lo), f_up, b_up, law, {"A1": a1, "A2": a2})


# ---------------------------------------------------------------------------------
# Honest-user laws and solvers
# ---------------------------------------------------------------------------------


def honest_count(n: int, gamma: float) -> int:
    """``⌈γn⌉``: the number of users that must follow the protocol (seed 000, Def. 2.9)."""
    n = check_int("n", n)
    gamma = check_real("gamma", gamma, low=0.0, high=1.0, low_open=True)
    h = math.ceil(Fraction(repr(gamma)) * n)  # decimal gamma, exact: 0.3 * 10 is 3, not 4
    return max(1, min(n, h))


def honest_law(family: str, per_user: float, h: int, *, trials: int = 1, p: float = 0.5) -> NoiseLaw:
    """The noise summed over ``h`` honest users when each adds the per-user share.

    ``per_user`` is the Bernoulli ``p`` (binomial, ``trials`` draws each), the Poisson mean,
    or the NB/dlap shape per user (``p`` then is the NB success probability).
    """
    if family == "binomial":
        return NoiseLaw("binomial", size=float(h * trials), p=per_user)
    if family == "poisson":
        return NoiseLaw("poisson", mean=per_user * h)
    return NoiseLaw(family, size=per_user * h, p=p)


@dataclass(frozen=True)
class Solution:
    """Result of an inverse solver: the least noise meeting ``(ε, δ)``.

    ``value`` is verified feasible by the forward computation; ``infeasible_neighbor``
    (one step less noise) is verified to violate the target.
    """

    parameter: str
    value: float
    infeasible_neighbor: float | None
    delta_at_value: float
    delta_at_neighbor: float | None
    binding: str
    law: NoiseLaw
    details: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "parameter": self.parameter,
            "value": self.value,
            "infeasible_neighbor": self.infeasible_neighbor,
            "delta_at_value": self.delta_at_value,
            "delta_at_neighbor": self.delta_at_neighbor,
            "binding": self.binding,
            "law": self.law.to_dict(),
            **dict(self.details),
        }


def bisect_least(
    feasible: Callable[[float], bool],
    lo: float,
    hi: float,
    *,
    rtol: float = 1e-6,
    integer: bool = False,
    geometric: bool = True,
) -> tuple[float, float]:
    """Smallest feasible ``x`` in ``(lo, hi]`` for a predicate that is (essentially)
    monotone: returns ``(x_feasible, x_infeasible)`` with ``x_infeasible`` one step below.

    ``lo`` must be infeasible and ``hi`` feasible (checked by the caller). For integers
    the step is 1, otherwise a relative step ``rtol``.
    """
    while True:
        if integer:
            if hi - lo <= 1:
                return hi, lo
            mid = math.floor((lo + hi) / 2)
        else:
            if hi - lo <= rtol * hi:
                return hi, lo
            mid = math.sqrt(lo * hi) if (geometric and lo > 0 and hi / lo > 4) else 0.5 * (lo + hi)
        if feasible(mid):
            hi = mid
        else:
            lo = mid


def secant_least(
    value: Callable[[float], float], target: float, lo: float, hi: float, *, rtol: float = 1e-6
) -> tuple[float, float]:
    """Like :func:`bisect_least` for a non-increasing *certified* quantity ``value`` (an
    upper bound on delta) with feasibility ``value(x) <= target``: Illinois regula falsi on
    ``log value - log target``, which needs far fewer evaluations than bisection; every
    step keeps ``lo`` infeasible and ``hi`` feasible, so the answer is certified the same way.
    """
    f_lo = math.log(max(value(lo), 1e-300)) - math.log(target)
    f_hi = math.log(max(value(hi), 1e-300)) - math.log(target)
    side = 0
    while hi - lo > rtol * hi:
        x = hi - f_hi * (hi - lo) / (f_hi - f_lo) if f_lo > 0.0 >= f_hi else 0.5 * (lo + hi)
        # keep the proposal strictly inside, and finish with steps of rtol/2 around the root
        x = min(max(x, lo + 0.5 * rtol * hi), hi - 0.5 * rtol * hi)
        fx = math.log(max(value(x), 1e-300)) - math.log(target)
        if fx <= 0.0:
            hi, f_hi = x, fx
            if side == 1:
                f_lo *= 0.5
            side = 1
        else:
            lo, f_lo = x, fx
            if side == -1:
                f_hi *= 0.5
            side = -1
    return hi, lo


def solve_noise(
    family: str,
    n: int,
    eps: float,
    target_delta: float,
    *,
    gamma: float = 1.0,
    trials: int = 1,
    nb_p: float = 0.5,
    rtol: float = 1e-6,
) -> Solution:
    """Least per-user noise so that the noise of ``⌈γn⌉`` honest users is ``(ε, δ)``-DP.

    * binomial: smallest Bernoulli ``p <= 1/2`` per draw (each user ``trials`` draws);
    * poisson: smallest total mean ``μ`` (per user ``μ/h``);
    * negbin: smallest total shape ``r`` for the given ``p`` (per user ``r/h``);
    * dlap: largest ``a`` (least noise) of ``DLap(a)``, closed form
      ``a = ln((e^ε + δ)/(1 − δ))`` from :func:`dlap_delta`, per-user Pólya shares ``1/h``.

    Raises :class:`CertificationError` when no amount of noise of that kind reaches the
    target with ``⌈γn⌉`` honest users (e.g. binomial with ``p = 1/2``).
    """
    eps = check_positive("eps", eps)
    target_delta = check_real("delta", target_delta, low=0.0, high=1.0, low_open=True, high_open=True)
    h = honest_count(n, gamma)
    trials = check_int("trials", trials)

    def fwd(x: float) -> float:
        return delta(honest_law(family, x, h, trials=trials, p=nb_p), eps).upper

    info = {"honest_users": h, "n": n, "gamma": gamma, "eps": eps, "target_delta": target_delta}
    if family == "dlap":
        a = math.log((math.exp(eps) + target_delta) / (1.0 - target_delta))
        while dlap_delta(a, eps)[0] > target_delta:  # rounding allowance: step to the safe side
            a *= 1 - 1e-12
        neighbor = a * (1 + rtol)
        law = NoiseLaw("dlap", size=1.0, p=-math.expm1(-a))
        return Solution(
            "a (DLap scale; least noise = largest a)",
            a,
            neighbor,
            dlap_delta(a, eps)[0],
            dlap_delta(neighbor, eps)[1],
            "delta target (closed form)",
            law,
            {**info, "per_user_shape": 1.0 / h, "per_user": f"Polya(1/{h}, e^-a) difference"},
        )
    if family == "binomial":
        top = 0.5
        if fwd(top) > target_delta:
            d_half = fwd(top)
            raise CertificationError(
                f"too few honest users: with {h} honest users (gamma*n) and {trials} Bernoulli(1/2) draw(s) each, "
                f"delta({eps:g}) = {d_half:.3g} > target {target_delta:g}; increase n, gamma, trials or the target"
            )
        # Pr[Z = 0] = (1-p)^N <= delta is necessary: a p below this is infeasible
        low = -math.expm1(math.log(target_delta) / (h * trials)) * (1 - 1e-9)
        if low <= 0 or fwd(low) <= target_delta:
            low = 1e-300
        x, x_bad = bisect_least(lambda v: fwd(v) <= target_delta, low, top, rtol=rtol)
        name = "p (per-user Bernoulli probability)"
    elif family in ("poisson", "negbin"):
        if family == "negbin":
            nb_p = check_real("nb_p", nb_p, low=0.0, high=1.0, low_open=True, high_open=True)
        # Pr[Z = 0] <= delta is necessary: e^{-mu} or p^r
        zero = math.log(1 / target_delta) if family == "poisson" else math.log(1 / target_delta) / math.log(1 / nb_p)
        low, top = 0.999 * zero / h, 2.0 * zero / h
        while fwd(top) > target_delta:
            low, top = top, top * 4
            if top * h > 1e18:
                raise CertificationError("no finite noise level reaches the target")
        if fwd(low) <= target_delta:
            raise CertificationError("target met with (almost) no noise: the target is vacuous")
        x, x_bad = bisect_least(lambda v: fwd(v) <= target_delta, low, top, rtol=rtol)
        name = "per-user Poisson mean" if family == "poisson" else "per-user NB shape"
    else:
        raise InvalidParameter(f"noise law must be one of {', '.join(LAWS)}, got {family!r}")
    if family == "binomial":
        law_ok, law_bad = honest_law(family, x, h, trials=trials), honest_law(family, x_bad, h, trials=trials)
    else:
        law_ok, law_bad = honest_law(family, x, h, p=nb_p), honest_law(family, x_bad, h, p=nb_p)
    d_ok, d_bad = delta(law_ok, eps), delta(law_bad, eps)
    binding = "delta target (forward direction)" if d_ok.forward_upper >= d_ok.backward_upper else "delta target (backward direction)"
    return Solution(name, x, x_bad, d_ok.upper, d_bad.lower, binding, law_ok, info)


def quantile_window(rv: Any, tail: float, support_hi: float = INF) -> tuple[int, int]:
    """Integers ``(a, b)`` with ``Pr[Z < a] <= tail`` and ``Pr[Z > b] <= tail`` for a law on
    ``{0, 1, ...}``, found by bisection on ``cdf``/``sf`` (scipy's ``binom.isf`` returns ``N``
    for tiny tails, so quantile functions are not trusted here)."""
    mean, sd = float(rv.mean()), float(rv.std())
    hi = mean + 10 * sd + 10
    while float(rv.sf(hi)) > tail:
        hi = mean + 2 * (hi - mean) + 10
    lo_b, hi_b = math.floor(mean), math.ceil(min(hi, support_hi))
    while hi_b - lo_b > 1:  # invariant: sf(hi_b) <= tail
        mid = (lo_b + hi_b) // 2
        if float(rv.sf(mid)) <= tail:
            hi_b = mid
        else:
            lo_b = mid
    b = hi_b
    if float(rv.cdf(0)) > tail:
        return 0, b
    lo_a, hi_a = 0, max(1, math.ceil(mean))  # invariant: cdf(lo_a - 1)... cdf(lo_a) <= tail
    while hi_a - lo_a > 1:
        mid = (lo_a + hi_a) // 2
        if float(rv.cdf(mid)) <= tail:
            lo_a = mid
        else:
            hi_a = mid
    return lo_a + 1, b  # cdf(a - 1) = cdf(lo_a) <= tail


def dlap_variance(a: float) -> float:
    """``Var(DLap(a)) = 2e^{−a}/(1 − e^{−a})²`` (seed 004, Section 2)."""
    return 2.0 * math.exp(-a) / math.expm1(-a) ** 2


def pmf_range(law: NoiseLaw, a: int, b: int) -> np.ndarray:
    """``f(a), ..., f(b)``. Short ranges use one Boost ``pmf`` at an anchor near the mean and
    the exact ratio recurrence ``f(k)/f(k−1)`` (summed in log space, relative error about
    ``1e-16`` per step, so below ``1e-12`` for the at most 5000 steps allowed); longer ranges
    call ``pmf`` everywhere."""
    ks = np.arange(a, b + 1)
    if b - a > 5000 or law.family == "dlap":
        return np.asarray(law._rv.pmf(ks), dtype=float)
    anchor = int(min(max(round(law.expectation), max(a, 0)), b))
    if law.family == "binomial":
        anchor = min(anchor, int(law.size))
    f_anchor = float(law._rv.pmf(anchor))
    if f_anchor == 0.0 or anchor < a:
        return np.asarray(law._rv.pmf(ks), dtype=float)
    kk = ks.astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        if law.family == "binomial":
            ratio = (law.size - kk + 1) * law.p / (kk * (1 - law.p))
        elif law.family == "poisson":
            ratio = law.mean / kk
        else:
            ratio = (kk + law.size - 1) * (1 - law.p) / kk
        log_ratio = np.log(ratio)  # log f(k) - log f(k-1)
    out = np.zeros(len(ks))
    i0 = anchor - a
    up = np.cumsum(log_ratio[i0 + 1:])
    out[i0 + 1:] = np.exp(math.log(f_anchor) + up)
    down = np.cumsum(log_ratio[1:i0 + 1][::-1])  # log f(k-1) = log f(k) - log ratio(k)
    out[:i0][::-1] = np.exp(math.log(f_anchor) - down)
    out[i0] = f_anchor
    out[(ks < 0) | ~np.isfinite(out)] = 0.0
    if law.family == "binomial":
        out[ks > law.size] = 0.0
    return out


def privacy_loss_window(law: NoiseLaw, tail: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """The privacy-loss distribution of ``(Z+1, Z)`` on a window: support points ``k``
    (values of ``Z+1``), ``P(k) = f(k−1)``, ``Q(k) = f(k)``, and the ``P``-mass left out.

    Used for exact composition (histograms). ``Q(k) = 0`` gives an infinite loss, kept.
    """
    if law.family == "dlap":
        raise InvalidParameter("composition windows are implemented for binomial/poisson/negbin laws")
    rv = law._rv
    # mean +- (12 sd + 10): outside mass is computed and returned (added by callers), so the
    # window need not be a tight quantile; widen until the outside mass is below ``tail``
    width = 12.0
    while True:
        spread = width * math.sqrt(law.variance) + 10
        lo = float(max(0, math.floor(law.expectation - spread)))
        hi = float(math.ceil(law.expectation + spread))
        if law.family == "binomial":
            hi = min(hi, law.size)
        if float(rv.cdf(lo - 2)) + float(rv.sf(hi)) <= tail or width > 200:
            break
        width *= 1.5
    if hi - lo > 2_000_000:
        raise CertificationError(f"composition window of {hi - lo:.3g} points is too large")
    k = np.arange(int(lo), int(hi) + 2)  # values of Z+1
    f = pmf_range(law, int(lo) - 1, int(hi) + 1)  # f(lo-1) ... f(hi+1)
    p_k, q_k = f[:-1], f[1:]
    left_out = float(rv.cdf(lo - 2)) + float(rv.sf(hi))
    return k, p_k, q_k, left_out

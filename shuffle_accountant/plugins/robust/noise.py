"""Exact hockey-stick accounting of distributed noise for a sensitivity-1 count.

A protocol in which every user adds a share of an infinitely divisible noise to a
count releases, up to post-processing, ``count + Z`` where ``Z`` is the noise summed
over the users that follow the protocol (Balcer, Cheu, Joseph, Mao, "Connecting robust
shuffle privacy and pan-privacy", SODA 2021, arXiv 2004.09481, Definition 2.9 and
footnote 5: dropping out is the worst malicious users can do, their extra messages are
post-processing). Its privacy is the hockey-stick divergence between ``Z`` and ``Z + 1``
in both directions (Ghazi, Kumar, Manurangsi, Pagh, "Private counting from anonymous
messages: near-optimal accuracy with vanishing communication overhead", ICML 2020,
Observation 8: the distributed protocol is exactly as private as the central
``Z``-mechanism).

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

Certification: every interval mass comes with an absolute error bound from the measured
relative error budget of its law (:mod:`shuffle_accountant.numeric.fp`: the binomial,
Poisson and negative-binomial budgets grow with the size of the law), the upper bound
uses ``(m₁ + e₁) − e^ε (m₂ − e₂)`` and the lower bound the reverse. Interval end-points
computed in floating point are perturbed by ±1 and the largest value is kept: each
candidate set gives a valid lower bound on the supremum and the optimal set is among
them. Laws beyond the sizes at which the budgets were measured (binomial ``N`` or
negative-binomial size above ``1e12``, Poisson mean above ``1e10``) are refused with
:class:`CertificationError`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

import numpy as np

from ...plugin_api import (
    NoBracket,
    monotone_boundary,
    DELTA,
    EPSILON,
    EPSILON_OR_ZERO,
    Bound,
    CertificationError,
    InvalidParameter,
    RealRange,
    check_int,
    check_real,
    fp,
)
from .._shared.laws import Law
from .._shared.noise import dlap_variance
from .._shared.population import honest_count

#: Intervals shorter than this are summed term by term from the pmf.
PMF_SUM_LIMIT = 4096
#: Relative error charged to a closed form of a few elementary functions (``exp``,
#: ``expm1``, ``log1p``; each within 2 ulp in glibc and other common libms).
ELEMENTARY = 64 * fp.UNIT_ROUNDOFF

LAWS = ("binomial", "poisson", "negbin", "dlap")

CITE_EXACT = (
    "exact hockey-stick of Z vs Z+1 (Ghazi-Kumar-Manurangsi-Pagh, ICML 2020, arXiv 2002.01919, Observation 8); "
    "robustness: Balcer-Cheu-Joseph-Mao, SODA 2021 (arXiv 2004.09481), Definition 2.9"
)

INF = math.inf
#: The NB success probability: ``1e-300 <= p < 1`` (scipy's ``nbinom``).
NB_P = RealRange("nb-p", fp.MIN_PROBABILITY, 1.0, high_open=True)

__all__ = [
    "CITE_EXACT",
    "LAWS",
    "DeltaResult",
    "NoiseLaw",
    "Solution",
    "bisect_least",
    "delta",
    "dlap_delta",
    "dlap_variance",
    "honest_count",
    "honest_law",
    "least_feasible",
    "narrow_bracket",
    "pmf_range",
    "privacy_loss_window",
    "quantile_window",
    "secant_least",
    "solve_noise",
    "users_for_error",
]


@dataclass(frozen=True)
class NoiseLaw:
    """A central noise law ``Z`` on the integers (the noise summed over honest users).

    Attributes:
        family: one of :data:`LAWS`.
        size: ``N`` (binomial trials), ``r`` (negbin/dlap shape); unused for poisson.
        p: success probability (binomial ``p``; negbin/dlap ``p`` of ``NB(r, p)``).
        mean: the Poisson mean ``μ``.
        a: dlap only: the scale ``a`` (``p = 1 − e^{−a}``); give either ``a`` or ``p``
            (``a`` keeps its precision where ``1 − e^{−a}`` rounds to 1).
    """

    family: str
    size: float = 0.0
    p: float = 0.0
    mean: float = 0.0
    a: float = 0.0

    def __post_init__(self) -> None:
        if self.family not in LAWS:
            raise InvalidParameter(f"law: {self.family!r} is not a noise law (accepted: {', '.join(LAWS)})")
        if self.family == "binomial":
            size = check_real("binomial trials", self.size, low=1.0)
            if not size.is_integer():
                raise InvalidParameter(f"binomial trials: {self.size!r} is not an integer (accepted: integer >= 1)")
            check_real("p", self.p, low=0.0, high=1.0, low_open=True, high_open=True)
        elif self.family == "poisson":
            check_real("Poisson mean", self.mean, low=0.0, low_open=True)
        else:
            check_real("shape r", self.size, low=0.0, low_open=True)
            if self.family == "dlap" and self.a:
                a = check_real("a", self.a, low=0.0, low_open=True)
                object.__setattr__(self, "p", -math.expm1(-a))
            else:
                check_real("p", self.p, low=0.0, high=1.0, low_open=True, high_open=True)
                if self.family == "dlap":
                    object.__setattr__(self, "a", -math.log1p(-self.p))

    # -- basic distribution facts -------------------------------------------------
    @cached_property
    def law(self) -> Law:
        """The evaluated law (binomial, poisson, negbin) with its measured error budget."""
        if self.family == "binomial":
            return Law("binomial", self.size, self.p)
        if self.family == "poisson":
            return Law("poisson", self.mean)
        if self.family == "negbin":
            return Law("negbin", self.size, self.p)
        raise AssertionError("dlap has no single law on {0, 1, ...}")

    @property
    def variance(self) -> float:
        """Variance of ``Z``."""
        if self.family == "binomial":
            return self.size * self.p * (1.0 - self.p)
        if self.family == "poisson":
            return self.mean
        if self.family == "dlap":
            return self.size * dlap_variance(self.a)
        return self.size * (1.0 - self.p) / self.p**2

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
        if self.size == 1.0:
            return f"DLap({self.a:.6g})"
        return f"NB({self.size:.6g}, {self.p:.6g}) - NB({self.size:.6g}, {self.p:.6g})"

    def to_dict(self) -> dict[str, Any]:
        out = {"family": self.family, "law": self.describe(), "size": self.size, "p": self.p, "mean": self.mean}
        if self.family == "dlap":
            out["a"] = self.a
        return out

    # -- interval masses ----------------------------------------------------------
    def mass(self, lo: float, hi: float) -> tuple[float, float]:
        """``(Pr[lo <= Z <= hi], absolute error bound)`` for integer (or infinite) end-points."""
        return _mass(self, lo, hi)

    def _mass(self, lo: float, hi: float) -> tuple[float, float]:
        law = self.law
        lo, hi = max(lo, 0.0), min(hi, law.top)
        if hi < lo:
            return 0.0, 0.0
        if math.isfinite(hi) and hi - lo <= PMF_SUM_LIMIT:
            terms = law.pmf(np.arange(int(lo), int(hi) + 1))
            v = math.fsum(terms)  # correctly rounded sum of non-negative terms
            count = len(terms)
            return v, (law.pmf_budget + fp.UNIT_ROUNDOFF) * v + count * fp.SMALLEST_NORMAL
        v, err = law.mass(lo, hi)
        return v, err + 2 * fp.SMALLEST_NORMAL

    # -- the monotone likelihood ratio f(k)/f(k-1) -------------------------------
    def _ratio_sets(self, eps: float) -> tuple[tuple[float, float], tuple[float, float]]:
        """Integer intervals ``A1 = {f(k) > e^ε f(k−1)}`` and ``A2 = {f(k−1) > e^ε f(k)}``
        (end-points computed in floating point; :func:`_interval_delta` tries ±1)."""
        t1, t2 = math.exp(eps), math.exp(-eps)
        if self.family == "binomial":
            n, p = self.size, self.p
            x1 = (n + 1) * p / (p + t1 * (1 - p))  # k < x1
            x2 = (n + 1) * p / (p + t2 * (1 - p))  # k > x2
            return (0.0, math.ceil(x1) - 1.0), (min(math.floor(x2) + 1.0, n + 1.0), n + 1.0)
        if self.family == "poisson":
            mu = self.mean
            return (0.0, math.ceil(mu * t2) - 1.0), (math.floor(mu * t1) + 1.0, INF)
        r, q = self.size, 1.0 - self.p
        # A1: k = 0 always (f(-1) = 0); k >= 1 with k (e^eps - q) < (r - 1) q.
        if t1 - q > 0:
            a1 = (0.0, max(0.0, math.ceil((r - 1.0) * q / (t1 - q)) - 1.0))
        else:  # e^eps - q rounds to 0 (eps and 1 - q below the resolution of a double)
            a1 = (0.0, INF) if r > 1 else (0.0, 0.0)
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
def _mass(law: NoiseLaw, lo: float, hi: float) -> tuple[float, float]:
    return law._mass(lo, hi)


@dataclass(frozen=True)
class DeltaResult:
    """Certified δ(ε) of one noise law: both directions, upper and lower ends."""

    eps: float
    upper: float
    lower: float
    forward_upper: float  # D_{e^ε}(Z ‖ Z+1) ... see :func:`delta`
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
            validity="exact up to the measured floating-point error of the law (certified upper end shown)",
            details={"lower": self.lower, "forward": self.forward_upper, "backward": self.backward_upper},
            bracket=(self.lower, self.upper),
        )


def _interval_delta(law: NoiseLaw, eps: float, interval: tuple[float, float], shift_first: bool) -> tuple[float, float]:
    """Certified (upper, lower) of ``Σ_{k∈A} (f(k) − e^ε f(k−1))`` (``shift_first=False``)
    or ``Σ_{k∈A} (f(k−1) − e^ε f(k))`` (``shift_first=True``), maximised over ±1
    perturbations of the interval end-points."""
    lo0, hi0 = interval
    best_up, best_lo = 0.0, 0.0
    t = math.exp(eps)
    support_top = law.size + 1 if law.family == "binomial" else INF
    lo_moves = (0.0,) if lo0 <= 0 else (-1.0, 0.0, 1.0)
    hi_moves = (0.0,) if hi0 >= support_top else (-1.0, 0.0, 1.0)
    for dlo in lo_moves:
        for dhi in hi_moves:
            lo, hi = lo0 + dlo, hi0 + dhi
            if hi < lo:
                continue
            m_k, e_k = law.mass(lo, hi)
            m_k1, e_k1 = law.mass(lo - 1, hi - 1)
            (plus, e_plus), (minus, e_minus) = ((m_k1, e_k1), (m_k, e_k)) if shift_first else ((m_k, e_k), (m_k1, e_k1))
            up = fp.next_up(plus + e_plus - t * max(0.0, minus - e_minus), 2)
            low = fp.next_down(plus - e_plus - t * (minus + e_minus), 2)
            best_up, best_lo = max(best_up, up), max(best_lo, low)
    return min(1.0, max(0.0, best_up)), min(1.0, max(0.0, best_lo))


def dlap_delta(a: float, eps: float) -> tuple[float, float]:
    """Exact ``δ(ε)`` of the discrete Laplace mechanism ``DLap(a)`` (pmf ∝ e^{−a|k|}).

    The privacy loss of ``Z`` vs ``Z + 1`` only takes the values ``±a``; for ``ε < a`` the
    set ``{k <= 0}`` carries it and ``δ = Pr[Z <= 0](1 − e^{ε−a}) = (1 − e^{ε−a})/(1 + e^{−a})``
    (both directions, by symmetry); ``δ = 0`` for ``ε >= a`` (Ghosh, Roughgarden,
    Sundararajan, STOC 2009: the geometric mechanism is ``a``-DP). Returns (upper, lower)
    with the elementary-function allowance :data:`ELEMENTARY`.
    """
    if eps >= a:
        return 0.0, 0.0
    value = -math.expm1(eps - a) / (1.0 + math.exp(-a))
    return min(1.0, fp.next_up(value * (1 + ELEMENTARY))), fp.next_down(value * (1 - ELEMENTARY))


def _symnb_delta(law: NoiseLaw, eps: float, tail: float = 1e-18) -> tuple[float, float]:
    """δ(ε) of ``NB(r,p) − NB(r,p)`` for ``r != 1`` by a full sum on a finite window.

    The pmf of the difference is the correlation of the truncated ``NB(r, p)`` pmf with
    itself; truncating each factor at mass ``t`` removes at most ``2t`` from the
    difference law, which is added to the upper end (and ``e^ε·2t`` taken off the lower).
    Each pmf value carries the measured negative-binomial budget ``η``; a correlation of
    ``w`` terms has relative error at most ``2η + 2wu``.
    """
    one = Law("negbin", law.size, law.p)
    top = quantile_window(one, tail)[1] + 2
    if top > 20000:
        raise CertificationError(
            f"NB({law.size:g}, {law.p:g}) difference needs a window of {top} points (limit 20000); "
            "use a larger per-user shape or the dlap design with shares 1/h"
        )
    f = one.pmf(np.arange(top + 1))
    lost = 2.0 * float(one.sf(top)[0]) * (1 + one.budget)
    d = np.correlate(f, f, mode="full")  # index i -> k = i - top
    d = np.clip(d, 0.0, None)
    prev = np.concatenate(([0.0], d))
    cur = np.concatenate((d, [0.0]))
    t = math.exp(eps)
    forward = float(math.fsum(np.clip(cur - t * prev, 0.0, None)))
    backward = float(math.fsum(np.clip(prev - t * cur, 0.0, None)))
    raw = max(forward, backward)
    rel = 2 * one.budget + 2 * (2 * top + 3) * fp.UNIT_ROUNDOFF
    margin = rel * (1 + t) * float(math.fsum(d)) + (2 * top + 3) * fp.SMALLEST_NORMAL
    return min(1.0, fp.next_up(raw + lost + margin)), max(0.0, fp.next_down(raw - t * lost - margin))


def delta(law: NoiseLaw, eps: float) -> DeltaResult:
    """Certified exact ``δ(ε) = max(D_{e^ε}(Z‖Z+1), D_{e^ε}(Z+1‖Z))`` of ``law``
    (``0 <= eps <= 700``)."""
    eps = EPSILON_OR_ZERO.check(eps, "eps")
    if law.family == "dlap":
        if law.size == 1.0:
            up, lo = dlap_delta(law.a, eps)
            return DeltaResult(eps, up, lo, up, up, law, {"closed_form": True})
        up, lo = _symnb_delta(law, eps)
        return DeltaResult(eps, up, lo, up, up, law, {"window_sum": True})
    budget = law.law.budget  # first: refuses laws beyond the measured sizes
    a1, a2 = law._ratio_sets(eps)
    f_up, f_lo = _interval_delta(law, eps, a1, shift_first=False)
    b_up, b_lo = _interval_delta(law, eps, a2, shift_first=True)
    return DeltaResult(eps, max(f_up, b_up), max(f_lo, b_lo), f_up, b_up, law,
                       {"A1": a1, "A2": a2, "relative_budget": budget})


# ---------------------------------------------------------------------------------
# Honest-user laws and solvers
# ---------------------------------------------------------------------------------


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


def least_feasible(
    ok: Callable[[float], bool],
    lo: float,
    hi: float,
    *,
    start: float | None = None,
    rtol: float = 1e-6,
    integer: bool = False,
) -> tuple[float, float]:
    """Smallest ``x`` in ``(lo, hi]`` where the monotone predicate ``ok`` holds, with its
    neighbour one step below, both evaluated: ``(x_ok, x_failing)``.

    A thin layer over the core's certified search ``monotone_boundary`` (feasible side
    "high"): ``lo`` must fail and ``hi`` hold (the caller has checked both). ``start`` (default
    the geometric middle) is where the search begins; a good start costs fewer
    evaluations, never changes what is certified. Steps are relative (``rtol``) for reals
    and 1 for integers.
    """
    from ...plugin_api import monotone_boundary

    guess = math.sqrt(lo * hi) if start is None else start
    guess = min(max(guess, lo), hi)
    if guess == lo:  # the start must be a point not yet known to fail
        guess = hi
    found = monotone_boundary(ok, guess, feasible_side="high", low=lo, high=hi, integer=integer, rtol=rtol)
    if found.infeasible is None:
        raise CertificationError(f"internal check failed: the search found the lower end {lo!r} feasible")
    return float(found.feasible), float(found.infeasible)


def bisect_least(
    feasible: Callable[[float], bool],
    lo: float,
    hi: float,
    *,
    rtol: float = 1e-6,
    integer: bool = False,
    geometric: bool = True,
) -> tuple[float, float]:
    """Smallest feasible ``x`` in ``(lo, hi]`` for a monotone predicate: ``(x_feasible,
    x_infeasible)``, the second one step below (``lo`` infeasible and ``hi`` feasible, checked
    by the caller). Kept for callers of the earlier interface; the search is
    :func:`least_feasible` (``geometric`` is accepted and ignored: the core search takes
    geometric midpoints while the ends are more than a factor 2 apart)."""
    del geometric
    return least_feasible(feasible, lo, hi, rtol=rtol, integer=integer)


def narrow_bracket(
    value: Callable[[float], float], target: float, lo: float, hi: float, *, width: float = 2e-5,
    max_steps: int = 200,
) -> tuple[float, float, float]:
    """Illinois regula-falsi steps on ``log value − log target`` (in ``log x`` while the ends
    are more than a factor 4 apart, bisecting when two steps did not halve the bracket) for a
    non-increasing *certified* ``value`` with ``value(lo) > target >= value(hi)``, until
    ``hi − lo <= width·hi``: returns the narrower ``(lo, hi)`` (every end evaluated, the same
    sides kept) and the next interpolated guess, the start of :func:`least_feasible`.
    Nothing reported comes from the interpolation itself."""
    floor = fp.MIN_PROBABILITY
    log_target = math.log(max(target, floor))

    def gap(x: float) -> float:
        return math.log(max(value(x), floor)) - log_target

    g_lo, g_hi = gap(lo), gap(hi)
    side = 0
    sizes = [math.log(hi / lo) if lo > 0 else math.inf]
    guess = hi
    for _ in range(max_steps):
        geometric = lo > 0 and hi / lo > 4
        a, b = (math.log(lo), math.log(hi)) if geometric else (lo, hi)
        stalled = len(sizes) >= 3 and sizes[-1] > 0.5 * sizes[-3]
        if not stalled and g_lo > 0.0 >= g_hi and g_lo - g_hi > 0:
            z = b - g_hi * (b - a) / (g_hi - g_lo)
        else:
            z = 0.5 * (a + b)
        z = min(max(z, a + 1e-3 * (b - a)), b - 1e-3 * (b - a))
        guess = math.exp(z) if geometric else z
        if hi - lo <= width * hi or not lo < guess < hi:
            break
        g = gap(guess)
        if g <= 0.0:
            hi, g_hi = guess, g
            if side == 1:
                g_lo *= 0.5
            side = 1
        else:
            lo, g_lo = guess, g
            if side == -1:
                g_hi *= 0.5
            side = -1
        sizes.append(math.log(hi / lo) if lo > 0 else math.inf)
    return lo, hi, guess


def secant_least(
    value: Callable[[float], float], target: float, lo: float, hi: float, *, rtol: float = 1e-6,
    lower: Callable[[float], float] | None = None,
) -> tuple[float, float]:
    """Smallest ``x`` in ``(lo, hi]`` with ``value(x) <= target`` for a non-increasing
    *certified* ``value`` (an upper bound on delta), ``value(lo) > target >= value(hi)``:
    :func:`narrow_bracket` picks the start, :func:`least_feasible` (the core's certified
    ``monotone_boundary``) finds the boundary to a relative step ``rtol``; returns
    ``(x_feasible, x_infeasible)``.

    With ``lower`` (the certified lower end of the same delta) the infeasible end is
    *confirmed*: if ``lower`` there does not exceed the target (the point lies in the
    floating-point band around the root), the neighbour one full step ``x·(1 − rtol)`` below
    and then further steps are tried, so that the returned neighbour certainly violates the
    target whenever floating point can tell (otherwise it is returned unconfirmed and the
    caller's printed lower end shows it)."""
    lo, hi, guess = narrow_bracket(value, target, lo, hi)
    x_ok, x_bad = least_feasible(lambda x: value(x) <= target, lo, hi, start=guess, rtol=rtol)
    if lower is not None and lower(x_bad) <= target:
        for j in range(1, 5):
            candidate = x_ok * (1.0 - j * rtol)
            if lower(candidate) > target:
                return x_ok, candidate
    return x_ok, x_bad


@dataclass(frozen=True)
class UsersAnswer:
    """Answer to "how many users for a target error": ``n`` meets the target (evaluated),
    ``n_failing`` (its neighbour on the other side, evaluated) does not, or ``None`` when the
    end of the range was reached. ``error_at_n`` / ``error_at_failing`` are the errors the
    forward computation printed there (``None`` where the protocol is not feasible)."""

    n: int
    n_failing: int | None
    error_at_n: float
    error_at_failing: float | None
    target: float
    relative: bool
    evaluations: int
    side: str  # "smallest" or "largest"

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def users_for_error(
    error_at: Callable[[int], float | None], target: float, *, relative: bool = False, low: int = 1,
    high: int = 10**12, largest: bool | None = None,
) -> tuple[UsersAnswer, UsersAnswer | None]:
    """The range of ``n`` in ``[low, high]`` whose error meets ``target``: its smallest and its
    largest end, each searched with the core's certified ``monotone_boundary`` over the
    integers and each verified against its neighbour outside the range.

    ``error_at(n)`` runs the forward computation (the protocol's solver at ``n`` users) and
    returns its error, or ``None`` when no parameters meet the privacy target at ``n``
    (raising :class:`CertificationError` counts the same). With ``relative`` the target is
    ``error/n``; the largest end is searched only if ``largest`` (default: for absolute
    targets; ``error/n`` falls with ``n``), else ``None`` is returned for it. Steps: the privacy floor (smallest feasible ``n``; more honest users never
    hurt privacy), then the smallest ``n`` meeting the error from there, then the largest
    (absolute errors of distributed noise *grow* slowly with ``n`` towards the central
    noise: with fewer users the per-user noise is capped, so both ends matter). The error is
    monotone in ``n`` only up to rounding (``ceil(gamma n)``, the solver's relative step), so
    each end is the boundary the search found, verified on both sides.

    Raises the core's ``NoBracket`` (a :class:`CertificationError`) when no ``n`` meets it.
    """
    seen: dict[int, float | None] = {}
    count = 0

    def err(n: int) -> float | None:
        nonlocal count
        if n not in seen:
            count += 1
            try:
                seen[n] = error_at(n)
            except CertificationError:
                seen[n] = None
        return seen[n]

    def feasible(x: float) -> bool:
        return err(int(x)) is not None

    def ok(x: float) -> bool:
        e = err(int(x))
        return e is not None and (e / int(x) if relative else e) <= target

    def answer(n: int, bad: int | None, side: str) -> UsersAnswer:
        e_n = err(n)
        if e_n is None or not ok(n):  # cannot happen: the search returns an evaluated feasible point
            raise CertificationError("internal check failed: the search returned an n that misses the target")
        return UsersAnswer(n, bad, e_n, None if bad is None else err(bad), target, relative, count, side)

    try:
        floor = monotone_boundary(feasible, float(low), feasible_side="high", low=float(low),
                                         high=float(high), integer=True)
    except NoBracket:
        raise NoBracket(f"no n in [{low}, {high:.4g}] meets the privacy target (checked up to {high:.4g})") \
            from None
    n_floor = int(floor.feasible)
    try:
        return _users_range(ok, answer, floor, n_floor, high, not relative if largest is None else largest)
    except NoBracket:
        scored = [((e / m if relative else e), m) for m, e in seen.items() if e is not None]
        best, at = min(scored)
        what = "error/n" if relative else "error"
        raise NoBracket(
            f"no n in [{n_floor}, {high:.4g}] meets the target {what} {target:g}: the least {what} seen is {best:.6g} "
            f"(at n = {at}; privacy floor n = {n_floor}, {len(seen)} values of n computed)") from None


def _users_range(ok: Callable[[float], bool], answer: Callable[[int, int | None, str], UsersAnswer],
                 floor: Any, n_floor: int, high: int, largest: bool) -> tuple[UsersAnswer, UsersAnswer | None]:
    """The two ends of :func:`users_for_error` above the privacy floor ``n_floor``."""
    if ok(n_floor):
        first = answer(n_floor, None if floor.infeasible is None else int(floor.infeasible), "smallest")
    else:
        up = monotone_boundary(ok, float(n_floor), feasible_side="high", low=float(n_floor),
                                      high=float(high), integer=True)
        first = answer(int(up.feasible), None if up.infeasible is None else int(up.infeasible), "smallest")
    if not largest:
        return first, None
    if ok(high):
        last = answer(high, None, "largest")
    else:
        down = monotone_boundary(ok, float(first.n), feasible_side="low", low=float(first.n),
                                        high=float(high), integer=True)
        last = answer(int(down.feasible), None if down.infeasible is None else int(down.infeasible), "largest")
    return first, last


def _dlap_solution(eps: float, target_delta: float, h: int, info: dict[str, Any], rtol: float) -> Solution:
    """Largest ``a`` (least noise) of ``DLap(a)`` meeting the target: the closed form
    ``a = ε + ln((1 + δe^{−ε})/(1 − δ))`` of :func:`dlap_delta`, stepped to the safe side."""
    a = eps + math.log1p(target_delta * math.exp(-eps)) - math.log1p(-target_delta)
    while dlap_delta(a, eps)[0] > target_delta:  # rounding allowance: step to the safe side
        a = fp.next_down(a * (1 - 1e-12))
    neighbor = a * (1 + rtol)
    law = NoiseLaw("dlap", size=1.0, a=a)
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
    target with ``⌈γn⌉`` honest users (e.g. binomial with ``p = 1/2``), or when the noise
    it needs is beyond the sizes at which the floating-point budgets were measured.
    """
    if family not in LAWS:
        raise InvalidParameter(f"law: {family!r} is not a noise law (accepted: {', '.join(LAWS)})")
    eps = EPSILON.check(eps, "eps")
    target_delta = DELTA.check(target_delta, "delta")
    h = honest_count(n, gamma)
    trials = check_int("trials", trials, high=10**6)
    log_inv_delta = -math.log(target_delta)
    info = {"honest_users": h, "n": n, "gamma": gamma, "eps": eps, "target_delta": target_delta}
    if family == "dlap":
        return _dlap_solution(eps, target_delta, h, info, rtol)
    if family == "binomial" and h * trials > fp.MAX_MEASURED_SIZE:
        raise CertificationError(
            f"honest users x trials = {h} x {trials} = {h * trials:.4g} noise draws exceed {fp.MAX_MEASURED_SIZE:g}, "
            "the largest binomial size at which the floating-point error was measured; use fewer --trials"
        )

    def fwd(x: float) -> float:
        return delta(honest_law(family, x, h, trials=trials, p=nb_p), eps).upper

    def fwd_lower(x: float) -> float:
        return delta(honest_law(family, x, h, trials=trials, p=nb_p), eps).lower

    if family == "binomial":
        top = 0.5
        if fwd(top) > target_delta:
            raise CertificationError(
                f"too few honest users: with {h} honest users (gamma*n) and {trials} Bernoulli(1/2) draw(s) each, "
                f"delta({eps:g}) = {fwd(top):.3g} > target {target_delta:g}; increase n, gamma, trials or the target"
            )
        # Pr[Z = 0] = (1-p)^N <= delta is necessary: a p below this is infeasible
        low = -math.expm1(-log_inv_delta / (h * trials)) * (1 - 1e-9)
        if low <= 0 or fwd(low) <= target_delta:
            low = 1e-300
        x, x_bad = secant_least(fwd, target_delta, low, top, rtol=rtol, lower=fwd_lower)
        name = "p (per-user Bernoulli probability)"
    else:
        if family == "negbin":
            nb_p = NB_P.check(nb_p)
        # Pr[Z = 0] <= delta is necessary: e^{-mu} or p^r
        zero = log_inv_delta if family == "poisson" else log_inv_delta / -math.log(nb_p)
        low, top = 0.999 * zero / h, 2.0 * zero / h
        while True:
            try:
                if fwd(top) <= target_delta:
                    break
            except CertificationError as exc:  # beyond the measured range of the law
                raise CertificationError(f"no {family} noise within the measured range reaches the target: {exc}") \
                    from None
            low, top = top, top * 4
        if fwd(low) <= target_delta:
            raise CertificationError("target met with (almost) no noise: the target is vacuous")
        x, x_bad = secant_least(fwd, target_delta, low, top, rtol=rtol, lower=fwd_lower)
        name = "per-user Poisson mean" if family == "poisson" else "per-user NB shape"
    law_ok = honest_law(family, x, h, trials=trials, p=nb_p)
    law_bad = honest_law(family, x_bad, h, trials=trials, p=nb_p)
    d_ok, d_bad = delta(law_ok, eps), delta(law_bad, eps)
    direction = "forward" if d_ok.forward_upper >= d_ok.backward_upper else "backward"
    binding = f"delta target ({direction} direction)"
    return Solution(name, x, x_bad, d_ok.upper, d_bad.lower, binding, law_ok, info)


def quantile_window(law: Law, tail: float) -> tuple[int, int]:
    """Integers ``(a, b)`` with ``Pr[Z < a] <= tail`` and ``Pr[Z > b] <= tail`` for a law on
    ``{0, 1, ...}``, found by bisection on ``cdf``/``sf`` (scipy's ``binom.isf`` returns ``N``
    for tiny tails, so quantile functions are not trusted here)."""
    mean, sd = law.mean(), math.sqrt(law.variance())

    def sf(x: float) -> float:
        return float(law.sf(x)[0])

    def cdf(x: float) -> float:
        return float(law.cdf(x)[0])

    hi = mean + 10 * sd + 10
    while sf(hi) > tail:
        hi = mean + 2 * (hi - mean) + 10
    lo_b, hi_b = math.floor(mean), math.ceil(min(hi, law.top))
    while hi_b - lo_b > 1:  # invariant: sf(hi_b) <= tail
        mid = (lo_b + hi_b) // 2
        if sf(mid) <= tail:
            hi_b = mid
        else:
            lo_b = mid
    b = hi_b
    if cdf(0) > tail:
        return 0, b
    lo_a, hi_a = 0, max(1, math.ceil(mean))  # invariant: cdf(lo_a) <= tail
    while hi_a - lo_a > 1:
        mid = (lo_a + hi_a) // 2
        if cdf(mid) <= tail:
            lo_a = mid
        else:
            hi_a = mid
    return lo_a + 1, b  # cdf(a - 1) = cdf(lo_a) <= tail


def pmf_range(law: NoiseLaw, a: int, b: int) -> tuple[np.ndarray, float]:
    """``(f(a), ..., f(b))`` and the relative error bound of every value.

    Short ranges use one Boost ``pmf`` at an anchor near the mean and the exact ratio
    recurrence ``f(k)/f(k−1)`` summed in log space (each step adds at most ``4u`` to the
    error of the log, so a value ``s`` steps from the anchor carries ``(4s + 2)u`` on top
    of the anchor's budget); longer ranges call ``pmf`` everywhere."""
    evaluated = law.law
    ks = np.arange(a, b + 1)
    if b - a > 5000:
        return np.asarray(evaluated.pmf(ks), dtype=float), evaluated.pmf_budget
    anchor = int(min(max(round(law.expectation), max(a, 0)), b))
    if law.family == "binomial":
        anchor = min(anchor, int(law.size))
    f_anchor = float(evaluated.pmf(anchor)[0])
    if f_anchor == 0.0 or anchor < a:
        return np.asarray(evaluated.pmf(ks), dtype=float), evaluated.pmf_budget
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
    steps = max(i0, len(ks) - 1 - i0)
    walked = np.abs(np.concatenate(([0.0], up, down)))
    log_scale = abs(math.log(f_anchor)) + float(np.max(walked[np.isfinite(walked)]))  # -inf: exact zeros
    # exp of a log carrying absolute error E has relative error about E; E <= (4·steps + 2)·u·scale
    return out, evaluated.pmf_budget + (4 * steps + 2) * fp.UNIT_ROUNDOFF * max(1.0, log_scale)


def privacy_loss_window(law: NoiseLaw, tail: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
    """The privacy-loss distribution of ``(Z+1, Z)`` on a window: support points ``k``
    (values of ``Z+1``), ``P(k) = f(k−1)``, ``Q(k) = f(k)``, the ``P``-mass left out, and the
    relative error bound of every ``P``/``Q`` value.

    Used for exact composition (histograms). ``Q(k) = 0`` gives an infinite loss, kept.
    """
    if law.family == "dlap":
        raise InvalidParameter("composition windows are implemented for binomial/poisson/negbin laws")
    evaluated = law.law
    # mean +- (12 sd + 10): outside mass is computed and returned (added by callers), so the
    # window need not be a tight quantile; widen until the outside mass is below ``tail``
    width = 12.0
    while True:
        spread = width * math.sqrt(law.variance) + 10
        lo = float(max(0, math.floor(law.expectation - spread)))
        hi = float(math.ceil(law.expectation + spread))
        if law.family == "binomial":
            hi = min(hi, law.size)
        outside = float(evaluated.cdf(lo - 2)[0]) + float(evaluated.sf(hi)[0])
        if outside <= tail or width > 200:
            break
        width *= 1.5
    if hi - lo > 2_000_000:
        raise CertificationError(f"composition window of {hi - lo:.3g} points is too large (limit 2e6)")
    k = np.arange(int(lo), int(hi) + 2)  # values of Z+1
    f, rel = pmf_range(law, int(lo) - 1, int(hi) + 1)  # f(lo-1) ... f(hi+1)
    p_k, q_k = f[:-1], f[1:]
    return k, p_k, q_k, outside * (1 + evaluated.budget), rel

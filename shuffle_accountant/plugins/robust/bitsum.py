"""Robust bit-sum protocols: published parameter rules beside exact accounting.

Protocols (every user holds ``x ∈ {0,1}``; ``h = ⌈γn⌉`` users are honest):

``lecture``
    Seed 001 (Stemmer, lecture 8, Theorem 2): each user sends ``x`` and one ``Bern(p)``
    bit, ``p = 48 ln(2/δ)/(ε² n)``, assuming ``ε <= 1`` and ``n ≫ ln(1/δ)/ε²``; the analyzer
    returns ``Σ − np``. The shuffled view is a post-processing of ``Σx + Bin(h, p)``.
``cheu2019``
    Cheu–Smith–Ullman–Zeber–Zhilyaev (EUROCRYPT'19, arXiv 1808.01394): randomized
    response; with probability ``w = λ/n`` a user replaces its bit by ``Bern(1/2)``.
    The published constant for ``λ`` could not be recovered from the seeds or the stored
    pages, so no rule is printed; the exact solver is offered instead (spec §B).
``bc20``
    Balcer–Cheu (ITC'20, arXiv 1911.06879): each user sends ``x + Bern(p)`` copies of 1,
    ``1 − p = 50 ln(2/δ)/(ε² n)`` for ``ε, δ <= 1`` and ``n >= 100 ln(2/δ)/ε²``; robust with
    ``n`` replaced by ``γn`` (seed 000, Claim A.5). The view is ``Σx + h − Bin(h, 1 − p)``.
    (The constants were read from a secondary summary of the paper, the repository
    abiswas3/differentialprivacy, ShufflePrivacy/Readme.md; the seed's formula was lost.)

Robust rules replace ``n`` by ``h = ⌈γn⌉`` (seed 000, Claim A.5 and Definition 2.9).
Accuracy is stated with all ``n`` users honest (seed 000, Section 2.3).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from ...plugin_api import (
    DELTA,
    EPSILON,
    USERS_RANGE,
    CertificationError,
    InvalidParameter,
    check_real,
    fp,
)
from .._shared.laws import Law
from .._shared.population import honest_count
from .._shared.records import RecordMixin
from .noise import NoiseLaw, delta, secant_least

PROTOCOLS = ("lecture", "cheu2019", "bc20")
#: Randomized response: windows of more points than this are summed in certified blocks.
RR_BLOCKS = 1024

CITATIONS = {
    "lecture": "Stemmer, lecture notes 'The Shuffle Model' (lecture 8), Theorem 2",
    "cheu2019": "Cheu-Smith-Ullman-Zeber-Zhilyaev, EUROCRYPT'19 (arXiv 1808.01394), randomized-response bit sum",
    "bc20": "Balcer-Cheu, ITC'20 (arXiv 1911.06879), binary-sum protocol; robust form: Balcer-Cheu-Joseph-Mao, "
            "SODA 2021 (arXiv 2004.09481), Claim A.5",
}


@dataclass(frozen=True)
class ProtocolPoint(RecordMixin):
    """One parameter choice for a bit-sum protocol and what it gives.

    ``delta_upper``/``delta_lower`` bracket the exact ``δ(ε)`` of the view with ``h`` honest
    users (equal up to rounding except for ``cheu2019``, where the lower end is the
    all-zero data set and the upper end the view in which the analyst also learns which
    users answered at random).
    """

    source: str  # "paper rule" or "exact solver"
    parameter: str
    value: float | None
    delta_upper: float | None
    delta_lower: float | None
    rmse: float | None
    messages_per_user: float | None
    messages_kind: str
    binding: str = ""
    note: str = ""


@dataclass(frozen=True)
class BitsumPlan:
    """Paper rule and exact solver, side by side, for one protocol and target."""

    protocol: str
    n: int
    gamma: float
    honest: int
    eps: float
    target_delta: float
    rule: ProtocolPoint
    exact: ProtocolPoint
    citation: str
    warnings: tuple[str, ...] = ()
    details: Mapping[str, Any] = field(default_factory=dict)
    necessary: ProtocolPoint | None = None  # cheu2019: certified lower bound on the least noise

    @property
    def noise_ratio(self) -> float | None:
        """How many times more noise (expected noise messages) the paper rule uses."""
        if self.rule.value is None or self.exact.value is None or self.exact.value == 0:
            return None
        return self.rule.value / self.exact.value

    def to_dict(self) -> dict[str, Any]:
        return {
            "protocol": self.protocol,
            "n": self.n,
            "gamma": self.gamma,
            "honest_users": self.honest,
            "eps": self.eps,
            "target_delta": self.target_delta,
            "rule": self.rule.to_dict(),
            "exact": self.exact.to_dict(),
            "noise_ratio_rule_over_exact": self.noise_ratio,
            "citation": self.citation,
            "warnings": list(self.warnings),
            "necessary": self.necessary.to_dict() if self.necessary is not None else None,
            **dict(self.details),
        }


# ---------------------------------------------------------------------------------
# Randomized response (Cheu et al. 2019): B + Bern(1 - w') vs B + Bern(w')
# ---------------------------------------------------------------------------------


def _mixture_tail_delta(m: np.ndarray, theta: float, wp: float, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Certified (upper, lower) δ of ``B + Bern(1−w')`` vs ``B + Bern(w')``, ``B ~ Bin(m, θ)``,
    both directions, vectorised over ``m``.

    With ``u(k) = b(k−1)/b(k) = k(1−θ)/((m−k+1)θ)`` (increasing in ``k``) the likelihood ratio
    is ``((1−w')u + w')/(w'u + 1 − w')``, increasing in ``u``: each hockey-stick set is a tail
    of ``k``, so ``δ`` is a combination of four binomial tail values (derived; tested
    against brute force in ``tests/test_robust_bitsum.py``).
    """
    m = np.asarray(m, dtype=float)
    t = math.exp(eps)
    eta = fp.binomial_budget(float(np.max(m, initial=1.0))) + 4 * fp.UNIT_ROUNDOFF  # + the two-term combinations
    up = np.zeros_like(m)
    lo = np.zeros_like(m)
    if (1 - wp) <= t * wp:  # the local randomizer itself is eps-DP
        return up, lo
    ustar = (t * (1 - wp) - wp) / ((1 - wp) - t * wp)
    # forward: k > tau,  tau = u*(m+1)θ / ((1−θ) + u*θ)
    tau = ustar * (m + 1) * theta / ((1 - theta) + ustar * theta)
    # backward: u < 1/u*  <=>  k < tau2
    u2 = 1.0 / ustar
    tau2 = u2 * (m + 1) * theta / ((1 - theta) + u2 * theta)
    base = np.floor(tau) + 1  # smallest k in the forward set; candidates base-1 .. base+1
    sf = [stats.binom.sf(base + j - 2, m, theta) for j in (-1, 0, 1, 2)]  # Pr[B >= base + j - 1]
    for j in range(3):
        s_prev, s_cur = sf[j], sf[j + 1]
        p_mass = (1 - wp) * s_prev + wp * s_cur
        q_mass = wp * s_prev + (1 - wp) * s_cur
        up = np.maximum(up, p_mass * (1 + eta) + fp.SMALLEST_NORMAL - t * q_mass * (1 - eta))
        lo = np.maximum(lo, p_mass * (1 - eta) - t * (q_mass * (1 + eta) + fp.SMALLEST_NORMAL))
    if theta == 0.5:  # k -> m+1-k swaps P and Q: both directions are equal
        return np.clip(up, 0.0, 1.0), np.clip(lo, 0.0, 1.0)
    top = np.ceil(tau2) - 1  # largest k in the backward set; candidates top-1 .. top+1
    cdf = [stats.binom.cdf(top + j - 1, m, theta) for j in (-1, 0, 1, 2)]  # Pr[B <= top + j - 1]
    for j in range(3):
        c_prev, c_cur = cdf[j], cdf[j + 1]
        q_mass = wp * c_prev + (1 - wp) * c_cur  # Q(K <= t2), K = B + Bern(w')
        p_mass = (1 - wp) * c_prev + wp * c_cur
        up = np.maximum(up, q_mass * (1 + eta) + fp.SMALLEST_NORMAL - t * p_mass * (1 - eta))
        lo = np.maximum(lo, q_mass * (1 - eta) - t * (p_mass * (1 + eta) + fp.SMALLEST_NORMAL))
    return np.clip(up, 0.0, 1.0), np.clip(lo, 0.0, 1.0)


def _lower_quantile(law: Law, tail: float) -> int:
    """The largest integer ``a >= 0`` with ``P[M < a] <= tail`` (bisection on the cdf)."""
    lo, hi = 0, max(1, math.ceil(law.mean()))  # P[M < 0] = 0 <= tail
    if float(law.cdf(hi - 1)[0]) <= tail:
        return hi
    while hi - lo > 1:  # invariant: P[M < lo] <= tail < P[M < hi]
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if float(law.cdf(mid - 1)[0]) <= tail else (lo, mid)
    return lo


def rr_delta(h: int, w: float, eps: float) -> tuple[float, float]:
    """Bracket on the exact ``δ(ε)`` of randomized response with ``h`` honest users, each
    replacing its bit by ``Bern(1/2)`` with probability ``w``.

    Upper end: the analyst also learns which other users answered at random (more
    information, so a valid upper bound): ``M ~ Bin(h−1, w)`` and, given ``M = m``,
    ``Bin(m, 1/2) + Bern(1 − w/2)`` vs ``Bin(m, 1/2) + Bern(w/2)``; the mass of ``M`` outside a
    window is added. Lower end: the data set where every other honest user holds 0,
    ``Bin(h−1, w/2) + Bern(1 − w/2)`` vs ``+ Bern(w/2)``, attained by a concrete input.
    """
    check_real("lambda/n (randomization probability)", w, low=0.0, high=1.0, low_open=True)
    wp = w / 2.0
    others = h - 1
    if others == 0:
        up, lo = _mixture_tail_delta(np.array([0.0]), 0.5, wp, eps)
        return float(up[0]), float(lo[0])
    law = Law("binomial", float(others), w)
    mean, sd = others * w, math.sqrt(others * w * (1 - w))
    eta = law.budget
    # the window starts where the lower tail (delta there <= 1) is negligible against delta
    # itself; above it, delta(m) <= delta(b) (see below), so the upper tail is one block
    a = min(_lower_quantile(law, 1e-3 * fp.MIN_PROBABILITY), max(0, math.floor(mean - 12 * sd - 10)))
    b = min(others, math.ceil(mean + 12 * sd + 10))
    outside = float(law.cdf(a - 1)[0]) * (1 + eta)
    if b < others:
        up_b, _ = _mixture_tail_delta(np.array([float(b + 1)]), 0.5, wp, eps)
        outside += float(law.sf(b)[0]) * (1 + eta) * float(up_b[0])
    if b - a < RR_BLOCKS:  # every m in the window
        ms = np.arange(a, b + 1, dtype=float)
        weights = law.pmf(ms)
        up_m, _ = _mixture_tail_delta(ms, 0.5, wp, eps)
        # weights carry the pmf budget; the products and the correctly rounded sum add 2u
        total = float(math.fsum(weights * up_m)) * (1 + law.pmf_budget + 2 * fp.UNIT_ROUNDOFF)
    else:
        # delta(m) is non-increasing in m (one more randomizer adds an independent Bern(1/2) to
        # both views: post-processing), so a block [s, e) contributes at most P(block) delta(s)
        starts = np.unique(np.linspace(a, b + 1, RR_BLOCKS + 1).astype(np.int64)).astype(float)
        lo_e, hi_e = starts[:-1], starts[1:] - 1
        up_m, _ = _mixture_tail_delta(lo_e, 0.5, wp, eps)
        c_hi, c_lo = law.cdf(hi_e), law.cdf(lo_e - 1)
        mass = np.maximum(c_hi - c_lo, 0.0)
        err = eta * (c_hi + c_lo) + fp.UNIT_ROUNDOFF * c_hi  # absolute, cancellation included
        total = float(math.fsum((mass + err) * up_m)) * (1 + 2 * fp.UNIT_ROUNDOFF)
    upper = fp.next_up(total + outside, 2)
    _, lower = _mixture_tail_delta(np.array([float(others)]), wp, wp, eps)
    return min(1.0, upper), float(lower[0])


# ---------------------------------------------------------------------------------
# The plan
# ---------------------------------------------------------------------------------


def _binomial_point(source: str, h: int, n: int, p: float, eps: float, protocol: str, binding: str = "",
                    note: str = "") -> ProtocolPoint:
    """Lecture (noise ``Bin(h, p)``) or BC20 (noise mirrored ``Bin(h, p)``, same δ)."""
    d = delta(NoiseLaw("binomial", size=float(h), p=p), eps)
    if protocol == "lecture":
        return ProtocolPoint(source, "p (noise bit probability)", p, d.upper, d.lower,
                             math.sqrt(n * p * (1 - p)), 2.0, "exact (every user sends 2 bits)", binding, note)
    keep = 1.0 - p  # BC20: each user sends x + Bern(keep) ones; missing probability p
    return ProtocolPoint(source, "1-p (BC20 missing probability)", p, d.upper, d.lower,
                         math.sqrt(n * p * (1 - p)), 1.0 + keep, "upper (x + Bern(p) messages, x=1)", binding, note)


def _rr_point(source: str, h: int, n: int, w: float, eps: float, binding: str = "", note: str = "") -> ProtocolPoint:
    up, lo = rr_delta(h, w, eps)
    wp = w / 2.0
    rmse = math.sqrt(n * wp * (1 - wp)) / (1 - w) if w < 1 else math.inf
    return ProtocolPoint(source, "lambda/n (randomization probability)", w, up, lo, rmse, 1.0,
                         "exact (one bit per user)", binding, note)


def rr_zero_delta(h: int, w: float, eps: float) -> tuple[float, float]:
    """Certified (upper, lower) of the exact ``δ(ε)`` of shuffled randomized response on one
    concrete data set: every other honest user holds 0 (the lower end of :func:`rr_delta`)."""
    check_real("lambda/n (randomization probability)", w, low=0.0, high=1.0, low_open=True)
    up, lo = _mixture_tail_delta(np.array([float(h - 1)]), w / 2.0, w / 2.0, eps)
    return float(up[0]), float(lo[0])


def _rr_necessary(h: int, n: int, eps: float, target_delta: float, rtol: float) -> ProtocolPoint | None:
    """The certified lower bound on the least randomization probability: the largest ``w``
    (to ``rtol``) at which the all-zero data set certainly violates the target. Since a
    larger ``w`` is a post-processing of a smaller one (each user's coin flip composes:
    ``1 − (1 − w₁)(1 − w₂)``), every ``w`` up to it violates too, so the least noise lies
    in ``(this, sufficient]``. ``None`` when even ``w = 1e-300`` is not certified to violate
    (e.g. a very large ``eps``): no lower bound above 0 is certified then."""

    def violates(w: float) -> bool:
        return rr_zero_delta(h, w, eps)[1] > target_delta

    if violates(1.0):  # cannot happen: with w = 1 both views are equal
        raise CertificationError("internal check failed: randomized response with w = 1 violates the target")
    if not violates(fp.MIN_PROBABILITY):
        return None
    _, w_bad = secant_least(lambda w: rr_zero_delta(h, w, eps)[1], target_delta, fp.MIN_PROBABILITY, 1.0,
                            rtol=rtol)
    up, lo = rr_zero_delta(h, w_bad, eps)
    wp = w_bad / 2.0
    rmse = math.sqrt(n * wp * (1 - wp)) / (1 - w_bad)
    return ProtocolPoint("necessary (all-zero data set violates below)", "lambda/n (randomization probability)",
                         w_bad, up, lo, rmse, 1.0, "exact (one bit per user)",
                         "delta of the all-zero data set > target",
                         f"at lambda/n = {w_bad:.8g} the all-zero data set has delta >= {lo:.8g} > target: "
                         "a lower bound on the least noise (the least noise is in (this, sufficient])")


def bitsum_plan(protocol: str, n: int, eps: float, target_delta: float, gamma: float = 1.0, *, rtol: float = 1e-6) -> BitsumPlan:
    """Paper-rule and exact-solver parameters for a robust bit sum.

    The exact solver returns the least noise whose certified ``δ(ε)`` with ``⌈γn⌉`` honest
    users meets the target; one relative step (``rtol``) less noise violates it. Raises
    :class:`CertificationError` when even the maximum noise cannot (e.g. ``γn`` too small).
    """
    if protocol not in PROTOCOLS:
        raise InvalidParameter(f"protocol: {protocol!r} is not a bit-sum protocol (accepted: {', '.join(PROTOCOLS)})")
    n = USERS_RANGE.check(n, "n")
    eps = EPSILON.check(eps, "eps")
    target_delta = DELTA.check(target_delta, "delta")
    h = honest_count(n, gamma)
    warnings: list[str] = []
    necessary: ProtocolPoint | None = None
    log_term = math.log(2.0) - math.log(target_delta)

    if protocol in ("lecture", "bc20"):
        def fwd(p: float) -> float:
            return delta(NoiseLaw("binomial", size=float(h), p=p), eps).upper

        if fwd(0.5) > target_delta:
            raise CertificationError(
                f"gamma*n too small: {h} honest users give delta({eps:g}) = {fwd(0.5):.3g} > {target_delta:g} "
                "even with the most noise (p = 1/2); increase n or gamma, or relax (eps, delta)"
            )
        low = -math.expm1(math.log(target_delta) / h) * (1 - 1e-9)  # (1-p)^h > delta: infeasible
        if low <= 0 or fwd(low) <= target_delta:
            low = 1e-300
        p_ex, p_bad = secant_least(fwd, target_delta, low, 0.5, rtol=rtol,
                                    lower=lambda p: delta(NoiseLaw("binomial", size=float(h), p=p), eps).lower)
        exact = _binomial_point("exact solver", h, n, p_ex, eps, protocol, "delta target",
                                f"one step less noise ({p_bad:.8g}) gives delta > target")
        if protocol == "lecture":
            p_rule = 48.0 * log_term / eps / eps / h  # inf, not an error, for tiny eps
            cond = []
            if eps > 1:
                cond.append("eps > 1 (the rule assumes eps <= 1)")
            if p_rule > 1:
                rule = ProtocolPoint("paper rule", "p (noise bit probability)", None, None, None, None, None, "",
                                     note=f"rule gives p = {p_rule:.4g} > 1: n too small for the rule")
            else:
                rule = _binomial_point("paper rule", h, n, p_rule, eps, protocol, "p = 48 ln(2/delta)/(eps^2 gamma n)",
                                       "; ".join(cond))
        else:
            q_rule = 50.0 * log_term / eps / eps / h
            cond = []
            if eps > 1 or target_delta > 1:
                cond.append("eps > 1 (the rule assumes eps, delta <= 1)")
            if h < 100.0 * log_term / eps / eps:
                cond.append(f"gamma*n = {h} < 100 ln(2/delta)/eps^2 = {100 * log_term / eps / eps:.4g} (rule's requirement)")
            if q_rule >= 1:
                rule = ProtocolPoint("paper rule", "1-p (BC20 missing probability)", None, None, None, None, None, "",
                                     note=f"rule gives 1-p = {q_rule:.4g} >= 1: n too small for the rule")
            else:
                rule = _binomial_point("paper rule", h, n, q_rule, eps, protocol, "1-p = 50 ln(2/delta)/(eps^2 gamma n)",
                                       "; ".join(cond))
        warnings += [c for c in (rule.note,) if c]
    else:
        def fwd_rr(w: float) -> float:
            return rr_delta(h, w, eps)[0]

        if fwd_rr(1.0) > target_delta:
            raise CertificationError(
                f"gamma*n too small: with {h} honest users answering at random (w = 1) the certified "
                f"delta({eps:g}) = {fwd_rr(1.0):.3g} > {target_delta:g}; increase n or gamma, or relax (eps, delta)"
            )
        # the necessary bound is cheap (one data set) and brackets the search from below: where
        # a concrete data set violates, the certified upper end does too
        necessary = _rr_necessary(h, n, eps, target_delta, rtol)
        low = fp.MIN_PROBABILITY if necessary is None or necessary.value is None else float(necessary.value)
        if fwd_rr(low) <= target_delta:  # (almost) no randomization needed
            exact = _rr_point("sufficient (solver on the certified upper end)", h, n, low, eps,
                              "delta target (certified upper end)",
                              f"lambda/n = {low:.3g} already meets the target: an upper bound on the least noise")
        else:
            top = min(1.0, 2.0 * low)
            while fwd_rr(top) > target_delta:
                low, top = top, min(1.0, 2.0 * top)
            w_ex, w_bad = secant_least(fwd_rr, target_delta, low, top, rtol=rtol)
            exact = _rr_point("sufficient (solver on the certified upper end)", h, n, w_ex, eps,
                              "delta target (certified upper end)",
                              f"one step less noise ({w_bad:.8g}) gives certified upper end > target; "
                              "an upper bound on the least noise")
        rule = ProtocolPoint("paper rule", "lambda/n (randomization probability)", None, None, None, None, None, "",
                             note=("Cheu et al.'s constant for lambda was not recoverable offline; not printed "
                                   "(spec: never invent a constant)"))
    return BitsumPlan(protocol, n, gamma, h, eps, target_delta, rule, exact, CITATIONS[protocol], tuple(warnings),
                      necessary=necessary)

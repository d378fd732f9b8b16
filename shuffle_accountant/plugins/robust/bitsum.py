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
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np
from scipy import stats

from ...errors import CertificationError, InvalidParameter
from ...validation import check_int, check_positive, check_probability_open, check_real
from .noise import RELATIVE_ERROR, NoiseLaw, RecordMixin, bisect_least, delta, honest_count

PROTOCOLS = ("lecture", "cheu2019", "bc20")

CITATIONS = {
    "lecture": "Stemmer, shuffle-model lecture notes (seed 001), Theorem 2",
    "cheu2019": "Cheu-Smith-Ullman-Zeber-Zhilyaev, EUROCRYPT'19 (arXiv 1808.01394), randomized-response bit sum",
    "bc20": "Balcer-Cheu, ITC'20 (arXiv 1911.06879), binary-sum protocol; robust form: seed 000 Claim A.5",
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
    eta = RELATIVE_ERROR
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
        up = np.maximum(up, p_mass * (1 + eta) - t * q_mass * (1 - eta))
        lo = np.maximum(lo, p_mass * (1 - eta) - t * q_mass * (1 + eta))
    if theta == 0.5:  # k -> m+1-k swaps P and Q: both directions are equal
        return np.clip(up, 0.0, 1.0), np.clip(lo, 0.0, 1.0)
    top = np.ceil(tau2) - 1  # largest k in the backward set; candidates top-1 .. top+1
    cdf = [stats.binom.cdf(top + j - 1, m, theta) for j in (-1, 0, 1, 2)]  # Pr[B <= top + j - 1]
    for j in range(3):
        c_prev, c_cur = cdf[j], cdf[j + 1]
        q_mass = wp * c_prev + (1 - wp) * c_cur  # Q(K <= t2), K = B + Bern(w')
        p_mass = (1 - wp) * c_prev + wp * c_cur
        up = np.maximum(up, q_mass * (1 + eta) - t * p_mass * (1 - eta))
        lo = np.maximum(lo, q_mass * (1 - eta) - t * p_mass * (1 + eta))
    return np.clip(up, 0.0, 1.0), np.clip(lo, 0.0, 1.0)


def rr_delta(h: int, w: float, eps: float) -> tuple[float, float]:
    """Bracket on the exact ``δ(ε)`` of randomized response with ``h`` honest users, each
    replacing its bit by ``Bern(1/2)`` with probability ``w``.

    Upper end: the analyst also learns which other users answered at random (more
    information, so a valid upper bound): ``M ~ Bin(h−1, w)`` and, given ``M = m``,
    ``Bin(m, 1/2) + Bern(1 − w/2)`` vs ``Bin(m, 1/2) + Bern(w/2)``; the mass of ``M`` outside a
    window is added. Lower end: the data set where every other honest user holds 0,
    ``Bin(h−1, w/2) + Bern(1 − w/2)`` vs ``+ Bern(w/2)``, attained by a concrete input.
    """
    check_real("w", w, low=0.0, high=1.0, low_open=True)
    wp = w / 2.0
    others = h - 1
    if others == 0:
        up, lo = _mixture_tail_delta(np.array([0.0]), 0.5, wp, eps)
        return float(up[0]), float(lo[0])
    rv = stats.binom(others, w)
    mean, sd = others * w, math.sqrt(others * w * (1 - w))
    a, b = max(0, math.floor(mean - 12 * sd - 10)), min(others, math.ceil(mean + 12 * sd + 10))  # outside mass is added
    if b - a > 5_000_000:
        raise CertificationError(f"randomized-response window of {b - a} points is too large")
    ms = np.arange(a, b + 1, dtype=float)
    weights = rv.pmf(ms)
    up_m, _ = _mixture_tail_delta(ms, 0.5, wp, eps)
    outside = float(rv.cdf(a - 1)) + float(rv.sf(b))
    upper = float(math.fsum(weights * up_m)) * (1 + 1e-12) + outside
    _, lower = _mixture_tail_delta(np.array([float(others)]), wp, wp, eps)
    return min(1.0, upper), float(lower[0])


# ---------------------------------------------------------------------------------
# The plan
# ---------------------------------------------------------------------------------


def _binomial_point(source: str, h: int, n: int, p: float, eps: float, protocol: str, binding: str = "", note: str = "") -> ProtocolPoint:
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


def bitsum_plan(protocol: str, n: int, eps: float, target_delta: float, gamma: float = 1.0, *, rtol: float = 1e-6) -> BitsumPlan:
    """Paper-rule and exact-solver parameters for a robust bit sum.

    The exact solver returns the least noise whose certified ``δ(ε)`` with ``⌈γn⌉`` honest
    users meets the target; one relative step (``rtol``) less noise violates it. Raises
    :class:`CertificationError` when even the maximum noise cannot (e.g. ``γn`` too small).
    """
    if protocol not in PROTOCOLS:
        raise InvalidParameter(f"protocol must be one of {', '.join(PROTOCOLS)}, got {protocol!r}")
    n = check_int("n", n)
    eps = check_positive("eps", eps)
    target_delta = check_probability_open("delta", target_delta)
    h = honest_count(n, gamma)
    warnings: list[str] = []
    log_term = math.log(2.0 / target_delta)

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
        p_ex, p_bad = bisect_least(lambda p: fwd(p) <= target_delta, low, 0.5, rtol=rtol)
        exact = _binomial_point("exact solver", h, n, p_ex, eps, protocol, "delta target",
                                f"one step less noise ({p_bad:.8g}) gives delta > target")
        if protocol == "lecture":
            p_rule = 48.0 * log_term / (eps**2 * h)
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
            q_rule = 50.0 * log_term / (eps**2 * h)
            cond = []
            if eps > 1 or target_delta > 1:
                cond.append("eps > 1 (the rule assumes eps, delta <= 1)")
            if h < 100.0 * log_term / eps**2:
                cond.append(f"gamma*n = {h} < 100 ln(2/delta)/eps^2 = {100 * log_term / eps**2:.4g} (rule's requirement)")
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
        low = min(0.5, math.log(1 / target_delta) / h)
        while low > 1e-300 and fwd_rr(low) <= target_delta:
            low /= 4
        w_ex, w_bad = bisect_least(lambda w: fwd_rr(w) <= target_delta, low, 1.0, rtol=rtol)
        exact = _rr_point("exact solver", h, n, w_ex, eps, "delta target (certified upper end)",
                          f"one step less noise ({w_bad:.8g}) gives certified delta > target")
        rule = ProtocolPoint("paper rule", "lambda/n (randomization probability)", None, None, None, None, None, "",
                             note="Cheu et al.'s constant for lambda was not recoverable offline; not printed (spec: never invent a constant)")
    return BitsumPlan(protocol, n, gamma, h, eps, target_delta, rule, exact, CITATIONS[protocol], tuple(warnings))

"""Pure-DP histograms in the shuffle model by one counting protocol per bucket
(Ghazi, Kumar, Manurangsi, "Pure-DP aggregation in the shuffle model: error-optimal and
communication-efficient", arXiv 2305.17634, Corollary 4; the per-bucket reduction is
Ghazi, Golowich, Kumar, Manurangsi, Pagh, Velingker, "Pure differentially private
summation from anonymous messages", ITC 2020, arXiv 2002.01919, Appendix A).

Protocol: every user runs the counting protocol of :mod:`.count` once for each of the
``k`` buckets (input 1 for the bucket it holds, 0 for the others), each run with target
``ε/2``; messages carry the bucket label. The analyzer estimates bucket ``b`` by the sum of
the messages labelled ``b`` (Algorithm 2 of the paper, one run per bucket).

Privacy (Corollary 4's reduction, exact): a user moving from bucket ``a`` to ``b`` changes
the input of runs ``a`` (1 → 0) and ``b`` (0 → 1) only; the runs are independent, so the
log-ratio of the two views is a sum of the two runs' log-ratios and the max-divergence of
the histogram is ``d∞(1‖0) + d∞(0‖1)`` of one run (both directions, every run has the same
parameters), at most ``ε/2 + ε/2`` by Lemma 8. The windowed check prints that sum.

Error (derived here, not in the paper): bucket ``b``'s error is ``N_b − D_b`` with
``N_b ~ DLap(ε′)`` independent and ``D_b ~ Bin(h_b, q)`` (dropped inputs). For every data
set, ``E max_b |N_b| <= E‖error‖∞ <= E max_b |N_b| + nq`` (lower: a symmetric unimodal law
puts the most mass on the centred window, so ``P(|N_b − d| <= t) <= P(|N_b| <= t)`` for every
shift; upper: ``max_b D_b <= Σ_b D_b`` and ``E Σ_b D_b <= nq``). ``E max_b |N_b|`` over ``k``
i.i.d. discrete Laplace laws is a convergent tail sum, evaluated with a bound on the tail.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ...plugin_api import USERS_RANGE, CertificationError, IntRange, fp
from .count import EPSILON, PureParams, VerifyResult, plan, verify

CITATION = ("Ghazi, Kumar, Manurangsi, 'Pure-DP aggregation in the shuffle model: error-optimal and "
            "communication-efficient' (arXiv 2305.17634), Corollary 4; per-bucket reduction: Ghazi, Golowich, "
            "Kumar, Manurangsi, Pagh, Velingker, ITC 2020 (arXiv 2002.01919), Appendix A")
#: Number of buckets: 2 <= k <= 1e9 (each user takes part in k runs).
BUCKETS = IntRange("k", 2, 10**9)


def expected_max_abs_dlap(a: float, k: int) -> tuple[float, float]:
    """Bracket ``(lower, upper)`` on ``E max_{b<=k} |N_b|`` for i.i.d. ``N_b`` with pmf
    ``∝ e^{−a|i|}``: ``Σ_{t>=0} P(max > t) = Σ_t [1 − (1 − p_t)^k]`` with
    ``p_t = P(|N| > t) = 2e^{−a(t+1)}/(1 + e^{−a})``. Terms are summed while they matter; the
    rest is bounded by ``k Σ_{t>=T} p_t`` (geometric), added to the upper end. Each term is
    computed as ``−expm1(k log1p(−p_t))`` (no cancellation) and charged 16 ulps."""
    if not a > 0 or k < 1:
        raise ValueError("need a > 0 and k >= 1")
    r = math.exp(-a)
    c = 2.0 / (1.0 + r)
    total = 0.0
    t = 0
    limit = 50_000_000
    while True:
        p = c * math.exp(-a * (t + 1))
        if p <= 0.0:
            tail = 0.0
            break
        term = -math.expm1(k * math.log1p(-p)) if p < 1.0 else 1.0
        total += term
        t += 1
        # remaining sum <= k * sum_{u >= t} p_u = k * c e^{-a(t+1)} / (1 - r)
        tail = k * c * math.exp(-a * (t + 1)) / (-math.expm1(-a))
        if tail <= 1e-15 * total:
            break
        if t > limit:
            raise CertificationError(f"E max |DLap| needs more than {limit:.0e} terms at a = {a:.3g}: eps' too small")
    slack = 16 * fp.UNIT_ROUNDOFF * (t + 1) * total
    return max(0.0, total - slack), total + slack + tail


@dataclass(frozen=True)
class HistogramPlan:
    """One counting run per bucket at ``ε/2`` (Corollary 4)."""

    eps: float
    n: int
    k: int
    rho: float
    bucket: PureParams

    @property
    def linf_bracket(self) -> tuple[float, float]:
        """``(lower, upper)`` on the expected ℓ∞ error, valid for every data set."""
        lo, hi = expected_max_abs_dlap(self.bucket.eps_prime, self.k)
        return lo, hi + self.bucket.q * self.n

    @property
    def linf_noise_only(self) -> tuple[float, float]:
        """Bracket on ``E max_b |N_b|`` alone (the error if no input were dropped)."""
        return expected_max_abs_dlap(self.bucket.eps_prime, self.k)

    @property
    def bucket_mse_bound(self) -> float:
        """Lemma 11 for one bucket (any data set): ``Var(DLap(ε′)) + qn + q²n(n−1)``."""
        return self.bucket.mse_bound

    def expected_messages(self) -> float:
        """Exact expected messages of one user: one run with input 1, ``k − 1`` with input 0."""
        return self.bucket.expected_messages(1) + (self.k - 1) * self.bucket.expected_messages(0)

    def check(self) -> tuple[float, float, VerifyResult]:
        """Windowed max-divergence of the histogram (a check): ``d∞(1‖0) + d∞(0‖1)`` of one
        run, and its rounding allowance (twice the run's)."""
        v = verify(self.bucket)
        return v.divergence_1_0 + v.divergence_0_1, 2.0 * v.rounding_allowance, v

    def to_dict(self) -> dict[str, Any]:
        lo, hi = self.linf_bracket
        return {"eps": self.eps, "n": self.n, "k": self.k, "rho": self.rho, "bucket_eps": self.bucket.eps,
                "bucket": self.bucket.to_dict(), "linf_lower": lo, "linf_upper": hi,
                "bucket_mse_bound": self.bucket_mse_bound, "expected_messages": self.expected_messages()}


def histogram(eps: float, n: int, k: int, rho: float = 0.5, rule: str = "optimiser") -> HistogramPlan:
    """Corollary 4's protocol: the counting plan (``rule``: ``optimiser`` or ``theorem6``) at
    ``ε/2`` for each of ``k`` buckets."""
    eps = EPSILON.check(eps, "eps")
    n = USERS_RANGE.check(n, "n")
    k = BUCKETS.check(k)
    return HistogramPlan(eps, n, k, rho, plan(eps / 2.0, n, rho, rule))


__all__ = ["BUCKETS", "CITATION", "HistogramPlan", "expected_max_abs_dlap", "histogram"]

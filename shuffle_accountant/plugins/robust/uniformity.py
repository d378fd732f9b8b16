"""Robust shuffle-private uniformity testing: privacy, certified error, sample size, floors.

The protocol is the robust shuffle-private uniformity tester of Balcer, Cheu, Joseph, Mao,
"Connecting Robust Shuffle Privacy and Pan-Privacy" (SODA 2021, arXiv 2004.09481), §4.1:
the users (implicitly) run one robust bit-sum counter per domain element, the analyzer
de-biases the counts and compares a collision (χ²-style) statistic with a threshold
(Theorem 4.2, after Amin, Joseph, Mao, COLT 2020 and Cai, Daskalakis, Kamath, ICML 2017),
optionally after the domain compression of §4.1.2 (Lemma 4.7 / Theorem 4.8: users map
their sample to one of ``k'`` random groups chosen with public randomness).

What the paper's text lost, and what is computed instead (docs/robust_uniformity_pan.md):

* The paper's noise parameters and its sample-complexity expressions (Theorems 4.2, 4.8)
  were lost in the text conversion; the stored arXiv pages give only the abstract's
  ``Õ(k^{2/3})`` dependence on ``k``. No constant is invented: the counters here are the
  lecture bit-sum counters (each user sends one ``Bern(p)`` noise message per group), and
  ``p`` is solved exactly by the project's robust histogram accounting
  (:func:`.structures.histogram`, two counters composed, ``⌈γn⌉`` honest users). The
  tester's output is a post-processing of that histogram, so it has the same ``(ε, δ)``.
* The error is *certified* for this instantiation (all users honest, ``n`` i.i.d. samples,
  no Poissonization): the exact mean and a proved upper bound on the variance of the
  statistic (derived here, tested by exact enumeration and simulation) give one-sided
  Chebyshev (Cantelli) bounds on both error probabilities; the random partition's loss of
  distance is bounded the same way, from the exact second moment of the compressed
  distance over random balanced partitions (*derived*). ``α`` is the total-variation
  distance, so ``‖p − u‖₂² >= 4α²/k``.
* Floors: two explicit lower bounds derived here for *every* tester (Paninski's paired
  perturbation with an exact χ² bound; group privacy plus a coupling for every
  ``(ε, δ)``-DP tester), and the paper's Theorem 4.11 (robust *pure* shuffle privacy), whose
  recoverable content is the ``Ω(k^{2/3})`` dependence only (shown "up to constants").

Statistic (``ĉ_j`` = messages in group ``j`` minus the noise mean ``Np``, ``q`` = the
groups' masses under the uniform distribution, ``s₂`` = noise variance):
``T = Σ_j (ĉ_j² − ĉ_j − s₂) − 2(n−1) Σ_j q_j ĉ_j + n(n−1)‖q‖²``, unbiased for
``n(n−1)‖p_G − q‖²``; the tester says "far" when ``T > t``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import lru_cache
from statistics import NormalDist
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...plugin_api import (
    DELTA,
    EPSILON,
    USERS_RANGE,
    CertificationError,
    IntRange,
    InvalidParameter,
    check_real,
)
from .._shared.records import RecordMixin
from . import structures
from .noise import least_feasible

CITATION = "Balcer, Cheu, Joseph, Mao, SODA 2021 (arXiv 2004.09481)"
#: Domain size of the tester: at least 2 elements.
DOMAIN = IntRange("k", 2, 10**9)
#: Default error probability on each side (Definition 4.1's constant separation 2/3).
DEFAULT_BETA = 1.0 / 3.0
_THETAS = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
_SAFETY = 1.0 + 1e-9  # relative slack for rounding in the variance sums (all terms of one sign or tiny)


def check_alpha(alpha: float, k: int) -> float:
    """``0 < α <= 1`` and at most ``1 − 1/k`` (no distribution on ``k`` points is farther
    from uniform in total variation)."""
    a = check_real("alpha", alpha, low=0.0, high=1.0, low_open=True)
    if a > 1.0 - 1.0 / k:
        raise InvalidParameter(
            f"alpha: {a:g} is out of range for k = {k} (accepted: 0 < alpha <= 1 - 1/k = {1 - 1 / k:g}; no distribution "
            "on k points is farther from uniform in total variation)"
        )
    return a


def check_beta(beta: float) -> float:
    return check_real("beta", beta, low=0.0, high=0.5, low_open=True, high_open=True)


# ---------------------------------------------------------------------------------
# Groups (domain compression) and noise moments
# ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Groups(RecordMixin):
    """A balanced partition of ``[k]`` into ``kp`` groups (sizes ``⌊k/kp⌋`` or ``⌈k/kp⌉``) and
    the facts the bounds need: ``q`` = group masses under the uniform distribution.

    ``pi2, pi3, pi4``: probabilities, over a uniformly random balanced partition, that two
    given elements share a group, that three do, and that two given disjoint pairs are
    each within one group. ``w`` bounds ``Var(D_G)/Δ²`` (see :func:`partition_failure`).
    """

    k: int
    kp: int
    c: float  # ‖q‖²
    q_max: float
    r: float  # ‖q − 1/kp‖₂
    sum_2q1: float  # Σ (2 q_j − 1)²
    zeta_uu: float  # tr(Cov_U²) = ‖q‖² − 2Σq³ + ‖q‖⁴
    pi2: float
    pi3: float
    pi4: float
    w: float


@lru_cache(maxsize=4096)
def groups(k: int, kp: int) -> Groups:
    """Facts of the balanced partition of ``[k]`` into ``kp`` groups (``kp = k``: no compression)."""
    small, big_count = divmod(k, kp)
    sizes = [(small + 1, big_count), (small, kp - big_count)]
    sizes = [(s, m) for s, m in sizes if m > 0]
    c = sum(m * (s / k) ** 2 for s, m in sizes)
    c3 = sum(m * (s / k) ** 3 for s, m in sizes)
    q_max = max(s for s, _ in sizes) / k
    r = math.sqrt(sum(m * (s / k - 1 / kp) ** 2 for s, m in sizes))
    sum_2q1 = sum(m * (2 * s / k - 1) ** 2 for s, m in sizes)
    f2 = sum(m * s * (s - 1) for s, m in sizes)
    f3 = sum(m * s * (s - 1) * (s - 2) for s, m in sizes)
    f4 = sum(m * s * (s - 1) * (s - 2) * (s - 3) for s, m in sizes)
    sq2 = sum(m * (s * (s - 1)) ** 2 for s, m in sizes)
    pi2 = f2 / (k * (k - 1))
    pi3 = f3 / (k * (k - 1) * (k - 2)) if k >= 3 else 0.0
    pi4 = (f2 * f2 - sq2 + f4) / (k * (k - 1) * (k - 2) * (k - 3)) if k >= 4 else 0.0
    # Var(D_G)/Δ² = 2π2(1−s) + π3(8s−4) + π4(3−6s) − π2², linear in s = Σd⁴/Δ² ∈ [1/k, 1]
    def var_ratio(s: float) -> float:
        return 2 * pi2 * (1 - s) + pi3 * (8 * s - 4) + pi4 * (3 - 6 * s) - pi2 * pi2
    w = 0.0 if kp == k else max(0.0, var_ratio(1.0 / k), var_ratio(1.0))
    return Groups(k, kp, c, q_max, r, sum_2q1, c - 2 * c3 + c * c, pi2, pi3, pi4, w)


def partition_failure(g: Groups, theta: float) -> float:
    """Upper bound on ``Pr[D_G < θ(1 − π₂)Δ]`` over the random partition, for every ``p`` with
    ``‖p − u‖₂² = Δ`` (*derived*): ``E D_G = (1 − π₂)Δ`` exactly and ``Var D_G <= wΔ²``,
    so Cantelli gives ``w / (w + (1 − θ)²(1 − π₂)²)``; 0 without compression."""
    if g.kp == g.k:
        return 0.0
    gap = (1 - theta) * (1 - g.pi2)
    return g.w / (g.w + gap * gap)


@dataclass(frozen=True)
class NoiseMoments:
    """Central moments of one counter's noise ``Z ~ Bin(N, p)`` (all users honest)."""

    s2: float
    m3: float
    m4_minus_s2sq: float  # E W⁴ − s2², without cancellation

    @classmethod
    def binomial(cls, trials: float, p: float) -> NoiseMoments:
        pq = p * (1.0 - p)
        s2 = trials * pq
        return cls(s2, s2 * (1.0 - 2.0 * p), 2.0 * s2 * s2 + s2 * (1.0 - 6.0 * pq))


def _noise_terms(n: float, g: Groups, nm: NoiseMoments, sum_var_counts: float, sum_bias_sq: float) -> float:
    """``Var B + Var C + 2 Cov(B, C)``: the noise part of ``Var T``."""
    return (nm.s2 * (4.0 * sum_var_counts + sum_bias_sq) + g.kp * nm.m4_minus_s2sq
            + 2.0 * nm.m3 * (2.0 - g.kp))


def null_variance(n: int, g: Groups, nm: NoiseMoments) -> float:
    """Exact ``Var T`` when all ``n`` samples are uniform (``E T = 0``)."""
    data = 2.0 * n * (n - 1) * g.zeta_uu  # 4 C(n,2) ζ_UU
    return data + _noise_terms(n, g, nm, n * (1.0 - g.c), g.sum_2q1)


def far_variance_bound(n_d: int, n_u: int, big_d: float, g: Groups, nm: NoiseMoments) -> float:
    """Upper bound on ``Var T`` when ``n_d`` samples come from ``p`` with ``‖p_G − q‖₂² = D``
    and ``n_u`` from the uniform distribution (``E T = n_d(n_d − 1)D``), valid for every such
    ``p`` (*derived*, docs/robust_uniformity_pan.md). Of the form ``a + b√D + cD + eD^{3/2}``
    with ``b, c, e >= 0``, so the Cantelli error bound is largest at the smallest ``D``."""
    n = n_d + n_u
    pairs_dd = n_d * (n_d - 1) / 2.0
    trip_d = n_d * (n_d - 1.0) * (n_d - 2.0)
    sq = math.sqrt(big_d)
    zeta_dd = g.c + 2 * g.r * sq + big_d * (1 + 2 * g.q_max) + 2 * big_d * sq
    zeta_du = g.q_max * (1 + big_d)
    zeta_uu = g.zeta_uu
    v_d = g.q_max * big_d + big_d * sq
    v_u = g.q_max * big_d
    data = 4.0 * (pairs_dd * zeta_dd + n_d * n_u * zeta_du + n_u * (n_u - 1) / 2.0 * zeta_uu
                  + trip_d * v_d + n_u * n_d * (n_d - 1.0) * v_u)
    noise = _noise_terms(n, g, nm, n * (1.0 - 1.0 / g.kp), g.sum_2q1 + 4.0 * n_d * n_d * big_d + 8.0 * n_d * g.r * sq)
    return max(0.0, data + noise) * _SAFETY


# ---------------------------------------------------------------------------------
# Exact mean and variance for a given distribution (tests, forward checks)
# ---------------------------------------------------------------------------------


def exact_moments(
    samples: Sequence[tuple[int, np.ndarray]], q: np.ndarray, nm: NoiseMoments
) -> tuple[float, float]:
    """Exact ``(E T, Var T)`` when ``n_a`` samples come from distribution ``p_a`` (over the
    groups) for each ``(n_a, p_a)`` in ``samples``, all independent, with noise moments ``nm``.

    ``T_data = Σ_{a≠b} φ(x_a, x_b)``, ``φ(x, y) = ⟨e_x − q, e_y − q⟩`` (a U-statistic):
    ``Var = 4[Σ_pairs ζ₂ + Σ_{pairs sharing one sample} ζ₁]``; plus the noise terms."""
    q = np.asarray(q, dtype=float)
    kp = len(q)
    mus = [np.asarray(p, dtype=float) - q for _, p in samples]
    ps = [np.asarray(p, dtype=float) for _, p in samples]
    ns = [int(m) for m, _ in samples]
    n = sum(ns)
    cq = float(q @ q)

    def tr_mm(a: int, b: int) -> float:
        pa, pb = ps[a], ps[b]
        diag = float(pa @ pb)
        cross = float(pa @ (-2 * pb * q + q * q)) + float(pb @ (-2 * pa * q + q * q))
        qa, qb = float(q @ pa), float(q @ pb)
        rr = 2 * qa * qb + 2 * cq * float(pa @ pb) - 2 * cq * qa - 2 * cq * qb + cq * cq
        return diag + cross + rr

    mean = 0.0
    var_pairs = 0.0
    t = len(samples)
    for a in range(t):
        for b in range(t):
            npairs = ns[a] * (ns[b] - (1 if a == b else 0))  # ordered
            inner = float(mus[a] @ mus[b])
            mean += npairs * inner
            var_pairs += npairs / 2.0 * (tr_mm(a, b) - inner * inner)
    var_cov = 0.0
    for a in range(t):
        pa = ps[a]
        for b in range(t):
            for c in range(t):
                nb = ns[b] - (1 if b == a else 0)
                nc = ns[c] - (1 if c == a else 0)
                count = ns[a] * (nb * nc - (nb if b == c else 0))
                if count <= 0:
                    continue
                cov = float(pa @ (mus[b] * mus[c])) - float(pa @ mus[b]) * float(pa @ mus[c])
                var_cov += count * cov
    var_data = 4.0 * (var_pairs + var_cov)
    # counts: Σ_j Var c_j and the squared biases of the noise coefficients
    sum_var = sum(m * float(p @ (1 - p)) for m, p in zip(ns, ps))
    ec = sum(m * p for m, p in zip(ns, ps))
    bias = 2 * ec - 1 - 2 * (n - 1) * q
    g_stub = Groups(kp, kp, cq, float(q.max()), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    return mean, var_data + _noise_terms(n, g_stub, nm, sum_var, float(bias @ bias))


def statistic(c_hat: np.ndarray, q: np.ndarray, n: int, s2: float) -> np.ndarray:
    """The analyzer's statistic from de-biased counts ``ĉ`` (last axis = groups)."""
    c_hat = np.asarray(c_hat, dtype=float)
    return (np.sum(c_hat * c_hat - c_hat - s2, axis=-1) - 2.0 * (n - 1) * (c_hat @ q)
            + n * (n - 1.0) * float(q @ q))


# ---------------------------------------------------------------------------------
# Error bounds of one design
# ---------------------------------------------------------------------------------


def _cantelli(var: float, gap: float) -> float:
    """One-sided Chebyshev: ``Pr[X − EX >= gap] <= var/(var + gap²)`` (1 when ``gap <= 0``)."""
    if gap <= 0:
        return 1.0
    return var / (var + gap * gap)


@dataclass(frozen=True)
class ErrorBounds(RecordMixin):
    """Certified error probabilities of one design (threshold ``t``)."""

    kp: int
    theta: float
    threshold: float
    d_min: float  # smallest ‖p_G − q‖² of an α-far p, except on the partition failure event
    null_var: float
    far_var: float
    null_error: float  # Pr["far" | uniform] <= this
    far_stat_error: float  # Pr["uniform" | far, good partition] <= this
    partition_failure: float
    far_error: float  # total, far side
    null_error_normal: float  # normal approximation (estimate)
    far_error_normal: float  # normal approximation (estimate)


def _normal_tail(z: float) -> float:
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def _bounds_for(n_d: int, n_u: int, g: Groups, nm: NoiseMoments, alpha: float, theta: float,
                threshold: float | None) -> ErrorBounds:
    """Error bounds of one design; ``threshold=None`` balances the two sides."""
    n = n_d + n_u
    k = g.k
    shrink = 1.0 if g.kp == k else theta * (1 - g.pi2)
    d_min = shrink * 4.0 * alpha * alpha / k
    rho = partition_failure(g, theta) if g.kp != k else 0.0
    v0 = null_variance(n, g, nm) * _SAFETY
    v1 = far_variance_bound(n_d, n_u, d_min, g, nm)
    signal = n_d * (n_d - 1.0) * d_min
    if threshold is None:
        lo, hi = 0.0, max(signal, 0.0)
        for _ in range(200):  # balance Pr0(t) (decreasing) against rho + Pr1(t) (increasing)
            mid = 0.5 * (lo + hi)
            if _cantelli(v0, mid) > rho + _cantelli(v1, signal - mid):
                lo = mid
            else:
                hi = mid
            if hi - lo <= 1e-12 * max(hi, 1.0):
                break
        threshold = hi
    p0 = _cantelli(v0, threshold)
    p1 = _cantelli(v1, signal - threshold)
    est0 = _normal_tail(threshold / math.sqrt(v0)) if v0 > 0 else 0.0
    est1 = _normal_tail((signal - threshold) / math.sqrt(v1)) if v1 > 0 else 0.0
    return ErrorBounds(g.kp, float(theta) if g.kp != k else 1.0, float(threshold), float(d_min), float(v0), float(v1),
                       float(p0), float(p1), float(rho), float(min(1.0, rho + p1)), float(est0), float(min(1.0, rho + est1)))


def _candidate_groups(k: int, groups_fixed: int | None) -> list[int]:
    if groups_fixed is not None:
        return [groups_fixed]
    if k <= 64:
        return list(range(2, k + 1))
    grid = np.unique(np.round(np.geomspace(2, k, 72)).astype(np.int64))
    return sorted({int(x) for x in grid} | {k})


def _cantelli_quantile(b: float) -> float:
    """``κ`` with ``1/(1 + κ²) = b``: Cantelli's one-sided deviation for error ``b``."""
    return math.sqrt((1 - b) / b)


def _normal_quantile(b: float) -> float:
    """``z`` with ``Pr[N(0,1) > z] = b`` (normal approximation, estimate only)."""
    return NormalDist().inv_cdf(1.0 - b)


def _feasible_margin(n_d: int, n_u: int, g: Groups, nm: NoiseMoments, alpha: float, beta: float,
                     quantile: Any = _cantelli_quantile) -> tuple[float, float]:
    """Largest ``signal − (κ(β)√V0 + κ(β−ρ)√V1)`` over θ (positive: the design with threshold
    ``κ(β)√V0`` meets error ``β`` on both sides), and the θ attaining it. ``quantile`` is
    Cantelli's ``κ`` (certified) or the normal quantile (estimate)."""
    kappa0 = quantile(beta)
    n = n_d + n_u
    v0 = null_variance(n, g, nm) * _SAFETY
    best = (-math.inf, 1.0)
    thetas = [1.0] if g.kp == g.k else list(_THETAS)
    for theta in thetas:
        rho = partition_failure(g, theta) if g.kp != g.k else 0.0
        b1 = beta - rho
        if b1 <= 0:
            continue
        d_min = (1.0 if g.kp == g.k else theta * (1 - g.pi2)) * 4.0 * alpha * alpha / g.k
        v1 = far_variance_bound(n_d, n_u, d_min, g, nm)
        margin = n_d * (n_d - 1.0) * d_min - kappa0 * math.sqrt(v0) - quantile(b1) * math.sqrt(v1)
        if margin > best[0]:
            best = (margin, theta)
    return best


# ---------------------------------------------------------------------------------
# The tester at a given n, and the planner
# ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class TesterResult(RecordMixin):
    """Privacy and certified error of the robust uniformity tester at ``n`` users."""

    k: int
    n: int
    n_stream: int  # samples from the tested distribution (n, or n/3 for the pan-private conversion)
    alpha: float
    eps: float
    delta_target: float
    gamma: float
    honest: int
    beta: float
    groups: int
    p: float  # per-user, per-group noise probability
    delta_upper: float  # two-counter composition at eps
    delta_lower: float
    errors: ErrorBounds
    messages_per_user: float
    meets_target: bool
    details: Mapping[str, Any] = field(default_factory=dict)


@lru_cache(maxsize=512)
def calibrate(n: int, eps: float, delta: float, gamma: float, kp: int = 2) -> structures.HistogramResult:
    """Noise calibration through the robust histogram accounting (two counters composed, exact;
    the noise does not depend on the number of groups ``kp``, which only sets the reported
    error and messages). Cached: the planner's searches revisit the same ``n``."""
    return structures.histogram(kp, n, eps, delta, gamma=gamma)


def _check_common(k: int, alpha: float, eps: float, delta: float, beta: float) -> tuple[int, float, float, float, float]:
    k = DOMAIN.check(k)
    return k, check_alpha(alpha, k), EPSILON.check(eps, "eps"), DELTA.check(delta, "delta"), check_beta(beta)


def _check_groups(groups_fixed: int | None, k: int) -> int | None:
    if groups_fixed is None:
        return None
    return IntRange("groups", 2, k).check(groups_fixed)


#: Honest fraction of the pan-private conversion (Lemma 4.9 / Algorithm 6): the state always
#: holds the ``m`` dummy executions made before the stream, out of ``n = 3m``.
PAN_GAMMA = 1.0 / 3.0


def _split(n: int, pan: bool) -> tuple[int, int]:
    """(samples from the tested distribution, uniform dummy samples); ``pan``: ``n = 3m``."""
    if pan:
        if n % 3:
            raise InvalidParameter(f"n: {n} is not a multiple of 3 (the pan-private conversion runs 3m executions)")
        return n // 3, 2 * (n // 3)
    return n, 0


def tester(n: int, k: int, alpha: float, eps: float, delta: float, *, gamma: float = 1.0, beta: float = DEFAULT_BETA,
           groups_fixed: int | None = None, pan: bool = False) -> TesterResult:
    """The tester at ``n`` users: noise solved for ``(ε, δ)`` with ``⌈γn⌉`` honest users, the
    group count (and partition slack θ) minimising the larger error, the balanced threshold.

    ``pan=True`` is the pan-private tester of Lemma 4.9 (Algorithm 6): ``n = 3m`` executions,
    ``m`` stream samples and ``2m`` uniform dummies, privacy with ``γ = 1/3``."""
    k, alpha, eps, delta, beta = _check_common(k, alpha, eps, delta, beta)
    n = USERS_RANGE.check(n, "n")
    groups_fixed = _check_groups(groups_fixed, k)
    gamma = PAN_GAMMA if pan else gamma
    n_d, n_u = _split(n, pan)
    if n_d < 2:
        raise CertificationError(f"n = {n} leaves {n_d} tested samples; the collision statistic needs at least 2")
    cal = calibrate(n, eps, delta, gamma)
    nm = NoiseMoments.binomial(n, cal.law.p)
    best: ErrorBounds | None = None
    for kp in _candidate_groups(k, groups_fixed):
        g = groups(k, kp)
        for theta in ([1.0] if kp == k else list(_THETAS)):
            eb = _bounds_for(n_d, n_u, g, nm, alpha, theta, None)
            if best is None or max(eb.null_error, eb.far_error) < max(best.null_error, best.far_error):
                best = eb
    assert best is not None
    final = calibrate(n, eps, delta, gamma, best.kp)
    return TesterResult(k, n, n_d, alpha, eps, delta, gamma, final.honest, beta, best.kp, final.law.p, final.delta_upper,
                        final.delta_lower, best, 1.0 + best.kp * final.law.p,
                        max(best.null_error, best.far_error) <= beta,
                        {"noise_law_all_honest": f"Bin({n}, {final.law.p:.6g}) per group",
                         "noise_law_honest": final.law.describe(), "uniform_dummies": n_u})


def _meets(n: int, k: int, alpha: float, eps: float, delta: float, gamma: float, beta: float,
           groups_fixed: int | None, pan: bool, quantile: Any = _cantelli_quantile) -> tuple[bool, int, float]:
    """Forward check at ``n``: is there a design (groups, θ, threshold ``κ(β)√V0``) with both
    certified errors at most β? Returns (ok, groups, θ)."""
    gamma = PAN_GAMMA if pan else gamma
    n_d, n_u = _split(n, pan)
    if n_d < 2:
        return False, 0, 0.0
    try:
        cal = calibrate(n, eps, delta, gamma)
    except CertificationError:  # too few honest users for any noise
        return False, 0, 0.0
    nm = NoiseMoments.binomial(n, cal.law.p)
    best = (-math.inf, 0, 0.0)
    for kp in _candidate_groups(k, groups_fixed):
        margin, theta = _feasible_margin(n_d, n_u, groups(k, kp), nm, alpha, beta, quantile)
        if margin > best[0]:
            best = (margin, kp, float(theta))
    return bool(best[0] > 0), best[1], best[2]


@dataclass(frozen=True)
class PlanResult(RecordMixin):
    """Smallest ``n`` certified by the forward computation, with the check one below."""

    n: int
    groups: int
    theta: float
    at_n: TesterResult
    below_ok: bool  # the forward check at n − 1 (False: n is the smallest certified)
    evaluations: int
    details: Mapping[str, Any] = field(default_factory=dict)


def _least_n(meets: Any, lo: int, start: int, n_max: int, what: str) -> int:
    """Smallest ``n`` in ``(lo, n_max]`` where the forward check ``meets`` holds: geometric steps
    up from ``start`` to a feasible end, then the core's certified integer search."""
    hi = min(n_max, max(lo + 1, start))
    while not meets(hi):
        lo = hi
        if hi >= n_max:
            raise CertificationError(f"no n <= {n_max:g} meets the target ({what})")
        hi = min(n_max, 4 * hi)
    if hi == lo + 1:
        return hi
    n_ok, _ = least_feasible(lambda x: meets(int(x)), lo, hi, start=max(lo + 1, hi // 2), integer=True)
    return int(n_ok)


def smallest_n(k: int, alpha: float, eps: float, delta: float, *, gamma: float = 1.0, beta: float = DEFAULT_BETA,
               groups_fixed: int | None = None, pan: bool = False, n_max: int = 10**11) -> PlanResult:
    """Smallest ``n`` at which the tester's certified errors are at most ``β`` on both sides,
    found by the core's certified integer search and re-verified: ``n`` meets the target and
    ``n − 1`` does not (forward computation at both). The same search under the normal
    approximation (an *estimate*, not certified) is in ``details["n_normal_estimate"]``."""
    k, alpha, eps, delta, beta = _check_common(k, alpha, eps, delta, beta)
    groups_fixed = _check_groups(groups_fixed, k)
    calls = 0

    scale = 3 if pan else 1  # pan: the searched number is the stream length m, n = 3m

    def check(x: int, quantile: Any = _cantelli_quantile) -> tuple[bool, int, float]:
        return _meets(scale * x, k, alpha, eps, delta, gamma, beta, groups_fixed, pan, quantile)

    def meets(x: int, quantile: Any = _cantelli_quantile) -> bool:
        nonlocal calls
        calls += 1
        return check(x, quantile)[0]

    lo = 1  # fails: the statistic needs two tested samples
    start = max(lo + 1, int(min(float(n_max), 4 * math.sqrt(k) / alpha / alpha)) // scale)
    try:
        x_ok = _least_n(meets, lo, start, n_max // scale,
                        f"alpha = {alpha:g}, eps = {eps:g}, delta = {delta:g}, beta = {beta:g}")
    except CertificationError as exc:
        try:  # say why when the privacy calibration itself is what fails
            calibrate(min(n_max, 10**9), eps, delta, PAN_GAMMA if pan else gamma)
        except CertificationError as why:
            raise CertificationError(f"{exc}; the robust histogram accounting says: {why}") from None
        raise
    good, kp, theta = check(x_ok)
    below, _, _ = check(x_ok - 1)
    if not good:
        raise CertificationError("internal check failed: the search's answer does not meet the target when re-evaluated")
    x_est = _least_n(lambda x: meets(x, _normal_quantile), lo, max(lo + 1, x_ok // 4), x_ok, "normal approximation")
    at = tester(scale * x_ok, k, alpha, eps, delta, gamma=gamma, beta=beta, groups_fixed=kp, pan=pan)
    return PlanResult(scale * x_ok, kp, theta, at, below, calls,
                      {"search": "least_feasible over monotone_boundary (integer)", "n_normal_estimate": scale * x_est,
                       "stream_length": x_ok if pan else None})


# ---------------------------------------------------------------------------------
# Floors
# ---------------------------------------------------------------------------------


def paninski_floor(k: int, alpha: float, beta: float = DEFAULT_BETA) -> int | None:
    """Smallest ``n`` not excluded by Paninski's paired perturbation (*derived*, any tester,
    private or not): with ``m = ⌊k/2⌋`` pairs perturbed by ``±c/k`` (``c = αk/m``, TV exactly
    ``α``), ``χ²(mixture^n ‖ u^n) <= cosh(2c²n/k)^m − 1`` and a tester with both errors at
    most ``β`` needs ``TV >= 1 − 2β``, ``TV <= √χ²/2``. So every ``n`` below
    ``(k/(2c²))·arccosh((1 + 4(1−2β)²)^{1/m})`` is impossible. ``None`` when ``c > 1``
    (the construction needs ``α <= m/k``)."""
    m = k // 2
    c = alpha * k / m
    if c > 1.0:
        return None
    target = math.log1p(4.0 * (1 - 2 * beta) ** 2) / m  # log of cosh(...) needed
    x = math.acosh(math.exp(target)) if target > 1e-12 else math.sqrt(2 * target)
    bound = k / (2 * c * c) * x
    # every n < bound is impossible; the floor is the smallest integer not excluded
    n = max(1, math.ceil(bound * (1 - 1e-12)))
    while n > 1 and _paninski_excluded(n - 1, k, m, c, beta) is False:
        n -= 1
    while _paninski_excluded(n, k, m, c, beta):
        n += 1
    return n


def _paninski_excluded(n: int, k: int, m: int, c: float, beta: float) -> bool:
    """True when ``n`` samples certainly cannot test (the χ² bound keeps TV below ``1 − 2β``)."""
    chi2 = math.expm1(m * math.log(math.cosh(2 * c * c * n / k))) if 2 * c * c * n / k < 700 else math.inf
    return 0.5 * math.sqrt(chi2) < (1 - 2 * beta) * (1 - 1e-12)


def dp_floor(alpha: float, eps: float, delta: float, beta: float = DEFAULT_BETA) -> int:
    """Smallest ``n`` not excluded by group privacy (*derived*, every ``(ε, δ)``-DP tester,
    hence every shuffle protocol whose view is DP when all users are honest): couple ``u^n``
    with ``p^n`` (TV ``α``) so that ``H ~ Bin(n, α)`` samples differ; then
    ``Pr_p[far] <= e^{εh}β + δ(e^{εh} − 1)/(e^ε − 1) + Pr[H > h]`` for every ``h``, which must be
    at least ``1 − β``. Returns the least ``n`` for which no ``h`` excludes it."""
    from scipy import stats

    hmax = max(0, int(math.floor(math.log((1 - beta) / beta) / eps)))
    em1 = math.expm1(eps)

    def excluded(n: int) -> bool:
        for h in range(0, min(hmax, n) + 1):
            group_delta = delta * math.expm1(eps * h) / em1 if h else 0.0
            tail = float(stats.binom.sf(h, n, alpha))
            if math.exp(eps * h) * beta + group_delta + tail < (1 - beta) * (1 - 1e-12):
                return True
        return False

    n = 1
    while excluded(n):  # monotone: the tail grows with n; the floor is small (about log(1/(2β))/α)
        n = n * 2
    lo, hi = n // 2, n  # excluded(lo) or lo == 0; not excluded(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if excluded(mid):
            lo = mid
        else:
            hi = mid
    return max(1, hi)


def paper_floor_k_only(k: int) -> float:
    """``k^{2/3}``: the recoverable content of Theorem 4.11 (robust *pure* shuffle privacy;
    the abstract's ``Ω(k^{2/3})``). Its ``α``/``ε`` factors and constant were lost in the text
    conversion, so this is a floor *up to constants* in ``k`` alone."""
    return float(k) ** (2.0 / 3.0)

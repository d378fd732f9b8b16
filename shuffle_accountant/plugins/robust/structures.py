"""Histograms, the pan-private counter and distinct elements, built on the noise laws.

* Histograms (seed 001, last section; seed 000 §5): one counter per domain element, each
  a bit sum with its own noise; one user moves at most two counters (one down, one up),
  so the histogram's privacy is the *composition* of the pairs ``(Z+1, Z)`` and
  ``(Z, Z+1)``, computed exactly here from the privacy-loss distribution on a window
  (truncated mass added to δ) rather than by doubling.
* Pan-private counter (seed 000, Theorem 5.1 and the proof of Lemma 3.7): binomial noise
  ``Z₁`` enters the state before the stream and ``Z₂`` is added before the output. An
  intrusion sees ``Z₁ + partial count``; if the differing element arrives after the
  intrusion, the output reveals it through ``Z₂`` only; the output alone carries
  ``Z₁ + Z₂``. Pan-privacy is the worse of the state and the post-intrusion guarantees.
* Distinct elements (seed 000, Theorem 3.3, Lemma 3.5; spec §B): per element ``j`` the
  central answer is ``Bern(1/2)`` if some user holds ``j`` and ``Bern(p)`` otherwise; each
  user not holding ``j`` sends ``Bern(p′)`` into a mod-2 sum (split and mix over ``Z₂``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
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
    RealRange,
    check_real,
    fp,
)
from .._shared.laws import Law
from .._shared.population import honest_count
from .._shared.records import RecordMixin
from .._shared.secure_sum import bbgn_messages, check_sigma
from .noise import (
    ELEMENTARY,
    NoiseLaw,
    delta,
    privacy_loss_window,
    quantile_window,
    secant_least,
    solve_noise,
)

#: Domain size of a histogram: ``2 <= k <= 1e9``.
DOMAIN = IntRange("k", 2, 10**9)

# ---------------------------------------------------------------------------------
# Exact two-counter composition
# ---------------------------------------------------------------------------------


def two_counter_delta(law: NoiseLaw, eps: float, *, tail: float = 1e-20) -> tuple[float, float]:
    """Certified (upper, lower) δ(ε) of ``(Z+1, Z) ⊗ (Z, Z+1)``: one user leaving one
    counter and joining another (both directions are equal: swapping the counters maps
    one to the other).

    Privacy-loss method: with ``ℓ₁`` the losses of the first pair and ``ℓ₂`` of the second,
    ``δ = Σ_i P₁(i) Σ_{j: ℓ₂(j) > ε−ℓ₁(i)} P₂(j) − e^ε Q₁(i) Σ_{…} Q₂(j)``, computed with sorted
    prefix sums; ``P``-mass outside the window is added to the upper end.
    """
    _, p1, q1, out, rel = privacy_loss_window(law, tail)
    p2, q2 = q1, p1  # second pair is the first with P and Q swapped
    with np.errstate(divide="ignore"):
        l1 = np.log(p1) - np.log(q1)
        l2 = np.log(p2) - np.log(q2)
    keep1 = p1 > 0
    l1, p1s, q1s = l1[keep1], p1[keep1], q1[keep1]
    order = np.argsort(-l2)
    l2s, p2s, q2s = l2[order], p2[order], q2[order]
    cp = np.concatenate(([0.0], np.cumsum(p2s)))
    cq = np.concatenate(([0.0], np.cumsum(q2s)))
    t = math.exp(eps)
    # number of j with l2 > eps - l1   (l2s descending)
    thresh = eps - l1
    counts = np.searchsorted(-l2s, -thresh, side="left")
    terms = p1s * cp[counts] - t * q1s * cq[counts]
    terms = np.clip(terms, 0.0, None)
    raw = float(np.sum(terms))
    sel_p = float(np.sum(p1s * cp[counts]))
    sel_q = float(np.sum(q1s * cq[counts]))
    # every P/Q value carries relative error ``rel``; products of two, prefix sums and the
    # final sum over w terms add at most (2 rel + 3 w u) relative to the selected masses
    w = len(p1s) + len(p2s)
    margin = (2 * rel + 3 * w * fp.UNIT_ROUNDOFF) * (sel_p + t * sel_q) + w * fp.SMALLEST_NORMAL
    out_total = 2 * out
    return min(1.0, fp.next_up(raw + margin + out_total)), max(0.0, fp.next_down(raw - margin))


@dataclass(frozen=True)
class HistogramResult(RecordMixin):
    """Exact privacy and error of a k-bin histogram of independent counters."""

    k: int
    n: int
    honest: int
    eps: float
    law: NoiseLaw
    delta_upper: float
    delta_lower: float
    single_counter_delta: float
    naive_doubling_delta: float
    linf_error: float
    messages_per_user: float
    messages_worst: int
    details: Mapping[str, Any] = field(default_factory=dict)


def expected_max(values: np.ndarray, probs: np.ndarray, m: int, rel: float, beyond: float = 0.0) -> tuple[float, float]:
    """Certified ``(lower, upper)`` of ``E[max of m i.i.d. copies]`` of a law on the
    non-negative ``values`` with ``probs`` (each with relative error at most ``rel``) plus an
    unknown mass ``beyond`` above the largest value (counted at that value for the upper end):

    ``E max = Σ_i (v_i − v_{i−1})·(1 − (1 − G_i)^m)``, ``v_0 = 0``, ``G_i = P[V >= v_i]``.

    The tails ``G_i`` are summed from the top (positive terms: relative error at most
    ``rel + len·u``, no cancellation), and ``1 − (1 − G)^m = −expm1(m·log1p(−G))`` is
    well-conditioned, so each term, hence the sum, keeps that relative error."""
    order = np.argsort(values)
    v, f = values[order].astype(float), probs[order].astype(float)
    tails = np.cumsum(f[::-1])[::-1]  # G_i without the mass beyond
    prev_v = np.concatenate(([0.0], v[:-1]))
    width = v - prev_v

    def total(g: np.ndarray) -> float:
        g = np.clip(g, 0.0, 1.0)
        with np.errstate(divide="ignore"):
            hit = -np.expm1(m * np.log1p(-g))
        hit[g >= 1.0] = 1.0
        return float(math.fsum(width * hit))

    err = rel + (len(v) + 8) * fp.UNIT_ROUNDOFF
    upper = total(tails * (1 + err) + beyond) * (1 + 4 * fp.UNIT_ROUNDOFF)
    lower = total(tails * (1 - err)) * (1 - 4 * fp.UNIT_ROUNDOFF)
    return fp.next_down(max(lower, 0.0)), fp.next_up(upper)


def expected_max_deviation(law: NoiseLaw, k: int, *, tail: float = 1e-18) -> float:
    """``E[max_j |Z_j − E Z|]`` over ``k`` i.i.d. copies (an upper bound), from the law of
    ``|Z − EZ|`` on a window (:func:`expected_max`); beyond the window the deviation is
    bounded by ``k·Pr[outside]·(window edge + tail mean)``, added."""
    rv = law.law
    a, b = quantile_window(rv, tail)
    zs = np.arange(a, b + 1)
    dev = np.abs(zs - law.expectation)
    outside = (float(rv.cdf(a - 1)[0]) + float(rv.sf(b)[0])) * (1 + rv.budget)
    _, main = expected_max(dev, rv.pmf(zs), k, rv.pmf_budget)
    tail_term = min(1.0, k * outside) * (float(np.max(dev)) + 10 * math.sqrt(law.variance) + 10)
    return fp.next_up(main + tail_term)


def bc20_linf_error(n: int, k: int, q: float) -> dict[str, Any]:
    """Expected ℓ∞ error of Balcer–Cheu's histogram analyzer (ITC 2020, arXiv 1911.06879,
    the "zero-in-zero-out" binary-sum analyzer run on every bin), all ``n`` users honest.

    Bin ``j`` receives ``c_j + n − B_j`` messages, ``B_j ~ Bin(n, q)`` (``q`` = missing
    probability); the analyzer outputs ``|y_j| − n(1 − q)`` if ``|y_j| > n`` and 0 otherwise.
    So an empty bin is estimated exactly (0: the error does not grow with ``k``), and a bin
    with ``c_j > 0`` has error ``nq − B_j`` if ``B_j < c_j`` and ``−c_j`` otherwise. In both
    cases ``|err_j| <= W_j = max(B_j, nq)`` (*derived*), and at most ``min(k, n)`` bins are
    non-empty, so ``E max_j |err_j| <= E max_{j <= min(k, n)} W_j`` for every data set:
    the ``upper`` value. The ``lower`` value is the exact expected error of one concrete
    data set (``m`` bins of ``c`` users each, the rest in one more bin, ``c`` chosen near
    ``nq`` to make the zeroing bias bite), so the worst case lies between the two.
    """
    law = Law("binomial", float(n), q)
    nq = n * q
    a, b = quantile_window(law, 1e-30)
    bs = np.arange(a, b + 1, dtype=float)
    f = law.pmf(bs)
    m_upper = min(k, n)
    # beyond the window W <= B: the upper tail counted at the edge, plus E[(max B - edge)_+]
    above = float(law.sf(b)[0]) * (1 + law.budget)
    _, upper = expected_max(np.maximum(bs, nq), f, m_upper, law.pmf_budget, beyond=above + float(law.cdf(a - 1)[0]))
    tail = m_upper * math.sqrt(nq * (1 - q) + nq * nq + nq) * math.sqrt(above)  # Cauchy-Schwarz on E[B; B > b]
    upper = fp.next_up(upper + tail)
    best = (0.0, 1, 0)
    sd = math.sqrt(max(nq * (1 - q), 1e-12))
    for c in sorted({max(1, round(nq + z * sd)) for z in np.linspace(-1.0, 4.0, 26)}):
        m_bins = min(k - 1, n // c)
        if m_bins < 1:
            continue
        err = np.where(bs < c, np.abs(nq - bs), float(c))
        value, _ = expected_max(err, f, m_bins, law.pmf_budget)
        if value > best[0]:
            best = (value, c, m_bins)
    lower, c_star, m_star = best
    return {"upper": upper, "lower": lower, "worst_data": {"bins": m_star, "users_per_bin": c_star},
            "noise_mean_nq": nq, "empty_bin_error": 0.0, "nonempty_bins_at_most": m_upper}


def histogram(
    k: int, n: int, eps: float, target_delta: float | None = None, *, gamma: float = 1.0,
    p: float | None = None, protocol: str = "lecture",
) -> HistogramResult:
    """A k-bin histogram from one bit-sum counter per element (``lecture`` or ``bc20``).

    If ``p`` is omitted it is solved exactly for the *composed* two-counter target
    ``(ε, δ)``; otherwise the given per-user noise probability is analysed. The ℓ∞ error,
    with all ``n`` users honest, is that of each protocol's own analyzer: ``lecture``
    subtracts the noise mean from every bin, ``E max_j |noise_j − mean|`` over ``k`` bins;
    ``bc20`` zeroes bins that received at most ``n`` messages (:func:`bc20_linf_error`),
    an upper bound over all data sets that does not grow with ``k`` beyond ``n``, with the
    attained error of one data set in ``details``.
    """
    k = DOMAIN.check(k)
    n = USERS_RANGE.check(n, "n")
    eps = EPSILON.check(eps, "eps")
    if protocol not in ("lecture", "bc20"):
        raise InvalidParameter(f"protocol: {protocol!r} is not a histogram protocol (accepted: lecture, bc20)")
    h = honest_count(n, gamma)
    if p is None:
        if target_delta is None:
            raise InvalidParameter("give either --delta (to solve p) or --p (to analyse it)")
        target_delta = DELTA.check(target_delta, "delta")

        def fwd(x: float) -> float:
            return two_counter_delta(NoiseLaw("binomial", size=float(h), p=x), eps)[0]

        if fwd(0.5) > target_delta:
            raise CertificationError(
                f"gamma*n too small: {h} honest users with p = 1/2 give a two-counter delta({eps:g}) = "
                f"{fwd(0.5):.3g} > {target_delta:g}; increase n or gamma, or relax (eps, delta)"
            )
        single = solve_noise("binomial", n, eps, target_delta, gamma=gamma).value  # one counter
        top = min(0.5, 4 * single)
        if fwd(top) > target_delta:
            top = 0.5
        p, p_bad = secant_least(fwd, target_delta, single * 0.999, top, rtol=1e-6,
                                lower=lambda x: two_counter_delta(NoiseLaw("binomial", size=float(h), p=x), eps)[1])
        if fwd(single * 0.999) <= target_delta:  # composition is never cheaper than one counter
            raise CertificationError("internal check failed: two counters cheaper than one")
        solved = {"solved_p": p, "infeasible_neighbor": p_bad}
    else:
        p = check_real("p", p, low=0.0, high=1.0, low_open=True, high_open=True)
        solved = {}
    law = NoiseLaw("binomial", size=float(h), p=p)
    up, lo = two_counter_delta(law, eps)
    single_d = delta(law, eps)
    half = delta(law, eps / 2).upper  # naive: each counter at eps/2 composes to (eps, 2*delta(eps/2))
    extra: dict[str, Any] = {}
    if protocol == "bc20":
        bc = bc20_linf_error(n, k, p)
        err = bc["upper"]
        extra = {"linf_error_attained": bc["lower"], "linf_error_model": "bc20 zero-in-zero-out analyzer", **bc}
    else:
        err = expected_max_deviation(NoiseLaw("binomial", size=float(n), p=p), k)
        extra = {"linf_error_model": "noise mean subtracted from every bin"}
    keep = 1 - p if protocol == "bc20" else p
    msgs = 1 + k * keep
    return HistogramResult(k, n, h, eps, law, up, lo, single_d.upper, min(1.0, 2 * half), err, msgs, k + 1,
                           {"protocol": protocol, "gamma": gamma, **solved, **extra})


# ---------------------------------------------------------------------------------
# Pan-private counter
# ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class PanPrivateResult(RecordMixin):
    """Separate guarantees for an intrusion into the state and for the output."""

    n: int
    p: float
    eps: float
    state_delta: float  # intrusion: Z1
    increment_delta: float  # element after the intrusion, seen through Z2
    output_delta: float  # output alone: Z1 + Z2
    pan_delta: float  # worse of state and increment
    rmse: float
    details: Mapping[str, Any] = field(default_factory=dict)


def pan_counter(n: int, eps: float, target_delta: float | None = None, *, p: float | None = None,
                trials: int | None = None) -> PanPrivateResult:
    """Pan-private binary counter with ``Z₁, Z₂ ~ Bin(N, p)`` (``N`` = ``trials``, default ``n``).

    With ``p`` omitted, ``p`` is the exact least noise making each draw ``(ε, δ)``-DP, so the
    pan-private guarantee is ``(ε, δ)``; the output alone is then better (``Bin(2N, p)``).
    """
    n = USERS_RANGE.check(n, "n")
    eps = EPSILON.check(eps, "eps")
    trials = n if trials is None else USERS_RANGE.check(trials, "trials")
    if p is None:
        if target_delta is None:
            raise InvalidParameter("give either --delta (to solve p) or --p (to analyse it)")
        target_delta = DELTA.check(target_delta, "delta")
        sol = solve_noise("binomial", trials, eps, target_delta)
        p = sol.value
        extra = {"solved_p": p, "infeasible_neighbor": sol.infeasible_neighbor}
    else:
        p = check_real("p", p, low=0.0, high=1.0, low_open=True, high_open=True)
        extra = {}
    one = delta(NoiseLaw("binomial", size=float(trials), p=p), eps).upper
    try:
        both = delta(NoiseLaw("binomial", size=float(2 * trials), p=p), eps).upper
    except CertificationError:  # 2N beyond the measured range: the output is a post-processing of Z2's view
        both = one
    rmse = math.sqrt(2 * trials * p * (1 - p))
    return PanPrivateResult(n, p, eps, one, one, both, one, rmse, {"trials": trials, **extra})


# ---------------------------------------------------------------------------------
# Distinct elements
# ---------------------------------------------------------------------------------


def mod2_noise_probability(p_user: float, m: int) -> float:
    """Seed 000 Lemma 3.5: the mod-2 sum of ``m`` i.i.d. ``Bern(p′)`` bits is
    ``Bern((1 − (1 − 2p′)^m)/2)``."""
    return -math.expm1(m * math.log1p(-2.0 * p_user)) / 2.0 if p_user < 0.5 else 0.5


def noisy_or_delta(p_honest: float, eps: float) -> float:
    """Exact δ(ε) of two composed noisy-OR answers, ``Bern(1/2) ⊗ Bern(q)`` vs
    ``Bern(q) ⊗ Bern(1/2)`` (the user's old and new element; nobody else holds either).

    Of the four outcomes only ``(1, 0)`` (and ``(0, 1)`` in the other direction) has
    ``P > Q``, with ``P = (1−q)/2``, ``Q = q/2``: ``δ = ((1 − q(1 + e^ε))/2)₊`` (derived; tested
    by enumeration).
    """
    return max(0.0, (1.0 - p_honest * (1.0 + math.exp(eps))) / 2.0)


@dataclass(frozen=True)
class DistinctResult(RecordMixin):
    """Distinct elements over a domain of size k with split and mix over Z₂."""

    n: int
    k: int
    gamma: float
    honest: int
    eps: float
    p_central: float
    p_user: float
    p_honest: float
    noise_delta: float
    sigma: float
    splitmix_messages: int
    splitmix_delta: float
    total_delta: float
    rmse_upper: float
    messages_per_user: int
    binding: str
    details: Mapping[str, Any] = field(default_factory=dict)
    accuracy: DistinctAccuracy | None = None


def bbgn_messages_z2(h: int, sigma: float) -> int:
    """``bbgn_messages(h, 2, sigma)`` (:mod:`.._shared.secure_sum`): the smallest ``m`` with
    ``m >= 3`` and ``m > (2σ + log2 q)/(log2 h − log2 e) + 1`` for ``q = 2`` (Balle, Bell,
    Gascón, Nissim, CCS 2020, arXiv 2002.00817); raises :class:`CertificationError` when
    ``h <= e`` (the bound certifies nothing with fewer than 3 honest users)."""
    if h <= math.e:
        raise CertificationError(f"the split-and-mix bound needs more than e honest users, got {h}")
    return bbgn_messages(h, 2, sigma)


def _splitmix(h: int, sigma: float) -> tuple[int, str]:
    """Messages for σ-secure mod-2 summation among ``h`` honest users, and where the number
    comes from."""
    return bbgn_messages_z2(h, sigma), "Balle-Bell-Gascon-Nissim (CCS 2020) bound over Z_2"


def distinct_elements(
    n: int, k: int, eps: float, target_delta: float, *, gamma: float = 1.0, sigma: float | None = None,
    splitmix_share: float = 0.1, beta: float = 0.05, universe: int | None = None, collision_share: float = 0.5,
) -> DistinctResult:
    """Robust distinct-elements counting (seed 000, Theorem 3.3) with exact noisy-OR accounting.

    ``δ_total = δ_noise(ε) + 2(1 + e^ε)2^{−σ}``: Lemma 3.4 (``(1+e^ε)s``) applied to the two
    elements whose answers differ, each within total variation ``s = 2^{−σ}`` of the ideal
    mod-2 sum. If ``sigma`` is omitted, the split-and-mix term gets ``splitmix_share`` of δ.
    The noise part is solved in closed form: ``q_h >= (1 − 2δ_noise)/(1 + e^ε)`` with
    ``q_h = (1 − (1 − 2p′)^h)/2`` the noise bit of the ``h`` honest users.

    ``accuracy`` holds the (α, β) statement of Part II at ``beta`` (:func:`distinct_accuracy`).
    With ``universe`` (> ``k``), users first hash their elements into the ``k`` bins with a
    public 2-universal hash (Appendix A.2, Corollary A.4): privacy is that of the ``k``-bin
    protocol (neighbouring data sets hash to neighbouring data sets), and the error adds
    the collision loss, which gets ``collision_share`` of ``beta``.
    """
    n = USERS_RANGE.check(n, "n")
    k = IntRange("k", 1, 10**9).check(k)
    eps = EPSILON.check(eps, "eps")
    target_delta = DELTA.check(target_delta, "delta")
    h = honest_count(n, gamma)
    if h < 3:
        raise CertificationError(f"split and mix needs at least 3 honest users, gamma*n = {h}")
    factor = 2.0 * (1.0 + math.exp(eps))
    if sigma is None:
        splitmix_share = check_real("splitmix share", splitmix_share, low=0.0, high=1.0, low_open=True, high_open=True)
        sigma = math.ceil(math.log2(factor) - math.log2(splitmix_share) - math.log2(target_delta))
    sigma = check_sigma(sigma)
    sm_log2 = math.log2(factor) - sigma  # factor <= 2(1 + e^700) is finite
    sm_delta = fp.MIN_PROBABILITY if sm_log2 < -996 else fp.next_up(2.0**sm_log2 * (1 + 1e-12))
    budget = target_delta - sm_delta
    if budget <= 0:
        raise CertificationError(
            f"split-and-mix alone uses delta {sm_delta:.3g} >= target {target_delta:g}: increase sigma"
        )
    q_needed = (1.0 - 2.0 * budget) / (1.0 + math.exp(eps))
    # per-user p' so that (1 - 2p')^h = 1 - 2 q_needed; round p' up until the forward check passes
    p_user = -math.expm1(math.log1p(-2.0 * q_needed) / h) / 2.0
    while noisy_or_delta(mod2_noise_probability(p_user, h), eps) > budget:
        p_user = p_user * (1 + 1e-12)
    q_h = mod2_noise_probability(p_user, h)
    p_central = mod2_noise_probability(p_user, n)  # all n users honest
    m, sm_method = _splitmix(h, sigma)
    nd = noisy_or_delta(q_h, eps)
    rmse = math.sqrt(k / 4.0) / (0.5 - p_central) if p_central < 0.5 else math.inf
    binding = "noise (noisy-OR composition)" if nd >= sm_delta else "split-and-mix security"
    less = mod2_noise_probability(p_user * (1 - 1e-6), h)
    collision_beta = 0.0
    if universe is not None:
        universe = IntRange("universe", 2, 10**30).check(universe)
        if universe <= k:
            raise InvalidParameter(f"universe: {universe} is not larger than the hash size {k} (accepted: universe > "
                                   "hash size; without hashing give the domain size as k)")
        share = check_real("collision share", collision_share, low=0.0, high=1.0, low_open=True, high_open=True)
        collision_beta = BETA.check(beta) * share
    acc = distinct_accuracy(k, n, p_central, beta, universe=universe, collision_beta=collision_beta)
    return DistinctResult(
        n, k, gamma, h, eps, p_central, p_user, q_h, nd, float(sigma), m, sm_delta, nd + sm_delta,
        max(rmse, acc.rmse_upper), k * m, binding,
        {"splitmix_method": sm_method, "message_bits": math.ceil(math.log2(max(k, 2))) + 1,
         "one_step_less_noise_delta": noisy_or_delta(less, eps) + sm_delta},
        acc,
    )


def best_hash_size(n: int, universe: int, eps: float, target_delta: float, **kwargs: Any) -> DistinctResult:
    """The hash size ``k`` (``2 <= k < universe``, at most ``1e9``) with the smallest certified
    ``alpha_upper`` of :func:`distinct_elements` with hashing: the noise part grows like
    ``sqrt(k)`` and the collision part falls like ``1/k``, so golden-section search on ``log k``
    then a scan of the neighbouring integers. The choice is a heuristic optimum (an
    ``estimate``); the alpha printed for it is certified whatever ``k`` is chosen."""
    top = min(universe - 1, 10**9)
    if top < 2:
        raise InvalidParameter(f"universe: {universe} leaves no hash size 2 <= k < universe")
    cache: dict[int, DistinctResult] = {}

    def run(kk: int) -> DistinctResult:
        if kk not in cache:
            cache[kk] = distinct_elements(n, kk, eps, target_delta, universe=universe, **kwargs)
        return cache[kk]

    def alpha(kk: int) -> float:
        acc = run(kk).accuracy
        assert acc is not None
        return acc.alpha_upper

    # a coarse geometric grid first (the collision bound is capped at D - 1, a plateau at small k
    # where golden section alone can stall), then golden section between the grid neighbours
    grid = sorted({max(2, min(top, round(2 * (top / 2.0) ** (i / 48.0)))) for i in range(49)})
    i_best = min(range(len(grid)), key=lambda i: alpha(grid[i]))
    a = math.log(grid[max(0, i_best - 1)])
    b = math.log(grid[min(len(grid) - 1, i_best + 1)])
    golden = (math.sqrt(5.0) - 1.0) / 2.0
    for _ in range(30):
        c, d = b - golden * (b - a), a + golden * (b - a)
        if alpha(max(2, min(top, round(math.exp(c))))) <= alpha(max(2, min(top, round(math.exp(d))))):
            b = d
        else:
            a = c
    centre = max(2, min(top, round(math.exp(0.5 * (a + b)))))
    best = min(range(max(2, centre - 3), min(top, centre + 3) + 1), key=alpha)
    return run(best)


# ---------------------------------------------------------------------------------
# Distinct elements: (alpha, beta) accuracy and the large-universe (hashing) variant
# ---------------------------------------------------------------------------------

#: Largest ``len(f1)·len(f2)`` of a direct pmf convolution for the attained (lower) value.
CONVOLVE_LIMIT = 4 * 10**7
#: The failure probability of an (alpha, beta) statement: ``1e-300 <= beta < 1``.
BETA = RealRange("beta", fp.MIN_PROBABILITY, 1.0, high_open=True)


def _centered_log_mgf(r: float, t: float) -> tuple[float, float, float]:
    """``ψ_r(t) = log E e^{t(B − r)}`` for ``B ~ Bern(r)``: ``log1p(r·expm1 t) − r t``, with an
    absolute rounding bound (``ELEMENTARY`` per elementary function, on both terms) and
    ``|∂ψ/∂r|`` at ``r`` (``ψ`` is concave in ``r``, so ``ψ_{r'} <= ψ_r + |∂ψ/∂r|·|r' − r|``)."""
    em1 = math.expm1(t)
    a = math.log1p(r * em1)
    b = r * t
    slope = abs(em1 / (1.0 + r * em1) - t)
    return a - b, ELEMENTARY * (abs(a) + abs(b)) + fp.SMALLEST_NORMAL, slope


def _tail_deviation(k: int, held: int, p: float, dp: float, log_inv: float, sign: float) -> float:
    """Certified ``s`` with ``P[±(S − ES) >= s] <= e^{−log_inv}`` for every data set with at most
    ``held`` held elements (Chernoff: ``s = min_t (K(t) + log_inv)/t``, ``K = held·max(ψ_{1/2},
    ψ_p) + (k − held)·ψ_p``, which bounds the log-MGF of the centred sum for every such data
    set). Any ``t`` gives a valid bound; the minimising ``t`` is found by golden section on
    ``log t`` and the value there is rounded up."""

    def bound(t: float) -> float:
        tt = sign * t
        ph, eh, _ = _centered_log_mgf(0.5, tt)
        pp, ep, slope = _centered_log_mgf(p, tt)
        pp_up = pp + ep + slope * dp
        k_up = held * max(ph + eh, pp_up) + (k - held) * pp_up
        k_up += 4 * fp.UNIT_ROUNDOFF * (held * abs(ph) + k * abs(pp) + 1.0)
        return fp.next_up((max(k_up, 0.0) + log_inv) / t * (1 + 4 * fp.UNIT_ROUNDOFF))

    # the Hoeffding choice t = 4 s_H / k, s_H = sqrt(k log_inv / 2), is always a candidate
    t_h = 4.0 * math.sqrt(k * log_inv / 2.0) / k
    lo, hi = math.log(t_h) - 12.0, min(math.log(t_h) + 12.0, math.log(700.0))
    golden = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = lo, hi
    c, d = b - golden * (b - a), a + golden * (b - a)
    fc, fd = bound(math.exp(c)), bound(math.exp(d))
    for _ in range(60):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - golden * (b - a)
            fc = bound(math.exp(c))
        else:
            a, c, fc = c, d, fd
            d = a + golden * (b - a)
            fd = bound(math.exp(d))
    return min(fc, fd, bound(min(t_h, 700.0)))


def _binomial_window(size: int, r: float, tail: float) -> tuple[int, np.ndarray, float]:
    """First support point, pmf values and their relative error bound of ``Bin(size, r)`` on a
    window leaving at most ``tail`` outside on each side (dropped: a lower bound)."""
    if size == 0:
        return 0, np.ones(1), 0.0
    law = Law("binomial", float(size), r)
    a, b = quantile_window(law, tail)
    return a, law.pmf(np.arange(a, b + 1)), law.pmf_budget


def _attained_deviation(k: int, held: int, p: float, dp: float, c: float, beta: float) -> float:
    """The largest ``v`` such that, on the data set with ``held`` distinct elements (all users
    honest), ``P[|error| >= v] > beta`` is certified: a *lower* bound on the worst-case alpha.

    ``S = Bin(held, 1/2) + Bin(k − held, p_true)``, ``|p_true − p| <= dp`` (the rounding of the
    double ``p``: total variation at most ``(k − held)·dp``, subtracted); the analyzer's error
    is ``(S − k p − held·c)/c``. Pmf windows (dropping mass lowers the tail: still a lower
    bound), a direct convolution, the measured pmf budgets."""
    tail = max(beta * 1e-6, fp.MIN_PROBABILITY)
    a1, f1, r1 = _binomial_window(held, 0.5, tail)
    if p < fp.MIN_PROBABILITY:  # below Boost's range: the unheld bits are 0 up to total variation (k - held) p
        dp += p
        a2, f2, r2 = 0, np.ones(1), 0.0
    else:
        a2, f2, r2 = _binomial_window(k - held, p, tail)
    g = np.convolve(f1, f2) if len(f1) > 1 and len(f2) > 1 else (f1 * f2[0] if len(f2) == 1 else f2 * f1[0])
    support = np.arange(a1 + a2, a1 + a2 + len(g), dtype=float)
    centre = k * p + held * c
    dev = np.abs(support - centre)
    order = np.argsort(-dev)
    cum = np.cumsum(g[order])
    rel = r1 + r2 + (min(len(f1), len(f2)) + len(g) + 4) * fp.UNIT_ROUNDOFF
    lower = cum * (1 - rel) - (k - held) * dp - 4 * fp.UNIT_ROUNDOFF * (1 + abs(centre))
    hit = np.nonzero(lower > beta)[0]
    if hit.size == 0:
        return 0.0
    # the deviation is measured from a rounded centre: give back its rounding
    v = float(dev[order][hit[0]]) - 4 * fp.UNIT_ROUNDOFF * (1 + abs(centre))
    return max(0.0, v)


@dataclass(frozen=True)
class DistinctAccuracy(RecordMixin):
    """(alpha, beta) accuracy of the distinct-elements analyzer, all users honest:
    ``P[|estimate − D| > alpha] <= beta`` for every data set (``alpha_upper``), and the alpha
    one concrete data set already needs (``alpha_lower``)."""

    beta: float
    alpha_upper: float
    alpha_hoeffding: float
    alpha_lower: float
    lower_data: str
    rmse_upper: float
    bias_bound: float
    trivial_error: float
    collision_error: float = 0.0
    collision_beta: float = 0.0
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def no_better_than_guessing(self) -> bool:
        """The certified error bound exceeds the error of answering ``min(n, k)/2`` blind."""
        return self.alpha_upper > self.trivial_error or self.rmse_upper > self.trivial_error


def distinct_accuracy(k: int, n: int, p_central: float, beta: float, *, universe: int | None = None,
                      collision_beta: float = 0.0) -> DistinctAccuracy:
    """(alpha, beta) accuracy of the distinct-elements protocol of Balcer, Cheu, Joseph, Mao
    (SODA 2021, arXiv 2004.09481), Theorem 3.3 Part II, all ``n`` users honest.

    The analyzer returns ``D̂ = (Σ_j y_j − k p)/(1/2 − p)`` with ``y_j ~ Bern(1/2)`` for the ``D``
    held elements and ``Bern(p)`` for the others (Lemma 3.5), so
    ``D̂ − D = (S − ES)/(1/2 − p)`` with ``S`` a sum of ``k`` independent bits. The theorem's
    proof uses Hoeffding's inequality: ``alpha = sqrt(k ln(2/β)/2)/(1/2 − p)`` (its constant is
    not legible in the stored text; this is Hoeffding's own bound, derived here). The
    ``alpha_upper`` printed is the Chernoff bound with the exact log-MGF of the bits, at most
    ``min(k, n)`` elements held (``β/2`` per tail), never above Hoeffding's; ``alpha_lower`` is
    certified attained by the data set with ``min(k, n)`` held elements (exact convolution of
    the two binomials; one held element when that convolution is too large).

    Large universe (``universe`` given, the protocol run on ``k`` hashed bins, Appendix A.2,
    Lemma A.3): each user hashes its element with a public 2-universal hash into ``[k]``;
    the hashed count loses ``D − D_h <= C`` elements, ``C`` the colliding pairs,
    ``E C <= D(D−1)/(2k)``, so by Markov ``P[D − D_h >= D(D−1)/(2k·β_h)] <= β_h`` with
    ``D <= min(n, universe)`` (derived; the paper's constants are not legible in the stored
    text). ``beta`` is then split: ``collision_beta`` for the hash, the rest for the noise.
    """
    k = IntRange("k", 1, 10**9).check(k)
    n = USERS_RANGE.check(n, "n")
    beta = BETA.check(beta)
    p = check_real("p", p_central, low=0.0, high=0.5, high_open=True)
    c = 0.5 - p
    c_down = c * (1 - 2 * fp.UNIT_ROUNDOFF)
    dp = ELEMENTARY * p  # |p_true - p|: Lemma 3.5's closed form evaluated in floating point
    d_max = min(n, universe) if universe is not None else min(n, k)
    held = min(k, n)
    beta_noise = beta - collision_beta
    if not 0.0 < beta_noise:
        raise InvalidParameter(f"beta: {beta!r} leaves nothing for the noise after the hash's share {collision_beta!r}")
    log_inv = fp.up(math.log(2.0 / beta_noise) * (1 + 4 * fp.UNIT_ROUNDOFF))
    s_up = max(_tail_deviation(k, held, p, dp, log_inv, 1.0), _tail_deviation(k, held, p, dp, log_inv, -1.0))
    s_hoeffding = fp.next_up(math.sqrt(k * log_inv / 2.0) * (1 + 4 * fp.UNIT_ROUNDOFF))
    bias = fp.next_up(k * dp / c_down)
    alpha_up = fp.next_up(min(s_up, s_hoeffding) / c_down + bias)
    alpha_h = fp.next_up(s_hoeffding / c_down + bias)
    rmse = fp.next_up(math.sqrt(k / 4.0 + (k * dp) ** 2) / c_down * (1 + 4 * fp.UNIT_ROUNDOFF))
    collision = 0.0
    if universe is not None and collision_beta > 0:
        collision = fp.next_up(min(d_max * (d_max - 1) / (2.0 * k * collision_beta), max(d_max - 1, 0))
                               * (1 + 4 * fp.UNIT_ROUNDOFF))
        alpha_up = fp.next_up(alpha_up + collision)
        alpha_h = fp.next_up(alpha_h + collision)
    lower_held = held
    if held < k and held > 1:
        w1 = 2 * (12 * math.sqrt(held / 4.0) + 10)
        w2 = 2 * (12 * math.sqrt((k - held) * p * (1 - p)) + 10)
        if w1 * w2 > CONVOLVE_LIMIT:
            lower_held = 1
    if universe is not None:
        lower_held = 1  # all users hold one element: no collision, D = D_h = 1
    v = _attained_deviation(k, lower_held, p, dp, c, beta)
    alpha_low = fp.next_down(v / c * (1 - 4 * fp.UNIT_ROUNDOFF)) if v > 0 else 0.0
    data = (f"{lower_held} held element(s) of {k}" + (" (every user holds the same element)" if lower_held == 1 else ""))
    return DistinctAccuracy(
        beta, alpha_up, alpha_h, alpha_low, data, rmse, bias, d_max / 2.0, collision, collision_beta,
        {"noise_beta": beta_noise, "chernoff_deviation": s_up, "hoeffding_deviation": s_hoeffding,
         "denominator_half_minus_p": c, "held_at_most": held, "distinct_at_most": d_max,
         "universe": universe},
    )

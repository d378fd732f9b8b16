"""Pure-DP binary counting in the shuffle model (Ghazi, Kumar, Manurangsi, "Pure-DP
aggregation in the shuffle model: error-optimal and communication-efficient").

Protocol (Algorithms 1–2, Condition 7): each user sends, with probability
``1 − q``, ``s + x`` copies of +1 and ``s`` copies of −1 (nothing with probability ``q``),
plus shares of ``Geo(1 − e^{−ε′})`` noise for each sign and a share of ``Poi(λ)``
"flooding" sent as that many +1 *and* −1 messages. Algorithm 2 prints ``Σ − ns`` as the
analyzer's output, but the proof of Lemma 11 (and the cancelling ``s`` copies of +1 and −1)
use the plain sum ``Σ`` of the messages; the error analysis here follows Lemma 11.

Condition 7: ``ε′ < ε``; ``s >= 2 ln(1/((e^ε − 1)q))/(ε − ε′)``;
``λ >= e^{ε−ε′} s / (1 − e^{(ε′−ε)/2})``. Lemma 8: then the protocol is ε-DP.
Theorem 6's rule for an MSE factor ``1 + ρ``: ``ε′ = ε − 0.01ρ min(ε, 1)``,
``q = 0.1ρ Var(DLap(ε))/n``. Lemma 11: ``MSE <= Var(DLap(ε′)) + qn + q²n(n−1)``.
Lemma 12: expected messages per user ``<= 2s + 1 + λ/n + O(1/(ε′n))``; the exact
expectation for a user holding 1 is ``(1−q)(2s+1) + 2E[Geo]/n + 2λ/n`` with
``E[Geo(1−e^{−ε′})] = 1/(e^{ε′} − 1)``: the flooding share is sent once as +1 and once as −1,
so it contributes ``2λ/n`` (the lemma's proof writes ``2E[z^{±1}]`` and then ``E[D^flood]/n``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from ...plugin_api import EPSILON, USERS_RANGE, CertificationError, InvalidParameter, RealRange, fp
from .._shared.laws import Law
from .._shared.noise import dlap_variance

CITATION = ("Ghazi, Kumar, Manurangsi: Pure-DP aggregation in the shuffle model: error-optimal and "
            "communication-efficient")
#: The MSE factor 1 + rho of Theorem 6: ``1e-9 <= rho <= 1/2`` (below 1e-9, ``eps'`` is
#: within a few ulps of ``eps``).
RHO = RealRange("rho", 1e-9, 0.5)
#: The optimiser needs no ``rho <= 1/2`` (that bound is Theorem 6's); the planners search
#: ``rho`` up to 1e6 (the MSE budget then allows ``q`` close to 1).
OPT_RHO = RealRange("rho", 1e-9, 1e6)


def min_s(eps: float, eps_prime: float, q: float) -> int:
    """Smallest positive integer ``s`` with ``s >= 2 ln(1/((e^ε−1)q))/(ε−ε′)`` (Condition 7)."""
    if not eps_prime < eps:
        raise CertificationError(f"eps' = {eps_prime!r} is not below eps = {eps!r} in double precision")
    if not q > 0:
        raise CertificationError("q underflows to 0 in double precision (Var(DLap(eps))/n is below 1e-308)")
    bound = 2.0 * -(math.log(math.expm1(eps)) + math.log(q)) / (eps - eps_prime)
    if bound > 1e15:
        raise CertificationError(f"Condition 7 needs s >= {bound:.3g} messages: eps - eps' = {eps - eps_prime:.3g} is too small")
    s = max(1, math.ceil(bound * (1 + 1e-12)))
    return s


def min_lambda(eps: float, eps_prime: float, s: int) -> float:
    """Smallest ``λ`` of Condition 7, rounded up by a relative 1e-12."""
    gap = eps - eps_prime
    return math.exp(gap) * s / (-math.expm1(-gap / 2.0)) * (1 + 1e-12)


@dataclass(frozen=True)
class PureParams:
    """A parameter choice ``(ε′, q, s, λ)`` for ``n`` users and target ``ε``."""

    eps: float
    n: int
    eps_prime: float
    q: float
    s: int
    lam: float
    source: str = ""

    def condition7(self) -> list[dict[str, Any]]:
        """Each inequality of Condition 7 with both sides and whether it holds."""
        e, ep, q, s, lam = self.eps, self.eps_prime, self.q, self.s, self.lam
        s_rhs = 2.0 * -(math.log(math.expm1(e)) + math.log(q)) / (e - ep) if ep < e else math.inf
        lam_rhs = math.exp(e - ep) * s / (-math.expm1((ep - e) / 2.0)) if ep < e else math.inf
        return [
            {"condition": "eps' < eps", "lhs": ep, "rhs": e, "holds": ep < e and ep > 0},
            {"condition": "0 < q < 1", "lhs": q, "rhs": 1.0, "holds": 0 < q < 1},
            {"condition": "s >= 2 ln(1/((e^eps-1) q))/(eps-eps')", "lhs": float(s), "rhs": s_rhs, "holds": s >= 1 and s >= s_rhs},
            {"condition": "lambda >= e^(eps-eps') s/(1-e^((eps'-eps)/2))", "lhs": lam, "rhs": lam_rhs, "holds": lam >= lam_rhs},
        ]

    @property
    def satisfies_condition7(self) -> bool:
        return all(c["holds"] for c in self.condition7())

    @property
    def mse_bound(self) -> float:
        """Lemma 11: ``Var(DLap(ε′)) + qn + q²n(n−1)`` (an upper bound on the MSE)."""
        n, q = self.n, self.q
        return dlap_variance(self.eps_prime) + q * n + q * q * n * (n - 1)

    @property
    def dlap_optimum(self) -> float:
        """``Var(DLap(ε))``: the discrete Laplace (central, optimal) MSE."""
        return dlap_variance(self.eps)

    @property
    def mse_factor(self) -> float:
        return self.mse_bound / self.dlap_optimum

    def expected_messages(self, x: int = 1) -> float:
        """Exact expected number of messages of a user holding ``x``."""
        geo_mean = 1.0 / math.expm1(self.eps_prime)
        return (1 - self.q) * (2 * self.s + x) + 2.0 * geo_mean / self.n + 2.0 * self.lam / self.n

    @property
    def lemma12_leading(self) -> float:
        """Lemma 12's expression without its ``O(1/(ε′n))`` term: ``2s + 1 + λ/n``."""
        return 2 * self.s + 1 + self.lam / self.n

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source, "eps": self.eps, "n": self.n, "eps_prime": self.eps_prime, "q": self.q,
            "s": self.s, "lambda": self.lam, "condition7": self.condition7(),
            "satisfies_condition7": self.satisfies_condition7, "mse_bound": self.mse_bound,
            "dlap_optimum": self.dlap_optimum, "mse_factor": self.mse_factor,
            "expected_messages_x1": self.expected_messages(1), "expected_messages_x0": self.expected_messages(0),
            "lemma12_leading": self.lemma12_leading,
        }


def _check(eps: float, n: int, rho: float, rho_range: RealRange = RHO) -> tuple[float, int, float]:
    eps = EPSILON.check(eps, "eps")
    n = USERS_RANGE.check(n, "n")
    rho = rho_range.check(rho)
    if math.isinf(dlap_variance(eps)):
        raise CertificationError(f"Var(DLap(eps)) exceeds double precision at eps = {eps:g}: eps is too small to plan for")
    return eps, n, rho


def theorem6(eps: float, n: int, rho: float = 0.5) -> PureParams:
    """Theorem 6's parameter rule (seed 004, Section 4.4) with the least integer ``s`` and
    least ``λ`` allowed by Condition 7."""
    eps, n, rho = _check(eps, n, rho)
    eps_prime = eps - 0.01 * rho * min(eps, 1.0)
    q = 0.1 * rho * dlap_variance(eps) / n
    if q >= 1:
        raise CertificationError(
            f"Theorem 6's q = 0.1 rho Var(DLap(eps))/n = {q:.4g} >= 1: n = {n} is too small for eps = {eps:g}, rho = {rho:g}"
        )
    s = min_s(eps, eps_prime, q)
    return PureParams(eps, n, eps_prime, q, s, min_lambda(eps, eps_prime, s), "Theorem 6 rule")


RULES = ("optimiser", "theorem6")


def plan(eps: float, n: int, rho: float = 0.5, rule: str = "optimiser") -> PureParams:
    """The counting plan of ``rule``: ``optimiser`` (:func:`optimise`, fewest expected
    messages with Lemma 11's MSE bound <= ``(1+ρ)Var(DLap(ε))``) or ``theorem6``
    (:func:`theorem6`, the paper's parameter rule)."""
    if rule == "optimiser":
        return optimise(eps, n, rho)
    if rule == "theorem6":
        return theorem6(eps, n, rho)
    raise InvalidParameter(f"rule: {rule!r} is not a known rule (accepted: {', '.join(RULES)})")


def _best_q(eps_prime: float, eps: float, n: int, rho: float) -> float | None:
    """Largest ``q`` with ``Var(DLap(ε′)) + qn + q²n(n−1) <= (1+ρ)Var(DLap(ε))``, capped below 1."""
    slack = (1 + rho) * dlap_variance(eps) - dlap_variance(eps_prime)
    if slack <= 0:
        return None
    if n == 1:
        q = slack
    else:
        a, b = n * (n - 1.0), float(n)
        q = 2.0 * slack / (b + math.sqrt(b * b + 4.0 * a * slack))  # stable root of a q^2 + b q = slack
    q = min(q * (1 - 1e-12), 1 - 1e-9)
    return q if q > 0 else None


def optimise(eps: float, n: int, rho: float = 0.5, *, grid: int = 600) -> PureParams:
    """Fewest expected messages (user holding 1) over ``(ε′, q, s, λ)`` subject to Condition 7
    and Lemma 11's MSE bound ``<= (1+ρ)Var(DLap(ε))``.

    For fixed ``ε′`` messages decrease with ``q``, so ``q`` is the largest allowed by the MSE
    budget, ``s`` and ``λ`` the least allowed by Condition 7; ``ε′`` is searched on a
    log-spaced grid of ``ε − ε′`` and refined. Theorem 6's choice is a candidate whenever it
    meets the MSE budget, so the result never needs more messages than it.
    """
    eps, n, rho = _check(eps, n, rho, OPT_RHO)
    target = (1 + rho) * dlap_variance(eps)

    def build(gap: float) -> PureParams | None:
        ep = eps - gap
        if ep <= 0:
            return None
        q = _best_q(ep, eps, n, rho)
        if q is None:
            return None
        s = min_s(eps, ep, q)
        return PureParams(eps, n, ep, q, s, min_lambda(eps, ep, s), "optimiser")

    gaps = eps * np.logspace(-7, 0, grid, endpoint=False)
    cands = [c for c in (build(float(g)) for g in gaps) if c is not None]
    if rho <= 0.5:  # Theorem 6 is stated for rho <= 1/2 (RHO)
        try:
            rule = theorem6(eps, n, rho)
            if rule.mse_bound <= target:
                cands.append(rule)
        except CertificationError:
            pass
    if not cands:
        raise CertificationError(f"no (eps', q, s, lambda) meets MSE factor 1+rho = {1 + rho:g} at eps = {eps:g}")
    best = min(cands, key=lambda c: c.expected_messages(1))
    # local refinement around the best gap
    g0 = eps - best.eps_prime
    for g in g0 * np.linspace(0.8, 1.25, 200):
        c = build(float(g))
        if c is not None and c.expected_messages(1) < best.expected_messages(1):
            best = c
    if not (best.satisfies_condition7 and best.mse_bound <= target):
        raise CertificationError("internal check failed: optimiser result violates its constraints")
    return best


# ---------------------------------------------------------------------------------
# Windowed max-divergence (a check, never a proof)
# ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class VerifyResult:
    """Max-divergence of the two views ``V(X)``, ``V(X′)`` on a finite window (a check)."""

    divergence_1_0: float  # max ln P1/P0
    divergence_0_1: float  # max ln P0/P1
    eps: float
    window_max: int
    mass_outside: float
    limit_ratio: float
    details: Mapping[str, Any] = field(default_factory=dict)
    rounding_allowance: float = 0.0  # bound on the floating-point error of the log-ratios

    @property
    def max_divergence(self) -> float:
        return max(self.divergence_1_0, self.divergence_0_1)

    @property
    def holds(self) -> bool:
        """The windowed divergence, plus its rounding allowance, is at most ``eps``."""
        return self.max_divergence + self.rounding_allowance <= self.eps

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d.update(max_divergence=self.max_divergence, holds=self.holds, details=dict(self.details))
        return d


#: Points of the verification window evaluated per chunk (memory stays near 25 MB).
CHUNK = 1 << 18
#: Largest verification window (points) :func:`verify` evaluates by default (about 10 s).
WINDOW_LIMIT = 20_000_000


def window_points(params: PureParams) -> float:
    """Size ``λ + s + 2 + 40√(λ+1) + 80/ε′`` of :func:`verify`'s window (points of ``m``)."""
    return params.lam + params.s + 2 + 40.0 * math.sqrt(params.lam + 1.0) + 80.0 / params.eps_prime


def verify(params: PureParams, *, window_limit: int = WINDOW_LIMIT) -> VerifyResult:
    """Evaluate ``d∞`` between the views of a user holding 1 and 0 on a finite window.

    By Lemma 5 of the paper, the other users' input messages can be dropped (this can only
    increase ``d∞``), leaving ``(A + F + G₁, B + F + G₂)`` with ``(A, B) = (0, 0)`` w.p. ``q``
    and ``(s + x, s)`` otherwise, ``F ~ Poi(λ)``, ``G ~ Geo(1 − e^{−ε′})``. Summing out ``F``
    (derived): ``P_x(i, j) ∝ q H(min(i, j)) + (1−q) e^{(2s+x)ε′} H(min(i−x, j) − s)`` with
    ``H(m) = Σ_{f<=m} Poi(λ; f) e^{2fε′}`` and a common factor ``p² r^{i+j}``. The ratio depends
    on ``(i, j)`` only through ``m = min(i, j)`` and whether ``i <= j``, so the 2-D sup is a
    1-D sup over ``m``, evaluated for ``m <= window_max``; beyond it the ratio tends to
    ``(q + (1−q)e^{(2s+1)ε′})/(q + (1−q)e^{2sε′}) < e^{ε′}``. Labelled a *check*.

    The window is processed in chunks of :data:`CHUNK` points (the running log-sum of
    ``H`` and the last ``s + 1`` values carried over), so memory does not grow with the
    window; ``window_limit`` bounds the time (about 0.5 s per million points).

    ``rounding_allowance`` bounds the floating-point error of the log-ratios: scipy's
    Poisson ``logpmf`` loses about ``k·|log λ|·u`` (see :mod:`shuffle_accountant.numeric.fp`),
    the accumulated log-sum-exp a few ``u`` per term of magnitude ``2fε′``.
    """
    e, ep, q, s, lam = params.eps, params.eps_prime, params.q, params.s, params.lam
    top_real = window_points(params)
    if top_real > window_limit:
        raise CertificationError(
            f"verification window of {top_real:.3g} points exceeds the limit {window_limit:.3g} "
            "(lambda + s + 80/eps' too large for a check that finishes in seconds)")
    top = math.ceil(top_real)
    # a constant shift keeps the log-sums near 0 (any constant cancels in the ratios): the
    # value at the maximiser of the concave f -> log Poi(lam; f) + 2 f eps'
    f_star = float(min(top, max(0, math.floor(lam * math.exp(2.0 * ep)))))
    shift = float(stats.poisson.logpmf(f_star, lam)) + 2.0 * f_star * ep
    lq, lq1 = math.log(q), math.log1p(-q)
    c0, c1 = lq1 + 2 * s * ep, lq1 + (2 * s + 1) * ep
    carry = -math.inf
    tail = np.empty(0)  # log H at the s + 1 indices before the chunk
    d10 = d01 = -math.inf
    argmax, best01 = 0, -math.inf
    for start in range(0, top + 1, CHUNK):
        end = min(top + 1, start + CHUNK)
        f = np.arange(start, end, dtype=float)
        g = stats.poisson.logpmf(f, lam) + 2.0 * f * ep - shift
        g[0] = np.logaddexp(carry, g[0])
        log_h = np.logaddexp.accumulate(g)
        carry = float(log_h[-1])
        ext = np.concatenate([tail, log_h])  # log H at indices start - len(tail) .. end - 1
        base = start - tail.size
        m = np.arange(start, end)

        def lh(idx: np.ndarray, ext: np.ndarray = ext, base: int = base) -> np.ndarray:
            out = np.full(idx.shape, -np.inf)
            ok = idx >= 0
            out[ok] = ext[idx[ok] - base]
            return out

        t0 = lq + log_h
        with np.errstate(divide="ignore"):
            d0 = np.logaddexp(t0, c0 + lh(m - s))
            a1 = np.logaddexp(t0, c1 + lh(m - 1 - s))  # i <= j
            b1 = np.logaddexp(t0, c1 + lh(m - s))  # i > j
        d10 = max(d10, float(np.max(a1 - d0)), float(np.max(b1 - d0)))
        r01 = np.maximum(d0 - a1, d0 - b1)
        j = int(np.argmax(r01))
        if r01[j] > best01:
            best01, argmax = float(r01[j]), start + j
        d01 = max(d01, best01)
        tail = ext[-(s + 1):]
    r = math.exp(-ep)
    g_cut = max(0, (top - s - int(lam)) // 2)
    outside = float(Law("poisson", lam).sf(top - s - 1 - g_cut)[0]) * (1 + fp.poisson_budget(lam)) + r**g_cut
    limit = float(np.logaddexp(lq, c1) - np.logaddexp(lq, c0))
    allowance = 64 * fp.UNIT_ROUNDOFF * (top * (abs(math.log(lam)) + 1.0) + lam + 2.0 * top * ep + 2 * s * ep + 10)
    return VerifyResult(d10, d01, e, top, min(1.0, outside), limit, {"argmax_m_0_1": argmax, "eps_prime": ep},
                        allowance)

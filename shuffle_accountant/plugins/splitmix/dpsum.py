"""A complete parameter plan for (ε, δ)-DP real summation built on split and mix.

Protocol (Balle–Bell–Gascón–Nissim, "Differentially private summation with
multi-message shuffling", arXiv 1906.09116, after Ishai et al. FOCS'06):

1. user ``i`` rounds ``x_i ∈ [0, 1]`` at precision ``p`` by randomized rounding,
   ``x̄_i = ⌊p x_i⌋ + Bern(p x_i − ⌊p x_i⌋) ∈ {0, …, p}`` (unbiased, variance ≤ 1/4;
   their Lemma 1.1);
2. adds ``η_i = Z_i − Z'_i`` with ``Z_i, Z'_i`` i.i.d. Pólya(``r = 1/n``, ``α``), i.e.
   negative binomial ``P(k) = Γ(k + r)/(k! Γ(r)) α^k (1 − α)^r``; the sum of ``n`` of them
   is geometric, so ``Σ η_i`` is discrete Laplace, ``P(k) = (1−α)/(1+α) α^|k|``;
3. runs split and mix over ``Z_q`` on ``x̄_i + η_i mod q`` with ``m`` messages;
4. the analyzer adds the messages mod ``q``, takes the representative in
   ``[−L, q − L)`` with ``L = ⌊(q − np − 1)/2⌋`` and divides by ``p``.

Privacy. With ``α = e^{−ε/p}`` the central mechanism ``Σ x̄_i + DLap(α)`` is ε-DP (one
user moves the integer sum by at most ``p``, and a mixture of ε-DP pairs is ε-DP).
The view is within statistical distance ``s = 2^−σ`` of a simulator that runs split and
mix on ``(Σ(x̄_i + η_i) mod q, 0, …, 0)`` — a post-processing of the central output — so
the protocol is ``(ε, (1 + e^ε) s)``-DP (arXiv 1906.09116, "DP from statistical
distance"; Balcer, Cheu, Joseph, Mao, SODA 2021, Lemma 3.4). σ comes from the BBGN bound (:func:`.core.bbgn_sigma`).

Accuracy (every term an upper bound, shown separately): rounding ``n/(4p²)``; noise
``Var DLap(α)/p² = 2α/((1−α)² p²)``; wrap-around — if ``|Σ η_i| > L`` the decoded value
still lies in ``[−L, q − L)``, so the error is at most ``q/p`` — at most
``P(|η| > L)·(q/p)² = 2α^{L+1}/(1+α)·(q/p)²``. ``q`` is the smallest power of two whose
wrap-around term is below :data:`WRAP_SHARE` of the other two.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import mpmath

from ...plugin_api import DELTA, EPSILON, CertificationError, InvalidParameter, check_int, fp
from .._shared.secure_sum import BBGN_CITATION, bbgn_messages, bbgn_sigma

__all__ = ["WRAP_SHARE", "DPSumPlan", "check_dp_sum_plan", "dp_sum_plan"]

PLAN_CITATION = (
    "Balle, Bell, Gascon, Nissim: Differentially private summation with multi-message shuffling "
    "(arXiv 1906.09116): randomized rounding (Lemma 1.1), Polya noise summing to discrete Laplace, "
    "(eps, (1 + e^eps) s)-DP from statistical distance s; s from " + BBGN_CITATION
)
#: The wrap-around term of the squared error must stay below this share of the others.
WRAP_SHARE = 1e-3
_DPS = 50


_up = fp.up


@dataclass(frozen=True)
class DPSumPlan:
    """Every parameter of the protocol and every term of its error (see module docstring).

    ``epsilon_check``/``delta_check`` are the privacy of the plan recomputed from
    ``precision``, ``alpha``, ``n``, ``messages`` and ``q`` by :func:`check_dp_sum_plan`.
    """

    n: int
    epsilon: float
    delta: float
    precision: int
    q: int
    bits_per_message: int
    sigma_target: float
    sigma_certified: float
    messages: int
    total_bits_per_user: int
    alpha: float
    noise_per_user: str
    noise_total: str
    decode_margin: int
    mse_rounding: float
    mse_noise: float
    mse_wrap: float
    mse_total: float
    epsilon_check: float
    delta_check: float
    citation: str = PLAN_CITATION

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _alpha(epsilon: float, precision: int) -> float:
    """The double ``α ≥ e^{−ε/p}`` closest to it, so the noise is at least ε-DP."""
    with mpmath.workdps(_DPS):
        exact = mpmath.exp(-mpmath.mpf(epsilon) / precision)
        return _up(exact)


def _noise_epsilon(alpha: float, precision: int) -> float:
    """ε of the discrete Laplace(α) mechanism at sensitivity ``p``: ``p ln(1/α)``, rounded up."""
    with mpmath.workdps(_DPS):
        return _up(-precision * mpmath.log(mpmath.mpf(alpha)))


def check_dp_sum_plan(plan: DPSumPlan) -> tuple[float, float]:
    """Recompute the plan's (ε, δ) from its parameters alone, both rounded up: ε of the
    discrete Laplace noise at sensitivity ``precision``, and ``δ = (1 + e^ε)·2^−σ`` with σ
    re-derived by :func:`.core.bbgn_sigma` for ``(n, messages, q)``."""
    eps = _noise_epsilon(plan.alpha, plan.precision)
    sigma = bbgn_sigma(plan.n, plan.messages, plan.q)
    with mpmath.workdps(_DPS):
        delta = (1 + mpmath.exp(mpmath.mpf(eps))) * mpmath.power(2, -mpmath.mpf(sigma))
        return eps, _up(delta)


def _error_terms(n: int, p: int, alpha: float, q: int) -> tuple[int, float, float, float]:
    """(decode margin L, rounding, noise, wrap-around) squared-error terms, rounded up."""
    margin = (q - n * p - 1) // 2
    with mpmath.workdps(_DPS):
        a = mpmath.mpf(alpha)
        rounding = mpmath.mpf(n) / (4 * p * p)
        noise = 2 * a / ((1 - a) ** 2 * p * p)
        wrap = 2 * a ** (margin + 1) / (1 + a) * (mpmath.mpf(q) / p) ** 2
        return margin, _up(rounding), _up(noise), _up(wrap)


def dp_sum_plan(n: int, epsilon: float, delta: float, precision: int | None = None) -> DPSumPlan:
    """Plan (ε, δ)-DP summation of ``n`` reals in ``[0, 1]`` with split and mix.

    Precision defaults to ``⌈√n⌉`` (as in arXiv 1906.09116). The whole ε goes to the
    discrete Laplace noise; δ fixes ``σ = log₂((1 + e^ε)/δ)``; ``q`` is the smallest power
    of two that makes wrap-around negligible (module docstring); the messages are the
    BBGN count for ``(n, q, σ)``. The plan is re-checked by :func:`check_dp_sum_plan`.

    Raises:
        InvalidParameter: bad inputs, or ``n < 3`` (the BBGN bound needs ``n > e``).
        CertificationError: the re-check fails (should not happen).
    """
    n = check_int("n", n, low=3)
    epsilon = EPSILON.check(epsilon, "eps")
    delta = DELTA.check(delta, "delta")
    p = math.isqrt(n - 1) + 1 if precision is None else check_int("precision", precision, low=1, high=10**9)
    alpha = _alpha(epsilon, p)
    if not alpha < 1.0:
        raise InvalidParameter(
            f"eps: {epsilon!r} is out of range for precision p = {p} (accepted: eps/p large enough that "
            f"alpha = e^(-eps/p) < 1 in double precision, about eps >= {2.3e-16 * p:.2g})")
    with mpmath.workdps(_DPS):
        sigma = _up(mpmath.log(1 + mpmath.exp(mpmath.mpf(epsilon)), 2) - mpmath.log(mpmath.mpf(delta), 2))
    bits = (n * p).bit_length()  # smallest power of two above n*p
    while True:
        q = 2**bits
        margin, rounding, noise, wrap = _error_terms(n, p, alpha, q)
        if margin >= 0 and wrap <= WRAP_SHARE * (rounding + noise):
            break
        bits += 1
    m = bbgn_messages(n, q, sigma)
    with mpmath.workdps(_DPS):
        total = _up(mpmath.mpf(rounding) + mpmath.mpf(noise) + mpmath.mpf(wrap))
    plan = DPSumPlan(
        n=n, epsilon=epsilon, delta=delta, precision=p, q=q, bits_per_message=bits,
        sigma_target=sigma, sigma_certified=bbgn_sigma(n, m, q), messages=m,
        total_bits_per_user=m * bits, alpha=alpha,
        noise_per_user=f"Z - Z', Z, Z' iid Polya(r=1/{n}, alpha={alpha!r})",
        noise_total=f"discrete Laplace, P(k) proportional to alpha^|k|, alpha={alpha!r}",
        decode_margin=margin, mse_rounding=rounding, mse_noise=noise, mse_wrap=wrap,
        mse_total=total, epsilon_check=0.0, delta_check=0.0,
    )
    eps_check, delta_check = check_dp_sum_plan(plan)
    if eps_check > epsilon or delta_check > delta:
        raise CertificationError(
            f"the plan re-checks to (eps, delta) = ({eps_check!r}, {delta_check!r}), above the target"
        )
    return DPSumPlan(**{**plan.to_dict(), "epsilon_check": eps_check, "delta_check": delta_check})

"""A complete parameter plan for (ε, δ)-DP real summation built on split and mix.

Protocol (Balle–Bell–Gascón–Nissim, "Differentially private summation with
multi-message shuffling", arXiv 1906.09116, after Ishai et al. FOCS'06), for ``n``
users of whom at least ``h = ⌈γn⌉`` follow it (``γ = 1``: all of them):

1. user ``i`` rounds ``x_i ∈ [0, 1]`` at precision ``p`` by randomized rounding,
   ``x̄_i = ⌊p x_i⌋ + Bern(p x_i − ⌊p x_i⌋) ∈ {0, …, p}`` (unbiased, variance ≤ 1/4;
   their Lemma 1.1);
2. adds ``η_i = Z_i − Z'_i`` with ``Z_i, Z'_i`` i.i.d. Pólya(``r = 1/h``, ``α``), i.e.
   negative binomial ``P(k) = Γ(k + r)/(k! Γ(r)) α^k (1 − α)^r``; the sum of ``h`` of them
   is geometric, so the noise of any ``h`` users is discrete Laplace,
   ``P(k) = (1−α)/(1+α) α^|k|``, and the noise of ``k ≥ h`` users is that plus an
   independent ``NB((k−h)/h, α)`` difference;
3. runs split and mix over ``Z_q`` on ``x̄_i + η_i mod q`` with ``m`` messages;
4. the analyzer adds the messages mod ``q``, takes the representative in
   ``[−L, q − L)`` with ``L = ⌊(q − np − 1)/2⌋`` and divides by ``p``.

Privacy. With ``α = e^{−ε/p}`` the central mechanism ``Σ_H x̄_i + DLap(α)`` over any set
``H`` of ``h`` users is ε-DP for the users of ``H`` (one user moves the integer sum by at
most ``p``, and a mixture of ε-DP pairs is ε-DP); more users following the protocol add
independent noise, a post-processing. Security of split and mix with corrupted parties
holds with ``n`` replaced by the number of honest parties (Ghazi, Manurangsi, Pagh,
Velingker, "Private aggregation from fewer anonymous messages", EUROCRYPT 2020, arXiv
1909.11073, end of §1.1, after Ishai et al.: the corrupted parties' messages are known
to the adversary, so removing them from the view is a bijection). So the honest users'
shares are within statistical distance ``s = 2^−σ``, σ from the BBGN bound at ``h``
parties (:func:`.core.bbgn_sigma`), of a simulator that runs split and mix on
``(Σ_H(x̄_i + η_i) mod q, 0, …, 0)`` — a post-processing of the central output — and the
protocol is ``(ε, (1 + e^ε) s)``-DP whenever at least ``h`` users are honest (arXiv
1906.09116 Lemma 4.1, "DP from statistical distance", as restated in GMPV Lemma 13;
Balcer, Cheu, Joseph, Mao, SODA 2021, arXiv 2004.09481, Lemma 3.4). This is
``(ε, δ, γ)``-robust shuffle privacy in the sense of Balcer–Cheu–Joseph–Mao Definition
2.9: dropping out is the worst the other users can do to privacy. Calibrating the shares
for ``h`` instead of ``n`` is what makes it hold: with shares ``Pólya(1/n)`` and only ``h``
honest users the noise would be an ``NB(γ, α)`` difference, not discrete Laplace.

Accuracy (every term an upper bound, shown separately), when all ``n`` users follow
the protocol (the largest error: fewer followers give a smaller rounding, noise and
wrap-around term): rounding ``n/(4p²)``; noise ``(n/h)·Var DLap(α)/p² =
(n/h)·2α/((1−α)² p²)`` (an ``NB(n/h, α)`` difference); wrap-around — if ``|Σ η_i| > L``
the decoded value still lies in ``[−L, q − L)``, so the error is at most ``q/p`` — at
most ``P(|η| > L)·(q/p)²``: ``2α^{L+1}/(1+α)·(q/p)²`` exactly for discrete Laplace, and
``2·P(NB(R, α) ≥ L + 1)·(q/p)²`` with the Chernoff bound :func:`nb_tail_upper` for
``R = n/h > 1`` (``|Z − Z'| > L`` needs ``Z > L`` or ``Z' > L``). ``q`` is the smallest
power of two whose wrap-around term is below :data:`WRAP_SHARE` of the other two.
With exactly ``h`` followers (the others drop out) the error with respect to their sum is
reported as ``mse_total_honest_only`` (rounding ``h/(4p²)``, discrete Laplace noise);
users who send arbitrary messages instead can move the sum arbitrarily (no error bound).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import mpmath

from ...plugin_api import DELTA, EPSILON, CertificationError, InvalidParameter, check_int, fp
from .._shared.population import honest_count
from .._shared.secure_sum import BBGN_CITATION, MAX_SIGMA, bbgn_messages, bbgn_sigma

__all__ = ["WRAP_SHARE", "DPSumPlan", "check_dp_sum_plan", "dp_sum_plan", "nb_tail_upper"]

PLAN_CITATION = (
    "Balle, Bell, Gascon, Nissim: Differentially private summation with multi-message shuffling "
    "(arXiv 1906.09116): randomized rounding (Lemma 1.1), Polya noise summing to discrete Laplace, "
    "(eps, (1 + e^eps) s)-DP from statistical distance s (Lemma 4.1); s from " + BBGN_CITATION
)
HONEST_CITATION = (
    "gamma-honest users: noise shares calibrated for ceil(gamma n) users (Balcer, Cheu, Joseph, Mao, SODA 2021, "
    "arXiv 2004.09481, Definition 2.9); split-and-mix security over the honest parties only (Ghazi, Manurangsi, "
    "Pagh, Velingker, EUROCRYPT 2020, arXiv 1909.11073, end of Section 1.1, after Ishai et al.)"
)
#: The wrap-around term of the squared error must stay below this share of the others.
WRAP_SHARE = 1e-3
_DPS = 50


_up = fp.up


@dataclass(frozen=True)
class DPSumPlan:
    """Every parameter of the protocol and every term of its error (see module docstring).

    The ``mse_*`` terms, ``rmse_total`` and ``rmse_mean`` hold when all ``n`` users follow
    the protocol (the worst case for the error); ``mse_total_honest_only`` when exactly
    ``honest_users`` do and the others drop out. ``epsilon_check``/``delta_check`` are the
    privacy of the plan recomputed from ``precision``, ``alpha``, ``honest_users``,
    ``messages`` and ``q`` by :func:`check_dp_sum_plan`.
    """

    n: int
    epsilon: float
    delta: float
    honest_fraction: float
    honest_users: int
    precision: int
    q: int
    bits_per_message: int
    sigma_min: float
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
    rmse_total: float
    rmse_mean: float
    mse_total_honest_only: float
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
    discrete Laplace noise of ``⌈γn⌉`` users at sensitivity ``precision``, and
    ``δ = (1 + e^ε)·2^−σ`` with σ re-derived by :func:`.core.bbgn_sigma` for
    ``(⌈γn⌉, messages, q)`` (security over the honest parties only)."""
    h = honest_count(plan.n, plan.honest_fraction, name="honest fraction")
    if h != plan.honest_users:
        raise CertificationError(f"the plan's honest users {plan.honest_users} differ from ceil(gamma n) = {h}")
    eps = _noise_epsilon(plan.alpha, plan.precision)
    sigma = bbgn_sigma(h, plan.messages, plan.q)
    with mpmath.workdps(_DPS):
        delta = (1 + mpmath.exp(mpmath.mpf(eps))) * mpmath.power(2, -mpmath.mpf(sigma))
        return eps, _up(delta)


def nb_tail_upper(shape: float, alpha: float, k: int) -> mpmath.mpf:
    """An upper bound on ``P(Z >= k)`` for ``Z ~ NB(shape, α)`` (pmf ``∝ Γ(j + shape)/j! α^j``),
    at the working precision: exactly ``α^k`` for ``shape = 1``; otherwise the Chernoff bound
    ``E[e^{tZ}] e^{−tk}`` with ``E[e^{tZ}] = ((1 − α)/(1 − αe^t))^shape`` at its optimum
    ``αe^t = k/(k + shape)``: ``((1 − α)(k + shape)/shape)^shape (α(k + shape)/k)^k``, or 1
    when that optimum is not above ``α`` (``t <= 0``)."""
    a, r = mpmath.mpf(alpha), mpmath.mpf(shape)
    if k <= 0:
        return mpmath.mpf(1)
    if shape == 1:
        return a**k
    u = mpmath.mpf(k) / (k + r)
    if u <= a:
        return mpmath.mpf(1)
    log_bound = r * mpmath.log((1 - a) / (1 - u)) + k * mpmath.log(a / u)
    return min(mpmath.mpf(1), mpmath.exp(log_bound))


def _error_terms(n: int, h: int, p: int, alpha: float, q: int) -> tuple[int, float, float, float]:
    """(decode margin L, rounding, noise, wrap-around) squared-error terms with all ``n``
    users following the protocol and shares calibrated for ``h``, rounded up."""
    margin = (q - n * p - 1) // 2
    with mpmath.workdps(_DPS):
        a = mpmath.mpf(alpha)
        rounding = mpmath.mpf(n) / (4 * p * p)
        noise = mpmath.mpf(n) / h * 2 * a / ((1 - a) ** 2 * p * p)
        scale = (mpmath.mpf(q) / p) ** 2
        if n == h:
            wrap = 2 * a ** (margin + 1) / (1 + a) * scale
        else:
            wrap = 2 * nb_tail_upper(mpmath.mpf(n) / h, alpha, margin + 1) * scale
        return margin, _up(rounding), _up(noise), _up(wrap)


def _honest_only_mse(h: int, p: int, alpha: float, q: int, margin: int) -> float:
    """Squared error when exactly ``h`` users follow (discrete Laplace noise), rounded up."""
    with mpmath.workdps(_DPS):
        a = mpmath.mpf(alpha)
        total = (mpmath.mpf(h) / (4 * p * p) + 2 * a / ((1 - a) ** 2 * p * p)
                 + 2 * a ** (margin + 1) / (1 + a) * (mpmath.mpf(q) / p) ** 2)
        return _up(total)


def dp_sum_plan(n: int, epsilon: float, delta: float, precision: int | None = None,
                honest_fraction: float = 1.0, sigma: float | None = None) -> DPSumPlan:
    """Plan (ε, δ)-DP summation of ``n`` reals in ``[0, 1]`` with split and mix, private
    whenever at least ``⌈γn⌉`` users (``γ = honest_fraction``) follow the protocol.

    Precision defaults to ``⌈√n⌉`` (as in arXiv 1906.09116). The whole ε goes to the
    discrete Laplace noise, whose shares are calibrated for ``h = ⌈γn⌉`` users; δ fixes
    ``σ = log₂((1 + e^ε)/δ)``, raised to ``sigma`` if given (a security floor for the
    aggregation itself); ``q`` is the smallest power of two that makes wrap-around
    negligible (module docstring); the messages are the BBGN count for ``(h, q, σ)``. The
    plan is re-checked by :func:`check_dp_sum_plan`.

    Raises:
        InvalidParameter: bad inputs, ``n < 3`` or fewer than 3 honest users (the BBGN
            bound needs ``n > e``).
        CertificationError: the re-check fails (should not happen).
    """
    n = check_int("n", n, low=3)
    epsilon = EPSILON.check(epsilon, "eps")
    delta = DELTA.check(delta, "delta")
    h = honest_count(n, honest_fraction, name="honest fraction")
    if h < 3:
        raise InvalidParameter(
            f"honest fraction: {honest_fraction!r} leaves ceil(gamma n) = {h} honest users out of n = {n} "
            "(accepted: at least 3 honest users, the Balle-Bell-Gascon-Nissim bound needs n > e)")
    if sigma is not None:
        if isinstance(sigma, bool) or not isinstance(sigma, (int, float)) or not 0 < sigma <= MAX_SIGMA:
            raise InvalidParameter(f"sigma: {sigma!r} is out of range (accepted: 0 < sigma <= {MAX_SIGMA:g})")
        sigma = float(sigma)
    p = math.isqrt(n - 1) + 1 if precision is None else check_int("precision", precision, low=1, high=10**9)
    alpha = _alpha(epsilon, p)
    if not alpha < 1.0:
        raise InvalidParameter(
            f"eps: {epsilon!r} is out of range for precision p = {p} (accepted: eps/p large enough that "
            f"alpha = e^(-eps/p) < 1 in double precision, about eps >= {2.3e-16 * p:.2g})")
    with mpmath.workdps(_DPS):
        sigma_delta = _up(mpmath.log(1 + mpmath.exp(mpmath.mpf(epsilon)), 2) - mpmath.log(mpmath.mpf(delta), 2))
    sigma_target = max(sigma_delta, sigma or 0.0)
    bits = (n * p).bit_length()  # smallest power of two above n*p
    while True:
        q = 2**bits
        margin, rounding, noise, wrap = _error_terms(n, h, p, alpha, q)
        if margin >= 0 and wrap <= WRAP_SHARE * (rounding + noise):
            break
        bits += 1
    m = bbgn_messages(h, q, sigma_target)
    with mpmath.workdps(_DPS):
        total = _up(mpmath.mpf(rounding) + mpmath.mpf(noise) + mpmath.mpf(wrap))
        rmse = _up(mpmath.sqrt(mpmath.mpf(total)))
        rmse_mean = _up(mpmath.mpf(rmse) / n)
    if h == n:
        noise_total = f"discrete Laplace, P(k) proportional to alpha^|k|, alpha={alpha!r}"
    else:
        noise_total = (f"{h} honest users: discrete Laplace, P(k) proportional to alpha^|k|, alpha={alpha!r}; "
                       f"all {n}: difference of two NB({n}/{h}, alpha)")
    plan = DPSumPlan(
        n=n, epsilon=epsilon, delta=delta, honest_fraction=float(honest_fraction), honest_users=h,
        precision=p, q=q, bits_per_message=bits, sigma_min=sigma or 0.0,
        sigma_target=sigma_target, sigma_certified=bbgn_sigma(h, m, q), messages=m,
        total_bits_per_user=m * bits, alpha=alpha,
        noise_per_user=f"Z - Z', Z, Z' iid Polya(r=1/{h}, alpha={alpha!r})",
        noise_total=noise_total,
        decode_margin=margin, mse_rounding=rounding, mse_noise=noise, mse_wrap=wrap,
        mse_total=total, rmse_total=rmse, rmse_mean=rmse_mean,
        mse_total_honest_only=_honest_only_mse(h, p, alpha, q, margin),
        epsilon_check=0.0, delta_check=0.0,
        citation=PLAN_CITATION if h == n else f"{PLAN_CITATION}; {HONEST_CITATION}",
    )
    eps_check, delta_check = check_dp_sum_plan(plan)
    if eps_check > epsilon or delta_check > delta:
        raise CertificationError(
            f"the plan re-checks to (eps, delta) = ({eps_check!r}, {delta_check!r}), above the target"
        )
    return DPSumPlan(**{**plan.to_dict(), "epsilon_check": eps_check, "delta_check": delta_check})

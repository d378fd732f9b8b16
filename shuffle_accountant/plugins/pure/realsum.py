"""Pure-DP real summation in the shuffle model, bit by bit (Ghazi, Kumar, Manurangsi,
"Pure-DP aggregation in the shuffle model: error-optimal and communication-efficient",
arXiv 2305.17634, Corollary 3: "running [the protocol of Ghazi, Golowich, Kumar,
Manurangsi, Pagh, Velingker, ITC 2020, arXiv 2002.01919] bit-by-bit with an appropriate
privacy budget split").

The paper states Corollary 3 only asymptotically (RMSE ``O(1/ε)``, ``O(log³n/ε)`` messages)
and gives neither the number of bits nor the split. This module implements that
reduction with the number of bits ``L`` and the split as explicit, printed choices:

1. each user rounds ``x·M/Δ`` (``M = 2^L − 1``, ``x`` in ``[0, Δ]``) randomly to an integer
   ``m`` in ``{0..M}`` (down with probability one minus the fractional part, so
   ``E m = xM/Δ`` and the rounding variance is at most 1/4 per user);
2. for each bit ``j = 0..L−1`` of ``m`` the counting protocol of :mod:`.count` runs with
   its own target ``ε_j``, messages labelled ``j``;
3. the analyzer outputs ``(Δ/M) Σ_j 2^j C_j`` with ``C_j`` the message sum of run ``j``.

Privacy (exact reduction): the runs are independent, so for two fixed grid values the
log-ratio of the views is the sum of the runs' log-ratios; over all pairs of ``L``-bit
values the worst case is ``Σ_j max(d∞,j(1‖0), d∞,j(0‖1)) <= Σ_j ε_j = ε`` (basic
composition of Lemma 8). Randomized rounding makes each view a mixture of grid views, and
a mixture cannot exceed the worst pair of its components (quasi-convexity of ``d∞``).

Error (derived here): in grid units the error is ``R + Σ_j 2^j N_j − T`` with ``R`` the
rounding error (``E R² <= n/4``), ``N_j ~ DLap(ε′_j)`` and ``T = Σ_j 2^j D_j``,
``D_j ~ Bin(c_j, q_j)`` the dropped inputs (``c_j <= n`` users with bit ``j`` set). Hence
``MSE <= (Δ/M)² [Σ_j 4^j Var(DLap(ε′_j)) + (√(n/4) + √(n Σ 4^j q_j(1−q_j) + (n Σ 2^j q_j)²))²]``
for every data set (Minkowski), and without the rounding term it is *exact* for the data
set in which every user holds ``Δ`` (all bits set, no rounding).

Split (this tool's choice, printed): ``mse`` minimises ``Σ_j 4^j Var(DLap(ε_j))`` subject to
``Σ ε_j = ε`` (Lagrange: ``4^j g(ε_j)`` equal for all ``j`` with ``g = −Var(DLap)′``; for
small ``ε`` this is ``ε_j ∝ 2^{2j/3}``); ``uniform`` gives ``ε/L`` to every bit (more error,
fewer messages for the low bits).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from scipy import optimize

from ...plugin_api import USERS_RANGE, CertificationError, IntRange, InvalidParameter, RealRange, fp
from .._shared.noise import dlap_variance
from .count import EPSILON, WINDOW_LIMIT, PureParams, plan, verify, window_points

CITATION = ("Ghazi, Kumar, Manurangsi, 'Pure-DP aggregation in the shuffle model: error-optimal and "
            "communication-efficient' (arXiv 2305.17634), Corollary 3 (bit-by-bit reduction of Ghazi, Golowich, "
            "Kumar, Manurangsi, Pagh, Velingker, ITC 2020, arXiv 2002.01919)")
#: Bits of the fixed-point grid: 1 <= L <= 40.
BITS = IntRange("bits", 1, 40)
#: Upper end Δ of the inputs' range [0, Δ].
VALUE_RANGE = RealRange("range", 0.0, 1e15, low_open=True)
SPLITS = ("mse", "uniform")


def _log_g(a: float) -> float:
    """``log(−d/da Var(DLap(a)))`` = ``log(Var(DLap(a)) (1 + e^{−a})/(1 − e^{−a}))``."""
    return math.log(2.0) - a - 3.0 * math.log(-math.expm1(-a)) + math.log1p(math.exp(-a))


def split_budget(eps: float, bits: int, split: str = "mse") -> tuple[float, ...]:
    """Budgets ``ε_0..ε_{L−1}`` (bit ``j`` has weight ``2^j``) with ``fsum <= ε`` in floating point."""
    eps = EPSILON.check(eps, "eps")
    bits = BITS.check(bits)
    if split == "uniform":
        parts = [eps / bits] * bits
    elif split == "mse":
        if bits == 1:
            parts = [eps]
        else:
            lo_u, hi_u = math.log(1e-300), math.log(2000.0)  # search log(a)

            def inverse_g(log_target: float) -> float:
                f = lambda u: _log_g(math.exp(u)) - log_target  # noqa: E731
                if f(hi_u) >= 0:
                    return math.exp(hi_u)
                if f(lo_u) <= 0:
                    return math.exp(lo_u)
                return math.exp(float(optimize.brentq(f, lo_u, hi_u, xtol=1e-15, rtol=1e-15, maxiter=500)))

            def total(log_mu: float) -> float:
                return math.fsum(inverse_g(log_mu - j * math.log(4.0)) for j in range(bits)) - eps

            a, b = -2100.0, 2100.0 + bits * math.log(4.0)
            if not total(b) < 0.0:  # (every bit at the search's least budget, 1e-300, already exceeds eps)
                raise CertificationError(f"eps = {eps!r} is below the least total budget the mse split resolves "
                                         f"({bits} bits x 1e-300): use a larger eps or --split uniform")
            log_mu = float(optimize.brentq(total, a, b, xtol=1e-13, rtol=1e-15, maxiter=500))
            parts = [inverse_g(log_mu - j * math.log(4.0)) for j in range(bits)]
            scale = eps / math.fsum(parts)
            parts = [p * scale for p in parts]
    else:
        raise InvalidParameter(f"split: {split!r} is not a known split (accepted: {', '.join(SPLITS)})")
    while math.fsum(parts) > eps:
        parts = [p * (1 - 4 * fp.UNIT_ROUNDOFF) for p in parts]
    if min(parts) <= 0:
        raise CertificationError("a bit's budget underflows to 0: use fewer bits")
    return tuple(parts)


@dataclass(frozen=True)
class SumCheck:
    """Windowed max-divergence of the whole protocol (a check): ``Σ_j max(d10_j, d01_j)``
    over the runs; ``unchecked`` lists the runs whose window was too large to evaluate (then
    the total is not available and ``holds`` is ``None``)."""

    max_divergence: float | None
    rounding_allowance: float
    eps: float
    per_bit: tuple[tuple[float, float] | None, ...]
    unchecked: tuple[tuple[int, str], ...] = ()

    @property
    def holds(self) -> bool | None:
        if self.max_divergence is None:
            return None
        return self.max_divergence + self.rounding_allowance <= self.eps

    def to_dict(self) -> dict[str, Any]:
        return {"max_divergence": self.max_divergence, "rounding_allowance": self.rounding_allowance,
                "eps": self.eps, "holds": self.holds, "per_bit": [list(p) if p else None for p in self.per_bit],
                "unchecked": [{"bit": j, "reason": r} for j, r in self.unchecked]}


@dataclass(frozen=True)
class SumPlan:
    """Corollary 3's reduction with ``L`` bits, the given split and per-bit counting plans."""

    eps: float
    n: int
    bits: int
    value_range: float
    rho: float
    split: str
    rule: str
    bit_eps: tuple[float, ...]
    plans: tuple[PureParams, ...]

    @property
    def grid(self) -> int:
        return 2**self.bits - 1

    @property
    def unit(self) -> float:
        """Value of one grid step, ``Δ/M``."""
        return self.value_range / self.grid

    @property
    def noise_variance(self) -> float:
        """``Σ_j 4^j Var(DLap(ε′_j))`` in grid units (exact, unbiased part of the error)."""
        return math.fsum(4.0**j * dlap_variance(p.eps_prime) for j, p in enumerate(self.plans))

    @property
    def drop_second_moment(self) -> float:
        """``n Σ 4^j q_j(1−q_j) + (n Σ 2^j q_j)²``: ``E T²`` when every user has every bit set
        (an upper bound on ``E T²`` for every data set), grid units."""
        var = self.n * math.fsum(4.0**j * p.q * (1 - p.q) for j, p in enumerate(self.plans))
        bias = self.n * math.fsum(2.0**j * p.q for j, p in enumerate(self.plans))
        return var + bias * bias

    @property
    def mse_at_max(self) -> float:
        """Exact MSE for the data set where every user holds ``Δ`` (no rounding error)."""
        return self.unit**2 * (self.noise_variance + self.drop_second_moment) * (1 + 64 * self.bits * fp.UNIT_ROUNDOFF)

    @property
    def rounding_variance_bound(self) -> float:
        """``n (Δ/M)²/4``: the randomized rounding's variance is at most this (exact at fractional parts 1/2)."""
        return self.n * self.unit**2 / 4.0

    @property
    def mse_bound(self) -> float:
        """Upper bound on the MSE for every data set (module docstring)."""
        cross = (math.sqrt(self.n / 4.0) + math.sqrt(self.drop_second_moment)) ** 2
        return self.unit**2 * (self.noise_variance + cross) * (1 + 64 * self.bits * fp.UNIT_ROUNDOFF)

    @property
    def rmse_bound(self) -> float:
        return math.sqrt(self.mse_bound) * (1 + 2 * fp.UNIT_ROUNDOFF)

    @property
    def central_dlap_mse(self) -> float:
        """Comparator: ``(Δ/M)² Var(DLap(ε/M))``, the central discrete Laplace mechanism on the
        rounded integer sum (sensitivity ``M``), rounding error not included."""
        return self.unit**2 * dlap_variance(self.eps / self.grid)

    def expected_messages(self, all_bits_set: bool = True) -> float:
        """Exact expected messages of a user whose grid value has every bit set (``x = Δ``,
        the most) or none (``x = 0``, the fewest)."""
        x = 1 if all_bits_set else 0
        return math.fsum(p.expected_messages(x) for p in self.plans)

    def check(self) -> SumCheck:
        """The windowed max-divergence of every run (:func:`.count.verify`), composed exactly."""
        per_bit: list[tuple[float, float] | None] = [None] * self.bits
        unchecked = [(j, f"verification window of {window_points(p):.3g} points exceeds the limit {WINDOW_LIMIT:.3g}")
                     for j, p in enumerate(self.plans) if window_points(p) > WINDOW_LIMIT]
        sizes = [window_points(p) for p in self.plans]
        if not unchecked and math.fsum(sizes) > 2 * WINDOW_LIMIT:
            unchecked = [(max(range(self.bits), key=lambda j: sizes[j]),
                          f"the runs' windows total {math.fsum(sizes):.3g} points, above the limit {2 * WINDOW_LIMIT:.3g}")]
        allowance = 0.0
        for j, p in enumerate(self.plans):
            if unchecked:  # the total cannot be had: do not spend time on the other runs
                break
            v = verify(p)
            per_bit[j] = (v.divergence_1_0, v.divergence_0_1)
            allowance += v.rounding_allowance
        total = None
        if not unchecked:
            total = math.fsum(max(d) for d in per_bit if d is not None) * (1 + 2 * self.bits * fp.UNIT_ROUNDOFF)
        return SumCheck(total, allowance, self.eps, tuple(per_bit), tuple(unchecked))

    def to_dict(self) -> dict[str, Any]:
        return {
            "eps": self.eps, "n": self.n, "bits": self.bits, "range": self.value_range, "rho": self.rho,
            "split": self.split, "rule": self.rule, "grid": self.grid, "bit_eps": list(self.bit_eps),
            "bit_plans": [p.to_dict() for p in self.plans], "mse_bound": self.mse_bound, "rmse_bound": self.rmse_bound,
            "mse_at_max": self.mse_at_max, "rounding_variance_bound": self.rounding_variance_bound,
            "noise_variance_grid_units": self.noise_variance, "central_dlap_mse": self.central_dlap_mse,
            "expected_messages_max": self.expected_messages(True), "expected_messages_zero": self.expected_messages(False),
        }


def real_sum(eps: float, n: int, bits: int, value_range: float = 1.0, rho: float = 0.5, split: str = "mse",
             rule: str = "optimiser") -> SumPlan:
    """Corollary 3's bit-by-bit protocol: ``L = bits`` runs of the counting protocol with
    budgets from :func:`split_budget`, each planned by ``rule`` (:func:`.count.plan`)."""
    eps = EPSILON.check(eps, "eps")
    n = USERS_RANGE.check(n, "n")
    value_range = VALUE_RANGE.check(value_range)
    budgets = split_budget(eps, bits, split)
    cache: dict[float, PureParams] = {}
    plans = []
    for j, e in enumerate(budgets):
        if e not in cache:
            try:
                cache[e] = plan(e, n, rho, rule)
            except CertificationError as exc:
                raise CertificationError(f"bit {j} (eps_j = {e:.4g}): {exc}") from None
        plans.append(cache[e])
    return SumPlan(eps, n, len(budgets), value_range, rho, split, rule, budgets, tuple(plans))


__all__ = ["BITS", "CITATION", "SPLITS", "VALUE_RANGE", "SumCheck", "SumPlan", "real_sum", "split_budget"]

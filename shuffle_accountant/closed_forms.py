"""Closed forms of Feldman, McMillan, Talwar, "Hiding Among the Clones", FOCS 2021
(arXiv 2012.12803): Theorem 3.1 (an explicit (eps, delta) for shuffling n reports of an
eps0-DP local randomizer) and Theorem 3.8 (local randomizers that are only (eps0, delta0)-DP).

Every value is rounded in the pessimistic direction. Theorem 3.1 says nothing outside its
regime ``eps0 <= log(n / (16 log(2/delta)))``; such inputs are reported as not applicable.
"""

from __future__ import annotations

import math
from typing import Callable

from .comparators import Outcome
from .numeric.profile import UNDERFLOW_FLOOR
from .numeric.search import NoBracket, monotone_boundary

TINY_DELTA = UNDERFLOW_FLOOR
THEOREM_3_1_REGIME = "outside Theorem 3.1's regime eps0 <= log(n / (16 log(2/delta)))"




def closed_form_regime(eps0: float, n: int, delta: float) -> bool:
    """FMT21 Theorem 3.1 applies when ``eps0 <= log(n / (16 log(2/delta)))``."""
    return eps0 <= math.log(n / (16.0 * math.log(2.0 / delta)))


def closed_form_epsilon(eps0: float, n: int, delta: float) -> float:
    """FMT21 Theorem 3.1, rounded up:
    ``log(1 + (e^eps0 - 1)/(e^eps0 + 1) (8 sqrt(e^eps0 log(4/delta) / n) + 8 e^eps0 / n))``.
    Callers check :func:`closed_form_regime` first."""
    e = math.exp(eps0)
    x = math.expm1(eps0) / (e + 1.0) * (8.0 * math.sqrt(e * math.log(4.0 / delta) / n) + 8.0 * e / n)
    return math.log1p(x) * (1.0 + 1e-13)


def closed_form_delta(eps0: float, n: int, eps: float) -> float | None:
    """The smallest delta for which FMT21 Theorem 3.1 gives ``eps`` (rounded up), or
    ``None`` when no delta in (0, 1) reaches ``eps`` inside the theorem's regime.

    The theorem's eps decreases in delta, and its regime ``eps0 <= log(n/(16 log(2/delta)))``
    is ``delta >= 2 exp(-n e^{-eps0} / 16)``; so the answer is the larger of the delta that
    solves the formula and the regime's smallest delta.
    """
    e = math.exp(eps0)
    x = math.expm1(eps) * (e + 1.0) / math.expm1(eps0) - 8.0 * e / n
    if x <= 0.0:
        return None
    log_4_over_delta = n * x * x / (64.0 * e)
    delta = 4.0 * math.exp(-log_4_over_delta) * (1.0 + 1e-12)
    regime_floor = 2.0 * math.exp(-n / (16.0 * e)) * (1.0 + 1e-12)
    # below 1e-300 the value is reported as 1e-300, still an upper bound
    delta = max(delta, regime_floor, TINY_DELTA)
    if not 0.0 < delta < 1.0 or not closed_form_regime(eps0, n, delta):
        return None
    return delta


def delta0_penalty(eps0: float, n: int, delta0: float) -> Callable[[float], float]:
    """FMT21 Theorem 3.8: with (eps0, delta0)-DP local randomizers the shuffled output is
    ``(eps, delta + (e^eps + 1)(1 + e^{-eps0}/2) n delta0)``-DP, where (eps, delta) is the
    pure-eps0 guarantee. Returns ``eps -> extra delta`` (affine in ``e^eps``)."""
    c = (1.0 + 0.5 * math.exp(-eps0)) * n * delta0 * (1.0 + 1e-15)
    return lambda eps: (math.exp(eps) + 1.0) * c


def regime_floor(eps0: float, n: int) -> float:
    """The smallest delta inside Theorem 3.1's regime: ``2 exp(-n e^{-eps0} / 16)`` (rounded up)."""
    return 2.0 * math.exp(-n / (16.0 * math.exp(eps0))) * (1.0 + 1e-12)


def theorem_epsilon(eps0: float, n: int, delta: float, delta0: float = 0.0) -> Outcome:
    """eps at ``delta`` by Theorem 3.1, or with ``delta0 > 0`` by Theorems 3.1 + 3.8.

    With ``delta0``, delta is split into the pure part ``d`` and the Theorem 3.8 penalty at
    the resulting eps; eps decreases in ``d`` while the penalty grows with eps, so the
    feasible ``d`` form an interval starting at the regime's floor, and the best split is
    its right end, found by :func:`.numeric.search.monotone_boundary` (every reported split
    was evaluated and satisfies ``d + penalty(eps(d)) <= delta``).
    """
    if not delta0:
        if not closed_form_regime(eps0, n, delta):
            return Outcome(None, THEOREM_3_1_REGIME)
        return Outcome(closed_form_epsilon(eps0, n, delta))
    extra = delta0_penalty(eps0, n, delta0)
    floor = max(regime_floor(eps0, n), TINY_DELTA)

    def ok(d: float) -> bool:
        return closed_form_regime(eps0, n, d) and d + extra(closed_form_epsilon(eps0, n, d)) <= delta

    if floor >= delta:
        return Outcome(None, "no split of delta satisfies Theorems 3.1 and 3.8 here")
    try:
        split = monotone_boundary(ok, floor, feasible_side="low", low=floor, high=delta, rtol=1e-12)
    except NoBracket:
        return Outcome(None, "no split of delta satisfies Theorems 3.1 and 3.8 here")
    return Outcome(closed_form_epsilon(eps0, n, split.feasible), details={"delta_pure": split.feasible})


def theorem_delta(eps0: float, n: int, eps: float, delta0: float = 0.0) -> Outcome:
    """delta at ``eps`` by Theorem 3.1 (+ Theorem 3.8's penalty when ``delta0 > 0``)."""
    if eps >= eps0:
        # each report is (eps0, delta0)-DP in its user's data and shuffling is post-processing
        return Outcome(delta0, details={"note": "eps >= eps0: (eps0, delta0)-DP already holds (shuffling is post-processing)"})
    extra = delta0_penalty(eps0, n, delta0)(eps) if delta0 else 0.0
    d = closed_form_delta(eps0, n, eps)
    if d is None:
        return Outcome(None, "Theorem 3.1 reaches this eps with no delta < 1 inside its regime")
    return Outcome(min(d + extra, 1.0))

"""Inverse questions for the DP-summation plan of :mod:`.dpsum`: for a target error at a
target (ε, δ) (and optionally a security floor σ and an honest fraction γ),

* ``find="precision"`` — the least rounding precision ``p`` (for a given ``n``) whose plan
  meets the target: the coarsest encoding, hence the fewest bits per message;
* ``find="messages"`` — the fewest messages per user over all precisions (given ``n``);
* ``find="n"`` — the smallest number of users whose plan meets a target RMSE of the
  *mean* (the error of the sum does not shrink with ``n``: with ``p = ⌈√n⌉`` it tends to
  ``1/4 + 2/(γε²)``).

The error is the plan's own upper bound, as ``splitmix dp-sum`` prints it: ``mse_total``
(``mse``), its square root ``rmse_total`` (``rmse``) or ``rmse_total / n`` (``rmse_mean``),
all for the worst case where every user follows the protocol (the error with only the
honest users following is never larger; :mod:`.dpsum`).

How each answer is certified (the forward computation decides every claim):

1. :func:`shuffle_accountant.numeric.search.monotone_boundary` (integers) brackets the
   boundary between two adjacent values: the answer, whose plan meets the target, and
   the value one step less, whose plan does not (both computed by :func:`.dpsum.dp_sum_plan`).
2. No smaller value meets the target either: the whole range below the answer is covered
   by blocks ``[a, b]`` on which a lower bound of the plan's error already exceeds the
   target, split in halves where it does not, down to single values, which are then
   evaluated by the forward computation (in increasing order, so the first one that
   meets the target — if the plan's error were not monotone — becomes the answer).
   The lower bounds: rounding ``n/(4p²)`` is decreasing in ``p``; the noise term
   ``(n/h)·g(p)``, ``g(p) = 2α/((1−α)² p²) = (2/ε²)(x/sinh x)²`` with ``x = ε/(2p)``
   (``α = e^{−ε/p}``, the plan's α is at least that), is increasing in ``p`` because
   ``x/sinh x`` decreases in ``x``; the wrap-around term is non-negative. So on a block
   of precisions ``[a, b]`` the plan's MSE is at least ``n/(4b²) + (n/h)·g(a)``, and on a
   block of user counts ``[a, b]`` its MSE over ``n²`` is at least
   ``1/(4 p(b)² b) + g(p(a))/(h(b) b)`` (``p(·)`` and ``h(·) = ⌈γ·⌉`` non-decreasing).
   When the work limit :data:`CERTIFY_LIMIT` is reached first the answer is labelled
   ``upper`` (it meets the target; a smaller one was not excluded) instead of ``exact``.
3. Fewest messages: the plan at the least precision ``p*`` has ``m*`` messages; every
   precision below ``p*`` fails the target (step 2), and every precision ``p >= p*`` uses
   ``q >= 2^bitlength(n p*)``, so at least ``bbgn_messages(h, 2^bitlength(n p*), σ)``
   messages (the BBGN count grows with ``q``). When that floor equals ``m*``, ``m*`` is the
   fewest (``exact``); otherwise it is labelled ``upper``.

Sources: the protocol and its error terms — Balle, Bell, Gascón, Nissim, "Differentially
private summation with multi-message shuffling" (arXiv 1906.09116); the message count —
Balle, Bell, Gascón, Nissim, arXiv 1909.11225 / CCS 2020 (arXiv 2002.00817); honest
parties — Ghazi, Manurangsi, Pagh, Velingker, EUROCRYPT 2020 (arXiv 1909.11073), §1.1,
and Balcer, Cheu, Joseph, Mao, SODA 2021 (arXiv 2004.09481), Definition 2.9.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Any

import mpmath

import shuffle_accountant.plugin_api as _api
from ...plugin_api import EPSILON, InvalidParameter, check_int, fp, round_directed
from .._shared.population import GAMMA, honest_count
from .._shared.secure_sum import bbgn_messages
from .dpsum import DPSumPlan, dp_sum_plan

__all__ = ["CERTIFY_LIMIT", "FIND", "METRICS", "DPSumSolution", "solve_dp_sum"]

#: What can be solved for.
FIND = ("n", "precision", "messages")
#: Target metric -> the plan field it reads (and the command-line flag that sets it).
METRICS = {"mse": "mse_total", "rmse": "rmse_total", "rmse_mean": "rmse_mean"}
_FLAGS = {"mse": "--mse", "rmse": "--rmse", "rmse_mean": "--rmse-mean"}
#: Forward evaluations allowed when excluding the values below the answer (step 2).
CERTIFY_LIMIT = 400
_MAX_PRECISION = 10**9
_MAX_N = 10**12
_MARGIN = 1e-9  # relative margin between a lower bound and the target
_DPS = 40


@dataclass(frozen=True)
class DPSumSolution:
    """The answer to one inverse question, with the two plans that certify it.

    ``plan`` (at ``answer``) meets the target; ``below`` (at ``answer − 1`` for ``n`` and
    ``precision``, at ``precision − 1`` for ``messages``) does not, or is ``None`` when the
    answer is the smallest value allowed. ``kind`` is ``exact`` when every smaller value is
    excluded (module docstring), ``upper`` otherwise; ``certificate`` says how.
    """

    find: str
    metric: str
    target: float
    answer: int
    kind: str
    achieved: float
    below_value: int | None
    below_achieved: float | None
    certificate: str
    evaluations: int
    plan: DPSumPlan
    below: DPSumPlan | None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["plan"] = self.plan.to_dict()
        out["below"] = self.below.to_dict() if self.below is not None else None
        return out


def _g_lower(epsilon: float, p: int) -> mpmath.mpf:
    """``2e^{−ε/p}/((1 − e^{−ε/p})² p²)`` (the noise variance per unit of ``n/h`` at
    precision ``p`` with the exact ``α``), rounded down by a relative ``1e-30``."""
    with mpmath.workdps(_DPS):
        a = mpmath.exp(-mpmath.mpf(epsilon) / p)
        return 2 * a / ((1 - a) ** 2 * p * p) * (1 - mpmath.mpf(10) ** -30)


def _target_mse(metric: str, target: float, n: int) -> mpmath.mpf:
    """The MSE of the sum at which ``metric`` equals ``target`` (for ``n`` users)."""
    t = mpmath.mpf(target)
    return t if metric == "mse" else (t * t if metric == "rmse" else (t * n) ** 2)


def _precision_of(n: int, precision: int | None) -> int:
    return math.isqrt(n - 1) + 1 if precision is None else precision


def _first_feasible(lo: int, hi: int, block_fails: Callable[[int, int], bool], feasible: Callable[[int], bool],
                    limit: int) -> tuple[int | None, bool, int]:
    """Scan ``[lo, hi]`` in increasing order for the first value where ``feasible`` holds:
    blocks where ``block_fails`` proves every value infeasible are skipped, others are halved
    down to single values, which are evaluated. Returns (first feasible or ``None``, whether
    the whole range was decided within ``limit`` evaluations, evaluations)."""
    stack = [(lo, hi)] if lo <= hi else []
    evaluations = 0
    while stack:
        a, b = stack.pop()
        if block_fails(a, b):
            continue
        if a == b:
            if evaluations >= limit:
                return None, False, evaluations
            evaluations += 1
            if feasible(a):
                return a, True, evaluations
            continue
        mid = (a + b) // 2
        stack.append((mid + 1, b))  # popped after the lower half: increasing order
        stack.append((a, mid))
    return None, True, evaluations


def _least_n_with_three_honest(gamma: float) -> int:
    """Smallest ``n >= 3`` with ``⌈γn⌉ >= 3`` (reading γ as its decimal), i.e. ``γn > 2``."""
    g = Fraction(repr(gamma))
    return max(3, math.floor(Fraction(2) / g) + 1)


def solve_dp_sum(find: str, epsilon: float, delta: float, target: float, metric: str = "rmse", *,
                 n: int | None = None, precision: int | None = None, honest_fraction: float = 1.0,
                 sigma: float | None = None) -> DPSumSolution:
    """Answer one inverse question about :func:`.dpsum.dp_sum_plan` (module docstring).

    ``find="precision"`` and ``find="messages"`` need ``n`` (and refuse ``precision``);
    ``find="n"`` needs ``metric="rmse_mean"`` and uses ``precision`` if given, else
    ``⌈√n⌉`` at each ``n``.

    Raises:
        InvalidParameter: bad inputs, a missing or superfluous parameter, or a target no
            value in the allowed range meets (the message names the flag and the range).
    """
    if find not in FIND:
        raise InvalidParameter(f"find: {find!r} is not one of {', '.join(FIND)}")
    if metric not in METRICS:
        raise InvalidParameter(f"metric: {metric!r} is not one of {', '.join(METRICS)}")
    flag = _FLAGS[metric]
    epsilon = EPSILON.check(epsilon, "eps")
    if isinstance(target, bool) or not isinstance(target, (int, float)) or not (0 < target < math.inf):
        raise InvalidParameter(f"{flag}: {target!r} is out of range (accepted: a finite target > 0)")
    target = float(target)
    gamma = GAMMA.check(honest_fraction, "honest fraction")

    def plan_at(n_: int, p_: int | None) -> DPSumPlan:
        return dp_sum_plan(n_, epsilon, delta, p_, gamma, sigma)

    def value(plan: DPSumPlan) -> float:
        return float(getattr(plan, METRICS[metric]))

    if find == "n":
        return _solve_n(metric, flag, target, epsilon, gamma, precision, plan_at, value)
    if n is None:
        raise InvalidParameter(f"n: --n is required with --find {find}")
    if precision is not None:
        raise InvalidParameter(f"precision: --precision cannot be given with --find {find} (it is the unknown)")
    n = check_int("n", n, low=3, high=_MAX_N)
    plan_at(n, 1)  # validates delta, gamma, sigma and the honest count once, with their own messages
    return _solve_precision(find, metric, flag, target, n, epsilon, gamma, sigma, plan_at, value)


def _solve_precision(find: str, metric: str, flag: str, target: float, n: int, epsilon: float, gamma: float,
                     sigma: float | None, plan_at: Callable[[int, int | None], DPSumPlan],
                     value: Callable[[DPSumPlan], float]) -> DPSumSolution:
    h = honest_count(n, gamma, name="honest fraction")
    need = _target_mse(metric, target, n)
    with mpmath.workdps(_DPS):
        floor = mpmath.mpf(n) / h * 2 / mpmath.mpf(epsilon) ** 2  # MSE > floor at every precision
        if floor >= need:
            shown = {"mse": floor, "rmse": mpmath.sqrt(floor), "rmse_mean": mpmath.sqrt(floor) / n}[metric]
            raise InvalidParameter(
                f"{flag}: {target!r} is out of reach at eps = {epsilon!r}, n = {n}, {h} honest users (accepted: "
                f"above {round_directed(fp.up(shown), 'upper')}, the limit of the discrete Laplace noise as the precision grows)")
        start = max(1, min(_MAX_PRECISION, math.ceil(math.sqrt(n / (4 * float(need - floor))))))
    high = max(1, min(_MAX_PRECISION, int(epsilon / 4.6e-16)))  # alpha = e^(-eps/p) < 1 in double
    start = min(start, high)

    def ok(p: float) -> bool:
        return value(plan_at(n, int(p))) <= target

    boundary = _search(ok, start, 1, high, flag, f"precision <= {high}", plan_at(n, high), value)
    answer = int(boundary.feasible)

    def block_fails(a: int, b: int) -> bool:
        with mpmath.workdps(_DPS):
            lb = mpmath.mpf(n) / (4 * mpmath.mpf(b) ** 2) + mpmath.mpf(n) / h * _g_lower(epsilon, a)
            return bool(lb > need * (1 + _MARGIN))

    first, decided, extra = _first_feasible(1, answer - 1, block_fails, lambda p: ok(p), CERTIFY_LIMIT)
    answer = first if first is not None else answer
    plan = plan_at(n, answer)
    below = plan_at(n, answer - 1) if answer > 1 else None
    evaluations = boundary.evaluations + extra
    certificate = ("every precision below is excluded by the forward computation or by the monotone lower bound "
                   "n/(4p^2) + (n/h) g(p) of the plan's MSE" if decided else
                   f"precisions below were not all excluded within {CERTIFY_LIMIT} evaluations")
    kind = "exact" if decided else "upper"
    if find == "messages":
        q_floor = 2 ** (n * answer).bit_length()
        m_floor = bbgn_messages(h, q_floor, plan.sigma_target)
        if m_floor >= plan.messages and decided:
            certificate = (f"every precision below {answer} fails the target; every precision >= {answer} has "
                           f"q >= 2^{q_floor.bit_length() - 1}, hence >= {m_floor} messages (BBGN count grows with q)")
        else:
            kind = "upper"
            certificate = (f"{certificate}; precisions >= {answer} need at least {m_floor} messages by the q floor, "
                           f"fewer than the {plan.messages} found, so fewer messages were not excluded")
        return DPSumSolution(find, metric, target, plan.messages, kind, value(plan), answer - 1 if below else None,
                             value(below) if below else None, certificate, evaluations, plan, below)
    return DPSumSolution(find, metric, target, answer, kind, value(plan), answer - 1 if below else None,
                         value(below) if below else None, certificate, evaluations, plan, below)


def _solve_n(metric: str, flag: str, target: float, epsilon: float, gamma: float, precision: int | None,
             plan_at: Callable[[int, int | None], DPSumPlan], value: Callable[[DPSumPlan], float]) -> DPSumSolution:
    if metric != "rmse_mean":
        raise InvalidParameter(
            f"{flag}: --find n needs a target for the mean, --rmse-mean (the error of the sum does not shrink "
            "as n grows: with precision ceil(sqrt n) it tends to 1/4 + 2/(gamma eps^2))")
    if precision is not None:
        precision = check_int("precision", precision, low=1, high=_MAX_PRECISION)
    low = _least_n_with_three_honest(gamma)
    if low > _MAX_N:
        raise InvalidParameter(f"honest fraction: {gamma!r} leaves fewer than 3 honest users for every n <= 1e12 "
                               "(accepted: gamma > 2e-12)")
    plan_at(low, precision)  # validates delta, sigma and eps at the smallest n, with their own messages
    with mpmath.workdps(_DPS):
        guess = math.sqrt(0.25 + 2 / (gamma * epsilon**2)) / target
    start = max(low, min(_MAX_N, math.ceil(guess)))

    def ok(x: float) -> bool:
        return value(plan_at(int(x), precision)) <= target

    boundary = _search(ok, start, low, _MAX_N, flag, "n <= 1e12", plan_at(_MAX_N, precision), value)
    answer = int(boundary.feasible)
    need = mpmath.mpf(target) ** 2

    def block_fails(a: int, b: int) -> bool:
        h_b = honest_count(b, gamma, name="honest fraction")
        p_a, p_b = _precision_of(a, precision), _precision_of(b, precision)
        with mpmath.workdps(_DPS):
            lb = 1 / (4 * mpmath.mpf(p_b) ** 2 * b) + _g_lower(epsilon, p_a) / (mpmath.mpf(h_b) * b)
            return bool(lb > need * (1 + _MARGIN))

    first, decided, extra = _first_feasible(low, answer - 1, block_fails, lambda x: ok(x), CERTIFY_LIMIT)
    answer = first if first is not None else answer
    plan = plan_at(answer, precision)
    below = plan_at(answer - 1, precision) if answer > low else None
    certificate = ("every smaller n is excluded by the forward computation or by the monotone lower bound "
                   "1/(4 p^2 n) + g(p)/(h n) of the plan's MSE / n^2" if decided else
                   f"smaller n were not all excluded within {CERTIFY_LIMIT} evaluations")
    return DPSumSolution("n", metric, target, answer, "exact" if decided else "upper", value(plan),
                         answer - 1 if below else None, value(below) if below else None, certificate,
                         boundary.evaluations + extra, plan, below)


def _search(ok: Callable[[float], bool], start: int, low: int, high: int, flag: str, where: str,
            top: DPSumPlan, value: Callable[[DPSumPlan], float]) -> Any:
    """``monotone_boundary`` over the integers (smallest feasible value), its ``NoBracket``
    turned into a one-line refusal naming the flag and the reachable range."""
    try:
        return _api.monotone_boundary(ok, float(start), feasible_side="high", low=float(low), high=float(high),
                                      integer=True)
    except _api.NoBracket:
        raise InvalidParameter(f"{flag}: the target is not met for any {where} (accepted: at least "
                               f"{round_directed(value(top), 'upper')}, the error there)") from None

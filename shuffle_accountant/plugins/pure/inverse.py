"""Inverse (planning) questions for the pure-DP protocols of :mod:`.count`,
:mod:`.realsum` and :mod:`.histogram` (Ghazi, Kumar, Manurangsi, arXiv 2305.17634:
Theorem 6 / Lemma 11 for counting, Corollaries 3 and 4 for sums and histograms).

Every plan is the message optimiser's (:func:`.count.optimise`) for each counting run;
the error of a plan is its certified upper bound for every data set:

* ``count``: RMSE ``sqrt(Lemma 11)``;
* ``sum``: RMSE bound of :class:`.realsum.SumPlan` (rounding, noise and dropped inputs);
* ``histogram``: the upper end of the expected ℓ∞ error of :class:`.histogram.HistogramPlan`.

Questions (``find``):

* ``n``: the smallest number of users whose error is at most ``rel_error`` times ``n``
  (times ``Δ`` for sums: a relative error on the count, the mean or the frequencies);
* ``eps``: the smallest ε whose error is at most ``error`` (the strongest privacy);
* ``rho``: the largest MSE slack ρ of the optimiser (hence the fewest messages, the
  optimiser's feasible set growing with ρ) whose error is at most ``error``;
* ``bits`` (sums): the fewest bits ``L`` (hence the fewest runs and messages) whose RMSE is
  at most ``error``: every smaller ``L`` is evaluated and fails (RMSE is not monotone in
  ``L`` under the uniform split, so this is a scan, not a bisection).

``n``, ``eps`` and ``rho`` are found by :func:`shuffle_accountant.numeric.search.monotone_boundary`
and then re-verified by the forward computation: the answer meets the target, the
neighbour one step beyond it (``n − 1``; ε one relative step of 1e-6 less; ρ one step more)
does not. A plan that cannot be built (for example Theorem 6's ``q >= 1`` at tiny ``n``, or a
certification failure) counts as not meeting the target.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

from ...plugin_api import MAX_EPS, MAX_N, USERS_RANGE, CertificationError, InvalidParameter, RealRange
from .._shared.noise import dlap_variance
from ._search import NoBracket, monotone_boundary
from .count import EPSILON, OPT_RHO, PureParams, optimise
from .histogram import BUCKETS, HistogramPlan, histogram
from .realsum import BITS, VALUE_RANGE, SumPlan, real_sum

TASKS = ("count", "sum", "histogram")
FINDS = ("n", "eps", "rho", "bits")
#: A target error (absolute): RMSE for count and sum, expected l_inf for histograms.
ERROR = RealRange("error", 0.0, 1e300, low_open=True)
#: A target relative error (error / n, error / (n Δ) for sums).
REL_ERROR = RealRange("rel_error", 0.0, 1.0, low_open=True, high_open=True)
REL_STEP = 1e-6

Plan = PureParams | SumPlan | HistogramPlan


@dataclass(frozen=True)
class Task:
    """What is planned: the task and its fixed parameters."""

    task: str
    k: int | None = None
    bits: int | None = None
    value_range: float = 1.0
    split: str = "mse"

    def build(self, eps: float, n: int, rho: float, bits: int | None = None) -> Plan:
        if self.task == "count":
            return optimise(eps, n, rho)
        if self.task == "histogram":
            assert self.k is not None
            return histogram(eps, n, self.k, rho)
        b = bits if bits is not None else self.bits
        assert b is not None
        return real_sum(eps, n, b, self.value_range, rho, self.split)

    def metric(self) -> str:
        return {"count": "RMSE (Lemma 11)", "sum": "RMSE", "histogram": "expected l_inf error"}[self.task]

    def scale(self) -> float:
        """What the relative error multiplies besides ``n``: ``Δ`` for sums, 1 otherwise."""
        return self.value_range if self.task == "sum" else 1.0


def error_of(p: Plan) -> float:
    """The certified upper bound on the plan's error metric (any data set)."""
    if isinstance(p, PureParams):
        return math.sqrt(p.mse_bound)
    if isinstance(p, SumPlan):
        return p.rmse_bound
    return p.linf_bracket[1]


def messages_of(p: Plan) -> float:
    """Exact expected messages of the user sending the most (input 1, ``Δ``, any bucket)."""
    if isinstance(p, PureParams):
        return p.expected_messages(1)
    if isinstance(p, SumPlan):
        return p.expected_messages(True)
    return p.expected_messages()


@dataclass(frozen=True)
class Answer:
    """A certified answer: ``value`` meets the target (``plan``, ``error``); ``neighbour``, one
    step beyond, does not (``neighbour_error``, or ``neighbour_reason`` when no plan exists)."""

    task: str
    find: str
    value: float
    target: float
    error: float
    plan: Plan
    neighbour: float | None
    neighbour_target: float | None
    neighbour_error: float | None
    neighbour_reason: str
    evaluations: int
    metric: str

    def to_dict(self) -> dict[str, Any]:
        return {"task": self.task, "find": self.find, "value": self.value, "target": self.target, "error": self.error,
                "metric": self.metric, "expected_messages": messages_of(self.plan), "plan": self.plan.to_dict(),
                "neighbour": self.neighbour, "neighbour_target": self.neighbour_target,
                "neighbour_error": self.neighbour_error, "neighbour_reason": self.neighbour_reason,
                "evaluations": self.evaluations}


def _attempt(build: Callable[[], Plan]) -> tuple[Plan | None, str]:
    try:
        return build(), ""
    except (CertificationError, InvalidParameter) as exc:
        return None, str(exc)


def _finish(task: Task, find: str, value: float, target: float, build: Callable[[float], Plan],
            neighbour: float | None, neighbour_target: float | None, evaluations: int) -> Answer:
    """Re-verify by the forward computation: the answer meets the target, the neighbour fails."""
    p = build(value)
    err = error_of(p)
    if not err <= target:
        raise CertificationError(f"internal check failed: {find} = {value:g} gives {err:.6g} > target {target:.6g}")
    n_err, reason = None, ""
    if neighbour is not None:
        assert neighbour_target is not None
        q, why = _attempt(lambda: build(neighbour))
        if q is None:
            reason = "no plan: " + why
        else:
            n_err = error_of(q)
            if n_err <= neighbour_target:
                raise CertificationError(f"internal check failed: the neighbour {find} = {neighbour:g} also meets the target")
            reason = f"{task.metric()} {n_err:.9g} > target {neighbour_target:.9g}"
    return Answer(task.task, find, value, target, err, p, neighbour, neighbour_target, n_err, reason, evaluations,
                  task.metric())


def _validate(task: Task, rho: float, need_bits: bool = True) -> float:
    if task.task not in TASKS:
        raise InvalidParameter(f"task: {task.task!r} is not a known task (accepted: {', '.join(TASKS)})")
    if task.task == "histogram":
        BUCKETS.check(task.k)
    if task.task == "sum":
        VALUE_RANGE.check(task.value_range)
        if need_bits:
            BITS.check(task.bits)
    return OPT_RHO.check(rho)


def _meets(build: Callable[[float], Plan], target: Callable[[float], float]) -> Callable[[float], bool]:
    """The predicate of a search: a plan exists at ``x`` and its error is within ``target(x)``."""

    def ok(x: float) -> bool:
        p, _ = _attempt(lambda: build(x))
        return p is not None and error_of(p) <= target(x)

    return ok


def smallest_n(task: Task, eps: float, rel_error: float, rho: float = 0.5) -> Answer:
    """Smallest ``n`` with error ``<= rel_error · n`` (``· Δ`` for sums)."""
    eps = EPSILON.check(eps, "eps")
    rel_error = REL_ERROR.check(rel_error)
    rho = _validate(task, rho)
    scale = task.scale()

    def target(n: float) -> float:
        return rel_error * n * scale

    ok = _meets(lambda x: task.build(eps, int(x), rho), target)

    guess = math.sqrt((1 + rho) * dlap_variance(eps)) / rel_error if math.isfinite(dlap_variance(eps)) else MAX_N
    start = float(min(max(1, math.ceil(guess)), MAX_N))
    try:
        b = monotone_boundary(ok, start, feasible_side="high", low=1, high=MAX_N, integer=True)
    except NoBracket as exc:
        raise CertificationError(f"no n <= {MAX_N:.0e} meets relative error {rel_error:g}: {exc}") from None
    n = int(b.feasible)
    nb = None if b.infeasible is None else int(b.infeasible)
    return _finish(task, "n", n, target(n), lambda x: task.build(eps, int(x), rho), nb,
                   None if nb is None else target(nb), b.evaluations)


def least_eps(task: Task, n: int, error: float, rho: float = 0.5) -> Answer:
    """Smallest ε (to a relative 1e-6) with error ``<= error``."""
    n = USERS_RANGE.check(n, "n")
    error = ERROR.check(error)
    rho = _validate(task, rho)
    ok = _meets(lambda e: task.build(e, n, rho), lambda e: error)

    start = min(max(math.sqrt(2 * (1 + rho)) / error, 1e-6), MAX_EPS)
    try:
        b = monotone_boundary(ok, start, feasible_side="high", low=1e-6, high=MAX_EPS, rtol=REL_STEP)
    except NoBracket as exc:
        raise CertificationError(f"no eps in [1e-6, {MAX_EPS:g}] meets {task.metric()} <= {error:g}: {exc}") from None
    return _finish(task, "eps", b.feasible, error, lambda e: task.build(e, n, rho), b.infeasible,
                   None if b.infeasible is None else error, b.evaluations)


def largest_rho(task: Task, eps: float, n: int, error: float) -> Answer:
    """Largest optimiser slack ρ (fewest messages) with error ``<= error``."""
    eps = EPSILON.check(eps, "eps")
    n = USERS_RANGE.check(n, "n")
    error = ERROR.check(error)
    _validate(task, 0.5)
    ok = _meets(lambda r: task.build(eps, n, r), lambda r: error)

    lo, hi = OPT_RHO.low, OPT_RHO.high
    assert lo is not None and hi is not None
    start = 0.5
    if task.task == "count":  # Lemma 11 is pinned at (1+rho)Var(DLap(eps)) by the optimiser's q
        start = min(max(error**2 / dlap_variance(eps) - 1.0, lo), hi)
    try:
        b = monotone_boundary(ok, start, feasible_side="low", low=lo, high=hi, rtol=REL_STEP)
    except NoBracket as exc:
        raise CertificationError(
            f"no rho in [{lo:g}, {hi:g}] meets {task.metric()} <= {error:g} at eps = {eps:g} "
            f"(the error is at least that of the noise alone): {exc}") from None
    return _finish(task, "rho", b.feasible, error, lambda r: task.build(eps, n, r), b.infeasible,
                   None if b.infeasible is None else error, b.evaluations)


def fewest_bits(task: Task, eps: float, n: int, error: float, rho: float = 0.5) -> Answer:
    """Fewest bits ``L`` of the sum protocol with RMSE ``<= error`` (a scan from ``L = 1``)."""
    if task.task != "sum":
        raise InvalidParameter(f"find: 'bits' applies to the task 'sum' only, not {task.task!r}")
    eps = EPSILON.check(eps, "eps")
    n = USERS_RANGE.check(n, "n")
    error = ERROR.check(error)
    rho = _validate(task, rho, need_bits=False)
    assert BITS.high is not None
    reasons = []
    for bits in range(1, BITS.high + 1):
        p, why = _attempt(lambda: task.build(eps, n, rho, bits))
        if p is not None and error_of(p) <= error:
            nb = bits - 1 if bits > 1 else None
            return _finish(task, "bits", bits, error, lambda b: task.build(eps, n, rho, int(b)), nb,
                           None if nb is None else error, bits)
        reasons.append(why)
        if isinstance(p, SumPlan) and p.noise_variance * p.unit**2 > error**2 and bits > 4:
            break  # the unbiased noise alone exceeds the target and only grows with more bits
    raise CertificationError(f"no number of bits up to {bits} meets RMSE <= {error:g} at eps = {eps:g}, n = {n}"
                             + (f" ({reasons[-1]})" if reasons and reasons[-1] else ""))


__all__ = ["ERROR", "FINDS", "REL_ERROR", "TASKS", "Answer", "Task", "error_of", "fewest_bits", "largest_rho",
           "least_eps", "messages_of", "smallest_n"]

"""Inverse questions for planning: the largest local eps0, the smallest number of users.

Each solver searches with the forward computation of :mod:`.api` and returns a value that
the forward computation *certifies* meets the target (``delta_upper(eps) <= delta``),
together with the neighbouring value one step further, which it does not certify. So:

- ``solve_eps0`` returns a *lower* bound on the largest eps0 the analysis admits (kind
  ``lower``): the analysis certifies the target at this eps0, and not at
  ``eps0 * (1 + rtol)``.
- ``solve_n`` returns an *upper* bound on the smallest n (kind ``upper``): the analysis
  certifies the target with this many users and not with one fewer.

The search assumes the forward bound is monotone (delta non-decreasing in eps0,
non-increasing in n; tested for the numerical analyses). Every end it returns was
evaluated by the forward computation, so a non-monotone bound could at worst make the
answer conservative, never wrong.

With ``rounds = T > 1`` the forward computation is :func:`.composition.compose` (its
tightest certified route, at the orders :data:`SOLVER_ORDERS`). The search:

1. predicts the boundary of the tightest route by secant steps of ``log eps`` against
   ``log x`` on that route's values, from a start (``solve n``: where the coarse RDP bound,
   :data:`RDP_BRACKET_CURVE_RTOL`, scales to the target) until a step is a fraction of the
   resolution: an estimate that only chooses where to look (compose's eps is smooth in eps0
   and n, so a few steps suffice);
2. certifies it with :func:`.numeric.search.monotone_boundary` on a narrow range around the
   prediction (two evaluations when the boundary is inside), widened when it is not. There
   each point costs only the routes needed to decide it (the PLD route first, usually the
   tightest; all three only where none certifies), and every route value is computed once
   (:class:`ComposedRounds`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal

import numpy as np

from . import api
from .analyses import Query, applies_to, get_method
from .composition import (
    ADVANCED_SPLITS,
    Round,
    _advanced_route,
    _pld_route_checked,
    _rdp_route,
    advanced_best,
    cks_epsilon,
    rdp_curve,
)
from .errors import CertificationError, InvalidParameter
from .numeric.search import Boundary, NoBracket, epsilon_for_delta, monotone_boundary
from .randomizers import randomizer_at
from .results import Bound
from .validation import (
    MAX_N,
    MIN_DELTA,
    check_int,
    check_positive,
    check_probability_open,
    check_real,
)

#: Order grid used when a solver composes rounds (coarser than ``renyi``'s default, for speed;
#: every RDP value is still a certified upper bound).
SOLVER_ORDERS = (1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0, 48.0, 64.0, 128.0, 256.0)
#: The detail key of the re-checked value: delta at eps (one round) or eps at delta (rounds).
_CERTIFIED = {False: "certified_delta", True: "certified_eps"}
#: Relative width of the (certified, coarse) RDP curves behind a search's starting point.
RDP_BRACKET_CURVE_RTOL = 0.03
#: Most secant steps of a search's prediction (each one evaluation of the PLD route).
SECANT_STEPS = 10
#: A route that exceeded eps at a nearby point is not evaluated during a search when even this
#: log-slope of eps in eps0 or n could not bring it down to eps (a reported point is always
#: decided in full).
SKIP_SLOPE = 4.0
#: compose's routes, in the order a point is decided (the PLD route is usually the tightest).
ROUTES = ("pld", "rdp", "advanced")


def _feasible(eps0: float, n: int, eps: float, delta: float, method: str, k: int | None,
              delta0: float, randomizer: Any = None, search: bool = False) -> tuple[bool, float]:
    """Whether ``method`` certifies ``(eps, delta)`` for one round at ``(eps0, n)``, and the
    certified delta at ``eps`` (``randomizer``: a family or one randomizer, see
    :func:`solve_eps0`). ``search``: decide from a coarse bracket when it suffices (the
    returned delta is then that bracket's upper end); reported values use the tight one."""
    r = None if randomizer is None else randomizer_at(randomizer, eps0)
    for rtol in ((1e-2, 1e-9) if search else (1e-9,)):  # a coarse bracket decides most points (the blanket's are dear); then tight
        b = api.delta(eps0, n, eps, method, k, delta0, rtol=rtol, randomizer=r)
        if b.value is None:
            return False, math.inf
        lower = b.details["bracket"][0] if b.details and "bracket" in b.details else b.value
        if b.value <= delta or lower > delta * (1.0 + 1e-6):
            break
    assert b.value is not None
    return b.value <= delta, b.value


class ComposedRounds:
    """The routes of :func:`.composition.compose` for ``rounds`` identical rounds at
    ``(eps0, n)``, evaluated one at a time and cached (the same functions compose calls, at
    the orders :data:`SOLVER_ORDERS`): a point of a search costs only the routes needed to
    decide it, and no route is evaluated twice at the same point."""

    def __init__(self, rounds: int, delta: float, method: str, k: int | None, randomizer: Any = None) -> None:
        self.rounds, self.delta, self.method, self.k = rounds, delta, method, k
        self.randomizer = randomizer
        self.alpha = np.asarray(SOLVER_ORDERS)
        self._values: dict[tuple[str, float, int], float] = {}
        self._lower: dict[tuple[str, float, int], float] = {}
        self._coarse: dict[tuple[float, int], Any] = {}

    def value(self, route: str, eps0: float, n: int) -> float:
        """compose's ``route`` value (``inf`` when not applicable) at ``(eps0, n)``."""
        key = (route, float(eps0), int(n))
        if key not in self._values:
            rounds = (Round(float(eps0), int(n), self.rounds),)
            if route == "pld":
                b = _pld_route_checked(rounds, self.delta, self.method, self.k, None, {}, self.randomizer)
            elif route == "rdp":
                b = _rdp_route(rounds, self.delta, self.method, self.k, self.alpha, 1e-3, {})
            else:
                b = _advanced_route(rounds, self.delta, self.method, self.k, {}, self.randomizer)
            ok = b.applicable and b.value is not None
            self._values[key] = float(b.value) if ok else math.inf  # type: ignore[arg-type]
        return self._values[key]

    def decide(self, eps0: float, n: int, eps: float, skip: Callable[[str], bool] | None = None,
               ) -> tuple[bool, float, str]:
        """``(compose's best <= eps, the deciding value, its route)``: the first route that
        certifies ``eps``, or (when none does) the best of all three, which then all exceed it.

        ``skip(route)`` (searches only, never for a reported answer) leaves out routes that
        evidently cannot certify here; a point decided infeasible with skips is re-decided in
        full before it is reported. In either mode a route after the first is not evaluated when
        a certified lower bound on its value (:meth:`lower`, much cheaper) exceeds both ``eps``
        and the best value so far: it can neither certify nor be the best, so the answer (and
        every reported value) is the one the full evaluation gives."""
        values: list[tuple[float, str]] = []
        for route in ROUTES:
            if skip is not None and skip(route):
                continue
            if values and self.lower(route, eps0, n) > max(eps, min(values)[0]):
                continue
            v = self.value(route, eps0, n)
            if v <= eps:
                return True, v, route
            values.append((v, route))
        v, route = min(values) if values else (math.inf, "none")
        return False, v, route

    def lower(self, route: str, eps0: float, n: int) -> float:
        """A certified lower bound on :meth:`value` (``0`` when none is cheap): ``rdp`` from
        the lower ends of the coarse curve (:data:`RDP_BRACKET_CURVE_RTOL`) at the orders
        :data:`SOLVER_ORDERS` (the route takes the least conversion over a prefix of them of
        upper ends, each at least the true divergence, which is at least the lower end; CKS20's
        conversion increases in the divergence); ``advanced`` (generic pairs) from one certified
        lower end of the per-round eps at the largest per-round delta the route tries (the
        per-round eps does not increase in delta; both composition theorems' eps increase in
        it). Both are rounded down."""
        key = (route, float(eps0), int(n))
        if key in self._lower:
            return self._lower[key]
        value = 0.0
        if route == "rdp":
            curve = self._coarse_curve(eps0, n)
            total = self.rounds * np.asarray(curve.lower) * (1.0 - 1e-13)
            a = self.alpha
            conv = total + np.log1p(-1.0 / a) - (math.log(self.delta) + np.log(a)) / (a - 1.0)
            value = max(float(np.min(conv)) * (1.0 - 1e-12), 0.0)
        elif route == "advanced" and self.randomizer is None:
            m = get_method(self.method)
            d_max = self.delta * max(ADVANCED_SPLITS) / self.rounds
            if m.profile is not None and d_max >= MIN_DELTA:
                profile = m.profile(Query(float(eps0), int(n), self.k, 0.0, None))
                eps_lo = min(float(epsilon_for_delta(profile, d_max, 1e-2).lower), float(eps0))  # the route caps at eps0
                best, _ = advanced_best((Round(float(eps0), int(n), self.rounds),), self.delta, lambda r, d: eps_lo)
                value = best * (1.0 - 1e-8)
        self._lower[key] = value
        return value

    def known(self, route: str) -> list[tuple[float, int, float]]:
        """``(eps0, n, value)`` of every point where ``route`` was evaluated."""
        return [(e0, n, v) for (r, e0, n), v in self._values.items() if r == route]

    def guide(self, eps0: float, n: int) -> float:
        """The value the search predicts from: the PLD route's when it applies (the tightest
        for T > 1), otherwise compose's best."""
        v = self.value("pld", eps0, n)
        return v if math.isfinite(v) else min(self.value(r, eps0, n) for r in ROUTES)

    def _coarse_curve(self, eps0: float, n: int) -> Any:
        """The coarse certified RDP curve at :data:`SOLVER_ORDERS` (brackets to
        :data:`RDP_BRACKET_CURVE_RTOL`), computed once per point."""
        key = (float(eps0), int(n))
        if key not in self._coarse:
            self._coarse[key] = rdp_curve(eps0, int(n), self.method, self.k, SOLVER_ORDERS, RDP_BRACKET_CURVE_RTOL)
        return self._coarse[key]

    def rdp_coarse(self, eps0: float, n: int) -> float:
        """A certified upper bound on the composed eps by RDP on coarse curves (brackets only)."""
        key = ("rdp-coarse", float(eps0), int(n))
        if key not in self._values:
            curve = self._coarse_curve(eps0, n)
            total = self.rounds * np.asarray(curve.upper) * (1.0 + 1e-13)
            self._values[key] = cks_epsilon(self.alpha, total, self.delta)[0]
        return self._values[key]


def _composed_boundary(
    cr: ComposedRounds,
    eps: float,
    at: Callable[[float], tuple[float, int]],
    *,
    start: float,
    low: float,
    high: float,
    integer: bool,
    feasible_side: Literal["low", "high"],
    rtol: float,
    slope: float,
) -> Boundary:
    """The boundary of "compose certifies ``eps``" over one parameter (``at(x)`` gives
    ``(eps0, n)``), in the three steps of the module docstring. ``slope`` is a first guess of
    ``d log eps / d log x`` (its sign is the direction in which eps grows). The returned ends
    were both decided by the full forward computation."""
    grows = feasible_side == "low"  # eps grows with x (eps0) or falls with it (n)
    index = 0 if grows else 1  # which of (eps0, n) is x

    def skip_for(x: float) -> Callable[[str], bool]:
        """During the search, leave out a route that cannot be the one that certifies: it
        exceeded eps at a point where the composed eps is smaller (it is monotone in x), or by
        more than a log-slope of :data:`SKIP_SLOPE` could make up between that point and x."""

        def skip(route: str) -> bool:
            if route == "pld":
                return False
            for point in cr.known(route):
                xa, v = float(point[index]), point[2]
                if v > eps and ((grows and xa <= x) or (not grows and xa >= x)):
                    return True
                if v > eps * math.exp(SKIP_SLOPE * abs(math.log(x / xa))):
                    return True
            return False

        return skip

    def ok(x: float) -> bool:
        return cr.decide(*at(x), eps, skip_for(x))[0]

    def clip(x: float) -> float:
        x = min(max(x, low), high)
        return float(math.floor(x)) if integer else x

    # 1. predict the boundary of the tightest route: secant steps of log eps against log x from
    #    the start (at most 4x per step), until a step is a small fraction of rtol (compose's eps
    #    is smooth in eps0 and n, so the secant converges fast); an estimate that only chooses
    #    where step 2 looks
    x = clip(start)
    pts = [(x, cr.guide(*at(x)))]
    guess, moved = x, math.inf  # the predicted boundary and the relative size of the last step
    inside = math.inf  # the expected remaining error of the guess once converged (relative)
    for _ in range(SECANT_STEPS):
        (x0, f0) = pts[-1]
        if len(pts) >= 2:
            (xa, fa) = pts[-2]
            if xa != x0 and fa > 0.0 and f0 > 0.0 and math.isfinite(fa) and math.isfinite(f0) and fa != f0:
                slope = math.log(f0 / fa) / math.log(x0 / xa)
        if not (f0 > 0.0 and math.isfinite(f0)) or slope == 0.0:
            break
        step = min(max(math.log(eps / f0) / slope, -math.log(4.0)), math.log(4.0))
        x1 = min(max(x0 * math.exp(step), low), high)
        previous, guess, moved = moved, x1, abs(x1 - x0) / x0
        if moved <= 0.25 * rtol or (integer and abs(x1 - x0) < 0.5) or x1 == x0:
            inside = moved
            break
        # the secant converges superlinearly: after steps m' then m the error is about m^2 / m'
        if len(pts) >= 3 and moved < 0.1 * previous and moved * moved / previous <= 0.2 * rtol:
            inside = 2.0 * moved * moved / previous
            break
        x1 = float(round(x1)) if integer else x1
        pts.append((x1, cr.guide(*at(x1))))
    # the secant converges fast: the last correction bounds the remaining error generously
    converged = inside <= 0.45 * rtol
    width = 0.5 if not math.isfinite(moved) else max(0.45 * rtol, 2.0 * moved)
    # 2. certify on a narrow range around the prediction (from its feasible end: with the boundary
    #    inside, its two ends decide it); widen (and move) until it holds the boundary
    for _ in range(12):
        x_last, f_last = pts[-1]
        if converged and not integer and abs(x_last - guess) <= 0.45 * rtol * guess:
            # the last point of step 1 is within the resolution of the boundary: one end of the
            # range, which is the resolution wide (its value is known: one evaluation fewer)
            on_low_end = (f_last <= eps) == (feasible_side == "low")  # feasible on the low side, or not on the high
            lo_r = x_last if on_low_end else clip(x_last / (1.0 + 0.99 * rtol))
            hi_r = clip(x_last * (1.0 + 0.99 * rtol)) if on_low_end else x_last
        elif converged and not integer:
            # the boundary is within about the last correction of the guess: the range is the
            # resolution wide, its feasible end that far inside the guess (the answer is that end)
            inside = max(inside, 1e-12)
            if feasible_side == "low":
                lo_r = clip(guess * (1.0 - inside))
                hi_r = clip(lo_r * (1.0 + 0.99 * rtol))
            else:
                hi_r = clip(guess * (1.0 + inside))
                lo_r = clip(hi_r / (1.0 + 0.99 * rtol))
        else:
            lo_r, hi_r = clip(guess * (1.0 - width)), clip(guess * (1.0 + width))
        if integer:  # the predicted boundary and its neighbour, padded by the width
            edge = float(math.ceil(guess) if feasible_side == "high" else math.floor(guess))
            pad = 0.0 if converged else float(int(width * guess))
            lo_r = max(low, edge - pad - (1.0 if feasible_side == "high" else 0.0))
            hi_r = min(high, edge + pad + (0.0 if feasible_side == "high" else 1.0))
        converged = False  # a range that missed is widened
        try:
            b = monotone_boundary(ok, lo_r if feasible_side == "low" else hi_r, feasible_side=feasible_side,
                                  low=lo_r, high=hi_r, integer=integer, rtol=rtol)
        except NoBracket:  # infeasible on the whole range: the boundary is on the feasible side
            edge = lo_r if feasible_side == "low" else hi_r
            if edge == (low if feasible_side == "low" else high):
                raise
            guess, width = edge, min(width * 8.0, 0.9)
            continue
        if b.infeasible is None:  # feasible to the end of the range: the boundary is further out
            edge = hi_r if feasible_side == "low" else lo_r
            if edge == (high if feasible_side == "low" else low):
                return b
            guess, width = edge, min(width * 8.0, 0.9)
            continue
        if cr.decide(*at(b.infeasible), eps)[0]:  # a skipped route certifies after all: search on, in full
            guess = b.infeasible
            skip_for = lambda x: None  # type: ignore[assignment, return-value]
            continue
        return b
    return monotone_boundary(lambda x: cr.decide(*at(x), eps)[0], clip(guess), feasible_side=feasible_side,
                             low=low, high=high, integer=integer, rtol=rtol)


def _answer_method(method: str, randomizer: Any, details: dict) -> tuple[str, Any]:
    """The method an answer is labelled with: with a randomizer over several rounds, the
    blanket when its PLD or advanced route certified the answer (``method`` is then only the
    RDP route's generic analysis)."""
    if randomizer is not None and details.get("certified_by") in ("pld", "advanced"):
        return "blanket", get_method("blanket")
    return method, get_method(method)


def _recheck(feasible: Callable[[bool], tuple[bool, float]]) -> float:
    """The certified delta at a solver's answer, from the tight bracket; from the search's
    (coarse) one in the rare case that only it certifies (both are certified upper bounds)."""
    for search in (False, True):
        ok, value = feasible(search)
        if ok:
            return value
    raise CertificationError("solver output failed its re-check")  # pragma: no cover - search points were evaluated


def _generic_hint(answer: Callable[[], float | int | None], default: float) -> float:
    """Where a search for a mechanism-aware (blanket) answer starts: the generic
    stronger-clones answer, which the blanket bound improves on (it is below stronger-clones
    pointwise, ``docs/generic_bounds.md``). Only a starting point: every end the search returns
    is evaluated with the blanket itself."""
    try:
        value = answer()
    except (NoBracket, CertificationError):
        return default
    return float(value) if value is not None else default


def _target(eps: float, delta: float, method: str, k: int | None, delta0: float, rounds: int,
            randomizer: Any = None, **given: float) -> dict:
    """Validate the common solver inputs; return the inputs record (``given`` is the
    fixed parameter, already validated)."""
    m = get_method(method)
    if m.kind != "upper":
        raise InvalidParameter(f"solving needs an upper-bound method; {method!r} is a {m.kind} bound")
    if randomizer is None and m.needs_randomizer:
        raise InvalidParameter(f"method {method!r} needs a randomizer (--randomizer NAME or --randomizer-file F)")
    if randomizer is not None:
        member = randomizer_at(randomizer, given.get("eps0", getattr(randomizer, "fixed_eps0", None) or 1.0))
        if not applies_to(m, member):
            raise InvalidParameter(f"method {method!r} does not apply to {randomizer.describe()}")
        if rounds > 1 and m.needs_randomizer:
            raise InvalidParameter(f"with --rounds, --method names the generic analysis of the RDP route (clones, "
                                   f"stronger-clones; krr for k-RR), not {method!r}: the PLD and advanced routes "
                                   "already compose the randomizer's blanket bound")
    inputs = {"eps": check_positive("eps", eps), "delta": check_probability_open("delta", delta), **given,
              "method": method}
    if randomizer is not None:
        inputs["randomizer"] = randomizer.describe()
    if k is not None:
        inputs["k"] = k
    if delta0:
        if rounds > 1:
            raise InvalidParameter("--delta0 is not supported together with --rounds")
        inputs["delta0"] = delta0
    if rounds > 1:
        inputs["rounds"] = rounds
    return inputs


def _rounds_details(cr: ComposedRounds, eps: float, answer: tuple[float, int],
                    neighbour: tuple[float, int] | None) -> dict:
    """Details of a composed-rounds answer: the certified eps at the answer (and the route
    that certified it), compose's best at the neighbour (every route above eps there)."""
    ok, value, route = cr.decide(*answer, eps)
    if not ok:  # pragma: no cover - the search only returns evaluated feasible points
        raise CertificationError("solver output failed its re-check")
    details = {"certified_eps": value, "certified_by": route}
    if neighbour is not None:
        ok_n, value_n, route_n = cr.decide(*neighbour, eps)
        if ok_n:  # pragma: no cover - the search only returns evaluated infeasible neighbours
            raise CertificationError("solver neighbour unexpectedly meets the target")
        details["neighbour_best_route"] = route_n
        details["_neighbour_value"] = value_n
    return details


def solve_eps0(
    eps: float,
    delta: float,
    n: int,
    method: str = "clones",
    k: int | None = None,
    delta0: float = 0.0,
    rtol: float = 1e-6,
    rounds: int = 1,
    randomizer: Any = None,
    on_start: Callable[[], None] | None = None,
) -> Bound:
    """The largest local eps0 whose shuffled guarantee is at most ``(eps, delta)`` by
    ``method`` (to relative resolution ``rtol``), certified by the forward computation.

    ``randomizer``: a :class:`.randomizers.RandomizerFamily` (a named randomizer whose
    parameters stay fixed while eps0 varies) for the mechanism-aware methods (``blanket``), and
    with ``rounds > 1`` for the blanket PLD / advanced routes of :func:`.composition.compose`.
    ``on_start`` is called once the inputs are validated (the CLI announces long searches)."""
    n = check_int("n", n)
    rtol = check_real("rtol", rtol, low=1e-10, high=1e-2)
    rounds = check_int("rounds", rounds, high=10**9)
    if randomizer is not None and (not hasattr(randomizer, "at") or randomizer.fixed_eps0 is not None):
        raise InvalidParameter(f"{randomizer.describe()} has one fixed eps0, so there is no eps0 to solve for; "
                               "ask for the smallest n instead (solve n)")
    inputs = _target(eps, delta, method, k, delta0, rounds, randomizer, n=n)
    if on_start is not None:  # inputs are valid: the search starts (the CLI says so for long ones)
        on_start()
    eps, delta = inputs["eps"], inputs["delta"]
    start = min(eps, api.MAX_EPS0)
    fail = f"{method} certifies (eps={eps:g}, delta={delta:g}) at n={n} for no eps0 >= 1e-12"
    warnings: list[str] = []
    if rounds > 1:
        cr = ComposedRounds(rounds, delta, method, k, randomizer)
        try:
            found = _composed_boundary(cr, eps, lambda e0: (e0, n), start=start, low=1e-12, high=api.MAX_EPS0,
                                       integer=False, feasible_side="low", rtol=rtol, slope=1.5)
        except NoBracket:
            raise NoBracket(fail) from None
        lo = found.feasible
        beyond = math.inf if found.infeasible is None else found.infeasible
        details = _rounds_details(cr, eps, (lo, n), None if found.infeasible is None else (beyond, n))
        beyond_value = details.pop("_neighbour_value", details["certified_eps"])
    else:

        def ok(e0: float) -> bool:
            return _feasible(e0, n, eps, delta, method, k, delta0, randomizer, search=True)[0]

        try:
            if get_method(method).needs_randomizer:  # the blanket admits at least the generic answer
                start = _generic_hint(lambda: solve_eps0(eps, delta, n, "stronger-clones", rtol=1e-3).value, start)
            found = monotone_boundary(ok, start, feasible_side="low", low=1e-12, high=api.MAX_EPS0, rtol=rtol)
        except NoBracket:
            raise NoBracket(fail) from None
        lo = found.feasible
        certified = _recheck(lambda search: _feasible(lo, n, eps, delta, method, k, delta0, randomizer, search))
        if found.infeasible is None:
            beyond, beyond_value = math.inf, certified
        else:
            beyond = found.infeasible
            beyond_value = _feasible(beyond, n, eps, delta, method, k, delta0, randomizer)[1]
        details = {"certified_delta": certified}
    if found.infeasible is None:
        warnings.append(f"every eps0 up to the supported maximum {api.MAX_EPS0:g} meets the target")
    label, m = _answer_method(method, randomizer, details)
    return Bound(
        "eps0",
        lo,
        "lower",
        label,
        m.citation,
        inputs,
        "largest eps0 certified by the forward computation (the true optimum of this analysis is >= this)",
        tuple(warnings),
        {**details, "next_eps0": beyond, "next_value": beyond_value, "rtol": rtol},
    )


def solve_n(
    eps: float,
    delta: float,
    eps0: float,
    method: str = "clones",
    k: int | None = None,
    delta0: float = 0.0,
    rounds: int = 1,
    randomizer: Any = None,
    on_start: Callable[[], None] | None = None,
) -> Bound:
    """The smallest number of users for which ``method`` certifies ``(eps, delta)`` with an
    ``eps0``-DP local randomizer (exact integer search, re-checked). ``randomizer``: a family
    or one randomizer with this eps0, as in :func:`solve_eps0`. ``on_start`` is called once the
    inputs are validated."""
    eps0 = check_real("eps0", eps0, low=0.0, high=api.MAX_EPS0, low_open=True)
    rounds = check_int("rounds", rounds, high=10**9)
    inputs = _target(eps, delta, method, k, delta0, rounds, randomizer, eps0=eps0)
    if on_start is not None:
        on_start()
    eps, delta = inputs["eps"], inputs["delta"]
    fail = f"{method} does not certify (eps={eps:g}, delta={delta:g}) with eps0={eps0:g} for any n <= {MAX_N:g}"
    if rounds > 1:
        cr = ComposedRounds(rounds, delta, method, k, randomizer)
        ref = 1000  # start where the coarse RDP bound scales to eps (eps ~ n^-1/2)
        v_ref = cr.rdp_coarse(eps0, ref)
        start = ref * (v_ref / eps) ** 2 if math.isfinite(v_ref) and v_ref > 0.0 else float(ref)
        try:
            found = _composed_boundary(cr, eps, lambda n_: (eps0, int(n_)), start=float(min(max(start, 1.0), MAX_N)),
                                       low=1.0, high=float(MAX_N), integer=True, feasible_side="high", rtol=1e-6,
                                       slope=-0.5)
        except NoBracket:
            raise NoBracket(fail) from None
        hi = int(found.feasible)
        neighbour = (eps0, hi - 1) if hi > 1 else None
        details = _rounds_details(cr, eps, (eps0, hi), neighbour)
        if hi > 1:
            details["previous_n"] = hi - 1
            details["previous_value"] = details.pop("_neighbour_value")
    else:

        def ok(n_: float) -> bool:
            return _feasible(eps0, int(n_), eps, delta, method, k, delta0, randomizer, search=True)[0]

        try:
            start = 1.0
            if get_method(method).needs_randomizer:  # the blanket needs at most the generic answer
                start = _generic_hint(lambda: solve_n(eps, delta, eps0, "stronger-clones").value, start)
            found = monotone_boundary(ok, start, feasible_side="high", low=1, high=MAX_N, integer=True)
        except NoBracket:
            raise NoBracket(fail) from None
        hi = int(found.feasible)
        certified = _recheck(lambda search: _feasible(eps0, hi, eps, delta, method, k, delta0, randomizer, search))
        details = {"certified_delta": certified}
        if hi > 1:  # the neighbour one user fewer, which the forward computation does not certify
            details.update(previous_n=hi - 1, previous_value=_feasible(eps0, hi - 1, eps, delta, method, k, delta0, randomizer)[1])
    label, m = _answer_method(method, randomizer, details)
    return Bound(
        "n",
        hi,
        "upper",
        label,
        m.citation,
        inputs,
        "smallest n certified by the forward computation (the true optimum of this analysis is <= this)",
        (),
        details,
    )

"""Certified searches: one place for every inverse question the package answers.

Two helpers, both keeping a *certified* bracket at every step (the end reported as
feasible was verified feasible by the forward computation; the other end was verified
infeasible), in the manner of Google dp_accounting's ``calibrate_dp_mechanism`` /
``inverse_monotone_function``:

- :func:`epsilon_for_delta`: ``eps(delta)`` of any :class:`~.profile.PrivacyProfile`
  (Illinois regula falsi on ``log delta``, with per-evaluation refinement of the profile
  chosen so that each evaluation is decisive).
- :func:`monotone_boundary`: the boundary of a monotone yes/no predicate over the reals or
  the integers (the planners: largest eps0, smallest n, least noise, fewest messages).

Both raise :class:`NoBracket` (a :class:`~shuffle_accountant.errors.CertificationError`)
when no certified bracket exists within the allowed range.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Literal

import numpy as np

from ..errors import CertificationError, InvalidParameter
from .profile import PrivacyProfile


class NoBracket(CertificationError):
    """No certified bracket exists within the allowed range (e.g. no eps0 >= 1e-12 meets
    the target, or no finite eps reaches delta)."""


def _surrogate_root(profile: PrivacyProfile, delta: float, lo: float, hi: float) -> float | None:
    """Where the profile's cheap surrogate (if it has one) crosses ``delta``: a starting
    point for the certified search, never a reported value."""
    surrogate = getattr(profile, "surrogate", None)
    if surrogate is None or not math.isfinite(hi) or hi <= 0.0:
        return None
    grid = hi * np.logspace(-8.0, 0.0, 81)[:-1]
    est = surrogate(grid)
    below = np.nonzero(est <= delta)[0]
    if below.size == 0 or below[0] == 0:
        return None
    i = below[0]
    a, b = grid[i - 1], grid[i]
    fine = np.linspace(a, b, 41)
    est = surrogate(fine)
    j = int(np.argmax(est <= delta))
    x = float(fine[j])
    return x if lo < x < hi else None


@dataclass(frozen=True)
class EpsilonBracket:
    """Certified bracket on the exact ``eps(delta)`` of a pair: ``lower <= eps* <= upper``.

    ``upper`` satisfies ``delta_upper(upper) <= delta`` (so the pair is (upper, delta)-DP);
    ``lower`` satisfies ``delta_lower(lower) > delta`` or is 0.
    """

    delta: float
    lower: float
    upper: float
    evaluations: int


def epsilon_for_delta(
    profile: PrivacyProfile,
    delta: float,
    rtol: float = 1e-7,
    extra: Callable[[float], float] | None = None,
) -> EpsilonBracket:
    """The smallest ``eps`` with ``delta(eps) <= delta`` for any certified
    :class:`~.profile.PrivacyProfile`, certified from above and below.

    ``extra`` (optional) is a non-decreasing function ``eps -> additional delta`` (used for
    FMT21 Theorem 3.8, approximate-DP local randomizers); the condition becomes
    ``delta(eps) + extra(eps) <= delta``. ``delta(eps)`` is convex in ``e^eps`` and
    ``extra`` must be affine in ``e^eps``, so the feasible set is an interval and the search
    below finds its left end.

    Method: Illinois regula falsi on ``log delta_estimate(eps) - log delta`` inside a
    bracket that is kept certified (the low end has ``delta_lower > delta``, the high end
    ``delta_upper <= delta``), with per-evaluation refinement chosen so each evaluation is
    decisive; stops when ``upper - lower <= rtol * upper``.
    """
    if not 0.0 < delta < 1.0:
        raise InvalidParameter(f"delta must be in (0, 1), got {delta!r}")
    if not 0.0 < rtol < 1.0:
        raise InvalidParameter(f"rtol must be in (0, 1), got {rtol!r}")
    hs = profile
    add = extra if extra is not None else (lambda e: 0.0)
    evaluations = 0

    def evaluate(eps: float, tol: float) -> tuple[float, float]:
        nonlocal evaluations
        evaluations += 1
        b = hs.bounds(eps, tol)
        x = add(eps)
        return b.lower + x, b.upper + x * (1.0 + 1e-15)

    def gap(lb: float, ub: float) -> float:
        """log(estimate) - log(delta); positive means eps is too small."""
        return math.log(max(0.5 * (lb + ub), 1e-300)) - math.log(delta)

    lo, hi = 0.0, profile.max_log_ratio
    if math.isinf(hi):  # supports differ: find a finite feasible point first
        hi = 1.0
        while evaluate(hi, 1e-3)[1] > delta:
            if hi > 745.0:
                raise NoBracket("no finite eps reaches this delta (the pair has disjoint parts)")
            hi *= 2.0
    elif add(hi) > delta:
        raise NoBracket(
            f"the added delta term (e.g. FMT21 Theorem 3.8's n*delta0 term) exceeds delta = {delta:.3g} "
            f"even at eps = {hi:.6g}; no eps is certified"
        )
    t0 = 1e-2
    l0, u0 = evaluate(0.0, t0)
    while l0 <= delta < u0 and t0 > 1e-9:  # decide whether the total variation is <= delta
        t0 *= 1e-2
        l0, u0 = evaluate(0.0, t0)
    if u0 <= delta:
        return EpsilonBracket(delta, 0.0, 0.0, evaluations)
    x0 = _surrogate_root(profile, delta, lo, hi)
    f_lo, f_hi = gap(l0, u0), -math.inf
    lo_certified = l0 > delta
    side, tol = 0, 1e-2

    def needed_tol(x: float) -> float:
        """Relative delta resolution that resolves eps to ~rtol/3 at x (from the
        secant slope of log delta), within [1e-12, 1e-2]."""
        if not math.isfinite(f_hi) or hi <= lo:
            return 1e-2
        slope = abs(f_lo - f_hi) / (hi - lo)
        return min(1e-2, max(1e-12, 0.3 * rtol * x * slope))

    for _ in range(500):
        if lo_certified and hi - lo <= rtol * hi:
            return EpsilonBracket(delta, lo, hi, evaluations)
        width = hi - lo
        if math.isfinite(f_hi):
            x = hi - f_hi * width / (f_hi - f_lo)
        elif x0 is not None and lo < x0 < hi:
            x = x0  # start at the surrogate's root; step up from it while infeasible
            x0 = min(2.0 * x0, 0.5 * (x0 + hi))
        else:
            x = 0.5 * (lo + hi)
        x = min(max(x, lo + 1e-4 * width), hi - 1e-4 * width)
        floor = needed_tol(x)
        tol = max(min(tol, 1e-2), floor)
        lb, ub = evaluate(x, tol)
        # undecided: tighten the blocks, unless the estimate already sits at delta to within
        # the resolution that matters (then the probes below certify a bracket around x)
        while lb <= delta < ub and tol > floor and abs(gap(lb, ub)) > 0.25 * floor:
            tol = max(tol * 0.1, floor)
            lb, ub = evaluate(x, tol)
        if ub <= delta:
            hi, f_hi = x, gap(lb, ub)
            if side == 1:
                f_lo *= 0.5  # Illinois step: keep the stale end from stalling the secant
            side = 1
        elif lb > delta:
            lo, f_lo, lo_certified = x, gap(lb, ub), True
            if side == -1 and math.isfinite(f_hi):
                f_hi *= 0.5
            side = -1
        else:
            # delta is inside [lb, ub] at the resolution that matters (or at the
            # floating-point floor): x is the root to about that resolution. Certify the
            # ends of a bracket around it, widening until both ends are decisive.
            step = 0.45 * rtol * x

            def decide(candidate: float) -> tuple[float, float]:
                """Bounds at ``candidate``, tightened until decisive or at the float floor."""
                t = floor
                while True:
                    cl, cu = evaluate(candidate, t)
                    if cu <= delta or cl > delta or t <= 1e-12:
                        return cl, cu
                    t = max(t * 0.1, 1e-12)

            for _widen in range(60):
                if x + step < hi and decide(x + step)[1] <= delta:
                    hi = x + step
                if x - step > lo and decide(x - step)[0] > delta:
                    lo, lo_certified = x - step, True
                if hi <= x + step and (lo >= x - step or x - step <= 0.0):
                    break
                step *= 1.3
            else:
                raise CertificationError(f"could not separate delta = {delta!r} near eps = {x!r}")
            # eps* >= 0 always, so lo = 0 is a valid lower end when nothing better is known
            lo = lo if lo_certified else 0.0
            while hi - lo > rtol * hi:  # close the bracket by decisive bisection
                mid = 0.5 * (lo + hi)
                cl, cu = decide(mid)
                if cu <= delta:
                    hi = mid
                elif cl > delta:
                    lo = mid
                else:
                    break  # floating point cannot separate further; the caller warns
            return EpsilonBracket(delta, lo, hi, evaluations)
        tol = min(1e-2, max(floor, 0.2 * abs(gap(lb, ub))))
    raise CertificationError("the epsilon search did not converge")


# ---------------------------------------------------------------------------------------
# The boundary of a monotone predicate (planning questions).
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Boundary:
    """Result of :func:`monotone_boundary`.

    ``feasible`` is a point where the predicate was evaluated and held; ``infeasible`` is
    its neighbour on the other side, where it was evaluated and failed (``None`` when the
    predicate held all the way to the end of the allowed range). For an integer search
    the two are adjacent integers; for a real one ``|feasible - infeasible| <= rtol *
    |feasible|``.
    """

    feasible: float
    infeasible: float | None
    evaluations: int


def monotone_boundary(
    ok: Callable[[float], bool],
    start: float,
    *,
    feasible_side: Literal["low", "high"],
    low: float,
    high: float,
    integer: bool = False,
    rtol: float = 1e-6,
) -> Boundary:
    """The boundary of a monotone predicate on ``[low, high]``, bracketed by evaluations.

    ``feasible_side="low"``: ``ok`` holds below some threshold and fails above it (e.g.
    "eps0 meets the target"); the answer is the largest feasible point found.
    ``feasible_side="high"``: ``ok`` fails below and holds above (e.g. "n users meet the
    target"); the answer is the smallest feasible point found.

    The search steps geometrically from ``start`` (doubling / halving, clipped to the
    range) until it has one feasible and one infeasible point, then bisects (geometric
    midpoints while the ends are more than a factor 2 apart; integer midpoints when
    ``integer``). Every returned end was evaluated, so if ``ok`` is certified (true only
    when the forward computation verifies the target) the answer is certified even if the
    predicate were not monotone. ``low > 0`` is required (geometric steps).

    Raises :class:`NoBracket` when ``ok`` fails on the whole range (checked at the end of
    the range that should be feasible).
    """
    if not (0.0 < low <= start <= high):
        raise InvalidParameter(f"need 0 < low <= start <= high, got {low!r}, {start!r}, {high!r}")
    evaluations = 0

    def test(x: float) -> bool:
        nonlocal evaluations
        evaluations += 1
        return bool(ok(x))

    def clip(x: float) -> float:
        x = min(max(x, low), high)
        return float(math.floor(x)) if integer else x

    toward_feasible, away = (0.5, 2.0) if feasible_side == "low" else (2.0, 0.5)
    edge_feasible, edge_infeasible = (low, high) if feasible_side == "low" else (high, low)
    x = clip(start)
    good: float | None = None
    bad: float | None = None
    if test(x):
        good = x
        while bad is None:
            if good == edge_infeasible:
                return Boundary(good, None, evaluations)
            y = clip(good * away)
            if integer and y == good:
                y = clip(good + (1 if feasible_side == "low" else -1))
            if test(y):
                good = y
            else:
                bad = y
    else:
        bad = x
        while good is None:
            if bad == edge_feasible:
                raise NoBracket(
                    f"the target is not met anywhere in [{low:g}, {high:g}] (checked down to the end of the range)"
                    if feasible_side == "low"
                    else f"the target is not met anywhere in [{low:g}, {high:g}] (checked up to {high:g})"
                )
            y = clip(bad * toward_feasible)
            if integer and y == bad:
                y = clip(bad + (-1 if feasible_side == "low" else 1))
            if test(y):
                good = y
            else:
                bad = y

    def close(a: float, b: float) -> bool:
        return abs(a - b) <= 1.0 if integer else abs(a - b) <= rtol * abs(a)

    while not close(good, bad):
        a, b = min(good, bad), max(good, bad)
        mid = math.sqrt(a * b) if b > 2.0 * a else 0.5 * (a + b)
        if integer:
            mid = float(math.floor(mid))
            if mid <= a:
                mid = a + 1.0
            if mid >= b:
                break
        if mid in (a, b):  # floating point cannot split further
            break
        if test(mid):
            good = mid
        else:
            bad = mid
    return Boundary(good, bad, evaluations)

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


def _surrogate_root(profile: PrivacyProfile, delta: float, lo: float, hi: float,
                    rtol: float = 1e-6) -> tuple[float, float] | None:
    """Where the profile's cheap surrogate (if it has one) crosses ``delta``, and the
    surrogate's slope ``d log delta / d eps`` there: a starting point for the certified
    search, never a reported value. The surrogate is ``mixture_surrogate`` when the profile
    offers one, else ``surrogate``, raised to the profile's certified ``closed_lower`` where that
    is larger. It is looked at ten points a decade (26 % apart): the decade below ``hi`` first,
    then the next seven in one call, then at 17 points inside the cell of the crossing, and a
    quadratic in ``(eps, log surrogate)`` through the three points around the crossing gives the
    root and the slope. A crossing in the top cell (above ``0.79 hi``; e.g. pairs whose delta
    vanishes steeply just below ``max_log_ratio``, such as k-RR's third-value pair at small n) is
    looked for at distances from ``hi`` four to a decade down to ``rtol hi``; one closer to ``hi``
    counts as none (the search's one-probe path at ``hi (1 - 0.99 rtol)`` decides it)."""
    # the profile's start estimate when it has one (clone pairs: a mixture over clone counts)
    estimate = getattr(profile, "mixture_surrogate", None) or getattr(profile, "surrogate", None)
    if estimate is None or not math.isfinite(hi) or hi <= 0.0:
        return None
    closed = getattr(profile, "closed_lower", None)

    def surrogate(eps: np.ndarray) -> np.ndarray:
        """The surrogate, raised to the profile's closed-form lower bound where that is larger
        (near eps0 at small clone means the surrogate at the mean count misses the tail that
        sets delta)."""
        est = estimate(eps)
        return est if closed is None else np.maximum(est, closed(eps))

    cell: tuple[float, float] | None = None
    # the first decade below hi, then the next seven in one call (ten points per decade)
    for first, count in ((0, 1), (1, 7)):
        grid = hi * np.logspace(-1.0 - first - (count - 1), -float(first), 10 * count + 1)[:-1]
        est = surrogate(grid)
        above = np.nonzero(est > delta)[0]
        if above.size:
            i = int(above[-1])
            if i + 1 == grid.size and first == 0:
                cell = _top_cell(surrogate, delta, float(grid[-1]), hi, rtol)
                if cell is None:
                    return None  # still above delta within rtol of hi: no crossing seen
                break
            cell = (float(grid[i]), float(grid[i + 1]) if i + 1 < grid.size else hi * 10.0 ** -first)
            break
    if cell is None or cell[0] <= 0.0:
        return None
    for _zoom in range(3):
        grid = np.linspace(cell[0], cell[1], 17)
        est = surrogate(grid)
        below = np.nonzero(est <= delta)[0]
        if below.size == 0 or below[0] == 0:
            return None
        j = int(below[0])
        if est[j] > 0.0 or not est[j - 1] > 0.0:
            break
        # the surrogate vanishes in the next step (it has its own largest log-ratio there): look
        # closer, so that the root and slope come from positive values
        cell = (float(grid[j - 1]), float(grid[j]))
    if not (est[j] > 0.0 and est[j - 1] > 0.0):
        x = float(grid[j])
        return (x, math.nan) if lo < x < hi else None
    x0, x1 = float(grid[j - 1]), float(grid[j])
    y0, y1 = math.log(est[j - 1]), math.log(est[j])
    slope = (y1 - y0) / (x1 - x0)
    if not slope < 0.0:
        return None
    target = math.log(delta)
    x = x0 + (target - y0) / slope  # log-linear inside the cell
    # a third point: the one after the cell, or (the cell last in the grid, or the surrogate gone after
    # it) the one before it (without it the log-linear root missed by 5e-6 .. 2e-5 relative, and the
    # search spent one more evaluation: k-RR n = 1e7, k = 3, eps0 = 2)
    third = j + 1 if j + 1 < grid.size and est[j + 1] > 0.0 else j - 2
    if third >= 0 and est[third] > 0.0:
        # in t = x - x0: y = y0 + slope t + c2 t (t - h), h = x1 - x0; c2 the second divided difference
        x2, y2 = float(grid[third]), math.log(est[third])
        c2 = ((y2 - y1) / (x2 - x1) - slope) / (x2 - x0)
        h = x1 - x0
        qa, qb, qc = c2, slope - c2 * h, y0 - target
        disc = qb * qb - 4.0 * qa * qc
        if qa != 0.0 and disc >= 0.0:
            t1 = (-qb - math.copysign(math.sqrt(disc), qb)) / (2.0 * qa)
            roots = [t1, qc / (qa * t1) if t1 != 0.0 else math.nan]
            inside = [t for t in roots if 0.0 <= t <= h]
            if inside:
                x = x0 + inside[0]
                slope = 2.0 * qa * inside[0] + qb
    return (x, slope) if lo < x < hi and slope < 0.0 else None


def _top_cell(surrogate: Callable[[np.ndarray], np.ndarray], delta: float, start: float, hi: float,
              rtol: float) -> tuple[float, float] | None:
    """The cell ``(a, b)`` of ``[start, hi)`` where the surrogate falls to ``delta`` (above it at
    ``a``, not at ``b``), looked at distances ``hi - eps`` four to a decade from ``hi - start`` down
    to ``rtol hi``; ``None`` when it is still above ``delta`` there."""
    far, near = hi - start, max(rtol * hi, 1e-300)
    if not far > near:
        return None
    decades = math.log10(far / near)
    dist = far * np.logspace(0.0, -decades, max(int(math.ceil(4.0 * decades)), 1) + 1)
    est = surrogate(hi - dist)
    below = np.nonzero(~(est > delta))[0]
    if below.size == 0 or below[0] == 0:
        return None
    j = int(below[0])
    return float(hi - dist[j - 1]), float(hi - dist[j])


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

    Method: first :func:`_fast_phase` (Newton / secant steps on ``log delta`` from the
    surrogate's root, every evaluation at the resolution the final bracket needs, then two
    decisive evaluations straddling the estimated root); if that does not close the bracket,
    Illinois regula falsi on ``log delta_estimate(eps) - log delta`` inside a bracket that is
    kept certified (the low end has ``delta_lower > delta``, the high end ``delta_upper <=
    delta``), with per-evaluation refinement chosen so each evaluation is decisive; stops when
    ``upper - lower <= rtol * upper``. Either way every end returned was evaluated and
    decided by the certified bounds (or is 0, or the profile's ``max_log_ratio`` where delta
    is 0 by the profile's contract), so the speed of the steps never affects soundness.
    """
    if not 0.0 < delta < 1.0:
        raise InvalidParameter(f"delta must be in (0, 1), got {delta!r}")
    if not 0.0 < rtol < 1.0:
        raise InvalidParameter(f"rtol must be in (0, 1), got {rtol!r}")
    hs = profile
    add = extra if extra is not None else (lambda e: 0.0)
    evaluations = 0
    look = getattr(profile, "look_rtol", GUARD_TOL)
    look = look if isinstance(look, float) and 0.0 < look <= GUARD_TOL else GUARD_TOL
    # a profile whose first look is cheap at a finer width answers every coarser request at
    # that width too (an exact window: its brackets are closed whatever is asked)
    finest_free = look if look < GUARD_TOL else 0.0

    def evaluate(eps: float, tol: float) -> tuple[float, float]:
        nonlocal evaluations
        evaluations += 1
        b = hs.bounds(eps, min(tol, finest_free) if finest_free else tol)
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
    closed = getattr(profile, "closed_lower", None)
    if closed is not None and math.isfinite(hi) and hi == profile.max_log_ratio and hi > 0.0:
        # eps(delta) within rtol of the top, decided by a certified closed-form lower bound
        # (delta(top) = 0 and add(top) <= delta were established above): no evaluation needed
        x = hi * (1.0 - 0.99 * rtol)
        if float(closed(np.array([x]))[0]) + add(x) > delta:
            return EpsilonBracket(delta, x, hi, evaluations)
    start = _surrogate_root(profile, delta, lo, hi, rtol)
    # the profile's own slope estimate (clone pairs), when delta is the profile alone
    slope_of = getattr(profile, "log_slope", None) if extra is None else None
    # how close the surrogate's root is expected to be, relative (profiles that know it say so)
    trust = getattr(profile, "surrogate_rtol", None)
    # a certified lower bound on delta at any eps from the profile's last evaluation (profiles
    # that offer one), when delta is the profile alone
    lower_at = getattr(profile, "lower_at", None) if extra is None else None
    fast = _fast_phase(evaluate, gap, delta, rtol, lo, hi, start, profile.max_log_ratio, slope_of, look,
                       trust if isinstance(trust, float) and trust > 0.0 else None, lower_at)
    if isinstance(fast, EpsilonBracket):
        return EpsilonBracket(delta, fast.lower, fast.upper, evaluations)
    if isinstance(fast, AtFloor):
        low, high = _close_around(evaluate, delta, rtol, fast.x, fast.lb, fast.ub,
                                  fast.lo if fast.lo_cert else None, fast.hi, fast.slope, fast.tol)
        return EpsilonBracket(delta, low, high, evaluations)
    lo, hi, lo_certified, f_lo, f_hi = fast
    if not lo_certified:
        t0 = 1e-2
        l0, u0 = evaluate(0.0, t0)
        while l0 <= delta < u0 and t0 > 1e-9:  # decide whether the total variation is <= delta
            t0 *= 1e-2
            l0, u0 = evaluate(0.0, t0)
        if u0 <= delta:
            return EpsilonBracket(delta, 0.0, 0.0, evaluations)
        lo, f_lo, lo_certified = 0.0, gap(l0, u0), l0 > delta
    x0 = start[0] if start is not None else None
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
            # floating-point floor): x is the root to about that resolution
            at_x = slope_of(x) if slope_of is not None else math.nan
            if not (math.isfinite(at_x) and at_x < 0.0) and math.isfinite(f_lo) and math.isfinite(f_hi) and hi > lo:
                at_x = (f_hi - f_lo) / (hi - lo)
            lo, hi = _close_around(evaluate, delta, rtol, x, lb, ub, lo if lo_certified else None, hi, at_x, floor)
            return EpsilonBracket(delta, lo, hi, evaluations)
        tol = min(1e-2, max(floor, 0.2 * abs(gap(lb, ub))))
    raise CertificationError("the epsilon search did not converge")


def _close_around(
    evaluate: Callable[[float, float], tuple[float, float]],
    delta: float,
    rtol: float,
    x: float,
    lb: float,
    ub: float,
    lo: float | None,
    hi: float,
    slope: float,
    floor: float,
) -> tuple[float, float]:
    """A certified bracket ``(lo, hi)`` around ``x``, where the bounds ``[lb, ub]`` contain
    ``delta`` at the resolution that matters or at the floating-point floor (so ``x`` is the root
    to about that resolution). ``lo`` is the certified lower end known so far (``None``: none;
    ``eps* >= 0`` then serves), ``hi`` the certified upper end, ``slope`` an estimate of ``d log
    delta / d eps`` at ``x`` (``nan``: unknown), ``floor`` the relative delta resolution asked
    for first at every new point.

    The ends of a bracket around ``x`` are certified by widening each side until it is decisive
    (its step grows by :data:`WIDEN` while undecided). The first step of each side: ``0.45 rtol
    x``, or where that side's own certified bound is expected to cross delta, :data:`SIDE_MARGIN`
    times ``log(ub / delta) / |slope|`` above ``x`` (the upper bound falls to delta; its relative
    offset from the exact value is about the same at the new point) and ``log(delta / lb) /
    |slope|`` below it. Then each end is closed towards where its own certified bound crosses
    delta: the upper bound's crossing for ``hi``, the lower bound's for ``lo`` (at the floor they
    are about a floor apart, and the root lies between them), by secant steps in the log of that
    bound between the end and the nearest point on its other side, nudged a fifth of the way back
    towards the end (at most :data:`CLOSE_STEPS` per end; none that would move the end by less than
    ``rtol`` without closing the bracket). Every end returned was evaluated and decided (or is 0,
    or the ``hi`` given): the steps only choose where to look."""
    base = 0.45 * rtol * x
    step_hi = step_lo = base
    if math.isfinite(slope) and slope < 0.0 and lb > 0.0:
        step_hi = max(base, min(SIDE_MARGIN * math.log(ub / delta) / abs(slope), 0.25 * x))
        step_lo = max(base, min(SIDE_MARGIN * math.log(delta / lb) / abs(slope), 0.25 * x))
    lo_certified = lo is not None
    low = lo if lo is not None else 0.0
    seen: list[tuple[float, float, float]] = [(x, lb, ub)]  # (eps, lower, upper), each decided below

    def decide(candidate: float) -> tuple[float, float]:
        """Bounds at ``candidate``, tightened until decisive or at the float floor (a tighter
        request that leaves the bracket as wide as before, and wider than asked)."""
        t, before = floor, math.inf
        while True:
            cl, cu = evaluate(candidate, t)
            if cu <= delta or cl > delta or t <= 1e-12 or (cu - cl > t * cl and cu - cl >= 0.9 * before):
                seen.append((candidate, cl, cu))
                return cl, cu
            before = cu - cl
            t = max(t * 0.1, 1e-12)

    for _widen in range(60):
        if x + step_hi < hi and decide(x + step_hi)[1] <= delta:
            hi = x + step_hi
        if x - step_lo > low and decide(x - step_lo)[0] > delta:
            low, lo_certified = x - step_lo, True
        hi_done = hi <= x + step_hi
        lo_done = low >= x - step_lo or x - step_lo <= 0.0
        if hi_done and lo_done:
            break
        if not hi_done:
            step_hi *= WIDEN
        if not lo_done:
            step_lo *= WIDEN
    else:
        raise CertificationError(f"could not separate delta = {delta!r} near eps = {x!r}")
    # eps* >= 0 always, so 0 is a valid lower end when nothing better is known
    low = low if lo_certified else 0.0
    for end in ("hi", "lo"):
        for _step in range(CLOSE_STEPS):
            if hi - low <= rtol * hi:
                break
            if end == "hi":
                at_end = [(e, u) for e, _, u in seen if e == hi]
                inner = [(e, u) for e, _, u in seen if low < e < hi and u > delta]
            else:
                at_end = [(e, v) for e, v, _ in seen if e == low]
                inner = [(e, v) for e, v, _ in seen if low < e < hi and 0.0 < v <= delta]
            if not at_end or not inner or not at_end[0][1] > 0.0:
                break
            ea, va = max(inner) if end == "hi" else min(inner)
            eb, vb = at_end[0]
            if not (va > 0.0 and va != vb):
                break
            cross = ea + (eb - ea) * (math.log(va) - math.log(delta)) / (math.log(va) - math.log(vb))
            probe = cross + 0.2 * (eb - cross)
            if not (min(ea, eb) < probe < max(ea, eb)) or abs(eb - probe) <= 1e-3 * rtol * hi:
                break
            if abs(eb - probe) < rtol * hi and hi - low - abs(eb - probe) > rtol * hi:
                break  # the step would move the end by less than rtol and not close the bracket
            cl, cu = decide(probe)
            if end == "hi" and cu <= delta:
                hi = probe
            elif end == "lo" and cl > delta:
                low = probe
    return low, hi


def _g_chord(xa: float, da: float, xb: float, db: float, delta: float) -> float:
    """Where the chord through ``(e^xa, da)`` and ``(e^xb, db)`` (``da > delta >= db``) meets
    ``delta``, as an eps. ``delta(eps)`` is convex in ``e^eps``, so the chord lies above it and
    this point is on the feasible side of the root (for exact values; only used as a step)."""
    ga, gb = math.expm1(xa), math.expm1(xb)
    return math.log1p(ga + (gb - ga) * (da - delta) / (da - db))


def _g_newton(x: float, d: float, log_slope: float, delta: float) -> float:
    """The Newton step from ``(x, d)`` (``d > delta``) towards ``delta`` in ``g = e^eps``, where
    the profile is convex (``d delta / d g = log_slope d / g``): ``g' = g (1 + (1 - delta / d) /
    |log_slope|)``, on the infeasible side of the root for exact values."""
    return x + math.log1p((1.0 - delta / d) / abs(log_slope))


FastResult = tuple[float, float, bool, float, float]


@dataclass(frozen=True)
class AtFloor:
    """The fast phase met the profile's floating-point floor: at ``x`` the certified bounds
    ``[lb, ub]`` contain delta and are wider than :data:`FLOOR_FACTOR` times the resolution
    ``tol`` asked for. ``lo`` (certified when ``lo_cert``) and ``hi`` are the bracket so far,
    ``slope`` the phase's estimate of ``d log delta / d eps``; :func:`_close_around` takes over."""

    lo: float
    hi: float
    lo_cert: bool
    x: float
    lb: float
    ub: float
    slope: float
    tol: float


#: Relative delta resolution of the fast phase's evaluations, per unit of ``rtol * eps *
#: |d log delta / d eps|`` (the change of log delta across the whole eps bracket). The two
#: straddle points sit ``0.49`` of that change away from the estimated root on either side;
#: a certified bracket of relative width ``0.5`` of it puts its upper end about ``0.25`` above
#: the exact value (block bounds bracket the exact value near their middle), so both points
#: are decided when the estimate is within ``0.2`` (an undecided straddle is re-estimated and
#: tried again, at most three times). Too large a value only costs evaluations
#: (an undecided straddle falls back to the Illinois loop), never soundness.
TOL_FACTOR = 0.5
#: The fast phase looks at a new eps coarsely first (relative width GUARD_TOL, or the
#: profile's ``look_rtol`` when it is finer: the width a first look costs nothing extra at)
#: unless it is expected within GUARD_GAP (in log delta) of the root, and refines there only
#: when the coarse look confirms that.
GUARD_TOL = 1e-2
GUARD_GAP = 0.05
#: Growth of the widening steps around an estimated root at the floating-point floor (the first
#: step of each side from its certified bound and the slope, :data:`SIDE_MARGIN`).
WIDEN = 2.0
#: The first step of each end of a bracket at the floating-point floor is this many times the
#: distance at which that end's certified bound is expected to cross delta (from the slope).
SIDE_MARGIN = 1.25
#: Secant steps closing each end of a bracket at the floating-point floor (each one evaluation).
CLOSE_STEPS = 2
#: An undecided evaluation whose bracket is wider than this many times the resolution asked for
#: is at the profile's floating-point floor (the profile contract: the width asked for whenever
#: floating point allows it), and the fast phase hands over to :func:`_close_around` at once.
FLOOR_FACTOR = 1.5
#: A trusted start (the profile's ``surrogate_rtol``) is looked at this many rtol below the
#: surrogate's root (measured: those roots lie 0 .. 0.6 rtol below eps(delta) at n = 1e8 .. 1e9).
START_SHIFT = 0.3
#: A profile with ``lower_at`` and a trusted surrogate is first looked at this many rtol above the
#: surrogate's root, at the usual resolution (the k-RR blanket, 108 eps(delta) queries n = 10 ..
#: 1e9, CPU min of 3 interleaved runs: 0.81x the time and 341 -> 265 evaluations against no
#: lower_at; with 0.68 rtol above at 0.3x the resolution the block engine paid up to 9x in
#: refinement). When the lower bound does not reach, one more evaluation closes as before.
LOWER_AT_SHIFT = 0.49
#: The Newton phase stops stepping once its estimated error is below this many rtol (then the
#: straddle of +-0.49 rtol around the estimate closes the bracket).
ESTIMATE_CLOSE = 0.4


def _fast_phase(
    evaluate: Callable[[float, float], tuple[float, float]],
    gap: Callable[[float, float], float],
    delta: float,
    rtol: float,
    lo: float,
    hi: float,
    start: tuple[float, float] | None,
    top: float,
    slope_of: Callable[[float], float] | None = None,
    look_tol: float = GUARD_TOL,
    start_rtol: float | None = None,
    lower_at: Callable[[float], float] | None = None,
) -> EpsilonBracket | AtFloor | FastResult:
    """Few-evaluation search for ``eps(delta)``; returns the final bracket, or the certified
    state ``(lo, hi, lo_certified, f_lo, f_hi)`` for the Illinois loop when it cannot close.

    * No surrogate crossing below ``top = max_log_ratio`` (e.g. large eps0 at small n: little
      amplification at this delta): one probe at ``top (1 - 0.99 rtol)``; if its certified
      lower bound exceeds delta, ``[probe, top]`` is the answer (delta(top) = 0); if it is
      feasible, the steps below start where the chord towards ``(top, 0)`` reaches delta.
    * Otherwise Newton steps on ``log delta`` from the surrogate's root and slope (then the
      profile's own slope estimate ``slope_of(eps)`` when it offers one, else secant steps),
      every evaluation refined to the resolution ``tol = TOL_FACTOR rtol eps |d log delta /
      d eps|`` that the final bracket needs (the profile keeps its refinement between calls),
      and never beyond the chord of ``delta`` against ``e^eps`` towards a known feasible end
      (on the feasible side by convexity). When the estimated root is known to ``0.2 rtol``,
      two evaluations at ``+-0.49 rtol`` (or one, next to an end already certified) close the
      bracket; an undecided end is re-estimated and the straddle tried again (three times).
    * ``lower_at`` (profiles that offer it): a certified lower bound on ``delta(eps)`` at any
      ``eps`` from the state of the profile's last evaluation, at no evaluation's cost. After an
      evaluation decided feasible at ``x``, ``lower_at(x (1 - 0.98 rtol)) > delta`` certifies the
      other end of a final bracket. Such profiles are looked at on the feasible side first (a
      trusted start :data:`LOWER_AT_SHIFT` rtol above the surrogate's root; the straddle's upper
      point); when the lower bound does not reach, the other end is evaluated as before.
    """
    lo_cert, f_lo, f_hi = False, math.nan, -math.inf

    def close_below(x_hi: float) -> EpsilonBracket | None:
        """The bracket ``[x_hi (1 - 0.98 rtol), x_hi]`` when ``x_hi`` was just decided feasible and
        the profile's lower bound at the other end exceeds delta (no evaluation)."""
        if lower_at is None:
            return None
        a = x_hi * (1.0 - 0.98 * rtol)
        if lo_cert and a <= lo:
            return EpsilonBracket(delta, lo, x_hi, 0)
        return EpsilonBracket(delta, a, x_hi, 0) if lower_at(a) > delta else None

    d_lo, d_hi = math.nan, 0.0  # delta estimates at the ends (0 at top)
    from_surrogate = start is not None
    if start is None:
        if not (math.isfinite(top) and hi == top and top > 0.0):
            return lo, hi, lo_cert, f_lo, f_hi
        x = top * (1.0 - 0.99 * rtol)
        lb, ub = evaluate(x, look_tol)
        if lb > delta:
            return EpsilonBracket(delta, x, hi, 0)
        if not (ub <= delta and lb > 0.0):
            return lo, hi, lo_cert, f_lo, f_hi
        hi, f_hi, d_hi = x, gap(lb, ub), 0.5 * (lb + ub)
        # Extrapolate the chord through (e^x, delta(x)) and (e^top, 0) down to delta: beyond
        # the chord's interval a convex function lies above its chord, so this is a start on
        # the infeasible side (for exact values), and the chord's log-slope there a slope.
        g_top, g_x = math.expm1(top), math.expm1(x)
        g_r = g_top - (g_top - g_x) * delta / d_hi
        if not 0.0 < g_r < g_top:  # (at a tiny top, e.g. eps0 = 1e-310, g_r rounds onto g_top: no chord)
            return lo, hi, lo_cert, f_lo, f_hi
        x_r = math.log1p(g_r)
        start = (x_r, -(g_r + 1.0) / (g_top - g_r))
    x, slope = start
    if not (math.isfinite(slope) and slope < 0.0):
        return lo, hi, lo_cert, f_lo, f_hi
    slope_err = 0.1  # the surrogate's slope: a rough guide
    # estimated distance of x from the root (None: unknown; from the profile's own estimate of
    # its surrogate's accuracy when the start is the surrogate's root)
    err: float | None = x * start_rtol if start_rtol is not None and from_surrogate else None
    if err is not None:
        # a trusted surrogate root is usually within a fraction of rtol of eps(delta), a little
        # low: looking 0.3 rtol below it certifies a lower end that one more evaluation, 0.98
        # rtol above, closes (two evaluations instead of a look and a straddle); with lower_at
        # the feasible end is looked at first and may close the bracket alone
        x *= 1.0 + LOWER_AT_SHIFT * rtol if lower_at is not None else 1.0 - START_SHIFT * rtol
    prev: tuple[float, float, float] | None = None  # (x, gap, tol) of the previous evaluation
    prev_step: tuple[float, float] | None = None  # (delta estimate, log-slope) the previous step used
    estimate: float | None = None
    for _ in range(8):
        tol_fin = min(1e-2, max(1e-12, TOL_FACTOR * rtol * x * abs(slope)))
        tol = tol_fin
        if err is None or abs(slope) * err > GUARD_GAP:
            # possibly far from the root: look coarsely first, so that the profile is not
            # refined at an eps that does not matter
            tol = max(tol_fin, look_tol)
            lb, ub = evaluate(x, tol)
            if abs(gap(lb, ub)) <= GUARD_GAP and tol > tol_fin:
                tol = tol_fin
                lb, ub = evaluate(x, tol)
        else:
            lb, ub = evaluate(x, tol)
        g = gap(lb, ub)
        mid = 0.5 * (lb + ub)
        if ub <= delta:
            hi, f_hi, d_hi = x, g, mid
            closed = close_below(x)
            if closed is not None:
                return closed
        elif lb > delta:
            lo, f_lo, d_lo, lo_cert = x, g, mid, True
        elif ub - lb > FLOOR_FACTOR * tol * mid:
            # delta within a bracket much wider than asked: the profile's floating-point floor;
            # no straddle at rtol can be decided here, so the ends are certified around x
            return AtFloor(lo, hi, lo_cert, x, lb, ub, slope, tol)
        else:  # delta within the bracket at this resolution: x is the root to ~tol / |slope|
            estimate = x
            break
        exact = slope_of(x) if slope_of is not None else math.nan
        if math.isfinite(exact) and exact < 0.0:
            slope, slope_err = exact, 1e-3  # the profile's slope at x: Newton
        elif prev is not None and x != prev[0]:
            s = (g - prev[1]) / (x - prev[0])
            if math.isfinite(s) and s < 0.0:
                slope = s
                slope_err = (prev[2] + tol) / abs(g - prev[1]) + 0.5 * abs(x - prev[0]) / x
        new = x - g / slope
        if lo_cert and math.isfinite(d_lo) and d_lo > delta >= d_hi:
            new = min(new, _g_chord(lo, d_lo, hi, d_hi, delta))
        overshot = (prev is not None and prev_step is not None and prev[1] > 0.0 > g and -g > 2.0 * prev[1]
                    and prev[0] == lo)
        if overshot:
            # the step from the infeasible end overshot (log delta strongly concave there, e.g. a
            # cliff below max_log_ratio): step from that end again, in g = e^eps, where delta is
            # convex, so the tangent's root is on the infeasible side (for exact values)
            assert prev is not None and prev_step is not None
            new = _g_newton(prev[0], prev_step[0], prev_step[1], delta)
        if not lo < new < hi:
            new = math.sqrt(lo * hi) if lo > 0.0 else 0.5 * (lo + hi)
        # slope error, curvature (log delta ~ -a eps^2 near the root: |f''/f'| ~ 1/eps) and the
        # estimate's noise (block bounds bracket the exact value near their middle: a quarter
        # of the relative width, in practice)
        err = abs(new - x) * slope_err + 0.5 * (new - x) ** 2 / x + 0.25 * tol / abs(slope)
        if prev_step is not None and prev is not None and x != prev[0]:
            # ... and the curvature seen between the last two slopes (a cliff: the slope changes by
            # orders of magnitude within a step)
            bend = abs(slope - prev_step[1]) / abs(x - prev[0])
            err += 0.5 * bend * (new - x) ** 2 / abs(slope)
        if overshot:
            err = None  # (look coarsely first)
            prev, prev_step = None, None
        else:
            prev, prev_step = (x, g, tol), (mid, slope)
        x = new
        if err is not None and err <= ESTIMATE_CLOSE * rtol * x:
            estimate = x
            break
    if estimate is None:
        return lo, hi, lo_cert, f_lo, f_hi
    for _attempt in range(3):
        tol_fin = min(1e-2, max(1e-12, TOL_FACTOR * rtol * estimate * abs(slope)))
        # The two ends: next to a certified end when one is close, else +-0.49 rtol around the estimate.
        if hi <= estimate * (1.0 + 0.6 * rtol):
            a, b = hi * (1.0 - 0.98 * rtol), hi
        elif lo_cert and lo >= estimate * (1.0 - 0.6 * rtol):
            a, b = lo, lo / (1.0 - 0.98 * rtol)
        else:
            a, b = estimate * (1.0 - 0.49 * rtol), estimate * (1.0 + 0.49 * rtol)
        last: tuple[float, float, float] | None = None
        for point in (b, a):
            if not lo < point < hi:
                continue
            lb, ub = evaluate(point, tol_fin)
            g = gap(lb, ub)
            last = (point, g, 0.5 * (lb + ub))
            if ub <= delta:
                hi, f_hi = point, g
                closed = close_below(point)
                if closed is not None:
                    return closed
            elif lb > delta:
                lo, f_lo, lo_cert = point, g, True
            elif ub - lb > FLOOR_FACTOR * tol_fin * last[2]:
                return AtFloor(lo, hi, lo_cert, point, lb, ub, slope, tol_fin)
            if point == b and not ub <= delta:
                break  # the estimate was too high: re-estimate before spending the other end
        if lo_cert and hi - lo <= rtol * hi:
            return EpsilonBracket(delta, lo, hi, 0)
        if last is None:
            break
        exact = slope_of(last[0]) if slope_of is not None else math.nan
        if math.isfinite(exact) and exact < 0.0:
            slope = exact
        estimate = last[0] - last[1] / slope
        if last[1] > 0.0:
            # from the infeasible side the step in g = e^eps (delta convex there) stays on that
            # side; it differs from the log step only at second order in the small gap of a good
            # estimate, but not below a cliff, where the log step overshoots by far
            estimate = min(estimate, _g_newton(last[0], last[2], slope, delta))
        if not lo < estimate < hi:
            break
    return lo, hi, lo_cert, f_lo, f_hi


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

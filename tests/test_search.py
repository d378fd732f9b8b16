"""The certified search helpers (numeric/search.py) and the core's public seams.

The searches are checked against problems with closed-form answers that share no code with
the package: a monotone predicate with a known threshold, and the privacy profile of one
randomized-response report, ``delta(eps) = (p - e^eps q)_+``.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shuffle_accountant import api, planning
from shuffle_accountant.numeric import binomial as bn
from shuffle_accountant.numeric.clones import ClonePair, HockeyStick
from shuffle_accountant.numeric.profile import UNDERFLOW_FLOOR, DeltaBounds, PrivacyProfile
from shuffle_accountant.numeric.renyi import renyi_bounds
from shuffle_accountant.errors import CertificationError
from shuffle_accountant.numeric import search
from shuffle_accountant.numeric.search import EpsilonBracket, NoBracket, epsilon_for_delta, monotone_boundary


class RandomizedResponse:
    """One binary randomized-response report: ``delta(eps) = (p - e^eps q)_+`` exactly."""

    def __init__(self, eps0: float) -> None:
        self.p = 1.0 / (1.0 + math.exp(-eps0))
        self.q = 1.0 - self.p
        self.max_log_ratio = eps0

    def bounds(self, eps: float, rtol: float) -> DeltaBounds:
        v = max(self.p - math.exp(eps) * self.q, 0.0)
        return DeltaBounds(eps, max(v * (1 - 1e-14) - 1e-17, 0.0), v * (1 + 1e-14) + 1e-17, 1, True)


@given(st.floats(0.05, 8.0), st.floats(1e-9, 0.3), st.sampled_from([1e-3, 1e-6, 1e-9]))
@settings(max_examples=60, deadline=None)
def test_epsilon_for_delta_brackets_the_closed_form(eps0: float, frac: float, rtol: float) -> None:
    rr = RandomizedResponse(eps0)
    assert isinstance(rr, PrivacyProfile)
    delta = frac * (rr.p - rr.q)  # 0 < delta < TV distance, so eps* > 0
    exact = math.log((rr.p - delta) / rr.q)
    br = epsilon_for_delta(rr, delta, rtol)
    assert br.lower <= exact * (1 + 1e-12) + 1e-15
    assert br.upper >= exact * (1 - 1e-12)
    assert br.upper - br.lower <= rtol * br.upper * 1.0001 + 1e-15
    assert rr.bounds(br.upper, rtol).upper <= delta * (1 + 1e-12)


@given(st.floats(1e-6, 1e6), st.floats(1e-3, 1e3), st.sampled_from(["low", "high"]))
@settings(max_examples=80, deadline=None)
def test_monotone_boundary_real(threshold: float, start_factor: float, side: str) -> None:
    def ok(x: float) -> bool:
        return x <= threshold if side == "low" else x >= threshold

    start = min(max(threshold * start_factor, 1e-9), 1e9)
    b = monotone_boundary(ok, start, feasible_side=side, low=1e-9, high=1e9, rtol=1e-8)  # type: ignore[arg-type]
    assert ok(b.feasible) and b.infeasible is not None and not ok(b.infeasible)
    assert abs(b.feasible - b.infeasible) <= 1e-8 * b.feasible * 1.0001


@given(st.integers(1, 10**12), st.integers(1, 10**6))
@settings(max_examples=80, deadline=None)
def test_monotone_boundary_integer(threshold: int, start: int) -> None:
    b = monotone_boundary(lambda n: n >= threshold, start, feasible_side="high", low=1, high=10**12, integer=True)
    assert b.feasible == threshold
    assert (b.infeasible == threshold - 1) if threshold > 1 else (b.infeasible is None)


def test_monotone_boundary_no_bracket_and_open_end() -> None:
    with pytest.raises(NoBracket):
        monotone_boundary(lambda n: False, 5, feasible_side="high", low=1, high=1000, integer=True)
    with pytest.raises(NoBracket):
        monotone_boundary(lambda x: False, 1.0, feasible_side="low", low=1e-6, high=10.0)
    b = monotone_boundary(lambda x: True, 1.0, feasible_side="low", low=1e-6, high=10.0)
    assert b.feasible == 10.0 and b.infeasible is None


# --- regressions found by hostile inputs (issue 11) -----------------------------------


def test_binomial_values_where_boost_overflows_match_mpmath() -> None:
    """Boost's ibeta_derivative overflows at p ~ 1e-304 (solve n --eps0 700 crashed)."""
    p = 9.85967654375977e-305
    got = bn.pmf(np.array([0.0, 1.0, 9.0]), 524287.0, p)
    with mpmath.workdps(50):
        for k, g in zip((0, 1, 9), got):
            exact = mpmath.binomial(524287, k) * mpmath.mpf(p) ** k * (1 - mpmath.mpf(p)) ** (524287 - k)
            assert abs(g - float(exact)) <= 1e-13 * float(exact) + 1e-320


def test_solve_n_with_eps0_700_is_a_clear_refusal() -> None:
    with pytest.raises(NoBracket, match="for any n"):
        planning.solve_n(0.1, 1e-6, 700.0)


def test_solve_n_when_one_user_suffices_has_no_previous_value() -> None:
    b = planning.solve_n(700.0, 1e-6, 1.0)
    assert b.value == 1 and "previous_n" not in b.details


def test_delta_upper_bound_is_never_zero_below_eps0() -> None:
    """At n = 1e12 every term underflows; an upper bound of 0 would claim perfect privacy."""
    b = api.delta(3.0, 10**12, 0.5, "clones")
    assert b.value is not None and b.value >= UNDERFLOW_FLOOR
    assert HockeyStick(ClonePair(10**12, 0.5 * math.exp(-3), 0.5 * math.exp(-3), 0.9, 0.1)).bounds(0.5).upper > 0


def test_delta_above_one_is_capped_and_flagged() -> None:
    b = api.delta(3.0, 10_000, 0.5, "clones", delta0=0.5)
    assert b.value == 1.0 and b.details["bracket"][1] <= 1.0
    assert any("no guarantee" in w for w in b.warnings)


def test_renyi_at_eps0_700_is_capped_not_nan() -> None:
    eps0 = 700.0
    r = 0.5 * math.exp(-eps0)
    pair = ClonePair(100_000, r, r, 1.0 / (1.0 + math.exp(-eps0)), 1.0 / (math.exp(eps0) + 1.0))
    rb = renyi_bounds(pair, [2.0, 8.0])
    assert all(math.isfinite(u) and u <= eps0 * (1 + 1e-12) for u in rb.upper)
    assert all(0.0 <= lo <= u for lo, u in zip(rb.lower, rb.upper))


class FlooredRR(RandomizedResponse):
    """:class:`RandomizedResponse` whose certified bracket cannot be narrower than ``floor``
    relative (a profile at its floating-point floor), whatever is requested."""

    def __init__(self, eps0: float, floor: float) -> None:
        super().__init__(eps0)
        self.floor = floor

    def bounds(self, eps: float, rtol: float) -> DeltaBounds:
        v = max(self.p - math.exp(eps) * self.q, 0.0)
        return DeltaBounds(eps, v * (1 - self.floor), v * (1 + self.floor) + 1e-300, 1, False)

    def log_slope(self, eps: float) -> float:
        v = self.p - math.exp(eps) * self.q
        return -math.exp(eps) * self.q / v if v > 0.0 else math.nan


@given(st.floats(0.05, 8.0), st.floats(1e-6, 0.3), st.sampled_from([1e-3, 3e-5, 1e-6]), st.booleans())
@settings(max_examples=60, deadline=None)
def test_search_at_a_floor_brackets_the_root_in_few_evaluations(eps0: float, frac: float, floor: float,
                                                                slope: bool) -> None:
    """At the floor the search widens around its estimate (first step from the bracket's width and
    the slope, doubling) and closes each end by bisection: the bracket contains the exact root, its
    upper end is decided feasible, it is not much wider than the floor forces (the root moves by
    about floor / |d log delta / d eps| within the floor's bracket), and it takes few evaluations."""
    rr = FlooredRR(eps0, floor)
    if not slope:  # the same floor without a slope: the secant's slope sets the first step
        rr.log_slope = lambda eps: math.nan  # type: ignore[method-assign]
    delta = frac * (rr.p - rr.q)
    exact = math.log((rr.p - delta) / rr.q)
    br = epsilon_for_delta(rr, delta, 1e-6)
    assert br.lower <= exact <= br.upper, (br, exact)
    assert rr.bounds(br.upper, 1e-6).upper <= delta
    zone = 2.0 * floor * (rr.p - delta) / (rr.q * math.exp(exact))  # eps-width where the floor hides the sign
    assert br.upper - br.lower <= 2.0 * zone + 2e-6 * br.upper, (br, zone)
    assert br.evaluations <= 80, br


def _trace_evaluations(profile: RandomizedResponse) -> list[float]:
    """Record every eps at which ``profile.bounds`` is called (the list returned)."""
    seen: list[float] = []
    bounds = profile.bounds

    def traced(eps: float, rtol: float) -> DeltaBounds:
        seen.append(eps)
        return bounds(eps, rtol)

    profile.bounds = traced  # type: ignore[method-assign]
    return seen


@given(st.floats(0.05, 8.0), st.floats(1e-6, 0.3), st.sampled_from([1e-3, 3e-5]))
@settings(max_examples=40, deadline=None)
def test_search_meeting_the_floor_from_its_start_closes_there(eps0: float, frac: float, floor: float) -> None:
    """With a surrogate at the root, the fast phase's first evaluation already sits at the floor
    (its bracket contains delta and is far wider than asked): the search certifies the ends around
    that point at once (``_close_around``) instead of restarting from ``eps = 0``; the bracket still
    contains the exact root and its upper end is decided feasible."""
    rr = FlooredRR(eps0, floor)
    rr.surrogate = lambda e: np.maximum(rr.p - np.exp(e) * rr.q, 0.0)  # type: ignore[attr-defined]
    bounds = rr.bounds
    seen = _trace_evaluations(rr)
    delta = frac * (rr.p - rr.q)
    exact = math.log((rr.p - delta) / rr.q)
    br = epsilon_for_delta(rr, delta, 1e-6)
    assert br.lower <= exact <= br.upper, (br, exact)
    assert bounds(br.upper, 1e-6).upper <= delta
    assert min(seen) > 0.0, seen  # never restarted from eps = 0
    zone = 2.0 * floor * (rr.p - delta) / (rr.q * math.exp(exact))
    assert br.upper - br.lower <= 2.0 * zone + 2e-6 * br.upper, (br, zone)
    # each end's first step where its own bound crosses delta, and no close step that moves an end
    # by less than rtol without closing the bracket (a symmetric first step and unconditional close
    # steps took 10-11 evaluations in a fifth of such cases)
    assert br.evaluations <= 9, (br, seen)


class LinedRR(RandomizedResponse):
    """:class:`RandomizedResponse` with a trusted surrogate and ``lower_at``: the line
    ``p - e^eps q`` of the optimal set, valid at every eps, known only after an evaluation."""

    surrogate_rtol = 1e-9

    def __init__(self, eps0: float, honest: bool = True) -> None:
        super().__init__(eps0)
        self.evaluated = False
        self.honest = honest

    def bounds(self, eps: float, rtol: float) -> DeltaBounds:
        self.evaluated = True
        return super().bounds(eps, rtol)

    def surrogate(self, eps: np.ndarray) -> np.ndarray:
        return np.maximum(self.p - np.exp(eps) * self.q, 0.0)

    def lower_at(self, eps: float) -> float:
        if not (self.evaluated and self.honest):
            return 0.0
        return max((self.p - math.exp(eps) * self.q) * (1 - 1e-14) - 1e-17, 0.0)


@given(st.floats(0.05, 8.0), st.floats(1e-9, 0.3), st.sampled_from([1e-3, 1e-6]))
@settings(max_examples=60, deadline=None)
def test_lower_at_closes_the_bracket_after_one_feasible_evaluation(eps0: float, frac: float, rtol: float) -> None:
    """A profile whose last evaluation yields a certified lower bound at every eps (``lower_at``)
    is evaluated at the feasible end first, and that lower bound certifies the other end: one
    evaluation where two were needed, the same kind of bracket (it holds the root, its upper end
    is decided feasible, it is at most rtol wide). A ``lower_at`` that knows nothing (0) changes
    nothing but where the search looks."""
    delta = frac * (1.0 / (1.0 + math.exp(-eps0)) - 1.0 / (1.0 + math.exp(eps0)))
    lined, blind = LinedRR(eps0), LinedRR(eps0, honest=False)
    exact = math.log((lined.p - delta) / lined.q)
    for profile in (lined, blind):
        br = epsilon_for_delta(profile, delta, rtol)
        assert br.lower <= exact * (1 + 1e-12) + 1e-15 and br.upper >= exact * (1 - 1e-12), (br, exact)
        assert br.upper - br.lower <= rtol * br.upper * 1.0001 + 1e-15
        assert profile.bounds(br.upper, rtol).upper <= delta
    with_lines = epsilon_for_delta(LinedRR(eps0), delta, rtol).evaluations
    assert with_lines <= epsilon_for_delta(LinedRR(eps0, honest=False), delta, rtol).evaluations


def test_lower_at_certifies_the_other_end_without_evaluating_it() -> None:
    """From a start at the root, the first (feasible) evaluation closes the bracket by itself."""
    rr = LinedRR(1.0)
    delta = 0.25 * (rr.p - rr.q)
    exact = math.log((rr.p - delta) / rr.q)
    rr.surrogate = lambda eps: np.where(eps < exact, 2.0 * delta, 0.5 * delta)  # type: ignore[method-assign]
    seen = _trace_evaluations(rr)
    br = search._fast_phase(lambda e, t: (rr.bounds(e, t).lower, rr.bounds(e, t).upper),
                            lambda lb, ub: math.log(0.5 * (lb + ub)) - math.log(delta), delta, 1e-6, 0.0, 1.0,
                            (exact, -10.0), 1.0, None, 1e-2, 1e-9, rr.lower_at)
    assert isinstance(br, EpsilonBracket), br
    assert br.lower <= exact <= br.upper and br.upper - br.lower <= 1e-6 * br.upper
    assert len(set(seen)) == 1 and seen[0] == br.upper  # one point evaluated: the upper end


def test_delta_bounds_hold_plain_floats() -> None:
    b = DeltaBounds(0.5, np.float64(1e-7), np.float64(2e-7), 1, True)
    assert type(b.lower) is float and type(b.upper) is float
    assert (b.lower, b.upper) == (1e-7, 2e-7)
    with pytest.raises(CertificationError):
        DeltaBounds(0.5, np.float64("nan"), 1.0, 1, True)


class _QuadraticLogProfile:
    """A stand-in profile whose surrogate is ``exp(-b eps - c eps^2)``: its root is known in closed form."""

    def __init__(self, b: float, c: float) -> None:
        self.b, self.c = b, c

    def surrogate(self, eps: np.ndarray) -> np.ndarray:
        e = np.asarray(eps, dtype=float)
        return np.exp(-self.b * e - self.c * e * e)


@pytest.mark.parametrize("root, where", [(10.0 * 10**-0.9 * (1 - 1e-3), "last cell"),
                                         (10.0 * 10**-0.9 * (1 - 2e-2), "inner cell"),
                                         (0.5 * (1 + 10**-0.1) * 10.0 * 10**-1.2, "middle")])
def test_surrogate_root_is_quadratic_in_every_cell(root: float, where: str) -> None:
    """The start estimate interpolates log surrogate quadratically in the cell of the crossing, the last
    of the zoom grid included (there it was log-linear: 5e-6 .. 2e-5 off, one more evaluation of the
    certified search; found by the k-RR speed work)."""
    b, c = 3.0, 2.0
    prof = _QuadraticLogProfile(b, c)
    delta = math.exp(-b * root - c * root * root)
    got = search._surrogate_root(prof, delta, 0.0, 10.0)  # type: ignore[arg-type]
    assert got is not None, where
    x, slope = got
    assert abs(x - root) <= 1e-9 * root, (where, x, root)
    assert abs(slope - (-b - 2.0 * c * root)) <= 1e-6 * abs(slope)

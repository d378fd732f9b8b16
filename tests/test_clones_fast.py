"""The fast single eps(delta) query (issue 13) against the simple path it replaces.

The fast path is the few-evaluation start of :func:`~shuffle_accountant.numeric.search.epsilon_for_delta`
(Newton / secant from the surrogate, a straddle around the estimated root) plus the cache of
Boost values at the cuts of :mod:`~shuffle_accountant.numeric.clones`. The simple path is the
Illinois search alone (no fast phase) on a pair whose kernels call Boost every time. Checked:

* on a grid of small cases, both brackets contain the exact eps of the independent mpmath
  brute force (``tests/oracle.py``), and the fast upper end is not looser than the simple
  one by more than the requested rtol;
* at larger n (no oracle), the two certified brackets overlap and the same rtol comparison holds;
* the cache returns the very numbers an uncached kernel computes, over a sequence of eps;
* the search brackets a closed form for a profile whose surrogate is deliberately wrong.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import oracle
from test_search import RandomizedResponse
from shuffle_accountant.analyses import pair_for
from shuffle_accountant.numeric import clones, search
from shuffle_accountant.numeric.clones import ClonePair, HockeyStick, kernel_hockey_stick
from shuffle_accountant.numeric.search import EpsilonBracket, epsilon_for_delta

RTOL = 1e-6


def simple_bracket(pair: ClonePair, delta: float, rtol: float, monkeypatch: pytest.MonkeyPatch) -> EpsilonBracket:
    """The simple path: no fast phase, no cut cache."""
    with monkeypatch.context() as m:
        m.setattr(search, "_fast_phase", lambda evaluate, gap, delta, rtol, lo, hi, *rest: (lo, hi, False, math.nan,
                                                                                             -math.inf))
        plain = clones._cut_terms
        m.setattr(clones, "_cut_terms", lambda k, c, s, rel, cache: plain(k, c, s, rel, None))
        return epsilon_for_delta(HockeyStick(pair), delta, rtol)


def fast_bracket(pair: ClonePair, delta: float, rtol: float) -> EpsilonBracket:
    return epsilon_for_delta(HockeyStick(pair), delta, rtol)


def oracle_pair(method: str, eps0: float, n: int):
    e0 = mpmath.mpf(eps0)
    if method == "krr-lower":
        return oracle.clone_pair(n, *oracle.krr_params(e0, 3))
    params = oracle.clones_params(e0) if method == "clones" else oracle.stronger_clones_params(e0)
    return oracle.clone_pair(n, *params)


def method_pair(method: str, eps0: float, n: int) -> ClonePair:
    """The pair of a clone method (k = 3 for the k-RR lower bound: p0 > 0, r0 = r1)."""
    return pair_for(method, eps0, n, 3 if method == "krr-lower" else None).pair


@pytest.mark.parametrize("method", ["clones", "stronger-clones", "krr-lower"])
@pytest.mark.parametrize("n,eps0", [(n, e) for n in (3, 20, 60) for e in (0.5, 2.0, 5.0)])
def test_fast_and_simple_brackets_contain_the_oracle(method: str, n: int, eps0: float,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    pair = method_pair(method, eps0, n)
    exact_pair = oracle_pair(method, eps0, n)
    for delta in (1e-2, 1e-6):
        exact = float(oracle.epsilon_exact(exact_pair, mpmath.mpf(delta)))
        fast = fast_bracket(pair, delta, RTOL)
        simple = simple_bracket(pair, delta, RTOL, monkeypatch)
        for br in (fast, simple):
            assert br.lower <= exact * (1 + 1e-11) + 1e-15, (n, eps0, delta, br, exact)
            assert br.upper >= exact * (1 - 1e-11) - 1e-15, (n, eps0, delta, br, exact)
            assert br.upper - br.lower <= RTOL * br.upper * (1 + 1e-9) + 1e-15
        assert fast.upper <= simple.upper * (1 + RTOL) + 1e-15, (n, eps0, delta, fast, simple)


@pytest.mark.parametrize("method", ["clones", "stronger-clones", "krr-lower"])
@pytest.mark.parametrize("n,eps0,delta", [(10**4, 1.0, 1e-6), (10**4, 8.0, 1e-6), (10**5, 0.5, 1e-10),
                                          (10**6, 3.0, 1e-6), (10**3, 3.0, 1e-10)])
def test_fast_agrees_with_simple_at_larger_n(method: str, n: int, eps0: float, delta: float,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    pair = method_pair(method, eps0, n)
    fast = fast_bracket(pair, delta, RTOL)
    simple = simple_bracket(pair, delta, RTOL, monkeypatch)
    assert fast.lower <= simple.upper and simple.lower <= fast.upper, (fast, simple)
    assert fast.upper <= simple.upper * (1 + RTOL), (fast, simple)
    assert fast.upper - fast.lower <= RTOL * fast.upper * (1 + 1e-9)
    # the fast end is feasible by a fresh certified evaluation (no state shared with the search)
    assert HockeyStick(pair).bounds(fast.upper, 1e-9).upper <= delta * (1 + 1e-12)


@given(st.integers(2, 10**7), st.floats(0.1, 6.0), st.lists(st.floats(0.0, 1.0), min_size=2, max_size=6))
@settings(max_examples=40, deadline=None)
def test_cut_cache_agrees_with_the_uncached_kernel(n: int, eps0: float, fracs: list[float]) -> None:
    """Cached kernels (Boost values reused, runs of consecutive clone counts by recurrence)
    agree with a fresh uncached kernel within the two certified error bounds, over a sequence
    of eps; where no run applies the numbers are identical."""
    pair = pair_for("clones", eps0, n).pair
    geo = clones.TotalsGeometry(pair)
    mu = geo.N * geo.p
    sd = math.sqrt(max(geo.N * geo.p * (1 - geo.p), 1.0))
    spread = np.unique(np.clip(np.round(mu + sd * np.linspace(-6, 6, 37)), 0, geo.N))
    dense = np.arange(max(0.0, np.floor(mu) - 30), min(float(geo.N), np.floor(mu) + 30) + 1)
    pu, pv, ps = geo.mirrored_pair()
    for c in (spread, dense):
        cache = clones._CutCache()
        u, v = np.full(c.shape, pu), np.full(c.shape, pv)
        for f in fracs:
            for eps in (f * eps0, f * eps0 * (1 + 1e-7)):  # a nearby eps: most cuts are hits
                got, got_err = clones._kernel_upper_tail(c, u, v, ps, np.full(c.shape, eps), geo.rel, cache)
                want, want_err = kernel_hockey_stick(c, u, v, ps, eps, geo.rel)
                assert np.all(np.abs(got - want) <= got_err + want_err + 1e-300)
                assert np.all(got_err <= 12.0 * want_err + 1e-300)  # tails within 10x Boost's budget
                if np.all(np.diff(c) > 1.0):
                    assert np.array_equal(got, want) and np.array_equal(got_err, want_err)


@given(st.integers(2, 10**7), st.floats(0.1, 6.0), st.lists(st.floats(0.0, 1.0), min_size=2, max_size=6),
       st.sampled_from([60, 1200]))
@settings(max_examples=40, deadline=None)
def test_cut_state_agrees_with_a_fresh_kernel(n: int, eps0: float, fracs: list[float], half: int) -> None:
    """The kept cut terms (``_CutState``: only counts whose cut moved get new terms) give the
    kernel of a fresh uncached computation over a sequence of eps, jumps and nearby steps mixed:
    within the two certified error bounds, and identical numbers where neither side used the
    run recurrence (fewer than ``RUN_BULK`` counts)."""
    pair = pair_for("clones", eps0, n).pair
    geo = clones.TotalsGeometry(pair)
    u, v, s = geo.pa1, geo.pb1, geo.s
    if u < v:
        u, v, s = 1.0 - u, 1.0 - v, 1.0 - s
    mu = geo.N * geo.p
    c = np.arange(max(0.0, np.floor(mu) - half), min(float(geo.N), np.floor(mu) + half) + 1)
    state, cache = clones._CutState(c), clones._CutCache()
    for f in fracs:
        for eps in (f * eps0, f * eps0 * (1 + 1e-6)):
            got, got_err = state.kernel(u, v, s, eps, geo.rel, cache)
            want, want_err = kernel_hockey_stick(c, np.full(c.shape, u), np.full(c.shape, v), s, eps, geo.rel)
            assert np.all(np.abs(got - want) <= got_err + want_err + 1e-300)
            assert np.all(got_err <= 12.0 * want_err + 1e-300)
            if c.size < clones.RUN_BULK:
                assert np.array_equal(got, want) and np.array_equal(got_err, want_err)


def upper_tail(c: int, j: int, s: mpmath.mpf) -> mpmath.mpf:
    """``P[Bin(c, s) > j]`` by summing the pmf upwards with the exact ratio recurrence in the
    current mpmath precision (mpmath's betainc does not converge at these sizes)."""
    term = mpmath.binomial(c, j + 1) * s ** (j + 1) * (1 - s) ** (c - j - 1)
    total = mpmath.mpf(0)
    i = j + 1
    while i <= c and term > total * mpmath.mpf("1e-45"):
        total += term
        term *= mpmath.mpf(c - i) / (i + 1) * s / (1 - s)
        i += 1
    return total


@pytest.mark.parametrize("c0,s,beta", [(20, 0.5, 0.55), (1000, 0.5, 0.53), (1000, 0.3, 0.33), (20000, 0.5, 0.51),
                                       (20000, 0.5 / 1.5, 0.35)])
def test_run_recurrence_against_mpmath(c0: int, s: float, beta: float) -> None:
    """The run recurrence's pmf and tail values lie within their stated relative errors of
    40-digit mpmath values (an independent computation)."""
    c = np.arange(c0, c0 + 300, dtype=float)
    k = np.floor(beta * (c + 1.0)) + 1.0
    got = clones._run_values(k, c, s, clones.bn.pmf_error_budget(c0 + 300))
    assert got is not None
    b, tail, rel_b, rel_t, done = got
    assert done.sum() >= 0.5 * done.size  # the rest (tails within 10x Boost's budget only) go to Boost
    with mpmath.workdps(40):
        sp = mpmath.mpf(s)
        for i in np.nonzero(done)[0][::37]:
            cc, j = int(c[i]), int(k[i]) - 1
            exact_b = mpmath.binomial(cc, j) * sp**j * (1 - sp) ** (cc - j)
            exact_t = upper_tail(cc, j, sp)
            assert abs(b[i] - exact_b) <= rel_b[i] * exact_b * (1 + 1e-9), (i, b[i], exact_b)
            assert abs(tail[i] - exact_t) <= rel_t[i] * exact_t * (1 + 1e-9), (i, tail[i], exact_t)
            assert rel_t[i] <= 1e-9 and rel_b[i] <= 1e-9


class BiasedRR(RandomizedResponse):
    """test_search's exact randomized-response profile with a surrogate that is off by a
    constant factor (so the search starts from a wrong root)."""

    def __init__(self, eps0: float, bias: float) -> None:
        super().__init__(eps0)
        self.bias = bias

    def surrogate(self, eps: np.ndarray) -> np.ndarray:
        return self.bias * np.maximum(self.p - np.exp(eps) * self.q, 0.0)


@given(st.floats(0.05, 8.0), st.floats(1e-9, 0.999), st.sampled_from([1e-3, 1e-6, 1e-9]), st.floats(0.01, 100.0))
@settings(max_examples=80, deadline=None)
def test_search_with_a_wrong_surrogate_brackets_the_closed_form(eps0: float, frac: float, rtol: float,
                                                                bias: float) -> None:
    rr = BiasedRR(eps0, bias)
    delta = frac * (rr.p - rr.q)
    exact = math.log1p((rr.p - rr.q - delta) / rr.q)  # where p - e^eps q = delta
    br = epsilon_for_delta(rr, delta, rtol)
    assert br.lower * (1 - 1e-12) - 1e-15 <= exact <= br.upper * (1 + 1e-12)
    assert br.upper * (1 - rtol * 1.0001) - 1e-15 <= br.lower
    assert rr.bounds(br.upper, rtol).upper <= delta * (1 + 1e-12)  # the returned end is feasible


@pytest.mark.parametrize("n,p,k0", [(1000, 0.3, 250), (10**6, 0.05, 49_900), (10**9, 0.0498, 49_800_000),
                                    (200, 0.5, 0)])
def test_pmf_points_against_mpmath(n: int, p: float, k0: int) -> None:
    """Point masses by the ratio recurrence lie within their stated relative errors of
    40-digit mpmath values."""
    k = np.arange(k0, k0 + 150, dtype=float)
    v, rel = clones.bn.pmf_points(k, n, p)
    assert np.all(rel <= 1e-9)
    with mpmath.workdps(40):
        pp = mpmath.mpf(p)
        for i in range(0, 150, 13):
            kk = int(k[i])
            exact = mpmath.exp(mpmath.loggamma(n + 1) - mpmath.loggamma(kk + 1) - mpmath.loggamma(n - kk + 1)
                               + kk * mpmath.log(pp) + (n - kk) * mpmath.log1p(-pp))
            assert abs(v[i] - exact) <= rel[i] * exact * (1 + 1e-9), (i, v[i], exact)


@pytest.mark.parametrize("method", ["clones", "stronger-clones", "krr-lower"])
@pytest.mark.parametrize("n,eps0", [(5, 1.0), (300, 0.5), (3000, 2.0), (10**5, 1.0), (10**4, 8.0)])
def test_exact_window_and_blocks_bracket_each_other(method: str, n: int, eps0: float,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The exact window (fine requests, concentrated clone counts) and the refined blocks are
    two certified computations of the same delta: their brackets overlap, and the window's
    is as narrow as requested (krr-lower: p0 > 0, one lam_t per total in both)."""
    pair = method_pair(method, eps0, n)
    for frac in (0.02, 0.1, 0.4):
        eps = frac * eps0
        window = HockeyStick(pair).bounds(eps, 1e-7)
        with monkeypatch.context() as m:
            m.setattr(clones, "EXACT_MAX", 0)
            blocks = HockeyStick(pair).bounds(eps, 1e-7)
        assert window.lower <= blocks.upper and blocks.lower <= window.upper, (eps, window, blocks)
        if window.converged and window.lower > 1e-290:  # (below: the underflow floor is reported)
            assert window.upper - window.lower <= 1e-7 * window.lower


def test_log_slope_matches_a_finite_difference() -> None:
    """The slope estimate that steers the search agrees with a finite difference of the
    certified bounds (it is only a guide; 1% is ample)."""
    for n, eps0, eps in [(10**3, 1.0, 0.18), (10**6, 1.0, 0.0045), (10**9, 3.0, 5.8e-4)]:
        hs = HockeyStick(pair_for("clones", eps0, n).pair)
        h = eps * 1e-4
        up = math.log(hs.bounds(eps + h, 1e-8).upper)
        down = math.log(hs.bounds(eps - h, 1e-8).upper)
        hs.bounds(eps, 1e-5)
        assert math.isclose(hs.log_slope(eps), (up - down) / (2 * h), rel_tol=1e-2)
        assert math.isnan(hs.log_slope(eps * 1.5))  # not the last evaluated eps


@pytest.mark.parametrize("rtol", [1e-3, 1e-6, 1e-9])
def test_refinement_tolerates_rounding_negative_gaps(rtol: float, monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression (found by hypothesis through the k = 2 blanket): where computed corners are
    out of order by rounding, a block's reducible gap is slightly negative; the refinement's
    allocation took its square root (a RuntimeWarning, an error under this suite's settings)."""
    pair = pair_for("stronger-clones", 0.5, 1189).pair
    for exact_max in (0, clones.EXACT_MAX):
        with monkeypatch.context() as m:
            m.setattr(clones, "EXACT_MAX", exact_max)
            b = HockeyStick(pair).bounds(0.9375 * 0.5, rtol)
        assert 0.0 <= b.lower <= b.upper


def test_kernel_lower_end_survives_an_underflowing_tail():
    """Boost's binomial sf underflows before the pmf (P[Bin(1075, 1/2) >= 1045] came back as 0
    for a true ~1e-264): the kernel's lower end must still be below the exact divergence (an
    independent mpmath sum over every cut), and the profile's bracket consistent (hypothesis
    found the inconsistency through the k = 2 blanket: n = 1515, eps0 = 0.5, eps = 0.46875)."""
    import math

    import mpmath as mp
    import numpy as np

    from shuffle_accountant.numeric import clones as C

    e = math.exp(0.5)
    pa, pb = 1 / (1 + 1 / e), 1 / (e + 1)
    hs = C.HockeyStick(C.ClonePair(1514, pb, pb, pa, pb, 0.0))
    b = hs.bounds(0.46875, 1e-6)
    assert b.lower <= b.upper
    d = hs.directions[0]
    h, err = C.kernel_hockey_stick(np.array([1076.0]), np.array([d.pa1]), np.array([d.pb1]), d.s, 0.46875, 1e-15)
    with mp.workdps(60):
        g, U, V, S, c = mp.e ** mp.mpf(0.46875), mp.mpf(d.pa1), mp.mpf(d.pb1), mp.mpf(d.s), 1076

        def B(a: int) -> mp.mpf:
            return mp.binomial(c, a) * S**a * (1 - S) ** (c - a) if 0 <= a <= c else mp.mpf(0)

        best = run = mp.mpf(0)
        for a in range(c + 1, -1, -1):
            run += U * B(a - 1) + (1 - U) * B(a) - g * (V * B(a - 1) + (1 - V) * B(a))
            best = max(best, run)
    assert float(h[0] - err[0]) <= float(best) <= float(h[0] + err[0])


# ---------------------------------------------------------------------------------------
# The speed work of issue 13's single query: closed-form lower bound near eps0, edge-tail
# memo, window reuse and the mixture start.
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["clones", "stronger-clones", "binary-rr-lower"])
@pytest.mark.parametrize("n,eps0", [(2, 1.0), (7, 3.0), (25, 8.0), (60, 0.5)])
def test_closed_lower_is_below_the_oracle(method: str, n: int, eps0: float) -> None:
    """The closed-form lower bound (one outcome of the kernel, summed over the clone count in
    closed form) is below the exact delta of the independent mpmath brute force, at every eps
    up to eps0 (where it is within a few percent of delta at small clone means)."""
    pair = pair_for(method, eps0, n).pair
    e0 = mpmath.mpf(eps0)
    params = {"clones": oracle.clones_params, "stronger-clones": oracle.stronger_clones_params,
              "binary-rr-lower": oracle.binary_rr_params}[method](e0)
    exact_pair = oracle.clone_pair(n, *params)
    hs = HockeyStick(pair)
    eps = eps0 * np.array([0.0, 0.3, 0.9, 0.999, 1.0 - 1e-6, 1.0])
    got = hs.closed_lower(eps)
    for e, lower in zip(eps, got):
        exact = oracle.delta_exact(exact_pair, mpmath.mpf(float(e)))
        assert 0.0 <= lower <= float(exact) * (1 + 1e-12) + 1e-300, (e, lower, exact)
    assert got[-1] == 0.0 and got[-2] > 0.0


@pytest.mark.parametrize("n,eps0,delta", [(10**3, 8.0, 1e-10), (10**4, 8.0, 1e-6), (100, 5.0, 1e-6), (20, 3.0, 1e-6)])
def test_no_evaluation_when_the_closed_form_decides_eps0(n: int, eps0: float, delta: float) -> None:
    """Near eps0 at small clone means the closed form decides the answer without an
    evaluation; a fresh certified evaluation confirms the lower end is infeasible."""
    pair = pair_for("clones", eps0, n).pair
    br = epsilon_for_delta(HockeyStick(pair), delta, RTOL)
    assert br.evaluations == 0 and br.upper == eps0
    assert HockeyStick(pair).bounds(br.lower, 1e-9).lower > delta


def test_tail_memo_returns_the_same_masses() -> None:
    """Block masses through the memo of edge tails are the very numbers (and error bounds)
    computed without it, including blocks asked for twice and children of earlier blocks."""
    for n, p in ((10**6, 0.05), (10**9, 0.3), (5000, 0.6)):
        memo = clones.bn.TailMemo(n, p)
        mu, sd = n * p, math.sqrt(n * p * (1 - p))
        edges = np.unique(np.round(mu + sd * np.linspace(-12, 12, 41)))
        for split in (edges, np.unique(np.concatenate((edges, np.round(mu + sd * np.linspace(-3, 3, 200)))))):
            lo, hi = split[:-1], split[1:] - 1.0
            for _ in range(2):
                got = clones.bn.interval_mass(lo, hi, n, p, memo)
                want = clones.bn.interval_mass(lo, hi, n, p)
                assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


@pytest.mark.parametrize("n,eps0", [(10**5, 8.0), (10**3, 8.0), (300, 0.5)])
def test_window_repeat_and_rounding_bound(n: int, eps0: float, monkeypatch: pytest.MonkeyPatch) -> None:
    """A repeated eps returns the window's numbers again (only ``converged`` follows the new
    rtol); near eps0, where the kernel's rounding sets the width, the window answers without
    the blocks, and its bracket contains the blocks' (both certified)."""
    pair = pair_for("clones", eps0, n).pair
    hs = HockeyStick(pair)
    eps = eps0 * (1 - 1e-5)
    first = hs.bounds(eps, 1e-4)
    again = hs.bounds(eps, 1e-12)
    assert (first.lower, first.upper) == (again.lower, again.upper)
    assert again.converged == (again.upper - again.lower <= 1e-12 * again.lower)
    d = hs.directions[0]
    assert d._exact_last == eps  # answered by the window
    with monkeypatch.context() as m:
        m.setattr(clones, "EXACT_MAX", 0)  # no window: the blocks answer
        blocks = HockeyStick(pair)
        b = blocks.bounds(eps, 1e-4)
        assert blocks.directions[0]._exact_last is None
    assert first.lower <= b.upper and b.lower <= first.upper, (first, b)


@pytest.mark.parametrize("n,eps0,delta", [(10**3, 0.5, 1e-6), (10**4, 1.0, 1e-10), (10**5, 3.0, 1e-10),
                                          (10**6, 8.0, 1e-10)])
def test_mixture_surrogate_starts_close(n: int, eps0: float, delta: float) -> None:
    """The mixture start estimate (three clone counts) crosses delta within 1e-3 of the
    certified eps at moderate clone means (the kernel at the mean alone: up to 1e-2 off);
    it only steers the search."""
    hs = HockeyStick(pair_for("clones", eps0, n).pair)
    start = search._surrogate_root(hs, delta, 0.0, hs.max_log_ratio)
    br = epsilon_for_delta(HockeyStick(pair_for("clones", eps0, n).pair), delta, RTOL)
    assert start is not None and abs(start[0] / br.upper - 1.0) <= 1e-3, (start, br)


@given(st.sampled_from(["clones", "stronger-clones", "binary-rr-lower"]), st.integers(2, 10**9),
       st.floats(0.05, 12.0), st.floats(0.0, 1.0))
@settings(max_examples=60, deadline=None)
def test_closed_lower_below_the_certified_upper(method: str, n: int, eps0: float, frac: float) -> None:
    """Any pair, any eps: the closed-form lower bound never exceeds the profile's certified
    upper bound (two certified ends of the same delta)."""
    hs = HockeyStick(pair_for(method, eps0, n).pair)
    eps = frac * min(eps0, hs.max_log_ratio)
    lower = float(hs.closed_lower(np.array([eps]))[0])
    assert lower >= 0.0
    if lower > 0.0:
        assert lower <= hs.bounds(eps, 1e-3).upper * (1 + 1e-12)


#: Certified brackets of the code before the speed work of issue 13 (commit 7647042, the same
#: api.epsilon call, rtol 1e-6): (method, n, eps0, delta, lower, upper).
PREVIOUS_BRACKETS = [
    ('clones', 10, 0.5, 1e-06, 0.49995823177998494, 0.4999587217392921),
    ('clones', 10, 0.5, 1e-10, 0.49999950500000023, 0.5000000000000002),
    ('clones', 10, 1.0, 1e-06, 0.999990987847475, 0.9999919678391231),
    ('clones', 10, 1.0, 1e-10, 0.99999901, 1.0),
    ('clones', 10, 3.0, 1e-06, 2.9999970300000003, 3.0),
    ('clones', 10, 3.0, 1e-10, 2.9999970300000003, 3.0),
    ('clones', 10, 8.0, 1e-06, 7.99999208, 8.0),
    ('clones', 10, 8.0, 1e-10, 7.99999208, 8.0),
    ('clones', 1000, 0.5, 1e-06, 0.07052343323876026, 0.0705235023517587),
    ('clones', 1000, 0.5, 1e-10, 0.10801551903472156, 0.10801562488998208),
    ('clones', 1000, 1.0, 1e-06, 0.18241217930957007, 0.182412358073681),
    ('clones', 1000, 1.0, 1e-10, 0.2714377646759653, 0.271438030685105),
    ('clones', 1000, 3.0, 1e-06, 1.2646321700600243, 1.2646334094007656),
    ('clones', 1000, 3.0, 1e-10, 2.169613939948213, 2.169616066171958),
    ('clones', 1000, 8.0, 1e-06, 7.99999208, 8.0),
    ('clones', 1000, 8.0, 1e-10, 7.99999208, 8.0),
    ('clones', 100000, 0.5, 1e-06, 0.005812545826802091, 0.005812551523099792),
    ('clones', 100000, 0.5, 1e-10, 0.009969329475671347, 0.009969339245619019),
    ('clones', 100000, 1.0, 1e-06, 0.015282047508265112, 0.015282062484686347),
    ('clones', 100000, 1.0, 1e-10, 0.02494327072143517, 0.02494329516586443),
    ('clones', 100000, 3.0, 1e-06, 0.09275749262963441, 0.09275758353202172),
    ('clones', 100000, 3.0, 1e-10, 0.1408989150498281, 0.1408990531308325),
    ('clones', 100000, 8.0, 1e-06, 2.1885644629704673, 2.1885666077646917),
    ('clones', 100000, 8.0, 1e-10, 7.998062499734874, 7.998070337843806),
    ('clones', 1000000, 0.5, 1e-06, 0.0016190935641430904, 0.0016190951508555608),
    ('clones', 1000000, 0.5, 1e-10, 0.003014790447572963, 0.003014793402069049),
    ('clones', 1000000, 1.0, 1e-06, 0.004334517673210116, 0.004334521921039516),
    ('clones', 1000000, 1.0, 1e-10, 0.007561682509792315, 0.007561689920244806),
    ('clones', 1000000, 3.0, 1e-06, 0.026872514645920928, 0.026872540980998182),
    ('clones', 1000000, 3.0, 1e-10, 0.04277378564011051, 0.042773827558440974),
    ('clones', 1000000, 8.0, 1e-06, 0.44446852778211654, 0.44446896336148717),
    ('clones', 1000000, 8.0, 1e-10, 0.6553769761106158, 0.6553776183806819),
    ('stronger-clones', 10, 0.5, 1e-06, 0.49988522616608283, 0.49988571605384446),
    ('stronger-clones', 10, 0.5, 1e-10, 0.49999950500000023, 0.5000000000000002),
    ('stronger-clones', 10, 1.0, 1e-06, 0.999976575831973, 0.9999775558094973),
    ('stronger-clones', 10, 1.0, 1e-10, 0.99999901, 1.0),
    ('stronger-clones', 10, 3.0, 1e-06, 2.9999970300000003, 3.0),
    ('stronger-clones', 10, 3.0, 1e-10, 2.9999970300000003, 3.0),
    ('stronger-clones', 10, 8.0, 1e-06, 7.99999208, 8.0),
    ('stronger-clones', 10, 8.0, 1e-10, 7.99999208, 8.0),
    ('stronger-clones', 1000, 0.5, 1e-06, 0.06268653080802288, 0.06268659224088327),
    ('stronger-clones', 1000, 0.5, 1e-10, 0.09639676899543093, 0.09639686346431083),
    ('stronger-clones', 1000, 1.0, 1e-06, 0.14867054352361442, 0.14867068922081844),
    ('stronger-clones', 1000, 1.0, 1e-10, 0.2223230348249007, 0.2223232527015816),
    ('stronger-clones', 1000, 3.0, 1e-06, 0.8231109902933768, 0.8231117969425424),
    ('stronger-clones', 1000, 3.0, 1e-10, 1.2558712663758198, 1.2558724971302637),
    ('stronger-clones', 1000, 8.0, 1e-06, 7.99999208, 8.0),
    ('stronger-clones', 1000, 8.0, 1e-10, 7.99999208, 8.0),
    ('stronger-clones', 100000, 0.5, 1e-06, 0.005152726554384135, 0.005152731604058632),
    ('stronger-clones', 100000, 0.5, 1e-10, 0.008898389486915593, 0.008898398207345837),
    ('stronger-clones', 100000, 1.0, 1e-06, 0.012429891290959484, 0.012429903472258917),
    ('stronger-clones', 100000, 1.0, 1e-10, 0.02048872469135885, 0.020488744770328724),
    ('stronger-clones', 100000, 3.0, 1e-06, 0.0656271635507127, 0.06562722786539602),
    ('stronger-clones', 100000, 3.0, 1e-10, 0.10088206572962773, 0.10088216459410057),
    ('stronger-clones', 100000, 8.0, 1e-06, 1.176647069682468, 1.1766482227971613),
    ('stronger-clones', 100000, 8.0, 1e-10, 1.9667425745785647, 1.9667445019872323),
    ('stronger-clones', 1000000, 0.5, 1e-06, 0.0014314764892535386, 0.0014314778921011855),
    ('stronger-clones', 1000000, 0.5, 1e-10, 0.002690018070374855, 0.0026900207065938555),
    ('stronger-clones', 1000000, 1.0, 1e-06, 0.003513519287486025, 0.003513522730736614),
    ('stronger-clones', 1000000, 1.0, 1e-10, 0.006208302373939166, 0.006208308458078474),
    ('stronger-clones', 1000000, 3.0, 1e-06, 0.018959671043321875, 0.0189596896238086),
    ('stronger-clones', 1000000, 3.0, 1e-10, 0.030641333524942103, 0.030641363553463672),
    ('stronger-clones', 1000000, 8.0, 1e-06, 0.3036942573059972, 0.30369455492651515),
    ('stronger-clones', 1000000, 8.0, 1e-10, 0.44790935360357265, 0.4479097925549543),
]


@pytest.mark.parametrize("method,n,eps0,delta,old_lower,old_upper", PREVIOUS_BRACKETS)
def test_brackets_contain_the_previous_code_values(method: str, n: int, eps0: float, delta: float,
                                                   old_lower: float, old_upper: float) -> None:
    """Against the previous code on a grid: both brackets contain the exact eps, so they
    overlap; the new upper end is not looser than the old one by more than rtol."""
    from shuffle_accountant import api

    b = api.epsilon(eps0, n, delta, method)
    lower, upper = b.details["bracket"]
    assert lower <= old_upper * (1 + 1e-15) and old_lower <= upper * (1 + 1e-15), (lower, upper)
    assert b.value <= old_upper * (1 + RTOL), (b.value, old_upper)
    assert upper - lower <= RTOL * upper * (1 + 1e-9)


@given(st.integers(2, 10**7), st.floats(0.1, 8.0), st.floats(0.0, 1.0), st.integers(1, 40), st.integers(0, 2**31))
@settings(max_examples=40, deadline=None)
def test_lam_corners_bracket_the_plain_kernel(n: int, eps0: float, frac: float, nblocks: int, seed: int) -> None:
    """Blocks of a p0 > 0 pair (k-RR lower bound, k = 3): the corners through the cut cache (upper
    corner ``(lo, lam(hi))``, lower corner one count beyond the block at ``lam(lo)``) against the
    uncached kernel at the same points, and the block's true terms lie between them."""
    d = HockeyStick(method_pair("krr-lower", eps0, n)).direction()
    rng = np.random.default_rng(seed)
    cuts = np.unique(rng.integers(1, n + 1, size=nblocks).astype(float))
    edges = np.unique(np.concatenate(([0.0], cuts, [n + 1.0])))
    lo, hi = edges[:-1], edges[1:] - 1.0
    eps = frac * eps0
    up, up_err, low = d.corners(lo, hi, eps)
    for i in range(lo.size):
        if hi[i] < 1.0:
            assert up[i] == 0.0 and low[i] == 0.0
            continue
        ts = np.arange(max(lo[i], 1.0), hi[i] + 1.0)[:50]
        h, err = d.h(ts, d.lam(ts), eps)
        plain_up, plain_err = d.h(np.array([max(lo[i], 1.0)]), d.lam(np.array([hi[i]])), eps)
        assert abs(up[i] - plain_up[0]) <= up_err[i] + plain_err[0] + 1e-300, (i, up[i], plain_up)
        assert np.all(h - err <= up[i] + up_err[i] + 1e-300), (i, lo[i], hi[i])
        assert np.all(low[i] <= h + err + 1e-300), (i, lo[i], hi[i], low[i], h)


@pytest.mark.parametrize("method", ["clones", "krr-lower"])
@pytest.mark.parametrize("n,eps0,frac", [(3 * 10**5, 1.0, 0.01), (10**6, 3.0, 0.005), (10**6, 0.5, 0.002)])
def test_fine_start_partition_agrees_with_the_initial_blocks(method: str, n: int, eps0: float, frac: float,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A fine request's first partition (single totals within UNIT_START_SD sd of the mean) and the
    plain initial blocks refined from scratch bracket the same delta, both as narrow as asked."""
    eps = frac * eps0
    fine = HockeyStick(method_pair(method, eps0, n)).bounds(eps, 1e-6)
    with monkeypatch.context() as m:
        m.setattr(clones.Direction, "_fine_start_blocks", lambda self: None)
        plain = HockeyStick(method_pair(method, eps0, n)).bounds(eps, 1e-6)
    assert fine.lower <= plain.upper and plain.lower <= fine.upper, (fine, plain)
    for b in (fine, plain):
        assert b.converged and b.upper - b.lower <= 1e-6 * b.lower


@pytest.mark.parametrize("c, u, v, s, eps", [(40, 0.7, 0.3, 0.5, 0.2), (200, 0.55, 0.45, 0.4, 0.05),
                                             (15, 0.9, 0.2, 0.3, 0.0), (60, 0.5000004, 0.4999996, 0.5, 1e-6)])
def test_kernel_uv_err_covers_every_pair_within_it(c, u, v, s, eps):
    """The kernel's ``uv_err`` charge (pairs with p0 > 0, whose u_t, v_t are computed): the
    divergence of every pair within ``uv_err`` of the given one (here the extreme corners, in
    mpmath, term by term) is at most the value plus the error bound; the last case is computed
    as 0 (u <= g v) although a corner has u > g v."""
    import mpmath as mp

    from shuffle_accountant.numeric.clones import kernel_hockey_stick

    mp.mp.dps = 40
    err_uv = 1e-6
    val, err = kernel_hockey_stick(np.array([float(c)]), np.array([u]), np.array([v]), s, eps, 1e-13, err_uv)
    B = [mp.binomial(c, a) * mp.mpf(s) ** a * (1 - mp.mpf(s)) ** (c - a) for a in range(c + 1)]
    g = mp.e ** mp.mpf(eps)
    for du in (-err_uv, err_uv):
        for dv in (-err_uv, err_uv):
            uu, vv = mp.mpf(u) + du, mp.mpf(v) + dv
            exact = mp.mpf(0)
            for a in range(c + 2):
                b1 = B[a - 1] if a >= 1 else 0
                b0 = B[a] if a <= c else 0
                term = (uu * b1 + (1 - uu) * b0) - g * (vv * b1 + (1 - vv) * b0)
                exact += max(term, 0)
            assert exact <= mp.mpf(float(val[0])) + mp.mpf(float(err[0]))


def test_totals_geometry_charges_lam_rounding_for_p0_pairs():
    """TotalsGeometry.h (the grid bounds of Direction.upper_on_grid) charges LAM_UV_ERR for pairs
    with p0 > 0 (krr-lower: lam_t is computed) and nothing for p0 = 0 (lam = 1 exactly)."""
    from shuffle_accountant.analyses import pair_for
    from shuffle_accountant.numeric.clones import LAM_UV_ERR, TotalsGeometry, kernel_hockey_stick

    for method, charged in (("krr-lower", True), ("clones", False)):
        pair = pair_for(method, 1.0, 2000, 5).pair
        assert (pair.p0 > 0.0) == charged
        geo = TotalsGeometry(pair)
        t = np.array([900.0, 1000.0, 1100.0])
        lam = geo.lam(t)
        u = lam * geo.pa1 + (1.0 - lam) * geo.s
        v = lam * geo.pb1 + (1.0 - lam) * geo.s
        val, err = geo.h(t, lam, 0.1)
        bare = kernel_hockey_stick(t - 1.0, u, v, geo.s, 0.1, geo.rel)
        with_uv = kernel_hockey_stick(t - 1.0, u, v, geo.s, 0.1, geo.rel, LAM_UV_ERR)
        assert np.array_equal(val, bare[0])
        assert np.array_equal(err, with_uv[1] if charged else bare[1])
        if charged:
            assert np.all(with_uv[1] > bare[1])

"""Pure-DP real summation and histograms (Corollaries 3 and 4 of Ghazi, Kumar, Manurangsi,
arXiv 2305.17634), checked against computations that share no code with the plug-in:
views enumerated with mpmath, seeded Monte Carlo runs of the protocols' analyzers, and
direct sums for the expected maxima."""

from __future__ import annotations

import itertools
import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shuffle_accountant.errors import CertificationError, InvalidParameter
from shuffle_accountant.plugins.pure import count as pc
from shuffle_accountant.plugins.pure import histogram as hg
from shuffle_accountant.plugins.pure import realsum as rs

# ---------------------------------------------------------------------------------
# Independent views: the reduced two-count view of one run (Lemma 5: one user's input
# messages, geometric noise on both signs and the shared Poisson flooding), in mpmath
# ---------------------------------------------------------------------------------

W = 22  # window per count; small toy parameters keep the suprema inside it


def _log_views(p: pc.PureParams, w: int = W) -> dict[int, np.ndarray]:
    mp.mp.dps = 30
    r = mp.e ** (-mp.mpf(p.eps_prime))
    lam = mp.mpf(p.lam)
    poi = [mp.e ** (-lam) * lam**f / mp.factorial(f) for f in range(w)]

    def geo(t: int) -> mp.mpf:
        return (1 - r) * r**t if t >= 0 else mp.mpf(0)

    out = {}
    for x in (0, 1):
        grid = np.empty((w, w))
        for i in range(w):
            for j in range(w):
                tot = mp.mpf(0)
                for f in range(min(i, j) + 1):
                    tot += poi[f] * (p.q * geo(i - f) * geo(j - f) + (1 - p.q) * geo(i - f - p.s - x) * geo(j - f - p.s))
                grid[i, j] = float(mp.log(tot))
        out[x] = grid
    return out


TOY_A = pc.PureParams(0.8, 1, 0.6, 0.4, 1, 3.0)
TOY_B = pc.PureParams(1.0, 1, 0.5, 0.25, 2, 5.0)


@pytest.fixture(scope="module")
def views() -> dict[str, dict[int, np.ndarray]]:
    return {"A": _log_views(TOY_A), "B": _log_views(TOY_B)}


def test_histogram_composition_is_d10_plus_d01_of_one_run(views):
    """A user moving from bucket a to bucket b: joint 4-D views enumerated, log-ratio maximised."""
    v = views["A"]
    plan = hg.HistogramPlan(1.6, 1, 3, 0.5, TOY_A)
    tool, allowance, _ = plan.check()
    # P(X) = view_1 (bucket a) x view_0 (bucket b); P(X') = view_0 x view_1
    joint = (v[1] - v[0])[:, :, None, None] + (v[0] - v[1])[None, None, :, :]
    brute = max(float(joint.max()), float((-joint).max()))
    assert brute <= tool + 1e-9
    assert brute == pytest.approx(tool, abs=1e-3)  # the window approaches the supremum from below
    # the composition is neither the doubled larger direction nor one run alone
    d10, d01 = float((v[1] - v[0]).max()), float((v[0] - v[1]).max())
    assert abs(brute - 2 * max(d10, d01)) > 1e-2 and abs(brute - max(d10, d01)) > 0.1
    assert 0 < allowance < 1e-9


def test_sum_composition_over_grid_values_and_rounding_mixtures(views):
    """Two bits with different runs: every pair of grid values m, m' in {0..3} and a set of
    real inputs (randomized rounding = mixture of two grid views), enumerated on the window."""
    va, vb = views["A"], views["B"]
    plan = rs.SumPlan(TOY_A.eps + TOY_B.eps, 1, 2, 1.0, 0.5, "given", "given", (TOY_A.eps, TOY_B.eps), (TOY_A, TOY_B))
    check = plan.check()
    assert check.max_divergence is not None and not check.unchecked

    def log_view(m: int) -> np.ndarray:
        return va[m & 1][:, :, None, None] + vb[(m >> 1) & 1][None, None, :, :]

    grid_views = [log_view(m) for m in range(4)]
    brute = max(float((grid_views[a] - grid_views[b]).max()) for a, b in itertools.permutations(range(4), 2))
    assert brute <= check.max_divergence + 1e-9
    assert brute == pytest.approx(check.max_divergence, abs=1e-3)

    def mixture(x: float) -> np.ndarray:  # x in [0, 3] on the grid scale
        lo = min(int(math.floor(x)), 2)
        f = x - lo
        parts = [math.log1p(-f) + grid_views[lo]] if f < 1 else []
        if f > 0:
            parts.append(math.log(f) + grid_views[lo + 1])
        return parts[0] if len(parts) == 1 else np.logaddexp(*parts)

    reals = [0.0, 0.4, 1.5, 2.25, 3.0]
    mixed = max(float((mixture(a) - mixture(b)).max()) for a, b in itertools.permutations(reals, 2))
    assert mixed <= check.max_divergence + 1e-9


@pytest.mark.parametrize("eps,n,k", [(1.0, 10**4, 10), (2.0, 100, 3)])
def test_histogram_plans_pass_the_windowed_check(eps, n, k):
    plan = hg.histogram(eps, n, k)
    total, allowance, v = plan.check()
    assert plan.bucket.eps == eps / 2 and plan.bucket.satisfies_condition7
    assert total == v.divergence_1_0 + v.divergence_0_1
    assert total + allowance <= eps


def test_sum_plans_pass_the_windowed_check():
    plan = rs.real_sum(2.0, 10**3, 3)
    check = plan.check()
    assert check.holds and check.max_divergence is not None and check.max_divergence <= 2.0
    assert math.fsum(plan.bit_eps) <= 2.0 and all(p.satisfies_condition7 for p in plan.plans)


def test_sum_check_reports_runs_too_large_to_check():
    check = rs.real_sum(1.0, 10**6, 10).check()
    assert check.max_divergence is None and check.holds is None
    assert check.unchecked and check.unchecked[0][0] == 0 and "exceeds the limit" in check.unchecked[0][1]


# ---------------------------------------------------------------------------------
# Budget split
# ---------------------------------------------------------------------------------


def _dlap_var(a: float) -> float:
    return 2 * math.exp(-a) / (1 - math.exp(-a)) ** 2


@pytest.mark.parametrize("eps,bits", [(1.0, 4), (0.3, 8), (5.0, 3)])
def test_mse_split_is_the_constrained_minimum(eps, bits):
    parts = rs.split_budget(eps, bits, "mse")
    assert math.fsum(parts) <= eps and math.fsum(parts) == pytest.approx(eps, rel=1e-12)
    assert all(a < b for a, b in zip(parts, parts[1:]))  # heavier bits get more budget

    def cost(v):
        return sum(4.0**j * _dlap_var(e) for j, e in enumerate(v))

    best = cost(parts)
    rng = np.random.default_rng(7)
    for _ in range(200):  # perturbations that keep the total
        d = rng.normal(size=bits) * 1e-3 * min(parts)
        d -= d.mean()
        assert cost([e + x for e, x in zip(parts, d)]) >= best * (1 - 1e-12)
    uniform = rs.split_budget(eps, bits, "uniform")
    assert cost(uniform) >= best and len(set(uniform)) == 1


def test_split_refuses_unknown_names_and_bad_bits():
    with pytest.raises(InvalidParameter, match="split"):
        rs.split_budget(1.0, 4, "log")
    with pytest.raises(InvalidParameter, match="bits"):
        rs.split_budget(1.0, 0, "mse")
    with pytest.raises(InvalidParameter, match="bits"):
        rs.split_budget(1.0, 41, "mse")


# ---------------------------------------------------------------------------------
# Expected maximum of |DLap|: direct sums from the pmf
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize("a,k", [(0.5, 1), (0.4, 100), (2.0, 7), (0.05, 1000)])
def test_expected_max_abs_dlap_against_direct_sums(a, k):
    mp.mp.dps = 30
    r = mp.e ** (-mp.mpf(a))
    norm = (1 - r) / (1 + r)
    top = int(60 / a) + 200
    cdf = mp.mpf(0)  # P(|N| <= t)
    total = mp.mpf(0)
    for t in range(top):
        cdf += norm * (1 if t == 0 else 2 * r**t)
        total += 1 - cdf**k
    lo, hi = hg.expected_max_abs_dlap(a, k)
    assert lo <= float(total) * (1 + 1e-12) and float(total) <= hi * (1 + 1e-12)
    assert hi - lo <= 1e-10 * float(total) + 1e-300


# ---------------------------------------------------------------------------------
# Seeded Monte Carlo of the protocols' analyzers
# ---------------------------------------------------------------------------------


def _simulate_runs(rng: np.random.Generator, p: pc.PureParams, bits: np.ndarray, trials: int) -> np.ndarray:
    """Algorithm 1 for every user (input ``bits``, n users) and the analyzer's message sum,
    ``trials`` times: returns the estimates (shape ``(trials,)``)."""
    n = bits.size
    r = math.exp(-p.eps_prime)
    keep = rng.random((trials, n)) >= p.q
    y_plus = keep * (p.s + bits)[None, :]
    y_minus = keep * p.s
    z_plus = rng.negative_binomial(1.0 / n, 1 - r, size=(trials, n))  # shares of Geo(1 - e^-eps')
    z_minus = rng.negative_binomial(1.0 / n, 1 - r, size=(trials, n))
    flood = rng.poisson(p.lam / n, size=(trials, n))
    plus = (y_plus + z_plus + flood).sum(axis=1)
    minus = (y_minus + z_minus + flood).sum(axis=1)
    return (plus - minus).astype(float)


def test_count_mse_by_monte_carlo():
    rng = np.random.default_rng(20240521)
    p = pc.optimise(1.0, 40, 30.0)  # large slack: q is large enough to see the dropped inputs
    assert p.q > 0.01
    for ones in (40, 13):
        x = np.zeros(40, dtype=int)
        x[:ones] = 1
        err = _simulate_runs(rng, p, x, 40_000) - ones
        sq = err**2
        exact = _dlap_var(p.eps_prime) + ones * p.q * (1 - p.q) + (ones * p.q) ** 2
        assert sq.mean() == pytest.approx(exact, abs=5 * sq.std() / math.sqrt(sq.size))
        assert exact <= p.mse_bound * (1 + 1e-12)
    assert p.mse_bound == pytest.approx(_dlap_var(p.eps_prime) + 40 * p.q + p.q**2 * 40 * 39, rel=1e-12)


def _exact_linf_one_bucket_data(p: pc.PureParams, n: int, k: int) -> float:
    """E max(|N_0 - D|, max_{b>=1} |N_b|) with every user in bucket 0, D ~ Bin(n, q), by sums."""
    from scipy import stats

    r = math.exp(-p.eps_prime)
    top = int(80 / p.eps_prime) + n + 50
    support = np.arange(-top, top + 1)
    pmf = (1 - r) / (1 + r) * r ** np.abs(support)
    d = stats.binom.pmf(np.arange(n + 1), n, p.q)
    e0 = np.zeros(2 * top + n + 2)  # distribution of |N_0 - D|
    for dv, w in enumerate(d):
        np.add.at(e0, np.abs(support - dv), w * pmf)
    cdf0 = np.cumsum(e0)
    ts = np.arange(e0.size)
    cdf_other = np.minimum(1.0, 1 - 2 * r ** (ts + 1) / (1 + r))
    return float(np.sum(1 - cdf0 * cdf_other ** (k - 1)))


def test_histogram_linf_by_monte_carlo():
    rng = np.random.default_rng(99)
    n, k = 30, 5
    plan = hg.histogram(2.0, n, k, rho=20.0)
    p = plan.bucket
    trials = 20_000
    errs = np.zeros((trials, k))
    for b in range(k):
        x = np.ones(n, dtype=int) if b == 0 else np.zeros(n, dtype=int)
        errs[:, b] = _simulate_runs(rng, p, x, trials) - x.sum()
    linf = np.abs(errs).max(axis=1)
    exact = _exact_linf_one_bucket_data(p, n, k)
    assert linf.mean() == pytest.approx(exact, abs=5 * linf.std() / math.sqrt(trials))
    lo, hi = plan.linf_bracket
    assert lo <= exact <= hi
    assert p.q * n > 0.05  # the bracket is not trivially tight here


def test_sum_mse_by_monte_carlo():
    rng = np.random.default_rng(5)
    n, bits, delta = 12, 3, 2.5
    plan = rs.real_sum(3.0, n, bits, delta, rho=40.0)
    grid = plan.grid
    trials = 20_000

    def run(values: np.ndarray) -> np.ndarray:
        scaled = values * grid / delta
        low = np.floor(scaled)
        m = (low + (rng.random((trials, n)) < (scaled - low))).astype(int)  # randomized rounding
        est = np.zeros(trials)
        for j, p in enumerate(plan.plans):
            b = (m >> j) & 1
            keep = rng.random((trials, n)) >= p.q
            r = math.exp(-p.eps_prime)
            noise = (rng.negative_binomial(1.0 / n, 1 - r, size=(trials, n))
                     - rng.negative_binomial(1.0 / n, 1 - r, size=(trials, n))).sum(axis=1)
            est += 2.0**j * ((keep * b).sum(axis=1) + noise)
        return est * delta / grid - values.sum()

    at_max = run(np.full(n, delta)) ** 2
    assert at_max.mean() == pytest.approx(plan.mse_at_max, abs=5 * at_max.std() / math.sqrt(trials))
    mixed = run(rng.uniform(0, delta, size=n)) ** 2
    assert mixed.mean() <= plan.mse_bound + 5 * mixed.std() / math.sqrt(trials)
    assert plan.mse_at_max <= plan.mse_bound


# ---------------------------------------------------------------------------------
# Messages and edges
# ---------------------------------------------------------------------------------


def test_messages_are_sums_over_runs():
    h = hg.histogram(1.0, 10**4, 50)
    b = h.bucket
    assert h.expected_messages() == pytest.approx(b.expected_messages(1) + 49 * b.expected_messages(0), rel=1e-15)
    s = rs.real_sum(1.0, 10**4, 4, split="uniform")
    assert len({id(p) for p in s.plans}) == 1  # one plan shared by equal budgets
    assert s.expected_messages(True) == pytest.approx(4 * s.plans[0].expected_messages(1), rel=1e-14)
    assert s.expected_messages(False) < s.expected_messages(True)


def test_rounding_term_and_range_scaling():
    a = rs.real_sum(1.0, 10**4, 5, 1.0)
    b = rs.real_sum(1.0, 10**4, 5, 7.0)
    assert b.mse_bound == pytest.approx(49 * a.mse_bound, rel=1e-12)
    assert a.rounding_variance_bound == pytest.approx(10**4 / 4 / 31**2, rel=1e-15)


@pytest.mark.parametrize("call,err", [
    (lambda: hg.histogram(1.0, 10**4, 1), InvalidParameter),
    (lambda: hg.histogram(1.0, 10**4, 10**10), InvalidParameter),
    (lambda: rs.real_sum(1.0, 10**4, 4, 0.0), InvalidParameter),
    (lambda: rs.real_sum(1.0, 10**4, 4, float("inf")), InvalidParameter),
    (lambda: rs.real_sum(0.01, 10, 4, rule="theorem6"), CertificationError),  # Theorem 6's q >= 1 for a bit
    (lambda: hg.histogram(1.0, 10**4, 10, rule="best"), InvalidParameter),
])
def test_bad_inputs_are_refused(call, err):
    with pytest.raises(err):
        call()


# ---------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(eps=st.floats(0.05, 5.0), n=st.integers(1000, 10**9), bits=st.integers(1, 10),
       split=st.sampled_from(["mse", "uniform"]), rho=st.floats(0.01, 100.0))
def test_sum_plan_invariants(eps, n, bits, split, rho):
    plan = rs.real_sum(eps, n, bits, 1.0, rho, split)
    assert math.fsum(plan.bit_eps) <= eps
    assert all(p.satisfies_condition7 and p.eps == e for p, e in zip(plan.plans, plan.bit_eps))
    assert plan.mse_at_max <= plan.mse_bound
    assert plan.rounding_variance_bound <= plan.mse_bound
    assert plan.expected_messages(False) < plan.expected_messages(True)
    # each run meets its own MSE budget, so the noise part is at most (1+rho) times the DLap part
    dl = math.fsum(4.0**j * _dlap_var(e) for j, e in enumerate(plan.bit_eps))
    assert plan.noise_variance <= (1 + rho) * dl * (1 + 1e-12)


@settings(max_examples=25, deadline=None)
@given(eps=st.floats(0.05, 5.0), n=st.integers(1000, 10**9), k=st.integers(2, 10**6))
def test_histogram_plan_invariants(eps, n, k):
    plan = hg.histogram(eps, n, k)
    lo, hi = plan.linf_bracket
    assert 0 <= lo <= hi
    assert hi - lo == pytest.approx(plan.bucket.q * n, rel=1e-6, abs=1e-9)
    bigger = hg.HistogramPlan(eps, n, 2 * k, plan.rho, plan.bucket)
    assert bigger.linf_bracket[0] >= lo and bigger.expected_messages() > plan.expected_messages()

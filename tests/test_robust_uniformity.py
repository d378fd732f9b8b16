"""``robust uniformity``: the robust shuffle-private uniformity tester (Balcer, Cheu, Joseph,
Mao, SODA 2021, arXiv 2004.09481, §4).

Independent checks (no code shared with the plug-in's formulas):
* privacy: the tester's whole message view (group counts) enumerated exactly with
  fractions / mpmath for tiny n, both directions, with and without dropouts;
* the statistic's mean and variance: exact enumeration over every data sequence and noise
  value (fractions), and a seeded simulation of the protocol (users' messages, the
  analyzer's de-biasing and statistic) within standard-error tolerances;
* the variance bound: never below the exact variance on random and extreme distributions;
* the random balanced partition: every partition of a small domain enumerated;
* error rates: seeded simulation of the tester never above the certified bounds (+4 SE);
* the planner: the answer meets the target and the answer minus one does not;
* floors: the exact total variation distance of the Paninski mixture (enumerated) against
  the chi-square bound.
"""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from click.testing import CliRunner

from shuffle_accountant.cli import main
from shuffle_accountant.plugins.robust import uniformity as uni

# ---------------------------------------------------------------------------------------
# Privacy: the tester's view enumerated exactly
# ---------------------------------------------------------------------------------------


def _binom_pmf(trials: int, p: Fraction) -> list[Fraction]:
    return [Fraction(math.comb(trials, i)) * p**i * (1 - p) ** (trials - i) for i in range(trials + 1)]


def _view_pmf(group_of_users: list[int], kp: int, honest: int, p: Fraction) -> dict[tuple[int, ...], Fraction]:
    """Exact law of the group counts the analyzer sees: each honest user sends its group label
    and one Bern(p) noise message per group; dropped users send nothing."""
    data = [0] * kp
    for g in group_of_users[:honest]:
        data[g] += 1
    noise = _binom_pmf(honest, p)
    out: dict[tuple[int, ...], Fraction] = {}
    for zs in itertools.product(range(honest + 1), repeat=kp):
        prob = Fraction(1)
        for z in zs:
            prob *= noise[z]
        key = tuple(d + z for d, z in zip(data, zs))
        out[key] = out.get(key, Fraction(0)) + prob
    return out


def _hockey(p_law: dict, q_law: dict, eps: float) -> mpmath.mpf:
    mpmath.mp.dps = 50
    t = mpmath.exp(eps)
    total = mpmath.mpf(0)
    for key, pv in p_law.items():
        diff = mpmath.mpf(pv.numerator) / pv.denominator - t * (mpmath.mpf(q_law.get(key, Fraction(0)).numerator)
                                                                 / q_law.get(key, Fraction(0)).denominator)
        if diff > 0:
            total += diff
    return total


@pytest.mark.parametrize("n,gamma,eps,target", [(10, 1.0, 1.0, 0.25), (12, 0.5, 1.5, 0.2), (10, 1.0, 2.0, 0.05)])
def test_tester_view_privacy_by_exact_enumeration(n, gamma, eps, target):
    cal = uni.calibrate(n, eps, target, gamma)
    honest = cal.honest
    p = Fraction(cal.law.p)
    # worst neighbours: one honest user moves from group 0 to group 1 (the others anywhere: shifts only)
    x = [0] * n
    y = [1] + [0] * (n - 1)
    a, b = _view_pmf(x, 2, honest, p), _view_pmf(y, 2, honest, p)
    exact = max(_hockey(a, b, eps), _hockey(b, a, eps))
    assert cal.delta_lower <= float(exact) * (1 + 1e-9) + 1e-300
    assert float(exact) <= cal.delta_upper * (1 + 1e-9)
    assert float(exact) <= target * (1 + 1e-9)
    # the solved p is the least noise (to the solver's relative step): 0.1% less violates
    p_less = Fraction(cal.law.p * 0.999)
    a, b = _view_pmf(x, 2, honest, p_less), _view_pmf(y, 2, honest, p_less)
    assert max(_hockey(a, b, eps), _hockey(b, a, eps)) > target


# ---------------------------------------------------------------------------------------
# The statistic: exact enumeration with fractions
# ---------------------------------------------------------------------------------------


def _enumerate_statistic(types: list[tuple[int, list[Fraction]]], q: list[Fraction], trials: int, pn: Fraction):
    """Exact (E T, Var T) by enumerating every data sequence and noise vector."""
    kp = len(q)
    n = sum(m for m, _ in types)
    s2 = trials * pn * (1 - pn)
    dists = [dist for m, dist in types for _ in range(m)]
    noise = _binom_pmf(trials, pn)
    e1 = e2 = Fraction(0)
    for xs in itertools.product(range(kp), repeat=n):
        px = Fraction(1)
        counts = [0] * kp
        for dist, xv in zip(dists, xs):
            px *= dist[xv]
            counts[xv] += 1
        if px == 0:
            continue
        for zs in itertools.product(range(trials + 1), repeat=kp):
            pz = px
            for z in zs:
                pz *= noise[z]
            c = [counts[j] + zs[j] - trials * pn for j in range(kp)]
            t = (sum(cj * cj - cj - s2 for cj in c) - 2 * (n - 1) * sum(qj * cj for qj, cj in zip(q, c))
                 + n * (n - 1) * sum(qj * qj for qj in q))
            e1 += pz * t
            e2 += pz * t * t
    return e1, e2 - e1 * e1


@pytest.mark.parametrize("case", [
    ([(3, [Fraction(1, 2), Fraction(1, 3), Fraction(1, 6)])], [Fraction(1, 3)] * 3),
    ([(2, [Fraction(3, 5), Fraction(1, 5), Fraction(1, 5)]), (2, [Fraction(2, 5), Fraction(2, 5), Fraction(1, 5)])],
     [Fraction(2, 5), Fraction(2, 5), Fraction(1, 5)]),
    ([(4, [Fraction(1, 2), Fraction(1, 2)])], [Fraction(1, 2), Fraction(1, 2)]),
])
def test_exact_moments_match_enumeration(case):
    types, q = case
    trials, pn = 2, Fraction(1, 4)
    mean, var = _enumerate_statistic(types, q, trials, pn)
    nm = uni.NoiseMoments.binomial(trials, float(pn))
    got_mean, got_var = uni.exact_moments([(m, np.array([float(v) for v in d])) for m, d in types],
                                          np.array([float(v) for v in q]), nm)
    assert got_mean == pytest.approx(float(mean), rel=1e-12, abs=1e-12)
    assert got_var == pytest.approx(float(var), rel=1e-12)


def test_null_variance_matches_enumeration_with_compression_targets():
    # 5 elements in 2 groups: q = (3/5, 2/5); uniform data maps to q exactly
    q = [Fraction(3, 5), Fraction(2, 5)]
    mean, var = _enumerate_statistic([(4, q)], q, 3, Fraction(1, 3))
    g = uni.groups(5, 2)
    assert mean == 0
    assert uni.null_variance(4, g, uni.NoiseMoments.binomial(3, 1 / 3)) == pytest.approx(float(var), rel=1e-12)


def test_variance_bound_is_never_below_the_exact_variance():
    rng = np.random.default_rng(20260101)
    worst = 0.0
    for _ in range(1500):
        k = int(rng.integers(2, 60))
        kp = int(rng.integers(2, k + 1))
        g = uni.groups(k, kp)
        small, big = divmod(k, kp)
        q = np.array([small + 1] * big + [small] * (kp - big)) / k
        nm = uni.NoiseMoments.binomial(int(rng.integers(1, 100)), float(rng.uniform(1e-3, 0.5)))
        n_d, n_u = int(rng.integers(2, 80)), int(rng.integers(0, 80))
        if rng.random() < 0.3:  # point masses are the extreme distributions
            p = np.zeros(kp)
            p[rng.integers(kp)] = 1.0
        else:
            p = rng.dirichlet(np.full(kp, rng.choice([0.05, 1.0, 30.0])))
        d2 = float((p - q) @ (p - q))
        samples = [(n_d, p), (n_u, q)] if n_u else [(n_d, p)]
        mean, var = uni.exact_moments(samples, q, nm)
        assert mean == pytest.approx(n_d * (n_d - 1) * d2, rel=1e-9, abs=1e-9)
        bound = uni.far_variance_bound(n_d, n_u, d2, g, nm)
        assert var <= bound
        worst = max(worst, var / bound)
    assert worst > 0.5  # the bound is not vacuous


# ---------------------------------------------------------------------------------------
# The random balanced partition, every partition enumerated
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("k,kp", [(6, 2), (6, 3), (7, 3), (8, 3)])
def test_partition_moments_by_enumerating_every_partition(k, kp):
    small, big = divmod(k, kp)
    labels = [g for g, size in enumerate([small + 1] * big + [small] * (kp - big)) for _ in range(size)]
    assignments = set(itertools.permutations(labels))
    rng = np.random.default_rng(k * 10 + kp)
    g = uni.groups(k, kp)
    for _ in range(3):
        raw = [Fraction(int(v)) for v in rng.integers(0, 20, size=k)]
        total = sum(raw)
        d = [r / total - Fraction(1, k) for r in raw]
        delta2 = sum(x * x for x in d)
        values = []
        for a in assignments:
            sums = [Fraction(0)] * kp
            for j, grp in enumerate(a):
                sums[grp] += d[j]
            values.append(sum(s * s for s in sums))
        mean = sum(values) / len(values)
        var = sum(v * v for v in values) / len(values) - mean * mean
        assert float(mean) == pytest.approx((1 - g.pi2) * float(delta2), rel=1e-12)
        assert float(var) <= g.w * float(delta2) ** 2 * (1 + 1e-12)
        s4 = sum(x**4 for x in d) / delta2**2
        exact = (2 * g.pi2 * (1 - s4) + g.pi3 * (8 * s4 - 4) + g.pi4 * (3 - 6 * s4) - g.pi2**2) * delta2**2
        assert float(var) == pytest.approx(float(exact), rel=1e-9, abs=1e-18)


# ---------------------------------------------------------------------------------------
# Seeded simulation of the protocol: messages -> analyzer -> decision
# ---------------------------------------------------------------------------------------


def _simulate(design: uni.TesterResult, dist: np.ndarray, reps: int, seed: int, compress: bool) -> np.ndarray:
    """The statistic in ``reps`` runs: users sample from ``dist`` over [k], map to a fresh random
    balanced partition, send their group plus Bern(p) per group; the analyzer subtracts n p."""
    rng = np.random.default_rng(seed)
    k, kp, n, p = design.k, design.groups, design.n, design.p
    small, big = divmod(k, kp)
    sizes = np.array([small + 1] * big + [small] * (kp - big))
    labels = np.repeat(np.arange(kp), sizes)
    q = sizes / k
    out = np.empty(reps)
    for r in range(reps):
        group_of = labels[rng.permutation(k)] if compress else np.arange(k)
        samples = rng.choice(k, size=n, p=dist)
        counts = np.bincount(group_of[samples], minlength=kp).astype(float)
        noise = rng.binomial(n, p, size=kp)
        c_hat = counts + noise - n * p
        s2 = n * p * (1 - p)
        out[r] = float(np.sum(c_hat * c_hat - c_hat - s2) - 2 * (n - 1) * (c_hat @ q) + n * (n - 1) * (q @ q))
    return out


def _far_distribution(k: int, alpha: float) -> np.ndarray:
    m = k // 2
    c = alpha * k / m
    dist = np.full(k, 1.0 / k)
    dist[0:2 * m:2] *= 1 + c
    dist[1:2 * m:2] *= 1 - c
    return dist


def test_simulated_statistic_has_the_exact_mean_and_variance():
    design = uni.tester(400, 60, 0.3, 1.0, 1e-4, groups_fixed=60)
    dist = _far_distribution(60, 0.3)
    stats = _simulate(design, dist, 3000, 11, compress=False)
    nm = uni.NoiseMoments.binomial(400, design.p)
    q = np.full(60, 1 / 60)
    mean, var = uni.exact_moments([(400, dist)], q, nm)
    se_mean = math.sqrt(var / len(stats))
    assert abs(stats.mean() - mean) < 4 * se_mean
    # variance of a sample variance: about var * sqrt(2/R) for near-normal statistics; 5 SE
    assert abs(stats.var() - var) < 5 * var * math.sqrt(2 / len(stats))


@pytest.mark.parametrize("k,alpha,n,groups_fixed,compress", [(200, 0.3, 1287, 200, False), (3000, 0.25, 9984, 640, True)])
def test_simulated_error_rates_stay_below_the_certified_bounds(k, alpha, n, groups_fixed, compress):
    # n and groups: the planner's answers for these inputs (test_smallest_n_* checks the planner)
    design = uni.tester(n, k, alpha, 1.0, 1e-5, groups_fixed=groups_fixed)
    assert design.meets_target and (design.groups < k) == compress
    reps = 300
    null = _simulate(design, np.full(k, 1 / k), reps, 5, compress)
    far = _simulate(design, _far_distribution(k, alpha), reps, 6, compress)
    t = design.errors.threshold
    null_rate, far_rate = float(np.mean(null > t)), float(np.mean(far <= t))
    for rate, bound in ((null_rate, design.errors.null_error), (far_rate, design.errors.far_error)):
        assert rate <= bound + 4 * math.sqrt(bound * (1 - bound) / reps)
    # the normal-approximation estimates are estimates: near the simulated rates (loose)
    assert null_rate <= design.errors.null_error_normal + 0.08


# ---------------------------------------------------------------------------------------
# The planner: verified forward
# ---------------------------------------------------------------------------------------


def test_planner_question_of_the_issue():
    """"How many users to test uniformity over k = 1e4 at distance 0.1 with eps = 1 (delta 1e-6)?" """
    plan = uni.smallest_n(10**4, 0.1, 1.0, 1e-6)
    assert plan.n == 68868 and not plan.below_ok
    ok, kp, _ = uni._meets(plan.n, 10**4, 0.1, 1.0, 1e-6, 1.0, 1 / 3, None, False)
    assert ok and kp == plan.groups
    assert not uni._meets(plan.n - 1, 10**4, 0.1, 1.0, 1e-6, 1.0, 1 / 3, None, False)[0]
    at = plan.at_n
    assert max(at.errors.null_error, at.errors.far_error) <= 1 / 3 and at.delta_upper <= 1e-6
    assert plan.details["n_normal_estimate"] < plan.n
    assert uni.paninski_floor(10**4, 0.1) <= plan.n


@pytest.mark.parametrize("k,alpha,gamma", [(2, 0.4, 1.0), (50, 0.5, 0.5),
                                           pytest.param(1000, 0.2, 0.9, marks=pytest.mark.slow)])
def test_smallest_n_meets_and_one_less_does_not(k, alpha, gamma):
    plan = uni.smallest_n(k, alpha, 1.0, 1e-6, gamma=gamma)
    assert uni._meets(plan.n, k, alpha, 1.0, 1e-6, gamma, 1 / 3, None, False)[0]
    assert not uni._meets(plan.n - 1, k, alpha, 1.0, 1e-6, gamma, 1 / 3, None, False)[0]
    assert plan.at_n.honest == math.ceil(gamma * plan.n - 1e-9)


@pytest.mark.slow
def test_more_privacy_or_a_smaller_distance_needs_more_users():
    base = uni.smallest_n(50, 0.5, 1.0, 1e-6).n
    assert uni.smallest_n(50, 0.5, 0.5, 1e-6).n > base
    assert uni.smallest_n(50, 0.3, 1.0, 1e-6).n > base
    assert uni.smallest_n(50, 0.5, 1.0, 1e-6, gamma=0.5).n > base


# ---------------------------------------------------------------------------------------
# Floors
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("k,alpha,n", [(4, 0.25, 3), (4, 0.4, 4), (6, 0.3, 3), (5, 0.2, 4)])
def test_paninski_chi_square_bound_by_exact_total_variation(k, alpha, n):
    m = k // 2
    c = Fraction(alpha).limit_denominator(1000) * k / m
    u = Fraction(1, k)
    tv = Fraction(0)
    signs = list(itertools.product((1, -1), repeat=m))
    for xs in itertools.product(range(k), repeat=n):
        mix = Fraction(0)
        for z in signs:
            prob = Fraction(1)
            for x in xs:
                if x < 2 * m:
                    s = z[x // 2] * (1 if x % 2 == 0 else -1)
                    prob *= u * (1 + s * c)
                else:
                    prob *= u
            mix += prob
        mix /= len(signs)
        tv += abs(mix - u**n)
    tv /= 2
    chi2_bound = math.cosh(2 * float(c) ** 2 * n / k) ** m - 1
    assert float(tv) <= 0.5 * math.sqrt(chi2_bound) + 1e-12
    floor = uni.paninski_floor(k, float(Fraction(alpha).limit_denominator(1000)))
    if floor is not None and n < floor:
        assert float(tv) < 1 - 2 / 3


def test_floors_are_consistent():
    assert uni.paninski_floor(10**4, 0.1) == 1517
    assert uni.paninski_floor(3, 0.6) is None  # needs alpha <= floor(k/2)/k
    f = uni.dp_floor(0.1, 1.0, 1e-6)
    assert f >= 1
    # smaller eps or distance: a larger floor
    assert uni.dp_floor(0.01, 0.1, 1e-6) > f
    assert uni.paper_floor_k_only(1000) == pytest.approx(100.0)


# ---------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------


def _run(args):
    return CliRunner().invoke(main, ["robust", "uniformity", *args])


def test_cli_plan_json():
    r = _run(["--k", "50", "--alpha", "0.5", "--eps", "1", "--delta", "1e-6", "--format", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    values = {row["quantity"]: row for row in doc["results"]}
    plan = uni.smallest_n(50, 0.5, 1.0, 1e-6)
    assert values["smallest n (this tester)"]["value"] == plan.n
    assert values["smallest n (this tester)"]["kind"] == "upper"
    # an Omega(k^(2/3)) with an unknown constant is no lower bound: shown as an estimate (order only)
    assert values["floor: Theorem 4.11, k^(2/3) (up to constants)"]["kind"] == "estimate"
    assert all(row["kind"] != "lower" or "derived" in row["method"] for row in doc["results"]
               if row["quantity"].startswith("floor"))
    assert values["paper's sample complexity, Theorem 4.8"]["kind"] == "not applicable"
    assert doc["summary"]["plan"]["n"] == plan.n


def test_cli_forward_mode_reports_whether_n_meets():
    r = _run(["--k", "200", "--alpha", "0.3", "--eps", "1", "--delta", "1e-5", "--n", "300", "--groups", "200"])
    assert r.exit_code == 0, r.output
    assert "meets beta on both sides" in r.output and " no " in r.output


@pytest.mark.parametrize("args,flag", [
    (["--k", "1", "--alpha", "0.1"], "--k"),
    (["--k", "100", "--alpha", "nan"], "--alpha"),
    (["--k", "100", "--alpha", "0"], "--alpha"),
    (["--k", "100", "--alpha", "-0.1"], "--alpha"),
    (["--k", "100", "--alpha", "1.5"], "--alpha"),
    (["--k", "2", "--alpha", "0.7"], "--alpha"),  # beyond 1 - 1/k
    (["--k", "1e400", "--alpha", "0.1"], "--k"),
    (["--k", "100", "--alpha", "0.1", "--beta", "0.5"], "--beta"),
    (["--k", "100", "--alpha", "0.1", "--groups", "101"], "--groups"),
    (["--k", "100", "--alpha", "0.1", "--n", "-5"], "--n"),
    (["--k", "100", "--alpha", "0.1", "--gamma", "0"], "--gamma"),
])
def test_hostile_inputs_exit_2_with_one_line(args, flag):
    base = {"--eps": "1", "--delta": "1e-6"}
    full = list(args) + [x for kv in base.items() for x in kv]
    r = _run(full)
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2, r.output
    assert len(lines) == 1 and flag in lines[0], r.stderr
    assert r.stdout == ""


@pytest.mark.parametrize("bad", ["nan", "-1", "1e999", "inf"])
def test_hostile_eps_and_delta(bad):
    for flag in ("--eps", "--delta"):
        args = ["--k", "100", "--alpha", "0.1", "--eps", "1", "--delta", "1e-6"]
        args[args.index(flag) + 1] = bad
        r = _run(args)
        assert r.exit_code == 2 and flag in r.stderr and r.stdout == ""

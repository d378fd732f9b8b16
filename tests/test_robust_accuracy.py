"""The robust plug-in against independent computations: the bc20 histogram analyzer by a
seeded Monte Carlo, the randomized-response bracket by brute force over every data set,
and delta(eps) of large laws (where the Boost error budget matters) by 40-digit sums."""

from __future__ import annotations

import json
import math

import mpmath as mp
import numpy as np
import pytest
from click.testing import CliRunner
from test_fp import ref_pmf, ref_tail
from test_robust_bitsum import _rr_dataset_delta  # brute force over one data set

from shuffle_accountant.cli import main
from shuffle_accountant.numeric import fp
from shuffle_accountant.plugins.robust import bitsum as bs
from shuffle_accountant.plugins.robust import noise as nz
from shuffle_accountant.plugins.robust import structures as sx

# ---------------------------------------------------------------------------------------
# bc20 histogram: the protocol's own analyzer, simulated
# ---------------------------------------------------------------------------------------


def simulate_bc20(counts: list[int], n: int, q: float, reps: int, seed: int) -> tuple[float, float]:
    """Mean and standard error of the l_inf error of Balcer-Cheu's analyzer: bin j receives
    c_j + n - B_j messages (B_j ~ Bin(n, q)); estimate |y_j| - n(1-q) if |y_j| > n, else 0."""
    rng = np.random.default_rng(seed)
    c = np.asarray(counts)
    b = rng.binomial(n, q, size=(reps, len(c)))
    y = c + n - b
    est = np.where(y > n, y - n * (1 - q), 0.0)
    err = np.abs(est - c).max(axis=1)
    return float(err.mean()), float(err.std(ddof=1) / math.sqrt(reps))


def test_bc20_error_matches_a_seeded_simulation_of_its_analyzer():
    n, k = 10**4, 100
    r = sx.histogram(k, n, 1.0, 1e-6, protocol="bc20")
    q = r.law.p
    worst = r.details["worst_data"]
    counts = [worst["users_per_bin"]] * worst["bins"]
    counts.append(n - sum(counts))
    mean, se = simulate_bc20(counts, n, q, 40000, seed=7)
    # the attained value is the exact expectation for that data set (the leftover bin only adds)
    assert abs(mean - r.details["linf_error_attained"]) <= 4 * se + 0.02
    # and no data set exceeds the upper bound
    for data in (counts, [n // k] * k, [n] + [0] * (k - 1), [43] * 99 + [n - 43 * 99], [1] * 99 + [n - 99]):
        m, s = simulate_bc20(data, n, q, 20000, seed=11)
        assert m <= r.linf_error + 4 * s


def test_bc20_is_not_the_lecture_number_and_empty_bins_are_exact():
    lecture = sx.histogram(100, 10**4, 1.0, 1e-6, protocol="lecture")
    bc20 = sx.histogram(100, 10**4, 1.0, 1e-6, protocol="bc20")
    assert bc20.law.p == lecture.law.p  # same privacy (mirrored binomial), different analyzer
    assert bc20.details["linf_error_attained"] > 2 * lecture.linf_error  # the zeroing bias
    assert bc20.details["empty_bin_error"] == 0.0
    mean, _ = simulate_bc20([0] * 50, 10**4, bc20.law.p, 2000, seed=3)
    assert mean == 0.0


def test_bc20_error_does_not_grow_with_the_domain_beyond_n():
    n = 1000
    at_n = sx.bc20_linf_error(n, n, 0.03)
    beyond = sx.bc20_linf_error(n, 10**9, 0.03)
    assert at_n["upper"] == beyond["upper"]
    lecture_small = sx.expected_max_deviation(nz.NoiseLaw("binomial", size=n, p=0.03), 1000)
    lecture_big = sx.expected_max_deviation(nz.NoiseLaw("binomial", size=n, p=0.03), 10**9)
    assert lecture_big > lecture_small  # the lecture protocol's error keeps growing


def test_bc20_cli_labels_its_numbers():
    out = CliRunner().invoke(main, ["robust", "histogram", "--k", "100", "--n", "1e4", "--eps", "1", "--delta", "1e-6",
                                    "--protocol", "bc20", "--format", "json"])
    assert out.exit_code == 0, out.output
    rec = json.loads(out.stdout)["results"][0]
    assert rec["details"]["linf_error_model"].startswith("bc20")
    assert rec["details"]["linf_error_attained"] <= rec["linf_error"]
    text = CliRunner().invoke(main, ["robust", "histogram", "--k", "100", "--n", "1e4", "--eps", "1", "--delta", "1e-6",
                                     "--protocol", "bc20"]).output
    assert "zero in, zero out" in text and "18.03" not in text


# ---------------------------------------------------------------------------------------
# cheu2019: the least noise is bracketed, each end checked against brute force
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("n,eps,target,gamma", [(80, 0.5, 1e-3, 1.0), (200, 1.0, 1e-4, 0.5), (150, 0.3, 1e-2, 0.8)])
def test_randomized_response_least_noise_is_bracketed(n, eps, target, gamma):
    plan = bs.bitsum_plan("cheu2019", n, eps, target, gamma)
    h = plan.honest
    sufficient, necessary = plan.exact.value, plan.necessary.value
    assert necessary < sufficient
    # sufficient: every data set meets the target (brute force over all of them)
    worst = max(_rr_dataset_delta(h, sufficient, eps, j) for j in range(h))
    assert worst <= target * (1 + 1e-9)
    # necessary: the all-zero data set violates there, so the least noise is above it
    assert _rr_dataset_delta(h, necessary, eps, 0) > target


def test_randomized_response_labels_in_the_issue_example():
    plan = bs.bitsum_plan("cheu2019", 10**4, 1.0, 1e-6, 0.5)
    assert plan.exact.value == pytest.approx(0.0164977, rel=1e-4)
    assert plan.necessary.value == pytest.approx(0.0132, rel=2e-3)
    doc = json.loads(CliRunner().invoke(main, ["robust", "bitsum", "--n", "1e4", "--eps", "1", "--delta", "1e-6",
                                               "--gamma", "0.5", "--protocol", "cheu2019", "--format", "json"]).stdout)
    rec = doc["results"][0]
    assert rec["necessary"]["value"] < rec["exact"]["value"]
    out = CliRunner().invoke(main, ["robust", "bitsum", "--n", "1e4", "--eps", "1", "--delta", "1e-6", "--gamma", "0.5",
                                    "--protocol", "cheu2019", "--format", "csv"]).stdout
    kinds = {line.split(",")[1]: line for line in out.splitlines()[1:]}
    assert any(",upper," in v for k, v in kinds.items() if k.startswith("sufficient"))
    assert any(",lower," in v for k, v in kinds.items() if k.startswith("necessary"))
    assert not any(",exact," in v for k, v in kinds.items() if k.startswith(("sufficient", "necessary")))


# ---------------------------------------------------------------------------------------
# delta(eps) of large laws against 40-digit sums: the measured budgets are the ones used
# ---------------------------------------------------------------------------------------


def _exact_delta_binomial(n: int, p: float, eps: float, kmax: int) -> mp.mpf:
    t = mp.e ** mp.mpf(eps)
    f = [ref_pmf("binomial", k, n, p) for k in range(kmax + 1)]
    fwd = mp.fsum(max(mp.mpf(0), f[k] - t * (f[k - 1] if k else 0)) for k in range(kmax + 1))
    bwd = mp.fsum(max(mp.mpf(0), (f[k - 1] if k else 0) - t * f[k]) for k in range(kmax + 1))
    return max(fwd, bwd)


@pytest.mark.parametrize("n,p,eps", [(10**9, 9.2e-9, 0.5), (2 * 10**9, 1e-8, 1.0), (10**12, 2e-11, 0.7)])
def test_binomial_delta_brackets_the_exact_value_at_large_n(n, p, eps):
    with mp.workdps(40):
        exact = _exact_delta_binomial(n, p, eps, 250)
    res = nz.delta(nz.NoiseLaw("binomial", size=n, p=p), eps)
    assert res.lower <= exact <= res.upper
    assert res.details["relative_budget"] == fp.binomial_budget(n) > 1e-10  # the measured budget, not 1e-10
    assert res.upper <= float(exact) * (1 + 1e-4)


@pytest.mark.parametrize("mu,eps", [(1e8, 0.001), (2.5e6, 0.004), (40.0, 0.5)])
def test_poisson_delta_brackets_the_exact_value_at_large_means(mu, eps):
    """scipy's own poisson.sf is off by 30% at mu = 7.5e7 four standard deviations out; the
    plug-in evaluates the Poisson law through Boost's chi-square, with its measured budget."""
    with mp.workdps(40):
        t = mp.e ** mp.mpf(eps)
        a = int(mp.ceil(mp.mpf(mu) / t)) - 1  # A1 = {k <= a}: f(k) > e^eps f(k-1) iff k < mu e^-eps
        b = int(mp.floor(mp.mpf(mu) * t)) + 1  # A2 = {k >= b}
        fwd = ref_tail("poisson", a, mu, upper=False) - t * ref_tail("poisson", a - 1, mu, upper=False)
        bwd = ref_tail("poisson", b - 2, mu, upper=True) - t * ref_tail("poisson", b - 1, mu, upper=True)
        exact = max(fwd, bwd)
    res = nz.delta(nz.NoiseLaw("poisson", mean=mu), eps)
    assert res.lower <= exact <= res.upper
    assert res.upper <= float(exact) * (1 + 3e-2)  # delta is a small difference of tails here: wider

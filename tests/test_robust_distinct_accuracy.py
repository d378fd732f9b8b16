"""Distinct elements: the (alpha, beta) statement, its warning, the hashed variant, and the
inverse questions (``--target-error``) of the robust plug-in, checked against independent
computations: exact rational tails, a seeded simulation of the protocol's own users and
analyzer, a real 2-universal hash family, and the forward computation."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from shuffle_accountant.cli import main
from shuffle_accountant.errors import CertificationError, InvalidParameter
from shuffle_accountant.output import FORMATS
from shuffle_accountant.plugins.robust import bitsum, noise
from shuffle_accountant.plugins.robust import structures as sx


def _run(args):
    return CliRunner().invoke(main, args)


# ---------------------------------------------------------------------------------
# (alpha, beta) against exact rational tails (no code shared with the fast path)
# ---------------------------------------------------------------------------------


def _exact_tail(k: int, d: int, p: Fraction, threshold: Fraction) -> Fraction:
    """P[|S - k p - d (1/2 - p)| >= threshold], S = Bin(d, 1/2) + Bin(k - d, p), in rationals."""
    half = Fraction(1, 2)
    a = [Fraction(math.comb(d, i)) * half**d for i in range(d + 1)]
    b = [Fraction(math.comb(k - d, j)) * p**j * (1 - p) ** (k - d - j) for j in range(k - d + 1)]
    centre = k * p + d * (half - p)
    return sum((x * y for i, x in enumerate(a) for j, y in enumerate(b) if abs(i + j - centre) >= threshold),
               Fraction(0))


@pytest.mark.parametrize("k,p,beta", [(12, 0.27, 0.05), (9, 0.1, 0.2), (15, 0.4, 0.01)])
def test_alpha_brackets_the_exact_worst_case(k, p, beta):
    acc = sx.distinct_accuracy(k, 100, p, beta)
    c = Fraction(0.5) - Fraction(p)
    worst = max(_exact_tail(k, d, Fraction(p), Fraction(acc.alpha_upper) * c) for d in range(1, k + 1))
    assert worst <= beta  # the upper alpha holds for every data set
    attained = _exact_tail(k, k, Fraction(p), Fraction(acc.alpha_lower) * c)
    assert attained > beta  # and one data set needs at least the lower alpha
    assert acc.alpha_lower <= acc.alpha_upper <= acc.alpha_hoeffding


@settings(max_examples=30, deadline=None)
@given(k=st.integers(1, 10**5), n=st.integers(1, 10**7), p=st.floats(0.0, 0.49), beta=st.floats(1e-12, 0.5))
def test_alpha_properties(k, n, p, beta):
    acc = sx.distinct_accuracy(k, n, p, beta)
    assert 0.0 <= acc.alpha_lower <= acc.alpha_upper <= acc.alpha_hoeffding
    hoeffding = math.sqrt(k * math.log(2 / beta) / 2) / (0.5 - p)
    assert acc.alpha_hoeffding >= hoeffding
    assert sx.distinct_accuracy(k, n, p, beta / 2).alpha_upper >= acc.alpha_upper  # smaller beta, larger alpha


# ---------------------------------------------------------------------------------
# Seeded simulation of the protocol's users and analyzer (all honest)
# ---------------------------------------------------------------------------------


def _simulate(n: int, k: int, held: np.ndarray, p_user: float, p_central: float, trials: int, seed: int) -> np.ndarray:
    """Errors of the analyzer over ``trials`` runs: each user holding j sends Bern(1/2) for j,
    Bern(p') for every other element; the bits of element j are summed mod 2 (what split and
    mix computes for honest users); estimate = (sum_j y_j - k p)/(1/2 - p)."""
    rng = np.random.default_rng(seed)
    out = np.empty(trials)
    owner = np.zeros((n, k), dtype=bool)
    owner[np.arange(n), held] = True
    prob = np.where(owner, 0.5, p_user)
    true_d = len(set(held.tolist()))
    for t in range(trials):
        bits = rng.random((n, k)) < prob
        y = np.bitwise_xor.reduce(bits, axis=0)
        out[t] = (y.sum() - k * p_central) / (0.5 - p_central) - true_d
    return out


@pytest.mark.parametrize("distinct", [30, 8])
def test_errors_match_a_seeded_simulation_of_the_analyzer(distinct):
    n, k, beta = 40, 30, 0.1
    r = sx.distinct_elements(n, k, 1.0, 1e-6, beta=beta)
    acc = r.accuracy
    held = np.arange(n) % distinct
    err = _simulate(n, k, held, r.p_user, r.p_central, 3000, seed=12345 + distinct)
    c = 0.5 - r.p_central
    mse_exact = (distinct / 4 + (k - distinct) * r.p_central * (1 - r.p_central)) / c**2
    se_mse = np.std(err**2) / math.sqrt(len(err))
    assert abs(np.mean(err**2) - mse_exact) <= 4 * se_mse
    assert np.mean(err**2) <= r.rmse_upper**2 + 4 * se_mse
    se = math.sqrt(beta * (1 - beta) / len(err))
    assert np.mean(np.abs(err) > acc.alpha_upper) <= beta + 4 * se
    if distinct == k:  # the data set the lower end is computed on
        assert np.mean(np.abs(err) >= acc.alpha_lower) >= beta - 4 * se


def test_warning_when_the_error_exceeds_half_the_domain():
    res = _run(["robust", "distinct", "--n", "1e4", "--k", "100", "--eps", "0.2", "--delta", "1e-6", "--gamma", "0.3"])
    assert res.exit_code == 0, res.output
    warn = [line for line in res.output.splitlines() if line.startswith("warning")]
    assert len(warn) == 1 and "no better than" in warn[0]
    quiet = _run(["robust", "distinct", "--n", "1e5", "--k", "1000", "--eps", "1", "--delta", "1e-6"])
    assert "no better than" not in quiet.output


# ---------------------------------------------------------------------------------
# Large universe: hashing
# ---------------------------------------------------------------------------------


def test_hashing_keeps_privacy_and_adds_the_collision_bound():
    plain = sx.distinct_elements(100, 5000, 1.0, 1e-6)
    hashed = sx.distinct_elements(100, 5000, 1.0, 1e-6, universe=10**12)
    assert hashed.p_user == plain.p_user and hashed.total_delta == plain.total_delta
    acc = hashed.accuracy
    assert acc.collision_beta == pytest.approx(0.025)
    assert acc.collision_error == pytest.approx(100 * 99 / (2 * 5000 * 0.025), rel=1e-12)
    assert acc.alpha_upper > plain.accuracy.alpha_upper  # half the beta for the noise, plus the collisions
    # with more users than the bound allows, the loss is capped at D - 1
    capped = sx.distinct_elements(1000, 5000, 1.0, 1e-6, universe=10**12).accuracy
    assert capped.collision_error == pytest.approx(999, rel=1e-12)


def test_collision_bound_holds_for_a_real_two_universal_family():
    prime, universe, bins, n = 1_000_003, 10**6, 200, 40
    beta_h = 0.1
    acc = sx.distinct_elements(n, bins, 1.0, 1e-6, universe=universe, beta=2 * beta_h).accuracy
    rng = np.random.default_rng(7)
    data = rng.choice(universe, size=n, replace=False)
    lost = []
    for _ in range(4000):
        a, b = int(rng.integers(1, prime)), int(rng.integers(0, prime))
        hashed = {((a * int(x) + b) % prime) % bins for x in data}
        lost.append(n - len(hashed))
    lost_arr = np.array(lost)
    se = math.sqrt(beta_h * (1 - beta_h) / len(lost_arr))
    assert np.mean(lost_arr > acc.collision_error) <= beta_h + 4 * se
    assert np.mean(lost_arr) <= n * (n - 1) / (2 * bins) * 1.05 + 0.1  # E C <= D(D-1)/(2k), with sampling slack


def test_best_hash_size_is_no_worse_than_its_neighbours():
    r = sx.best_hash_size(10**4, 10**12, 1.0, 1e-6)
    for other in (r.k // 2, r.k * 2, r.k - 1, r.k + 1):
        o = sx.distinct_elements(10**4, other, 1.0, 1e-6, universe=10**12)
        assert r.accuracy.alpha_upper <= o.accuracy.alpha_upper * (1 + 1e-9)


def test_hashing_refuses_a_universe_not_larger_than_the_bins():
    with pytest.raises(InvalidParameter, match="universe"):
        sx.distinct_elements(100, 50, 1.0, 1e-6, universe=50)


# ---------------------------------------------------------------------------------
# Inverse questions, verified by the forward computation
# ---------------------------------------------------------------------------------


def test_bitsum_relative_target_verified_forward():
    first, last = noise.users_for_error(lambda m: bitsum.bitsum_plan("lecture", m, 1.0, 1e-6, 0.9).exact.rmse, 1e-3,
                                        relative=True)
    at = bitsum.bitsum_plan("lecture", first.n, 1.0, 1e-6, 0.9).exact.rmse
    below = bitsum.bitsum_plan("lecture", first.n - 1, 1.0, 1e-6, 0.9).exact.rmse
    assert at / first.n <= 1e-3 < below / (first.n - 1)
    assert first.n_failing == first.n - 1 and last is None  # error / n falls with n: not searched


def test_bitsum_absolute_target_has_two_verified_ends():
    first, last = noise.users_for_error(lambda m: bitsum.bitsum_plan("lecture", m, 1.0, 1e-6).exact.rmse, 5.5)
    with pytest.raises(CertificationError):
        bitsum.bitsum_plan("lecture", first.n - 1, 1.0, 1e-6)  # below the privacy floor
    assert bitsum.bitsum_plan("lecture", last.n, 1.0, 1e-6).exact.rmse <= 5.5
    assert bitsum.bitsum_plan("lecture", last.n + 1, 1.0, 1e-6).exact.rmse > 5.5


def test_histogram_target_verified_forward():
    def linf(m):
        return sx.histogram(20, m, 1.0, 1e-6).linf_error

    first, _ = noise.users_for_error(linf, 0.05, relative=True)
    assert linf(first.n) / first.n <= 0.05 < linf(first.n - 1) / (first.n - 1)


def test_distinct_hashed_largest_n_verified_forward():
    def alpha(m):
        return sx.distinct_elements(m, 10**5, 1.0, 1e-6, universe=10**9).accuracy.alpha_upper

    first, last = noise.users_for_error(alpha, 3000.0)
    assert alpha(last.n) <= 3000.0 < alpha(last.n + 1)
    assert alpha(first.n) <= 3000.0


def test_unreachable_target_says_what_was_seen():
    with pytest.raises(CertificationError, match="least error seen"):
        noise.users_for_error(lambda m: bitsum.bitsum_plan("lecture", m, 1.0, 1e-6).exact.rmse, 4.0)


def test_least_feasible_on_known_predicates():
    x, bad = noise.least_feasible(lambda v: v >= 1234, 1, 10**6, integer=True)
    assert (x, bad) == (1234, 1233)
    x, bad = noise.least_feasible(lambda v: v * v >= 2.0, 1e-3, 10.0, rtol=1e-9)
    assert x * x >= 2.0 > bad * bad and x - bad <= 1e-9 * x


# ---------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------

NEW_COMMANDS = [
    ["robust", "distinct", "--n", "1e4", "--universe", "1e12", "--hash-size", "1e5", "--eps", "1", "--delta", "1e-6"],
    ["robust", "distinct", "--n", "1e3", "--k", "500", "--eps", "1", "--delta", "1e-6", "--beta", "0.01"],
    ["robust", "distinct", "--target-error", "300", "--k", "1000", "--eps", "1", "--delta", "1e-6"],
    ["robust", "bitsum", "--target-error", "0.001", "--relative", "--eps", "1", "--delta", "1e-6", "--protocol", "bc20"],
    ["robust", "histogram", "--k", "20", "--target-error", "0.05", "--relative", "--eps", "1", "--delta", "1e-6"],
]


@pytest.mark.parametrize("args", NEW_COMMANDS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_new_commands_in_every_format(args, fmt):
    res = _run(args + ["--format", fmt])
    assert res.exit_code == 0, res.output
    if fmt == "json":
        doc = json.loads(res.output)
        assert doc["results"] and doc["command"].startswith("robust")


def test_distinct_json_carries_the_accuracy_statement():
    doc = json.loads(_run(["robust", "distinct", "--n", "1e5", "--k", "1000", "--eps", "1", "--delta", "1e-6",
                           "--beta", "0.01", "--format", "json"]).output)
    acc = doc["results"][0]["accuracy"]
    assert acc["beta"] == 0.01 and acc["alpha_lower"] <= acc["alpha_upper"] <= acc["alpha_hoeffding"]


@pytest.mark.parametrize("args,flag", [
    (["robust", "distinct", "--n", "1e4", "--k", "10", "--eps", "1", "--delta", "1e-6", "--beta", "1"], "--beta"),
    (["robust", "distinct", "--n", "1e4", "--k", "10", "--eps", "1", "--delta", "1e-6", "--beta", "nan"], "--beta"),
    (["robust", "distinct", "--n", "1e4", "--k", "10", "--universe", "1e9", "--eps", "1", "--delta", "1e-6"], "--k"),
    (["robust", "distinct", "--n", "1e4", "--k", "10", "--hash-size", "5", "--eps", "1", "--delta", "1e-6"],
     "--hash-size"),
    (["robust", "distinct", "--n", "1e4", "--universe", "1e40", "--eps", "1", "--delta", "1e-6"], "--universe"),
    (["robust", "distinct", "--n", "1e4", "--universe", "10", "--hash-size", "20", "--eps", "1", "--delta", "1e-6"],
     "universe"),
    (["robust", "distinct", "--target-error", "10", "--universe", "1e9", "--eps", "1", "--delta", "1e-6"],
     "--hash-size"),
    (["robust", "bitsum", "--target-error", "0", "--eps", "1", "--delta", "1e-6"], "--target-error"),
    (["robust", "bitsum", "--target-error", "-3", "--eps", "1", "--delta", "1e-6"], "--target-error"),
    (["robust", "bitsum", "--n", "100", "--target-error", "3", "--eps", "1", "--delta", "1e-6"], "--target-error"),
    # --relative only changes a --target-error: refused, not ignored, without one
    (["robust", "bitsum", "--n", "100", "--relative", "--eps", "1", "--delta", "1e-6"], "--relative"),
    (["robust", "histogram", "--k", "10", "--n", "100", "--relative", "--eps", "1", "--delta", "1e-6"], "--relative"),
    (["robust", "bitsum", "--eps", "1", "--delta", "1e-6"], "--n"),
    (["robust", "histogram", "--k", "10", "--target-error", "3", "--eps", "1"], "--delta"),
])
def test_hostile_inputs_one_line_exit_2(args, flag):
    res = _run(args)
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and flag in lines[0] and "Traceback" not in res.output


def test_unreachable_target_exit_1_one_line():
    res = _run(["robust", "bitsum", "--target-error", "4", "--eps", "1", "--delta", "1e-6", "--protocol", "lecture"])
    assert res.exit_code == 1
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and "--target-error 4" in lines[0] and "least error seen" in lines[0]


def _results(args):
    import csv
    import io

    res = _run(args + ["--format", "csv"])
    assert res.exit_code == 0, res.output
    return {row["quantity"]: dict(row, value=int(row["value"]) if row["value"].isdigit() else row["value"])
            for row in csv.DictReader(io.StringIO(res.output))}


def test_largest_end_of_a_users_range_is_a_lower_bound_unless_exact():
    # the certified range of n is contained in the true one when the error is an upper bound (or when
    # the computation stops, or at the searched range's end): its largest end is at least this, never "upper"
    rows = _results(["robust", "bitsum", "--target-error", "30", "--eps", "1", "--delta", "1e-6", "--protocol", "all"])
    for proto in ("lecture", "cheu2019", "bc20"):
        row = rows[f"{proto}: largest n meeting the target"]
        assert row["value"] == 10**12 and row["kind"] == "lower", row
    rows = _results(["robust", "distinct", "--target-error", "3000", "--universe", "1e9", "--hash-size", "1e5",
                     "--eps", "1", "--delta", "1e-6"])
    assert rows["largest n meeting the target"]["kind"] == "lower"  # alpha is an upper bound: may reach further
    assert rows["smallest n meeting the target"]["kind"] == "upper"


def test_largest_end_kind_by_case():
    from shuffle_accountant.plugins.robust.cli import _largest_kind

    def end(failing, err):
        return noise.UsersAnswer(100, failing, 1.0, err, 2.0, False, 3, "largest")

    assert _largest_kind(end(None, None), "exact")[0] == "lower"  # end of the searched range
    assert _largest_kind(end(101, None), "exact")[0] == "lower"  # the computation stops: not shown to miss
    assert _largest_kind(end(101, 2.5), "upper")[0] == "lower"  # an upper-bound error misses: the truth may not
    assert _largest_kind(end(101, 2.5), "exact")[0] == "exact"  # an exact error misses at the next n

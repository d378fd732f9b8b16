"""``robust pan-histogram`` and ``robust convert``: the pan-private histogram (Balcer, Cheu,
Joseph, Mao, SODA 2021, arXiv 2004.09481, Theorems 5.1-5.2) and the conversions of Lemmas
3.7 and 4.9.

Independent checks: the pan-private views (state at every intrusion time, with the output)
enumerated exactly with fractions/mpmath for a tiny stream and two bins; the trial solver
re-checked by the same enumeration (N meets, N - 1 does not); a seeded simulation of the
algorithm for its error; the distinct-elements conversion simulated with the protocol's
own noisy-OR bits and de-biasing analyzer; the converted uniformity tester simulated with m
stream samples and 2m uniform dummies.
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
from shuffle_accountant.plugins.robust import pan_histogram as ph
from shuffle_accountant.plugins.robust import structures
from shuffle_accountant.plugins.robust import uniformity as uni

# ---------------------------------------------------------------------------------------
# Pan-privacy by exact enumeration of the views
# ---------------------------------------------------------------------------------------


def _binom(trials: int, p: Fraction) -> list[Fraction]:
    return [Fraction(math.comb(trials, i)) * p**i * (1 - p) ** (trials - i) for i in range(trials + 1)]


def _views(stream: list[int], intrusion: int, trials: int, p: Fraction) -> dict:
    """Exact law of (state at time ``intrusion``, output) of the two-bin pan-private histogram:
    state = Z1 + counts of the first ``intrusion`` elements; output = all counts + Z1 + Z2."""
    law = _binom(trials, p)
    before = [0, 0]
    for x in stream[:intrusion]:
        before[x] += 1
    total = [0, 0]
    for x in stream:
        total[x] += 1
    out: dict = {}
    for z1 in itertools.product(range(trials + 1), repeat=2):
        for z2 in itertools.product(range(trials + 1), repeat=2):
            prob = law[z1[0]] * law[z1[1]] * law[z2[0]] * law[z2[1]]
            key = (before[0] + z1[0], before[1] + z1[1], total[0] + z1[0] + z2[0], total[1] + z1[1] + z2[1])
            out[key] = out.get(key, Fraction(0)) + prob
    return out


def _hockey(a: dict, b: dict, eps: float) -> float:
    mpmath.mp.dps = 40
    t = mpmath.exp(eps)
    total = mpmath.mpf(0)
    for key, pv in a.items():
        qv = b.get(key, Fraction(0))
        diff = mpmath.mpf(pv.numerator) / pv.denominator - t * mpmath.mpf(qv.numerator) / qv.denominator
        if diff > 0:
            total += diff
    return float(total)


def _pan_delta_by_enumeration(trials: int, p: Fraction, eps: float) -> float:
    stream = [0, 1]
    worst = 0.0
    for i in range(len(stream)):  # the differing element
        other = list(stream)
        other[i] = 1 - other[i]
        for t in range(len(stream) + 1):  # the intrusion time
            a, b = _views(stream, t, trials, p), _views(other, t, trials, p)
            worst = max(worst, _hockey(a, b, eps), _hockey(b, a, eps))
    return worst


@pytest.mark.parametrize("trials,p,eps", [(4, 0.5, 1.0), (4, 0.3, 0.5), (3, 0.5, 2.0)])
def test_pan_privacy_of_the_histogram_by_enumerating_every_view(trials, p, eps):
    r = ph.pan_histogram(2, eps, trials=trials, p=p)
    exact = _pan_delta_by_enumeration(trials, Fraction(p), eps)
    assert r.pan_delta_lower * (1 - 1e-9) <= exact <= r.pan_delta * (1 + 1e-9)
    # a single counter (Theorem 5.1) is strictly more private than two composed
    assert r.counter_pan_delta < r.pan_delta


def test_trial_solver_meets_and_one_less_does_not_by_enumeration():
    r = ph.pan_histogram(5, 1.0, 0.2, p=0.5)
    n_ok = r.trials
    assert _pan_delta_by_enumeration(n_ok, Fraction(1, 2), 1.0) <= 0.2 * (1 + 1e-12)
    assert _pan_delta_by_enumeration(n_ok - 1, Fraction(1, 2), 1.0) > 0.2
    assert r.details["one_less_trials"] == n_ok - 1


def test_trials_at_realistic_targets_are_certified_at_both_ends():
    r = ph.pan_histogram(1000, 1.0, 1e-6)
    assert r.trials == 148 and r.pan_delta <= 1e-6 < r.details["one_less_delta_lower"]
    assert r.worst_error == 148.0


# ---------------------------------------------------------------------------------------
# Error: seeded simulation of the algorithm
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("k,trials,p", [(50, 148, 0.5), (400, 60, 0.2)])
def test_simulated_error_of_the_pan_histogram(k, trials, p):
    r = ph.pan_histogram(k, 1.0, trials=trials, p=p)
    rng = np.random.default_rng(k + trials)
    reps = 4000
    stream = rng.integers(0, k, size=300)
    true = np.bincount(stream, minlength=k)
    z1 = rng.binomial(trials, p, size=(reps, k))  # state noise, before the stream
    z2 = rng.binomial(trials, p, size=(reps, k))  # added before the output
    release = true + z1 + z2 - 2 * trials * p
    err = release - true
    assert np.max(np.abs(err)) <= r.worst_error
    linf = np.max(np.abs(err), axis=1)
    assert linf.mean() <= r.linf_expected + 4 * linf.std() / math.sqrt(reps)
    assert linf.mean() >= 0.8 * r.linf_expected  # the upper bound is close, not vacuous
    per_bin = err[:, 0]
    assert abs(per_bin.std() - r.rmse_per_bin) < 5 * r.rmse_per_bin / math.sqrt(2 * reps)


# ---------------------------------------------------------------------------------------
# Lemma 3.7: distinct elements
# ---------------------------------------------------------------------------------------


def test_distinct_conversion_privacy_is_the_protocol_with_gamma_one_third():
    c = ph.convert_distinct(1000, 200, 1.0, 1e-6)
    direct = structures.distinct_elements(3000, 200, 1.0, 1e-6, gamma=1 / 3)
    assert c.details["honest_in_state"] == 1000 == direct.honest
    assert c.pan_delta == direct.total_delta <= 1e-6
    assert c.pan_rmse == direct.rmse_upper + 1


def test_distinct_conversion_error_by_simulating_the_protocol():
    m, k = 400, 300
    c = ph.convert_distinct(m, k, 1.0, 1e-6)
    proto = c.details["protocol"]
    p_central = proto["p_central"]
    rng = np.random.default_rng(37)
    reps = 3000
    stream = rng.integers(1, k, size=m)  # element 0 is the dummies' element; absent from the stream
    held = np.zeros(k, dtype=bool)
    held[stream] = True
    held[0] = True  # the 2m dummy executions all hold element 0
    truth = len(set(stream.tolist()))
    probs = np.where(held, 0.5, p_central)
    bits = rng.random((reps, k)) < probs  # the central noisy-OR answer per element (Theorem 3.3)
    estimate = (bits.sum(axis=1) - k * p_central) / (0.5 - p_central)
    rmse = math.sqrt(np.mean((estimate - truth) ** 2))
    assert rmse <= c.pan_rmse * (1 + 4 / math.sqrt(2 * reps))


# ---------------------------------------------------------------------------------------
# Lemma 4.9: uniformity
# ---------------------------------------------------------------------------------------


def test_converted_tester_moments_with_m_stream_and_2m_dummies():
    m, k = 150, 40
    t = uni.tester(3 * m, k, 0.4, 1.0, 1e-5, pan=True, groups_fixed=k)
    assert t.honest == m and t.n_stream == m
    dist = np.full(k, 1 / k)
    dist[0:k:2] *= 1.4
    dist[1:k:2] *= 0.6
    rng = np.random.default_rng(3)
    reps = 3000
    n, p = 3 * m, t.p
    counts = rng.multinomial(m, dist, size=reps) + rng.multinomial(2 * m, np.full(k, 1 / k), size=reps)
    c_hat = counts + rng.binomial(n, p, size=(reps, k)) - n * p
    s2 = n * p * (1 - p)
    q = np.full(k, 1 / k)
    stat = np.sum(c_hat * c_hat - c_hat - s2, axis=1) - 2 * (n - 1) * (c_hat @ q) + n * (n - 1) * (q @ q)
    mean, var = uni.exact_moments([(m, dist), (2 * m, q)], q, uni.NoiseMoments.binomial(n, p))
    assert abs(stat.mean() - mean) < 4 * math.sqrt(var / reps)
    assert abs(stat.var() - var) < 5 * var * math.sqrt(2 / reps)
    assert np.mean(stat <= t.errors.threshold) <= t.errors.far_error + 0.05


def test_converted_planner_meets_and_one_less_does_not():
    plan = uni.smallest_n(50, 0.5, 1.0, 1e-6, pan=True)
    m = plan.n // 3
    assert plan.n % 3 == 0 and plan.details["stream_length"] == m
    assert uni._meets(3 * m, 50, 0.5, 1.0, 1e-6, 1.0, 1 / 3, None, True)[0]
    assert not uni._meets(3 * (m - 1), 50, 0.5, 1.0, 1e-6, 1.0, 1 / 3, None, True)[0]
    # the pan-private tester needs more stream samples than the shuffle tester needs users
    assert m > uni.smallest_n(50, 0.5, 1.0, 1e-6).n


# ---------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------


def _run(args):
    return CliRunner().invoke(main, ["robust", *args])


def test_cli_pan_histogram_json():
    r = _run(["pan-histogram", "--k", "1000", "--eps", "1", "--delta", "1e-6", "--format", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    rows = {row["quantity"]: row for row in doc["results"]}
    assert rows["trials N of each draw Bin(N, p)"]["value"] == 148
    assert rows["pan-privacy delta(eps), histogram"]["kind"] == "upper"
    assert doc["summary"]["histogram"]["trials"] == 148


def test_cli_convert_distinct_and_uniformity():
    r = _run(["convert", "--problem", "distinct", "--k", "200", "--m", "1000", "--eps", "1", "--delta", "1e-6"])
    assert r.exit_code == 0, r.output and "pan-privacy delta(eps)" in r.output
    r = _run(["convert", "--problem", "uniformity", "--k", "40", "--alpha", "0.4", "--m", "150", "--eps", "1",
              "--delta", "1e-5", "--format", "json"])
    assert r.exit_code == 0, r.output
    rows = {row["quantity"]: row for row in json.loads(r.stdout)["results"]}
    assert rows["protocol executions n = 3m"]["value"] == 450


@pytest.mark.parametrize("args,flag", [
    (["pan-histogram", "--k", "1", "--eps", "1", "--delta", "1e-6"], "--k"),
    (["pan-histogram", "--k", "10", "--eps", "nan", "--delta", "1e-6"], "--eps"),
    (["pan-histogram", "--k", "10", "--eps", "1", "--delta", "1e-6", "--p", "1"], "--p"),
    (["pan-histogram", "--k", "10", "--eps", "1", "--delta", "1e-6", "--p", "-0.5"], "--p"),
    (["pan-histogram", "--k", "10", "--eps", "1", "--trials", "0"], "--trials"),
    (["pan-histogram", "--k", "10", "--eps", "1", "--trials", "1e13"], "--trials"),
    (["pan-histogram", "--k", "10", "--eps", "1"], "--delta"),
    (["pan-histogram", "--k", "10", "--eps", "1", "--delta", "1e-6", "--trials", "5"], "--delta"),
    (["convert", "--problem", "distinct", "--k", "10", "--eps", "1", "--delta", "1e-6"], "--m"),
    (["convert", "--problem", "uniformity", "--k", "10", "--eps", "1", "--delta", "1e-6"], "--alpha"),
    (["convert", "--problem", "uniformity", "--k", "10", "--alpha", "1.5", "--eps", "1", "--delta", "1e-6"], "--alpha"),
    (["convert", "--problem", "uniformity", "--k", "2", "--alpha", "0.9", "--eps", "1", "--delta", "1e-6"], "--alpha"),
    (["convert", "--problem", "distinct", "--k", "10", "--m", "0", "--eps", "1", "--delta", "1e-6"], "--m"),
    (["convert", "--problem", "distinct", "--k", "10", "--m", "1e300", "--eps", "1", "--delta", "1e-6"], "--m"),
    (["convert", "--problem", "sum", "--k", "10", "--m", "5", "--eps", "1", "--delta", "1e-6"], "--problem"),
])
def test_hostile_inputs_exit_2_with_one_line(args, flag):
    r = _run(args)
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2, r.output
    assert len(lines) == 1 and flag in lines[0], r.stderr
    assert r.stdout == ""

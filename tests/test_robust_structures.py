"""Histograms (two-counter composition), pan-private counter, distinct elements."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from shuffle_accountant.errors import CertificationError, InvalidParameter
from shuffle_accountant.plugins.robust import structures as sx
from shuffle_accountant.plugins.robust.noise import NoiseLaw, delta


@pytest.mark.parametrize("n,p", [(30, 0.3), (80, 0.05), (12, 0.5)])
@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0])
def test_two_counter_composition_matches_product_enumeration(n, p, eps):
    f = stats.binom.pmf(np.arange(n + 1), n, p)
    p1, q1 = np.concatenate(([0], f)), np.concatenate((f, [0]))
    P, Q = np.outer(p1, q1), np.outer(q1, p1)
    brute = np.clip(P - math.exp(eps) * Q, 0, None).sum()
    up, lo = sx.two_counter_delta(NoiseLaw("binomial", size=n, p=p), eps)
    assert lo - 1e-13 <= brute <= up + 1e-13


@pytest.mark.parametrize("eps", [0.3, 1.0])
def test_composition_between_one_counter_and_basic_composition(eps):
    law = NoiseLaw("binomial", size=10**5, p=4e-4)
    up, lo = sx.two_counter_delta(law, eps)
    assert lo >= delta(law, eps).upper  # two counters are never more private than one
    assert up <= 2 * delta(law, eps / 2).upper + 1e-15  # and never worse than basic composition


def test_histogram_solver_meets_composed_target():
    r = sx.histogram(100, 10**6, 1.0, 1e-6, gamma=0.8)
    assert r.delta_upper <= 1e-6
    bad = sx.two_counter_delta(NoiseLaw("binomial", size=r.honest, p=r.details["infeasible_neighbor"]), 1.0)
    assert bad[0] > 1e-6
    assert r.single_counter_delta < r.delta_upper


def test_expected_max_deviation_matches_enumeration():
    n, p, k = 10, 0.3, 3
    law = NoiseLaw("binomial", size=n, p=p)
    f = stats.binom.pmf(np.arange(n + 1), n, p)
    mu = n * p
    exact = sum(f[a] * f[b] * f[c] * max(abs(a - mu), abs(b - mu), abs(c - mu))
                for a, b, c in itertools.product(range(n + 1), repeat=3))
    got = sx.expected_max_deviation(law, k)
    assert exact <= got <= exact + 1e-9


def test_histogram_bad_input():
    with pytest.raises(InvalidParameter):
        sx.histogram(1, 100, 1.0, 1e-6)
    with pytest.raises(InvalidParameter):
        sx.histogram(10, 100, 1.0, None)
    with pytest.raises(CertificationError, match="too small"):
        sx.histogram(10, 30, 0.2, 1e-9)


def test_pan_private_counter_guarantees():
    r = sx.pan_counter(10**6, 1.0, 1e-6)
    assert r.state_delta <= 1e-6 and r.pan_delta == max(r.state_delta, r.increment_delta)
    assert r.output_delta <= r.state_delta  # the output carries both noises
    r2 = sx.pan_counter(10**4, 0.5, p=0.01)
    assert r2.output_delta <= r2.pan_delta


# ---------------------------------------------------------------------------------
# Distinct elements
# ---------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(m=st.integers(1, 9), num=st.integers(1, 49))
def test_mod2_identity_against_enumeration(m, num):
    p = Fraction(num, 100)
    parity_one = sum(
        (p ** sum(bits)) * ((1 - p) ** (m - sum(bits)))
        for bits in itertools.product((0, 1), repeat=m) if sum(bits) % 2 == 1
    )
    assert parity_one == (1 - (1 - 2 * p) ** m) / 2  # seed 000 Lemma 3.5, exactly
    assert sx.mod2_noise_probability(float(p), m) == pytest.approx(float(parity_one), rel=1e-12)


@pytest.mark.parametrize("q", [0.01, 0.2, 0.45, 0.5])
@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_noisy_or_composition_against_enumeration(q, eps):
    P = {(a, b): (0.5) * (q if b else 1 - q) for a in (0, 1) for b in (0, 1)}
    Q = {(a, b): (q if a else 1 - q) * 0.5 for a in (0, 1) for b in (0, 1)}
    t = math.exp(eps)
    brute = max(sum(max(0.0, P[o] - t * Q[o]) for o in P), sum(max(0.0, Q[o] - t * P[o]) for o in P))
    assert sx.noisy_or_delta(q, eps) == pytest.approx(brute, abs=1e-15)


def test_noise_bit_with_fewer_honest_users_is_less_noisy():
    p_user = 1e-4
    assert sx.mod2_noise_probability(p_user, 500) < sx.mod2_noise_probability(p_user, 1000)


def _fake_splitmix(h, sigma):
    return 12, "stub"


def test_distinct_elements_accounting(monkeypatch):
    monkeypatch.setattr(sx, "_splitmix", _fake_splitmix)
    full = sx.distinct_elements(10**5, 1000, 1.0, 1e-6, gamma=1.0)
    part = sx.distinct_elements(10**5, 1000, 1.0, 1e-6, gamma=0.5)
    for r in (full, part):
        assert r.total_delta <= 1e-6
        assert r.details["one_step_less_noise_delta"] > 1e-6
        assert r.messages_per_user == 1000 * 12
    # robustness costs noise: the design for half the users honest has a larger central p
    assert part.p_central > full.p_central and part.rmse_upper > full.rmse_upper
    # and the gamma = 1 design run with half honest users violates the target
    q_half = sx.mod2_noise_probability(full.p_user, part.honest)
    assert sx.noisy_or_delta(q_half, 1.0) + full.splitmix_delta > 1e-6


def test_distinct_elements_refuses_impossible(monkeypatch):
    monkeypatch.setattr(sx, "_splitmix", _fake_splitmix)
    with pytest.raises(CertificationError):
        sx.distinct_elements(10, 10, 1.0, 1e-6, gamma=0.1)
    with pytest.raises(CertificationError, match="split-and-mix alone"):
        sx.distinct_elements(10**4, 10, 1.0, 1e-6, sigma=10)


def test_distinct_elements_with_the_real_splitmix_bound():
    r = sx.distinct_elements(10**4, 100, 1.0, 1e-6)
    assert r.splitmix_messages >= 3 and r.total_delta <= 1e-6


def test_z2_fallback_matches_bbgn_formula():
    # m > (2 sigma + log2 q)/(log2 n - log2 e) + 1 with q = 2; m >= 3
    for h, sigma in [(10**4, 40), (100, 20), (10**9, 80), (5, 1)]:
        m = sx.bbgn_messages_z2(h, sigma)
        bound = (2 * sigma + 1) / (math.log2(h) - math.log2(math.e)) + 1
        assert m >= 3 and m > bound and (m - 1 <= bound or m == 3)
    with pytest.raises(CertificationError):
        sx.bbgn_messages_z2(2, 40)

"""Noise laws: exact delta(eps) against an mpmath brute force, solvers, robustness."""

from __future__ import annotations

import math
import time

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from shuffle_accountant.errors import CertificationError, InvalidParameter
from shuffle_accountant.plugins.robust import noise as nz

mp.mp.dps = 50


# ---------------------------------------------------------------------------------
# mpmath oracle: full sums over the support (50 digits), no scipy
# ---------------------------------------------------------------------------------


def _pmf_binomial(n, p):
    p = mp.mpf(p)
    return [mp.binomial(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)]


def _pmf_poisson(mu, top):
    mu = mp.mpf(mu)
    return [mp.e ** (-mu) * mu**k / mp.factorial(k) for k in range(top + 1)]


def _pmf_negbin(r, p, top):
    r, p = mp.mpf(r), mp.mpf(p)
    return [mp.gamma(k + r) / (mp.gamma(r) * mp.factorial(k)) * p**r * (1 - p) ** k for k in range(top + 1)]


def _oracle_delta(f, eps, offset=0):
    """max of both directions of sum_k (f(k) - e^eps f(k-1))_+ with f a list on offset.."""
    t = mp.e ** mp.mpf(eps)
    ext = [mp.mpf(0)] + list(f) + [mp.mpf(0)]
    fwd = sum(max(mp.mpf(0), ext[i] - t * ext[i - 1]) for i in range(1, len(ext)))
    bwd = sum(max(mp.mpf(0), ext[i - 1] - t * ext[i]) for i in range(1, len(ext)))
    return max(fwd, bwd)


@pytest.mark.parametrize("n,p", [(1, 0.3), (40, 0.05), (300, 0.02), (200, 0.5), (60, 0.97)])
@pytest.mark.parametrize("eps", [0.0, 0.05, 0.5, 1.0, 3.0])
def test_binomial_matches_mpmath(n, p, eps):
    exact = _oracle_delta(_pmf_binomial(n, p), eps)
    res = nz.delta(nz.NoiseLaw("binomial", size=n, p=p), eps)
    assert res.lower <= float(exact) * (1 + 1e-12) + 1e-300
    assert res.upper >= float(exact) * (1 - 1e-12)
    assert res.upper <= float(exact) * (1 + 1e-6) + 1e-300


@pytest.mark.parametrize("mu", [0.3, 8.0, 55.5])
@pytest.mark.parametrize("eps", [0.1, 0.7, 2.0])
def test_poisson_matches_mpmath(mu, eps):
    top = int(mu + 40 * math.sqrt(mu) + 80)  # remaining mass far below 1e-40
    exact = _oracle_delta(_pmf_poisson(mu, top), eps)
    res = nz.delta(nz.NoiseLaw("poisson", mean=mu), eps)
    assert res.lower <= float(exact) * (1 + 1e-12)
    assert float(exact) * (1 - 1e-12) <= res.upper <= float(exact) * (1 + 1e-6)


@pytest.mark.parametrize("r,p", [(3.5, 0.4), (0.6, 0.3), (1.0, 0.5), (20.0, 0.7)])
@pytest.mark.parametrize("eps", [0.1, 0.5, 1.5])
def test_negbin_matches_mpmath(r, p, eps):
    top = 1200
    exact = _oracle_delta(_pmf_negbin(r, p, top), eps)
    res = nz.delta(nz.NoiseLaw("negbin", size=r, p=p), eps)
    assert res.lower <= float(exact) * (1 + 1e-12)
    assert float(exact) * (1 - 1e-12) <= res.upper <= float(exact) * (1 + 1e-6)


@pytest.mark.parametrize("a,eps", [(0.5, 0.1), (1.0, 0.99), (2.0, 0.5), (1.0, 1.5)])
def test_dlap_closed_form_matches_sum(a, eps):
    a_m = mp.mpf(a)
    c = (1 - mp.e ** (-a_m)) / (1 + mp.e ** (-a_m))
    t = mp.e ** mp.mpf(eps)

    def f(k):
        return c * mp.e ** (-a_m * abs(k))

    # the law is defined on all integers: sum both directions on a wide range (tails < 1e-170)
    fwd = sum(max(mp.mpf(0), f(k) - t * f(k - 1)) for k in range(-400, 401))
    bwd = sum(max(mp.mpf(0), f(k - 1) - t * f(k)) for k in range(-400, 401))
    exact = max(fwd, bwd)
    up, lo = nz.dlap_delta(a, eps)
    assert lo <= float(exact) * (1 + 1e-12) + 1e-300 and up >= float(exact) * (1 - 1e-12)


def test_symmetric_negbin_window_matches_mpmath():
    r, p, eps = 0.5, 0.6, 0.4
    f = _pmf_negbin(r, p, 150)
    d = {}
    for i, fi in enumerate(f):
        for j, fj in enumerate(f):
            d[i - j] = d.get(i - j, 0) + fi * fj
    ks = sorted(d)
    exact = _oracle_delta([d[k] for k in range(ks[0], ks[-1] + 1)], eps)
    res = nz.delta(nz.NoiseLaw("dlap", size=r, p=p), eps)
    assert res.lower <= float(exact) * (1 + 1e-9) and res.upper >= float(exact) * (1 - 1e-9)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 400), p=st.floats(0.001, 0.999), eps=st.floats(0.0, 4.0))
def test_binomial_tail_formula_equals_full_sum(n, p, eps):
    f = stats.binom.pmf(np.arange(n + 1), n, p)
    ext = np.concatenate(([0.0], f, [0.0]))
    t = math.exp(eps)
    full = max(np.clip(ext[1:] - t * ext[:-1], 0, None).sum(), np.clip(ext[:-1] - t * ext[1:], 0, None).sum())
    res = nz.delta(nz.NoiseLaw("binomial", size=n, p=p), eps)
    assert res.lower - 1e-13 <= full <= res.upper + 1e-13


# ---------------------------------------------------------------------------------
# Solvers
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize("family", nz.LAWS)
@pytest.mark.parametrize("n,eps,target,gamma", [(10**4, 1.0, 1e-6, 1.0), (10**6, 0.3, 1e-9, 0.7), (10**9, 2.0, 1e-5, 0.5)])
def test_solver_meets_target_and_one_step_less_violates(family, n, eps, target, gamma):
    sol = nz.solve_noise(family, n, eps, target, gamma=gamma)
    h = nz.honest_count(n, gamma)
    if family == "dlap":
        ok = nz.dlap_delta(sol.value, eps)[0]
        bad = nz.dlap_delta(sol.infeasible_neighbor, eps)[1]
    else:
        ok = nz.delta(nz.honest_law(family, sol.value, h), eps).upper
        bad = nz.delta(nz.honest_law(family, sol.infeasible_neighbor, h), eps).lower
    assert ok <= target < bad
    # the neighbour is one relative step (1e-6) less noise
    if family == "dlap":
        assert sol.infeasible_neighbor > sol.value and sol.infeasible_neighbor / sol.value - 1 <= 1.01e-6
    else:
        assert sol.infeasible_neighbor < sol.value and 1 - sol.infeasible_neighbor / sol.value <= 1.01e-6


def test_impossible_target_is_refused():
    with pytest.raises(CertificationError, match="too few honest users"):
        nz.solve_noise("binomial", 20, 0.5, 1e-9, gamma=0.5)


def test_bad_family_and_parameters():
    with pytest.raises(InvalidParameter):
        nz.NoiseLaw("gauss")
    with pytest.raises(InvalidParameter):
        nz.NoiseLaw("binomial", size=10, p=1.5)
    with pytest.raises(InvalidParameter):
        nz.honest_count(10, 0.0)


def test_solver_fast_at_a_billion_users():
    start = time.perf_counter()
    sol = nz.solve_noise("binomial", 10**9, 1.0, 1e-6, gamma=0.9)
    assert time.perf_counter() - start < 2.0  # benchmark target is 0.1 s; generous for CI
    assert nz.delta(sol.law, 1.0).upper <= 1e-6


# ---------------------------------------------------------------------------------
# Robustness
# ---------------------------------------------------------------------------------


def test_honest_count_is_exact_ceiling():
    assert nz.honest_count(10, 0.3) == 3
    assert nz.honest_count(10**9, 1.0) == 10**9
    assert nz.honest_count(7, 0.5) == 4
    assert nz.honest_count(3, 0.01) == 1


@pytest.mark.parametrize("family,per_user", [("binomial", 0.002), ("poisson", 0.003), ("negbin", 0.004)])
@pytest.mark.parametrize("eps", [0.2, 1.0])
def test_fewer_honest_users_never_more_private(family, per_user, eps):
    n = 20000
    deltas = [nz.delta(nz.honest_law(family, per_user, nz.honest_count(n, g)), eps) for g in (1.0, 0.8, 0.5, 0.2, 0.05)]
    for more, fewer in zip(deltas, deltas[1:]):
        assert fewer.upper >= more.lower


@pytest.mark.parametrize("family", nz.LAWS)
def test_solver_needs_more_noise_per_user_when_gamma_drops(family):
    a = nz.solve_noise(family, 10**5, 1.0, 1e-7, gamma=1.0)
    b = nz.solve_noise(family, 10**5, 1.0, 1e-7, gamma=0.3)
    if family == "dlap":  # same central law, larger per-user shares
        assert b.details["per_user_shape"] >= a.details["per_user_shape"]
    else:
        assert b.value >= a.value


def test_dlap_designed_for_all_but_fewer_honest_is_worse():
    a, eps = 1.0, 0.5
    full = nz.dlap_delta(a, eps)[0]
    partial = nz.delta(nz.NoiseLaw("dlap", size=0.5, p=-math.expm1(-a)), eps)
    assert partial.lower > full

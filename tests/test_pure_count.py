"""Pure-DP counting (seed 004): Condition 7, optimiser, windowed max-divergence."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from shuffle_accountant.errors import CertificationError, InvalidParameter
from shuffle_accountant.plugins.pure import count as pc
from shuffle_accountant.plugins.robust.noise import dlap_variance

GRID = list(itertools.product([0.1, 0.5, 1.0, 2.0], [10**3, 10**6, 10**9], [0.1, 0.5]))


@pytest.mark.parametrize("eps,n,rho", GRID)
def test_condition7_holds_and_optimiser_never_needs_more_messages(eps, n, rho):
    rule = pc.theorem6(eps, n, rho)
    best = pc.optimise(eps, n, rho)
    assert rule.satisfies_condition7 and best.satisfies_condition7
    assert rule.eps_prime == pytest.approx(eps - 0.01 * rho * min(eps, 1.0))
    assert rule.q == pytest.approx(0.1 * rho * dlap_variance(eps) / n)
    target = (1 + rho) * dlap_variance(eps)
    assert best.mse_bound <= target
    if rule.mse_bound <= target:
        assert best.expected_messages(1) <= rule.expected_messages(1)


def test_theorem6_mse_can_exceed_its_target_via_lemma11():
    # Lemma 11's q^2 n(n-1) term is (0.1 rho Var)^2: for small eps it exceeds the budget
    rule = pc.theorem6(0.1, 10**6, 0.5)
    assert rule.mse_factor > 1.5


def test_condition7_detects_violations():
    ok = pc.theorem6(1.0, 10**4, 0.5)
    smaller_s = pc.PureParams(ok.eps, ok.n, ok.eps_prime, ok.q, ok.s - 1, ok.lam)
    smaller_lam = pc.PureParams(ok.eps, ok.n, ok.eps_prime, ok.q, ok.s, ok.lam * 0.999)
    assert not smaller_s.satisfies_condition7 and not smaller_lam.satisfies_condition7


def test_exact_expected_messages_against_distribution_means():
    p = pc.theorem6(1.0, 1000, 0.5)
    geo_share = stats.nbinom.mean(1.0 / p.n, 1 - math.exp(-p.eps_prime))  # NB(1/n, .) share of Geo
    flood_share = stats.poisson.mean(p.lam / p.n)
    expect = (1 - p.q) * (2 * p.s + 1) + 2 * geo_share + 2 * flood_share
    assert p.expected_messages(1) == pytest.approx(expect, rel=1e-12)
    assert p.expected_messages(0) == pytest.approx(expect - (1 - p.q), rel=1e-12)


def test_theorem6_refuses_tiny_n_and_bad_rho():
    with pytest.raises(CertificationError, match="too small"):
        pc.theorem6(0.01, 10, 0.5)
    with pytest.raises(InvalidParameter):
        pc.theorem6(1.0, 100, 0.7)


# ---------------------------------------------------------------------------------
# Windowed max-divergence
# ---------------------------------------------------------------------------------


def _brute_views(p: pc.PureParams):
    """Direct 2-D construction of the reduced views (one user + all noise), then max log-ratio."""
    ep, q, s, lam = p.eps_prime, p.q, p.s, p.lam
    w = int(lam + s + 30 * math.sqrt(lam) + 60 / ep) + 5
    flood = stats.poisson.pmf(np.arange(w), lam)
    geo = (1 - math.exp(-ep)) * np.exp(-ep * np.arange(w))
    base = np.zeros((w, w))
    for f in range(w):
        base[f:, f:] += flood[f] * np.outer(geo[: w - f], geo[: w - f])

    def view(x):
        shifted = np.zeros((w, w))
        shifted[s + x:, s:] = base[: w - s - x, : w - s]
        return q * base + (1 - q) * shifted

    keep = w - s - 40  # stay clear of the truncation edge
    a, b = view(1)[:keep, :keep], view(0)[:keep, :keep]
    return float(np.max(np.log(a / b))), float(np.max(np.log(b / a)))


@pytest.mark.parametrize("params", [
    pc.PureParams(1.0, 1, 0.6, 0.05, 6, 40.0),
    pc.PureParams(1.0, 1, 0.5, 0.2, 3, 10.0),
    pc.PureParams(0.7, 1, 0.4, 0.01, 9, 55.0),
])
def test_verify_matches_two_dimensional_brute_force(params):
    v = pc.verify(params)
    d10, d01 = _brute_views(params)
    assert v.divergence_1_0 == pytest.approx(d10, abs=1e-9)
    assert v.divergence_0_1 == pytest.approx(d01, abs=1e-9)


def test_verify_flags_parameters_that_violate_condition7():
    bad = pc.PureParams(0.65, 1, 0.6, 0.05, 6, 40.0)  # s and lambda far below Condition 7
    assert not bad.satisfies_condition7
    v = pc.verify(bad)
    assert not v.holds and v.max_divergence > 0.65


@pytest.mark.parametrize("eps,n", [(1.0, 10**4), (2.0, 100), (0.5, 10**3)])
def test_produced_parameters_pass_the_windowed_check(eps, n):
    for params in (pc.theorem6(eps, n, 0.5), pc.optimise(eps, n, 0.5)):
        v = pc.verify(params)
        assert v.holds and v.max_divergence <= eps
        assert v.mass_outside < 1e-30  # the window covers nearly all the mass
        assert v.limit_ratio < eps

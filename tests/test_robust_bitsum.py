"""Bit-sum protocols: paper rules vs exact solvers, randomized-response bracket."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from shuffle_accountant.errors import CertificationError, InvalidParameter
from shuffle_accountant.plugins.robust import bitsum as bs
from shuffle_accountant.plugins.robust.noise import NoiseLaw, delta


def _delta_of_bit_added(x, wp, eps):
    """Brute force: x + Bern(1 - wp) vs x + Bern(wp), both directions, full sums."""
    P, Q = np.zeros(len(x) + 1), np.zeros(len(x) + 1)
    P[1:] += (1 - wp) * x
    P[:-1] += wp * x
    Q[1:] += wp * x
    Q[:-1] += (1 - wp) * x
    t = math.exp(eps)
    return max(np.clip(P - t * Q, 0, None).sum(), np.clip(Q - t * P, 0, None).sum())


def _brute_mixture(m, theta, wp, eps):
    return _delta_of_bit_added(stats.binom.pmf(np.arange(m + 1), m, theta), wp, eps)


@pytest.mark.parametrize("m,theta,wp,eps", [(10, 0.5, 0.1, 0.5), (50, 0.03, 0.03, 0.3), (7, 0.5, 0.2, 1.0),
                                           (200, 0.5, 0.01, 0.2), (0, 0.5, 0.1, 0.5), (30, 0.2, 0.45, 0.05)])
def test_mixture_tail_formula_matches_brute_force(m, theta, wp, eps):
    up, lo = bs._mixture_tail_delta(np.array([float(m)]), theta, wp, eps)
    brute = _brute_mixture(m, theta, wp, eps)
    assert lo[0] - 1e-14 <= brute <= up[0] + 1e-14


def _rr_dataset_delta(h, w, eps, ones):
    """Exact delta of shuffled randomized response for one data set of the other users."""
    wp = w / 2
    a = stats.binom.pmf(np.arange(ones + 1), ones, 1 - wp)
    b = stats.binom.pmf(np.arange(h - ones), h - 1 - ones, wp)
    return _delta_of_bit_added(np.convolve(a, b), wp, eps)


@pytest.mark.parametrize("h,w,eps", [(40, 0.3, 0.5), (25, 0.6, 1.0), (60, 0.15, 0.3)])
def test_rr_bracket_contains_every_data_set(h, w, eps):
    up, lo = bs.rr_delta(h, w, eps)
    worst = max(_rr_dataset_delta(h, w, eps, ones) for ones in range(h))
    assert lo <= worst + 1e-13
    assert worst <= up + 1e-13
    # the lower end is attained by the all-zero data set
    assert lo == pytest.approx(_rr_dataset_delta(h, w, eps, 0), rel=1e-8)


GRID = list(itertools.product([10**4, 10**6, 10**9], [0.25, 0.5, 1.0], [1e-5, 1e-9], [1.0, 0.6]))


@pytest.mark.parametrize("n,eps,target,gamma", GRID)
@pytest.mark.parametrize("protocol", ["lecture", "bc20"])
def test_paper_rule_never_below_exact_and_both_printed(protocol, n, eps, target, gamma):
    try:
        plan = bs.bitsum_plan(protocol, n, eps, target, gamma)
    except CertificationError:
        pytest.skip("gamma n too small for this target")
    ex = plan.exact
    assert ex.value is not None and ex.delta_upper <= target
    if plan.rule.value is not None:
        assert plan.rule.value >= ex.value
        assert plan.rule.delta_upper <= target  # the published rule is sufficient
    else:
        assert plan.rule.note  # says why it is missing


@pytest.mark.parametrize("protocol", bs.PROTOCOLS)
def test_exact_solver_one_step_less_noise_violates(protocol):
    plan = bs.bitsum_plan(protocol, 10**5, 0.7, 1e-7, 0.8)
    h = plan.honest
    v = plan.exact.value
    less = v * (1 - 1e-6)
    if protocol == "cheu2019":
        assert bs.rr_delta(h, v, 0.7)[0] <= 1e-7 < bs.rr_delta(h, less, 0.7)[0]
    else:
        assert delta(NoiseLaw("binomial", size=h, p=v), 0.7).upper <= 1e-7
        assert delta(NoiseLaw("binomial", size=h, p=less), 0.7).lower > 1e-7 * (1 - 1e-9) or \
            delta(NoiseLaw("binomial", size=h, p=less), 0.7).upper > 1e-7


def test_bc20_and_lecture_exact_agree_by_mirror_symmetry():
    a = bs.bitsum_plan("lecture", 10**6, 1.0, 1e-6, 0.9)
    b = bs.bitsum_plan("bc20", 10**6, 1.0, 1e-6, 0.9)
    assert a.exact.value == pytest.approx(b.exact.value, rel=1e-12)
    # BC20's view is mirrored: its delta equals that of Bin(h, 1 - q)
    q = b.exact.value
    mirrored = delta(NoiseLaw("binomial", size=b.honest, p=1 - q), 1.0)
    assert mirrored.upper == pytest.approx(b.exact.delta_upper, rel=1e-6)


def test_rule_needs_tens_of_times_more_noise():
    plan = bs.bitsum_plan("lecture", 10**6, 1.0, 1e-6)
    assert plan.noise_ratio > 10


def test_robust_plan_uses_honest_users_and_is_never_better():
    full = bs.bitsum_plan("lecture", 10**5, 1.0, 1e-6, 1.0)
    part = bs.bitsum_plan("lecture", 10**5, 1.0, 1e-6, 0.5)
    assert part.honest == 50000
    assert part.exact.value >= full.exact.value
    # the gamma = 1 parameters run with only half the users honest violate the target
    d = delta(NoiseLaw("binomial", size=50000, p=full.exact.value), 1.0)
    assert d.upper > 1e-6


def test_impossible_targets_and_bad_input():
    with pytest.raises(CertificationError, match="gamma\\*n too small"):
        bs.bitsum_plan("lecture", 100, 0.5, 1e-9, 0.1)
    # randomized response is never impossible: with w = 1 every answer is a coin flip
    assert bs.bitsum_plan("cheu2019", 50, 0.2, 1e-9, 0.2).exact.delta_upper <= 1e-9
    with pytest.raises(InvalidParameter):
        bs.bitsum_plan("nope", 100, 0.5, 1e-6)
    with pytest.raises(InvalidParameter):
        bs.bitsum_plan("lecture", 100, -1.0, 1e-6)

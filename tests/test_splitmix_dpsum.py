"""The DP-summation plan: it re-checks to its own (ε, δ), its error terms are the
stated formulas, and the noise it prescribes is what the privacy argument needs."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import nbinom

from shuffle_accountant.errors import InvalidParameter
from shuffle_accountant.plugins.splitmix import bbgn_messages, bbgn_sigma, check_dp_sum_plan, dp_sum_plan


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(3, 10**9),
    eps=st.floats(0.01, 30.0),
    log_delta=st.floats(-60.0, -0.5),
    precision=st.one_of(st.none(), st.integers(1, 10**4)),
)
def test_plan_satisfies_its_own_target(n: int, eps: float, log_delta: float, precision: int | None) -> None:
    delta = 10.0**log_delta
    plan = dp_sum_plan(n, eps, delta, precision)
    eps_check, delta_check = check_dp_sum_plan(plan)
    assert eps_check <= eps and delta_check <= delta
    assert (plan.epsilon_check, plan.delta_check) == (eps_check, delta_check)
    # the plan's pieces fit together
    assert plan.q == 2**plan.bits_per_message > plan.n * plan.precision + 2 * plan.decode_margin
    assert plan.messages == bbgn_messages(n, plan.q, plan.sigma_target) >= 3
    assert plan.sigma_certified == bbgn_sigma(n, plan.messages, plan.q) >= plan.sigma_target
    assert plan.total_bits_per_user == plan.messages * plan.bits_per_message
    assert plan.mse_wrap <= 1e-3 * (plan.mse_rounding + plan.mse_noise) * (1 + 1e-12)
    assert plan.mse_total >= plan.mse_rounding + plan.mse_noise + plan.mse_wrap - 1e-12 * plan.mse_total


def test_default_precision_and_error_terms() -> None:
    n, eps = 10**4, 1.0
    plan = dp_sum_plan(n, eps, 1e-6)
    assert plan.precision == 100  # ceil(sqrt(n))
    assert plan.mse_rounding >= n / (4 * 100**2)
    a = plan.alpha
    assert a >= math.exp(-eps / plan.precision)
    assert plan.mse_noise >= 2 * a / ((1 - a) ** 2 * plan.precision**2)
    # with p = sqrt(n) the error is about 1/4 + 2/eps^2, independent of n
    assert 0.25 + 2 / eps**2 - 0.01 < plan.mse_total < 0.25 + 2 / eps**2 + 0.01


def test_discrete_laplace_noise_gives_epsilon_and_variance() -> None:
    """Direct summation of the discrete Laplace(alpha) pmf: variance 2a/(1-a)^2, and the
    privacy loss of a shift by the sensitivity p is at most the plan's epsilon."""
    plan = dp_sum_plan(50, 2.0, 1e-5, precision=4)
    p = plan.precision
    with mpmath.workdps(40):
        a = mpmath.mpf(plan.alpha)
        pmf = lambda k: (1 - a) / (1 + a) * a ** abs(k)  # noqa: E731
        kmax = int(200 / (1 - a))
        variance = mpmath.fsum(k * k * pmf(k) for k in range(-kmax, kmax + 1))
        assert abs(variance - 2 * a / (1 - a) ** 2) < mpmath.mpf(10) ** -20
        worst = max(pmf(k) / pmf(k + s) for k in range(-3 * p, 3 * p) for s in range(-p, p + 1))
        assert mpmath.log(worst) <= plan.epsilon


def test_polya_shares_sum_to_a_geometric() -> None:
    """The per-user noise the plan prescribes: n i.i.d. Polya(1/n, alpha) shares add up to
    a geometric, so their difference is discrete Laplace (convolution of scipy pmfs)."""
    plan = dp_sum_plan(3, 1.0, 1e-3, precision=2)
    n, a, size = plan.n, plan.alpha, 400
    assert f"Polya(r=1/{n}, alpha={a!r})" in plan.noise_per_user
    share = nbinom.pmf(np.arange(size), 1.0 / n, 1.0 - a)
    total = share
    for _ in range(n - 1):
        total = np.convolve(total, share)[:size]
    geometric = (1 - a) * a ** np.arange(size)
    assert np.allclose(total[:100], geometric[:100], rtol=1e-9, atol=0)


def test_more_messages_for_smaller_delta() -> None:
    loose, tight = dp_sum_plan(10**5, 1.0, 1e-3), dp_sum_plan(10**5, 1.0, 1e-30)
    assert tight.messages >= loose.messages and tight.sigma_target > loose.sigma_target


@pytest.mark.parametrize(
    "args",
    [(2, 1.0, 1e-6), (100, 0.0, 1e-6), (100, 1.0, 0.0), (100, 1.0, 1.0), (100, float("nan"), 1e-6), (100, 1.0, 1e-6, 0)],
)
def test_bad_inputs(args: tuple) -> None:
    with pytest.raises(InvalidParameter):
        dp_sum_plan(*args)

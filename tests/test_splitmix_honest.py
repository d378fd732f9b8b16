"""``splitmix dp-sum --honest-fraction``: the facts the gamma-honest plan rests on, checked
by computations that share no code with the plug-in.

* Security with corrupted parties equals security of the honest parties alone (GMPV
  EUROCRYPT'20 §1.1, after Ishai et al.): a brute force in exact fractions over every share
  vector, the adversary seeing the shuffled view *and* the corrupted parties' shares, against
  the package's exact routine for the honest parties only.
* Pólya shares calibrated for ``h`` users: ``h`` of them sum to a geometric law, ``k > h`` of
  them to that plus an independent negative binomial (exact rational power series).
* The error rows: a seeded Monte Carlo of the protocol's own analyzer (randomized rounding,
  Pólya shares, split and mix mod q, decoding) within four standard errors of the plan.
"""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction
from itertools import product

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shuffle_accountant.errors import InvalidParameter
from shuffle_accountant.plugins.splitmix import (
    bbgn_messages,
    bbgn_sigma,
    check_dp_sum_plan,
    dp_sum_plan,
    exact_distance,
    nb_tail_upper,
)

# ---------------------------------------------------------------------------------------
# Exact oracle: corrupted parties do not change the distance (fractions, brute force)
# ---------------------------------------------------------------------------------------


def _share_rows(x: int, m: int, q: int) -> list[tuple[int, ...]]:
    return [free + ((x - sum(free)) % q,) for free in product(range(q), repeat=m - 1)]


def _view_law(honest: tuple[int, ...], corrupt: tuple[int, ...], m: int, q: int) -> dict[tuple, Fraction]:
    """Law of (sorted multiset of all shares, the corrupted parties' shares in order)."""
    counts: Counter[tuple] = Counter()
    parties = [_share_rows(x, m, q) for x in honest + corrupt]
    for rows in product(*parties):
        known = tuple(rows[len(honest):])
        counts[(tuple(sorted(s for row in rows for s in row)), known)] += 1
    total = sum(counts.values())
    return {k: Fraction(c, total) for k, c in counts.items()}


def corrupted_distance(h: int, c: int, m: int, q: int) -> Fraction:
    """max over corrupted inputs and equal-sum honest inputs of the TV of the adversary's view."""
    best = Fraction(0)
    for corrupt in product(range(q), repeat=c):
        laws = {x: _view_law(x, corrupt, m, q) for x in product(range(q), repeat=h)}
        for a in laws:
            for b in laws:
                if a < b and sum(a) % q == sum(b) % q:
                    keys = set(laws[a]) | set(laws[b])
                    tv = sum(abs(laws[a].get(k, Fraction(0)) - laws[b].get(k, Fraction(0))) for k in keys) / 2
                    best = max(best, tv)
    return best


@pytest.mark.parametrize("h,c,m,q", [(2, 1, 2, 2), (2, 1, 2, 3), (3, 1, 2, 2), (2, 2, 2, 2), (2, 1, 3, 2)])
def test_security_with_corrupted_parties_is_security_of_the_honest_ones(h: int, c: int, m: int, q: int) -> None:
    with_corrupt = corrupted_distance(h, c, m, q)
    assert with_corrupt == exact_distance(h, m, q)
    assert with_corrupt > 0  # a non-trivial comparison


# ---------------------------------------------------------------------------------------
# Polya shares: exact power-series identities
# ---------------------------------------------------------------------------------------


def _nb_coefficients(r: Fraction, terms: int) -> list[Fraction]:
    """Coefficients of (1 - t)^(-r): (r)_k / k! (the NB(r, alpha) pmf over alpha^k (1-alpha)^r)."""
    out, c = [], Fraction(1)
    for k in range(terms):
        out.append(c)
        c = c * (r + k) / (k + 1)
    return out


def _convolve(a: list[Fraction], b: list[Fraction]) -> list[Fraction]:
    return [sum((a[i] * b[k - i] for i in range(k + 1)), Fraction(0)) for k in range(min(len(a), len(b)))]


@pytest.mark.parametrize("h", [3, 4, 7])
def test_h_polya_shares_sum_to_a_geometric_and_more_users_add_noise(h: int) -> None:
    terms = 25
    share = _nb_coefficients(Fraction(1, h), terms)
    total = share
    for _ in range(h - 1):
        total = _convolve(total, share)
    assert total == [Fraction(1)] * terms  # (1 - t)^-1: geometric, alpha^k (1 - alpha)
    for extra in (1, 2, h + 1):  # h + extra followers: geometric convolved with NB(extra/h)
        more = total
        for _ in range(extra):
            more = _convolve(more, share)
        assert more == _convolve([Fraction(1)] * terms, _nb_coefficients(Fraction(extra, h), terms))


# ---------------------------------------------------------------------------------------
# The wrap-around tail bound
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape,alpha,k", [(1.0, 0.9, 50), (2.0, 0.99, 600), (1.5, 0.9, 30), (10.0, 0.5, 40),
                                           (3.0, 0.999, 20000), (2.0, 0.9, 3)])
def test_nb_tail_upper_is_above_the_exact_tail(shape: float, alpha: float, k: int) -> None:
    with mpmath.workdps(40):
        a, r = mpmath.mpf(alpha), mpmath.mpf(shape)
        log_pmf = lambda j: (mpmath.loggamma(j + r) - mpmath.loggamma(j + 1) - mpmath.loggamma(r)  # noqa: E731
                             + j * mpmath.log(a) + r * mpmath.log(1 - a))
        below = mpmath.fsum(mpmath.exp(log_pmf(j)) for j in range(k))
        exact = 1 - below
        bound = nb_tail_upper(shape, alpha, k)
        assert bound >= exact * (1 - mpmath.mpf(10) ** -20)
        if shape == 1.0:
            assert abs(bound - a**k) <= mpmath.mpf(10) ** -30
        elif exact > mpmath.mpf(10) ** -300:
            assert bound <= 1000 * exact + mpmath.mpf(10) ** -300 or bound == 1  # Chernoff is not loose by much


# ---------------------------------------------------------------------------------------
# The plan
# ---------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(n=st.integers(10, 10**9), gamma=st.floats(0.05, 1.0), eps=st.floats(0.05, 20.0),
       log_delta=st.floats(-40.0, -1.0), sigma=st.one_of(st.none(), st.floats(1.0, 120.0)))
def test_gamma_plan_meets_its_target_over_the_honest_users(n: int, gamma: float, eps: float, log_delta: float,
                                                           sigma: float | None) -> None:
    h = math.ceil(Fraction(repr(gamma)) * n)
    if h < 3:
        with pytest.raises(InvalidParameter):
            dp_sum_plan(n, eps, 10.0**log_delta, honest_fraction=gamma, sigma=sigma)
        return
    plan = dp_sum_plan(n, eps, 10.0**log_delta, honest_fraction=gamma, sigma=sigma)
    assert plan.honest_users == h
    assert check_dp_sum_plan(plan) == (plan.epsilon_check, plan.delta_check)
    assert plan.epsilon_check <= eps and plan.delta_check <= plan.delta
    assert plan.sigma_target >= (sigma or 0.0)
    assert plan.messages == bbgn_messages(h, plan.q, plan.sigma_target)
    assert plan.sigma_certified == bbgn_sigma(h, plan.messages, plan.q) >= plan.sigma_target
    assert f"Polya(r=1/{h}," in plan.noise_per_user
    a, p = plan.alpha, plan.precision
    assert plan.mse_noise >= n / h * 2 * a / ((1 - a) ** 2 * p * p) * (1 - 1e-12)
    assert plan.mse_total_honest_only <= plan.mse_total
    assert plan.rmse_total >= math.sqrt(plan.mse_total) * (1 - 1e-15)
    assert plan.rmse_mean * n >= plan.rmse_total * (1 - 1e-15)


def test_fewer_honest_users_cost_noise_and_messages_but_not_privacy() -> None:
    full = dp_sum_plan(10**4, 1.0, 1e-6)
    half = dp_sum_plan(10**4, 1.0, 1e-6, honest_fraction=0.5)
    tenth = dp_sum_plan(10**4, 1.0, 1e-6, honest_fraction=0.1)
    assert full.honest_users == 10**4 and half.honest_users == 5000 and tenth.honest_users == 1000
    assert full.mse_noise < half.mse_noise < tenth.mse_noise
    assert half.mse_noise == pytest.approx(2 * full.mse_noise, rel=1e-12)
    assert tenth.mse_noise == pytest.approx(10 * full.mse_noise, rel=1e-12)
    assert full.messages <= half.messages <= tenth.messages
    for plan in (full, half, tenth):
        assert plan.epsilon_check <= 1.0 and plan.delta_check <= 1e-6
    # gamma = 1 is the plan without the option
    assert dp_sum_plan(10**4, 1.0, 1e-6, honest_fraction=1.0) == full


def test_sigma_floor_raises_messages() -> None:
    base = dp_sum_plan(10**6, 1.0, 1e-6)
    strong = dp_sum_plan(10**6, 1.0, 1e-6, sigma=80)
    assert strong.sigma_target == 80 and strong.sigma_certified >= 80 > base.sigma_target
    assert strong.messages > base.messages
    assert strong.delta_check < base.delta_check


@pytest.mark.parametrize("kwargs", [dict(honest_fraction=0.0), dict(honest_fraction=1.5), dict(honest_fraction=0.01),
                                    dict(sigma=0.0), dict(sigma=-1.0), dict(sigma=float("nan")), dict(sigma=2e6)])
def test_bad_gamma_and_sigma_are_refused(kwargs: dict) -> None:
    with pytest.raises(InvalidParameter):
        dp_sum_plan(100, 1.0, 1e-6, **kwargs)


# ---------------------------------------------------------------------------------------
# Seeded Monte Carlo of the protocol's analyzer
# ---------------------------------------------------------------------------------------


def simulate_squared_errors(plan, x: np.ndarray, followers: int, trials: int, seed: int) -> np.ndarray:
    """Run the protocol ``trials`` times with the first ``followers`` users (the others drop
    out): randomized rounding, Polya(1/h, alpha) shares Z - Z', split and mix mod q with the
    plan's messages, the analyzer's decoding; returns the squared errors of the sum."""
    rng = np.random.default_rng(seed)
    p, q, m, h, a = plan.precision, plan.q, plan.messages, plan.honest_users, plan.alpha
    xs = x[:followers]
    low = np.floor(p * xs)
    rounded = low + (rng.random((trials, followers)) < (p * xs - low))
    noise = (rng.negative_binomial(1.0 / h, 1.0 - a, size=(trials, followers))
             - rng.negative_binomial(1.0 / h, 1.0 - a, size=(trials, followers)))
    value = (rounded.astype(np.int64) + noise) % q
    shares = rng.integers(0, q, size=(trials, followers, m - 1), dtype=np.int64)
    last = (value - shares.sum(axis=2)) % q
    received = (shares.sum(axis=(1, 2)) + last.sum(axis=1)) % q  # the analyzer adds every message mod q
    margin = (q - plan.n * p - 1) // 2
    decoded = np.where(received >= q - margin, received - q, received) / p
    return (decoded - xs.sum()) ** 2


@pytest.mark.parametrize("n,gamma,eps,p,seed", [(30, 0.5, 1.0, 4, 1), (40, 1.0, 0.5, 6, 2), (25, 0.3, 2.0, 3, 3)])
def test_monte_carlo_error_of_the_analyzer_matches_the_plan(n: int, gamma: float, eps: float, p: int, seed: int) -> None:
    """Inputs with p x at a half-integer: rounding variance exactly 1/4, so the plan's
    terms are the exact MSE (wrap-around negligible); four standard errors of tolerance."""
    plan = dp_sum_plan(n, eps, 1e-6, precision=p, honest_fraction=gamma)
    x = (np.arange(n) % p + 0.5) / p
    trials = 40_000
    for followers, expected in ((n, plan.mse_total), (plan.honest_users, plan.mse_total_honest_only)):
        err = simulate_squared_errors(plan, x, followers, trials, seed)
        se = err.std(ddof=1) / math.sqrt(trials)
        assert abs(err.mean() - expected) <= 4 * se + plan.mse_wrap, (followers, err.mean(), expected, se)


def test_monte_carlo_error_is_below_the_plan_for_any_inputs() -> None:
    plan = dp_sum_plan(30, 1.0, 1e-6, precision=5, honest_fraction=0.5)
    x = np.random.default_rng(7).random(30)
    err = simulate_squared_errors(plan, x, 30, 40_000, 8)
    assert err.mean() <= plan.mse_total + 4 * err.std(ddof=1) / math.sqrt(err.size)

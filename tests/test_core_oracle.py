"""The fast path against the independent mpmath brute force of ``tests/oracle.py``.

The oracle enumerates the whole (a, b) grid from the definition of the pair (spec §1);
it shares no code with ``shuffle_accountant.numeric``. delta(eps) must be bracketed, the
bracket's midpoint must match to 1e-9 relative and its certified upper end to 1e-8; eps(delta) must never be below the oracle's exact value and
within the tolerance above it.
"""

from __future__ import annotations

import math

import mpmath
import pytest

import oracle
from shuffle_accountant import api
from shuffle_accountant.analyses import pair_for
from shuffle_accountant.numeric.clones import HockeyStick, epsilon_bracket

CASES_FAST = [(n, eps0) for n in (1, 2, 7, 40) for eps0 in (0.5, 2.0, 5.0)]
CASES_SLOW = [(n, eps0) for n in (90, 150, 300) for eps0 in (0.3, 1.0, 3.0)]


def oracle_pair(method: str, eps0: float, n: int, k: int | None = None):
    """The oracle's pair for a method, built from the spec table (and, for the krr upper
    bound, with the clone count revealed)."""
    e0 = mpmath.mpf(eps0)
    if method == "clones":
        return oracle.clone_pair(n, *oracle.clones_params(e0))
    if method == "stronger-clones":
        return oracle.clone_pair(n, *oracle.stronger_clones_params(e0))
    if method == "binary-rr-lower":
        return oracle.clone_pair(n, *oracle.binary_rr_params(e0))
    if method == "krr-lower":
        return oracle.clone_pair(n, *oracle.krr_params(e0, k))
    if method == "krr":
        return oracle.clone_pair_with_c(n, *oracle.krr_params(e0, k))
    raise AssertionError(method)


METHODS = [("clones", None), ("stronger-clones", None), ("binary-rr-lower", None),
           ("krr", 3), ("krr", 5), ("krr-lower", 3), ("krr-lower", 4)]


def check_delta(method: str, k: int | None, n: int, eps0: float) -> None:
    pair = oracle_pair(method, eps0, n, k)
    sp = pair_for(method, eps0, n, k)
    hs = HockeyStick(sp.pair)
    for eps in (0.0, eps0 / 7, eps0 / 3, 0.9 * eps0):
        exact = float(oracle.delta_exact(pair, mpmath.mpf(eps)))
        b = hs.bounds(eps, 1e-10)
        lo, up = sp.scale * b.lower, sp.scale * b.upper
        assert lo <= exact * (1 + 1e-12) + 1e-300, (method, n, eps0, eps, lo, exact)
        assert up >= exact * (1 - 1e-12) - 1e-300, (method, n, eps0, eps, up, exact)
        # the estimate is accurate to 1e-9; the certified upper end also carries the
        # pessimistic floating-point budget, which near eps0 (cancelling tails) is larger
        if exact >= 1e-30:  # the supported range; below it only the bracket is promised
            assert abs(0.5 * (lo + up) - exact) <= 1e-9 * exact, (method, n, eps0, eps, lo, up, exact)
        assert up - exact <= 1e-8 * exact + 1e-300, (method, n, eps0, eps, up, exact)


def check_epsilon(method: str, k: int | None, n: int, eps0: float) -> None:
    pair = oracle_pair(method, eps0, n, k)
    sp = pair_for(method, eps0, n, k)
    for delta in (1e-2, 1e-6):
        exact = float(oracle.epsilon_exact(pair, mpmath.mpf(delta)))
        if delta / sp.scale >= 1:
            continue
        br = epsilon_bracket(sp.pair, delta / sp.scale, 1e-6)
        assert br.lower <= exact * (1 + 1e-11) + 1e-15, (method, n, eps0, delta, br, exact)
        assert br.upper >= exact * (1 - 1e-11) - 1e-15, (method, n, eps0, delta, br, exact)
        assert br.upper <= exact * (1 + 1e-6) + 1e-12, (method, n, eps0, delta, br, exact)


@pytest.mark.parametrize("method,k", METHODS)
@pytest.mark.parametrize("n,eps0", CASES_FAST)
def test_delta_matches_oracle(method, k, n, eps0):
    check_delta(method, k, n, eps0)


@pytest.mark.parametrize("method,k", METHODS)
@pytest.mark.parametrize("n,eps0", CASES_FAST)
def test_epsilon_matches_oracle(method, k, n, eps0):
    check_epsilon(method, k, n, eps0)


@pytest.mark.slow
@pytest.mark.parametrize("method,k", METHODS)
@pytest.mark.parametrize("n,eps0", CASES_SLOW)
def test_delta_matches_oracle_large(method, k, n, eps0):
    check_delta(method, k, n, eps0)


@pytest.mark.slow
@pytest.mark.parametrize("method,k", METHODS[:4])
@pytest.mark.parametrize("n,eps0", CASES_SLOW[:6])
def test_epsilon_matches_oracle_large(method, k, n, eps0):
    check_epsilon(method, k, n, eps0)


def test_api_krr_upper_dominates_every_small_dataset():
    """The krr upper bound is at or above the exact delta of shuffled 3-RR on *every*
    dataset of 4 users (brute force over datasets, from the mechanism itself)."""
    n, k, eps0 = 4, 3, 1.0
    for eps in (0.1, 0.4, 0.8):
        bound = api.delta(eps0, n, eps, method="krr", k=k).value
        worst = 0.0
        import itertools

        for rest in itertools.combinations_with_replacement(range(k), n - 1):
            P = oracle.shuffled_rr_distribution((0,) + rest, mpmath.mpf(eps0), k)
            Q = oracle.shuffled_rr_distribution((1,) + rest, mpmath.mpf(eps0), k)
            worst = max(worst, float(oracle.hockey_stick(P, Q, mpmath.mpf(eps))), float(oracle.hockey_stick(Q, P, mpmath.mpf(eps))))
        assert bound >= worst * (1 - 1e-12), (eps, bound, worst)


def test_krr_lower_is_attained_by_a_dataset():
    """krr-lower equals the exact shuffled 3-RR delta of the dataset 'others hold 2'."""
    n, k, eps0 = 5, 3, 1.5
    P = oracle.shuffled_rr_distribution((0,) + (2,) * (n - 1), mpmath.mpf(eps0), k)
    Q = oracle.shuffled_rr_distribution((1,) + (2,) * (n - 1), mpmath.mpf(eps0), k)
    for eps in (0.2, 0.7):
        exact = max(float(oracle.hockey_stick(P, Q, mpmath.mpf(eps))), float(oracle.hockey_stick(Q, P, mpmath.mpf(eps))))
        got = api.delta(eps0, n, eps, method="krr-lower", k=k).value
        assert got <= exact * (1 + 1e-12)
        assert math.isclose(got, exact, rel_tol=1e-9)

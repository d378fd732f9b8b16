"""Closed-form split-and-mix bounds: soundness against the exact distance, the published
example, monotonicity, and internal consistency."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shuffle_accountant.errors import InvalidParameter
from shuffle_accountant.plugins.splitmix import (
    bbgn_messages,
    bbgn_sigma,
    exact_distance,
    honest_parties,
    lower_bound_distance,
    lower_bound_messages,
    messages_needed,
    security_bounds,
)


def bbgn_distance(n: int, m: int, q: int) -> Fraction:
    """A rational at or above the certified 2^-sigma: 2^-floor(sigma)."""
    return Fraction(1, 2 ** math.floor(bbgn_sigma(n, m, q)))


REACHABLE = [(n, m, 2) for n in (3, 5, 8, 13, 21) for m in (2, 3, 4, 6)] + [
    (n, m, 3) for n in (3, 6, 10) for m in (2, 3, 5)
] + [(4, 3, 4), (5, 3, 5), (3, 4, 7)]


@pytest.mark.parametrize("n,m,q", REACHABLE)
def test_bounds_bracket_the_exact_distance(n: int, m: int, q: int) -> None:
    exact = exact_distance(n, m, q)
    assert lower_bound_distance(n, m, q) <= exact
    # the certified sigma, taken exactly: 2^-sigma >= exact  <=>  sigma <= -log2(exact)
    sigma = bbgn_sigma(n, m, q)
    with mpmath.workdps(60):
        assert mpmath.mpf(sigma) <= -mpmath.log(mpmath.mpf(exact.numerator) / exact.denominator, 2)
    assert bbgn_distance(n, m, q) >= exact


def test_bbgn_is_not_vacuous_on_reachable_cases() -> None:
    """The comparison above must exercise the bound where it says something."""
    informative = [(n, m, q) for n, m, q in REACHABLE if bbgn_sigma(n, m, q) > 0]
    assert len(informative) >= 8


@pytest.mark.slow
@pytest.mark.parametrize("n,m,q", [(60, 5, 2), (120, 6, 2), (25, 4, 3), (12, 4, 4), (8, 3, 5)])
def test_bounds_bracket_the_exact_distance_larger(n: int, m: int, q: int) -> None:
    exact = exact_distance(n, m, q)
    assert lower_bound_distance(n, m, q) <= exact <= bbgn_distance(n, m, q)


def test_two_messages_certify_nothing_but_exact_is_large() -> None:
    for n in (5, 10, 20):
        assert bbgn_sigma(n, 2, 3) == 0.0
        assert exact_distance(n, 2, 3) > Fraction(1, 2)


def test_abstract_example_of_balle_et_al() -> None:
    """arXiv 1909.11225 abstract: 32-bit inputs, n = 10^4 parties, 12 messages, 2^-40."""
    n, q = 10**4, 10**4 * 2**32  # q >= n 2^32 so that the sum of n 32-bit inputs does not wrap
    assert bbgn_messages(n, q, 40) == 12
    assert bbgn_sigma(n, 12, q) >= 40 > bbgn_sigma(n, 11, q)


def test_sigma_and_messages_are_inverse() -> None:
    for n, q, sigma in [(3, 2, 1.0), (100, 2**20, 30.0), (10**6, 2**64, 80.0), (10**12, 3, 0.5)]:
        m = bbgn_messages(n, q, sigma)
        assert bbgn_sigma(n, m, q) >= sigma
        assert m == 3 or bbgn_sigma(n, m - 1, q) < sigma


def test_bbgn_needs_n_above_e() -> None:
    for n in (1, 2):
        with pytest.raises(InvalidParameter, match="n > e"):
            bbgn_messages(n, 7, 10)
        assert bbgn_sigma(n, 20, 7) == 0.0


def test_lower_bound_messages_is_a_threshold() -> None:
    for n, q, sigma in [(3, 2, 5.0), (50, 3, 40.0), (10**4, 2**46, 40.0)]:
        m = lower_bound_messages(n, q, sigma)
        with mpmath.workdps(50):
            def log_lb(k: int) -> mpmath.mpf:
                d = lower_bound_distance(n, k, q)
                return -mpmath.log(mpmath.mpf(d.numerator) / d.denominator, 2)
            assert log_lb(m) >= sigma
            assert m == 1 or log_lb(m - 1) < sigma


def test_honest_parties_reads_the_decimal() -> None:
    assert honest_parties(30, 0.1) == 3
    assert honest_parties(10, 0.3) == 3
    assert honest_parties(7, 1.0) == 7
    assert honest_parties(3, 0.01) == 1


def test_only_honest_parties_count() -> None:
    full = messages_needed(1000, 40.0, 2**32)[0].value
    half = messages_needed(1000, 40.0, 2**32, honest_fraction=0.5)
    assert half[0].inputs["honest_parties"] == 500
    assert half[0].value == bbgn_messages(500, 2**32, 40.0) >= full
    assert half[0].warnings


def test_records_are_labelled() -> None:
    kinds = [b.kind for b in security_bounds(100, 6, 2**16)]
    assert kinds == ["upper", "lower", "not applicable"]
    kinds = [b.kind for b in messages_needed(100, 20.0, 2**16)]
    assert kinds == ["upper", "lower", "not applicable"]


@settings(max_examples=150, deadline=None)
@given(
    n=st.integers(3, 10**12 - 10**6),
    dn=st.integers(0, 10**6),
    q=st.integers(2, 2**200),
    dq=st.integers(0, 2**64),
    sigma=st.floats(0.01, 2000),
    ds=st.floats(0, 100),
)
def test_messages_monotone(n: int, dn: int, q: int, dq: int, sigma: float, ds: float) -> None:
    """Messages needed: non-increasing in n, non-decreasing in sigma and q (both bounds)."""
    for f in (bbgn_messages, lower_bound_messages):
        base = f(n, q, sigma)
        assert f(n + dn, q, sigma) <= base
        assert f(n, q, sigma + ds) >= base
        assert f(n, q + dq, sigma) >= base


@settings(max_examples=100, deadline=None)
@given(n=st.integers(3, 10**9), m=st.integers(1, 200), q=st.integers(2, 2**100))
def test_lower_bound_never_exceeds_upper(n: int, m: int, q: int) -> None:
    lower = lower_bound_distance(n, m, q)
    sigma = bbgn_sigma(n, m, q)
    with mpmath.workdps(60):
        assert mpmath.mpf(lower.numerator) / lower.denominator <= mpmath.power(2, -mpmath.mpf(sigma))

"""Tests of the certified privacy-blanket bound for shuffled k-RR and of its attained lower
bounds (``shuffle_accountant/numeric/blanket_krr.py``; issue 10, spec ``blanket.md``).

Independent references: ``tests/oracle_blanket.py`` (mpmath brute force that shares no code
with the package) and a small mpmath sum written here.
"""

from __future__ import annotations

import math

import mpmath
import pytest

from shuffle_accountant.numeric.blanket_krr import KrrBlanket

import oracle_blanket as ob

# (n, k, eps0, eps): small cases for exact sums (every branch of the engine is exercised:
# n = 1 and 2 corners, k = 3 and k >= 4, small and large eps)
SMALL = [
    (1, 3, 1.0, 0.3),
    (2, 3, 1.0, 0.7),
    (3, 4, 0.5, 0.1),
    (5, 3, 2.0, 0.5),
    (8, 5, 1.0, 0.2),
    (12, 3, 3.0, 1.0),
    (20, 7, 1.5, 0.4),
]


@pytest.mark.parametrize("n, k, eps0, eps", SMALL)
def test_bracket_contains_trinomial_formula(n: int, k: int, eps0: float, eps: float) -> None:
    exact = ob.blanket_delta_krr_formula(n, k, eps0, eps)
    b = KrrBlanket(n, k, eps0).bounds(eps, 1e-9)
    with mpmath.workdps(50):
        assert b.lower <= exact <= b.upper, (b, exact)
        assert b.upper - b.lower <= 1e-8 * exact + 1e-300


# Soundness over every pair of neighbouring datasets (oracle enumeration, full histograms).
WORST_FAST = [(2, 3, 1.0, 0.7), (4, 3, 1.0, 0.2), (5, 4, 0.5, 0.1), (6, 3, 3.0, 1.0), (3, 2, 1.0, 0.3)]


@pytest.mark.parametrize("n, k, eps0, eps", WORST_FAST)
def test_blanket_upper_bounds_every_dataset(n: int, k: int, eps0: float, eps: float) -> None:
    worst = ob.krr_worst_delta(n, k, eps0, eps)
    up = KrrBlanket(n, k, eps0).bounds(eps, 1e-6).upper
    with mpmath.workdps(50):
        assert worst <= up, (worst, up)


@pytest.mark.slow
@pytest.mark.parametrize("k", [2, 3, 4])
@pytest.mark.parametrize("eps0", [0.3, 1.0, 3.0])
def test_blanket_upper_bounds_every_dataset_sweep(k: int, eps0: float) -> None:
    for n in (1, 2, 3, 5, 8, 12) if k < 4 else (1, 2, 3, 5, 8, 10):
        prof = KrrBlanket(n, k, eps0)
        for frac in (0.02, 0.1, 0.3, 0.6, 0.9):
            eps = frac * eps0
            worst = ob.krr_worst_delta(n, k, eps0, eps)
            up = prof.bounds(eps, 1e-6).upper
            with mpmath.workdps(50):
                assert worst <= up, (n, k, eps0, eps, worst, up)


# ---------------------------------------------------------------------------------------
# attained lower bounds
# ---------------------------------------------------------------------------------------

from shuffle_accountant.numeric.blanket_krr import (  # noqa: E402
    ALL_X1_MAX_N,
    FAMILY_SCAN_MAX_N,
    KrrDatasetLower,
    _Engine,
    dataset_model,
    krr_dataset_lower,
)


@pytest.mark.parametrize("n, k, eps0, eps", [(10, 4, 1.0, 0.3), (12, 5, 2.0, 0.6), (16, 4, 1.0, 0.2)])
def test_third_value_dataset_engine_matches_oracle(n: int, k: int, eps0: float, eps: float) -> None:
    """The engine on the "all others hold a third value" dataset (k >= 4) brackets the exact
    full-histogram value of that dataset."""
    b = _Engine(dataset_model(n, k, eps0)).bounds(eps, 1e-7)
    exact = ob.krr_family_delta(n, k, eps0, eps, 0)
    with mpmath.workdps(50):
        assert b.lower <= exact <= b.upper
        assert b.upper - b.lower <= 2e-7 * exact


@pytest.mark.parametrize("n, k, eps0, eps", [(5, 2, 1.0, 0.3), (6, 3, 1.0, 0.3), (8, 4, 1.0, 0.2),
                                              (7, 3, 3.0, 2.5), (9, 2, 0.5, 0.05)])
def test_dataset_lower_is_attained_and_below_worst_case(n: int, k: int, eps0: float, eps: float) -> None:
    r = krr_dataset_lower(n, k, eps0, eps)
    worst = ob.krr_worst_delta(n, k, eps0, eps)
    with mpmath.workdps(50):
        assert r.lower <= worst
        assert r.lower >= worst * (1 - 1e-9) or r.lower > 0  # attained (equal here) and positive
    # the reported value is the exact value of the dataset it names
    if k == 2:
        m = int(r.dataset.split(";")[1].split()[0])
        exact = ob.binary_rr_family_delta(n, eps0, eps, m)
    else:
        a = int(r.dataset.split()[2])
        exact = ob.krr_family_delta(n, k, eps0, eps, a)
    with mpmath.workdps(50):
        assert r.lower <= exact <= r.upper


def test_binary_scan_beats_all_same_value_dataset() -> None:
    """Issue 10: n = 1e3, eps0 = 1, delta = 1e-8: m = 1 gives 0.1629468 (eps) vs 0.1628442 for
    the all-same-value dataset (m = 0)."""
    from shuffle_accountant.numeric.search import epsilon_for_delta

    br = epsilon_for_delta(KrrDatasetLower(1000, 2, 1.0), 1e-8, 1e-7)
    assert br.lower == pytest.approx(0.1629468, abs=2e-7)

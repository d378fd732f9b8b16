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

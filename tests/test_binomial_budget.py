"""The core's per-value binomial error budgets (numeric/binomial.py) cover Boost's measured
error: the pmf budget everywhere, plus n*u only on Boost's ``y = 1 - p`` series path.

The 40-digit references are those of tests/test_fp.py (exact-ratio sums, independent of
Boost); the points include the series path, its neighbourhood, the bulk and deep tails.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from test_fp import MARGIN, _binomial_cases, _rel, ref_pmf, ref_tail

from shuffle_accountant.numeric import binomial as bn


def _measure(n: int, p: float, k: int) -> list[tuple[str, float, float]]:
    """(name, measured relative error, budget) for pmf, cdf, sf at one point."""
    mean = n * p
    small = ref_tail("binomial", k, n, p, upper=k >= mean)
    refs = {"sf": small, "cdf": 1 - small} if k >= mean else {"cdf": small, "sf": 1 - small}
    got = {"cdf": float(bn.cdf(np.array([k]), n, p)[0]), "sf": float(bn.sf(np.array([k]), n, p)[0])}
    rows = [("pmf", _rel(float(bn.pmf(np.array([k]), n, p)[0]), ref_pmf("binomial", k, n, p)), bn.pmf_error_budget(n))]
    tail = float(bn.tail_error_budget(np.array([k]), n, p)[0])
    rows += [(name, _rel(got[name], ref), tail) for name, ref in refs.items() if ref > 1e-300]
    return rows


def _check(points: list[tuple[int, float, int]]) -> None:
    worst = max(((name, n, p, k, err, budget) for n, p, k in points for name, err, budget in _measure(n, p, k)),
                key=lambda r: r[4] / r[5])
    name, n, p, k, err, budget = worst
    assert err * MARGIN <= budget, f"{name}(k={k}; n={n}, p={p}): measured {err:.3g} > budget {budget:.3g} / {MARGIN}"


def test_budgets_cover_the_measured_error_on_and_off_the_series_path() -> None:
    _check([(n, p, k) for n, p, k in _binomial_cases()])


@pytest.mark.parametrize("seed", range(3))
def test_budgets_cover_random_points(seed: int) -> None:
    rng = random.Random(100 + seed)
    points = []
    for _ in range(20):
        n = int(10 ** rng.uniform(3, 9.5))
        lam = 10 ** rng.uniform(0, 3.5)
        k = max(0, math.floor(lam + rng.uniform(-4, 25) * math.sqrt(lam)))
        if k < n:
            points.append((n, lam / n, k))
    _check(points)


def test_series_path_is_charged_and_the_fair_split_is_not() -> None:
    n = 10**9
    on = bn.tail_error_budget(np.array([1.0, 5e8]), n, 3e-9)
    assert on[0] >= 2 * n * 2.0**-53 and on[1] == bn.pmf_error_budget(n)
    fair = bn.tail_error_budget(np.array([1.0]), n, 0.5)  # 1 - 1/2 is exact: no rounding of y
    assert fair[0] == bn.pmf_error_budget(n)
    assert bn.tail_error_budget(np.array([1.0]), 3 * 10**9 * 2, 1e-9)[0] == bn.pmf_error_budget(6e9)


def test_masked_fast_path_and_merge_sorted() -> None:
    """The in-support fast path of the Boost wrappers returns what the masked path does (edge
    values outside the support included), and merge_sorted inserts keys and values in order."""
    from shuffle_accountant.numeric import binomial as bn

    k = np.array([0.0, 3.0, 10.0, 20.0])
    for fn, ref in ((bn.pmf, lambda kk: bn._binom_pmf(kk, 20.0, 0.3)), (bn.sf, lambda kk: bn._binom_sf(kk, 20.0, 0.3)),
                    (bn.cdf, lambda kk: bn._binom_cdf(kk, 20.0, 0.3))):
        inside = k[:3]
        assert np.array_equal(fn(inside, 20, 0.3), ref(inside))
    assert bn.sf(np.array([20.0, -1.0]), 20, 0.3).tolist() == [0.0, 1.0]
    assert bn.cdf(np.array([20.0, -1.0]), 20, 0.3).tolist() == [1.0, 0.0]
    assert bn.pmf(np.array([21.0, -1.0]), 20, 0.3).tolist() == [0.0, 0.0]
    keys, (vals,) = bn.merge_sorted(np.array([1.0, 4.0, 9.0]), np.array([0.0, 5.0, 10.0]),
                                    [(np.array([10.0, 40.0, 90.0]), np.array([0.5, 50.0, 100.0]))])
    assert keys.tolist() == [0.0, 1.0, 4.0, 5.0, 9.0, 10.0]
    assert vals.tolist() == [0.5, 10.0, 40.0, 50.0, 90.0, 100.0]

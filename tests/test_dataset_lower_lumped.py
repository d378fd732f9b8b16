"""The third-value dataset with the reports that hit ``x3`` lumped
(``dataset_lower.LumpedThirdDataset``; issue 10 item 3, method ``dataset-lower``).

Independent reference: the oracle's full randomizer matrix (``tests/oracle_blanket.py``) is
post-processed column by column into the lumped classes ("hits x3", else the hit pattern at
``(x1, x1')``), and the exact divergence of the shuffled lumped reports is computed by the
oracle's brute force over histograms. Nothing of the package's formula is used, so a wrong
class law, ratio or constant in the package fails here.
"""

from __future__ import annotations

import math

import mpmath
import pytest

import oracle_blanket as ob
from shuffle_accountant import api
from shuffle_accountant.numeric import dataset_lower as dl
from shuffle_accountant.numeric.blanket_matrix import BlanketProfile
from shuffle_accountant.numeric.dataset_lower import DatasetLowerProfile, LumpedThirdDataset, ProductDataset
from shuffle_accountant.randomizers import make_randomizer


def _lumped_matrix(full: list, hits, x1: int, x2: int, x3: int) -> list:
    """Columns of ``full`` grouped into "hits x3" and the four hit patterns of ``(x1, x2)``
    (summed at the oracle's precision)."""
    with mpmath.workdps(ob.DPS):
        return [_lumped_row(row, hits, x1, x2, x3) for row in full]


def _lumped_row(row: list, hits, x1: int, x2: int, x3: int) -> list:
    cls = [mpmath.mpf(0)] * 5
    for col, pr in enumerate(row):
        if hits(col, x3):
            cls[4] += pr
        else:
            cls[2 * hits(col, x1) + hits(col, x2)] += pr
    return cls


def _unary_hits(k: int):
    outs = ob.sue_outputs(k)
    return lambda col, x: int(outs[col][x] == 1)


def _olh_hits(k: int, g: int):
    outs = ob.olh_outputs(k, g)
    return lambda col, x: int(outs[col][0][x] == outs[col][1])


def _hadamard_hits(k: int):
    _, sets = ob.hadamard_sets(k)
    members = [set(c) for c in sets]
    return lambda col, x: int(col in members[x])


# (name, params, oracle matrix, hit function, x3 outside the span for Hadamard)
CASES = [
    ("oue", {"k": 3}, lambda e: ob.oue_matrix(3, e), _unary_hits(3), 2),
    ("sue", {"k": 3}, lambda e: ob.sue_matrix(3, e), _unary_hits(3), 2),
    ("olh", {"k": 3, "g": 2}, lambda e: ob.olh_matrix(3, 2, e), _olh_hits(3, 2), 2),
    ("olh", {"k": 3, "g": 4}, lambda e: ob.olh_matrix(3, 4, e), _olh_hits(3, 4), 2),  # p < 1/2: 1 - p > 1/2
    ("hadamard", {"k": 4}, lambda e: ob.hadamard_matrix(4, e), _hadamard_hits(4), 3),
]


def _lumped_of(prof: DatasetLowerProfile) -> LumpedThirdDataset:
    found = [d for d in prof.datasets if isinstance(d, LumpedThirdDataset)]
    assert len(found) == 1, [d.label for d in prof.datasets]
    return found[0]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-" + "-".join(f"{k}{v}" for k, v in c[1].items()))
@pytest.mark.parametrize("eps0", [0.7, 2.5])
@pytest.mark.parametrize("n", [1, 2, 5, 9])
def test_lumped_bracket_contains_the_oracle_value(case: tuple, eps0: float, n: int) -> None:
    """The bracket holds the exact divergence of the lumped reports (oracle, 50 digits), is
    tight, and stays below the exact value of the unlumped third-value dataset."""
    name, params, build, hits, x3 = case
    full = build(eps0)
    lumped = _lumped_matrix(full, hits, 0, 1, x3)
    d = _lumped_of(DatasetLowerProfile(make_randomizer(name, eps0, **params), n))
    for eps in (0.0, 0.2 * eps0, 0.6 * eps0, 0.95 * eps0):
        lo, hi = d.bracket(eps)
        with mpmath.workdps(50):
            exact = ob.dataset_delta(lumped, [x3] * (n - 1), 0, 1, eps)
            assert lo <= exact <= hi, (eps, lo, exact, hi)
            assert hi - lo <= 1e-9 * exact + 1e-300, (eps, lo, exact, hi)
            if len(full[0]) ** min(n - 1, 3) <= 5000 and n <= 4:  # the unlumped histograms stay few
                unlumped = ob.dataset_delta(full, [x3] * (n - 1), 0, 1, eps)
                assert exact <= unlumped * (1 + mpmath.mpf(10) ** -30)


def _mp_lumped(n: int, p: float, q: float, eps: float) -> mpmath.mpf:
    """(1/n) sum over every (m, c1, c2) of the lumped integrand, directly from the class laws
    (not the package's closed form): m reports miss x3, c1 / c2 of them hit x1 / x1'."""
    with mpmath.workdps(40):
        p_, q_, g = mpmath.mpf(p), mpmath.mpf(q), mpmath.exp(mpmath.mpf(eps))
        a = {1: p_ / q_, 0: (1 - p_) / (1 - q_)}
        beta0 = (1 - q_) / (1 - p_)
        tot = mpmath.mpf(0)
        for m in range(n + 1):
            wm = mpmath.binomial(n, m) * (1 - p_) ** m * p_ ** (n - m)
            bq = [mpmath.binomial(m, c) * q_**c * (1 - q_) ** (m - c) for c in range(m + 1)]
            for c1 in range(m + 1):
                for c2 in range(m + 1):
                    # per report: hits x3 -> (q - g q)/p; misses -> beta0 (alpha(b1) - g alpha(b2))
                    v = (n - m) * (q_ - g * q_) / p_ + beta0 * (
                        c1 * a[1] + (m - c1) * a[0] - g * (c2 * a[1] + (m - c2) * a[0]))
                    if v > 0:
                        tot += wm * bq[c1] * bq[c2] * v
        return tot / n


@pytest.mark.parametrize("p, q", [(0.5, 0.2), (0.8, 0.2), (0.3, 0.1), (0.95, 0.5)])
@pytest.mark.parametrize("n", [12, 40])
def test_lumped_kernel_against_direct_sum(p: float, q: float, n: int) -> None:
    """Windows, both tail forms and the weights of the vectorised sum, against a direct
    40-digit triple sum at sizes where the windows clip and where they do not."""
    d = LumpedThirdDataset(n, p, q, 1 - p, 1 - q, p - q, 4 * 2.0**-53, "test")
    for eps in (0.0, 0.15, 0.9):
        lo, hi = d.bracket(eps)
        exact = _mp_lumped(n, p, q, eps)
        with mpmath.workdps(40):
            assert lo <= exact <= hi, (eps, lo, exact, hi)
            assert hi - lo <= 1e-9 * exact + 1e-300


@pytest.mark.parametrize("name, params", [("oue", {"k": 10}), ("sue", {"k": 10}), ("olh", {"k": 10})])
def test_lumped_raises_the_attained_eps_at_large_eps0(name: str, params: dict, monkeypatch) -> None:
    """Where the lumped dataset fires (eps0 = 4, n = 100) the attained lower bound rises above
    the projection's (same code with the lumped dataset switched off) and stays below the
    certified blanket upper bound. (Hadamard response: its xor dataset already attains the
    blanket to 0.01 %, module docstring §2.)"""
    eps0, n = 4.0, 100
    r = make_randomizer(name, eps0, **params)
    with_lumped = api.epsilon(eps0, n, 1e-6, method="dataset-lower", randomizer=r)
    blanket = api.epsilon(eps0, n, 1e-6, method="blanket", randomizer=r)
    monkeypatch.setattr(dl, "LUMPED_MAX_POINTS", 0)
    without = api.epsilon(eps0, n, 1e-6, method="dataset-lower", randomizer=make_randomizer(name, eps0, **params))
    assert with_lumped.kind == "lower"
    assert with_lumped.value > without.value * 1.05, (with_lumped.value, without.value)
    assert with_lumped.value <= blanket.value


@pytest.mark.parametrize("name", ["oue", "olh"])
@pytest.mark.parametrize("eps0, n", [(2.0, 30), (4.0, 60), (1.0, 200)])
def test_profile_with_lumped_stays_below_blanket(name: str, eps0: float, n: int) -> None:
    r = make_randomizer(name, eps0, k=10)
    prof = DatasetLowerProfile(r, n)
    blanket = BlanketProfile(r, n)
    for f in (0.05, 0.2, 0.5, 0.9):
        b = prof.bounds(f * eps0)
        assert b.lower <= blanket.bounds(f * eps0, 1e-6).upper, (f, b)


def test_gate_and_budget() -> None:
    """The lumped dataset is skipped where its twin's estimate dominates (eps0 = 0.5) and not
    offered beyond the point budget."""
    small = DatasetLowerProfile(make_randomizer("oue", 0.5, k=10), 100)
    d = _lumped_of(small)
    assert not d.worth(0.1)
    assert _lumped_of(DatasetLowerProfile(make_randomizer("oue", 4.0, k=10), 100)).worth(1.0)
    big = DatasetLowerProfile(make_randomizer("oue", 1.0, k=10), 100_000)
    assert not any(isinstance(x, LumpedThirdDataset) for x in big.datasets)
    assert d.points() <= dl.LUMPED_MAX_POINTS
    assert math.isfinite(d.estimate(0.1))


@pytest.mark.parametrize("n", [1, 2, 3])
def test_lumped_upper_end_tight_where_share_rounds_to_one(n: int) -> None:
    """OUE at eps0 = 39.2: (p - q)/p rounds to 1, and the constant n - (n - m) share cancelled (review rev101d: upper
    end 607 against an exact 0.0192); the constant is now a sum of non-negative terms and the bracket is tight."""
    eps0 = 39.19614428786209
    full = ob.oue_matrix(3, eps0)
    lumped = _lumped_matrix(full, _unary_hits(3), 0, 1, 2)
    d = _lumped_of(DatasetLowerProfile(make_randomizer("oue", eps0, k=3), n))
    for eps in (0.5 * eps0, 39.156948143574226):
        lo, hi = d.bracket(eps)
        with mpmath.workdps(50):
            exact = ob.dataset_delta(lumped, [2] * (n - 1), 0, 1, eps)
            assert lo <= exact <= hi and hi <= exact * (1 + 1e-9) + 1e-300, (eps, lo, exact, hi)


def test_huge_eps0_and_n_keep_their_answers() -> None:
    """Review rev101d: with the lumped dataset counted as 12 sqrt(n) + 80 points, OLH eps0 = 30, n = 4e9 became 'not
    applicable' (its own count is a few thousand points there); Hadamard / local hashing whose p rounds to 1 (eps0 = 40)
    raised ValueError from the third-value datasets (also before them): now those are left out (Hadamard keeps its xor
    dataset, whose laws need no p < 1)."""
    r = make_randomizer("olh", 30.0, k=10, g=2)
    prof = DatasetLowerProfile(r, 4 * 10**9)
    lumped = _lumped_of(prof)
    assert lumped.points() < 1e5
    b = api.delta(30.0, 4 * 10**9, 1.0, method="dataset-lower", randomizer=r)
    assert b.kind == "lower" and 0.4 < b.value <= 0.5
    for name, params in (("hadamard", {"k": 8}), ("olh", {"k": 10, "g": 2})):
        r = make_randomizer(name, 40.0, **params)
        prof = DatasetLowerProfile(r, 10)
        assert prof.datasets[0].exact
        assert not any(isinstance(d, (ProductDataset, LumpedThirdDataset)) for d in prof.datasets)
        b = api.delta(40.0, 10, 1.0, method="dataset-lower", randomizer=r)
        assert 0.0 < b.value < 1.0

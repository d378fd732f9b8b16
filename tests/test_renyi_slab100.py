"""The slab plan's merge cost for pairs with large log likelihood ratios (renyi._SLAB_MERGE_WIDE, slab100; work only:
every partition is certified): the plan now fires where claimed (one slab where three / two were planned) and the
bounds there still bracket an independent 30-digit sum over clone counts."""

from __future__ import annotations

import functools

import mpmath
import numpy as np
import pytest
from types import SimpleNamespace

from shuffle_accountant.analyses import pair_for
from shuffle_accountant.numeric import renyi as R


def _slabs(pr, orders, rtol: float = 1e-3):
    """(slabs' count ranges, orders kept in a slab, upper, lower log excess, converged) of one direction."""
    d = R.RenyiDirection(pr)
    up, lo, ok, _, _ = d.bounds(orders, rtol)
    return [(int(sl.c1), int(sl.c2)) for sl in d.slabs], d.slab_of.copy(), up, lo, ok


def _log_excess_30(pr, alphas) -> list[tuple[float, float]]:
    """:func:`_log_excess_30_of` of ``pr``'s rates (memoised: test_renyi_slab101 asks for the same pair and orders, and
    the sum takes ~30 s)."""
    return list(_log_excess_30_of(pr.n, pr.r0, pr.r1, pr.pa, pr.pb, tuple(float(a) for a in alphas)))


@functools.lru_cache(maxsize=8)
def _log_excess_30_of(n, r0, r1, pa, pb, alphas) -> tuple[tuple[float, float], ...]:
    """Per order of ``alphas``, log sum_c Pr[C = c] (K(c) - 1) at 30 digits, independent of the package: Pr[C = c] and
    the rows Bin(c, s) by their ratio recurrences in mpmath, K(c) = sum_a P_c(a)^alpha Q_c(a)^(1 - alpha) with P_c(a) =
    u B(a - 1) + (1 - u) B(a), Q_c likewise with v; summed up to a count where the rest, at most Pr[C > c] (K(c) - 1)
    (K is non-increasing in c), is below 1e-12 of the sum at every order: (lower, upper)."""
    with mpmath.workdps(30):
        r0, r1, pa, pb = (mpmath.mpf(x) for x in (r0, r1, pa, pb))
        p, s, u, v = r0 + r1, r0 / (r0 + r1), pa / (pa + pb), pb / (pa + pb)
        N, al = n - 1, [mpmath.mpf(a) for a in alphas]
        wc, below, part, c = (1 - p) ** N, mpmath.mpf(0), [mpmath.mpf(0)] * len(al), 0
        while True:
            row = [(1 - s) ** c]
            for k in range(c):
                row.append(row[-1] * (c - k) / (k + 1) * s / (1 - s))
            pq = [(u * b1 + (1 - u) * b0, v * b1 + (1 - v) * b0) for b1, b0 in zip([mpmath.mpf(0)] + row, row + [0])]
            pq = [(P, P / Q) for P, Q in pq if P > 0]
            kc = [mpmath.fsum(P * r ** (a - 1) for P, r in pq) - 1 for a in al]
            part = [x + wc * k for x, k in zip(part, kc)]
            below += wc
            slack = [(1 - below) * k for k in kc]
            if all(sl < 1e-12 * x for sl, x in zip(slack, part)) or c == N:
                return tuple((float(mpmath.log(x)), float(mpmath.log(x + sl))) for x, sl in zip(part, slack))
            wc = wc * (N - c) / (c + 1) * p / (1 - p)
            c += 1


def test_oracle_matches_the_definition_at_small_n():
    """The recurrence oracle against tests/oracle.py's brute-force Renyi divergence (the clone pair built from its exact
    stronger-clones rates, n = 12, 40 digits): the log excess turns into the same D_alpha to 12 digits."""
    import oracle

    r0, r1, pa, pb, p0 = oracle.stronger_clones_params(2.0, dps=40)
    P, Q = oracle.clone_pair(12, r0, r1, pa, pb, p0, dps=40)
    exact = SimpleNamespace(n=12, r0=r0, r1=r1, pa=pa, pb=pb)
    for alpha, (lo, up) in zip((2.5, 64.0), _log_excess_30(exact, (2.5, 64.0))):
        with mpmath.workdps(40):
            want = oracle.renyi(P, Q, alpha, dps=40)
            got = mpmath.log1p(mpmath.exp(mpmath.mpf(lo))) / (alpha - 1)
        assert abs(got - want) <= 1e-12 * want and up - lo < 1e-10, (alpha, got, want)


def _new_and_old_plans(pr, old_slabs: int):
    """Both plans at the 40 default orders: the new merge cost's (one slab holding every order, converged) and the old
    one's (2e4 points: ``old_slabs`` slabs, converged); the brackets overlap. Returns (orders, new, old) as :func:`_slabs`."""
    orders = np.array(R.DEFAULT_ORDERS)
    new = _slabs(pr, orders)
    assert new[4] and len(new[0]) == 1 and np.all(new[1] == 0), new[0]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(R, "_SLAB_MERGE_WIDE", 20_000.0)
        old = _slabs(pr, orders)
    assert old[4] and len(old[0]) == old_slabs, old[0]
    assert np.all(new[3] <= old[2]) and np.all(old[3] <= new[2])
    return orders, new, old


def test_one_slab_where_the_old_merge_cost_planned_three():
    """eps0 = 2.5, n = 1e4 (clones, the benchmark's pair): with the merge cost of 2e4 points the plan had three slabs and
    alpha = 768's own slab (counts from 162) left it after its build; now one slab holds all 40 orders, and the upper
    ends agree within the curve's rtol."""
    pr = R._rate_rounded_pair(pair_for("clones", 2.5, 10_000).pair, 1)
    orders, new, old = _new_and_old_plans(pr, 3)
    assert np.any(old[1] < 0)
    d_up, d_up0 = R._to_divergence(new[2], orders, True), R._to_divergence(old[2], orders, True)
    assert np.all(np.abs(d_up - d_up0) <= 1e-3 * d_up0)


def test_merged_slab_brackets_the_30_digit_sum():
    """stronger-clones eps0 = 2, n = 4000: the old merge cost planned two slabs (counts 747 .. 1116 and 201 .. 1050), the
    new one a single slab 201 .. 1116 for all 40 orders (asserted); its bounds, converged, bracket the 30-digit sum at
    orders 2.5, 64, 1024 (a slab or tail bound off by a factor would leave the bracket: rtol 1e-3 of D_alpha is about
    1e-3 (alpha - 1) D_alpha in log(S - 1), well inside) and overlap the two-slab plan's."""
    pr = pair_for("stronger-clones", 2.0, 4000).pair
    orders, (_, _, up, lo, _), _ = _new_and_old_plans(pr, 2)
    for alpha, (e_lo, e_up) in zip((2.5, 64.0, 1024.0), _log_excess_30(pr, (2.5, 64.0, 1024.0))):
        j = int(np.flatnonzero(orders == alpha)[0])
        assert lo[j] <= e_up and e_lo <= up[j], (alpha, lo[j], e_lo, e_up, up[j])


def test_small_counts_keep_the_old_merge_cost():
    """Below a clone count mean of _SLAB_MERGE_WIDE_COUNT the merge cost stays 2e4 points: clones eps0 = 2, n = 2000 (mean
    ~270) keeps two slabs at orders 2, 64, 512, 1024 (the pair of tests/test_renyi_oracle.py's end-bound test); with the
    large merge cost it would get one."""
    pr = pair_for("clones", 2.0, 2000).pair
    orders = np.array([2.0, 64.0, 512.0, 1024.0])
    assert pr.n * (pr.r0 + pr.r1) < R._SLAB_MERGE_WIDE_COUNT
    assert len(_slabs(pr, orders, 1e-6)[0]) == 2
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(R, "_SLAB_MERGE_WIDE_SMALL", R._SLAB_MERGE_WIDE)
        assert len(_slabs(pr, orders, 1e-6)[0]) == 1


def test_orders_leave_the_slab_instead_of_the_geometric_tails(monkeypatch):
    """_SLAB_TAIL_GEOMETRIC_WIDE off (pairs with log likelihood ratio above _SLAB_MID_RATIO, here lowered to 2 so that the
    rule fires at a size the oracle sums quickly): at stronger-clones eps0 = 2.5, n = 1500, rtol 1e-6 the slab tails'
    first bounds miss tail_tol at the small orders (1.25 .. 2.25, asserted: the geometric stage runs for them when
    allowed); those orders now leave the slab (asserted) and their blocks of totals bound them. Both plans converge,
    their brackets overlap, and the new bracket holds the 30-digit sum at 1.25, 2, 64."""
    pr = pair_for("stronger-clones", 2.5, 1500).pair
    orders = np.array(R.DEFAULT_ORDERS)
    small = orders <= 2.25
    monkeypatch.setattr(R, "_SLAB_MID_RATIO", 2.0)
    assert pr.max_log_ratio > R._SLAB_MID_RATIO
    _, slab_of, up, lo, ok = _slabs(pr, orders, 1e-6)
    assert ok and np.all(slab_of[small] < 0) and np.any(slab_of >= 0)
    asked: list[np.ndarray] = []
    geo = R._Slab._geometric_tails
    monkeypatch.setattr(R, "_SLAB_TAIL_GEOMETRIC_WIDE", True)
    monkeypatch.setattr(R._Slab, "_geometric_tails", lambda self, *a: (asked.append(a[4][a[9]]), geo(self, *a))[1])
    _, slab_of0, up0, lo0, ok0 = _slabs(pr, orders, 1e-6)
    assert ok0 and asked and set(orders[small].tolist()) <= set(np.concatenate(asked).tolist())
    assert np.all(slab_of0[small] >= 0)
    assert np.all(lo <= up0) and np.all(lo0 <= up)
    for alpha, (e_lo, e_up) in zip((1.25, 2.0, 64.0), _log_excess_30(pr, (1.25, 2.0, 64.0))):
        j = int(np.flatnonzero(orders == alpha)[0])
        assert lo[j] <= e_up and e_lo <= up[j], (alpha, lo[j], e_lo, e_up, up[j])


def test_mid_ratio_pairs_keep_the_geometric_tails(monkeypatch):
    """The same pair at the real thresholds: its ratio 2.5 lies between _SLAB_TAIL_GEOMETRIC_RATIO (1.5 since session
    30) and _SLAB_MID_RATIO, so its small orders leave the slab as above; with the geometric stage allowed up to
    _SLAB_MID_RATIO (the rule before session 30) they keep their slab."""
    pr = pair_for("stronger-clones", 2.5, 1500).pair
    assert R._SLAB_RECT_RATIO < pr.max_log_ratio <= R._SLAB_MID_RATIO
    assert R._SLAB_TAIL_GEOMETRIC_RATIO < pr.max_log_ratio
    orders = np.array(R.DEFAULT_ORDERS)
    _, slab_of, up, lo, ok = _slabs(pr, orders, 1e-6)
    assert ok and np.all(slab_of[orders <= 2.25] < 0) and np.any(slab_of >= 0)
    monkeypatch.setattr(R, "_SLAB_TAIL_GEOMETRIC_RATIO", R._SLAB_MID_RATIO)
    _, slab_of0, up0, lo0, ok0 = _slabs(pr, orders, 1e-6)
    assert ok0 and np.all(slab_of0[orders <= 2.25] >= 0)
    assert np.all(lo <= up0) and np.all(lo0 <= up)

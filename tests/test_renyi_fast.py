"""The term-by-term Rényi kernels (``numeric/renyi.py``: windows of ``a`` with certified
geometric tails, all orders at once) against an independent mpmath brute force, and the whole
certified curve against the slower cell-only path it replaced on a grid of small cases."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shuffle_accountant.analyses import pair_for
from shuffle_accountant.numeric import renyi as R

ORDERS = np.array([1.01, 1.25, 2.0, 3.7, 10.0, 64.0, 512.0, 1024.0])


def _kernel_excess_mp(m: int, u: float, v: float, s: float, alpha: float) -> mpmath.mpf:
    """``log(sum_a M(a) p^alpha q^(1-alpha) - 1)`` by 40-digit brute force: ``M = Bin(m, s)``,
    ``p = 1 + (u-s)/(s(1-s)) (a/m - s)`` (and ``q`` with ``v``), i.e. the kernel pair
    ``(u B(a-1) + (1-u) B(a), v B(a-1) + (1-v) B(a))`` with ``B = Bin(m-1, s)`` written
    directly from its definition (not from the package's decomposition)."""
    with mpmath.workdps(40):
        s_, u_, v_ = mpmath.mpf(s), mpmath.mpf(u), mpmath.mpf(v)

        def b(a: int) -> mpmath.mpf:
            if a < 0 or a > m - 1:
                return mpmath.mpf(0)
            return mpmath.binomial(m - 1, a) * s_**a * (1 - s_) ** (m - 1 - a)

        total = mpmath.mpf(0)
        for a in range(m + 1):
            P = u_ * b(a - 1) + (1 - u_) * b(a)
            Q = v_ * b(a - 1) + (1 - v_) * b(a)
            if P > 0:
                total += P**alpha * Q ** (1 - alpha)
        return mpmath.log(total - 1)


@pytest.mark.parametrize("m, u, v, s", [
    (1, 0.7, 0.3, 0.5), (5, 0.73, 0.27, 0.5), (60, 0.9, 0.1, 0.5), (57, 0.6, 0.2, 0.3),
    (400, 0.73, 0.27, 0.5), (300, 0.2, 0.35, 0.7), (900, 0.62, 0.38, 0.5),
])
@pytest.mark.parametrize("full", [0.0, 1024.0])
def test_exact_kernels_bracket_brute_force(m, u, v, s, full, monkeypatch):
    """Windows narrower than ``[0, m]`` (m = 300 .. 900, ``full = 0``): the certified tails are
    exercised; and every term of small supports (``full``: supports up to 1024 terms)."""
    monkeypatch.setattr(R, "_FULL_WINDOW", full)
    up, lo, done = R._exact_excess(np.array([m - 1.0]), np.array([u]), np.array([v]), s, ORDERS, 1e-13, 1e-9)
    assert done.all()
    for j, a in enumerate(ORDERS):
        exact = float(_kernel_excess_mp(m, u, v, s, float(a)))
        assert lo[0, j] <= exact <= up[0, j], (m, a, lo[0, j], exact, up[0, j])
        assert up[0, j] - lo[0, j] <= 1e-7  # log brackets: tails at 1e-9, float error far below


def test_exact_kernels_huge_orders_log_space():
    """Orders where ``f`` overflows a double are summed in log space, still certified."""
    alpha = np.array([2000.0, 1e4, 1e6])
    m, u, v = 40, 0.8, 0.2
    up, lo, done = R._exact_excess(np.array([m - 1.0]), np.array([u]), np.array([v]), 0.5, alpha, 1e-13, 1e-9)
    assert done.all()
    for j, a in enumerate(alpha):
        exact = float(_kernel_excess_mp(m, u, v, 0.5, float(a)))
        assert exact > 700  # beyond exp's range
        assert lo[0, j] <= exact <= up[0, j]
        assert up[0, j] - lo[0, j] <= 1e-6 * exact


def test_identical_laws_give_zero_excess():
    up, lo, done = R._exact_excess(np.array([10.0]), np.array([0.5]), np.array([0.5]), 0.5, ORDERS, 1e-13, 1e-9)
    assert done.all() and np.all(np.isneginf(up)) and np.all(np.isneginf(lo))


CASES = [("clones", None), ("stronger-clones", None), ("krr", 5), ("binary-rr-lower", None), ("krr-lower", 4)]


@pytest.mark.parametrize("method,k", CASES)
@pytest.mark.parametrize("eps0", [0.3, 1.0, 4.0])
@pytest.mark.parametrize("n", [2, 37, 600])
def test_fast_path_agrees_with_cell_path(method, k, eps0, n):
    """The term-by-term path (default) and the cell-only path it replaced (``exact_window=0``)
    bracket the same divergence: the brackets intersect, and the new upper end is not above
    the old one by more than the stated tolerance (twice ``rtol`` on ``D``, since each path is
    only ``rtol``-tight)."""
    rtol = 1e-3
    orders = np.array([1.25, 2.0, 8.0, 64.0, 1024.0])
    sp = pair_for(method, eps0, n, k)
    for p in ([sp.pair] if sp.pair.symmetric else [sp.pair, sp.pair.mirrored()]):
        new = R.RenyiDirection(p).bounds(orders, rtol, scale=sp.scale)
        old = R.RenyiDirection(p, exact_window=0).bounds(orders, rtol, scale=sp.scale)
        assert np.all(new[1] <= old[0] + 1e-12) and np.all(old[1] <= new[0] + 1e-12)
        ls = math.log(sp.scale)
        d_new = R._to_divergence(new[0] + ls, orders, True)
        d_old = R._to_divergence(old[0] + ls, orders, True)
        assert np.all(d_new <= d_old * (1 + 2 * rtol) + 1e-15)


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(["clones", "stronger-clones"]), st.floats(0.1, 6.0), st.integers(2, 5000),
       st.sampled_from([1e-2, 1e-3, 1e-5]))
def test_divergence_bracket_meets_rtol(method, eps0, n, rtol):
    """The refinement target is the relative width of the reported divergence ``D_alpha``."""
    b = R.renyi_bounds(pair_for(method, eps0, n).pair, [1.5, 4.0, 32.0, 256.0], rtol=rtol)
    assert b.converged
    for lo, up in zip(b.lower, b.upper):
        assert 0.0 <= lo <= up <= lo * (1 + rtol) + 1e-300


def _binom_interval_mp(a: int, b: int, n: int, p: float) -> mpmath.mpf:
    with mpmath.workdps(40):
        p_ = mpmath.mpf(p)
        return mpmath.fsum(mpmath.binomial(n, k) * p_**k * (1 - p_) ** (n - k) for k in range(max(a, 0), min(b, n) + 1))


@pytest.mark.parametrize("n, p, a, b", [
    (99999, 0.0498, 2562, 2562), (99999, 0.0498, 2400, 2600), (99999, 0.0498, 0, 3000),
    (99999, 0.0498, 7000, 7000), (99999, 0.0498, 6900, 7400), (5000, 0.3, 0, 1200), (5000, 0.3, 1900, 5000),
    (5000, 0.3, 1400, 1600),  # contains the mode: no bound from this rule
])
def test_tail_interval_mass_brackets_mpmath(n, p, a, b):
    """Far-tail block masses (below Boost's range) from the log-concave pmf: the nearest term
    below, a finite geometric series above, against an mpmath sum."""
    pr = pair_for("clones", 1.0, 10).pair
    d = R.RenyiDirection(pr)
    d.N, d.p = n, p
    up, lo = d._log_tail_interval(np.array([float(a)]), np.array([float(b)]))
    exact = float(mpmath.log(_binom_interval_mp(a, b, n, p)))
    mode = math.floor((n + 1) * p)
    if a <= mode <= b:
        assert up[0] == math.inf and lo[0] == -math.inf
    else:
        assert lo[0] <= exact <= up[0]
        if a == b:
            assert up[0] - lo[0] < 1e-6  # a single term: the pmf bracket alone
        else:
            assert up[0] - exact < 1.0


@pytest.mark.parametrize("eps0, n", [(1.0, 10**4), (3.0, 10**5), (4.0, 10**6)])
def test_few_large_orders_converge(eps0, n):
    """Regression: with a few orders, a large order's divergence is carried by far-tail totals
    (masses ~1e-300 times kernels ~1e+560): blocks whose gap overflowed a double were scored 0
    and never split, far-tail masses had no lower bound, and the bracket stalled ~8x wide.
    The same orders inside the default grid give intersecting brackets."""
    orders = [2.0, 1024.0]
    pr = pair_for("clones", eps0, n).pair
    b = R.renyi_bounds(pr, orders, rtol=1e-3)
    assert b.converged
    full = R.renyi_bounds(pr, R.DEFAULT_ORDERS, rtol=1e-3)
    for a, lo, up in zip(orders, b.lower, b.upper):
        assert up <= lo * (1 + 1e-3)
        i = R.DEFAULT_ORDERS.index(a)
        assert lo <= full.upper[i] * (1 + 1e-12) and full.lower[i] <= up * (1 + 1e-12)


def test_grouped_windows_bracket_brute_force(monkeypatch):
    """All 40 default orders for a batch of nearby clone counts (the orders' windows are summed in
    groups over one shared pass of order-independent terms): the batch is split into groups,
    and sampled entries and orders are bracketed against the mpmath brute force."""
    seen = []
    group = R._exact_group

    def spy(*args):
        seen.append(len(args[-1]))
        return group(*args)

    monkeypatch.setattr(R, "_exact_group", spy)
    monkeypatch.setattr(R, "_GROUP_COST", 0.0)  # groups wherever they save terms (small windows here)
    monkeypatch.setattr(R, "_FULL_WINDOW", 0.0)  # windows, not every term
    u, v, s = 0.73, 0.27, 0.5
    m = np.arange(280.0, 321.0)
    alpha = np.array(R.DEFAULT_ORDERS)
    up, lo, done = R._exact_excess(m - 1.0, np.full(m.size, u), np.full(m.size, v), s, alpha, 1e-13, 1e-9)
    assert done.all() and seen and seen[0] >= 2
    for i in (0, 20, 40):
        for j in (0, 13, 19, 26, 27, 35, 39):  # first, inner and last orders of the groups
            exact = float(_kernel_excess_mp(int(m[i]), u, v, s, float(alpha[j])))
            assert lo[i, j] <= exact <= up[i, j], (m[i], alpha[j], lo[i, j], exact, up[i, j])
            assert up[i, j] - lo[i, j] <= 1e-6


@pytest.mark.parametrize("m, u, v, s", [(60, 0.9, 0.1, 0.5), (57, 0.6, 0.2, 0.3), (400, 0.73, 0.27, 0.5),
                                        (300, 0.2, 0.35, 0.7)])
def test_cells_bracket_brute_force(m, u, v, s):
    """The cell bounds (chord above, Jensen below; the masses of Bin(c+1, s) derived from those of
    Bin(c, s) and its pmf) summed over a coarse partition of ``a`` bracket the mpmath kernel."""
    edges = np.unique(np.concatenate(([0.0, m + 1.0], np.linspace(1, m, 9).round())))[None, :]
    alpha = np.array([1.25, 2.0, 10.0, 64.0, 1024.0])
    up, lo = R._Kernel(np.array([m - 1.0]), np.array([u]), np.array([v]), s, edges).evaluate(alpha)
    log_up, log_lo = np.logaddexp.reduce(up[0], axis=0), np.logaddexp.reduce(lo[0], axis=0)
    for j, a in enumerate(alpha):
        exact = float(_kernel_excess_mp(m, u, v, s, float(a)))
        assert log_lo[j] <= exact <= log_up[j], (m, a, log_lo[j], exact, log_up[j])


def _tail_mp(m: int, u: float, v: float, s: float, alpha: float, edge: int, side: int) -> mpmath.mpf:
    """``log sum_{a beyond edge} M(a) g(a/m)`` by 40-digit brute force (module docstring of renyi.py:
    ``g = p^alpha q^(1-alpha) - 1 - f'(s) (x - s)``, ``M = Bin(m, s)``)."""
    with mpmath.workdps(40):
        s_, u_, v_, a_ = mpmath.mpf(s), mpmath.mpf(u), mpmath.mpf(v), mpmath.mpf(alpha)
        bp, bq = (u_ - s_) / (s_ * (1 - s_)), (v_ - s_) / (s_ * (1 - s_))
        d = a_ * bp + (1 - a_) * bq
        rng = range(edge + 1, m + 1) if side == 1 else range(0, edge)
        total = mpmath.mpf(0)
        for a in rng:
            y = mpmath.mpf(a) / m - s_
            g = (1 + bp * y) ** a_ * (1 + bq * y) ** (1 - a_) - 1 - d * y
            total += mpmath.binomial(m, a) * s_**a * (1 - s_) ** (m - a) * g
        return mpmath.log(total)


@pytest.mark.parametrize("m, alpha, edge, side", [
    (400, 1024.0, 300, -1), (400, 1024.0, 330, -1), (400, 64.0, 150, -1), (400, 8.0, 260, 1),
    (400, 1024.0, 380, 1), (400, 2.0, 120, -1),
])
def test_window_tails_bound_brute_force(m, alpha, edge, side):
    """The tail bound beyond a window's edge (the smallest of the geometric, second-derivative and
    convexity bounds; the last crosses s) is above the true tail."""
    u, v, s = 0.73, 0.27, 0.5
    al = np.array([alpha])
    bp, bq = np.array([(u - s) / (s * (1 - s))]), np.array([(v - s) / (s * (1 - s))])
    tail = R._window_tail(np.array([[float(edge)]]), np.array([float(m)]), s, side, np.array([u]), np.array([v]),
                          bp, bq, al, np.zeros(1, dtype=np.int64), 1e-13, math.log(1e-9), np.zeros((1, 1)),
                          np.array([[True]]))
    exact = float(_tail_mp(m, u, v, s, alpha, edge, side))
    assert exact <= tail[0, 0], (exact, tail[0, 0])


@pytest.mark.parametrize(("eps0", "n", "orders"), [(1.0, 10**7, [1024.0]), (1.0, 10**7, [2.0, 1024.0]),
                                                   (3.0, 10**9, [768.0, 896.0, 1024.0])])
def test_a_few_large_orders_alone_converge_like_the_full_grid(eps0: float, n: int, orders: list[float]) -> None:
    """Cells whose gap overflows a double are split first (they were scored 0 and never split:
    orders [1024] alone at eps0 = 1, n = 1e7 stopped at an upper end ~8e3 x the lower one);
    the lone orders' brackets converge and meet the full default grid's."""
    pair = pair_for("clones", eps0, n, None).pair
    alone = R.renyi_bounds(pair, orders, rtol=1e-3)
    full = R.renyi_bounds(pair, rtol=1e-3)
    assert alone.converged
    for a, up, lo in zip(alone.orders, alone.upper, alone.lower):
        j = list(full.orders).index(a)
        assert up <= lo * (1 + 2e-3)
        assert lo <= full.upper[j] and full.lower[j] <= up


@pytest.mark.parametrize(("method", "eps0", "n"), [("clones", 1.0, 3000), ("stronger-clones", 0.5, 10**5),
                                                   ("clones", 3.0, 600)])
@pytest.mark.parametrize("max_split", [4, 7])
def test_planned_splits_tile_totals_and_agree_with_quartering(method: str, eps0: float, n: int, max_split: int,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks split into 2 .. _MAX_SPLIT parts planned from their scores: the final blocks still
    tile the totals 0 .. n exactly once, and the bracket meets the one of splitting every chosen
    block in four (the previous rule: a plan for a vanishing total forces four parts), with the
    upper end not looser by more than rtol."""
    rtol = 1e-3
    orders = np.array(R.DEFAULT_ORDERS)
    pair = pair_for(method, eps0, n).pair
    monkeypatch.setattr(R, "_MAX_SPLIT", max_split)
    d = R.RenyiDirection(pair)
    up, lo, ok, _, _ = d.bounds(orders, rtol)
    assert ok
    order = np.argsort(d.lo)
    blo, bhi = d.lo[order], d.hi[order]
    assert blo[0] == 0.0 and bhi[-1] == float(pair.n) and np.all(blo[1:] == bhi[:-1] + 1.0)
    assert np.all(bhi >= blo)
    monkeypatch.setattr(R, "_MAX_SPLIT", 4)
    monkeypatch.setattr(R, "_SPLIT_SLACK", 1e-12)
    q_up, q_lo, q_ok, _, _ = R.RenyiDirection(pair).bounds(orders, rtol)
    assert q_ok
    assert np.all(lo <= q_up + 1e-12) and np.all(q_lo <= up + 1e-12)
    d_new, d_old = R._to_divergence(up, orders, True), R._to_divergence(q_up, orders, True)
    assert np.all(d_new <= d_old * (1 + rtol) + 1e-15)


@pytest.mark.parametrize("n", [9, 60])
def test_planned_splits_bracket_oracle(n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Uneven splits (up to 7 parts) at small n against the mpmath oracle of the whole pair."""
    import oracle

    monkeypatch.setattr(R, "_MAX_SPLIT", 7)
    sp = pair_for("clones", 1.3, n)
    pr = sp.pair
    with mpmath.workdps(50):
        P, Q = oracle.clone_pair(pr.n, pr.r0, pr.r1, pr.pa, pr.pb, max(mpmath.mpf(1) - pr.pa - pr.pb, 0))
    orders = [1.3, 2.0, 10.0, 64.0]
    got = R.renyi_bounds(pr, orders, rtol=1e-10, scale=sp.scale)
    with mpmath.workdps(50):
        for a, lo, up in zip(orders, got.lower, got.upper):
            exact = max(oracle.renyi(P, Q, a), oracle.renyi(Q, P, a))
            assert lo <= exact <= up, (a, lo, exact, up)


@pytest.mark.parametrize(("method", "eps0", "n"), [("clones", 1.0, 3000), ("clones", 3.0, 1000),
                                                   ("stronger-clones", 1.0, 10**4), ("clones", 0.5, 10**6)])
def test_entries_per_order_agree_with_every_order(method: str, eps0: float, n: int) -> None:
    """Entries evaluated only at the orders their blocks need (the others from the monotone
    envelope in c) against every entry at every order: brackets intersect, the upper end is not
    looser by more than rtol; and the per-order path is exercised (some entries lack orders)."""
    rtol = 1e-3
    orders = np.array(R.DEFAULT_ORDERS)
    pair = pair_for(method, eps0, n).pair
    d = R.RenyiDirection(pair)
    assert d.envelope
    up, lo, ok, _, _ = d.bounds(orders, rtol)
    assert ok
    if n <= 10**4:
        assert not np.all(d.ent_done)
    last = np.flatnonzero(d.ent_c == float(pair.n))  # the last block's lower corner: left unevaluated
    assert last.size == 1 and not np.any(d.ent_done[last])
    full = R.RenyiDirection(pair)
    full.envelope = False
    f_up, f_lo, f_ok, _, _ = full.bounds(orders, rtol)
    assert f_ok and np.all(full.ent_done)
    assert np.all(lo <= f_up + 1e-12) and np.all(f_lo <= up + 1e-12)
    d_new, d_all = R._to_divergence(up, orders, True), R._to_divergence(f_up, orders, True)
    assert np.all(d_new <= d_all * (1 + rtol) + 1e-15)


def test_envelope_bounds_follow_monotonicity() -> None:
    """The envelope takes, per order, the smallest upper bound at any c' <= c and the largest lower
    bound at any c'' >= c; entries not evaluated at an order (+inf / -inf) get their neighbours'."""
    pair = pair_for("clones", 1.0, 100).pair
    d = R.RenyiDirection(pair)
    d.ent_c = np.array([5.0, 1.0, 3.0, 9.0])
    d._c_sorted = None
    up = np.array([[2.0], [np.inf], [3.0], [1.5]])
    lo = np.array([[1.0], [2.5], [-np.inf], [0.5]])
    e_up, e_lo = d._envelope(up, lo)
    # sorted by c: 1 (inf, 2.5), 3 (3.0, -inf), 5 (2.0, 1.0), 9 (1.5, 0.5)
    assert e_up[:, 0].tolist() == [2.0, np.inf, 3.0, 1.5]
    assert e_lo[:, 0].tolist() == [1.0, 2.5, 1.0, 0.5]


def test_exact_kernels_mixed_batch_few_orders_brute_force() -> None:
    """One call with kernels whose log p, log q are taken by log1p over the whole window (bp y >
    -1/2) and kernels needing the term-by-term logs (p near 0 at one end), at two orders (windows
    even for supports below 1024 terms), against the mpmath brute force."""
    cases = [(700, 0.73, 0.27, 0.5), (700, 0.97, 0.03, 0.5), (60, 0.9, 0.1, 0.5), (900, 0.62, 0.38, 0.5)]
    alpha = np.array([3.0, 512.0])
    m = np.array([float(c[0]) for c in cases])
    u = np.array([c[1] for c in cases])
    v = np.array([c[2] for c in cases])
    up, lo, done = R._exact_excess(m - 1.0, u, v, 0.5, alpha, 1e-13, 1e-9)
    assert done.all()
    for i, (mi, ui, vi, si) in enumerate(cases):
        for j, a in enumerate(alpha):
            exact = float(_kernel_excess_mp(mi, ui, vi, si, float(a)))
            assert lo[i, j] <= exact <= up[i, j], (mi, ui, a, lo[i, j], exact, up[i, j])
            assert up[i, j] - lo[i, j] <= 1e-6 * max(1.0, abs(exact))


@pytest.mark.parametrize(("eps0", "n"), [(1.0, 2 * 10**4), (3.0, 10**5)])
@pytest.mark.parametrize("mirrored", [False, True])
def test_cell_path_with_geometric_tail_cuts_meets_exact_path(eps0: float, n: int, mirrored: bool) -> None:
    """Cells only (``exact_window = 0``; wide tail cells cut at 2 .. 64 standard deviations from their
    end facing the mean: the large orders' sums lie far above the mean of ``a``, or far below it
    in the mirrored direction) against the term-by-term path: both converge, brackets intersect,
    and every entry's cells tile its support."""
    orders = np.array([2.0, 64.0, 1024.0])
    pair = pair_for("clones", eps0, n).pair
    if mirrored:
        pair = pair.mirrored()
    d = R.RenyiDirection(pair, exact_window=0)
    cells = d.bounds(orders, 1e-3)
    exact = R.RenyiDirection(pair).bounds(orders, 1e-3)
    assert cells[2] and exact[2]
    assert np.all(cells[1] <= exact[0] + 1e-12) and np.all(exact[1] <= cells[0] + 1e-12)
    d._sort_cells()
    far = 0
    for e in np.unique(d.cell_ent):  # each entry's cells tile a = 0 .. c + 1 exactly once
        edges = d.cell_e[d.cell_ent == e]
        edges = edges[np.argsort(edges[:, 0])]
        assert edges[0, 0] == 0.0 and edges[-1, 1] == d.ent_c[e] + 2.0
        assert np.all(edges[1:, 0] == edges[:-1, 1])
        m1 = d.ent_c[e] + 1.0
        sd = math.sqrt(m1 * d.s * (1.0 - d.s))
        inner = edges[1:, 0]
        far += int(np.any(np.abs(inner - m1 * d.s) > 20.0 * sd))
    assert far  # cuts far out in the tails (the large orders' tilted sums)


def test_window_tails_both_sides_in_one_call() -> None:
    """Both sides' tails of a chunk in one call (one side per row) give the per-side calls' numbers
    exactly, and each bounds the mpmath tail."""
    u, v, s, m = 0.73, 0.27, 0.5, 400
    al = np.array([8.0, 1024.0])
    bp, bq = np.array([(u - s) / (s * (1 - s))]), np.array([(v - s) / (s * (1 - s))])
    gidx = np.zeros(2, dtype=np.int64)
    rows = [(1, 260.0), (-1, 150.0), (1, 380.0), (-1, 330.0)]

    def call(side, edges):
        k = len(edges)
        return R._window_tail(np.array(edges)[:, None], np.full(k, float(m)), s, side, np.full(k, u), np.full(k, v),
                              np.repeat(bp, k), np.repeat(bq, k), al, gidx, 1e-13, math.log(1e-9), np.zeros((k, 2)),
                              np.ones((k, 1), dtype=bool))

    mixed = call(np.array([float(sd) for sd, _ in rows]), [e for _, e in rows])
    for i, (sd, e) in enumerate(rows):
        single = call(sd, [e])
        assert np.array_equal(mixed[i], single[0]), (sd, e, mixed[i], single[0])
        for j, a in enumerate(al):
            exact = float(_tail_mp(m, u, v, s, float(a), int(e), sd))
            assert exact <= mixed[i, j], (sd, e, a, exact, mixed[i, j])


def test_unconverged_bracket_no_looser_than_every_entry_at_every_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """At a work limit the per-order partition may end looser than evaluating every entry at every
    order (clones n = 1e7, eps0 = 8 ended 2.4e-3 above at alpha = 80); renyi_bounds then also runs
    the every-order path and intersects the two certified brackets."""
    monkeypatch.setattr(R, "_MAX_BLOCKS", 100)
    monkeypatch.setattr(R, "_SLAB_MAX_POINTS", 0)  # blocks of totals only (slabs converge here in 34 blocks)
    sp = pair_for("clones", 1.0, 3000)
    assert sp.pair.symmetric
    orders = np.array(R.DEFAULT_ORDERS)
    got = R.renyi_bounds(sp.pair, orders, rtol=1e-3, scale=sp.scale)
    assert not got.converged
    full = R.RenyiDirection(sp.pair)
    full.envelope = False
    f_up, f_lo, _, _, _ = full.bounds(orders, 1e-3, scale=sp.scale)
    ls = math.log(sp.scale)
    d_up, d_lo = R._to_divergence(f_up + ls, orders, True), R._to_divergence(f_lo + ls, orders, False)
    assert np.all(np.array(got.upper) <= d_up * (1 + 1e-12))
    assert np.all(np.array(got.lower) >= d_lo * (1 - 1e-12))


def test_gammaln_table_of_slabs_within_its_charge() -> None:
    """Slabs take log k! from scipy's gammaln and charge 4e-15 of each term's magnitude plus 1e-13
    (renyi._Slab): measured within 2.5 ulp of 50-digit values on every k < 3000 and a sample up to
    2e6 (fails if the charge were below the error)."""
    import mpmath
    from scipy.special import gammaln

    rng = np.random.default_rng(5)
    ks = np.unique(np.concatenate((np.arange(0, 3000), rng.integers(3000, 2_000_000, 300)))).astype(float)
    got = gammaln(ks + 1.0)
    with mpmath.workdps(50):
        exact = [mpmath.loggamma(mpmath.mpf(int(k)) + 1) for k in ks]
        err = np.array([float(abs(mpmath.mpf(float(g)) - e)) for g, e in zip(got, exact)])
    assert np.all(err <= 2.5 * np.spacing(np.maximum(np.abs(got), 1.0)))
    assert np.all(err <= 4e-15 * np.abs(got) + 1e-13)


def test_orders_below_the_floating_point_floor_stop_with_their_bracket() -> None:
    """eps0 = 1e-9 at n = 1e12: the divergence (~1e-29) lies below what the kernels' rounding lets a
    bracket resolve to rtol. Refinement used to go on for ~20 s at a plateau; the orders stop once their
    gap is within a few estimated floors (RenyiDirection._log_floor) and say so (fails if the floor is
    not detected: converged would be False without floor_limited, after the work limit)."""
    sp = pair_for("clones", 1e-9, 10**12)
    got = R.renyi_bounds(sp.pair, np.array([2.0]), rtol=1e-3, scale=sp.scale)
    assert got.floor_limited and not got.converged
    assert 0.0 <= got.lower[0] <= got.upper[0] < 1e-27  # certified (a plateau at 9.8e-30 before)


@pytest.mark.parametrize(("method", "eps0", "n"), [("clones", 1.0, 1000), ("clones", 1.0, 10**6),
                                                   ("stronger-clones", 0.1, 10**9), ("binary-rr-lower", 8.0, 10**4),
                                                   ("clones", 1e-3, 10**9)])
def test_floor_detection_leaves_ordinary_curves_alone(method: str, eps0: float, n: int) -> None:
    """The floor estimate is far below every order's budget on ordinary curves: they converge as before
    (fails if the estimate were too high, e.g. without the spread of x in it)."""
    sp = pair_for(method, eps0, n)
    got = R.renyi_bounds(sp.pair, np.array(R.DEFAULT_ORDERS), rtol=1e-3, scale=sp.scale)
    assert got.converged and not got.floor_limited


@pytest.mark.slow
def test_floor_stop_bracket_overlaps_the_plateau(monkeypatch: pytest.MonkeyPatch) -> None:
    """eps0 = 1e-9, n = 1e9, alpha = 2: the bracket at the floor stop overlaps the one refinement reaches
    at its work limit without the stop (2.7 s), and its upper end is within 1 % of it (measured 0.3 %)."""
    sp = pair_for("clones", 1e-9, 10**9)
    orders = np.array([2.0])
    got = R.renyi_bounds(sp.pair, orders, rtol=1e-3, scale=sp.scale)
    assert got.floor_limited
    monkeypatch.setattr(R.RenyiDirection, "_log_floor", lambda self: np.full(self.alpha.size, -np.inf))
    ref = R.renyi_bounds(sp.pair, orders, rtol=1e-3, scale=sp.scale)
    assert not ref.floor_limited
    assert got.lower[0] <= ref.upper[0] and ref.lower[0] <= got.upper[0]
    assert got.upper[0] <= 1.01 * ref.upper[0]


@pytest.mark.parametrize("eps0", [1.0, 3.0])
def test_curve_at_the_largest_n_raises_no_floating_point_warning(eps0: float) -> None:
    """At n = 1e12 the order planner's shares can sum past the float maximum; that is handled (an
    infinite share is never negligible) and must not leak a RuntimeWarning to the user's terminal
    (the test suite turns warnings into errors)."""
    from shuffle_accountant import composition

    curve = composition.rdp_curve(eps0, 10**12)
    assert all(0.0 <= lo <= up for lo, up in zip(curve.lower, curve.upper))


def test_unique_tail_calls_equal_one_call_per_element() -> None:
    """The cells' Boost tails are evaluated once per distinct (k, m) (``_unique_call``, also with a cache kept
    between calls): the same values, element by element, as calling Boost on every element (repeated edges,
    two sizes, unsorted)."""
    from shuffle_accountant.numeric import binomial as bn

    rng = np.random.default_rng(3)
    m = np.repeat([5e8, 3e7], 40)
    k = np.floor(m * 0.5 + rng.integers(-5, 5, m.size) * 2000.0)
    for fn in (bn.cdf, bn.sf):
        got = R._unique_call(fn, k, m, 0.5)
        want = np.array([fn(np.array([kk]), np.array([mm]), 0.5)[0] for kk, mm in zip(k, m)])
        assert np.array_equal(got, want)
        # with a cache: a second call on overlapping and new arguments (half of them cached), and a small one
        cache: dict = {}
        assert np.array_equal(R._unique_call(fn, k[::2], m[::2], 0.5, cache), want[::2])
        k2 = np.concatenate((k, k[:5] + 1.0))
        want2 = np.concatenate((want, [fn(np.array([kk]), np.array([mm]), 0.5)[0] for kk, mm in zip(k[:5] + 1.0, m[:5])]))
        assert np.array_equal(R._unique_call(fn, k2[::-1], np.concatenate((m, m[:5]))[::-1], 0.5, cache), want2[::-1])
        assert np.array_equal(R._unique_call(fn, k[:3], m[:3], 0.5, cache), want[:3])


def test_blocked_log_f_products_equal_one_product(monkeypatch: pytest.MonkeyPatch) -> None:
    """``log f`` in column blocks (:data:`R._BLAS_COLS`, kept below OpenBLAS's threading threshold) gives the same
    brackets as one product over the whole window, bit for bit (each element is the same two-term product), and
    stays a bracket of the brute force with blocks that do not divide the window."""
    alpha = np.array(R.DEFAULT_ORDERS)
    c = np.array([2.0e5, 1.9e5, 3.0e4])
    u, v = np.array([0.73, 0.7, 0.6]), np.array([0.27, 0.3, 0.4])
    monkeypatch.setattr(R, "_BLAS_COLS", 10**9)
    whole = R._exact_excess(c, u, v, 0.5, alpha, 1e-13, 1e-6, 20_000)
    monkeypatch.setattr(R, "_BLAS_COLS", 7 * alpha.size + 3)  # 7 columns per block
    for buf in R._scratch(1):  # (the scratch arrays hold the first call's values: a block left out must show)
        buf.fill(np.nan)
    blocked = R._exact_excess(c, u, v, 0.5, alpha, 1e-13, 1e-6, 20_000)
    assert whole[2].all() and blocked[2].all()
    for x, y in zip(whole, blocked):
        np.testing.assert_array_equal(x, y)
    m = 900
    up, lo, done = R._exact_excess(np.array([m - 1.0]), np.array([0.62]), np.array([0.38]), 0.5, ORDERS, 1e-13, 1e-9)
    assert done.all()
    for j, a in enumerate(ORDERS):
        exact = float(_kernel_excess_mp(m, 0.62, 0.38, 0.5, float(a)))
        assert lo[0, j] <= exact <= up[0, j], (a, lo[0, j], exact, up[0, j])


@pytest.mark.parametrize("eps0, n", [(1.0, 30_000), (0.5, 100_000), (3.0, 300_000)])
def test_fine_initial_blocks_keep_the_bracket(eps0: float, n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first blocks cut near the clone count's mean (:meth:`R.RenyiDirection._fine_edges`): the edges keep those
    of :meth:`_initial_edges` and tile the totals; the bracket overlaps the one refined from the coarse start, meets
    rtol, and its upper end is within rtol of it."""
    sp = pair_for("clones", eps0, n)
    pair = sp.pair
    d = R.RenyiDirection(pair)
    d.alpha = np.array(R.DEFAULT_ORDERS)
    coarse = d._initial_edges()
    fine = d._fine_edges(coarse, 1e-3)
    assert np.all(np.isin(coarse, fine)) and np.all(np.diff(fine) >= 1.0) and fine[0] == 0.0 and fine[-1] == n + 1.0
    assert fine.size > coarse.size
    new = R.renyi_bounds(pair, rtol=1e-3, scale=sp.scale)
    monkeypatch.setattr(R, "_FINE_START", 0.0)
    old = R.renyi_bounds(pair, rtol=1e-3, scale=sp.scale)
    assert new.converged and old.converged
    for lo0, up0, lo1, up1 in zip(old.lower, old.upper, new.lower, new.upper):
        assert lo1 <= up0 and lo0 <= up1
        assert up1 <= up0 * (1.0 + 1e-3) and up1 <= lo1 * (1.0 + 1e-3) * (1.0 + 1e-12)


@pytest.mark.parametrize(("m", "u", "v", "alpha", "edge"), [
    (400, 0.73, 0.27, 8.0, 260), (400, 0.73, 0.27, 64.0, 330),
    (2726, 0.95257413, 0.04742587, 1024.0, 2695), (1000, 0.95257413, 0.04742587, 512.0, 990),
])
def test_window_tail_facing_the_bulk_bounds_brute_force(m: int, u: float, v: float, alpha: float, edge: int) -> None:
    """The lower tail of a window above the binomial's mode (the binomial ratio exceeds 1 at its edge: a large
    order's window near a = m): its linear part is bounded with the tail's probability at most 1 (was infinite, so
    only the convexity bound applied, e.g. 2858 nats for a true 1133 at m = 2726, alpha = 1024). Above the 40-digit
    tail, finite, and within 250 nats of it (fails when the probability factor is dropped, or taken as M(edge))."""
    s = 0.5
    bp, bq = np.array([(u - s) / (s * (1 - s))]), np.array([(v - s) / (s * (1 - s))])
    tail = R._window_tail(np.array([[float(edge)]]), np.array([float(m)]), s, -1, np.array([u]), np.array([v]),
                          bp, bq, np.array([alpha]), np.zeros(1, dtype=np.int64), 1e-13, math.log(1e-9),
                          np.zeros((1, 1)), np.array([[True]]))[0, 0]
    exact = float(_tail_mp(m, u, v, s, alpha, edge, -1))
    assert exact <= tail < exact + 250.0, (exact, tail)


@pytest.mark.parametrize(("a", "m", "p"), [
    (2500, 2500, 0.5), (2400, 2500, 0.5), (0, 3000, 0.3), (1250, 2500, 0.5), (10, 10**6, 0.4), (7, 10, 0.5),
    (-1, 10, 0.5),
])
def test_log_pmf_anchor_brackets_mpmath(a: int, m: int, p: float) -> None:
    """The term-by-term sums' anchor ``log M(a)``: Boost's value where it is at least e^-650, else the gammaln
    bracket's midpoint with its half-width; within the returned error of the 50-digit value (fails with the old
    clamp at 1e-320, or the bracket's lower end with Boost's error)."""
    val, err = R._log_pmf_anchor(np.array([float(a)]), np.array([float(m)]), p, 1e-13)
    if not 0 <= a <= m:
        assert np.isneginf(val[0])
        return
    with mpmath.workdps(50):
        exact = (mpmath.loggamma(m + 1) - mpmath.loggamma(a + 1) - mpmath.loggamma(m - a + 1)
                 + a * mpmath.log(mpmath.mpf(p)) + (m - a) * mpmath.log(1 - mpmath.mpf(p)))
        miss = abs(mpmath.mpf(float(val[0])) - exact)
    assert miss <= err[0] < 1e-6, (float(miss), err[0])


def test_exact_kernels_off_the_bulk_bracket_brute_force() -> None:
    """Large orders alone at a kernel whose tilted sum lies at a ~ m, far from the binomial's bulk (eps0 = 3's
    clone pair): the window leaves out the mode, its terms are anchored at the gammaln bracket (Boost's pmf
    underflows there) and the tail towards the bulk is finite; bracket against the 40-digit kernel (fails with
    the pmf clamped at 1e-320, or anchored at Boost's underflowed value)."""
    m, u, v, s = 2000, 0.95257413, 0.04742587, 0.5
    alpha = np.array([768.0, 1024.0])
    lo_w, _ = R._tilted_window(np.array([float(m)]), s, np.array([(u - s) / (s * (1 - s))]),
                               np.array([(v - s) / (s * (1 - s))]), alpha, 6.0)
    assert np.all(lo_w > m * s + 200)  # windows off the bulk
    up, lo, done = R._exact_excess(np.array([m - 1.0]), np.array([u]), np.array([v]), s, alpha, 1e-13, 2e-5)
    assert done.all()
    for j, a in enumerate(alpha):
        exact = float(_kernel_excess_mp(m, u, v, s, float(a)))
        assert lo[0, j] <= exact <= up[0, j], (a, lo[0, j], exact, up[0, j])
        assert up[0, j] - lo[0, j] <= 1e-4


def _eps6_window_kernel() -> tuple[int, float, float, np.ndarray, np.ndarray, np.ndarray]:
    """The kernel of eps0 = 6's clone pair at c = 5333 (a window reaching x ~ 1) at every default order, term by
    term: ``(m, u, v, orders, log upper, log lower)``, all of it finished."""
    from shuffle_accountant.composition import DEFAULT_ORDERS
    u = math.exp(6.0) / (math.exp(6.0) + 1.0)
    m, v = 5334, 1.0 - u
    alpha = np.array(DEFAULT_ORDERS, dtype=float)
    up, lo, done = R._exact_excess(np.array([m - 1.0]), np.array([u]), np.array([v]), 0.5, alpha, 1e-12, 2e-5)
    assert done.all()
    return m, u, v, alpha, up, lo


def test_log_space_kernel_with_a_window_to_x_one_brackets_brute_force() -> None:
    """Orders summed in log space (a window reaching x ~ 1, where f overflows e^600) with every order of the grid in
    one call (eps0 = 6's clone pair, c = 5333): g - f = -(1 + f'(s) y) is summed signed over the window's terms
    (it was bounded by 1 + |f'(s)| max|y| ~ 253 against a sum of ~420 at alpha = 128: a bracket 1.4 nats wide).
    Against the 40-digit kernel; the bracket within 1e-6 (fails with that old bound, or with |f'(s)| |y| summed
    unsigned, 0.018 wide)."""
    m, u, v, alpha, up, lo = _eps6_window_kernel()
    for a in (64.0, 128.0):
        j = int(np.flatnonzero(alpha == a)[0])
        exact = float(_kernel_excess_mp(m, u, v, 0.5, a))
        assert lo[0, j] <= exact <= up[0, j], (a, lo[0, j], exact, up[0, j])
        assert up[0, j] - lo[0, j] <= 1e-6, (a, up[0, j] - lo[0, j])


def test_linear_excess_bounds_the_exact_linear_part_at_cancellation():
    """``_linear_excess`` bounds ``(-1 - f'(s) y)_+`` with the exact ``f'(s) = alpha bp + (1 - alpha) bq``
    (exact rationals) where ``-1 - d y`` cancels (``y`` near ``-1/d``): the computed value alone, times
    ``1 + 1e-12`` (the charge before the review), falls below the exact one in some of these cases."""
    from fractions import Fraction

    rng = np.random.default_rng(11)
    short_old = 0
    for _ in range(400):
        bp, bq = float(rng.uniform(-3.0, 3.0)), float(rng.uniform(-3.0, 3.0))
        alpha = float(rng.choice([2.0, 8.0, 96.0, 1024.0, 1.5]))
        d = alpha * bp + (1.0 - alpha) * bq
        if d == 0.0:
            continue
        y = float(np.nextafter(-1.0 / d, rng.choice([-np.inf, np.inf])))
        exact_d = Fraction(alpha) * Fraction(bp) + (1 - Fraction(alpha)) * Fraction(bq)
        exact = max(-1 - exact_d * Fraction(y), Fraction(0))
        got = R._linear_excess(np.array([[bp]]), np.array([[bq]]), np.array([alpha]), np.array(y))[0, 0]
        assert Fraction(float(got)) >= exact, (bp, bq, alpha, y)
        if Fraction(max(-1.0 - d * y, 0.0) * (1.0 + 1e-12)) < exact:
            short_old += 1
    assert short_old > 0


@pytest.mark.parametrize(("m", "eps0", "alpha", "edge", "side", "w_est"), [
    (2585, 6.0, 160.0, 1647, 1, 19.64), (2585, 6.0, 192.0, 1647, 1, 28.42), (2791, 3.0, 896.0, 2720, -1, 756.23),
    (5914, 6.0, 512.0, 3896, 1, 80.0),  # the 16 pieces' bound (e^2784) above even the convexity bound's (e^2759)
])
def test_window_tail_on_finer_pieces_bounds_brute_force(m: int, eps0: float, alpha: float, edge: int, side: int,
                                                        w_est: float, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tails whose 16 equal pieces are far too coarse (the terms' log-ratio changes fastest next to the window and
    where q nears 0 at the far end; eps0 = 6, n = 1e6: the upper tail beyond a 400-term window bounded by e^476 for a
    true e^-740, so the window was widened twice to 1350 terms) are bounded again on the pieces of ``_TAIL_FRACS``:
    above the 40-digit tail, and below the window's tolerance (``log 1e-9 + w_est``, the window sum's log), which the
    16 equal pieces miss (asserted: fails when ``_TAIL_FRACS`` is the 16 equal pieces). The bound from both ends
    (``_log_tail_split``, tried last) is switched off here: it alone would also bring the 16 pieces' tails below the
    tolerance (see ``test_tail_split_bounds_brute_force``)."""
    monkeypatch.setattr(R, "_log_tail_split", lambda *args, **kw: np.inf)
    s = 0.5
    u = 1.0 / (1.0 + math.exp(-eps0))
    v = 1.0 - u
    bp, bq = np.array([(u - s) / (s * (1 - s))]), np.array([(v - s) / (s * (1 - s))])

    def tail(fracs: np.ndarray) -> float:
        monkeypatch.setattr(R, "_TAIL_FRACS", fracs)
        return float(R._window_tail(np.array([[float(edge)]]), np.array([float(m)]), s, side, np.array([u]),
                                    np.array([v]), bp, bq, np.array([alpha]), np.zeros(1, dtype=np.int64), 1e-13,
                                    math.log(1e-9), np.full((1, 1), w_est), np.array([[True]]))[0, 0])

    fine, equal = tail(R._TAIL_FRACS), tail(np.linspace(0.0, 1.0, R._TAIL_PIECES + 1))
    exact = float(_tail_mp(m, u, v, s, alpha, edge, side))
    assert exact <= fine <= math.log(1e-9) + w_est < equal, (exact, fine, equal)


@pytest.mark.parametrize(("m", "alpha", "alone"), [(3900, 768.0, True), (2450, 384.0, True), (2450, 256.0, False)])
def test_end_window_kernels_bracket_brute_force(m: int, alpha: float, alone: bool) -> None:
    """A large order whose sum lies at a = m although the bisection's root is interior (eps0 = 6's clone pair: m =
    3900, alpha = 768, the root's term e^326 at a = 2842, the sum e^1899 from a = m alone): the window is a few terms at
    a = m (it was the root's, widened twice to 1513 terms), and the bracket still holds the 40-digit kernel; where the
    root's sum dominates (m = 2450, alpha = 256) the window stays at the root. Fails without the end windows (asserted
    on the window's place: m = 3900, alpha = 768 and m = 2450, alpha = 384 had the root's)."""
    e, s = 6.0, 0.5
    u = math.exp(e) / (math.exp(e) + 1.0)
    v = 1.0 - u
    bp, bq = np.array([(u - s) / (s * (1 - s))]), np.array([(v - s) / (s * (1 - s))])
    lo_w, hi_w = R._tilted_window(np.array([float(m)]), s, bp, bq, np.array([alpha]), 6.0)
    if alone:
        assert hi_w[0, 0] == m and m - lo_w[0, 0] <= 64, (lo_w, hi_w)
    else:
        assert hi_w[0, 0] < 0.7 * m, (lo_w, hi_w)
    up, lo, done = R._exact_excess(np.array([m - 1.0]), np.array([u]), np.array([v]), s, np.array([alpha]), 1e-12,
                                   2e-5)
    assert done.all()
    exact = float(_kernel_excess_mp(m, u, v, s, alpha))
    assert lo[0, 0] <= exact <= up[0, 0], (lo[0, 0], exact, up[0, 0])
    assert up[0, 0] - lo[0, 0] <= 1e-4


@pytest.mark.parametrize(("eps0", "n", "groups"), [(1.0, 3000, 1), (0.5, 1000, 1), (1.0, 3500, 2)])
def test_slab_plan_merges_within_the_point_limit(eps0: float, n: int, groups: int,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Pairs with small likelihood ratios: neighbouring orders share one slab when it costs up to
    ``_SLAB_MERGE`` points more (eps0 = 1, n = 3e3 and eps0 = 0.5, n = 1e3 had two slabs), but no
    group of several runs exceeds ``_SLAB_MAX_POINTS`` (eps0 = 1, n = 3.5e3: the merged 0.9M-point
    group would be dropped whole). Only the work changes: the bracket meets the one of the previous
    plan (``_SLAB_MERGE`` = 2e4, uncapped), its upper end within rtol."""
    rtol = 1e-3
    orders = np.array(R.DEFAULT_ORDERS)
    pair = pair_for("clones", eps0, n).pair
    d = R.RenyiDirection(pair)
    up, lo, ok, _, _ = d.bounds(orders, rtol)
    assert ok
    assert len(d.slabs) == groups and np.all(d.slab_of >= 0)
    assert all(sl.points <= R._SLAB_MAX_POINTS for sl in d.slabs)
    monkeypatch.setattr(R, "_SLAB_MERGE", 20_000.0)
    prev = R.RenyiDirection(pair)
    p_up, p_lo, p_ok, _, _ = prev.bounds(orders, rtol)
    assert p_ok and len(prev.slabs) >= 1
    assert np.all(lo <= p_up + 1e-12) and np.all(p_lo <= up + 1e-12)
    d_new, d_prev = R._to_divergence(up, orders, True), R._to_divergence(p_up, orders, True)
    assert np.all(d_new <= d_prev * (1 + rtol) + 1e-15)


def _two_term_cases() -> list[tuple[float, float, float]]:
    """``(u, v, s)`` of the kernels at c = 0: the clone pairs' first users (both directions) at eps0 from
    1e-4 to 1.4 and beyond, and random kernels (some with ``p`` or ``q`` near 0 at an end)."""
    cases = []
    for method in ("clones", "stronger-clones"):
        for eps0 in (1e-4, 0.01, 0.3, 0.5, 1.0, 1.4, 2.0, 4.0):
            d = R.RenyiDirection(pair_for(method, eps0, 1000).pair)
            cases += [(d.pa1, d.pb1, d.s), (d.pb1, d.pa1, d.s)]
    rng = np.random.default_rng(13)
    for _ in range(24):
        s = float(rng.uniform(0.05, 0.95))
        u, v = (float(np.clip(s + rng.normal(0.0, 0.15), 1e-6, 1 - 1e-6)) for _ in range(2))
        cases.append((u, v, s))
    return cases


def test_two_term_excess_brackets_brute_force() -> None:
    """The kernel at c = 0 (m = 1, two terms) from ``g`` at ``x = 0, 1`` (:func:`R._two_term_excess`):
    where it answers, its bracket holds the 40-digit brute force of ``K - 1`` from the kernel's definition
    and is at most ``_TWO_TERM_WIDTH`` wide; it answers for the clone pairs at eps0 0.5 and 1 (the curves
    whose entry at c = 0 it takes)."""
    orders = np.array([1.01, 1.25, 2.0, 3.7, 10.0, 64.0, 256.0, 1024.0, 4096.0])
    answered = 0
    for u, v, s in _two_term_cases():
        up, lo, ok = R._two_term_excess(np.array([u]), np.array([v]), s, orders)
        if not ok[0]:
            continue
        answered += 1
        assert np.all(up[0] - lo[0] <= R._TWO_TERM_WIDTH)
        for a, hi_, lo_ in zip(orders, up[0], lo[0]):
            exact = float(_kernel_excess_mp(1, u, v, s, float(a)))
            assert lo_ <= exact <= hi_, (u, v, s, a, lo_, exact, hi_)
    assert answered >= 20
    for eps0 in (0.5, 1.0):
        d = R.RenyiDirection(pair_for("clones", eps0, 1000).pair)
        assert R._two_term_excess(np.array([d.pa1]), np.array([d.pb1]), d.s, orders)[2][0]


def test_curve_takes_the_entry_at_c0_by_two_terms(monkeypatch: pytest.MonkeyPatch) -> None:
    """eps0 = 1, n = 3e3 (one slab) and n = 1e6 (no slab): the entry at c = 0, in a call of its own or beside
    large windows, no longer goes through the term-by-term sums; small supports (n = 10) keep it in their
    one call. The brackets meet those of every entry summed term by term, upper ends within rtol."""
    calls: list[np.ndarray] = []
    exact = R._exact_excess

    def spy(c: np.ndarray, *args: object, **kw: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        calls.append(np.asarray(c).copy())
        return exact(c, *args, **kw)

    orders = np.array(R.DEFAULT_ORDERS)
    for n, takes in ((3000, True), (10**6, True), (10, False)):
        pair = pair_for("clones", 1.0, n).pair
        calls.clear()
        monkeypatch.setattr(R, "_exact_excess", spy)
        d = R.RenyiDirection(pair)
        up, lo, ok, _, _ = d.bounds(orders, 1e-3)
        assert ok
        zero = np.flatnonzero(d.ent_c == 0.0)
        assert zero.size == 1 and np.all(d.ent_done[zero]) and np.all(np.isfinite(d.ent_up[zero]))
        assert any(np.any(c == 0.0) for c in calls) != takes
        monkeypatch.setattr(R, "_TWO_TERM_WIDTH", -1.0)  # (never answers: every entry term by term)
        p_up, p_lo, p_ok, _, _ = R.RenyiDirection(pair).bounds(orders, 1e-3)
        monkeypatch.undo()
        assert p_ok and np.all(lo <= p_up + 1e-12) and np.all(p_lo <= up + 1e-12)
        assert np.all(R._to_divergence(up, orders, True) <= R._to_divergence(p_up, orders, True) * (1 + 1e-3) + 1e-15)


def test_dropped_terms_charged_with_the_error_of_their_log_mass() -> None:
    """A term whose computed log M is below -700 is dropped and charged; its true M is only known to be below
    e^(-700 + err_log_m), so the charge must allow that (it was e^-700 each, short by e^err_log_m). Two dropped
    terms with err_log_m = 0.5 and g <= 2 each: the upper end is at least 2 * 2 * e^-699.5."""
    from shuffle_accountant.numeric import renyi as rn

    z = np.zeros((1, 2))
    log_up, log_lo, _ = rn._window_orders(
        np.full((1, 2), -800.0), z.copy(), np.array([2]), np.array([0.5]), z.copy(), z.copy(), z.copy(), None, None,
        np.array([0.0]), np.array([0.0]), np.array([0.0]), np.array([2.0]), (np.empty(64), np.empty(64)))
    assert float(log_up[0, 0]) >= math.log(4.0) - 699.5
    assert float(log_lo[0, 0]) == -math.inf


@pytest.mark.slow
def test_log_space_kernel_with_a_window_to_x_one_every_order() -> None:
    """The kernel of the test above (eps0 = 6, c = 5333) at every one of the 40 default orders, each against the
    40-digit kernel (the test above checks alpha = 64 and 128 only; ~55 s)."""
    m, u, v, alpha, up, lo = _eps6_window_kernel()
    for j, a in enumerate(alpha):
        exact = float(_kernel_excess_mp(m, u, v, 0.5, float(a)))
        assert lo[0, j] <= exact <= up[0, j], (a, lo[0, j], exact, up[0, j])


@pytest.mark.parametrize("log_rho, count", [(0.5, 3.0), (-0.5, 3.0), (0.0, 7.0), (2.0, 0.0)])
def test_log_geometric_takes_scalars(log_rho: float, count: float) -> None:
    """_log_geometric on scalars (its masked assignments raised TypeError for a 0-d rho > 1 after d0d90a0;
    found by review) against the direct sum."""
    from shuffle_accountant.numeric import renyi as rn

    got = float(rn._log_geometric(log_rho, count))
    want = math.log(sum(math.exp(log_rho * i) for i in range(1, int(count) + 1))) if count > 0 else -math.inf
    assert got == want or abs(got - want) <= 1e-14 * abs(want)


@pytest.mark.parametrize("m, p, k, width", [(3_000_000_000, 0.5, 1_500_003_000, 1), (3_000_000_000, 0.37, 1_110_000_000, 4),
                                            (1_200_000_000, 0.041, 49_200_100, 1), (2**33, 0.5, 2**32 - 7000, 3)])
def test_edge_masses_near_the_mean_charge_each_tail_its_own_budget(m: int, p: float, k: int, width: int) -> None:
    """A narrow cell next to the mean is a difference of two tails near 1/2. Each tail is charged its own
    budget (bn.tail_error_budget: the pmf's away from Boost's series path), not 2 n u: that made a unit cell's
    mass uncertain by ~1e-2 relative at n = 3e9, a floor that splitting only raised (rdp_curve(3.15, 3e9)
    refined for 200 rounds). The bracket still covers the 40-digit mass, and is narrow."""
    edges = np.array([[0.0, float(k), float(k + width), float(m + 1)]])
    mass, err = R._edge_masses(edges, np.array([float(m)]), p)
    exact = float(_binom_interval_mp(k, k + width - 1, m, p))
    assert abs(mass[0, 1] - exact) <= err[0, 1]
    assert err[0, 1] <= 1e-3 * exact  # (2 n u per tail: 1e-2 of a unit cell at n = 3e9; now ~1e-4)


def test_curve_past_two_billion_converges() -> None:
    """Regression (review of stop 22): rdp_curve(1.4, 3e9) stopped unconverged after 6.5 s and rdp_curve(3.15,
    3e9) ran for minutes, both on the cells' Boost budget floor (test above); now both converge."""
    from shuffle_accountant.composition import rdp_curve

    for eps0 in (1.4, 3.15):
        curve = rdp_curve(eps0, 3 * 10**9)
        assert curve.converged
        assert all(lo <= up <= lo * (1.0 + 1.1e-3) for lo, up in zip(curve.lower, curve.upper))


def test_refinement_stops_after_idle_rounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """A round whose splits narrow nothing still counts as refined; _IDLE_ROUNDS of them in a row end the search
    (before the guard such rounds ran to max_rounds). Splits that do nothing stand in for floor-limited ones."""
    calls = {"n": 0}

    def no_op(self: R.RenyiDirection, *args: object, **kwargs: object) -> bool:
        calls["n"] += 1
        return True

    monkeypatch.setattr(R.RenyiDirection, "_refine_inner", no_op)
    monkeypatch.setattr(R.RenyiDirection, "_refine_outer", no_op)
    monkeypatch.setattr(R.RenyiDirection, "_refine_slabs", no_op)
    pair = pair_for("clones", 1.0, 10**5).pair
    orders = np.array([2.0, 8.0, 64.0])
    d = R.RenyiDirection(pair)
    up, lo, converged, _, _ = d.bounds(orders, 1e-9)
    assert not converged and d.idle_stop
    assert 1 <= calls["n"] <= 3 * (R._IDLE_ROUNDS + 1)
    assert np.all(lo <= up)
    # renyi_bounds does not re-run such a direction with every entry at every order (which stalls alike)
    calls["n"] = 0
    R.renyi_bounds(pair, orders, rtol=1e-9)
    assert 1 <= calls["n"] <= 3 * (R._IDLE_ROUNDS + 1)


@pytest.mark.parametrize("eps0", [0.5, 2.0])
def test_curve_at_the_smallest_rtol_converges_at_1e9(eps0: float) -> None:
    """Regression (review of 0e112ff): rdp_curve(0.5, 1e9, rtol=1e-4) stopped unconverged after 35 s CPU (9 s
    before 0e112ff), on the first-moment charge of the cells' pmf values (test above); now it converges."""
    from shuffle_accountant.composition import rdp_curve

    curve = rdp_curve(eps0, 10**9, rtol=1e-4)
    assert curve.converged
    assert all(lo <= up <= lo * (1.0 + 1.1e-4) for lo, up in zip(curve.lower, curve.upper))


def _f_tail_mp(m: int, u: float, v: float, s: float, alpha: float, edge: int, side: int) -> mpmath.mpf:
    """``log sum_{a beyond edge} M(a) p^alpha q^(1-alpha)`` by 40-digit brute force (``M = Bin(m, s)``,
    ``p = u x/s + (1-u)(1-x)/(1-s)``, ``q`` with ``v``: the kernel's first-user weights written directly)."""
    with mpmath.workdps(40):
        s_, u_, v_, a_ = mpmath.mpf(s), mpmath.mpf(u), mpmath.mpf(v), mpmath.mpf(alpha)
        rng = range(edge + 1, m + 1) if side == 1 else range(0, edge)
        total = mpmath.mpf(0)
        for a in rng:
            x = mpmath.mpf(a) / m
            p = u_ * x / s_ + (1 - u_) * (1 - x) / (1 - s_)
            q = v_ * x / s_ + (1 - v_) * (1 - x) / (1 - s_)
            total += mpmath.binomial(m, a) * s_**a * (1 - s_) ** (m - a) * p**a_ * q ** (1 - a_)
        return mpmath.log(total)


def _term_mp(m: int, u: float, v: float, s: float, alpha: float, a: int) -> float:
    with mpmath.workdps(40):
        s_, u_, v_ = mpmath.mpf(s), mpmath.mpf(u), mpmath.mpf(v)
        x = mpmath.mpf(a) / m
        p = u_ * x / s_ + (1 - u_) * (1 - x) / (1 - s_)
        q = v_ * x / s_ + (1 - v_) * (1 - x) / (1 - s_)
        return float(mpmath.log(mpmath.binomial(m, a) * s_**a * (1 - s_) ** (m - a) * p**alpha * q ** (1 - alpha)))


@pytest.mark.parametrize(("m", "eps0", "alpha", "edge", "side"), [
    (1500, 4.0, 256.0, 1327, 1), (1500, 4.0, 256.0, 1447, 1), (800, 4.0, 128.0, 740, 1), (800, 6.0, 64.0, 726, 1),
    (1500, 4.0, 256.0, 173, -1), (800, 6.0, 64.0, 74, -1), (400, 2.0, 8.0, 300, 1), (700, 3.0, 1024.0, 20, -1),
    (1500, 4.0, 256.0, 1498, 1), (1500, 4.0, 256.0, 2, -1),
])
def test_tail_split_bounds_brute_force(m: int, eps0: float, alpha: float, edge: int, side: int) -> None:
    """The tail bound from both ends (``_log_tail_split``: pieces from the window's edge up to a cut, pieces from the
    end of the support ``E`` inwards to it, and the term at ``E``) is above the 40-digit tail of ``M f``, and where the
    terms fall and then rise again towards ``E`` (eps0 = 4, m = 1500, alpha = 256: down from the edge 1327, up to
    e^-19.0 at a = m) within 0.1 of it, where the bound from the edge alone (``_log_tail_f`` on ``_TAIL_FRACS``) is
    e^21 above. Side -1: the mirrored pair (``u, v -> 1 - u, 1 - v``, the end ``a = 0``). Fails without the term at
    ``E`` (the bound falls below the tail), or with the inward pieces run in the edge's direction."""
    s = 0.5
    u = 1.0 / (1.0 + math.exp(-eps0))
    v = 1.0 - u
    if side == -1:
        u, v = 1.0 - u, 1.0 - v
    bp, bq = np.array([(u - s) / (s * (1 - s))]), np.array([(v - s) / (s * (1 - s))])
    end = m if side == 1 else 0
    t_edge = _term_mp(m, u, v, s, alpha, edge)
    t_end = _term_mp(m, u, v, s, alpha, end)
    args = (np.array([[float(edge)]]), np.array([float(m)]), s, side, np.array([u]), np.array([v]), bp, bq,
            np.array([alpha]), np.zeros(1, dtype=np.int64))
    lead = (np.array([[t_edge + 1e-12 * (1.0 + abs(t_edge))]]),)
    split = float(R._log_tail_split(*args, *lead, np.array([[t_end + 1e-12 * (1.0 + abs(t_end))]]))[0, 0])
    one = float(R._log_tail_f(*args, *lead, fracs=R._TAIL_FRACS)[0, 0])
    exact = float(_f_tail_mp(m, u, v, s, alpha, edge, side))
    assert exact <= split, (exact, split)
    if (m, alpha, edge) in ((1500, 256.0, 1327), (1500, 256.0, 173)):
        assert split <= exact + 0.1 and one > exact + 20.0, (exact, split, one)


def test_window_tail_rising_to_the_end_within_tolerance(monkeypatch: pytest.MonkeyPatch) -> None:
    """``_window_tail`` takes the bound from both ends where the others leave the tail above the window's tolerance
    (eps0 = 4, n = 3e5, alpha = 1024, m = 5391: a tail of e^367.5 bounded by e^528, so the window was widened twice to
    a = m; here m = 1500, alpha = 256, edge 1327): the tail of ``M g`` stays above its 40-digit value and below the
    tolerance, which it exceeds with ``_log_tail_split`` switched off."""
    m, eps0, alpha, edge = 1500, 4.0, 256.0, 1327
    s = 0.5
    u = 1.0 / (1.0 + math.exp(-eps0))
    v = 1.0 - u
    bp, bq = np.array([(u - s) / (s * (1 - s))]), np.array([(v - s) / (s * (1 - s))])
    log_tol, w_est = math.log(1e-9), 10.0  # the tolerance: e^(log_tol + w_est) = e^-10.7

    def tail() -> float:
        return float(R._window_tail(np.array([[float(edge)]]), np.array([float(m)]), s, 1, np.array([u]),
                                    np.array([v]), bp, bq, np.array([alpha]), np.zeros(1, dtype=np.int64), 1e-13,
                                    log_tol, np.full((1, 1), w_est), np.array([[True]]))[0, 0])

    both = tail()
    exact = float(_tail_mp(m, u, v, s, alpha, edge, 1))
    assert exact <= both <= log_tol + w_est, (exact, both)
    monkeypatch.setattr(R, "_log_tail_split", lambda *args, **kw: np.inf)
    assert tail() > log_tol + w_est


@pytest.mark.parametrize("c, s, offset, width", [(606_515_210, 0.5, 12_306, 7), (606_515_210, 0.5, -24_000, 24),
                                                 (999_999_999, 0.37, 5_000, 3), (3_000_000_000, 0.5, 40_000, 10)])
def test_kernel_cell_mass_and_moment_near_the_mean_at_large_c(c: int, s: float, offset: int, width: int) -> None:
    """A cell of Bin(c+1, s) a few sd from the mean at c ~ 1e9: its mass and first moment (the chord's weight)
    bracket the 40-digit values, and the moment's bracket is narrower than it. The moment charged its pmf
    values the population's flat budget (2 n u included) before: up to 35x the moment itself, which made
    rdp_curve(0.5, 1e9, rtol=1e-4) stall with ever more cells."""
    m1 = c + 1
    a1 = int(round(s * m1)) + offset
    edges = np.array([[0.0, float(a1), float(a1 + width), float(c + 2)]])
    k = R._Kernel(np.array([float(c)]), np.array([0.6]), np.array([0.4]), s, edges)
    with mpmath.workdps(40):
        sp = mpmath.mpf(s)
        terms = [mpmath.exp(mpmath.loggamma(m1 + 1) - mpmath.loggamma(a + 1) - mpmath.loggamma(m1 - a + 1)
                            + a * mpmath.log(sp) + (m1 - a) * mpmath.log(1 - sp)) for a in range(a1, a1 + width)]
        mass = float(mpmath.fsum(terms))
        dd = float(mpmath.fsum((a - a1) * t for a, t in zip(range(a1, a1 + width), terms)) / m1)
    assert abs(k.mass[0, 1] - mass) <= k.mass_err[0, 1]
    assert abs(k.dd[0, 1] - dd) <= k.dd_err[0, 1]
    # (with 2 n u on the pmf values: 2x, 0.15x, 35x and 22x dd in these cases; now 0.002 .. 0.2x, the rest
    # being the mass's Boost budget times |a1 - mean| / width: the moment formula's cancellation)
    assert k.dd_err[0, 1] <= 0.25 * dd


def test_refinement_stops_beyond_the_cell_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """New entries copy their neighbours' cells, so cells outgrew _MAX_CELLS (which only stops splits): orders
    1e5 and 1e6 at n = 1e6 reached 1.5 million cells and ran > 400 s (read-only review). Past the limit a
    direction now stops, certified, and is not re-run; its bracket overlaps the converged one."""
    pair = pair_for("clones", 0.5, 10**8).pair  # (7677 cells at these orders and rtol)
    orders = np.array([2.0, 16.0, 256.0, 1024.0])
    ref_up, ref_lo, ok, _, _ = R.RenyiDirection(pair).bounds(orders, 1e-4)
    assert ok
    monkeypatch.setattr(R, "_MAX_CELLS", 1000)
    d = R.RenyiDirection(pair)
    up, lo, ok, _, _ = d.bounds(orders, 1e-4)
    assert not ok and d.idle_stop
    assert d.cell_ent.size <= 4000
    assert np.all(lo <= ref_up) and np.all(ref_lo <= up)


@pytest.mark.parametrize("m, b0", [(609479, 99953), (798118, None)])
def test_tail_piece_charges_the_rounding_of_its_running_sum(m: int, b0: int | None) -> None:
    """A one-term piece of _tail_pieces at log ~ -1.5e5 against its 50-digit value, from an edge value rounded up:
    the bound came out 4.5e-12 below it (one ulp is 2.9e-11) before the running sum's rounding was charged
    (read-only review of 5c7fadf; the second case, at m = 798118, is a neighbour that passed before too)."""
    s, u, alpha, side = 0.5, 0.6918608895327178, 2.1718323989468553, -1
    v = 1.0 - u
    b0 = b0 if b0 is not None else round(99953 * 798118 / 609479)

    def log_term(a: int) -> mpmath.mpf:
        with mpmath.workdps(50):
            m_, a_, s_, u_, v_, al = map(mpmath.mpf, (m, a, s, u, v, alpha))
            x = a_ / m_
            p = u_ * x / s_ + (1 - u_) * (1 - x) / (1 - s_)
            q = v_ * x / s_ + (1 - v_) * (1 - x) / (1 - s_)
            return (mpmath.log(mpmath.binomial(m_, a_)) + a_ * mpmath.log(s_) + (m_ - a_) * mpmath.log(1 - s_)
                    + al * mpmath.log(p) + (1 - al) * mpmath.log(q))

    t0 = log_term(b0)
    edge = float(t0)
    edge = edge if mpmath.mpf(edge) >= t0 else float(np.nextafter(edge, np.inf))
    bp, bq = (u - s) / (s * (1 - s)), (v - s) / (s * (1 - s))
    got = R._tail_pieces(np.array([[[float(b0), float(b0 - 1)]]]), np.array([float(m)]), s, side, np.array([u]),
                         np.array([v]), np.array([bp]), np.array([bq]), np.array([alpha]), np.zeros(1, dtype=np.int64),
                         np.array([[edge]]))[0, 0, 0]
    with mpmath.workdps(50):
        assert mpmath.mpf(float(got)) >= log_term(b0 - 1)


def test_window_tail_orders_independent_of_each_other() -> None:
    """The 16 pieces of a tail are taken only at the orders whose one-piece bound missed the window's tolerance: an
    order's bound in a call with other orders is the one it gets alone (before, every order of a row took the 16
    pieces once one of them asked: eps0 = 3, m = 400, alpha = 8 came out e^-2.05 next to alpha = 512 and e^17.9
    alone, both within the tolerance e^29.3), and each bounds the 40-digit tail."""
    s, eps0, m, edge, w_est = 0.5, 3.0, 400, 220, 50.0
    u = 1.0 / (1.0 + math.exp(-eps0))
    v = 1.0 - u
    bp, bq = np.array([(u - s) / (s * (1 - s))]), np.array([(v - s) / (s * (1 - s))])

    def tail(al: np.ndarray) -> np.ndarray:
        return R._window_tail(np.array([[float(edge)]]), np.array([float(m)]), s, 1, np.array([u]), np.array([v]),
                              bp, bq, al, np.zeros(al.size, dtype=np.int64), 1e-13, math.log(1e-9),
                              np.full((1, al.size), w_est), np.array([[True]]))[0]

    al = np.array([2.0, 8.0, 64.0, 512.0])
    together = tail(al)
    for j, a in enumerate(al):
        assert together[j] == tail(al[j:j + 1])[0], (a, together[j])
        assert float(_tail_mp(m, u, v, s, float(a), edge, 1)) <= together[j], a


@pytest.mark.parametrize(("eps0", "m", "start", "width"), [
    (3.0, 400, 0, 401), (6.0, 2585, 1200, 1386), (6.0, 7804, 5069, 2736), (10.0, 900, 0, 300), (2.6, 3000, 2500, 501),
])
def test_first_user_row_error_bounds_every_term(eps0: float, m: int, start: int, width: int) -> None:
    """The per-row error bound of the terms' ``log p``, ``log q`` (:func:`_first_user_row_err`, from the row's largest
    ``|log|``, ``|y|`` and least ``b y``) is at least the largest elementwise bound of :func:`_log_first_user` over the
    row's finite terms, for both users (``p`` near 0 at one end of ``x``, ``q`` at the other), and the values without
    the bound are the same numbers."""
    s = 0.5
    u = 1.0 / (1.0 + math.exp(-eps0))
    v = 1.0 - u
    bp, bq = (u - s) / (s * (1 - s)), (v - s) / (s * (1 - s))
    a = np.arange(start, start + width, dtype=float)[None, :]
    y = (a - s * m) / m
    x = a / m
    y_abs = np.max(np.abs(y[:, [0, -1]]), axis=1)
    for b, w in ((bp, u), (bq, v)):
        lg, err = R._log_first_user(np.array([[b]]), np.array([[w]]), x, y, s, 4 * R._U * (np.abs(y) + s))
        lg2, none = R._log_first_user(np.array([[b]]), np.array([[w]]), x, y, s, None)
        assert none is None and np.array_equal(lg, lg2)
        fin = np.isfinite(lg)
        z_min = np.min(b * y[:, [0, -1]], axis=1)
        has_far = np.any(fin & ~(b * y > -0.5), axis=1)
        row, lg_max = R._first_user_row_err(lg, fin, np.array([b]), np.array([w]), s, y_abs, z_min, has_far)
        assert err is not None and row[0] >= np.max(np.where(fin, err, 0.0)), (b, row, np.max(err[fin]))
        assert lg_max[0] == np.max(np.abs(lg[fin]))


def test_first_user_values_from_a_and_m_and_used_groups() -> None:
    """``_log_first_user`` given ``(a, m)`` divides only where it uses ``x = a / m`` (the same values as from the
    quotients where ``p >= 1/2``; where it is smaller, ``1 - x`` as ``(m - a) / m``, within 8 u of the 40-digit log
    at the exact ``a / m`` and the given weights: read-only review rev81), and a tail bound on the groups its
    orders use only equals the one on every group."""
    s, u, m = 0.5, 1.0 / (1.0 + math.exp(-6.0)), 2000
    v = 1.0 - u
    a = np.arange(0.0, m + 1.0)[None, :]
    y = (a - s * m) / m
    for b, w in (((u - s) / (s * (1 - s)), u), ((v - s) / (s * (1 - s)), v)):
        lg = R._log_first_user(np.array([[b]]), np.array([[w]]), a / m, y, s, None)[0]
        lg2 = R._log_first_user(np.array([[b]]), np.array([[w]]), (a, np.array([[float(m)]])), y, s, None)[0]
        far = b * y <= -0.5
        assert np.array_equal(lg[~far], lg2[~far]) and np.any(np.isfinite(lg) & far)
        with mpmath.workdps(40):
            for i in np.flatnonzero(far[0] & np.isfinite(lg2[0]))[::7]:
                x = mpmath.mpf(int(a[0, i])) / m
                exact = mpmath.log(mpmath.mpf(w) * x / s + (1 - mpmath.mpf(w)) * (1 - x) / (1 - mpmath.mpf(s)))
                assert abs(lg2[0, i] - exact) <= 8 * R._U * max(1.0, abs(float(exact))), (i, lg2[0, i], exact)
    edge = np.array([[900.0, 1300.0, 1500.0]])  # three groups; the orders use the last two
    gidx = np.array([1, 2, 2])
    al = np.array([256.0, 768.0, 1024.0])
    bp, bq = np.array([(u - s) / (s * (1 - s))]), np.array([(v - s) / (s * (1 - s))])
    t_edge = np.zeros((1, 3))
    args = (np.array([float(m)]), s, 1, np.array([u]), np.array([v]), bp, bq, al)
    e_g, g_c = R._used_groups(edge, gidx)
    assert e_g.shape == (1, 2) and g_c.tolist() == [0, 1, 1]
    assert np.array_equal(R._log_tail_f(edge, *args, gidx, t_edge, fracs=R._TAIL_FRACS),
                          R._log_tail_f(e_g, *args, g_c, t_edge, fracs=R._TAIL_FRACS))


def test_first_blocks_skip_orders_whose_sums_lie_far_below(monkeypatch: pytest.MonkeyPatch) -> None:
    """At eps0 = 6, n = 3.16e6 the largest orders' sums lie far below the clone count's mean: the first blocks around
    it are not evaluated at those orders (their entries there are the envelope's), and the curve keeps its bracket:
    each order's bracket overlaps the one evaluated at every order first, both converged, the upper ends within rtol
    of each other."""
    sp = pair_for("clones", 6.0, 3162278, None)
    alpha = R.check_orders(R.DEFAULT_ORDERS)
    seen: list[np.ndarray] = []
    first = R.RenyiDirection._add_first_blocks

    def spy(self: R.RenyiDirection, lo: np.ndarray, hi: np.ndarray, need_lo: np.ndarray | None, rtol: float,
            log_scale: float) -> None:
        first(self, lo, hi, need_lo, rtol, log_scale)
        seen.append(self.ent_done.copy())

    monkeypatch.setattr(R.RenyiDirection, "_add_first_blocks", spy)
    two = R.renyi_bounds(sp.pair, alpha, rtol=1e-3, scale=sp.scale)
    assert seen and not np.all(seen[0][:, -3:]) and np.all(np.any(seen[0], axis=0))  # the top orders skipped somewhere
    monkeypatch.setattr(R.RenyiDirection, "_end_far_below", lambda self, a, z: False)
    one = R.renyi_bounds(sp.pair, alpha, rtol=1e-3, scale=sp.scale)
    assert two.converged and one.converged
    for lo1, up1, lo2, up2 in zip(one.lower, one.upper, two.lower, two.upper):
        assert lo2 <= up1 and lo1 <= up2 and abs(up2 - up1) <= 1e-3 * up1


def test_blocks_scored_far_beyond_the_budget_split_in_more_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    """A block scored above ``_HUGE_SCORE`` budgets is split into ``_HUGE_SPLIT`` parts in one round (four before),
    which tile it; a block scored below keeps at most ``_MAX_SPLIT``; and the curve where such scores occur (eps0 = 6, n
    = 2.15e6: 1e100 .. 1e300 at the lowest blocks) converges with its blocks tiling the totals, its bracket overlapping
    the one of four parts at most, upper ends within rtol."""
    pair = pair_for("clones", 6.0, 2154435).pair
    orders = np.array(R.DEFAULT_ORDERS)
    d = R.RenyiDirection(pair)
    d.bounds(orders, 1e-3, max_rounds=0)
    nb = d.lo.size
    wide = int(np.argmax(d.hi - d.lo))
    lo0, hi0 = float(d.lo[wide]), float(d.hi[wide])
    for value, parts in ((1e50, R._HUGE_SPLIT), (1e3, R._MAX_SPLIT)):
        score = np.zeros(d.lo.size)
        score[int(np.argmax((d.lo == lo0) & (d.hi == hi0))) if value == 1e50 else int(np.argmax(d.hi - d.lo))] = value
        before = d.lo.size
        a, b = float(d.lo[np.argmax(score)]), float(d.hi[np.argmax(score)])
        assert d._refine_outer(score, 0.3)
        assert d.lo.size - before == parts - 1
        new = (d.lo >= a) & (d.hi <= b)
        assert int(np.sum(new)) == parts and np.sum(d.hi[new] - d.lo[new] + 1.0) == b - a + 1.0
    assert d.lo.size == nb + R._HUGE_SPLIT + R._MAX_SPLIT - 2
    rtol = 1e-3
    d2 = R.RenyiDirection(pair)
    up, lo, ok, _, _ = d2.bounds(orders, rtol)
    order = np.argsort(d2.lo)
    blo, bhi = d2.lo[order], d2.hi[order]
    assert blo[0] == 0.0 and bhi[-1] == float(pair.n) and np.all(blo[1:] == bhi[:-1] + 1.0) and np.all(bhi >= blo)
    monkeypatch.setattr(R, "_HUGE_SPLIT", R._MAX_SPLIT)
    q_up, q_lo, q_ok, _, _ = R.RenyiDirection(pair).bounds(orders, rtol)
    assert ok and q_ok
    assert np.all(lo <= q_up + 1e-12) and np.all(q_lo <= up + 1e-12)
    d_new, d_old = R._to_divergence(up, orders, True), R._to_divergence(q_up, orders, True)
    assert np.all(d_new <= d_old * (1 + rtol) + 1e-15)


def test_slab_clip_floor_predicts_the_orders_left_stuck(monkeypatch: pytest.MonkeyPatch) -> None:
    """eps0 = 3, n = 31623: a slab of orders 256 .. 1024 around x = 1 that also holds the bulk keeps its points
    near x = 1 only as weights clipped at e^-700 of the largest, and its bracket stays e^100 .. e^323 budgets wide
    at the finest cells. ``_slab_clip_floor`` estimates that width before the build: here within e^8 of the
    measured level-0 gaps (every planned order, the predictor and the drop disabled), and those orders then get
    no slab at all; an order predicted far below its budget is never stuck. The curve's bracket meets the one
    without the prediction, its upper end within rtol (only the work changes)."""
    rtol = 1e-3
    orders = np.array(R.DEFAULT_ORDERS)
    pair = pair_for("clones", 3.0, 31623).pair
    monkeypatch.setattr(R, "_SLAB_MAX_POINTS_WIDE", 4_000_000)
    monkeypatch.setattr(R, "_SLAB_WIDE_COUNT", 1e9)
    with monkeypatch.context() as mp:
        mp.setattr(R, "_SLAB_CLIP_MARGIN", None)
        mp.setattr(R, "_SLAB_DROP_STUCK", 0.0)
        raw = R.RenyiDirection(pair)
        raw.alpha = orders
        raw._tail_tol = max(0.02 * rtol, 1e-15)
        raw._build_slabs(rtol, 0.0)
        l_lo = np.logaddexp(0.0, raw.slab_lo)
        with np.errstate(all="ignore"):
            budget = math.log(rtol) + np.log(np.maximum(l_lo, 1e-300)) + l_lo
            gap = np.log(np.exp(raw.slab_up - budget) - np.exp(raw.slab_lo - budget))
        checked = 0
        for sl in raw.slabs:
            js = sl.orders[raw.slab_of[sl.orders] >= 0]
            floor = R._slab_clip_floor(float(raw.N), raw.p, raw.s, raw.bp1, raw.bq1, orders[js], sl.c1, sl.c2,
                                       sl.x_lo, sl.x_hi) - budget[js]
            hot = floor > 0.0
            stuck = (raw.slab_level[js] == 0) & ~(gap[js] <= 0.0)
            assert np.all(stuck[hot]) and np.all(np.abs(gap[js][hot] - floor[hot]) <= 8.0)
            assert not np.any(stuck[floor < -10.0])
            checked += int(np.sum(hot))
        assert checked >= 5
    with monkeypatch.context() as mp:
        mp.setattr(R, "_SLAB_CLIP_MARGIN", None)
        off = R.RenyiDirection(pair)
        o_up, o_lo, o_ok, _, _ = off.bounds(orders, rtol)
    built: list[np.ndarray] = []
    real_slab = R._Slab

    def record(*args: object) -> R._Slab:
        sl = real_slab(*args)  # type: ignore[arg-type]
        built.append(sl.orders)
        return sl

    monkeypatch.setattr(R, "_Slab", record)
    stuck_from = np.flatnonzero(orders >= 320.0)[0]
    # without scaled slabs (helper slab101's _SLAB_SCALED) the stuck orders get no slab at all; with them, a slab of
    # their own with a scale per block of cells (R set), the others the plain slab; either way the same bracket
    for scaled in (False, True):
        built.clear()
        with monkeypatch.context() as mp:
            mp.setattr(R, "_SLAB_SCALED", scaled)
            d = R.RenyiDirection(pair)
            up, lo, ok, _, _ = d.bounds(orders, rtol)
        assert ok and o_ok
        assert np.max(built[0]) < stuck_from
        if scaled:
            assert len(built) == 2 and np.min(built[1]) == stuck_from
            assert d.slabs[1].R is not None and d.slabs[0].R is None
        else:
            assert len(built) == 1 and np.all(d.slab_of[orders >= 320.0] < 0)
        assert np.all(lo <= o_up + 1e-12) and np.all(o_lo <= up + 1e-12)
        assert np.all(R._to_divergence(up, orders, True) <= R._to_divergence(o_up, orders, True) * (1 + rtol) + 1e-15)


def _slab_cost(sl: R._Slab) -> float:
    """The points of a slab's rectangle, as ``_build_slabs`` counts them against its limits."""
    return (sl.c2 - sl.c1 + 1.0) * ((sl.x_hi - sl.x_lo) * (sl.c2 + 1.0) + 1.0)


@pytest.mark.parametrize(("eps0", "n"), [(4.0, 68129), (2.0, 10000)])
def test_wide_pairs_slabs_beyond_the_narrow_point_limit(eps0: float, n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pairs with log likelihood ratios above ``_SLAB_RECT_RATIO`` keep slabs up to ``_SLAB_MAX_POINTS_WIDE`` points
    (counts up to ``_SLAB_WIDE_COUNT``): at these n the slabs hold more than ``_SLAB_MAX_POINTS`` and cover every
    order. The bracket meets the one with the narrow limit (fewer or no slabs: blocks of totals with monotone corners,
    an independent path), the upper end within rtol."""
    rtol = 1e-3
    orders = np.array(R.DEFAULT_ORDERS)
    pair = pair_for("clones", eps0, n).pair
    assert pair.max_log_ratio > R._SLAB_RECT_RATIO
    d = R.RenyiDirection(pair)
    up, lo, ok, _, _ = d.bounds(orders, rtol)
    assert ok
    assert sum(_slab_cost(sl) for sl in d.slabs) > R._SLAB_MAX_POINTS and np.all(d.slab_of >= 0)
    monkeypatch.setattr(R, "_SLAB_MAX_POINTS_WIDE", None)
    prev = R.RenyiDirection(pair)
    p_up, p_lo, p_ok, _, _ = prev.bounds(orders, rtol)
    assert p_ok
    assert sum(_slab_cost(sl) for sl in prev.slabs) <= R._SLAB_MAX_POINTS
    assert np.all(lo <= p_up + 1e-12) and np.all(p_lo <= up + 1e-12)
    assert np.all(R._to_divergence(up, orders, True) <= R._to_divergence(p_up, orders, True) * (1 + rtol) + 1e-15)


def test_log_geometric_on_arrays_against_mpmath() -> None:
    """_log_geometric elementwise on an array mixing every branch (rho < 1, rho > 1, |log rho| < 1e-300, count 0)
    against 40-digit sums: its special cases are assigned in place at their elements only."""
    log_rho = np.array([[-0.5, 0.3, 0.0, 1e-310, -2.0], [5.0, -1e-3, 0.7, -1e-305, -40.0]])
    count = np.array([[3.0, 4.0, 7.0, 5.0, 0.0], [2.0, 1000.0, 0.0, 3.0, 12.0]])
    got = R._log_geometric(log_rho, count)
    assert got.shape == log_rho.shape
    with mpmath.workdps(40):
        for (i, j), lr in np.ndenumerate(log_rho):
            n = int(count[i, j])
            if n == 0:
                assert got[i, j] == -np.inf
            else:
                want = float(mpmath.log(mpmath.fsum(mpmath.exp(mpmath.mpf(lr) * k) for k in range(1, n + 1))))
                assert abs(got[i, j] - want) <= 1e-13 * (1.0 + abs(want)), (lr, n, got[i, j], want)


def test_mid_ratio_pairs_slabs_up_to_the_mid_point_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """eps0 = 3, n = 1e5 (log likelihood ratio 3 <= ``_SLAB_MID_RATIO``): one slab of counts above ``_SLAB_WIDE_COUNT``
    and more than ``_SLAB_MAX_POINTS_WIDE`` points holds every order but the largest few; without the mid limit there is
    none. The bracket meets the one without (blocks of totals only), its upper end within rtol. Which of the largest
    orders stay: with the geometric tail stage (ratios up to ``_SLAB_TAIL_GEOMETRIC_RATIO``, 3.5 before session 30) all
    but 1024; without it (ratio 3 > 1.5 now) alpha = 768 leaves too, its first tail bounds missing tail_tol."""
    rtol = 1e-3
    orders = np.array(R.DEFAULT_ORDERS)
    pair = pair_for("clones", 3.0, 100_000).pair
    assert R._SLAB_RECT_RATIO < pair.max_log_ratio <= R._SLAB_MID_RATIO
    assert R._SLAB_TAIL_GEOMETRIC_RATIO < pair.max_log_ratio
    d = R.RenyiDirection(pair)
    up, lo, ok, _, _ = d.bounds(orders, rtol)
    assert ok
    assert len(d.slabs) == 1 and d.slabs[0].c2 > R._SLAB_WIDE_COUNT
    assert _slab_cost(d.slabs[0]) > R._SLAB_MAX_POINTS_WIDE and np.sum(d.slab_of >= 0) >= orders.size - 3
    with monkeypatch.context() as mp:
        mp.setattr(R, "_SLAB_TAIL_GEOMETRIC_RATIO", R._SLAB_MID_RATIO)
        geo = R.RenyiDirection(pair)
        g_up, g_lo, g_ok, _, _ = geo.bounds(orders, rtol)
    assert g_ok and np.sum(geo.slab_of >= 0) > np.sum(d.slab_of >= 0) >= orders.size - 3
    assert np.all(lo <= g_up + 1e-12) and np.all(g_lo <= up + 1e-12)
    monkeypatch.setattr(R, "_SLAB_MID_RATIO", 0.0)
    prev = R.RenyiDirection(pair)
    p_up, p_lo, p_ok, _, _ = prev.bounds(orders, rtol)
    assert p_ok and not prev.slabs
    assert np.all(lo <= p_up + 1e-12) and np.all(p_lo <= up + 1e-12)
    assert np.all(R._to_divergence(up, orders, True) <= R._to_divergence(p_up, orders, True) * (1 + rtol) + 1e-15)


def test_slab_plan_with_the_callers_saddles() -> None:
    """``_slab_plan`` given :func:`_saddles`'s values (``_build_slabs`` plans up to four times) plans as it does alone,
    with and without excluded orders."""
    d = R.RenyiDirection(pair_for("clones", 3.0, 31623).pair)
    alpha = np.array(R.DEFAULT_ORDERS)
    ss = d.s * (1.0 - d.s)
    bp, bq = (d.pa1 - d.s) / ss, (d.pb1 - d.s) / ss
    k0 = R._bernoulli_excess(np.array([d.pa1]), np.array([d.pb1]), alpha)[0][0]
    sad = R._saddles(float(d.N), d.p, d.s, bp, bq, alpha)
    for excl in (None, alpha >= 256.0):
        a = R._slab_plan(float(d.N), d.p, d.s, bp, bq, alpha, 2e-5, k0, exclude=excl)
        b = R._slab_plan(float(d.N), d.p, d.s, bp, bq, alpha, 2e-5, k0, exclude=excl, saddles=sad)
        assert len(a) >= 1 and len(a) == len(b)
        for ga, gb in zip(a, b):
            assert np.array_equal(ga[0], gb[0]) and ga[1:] == gb[1:]


def test_huge_eps0_rows_without_finite_far_terms_stay_tight() -> None:
    """The per-row error bound of ``log f`` counts the far terms' weight error only in rows that have a finite far
    term, as the elementwise bounds it replaced did (63e81aa counted it in every row: at eps0 = 700 it is ~1e304, the
    error sums overflowed and order 8 came out [0.002, 700.001] instead of [699.999, 700.001])."""
    from shuffle_accountant.composition import rdp_curve

    c = rdp_curve(700.0, 100_000, orders=[2, 8])
    assert list(c.orders) == [2.0, 8.0]
    for lo, up in zip(c.lower, c.upper):
        assert 699.0 <= lo <= up <= 701.0, (c.lower, c.upper)

"""Certified Rényi divergences of the clone pairs against the independent mpmath oracle."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import oracle
from shuffle_accountant.analyses import pair_for
from shuffle_accountant.numeric import binomial as bn
from shuffle_accountant.numeric import renyi as R
from shuffle_accountant.numeric.clones import ClonePair
from shuffle_accountant.numeric.renyi import renyi_bounds

ORDERS = [1.3, 2.0, 3.7, 10.0, 64.0]
CASES = [("clones", None), ("stronger-clones", None), ("binary-rr-lower", None), ("krr", 4), ("krr-lower", 4)]


def _oracle_pair(pr):
    with mpmath.workdps(50):
        p0 = mpmath.mpf(1) - mpmath.mpf(pr.pa) - mpmath.mpf(pr.pb)
        return oracle.clone_pair(pr.n, pr.r0, pr.r1, pr.pa, pr.pb, max(p0, 0))


@pytest.mark.parametrize("method,k", CASES)
@pytest.mark.parametrize("n", [1, 2, 9, 60])
def test_matches_brute_force(method, k, n):
    sp = pair_for(method, 1.3, n, k)
    P, Q = _oracle_pair(sp.pair)
    for direction, (A, B) in (("pq", (P, Q)), ("qp", (Q, P))):
        got = renyi_bounds(sp.pair, ORDERS, rtol=1e-10, scale=sp.scale, directions=direction)
        with mpmath.workdps(50):
            for a, lo, up in zip(ORDERS, got.lower, got.upper):
                s = mpmath.exp((a - 1) * oracle.renyi(A, B, a))
                exact = mpmath.log(1 + sp.scale * (s - 1)) / (a - 1)
                assert lo <= exact <= up, (direction, a)
                assert up - exact <= 1e-9 * exact + 1e-15


@pytest.mark.parametrize("eps0, n, k", [(1.0, 10, 3), (5.0, 60, 3), (2.0, 25, 5)])
def test_p0_pairs_whose_first_block_holds_total_zero(eps0, n, k):
    """Pairs with p0 > 0 (krr-lower) where the initial block edges skip t = 1: the total 0
    (nothing counted, identical laws) must not be counted at a counted total's kernel in the
    lower end (it was: krr-lower k = 3, eps0 = 1, n = 10, alpha = 1.25 printed lower 0.0773693
    above the exact 0.0772677)."""
    sp = pair_for("krr-lower", eps0, n, k)
    assert sp.pair.p0 > 0.0
    P, Q = _oracle_pair(sp.pair)
    got = renyi_bounds(sp.pair, ORDERS, rtol=1e-3, scale=sp.scale)
    with mpmath.workdps(50):
        for a, lo, up in zip(ORDERS, got.lower, got.upper):
            exact = max(oracle.renyi(P, Q, a), oracle.renyi(Q, P, a))
            assert lo <= exact <= up, a


def test_asymmetric_directions_differ():
    sp = pair_for("binary-rr-lower", 2.0, 9)
    pq = renyi_bounds(sp.pair, [3.0], rtol=1e-10, directions="pq").upper[0]
    qp = renyi_bounds(sp.pair, [3.0], rtol=1e-10, directions="qp").upper[0]
    both = renyi_bounds(sp.pair, [3.0], rtol=1e-10).upper[0]
    assert abs(pq - qp) > 1e-3 * both
    assert both == max(pq, qp)


@settings(max_examples=15, deadline=None)
@given(st.floats(0.2, 4.0), st.integers(1, 400))
def test_properties(eps0, n):
    orders = [1.5, 2.0, 5.0, 20.0, 200.0]
    sp = pair_for("clones", eps0, n)
    b = renyi_bounds(sp.pair, orders, rtol=1e-9)
    b2 = renyi_bounds(pair_for("clones", eps0, 2 * n).pair, orders, rtol=1e-9)
    for i in range(len(orders)):
        assert b.upper[i] <= eps0 * (1 + 1e-12)  # one round is eps0-DP
        assert b2.lower[i] <= b.upper[i]  # non-increasing in n
        if i:
            assert b.upper[i] >= b.lower[i - 1]  # non-decreasing in alpha


def test_small_alpha_asymptotic():
    eps0, n = 1.0, 10**5
    e = math.exp(eps0)
    b = renyi_bounds(pair_for("stronger-clones", eps0, n).pair, [1.05, 1.25], rtol=1e-6)
    for a, d in zip(b.orders, b.upper):
        approx = a * (e - 1) ** 2 / (n * (e + 1))
        assert abs(d / approx - 1) < 0.05


def test_large_n_brackets_tight():
    b = renyi_bounds(pair_for("clones", 1.0, 10**9).pair, [2.0, 64.0], rtol=1e-3)
    for lo, up in zip(b.lower, b.upper):
        assert 0 < lo <= up <= lo * (1 + 2e-3)


def test_entries_per_order_bracket_oracle_at_moderate_n() -> None:
    """Entries evaluated only at the orders their blocks need (the others bounded by the monotone
    envelope in c) bracket the brute-force divergence at n = 200, where blocks are refined and some
    entries lack orders."""
    import numpy as np

    from shuffle_accountant.numeric.renyi import RenyiDirection

    sp = pair_for("clones", 1.0, 200)
    pr = sp.pair
    orders = [1.25, 2.0, 10.0, 64.0, 512.0, 1024.0]
    d = RenyiDirection(pr)
    up, lo, ok, _, _ = d.bounds(np.array(orders), 1e-6)
    assert ok and not np.all(d.ent_done)
    P, Q = _oracle_pair(pr)
    with mpmath.workdps(50):
        for a, lu, ll in zip(orders, up, lo):
            s = mpmath.exp((a - 1) * oracle.renyi(P, Q, a))
            exact = float(mpmath.log(s - 1))  # bounds() brackets log(S_alpha - 1)
            assert ll <= exact <= lu, (a, ll, exact, lu)


@pytest.mark.parametrize("eps0, n", [(1.0, 50), (3.0, 400), (0.5, 5000)])
def test_p0_corner_pairs_bracket_the_exact_kernel_pair(eps0, n):
    """For p0 > 0 the corners' mixing weights are moved outward (upper) and inward (lower) so
    that the kernel pair computed from them, (u, v) = lam (pa', pb') + (1 - lam) (s, s) in
    floating point, is at least as far from the diagonal as the exact pair of lam_t (50-digit
    lam_t, pa', s) for upper corners and at most as far for lower corners, tiny lam included."""
    from shuffle_accountant.numeric.renyi import RenyiDirection

    pair = pair_for("krr-lower", eps0, n, 3).pair
    d = RenyiDirection(pair)
    t = np.unique(np.concatenate((np.arange(1.0, 12.0), np.linspace(1.0, float(n), 25).round())))
    lam = d.dir.lam(t)
    with mpmath.workdps(50):
        N, p, p0 = pair.n - 1, mpmath.mpf(d.p), mpmath.mpf(pair.p0)
        pa1 = mpmath.mpf(pair.pa) / (mpmath.mpf(pair.pa) + mpmath.mpf(pair.pb))
        pb1 = mpmath.mpf(pair.pb) / (mpmath.mpf(pair.pa) + mpmath.mpf(pair.pb))
        s = mpmath.mpf(d.s)
        for side in (1.0, -1.0):
            moved = d._lam_outward(lam, side)
            for ti, lm in zip(t, moved):
                w1 = mpmath.binomial(N, int(ti) - 1) * p ** (int(ti) - 1) * (1 - p) ** (N - int(ti) + 1)
                w0 = mpmath.binomial(N, int(ti)) * p ** int(ti) * (1 - p) ** (N - int(ti)) if ti <= N else 0
                lt = (1 - p0) * w1 / ((1 - p0) * w1 + p0 * w0)
                u_t, v_t = lt * pa1 + (1 - lt) * s, lt * pb1 + (1 - lt) * s
                u = mpmath.mpf(float(lm * d.pa1 + (1.0 - lm) * d.s))
                v = mpmath.mpf(float(lm * d.pb1 + (1.0 - lm) * d.s))
                if side > 0:
                    assert u >= u_t and v <= v_t, (ti, lm)
                else:
                    assert (u <= u_t and v >= v_t) or lm == 0.0, (ti, lm)


def _slab_exact(pr, alpha: float, c1: int, c2: int) -> mpmath.mpf:
    """sum_{c = c1}^{c2} Pr[C = c] (K(c) - 1) by 50-digit brute force from the kernel's definition:
    K(c) = sum_a P_c(a)^alpha Q_c(a)^(1 - alpha), P_c(a) = u B(a - 1) + (1 - u) B(a), B = Bin(c, s)."""
    with mpmath.workdps(50):
        r0, r1, pa, pb = (mpmath.mpf(x) for x in (pr.r0, pr.r1, pr.pa, pr.pb))
        p, s = r0 + r1, r0 / (r0 + r1)
        u, v = pa / (pa + pb), pb / (pa + pb)
        N = pr.n - 1
        a_ = mpmath.mpf(alpha)
        total = mpmath.mpf(0)
        for c in range(c1, c2 + 1):
            wc = mpmath.binomial(N, c) * p**c * (1 - p) ** (N - c)
            B = [mpmath.binomial(c, k) * s**k * (1 - s) ** (c - k) for k in range(c + 1)]
            K = mpmath.mpf(0)
            for a in range(c + 2):
                b1 = B[a - 1] if a >= 1 else 0
                b0 = B[a] if a <= c else 0
                P, Q = u * b1 + (1 - u) * b0, v * b1 + (1 - v) * b0
                if P > 0:
                    K += P**a_ * Q ** (1 - a_)
            total += wc * (K - 1)
        return total


def _slab_setup(p):
    """The direction of pair ``p``, its ``s``, ``bp``, ``bq``, the counts within 2 sd of the clone count's
    mean and the spread of x at the lowest of them (the slab tests' rectangle)."""
    from shuffle_accountant.numeric import renyi as R

    d = R.RenyiDirection(p)
    s = d.s
    ss = s * (1.0 - s)
    mu, sd = d.N * d.p, math.sqrt(d.N * d.p * (1.0 - d.p))
    c1, c2 = int(mu - 2.0 * sd), int(mu + 2.0 * sd)
    return d, s, (d.pa1 - s) / ss, (d.pb1 - s) / ss, c1, c2, math.sqrt(ss / (c1 + 1.0))


@pytest.mark.parametrize("method, eps0, n", [("clones", 1.0, 150), ("binary-rr-lower", 2.0, 120), ("stronger-clones", 4.0, 90)])
def test_slab_brackets_the_exact_sum_over_its_counts(method, eps0, n):
    """A slab of clone counts (one measure of x = a/(c+1) pooled over counts, cells bounded by Taylor's
    theorem with interval bounds on g'') brackets the 50-digit sum over its counts at every level of
    cells, the coarsest included (a missing or wrongly signed second-order term, or a cell's points
    outside its interval, fails there), with a window of x narrower than the support (both tails
    bounded, and at large orders the tail facing the binomial's bulk)."""
    from shuffle_accountant.numeric import renyi as R

    pr = pair_for(method, eps0, n).pair
    for p in (pr, pr.mirrored()) if not pr.symmetric else (pr,):
        d, s, bp, bq, c1, c2, sx = _slab_setup(p)
        orders = np.array([1.3, 2.0, 10.0, 64.0, 256.0])
        for x_lo, x_hi in ((s - 3.0 * sx, s + 3.0 * sx), (max(s - 1.5 * sx, 0.0), 1.0), (0.0, min(s + 2.0 * sx, 1.0))):
            slab = R._Slab(float(d.N), d.p, s, d.rel, np.arange(orders.size), c1, c2, x_lo, x_hi)
            tail = slab.tails(d.pa1, d.pb1, bp, bq, orders, d.rel, math.log(1e-6), np.zeros(orders.size))
            exact = [_slab_exact(p, float(a), c1, c2) for a in orders]
            for level in range(len(slab.h)):
                up, lo = slab.window(d.pa1, d.pb1, bp, bq, orders, level)
                up = np.logaddexp(up, tail)
                for j, a in enumerate(orders):
                    with mpmath.workdps(50):
                        le = float(mpmath.log(exact[j]))
                    assert lo[j] <= le <= up[j], (p, a, level, x_lo, x_hi, lo[j], le, up[j])
            # and the finest cells are tight where the window holds the sum
            up, lo = slab.window(d.pa1, d.pb1, bp, bq, orders, 0)
            assert np.all(up - lo < 0.05)


@pytest.mark.parametrize("pr", [pair_for("clones", 1.0, 160).pair, ClonePair(130, 0.1, 0.3, 0.7, 0.3, 0.0)])
def test_blocks_above_a_slab_bounded_by_its_average(pr):
    """Blocks above an order's slab take K(c) - 1 <= (the slab's upper bound) / Pr[C in slab] instead
    of an entry (K non-increasing in c): the 50-digit K(c2 + 1) - 1, the largest kernel above the slab,
    lies below it; and the direction's bracket holds the brute-force divergence (a symmetric pair, and
    one with the split s = 1/4, both directions)."""
    from shuffle_accountant.numeric.renyi import RenyiDirection

    orders = [1.25, 2.0, 10.0, 64.0, 512.0]
    for p in (pr, pr.mirrored()) if not pr.symmetric else (pr,):
        d = RenyiDirection(p)
        up, lo, ok, _, _ = d.bounds(np.array(orders), 1e-4)
        assert ok and d.slabs
        above = d._above(d.lo)
        for j, a in enumerate(orders):
            # every block flagged above the order's slab: its largest kernel, at c = lo - 1, is below the bound
            flagged = np.flatnonzero(above[:, j])
            assert flagged.size or int(d.slab_of[j]) < 0
            for c in sorted({int(d.lo[b]) - 1 for b in flagged})[:3]:
                with mpmath.workdps(50):
                    k_c = _slab_exact(p, a, c, c)
                    w = mpmath.binomial(p.n - 1, c) * mpmath.mpf(d.p) ** c * (1 - mpmath.mpf(d.p)) ** (p.n - 1 - c)
                    assert float(mpmath.log(k_c / w)) <= d.slab_avg_up[j], (p, a, c)
        P, Q = _oracle_pair(p)
        with mpmath.workdps(50):
            for a, lu, ll in zip(orders, up, lo):
                s = mpmath.exp((a - 1) * oracle.renyi(P, Q, a))
                assert ll <= float(mpmath.log(s - 1)) <= lu, (a, ll, lu)


@pytest.mark.parametrize("method, eps0, n", [("clones", 1.0, 150), ("stronger-clones", 4.0, 90)])
def test_slab_cells_left_out_bounded_from_coarse_cells(method, eps0, n):
    """A slab's window evaluates, per order, only the fine cells inside a range of coarse cells; the
    others are bounded by each coarse cell's mass times the larger of g at its ends (g convex). That
    bound lies above the 50-digit sum over the points left out (fails with the smaller end value, or
    without a side), and the window with cells left out still brackets the 50-digit slab sum."""
    from shuffle_accountant.numeric import renyi as R

    p = pair_for(method, eps0, n).pair
    d, s, bp, bq, c1, c2, sx = _slab_setup(p)
    orders = np.array([1.3, 2.0, 10.0, 64.0, 256.0])
    log_tol = math.log(1e-3)
    left_out = 0
    with mpmath.workdps(50):
        r0, r1, pa, pb = (mpmath.mpf(x) for x in (p.r0, p.r1, p.pa, p.pb))
        pm, sm = r0 + r1, r0 / (r0 + r1)
        u, v = pa / (pa + pb), pb / (pa + pb)
        bpm, bqm = (u - sm) / (sm * (1 - sm)), (v - sm) / (sm * (1 - sm))
        for x_lo, x_hi in ((max(s - 4.0 * sx, 0.0), 1.0), (0.0, min(s + 4.0 * sx, 1.0))):
            slab = R._Slab(float(d.N), d.p, s, d.rel, np.arange(orders.size), c1, c2, x_lo, x_hi)
            points = []  # (x, Pr[C = c] M_{c+1}(a)) of every point of the slab
            for c in range(c1, c2 + 1):
                m = c + 1
                wc = mpmath.binomial(d.N, c) * pm**c * (1 - pm) ** (d.N - c)
                for a in range(math.ceil(x_lo * m), math.floor(x_hi * m) + 1):
                    if 0 <= a <= m:
                        points.append((mpmath.mpf(a) / m, wc * mpmath.binomial(m, a) * sm**a * (1 - sm) ** (m - a)))
            exact = []
            for a_ in orders:
                al = mpmath.mpf(float(a_))
                dd = al * bpm + (1 - al) * bqm
                gs = []
                for x, w in points:
                    px = u * x / sm + (1 - u) * (1 - x) / (1 - sm)
                    qx = v * x / sm + (1 - v) * (1 - x) / (1 - sm)
                    gs.append((x, w * (px**al * qx ** (1 - al) - 1 - dd * (x - sm))))
                exact.append(gs)
            for level in range(len(slab.h) - 3):
                idx = np.flatnonzero(slab.W[level] > 0.0)
                first, last, runs = slab._runs(level, idx, d.pa1, d.pb1, bp, bq, orders, log_tol)
                h, top = slab.h[level], slab.W[level].size - 1
                # (the grid's end cells also hold the points at its ends, x = xL and xR)
                x_first = np.where(idx[first] > 0, x_lo + idx[first] * h, -1.0)
                x_last = np.where(idx[last] < top, x_lo + (idx[last] + 1.0) * h, 2.0)
                for j in range(orders.size):
                    out = [t for x, t in exact[j] if x < x_first[j] or x >= x_last[j]]
                    if not out:
                        continue
                    left_out += 1
                    assert float(mpmath.log(mpmath.fsum(out))) <= runs[j], (x_lo, level, orders[j], runs[j])
                up, lo = slab.window(d.pa1, d.pb1, bp, bq, orders, level, log_tol)
                tail = slab.tails(d.pa1, d.pb1, bp, bq, orders, d.rel, math.log(1e-6), np.zeros(orders.size))
                up = np.logaddexp(up, tail)
                for j in range(orders.size):
                    le = float(mpmath.log(mpmath.fsum(t for _, t in exact[j])))
                    assert lo[j] <= le <= up[j], (x_lo, level, orders[j], lo[j], le, up[j])
    assert left_out >= 10  # the bound was exercised


def test_slab_tails_per_count_bracket_the_exact_tails():
    """A slab's tails take, per count and side, the Chernoff-and-convexity bound or the geometric one
    (the latter on the counts with the largest first bounds): with the tolerance at the tails' own size
    (many counts keep their first bound) the result lies above the 50-digit sum over the points beyond
    a narrow window, and within e^5 of it."""
    from shuffle_accountant.numeric import renyi as R

    p = pair_for("clones", 1.0, 150).pair
    d, s, bp, bq, c1, c2, sx = _slab_setup(p)
    orders = np.array([2.0, 10.0, 64.0, 256.0])
    x_lo, x_hi = s - 1.5 * sx, s + 1.5 * sx
    slab = R._Slab(float(d.N), d.p, s, d.rel, np.arange(orders.size), c1, c2, x_lo, x_hi)
    with mpmath.workdps(50):
        r0, r1, pa, pb = (mpmath.mpf(x) for x in (p.r0, p.r1, p.pa, p.pb))
        pm, sm = r0 + r1, r0 / (r0 + r1)
        u, v = pa / (pa + pb), pb / (pa + pb)
        exact = []
        for a_ in orders:
            al = mpmath.mpf(float(a_))
            dd = (al * (u - sm) + (1 - al) * (v - sm)) / (sm * (1 - sm))  # f'(s)
            t = mpmath.mpf(0)
            for c in range(c1, c2 + 1):
                m = c + 1
                wc = mpmath.binomial(d.N, c) * pm**c * (1 - pm) ** (d.N - c)
                for a in list(range(0, math.ceil(x_lo * m))) + list(range(math.floor(x_hi * m) + 1, m + 1)):
                    x = mpmath.mpf(a) / m
                    px = u * x / sm + (1 - u) * (1 - x) / (1 - sm)
                    qx = v * x / sm + (1 - v) * (1 - x) / (1 - sm)
                    g = px**al * qx ** (1 - al) - 1 - dd * (x - sm)
                    t += wc * mpmath.binomial(m, a) * sm**a * (1 - sm) ** (m - a) * g
            exact.append(float(mpmath.log(t)))
    exact_a = np.array(exact)
    tail = slab.tails(d.pa1, d.pb1, bp, bq, orders, d.rel, 0.0, exact_a)
    assert np.all(exact_a <= tail), (exact_a, tail)
    # the first bound alone, on the coarse pieces and on the fine ones (taken where the coarse are too coarse)
    # (the fine pieces are the tighter at large orders, where g grows fast beyond the window's edge)
    bounds = []
    for fracs in (R._SLAB_TAIL_PIECES, R._SLAB_TAIL_FINE):
        # each piece set covers the whole way from the window's edge (0) to the end (1), no gap, no overlap
        assert fracs[0] == 0.0 and fracs[-1] == 1.0 and np.all(np.diff(fracs) > 0.0), fracs
        first = slab._first_tails(d.pa1, d.pb1, bp, bq, orders, fracs, (1, -1))
        assert sorted(first) == [-1, 1]
        bounds.append(np.logaddexp(first[1][3], first[-1][3]))
        assert np.all(exact_a <= bounds[-1]), (fracs, exact_a, bounds[-1])
    assert np.all(bounds[1][2:] < bounds[0][2:] - 3.0), bounds
    assert np.all(tail <= exact_a + 5.0)  # (the geometric bounds where the first is coarse)


@pytest.mark.parametrize("eps0", [10.0, 12.0, 20.0])
def test_extreme_binary_rr_lower_ends_stay_below_the_exact_divergence(eps0: float) -> None:
    """binary-rr-lower at eps0 >= 10 (found by review): ``1 - pa'`` from the computed ``pa' = 1 -
    4.5e-5`` is ~1e-12 relative off, raised to the order it put the printed *lower* ends above the
    exact divergence (eps0 = 20, n = 50, alpha = 64: 20.000000000000018 against 19.99999999836).
    The charge of the computed weights (``_PAIR_REL``) keeps them below a 60-digit sum over
    the pair's own (float) parameters."""
    n, orders = 50, [64.0, 1024.0]
    p = pair_for("binary-rr-lower", eps0, n).pair
    rb = renyi_bounds(p, orders, rtol=1e-9, directions="qp")
    with mpmath.workdps(60):
        pa, pb, r0, r1 = (mpmath.mpf(v) for v in (p.pa, p.pb, p.r0, p.r1))
        pa, pb = pa / (pa + pb), pb / (pa + pb)
        s, c = r0 / (r0 + r1), n - 1
        B = [mpmath.binomial(c, a) * s**a * (1 - s) ** (c - a) for a in range(c + 1)] + [mpmath.mpf(0)]
        for alpha, lo, up in zip(orders, rb.lower, rb.upper):
            x = mpmath.mpf(alpha)
            total = mpmath.fsum((pb * (B[a - 1] if a else 0) + pa * B[a]) ** x * (pa * (B[a - 1] if a else 0) + pb * B[a]) ** (1 - x)
                                for a in range(c + 2))
            exact = mpmath.log(total) / (x - 1)
            assert lo <= exact <= up, (alpha, lo, up, exact)


def _mp_chernoff_exponent(lo: int, m: int, p: float) -> mpmath.mpf:
    """``-m KL(lo/m || p)`` at 50 digits (the exponent of the Chernoff-Hoeffding bound)."""
    with mpmath.workdps(50):
        x, q = mpmath.mpf(lo) / m, mpmath.mpf(p)
        kl = (x * mpmath.log(x / q) if x > 0 else 0) + ((1 - x) * mpmath.log((1 - x) / (1 - q)) if x < 1 else 0)
        return -m * kl


@pytest.mark.parametrize(("m", "p", "z"), [
    (944663569404, 0.9999876310434468, -3.3),  # KL nearly cancels (x ~ p) at m ~ 1e12: the case found in review
    (10**12, 0.5, 4.0), (10**12, 0.5, -6.0), (10**9, 1e-3, 5.0), (10**12, 1 - 1e-9, -2.0), (3000, 0.3, 2.5),
])
def test_log_chernoff_at_least_the_exact_exponent(m: int, p: float, z: float) -> None:
    """``_log_chernoff`` is an upper bound on the exact Chernoff exponent itself (not only on the log
    tail, which the bound's own slack keeps it above): the rounding of ``m KL`` where it nearly cancels
    is ~1e-4 nats at m = 1e12, more than a relative margin covers."""
    from shuffle_accountant.numeric import renyi as R

    k = int(round(m * p + z * math.sqrt(m * p * (1 - p))))
    lo, hi = (k, m) if z > 0 else (0, k)
    got = float(R._log_chernoff(np.array([float(lo)]), np.array([float(hi)]), np.array([float(m)]), p)[0])
    exact = _mp_chernoff_exponent(k, m, p)
    assert got >= exact, (got, exact)
    margin = 8 * R._U * m * (1 + abs(math.log(p)) + abs(math.log1p(-p)))  # the charged rounding
    assert got <= exact + 2 * margin + 1e-9 * max(1.0, abs(float(exact)))  # and not looser than that


def _kernel_exact(u, v, s, c: int, alpha: float) -> mpmath.mpf:
    """K(c) = sum_a P_c(a)^alpha Q_c(a)^(1 - alpha) of the lam = 1 kernel pair, 50 digits, from its definition
    (P_c(a) = u B(a - 1) + (1 - u) B(a), B = Bin(c, s); mpmath u, v, s)."""
    B = [mpmath.binomial(c, k) * s**k * (1 - s) ** (c - k) for k in range(c + 1)]
    below, at = [mpmath.mpf(0)] + B, B + [mpmath.mpf(0)]  # B(a - 1), B(a) for a = 0 .. c + 1
    pq = [(u * b1 + (1 - u) * b0, v * b1 + (1 - v) * b0) for b1, b0 in zip(below, at)]
    return mpmath.fsum(P ** mpmath.mpf(alpha) * Q ** (1 - mpmath.mpf(alpha)) for P, Q in pq if P > 0)


def _exact_weights(pr):
    r0, r1, pa, pb = (mpmath.mpf(x) for x in (pr.r0, pr.r1, pr.pa, pr.pb))
    return r0 + r1, r0 / (r0 + r1), pa / (pa + pb), pb / (pa + pb)


@pytest.mark.parametrize("pr", [pair_for("clones", 6.0, 200).pair, pair_for("clones", 2.0, 200).pair,
                                ClonePair(200, 0.1, 0.3, 0.7, 0.3, 0.0), ClonePair(200, 0.1, 0.3, 0.3, 0.7, 0.0)])
def test_end_block_bounds_bracket_the_exact_block_sums(pr):
    """The end bounds of a block of clone counts (renyi._end_block_bounds: K(c) <= theta^(c - c') K(c') + F and K(c')
    >= theta^(c' - c) (K(c) - F) for c <= c', theta = s at the end x = 1, 1 - s at x = 0) bracket the 50-digit
    sum_{c1}^{c2} Pr[C = c] (K(c) - 1) computed from the kernel's definition, given the exact corner kernels (rounded
    outwards) and masses, for every block of counts 0 .. 40 up to 12 wide, both corner placements, at orders up to
    1024, s = 1/2 (both ends merged) and s = 1/4 (two ends), both directions. Where one end carries the large orders'
    kernels (eps0 = 6, alpha = 1024) the bracket is tight across 12 counts (within 1e-6), which a wrong power of theta
    would break; the corner bounds differ there by a factor ~2^12."""
    from shuffle_accountant.numeric import renyi as R

    orders = np.array([2.0, 64.0, 256.0, 1024.0])
    d = R.RenyiDirection(pr)
    ends = R._end_constants(d.pa1, d.pb1, d.s, orders)
    assert len(ends) == (1 if d.s == 0.5 else 2)
    N = pr.n - 1
    top = 41
    with mpmath.workdps(50):
        p, s, u, v = _exact_weights(pr)
        w = [mpmath.binomial(N, c) * p**c * (1 - p) ** (N - c) for c in range(top + 1)]
        K = [[_kernel_exact(u, v, s, c, float(a)) for a in orders] for c in range(top + 1)]
        lk = np.array([[float(mpmath.log(x)) for x in row] for row in K])
    lk_up, lk_lo = lk + 1e-13 * (1 + np.abs(lk)), lk - 1e-13 * (1 + np.abs(lk))
    tight = 0
    for width in (1, 2, 5, 12):
        for c1 in range(0, top - width):
            c2 = c1 + width - 1
            with mpmath.workdps(50):
                mass = mpmath.fsum(w[c1:c2 + 1])
                exact = [mpmath.fsum(w[c] * (K[c][j] - 1) for c in range(c1, c2 + 1)) for j in range(orders.size)]
                lw_up = float(mpmath.log(mass)) + 1e-13
            for cl in (c2, c2 + 1):
                best_up, best_lo = np.full(orders.size, np.inf), np.full(orders.size, -np.inf)
                for theta, log_f, theta_rel in ends:
                    ls_up, ls_lo = R._log_tilted_mass(np.array([float(c1)]), np.array([float(c2)]), float(N), d.p, theta)
                    up, lo = R._end_block_bounds(np.full(orders.size, float(c1)), np.full(orders.size, float(cl)),
                                                 lk_up[cl], lk_lo[c1], np.full(orders.size, lw_up), ls_up, ls_lo,
                                                 theta, log_f, theta_rel)
                    best_up, best_lo = np.minimum(best_up, up), np.maximum(best_lo, lo)
                for j in range(orders.size):
                    with mpmath.workdps(50):
                        le = float(mpmath.log(exact[j])) if exact[j] > 0 else -math.inf
                    assert best_lo[j] <= le <= best_up[j], (pr, orders[j], c1, c2, cl, best_lo[j], le, best_up[j])
                    if width == 12 and best_up[j] - best_lo[j] < 1e-6:
                        tight += 1
    if pr.pa == pair_for("clones", 6.0, 200).pair.pa:
        assert tight >= top - 12  # alpha = 1024: every 12-count block, at least one corner placement


@pytest.mark.parametrize("N, p, theta", [(199, 0.3, 0.5), (199, 0.3, 0.25), (10**6, 0.005, 0.75), (10**9 - 1, 1e-4, 0.5)])
def test_log_tilted_mass_brackets_the_exact_sum(N, p, theta):
    """sum_{c1}^{c2} Pr[C = c] theta^c, C ~ Bin(N, p) (renyi._log_tilted_mass: the binomial tilted to p theta / (1 - p
    (1 - theta)) times (1 - p (1 - theta))^N) against 50-digit sums of the terms, intervals near the tilted mean, at
    the mean and far below both (underflowing masses: Chernoff, lower end -inf), to within 1e-9 where not underflowing."""
    from shuffle_accountant.numeric import renyi as R

    mean, tilted = N * p, N * p * theta / (1 - p * (1 - theta))
    sd = math.sqrt(max(tilted, 1.0))
    cands = [(tilted - 2 * sd, tilted + 2 * sd), (tilted, tilted), (mean - 3 * sd, mean + 3 * sd), (tilted + 5 * sd, tilted + 9 * sd),
             (0, min(30, N)), (tilted / 20, tilted / 20 + 40)]
    for a, b in cands:
        c1, c2 = max(int(a), 0), min(int(b), N)
        if c2 - c1 > 3000:
            continue
        up, lo = R._log_tilted_mass(np.array([float(c1)]), np.array([float(c2)]), float(N), p, theta)
        with mpmath.workdps(50):
            pm, tm = mpmath.mpf(p), mpmath.mpf(theta)
            exact = mpmath.fsum(mpmath.binomial(N, c) * pm**c * (1 - pm) ** (N - c) * tm**c for c in range(c1, c2 + 1))
            le = float(mpmath.log(exact))
        assert lo[0] <= le <= up[0], (N, p, theta, c1, c2, lo[0], le, up[0])
        if math.isfinite(lo[0]):
            assert up[0] - lo[0] < 1e-9 * max(1.0, abs(le)) + 1e-5 * (N > 10**6)


@pytest.mark.parametrize("N, p, theta, c1, c2", [(10, 1.0 - 2.0**-53, 8.315280276641322e-07, 0, 9),
                                                 (2999, 1.0 - 2.0**-53, 8.315280276641322e-07, 0, 371),
                                                 (10**9 - 1, 0.999999, 0.01, 0, 0), (40, 1.0 - 2.0**-52, 0.3, 5, 40),
                                                 (12, 1.0, 0.5, 12, 12), (12, 1.0, 0.5, 0, 11)])
def test_log_tilted_mass_without_cancellation_near_p_one(N, p, theta, c1, c2):
    """renyi._log_tilted_mass where x = p (1 - theta) is near 1 (review of 88291d5: 1 - x as a difference lost u x /
    (1 - x) relative, the first case's upper was -160.5095 against the exact -160.4342; binary-rr-lower reaches p =
    1 - 2^-53) and at p = 1 exactly (C = N surely; was nan): brackets the 50-digit sum of the terms."""
    up, lo = R._log_tilted_mass(np.array([float(c1)]), np.array([float(c2)]), float(N), p, theta)
    with mpmath.workdps(50):
        pm, tm = mpmath.mpf(p), mpmath.mpf(theta)
        exact = mpmath.fsum(mpmath.binomial(N, c) * pm**c * (1 - pm) ** (N - c) * tm**c for c in range(c1, c2 + 1))
        le = float(mpmath.log(exact)) if exact > 0 else -math.inf
    assert math.isfinite(le) or (p == 1.0 and up[0] == -math.inf)  # (p = 1, c2 < N: an empty sum)
    assert lo[0] <= le <= up[0], (N, p, theta, c1, c2, lo[0], le, up[0])


@pytest.mark.parametrize("pr", [pair_for("clones", 2.0, 2000).pair, pair_for("clones", 6.0, 12000).pair,
                                ClonePair(1500, 0.2, 0.05, 0.05, 0.95, 0.0)])
def test_end_bounds_in_use_bracket_the_exact_sum(pr):
    """RenyiDirection.bounds with the end bounds of blocks and the end envelope of entries in use (the large orders'
    kernels fall by about theta = 1/2 per count below the clone count's mean; asserted: some end bound finite) brackets
    log(S_alpha - 1) at rtol 1e-6 against the 30-digit sum over clone counts c = 0, 1, ... of Pr[C = c] (K(c) - 1), each
    kernel from its definition, up to a count where the rest, at most Pr[C > c] (K(c) - 1) (K non-increasing in c), is
    below 1e-10 of the sum so far (charged to the upper side). Clones (s = 1/2: the two ends merged) and a pair with
    s = 4/5 whose large orders' kernels sit at the end x = 0 (theta = 1 - s)."""
    from shuffle_accountant.numeric import renyi as R

    orders = np.array([2.0, 64.0, 512.0, 1024.0])
    used = []
    orig = R._end_block_bounds

    def spy(*a, **k):
        up, lo = orig(*a, **k)
        used.append(bool(np.any(np.isfinite(up))))
        return up, lo

    R._end_block_bounds = spy
    try:
        up, lo, ok, _, _ = R.RenyiDirection(pr).bounds(orders, 1e-6)
    finally:
        R._end_block_bounds = orig
    assert any(used)
    N = pr.n - 1
    with mpmath.workdps(30):
        p, s, u, v = _exact_weights(pr)
        for j in (2, 3):
            part, below, c = mpmath.mpf(0), mpmath.mpf(0), 0
            while True:
                wc = mpmath.binomial(N, c) * p**c * (1 - p) ** (N - c)
                kc = _kernel_exact(u, v, s, c, float(orders[j])) - 1
                part, below = part + wc * kc, below + wc
                slack = (1 - below) * kc
                if slack < 1e-10 * part or c == N:
                    break
                c += 1
            assert lo[j] <= float(mpmath.log(part + slack)) and float(mpmath.log(part)) <= up[j], (orders[j], lo[j], up[j])


@pytest.mark.parametrize("pr", [pair_for("clones", 6.0, 200).pair, ClonePair(200, 0.1, 0.3, 0.7, 0.3, 0.0)])
def test_end_envelope_brackets_the_exact_kernels(pr):
    """RenyiDirection._envelope with the end lemma (renyi._end_block_bounds' docstring; RenyiDirection._end_envelope):
    entries at counts 0 .. 30 whose bounds are the exact log(K - 1) rounded outwards at every third count and unknown
    (+inf / -inf) elsewhere get bounds that bracket the 50-digit values at every count and order; where the kernel falls
    by theta per count (eps0 = 6, alpha = 1024) the upper bounds from the next evaluated count above are within 1e-9,
    which a wrong power of theta would break (the monotone envelope alone gives the count below: a factor 2 or more)."""
    from shuffle_accountant.numeric import renyi as R

    orders = np.array([2.0, 64.0, 256.0, 1024.0])
    d = R.RenyiDirection(pr)
    d.alpha = orders
    d._ends = R._end_constants(d.pa1, d.pb1, d.s, orders)
    d._ends_on = True
    c = np.arange(31.0)
    with mpmath.workdps(50):
        p, s, u, v = _exact_weights(pr)
        ex = np.array([[float(mpmath.log(_kernel_exact(u, v, s, int(ci), float(a)) - 1)) for a in orders] for ci in c])
    known = (c % 3 == 0)[:, None]
    up = np.where(known, ex + 1e-13 * (1 + np.abs(ex)), np.inf)
    lo = np.where(known, ex - 1e-13 * (1 + np.abs(ex)), -np.inf)
    perm = np.random.default_rng(3).permutation(c.size)  # (entries in any order: the envelope sorts them by c)
    d.ent_c = c[perm]
    d._c_sorted = None
    e_up, e_lo = d._envelope(up[perm], lo[perm])
    inv = np.argsort(perm)
    e_up, e_lo = e_up[inv], e_lo[inv]
    assert np.all(e_lo <= ex) and np.all(ex <= e_up)
    if pr.pa == pair_for("clones", 6.0, 200).pair.pa:
        gap = e_up[:, 3] - ex[:, 3]
        assert np.all(gap[:30] < 1e-9), gap


# -- the rounding of the clone rates: p = fl(r0 + r1), s = fl(r0 / p) (renyi._rate_rounded_pair) -----------------------

def _rates_exact(r0: float, r1: float) -> tuple[Fraction, Fraction]:
    """The pair's rates in rational arithmetic (its float r0, r1; r0 + r1 capped at 1 as ``clone_probability`` is)."""
    a, b = Fraction(r0), Fraction(r1)
    if a + b <= 1:  # (a valid pair: its own rates)
        return a, b
    return a / (a + b), b / (a + b)  # (r0 + r1 above 1 by rounding: the rates of p = 1 and the split)


def _rates_used(pr: ClonePair) -> tuple[Fraction, Fraction]:
    """The rates of the pair the engine bounds: its float ``clone_probability`` and ``split`` taken as exact."""
    p, s = Fraction(pr.clone_probability), Fraction(pr.split)
    return p * s, p * (1 - s)


_RATE_CASES = [(0.1, 0.2), (0.3, 0.7), (0.5, 1.2 * 2.0**-54), (1.0 - 2.0**-53, 1.2 * 2.0**-54), (1e-300, 0.25),
               (0.25, 0.25), (0.0, 0.4), (0.7, 0.0)] + [
    (pair_for("binary-rr-lower", e, 10).pair.r0, pair_for("binary-rr-lower", e, 10).pair.r1)
    for e in (0.5, 2.0, 3.0, 6.0, 16.0, 30.0)]


def _check_rate_rounded(r0: float, r1: float) -> None:
    pr = ClonePair(1000, r0, r1, 0.75, 0.25, 0.0)
    x0, x1 = _rates_exact(r0, r1)
    up = R._rate_rounded_pair(pr, 1)
    assert up is not None
    e0, e1 = _rates_used(up)
    assert e0 <= x0 and e1 <= x1, (r0, r1)
    assert (up.n, up.pa, up.pb, up.p0) == (pr.n, pr.pa, pr.pb, pr.p0)
    lo = R._rate_rounded_pair(pr, -1)
    if lo is not None:
        e0, e1 = _rates_used(lo)
        assert e0 >= x0 and e1 >= x1, (r0, r1)
        assert (lo.n, lo.pa, lo.pb, lo.p0) == (pr.n, pr.pa, pr.pb, pr.p0)
    if _rates_used(pr) == (x0, x1):  # exact rates: the pair itself, both sides (every r0 = r1 pair)
        assert up == pr and lo == pr


@pytest.mark.parametrize("r0,r1", _RATE_CASES)
def test_rate_rounded_pairs_bound_the_exact_rates(r0: float, r1: float) -> None:
    """The pairs whose bounds renyi_bounds takes have rates at most (upper ends) / at least (lower ends) the exact
    rates of the pair, in rational arithmetic; an r0 = r1 pair is its own (no change)."""
    _check_rate_rounded(r0, r1)


@given(st.floats(0.0, 1.0), st.floats(0.0, 1.0))
@settings(max_examples=200, deadline=None)
def test_rate_rounded_pairs_bound_the_exact_rates_random(a: float, b: float) -> None:
    if a + b > 1.0:
        a, b = a / 2.0, b / 2.0
    _check_rate_rounded(a, b)


def test_rate_rounding_is_needed_and_exceeds_the_binomial_budget() -> None:
    """Why the rounded pairs (found by review): ``r0 = 0.1, r1 = 0.2`` gives ``p = 0.30000000000000004``, 9.3e-17
    relative above the exact rate, so the engine's own pair is *more* private than the exact one (its rates are not
    below the exact ones: its bounds were those of another pair). At ``N = 1e9`` the clone count's mass at ``c = 0.6
    N`` moves by 4e-8 in the log (60-digit mpmath), 40 times Boost's budget for the value: no existing charge covered
    it. The upper pair's ``p`` is at most the exact one."""
    pr = ClonePair(10**9 + 1, 0.1, 0.2, 0.75, 0.25, 0.0)
    x0, x1 = _rates_exact(0.1, 0.2)
    e0, e1 = _rates_used(pr)
    assert e0 + e1 > x0 + x1 and (e0 > x0 or e1 > x1)
    N, c = 10**9, 6 * 10**8
    with mpmath.workdps(60):
        p_ex = mpmath.mpf((x0 + x1).numerator) / (x0 + x1).denominator
        p_fl = mpmath.mpf(pr.clone_probability)
        shift = abs(c * mpmath.log(p_ex / p_fl) + (N - c) * mpmath.log((1 - p_ex) / (1 - p_fl)))
    assert shift > 20 * bn.pmf_error_budget(N), float(shift)
    up = R._rate_rounded_pair(pr, 1)
    assert up is not None and Fraction(up.clone_probability) <= x0 + x1


@settings(max_examples=12, deadline=None)
@given(st.integers(2, 6), st.sampled_from(["0.05", "0.2", "0.45"]), st.sampled_from(["0.01", "0.3"]),
       st.sampled_from(["0", "0.003", "0.1"]), st.sampled_from(["0", "1e-9", "0.05"]), st.sampled_from(["0.6", "0.97"]))
def test_divergences_non_increasing_in_each_clone_rate(n, r0, r1, d0, d1, pa) -> None:
    """The lemma of ``_rate_rounded_pair`` (p0 = 0) on the brute-force oracle: raising ``r0`` and/or ``r1`` never
    raises the Rényi divergence, in either direction, at orders 1.5 .. 64 (60 digits)."""
    with mpmath.workdps(60):
        r0_, r1_, pa_ = mpmath.mpf(r0), mpmath.mpf(r1), mpmath.mpf(pa)
        big = (r0_ + mpmath.mpf(d0), r1_ + mpmath.mpf(d1))
        P, Q = oracle.clone_pair(n, r0_, r1_, pa_, 1 - pa_, 0, dps=60)
        P2, Q2 = oracle.clone_pair(n, big[0], big[1], pa_, 1 - pa_, 0, dps=60)
        for a in (1.5, 2.0, 8.0, 64.0):
            for (A, B), (A2, B2) in (((P, Q), (P2, Q2)), ((Q, P), (Q2, P2))):
                d, d2 = oracle.renyi(A, B, a, dps=60), oracle.renyi(A2, B2, a, dps=60)
                assert d2 <= d * (1 + mpmath.mpf("1e-40")) + mpmath.mpf("1e-50"), (a, d, d2)


@pytest.mark.parametrize("r0,r1,n,tight", [(0.1, 0.2, 9, True), (0.1, 0.2, 40, True), (0.3, 0.7, 12, True),
                                          (0.5, 1.2 * 2.0**-54, 7, False)])
def test_inexact_rates_bracket_the_exact_pair(r0: float, r1: float, n: int, tight: bool) -> None:
    """Pairs whose ``p = fl(r0 + r1)`` or ``s`` is rounded (the upper ends from a pair with rates at most the exact
    ones, the lower ends from one with rates at least them, or the pair's own): both directions bracket the
    60-digit divergence of the pair with the exact float rates. (r1 = 1.2 2^-54: the split rounds to 1 - 2^-52, which
    the engine brackets only trivially, [0, log 4] before; the upper end now comes from the pair without r1, whose
    split is 1: tight above, 0 below.)"""
    orders = [1.5, 2.0, 8.0, 64.0]
    pr = ClonePair(n, r0, r1, 0.8, 0.2, 0.0)
    rb = renyi_bounds(pr, orders, rtol=1e-9)
    x0, x1 = _rates_exact(r0, r1)
    with mpmath.workdps(60):
        f0, f1 = (mpmath.mpf(x.numerator) / x.denominator for x in (x0, x1))
        pa = mpmath.mpf(0.8)
        P, Q = oracle.clone_pair(n, f0, f1, pa / (pa + mpmath.mpf(0.2)), mpmath.mpf(0.2) / (pa + mpmath.mpf(0.2)), 0, dps=60)
        for a, lo, up in zip(orders, rb.lower, rb.upper):
            exact = max(oracle.renyi(P, Q, a, dps=60), oracle.renyi(Q, P, a, dps=60))
            assert lo <= exact <= up, (a, lo, float(exact), up)
            assert up - lo <= 1e-8 * exact + 1e-14 or not tight
            assert up - exact <= 1e-8 * exact + 1e-14


def test_kernel_cells_with_q_near_zero_bracket_the_exact_kernel() -> None:
    """binary-rr-lower at eps0 = 16, mirrored, n = 1e7 (``r0 + r1`` rounds to 1: one clone count, ``C = n - 1``):
    at ``x = 0`` the kernel's ``q(0) = (1 - v)/(1 - s)`` is 1.1e-7, computed as ``1 + bq y`` with a relative error
    ~1e-9 (the computed ``bq`` against the exact pair's, through ``log1p``'s condition ``1 / (1 + z)``), raised to ``1
    - alpha``: the cells' lower ends lay ~1e-9 (alpha = 1024) above the 60-digit log of the kernel's excess before
    :func:`renyi._g` charged it (found while checking the rate-rounded pairs)."""
    pr = pair_for("binary-rr-lower", 16.0, 10).pair
    n, orders = 10**7, [256.0, 512.0, 1024.0]
    q = ClonePair(n, pr.r0, pr.r1, pr.pb, pr.pa, 0.0)
    assert q.clone_probability == 1.0
    d = R.RenyiDirection(q)
    lu, ll, _, _, _ = d.bounds(np.array(orders), 1e-3)
    with mpmath.workdps(60):
        s = mpmath.mpf(q.split)  # (the engine's pair: p = 1, s = its float split; the rates' rounding is separate)
        pa, pb = mpmath.mpf(q.pa), mpmath.mpf(q.pb)
        u, v = pa / (pa + pb), pb / (pa + pb)
        c = n - 1
        B = [mpmath.binomial(c, a) * s**a * (1 - s) ** (c - a) for a in range(300)]
        for j, al in enumerate(orders):
            x = mpmath.mpf(al)
            tot = mpmath.fsum((u * (B[a - 1] if a else 0) + (1 - u) * B[a]) ** x
                              * (v * (B[a - 1] if a else 0) + (1 - v) * B[a]) ** (1 - x) for a in range(299))
            exact = mpmath.log(tot - 1)  # (terms beyond a = 299: below e^-1000 of the sum)
            assert ll[j] <= exact <= lu[j], (al, ll[j], float(exact), lu[j])

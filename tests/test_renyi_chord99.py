"""The chord bounds at NON-integer orders 1 < alpha <= 16 for the exact symmetric pairs (renyi._exact_symmetric, Theorem
K* of docs/proof_binomial_moments.md, computer-assisted): the theorem's conclusion checked directly in mpmath, the
scope (pair type, orders, p0), and the bounds built on it against 50-digit sums over the clone count."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from test_renyi_chord import _direction_with_entries, _exact_log_excess, _kernel, _weights

from shuffle_accountant.analyses import pair_for
from shuffle_accountant.numeric import renyi as R
from shuffle_accountant.numeric.clones import ClonePair

NON_INTEGER = [1.25, 1.5, 1.75, 2.25, 2.5, 3.5, 4.5, 7.3, 15.5, 16.0]


@pytest.mark.parametrize("method, eps0", [("clones", 0.5), ("clones", 2.0), ("stronger-clones", 6.0), ("clones", 20.0)])
def test_kstar_log_k_convex_in_c_at_non_integer_orders(method, eps0):
    """Theorem K*'s conclusion at 60 digits: log K(c) has non-negative second differences for c = 0 .. 30 at real orders
    up to 16, for pairs the code admits (renyi._exact_symmetric); positive somewhere (a concave log K, the direction
    flipped, fails). At large eps0 the slack is tiny (1e-34 at eps0 = 20: the atoms at x = 0, 1 dominate, log K is
    nearly linear), hence the digits."""
    pr = pair_for(method, eps0, 100).pair
    assert R._exact_symmetric(pr)
    with mpmath.workdps(60):
        _, s, u, v = _weights(pr)
        assert s == mpmath.mpf(1) / 2 and abs(u + v - 1) < mpmath.mpf(10) ** -35
        for alpha in NON_INTEGER:
            lk = [mpmath.log(_kernel(u, v, s, c, alpha)) for c in range(31)]
            d2 = [lk[c - 1] - 2 * lk[c] + lk[c + 1] for c in range(1, 30)]
            assert min(d2) >= -mpmath.mpf(10) ** -50, (alpha, min(d2))
            if eps0 <= 6.0:  # (at eps0 = 20 the slack is below these digits at the top orders)
                assert max(d2) > mpmath.mpf(10) ** -45, (alpha, max(d2))


def test_scope_is_decided_by_the_pair_type():
    """Only p0 = 0, r0 == r1 > 0, pa, pb > 0 (s = 1/2 exactly); orders 1 < alpha <= 16; integer orders keep lemma94's rule
    (which needs u, v on both sides of s beyond the floats' margin)."""
    sym = pair_for("clones", 2.0, 1000).pair
    assert R._exact_symmetric(sym) and R._exact_symmetric(sym.mirrored())
    assert R._exact_symmetric(pair_for("stronger-clones", 3.0, 1000).pair)
    assert not R._exact_symmetric(ClonePair(1000, 0.1, 0.1 + 2**-40, sym.pa, sym.pb, 0.0))  # r0 != r1, however close
    assert not R._exact_symmetric(ClonePair(1000, 0.1, 0.3, 0.8, 0.2, 0.0))
    assert not R._exact_symmetric(ClonePair(1000, 0.1, 0.1, 0.7, 0.2, 0.1))  # p0 > 0
    assert not R._exact_symmetric(pair_for("krr-lower", 2.0, 1000, k=3).pair)  # (p0 > 0)
    assert not R._exact_symmetric(ClonePair(1000, 0.1, 0.1, 1.0, 0.0, 0.0))  # pb = 0
    assert not R._exact_symmetric(ClonePair(1000, 0.0, 0.0, 0.8, 0.2, 0.0))  # no clones
    orders = np.array([1.01, 1.25, 1.5, 2.0, 2.5, 15.5, 16.0, 16.5, 17.0, 100.5, 1024.0])
    d = R.RenyiDirection(sym)
    got = R._chord_orders(orders, d.pa1, d.pb1, d.s, True)
    assert got.tolist() == [True] * 7 + [False, True, False, True]
    assert R._chord_orders(orders, d.pa1, d.pb1, d.s).tolist() == [False, False, False, True, False, False, True, False,
                                                                  True, False, True]
    # a non-symmetric pair meeting lemma94's hypothesis: integer orders only
    d2 = R.RenyiDirection(ClonePair(1000, 0.1, 0.3, 0.8, 0.2, 0.0))
    assert d2._chord_cols.size == 0  # (set by bounds)
    d2.bounds(np.array([1.5, 2.5, 3.0, 15.5]), 1e-2)
    assert d2._chord_cols.tolist() == [False, False, True, False]
    # tiny eps0 (u, v within the floats' margin of s): lemma94's rule refuses, K* (decided by type) admits <= 16
    tiny = R.RenyiDirection(pair_for("clones", 1e-15, 1500).pair)
    tiny.bounds(np.array([1.5, 2.0, 64.0]), 1e-3)
    assert tiny._chord_cols.tolist() == [True, True, False]


@pytest.mark.parametrize("pr, orders", [
    (pair_for("clones", 2.0, 1500).pair, [16.5, 100.5, 1000.5]),  # non-integer orders above 16
    (ClonePair(1500, 0.1, 0.3, 0.8, 0.2, 0.0), [1.5, 2.5, 4.5]),  # not symmetric (s = 1/4)
    (ClonePair(1500, 0.1, 0.1, 0.6, 0.3, 0.1), [1.5, 2.5, 3.0]),  # p0 > 0 (r0 == r1)
])
def test_no_chord_outside_kstar(pr, orders):
    d = R.RenyiDirection(pr)
    d.bounds(np.array(orders), 1e-3)
    assert not np.any(d._chord_cols) and d.chord_used == 0


@pytest.fixture
def kstar_orders(monkeypatch):
    """_chord_orders as RenyiDirection calls it, with the pair's type (for test_renyi_chord's helper, which passes the
    floats only)."""
    orig = R._chord_orders
    monkeypatch.setattr(R, "_chord_orders", lambda a, u, v, s, symmetric=True: orig(a, u, v, s, symmetric))


@pytest.mark.parametrize("eps0", [2.0, 6.0, 12.0])
def test_chord_block_bounds_bracket_exact_sums_at_non_integer_orders(eps0, kstar_orders):
    """RenyiDirection._chord_bounds for blocks of counts in 0 .. 40 (widths 2 .. 12; entries evaluated at every count, or
    every third with the others from renyi._chord_envelope) brackets the 50-digit sum_{c1}^{c2} Pr[C = c] (K(c) - 1) at
    non-integer orders; and at eps0 >= 6 the chord bounds are computed there and tighter than the corners (so a chord
    taken the wrong way, log K concave, would leave the exact value above the upper end; at eps0 = 12 log K is nearly
    linear over these counts and the corners' bounds are as good)."""
    pr = pair_for("clones", eps0, 200).pair
    orders = np.array([1.25, 2.5, 4.5, 7.3, 15.5])
    top = 40
    computed = won = 0
    for every in (1, 3):
        d, e_up, e_lo, ex, K, w = _direction_with_entries(pr, orders, every, top)
        assert np.all(d._chord_cols)
        assert np.all(e_lo <= ex) and np.all(ex <= e_up)  # (the chord envelope at the skipped counts)
        with mpmath.workdps(50):  # the terms Pr[C = c] (K(c) - 1), per order
            terms = [[w[i] * (K[i][j] - 1) for i in range(top + 1)] for j in range(orders.size)]
        for width in (2, 3, 5, 12):
            starts = np.arange(top - width)
            d.lo, d.hi = starts + 1.0, starts + float(width)  # (totals t = c + 1: counts start .. start + width - 1)
            corners = (starts, starts + width)
            with mpmath.workdps(50):
                d.lw_up = np.array([float(mpmath.log(mpmath.fsum(w[a:a + width]))) + 1e-13 for a in starts])
            got = d._chord_bounds(e_up, e_lo, *corners, np.ones((starts.size, 1), dtype=bool))
            if got is None:
                continue
            r, o, up, lo, _ = got
            computed += r.size
            for k in range(r.size):
                a, j = int(starts[r[k]]), int(o[k])
                with mpmath.workdps(50):
                    le = float(mpmath.log(mpmath.fsum(terms[j][a:a + width])))
                assert lo[k] <= le <= up[k], (eps0, every, width, a, orders[j], lo[k], le, up[k])
                won += up[k] < d.lw_up[r[k]] + e_up[a, j] - 0.1
    if eps0 == 6.0:
        assert computed > 50 and won > 20, (computed, won)


@pytest.mark.parametrize("pr", [pair_for("clones", 4.0, 6000).pair, pair_for("clones", 6.0, 2000).pair])
def test_chord_in_use_at_non_integer_orders_brackets_the_exact_sum(pr, monkeypatch):
    """RenyiDirection.bounds (rtol 1e-6, without slabs) with the chord bounds computed at non-integer orders brackets
    log(S_alpha - 1) against the 30-digit sum over clone counts of Pr[C = c] (K(c) - 1), kernels from their definition."""
    monkeypatch.setattr(R, "_SLAB_MIN_ROWS", 10**9)
    orders = np.array([1.25, 2.5, 4.5, 15.5])
    at: list[float] = []
    chord = R.RenyiDirection._chord_bounds

    def recorded(self, *args):  # (the orders of the elements the chord bounds were computed at)
        out = chord(self, *args)
        at.extend([] if out is None else self.alpha[out[1]].tolist())
        return out

    monkeypatch.setattr(R.RenyiDirection, "_chord_bounds", recorded)
    d = R.RenyiDirection(pr)
    up, lo, ok, _, _ = d.bounds(orders, 1e-6)
    assert ok and np.all(d._chord_cols)
    if pr.n == 6000:
        assert at and all(a != int(a) for a in at)
    for j in range(orders.size):
        e_lo, e_up = _exact_log_excess(pr, float(orders[j]))
        assert lo[j] <= e_up and e_lo <= up[j], (orders[j], lo[j], e_lo, up[j])


def _strided_curve(pr, orders, stride: int, monkeypatch) -> tuple[np.ndarray, np.ndarray, bool, np.ndarray, np.ndarray]:
    """(upper, lower divergences, converged, chord orders, entries evaluated after the first blocks) at rtol 1e-3."""
    monkeypatch.setattr(R, "_CHORD_STRIDE", stride)
    done = []
    add = R.RenyiDirection._add_first_blocks
    monkeypatch.setattr(R.RenyiDirection, "_add_first_blocks", lambda self, *a: (add(self, *a), done.append(self.ent_done.copy())))
    d = R.RenyiDirection(pr)
    up, lo, ok, _, _ = d.bounds(orders, 1e-3)
    return R._to_divergence(up, orders, True), R._to_divergence(lo, orders, False), ok, d._chord_cols, done[0]


def test_first_blocks_strided_at_non_integer_orders_keep_the_bracket(monkeypatch):
    """eps0 = 2, n = 21544: the first blocks are evaluated at every _CHORD_STRIDE-th corner at the chord orders, now the
    non-integer ones too (asserted); each order's bracket overlaps the one with every corner evaluated, both converged,
    upper ends within rtol of each other."""
    pr = R._rate_rounded_pair(pair_for("clones", 2.0, 21544).pair, 1)
    orders = np.array(R.DEFAULT_ORDERS)
    frac = orders != np.floor(orders)
    hi2, lo2, ok2, cols, done = _strided_curve(pr, orders, R._CHORD_STRIDE, monkeypatch)
    assert np.all(cols == (frac | (orders >= 2.0))) and done[:, frac].sum(axis=0).max() * 4 < done.shape[0]
    hi1, lo1, ok1, _, done1 = _strided_curve(pr, orders, 1, monkeypatch)
    assert ok1 and ok2 and done1[:, frac].sum(axis=0).min() > 4 * done[:, frac].sum(axis=0).max()
    assert np.all(lo2 <= hi1) and np.all(lo1 <= hi2) and np.all(np.abs(hi2 - hi1) <= 1e-3 * hi1)


def test_tilted_first_blocks_keep_the_bracket(monkeypatch):
    """RenyiDirection._tilted_edges (work only): at clones eps0 = 2, n = 6000 without slabs the first blocks include the
    tilted clone count's range (asserted: edges added below the quarters' top), and the bounds at orders 4.5, 1024
    bracket the 30-digit sum over clone counts at 1024 and overlap those of the plan without them (both converged)."""
    monkeypatch.setattr(R, "_SLAB_MIN_ROWS", 10**9)
    pr = pair_for("clones", 2.0, 6000).pair
    orders = np.array([4.5, 1024.0])
    added = []
    tilted = R.RenyiDirection._tilted_edges

    def counted(self, edges, top):
        out = tilted(self, edges, top)
        added.append(out.size - edges.size)
        return out

    monkeypatch.setattr(R.RenyiDirection, "_tilted_edges", counted)
    up, lo, ok, _, _ = R.RenyiDirection(pr).bounds(orders, 1e-6)
    assert ok and added and added[0] > 5
    monkeypatch.setattr(R.RenyiDirection, "_tilted_edges", lambda self, edges, top: edges)
    up0, lo0, ok0, _, _ = R.RenyiDirection(pr).bounds(orders, 1e-6)
    assert ok0 and np.all(lo <= up0) and np.all(lo0 <= up)
    e_lo, e_up = _exact_log_excess(pr, 1024.0)
    assert lo[1] <= e_up and e_lo <= up[1], (lo[1], e_lo, e_up, up[1])

"""The chord bounds of blocks of clone counts (renyi._chord_applies, RenyiDirection._chord_bounds): log K(c) is convex in
the clone count c for integer orders (lemma94's theorem: the raw moments of a binomial mean are log-convex in the number
of trials), checked in exact rationals and mpmath, and the bounds built on it against 50-digit sums."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from shuffle_accountant.analyses import pair_for
from shuffle_accountant.numeric import renyi as R
from shuffle_accountant.numeric.clones import ClonePair


def _moment(m: int, s: Fraction, k: int) -> Fraction:
    """E[(S_m / m)^k], S_m ~ Bin(m, s), exactly."""
    return sum((Fraction(math.comb(m, a)) * s**a * (1 - s) ** (m - a) * Fraction(a, m) ** k for a in range(m + 1)),
               Fraction(0))


@pytest.mark.parametrize("s", [Fraction(1, 10), Fraction(1, 3), Fraction(1, 2), Fraction(9, 10)])
def test_theorem_binomial_mean_moments_are_log_convex_in_m(s):
    """The theorem (renyi._chord_applies' docstring) in exact rationals: mu_k(m)^2 <= mu_k(m - 1) mu_k(m + 1) for m = 2
    .. 14, integer k = 1 .. 9; and for real k (1.5, 2.7, 7.3) in 40-digit mpmath."""
    for k in range(1, 10):
        mu = [None] + [_moment(m, s, k) for m in range(1, 16)]
        for m in range(2, 15):
            assert mu[m] ** 2 <= mu[m - 1] * mu[m + 1], (s, k, m)
    with mpmath.workdps(40):
        sm = mpmath.mpf(s.numerator) / s.denominator
        for k in (1.5, 2.7, 7.3):
            km = mpmath.mpf(k)
            mu = [None] + [mpmath.fsum(mpmath.binomial(m, a) * sm**a * (1 - sm) ** (m - a) * (mpmath.mpf(a) / m) ** km
                                       for a in range(m + 1)) for m in range(1, 16)]
            for m in range(2, 15):
                assert mu[m] ** 2 <= mu[m - 1] * mu[m + 1] * (1 + mpmath.mpf(10) ** -35), (s, k, m)


def _weights(pr):
    r0, r1, pa, pb = (mpmath.mpf(x) for x in (pr.r0, pr.r1, pr.pa, pr.pb))
    return r0 + r1, r0 / (r0 + r1), pa / (pa + pb), pb / (pa + pb)


def _kernel(u, v, s, c: int, alpha: float):
    """K(c) = sum_a P_c(a)^alpha Q_c(a)^(1 - alpha), P_c(a) = u B(a - 1) + (1 - u) B(a), B = Bin(c, s) (mpmath)."""
    B = [mpmath.binomial(c, k) * s**k * (1 - s) ** (c - k) for k in range(c + 1)]
    below, at = [mpmath.mpf(0)] + B, B + [mpmath.mpf(0)]
    pq = [(u * b1 + (1 - u) * b0, v * b1 + (1 - v) * b0) for b1, b0 in zip(below, at)]
    a = mpmath.mpf(alpha)
    return mpmath.fsum(P**a * Q ** (1 - a) for P, Q in pq if P > 0)


#: pairs meeting the hypothesis: clones (s = 1/2) and s = 1/4 with u = 0.8 >= s >= v = 0.2, both directions
PAIRS = [pair_for("clones", 2.0, 200).pair, pair_for("clones", 6.0, 200).pair, ClonePair(200, 0.1, 0.3, 0.8, 0.2, 0.0),
         ClonePair(200, 0.1, 0.3, 0.2, 0.8, 0.0)]


@pytest.mark.parametrize("pr", PAIRS)
def test_kernel_log_convex_in_c_at_integer_orders(pr):
    """The corollary: log K(c) has non-negative second differences in c = 0 .. 40 at integer orders 2, 3, 17, 256
    (40 digits), for pairs that meet renyi._chord_applies' hypothesis (which it accepts)."""
    d = R.RenyiDirection(pr)
    assert R._chord_applies(d.pa1, d.pb1, d.s)
    with mpmath.workdps(40):
        _, s, u, v = _weights(pr)
        for alpha in (2, 3, 17, 256):
            lk = [mpmath.log(_kernel(u, v, s, c, alpha)) for c in range(41)]
            for c in range(1, 40):
                assert lk[c - 1] - 2 * lk[c] + lk[c + 1] >= -mpmath.mpf(10) ** -30, (alpha, c)


def test_chord_applies_only_where_the_hypothesis_holds():
    """Orders: integers >= 2 only; pairs: u >= s >= v > 0 or the mirror, with a margin for the floats' rounding."""
    orders = np.array([1.25, 1.5, 2.0, 2.5, 3.0, 64.0, 100.5, 1024.0])
    got = R._chord_orders(orders, 0.8, 0.2, 0.5)
    assert got.tolist() == [False, False, True, False, True, True, False, True]
    assert R._chord_applies(0.2, 0.8, 0.5) and R._chord_applies(0.8, 0.2, 0.25) and R._chord_applies(0.1, 0.8, 0.25)
    assert not R._chord_applies(0.6, 0.4, 0.25)  # both above s
    assert not R._chord_applies(0.3, 0.1, 0.5)  # both below s
    assert not R._chord_applies(0.8, 0.0, 0.5)  # v = 0: q vanishes at x = 1
    assert not R._chord_applies(0.5 + 1e-16, 0.5 - 1e-16, 0.5)  # within the floats' rounding of s
    assert not R._chord_applies(0.8, 0.2, 0.0) and not R._chord_orders(orders, 0.6, 0.4, 0.25).any()


def _direction_with_entries(pr, orders, known_every: int, top: int):
    """A RenyiDirection whose entries at counts 0 .. top carry the 50-digit log(K - 1) rounded outwards, evaluated (own
    bounds) at every ``known_every``-th count and at the others taking the envelope (monotone, and at the chord orders
    renyi._chord_envelope); returns it, the entries' bounds, the exact log(K - 1) and the clone count's masses
    (mpmath)."""
    d = R.RenyiDirection(pr)
    d.alpha = orders
    N = pr.n - 1
    with mpmath.workdps(50):
        p, s, u, v = _weights(pr)
        w = [mpmath.binomial(N, c) * p**c * (1 - p) ** (N - c) for c in range(top + 1)]
        K = [[_kernel(u, v, s, c, float(a)) for a in orders] for c in range(top + 1)]
        ex = np.array([[float(mpmath.log(x - 1)) for x in row] for row in K])
    c = np.arange(top + 1.0)
    known = np.broadcast_to((c % known_every == 0)[:, None], ex.shape).copy()
    d.ent_c, d.ent_done, d._c_sorted = c, known, None
    d._ends, d._ends_on = [], False
    d._chord_cols, d._chord_on = R._chord_orders(orders, d.pa1, d.pb1, d.s), True
    e_up, e_lo = d._envelope(np.where(known, ex + 1e-13 * (1 + np.abs(ex)), np.inf),
                             np.where(known, ex - 1e-13 * (1 + np.abs(ex)), -np.inf))
    d._end_budget = np.full(orders.size, -np.inf)
    d.chord_used = 0
    return d, e_up, e_lo, ex, K, w


@pytest.mark.parametrize("pr", PAIRS)
def test_chord_block_bounds_bracket_the_exact_block_sums(pr):
    """RenyiDirection._chord_bounds for every block of counts 0 .. 40 of widths 2 .. 12 (corners cu = c1 and cl = c2 + 1,
    as blocks of totals place them), entries evaluated at every count or every third, brackets the 50-digit sum_{c1}^{c2}
    Pr[C = c] (K(c) - 1) at orders 2, 64, 512, 1024 (not at 1.5: no chord). Where the large orders' kernels fall fast
    (the corners' bounds differ by e^3 or more, orders >= 64) the chord bracket is within 2 % at 3 .. 5 counts wide: a wrong slope
    (its sign, or the corners swapped) breaks either the bracket or that."""
    orders = np.array([1.5, 2.0, 64.0, 512.0, 1024.0])
    top = 40
    tight = loose = 0
    for every in (1, 3):
        d, e_up, e_lo, ex, K, w = _direction_with_entries(pr, orders, every, top)
        for width in (2, 3, 5, 12):
            c1 = np.arange(0.0, top - width)
            c2 = c1 + width - 1
            d.lo, d.hi = c1 + 1.0, c2 + 1.0
            iu, il = c1.astype(np.int64), (c2 + 1.0).astype(np.int64)
            with mpmath.workdps(50):
                mass = [mpmath.fsum(w[int(a):int(b) + 1]) for a, b in zip(c1, c2)]
                exact = [[mpmath.fsum(w[c] * (K[c][j] - 1) for c in range(int(a), int(b) + 1)) for j in range(orders.size)]
                         for a, b in zip(c1, c2)]
            d.lw_up = np.array([float(mpmath.log(x)) + 1e-13 for x in mass])
            got = d._chord_bounds(e_up, e_lo, iu, il, np.ones((c1.size, 1), dtype=bool))
            assert got is not None
            r, o, up, lo, _ = got
            assert not np.any(orders[o] == 1.5)
            for k in range(r.size):
                with mpmath.workdps(50):
                    le = float(mpmath.log(exact[r[k]][o[k]]))
                assert lo[k] <= le <= up[k], (pr, every, width, c1[r[k]], orders[o[k]], lo[k], le, up[k])
                corner_gap = e_up[iu[r[k]], o[k]] - e_lo[il[r[k]], o[k]]
                if width in (3, 5) and corner_gap > 3.0 and every == 1 and orders[o[k]] >= 64:
                    loose += 1
                    tight += up[k] - lo[k] < 0.02
    if pr.pa == pair_for("clones", 6.0, 200).pair.pa:
        assert loose > 20 and tight == loose, (tight, loose)


def _exact_log_excess(pr, alpha: float):
    """log of sum_c Pr[C = c] (K(c) - 1) to a count where the rest, at most Pr[C > c] (K(c) - 1), is below 1e-10 of the
    sum so far: (lower, upper) (30 digits)."""
    N = pr.n - 1
    with mpmath.workdps(30):
        p, s, u, v = _weights(pr)
        part, below, c = mpmath.mpf(0), mpmath.mpf(0), 0
        while True:
            wc = mpmath.binomial(N, c) * p**c * (1 - p) ** (N - c)
            kc = _kernel(u, v, s, c, alpha) - 1
            part, below = part + wc * kc, below + wc
            slack = (1 - below) * kc
            if slack < 1e-10 * part or c == N:
                break
            c += 1
        return float(mpmath.log(part)), float(mpmath.log(part + slack))


@pytest.mark.parametrize("pr", [pair_for("clones", 2.0, 1500).pair, pair_for("stronger-clones", 2.0, 600).pair,
                                pair_for("clones", 4.0, 6000).pair, pair_for("clones", 6.0, 60000).pair,
                                pair_for("clones", 3.0, 6000).pair])
def test_chord_in_use_brackets_the_exact_sum(pr, monkeypatch):
    """RenyiDirection.bounds with the chord bounds in use (asserted: computed at some block and order, and tighter there
    than the corners' bounds) brackets log(S_alpha - 1) at rtol 1e-6 against the sum over clone counts of Pr[C = c] (K(c)
    - 1), each kernel from its definition (orders 1.5, 3, 512, 1024). Without slabs (at these n they would hold the
    orders' sums and leave the blocks little to do; the first round converges at eps0 = 6 below n ~ 3e4). At eps0 = 3,
    n = 6000 the first blocks are evaluated at the chord orders at every few corners only (asserted; the others from
    renyi._chord_envelope)."""
    monkeypatch.setattr(R, "_SLAB_MIN_ROWS", 10**9)
    strides = []
    stride = R.RenyiDirection._chord_stride

    def spy_stride(self, lo, hi):
        got = stride(self, lo, hi)
        strides.append(got is not None)
        return got

    monkeypatch.setattr(R.RenyiDirection, "_chord_stride", spy_stride)
    orders = np.array([1.5, 3.0, 512.0, 1024.0])
    won = []
    orig = R.RenyiDirection._chord_bounds

    def spy(self, e_up, e_lo, iu, il, counted):
        got = orig(self, e_up, e_lo, iu, il, counted)
        if got is not None:
            r, o, up, _, _ = got
            corner = self.lw_up[r] + e_up[iu[r], o]
            won.append(int(np.sum(up < corner - 1e-3)))
        return got

    monkeypatch.setattr(R.RenyiDirection, "_chord_bounds", spy)
    d = R.RenyiDirection(pr)
    up, lo, ok, _, _ = d.bounds(orders, 1e-6)
    assert d.chord_used > 0 and sum(won) > 0
    assert any(strides) == (pr.n == 6000 and pr.r0 == pair_for("clones", 3.0, 6000).pair.r0)
    for j in (0, 2, 3):
        e_lo, e_up = _exact_log_excess(pr, float(orders[j]))
        assert lo[j] <= e_up and e_lo <= up[j], (orders[j], lo[j], e_lo, up[j])


@pytest.mark.parametrize("pr, orders", [
    (pair_for("clones", 2.0, 1500).pair, [16.5, 100.5, 1000.5]),  # non-integer orders above Theorem K*'s 16
    (pair_for("clones", 1e-15, 1500).pair, [64.0, 1024.0]),  # u, v within the rounding margin of s, orders > 16
    (ClonePair(1500, 0.1, 0.3, 0.6, 0.4, 0.0), [2.0, 64.0, 1024.0]),  # u, v on the same side of s
])
def test_chord_not_used_outside_the_theorem(pr, orders):
    """No chord bound where neither theorem applies: non-integer orders above 16 (Theorem K* covers the exact symmetric
    pairs up to 16, tests/test_renyi_chord99.py), integer orders above 16 of a pair whose u, v lie within the floats'
    rounding of s (tiny eps0: lemma94's rule refuses, K* stops at 16), a pair with u and v on the same side of s."""
    d = R.RenyiDirection(pr)
    d.bounds(np.array(orders), 1e-3)
    assert not np.any(d._chord_cols) and d.chord_used == 0


@pytest.mark.parametrize("pr", PAIRS)
def test_chord_envelope_brackets_the_exact_kernels(pr):
    """renyi._chord_envelope (through RenyiDirection._envelope): entries evaluated at every 4th count of 0 .. 40 (the
    50-digit log(K - 1) rounded outwards), the others bounded from them, bracket the exact values at every count and
    order; at the integer orders >= 64 of clones eps0 = 6 (the kernel falls fast: the monotone envelope's bounds differ
    by e^3 or more across 4 counts) the bracket is within 0.1 where both neighbours on each side exist (counts 5 ..
    35), which neither a wrong chord nor a wrong secant would give (the chord's sign flipped: no bracket)."""
    orders = np.array([1.5, 2.0, 64.0, 512.0, 1024.0])
    d, e_up, e_lo, ex, _, _ = _direction_with_entries(pr, orders, 4, 40)
    assert np.all(e_lo <= ex) and np.all(ex <= e_up)
    assert np.all(e_up[1:4, 0] == e_up[0, 0])  # (1.5: no chord, the monotone envelope)
    if pr.pa == pair_for("clones", 6.0, 200).pair.pa:
        inner = np.arange(5, 36)
        assert np.all(e_up[inner][:, 2:] - e_lo[inner][:, 2:] < 0.1), e_up[inner][:, 2:] - e_lo[inner][:, 2:]


def test_first_blocks_at_every_few_corners_keep_the_bracket(monkeypatch):
    """eps0 = 2, n = 21544 (the large orders' sums lie ~24 sd below the clone count's mean): the first blocks are
    evaluated at the chord orders at every _CHORD_STRIDE-th corner (asserted: entries not evaluated there after the first
    round), and the curve keeps its bracket: each order's bracket overlaps the one with every corner evaluated, both
    converged, upper ends within rtol of each other."""
    pr = R._rate_rounded_pair(pair_for("clones", 2.0, 21544).pair, 1)
    orders = np.array(R.DEFAULT_ORDERS)
    seen = []
    first = R.RenyiDirection._add_first_blocks

    def spy(self, *a):
        first(self, *a)
        seen.append(self.ent_done.copy())

    monkeypatch.setattr(R.RenyiDirection, "_add_first_blocks", spy)
    d = R.RenyiDirection(pr)
    up2, lo2, ok2, _, _ = d.bounds(orders, 1e-3)
    big = d._chord_cols & (orders >= 64)
    assert big.any() and seen[0][:, big].sum(axis=0).max() * 4 < seen[0].shape[0]  # (every corner of the first round)
    monkeypatch.setattr(R, "_CHORD_STRIDE", 1)
    up1, lo1, ok1, _, _ = R.RenyiDirection(pr).bounds(orders, 1e-3)
    assert ok1 and ok2
    d_up1, d_lo1 = R._to_divergence(up1, orders, True), R._to_divergence(lo1, orders, False)
    d_up2, d_lo2 = R._to_divergence(up2, orders, True), R._to_divergence(lo2, orders, False)
    assert np.all(d_lo2 <= d_up1) and np.all(d_lo1 <= d_up2) and np.all(np.abs(d_up2 - d_up1) <= 1e-3 * d_up1)

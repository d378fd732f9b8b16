"""The chord in the order (renyi._order_chord): an entry not evaluated at an order is bounded from its own bounds at the
nearest evaluated orders (log K is convex in alpha, log K(1) <= 0), and the skip rule of the slabs' first blocks that
evaluates their upper corners at one order first. Checked against 50-digit kernel sums, against an independent mpmath
sum of the whole pair at small n, and against a float log-space sum of the decomposition where the rule is at work."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy.special import gammaln

from shuffle_accountant.analyses import pair_for
from shuffle_accountant.numeric import renyi as R
from shuffle_accountant.numeric.clones import ClonePair

ORDERS = np.array(R.DEFAULT_ORDERS)


def _log_excess_kernel(u, v, s, c: int, alpha) -> mpmath.mpf:
    """log(K(c) - 1), K(c) = sum_a P_c(a)^alpha Q_c(a)^(1 - alpha), P_c(a) = u B(a - 1) + (1 - u) B(a), B = Bin(c, s)
    (mpmath, the caller's precision)."""
    B = [mpmath.binomial(c, k) * s**k * (1 - s) ** (c - k) for k in range(c + 1)]
    below, at = [mpmath.mpf(0)] + B, B + [mpmath.mpf(0)]
    a = mpmath.mpf(alpha)
    k = mpmath.fsum((u * b1 + (1 - u) * b0) ** a * (v * b1 + (1 - v) * b0) ** (1 - a) for b1, b0 in zip(below, at) if u * b1 + (1 - u) * b0 > 0)
    return mpmath.log(k - 1) if k > 1 else mpmath.mpf("-inf")


KERNELS = [(0.8807970779778828, 0.11920292202211732, 0.5), (0.9525741268224334, 0.04742587317756667, 0.5), (0.8, 0.2, 0.25), (0.3, 0.6, 0.4), (0.99, 0.01, 0.5)]


@pytest.mark.parametrize("u, v, s", KERNELS)
def test_log_kernel_is_convex_in_the_order(u, v, s):
    """The fact the chord rests on, in 40-digit sums: h(alpha) = log K is convex on the default orders and h(1) = 0."""
    with mpmath.workdps(40):
        um, vm, sm = mpmath.mpf(u), mpmath.mpf(v), mpmath.mpf(s)
        for c in (0, 5, 40):
            al = [1.0] + [float(a) for a in ORDERS if a <= 256]
            h = [mpmath.mpf(0)] + [mpmath.log1p(mpmath.exp(_log_excess_kernel(um, vm, sm, c, a))) for a in al[1:]]
            for i in range(1, len(al) - 1):
                w = (al[i] - al[i - 1]) / (al[i + 1] - al[i - 1])
                assert h[i] <= (1 - w) * h[i - 1] + w * h[i + 1] + mpmath.mpf(10) ** -30, (u, v, s, c, al[i])


@pytest.mark.parametrize("u, v, s", KERNELS)
def test_order_chord_bounds_the_exact_kernel(u, v, s):
    """_order_chord from 50-digit log(K - 1) values (rounded up by 1e-13 relative, as a certified bound would be) at
    random sets of evaluated orders: every filled-in bound is at least the exact value, no bound is looser than the one
    given, orders with an evaluated order above get a finite bound, and the bound is exact at the evaluated orders."""
    rng = np.random.default_rng(104)
    with mpmath.workdps(50):
        um, vm, sm = mpmath.mpf(u), mpmath.mpf(v), mpmath.mpf(s)
        cs = (0, 3, 17, 60)
        exact = np.array([[float(_log_excess_kernel(um, vm, sm, c, a)) for a in ORDERS] for c in cs])
    up_true = exact + 1e-13 * np.abs(exact) + 1e-300
    for trial in range(40):
        done = rng.random(exact.shape) < (0.05 + 0.4 * rng.random())
        done[:, -1] |= trial % 2 == 0  # (half the trials: the top order evaluated)
        up = np.where(done, up_true, np.inf)
        perm = rng.permutation(ORDERS.size) if trial % 4 == 3 else np.arange(ORDERS.size)  # (unsorted orders too)
        out = R._order_chord(ORDERS[perm], up[:, perm], done[:, perm])[:, np.argsort(perm)]
        assert np.all(out >= exact - 1e-12 * np.abs(exact)), trial
        assert np.all(out <= up)
        assert np.all(out[done] == up[done])
        above = np.flip(np.logical_or.accumulate(np.flip(done, axis=1), axis=1), axis=1)
        assert np.all(np.isfinite(out[above & np.isfinite(exact)]))


def test_order_chord_is_tight_between_close_orders():
    """Between two evaluated neighbours the chord is within a few percent of log K where log K is smooth in alpha (the
    clones kernel at 30 clones, orders 2 .. 64): the bound is not merely finite."""
    u, v, s = KERNELS[0]
    with mpmath.workdps(40):
        exact = np.array([[float(_log_excess_kernel(mpmath.mpf(u), mpmath.mpf(v), mpmath.mpf(s), 30, a)) for a in ORDERS]])
    done = np.zeros(exact.shape, dtype=bool)
    done[0, ::2] = True
    out = R._order_chord(ORDERS, np.where(done, exact, np.inf), done)
    sel = (~done[0]) & (ORDERS >= 2) & (ORDERS <= 64)
    hk = np.logaddexp(0.0, exact[0, sel])
    assert np.all(np.logaddexp(0.0, out[0, sel]) <= 1.05 * hk + 1e-3)


def test_order_chord_without_information():
    """Rows with no evaluated order above an order keep their bound (+inf); infinite evaluated bounds give no bound."""
    up = np.array([[np.inf, 0.5, np.inf, np.inf], [np.inf, np.inf, np.inf, np.inf]])
    done = np.array([[False, True, False, False], [False, False, False, True]])
    out = R._order_chord(np.array([1.5, 2.0, 3.0, 4.0]), up, done)
    assert np.isfinite(out[0, 0]) and np.isinf(out[0, 2]) and np.isinf(out[0, 3])
    assert np.all(np.isinf(out[1]))


# ----- whole pairs against an independent mpmath sum (small n) -----------------------------------------------------


def _oracle_divergence(pair: ClonePair, alpha: float, dps: int = 30) -> float:
    """max(D_alpha(P || Q), D_alpha(Q || P)) (what renyi_bounds brackets) of the clone pair on (a, b) by brute
    force: the other n - 1 users are clones of the first kind (r0), the second (r1) or neither, multinomially; the
    first user adds (1, 0) / (0, 1) / nothing with (pa, pb, p0) under P and (pb, pa, p0) under Q."""
    with mpmath.workdps(dps):
        N = pair.n - 1
        r0, r1, pa, pb, p0 = (mpmath.mpf(x) for x in (pair.r0, pair.r1, pair.pa, pair.pb, pair.p0))
        rest = 1 - r0 - r1
        W = {}
        for a in range(N + 1):
            for b in range(N + 1 - a):
                W[a, b] = mpmath.factorial(N) / (mpmath.factorial(a) * mpmath.factorial(b) * mpmath.factorial(N - a - b)) * r0**a * r1**b * rest ** (N - a - b)
        al = mpmath.mpf(alpha)
        total = [mpmath.mpf(0), mpmath.mpf(0)]
        for a in range(N + 2):
            for b in range(N + 2 - a):
                w10, w01, w00 = W.get((a - 1, b), 0), W.get((a, b - 1), 0), W.get((a, b), 0)
                P = pa * w10 + pb * w01 + p0 * w00
                Q = pb * w10 + pa * w01 + p0 * w00
                if P > 0 and Q > 0:
                    total[0] += P**al * Q ** (1 - al)
                    total[1] += Q**al * P ** (1 - al)
        return float(max(mpmath.log(t) for t in total) / (al - 1))


SMALL = [pair_for("clones", 2.0, 40).pair, pair_for("clones", 4.0, 30).pair, pair_for("stronger-clones", 3.0, 40).pair, ClonePair(36, 0.1, 0.3, 0.8, 0.2, 0.0)]


@pytest.mark.parametrize("pair", SMALL, ids=lambda p: f"n{p.n}-r{p.r0:.3g}")
def test_small_pairs_against_brute_force(pair):
    orders = [1.5, 2.0, 5.0, 16.0, 64.0, 256.0, 1024.0]
    rb = R.renyi_bounds(pair, orders, rtol=1e-3)
    for a, up, lo in zip(rb.orders, rb.upper, rb.lower):
        d = _oracle_divergence(pair, a)
        assert lo <= d * (1 + 1e-9) + 1e-300, (a, lo, d)
        assert up >= d * (1 - 1e-9), (a, up, d)


# ----- where the new rule is at work: a float log-space sum of the decomposition --------------------------------------


def _float_terms(pair: ClonePair, alpha: np.ndarray) -> np.ndarray:
    """log(Pr[C = c] (K(c) - 1)) per count c = 0 .. N (rows) and order (columns) of one direction of a pair with p0 = 0
    (S - 1 = sum_c Pr[C = c] (K(c) - 1)), every a summed in log space (float64, ~1e-11 relative: an oracle for
    brackets of width 1e-3 and for block bounds, not a bound itself)."""
    N = pair.n - 1
    p = pair.r0 + pair.r1
    s = pair.r0 / p
    u, v = pair.pa / (pair.pa + pair.pb), pair.pb / (pair.pa + pair.pb)
    c = np.arange(N + 1, dtype=float)
    lpc = gammaln(N + 1.0) - gammaln(c + 1.0) - gammaln(N - c + 1.0) + c * math.log(p) + (N - c) * math.log1p(-p)
    out = np.full((N + 1, alpha.size), -np.inf)
    for ci in range(N + 1):
        a = np.arange(ci + 2, dtype=float)
        m = ci + 1.0
        lm = gammaln(m + 1.0) - gammaln(a + 1.0) - gammaln(m - a + 1.0) + a * math.log(s) + (m - a) * math.log1p(-s)
        x = a / m
        lp, lq = np.log(u * x / s + (1 - u) * (1 - x) / (1 - s)), np.log(v * x / s + (1 - v) * (1 - x) / (1 - s))
        terms = lm[None, :] + alpha[:, None] * lp[None, :] + (1 - alpha[:, None]) * lq[None, :]
        top = terms.max(axis=1)
        k = top + np.log(np.exp(terms - top[:, None]).sum(axis=1))  # log K
        kk = np.maximum(k, 1e-300)
        out[ci] = lpc[ci] + np.where(k > 1e-3, kk + np.log(-np.expm1(-kk)), np.log(np.expm1(np.minimum(kk, 1e-3))))
    return out


def _skipped(pair: ClonePair, monkeypatch, chord: bool) -> tuple[int, np.ndarray, np.ndarray, bool, R.RenyiDirection, np.ndarray]:
    """(first blocks outside the slabs left unevaluated at some order, upper, lower, converged, the direction, its
    entries' final log(K - 1) upper bounds) of one direction."""
    monkeypatch.setattr(R, "_ORDER_CHORD", chord)
    seen = []
    orig = R.RenyiDirection._add_blocks

    def spy(self, lo, hi, need=None, need_lo=None, masses=None):
        if need is not None and self.slabs:
            seen.append(int(np.sum(~need & ~self._covered(lo, hi))))
        return orig(self, lo, hi, need, need_lo, masses)

    monkeypatch.setattr(R.RenyiDirection, "_add_blocks", spy)
    d = R.RenyiDirection(pair)
    up, lo, conv, _, _ = d.bounds(ORDERS, 1e-3)
    monkeypatch.setattr(R.RenyiDirection, "_add_blocks", orig)
    return sum(seen), up, lo, conv, d, d._entry_totals()[0]


@pytest.mark.parametrize("method, eps0, n", [("stronger-clones", 1.5, 4000), ("clones", 3.0, 1200)])
def test_anchor_rule_against_float_sum(method, eps0, n, monkeypatch):
    """Pairs with slabs whose first blocks outside the slab are skipped at some orders: the brackets hold the float sum
    of the decomposition (relative 1e-9 slack), and so does every block's upper bound from its corner entry (mass x
    the entry's log(K - 1) bound after the envelopes, which is where the chord in the order enters: the skipped
    blocks are negligible in the total, so only this per-block check would see a bound below the truth). At
    stronger-clones 1.5 / 4000 the chord skips more (block, order) elements than mass x (K(0) - 1) alone (the path is
    exercised), and the bracket still overlaps the rule-free one."""
    pair = pair_for(method, eps0, n).pair
    k_new, up, lo, conv, d, e_up = _skipped(pair, monkeypatch, True)
    k_old, up0, lo0, conv0, _, _ = _skipped(pair, monkeypatch, False)
    assert conv and conv0
    if method == "stronger-clones":
        assert k_new > k_old
    assert np.all(lo <= up0) and np.all(lo0 <= up)
    terms = _float_terms(pair, ORDERS)
    top = terms.max(axis=0)
    ref = top + np.log(np.exp(terms - top).sum(axis=0))
    assert np.all(up >= ref - 1e-9 * np.abs(ref)) and np.all(lo <= ref + 1e-9 * np.abs(ref))
    chorded = 0
    for b in range(d.lo.size):
        if d.hi[b] < 1.0:
            continue
        c1, c2 = int(max(d.lo[b], 1.0)) - 1, int(d.hi[b]) - 1
        blk = terms[c1 : c2 + 1]
        bt = blk.max(axis=0)
        with np.errstate(invalid="ignore"):
            exact = np.where(np.isfinite(bt), bt + np.log(np.exp(blk - np.where(np.isfinite(bt), bt, 0.0)).sum(axis=0)), -np.inf)
        bound = d.lw_up[b] + e_up[d.iu[b]]
        assert np.all(bound >= exact - 1e-9 * np.abs(exact) - 1e-9), (d.lo[b], d.hi[b])
        chorded += int(np.sum(~d.ent_done[d.iu[b]] & np.isfinite(e_up[d.iu[b]])))
    assert chorded > 0

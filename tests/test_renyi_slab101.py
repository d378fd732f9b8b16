"""Scaled slabs (renyi._Slab._block_scales, slab101; work only: every slab is certified): a scale of the weights per
block of cells instead of one per slab, so that a slab holding both the bulk and a large order's saddle near x = 1 no
longer charges e^-700 of the bulk's largest weight per point there. Tested: the scales bound every point's 50-digit
weight, a scaled slab brackets the 50-digit sum over its points at every level, the coarser levels' rescaling loses
no mass beyond the clip charge, the plan keeps the orders where claimed (eps0 = 2, n = 1.2e4), and curves with every
slab scaled still bracket an independent 30-digit sum."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from test_renyi_oracle import _slab_exact, _slab_setup
from test_renyi_slab100 import _log_excess_30

from shuffle_accountant.analyses import pair_for
from shuffle_accountant.numeric import renyi as R

SMALL = [("clones", 1.0, 150), ("stronger-clones", 4.0, 90)]


def _rectangles(s: float, sx: float) -> list[tuple[float, float]]:
    return [(s - 3.0 * sx, s + 3.0 * sx), (max(s - 1.5 * sx, 0.0), 1.0), (0.0, min(s + 2.0 * sx, 1.0))]


@pytest.mark.parametrize("blocks", [R._SLAB_SCALE_BLOCKS, 4])
@pytest.mark.parametrize("method, eps0, n", SMALL)
def test_block_scales_bound_every_points_weight(method, eps0, n, blocks, monkeypatch):
    """Each finest cell's scale (ref + R) is at least the 50-digit log weight log Pr[C = c] + log Bin(a; c + 1, s) of
    every point whose x = a/(c + 1) lies in the cell's interval [x_k - 1e-12, x_k+1 + 1e-12] (Chernoff's bound on the
    binomial pmf at the point of the block nearest s), with the default blocks and with 4 wide ones. Fails (4 blocks)
    with KL taken at the block's end farthest from s."""
    monkeypatch.setattr(R, "_SLAB_SCALE_BLOCKS", blocks)
    p = pair_for(method, eps0, n).pair
    d, s, _, _, c1, c2, sx = _slab_setup(p)
    checked = 0
    with mpmath.workdps(50):
        r0, r1 = mpmath.mpf(p.r0), mpmath.mpf(p.r1)
        pm, sm = r0 + r1, r0 / (r0 + r1)
        for x_lo, x_hi in _rectangles(s, sx):
            slab = R._Slab(float(d.N), d.p, s, d.rel, np.arange(1), c1, c2, x_lo, x_hi, scaled=True)
            assert slab.R is not None and len(slab.R) == len(slab.W)
            h, nc = slab.h[0], slab.R[0].size
            scale = slab.ref + slab.R[0]
            assert np.ptp(scale) > 0.1  # (the blocks' scales differ: the test sees more than one scale)
            for c in range(c1, c2 + 1):
                m = c + 1
                lpc = mpmath.log(mpmath.binomial(d.N, c)) + c * mpmath.log(pm) + (d.N - c) * mpmath.log(1 - pm)
                for a in range(max(math.ceil(x_lo * m), 0), min(math.floor(x_hi * m), m) + 1):
                    x = a / m
                    lw = float(lpc + mpmath.log(mpmath.binomial(m, a)) + a * mpmath.log(sm) + (m - a) * mpmath.log(1 - sm))
                    k_lo = max(int(math.floor((x - x_lo - 1e-12) / h)), 0)
                    k_hi = min(int(math.floor((x - x_lo + 1e-12) / h)), nc - 1)
                    for k in range(k_lo, k_hi + 1):
                        assert lw <= scale[k], (c, a, k, lw, scale[k])
                        checked += 1
    assert checked > 100


@pytest.mark.parametrize("method, eps0, n", SMALL)
def test_scaled_slab_brackets_the_exact_sum_at_every_level(method, eps0, n):
    """A scaled slab (window and tails, every level of cells, with and without the coarse cells' runs) brackets the
    50-digit sum over its counts, as the single-scale slab does (tests/test_renyi_oracle.py), and its brackets overlap
    the single-scale slab's. Fails if the window takes the slab's one scale (ref) for every cell, or if the coarser
    levels sum the children without their factors exp(R_child - R_parent)."""
    pr = pair_for(method, eps0, n).pair
    orders = np.array([1.3, 2.0, 10.0, 64.0, 256.0])
    for p in (pr, pr.mirrored()) if not pr.symmetric else (pr,):
        d, s, bp, bq, c1, c2, sx = _slab_setup(p)
        exact = [_slab_exact(p, float(a), c1, c2) for a in orders]
        with mpmath.workdps(50):
            le = np.array([float(mpmath.log(e)) for e in exact])
        for x_lo, x_hi in _rectangles(s, sx):
            slab = R._Slab(float(d.N), d.p, s, d.rel, np.arange(orders.size), c1, c2, x_lo, x_hi, scaled=True)
            plain = R._Slab(float(d.N), d.p, s, d.rel, np.arange(orders.size), c1, c2, x_lo, x_hi)
            tail = slab.tails(d.pa1, d.pb1, bp, bq, orders, d.rel, math.log(1e-6), np.zeros(orders.size))
            for level in range(len(slab.h)):
                for log_tol in (None, math.log(1e-3)):
                    up, lo = slab.window(d.pa1, d.pb1, bp, bq, orders, level, log_tol)
                    up = np.logaddexp(up, tail)
                    assert np.all(lo <= le) and np.all(le <= up), (p, level, x_lo, x_hi, lo, le, up)
                up0, lo0 = plain.window(d.pa1, d.pb1, bp, bq, orders, level)
                assert np.all(lo <= np.logaddexp(up0, tail)) and np.all(lo0 <= up)
            up, lo = slab.window(d.pa1, d.pb1, bp, bq, orders, 0)
            assert np.all(up - lo < 0.05)


def test_rescaled_levels_keep_every_childs_mass():
    """At the benchmark's pair clones eps0 = 2, n = 1.2e4 (the scaled slab of orders 384 .. 1024, scales over ~800
    nats): at every coarser level, each cell's upper mass (W (1 + 1e-12) plus the clip charge n_pt e^-700, at its
    scale) is at least its two children's masses at theirs, and a non-empty child never has an empty parent. Fails if
    children are dropped below e^-10 of the parent's scale instead of e^-701 (not at e^-50: the children dropped
    there happen to weigh less than the clip charge at this pair)."""
    pr = pair_for("clones", 2.0, 12_000).pair
    d = R.RenyiDirection(pr)
    d.bounds(np.array(R.DEFAULT_ORDERS), 1e-3)
    scaled = [sl for sl in d.slabs if sl.R is not None]
    assert len(scaled) == 1
    sl = scaled[0]
    assert np.ptp(sl.R[0]) > 700.0
    for lv in range(1, len(sl.W)):
        with np.errstate(divide="ignore"):
            child = np.log(sl.W[lv - 1]) + sl.R[lv - 1]
            pair = np.logaddexp(child[0::2], child[1::2])
            parent = np.log(sl.W[lv] * (1.0 + 1e-12) + np.where(sl.W[lv] > 0.0, sl._clip_up(sl.count[lv]), 0.0)) + sl.R[lv]
        assert np.all((sl.W[lv] > 0.0) == ((sl.W[lv - 1][0::2] > 0.0) | (sl.W[lv - 1][1::2] > 0.0)))
        assert np.all(pair <= parent), lv


def test_scaled_slab_keeps_the_orders_the_clip_floor_took_out():
    """eps0 = 2, n = 1.2e4 (clones, the worst cell of issue 13 at HEAD 3fa84d3: 24-30x one query): the plan's slab of
    orders 384 .. 1024 reaches from the bulk to x = 1, where the weights are below e^-700 of the bulk's; with one scale
    its clipped points alone exceed the budgets of 512 .. 1024 (_slab_clip_floor), which then got no slab and took three
    refinement rounds of blocks. Scaled, all 40 orders keep a slab, the curve converges, and both directions' brackets
    overlap the single-scale ones with upper ends within the curve's rtol of them."""
    pr = pair_for("clones", 2.0, 12_000).pair
    orders = np.array(R.DEFAULT_ORDERS)
    d = R.RenyiDirection(pr)
    up, lo, ok, _, _ = d.bounds(orders, 1e-3)
    assert ok and np.all(d.slab_of >= 0)
    big = orders >= 512
    assert all(d.slabs[g].R is not None for g in np.unique(d.slab_of[big]))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(R, "_SLAB_SCALED", False)
        d0 = R.RenyiDirection(pr)
        up0, lo0, ok0, _, _ = d0.bounds(orders, 1e-3)
    assert ok0 and np.all(d0.slab_of[big] < 0) and all(sl.R is None for sl in d0.slabs)
    assert np.all(lo <= up0) and np.all(lo0 <= up)
    # D = log1p(S - 1) / (alpha - 1): upper ends within rtol of the single-scale ones
    assert np.all(np.logaddexp(0.0, up) <= np.logaddexp(0.0, up0) * (1.0 + 1e-3))


def test_scaled_slabs_bracket_the_30_digit_sum(monkeypatch):
    """Every planned slab scaled (the clip floor forced to +inf, so each group is 'clipped'): stronger-clones eps0 = 2,
    n = 4000 (one slab of every order, slab100's pair) still converges and brackets the 30-digit sum over clone counts
    (tests/test_renyi_slab100.py's recurrence oracle, itself checked against tests/oracle.py) at orders 2.5, 64, 1024."""
    monkeypatch.setattr(R, "_slab_clip_floor", lambda *a, **k: np.full(np.asarray(a[5]).size, np.inf))
    pr = pair_for("stronger-clones", 2.0, 4000).pair
    orders = np.array([2.5, 64.0, 1024.0])
    d = R.RenyiDirection(pr)
    up, lo, ok, _, _ = d.bounds(orders, 1e-3)
    assert ok and d.slabs and all(sl.R is not None for sl in d.slabs) and np.all(d.slab_of >= 0)
    for j, (e_lo, e_up) in enumerate(_log_excess_30(pr, orders)):
        assert lo[j] <= e_lo and e_up <= up[j], (orders[j], lo[j], e_lo, e_up, up[j])

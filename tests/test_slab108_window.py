"""One window for both measures of a strided slab (slab108, issue 13): ``renyi._StrideSlab.window``.

The upper end must be exactly :meth:`_Slab.window`'s upper end of the upper measure (the same cells, the same runs'
bound), and the lower end a sum of the lower measure's certified cell bounds over a subset of its cells: at most the
lower end over every cell, and close to it (the runs carry all but ``log_tol`` of the sum). Then the curve's brackets,
strided slabs forced at small ``n``, against the independent brute-force oracle (``tests/oracle.py``), and a mutant
(the lower end from the upper measure's cells) that must fail there."""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffle_accountant.analyses import pair_for
from shuffle_accountant.numeric import renyi as R
from stride_spies import force_strides, record_strided_slabs
from test_slab107_stride import _oracle_rdp


def _strided_windows(monkeypatch, method: str, eps0: float, n: int, force: bool) -> list:
    """The (slab, window arguments) of every strided-slab window a curve's directions evaluate."""
    if force:
        force_strides(monkeypatch)
    calls = []
    window = R._StrideSlab.window

    def spy(self, *args, **kw):
        calls.append((self, args, kw))
        return window(self, *args, **kw)

    monkeypatch.setattr(R._StrideSlab, "window", spy)
    sp = pair_for(method, eps0, n)
    R.renyi_bounds(sp.pair, R.DEFAULT_ORDERS, rtol=1e-3, scale=sp.scale)
    monkeypatch.setattr(R._StrideSlab, "window", window)
    return calls


@pytest.mark.parametrize(
    "method, eps0, n, force",
    [("clones", 3.0, 100_000, False), ("clones", 4.0, 200_000, False), ("clones", 2.5, 400, True), ("stronger-clones", 3.0, 300, True)],
)
def test_one_window_is_the_two_windows(monkeypatch, method, eps0, n, force):
    calls = _strided_windows(monkeypatch, method, eps0, n, force)
    assert calls
    for slab, (u, v, bp, bq, alpha, level, *rest), kw in calls:
        log_tol = rest[0] if rest else kw.get("log_tol")
        up, lo = slab.window(u, v, bp, bq, alpha, level, log_tol)
        # the upper end: the upper measure's own window, bit for bit, per order with the runs' bound or (where the
        # runs exceed log_tol of the lower end, which now is the lower measure's) over every cell
        up_runs = slab.up.window(u, v, bp, bq, alpha, level, log_tol)[0]
        up_every = slab.up.window(u, v, bp, bq, alpha, level)[0]
        assert np.all((up == up_runs) | (up == up_every))
        # the lower end: over every cell of the lower measure it can only grow (up to the sums' rounding)
        lo_all = slab.lo.window(u, v, bp, bq, alpha, level)[1]
        assert np.all(lo <= lo_all + 1e-12 * (1.0 + np.abs(lo_all)))
        # ... and the cells left out carry at most log_tol of it (the runs' share)
        if log_tol is not None:
            assert np.all(lo >= lo_all + math.log1p(-2.0 * math.exp(log_tol)))
        assert np.all(lo <= up)
        # every cell (log_tol far below every runs' bound): both ends over all cells, as the two windows without runs
        up_f, lo_f = slab.window(u, v, bp, bq, alpha, level, -800.0)
        assert np.array_equal(up_f, slab.up.window(u, v, bp, bq, alpha, level)[0])
        assert np.allclose(lo_f, lo_all, rtol=0.0, atol=1e-12 * (1.0 + float(np.max(np.abs(lo_all)))))


_ORDERS = [1.5, 3.0, 8.0, 32.0, 128.0, 512.0, 1024.0]


def _bracket(monkeypatch, method, eps0, n, rtol):
    force_strides(monkeypatch)
    used = []
    window = R._StrideSlab.window

    def spy(self, *args, **kw):
        used.append(self.stride)
        return window(self, *args, **kw)

    monkeypatch.setattr(R._StrideSlab, "window", spy)
    sp = pair_for(method, eps0, n)
    got = R.renyi_bounds(sp.pair, _ORDERS, rtol=rtol, scale=sp.scale)
    assert used and max(used) >= 8, used  # (a strided slab's window bounded some order)
    return sp, got


@pytest.mark.parametrize("method, eps0, n", [("clones", 2.5, 240), ("stronger-clones", 2.0, 220)])
@pytest.mark.parametrize("rtol", [1e-3, 1e-6])
def test_forced_strided_windows_hold_the_oracle(monkeypatch, method, eps0, n, rtol):
    sp, got = _bracket(monkeypatch, method, eps0, n, rtol)
    exact = _oracle_rdp(sp, _ORDERS)
    for a, lo, up, ex in zip(_ORDERS, got.lower, got.upper, exact):
        assert lo <= ex <= up, (a, lo, float(ex), up)
    assert got.converged


def test_lower_end_from_the_upper_measure_fails_the_oracle(monkeypatch):
    """Mutant: the lower end summed over the upper measure's cells (hat weights, an over-count of a convex sum) lies
    above the exact divergence at some order: the oracle test above sees which measure the lower end uses."""
    window = R._StrideSlab.window

    def window_mutant(self, u, v, bp, bq, alpha, level, log_tol=None):
        # the lower slab's rows replaced by the upper one's (its cells, its weights)
        lo = self.lo
        self.lo = self.up
        try:
            return window(self, u, v, bp, bq, alpha, level, log_tol)
        finally:
            self.lo = lo

    monkeypatch.setattr(R._StrideSlab, "window", window_mutant)
    sp = pair_for("clones", 2.5, 240)
    force_strides(monkeypatch)
    got = R.renyi_bounds(sp.pair, _ORDERS, rtol=1e-6, scale=sp.scale)
    exact = _oracle_rdp(sp, _ORDERS)
    assert any(lo > ex for lo, ex in zip(got.lower, exact))


@pytest.mark.parametrize(
    "c1, c2, N, p, stride, x_lo, x_hi",
    [
        (4213, 5392, 99999.0, 0.04978706836786383, 7, 0.461, 0.734),  # eps0 = 3, n = 1e5's slab
        (40, 180, 999.0, 0.1, 9, 0.3, 0.9),
    ],
)
def test_second_measure_in_one_pass_is_its_own_slab(c1, c2, N, p, stride, x_lo, x_hi):
    """The lower measure built in the upper one's pass (``_Slab``'s ``second``: the points' weights times a factor per
    row) has the sums of a slab built on its own (rows with a piece), at every level, to within its rounding charge:
    ``W e^ref``, ``Z e^ref``, ``S e^ref`` within ``e^(2 eps)``, and its ``eps`` at least the separate slab's."""
    s = 0.4
    orders = np.array([2.0, 64.0])
    rows, w_up, w_lo = R._stride_weights(c1, c2, N, p, stride)
    shared = R._Slab(N, p, s, 1e-15, orders, c1, c2, x_lo, x_hi, False, (rows, *w_up), w_lo[0])
    lo = shared.second
    assert lo is not None and lo.second is None
    pos = w_lo[0] > -np.inf
    alone = R._Slab(N, p, s, 1e-15, orders, c1, c2, x_lo, x_hi, False, (rows[pos], w_lo[0][pos], w_lo[1][pos]))
    assert lo.eps >= alone.eps - 1e-12 and lo.eps <= alone.eps + 1e-9
    assert len(lo.W) == len(alone.W) and lo.h == alone.h
    tol = math.expm1(lo.eps + alone.eps) + 1e-13
    for k in range(len(lo.W)):
        for a, b in ((lo.W[k], alone.W[k]), (lo.Z[k], alone.Z[k]), (lo.S[k], alone.S[k])):
            x, y = a * math.exp(lo.ref - alone.ref), b
            assert np.all(np.abs(x - y) <= tol * np.abs(y) + 1e-300), k
    # the upper measure itself is the slab built without the second (bit for bit)
    plain = R._Slab(N, p, s, 1e-15, orders, c1, c2, x_lo, x_hi, False, (rows, *w_up))
    for k in range(len(plain.W)):
        assert np.array_equal(plain.W[k], shared.W[k]) and np.array_equal(plain.S[k], shared.S[k])


@pytest.mark.parametrize("eps0, n", [(6.0, 1_000_000), (5.75, 1_000_000)])
def test_coarse_strides_of_smaller_slabs_meet_the_full_slab(monkeypatch, eps0, n):
    """Slabs of ~0.3M planned points are strided where the stride is at least ``_STRIDE_COARSE`` (slab108); their curve's
    brackets meet the full slab's (strides off), upper ends within the rtol, every order converged."""
    built = record_strided_slabs(monkeypatch)
    sp = pair_for("clones", eps0, n)
    got = R.renyi_bounds(sp.pair, R.DEFAULT_ORDERS, rtol=1e-3, scale=sp.scale)
    strides = [slab.stride for slab in built]
    assert strides and min(strides) >= R._STRIDE_COARSE
    monkeypatch.setattr(R, "_STRIDE_THETA", 0.0)
    full = R.renyi_bounds(sp.pair, R.DEFAULT_ORDERS, rtol=1e-3, scale=sp.scale)
    assert got.converged and full.converged
    for lo, up, lo0, up0 in zip(got.lower, got.upper, full.lower, full.upper):
        assert lo <= up0 and lo0 <= up and up <= up0 * (1 + 1e-3)

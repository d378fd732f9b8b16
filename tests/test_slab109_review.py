"""Strided slabs after review rev107s (slab109, issue 13): no stride where the masses
span more than ``renyi._STRIDE_MAX_SPREAD`` nats (D2), and tests that see the upper measure's tails and the
convexity gate (D3: the reviewer's mutants M1, ``_StrideSlab.tails`` returning ``-inf``, and M5, the gate's
``np.all`` made ``np.any``, passed every earlier test)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffle_accountant.analyses import pair_for
from shuffle_accountant.numeric import renyi as R
from stride_spies import force_strides, record_strided_slabs

_ORDERS = [1.25, 1.5, 2.0, 3.5, 7.0, 16.0, 20.0, 64.0, 256.0, 1024.0]


def test_weights_refuse_a_span_that_would_underflow():
    """D2: over counts 8 .. 160 of Bin(160, 0.00786) ``log Pr`` falls by ~746 nats; scaled by the largest, the masses
    of the last counts underflowed to 0 and the hat weights' ``log`` to ``-inf`` (no upper end: the ``(c - k)_+``
    hinges failed at k = 158, 159). Now refused (the hinge test of test_slab107_stride covers a ~590-nat span)."""
    with pytest.raises(ValueError):
        R._stride_weights(8, 160, 160.0, 0.00786480756925279, 5)
    rows, (lom, _), _ = R._stride_weights(8, 137, 160.0, 0.00786480756925279, 5)
    assert np.all(np.isfinite(lom))


def test_forced_wide_slab_is_not_strided(monkeypatch):
    """D2: the reviewer's forced case (stride >= 1, stronger-clones 3 / 3e4): a slab over counts 557 .. 1720 (~1000
    nats of ``log Pr``) had 8 of 35 rows at ``-inf`` and a NaN ``eps`` (a RuntimeWarning, an error here). Now every
    strided slab spans at most ``_STRIDE_MAX_SPREAD`` nats, no warning, and the brackets meet the unstrided ones."""
    force_strides(monkeypatch, 1)
    built, planned = record_strided_slabs(monkeypatch), []
    stride = R.RenyiDirection._stride

    def spy(self, js, c1, c2, *args):
        planned.append((c1, c2, float(self.N), self.p))
        return stride(self, js, c1, c2, *args)

    monkeypatch.setattr(R.RenyiDirection, "_stride", spy)
    sp = pair_for("stronger-clones", 3.0, 30_000)
    got = R.renyi_bounds(sp.pair, _ORDERS, rtol=1e-3, scale=sp.scale)
    assert built and got.converged

    def span(c1, c2, N, p):
        lo, up = R._log_pmf_bracket(np.arange(c1, c2 + 1, dtype=float), np.full(c2 - c1 + 1, N), p)
        return float(np.max(up) - np.min(lo))

    assert any(span(*a) > R._STRIDE_MAX_SPREAD for a in planned)  # (the wide slab was planned: 557 .. 1720)
    for s in built:
        N, p = next((N, p) for c1, c2, N, p in planned if (c1, c2) == (s.c1, s.c2))
        assert span(s.c1, s.c2, N, p) <= R._STRIDE_MAX_SPREAD
        assert math.isfinite(s.up.eps) and math.isfinite(s.lo.eps)
    monkeypatch.setattr(R, "_STRIDE_THETA", 0.0)
    full = R.renyi_bounds(sp.pair, _ORDERS, rtol=1e-3, scale=sp.scale)
    for lo, up, lo0, up0 in zip(got.lower, got.upper, full.lower, full.upper):
        assert lo <= up0 and lo0 <= up


def _captured_slab(monkeypatch, method: str, eps0: float, n: int) -> tuple:
    """The constructor and first window arguments of a forced strided slab of a curve (rtol 1e-3)."""
    force_strides(monkeypatch)
    inits, wins = [], []
    init, window = R._StrideSlab.__init__, R._StrideSlab.window

    def spy_init(self, *args):
        init(self, *args)
        inits.append((self, args))

    def spy_window(self, *args):
        wins.append((self, args))
        return window(self, *args)

    monkeypatch.setattr(R._StrideSlab, "__init__", spy_init)
    monkeypatch.setattr(R._StrideSlab, "window", spy_window)
    sp = pair_for(method, eps0, n)
    R.renyi_bounds(sp.pair, R.DEFAULT_ORDERS, rtol=1e-3, scale=sp.scale)
    monkeypatch.setattr(R._StrideSlab, "__init__", init)
    monkeypatch.setattr(R._StrideSlab, "window", window)
    slab, args = inits[0]
    return args, next(a for s, a in wins if s is slab)


@pytest.mark.parametrize("method, eps0, n", [("clones", 2.5, 400), ("stronger-clones", 3.0, 300)])
@pytest.mark.parametrize("k", [0.5, 2.0])
def test_tails_of_a_narrow_strided_slab_hold_the_full_slab(monkeypatch, method, eps0, n, k):
    """D3 (mutant M1): a strided slab whose window covers only ``k`` sd of ``x`` around ``s`` (the rest of every
    kernel in its tails, a large share): its upper end, window plus :meth:`_StrideSlab.tails`, holds the certified
    lower end of the plain slab over every ``x`` (``[0, 1]``, every count: the whole sum), per order. Without the
    tails (M1) the window alone lies below it."""
    (N, p, s, rel, orders, c1, c2, _, _, _, stride), (u, v, bp, bq, alpha, _, log_tol) = _captured_slab(monkeypatch, method, eps0, n)
    sd = math.sqrt(s * (1.0 - s) / (c2 + 1.0))
    narrow = R._StrideSlab(N, p, s, rel, orders, c1, c2, max(s - k * sd, 0.0), min(s + k * sd, 1.0), False, stride)
    whole = R._Slab(N, p, s, rel, orders, c1, c2, 0.0, 1.0)
    lo_whole = whole.window(u, v, bp, bq, alpha, 0)[1]
    win = narrow.window(u, v, bp, bq, alpha, 0)[0]
    tails = narrow.tails(u, v, bp, bq, alpha, rel, log_tol, lo_whole)
    assert np.all(np.logaddexp(win, tails) >= lo_whole)
    assert np.any(win < lo_whole)  # (the tails carry a visible share: the test sees them)


def test_an_order_without_a_convexity_proof_keeps_its_slab_unstrided(monkeypatch):
    """D3 (mutant M5): order 20.5 (no proved log-convex ``K``: above 16, not an integer) shares a slab with proved
    orders; with strides forced that slab stays plain, and every strided slab has only proved orders."""
    force_strides(monkeypatch)
    seen = []
    stride = R.RenyiDirection._stride

    def spy(self, js, *args):
        d = stride(self, js, *args)
        proved = R._chord_orders(self.alpha[js], self.pa1, self.pb1, self.s, R._exact_symmetric(self.pair))
        seen.append((d, bool(np.all(proved))))
        return d

    monkeypatch.setattr(R.RenyiDirection, "_stride", spy)
    for method, eps0, n, orders in [("clones", 2.5, 400, [4.0, 16.0, 20.5, 32.0, 128.0]), ("clones", 2.5, 400, [4.0, 16.0, 32.0, 128.0])]:
        sp = pair_for(method, eps0, n)
        R.renyi_bounds(sp.pair, orders, rtol=1e-3, scale=sp.scale)
    assert any(not ok for _, ok in seen) and any(d > 1 for d, ok in seen if ok)
    assert all(d == 1 for d, ok in seen if not ok)

"""renyi._SLAB_FREE_EDGES (slab102; work only: every block is bounded by its monotone corners): where some order has no
slab, the first blocks keep the clone count's one-sd edges above the lowest slab's top. The rule fires where claimed
(more first blocks, fewer refinement rounds at eps0 = 2.5, n = 2e4), and the bounds where it fires still bracket an
independent 30-digit sum over clone counts (tests/test_renyi_slab100.py's, itself checked against tests/oracle.py)."""

from __future__ import annotations

import numpy as np
import pytest

from shuffle_accountant.analyses import pair_for
from shuffle_accountant.numeric import renyi as R
from test_renyi_slab100 import _log_excess_30


def _run(pr, orders, free: bool, monkeypatch, leave_from: float | None = None):
    """(first blocks' count, kernel calls, slab_of, upper, lower, converged) of one direction, the rule on or off;
    ``leave_from``: orders from this one on leave their slab after its build (their tails taken as +inf, which only
    moves work: they are bounded by blocks as without slabs)."""
    monkeypatch.setattr(R, "_SLAB_FREE_EDGES", free)
    calls: list[int] = []
    add = R.RenyiDirection._add_blocks

    def counted(self, lo, hi, *a, **k):
        calls.append(int(lo.size))
        return add(self, lo, hi, *a, **k)

    monkeypatch.setattr(R.RenyiDirection, "_add_blocks", counted)
    if leave_from is not None:
        tails = R._Slab.tails

        def leaving(self, u, v, bp, bq, alpha, *a, **k):
            return np.where(alpha >= leave_from, np.inf, tails(self, u, v, bp, bq, alpha, *a, **k))

        monkeypatch.setattr(R._Slab, "tails", leaving)
    d = R.RenyiDirection(pr)
    up, lo, ok, _, _ = d.bounds(np.asarray(orders, dtype=float), 1e-3)
    assert d.slabs
    return calls[0], len(calls), d.slab_of.copy(), up, lo, ok


def test_rule_fires_at_the_benchmark_cell(monkeypatch):
    """eps0 = 2.5, n = 2e4 (clones): orders 256 .. 384 have no slab; with the rule the first blocks are more and the
    refinement rounds fewer (kernel calls 4 -> 2 when measured), and the brackets meet the old rule's."""
    pr = pair_for("clones", 2.5, 20_000, None).pair
    orders = np.array(R.DEFAULT_ORDERS)
    new = _run(pr, orders, True, monkeypatch)
    old = _run(pr, orders, False, monkeypatch)
    assert set(orders[new[2] < 0]) >= {256.0, 320.0, 384.0}
    assert new[0] > old[0] and new[1] < old[1], (new[:2], old[:2])
    assert new[5] and old[5]
    assert np.all(new[4] <= old[3]) and np.all(old[4] <= new[3])
    with np.errstate(over="ignore"):
        d_new = np.log1p(np.exp(new[3])) / (orders - 1.0)
        d_old = np.log1p(np.exp(old[3])) / (orders - 1.0)
    assert np.all(d_new <= d_old * (1.0 + 1e-3))


@pytest.mark.parametrize("free", [False, True])
def test_free_edges_bracket_the_30_digit_sum(free, monkeypatch):
    """eps0 = 2, n = 2000 (clones; two slabs, top c = 215) with orders 256, 512 sent out of their slab: the rule adds
    the one-sd blocks above c = 217 (first blocks 14 -> 27 when measured) and both brackets hold the 30-digit sum."""
    pr = pair_for("clones", 2.0, 2000, None).pair
    orders = (2.0, 16.0, 256.0, 512.0)
    first, _, slab_of, up, lo, ok = _run(pr, orders, free, monkeypatch, leave_from=256.0)
    assert ok and list(slab_of[2:]) == [-1, -1] and np.all(slab_of[:2] >= 0)
    other = _run(pr, orders, not free, monkeypatch, leave_from=256.0)[0]
    assert (first > other) == free
    for j, (e_lo, e_up) in enumerate(_log_excess_30(pr, orders)):
        assert lo[j] <= e_up + 1e-12 and e_lo - 1e-12 <= up[j], (orders[j], lo[j], up[j], e_lo, e_up)


def _windows(pr, orders, settle: bool, monkeypatch):
    """(slab windows computed, slab_of, settled, levels, upper, lower, converged) of one direction, _SLAB_SETTLE on/off."""
    monkeypatch.setattr(R, "_SLAB_SETTLE", settle)
    count = [0]
    window = R._Slab.window

    def counted(self, *a, **k):
        count[0] += 1
        return window(self, *a, **k)

    monkeypatch.setattr(R._Slab, "window", counted)
    d = R.RenyiDirection(pr)
    up, lo, ok, _, _ = d.bounds(np.asarray(orders, dtype=float), 1e-3)
    return count[0], d.slab_of.copy(), d.slab_settled.copy(), d.slab_level.copy(), up, lo, ok


@pytest.mark.parametrize("n, settled, windows", [(500_000_000, [False, False, False], (2, 1)),
                                                 (1_000_000_000, [True, True, False], (4, 2))])
def test_settle_fires_and_brackets_the_30_digit_sum(n, settled, windows, monkeypatch):
    """clones eps0 = 15, orders 2, 10, 64: at n = 5e8 the orders 10 and 64 leave the slab before a window at level 0
    (their gaps are e^18 and more budgets at level 2); at n = 1e9 order 64 likewise, and orders 2, 10, whose gap a finer
    level shrank by less than half, are settled at level 1 (the old rule went on to level 0). Fewer windows, the same
    orders in the slab, and both rules' brackets hold the 30-digit sum over clone counts."""
    pr = pair_for("clones", 15.0, n, None).pair
    orders = (2.0, 10.0, 64.0)
    new = _windows(pr, orders, True, monkeypatch)
    old = _windows(pr, orders, False, monkeypatch)
    assert list(new[2]) == settled and not np.any(old[2])
    assert (old[0], new[0]) == windows
    assert np.array_equal(new[1], old[1]) and new[6] and old[6]
    exact = _log_excess_30(pr, orders)
    for run in (new, old):
        for j, (e_lo, e_up) in enumerate(exact):
            assert run[5][j] <= e_up + 1e-12 and e_lo - 1e-12 <= run[4][j], (orders[j], run[5][j], run[4][j], e_lo, e_up)


def test_settled_orders_with_wide_gaps_leave_the_slab(monkeypatch) -> None:
    """Review rev102s: an order settled at level >= 1 with a slab gap above _SLAB_DROP_STUCK budgets was neither refined
    nor dropped, so the envelope pass missed rtol and the every-entry fallback ran and stopped short (stronger-clones
    eps0 = 17, n = 1e10, rtol 1e-4: unconverged; 14, 1e9: 0.08 -> 0.61 s). Settled orders now go to the stuck drop
    too: the curve converges, and its brackets meet the ones without the settle rule."""
    from shuffle_accountant.composition import rdp_curve

    for eps0, n in ((17.0, 10**10), (14.0, 10**9)):
        c = rdp_curve(eps0, n, "stronger-clones", rtol=1e-4)
        assert c.converged
        with monkeypatch.context() as mp:
            mp.setattr(R, "_SLAB_SETTLE", False)
            c0 = rdp_curve(eps0, n, "stronger-clones", rtol=1e-4)
        up, lo, up0, lo0 = (np.asarray(x, dtype=float) for x in (c.upper, c.lower, c0.upper, c0.lower))
        assert np.all(lo <= up0 * (1 + 1e-12)) and np.all(lo0 <= up * (1 + 1e-12))

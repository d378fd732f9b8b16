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

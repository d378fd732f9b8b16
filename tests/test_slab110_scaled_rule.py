"""Scaled slabs only for groups of at least ``_SLAB_SCALED_MIN_ORDERS`` orders (slab110, issue 13).

A plan decision: a smaller group whose orders the clip floor flags does not get a scaled slab; those orders leave the
group and take the blocks' bounds (as with ``_SLAB_SCALED`` off). No bound is new, so the check is that the plan changes
where it should (and only there) and that the brackets still meet the scaled slab's."""

from __future__ import annotations

import numpy as np
import pytest

from shuffle_accountant.analyses import pair_for
from shuffle_accountant.numeric import renyi as R

_RULE = R._SLAB_SCALED_MIN_ORDERS  # (the module's value; the tests set it)


def _run(monkeypatch: pytest.MonkeyPatch, eps0: float, n: int, min_orders: int) -> tuple[R.RenyiBounds, list[int]]:
    """Clones ``eps0`` / ``n`` at the default orders, rtol 1e-3, with the rule at ``min_orders``; the number of orders
    of each scaled slab built."""
    monkeypatch.setattr(R, "_SLAB_SCALED_MIN_ORDERS", min_orders)
    scaled: list[int] = []
    init = R._Slab.__init__

    def spy(self, N, p, s, rel, orders, *args, **kw):  # type: ignore[no-untyped-def]
        init(self, N, p, s, rel, orders, *args, **kw)
        if self.R is not None:
            scaled.append(int(orders.size))

    monkeypatch.setattr(R._Slab, "__init__", spy)
    sp = pair_for("clones", eps0, n)
    got = R.renyi_bounds(sp.pair, R.DEFAULT_ORDERS, rtol=1e-3, scale=sp.scale)
    monkeypatch.setattr(R._Slab, "__init__", init)
    return got, scaled


@pytest.mark.parametrize(("eps0", "n"), [(2.0, 14_000), (2.75, 35_000)])
def test_small_scaled_group_takes_blocks_and_meets_the_scaled_slab(monkeypatch: pytest.MonkeyPatch, eps0: float, n: int) -> None:
    before, scaled_before = _run(monkeypatch, eps0, n, 0)
    assert scaled_before and max(scaled_before) < _RULE  # (the cell the rule is for)
    after, scaled_after = _run(monkeypatch, eps0, n, _RULE)
    assert not scaled_after
    lo_a, up_a = np.asarray(after.lower), np.asarray(after.upper)
    lo_b, up_b = np.asarray(before.lower), np.asarray(before.upper)
    assert np.all(np.isfinite(up_a)) and after.converged and before.converged
    # two certified brackets of the same divergences (scaled slab / blocks): they overlap
    assert np.all(lo_a <= up_b) and np.all(lo_b <= up_a)
    assert np.all(lo_a <= up_a)


def test_larger_scaled_group_keeps_its_scaled_slab(monkeypatch: pytest.MonkeyPatch) -> None:
    """2 / 1.2e4: a 6-order group keeps its scaled slab (26 -> 16x with it), and the curve is the rule-off one."""
    before, scaled_before = _run(monkeypatch, 2.0, 12_000, 0)
    after, scaled_after = _run(monkeypatch, 2.0, 12_000, _RULE)
    assert scaled_after == scaled_before and min(scaled_after) >= _RULE
    assert np.array_equal(np.asarray(after.upper), np.asarray(before.upper))
    assert np.array_equal(np.asarray(after.lower), np.asarray(before.lower))

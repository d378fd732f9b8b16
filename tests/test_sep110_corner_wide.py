"""The two-count corner route beyond ``TUV_MAX_N`` (sep110, issue 10): ``blanket_matrix._corner_wide`` sends pairs of
``TUV_MAX_N < n <= TUV_WIDE_MAX_N`` whose largest log-ratio is at least ``TUV_WIDE_MIN_LOG_RATIO`` to the two-count
tables in the lattice's place (a cost rule: both routes are certified). Checks: the rule routes as documented (the
route answers inside the region, not below the threshold nor above ``TUV_WIDE_MAX_N``), and its bracket at ``n = 300``
meets the lattice's (an independent certified route) and is no looser than it beyond the lattice's ``rtol``."""

from __future__ import annotations

import pytest

from shuffle_accountant import api
from shuffle_accountant.numeric import blanket_matrix as bm
from shuffle_accountant.numeric.blanket_matrix import PairBlanket
from shuffle_accountant.randomizers import OLH, OUE, SUE


def _count(fn):  # type: ignore[no-untyped-def]
    """``(fn(), how often the two-count route answered during it)``."""
    wrapped = bm._corner_bounds
    calls = [0]

    def spy(*a, **k):  # type: ignore[no-untyped-def]
        calls[0] += 1
        return wrapped(*a, **k)

    bm._corner_bounds = spy
    try:
        return fn(), calls[0]
    finally:
        bm._corner_bounds = wrapped


def test_rule_constants():
    assert bm.TUV_MAX_N < bm.TUV_WIDE_MAX_N
    assert bm._corner_wide(bm.TUV_MAX_N + 1, bm.TUV_WIDE_MIN_LOG_RATIO)
    assert bm._corner_wide(bm.TUV_WIDE_MAX_N, 8.0)
    assert not bm._corner_wide(bm.TUV_WIDE_MAX_N + 1, 8.0)
    assert not bm._corner_wide(bm.TUV_MAX_N, 8.0)  # (below: the route answers anyway, rule not needed)
    assert not bm._corner_wide(250, 1.5)


@pytest.mark.parametrize(
    "fam,eps0,n,routed",
    [
        (SUE, 2.0, 250, True),
        (SUE, 3.0, 300, True),
        (OUE, 2.0, 250, True),
        (OLH, 2.0, 201, True),
        (SUE, 1.5, 300, False),
        (OLH, 1.0, 250, False),
        (SUE, 3.0, 301, False),
    ],
)
def test_routes_as_documented(fam, eps0, n, routed):
    """Pairs the separable engine does not answer (eps0 < 4 at k = 10); where the tables refuse (``CORNER_MAX_LOG``: OUE
    / OLH at n = 300, eps0 >= 2) the lattice answers as before, so the routed cells are those the tables accept."""
    rand = fam(10, eps0)
    s = rand.pair_structures()[0]
    assert PairBlanket(s, n)._corner_wide is routed
    bm._corner_tables.cache_clear()
    out, used = _count(lambda: api.epsilon(eps0, n, 1e-6, method="blanket", randomizer=rand))
    assert (used > 0) is routed
    assert out.details["bracket"][0] <= out.details["bracket"][1]


@pytest.mark.parametrize("fam,eps0,n", [(SUE, 2.0, 300), (SUE, 3.0, 300), (OUE, 2.0, 250), (OLH, 2.0, 250)])
def test_bracket_meets_the_lattice(fam, eps0, n):
    s = fam(10, eps0).pair_structures()[0]
    lat = PairBlanket(s, n, method="lattice")
    auto = PairBlanket(s, n)
    for f in (0.2, 0.5, 0.8):
        eps = f * eps0
        (got, used), want = _count(lambda: auto.bounds(eps, 1e-6)), lat.bounds(eps, 1e-6)
        assert used == 1
        assert got.lower <= want.upper and want.lower <= got.upper, (eps, got, want)
        assert got.upper <= want.upper * (1 + 1e-6), (eps, got, want)


@pytest.mark.parametrize("fam,eps0,delta", [(SUE, 3.0, 1e-6), (SUE, 2.0, 1e-9)])
def test_query_meets_the_lattice_route(fam, eps0, delta, monkeypatch):
    """``api.epsilon`` at ``n = 300`` with the rule and with it off (the lattice, as before): the eps brackets meet."""
    rand = fam(10, eps0)
    new, used = _count(lambda: api.epsilon(eps0, 300, delta, method="blanket", randomizer=rand))
    assert used >= 1
    monkeypatch.setattr(bm, "TUV_WIDE_MAX_N", bm.TUV_MAX_N)
    old, used = _count(lambda: api.epsilon(eps0, 300, delta, method="blanket", randomizer=rand))
    assert used == 0
    (a, b), (c, d) = new.details["bracket"], old.details["bracket"]
    assert a <= d and c <= b
    assert b <= d * (1 + 1e-6)

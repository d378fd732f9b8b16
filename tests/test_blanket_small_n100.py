"""The three-count exact path (``blanket_matrix._tuv_tables`` / ``_tuv_bounds``) in place of the lattice by default
(``TUV_REPLACES_LATTICE``, lat100): pairs of four classes (unary encoding, local hashing) between the enumeration's
budget and ``TUV_MAX_N``, where ``auto`` took the lattice before.

The path itself is checked against ``tests/oracle_blanket.py`` and an mpmath sum over all count vectors in
``tests/test_blanket_small_n99.py``; here the default route is checked against the lattice's own certified bracket
(the route the package took before, switched back on by the flag): the brackets must meet, the default's upper end
may not exceed the lattice's beyond the search's ``rtol``, and the lattice may not run at all by default."""

from __future__ import annotations

import os
import sys

import pytest

from shuffle_accountant import api
from shuffle_accountant.numeric import blanket_matrix as bm
from shuffle_accountant.randomizers import OLH, OUE, SUE

sys.path.insert(0, os.path.dirname(__file__))
from test_blanket_small_n99 import _spied as _tuv_answers  # noqa: E402  (counts the answers of _tuv_bounds)


def test_flag_is_on():
    assert bm.TUV_REPLACES_LATTICE is True
    assert bm.TUV_MAX_N >= 100


@pytest.mark.parametrize("fam,eps0,n", [(SUE, 1.0, 60), (OUE, 0.5, 100), (OLH, 2.0, 100), (OUE, 2.0, 80)])
def test_default_route_meets_the_lattice(fam, eps0, n, monkeypatch):
    """Default (three counts, no lattice) vs the lattice (flag off): brackets meet, upper end within ``rtol``."""
    rand = fam(10, eps0)
    monkeypatch.setattr(bm, "TUV_REPLACES_LATTICE", False)
    lattice = api.epsilon(eps0, n, 1e-6, method="blanket", randomizer=rand)
    monkeypatch.setattr(bm, "TUV_REPLACES_LATTICE", True)
    monkeypatch.setattr(bm.PairBlanket, "_lattice_capped", lambda *a: pytest.fail("the lattice ran"))
    tuv, used = _tuv_answers(lambda: api.epsilon(eps0, n, 1e-6, method="blanket", randomizer=rand))
    assert used >= 1
    (a, b), (c, d) = tuv.details["bracket"], lattice.details["bracket"]
    assert a <= d and c <= b
    assert b <= d * (1 + 1e-6)
    assert tuv.details.get("converged", True)


def test_above_tuv_max_n_the_lattice_still_answers(monkeypatch):
    """Past ``TUV_MAX_N`` the flag changes nothing: the three-count path does not answer and the query is the same."""
    rand = SUE(10, 1.0)
    n = bm.TUV_MAX_N + 50
    on, used = _tuv_answers(lambda: api.epsilon(1.0, n, 1e-6, method="blanket", randomizer=rand))
    assert used == 0
    monkeypatch.setattr(bm, "TUV_REPLACES_LATTICE", False)
    off = api.epsilon(1.0, n, 1e-6, method="blanket", randomizer=rand)
    assert on.value == off.value and on.details["bracket"] == off.details["bracket"]

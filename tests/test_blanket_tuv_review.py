"""Review rev99s of the three-count path (blanket_matrix item 12, ``_tuv_bounds``): it may not leave a bracket
wider than the route it replaced did.

1. A matrix randomizer with four classes whose ratios are *not* two-valued (``a`` not a function of ``y1`` alone:
   circulant rows) has ``rho != 0``; the path's ``rho * N11`` slack made an exactly converged answer ``[0.278, 1]``.
2. Named randomizers at eps close to eps0 or eps0 >= 20: the coefficient slacks charged on every draw widened the
   bracket beyond ``rtol``.

Each case compares with exact enumeration (``method="exact"``, the route the path replaced) and with the independent
brute-force oracle (``tests/oracle_blanket.py``) where it is small enough."""

from __future__ import annotations

import numpy as np
import pytest

from oracle_blanket import blanket_delta
from shuffle_accountant import api
from shuffle_accountant.numeric import blanket_matrix as bm
from shuffle_accountant.randomizers import MatrixRandomizer, make_randomizer

CIRCULANT = np.array([np.roll([0.1, 0.1, 0.2, 0.6], i) for i in range(4)])


@pytest.mark.parametrize("switch", [False, True])
@pytest.mark.parametrize("n, frac", [(4, 0.3), (10, 0.5)])
def test_matrix_with_four_classes_not_two_valued_keeps_the_exact_bracket(monkeypatch, switch, n, frac):
    monkeypatch.setattr(bm, "TUV_REPLACES_LATTICE", switch, raising=False)
    r = MatrixRandomizer(CIRCULANT)
    eps = frac * r.eps0
    b = api.delta(r.eps0, n, eps, method="blanket", randomizer=r)
    lo, up = b.bracket
    assert up - lo <= 1e-9 * lo, b.bracket
    if n == 4:
        exact = float(blanket_delta(CIRCULANT.tolist(), n, eps))
        assert lo <= exact * (1 + 1e-12) and exact <= up * (1 + 1e-12)


@pytest.mark.parametrize("name, eps0, n, frac", [("oue", 40.0, 2, 0.5), ("sue", 20.0, 6, 0.5),
                                                 ("oue", 8.0, 12, 0.999999), ("olh", 20.0, 8, 0.5)])
def test_named_randomizers_at_large_eps0_or_eps_near_eps0_are_as_tight_as_enumeration(name, eps0, n, frac):
    """The answer's upper end is at most exact enumeration's (the route the path replaced here) plus rtol, and the
    brackets meet."""
    r = make_randomizer(name, eps0, k=10)
    b = api.delta(eps0, n, frac * eps0, method="blanket", randomizer=r, rtol=1e-9)
    lo, up = b.bracket
    ex = max((bm.PairBlanket(st, n, method="exact").bounds(frac * eps0, 1e-9) for st in r.pair_structures()),
             key=lambda x: x.upper)
    assert lo <= ex.upper and ex.lower <= up
    assert up <= ex.upper * (1 + 1e-9), (b.bracket, (ex.lower, ex.upper))


def test_the_path_still_serves_the_named_two_valued_pairs():
    """The restriction to two-valued ratios keeps the named randomizers on the three-count path (its speed)."""
    for name in ("sue", "oue", "olh"):
        st = make_randomizer(name, 1.0, k=10).pair_structures()[0]
        assert bm._tuv_labels(st) is not None, name
    r = MatrixRandomizer(CIRCULANT)
    assert all(bm._tuv_labels(st) is None for st in r.pair_structures() if st.classes == 4)

"""The three-count exact path of the blanket (``blanket_matrix._tuv_tables`` / ``_tuv_bounds``, sep99): pairs of four
classes (unary encoding, local hashing, subset selection) at small ``n``, where exact enumeration of the count vectors
answered before.

Oracles: ``tests/oracle_blanket.py`` (mpmath brute force over all histograms of the randomizer's matrix, shares no
code) at ``n <= 5``, and an mpmath sum over every count vector of the pair's four classes (written here, independent
of the package's enumeration) at ``n`` up to 24, for ``E[S_+] / n`` and for item 8's slope ``E[T 1{S > 0}] / n``. Each
test fails when the bound is wrong: a bracket that misses the oracle, or one wider than ``1e-9`` relative."""

from __future__ import annotations

import itertools
import math
import os
import sys

import mpmath
import numpy as np
import pytest

from shuffle_accountant import api
from shuffle_accountant.numeric import blanket_matrix as bm
from shuffle_accountant.numeric.blanket_matrix import BlanketProfile, PairBlanket
from shuffle_accountant.randomizers import OLH, OUE, SUE, Subset

sys.path.insert(0, os.path.dirname(__file__))
import oracle_blanket as ob  # noqa: E402


def _spied(fn):  # type: ignore[no-untyped-def]
    """Run ``fn()`` and count the calls of ``_tuv_bounds`` that answered (not None)."""
    calls = [0]
    orig = bm._tuv_bounds

    def spy(*args):  # type: ignore[no-untyped-def]
        out = orig(*args)
        calls[0] += out is not None
        return out

    bm._tuv_bounds = spy
    try:
        return fn(), calls[0]
    finally:
        bm._tuv_bounds = orig


#: (package randomizer, oracle matrix): pairs of four classes small enough for the histogram brute force at n = 4
ORACLE_CASES = [(SUE(3, 1.0), ("sue_matrix", 3, 1.0)), (OUE(3, 2.0), ("oue_matrix", 3, 2.0)),
                (OLH(3, 0.6, g=2), ("olh_matrix", 3, 2, 0.6)), (Subset(4, 1.0, d=2), ("subset_matrix", 4, 2, 1.0))]


@pytest.mark.parametrize("rand,matrix", ORACLE_CASES, ids=[c[0].describe() for c in ORACLE_CASES])
def test_bracket_contains_matrix_oracle(rand, matrix):
    m = getattr(ob, matrix[0])(*matrix[1:])
    nmax = 4
    cells = [(n, eps) for n in (1, 2, nmax) for eps in (0.0, 0.25 * rand.eps0, 0.7 * rand.eps0)]
    with mpmath.workdps(40):
        wants = [float(ob.blanket_delta(m, n, eps)) for n, eps in cells]
    profiles = {n: BlanketProfile(rand, n, method="exact") for n in (1, 2, nmax)}
    got, used = _spied(lambda: [profiles[n].bounds(eps, 1e-9) for n, eps in cells])
    assert used >= len(cells), "the three-count path should answer every cell"
    for (n, eps), want, b in zip(cells, wants, got):
        assert b.lower <= want * (1 + 1e-12) + 1e-300 and want <= b.upper * (1 + 1e-12), (n, eps, b, want)
        assert b.upper - b.lower <= 1e-9 * want + 1e-300


def _count_vector_oracle(s, n: int, eps: float) -> tuple[mpmath.mpf, mpmath.mpf]:  # type: ignore[no-untyped-def]
    """``E[S_+] / n`` and ``E[T 1{S > 0}] / n`` for the stored masses and ratios of ``s`` (floats taken exactly),
    ``g = e^eps`` in 40 digits: every count vector ``(N_1..N_4, rest)`` of the multinomial, one by one."""
    with mpmath.workdps(40):
        g = mpmath.exp(mpmath.mpf(eps))
        p = [mpmath.mpf(x) for x in s.mass]
        rest = mpmath.mpf(s.rest)
        c = [mpmath.mpf(a) - g * mpmath.mpf(b) for a, b in zip(s.a, s.b)]
        bb = [mpmath.mpf(b) for b in s.b]
        pos = slope = mpmath.mpf(0)
        fact = [mpmath.factorial(i) for i in range(n + 1)]
        for cnt in itertools.product(range(n + 1), repeat=4):
            used = sum(cnt)
            if used > n:
                continue
            prob = fact[n] / (fact[n - used] * math.prod(fact[k] for k in cnt)) * rest ** (n - used)
            for pj, k in zip(p, cnt):
                prob *= pj**k
            val = sum(cj * k for cj, k in zip(c, cnt))
            if val > 0:
                pos += prob * val
                slope += prob * sum(bj * k for bj, k in zip(bb, cnt))
        return pos / n, slope / n


COUNT_CASES = [(SUE(10, 1.0), 16, 0.4), (OUE(10, 2.0), 20, 0.9), (OLH(10, 0.5), 24, 0.1), (SUE(100, 3.0), 12, 2.0),
               (OUE(10, 6.0), 14, 4.5), (Subset(10, 1.0, d=3), 18, 0.5)]


@pytest.mark.parametrize("rand,n,eps", COUNT_CASES, ids=[f"{c[0].describe()}-n{c[1]}" for c in COUNT_CASES])
def test_bracket_and_slope_against_count_vectors(rand, n, eps):
    """The ends bracket the exact sum, the slope is a lower bound on ``E[T 1{S > 0}] / n`` and first-order tight (a
    slope with the ``M`` term or the ``C`` term dropped, or off by one count, fails the second check)."""
    s = rand.pair_structures()[0]
    pb = PairBlanket(s, n, method="exact")
    cf = bm.coefficients(s, eps)
    got = pb._tuv_path(cf)
    assert got is not None
    lo, up, slope = got
    want, want_slope = _count_vector_oracle(s, n, eps)
    with mpmath.workdps(40):
        assert mpmath.mpf(lo) <= want <= mpmath.mpf(up), (lo, float(want), up)
        assert up - lo <= 1e-9 * float(want)
        assert mpmath.mpf(slope) <= want_slope
        assert slope >= float(want_slope) * (1 - 1e-9)


def test_same_bracket_as_count_vector_enumeration():
    """Against the package's other exact path (``_exact_bounds``): the brackets meet at every eps of a sweep, and
    neither is wider than ``1e-9`` relative."""
    for rand in (SUE(10, 0.5), OUE(10, 2.0), OLH(10, 1.0), SUE(10, 6.0)):
        s = rand.pair_structures()[0]
        for n in (2, 7, 30):
            pb = PairBlanket(s, n, method="exact")
            for eps in np.linspace(0.0, 0.95 * rand.eps0, 7):
                cf = bm.coefficients(s, float(eps))
                lo, up, _ = bm._exact_bounds(cf, n)
                got = pb._tuv_path(cf)
                assert got is not None
                assert got[0] <= up and lo <= got[1], (rand.describe(), n, eps, (lo, up), got)
                assert got[1] - got[0] <= 1e-9 * got[1] + 1e-300


def test_tables_refused_where_an_entry_could_be_subnormal():
    s = SUE(10, 1.0).pair_structures()[0]
    labels = bm._tuv_labels(s)
    assert labels is not None
    assert bm._tuv_tables(tuple(s.mass), s.rest, s.rel_err, bm.TUV_MAX_N + 1, labels) is None
    assert bm._tuv_tables((1e-30, 0.3, 0.3, 0.3), 0.1, 1e-15, 30, labels) is None  # (30 * 69 > TUV_MAX_LOG)
    assert bm._tuv_tables((1e-3, 0.3, 0.3, 0.3), 0.1, 1e-15, 30, labels) is not None


@pytest.mark.parametrize("fam", [SUE, OUE, OLH])
def test_query_matches_enumeration_route(fam, monkeypatch):
    """``api.epsilon`` with the three-count path and with it switched off (count-vector enumeration): the eps brackets
    meet, and the upper ends agree within the search's ``rtol``."""
    rand = fam(10, 1.0)
    new = api.epsilon(1.0, 30, 1e-6, method="blanket", randomizer=rand)
    monkeypatch.setattr(bm, "TUV_MAX_N", 0)
    old = api.epsilon(1.0, 30, 1e-6, method="blanket", randomizer=rand)
    (a, b), (c, d) = new.details["bracket"], old.details["bracket"]
    assert a <= d and c <= b
    assert abs(b - d) <= 1e-6 * d


@pytest.mark.parametrize("fam,n", [(SUE, 60), (OLH, 100)])
def test_lattice_region_when_switched_on(fam, n, monkeypatch):
    """``TUV_REPLACES_LATTICE`` (on by default since b33e3f3): the three-count path in place of the lattice gives an eps
    bracket that meets the lattice's (the switch off), within its ``rtol`` at the upper end, and answers every
    evaluation of the search."""
    rand = fam(10, 2.0)
    monkeypatch.setattr(bm, "TUV_REPLACES_LATTICE", False)
    lattice = api.epsilon(2.0, n, 1e-6, method="blanket", randomizer=rand)
    monkeypatch.setattr(bm, "TUV_REPLACES_LATTICE", True)
    monkeypatch.setattr(bm.PairBlanket, "_lattice_capped", lambda *a: pytest.fail("the lattice ran"))
    tuv, used = _spied(lambda: api.epsilon(2.0, n, 1e-6, method="blanket", randomizer=rand))
    assert used >= 1
    (a, b), (c, d) = tuv.details["bracket"], lattice.details["bracket"]
    assert a <= d and c <= b
    assert b <= d * (1 + 1e-6)

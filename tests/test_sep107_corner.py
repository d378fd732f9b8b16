"""The two-count exact path of the blanket (``blanket_matrix._corner_tables`` / ``_corner_bounds``, sep107): the four-class
law of unary encoding / local hashing as a product law plus one atom (the "corner"), so that the tables are binomial
rows (``O(n^2)``) instead of the three-count cube of ``_tuv_tables`` (``O(n^3)``).

Oracles, sharing no code with the package: an mpmath sum over every count vector of the pair's four classes (``E[S_+] /
n`` and the slope ``E[T 1{S > 0}] / n``, 40 digits), mpmath binomial / trinomial probabilities for the tables, and the
package's other certified routes (the three-count tables, the lattice) on a grid. Each test fails when the path is
wrong: a bracket that misses the oracle, one wider than ``1e-9`` relative (e.g. with the corner's mass left to the
factor ``(1 + r')^n``), a slope off by a term, or a dropped tail charge."""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest

from shuffle_accountant import api
from shuffle_accountant.numeric import blanket_matrix as bm
from shuffle_accountant.numeric.blanket_matrix import PairBlanket
from shuffle_accountant.randomizers import OLH, OUE, SUE, PairStructure


class _Answers:
    """Stands in for ``_corner_bounds`` and counts its answers (not None)."""

    def __init__(self) -> None:
        self.wrapped = bm._corner_bounds
        self.count = 0

    def __call__(self, *args):  # type: ignore[no-untyped-def]
        out = self.wrapped(*args)
        self.count += out is not None
        return out


def _spied(fn):  # type: ignore[no-untyped-def]
    """``(fn(), how often the two-count path answered during it)``."""
    answers = _Answers()
    bm._corner_bounds = answers
    try:
        return fn(), answers.count
    finally:
        bm._corner_bounds = answers.wrapped


def _oracle(s: PairStructure, n: int, eps: float) -> tuple[mpmath.mpf, mpmath.mpf]:
    """``E[S_+] / n`` and ``E[T 1{S > 0}] / n`` for the stored masses and ratios of ``s`` (floats taken exactly; ``rest =
    1 - sum of the masses`` exactly), ``g = e^eps`` in 40 digits, over every count vector of the multinomial."""
    with mpmath.workdps(40):
        g = mpmath.exp(mpmath.mpf(eps))
        p = [mpmath.mpf(x) for x in s.mass]
        rest = 1 - sum(p)
        c = [mpmath.mpf(a) - g * mpmath.mpf(b) for a, b in zip(s.a, s.b)]
        bb = [mpmath.mpf(b) for b in s.b]
        fact = [mpmath.factorial(i) for i in range(n + 1)]
        pos = slope = mpmath.mpf(0)
        for cnt in itertools.product(range(n + 1), repeat=len(p)):
            used = sum(cnt)
            if used > n:
                continue
            val = sum(cj * k for cj, k in zip(c, cnt))
            if val <= 0:
                continue
            prob = fact[n] / (fact[n - used] * math.prod(fact[k] for k in cnt)) * rest ** (n - used)
            for pj, k in zip(p, cnt):
                prob *= pj**k
            pos += prob * val
            slope += prob * sum(bj * k for bj, k in zip(bb, cnt))
        return pos / n, slope / n


def _positive_pair(E: float) -> PairStructure:
    """Four classes with ratios in ``{1, E}`` and ``q11 q00 > q10 q01`` (corner ``11``; the named randomizers with ``k =
    10`` have the other sign), exact float masses."""
    q = (0.25, 0.125, 0.125, 0.0703125)  # q11 q00 = 0.01758 > q10 q01 = 0.015625
    return PairStructure(mass=q, a=(1.0, E, 1.0, E), b=(1.0, 1.0, E, E), rest=1.0 - sum(q), rel_err=0.0)


def _corner_answers(s: PairStructure, n: int, eps: float, rtol: float = 1e-9):  # type: ignore[no-untyped-def]
    pb = PairBlanket(s, n, method="exact")
    got, used = _spied(lambda: pb._tuv_path(bm.coefficients(s, eps), rtol))
    assert used == 1, "the two-count path should answer"
    return got


@pytest.mark.parametrize(
    "q", [[0.2465, 0.1917, 0.1917, 0.1491], [0.3113, 0.1888, 0.1888, 0.1144], [0.25, 0.125, 0.125, 0.0703125], [0.1, 0.3, 0.05, 0.4], [0.4, 0.01, 0.3, 0.001]]
)
def test_split_reproduces_the_masses(q):
    """``lam pi_y + mu [y = corner] = q_y`` (40 digits, from the floats) within ``1e-14`` relative, ``mu >= 0``, and the
    corner is ``11`` exactly where ``q11 q00 >= q10 q01``."""
    corner, alpha, beta, lam, mu = bm._corner_split(q)
    assert mu >= 0.0 and 0.0 < alpha < 1.0 and 0.0 < beta < 1.0 and lam > 0.0
    assert corner == ((1, 1) if q[3] * q[0] >= q[1] * q[2] else (1, 0))
    with mpmath.workdps(40):
        a, b, lm, m = (mpmath.mpf(x) for x in (alpha, beta, lam, mu))
        for y, qy in enumerate(q):
            y1, y2 = y % 2, y // 2
            d = lm * (a if y1 else 1 - a) * (b if y2 else 1 - b) + (m if (y1, y2) == corner else 0)
            assert abs(d / mpmath.mpf(qy) - 1) <= 1e-14, (y, float(d), qy)


def test_tables_against_mpmath():
    """The binomial tables ``C, D, M`` of ``B ~ Bin(m, beta)`` and the weights ``P[m, r] P[A = a | m]`` hold their exact
    values (mpmath, from the float parameters) within ``rel``: ``w_lo (1 - rel) <= exact <= w_up (1 + rel)``."""
    s = OUE(10, 0.5).pair_structures()[0]
    n = 30
    labels = bm._tuv_labels(s)
    tab = bm._corner_tables(tuple(float(x) for x in s.mass), s.rel_err, n, labels)
    assert tab is not None and len(tab.slices) >= 3
    j00, j10, j01, j11 = labels
    q = [s.mass[j] for j in labels]
    corner, alpha, beta, lam, mu = bm._corner_split(q)
    W = n + 1
    rel = tab.rel
    with mpmath.workdps(40):
        a, b, lm, mm = (mpmath.mpf(x) for x in (alpha, beta, lam, mu))
        rho = 1 - lm - mm
        for m in (0, 1, 7, 30):
            pmf = [mpmath.binomial(m, j) * b**j * (1 - b) ** (m - j) if j <= m else mpmath.mpf(0) for j in range(W)]
            cdf = list(itertools.accumulate(pmf))
            dd = [mpmath.mpf(0)] + list(itertools.accumulate(cdf[:-1]))
            mo = list(itertools.accumulate(j * x for j, x in enumerate(pmf)))
            for j in range(W):
                for table, want in ((tab.C, cdf[j]), (tab.D, dd[j]), (tab.M, mo[j])):
                    got = table[m * W + j]
                    assert abs(mpmath.mpf(got) - want) <= rel * want + 1e-300, (m, j, got, float(want))
        for r, (i0, i1, wu, wl) in enumerate(tab.slices):
            for idx in range(i0, i1, 17):
                m, aa = int(tab.m_col[idx]), int(tab.a_col[idx])
                k = n - m - r
                tri = mpmath.factorial(n) / (mpmath.factorial(m) * mpmath.factorial(r) * mpmath.factorial(k))
                exact = tri * lm**m * mm**r * rho**k * mpmath.binomial(m, aa) * a**aa * (1 - a) ** (m - aa)
                assert wl[idx - i0] * (1 - rel) <= exact <= wu[idx - i0] * (1 + rel), (r, m, aa)


CASES = [(SUE(10, 1.0), 12, 0.4), (OUE(10, 0.5), 10, 0.2), (OLH(10, 2.0), 12, 0.9), (OUE(100, 1.0), 10, 0.3), (SUE(4, 4.0), 8, 1.5), (OLH(10, 0.5), 11, 0.05)]


@pytest.mark.parametrize("rand,n,eps", CASES, ids=[f"{c[0].describe()}-n{c[1]}" for c in CASES])
def test_bracket_and_slope_against_count_vectors(rand, n, eps):
    """Both ends bracket the 40-digit sum within ``1e-9`` relative; the slope is a lower bound on ``E[T 1{S > 0}] / n``,
    first-order tight (``1e-9``)."""
    s = rand.pair_structures()[0]
    lo, up, slope = _corner_answers(s, n, eps)
    want, want_slope = _oracle(s, n, eps)
    assert mpmath.mpf(lo) <= want <= mpmath.mpf(up), (lo, float(want), up)
    assert up - lo <= 1e-9 * float(want)
    assert mpmath.mpf(slope) <= want_slope
    assert slope >= float(want_slope) * (1 - 1e-9)


def test_corner_eleven_against_count_vectors():
    """The other corner (``q11 q00 > q10 q01``): the same checks."""
    s = _positive_pair(math.exp(1.5))
    assert bm._corner_split([s.mass[j] for j in bm._tuv_labels(s)])[0] == (1, 1)
    for n, eps in ((6, 0.3), (9, 1.0)):
        lo, up, slope = _corner_answers(s, n, eps)
        want, want_slope = _oracle(s, n, eps)
        assert mpmath.mpf(lo) <= want <= mpmath.mpf(up)
        assert up - lo <= 1e-9 * float(want)
        assert mpmath.mpf(slope) <= want_slope and slope >= float(want_slope) * (1 - 1e-9)


def test_tail_charge_covers_the_slices_left_out(monkeypatch):
    """With the slices of corner draws ``r >= 1`` left out (the tail bound charged instead), the bracket still holds the
    sum, and its lower end falls short of it by more than ``1e-9``: the left-out slices matter, so an upper end without
    their charge would miss."""
    s = OUE(10, 0.5).pair_structures()[0]
    n, eps = 10, 0.2
    want, _ = _oracle(s, n, eps)
    monkeypatch.setattr(bm, "CORNER_TAIL_RTOL", 1e300)
    labels = bm._tuv_labels(s)
    tab = bm._corner_tables(tuple(float(x) for x in s.mass), s.rel_err, n, labels)
    assert len(tab.slices) > 1
    lo, up, _ = bm._corner_bounds(bm.coefficients(s, eps), n, tab, labels, 1e-9)
    assert mpmath.mpf(lo) <= want <= mpmath.mpf(up)
    assert lo < float(want) * (1 - 1e-9)


def test_refusals():
    s = SUE(10, 1.0).pair_structures()[0]
    labels = bm._tuv_labels(s)
    p = tuple(float(x) for x in s.mass)
    assert bm._corner_tables(p, s.rel_err, bm.TUV_MAX_N + 1, labels) is None
    assert bm._corner_tables(p, s.rel_err, 50, labels) is not None
    # many corner draws (n mu above CORNER_MAX_DRAWS): the three-count tables answer instead
    q = (0.3, 0.1, 0.1, 0.3)
    assert bm._corner_split(list(q))[4] * 50 > bm.CORNER_MAX_DRAWS
    assert bm._corner_tables(q, 1e-15, 50, (0, 1, 2, 3)) is None
    # a label probability so small that a table entry could leave the normal range
    assert bm._corner_tables((0.5, 1e-9, 0.2, 2e-10), 1e-15, 40, (0, 1, 2, 3)) is None


@pytest.mark.parametrize("fam", [SUE, OUE, OLH])
def test_meets_the_three_count_tables_on_a_grid(fam):
    """Where both apply (``n <= 100``): brackets meet the three-count tables' at every cell, upper ends within ``1e-8``
    relative (both are exact up to floating point)."""
    for k in (4, 10, 100):
        for eps0 in (0.5, 2.0, 8.0):
            s = fam(k, eps0).pair_structures()[0]
            labels = bm._tuv_labels(s)
            if labels is None:
                continue
            p = tuple(float(x) for x in s.mass)
            for n in (2, 17, 60, 100):
                corner = bm._corner_tables(p, s.rel_err, n, labels)
                cube = bm._tuv_tables(p, float(s.rest), s.rel_err, n, labels)
                if corner is None or cube is None:
                    continue
                for f in (0.1, 0.4, 0.8):
                    cf = bm.coefficients(s, f * eps0)
                    a = bm._corner_bounds(cf, n, corner, labels, 1e-9)
                    b = bm._tuv_bounds(cf, n, cube, labels)
                    if a is None or b is None:
                        continue
                    assert a[0] <= b[1] and b[0] <= a[1], (fam, k, eps0, n, f, a, b)
                    assert a[1] <= b[1] * (1 + 1e-8) + 1e-290, (fam, k, eps0, n, f, a, b)


@pytest.mark.parametrize("fam,eps0,n", [(SUE, 1.0, 150), (OUE, 0.5, 200), (OLH, 2.0, 180)])
def test_meets_the_lattice_above_the_cube(fam, eps0, n):
    """``100 < n <= TUV_MAX_N``, where the lattice answered before: the brackets meet."""
    s = fam(10, eps0).pair_structures()[0]
    lat = PairBlanket(s, n, method="lattice")
    auto = PairBlanket(s, n)
    for f in (0.2, 0.5):
        eps = f * eps0
        (got, used), want = _spied(lambda: auto.bounds(eps, 1e-6)), lat.bounds(eps, 1e-6)
        assert used == 1
        assert got.lower <= want.upper and want.lower <= got.upper
        assert got.upper - got.lower <= 1e-6 * got.lower


@pytest.mark.parametrize("fam,eps0,n,delta", [(SUE, 1.0, 100, 1e-6), (OUE, 2.0, 150, 1e-9), (OLH, 0.5, 200, 1e-6), (SUE, 1.0, 60, 1e-12)])
def test_query_with_and_without_the_path(fam, eps0, n, delta, monkeypatch):
    """``api.epsilon`` with the two-count path and without it (the routes before it): the eps brackets meet and the upper
    ends agree within the search's ``rtol``."""
    rand = fam(10, eps0)
    new, used = _spied(lambda: api.epsilon(eps0, n, delta, method="blanket", randomizer=rand))
    assert used >= 1
    monkeypatch.setattr(bm, "CORNER_MAX_DRAWS", -1.0)
    bm._corner_tables.cache_clear()
    old = api.epsilon(eps0, n, delta, method="blanket", randomizer=rand)
    (a, b), (c, d) = new.details["bracket"], old.details["bracket"]
    assert a <= d and c <= b
    assert abs(b - d) <= 1e-6 * d
    assert np.isfinite(b)


def test_cube_answers_where_the_corner_charges_show():
    """At ``delta ~ 1e-35`` the charge of the ``m`` left out (``1e-40`` of the largest weight) widens the two-count bracket
    beyond a tight ``rtol``; up to ``TUV_TABLES_MAX_N`` the three-count tables then answer (width ``~1e-10``), as before."""
    s = OUE(10, 0.5).pair_structures()[0]
    n, eps = 99, 0.45
    labels = bm._tuv_labels(s)
    corner = bm._corner_tables(tuple(float(x) for x in s.mass), s.rel_err, n, labels)
    cf = bm.coefficients(s, eps)
    lo, up, _ = bm._corner_bounds(cf, n, corner, labels, 1e-9)
    assert up < 1e-30 and up - lo > 1e-8 * lo
    got = PairBlanket(s, n)._tuv_path(cf, 1e-8)
    assert got is not None and got[1] - got[0] <= 1e-9 * got[0]
    assert got[0] <= up and lo <= got[1]

"""The two-count blanket path (``blanket_matrix._corner_tables`` / ``_corner_bounds``, sep107) against the TRUE law where
it differs from the stored masses (review rev107m, D3): ``tests/test_sep107_corner.py``'s oracle takes the stored masses
as the law, so the factors ``(1 +- r')^n`` (the stored masses are only within ``rel_err`` of the true ones), the silent
category's part of ``r'`` and the charge for the product draws ``m`` left out of a slice could all go without a test
failing. Here:

* the law of every user is any law within ``rel_err`` of the stored masses (each class moved by ``+-rel_err``, the
  silent category taking the rest), with ``rel_err`` large enough (``1e-7``) that ``n r'`` is far above the bracket's
  width; the bracket and the slope must hold for all 16 sign patterns;
* a deep-tail case (``delta ~ 1e-39 .. 1e-44``, product law with no corner mass) whose value comes mostly from the
  ``m`` left out of the slices (weights below ``CORNER_DROP`` of the largest): the upper end without their charge misses;
* ``n mu`` above ``CORNER_MAX_DRAWS``: the path refuses and the answer (another route) still holds the oracle;
* the lower factor is ``(1 - r')^n``, not the larger ``(1 + r')^-n`` (D2).

Oracle (shares no code with the package): every count vector of the four classes and the silent category, log-weights
from 40-digit mpmath, longdouble sums."""

from __future__ import annotations

import dataclasses
import itertools
import math

import mpmath
import numpy as np
import pytest

from shuffle_accountant.numeric import blanket_matrix as bm
from shuffle_accountant.numeric.blanket_matrix import PairBlanket
from shuffle_accountant.randomizers import OUE, PairStructure

LD = np.longdouble
pytestmark = pytest.mark.skipif(np.finfo(LD).eps > 1e-18, reason="the oracle needs an 80-bit long double")


def _truth(mass, a, b, n: int, eps: float) -> tuple[float, float]:
    """``E[S_+] / n`` and ``E[T 1{S > 0}] / n`` for the per-user law ``mass`` (four classes, mpmath; silent ``1 - sum``)
    and the ratios ``a, b`` (floats taken exactly), over every count vector."""
    with mpmath.workdps(40):
        g = mpmath.exp(mpmath.mpf(eps))
        rest = 1 - mpmath.fsum(mass)
        lp = [LD(mpmath.nstr(mpmath.log(x), 30)) for x in list(mass) + [rest]]
        c = [LD(mpmath.nstr(mpmath.mpf(x) - g * mpmath.mpf(y), 30)) for x, y in zip(a, b)]
        lf = np.array([LD(mpmath.nstr(mpmath.log(mpmath.factorial(i)), 30)) for i in range(n + 1)], dtype=LD)
    bb = [LD(x) for x in b]
    ar = np.arange(n + 1)
    N = np.array(np.meshgrid(ar, ar, ar, ar, indexing="ij")).reshape(4, -1)
    s = n - N.sum(axis=0)
    N, s = N[:, s >= 0], s[s >= 0]
    lg = lf[n] - lf[s] - lf[N].sum(axis=0) + s * lp[4] + sum(N[j] * lp[j] for j in range(4))
    S = sum(N[j] * c[j] for j in range(4))
    pos = S > 0
    w = np.exp(lg[pos])
    T = sum(N[j][pos] * bb[j] for j in range(4))
    return float(np.sum(w * S[pos]) / n), float(np.sum(w * T) / n)


def _pair(q, E: float, rel_err: float) -> PairStructure:
    return PairStructure(mass=tuple(q), a=(1.0, E, 1.0, E), b=(1.0, 1.0, E, E), rest=1.0 - math.fsum(q), rel_err=rel_err)


def _corner(s: PairStructure, n: int, eps: float, rtol: float = 1e-9, tab=None):  # type: ignore[no-untyped-def]
    labels = bm._tuv_labels(s)
    if tab is None:
        tab = bm._corner_tables(tuple(float(x) for x in s.mass), s.rel_err, n, labels)
    assert tab is not None, "the two-count path should apply"
    return bm._corner_bounds(bm.coefficients(s, eps), n, tab, labels, rtol)


_S = OUE(10, 0.5).pair_structures()[0]
_OUE_Q = tuple(_S.mass[j] for j in bm._tuv_labels(_S))  # (classes 00, 10, 01, 11)
_OUE_E = max(_S.a)
# (a small silent category: gamma / rho ~ 15, so the silent category's part of r' dominates the classes' rel_err)
_SMALL_REST = (0.45, 0.2, 0.2, 0.2 * 0.2 / 0.45 * (1.0 + 1e-4))
# (a product law with rho ~ 0.062 whose value at high eps comes from users mostly silent: there the silent category's
# relative change, eta gamma / rho, is what moves it)
_DEEP_Q = (0.5, 2.0**-13, 0.4375, 2.0**-13 * 0.4375 / 0.5)
PERTURBED = [
    (_OUE_Q, _OUE_E, 12, (0.15, 0.5, 0.85)),
    (_SMALL_REST, math.exp(1.0), 12, (0.15, 0.5, 0.85)),
    (_SMALL_REST, math.exp(2.0), 9, (0.5,)),
    (_DEEP_Q, math.exp(3.0), 20, (0.5, 0.8)),
]


def _corner_masses(q, E: float, n: int, eps: float, eta: float):  # type: ignore[no-untyped-def]
    """The two-count bracket for stored masses ``q`` (classes ``00, 10, 01, 11``) within relative ``eta`` of the true
    ones and exact ratios ``{1, E}`` (the ratios' own error set to 0: only the masses' ``r'`` is under test)."""
    a, b = (1.0, E, 1.0, E), (1.0, 1.0, E, E)
    tab = bm._corner_tables(tuple(q), eta, n, (0, 1, 2, 3))
    assert tab is not None, "the two-count path should apply"
    cf = bm._coefficients(a, b, 0.0, np.asarray(q, dtype=float), 1.0 - math.fsum(q), eta, eps)
    return bm._corner_bounds(cf, n, tab, (0, 1, 2, 3), 1e-9), a, b


@pytest.mark.parametrize("q,E,n,fracs", PERTURBED, ids=["oue10-0.5", "small-rest-E1", "small-rest-E2", "mostly-silent"])
def test_bracket_holds_every_law_within_rel_err(q, E, n, fracs):
    """Stored masses ``q`` within ``eta = 1e-7`` of the true law; the true law moves each class by ``(1 +- eta)`` (16
    patterns, the silent category takes the rest): both ends and the slope hold for every pattern. Fails without ``(1 +
    r')^n`` on the upper end or ``(1 - r')^n`` on the lower end, or without the silent category's part of ``r'`` (the
    patterns move the value by up to ~``n eta gamma / rho``; the bracket is ~``2 n r'`` wide)."""
    eta = 1e-7
    top = math.log(E)
    for f in fracs:
        eps = f * top
        (lo, up, slope), a, b = _corner_masses(q, E, n, eps, eta)
        for signs in itertools.product((-1, 1), repeat=4):
            with mpmath.workdps(40):
                law = [mpmath.mpf(x) * (1 + sg * mpmath.mpf(eta)) for x, sg in zip(q, signs)]
            want, want_slope = _truth(law, a, b, n, eps)
            assert lo <= want <= up, (f, signs, lo, want, up)
            assert slope <= want_slope, (f, signs, slope, want_slope)


def test_adverse_laws_reach_the_factors():
    """The perturbed laws move the value by more than the bracket would be without the factors: the largest and the
    smallest of the 16 values differ by more than ``n rel_err / 4`` relative (so the test above sees a missing factor)."""
    eta, n = 1e-7, 12
    s = _pair(_SMALL_REST, math.exp(1.0), eta)
    eps = 0.5 * s.max_log_ratio
    vals = []
    for signs in itertools.product((-1, 1), repeat=4):
        with mpmath.workdps(40):
            law = [mpmath.mpf(x) * (1 + sg * mpmath.mpf(eta)) for x, sg in zip(_SMALL_REST, signs)]
        vals.append(_truth(law, s.a, s.b, n, eps)[0])
    assert max(vals) - min(vals) > n * eta / 4 * min(vals)


def test_lower_factor_is_one_minus_r():
    """D2: the lower end's factor is at most ``(1 - r')^n`` (``r'`` read back from the upper factor ``(1 + r')^n``), not
    ``(1 + r')^-n``, which is larger by ~``n r'^2``: here ``r' ~ 1e-3``, ``n r'^2 ~ 5e-5``, far above ``r'``'s ``1e-6``
    margin."""
    n = 50
    s = _pair(_OUE_Q, _OUE_E, 1e-3)
    tab = bm._corner_tables(tuple(float(x) for x in s.mass), s.rel_err, n, bm._tuv_labels(s))
    assert tab is not None
    with mpmath.workdps(40):
        r = mpmath.expm1(mpmath.mpf(tab.log_factor) / n)  # >= r' (log_factor rounded up)
        assert r > 1e-3
        assert mpmath.exp(mpmath.mpf(tab.log_shrink)) <= (1 - r) ** n * (1 + mpmath.mpf(1e-9))
        assert mpmath.exp(-mpmath.mpf(tab.log_factor)) > (1 - r) ** n * (1 + mpmath.mpf(1e-6))
    # ... and the lower end and the slope take that factor (no law within rel_err reaches (1 - r')^n, so no oracle of
    # the value can tell it from (1 + r')^-n: the factor is checked where it is applied)
    cf = bm.coefficients(s, 0.3 * s.max_log_ratio)
    lo, up, slope = bm._corner_bounds(cf, n, tab, (0, 1, 2, 3), 1e-9)
    lo2, up2, slope2 = bm._corner_bounds(cf, n, dataclasses.replace(tab, log_shrink=tab.log_shrink - 1.0, kept={}), (0, 1, 2, 3), 1e-9)
    assert up2 == up and lo > 0.0 and slope > 0.0
    assert abs(lo2 / lo * math.e - 1.0) < 1e-12 and abs(slope2 / slope * math.e - 1.0) < 1e-12


def _deep_pair(E: float) -> PairStructure:
    """A product law (``q11 q00 = q10 q01`` exactly: no corner mass, no tail charge) with a small silent category (rho ~
    0.062): at ``n = 36`` the slices leave out ``m <= 2`` (weights below ``CORNER_DROP`` of the largest)."""
    q00, q01, q10 = 0.5, 0.4375, 2.0**-13
    return _pair((q00, q10, q01, q10 * q01 / q00), E, 1e-15)


@pytest.mark.parametrize("f", [0.7, 0.8])
def test_deep_tail_needs_the_left_out_m(f):
    """``delta ~ 1e-39 .. 1e-44``, mostly from the ``m`` left out: the bracket holds the oracle, the upper end without the
    ``drop`` charge falls below it, and the lower end is below it by more than 1e-8 (the cells left out matter)."""
    n = 36
    s = _deep_pair(math.exp(3.0))
    labels = bm._tuv_labels(s)
    tab = bm._corner_tables(tuple(float(x) for x in s.mass), s.rel_err, n, labels)
    assert tab is not None and tab.windows[0][0] > 0 and math.isinf(tab.log_tail[0])
    eps = f * s.max_log_ratio
    want, want_slope = _truth(list(s.mass), s.a, s.b, n, eps)
    assert 1e-46 < want < 1e-36
    lo, up, slope = _corner(s, n, eps, 1e-3, tab)
    assert lo <= want <= up and slope <= want_slope
    assert lo < want * (1 - 1e-8)
    bare = dataclasses.replace(tab, drop=tuple(0.0 for _ in tab.drop), kept={})
    assert _corner(s, n, eps, 1e-3, bare)[1] < want


def test_many_corner_draws_refused_and_bracketed():
    """``n mu`` between ``CORNER_MAX_DRAWS`` and ~1: the path refuses (its slices and tail charge are sized for a few
    corner draws) and the pair's answer (another exact route) holds the oracle within ``1e-9``."""
    q = (0.25, 0.125, 0.125, 0.0703125)  # corner 11, mu = 0.0078125
    s = _pair(q, math.exp(1.5), 0.0)
    n = 30
    mu = bm._corner_split(list(q))[4]
    assert bm.CORNER_MAX_DRAWS < n * mu < 1.0
    assert bm._corner_tables(q, 0.0, n, bm._tuv_labels(s)) is None
    for eps in (0.3, 1.0):
        b = PairBlanket(s, n, method="exact").bounds(eps, 1e-9)
        want, _ = _truth(list(q), s.a, s.b, n, eps)
        assert b.lower <= want <= b.upper and b.upper - b.lower <= 1e-9 * want

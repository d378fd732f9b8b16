"""Review rev107m2 of the two-count blanket path (sep109): the outward rounding of its ``kappa`` (:func:`_corner_kappa`,
folded into ``a1`` and the per-draw constant by 59d6054) and of the three-count coefficients' ``rho``
(:func:`_tuv_coefficients`), each against EXACT dyadic arithmetic (Python integers: every float is ``M 2^e``, and the
counts are integers); and the wide-bracket fallback of :meth:`PairBlanket._tuv_path` (the three-count tables' bracket
intersected with the two-count one)."""

from __future__ import annotations

import math
from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pytest

from shuffle_accountant.numeric import blanket_matrix as bm
from shuffle_accountant.numeric.blanket_matrix import PairBlanket
from shuffle_accountant.randomizers import make_randomizer

N = 200
W = N + 1
#: every pair ``(m, a)``, ``a <= m <= 200`` (the tables' layout)
MM = np.repeat(np.arange(W, dtype=float), np.arange(1, W + 1))
AA = np.concatenate([np.arange(m + 1.0) for m in range(W)])
M_INT = MM.astype(np.int64).astype(object)
A_INT = AA.astype(np.int64).astype(object)
#: below this, a cell's ``kappa`` is checked one by one with :class:`Fraction` (its exponent would make the shared
#: integer scale huge: the ``1e-300`` of ``m = a = r = 0``)
TINY = 2.0**-600


def _parts(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``x = mant 2^ex`` exactly, ``mant`` an integer (int64), for finite floats."""
    frac, ex = np.frexp(x)
    return (frac * 2.0**53).astype(np.int64), ex.astype(np.int64) - 53


def _as_ints(x: np.ndarray, low: int) -> np.ndarray:
    """``x 2^-low`` as exact Python integers (``low`` at most every exponent of ``x``'s parts)."""
    mant, ex = _parts(x)
    assert np.all(ex >= low)
    return mant.astype(object) * (np.ones(len(x), dtype=np.int64).astype(object) << (ex - low).astype(object))


def _outward_violations(A: float, B: float, Cc: float, corner: tuple[int, int], sign: float, r: int) -> int:
    """How many pairs ``(m, a)`` of slice ``r`` have :meth:`_CornerKappa.at` on the wrong side of the exact ``kappa =
    (A (m + r) + B (a + c1 r) + C c2 r) / |C|`` (below it for ``sign = 1``, above for ``-1``)."""
    c1, c2 = corner
    kap = bm._corner_kappa(sign, A, B, Cc, corner).at(MM, AA, r)
    assert np.all(np.isfinite(kap))
    tiny = np.abs(kap) < TINY
    coef = np.array([A, B, Cc])
    big = kap[~tiny]
    low = int(min(np.min(_parts(coef)[1]), np.min(_parts(big)[1]) if len(big) else 0))
    Ai, Bi, Ci = (int(v) for v in _as_ints(coef, low))
    # sign (kap |C| - num) >= 0, every term times 2^(-2 low): exact integers
    num = Ai * (M_INT[~tiny] + r) + Bi * (A_INT[~tiny] + c1 * r) + Ci * c2 * r
    assert low <= 0
    gap = _as_ints(big, low) * (-Ci) - num * (1 << -low)
    bad = int(np.count_nonzero([(g < 0) if sign > 0 else (g > 0) for g in gap]))
    fA, fB, fC = Fraction(A), Fraction(B), Fraction(Cc)
    for i in np.flatnonzero(tiny):
        m, a = int(MM[i]), int(AA[i])
        exact = (fA * (m + r) + fB * (a + c1 * r) + fC * c2 * r) / -fC
        bad += int(Fraction(float(kap[i])) < exact if sign > 0 else Fraction(float(kap[i])) > exact)
    return bad


def _cases() -> list[tuple[float, float, float]]:
    """``(A, B, C)``, ``C < 0``: every sign pattern of ``A, B`` at magnitudes 1e-6 .. 1e3, ``B`` cancelling ``A`` to 20 .. 52
    bits (``kappa ~ 0`` at ``a ~ m``, and ``e0`` for the corner ``10``), ``C`` cancelling ``A + B`` (``e0`` for ``11``),
    ``|C|`` far above and far below ``|A| + |B|``."""
    rng = np.random.default_rng(109)

    def mag() -> float:
        return float(10.0 ** rng.uniform(-6.0, 3.0) * (1.0 + rng.random()))

    out = []
    for sa, sb in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
        out.append((sa * mag(), sb * mag(), -mag()))
        out.append((sa * 1e-6 * (1 + rng.random()), sb * 1e-5 * (1 + rng.random()), -1e3 * (1 + rng.random())))
        out.append((sa * 1e3 * (1 + rng.random()), sb * 5e2 * (1 + rng.random()), -1e-6 * (1 + rng.random())))
    for bits in (20, 33, 45, 52):
        A = mag() * (1 if bits % 2 else -1)
        out.append((A, -A * (1.0 + (-1) ** bits * 2.0**-bits), -mag()))
        A, B = mag(), mag()
        out.append((A, B, -(A + B) * (1.0 + 2.0**-bits)))
    return out


@pytest.mark.parametrize("case", _cases())
def test_corner_kappa_is_outward_exactly(case: tuple[float, float, float]) -> None:
    A, B, Cc = case
    for corner in ((1, 1), (1, 0)):
        for sign in (1.0, -1.0):
            for r in (0, 1, 2, 7, 40):
                assert _outward_violations(A, B, Cc, corner, sign, r) == 0, (corner, sign, r)


def test_corner_kappa_is_what_corner_bounds_uses() -> None:
    """The brackets of :func:`_corner_bounds` move with the helper (a mutant helper reaches them)."""
    s = make_randomizer("oue", 1.0, k=10).pair_structures()[0]
    labels = bm._tuv_labels(s)
    assert labels is not None
    p = tuple(float(x) for x in s.mass)
    n = 60
    tab = bm._corner_tables(p, s.rel_err, n, labels)
    assert tab is not None
    cf = bm.coefficients(s, 0.5 * s.max_log_ratio)
    got = bm._corner_bounds(cf, n, tab, labels, 1e-9)
    (_, A, B, Cc), _ = bm._tuv_coefficients(cf, labels)
    kc = bm._corner_kappa(1.0, A, B, Cc, tab.corner)
    assert kc.a1 > A / -Cc and kc.e_r > 0.0 and got is not None and got[0] <= got[1]


def _exact_coefficient_checks(up: list[float], lo: list[float]) -> None:
    """:func:`_tuv_coefficients` against its bounds in exact rationals: ``A = up00``, ``B >= up10 - lo00 + rho_+``, ``C >=
    up01 - lo00`` (``rho_+ = (up11 - lo10 - lo01 + up00)_+``), and from below ``A' = lo00``, ``B' <= lo10 - up00 -
    (up10 + up01 - lo11 - lo00)_+``, ``C' <= lo01 - up00``."""
    cf = SimpleNamespace(up=np.array(up), lo=np.array(lo))
    (s1, A, B, C), (s2, A2, B2, C2) = bm._tuv_coefficients(cf, (0, 1, 2, 3))  # type: ignore[arg-type]
    u = [Fraction(x) for x in up]
    lw = [Fraction(x) for x in lo]
    rho_up = max(u[3] - lw[1] - lw[2] + u[0], Fraction(0))
    rho_lo = max(u[1] + u[2] - lw[3] - lw[0], Fraction(0))
    assert (s1, s2) == (1.0, -1.0)
    assert Fraction(A) == u[0] and Fraction(A2) == lw[0]
    assert Fraction(B) >= u[1] - lw[0] + rho_up, (up, lo)
    assert Fraction(C) >= u[2] - lw[0]
    assert Fraction(B2) <= lw[1] - u[0] - rho_lo, (up, lo)
    assert Fraction(C2) <= lw[2] - u[0]


def test_tuv_coefficients_outward_exactly_on_real_pairs() -> None:
    """Real unary-encoding / local-hashing pairs (``c11 - c10 - c01 + c00 = 0`` up to the stored ratios: ``rho_+`` is
    the coefficients' widths, rounding-level) at eps 0.05 .. 0.99 of the largest log-ratio."""
    for kind in ("sue", "oue", "olh"):
        for k in (4, 10, 100):
            for eps0 in (0.01, 0.5, 1.0, 2.0, 4.0, 8.0):
                s = make_randomizer(kind, eps0, k=k).pair_structures()[0]
                if bm._tuv_labels(s) is None:
                    continue
                for f in (0.05, 0.3, 0.6, 0.9, 0.99):
                    cf = bm.coefficients(s, f * s.max_log_ratio)
                    lab = bm._tuv_labels(s)
                    assert lab is not None
                    _exact_coefficient_checks([float(cf.up[j]) for j in lab], [float(cf.lo[j]) for j in lab])


def test_tuv_coefficients_outward_exactly_on_random_ends() -> None:
    """Random ends ``lo <= up`` of every sign, magnitudes 1e-6 .. 1e3, with ``rho`` of each sign, near 0 (within a few
    ulps of the terms) or not."""
    rng = np.random.default_rng(1090)
    for i in range(400):
        c = [float(rng.choice([-1.0, 1.0]) * 10.0 ** rng.uniform(-6.0, 3.0)) for _ in range(3)]
        c.append(c[1] + c[2] - c[0])  # rho = 0 up to the rounding of this sum
        if i % 3 == 0:
            c[3] += float(rng.normal()) * 10.0 ** rng.uniform(-6.0, 3.0)
        width = [abs(x) * 10.0 ** rng.uniform(-16.0, -6.0) * (i % 4 != 1) for x in c]
        _exact_coefficient_checks([x + w for x, w in zip(c, width)], [x - w for x, w in zip(c, width)])


def test_wide_corner_bracket_is_intersected_with_the_cube() -> None:
    """Where the two-count bracket misses ``rtol`` at ``n <= TUV_TABLES_MAX_N`` both tables answer and the path returns
    the intersection (each end from the tighter of the two): here the two-count lower end is above the three-count one
    (review rev107m2, fb2.py), so the answer is strictly narrower than the three-count bracket that answered before."""
    s = make_randomizer("olh", 8.0, k=10).pair_structures()[0]
    n, rtol = 30, 1e-9
    labels = bm._tuv_labels(s)
    assert labels is not None and n <= bm.TUV_TABLES_MAX_N
    p = tuple(float(x) for x in s.mass)
    cf = bm.coefficients(s, 0.9 * s.max_log_ratio)
    corner = bm._corner_tables(p, s.rel_err, n, labels)
    cube_tab = bm._tuv_tables(p, float(s.rest), s.rel_err, n, labels)
    assert corner is not None and cube_tab is not None
    two = bm._tuv_bounds(cf, n, corner, labels, rtol)
    cube = bm._tuv_bounds(cf, n, cube_tab, labels, rtol)
    assert two is not None and cube is not None
    assert two[1] - two[0] > rtol * two[0]  # (the fallback's trigger)
    got = PairBlanket(s, n)._tuv_path(cf, rtol)
    assert got == (max(two[0], cube[0]), min(two[1], cube[1]), max(two[2], cube[2]))
    assert cube[0] <= got[0] <= got[1] <= cube[1] and two[0] <= got[0] <= got[1] <= two[1]
    assert got[0] > cube[0] and got[1] - got[0] < cube[1] - cube[0]
    assert math.isclose(got[0], got[1], rel_tol=1e-8)


def test_intersected_keeps_either_alone() -> None:
    a = (1.0, 3.0, 0.5)
    assert bm._intersected(a, None) == a and bm._intersected(None, a) == a and bm._intersected(None, None) is None
    assert bm._intersected(a, (2.0, 4.0, 0.25)) == (2.0, 3.0, 0.5)

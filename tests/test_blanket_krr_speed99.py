"""Correctness of the changes helper krr99 made to ``shuffle_accountant/numeric/blanket_krr.py`` for the
cold ``eps(delta)`` speed of issue 10. ``_Hinges`` keeps nothing between calls (its cross-call cache
by ``(m, x)`` was removed): each call's values are those of one fresh computation of its distinct
requests, within their own error bounds against an mpmath sum (shares no code with the package), and
the block engine's brackets -- through refinement rounds whose requests overlap, where the removed
cache answered from earlier rounds -- hold the oracle's exact sum (``tests/oracle_blanket.py``).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from shuffle_accountant.numeric import blanket_krr as bk
from shuffle_accountant.numeric.blanket_krr import KrrBlanket, _Hinges

import oracle_blanket as ob


def _mp_hinges(m: int, x: float, rho: float) -> dict[str, mpmath.mpf]:
    """``E[(X-x)+], E[(x-X)+], P[X>=x], P[X<x], P[X<=x], P[X>x], P[X=x-1]`` of ``X ~ Bin(m, rho)``, 40 digits."""
    with mpmath.workdps(40):
        r = mpmath.mpf(rho)
        p = [mpmath.binomial(m, j) * r**j * (1 - r) ** (m - j) for j in range(m + 1)]
        return {"fp": sum(p[j] * max(j - x, 0) for j in range(m + 1)),
                "fm": sum(p[j] * max(x - j, 0) for j in range(m + 1)),
                "ge": sum(p[j] for j in range(m + 1) if j >= x), "lt": sum(p[j] for j in range(m + 1) if j < x),
                "le": sum(p[j] for j in range(m + 1) if j <= x), "gt": sum(p[j] for j in range(m + 1) if j > x),
                "pmx": p[int(x) - 1] if 1 <= x <= m + 1 else mpmath.mpf(0)}


def test_hinge_cache_keeps_no_state_between_calls() -> None:
    """A second call whose requests overlap the first's: its values are, bit for bit, one fresh computation
    of its own distinct requests (nothing from the first call), and the cache object holds no store."""
    rng = np.random.default_rng(11)
    cache = _Hinges(0.37)
    m1 = rng.integers(5 * 10**5, 5 * 10**5 + 300, 200).astype(float)
    x1 = rng.integers(1.8e5, 1.9e5, 200).astype(float)
    cache.get(m1, x1)
    m2 = np.concatenate((m1[:120], rng.integers(5 * 10**5, 5 * 10**5 + 300, 80).astype(float), m1[:10]))
    x2 = np.concatenate((x1[:120], rng.integers(1.8e5, 1.9e5, 80).astype(float), x1[:10]))
    got = cache.get(m2, x2)
    keys = np.unique(np.stack((m2, x2), axis=1), axis=0)
    fresh = _Hinges._compute(keys[:, 0], keys[:, 1], 0.37)
    at = {(a, b): i for i, (a, b) in enumerate(keys.tolist())}
    idx = np.array([at[(a, b)] for a, b in zip(m2.tolist(), x2.tolist())])
    for f in _Hinges._FIELDS:
        assert np.array_equal(got[f], fresh[f][idx]), f
    assert not any(isinstance(v, np.ndarray) or isinstance(v, bk._Rows) for v in vars(cache).values())


@pytest.mark.parametrize("rho", [0.05, 0.37, 0.8])
def test_hinge_cache_values_within_their_error_bounds(rho: float) -> None:
    """Every field of repeated, overlapping calls (duplicates inside a call included) is within its error
    bound of the mpmath value (a wrong dedupe or a stale value from another call would fail)."""
    cache = _Hinges(rho)
    rng = np.random.default_rng(5)
    for _ in range(3):
        m = rng.integers(0, 60, 90).astype(float)
        x = np.floor(rng.uniform(-2.0, 1.0, 90) + m * rng.uniform(0.0, 1.05, 90))
        got = cache.get(np.concatenate((m, m[:30])), np.concatenate((x, x[:30])))
        for i in range(m.size + 30):
            j = i if i < m.size else i - m.size
            ref = _mp_hinges(int(m[j]), float(x[j]), rho)
            for f in ("fp", "fm", "ge", "lt", "le", "gt", "pmx"):
                assert abs(got[f][i] - ref[f]) <= got["e_" + f][i], (m[j], x[j], f)


# (n, k, eps0, eps): small enough for the oracle's exact trinomial sum; refined from coarse to fine, each
# round's hinge requests overlap the earlier rounds' (which the removed cache answered)
ENGINE_CASES = [(45, 3, 1.0, 0.15), (70, 5, 2.0, 0.6), (90, 10, 0.5, 0.05), (33, 100, 3.0, 1.0)]


@pytest.mark.parametrize("n, k, eps0, eps", ENGINE_CASES)
def test_engine_rounds_bracket_the_oracle(n: int, k: int, eps0: float, eps: float) -> None:
    exact = ob.blanket_delta_krr_formula(n, k, eps0, eps)
    prof = KrrBlanket(n, k, eps0, shared=False)
    eng = prof._engine
    assert eng is not None
    for rtol in (1e-1, 1e-3, 1e-6, 1e-9):
        b = eng.bounds(eps, rtol)
        with mpmath.workdps(50):
            assert b.lower <= exact <= b.upper, (rtol, b, exact)
        assert b.upper - b.lower <= rtol * b.lower * (1 + 1e-9)
    full = prof.bounds(eps, 1e-9)  # the route KrrBlanket takes (the window here)
    with mpmath.workdps(50):
        assert full.lower <= exact <= full.upper


# ---------------------------------------------------------------------------------------
# KINK_CUTS_MEAN / KINK_CUTS_MIN: no kinks where their cuts are too many (cost only)
# ---------------------------------------------------------------------------------------

# (n, k, eps0, eps): the window route at sizes the oracle sums exactly
NO_KINK_CASES = [(40, 3, 1.0, 0.2), (60, 5, 2.0, 0.7), (90, 3, 0.5, 0.05), (35, 10, 3.0, 1.5)]


@pytest.mark.parametrize("n, k, eps0, eps", NO_KINK_CASES)
def test_window_without_kinks_by_the_cut_limit_brackets_the_oracle(n: int, k: int, eps0: float, eps: float,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """With the limit forced to 0 every evaluation places no kinks (two boundaries a total at most): the
    window's bracket (wide) and the answer of the route, which then falls back to the block engine, both
    hold the oracle's exact sum, and the answer is as narrow as asked."""
    exact = ob.blanket_delta_krr_formula(n, k, eps0, eps)
    monkeypatch.setattr(bk, "KINK_CUTS_MEAN", 0.0)
    monkeypatch.setattr(bk, "KINK_CUTS_MIN", 0)
    w = bk._TotalsWindow(n, k, eps0)
    assert w.applies
    own, _, cut_l, _ = w._pieces(math.expm1(eps), math.exp(eps))
    assert np.all(cut_l < 0.0) and np.all(np.bincount(own) <= 2)  # window ends only
    wb = w.bounds(eps, 1e-9)
    full = KrrBlanket(n, k, eps0, shared=False).bounds(eps, 1e-9)
    with mpmath.workdps(50):
        assert wb.lower <= exact <= wb.upper, (wb, exact)
        assert full.lower <= exact <= full.upper, (full, exact)
    assert full.converged


def test_cut_limit_leaves_ordinary_queries_alone_and_stops_the_flood() -> None:
    """At the searches' epsilons the cuts stay far below the limit (kinks placed as before); at an epsilon
    far above them (delta ~ 1e-64) the limit holds and the window keeps two boundaries a total."""
    w = bk._TotalsWindow(10**5, 3, 1.0, bk.HYBRID_SD)
    own, _, cut_l, _ = w._pieces(math.expm1(0.0109), math.exp(0.0109))
    assert np.any(cut_l >= 0.0)
    w = bk._TotalsWindow(10**6, 3, 1.0, bk.HYBRID_SD)
    own, _, cut_l, _ = w._pieces(math.expm1(0.5), math.exp(0.5))
    assert np.all(cut_l < 0.0) and np.all(np.bincount(own) <= 2)


@pytest.mark.parametrize("n, k, eps0, eps", [(10**5, 3, 1.0, 0.5), (10**5, 10, 2.0, 0.4)])
def test_large_eps_answer_after_the_cut_limit_overlaps_the_kinked_one(n: int, k: int, eps0: float, eps: float,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the limit holds (delta far below 1e-30) the answer and the answer with every kink placed (the
    limit lifted) are both certified brackets of the same delta: they overlap, and neither is above 1e-30."""
    got = KrrBlanket(n, k, eps0, shared=False).bounds(eps, 1e-6)
    monkeypatch.setattr(bk, "KINK_CUTS_MIN", 10**12)
    ref = KrrBlanket(n, k, eps0, shared=False).bounds(eps, 1e-6)
    assert 0.0 <= got.lower <= got.upper < 1e-30 and ref.upper < 1e-30
    assert got.lower <= ref.upper and ref.lower <= got.upper

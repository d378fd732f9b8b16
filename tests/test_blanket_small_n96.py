"""Item 10's live-frequency certificate after sep96 (``blanket_matrix._live_frequencies``): the candidates of
the Lipschitz grid checked one by one, and the coarse FFT pre-pass (``_coarse_cells``), against the whole
spectrum of the tilted per-user laws the direct route meets at small ``n`` (unary encoding and local
hashing, k = 10 and 100, n = 300 .. 3000), and the direct route's brackets against exact enumeration.

Each test fails when a frequency whose ``|V|`` exceeds the threshold is left out of the live set (checked
by mutation: the pre-pass without its Lipschitz term ``lip / (2 N)``, or the one-by-one step without the
error ``err(f)`` of the sums, drops live frequencies at the edges of the live runs here)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from shuffle_accountant import api
from shuffle_accountant.numeric import blanket_matrix as bm
from shuffle_accountant.randomizers import SUE, make_randomizer

_U = 2.0**-53


def _laws(fam: str, k: int, eps0: float, n: int) -> list[tuple[np.ndarray, np.ndarray, int, int, float, float]]:
    """The arguments of every ``_live_frequencies`` call of one ``eps(1e-6)`` query (the direct route's laws)."""
    seen: list[tuple[np.ndarray, np.ndarray, int, int, float, float]] = []
    orig = bm._live_frequencies

    def spy(kk, w, m, size, slack=0.0, dead_log=bm.DEAD_LOG, max_live=bm.DIRECT_MAX_LIVE):  # type: ignore[no-untyped-def]
        seen.append((np.array(kk), np.array(w), m, size, slack, dead_log))
        return orig(kk, w, m, size, slack, dead_log, max_live)

    bm._live_frequencies = spy
    try:
        api.epsilon(eps0, n, 1e-6, method="blanket", randomizer=make_randomizer(fam, eps0, k=k))
    finally:
        bm._live_frequencies = orig
    return seen


def _threshold(m: int, slack: float, dead_log: float) -> float:
    return math.exp((1.0 - dead_log) / m) * (1.0 - 256 * _U) - slack * (1.0 + 4 * _U)


def _spectrum(kk: np.ndarray, w: np.ndarray, size: int) -> np.ndarray:
    """``|V(f)|`` at every ``0 <= f <= size / 2`` (an FFT of the law on the circle: within ~1e-13)."""
    x = np.zeros(size)
    np.add.at(x, np.mod(kk, size), w)
    return np.abs(np.fft.rfft(x))


def _exact_abs(kk: np.ndarray, w: np.ndarray, f: int, size: int) -> mpmath.mpf:
    with mpmath.workdps(40):
        return abs(mpmath.fsum(mpmath.mpf(float(wj)) * mpmath.expj(-2 * mpmath.pi * int(kj) * f / size)
                               for kj, wj in zip(kk, w)))


CASES = [("oue", 10, 2.0, 1000), ("oue", 100, 1.0, 1000), ("olh", 10, 1.0, 300), ("sue", 10, 0.5, 3000),
         ("sue", 100, 0.5, 1000)]


@pytest.mark.parametrize("fam,k,eps0,n", CASES)
def test_live_set_is_the_set_of_live_frequencies(fam, k, eps0, n):
    """Outside the returned set every ``|V(f)|`` is at most the threshold (borderline ones at 40 digits), and the
    set is tight: every returned frequency has ``|V|`` within its rounding of the threshold or above it (the
    one-by-one step drops the dead ones of the grid's small cells)."""
    laws = _laws(fam, k, eps0, n)
    assert laws, "the direct route should answer here"
    for kk, w, m, size, slack, dead_log in laws:
        live, vals, err = bm._live_frequencies(kk, w, m, size, slack, dead_log)
        thr = _threshold(m, slack, dead_log)
        spec = _spectrum(kk, w, size)
        dead = np.ones(len(spec), dtype=bool)
        dead[live] = False
        assert np.all(live[:-1] < live[1:]) and live[0] == 0
        near = np.flatnonzero(dead & (spec > thr - 1e-11))
        assert np.all(spec[dead] <= thr + 1e-11)
        for f in near[:50]:  # (the borderline dead ones: exact)
            assert _exact_abs(kk, w, int(f), size) <= thr
        assert np.all(spec[live] > thr - 1e-11)  # (tight: no dead frequency is kept)
        # the returned sums are item 10's, within their bounds
        assert np.all(np.abs(np.abs(vals) - spec[live]) <= err + 1e-12)


@pytest.mark.parametrize("fam,k,eps0,n", CASES[:3])
def test_coarse_cells_keep_every_live_frequency(fam, k, eps0, n):
    """The pre-pass alone: every frequency of ``[lo, hi]`` with ``|V| >`` the threshold lies in a returned range;
    the ranges certified dead hold only frequencies below it."""
    kk, w, m, size, slack, dead_log = _laws(fam, k, eps0, n)[0]
    thr = _threshold(m, slack, dead_log)
    centre = int(np.round(float(np.sum(w * kk)) / float(np.sum(w))))
    lip = 2.0 * math.pi * float(np.sum(w * np.abs((kk - centre).astype(float)))) * (1.0 + (len(kk) + 8) * _U)
    big_m = float(np.sum(w)) * (1.0 + (len(kk) + 2) * _U)
    lo, hi = 1, size // 2
    got = bm._coarse_cells(kk, w, big_m, lip, thr, size, lo, hi, 0)
    assert got is not None
    starts, ends, _ = got
    kept = np.zeros(size // 2 + 1, dtype=bool)
    for s, e in zip(starts, ends):
        kept[s:e + 1] = True
    spec = _spectrum(kk, w, size)
    live = np.flatnonzero(spec > thr + 1e-11)
    live = live[live >= lo]
    assert np.all(kept[live])
    assert np.sum(kept) < 0.5 * (hi - lo + 1)  # (it certifies most of the range)


@pytest.mark.parametrize("eps0,n,eps", [(1.0, 400, 0.3), (2.0, 700, 0.5), (0.5, 1000, 0.1)])
def test_direct_route_overlaps_exact_enumeration(eps0, n, eps):
    """Item 10 (one level, no FFT, the live set above) against exact enumeration (three classes: SUE k = 2), both
    certified: their brackets meet, and the direct one is narrow."""
    s = SUE(2, eps0).pair_structures()[0]
    cf = bm.coefficients(s, eps)
    pb = bm.PairBlanket(s, n, method="lattice")
    res = bm._Lattice(cf, n).evaluate_direct(pb._plan(cf, 1e-6, 1.0, direct=True))
    lo, up, _ = bm._exact_bounds(cf, n)
    assert max(lo, res.lower) <= min(up, res.upper), (lo, up, res.lower, res.upper)
    assert res.upper - res.lower <= 1e-5 * res.upper


@pytest.mark.parametrize("fam,k,eps0,n", CASES[:2])
def test_borderline_frequency_stays_live(fam, k, eps0, n):
    """A threshold set (through ``slack``) within ~1e-14 below the exact ``|V(f0)|`` of a frequency of a near return:
    ``f0`` is live and must be returned. Fails when the one-by-one step drops a frequency on its computed ``|V|``
    without the sums' error bound (or with any margin above ~1e-14)."""
    kk, w, m, size, _, dead_log = _laws(fam, k, eps0, n)[0]
    spec = _spectrum(kk, w, size)
    base = math.exp((1.0 - dead_log) / m) * (1.0 - 256 * _U)
    band = int(np.argmax(spec <= base))
    far = np.flatnonzero((spec > base) & (np.arange(len(spec)) > 2 * band))
    assert len(far), "a near return of |V| is expected here"
    f0 = int(far[np.argmax(spec[far])])
    exact = _exact_abs(kk, w, f0, size)
    slack = (base - float(exact) + 4e-15) / (1.0 + 4 * _U)
    thr = _threshold(m, slack, dead_log)
    gap = exact - mpmath.mpf(thr)
    assert 0 < gap < 1e-13, gap
    live = bm._live_frequencies(kk, w, m, size, slack, dead_log)[0]
    assert f0 in set(live.tolist())

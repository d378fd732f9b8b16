"""sep103 (issue 10, speed): the search's coarse scans take a cheaper start estimate.

:meth:`PairBlanket.surrogate` on the search's ten-points-a-decade scans (:data:`blanket_matrix.COARSE_GRID_RATIO`)
leaves out the third- and fourth-order Edgeworth terms and stops the tilt at :data:`blanket_matrix.COARSE_TILT_STEP`;
the zooms, whose points give the start and its slope, are unchanged. Estimates only steer the search: the brackets
stay certified whatever they are. These tests check the classification of the grids, that the zooms' values are the
same floats as before, that the scans' values stay close to the full estimate, and that the search's start (root
and slope) is the one the full estimate gives.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffle_accountant import api, randomizers
from shuffle_accountant.numeric import blanket_matrix as bm
from shuffle_accountant.numeric import search

CELLS = [
    (randomizers.SUE, 10, 1.0, 300),
    (randomizers.OUE, 100, 2.0, 1000),
    (randomizers.OLH, 100, 4.0, 10_000),
    (randomizers.SUE, 100, 4.0, 1000),
    (randomizers.OLH, 10, 0.5, 100_000),
    (randomizers.OUE, 10, 1.0, 100),
]


def _full_estimate(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every array gets the full estimate (the code before sep103)."""
    monkeypatch.setattr(bm, "_coarse_scan", lambda eps: False)


def test_the_search_grids_are_classified():
    hi = 3.0
    for first, count in ((0, 1), (1, 7)):  # search._surrogate_root's scans
        grid = hi * np.logspace(-1.0 - first - (count - 1), -float(first), 10 * count + 1)[:-1]
        assert bm._coarse_scan(grid)
    assert not bm._coarse_scan(np.linspace(0.3, 0.3 * 10**0.1, 17))  # a zoom
    start = hi * 10**-0.1  # a top-cell scan (search._top_cell)
    dist = (hi - start) * np.logspace(0.0, -5.0, 21)
    assert not bm._coarse_scan(hi - dist)
    assert not bm._coarse_scan(np.array([0.1, 1.0]))  # (too short)
    assert not bm._coarse_scan(np.array([]))


def test_moments_reused_are_the_same_floats():
    rng = np.random.default_rng(7)
    v = rng.random((4, 5))
    d = rng.standard_normal((4, 5))
    var = (v * d * d).sum(axis=1)
    vd3 = v * d * d * d
    a = bm._cumulants_56(v, d, var, 1000)
    b = bm._cumulants_56(v, d, var, 1000, vd3, (vd3.sum(axis=1), (vd3 * d).sum(axis=1)))
    for x, y in zip(a, b):
        assert np.array_equal(x, y)


@pytest.mark.parametrize("make,k,eps0,n", CELLS)
def test_zooms_unchanged_and_scans_close(make, k, eps0, n, monkeypatch):
    pb = bm.PairBlanket(make(k, eps0).pair_structures()[0], n)
    scans = [eps0 * np.logspace(-1.0, 0.0, 11)[:-1], eps0 * np.logspace(-8.0, -1.0, 71)[:-1]]
    zoom = np.linspace(0.2 * eps0, 0.2 * eps0 * 10**0.1, 17)
    new = [pb.surrogate(g) for g in scans + [zoom]]
    _full_estimate(monkeypatch)
    old = [pb.surrogate(g) for g in scans + [zoom]]
    assert np.array_equal(new[2], old[2])  # (the zoom: the same floats)
    for x, y in zip(new[:2], old[:2]):
        assert np.array_equal(x > 0.0, y > 0.0)
        pos = (x > 1e-300) & (y > 1e-300)
        # measured at most 0.024 (SUE k = 100, eps0 = 4, n = 1e3, next to eps0), median 6e-8
        assert np.all(np.abs(np.log(x[pos]) - np.log(y[pos])) <= 0.05)


def test_tilt_stop_is_close():
    pb = bm.PairBlanket(randomizers.OLH(100, 2.0).pair_structures()[0], 1000)
    eps = 2.0 * np.logspace(-3.0, -0.05, 30)
    a, b = np.asarray(pb.structure.a), np.asarray(pb.structure.b)
    c = np.concatenate((a[None, :] - np.exp(eps)[:, None] * b[None, :], np.zeros((eps.size, 1))), axis=1)
    keep = (c > 0.0).any(axis=1) & ((pb._w[None, :] * c).sum(axis=1) < 0.0)
    fine = bm._tilts(c[keep], pb._w[None, :])[0]
    coarse = bm._tilts(c[keep], pb._w[None, :], bm.COARSE_TILT_STEP)[0]
    assert np.all(np.abs(coarse / fine - 1.0) <= 1e-6)


@pytest.mark.parametrize("make,k,eps0,n", CELLS)
@pytest.mark.parametrize("delta", [1e-6, 1e-9])
def test_search_start_is_the_full_estimates(make, k, eps0, n, delta, monkeypatch):
    rand = make(k, eps0)
    prof = bm.BlanketProfile(rand, n)
    got = search._surrogate_root(prof, delta, 0.0, eps0, 1e-6)
    _full_estimate(monkeypatch)
    want = search._surrogate_root(bm.BlanketProfile(rand, n), delta, 0.0, eps0, 1e-6)
    assert got == want or (got is not None and want is not None and all(x == y or (math.isnan(x) and math.isnan(y)) for x, y in zip(got, want)))


@pytest.mark.parametrize("make,k,eps0,n", CELLS[:4])
def test_brackets_as_with_the_full_estimate(make, k, eps0, n, monkeypatch):
    rand = make(k, eps0)
    new = api.epsilon(eps0, n, 1e-6, method="blanket", rtol=1e-6, randomizer=rand)
    _full_estimate(monkeypatch)
    old = api.epsilon(eps0, n, 1e-6, method="blanket", rtol=1e-6, randomizer=rand)
    assert new.bracket[0] <= old.bracket[1] and old.bracket[0] <= new.bracket[1]  # (both certified: they meet)
    assert new.value <= old.value * (1.0 + 1e-6)

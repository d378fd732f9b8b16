"""The three-count tables' packed layout (``blanket_matrix._tuv_tables`` / ``_tuv_bounds``, lat101): only the pairs
``u <= t`` are stored (``[j, t (t + 1) / 2 + u]``), built by the same float operations as before, and the bounds read
exactly those entries.

Checked here against an independent construction in the test: the law ``P(t, u, v) = w_t Q_t(u, v)`` by the plain
recurrence on full ``(t + 1) x (t + 1)`` blocks and ``np.cumsum`` along ``v`` (the tables must be equal to the bit on
every entry the bounds may read), and the bracket against a brute-force sum of ``P (S)_+`` over all ``(t, u, v)`` (a
misplaced entry moves it far beyond the bracket's width)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import gammaln  # type: ignore[import-untyped]

from shuffle_accountant.numeric import blanket_matrix as bm

LABELS = (0, 1, 2, 3)


def _pair(seed: int) -> tuple[tuple[float, ...], float, float]:
    rng = np.random.default_rng(seed)
    m = rng.dirichlet(np.ones(5) * 2.0)
    return tuple(float(x) for x in m[:4]), float(m[4]), float(np.exp(rng.uniform(0.2, 3.0)))


def _reference_law(p: tuple[float, ...], rest: float, n: int) -> np.ndarray:
    """``P[v, t, u]`` on the full cube (zeros where ``u > t`` or ``v > t``)."""
    p00, p10, p01, p11 = p
    W = n + 1
    t_all = np.arange(W, dtype=float)
    w = np.exp(gammaln(n + 1.0) - gammaln(t_all + 1.0) - gammaln(n - t_all + 1.0) + (n - t_all) * math.log(rest))
    q = np.zeros((1, 1))
    q[0, 0] = 1.0  # Q_t[u, v]
    P = np.zeros((W, W, W))
    for t in range(W):
        P[:t + 1, t, :t + 1] = (q * w[t]).T
        nq = np.zeros((t + 2, t + 2))
        nq[:t + 1, :t + 1] = p00 * q
        nq[1:, :t + 1] += p10 * q
        nq[:t + 1, 1:] += p01 * q
        nq[1:, 1:] += p11 * q
        q = nq
    return P


@pytest.mark.parametrize("n,seed", [(1, 0), (2, 1), (7, 2), (17, 3), (40, 4), (63, 5)])
def test_packed_tables_equal_the_full_construction(n, seed):
    p, rest, _ = _pair(seed)
    tab = bm._tuv_tables(p, rest, 1e-15, n, LABELS)
    assert tab is not None
    W = n + 1
    P = _reference_law(p, rest, n)
    C = np.cumsum(P, axis=0)
    M = np.cumsum(np.arange(W, dtype=float)[:, None, None] * P, axis=0)
    D = np.concatenate((np.zeros((1, W, W)), np.cumsum(C[:-1], axis=0)), axis=0)
    assert tab.C.shape == tab.D.shape == tab.M.shape == (W, W * (W + 1) // 2)
    for t in range(W):
        o = t * (t + 1) // 2
        for name, full, packed in (("C", C, tab.C), ("D", D, tab.D), ("M", M, tab.M)):
            # every row j <= t (the bounds clip j at t), every u <= t
            assert np.array_equal(packed[:t + 1, o:o + t + 1], full[:t + 1, t, :t + 1]), (name, t)


@pytest.mark.parametrize("n,seed", [(5, 10), (24, 11), (41, 12), (70, 13)])
def test_bracket_holds_the_brute_force_sum(n, seed):
    p, rest, E = _pair(seed)
    a, b = (1.0, E, 1.0, E), (1.0, 1.0, E, E)
    tab = bm._tuv_tables(p, rest, 1e-15, n, LABELS)
    assert tab is not None
    P = _reference_law(p, rest, n)
    W = n + 1
    grid = np.arange(W, dtype=float)
    v, t, u = np.meshgrid(grid, grid, grid, indexing="ij")
    for frac in (0.1, 0.4, 0.7, 0.95):
        eps = frac * math.log(E)
        cf = bm._coefficients(a, b, 1e-15, np.asarray(p), rest, 1e-15, eps)
        g = math.exp(eps)
        c00, c10, c01 = 1.0 - g, E - g, 1.0 - g * E
        S = c00 * t + (c10 - c00) * u + (c01 - c00) * v
        exact = math.fsum((P * np.maximum(S, 0.0)).ravel()) / n
        lo, up, slope = bm._tuv_bounds(cf, n, tab, LABELS)
        assert lo <= exact * (1 + 1e-9) and exact <= up * (1 + 1e-9), (frac, lo, exact, up)
        assert up - lo <= 1e-9 * up + 1e-300
        # item 8's slope: at most E[T 1{S > 0}] / n with T = t + (E - 1) v (b = 1, E by y2)
        T = t + (E - 1.0) * v
        assert slope <= math.fsum((P * T * (S > 0)).ravel()) / n * (1 + 1e-9)


# --- the search's trust in the surrogate from 75 expected blanket draws (``TRUST_LATTICE_DRAWS``, lat101) ---


def test_trust_starts_at_75_draws():
    from shuffle_accountant.randomizers import SUE

    assert bm.TRUST_LATTICE_DRAWS == 75.0
    assert bm.BlanketProfile(SUE(10, 0.5), 150).surrogate_rtol == 1e-3  # n gamma = 117 (was untrusted below 200)
    assert bm.BlanketProfile(SUE(10, 2.0), 150).surrogate_rtol is None  # n gamma = 55


@pytest.mark.parametrize("fam,eps0,n,delta", [("SUE", 0.5, 150, 1e-6), ("OUE", 1.0, 200, 1e-9), ("OLH", 2.0, 300, 1e-6),
                                              ("OUE", 3.0, 200, 1e-6), ("OUE", 0.5, 100, 1e-12)])
def test_trusted_search_is_certified_and_meets_the_former(fam, eps0, n, delta, monkeypatch):
    """The trusted search's bracket: delta above the target at its lower end and at most the target at its upper end
    (fresh evaluations at rtol 1e-8), and it meets the bracket of the former search (trust from 200 draws) with the
    upper ends within the search's rtol."""
    from shuffle_accountant import api, randomizers

    rand = getattr(randomizers, fam)(10, eps0)
    assert bm.BlanketProfile(rand, n).surrogate_rtol == 1e-3
    new = api.epsilon(eps0, n, delta, method="blanket", randomizer=rand)
    lo, up = new.details["bracket"]
    prof = bm.BlanketProfile(rand, n)
    assert prof.bounds(lo, 1e-8).lower > delta
    assert prof.bounds(up, 1e-8).upper <= delta
    monkeypatch.setattr(bm, "TRUST_LATTICE_DRAWS", 200.0)
    old = api.epsilon(eps0, n, delta, method="blanket", randomizer=rand)
    a, b = old.details["bracket"]
    assert lo <= b and a <= up
    assert up <= b * (1 + 1e-6)

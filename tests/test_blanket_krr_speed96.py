"""Correctness of the cost-only rewrites of ``shuffle_accountant/numeric/blanket_krr.py`` made for the
cold ``eps(delta)`` speed of issue 10 (helper krr96): each rewrite must give the very numbers of the
formulation it replaced, and the brackets built on them must hold the oracle's exact sum
(``tests/oracle_blanket.py``: mpmath, shares no code with the package).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from shuffle_accountant.numeric import blanket_krr as bk
from shuffle_accountant.numeric.blanket_krr import KrrBlanket, _TotalsWindow
from shuffle_accountant.numeric.profile import DeltaBounds
from shuffle_accountant.numeric.search import epsilon_for_delta

import oracle_blanket as ob


def _holds(b: DeltaBounds, exact: mpmath.mpf, width: float) -> None:
    """The certified bracket ``b`` holds the oracle's exact value and is at most ``width`` wide (relative)."""
    with mpmath.workdps(50):
        assert b.lower <= exact <= b.upper, (b, exact)
    assert math.isfinite(b.upper) and b.upper - b.lower <= width * b.lower


@pytest.mark.parametrize("shape", [(1,), (2,), (7,), (3, 5), (4, 1)])
@pytest.mark.parametrize("shift", [1, -1])
def test_rolled_is_np_roll(shape: tuple[int, ...], shift: int) -> None:
    """``_rolled`` is ``np.roll`` along the last axis (the 1-D calls and the 2-D ``axis=1`` call)."""
    x = np.random.default_rng(1).standard_normal(shape)
    assert np.array_equal(bk._rolled(x, shift), np.roll(x, shift, axis=-1))


@pytest.mark.parametrize("eps", [0.0, 0.05, 0.4, 2.5])
def test_kernel_value_only_is_the_same_value(eps: float) -> None:
    """``_kernel_lines(..., value_only=True)`` returns the value of the full call bit for bit (the surrogate's
    steering tails and Boost's alike), per-request ``eps`` included."""
    rng = np.random.default_rng(7)
    c = np.floor(rng.uniform(0.0, 5e4, 400))
    c[:20] = np.arange(20.0)  # small clone counts (the steering tails' exact branch, k < 1 corner)
    lam = rng.uniform(0.0, 1.0, c.size)
    lam[:5] = (0.0, 1.0, 1e-9, 0.5, 1.0 - 1e-12)
    d = 0.23
    for tail, pmf in ((bk.bn.sf, bk.bn.pmf), (bk._steering_sf, bk._steering_pmf)):
        for e in (eps, np.full(c.size, eps) + rng.uniform(0.0, 0.01, c.size)):
            full = bk._kernel_lines(c, lam, d, e, 1e-12, tail, pmf)
            only = bk._kernel_lines(c, lam, d, e, 1e-12, tail, pmf, value_only=True)
            assert np.array_equal(full[0], only[0])


def test_boundary_masses_end_entries() -> None:
    """The two entries ``_boundary_masses`` appends to each field are the exact values of a piece with no
    boundary on its right / left (the constants the evaluation's ``np.where`` used), after the boundaries."""
    w = _TotalsWindow(500, 3, 1.0)
    t = np.repeat(w.t[:3], 2)
    y = np.tile(np.array([w.ja[0] + 1.0, w.ja[0] + 3.0]), 3)
    bm = w._boundary_masses(t, y)
    for f, v in bm.items():
        assert v.size == t.size + 2
        assert tuple(v[-2:]) == w._MASS_ENDS[f[:-1]]
    assert tuple(bm["Fc"][-2:]) == (1.0, 0.0) and tuple(bm["Gs"][-2:]) == (0.0, 1.0)
    # the boundaries themselves: F + G = 1 within their error bounds
    for br in ("c", "s"):
        F, G, e = bm["F" + br][:-2], bm["G" + br][:-2], bm["eF" + br][:-2] + bm["eG" + br][:-2]
        assert np.all(np.abs(F + G - 1.0) <= e + 4e-16)


@pytest.mark.parametrize("n, k, eps0, eps", [(12, 3, 1.0, 0.3), (45, 5, 0.7, 0.15), (60, 3, 3.0, 1.0),
                                             (80, 10, 2.0, 0.5)])
def test_window_and_search_hold_the_oracle(n: int, k: int, eps0: float, eps: float) -> None:
    """The window's bracket (its piece masses from the end entries, the engine's rolled arrays) holds the
    oracle's exact trinomial sum and closes to rounding; the eps(delta) search steered by the value-only
    surrogate returns a bracket whose ends straddle the oracle's delta."""
    exact = ob.blanket_delta_krr_formula(n, k, eps0, eps)
    window = _TotalsWindow(n, k, eps0)
    assert window.applies
    _holds(window.bounds(eps, 1e-9), exact, 1e-9)
    delta = float(exact)
    bk._BACKENDS.clear()
    r = epsilon_for_delta(KrrBlanket(n, k, eps0), delta, 1e-6)
    assert r.lower <= r.upper <= r.lower * (1.0 + 1e-6) + 1e-300
    with mpmath.workdps(50):
        assert ob.blanket_delta_krr_formula(n, k, eps0, r.upper) <= delta * (1.0 + 1e-12)
        if r.lower > 0.0:
            assert ob.blanket_delta_krr_formula(n, k, eps0, r.lower) >= delta * (1.0 - 1e-12)


@pytest.mark.parametrize("n, k, eps0, eps", [(40, 3, 1.0, 0.2), (70, 4, 2.0, 0.6)])
def test_engine_alone_holds_the_oracle(n: int, k: int, eps0: float, eps: float) -> None:
    """The block engine (its assembly's rolled neighbours) alone brackets the oracle's exact sum."""
    exact = ob.blanket_delta_krr_formula(n, k, eps0, eps)
    _holds(bk._Engine(bk.blanket_model(n, k, eps0)).bounds(eps, 1e-7), exact, 1e-6)


@pytest.mark.parametrize("runs", [False, True])
def test_hinges_whole_arrays_equal_masked_path(runs: bool) -> None:
    """``_hinges`` with every size positive (whole arrays, no masked copies) gives the numbers of its masked
    path: the same requests with a size-0 request added (which takes the masked path) agree bit for bit on
    them, and the size-0 request gets its exact values."""
    rng = np.random.default_rng(3)
    m = np.floor(rng.uniform(2.0, 2e6, 300))
    rho = 0.37
    x = np.clip(np.floor(m * rho + rng.normal(0.0, 3.0, m.size) * np.sqrt(m * rho * (1.0 - rho))), 0.0, m)
    x[:3] = (0.0, 1.0, m[2])
    whole = bk._hinges(m, x, rho, runs=runs)
    masked = bk._hinges(np.append(m, 0.0), np.append(x, 2.0), rho, runs=runs)
    for f in ("fp", "fm", "ge", "lt", "le", "gt", "e_fp", "e_fm", "e_ge", "e_lt", "e_le", "e_gt", "pm1"):
        assert np.array_equal(getattr(masked, f)[:-1], getattr(whole, f)), f
    assert (masked.fp[-1], masked.fm[-1], masked.ge[-1], masked.lt[-1]) == (0.0, 2.0, 0.0, 1.0)


@pytest.mark.parametrize("n, k, eps0", [(3, 3, 1.0), (50, 4, 0.5), (1000, 3, 1.0), (3000, 10, 2.0), (200, 100, 8.0)])
def test_window_mass_below_one_call(n: int, k: int, eps0: float) -> None:
    """The window's bound on the mass of the totals below it comes from one call for both branches; each
    value is the one a call of its own gives, and the mass is at least the oracle-free exact sum of the
    binomial pmf over those totals (mpmath)."""
    w = _TotalsWindow(n, k, eps0)
    assert w.applies
    t_lo = w.t_range[0]
    if t_lo <= 1:
        assert w.mass_below == 0.0
        return
    N, q2, p0 = n - 1, w.q2, w.p0
    m_c, e_c = bk.bn.interval_mass(np.array([0.0]), np.array([t_lo - 2.0]), N, q2)
    m_s, e_s = bk.bn.interval_mass(np.array([1.0]), np.array([t_lo - 1.0]), N, q2)
    ref = ((1.0 - p0) * float(m_c[0] + e_c[0]) + p0 * float(m_s[0] + e_s[0])) * (1.0 + 8.0 * bk._U) + 1e-300
    assert w.mass_below == ref
    with mpmath.workdps(40):
        qq = mpmath.mpf(q2)
        pmf = [mpmath.binomial(N, c) * qq**c * (1 - qq) ** (N - c) for c in range(t_lo)]
        exact = (1 - mpmath.mpf(p0)) * mpmath.fsum(pmf[: t_lo - 1]) + mpmath.mpf(p0) * mpmath.fsum(pmf[1:t_lo])
        assert exact <= w.mass_below

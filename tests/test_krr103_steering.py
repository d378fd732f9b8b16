"""krr103 (issue 10 speed): the k-RR blanket's search steering where the kink chains answer.

:func:`.krr_chains.saddle_estimate` (the start estimate there, ``KrrBlanket.mixture_surrogate``) against a brute-force sum of the trinomial form and
against the certified ``eps(delta)``; the steering properties (``look_rtol``, ``surrogate_rtol``) no longer build the
window of single totals; eps(delta) steered this way still agrees with the other routes' certified answer. The
estimate only steers: every bracket is certified by the existing arguments (tests/test_krr102_chains.py).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import gammaln

from shuffle_accountant.numeric import blanket_krr
from shuffle_accountant.numeric.blanket_krr import KrrBlanket
from shuffle_accountant.numeric.krr_chains import saddle_estimate
from shuffle_accountant.numeric.search import _surrogate_root, epsilon_for_delta


def trinomial_sum(n: int, k: int, eps0: float, eps: float) -> float:
    """(1/n) E[((E - g) A - (E g - 1) B - (g - 1) O)_+] over (A, B, O) ~ Mult(n; q, q, (k-2) q), every term (float64:
    an oracle for an estimate, not for a bound)."""
    E, g = math.exp(eps0), math.exp(eps)
    q = 1.0 / (E + k - 1.0)
    lp = np.log([q, q, (k - 2) * q, (E - 1.0) * q])
    a = np.arange(n + 1)[:, None, None]
    b = np.arange(n + 1)[None, :, None]
    o = np.arange(n + 1)[None, None, :]
    r = n - a - b - o
    s = (E - g) * a - (E * g - 1.0) * b - (g - 1.0) * o
    rr = np.maximum(r, 0)
    logp = gammaln(n + 1) - gammaln(a + 1) - gammaln(b + 1) - gammaln(o + 1) - gammaln(rr + 1)
    logp = logp + a * lp[0] + b * lp[1] + o * lp[2] + rr * lp[3]
    return float(np.sum(np.where((r >= 0) & (s > 0), np.exp(logp) * s, 0.0))) / n


@pytest.mark.parametrize("k,eps0,tol", [(3, 1.0, 1e-3), (4, 0.5, 5e-3), (10, 2.0, 1e-2), (100, 1.0, 0.5)])
def test_saddle_estimate_against_the_sum(k: int, eps0: float, tol: float) -> None:
    """At n = 150 (measured: 1e-5 .. 3e-4 relative at k = 3, up to 4e-3 at k = 4 / 10 near eps0, 0.2 at k = 100)."""
    n = 150
    fr = np.array([0.1, 0.3, 0.6, 0.9])
    est = saddle_estimate(n, k, eps0, fr * eps0)
    for f, e in zip(fr, est):
        exact = trinomial_sum(n, k, eps0, f * eps0)
        assert abs(e / exact - 1.0) <= tol, (k, eps0, f, e, exact)


def test_saddle_estimate_edges() -> None:
    """0 at and above eps0 (delta = 0 there) and at eps = 0 not below the total variation's order; finite and
    non-negative on the search's whole grid (ten points a decade, eight decades below eps0)."""
    eps = 2.0 * np.logspace(-8.0, 0.0, 81)
    est = saddle_estimate(10**4, 3, 2.0, np.append(eps, [2.5, 3.0]))
    assert np.all(np.isfinite(est)) and np.all(est >= 0.0)
    assert est[-3] == 0.0 and est[-2] == 0.0 and est[-1] == 0.0
    assert np.all(np.diff(est[:-3]) <= 0.0)  # non-increasing in eps, as delta is
    assert est[0] > 1e-3


@pytest.mark.parametrize(
    "n,k,eps0,delta,tol",
    [(1000, 3, 1.0, 1e-6, 2e-6), (10**4, 10, 2.0, 1e-6, 2e-6), (10**5, 3, 1.0, 1e-9, 1e-6), (10**6, 4, 3.0, 1e-12, 1e-6)],
)
def test_start_close_to_certified_root(n: int, k: int, eps0: float, delta: float, tol: float) -> None:
    """The search's start (the estimate's root) within ``tol`` of the certified eps(delta) (measured 1e-7 .. 2.3e-6)."""
    blanket_krr._BACKENDS.clear()
    prof = KrrBlanket(n, k, eps0, shared=False)
    assert prof._backend is not None and prof._backend.use_chains and prof.mixture_surrogate is not None
    start = _surrogate_root(prof, delta, 0.0, eps0, 1e-6)
    assert start is not None and start[1] < 0.0
    got = epsilon_for_delta(prof, delta, 1e-7)
    assert abs(start[0] / got.upper - 1.0) <= tol, (start, got)


@pytest.mark.parametrize("trust", [False, True])
def test_steering_builds_no_window(trust: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """A query the chains answer builds neither the window nor the central window (look_rtol and surrogate_rtol
    decide without them); with the start trusted (``CHAINS_TRUST_START``) it closes in at most two evaluations
    (n = 1e4, k = 3, eps0 = 1: 1, was 3)."""
    monkeypatch.setattr(blanket_krr, "CHAINS_TRUST_START", trust)
    blanket_krr._BACKENDS.clear()
    prof = KrrBlanket(10**4, 3, 1.0)
    assert prof.surrogate_rtol == (blanket_krr.CHAINS_SURROGATE_RTOL if trust else None)
    got = epsilon_for_delta(prof, 1e-6, 1e-6)
    be = prof._backend
    assert be is not None and be._chains is not None and be.answered == (be._chains,)
    assert be._window is None and be._core is None and be._lines is None
    assert got.evaluations <= (2 if trust else 3)


@pytest.mark.parametrize("n,k,eps0", [(1000, 3, 1.0), (10**5, 3, 1.0), (10**5, 100, 4.0), (10**7, 10, 2.0)])
def test_has_window_agrees_with_window(n: int, k: int, eps0: float, monkeypatch: pytest.MonkeyPatch) -> None:
    """``_has_window`` is ``_window() is not None`` (with and without the chains), before and after a query."""
    for min_k in (3, 10**9):
        monkeypatch.setattr(blanket_krr, "CHAINS_MIN_K", min_k)
        prof = KrrBlanket(n, k, eps0, shared=False)
        before = prof._has_window()
        look, trust = prof.look_rtol, prof.surrogate_rtol
        assert before == (prof._window() is not None)
        prof.bounds(0.5 * eps0 if n < 10**6 else 0.05 * eps0, 1e-6)
        assert prof._has_window() == (prof._window() is not None)
        assert look == (1e-4 if before else 1e-2)
        assert trust == (1e-4 if not before or n >= blanket_krr.SURROGATE_TRUST_N else None)


@pytest.mark.parametrize("n,k,eps0,delta", [(300, 3, 1.0, 1e-3), (1000, 10, 2.0, 1e-12), (3000, 4, 3.0, 1e-9), (10**4, 100, 1.0, 1e-6), (10**6, 3, 0.5, 1e-6)])
@pytest.mark.parametrize("trust", [False, True])
def test_epsilon_agrees_with_other_routes(n: int, k: int, eps0: float, delta: float, trust: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """eps(delta) steered by the estimate (start trusted or not) overlaps the window / split routes' certified
    bracket, within rtol."""
    rtol = 1e-6
    monkeypatch.setattr(blanket_krr, "CHAINS_TRUST_START", trust)
    blanket_krr._BACKENDS.clear()
    new = epsilon_for_delta(KrrBlanket(n, k, eps0, shared=False), delta, rtol)
    with monkeypatch.context() as mp:
        mp.setattr(blanket_krr, "CHAINS_MAX_N", 0)
        old = epsilon_for_delta(KrrBlanket(n, k, eps0, shared=False), delta, rtol)
    assert new.lower <= old.upper and old.lower <= new.upper, (new, old)
    assert abs(new.upper / old.upper - 1.0) <= rtol


def test_mixture_surrogate_only_where_the_chains_answer() -> None:
    """The saddle-point start is offered where the chains answer, not elsewhere (eps0 = 5: e^eps0 + 2 > MAX_J; n
    beyond CHAINS_MAX_N (1e7); k = 2), and equals saddle_estimate there; surrogate itself is unchanged."""
    prof = KrrBlanket(10**4, 3, 1.0, shared=False)
    est = prof.mixture_surrogate
    assert est is not None
    eps = np.array([0.01, 0.03, 0.1])
    assert np.array_equal(est(eps), saddle_estimate(10**4, 3, 1.0, eps))
    for n, k, eps0 in ((10**4, 3, 5.0), (10**8, 3, 1.0), (10**4, 2, 1.0)):
        other = KrrBlanket(n, k, eps0, shared=False)
        assert getattr(other, "mixture_surrogate", None) is None, (n, k, eps0)

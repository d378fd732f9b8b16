"""krr102: the kink-chains route of the k-RR blanket (shuffle_accountant/numeric/krr_chains.py).

* its bracket contains an independent mpmath brute-force sum of the trinomial form (written here, no code
  shared with the route);
* it overlaps the other routes' bracket (the window / split / block engine, with the chains switched off) on a
  grid of n, k, eps0, eps; the upper end is never below their lower end and vice versa;
* eps(delta) through KrrBlanket (chains first) is within rtol of the other routes' answer;
* lower_at (tangent in e^eps) stays below the bracket of a fresh evaluation.
"""

from __future__ import annotations

import mpmath
import pytest

from shuffle_accountant.numeric import blanket_krr
from shuffle_accountant.numeric.blanket_krr import KrrBlanket
from shuffle_accountant.numeric.krr_chains import KrrChains
from shuffle_accountant.numeric.search import epsilon_for_delta


def brute_delta(n: int, k: int, eps0: float, eps: float) -> mpmath.mpf:
    """(1/n) E[((E - g) A - (E g - 1) B - (g - 1) O)_+], (A, B, O) ~ Mult(n; q, q, (k-2) q), E = e^eps0
    exactly (40 digits), every term summed."""
    with mpmath.workdps(40):
        E, g = mpmath.exp(mpmath.mpf(eps0)), mpmath.exp(mpmath.mpf(eps))
        q = 1 / (E + k - 1)
        probs = (q, q, (k - 2) * q, 1 - k * q)
        lf = [mpmath.loggamma(i + 1) for i in range(n + 1)]
        total = mpmath.mpf(0)
        for a in range(n + 1):
            for b in range(n + 1 - a):
                for o in range(n + 1 - a - b):
                    s = (E - g) * a - (E * g - 1) * b - (g - 1) * o
                    if s <= 0:
                        break
                    r = n - a - b - o
                    logp = lf[n] - lf[a] - lf[b] - lf[o] - lf[r]
                    for cnt, p in zip((a, b, o, r), probs):
                        if cnt:
                            logp += cnt * mpmath.log(p)
                    total += mpmath.exp(logp) * s
        return total / n


@pytest.mark.parametrize("n,k,eps0", [(12, 3, 1.0), (25, 3, 0.5), (25, 5, 2.0), (40, 4, 1.0), (40, 10, 2.0), (60, 3, 2.0), (60, 6, 0.7), (33, 3, 3.0)])
def test_chains_bracket_contains_brute_force(n: int, k: int, eps0: float) -> None:
    ch = KrrChains(n, k, eps0)
    answered = 0
    for frac in (0.03, 0.2, 0.5, 0.8):
        eps = frac * eps0
        b = ch.bounds(eps, 1e-3)
        if b is None:
            continue
        answered += 1
        exact = brute_delta(n, k, eps0, eps)
        # the upper end is for e^eps0 moved up (delta non-decreasing in it): >= the exact value at e^eps0
        assert b.upper >= exact, (n, k, eps0, eps, b, exact)
        # the lower end brackets the float law at r' >= e^eps0 (within ~1e-13 relative of the exact one)
        assert b.lower <= exact * (1 + 1e-9) + 1e-300, (n, k, eps0, eps, b, exact)
    assert answered >= 2


def test_chains_tight_where_it_answers_small_n() -> None:
    """At n = 60, k = 3, eps0 = 2 the bracket is converged and within 1e-7 of the brute force."""
    b = KrrChains(60, 3, 2.0).bounds(0.6, 1e-6)
    assert b is not None and b.converged
    exact = float(brute_delta(60, 3, 2.0, 0.6))
    assert abs(b.upper / exact - 1) < 1e-7 and abs(b.lower / exact - 1) < 1e-7


def old_bounds(n: int, k: int, eps0: float, eps: float, rtol: float, monkeypatch: pytest.MonkeyPatch):
    with monkeypatch.context() as mp:
        mp.setattr(blanket_krr, "CHAINS_MAX_N", 0)
        return KrrBlanket(n, k, eps0, shared=False).bounds(eps, rtol)


GRID = [(n, k, e0) for n in (100, 1000, 10**4, 10**5, 10**6) for k in (3, 10, 100) for e0 in (0.5, 1.0, 2.0, 4.0)]


@pytest.mark.parametrize("n,k,eps0", GRID)
def test_chains_overlap_other_routes(n: int, k: int, eps0: float, monkeypatch: pytest.MonkeyPatch) -> None:
    ch = KrrChains(n, k, eps0)
    # eps where delta is around 1e-4 .. 1e-9: from the other routes' eps(delta)
    with monkeypatch.context() as mp:
        mp.setattr(blanket_krr, "CHAINS_MAX_N", 0)
        epss = [epsilon_for_delta(KrrBlanket(n, k, eps0, shared=False), d, 1e-4).upper for d in (1e-4, 1e-6, 1e-9)]
    for eps in epss:
        if not 0.0 < eps < eps0:
            continue
        new = ch.bounds(eps, 1e-7)
        if new is None:
            continue
        old = old_bounds(n, k, eps0, eps, 1e-7, monkeypatch)
        assert new.upper >= old.lower and old.upper >= new.lower, (n, k, eps0, eps, new, old)
        if new.converged and old.converged:
            assert abs(new.upper / old.upper - 1.0) < 1e-6


@pytest.mark.parametrize(
    "n,k,eps0,delta",
    [
        (1000, 3, 1.0, 1e-6),
        (3000, 10, 2.0, 1e-6),
        (10**4, 5, 1.0, 1e-6),
        (10**4, 100, 0.5, 1e-9),
        (10**5, 10, 2.0, 1e-6),
        (10**5, 3, 0.5, 1e-9),
        (10**6, 3, 1.0, 1e-6),
        (10**6, 10, 2.0, 1e-9),
    ],
)
def test_epsilon_for_delta_matches_other_routes(n: int, k: int, eps0: float, delta: float, monkeypatch: pytest.MonkeyPatch) -> None:
    rtol = 1e-6
    blanket_krr._BACKENDS.clear()
    monkeypatch.setattr(blanket_krr, "CHAINS_MIN_K", 3)  # (k = 3 too: off by default, see CHAINS_MIN_K)
    new = epsilon_for_delta(KrrBlanket(n, k, eps0), delta, rtol)
    backend = blanket_krr._BACKENDS[(n, k, eps0)]
    assert isinstance(backend, blanket_krr._BlanketBackend)
    assert backend._chains is not None  # the chains route was asked
    with monkeypatch.context() as mp:
        mp.setattr(blanket_krr, "CHAINS_MAX_N", 0)
        old = epsilon_for_delta(KrrBlanket(n, k, eps0, shared=False), delta, rtol)
    assert new.lower <= old.upper and old.lower <= new.upper
    assert abs(new.upper / old.upper - 1.0) <= rtol


@pytest.mark.parametrize("n,k,eps0", [(2000, 3, 1.0), (10**5, 10, 2.0), (3 * 10**5, 100, 0.5)])
def test_lower_at_below_fresh_brackets(n: int, k: int, eps0: float) -> None:
    ch = KrrChains(n, k, eps0)
    eps = KrrChains(n, k, eps0)  # (a second object for the fresh brackets)
    e_l = epsilon_for_delta(KrrBlanket(n, k, eps0, shared=False), 1e-6, 1e-4).upper
    b = ch.bounds(e_l, 1e-7)
    assert b is not None and b.converged
    assert ch.lower_at(e_l) <= b.lower * (1 + 1e-12)
    assert ch.lower_at(e_l * 1.01) == 0.0  # (only below the evaluated eps)
    for f in (1e-6, 1e-4, 1e-2, 0.2):
        e = e_l * (1.0 - f)
        fresh = eps.bounds(e, 1e-7)
        assert fresh is not None
        assert ch.lower_at(e) <= fresh.upper, (f, ch.lower_at(e), fresh)
    # within rtol-sized steps the tangent is nearly exact
    e = e_l * (1.0 - 1e-6)
    fresh = eps.bounds(e, 1e-7)
    assert fresh is not None and ch.lower_at(e) >= fresh.lower * (1.0 - 1e-7)


@pytest.mark.parametrize("min_k", [3, 10**9])
def test_chains_answer_by_default_from_k_3(min_k: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The route hook: at k = 3 and 10 the chains answer (the backend's last parts); with CHAINS_MIN_K above k the
    window does."""
    from shuffle_accountant.numeric import blanket_krr

    assert blanket_krr.CHAINS_MIN_K == 3
    monkeypatch.setattr(blanket_krr, "CHAINS_MIN_K", min_k)
    for k in (10, 3):
        answers = k >= min_k
        prof = KrrBlanket(10**4, k, 2.0, shared=False)
        b = prof.bounds(0.08, 1e-6)
        be = prof._backend
        assert be is not None and b.converged
        assert (be._chains is not None and be.answered[:1] == (be._chains,)) is answers
        if answers:
            assert b.blocks > 0 and prof.lower_at is not None and 0.0 < prof.lower_at(0.0799) and prof.lower_at(0.081) == 0.0

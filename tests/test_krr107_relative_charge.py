"""krr107 (issue 10): the kink chains' charge for evaluating at g = fl(e^eps) instead of e^eps is relative (krr_chains
module docstring §4): ``2 u g`` times a certified upper bound on ``M(g_lo) / n = |d delta / dg|`` at ``g_lo = g (1 - 2u)``
(before, ``2 u g`` times the full mean of ``(A + E B + O) / n``, an absolute floor of ~2.4e-16). Checked against an
independent 40-digit oracle of the float law's ``delta(g)`` and ``M(g)`` (full sums over ``(A, B)`` with the exact
Binomial hinge of ``O``; it shares only the law's three floats ``E``, ``q2``, ``rho`` with the package): the forced
brackets (widest bands) contain ``delta(e^eps)``, the recorded charge covers ``2 u g M(g_lo) / n`` (it fails if the
charge were dropped or too small), ``lower_at`` (whose shift is relative too, §5) stays below the oracle, and the charge
is far below the old absolute one."""

from __future__ import annotations

import math
from functools import lru_cache

import mpmath as mp
import pytest

from shuffle_accountant.numeric.krr_chains import Z_O, Z_T, KrrChains

DPS = 40


@lru_cache(maxsize=None)
def _tables(n: int, E: float, q2: float, rho: float) -> tuple[dict, dict]:
    """Per m: prefix sums ``F_m(x) = P[Bin(m, rho) <= x]`` and ``Σ_{o <= x} o P(o)``; per ``(a, b)``: the trinomial
    weight ``n! / (a! b! m!) (q2/2)^(a+b) (1-q2)^m``."""
    with mp.workdps(DPS):
        r = mp.mpf(rho) / (1 - mp.mpf(rho))
        pref = {}
        for m in range(n + 1):
            p = (1 - mp.mpf(rho)) ** m
            F, Mo, f, mo = [], [], mp.mpf(0), mp.mpf(0)
            for o in range(m + 1):
                f += p
                mo += o * p
                F.append(f)
                Mo.append(mo)
                p = p * (m - o) * r / (o + 1)
            pref[m] = (F, Mo)
        lf = [mp.mpf(0)]
        for i in range(1, n + 1):
            lf.append(lf[-1] + mp.log(i))
        lqa, l1 = mp.log(mp.mpf(q2) / 2), mp.log(1 - mp.mpf(q2))
        W = {}
        for a in range(n + 1):
            for b in range(n + 1 - a):
                m = n - a - b
                W[a, b] = mp.exp(lf[n] - lf[a] - lf[b] - lf[m] + (a + b) * lqa + m * l1)
    return pref, W


def _oracle(n: int, E: float, q2: float, rho: float, gs: list[mp.mpf]) -> list[tuple[mp.mpf, mp.mpf]]:
    """``(delta(g), M(g) / n)`` of the float law at each ``g``: ``delta = E[((E - g) A - (E g - 1) B - (g - 1) O)_+] / n``
    and ``M = E[(A + E B + O) 1{S > 0}]``, summed over every ``(a, b)`` and ``o < c / (g - 1)``."""
    pref, W = _tables(n, E, q2, rho)
    with mp.workdps(DPS):
        Em = mp.mpf(E)
        acc = [[mp.mpf(0), mp.mpf(0)] for _ in gs]
        for (a, b), w in W.items():
            m = n - a - b
            F, Mo = pref[m]
            for i, g in enumerate(gs):
                c = (Em - g) * a - (Em * g - 1) * b
                if c <= 0:
                    continue
                G = g - 1
                x = min(int(mp.ceil(c / G)) - 1, m)  # the largest o with c - G o > 0
                acc[i][0] += w * (c * F[x] - G * Mo[x])
                acc[i][1] += w * ((a + Em * b) * F[x] + Mo[x])
        return [(d / n, M / n) for d, M in acc]


# (n, k, eps0, eps at delta ~ 1e-9, 1e-12, 1e-14); k = 10's eps are above log 2 (g > 2: the rounded g - 1)
CASES = [
    (300, 3, 1.0, (0.33902059834928217, 0.41139463375511653, 0.4534745778528938)),
    (400, 10, 2.0, (0.5909394728161781, 0.7069928792221584, 0.7727167948223345)),
]


@pytest.mark.parametrize("n,k,eps0,epss", CASES)
def test_relative_charge_against_oracle(n: int, k: int, eps0: float, epss: tuple[float, ...]) -> None:
    ch = KrrChains(n, k, eps0)
    u = 2.0**-53
    for eps in epss:
        got = ch.evaluate(eps, Z_T, Z_O)
        assert got is not None
        lower, upper, _ = got
        g = math.exp(eps)
        with mp.workdps(DPS):
            (d_exact, _), (_, m_lo) = _oracle(n, ch.E, ch.q2, ch.rho, [mp.exp(mp.mpf(eps)), mp.mpf(g) * (1 - 2 * mp.mpf(u))])
            assert 1e-15 < d_exact < 2e-9
            assert lower <= d_exact <= upper, (eps, lower, float(d_exact), upper)
            # the charge covers |delta(e^eps) - delta(g)| <= |e^eps - g| M(g_lo) / n for every |e^eps - g| <= 2u g
            need = 2 * mp.mpf(u) * mp.mpf(g) * m_lo
            assert ch.last_charge >= need, (eps, ch.last_charge, float(need))
            assert ch.last_charge <= 1e-6 * 2.0 * 1.2e-16 * g * ch.dsdg  # (the relative route, not the fallback)
            assert ch.last_charge <= 1e3 * float(need)  # (not needlessly loose)


@pytest.mark.parametrize("n,k,eps0,epss", CASES)
def test_lower_at_below_oracle(n: int, k: int, eps0: float, epss: tuple[float, ...]) -> None:
    """``lower_at`` after an evaluation at the 1e-12 point: below the oracle at a lower eps (the tangent taken at the
    exact e^eps, its shift 2u g times the lower bound on M) and at the evaluated eps itself (the fallback)."""
    ch = KrrChains(n, k, eps0)
    e0 = epss[1]
    assert ch.evaluate(e0, Z_T, Z_O) is not None
    epss_at = (e0 * 0.999, e0 * (1.0 - 1e-12), e0)
    with mp.workdps(DPS):
        exact = _oracle(n, ch.E, ch.q2, ch.rho, [mp.exp(mp.mpf(eps)) for eps in epss_at])
    for eps, (d_exact, _) in zip(epss_at, exact):
        low = ch.lower_at(eps)
        assert low <= d_exact, (eps, low, float(d_exact))
        assert low > 0.5 * float(d_exact)


@pytest.mark.parametrize("n,k,eps0", [(10**8, 100, 1.0), (10**6, 3, 1.0)])
def test_chains_answer_at_1e_12_and_decline_at_1e_14(n: int, k: int, eps0: float, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the relative charge the chains' bracket closes at delta = 1e-12, rtol 1e-6 (before krr107 they declined
    there, review rev105k): eps(1e-12) is answered by them and overlaps the answer without them, upper ends within rtol.
    At 1e-14 (n = 1e6) the widest bands' neglected parts are more than rtol delta: they decline without an evaluation
    (cost only)."""
    from shuffle_accountant.numeric import blanket_krr
    from shuffle_accountant.numeric.blanket_krr import KrrBlanket
    from shuffle_accountant.numeric.search import epsilon_for_delta

    prof = KrrBlanket(n, k, eps0, shared=False)
    got = epsilon_for_delta(prof, 1e-12, 1e-6)
    be = prof._backend
    assert be is not None and any(isinstance(p, KrrChains) for p in be.answered)
    with monkeypatch.context() as mpatch:
        mpatch.setattr(blanket_krr, "CHAINS_MAX_N", 0)  # (no chains at all)
        ref = epsilon_for_delta(KrrBlanket(n, k, eps0, shared=False), 1e-12, 1e-6)
    assert got.lower <= ref.upper and ref.lower <= got.upper
    assert abs(got.upper / ref.upper - 1.0) <= 1e-6
    if n == 10**6:
        prof14 = KrrBlanket(n, k, eps0, shared=False)
        epsilon_for_delta(prof14, 1e-14, 1e-6)
        be14 = prof14._backend
        assert be14 is not None and be14._chains is not None  # (asked, and declined before evaluating)
        assert math.isnan(be14._chains.last_charge) and be14._chains.last_cells == 0

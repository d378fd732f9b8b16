"""The k-RR blanket's upper ends hold for the *exact* ``e^ε0`` (issue 10; ``blanket_krr`` module
docstring §7): the constants of the upper-bound engines (``r' >= e^ε0``, ``κ`` and the float masses'
implied ``κ`` at most ``2/(r' + 1)``), the change-of-measure charge (H) and the ``k = 2`` pair's rate.

Independent references: 50-digit ``mpmath`` values of ``e^ε0`` and of the constants, a 50-digit sum of
module docstring §2's mixture written here (shares no code with the package), and
``tests/oracle_blanket.py``'s trinomial sum (spec blanket.md §3).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shuffle_accountant.numeric import blanket_krr as bk
from shuffle_accountant.numeric.blanket_krr import KrrBlanket, PairKrrBlanket, upper_constants

import oracle_blanket as ob

mpf = mpmath.mpf

#: eps0 (3 decimals) at which 2/(fl(exp(eps0)) + 1) lies *above* 2/(e^eps0 + 1): the old engines' kappa
#: was on the unfavourable side there (found by a scan against 50-digit values)
KAPPA_UP = [13.567, 12.232, 10.443, 7.154, 0.538, 0.456, 3.505, 6.783, 3.015, 1.978]


def _exact_e0(eps0: float) -> mpmath.mpf:
    return mpmath.exp(mpf(eps0))


@pytest.mark.parametrize("eps0", KAPPA_UP)
@pytest.mark.parametrize("k", [3, 10, 100])
def test_engine_kappa_and_implied_kappa_at_most_exact(eps0: float, k: int) -> None:
    """The block engine's kappa and the kappa the windows' float masses imply are at most
    2/(e^eps0 + 1) at the exact eps0 (fails before: fl(2/(fl(exp) + 1)) above it at these eps0)."""
    with mpmath.workdps(50):
        kap = 2 / (_exact_e0(eps0) + 1)
        model = bk.blanket_model(1000, k, eps0)
        assert mpf(model.kappa) <= kap
        win = bk._TotalsWindow(1000, k, eps0)
        assert mpf(win.kappa) <= kap
        # the lambda the windows' sums use: Pr[counted | t, j] of the float masses
        w1, w0 = mpf(1.0 - win.p0), mpf(win.p0)
        q2, rho = mpf(win.q2), mpf(win.rho)
        implied = (w0 / w1) * q2 / ((1 - q2) * rho)
        assert implied <= kap
        assert abs(implied / mpf(win.kappa) - 1) <= 8 * 2.0**-53  # within the windows' 16u slack


@settings(max_examples=60, deadline=None)
@given(eps0=st.floats(1e-6, 700.0), k=st.one_of(st.integers(3, 10**9), st.floats(2.0001, 1e6)))
def test_upper_constants_rational(eps0: float, k: float) -> None:
    """r' >= e^eps0 (50 digits), kappa and the implied kappa <= 2/(r' + 1) (exact rationals), and the
    charge's data at least their 50-digit values recomputed here from the floats."""
    c = upper_constants(10**6, k, eps0)
    with mpmath.workdps(80 + int(eps0 / 2.3)):  # (1 - q2 with q2 ~ e^-eps0 held exactly)
        assert mpf(c.e0) >= _exact_e0(eps0)
        E = Fraction(c.e0)
        kap = 2 / (E + 1)
        assert Fraction(c.kappa) <= kap
        q2, rho, p0 = Fraction(2.0 * c.q), Fraction(c.rho), Fraction(c.p0)
        w1 = Fraction(1.0 - c.p0)
        assert p0 * q2 <= kap * w1 * (1 - q2) * rho
        # the charge data from the floats, in mpmath (independent of the package's Fraction code)
        e, kk = mpf(c.e0), mpf(k)
        qx = 1 / (e + kk - 1)
        fq2, frho = mpf(2.0 * c.q), mpf(c.rho)
        fl_cls = [fq2, (1 - fq2) * frho, (1 - fq2) * (1 - frho)]
        ex_cls = [2 * qx, (kk - 2) * qx, (e - 1) * qx]
        if min(fl_cls) <= 0:
            assert math.isinf(c.a_up)
            return
        xs = [x / f - 1 for x, f in zip(ex_cls, fl_cls)]
        if max(abs(v) for v in xs) > 1e-3:
            assert math.isinf(c.a_up)
            return
        chi = sum(f * v * v for f, v in zip(fl_cls, xs))
        assert mpf(c.a_up) >= (10**6 - 1) * chi * (1 - mpf(10) ** -40)
        assert mpf(c.x_up) >= max(abs(v) for v in xs)
        first = max((e + 1) * qx / mpf(1.0 - c.p0), (kk - 2) * qx / mpf(c.p0))
        assert mpf(c.first_up) >= first
        assert mpf(c.first_mass) >= mpf(1.0 - c.p0) + mpf(c.p0)


def _mixture(n: int, q2: mpf, rho: mpf, w1: mpf, w0: mpf, kappa: mpf, d: mpf, eps: float) -> mpf:
    """Module docstring §2's sum, written out: E[h(T - 1, T/(T + kappa J))] over the first user's branch
    (w1 counted, w0 silent) and the others' clone count C ~ Bin(n-1, q2), J' | C ~ Bin(n-1-C, rho); h
    the hockey-stick of the first user (1/2 +- lam d) plus t - 1 fair clones, summed over every count."""
    g = mpmath.exp(mpf(eps))
    N = n - 1
    total = mpf(0)
    for c in range(N + 1):
        pc = mpmath.binomial(N, c) * q2**c * (1 - q2) ** (N - c)
        m = N - c
        for jp in range(m + 1):
            pj = mpmath.binomial(m, jp) * rho**jp * (1 - rho) ** (m - jp)
            for w, t, j in ((w1, c + 1, jp), (w0, c, jp + 1)):
                if t < 1:
                    continue
                lam = mpf(t) / (t + kappa * j)
                u, v = mpf(1) / 2 + lam * d, mpf(1) / 2 - lam * d
                cc = t - 1
                h = mpf(0)
                for a in range(cc + 2):
                    b1 = mpmath.binomial(cc, a - 1) / mpf(2) ** cc if a >= 1 else mpf(0)
                    b0 = mpmath.binomial(cc, a) / mpf(2) ** cc if a <= cc else mpf(0)
                    h += max(u * b1 + v * b0 - g * (v * b1 + u * b0), 0)
                total += w * pc * pj * h
    return total


def _exact_law(e: mpf, k: mpf) -> tuple[mpf, mpf, mpf, mpf, mpf, mpf]:
    """(q2, rho, w1, w0, kappa, d) of the exact k-RR with e^eps0 = e."""
    q = 1 / (e + k - 1)
    return 2 * q, (k - 2) / (e + k - 3), (e + 1) * q, (k - 2) * q, 2 / (e + 1), (e - 1) / (2 * (e + 1))


@pytest.mark.parametrize("n, k, eps0, eps", [(18, 3, 0.538, 0.3), (16, 5, 1.978, 0.9), (14, 3.7, 3.015, 1.2),
                                               (18, 10, 0.456, 0.05)])
def test_charge_covers_exact_masses(n: int, k: float, eps0: float, eps: float) -> None:
    """(M), (G), (H) at small n, every sum at 50 digits: delta_bl(e^eps0) <= E_pi*[f] <= charge_up(F^),
    where F^ is the sum at the engines' float masses and kappa, E_pi*[f] the same f at the exact masses
    of r'; the spec's trinomial sum (oracle) equals the exact mixture; and the certified upper end
    lies above it all. The charge is needed: without it (factor 1) some case fails."""
    c = upper_constants(n, k, eps0)
    with mpmath.workdps(50):
        d = mpf(c.d_)
        fl = (mpf(2.0 * c.q), mpf(c.rho), mpf(1.0 - c.p0), mpf(c.p0))
        f_hat = _mixture(n, *fl, mpf(c.kappa), d, eps)
        q2, rho, w1, w0, _, _ = _exact_law(mpf(c.e0), mpf(k))
        f_star = _mixture(n, q2, rho, w1, w0, mpf(c.kappa), d, eps)
        exact = _mixture(n, *_exact_law(_exact_e0(eps0), mpf(k)), eps)
        if float(k).is_integer():
            spec = ob.blanket_delta_krr_formula(n, int(k), eps0, eps)
            assert abs(spec - exact) <= mpf(10) ** -40
        assert exact <= f_star
        charged = mpf(c.charge_up(float(f_hat) * (1 + 2.0**-52)))
        assert f_star <= charged
        assert charged <= f_hat * (1 + 1e-12)
        up = KrrBlanket(n, k, eps0, shared=False, real_k=not float(k).is_integer()).bounds(eps, 1e-12).upper
        assert exact <= f_star <= mpf(up)


def test_charge_needed_somewhere() -> None:
    """Without the charge the float masses' sum lies below the exact masses' one in some of these
    cases (the rounding has either sign): the factor is not decorative."""
    below = 0
    with mpmath.workdps(50):
        for eps0 in KAPPA_UP[:6]:
            c = upper_constants(12, 4, eps0)
            d = mpf(c.d_)
            f_hat = _mixture(12, mpf(2.0 * c.q), mpf(c.rho), mpf(1.0 - c.p0), mpf(c.p0), mpf(c.kappa), d, 0.1)
            q2, rho, w1, w0, _, _ = _exact_law(mpf(c.e0), mpf(4))
            f_star = _mixture(12, q2, rho, w1, w0, mpf(c.kappa), d, 0.1)
            below += f_star > f_hat
            assert f_star <= mpf(c.charge_up(float(f_hat) * (1 + 2.0**-52)))
    assert below >= 1


def _tail(N: int, p: mpf, cut: int) -> mpf:
    """P[Bin(N, p) >= cut] at the working precision (pmf by the exact ratio recurrence)."""
    term = mpmath.binomial(N, cut) * p**cut * (1 - p) ** (N - cut)
    total = mpf(0)
    for i in range(cut, N + 1):
        total += term
        term *= (N - i) * p / ((i + 1) * (1 - p))
    return total


@pytest.mark.parametrize("eps0", [0.538, 1.978, 3.505, 13.567])
def test_k2_pair_rate_at_most_exact(eps0: float) -> None:
    """k = 2: the stronger-clone pair's clone rate at most 1/(e^eps0 + 1) (the rate lemma; fails before
    where the nearest float lies above) and the upper end above the exact binary-RR blanket (oracle)."""
    prof = KrrBlanket(40, 2, eps0, shared=False)
    pair = prof._pair.pair  # type: ignore[union-attr]
    with mpmath.workdps(50):
        pb = 1 / (_exact_e0(eps0) + 1)
        assert mpf(pair.r0) <= pb and mpf(pair.r1) <= pb
        eps = 0.5 * eps0
        exact = ob.blanket_delta_krr_formula(40, 2, eps0, eps)
        assert exact <= mpf(prof.bounds(eps, 1e-12).upper)


def test_upper_end_charged() -> None:
    """The upper end is the engines' times the charge (strictly above it, by less than 1e-10 relative at
    n = 1e6 and delta ~ 1e-8), the lower end the engines' (fails before: the engines' upper end as is)."""
    prof = KrrBlanket(10**6, 3, 0.538, shared=False)
    b = prof.bounds(0.002, 1e-6)
    raw = KrrBlanket(10**6, 3, 0.538, shared=False)._bounds(0.002, 1e-6)
    assert b.upper > raw.upper and b.upper <= raw.upper * (1 + 1e-10)
    assert b.lower == raw.lower and b.converged == raw.converged


def test_charge_keeps_convergence() -> None:
    """Review case: n = 1e7, k = 100, eps0 = 0.1 at delta ~ 1e-6 converges at rtol 1e-9 with the charge
    (the engines asked for rtol itself; asked for less they met their rounding floor: width 1.6e-9)."""
    b = KrrBlanket(10**7, 100, 0.1, shared=False).bounds(1.9161136260364523e-06, 1e-9)
    assert b.converged and b.upper - b.lower <= 1e-9 * b.lower


def test_pair_blanket_uses_charged_engine() -> None:
    """PairKrrBlanket's upper end includes the engine's charge and its own k charge on top (the Hölder
    one: far below the pointwise e^{n eta} here)."""
    pk = PairKrrBlanket(10**5, 0.2, 0.1, 1.978, 1e-15, shared=False)
    b = pk.bounds(0.02, 1e-9)
    inner = pk.blanket.bounds(0.02, 1e-9)
    assert inner.upper * math.exp(pk._log_charge(inner.upper, 0)) <= b.upper <= inner.upper * (1 + 1e-9)
    assert pk._log_charge(inner.upper, 0) < 0.1 * pk.n * pk.eta


@settings(max_examples=60, deadline=None)
@given(eps0=st.floats(1e-6, 700.0), k=st.integers(2, 10**6))
def test_lower_rates_exact_kRR_below(eps0: float, k: int) -> None:
    """The lower bounds' rates: q >= 1/(e^eps0 + k - 1) (50 digits), p + (k - 1) q = 1 exactly, every
    probability the pairs use an exact float, so p/q <= e^eps0 is an exact k-RR below the stated one."""
    rates = bk.lower_rates(k, eps0)
    if rates is None:
        return
    q, p = rates
    Q, P = Fraction(q), Fraction(p)
    assert P + (k - 1) * Q == 1 and P > Q
    for v in (P + Q, (k - 2) * Q, (k - 3) * Q, 1 - 2 * Q):
        assert Fraction(float(v)) == v
    with mpmath.workdps(80 + int(eps0 / 2.3)):
        assert mpf(q) >= 1 / (_exact_e0(eps0) + k - 1)
        assert mpf(p) / mpf(q) <= _exact_e0(eps0)


@pytest.mark.parametrize("k, eps0", [(4, 0.538), (5, 1.978), (10, 13.567), (4, 16.0)])
def test_dataset_model_lambda_below_exact(k: int, eps0: float) -> None:
    """k >= 4, a = 0: the engine's kappa >= 2/(r'' + 1) and wz >= -(1 - 1/r'') (so its lambda is at most the
    exact one of r''), its branches and clone rate exact; the charge map lowers and is < 1e-6 here."""
    q, p = bk.lower_rates(k, eps0)  # type: ignore[misc]
    m = bk.dataset_model(1000, k, eps0)
    Q, P = Fraction(q), Fraction(p)
    assert Fraction(m.kappa) >= 2 * Q / (P + Q)
    assert Fraction(m.wz) >= -(P - Q) / P
    assert sum(Fraction(w) for w, _, _ in m.branches) == 1 and Fraction(m.q2) == 2 * Q
    down = bk.dataset_charge_down(m, k)
    assert 0.0 < down(1e-9) < 1e-9 and down(1e-9) > 1e-9 * (1 - 1e-6)


@pytest.mark.parametrize("n, k, eps0, eps", [(60, 4, 1.0, 0.3), (40, 3, 0.538, 0.2), (50, 2, 1.978, 0.5)])
def test_dataset_lower_below_exact(n: int, k: int, eps0: float, eps: float) -> None:
    """The attained lower end lies below the exact delta (50 digits, the oracle) of the dataset it names,
    at the exact eps0."""
    r = bk.krr_dataset_lower(n, k, eps0, eps)
    with mpmath.workdps(50):
        if k == 2:
            m = int(r.dataset.split(";")[1].split()[0])
            exact = ob.binary_rr_family_delta(n, eps0, eps, m)
        else:
            a = 0 if r.dataset.startswith("a = 0") else n - 1
            exact = ob.krr_family_delta(n, k, eps0, eps, a)
        assert 0 < r.lower <= exact
        assert r.lower >= exact * (1 - 1e-6)


@pytest.mark.parametrize("shift", [0, 1])
@pytest.mark.parametrize("x", [1e-3, 3e-4])
def test_hoelder_against_exact_tails(x: float, shift: int) -> None:
    """(H) (shift 0: an upper end of the float law's value moved up) and (H') (shift 1: a lower end moved
    down) on laws with a large rate error (x relative on class 0 of two), for tail indicators
    f = 1{C >= cut} (the worst case for a change of measure): the charged value covers the exact law's
    (50 digits); uncharged it never does here; with N chi^2 quartered (half the square root) some cut
    fails: the charge is tight to first order."""
    N, sign = 4000, 1 - 2 * shift
    with mpmath.workdps(50):
        p_lo, p_hi = mpf(3) / 10, mpf(3) / 10 * (1 + mpf(x))
        pf, px = (p_lo, p_hi) if shift == 0 else (p_hi, p_lo)  # float law, exact law
        dev = [pf / px - 1, (1 - pf) / (1 - px) - 1] if shift else [px / pf - 1, (1 - px) / (1 - pf) - 1]
        base = px if shift else pf
        chi = base * dev[0] ** 2 + (1 - base) * dev[1] ** 2
        a, xm = float(N * chi) * (1 + 1e-12), max(abs(float(v)) for v in dev) * (1 + 1e-12)
        failed_quarter = False
        for cut in range(1300, 1500, 20):
            ef, ex = _tail(N, pf, cut), _tail(N, px, cut)
            end = float(ef) * (1 + sign * 1e-15)
            assert sign * (ex - ef) > 0  # the uncharged end is on the wrong side
            got = mpf(end) * mpmath.exp(sign * bk._hoelder_log(-math.log(end), a, xm, 1.0, N, shift=shift))
            assert sign * (got - ex) >= 0
            quarter = mpf(end) * mpmath.exp(sign * bk._hoelder_log(-math.log(end), a / 4.0, xm, 1.0, N, shift=shift))
            failed_quarter |= sign * (quarter - ex) < 0
        assert failed_quarter


@pytest.mark.parametrize("rel_err", [1e-7, 1e-9])
def test_pair_blanket_brackets_exact_k(rel_err: float) -> None:
    """PairKrrBlanket with masses known to rel_err: its bracket holds the exact blanket (50-digit mixture at
    e^eps0 exactly) at both extreme k* = 2 + (O/P)(1 +- rel_err)/(1 -+ rel_err), with the Hölder k charge."""
    n, side, third, eps0, eps = 16, 0.2, 0.1, 1.978, 0.6
    pk = PairKrrBlanket(n, side, third, eps0, rel_err, shared=False)
    b = pk.bounds(eps, 1e-6)
    with mpmath.workdps(50):
        w = mpf(third) / mpf(side)
        for s in (1, -1):
            k_star = 2 + w * (1 + s * mpf(rel_err)) / (1 - s * mpf(rel_err))
            exact = _mixture(n, *_exact_law(_exact_e0(eps0), k_star), eps)
            assert mpf(b.lower) <= exact <= mpf(b.upper)


def test_charge_up_degenerate_ends() -> None:
    """Review rev93k: an upper end of 1 or inf with a pointwise-only charge overflowed (OverflowError), and nan
    was certified as 0; now inf for both (certified, uninformative), 0 stays 0, and a normal end is charged."""
    c = upper_constants(10**9, 10**9, 0.01)
    assert c.charge_up(1.0) == math.inf and c.charge_up(math.inf) == math.inf and c.charge_up(math.nan) == math.inf
    assert c.charge_up(0.0) == 0.0
    small = upper_constants(10**6, 3, 0.5).charge_up(1e-6)
    assert 1e-6 < small < 1e-6 * (1 + 1e-9)


def test_walk_tops_zero_clone_rows_no_warning() -> None:
    """Review rev93k: a k-RR blanket search after another at the same n reached _walk_tops with c = 0 rows and
    divided by sqrt(0) (a RuntimeWarning; an error under the suite's warnings-as-errors)."""
    from shuffle_accountant import api
    from shuffle_accountant.randomizers import KRR

    api.epsilon(0.1, 10**9, 1e-6, method="blanket", randomizer=KRR(3, 0.1))
    got = api.epsilon(0.1, 10**9, 1e-9, method="blanket", randomizer=KRR(3, 0.1))
    assert 0.0 < got.value < 0.1


@pytest.mark.parametrize("n,eps0,eps", [(10, 16.0, 15.9), (10, 30.0, 25.0), (1000, 16.0, 15.9)])
def test_binary_family_cut_past_n(n, eps0, eps) -> None:
    """Review rev93d: the binary family's cut search started past n + width (normal start) with an empty window, and
    the dataset lower bound fell to ~0 (eps0 = 16, n = 10, eps = 15.9: 1.4e-22 against 0.095). Now within 1 % below
    the exact delta of the all-x1 dataset (50-digit oracle), never above it."""
    import mpmath

    from shuffle_accountant import api
    from shuffle_accountant.randomizers import KRR

    got = api.delta(eps0, n, eps, method="dataset-lower", randomizer=KRR(2, eps0)).value
    with mpmath.workdps(50):
        exact = ob.binary_rr_family_delta(n, eps0, eps, n - 1)
        assert 0.99 * exact <= got <= exact

"""Rounding of the named randomizers' blanket structures against their exact values (review sep93s).

:class:`~shuffle_accountant.randomizers.PairStructure` claims that every stored float (class masses,
ratios ``a_j, b_j``, ``rest``) lies within ``rel_err`` (relative) of the exact real value for the
user's ``eps0`` (the float, taken as an exact real), and the engines of
:mod:`~shuffle_accountant.numeric.blanket_separable` and :mod:`~shuffle_accountant.numeric.blanket_matrix`
charge only that ``rel_err`` (plus their own roundings). Here an independent 50-digit mpmath
derivation of each named randomizer's classes (written from the class docstrings' definitions,
not from the package's float formulas) checks the claim over a grid and a hypothesis sample of
``eps0`` in ``(0, 50]``, ``k``, ``g``, ``d``, including the cancelling cases (tiny ``eps0``, OLH
``k = 2``, large ``eps0``), and the engines' charges that consume it:

* the coefficients' bracket of the lattice / exact paths (``blanket_matrix.coefficients``) contains
  the exact ``c_j = a*_j - e^eps b*_j``;
* the separable engine's per-draw slack in ``kappa`` (``_eps_constants``) covers the exact
  coefficients against its separable form with the stored ``E``;
* its route A (``_split``: ``q_y <= p*_y <= q_y + nu_y``) and route B (``_mass_factor``: every exact
  per-user probability within ``1 +- r'`` of the product law's);
* ``max_log_ratio`` (where ``delta = 0`` is claimed) is at least the exact largest log-ratio, also
  where ``e^eps0`` rounds to 1 or a matrix's rows are equal up to their normalisation.

Found and fixed with these tests: unary encoding's ``rest = 1 - gamma`` lost ``f1 - 1 ~ eps0 / 2`` to
cancellation (780 u at eps0 = 1e-3, k = 2; relative error ~1 at eps0 = 1e-20), and ``max_log_ratio``
returned 0 where every stored ratio was 1 (``delta = 0`` claimed at eps = 0 for SUE at eps0 = 1e-20,
whose exact delta is positive).
"""

from __future__ import annotations

import math
import os
import sys

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shuffle_accountant import api
from shuffle_accountant.errors import CertificationError
from shuffle_accountant.numeric import blanket_matrix as bm
from shuffle_accountant.numeric import blanket_separable as bsep
from shuffle_accountant.randomizers import OLH, OUE, SUE, Hadamard, MatrixRandomizer, PairStructure, Subset

sys.path.insert(0, os.path.dirname(__file__))
import oracle_blanket as ob  # noqa: E402

mpf = mpmath.mpf
U = 2.0**-53


def _dps(eps0: float) -> int:
    """Digits enough for ``1 - gamma ~ eps0`` to keep 50 of its own."""
    return 60 + max(0, int(-math.log10(eps0)) + 5)


def exact_classes(r) -> tuple[mpf, list[tuple[mpf, int, int]]]:  # type: ignore[no-untyped-def]
    """``(E*, [(mass*, y1, y2)])`` of the pair (0, 1) at the current mpmath precision: ``y1 = 1`` means
    ``a = E*``, else 1 (likewise ``y2`` for ``b``). From the definitions (class docstrings)."""
    eps0 = mpf(r.eps0)
    E = mpmath.exp(eps0)
    k = r.k
    if isinstance(r, (SUE, OUE)):
        if isinstance(r, SUE):  # p = e^{eps0/2}/(e^{eps0/2} + 1), q = 1 - p
            h = mpmath.exp(eps0 / 2)
            p, q = h / (h + 1), 1 / (h + 1)
        else:  # p = 1/2, q = 1/(e^eps0 + 1)
            p, q = mpf(1) / 2, 1 / (E + 1)
        f1, f0 = p / q, (1 - p) / (1 - q)
        # bits at x1, x1' under base (independent Bern(q)); m(y) = base f0 except the all-ones output
        cls = [(f0 * q * (1 - q), 1, 0), (f0 * q * (1 - q), 0, 1),
               (f0 * q * q * (1 - q ** (k - 2)), 1, 1), (f0 * (1 - q) ** 2 + f1 * q**k, 0, 0)]
    elif isinstance(r, OLH):
        g = mpf(r.g)
        p, q = E / (E + g - 1), 1 / (E + g - 1)
        const = g ** (1 - k)  # P(H constant) g
        cls = [(q * (1 - 1 / g), 1, 0), (q * (1 - 1 / g), 0, 1), (q * (1 / g - const), 1, 1),
               (q * (g - 2 + 1 / g) + p * const, 0, 0)]
    elif isinstance(r, Hadamard):
        K = mpf(r.K)
        high, low = 2 * E / (K * (1 + E)), 2 / (K * (1 + E))
        cls = [(K / 4 * low, 1, 0), (K / 4 * low, 0, 1), ((K / 4 - 1) * low, 1, 1), (K / 4 * low + high, 0, 0)]
    else:
        kk, d = mpf(k), mpf(r.d)
        c = mpmath.binomial
        W = c(kk - 1, d - 1) * E + c(kk - 1, d)  # subsets counted, not the package's divided form
        cls = [(c(kk - 2, d - 1) / W, 1, 0), (c(kk - 2, d - 1) / W, 0, 1), (c(kk - 2, d - 2) / W, 1, 1),
               (c(kk - 2, d) / W, 0, 0)]
    return E, [(m, y1, y2) for m, y1, y2 in cls if m > 0]


def stored_errors(r, s: PairStructure | None = None) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """Largest relative error of the stored masses, ratios and rest against the exact values, and the
    exact mass of classes the structure lost (relative to gamma*)."""
    s = s if s is not None else r.pair_structure()
    with mpmath.workdps(_dps(r.eps0)):
        E, cls = exact_classes(r)
        ef = math.exp(r.eps0)
        buckets: dict[tuple[float, float], mpf] = {}
        for m, y1, y2 in cls:  # the float key each exact class is stored under
            key = (ef if y1 else 1.0, ef if y2 else 1.0)
            buckets[key] = buckets.get(key, mpf(0)) + m
        gamma = mpmath.fsum(m for m, _, _ in cls)
        rest = 1 - gamma
        out = {"mass": 0.0, "ratio": 0.0}
        for p, a, b in zip(s.mass, s.a, s.b):
            ex = buckets.pop((a, b))
            out["mass"] = max(out["mass"], float(abs(mpf(p) / ex - 1)))
            for v in (a, b):  # a stored ratio stands for E* or 1 (merged classes: both, when E rounds to 1)
                exv = E if v == ef and v != 1.0 else mpf(1)
                out["ratio"] = max(out["ratio"], float(abs(mpf(v) / exv - 1)), float(abs(mpf(v) / E - 1)) if v == ef else 0.0)
        out["lost"] = float(mpmath.fsum(buckets.values()) / gamma)
        out["rest"] = float(abs(mpf(s.rest) / rest - 1))
    return out


def _named(kind: str, k: int, eps0: float, extra: int | None = None):  # type: ignore[no-untyped-def]
    if kind == "sue":
        return SUE(k, eps0)
    if kind == "oue":
        return OUE(k, eps0)
    if kind == "olh":  # (the default g = round(e^eps0 + 1) exceeds 1e9 from eps0 ~ 20.7: refused there)
        return OLH(k, eps0, extra if extra is not None or eps0 < 20.0 else 10**9)
    if kind == "hadamard":
        return Hadamard(k, eps0)
    return Subset(k, eps0, None if extra is None else min(max(extra, 1), k - 1))


EPS0_GRID = (1e-300, 1e-20, 2.0**-54, 1e-12, 1e-8, 1e-5, 1e-3, 0.01, 0.1, 0.5, 1.0, 2.0, 4.0, 6.0, 10.0, 20.0,
             36.0, 37.5, 40.0, 50.0)
K_GRID = (2, 3, 4, 5, 8, 16, 100, 10**6)


def _assert_within(r) -> None:  # type: ignore[no-untyped-def]
    s = r.pair_structure()
    err = stored_errors(r, s)
    assert err["lost"] == 0.0, (r, err)
    for key in ("mass", "ratio", "rest"):
        assert err[key] <= s.rel_err, (r, key, err[key] / U)


@pytest.mark.parametrize("kind", ["sue", "oue", "olh", "hadamard", "subset"])
@pytest.mark.parametrize("eps0", EPS0_GRID)
def test_stored_values_within_rel_err_grid(kind: str, eps0: float) -> None:
    """Every stored value within rel_err of its 50-digit value (failed before for SUE / OUE's rest at
    eps0 <= 1e-3: 780 u at 1e-3, 1.2e4 u at 1e-5, ~2^52 u at 1e-20)."""
    for k in K_GRID:
        extras = (None, 2, 3, 10**9) if kind == "olh" else (None, 1, 2, k // 2, k - 1) if kind == "subset" else (None,)
        for extra in extras:
            if kind == "olh" and extra is not None and extra > 1e6 and k > 100:
                continue
            _assert_within(_named(kind, k, eps0, extra))


@settings(max_examples=150, deadline=None, derandomize=True)
@given(kind=st.sampled_from(["sue", "oue", "olh", "hadamard", "subset"]),
       eps0=st.floats(min_value=1e-300, max_value=50.0, allow_subnormal=False),
       k=st.one_of(st.integers(2, 20), st.integers(21, 10**9)),
       extra=st.one_of(st.none(), st.integers(1, 10**9)))
def test_stored_values_within_rel_err_property(kind: str, eps0: float, k: int, extra: int | None) -> None:
    if kind == "olh" and extra is not None:
        extra = max(extra, 2)
    _assert_within(_named(kind, k, eps0, extra))


def test_checker_has_teeth() -> None:
    """The checker fails a structure whose rest or one mass is moved by 2 rel_err (mutation)."""
    r = SUE(4, 1.0)
    s = r.pair_structure()
    bad_rest = PairStructure(s.mass, s.a, s.b, s.rest * (1 + 2 * s.rel_err), s.rel_err)
    assert stored_errors(r, bad_rest)["rest"] > s.rel_err
    mass = list(s.mass)
    mass[0] *= 1 - 2 * s.rel_err
    assert stored_errors(r, PairStructure(tuple(mass), s.a, s.b, s.rest, s.rel_err))["mass"] > s.rel_err


def test_unary_rest_no_cancellation() -> None:
    """The values the old difference form got wrong (fails before: 780 u and 1.2e4 u)."""
    for r in (SUE(2, 1e-3), OUE(2, 1e-5), SUE(3, 1e-8), OUE(16, 1e-12)):
        assert stored_errors(r)["rest"] <= 32 * U, r


# ---------------------------------------------------------------------------------------
# max_log_ratio: where delta = 0 is claimed
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["sue", "oue", "olh", "hadamard", "subset"])
@pytest.mark.parametrize("eps0", (1e-300, 1e-20, 2.0**-54, 2.0**-52, 1e-12, 1.0, 30.0, 50.0))
def test_max_log_ratio_at_least_eps0(kind: str, eps0: float) -> None:
    """The exact largest log-ratio of a named randomizer is eps0 (``a*/b* = e^eps0``); failed before where
    ``e^eps0`` rounds to 1 (0 returned)."""
    for k in (2, 5, 100):
        assert _named(kind, k, eps0).pair_structure().max_log_ratio >= eps0


def test_delta_positive_where_exp_eps0_rounds_to_one() -> None:
    """SUE k = 2 at eps0 = 1e-20: the exact blanket delta at eps = 0 is positive (50-digit enumeration);
    the api's certified upper end must be at least that (it was 0: max_log_ratio = 0)."""
    eps0, n = 1e-20, 3
    with mpmath.workdps(80):
        exact = ob.blanket_delta(ob.sue_matrix(2, mpf(eps0)), n, 0)
    assert exact > 0
    b = api.delta(eps0, n, 0.0, method="blanket", randomizer=SUE(2, eps0))
    lo, up = b.details["bracket"]
    assert up >= exact and lo <= exact


@pytest.mark.parametrize("eps0", (3e-16, 1e-15, 1e-13))
def test_exact_path_where_the_silent_mass_is_unresolved(eps0: float) -> None:
    """eps0 ~ 1e-15: the exact path's closed-form class has ``1 - rho`` below the rounding of ``rho`` (this
    raised OverflowError at 3e-16, n = 3); now its bracket still contains the 50-digit blanket delta (the
    local bound ``E[X_+]`` caps the upper end)."""
    n = 3
    with mpmath.workdps(80):
        exact = ob.blanket_delta(ob.sue_matrix(2, mpf(eps0)), n, 0)
    lo, up = api.delta(eps0, n, 0.0, method="blanket", randomizer=SUE(2, eps0)).details["bracket"]
    assert lo <= exact <= up


def test_delta_positive_for_rows_equal_up_to_normalisation() -> None:
    """A matrix whose stored ratios are all 1 but whose normalised rows differ (row sums 1 and 1 + 4e-13):
    exact blanket delta at eps = 0 is positive; the certified upper end must cover it (was 0)."""
    rows = [[0.5, 0.5], [0.5, 0.5 + 4e-13]]
    mr = MatrixRandomizer(rows)
    with mpmath.workdps(60):
        exact_m = [[mpf(x) / mpmath.fsum(map(mpf, row)) for x in row] for row in rows]
        top = max(mpmath.log(exact_m[x][y] / min(exact_m[0][y], exact_m[1][y])) for x in (0, 1) for y in (0, 1))
        assert top > 0
        assert all(s.max_log_ratio >= top for s in mr.pair_structures())
        exact = ob.blanket_delta(exact_m, 3, 0)
    assert exact > 0
    try:
        b = bm.BlanketProfile(mr, 3).bounds(0.0, 1e-3)
    except CertificationError:  # (one pair's stored rest is 0: refused, which is sound)
        return
    assert b.upper >= exact and b.lower <= exact


# ---------------------------------------------------------------------------------------
# The engines' charges against the exact values
# ---------------------------------------------------------------------------------------

CHARGE_CASES = [SUE(2, 1e-5), SUE(100, 1.0), SUE(3, 37.0), OUE(2, 0.01), OUE(100, 6.0), OLH(2, 4.0), OLH(2, 0.3, 2),
                OLH(8, 50.0, 5), OLH(100, 1.0), Hadamard(3, 1e-3), Hadamard(100, 20.0), Subset(10, 1.0),
                Subset(100, 8.0, 3), Subset(2, 1e-12)]


@pytest.mark.parametrize("r", CHARGE_CASES, ids=lambda r: r.describe())
def test_coefficient_bracket_contains_exact(r) -> None:  # type: ignore[no-untyped-def]
    """``blanket_matrix.coefficients``: ``lo_j <= a*_j - e^eps b*_j <= up_j`` at the exact ``e^eps``."""
    s = r.pair_structure()
    with mpmath.workdps(_dps(r.eps0)):
        E, cls = exact_classes(r)
        ef = math.exp(r.eps0)
        for eps in (0.0, 0.25 * r.eps0, 0.9 * r.eps0, r.eps0):
            cf = bm.coefficients(s, eps)
            g = mpmath.exp(mpf(eps))
            for j, (a, b) in enumerate(zip(s.a, s.b)):
                for _, y1, y2 in cls:
                    if (ef if y1 else 1.0, ef if y2 else 1.0) != (a, b):
                        continue
                    c = (E if y1 else 1) - g * (E if y2 else 1)
                    assert mpf(float(cf.lo[j])) <= c <= mpf(float(cf.up[j])), (r, eps, j)
                    assert mpf(float(cf.b_lo[j])) <= (E if y2 else 1)


SEPARABLE_CASES = [r for r in CHARGE_CASES if bsep._pattern(r.pair_structure()) is not None]


@pytest.mark.parametrize("r", SEPARABLE_CASES, ids=lambda r: r.describe())
def test_separable_kappa_slack_covers_exact_coefficients(r) -> None:  # type: ignore[no-untyped-def]
    """Separable engine §5: per draw of class ``y``, the exact ``c*_y`` lies within ``(E - 1) sig`` of the
    separable form ``(E - 1)(y1 - g y2 - rho)`` with the stored ``E`` and the engine's float ``g``, ``rho``
    (the rounding of ``kappa = g b + m rho`` itself is charged apart)."""
    s = r.pair_structure()
    E_f, _ = bsep._pattern(s)  # type: ignore[misc]
    with mpmath.workdps(_dps(r.eps0)):
        E, cls = exact_classes(r)
        for eps in (0.01 * r.eps0, 0.5 * r.eps0, 0.95 * r.eps0):
            ec = bsep._eps_constants(s, E_f, eps)
            g = mpmath.exp(mpf(eps))
            e1 = mpf(E_f) - 1
            for _, y1, y2 in cls:
                c = (E if y1 else 1) - g * (E if y2 else 1)
                sep = e1 * (y1 - mpf(ec.g) * y2 - mpf(ec.rho))
                assert abs(c - sep) <= e1 * mpf(ec.sig), (r, eps, y1, y2, float(abs(c - sep) / (e1 * ec.sig)))


@pytest.mark.parametrize("r", SEPARABLE_CASES, ids=lambda r: r.describe())
def test_separable_routes_bound_exact_law(r) -> None:  # type: ignore[no-untyped-def]
    """Route A: ``q_y <= p*_y <= q_y + nu_y`` (``_split``). Route B: every exact per-user probability (each
    class and silent) within ``1 -+ r'`` of the product law ``Bin`` parameters' own law (``_mass_factor``)."""
    s = r.pair_structure()
    with mpmath.workdps(_dps(r.eps0)):
        _, cls = exact_classes(r)
        exact = [mpf(0)] * 4
        for m, y1, y2 in cls:
            exact[y1 + 2 * y2] += m
        silent = 1 - mpmath.fsum(exact)

        def product(sp):  # type: ignore[no-untyped-def]
            a, b = mpf(sp.alpha), mpf(sp.beta)
            return [mpf(sp.gamma) * x for x in ((1 - a) * (1 - b), a * (1 - b), (1 - a) * b, a * b)]

        spa = bsep._split(s)
        assert spa is not None
        for qq, nu, ex in zip(product(spa), spa.nu, exact):
            assert qq <= ex <= qq + mpf(nu)
        spb = bsep._split(s, exact_masses=True)
        assert spb is not None
        rp = bsep._mass_factor(s, spb)
        if math.isfinite(rp):
            qs = product(spb)
            q_silent = 1 - mpmath.fsum(qs)
            for qq, ex in zip(qs + [q_silent], exact + [silent]):
                assert (1 - mpf(rp)) * qq <= ex <= (1 + mpf(rp)) * qq, r


def test_krr_route_pair_identity() -> None:
    """The k = 2 route (:func:`.blanket_matrix._krr_route` -> ``PairKrrBlanket``) relies on ``P* (e^eps0 + 1)
    + O* = 1`` for the exact side mass ``P*`` and third mass ``O*`` (pure LDP) and on the stored ``P, O``
    within rel_err: both checked at 50 digits."""
    for r in (SUE(2, 0.5), OUE(2, 6.0), OLH(2, 4.0), OLH(2, 20.0), SUE(2, 1e-5)):
        s = r.pair_structure()
        assert s.classes == 3
        with mpmath.workdps(_dps(r.eps0)):
            E, cls = exact_classes(r)
            side = [m for m, y1, y2 in cls if (y1, y2) == (1, 0)][0]
            third = mpmath.fsum(m for m, y1, y2 in cls if (y1, y2) == (0, 0))
            assert abs(side * (E + 1) + third - 1) < mpf(10) ** (-40)
            assert abs(mpf(s.mass[1]) / side - 1) <= s.rel_err
            assert abs(mpf(s.mass[0]) / third - 1) <= s.rel_err
            assert s.a[2] == math.exp(r.eps0)


def test_exact_checker_against_oracle_matrices() -> None:
    """The independent classes above agree with the oracle's full matrices (tiny instances, 50 digits)."""
    cases = [(SUE(3, 0.7), ob.sue_matrix(3, mpf(0.7))), (OUE(3, 1.3), ob.oue_matrix(3, mpf(1.3))),
             (OLH(2, 1.1, 3), ob.olh_matrix(2, 3, mpf(1.1))), (Hadamard(3, 0.9), ob.hadamard_matrix(3, mpf(0.9))),
             (Subset(4, 0.8, 2), ob.subset_matrix(4, 2, mpf(0.8)))]
    for r, m in cases:
        with mpmath.workdps(50):
            E, cls = exact_classes(r)
            gamma, omega = ob.blanket_parameters(m)
            mins = [w * gamma for w in omega]
            got: dict[tuple[int, int], mpf] = {}
            for y, mn in enumerate(mins):
                key = (int(abs(m[0][y] / mn - E) < mpf(10) ** -40), int(abs(m[1][y] / mn - E) < mpf(10) ** -40))
                got[key] = got.get(key, mpf(0)) + mn
            mine: dict[tuple[int, int], mpf] = {}
            for mm, y1, y2 in cls:
                mine[(y1, y2)] = mine.get((y1, y2), mpf(0)) + mm
            assert set(got) == set(mine), r
            for key in got:
                assert abs(got[key] - mine[key]) < mpf(10) ** -40, (r, key)
    assert np.isfinite(0.0)


# ---------------------------------------------------------------------------------------
# The k = 2 route where exact enumeration would answer (issue 10; a cost decision, both certified)
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("r,n", [(SUE(2, 1.0), 200), (OUE(2, 2.0), 130), (OLH(2, 0.5), 262)], ids=str)
def test_krr_route_over_exact_agrees_with_exact_enumeration(r, n) -> None:  # type: ignore[no-untyped-def]
    """From :data:`.blanket_matrix.KRR_ROUTE_EXACT_SIZE` count vectors at eps0 <= ``KRR_ROUTE_EXACT_EPS0`` the
    k-RR engines answer for a k = 2 pair that exact enumeration would evaluate: their brackets overlap the
    exact path's at several eps, and the api's eps(delta) bracket contains delta's crossing."""
    prof = bm.BlanketProfile(r, n)
    assert prof._krr is not None and prof.pairs[0].exact
    exact = bm.PairBlanket(r.pair_structure(), n, "exact")
    for f in (0.05, 0.3, 0.7, 0.95):
        eps = f * r.eps0
        a, b = prof.bounds(eps, 1e-6), exact.bounds(eps, 1e-6)
        assert a.lower <= b.upper and b.lower <= a.upper, (eps, a, b)
    lo, up = api.epsilon(r.eps0, n, 1e-6, method="blanket", randomizer=r).details["bracket"]
    assert exact.bounds(up, 1e-9).lower <= 1e-6 * (1 + 1e-9)
    assert exact.bounds(lo, 1e-9).upper >= 1e-6 * (1 - 1e-9)


@pytest.mark.parametrize("r,n", [(SUE(2, 3.0), 3000), (OUE(2, 0.5), 700)], ids=str)
def test_krr_route_up_to_its_np_agrees_with_the_lattice(r, n) -> None:  # type: ignore[no-untyped-def]
    """n P between 65 and :data:`.blanket_matrix.KRR_ROUTE_MAX_NP` (150): the k-RR engines answer, and their
    brackets overlap the lattice's (the pair alone) at several eps."""
    prof = bm.BlanketProfile(r, n)
    assert prof._krr is not None and 65.0 <= n * r.pair_structure().mass[1] < bm.KRR_ROUTE_MAX_NP
    pair = bm.PairBlanket(r.pair_structure(), n)
    for eps in (0.02, 0.1, 0.3):
        a, b = prof.bounds(eps, 1e-7), pair.bounds(eps, 1e-7)
        assert a.lower <= b.upper and b.lower <= a.upper, (eps, a, b)


def test_krr_route_not_taken_below_its_sizes() -> None:
    """Outside them the exact path answers alone (k-RR's engines cost more at delta 1e-9 from eps0 = 3)."""
    assert bm.BlanketProfile(SUE(2, 6.0), 262)._krr is None
    assert bm.BlanketProfile(SUE(2, 3.0), 200)._krr is None
    assert bm.BlanketProfile(SUE(2, 1.0), 100)._krr is None


# ---------------------------------------------------------------------------------------
# The exact path's far count vectors (bounded without binomial tails)
# ---------------------------------------------------------------------------------------


def _delta_three_classes_50(r, n: int, eps: float) -> mpf:  # type: ignore[no-untyped-def]
    """The exact blanket delta of a k = 2 pair (three classes and the silent users) at 50 digits: the sum over
    every count vector (A on (E, 1), B on (1, E), O on (1, 1)) of its multinomial probability times S_+ / n."""
    with mpmath.workdps(50):
        E, cls = exact_classes(r)
        mass = {(y1, y2): m for m, y1, y2 in cls}
        pa, pb, po = mass[(1, 0)], mass[(0, 1)], mass[(0, 0)]
        silent = 1 - pa - pb - po
        g = mpmath.exp(mpf(eps))
        ca, cb, co = E - g, 1 - g * E, 1 - g
        tot = mpf(0)
        for a in range(n + 1):
            for b in range(n + 1 - a):
                for o in range(n + 1 - a - b):
                    s = a * ca + b * cb + o * co
                    if s > 0:
                        w = mpmath.factorial(n) / (mpmath.factorial(a) * mpmath.factorial(b) * mpmath.factorial(o)
                                                   * mpmath.factorial(n - a - b - o))
                        tot += w * pa**a * pb**b * po**o * silent ** (n - a - b - o) * s
        return tot / n


def test_exact_path_far_vectors_against_50_digits() -> None:
    """OUE k = 2, eps0 = 8, n = 40: most count vectors lie e^-80 below the largest probability, so the exact
    path sums the near ones and bounds the far ones by ``sum pmf_up (x_+ + c_+ m)``; the bracket contains the
    50-digit delta and equals the all-vector bracket up to that charge."""
    r, n = OUE(2, 8.0), 40
    s = r.pair_structure()
    bm._exact_layout.cache_clear()
    for eps in (0.5, 4.0, 7.5):
        cf = bm.coefficients(s, eps)
        lo, up, _ = bm._exact_bounds(cf, n)
        assert bm._exact_layout(n, tuple(s.mass), s.rest, s.rel_err)[4] is not None  # (pruning active)
        exact = _delta_three_classes_50(r, n, eps)
        assert mpf(lo) <= exact <= mpf(up), (eps, lo, float(exact), up)
        old = bm.EXACT_PRUNE_LOG
        try:
            bm.EXACT_PRUNE_LOG = math.inf
            bm._exact_layout.cache_clear()
            flo, fup, _ = bm._exact_bounds(cf, n)
        finally:
            bm.EXACT_PRUNE_LOG = old
            bm._exact_layout.cache_clear()
        assert lo <= fup and flo <= up and up <= fup * (1 + 1e-11)


def test_exact_path_far_charge_bounds_the_far_terms() -> None:
    """The far vectors' charge (no binomial tails) is at least their own certified upper-end sum (the closed
    forms), at an eps where they matter most (near 0)."""
    r, n = SUE(2, 6.0), 262
    s = r.pair_structure()
    cf = bm.coefficients(s, 0.01)
    p = tuple(s.mass)
    vec, m, pmf_up, pmf_lo, far = bm._exact_layout(n, p, s.rest, s.rel_err)
    assert far is not None
    last = int(np.argmax(cf.p))
    outer = [j for j in range(len(p)) if j != last]
    tail = cf.p[last] + cf.rest
    rho = cf.p[last] / tail
    _, far_up, _ = bm._exact_sums(cf, n, outer, last, vec[far], m[far], pmf_up[far], pmf_lo[far], rho, 1e-12)
    charge = bm._exact_far_charge(cf, outer, last, vec[far], m[far], pmf_up[far]) / n
    assert 0.0 < far_up <= charge


@pytest.mark.parametrize("cls", ["SUE", "OUE", "OLH"])
def test_tiny_eps0_k2_not_routed_and_no_crash(cls) -> None:
    """Review rev93s of b2be266: at eps0 ~ 1e-15 (n 117 .. 259) k = 2 went to the k-RR engines, whose upper end
    was infinite (ValueError in the k charge: exit 4) and whose lower end (float masses) lay above the exact
    delta by ~u/eps0 relative; now the pairs answer below KRR_ROUTE_MIN_EPS0 (no crash; an ordered, small
    bracket)."""
    import shuffle_accountant.randomizers as R
    from shuffle_accountant import api
    from shuffle_accountant.numeric.blanket_matrix import KRR_ROUTE_MIN_EPS0, BlanketProfile

    for eps0 in (1e-15, 5e-16, 1e-8):
        rnd = getattr(R, cls)(k=2, eps0=eps0)
        assert eps0 < KRR_ROUTE_MIN_EPS0 and BlanketProfile(rnd, 150)._krr is None
        got = api.delta(eps0, 150, 0.0, method="blanket", randomizer=rnd)
        lo, up = got.details["bracket"]
        assert 0.0 <= lo <= up < 1e-6


def test_pair_krr_blanket_infinite_end_moves_to_infinity() -> None:
    """PairKrrBlanket._moved: an infinite upper end stays infinite (was a math domain error in the Hölder charge's
    log(fmax / end)), an infinite or nan lower end becomes 0."""
    from shuffle_accountant.numeric.blanket_matrix import BlanketProfile
    from shuffle_accountant.randomizers import SUE

    pb = BlanketProfile(SUE(k=2, eps0=1.0), 200)._krr
    assert pb is not None
    assert pb._moved(math.inf, 0) == math.inf and pb._moved(math.nan, 0) == math.inf
    assert pb._moved(math.inf, 1) == 0.0 and pb._moved(math.nan, 1) == 0.0
    assert 1e-9 < pb._moved(1e-9, 0) < 1e-9 * (1 + 1e-6)

"""PLD route of ``compose`` and the dp_accounting interop (needs the ``[pld]`` extra)."""

from __future__ import annotations

import builtins
import json
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from click.testing import CliRunner

import oracle
from shuffle_accountant import api, interop
from shuffle_accountant import composition as comp
from shuffle_accountant import pld as P
from shuffle_accountant.analyses import ScaledPair, pair_for
from shuffle_accountant.cli import main
from shuffle_accountant.numeric.clones import ClonePair

pytest.importorskip("dp_accounting")
P.import_dp_accounting()  # warm the import once (and through the narrow warning filter)

ORDERS = [1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64]
D = P.DEFAULT_DISCRETIZATION


@pytest.mark.parametrize(
    "eps0, n, method, k, delta",
    [
        (1.0, 1000, "clones", None, 1e-6),
        (1.0, 10**6, "clones", None, 1e-6),
        (3.0, 10**4, "clones", None, 1e-3),
        (1.0, 50, "stronger-clones", None, 1e-3),
        (2.0, 500, "krr", 5, 1e-6),
    ],
)
def test_one_round_agrees_with_direct_epsilon(eps0, n, method, k, delta):
    """T = 1: never below the certified lower end of the direct eps (the PLD dominates
    the pair), and above the direct upper end by at most one discretization step."""
    b = P.pld_route([(eps0, n, 1)], delta, method, k)
    assert b.kind == "upper"
    lo, up = api.epsilon(eps0, n, delta, method, k).details["bracket"]
    assert lo <= b.value <= up + D + 1e-9, (b.value, lo, up)


@pytest.mark.parametrize("eps0, n", [(1.0, 4), (2.0, 3)])
@pytest.mark.parametrize("method, params", [("clones", oracle.clones_params), ("stronger-clones", oracle.stronger_clones_params)])
def test_two_rounds_at_or_above_exact_product(eps0, n, method, params):
    delta = 1e-3
    res = comp.compose(eps0=eps0, n=n, T=2, delta=delta, method=method, orders=ORDERS)
    with mpmath.workdps(50):
        pair = oracle.clone_pair(n, *params(eps0))
        exact = oracle.epsilon_exact(oracle.product_pair(pair, pair), delta)
    pld = next(b for b in res.bounds if b.method == "pld")
    assert pld.kind == "upper"
    assert pld.value >= exact
    assert pld.value <= float(exact) + 2 * D  # and tight: within the discretisation
    for b in res.bounds:
        if b.applicable:
            assert b.value >= exact


def _exact_hockey(pair, eps: float) -> float:
    """``H_{e^eps}(P||Q)`` of an oracle pair, for any real ``eps``."""
    with mpmath.workdps(50):
        return float(oracle.hockey_stick(pair[0], pair[1], eps))


def test_asymmetric_pair_dominates_in_both_orders_for_every_eps():
    """An asymmetric pair (r0 != r1) gets pmf_remove = P||Q and pmf_add = Q||P; each
    dominates the exact hockey-stick curve on negative and positive eps, and touches it
    (up to the certified bracket) at grid points."""
    eps0, n = 1.0, 5
    sp = pair_for("binary-rr-lower", eps0, n)
    assert not sp.pair.symmetric
    r = P.pair_pld(sp)
    with mpmath.workdps(50):
        pq = oracle.clone_pair(n, *oracle.binary_rr_params(eps0))
    qp = (pq[1], pq[0])
    remove, add = r.pld._pmf_remove, r.pld._pmf_add  # noqa: SLF001 - checking the two orders
    for eps in [-0.9, -0.3, -0.01, 0.0, 0.00005, 0.0123, 0.2, 0.55, 0.99, 1.5]:
        for pmf, pair in ((remove, pq), (add, qp)):
            got, exact = float(pmf.get_delta_for_epsilon(eps)), _exact_hockey(pair, eps)
            assert got >= exact - 1e-15, (eps, got, exact)
            if abs(eps / D - round(eps / D)) < 1e-9:  # a grid point: tight
                assert got <= exact * (1 + 1e-3) + 1e-12, (eps, got, exact)


def test_scaled_pair_and_interpolation_at_grid_points():
    """krr carries scale = 1 - p0; at grid points the PLD's delta equals the certified
    upper bound, which brackets the exact (scaled) value."""
    sp = pair_for("krr", 2.0, 6, 4)
    assert sp.scale < 1.0
    r = P.pair_pld(sp)
    with mpmath.workdps(50):  # the krr upper pair: r = 1/(e^eps0 + k - 1), first user as clones
        u = mpmath.exp(-2)
        r0 = u / (1 + 3 * u)
        pair = oracle.clone_pair(6, r0, r0, 1 / (1 + u), u / (1 + u), 0)
    for i in (-3000, -7, 0, 1, 250, 12345):
        eps = i * D
        exact = sp.scale * _exact_hockey(pair, eps) + (1 - sp.scale) * max(-math.expm1(eps), 0.0)
        got = float(r.pld.get_delta_for_epsilon(eps))
        assert exact - 1e-15 <= got <= exact * (1 + 1e-3) + 1e-12


def test_fft_composition_not_below_exact_convolution():
    """The floating-point budget: dp_accounting's FFT self-composition against a direct
    (non-negative, well-conditioned) convolution of the same pmf."""
    r = P.round_pld(1.0, 1000)
    pm = r.pld._pmf_remove.to_dense_pmf()  # noqa: SLF001
    p, lo, inf = pm._probs, pm._lower_loss, pm._infinity_mass  # noqa: SLF001
    q, lq, iq = p.copy(), lo, inf
    for _ in range(3):
        q, lq, iq = np.convolve(q, p), lq + lo, 1 - (1 - iq) * (1 - inf)
    losses = (np.arange(q.size) + lq) * D
    composed = r.pld.self_compose(4)
    for eps in np.linspace(0.0, 2.0, 21):
        m = losses > eps
        direct = iq + float(np.dot(-np.expm1(eps - losses[m]), q[m]))
        fft = float(composed.get_delta_for_epsilon(eps))
        assert fft >= direct - (P.FLOAT_MARGIN_REL * direct + P.FLOAT_MARGIN_ABS)


def test_rounds_grouped_and_monotone():
    a = P.pld_route([(1.0, 1000, 2), (1.0, 1000, 3)], 1e-6, "clones", None)
    b = P.pld_route([(1.0, 1000, 5)], 1e-6, "clones", None)
    assert a.value == b.value
    het = P.pld_route([(1.0, 1000, 5), (0.5, 2000, 5)], 1e-6, "clones", None)
    assert het.value > b.value
    assert het.details["grid_points"] and len(het.details["grid_points"]) == 2


def test_pld_tighter_than_rdp_for_many_rounds():
    res = comp.compose(eps0=1.0, n=10**5, T=100, delta=1e-6, orders=ORDERS)
    by = {b.method: b for b in res.bounds}
    assert by["pld"].kind == "upper" and by["pld"].value < by["rdp"].value
    assert res.best == "pld"


def test_not_applicable_cases():
    assert P.pld_route([(1.0, 100, 2)], 1e-13, "clones", None).kind == "not applicable"
    b = P.pld_route([(1.0, 100, 2)], 1e-6, "binary-rr-lower", None)
    assert b.kind == "not applicable" and "upper-bound" in b.validity


def test_missing_extra_gives_install_line(monkeypatch):
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name.startswith("dp_accounting"):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    b = P.pld_route([(1.0, 1000, 3)], 1e-6, "clones", None)
    assert b.kind == "not applicable" and b.value is None
    assert "pip install 'shuffle-accountant[pld]'" in b.validity
    with pytest.raises(interop.PldUnavailable, match=r"shuffle-accountant\[pld\]"):
        interop.shuffled_round_pld(1.0, 1000)
    r = CliRunner().invoke(main, ["compose", "--eps0", "1", "--n", "1000", "--T", "3", "--orders", "2,4,8"])
    assert r.exit_code == 0, r.output
    assert "pip install 'shuffle-accountant[pld]'" in r.output


def test_cli_pld_row_and_json():
    r = CliRunner().invoke(main, ["compose", "--eps0", "1", "--n", "1e4", "--T", "10", "--orders", "2,4,8,16,32",
                                  "--discretization", "2e-4", "--format", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    row = next(x for x in doc["results"] if x["method"] == "pld")
    assert row["kind"] == "upper" and row["value"] > 0
    assert row["details"]["discretization"] == 2e-4


def test_interop_compose_with_gaussian():
    """The documented example: a shuffled round composed with a Gaussian mechanism."""
    from dp_accounting.pld import privacy_loss_distribution as plm

    shuffled = interop.shuffled_round_pld(eps0=1.0, n=100_000)
    gauss = plm.from_gaussian_mechanism(50.0, value_discretization_interval=1e-4)
    both = shuffled.self_compose(10).compose(gauss.self_compose(10))
    e_both = both.get_epsilon_for_delta(1e-6)
    assert e_both >= shuffled.self_compose(10).get_epsilon_for_delta(1e-6)
    assert e_both >= gauss.self_compose(10).get_epsilon_for_delta(1e-6)
    with pytest.raises(Exception):
        interop.shuffled_round_pld(1.0, 1000, method="binary-rr-lower")
    orders, rdp = interop.shuffled_round_rdp(1.0, 1000, orders=[2, 8])
    assert orders == [2.0, 8.0] and all(0 < x <= 1.0 for x in rdp)


def test_mirrored_pair_helper_consistent():
    """ClonePair.mirrored swaps the orders: the add pmf of a pair is the remove pmf of
    its mirror (same grid, same numbers)."""
    sp = ScaledPair(ClonePair(7, 0.1, 0.3, 0.6, 0.4, 0.0))
    a = P.pair_pld(sp).pld
    b = P.pair_pld(ScaledPair(sp.pair.mirrored())).pld
    for eps in (-0.2, 0.0, 0.1, 0.3):
        assert a._pmf_add.get_delta_for_epsilon(eps) == pytest.approx(b._pmf_remove.get_delta_for_epsilon(eps), rel=1e-9, abs=1e-15)  # noqa: SLF001


# ---------------------------------------------------------------------------------------
# The vectorised grid of certified delta upper bounds, the tail and the auto grid.
# ---------------------------------------------------------------------------------------

GRID_CASES = [("clones", 1.0, 9, None), ("clones", 1.0, 2000, None), ("stronger-clones", 0.5, 300, None),
              ("krr", 2.0, 150, 5), ("binary-rr-lower", 1.5, 400, None), ("krr-lower", 2.0, 40, 4),
              ("clones", 3.0, 50_000, None)]


@pytest.mark.parametrize("method, eps0, n, k", GRID_CASES)
def test_grid_upper_matches_the_pointwise_block_bound(method, eps0, n, k):
    """``grid_upper`` (one sort of all outcomes by loss) against the block bound it replaces
    (``Direction.upper_on_grid``, a kernel per block and grid point) on the same partition:
    never below it beyond rounding, never above it by more than 1e-6 relative; and at or
    above the certified lower end of an independent refined bracket. (Below 1e-200 the
    error budgets of the two computations differ more; 1e-200 absolute covers it.)"""
    from shuffle_accountant.numeric.clones import HockeyStick

    sp = pair_for(method, eps0, n, k)
    for pair in ([sp.pair] if sp.pair.symmetric else [sp.pair, sp.pair.mirrored()]):
        d = HockeyStick(pair).direction()
        for x in np.linspace(0.0, 0.4 * eps0, 4):
            d.bounds(float(x), 1e-3)
        grid = np.arange(0.0, min(pair.max_log_ratio, 0.8 * eps0), 7e-4)
        new, old = P.grid_upper(d, grid), d.upper_on_grid(grid)
        assert np.all(new >= old * (1 - 1e-12))
        assert np.all(new <= old * (1 + 1e-6) + 1e-200)
        for e in grid[:: max(1, grid.size // 7)]:
            assert new[int(round(e / 7e-4))] >= HockeyStick(pair).direction().bounds(float(e), 1e-9).lower


@pytest.mark.parametrize("method, params", [("clones", oracle.clones_params), ("stronger-clones", oracle.stronger_clones_params)])
@pytest.mark.parametrize("cut_ratio", [None, 1e12])
def test_grid_upper_above_exact_delta(method, params, cut_ratio, monkeypatch):
    """Against the mpmath oracle (exact hockey-stick of the full pair) at small n, with the
    kernels as sorted atoms (default at these n) and all by closed-form cuts (grid points on
    and between the outcomes' ratios)."""
    from shuffle_accountant.numeric.clones import HockeyStick

    if cut_ratio is not None:
        monkeypatch.setattr(P, "CUT_RATIO", cut_ratio)
    for eps0, n in ((1.3, 7), (0.7, 25)):
        d = HockeyStick(pair_for(method, eps0, n).pair).direction()
        d.bounds(0.2, 1e-3)
        grid = np.arange(0.0, eps0, 0.01)
        up = P.grid_upper(d, grid)
        with mpmath.workdps(50):
            pair = oracle.clone_pair(n, *params(eps0))
        for e, u in zip(grid[::7], up[::7]):
            assert u >= _exact_hockey(pair, float(e)) - 1e-15


def test_tail_epsilon_is_certified():
    from shuffle_accountant.numeric.clones import HockeyStick

    for n in (50, 10_000):
        sp = pair_for("clones", 1.0, n)
        e = P.tail_epsilon(HockeyStick(sp.pair).direction(), sp.scale, 1e-18)
        assert 0.0 < e <= 1.0
        assert HockeyStick(sp.pair).bounds(e, 1e-6).upper <= 1e-18


@pytest.mark.parametrize("n, T", [(100, 10), (10_000, 1), (10_000, 100), (10**6, 30), (30, 3000)])
def test_auto_grid_not_looser_than_the_fixed_one(n, T):
    """The grid sized from the round (``discretization=None``) against the former fixed step
    1e-4: at most 2e-5 (relative) above it, and below it where 1e-4 was coarse (large n)."""
    auto = P.pld_route([(1.0, n, T)], 1e-6, "clones", None)
    fixed = P.pld_route([(1.0, n, T)], 1e-6, "clones", None, discretization=1e-4)
    assert auto.kind == fixed.kind == "upper"
    assert auto.value <= fixed.value * (1 + 2e-5)
    if n >= 10**6:
        assert auto.value < fixed.value
    lo, _ = api.epsilon(1.0, n, 1e-6).details["bracket"]
    if T == 1:
        assert auto.value >= lo


def test_cached_round_reused_and_identical():
    a = P.pld_route([(0.7, 3000, 5)], 1e-6, "clones", None)
    hits = P._pair_pld.cache_info().hits
    b = P.pld_route([(0.7, 3000, 50)], 1e-6, "clones", None)
    assert P._pair_pld.cache_info().hits == hits + 1
    assert a.details["discretization"] == b.details["discretization"] and b.value > a.value


# ---------------------------------------------------------------------------------------
# Kernels by closed-form cuts (long outcome lists), the real-FFT self-composition and the
# vectorised eps read-off.
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("method, eps0, n, k", [("clones", 1.0, 10**6, None), ("stronger-clones", 0.5, 2 * 10**5, None),
                                                ("krr", 2.0, 10**5, 5), ("binary-rr-lower", 1.5, 30_000, None),
                                                ("clones", 1.0, 3 * 10**8, None)])
def test_cut_grid_matches_atoms_and_pointwise(method, eps0, n, k, monkeypatch):
    """Kernels evaluated by closed-form cuts (``_cut_grid``) against the sorted atoms and
    against the pointwise block bound (``Direction.upper_on_grid``) on the same partition (the
    same bound with different rounding budgets: within 1e-5 and 1e-6), and at or above an
    independent refined certified lower end."""
    from shuffle_accountant.numeric.clones import HockeyStick

    sp = pair_for(method, eps0, n, k)
    for pair in ([sp.pair] if sp.pair.symmetric else [sp.pair, sp.pair.mirrored()]):
        d = HockeyStick(pair).direction()
        tail = P.tail_epsilon(d, 1.0, 1e-18)
        grid = np.arange(301) * (tail / 300)
        for x in np.linspace(0.0, tail, 4)[:-1]:
            d.bounds(float(x), 1e-3)
        monkeypatch.setattr(P, "CUT_RATIO", 1e12)  # every kernel by cuts
        cut = P.grid_upper(d, grid)
        monkeypatch.setattr(P, "CUT_RATIO", 0.0)  # every kernel by atoms (or pointwise when very long)
        atoms = P.grid_upper(d, grid)
        point = d.upper_on_grid(grid[::10])
        assert np.all(np.abs(cut - atoms) <= 1e-5 * atoms + 1e-200)  # the atoms charge 4u per atom of all kernels
        assert np.all(np.abs(cut[::10] - point) <= 1e-6 * point + 1e-200)
        for e in grid[::60]:
            assert cut[int(round(e / grid[1]))] >= HockeyStick(pair).direction().bounds(float(e), 1e-9).lower


def test_self_compose_and_epsilon_match_dp_accounting():
    """The real-FFT self-composition and the vectorised eps read-off against dp_accounting's
    own (complex FFT, Python loop): the same pmf up to FFT rounding, the same eps."""
    for eps0, n, T in ((1.0, 1000, 300), (0.5, 50, 40), (1.0, 10**5, 3)):
        r = P.round_pld(eps0, n, discretization=None)
        ours, theirs = P.compose_plds([(r.pld, T)]), r.pld.self_compose(T)
        assert 0.0 < ours.error < 1e-10
        for eps in (0.0, 0.1, 0.5, 1.0, 3.0):
            a, b = float(ours.pld.get_delta_for_epsilon(eps)), float(theirs.get_delta_for_epsilon(eps))
            assert a == pytest.approx(b, rel=1e-9, abs=1e-12)  # FFT rounding of either
        for delta in (1e-3, 1e-6, 1e-9):
            assert P._pmf_epsilon(theirs._pmf_remove, delta) == pytest.approx(  # noqa: SLF001
                theirs.get_epsilon_for_delta(delta), rel=1e-11, abs=1e-12)
            assert P.composed_epsilon(ours, delta)[0] == pytest.approx(  # FFT rounding moves delta ~1e-14
                theirs.get_epsilon_for_delta(delta - P.composed_epsilon(ours, delta)[1]), rel=1e-5)


def test_composed_size_refuses_large_compositions(monkeypatch):
    """The composed-grid estimate (made from each built round's mean loss) turns the PLD route
    into 'not applicable' with the reason; below the limit the route answers."""
    assert P.pld_route([(1.0, 1000, 50)], 1e-6, "clones", None).kind == "upper"
    monkeypatch.setattr(P, "MAX_COMPOSED_POINTS", 5000)
    b = P.pld_route([(1.0, 1000, 50)], 1e-6, "clones", None)
    assert b.kind == "not applicable" and "privacy-loss grid" in b.validity and "RDP route" in b.validity


def _exact_convolve(a: list, b: list) -> list:
    """Linear convolution in exact rationals."""
    out = [Fraction(0)] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                out[i + j] += x * y
    return out


def _l1_error(computed: np.ndarray, exact: list) -> Fraction:
    return sum((abs(Fraction(float(c)) - e) for c, e in zip(computed, exact)), Fraction(0))


@pytest.mark.parametrize("seed, size, times", [(0, 40, 6), (1, 25, 13), (2, 60, 3)])
def test_fft_power_error_bounds_the_true_rounding(seed: int, size: int, times: int) -> None:
    """The run-time bound on the self-composition's rounding (assumption (A)) against the exact
    rational T-fold convolution of the same floating-point pmf: it holds, and assumption (A)'s
    constant is measured with room to spare (the observed error per unit is far below FFT_ULPS)."""
    from scipy import fft

    rng = np.random.default_rng(seed)
    p = rng.random(size) ** 4
    p /= p.sum()
    length = fft.next_fast_len(times * (size - 1) + 1, real=True)
    spectrum = fft.rfft(p, length)
    powered = P._power(spectrum, times)  # noqa: SLF001
    out = fft.irfft(powered, length)[: times * (size - 1) + 1]
    exact = [Fraction(float(x)) for x in p]
    acc = exact
    for _ in range(times - 1):
        acc = _exact_convolve(acc, exact)
    err = float(_l1_error(out, acc))
    bound = P.fft_power_error(spectrum, powered, length, times, float(p.sum()), 0.0)
    assert err <= bound
    assert err <= 0.1 * bound  # the assumed constant is far from what is observed


def test_fft_product_error_bounds_the_true_rounding() -> None:
    """The bound on dp_accounting's fftconvolve of two dense pmfs against exact rationals."""
    from scipy import signal

    rng = np.random.default_rng(5)
    a, b = rng.random(300) ** 3, rng.random(170) ** 5
    a, b = a / a.sum(), b / b.sum()
    out = signal.fftconvolve(a, b)
    err = float(_l1_error(out, _exact_convolve([Fraction(float(x)) for x in a], [Fraction(float(x)) for x in b])))
    bound = P.fft_product_error(a, b, 0.0, 0.0)
    assert err <= 0.1 * bound
    assert P.fft_product_error(a, b, 1e-9, 2e-9) >= bound + 2.9e-9  # operand errors carried


@pytest.mark.parametrize("eps0, n", [(1.0, 10**4), (1.0, 10**6), (3.0, 1000), (0.3, 300)])
def test_connect_the_dots_rounding_within_round_float_error(eps0: float, n: int) -> None:
    """ROUND_FLOAT_ERROR is a measured charge: the delta implied by a round's floating-point
    Connect-the-Dots masses (summed in exact rationals) falls below the certified input delta by
    far less than it, at every grid point."""
    sp = pair_for("clones", eps0, n, None)
    tails = P.round_tails(sp, P.DEFAULT_TAIL)
    step = P.auto_discretization([tails])
    fwd = P.direction_profile(sp, False, step, P.DEFAULT_TAIL, P.PROFILE_RTOL, tails[0])
    rev = fwd if sp.pair.symmetric else P.direction_profile(sp, True, step, P.DEFAULT_TAIL, P.PROFILE_RTOL, tails[1])
    lo, deltas = P.pessimistic_deltas(fwd, rev)
    from dp_accounting.pld import pld_pmf

    pmf = pld_pmf.create_pmf_pessimistic_connect_dots_fixed_gap(step, lo, lo + deltas.size - 1, deltas).to_dense_pmf()
    probs = [Fraction(float(x)) for x in pmf._probs]  # noqa: SLF001
    first = pmf._lower_loss  # noqa: SLF001
    mp = mpmath.mp
    with mp.workdps(40):
        worst = mpmath.mpf(0)
        mass = [mpmath.mpf(x.numerator) / x.denominator for x in probs]
        # 1 - e^{-d step} for every gap d = j - i (the sum's factors depend on the gap only)
        gap = [-mpmath.expm1(-d * mpmath.mpf(step)) for d in range(len(probs))]
        for i in range(0, len(probs) - 1, max(1, len(probs) // 150)):
            implied = mpmath.mpf(pmf._infinity_mass) + mpmath.fsum(  # noqa: SLF001
                mass[j] * gap[j - i] for j in range(i + 1, len(probs)))
            k = first + i - lo
            if 0 <= k < deltas.size:
                worst = max(worst, mpmath.mpf(float(deltas[k])) - implied)
    assert worst <= 0.1 * P.ROUND_FLOAT_ERROR


def test_fft_error_charged_and_refused_when_not_small() -> None:
    """The composed error bound is part of the margin (so the answer is the eps at delta - margin),
    and a composition whose bound is not small against delta is 'not applicable' with the reason."""
    ok = P.pld_route([(1.0, 10**4, 10**4)], 1e-6, "clones", None)
    assert ok.kind == "upper"
    assert ok.details["float_margin"] >= ok.details["fft_error_bound"] + P.FLOAT_MARGIN_REL * 1e-6
    assert ok.details["fft_error_bound"] >= 10**4 * P.ROUND_FLOAT_ERROR
    refused = P.pld_route([(1.0, 10**4, 10**4)], 3e-10, "clones", None)
    assert refused.kind == "not applicable" and "floating-point error bound" in refused.validity

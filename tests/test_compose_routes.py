"""compose / renyi: API and CLI."""

from __future__ import annotations

import json

import mpmath
import oracle
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from click.testing import CliRunner

from shuffle_accountant import composition as comp
from shuffle_accountant.cli import main

ORDERS = [1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64]


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_two_rounds_at_or_above_exact_product():
    eps0, n, delta = 1.0, 4, 1e-3
    res = comp.compose(eps0=eps0, n=n, T=2, delta=delta, orders=ORDERS)
    with mpmath.workdps(50):
        pair = oracle.clone_pair(n, *oracle.clones_params(eps0))
        exact = oracle.epsilon_exact(oracle.product_pair(pair, pair), delta)
    for b in res.bounds:
        if b.applicable:
            assert b.value >= exact


def test_epsilon_non_decreasing_in_T():
    vals = [comp.compose(eps0=1.0, n=1000, T=T, orders=ORDERS).bounds[0].value for T in (1, 2, 5, 20)]
    assert vals == sorted(vals)


def test_rdp_one_round_at_most_eps0_and_interop_shape():
    c = comp.rdp_curve(2.0, 500, orders=[2, 8])
    orders, rdp = c.as_dp_accounting()
    assert orders == [2.0, 8.0] and all(0 < r <= 2.0 for r in rdp)
    assert all(b.kind == "upper" for b in c.bounds)


def test_cks_matches_dp_accounting_when_installed():
    rdp_acc = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")
    c = comp.rdp_curve(1.0, 10**4, orders=ORDERS)
    ours, _ = comp.cks_epsilon(c.orders, [100 * r for r in c.upper], 1e-6)
    theirs, _ = rdp_acc.compute_epsilon(c.orders, [100 * r for r in c.upper], 1e-6)
    assert ours == pytest.approx(theirs, rel=1e-6)


@pytest.mark.parametrize("fmt", ["text", "json", "csv", "markdown"])
def test_renyi_cli_formats(fmt):
    r = run("renyi", "--eps0", 1, "--n", "1e4", "--orders", "2,4", "--format", fmt)
    assert r.exit_code == 0, r.output
    if fmt == "json":
        doc = json.loads(r.output)
        assert [x["kind"] for x in doc["results"]] == ["upper", "upper"]


def test_compose_cli_homogeneous_and_file(tmp_path):
    r = run("compose", "--eps0", 1, "--n", 1000, "--T", 10, "--orders", "2,4,8,16,32", "--format", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["summary"]["best"] in ("rdp", "pld", "advanced")
    pld_rows = [x for x in doc["results"] if x["method"] == "pld"]
    assert len(pld_rows) == 1
    # with the extra the PLD route is a certified upper bound; without it the row says how to get it
    assert pld_rows[0]["kind"] == "upper" or "shuffle-accountant[pld]" in pld_rows[0]["validity"]
    f = tmp_path / "rounds.csv"
    f.write_text("eps0,n,count\n1,1000,5\n0.5,2000,5\n")
    r = run("compose", "--rounds-file", f, "--orders", "2,4,8,16,32")
    assert r.exit_code == 0, r.output
    assert "Theorem 3.5" in r.output
    g = tmp_path / "rounds.json"
    g.write_text(json.dumps([{"eps0": 1, "n": 1000, "count": 5}, {"eps0": 0.5, "n": 2000, "count": 5}]))
    r2 = run("compose", "--rounds-file", g, "--orders", "2,4,8,16,32")
    assert r2.exit_code == 0 and r2.output == r.output


@pytest.mark.parametrize("args", [
    ("renyi", "--eps0", 1, "--n", 100, "--orders", "0.5,2"),
    ("renyi", "--eps0", "nan", "--n", 100),
    ("compose", "--eps0", 1, "--n", 100),
    ("compose", "--eps0", 1, "--n", 100, "--T", 2, "--method", "binary-rr-lower"),
])
def test_bad_input_one_line_exit_2(args):
    r = run(*args)
    assert r.exit_code == 2
    assert len(r.output.strip().splitlines()) == 1


def _kov_delta(eps, k, dr, g):
    """``1 - (1-dr)^k (1 - delta_RR(g))`` for k-fold binary randomized response (KOV15 Theorem
    3.3), summed term by term in mpmath (no code shared with the fast path)."""
    with mpmath.workdps(60):
        e, g = mpmath.mpf(eps), mpmath.mpf(g)
        p = mpmath.e**e / (1 + mpmath.e**e)
        q = 1 - p
        d_rr = mpmath.fsum(max(mpmath.mpf(0), mpmath.binomial(k, l) * (p ** (k - l) * q**l - mpmath.e**g * p**l * q ** (k - l)))
                           for l in range(k + 1))
        return 1 - (1 - mpmath.mpf(dr)) ** k * (1 - d_rr)


@pytest.mark.parametrize("eps, dr, k, delta", [(0.5, 1e-8, 20, 1e-6), (0.1, 1e-9, 30, 1e-5), (2.0, 1e-10, 3, 1e-6),
                                               (1.0, 1e-7, 1, 1e-6), (0.05, 1e-12, 25, 1e-4)])
def test_optimal_composition_against_mpmath(eps, dr, k, delta):
    """KOV15 Theorem 3.3 by the fast search (prefix-sum start, term-by-term check): the returned
    eps meets delta by an mpmath brute force, and 1e-8 below it does not (it is tight)."""
    e = comp.optimal_composition_epsilon(eps, dr, k, delta)
    assert _kov_delta(eps, k, dr, e) <= delta
    if e > 0:
        assert _kov_delta(eps, k, dr, e * (1 - 1e-8)) > delta


def test_advanced_route_shares_one_profile_and_matches_api():
    """The advanced route's per-round eps (one shared profile for the five splits of delta) is
    api.epsilon's certified upper end at each split, to the search's rtol."""
    from shuffle_accountant import api

    b = comp._advanced_route((comp.Round(1.0, 2000, 10),), 1e-6, "clones", None, {})
    d_round = b.details["delta_per_round"]
    single = api.epsilon(1.0, 2000, d_round).value
    assert b.details["eps_per_round"][0] == pytest.approx(single, rel=2e-6)
    lo = api.epsilon(1.0, 2000, d_round).details["bracket"][0]
    assert b.details["eps_per_round"][0] >= lo


# --- the RDP route evaluates a prefix of the orders and rules the rest out -------------------------

def _rr_rdp(eps: float, orders: np.ndarray) -> np.ndarray:
    """Exact RDP of binary randomized response (mpmath, 50 digits): D_alpha = log(p^a q^(1-a) +
    q^a p^(1-a)) / (a - 1), p = e^eps / (1 + e^eps)."""
    with mpmath.workdps(50):
        p = mpmath.e ** eps / (1 + mpmath.e ** eps)
        q = 1 - p
        return np.array([float(mpmath.log(p ** a * q ** (1 - a) + q ** a * p ** (1 - a)) / (a - 1))
                         for a in (mpmath.mpf(x) for x in orders)])


@settings(max_examples=40, deadline=None)
@given(eps=st.floats(0.01, 5.0), weights=st.lists(st.floats(0.1, 10.0), min_size=1, max_size=3),
       known=st.lists(st.integers(0, 39), min_size=1, max_size=8, unique=True), slack=st.floats(0.0, 0.1))
def test_rdp_lower_envelope_below_exact_curve(eps, weights, known, slack):
    """Sums of exact RDP curves (several rounds), brackets widened by ``slack``: the envelope at
    every other order is at most the exact value (monotone + convex (alpha - 1) D_alpha)."""
    orders = np.asarray(comp.DEFAULT_ORDERS)
    exact = sum(w * _rr_rdp(eps * (1 + 0.3 * i), orders) for i, w in enumerate(weights))
    known_idx = np.array(sorted(known))
    rest = np.setdiff1d(np.arange(orders.size), known_idx)
    env = comp.rdp_lower_envelope(orders, known_idx, exact[known_idx] * (1 + slack), exact[known_idx] * (1 - slack), rest)
    assert np.all(env <= exact[rest] * (1 + 1e-9) + 1e-15)
    assert np.all(env >= 0.0)


def test_rdp_lower_envelope_uses_convexity():
    """A Gaussian-like curve D = alpha mu: the last secant of (alpha - 1) D extended to the orders
    above gives more than monotonicity alone (the last known value), and never more than D."""
    orders = np.asarray(comp.DEFAULT_ORDERS)
    curve = 0.01 * orders
    known, rest = np.arange(10), np.arange(10, 40)
    env = comp.rdp_lower_envelope(orders, known, curve[known], curve[known], rest)
    assert np.all(env <= curve[rest] * (1 + 1e-12))
    secant = curve[9] + (orders[rest] - orders[9]) * ((orders[9] - 1) * curve[9] - (orders[8] - 1) * curve[8]) / (
        orders[9] - orders[8]) / (orders[rest] - 1) - curve[9] * (orders[rest] - orders[9]) / (orders[rest] - 1)
    assert np.allclose(env, secant, rtol=1e-9) and env[-1] > 1.5 * curve[9]


@pytest.mark.parametrize("eps0, n, T, delta", [(1.0, 3000, 100, 1e-6), (0.5, 10**5, 10**4, 1e-8), (3.0, 1000, 2, 1e-6),
                                               (1.0, 30, 2, 1e-10), (3.0, 10**7, 10, 1e-6)])
def test_rdp_route_matches_all_orders(eps0, n, T, delta):
    """The route's eps equals the CKS20 minimum over every order's curve (the curves' brackets
    are to rtol 1e-3 whichever orders are evaluated together: within 1e-4 here), the orders left
    out are listed and none of them could have been below it."""
    orders = np.asarray(comp.DEFAULT_ORDERS)
    b = comp._rdp_route((comp.Round(eps0, n, T),), delta, "clones", None, orders, 1e-3, {})
    curve = comp.rdp_curve(eps0, n, orders=orders, rtol=1e-3)
    full, _ = comp.cks_epsilon(orders, T * np.asarray(curve.upper), delta)
    assert b.value == pytest.approx(full, rel=1e-4)
    out = b.details.get("orders_ruled_out", [])
    assert sorted(b.details["orders"] + out) == orders.tolist() and len(b.details["rdp"]) == len(b.details["orders"])
    if out:
        idx = np.searchsorted(orders, out)
        lower = T * np.asarray(curve.lower)[idx] + comp.cks_offset(orders[idx], delta)
        assert np.all(lower >= b.value * (1 - 1e-3))


def test_rdp_route_falls_back_to_every_order_when_the_guess_is_low(monkeypatch):
    """A guess far too low (a huge loss scale: the smallest orders) cannot rule out the orders
    above, so every order is evaluated: the value of the whole curve, exactly."""
    orders = np.asarray(comp.DEFAULT_ORDERS)
    monkeypatch.setattr(comp, "_composed_loss_guess", lambda *a: 1e6)
    b = comp._rdp_route((comp.Round(1.0, 10**4, 10),), 1e-6, "clones", None, orders, 1e-3, {})
    curve = comp.rdp_curve(1.0, 10**4, orders=orders, rtol=1e-3)
    full, best = comp.cks_epsilon(orders, 10 * np.asarray(curve.upper) * (1 + 1e-13), 1e-6)
    assert b.value == full and b.details["best_order"] == best and "orders_ruled_out" not in b.details


@pytest.mark.parametrize("converged, floor_limited, expect", [
    (True, False, None),
    (False, False, "stopped short of rtol"),
    (False, True, "floating point limits the resolution"),
])
def test_rdp_curve_warns_when_not_converged(monkeypatch, converged, floor_limited, expect):
    """A curve that stopped short of rtol (work limit, stalled rounds, or the rounding floor) says so:
    the numbers are still upper bounds, but the user is told they may be loose; a converged curve
    carries no warning."""
    from shuffle_accountant.numeric.renyi import RenyiBounds

    def fake(pair, alpha, rtol, scale):
        a = tuple(float(x) for x in alpha)
        return RenyiBounds(a, tuple(0.2 for _ in a), tuple(0.1 for _ in a), converged, 1, 1, floor_limited)

    monkeypatch.setattr(comp, "renyi_bounds", fake)
    curve = comp.rdp_curve(1.0, 1000, orders=[2.0, 4.0])
    for b in curve.bounds:
        if expect is None:
            assert b.warnings == ()
        else:
            assert len(b.warnings) == 1 and expect in b.warnings[0]
    assert [b.value for b in curve.bounds] == [0.2, 0.2]
    assert curve.converged is converged

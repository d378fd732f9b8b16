"""Inverse solvers: the answer meets the target by the forward computation, and one step
further does not (issue 4)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from shuffle_accountant import api, planning
from shuffle_accountant.cli import main

SETTINGS = settings(max_examples=8, deadline=None)


@SETTINGS
@given(st.floats(0.05, 2.0), st.sampled_from([1e-5, 1e-8]), st.integers(100, 10**7),
       st.sampled_from(["clones", "stronger-clones"]))
def test_solve_eps0_meets_target_and_next_step_does_not(eps, delta, n, method):
    b = planning.solve_eps0(eps, delta, n, method, rtol=1e-5)
    assert b.kind == "lower"
    assert api.delta(b.value, n, eps, method).value <= delta
    assert api.epsilon(b.value, n, delta, method, rtol=1e-6).value <= eps * (1 + 1e-6)
    if b.value < api.MAX_EPS0 / 2:
        assert api.delta(b.value * (1 + 1e-5), n, eps, method).value > delta


@SETTINGS
@given(st.floats(0.02, 1.0), st.sampled_from([1e-5, 1e-8]), st.floats(0.5, 6.0),
       st.sampled_from(["clones", "stronger-clones", "closed-form"]))
def test_solve_n_meets_target_and_one_fewer_does_not(eps, delta, eps0, method):
    try:
        b = planning.solve_n(eps, delta, eps0, method)
    except Exception as exc:  # only a clear refusal is acceptable
        assert "does not certify" in str(exc)
        return
    n = b.value
    assert isinstance(n, int) and b.kind == "upper"
    assert api.delta(eps0, n, eps, method).value <= delta
    if n > 1:
        prev = api.delta(eps0, n - 1, eps, method)
        assert prev.value is None or prev.value > delta


def test_solve_eps0_closed_form_round_trip():
    b = planning.solve_eps0(1.0, 1e-6, 10**5, "closed-form")
    assert api.epsilon(b.value, 10**5, 1e-6, "closed-form").value <= 1.0


def test_solve_refuses_lower_bound_methods():
    with pytest.raises(ValueError, match="upper-bound method"):
        planning.solve_n(0.1, 1e-6, 1.0, "binary-rr-lower")


def test_solve_cli_family_consistent_records():
    runner = CliRunner()
    outs = {}
    for args in (["eps0", "--eps", "1", "--delta", "1e-6", "--n", "1e5"],
                 ["n", "--eps", "0.1", "--delta", "1e-6", "--eps0", "2"],
                 ["eps", "--delta", "1e-6", "--eps0", "2", "--n", "1e5"],
                 ["delta", "--eps", "0.1", "--eps0", "2", "--n", "1e5"]):
        r = runner.invoke(main, ["solve", *args, "--format", "json"])
        assert r.exit_code == 0, r.output
        rec = json.loads(r.output)["results"][0]
        assert set(rec) >= {"quantity", "value", "kind", "method", "citation", "inputs"}
        outs[args[0]] = rec
    assert outs["eps"]["value"] == api.epsilon(2, 10**5, 1e-6).value
    r = runner.invoke(main, ["solve", "n", "--eps", "0.1", "--delta", "2", "--eps0", "2"])
    assert r.exit_code == 2 and "--delta" in r.output


def test_solve_n_with_rounds_rechecks_by_composition():
    """--rounds: the answer meets the target after T composed rounds (tightest certified
    route of compose) and one user fewer does not."""
    from shuffle_accountant.composition import compose

    b = planning.solve_n(1.5, 1e-6, 1.0, "clones", rounds=3)
    n = b.value
    assert b.inputs["rounds"] == 3 and b.details["certified_eps"] <= 1.5

    def best(n_):
        c = compose(eps0=1.0, n=n_, T=3, delta=1e-6, method="clones", orders=planning.SOLVER_ORDERS)
        return next(x for x in c.bounds if x.method == c.best).value

    assert best(n) <= 1.5 < best(n - 1)


def test_rounds_and_delta0_together_refused():
    with pytest.raises(ValueError, match="rounds"):
        planning.solve_n(1.0, 1e-6, 1.0, "clones", delta0=1e-12, rounds=2)


# ---------------------------------------------------------------------------------------
# --rounds: the bracketed, predicted and certified search against the plain search over compose
# ---------------------------------------------------------------------------------------

def _compose_best(eps0, n, T, delta, method="clones"):
    from shuffle_accountant.composition import compose

    c = compose(eps0=eps0, n=int(n), T=T, delta=delta, method=method, orders=planning.SOLVER_ORDERS)
    return next(x for x in c.bounds if x.method == c.best).value


@pytest.mark.parametrize("eps, eps0, T", [(1.0, 1.0, 4), pytest.param(0.6, 2.0, 25, marks=pytest.mark.slow)])
def test_solve_n_rounds_equals_the_plain_search(eps, eps0, T):
    """The answer is compose's own integer boundary: compose certifies it and not one user
    fewer (checked here by calling compose), and it is the boundary the plain search
    (monotone_boundary over full compose evaluations, the path this replaces) finds."""
    from shuffle_accountant.numeric.search import monotone_boundary

    b = planning.solve_n(eps, 1e-6, eps0, "clones", rounds=T)
    n = b.value
    assert _compose_best(eps0, n, T, 1e-6) <= eps < _compose_best(eps0, n - 1, T, 1e-6)
    assert b.details["certified_eps"] <= eps and b.details["previous_value"] > eps
    assert b.details["certified_by"] in planning.ROUTES
    plain = monotone_boundary(lambda x: _compose_best(eps0, x, T, 1e-6) <= eps, float(n) * 2, feasible_side="high",
                              low=1, high=10**7, integer=True)
    assert plain.feasible == n


@pytest.mark.parametrize("eps, n, T, rtol", [(1.0, 3000, 10, 1e-3),
                                             pytest.param(0.5, 20_000, 30, 1e-6, marks=pytest.mark.slow)])
def test_solve_eps0_rounds_certified_and_agrees_with_plain_search(eps, n, T, rtol):
    from shuffle_accountant.numeric.search import monotone_boundary

    b = planning.solve_eps0(eps, 1e-6, n, "clones", rtol=rtol, rounds=T)
    e0, nxt = b.value, b.details["next_eps0"]
    assert _compose_best(e0, n, T, 1e-6) <= eps < _compose_best(nxt, n, T, 1e-6)
    assert nxt <= e0 * (1 + 1.0001 * rtol)
    plain = monotone_boundary(lambda x: _compose_best(x, n, T, 1e-6) <= eps, e0, feasible_side="low",
                              low=1e-12, high=700.0, rtol=rtol)
    assert abs(plain.feasible - e0) <= 2 * rtol * e0


def test_composed_routes_match_compose():
    """ComposedRounds evaluates compose's own route functions: same values as compose."""
    from shuffle_accountant.composition import compose

    cr = planning.ComposedRounds(7, 1e-6, "clones", None)
    c = compose(eps0=1.3, n=5000, T=7, delta=1e-6, orders=planning.SOLVER_ORDERS)
    for b in c.bounds:
        assert cr.value(b.method, 1.3, 5000) == (b.value if b.applicable else float("inf"))
    ok, value, route = cr.decide(1.3, 5000, 10.0)
    assert ok and route == "pld" and value == cr.value("pld", 1.3, 5000)


@pytest.mark.parametrize("eps0, n, T, delta, method, k", [
    (1.0, 5000, 7, 1e-6, "clones", None),
    (2.0, 2000, 300, 1e-8, "stronger-clones", None),
    (0.5, 10**5, 50, 1e-6, "clones", None),
    (3.0, 300, 2, 1e-5, "krr", 4),
])
def test_route_lower_bounds_are_below_the_route_values(eps0, n, T, delta, method, k):
    """ComposedRounds.lower is a certified lower bound on each route's value (the decision
    skips a route on it), and is not vacuous where it is meant to be used."""
    cr = planning.ComposedRounds(T, delta, method, k)
    for route in ("rdp", "advanced"):
        low, full = cr.lower(route, eps0, n), cr.value(route, eps0, n)
        assert 0.0 <= low <= full
        if full < float("inf"):
            assert low >= 0.8 * full  # coarse, but close enough to rule a route out
    assert cr.lower("pld", eps0, n) == 0.0


@pytest.mark.parametrize("eps0, n, T, delta, eps", [
    (2.0, 166804, 100, 1e-8, 0.5),  # PLD just above eps: rdp and advanced ruled out by their lower bounds
    (1.0, 5000, 7, 1e-6, 0.2),
    (1.0, 2000, 10000, 1e-6, 5.0),  # many rounds
    (0.8, 3000, 20, 1e-6, 10.0),
])
def test_decide_with_lower_bounds_equals_full_decision(eps0, n, T, delta, eps, monkeypatch):
    """Skipping routes by their lower bounds never changes a decision, its value or its route
    (the full decision evaluates every route until one certifies)."""
    cr = planning.ComposedRounds(T, delta, "clones", None)
    got = cr.decide(eps0, n, eps)
    full = planning.ComposedRounds(T, delta, "clones", None)
    monkeypatch.setattr(full, "lower", lambda route, e0, n_: 0.0)
    assert got == full.decide(eps0, n, eps)

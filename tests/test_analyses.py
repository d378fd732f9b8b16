"""The method registry (analyses.py): capabilities, dispatch, plug-in registration."""

from __future__ import annotations

import math

import pytest

from shuffle_accountant import analyses, api
from shuffle_accountant.comparators import Outcome
from shuffle_accountant.errors import InvalidParameter


def test_every_method_declares_how_it_computes() -> None:
    for m in analyses.all_methods().values():
        assert m.numerical == (m.profile is not None)
        assert m.numerical or (m.closed_epsilon is not None and m.closed_delta is not None)


def test_invalid_method_objects_are_refused() -> None:
    with pytest.raises(ValueError):
        analyses.Method("x", "upper", True, "c", "a")  # neither a profile nor closed forms
    with pytest.raises(ValueError):
        analyses.Method("x", "sideways", True, "c", "a", closed_epsilon=lambda q, d, r: Outcome(1.0),
                        closed_delta=lambda q, e: Outcome(1.0))


def test_registered_method_is_used_by_the_api(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(analyses, "METHODS", dict(analyses.METHODS))
    toy = analyses.Method(
        "toy-trivial", "upper", True, "the trivial bound: shuffling is post-processing", "any eps0-DP randomizer",
        closed_epsilon=lambda q, delta, rtol: Outcome(q.eps0),
        closed_delta=lambda q, eps: Outcome(0.0 if eps >= q.eps0 else 1.0),
    )
    analyses.register_method(toy)
    assert api.epsilon(2.0, 100, 1e-6, "toy-trivial").value == 2.0
    assert api.delta(2.0, 100, 1.0, "toy-trivial").value == 1.0
    assert "toy-trivial" in [m.name for m in api.methods()]
    with pytest.raises(InvalidParameter, match="already registered"):
        analyses.register_method(toy)


def test_unknown_method_is_refused_with_the_choices() -> None:
    with pytest.raises(InvalidParameter, match="unknown method 'cloness'.*clones"):
        api.epsilon(1.0, 100, 1e-6, "cloness")


def test_theorem_3_8_delta_beyond_eps0_is_delta0_not_zero() -> None:
    """Regression: with (eps0, delta0)-DP randomizers, (eps >= eps0, 0) was claimed."""
    b = api.delta(1.0, 10**5, 1.5, "closed-form", delta0=1e-9)
    assert b.value == pytest.approx(1e-9)
    assert api.delta(1.0, 10**5, 1.5, "closed-form").value == 0.0


def test_theorem_3_8_split_is_feasible() -> None:
    eps0, n, delta, delta0 = 1.0, 10**5, 1e-6, 1e-12
    b = api.epsilon(eps0, n, delta, "closed-form", delta0=delta0)
    d_pure = b.details["delta_pure"]
    assert api.closed_form_regime(eps0, n, d_pure)
    assert d_pure + api.delta0_penalty(eps0, n, delta0)(b.value) <= delta
    assert b.value == pytest.approx(api.closed_form_epsilon(eps0, n, d_pure))
    assert b.value > api.epsilon(eps0, n, delta, "closed-form").value
    assert math.isfinite(b.value)


def test_variation_ratio_is_refused_with_the_counterexample() -> None:
    with pytest.raises(InvalidParameter, match=r"not offered.*2\.9867"):
        api.epsilon(3.0, 100, 1e-6, "variation-ratio", k=3)


def test_variation_ratio_counterexample_holds_in_the_oracle() -> None:
    """The refusal's numbers, recomputed by the independent oracle: the third-value pair
    (what the VLDB'24 bound reduces to for k-RR) is exceeded by the dataset where all other
    users hold x1 (n = 100, eps0 = 3, k = 3, delta = 1e-6)."""
    import mpmath

    from oracle_blanket import epsilon_from, krr_family_delta

    n, k, eps0, delta = 100, 3, 3.0, 1e-6
    all_x1 = epsilon_from(lambda e: krr_family_delta(n, k, eps0, e, n - 1), delta, 0.0, eps0)
    third = api.epsilon(eps0, n, delta, "krr-lower", k=k)
    assert float(all_x1) == pytest.approx(2.98665, abs=1e-4)
    assert third.details["bracket"][1] == pytest.approx(2.70276, abs=1e-4)
    assert float(all_x1) > third.details["bracket"][1] + 0.25
    assert mpmath.mpf(all_x1) <= eps0


@pytest.mark.parametrize(("eps0", "n"), [(0.5, 10**4), (1.0, 10**4), (2.0, 10**4), (4.0, 10**6), (1.0, 30)])
def test_generic_lower_is_the_best_attained_value_and_below_the_upper_bounds(eps0: float, n: int) -> None:
    g = api.epsilon(eps0, n, 1e-6, "generic-lower").value
    parts = [api.epsilon(eps0, n, 1e-6, "binary-rr-lower").value, api.epsilon(eps0, n, 1e-6, "krr-lower", k=3).value]
    assert g == pytest.approx(max(parts), rel=2e-6)
    assert g <= api.epsilon(eps0, n, 1e-6, "stronger-clones").value


@pytest.mark.parametrize(("eps0", "n", "delta"), [(0.3, 300, 1e-6), (1.0, 10**4, 1e-10), (3.0, 10**5, 1e-6),
                                                  (8.0, 10, 1e-6), (2.0, 10**6, 1e-8)])
def test_max_profile_searched_part_by_part_matches_the_search_on_the_max(eps0: float, n: int, delta: float) -> None:
    """api.epsilon searches a MaxProfile part by part (eps of a max = max of the eps): its
    bracket must intersect the certified bracket of one search on the max profile itself."""
    from shuffle_accountant.numeric.profile import MaxProfile
    from shuffle_accountant.numeric.search import epsilon_for_delta

    b = api.epsilon(eps0, n, delta, "generic-lower")
    lo, hi = b.details["bracket"]
    whole = epsilon_for_delta(MaxProfile(analyses.profile_for("binary-rr-lower", eps0, n),
                                         analyses.profile_for("krr-lower", eps0, n, 3)), delta, 1e-6)
    assert lo <= whole.upper and whole.lower <= hi
    assert hi - lo <= 1e-6 * hi


def test_generic_lower_never_exceeds_the_exact_worst_case_of_3rr() -> None:
    """Against the independent oracle: the attained value is at most shuffled 3-RR's exact
    worst case over all datasets (and 3-RR is an eps0-DP randomizer)."""
    from oracle_blanket import krr_worst_delta

    for eps0, n, eps in [(1.0, 8, 0.3), (2.0, 10, 0.5), (3.0, 6, 1.0)]:
        b = api.delta(eps0, n, eps, "generic-lower")
        worst3 = float(krr_worst_delta(n, 3, eps0, eps))
        worst2 = float(krr_worst_delta(n, 2, eps0, eps))
        assert b.value <= max(worst2, worst3) * (1 + 1e-9)
        assert b.value > 0.0

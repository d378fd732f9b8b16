"""The API with a randomizer: mechanism-aware rows (blanket, dataset-lower) beside the
generic ones, checked against the independent oracle (tests/oracle_blanket.py)."""

from __future__ import annotations

import pytest

from shuffle_accountant import api
from shuffle_accountant.errors import InvalidParameter
from shuffle_accountant.randomizers import make_randomizer
from oracle_blanket import blanket_delta, oue_matrix, sue_matrix, worst_delta


@pytest.mark.parametrize(("name", "matrix"), [("oue", oue_matrix), ("sue", sue_matrix)])
@pytest.mark.parametrize("eps", [0.1, 0.6])
def test_blanket_row_is_the_blanket_bound_and_covers_every_dataset(name: str, matrix, eps: float) -> None:
    eps0, n, k = 1.5, 4, 3
    r = make_randomizer(name, eps0, k=k)
    b = api.delta(eps0, n, eps, "blanket", randomizer=r)
    exact_blanket = float(blanket_delta(matrix(k, eps0), n, eps))
    worst = float(worst_delta(matrix(k, eps0), n, eps))
    assert b.kind == "upper"
    assert b.value >= exact_blanket * (1 - 1e-12) >= worst * (1 - 1e-12)
    assert b.value <= exact_blanket * (1 + 1e-6) + 1e-15


def test_comparison_with_a_randomizer_uses_its_own_bounds() -> None:
    r = make_randomizer("oue", 1.0, k=10)
    c = api.compare_epsilon(1.0, 10_000, 1e-6, methods=["blanket", "stronger-clones", "binary-rr-lower"], randomizer=r)
    rows = {b.method: b for b in c.bounds}
    assert rows["blanket"].value <= rows["stronger-clones"].value
    assert c.best_upper is rows["blanket"]
    assert c.best_lower is None  # binary RR's floor is no lower bound for unary encoding
    assert rows["blanket"].inputs["randomizer"].startswith("oue(")


def test_krr_only_methods_do_not_apply_to_other_randomizers() -> None:
    r = make_randomizer("oue", 1.0, k=10)
    b = api.epsilon(1.0, 1000, 1e-6, "krr", randomizer=r)
    assert b.kind == "not applicable" and "k-ary randomized response only" in b.validity
    lower = api.epsilon(1.0, 1000, 1e-6, "dataset-lower", randomizer=r)
    assert lower.kind == "lower"
    assert lower.value <= api.epsilon(1.0, 1000, 1e-6, "blanket", randomizer=r).value


def test_inconsistent_inputs_are_refused() -> None:
    r = make_randomizer("krr", 1.0, k=10)
    with pytest.raises(InvalidParameter, match="differs from the randomizer's eps0"):
        api.epsilon(2.0, 1000, 1e-6, "blanket", randomizer=r)
    with pytest.raises(InvalidParameter, match="differs from the randomizer's k"):
        api.epsilon(1.0, 1000, 1e-6, "krr", k=5, randomizer=r)
    with pytest.raises(InvalidParameter, match="needs a randomizer"):
        api.epsilon(1.0, 1000, 1e-6, "blanket")

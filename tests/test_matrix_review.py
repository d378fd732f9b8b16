"""Matrix randomizers: the defects found by review rev94m (2026-11-24), each against an exact value
computed here in rational / 50-digit arithmetic from the normalised matrix (sharing no code with the
package), or against the CLI's exit codes."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from click.testing import CliRunner

from shuffle_accountant import api
from shuffle_accountant.cli import main
from shuffle_accountant.numeric.dataset_lower import DatasetLowerProfile
from shuffle_accountant.randomizers import MAX_MATRIX_INPUTS, MatrixRandomizer


def _normalised(m: np.ndarray) -> list[list[Fraction]]:
    rows = [[Fraction(float(x)) for x in row] for row in m]
    return [[x / sum(row) for x in row] for row in rows]


def _tv(m: np.ndarray, i: int, j: int) -> Fraction:
    """delta(0) of n = 1 user (no shuffling): the total variation distance of two rows."""
    rows = _normalised(m)
    return sum((max(a - b, Fraction(0)) for a, b in zip(rows[i], rows[j])), Fraction(0))


def _eps0_exact(m: np.ndarray) -> mpmath.mpf:
    rows = _normalised(m)
    with mpmath.workdps(50):
        return max(mpmath.log(mpmath.mpf(max(col).numerator) / max(col).denominator)
                   - mpmath.log(mpmath.mpf(min(col).numerator) / min(col).denominator) for col in zip(*rows))


@pytest.mark.parametrize("z", [30.0, 35.0])
def test_dataset_lower_with_a_near_one_class_probability_stays_below_the_exact_value(z: float) -> None:
    # the reflected binomial had p = 1 - e^-z, whose complement Boost rebuilt from p: 5.6 % off at z = 35, and an
    # attained delta above 1
    e = math.exp(-z)
    m = np.array([[1 - 2 * e, e, e], [e, 1 - 2 * e, e], [e, e, 1 - 2 * e]])
    got = DatasetLowerProfile(MatrixRandomizer(m), 1).bounds(0.0)
    exact = max(_tv(m, i, j) for i in range(3) for j in range(3) if i != j)
    assert got.lower <= exact
    assert got.lower >= float(exact) * (1 - 1e-9)  # (and still tight)


def test_dataset_lower_of_a_moderate_matrix_stays_below_the_total_variation() -> None:
    t = 1e-9
    m = np.array([[1 - 3 * t, t, 2 * t], [1 - 3 * t, 2 * t, t]])
    r = MatrixRandomizer(m)
    got = api.delta(r.eps0, 1, 0.0, method="dataset-lower", randomizer=r).value
    assert got is not None and got <= max(_tv(m, 0, 1), _tv(m, 1, 0))


def test_delta_cli_of_a_far_matrix_does_not_crash(tmp_path) -> None:
    e = math.exp(-30)
    f = tmp_path / "far.csv"
    f.write_text("\n".join(",".join(repr(x) for x in row) for row in
                          [[1 - 2 * e, e, e], [e, 1 - 2 * e, e], [e, e, 1 - 2 * e]]))
    res = CliRunner().invoke(main, ["delta", "--randomizer-file", str(f), "--n", "1", "--eps", "0"])
    assert res.exit_code == 0, res.output


def test_the_eps0_cap_of_a_matrix_is_its_exact_eps0_rounded_up() -> None:
    # the float eps0 of nearly equal rows lies below the exact one: the cap cut the certified upper end there
    m = np.array([[0.5000000470192396, 0.4999999529807604], [0.4999999020154169, 0.5000000979845831]])
    r = MatrixRandomizer(m)
    exact = _eps0_exact(m)
    assert r.eps0_upper >= exact
    b = api.epsilon(r.eps0, 2, 1e-300, method="blanket", randomizer=r)
    assert b.value is not None and b.value >= exact  # at this delta the shuffled eps is eps0 itself


@pytest.mark.parametrize("text", ["[[1" + "0" * 400 + ",0.5],[0.5,0.5]]", "[[" + "1" * 5001 + ",0.5],[0.5,0.5]]",
                                  "[" * 200_000 + "]" * 200_000], ids=["huge-int", "many-digits", "deep"])
def test_hostile_json_numbers_exit_2(tmp_path, text: str) -> None:
    f = tmp_path / "m.json"
    f.write_text(text)
    res = CliRunner().invoke(main, ["epsilon", "--randomizer-file", str(f), "--n", "10"])
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    assert len(res.output.strip().splitlines()) == 1


def test_a_matrix_with_too_many_inputs_is_refused_quickly_with_exit_1(tmp_path) -> None:
    k = MAX_MATRIX_INPUTS + 1
    rng = np.random.default_rng(1)
    p = [float(x) for x in rng.uniform(0.3, 0.7, k)]
    f = tmp_path / "wide.csv"
    f.write_text("\n".join(f"{x!r},{1.0 - x!r}" for x in p))
    res = CliRunner().invoke(main, ["epsilon", "--randomizer-file", str(f), "--n", "1000"])
    assert res.exit_code == 1 and f"at most {MAX_MATRIX_INPUTS}" in res.output, res.output
    res = CliRunner().invoke(main, ["epsilon", "--randomizer-file", str(f), "--n", "1000", "-m", "clones"])
    assert res.exit_code == 0, res.output  # the generic methods need only eps0


@pytest.mark.parametrize("rows,word", [([[0.5, 0.5], [0.5, 0.5]], "rows are all equal"),
                                       ([[1.0], [1.0]], "rows are all equal"),
                                       ([[1 - 1e-320, 1e-320], [1e-320, 1 - 1e-320]], "more than 700")])
def test_a_matrix_eps0_out_of_range_names_the_file(tmp_path, rows, word) -> None:
    f = tmp_path / "m.json"
    f.write_text(json.dumps(rows))
    res = CliRunner().invoke(main, ["epsilon", "--randomizer-file", str(f), "--n", "10"])
    assert res.exit_code == 2 and "m.json" in res.output and word in res.output, res.output


def test_subset_selection_accepts_d_1_which_is_krr() -> None:
    res = CliRunner().invoke(main, ["epsilon", "--randomizer", "subset", "--k", "5", "--d", "1", "--eps0", "1",
                                    "--n", "1000", "-m", "blanket"])
    ref = CliRunner().invoke(main, ["epsilon", "--randomizer", "krr", "--k", "5", "--eps0", "1", "--n", "1000",
                                    "-m", "blanket"])
    assert res.exit_code == 0 and ref.exit_code == 0, res.output + ref.output

    def value(out: str) -> float:
        return float(next(line.split()[1] for line in out.splitlines() if line.startswith("blanket")))

    assert value(res.output) == pytest.approx(value(ref.output), rel=1e-5)


@pytest.mark.parametrize("name,params", [("sue", {"k": 10}), ("hadamard", {"k": 8})])
def test_dataset_lower_beyond_its_reach_says_not_applicable(name: str, params: dict) -> None:
    # at n = 1e12 the exact evaluation of the datasets never finished (review rev94m); now a labelled row
    from shuffle_accountant.randomizers import RandomizerFamily

    r = RandomizerFamily.named(name, **params).at(1.0)
    b = api.epsilon(1.0, 10**12, 1e-6, method="dataset-lower", randomizer=r)
    assert b.value is None and b.kind == "not applicable" and "too large" in b.validity
    assert api.epsilon(1.0, 10**12, 1e-6, method="blanket", randomizer=r).kind == "upper"

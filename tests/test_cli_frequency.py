"""``shuffle-acct frequency`` on the command line (issue 12, the accuracy side of amplification):
rows and kinds, JSON, the two searches re-checked, bad input (exit 2, one line)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from shuffle_accountant import accuracy, api
from shuffle_accountant.cli import main
from shuffle_accountant.randomizers import KRR, Hadamard


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.stdout, r.stderr


FAST = ("-m", "stronger-clones")


def _records(out: str) -> dict[str, dict]:
    doc = json.loads(out)
    assert doc["command"] == "frequency" and doc["tool"] == "shuffle-acct"
    return {r["quantity"]: r for r in doc["results"]}


def test_forward_rows_kinds_and_values() -> None:
    code, out, err = run("frequency", "--randomizer", "krr", "--k", "10", "--eps0", "2", "--n", "1e5", *FAST,
                         "--format", "json")
    assert code == 0, err
    rows = _records(out)
    assert {q: r["kind"] for q, r in rows.items()} == {
        "epsilon": "upper", "variance (empty bin)": "exact", "variance (worst bin)": "exact", "E l2^2": "exact",
        "E l2": "upper", "l_inf": "upper"}
    r = KRR(k=10, eps0=2.0)
    assert rows["epsilon"]["value"] == api.epsilon(2.0, 100_000, 1e-6, "stronger-clones", randomizer=r).value
    e = math.e**2
    p, q = e / (e + 9), 1 / (e + 9)
    assert rows["E l2^2"]["value"] == pytest.approx((p * (1 - p) + 9 * q * (1 - q)) / (1e5 * (p - q) ** 2), rel=1e-12)
    assert rows["l_inf"]["value"] == accuracy.frequency_error(r, 100_000, 0.05).linf.value


def test_text_output_shows_counts_and_the_comparator() -> None:
    code, out, err = run("frequency", "--randomizer", "hadamard", "--k", "30", "--eps0", "1", "--n", "20000", *FAST)
    assert code == 0, err
    assert "l_inf" in out and "in counts (x n)" in out and "Theorem 5.2" in out and "could not be recovered" in out
    linf = accuracy.frequency_error(Hadamard(k=30, eps0=1.0), 20_000).linf.value
    line = next(s for s in out.splitlines() if s.startswith("l_inf"))
    assert float(line.split()[1]) >= linf  # printed rounded up


def test_best_method_lists_every_analysis() -> None:
    code, out, err = run("frequency", "--randomizer", "krr", "--k", "4", "--eps0", "1", "--n", "3000", "--format", "json")
    assert code == 0, err
    eps = _records(out)["epsilon"]
    assert set(eps["details"]["all"]) == {"stronger-clones", "clones", "krr", "blanket"}
    assert eps["value"] == min(eps["details"]["all"].values())


def test_target_eps_picks_the_largest_eps0_verified() -> None:
    code, out, err = run("frequency", "--randomizer", "oue", "--k", "50", "--eps", "0.5", "--n", "1e5", *FAST,
                         "--format", "json")
    assert code == 0, err
    rows = _records(out)
    e0 = rows["eps0"]["value"]
    assert rows["eps0"]["kind"] == "lower" and rows["epsilon"]["value"] <= 0.5 * (1 + 1e-4)
    d = rows["eps0"]["details"]
    assert d["certified_delta"] <= 1e-6 < d["next_delta"] and e0 < d["next_eps0"] <= e0 * (1 + 2e-4)


def test_inverse_smallest_n_is_verified_forward() -> None:
    code, out, err = run("frequency", "--randomizer", "krr", "--k", "10", "--eps", "0.5", "--target-error", "0.02",
                         *FAST, "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    answer = doc["results"][0]
    assert answer["quantity"] == "n" and answer["kind"] == "upper"
    n, e0 = int(answer["value"]), answer["details"]["eps0"]
    r = KRR(k=10, eps0=e0)
    assert accuracy.frequency_error(r, n).linf.value <= 0.02
    assert api.delta(e0, n, 0.5, "stronger-clones", randomizer=r).value <= 1e-6
    rows = {x["quantity"]: x for x in doc["results"][1:]}
    assert rows["l_inf"]["value"] <= 0.02 and rows["epsilon"]["value"] <= 0.5 * (1 + 1e-5)
    assert any("one user fewer" in s for s in doc["notes"])


def test_inverse_with_fixed_eps0() -> None:
    code, out, err = run("frequency", "--randomizer", "subset", "--k", "20", "--eps0", "2", "--eps", "1",
                         "--target-error", "0.05", *FAST, "--format", "json")
    assert code == 0, err
    answer = json.loads(out)["results"][0]
    assert answer["details"]["eps0"] == 2.0 and answer["details"]["previous_n"] == answer["value"] - 1


def _matrix_file(tmp_path: Path, rows: list[list[float]]) -> str:
    path = tmp_path / "m.csv"
    path.write_text("\n".join(",".join(repr(x) for x in row) for row in rows))
    return str(path)


def test_matrix_file_krr_matches_named(tmp_path: Path) -> None:
    e, k = math.e, 4
    rows = [[(e if i == j else 1.0) / (e + k - 1) for j in range(k)] for i in range(k)]
    path = _matrix_file(tmp_path, rows)
    code, out, err = run("frequency", "--randomizer-file", path, "--n", "5000", *FAST, "--format", "json")
    assert code == 0, err
    file_rows = _records(out)
    code, out, err = run("frequency", "--randomizer", "krr", "--k", "4", "--eps0", "1", "--n", "5000", *FAST,
                         "--format", "json")
    named = _records(out)
    for q in ("variance (empty bin)", "variance (worst bin)", "E l2^2"):
        assert file_rows[q]["value"] == pytest.approx(named[q]["value"], rel=1e-9)
    assert file_rows["E l2^2"]["method"] == "least-squares estimator"


def test_rank_deficient_file_gives_not_applicable_rows(tmp_path: Path) -> None:
    path = _matrix_file(tmp_path, [[0.5, 0.5], [0.5, 0.5], [0.25, 0.75]])
    code, out, err = run("frequency", "--randomizer-file", path, "--n", "100", *FAST, "--format", "json")
    assert code == 0, err
    rows = _records(out)
    assert rows["l_inf"]["kind"] == "not applicable" and rows["l_inf"]["value"] is None
    code, out, err = run("frequency", "--randomizer-file", path, "--eps", "1", "--target-error", "0.1", *FAST)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "full row rank" in err


@pytest.mark.parametrize("args,word", [
    (["--eps0", "nan"], "eps0"),
    (["--eps0", "-1"], "eps0"),
    (["--eps0", "1", "--n", "-5"], "n"),
    (["--eps0", "1", "--n", "1e13"], "n"),
    (["--eps0", "1", "--beta", "0"], "beta"),
    (["--eps0", "1", "--beta", "1"], "beta"),
    (["--eps0", "1", "--beta", "nan"], "beta"),
    (["--eps0", "1", "--k", "1"], "k"),
    (["--eps0", "1", "--delta", "1"], "delta"),
    (["--eps0", "60"], "eps0"),
    (["--eps0", "1", "--eps", "0.5"], "not both"),
    (["--eps", "0.5", "--target-error", "0.01", "--n", "100"], "--n"),
    (["--eps0", "1", "--target-error", "0.01"], "--eps"),
    (["--eps", "0.5", "--target-error", "1.5"], "target-error"),
    (["--eps", "0.5", "--target-error", "nan"], "target-error"),
    (["--eps0", "1", "--randomizer-file", "x.csv"], "not both"),
    (["--eps0", "1", "-m", "magic"], "method"),
    (["--eps0", "1", "--rtol", "1e-3"], "--rtol"),  # does nothing without a target --eps: refused, not ignored
    (["--eps", "0.5", "--target-error", "0.01", "--rtol", "1e-3"], "--rtol"),
])
def test_hostile_inputs_exit_2_with_one_line(args: list[str], word: str) -> None:
    base = {"--randomizer": "krr", "--k": "5", "--n": "1000"}
    full = list(args)
    for flag, val in base.items():
        if flag not in full and not (flag == "--n" and "--target-error" in full):
            full += [flag, val]
    code, out, err = run("frequency", *full)
    assert code == 2, (out, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert word in err
    assert out == ""


def test_missing_randomizer_and_missing_k_and_n() -> None:
    for args, word in ((["--eps0", "1", "--n", "100"], "--randomizer"),
                       (["--randomizer", "oue", "--eps0", "1", "--n", "100"], "--k"),
                       (["--randomizer", "oue", "--k", "3", "--eps0", "1"], "--n"),
                       (["--randomizer", "krr", "--k", "3", "--n", "100", "--g", "4", "--eps0", "1"], "g")):
        code, out, err = run("frequency", *args)
        assert code == 2 and len(err.strip().splitlines()) == 1 and word in err, (args, err)


def test_target_eps_with_a_matrix_file_is_refused(tmp_path: Path) -> None:
    path = _matrix_file(tmp_path, [[0.7, 0.3], [0.3, 0.7]])
    code, out, err = run("frequency", "--randomizer-file", path, "--eps", "0.5", "--n", "100")
    assert code == 2 and "fixed eps0" in err


@pytest.mark.parametrize("args", [["--eps", "1e-9", "--delta", "1e-12", "--n", "1"],
                                  ["--eps0", "1e-300", "--n", "100"], ["--eps0", "1e-160", "--n", "100"],
                                  ["--eps", "1", "--target-error", "1e-13"]])
def test_unreachable_targets_exit_1(args: list[str]) -> None:
    code, out, err = run("frequency", "--randomizer", "krr", "--k", "5", *args, *FAST)
    assert code == 1 and "could not certify" in err and len(err.strip().splitlines()) == 1, err


def test_help_shows_examples() -> None:
    code, out, err = run("frequency", "--help")
    assert code == 0 and "shuffle-acct frequency --randomizer" in out
    assert "frequency" in run("--help")[1]


def test_stepped_default_d_is_not_called_the_least_eps0() -> None:
    # subset selection's default d = ceil(k / (e^eps0 + 1)) steps with eps0, so the l_inf bound jumps up
    # (d = 2 -> 1) and the bisection over eps0 can miss smaller feasible eps0: fewer users do suffice
    args = ["frequency", "--randomizer", "subset", "--k", "100", "--eps", "5", "--target-error", "0.2",
            "-m", "stronger-clones"]
    res = CliRunner().invoke(main, args + ["--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    n_found = doc["results"][0]["value"]
    family = accuracy.named_factory("subset", k=100)
    assert family.stepped == ("d",)
    m = n_found - 1  # independent scan: some eps0 meets both at n - 1
    feasible = [e0 / 100 for e0 in range(430, 461)
                if accuracy.linf_bound(accuracy.estimator(family(e0 / 100)), m, 0.05)[0] <= 0.2
                and accuracy.certify(family(e0 / 100), m, 5.0, 1e-6, "stronger-clones")[0]]
    assert feasible, "n - 1 should be feasible with another eps0 (the point of the warning)"
    text = CliRunner().invoke(main, args).output
    assert "need not be the least" in text and "fix --d" in text
    assert "the least one meeting the error target" not in text
    fixed = CliRunner().invoke(main, ["frequency", "--randomizer", "krr", "--k", "10", "--eps", "0.5",
                                      "--target-error", "0.05", "-m", "stronger-clones"]).output
    assert "need not be the least" not in fixed and "the least one meeting the error target" in fixed

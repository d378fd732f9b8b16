"""CLI of the pure plug-in."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from shuffle_accountant.cli import main
from shuffle_accountant.output import FORMATS


def _run(args):
    return CliRunner().invoke(main, args)


@pytest.mark.parametrize("fmt", FORMATS)
def test_count_every_format(fmt):
    res = _run(["pure", "count", "--eps", "1", "--n", "1e6", "--rho", "0.5", "--format", fmt])
    assert res.exit_code == 0, res.output
    if fmt == "json":
        doc = json.loads(res.output)
        rule, best = doc["results"]
        assert rule["source"] == "Theorem 6 rule" and rule["satisfies_condition7"]
        assert best["expected_messages_x1"] <= rule["expected_messages_x1"]


def test_count_verify_is_labelled_a_check():
    res = _run(["pure", "count", "--eps", "2", "--n", "100", "--verify", "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    for rec in doc["results"]:
        assert rec["verify"]["holds"] and rec["verify"]["max_divergence"] <= 2
    assert any("check" in note for note in doc["notes"])


@pytest.mark.parametrize("fmt", FORMATS)
def test_check_command(fmt):
    res = _run(["pure", "check", "--eps", "1", "--n", "1e4", "--eps-prime", "0.9", "--q", "1e-5", "--s", "300",
                "--lam", "20000", "--format", fmt])
    assert res.exit_code == 0, res.output


def test_check_fails_with_exit_3():
    res = _run(["pure", "check", "--eps", "1", "--n", "1e4", "--eps-prime", "0.9", "--q", "1e-5", "--s", "3",
                "--lam", "20", "--verify"])
    assert res.exit_code == 3
    assert "False" in res.output


@pytest.mark.parametrize("args", [
    ["pure", "count", "--eps", "0", "--n", "100"],
    ["pure", "count", "--eps", "1", "--n", "100", "--rho", "0.7"],
    ["pure", "count", "--eps", "inf", "--n", "100"],
    ["pure", "count", "--eps", "1", "--n", "1.5"],
])
def test_bad_input(args):
    res = _run(args)
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1


def test_impossible_n_is_refused():
    res = _run(["pure", "count", "--eps", "0.01", "--n", "10"])
    assert res.exit_code == 1 and "too small" in res.output


# ---------------------------------------------------------------------------------------
# pure sum, pure histogram
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("args", [
    ["sum", "--eps", "1", "--n", "1e4", "--bits", "4"],
    ["histogram", "--eps", "1", "--n", "1e4", "--k", "10"],
])
def test_aggregates_every_format(args, fmt):
    res = _run(["pure", *args, "--format", fmt])
    assert res.exit_code == 0, res.output
    if fmt == "json":
        rec = json.loads(res.stdout)["results"][0]
        assert rec["eps"] == 1.0 and rec["n"] == 10**4


def test_sum_verify_composes_the_bits():
    res = _run(["pure", "sum", "--eps", "2", "--n", "1000", "--bits", "3", "--verify", "--format", "json"])
    assert res.exit_code == 0, res.output
    rec = json.loads(res.stdout)["results"][0]
    check = rec["check"]
    assert check["holds"] and check["max_divergence"] == pytest.approx(sum(max(d) for d in check["per_bit"]), rel=1e-12)
    assert sum(rec["bit_eps"]) <= 2.0 and rec["rmse_bound"] >= rec["mse_at_max"] ** 0.5


def test_sum_verify_names_the_bit_it_cannot_check():
    res = _run(["pure", "sum", "--eps", "1", "--n", "1e6", "--bits", "10", "--verify"])
    assert res.exit_code == 0, res.output
    assert "not certified" in res.output and "bit 0" in res.output


def test_histogram_verify_text():
    res = _run(["pure", "histogram", "--eps", "1", "--n", "1e4", "--k", "100", "--verify"])
    assert res.exit_code == 0, res.output
    assert "d10 + d01" in res.output and "holds" in res.output


@pytest.mark.parametrize("args,flag", [
    (["sum", "--eps", "1", "--n", "100", "--bits", "0"], "--bits"),
    (["sum", "--eps", "1", "--n", "100", "--bits", "41"], "--bits"),
    (["sum", "--eps", "1", "--n", "100", "--bits", "4", "--range", "0"], "--range"),
    (["sum", "--eps", "1", "--n", "100", "--bits", "4", "--split", "log"], "--split"),
    (["sum", "--eps", "1", "--n", "100", "--bits", "4", "--rule", "theorem6", "--rho", "2"], "--rho"),
    (["histogram", "--eps", "1", "--n", "100", "--k", "1"], "--k"),
    (["histogram", "--eps", "1", "--n", "100", "--k", "1e10"], "--k"),
    (["histogram", "--eps", "1", "--n", "100", "--k", "10", "--rho", "0"], "--rho"),
    (["histogram", "--eps", "nan", "--n", "100", "--k", "10"], "--eps"),
])
def test_aggregates_refuse_bad_input_with_one_line(args, flag):
    res = _run(["pure", *args])
    lines = res.stderr.strip().splitlines()
    assert res.exit_code == 2, res.output
    assert len(lines) == 1 and flag in lines[0] and res.stdout == ""


def test_theorem6_rule_at_tiny_n_exits_1():
    res = _run(["pure", "sum", "--eps", "0.01", "--n", "10", "--bits", "4", "--rule", "theorem6"])
    assert res.exit_code == 1 and "bit" in res.stderr and len(res.stderr.strip().splitlines()) == 1

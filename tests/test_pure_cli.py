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

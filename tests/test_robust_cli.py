"""CLI of the robust plug-in: every command, every format, bad input, impossible targets."""

from __future__ import annotations

import csv
import io
import json

import pytest
from click.testing import CliRunner

from shuffle_accountant.cli import main
from shuffle_accountant.output import FORMATS
from shuffle_accountant.plugins.robust import structures

COMMANDS = [
    ["robust", "noise", "--law", "binomial", "--n", "1e5", "--eps", "1", "--delta", "1e-6", "--gamma", "0.9"],
    ["robust", "noise", "--law", "poisson", "--n", "1000", "--eps", "0.5", "--delta", "1e-7"],
    ["robust", "noise", "--law", "negbin", "--n", "1000", "--eps", "0.5", "--delta", "1e-7", "--nb-p", "0.3"],
    ["robust", "noise", "--law", "dlap", "--n", "1000", "--eps", "0.5", "--delta", "1e-7", "--honest-fraction", "0.5"],
    ["robust", "delta", "--law", "binomial", "--n", "1e4", "--eps", "1", "--param", "0.003"],
    ["robust", "delta", "--law", "dlap", "--n", "1000", "--eps", "0.5", "--param", "1", "--gamma", "0.5", "--design-gamma", "1"],
    ["robust", "bitsum", "--n", "1e5", "--eps", "1", "--delta", "1e-6", "--gamma", "0.8"],
    ["robust", "histogram", "--k", "100", "--n", "1e5", "--eps", "1", "--delta", "1e-6"],
    ["robust", "histogram", "--k", "100", "--n", "1e5", "--eps", "1", "--p", "0.001", "--protocol", "bc20"],
    ["robust", "pan", "--n", "1e5", "--eps", "1", "--delta", "1e-6"],
]


def _run(args):
    return CliRunner().invoke(main, args)


@pytest.mark.parametrize("args", COMMANDS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_commands_in_every_format(args, fmt):
    res = _run(args + ["--format", fmt])
    assert res.exit_code == 0, res.output
    out = res.output
    if fmt == "json":
        doc = json.loads(out)
        assert doc["command"].startswith("robust") and doc["results"]
    elif fmt == "csv":
        rows = list(csv.reader(io.StringIO(out)))
        assert len(rows) >= 2
    elif fmt == "markdown":
        assert out.startswith("**") and "|---" in out
    else:
        assert "(" in out.splitlines()[0]


def test_distinct_command(monkeypatch):
    monkeypatch.setattr(structures, "_splitmix", lambda h, sigma: (12, "stub"))
    for fmt in FORMATS:
        res = _run(["robust", "distinct", "--n", "1e5", "--k", "1000", "--eps", "1", "--delta", "1e-6",
                    "--gamma", "0.5", "--format", fmt])
        assert res.exit_code == 0, res.output


def test_bitsum_json_carries_rule_and_exact():
    doc = json.loads(_run(["robust", "bitsum", "--n", "1e6", "--eps", "1", "--delta", "1e-6", "--protocol", "lecture",
                           "--format", "json"]).output)
    rec = doc["results"][0]
    assert rec["rule"]["value"] > rec["exact"]["value"] > 0
    assert rec["exact"]["delta_upper"] <= 1e-6


@pytest.mark.parametrize("args", [
    ["robust", "bitsum", "--n", "0", "--eps", "1", "--delta", "1e-6"],
    ["robust", "bitsum", "--n", "100", "--eps", "nan", "--delta", "1e-6"],
    ["robust", "bitsum", "--n", "100", "--eps", "1", "--delta", "1.5"],
    ["robust", "noise", "--law", "gauss", "--n", "100", "--eps", "1", "--delta", "1e-6"],
    ["robust", "noise", "--law", "binomial", "--n", "100", "--eps", "1", "--delta", "1e-6", "--gamma", "0"],
    ["robust", "histogram", "--k", "10", "--n", "100", "--eps", "1"],
    ["robust", "delta", "--law", "binomial", "--n", "100", "--eps", "1", "--param", "2"],
])
def test_bad_input_one_line_exit_2(args):
    res = _run(args)
    assert res.exit_code == 2
    assert len(res.output.strip().splitlines()) == 1 and "Error" in res.output


def test_impossible_target_exit_1_with_clear_message():
    res = _run(["robust", "bitsum", "--n", "100", "--eps", "0.5", "--delta", "1e-9", "--gamma", "0.1",
                "--protocol", "lecture"])
    assert res.exit_code == 1
    assert "gamma*n too small" in res.output and len(res.output.strip().splitlines()) == 1

"""``shuffle-acct splitmix``: discovered through its entry point, every command in every
format, one-line errors with exit code 2 (bad input) or 1 (not computable here)."""

from __future__ import annotations

import csv
import io
import json
from importlib.metadata import entry_points

import pytest
from click.testing import CliRunner

from shuffle_accountant.cli import PLUGIN_GROUP, main
from shuffle_accountant.plugins.splitmix import bbgn_messages, dp_sum_plan, exact_distance

COMMANDS = {
    "messages": ["--n", "10000", "--bits", "46", "--sigma", "40"],
    "security": ["--n", "10000", "--m", "12", "--q", "2^46"],
    "exact": ["--n", "6", "--m", "3", "--q", "3"],
    "dp-sum": ["--n", "10000", "--eps", "1", "--delta", "1e-6"],
}


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_plugin_is_registered_and_runs_through_its_entry_point() -> None:
    registered = {ep.name: ep for ep in entry_points(group=PLUGIN_GROUP)}
    assert "splitmix" in registered
    group = registered["splitmix"].load()
    assert group.name == "splitmix"
    assert set(COMMANDS) <= set(group.commands)
    result = CliRunner().invoke(group, ["messages", *COMMANDS["messages"], "--format", "json"])
    assert result.exit_code == 0, result.output
    assert "splitmix" in run("--help").output


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("fmt", ["text", "json", "csv", "markdown"])
def test_every_command_every_format(command: str, fmt: str) -> None:
    result = run("splitmix", command, *COMMANDS[command], "--format", fmt)
    assert result.exit_code == 0, result.output
    out = result.stdout
    if fmt == "json":
        doc = json.loads(out)
        assert doc["command"] == f"splitmix {command}" and doc["results"]
    elif fmt == "csv":
        rows = list(csv.reader(io.StringIO(out)))
        assert len(rows) >= 2 and all(len(r) == len(rows[0]) for r in rows)
    else:
        assert out.strip()


def test_messages_json_carries_the_computation() -> None:
    doc = json.loads(run("splitmix", "messages", "--n", "10000", "--q", "42949672960000", "--sigma", "40",
                         "--format", "json").stdout)
    bbgn = doc["results"][0]
    assert bbgn["kind"] == "upper" and bbgn["value"] == bbgn_messages(10**4, 42949672960000, 40.0)
    assert bbgn["citation"] and bbgn["version"]
    assert [r["kind"] for r in doc["results"]] == ["upper", "lower", "not applicable"]


def test_exact_json_is_the_exact_fraction() -> None:
    doc = json.loads(run("splitmix", "exact", *COMMANDS["exact"], "--format", "json").stdout)
    d = exact_distance(6, 3, 3)
    assert doc["results"][0]["details"]["fraction"] == f"{d.numerator}/{d.denominator}"


def test_dp_sum_json_is_the_plan() -> None:
    doc = json.loads(run("splitmix", "dp-sum", *COMMANDS["dp-sum"], "--format", "json").stdout)
    assert doc["results"][0] == json.loads(json.dumps(dp_sum_plan(10000, 1.0, 1e-6).to_dict()))


@pytest.mark.parametrize(
    "args",
    [
        ["messages", "--n", "100", "--sigma", "40"],
        ["messages", "--n", "100", "--q", "8", "--bits", "3", "--sigma", "40"],
        ["messages", "--n", "100", "--q", "1", "--sigma", "40"],
        ["messages", "--n", "100", "--q", "abc", "--sigma", "40"],
        ["messages", "--n", "100", "--q", "8", "--sigma", "nan"],
        ["messages", "--n", "100", "--q", "8", "--sigma", "1", "--honest-fraction", "1.5"],
        ["security", "--n", "0", "--m", "3", "--q", "8"],
        ["security", "--n", "10", "--m", "2.5", "--q", "8"],
        ["exact", "--n", "3", "--m", "3", "--q", "1000"],
        ["dp-sum", "--n", "2", "--eps", "1", "--delta", "1e-6"],
        ["dp-sum", "--n", "100", "--eps", "inf", "--delta", "1e-6"],
        ["dp-sum", "--n", "100", "--eps", "1", "--delta", "1"],
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str]) -> None:
    result = run("splitmix", *args)
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.output


def test_exact_beyond_the_limit_is_refused_with_exit_1() -> None:
    result = run("splitmix", "exact", "--n", "1000", "--m", "10", "--q", "2")
    assert result.exit_code == 1
    line = result.stderr.strip()
    assert len(line.splitlines()) == 1 and "limit" in line

"""CLI tests with click's CliRunner: every format parses, bad input exits 2 with one line."""

from __future__ import annotations

import csv
import io
import json

import pytest
from click.testing import CliRunner

from shuffle_accountant import __version__, api
from shuffle_accountant.cli import main, plugin_entry_points


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_version():
    r = run("--version")
    assert r.exit_code == 0 and __version__ in r.output


def test_epsilon_text_table():
    r = run("epsilon", "--eps0", "3", "--n", "10000")
    assert r.exit_code == 0, r.output
    for word in ("clones", "stronger-clones", "closed-form", "generic-lower", "upper", "lower", "gap", "delta=1e-06"):
        assert word in r.output


def test_epsilon_json_matches_api():
    r = run("epsilon", "--eps0", "3", "--n", "10000", "--format", "json")
    doc = json.loads(r.output)
    by_method = {rec["method"]: rec for rec in doc["results"]}
    assert by_method["clones"]["value"] == api.epsilon(3, 10000).value
    assert by_method["clones"]["kind"] == "upper"
    assert by_method["generic-lower"]["kind"] == "lower"
    assert doc["inputs"]["delta"] == 1e-6 and doc["version"] == __version__


@pytest.mark.parametrize("command", [["epsilon"], ["delta", "--eps", "0.3"]])
def test_csv_parses(command):
    r = run(*command, "--eps0", "2", "--n", "1e5", "--k", "4", "--format", "csv")
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader(io.StringIO(r.output)))
    assert {row["method"] for row in rows} >= {"clones", "krr", "krr-lower"}
    for row in rows:
        if row["kind"] in ("upper", "lower"):
            float(row["value"])


def test_markdown_table():
    r = run("delta", "--eps0", "3", "--n", "10000", "--eps", "0.5", "--format", "markdown")
    assert r.exit_code == 0 and "| method | delta | kind |" in r.output


def test_text_rounds_upper_bounds_up():
    value = api.epsilon(3, 10000, method="clones").value
    r = run("epsilon", "--eps0", "3", "--n", "10000", "-m", "clones")
    printed = float(r.output.split("clones", 2)[1].split()[0])
    assert printed >= value


def test_warns_when_delta_large():
    r = run("epsilon", "--eps0", "1", "--n", "100", "--delta", "0.05")
    assert r.exit_code == 0 and "1/n" in r.output


def test_methods_lists_all_with_citations():
    r = run("methods", "--format", "json")
    names = {rec["method"] for rec in json.loads(r.output)["results"]}
    from shuffle_accountant.analyses import NOT_OFFERED

    assert names == {m.name for m in api.methods()} | set(NOT_OFFERED)
    assert "Feldman" in run("methods").output
    assert "variation-ratio  [NOT OFFERED]" in run("methods").output


@pytest.mark.parametrize(
    "args,needle",
    [
        (["epsilon", "--eps0", "nan", "--n", "10"], "--eps0"),
        (["epsilon", "--eps0", "inf", "--n", "10"], "--eps0"),
        (["epsilon", "--eps0", "-1", "--n", "10"], "--eps0"),
        (["epsilon", "--eps0", "0", "--n", "10"], "--eps0"),
        (["epsilon", "--eps0", "1e400", "--n", "10"], "--eps0"),
        (["epsilon", "--eps0", "1", "--n", "0"], "--n"),
        (["epsilon", "--eps0", "1", "--n", "1.5"], "--n"),
        (["epsilon", "--eps0", "1", "--n", "1e13"], "--n"),
        (["epsilon", "--eps0", "1", "--n", "10", "--delta", "0"], "--delta"),
        (["epsilon", "--eps0", "1", "--n", "10", "--delta", "1"], "--delta"),
        (["epsilon", "--eps0", "1", "--n", "10", "--delta", "nan"], "--delta"),
        (["epsilon", "--eps0", "1", "--n", "10", "--method", "nope"], "--method"),
        (["epsilon", "--eps0", "1", "--n", "10", "--k", "1"], "--k"),
        (["epsilon", "--eps0", "1", "--n", "10", "-m", "krr"], "k"),
        (["delta", "--eps0", "1", "--n", "10", "--eps", "-0.1"], "--eps"),
        (["delta", "--eps0", "1", "--n", "10"], "--eps"),
        (["epsilon", "--eps0", "800", "--n", "10"], "eps0"),
    ],
)
def test_bad_input_one_line_exit_2(args, needle):
    r = run(*args)
    assert r.exit_code == 2, (args, r.output)
    lines = [line for line in r.output.splitlines() if line.strip()]
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in r.output


def test_uncertifiable_exits_1():
    r = run("epsilon", "--eps0", "3", "--n", "10000", "--delta0", "1e-9", "-m", "clones")
    assert r.exit_code == 1 and "could not certify" in r.output


def test_plugins_registered_through_entry_points():
    eps = plugin_entry_points()
    assert {"splitmix", "robust", "pure"} <= set(eps)
    r = run("--help")
    for name in ("robust", "pure", "epsilon", "delta", "methods"):
        assert name in r.output


def test_long_commands_are_never_silent_on_a_terminal(monkeypatch):
    import io
    import time

    from shuffle_accountant.cli import Heartbeat

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    err = Terminal()
    monkeypatch.setattr("sys.stderr", err)
    with Heartbeat(after=0.05, every=0.05):
        time.sleep(0.4)
    assert "shuffle-acct: working..." in err.getvalue() and err.getvalue().endswith("\r")
    quiet = io.StringIO()  # not a terminal: nothing
    monkeypatch.setattr("sys.stderr", quiet)
    with Heartbeat(after=0.0, every=0.01):
        time.sleep(0.1)
    assert quiet.getvalue() == ""


def test_group_help_imports_no_plugin_and_no_numpy():
    import subprocess
    import sys

    code = ("import sys; from shuffle_accountant.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "bad = [m for m in sys.modules if m.startswith(('numpy', 'scipy', 'shuffle_accountant.plugins.'))]\n"
            "print('IMPORTED', bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False).stdout
    assert "splitmix" in out and "IMPORTED []" in out

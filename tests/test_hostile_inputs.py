"""Hostile input for every core command: what a careless or malicious user types.

Every case asserts the contract of the command line: bad input exits 2, a valid input
that cannot be certified exits 1, and either way exactly one line on stderr, never a
traceback; a success prints JSON / CSV that parses; a refused or failed run leaves no
(partial) output file. Every run is guarded by a timeout, so a hang fails the test: an
alarm for the in-process runs (CliRunner), ``subprocess`` with ``timeout=`` for the cases
that used to hang or to allocate without limit.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shuffle_accountant import composition, tables
from shuffle_accountant.cli import main
from shuffle_accountant.errors import InvalidParameter
from shuffle_accountant.output import replace_atomically

#: Seconds any in-process invocation may take.
TIMEOUT = 30


class Hang(BaseException):
    """Raised by the alarm; a BaseException, so no handler in the tool can swallow it."""


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    def on_alarm(signum: int, frame: object) -> None:
        raise Hang(f"no answer within {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run(*args: object, timeout: float = TIMEOUT):
    with deadline(timeout):
        return CliRunner().invoke(main, [str(a) for a in args])


def assert_contract(r, expected: tuple[int, ...] = (2,)) -> None:
    """Exit code in ``expected``; a failure is one line on stderr; a success parses."""
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert r.exit_code in expected, (r.exit_code, r.stdout, r.stderr)
    assert "Traceback" not in r.output
    if r.exit_code in (1, 2):
        lines = [line for line in r.stderr.splitlines() if line.strip() and not line.startswith("warning:")]
        assert len(lines) == 1, r.stderr
        assert lines[0].startswith("Error:"), r.stderr


def assert_parses(text: str, fmt: str) -> None:
    if fmt == "json":
        json.loads(text)
    elif fmt == "csv":
        rows = list(csv.reader(io.StringIO("\n".join(x for x in text.splitlines() if not x.startswith("#")))))
        assert len(rows) >= 2 and all(len(row) == len(rows[0]) for row in rows)


# ---------------------------------------------------------------------------------------
# bad flags, every core command and subcommand (exit 2)
# ---------------------------------------------------------------------------------------

LONG_INT = "9" * 5000
EPS0_BAD = ["nan", "inf", "-1", "0", "1e400", "800", "1e6", "", "abc", LONG_INT, "0x10"]
N_BAD = ["0", "1.5", "100.5", "1e13", "-5", LONG_INT, "abc", "nan"]
DELTA_BAD = ["0", "1", "nan", "1e-320", "-1e-6", "2"]

BAD: list[list[str]] = []
for x in EPS0_BAD:
    BAD += [["epsilon", "--eps0", x, "--n", "100"], ["renyi", "--eps0", x, "--n", "100"],
            ["compose", "--eps0", x, "--n", "100", "--T", "2"], ["solve", "n", "--eps", "1", "--delta", "1e-6", "--eps0", x],
            ["table", "--n", "100", "--eps0", x]]
for x in N_BAD:
    BAD += [["epsilon", "--eps0", "1", "--n", x], ["delta", "--eps0", "1", "--n", x, "--eps", "0.1"],
            ["solve", "eps0", "--eps", "1", "--delta", "1e-6", "--n", x], ["table", "--n", x, "--eps0", "1"],
            ["compose", "--eps0", "1", "--n", x, "--T", "2"]]
for x in DELTA_BAD:
    BAD += [["epsilon", "--eps0", "3", "--n", "10000", "--delta", x],
            ["compose", "--eps0", "1", "--n", "100", "--T", "2", "--delta", x],
            ["table", "--n", "100", "--eps0", "1", "--delta", x], ["solve", "eps", "--delta", x, "--eps0", "1", "--n", "9"],
            ["plot", "--n", "1e3,1e4", "--eps0", "1", "--delta", x, "-o", "p.png"]]
BAD += [
    ["epsilon", "--eps0", "1", "--n", "10", "--k", "1"],
    ["epsilon", "--eps0", "1", "--n", "10", "--k", "1.5"],
    ["epsilon", "--eps0", "1", "--n", "10", "-m", "nope"],
    ["epsilon", "--eps0", "1", "--n", "10", "-m", "krr"],
    ["epsilon", "--eps0", "1", "--n", "10", "--delta0", "1"],
    ["epsilon", "--eps0", "1", "--n", "10", "--delta0", "nan"],
    ["epsilon", "--eps0", "1", "--n", "10", "--rtol", "0"],
    ["epsilon", "--eps0", "1", "--n", "10", "--format", "xml"],
    ["epsilon", "--eps0", "1"],
    ["epsilon", "--eps0", "1", "--n", "10", "--bogus"],
    ["delta", "--eps0", "1", "--n", "10"],
    ["delta", "--eps0", "1", "--n", "10", "--eps", "-0.1"],
    ["delta", "--eps0", "1", "--n", "10", "--eps", "nan"],
    ["delta", "--eps0", "1", "--n", "10", "--eps", "1e6"],
    ["methods", "--format", "xml"],
    ["renyi", "--eps0", "1", "--n", "100", "--orders", "0.5,2"],
    ["renyi", "--eps0", "1", "--n", "100", "--orders", "abc"],
    ["renyi", "--eps0", "1", "--n", "100", "--orders", ""],
    ["renyi", "--eps0", "1", "--n", "100", "--orders", "1e400"],
    ["renyi", "--eps0", "1", "--n", "100", "--orders", ",".join(["2"] * 5000)],
    ["renyi", "--eps0", "1", "--n", "100", "--rtol", "0"],
    ["renyi", "--eps0", "1", "--n", "1e6", "--rtol", "1e-6"],  # would not finish
    ["renyi", "--eps0", "1", "--n", "100", "-m", "closed-form"],
    ["compose", "--eps0", "1", "--n", "100"],
    ["compose", "--eps0", "1", "--n", "100", "--T", "0"],
    ["compose", "--eps0", "1", "--n", "100", "--T", "1e10"],
    ["compose", "--eps0", "1", "--n", "100", "--T", "2.5"],
    ["compose", "--eps0", "1", "--n", "100", "--T", "2", "--discretization", "nan"],
    ["compose", "--eps0", "1", "--n", "100", "--T", "2", "--discretization", "1e-9"],
    ["compose", "--eps0", "1", "--n", "100", "--T", "2", "-m", "binary-rr-lower"],
    ["compose", "--eps0", "1", "--n", "100", "--T", "2", "--rounds-file", "missing.csv"],
    ["compose", "--rounds", "100"],
    ["compose", "--rounds-file", "missing.csv"],
    ["table", "-m", "all", "-m", "foo", "--n", "1e3", "--eps0", "1"],
    ["table", "--n", "1:2:3", "--eps0", "1"],
    ["table", "--n", "1e3:1e4:x", "--eps0", "1"],
    ["table", "--n", "1e3:1e4:3:cubic", "--eps0", "1"],
    ["table", "--n", "1e3:1e4:20000", "--eps0", "1"],
    ["table", "--n", "1e6:1e12:5000:log", "--eps0", "0.1:8:10000", "--delta", "1e-9:1e-3:10000"],
    ["table", "--n", "1e3", "--eps0", "1", "--quantity", "delta"],
    ["table", "--n", "1e3", "--eps0", "1", "--eps", "0.5"],
    ["table", "--n", "1e3", "--eps0", "1", "--jobs", "0"],
    ["table", "--n", "1e3", "--eps0", "1", "--rtol", "1"],
    ["table", "--n", "1e3", "--eps0", "1", "--format", "pdf"],
    ["table", "--n", "1e3", "--eps0", "1", "-o", "/nonexistent/dir/t.json"],
    ["table", "--grid", "missing.json"],
    ["check", "missing.json"],
    ["check", "missing.json", "--rtol", "1"],
    ["plot", "--n", "1e3,1e4", "--eps0", "1", "-o", "/nonexistent/dir/p.png"],
    ["plot", "--n", "1e3,1e4", "--eps0", "1,2", "-o", "p.png"],
    ["plot", "--n", "1e3,1e4", "--eps0", "1", "-o", "p.gif", "--image-format", "gif"],
    ["plot", "--n", "1e3,1e4", "--eps0", "1"],
    ["solve"] + ["eps0", "--eps", "0", "--delta", "1e-6", "--n", "100"],
    ["solve", "eps0", "--eps", "1e6", "--delta", "1e-6", "--n", "100"],
    ["solve", "eps0", "--eps", "1", "--delta", "1e-6", "--n", "100", "--rtol", "1"],
    ["solve", "eps0", "--eps", "1", "--delta", "1e-6", "--n", "100", "--rounds", "0"],
    ["solve", "n", "--eps", "1", "--delta", "1e-6", "--eps0", "1", "--rounds", "1e10"],
    ["solve", "n", "--eps", "1", "--delta", "1e-6", "--eps0", "1", "-m", "binary-rr-lower"],
    ["solve", "eps", "--delta", "1e-6", "--eps0", "1", "--n", "0"],
    ["solve", "delta", "--eps", "-1", "--eps0", "1", "--n", "100"],
    ["solve", "nope"],
    ["nope"],
    # a deployed randomizer on every command that takes one
    ["epsilon", "--eps0", "1", "--n", "100", "--randomizer", "krr"],
    ["epsilon", "--eps0", "1", "--n", "100", "--randomizer", "oue", "--k", "3", "--g", "4"],
    ["epsilon", "--n", "100", "--randomizer-file", "missing.csv"],
    ["delta", "--eps0", "1", "--n", "100", "--eps", "0.1", "--randomizer", "nope", "--k", "3"],
    ["compose", "--eps0", "1", "--n", "100", "--T", "2", "--randomizer", "krr", "--k", "1"],
    ["compose", "--eps0", "1", "--n", "100", "--T", "2", "--randomizer", "krr", "--k", "3", "--g", "4"],
    ["compose", "--eps0", "1", "--n", "100", "--T", "2", "--randomizer", "sue", "--k", "3", "-m", "krr"],
    ["solve", "eps0", "--eps", "1", "--delta", "1e-6", "--n", "100", "--randomizer", "olh", "--k", "nan"],
    ["solve", "n", "--eps", "1", "--delta", "1e-6", "--eps0", "1", "-m", "blanket"],
    ["solve", "n", "--eps", "1", "--delta", "1e-6", "--eps0", "1", "--randomizer", "krr", "--k", "3", "-m", "blanket",
     "--rounds", "3"],
    ["solve", "eps", "--delta", "1e-6", "--eps0", "1", "--n", "100", "--randomizer", "subset", "--k", "4", "--d", "9"],
    ["solve", "delta", "--eps", "0.1", "--eps0", "1", "--n", "100", "--randomizer", "hadamard", "--k", "-3"],
    ["table", "--n", "100", "--eps0", "1", "--randomizer", "krr", "--k", "3", "-m", "blanket-bennett-krr", "-m", "x"],
    ["table", "--n", "100", "--eps0", "1", "-m", "blanket"],
    ["plot", "--n", "1e3,1e4", "--eps0", "1", "--randomizer", "krr", "-o", "p.png"],
    # frequency estimation
    ["frequency", "--randomizer", "krr", "--k", "10", "--eps0", "nan", "--n", "100"],
    ["frequency", "--randomizer", "krr", "--k", "1", "--eps0", "1", "--n", "100"],
    ["frequency", "--randomizer", "krr", "--k", "10", "--eps0", "1", "--n", "1e13"],
    ["frequency", "--randomizer", "krr", "--k", "10", "--eps0", "1", "--n", "100", "--beta", "1"],
    ["frequency", "--randomizer", "krr", "--k", "10", "--eps0", "1", "--n", "100", "--delta", "0"],
    ["frequency", "--randomizer", "krr", "--k", "10", "--eps0", "-1", "--n", "100"],
    ["frequency", "--k", "10", "--eps0", "1", "--n", "100"],
]


@pytest.mark.parametrize("args", BAD, ids=[" ".join(a)[:70] for a in BAD])
def test_bad_input_exit_2_one_line(args, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = run(*args)
    assert_contract(r, (2,))
    assert list(tmp_path.iterdir()) == []  # nothing written, not even a temporary file


def test_every_core_command_is_exercised():
    from shuffle_accountant.cli import CORE_COMMANDS

    commands = {a[0] if a[0] != "solve" else f"solve {a[1]}" for a in BAD}
    core = (set(CORE_COMMANDS) - {"solve"}) | {"solve eps0", "solve n", "solve eps", "solve delta"}
    assert core <= commands, core - commands
    with_randomizer = {a[0] if a[0] != "solve" else f"solve {a[1]}" for a in BAD
                       if "--randomizer" in a or "--randomizer-file" in a or "blanket" in a}
    assert {"epsilon", "delta", "compose", "table", "plot", "solve eps0", "solve n", "solve eps",
            "solve delta"} <= with_randomizer


# ---------------------------------------------------------------------------------------
# files: rounds, grids, golden tables (exit 2, naming the problem)
# ---------------------------------------------------------------------------------------

ROUNDS_FILES = {
    "cnt.csv": ("eps0,n,cnt\n1,100000,100\n", "cnt"),
    "cnt.json": ('[{"eps0": 1, "n": 100000, "cnt": 100}]', "cnt"),
    "extra.csv": ("eps0,n,count,comment\n1,1000,2,x\n", "comment"),
    "toplevel.json": ('{"rounds": [{"eps0": 1, "n": 1000}], "delta": 1e-6}', "delta"),
    "cells.csv": ("eps0,n,count\n1,1000,2,7\n", "cells"),
    "empty.csv": ("", "empty"),
    "header.csv": ("eps0,n,count\n", "no rounds"),
    "count0.csv": ("eps0,n,count\n1,1000,0\n", "count"),
    "eps0.csv": ("eps0,n\n800,1000\n", "eps0"),
    "bign.json": ('[{"eps0": 1, "n": ' + LONG_INT + "}]", "digits"),
    "deep.json": ("[" * 100_000 + "]" * 100_000, "deeply"),
    "notlist.json": ('{"eps0": 1}', "eps0"),
    "missing_n.csv": ("eps0,count\n1,3\n", "n"),
    "nan.csv": ("eps0,n\nnan,1000\n", "eps0"),
    "dup.csv": ("eps0,n,n\n1,1000,1000\n", "twice"),
    "binary.csv": (b"\xff\xfe\x00garbage", "UTF-8"),
}


@pytest.mark.parametrize("name", sorted(ROUNDS_FILES))
def test_rounds_file_refused_naming_the_problem(name, tmp_path):
    text, needle = ROUNDS_FILES[name]
    f = tmp_path / name
    f.write_bytes(text if isinstance(text, bytes) else text.encode())
    r = run("compose", "--rounds-file", f, "--orders", "2")
    assert_contract(r, (2,))
    assert needle in r.stderr


GRID_FILES = {
    "unknown.json": ('{"n": 1000, "eps0": 1, "delta": 1e-6, "nn": 3}', "nn"),
    "bigint.json": ('{"n": ' + LONG_INT + ', "eps0": 1, "delta": 1e-6}', "digits"),
    "bigint.toml": ("n = " + LONG_INT + "\neps0 = 1\ndelta = 1e-6\n", "TOML"),
    "deep.json": ('{"n": ' + "[" * 100_000 + "]" * 100_000 + ', "eps0": 1}', "deeply"),
    "deep.toml": ("n = " + "[" * 100_000 + "]" * 100_000 + "\neps0 = 1\n", "deeply"),
    "huge.json": ('{"n": "1e6:1e12:5000:log", "eps0": "1:2:10000", "delta": "1e-9:1e-3:10000"}', "cells"),
    "nested.json": ('{"n": [[1000]], "eps0": 1, "delta": 1e-6}', "numbers"),
    "list.json": ("[1, 2]", "object"),
    "methods.json": ('{"n": 1000, "eps0": 1, "delta": 1e-6, "methods": ["all", "foo"]}', "foo"),
    "nonint.json": ('{"n": 100.5, "eps0": 1, "delta": 1e-6}', "whole"),
    "tiny.json": ('{"n": 1000, "eps0": 1, "delta": 1e-320}', "delta"),
    "nan.json": ('{"n": 1000, "eps0": NaN, "delta": 1e-6}', "eps0"),
    "both.json": ('{"n": 1000, "eps0": 1, "delta": 1e-6, "eps": 0.5}', "eps"),
    "bad.toml": ("n = [1000\n", "TOML"),
}


@pytest.mark.parametrize("name", sorted(GRID_FILES))
def test_grid_file_refused_naming_the_problem(name, tmp_path):
    text, needle = GRID_FILES[name]
    f = tmp_path / name
    f.write_text(text)
    out = tmp_path / "out.json"
    r = run("table", "--grid", f, "--format", "json", "-o", out, "--no-progress")
    assert_contract(r, (2,))
    assert needle in r.stderr and not out.exists()


@pytest.fixture(scope="module")
def golden_json(tmp_path_factory) -> dict:
    p = tmp_path_factory.mktemp("hostile") / "g.json"
    r = run("table", "--n", "1e4,1e5", "--eps0", "1", "-m", "closed-form", "-m", "erlingsson", "--format", "json",
            "-o", p, "--no-progress")
    assert r.exit_code == 0, r.output
    return json.loads(p.read_text())


def _mutated(doc: dict, path: list, value: object) -> dict:
    doc = json.loads(json.dumps(doc))
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return doc


GOLDEN_MUTATIONS = {
    "empty cell": (["results", 0], {}),
    "unknown kind": (["results", 0, "kind"], "maybe"),
    "unknown key": (["results", 0, "colour"], "red"),
    "n not a number": (["results", 0, "n"], "many"),
    "value NaN": (["results", 0, "value"], "NaN"),
    "results not a list": (["results"], {"a": 1}),
    "grid method unknown": (["inputs", "methods"], ["nope"]),
    "grid huge": (["inputs"], {"quantity": "epsilon", "n": "1e6:1e12:5000:log", "eps0": "1:2:100", "delta": [1e-6],
                               "methods": ["closed-form"]}),
    "cell not an object": (["results", 1], 7),
    "value without kind value": (["results", 0, "value"], None),
}


@pytest.mark.parametrize("name", sorted(GOLDEN_MUTATIONS))
def test_check_refuses_broken_golden(name, golden_json, tmp_path):
    path, value = GOLDEN_MUTATIONS[name]
    f = tmp_path / "g.json"
    f.write_text(json.dumps(_mutated(golden_json, path, value)))
    assert_contract(run("check", f, "--no-progress"), (2,))


def test_check_reads_the_0_1_0_layout(golden_json, tmp_path):
    old = {"tool": "shuffle-accountant", "version": "0.1.0", "command": "table",
           "grid": golden_json["inputs"], "cells": golden_json["results"]}
    f = tmp_path / "old.json"
    f.write_text(json.dumps(old))
    r = run("check", f, "--no-progress")
    assert r.exit_code == 0 and r.stdout.startswith("ok: 4 cells agree"), r.output


# ---------------------------------------------------------------------------------------
# valid but not certifiable (exit 1), valid and awkward (exit 0, parses)
# ---------------------------------------------------------------------------------------

VALID = [
    (["epsilon", "--eps0", "3", "--n", "10000", "--delta0", "1e-9", "-m", "clones"], (1,)),
    (["epsilon", "--eps0", "700", "--n", "1e12", "--delta", "1e-300", "--format", "json"], (0,)),
    (["delta", "--eps0", "3", "--n", "1e12", "--eps", "0.5", "--format", "csv"], (0,)),
    (["delta", "--eps0", "700", "--n", "1", "--eps", "0", "--format", "json"], (0,)),
    (["epsilon", "--eps0", "1e-300", "--n", "1", "--format", "json"], (0,)),
    (["renyi", "--eps0", "700", "--n", "1e5", "--orders", "2,8", "--format", "json"], (0, 1)),
    (["solve", "n", "--eps", "700", "--delta", "1e-6", "--eps0", "1", "--format", "json"], (0,)),
    (["solve", "n", "--eps", "0.1", "--delta", "1e-6", "--eps0", "700"], (1,)),
    (["solve", "eps0", "--eps", "700", "--delta", "0.5", "--n", "10", "--format", "json"], (0,)),
    (["solve", "delta", "--eps", "0.5", "--eps0", "3", "--n", "1e4", "--delta0", "0.5", "--format", "json"], (0,)),
    (["table", "--n", "1,1e12", "--eps0", "1e-9,700", "--delta", "1e-300,0.999", "-m", "closed-form",
      "-m", "erlingsson", "--format", "csv", "--no-progress"], (0,)),
    (["table", "--n", "10,100", "--eps0", "1", "--quantity", "delta", "--eps", "0,700", "-m", "closed-form",
      "--format", "json", "--no-progress"], (0,)),
    (["methods", "--format", "csv"], (0,)),
]


@pytest.mark.parametrize("args,expected", VALID, ids=[" ".join(a)[:70] for a, _ in VALID])
def test_valid_edge_inputs(args, expected):
    r = run(*args)
    assert_contract(r, expected)
    if r.exit_code == 0:
        fmt = args[args.index("--format") + 1] if "--format" in args else "text"
        assert_parses(r.stdout, fmt)


def test_renyi_tiny_eps0_at_huge_n_finishes():
    """The kernels' floating-point floor stops the refinement (it plateaued for ~15 s before)."""
    r = run("renyi", "--eps0", "1e-9", "--n", "1e12", "--orders", "2", "--format", "csv", timeout=5)
    assert_contract(r, (0, 1))
    r = run("renyi", "--eps0", "1e-9", "--n", "1e12", "--orders", "2", timeout=5)
    assert r.exit_code == 0 and "floating point limits the resolution" in r.stdout + r.stderr, r.stdout


def test_gap_ratio_is_printed_readably():
    r = run("delta", "--eps0", "3", "--n", "10000", "--eps", "0.5", "-m", "clones", "-m", "binary-rr-lower")
    gap = next(line for line in r.stdout.splitlines() if line.startswith("gap:"))
    ratio = gap.rsplit("= ", 1)[1]
    assert "e+" in ratio and len(ratio) <= 9, ratio  # 3 significant digits, not 26 digits and '.000'


def test_deprecated_names_still_work_and_say_so(tmp_path):
    f = tmp_path / "r.csv"
    f.write_text("eps0,n,count\n1,1000,2\n")
    r = run("compose", "--rounds", f, "--orders", "2,8", "--format", "json")
    assert r.exit_code == 0 and "deprecated" in r.stderr and json.loads(r.stdout)["summary"]["best"]


# ---------------------------------------------------------------------------------------
# no partial files
# ---------------------------------------------------------------------------------------


def test_atomic_write_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "t.json"

    def half_then_fail(tmp: str) -> None:
        Path(tmp).write_text("{ half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        replace_atomically(target, half_then_fail)
    assert list(tmp_path.iterdir()) == []


def test_failed_table_leaves_the_old_file_intact(tmp_path, monkeypatch):
    out = tmp_path / "t.json"
    out.write_text("previous")

    def boom(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(tables, "render_table", boom)
    r = run("table", "--n", "1e3", "--eps0", "1", "-m", "closed-form", "-o", out, "--no-progress")
    assert r.exit_code == 1 and out.read_text() == "previous" and len(list(tmp_path.iterdir())) == 1


# ---------------------------------------------------------------------------------------
# the cases that used to hang or allocate without limit: a subprocess with a timeout
# ---------------------------------------------------------------------------------------

RISKY = [  # (arguments, the PLD row must be refused with the reason)
    (["compose", "--eps0", "1", "--n", "1000", "--T", "1e9", "--orders", "2,8", "--format", "json"], True),
    (["compose", "--eps0", "1e-9", "--n", "3", "--T", "1e9", "--orders", "2,8", "--format", "json"], True),
    (["compose", "--eps0", "1", "--n", "1000", "--T", "10", "--discretization", "1e-7", "--orders", "2,8",
      "--format", "json"], False),
]


@pytest.mark.parametrize("args,refused", RISKY, ids=[" ".join(a)[:60] for a, _ in RISKY])
def test_no_hang_no_unbounded_allocation(args, refused):
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    p = subprocess.run([sys.executable, "-m", "shuffle_accountant", *args], capture_output=True, text=True,
                       timeout=60, env=env, check=False)
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
    doc = json.loads(p.stdout)
    pld = next(b for b in doc["results"] if b["method"] == "pld")
    if refused:
        assert pld["kind"] == "not applicable" and "RDP route covers" in pld["validity"]  # refused, with the reason
    else:
        assert pld["kind"] in ("upper", "not applicable")


# ---------------------------------------------------------------------------------------
# hypothesis: numbers and file contents
# ---------------------------------------------------------------------------------------

NUMBER_TEXT = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(min_value=-(10**40), max_value=10**40).map(str),
    st.sampled_from(["1e-320", "1e400", "-0", "0x1p3", "1_000", "１２", "1e", ".", "--1", "+inf", "9" * 200]),
    st.text(max_size=12),
)
FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


TINY_EPS0 = [
    ["delta", "--eps0", "2.594491286485005e-257", "--n", "1000", "--eps", "0", "-m", "closed-form"],
    ["epsilon", "--eps0", "1e-300", "--n", "1000", "-m", "blanket-hoeffding"],
    ["epsilon", "--eps0", "1e-10", "--n", "1000", "--delta", "0.5", "-m", "blanket-bennett-laplace"],
]


@pytest.mark.parametrize("args", TINY_EPS0, ids=["closed-form delta", "blanket-hoeffding", "blanket-bennett-laplace"])
def test_tiny_eps0_closed_forms(args):
    assert_contract(run(*args), (0, 1))


@FAST
@given(eps0=NUMBER_TEXT, n=NUMBER_TEXT, delta=NUMBER_TEXT)
def test_any_numbers_epsilon(eps0, n, delta):
    r = run("epsilon", "--eps0", eps0, "--n", n, "--delta", delta, "-m", "closed-form", "--format", "json",
            timeout=20)
    assert_contract(r, (0, 1, 2))
    if r.exit_code == 0:
        json.loads(r.stdout)


@FAST
@given(eps=NUMBER_TEXT, eps0=NUMBER_TEXT)
def test_any_numbers_delta(eps, eps0):
    r = run("delta", "--eps0", eps0, "--n", "1000", "--eps", eps, "-m", "closed-form", "--format", "csv",
            timeout=20)
    assert_contract(r, (0, 1, 2))
    if r.exit_code == 0:
        assert_parses(r.stdout, "csv")


JSON_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(10**30), max_value=10**30),
                        st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8))
JSON_VALUE = st.recursive(JSON_SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                               st.dictionaries(st.text(max_size=5), inner, max_size=3)),
                          max_leaves=8)
ROUND_KEY = st.sampled_from(["eps0", "n", "count", "cnt", "", "N"])


@FAST
@given(rows=st.lists(st.dictionaries(ROUND_KEY, JSON_VALUE, max_size=4), max_size=4), as_csv=st.booleans())
def test_any_rounds_file_is_read_or_refused(rows, as_csv, tmp_path):
    f = tmp_path / ("r.csv" if as_csv else "r.json")
    if as_csv:
        header = sorted({k for row in rows for k in row})
        f.write_text(",".join(header) + "\n" + "".join(",".join(str(row.get(k, "")) for k in header) + "\n"
                                                        for row in rows))
    else:
        f.write_text(json.dumps(rows))
    try:
        with deadline(10):
            out = composition.read_rounds(f)
    except InvalidParameter as exc:
        assert "\n" not in str(exc)
    else:
        assert out and all(r.count >= 1 and 0 < r.eps0 <= 700 and 1 <= r.n <= 10**12 for r in out)


GRID_VALUE = st.one_of(JSON_VALUE, NUMBER_TEXT, st.sampled_from(["1:10:3", "1e3:1e5:3:log", "1:2:3", "0.5,1"]))


@FAST
@given(grid=st.dictionaries(st.sampled_from(["n", "eps0", "delta", "eps", "methods", "k", "rtol", "quantity", "x"]),
                            GRID_VALUE, max_size=6))
def test_any_grid_file_is_tabulated_or_refused(grid, tmp_path):
    grid = dict(grid, methods=["closed-form"]) if "methods" not in grid else grid
    f = tmp_path / "g.json"
    f.write_text(json.dumps(grid))
    r = run("table", "--grid", f, "--format", "json", "--no-progress", timeout=20)
    assert_contract(r, (0, 2))
    if r.exit_code == 0:
        json.loads(r.stdout)


CELL_PATHS = st.sampled_from([["results", 0, k] for k in ("n", "eps0", "delta", "method", "value", "kind", "note")]
                             + [["inputs", k] for k in ("n", "eps0", "delta", "methods", "quantity")]
                             + [["results", 0], ["results"], ["inputs"]])


@FAST
@given(path=CELL_PATHS, value=JSON_VALUE)
def test_any_golden_mutation_is_checked_or_refused(path, value, golden_json, tmp_path):
    f = tmp_path / "g.json"
    f.write_text(json.dumps(_mutated(golden_json, path, value)))
    r = run("check", f, "--no-progress", "--format", "json", timeout=20)
    assert_contract(r, (0, 2, 3))
    if r.exit_code in (0, 3):
        json.loads(r.stdout)


def test_randomizer_with_nearly_equal_rows_is_answered_or_refused_cleanly(tmp_path):
    """A valid matrix whose rows differ by 1e-13 (eps0 ~ 2e-13, no output favouring the first input):
    the closed-form test took log(0) (internal error, exit 4; read-only review rev80); now the answer
    or exit 1 with the reason."""
    f = tmp_path / "m.csv"
    f.write_text("0.5,0.5\n0.5,0.5000000000001\n")
    assert_contract(run("epsilon", "--n", "1000", "--randomizer-file", str(f)), (0, 1))


@pytest.mark.parametrize("log_ratio", [60.0, 689.0, 690.0])
def test_randomizer_file_beyond_the_blanket_eps0_is_refused_cleanly(tmp_path, log_ratio):
    """A matrix file whose eps0 (computed) exceeds the blanket engines' 50: a 3 x 3 matrix with entries e^-689 failed
    inside the lattice's moments (internal error, exit 4) and a 2 x 2 with e^-690 printed a nan bracket (review rev93s);
    now exit 1 with the reason, one line."""
    tiny = math.exp(-log_ratio)
    f = tmp_path / "m.json"
    f.write_text(json.dumps([[0.5, 0.5 - tiny, tiny], [tiny, 0.5, 0.5 - tiny], [0.25, 0.5, 0.25]]))
    r = run("delta", "--eps", str(log_ratio / 2), "--n", "3", "-m", "blanket", "--randomizer-file", str(f))
    assert_contract(r, (1,))
    assert "eps0 <= 50" in r.stderr


def test_blanket_overflow_at_large_eps0_is_one_line():
    """SUE k = 2 at eps0 = 20 overflows inside the lattice (read-only review rev80, before today too):
    numpy's warnings were printed above the error; now one line (answer or exit 1 with the reason)."""
    assert_contract(run("epsilon", "--eps0", "20", "--n", "1000", "--delta", "5.77e-4", "--randomizer", "sue",
                        "--k", "2"), (0, 1))


def test_pure_sum_subnormal_eps_is_one_line():
    """A subnormal eps left the mse split's root search without a sign change (internal error, exit 4; found by a
    fuzz of every command's examples, 2026-11-24); now exit 1 with the reason."""
    r = run("pure", "sum", "--eps", "1e-320", "--n", "1e6", "--bits", "8")
    assert_contract(r, (1,))
    assert "mse split" in r.stderr


@pytest.mark.parametrize("orders,bad,why", [("2,abc", "abc", "not a number"), ("0.5,2", "0.5", "out of range"),
                                            ("2,inf", "inf", "not finite")])
def test_bad_order_is_named_with_its_range(orders, bad, why):
    r = run("renyi", "--eps0", "1", "--n", "100", "--orders", orders)
    assert_contract(r, (2,))
    assert f"order: {bad} is {why} (accepted: 1 < alpha <= 1e6)" in r.stderr


def test_a_value_from_a_file_is_refused_with_its_place_and_its_parameter_range(tmp_path):
    """The refusal names where the value was found; the accepted range names the parameter (it read
    '0 < round 1 eps0 <= 700' before the label was kept out of the range)."""
    f = tmp_path / "r.csv"
    f.write_text("eps0,n\n-1,100\n")
    r = run("compose", "--rounds-file", str(f), "--orders", "2")
    assert_contract(r, (2,))
    assert "round 1 eps0: -1 is out of range (accepted: 0 < eps0 <= 700)" in r.stderr

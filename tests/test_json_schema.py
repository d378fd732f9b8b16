"""Every command's ``--format json`` output validates against the schema shipped in the
package (``shuffle_accountant/schema``), core commands and plug-ins alike.

The commands are discovered by walking the click group, so a new command or plug-in is
covered without editing this file: it runs with the small input listed below, or else
with the first example its ``--help`` shows (every subcommand should show one).
"""

from __future__ import annotations

import json
import shlex

import click
import pytest
from click.testing import CliRunner

from shuffle_accountant import __version__
from shuffle_accountant.cli import main
from shuffle_accountant.results import KINDS
from shuffle_accountant.schema import SCHEMA_VERSION, load_schema

jsonschema = pytest.importorskip("jsonschema")

#: Small, fast, valid inputs (command path -> arguments). ``None``: the command prints no
#: JSON (``plot`` writes an image).
SMALL_INPUTS: dict[str, list[str] | None] = {
    "epsilon": ["--eps0", "2", "--n", "1000", "--k", "4"],
    "delta": ["--eps0", "2", "--n", "1000", "--eps", "0.5"],
    "methods": [],
    "renyi": ["--eps0", "1", "--n", "1000", "--orders", "2,8"],
    "compose": ["--eps0", "1", "--n", "1000", "--T", "3", "--orders", "2,8,32"],
    "table": ["--n", "1e3,1e4", "--eps0", "1", "-m", "clones", "-m", "erlingsson", "-m", "binary-rr-lower",
              "--no-progress"],
    "plot": None,
    "solve eps0": ["--eps", "1", "--delta", "1e-6", "--n", "1000", "--rtol", "1e-3"],
    "solve n": ["--eps", "1", "--delta", "1e-6", "--eps0", "2"],
    "solve eps": ["--delta", "1e-6", "--eps0", "2", "--n", "1000"],
    "solve delta": ["--eps", "0.5", "--eps0", "2", "--n", "1000"],
    "splitmix messages": ["--n", "10000", "--bits", "46", "--sigma", "40"],
    "splitmix security": ["--n", "100", "--m", "12", "--q", "2^46"],
    "splitmix exact": ["--n", "6", "--m", "3", "--q", "3"],
    "splitmix dp-sum": ["--n", "10000", "--eps", "1", "--delta", "1e-6"],
    "robust noise": ["--law", "poisson", "--n", "1000", "--eps", "0.5", "--delta", "1e-7"],
    "robust delta": ["--law", "binomial", "--n", "1e4", "--eps", "1", "--param", "0.003"],
    "robust bitsum": ["--n", "1e4", "--eps", "1", "--delta", "1e-6", "--gamma", "0.8"],
    "robust histogram": ["--k", "10", "--n", "1e4", "--eps", "1", "--delta", "1e-6"],
    "robust pan": ["--n", "1e4", "--eps", "1", "--delta", "1e-6"],
    "pure count": ["--eps", "1", "--n", "1e4", "--rho", "0.5"],
    "pure check": ["--eps", "1", "--n", "1e4", "--eps-prime", "0.9", "--q", "1e-5", "--s", "300", "--lam", "20000"],
}


#: Commands whose JSON needs a file first; validated by their own test below.
COVERED_BELOW = {"check": "test_check_json_validates"}


def _walk(group: click.Group, ctx: click.Context, prefix: str = "") -> list[tuple[str, click.Command]]:
    out = []
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if cmd is None:
            continue
        path = f"{prefix}{name}"
        if isinstance(cmd, click.Group):
            out += _walk(cmd, ctx, f"{path} ")
        else:
            out.append((path, cmd))
    return out


def _commands() -> list[tuple[str, click.Command]]:
    with click.Context(main) as ctx:
        return _walk(main, ctx)


COMMANDS = _commands()


def _help_examples(path: str) -> list[list[str]]:
    """The ``shuffle-acct <path> ...`` example lines shown by the help of the command and of
    the groups above it."""
    parts = path.split()
    found: list[list[str]] = []
    for depth in range(len(parts), -1, -1):
        text = CliRunner().invoke(main, [*parts[:depth], "--help"]).output
        for line in text.splitlines():
            words = shlex.split(line.strip()) if line.strip().startswith("shuffle-acct ") else []
            if words[1:1 + len(parts)] == parts:
                found.append(words[1 + len(parts):])
    return found


def _arguments(path: str) -> list[str] | None:
    if path in SMALL_INPUTS:
        return SMALL_INPUTS[path]
    examples = _help_examples(path)
    assert examples, f"'shuffle-acct {path}' has no small input here and no example in its --help"
    return examples[0]


VALIDATOR = jsonschema.Draft202012Validator(load_schema())


def _validate(doc: dict) -> None:
    errors = sorted(VALIDATOR.iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, "; ".join(f"{list(e.path)}: {e.message}" for e in errors[:5])


def test_schema_is_a_valid_draft_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(load_schema())
    assert load_schema()["$defs"]["kind"]["enum"] == list(KINDS)


def test_discovery_finds_core_and_plugin_commands():
    paths = {p for p, _ in COMMANDS}
    assert {"epsilon", "delta", "renyi", "compose", "table", "check", "plot", "solve eps0", "solve n"} <= paths
    assert any(p.startswith("splitmix ") for p in paths) and any(p.startswith("robust ") for p in paths)


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS])
def test_json_output_validates(path: str) -> None:
    if path in COVERED_BELOW:
        pytest.skip(f"validated by {COVERED_BELOW[path]}")
    args = _arguments(path)
    command = dict(COMMANDS)[path]
    formats = {o.name: o for o in command.params if isinstance(o, click.Option)}
    if args is None:
        choice = formats.get("fmt")
        assert choice is None or "json" not in getattr(choice.type, "choices", ()), \
            f"{path} prints JSON: give it a small input in SMALL_INPUTS"
        pytest.skip(f"{path} prints no JSON document")
    r = CliRunner().invoke(main, [*path.split(), *args, "--format", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    _validate(doc)
    assert doc["command"] == path and doc["version"] == __version__ and doc["schema_version"] == SCHEMA_VERSION


def test_check_json_validates(tmp_path):
    golden = tmp_path / "g.json"
    r = CliRunner().invoke(main, ["table", "--n", "1e3", "--eps0", "1", "-m", "clones", "--format", "json",
                                  "-o", str(golden), "--no-progress"])
    assert r.exit_code == 0, r.output
    _validate(json.loads(golden.read_text()))
    doc = json.loads(golden.read_text())
    doc["results"][0]["value"] *= 1.01  # tighter than now: one failing record
    golden.write_text(json.dumps(doc))
    r = CliRunner().invoke(main, ["check", str(golden), "--format", "json", "--no-progress"])
    assert r.exit_code == 3
    out = json.loads(r.stdout)
    _validate(out)
    assert out["summary"]["ok"] is False and out["results"][0]["verdict"] == "tighter"


@pytest.mark.parametrize("bad", [
    {"tool": "other"},
    {"results": [{"quantity": "epsilon", "value": 0.1, "kind": "maybe", "method": "m", "citation": "c"}]},
    {"results": [{"quantity": "epsilon", "value": None, "kind": "upper", "method": "m", "citation": "c"}]},
    {"results": [{"quantity": "epsilon", "value": 0.1, "kind": "upper", "method": "m", "citation": "c",
                  "bracket": [0.1]}]},
    {"surprise": 1},
])
def test_schema_rejects_malformed_documents(bad):
    r = CliRunner().invoke(main, ["delta", "--eps0", "2", "--n", "1000", "--eps", "0.5", "--format", "json"])
    doc = dict(json.loads(r.stdout), **bad)
    assert list(VALIDATOR.iter_errors(doc))

"""The plug-in contract (``docs/plugins.md``), checked for every registered plug-in entry
point and every subcommand it has: ``--help`` works and shows an example, every option has
help text, the example's ``--format json`` output parses as the shuffle-acct envelope, a
bad number is refused with exit code 2 and one line naming the flag; and no plug-in module
imports another plug-in or the command-line internals (checked on the source)."""

from __future__ import annotations

import ast
import json
import shlex
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import shuffle_accountant
from shuffle_accountant import plugin_api
from shuffle_accountant.cli import main

PLUGINS = {ep.name: ep for ep in entry_points(group=plugin_api.PLUGIN_GROUP)}
SUBCOMMANDS = [(name, sub) for name, ep in sorted(PLUGINS.items()) for sub in sorted(ep.load().commands)]
IDS = [f"{p} {s}" for p, s in SUBCOMMANDS]


def _run(args: list[str]):
    return CliRunner().invoke(main, args)


def _example(plugin: str, sub: str) -> list[str]:
    """The arguments of the first ``shuffle-acct <plugin> <sub> ...`` line of the help."""
    for line in _run([plugin, sub, "--help"]).output.splitlines():
        words = shlex.split(line.strip()) if line.strip().startswith("shuffle-acct ") else []
        if words[1:3] == [plugin, sub]:
            return words[3:]
    raise AssertionError(f"'shuffle-acct {plugin} {sub} --help' shows no example")


def _command(plugin: str, sub: str) -> click.Command:
    return PLUGINS[plugin].load().commands[sub]


def test_the_built_in_plugins_are_registered():
    assert {"robust", "pure", "splitmix"} <= set(PLUGINS)
    assert len(SUBCOMMANDS) >= 12


@pytest.mark.parametrize("plugin", sorted(PLUGINS))
def test_group_help_shows_examples(plugin):
    r = _run([plugin, "--help"])
    assert r.exit_code == 0 and "Examples:" in r.output
    assert f"shuffle-acct {plugin} " in r.output


@pytest.mark.parametrize("plugin,sub", SUBCOMMANDS, ids=IDS)
def test_help_exits_0_and_shows_an_example(plugin, sub):
    r = _run([plugin, sub, "--help"])
    assert r.exit_code == 0, r.output
    assert _example(plugin, sub)


@pytest.mark.parametrize("plugin,sub", SUBCOMMANDS, ids=IDS)
def test_every_option_has_help_text(plugin, sub):
    missing = [o.name for o in _command(plugin, sub).params if isinstance(o, click.Option) and not (o.help or "").strip()]
    assert not missing, f"options without help text: {missing}"


@pytest.mark.parametrize("plugin,sub", SUBCOMMANDS, ids=IDS)
def test_json_output_of_the_example_parses(plugin, sub):
    r = _run([plugin, sub, *_example(plugin, sub), "--format", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["command"] == f"{plugin} {sub}" and isinstance(doc["results"], list) and doc["results"]
    assert {"tool", "version", "inputs", "warnings", "notes"} <= set(doc)


def _numeric_options(plugin: str, sub: str, args: list[str]) -> list[str]:
    """The flags of the example that take a number."""
    cmd = _command(plugin, sub)
    numeric = {f for o in cmd.params if isinstance(o, click.Option) and o.type.name in ("float", "integer")
               for f in o.opts}
    return [a for a in args if a in numeric]


@pytest.mark.parametrize("bad", ["nan", "1e400", "abc", "1" + "0" * 5000])
@pytest.mark.parametrize("plugin,sub", SUBCOMMANDS, ids=IDS)
def test_a_bad_number_exits_2_with_one_line_naming_the_flag(plugin, sub, bad):
    args = _example(plugin, sub)
    flags = _numeric_options(plugin, sub, args)
    assert flags, f"the example of {plugin} {sub} has no numeric option"
    for flag in flags:
        mutated = list(args)
        mutated[mutated.index(flag) + 1] = bad
        r = _run([plugin, sub, *mutated])
        lines = r.stderr.strip().splitlines()
        assert r.exit_code == 2, (flag, r.output)
        assert len(lines) == 1 and flag in lines[0], (flag, r.stderr)
        assert "Traceback" not in r.output and r.stdout == ""


# ---------------------------------------------------------------------------------------
# The inputs the hostile-user review found, one by one
# ---------------------------------------------------------------------------------------

HOSTILE = [
    # (arguments, exit code, text the one line must contain)
    (["pure", "count", "--eps", "1e6", "--n", "1e4"], 2, "--eps"),
    (["robust", "noise", "--law", "binomial", "--n", "1e6", "--eps", "1e6", "--delta", "1e-6"], 2, "--eps"),
    (["robust", "delta", "--law", "poisson", "--n", "1e4", "--eps", "1e6", "--param", "1"], 2, "--eps"),
    (["robust", "noise", "--law", "poisson", "--n", "100", "--eps", "1", "--delta", "1e-320"], 2, "--delta"),
    (["robust", "noise", "--law", "binomial", "--n", "1e4", "--eps", "1"], 2, "--delta"),
    (["robust", "delta", "--law", "poisson", "--n", "1e12", "--eps", "1", "--param", "1"], 1, "--param"),
    (["robust", "delta", "--law", "binomial", "--n", "100", "--eps", "1", "--param", "2"], 2, "--param"),
    (["robust", "noise", "--law", "binomial", "--n", "1e12", "--eps", "1", "--delta", "1e-6", "--trials", "10"], 1,
     "trials"),
    (["robust", "histogram", "--k", "10", "--n", "100", "--eps", "1"], 2, "--delta"),
    (["pure", "count", "--eps", "1", "--n", "1e4", "--rho", "1e-300"], 2, "--rho"),
    (["pure", "count", "--eps", "1e-300", "--n", "1e4"], 1, "eps"),
    (["pure", "check", "--eps", "1", "--n", "1e4", "--eps-prime", "710", "--q", "1e-5", "--s", "3", "--lam", "20"], 2,
     "--eps-prime"),
    (["splitmix", "messages", "--n", "100", "--q", "2^65537", "--sigma", "10"], 2, "--q"),
    (["splitmix", "messages", "--n", "100", "--q", "1" + "0" * 5000, "--sigma", "10"], 2, "--q"),
    (["splitmix", "messages", "--n", "100", "--bits", "65537", "--sigma", "10"], 2, "--bits"),
    (["splitmix", "messages", "--n", "100", "--bits", "64", "--sigma", "1e7"], 2, "--sigma"),
    (["splitmix", "exact", "--n", "1000", "--m", "10", "--q", "2"], 1, "limit"),
    (["splitmix", "dp-sum", "--n", "1e4", "--eps", "1e-300", "--delta", "1e-6"], 2, "eps"),
]


@pytest.mark.parametrize("args,code,text", HOSTILE, ids=[" ".join(a)[:60] for a, _, _ in HOSTILE])
def test_hostile_inputs_get_one_line_and_the_documented_exit_code(args, code, text):
    r = _run(args)
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == code, r.output
    assert len(lines) == 1 and text in lines[0], r.stderr
    assert "Traceback" not in r.output and "internal" not in r.stderr


@pytest.mark.parametrize("args", [
    ["splitmix", "messages", "--n", "100", "--bits", "65536", "--sigma", "10"],
    ["splitmix", "security", "--n", "10000", "--m", "1e6", "--q", "2^46"],
    ["robust", "noise", "--law", "dlap", "--n", "1e4", "--eps", "700", "--delta", "1e-6"],
    ["robust", "bitsum", "--n", "1e4", "--eps", "700", "--delta", "1e-6"],
    ["robust", "noise", "--law", "poisson", "--n", "100", "--eps", "1", "--delta", "1e-300"],
])
def test_inputs_that_used_to_fail_now_answer(args):
    r = _run([*args, "--format", "json"])
    assert r.exit_code == 0, r.output
    json.loads(r.stdout)


# ---------------------------------------------------------------------------------------
# Imports: only plugin_api, the plug-in's own package and the neutral _shared package
# ---------------------------------------------------------------------------------------

PLUGINS_DIR = Path(shuffle_accountant.__file__).parent / "plugins"
ALLOWED_CORE = {"shuffle_accountant.plugin_api"}


def _module_name(path: Path) -> str:
    rel = path.relative_to(PLUGINS_DIR.parent.parent).with_suffix("")
    parts = list(rel.parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(source: str, module: str, is_package: bool) -> list[str]:
    """Absolute names of every module imported by ``source`` (relative imports resolved)."""
    package = module if is_package else module.rpartition(".")[0]
    out: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            out.append(prefix)
            out += [f"{prefix}.{a.name}" for a in node.names if not node.module or node.level]
    return out


def violations(source: str, module: str, is_package: bool = False) -> list[str]:
    """Imports of ``module`` (under ``shuffle_accountant.plugins``) that break the contract:
    any ``shuffle_accountant`` module other than ``plugin_api``, the neutral ``_shared``
    package and the module's own plug-in package."""
    own = ".".join(module.split(".")[:3])  # shuffle_accountant.plugins.<name>
    allowed = (*ALLOWED_CORE, "shuffle_accountant.plugins._shared", own)
    bad = []
    for name in _imports(source, module, is_package):
        if not name.startswith("shuffle_accountant"):
            continue
        if any(name == a or name.startswith(a + ".") for a in allowed):
            continue
        bad.append(name)
    return bad


def test_the_import_check_catches_violations():
    robust = "shuffle_accountant.plugins.robust.structures"
    assert violations("from ..splitmix.core import bbgn_messages", robust) == [
        "shuffle_accountant.plugins.splitmix.core", "shuffle_accountant.plugins.splitmix.core.bbgn_messages"]
    assert violations("from ...cli.params import USERS", robust)
    assert violations("import shuffle_accountant.output", robust)
    assert violations("def f():\n    from ...errors import InvalidParameter\n", robust)
    assert not violations("from ...plugin_api import Bound\nfrom .._shared.laws import Law\nfrom .noise import delta\n"
                          "import numpy\nfrom scipy import stats\n", robust)


@pytest.mark.parametrize("path", sorted(PLUGINS_DIR.rglob("*.py")), ids=lambda p: str(p.relative_to(PLUGINS_DIR)))
def test_no_plugin_imports_another_plugin_or_the_cli(path):
    source = path.read_text(encoding="utf-8")
    assert not violations(source, _module_name(path), path.name == "__init__.py")


def test_the_shared_package_imports_only_plugin_api():
    for path in (PLUGINS_DIR / "_shared").glob("*.py"):
        names = _imports(path.read_text(encoding="utf-8"), _module_name(path), path.name == "__init__.py")
        inner = [n for n in names if n.startswith("shuffle_accountant")]
        assert all(n.startswith(("shuffle_accountant.plugin_api", "shuffle_accountant.plugins._shared")) for n in inner), inner


def test_plugin_api_exports_what_plugins_need():
    for name in ("Bound", "InvalidParameter", "CertificationError", "RealRange", "IntRange", "check_real",
                 "FiniteFloat", "IntLike", "format_option", "Report", "Column", "render", "round_directed", "fp",
                 "emit", "EPSILON", "DELTA", "PLUGIN_GROUP"):
        assert hasattr(plugin_api, name) and name in plugin_api.__all__
    assert plugin_api.fp.up(0.1) >= 0.1


def test_help_does_not_import_the_numerics():
    code = ("import sys\nimport shuffle_accountant.plugins.robust.cli, shuffle_accountant.plugins.pure.cli, "
            "shuffle_accountant.plugins.splitmix.cli\nassert 'scipy' not in sys.modules and 'numpy' not in sys.modules, "
            "sorted(m for m in sys.modules if m.startswith(('scipy', 'numpy')))[:3]\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 0, r.stderr

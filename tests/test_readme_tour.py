"""The README's tour is a test: every ``$ shuffle-acct ...`` command shown in a console
block runs, and prints exactly what the README shows (numbers as printed). The README's
CI recipe is used on the package itself: ``check`` against the committed golden table
``tests/golden/bounds.json``, and the grid file the recipe shows is a valid grid.

When a change of the numbers is intended, ``python tests/test_readme_tour.py --update``
rewrites the shown outputs from the current code (review the diff before committing).
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from shuffle_accountant import tables
from shuffle_accountant.cli import main

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
GOLDEN = ROOT / "tests" / "golden" / "bounds.json"


def console_examples(text: str) -> list[tuple[str, str]]:
    """``(command line, shown output)`` for every ``$ shuffle-acct`` line of every
    ``console`` block; the output runs to the next ``$`` line or the end of the block."""
    examples: list[tuple[str, str]] = []
    for block in re.findall(r"```console\n(.*?)```", text, flags=re.DOTALL):
        command, output = None, []
        for line in block.splitlines():
            if line.startswith("$ "):
                if command is not None:
                    examples.append((command, "\n".join(output)))
                command, output = line[2:], []
            else:
                output.append(line)
        if command is not None:
            examples.append((command, "\n".join(output)))
    return examples


TOUR = console_examples(README)


def _normalise(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def test_the_tour_is_found():
    commands = [c.split()[1] for c, _ in TOUR]
    assert {"epsilon", "delta", "solve", "renyi", "compose", "table"} <= set(commands)


@pytest.mark.parametrize("command,shown", TOUR, ids=[c[:60] for c, _ in TOUR])
def test_tour_command_prints_what_the_readme_shows(command: str, shown: str) -> None:
    words = shlex.split(command)
    assert words[0] == "shuffle-acct"
    r = CliRunner().invoke(main, words[1:])
    assert r.exit_code == 0, r.output
    assert _normalise(r.stdout) == _normalise(shown), f"README is stale for: {command}\n{r.stdout}"


def _recipe() -> list[str]:
    block = re.search(r"```bash\n((?:.*\n)*?)```\n", README[README.index("A golden table in your CI"):]).group(1)
    return [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]


def test_ci_recipe_installs_from_the_repository_and_uses_the_shown_grid():
    recipe = _recipe()
    assert not any(re.fullmatch(r"pip install shuffle-accountant(\[.*\])?", line) for line in recipe)
    assert any(line.startswith("pip install") for line in recipe)
    grid_file = next(w for line in recipe if "--grid" in line for w in [shlex.split(line)[shlex.split(line).index("--grid") + 1]])
    shown = re.search(r"```toml\n# " + re.escape(grid_file) + r"\n((?:.*\n)*?)```", README)
    assert shown, f"the README does not show {grid_file}"
    if sys.version_info >= (3, 11):
        import tomllib

        grid = tables.Grid.from_dict(tomllib.loads(shown.group(1)))
        assert grid.cells <= 200  # a CI-sized grid


def test_ci_recipe_check_passes_on_the_committed_golden_table():
    """The recipe's ``check`` line, with the recipe's flags, on this package's own golden table."""
    check_line = next(line for line in _recipe() if line.startswith("shuffle-acct check"))
    words = shlex.split(check_line)[1:]
    words[1] = str(GOLDEN)
    r = CliRunner().invoke(main, words)
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("ok: 180 cells agree")


def _current_output(command: str) -> str:
    r = CliRunner().invoke(main, shlex.split(command)[1:])
    if r.exit_code != 0:
        raise SystemExit(f"{command}: exit {r.exit_code}: {r.output}")
    return _normalise(r.stdout)


def update_readme(path: Path = ROOT / "README.md") -> int:
    """Rewrite the output under every ``$ shuffle-acct`` line of the console blocks;
    returns how many outputs changed."""
    text = path.read_text(encoding="utf-8")
    changed = 0

    def block(match: re.Match[str]) -> str:
        nonlocal changed
        out: list[str] = []
        for command, shown in console_examples(f"```console\n{match.group(1)}```"):
            now = _current_output(command)
            changed += now != _normalise(shown)
            out += [f"$ {command}", now]
        return "```console\n" + "\n".join(out) + "\n```"

    path.write_text(re.sub(r"```console\n(.*?)```", block, text, flags=re.DOTALL), encoding="utf-8")
    return changed


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        raise SystemExit("usage: python tests/test_readme_tour.py --update")
    print(f"{update_readme()} outputs changed in README.md")

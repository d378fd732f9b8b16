"""``shuffle-acct table``, ``check`` and ``plot``: a thin layer over :mod:`..tables`."""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import click

from .. import tables
from ..errors import InvalidParameter
from ..output import jsonable
from .params import FiniteFloat, IntLike

AXIS_HELP = "values: a list '1e3,1e4' or a range start:stop:num[:lin|log], e.g. 1e3:1e9:7:log"


def _grid_options(func: Any) -> Any:
    options = [
        click.option("--grid", "grid_file", type=click.Path(dir_okay=False), default=None,
                     help="Grid file (JSON or TOML) with n, eps0, delta|eps, methods, k, rtol; "
                          "replaces the axis options."),
        click.option("--n", "n_axis", default=None, help=f"Numbers of users; {AXIS_HELP}."),
        click.option("--eps0", "eps0_axis", default=None, help=f"Local epsilons; {AXIS_HELP}."),
        click.option("--delta", "delta_axis", default=None, help=f"Target deltas (tabulating epsilon; default 1e-6); {AXIS_HELP}."),
        click.option("--method", "-m", "methods", multiple=True,
                     help="Method (repeatable), or 'all'. See 'shuffle-acct methods'."),
        click.option("--k", type=IntLike(2, 10**9), default=None, help="Alphabet size for the k-RR methods."),
        click.option("--rtol", type=FiniteFloat(1e-12, 1e-2), default=None,
                     help="Relative width of each certified bracket (default: the API's, 1e-6 for eps, 1e-9 for delta)."),
        click.option("--jobs", "-j", type=IntLike(1, 256), default=1, show_default=True, help="Worker processes."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _build_grid(grid_file: str | None, n_axis: str | None, eps0_axis: str | None, delta_axis: str | None,
                eps_axis: str | None, methods: tuple[str, ...], k: int | None, rtol: float | None,
                quantity: str, default_methods: tuple[str, ...]) -> tables.Grid:
    if grid_file is not None:
        given = [o for o, v in (("--n", n_axis), ("--eps0", eps0_axis), ("--delta", delta_axis), ("--eps", eps_axis),
                                ("--method", methods), ("--k", k), ("--rtol", rtol)) if v]
        if given:
            raise click.UsageError(f"--grid replaces {', '.join(given)}: put them in the grid file")
        return tables.load_grid(grid_file)
    if n_axis is None or eps0_axis is None:
        raise click.UsageError("give --n and --eps0 (or --grid FILE)")
    d: dict[str, Any] = {"quantity": quantity, "n": n_axis, "eps0": eps0_axis}
    if quantity == "epsilon":
        d["delta"] = delta_axis or "1e-6"
    else:
        if eps_axis is None:
            raise click.UsageError("--quantity delta needs --eps")
        d["eps"] = eps_axis
    names = [m for m in methods]
    if "all" in names:
        d["methods"] = list(tables.all_methods(k is not None))
    else:
        d["methods"] = names or list(default_methods)
    if k is not None:
        d["k"] = k
    if rtol is not None:
        d["rtol"] = rtol
    return tables.Grid.from_dict(d)


@contextmanager
def _progress(total: int, label: str, enabled: bool) -> Iterator[Callable[[int], None] | None]:
    """A progress bar on stderr (stdout stays clean for pipes) for long tables."""
    if not enabled or total < 8:
        yield None
        return
    with click.progressbar(length=total, label=label, file=sys.stderr) as bar:
        yield bar.update


def _write(text: str, output: str | None) -> None:
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise InvalidParameter(f"cannot write {output!r}: {exc.strerror}") from None
    click.echo(f"wrote {output}", err=True)


@click.command("table")
@_grid_options
@click.option("--eps", "eps_axis", default=None, help=f"Target epsilons (with --quantity delta); {AXIS_HELP}.")
@click.option("--quantity", type=click.Choice(list(tables.QUANTITIES)), default="epsilon", show_default=True,
              help="Tabulate epsilon (at each delta) or delta (at each eps).")
@click.option("--format", "fmt", type=click.Choice(tables.TABLE_FORMATS), default="text", show_default=True,
              help="Output format; JSON and CSV can be read back by 'shuffle-acct check'.")
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None, help="Write to a file instead of stdout.")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Progress bar on stderr.")
def table_cmd(grid_file: str | None, n_axis: str | None, eps0_axis: str | None, delta_axis: str | None,
              methods: tuple[str, ...], k: int | None, rtol: float | None, jobs: int, eps_axis: str | None,
              quantity: str, fmt: str, output: str | None, progress: bool) -> None:
    """Evaluate methods over a grid of n x eps0 x delta (or eps) and print a bound table.

    Every cell carries its kind (upper / lower / not applicable); the header records the
    package version and the grid, so 'shuffle-acct check' can recompute a saved table.

    \b
    Examples:
      shuffle-acct table --n 1e3:1e9:7:log --eps0 0.5,1,2,4,8 --delta 1e-6,1e-9 -m all
      shuffle-acct table --grid grid.toml --format json -o golden.json --jobs 2
    """
    grid = _build_grid(grid_file, n_axis, eps0_axis, delta_axis, eps_axis, methods, k, rtol, quantity,
                       ("clones", "stronger-clones", "binary-rr-lower"))
    with _progress(len(grid.points()), "table", progress) as bar:
        table = tables.evaluate(grid, jobs=jobs, progress=bar)
    _write(tables.render_table(table, fmt), output)


@click.command("check")
@click.argument("golden", type=click.Path(dir_okay=False))
@click.option("--rtol", type=FiniteFloat(0.0, 1.0, high_open=True), default=tables.DEFAULT_CHECK_RTOL, show_default=True,
              help="Relative tolerance per cell.")
@click.option("--accept-tighter", is_flag=True, help="Do not fail on bounds that got tighter (review them anyway).")
@click.option("--jobs", "-j", type=IntLike(1, 256), default=1, show_default=True, help="Worker processes.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--progress/--no-progress", default=True, show_default=True, help="Progress bar on stderr.")
def check_cmd(golden: str, rtol: float, accept_tighter: bool, jobs: int, fmt: str, progress: bool) -> None:
    """Recompute a saved table (JSON or CSV from 'shuffle-acct table') and compare it.

    Exit 0 when every cell agrees within --rtol; exit 3 when a bound got looser, got
    tighter by more than --rtol (a tighter privacy bound is a claim that needs review;
    see --accept-tighter), changed kind, or a cell is missing.

    \b
    Example (CI):
      shuffle-acct check tests/golden/bounds.json --rtol 1e-5
    """
    gold = tables.load_table(golden)
    with _progress(len(gold.grid.points()), "check", progress) as bar:
        current = tables.evaluate(gold.grid, jobs=jobs, progress=bar)
    result = tables.compare_tables(gold, current, rtol, accept_tighter)
    if fmt == "json":
        doc = {"tool": "shuffle-accountant", "command": "check", "golden": golden, "golden_version": gold.version,
               "rtol": rtol, "compared": result.compared, "ok": result.ok,
               "differences": [d.to_dict() for d in result.differences],
               "accepted_tighter": [d.to_dict() for d in result.accepted]}
        click.echo(json.dumps(jsonable(doc), indent=1, allow_nan=False))
    else:
        if result.differences:
            click.echo(f"FAIL: {len(result.differences)} of {result.compared} cells differ from {golden} "
                       f"(golden version {gold.version}, rtol {rtol:g})")
            click.echo("")
            for line in tables.difference_lines(gold, result.differences):
                click.echo(line)
        else:
            click.echo(f"ok: {result.compared} cells agree with {golden} within rtol {rtol:g}")
        if result.accepted:
            click.echo("")
            click.echo(f"accepted (--accept-tighter): {len(result.accepted)} cells got tighter; review them:")
            for line in tables.difference_lines(gold, result.accepted):
                click.echo(line)
    if not result.ok:
        raise click.exceptions.Exit(3)


@click.command("plot")
@_grid_options
@click.option("--output", "-o", type=click.Path(dir_okay=False), required=True, help="Image file to write.")
@click.option("--format", "fmt", type=click.Choice(tables.PLOT_FORMATS), default=None,
              help="Image format (default: from the file suffix, else png).")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Progress bar on stderr.")
def plot_cmd(grid_file: str | None, n_axis: str | None, eps0_axis: str | None, delta_axis: str | None,
             methods: tuple[str, ...], k: int | None, rtol: float | None, jobs: int, output: str,
             fmt: str | None, progress: bool) -> None:
    """Plot epsilon against n (or against eps0) for chosen methods, lower bound as a floor.

    Needs the optional extra: pip install 'shuffle-accountant[plot]'.

    \b
    Example:
      shuffle-acct plot --n 1e3:1e7:9:log --eps0 1 -m clones -m blanket-hoeffding -o eps.png
    """
    try:
        import matplotlib  # noqa: F401
    except ModuleNotFoundError:
        raise click.ClickException(tables.PLOT_INSTALL_HINT) from None
    names = list(methods)
    if not any(tables.METHODS[m].kind == "lower" for m in names if m in tables.METHODS):
        names.append("krr-lower" if k is not None else "binary-rr-lower")
    if not methods:
        names = ["clones", "stronger-clones", "closed-form", *names]
    grid = _build_grid(grid_file, n_axis, eps0_axis, delta_axis, None, tuple(names) if not grid_file else (),
                       k, rtol, "epsilon", ())
    with _progress(len(grid.points()), "plot", progress) as bar:
        path = tables.plot_epsilon(grid, output, fmt, jobs=jobs, progress=bar)
    click.echo(f"wrote {path}", err=True)

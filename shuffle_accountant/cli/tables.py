"""``shuffle-acct table``, ``check`` and ``plot``: a thin layer over :mod:`..tables` and
:mod:`..plotting`.

Everything that can be refused is refused before the first cell is computed (the grid,
its size, the output path); long runs show a progress bar on stderr; files are written
atomically, so a failure leaves nothing half-written.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click

from .. import plotting, tables
from .. import validation as v
from ..analyses import get_method
from ..output import check_output_path, dump_json, envelope, write_text_atomically
from ..randomizers import RandomizerFamily
from .params import ALPHABET, JOBS, RangeType
from .randomizer_options import build_family, randomizer_options

AXIS_HELP = "values: a list '1e3,1e4' or a range start:stop:num[:lin|log], e.g. 1e3:1e9:7:log"
#: Tables with at least this many cells show a progress bar (unless --no-progress).
PROGRESS_MIN_CELLS = 8


def _grid_options(func: Any) -> Any:
    options = [
        click.option("--grid", "grid_file", type=click.Path(dir_okay=False), default=None,
                     help="Grid file (JSON or TOML) with n, eps0, delta|eps, methods, k, rtol; "
                          "replaces the axis options."),
        click.option("--n", "n_axis", default=None,
                     help=f"Numbers of users (whole numbers; log ranges are rounded); {AXIS_HELP}."),
        click.option("--eps0", "eps0_axis", default=None, help=f"Local epsilons (0 < eps0 <= 700); {AXIS_HELP}."),
        click.option("--delta", "delta_axis", default=None,
                     help=f"Target deltas (tabulating epsilon; default 1e-6; 1e-300 <= delta < 1); {AXIS_HELP}."),
        click.option("--method", "-m", "methods", multiple=True,
                     help="Method (repeatable), or 'all'. See 'shuffle-acct methods'."),
        click.option("--k", type=ALPHABET, default=None, help="Alphabet size for the k-RR methods (2 <= k <= 1e9)."),
        click.option("--rtol", type=RangeType(v.RTOL), default=None,
                     help="Relative width of each certified bracket, 1e-12 to 0.01 (default: the API's, 1e-6 for "
                          "eps, 1e-9 for delta)."),
        click.option("--jobs", "-j", type=JOBS, default=1, show_default=True, help="Worker processes (1 to 256)."),
    ]
    for option in reversed(options):
        func = option(func)
    return randomizer_options(func)


def _randomizer_defaults(family: RandomizerFamily) -> tuple[str, ...]:
    """Default methods with a randomizer: its blanket bound, the attained datasets, and the
    generic upper bounds for comparison."""
    return ("blanket", "dataset-lower", "stronger-clones", "clones")


def _build_grid(grid_file: str | None, n_axis: str | None, eps0_axis: str | None, delta_axis: str | None,
                eps_axis: str | None, methods: tuple[str, ...], k: int | None, rtol: float | None,
                quantity: str, default_methods: tuple[str, ...], family: RandomizerFamily | None = None,
                randomizer_given: tuple[str, ...] = ()) -> tables.Grid:
    if grid_file is not None:
        given = [o for o, val in (("--n", n_axis), ("--eps0", eps0_axis), ("--delta", delta_axis),
                                  ("--eps", eps_axis), ("--method", methods), ("--k", k), ("--rtol", rtol)) if val]
        given += list(randomizer_given)
        if given:
            raise click.UsageError(f"--grid replaces {', '.join(given)}: put them in the grid file")
        return tables.load_grid(grid_file)
    if family is not None and family.fixed_eps0 is not None and eps0_axis is None:
        eps0_axis = repr(family.fixed_eps0)
    if n_axis is None or eps0_axis is None:
        raise click.UsageError("give --n and --eps0 (or --grid FILE)")
    d: dict[str, Any] = {"quantity": quantity, "n": n_axis, "eps0": eps0_axis}
    if quantity == "epsilon":
        if eps_axis is not None:
            raise click.UsageError("--eps is the target of --quantity delta; tabulating epsilon takes --delta")
        d["delta"] = delta_axis or "1e-6"
    else:
        if eps_axis is None:
            raise click.UsageError("--quantity delta needs --eps")
        if delta_axis is not None:
            raise click.UsageError("--delta is the target of --quantity epsilon; tabulating delta takes --eps")
        d["eps"] = eps_axis
    d["methods"] = list(methods) or list(default_methods)
    if k is not None:
        d["k"] = k
    if rtol is not None:
        d["rtol"] = rtol
    if family is not None:
        d["randomizer"] = family.to_dict()
        if family.name != "krr":
            d.pop("k", None)  # --k is the randomizer's domain size, not a k-RR method's
    return tables.Grid.from_dict(d)


def _family(k: int | None, randomizer_name: str | None, g: int | None, d: int | None,
            randomizer_file: str | None) -> tuple[RandomizerFamily | None, tuple[str, ...]]:
    """The randomizer family of the options, and which randomizer options were given."""
    given = tuple(o for o, val in (("--randomizer", randomizer_name), ("--g", g), ("--d", d),
                                   ("--randomizer-file", randomizer_file)) if val is not None)
    return build_family(k, randomizer_name, g, d, randomizer_file), given


@contextmanager
def _progress(total: int, label: str, enabled: bool) -> Iterator[Callable[[int], None] | None]:
    """A progress bar on stderr (stdout stays clean for pipes) for long tables."""
    if not enabled or total < PROGRESS_MIN_CELLS:
        yield None
        return
    from . import Heartbeat

    if Heartbeat.active is not None:
        Heartbeat.active.pause()
    with click.progressbar(length=total, label=label, file=sys.stderr, show_eta=True) as bar:
        yield bar.update


@click.command("table")
@_grid_options
@click.option("--eps", "eps_axis", default=None,
              help=f"Target epsilons (with --quantity delta; 0 <= eps <= 700); {AXIS_HELP}.")
@click.option("--quantity", type=click.Choice(list(tables.QUANTITIES)), default="epsilon", show_default=True,
              help="Tabulate epsilon (at each delta) or delta (at each eps).")
@click.option("--format", "fmt", type=click.Choice(tables.TABLE_FORMATS), default="text", show_default=True,
              help="Output format; JSON (the shuffle-acct envelope) and CSV can be read back by 'shuffle-acct check'.")
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None,
              help="Write to a file instead of stdout (checked before computing; written atomically).")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Progress bar on stderr.")
def table_cmd(grid_file: str | None, n_axis: str | None, eps0_axis: str | None, delta_axis: str | None,
              methods: tuple[str, ...], k: int | None, rtol: float | None, jobs: int, randomizer_name: str | None,
              g: int | None, d: int | None, randomizer_file: str | None, eps_axis: str | None,
              quantity: str, fmt: str, output: str | None, progress: bool) -> None:
    """Evaluate methods over a grid of n x eps0 x delta (or eps) and print a bound table.

    Every cell carries its kind (upper / lower / not applicable / not certified); the
    header records the package version and the grid, so 'shuffle-acct check' can
    recompute a saved table. At most 100,000 cells; a progress bar shows on stderr.

    \b
    Examples:
      shuffle-acct table --n 1e3:1e9:7:log --eps0 0.5,1,2,4,8 --delta 1e-6,1e-9 -m all
      shuffle-acct table --grid grid.toml --format json -o golden.json --jobs 2
      shuffle-acct table --n 1e3,1e4,1e5 --eps0 1,2 --randomizer krr --k 10
    """
    if output is not None:
        check_output_path(output)
    family, given = _family(k, randomizer_name, g, d, randomizer_file)
    defaults = ("clones", "stronger-clones", "binary-rr-lower") if family is None else _randomizer_defaults(family)
    grid = _build_grid(grid_file, n_axis, eps0_axis, delta_axis, eps_axis, methods, k, rtol, quantity, defaults,
                       family, given)
    with _progress(grid.cells, "table", progress) as bar:
        table = tables.evaluate(grid, jobs=jobs, progress=bar)
    text = tables.render_table(table, fmt)
    if output is None:
        click.echo(text, nl=False)
    else:
        write_text_atomically(output, text)
        click.echo(f"wrote {output}", err=True)


@click.command("check")
@click.argument("golden", type=click.Path(dir_okay=False))
@click.option("--rtol", type=RangeType(v.CHECK_RTOL), default=tables.DEFAULT_CHECK_RTOL, show_default=True,
              help="Relative tolerance per cell (0 <= rtol < 1).")
@click.option("--accept-tighter", is_flag=True, help="Do not fail on bounds that got tighter (review them anyway).")
@click.option("--jobs", "-j", type=JOBS, default=1, show_default=True, help="Worker processes (1 to 256).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Output format (JSON: the shuffle-acct envelope, one record per differing cell).")
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
    with _progress(gold.grid.cells, "check", progress) as bar:
        current = tables.evaluate(gold.grid, jobs=jobs, progress=bar)
    result = tables.compare_tables(gold, current, rtol, accept_tighter)
    if fmt == "json":
        records = [dict(d.to_dict(), accepted=False) for d in result.differences]
        records += [dict(d.to_dict(), accepted=True) for d in result.accepted]
        doc = envelope(
            "check", {"golden": golden, "rtol": rtol, "accept_tighter": accept_tighter}, records,
            notes=["one record per differing cell; accepted = tighter and let through by --accept-tighter"],
            summary={"ok": result.ok, "compared": result.compared, "failed": len(result.differences),
                     "accepted_tighter": len(result.accepted), "golden_version": gold.version},
        )
        click.echo(dump_json(doc), nl=False)
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
@click.option("--output", "-o", type=click.Path(dir_okay=False), required=True,
              help="Image file to write (checked before computing; written atomically).")
@click.option("--image-format", "image_format", type=click.Choice(plotting.PLOT_FORMATS), default=None,
              help="Image format (default: from the file suffix, else png).")
@click.option("--format", "deprecated_format", type=click.Choice(plotting.PLOT_FORMATS), default=None, hidden=True)
@click.option("--progress/--no-progress", default=True, show_default=True, help="Progress bar on stderr.")
def plot_cmd(grid_file: str | None, n_axis: str | None, eps0_axis: str | None, delta_axis: str | None,
             methods: tuple[str, ...], k: int | None, rtol: float | None, jobs: int, randomizer_name: str | None,
             g: int | None, d: int | None, randomizer_file: str | None, output: str,
             image_format: str | None, deprecated_format: str | None, progress: bool) -> None:
    """Plot epsilon against n (or against eps0) for chosen methods, lower bound as a floor.

    Needs the optional extra: pip install 'shuffle-accountant[plot]'.

    \b
    Examples:
      shuffle-acct plot --n 1e3:1e7:9:log --eps0 1 -m clones -m blanket-hoeffding -o eps.png
      shuffle-acct plot --n 1e3:1e6:7:log --eps0 1 --randomizer krr --k 10 -o krr.png
    """
    if deprecated_format is not None:
        if image_format is not None:
            raise click.UsageError("give --image-format only (--format is its deprecated name in plot)")
        click.echo("warning: plot --format is deprecated; use --image-format", err=True)
        image_format = deprecated_format
    fmt = plotting.image_format(output, image_format)
    check_output_path(output)
    try:
        import matplotlib  # noqa: F401
    except ModuleNotFoundError:
        raise click.ClickException(plotting.PLOT_INSTALL_HINT) from None
    family, given = _family(k, randomizer_name, g, d, randomizer_file)
    names = list(methods)
    if family is not None:  # the floor is what the randomizer attains (its datasets); no generic floor
        names = names or list(_randomizer_defaults(family))
    else:
        if "all" not in names and not any(get_method(m).kind == "lower" for m in names):
            names.append("krr-lower" if k is not None else "binary-rr-lower")
        if not methods:
            names = ["clones", "stronger-clones", "closed-form", *names]
    grid = _build_grid(grid_file, n_axis, eps0_axis, delta_axis, None, tuple(names) if not grid_file else (),
                       k, rtol, "epsilon", (), family, given)
    plotting.check_plot(grid)
    with _progress(grid.cells, "plot", progress) as bar:
        path = plotting.plot_epsilon(grid, output, fmt, jobs=jobs, progress=bar)
    click.echo(f"wrote {path}", err=True)

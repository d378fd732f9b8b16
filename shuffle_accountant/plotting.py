"""Plots of bound tables (the API behind ``shuffle-acct plot``; matplotlib is the optional
``[plot]`` extra).

:func:`plot_epsilon` draws the central epsilon of a :class:`~.tables.Grid` against ``n``
(or against ``eps0``), upper-bound methods as lines, lower-bound methods as a shaded floor
(no generic analysis can go below a mechanism that attains it). Everything that can be
checked is checked before any cell is computed, and the image is written atomically (a
temporary file renamed into place), so a failure leaves no partial file.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._version import __version__
from .analyses import get_method
from .errors import InvalidParameter
from .output import check_output_path, replace_atomically
from .tables import Grid, evaluate

PLOT_FORMATS = ("png", "svg", "pdf")
PLOT_INSTALL_HINT = "plotting needs matplotlib: pip install 'shuffle-accountant[plot]' (or pip install matplotlib)"


def image_format(path: str | Path, fmt: str | None = None) -> str:
    """The image format: ``fmt``, else the file suffix, else ``png``; one of :data:`PLOT_FORMATS`."""
    suffix = Path(path).suffix.lstrip(".").lower()
    chosen = (fmt or (suffix if suffix in PLOT_FORMATS else "") or "png").lower()
    if chosen not in PLOT_FORMATS:
        raise InvalidParameter(f"image format: {chosen!r} is not one of {', '.join(PLOT_FORMATS)}")
    return chosen


def check_plot(grid: Grid) -> str:
    """What :func:`plot_epsilon` needs of a grid; returns the x axis (``n`` or ``eps0``)."""
    if grid.quantity != "epsilon":
        raise InvalidParameter("plot draws epsilon; give --delta values, not --eps")
    if len(grid.n) > 1 and len(grid.eps0) > 1:
        raise InvalidParameter("plot: give several values for n or for eps0, not both")
    return "eps0" if len(grid.eps0) > 1 else "n"


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ModuleNotFoundError:
        raise InvalidParameter(PLOT_INSTALL_HINT) from None
    return plt


def plot_epsilon(grid: Grid, path: str | Path, fmt: str | None = None, jobs: int = 1,
                 progress: Callable[[int], None] | None = None) -> Path:
    """Draw eps against ``n`` (or against ``eps0``, whichever axis has several values) for
    the grid's upper-bound methods, with its lower-bound methods as a shaded floor, one
    line style per delta value on shared axes. Writes PNG, SVG or PDF (from ``fmt`` or the
    file suffix) and returns the path."""
    x_axis = check_plot(grid)
    p = Path(path)
    fmt = image_format(p, fmt)
    check_output_path(p)
    plt = _pyplot()
    table = evaluate(grid, jobs=jobs, progress=progress)
    xs = list(grid.eps0 if x_axis == "eps0" else grid.n)
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=110)
    styles = ["-", "--", "-.", ":"]
    for j, d in enumerate(grid.delta):
        for i, m in enumerate(grid.methods):
            kind = get_method(m).kind
            ys = [next((c["value"] for c in table.cells if c["method"] == m and c["delta"] == d
                        and c[x_axis] == x), None) for x in xs]
            pts = [(x, y) for x, y in zip(xs, ys) if y is not None and y > 0]
            if not pts:
                continue
            label = f"{m} ({kind})" + (f", δ={d:g}" if len(grid.delta) > 1 else "")
            px, py = zip(*pts)
            if kind == "lower":
                ax.fill_between(px, [min(py) / 10] * len(py), py, color="0.85", zorder=0,
                                label=f"below {m}: unattainable" + (f", δ={d:g}" if len(grid.delta) > 1 else ""))
                ax.plot(px, py, color="0.3", lw=1.2, ls=styles[j % 4])
            else:
                ax.plot(px, py, marker="o", ms=3, ls=styles[j % 4], label=label, color=f"C{i}")
    ax.set_xscale("log" if x_axis == "n" else "linear")
    ax.set_yscale("log")
    ax.set_xlabel("number of users n" if x_axis == "n" else "local privacy ε0 (nats)")
    ax.set_ylabel("central ε (nats)")
    fixed = f"ε0 = {grid.eps0[0]:g}" if x_axis == "n" else f"n = {grid.n[0]:g}"
    deltas = ", ".join(f"{d:g}" for d in grid.delta)
    ax.set_title(f"Shuffled ε0-DP reports: {fixed}, δ = {deltas}" + (f", k = {grid.k}" if grid.k else ""), fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, title=f"method (δ = {deltas})", title_fontsize=8)
    fig.tight_layout()
    metadata = {"Software": f"shuffle-accountant {__version__}"} if fmt == "png" else None
    try:
        replace_atomically(p, lambda tmp: fig.savefig(tmp, format=fmt, metadata=metadata))
    finally:
        plt.close(fig)
    return p

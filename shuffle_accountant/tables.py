"""Bound tables over parameter grids, and the regression check against a saved table.

The API behind ``shuffle-acct table`` and ``shuffle-acct check``::

    >>> from shuffle_accountant import tables
    >>> g = tables.Grid(n=tables.parse_axis("n", "1e3:1e5:3:log"), eps0=(1.0,), delta=(1e-6,),
    ...                 methods=("clones",))
    >>> t = tables.evaluate(g)
    >>> [c["n"] for c in t.cells]
    [1000, 10000, 100000]

A grid has three axes: ``n``, ``eps0`` and the target (``delta`` when tabulating eps,
``eps`` when tabulating delta), plus methods, an optional alphabet size ``k`` and the
bracket ``rtol``. An axis is a list of values, or a range ``start:stop:num[:lin|log]``
(``num`` values, linear by default); values are rounded to 12 significant digits so that
a range and the equivalent grid file give identical inputs. Every cell records its value
and its kind (``upper``, ``lower``, ``not applicable``, ``not certified``); a table's
header records the package version and the grid, so a saved table can be recomputed.
"""

from __future__ import annotations

import csv
import io
import json
import math
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from . import api
from ._version import __version__
from .analyses import METHODS, get_method
from .errors import CertificationError, InvalidParameter
from .output import Column, _text_table, jsonable, round_directed

QUANTITIES = {"epsilon": "delta", "delta": "eps"}  # tabulated quantity -> its target axis
TABLE_FORMATS = ("text", "csv", "json", "markdown")
#: Default relative tolerance of ``check``: bounds are certified brackets of relative
#: width 1e-6, so a recomputation may move within that; 1e-5 leaves room for library drift.
DEFAULT_CHECK_RTOL = 1e-5


# ---------------------------------------------------------------------------------------
# grids
# ---------------------------------------------------------------------------------------


def _clean(x: float) -> float:
    return float(f"{x:.12g}")


def _number(name: str, text: Any) -> float:
    try:
        x = float(str(text).strip().replace("_", ""))
    except ValueError:
        raise InvalidParameter(f"{name}: {text!r} is not a number") from None
    if not math.isfinite(x):
        raise InvalidParameter(f"{name}: {text!r} is not finite")
    return x


def axis_range(name: str, start: float, stop: float, num: int, scale: str = "lin") -> tuple[float, ...]:
    """``num`` values from ``start`` to ``stop`` (inclusive), linearly or logarithmically spaced."""
    if isinstance(num, bool) or not isinstance(num, int) or not 1 <= num <= 10_000:
        raise InvalidParameter(f"{name}: the number of values must be an integer in [1, 10000], got {num!r}")
    if scale not in ("lin", "log"):
        raise InvalidParameter(f"{name}: scale must be 'lin' or 'log', got {scale!r}")
    if num == 1:
        return (_clean(start),)
    if scale == "log":
        if start <= 0 or stop <= 0:
            raise InvalidParameter(f"{name}: a logarithmic range needs start > 0 and stop > 0")
        a, b = math.log10(start), math.log10(stop)
        return tuple(_clean(10.0 ** (a + (b - a) * i / (num - 1))) for i in range(num))
    return tuple(_clean(start + (stop - start) * i / (num - 1)) for i in range(num))


def parse_axis(name: str, spec: Any) -> tuple[float, ...]:
    """An axis from a range string ``start:stop:num[:lin|log]``, a comma list ``a,b,c``,
    a number, a list, or a mapping ``{start, stop, num, scale}`` (grid files)."""
    if isinstance(spec, dict):
        unknown = set(spec) - {"start", "stop", "num", "scale"}
        if unknown or not {"start", "stop", "num"} <= set(spec):
            raise InvalidParameter(f"{name}: a range needs keys start, stop, num (and optionally scale)")
        return axis_range(name, _number(name, spec["start"]), _number(name, spec["stop"]),
                          _int(name, spec["num"]), str(spec.get("scale", "lin")))
    if isinstance(spec, (list, tuple)):
        values = [v for s in spec for v in parse_axis(name, s)]
    elif isinstance(spec, str) and ":" in spec:
        parts = spec.split(":")
        if len(parts) not in (3, 4):
            raise InvalidParameter(f"{name}: a range is start:stop:num[:lin|log], got {spec!r}")
        values = list(axis_range(name, _number(name, parts[0]), _number(name, parts[1]),
                                 _int(name, parts[2]), parts[3].strip() if len(parts) == 4 else "lin"))
    elif isinstance(spec, str):
        values = [_clean(_number(name, s)) for s in spec.split(",") if s.strip()]
    elif isinstance(spec, (int, float)) and not isinstance(spec, bool):
        values = [_clean(_number(name, spec))]
    else:
        raise InvalidParameter(f"{name}: cannot read an axis from {spec!r}")
    if not values:
        raise InvalidParameter(f"{name}: the axis is empty")
    return tuple(dict.fromkeys(values))


def _int(name: str, v: Any) -> int:
    x = _number(name, v)
    if not x.is_integer():
        raise InvalidParameter(f"{name}: {v!r} is not an integer")
    return int(x)


@dataclass(frozen=True)
class Grid:
    """What a table evaluates: every method at every point of ``n x eps0 x target``."""

    n: tuple[float, ...]
    eps0: tuple[float, ...]
    delta: tuple[float, ...] = ()
    eps: tuple[float, ...] = ()
    methods: tuple[str, ...] = ("clones",)
    quantity: str = "epsilon"
    k: int | None = None
    rtol: float | None = None

    def __post_init__(self) -> None:
        if self.quantity not in QUANTITIES:
            raise InvalidParameter(f"quantity must be one of {', '.join(QUANTITIES)}, got {self.quantity!r}")
        ns = tuple(dict.fromkeys(int(round(x)) for x in self.n))
        for x in ns:
            if not 1 <= x <= 10**12:
                raise InvalidParameter(f"n out of range: need 1 <= n <= 1e12, got {x}")
        object.__setattr__(self, "n", ns)
        if not self.n or not self.eps0 or not self.target_values:
            raise InvalidParameter(f"the grid needs values of n, eps0 and {self.target_axis}")
        methods = tuple(dict.fromkeys(self.methods))
        if not methods:
            raise InvalidParameter("the grid needs at least one method")
        for m in methods:
            get_method(m)
            if METHODS[m].needs_k and self.k is None:
                raise InvalidParameter(f"method {m!r} needs k (the alphabet size, k >= 2)")
        object.__setattr__(self, "methods", methods)

    @property
    def target_axis(self) -> str:
        return QUANTITIES[self.quantity]

    @property
    def target_values(self) -> tuple[float, ...]:
        return self.delta if self.quantity == "epsilon" else self.eps

    def points(self) -> list[dict[str, Any]]:
        """Every cell's inputs, in table order (n, then eps0, then target, then method)."""
        return [
            {"n": n, "eps0": e0, self.target_axis: t, "method": m}
            for n in self.n for e0 in self.eps0 for t in self.target_values for m in self.methods
        ]

    def to_dict(self) -> dict[str, Any]:
        d = {"quantity": self.quantity, "n": list(self.n), "eps0": list(self.eps0),
             self.target_axis: list(self.target_values), "methods": list(self.methods)}
        if self.k is not None:
            d["k"] = self.k
        if self.rtol is not None:
            d["rtol"] = self.rtol
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Grid:
        """A grid from a mapping (a grid file, or the ``grid`` header of a saved table)."""
        known = {"quantity", "n", "eps0", "delta", "eps", "methods", "k", "rtol"}
        unknown = set(d) - known
        if unknown:
            raise InvalidParameter(f"unknown grid key(s) {', '.join(sorted(unknown))}; known: {', '.join(sorted(known))}")
        quantity = str(d.get("quantity", "epsilon"))
        if quantity not in QUANTITIES:
            raise InvalidParameter(f"quantity must be one of {', '.join(QUANTITIES)}, got {quantity!r}")
        target = QUANTITIES[quantity]
        for key in ("n", "eps0", target):
            if key not in d:
                raise InvalidParameter(f"the grid needs {key!r}")
        methods = d.get("methods", ["clones"])
        if methods == "all":
            methods = all_methods(d.get("k") is not None)
        if isinstance(methods, str):
            methods = [methods]
        return cls(
            n=parse_axis("n", d["n"]),
            eps0=parse_axis("eps0", d["eps0"]),
            delta=parse_axis("delta", d["delta"]) if quantity == "epsilon" else (),
            eps=parse_axis("eps", d["eps"]) if quantity == "delta" else (),
            methods=tuple(methods),
            quantity=quantity,
            k=_int("k", d["k"]) if d.get("k") is not None else None,
            rtol=_number("rtol", d["rtol"]) if d.get("rtol") is not None else None,
        )


def all_methods(with_k: bool) -> tuple[str, ...]:
    """Every registered method (those needing ``k`` only when ``k`` is given)."""
    return tuple(m.name for m in METHODS.values() if with_k or not m.needs_k)


def load_grid(path: str | Path) -> Grid:
    """A grid file: JSON (``.json``) or TOML (``.toml``; Python >= 3.11, or ``tomli``)."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise InvalidParameter(f"cannot read grid file {str(p)!r}: {exc.strerror}") from None
    if p.suffix.lower() == ".toml":
        try:
            import tomllib  # type: ignore[import-not-found]
        except ModuleNotFoundError:  # Python 3.10
            try:
                import tomli as tomllib  # type: ignore[import-not-found, no-redef]
            except ModuleNotFoundError:
                raise InvalidParameter("TOML grid files need Python >= 3.11 or 'pip install tomli'; "
                                       "or write the grid as JSON") from None
        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise InvalidParameter(f"grid file {str(p)!r} is not valid TOML: {exc}") from None
    else:
        try:
            data = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InvalidParameter(f"grid file {str(p)!r} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise InvalidParameter(f"grid file {str(p)!r} must hold a table/object of axes")
    return Grid.from_dict(data)


# ---------------------------------------------------------------------------------------
# evaluation
# ---------------------------------------------------------------------------------------


def evaluate_cell(grid_quantity: str, point: dict[str, Any], k: int | None, rtol: float | None) -> dict[str, Any]:
    """One cell: the point, its value and kind (a CertificationError becomes kind
    ``not certified``; the reason is kept in ``note``)."""
    cell = dict(point)
    if k is not None:
        cell["k"] = k
    method = point["method"]
    try:
        if grid_quantity == "epsilon":
            kw = {"rtol": rtol} if rtol is not None else {}
            b = api.epsilon(point["eps0"], point["n"], point["delta"], method, k, **kw)
        else:
            kw = {"rtol": rtol} if rtol is not None else {}
            b = api.delta(point["eps0"], point["n"], point["eps"], method, k, **kw)
    except CertificationError as exc:
        cell.update(value=None, kind="not certified", note=str(exc))
        return cell
    cell.update(value=b.value, kind=b.kind, note="" if b.applicable else b.validity)
    if b.warnings:
        cell["note"] = "; ".join(b.warnings)
    return cell


def _evaluate_star(args: tuple) -> dict[str, Any]:
    return evaluate_cell(*args)


@dataclass
class Table:
    """An evaluated grid: ``cells`` in grid order, with the package version."""

    grid: Grid
    cells: list[dict[str, Any]]
    version: str = __version__
    extra: dict[str, Any] = field(default_factory=dict)

    def key(self, cell: dict[str, Any]) -> tuple:
        return (cell["n"], cell["eps0"], cell[self.grid.target_axis], cell["method"])


def evaluate(grid: Grid, jobs: int = 1, progress: Callable[[int], None] | None = None) -> Table:
    """Evaluate every cell of ``grid``; ``jobs > 1`` uses that many processes.
    ``progress(k)`` is called as cells complete (``k`` = number just completed)."""
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise InvalidParameter(f"jobs must be an integer >= 1, got {jobs!r}")
    tasks = [(grid.quantity, p, grid.k, grid.rtol) for p in grid.points()]
    cells: list[dict[str, Any]] = []
    if jobs == 1 or len(tasks) < 2:
        for t in tasks:
            cells.append(_evaluate_star(t))
            if progress:
                progress(1)
    else:
        chunk = max(1, len(tasks) // (jobs * 8))
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for c in pool.map(_evaluate_star, tasks, chunksize=chunk):
                cells.append(c)
                if progress:
                    progress(1)
    return Table(grid, cells)


# ---------------------------------------------------------------------------------------
# serialisation: JSON (the golden format), CSV (with '#' header lines), Markdown, text
# ---------------------------------------------------------------------------------------

CELL_KEYS = ("n", "eps0", "delta", "eps", "k", "method", "value", "kind", "note")


def _columns(table: Table) -> list[str]:
    keys = ["n", "eps0", table.grid.target_axis]
    if table.grid.k is not None:
        keys.append("k")
    return keys + ["method", "value", "kind", "note"]


def header_lines(table: Table) -> list[str]:
    """Human-readable header: tool, version, quantity and the grid."""
    return [
        f"shuffle-accountant {table.version} table of {table.grid.quantity}",
        "grid: " + json.dumps(jsonable(table.grid.to_dict()), separators=(",", ":")),
    ]


def to_json(table: Table) -> str:
    doc = {
        "tool": "shuffle-accountant",
        "version": table.version,
        "command": "table",
        "quantity": table.grid.quantity,
        "grid": table.grid.to_dict(),
        "cells": table.cells,
        "citations": {m: METHODS[m].citation for m in table.grid.methods},
        **table.extra,
    }
    return json.dumps(jsonable(doc), indent=1, allow_nan=False) + "\n"


def _csv_value(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return "inf" if v == math.inf else repr(v)
    return str(v)


def to_csv(table: Table) -> str:
    buf = io.StringIO()
    for line in header_lines(table):
        buf.write(f"# {line}\n")
    w = csv.writer(buf, lineterminator="\n")
    cols = _columns(table)
    w.writerow(cols)
    for c in table.cells:
        w.writerow([_csv_value(c.get(k)) for k in cols])
    return buf.getvalue()


def _display(c: dict[str, Any]) -> str:
    v = c.get("value")
    return "n/a" if v is None else round_directed(v, c.get("kind", ""))


def _rows(table: Table) -> list[list[str]]:
    cols = _columns(table)
    rows = []
    for c in table.cells:
        rows.append([_display(c) if k == "value" else ("" if c.get(k) is None else f"{c[k]:g}" if isinstance(c[k], float) else str(c[k]))
                     for k in cols])
    return rows


def to_markdown(table: Table) -> str:
    lines = [f"**{header_lines(table)[0]}**", "", f"`{header_lines(table)[1]}`", ""]
    cols = _columns(table)
    lines.append("| " + " | ".join(cols) + " |")
    lines.append("|" + "|".join("---" for _ in cols) + "|")
    for r in _rows(table):
        lines.append("| " + " | ".join(x.replace("|", "\\|") for x in r) + " |")
    lines += ["", "upper = certified upper bound (published comparators: upper bounds of their looser analyses); "
              "lower = attained by a concrete mechanism, rounded down."]
    return "\n".join(lines) + "\n"


def text_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """Aligned plain-text columns (the same layout as every other command's text output)."""
    return _text_table([Column(h, h) for h in header], [dict(zip(header, r)) for r in rows])


def to_text(table: Table) -> str:
    return "\n".join(header_lines(table) + [""] + text_table(_columns(table), _rows(table))) + "\n"


def render_table(table: Table, fmt: str) -> str:
    """``table`` as ``text``, ``csv``, ``json`` or ``markdown``."""
    renderers = {"text": to_text, "csv": to_csv, "json": to_json, "markdown": to_markdown}
    if fmt not in renderers:
        raise InvalidParameter(f"format must be one of {', '.join(TABLE_FORMATS)}, got {fmt!r}")
    return renderers[fmt](table)


def _cell_from_csv(row: dict[str, str]) -> dict[str, Any]:
    c: dict[str, Any] = {}
    for k, v in row.items():
        if k in ("n", "k"):
            c[k] = int(v) if v else None
        elif k in ("eps0", "delta", "eps", "value"):
            c[k] = float(v) if v else None
        else:
            c[k] = v
    return c


def load_table(path: str | Path) -> Table:
    """Read a table written by :func:`render_table` as JSON or CSV."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidParameter(f"cannot read table {str(p)!r}: {exc}") from None
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            doc = json.loads(text)
            grid = Grid.from_dict(doc["grid"])
            cells = [dict(c) for c in doc["cells"]]
            for c in cells:
                if isinstance(c.get("value"), str):  # infinities are written as strings
                    c["value"] = float(c["value"])
            return Table(grid, cells, str(doc.get("version", "?")))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise InvalidParameter(f"{str(p)!r} is not a shuffle-acct JSON table: {exc}") from None
    if stripped.startswith("# shuffle-accountant"):
        lines = text.splitlines()
        head = [ln[2:] for ln in lines if ln.startswith("# ")]
        body = [ln for ln in lines if not ln.startswith("#")]
        try:
            version = head[0].split()[1]
            grid_line = next(h for h in head if h.startswith("grid: "))
            grid = Grid.from_dict(json.loads(grid_line[len("grid: "):]))
            cells = [_cell_from_csv(r) for r in csv.DictReader(body)]
        except (StopIteration, IndexError, json.JSONDecodeError, ValueError) as exc:
            raise InvalidParameter(f"{str(p)!r} is not a shuffle-acct CSV table: {exc}") from None
        return Table(grid, cells, version)
    raise InvalidParameter(f"{str(p)!r} is not a table written by 'shuffle-acct table --format json|csv'")


# ---------------------------------------------------------------------------------------
# regression check
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Difference:
    """A cell that differs from the golden table."""

    key: tuple
    kind: str
    golden: float | None
    current: float | None
    verdict: str  # looser | tighter | kind changed | missing | new
    relative: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class CheckResult:
    compared: int
    differences: tuple[Difference, ...]
    accepted: tuple[Difference, ...]  # tighter cells accepted by accept_tighter

    @property
    def ok(self) -> bool:
        return not self.differences


def compare_tables(golden: Table, current: Table, rtol: float = DEFAULT_CHECK_RTOL,
                   accept_tighter: bool = False) -> CheckResult:
    """Compare cell by cell. A cell fails when its kind changed, or its value moved by
    more than ``rtol`` (relative): looser (an upper bound went up, a lower bound down)
    always fails; tighter fails unless ``accept_tighter`` (a tighter privacy bound is a
    claim that needs review)."""
    if not 0.0 <= rtol < 1.0 or math.isnan(rtol):
        raise InvalidParameter(f"rtol must be in [0, 1), got {rtol!r}")
    cur = {current.key(c): c for c in current.cells}
    gold = {golden.key(c): c for c in golden.cells}
    diffs: list[Difference] = []
    accepted: list[Difference] = []
    for key, g in gold.items():
        c = cur.get(key)
        if c is None:
            diffs.append(Difference(key, g.get("kind", ""), g.get("value"), None, "missing", None))
            continue
        gv, cv, gk, ck = g.get("value"), c.get("value"), g.get("kind"), c.get("kind")
        if gk != ck or (gv is None) != (cv is None):
            diffs.append(Difference(key, f"{gk} -> {ck}", gv, cv, "kind changed", None))
            continue
        if gv is None or gv == cv:
            continue
        scale = max(abs(gv), abs(cv))
        rel = abs(cv - gv) / scale if math.isfinite(scale) and scale > 0 else math.inf
        if rel <= rtol:
            continue
        went_up = cv > gv
        looser = went_up if gk == "upper" else not went_up
        d = Difference(key, gk, gv, cv, "looser" if looser else "tighter", rel)
        (accepted if (not looser and accept_tighter) else diffs).append(d)
    for key, c in cur.items():
        if key not in gold:
            diffs.append(Difference(key, c.get("kind", ""), None, c.get("value"), "new", None))
    return CheckResult(len(gold), tuple(diffs), tuple(accepted))


def difference_lines(golden: Table, diffs: Sequence[Difference]) -> list[str]:
    """The differing cells as an aligned text table."""
    target = golden.grid.target_axis

    def fmt(v: float | None, kind: str) -> str:
        return "n/a" if v is None else round_directed(v, kind if kind in ("upper", "lower") else "", 10)

    rows = [[str(d.key[0]), f"{d.key[1]:g}", f"{d.key[2]:g}", d.key[3], d.kind, fmt(d.golden, d.kind),
             fmt(d.current, d.kind), "" if d.relative is None else f"{d.relative:.3g}", d.verdict] for d in diffs]
    return text_table(["n", "eps0", target, "method", "kind", "golden", "now", "rel. change", "verdict"], rows)


def check(golden_path: str | Path, rtol: float = DEFAULT_CHECK_RTOL, accept_tighter: bool = False,
          jobs: int = 1, progress: Callable[[int], None] | None = None) -> tuple[Table, CheckResult]:
    """Recompute the saved table at ``golden_path`` and compare it cell by cell."""
    golden = load_table(golden_path)
    current = evaluate(golden.grid, jobs=jobs, progress=progress)
    return golden, compare_tables(golden, current, rtol, accept_tighter)


# ---------------------------------------------------------------------------------------
# plots (matplotlib is an optional extra)
# ---------------------------------------------------------------------------------------

PLOT_FORMATS = ("png", "svg", "pdf")
PLOT_INSTALL_HINT = "plotting needs matplotlib: pip install 'shuffle-accountant[plot]' (or pip install matplotlib)"


def plot_epsilon(grid: Grid, path: str | Path, fmt: str | None = None, jobs: int = 1,
                 progress: Callable[[int], None] | None = None) -> Path:
    """Draw eps against ``n`` (or against ``eps0``, whichever axis has several values) for
    the grid's upper-bound methods, with its lower-bound methods as a shaded floor, one
    figure per delta value on shared axes. Writes PNG, SVG or PDF (from ``fmt`` or the
    file suffix) and returns the path."""
    if grid.quantity != "epsilon":
        raise InvalidParameter("plot draws epsilon; give --delta values, not --eps")
    p = Path(path)
    fmt = (fmt or p.suffix.lstrip(".") or "png").lower()
    if fmt not in PLOT_FORMATS:
        raise InvalidParameter(f"plot format must be one of {', '.join(PLOT_FORMATS)}, got {fmt!r}")
    if len(grid.n) > 1 and len(grid.eps0) > 1:
        raise InvalidParameter("plot: give several values for n or for eps0, not both")
    x_axis = "eps0" if len(grid.eps0) > 1 else "n"
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ModuleNotFoundError:
        raise InvalidParameter(PLOT_INSTALL_HINT) from None
    table = evaluate(grid, jobs=jobs, progress=progress)
    xs = list(grid.eps0 if x_axis == "eps0" else grid.n)
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=110)
    styles = ["-", "--", "-.", ":"]
    for j, d in enumerate(grid.delta):
        for i, m in enumerate(grid.methods):
            ys = [next((c["value"] for c in table.cells if c["method"] == m and c["delta"] == d
                        and c[x_axis] == x), None) for x in xs]
            pts = [(x, y) for x, y in zip(xs, ys) if y is not None and y > 0]
            if not pts:
                continue
            label = f"{m} ({METHODS[m].kind})" + (f", δ={d:g}" if len(grid.delta) > 1 else "")
            px, py = zip(*pts)
            if METHODS[m].kind == "lower":
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
    fig.savefig(p, format=fmt, metadata={"Software": f"shuffle-accountant {__version__}"} if fmt == "png" else None)
    plt.close(fig)
    return p

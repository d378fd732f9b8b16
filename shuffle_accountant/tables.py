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
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from . import api
from . import validation as v
from ._version import __version__
from .analyses import all_methods as registered_methods
from .analyses import applies_to, get_method
from .errors import CertificationError, InvalidParameter
from .randomizers import RandomizerFamily, krr_alphabet
from .output import Column, _text_table, dump_json, envelope, jsonable, round_directed
from .results import KINDS, NO_VALUE_KINDS

QUANTITIES = {"epsilon": "delta", "delta": "eps"}  # tabulated quantity -> its target axis
TABLE_FORMATS = ("text", "csv", "json", "markdown")
#: Default relative tolerance of ``check``: bounds are certified brackets of relative
#: width 1e-6, so a recomputation may move within that; 1e-5 leaves room for library drift.
DEFAULT_CHECK_RTOL = 1e-5


# ---------------------------------------------------------------------------------------
# grids
# ---------------------------------------------------------------------------------------

#: Most cells in one table (refused before anything is allocated).
MAX_CELLS = 100_000
#: Most values on one axis.
MAX_AXIS = 10_000
#: Largest grid or table file read (bytes).
MAX_FILE_BYTES = 64 * 2**20
#: The range of each axis value, by axis name.
AXIS_RANGES: dict[str, v.RealRange | v.IntRange] = {"n": v.N, "eps0": v.EPS0, "delta": v.DELTA, "eps": v.EPS}
GRID_KEYS = ("quantity", "n", "eps0", "delta", "eps", "methods", "k", "rtol", "randomizer")


def _clean(x: float) -> float:
    return float(f"{x:.12g}")


def _number(name: str, text: Any) -> float:
    """A finite number from a grid entry (text or number), or a one-line refusal."""
    x, why = v.RealRange(name).problem(text)
    if why is not None:
        raise InvalidParameter(v.message(name, text, why, f"a finite {name}"))
    return x  # type: ignore[return-value]


def axis_range(name: str, start: float, stop: float, num: int, scale: str = "lin") -> tuple[float, ...]:
    """``num`` values from ``start`` to ``stop`` (inclusive), linearly or logarithmically spaced."""
    if isinstance(num, bool) or not isinstance(num, int) or not 1 <= num <= MAX_AXIS:
        raise InvalidParameter(f"{name}: the number of values must be an integer in [1, {MAX_AXIS}], got {num!r}")
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


def _whole(name: str, values: Sequence[float], spec: str, rounded: bool) -> list[float]:
    """An integer axis (``n``): every value a whole number. A logarithmic range is rounded
    to whole numbers (``rounded``) but may not collapse two values into one; any other
    non-integer is refused."""
    out: list[float] = []
    for x in values:
        if float(x).is_integer():
            out.append(float(x))
        elif rounded:
            out.append(float(round(x)))
        else:
            where = f" (from the range {spec!r})" if ":" in spec or spec.startswith("{") else ""
            raise InvalidParameter(f"{name}: {x:g}{where} is not a whole number (accepted: integers; a linear "
                                   "range start:stop:num must land on integers, e.g. 1:3:3)")
    if rounded and len(set(out)) != len(out):
        raise InvalidParameter(f"{name}: the logarithmic range {spec!r} rounds two values to the same whole "
                               "number; use fewer values or a wider range")
    return out


def parse_axis(name: str, spec: Any, integer: bool = False) -> tuple[float, ...]:
    """An axis from a range string ``start:stop:num[:lin|log]``, a comma list ``a,b,c``,
    a number, a list of numbers, or a mapping ``{start, stop, num, scale}`` (grid files).

    ``integer``: every value must be a whole number (the ``n`` axis); logarithmic ranges
    are rounded to whole numbers, anything else that is not whole is refused."""
    log_range = False
    if isinstance(spec, dict):
        unknown = set(spec) - {"start", "stop", "num", "scale"}
        if unknown or not {"start", "stop", "num"} <= set(spec):
            raise InvalidParameter(f"{name}: a range needs keys start, stop, num (and optionally scale)")
        scale = str(spec.get("scale", "lin"))
        values = list(axis_range(name, _number(name, spec["start"]), _number(name, spec["stop"]),
                                 _int(name, spec["num"]), scale))
        log_range = scale == "log"
    elif isinstance(spec, (list, tuple)):
        if len(spec) > MAX_AXIS:
            raise InvalidParameter(f"{name}: {len(spec)} values (accepted: at most {MAX_AXIS})")
        values = []
        for item in spec:
            if isinstance(item, (list, tuple, dict)):
                raise InvalidParameter(f"{name}: a list of axis values holds numbers, not {type(item).__name__}s")
            values += parse_axis(name, item, integer)
    elif isinstance(spec, str) and ":" in spec:
        parts = spec.split(":")
        if len(parts) not in (3, 4):
            raise InvalidParameter(f"{name}: a range is start:stop:num[:lin|log], got {spec!r}")
        scale = parts[3].strip() if len(parts) == 4 else "lin"
        values = list(axis_range(name, _number(name, parts[0]), _number(name, parts[1]), _int(name, parts[2]), scale))
        log_range = scale == "log"
    elif isinstance(spec, str):
        items = [s for s in spec.split(",") if s.strip()]
        if len(items) > MAX_AXIS:
            raise InvalidParameter(f"{name}: {len(items)} values (accepted: at most {MAX_AXIS})")
        values = [_clean(_number(name, s)) for s in items]
    elif isinstance(spec, (int, float)) and not isinstance(spec, bool):
        values = [_clean(_number(name, spec))]
    else:
        raise InvalidParameter(f"{name}: cannot read an axis from {spec!r}")
    if not values:
        raise InvalidParameter(f"{name}: the axis is empty")
    if integer:
        values = _whole(name, values, spec if isinstance(spec, str) else json.dumps(spec), log_range)
    return tuple(dict.fromkeys(values))


def _int(name: str, value: Any) -> int:
    k, why = v.IntRange(name, 1, MAX_AXIS).problem(value)
    if why is not None:
        raise InvalidParameter(v.message(f"{name} (number of values)", value, why, f"integer 1 <= num <= {MAX_AXIS}"))
    return k  # type: ignore[return-value]


def _method_names(names: Iterable[Any], with_k: bool, randomizer: Any = None) -> tuple[str, ...]:
    """Method names, with ``all`` expanded (with a randomizer: every method that applies to
    it); every other name must be a registered method."""
    out: list[str] = []
    for name in names:
        if not isinstance(name, str):
            raise InvalidParameter(f"methods: {name!r} is not a method name (see 'shuffle-acct methods')")
        if name == "all":
            out += all_methods(with_k) if randomizer is None else _randomizer_methods(randomizer)
        else:
            get_method(name)
            out.append(name)
    return tuple(dict.fromkeys(out))


@dataclass(frozen=True)
class Grid:
    """What a table evaluates: every method at every point of ``n x eps0 x target``.

    Every axis value is checked against the range of its parameter (``n`` a whole number
    in [1, 1e12], ``0 < eps0 <= 700``, ``1e-300 <= delta < 1``, ``0 <= eps <= 700``) and
    the number of cells is at most :data:`MAX_CELLS`, on construction."""

    n: tuple[float, ...]
    eps0: tuple[float, ...]
    delta: tuple[float, ...] = ()
    eps: tuple[float, ...] = ()
    methods: tuple[str, ...] = ("clones",)
    quantity: str = "epsilon"
    k: int | None = None
    rtol: float | None = None
    randomizer: RandomizerFamily | None = None

    def __post_init__(self) -> None:
        if self.quantity not in QUANTITIES:
            raise InvalidParameter(f"quantity must be one of {', '.join(QUANTITIES)}, got {self.quantity!r}")
        for axis in ("n", "eps0", self.target_axis):
            try:
                values = tuple(dict.fromkeys(AXIS_RANGES[axis].check(x) for x in getattr(self, axis)))
            except InvalidParameter as exc:
                raise InvalidParameter(f"grid {exc}") from None
            if len(values) > MAX_AXIS:
                raise InvalidParameter(f"grid {axis}: {len(values)} values (accepted: at most {MAX_AXIS})")
            object.__setattr__(self, axis, values)
        if not self.n or not self.eps0 or not self.target_values:
            raise InvalidParameter(f"the grid needs values of n, eps0 and {self.target_axis}")
        if self.k is not None:
            object.__setattr__(self, "k", v.K.check(self.k))
        if self.rtol is not None:
            object.__setattr__(self, "rtol", v.RTOL.check(self.rtol))
        if self.randomizer is not None:
            if not isinstance(self.randomizer, RandomizerFamily):
                raise InvalidParameter("grid randomizer: a RandomizerFamily (named randomizer or matrix)")
            fixed = self.randomizer.fixed_eps0
            if fixed is not None and any(abs(e - fixed) > 1e-9 * fixed for e in self.eps0):
                raise InvalidParameter(f"grid eps0: {self.randomizer.describe()} has the one eps0 {fixed:.12g}; "
                                       "give only that value (or omit --eps0)")
            object.__setattr__(self, "k", krr_alphabet(self.randomizer, self.k, "grid k"))
        methods = _method_names(self.methods, self.k is not None, self.randomizer)
        if not methods:
            raise InvalidParameter("the grid needs at least one method")
        family = self.randomizer
        applicable = () if family is None else _randomizer_methods(family)
        for m in methods:
            if get_method(m).needs_k and self.k is None:
                raise InvalidParameter(f"method {m!r} needs k (the alphabet size, k >= 2)")
            if get_method(m).needs_randomizer and self.randomizer is None:
                raise InvalidParameter(f"method {m!r} needs a randomizer (--randomizer NAME or --randomizer-file F)")
            if family is not None and m not in applicable:
                raise InvalidParameter(f"method {m!r} does not apply to {family.describe()}")
        object.__setattr__(self, "methods", methods)
        cells = len(self.n) * len(self.eps0) * len(self.target_values) * len(methods)
        if cells > MAX_CELLS:
            raise InvalidParameter(
                f"the grid has {cells:,} cells ({len(self.n)} n x {len(self.eps0)} eps0 x {len(self.target_values)} "
                f"{self.target_axis} x {len(methods)} methods; accepted: at most {MAX_CELLS:,}); split it into "
                "several tables")

    @property
    def cells(self) -> int:
        """The number of cells (points x methods)."""
        return len(self.n) * len(self.eps0) * len(self.target_values) * len(self.methods)

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
        d: dict[str, Any] = {"quantity": self.quantity, "n": list(self.n), "eps0": list(self.eps0),
                             self.target_axis: list(self.target_values), "methods": list(self.methods)}
        if self.k is not None:
            d["k"] = self.k
        if self.rtol is not None:
            d["rtol"] = self.rtol
        if self.randomizer is not None:
            d["randomizer"] = self.randomizer.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Grid:
        """A grid from a mapping (a grid file, or the grid of a saved table)."""
        if not isinstance(d, dict):
            raise InvalidParameter("a grid is a table/object of axes (n, eps0, delta or eps, methods, k, rtol)")
        unknown = set(d) - set(GRID_KEYS)
        if unknown:
            raise InvalidParameter(f"unknown grid key(s) {', '.join(sorted(map(str, unknown)))}; "
                                   f"known: {', '.join(sorted(GRID_KEYS))}")
        quantity = str(d.get("quantity", "epsilon"))
        if quantity not in QUANTITIES:
            raise InvalidParameter(f"quantity must be one of {', '.join(QUANTITIES)}, got {quantity!r}")
        target = QUANTITIES[quantity]
        for key in ("n", "eps0", target):
            if key not in d:
                raise InvalidParameter(f"the grid needs {key!r}")
        other = QUANTITIES["delta" if quantity == "epsilon" else "epsilon"]
        if other in d:
            raise InvalidParameter(f"a grid of {quantity} has a {target!r} axis, not {other!r}")
        methods = d.get("methods", ["clones"])
        if isinstance(methods, str):
            methods = [methods]
        if not isinstance(methods, list):
            raise InvalidParameter("methods: a method name or a list of names (see 'shuffle-acct methods')")
        k = v.K.check(d["k"]) if d.get("k") is not None else None
        randomizer = RandomizerFamily.from_dict(d["randomizer"], "grid randomizer") if "randomizer" in d else None
        if randomizer is not None and k is None and randomizer.name == "krr":
            k = randomizer.k
        return cls(
            n=parse_axis("n", d["n"], integer=True),
            eps0=parse_axis("eps0", d["eps0"]),
            delta=parse_axis("delta", d["delta"]) if quantity == "epsilon" else (),
            eps=parse_axis("eps", d["eps"]) if quantity == "delta" else (),
            methods=_method_names(methods, k is not None, randomizer),
            quantity=quantity,
            k=k,
            rtol=v.RTOL.check(d["rtol"]) if d.get("rtol") is not None else None,
            randomizer=randomizer,
        )


def all_methods(with_k: bool) -> tuple[str, ...]:
    """Every registered method (those needing ``k`` only when ``k`` is given)."""
    return tuple(m.name for m in registered_methods().values() if (with_k or not m.needs_k) and not m.needs_randomizer)


def _randomizer_methods(family: RandomizerFamily) -> tuple[str, ...]:
    """Every registered method that answers for the family's randomizers (built at its eps0,
    or at eps0 = 1 for a named family: which methods apply does not depend on eps0)."""
    member = family.at(family.fixed_eps0 or 1.0)
    return tuple(m.name for m in registered_methods().values() if applies_to(m, member))


def _read_file(path: str | Path, what: str) -> tuple[Path, bytes]:
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_FILE_BYTES:
            raise InvalidParameter(f"{what} {str(p)!r} is {size} bytes (accepted: at most {MAX_FILE_BYTES})")
        return p, p.read_bytes()
    except OSError as exc:
        raise InvalidParameter(f"cannot read {what} {str(p)!r}: {exc.strerror or exc}") from None


def _load_toml(raw: bytes, where: str) -> Any:
    try:
        import tomllib  # type: ignore[import-not-found]
    except ModuleNotFoundError:  # Python 3.10
        try:
            import tomli as tomllib  # type: ignore[import-not-found, no-redef]
        except ModuleNotFoundError:
            raise InvalidParameter("TOML grid files need Python >= 3.11 or 'pip install tomli'; "
                                   "or write the grid as JSON") from None
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except RecursionError:
        raise InvalidParameter(f"{where} is nested too deeply") from None
    except UnicodeDecodeError:
        raise InvalidParameter(f"{where} is not UTF-8 text") from None
    except ValueError as exc:  # TOMLDecodeError, and Python's int-string limit
        raise InvalidParameter(f"{where} is not valid TOML: {' '.join(str(exc).split())[:200]}") from None


def _load_json(raw: bytes, where: str) -> Any:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidParameter(f"{where} is not UTF-8 text") from None
    return v.load_json(text, where)


def load_grid(path: str | Path) -> Grid:
    """A grid file: JSON (``.json``) or TOML (``.toml``; Python >= 3.11, or ``tomli``)."""
    p, raw = _read_file(path, "grid file")
    where = f"grid file {str(p)!r}"
    data = _load_toml(raw, where) if p.suffix.lower() == ".toml" else _load_json(raw, where)
    if not isinstance(data, dict):
        raise InvalidParameter(f"{where} must hold a table/object of axes")
    try:
        return Grid.from_dict(data)
    except InvalidParameter as exc:
        raise InvalidParameter(f"{where}: {exc}") from None


# ---------------------------------------------------------------------------------------
# evaluation
# ---------------------------------------------------------------------------------------


def evaluate_cell(grid_quantity: str, point: dict[str, Any], k: int | None, rtol: float | None,
                  randomizer: RandomizerFamily | None = None) -> dict[str, Any]:
    """One cell: the point, its value and kind (a CertificationError becomes kind
    ``not certified``; the reason is kept in ``note``)."""
    cell = dict(point)
    if k is not None:
        cell["k"] = k
    method = point["method"]
    kw: dict[str, Any] = {"rtol": rtol} if rtol is not None else {}
    eps0 = point["eps0"]
    if randomizer is not None:
        kw["randomizer"] = randomizer.at(eps0)
        eps0 = kw["randomizer"].eps0  # a matrix's own eps0 (the grid holds it to 12 digits)
    try:
        if grid_quantity == "epsilon":
            b = api.epsilon(eps0, point["n"], point["delta"], method, k, **kw)
        else:
            b = api.delta(eps0, point["n"], point["eps"], method, k, **kw)
    except CertificationError as exc:
        cell.update(value=None, kind="not certified", note=str(exc))
        return cell
    cell.update(value=b.value, kind=b.kind, note="" if b.value is not None else b.validity)
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
    tasks = [(grid.quantity, p, grid.k, grid.rtol, grid.randomizer) for p in grid.points()]
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


TABLE_NOTE = ("upper = certified upper bound (published comparators: upper bounds of their looser analyses); "
              "lower = attained by a concrete mechanism, rounded down.")


def to_json(table: Table) -> str:
    """The table as the shuffle-acct JSON envelope: ``inputs`` is the grid, ``results``
    the cells, ``summary`` the citations (what ``check`` reads back)."""
    doc = envelope("table", table.grid.to_dict(), table.cells, notes=[TABLE_NOTE],
                   summary={"citations": {m: get_method(m).citation for m in table.grid.methods}, **table.extra})
    doc["version"] = table.version
    return dump_json(doc, indent=1)


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
    lines += ["", TABLE_NOTE]
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


def _cell(raw: Any, grid: Grid, where: str) -> dict[str, Any]:
    """One cell of a saved table, checked: its keys, its inputs in range, a known kind, and
    a value exactly when the kind has one (JSON values or CSV text)."""
    if not isinstance(raw, dict):
        raise InvalidParameter(f"{where} is not an object with n, eps0, {grid.target_axis}, method, value, kind")
    target = grid.target_axis
    allowed = {"n", "eps0", target, "k", "method", "value", "kind", "note"}
    unknown = sorted(str(key) for key in raw if key not in allowed)
    if unknown:
        raise InvalidParameter(f"{where} has unknown key(s) {', '.join(map(repr, unknown))} "
                               f"(accepted: {', '.join(sorted(allowed))})")
    missing = [key for key in ("n", "eps0", target, "method", "kind") if raw.get(key) in (None, "")]
    if missing:
        raise InvalidParameter(f"{where} lacks {', '.join(missing)}")
    kind = raw["kind"]
    if kind not in KINDS:
        raise InvalidParameter(f"{where}: kind {kind!r} is not one of {', '.join(KINDS)}")
    if not isinstance(raw["method"], str):
        raise InvalidParameter(f"{where}: method {raw['method']!r} is not a method name")
    cell: dict[str, Any] = {"n": v.N.check(raw["n"], label=f"{where} n"),
                            "eps0": v.EPS0.check(raw["eps0"], label=f"{where} eps0"),
                            target: AXIS_RANGES[target].check(raw[target], label=f"{where} {target}")}
    if raw.get("k") not in (None, ""):
        cell["k"] = v.K.check(raw["k"], label=f"{where} k")
    cell["method"] = raw["method"]
    value = raw.get("value")
    if value in (None, ""):
        value = None
    elif value in ("inf", "-inf"):
        value = float(value)
    else:
        value = v.RealRange("value").check(value, label=f"{where} value")
    if (value is None) != (kind in NO_VALUE_KINDS):
        raise InvalidParameter(f"{where}: a cell of kind {kind!r} {'needs' if value is None else 'has no'} value")
    cell.update(value=value, kind=kind, note=str(raw.get("note") or ""))
    return cell


def _cells(raw: Any, grid: Grid, where: str) -> list[dict[str, Any]]:
    if not isinstance(raw, list):
        raise InvalidParameter(f"{where}: the cells are not a list")
    if len(raw) > MAX_CELLS:
        raise InvalidParameter(f"{where}: {len(raw)} cells (accepted: at most {MAX_CELLS})")
    return [_cell(c, grid, f"{where}: cell {i}") for i, c in enumerate(raw, 1)]


def load_table(path: str | Path) -> Table:
    """Read a table written by :func:`render_table` as JSON (the envelope, or the
    0.1.0 layout with top-level ``grid`` and ``cells``) or CSV. Every cell is checked."""
    p, raw = _read_file(path, "table")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidParameter(f"table {str(p)!r} is not UTF-8 text") from None
    stripped = text.lstrip()
    if stripped.startswith("{"):
        where = f"{str(p)!r}"
        doc = v.load_json(text, where)
        if isinstance(doc, dict) and doc.get("command") == "table" and isinstance(doc.get("inputs"), dict) \
                and "results" in doc:
            grid_raw, cells_raw = doc["inputs"], doc["results"]
        elif isinstance(doc, dict) and "grid" in doc and "cells" in doc:
            grid_raw, cells_raw = doc["grid"], doc["cells"]
        else:
            raise InvalidParameter(f"{where} is not a shuffle-acct JSON table (no grid and cells; write one with "
                                   "'shuffle-acct table --format json')")
        try:
            grid = Grid.from_dict(grid_raw)
        except InvalidParameter as exc:
            raise InvalidParameter(f"{where} is not a shuffle-acct JSON table: its grid: {exc}") from None
        return Table(grid, _cells(cells_raw, grid, where), str(doc.get("version", "?")))
    if stripped.startswith("# shuffle-accountant"):
        where = f"{str(p)!r}"
        lines = text.splitlines()
        head = [ln[2:] for ln in lines if ln.startswith("# ")]
        body = [ln for ln in lines if not ln.startswith("#")]
        parts = head[0].split() if head else []
        grid_line = next((h for h in head if h.startswith("grid: ")), None)
        if len(parts) < 2 or grid_line is None:
            raise InvalidParameter(f"{where} is not a shuffle-acct CSV table (no '# grid:' header line)")
        try:
            grid = Grid.from_dict(v.load_json(grid_line[len("grid: "):], "its grid line"))
            rows = list(csv.DictReader(body))
        except csv.Error as exc:
            raise InvalidParameter(f"{where} is not a shuffle-acct CSV table: {exc}") from None
        except InvalidParameter as exc:
            raise InvalidParameter(f"{where} is not a shuffle-acct CSV table: {exc}") from None
        for i, row in enumerate(rows, 1):
            if None in row or None in row.values():
                raise InvalidParameter(f"{where}: row {i} has a different number of cells than the header")
        return Table(grid, _cells(rows, grid, where), parts[1])
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
        """A JSON record; the cell's kind (or ``old -> new``) is ``cell_kind``."""
        d = asdict(self)
        d["key"] = list(self.key)
        d["cell_kind"] = d.pop("kind")
        return d


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
            diffs.append(Difference(key, str(g.get("kind", "")), g.get("value"), None, "missing", None))
            continue
        gv, cv, gk, ck = g.get("value"), c.get("value"), g.get("kind"), c.get("kind")
        if gk != ck or (gv is None) != (cv is None):
            diffs.append(Difference(key, f"{gk} -> {ck}", gv, cv, "kind changed", None))
            continue
        if gv is None or cv is None or gv == cv:
            continue
        scale = max(abs(gv), abs(cv))
        rel = abs(cv - gv) / scale if math.isfinite(scale) and scale > 0 else math.inf
        if rel <= rtol:
            continue
        went_up = cv > gv
        looser = went_up if gk == "upper" else not went_up
        d = Difference(key, str(gk), gv, cv, "looser" if looser else "tighter", rel)
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

"""Rendering of result tables as text, JSON, CSV or Markdown.

Every command that prints numbers builds a :class:`Report` and calls :func:`render`.
Every JSON document any command prints is one envelope (:func:`envelope`)::

    {"tool": "shuffle-acct", "version": ..., "schema_version": ..., "command": ...,
     "inputs": {...}, "results": [...], "warnings": [...], "notes": [...],
     "summary": {...}}          # summary: optional, command-specific

validated by the JSON schema shipped in :mod:`shuffle_accountant.schema`. JSON never contains ``NaN``/``Infinity`` (which are not JSON): infinities are written
as the strings ``"inf"``/``"-inf"``. Numbers in text and Markdown are rounded in the
safe direction for their kind (upper bounds up, lower bounds down); JSON and CSV carry
the full double, which is itself the certified value.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from pathlib import Path
from typing import Any

from ._version import __version__
from .errors import InvalidParameter
from .schema import SCHEMA_VERSION

FORMATS = ("text", "json", "csv", "markdown")
#: The ``tool`` field of every JSON document.
TOOL = "shuffle-acct"


def round_directed(value: float, kind: str, digits: int = 6) -> str:
    """Format ``value`` to ``digits`` significant digits, rounding so that an
    ``upper`` bound is never printed smaller, nor a ``lower`` bound larger, than it is."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value == 0:
        return "0"
    rounding = {"upper": ROUND_CEILING, "lower": ROUND_FLOOR}.get(kind)
    if rounding is None:
        return f"{value:.{digits}g}"
    d = Decimal(value)  # exact binary value
    exponent = d.adjusted() - digits + 1
    q = d.quantize(Decimal(1).scaleb(exponent), rounding=rounding)
    if -5 <= q.adjusted() < 7:
        text = format(q, "f")
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        return text
    mant = q.scaleb(-q.adjusted())
    mant_s = format(mant, "f").rstrip("0").rstrip(".")
    return f"{mant_s}e{q.adjusted():+03d}"


def jsonable(obj: Any) -> Any:
    """Recursively replace infinities by strings and NaN by ``None``."""
    if isinstance(obj, float):
        if math.isnan(obj):
            return None
        if math.isinf(obj):
            return "inf" if obj > 0 else "-inf"
        return obj
    if isinstance(obj, dict) or hasattr(obj, "items"):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalar
        return jsonable(obj.item())
    return obj


def format_ratio(value: float | None) -> str:
    """A ratio of two bounds (an estimate of a gap, no certified direction) to three
    significant digits: ``1.34``, ``2.6e+14``."""
    if value is None:
        return "n/a"
    if math.isinf(value):
        return "inf"
    if 1.0 <= value < 1.01:  # near-tight: show how far above 1, which 3 digits would hide
        return f"{value:.3g} (+{(value - 1.0) * 100:.2g} %)"
    return f"{value:.3g}"


def envelope(
    command: str,
    inputs: dict[str, Any],
    results: list[Any],
    warnings: Sequence[str] = (),
    notes: Sequence[str] = (),
    summary: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The one JSON document shape of every command (see the module docstring)."""
    doc: dict[str, Any] = {
        "tool": TOOL,
        "version": __version__,
        "schema_version": SCHEMA_VERSION,
        "command": command,
        "inputs": dict(inputs),
        "results": list(results),
        "warnings": [str(w) for w in warnings],
        "notes": [str(n) for n in notes],
    }
    if summary:
        doc["summary"] = dict(summary)
    return jsonable(doc)


def dump_json(doc: dict[str, Any], indent: int = 2) -> str:
    """``doc`` as strict JSON (infinities as strings, no NaN), ending with a newline."""
    return json.dumps(jsonable(doc), indent=indent, allow_nan=False) + "\n"


@dataclass(frozen=True)
class Column:
    """A column of a report: dictionary key, header, and how to show a cell in text."""

    key: str
    header: str
    kind_key: str | None = None  # key of the row's bound kind, for directed rounding
    formatter: Callable[[Any], str] | None = None

    def cell(self, row: dict[str, Any]) -> str:
        value = row.get(self.key)
        if self.formatter is not None:
            return self.formatter(value)
        if value is None:
            return ""
        if isinstance(value, float):
            kind = row.get(self.kind_key, "") if self.kind_key else ""
            return round_directed(value, kind)
        return str(value)


@dataclass
class Report:
    """A titled table plus inputs, notes and warnings, renderable in every format."""

    command: str
    title: str
    columns: Sequence[Column]
    rows: list[dict[str, Any]]
    inputs: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    records: list[dict[str, Any]] | None = None  # full records for JSON (default: rows)
    extra: dict[str, Any] = field(default_factory=dict)  # command-specific JSON fields, under "summary"
    csv_columns: Sequence[Column] | None = None  # wider column set for CSV (default: columns)


def _text_table(columns: Sequence[Column], rows: list[dict[str, Any]]) -> list[str]:
    cells = [[c.header for c in columns]] + [[c.cell(r) for c in columns] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    lines = []
    for j, row in enumerate(cells):
        lines.append("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip())
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return lines


def _format_inputs(inputs: dict[str, Any]) -> str:
    parts = []
    for k, v in inputs.items():
        if v is None:
            continue
        parts.append(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}")
    return ", ".join(parts)


def render(report: Report, fmt: str) -> str:
    """Render ``report`` in ``fmt`` (one of :data:`FORMATS`); the result ends with a newline."""
    if fmt == "json":
        results = report.records if report.records is not None else report.rows
        return dump_json(envelope(report.command, report.inputs, results, report.warnings, report.notes,
                                  report.extra))
    if fmt == "csv":
        buf = io.StringIO()
        keys = [c.key for c in (report.csv_columns or report.columns)]
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(keys)
        for row in report.rows:
            writer.writerow(["" if row.get(k) is None else _csv_cell(row.get(k)) for k in keys])
        return buf.getvalue()
    if fmt == "markdown":
        lines = [f"**{report.title}** ({_format_inputs(report.inputs)})", ""]
        lines.append("| " + " | ".join(c.header for c in report.columns) + " |")
        lines.append("|" + "|".join("---" for _ in report.columns) + "|")
        for row in report.rows:
            lines.append("| " + " | ".join(c.cell(row).replace("|", "\\|") for c in report.columns) + " |")
        if report.warnings or report.notes:
            lines.append("")
            lines += [f"- **warning:** {w}" for w in report.warnings]
            lines += [f"- {n}" for n in report.notes]
        return "\n".join(lines) + "\n"
    if fmt == "text":
        lines = [f"{report.title} ({_format_inputs(report.inputs)})", ""]
        lines += _text_table(report.columns, report.rows)
        if report.warnings or report.notes:
            lines.append("")
            lines += [f"warning: {w}" for w in report.warnings]
            lines += report.notes
        return "\n".join(lines) + "\n"
    raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")


def _csv_cell(value: Any) -> str:
    if isinstance(value, float):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    return str(value)


# ---------------------------------------------------------------------------------------
# output files: checked before any work, written atomically
# ---------------------------------------------------------------------------------------


def check_output_path(path: str | Path) -> Path:
    """Refuse, before anything is computed, an output path that cannot be written: a
    missing or non-directory parent, an existing directory, an unwritable location."""
    p = Path(path)
    parent = p.parent if str(p.parent) else Path(".")
    if p.is_dir():
        raise InvalidParameter(f"cannot write {str(p)!r}: it is a directory")
    if not parent.is_dir():
        raise InvalidParameter(f"cannot write {str(p)!r}: the directory {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise InvalidParameter(f"cannot write {str(p)!r}: permission denied")
    return p


def replace_atomically(path: str | Path, write: Callable[[str], Any]) -> None:
    """Call ``write(temporary path)`` in the target's directory, then rename the result
    onto ``path``: a failure (or an interrupt) leaves no partial file behind."""
    p = check_output_path(path)
    fd, tmp = tempfile.mkstemp(dir=p.parent if str(p.parent) else ".", prefix=f".{p.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, p.stat().st_mode & 0o777 if p.exists() else 0o666 & ~_umask())
        os.replace(tmp, p)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_text_atomically(path: str | Path, text: str) -> None:
    """:func:`replace_atomically` for a text file (UTF-8)."""

    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)

    try:
        replace_atomically(path, write)
    except OSError as exc:
        raise InvalidParameter(f"cannot write {str(path)!r}: {exc.strerror or exc}") from None

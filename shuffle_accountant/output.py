"""Rendering of result tables as text, JSON, CSV or Markdown.

Every command that prints numbers builds a :class:`Report` and calls :func:`render`.
JSON never contains ``NaN``/``Infinity`` (which are not JSON): infinities are written
as the strings ``"inf"``/``"-inf"``. Numbers in text and Markdown are rounded in the
safe direction for their kind (upper bounds up, lower bounds down); JSON and CSV carry
the full double, which is itself the certified value.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import Any, Callable, Sequence

from ._version import __version__

FORMATS = ("text", "json", "csv", "markdown")


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
    extra: dict[str, Any] = field(default_factory=dict)  # extra top-level JSON fields
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
        doc = {
            "tool": "shuffle-accountant",
            "version": __version__,
            "command": report.command,
            "inputs": report.inputs,
            "results": report.records if report.records is not None else report.rows,
            "warnings": report.warnings,
            "notes": report.notes,
            **report.extra,
        }
        return json.dumps(jsonable(doc), indent=2, allow_nan=False) + "\n"
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

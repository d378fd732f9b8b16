"""``shuffle-acct epsilon``, ``delta`` and ``methods``: a thin layer over :mod:`..api`."""

from __future__ import annotations

from typing import Any

import click

from .. import api
from .. import validation as v
from ..analyses import METHODS, NOT_OFFERED
from ..output import Column, Report, format_ratio, render
from ..results import Bound, warnings_by_method
from .randomizer_options import build_randomizer, randomizer_options
from .params import ALPHABET, DELTA, DELTA0, EPS, EPS0, USERS, RangeType, format_option

METHOD_CHOICE = click.Choice(list(METHODS))


def _shared_options(func: Any) -> Any:
    options = [
        click.option("--eps0", type=EPS0, default=None,
                     help="Local randomizer's epsilon (0 < eps0 <= 700); required unless --randomizer-file."),
        click.option("--n", "n", type=USERS, required=True, help="Number of users (1 to 1e12; '1e6' is accepted)."),
        click.option(
            "--method",
            "-m",
            "methods",
            type=METHOD_CHOICE,
            multiple=True,
            help="Analysis to run (repeatable). Default: clones, stronger-clones, closed-form, "
            "generic-lower, plus krr and krr-lower when --k is given; with a randomizer: blanket, "
            "dataset-lower, stronger-clones, clones (and krr, krr-lower for k-RR). See 'shuffle-acct methods'.",
        ),
        click.option("--k", type=ALPHABET, default=None,
                     help="Alphabet size: of the k-RR methods, or of --randomizer (2 <= k <= 1e9)."),
        click.option(
            "--delta0",
            type=DELTA0,
            default=0.0,
            show_default=True,
            help="The local randomizer is (eps0, delta0)-DP (FMT21 Theorem 3.8; clones and closed-form only).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return randomizer_options(func)


def _row(b: Bound) -> dict[str, Any]:
    bracket = b.details.get("bracket") if b.details else None
    return {
        "method": b.method,
        "value": b.value,
        "kind": b.kind,
        "assumes": METHODS[b.method].short if b.applicable else b.validity,
        "bracket_lower": bracket[0] if bracket else None,
        "bracket_upper": bracket[1] if bracket else None,
        "citation": b.citation,
    }


def _report(command: str, quantity: str, comparison: api.Comparison, inputs: dict[str, Any]) -> Report:
    rows = [_row(b) for b in comparison.bounds]
    for row in rows:
        row.update({k: v for k, v in inputs.items() if v is not None})
    columns = [
        Column("method", "method"),
        Column("value", quantity, kind_key="kind", formatter=None),
        Column("kind", "kind"),
        Column("assumes", "validity"),
    ]
    notes = []
    up, low = comparison.best_upper, comparison.best_lower
    if up is not None and low is not None and low.value:
        which = ("upper bound for this randomizer", "bound attained by it") if inputs.get("randomizer") else (
            "generic upper bound", "generic lower bound")
        notes.append(
            f"gap: best {which[0]} ({up.method}) / {which[1]} ({low.method}) = "
            f"{format_ratio(comparison.gap_ratio)}"
        )
    notes.append("upper = certified upper bound; lower = attained by a concrete mechanism (rounded down); "
                 "'shuffle-acct methods' lists assumptions and citations.")
    report = Report(
        command=command,
        title=f"shuffle-acct {command}",
        columns=columns,
        rows=rows,
        inputs={k: v for k, v in inputs.items() if v is not None},
        notes=notes,
        warnings=warnings_by_method(comparison.bounds),
        records=[b.to_dict() for b in comparison.bounds],
        extra={
            "best_upper": up.method if up else None,
            "best_lower": low.method if low else None,
            "gap_ratio": comparison.gap_ratio,
        },
        csv_columns=columns + [
            Column(k, k) for k in ("bracket_lower", "bracket_upper", *inputs.keys(), "citation")
        ],
    )
    return report


def _emit(report: Report, fmt: str) -> None:
    click.echo(render(report, fmt), nl=False)


@click.command("epsilon")
@_shared_options
@click.option("--delta", type=DELTA, default=1e-6, show_default=True, help="Target delta (1e-300 <= delta < 1).")
@click.option(
    "--rtol",
    type=RangeType(v.RTOL),
    default=1e-6,
    show_default=True,
    help="Relative width of the certified bracket around each numerical eps.",
)
@format_option
def epsilon_cmd(eps0: float | None, n: int, methods: tuple[str, ...], k: int | None, delta0: float,
                randomizer_name: str | None, g: int | None, d: int | None, randomizer_file: str | None,
                delta: float, rtol: float, fmt: str) -> None:
    """Central epsilon of shuffling n reports of an eps0-DP local randomizer, at a given delta.

    Prints, for each analysis, a certified upper bound or an attained lower bound, and the
    gap between the best generic upper bound and the lower bound.

    \b
    Examples:
      shuffle-acct epsilon --eps0 3 --n 10000
      shuffle-acct epsilon --eps0 1 --n 100000 --randomizer krr --k 10
    """
    r, e0 = build_randomizer(eps0, k, randomizer_name, g, d, randomizer_file)
    comparison = api.compare_epsilon(e0, n, delta, methods or None, k, delta0, rtol, randomizer=r)
    inputs = {"eps0": e0, "n": n, "delta": delta, "k": k, "delta0": delta0 or None,
              "randomizer": r.describe() if r else None}
    _emit(_report("epsilon", "epsilon", comparison, inputs), fmt)


@click.command("delta")
@_shared_options
@click.option("--eps", type=EPS, required=True, help="Target central epsilon (0 <= eps <= 700).")
@click.option(
    "--rtol",
    type=RangeType(v.RTOL),
    default=1e-9,
    show_default=True,
    help="Relative width of the certified bracket around each numerical delta.",
)
@format_option
def delta_cmd(eps0: float | None, n: int, methods: tuple[str, ...], k: int | None, delta0: float,
              randomizer_name: str | None, g: int | None, d: int | None, randomizer_file: str | None,
              eps: float, rtol: float, fmt: str) -> None:
    """Delta at which shuffling n reports of an eps0-DP randomizer is (eps, delta)-DP.

    \b
    Example:
      shuffle-acct delta --eps0 3 --n 10000 --eps 0.5
    """
    r, e0 = build_randomizer(eps0, k, randomizer_name, g, d, randomizer_file)
    comparison = api.compare_delta(e0, n, eps, methods or None, k, delta0, rtol, randomizer=r)
    inputs = {"eps0": e0, "n": n, "eps": eps, "k": k, "delta0": delta0 or None,
              "randomizer": r.describe() if r else None}
    _emit(_report("delta", "delta", comparison, inputs), fmt)


@click.command("methods")
@format_option
def methods_cmd(fmt: str) -> None:
    """List the analyses, what each assumes, and its citation.

    \b
    Examples:
      shuffle-acct methods
      shuffle-acct methods --format json
    """
    rows = [
        {"method": m.name, "kind": m.kind, "generic": "yes" if m.generic else "no", "assumes": m.assumes,
         "delta0": "yes" if m.supports_delta0 else "no", "citation": m.citation}
        for m in api.methods()
    ] + [
        {"method": name, "kind": "not applicable", "generic": "no", "assumes": f"NOT OFFERED: {why}", "delta0": "no",
         "citation": ""}
        for name, why in NOT_OFFERED.items()
    ]
    columns = [Column(k, k) for k in ("method", "kind", "generic", "delta0", "assumes", "citation")]
    if fmt == "text":
        for r in rows:
            if r["method"] in NOT_OFFERED:
                click.echo(f"{r['method']}  [NOT OFFERED]")
                click.echo(f"    why: {NOT_OFFERED[r['method']]}")
                continue
            click.echo(f"{r['method']}  [{r['kind']} bound{', generic' if r['generic'] == 'yes' else ''}]")
            click.echo(f"    assumes: {r['assumes']}")
            click.echo(f"    source:  {r['citation']}")
        return
    click.echo(render(Report("methods", "shuffle-acct methods", columns, rows), fmt), nl=False)

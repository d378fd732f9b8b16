"""``shuffle-acct renyi`` and ``shuffle-acct compose``: a thin layer over :mod:`..composition`."""

from __future__ import annotations

from typing import Any

import click

from .. import composition as comp
from ..analyses import METHODS
from ..errors import InvalidParameter
from ..output import Column, Report, render
from .params import POSITIVE, PROBABILITY, USERS, IntLike, format_option

NUMERICAL = click.Choice([m.name for m in METHODS.values() if m.numerical])
UPPER = click.Choice([m.name for m in METHODS.values() if m.numerical and m.kind == "upper"])


def _orders(text: str | None) -> list[float] | None:
    if text is None:
        return None
    try:
        return [float(x) for x in text.replace(",", " ").split()]
    except ValueError:
        raise InvalidParameter(f"--orders must be a comma-separated list of numbers > 1, got {text!r}") from None


ORDERS_HELP = "Renyi orders, comma-separated (real, > 1). Default: 40 orders from 1.25 to 1024."


@click.command("renyi")
@click.option("--eps0", type=POSITIVE, required=True, help="Local randomizer's epsilon (> 0, finite).")
@click.option("--n", "n", type=USERS, required=True, help="Number of users (1 to 1e12).")
@click.option("--method", "-m", type=NUMERICAL, default="clones", show_default=True, help="Clone-pair analysis.")
@click.option("--k", type=IntLike(2, 10**9), default=None, help="Alphabet size for the k-RR methods.")
@click.option("--orders", default=None, help=ORDERS_HELP)
@click.option("--rtol", type=click.FloatRange(1e-9, 0.5), default=1e-3, show_default=True,
              help="Target relative width of each certified bracket.")
@format_option
def renyi_cmd(eps0: float, n: int, method: str, k: int | None, orders: str | None, rtol: float, fmt: str) -> None:
    """RDP curve alpha -> D_alpha of one shuffled round (max of both directions).

    \b
    Examples:
      shuffle-acct renyi --eps0 1 --n 1e6
      shuffle-acct renyi --eps0 2 --n 1e4 --orders 2,4,8,16 --format json
    """
    curve = comp.rdp_curve(eps0, n, method, k, _orders(orders), rtol)
    rows = [
        {"alpha": b.inputs["alpha"], "rdp": b.value, "kind": b.kind, "bracket_lower": lo, "bracket_upper": up}
        for b, lo, up in zip(curve.bounds, curve.lower, curve.upper)
    ]
    columns = [
        Column("alpha", "alpha"),
        Column("rdp", "D_alpha", kind_key="kind"),
        Column("kind", "kind"),
        Column("bracket_lower", "bracket lower", formatter=lambda v: comp_fmt(v, "lower")),
        Column("bracket_upper", "bracket upper", formatter=lambda v: comp_fmt(v, "upper")),
    ]
    m = METHODS[method]
    report = Report(
        "renyi",
        "Renyi DP of one shuffled round",
        columns,
        rows,
        inputs={"eps0": eps0, "n": n, "method": method, "k": k},
        notes=[f"method: {m.citation}", f"assumes: {m.assumes}",
               "D_alpha = max(D_alpha(P||Q), D_alpha(Q||P)); the bracket is certified (truncation and rounding accounted for)"],
        warnings=list(curve.bounds[0].warnings),
        records=[b.to_dict() for b in curve.bounds],
    )
    click.echo(render(report, fmt), nl=False)


def comp_fmt(value: Any, kind: str) -> str:
    from ..output import round_directed

    return "" if value is None else round_directed(value, kind)


def _pld_how(b: Any) -> str:
    """The 'how' cell of the PLD row: the construction, or why it does not apply."""
    if not b.applicable:
        return b.validity
    return f"pessimistic Connect-the-Dots PLD (DGKKM22) + dp_accounting, discretization {b.details['discretization']:g}"


@click.command("compose")
@click.option("--eps0", type=POSITIVE, default=None, help="Local epsilon of every round (homogeneous).")
@click.option("--n", "n", type=USERS, default=None, help="Users per round (homogeneous).")
@click.option("--T", "T", type=IntLike(1, 10**9), default=None, help="Number of rounds (homogeneous).")
@click.option("--rounds", "rounds_file", type=click.Path(dir_okay=False), default=None,
              help="JSON list of {eps0, n, count} or CSV with header eps0,n[,count] (heterogeneous).")
@click.option("--delta", type=PROBABILITY, default=1e-6, show_default=True, help="Target total delta.")
@click.option("--method", "-m", type=UPPER, default="clones", show_default=True, help="Clone-pair analysis of each round.")
@click.option("--k", type=IntLike(2, 10**9), default=None, help="Alphabet size for --method krr.")
@click.option("--orders", default=None, help=ORDERS_HELP)
@click.option("--discretization", type=click.FloatRange(1e-7, 0.1), default=None,
              help="Privacy-loss grid of the PLD route (smaller: tighter and slower). "
                   "Default: 1e-4, finer when a round's losses span fewer than 64 steps.")
@format_option
def compose_cmd(eps0: float | None, n: int | None, T: int | None, rounds_file: str | None, delta: float,
                method: str, k: int | None, orders: str | None, discretization: float | None, fmt: str) -> None:
    """(eps, delta) after T adaptive shuffled rounds, by every route, tightest marked.

    \b
    Examples:
      shuffle-acct compose --eps0 1 --n 1e5 --T 1000
      shuffle-acct compose --rounds rounds.csv --delta 1e-8 --format markdown
    """
    if rounds_file is not None:
        if eps0 is not None or n is not None or T is not None:
            raise InvalidParameter("give either --rounds FILE or --eps0/--n/--T, not both")
        result = comp.compose(comp.read_rounds(rounds_file), delta=delta, method=method, k=k, orders=_orders(orders),
                              discretization=discretization)
    else:
        if eps0 is None or n is None or T is None:
            raise InvalidParameter("give --eps0, --n and --T (homogeneous rounds) or --rounds FILE")
        result = comp.compose(eps0=eps0, n=n, T=T, delta=delta, method=method, k=k, orders=_orders(orders),
                              discretization=discretization)
    rows = []
    for b in result.bounds:
        if b.method == "pld":
            how = _pld_how(b)
        elif b.method == "rdp":
            how = f"RDP + {comp.CONVERSION} (best order {b.details.get('best_order', '')})"
        else:
            how = b.details.get("theorem", "")
        rows.append({"route": b.method, "epsilon": b.value, "kind": b.kind,
                     "tightest": "*" if b.method == result.best else "", "how": how})
    report = Report(
        "compose",
        "Composition of shuffled rounds",
        [Column("route", "route"), Column("epsilon", "epsilon", kind_key="kind"), Column("kind", "kind"),
         Column("tightest", "tightest"), Column("how", "how")],
        rows,
        inputs={k_: v for k_, v in result.bounds[0].inputs.items() if v is not None},
        notes=[f"method: {METHODS[method].citation}", "* = tightest certified upper bound"],
        warnings=[w for b in result.bounds for w in b.warnings] + list(result.warnings),
        records=[b.to_dict() for b in result.bounds],
        extra={"best": result.best},
    )
    click.echo(render(report, fmt), nl=False)

"""``shuffle-acct renyi`` and ``shuffle-acct compose``: a thin layer over :mod:`..composition`."""

from __future__ import annotations

import os
from typing import Any

import click

from .. import composition as comp
from .. import validation as v
from ..analyses import CLONE_METHODS, METHODS
from ..errors import InvalidParameter
from ..output import Column, Report, render, round_directed
from ..results import warnings_by_method
from .params import ALPHABET, DELTA, EPS0, ROUNDS, USERS, RangeType, format_option
from .randomizer_options import build_family, randomizer_options

#: ``renyi``'s methods: the analyses with a clone pair (review rev94r: ``--help`` listed blanket and others it refused)
CLONE_PAIR = click.Choice(list(CLONE_METHODS))
UPPER = click.Choice([m.name for m in METHODS.values() if m.numerical and m.kind == "upper"])


class OrdersType(click.ParamType):
    """``--orders 2,8,32``: a comma-separated list of Renyi orders (:func:`..validation.check_orders`)."""

    name = "orders"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> tuple[float, ...]:
        if isinstance(value, tuple):
            return value
        try:
            return v.check_orders(str(value), "orders")
        except InvalidParameter as exc:
            self.fail(str(exc).removeprefix("orders: "), param, ctx)


ORDERS_HELP = (f"Renyi orders, comma-separated (1 < alpha <= 1e6, at most {v.MAX_ORDERS}). "
               "Default: 40 orders from 1.25 to 1024.")


@click.command("renyi")
@click.option("--eps0", type=EPS0, required=True, help="Local randomizer's epsilon (0 < eps0 <= 700).")
@click.option("--n", "n", type=USERS, required=True, help="Number of users (1 to 1e12).")
@click.option("--method", "-m", type=CLONE_PAIR, default="clones", show_default=True, help="Clone-pair analysis.")
@click.option("--k", type=ALPHABET, default=None, help="Alphabet size for the k-RR methods (2 <= k <= 1e9).")
@click.option("--orders", type=OrdersType(), default=None, help=ORDERS_HELP)
@click.option("--rtol", type=RangeType(v.RENYI_RTOL), default=1e-3, show_default=True,
              help="Target relative width of each certified bracket (1e-4 <= rtol <= 0.5; the upper "
                   "bound is certified whatever the width).")
@format_option
def renyi_cmd(eps0: float, n: int, method: str, k: int | None, orders: tuple[float, ...] | None, rtol: float,
              fmt: str) -> None:
    """RDP curve alpha -> D_alpha of one shuffled round (max of both directions).

    \b
    Examples:
      shuffle-acct renyi --eps0 1 --n 1e6
      shuffle-acct renyi --eps0 2 --n 1e4 --orders 2,4,8,16 --format json
    """
    curve = comp.rdp_curve(eps0, n, method, k, orders, rtol)
    rows = [
        {"alpha": b.inputs["alpha"], "rdp": b.value, "kind": b.kind, "bracket_lower": lo, "bracket_upper": up}
        for b, lo, up in zip(curve.bounds, curve.lower, curve.upper)
    ]
    columns = [
        Column("alpha", "alpha"),
        Column("rdp", "D_alpha", kind_key="kind"),
        Column("kind", "kind"),
        Column("bracket_lower", "bracket lower", formatter=lambda x: _directed(x, "lower")),
        Column("bracket_upper", "bracket upper", formatter=lambda x: _directed(x, "upper")),
    ]
    m = METHODS[method]
    report = Report(
        "renyi",
        "Renyi DP of one shuffled round",
        columns,
        rows,
        inputs={"eps0": eps0, "n": n, "method": method, "k": k},
        notes=[f"method: {m.citation}", f"assumes: {m.assumes}",
               "D_alpha = max(D_alpha(P||Q), D_alpha(Q||P)); the value is certified (truncation and rounding "
               "accounted for); an upper-bound method's bracket lower end is a convergence check, not a lower bound"],
        warnings=list(curve.bounds[0].warnings),
        records=[b.to_dict() for b in curve.bounds],
    )
    click.echo(render(report, fmt), nl=False)


def _directed(value: Any, kind: str) -> str:
    return "" if value is None else round_directed(value, kind)


def _pld_how(b: Any) -> str:
    """The 'how' cell of the PLD row: the construction, or why it does not apply."""
    if not b.applicable:
        return b.validity
    return f"pessimistic Connect-the-Dots PLD (DGKKM22) + dp_accounting, discretization {b.details['discretization']:g}"


def _rounds_file(rounds_file: str | None, deprecated: str | None) -> str | None:
    """``--rounds-file``, or the deprecated ``--rounds FILE`` (a count everywhere else)."""
    if deprecated is None:
        return rounds_file
    if rounds_file is not None:
        raise click.UsageError("give --rounds-file only (--rounds is its deprecated name in compose)")
    if not os.path.exists(deprecated) and v.IntRange("rounds").problem(deprecated)[1] is None:
        raise click.BadParameter(f"in compose, --rounds names a rounds file (deprecated: use --rounds-file FILE); "
                                 f"for {deprecated} identical rounds give --eps0, --n and --T {deprecated}",
                                 param_hint="'--rounds'")
    click.echo("warning: compose --rounds FILE is deprecated; use --rounds-file FILE", err=True)
    return deprecated


@click.command("compose")
@click.option("--eps0", type=EPS0, default=None, help="Local epsilon of every round (homogeneous; 0 < eps0 <= 700).")
@click.option("--n", "n", type=USERS, default=None, help="Users per round (homogeneous; 1 to 1e12).")
@click.option("--T", "T", type=ROUNDS, default=None, help="Number of rounds (homogeneous; 1 to 1e9).")
@click.option("--rounds-file", "rounds_file", type=click.Path(dir_okay=False), default=None,
              help="Heterogeneous rounds: a JSON list of {eps0, n, count} objects or a CSV file with header "
                   "eps0,n[,count]; other columns or keys are refused.")
@click.option("--rounds", "deprecated_rounds", default=None, hidden=True)
@click.option("--delta", type=DELTA, default=1e-6, show_default=True, help="Target total delta (1e-300 <= delta < 1).")
@click.option("--method", "-m", type=UPPER, default=None,
              help="Clone-pair analysis of each round (default clones; with a randomizer, the generic analysis "
                   "of the RDP route: default stronger-clones, as the randomizer is fixed).")
@click.option("--k", type=ALPHABET, default=None, help="Alphabet size: of --method krr, or of --randomizer (2 <= k <= 1e9).")
@click.option("--orders", type=OrdersType(), default=None, help=ORDERS_HELP)
@click.option("--discretization", type=RangeType(v.DISCRETIZATION), default=None,
              help="Privacy-loss grid of the PLD route, 1e-7 to 0.1 (smaller: tighter and slower; the PLD row says "
                   "when the composition would not fit). Default: from the rounds themselves (the narrowest "
                   "round's tail eps over 1000 steps).")
@randomizer_options
@format_option
def compose_cmd(eps0: float | None, n: int | None, T: int | None, rounds_file: str | None,
                deprecated_rounds: str | None, delta: float, method: str | None, k: int | None,
                orders: tuple[float, ...] | None, discretization: float | None, randomizer_name: str | None,
                g: int | None, d: int | None, randomizer_file: str | None, fmt: str) -> None:
    """(eps, delta) after T adaptive shuffled rounds, by every route, tightest marked.

    With --randomizer (or --randomizer-file) every user runs that randomizer in every round:
    the PLD and advanced routes compose its exact privacy-blanket bound.

    \b
    Examples:
      shuffle-acct compose --eps0 1 --n 1e5 --T 1000
      shuffle-acct compose --rounds-file rounds.csv --delta 1e-8 --format markdown
      shuffle-acct compose --eps0 1 --n 1e4 --T 100 --randomizer krr --k 10
    """
    rounds_file = _rounds_file(rounds_file, deprecated_rounds)
    family = build_family(k, randomizer_name, g, d, randomizer_file)
    if family is not None and family.fixed_eps0 is not None and eps0 is None and rounds_file is None:
        eps0 = family.fixed_eps0
    method = method or ("clones" if family is None else "stronger-clones")
    if rounds_file is not None:
        if eps0 is not None or n is not None or T is not None:
            raise click.UsageError("give either --rounds-file FILE or --eps0/--n/--T, not both")
        result = comp.compose(comp.read_rounds(rounds_file), delta=delta, method=method, k=k, orders=orders,
                              discretization=discretization, randomizer=family)
    else:
        missing = [flag for flag, val in (("--eps0", eps0), ("--n", n), ("--T", T)) if val is None]
        if missing:
            raise click.UsageError(f"missing {', '.join(missing)}: give --eps0, --n and --T (homogeneous rounds) "
                                   "or --rounds-file FILE")
        result = comp.compose(eps0=eps0, n=n, T=T, delta=delta, method=method, k=k, orders=orders,
                              discretization=discretization, randomizer=family)
    rows = []
    for b in result.bounds:
        if b.method == "pld":
            how = _pld_how(b)
        elif b.method == "rdp":
            how = f"RDP + {comp.CONVERSION} (best order {b.details.get('best_order', '')})"
        else:
            how = b.details.get("theorem", "")
        if family is not None and b.applicable:
            how = f"{method} (generic): {how}" if b.method == "rdp" else f"blanket: {how}"
        rows.append({"route": b.method, "epsilon": b.value, "kind": b.kind,
                     "tightest": "*" if b.method == result.best else "", "how": how})
    report = Report(
        "compose",
        "Composition of shuffled rounds",
        [Column("route", "route"), Column("epsilon", "epsilon", kind_key="kind"), Column("kind", "kind"),
         Column("tightest", "tightest"), Column("how", "how")],
        rows,
        inputs={k_: v for k_, v in result.bounds[0].inputs.items() if v is not None},
        notes=[f"method: {METHODS[method].citation}", "* = tightest certified upper bound"]
        + ([f"randomizer: {family.describe()} in every round; PLD and advanced routes compose its exact "
            "privacy-blanket bound (Balle, Bell, Gascon, Nissim, CRYPTO 2019)"] if family is not None else []),
        warnings=warnings_by_method(result.bounds) + list(result.warnings),
        records=[b.to_dict() for b in result.bounds],
        extra={"best": result.best},
    )
    click.echo(render(report, fmt), nl=False)

"""``shuffle-acct solve eps0|n|eps|delta``: planning questions with one set of flags.

``solve eps`` and ``solve delta`` are the forward questions (the same as ``epsilon`` and
``delta``); ``solve eps0`` and ``solve n`` invert them, verified by the forward computation.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import click

from .. import api, planning
from .. import validation as v
from ..analyses import all_methods
from ..output import Column, Report, render, round_directed
from ..results import Bound, warnings_by_method
from .params import ALPHABET, DELTA, DELTA0, EPS, EPS0, EPS_POSITIVE, ROUNDS, USERS, RangeType, format_option
from .randomizer_options import build_family, build_randomizer, randomizer_options

UPPER_METHODS = [name for name, m in all_methods().items() if m.kind == "upper"]


def _opt_method(func: Any) -> Any:
    func = click.option("--delta0", type=DELTA0, default=0.0, show_default=True,
                        help="The local randomizer is (eps0, delta0)-DP, 0 <= delta0 < 1 (FMT21 Theorem 3.8).")(func)
    func = click.option("--k", type=ALPHABET, default=None,
                        help="Alphabet size: of the k-RR methods, or of --randomizer (2 <= k <= 1e9).")(func)
    return click.option("--method", "-m", type=click.Choice(UPPER_METHODS), default=None,
                        help="Upper-bound analysis to plan with (see 'shuffle-acct methods'). Default: clones; with "
                        "--randomizer, blanket (with --rounds: the PLD and advanced routes compose the blanket and "
                        "--method, default stronger-clones, is the RDP route's generic analysis).")(func)


def _method(method: str | None, family: Any, rounds: int) -> str:
    """The analysis to plan with: the given one, else the default for the randomizer and rounds."""
    if method is not None:
        return method
    if family is None:
        return "clones"
    return "blanket" if rounds == 1 else "stronger-clones"


def _rounds_option(func: Any) -> Any:
    return click.option("--rounds", "-T", type=ROUNDS, default=1, show_default=True,
                        help="Number of adaptive rounds composed, 1 to 1e9 (RDP, PLD and advanced routes; the "
                        "tightest certified one is used; each step of the search then runs a composition).")(func)


def _announce(rounds: int, randomizer: bool = False) -> None:
    """A composed plan takes many compositions: say so on stderr rather than stay silent."""
    if rounds > 1:
        how_long = "seconds to a minute: each step builds the blanket PLD" if randomizer else "about a second"
        click.echo(f"solving for {rounds} composed rounds: bracketing with RDP, then certifying with "
                   f"compose's tightest route ({how_long})...", err=True)


def _quantity(rounds: int) -> str:
    return "delta" if rounds == 1 else "composed eps"


def _recheck_line(where: str, d: Mapping[str, Any], eps: float, delta: float, rounds: int) -> tuple[str, str]:
    if rounds == 1:
        return (f"certified delta at {where}", f"{d['certified_delta']:.6g} <= {delta:g}")
    return (f"certified eps after {rounds} rounds at {where}", f"{d['certified_eps']:.6g} <= {eps:g}")


def _bracket_note(b: Bound) -> list[tuple[str, Any]]:
    """The certified bracket on the exact value, rounded outwards, as a note line."""
    if b.bracket is None:
        return []
    lo, up = b.bracket
    return [("certified bracket on the exact value", f"[{round_directed(lo, 'lower')}, {round_directed(up, 'upper')}]")]


def _emit(command: str, bound: Bound, fmt: str, extra_rows: list[tuple[str, Any]]) -> None:
    rows = [{"quantity": bound.quantity, "value": bound.value, "kind": bound.kind, "method": bound.method}]
    report = Report(
        command=f"solve {command}",
        title=f"shuffle-acct solve {command}",
        columns=[Column("quantity", "answer"), Column("value", "value", kind_key="kind"),
                 Column("kind", "kind"), Column("method", "method")],
        rows=rows,
        inputs={key: val for key, val in bound.inputs.items() if key != "method"},
        notes=[f"{label}: {value}" for label, value in extra_rows] + [bound.validity],
        warnings=warnings_by_method([bound]),
        records=[bound.to_dict()],
    )
    click.echo(render(report, fmt), nl=False)


@click.group("solve")
def solve_group() -> None:
    """Planning: the largest eps0 or the smallest n that meets a target (eps, delta).

    \b
    Examples:
      shuffle-acct solve eps0 --eps 1 --delta 1e-6 --n 100000
      shuffle-acct solve n --eps 0.1 --delta 1e-6 --eps0 2
    Every answer is re-checked with the forward computation; the value one step further
    is shown and does not meet the target.
    """


@solve_group.command("eps0")
@click.option("--eps", type=EPS_POSITIVE, required=True, help="Target central epsilon (0 < eps <= 700).")
@click.option("--delta", type=DELTA, required=True, help="Target delta (1e-300 <= delta < 1).")
@click.option("--n", "n", type=USERS, required=True, help="Number of users (1 to 1e12).")
@_opt_method
@click.option("--rtol", type=RangeType(v.SOLVER_RTOL), default=1e-6, show_default=True,
              help="Relative resolution of the answer (1e-10 to 0.01).")
@_rounds_option
@randomizer_options
@format_option
def solve_eps0_cmd(eps: float, delta: float, n: int, method: str | None, k: int | None, delta0: float,
                   rtol: float, rounds: int, randomizer_name: str | None, g: int | None, d: int | None,
                   randomizer_file: str | None, fmt: str) -> None:
    """Largest local eps0 whose shuffled guarantee is at most (eps, delta)
    (after --rounds adaptive rounds, composed as in 'shuffle-acct compose').
    With --randomizer, the largest eps0 of that randomizer (its other parameters fixed).

    \b
    Examples:
      shuffle-acct solve eps0 --eps 1 --delta 1e-6 --n 100000
      shuffle-acct solve eps0 --eps 1 --delta 1e-6 --n 100000 --randomizer krr --k 10
    """
    family = build_family(k, randomizer_name, g, d, randomizer_file)
    if family is not None and family.fixed_eps0 is not None:
        raise click.UsageError("a --randomizer-file matrix has one fixed eps0: there is no eps0 to solve for "
                               "(ask 'solve n' instead)")
    b = planning.solve_eps0(eps, delta, n, _method(method, family, rounds), k, delta0, rtol, rounds, family,
                            on_start=lambda: _announce(rounds, family is not None))
    details = b.details
    if math.isfinite(details["next_eps0"]):
        further = f"eps0 = {details['next_eps0']:.9g} gives {_quantity(rounds)} = {details['next_value']:.6g}"
    else:
        further = f"none: every eps0 up to {v.MAX_EPS0:g} meets the target"
    _emit("eps0", b, fmt, [_recheck_line("this eps0", details, eps, delta, rounds), ("one step further", further)])


@solve_group.command("n")
@click.option("--eps", type=EPS_POSITIVE, required=True, help="Target central epsilon (0 < eps <= 700).")
@click.option("--delta", type=DELTA, required=True, help="Target delta (1e-300 <= delta < 1).")
@click.option("--eps0", type=EPS0, default=None,
              help="Local randomizer's epsilon (0 < eps0 <= 700); required unless --randomizer-file.")
@_opt_method
@_rounds_option
@randomizer_options
@format_option
def solve_n_cmd(eps: float, delta: float, eps0: float | None, method: str | None, k: int | None, delta0: float,
                rounds: int, randomizer_name: str | None, g: int | None, d: int | None,
                randomizer_file: str | None, fmt: str) -> None:
    """Smallest number of users for which the target (eps, delta) is certified
    (after --rounds adaptive rounds, composed as in 'shuffle-acct compose').

    \b
    Examples:
      shuffle-acct solve n --eps 0.1 --delta 1e-6 --eps0 2
      shuffle-acct solve n --eps 0.1 --delta 1e-6 --eps0 2 --randomizer krr --k 10
    """
    randomizer, eps0 = build_randomizer(eps0, k, randomizer_name, g, d, randomizer_file)
    b = planning.solve_n(eps, delta, eps0, _method(method, randomizer, rounds), k, delta0, rounds, randomizer,
                         on_start=lambda: _announce(rounds, randomizer is not None))
    details = b.details
    if details.get("previous_n"):
        fewer = f"n = {details['previous_n']} gives {_quantity(rounds)} = {details['previous_value']:.6g}"
    else:
        fewer = "none: n = 1 is the smallest number of users"
    _emit("n", b, fmt, [_recheck_line("this n", details, eps, delta, rounds), ("one user fewer", fewer)])


@solve_group.command("eps")
@click.option("--delta", type=DELTA, required=True, help="Target delta (1e-300 <= delta < 1).")
@click.option("--eps0", type=EPS0, default=None,
              help="Local randomizer's epsilon (0 < eps0 <= 700); required unless --randomizer-file.")
@click.option("--n", "n", type=USERS, required=True, help="Number of users (1 to 1e12).")
@_opt_method
@randomizer_options
@format_option
def solve_eps_cmd(delta: float, eps0: float | None, n: int, method: str | None, k: int | None, delta0: float,
                  randomizer_name: str | None, g: int | None, d: int | None, randomizer_file: str | None,
                  fmt: str) -> None:
    """Central eps at delta (the forward question, as 'shuffle-acct epsilon').

    \b
    Example:
      shuffle-acct solve eps --delta 1e-6 --eps0 3 --n 10000
    """
    randomizer, eps0 = build_randomizer(eps0, k, randomizer_name, g, d, randomizer_file)
    b = api.epsilon(eps0, n, delta, _method(method, randomizer, 1), k, delta0, randomizer=randomizer)
    _emit("eps", b, fmt, _bracket_note(b))


@solve_group.command("delta")
@click.option("--eps", type=EPS, required=True, help="Target central epsilon (0 <= eps <= 700).")
@click.option("--eps0", type=EPS0, default=None,
              help="Local randomizer's epsilon (0 < eps0 <= 700); required unless --randomizer-file.")
@click.option("--n", "n", type=USERS, required=True, help="Number of users (1 to 1e12).")
@_opt_method
@randomizer_options
@format_option
def solve_delta_cmd(eps: float, eps0: float | None, n: int, method: str | None, k: int | None, delta0: float,
                    randomizer_name: str | None, g: int | None, d: int | None, randomizer_file: str | None,
                    fmt: str) -> None:
    """Delta at eps (the forward question, as 'shuffle-acct delta').

    \b
    Example:
      shuffle-acct solve delta --eps 0.5 --eps0 3 --n 10000
    """
    randomizer, eps0 = build_randomizer(eps0, k, randomizer_name, g, d, randomizer_file)
    b = api.delta(eps0, n, eps, _method(method, randomizer, 1), k, delta0, randomizer=randomizer)
    _emit("delta", b, fmt, _bracket_note(b))

"""``shuffle-acct solve eps0|n|eps|delta``: planning questions with one set of flags.

``solve eps`` and ``solve delta`` are the forward questions (the same as ``epsilon`` and
``delta``); ``solve eps0`` and ``solve n`` invert them, verified by the forward computation.
"""

from __future__ import annotations

from typing import Any

import click

from .. import api, planning
from ..analyses import METHODS
from ..output import Column, Report, render
from ..results import Bound
from .params import POSITIVE, PROBABILITY, USERS, FiniteFloat, IntLike, format_option

UPPER_METHODS = [name for name, m in METHODS.items() if m.kind == "upper"]


def _opt_method(func: Any) -> Any:
    func = click.option("--delta0", type=FiniteFloat(0.0, 1.0, high_open=True), default=0.0, show_default=True,
                        help="The local randomizer is (eps0, delta0)-DP (FMT21 Theorem 3.8).")(func)
    func = click.option("--k", type=IntLike(2, 10**9), default=None, help="Alphabet size for the k-RR methods.")(func)
    return click.option("--method", "-m", type=click.Choice(UPPER_METHODS), default="clones", show_default=True,
                        help="Upper-bound analysis to plan with (see 'shuffle-acct methods').")(func)


def _rounds_option(func: Any) -> Any:
    return click.option("--rounds", "-T", type=IntLike(1, 10**9), default=1, show_default=True,
                        help="Number of adaptive rounds composed (RDP, PLD and advanced routes; the tightest "
                        "certified one is used).")(func)


def _quantity(rounds: int) -> str:
    return "delta" if rounds == 1 else "composed eps"


def _recheck_line(where: str, d: dict, eps: float, delta: float, rounds: int) -> tuple[str, str]:
    if rounds == 1:
        return (f"certified delta at {where}", f"{d['certified_delta']:.6g} <= {delta:g}")
    return (f"certified eps after {rounds} rounds at {where}", f"{d['certified_eps']:.6g} <= {eps:g}")


def _emit(command: str, bound: Bound, fmt: str, extra_rows: list[tuple[str, Any]]) -> None:
    rows = [{"quantity": bound.quantity, "value": bound.value, "kind": bound.kind, "method": bound.method}]
    report = Report(
        command=f"solve {command}",
        title=f"shuffle-acct solve {command}",
        columns=[Column("quantity", "answer"), Column("value", "value", kind_key="kind"),
                 Column("kind", "kind"), Column("method", "method")],
        rows=rows,
        inputs={k: v for k, v in bound.inputs.items() if k != "method"},
        notes=[f"{label}: {value}" for label, value in extra_rows] + [bound.validity],
        warnings=list(bound.warnings),
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
@click.option("--eps", type=POSITIVE, required=True, help="Target central epsilon.")
@click.option("--delta", type=PROBABILITY, required=True, help="Target delta, in (0, 1).")
@click.option("--n", "n", type=USERS, required=True, help="Number of users.")
@_opt_method
@click.option("--rtol", type=FiniteFloat(1e-10, 1e-2), default=1e-6, show_default=True,
              help="Relative resolution of the answer.")
@_rounds_option
@format_option
def solve_eps0_cmd(eps: float, delta: float, n: int, method: str, k: int | None, delta0: float,
                   rtol: float, rounds: int, fmt: str) -> None:
    """Largest local eps0 whose shuffled guarantee is at most (eps, delta)
    (after --rounds adaptive rounds, composed as in 'shuffle-acct compose')."""
    b = planning.solve_eps0(eps, delta, n, method, k, delta0, rtol, rounds)
    d = b.details
    _emit("eps0", b, fmt, [
        _recheck_line("this eps0", d, eps, delta, rounds),
        ("one step further", f"eps0 = {d['next_eps0']:.9g} gives {_quantity(rounds)} = {d['next_value']:.6g}"),
    ])


@solve_group.command("n")
@click.option("--eps", type=POSITIVE, required=True, help="Target central epsilon.")
@click.option("--delta", type=PROBABILITY, required=True, help="Target delta, in (0, 1).")
@click.option("--eps0", type=POSITIVE, required=True, help="Local randomizer's epsilon.")
@_opt_method
@_rounds_option
@format_option
def solve_n_cmd(eps: float, delta: float, eps0: float, method: str, k: int | None, delta0: float,
                rounds: int, fmt: str) -> None:
    """Smallest number of users for which the target (eps, delta) is certified
    (after --rounds adaptive rounds, composed as in 'shuffle-acct compose')."""
    b = planning.solve_n(eps, delta, eps0, method, k, delta0, rounds)
    d = b.details
    _emit("n", b, fmt, [
        _recheck_line("this n", d, eps, delta, rounds),
        ("one user fewer", f"n = {d['previous_n']} gives {_quantity(rounds)} = {d['previous_value']:.6g}"),
    ])


@solve_group.command("eps")
@click.option("--delta", type=PROBABILITY, required=True, help="Target delta, in (0, 1).")
@click.option("--eps0", type=POSITIVE, required=True, help="Local randomizer's epsilon.")
@click.option("--n", "n", type=USERS, required=True, help="Number of users.")
@_opt_method
@format_option
def solve_eps_cmd(delta: float, eps0: float, n: int, method: str, k: int | None, delta0: float, fmt: str) -> None:
    """Central eps at delta (the forward question, as 'shuffle-acct epsilon')."""
    b = api.epsilon(eps0, n, delta, method, k, delta0)
    _emit("eps", b, fmt, [("certified bracket on the exact value", b.details.get("bracket"))] if b.details else [])


@solve_group.command("delta")
@click.option("--eps", type=FiniteFloat(0.0), required=True, help="Target central epsilon (>= 0).")
@click.option("--eps0", type=POSITIVE, required=True, help="Local randomizer's epsilon.")
@click.option("--n", "n", type=USERS, required=True, help="Number of users.")
@_opt_method
@format_option
def solve_delta_cmd(eps: float, eps0: float, n: int, method: str, k: int | None, delta0: float, fmt: str) -> None:
    """Delta at eps (the forward question, as 'shuffle-acct delta')."""
    b = api.delta(eps0, n, eps, method, k, delta0)
    _emit("delta", b, fmt, [("certified bracket on the exact value", b.details.get("bracket"))] if b.details else [])

"""``shuffle-acct splitmix …``: a thin click layer over :mod:`.core` and :mod:`.dpsum`.

Registered as the entry point ``splitmix`` of the group ``shuffle_accountant.plugins``.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import click

from ...cli.params import POSITIVE, PROBABILITY, USERS, FiniteFloat, IntLike, format_option
from ...output import Column, Report, render
from ...results import Bound
from .core import check_modulus, exact_bound, messages_needed, security_bounds
from .dpsum import dp_sum_plan

_MAX_BITS = 1 << 16
_SIGMA_KIND = {"upper": "lower", "lower": "upper"}  # a distance upper bound is a σ lower bound


class Modulus(click.ParamType):
    """An integer ``q ≥ 2`` of any size: ``42949672960000``, ``1e6`` or ``2^32``."""

    name = "integer"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            return self._check(value, value, param, ctx)
        text = str(value).strip().replace("_", "").replace("**", "^")
        try:
            if "^" in text:
                base, exp = (int(part) for part in text.split("^"))
                q = base ** min(exp, _MAX_BITS + 1) if base > 1 else base**exp
            elif text.lstrip("+-").isdigit():
                q = int(text)
            else:
                x = float(text)
                if not (math.isfinite(x) and x.is_integer()):
                    raise ValueError
                q = int(x)
        except ValueError:
            self.fail(f"{value!r} is not an integer (accepted: 2 <= q <= 2^{_MAX_BITS}, e.g. 2^32)", param, ctx)
        return self._check(q, value, param, ctx)

    def _check(self, q: int, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if q < 2 or q.bit_length() > _MAX_BITS:
            self.fail(f"{value} is out of range (accepted: 2 <= q <= 2^{_MAX_BITS})", param, ctx)
        return q


MODULUS = Modulus()
MESSAGES = IntLike(1, 10**6)


def _emit(report: Report, fmt: str) -> None:
    click.echo(render(report, fmt), nl=False)


def _row(b: Bound, sigma_key: str, distance_key: str | None = None) -> dict[str, Any]:
    """A table row for one bound: its σ and distance columns rounded in the safe direction."""
    details = dict(b.details)
    distance = b.value if b.quantity == "distance" else details.get(distance_key or "")
    return {
        "method": b.method,
        "kind": b.kind,
        "messages": b.value if b.quantity == "messages" else None,
        "distance": distance,
        "sigma": details.get(sigma_key),
        "sigma_kind": _SIGMA_KIND.get(b.kind, b.kind),
        "validity": b.validity,
    }


_COLUMNS = {
    "method": Column("method", "method"),
    "kind": Column("kind", "kind"),
    "messages": Column("messages", "messages"),
    "distance": Column("distance", "distance", kind_key="kind"),
    "sigma": Column("sigma", "sigma", kind_key="sigma_kind"),
    "validity": Column("validity", "assumes"),
}


def _report(command: str, title: str, keys: Sequence[str], rows: list[dict[str, Any]], bounds: Sequence[Bound],
            inputs: dict[str, Any], notes: list[str]) -> Report:
    warnings = sorted({w for b in bounds for w in b.warnings})
    return Report(command, title, [_COLUMNS[k] for k in keys], rows, inputs=inputs, notes=notes,
                  warnings=warnings, records=[b.to_dict() for b in bounds])


@click.group(name="splitmix")
def group() -> None:
    """Split and mix (Ishai et al.): messages for sigma-security, certified and exact
    statistical distances, and DP summation plans built on it.

    \b
    Examples:
      shuffle-acct splitmix messages --n 10000 --bits 46 --sigma 40
      shuffle-acct splitmix security --n 10000 --m 12 --q 2^46
      shuffle-acct splitmix exact --n 10 --m 3 --q 3
      shuffle-acct splitmix dp-sum --n 10000 --eps 1 --delta 1e-6
    """


@group.command("messages")
@click.option("--n", type=USERS, required=True, help="Number of parties.")
@click.option("--q", type=MODULUS, default=None, help="Modulus (group order), e.g. 2^32 or 42949672960000.")
@click.option("--bits", type=IntLike(1, _MAX_BITS), default=None, help="Use q = 2^bits.")
@click.option("--sigma", type=POSITIVE, required=True, help="Security parameter: distance <= 2^-sigma.")
@click.option("--honest-fraction", type=FiniteFloat(0.0, 1.0, low_open=True), default=1.0, show_default=True,
              help="Fraction of honest parties; only they count.")
@format_option
def messages_cmd(n: int, q: int | None, bits: int | None, sigma: float, honest_fraction: float, fmt: str) -> None:
    """Smallest number of messages per party for sigma-security, by each bound."""
    if (q is None) == (bits is None):
        raise click.UsageError("give exactly one of --q and --bits")
    modulus = check_modulus(2**bits if bits is not None else q)
    bounds = messages_needed(n, sigma, modulus, honest_fraction)
    rows = [
        _row(bounds[0], "sigma_certified", "distance_upper"),
        _row(bounds[1], "sigma_upper_at_m"),
        _row(bounds[2], ""),
    ]
    rows[1]["distance"] = None
    notes = [
        "upper: that many messages suffice (sigma = what the bound certifies there);",
        "lower: fewer messages are never sigma-secure (sigma = the most security possible at that m).",
    ]
    inputs = dict(bounds[0].inputs)
    _emit(_report("splitmix messages", "Messages per party for sigma-security", ["method", "kind", "messages", "sigma",
                  "distance", "validity"], rows, bounds, inputs, notes), fmt)


@group.command("security")
@click.option("--n", type=USERS, required=True, help="Number of (honest) parties.")
@click.option("--m", type=MESSAGES, required=True, help="Messages per party.")
@click.option("--q", type=MODULUS, required=True, help="Modulus (group order).")
@format_option
def security_cmd(n: int, m: int, q: int, fmt: str) -> None:
    """Statistical distance (and sigma) certified for m messages."""
    bounds = security_bounds(n, m, q)
    rows = [_row(b, "sigma" if b.kind == "upper" else "sigma_upper") for b in bounds]
    _emit(_report("splitmix security", "Worst-case statistical distance of split and mix",
                  ["method", "kind", "distance", "sigma", "validity"], rows, bounds, {"n": n, "m": m, "q": q},
                  ["distance upper bound = 2^-sigma certified; lower bound = attained by a concrete attack."]), fmt)


@group.command("exact")
@click.option("--n", type=IntLike(1, 10**4), required=True, help="Number of parties.")
@click.option("--m", type=IntLike(1, 64), required=True, help="Messages per party.")
@click.option("--q", type=IntLike(2, 64), required=True, help="Modulus.")
@format_option
def exact_cmd(n: int, m: int, q: int, fmt: str) -> None:
    """Exact worst-case statistical distance (exact rational arithmetic), with the bounds."""
    exact = exact_bound(n, m, q)
    bounds = (exact, *security_bounds(n, m, q)[:2])
    rows = [_row(b, "sigma" if b.kind != "lower" else "sigma_upper") for b in bounds]
    rows[0]["sigma_kind"] = "exact"
    d = exact.details
    pair = d["worst_pair"]
    notes = [
        f"exact distance = {d['fraction']}",
        f"attained by input multisets {pair[0]} and {pair[1]}" if pair[0] else "no two inputs share a sum",
    ]
    _emit(_report("splitmix exact", "Exact worst-case statistical distance of split and mix",
                  ["method", "kind", "distance", "sigma", "validity"], rows, bounds, {"n": n, "m": m, "q": q},
                  notes), fmt)


_PLAN_ROWS: list[tuple[str, str, str]] = [
    ("precision", "", "inputs in [0,1] randomized-rounded to {0..p}"),
    ("q", "", "modulus: smallest power of two with negligible wrap-around"),
    ("sigma_target", "", "log2((1 + e^eps)/delta)"),
    ("sigma_certified", "lower", "BBGN sigma at these messages (>= target)"),
    ("messages", "", "messages per user (BBGN)"),
    ("bits_per_message", "", "log2 q"),
    ("total_bits_per_user", "", "messages x bits"),
    ("alpha", "", "noise parameter >= e^(-eps/p)"),
    ("noise_per_user", "", "Polya shares (infinitely divisible)"),
    ("noise_total", "", "sum over users"),
    ("decode_margin", "", "L: decoded range [-L, q-L)"),
    ("mse_rounding", "upper", "n/(4p^2)"),
    ("mse_noise", "upper", "2 alpha/((1-alpha)^2 p^2)"),
    ("mse_wrap", "upper", "2 alpha^(L+1)/(1+alpha) (q/p)^2"),
    ("mse_total", "upper", "expected squared error of the sum"),
    ("epsilon_check", "upper", "eps re-derived from the plan"),
    ("delta_check", "upper", "(1 + e^eps) 2^-sigma re-derived from the plan"),
]


@group.command("dp-sum")
@click.option("--n", type=IntLike(3, 10**12), required=True, help="Number of users (>= 3).")
@click.option("--eps", type=FiniteFloat(0.0, 700.0, low_open=True), required=True, help="Target epsilon.")
@click.option("--delta", type=PROBABILITY, required=True, help="Target delta.")
@click.option("--precision", type=IntLike(1, 10**9), default=None, help="Rounding precision p [default: ceil(sqrt n)].")
@format_option
def dp_sum_cmd(n: int, eps: float, delta: float, precision: int | None, fmt: str) -> None:
    """Parameter plan for (eps, delta)-DP summation of reals in [0, 1] by split and mix."""
    plan = dp_sum_plan(n, eps, delta, precision)
    values = plan.to_dict()
    rows = [{"quantity": k, "value": values[k], "kind": kind, "note": note} for k, kind, note in _PLAN_ROWS]
    columns = [Column("quantity", "quantity"), Column("value", "value", kind_key="kind"), Column("note", "note")]
    report = Report("splitmix dp-sum", "DP summation by split and mix: parameter plan", columns, rows,
                    inputs={"n": n, "eps": eps, "delta": delta, "precision": precision},
                    notes=[f"method: {plan.citation}"], records=[values])
    _emit(report, fmt)

"""``shuffle-acct splitmix …``: a thin click layer over :mod:`.core` and :mod:`.dpsum`.

Registered as the entry point ``splitmix`` of the group ``shuffle_accountant.plugins``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import click

from ...plugin_api import (
    DELTA_TYPE,
    USERS,
    Bound,
    Column,
    FiniteFloat,
    IntLike,
    Report,
    emit,
    format_option,
)
from .._shared.secure_sum import MAX_Q_BITS, MAX_SIGMA, describe_modulus

_MAX_BITS = MAX_Q_BITS
_MAX_CHARS = 100  # a decimal modulus of up to 100 digits; larger ones as b^e
_SIGMA_KIND = {"upper": "lower", "lower": "upper"}  # a distance upper bound is a σ lower bound
_ACCEPTED = f"integer 2 <= q <= 2^{_MAX_BITS}, e.g. 2^32 or 42949672960000"


class Modulus(click.ParamType):
    """An integer ``2 <= q <= 2^65536``: ``42949672960000``, ``1e6`` or ``2^32`` (``b^e`` is
    checked against the range before it is computed)."""

    name = "integer"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            return self._check(value, value, param, ctx)
        text = str(value).strip().replace("_", "").replace("**", "^")
        shown = text if len(text) <= 40 else f"{text[:20]}...({len(text)} characters)"
        if len(text) > _MAX_CHARS:
            self.fail(f"{shown} is too long (accepted: {_ACCEPTED}; write large moduli as b^e)", param, ctx)
        try:
            if "^" in text:
                base, exp = (int(part) for part in text.split("^"))
                if base >= 2 and exp >= 1 and exp * math.log2(base) > _MAX_BITS + 1:
                    self.fail(f"{shown} is out of range (accepted: {_ACCEPTED})", param, ctx)
                q = base**exp if exp >= 0 else 0
            elif text.lstrip("+-").isdigit():
                q = int(text)
            else:
                x = float(text)
                if not (math.isfinite(x) and x.is_integer()):
                    raise ValueError
                q = int(x)
        except ValueError:
            self.fail(f"{shown!r} is not an integer (accepted: {_ACCEPTED})", param, ctx)
        return self._check(q, shown, param, ctx)

    def _check(self, q: int, shown: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if q < 2 or q > 1 << _MAX_BITS:
            self.fail(f"{shown if isinstance(shown, str) else describe_modulus(q)} is out of range "
                      f"(accepted: {_ACCEPTED})", param, ctx)
        return q


MODULUS = Modulus()
MESSAGES = IntLike(1, 10**6)
SIGMA = FiniteFloat(0.0, MAX_SIGMA, low_open=True)


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
@click.option("--n", type=USERS, required=True, help="Number of parties, 1 <= n <= 1e12.")
@click.option("--q", type=MODULUS, default=None, help=f"Modulus (group order): {_ACCEPTED}.")
@click.option("--bits", type=IntLike(1, _MAX_BITS), default=None, help=f"Use q = 2^bits, 1 <= bits <= {_MAX_BITS}.")
@click.option("--sigma", type=SIGMA, required=True,
              help=f"Security parameter: distance <= 2^-sigma, 0 < sigma <= {MAX_SIGMA:g}.")
@click.option("--honest-fraction", type=FiniteFloat(0.0, 1.0, low_open=True), default=1.0, show_default=True,
              help="Fraction of honest parties, 0 < gamma <= 1; only they count.")
@format_option
def messages_cmd(n: int, q: int | None, bits: int | None, sigma: float, honest_fraction: float, fmt: str) -> None:
    """Smallest number of messages per party for sigma-security, by each bound.

    \b
    Example:
      shuffle-acct splitmix messages --n 10000 --bits 46 --sigma 40
    """
    from .core import messages_needed

    if (q is None) == (bits is None):
        raise click.UsageError("give exactly one of --q and --bits")
    modulus = 2**bits if bits is not None else q
    assert modulus is not None
    bounds = messages_needed(n, sigma, modulus, honest_fraction)
    rows = [
        _row(bounds[0], "sigma_certified", "distance_upper"),
        _row(bounds[1], "sigma_upper_at_m"),
        _row(bounds[2], ""),
    ]
    rows[1]["distance"] = None
    low = dict(bounds[1].details)
    notes = [
        "upper: that many messages suffice (sigma = what the bound certifies there);",
        "lower: fewer messages are never sigma-secure (sigma = the most security possible at that m).",
        (f"floors: distinguisher (split and mix) {low['distinguisher_messages']}, GMPV Theorem 4.1 (every protocol) "
         f"{low['gmpv_theorem_4_1_messages']}; the stronger is shown."),
    ]
    inputs = dict(bounds[0].inputs)
    emit(_report("splitmix messages", "Messages per party for sigma-security", ["method", "kind", "messages", "sigma",
                 "distance", "validity"], rows, bounds, inputs, notes), fmt)


@group.command("security")
@click.option("--n", type=USERS, required=True, help="Number of (honest) parties, 1 <= n <= 1e12.")
@click.option("--m", type=MESSAGES, required=True, help="Messages per party, 1 <= m <= 1e6.")
@click.option("--q", type=MODULUS, required=True, help=f"Modulus (group order): {_ACCEPTED}.")
@format_option
def security_cmd(n: int, m: int, q: int, fmt: str) -> None:
    """Statistical distance (and sigma) certified for m messages.

    \b
    Example:
      shuffle-acct splitmix security --n 10000 --m 12 --q 2^46
    """
    from .core import security_bounds

    bounds = security_bounds(n, m, q)
    rows = [_row(b, "sigma" if b.kind == "upper" else "sigma_upper") for b in bounds]
    emit(_report("splitmix security", "Worst-case statistical distance of split and mix",
                 ["method", "kind", "distance", "sigma", "validity"], rows, bounds,
                 {"n": n, "m": m, "q": describe_modulus(q)},
                 [("distance upper bound = 2^-sigma certified; lower bound = the stronger of a concrete attack "
                   "(distinguisher) and GMPV Theorem 4.1 (some pair of inputs is this far apart).")]), fmt)


@group.command("exact")
@click.option("--n", type=IntLike(1, 10**4), required=True, help="Number of parties, 1 <= n <= 1e4.")
@click.option("--m", type=IntLike(1, 64), required=True, help="Messages per party, 1 <= m <= 64.")
@click.option("--q", type=IntLike(2, 64), required=True, help="Modulus, 2 <= q <= 64.")
@format_option
def exact_cmd(n: int, m: int, q: int, fmt: str) -> None:
    """Exact worst-case statistical distance (exact rational arithmetic), with the bounds.

    Sizes beyond the work limits are refused at once (exit 1) with the estimate.

    \b
    Example:
      shuffle-acct splitmix exact --n 6 --m 3 --q 3
    """
    from .core import exact_bound, security_bounds

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
    emit(_report("splitmix exact", "Exact worst-case statistical distance of split and mix",
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
@click.option("--n", type=IntLike(3, 10**12), required=True, help="Number of users, 3 <= n <= 1e12.")
@click.option("--eps", type=FiniteFloat(0.0, 700.0, low_open=True), required=True,
              help="Target epsilon, 0 < eps <= 700.")
@click.option("--delta", type=DELTA_TYPE, required=True, help="Target delta, 1e-300 <= delta < 1.")
@click.option("--precision", type=IntLike(1, 10**9), default=None,
              help="Rounding precision p, 1 <= p <= 1e9 [default: ceil(sqrt n)].")
@format_option
def dp_sum_cmd(n: int, eps: float, delta: float, precision: int | None, fmt: str) -> None:
    """Parameter plan for (eps, delta)-DP summation of reals in [0, 1] by split and mix.

    \b
    Example:
      shuffle-acct splitmix dp-sum --n 10000 --eps 1 --delta 1e-6
    """
    from .dpsum import dp_sum_plan

    plan = dp_sum_plan(n, eps, delta, precision)
    values = plan.to_dict()
    rows = [{"quantity": k, "value": values[k], "kind": kind or "exact", "note": note} for k, kind, note in _PLAN_ROWS]
    columns = [Column("quantity", "quantity"), Column("value", "value", kind_key="kind"), Column("note", "note")]
    report = Report("splitmix dp-sum", "DP summation by split and mix: parameter plan", columns, rows,
                    inputs={"n": n, "eps": eps, "delta": delta, "precision": precision},
                    notes=[f"method: {plan.citation}"], records=[values])
    emit(report, fmt)

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
    InvalidParameter,
    Report,
    emit,
    format_option,
    round_directed,
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
      shuffle-acct splitmix dp-sum-solve --find n --eps 1 --delta 1e-6 --rmse-mean 0.001
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
    ("honest_users", "", "ceil(gamma n): privacy holds whenever at least these follow the protocol"),
    ("precision", "", "inputs in [0,1] randomized-rounded to {0..p}"),
    ("q", "", "modulus: smallest power of two with negligible wrap-around"),
    ("sigma_min", "", "security floor asked for (--sigma)"),
    ("sigma_target", "", "log2((1 + e^eps)/delta), at least --sigma"),
    ("sigma_certified", "lower", "BBGN sigma at these messages, over the honest users (>= target)"),
    ("messages", "", "messages per user (BBGN, honest users)"),
    ("bits_per_message", "", "log2 q"),
    ("total_bits_per_user", "", "messages x bits"),
    ("alpha", "", "noise parameter >= e^(-eps/p)"),
    ("noise_per_user", "", "Polya shares (infinitely divisible), calibrated for the honest users"),
    ("noise_total", "", "sum over users"),
    ("decode_margin", "", "L: decoded range [-L, q-L)"),
    ("mse_rounding", "upper", "n/(4p^2)"),
    ("mse_noise", "upper", "(n/h) 2 alpha/((1-alpha)^2 p^2), all n users adding noise"),
    ("mse_wrap", "upper", "P(|noise| > L) (q/p)^2"),
    ("mse_total", "upper", "expected squared error of the sum, all n users following"),
    ("rmse_total", "upper", "sqrt(mse_total)"),
    ("rmse_mean", "upper", "rmse_total / n: error of the mean"),
    ("mse_total_honest_only", "upper", "squared error when only the honest users follow (the others drop out)"),
    ("epsilon_check", "upper", "eps re-derived from the plan"),
    ("delta_check", "upper", "(1 + e^eps) 2^-sigma re-derived from the plan (honest users)"),
]
_HONEST_ONLY_ROWS = {"honest_users", "mse_total_honest_only"}
_FLAG_NAMES = {"honest fraction": "--honest-fraction", "sigma": "--sigma", "precision": "--precision", "n": "--n",
               "eps": "--eps", "delta": "--delta"}
_GAMMA_HELP = ("Privacy must hold whenever at least ceil(gamma*n) users follow the protocol, 0 < gamma <= 1: noise "
               "shares calibrated for them, security over them only.")


def _flagged(exc: Exception) -> InvalidParameter:
    """The API's refusal with the parameter name replaced by the user's flag."""
    text = str(exc)
    name, sep, rest = text.partition(": ")
    return InvalidParameter(f"{_FLAG_NAMES[name]}: {rest}" if sep and name in _FLAG_NAMES else text)


def _privacy_options(func: Any) -> Any:
    """--eps and --delta of the DP-summation commands."""
    func = click.option("--delta", type=DELTA_TYPE, required=True, help="Target delta, 1e-300 <= delta < 1.")(func)
    return click.option("--eps", type=FiniteFloat(0.0, 700.0, low_open=True), required=True,
                        help="Target epsilon, 0 < eps <= 700.")(func)


def _robust_options(func: Any) -> Any:
    """--honest-fraction and --sigma of the DP-summation commands."""
    func = click.option("--sigma", type=SIGMA, default=None,
                        help=f"Security floor for the aggregation, 0 < sigma <= {MAX_SIGMA:g} "
                             "[default: what delta needs].")(func)
    return click.option("--honest-fraction", type=FiniteFloat(0.0, 1.0, low_open=True), default=1.0,
                        show_default=True, help=_GAMMA_HELP)(func)


@group.command("dp-sum")
@click.option("--n", type=IntLike(3, 10**12), required=True, help="Number of users, 3 <= n <= 1e12.")
@_privacy_options
@click.option("--precision", type=IntLike(1, 10**9), default=None,
              help="Rounding precision p, 1 <= p <= 1e9 [default: ceil(sqrt n)].")
@_robust_options
@format_option
def dp_sum_cmd(n: int, eps: float, delta: float, precision: int | None, honest_fraction: float, sigma: float | None,
               fmt: str) -> None:
    """Parameter plan for (eps, delta)-DP summation of reals in [0, 1] by split and mix.

    With --honest-fraction gamma the plan stays (eps, delta)-DP whenever at least
    ceil(gamma n) users follow it (robust shuffle privacy, Balcer-Cheu-Joseph-Mao SODA'21
    Definition 2.9): the noise shares are calibrated for the honest users, the BBGN message
    count and sigma are over the honest users only (Ghazi-Manurangsi-Pagh-Velingker
    EUROCRYPT'20, end of Section 1.1), and the error rows show the cost when all n follow.

    \b
    Example:
      shuffle-acct splitmix dp-sum --n 10000 --eps 1 --delta 1e-6
      shuffle-acct splitmix dp-sum --n 10000 --eps 1 --delta 1e-6 --honest-fraction 0.5
    """
    from .dpsum import dp_sum_plan

    try:
        plan = dp_sum_plan(n, eps, delta, precision, honest_fraction, sigma)
    except InvalidParameter as exc:
        raise _flagged(exc) from None
    values = plan.to_dict()
    shown = [r for r in _PLAN_ROWS if (r[0] not in _HONEST_ONLY_ROWS or plan.honest_users < n)
             and (r[0] != "sigma_min" or sigma is not None)]
    rows = [{"quantity": k, "value": values[k], "kind": kind or "exact", "note": note} for k, kind, note in shown]
    # kind before value: the noise descriptions make the value column wide
    columns = [Column("quantity", "quantity"), Column("kind", "kind"), Column("value", "value", kind_key="kind"),
               Column("note", "note")]
    notes = [f"method: {plan.citation}"]
    if plan.honest_users < n:
        notes.insert(0, f"{plan.honest_users} of {n} users honest: users who send arbitrary messages instead of "
                        "dropping out can move the sum arbitrarily (no error bound); privacy is unaffected.")
    report = Report("splitmix dp-sum", "DP summation by split and mix: parameter plan", columns, rows,
                    inputs={"n": n, "eps": eps, "delta": delta, "precision": precision,
                            "honest_fraction": honest_fraction if honest_fraction != 1.0 else None, "sigma": sigma},
                    notes=notes, records=[values])
    emit(report, fmt)


_SOLVE_ROWS: list[tuple[str, str, str]] = [
    ("n", "", "users"),
    ("honest_users", "", "ceil(gamma n)"),
    ("precision", "", "rounding precision p"),
    ("messages", "", "messages per user (BBGN, honest users)"),
    ("bits_per_message", "", "log2 q"),
    ("total_bits_per_user", "", "messages x bits"),
    ("sigma_certified", "lower", "BBGN sigma over the honest users"),
    ("mse_total", "upper", "expected squared error of the sum, all n following"),
    ("rmse_total", "upper", "sqrt(mse_total)"),
    ("rmse_mean", "upper", "rmse_total / n"),
    ("epsilon_check", "upper", "eps re-derived from the plan"),
    ("delta_check", "upper", "delta re-derived from the plan"),
]
_QUESTION = {"n": "smallest n", "precision": "least precision", "messages": "fewest messages per user"}


@group.command("dp-sum-solve")
@click.option("--find", type=click.Choice(["n", "precision", "messages"]), required=True,
              help="Unknown: smallest n (needs --rmse-mean), least precision or fewest messages (need --n).")
@_privacy_options
@click.option("--mse", type=FiniteFloat(0.0, None, low_open=True), default=None,
              help="Target expected squared error of the sum (mse_total of dp-sum), > 0.")
@click.option("--rmse", type=FiniteFloat(0.0, None, low_open=True), default=None,
              help="Target root mean squared error of the sum (rmse_total of dp-sum), > 0.")
@click.option("--rmse-mean", type=FiniteFloat(0.0, None, low_open=True), default=None,
              help="Target root mean squared error of the mean (rmse_mean of dp-sum), > 0.")
@click.option("--n", type=IntLike(3, 10**12), default=None,
              help="Number of users, 3 <= n <= 1e12 (with --find precision or messages).")
@click.option("--precision", type=IntLike(1, 10**9), default=None,
              help="Fixed rounding precision with --find n, 1 <= p <= 1e9 [default: ceil(sqrt n) at each n].")
@_robust_options
@format_option
def dp_sum_solve_cmd(find: str, eps: float, delta: float, mse: float | None, rmse: float | None,
                     rmse_mean: float | None, n: int | None, precision: int | None, honest_fraction: float,
                     sigma: float | None, fmt: str) -> None:
    """Inverse questions for dp-sum: smallest n, least precision or fewest messages for a
    target error at a target (eps, delta).

    The answer's plan meets the target and the value one step less does not (both
    computed by dp-sum); every smaller value is excluded by the forward computation or a
    proved monotone lower bound of the error (kind exact), else the answer is an upper bound.

    \b
    Example:
      shuffle-acct splitmix dp-sum-solve --find n --eps 1 --delta 1e-6 --rmse-mean 0.001
      shuffle-acct splitmix dp-sum-solve --find precision --n 10000 --eps 1 --delta 1e-6 --rmse 1.6
      shuffle-acct splitmix dp-sum-solve --find messages --n 1e9 --eps 0.5 --delta 1e-9 --mse 8.01
    """
    from .dpsum_solve import solve_dp_sum

    targets = {"mse": mse, "rmse": rmse, "rmse_mean": rmse_mean}
    given = [k for k, t in targets.items() if t is not None]
    if len(given) != 1:
        raise click.UsageError("give exactly one target: --mse, --rmse or --rmse-mean")
    metric = given[0]
    target = targets[metric]
    assert target is not None
    if find == "n" and n is not None:
        raise click.UsageError("--n is the unknown with --find n; give --rmse-mean only")
    if find != "n" and n is None:
        raise click.UsageError(f"--find {find} needs --n")
    if find != "n" and precision is not None:
        raise click.UsageError(f"--precision cannot be given with --find {find} (it is solved for)")
    try:
        sol = solve_dp_sum(find, eps, delta, target, metric, n=n, precision=precision,
                           honest_fraction=honest_fraction, sigma=sigma)
    except InvalidParameter as exc:
        raise _flagged(exc) from None
    at, below = sol.plan.to_dict(), sol.below.to_dict() if sol.below is not None else {}
    step = "precision" if find == "messages" else find
    rows = [{"quantity": f"answer: {_QUESTION[find]}", "value": sol.answer, "below": None, "kind": sol.kind,
             "note": sol.certificate}]
    rows += [{"quantity": k, "value": at[k], "below": below.get(k), "kind": kind or "exact", "note": note}
             for k, kind, note in _SOLVE_ROWS if k != "honest_users" or sol.plan.honest_users < sol.plan.n]
    columns = [Column("quantity", "quantity"), Column("value", "at answer", kind_key="kind"),
               Column("below", f"{step} - 1", kind_key="kind"), Column("kind", "kind"), Column("note", "note")]
    flag = {"mse": "mse_total", "rmse": "rmse_total", "rmse_mean": "rmse_mean"}[metric]
    notes = [f"target met: {flag} = {round_directed(sol.achieved, 'upper')} <= {target:g} at {step} = {getattr(sol.plan, step)}"]
    if sol.below is not None and sol.below_achieved is not None:
        notes.append(f"one step less: {step} = {sol.below_value} gives {flag} = "
                     f"{round_directed(sol.below_achieved, 'lower')} > {target:g}")
    else:
        notes.append(f"{step} = {getattr(sol.plan, step)} is the smallest value allowed")
    notes.append(f"method: {sol.plan.citation}")
    report = Report("splitmix dp-sum-solve", f"DP summation by split and mix: {_QUESTION[find]} for a target {flag}",
                    columns, rows,
                    inputs={"find": find, "eps": eps, "delta": delta, metric: target, "n": n, "precision": precision,
                            "honest_fraction": honest_fraction if honest_fraction != 1.0 else None, "sigma": sigma},
                    notes=notes, records=[sol.to_dict()])
    emit(report, fmt)

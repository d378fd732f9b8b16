"""``shuffle-acct frequency``: both sides of the trade-off for frequency estimation with a
shuffled local randomizer -- the central epsilon (:mod:`..api`) and the error of the standard
unbiased estimator (:mod:`..accuracy`); and the inverse question, the smallest n for a target
l_inf error at a target (eps, delta)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from .. import accuracy
from .. import validation as v
from ..output import Column, Report, render, round_directed
from ..randomizers import Randomizer
from ..results import Bound, warnings_by_method
from .params import ALPHABET, DELTA, EPS0, EPS_POSITIVE, USERS, RangeType, format_option
from .randomizer_options import build_randomizer, randomizer_options

#: quantities whose value is an error in frequency units (also shown in counts: value x n)
_ERRORS = ("E l2", "l_inf")


def _row(b: Bound, n: int | None) -> dict[str, Any]:
    counts = b.value * n if (n is not None and b.value is not None and b.quantity in _ERRORS) else None
    return {"quantity": b.quantity, "value": b.value, "kind": b.kind, "method": b.method, "counts": counts,
            "validity": b.validity}


def _report(bounds: list[Bound], n: int | None, inputs: dict[str, Any], notes: list[str]) -> Report:
    columns = [Column("quantity", "quantity"), Column("value", "value", kind_key="kind"), Column("kind", "kind"),
               Column("counts", "in counts (x n)", kind_key="kind"), Column("method", "method")]
    return Report(
        command="frequency",
        title="shuffle-acct frequency",
        columns=columns,
        rows=[_row(b, n) for b in bounds],
        inputs={key: val for key, val in inputs.items() if val is not None},
        notes=notes,
        warnings=warnings_by_method(bounds),
        records=[b.to_dict() for b in bounds],
        csv_columns=columns + [Column("validity", "validity")],
    )


def _forward_notes(rep: accuracy.FrequencyReport) -> list[str]:
    err = rep.error
    notes = [
        "variances and E l2^2 are exact for the estimator "
        f"({err.estimator}); errors are in frequency units (fractions of n), 'in counts' = value x n.",
        f"l_inf: {err.linf.validity}; tail bound: {err.linf.method}.",
    ]
    others = rep.epsilon.details.get("all")
    if isinstance(others, dict) and len(others) > 1:
        shown = ", ".join(f"{m} {round_directed(x, 'upper') if x is not None else 'n/a'}" for m, x in others.items())
        notes.append(f"central epsilon: least certified upper bound of {shown}.")
    if rep.eps0_search is not None:
        d = rep.eps0_search.details
        further = (f"eps0 = {d['next_eps0']:.9g} gives delta {d['next_delta']:.6g}" if "next_eps0" in d
                   else "none within the randomizer family's range")
        notes.append(f"largest eps0 meeting the target: certified delta at it {d['certified_delta']:.6g} "
                     f"<= {rep.delta:g} ({d['certified_by']}); one step further: {further}.")
    notes.append(f"comparator: {accuracy.FMT21_STATEMENT}")
    return notes


@click.command("frequency")
@click.option("--n", "n", type=USERS, default=None,
              help="Number of users (1 to 1e12); omit with --target-error (then n is the answer).")
@click.option("--eps0", type=EPS0, default=None,
              help="Local randomizer's epsilon (0 < eps0 <= 700; the named randomizers accept up to 50). "
                   "Omit it with --randomizer-file, or give a target --eps instead.")
@click.option("--eps", "eps", type=EPS_POSITIVE, default=None,
              help="Target central epsilon (0 < eps <= 700): use the largest eps0 meeting (eps, delta); "
                   "with --target-error, the privacy target.")
@click.option("--delta", type=DELTA, default=1e-6, show_default=True, help="Central delta (1e-300 <= delta < 1).")
@click.option("--beta", type=RangeType(accuracy.BETA), default=0.05, show_default=True,
              help="The l_inf error bound holds with probability at least 1 - beta (0 < beta < 1).")
@click.option("--k", type=ALPHABET, default=None, help="Domain size of --randomizer (2 <= k <= 1e9).")
@randomizer_options
@click.option("--method", "-m", type=click.Choice(list(accuracy.METHOD_CHOICES)), default="best", show_default=True,
              help="Privacy analysis: 'best' takes the least certified upper bound of blanket, stronger-clones, "
                   "clones (and krr for k-RR). blanket is the slow one: with a target --eps or --target-error it "
                   "runs at every step of the search (minutes for sue/oue/olh/hadamard/subset); "
                   "-m stronger-clones answers in about a second.")
@click.option("--target-error", "target_error", type=RangeType(accuracy.TARGET_ERROR), default=None,
              help="Inverse question: the smallest n whose l_inf error bound (frequency units, 0 < error < 1) "
                   "at 1 - beta is at most this, at the target --eps and --delta (with --eps0: that eps0; "
                   "without: the eps0 chosen per n).")
@click.option("--rtol", type=RangeType(v.RealRange("rtol", 1e-8, 1e-2)), default=None, show_default="1e-4",
              help="Relative resolution of the eps0 search of a target --eps without --target-error (1e-8 to 0.01).")
@format_option
def frequency_cmd(n: int | None, eps0: float | None, eps: float | None, delta: float, beta: float, k: int | None,
                  randomizer_name: str | None, g: int | None, d: int | None, randomizer_file: str | None,
                  method: str, target_error: float | None, rtol: float | None, fmt: str) -> None:
    """Frequency estimation with a shuffled local randomizer: the central epsilon (upper) and
    the error of the standard unbiased estimator -- exact per-bin variance and expected l2
    error, and an l_inf bound holding with probability 1 - beta (upper) -- or the smallest n
    for a target l_inf error at a target (eps, delta).

    \b
    Examples:
      shuffle-acct frequency --randomizer krr --k 10 --eps0 2 --n 100000 -m stronger-clones
      shuffle-acct frequency --randomizer oue --k 100 --eps 0.5 --n 100000 -m stronger-clones
      shuffle-acct frequency --randomizer krr --k 10 --eps 0.5 --target-error 0.01 -m stronger-clones
    """
    if not (randomizer_name or randomizer_file):
        raise click.UsageError("frequency estimation needs --randomizer NAME (with --k) or --randomizer-file F")
    if randomizer_name and k is None:
        raise click.UsageError(f"--randomizer {randomizer_name} needs --k (the domain size, an integer >= 2)")
    if rtol is not None and (eps is None or target_error is not None):
        raise click.UsageError("--rtol sets the resolution of the eps0 search of a target --eps (without "
                               "--target-error); it does nothing here")
    if target_error is not None:
        _inverse(n, eps0, eps, delta, beta, k, randomizer_name, g, d, randomizer_file, method, target_error, fmt)
        return
    if n is None:
        raise click.UsageError("Missing option '--n' (required unless --target-error is given).")
    if eps is not None and eps0 is not None:
        raise click.UsageError("give --eps0 (the local randomizer) or a target --eps, not both")
    if eps is not None:
        if randomizer_file:
            raise click.UsageError("a --randomizer-file has a fixed eps0: a target --eps needs a named --randomizer")
        build_randomizer(1.0, k, randomizer_name, g, d, None)  # validates the names and parameters
        factory = accuracy.named_factory(randomizer_name, k=k, g=g, d=d)  # type: ignore[arg-type]
        rep = accuracy.frequency(None, n, delta, beta, method, eps=eps, factory=factory,
                                 rtol=1e-4 if rtol is None else rtol)
    else:
        r, _ = build_randomizer(eps0, k, randomizer_name, g, d, randomizer_file)
        assert r is not None
        rep = accuracy.frequency(r, n, delta, beta, method)
    inputs = {"randomizer": rep.randomizer.describe(), "eps0": rep.randomizer.eps0, "n": n, "delta": delta,
              "beta": beta, "method": method, "eps": eps}
    report = _report(list(rep.bounds()), n, inputs, _forward_notes(rep))
    click.echo(render(report, fmt), nl=False)


def _inverse(n: int | None, eps0: float | None, eps: float | None, delta: float, beta: float, k: int | None,
             randomizer_name: str | None, g: int | None, d: int | None, randomizer_file: str | None, method: str,
             target_error: float, fmt: str) -> None:
    if n is not None:
        raise click.UsageError("--target-error asks for n: do not give --n")
    if eps is None:
        raise click.UsageError("--target-error needs the privacy target --eps (and --delta)")
    fixed: Randomizer | None = None
    if randomizer_file:
        fixed, eps0 = build_randomizer(eps0, k, None, None, None, randomizer_file)
    else:
        build_randomizer(eps0 if eps0 is not None else 1.0, k, randomizer_name, g, d, None)
    factory: Callable[[float], Randomizer]
    if fixed is not None:
        keep = fixed
        factory = lambda _e0: keep  # noqa: E731 - the file's randomizer, whatever eps0 the search asks
    else:
        factory = accuracy.named_factory(randomizer_name, k=k, g=g, d=d)  # type: ignore[arg-type]
    answer = accuracy.smallest_n(factory, target_error, eps, delta, beta, method, eps0)
    found = int(answer.value)  # type: ignore[arg-type]
    dd = answer.details
    r = factory(dd["eps0"])
    forward = accuracy.frequency(r, found, delta, beta, method)
    prev = ("none: n = 1 is the smallest number of users" if "previous_n" not in dd else
            f"n = {dd['previous_n']}: " + (
                "no eps0 meets the error target" if dd["previous_eps0"] is None else
                f"eps0 = {dd['previous_eps0']:.9g} gives l_inf {dd['previous_linf_error']:.6g}"
                + (f", delta {dd['previous_delta']:.6g}" if dd.get("previous_delta") is not None else "")))
    notes = [
        f"answer re-checked by the forward computation: at n = {found}, eps0 = {dd['eps0']:.9g}: l_inf bound "
        f"{dd['linf_error']:.6g} <= {target_error:g} and delta at eps = {eps:g}: {dd['certified_delta']:.6g} "
        f"<= {delta:g} ({dd['certified_by']}).",
        f"one user fewer: {prev}.",
        "without --eps0 the eps0 at each n is the least one meeting the error target (to 1e-6 relative); "
        "the answer is an upper bound on the smallest n of these analyses.",
    ]
    stepped = dd.get("eps0_stepped_defaults") or []
    if stepped:
        flags = " / ".join(f"--{p}" for p in stepped)
        notes[-2:] = [
            f"one user fewer: {prev} (that eps0 only: another may meet both).",
            f"warning: the default {', '.join(stepped)} of {randomizer_name} changes with eps0 in steps, so the l_inf "
            "bound is not monotone in eps0 and the eps0 found at each n need not be the least: fewer users may "
            f"suffice with another eps0 (the answer is an upper bound; fix {flags} for a search that is exact in eps0).",
        ]
    notes += _forward_notes(forward)
    inputs = {"randomizer": r.describe(), "target_error": target_error, "eps": eps, "delta": delta, "beta": beta,
              "method": method, "eps0": eps0}
    report = _report([answer, *forward.bounds()], found, inputs, notes)
    click.echo(render(report, fmt), nl=False)

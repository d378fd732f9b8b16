"""``shuffle-acct pure …``: thin click layer over :mod:`.count` (imported inside the
commands, so that ``--help`` stays fast)."""

from __future__ import annotations

from typing import Any

import click

from ...plugin_api import (
    EPS_POSITIVE,
    USERS,
    Column,
    FiniteFloat,
    IntLike,
    Report,
    emit,
    format_option,
    round_directed,
)

RHO = FiniteFloat(1e-9, 0.5)
EPS_HELP = "Target epsilon of the pure-DP protocol, 0 < eps <= 700."

COLUMNS = [
    Column("source", "source"),
    Column("eps_prime", "eps'"),
    Column("q", "q"),
    Column("s", "s"),
    Column("lambda", "lambda", kind_key="lambda_kind"),
    Column("condition7", "Cond. 7"),
    Column("mse_bound", "MSE bound (L11)", kind_key="upper_kind"),
    Column("mse_factor", "MSE / Var(DLap(eps))", kind_key="upper_kind"),
    Column("expected_messages_x1", "E[msgs/user] exact", kind_key="exact_kind"),
    Column("lemma12_leading", "L12: 2s+1+lambda/n"),
    Column("verify", "check: max-div"),
]


def _row(count: Any, p: Any, verify: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    rec = p.to_dict()
    row = dict(rec, condition7="holds" if p.satisfies_condition7 else "FAILS", upper_kind="upper",
               exact_kind="exact", lambda_kind="upper")
    if verify:
        v = count.verify(p)
        rec["verify"] = v.to_dict()
        row["verify"] = f"{v.max_divergence:.6f} {'<=' if v.holds else '>'} {p.eps:g}"
    return row, rec


@click.group(name="pure")
def group() -> None:
    """Pure-DP shuffle counting (Ghazi, Kumar, Manurangsi: pure-DP aggregation in the shuffle model).

    \b
    Examples:
      shuffle-acct pure count --eps 1 --n 1e6 --rho 0.5
      shuffle-acct pure count --eps 1 --n 1e4 --verify
      shuffle-acct pure check --eps 1 --n 1e4 --eps-prime 0.9 --q 1e-5 --s 300 --lam 20000
    """


@group.command("count")
@click.option("--eps", type=EPS_POSITIVE, required=True, help=EPS_HELP)
@click.option("--n", "n", type=USERS, required=True, help="Number of users, 1 <= n <= 1e12.")
@click.option("--rho", type=RHO, default=0.5, show_default=True, help="Target MSE factor 1 + rho, 1e-9 <= rho <= 1/2.")
@click.option("--verify", is_flag=True, help="Check: exact max-divergence of the two views on a large window.")
@format_option
def count_cmd(eps: float, n: int, rho: float, verify: bool, fmt: str) -> None:
    """Condition 7 parameters by Theorem 6's rule and by the message optimiser.

    \b
    Example:
      shuffle-acct pure count --eps 1 --n 1e6 --rho 0.5
    """
    from . import count

    rule = count.theorem6(eps, n, rho)
    best = count.optimise(eps, n, rho)
    rows, records = [], []
    for p in (rule, best):
        row, rec = _row(count, p, verify)
        rows.append(row)
        records.append(rec)
    target = (1 + rho) * rule.dlap_optimum
    warnings = []
    if rule.mse_bound > target:
        warnings.append(f"Theorem 6's rule gives a Lemma 11 MSE bound {rule.mse_bound:.6g} above (1+rho)Var(DLap(eps)) "
                        f"= {target:.6g} (the q^2 n(n-1) term is not negligible here)")
    notes = [
        (f"Var(DLap(eps)) = {rule.dlap_optimum:.6g} (central discrete Laplace optimum); "
         f"target MSE (1+rho)x = {round_directed(target, 'upper')}"),
        "E[msgs/user] exact = (1-q)(2s+1) + 2/(n(e^eps'-1)) + 2 lambda/n for a user holding 1 (flooding counts twice)",
        f"messages: optimiser / Theorem 6 = {best.expected_messages(1) / rule.expected_messages(1):.4g}",
        "citation: " + count.CITATION + ": Condition 7, Theorem 6, Lemmas 8, 11, 12",
    ]
    if verify:
        notes.append("check: max over a finite window of |ln P1/P0| for the reduced views (Lemma 5); "
                     "a numerical check of the parameters, not a proof")
    report = Report("pure count", "Pure-DP shuffle counting", COLUMNS, rows,
                    inputs={"eps": eps, "n": n, "rho": rho}, notes=notes, warnings=warnings, records=records)
    emit(report, fmt)


@group.command("check")
@click.option("--eps", type=EPS_POSITIVE, required=True, help=EPS_HELP)
@click.option("--n", "n", type=USERS, required=True, help="Number of users, 1 <= n <= 1e12.")
@click.option("--eps-prime", type=EPS_POSITIVE, required=True,
              help="eps' of the geometric noise, 0 < eps' <= 700 (Condition 7 needs eps' < eps).")
@click.option("--q", type=FiniteFloat(0.0, 1.0, low_open=True, high_open=True), required=True,
              help="Probability that a user sends no input messages, 0 < q < 1.")
@click.option("--s", "s", type=IntLike(1, 10**9), required=True, help="Copies of +1 and -1 each user sends, 1 <= s <= 1e9.")
@click.option("--lam", type=FiniteFloat(0.0, 1e15, low_open=True), required=True,
              help="Total Poisson flooding mean lambda, 0 < lambda <= 1e15.")
@click.option("--verify", is_flag=True, help="Also evaluate the windowed max-divergence (a check).")
@format_option
def check_cmd(eps: float, n: int, eps_prime: float, q: float, s: int, lam: float, verify: bool, fmt: str) -> None:
    """Check given (eps', q, s, lambda) against Condition 7; exit 3 if it fails.

    \b
    Example:
      shuffle-acct pure check --eps 1 --n 1e4 --eps-prime 0.9 --q 1e-5 --s 300 --lam 20000
    """
    from . import count

    p = count.PureParams(eps, n, eps_prime, q, s, lam, "given")
    rows = [dict(c, lhs=float(c["lhs"]), rhs=float(c["rhs"]), holds=str(c["holds"])) for c in p.condition7()]
    cols = [Column("condition", "condition"), Column("lhs", "value"), Column("rhs", "required"), Column("holds", "holds")]
    notes = [(f"Lemma 11 MSE bound {p.mse_bound:.6g} = {p.mse_factor:.6g} x Var(DLap(eps)); "
              f"exact E[messages/user] (x=1) {p.expected_messages(1):.6g}")]
    rec = p.to_dict()
    if verify and p.eps_prime < p.eps:
        v = count.verify(p)
        rec["verify"] = v.to_dict()
        notes.append(f"check: windowed max-divergence {v.max_divergence:.6f} vs eps {eps:g} "
                     f"({'holds' if v.holds else 'EXCEEDS'}; window m <= {v.window_max}, mass outside <= {v.mass_outside:.3g})")
    report = Report("pure check", "Condition 7 check", cols, rows,
                    inputs={"eps": eps, "n": n, "eps_prime": eps_prime, "q": q, "s": s, "lambda": lam},
                    notes=notes, records=[rec])
    emit(report, fmt)
    if not p.satisfies_condition7:
        click.get_current_context().exit(3)

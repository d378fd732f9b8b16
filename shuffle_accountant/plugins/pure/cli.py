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
    """Pure-DP shuffle counting, sums, histograms (Ghazi, Kumar, Manurangsi: pure-DP aggregation in the shuffle model).

    \b
    Examples:
      shuffle-acct pure count --eps 1 --n 1e6 --rho 0.5
      shuffle-acct pure count --eps 1 --n 1e4 --verify
      shuffle-acct pure check --eps 1 --n 1e4 --eps-prime 0.9 --q 1e-5 --s 300 --lam 20000
      shuffle-acct pure sum --eps 1 --n 1e6 --bits 8
      shuffle-acct pure histogram --eps 1 --n 1e4 --k 100
      shuffle-acct pure plan --task count --find n --eps 1 --rel-error 0.01
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


# ---------------------------------------------------------------------------------------
# Real summation, histograms (Corollaries 3 and 4) and the inverse questions
# ---------------------------------------------------------------------------------------

ROW_COLUMNS = [
    Column("quantity", "quantity"),
    Column("value", "value", kind_key="kind"),
    Column("kind", "kind"),
    Column("method", "method"),
]
PLAN_RHO = FiniteFloat(1e-9, 1e6)
RULE_HELP = "Per-run parameter rule: optimiser (fewest messages, default) or theorem6 (the paper's rule)."
CHECK_METHOD = "check: max of the exact log-ratio over a finite window (a lower bound on d_inf; Lemma 8 proves <= eps)"


def _qrow(quantity: str, value: Any, kind: str, method: str) -> dict[str, Any]:
    return {"quantity": quantity, "value": value, "kind": kind, "method": method}


def _run_line(label: str, p: Any) -> str:
    return (f"{label}: eps={p.eps:.6g}, eps'={p.eps_prime:.6g}, q={p.q:.6g}, s={p.s}, lambda={p.lam:.6g}, "
            f"Condition 7 {'holds' if p.satisfies_condition7 else 'FAILS'}, "
            f"E[msgs] input 1 / 0 = {p.expected_messages(1):.6g} / {p.expected_messages(0):.6g}")


def _sum_rows(sp: Any, verify: bool) -> tuple[list[dict[str, Any]], list[str], dict[str, Any]]:
    """Rows, notes and the JSON record of a real-summation plan."""
    import math

    rec = sp.to_dict()
    all_hold = all(p.satisfies_condition7 for p in sp.plans)
    rows = [
        _qrow("grid M = 2^L - 1 (step range/M)", sp.grid, "exact", f"{sp.bits} bits, randomized rounding"),
        _qrow("eps: sum of the bit budgets", math.fsum(sp.bit_eps), "upper",
              f"basic composition of Lemma 8 over the bits (split: {sp.split}); Condition 7 "
              + ("holds for every bit" if all_hold else "FAILS for some bit")),
        _qrow("RMSE, any data set in [0, range]", sp.rmse_bound, "upper",
              "noise + dropped inputs + randomized rounding (Minkowski)"),
        _qrow("RMSE, every user holds range", math.sqrt(sp.mse_at_max), "exact", "no rounding error, every bit set"),
        _qrow("rounding error std (sqrt(n) step/2)", math.sqrt(sp.rounding_variance_bound), "upper",
              "randomized rounding, variance <= 1/4 step^2 per user"),
        _qrow("central discrete Laplace RMSE, same grid", math.sqrt(sp.central_dlap_mse), "exact",
              "comparator: DLap(eps/M) on the rounded integer sum, no rounding error"),
        _qrow("expected messages per user (x = range)", sp.expected_messages(True), "exact",
              "every bit set: the most messages"),
        _qrow("expected messages per user (x = 0)", sp.expected_messages(False), "exact", "no bit set: the fewest"),
        _qrow("bits per message", max(1, math.ceil(math.log2(sp.bits))) + 1, "exact", "bit label + sign"),
    ]
    notes = [_run_line(f"bit {j} (weight 2^{j})", p) for j, p in enumerate(sp.plans)]
    if verify:
        c = sp.check()
        rec["check"] = c.to_dict()
        if c.max_divergence is None:
            j, why = c.unchecked[0]
            rows.append(_qrow("max-divergence (windowed check)", None, "not certified",
                              f"bit {j}: {why}"))
        else:
            rows.append(_qrow("max-divergence: sum_j max(d10_j, d01_j)", c.max_divergence, "lower",
                              CHECK_METHOD + ("; holds" if c.holds else "; EXCEEDS eps")))
    return rows, notes, rec


def _hist_rows(hp: Any, verify: bool) -> tuple[list[dict[str, Any]], list[str], dict[str, Any]]:
    """Rows, notes and the JSON record of a histogram plan."""
    rec = hp.to_dict()
    lo, hi = hp.linf_bracket
    b = hp.bucket
    rows = [
        _qrow("eps per bucket run (eps/2)", b.eps, "exact",
              "Corollary 4: one user changes two runs; Condition 7 " + ("holds" if b.satisfies_condition7 else "FAILS")),
        _qrow("expected l_inf error, any data set", hi, "upper", "E max_b |DLap_b(eps')| + n q"),
        _qrow("expected l_inf error, any data set", lo, "lower", "E max_b |DLap_b(eps')| (Anderson: shifts only add)"),
        _qrow("MSE of one bucket (Lemma 11)", b.mse_bound, "upper", "Var(DLap(eps')) + qn + q^2 n(n-1)"),
        _qrow("expected messages per user", hp.expected_messages(), "exact", "one run with input 1, k-1 with input 0"),
        _qrow("bits per message", _label_bits(hp.k) + 1, "exact", "bucket label + sign"),
    ]
    notes = [_run_line("every bucket run", b)]
    if verify:
        total, allowance, v = hp.check()
        rec["check"] = dict(v.to_dict(), histogram_max_divergence=total, histogram_allowance=allowance,
                            holds_histogram=total + allowance <= hp.eps)
        rows.append(_qrow("max-divergence: d10 + d01 of one run", total, "lower",
                          CHECK_METHOD + ("; holds" if total + allowance <= hp.eps else "; EXCEEDS eps")))
    return rows, notes, rec


def _label_bits(k: int) -> int:
    return max(1, (k - 1).bit_length())


@group.command("sum")
@click.option("--eps", type=EPS_POSITIVE, required=True, help=EPS_HELP)
@click.option("--n", "n", type=USERS, required=True, help="Number of users, 1 <= n <= 1e12.")
@click.option("--bits", type=IntLike(1, 40), required=True, help="Bits L of the fixed-point grid (M = 2^L - 1), 1 <= L <= 40.")
@click.option("--range", "value_range", type=FiniteFloat(0.0, 1e15, low_open=True), default=1.0, show_default=True,
              help="Inputs lie in [0, range], 0 < range <= 1e15.")
@click.option("--rho", type=PLAN_RHO, default=0.5, show_default=True,
              help="MSE slack of each bit's run: Lemma 11 <= (1+rho)Var(DLap(eps_j)), 1e-9 <= rho <= 1e6.")
@click.option("--split", type=click.Choice(["mse", "uniform"]), default="mse", show_default=True,
              help="Budget split over the bits: mse (least noise variance) or uniform (eps/L each).")
@click.option("--rule", type=click.Choice(["optimiser", "theorem6"]), default="optimiser", show_default=True,
              help=RULE_HELP)
@click.option("--verify", is_flag=True, help="Check: exact windowed max-divergence of every bit's run, composed.")
@format_option
def sum_cmd(eps: float, n: int, bits: int, value_range: float, rho: float, split: str, rule: str, verify: bool,
            fmt: str) -> None:
    """Real summation (Corollary 3): the counting protocol bit by bit, budgets split.

    \b
    Example:
      shuffle-acct pure sum --eps 1 --n 1e6 --bits 8
    """
    from . import realsum

    if rule == "theorem6" and rho > 0.5:
        raise click.BadParameter("is above 0.5, the largest Theorem 6 allows (use --rule optimiser)", param_hint="'--rho'")
    sp = realsum.real_sum(eps, n, bits, value_range, rho, split, rule)
    rows, notes, rec = _sum_rows(sp, verify)
    notes += [
        "the paper states Corollary 3 asymptotically (no bits, no split): L and the split are this tool's "
        "choices, printed above; estimate = (range/M) sum_j 2^j (message sum of run j)",
        "citation: " + realsum.CITATION,
    ]
    report = Report("pure sum", "Pure-DP real summation, bit by bit", ROW_COLUMNS, rows,
                    inputs={"eps": eps, "n": n, "bits": bits, "range": value_range, "rho": rho, "split": split,
                            "rule": rule}, notes=notes, records=[rec])
    emit(report, fmt)


@group.command("histogram")
@click.option("--eps", type=EPS_POSITIVE, required=True, help=EPS_HELP)
@click.option("--n", "n", type=USERS, required=True, help="Number of users, 1 <= n <= 1e12.")
@click.option("--k", "k", type=IntLike(2, 10**9), required=True, help="Number of buckets, 2 <= k <= 1e9.")
@click.option("--rho", type=PLAN_RHO, default=0.5, show_default=True,
              help="MSE slack of each bucket's run: Lemma 11 <= (1+rho)Var(DLap(eps/2)), 1e-9 <= rho <= 1e6.")
@click.option("--rule", type=click.Choice(["optimiser", "theorem6"]), default="optimiser", show_default=True,
              help=RULE_HELP)
@click.option("--verify", is_flag=True, help="Check: exact windowed max-divergence of a user moving between two buckets.")
@format_option
def histogram_cmd(eps: float, n: int, k: int, rho: float, rule: str, verify: bool, fmt: str) -> None:
    """Histograms (Corollary 4): one eps/2 counting run per bucket.

    \b
    Example:
      shuffle-acct pure histogram --eps 1 --n 1e4 --k 100
    """
    from . import histogram

    if rule == "theorem6" and rho > 0.5:
        raise click.BadParameter("is above 0.5, the largest Theorem 6 allows (use --rule optimiser)", param_hint="'--rho'")
    hp = histogram.histogram(eps, n, k, rho, rule)
    rows, notes, rec = _hist_rows(hp, verify)
    notes.append("citation: " + histogram.CITATION)
    report = Report("pure histogram", "Pure-DP histogram, one counting run per bucket", ROW_COLUMNS, rows,
                    inputs={"eps": eps, "n": n, "k": k, "rho": rho, "rule": rule}, notes=notes, records=[rec])
    emit(report, fmt)


FIND_HELP = ("What to find: n (smallest n with error <= rel-error * n), eps (smallest eps with error <= --error), "
             "rho (largest slack, i.e. fewest messages, with error <= --error), bits (sum: fewest bits).")


def _plan_usage(task: str, find: str, given: dict[str, Any]) -> None:
    """Refuse missing or meaningless options with one line (exit 2)."""
    need = {"n": ["eps", "rel_error"], "eps": ["n", "error"], "rho": ["eps", "n", "error"],
            "bits": ["eps", "n", "error"]}[find]
    if task == "histogram":
        need = need + ["k"]
    if task == "sum" and find != "bits":
        need = need + ["bits"]
    refuse = {"n": ["n", "error"], "eps": ["eps", "rel_error"], "rho": ["rho", "rel_error"],
              "bits": ["bits", "rel_error"]}[find]
    refuse = refuse + [o for o, t in (("k", "histogram"), ("bits", "sum"), ("range", "sum"), ("split", "sum"))
                       if t != task]
    flag = {"rel_error": "--rel-error", "error": "--error", "range": "--range"}
    if find == "bits" and task != "sum":
        raise click.UsageError("--find bits applies to --task sum only")
    for o in refuse:
        if given.get(o) is not None:
            raise click.UsageError(f"{flag.get(o, '--' + o)} does not apply to --task {task} --find {find}")
    for o in need:
        if given.get(o) is None:
            raise click.UsageError(f"--task {task} --find {find} needs {flag.get(o, '--' + o)}")


@group.command("plan")
@click.option("--task", type=click.Choice(["count", "sum", "histogram"]), required=True, help="The protocol to plan.")
@click.option("--find", "find", type=click.Choice(["n", "eps", "rho", "bits"]), required=True, help=FIND_HELP)
@click.option("--eps", type=EPS_POSITIVE, default=None, help=EPS_HELP)
@click.option("--n", "n", type=USERS, default=None, help="Number of users, 1 <= n <= 1e12.")
@click.option("--error", "error", type=FiniteFloat(0.0, 1e300, low_open=True), default=None,
              help="Target error (RMSE for count and sum, expected l_inf for histogram), > 0.")
@click.option("--rel-error", "rel_error", type=FiniteFloat(0.0, 1.0, low_open=True, high_open=True), default=None,
              help="Target error relative to n (to n*range for sums), 0 < rel-error < 1 (--find n).")
@click.option("--k", "k", type=IntLike(2, 10**9), default=None, help="Histogram buckets, 2 <= k <= 1e9.")
@click.option("--bits", type=IntLike(1, 40), default=None, help="Sum: bits of the grid, 1 <= L <= 40.")
@click.option("--range", "value_range", type=FiniteFloat(0.0, 1e15, low_open=True), default=None,
              help="Sum: inputs lie in [0, range], 0 < range <= 1e15 (default 1).")
@click.option("--split", type=click.Choice(["mse", "uniform"]), default=None,
              help="Sum: budget split over the bits, mse (default) or uniform.")
@click.option("--rho", type=PLAN_RHO, default=None,
              help="MSE slack of every run, 1e-9 <= rho <= 1e6 (default 0.5; not with --find rho).")
@click.option("--verify", is_flag=True, help="Also run the windowed max-divergence check on the answer's plan.")
@format_option
def plan_cmd(task: str, find: str, eps: float | None, n: int | None, error: float | None, rel_error: float | None,
             k: int | None, bits: int | None, value_range: float | None, split: str | None, rho: float | None,
             verify: bool, fmt: str) -> None:
    """Inverse questions: smallest n, least eps, fewest messages (rho) or bits for a target error.

    \b
    Example:
      shuffle-acct pure plan --task histogram --find n --eps 1 --k 100 --rel-error 0.01
    """
    from . import inverse

    given = {"eps": eps, "n": n, "error": error, "rel_error": rel_error, "k": k, "bits": bits, "range": value_range,
             "split": split, "rho": rho}
    _plan_usage(task, find, given)
    t = inverse.Task(task, k=k, bits=bits, value_range=1.0 if value_range is None else value_range,
                     split=split or "mse")
    r = 0.5 if rho is None else rho
    if find == "n":
        assert eps is not None and rel_error is not None
        a = inverse.smallest_n(t, eps, rel_error, r)
        label, kind, how = "smallest n", "exact", "n meets the target, n - 1 does not (forward-verified)"
        if task != "count":  # the metric is an upper bound (not attained): the true error may meet it sooner
            kind, how = "upper", ("the certified error bound meets the target at n, not at n - 1 (forward-verified); "
                                  "the true error may meet it sooner")
    elif find == "eps":
        assert n is not None and error is not None
        a = inverse.least_eps(t, n, error, r)
        label, kind, how = "least eps", "upper", "meets the target; 1e-6 relatively less does not (forward-verified)"
    elif find == "rho":
        assert eps is not None and n is not None and error is not None
        a = inverse.largest_rho(t, eps, n, error)
        label, kind, how = "largest rho (fewest messages)", "lower", \
            "meets the target; 1e-6 relatively more does not (forward-verified)"
    else:
        assert eps is not None and n is not None and error is not None
        a = inverse.fewest_bits(t, eps, n, error, r)
        label, kind, how = "fewest bits L", "upper", ("every smaller L evaluated: none has an RMSE bound meeting the "
                                                      "target (the bound is not attained: the true RMSE may meet it)")
    rows = [
        _qrow(label, a.value, kind, how),
        _qrow(f"{a.metric} at the answer", a.error, "upper", "forward computation, any data set"),
        _qrow("target", a.target, "exact", "rel-error * n" + (" * range" if task == "sum" else "")
              if find == "n" else "--error"),
    ]
    if a.neighbour is not None:
        shown = a.neighbour if find in ("n", "bits") else f"{a.neighbour:.10g}"  # enough digits to differ
        rows.append(_qrow(f"one step beyond: {find} =", shown, "exact", a.neighbour_reason))
    rows.append(_qrow("expected messages per user (most)", inverse.messages_of(a.plan), "exact", "at the answer"))
    rec = a.to_dict()
    p = a.plan
    if isinstance(p, inverse.SumPlan):
        more, notes, sub = _sum_rows(p, verify)
    elif isinstance(p, inverse.HistogramPlan):
        more, notes, sub = _hist_rows(p, verify)
    else:
        more = [_qrow("eps'", p.eps_prime, "exact", "optimiser"), _qrow("q", p.q, "exact", "optimiser"),
                _qrow("s", p.s, "exact", "optimiser"), _qrow("lambda", p.lam, "upper", "least allowed, rounded up")]
        notes, sub = [_run_line("counting run", p)], {}
        if verify:
            from . import count

            v = count.verify(p)
            sub = {"check": v.to_dict()}
            more.append(_qrow("max-divergence (windowed check)", v.max_divergence, "lower",
                              CHECK_METHOD + ("; holds" if v.holds else "; EXCEEDS eps")))
    rec["check"] = sub.get("check")
    rows += [dict(row, quantity="plan: " + row["quantity"]) for row in more]
    notes += [f"search: {a.evaluations} forward evaluations (monotone_boundary" + (", scan)" if find == "bits" else ")"),
              "plans: the message optimiser for every counting run (Ghazi, Kumar, Manurangsi, arXiv 2305.17634, "
              "Condition 7, Lemma 11; Corollaries 3 and 4 for sums and histograms)"]
    report = Report("pure plan", f"Pure-DP planning: {label} ({task})", ROW_COLUMNS, rows,
                    inputs={"task": task, "find": find, "eps": eps, "n": n, "error": error, "rel_error": rel_error,
                            "k": k, "bits": bits, "range": value_range, "split": split, "rho": rho},
                    notes=notes, records=[rec])
    emit(report, fmt)

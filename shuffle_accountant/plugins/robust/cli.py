"""``shuffle-acct robust …``: thin click layer over :mod:`.noise`, :mod:`.bitsum`, :mod:`.structures`.

The computation modules (numpy, scipy) are imported inside the commands, so that
``shuffle-acct --help`` and ``shuffle-acct robust --help`` stay fast.
"""

from __future__ import annotations

import math
from typing import Any

import click

from ...plugin_api import (
    DELTA_TYPE,
    EPS,
    EPS_POSITIVE,
    PROBABILITY,
    USERS,
    CertificationError,
    Column,
    FiniteFloat,
    IntLike,
    Report,
    emit,
    format_option,
)

LAWS = ("binomial", "poisson", "negbin", "dlap")
BITSUM_PROTOCOLS = ("lecture", "cheu2019", "bc20")
GAMMA = FiniteFloat(0.0, 1.0, low_open=True)
OPEN_UNIT = FiniteFloat(0.0, 1.0, low_open=True, high_open=True)
PER_USER = FiniteFloat(0.0, 1e12, low_open=True)
TARGET_ERROR = FiniteFloat(0.0, 1e15, low_open=True)
BETA = FiniteFloat(1e-300, 1.0, high_open=True)

BALCER_CHEU_JOSEPH_MAO = "Balcer, Cheu, Joseph, Mao, SODA 2021 (arXiv 2004.09481)"
STEMMER = "Stemmer, lecture notes 'The Shuffle Model' (lecture 8)"

ROW_COLUMNS = [
    Column("quantity", "quantity"),
    Column("value", "value", kind_key="kind"),
    Column("kind", "kind"),
    Column("method", "method"),
]


def _row(quantity: str, value: Any, kind: str, method: str, **extra: Any) -> dict[str, Any]:
    return {"quantity": quantity, "value": value, "kind": kind, "method": method, **extra}


def _one_of(target: float | None, p: float | None) -> None:
    if (target is None) == (p is None):
        raise click.UsageError("give exactly one of --delta (solve) or --p (analyse)")


NO_PARAMETERS = "no certified parameters: privacy target not met or beyond the computation's limits"


def _n_or_target(n: int | None, target_error: float | None, relative: bool = False) -> None:
    if (n is None) == (target_error is None):
        raise click.UsageError("give exactly one of --n (analyse n users) or --target-error (solve for n)")
    if relative and target_error is None:
        raise click.UsageError("--relative applies to --target-error only (it makes the target error / n)")


def _target_options(func: Any) -> Any:
    func = click.option("--relative", is_flag=True, default=False,
                        help="With --target-error: the target is the error divided by n (e.g. 0.001 = 0.1% of n).")(func)
    return click.option("--target-error", "target_error", type=TARGET_ERROR, default=None,
                        help="Solve for n instead of --n: the range of n whose error meets this target "
                             "(0 < E <= 1e15), every end verified by the forward computation.")(func)


def _users_rows(label: str, first: Any, last: Any, kind: str, what: str, error_kind: str = "upper") -> list[dict[str, Any]]:
    """Rows for the two ends of a users range (:func:`.noise.users_for_error`)."""
    unit = " / n" if first.relative else ""
    rows = [
        _row(f"{label}smallest n meeting the target", first.n, kind, "certified search (monotone_boundary), forward-verified"),
        _row(f"{label}{what}{unit} at that n", first.error_at_n / (first.n if first.relative else 1), error_kind,
             "forward computation"),
    ]
    if first.n_failing is not None:
        e = first.error_at_failing
        rows.append(_row(f"{label}n = {first.n_failing} (one fewer)", "misses" if e is None else
                         e / (first.n_failing if first.relative else 1), "not certified" if e is None else error_kind,
                         NO_PARAMETERS if e is None else "forward computation: above the target"))
    if last is None:
        rows.append(_row(f"{label}largest n meeting the target", None, "not applicable",
                         "not searched: error / n falls as n grows"))
        return rows
    rows.append(_row(f"{label}largest n meeting the target", last.n, *_largest_kind(last, error_kind)))
    if last.n_failing is not None:
        e = last.error_at_failing
        rows.append(_row(f"{label}n = {last.n_failing} (one more)", "misses" if e is None else
                         e / (last.n_failing if last.relative else 1), "not certified" if e is None else error_kind,
                         NO_PARAMETERS if e is None else "forward computation: above the target"))
    return rows


def _largest_kind(last: Any, error_kind: str) -> tuple[str, str]:
    """Kind and method of the largest end of a users range. The true range of n contains the
    certified one when the error is an upper bound, so its largest end is a *lower* bound on the
    true largest n; it is exact only for an exact error whose next n is computed and misses."""
    if last.n_failing is None:
        return "lower", "end of the searched range (1e12): meets the target; larger n not searched (at least this)"
    if last.error_at_failing is None:
        return "lower", ("certified search, forward-verified; the next n is beyond what the computation certifies, "
                         "not shown to miss the target (at least this)")
    if error_kind != "exact":
        return "lower", ("certified search, forward-verified; the error there is an upper bound, so the true range "
                         "may reach further (at least this)")
    return "exact", "certified search, forward-verified: the next n misses the target"


def _users_range(noise_mod: Any, error_at: Any, target_error: float, relative: bool) -> tuple[Any, Any | None]:
    try:
        return noise_mod.users_for_error(error_at, target_error, relative=relative)  # type: ignore[no-any-return]
    except CertificationError as exc:
        raise CertificationError(f"--target-error {target_error:g}: {exc}") from None


def _gamma_option(func: Any) -> Any:
    return click.option("--gamma", "--honest-fraction", "gamma", type=GAMMA, default=1.0, show_default=True,
                        help="Guarantee holds whenever at least ceil(gamma*n) users follow the protocol "
                             "(0 < gamma <= 1).")(func)


def _eps_option(func: Any) -> Any:
    return click.option("--eps", type=EPS_POSITIVE, required=True, help="Target epsilon, 0 < eps <= 700.")(func)


def _delta_option(required: bool, help_text: str) -> Any:
    if required:
        return click.option("--delta", "target", type=DELTA_TYPE, required=True,
                            help=f"{help_text} (1e-300 <= delta < 1).")
    return click.option("--delta", "target", type=DELTA_TYPE, default=None, help=f"{help_text} (1e-300 <= delta < 1).")


@click.group(name="robust")
def group() -> None:
    """Robust shuffle privacy: exact accounting of noise summed over honest users.

    \b
    Examples:
      shuffle-acct robust noise --law binomial --n 1e6 --eps 1 --delta 1e-6 --gamma 0.9
      shuffle-acct robust bitsum --n 1e6 --eps 1 --delta 1e-6 --protocol all
      shuffle-acct robust histogram --k 1000 --n 1e6 --eps 1 --delta 1e-6
      shuffle-acct robust distinct --n 1e5 --k 1000 --eps 1 --delta 1e-6 --gamma 0.5
      shuffle-acct robust bitsum --target-error 0.001 --relative --eps 1 --delta 1e-6 --protocol lecture

    \b
    Inverse questions: --target-error E on bitsum, histogram and distinct replaces --n and
    answers the range of n whose error meets E (smallest and largest end, each verified by
    the forward computation against its neighbour).
    """


@group.command("noise")
@click.option("--law", type=click.Choice(LAWS), required=True,
              help="Noise family: binomial, poisson, negbin (Polya) or dlap (discrete Laplace).")
@click.option("--n", "n", type=USERS, required=True, help="Number of users, 1 <= n <= 1e12.")
@_eps_option
@_delta_option(True, "Target delta")
@_gamma_option
@click.option("--trials", type=IntLike(1, 10**6), default=1, show_default=True,
              help="Bernoulli draws per user (binomial); honest users x trials <= 1e12.")
@click.option("--nb-p", type=PROBABILITY, default=0.5, show_default=True,
              help="Success probability of the negative binomial (negbin), 1e-300 <= p < 1.")
@format_option
def noise_cmd(law: str, n: int, eps: float, target: float, gamma: float, trials: int, nb_p: float, fmt: str) -> None:
    """Least noise (exact solver) whose honest-user sum is (eps, delta)-DP.

    \b
    Example:
      shuffle-acct robust noise --law binomial --n 1e6 --eps 1 --delta 1e-6 --gamma 0.9
    """
    from . import noise as noise_mod

    sol = noise_mod.solve_noise(law, n, eps, target, gamma=gamma, trials=trials, nb_p=nb_p)
    h = sol.details["honest_users"]
    rows = [
        _row("solved " + sol.parameter, sol.value, "exact", "exact solver (least noise, verified forward)"),
        _row("one step less noise", sol.infeasible_neighbor, "exact", "exact forward: violates the target"),
        _row("delta(eps) at solution", sol.delta_at_value, "upper", "exact hockey-stick, both directions"),
        _row("delta(eps) one step less", sol.delta_at_neighbor, "lower", "exact hockey-stick, both directions"),
        _row("honest-user noise law", sol.law.describe(), "exact", f"{h} honest users"),
    ]
    all_law = _all_honest_law(noise_mod, law, sol, n, trials, nb_p)
    rows.append(_row("noise std (all n honest)", math.sqrt(all_law.variance), "exact", all_law.describe()))
    warnings: list[str] = []
    if law == "binomial":
        p_rule = 48 * math.log(2 / target) / eps / eps / (h * trials)  # inf, not an error, for tiny eps
        if p_rule <= 0.5:
            d_rule = noise_mod.delta(noise_mod.honest_law("binomial", p_rule, h, trials=trials), eps).upper
            rows.append(_row("paper rule p = 48 ln(2/delta)/(eps^2 gamma n)", p_rule, "exact", f"{STEMMER}, Theorem 2"))
            rows.append(_row("delta(eps) of the paper rule", d_rule, "upper", "exact hockey-stick"))
            rows.append(_row("noise ratio paper/exact", p_rule / sol.value, "estimate", "expected noise bits"))
        else:
            warnings.append(f"paper rule gives p = {p_rule:.3g} > 1/2: not applicable")
    elif law == "dlap":
        rows.append(_row("pure-DP rule a = eps (delta = 0)", eps, "exact",
                         "Ghosh, Roughgarden, Sundararajan, STOC 2009 (geometric mechanism)"))
    else:
        rows.append(_row("published rule", None, "not applicable", "none recovered for this law"))
    report = Report("robust noise", f"Least {law} noise, robust to dropouts", ROW_COLUMNS, rows,
                    inputs={"law": law, "n": n, "eps": eps, "delta": target, "gamma": gamma, "honest": h},
                    notes=[f"binding: {sol.binding}", "citation: " + noise_mod.CITE_EXACT], warnings=warnings)
    emit(report, fmt)


def _all_honest_law(noise_mod: Any, law: str, sol: Any, n: int, trials: int, nb_p: float) -> Any:
    if law == "dlap":
        return noise_mod.NoiseLaw("dlap", size=n * sol.details["per_user_shape"], a=sol.law.a)
    return noise_mod.honest_law(law, sol.value, n, trials=trials, p=nb_p)


@group.command("delta")
@click.option("--law", type=click.Choice(LAWS), required=True,
              help="Noise family: binomial, poisson, negbin (Polya) or dlap (discrete Laplace).")
@click.option("--n", "n", type=USERS, required=True, help="Number of users, 1 <= n <= 1e12.")
@click.option("--eps", type=EPS, required=True, help="Epsilon at which delta is evaluated, 0 <= eps <= 700.")
@click.option("--param", type=PER_USER, required=True,
              help="Per-user noise: Bernoulli p (binomial, 0 < p < 1), Poisson mean, NB shape; dlap: scale a "
                   "(shares 1/ceil(gamma*n)).")
@_gamma_option
@click.option("--design-gamma", type=GAMMA, default=None,
              help="dlap only: the honest fraction the shares were designed for (default: --gamma).")
@click.option("--trials", type=IntLike(1, 10**6), default=1, show_default=True,
              help="Bernoulli draws per user (binomial); honest users x trials <= 1e12.")
@click.option("--nb-p", type=PROBABILITY, default=0.5, show_default=True,
              help="Success probability of the negative binomial (negbin), 1e-300 <= p < 1.")
@format_option
def delta_cmd(law: str, n: int, eps: float, param: float, gamma: float, design_gamma: float | None, trials: int,
              nb_p: float, fmt: str) -> None:
    """Exact delta(eps) of a given per-user noise with ceil(gamma*n) honest users, both directions.

    \b
    Example:
      shuffle-acct robust delta --law binomial --n 1e4 --eps 1 --param 0.003
    """
    from . import noise as noise_mod

    h = noise_mod.honest_count(n, gamma)
    if law == "binomial":
        if param >= 1:
            raise click.BadParameter(f"{param:g} is out of range for --law binomial (accepted: 0 < param < 1)",
                                     param_hint="'--param'")
        if h * trials > 10**12:
            raise CertificationError(f"honest users x --trials = {h} x {trials} exceeds 1e12, the largest binomial "
                                     "size at which the floating-point error was measured")
        central = noise_mod.honest_law(law, param, h, trials=trials)
    elif law == "dlap":
        hd = noise_mod.honest_count(n, design_gamma if design_gamma is not None else gamma)
        if param > 700:
            raise click.BadParameter(f"{param:g} is out of range for --law dlap (accepted: 0 < a <= 700)",
                                     param_hint="'--param'")
        central = noise_mod.NoiseLaw("dlap", size=h / hd, a=param)
    else:
        central = noise_mod.honest_law(law, param, h, p=nb_p)
    try:
        res = noise_mod.delta(central, eps)
    except CertificationError as exc:
        raise CertificationError(f"--param {param:g} with {h} honest users: {exc}") from None
    rows = [
        _row("delta(eps) = max of both directions", res.upper, "upper", "exact hockey-stick (certified end)"),
        _row("delta(eps) lower end", res.lower, "lower", "exact hockey-stick (certified end)"),
        _row("D(Z || Z+1)", res.forward_upper, "upper", "exact, one direction"),
        _row("D(Z+1 || Z)", res.backward_upper, "upper", "exact, other direction"),
        _row("honest-user noise law", central.describe(), "exact", f"{h} honest users"),
    ]
    report = Report("robust delta", "Exact delta(eps) of distributed noise", ROW_COLUMNS, rows,
                    inputs={"law": law, "n": n, "eps": eps, "param": param, "gamma": gamma, "honest": h},
                    notes=["citation: " + noise_mod.CITE_EXACT], records=[res.bound({"n": n, "gamma": gamma}).to_dict()])
    emit(report, fmt)


BITSUM_COLUMNS = [
    Column("protocol", "protocol"),
    Column("source", "source"),
    Column("parameter", "parameter"),
    Column("value", "value", kind_key="value_kind"),
    Column("value_kind", "kind"),
    Column("delta_upper", "delta(eps) upper", kind_key="upper_kind"),
    Column("delta_lower", "delta(eps) lower", kind_key="lower_kind"),
    Column("rmse", "RMSE (all honest)", kind_key="rmse_kind"),
    Column("messages_per_user", "msgs/user", kind_key="msg_kind"),
    Column("noise_ratio", "noise x"),
]

#: The kind of each bit-sum point's value: exact solvers are exact; for randomized response
#: the solver on the certified upper end gives an upper bound on the least noise and the
#: all-zero data set a lower bound.
_POINT_KIND = {"exact solver": "exact", "paper rule": "exact"}


@group.command("bitsum")
@click.option("--n", "n", type=USERS, default=None, help="Number of users, 1 <= n <= 1e12 (or --target-error).")
@_eps_option
@_delta_option(True, "Target delta")
@_gamma_option
@click.option("--protocol", type=click.Choice(BITSUM_PROTOCOLS + ("all",)), default="all", show_default=True,
              help="lecture (x + Bern(p) bits), cheu2019 (randomized response), bc20 (x + Bern(p) copies), or all.")
@_target_options
@format_option
def bitsum_cmd(n: int | None, eps: float, target: float, gamma: float, protocol: str, target_error: float | None,
               relative: bool, fmt: str) -> None:
    """Bit-sum protocols: paper rule vs exact solver, exact privacy of both.

    With --target-error E instead of --n: the range of n whose RMSE (all users honest, at
    the least noise meeting (eps, delta) with ceil(gamma n) honest users) is at most E
    (--relative: at most E*n).

    \b
    Example:
      shuffle-acct robust bitsum --n 1e6 --eps 1 --delta 1e-6 --protocol all
      shuffle-acct robust bitsum --target-error 0.001 --relative --eps 1 --delta 1e-6 --protocol lecture
    """
    from . import bitsum as bitsum_mod
    from . import noise as noise_mod

    _n_or_target(n, target_error, relative)
    protos = bitsum_mod.PROTOCOLS if protocol == "all" else (protocol,)
    if target_error is not None:
        _bitsum_users(bitsum_mod, noise_mod, protos, eps, target, gamma, target_error, relative, fmt)
        return
    assert n is not None
    rows, records, warnings, notes = [], [], [], []
    for proto in protos:
        plan = bitsum_mod.bitsum_plan(proto, n, eps, target, gamma)
        records.append(plan.to_dict())
        points = [plan.rule, plan.exact] + ([plan.necessary] if plan.necessary is not None else [])
        for point in points:
            row = point.to_dict()
            kind = _POINT_KIND.get(point.source, "lower" if point.source.startswith("necessary") else "upper")
            row.update(protocol=proto, value_kind=kind if point.value is not None else "not applicable",
                       upper_kind="upper", lower_kind="lower", rmse_kind="exact", msg_kind="exact",
                       noise_ratio=(f"{plan.noise_ratio:.3g}" if plan.noise_ratio and point.source == "paper rule" else ""))
            rows.append(row)
            if point.note:
                notes.append(f"{proto} {point.source}: {point.note}")
        notes.append(f"{proto}: {plan.citation}")
        warnings += list(plan.warnings)
    notes.append("delta(eps) upper/lower: exact hockey-stick with ceil(gamma*n) honest users (cheu2019: bracket, "
                 "lower = all-zero data set, upper = analyst also learns who randomized)")
    if "cheu2019" in protos:
        notes.append("cheu2019: the least lambda/n meeting the target lies between the 'necessary' value (kind lower: "
                     "a concrete data set violates below it) and the 'sufficient' value (kind upper)")
    report = Report("robust bitsum", "Robust bit-sum protocols: paper rule vs exact", BITSUM_COLUMNS, rows,
                    inputs={"n": n, "eps": eps, "delta": target, "gamma": gamma,
                            "honest": noise_mod.honest_count(n, gamma)},
                    notes=notes, warnings=sorted({w for w in warnings if w}), records=records)
    emit(report, fmt)


def _bitsum_users(bitsum_mod: Any, noise_mod: Any, protos: tuple[str, ...], eps: float, target: float, gamma: float,
                  target_error: float, relative: bool, fmt: str) -> None:
    """``robust bitsum --target-error``: the range of n per protocol."""
    rows: list[dict[str, Any]] = []
    records: list[dict[str, Any]] = []
    for proto in protos:
        def rmse(m: int, proto: str = proto) -> float | None:
            return bitsum_mod.bitsum_plan(proto, m, eps, target, gamma).exact.rmse  # type: ignore[no-any-return]

        first, last = _users_range(noise_mod, rmse, target_error, relative)
        kind = "upper" if proto == "cheu2019" else "exact"
        rows += _users_rows(f"{proto}: ", first, last, kind, "RMSE", kind)
        records.append({"protocol": proto, "smallest": first.to_dict(), "largest": last and last.to_dict()})
    notes = [
        "RMSE with all n users honest at the exact least noise for (eps, delta) with ceil(gamma n) honest users; "
        "the absolute RMSE grows slowly with n (fewer users cap the noise per user at p = 1/2), so both ends are shown",
        "each end was evaluated and its neighbour outside the range too (monotone in n up to rounding)",
    ]
    if "cheu2019" in protos:
        notes.append("cheu2019: computed at the sufficient (upper) noise, so its n range is conservative (kind upper)")
    report = Report("robust bitsum", "Users needed for a target bit-sum error", ROW_COLUMNS, rows,
                    inputs={"target_error": target_error, "relative": relative, "eps": eps, "delta": target,
                            "gamma": gamma},
                    notes=notes, records=records)
    emit(report, fmt)


@group.command("histogram")
@click.option("--k", "k", type=IntLike(2, 10**9), required=True, help="Domain size (number of bins), 2 <= k <= 1e9.")
@click.option("--n", "n", type=USERS, default=None, help="Number of users, 1 <= n <= 1e12 (or --target-error).")
@_eps_option
@_delta_option(False, "Target for the two-counter composition: solve p")
@click.option("--p", "p", type=OPEN_UNIT, default=None,
              help="Analyse this per-user noise probability instead (0 < p < 1; bc20: the missing probability).")
@_gamma_option
@click.option("--protocol", type=click.Choice(["lecture", "bc20"]), default="lecture", show_default=True,
              help="lecture: subtract the noise mean from every bin; bc20: Balcer-Cheu's zero-in-zero-out analyzer.")
@_target_options
@format_option
def histogram_cmd(k: int, n: int | None, eps: float, target: float | None, p: float | None, gamma: float, protocol: str,
                  target_error: float | None, relative: bool, fmt: str) -> None:
    """Histogram of k counters: exact two-counter composition, l_inf error, messages.

    With --target-error E instead of --n (and --delta): the range of n whose expected
    l_inf error (certified upper bound, all users honest) is at most E.

    \b
    Example:
      shuffle-acct robust histogram --k 100 --n 1e4 --eps 1 --delta 1e-6 --protocol bc20
      shuffle-acct robust histogram --k 100 --target-error 0.01 --relative --eps 1 --delta 1e-6
    """
    from . import structures

    _n_or_target(n, target_error, relative)
    if target_error is not None:
        if target is None:
            raise click.UsageError("--target-error needs --delta (the privacy target the noise is solved for)")
        _histogram_users(structures, k, eps, target, gamma, protocol, target_error, relative, fmt)
        return
    assert n is not None
    _one_of(target, p)
    r = structures.histogram(k, n, eps, target, gamma=gamma, p=p, protocol=protocol)
    rows = [
        _row("per-user noise probability p", r.law.p, "exact", "exact solver (two counters)" if p is None else "given"),
        _row("delta(eps), two counters composed", r.delta_upper, "upper", "exact privacy-loss composition"),
        _row("delta(eps), two counters (lower end)", r.delta_lower, "lower", "exact privacy-loss composition"),
        _row("delta(eps), one counter", r.single_counter_delta, "upper", "exact hockey-stick"),
        _row("naive: 2 x delta_counter(eps/2)", r.naive_doubling_delta, "upper", "basic composition (comparator)"),
    ]
    notes = ["one user moves at most two counters (" + STEMMER + "; " + BALCER_CHEU_JOSEPH_MAO + ", Section 5)",
             "noise per counter: " + r.law.describe()]
    if protocol == "bc20":
        d = r.details
        rows += [
            _row("expected l_inf error, worst data set (all honest)", r.linf_error, "upper",
                 "bc20 analyzer: E max over min(k, n) bins of max(B_j, nq)"),
            _row("expected l_inf error of one data set", d["linf_error_attained"], "lower",
                 f"bc20 analyzer, exact: {d['worst_data']['bins']} bins of {d['worst_data']['users_per_bin']} users"),
            _row("error on empty bins", 0.0, "exact", "zero in, zero out"),
        ]
        notes.append("bc20 analyzer (Balcer-Cheu, ITC 2020, arXiv 1911.06879): a bin is estimated as |y_j| - n(1-q) "
                     "if it received more than n messages, else 0; the error does not grow with k beyond n bins")
    else:
        rows.append(_row("expected l_inf error (all honest)", r.linf_error, "upper",
                         "E max_j |noise_j - mean| over k counters"))
    rows += [
        _row("expected messages per user", r.messages_per_user, "exact", "1 + k * Pr[noise message]"),
        _row("worst-case messages per user", r.messages_worst, "exact", "k + 1"),
    ]
    report = Report("robust histogram", "Histogram: exact two-counter composition", ROW_COLUMNS, rows,
                    inputs={"k": k, "n": n, "eps": eps, "delta": target, "gamma": gamma, "honest": r.honest},
                    notes=notes, records=[r.to_dict()])
    emit(report, fmt)


def _histogram_users(structures: Any, k: int, eps: float, target: float, gamma: float, protocol: str,
                     target_error: float, relative: bool, fmt: str) -> None:
    """``robust histogram --target-error``: the range of n."""
    from . import noise as noise_mod

    def linf(m: int) -> float | None:
        return structures.histogram(k, m, eps, target, gamma=gamma, protocol=protocol).linf_error  # type: ignore[no-any-return]

    first, last = _users_range(noise_mod, linf, target_error, relative)
    rows = _users_rows("", first, last, "upper", "expected l_inf error")
    report = Report("robust histogram", f"Users needed for a target histogram error ({protocol})", ROW_COLUMNS, rows,
                    inputs={"k": k, "target_error": target_error, "relative": relative, "eps": eps, "delta": target,
                            "gamma": gamma, "protocol": protocol},
                    notes=["error: the certified upper bound on the expected l_inf error of the protocol's analyzer, "
                           "all users honest, at the exact least noise for the two-counter (eps, delta) target; the n "
                           "found is where that bound meets the target (kind upper: the true error may meet it sooner)",
                           "each end was evaluated and its neighbour outside the range too (monotone in n up to "
                           "rounding)"],
                    records=[{"smallest": first.to_dict(), "largest": last and last.to_dict()}])
    emit(report, fmt)


@group.command("pan")
@click.option("--n", "n", type=USERS, required=True, help="Stream length, 1 <= n <= 1e12 (trials per noise draw by default).")
@_eps_option
@_delta_option(False, "Target delta: solve p")
@click.option("--p", "p", type=OPEN_UNIT, default=None, help="Analyse this noise probability instead (0 < p < 1).")
@click.option("--trials", type=USERS, default=None, help="Trials N of each Bin(N, p) draw, 1 <= N <= 1e12 (default n).")
@format_option
def pan_cmd(n: int, eps: float, target: float | None, p: float | None, trials: int | None, fmt: str) -> None:
    """Pan-private counter: intrusion, output, and pan-privacy guarantees.

    \b
    Example:
      shuffle-acct robust pan --n 1e5 --eps 1 --delta 1e-6
    """
    from . import structures

    _one_of(target, p)
    r = structures.pan_counter(n, eps, target, p=p, trials=trials)
    rows = [
        _row("noise probability p (each draw)", r.p, "exact", "exact solver" if p is None else "given"),
        _row("delta(eps): intrusion into the state (Z1)", r.state_delta, "upper", "exact hockey-stick"),
        _row("delta(eps): element after intrusion (Z2)", r.increment_delta, "upper", "exact hockey-stick"),
        _row("delta(eps): output alone (Z1+Z2)", r.output_delta, "upper", "exact hockey-stick"),
        _row("pan-privacy delta(eps)", r.pan_delta, "upper", "worse of state and post-intrusion"),
        _row("RMSE of the output", r.rmse, "exact", "sqrt(2 N p (1-p))"),
    ]
    report = Report("robust pan", f"Pan-private counter ({BALCER_CHEU_JOSEPH_MAO}, Theorem 5.1)", ROW_COLUMNS, rows,
                    inputs={"n": n, "eps": eps, "delta": target, "trials": r.details["trials"]},
                    notes=[(f"pan-privacy: {BALCER_CHEU_JOSEPH_MAO}, Definition 2.6 and the proof of Lemma 3.7 (first "
                            "noise protects the state, second noise the output given the state)")],
                    records=[r.to_dict()])
    emit(report, fmt)


@group.command("distinct")
@click.option("--n", "n", type=USERS, default=None, help="Number of users, 1 <= n <= 1e12 (or --target-error).")
@click.option("--k", "k", type=IntLike(1, 10**9), default=None,
              help="Domain size, 1 <= k <= 1e9 (or --universe with --hash-size).")
@_eps_option
@_delta_option(True, "Total delta (noise + split and mix)")
@_gamma_option
@click.option("--sigma", type=FiniteFloat(0.0, 1e6, low_open=True), default=None,
              help="Split-and-mix security parameter in bits, 0 < sigma <= 1e6 (default: 10% of delta).")
@click.option("--beta", type=BETA, default=0.05, show_default=True,
              help="Failure probability of the (alpha, beta) accuracy statement, 1e-300 <= beta < 1.")
@click.option("--universe", type=IntLike(2, 10**30), default=None,
              help="Large universe: users hold elements of a universe of this size (2 <= U <= 1e30), hashed "
                   "into --hash-size bins by a public 2-universal hash (replaces --k).")
@click.option("--hash-size", "hash_size", type=IntLike(2, 10**9), default=None,
              help="With --universe: the number of hash bins, 2 <= k < U, k <= 1e9 (default: the size with the "
                   "smallest certified alpha).")
@click.option("--target-error", "target_error", type=TARGET_ERROR, default=None,
              help="Solve for n instead of --n: the range of n whose alpha (at --beta) meets this target "
                   "(0 < E <= 1e15), every end verified by the forward computation.")
@format_option
def distinct_cmd(n: int | None, k: int | None, eps: float, target: float, gamma: float, sigma: float | None,
                 beta: float, universe: int | None, hash_size: int | None, target_error: float | None,
                 fmt: str) -> None:
    """Distinct elements with exact noisy-OR accounting and an (alpha, beta) error.

    The protocol of Balcer, Cheu, Joseph, Mao (SODA 2021, arXiv 2004.09481), Theorem 3.3;
    with --universe, the hashed variant of its Appendix A.2 (Corollary A.4). The error
    statement: with probability at least 1 - beta, |estimate - D| <= alpha for every data
    set (all users honest).

    \b
    Example:
      shuffle-acct robust distinct --n 1e5 --k 1000 --eps 1 --delta 1e-6 --gamma 0.5
      shuffle-acct robust distinct --n 1e4 --universe 1e12 --hash-size 1e6 --eps 1 --delta 1e-6
      shuffle-acct robust distinct --target-error 300 --k 1000 --eps 1 --delta 1e-6
    """
    from . import structures

    _n_or_target(n, target_error)
    if (k is None) == (universe is None):
        raise click.UsageError("give exactly one of --k (domain size) or --universe (hashed into --hash-size bins)")
    if hash_size is not None and universe is None:
        raise click.UsageError("--hash-size needs --universe")
    options: dict[str, Any] = {"gamma": gamma, "sigma": sigma, "beta": beta}
    if target_error is not None:
        if universe is not None and hash_size is None:
            raise click.UsageError("--target-error with --universe needs --hash-size (the bins are fixed while n varies)")
        _distinct_users(structures, k if universe is None else hash_size, universe, eps, target, options, target_error,
                        fmt)
        return
    assert n is not None
    if universe is None:
        assert k is not None
        r = structures.distinct_elements(n, k, eps, target, **options)
    elif hash_size is None:
        r = structures.best_hash_size(n, universe, eps, target, **options)
    else:
        r = structures.distinct_elements(n, hash_size, eps, target, universe=universe, **options)
    acc = r.accuracy
    assert acc is not None
    rows = [
        _row("central p (all n honest)", r.p_central, "exact", "Lemma 3.5 with n users"),
        _row("per-user p'", r.p_user, "exact", "exact solver (closed form, verified)"),
        _row("noise bit with ceil(gamma n) honest", r.p_honest, "exact", "Lemma 3.5 with honest users"),
        _row("delta(eps), noisy-OR (two elements)", r.noise_delta, "exact", "exact composition, 4 outcomes"),
        _row("split-and-mix sigma", r.sigma, "exact", "security parameter over Z_2"),
        _row("split-and-mix messages m", r.splitmix_messages, "upper", r.details["splitmix_method"]),
        _row("split-and-mix delta 2(1+e^eps)2^-sigma", r.splitmix_delta, "upper", f"{BALCER_CHEU_JOSEPH_MAO}, Lemma 3.4"),
        _row("total delta(eps)", r.total_delta, "upper", "noise + split and mix"),
    ]
    if universe is not None:
        rows.append(_row("hash size k (bins)", r.k, "exact" if hash_size is not None else "estimate",
                         "given" if hash_size is not None else "smallest certified alpha over k (heuristic optimum)"))
    rows += [
        _row(f"alpha at beta = {beta:g}, every data set", acc.alpha_upper, "upper",
             "Chernoff, exact bit MGFs" + (" + hash collisions (Markov)" if universe is not None else "")),
        _row("alpha, Hoeffding (the theorem's proof)", acc.alpha_hoeffding, "upper",
             "sqrt(k ln(2/beta)/2)/(1/2 - p)" + (" + collisions" if universe is not None else "")),
        _row("alpha needed by one data set", acc.alpha_lower, "lower", f"exact tail: {acc.lower_data}"),
    ]
    if universe is not None:
        rows.append(_row(f"hash collision loss at beta_h = {acc.collision_beta:g}", acc.collision_error, "upper",
                         "D(D-1)/(2 k beta_h), D <= min(n, U) (Lemma A.3 argument)"))
    rows += [
        _row("RMSE of the distinct count" + (" (noise only)" if universe is not None else ""), r.rmse_upper, "upper",
             "worst case over the data, all honest"),
        _row("messages per user", r.messages_per_user, "exact", "k * m one-bit labelled messages"),
    ]
    warnings = []
    if acc.no_better_than_guessing:
        warnings.append(f"the error bound (alpha {acc.alpha_upper:.4g}, RMSE {acc.rmse_upper:.4g}) exceeds "
                        f"{acc.trivial_error:g} = min(n, {'U' if universe is not None else 'k'})/2: no better than "
                        "answering that without any data")
    notes = [f"binding: {r.binding}",
             "accuracy: with probability >= 1 - beta, |estimate - D| <= alpha (all users honest); estimate = "
             "(sum of the k noisy-OR bits - k p)/(1/2 - p)"]
    if universe is not None:
        notes.append("hashing is public and applied by each user: neighbouring data sets hash to neighbouring data "
                     "sets, so privacy is that of the k-bin protocol (Corollary A.4 Part I); beta is split evenly "
                     "between the noise and the collisions")
    report = Report("robust distinct", "Robust distinct elements", ROW_COLUMNS, rows,
                    inputs={"n": n, "k": r.k, "universe": universe, "eps": eps, "delta": target, "gamma": gamma,
                            "beta": beta, "honest": r.honest},
                    notes=notes, warnings=warnings, records=[r.to_dict()])
    emit(report, fmt)


def _distinct_users(structures: Any, k: int | None, universe: int | None, eps: float, target: float,
                    options: dict[str, Any], target_error: float, fmt: str) -> None:
    """``robust distinct --target-error``: the range of n."""
    from . import noise as noise_mod

    assert k is not None

    def alpha(m: int) -> float | None:
        acc = structures.distinct_elements(m, k, eps, target, universe=universe, **options).accuracy
        return None if acc is None else acc.alpha_upper  # type: ignore[no-any-return]

    first, last = _users_range(noise_mod, alpha, target_error, False)
    rows = _users_rows("", first, last, "upper", f"alpha at beta = {options['beta']:g}")
    notes = ["alpha: the certified (alpha, beta) bound, all users honest; the n found is where that bound meets the "
             "target (kind upper: the true error may meet it sooner)",
             "without hashing the error hardly depends on n (the central noise is fixed by eps, delta and gamma; n "
             "enters through ceil(gamma n) and min(n, k) held elements): the smallest n is the privacy floor"]
    if universe is not None:
        notes.append("with hashing the collision loss grows like n^2/k: the largest n is where it uses up the target")
    report = Report("robust distinct", "Users for a target distinct-elements error", ROW_COLUMNS, rows,
                    inputs={"k": k, "universe": universe, "target_error": target_error, "eps": eps, "delta": target,
                            **options},
                    notes=notes, records=[{"smallest": first.to_dict(), "largest": last and last.to_dict()}])
    emit(report, fmt)
from . import cli_extra  # noqa: E402,F401

"""``shuffle-acct robust uniformity | pan-histogram | convert``: the uniformity tester, the
pan-private histogram and the robust-shuffle -> pan-private conversions of Balcer, Cheu,
Joseph, Mao (SODA 2021, arXiv 2004.09481), §3-§5. Thin click layer over
:mod:`.uniformity` and :mod:`.pan_histogram` (imported inside the commands so that
``--help`` stays fast). See docs/robust_uniformity_pan.md.

Why ``pan-histogram`` is its own command rather than ``robust pan --k``: the histogram's
privacy is a different object (two counters composed, not one), its error is an ℓ∞ error
over ``k`` bins, and its recommended design is different (``p = 1/2`` with few trials, error
independent of the stream length, Theorem 5.2) -- the same split as ``bitsum`` /
``histogram``. ``convert`` holds the conversion lemmas (3.7, 4.9), which take a robust
shuffle protocol and return a pan-private algorithm, each with privacy and error.
"""

from __future__ import annotations

from typing import Any

import click

from ...plugin_api import DELTA_TYPE, USERS, FiniteFloat, IntLike, Report, emit, format_option
from .cli import BALCER_CHEU_JOSEPH_MAO, GAMMA, OPEN_UNIT, ROW_COLUMNS, _eps_option, _gamma_option, _row, group

ALPHA = FiniteFloat(0.0, 1.0, low_open=True)
BETA = FiniteFloat(0.0, 0.5, low_open=True, high_open=True)
DOMAIN_K = IntLike(2, 10**9)
NOT_RECOVERED = "lost in the text conversion; not recovered from the stored arXiv pages"


def _check_alpha_for_k(alpha: float, k: int) -> None:
    if alpha > 1.0 - 1.0 / k:
        raise click.BadParameter(
            f"{alpha:g} is out of range for --k {k} (accepted: 0 < alpha <= 1 - 1/k = {1 - 1 / k:g}: no distribution on "
            "k points is farther from uniform in total variation)", param_hint="'--alpha'")


def _alpha_option(func: Any) -> Any:
    return click.option("--alpha", type=ALPHA, required=True,
                        help="Distance to detect: total variation from uniform, 0 < alpha <= 1 - 1/k.")(func)


def _beta_option(func: Any) -> Any:
    return click.option("--beta", type=BETA, default=1.0 / 3.0, show_default="1/3",
                        help="Error probability allowed on each side (uniform / far), 0 < beta < 1/2.")(func)


def _tester_rows(t: Any, pan: bool) -> list[dict[str, Any]]:
    e = t.errors
    users = "executions (3 x stream)" if pan else "users"
    return [
        _row("groups k' (domain compression)", t.groups, "exact",
             "no compression" if t.groups == t.k else "balanced random partition (public randomness), Section 4.1.2"),
        _row("noise p per user per group", t.p, "exact", f"exact solver, two counters composed, {t.honest} honest {users}"),
        _row("delta(eps), two counters composed", t.delta_upper, "upper", "robust histogram accounting (structures)"),
        _row("threshold t on the statistic", e.threshold, "exact", "balances the two certified errors"),
        _row("error on uniform data", e.null_error, "upper", "Cantelli, exact variance"),
        _row("error on alpha-far data", e.far_error, "upper", "Cantelli, variance bound + partition failure"),
        _row("  of which: partition loses distance", e.partition_failure, "upper", "Cantelli over random partitions"),
        _row("error on uniform data (normal approx.)", e.null_error_normal, "estimate", "normal approximation"),
        _row("error on far data (normal approx.)", e.far_error_normal, "estimate", "normal approx. + partition bound"),
        _row("expected messages per user", t.messages_per_user, "exact", "1 + k' * p"),
    ]


def _floor_rows(k: int, alpha: float, eps: float, target: float, beta: float) -> list[dict[str, Any]]:
    from . import uniformity as uni

    pan = uni.paninski_floor(k, alpha, beta)
    rows = [
        _row("floor: any tester, even non-private", pan if pan is not None else None,
             "lower" if pan is not None else "not applicable",
             "Paninski's paired perturbation, exact chi-square (derived)" if pan is not None
             else "construction needs alpha <= floor(k/2)/k"),
        _row("floor: any (eps, delta)-DP tester", uni.dp_floor(alpha, eps, target, beta), "lower",
             "group privacy + coupling (derived)"),
        # Omega(k^(2/3)) with an unknown constant is no certified floor: the number is the order only
        _row("floor: Theorem 4.11, k^(2/3) (up to constants)", uni.paper_floor_k_only(k), "estimate",
             "order only, NOT a certified floor (unknown constant); robust PURE shuffle privacy only; alpha/eps "
             "factors " + NOT_RECOVERED),
        _row("paper's sample complexity, Theorem 4.8", None, "not applicable",
             "O~(k^(2/3)) in k (abstract); full expression and constants " + NOT_RECOVERED),
    ]
    return rows


_TESTER_NOTES = [
    f"tester: {BALCER_CHEU_JOSEPH_MAO}, Section 4.1 (Theorems 4.2, 4.8), instantiated with one lecture bit-sum counter "
    "per group; the paper's noise parameters were lost in the text conversion, so the noise is solved exactly instead",
    "alpha is the total-variation distance; errors are certified for n i.i.d. samples with all users honest (privacy "
    "holds with ceil(gamma n) honest users); 'estimate' rows use the normal approximation and are not certified",
    "statistic: T = sum_j (c_j^2 - c_j - s2) - 2(n-1) sum_j q_j c_j + n(n-1)|q|^2 on de-biased group counts c_j; "
    "answer 'far' when T > t",
]


@group.command("uniformity")
@click.option("--k", "k", type=DOMAIN_K, required=True, help="Domain size, 2 <= k <= 1e9.")
@_alpha_option
@_eps_option
@click.option("--delta", "target", type=DELTA_TYPE, required=True, help="Target delta (1e-300 <= delta < 1).")
@_gamma_option
@_beta_option
@click.option("--n", "n", type=IntLike(2, 10**12), default=None,
              help="Analyse this number of users, 2 <= n <= 1e12 (default: find the smallest n).")
@click.option("--groups", "groups_fixed", type=DOMAIN_K, default=None,
              help="Fix the number of groups k' (2 <= k' <= k; k' = k: no compression; default: optimised).")
@format_option
def uniformity_cmd(k: int, alpha: float, eps: float, target: float, gamma: float, beta: float, n: int | None,
                   groups_fixed: int | None, fmt: str) -> None:
    """Robust shuffle-private uniformity tester: privacy, certified errors, users needed, floors.

    \b
    Example:
      shuffle-acct robust uniformity --k 1e4 --alpha 0.1 --eps 1 --delta 1e-6
    """
    from . import uniformity as uni

    _check_alpha_for_k(alpha, k)
    if groups_fixed is not None and groups_fixed > k:
        raise click.BadParameter(f"{groups_fixed} is out of range (accepted: 2 <= groups <= k = {k})",
                                 param_hint="'--groups'")
    rows: list[dict[str, Any]] = []
    notes = list(_TESTER_NOTES)
    records: list[dict[str, Any]] = []
    if n is None:
        plan = uni.smallest_n(k, alpha, eps, target, gamma=gamma, beta=beta, groups_fixed=groups_fixed)
        t = plan.at_n
        rows += [
            _row("smallest n (this tester)", plan.n, "upper",
                 f"certified errors <= beta at n; integer search, verified forward ({plan.evaluations} checks)"),
            _row("n - 1 meets the certificate", "yes" if plan.below_ok else "no", "exact", "forward computation at n - 1"),
            _row("n by the normal approximation", plan.details["n_normal_estimate"], "estimate",
                 "same search, normal quantiles instead of Cantelli"),
        ]
        records.append(plan.to_dict())
        if plan.below_ok:
            notes.append("warning: n - 1 also meets the certificate (the predicate is not monotone there)")
    else:
        t = uni.tester(n, k, alpha, eps, target, gamma=gamma, beta=beta, groups_fixed=groups_fixed)
        rows.append(_row("users n", n, "exact", "given"))
        rows.append(_row("meets beta on both sides", "yes" if t.meets_target else "no", "exact", "certified errors vs beta"))
        records.append(t.to_dict())
    rows += _tester_rows(t, pan=False)
    rows += _floor_rows(k, alpha, eps, target, beta)
    report = Report("robust uniformity", "Robust shuffle-private uniformity testing", ROW_COLUMNS, rows,
                    inputs={"k": k, "alpha": alpha, "eps": eps, "delta": target, "gamma": gamma, "beta": beta,
                            "n": n, "groups": groups_fixed},
                    notes=notes, extra={"plan" if n is None else "tester": records[0]})
    emit(report, fmt)


@group.command("pan-histogram")
@click.option("--k", "k", type=DOMAIN_K, required=True, help="Domain size (number of bins), 2 <= k <= 1e9.")
@_eps_option
@click.option("--delta", "target", type=DELTA_TYPE, default=None,
              help="Target delta of each view: solve the trials N (1e-300 <= delta < 1).")
@click.option("--p", "p", type=OPEN_UNIT, default=0.5, show_default=True,
              help="Success probability of each noise draw Bin(N, p), 0 < p < 1.")
@click.option("--trials", type=USERS, default=None, help="Analyse these trials N per draw instead, 1 <= N <= 1e12.")
@format_option
def pan_histogram_cmd(k: int, eps: float, target: float | None, p: float, trials: int | None, fmt: str) -> None:
    """Pan-private histogram (Theorem 5.2) beside the pan-private counter (Theorem 5.1).

    \b
    Example:
      shuffle-acct robust pan-histogram --k 1000 --eps 1 --delta 1e-6
    """
    from . import pan_histogram as ph

    if (target is None) == (trials is None):
        raise click.UsageError("give exactly one of --delta (solve the trials) or --trials (analyse them)")
    r = ph.pan_histogram(k, eps, target, p=p, trials=trials)
    rows = [
        _row("trials N of each draw Bin(N, p)", r.trials, "exact",
             "least N meeting delta, two counters composed (verified forward)" if trials is None else "given"),
    ]
    if trials is None:
        lower = r.details["one_less_delta_lower"]
        rows.append(_row("delta(eps) with N - 1 trials (lower end)", lower,
                         "lower" if lower is not None else "not applicable",
                         ("exact composition: violates the target" if lower > target
                          else "exact composition: the certificate fails") if lower is not None else "N = 1 meets it"))
    rows += [
        _row("delta(eps): intrusion into the state (Z1, 2 bins)", r.state_delta, "upper", "exact two-counter composition"),
        _row("delta(eps): element after intrusion (Z2, 2 bins)", r.increment_delta, "upper",
             "exact two-counter composition"),
        _row("delta(eps): output alone (Z1+Z2, 2 bins)", r.output_delta, "upper", "exact two-counter composition"),
        _row("pan-privacy delta(eps), histogram", r.pan_delta, "upper", "worse of state and post-intrusion"),
        _row("pan-privacy delta(eps), one counter (Thm 5.1)", r.counter_pan_delta, "upper",
             "same N: a single counter, for comparison"),
        _row("worst-case error, every bin, every stream", r.worst_error, "exact", "support of Z1 + Z2 - 2Np"),
        _row("expected l_inf error over k bins", r.linf_expected, "upper", "E max_j |Z1j + Z2j - 2Np|"),
        _row("RMSE per bin", r.rmse_per_bin, "exact", "sqrt(2 N p (1-p))"),
    ]
    notes = [f"{BALCER_CHEU_JOSEPH_MAO}, Theorem 5.2 (histogram of the Theorem 5.1 counters); the paper's N was "
             f"{NOT_RECOVERED}: solved exactly instead",
             "one stream element moves at most two bins: each view is the exact composition of two counters",
             "error does not depend on the stream length or on k (worst case); the expected l_inf error grows slowly "
             "with k", "the stream-length design of 'robust pan' (N = n, small p) has worst-case error 2N(1-p)"]
    report = Report("robust pan-histogram", "Pan-private histogram", ROW_COLUMNS, rows,
                    inputs={"k": k, "eps": eps, "delta": target, "p": p, "trials": r.trials}, notes=notes,
                    extra={"histogram": r.to_dict()})
    emit(report, fmt)


@group.command("convert")
@click.option("--problem", type=click.Choice(["uniformity", "distinct"]), required=True,
              help="Which conversion: uniformity (Lemma 4.9) or distinct (Lemma 3.7).")
@click.option("--k", "k", type=DOMAIN_K, required=True, help="Domain size, 2 <= k <= 1e9.")
@_eps_option
@click.option("--delta", "target", type=DELTA_TYPE, required=True, help="Target delta (1e-300 <= delta < 1).")
@click.option("--m", "m", type=IntLike(1, 10**12 // 3), default=None,
              help="Stream length, 1 <= m <= 3.3e11 (uniformity: default finds the smallest m; distinct: required).")
@click.option("--alpha", type=ALPHA, default=None, help="uniformity: distance to detect (total variation), 0 < alpha < 1.")
@_beta_option
@click.option("--sigma", type=FiniteFloat(0.0, 1e6, low_open=True), default=None,
              help="distinct: split-and-mix security parameter in bits, 0 < sigma <= 1e6 (default: 10% of delta).")
@format_option
def convert_cmd(problem: str, k: int, eps: float, target: float, m: int | None, alpha: float | None, beta: float,
                sigma: float | None, fmt: str) -> None:
    """Robust shuffle protocol -> pan-private algorithm (Lemmas 3.7, 4.9), with privacy and error.

    \b
    Example:
      shuffle-acct robust convert --problem uniformity --k 1e4 --alpha 0.1 --eps 1 --delta 1e-6
    """
    notes = [f"{BALCER_CHEU_JOSEPH_MAO}: the pan-private state is the protocol's messages from m dummy executions, "
             "then the m stream elements, then m more dummy executions (n = 3m); the state always holds m honest "
             "executions, so the robust protocol with gamma = 1/3 gives (eps, delta)-pan-privacy (read from the proofs of "
             "Lemmas 3.7 and 4.9; the statements' symbols were lost)"]
    records: list[dict[str, Any]] = []
    if problem == "distinct":
        from . import pan_histogram as ph

        if m is None:
            raise click.UsageError("--problem distinct needs --m (the stream length)")
        if alpha is not None:
            raise click.UsageError("--alpha applies to --problem uniformity only")
        r = ph.convert_distinct(m, k, eps, target, sigma=sigma)
        rows = [
            _row("stream length m", m, "exact", "given"),
            _row("protocol executions n = 3m", r.executions, "exact", "m dummies + stream + m dummies"),
            _row("pan-privacy delta(eps)", r.pan_delta, "upper",
                 "robust distinct elements (Theorem 3.3) with gamma = 1/3, exact noisy-OR + split and mix"),
            _row("RMSE of the protocol on its 3m inputs", r.protocol_rmse, "upper", "worst case over the data"),
            _row("RMSE of the pan-private count", r.pan_rmse, "upper", "+1: the dummies all hold one element"),
            _row("messages kept in the state (end)", r.messages_in_state, "exact", "3m x k x split-and-mix messages"),
        ]
        notes.append("Lemma 3.7: dummies are executions on one fixed element, so the distinct count moves by at most 1")
        records.append(r.to_dict())
    else:
        from . import uniformity as uni

        if alpha is None:
            raise click.UsageError("--problem uniformity needs --alpha")
        if sigma is not None:
            raise click.UsageError("--sigma applies to --problem distinct only")
        _check_alpha_for_k(alpha, k)
        rows = []
        if m is None:
            plan = uni.smallest_n(k, alpha, eps, target, beta=beta, pan=True)
            t = plan.at_n
            rows += [
                _row("smallest stream length m", plan.n // 3, "upper",
                     f"certified errors <= beta; integer search, verified forward ({plan.evaluations} checks)"),
                _row("m - 1 meets the certificate", "yes" if plan.below_ok else "no", "exact", "forward at m - 1"),
                _row("m by the normal approximation", plan.details["n_normal_estimate"] // 3, "estimate",
                     "same search, normal quantiles"),
            ]
            records.append(plan.to_dict())
        else:
            t = uni.tester(3 * m, k, alpha, eps, target, beta=beta, pan=True)
            rows += [_row("stream length m", m, "exact", "given"),
                     _row("meets beta on both sides", "yes" if t.meets_target else "no", "exact", "certified errors")]
            records.append(t.to_dict())
        rows.append(_row("protocol executions n = 3m", t.n, "exact", "m dummies + stream + m dummies"))
        rows += _tester_rows(t, pan=True)
        rows.append(_row("pan-privacy delta(eps)", t.delta_upper, "upper", "tester's histogram, gamma = 1/3"))
        notes.append("Lemma 4.9: dummies are uniform samples; the error is computed for exactly m tested and 2m uniform "
                     "samples (exact two-type statistic), not via the paper's Chernoff step")
    report = Report("robust convert", f"Robust shuffle -> pan-private: {problem}", ROW_COLUMNS, rows,
                    inputs={"problem": problem, "k": k, "eps": eps, "delta": target, "m": m, "alpha": alpha,
                            "beta": beta, "sigma": sigma, "gamma": 1.0 / 3.0},
                    notes=notes, extra={problem: records[0]})
    emit(report, fmt)


__all__ = ["GAMMA", "convert_cmd", "pan_histogram_cmd", "uniformity_cmd"]

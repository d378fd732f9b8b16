"""``splitmix dp-sum-solve``: every answer re-verified by the forward plan (the answer meets
the target, one step less does not), and for small answers *every* smaller value checked
by a plain scan of the forward plan (no use of the solver's lower bounds); the command line
with CliRunner, hostile inputs refused with one line and exit code 2."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from shuffle_accountant.cli import main
from shuffle_accountant.errors import InvalidParameter
from shuffle_accountant.plugins.splitmix import dp_sum_plan, solve_dp_sum
from shuffle_accountant.plugins.splitmix.dpsum_solve import _first_feasible

FIELD = {"mse": "mse_total", "rmse": "rmse_total", "rmse_mean": "rmse_mean"}


def error(plan, metric: str) -> float:
    return getattr(plan, FIELD[metric])


@pytest.mark.parametrize("n,eps,delta,target,metric,gamma", [
    (100, 1.0, 1e-6, 2.5, "mse", 1.0),
    (1000, 1.0, 1e-6, 1.6, "rmse", 1.0),
    (1000, 0.5, 1e-9, 17.0, "mse", 0.5),
    (50, 2.0, 1e-3, 0.04, "rmse_mean", 0.3),
    (10**4, 1.0, 1e-6, 1.6, "rmse", 1.0),
])
def test_least_precision_against_a_full_scan(n: int, eps: float, delta: float, target: float, metric: str,
                                             gamma: float) -> None:
    sol = solve_dp_sum("precision", eps, delta, target, metric, n=n, honest_fraction=gamma)
    p = sol.answer
    assert sol.kind == "exact" and sol.plan.precision == p
    assert error(dp_sum_plan(n, eps, delta, p, gamma), metric) == sol.achieved <= target
    for smaller in range(1, p):  # every smaller precision fails, by the forward plan alone
        assert error(dp_sum_plan(n, eps, delta, smaller, gamma), metric) > target, smaller
    assert sol.below is not None and sol.below_value == p - 1 and sol.below_achieved > target


@pytest.mark.parametrize("eps,delta,target,gamma,precision", [
    (1.0, 1e-6, 0.01, 1.0, None),
    (1.0, 1e-6, 0.005, 0.5, None),
    (0.5, 1e-8, 0.02, 1.0, None),
    (2.0, 1e-6, 0.004, 0.7, 8),
])
def test_smallest_n_against_a_full_scan(eps: float, delta: float, target: float, gamma: float,
                                        precision: int | None) -> None:
    sol = solve_dp_sum("n", eps, delta, target, "rmse_mean", precision=precision, honest_fraction=gamma)
    n = sol.answer
    assert sol.kind == "exact" and sol.plan.n == n and n < 2000
    assert dp_sum_plan(n, eps, delta, precision, gamma).rmse_mean == sol.achieved <= target
    for smaller in range(3, n):
        try:
            plan = dp_sum_plan(smaller, eps, delta, precision, gamma)
        except InvalidParameter:  # fewer than 3 honest users: no plan at all
            continue
        assert plan.rmse_mean > target, smaller
    assert sol.below_achieved is not None and sol.below_achieved > target


@pytest.mark.parametrize("n,eps,delta,target,metric", [(300, 1.0, 1e-6, 2.4, "mse"), (10**4, 0.5, 1e-9, 8.5, "mse"),
                                                       (2000, 1.0, 1e-12, 1.55, "rmse")])
def test_fewest_messages_against_a_scan_of_precisions(n: int, eps: float, delta: float, target: float,
                                                      metric: str) -> None:
    sol = solve_dp_sum("messages", eps, delta, target, metric, n=n)
    assert sol.kind == "exact" and sol.answer == sol.plan.messages
    feasible = []
    for p in range(1, 4 * sol.plan.precision + 50):
        plan = dp_sum_plan(n, eps, delta, p)
        if error(plan, metric) <= target:
            feasible.append(plan.messages)
    assert min(feasible) == sol.answer


@settings(max_examples=25, deadline=None)
@given(n=st.integers(3, 10**9), eps=st.floats(0.1, 10.0), log_delta=st.floats(-30.0, -2.0),
       slack=st.floats(1.001, 3.0), gamma=st.sampled_from([1.0, 0.9, 0.5]),
       find=st.sampled_from(["precision", "messages"]))
def test_answers_are_verified_forward(n: int, eps: float, log_delta: float, slack: float, gamma: float,
                                      find: str) -> None:
    delta = 10.0**log_delta
    h = -(-n * int(gamma * 10) // 10)
    if h < 3:
        return
    floor = n / h * 2 / eps**2
    sol = solve_dp_sum(find, eps, delta, floor * slack, "mse", n=n, honest_fraction=gamma)
    p = sol.plan.precision
    assert dp_sum_plan(n, eps, delta, p, gamma).mse_total <= floor * slack
    if p > 1:
        assert dp_sum_plan(n, eps, delta, p - 1, gamma).mse_total > floor * slack
    assert sol.kind in ("exact", "upper") and sol.evaluations < 500


def test_first_feasible_finds_a_non_monotone_point_and_respects_the_limit() -> None:
    feasible = {17, 40, 41, 42}.__contains__
    first, decided, _ = _first_feasible(1, 41, lambda a, b: b < 10, feasible, limit=100)
    assert (first, decided) == (17, True)
    first, decided, evaluations = _first_feasible(1, 41, lambda a, b: False, feasible, limit=5)
    assert (first, decided, evaluations) == (None, False, 5)
    assert _first_feasible(5, 4, lambda a, b: False, feasible, limit=5) == (None, True, 0)


@pytest.mark.parametrize("kwargs,text", [
    (dict(find="n", metric="rmse"), "--rmse"),
    (dict(find="precision", metric="rmse"), "--n"),
    (dict(find="precision", metric="rmse", n=100, precision=5), "precision"),
    (dict(find="precision", metric="rmse", n=100, target=1.0), "out of reach"),
    (dict(find="bogus", metric="rmse", n=100), "find"),
    (dict(find="precision", metric="mae", n=100), "metric"),
    (dict(find="precision", metric="mse", n=100, target=float("nan")), "--mse"),
    (dict(find="precision", metric="mse", n=100, target=-1.0), "--mse"),
    (dict(find="n", metric="rmse_mean", target=1e-30), "1e12"),
])
def test_bad_questions_are_refused(kwargs: dict, text: str) -> None:
    args = {"epsilon": 1.0, "delta": 1e-6, "target": 3.0, **kwargs}
    with pytest.raises(InvalidParameter, match=text):
        solve_dp_sum(args.pop("find"), args.pop("epsilon"), args.pop("delta"), args.pop("target"), args.pop("metric"),
                     **args)


# ---------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------


def run(*args: str):
    return CliRunner().invoke(main, ["splitmix", *args])


def test_cli_answer_matches_the_api_and_is_verified() -> None:
    result = run("dp-sum-solve", "--find", "n", "--eps", "1", "--delta", "1e-6", "--rmse-mean", "0.001",
                 "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    record = doc["results"][0]
    sol = solve_dp_sum("n", 1.0, 1e-6, 0.001, "rmse_mean")
    assert record["answer"] == sol.answer == 1499 and record["kind"] == "exact"
    assert record["plan"]["rmse_mean"] <= 0.001 < record["below"]["rmse_mean"]
    text = run("dp-sum-solve", "--find", "n", "--eps", "1", "--delta", "1e-6", "--rmse-mean", "0.001").stdout
    assert "answer: smallest n   1499" in text and "one step less: n = 1498" in text


@pytest.mark.parametrize("fmt", ["text", "json", "csv", "markdown"])
@pytest.mark.parametrize("args", [
    ["--find", "precision", "--n", "10000", "--eps", "1", "--delta", "1e-6", "--rmse", "1.6"],
    ["--find", "messages", "--n", "1e9", "--eps", "0.5", "--delta", "1e-9", "--mse", "8.01"],
    ["--find", "n", "--eps", "1", "--delta", "1e-6", "--rmse-mean", "1e-4", "--honest-fraction", "0.5", "--sigma",
     "64"],
])
def test_cli_every_format(args: list[str], fmt: str) -> None:
    result = run("dp-sum-solve", *args, "--format", fmt)
    assert result.exit_code == 0, result.output
    assert result.stdout.strip()


def test_cli_dp_sum_honest_fraction_rows() -> None:
    result = run("dp-sum", "--n", "10000", "--eps", "1", "--delta", "1e-6", "--honest-fraction", "0.5", "--format",
                 "json")
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)["results"][0]
    assert plan == json.loads(json.dumps(dp_sum_plan(10000, 1.0, 1e-6, honest_fraction=0.5).to_dict()))
    text = run("dp-sum", "--n", "10000", "--eps", "1", "--delta", "1e-6", "--honest-fraction", "0.5").stdout
    assert "honest_users" in text and "mse_total_honest_only" in text and "5000 of 10000 users honest" in text
    plain = run("dp-sum", "--n", "10000", "--eps", "1", "--delta", "1e-6").stdout
    assert "honest_users" not in plain and "rmse_mean" in plain


@pytest.mark.parametrize("args,flag", [
    (["dp-sum", "--n", "1000", "--eps", "1", "--delta", "1e-6", "--honest-fraction", "0.001"], "--honest-fraction"),
    (["dp-sum", "--n", "1000", "--eps", "1", "--delta", "1e-6", "--honest-fraction", "0"], "--honest-fraction"),
    (["dp-sum", "--n", "1000", "--eps", "1", "--delta", "1e-6", "--sigma", "nan"], "--sigma"),
    (["dp-sum", "--n", "1000", "--eps", "1", "--delta", "1e-6", "--sigma", "1e7"], "--sigma"),
    (["dp-sum-solve", "--find", "n", "--eps", "1", "--delta", "1e-6", "--rmse", "1"], "--rmse"),
    (["dp-sum-solve", "--find", "n", "--eps", "1", "--delta", "1e-6", "--rmse-mean", "1e-3", "--n", "10"], "--n"),
    (["dp-sum-solve", "--find", "precision", "--eps", "1", "--delta", "1e-6", "--rmse", "2"], "--n"),
    (["dp-sum-solve", "--find", "precision", "--n", "100", "--eps", "1", "--delta", "1e-6", "--rmse", "1"], "--rmse"),
    (["dp-sum-solve", "--find", "precision", "--n", "100", "--eps", "1", "--delta", "1e-6", "--rmse", "2",
      "--mse", "4"], "--mse"),
    (["dp-sum-solve", "--find", "precision", "--n", "100", "--eps", "1", "--delta", "1e-6"], "--rmse"),
    (["dp-sum-solve", "--find", "precision", "--n", "100", "--eps", "1", "--delta", "1e-6", "--rmse", "2",
      "--precision", "4"], "--precision"),
    (["dp-sum-solve", "--find", "n", "--eps", "1", "--delta", "1e-6", "--rmse-mean", "1e-30"], "--rmse-mean"),
    (["dp-sum-solve", "--find", "n", "--eps", "1", "--delta", "1e-6", "--rmse-mean", "-1"], "--rmse-mean"),
    (["dp-sum-solve", "--find", "n", "--eps", "1", "--delta", "1e-6", "--rmse-mean", "1e400"], "--rmse-mean"),
    (["dp-sum-solve", "--find", "n", "--eps", "1e-300", "--delta", "1e-6", "--rmse-mean", "1e-3"], "--eps"),
    (["dp-sum-solve", "--find", "n", "--eps", "1", "--delta", "1e-6", "--rmse-mean", "1e-3", "--honest-fraction",
      "1e-13"], "--honest-fraction"),
    (["dp-sum-solve", "--find", "size", "--eps", "1", "--delta", "1e-6", "--rmse-mean", "1e-3"], "--find"),
])
def test_hostile_inputs_one_line_exit_2(args: list[str], flag: str) -> None:
    result = run(*args)
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and flag in lines[0], result.stderr
    assert "Traceback" not in result.output and result.stdout == ""


@pytest.mark.parametrize("args", [
    ["dp-sum", "--n", "10000", "--eps", "1", "--delta", "1e-6", "--honest-fraction", "0.5"],
    ["dp-sum-solve", "--find", "n", "--eps", "1", "--delta", "1e-6", "--rmse-mean", "0.001"],
])
def test_dp_sum_tables_show_the_kind_of_every_number(args):
    # every printed number is labelled: the error rows are upper bounds, sigma_certified a lower bound
    import csv
    import io

    from click.testing import CliRunner

    from shuffle_accountant.cli import main

    res = CliRunner().invoke(main, ["splitmix", *args, "--format", "csv"])
    assert res.exit_code == 0, res.output
    rows = {r["quantity"]: r for r in csv.DictReader(io.StringIO(res.output))}
    assert rows["mse_total"]["kind"] == "upper" and rows["rmse_mean"]["kind"] == "upper"
    assert rows["sigma_certified"]["kind"] == "lower"
    assert all(r["kind"] in ("exact", "upper", "lower") for r in rows.values())
    text = CliRunner().invoke(main, ["splitmix", *args]).output
    assert " kind " in text.splitlines()[2]

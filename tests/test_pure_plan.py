"""Inverse questions of the pure plug-in (``pure plan``): every answer re-checked here by
the forward computation (the answer meets the target, one step beyond does not), and the
command line (formats, one-line refusals)."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from shuffle_accountant.cli import main
from shuffle_accountant.errors import CertificationError, InvalidParameter
from shuffle_accountant.output import FORMATS
from shuffle_accountant.plugins.pure import count as pc
from shuffle_accountant.plugins.pure import histogram as hg
from shuffle_accountant.plugins.pure import inverse as iv
from shuffle_accountant.plugins.pure import realsum as rs


def _count_rmse(eps: float, n: int, rho: float) -> float:
    return math.sqrt(pc.optimise(eps, n, rho).mse_bound)


def _hist_linf(eps: float, n: int, k: int, rho: float) -> float:
    return hg.histogram(eps, n, k, rho).linf_bracket[1]


def _sum_rmse(eps: float, n: int, bits: int, rho: float, value_range: float = 1.0, split: str = "mse") -> float:
    return rs.real_sum(eps, n, bits, value_range, rho, split).rmse_bound


def _feasible(f, *args) -> bool:
    try:
        return f(*args)
    except CertificationError:
        return False


@pytest.mark.parametrize("eps,alpha", [(1.0, 0.01), (0.3, 0.05), (2.0, 0.001)])
def test_smallest_n_count(eps, alpha):
    a = iv.smallest_n(iv.Task("count"), eps, alpha)
    n = int(a.value)
    assert _count_rmse(eps, n, 0.5) <= alpha * n
    assert not _feasible(lambda m: _count_rmse(eps, m, 0.5) <= alpha * m, n - 1)
    assert a.neighbour == n - 1 and a.error <= a.target


def test_smallest_n_histogram_and_sum():
    a = iv.smallest_n(iv.Task("histogram", k=100), 1.0, 0.01)
    n = int(a.value)
    assert _hist_linf(1.0, n, 100, 0.5) <= 0.01 * n and not _hist_linf(1.0, n - 1, 100, 0.5) <= 0.01 * (n - 1)
    b = iv.smallest_n(iv.Task("sum", bits=5, value_range=3.0), 1.0, 0.002)
    m = int(b.value)
    assert _sum_rmse(1.0, m, 5, 0.5, 3.0) <= 0.002 * m * 3.0
    assert not _sum_rmse(1.0, m - 1, 5, 0.5, 3.0) <= 0.002 * (m - 1) * 3.0


@pytest.mark.parametrize("task,target", [(iv.Task("count"), 3.0), (iv.Task("histogram", k=20), 20.0),
                                         (iv.Task("sum", bits=4), 10.0)])
def test_least_eps(task, target):
    a = iv.least_eps(task, 10**4, target)
    assert a.neighbour is not None and a.neighbour < a.value <= a.neighbour * (1 + 2e-6)

    def err(e: float) -> float:
        if task.task == "count":
            return _count_rmse(e, 10**4, 0.5)
        if task.task == "histogram":
            return _hist_linf(e, 10**4, 20, 0.5)
        return _sum_rmse(e, 10**4, 4, 0.5)

    assert err(a.value) <= target < err(a.neighbour)


def test_least_eps_count_matches_the_discrete_laplace_closed_form():
    # the optimiser's q pins Lemma 11 at (1+rho)Var(DLap(eps)): solve 1.5 Var(DLap(eps)) = 9 directly
    a = iv.least_eps(iv.Task("count"), 10**4, 3.0)
    var = 9.0 / 1.5  # Var(DLap(e)) = 2e^-e/(1-e^-e)^2 = v  <=>  e^-e = 1 + 1/v - sqrt(2/v + 1/v^2)
    u = 1 + 1 / var - math.sqrt(2 / var + 1 / var**2)
    assert a.value == pytest.approx(-math.log(u), rel=1e-5)


@pytest.mark.parametrize("task,target", [(iv.Task("count"), 2.0), (iv.Task("histogram", k=100), 15.0),
                                         (iv.Task("sum", bits=6), 10.0)])
def test_largest_rho_means_fewest_messages(task, target):
    a = iv.largest_rho(task, 1.0, 10**4, target)
    assert a.error <= target and a.neighbour is not None and a.neighbour > a.value
    assert a.neighbour_error is not None and a.neighbour_error > target
    # more slack than the default buys fewer messages at the same eps
    default = task.build(1.0, 10**4, 0.5)
    if iv.error_of(default) <= target and a.value > 0.5:
        assert iv.messages_of(a.plan) < iv.messages_of(default)


def test_largest_rho_count_matches_lemma11():
    a = iv.largest_rho(iv.Task("count"), 1.0, 10**4, 2.0)
    assert a.value == pytest.approx(4.0 / pc.dlap_variance(1.0) - 1.0, rel=1e-5)


@pytest.mark.parametrize("split,target", [("mse", 5.0), ("uniform", 10.0)])
def test_fewest_bits_scans_every_smaller_l(split, target):
    a = iv.fewest_bits(iv.Task("sum", split=split), 1.0, 10**6, target)
    bits = int(a.value)
    assert _sum_rmse(1.0, 10**6, bits, 0.5, split=split) <= target
    assert all(_sum_rmse(1.0, 10**6, b, 0.5, split=split) > target for b in range(1, bits))


@pytest.mark.parametrize("call,err,match", [
    # one bit: the rounding error alone (sqrt(n)/2 = 50) exceeds the target at every eps
    (lambda: iv.least_eps(iv.Task("sum", bits=1), 10**4, 1.0), CertificationError, "no eps"),
    (lambda: iv.fewest_bits(iv.Task("count"), 1.0, 100, 1.0), InvalidParameter, "bits"),
    (lambda: iv.fewest_bits(iv.Task("sum"), 1.0, 10**6, 0.01), CertificationError, "no number of bits"),
    (lambda: iv.smallest_n(iv.Task("count"), 1.0, 0.0), InvalidParameter, "rel_error"),
    (lambda: iv.smallest_n(iv.Task("median"), 1.0, 0.1), InvalidParameter, "task"),
    (lambda: iv.smallest_n(iv.Task("histogram"), 1.0, 0.1), InvalidParameter, "k"),
    (lambda: iv.largest_rho(iv.Task("count"), 1.0, 10**4, 1.0), CertificationError, "no rho"),
])
def test_impossible_or_malformed_questions(call, err, match):
    with pytest.raises(err, match=match):
        call()


# ---------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------


def _run(args):
    return CliRunner().invoke(main, args)


@pytest.mark.parametrize("fmt", FORMATS)
def test_plan_every_format(fmt):
    res = _run(["pure", "plan", "--task", "count", "--find", "n", "--eps", "1", "--rel-error", "0.01", "--format", fmt])
    assert res.exit_code == 0, res.output
    if fmt == "json":
        rec = json.loads(res.stdout)["results"][0]
        assert rec["find"] == "n" and rec["error"] <= rec["target"] and rec["neighbour"] == rec["value"] - 1


@pytest.mark.parametrize("args", [
    ["--task", "sum", "--find", "bits", "--eps", "1", "--n", "1e6", "--error", "5"],
    ["--task", "sum", "--find", "eps", "--n", "1e4", "--bits", "4", "--error", "10", "--range", "2", "--split", "uniform"],
    ["--task", "histogram", "--find", "rho", "--eps", "1", "--n", "1e4", "--k", "100", "--error", "15", "--verify"],
    ["--task", "count", "--find", "eps", "--n", "1e4", "--error", "3", "--verify"],
])
def test_plan_questions_answer(args):
    res = _run(["pure", "plan", *args, "--format", "json"])
    assert res.exit_code == 0, res.output
    rec = json.loads(res.stdout)["results"][0]
    assert rec["error"] <= rec["target"]
    if "--verify" in args:
        assert rec["check"]["max_divergence"] <= rec["plan"].get("eps", 1.0) + 1e-12 or rec["check"]["holds"]


@pytest.mark.parametrize("args,flag", [
    (["--task", "count", "--find", "n", "--eps", "1"], "--rel-error"),
    (["--task", "count", "--find", "n", "--eps", "1", "--rel-error", "0.1", "--n", "10"], "--n"),
    (["--task", "count", "--find", "bits", "--eps", "1", "--n", "10", "--error", "1"], "--find bits"),
    (["--task", "count", "--find", "eps", "--n", "10", "--error", "1", "--k", "3"], "--k"),
    (["--task", "histogram", "--find", "eps", "--n", "10", "--error", "1"], "--k"),
    (["--task", "sum", "--find", "eps", "--n", "10", "--error", "1"], "--bits"),
    (["--task", "sum", "--find", "rho", "--eps", "1", "--n", "10", "--error", "1", "--bits", "3", "--rho", "1"],
     "--rho"),
    (["--task", "count", "--find", "n", "--eps", "1", "--rel-error", "1"], "--rel-error"),
    (["--task", "count", "--find", "eps", "--n", "10", "--error", "-1"], "--error"),
    (["--task", "sum", "--find", "eps", "--n", "10", "--error", "1", "--bits", "41"], "--bits"),
    (["--task", "median", "--find", "n"], "--task"),
])
def test_plan_refuses_with_one_line(args, flag):
    res = _run(["pure", "plan", *args])
    lines = res.stderr.strip().splitlines()
    assert res.exit_code == 2, res.output
    assert len(lines) == 1 and flag in lines[0] and "Traceback" not in res.output


def test_plan_impossible_target_exits_1_with_the_reason():
    res = _run(["pure", "plan", "--task", "count", "--find", "rho", "--eps", "1", "--n", "1e4", "--error", "1"])
    assert res.exit_code == 1 and "no rho" in res.stderr and len(res.stderr.strip().splitlines()) == 1


@settings(max_examples=8, deadline=None)
@given(eps=st.floats(0.1, 4.0), alpha=st.floats(1e-4, 0.2), task=st.sampled_from(["count", "histogram"]))
def test_smallest_n_property(eps, alpha, task):
    t = iv.Task(task, k=8 if task == "histogram" else None)
    a = iv.smallest_n(t, eps, alpha)
    n = int(a.value)

    def err(m: int) -> float:
        return _count_rmse(eps, m, 0.5) if task == "count" else _hist_linf(eps, m, 8, 0.5)

    assert err(n) <= alpha * n
    if n > 1:
        assert not _feasible(lambda m: err(m) <= alpha * m, n - 1)


@pytest.mark.parametrize("args,kind", [
    # count: Lemma 11 is attained by the data set where every user holds 1, so the answer is exact
    (["--task", "count", "--find", "n", "--eps", "1", "--rel-error", "0.01"], "exact"),
    # histogram (upper end of the expected l_inf bracket) and sum (Minkowski RMSE bound): bounds not
    # attained, so the smallest n / fewest bits whose bound meets the target only bounds the truth from above
    (["--task", "histogram", "--find", "n", "--eps", "1", "--k", "20", "--rel-error", "0.05"], "upper"),
    (["--task", "sum", "--find", "n", "--eps", "1", "--bits", "4", "--rel-error", "0.01"], "upper"),
    (["--task", "sum", "--find", "bits", "--eps", "1", "--n", "1e6", "--error", "5"], "upper"),
])
def test_plan_answer_kind_follows_the_metric(args, kind):
    import csv
    import io

    res = _run(["pure", "plan", *args, "--format", "csv"])
    assert res.exit_code == 0, res.output
    first = next(csv.DictReader(io.StringIO(res.output)))
    assert first["kind"] == kind, first

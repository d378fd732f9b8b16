"""GMPV Theorem 4.1 (field-dependent floor on the messages of any secure summation
protocol) against exact integer arithmetic, the exact distance, and the published shape;
the log-space lower bounds at sizes where exact integers would not finish."""

from __future__ import annotations

import json
import math
import time
from fractions import Fraction

import mpmath
import pytest
from click.testing import CliRunner

from shuffle_accountant.cli import main
from shuffle_accountant.plugins.splitmix import (
    bbgn_messages,
    exact_distance,
    field_lower_bound_messages,
    log2_field_lower_bound_distance,
    log2_lower_bound_distance,
    lower_bound_distance,
    lower_bound_messages,
    messages_needed,
    security_bounds,
)


def field_floor_exact(n: int, q: int, sigma: float) -> int:
    """The least m with (nm)!/(m!)^n >= (1 - 2^-sigma) q^(n-1), by exact integers."""
    need = (1 - Fraction(2) ** -Fraction(sigma)) * q ** (n - 1) if float(sigma).is_integer() else None
    m = 1
    while True:
        k = math.factorial(n * m) // math.factorial(m) ** n
        if need is not None:
            if k >= need:
                return m
        else:  # non-integral sigma: compare in high precision
            with mpmath.workdps(80):
                if mpmath.mpf(k) >= (1 - mpmath.power(2, -mpmath.mpf(sigma))) * mpmath.mpf(q) ** (n - 1):
                    return m
        m += 1


@pytest.mark.parametrize("n,q,sigma", [(100, 2**64, 10.0), (50, 2**256, 20.0), (3, 2**40, 5.0), (7, 97, 2.5),
                                       (2, 10**6, 1.0), (20, 2**100, 60.0), (1, 5, 3.0)])
def test_theorem_4_1_matches_exact_integers(n, q, sigma):
    assert field_lower_bound_messages(n, q, sigma) == field_floor_exact(n, q, sigma)


def test_theorem_4_1_numbers_worked_from_the_paper():
    assert field_lower_bound_messages(100, 2**64, 10) == 10
    assert field_lower_bound_messages(50, 2**256, 20) == 46
    # the distinguisher alone gave 3 and 4 there: the field bound is the stronger floor
    assert lower_bound_messages(100, 2**64, 10) == 3 and lower_bound_messages(50, 2**256, 20) == 4
    low = messages_needed(100, 10.0, 2**64)[1]
    assert low.kind == "lower" and low.value == 10 and "4.1" in low.method
    assert low.details["distinguisher_messages"] == 3


@pytest.mark.parametrize("n,m,q", [(2, 2, 7), (2, 2, 13), (3, 2, 5), (4, 2, 3), (3, 3, 7)])
def test_field_distance_bound_never_exceeds_the_exact_distance(n, m, q):
    exact = exact_distance(n, m, q)
    with mpmath.workdps(60):
        bound = log2_field_lower_bound_distance(n, m, q)
        if bound != mpmath.ninf:
            assert mpmath.power(2, bound) <= mpmath.mpf(exact.numerator) / exact.denominator
        # and the exact formula, computed with integers
        k = Fraction(math.factorial(n * m), math.factorial(m) ** n)
        direct = 1 - k / q ** (n - 1)
        assert (direct <= 0) == (bound == mpmath.ninf)
        if direct > 0:
            assert abs(mpmath.power(2, bound) - mpmath.mpf(direct.numerator) / direct.denominator) < 1e-20


def test_field_distance_bound_is_informative_where_q_is_large():
    with mpmath.workdps(60):
        assert mpmath.power(2, log2_field_lower_bound_distance(2, 2, 13)) == pytest.approx(1 - 6 / 13, rel=1e-15)


@pytest.mark.parametrize("n,q,sigma", [(100, 2**64, 10.0), (10**4, 2**46, 40.0), (3, 2**1000, 80.0), (10**12, 2, 30.0)])
def test_floors_never_exceed_the_bbgn_upper_bound(n, q, sigma):
    assert max(field_lower_bound_messages(n, q, sigma), lower_bound_messages(n, q, sigma)) <= bbgn_messages(n, q, sigma)


def test_log_space_distinguisher_matches_the_exact_fraction():
    for n, m, q in [(10, 3, 5), (10**4, 12, 2**46), (3, 40, 2)]:
        exact = lower_bound_distance(n, m, q)
        with mpmath.workdps(60):
            direct = mpmath.log(mpmath.mpf(exact.numerator) / exact.denominator, 2)
            assert abs(log2_lower_bound_distance(n, m, q) - direct) < mpmath.mpf(10) ** -30


def test_huge_sizes_answer_at_once():
    start = time.perf_counter()
    bounds = security_bounds(10**4, 10**6, 2**46)
    assert bounds[1].kind == "lower" and bounds[1].details["sigma_upper"] > 1e6
    messages_needed(10**4, 1e6, 2**32)
    messages_needed(3, 1e6, 2**65536)
    assert time.perf_counter() - start < 5.0


def _run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_cli_shows_the_stronger_floor():
    doc = json.loads(_run("splitmix", "messages", "--n", "100", "--bits", "64", "--sigma", "10", "--format", "json").stdout)
    assert [r["kind"] for r in doc["results"]] == ["upper", "lower", "not applicable"]
    assert doc["results"][1]["value"] == 10
    assert "floors: distinguisher (split and mix) 3, GMPV Theorem 4.1 (every protocol) 10" in " ".join(doc["notes"])


def test_the_largest_modulus_the_help_names_is_accepted():
    for args in (["--bits", "65536"], ["--q", "2^65536"]):
        r = _run("splitmix", "messages", "--n", "100", "--sigma", "10", *args, "--format", "json")
        assert r.exit_code == 0, r.output
        assert json.loads(r.stdout)["inputs"]["q"] == "2^65536"
    r = _run("splitmix", "messages", "--n", "100", "--sigma", "10", "--q", "2^65537")
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1 and "2^65536" in r.stderr
    assert "2^65536" in _run("splitmix", "messages", "--help").output


def test_security_with_a_million_messages_answers_fast():
    start = time.perf_counter()
    r = _run("splitmix", "security", "--n", "10000", "--m", "1e6", "--q", "2^46", "--format", "json")
    assert r.exit_code == 0, r.output
    assert time.perf_counter() - start < 10
    kinds = [rec["kind"] for rec in json.loads(r.stdout)["results"]]
    assert kinds == ["upper", "lower", "not applicable"]

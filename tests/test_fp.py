"""The floating-point policy (``shuffle_accountant.numeric.fp``): directed rounding, and
every measured error budget re-measured against an independent 40-digit reference.

The reference shares no code with the package: probabilities from mpmath's
``loggamma`` at 45 digits; tails as exact-ratio sums ``f(k)·Σ_i Π_j r(k+j)`` with the
ratios ``r`` formed from the exact rational values of the doubles ``n, p, mu, r`` and
summed in 256-bit fixed-point integer arithmetic (truncation error below ``2^-200`` per
step), started from an mpmath pmf. The sample covers sizes up to ``1e12``, deep tails
(values near ``1e-250``) and the one Boost path (binomial cdf/sf, ``min(k+1, n-k) < 40``,
``n < 2^31``) whose error grows like ``n·u``.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import mpmath as mp
import pytest

from shuffle_accountant.numeric import binomial as core_binomial
from shuffle_accountant.numeric import fp
from shuffle_accountant.plugins._shared.laws import Law

#: A budget must exceed the measured error by at least this factor.
MARGIN = 2.0
_SCALE = 256


# ---------------------------------------------------------------------------------------
# Independent reference
# ---------------------------------------------------------------------------------------


def ref_pmf(family: str, k: int, *args: float) -> mp.mpf:
    with mp.workdps(45):
        kk = mp.mpf(k)
        if family == "binomial":
            n, p = mp.mpf(args[0]), mp.mpf(args[1])
            if k < 0 or k > args[0]:
                return mp.mpf(0)
            return mp.exp(mp.loggamma(n + 1) - mp.loggamma(kk + 1) - mp.loggamma(n - kk + 1)
                          + kk * mp.log(p) + (n - kk) * mp.log1p(-p))
        if family == "poisson":
            mu = mp.mpf(args[0])
            return mp.exp(kk * mp.log(mu) - mu - mp.loggamma(kk + 1)) if k >= 0 else mp.mpf(0)
        r, p = mp.mpf(args[0]), mp.mpf(args[1])
        return mp.exp(mp.loggamma(kk + r) - mp.loggamma(r) - mp.loggamma(kk + 1)
                      + r * mp.log(p) + kk * mp.log1p(-p)) if k >= 0 else mp.mpf(0)


def _ratio_up(family: str, *args: float):
    """Exact integers ``(num, den)`` with ``f(j+1)/f(j) = num/den``."""
    if family == "binomial":
        n, p = int(args[0]), Fraction(args[1])
        return lambda j: ((n - j) * p.numerator, (j + 1) * (p.denominator - p.numerator))
    if family == "poisson":
        mu = Fraction(args[0])
        return lambda j: (mu.numerator, (j + 1) * mu.denominator)
    r, q = Fraction(args[0]), 1 - Fraction(args[1])
    return lambda j: ((j * r.denominator + r.numerator) * q.numerator, (j + 1) * r.denominator * q.denominator)


def ref_tail(family: str, k: int, *args: float, upper: bool) -> mp.mpf:
    """``P[X > k]`` (``upper``) or ``P[X <= k]``, summed away from ``k`` until the terms
    are below ``1e-45`` of the sum and decreasing."""
    up = _ratio_up(family, *args)
    start = k + 1 if upper else k
    f0 = ref_pmf(family, start, *args)
    if f0 == 0:
        return mp.mpf(0)
    one = 1 << _SCALE
    t = s = one
    j = start
    top = int(args[0]) if family == "binomial" else None
    for steps in range(50_000_000):
        if upper:
            if top is not None and j >= top:
                break
            num, den = up(j)
            j += 1
        else:
            if j <= 0:
                break
            den, num = up(j - 1)
            j -= 1
        t = t * num // den
        s += t
        if steps > 10 and t * 10**45 < s:
            nxt = up(j) if upper else tuple(reversed(up(j - 1)))
            if nxt[0] < nxt[1]:
                break
    with mp.workdps(45):
        return f0 * mp.mpf(s) / one


def _rel(value: float, ref: mp.mpf) -> float:
    return float(abs(mp.mpf(value) - ref) / ref)


# ---------------------------------------------------------------------------------------
# The reference itself
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("family,args", [("binomial", (60, 0.3)), ("poisson", (7.5,)), ("negbin", (2.5, 0.4))])
def test_reference_tails_sum_to_one_and_match_direct_sums(family, args):
    for k in (0, 3, 11, 25):
        lower, upper = ref_tail(family, k, *args, upper=False), ref_tail(family, k, *args, upper=True)
        assert abs(lower + upper - 1) < mp.mpf(10) ** -35
        with mp.workdps(45):
            direct = mp.fsum(ref_pmf(family, j, *args) for j in range(k + 1))
            assert abs(direct - lower) < mp.mpf(10) ** -35


# ---------------------------------------------------------------------------------------
# The sample
# ---------------------------------------------------------------------------------------


def _points(mean: float, sd: float, zs: tuple[float, ...], top: float = math.inf) -> list[int]:
    return sorted({k for z in zs if 0 <= (k := math.floor(mean + z * sd)) < top})


def _binomial_cases() -> list[tuple[float, float, int]]:
    cases = []
    for n, p, zs in [
        (10**4, 0.5, (-33.0, -10.0, 0.3, 12.0, 30.0)),
        (10**6, 0.3, (-30.0, -3.0, 1.0, 25.0)),
        (10**9, 0.45, (-36.0, 33.0)),
        (10**11, 2e-7, (-30.0, -4.0, 3.0, 38.0)),  # mean 2e4: tails cheap for the reference
        (10**12, 3e-8, (-25.0, 2.0, 30.0)),
    ]:
        cases += [(n, p, k) for k in _points(n * p, math.sqrt(n * p * (1 - p)), zs, n)]
    # Boost's y = 1 - p series path (small k, n < 2^31) and just beyond it
    for n in (10**8, 10**9, 2 * 10**9, 3 * 10**9):
        for lam, k in [(3.0, 1), (9.2, 7), (20.0, 18), (14.4, 10)]:
            cases.append((n, lam / n, k))
    return cases


def _pmf_sample(family: str, cases):
    """(name, size, args, k, measured, budget) for the pmf alone (any size: no tail sums)."""
    rows = []
    for size, args, k in cases:
        law = Law(family, *args)
        ref = ref_pmf(family, k, *args)
        if ref > mp.mpf("1e-300"):
            rows.append(("pmf", size, args, k, _rel(float(law.pmf(k)[0]), ref), law.budget))
    return rows


def _tails_sample(family: str, cases):
    """(name, size, args, k, measured, budget) for pmf, cdf and sf at each case."""
    rows = []
    for size, args, k in cases:
        law = Law(family, *args)
        mean = law.mean()
        if k >= mean:
            small = ref_tail(family, k, *args, upper=True)
            refs = {"sf": small, "cdf": 1 - small}
        else:
            small = ref_tail(family, k, *args, upper=False)
            refs = {"cdf": small, "sf": 1 - small}
        refs["pmf"] = ref_pmf(family, k, *args)
        got = {"pmf": law.pmf(k)[0], "cdf": law.cdf(k)[0], "sf": law.sf(k)[0]}
        for name, ref in refs.items():
            if ref > mp.mpf("1e-300"):
                rows.append((name, size, args, k, _rel(float(got[name]), ref), law.budget))
    return rows


def _assert_covered(rows) -> None:
    worst = max(rows, key=lambda r: r[4] / r[5])
    name, _size, args, k, err, budget = worst
    assert err * MARGIN <= budget, f"{name} at {args}, k={k}: measured {err:.3g}, budget {budget:.3g}"


def test_binomial_budget_covers_the_measured_error():
    rows = _tails_sample("binomial", [(n, (n, p), k) for n, p, k in _binomial_cases()])
    big = [(n, (n, p), k) for n, p, zs in [(10**11, 0.3, (-28.5, -5.0, 0.5, 34.7)), (10**12, 0.7, (-33.3, 0.1, 35.8)),
                                           (10**12, 0.5, (-36.0, 20.0, 37.0))]
           for k in _points(n * p, math.sqrt(n * p * (1 - p)), zs, n)]
    rows += _pmf_sample("binomial", big)
    _assert_covered(rows)
    # the sample does reach the regimes the budget is built for
    assert any(r[1] >= 10**11 and r[4] > 1e-10 for r in rows)  # sqrt(n) growth at 1e11..1e12
    assert max(r[4] for r in rows if r[1] == 10**9 and r[0] != "pmf") > 1e-8  # the y = 1 - p path
    assert any(r[0] == "pmf" and mp.mpf(1e-200) > ref_pmf("binomial", r[3], *r[2]) for r in rows)  # deep tails


def test_the_old_core_budget_did_not_cover_boost():
    """Why the core's budget had to grow: 1e-12 + 1e-14·sqrt(n) is exceeded at n = 1e9."""
    n, p, k = 10**9, 3e-9, 1
    err = _rel(float(Law("binomial", n, p).cdf(k)[0]), ref_tail("binomial", k, n, p, upper=False))
    assert err > 1e-12 + 1e-14 * math.sqrt(n)
    assert err * MARGIN <= fp.binomial_budget(n)


def test_poisson_budget_covers_the_measured_error():
    cases = []
    for mu, zs in [(0.4, (0.0, 3.0, 30.0)), (35.0, (-5.0, 0.0, 20.0, 36.0)), (1e4, (-35.7, -10.0, 1.0, 28.0)),
                   (1e6, (-33.6, -10.7, 4.6)), (1e8, (-22.9, 16.9, 35.0))]:
        cases += [(mu, (mu,), k) for k in _points(mu, math.sqrt(mu), zs)]
    rows = _tails_sample("poisson", cases)
    _assert_covered(rows)
    assert max(r[4] for r in rows if r[1] == 1e8) > 1e-9  # the mu·u growth is in the sample


def test_negative_binomial_budget_covers_the_measured_error():
    cases = []
    for r, p, zs in [(0.5, 0.3, (0.0, 5.0, 30.0)), (3.0, 0.001, (-1.0, 2.0, 20.0)), (10.0, 0.3, (-2.0, 36.0)),
                     (1e6, 0.01, (-24.4, 3.0)), (7e9, 0.9999, (-14.7, 2.0, 30.0)), (6e11, 0.99988, (-6.3, 1.7))]:
        mean, sd = r * (1 - p) / p, math.sqrt(r * (1 - p)) / p
        cases += [(r, (r, p), k) for k in _points(mean, sd, zs)]
    rows = _tails_sample("negbin", cases)
    _assert_covered(rows)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_random_binomial_points_at_large_n(seed):
    rng = random.Random(seed)
    cases = []
    for _ in range(25):
        n = int(10 ** rng.uniform(4, 12))
        lam = 10 ** rng.uniform(0, 4)
        p = lam / n
        k = max(0, math.floor(lam + rng.uniform(-4, 30) * math.sqrt(lam)))
        if k < n:
            cases.append((n, (n, p), k))
    _assert_covered(_tails_sample("binomial", cases))


# ---------------------------------------------------------------------------------------
# The policy functions
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 10, 1e3, 1e5, 1e7, 2**31 - 1, 2**31, 1e10, 1e12])
def test_binomial_budget_never_loosens_the_core(n):
    """The core's budget may only grow: never below its former 1e-12 + 1e-14·sqrt(n)."""
    assert fp.binomial_budget(n) >= 1e-12 + 1e-14 * math.sqrt(max(n, 1))
    assert core_binomial.relative_error_budget(n) == fp.binomial_budget(n)
    assert fp.binomial_budget(n) >= max(fp.binomial_pmf_budget(n), fp.binomial_tail_budget(n))


def test_budgets_grow_with_size():
    sizes = [1, 1e2, 1e4, 1e6, 1e8, 1e10, 1e12]
    for f in (fp.binomial_pmf_budget, fp.poisson_budget, lambda s: fp.negbin_budget(s, 0.5)):
        values = [f(s) for s in sizes]
        assert values == sorted(values)
    with pytest.raises(ValueError):
        fp.binomial_budget(float("nan"))


def test_directed_rounding_against_exact_rationals():
    rng = random.Random(3)
    for _ in range(300):
        x = Fraction(rng.randint(1, 10**30), rng.randint(1, 10**30)) * Fraction(10) ** rng.randint(-200, 200)
        lo, hi = fp.down(x), fp.up(x)
        assert Fraction(lo) <= x <= Fraction(hi)
        assert hi == lo or fp.next_up(lo) == hi  # adjacent doubles: the tightest enclosure
    with mp.workdps(50):
        third = mp.mpf(1) / 3
        assert Fraction(fp.down(third)) < Fraction(1, 3) < Fraction(fp.up(third))
    assert fp.up(0.5) == 0.5 == fp.down(0.5)
    assert fp.up(10**400) == math.inf and fp.down(-(10**400)) == -math.inf
    assert fp.next_down(fp.next_up(1.0)) == 1.0 and fp.next_up(1.0, 2) > fp.next_up(1.0)


def test_widen_is_outward_and_exp_checked_refuses_overflow():
    lo, hi = fp.widen(1.0, 1e-10, 1e-300)
    assert lo < 1.0 - 1e-10 < 1.0 + 1e-10 < hi
    assert fp.exp_checked(700.0) == math.exp(700.0)
    with pytest.raises(OverflowError, match="exceeds double precision"):
        fp.exp_checked(700.5, "e^eps")
    assert fp.UNIT_ROUNDOFF == 2.0**-53 and fp.next_up(1.0) - 1.0 == 2 * fp.UNIT_ROUNDOFF

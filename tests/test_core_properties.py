"""Property tests (hypothesis) and published reference points for the amplification core."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from shuffle_accountant import api
from shuffle_accountant.numeric import binomial as bn
from shuffle_accountant.numeric.clones import kernel_hockey_stick

RTOL = 1e-6
eps0s = st.floats(0.1, 8.0)
ns = st.integers(1, 10**7)
deltas = st.sampled_from([1e-3, 1e-6, 1e-9, 1e-12])
SETTINGS = settings(max_examples=12, deadline=None)


def eps(eps0, n, delta=1e-6, method="clones", k=None):
    return api.epsilon(eps0, n, delta, method, k, rtol=RTOL).value


@SETTINGS
@given(eps0s, ns, st.integers(2, 50), deltas)
def test_epsilon_non_increasing_in_n(eps0, n, factor, delta):
    # exact(n2) <= exact(n) and each reported value is within (1 + rtol) of its exact value
    assert eps(eps0, n * factor, delta) <= eps(eps0, n, delta) * (1 + RTOL) + 1e-15


@SETTINGS
@given(eps0s, ns, deltas)
def test_epsilon_non_increasing_in_delta(eps0, n, delta):
    assert eps(eps0, n, delta * 10) <= eps(eps0, n, delta) * (1 + RTOL) + 1e-15


@SETTINGS
@given(eps0s, st.floats(1.01, 3.0), ns)
def test_epsilon_non_decreasing_in_eps0_and_at_most_eps0(eps0, factor, n):
    e1, e2 = eps(eps0, n), eps(eps0 * factor, n)
    assert e1 <= e2 * (1 + RTOL) + 1e-15
    assert e1 <= eps0 and e2 <= eps0 * factor


@SETTINGS
@given(eps0s, ns, deltas)
def test_delta_of_epsilon_round_trip(eps0, n, delta):
    e = eps(eps0, n, delta)
    d = api.delta(eps0, n, e, "clones").value
    assert d <= delta * (1 + 1e-9)


@SETTINGS
@given(eps0s, ns, deltas)
def test_generic_upper_bounds_dominate_lower_bound(eps0, n, delta):
    lower = eps(eps0, n, delta, "binary-rr-lower")
    for method in ("clones", "stronger-clones"):
        assert eps(eps0, n, delta, method) >= lower
    cf = api.epsilon(eps0, n, delta, "closed-form")
    if cf.applicable:
        assert cf.value >= lower
        assert cf.value >= eps(eps0, n, delta, "clones")


@SETTINGS
@given(eps0s, st.integers(1, 10**6), st.integers(2, 20))
def test_krr_upper_dominates_krr_lower(eps0, n, k):
    assert eps(eps0, n, 1e-6, "krr", k) >= eps(eps0, n, 1e-6, "krr-lower", k)


def test_kernel_non_increasing_in_c_at_scale():
    """Spec §2 (*derived*): h_c is non-increasing in c; checked on the fast kernel at large c."""
    c = np.arange(10**6, 10**6 + 2000, dtype=float)
    for eps_ in (1e-3, 5e-3, 2e-2):
        h, err = kernel_hockey_stick(c, 0.73, 0.27, 0.5, eps_, bn.relative_error_budget(1e6))
        assert np.all(np.diff(h) <= err[1:] + err[:-1])


def test_binomial_accuracy_budget():
    """The error budget charged for Boost's binomial tails holds against 40-digit mpmath."""
    import mpmath

    mpmath.mp.dps = 40
    for n, p in ((10**4, 0.37), (10**6, 0.119), (10**9, 0.5), (10**12, 0.0179)):
        sd = math.sqrt(n * p * (1 - p))
        for z in (0.0, 3.0, 8.0):
            k = int(n * p + z * sd)
            lp = mpmath.loggamma(n + 1) - mpmath.loggamma(k + 1) - mpmath.loggamma(n - k + 1) + k * mpmath.log(p) + (n - k) * mpmath.log1p(-p)
            ref = mpmath.e ** lp
            got = bn.pmf(np.array([float(k)]), float(n), p)[0]
            assert abs(got / float(ref) - 1) <= bn.relative_error_budget(n), (n, p, k)


# --- published reference points (spec §4) -------------------------------------------


def test_fmt21_reference_bracket():
    """FMT21 public code: n = 1e5, eps0 = 4, delta = 1e-6 gives the bracket
    [0.1675385583317841, 0.172790550755978]; the exact clones value lies inside."""
    b = api.epsilon(4, 10**5, 1e-6, "clones")
    lo, hi = b.details["bracket"]
    assert 0.1675385583317841 <= lo <= hi <= 0.172790550755978


def test_fmt21_theorem_3_1_as_stated():
    """The theorem as stated gives about 0.5346 at n = 1e5, eps0 = 4, delta = 1e-6
    (the reference code's variant prints 0.5378)."""
    b = api.epsilon(4, 10**5, 1e-6, "closed-form")
    assert b.kind == "upper" and abs(b.value - 0.5346) < 5e-4


def test_closed_form_outside_regime_is_not_applicable():
    b = api.epsilon(8, 1000, 1e-6, "closed-form")
    assert b.kind == "not applicable" and b.value is None


@pytest.mark.parametrize(
    "eps_,published",
    [(0.1, 9.2095e-3), (0.19153, 1.31619e-3), (0.28305, 1.01593e-4)],
)
def test_koskela_stronger_clone_points(eps_, published):
    """Koskela-Heikkila-Honkela Fig. 1 (PLD upper bounds, stronger-clone pair, n = 1e4,
    eps0 = 4): the exact value is a hair lower."""
    d = api.delta(4, 10**4, eps_, "stronger-clones").value
    assert d <= published * (1 + 1e-4)
    assert d >= published * 0.99


def test_delta0_penalty_theorem_3_8():
    """FMT21 Theorem 3.8: the (eps0, delta0) guarantee adds (e^eps + 1)(1 + e^-eps0/2) n delta0."""
    pure = api.delta(2, 10**5, 0.05, "clones").value
    approx = api.delta(2, 10**5, 0.05, "clones", delta0=1e-13).value
    expected = (math.exp(0.05) + 1) * (1 + math.exp(-2) / 2) * 10**5 * 1e-13
    assert math.isclose(approx - pure, expected, rel_tol=1e-9)
    e_pure = api.epsilon(2, 10**5, 1e-6, "clones").value
    e_approx = api.epsilon(2, 10**5, 1e-6, "clones", delta0=1e-13).value
    assert e_approx >= e_pure
    assert api.epsilon(2, 10**5, 1e-6, "stronger-clones", delta0=1e-13).kind == "not applicable"


@pytest.mark.parametrize("n", [1, 2, 10**12])
def test_extreme_n_supported(n):
    b = api.epsilon(1.0, n, 1e-10, "clones")
    assert b.kind == "upper" and 0 <= b.value <= 1.0
    if n == 1:
        assert b.value == pytest.approx(1.0, rel=1e-6)  # one user: no amplification


def test_tiny_delta_down_to_1e30():
    b = api.delta(2.0, 10**4, 1.2, "clones")
    assert b.kind == "upper" and 0.0 < b.value < 1e-6 and math.isfinite(b.value)
    e = api.epsilon(2.0, 10**4, 1e-30, "clones")
    assert api.delta(2.0, 10**4, e.value, "clones").value <= 1e-30 * (1 + 1e-9)


@pytest.mark.parametrize("eps0", [1.4375 * 1.01, 0.3, 5.0])
def test_one_user_gets_exactly_eps0_never_more(eps0):
    """n = 1: no amplification; the reported eps must not exceed eps0 even by an ulp
    (the pair's max log-ratio is computed as log(pa) - log(pb) in floating point)."""
    assert api.epsilon(eps0, 1, 1e-6, "clones").value <= eps0


@pytest.mark.parametrize("rtol", [0.0, -1e-9, 1e-13, 0.5])
def test_delta_rejects_rtol_out_of_range(rtol):
    with pytest.raises(ValueError, match="rtol"):
        api.delta(1.0, 100, 0.1, rtol=rtol)


def test_narrow_block_masses_match_mpmath_on_both_sides_of_the_mode():
    """Narrow blocks are summed by the pmf ratio recurrence walking away from the block's
    largest term; far below the mode an upward walk would overflow (regression:
    hypothesis found eps0 = 4.25, n = 167, delta = 1e-3)."""
    import mpmath

    mpmath.mp.dps = 40
    for n, p, blocks in ((166, 0.0071, [(1, 60), (100, 160)]), (1000, 0.5, [(0, 63), (470, 530), (900, 960)])):
        lo = np.array([a for a, _ in blocks], float)
        hi = np.array([b for _, b in blocks], float)
        mass, err = bn.interval_mass(lo, hi, n, p)
        for (a, b), m, e in zip(blocks, mass, err):
            ref = mpmath.fsum(mpmath.binomial(n, k) * mpmath.mpf(p) ** k * (1 - mpmath.mpf(p)) ** (n - k)
                              for k in range(a, b + 1))
            assert abs(m - float(ref)) <= e, (n, a, b, m, ref, e)


def test_regression_small_n_large_eps0_bounds_ordered():
    lower = eps(4.25, 167, 1e-3, "binary-rr-lower")
    assert eps(4.25, 167, 1e-3, "clones") >= lower and eps(4.25, 167, 1e-3, "stronger-clones") >= lower


@pytest.mark.parametrize("method,k", [("clones", None), ("stronger-clones", None), ("krr", 2), ("krr", 3), ("krr", 100),
                                      ("krr", 10**6)])
def test_pair_rates_rounded_toward_fewer_clones(method, k):
    """analyses.pair_for: the upper bounds' clone rate is at most the exact one (fewer clones: the divergences are
    non-increasing in the rates) and the krr scale at least the exact 1 - p0, both within 1e-13 relative, against
    60-digit values from eps0 (nearest-float rates were above the exact ones for about half of eps0, by an ulp)."""
    import mpmath

    from shuffle_accountant.analyses import pair_for

    for eps0 in [0.01 * 1.37**j for j in range(33)] + [700.0, 705.0]:
        sp = pair_for(method, eps0, 1000, k)
        with mpmath.workdps(60):
            e = mpmath.exp(mpmath.mpf(eps0))
            exact = mpmath.exp(-mpmath.mpf(eps0)) / 2 if method == "clones" else 1 / (e + (1 if k in (None, 2) else k - 1))
            assert sp.pair.r0 == sp.pair.r1 and exact * (1 - mpmath.mpf(1e-13)) <= sp.pair.r0 <= exact, (eps0, sp.pair.r0)
            if k is not None and k > 2:
                scale = 1 - (k - 2) / (e + k - 1)
                assert scale <= sp.scale <= scale * (1 + mpmath.mpf(1e-13)), (eps0, sp.scale)


UPPER_PAIRS = [("clones", None), ("stronger-clones", None), ("krr", 2), ("krr", 3), ("krr", 100)]
LOWER_PAIRS = [("binary-rr-lower", None), ("krr-lower", 2), ("krr-lower", 3), ("krr-lower", 100)]
EPS0_GRID = [0.01 * 1.37**j for j in range(33)] + [1e-17, 30.0, 40.0, 700.0]


@pytest.mark.parametrize("method,k", UPPER_PAIRS)
def test_upper_pairs_first_user_dominates_the_exact_one(method, k):
    """analyses.pair_for, upper bounds: the first user's ``pb' <= 1/(e^eps0 + 1) = pb*`` and ``pa' + pb' >= 1``
    exactly, so the normalised ``pa'/(pa' + pb') >= pa*`` (the mixing lemma of pair_for's docstring makes the
    exact pair's divergences at most the engines'); the pair's log-ratio is capped at eps0 itself. 60-digit
    values; fails before (nearest floats: pa below pa* for about half of eps0)."""
    import mpmath
    from fractions import Fraction

    from shuffle_accountant.analyses import pair_for

    for eps0 in EPS0_GRID:
        pair = pair_for(method, eps0, 1000, k).pair
        assert Fraction(pair.pa) + Fraction(pair.pb) >= 1, eps0
        with mpmath.workdps(60):
            pb_exact = 1 / (mpmath.exp(mpmath.mpf(eps0)) + 1)
            assert pair.pb <= pb_exact, (eps0, pair.pb)
            assert mpmath.mpf(pair.pa) * pb_exact >= (1 - pb_exact) * pair.pb, eps0  # pa'/(pa' + pb') >= pa*
        assert pair.max_log_ratio == eps0 or (eps0 < 1e-15 and pair.max_log_ratio <= 1e-14)


@pytest.mark.parametrize("method,k", LOWER_PAIRS)
def test_lower_pairs_are_exact_krr_below_eps0(method, k):
    """analyses.pair_for, lower bounds: the pair is *exactly* k-RR (or binary RR) at some eps0'' <= eps0 in
    rational arithmetic (every probability an exact float: first user (p, q, (k - 2) q), clone rates q and
    q or p), within (e^eps0 + k) 2^-52 of eps0 where q* >= 2^-53 (garbling: a lower bound for eps0). Fails
    before (nearest floats: p/q above e^eps0 for some eps0, and p + q + p0 != 1 exactly)."""
    import mpmath
    from fractions import Fraction

    from shuffle_accountant.analyses import pair_for

    kk = 2 if k is None else k
    for eps0 in EPS0_GRID:
        pair = pair_for(method, eps0, 1000, k).pair
        pa, pb, p0 = Fraction(pair.pa), Fraction(pair.pb), Fraction(pair.p0)
        assert pa + pb + p0 == 1, eps0
        if pa == pb:  # eps0'' = 0 (no grid point in [q*, 1/k]): divergence 0
            assert eps0 < 1e-12
            continue
        assert p0 == (kk - 2) * pb, eps0
        if kk == 2:
            assert (Fraction(pair.r0), Fraction(pair.r1)) == (pb, pa), eps0
        else:
            assert Fraction(pair.r0) == Fraction(pair.r1) == pb, eps0
        with mpmath.workdps(60):
            e = mpmath.exp(mpmath.mpf(eps0))
            ratio = mpmath.mpf(pa.numerator) / pa.denominator / (mpmath.mpf(pb.numerator) / pb.denominator)
            assert ratio <= e, eps0
            if 1 / (e + kk - 1) >= mpmath.mpf(2) ** -50:
                assert e - ratio <= (e + kk) ** 2 * mpmath.mpf(2) ** -49, eps0


def test_mixing_lemma_first_user_toward_one_half():
    """The lemma behind pair_for's first user: moving the first user's (pa, pb) toward (1/2, 1/2) does not
    increase the hockey-stick divergence or sum P^a Q^(1-a) of a clone pair, symmetric or not (exact 50-digit
    sums of tests/oracle.py); and it can increase when moved away (the direction matters)."""
    import mpmath

    import oracle

    with mpmath.workdps(50):
        for r0, r1 in [(0.2, 0.2), (0.1, 0.6), (0.0, 0.0)]:
            outer = oracle.clone_pair(7, mpmath.mpf(r0), mpmath.mpf(r1), mpmath.mpf("0.85"), mpmath.mpf("0.15"), 0)
            inner = oracle.clone_pair(7, mpmath.mpf(r0), mpmath.mpf(r1), mpmath.mpf("0.7"), mpmath.mpf("0.3"), 0)
            for eps in ["0", "0.3", "1"]:
                assert oracle.delta_exact(inner, mpmath.mpf(eps)) <= oracle.delta_exact(outer, mpmath.mpf(eps))
            assert oracle.delta_exact(inner, 0) < oracle.delta_exact(outer, 0)
            for alpha in ["1.5", "4", "32"]:
                assert oracle.rdp_exact(inner, mpmath.mpf(alpha)) <= oracle.rdp_exact(outer, mpmath.mpf(alpha))


@SETTINGS
@given(st.floats(1e-300, 0.5), st.floats(0.0, 1.0))
@example(0.25, 2e-12)  # (the difference of logs: 3e-4 relative above a ratio of 4e-12)
def test_max_log_ratio_rounded_up(lo, frac):
    """ClonePair.max_log_ratio is at least the exact log(pa/pb) of the pair's floats (60 digits): the float
    difference of logs fell up to 1e-6 relative short near pa = pb (review rev93s: delta = 0 claimed at
    eps0 = 1.0135680834546642e-10, n = 1 where it is positive); and within 1e-12 relative of it."""
    import mpmath

    from shuffle_accountant.numeric.clones import ClonePair

    hi = lo + frac * (1.0 - 2.0 * lo) if lo < 0.5 else 0.5
    hi = max(hi, lo)
    pair = ClonePair(5, 0.1, 0.1, hi, lo, 1.0 - hi - lo) if hi + lo <= 1.0 else None
    if pair is None or hi == lo:
        return
    with mpmath.workdps(60):
        exact = mpmath.log(mpmath.mpf(hi) / mpmath.mpf(lo))
        assert pair.max_log_ratio >= exact
        assert pair.max_log_ratio <= exact * (1 + mpmath.mpf(1e-12)) + mpmath.mpf(1e-300)


def test_delta_positive_just_below_tiny_eps0():
    """Review rev93s: clones at eps0 = 1.0135680834546642e-10, n = 1 claimed delta = 0 at eps = 1.0135675e-10
    (max_log_ratio below eps0); the exact shuffled delta there is positive (the single user's RR pair, 50
    digits), and the upper end must be at least it."""
    import mpmath

    eps0, e = 1.0135680834546642e-10, 1.0135675e-10
    got = api.delta(eps0, 1, e, method="clones").value
    with mpmath.workdps(50):
        a = mpmath.exp(mpmath.mpf(eps0))
        exact = (a - mpmath.exp(mpmath.mpf(e))) / (a + 1)  # P(x1) - e^eps Q(x1) of one RR report
    assert exact > 0 and got >= exact


@pytest.mark.parametrize("eps0,n,delta,rtol", [(1e-310, 2, 1e-9, 1e-6), (1e-300, 3, 1e-12, 1e-12), (5e-324, 2, 1e-6, 1e-6)])
def test_subnormal_eps0_search(eps0, n, delta, rtol):
    """Review rev93p of 9cb723a: with the search's top at eps0 itself (ratio_cap) a subnormal or tiny eps0 made the
    chord start divide by zero (g_r rounds onto g_top; ZeroDivisionError, CLI exit 4); the answer lies in [0, eps0]."""
    for method in ("clones", "stronger-clones"):
        got = api.epsilon(eps0, n, delta, method, rtol=rtol).value
        assert 0.0 <= got <= eps0

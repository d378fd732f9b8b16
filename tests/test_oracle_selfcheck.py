"""Self-checks of the independent oracle ``tests/oracle.py``.

Nothing here imports ``shuffle_accountant``: these tests validate the oracle
against the mathematical definitions (spec sections 1, 2, 5), against
mechanism-level enumerations of shuffled randomized response, and against
hand computations. Heavier sweeps are marked ``slow``.

Several tests *document spec errors* (names contain ``spec_error``); they
assert the mathematically correct behaviour, which contradicts a sentence of
``/work/shared/spec/amplification.md``.
"""

from __future__ import annotations

import itertools

import mpmath
import pytest
from mpmath import mpf

import oracle as O

DPS = 50
TIGHT = mpf("1e-40")


@pytest.fixture(autouse=True)
def _working_precision():
    """Run every test at 50 digits: comparisons like ``abs(x - y) <= 1e-40`` written
    in a test body would otherwise be evaluated in mpmath's default 15-digit context."""
    with mpmath.workdps(DPS):
        yield


def _params_zoo():
    """(label, n, params) covering the named analyses and the corners of the family."""
    with mpmath.workdps(DPS):
        third = mpf(1) / 3
        return [
            ("clones", 7, O.clones_params(1)),
            ("stronger", 6, O.stronger_clones_params(2)),
            ("krr3", 5, O.krr_params(1, 3)),
            ("krr5", 6, O.krr_params("0.5", 5)),
            ("binary", 6, O.binary_rr_params("1.5")),
            ("n=1", 1, O.clones_params(1)),
            ("r0+r1=0", 5, (0, 0, third, third, third)),
            ("r0+r1=1", 5, (third, 1 - third, "0.7", "0.2", "0.1")),
            ("r0=0", 5, (0, "0.3", "0.6", "0.4", 0)),
            ("r1=0", 5, ("0.3", 0, "0.6", "0.4", 0)),
            ("p0>0 asym", 5, ("0.1", "0.25", "0.5", "0.2", "0.3")),
            ("eps0=inf", 4, O.clones_params(mpf("inf"))),
            ("eps0=0", 4, O.stronger_clones_params(0)),
        ]


ZOO = _params_zoo()


# ---------------------------------------------------------------------------
# construction
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("label,n,params", ZOO, ids=[z[0] for z in ZOO])
def test_sums_to_one_and_two_constructions_agree(label, n, params):
    pair = O.clone_pair(n, *params, dps=DPS)
    with mpmath.workdps(DPS):
        for D in pair:
            assert abs(mpmath.fsum(D.values()) - 1) <= TIGHT
            assert all(v > 0 for v in D.values())
    other = O.clone_pair_by_users(n, *params, dps=DPS)
    assert O.pair_max_abs_diff(pair, other, dps=DPS) <= TIGHT


def test_corner_n1_and_no_clones():
    """n = 1 and r0 + r1 = 0: only the first user's contribution is observed."""
    pa, pb, p0 = mpf("0.5"), mpf("0.3"), mpf("0.2")
    for n, r in ((1, mpf("0.2")), (9, 0)):
        P, Q = O.clone_pair(n, r, r, pa, pb, p0)
        assert P == {(1, 0): pa, (0, 1): pb, (0, 0): p0}
        assert Q == {(1, 0): pb, (0, 1): pa, (0, 0): p0}


def test_corner_all_clones_and_one_sided():
    n = 6
    # r0 + r1 = 1: C = n - 1, so a + b = n - 1 + (first user's count)
    P, _ = O.clone_pair(n, "0.25", "0.75", "0.6", "0.4", 0)
    assert {a + b for a, b in P} == {n}
    # r1 = 0: b comes only from the first user
    P, Q = O.clone_pair(n, "0.3", 0, "0.6", "0.4", 0)
    assert {b for _, b in P} | {b for _, b in Q} == {0, 1}
    # r0 = 0: a comes only from the first user
    P, Q = O.clone_pair(n, 0, "0.3", "0.6", "0.4", 0)
    assert {a for a, _ in P} | {a for a, _ in Q} == {0, 1}


def test_rejects_inexact_first_user_probabilities():
    with pytest.raises(ValueError):
        O.clone_pair(3, "0.1", "0.1", 0.6, 0.3, 0.1)  # float sum is 1 - 1e-17
    with pytest.raises(ValueError):
        O.clone_pair(3, "0.6", "0.6", "0.5", "0.5", 0)  # r0 + r1 > 1


def test_binomial_rows_match_factorial_formula():
    with mpmath.workdps(DPS):
        theta = mpf("0.3")
        rows = O._binomial_rows(12, theta, DPS)
        for c in (0, 1, 5, 12):
            for a in range(c + 1):
                exact = mpmath.binomial(c, a) * theta**a * (1 - theta) ** (c - a)
                assert abs(rows[c][a] - exact) <= TIGHT


# ---------------------------------------------------------------------------
# divergences: basic properties
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["clones", "stronger", "krr3", "krr5", "binary"])
@pytest.mark.parametrize("n", [2, 9])
def test_delta_vanishes_exactly_from_log_ratio(name, n):
    """Spec section 2: delta(eps) = 0 for eps >= log max(pa/pb, pb/pa); and not before."""
    params = dict((z[0], z[2]) for z in ZOO)[name]
    pair = O.clone_pair(n, *params)
    with mpmath.workdps(DPS):
        pa, pb = params[2], params[3]
        eps_max = mpmath.log(max(pa / pb, pb / pa))
        assert O.delta_exact(pair, eps_max) <= TIGHT  # = 0 up to rounding of log/exp
        assert O.delta_exact(pair, eps_max + mpf("1e-30")) == 0
        # the ratio pa/pb is attained (outcome (n, 0) or (1, 0)), so delta > 0 below it
        assert O.delta_exact(pair, eps_max * (1 - mpf("1e-6"))) > 0


def test_eps0_infinite_gives_infinite_epsilon():
    pair = O.clone_pair(4, *O.clones_params(mpf("inf")))
    assert O.epsilon_exact(pair, "1e-6") == mpf("inf")
    assert O.renyi(*pair, 2) == mpf("inf")


@pytest.mark.parametrize("name", ["clones", "stronger", "krr3", "krr5"])
def test_symmetric_pair_directions_agree(name):
    """Spec section 2: r0 = r1 makes (a, b) -> (b, a) map P to Q, so both directions agree."""
    params = dict((z[0], z[2]) for z in ZOO)[name]
    P, Q = O.clone_pair(8, *params)
    with mpmath.workdps(DPS):
        for eps in ("0", "0.3", "0.9"):
            assert abs(O.hockey_stick(P, Q, eps) - O.hockey_stick(Q, P, eps)) <= TIGHT
        for alpha in ("1.5", "2", "7"):
            assert abs(O.renyi(P, Q, alpha) - O.renyi(Q, P, alpha)) <= TIGHT


def test_asymmetric_pair_directions_differ():
    """Non-vacuity of the previous test: binary RR (r0 != r1) is not symmetric."""
    P, Q = O.clone_pair(8, *O.binary_rr_params(1))
    with mpmath.workdps(DPS):
        assert abs(O.renyi(P, Q, 3) - O.renyi(Q, P, 3)) > mpf("1e-6")


@pytest.mark.parametrize("name", ["clones", "krr5", "binary"])
def test_renyi_nondecreasing_in_alpha(name):
    params = dict((z[0], z[2]) for z in ZOO)[name]
    pair = O.clone_pair(10, *params)
    alphas = ["1.01", "1.1", "1.5", "2", "2.5", "3", "4.5", "8", "16", "64"]
    vals = [O.rdp_exact(pair, a) for a in alphas]
    with mpmath.workdps(DPS):
        for lo, hi in zip(vals, vals[1:]):
            assert hi >= lo - TIGHT


def test_renyi_against_direct_power_formula():
    """D_alpha computed as (1/(alpha-1)) log sum P^alpha Q^(1-alpha), literally."""
    P, Q = O.clone_pair(6, *O.krr_params(1, 4))
    with mpmath.workdps(DPS):
        alpha = mpf("2.7")
        s = mpmath.fsum(P[k] ** alpha * Q[k] ** (1 - alpha) for k in P)
        assert abs(O.renyi(P, Q, alpha) - mpmath.log(s) / (alpha - 1)) <= TIGHT


def test_hockey_stick_nonincreasing_in_n_clones():
    """Spec section 2 (derived): epsilon/delta non-increasing in n; clones, n = 2..30."""
    params = O.clones_params(2)
    prev = None
    for n in range(2, 31):
        pair = O.clone_pair(n, *params)
        cur = [O.delta_exact(pair, e) for e in ("0", "0.5", "1.0", "1.7")]
        if prev is not None:
            with mpmath.workdps(DPS):
                assert all(c <= p + TIGHT for c, p in zip(cur, prev)), n
        prev = cur


def test_sorted_evaluation_matches_direct_hockey_stick():
    P, Q = O.clone_pair(15, *O.krr_params("1.3", 4))
    for D1, D2 in ((P, Q), (Q, P)):
        fast = O._SortedDirection(D1, D2)
        for eps in ("0", "0.2", "0.8", "1.29", "2"):
            with mpmath.workdps(DPS):
                assert abs(fast(mpf(eps)) - O.hockey_stick(D1, D2, eps)) <= TIGHT


def test_epsilon_exact_brackets_the_target():
    pair = O.clone_pair(40, *O.clones_params(2))
    delta = mpf("1e-3")
    eps = O.epsilon_exact(pair, delta)
    with mpmath.workdps(DPS):
        assert 0 < eps < 2
        assert O.delta_exact(pair, eps) <= delta
        assert O.delta_exact(pair, eps * (1 - mpf("1e-11"))) > delta
    # TV <= delta gives exactly 0
    tv = O.delta_exact(pair, 0)
    assert O.epsilon_exact(pair, tv) == 0


def _naive_epsilon(pair, delta, rtol=mpf("1e-13")):
    """Plain bisection on delta_exact over [0, 20], no accelerator."""
    lo, hi = mpf(0), mpf(20)
    while hi - lo > rtol * hi:
        mid = (lo + hi) / 2
        if O.delta_exact(pair, mid) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


@pytest.mark.parametrize(
    "n,params,delta",
    [
        (25, O.clones_params(2), "1e-4"),
        (25, O.krr_params("1.5", 6), "1e-6"),
        (20, O.binary_rr_params(1), "1e-3"),
        (18, ("0.15", "0.35", "0.5", "0.2", "0.3"), "1e-5"),
    ],
)
def test_epsilon_exact_matches_naive_bisection(n, params, delta):
    pair = O.clone_pair(n, *params)
    fast = O.epsilon_exact(pair, delta)
    slow = _naive_epsilon(pair, mpf(delta))
    assert abs(fast - slow) <= mpf("2e-12") * slow


def test_epsilon_exact_infinite_ratio_mass():
    P = {"x": mpf("0.5"), "y": mpf("0.5") - mpf("1e-7"), "z": mpf("1e-7")}
    Q = {"x": mpf("0.5"), "y": mpf("0.5")}
    assert O.epsilon_exact((P, Q), "1e-6") == 0
    assert O.epsilon_exact((P, Q), "1e-8") == mpf("inf")


# ---------------------------------------------------------------------------
# composition
# ---------------------------------------------------------------------------


def test_product_pair_rdp_additive_and_normalised():
    p1 = O.clone_pair(5, *O.clones_params(1))
    p2 = O.clone_pair(4, *O.krr_params(2, 3))
    prod = O.product_pair(p1, p2)
    with mpmath.workdps(DPS):
        for D in prod:
            assert abs(mpmath.fsum(D.values()) - 1) <= TIGHT
        for alpha in ("1.5", "3"):
            lhs = O.renyi(prod[0], prod[1], alpha)
            rhs = O.renyi(p1[0], p1[1], alpha) + O.renyi(p2[0], p2[1], alpha)
            assert abs(lhs - rhs) <= TIGHT
        # composition can only hurt
        assert O.delta_exact(prod, "0.5") >= O.delta_exact(p1, "0.5")


# ---------------------------------------------------------------------------
# mechanism-level derivations of the table rows
# ---------------------------------------------------------------------------

KRR_CASES = [(2, 3, "1"), (5, 3, "0.7"), (7, 3, "2.5"), (4, 4, "1"), (6, 4, "0.3"), (4, 5, "2")]


@pytest.mark.parametrize("n,k,eps0", KRR_CASES)
def test_krr_row_is_exact_projection_of_shuffled_krr(n, k, eps0):
    """Spec table, k-RR row: the pair is the (count0, count1) law for x=(0,2..2) vs (1,2..2)."""
    proj = O.shuffled_krr_projection(n, eps0, k)
    table = O.clone_pair(n, *O.krr_params(eps0, k))
    assert O.pair_max_abs_diff(proj, table) <= TIGHT


@pytest.mark.parametrize("n,eps0", [(1, "1"), (2, "1"), (5, "0.4"), (9, "1.7"), (12, "3")])
def test_binary_row_is_shuffled_2rr_with_others_holding_one(n, eps0):
    """Spec table, binary row = shuffled 2RR on x=(0,1,..,1) vs (1,1,..,1) (v = 1), exactly."""
    table = O.clone_pair(n, *O.binary_rr_params(eps0))
    assert O.pair_max_abs_diff(O.shuffled_binary_rr(n, eps0, v=1), table) <= TIGHT
    # v = 0: the same pair after swapping coordinates and directions
    P0, Q0 = O.shuffled_binary_rr(n, eps0, v=0)
    swapped = ({(b, a): w for (a, b), w in Q0.items()}, {(b, a): w for (a, b), w in P0.items()})
    assert O.pair_max_abs_diff(swapped, table) <= TIGHT


def test_binary_rr_is_below_generic_analyses():
    """Binary RR is an ε0-LDP mechanism, so its exact pair lower-bounds the generic ones."""
    n, eps0 = 12, "1.2"
    b = O.clone_pair(n, *O.binary_rr_params(eps0))
    generic = [O.clone_pair(n, *O.clones_params(eps0)), O.clone_pair(n, *O.stronger_clones_params(eps0))]
    for g in generic:
        for eps in ("0", "0.3", "0.8"):
            assert O.delta_exact(b, eps) <= O.delta_exact(g, eps)
        for alpha in ("2", "5"):
            assert O.rdp_exact(b, alpha) <= O.rdp_exact(g, alpha)


def test_histogram_enumerations_agree_with_output_sequences():
    """Multinomial enumeration == user-by-user convolution == brute force over k^n sequences."""
    n, k, eps0 = 4, 4, "1.1"
    mult = O.shuffled_krr_histogram_pair(n, eps0, k)
    conv = tuple(O.shuffled_rr_distribution((x,) + (2,) * (n - 1), eps0, k) for x in (0, 1))
    brute = []
    with mpmath.workdps(DPS):
        for x in (0, 1):
            data = (x,) + (2,) * (n - 1)
            probs = [O.krr_output_probs(v, eps0, k) for v in data]
            D = {}
            for ys in itertools.product(range(k), repeat=n):
                w = mpmath.fprod(probs[i][y] for i, y in enumerate(ys))
                h = tuple(ys.count(j) for j in range(k))
                D[h] = D.get(h, 0) + w
            brute.append(D)
    assert O.pair_max_abs_diff(mult, conv) <= TIGHT
    assert O.pair_max_abs_diff(mult, tuple(brute)) <= TIGHT


@pytest.mark.parametrize("n,eps0", [(3, "1"), (6, "0.5"), (8, "2")])
def test_krr_k3_projection_loses_nothing(n, eps0):
    """k = 3: count2 = n - count0 - count1, so the full histogram and the projection agree."""
    full = O.shuffled_krr_histogram_pair(n, eps0, 3)
    proj = O.shuffled_krr_projection(n, eps0, 3)
    assert len(full[0]) == len(proj[0])
    for eps in ("0", "0.3", "0.7"):
        assert abs(O.delta_exact(full, eps) - O.delta_exact(proj, eps)) <= TIGHT
    for alpha in ("2", "6"):
        assert abs(O.rdp_exact(full, alpha) - O.rdp_exact(proj, alpha)) <= TIGHT


@pytest.mark.parametrize("n,k,eps0", [(2, 4, "1"), (4, 4, "1"), (5, 5, "2"), (6, 4, "0.5")])
def test_spec_error_krr_projection_is_lossy_for_k_ge_4(n, k, eps0):
    """k >= 4: the full histogram is strictly more informative than (count0, count1).

    With others holding 2 the likelihood ratio of a histogram h is
    (e h0 + h1 + h2/e + h3 + ...)/(h0 + e h1 + h2/e + h3 + ...), which depends on
    h2 beyond (h0, h1). So the spec's "exact shuffled k-RR output ... attained"
    is true of the projection only.
    """
    full = O.shuffled_krr_histogram_pair(n, eps0, k)
    proj = O.shuffled_krr_projection(n, eps0, k)
    table = O.clone_pair(n, *O.krr_params(eps0, k))
    for alpha in ("2", "5"):
        assert O.rdp_exact(full, alpha) > O.rdp_exact(proj, alpha) + mpf("1e-6")
        assert O.rdp_exact(full, alpha) > O.rdp_exact(table, alpha) + mpf("1e-6")


def test_spec_error_krr_row_is_not_an_upper_bound_hand_computed():
    """n = 2, k = 3, eps0 = 1, x = (0, 0) vs x' = (1, 0): the table pair underestimates.

    With e = e^eps0, D = e + 2, t = e^eps: true shuffled output (multisets of two
    reports) has {0,0} with P = e^2/D^2, Q = e/D^2 (ratio e) and every other
    ratio below t for log((e+1)/2) < eps < log e, so delta_true = e (e - t)/D^2.
    The table pair has (2,0) with ratio e and (1,0) with P = (e^2+1)/D^2,
    Q = (e+1)/D^2, so for eps < log((e^2+1)/(e+1)):
    delta_table = (e^2 + e + 1 - t (e + 2))/D^2 and
    delta_true - delta_table = (2t - e - 1)/D^2 > 0 once t > (e+1)/2.
    """
    n, k = 2, 3
    with mpmath.workdps(DPS):
        e = mpmath.e
        D = e + 2
        true_pair = tuple(O.shuffled_rr_distribution((x, 0), 1, k) for x in (0, 1))
        table = O.clone_pair(n, *O.krr_params(1, k))
        eps = mpf("0.7")
        t = mpmath.exp(eps)
        d_true = O.delta_exact(true_pair, eps)
        d_table = O.delta_exact(table, eps)
        assert abs(d_true - e * (e - t) / D**2) <= TIGHT
        assert abs(d_table - (e**2 + e + 1 - t * (e + 2)) / D**2) <= TIGHT
        assert d_true > d_table  # 0.08603 > 0.07214
        # ... and the C-observed pair is still above the truth
        assert O.delta_exact(O.clone_pair_with_c(n, *O.krr_params(1, k)), eps) >= d_true
        # Renyi too
        assert O.rdp_exact(true_pair, 8) > O.rdp_exact(table, 8)


def _worst_excess(n, k, eps0, bound_pair, dps=30):
    """max over datasets (first user 0 vs 1, others arbitrary) of divergence(truth) - divergence(bound)."""
    worst = mpf("-inf")
    eps_grid = ("0.1", "0.4", "0.7", "1.0")
    alphas = ("2", "8")
    b_delta = [O.delta_exact(bound_pair, e, dps=dps) for e in eps_grid]
    b_rdp = [O.rdp_exact(bound_pair, a, dps=dps) for a in alphas]
    for others in itertools.combinations_with_replacement(range(k), n - 1):
        truth = tuple(O.shuffled_rr_distribution((x,) + others, eps0, k, dps=dps) for x in (0, 1))
        with mpmath.workdps(dps):
            for e, b in zip(eps_grid, b_delta):
                worst = max(worst, O.delta_exact(truth, e, dps=dps) - b)
            for a, b in zip(alphas, b_rdp):
                worst = max(worst, O.rdp_exact(truth, a, dps=dps) - b)
    return worst


@pytest.mark.parametrize("n,k,eps0", [(3, 3, "1"), (3, 4, "1.5")])
def test_spec_error_krr_table_vs_c_observed_pair_all_datasets(n, k, eps0):
    """Over all datasets of tiny size: the table pair is exceeded, the C-observed pair is not."""
    params = O.krr_params(eps0, k, dps=30)
    assert _worst_excess(n, k, eps0, O.clone_pair(n, *params, dps=30)) > mpf("1e-3")
    assert _worst_excess(n, k, eps0, O.clone_pair_with_c(n, *params, dps=30)) <= mpf("1e-25")


@pytest.mark.slow
@pytest.mark.parametrize("n,k,eps0", [(4, 3, "1"), (5, 3, "1.5"), (4, 4, "0.5"), (4, 5, "2"), (5, 4, "1")])
def test_spec_error_krr_table_vs_c_observed_pair_all_datasets_slow(n, k, eps0):
    params = O.krr_params(eps0, k, dps=30)
    assert _worst_excess(n, k, eps0, O.clone_pair(n, *params, dps=30)) > mpf("1e-4")
    assert _worst_excess(n, k, eps0, O.clone_pair_with_c(n, *params, dps=30)) <= mpf("1e-25")


@pytest.mark.slow
@pytest.mark.parametrize("n,k,eps0", [(12, 3, "1"), (20, 3, "0.2"), (10, 4, "2"), (8, 6, "1.5")])
def test_krr_row_is_exact_projection_slow(n, k, eps0):
    proj = O.shuffled_krr_projection(n, eps0, k)
    table = O.clone_pair(n, *O.krr_params(eps0, k))
    assert O.pair_max_abs_diff(proj, table) <= TIGHT


# ---------------------------------------------------------------------------
# spec section 2: conditional decomposition for p0 = 0
# ---------------------------------------------------------------------------

COND_CASES = [
    ("clones e0=1", O.clones_params(1)),
    ("clones e0=3", O.clones_params(3)),
    ("stronger e0=1.5", O.stronger_clones_params("1.5")),
    ("binary e0=1", O.binary_rr_params(1)),
    ("asymmetric", ("0.15", "0.35", "0.7", "0.3", 0)),
]


def _check_conditional_monotone(n, params, eps_grid, alphas):
    pair = O.clone_pair(n, *params)
    cond = O.conditional_pairs(pair)
    assert sorted(cond) == list(range(n))
    with mpmath.workdps(DPS):
        # exact decomposition: delta(eps) = sum_c Pr[C=c] h_c(eps); same for sum P^a Q^(1-a)
        for eps in eps_grid:
            for i in (0, 1):
                lhs = O.hockey_stick(pair[i], pair[1 - i], eps)
                rhs = mpmath.fsum(w * O.hockey_stick(pc[i], pc[1 - i], eps) for w, pc in cond.values())
                assert abs(lhs - rhs) <= TIGHT
        for a in alphas:
            a = mpf(a)
            lhs = mpmath.exp((a - 1) * O.renyi(pair[0], pair[1], a))
            rhs = mpmath.fsum(w * mpmath.exp((a - 1) * O.renyi(pc[0], pc[1], a)) for w, pc in cond.values())
            assert abs(lhs - rhs) <= mpf("1e-35") * lhs
        # derived claim: every h_c non-increasing in c
        rows = []
        for c in sorted(cond):
            _, (Pc, Qc) = cond[c]
            row = [O.hockey_stick(Pc, Qc, e) for e in eps_grid]
            row += [O.hockey_stick(Qc, Pc, e) for e in eps_grid]
            row += [O.renyi(Pc, Qc, a) for a in alphas] + [O.renyi(Qc, Pc, a) for a in alphas]
            rows.append(row)
        for c in range(1, len(rows)):
            for j, (now, before) in enumerate(zip(rows[c], rows[c - 1])):
                assert now <= before + TIGHT, (c, j, now, before)


@pytest.mark.parametrize("label,params", COND_CASES, ids=[c[0] for c in COND_CASES])
def test_conditional_divergences_nonincreasing_in_c(label, params):
    _check_conditional_monotone(16, params, ("0", "0.25", "0.6", "1.2"), ("1.5", "3", "10"))


@pytest.mark.slow
@pytest.mark.parametrize("label,params", COND_CASES, ids=[c[0] for c in COND_CASES])
def test_conditional_divergences_nonincreasing_in_c_slow(label, params):
    _check_conditional_monotone(60, params, ("0", "0.1", "0.3", "0.6", "1", "2"), ("1.1", "2", "4", "20"))


@pytest.mark.parametrize("eps0,eps", [("1", "0.3"), ("2", "0.9"), ("3", "2.2")])
def test_fmt21_cutoff_is_the_hockey_stick_set(eps0, eps):
    """Spec section 2: given C = c, {P_c > e^eps Q_c} = {a > tau_c}, tau_c = K(c+1)/(1+K)."""
    n = 20
    pair = O.clone_pair(n, *O.clones_params(eps0))
    with mpmath.workdps(DPS):
        t = mpmath.exp(mpf(eps))
        a0 = mpmath.exp(mpf(eps0)) / (mpmath.exp(mpf(eps0)) + 1)
        K = (t * a0 - (1 - a0)) / (a0 - t * (1 - a0))
        for c, (_, (Pc, Qc)) in O.conditional_pairs(pair).items():
            tau = K * (c + 1) / (1 + K)
            for (a, b), p in Pc.items():
                assert (p > t * Qc.get((a, b), 0)) == (a > tau), (c, a)


@pytest.mark.parametrize("eps0,k", [("1", 3), ("2", 5), ("0.3", 10)])
def test_krr_likelihood_ratio_monotone_in_a_for_fixed_total(eps0, k):
    """Spec section 2 (p0 > 0): for fixed t = a + b the ratio P/Q is non-decreasing in a."""
    P, Q = O.clone_pair(14, *O.krr_params(eps0, k))
    with mpmath.workdps(DPS):
        by_t = {}
        for (a, b), p in P.items():
            by_t.setdefault(a + b, []).append((a, p / Q[(a, b)]))
        for lst in by_t.values():
            lst.sort()
            for (_, r1), (_, r2) in zip(lst, lst[1:]):
                assert r2 >= r1 * (1 - TIGHT)


@pytest.mark.slow
def test_hockey_stick_nonincreasing_in_n_slow():
    for params in (O.stronger_clones_params(1), O.krr_params(2, 4), O.binary_rr_params("0.5")):
        prev = None
        for n in range(1, 61):
            pair = O.clone_pair(n, *params, dps=30)
            cur = [O.delta_exact(pair, e, dps=30) for e in ("0", "0.2", "0.5", "1")]
            cur += [O.rdp_exact(pair, a, dps=30) for a in ("2", "8")]
            if prev is not None:
                assert all(c <= p + mpf("1e-25") for c, p in zip(cur, prev)), n
            prev = cur

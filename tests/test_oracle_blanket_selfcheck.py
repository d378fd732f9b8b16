"""Self-checks of the blanket oracle (``tests/oracle_blanket.py``).

The oracle is only useful if it is right, so it is checked here against
(i) the literal definition of the shuffled output (every *ordered* vector of
reports enumerated, then grouped into its multiset), (ii) its own second routes
(closed-form multinomial families versus user-by-user convolution; the blanket
bound by its closed form versus by exact histogram divergences; spec section 3's
trinomial formula), and (iii) the numbers stated in the spec and in issue 10.
Nothing here imports ``shuffle_accountant``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from itertools import combinations_with_replacement, permutations, product

import mpmath
import oracle_blanket as ob
import pytest
from mpmath import mpf

TIGHT = mpf("1e-30")


@pytest.fixture(autouse=True)
def _precision() -> Iterator[None]:
    with mpmath.workdps(50):
        yield


def ordered_enumeration_delta(m: ob.Matrix, data_p: list[int], data_q: list[int], eps: float) -> mpf:
    """Literal definition: enumerate every ordered report vector, group by multiset."""
    s = len(m[0])
    lp: dict[tuple[int, ...], mpf] = {}
    lq: dict[tuple[int, ...], mpf] = {}
    for ys in product(range(s), repeat=len(data_p)):
        key = tuple(sorted(ys))
        pp = mpf(1)
        qq = mpf(1)
        for xp, xq, y in zip(data_p, data_q, ys):
            pp *= m[xp][y]
            qq *= m[xq][y]
        lp[key] = lp.get(key, mpf(0)) + pp
        lq[key] = lq.get(key, mpf(0)) + qq
    t = mpmath.exp(mpf(eps))
    fwd = mpmath.fsum(max(lp[h] - t * lq[h], 0) for h in lp)
    bwd = mpmath.fsum(max(lq[h] - t * lp[h], 0) for h in lp)
    return max(fwd, bwd)


def all_matrices(eps0: float) -> list[tuple[str, ob.Matrix]]:
    return [
        ("krr2", ob.krr_matrix(2, eps0)),
        ("krr3", ob.krr_matrix(3, eps0)),
        ("krr5", ob.krr_matrix(5, eps0)),
        ("sue2", ob.sue_matrix(2, eps0)),
        ("sue3", ob.sue_matrix(3, eps0)),
        ("oue2", ob.oue_matrix(2, eps0)),
        ("oue3", ob.oue_matrix(3, eps0)),
        ("olh2g2", ob.olh_matrix(2, 2, eps0)),
        ("olh3g2", ob.olh_matrix(3, 2, eps0)),
        ("olh2g3", ob.olh_matrix(2, 3, eps0)),
        ("had2", ob.hadamard_matrix(2, eps0)),
        ("had3", ob.hadamard_matrix(3, eps0)),
        ("had4", ob.hadamard_matrix(4, eps0)),
        ("had7", ob.hadamard_matrix(7, eps0)),
        ("sub3d1", ob.subset_matrix(3, 1, eps0)),
        ("sub4d2", ob.subset_matrix(4, 2, eps0)),
        ("sub5d2", ob.subset_matrix(5, 2, eps0)),
    ]


# ---------------------------------------------------------------------------
# the matrices
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("eps0", [0.3, 1.0, 3.0])
def test_rows_sum_to_one_and_eps0_is_the_stated_one(eps0: float) -> None:
    for name, m in all_matrices(eps0):
        for row in m:
            assert abs(mpmath.fsum(row) - 1) < TIGHT, name
            assert min(row) > 0, name
        assert abs(ob.eps0_of_matrix(m) - mpf(eps0)) < TIGHT, name


def test_matrix_shapes_and_paper_structure() -> None:
    e = mpmath.exp(mpf(1))
    # k-RR: p on the diagonal, q elsewhere
    m = ob.krr_matrix(4, 1)
    assert abs(m[2][2] - e / (e + 3)) < TIGHT and abs(m[2][0] - 1 / (e + 3)) < TIGHT
    # SUE: every bit kept with p = e^{1/2} / (e^{1/2} + 1)
    m = ob.sue_matrix(3, 1)
    outs = ob.sue_outputs(3)
    p = mpmath.exp(mpf(1) / 2) / (mpmath.exp(mpf(1) / 2) + 1)
    for x in range(3):
        for i in range(3):
            marg = mpmath.fsum(m[x][j] for j, bits in enumerate(outs) if bits[i] == 1)
            assert abs(marg - (p if i == x else 1 - p)) < TIGHT
    # OUE: true bit 1 w.p. 1/2, other bits 1 w.p. 1/(e+1)
    m = ob.oue_matrix(3, 1)
    for x in range(3):
        for i in range(3):
            marg = mpmath.fsum(m[x][j] for j, bits in enumerate(outs) if bits[i] == 1)
            assert abs(marg - (mpf(1) / 2 if i == x else 1 / (e + 1))) < TIGHT
    # OLH: the hash is uniform over all g^k functions; given the hash, g-RR on H(x)
    m = ob.olh_matrix(3, 2, 1)
    labels = ob.olh_outputs(3, 2)
    assert len(labels) == 2**3 * 2
    for x in range(3):
        for hsh in product(range(2), repeat=3):
            cols = [j for j, (h, _) in enumerate(labels) if h == hsh]
            assert abs(mpmath.fsum(m[x][j] for j in cols) - mpf(1) / 8) < TIGHT
            hit = next(j for j in cols if labels[j][1] == hsh[x])
            assert abs(m[x][hit] * 8 - e / (e + 1)) < TIGHT
    # Hadamard response: K = smallest power of 2 >= k+1, |C_x| = K/2, |C_x & C_x'| = K/4,
    # total mass e/(e+1) on C_x
    for k, big_k in [(2, 4), (3, 4), (4, 8), (7, 8), (8, 16)]:
        kk, sets = ob.hadamard_sets(k)
        assert kk == big_k
        assert all(len(c) == big_k // 2 for c in sets)
        assert all(len(set(a) & set(b)) == big_k // 4 for a, b in permutations(sets, 2))
        m = ob.hadamard_matrix(k, 1)
        for x, c in enumerate(sets):
            assert abs(mpmath.fsum(m[x][j] for j in c) - e / (e + 1)) < TIGHT
    # subset selection with d = 1 is k-RR
    a, b = ob.subset_matrix(4, 1, 1), ob.krr_matrix(4, 1)
    assert max(abs(u - v) for ra, rb in zip(a, b) for u, v in zip(ra, rb)) < TIGHT
    m = ob.subset_matrix(5, 2, 1)
    z = math.comb(4, 1) * e + math.comb(4, 2)
    assert abs(m[0][0] - e / z) < TIGHT  # subset (0, 1) contains 0


def test_bad_inputs_are_refused() -> None:
    with pytest.raises(ValueError):
        ob.krr_matrix(1, 1)
    with pytest.raises(ValueError):
        ob.subset_matrix(4, 4, 1)
    with pytest.raises(ValueError):
        ob.olh_matrix(3, 1, 1)
    with pytest.raises(ValueError):
        ob.dataset_delta(ob.krr_matrix(3, 1), [0, 3], 0, 1, 0.5)
    with pytest.raises(ValueError):
        ob.krr_family_delta(5, 2, 1, 0.5, 2)  # a third value needs k >= 3
    with pytest.raises(ValueError):
        ob.krr_family_delta(5, 3, 1, 0.5, 5)
    with pytest.raises(ValueError):
        ob.krr_family_delta(5, 3, 1, 0.5, 1, holders="x2")
    with pytest.raises(ValueError):
        ob.binary_rr_family_delta(5, 1, 0.5, 5)
    with pytest.raises(ValueError):
        ob.dataset_delta([[mpf(1), mpf(0)]], [], 0, 0, 0.5)  # one row
    with pytest.raises(ValueError):
        ob.eps0_of_matrix([[mpf("0.5"), mpf("0.6")], [mpf("0.5"), mpf("0.5")]])
    with pytest.raises(ValueError):
        ob.blanket_delta([[mpf(1), mpf(0)], [mpf("0.5"), mpf("0.5")]], 3, 0.1)
    assert ob.eps0_of_matrix([[mpf(1), mpf(0)], [mpf("0.5"), mpf("0.5")]]) == mpmath.inf


# ---------------------------------------------------------------------------
# exact divergences of datasets
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name,n",
    [
        ("krr3", 4),
        ("krr5", 3),
        ("sue3", 3),
        ("oue2", 4),
        ("olh2g2", 3),
        ("had3", 3),
        ("had7", 2),
        ("sub4d2", 3),
    ],
)
def test_dataset_delta_is_the_literal_definition(name: str, n: int) -> None:
    m = dict(all_matrices(1.3))[name]
    k = len(m)
    cases = [
        ([0] * (n - 1), 0, 1),
        ([1] * (n - 1), 0, 1),
        ([k - 1] * (n - 1), 0, 1),
        ([(i * 7) % k for i in range(n - 1)], k - 1, 0),
    ]
    for others, x1, x1p in cases:
        for eps in (0.0, 0.2, 0.9):
            got = ob.dataset_delta(m, others, x1, x1p, eps)
            want = ordered_enumeration_delta(m, [x1, *others], [x1p, *others], eps)
            assert abs(got - want) < TIGHT, (others, x1, x1p, eps)


def test_spec_counterexample_n2_k3() -> None:
    """blanket.md section 3: n = 2, eps0 = 1, k = 3, eps = 0.7, datasets (0,0) vs
    (1,0) give 0.0860 > 0.0721 (the third-value pair, k = 3 so projection = full)."""
    m = ob.krr_matrix(3, 1)
    same = ob.dataset_delta(m, [0], 0, 1, 0.7)
    third = ob.dataset_delta(m, [2], 0, 1, 0.7)
    assert abs(same - ordered_enumeration_delta(m, [0, 0], [1, 0], 0.7)) < TIGHT
    assert abs(same - mpf("0.08602519670668")) < mpf("1e-14")
    assert abs(third - mpf("0.07213511320730")) < mpf("1e-14")
    assert abs(ob.krr_family_delta(2, 3, 1, 0.7, 1) - same) < TIGHT
    assert abs(ob.krr_family_delta(2, 3, 1, 0.7, 0) - third) < TIGHT
    assert abs(ob.krr_family_delta(2, 3, 1, 0.7, 0, projected=True) - third) < TIGHT
    assert abs(ob.krr_worst_delta(2, 3, 1, 0.7) - same) < TIGHT


@pytest.mark.parametrize(
    "name,n", [("krr3", 3), ("krr2", 5), ("sue2", 3), ("oue3", 2), ("had4", 3), ("sub4d2", 2)]
)
def test_worst_dataset_is_the_max_over_an_independent_enumeration(name: str, n: int) -> None:
    m = dict(all_matrices(0.8))[name]
    k = len(m)
    for eps in (0.0, 0.3):
        best = max(
            ob.dataset_delta(m, list(others), a, b, eps)
            for others in combinations_with_replacement(range(k), n - 1)
            for a, b in permutations(range(k), 2)
        )
        got, x1, x1p, counts = ob.worst_dataset(m, n, eps)
        assert abs(got - best) < TIGHT
        others = [x for x, c in enumerate(counts) for _ in range(c)]
        assert abs(ob.dataset_delta(m, others, x1, x1p, eps) - got) < TIGHT


@pytest.mark.parametrize("k,n", [(2, 2), (2, 6), (3, 2), (3, 5), (4, 3), (4, 5)])
def test_krr_worst_equals_generic_worst(k: int, n: int) -> None:
    for eps0 in (0.3, 2.0):
        m = ob.krr_matrix(k, eps0)
        for eps in (0.0, eps0 / 3, eps0 * 0.8):
            fast, counts = ob.krr_worst_dataset(n, k, eps0, eps)
            assert abs(fast - ob.worst_delta(m, n, eps)) < TIGHT
            others = [x for x, c in enumerate(counts) for _ in range(c)]
            assert abs(ob.dataset_delta(m, others, 0, 1, eps) - fast) < TIGHT


@pytest.mark.slow
@pytest.mark.parametrize("k,n", [(3, 12), (4, 8)])
def test_krr_worst_equals_generic_worst_larger(k: int, n: int) -> None:
    m = ob.krr_matrix(k, 1)
    for eps in (0.1, 0.5):
        assert abs(ob.krr_worst_delta(n, k, 1, eps) - ob.worst_delta(m, n, eps)) < TIGHT


@pytest.mark.parametrize("n,k", [(2, 3), (4, 3), (6, 3), (5, 4), (3, 5)])
def test_families_closed_form_vs_convolution_and_below_worst(n: int, k: int) -> None:
    for eps0 in (0.5, 2.0):
        m = ob.krr_matrix(k, eps0)
        for eps in (0.0, 0.3 * eps0, 0.9 * eps0):
            worst = ob.krr_worst_delta(n, k, eps0, eps)
            for a in range(n):
                fam = ob.krr_family_delta(n, k, eps0, eps, a)
                fam_p = ob.krr_family_delta(n, k, eps0, eps, a, holders="x1p")
                conv = ob.dataset_delta(m, [0] * a + [2] * (n - 1 - a), 0, 1, eps)
                conv_p = ob.dataset_delta(m, [1] * a + [2] * (n - 1 - a), 0, 1, eps)
                assert abs(fam - conv) < TIGHT and abs(fam_p - conv_p) < TIGHT
                assert abs(fam - fam_p) < TIGHT  # relabelling 0 <-> 1
                proj = ob.krr_family_delta(n, k, eps0, eps, a, projected=True)
                assert proj <= fam + TIGHT  # data processing
                if k == 3:
                    assert abs(proj - fam) < TIGHT  # h_2 = n - h_0 - h_1
                assert fam <= worst + TIGHT


def test_binary_rr_family_matches_convolution_and_is_below_worst() -> None:
    for n in (1, 2, 5, 8):
        for eps0 in (0.4, 1.5):
            m2 = ob.krr_matrix(2, eps0)
            for eps in (0.0, 0.5 * eps0):
                worst = ob.krr_worst_delta(n, 2, eps0, eps)
                fams = []
                for mm in range(n):
                    fam = ob.binary_rr_family_delta(n, eps0, eps, mm)
                    conv = ob.dataset_delta(m2, [0] * mm + [1] * (n - 1 - mm), 0, 1, eps)
                    assert abs(fam - conv) < TIGHT
                    fams.append(fam)
                assert max(fams) <= worst + TIGHT
                # binary RR: every dataset is in this family (the others hold 0 or 1)
                assert abs(max(fams) - worst) < TIGHT


def test_issue_binary_rr_m_scan_n1000() -> None:
    """Issue 10: n = 1000, eps0 = 1, delta = 1e-8: m = 1 gives eps 0.1629468, m = 0 0.1628442."""
    target = mpf("1e-8")
    assert ob.binary_rr_family_delta(1000, 1, mpf("0.16294675"), 1) > target
    assert ob.binary_rr_family_delta(1000, 1, mpf("0.16294690"), 1) <= target
    assert ob.binary_rr_family_delta(1000, 1, mpf("0.16284415"), 0) > target
    assert ob.binary_rr_family_delta(1000, 1, mpf("0.16284430"), 0) <= target


# ---------------------------------------------------------------------------
# the blanket bound
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "n,k,eps0,eps",
    [
        (1, 3, 1.0, 0.2),
        (3, 2, 0.3, 0.1),
        (5, 3, 1.0, 0.3),
        (7, 4, 3.0, 1.0),
        (10, 3, 0.3, 0.05),
        (6, 5, 2.0, 0.0),
    ],
)
def test_blanket_enumeration_equals_krr_formula(n: int, k: int, eps0: float, eps: float) -> None:
    got = ob.blanket_delta(ob.krr_matrix(k, eps0), n, eps)
    assert abs(got - ob.blanket_delta_krr_formula(n, k, eps0, eps)) < mpf("1e-25")


@pytest.mark.parametrize(
    "name,n", [("krr3", 5), ("krr5", 3), ("sue3", 3), ("oue2", 4), ("olh2g2", 3), ("had4", 3), ("sub4d2", 3)]
)
def test_blanket_closed_form_equals_histogram_form(name: str, n: int) -> None:
    """The n (not n - 1) and the 1/(gamma n): the closed form equals the average over
    Bin(n-1, gamma) blanket counts of exact histogram divergences."""
    m = dict(all_matrices(1.1))[name]
    for eps in (0.0, 0.25, 0.8):
        a = ob.blanket_delta(m, n, eps)
        b = ob.blanket_delta_histograms(m, n, eps)
        assert abs(a - b) < TIGHT, eps


@pytest.mark.parametrize("eps0", [0.5, 2.0])
def test_blanket_is_exact_for_one_user(eps0: float) -> None:
    for name, m in all_matrices(eps0):
        if len(m[0]) > 40:
            continue
        for eps in (0.0, 0.4 * eps0):
            local = ob.worst_delta(m, 1, eps)
            assert abs(ob.blanket_delta(m, 1, eps) - local) < TIGHT, name


def test_blanket_parameters_krr() -> None:
    gamma, omega = ob.blanket_parameters(ob.krr_matrix(5, 1))
    e = mpmath.exp(mpf(1))
    assert abs(gamma - 5 / (e + 4)) < TIGHT
    assert all(abs(w - mpf(1) / 5) < TIGHT for w in omega)


KRR_GRID_FAST = [(n, k, eps0) for k in (2, 3, 4) for eps0 in (0.3, 1.0, 3.0) for n in (2, 3, 5)] + [
    (10, 3, eps0) for eps0 in (0.3, 1.0, 3.0)
]
KRR_GRID_SLOW = [(n, k, eps0) for k in (2, 3, 4) for eps0 in (0.3, 1.0, 3.0) for n in (4, 6, 7, 8, 9, 10)]
EPS_FRACTIONS = (0.0, 0.05, 0.2, 0.5, 0.8, 0.95)


def _check_blanket_above_worst(n: int, k: int, eps0: float) -> None:
    for frac in EPS_FRACTIONS:
        eps = mpf(eps0) * mpf(frac)
        blanket = ob.blanket_delta_krr_formula(n, k, eps0, eps)
        worst = ob.krr_worst_delta(n, k, eps0, eps)
        assert blanket >= worst - TIGHT, (n, k, eps0, frac, blanket, worst)


@pytest.mark.parametrize("n,k,eps0", KRR_GRID_FAST)
def test_blanket_above_worst_krr(n: int, k: int, eps0: float) -> None:
    _check_blanket_above_worst(n, k, eps0)


@pytest.mark.slow
@pytest.mark.parametrize("n,k,eps0", KRR_GRID_SLOW)
def test_blanket_above_worst_krr_full_grid(n: int, k: int, eps0: float) -> None:
    _check_blanket_above_worst(n, k, eps0)


TINY = [
    ("sue2", 4),
    ("sue3", 3),
    ("oue2", 4),
    ("oue3", 3),
    ("olh2g2", 3),
    ("olh3g2", 2),
    ("olh2g3", 2),
    ("had3", 4),
    ("had4", 3),
    ("sub4d2", 3),
    ("sub5d2", 2),
]


@pytest.mark.parametrize("name,n", TINY)
def test_blanket_above_worst_other_randomizers(name: str, n: int) -> None:
    for eps0 in (0.5, 2.0):
        m = dict(all_matrices(eps0))[name]
        for frac in (0.0, 0.3, 0.7):
            eps = mpf(eps0) * mpf(frac)
            blanket = ob.blanket_delta(m, n, eps)
            worst = ob.worst_delta(m, n, eps)
            assert blanket >= worst - TIGHT, (name, n, eps0, frac, blanket, worst)


@pytest.mark.slow
@pytest.mark.parametrize(
    "name,n", [("sue3", 4), ("oue3", 5), ("olh3g2", 4), ("had4", 5), ("sub4d2", 5), ("sue2", 8)]
)
def test_blanket_above_worst_other_randomizers_larger(name: str, n: int) -> None:
    m = dict(all_matrices(1.0))[name]
    for eps in (0.0, 0.2, 0.6):
        assert ob.blanket_delta(m, n, eps) >= ob.worst_delta(m, n, eps) - TIGHT


# ---------------------------------------------------------------------------
# epsilon search and the spec's reference numbers
# ---------------------------------------------------------------------------


def test_epsilon_from_bisection() -> None:
    f = lambda e: mpmath.exp(-e)
    got = ob.epsilon_from(f, mpmath.exp(mpf("-0.5")), 0, 3)
    assert abs(got - mpf("0.5")) < mpf("1e-12")
    assert got >= mpf("0.5") - mpf("1e-40")  # never below the exact answer
    assert ob.epsilon_from(f, 2, 0, 3) == 0
    with pytest.raises(ValueError):
        ob.epsilon_from(f, mpf("1e-3"), 0, 1)


def test_spec_vldb_example_n10() -> None:
    """blanket.md section 5: n = 10, eps0 = 1, k = 3, delta = 1e-6: the variation-ratio
    value 0.9412 (= the third-value pair) is exceeded: all others holding x1 give 0.9998."""
    delta = mpf("1e-6")
    e_same = ob.epsilon_from(lambda e: ob.krr_family_delta(10, 3, 1, e, 9), delta, 0, 1)
    e_third = ob.epsilon_from(lambda e: ob.krr_family_delta(10, 3, 1, e, 0), delta, 0, 1)
    assert abs(e_same - mpf("0.9998")) < mpf("5e-5")
    assert abs(e_third - mpf("0.9412")) < mpf("5e-5")
    # the worst case over all datasets is at least the attained value; bracket it
    assert ob.krr_worst_delta(10, 3, 1, e_same - mpf("1e-9")) > delta
    assert (
        ob.krr_family_delta(10, 3, 1, e_same, 9)
        <= delta
        < ob.krr_family_delta(10, 3, 1, e_same - mpf("1e-12"), 9)
    )
    # and the blanket bound lies above it
    assert ob.blanket_delta_krr_formula(10, 3, 1, e_same - mpf("1e-9")) > delta


def test_spec_vldb_example_n100() -> None:
    """blanket.md section 5: n = 100, eps0 = 3, k = 3, delta = 1e-6: theirs 2.7028,
    all other users holding x1 give 2.9867."""
    delta = mpf("1e-6")
    assert ob.krr_family_delta(100, 3, 3, mpf("2.98665"), 99) > delta
    assert ob.krr_family_delta(100, 3, 3, mpf("2.98666"), 99) <= delta
    assert ob.krr_family_delta(100, 3, 3, mpf("2.70275"), 0) > delta
    assert ob.krr_family_delta(100, 3, 3, mpf("2.70276"), 0) <= delta


@pytest.mark.slow
def test_issue_k7_full_versus_projection() -> None:
    """Issue 10: k = 7, eps0 = 3, n = 20, delta = 1e-2, third-value family:
    projection on the two counts 2.1535, full histogram 2.2957."""
    delta = mpf("1e-2")
    assert ob.krr_family_delta(20, 7, 3, mpf("2.2956"), 0) > delta
    assert ob.krr_family_delta(20, 7, 3, mpf("2.2958"), 0) <= delta
    assert ob.krr_family_delta(20, 7, 3, mpf("2.1534"), 0, projected=True) > delta
    assert ob.krr_family_delta(20, 7, 3, mpf("2.1536"), 0, projected=True) <= delta


def test_a_misread_normalisation_would_be_caught() -> None:
    """Sensitivity of the soundness check: reading the theorem as ``M ~ Bin(n-1, gamma)``
    with the factor ``1/(gamma n)`` gives a value *below* the exact worst case
    (n = 3, binary RR, eps0 = 0.3, eps = 0: 0.0570 < 0.0761), while the correct form
    (``Bin(n, gamma)``, ``1/(gamma n)``) stays above it."""
    n, k, eps0, eps = 3, 2, 0.3, 0.0
    worst = ob.krr_worst_delta(n, k, eps0, eps)
    misread = ob.blanket_delta_krr_formula(n - 1, k, eps0, eps) * (n - 1) / n
    assert misread < worst - mpf("0.01")
    assert ob.blanket_delta(ob.krr_matrix(k, eps0), n, eps) >= worst - TIGHT

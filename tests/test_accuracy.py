"""Frequency estimation with a shuffled randomizer (``shuffle_accountant.accuracy``, issue 12).

Oracles that share no code with the module: the randomizers' output distributions written out
here in exact rationals (``e^eps0`` chosen rational), the estimator applied to them by
enumeration; seeded Monte Carlo simulations of the randomizers and the estimator; the forward
computation for every search answer.
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import combinations, product

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shuffle_accountant import accuracy, api
from shuffle_accountant.errors import InvalidParameter
from shuffle_accountant.randomizers import KRR, OUE, MatrixRandomizer, make_randomizer

# ---------------------------------------------------------------------------------------
# Exact oracle: each randomizer as {input: {output: probability}} and its support sets.
# ---------------------------------------------------------------------------------------


def _krr(k: int, e: Fraction):
    w = e + k - 1
    dist = {x: {y: (e if y == x else Fraction(1)) / w for y in range(k)} for x in range(k)}
    return dist, lambda y: {y}


def _unary(k: int, p: Fraction, q: Fraction):
    dist = {}
    for x in range(k):
        row = {}
        for bits in product((0, 1), repeat=k):
            pr = Fraction(1)
            for v, b in enumerate(bits):
                on = p if v == x else q
                pr *= on if b else 1 - on
            row[bits] = pr
        dist[x] = row
    return dist, lambda y: {v for v, b in enumerate(y) if b}


def _olh(k: int, g: int, e: Fraction):
    w = e + g - 1
    funcs = list(product(range(g), repeat=k))
    dist = {x: {(h, y): (e if h[x] == y else Fraction(1)) / w / len(funcs) for h in funcs for y in range(g)}
            for x in range(k)}
    return dist, lambda hy: {v for v in range(k) if hy[0][v] == hy[1]}


def _hadamard(k: int, e: Fraction):
    big = 1
    while big <= k:
        big *= 2

    def inside(x: int, y: int) -> bool:
        return bin((x + 1) & y).count("1") % 2 == 0

    dist = {x: {y: (2 * e if inside(x, y) else Fraction(2)) / (big * (1 + e)) for y in range(big)} for x in range(k)}
    return dist, lambda y: {v for v in range(k) if inside(v, y)}


def _subset(k: int, d: int, e: Fraction):
    subsets = list(combinations(range(k), d))
    w = math.comb(k - 1, d - 1) * e + math.comb(k - 1, d)
    dist = {x: {z: (e if x in z else Fraction(1)) / w for z in subsets} for x in range(k)}
    return dist, lambda z: set(z)


# (name, parameters, eps0, oracle) with e^eps0 rational: 3 (and 9 for SUE, whose bits use e^(eps0/2) = 3)
CASES = [
    ("krr", {"k": 2}, math.log(3), _krr(2, Fraction(3))),
    ("krr", {"k": 5}, math.log(3), _krr(5, Fraction(3))),
    ("sue", {"k": 3}, math.log(9), _unary(3, Fraction(3, 4), Fraction(1, 4))),
    ("oue", {"k": 4}, math.log(3), _unary(4, Fraction(1, 2), Fraction(1, 4))),
    ("olh", {"k": 3, "g": 3}, math.log(3), _olh(3, 3, Fraction(3))),
    ("hadamard", {"k": 5}, math.log(3), _hadamard(5, Fraction(3))),
    ("subset", {"k": 5, "d": 2}, math.log(3), _subset(5, 2, Fraction(3))),
]
IDS = [f"{c[0]}-{'-'.join(map(str, c[1].values()))}" for c in CASES]


def _oracle_moments(dist, support):
    """Exact p*, q* (checked equal for every other input), and per-user variance of the support
    estimator for the own input and for every other input."""
    k = len(dist)
    hit = {(x, v): sum((pr for y, pr in dist[x].items() if v in support(y)), Fraction(0))
           for x in range(k) for v in range(k)}
    p_star = {hit[(v, v)] for v in range(k)}
    q_star = {hit[(x, v)] for x in range(k) for v in range(k) if x != v}
    assert len(p_star) == 1 and len(q_star) == 1, "the support probabilities depend on the input pair"
    p, q = p_star.pop(), q_star.pop()
    var = {}
    for x in range(k):
        for v in range(k):
            a = {y: ((1 if v in support(y) else 0) - q) / (p - q) for y in dist[x]}
            mean = sum(dist[x][y] * a[y] for y in a)
            assert mean == (1 if x == v else 0)  # unbiased, exactly
            var[(x, v)] = sum(dist[x][y] * (a[y] - mean) ** 2 for y in a)
    return p, q, var


@pytest.mark.parametrize("name,params,eps0,oracle", CASES, ids=IDS)
def test_closed_forms_match_exact_enumeration(name, params, eps0, oracle):
    dist, support = oracle
    p, q, var = _oracle_moments(dist, support)
    r = make_randomizer(name, eps0, **params)
    ps, qs, diff = accuracy.support_probabilities(r)
    assert ps == pytest.approx(float(p), rel=1e-13) and qs == pytest.approx(float(q), rel=1e-13)
    assert diff == pytest.approx(float(p - q), rel=1e-13)
    est = accuracy.estimator(r)
    k = len(dist)
    own = {var[(v, v)] for v in range(k)}
    other = {var[(x, v)] for x in range(k) for v in range(k) if x != v}
    assert len(own) == 1 and len(other) == 1
    assert est.s2_own[0] == pytest.approx(float(own.pop()), rel=1e-12)
    assert est.s2_other_max[0] == pytest.approx(float(other.pop()), rel=1e-12)
    per_user_sum = {sum(var[(x, v)] for v in range(k)) for x in range(k)}
    assert len(per_user_sum) == 1  # E||f̂ - f||^2 does not depend on the dataset
    n = 1234
    err = accuracy.frequency_error(r, n)
    assert err.l2_squared.value == pytest.approx(float(per_user_sum.pop()) / n, rel=1e-12)
    assert err.l2_squared.kind == "exact" and err.l2.kind == "upper" and err.linf.kind == "upper"
    assert err.l2.value >= math.sqrt(err.l2_squared.value)


@pytest.mark.parametrize("name,params,eps0,oracle", CASES, ids=IDS)
def test_least_squares_route_is_unbiased_and_matches_enumeration(name, params, eps0, oracle):
    """The matrix route (least-squares inverse) on the randomizer's matrix: its variance by
    enumeration here, independently of the module's matrix algebra."""
    r = make_randomizer(name, eps0, **params)
    m = r.matrix()
    est = accuracy.estimator(MatrixRandomizer(m))
    a = np.linalg.pinv(m.T)  # the least-squares inverse, computed another way
    k = m.shape[0]
    assert np.allclose(a @ m.T, np.eye(k), atol=1e-12)
    s2 = np.array([[m[x] @ a[v] ** 2 - (m[x] @ a[v]) ** 2 for v in range(k)] for x in range(k)])
    assert np.allclose(est.s2_own, np.diag(s2), rtol=1e-9)
    assert np.allclose(est.s2_sum, s2.sum(axis=1), rtol=1e-9)
    support = accuracy.estimator(r)
    if m.shape[0] == m.shape[1] or name == "subset":  # square: the unique unbiased linear estimator
        assert np.allclose(est.s2_own, support.s2_own[0], rtol=1e-9)
        assert np.allclose(est.s2_other_max, support.s2_other_max[0], rtol=1e-9)


# ---------------------------------------------------------------------------------------
# Seeded Monte Carlo of the randomizers and the estimator.
# ---------------------------------------------------------------------------------------


def _simulate(name: str, params: dict, eps0: float, data: np.ndarray, trials: int, rng) -> np.ndarray:
    """``trials`` runs of the randomizer on ``data`` (inputs in [k]) and the support estimator:
    the estimated frequencies, shape (trials, k). Written from the randomizers' definitions."""
    k, n = params["k"], len(data)
    e = math.exp(eps0)
    counts = np.zeros((trials, k))
    x = np.broadcast_to(data, (trials, n))
    if name == "krr":
        keep = rng.random((trials, n)) < e / (e + k - 1)
        other = (x + rng.integers(1, k, size=(trials, n))) % k  # uniform over the other k - 1 values
        y = np.where(keep, x, other)
        hits = np.stack([(y == v).sum(axis=1) for v in range(k)], axis=1)
        p, q = e / (e + k - 1), 1 / (e + k - 1)
    elif name == "oue":
        p, q = 0.5, 1 / (e + 1)
        hits = np.zeros((trials, k))
        for v in range(k):
            prob = np.where(x == v, p, q)
            hits[:, v] = (rng.random((trials, n)) < prob).sum(axis=1)
    elif name == "olh":
        g = params["g"]
        h = rng.integers(0, g, size=(trials, n, k))  # a uniformly random function [k] -> [g] per user
        hx = np.take_along_axis(h, x[..., None], axis=2)[..., 0]
        keep = rng.random((trials, n)) < e / (e + g - 1)
        y = np.where(keep, hx, (hx + rng.integers(1, g, size=(trials, n))) % g)
        hits = np.stack([(h[..., v] == y).sum(axis=1) for v in range(k)], axis=1)
        p, q = e / (e + g - 1), 1 / g
    elif name == "hadamard":
        big = 1 << k.bit_length()
        ys = np.arange(big)
        parity = np.array([[bin((v + 1) & y).count("1") % 2 for y in ys] for v in range(k)])  # 0: in C_v
        inside = rng.random((trials, n)) < e / (1 + e)
        # uniform over C_x (inside) or its complement
        y = np.empty((trials, n), dtype=int)
        for v in range(k):
            sel = x == v
            cin, cout = ys[parity[v] == 0], ys[parity[v] == 1]
            y[sel & inside] = rng.choice(cin, size=int((sel & inside).sum()))
            y[sel & ~inside] = rng.choice(cout, size=int((sel & ~inside).sum()))
        hits = np.stack([(parity[v][y] == 0).sum(axis=1) for v in range(k)], axis=1)
        p, q = e / (e + 1), 0.5
    elif name == "subset":
        d = params["d"]
        keys = rng.random((trials, n, k))
        contains = rng.random((trials, n)) < d * e / (d * e + k - d)
        # the subset: x plus d - 1 random others, or d random others
        keys = np.where(np.arange(k)[None, None, :] == x[..., None], np.where(contains, -1.0, 2.0)[..., None], keys)
        order = np.argsort(keys, axis=2)[..., :d]
        member = np.zeros((trials, n, k), dtype=bool)
        np.put_along_axis(member, order, True, axis=2)
        hits = member.sum(axis=1)
        p = d * e / (d * e + k - d)
        q = d * ((d - 1) * e + k - d) / ((k - 1) * (d * e + k - d))
    else:  # pragma: no cover
        raise AssertionError(name)
    counts = (hits - n * q) / (p - q)
    return counts / n


MC_CASES = [("krr", {"k": 4}, 1.5), ("oue", {"k": 4}, 1.0), ("olh", {"k": 4, "g": 3}, 1.2),
            ("hadamard", {"k": 5}, 1.0), ("subset", {"k": 6, "d": 2}, 1.3)]


@pytest.mark.parametrize("name,params,eps0", MC_CASES, ids=[c[0] for c in MC_CASES])
def test_variance_against_monte_carlo(name, params, eps0):
    rng = np.random.default_rng(20261123)
    k, n, trials = params["k"], 600, 1500
    data = np.repeat(np.arange(k - 1), n // (k - 1))[:n]  # value k - 1 is held by nobody
    data = np.concatenate([data, np.zeros(n - len(data), dtype=int)])
    f = np.bincount(data, minlength=k) / n
    est = _simulate(name, params, eps0, data, trials, rng)
    r = make_randomizer(name, eps0, **params)
    e = accuracy.estimator(r)
    own, other = float(e.s2_own[0]), float(e.s2_other_max[0])
    assert np.all(np.abs(est.mean(axis=0) - f) < 5 * np.sqrt((own + other) / n / trials))  # unbiased
    for v in range(k):
        exact = (f[v] * own + (1 - f[v]) * other) / n
        se = exact * math.sqrt(2.0 / (trials - 1)) * 1.2  # the estimator is nearly Gaussian
        assert abs(est[:, v].var(ddof=1) - exact) < 4 * se, (v, est[:, v].var(ddof=1), exact)
    l2sq = ((est - f) ** 2).sum(axis=1)
    exact_l2 = accuracy.frequency_error(r, n).l2_squared.value
    assert abs(l2sq.mean() - exact_l2) < 4 * l2sq.std(ddof=1) / math.sqrt(trials)


@pytest.mark.parametrize("name,params,eps0,beta", [("krr", {"k": 4}, 1.5, 0.2), ("oue", {"k": 4}, 1.0, 0.3),
                                                     ("subset", {"k": 6, "d": 2}, 1.3, 0.25)])
def test_linf_bound_against_monte_carlo(name, params, eps0, beta):
    """The bound is exceeded in at most a beta fraction of runs (plus noise), on the dataset
    whose bins are most variable, and it is not absurdly loose (within 3x of the simulated
    1 - beta quantile)."""
    rng = np.random.default_rng(7)
    k, n, trials = params["k"], 500, 2000
    data = np.zeros(n, dtype=int)  # everybody holds value 0: the worst bin variance at f = 1
    f = np.bincount(data, minlength=k) / n
    est = _simulate(name, params, eps0, data, trials, rng)
    worst = np.abs(est - f).max(axis=1)
    bound = accuracy.frequency_error(make_randomizer(name, eps0, **params), n, beta).linf.value
    exceed = float((worst > bound).mean())
    assert exceed <= beta + 3 * math.sqrt(beta * (1 - beta) / trials)
    assert bound <= 3.0 * float(np.quantile(worst, 1 - beta))


def test_least_squares_matrix_against_monte_carlo():
    rng = np.random.default_rng(11)
    raw = rng.random((3, 5)) + 0.2
    m = raw / raw.sum(axis=1, keepdims=True)
    r = MatrixRandomizer(m)
    est = accuracy.estimator(r)
    a = np.linalg.solve(m @ m.T, m)
    n, trials = 400, 3000
    data = np.array([0] * 250 + [2] * 150)
    f = np.bincount(data, minlength=3) / n
    cum = np.cumsum(m, axis=1)
    u = rng.random((trials, n))
    y = (u[..., None] > cum[data][None, :, :]).sum(axis=2)  # inverse-CDF sampling of each user's output
    fhat = np.stack([a[v][y].sum(axis=1) for v in range(3)], axis=1) / n
    s2 = np.array([[m[x] @ a[v] ** 2 - (m[x] @ a[v]) ** 2 for v in range(3)] for x in range(3)])
    for v in range(3):
        exact = (f @ s2[:, v]) / n
        assert abs(fhat[:, v].var(ddof=1) - exact) < 4 * 1.2 * exact * math.sqrt(2 / (trials - 1))
    worst_input = float(np.max(s2.sum(axis=1))) / n
    assert accuracy.frequency_error(r, n).l2_squared.value == pytest.approx(worst_input, rel=1e-9)
    assert est.kind == "least-squares"
    assert float(np.max(np.abs(fhat.mean(axis=0) - f))) < 5 * math.sqrt(float(s2.max()) / n / trials)


def test_rank_deficient_matrix_is_not_applicable():
    m = np.array([[0.5, 0.5], [0.5, 0.5], [0.25, 0.75]])
    err = accuracy.frequency_error(MatrixRandomizer(m), 100)
    assert all(b.kind == "not applicable" and b.value is None for b in err.bounds())
    assert "full row rank" in err.linf.validity
    with pytest.raises(accuracy.NoEstimator):
        accuracy.estimator(MatrixRandomizer(m))


# ---------------------------------------------------------------------------------------
# Properties.
# ---------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(k=st.integers(2, 10**6), eps0=st.floats(0.01, 20), n=st.integers(1, 10**10), beta=st.floats(1e-9, 0.9))
def test_linf_bound_is_monotone_and_above_the_standard_deviation(k, eps0, n, beta):
    r = KRR(k=k, eps0=eps0)
    err = accuracy.frequency_error(r, n, beta)
    assert err.linf.value >= math.sqrt(err.variance_worst_bin.value)  # ln(2k/beta) >= ln 4 > 1
    assert accuracy.frequency_error(r, 2 * n, beta).linf.value < err.linf.value
    assert accuracy.frequency_error(r, n, beta / 2).linf.value > err.linf.value
    assert err.variance_empty_bin.value <= err.variance_worst_bin.value <= err.l2_squared.value * (1 + 1e-12)


@settings(max_examples=30, deadline=None)
@given(k=st.integers(2, 1000), eps0=st.floats(0.05, 10))
def test_error_falls_with_eps0(k, eps0):
    for name in ("krr", "oue", "sue", "hadamard"):
        a = accuracy.frequency_error(make_randomizer(name, eps0, k=k), 1000).l2_squared.value
        b = accuracy.frequency_error(make_randomizer(name, eps0 * 1.1, k=k), 1000).l2_squared.value
        assert b < a


def test_tiny_and_large_eps0_stay_finite():
    for eps0 in (1e-9, 50.0):
        for name in ("krr", "oue", "sue", "olh", "hadamard", "subset"):
            params = {"k": 7} if name != "olh" or eps0 < 20 else {"k": 7, "g": 10**6}
            err = accuracy.frequency_error(make_randomizer(name, eps0, **params), 10**6)
            assert all(math.isfinite(b.value) and b.value >= 0 for b in err.bounds())


# ---------------------------------------------------------------------------------------
# Privacy side and the searches, re-checked with the forward computation.
# ---------------------------------------------------------------------------------------


def test_central_epsilon_best_is_the_least_certified_bound():
    r = KRR(k=10, eps0=2.0)
    b = accuracy.central_epsilon(r, 20_000, 1e-6)
    values = {m: api.epsilon(2.0, 20_000, 1e-6, m, randomizer=r).value for m in ("blanket", "stronger-clones", "clones", "krr")}
    # a repeated blanket query may reuse a shared engine's (equally certified) bracket: equal to rtol
    assert b.kind == "upper" and b.method == min(values, key=values.get)
    assert b.value == pytest.approx(min(values.values()), rel=2e-6)


def test_largest_eps0_is_verified_forward():
    factory = accuracy.named_factory("oue", k=20)
    b = accuracy.largest_eps0(factory, 50_000, 0.5, 1e-6, method="stronger-clones", rtol=1e-4)
    e0, nxt = b.value, b.details["next_eps0"]
    assert b.kind == "lower" and e0 < nxt <= e0 * (1 + 2e-4)
    assert api.delta(e0, 50_000, 0.5, "stronger-clones", randomizer=OUE(k=20, eps0=e0)).value <= 1e-6
    assert api.delta(nxt, 50_000, 0.5, "stronger-clones", randomizer=OUE(k=20, eps0=nxt)).value > 1e-6


def test_largest_eps0_best_is_at_least_the_cheap_one():
    factory = accuracy.named_factory("krr", k=4)
    cheap = accuracy.largest_eps0(factory, 2000, 1.0, 1e-6, method="stronger-clones", rtol=1e-3).value
    best = accuracy.largest_eps0(factory, 2000, 1.0, 1e-6, method="best", rtol=1e-3)
    assert best.value >= cheap and best.details["certified_delta"] <= 1e-6


def _feasible(n: int, e0: float, k: int, target: float, eps: float, delta: float, beta: float) -> bool:
    """Recomputed from the pieces: the error bound and api.delta (stronger-clones)."""
    r = KRR(k=k, eps0=e0)
    err = accuracy.linf_bound(accuracy.estimator(r), n, beta)[0]
    return err <= target and api.delta(e0, n, eps, "stronger-clones", randomizer=r).value <= delta


def test_smallest_n_with_fixed_eps0_is_verified_forward():
    factory = accuracy.named_factory("krr", k=10)
    b = accuracy.smallest_n(factory, 0.02, 0.5, 1e-6, 0.05, "stronger-clones", eps0=2.0)
    n = int(b.value)
    assert b.kind == "upper"
    assert _feasible(n, 2.0, 10, 0.02, 0.5, 1e-6, 0.05)
    assert not _feasible(n - 1, 2.0, 10, 0.02, 0.5, 1e-6, 0.05)


def test_smallest_n_choosing_eps0_is_verified_forward_and_beats_fixed_choices():
    factory = accuracy.named_factory("krr", k=10)
    b = accuracy.smallest_n(factory, 0.01, 0.5, 1e-6, 0.05, "stronger-clones")
    n, e0 = int(b.value), b.details["eps0"]
    assert _feasible(n, e0, 10, 0.01, 0.5, 1e-6, 0.05)
    prev_e0 = b.details["previous_eps0"]
    assert prev_e0 is None or not _feasible(n - 1, prev_e0, 10, 0.01, 0.5, 1e-6, 0.05)
    for fixed in (1.0, 3.0, 6.0):  # no fixed eps0 does better than the eps0 chosen per n
        assert not _feasible(n - 1, fixed, 10, 0.01, 0.5, 1e-6, 0.05)


def test_frequency_report_with_target_eps():
    rep = accuracy.frequency(None, 30_000, 1e-6, 0.05, "stronger-clones", eps=0.4,
                             factory=accuracy.named_factory("hadamard", k=30))
    assert rep.eps0_search is not None and rep.randomizer.eps0 == rep.eps0_search.value
    assert rep.epsilon.value <= 0.4 * (1 + 1e-4)
    assert [b.quantity for b in rep.bounds()][:2] == ["eps0", "epsilon"]


# ---------------------------------------------------------------------------------------
# Hostile inputs.
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("beta", [0.0, 1.0, -0.1, float("nan"), float("inf"), "x"])
def test_bad_beta(beta):
    with pytest.raises(InvalidParameter, match="beta"):
        accuracy.frequency_error(KRR(k=3, eps0=1.0), 100, beta)


@pytest.mark.parametrize("n", [0, -5, 10**13, 1.5, float("nan")])
def test_bad_n(n):
    with pytest.raises(InvalidParameter, match="n"):
        accuracy.frequency_error(KRR(k=3, eps0=1.0), n)


@pytest.mark.parametrize("target", [0.0, 1.0, -1e-3, float("nan")])
def test_bad_target_error(target):
    with pytest.raises(InvalidParameter, match="target-error"):
        accuracy.smallest_n(accuracy.named_factory("krr", k=3), target, 0.5, 1e-6)


def test_bad_randomizer_parameters():
    with pytest.raises(InvalidParameter, match="k"):
        accuracy.named_factory("krr", k=1)
    with pytest.raises(InvalidParameter):
        accuracy.named_factory("nope", k=3)
    with pytest.raises(InvalidParameter, match="method"):
        accuracy.central_epsilon(KRR(k=3, eps0=1.0), 100, 1e-6, "magic")
    with pytest.raises(InvalidParameter, match="krr"):
        accuracy.central_epsilon(OUE(k=3, eps0=1.0), 100, 1e-6, "krr")
    with pytest.raises(InvalidParameter):
        accuracy.estimator("krr")  # type: ignore[arg-type]

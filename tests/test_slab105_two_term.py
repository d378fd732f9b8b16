"""The kernel at clone count 0 by its two terms where p or q is near 0 (renyi._two_term_excess, slab105): such pairs
(clones from eps0 ~ 1.1 on) were evaluated term by term (one call of the window machinery per curve, ~0.7 ms); _g's
certified error covers them. Tested against an independent 60-digit sum K(0) - 1 = u^a v^(1-a) + (1-u)^a (1-v)^(1-a)
- 1 (the Bernoulli pair of the first user's weights), and against the term-by-term bracket."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from shuffle_accountant.analyses import pair_for
from shuffle_accountant.numeric import renyi as R

ORDERS = np.array([1.01, 1.1, *R.DEFAULT_ORDERS, 1500.0, 4096.0, 1e5])


def _log_excess_exact(u: float, v: float, alphas: np.ndarray) -> list:
    with mpmath.workdps(60):
        uu, vv = mpmath.mpf(u), mpmath.mpf(v)
        out = []
        for a in alphas:
            al = mpmath.mpf(float(a))
            k = uu**al * vv ** (1 - al) + (1 - uu) ** al * (1 - vv) ** (1 - al) - 1
            out.append(mpmath.log(k) if k > 0 else -mpmath.inf)
        return out


def _check(u: np.ndarray, v: np.ndarray, s: float, orders: np.ndarray = ORDERS) -> np.ndarray:
    up, lo, ok = R._two_term_excess(u, v, s, orders)
    for i in range(u.size):
        if not ok[i]:
            continue
        exact = _log_excess_exact(float(u[i]), float(v[i]), orders)
        for j, e in enumerate(exact):
            assert lo[i, j] <= e <= up[i, j], (u[i], v[i], s, orders[j], lo[i, j], float(e), up[i, j])
            assert up[i, j] - lo[i, j] <= R._TWO_TERM_WIDTH
    return ok


@pytest.mark.parametrize("method, k", [("clones", None), ("stronger-clones", None), ("krr-lower", 3)])
def test_two_term_brackets_the_exact_kernel_at_zero(method, k):
    """Both directions of the pairs at eps0 0.5 .. 16: where the two-term bracket is taken it holds the 60-digit
    log(K(0) - 1) at every order (1.01 .. 1e5, and the default orders alone); it is taken at the default orders from
    eps0 = 2 to 10, where p(0) or q(1)
    is below 1/2 (the terms the old rule left to the window sums)."""
    for eps0 in (0.5, 1.0, 1.2, 2.0, 3.0, 4.0, 6.0, 8.0, 10.0, 12.0, 16.0):
        pr = pair_for(method, eps0, 10_000, k).pair
        for p in (pr,) if pr.symmetric else (pr, pr.mirrored()):
            d = R.RenyiDirection(p)
            u, v = np.array([d.pa1]), np.array([d.pb1])
            _check(u, v, d.s)
            ok = _check(u, v, d.s, np.array(R.DEFAULT_ORDERS))
            ss = d.s * (1.0 - d.s)
            bp, bq = (u - d.s) / ss, (v - d.s) / ss
            y = np.array([-d.s, 1.0 - d.s])
            plain = bool(np.all(np.minimum(bp[:, None] * y, bq[:, None] * y) > -0.5))
            if 2.0 <= eps0 <= 10.0:
                assert not plain and ok.all(), (method, eps0)


def test_two_term_brackets_random_pairs():
    """Random weights u, v (taken as exact) and splits s, many with p or q near 0 at an end: every bracket taken holds
    the 60-digit value; most are taken."""
    rng = np.random.default_rng(1051)
    taken = 0
    for _ in range(40):
        s = float(rng.uniform(0.05, 0.95))
        u = rng.uniform(1e-3, 1.0 - 1e-3, 3)
        v = np.clip(u * np.exp(rng.uniform(-4.0, 4.0, 3)), 1e-4, 1.0 - 1e-4)
        taken += int(_check(u, v, s, np.array(R.DEFAULT_ORDERS)).sum())
    assert taken > 60


def test_two_term_overlaps_the_window_sums():
    """Where the two-term bracket is taken for a non-plain pair, it overlaps the term-by-term bracket of the same
    kernel (c = 0) and its upper end is within 1e-7 (relative, in log(K - 1)) of it."""
    for eps0 in (2.0, 3.0, 6.0, 10.0):
        d = R.RenyiDirection(pair_for("clones", eps0, 10_000).pair)
        u, v = np.array([d.pa1]), np.array([d.pb1])
        orders = np.array(R.DEFAULT_ORDERS)
        up, lo, ok = R._two_term_excess(u, v, d.s, orders)
        assert ok.all()
        wu, wl, done = R._exact_excess(np.zeros(1), u, v, d.s, orders, d.rel, 2e-5)
        assert done.all()
        assert np.all(lo <= wu) and np.all(wl <= up)
        assert np.all(up - wu <= 1e-7 * np.maximum(np.abs(wu), 1.0)), float(np.max(up - wu))
        assert math.isfinite(float(np.max(up)))


@pytest.mark.parametrize("s", [0.999998318567657, 0.5, 1e-6])
def test_two_term_with_q_near_zero_holds_or_declines(s):
    """Review rev105s: kernels whose q = v or 1 - v is within a few ulp of 0 (no real pair has them: u + v = 1 for every
    method; _g charges q's part as inf there, so the bracket is not taken): where taken, the bracket holds the 60-digit
    sum; e.g. u = 0.641328169139375, v = 1 - 8e-16, alpha = 32 (with q's charge dropped to 0 the bracket was taken and
    missed the truth by 2e-9)."""
    eps = np.array([8e-16, 1e-15, 4e-15, 1e-13, 1e-10])
    u = np.tile(np.array([0.641328169139375, 0.2, 0.9, 0.999]), eps.size)
    tiny = np.repeat(eps, 4)
    for alpha in (1.5, 2.0, 8.0, 32.0, 256.0):  # (one order a call: a kernel is taken only where every order's is narrow)
        _check(u, 1.0 - tiny, s, np.array([alpha]))
        _check(1.0 - u, tiny, s, np.array([alpha]))
        # p near 0 (_g's absolute charge, and since rev105s the pair's b charged there too)
        _check(1.0 - tiny, u, s, np.array([alpha]))
        _check(tiny, 1.0 - u, s, np.array([alpha]))

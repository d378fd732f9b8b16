"""Strided slabs (slab107, issue 13): ``renyi._StrideSlab`` bounds a slab's sum from every ``stride``-th clone count.

Its two row measures (``renyi._stride_weights``) must satisfy, for every convex ``kappa >= 0`` on the counts
``c1 .. c2``, ``sum_j omega_j kappa(r_j) >= sum_c Pr[C = c] kappa(c)``, and for every convex non-increasing
``kappa >= 0``, ``sum_c Pr[C = c] kappa(c) >= sum_j nu_j kappa(r_j)``. Both sides are linear in ``kappa``, and every
such ``kappa`` on the integers is a non-negative combination of the constant 1, the hinges ``(k - c)_+`` (and, for
the upper end, ``(c - k)_+``), so checking those hinges at every ``k`` checks the inequalities for all ``kappa`` at
those parameters: done here with 40-digit binomial masses (mpmath, no code of the package). Then the curve's brackets
with strided slabs forced at small ``n`` against the independent brute-force oracle (``tests/oracle.py``)."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

import oracle
from stride_spies import force_strides, record_strided_slabs
from shuffle_accountant.analyses import pair_for
from shuffle_accountant.numeric import renyi as R


def _exact_masses(c1: int, c2: int, N: int, p: float) -> list:
    with mpmath.workdps(40):
        pm = mpmath.mpf(p)
        return [mpmath.binomial(N, c) * pm**c * (1 - pm) ** (N - c) for c in range(c1, c2 + 1)]


@pytest.mark.parametrize(
    "c1, c2, N, p, stride",
    [
        (4213, 4400, 99999, 0.04978706836786383, 8),  # eps0 = 3, n = 1e5's slab (its lowest counts, steep P)
        (4900, 5100, 99999, 0.04978706836786383, 12),  # around the mean
        (3217, 3330, 199999, 0.018315638888734123, 5),
        (10, 200, 1000, 0.135, 16),  # small counts, P rising then falling
        (0, 64, 199, 0.1353352832366127, 13),  # from c = 0 (the oracle test's slab)
        (50, 121, 400, 0.2, 7),  # a short last interval
        (8, 137, 160, 0.00786480756925279, 5),  # log Pr spans ~590 nats, just inside _STRIDE_MAX_SPREAD (slab109)
    ],
)
def test_weights_bracket_every_hinge(c1, c2, N, p, stride):
    rows, (lom, lom2), (lnu, lnu2) = R._stride_weights(c1, c2, float(N), p, stride)
    assert np.array_equal(lom, lom2) and np.array_equal(lnu, lnu2)
    assert rows[0] == c1 and rows[-1] == c2 and np.all(np.diff(rows) > 0) and np.all(np.diff(rows) <= stride)
    P = _exact_masses(c1, c2, N, p)
    cs = list(range(c1, c2 + 1))
    with mpmath.workdps(40):
        om = [mpmath.exp(mpmath.mpf(float(x))) for x in lom]
        nu = [mpmath.exp(mpmath.mpf(float(x))) if x > -np.inf else mpmath.mpf(0) for x in lnu]
        rr = [int(r) for r in rows]
        total = mpmath.fsum(P)
        assert mpmath.fsum(nu) <= total <= mpmath.fsum(om)  # (the constant 1)
        # no mass made up or lost beyond the margins (the gammaln bracket's, ~4e-15 of log N! ~ 1e-8 at N = 2e5)
        assert mpmath.fsum(om) <= total * (1 + mpmath.mpf("1e-7"))
        assert mpmath.fsum(nu) >= total * (1 - mpmath.mpf("1e-7"))  # (pieces move to the next row, none is dropped)
        worst_lo, worst_up = mpmath.mpf(1), mpmath.mpf(1)
        for k in range(c1, c2 + 1):
            down = mpmath.fsum(pc * max(k - c, 0) for pc, c in zip(P, cs))  # (k - c)_+: convex, non-increasing
            up_d = mpmath.fsum(w * max(k - r, 0) for w, r in zip(om, rr))
            lo_d = mpmath.fsum(w * max(k - r, 0) for w, r in zip(nu, rr))
            assert lo_d <= down <= up_d, k
            rise = mpmath.fsum(pc * max(c - k, 0) for pc, c in zip(P, cs))  # (c - k)_+: convex (upper end only)
            assert rise <= mpmath.fsum(w * max(r - k, 0) for w, r in zip(om, rr)), k
            if down > 0:
                worst_lo, worst_up = min(worst_lo, lo_d / down), max(worst_up, up_d / down)
        # the ends are not trivially loose (and the two measures differ: neither would serve for the other end)
        assert worst_lo < 1 and worst_up > 1


def test_upper_weights_are_not_a_lower_end():
    """The hat weights over-count a convex function (what makes them an upper end): using them for the lower end
    would put it above the true sum."""
    c1, c2, N, p = 4213, 4400, 99999, 0.04978706836786383
    rows, (lom, _), _ = R._stride_weights(c1, c2, float(N), p, 8)
    P = _exact_masses(c1, c2, N, p)
    k = int(rows[5]) + 3
    with mpmath.workdps(40):
        true = mpmath.fsum(pc * max(k - c, 0) for pc, c in zip(P, range(c1, c2 + 1)))
        hat = mpmath.fsum(mpmath.exp(mpmath.mpf(float(x))) * max(k - int(r), 0) for x, r in zip(lom, rows))
    assert hat > true


def _oracle_rdp(sp, orders):
    pr = sp.pair
    with mpmath.workdps(30):
        u = mpmath.mpf(pr.pa) / (mpmath.mpf(pr.pa) + mpmath.mpf(pr.pb))  # the exact quotient the engine certifies
        P, Q = oracle.clone_pair(pr.n, mpmath.mpf(pr.r0), mpmath.mpf(pr.r1), u, 1 - u, 0, dps=30)
        return [max(oracle.renyi(P, Q, a, dps=30), oracle.renyi(Q, P, a, dps=30)) for a in orders]


@pytest.mark.parametrize("method, eps0, n", [("clones", 2.0, 200), ("stronger-clones", 3.0, 160)])
def test_forced_strided_slabs_hold_the_oracle(monkeypatch, method, eps0, n):
    """With strided slabs forced at small ``n`` (every size limit off, a coarse stride), the certified brackets hold the
    brute-force Renyi divergence of the clone pair (30 digits)."""
    force_strides(monkeypatch)
    built = record_strided_slabs(monkeypatch)
    sp = pair_for(method, eps0, n)
    orders = [1.5, 4.0, 16.0, 128.0, 1024.0]
    exact = _oracle_rdp(sp, orders)
    for rtol in (1e-3, 1e-6):
        built.clear()
        got = R.renyi_bounds(sp.pair, orders, rtol=rtol, scale=sp.scale)
        strides = [slab.stride for slab in built]
        assert strides and max(strides) >= 8, strides  # (the strided slab was used)
        for a, lo, up, ex in zip(orders, got.lower, got.upper, exact):
            assert lo <= ex <= up, (rtol, a, lo, float(ex), up)
        assert got.converged

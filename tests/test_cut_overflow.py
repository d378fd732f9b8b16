"""The clone kernel's cut where ``rho*`` overflows (``eps0 = 700``, ``eps`` within 1e-9 of it): exactly ``c + 1``
(``numeric.clones._cut`` docstring), no RuntimeWarning (pytest runs with warnings as errors), and unchanged
elsewhere. The exact cut is computed in mpmath from its definition, sharing no code with ``_cut``."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from shuffle_accountant import api
from shuffle_accountant.numeric.clones import _cut


def exact_cut(c: int, u: float, v: float, eps: float, s: float) -> int:
    """The least ``k`` with ``rho(a) = a (1 - s) / ((c - a + 1) s) > rho*`` for every ``a >= k`` (``c + 1``: none), at 80
    digits from the float inputs."""
    with mp.workdps(80):
        g = mp.e ** mp.mpf(eps)
        u_, v_, s_ = mp.mpf(u), mp.mpf(v), mp.mpf(s)
        rho_star = (g * (1 - v_) - (1 - u_)) / (u_ - g * v_)
        for a in range(c + 1):
            if mp.mpf(a) * (1 - s_) / ((c - a + 1) * s_) > rho_star:
                return a
        return c + 1


@pytest.mark.parametrize("c", [1, 2, 10, 1000])
@pytest.mark.parametrize("s", [0.5, 0.1, 1e-3])
def test_cut_where_rho_overflows_is_the_empty_tail(c, s):
    eps = 700.0 * (1.0 - 1e-9)
    gm1 = math.expm1(eps)
    v = 1.0 / (math.exp(700.0) + 1.0)
    u = 1.0 - v
    du = u - v
    coef_b = du - gm1 * v
    assert coef_b > 0.0
    with np.errstate(over="ignore"):
        assert np.isinf((np.float64(du) + np.float64(gm1) * (1.0 - v)) / np.float64(coef_b))  # the overflow at issue
    k = _cut(np.array([float(c)]), v, du, coef_b, np.float64(gm1), s)
    assert k[0] == exact_cut(c, u, v, eps, s) == c + 1


@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
@pytest.mark.parametrize("c", [3, 50, 400])
def test_cut_matches_the_exact_cut_without_overflow(eps, c):
    v = 1.0 / (math.exp(6.0) + 1.0)
    u = 1.0 - v
    gm1 = math.expm1(eps)
    du, coef_b = u - v, (u - v) - gm1 * v
    for s in (0.5, 0.3):
        k = _cut(np.array([float(c)]), v, du, coef_b, np.float64(gm1), s)
        assert abs(k[0] - exact_cut(c, u, v, eps, s)) <= 1  # (the callers add the neighbouring cuts' terms)


def test_delta_at_eps0_700_near_eps0_has_no_warning_and_is_bounded():
    for method in ("clones", "stronger-clones"):
        b = api.delta(700.0, 100, 700.0 * (1.0 - 1e-9), method=method)
        lo, hi = b.bracket
        assert 0.0 <= lo <= hi <= 1.0

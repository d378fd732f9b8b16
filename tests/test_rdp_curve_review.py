"""The RDP curve's post-processing (review rev94r, 2026-11-24): monotone in the order (D_alpha is
non-decreasing in alpha: van Erven and Harremoës 2014, Theorem 3), still above the exact divergence
of a 50-digit oracle, and the ``renyi`` command offering only the analyses it runs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from click.testing import CliRunner

import oracle
from shuffle_accountant.cli import main
from shuffle_accountant.composition import rdp_curve


def _monotone(curve) -> None:
    up, lo = np.array(curve.upper), np.array(curve.lower)
    assert np.all(np.diff(np.array(curve.orders)) > 0)
    assert np.all(np.diff(up) >= 0.0) and np.all(np.diff(lo) >= 0.0) and np.all(lo <= up)


def test_an_unconverged_curve_is_capped_by_its_larger_orders() -> None:
    # before: upper 29.0 (the eps0 cap) at alpha = 1.01 above 28.51 at 1.25
    curve = rdp_curve(29.0, 10**12, orders=[1.01, 1.25])
    _monotone(curve)
    assert curve.upper[0] < 29.0


@pytest.mark.parametrize("method", ["clones", "stronger-clones"])
@pytest.mark.parametrize("eps0,n", [(0.5, 6), (2.0, 8), (6.0, 5)])
def test_the_monotone_curve_stays_above_the_exact_divergence(method: str, eps0: float, n: int) -> None:
    orders = [1.01, 1.5, 2.0, 3.0, 8.0, 64.0, 1024.0]
    curve = rdp_curve(eps0, n, method=method, orders=orders)
    _monotone(curve)
    params = (oracle.clones_params if method == "clones" else oracle.stronger_clones_params)(eps0)
    pair = oracle.clone_pair(n, *params)
    for a, up in zip(curve.orders, curve.upper):
        assert up >= float(oracle.rdp_exact(pair, a)) * (1 - 1e-12)


def test_renyi_offers_only_clone_pair_analyses() -> None:
    out = CliRunner().invoke(main, ["renyi", "--help"]).output
    assert "blanket" not in out and "generic-lower" not in out and "binary-rr-lower" in out
    res = CliRunner().invoke(main, ["renyi", "--eps0", "1", "--n", "100", "-m", "blanket"])
    assert res.exit_code == 2


@pytest.mark.parametrize("eps0,n", [(33.0, 10**5), (36.5, 10**7)])
def test_large_eps0_curves_raise_no_floating_point_warning(eps0: float, n: int) -> None:
    # pytest runs with warnings as errors: a 0 * inf in the kernels' chord raised here (review rev94r)
    curve = rdp_curve(eps0, n)
    assert all(eps0 * 0.5 < u <= eps0 * (1 + 1e-12) for u in curve.upper)


def test_chord_helpers_turn_no_information_into_the_safe_infinity() -> None:
    # an infinite corner bound at c = c_b made the chord nan, and log(e^nan - 1) was -inf: an upper bound of -inf
    # on log(K - 1) for a future caller (review renyi95)
    from shuffle_accountant.numeric.renyi import _chord_upper, _log_expm1

    one = np.array([1.0])
    assert _chord_upper(np.array([np.inf]), one, np.array([0.0]), np.array([5.0]), np.array([5.0]))[0] == np.inf
    assert _log_expm1(np.array([np.nan]), 1)[0] == np.inf and _log_expm1(np.array([np.nan]), -1)[0] == -np.inf
    assert _log_expm1(np.array([-1.0]), 1)[0] == -np.inf  # (K <= 1: K - 1 <= 0, unchanged)


def test_log_k_rounds_subnormal_results_outwards() -> None:
    # a relative factor does not move a subnormal: log K = log1p(e^-735.3) was returned below its exact value
    # (review rev94c)
    import mpmath

    from shuffle_accountant.numeric.renyi import _log_k

    for x in (-735.3, -740.0, -720.0):
        exact = mpmath.log1p(mpmath.exp(x))
        assert _log_k(np.array([x]), 1)[0] >= exact >= _log_k(np.array([x]), -1)[0]


def test_orders_near_one_at_eps0_40_give_no_overflow_warning() -> None:
    """Review rev99c: the exact windows' error terms overflowed (RuntimeWarning from renyi._window_orders) at orders
    near 1 and eps0 = 40; pytest turns warnings into errors. The overflowed error is no information: the upper end stays
    the cap log L (>= every lower end), never nan or below the lower end."""
    orders = (1 + 2**-52, 1.0000001, 1.01, 1.3, 2.7)
    c = rdp_curve(40.0, 10_000, "clones", orders=orders)
    for lo, up in zip(c.lower, c.upper):
        assert math.isfinite(up) and lo <= up <= 40.0 * (1 + 1e-12)
    assert c.lower[-1] >= 39.9  # (the clone pair's divergence there is within 1e-9 of the cap)

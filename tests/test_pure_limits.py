"""Pure-DP counting at the edges of double precision: every failure is a one-line
refusal or a certification error with the reason, never an arithmetic exception."""

from __future__ import annotations

import math

import pytest

from shuffle_accountant.errors import CertificationError, InvalidParameter
from shuffle_accountant.plugins._shared.noise import dlap_variance
from shuffle_accountant.plugins.pure import count as pc


def test_dlap_variance_is_inf_instead_of_a_division_by_zero():
    assert dlap_variance(1e-300) == math.inf
    assert dlap_variance(1.0) == pytest.approx(2 * math.exp(-1) / (1 - math.exp(-1)) ** 2, rel=1e-15)
    assert dlap_variance(1e-8) == pytest.approx(2e16, rel=1e-7)
    with pytest.raises(ValueError):
        dlap_variance(0.0)


@pytest.mark.parametrize("solver,eps,n,rho,match", [
    (pc.theorem6, 1e-300, 10**4, 0.5, "exceeds double precision"),  # Var(DLap(eps)) overflows
    (pc.optimise, 1e-300, 10**4, 0.5, "exceeds double precision"),
    (pc.theorem6, 700.0, 10**12, 1e-9, "underflows"),  # q = 0.1 rho Var/n below the smallest double
    (pc.optimise, 700.0, 10**12, 1e-9, "no .* meets"),  # and no other q fits the MSE budget either
    (pc.optimise, 0.01, 10**12, 1e-9, "too small"),  # eps - eps' = 8e-14: s would be 1e15
])
def test_uncertifiable_plans_raise_certification_errors(solver, eps, n, rho, match):
    with pytest.raises(CertificationError, match=match):
        solver(eps, n, rho)


@pytest.mark.parametrize("eps,rho", [(1e6, 0.5), (float("nan"), 0.5), (1.0, 1e-300), (1.0, 0.6)])
def test_bad_parameters_are_refused_by_the_shared_ranges(eps, rho):
    with pytest.raises(InvalidParameter):
        pc.theorem6(eps, 10**4, rho)


def test_windowed_check_has_a_rounding_allowance_and_refuses_huge_windows():
    p = pc.theorem6(1.0, 10**4, 0.5)
    v = pc.verify(p)
    assert 0 < v.rounding_allowance < 1e-6
    assert v.holds == (v.max_divergence + v.rounding_allowance <= p.eps)
    huge = pc.PureParams(1.0, 10**4, 1e-300, 0.5, 1, 1e-3)
    with pytest.raises(CertificationError, match="exceeds the limit"):
        pc.verify(huge)

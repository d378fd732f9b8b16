"""Checks of the facts behind docs/generic_bounds.md (why no generic bound tighter than
``stronger-clones`` is offered).

1. The privacy-blanket bound of binary randomized response (Balle, Bell, Gascon, Nissim,
   CRYPTO 2019, arXiv 1903.02837) equals the stronger-clone delta (Feldman, McMillan,
   Talwar, SODA 2023, arXiv 2208.04591).
2. For every eps0-DP randomizer the blanket bound is at most the stronger-clone delta
   (convex-order lemma of docs/generic_bounds.md section 3.3), checked on the oracle's
   randomizers with the independent mpmath oracle, and the lemma itself in exact rationals.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shuffle_accountant.analyses import profile_for

from oracle_blanket import blanket_delta, hadamard_matrix, krr_matrix, oue_matrix, subset_matrix

GRID = [(eps0, n, f * eps0) for eps0 in (0.3, 1.0, 2.5) for n in (2, 5) for f in (0.05, 0.4, 0.8)]


@pytest.mark.parametrize(("eps0", "n", "eps"), GRID)
def test_blanket_of_binary_rr_is_the_stronger_clone_pair(eps0: float, n: int, eps: float) -> None:
    b = profile_for("stronger-clones", eps0, n).bounds(eps, 1e-12)
    value = float(blanket_delta(krr_matrix(2, eps0), n, eps))
    assert b.lower * (1 - 1e-12) <= value <= b.upper * (1 + 1e-12)


@pytest.mark.parametrize(("eps0", "n", "eps"), GRID)
def test_blanket_never_exceeds_stronger_clones(eps0: float, n: int, eps: float) -> None:
    sc = profile_for("stronger-clones", eps0, n).bounds(eps, 1e-12).upper
    for m in (krr_matrix(3, eps0), subset_matrix(4, 3, eps0), subset_matrix(4, 2, eps0),
              hadamard_matrix(3, eps0), oue_matrix(2, eps0)):
        assert float(blanket_delta(m, n, eps)) <= sc


def _stop_loss(atoms: list[tuple[Fraction, Fraction]], theta: Fraction) -> Fraction:
    return sum((w * (v - theta) for v, w in atoms if v > theta), Fraction(0))


_ratio = st.fractions(min_value=0, max_value=1, max_denominator=50)


@settings(max_examples=300, deadline=None)
@given(
    e=st.fractions(min_value=Fraction(11, 10), max_value=60, max_denominator=20),
    tpos=_ratio,
    pts=st.lists(st.tuples(_ratio, _ratio, st.fractions(min_value=Fraction(1, 100), max_value=1, max_denominator=100)),
                 min_size=1, max_size=5),
)
def test_blanket_variable_is_convex_dominated_by_binary_rr(
    e: Fraction, tpos: Fraction, pts: list[tuple[Fraction, Fraction, Fraction]]
) -> None:
    """lambda_R <=_cx lambda_2RR (docs/generic_bounds.md section 3.3), in exact rationals:
    a random blanket measure nu on [1, E]^2 with sum nu s0 = sum nu s1 = 1, compared with
    binary RR through stop-loss transforms at every atom (equal means: convex order)."""
    t = 1 + tpos * (e - 1)
    atoms = [(1 + a * (e - 1), 1 + b * (e - 1), w) for a, b, w in pts]
    d = sum(w * (s0 - s1) for s0, s1, w in atoms)  # balance the two moments with a corner atom
    atoms.append((Fraction(1), e, d / (e - 1)) if d > 0 else (e, Fraction(1), -d / (e - 1)))
    scale = 1 / sum(w * s0 for s0, _, w in atoms)
    nu = [(s0, s1, w * scale) for s0, s1, w in atoms]
    assert sum(w * s1 for _, s1, w in nu) == 1
    gamma = sum(w for *_, w in nu)
    assert gamma <= 1  # s0 >= 1
    law = [(s0 - t * s1, w) for s0, s1, w in nu] + [(Fraction(0), 1 - gamma)]
    rr = [(e - t, 1 / (e + 1)), (1 - e * t, 1 / (e + 1)), (Fraction(0), (e - 1) / (e + 1))]
    assert sum(v * w for v, w in law) == sum(v * w for v, w in rr) == 1 - t
    for theta in {v for v, _ in law + rr}:
        assert _stop_loss(law, theta) <= _stop_loss(rr, theta)

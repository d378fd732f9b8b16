"""Review tests of the kink-chains route (shuffle_accountant/numeric/krr_chains.py; reviews rev103a, rev103b).

1. Narrow windows of totals and bands of O.

At the default widths (8.5 sd) none of the route's truncation charges matters at small n, so a brute-force
comparison there cannot tell a certified bracket from a point estimate (review rev103b: dropping R1's term, R3's
Bernstein tail, the outside-window charge or the walk's error budget left tests/test_krr102_chains.py green). Here
the windows are cut to a fraction of a standard deviation, so R1, R3 and the outside-window charges carry most of
delta, and the bracket must still contain the independent mpmath brute force of the trinomial form. A real k (the
route answers unary encoding / local hashing with k = 2 through PairKrrBlanket at a real k) is among the cases.

2. A query the chains cannot answer (delta ~ 1e-12, or a probe next to eps0) does not switch them off for the
   later queries of the shared backend.
"""

from __future__ import annotations

import functools
import math

import mpmath
import pytest
from test_krr102_chains import brute_delta

from shuffle_accountant.numeric import blanket_krr
from shuffle_accountant.numeric.blanket_krr import KrrBlanket
from shuffle_accountant.numeric.krr_chains import KrrChains
from shuffle_accountant.numeric.search import epsilon_for_delta

CASES = [(30, 3, 1.0), (60, 4, 2.0), (45, 10, 0.7), (50, 3, 2.5), (40, 5, 1.5), (40, 5.297, 2.0), (50, 3, 4.0),
         (40, 10, 4.1)]


@functools.lru_cache(maxsize=None)
def exact_delta(n: int, k: float, eps0: float, eps: float) -> mpmath.mpf:
    return brute_delta(n, k, eps0, eps)


@pytest.mark.parametrize("n,k,eps0", CASES)
@pytest.mark.parametrize("z_t,z_o", [(0.3, 0.3), (1.0, 0.5), (0.5, 2.0), (2.0, 1.0), (4.0, 0.2)])
def test_narrow_bracket_contains_brute_force(n: int, k: float, eps0: float, z_t: float, z_o: float) -> None:
    ch = KrrChains(n, k, eps0)
    checked = 0
    for frac in (0.05, 0.3, 0.7):
        eps = frac * eps0
        got = ch.evaluate(eps, z_t, z_o)
        if got is None:
            continue
        lower, upper, _slope = got
        exact = exact_delta(n, k, eps0, eps)
        assert ch.charge_up(upper) >= exact, (n, k, eps0, eps, z_t, z_o, lower, upper, exact)
        assert lower <= exact * (1 + 1e-9), (n, k, eps0, eps, z_t, z_o, lower, upper, exact)
        checked += 1
    assert checked >= 2


def test_narrow_widths_make_the_charges_decisive() -> None:
    """The test above has teeth: at these widths the truncation charges are most of the upper end (the exactly
    summed part, about the lower end, is below delta), so an upper end that dropped them would miss delta."""
    n, k, eps0, eps = 60, 4, 2.0, 0.6
    ch = KrrChains(n, k, eps0)
    got = ch.evaluate(eps, 0.3, 0.3)
    assert got is not None
    lower, upper, _ = got
    exact = float(exact_delta(n, k, eps0, eps))
    assert lower < exact < 0.2 * upper


@pytest.mark.parametrize("first,n", [(1e-14, 10**5), (1e-3, 10**6)])
def test_a_failed_query_does_not_switch_the_chains_off(first: float, n: int) -> None:
    """delta = 1e-14 (the chains' bracket cannot close: the widest bands' neglected parts; before krr107's relative
    fl(e^eps) charge this was so from 1e-12) and delta = 1e-3 (the
    search probes next to eps0, where delta ~ 1e-15) fall back to the other routes; the next eps(1e-6) query on the
    same shared backend is answered by the chains again, with the same answer as on a fresh backend."""
    key = (n, 10, 2.0)
    blanket_krr._BACKENDS.pop(key, None)
    fresh = epsilon_for_delta(KrrBlanket(*key), 1e-6, 1e-6)
    blanket_krr._BACKENDS.pop(key, None)
    epsilon_for_delta(KrrBlanket(*key), first, 1e-6)
    be = blanket_krr._BACKENDS[key]
    assert be.chains_fail_from < math.inf  # (the chains did fail there)
    again = epsilon_for_delta(KrrBlanket(*key), 1e-6, 1e-6)
    assert any(isinstance(p, KrrChains) for p in be.answered)
    assert again.lower <= fresh.upper and fresh.lower <= again.upper
    assert KrrBlanket(*key).bounds(0.0, 1e-6).upper > 0.0  # (eps = 0: declined, not remembered)
    assert be.chains_fail_from > 0.0


@pytest.mark.parametrize("n,k,eps0", [(5 * 10**6, 3, 1.0), (10**7, 100, 2.0)])
def test_chains_at_large_n_overlap_the_old_routes(n: int, k: int, eps0: float, monkeypatch: pytest.MonkeyPatch) -> None:
    """Above 1e6 users (CHAINS_MAX_N raised to 1e7): the chains' bracket at eps(1e-6) overlaps the split route's and
    eps(delta) agrees within rtol."""
    assert blanket_krr.CHAINS_MAX_N >= n
    new = epsilon_for_delta(KrrBlanket(n, k, eps0, shared=False), 1e-6, 1e-6)
    ch = KrrChains(n, k, eps0).bounds(new.upper, 1e-8)
    monkeypatch.setattr(blanket_krr, "CHAINS_MAX_N", 10**6)
    old = epsilon_for_delta(KrrBlanket(n, k, eps0, shared=False), 1e-6, 1e-6)
    ref = KrrBlanket(n, k, eps0, shared=False).bounds(new.upper, 1e-8)
    assert ch is not None and ch.converged
    assert ch.lower <= ref.upper and ref.lower <= ch.upper
    assert new.lower <= old.upper and old.lower <= new.upper


@pytest.mark.parametrize("n,k,eps0", [(10**4, 3, 1.0), (10**5, 10, 2.0), (10**6, 3, 1.0)])
def test_chains_close_at_delta_1e_9(n: int, k: int, eps0: float) -> None:
    """At delta ~ 1e-9 the chains' bracket still closes at rtol 1e-6 (relative width ~5e-7): R1's charge for the
    rounding of c enters through the Bernstein bound, not flat (review rev104: flat, it widened the bracket to
    ~2.7e-6 and the chains fell back to the slower routes)."""
    eps = epsilon_for_delta(KrrBlanket(n, k, eps0, shared=False), 1e-9, 1e-6).upper
    b = KrrChains(n, k, eps0).bounds(eps, 1e-6)
    assert b is not None and b.converged, b
    assert b.upper - b.lower <= 1e-6 * b.lower

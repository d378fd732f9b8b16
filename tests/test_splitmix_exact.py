"""The exact split-and-mix distance against an independent brute force.

The oracle below shares no code with the package: it enumerates every input vector
``x ∈ Z_q^n`` and every share matrix (``m − 1`` free shares per party, the last one
fixing the party's sum), keys each outcome by the sorted tuple of all ``nm`` shares
(the shuffled view), and maximises the total variation over equal-sum pairs, all in
:class:`fractions.Fraction`.
"""

from __future__ import annotations

import time
from collections import Counter
from fractions import Fraction
from itertools import product

import pytest

from shuffle_accountant.errors import CertificationError, InvalidParameter
from shuffle_accountant.plugins.splitmix import exact_distance, mod2_exact_distance
from shuffle_accountant.plugins.splitmix.exactdist import WORK_LIMIT, estimate_work, exact_search


def brute_force_distance(n: int, m: int, q: int) -> Fraction:
    def party_shares(x: int) -> list[tuple[int, ...]]:
        out = []
        for free in product(range(q), repeat=m - 1):
            out.append(free + ((x - sum(free)) % q,))
        return out

    laws: dict[tuple[int, ...], dict[tuple[int, ...], Fraction]] = {}
    for x in product(range(q), repeat=n):
        counts: Counter[tuple[int, ...]] = Counter()
        for rows in product(*(party_shares(xi) for xi in x)):
            counts[tuple(sorted(s for row in rows for s in row))] += 1
        total = sum(counts.values())
        laws[x] = {view: Fraction(c, total) for view, c in counts.items()}
    best = Fraction(0)
    for a, b in product(laws, repeat=2):
        if sum(a) % q == sum(b) % q:
            views = set(laws[a]) | set(laws[b])
            tv = sum(abs(laws[a].get(v, 0) - laws[b].get(v, 0)) for v in views) / 2
            best = max(best, tv)
    return best


TINY = [(2, 1, 2), (2, 1, 3), (3, 1, 2), (2, 2, 2), (3, 2, 2), (2, 3, 2), (4, 2, 2), (3, 3, 2),
        (2, 2, 3), (3, 2, 3), (2, 3, 3), (2, 2, 4), (2, 2, 5), (2, 4, 2), (1, 3, 3), (2, 2, 8)]
SMALL = [(4, 3, 2), (5, 2, 2), (3, 4, 2), (4, 2, 3), (3, 3, 3), (3, 2, 4), (2, 3, 5), (2, 2, 6), (2, 2, 7), (2, 3, 6), (3, 2, 6)]


@pytest.mark.parametrize("n,m,q", TINY)
def test_exact_matches_brute_force(n: int, m: int, q: int) -> None:
    expected = brute_force_distance(n, m, q)
    got = exact_distance(n, m, q)
    assert isinstance(got, Fraction)
    assert got == expected


@pytest.mark.slow
@pytest.mark.parametrize("n,m,q", SMALL)
def test_exact_matches_brute_force_small(n: int, m: int, q: int) -> None:
    assert exact_distance(n, m, q) == brute_force_distance(n, m, q)


@pytest.mark.parametrize("n,m", [(2, 2), (3, 3), (5, 4), (6, 3)])
def test_mod2_is_exact_distance_over_z2(n: int, m: int) -> None:
    assert mod2_exact_distance(n, m) == exact_distance(n, m, 2)


def test_mod2_matches_brute_force() -> None:
    assert mod2_exact_distance(3, 3) == brute_force_distance(3, 3, 2)


def test_worst_pair_attains_the_distance() -> None:
    """The reported pair has equal sums and its own distance (recomputed by the
    oracle's method on that pair alone) equals the maximum."""
    n, m, q = 3, 2, 3
    result = exact_search(n, m, q)
    a, b = result.worst_pair
    assert a != b and sum(a) % q == sum(b) % q

    def law(x: tuple[int, ...]) -> Counter[tuple[int, ...]]:
        c: Counter[tuple[int, ...]] = Counter()
        for shares in product(range(q), repeat=n * m):
            if all(sum(shares[i * m:(i + 1) * m]) % q == x[i] for i in range(n)):
                c[tuple(sorted(shares))] += 1
        return c

    la, lb = law(a), law(b)
    total = q ** (n * (m - 1))
    tv = sum(abs(la[v] - lb[v]) for v in set(la) | set(lb)) / Fraction(2 * total)
    assert tv == result.distance


def test_two_messages_stay_far_apart() -> None:
    """m = 2 is never enough: the distance stays large as n grows (GMPV §4.2)."""
    values = [exact_distance(n, 2, 3) for n in (4, 8, 16)]
    assert all(v > Fraction(1, 2) for v in values)


def test_refusal_is_fast_and_names_the_limit() -> None:
    assert estimate_work(1000, 10, 2)[0] > WORK_LIMIT
    start = time.perf_counter()
    with pytest.raises(CertificationError, match="beyond the limits"):
        exact_distance(1000, 10, 2)
    with pytest.raises(CertificationError, match="limit"):
        exact_distance(3, 3, 65)
    assert time.perf_counter() - start < 1.0


@pytest.mark.parametrize("args", [(0, 2, 2), (2, 0, 2), (2, 2, 1), (2.5, 2, 2)])
def test_bad_sizes_rejected(args: tuple) -> None:
    with pytest.raises(InvalidParameter):
        exact_distance(*args)

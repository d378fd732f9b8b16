"""Exact worst-case statistical distance of split and mix, for small sizes.

Split and mix (Ishai–Kushilevitz–Ostrovsky–Sahai, FOCS'06): each of ``n`` parties
splits ``x_i ∈ Z_q`` into ``m`` uniformly random shares summing to ``x_i``; the
analyzer sees the multiset of all ``nm`` shares. The security of the protocol is

    max over x, x' with Σx = Σx' (mod q) of TV(view(x), view(x')).

This module computes that maximum *exactly* (as a :class:`fractions.Fraction`) by
exploiting every symmetry of the problem:

1. Shares within a party and parties within the transcript are exchangeable, so a
   view is the count vector ``C ∈ N^q`` (``|C| = nm``) and its law depends on the
   inputs only through their *type* (the multiset of inputs). One party's law is
   ``P_x(d) = multinomial(m; d) / q^(m−1)`` on count vectors ``d`` with weight
   ``Σ_j j·d_j ≡ x``; a view's law is the convolution of the parties' laws.
   Types are enumerated depth-first with shared prefixes, so the law of every
   type costs one convolution with a party's law.
2. The affine maps ``s ↦ u·s + c`` (``u`` a unit of ``Z_q``) applied to every share
   map inputs ``x ↦ u·x + m·c`` and permute the coordinates of ``C``: they preserve
   the statistical distance, so the first input of a pair is taken from one orbit
   representative only, and pairs equivalent under the group are evaluated once.
3. Screening in floating point with a proved error bound (all terms are
   non-negative, so every operation loses at most one unit round-off; double
   precision first, x87 extended precision when double cannot separate the
   candidates) keeps only the pairs that can still be the maximum; those are then
   evaluated in exact integer arithmetic (numerators over ``q^(n(m−1))``, computed
   modulo word-size primes and rebuilt by the Chinese remainder theorem), so the
   value returned is exact, never a floating-point estimate.

Sizes beyond :data:`WORK_LIMIT` (estimated elementary operations) or
:data:`MEMORY_LIMIT` (stored numbers) are refused with
:class:`~shuffle_accountant.errors.CertificationError` naming the limit, before
any work is done.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations_with_replacement
from typing import Any

import numpy as np

from ...plugin_api import CertificationError, check_int, fp

#: Largest estimated number of elementary floating-point operations ``exact_distance`` accepts.
WORK_LIMIT = 7.0e9
#: Largest number of stored probabilities (the laws of all input types) it accepts.
MEMORY_LIMIT = 6.0e7
#: Largest number of pairs evaluated in exact integer arithmetic after screening.
EXACT_PAIR_LIMIT = 400
#: Largest modulus the exact routine accepts (the count space has dimension ``q − 1``).
MAX_Q = 64


#: Floating types for screening, cheapest first, with their unit round-off. x87 extended
#: precision (64-bit significand) is used only where numpy provides it.
_PRECISIONS: list[tuple[type, float]] = [(np.float64, fp.UNIT_ROUNDOFF)]
if np.finfo(np.longdouble).nmant >= 63:
    _PRECISIONS.append((np.longdouble, float(np.finfo(np.longdouble).eps) / 2))
_EXACT_KERNEL_LIMIT = 2**53  # kernel numerators and q^(m-1) below this convert to floats exactly
_PRIME_BITS = 31  # moduli for the exact laws: products of two residues fit in int64


@dataclass(frozen=True)
class ExactResult:
    """The exact worst-case distance and one pair of input multisets attaining it.

    ``worst_pair`` holds two input types as tuples of inputs in non-decreasing
    order (``()`` when no two distinct inputs share a sum, e.g. ``n = 1``).
    """

    distance: Fraction
    worst_pair: tuple[tuple[int, ...], tuple[int, ...]]
    pairs_screened: int
    pairs_exact: int
    types: int


def _compositions(total: int, parts: int) -> Iterator[tuple[int, ...]]:
    """All tuples of ``parts`` non-negative integers summing to ``total``."""
    for bars in combinations_with_replacement(range(total + 1), parts - 1):
        prev, out = 0, []
        for b in bars:
            out.append(b - prev)
            prev = b
        out.append(total - prev)
        yield tuple(out)


def _multinomial(counts: Sequence[int]) -> int:
    result, acc = 1, 0
    for c in counts:
        acc += c
        result *= math.comb(acc, c)
    return result


class _Grid:
    """Count vectors ``(C_1, ..., C_{q−1})`` (``C_0`` implied) with ``Σ_j C_j ≤ N = nm``,
    listed by increasing ``Σ_j C_j``, so that the views of the first ``k`` parties (total
    ``km``) occupy a prefix of the list. ``targets[d]`` maps each point to the index of
    the point shifted by a party's count vector ``d`` (an injective map)."""

    def __init__(self, n: int, m: int, q: int) -> None:
        self.n, self.m, self.q = n, m, q
        self.N = n * m
        base = self.N + 1
        points = sorted(
            (c[1:] for c in _compositions(self.N, q)), key=lambda c: (sum(c), c)
        )
        coords = np.array(points, dtype=np.int64).reshape(len(points), q - 1)
        weights = (coords * np.arange(1, q, dtype=np.int64)).sum(axis=1) % q
        self.weights = weights
        level_sum = coords.sum(axis=1)
        self.extents = [int(np.searchsorted(level_sum, k * m, side="right")) for k in range(n + 1)]
        dense = coords @ (base ** np.arange(q - 1, dtype=np.int64))
        sorter = np.argsort(dense)
        sorted_dense = dense[sorter]
        source = dense[: self.extents[n - 1]]
        # One party's law, per input x: list of (targets, numerator); denominator q^(m-1).
        self.kernels: list[list[tuple[np.ndarray, int]]] = [[] for _ in range(q)]
        for d in _compositions(m, q):
            weight = sum(j * d[j] for j in range(1, q)) % q
            offset = sum(d[j] * base ** (j - 1) for j in range(1, q))
            targets = sorter[np.searchsorted(sorted_dense, source + offset)]
            self.kernels[weight].append((targets, _multinomial(d)))
        self.kernel_size = max(len(k) for k in self.kernels)
        self.supports = [np.flatnonzero(weights == r) for r in range(q)]

    def convolve(
        self, law: np.ndarray, parties: int, x: int, values: Sequence[Any], modulus: int | None = None
    ) -> np.ndarray:
        """The law after one more party with input ``x``; ``values`` are the kernel
        weights (reduced mod ``modulus`` for integer arithmetic modulo a prime)."""
        width = self.extents[parties]
        out = np.zeros(self.extents[parties + 1], dtype=law.dtype)
        for (targets, _), v in zip(self.kernels[x], values):
            dest = targets[:width]
            out[dest] += v * law[:width]
            if modulus is not None:
                out[dest] %= modulus
        return out


def _affine_group(m: int, q: int) -> list[tuple[int, int]]:
    """Distinct maps ``x ↦ u·x + m·c`` on inputs (``u`` a unit, ``c ∈ Z_q``)."""
    units = [u for u in range(1, q) if math.gcd(u, q) == 1]
    shifts = sorted({(m * c) % q for c in range(q)})
    return [(u, t) for u in units for t in shifts]


def _apply(group_elt: tuple[int, int], inputs: tuple[int, ...], q: int) -> tuple[int, ...]:
    u, t = group_elt
    return tuple(sorted((u * x + t) % q for x in inputs))


def _canonical(inputs: tuple[int, ...], group: list[tuple[int, int]], q: int) -> tuple[int, ...]:
    return min(_apply(g, inputs, q) for g in group)


def _canonical_pair(a: tuple[int, ...], b: tuple[int, ...], group: list[tuple[int, int]], q: int) -> tuple:
    return min(tuple(sorted((_apply(g, a, q), _apply(g, b, q)))) for g in group)


def estimate_work(n: int, m: int, q: int) -> tuple[float, float]:
    """Estimated (elementary floating-point operations, stored probabilities) of one
    screening pass of :func:`exact_distance`: the depth-first convolutions (one per
    sorted input tuple of each length ``k``, over the views of ``k − 1`` parties) plus
    the pairwise distances (orbit representatives × same-sum types × support)."""
    kernel = math.comb(m + q - 1, q - 1) / q
    laws = sum(math.comb(k + q - 1, q - 1) * kernel * math.comb((k - 1) * m + q - 1, q - 1) for k in range(1, n + 1))
    types = math.comb(n + q - 1, q - 1)
    support = math.comb(n * m + q - 1, q - 1) / q
    reps = types / len(_affine_group(m, q))
    return 2.0 * laws + reps * (types / q) * support * 3.0, types * support


def _check_feasible(n: int, m: int, q: int) -> None:
    if q > MAX_Q or q ** (m - 1) >= _EXACT_KERNEL_LIMIT:
        raise CertificationError(
            f"exact distance: q = {q}, m = {m} exceed the limits of the exact routine "
            f"(q <= {MAX_Q} and q^(m-1) < 2^53)"
        )
    if (n * m + 1) ** (q - 1) >= 2**62:
        raise CertificationError(
            f"exact distance for n={n}, m={m}, q={q}: the count vectors need (nm+1)^(q-1) < 2^62 "
            "to be indexed in 64-bit integers"
        )
    work, memory = estimate_work(n, m, q)
    if work > WORK_LIMIT or memory > MEMORY_LIMIT:
        raise CertificationError(
            f"exact distance for n={n}, m={m}, q={q} needs about {work:.2g} operations and "
            f"{memory:.2g} stored probabilities, beyond the limits {WORK_LIMIT:.0e} and {MEMORY_LIMIT:.0e}; "
            "use 'splitmix security' for certified bounds"
        )


def _float_laws(grid: _Grid, dtype: type) -> dict[tuple[int, ...], np.ndarray]:
    """Floating-point law of every input type (restricted to its support: the views
    whose weight is the sum of the inputs), computed depth-first over sorted input
    tuples so that types sharing a prefix share its convolutions."""
    n, q = grid.n, grid.q
    denom = dtype(q ** (grid.m - 1))  # exact: below _EXACT_KERNEL_LIMIT
    values = [[dtype(num) / denom for _, num in k] for k in grid.kernels]  # one round-off each
    laws: dict[tuple[int, ...], np.ndarray] = {}
    stack: list[tuple[tuple[int, ...], np.ndarray]] = [((), np.ones(1, dtype=dtype))]
    while stack:
        prefix, law = stack.pop()
        for x in range(prefix[-1] if prefix else 0, q):
            out = grid.convolve(law, len(prefix), x, values[x])
            if len(prefix) + 1 == n:
                t = prefix + (x,)
                laws[t] = out[grid.supports[sum(t) % q]]
            else:
                stack.append((prefix + (x,), out))
    return laws


def _screening_error(grid: _Grid, unit: float) -> Fraction:
    """Bound on |floating-point distance − exact distance| for every screened pair.

    Every law entry is a sum of products of non-negative numbers: the kernel values
    carry one round-off ``u`` and each of the ``n`` convolutions adds at most
    ``kernel_size + 1``, so each entry has relative error at most
    ``(1+u)^(n(kernel_size+2)) − 1 ≤ 1.01 n (kernel_size+2) u``; the distance adds one
    round-off per subtraction and at most ``support + 1`` in the summation and the
    halving (total mass ≤ 2). Underflow adds at most the smallest normal double per
    operation, absolutely (for extended precision this is a large overestimate)."""
    support = max(len(idx) for idx in grid.supports)
    relative = 1.05 * (1.01 * grid.n * (grid.kernel_size + 2) + support + 4) * unit
    underflow = 4.0 * grid.n * grid.kernel_size * len(grid.weights) * float(np.finfo(np.float64).tiny)
    return Fraction(relative) + Fraction(underflow)


@dataclass(frozen=True)
class _Candidate:
    value: Fraction  # the floating-point distance, as an exact rational
    first: tuple[int, ...]
    second: tuple[int, ...]


def _screen(grid: _Grid, group: list[tuple[int, int]], dtype: type, err: Fraction) -> tuple[list[_Candidate], int, int]:
    """Pairs (orbit representative, type with the same sum) whose floating-point
    distance is within ``2·err`` of the largest one, largest first; also the number of
    pairs screened and of input types."""
    q = grid.q
    laws = _float_laws(grid, dtype)
    classes: dict[int, list[tuple[int, ...]]] = {}
    for t in laws:
        classes.setdefault(sum(t) % q, []).append(t)
    rows: list[tuple[tuple[int, ...], list[tuple[int, ...]], np.ndarray]] = []
    for members in classes.values():
        mat = np.stack([laws[t] for t in members])
        for i, t in enumerate(members):
            if len(members) > 1 and _canonical(t, group, q) == t:
                dist = np.abs(mat - mat[i]).sum(axis=1) / 2
                dist[i] = -1.0
                rows.append((t, members, dist))
    floor = max(_rational(row[2].max()) for row in rows) - 2 * err
    coarse = float(floor) * (1 - 1e-9) if floor > 0 else -0.5  # at or below floor
    found = []
    for t, members, dist in rows:
        for j in np.flatnonzero(dist >= coarse):
            value = _rational(dist[j])
            if value >= floor:
                found.append(_Candidate(value, t, members[j]))
    found.sort(key=lambda c: -c.value)
    return found, sum(len(row[1]) - 1 for row in rows), len(laws)


def _rational(x: np.floating) -> Fraction:
    """The exact value of a binary floating-point number."""
    return Fraction(*x.as_integer_ratio())


def _primes_below(limit: int, count: int) -> list[int]:
    """The ``count`` largest primes below ``limit`` (< 2^32; deterministic Miller–Rabin)."""
    out: list[int] = []
    k = limit - 1
    while len(out) < count:
        if k % 2 and _is_prime(k):
            out.append(k)
        k -= 1
    return out


def _is_prime(k: int) -> bool:
    d, r = k - 1, 0
    while d % 2 == 0:
        d, r = d // 2, r + 1
    for a in (2, 7, 61):  # deterministic for k < 4,759,123,141
        x = pow(a, d, k)
        if x in (1, k - 1) or a % k == 0:
            continue
        for _ in range(r - 1):
            x = x * x % k
            if x == k - 1:
                break
        else:
            return False
    return True


def _exact_law(grid: _Grid, inputs: tuple[int, ...]) -> np.ndarray:
    """Exact integer numerators (denominator ``q^(n(m−1))``) of the law of one input type,
    as a numpy array of Python ints: computed modulo word-size primes and rebuilt by the
    Chinese remainder theorem (every numerator is below the denominator ≤ their product)."""
    bound = grid.q ** (grid.n * (grid.m - 1))
    primes: list[int] = []
    product = 1
    for p in _primes_below(2**_PRIME_BITS, 1 + bound.bit_length() // (_PRIME_BITS - 1)):
        primes.append(p)
        product *= p
        if product > bound:
            break
    total = np.zeros(grid.extents[grid.n], dtype=object)
    for p in primes:
        law = np.ones(1, dtype=np.int64)
        for k, x in enumerate(inputs):
            law = grid.convolve(law, k, x, [num % p for _, num in grid.kernels[x]], modulus=p)
        cofactor = product // p
        total += law.astype(object) * (cofactor * pow(cofactor, -1, p))
    return total % product


class _ExactLaws:
    """Exact laws of input types, computed on demand and cached, and exact distances."""

    def __init__(self, grid: _Grid) -> None:
        self.grid = grid
        self.cache: dict[tuple[int, ...], np.ndarray] = {}
        self.denominator = 2 * grid.q ** (grid.n * (grid.m - 1))

    def distance(self, a: tuple[int, ...], b: tuple[int, ...]) -> Fraction:
        for t in (a, b):
            if t not in self.cache:
                self.cache[t] = _exact_law(self.grid, t)
        return Fraction(int(np.abs(self.cache[a] - self.cache[b]).sum()), self.denominator)


def exact_search(n: int, m: int, q: int) -> ExactResult:
    """The exact worst-case distance with a worst pair; see :func:`exact_distance`."""
    n = check_int("n", n, low=1)
    m = check_int("m", m, low=1)
    q = check_int("q", q, low=2)
    if n == 1:  # one party: its input is fixed by the sum
        return ExactResult(Fraction(0), ((), ()), 0, 0, q)
    if m == 1:  # the view is the multiset of inputs; (0,...,0) and (1,...,1,1-n) differ
        pair = ((0,) * n, tuple(sorted((1,) * (n - 1) + ((1 - n) % q,))))
        return ExactResult(Fraction(1), pair, 0, 0, math.comb(n + q - 1, q - 1))
    _check_feasible(n, m, q)
    grid = _Grid(n, m, q)
    group = _affine_group(m, q)
    exact = _ExactLaws(grid)
    work = estimate_work(n, m, q)[0]
    message = ""
    for dtype, unit in _PRECISIONS:
        if dtype is not np.float64 and 4 * work > WORK_LIMIT:
            break  # extended precision costs about four times as much: over the limit
        err = _screening_error(grid, unit)
        found, screened, types = _screen(grid, group, dtype, err)
        best, best_pair = exact.distance(found[0].first, found[0].second), (found[0].first, found[0].second)
        pending = [c for c in found[1:] if c.value + err >= best]  # may still exceed best
        keys = {_canonical_pair(c.first, c.second, group, q) for c in [found[0], *pending]}
        if len(keys) <= EXACT_PAIR_LIMIT:
            break
        message = (
            f"exact distance for n={n}, m={m}, q={q}: {len(keys)} pairs lie within the floating-point "
            f"error {float(err):.1e} of the maximum, more than the limit {EXACT_PAIR_LIMIT} for exact "
            f"rational arithmetic (the distance is at most {float(found[0].value + err):.3e})"
        )
    if message and len(keys) > EXACT_PAIR_LIMIT:
        raise CertificationError(message)
    done = {_canonical_pair(*best_pair, group, q)}
    for c in pending:
        key = _canonical_pair(c.first, c.second, group, q)
        if key in done or c.value + err < best:
            continue
        done.add(key)
        d = exact.distance(c.first, c.second)
        if d > best:
            best, best_pair = d, (c.first, c.second)
    return ExactResult(best, best_pair, screened, len(done), types)


def exact_distance(n: int, m: int, q: int) -> Fraction:
    """Exact worst-case statistical distance of split and mix over ``Z_q``.

    ``max TV(view(x), view(x'))`` over all input vectors with equal sums mod ``q``
    (Ishai et al., FOCS'06; σ-security as defined by Balle–Bell–Gascón–Nissim,
    arXiv 1909.11225, and Ghazi–Manurangsi–Pagh–Velingker, EUROCRYPT'20,
    Definition 4). Returns a :class:`~fractions.Fraction`.

    Raises:
        InvalidParameter: ``n, m < 1`` or ``q < 2``.
        CertificationError: the size is beyond the work limits (the message names them).
    """
    return exact_search(n, m, q).distance


def mod2_exact_distance(n: int, m: int) -> Fraction:
    """Exact worst-case statistical distance of split and mix over ``Z_2`` (bits summed
    mod 2 with ``m`` shares each), as used by the distinct-elements protocol of
    Balcer, Cheu, Joseph, Mao (SODA 2021, arXiv 2004.09481, Theorem 3.2). Same as ``exact_distance(n, m, 2)``."""
    return exact_distance(n, m, 2)

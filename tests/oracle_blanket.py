"""Independent brute-force oracle for mechanism-aware amplification by shuffling.

This module is a *reference*: every number is obtained by the most literal
enumeration of its definition that is still feasible, in ``mpmath`` at
:data:`DPS` significant digits (multinomial coefficients as exact Python
integers; binomial coefficients of :func:`binary_rr_family_delta` by an
exact-ratio recurrence in mpf). It shares no code, and no structure, with ``shuffle_accountant``
(it does not import it) and must stay that way: tests compare the package's fast
path against the numbers produced here. It does not use numpy either.

Sources of the definitions: ``/work/shared/spec/blanket.md`` and
``amplification.md`` (the spec of this repository), and the papers cited at each
function.

Conventions
-----------
* A *randomizer matrix* ``M`` is a list of rows of ``mpmath.mpf``: ``M[x][y]`` is
  the probability that a user holding input ``x`` reports output ``y``; each row
  sums to one. The matrices below are parameterised by ``eps0`` as users state
  it, and :func:`eps0_of_matrix` recovers it.
* The *shuffled output* of ``n`` users is the histogram (multiset) of their
  reports: a vector of ``len(M[0])`` counts summing to ``n``. Internally a
  histogram ``h`` is encoded as the integer ``sum_y h[y] * R**y`` with radix
  ``R = n + 1`` (so adding one report ``y`` adds ``R**y``); distributions are
  ``dict`` from that code to an ``mpf`` probability.
* ``delta`` always means the hockey-stick divergence of the two shuffled
  outputs, *maximised over both directions*:
  ``delta(eps) = max(sum_h (P(h) - e^eps Q(h))_+, sum_h (Q(h) - e^eps P(h))_+)``.
* Every public function runs inside ``mpmath.workdps(max(DPS, mp.dps))`` and
  never changes the global context. Returned ``mpf`` values keep their full
  precision, but arithmetic the *caller* does on them runs at the global
  precision (15 digits by default): compare results inside
  ``with mpmath.workdps(50):``.
* ``eps0`` / ``eps`` may be ``int``, ``float``, ``str`` or ``mpf``; a float is
  taken at its exact binary value.

Contents
--------
Randomizers
    :func:`krr_matrix`, :func:`sue_matrix`, :func:`oue_matrix`,
    :func:`olh_matrix`, :func:`hadamard_matrix`, :func:`subset_matrix`,
    :func:`eps0_of_matrix`.
Exact divergences of shuffled datasets
    :func:`dataset_delta` (one neighbouring pair), :func:`worst_dataset` /
    :func:`worst_delta` (all neighbouring pairs of ``n`` users, any matrix),
    :func:`krr_worst_dataset` / :func:`krr_worst_delta` (k-RR, reduced by its
    relabelling symmetry, cached), :func:`krr_family_delta` and
    :func:`binary_rr_family_delta` (the attained lower-bound families, computed
    from closed-form multinomial / binomial probabilities, a second route).
The privacy blanket (Balle, Bell, Gascon, Nissim, CRYPTO 2019, arXiv 1903.02837)
    :func:`blanket_delta` (the bound, by enumeration of the multinomial of the
    blanket draws), :func:`blanket_delta_histograms` (the same bound before the
    closed form: the exact divergence of "first user + m blanket reports"
    averaged over ``m ~ Bin(n-1, gamma)``, a check of the theorem's form) and
    :func:`blanket_delta_krr_formula` (spec section 3, trinomial sum).
Search
    :func:`epsilon_from` (bisection in mpmath).

The form of the blanket theorem used here (verified, see :func:`blanket_delta`)
----------------------------------------------------------------------------
For a local randomizer ``R`` with blanket mass ``gamma = sum_y min_x R(x)(y)``,
blanket ``omega(y) = min_x R(x)(y) / gamma`` and, for inputs ``x1 != x1'``, the
privacy-amplification random variable
``L(y) = (R(x1)(y) - e^eps R(x1')(y)) / omega(y)``, shuffling ``n`` reports is
``(eps, delta)``-DP with

    delta = max_{x1 != x1'} (1 / (gamma n)) E[(L(Y_1) + ... + L(Y_M))_+],
    M ~ Bin(n, gamma),  Y_i i.i.d. ~ omega,

equivalently ``E_{M' ~ Bin(n-1, gamma)} [(1/(M'+1)) E[(L(Y_1)+...+L(Y_{M'+1}))_+]]``
(size-biasing: ``C(n-1, m-1) g^(m-1) (1-g)^(n-m) / m = C(n, m) g^m (1-g)^(n-m) / (g n)``).
Proof sketch (written out in :func:`blanket_delta_histograms`): decompose each of
the other ``n - 1`` users' report as "blanket draw from omega" with probability
``gamma`` and "input-dependent residual" otherwise; by joint convexity of the
hockey-stick divergence and because the residual reports have the same law under
both datasets, ``delta <= E_{M'}[D_{e^eps}(Hist(R(x1) + M' omega) ||
Hist(R(x1') + M' omega))]``; and for ``m + 1`` reports of which one is drawn from
``mu`` and ``m`` from ``omega``, ``P(h) / W(h) = sum_y (h_y / (m+1)) mu(y)/omega(y)``
with ``W`` the law of ``m + 1`` omega-draws, so ``P(h) - e^eps Q(h) =
W(h) * (1/(m+1)) * sum_i L(Z_i)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from itertools import combinations, product

import mpmath
from mpmath import mpf

__all__ = [
    "DPS",
    "binary_rr_family_delta",
    "blanket_delta",
    "blanket_delta_histograms",
    "blanket_delta_krr_formula",
    "blanket_parameters",
    "dataset_delta",
    "eps0_of_matrix",
    "epsilon_from",
    "hadamard_matrix",
    "hadamard_sets",
    "krr_family_delta",
    "krr_matrix",
    "krr_worst_dataset",
    "krr_worst_delta",
    "olh_matrix",
    "olh_outputs",
    "oue_matrix",
    "subset_matrix",
    "subset_outputs",
    "sue_matrix",
    "sue_outputs",
    "worst_dataset",
    "worst_delta",
]

#: Working precision (significant decimal digits) of every computation here.
DPS = 50

Number = int | float | str | mpf
Matrix = list[list[mpf]]
Dist = dict[int, mpf]


def _prec() -> mpmath.ctx_mp.PrecisionManager:
    """Context manager: at least :data:`DPS` digits, never lowering the caller's."""
    return mpmath.workdps(max(DPS, mpmath.mp.dps))


# ---------------------------------------------------------------------------
# randomizer matrices
# ---------------------------------------------------------------------------


def _check_k(k: int, least: int = 2) -> None:
    if not isinstance(k, int) or k < least:
        raise ValueError(f"k must be an integer >= {least}, got {k!r}")


def krr_matrix(k: int, eps0: Number) -> Matrix:
    """k-ary randomized response: ``k`` inputs, ``k`` outputs (column ``y`` = report ``y``).

    Warner (JASA 1965) for ``k = 2``; Kairouz, Bonawitz, Ramage, "Discrete
    distribution estimation under local privacy", ICML 2016 (arXiv 1602.07387)
    for general ``k``: the true value is reported with probability
    ``e^eps0 / (e^eps0 + k - 1)`` and each other value with ``1 / (e^eps0 + k - 1)``.
    """
    _check_k(k)
    with _prec():
        e = mpmath.exp(mpf(eps0))
        z = e + (k - 1)
        p, q = e / z, 1 / z
        return [[p if y == x else q for y in range(k)] for x in range(k)]


def sue_outputs(k: int) -> list[tuple[int, ...]]:
    """Column labels of :func:`sue_matrix` / :func:`oue_matrix`: all ``2**k`` bit
    vectors in ``itertools.product((0, 1), repeat=k)`` order."""
    _check_k(k)
    return list(product((0, 1), repeat=k))


def _unary_matrix(k: int, one_if_true: mpf, one_if_false: mpf) -> Matrix:
    """Independent bits: bit ``i`` of the report is 1 with probability
    ``one_if_true`` if ``i`` is the input, ``one_if_false`` otherwise."""
    rows = []
    for x in range(k):
        row = []
        for bits in sue_outputs(k):
            pr = mpf(1)
            for i, b in enumerate(bits):
                p1 = one_if_true if i == x else one_if_false
                pr *= p1 if b else 1 - p1
            row.append(pr)
        rows.append(row)
    return rows


def sue_matrix(k: int, eps0: Number) -> Matrix:
    """Symmetric unary encoding (basic one-time RAPPOR) over a domain of ``k`` values.

    Wang, Blocki, Li, Jha, "Locally Differentially Private Protocols for Frequency
    Estimation", USENIX Security 2017, section 4.3 (SUE): the input is one-hot
    encoded into ``k`` bits and every bit is kept with probability
    ``p = e^{eps0/2} / (e^{eps0/2} + 1)`` and flipped otherwise (so a 1 is reported
    as 1 with ``p`` and a 0 as 1 with ``1 - p``); two inputs differ in two bits,
    hence the ratio bound ``(p / (1-p))^2 = e^eps0``. Columns: :func:`sue_outputs`.
    """
    _check_k(k)
    with _prec():
        h = mpmath.exp(mpf(eps0) / 2)
        p = h / (h + 1)
        return _unary_matrix(k, p, 1 - p)


def oue_matrix(k: int, eps0: Number) -> Matrix:
    """Optimized unary encoding over a domain of ``k`` values.

    Wang, Blocki, Li, Jha, USENIX Security 2017, section 4.4 (OUE): the bit of the
    input is reported as 1 with probability ``1/2``; every other bit is reported
    as 1 with probability ``1 / (e^eps0 + 1)``. Columns: :func:`sue_outputs`.
    """
    _check_k(k)
    with _prec():
        return _unary_matrix(k, mpf(1) / 2, 1 / (mpmath.exp(mpf(eps0)) + 1))


def olh_outputs(k: int, g: int) -> list[tuple[tuple[int, ...], int]]:
    """Column labels of :func:`olh_matrix`: pairs ``(hash, value)`` where ``hash``
    is the tuple ``(h(0), ..., h(k-1))`` of an arbitrary function ``[k] -> [g]``,
    in ``itertools.product`` order, and ``value`` in ``range(g)``."""
    _check_k(k)
    _check_k(g)
    return [(hsh, v) for hsh in product(range(g), repeat=k) for v in range(g)]


def olh_matrix(k: int, g: int, eps0: Number) -> Matrix:
    """(Optimized) local hashing with the family of *all* functions ``[k] -> [g]``.

    Wang, Blocki, Li, Jha, USENIX Security 2017, section 4.5 (BLH/OLH; OLH is the
    choice ``g = round(e^eps0 + 1)``, here ``g`` is a free parameter): the user
    draws a hash function ``H`` uniformly, computes ``v = H(x)`` and reports
    ``(H, v')`` where ``v'`` is ``g``-ary randomized response on ``v``
    (``e^eps0 / (e^eps0 + g - 1)`` on ``v``, ``1 / (e^eps0 + g - 1)`` on each other
    value). A real deployment draws ``H`` from a (small) universal family
    (e.g. xxhash with a random seed); the family of all ``g**k`` functions is the
    idealised model the privacy analysis uses (hash values of distinct inputs
    independent and uniform), and it is what this matrix implements. It has
    ``g**(k+1)`` columns (:func:`olh_outputs`), so only tiny ``k, g`` are usable.
    """
    _check_k(k)
    _check_k(g)
    with _prec():
        e = mpmath.exp(mpf(eps0))
        z = (e + (g - 1)) * mpf(g) ** k
        hit, miss = e / z, 1 / z
        return [[hit if hsh[x] == v else miss for hsh, v in olh_outputs(k, g)] for x in range(k)]


def hadamard_sets(k: int) -> tuple[int, list[list[int]]]:
    """``(K, [C_0, ..., C_{k-1}])`` of the Hadamard response for ``k`` inputs.

    ``K`` is the smallest power of two ``>= k + 1``; with the Sylvester Hadamard
    matrix ``H[i][j] = (-1)^{popcount(i & j)}`` of order ``K``, input ``x`` uses
    row ``x + 1`` (row 0, all ones, is skipped) and ``C_x = {j : H[x+1][j] = +1}``,
    a set of size ``K / 2``.
    """
    _check_k(k)
    big_k = 1
    while big_k < k + 1:
        big_k *= 2
    sets = [[j for j in range(big_k) if ((x + 1) & j).bit_count() % 2 == 0] for x in range(k)]
    return big_k, sets


def hadamard_matrix(k: int, eps0: Number) -> Matrix:
    """Hadamard response (Acharya, Sun, Zhang, "Hadamard Response: Estimating
    Distributions Privately, Efficiently, and with Little Communication",
    AISTATS 2019, arXiv 1802.04705), the basic (high-privacy) scheme.

    Outputs are ``range(K)`` with ``K`` and the sets ``C_x`` of
    :func:`hadamard_sets`; the report is uniform on ``C_x`` with total probability
    ``e^eps0 / (e^eps0 + 1)`` and uniform on the complement otherwise, i.e.
    ``2 e^eps0 / (K (e^eps0 + 1))`` on each element of ``C_x`` and
    ``2 / (K (e^eps0 + 1))`` elsewhere. Checked against the authors' public
    implementation (github.com/zitengsun/hadamard_response, ``k2k_hadamard.py``,
    class ``Hadamard_Rand_high_priv``: ``K = 2^ceil(log2(k+1))``, input ``x`` mapped
    to row ``x + 1``, the in-set element kept with probability
    ``1 - 1/(1+e^eps0)``). The paper's general scheme for large ``eps0`` (blocks
    of size ``b``) is a different matrix and is not built here.
    """
    _check_k(k)
    big_k, sets = hadamard_sets(k)
    with _prec():
        e = mpmath.exp(mpf(eps0))
        inside = 2 * e / (big_k * (e + 1))
        outside = mpf(2) / (big_k * (e + 1))
        return [[inside if j in set(c) else outside for j in range(big_k)] for c in sets]


def subset_outputs(k: int, d: int) -> list[tuple[int, ...]]:
    """Column labels of :func:`subset_matrix`: ``itertools.combinations(range(k), d)``."""
    _check_k(k)
    if not isinstance(d, int) or not 1 <= d <= k - 1:
        raise ValueError(f"d must be an integer in [1, k-1] = [1, {k - 1}], got {d!r}")
    return list(combinations(range(k), d))


def subset_matrix(k: int, d: int, eps0: Number) -> Matrix:
    """d-subset selection (Ye, Barg, "Optimal schemes for discrete distribution
    estimation under locally differential privacy", IEEE Trans. Inf. Theory 2018,
    arXiv 1702.00610; Wang, Wu, Hu, "Mutual information optimally local private
    discrete distribution estimation", arXiv 1607.08025, 2016).

    Outputs are the ``d``-subsets of ``[k]`` (:func:`subset_outputs`); a subset
    containing the input has weight ``e^eps0``, every other subset weight 1,
    normalised by ``C(k-1, d-1) e^eps0 + C(k-1, d)``. ``d = 1`` is k-RR.
    """
    outs = subset_outputs(k, d)
    with _prec():
        e = mpmath.exp(mpf(eps0))
        z = math.comb(k - 1, d - 1) * e + math.comb(k - 1, d)
        return [[e / z if x in s else 1 / z for s in outs] for x in range(k)]


def _validate(m: Matrix) -> None:
    if len(m) < 2 or any(len(r) != len(m[0]) for r in m) or not m[0]:
        raise ValueError("a randomizer matrix needs >= 2 rows of equal, non-zero length")
    for r in m:
        if any(v < 0 for v in r):
            raise ValueError("negative entry in randomizer matrix")
        if abs(mpmath.fsum(r) - 1) > mpf(10) ** (-(DPS - 15)):
            raise ValueError("a row of the randomizer matrix does not sum to 1")


def eps0_of_matrix(m: Matrix) -> mpf:
    """``max_{y, x, x'} log(M[x][y] / M[x'][y])`` over columns with some positive
    entry; ``+inf`` if such a column also has a zero entry (no pure local DP)."""
    with _prec():
        _validate(m)
        best = mpf(0)
        for y in range(len(m[0])):
            col = [r[y] for r in m]
            hi, lo = max(col), min(col)
            if hi == 0:
                continue
            if lo == 0:
                return mpmath.inf
            best = max(best, mpmath.log(hi / lo))
        return best


# ---------------------------------------------------------------------------
# shuffled histograms
# ---------------------------------------------------------------------------


def _add_report(dist: Dist, row: Sequence[mpf], units: Sequence[int]) -> Dist:
    """Law of the histogram after one more user whose report has law ``row``."""
    out: Dist = {}
    for code, pr in dist.items():
        for y, r in enumerate(row):
            if r:
                c = code + units[y]
                v = pr * r
                prev = out.get(c)
                out[c] = v if prev is None else prev + v
    return out


def _units(n_outputs: int, n_users: int) -> list[int]:
    radix = n_users + 1
    return [radix**y for y in range(n_outputs)]


def _others_law(m: Matrix, others: Sequence[int], units: Sequence[int]) -> Dist:
    dist: Dist = {0: mpf(1)}
    for x in others:
        dist = _add_report(dist, m[x], units)
    return dist


def _hockey_aligned(pa: Sequence[mpf], pb: Sequence[mpf], t: mpf) -> mpf:
    """``max(sum (pa - t pb)_+, sum (pb - t pa)_+)`` for two aligned probability vectors."""
    fwd = mpf(0)
    bwd = mpf(0)
    for a, b in zip(pa, pb):
        d = a - t * b
        if d > 0:
            fwd += d
        d = b - t * a
        if d > 0:
            bwd += d
    return max(fwd, bwd)


def _hockey_both(a: Dist, b: Dist, t: mpf) -> mpf:
    """:func:`_hockey_aligned` over the union of the supports of two laws."""
    keys = list(a.keys() | b.keys())
    zero = mpf(0)
    return _hockey_aligned([a.get(c, zero) for c in keys], [b.get(c, zero) for c in keys], t)


def _check_input(m: Matrix, x: int, what: str) -> None:
    if not isinstance(x, int) or not 0 <= x < len(m):
        raise ValueError(f"{what} must be an input index in [0, {len(m) - 1}], got {x!r}")


def dataset_delta(m: Matrix, others: Sequence[int], x1: int, x1p: int, eps: Number) -> mpf:
    """Exact ``delta(eps)`` between the shuffled outputs of the datasets
    ``(x1, *others)`` and ``(x1p, *others)`` for randomizer ``m`` (both directions).

    The histogram law is built by convolving the users' report laws one user at a
    time (every histogram of ``len(others) + 1`` reports is enumerated).
    """
    with _prec():
        _validate(m)
        _check_input(m, x1, "x1")
        _check_input(m, x1p, "x1p")
        for x in others:
            _check_input(m, x, "an entry of others")
        units = _units(len(m[0]), len(others) + 1)
        base = _others_law(m, others, units)
        t = mpmath.exp(mpf(eps))
        return _hockey_both(_add_report(base, m[x1], units), _add_report(base, m[x1p], units), t)


def _multisets(k: int, size: int) -> Iterator[tuple[int, ...]]:
    """Count vectors ``(c_0, ..., c_{k-1})`` summing to ``size`` (all multisets)."""
    if k == 1:
        yield (size,)
        return
    for c in range(size, -1, -1):
        for rest in _multisets(k - 1, size - c):
            yield (c,) + rest


def worst_dataset(m: Matrix, n: int, eps: Number) -> tuple[mpf, int, int, tuple[int, ...]]:
    """``(delta, x1, x1p, counts)`` maximising :func:`dataset_delta` over *all*
    neighbouring datasets of ``n`` users: every unordered pair ``{x1, x1p}`` (both
    directions, so every ordered pair) and every multiset of the other ``n - 1``
    inputs (``counts[x]`` = how many other users hold ``x``). No symmetry of ``m``
    is assumed. Prefix-shared convolutions; cost grows like
    ``C(n-1+k-1, k-1) * k * C(n+s-1, s-1) * s`` for ``k`` inputs and ``s`` outputs.
    """
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    with _prec():
        _validate(m)
        k, s = len(m), len(m[0])
        units = _units(s, n)
        t = mpmath.exp(mpf(eps))
        best: list = [mpf(-1), 0, 0, ()]

        def leaf(dist: Dist, counts: tuple[int, ...]) -> None:
            full = [_add_report(dist, m[x], units) for x in range(k)]
            for a in range(k):
                for b in range(a + 1, k):
                    d = _hockey_both(full[a], full[b], t)
                    if d > best[0]:
                        best[:] = [d, a, b, counts]

        def rec(v: int, remaining: int, dist: Dist, counts: tuple[int, ...]) -> None:
            if v == k - 1:
                for _ in range(remaining):
                    dist = _add_report(dist, m[v], units)
                leaf(dist, counts + (remaining,))
                return
            for c in range(remaining + 1):
                if c:
                    dist = _add_report(dist, m[v], units)
                rec(v + 1, remaining - c, dist, counts + (c,))

        rec(0, n - 1, {0: mpf(1)}, ())
        return best[0], best[1], best[2], best[3]


def worst_delta(m: Matrix, n: int, eps: Number) -> mpf:
    """``max`` of :func:`dataset_delta` over all neighbouring datasets of ``n``
    users (see :func:`worst_dataset`)."""
    return worst_dataset(m, n, eps)[0]


# --- k-RR, reduced by relabelling -------------------------------------------


def _partitions(total: int, parts: int, cap: int) -> Iterator[tuple[int, ...]]:
    """Non-increasing tuples of ``parts`` non-negative integers ``<= cap`` summing to ``total``."""
    if parts == 0:
        if total == 0:
            yield ()
        return
    for c in range(min(total, cap), -1, -1):
        if c * parts < total:
            break
        for rest in _partitions(total - c, parts - 1, c):
            yield (c,) + rest


@lru_cache(maxsize=32)
def _krr_leaves(
    n: int, k: int, eps0: mpf, dps: int
) -> tuple[tuple[tuple[int, ...], list[mpf], list[mpf]], ...]:
    """For every reduced dataset (see :func:`krr_worst_dataset`), the aligned
    probability vectors of the full output histogram with the first user on 0
    and on 1. ``dps`` (the working precision) is only part of the cache key."""
    m = krr_matrix(k, eps0)
    units = _units(k, n)
    leaves = []
    for tail_total in range(n):
        for lam in _partitions(tail_total, k - 2, tail_total):
            dist: Dist = {0: mpf(1)}
            for j, c in enumerate(lam):
                for _ in range(c):
                    dist = _add_report(dist, m[2 + j], units)
            rest = n - 1 - tail_total
            for c0 in range(rest + 1):
                if c0:
                    dist = _add_report(dist, m[0], units)
                c1 = rest - c0
                if c1 > c0:
                    continue  # the swap 0 <-> 1 maps it to (c1, c0) with directions swapped
                leafdist = dist
                for _ in range(c1):
                    leafdist = _add_report(leafdist, m[1], units)
                pa = _add_report(leafdist, m[0], units)
                pb = _add_report(leafdist, m[1], units)
                keys = sorted(pa.keys() | pb.keys())
                zero = mpf(0)
                leaves.append(
                    ((c0, c1) + lam, [pa.get(c, zero) for c in keys], [pb.get(c, zero) for c in keys])
                )
    return tuple(leaves)


def krr_worst_dataset(n: int, k: int, eps0: Number, eps: Number) -> tuple[mpf, tuple[int, ...]]:
    """``(delta, counts)``: exact worst case over all neighbouring datasets of ``n``
    users for k-ary randomized response, on the full output histogram.

    Exact reduction used (and nothing else): k-RR is equivariant under every
    permutation ``pi`` of ``[k]`` (``M[pi x][pi y] = M[x][y]``), and permuting the
    coordinates of the histogram is a bijection that preserves both hockey-stick
    divergences. So the differing inputs can be taken to be ``x1 = 0, x1p = 1``;
    the other users are described by ``counts = (c0, c1, l2, ..., l_{k-1})``
    (``c0`` hold 0, ``c1`` hold 1, the counts on the other values sorted
    non-increasingly), and ``c0 >= c1`` (swapping 0 and 1 exchanges the two
    directions, and both are maximised). The histogram laws do not depend on
    ``eps`` and are cached per ``(n, k, eps0)``; the first call at ``n = 12,
    k = 4`` takes a few seconds, later calls with other ``eps`` are faster.
    """
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    _check_k(k)
    with _prec():
        leaves = _krr_leaves(n, k, mpf(eps0), mpmath.mp.dps)
        t = mpmath.exp(mpf(eps))
        best, arg = mpf(-1), ()
        for counts, pa, pb in leaves:
            d = _hockey_aligned(pa, pb, t)
            if d > best:
                best, arg = d, counts
        return best, arg


def krr_worst_delta(n: int, k: int, eps0: Number, eps: Number) -> mpf:
    """Exact worst-case ``delta(eps)`` of shuffled k-RR over all neighbouring
    datasets of ``n`` users (see :func:`krr_worst_dataset`)."""
    return krr_worst_dataset(n, k, eps0, eps)[0]


# ---------------------------------------------------------------------------
# attained families, from closed-form multinomials (a second route)
# ---------------------------------------------------------------------------


def _compositions(total: int, parts: int) -> Iterator[tuple[int, ...]]:
    return _multisets(parts, total)


@lru_cache(maxsize=64)
def _krr_family_vectors(
    n: int, k: int, eps0: mpf, a: int, holders: str, dps: int
) -> tuple[list[tuple[int, ...]], list[mpf], list[mpf]]:
    """Histograms of ``n`` reports and their probabilities under the two datasets
    (``dps``, the working precision, is only part of the cache key)."""
    e = mpmath.exp(eps0)
    p, q = e / (e + k - 1), 1 / (e + k - 1)
    fact = [math.factorial(i) for i in range(n + 1)]
    pw_p = [p**i for i in range(n + 1)]
    pw_q = [q**i for i in range(n + 1)]
    units = _units(k, n)

    def multinomial_law(size: int, val: int) -> list[tuple[int, mpf]]:
        # closed-form pmf of Multinomial(size; k-RR row of input val), keyed by code
        out = []
        for u in _compositions(size, k):
            coef = fact[size]
            for c in u:
                coef //= fact[c]
            code = sum(c * w for c, w in zip(u, units))
            out.append((code, coef * pw_p[u[val]] * pw_q[size - u[val]]))
        return out

    first = multinomial_law(a, 0 if holders == "x1" else 1)
    second = multinomial_law(n - 1 - a, 2 if a < n - 1 else 0)
    others: Dist = {}
    for cu, pu in first:
        for cw, pw in second:
            c = cu + cw
            v = pu * pw
            prev = others.get(c)
            others[c] = v if prev is None else prev + v
    hists: list[tuple[int, ...]] = []
    pa: list[mpf] = []
    pb: list[mpf] = []
    zero = mpf(0)
    for h in _compositions(n, k):
        code = sum(c * w for c, w in zip(h, units))
        sa = mpf(0)
        sb = mpf(0)
        for y in range(k):
            if h[y]:
                o = others.get(code - units[y], zero)
                sa += (p if y == 0 else q) * o
                sb += (p if y == 1 else q) * o
        hists.append(h)
        pa.append(sa)
        pb.append(sb)
    return hists, pa, pb


def krr_family_delta(
    n: int, k: int, eps0: Number, eps: Number, a: int, holders: str = "x1", projected: bool = False
) -> mpf:
    """Exact ``delta(eps)`` (both directions) of shuffled k-RR on the full output
    histogram for the dataset family of ``blanket.md`` / issue 10: the first user
    holds ``x1 = 0`` versus ``x1p = 1``; ``a`` of the other users hold ``x1``
    (``holders="x1"``) or ``x1p`` (``holders="x1p"``); the remaining ``n - 1 - a``
    hold the common third value 2 (so ``k >= 3`` unless ``a = n - 1``).

    Computed from closed-form multinomial probabilities (the other users' histogram
    is the sum of a ``Multinomial(a, row)`` and a ``Multinomial(n-1-a, row_2)``,
    summed over all splits), not by the convolution of :func:`dataset_delta`.
    The two ``holders`` variants are equal (relabelling 0 <-> 1 maps one to the
    other with the directions swapped); both are offered so that tests show it.
    ``a = 0`` is the third-value pair; for ``k = 3`` the full histogram is a
    function of the two counts, so it equals that pair's projection.
    ``projected=True`` returns instead the divergence of the marginal law of the
    two counts ``(h_0, h_1)`` only (the clone-pair projection of
    ``amplification.md``, a lower bound on the full value by data processing).
    """
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    _check_k(k)
    if not isinstance(a, int) or not 0 <= a <= n - 1:
        raise ValueError(f"a must be an integer in [0, n-1] = [0, {n - 1}], got {a!r}")
    if k < 3 and a < n - 1:
        raise ValueError("a third value needs k >= 3 (or a = n - 1)")
    if holders not in ("x1", "x1p"):
        raise ValueError(f"holders must be 'x1' or 'x1p', got {holders!r}")
    with _prec():
        hists, pa, pb = _krr_family_vectors(n, k, mpf(eps0), a, holders, mpmath.mp.dps)
        t = mpmath.exp(mpf(eps))
        if not projected:
            return _hockey_aligned(pa, pb, t)
        ma: dict[int, mpf] = {}
        mb: dict[int, mpf] = {}
        for h, va, vb in zip(hists, pa, pb):
            key = h[0] * (n + 1) + h[1]
            ma[key] = ma.get(key, mpf(0)) + va
            mb[key] = mb.get(key, mpf(0)) + vb
        return _hockey_both(ma, mb, t)


def _binom_coeffs(size: int) -> list[mpf]:
    """``C(size, i)`` for ``i = 0..size`` as mpf, by the exact-ratio recurrence
    ``C(size, i+1) = C(size, i) (size - i) / (i + 1)`` (relative error below
    ``2 size`` ulp; converting huge Python integers to mpf is much slower)."""
    out = [mpf(1)]
    for i in range(size):
        out.append(out[-1] * (size - i) / (i + 1))
    return out


def binary_rr_family_delta(n: int, eps0: Number, eps: Number, m: int) -> mpf:
    """Exact ``delta(eps)`` (both directions) of shuffled binary randomized response
    (``p = e^eps0 / (e^eps0 + 1)``) for the datasets ``(0, 0^m, 1^(n-1-m))`` versus
    ``(1, 0^m, 1^(n-1-m))``: ``m`` other users hold the first user's value
    ``x1 = 0``, the other ``n - 1 - m`` hold ``1``.

    The output is the number ``Z`` of reports equal to 0; the other users
    contribute ``Bin(m, p) + Bin(n-1-m, 1-p)`` (closed-form binomial pmfs,
    convolved; cost ``O(m (n - m))``, about 1 s at ``n = 10^4, m = 1`` and
    ``n = 10^3, m = 500``), the first user adds one with
    probability ``p`` (dataset 1) or ``1 - p`` (dataset 2). ``m = 0`` is the
    binary RR row of ``amplification.md``.
    """
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    if not isinstance(m, int) or not 0 <= m <= n - 1:
        raise ValueError(f"m must be an integer in [0, n-1] = [0, {n - 1}], got {m!r}")
    with _prec():
        e = mpmath.exp(mpf(eps0))
        p = e / (e + 1)
        q = 1 - p
        r = n - 1 - m
        pw_p = [mpf(1)]
        pw_q = [mpf(1)]
        for _ in range(n):
            pw_p.append(pw_p[-1] * p)
            pw_q.append(pw_q[-1] * q)
        bin_m = [c * pw_p[i] * pw_q[m - i] for i, c in enumerate(_binom_coeffs(m))]
        bin_r = [c * pw_q[j] * pw_p[r - j] for j, c in enumerate(_binom_coeffs(r))]
        others = [mpf(0)] * n
        for i, wi in enumerate(bin_m):
            for j, wj in enumerate(bin_r):
                others[i + j] += wi * wj
        padded = [mpf(0)] + others + [mpf(0)]  # padded[z + 1] = Pr[others report z zeros]
        law_p = [p * padded[z] + q * padded[z + 1] for z in range(n + 1)]
        law_q = [q * padded[z] + p * padded[z + 1] for z in range(n + 1)]
        return _hockey_aligned(law_p, law_q, mpmath.exp(mpf(eps)))


# ---------------------------------------------------------------------------
# the privacy blanket
# ---------------------------------------------------------------------------


def blanket_parameters(m: Matrix) -> tuple[mpf, list[mpf]]:
    """``(gamma, omega)``: blanket mass ``sum_y min_x M[x][y]`` and blanket
    distribution ``omega(y) = min_x M[x][y] / gamma`` (Balle et al. CRYPTO 2019,
    section 3). Raises ``ValueError`` if some column has a zero and a positive
    entry (then the privacy-amplification variable is unbounded)."""
    with _prec():
        _validate(m)
        mins = []
        for y in range(len(m[0])):
            col = [r[y] for r in m]
            if min(col) == 0 and max(col) > 0:
                raise ValueError(f"column {y} has a zero and a positive entry: no pure local DP")
            mins.append(min(col))
        gamma = mpmath.fsum(mins)
        return gamma, [v / gamma for v in mins]


def blanket_delta(m: Matrix, n: int, eps: Number) -> mpf:
    """The privacy-blanket bound, evaluated exactly by enumeration:

        delta(eps) = max over ordered pairs x1 != x1p of
                     (1 / (gamma n)) * sum_{j=1}^{n} C(n, j) gamma^j (1-gamma)^(n-j)
                       * sum_{h: |h| = j} Mult(h; j, omega) * (sum_y h_y L(y))_+

    with ``L(y) = (M[x1][y] - e^eps M[x1p][y]) / omega(y)`` and ``h`` running over
    all count vectors of ``j`` blanket draws on the support of ``omega``
    (Balle, Bell, Gascon, Nissim, "The Privacy Blanket of the Shuffle Model",
    CRYPTO 2019, arXiv 1903.02837, section 3; see the module docstring).

    Form verified: ``M ~ Bin(n, gamma)`` (not ``n - 1``) with the factor
    ``1 / (gamma n)``: this is the size-biased form of ``E_{M' ~ Bin(n-1, gamma)}
    [(1/(M'+1)) E(sum_{i<=M'+1} L_i)_+]``, which the derivation gives directly; it
    is what the authors' public code evaluates (github.com/BorjaBalle/
    amplification-by-shuffling, ``shuffleddp/amplification_bounds.py``:
    ``delta = 1/(gamma n) * binom.expect(..., args=(n, gamma))``), and what
    Takagi et al. (arXiv 2601.19154) restate as the "blanket divergence". The
    self-checks also compare it with :func:`blanket_delta_histograms`, which
    evaluates the un-closed form by exact histogram divergences.
    Cost: ``sum_{j<=n} C(j+s-1, s-1)`` count vectors times ``k (k-1) s``.
    """
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    with _prec():
        gamma, omega = blanket_parameters(m)
        support = [y for y, w in enumerate(omega) if w > 0]
        om = [omega[y] for y in support]
        s = len(support)
        t = mpmath.exp(mpf(eps))
        fact = [math.factorial(i) for i in range(n + 1)]
        # weight of each count vector h (j = |h| blanket draws), pair-independent
        terms: list[tuple[tuple[int, ...], mpf]] = []
        for j in range(1, n + 1):
            wj = math.comb(n, j) * gamma**j * (1 - gamma) ** (n - j) / (gamma * n)
            for h in _compositions(j, s):
                coef = fact[j]
                pr = mpf(1)
                for c, w in zip(h, om):
                    coef //= fact[c]
                    if c:
                        pr *= w**c
                terms.append((h, wj * coef * pr))
        best = mpf(0)
        k = len(m)
        for x1 in range(k):
            for x1p in range(k):
                if x1 == x1p:
                    continue
                lv = [(m[x1][y] - t * m[x1p][y]) / omega[y] for y in support]
                tot = mpf(0)
                for h, w in terms:
                    val = mpmath.fsum(c * l for c, l in zip(h, lv) if c)
                    if val > 0:
                        tot += w * val
                best = max(best, tot)
        return best


def blanket_delta_histograms(m: Matrix, n: int, eps: Number) -> mpf:
    """The blanket bound *before* its closed form, by exact histogram divergences:

        max over ordered pairs x1 != x1p of
        sum_{j=0}^{n-1} C(n-1, j) gamma^j (1-gamma)^(n-1-j)
            * D_{e^eps}( Hist(R(x1) + j omega-draws) || Hist(R(x1p) + j omega-draws) )

    Why this bounds the shuffled ``delta`` (the step of Balle et al.'s proof that
    fixes ``n`` versus ``n - 1``): write every other user's report law as
    ``gamma omega + (1 - gamma) nu_i`` (``nu_i >= 0`` because ``omega gamma`` is the
    column minimum). Condition on which of the ``n - 1`` other users drew from
    ``omega`` (``j ~ Bin(n-1, gamma)``) and on the residual reports: those have the
    same law under both datasets and are independent of the rest, so by joint
    convexity of ``D_{e^eps}`` and post-processing the divergence is at most the
    average of the divergences of ``Hist(first user + j omega-draws)``.
    :func:`blanket_delta` must equal this (identity in the module docstring); the
    self-checks verify it.
    """
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    with _prec():
        gamma, omega = blanket_parameters(m)
        units = _units(len(omega), n)
        t = mpmath.exp(mpf(eps))
        k = len(m)
        blankets: list[Dist] = [{0: mpf(1)}]
        for _ in range(n - 1):
            blankets.append(_add_report(blankets[-1], omega, units))
        best = mpf(0)
        for x1 in range(k):
            for x1p in range(x1 + 1, k):
                fwd = mpf(0)
                bwd = mpf(0)
                for j, dist in enumerate(blankets):
                    wj = math.comb(n - 1, j) * gamma**j * (1 - gamma) ** (n - 1 - j)
                    pa = _add_report(dist, m[x1], units)
                    pb = _add_report(dist, m[x1p], units)
                    zero = mpf(0)
                    for c in pa.keys() | pb.keys():
                        a, b = pa.get(c, zero), pb.get(c, zero)
                        if a > t * b:
                            fwd += wj * (a - t * b)
                        if b > t * a:
                            bwd += wj * (b - t * a)
                best = max(best, fwd, bwd)
        return best


def blanket_delta_krr_formula(n: int, k: int, eps0: Number, eps: Number) -> mpf:
    """Spec ``blanket.md`` section 3 for k-RR, summed exactly:

        delta(eps) = (1/n) E[((e^eps0 - e^eps) A - (e^{eps0+eps} - 1) B - (e^eps - 1) O)_+],
        (A, B, O, rest) ~ Multinomial(n; q, q, (k-2) q, 1 - k q),  q = 1/(e^eps0 + k - 1).

    (``gamma = k q``, ``omega`` uniform, ``L`` equals ``k q`` times the three
    coefficients on ``x1``, ``x1p`` and the other values, so the ``1/(gamma n)``
    becomes ``1/n``.) ``O(n^3)`` terms.
    """
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    _check_k(k)
    with _prec():
        e0 = mpmath.exp(mpf(eps0))
        e = mpmath.exp(mpf(eps))
        q = 1 / (e0 + k - 1)
        qo = (k - 2) * q
        r = 1 - k * q
        ca, cb, co = e0 - e, e0 * e - 1, e - 1
        fact = [math.factorial(i) for i in range(n + 1)]
        tot = mpf(0)
        for a in range(n + 1):
            for b in range(n + 1 - a):
                for o in range(n + 1 - a - b if k > 2 else 1):
                    val = ca * a - cb * b - co * o
                    if val <= 0:
                        continue
                    rest = n - a - b - o
                    coef = fact[n] // (fact[a] * fact[b] * fact[o] * fact[rest])
                    tot += coef * q ** (a + b) * qo**o * r**rest * val
        return tot / n


# ---------------------------------------------------------------------------
# search
# ---------------------------------------------------------------------------


def epsilon_from(
    delta_fn: Callable[[mpf], Number],
    delta: Number,
    lo: Number,
    hi: Number,
    tol: Number = "1e-13",
) -> mpf:
    """Smallest ``eps`` in ``[lo, hi]`` with ``delta_fn(eps) <= delta``, for a
    non-increasing ``delta_fn``, by bisection in mpmath to within ``tol``.

    Returns ``lo`` if ``delta_fn(lo) <= delta``; otherwise the returned value
    ``e`` satisfies ``delta_fn(e) <= delta`` and ``delta_fn(e - tol') > delta`` for
    some ``tol' <= tol`` (so it overestimates the exact answer by less than
    ``tol``). Raises ``ValueError`` if ``delta_fn(hi) > delta``.
    """
    with _prec():
        lo_m, hi_m, target = mpf(lo), mpf(hi), mpf(delta)
        if not lo_m <= hi_m:
            raise ValueError("need lo <= hi")
        if mpf(delta_fn(hi_m)) > target:
            raise ValueError(f"delta_fn(hi) > delta at hi = {hi_m}: enlarge hi")
        if mpf(delta_fn(lo_m)) <= target:
            return lo_m
        while hi_m - lo_m > mpf(tol):
            mid = (lo_m + hi_m) / 2
            if mpf(delta_fn(mid)) <= target:
                hi_m = mid
            else:
                lo_m = mid
        return hi_m

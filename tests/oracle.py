"""Independent brute-force oracle for amplification by shuffling.

This module is a *reference*, not an implementation: every quantity is computed
by the most literal enumeration of the mathematical definition that is still
feasible, in ``mpmath`` arbitrary precision, in pure Python (no numpy/scipy).
It shares no code with ``shuffle_accountant`` and must stay that way: tests
compare the package's fast path against the numbers produced here.

Source of the definitions: ``/work/shared/spec/amplification.md`` sections 1, 2
and 5.

Contents
--------
The clone pair family (spec section 1)
    :func:`clone_pair` builds the two distributions ``P``, ``Q`` over count pairs
    ``(a, b)`` from the two-stage definition (``C ~ Bin(n-1, r0+r1)``,
    ``A | C ~ Bin(C, r0/(r0+r1))``, plus the first user's contribution).
    :func:`clone_pair_by_users` builds the same pair a second, independent way
    (user-by-user convolution of the per-user trinomial description); the
    self-checks compare the two. :func:`clone_pair_with_c` keeps the number of
    clones in the outcome (see the k-RR findings below).

Divergences (spec section 2)
    :func:`hockey_stick`, :func:`delta_exact`, :func:`renyi`, :func:`rdp_exact`,
    :func:`epsilon_exact`, :func:`total_variation`.

Named analyses (spec table, parameters only)
    :func:`clones_params`, :func:`stronger_clones_params`, :func:`krr_params`,
    :func:`binary_rr_params`, :func:`variation_ratio_params`.

Mechanism-level cross-checks (built from the local randomizers, not the table)
    :func:`krr_output_probs`, :func:`shuffled_rr_distribution` (any dataset),
    :func:`shuffled_krr_histogram_pair`, :func:`shuffled_krr_projection`,
    :func:`shuffled_binary_rr`, :func:`project_pair`.

Helpers for composition / decomposition tests
    :func:`product_pair`, :func:`conditional_pairs`.

Findings about the spec (checked in ``test_oracle_selfcheck.py``)
-----------------------------------------------------------------
* Binary RR row: it is *exactly* the shuffled 2RR output for
  ``x = (0, 1, ..., 1)`` vs ``x' = (1, 1, ..., 1)`` (others hold **1**), with
  ``P`` the dataset whose first user holds 0. Others holding 0 give the same
  pair with coordinates and directions swapped.
* k-RR row, projection: it is *exactly* the law of ``(count0, count1)`` of
  shuffled k-RR for ``x = (0, 2, ..., 2)`` vs ``x' = (1, 2, ..., 2)``.
* k-RR row, full output: for ``k = 3`` the histogram is a function of
  ``(count0, count1)`` (``count2 = n - count0 - count1``), so nothing is lost.
  For ``k >= 4`` the projection **loses information**: the full histogram of
  the same datasets has strictly larger Renyi divergence (and hockey-stick
  divergence at some ``eps``). So "attained" holds only for the projection.
* k-RR row, "upper bound": **false**, already for ``k = 3``. With the other
  users holding the first user's value 0, e.g. ``n = 2, k = 3, eps0 = 1``,
  ``x = (0, 0)`` vs ``x' = (1, 0)``: ``delta(0.7) = 0.08603`` for the true
  shuffled output but ``0.07214`` for the table pair (see the self-check for
  the hand computation). The pair with ``C`` observed
  (:func:`clone_pair_with_c`) dominated every small dataset tried.

Conventions
-----------
* A *distribution* is a ``dict`` mapping an outcome (any hashable) to an
  ``mpmath.mpf`` probability. Only outcomes of positive probability are stored,
  so the keys are exactly the support.
* A *pair* is a tuple ``(P, Q)`` of two distributions on a common outcome space
  (their supports may differ).
* Every function that does arithmetic takes ``dps`` (decimal digits of working
  precision; default 50) and runs inside ``mpmath.workdps(dps)``; it never
  changes the global mpmath context. Returned mpf values keep their full
  precision, but arithmetic *you* do on them (e.g. ``abs(x - y)``) runs at the
  global precision, 15 digits by default: wrap such comparisons in
  ``with mpmath.workdps(50):`` (the self-check module does this with an
  autouse fixture) or you will see spurious ``1e-17`` differences.
* Inputs may be ``int``, ``float``, ``str``, ``fractions.Fraction`` or ``mpf``.
  Probabilities that must sum to one (``pa + pb + p0``) are checked to the
  working precision, so pass exact values (``mpf``, ``str``, ``Fraction``) rather
  than rounded floats such as ``0.6, 0.3, 0.1``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from itertools import product as _iproduct

import mpmath
from mpmath import mpf

__all__ = [
    "clone_pair",
    "clone_pair_by_users",
    "clone_pair_with_c",
    "total_variation",
    "hockey_stick",
    "delta_exact",
    "renyi",
    "rdp_exact",
    "epsilon_exact",
    "clones_params",
    "stronger_clones_params",
    "krr_params",
    "binary_rr_params",
    "variation_ratio_params",
    "krr_output_probs",
    "shuffled_rr_distribution",
    "shuffled_krr_histogram_pair",
    "shuffled_krr_projection",
    "shuffled_binary_rr",
    "project_pair",
    "product_pair",
    "conditional_pairs",
    "pair_max_abs_diff",
    "sum_tolerance",
]

DEFAULT_DPS = 50


# ---------------------------------------------------------------------------
# small utilities
# ---------------------------------------------------------------------------


def _mpf(x) -> mpf:
    """Convert ``x`` to an mpf at the *current* working precision.

    Fractions are converted as ``numerator / denominator`` (exact up to the
    working precision); everything else goes through ``mpmath.mpf``.
    """
    if isinstance(x, Fraction):
        return mpf(x.numerator) / mpf(x.denominator)
    return mpf(x)


def sum_tolerance(dps: int = DEFAULT_DPS) -> mpf:
    """Tolerance used for "sums to one" checks at working precision ``dps``.

    ``1e-40`` for ``dps >= 50`` (the oracle's default), otherwise
    ``10**-(dps-10)``: ten digits are left for accumulated rounding over the
    O(n^2) terms.
    """
    return mpf(10) ** (-min(40, dps - 10))


def _check_prob(name: str, x: mpf) -> None:
    if not (x >= 0 and x <= 1):
        raise ValueError(f"{name} = {x} is not a probability")


def _add(d: dict, key, value) -> None:
    """``d[key] += value``, skipping exact zeros so keys stay the support."""
    if value:
        d[key] = d.get(key, 0) + value


def pair_max_abs_diff(pair1, pair2, dps: int = DEFAULT_DPS) -> mpf:
    """``max |pair1 - pair2|`` over both distributions and the union of supports.

    Used by the self-checks to assert that two constructions agree (e.g. to
    1e-40). The subtraction runs at ``dps`` digits: doing it in mpmath's default
    15-digit context would report spurious ``1e-17`` differences.
    """
    with mpmath.workdps(dps):
        worst = mpf(0)
        for D1, D2 in zip(pair1, pair2):
            for key in set(D1) | set(D2):
                worst = max(worst, abs(D1.get(key, 0) - D2.get(key, 0)))
        return worst


# ---------------------------------------------------------------------------
# Binomial pmfs by Pascal's recurrence (no factorials, no division)
# ---------------------------------------------------------------------------


@lru_cache(maxsize=64)
def _binomial_rows(m: int, theta: mpf, dps: int) -> tuple:
    """Rows ``0..m`` of the Bin(c, theta) pmf, ``row[c][a] = Pr[Bin(c, theta) = a]``.

    Built by Pascal's recurrence, which is the definition of the binomial as a
    sum of independent Bernoulli(theta) variables::

        row[0]       = [1]
        row[c+1][a]  = (1 - theta) * row[c][a] + theta * row[c][a-1]

    Only additions and multiplications of numbers in [0, 1]: no cancellation,
    no factorials, exact at the corners ``theta = 0`` and ``theta = 1``.
    Cached on ``(m, theta, dps)``; the returned rows are tuples (immutable).
    """
    with mpmath.workdps(dps):
        one_minus = 1 - theta
        rows = [(mpf(1),)]
        prev = rows[0]
        for c in range(m):
            nxt = [one_minus * prev[0]]
            for a in range(1, c + 1):
                nxt.append(one_minus * prev[a] + theta * prev[a - 1])
            nxt.append(theta * prev[c])
            prev = tuple(nxt)
            rows.append(prev)
        return tuple(rows)


# ---------------------------------------------------------------------------
# The clone pair (spec section 1)
# ---------------------------------------------------------------------------


def _validate_family(n, r0, r1, pa, pb, p0, dps):
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    for name, x in (("r0", r0), ("r1", r1), ("pa", pa), ("pb", pb), ("p0", p0)):
        _check_prob(name, x)
    if r0 + r1 > 1 + sum_tolerance(dps):
        raise ValueError(f"r0 + r1 = {r0 + r1} > 1")
    if abs(pa + pb + p0 - 1) > sum_tolerance(dps):
        raise ValueError(
            f"pa + pb + p0 = {pa + pb + p0} != 1 at {dps} digits; "
            "pass exact values (mpf / str / Fraction), not rounded floats"
        )


def clone_pair(n: int, r0, r1, pa, pb, p0, dps: int = DEFAULT_DPS):
    """The clone pair ``(P, Q)`` over count pairs ``(a, b)``, by enumeration.

    Definition (spec section 1): each of the other ``n - 1`` users is,
    independently, a clone of the first kind with probability ``r0``, of the
    second kind with probability ``r1`` and neither otherwise. Equivalently
    (the form enumerated here)::

        C     ~ Bin(n - 1, r0 + r1)                 number of clones
        A | C ~ Bin(C, r0 / (r0 + r1))              clones of the first kind

    The first user contributes ``(1,0)``, ``(0,1)``, ``(0,0)`` with
    probabilities ``(pa, pb, p0)`` under ``P`` and ``(pb, pa, p0)`` under ``Q``,
    and the observed outcome is ``(A + da, C - A + db)``.

    Returns ``(P, Q)``: two dicts ``(a, b) -> mpf``, containing exactly the
    outcomes of positive probability. Each sums to one within
    :func:`sum_tolerance` (``1e-40`` at the default 50 digits); this is
    asserted.

    Corners handled by construction:

    * ``n = 1``: no other users, ``C = 0``.
    * ``r0 + r1 = 0``: ``C = 0`` a.s. (the conditional law of ``A`` is then
      irrelevant and ``theta`` is set to 0).
    * ``r0 + r1 = 1``: ``C = n - 1`` a.s. (Pascal's recurrence is exact there).
    * ``r0 = 0`` / ``r1 = 0``: ``A = 0`` / ``A = C`` a.s.
    * ``p0 > 0`` (k-RR), ``pb = 0`` (``eps0 = inf``): no special treatment
      needed; zero-probability outcomes are simply not stored.

    Cost: O(n^2) mpf operations (about n^2/2 outcomes); ``n = 300`` at 30
    digits takes on the order of a second.
    """
    with mpmath.workdps(dps):
        r0, r1, pa, pb, p0 = (_mpf(x) for x in (r0, r1, pa, pb, p0))
        _validate_family(n, r0, r1, pa, pb, p0, dps)
        m = n - 1
        s = min(r0 + r1, mpf(1))  # r0 + r1 may round to 1 + ulp
        theta = min(r0 / s, mpf(1)) if s > 0 else mpf(0)
        c_pmf = _binomial_rows(m, s, dps)[m]  # Pr[C = c], c = 0..m
        a_rows = _binomial_rows(m, theta, dps)  # Pr[A = a | C = c]

        others = {}  # law of (A, C - A)
        for c, pc in enumerate(c_pmf):
            if not pc:
                continue
            row = a_rows[c]
            for a in range(c + 1):
                _add(others, (a, c - a), pc * row[a])

        P: dict = {}
        Q: dict = {}
        first_P = ((1, 0, pa), (0, 1, pb), (0, 0, p0))
        first_Q = ((1, 0, pb), (0, 1, pa), (0, 0, p0))
        for (a, b), w in others.items():
            for da, db, pr in first_P:
                _add(P, (a + da, b + db), w * pr)
            for da, db, pr in first_Q:
                _add(Q, (a + da, b + db), w * pr)

        tol = sum_tolerance(dps)
        for name, D in (("P", P), ("Q", Q)):
            total = mpmath.fsum(D.values())
            assert abs(total - 1) <= tol, f"clone_pair: {name} sums to {total}"
        return P, Q


def clone_pair_by_users(n: int, r0, r1, pa, pb, p0, dps: int = DEFAULT_DPS):
    """Same pair as :func:`clone_pair`, built a second way for cross-checking.

    Here the other users are added one at a time: each adds ``(1,0)`` with
    probability ``r0``, ``(0,1)`` with probability ``r1`` and ``(0,0)``
    otherwise (the first bullet of spec section 1, read literally); then the
    first user is added. No binomial pmf appears. O(n^3); use for small n.
    """
    with mpmath.workdps(dps):
        r0, r1, pa, pb, p0 = (_mpf(x) for x in (r0, r1, pa, pb, p0))
        _validate_family(n, r0, r1, pa, pb, p0, dps)
        rest = 1 - r0 - r1
        if rest < 0:  # r0 + r1 = 1 up to rounding
            rest = mpf(0)
        dist = {(0, 0): mpf(1)}
        for _ in range(n - 1):
            nxt: dict = {}
            for (a, b), w in dist.items():
                _add(nxt, (a + 1, b), w * r0)
                _add(nxt, (a, b + 1), w * r1)
                _add(nxt, (a, b), w * rest)
            dist = nxt
        P: dict = {}
        Q: dict = {}
        for (a, b), w in dist.items():
            _add(P, (a + 1, b), w * pa)
            _add(P, (a, b + 1), w * pb)
            _add(P, (a, b), w * p0)
            _add(Q, (a + 1, b), w * pb)
            _add(Q, (a, b + 1), w * pa)
            _add(Q, (a, b), w * p0)
        return P, Q


def clone_pair_with_c(n: int, r0, r1, pa, pb, p0, dps: int = DEFAULT_DPS):
    """The clone pair with the number of clones ``C`` also observed: outcomes ``(a, b, c)``.

    Same enumeration as :func:`clone_pair`, but the key keeps ``c``. This is a
    (weakly) more informative pair than :func:`clone_pair`, which is its
    post-processing ``(a, b, c) -> (a, b)``. When ``p0 = 0`` the two are
    equivalent (``c = a + b - 1``). When ``p0 > 0`` (k-RR) ``c`` reveals whether
    the first user was silent, and the pair becomes the mixture
    ``p0 * (identical branch) + (1 - p0) * (p0 = 0 pair with first user
    (pa, pb)/(1 - p0))``, so e.g. ``delta(eps) = (1 - p0) * delta'(eps)``.

    Why it is here: the self-checks show that the spec's k-RR row (the pair
    *without* ``c``) is **not** an upper bound for shuffled k-RR on all
    neighbouring datasets, while this pair dominated every dataset tried.
    """
    with mpmath.workdps(dps):
        r0, r1, pa, pb, p0 = (_mpf(x) for x in (r0, r1, pa, pb, p0))
        _validate_family(n, r0, r1, pa, pb, p0, dps)
        m = n - 1
        s = min(r0 + r1, mpf(1))
        theta = min(r0 / s, mpf(1)) if s > 0 else mpf(0)
        c_pmf = _binomial_rows(m, s, dps)[m]
        a_rows = _binomial_rows(m, theta, dps)
        P: dict = {}
        Q: dict = {}
        for c, pc in enumerate(c_pmf):
            if not pc:
                continue
            for a in range(c + 1):
                w = pc * a_rows[c][a]
                if not w:
                    continue
                b = c - a
                for da, db, wp, wq in ((1, 0, pa, pb), (0, 1, pb, pa), (0, 0, p0, p0)):
                    _add(P, (a + da, b + db, c), w * wp)
                    _add(Q, (a + da, b + db, c), w * wq)
        return P, Q


# ---------------------------------------------------------------------------
# Divergences (spec section 2)
# ---------------------------------------------------------------------------


def total_variation(P: dict, Q: dict, dps: int = DEFAULT_DPS) -> mpf:
    """``TV(P, Q) = sum (P - Q)_+`` (= hockey-stick at ``eps = 0``)."""
    return hockey_stick(P, Q, 0, dps=dps)


def hockey_stick(P: dict, Q: dict, eps, dps: int = DEFAULT_DPS) -> mpf:
    """``D_{e^eps}(P || Q) = sum over the union of supports of (P - e^eps Q)_+``.

    Outcomes outside ``supp(P)`` contribute ``(0 - e^eps Q)_+ = 0``, so the sum
    runs over ``supp(P)``; outcomes with ``Q = 0`` contribute ``P`` (also for
    ``eps = inf``). Every term is computed directly; no reordering tricks.
    """
    with mpmath.workdps(dps):
        t = mpmath.exp(_mpf(eps))
        terms = []
        for key, p in P.items():
            q = Q.get(key, 0)
            if not q:
                terms.append(p)
                continue
            d = p - t * q
            if d > 0:
                terms.append(d)
        return mpmath.fsum(terms) if terms else mpf(0)


def delta_exact(pair, eps, dps: int = DEFAULT_DPS) -> mpf:
    """``delta(eps) = max(D_{e^eps}(P||Q), D_{e^eps}(Q||P))`` for ``pair = (P, Q)``."""
    P, Q = pair
    return max(hockey_stick(P, Q, eps, dps=dps), hockey_stick(Q, P, eps, dps=dps))


def renyi(P: dict, Q: dict, alpha, dps: int = DEFAULT_DPS) -> mpf:
    """Renyi divergence of real order ``alpha > 1``.

    ``D_alpha(P || Q) = (1/(alpha-1)) log sum P^alpha Q^(1-alpha)``, the sum over
    ``supp(P)`` (terms with ``P = 0`` vanish since ``alpha > 1``); ``+inf`` if
    some outcome has ``P > 0 = Q``. Each term is evaluated as
    ``P * (P/Q)^(alpha-1)``. The value is not clamped at 0: rounding can leave
    it at ``-1e-(dps-2)`` or so when ``P = Q``.
    """
    with mpmath.workdps(dps):
        alpha = _mpf(alpha)
        if not alpha > 1:
            raise ValueError(f"alpha must be > 1, got {alpha}")
        terms = []
        for key, p in P.items():
            q = Q.get(key, 0)
            if not q:
                return mpf("inf")
            terms.append(p * (p / q) ** (alpha - 1))
        return mpmath.log(mpmath.fsum(terms)) / (alpha - 1)


def rdp_exact(pair, alpha, dps: int = DEFAULT_DPS) -> mpf:
    """``max(D_alpha(P||Q), D_alpha(Q||P))`` for ``pair = (P, Q)``."""
    P, Q = pair
    return max(renyi(P, Q, alpha, dps=dps), renyi(Q, P, alpha, dps=dps))


class _SortedDirection:
    """``eps -> D_{e^eps}(P||Q)`` evaluated on the outcomes sorted by likelihood ratio.

    Mathematically identical to :func:`hockey_stick` (same terms, each computed
    as ``p - e^eps q`` in mpmath and kept iff positive); it only skips outcomes
    that cannot contribute. Outcomes are sorted by a float copy of ``P/Q``
    (cheap to compare); a term is visited while its float ratio exceeds
    ``float(e^eps) * (1 - 1e-9)``. Float rounding (relative 1e-16) is far
    inside that margin, so no outcome with ``P/Q > e^eps`` is skipped (ratios
    above 1e308 become ``inf`` and are always visited; ratios that underflow to
    0 are < 1 <= e^eps for the ``eps >= 0`` used here). This makes the bisection
    in :func:`epsilon_exact` cheap when delta is small. The self-checks compare
    it with :func:`hockey_stick`.
    """

    def __init__(self, P: dict, Q: dict):
        self.inf_mass = []  # P-mass where Q = 0: counted at every eps
        finite = []
        for key, p in P.items():
            q = Q.get(key, 0)
            if not q:
                self.inf_mass.append(p)
            else:
                ratio = p / q
                finite.append((float(ratio), ratio, p, q))
        finite.sort(key=lambda x: x[0], reverse=True)
        self.finite = finite
        self.inf_total = mpmath.fsum(self.inf_mass) if self.inf_mass else mpf(0)
        # exact max ratio: among the entries whose float ratio ties the top one
        top = finite[0][0] * (1 - 1e-9) if finite else 0.0
        self.max_ratio = max((x[1] for x in finite if x[0] >= top), default=mpf(0))

    def guess_eps(self, delta: mpf) -> mpf:
        """Approximate smallest ``eps`` with ``D_{e^eps}(P||Q) <= delta`` (accelerator only).

        On ``t = e^eps`` between two consecutive sorted ratios the divergence is
        ``SP_k - t * SQ_k`` (prefix sums of P and Q over the ``k`` outcomes with
        larger ratio), so the crossing is ``t = (SP_k - delta)/SQ_k`` for the
        right ``k``. The prefix sums cancel (``SP_k ~ t SQ_k``) and the float
        ordering may be off by rounding, so the result is only a starting
        point; :func:`epsilon_exact` re-verifies any bracket built from it with
        direct sums before trusting it. Returns ``-inf`` if no ``eps`` is needed.
        """
        sp = self.inf_total
        sq = mpf(0)
        for _, ratio, p, q in self.finite:
            # divergence at t = ratio, with the outcomes seen so far as the tail
            if sp - ratio * sq > delta:
                break
            sp += p
            sq += q
        if not sq:  # only infinite-ratio mass (<= delta) or nothing: no eps needed
            return mpf("-inf")
        t = (sp - delta) / sq
        return mpmath.log(t) if t > 0 else mpf("-inf")

    def __call__(self, eps) -> mpf:
        t = mpmath.exp(eps)
        cutoff = float(t) * (1 - 1e-9)
        terms = list(self.inf_mass)
        for fratio, _, p, q in self.finite:
            if fratio <= cutoff:
                break
            d = p - t * q
            if d > 0:
                terms.append(d)
        return mpmath.fsum(terms) if terms else mpf(0)


def epsilon_exact(pair, delta, dps: int = DEFAULT_DPS, rtol=mpf("1e-12")) -> mpf:
    """Smallest ``eps >= 0`` with ``delta_exact(pair, eps) <= delta``, by bisection.

    ``delta(eps)`` is continuous and non-increasing, so the set of admissible
    ``eps`` is ``[eps*, inf)``; bisection keeps ``lo`` inadmissible and ``hi``
    admissible and stops when ``hi - lo <= rtol * hi`` (relative ``1e-12`` by
    default). The returned value is ``hi``: it is always admissible, and it
    exceeds the true ``eps*`` by at most ``rtol * eps*`` (relative).

    * Returns ``0`` if ``TV(P, Q) <= delta`` (already admissible at ``eps = 0``).
    * Returns ``+inf`` if the mass of outcomes with ``P > 0 = Q`` (in either
      direction) exceeds ``delta``: no finite ``eps`` works.
    * Initial ``hi = log(max likelihood ratio of the pair)``, at which
      ``delta = 0`` (plus any infinite-ratio mass). For the clone family this
      max ratio is ``max(pa/pb, pb/pa)`` (spec section 2); it is read off the
      pair here, not assumed.
    * Speed: the bracket is first narrowed around an analytic estimate
      (:meth:`_SortedDirection.guess_eps`); each narrowed end is accepted only
      after a direct-sum evaluation confirms it, so the result does not depend
      on the estimate being right (only the run time does). Every evaluation
      is the plain sum of ``(p - e^eps q)_+`` over the outcomes that can be
      positive.
    """
    P, Q = pair
    with mpmath.workdps(dps):
        delta = _mpf(delta)
        rtol = _mpf(rtol)
        dirs = (_SortedDirection(P, Q), _SortedDirection(Q, P))
        if max(d.inf_total for d in dirs) > delta:
            return mpf("inf")

        def dl(eps):
            return max(d(eps) for d in dirs)

        if dl(mpf(0)) <= delta:
            return mpf(0)
        hi = mpmath.log(max(d.max_ratio for d in dirs))
        lo = mpf(0)
        assert dl(hi) <= delta
        # Accelerator: narrow [lo, hi] around an analytic guess, but only keep a
        # candidate bound after checking it with direct sums (the invariant
        # "lo inadmissible, hi admissible" never rests on the guess).
        guess = max(d.guess_eps(delta) for d in dirs)
        if mpmath.isfinite(guess) and lo < guess < hi:
            for width in (mpf("1e-10"), mpf("1e-6"), mpf("1e-2")):
                cand_lo, cand_hi = guess * (1 - width), guess * (1 + width)
                if cand_lo > lo and dl(cand_lo) > delta:
                    lo = cand_lo
                if cand_hi < hi and dl(cand_hi) <= delta:
                    hi = cand_hi
                if hi - lo <= 2 * width * guess * (1 + width):
                    break
        while hi - lo > rtol * hi:
            mid = (lo + hi) / 2
            if dl(mid) <= delta:
                hi = mid
            else:
                lo = mid
        return hi


# ---------------------------------------------------------------------------
# Named analyses: parameters from the spec's table (section 1)
# ---------------------------------------------------------------------------
# All written with u = e^{-eps0} so that eps0 = +inf is a legal input
# (u = 0, pb = 0). Each returns (r0, r1, pa, pb, p0) as mpf.


def clones_params(eps0, dps: int = DEFAULT_DPS):
    """FMT21 clones: ``r0 = r1 = e^{-eps0}/2``, ``(pa, pb, p0) = (e^eps0, 1, 0)/(e^eps0+1)``."""
    with mpmath.workdps(dps):
        u = mpmath.exp(-_mpf(eps0))
        return (u / 2, u / 2, 1 / (1 + u), u / (1 + u), mpf(0))


def stronger_clones_params(eps0, dps: int = DEFAULT_DPS):
    """FMT23 stronger clones: ``r0 = r1 = 1/(e^eps0+1)``, same first user as clones."""
    with mpmath.workdps(dps):
        u = mpmath.exp(-_mpf(eps0))
        r = u / (1 + u)
        return (r, r, 1 / (1 + u), u / (1 + u), mpf(0))


def krr_params(eps0, k: int, dps: int = DEFAULT_DPS):
    """k-ary RR (k >= 3): ``r0 = r1 = 1/(e^eps0+k-1)``, ``(pa,pb,p0) = (e^eps0, 1, k-2)/(e^eps0+k-1)``."""
    if not isinstance(k, int) or k < 3:
        raise ValueError(f"krr_params needs an integer k >= 3, got {k!r}")
    with mpmath.workdps(dps):
        u = mpmath.exp(-_mpf(eps0))
        den = 1 + (k - 1) * u
        r = u / den
        return (r, r, 1 / den, u / den, (k - 2) * u / den)


def binary_rr_params(eps0, dps: int = DEFAULT_DPS):
    """Binary RR, exact: ``r0 = 1/(e^eps0+1)``, ``r1 = e^eps0/(e^eps0+1)``, first user ``(e^eps0, 1, 0)/(e^eps0+1)``."""
    with mpmath.workdps(dps):
        u = mpmath.exp(-_mpf(eps0))
        return (u / (1 + u), 1 / (1 + u), 1 / (1 + u), u / (1 + u), mpf(0))


def variation_ratio_params(p, beta, q, dps: int = DEFAULT_DPS):
    """Variation-ratio (Wang et al.): ``alpha = beta/(p-1)``, ``r0 = r1 = alpha p / q``,
    ``(pa, pb, p0) = (p alpha, alpha, 1 - alpha - p alpha)``. Requires ``p > 1``."""
    with mpmath.workdps(dps):
        p, beta, q = _mpf(p), _mpf(beta), _mpf(q)
        if not p > 1:
            raise ValueError("variation_ratio_params needs p > 1")
        alpha = beta / (p - 1)
        r = alpha * p / q
        return (r, r, p * alpha, alpha, 1 - alpha - p * alpha)


# ---------------------------------------------------------------------------
# Mechanism-level cross-checks: shuffled randomized response, from scratch
# ---------------------------------------------------------------------------


def krr_output_probs(x: int, eps0, k: int, dps: int = DEFAULT_DPS) -> tuple:
    """Output law of k-ary randomized response on input ``x`` in ``{0..k-1}``.

    ``Pr[y = x] = e^eps0/(e^eps0 + k - 1)``, ``Pr[y = j] = 1/(e^eps0 + k - 1)``
    for each ``j != x``. ``k = 2`` is binary randomized response. Finite
    ``eps0`` only.
    """
    if not (isinstance(k, int) and k >= 2 and 0 <= x < k):
        raise ValueError(f"bad k-RR input x={x!r}, k={k!r}")
    with mpmath.workdps(dps):
        e = mpmath.exp(_mpf(eps0))
        if not mpmath.isfinite(e):
            raise ValueError("krr_output_probs needs finite eps0")
        D = e + (k - 1)
        return tuple((e if y == x else mpf(1)) / D for y in range(k))


def shuffled_rr_distribution(dataset, eps0, k: int, dps: int = DEFAULT_DPS) -> dict:
    """Exact law of the shuffled k-RR output for an arbitrary ``dataset``.

    The shuffled output is the multiset of reports, i.e. the histogram
    ``h = (h_0, ..., h_{k-1})``. Computed by adding users one at a time
    (``h -> h + e_y`` with probability ``Pr[R(x_i) = y]``): state space is the
    set of histograms, never the ``k^n`` output sequences. Small n, k only
    (``C(n+k-1, k-1)`` states).
    """
    with mpmath.workdps(dps):
        dist = {tuple([0] * k): mpf(1)}
        for x in dataset:
            probs = krr_output_probs(x, eps0, k, dps)
            nxt: dict = {}
            for h, w in dist.items():
                for y in range(k):
                    h2 = list(h)
                    h2[y] += 1
                    _add(nxt, tuple(h2), w * probs[y])
            dist = nxt
        return dist


def _compositions(total: int, parts: int):
    """All tuples of ``parts`` non-negative integers summing to ``total``."""
    if parts == 1:
        yield (total,)
        return
    for first in range(total + 1):
        for rest in _compositions(total - first, parts - 1):
            yield (first,) + rest


def shuffled_krr_histogram_pair(n: int, eps0, k: int, v: int | None = None,
                                dps: int = DEFAULT_DPS):
    """Full-histogram pair of shuffled k-RR on ``x = (0, v, ..., v)`` vs ``x' = (1, v, ..., v)``.

    ``v`` defaults to 2 for ``k >= 3`` (a third value) and to 1 for ``k = 2``
    (see :func:`shuffled_binary_rr`). Since the ``n - 1`` other users are
    i.i.d., their histogram is Multinomial(n-1; w) with ``w = R(v)``; it is
    enumerated over all compositions ``g`` of ``n - 1`` into ``k`` parts with
    the multinomial pmf ``(n-1)!/prod g_y! * prod w_y^g_y`` (exact integer
    coefficient). The first user's report ``y ~ R(0)`` (resp. ``R(1)``) is then
    added. Returns ``(P, Q)`` as dicts over histograms (k-tuples). Sizes:
    ``C(n+k-2, k-1)`` compositions; keep n, k small.
    """
    if v is None:
        v = 2 if k >= 3 else 1
    if not (isinstance(n, int) and n >= 1):
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    with mpmath.workdps(dps):
        w = krr_output_probs(v, eps0, k, dps)
        r_x = krr_output_probs(0, eps0, k, dps)
        r_xp = krr_output_probs(1, eps0, k, dps)
        m = n - 1
        fact_m = math.factorial(m)
        P: dict = {}
        Q: dict = {}
        for g in _compositions(m, k):
            coef = fact_m
            for gy in g:
                coef //= math.factorial(gy)
            pr = mpf(coef)
            for gy, wy in zip(g, w):
                if gy:
                    pr *= wy ** gy
            for y in range(k):
                h = list(g)
                h[y] += 1
                h = tuple(h)
                _add(P, h, pr * r_x[y])
                _add(Q, h, pr * r_xp[y])
        tol = sum_tolerance(dps)
        for D in (P, Q):
            assert abs(mpmath.fsum(D.values()) - 1) <= tol
        return P, Q


def project_pair(pair, f, dps: int = DEFAULT_DPS) -> tuple:
    """Push both distributions of ``pair`` forward through the map ``f`` (post-processing)."""
    with mpmath.workdps(dps):
        out = []
        for D in pair:
            E: dict = {}
            for key, w in D.items():
                _add(E, f(key), w)
            out.append(E)
        return tuple(out)


def _counts01(h):
    return (h[0], h[1])


def shuffled_krr_projection(n: int, eps0, k: int, dps: int = DEFAULT_DPS):
    """Shuffled k-RR, ``x = (0, 2, ..., 2)`` vs ``x' = (1, 2, ..., 2)``, projected on ``(count0, count1)``.

    The full histogram law (:func:`shuffled_krr_histogram_pair` with ``v = 2``)
    pushed forward through ``h -> (h_0, h_1)``. ``k >= 3``. Spec claim (table,
    k-RR row): this equals ``clone_pair(n, *krr_params(eps0, k))`` exactly.
    Why: another user holding 2 reports 0 w.p. ``1/D``, 1 w.p. ``1/D`` and
    something else otherwise (``r0 = r1 = 1/D``); the first user holding 0
    reports 0, 1, other w.p. ``(e^eps0, 1, k-2)/D`` (``D = e^eps0 + k - 1``).

    Caveat (checked numerically): for ``k >= 4`` this projection is a strict
    post-processing of the full shuffled output, so its divergences are lower
    bounds for these datasets, not their exact values; see the module
    docstring.
    """
    if k < 3:
        raise ValueError("shuffled_krr_projection needs k >= 3 (use shuffled_binary_rr)")
    return project_pair(shuffled_krr_histogram_pair(n, eps0, k, v=2, dps=dps), _counts01, dps=dps)


def shuffled_binary_rr(n: int, eps0, v: int = 1, dps: int = DEFAULT_DPS):
    """Shuffled binary RR on ``x = (0, v, ..., v)`` vs ``x' = (1, v, ..., v)``, over ``(count0, count1)``.

    With ``k = 2`` the histogram *is* ``(count0, count1)``; nothing is lost.

    Which ``v`` matches the spec's "binary randomized response, exact" row
    (``r0 = 1/(e^eps0+1)``, ``r1 = e^eps0/(e^eps0+1)``, first user
    ``(e^eps0, 1, 0)/(e^eps0+1)``)? In the clone family ``r0`` is the
    probability that another user adds to the *first* coordinate, i.e. reports
    0. A user holding ``v`` reports 0 with probability ``e^eps0/(e^eps0+1)`` if
    ``v = 0`` and ``1/(e^eps0+1)`` if ``v = 1``. So **v = 1** is the match:
    ``x = (0, 1, ..., 1)`` vs ``x' = (1, 1, ..., 1)`` gives the table's pair
    exactly, with ``P`` the dataset whose first user holds 0.

    ``v = 0`` gives the same pair up to relabelling: swapping the coordinates
    ``(a, b) -> (b, a)`` maps its ``P`` to the table's ``Q`` and its ``Q`` to
    the table's ``P`` (so every max-of-both-directions divergence agrees).
    Both statements are checked in ``test_oracle_selfcheck.py``.
    """
    if v not in (0, 1):
        raise ValueError("v must be 0 or 1")
    return shuffled_krr_histogram_pair(n, eps0, 2, v=v, dps=dps)


# ---------------------------------------------------------------------------
# Composition and conditioning helpers
# ---------------------------------------------------------------------------


def product_pair(pair1, pair2, dps: int = DEFAULT_DPS):
    """Product pair ``(P1 x P2, Q1 x Q2)`` over outcomes ``(o1, o2)`` (two-fold composition).

    For the clone family the outcomes are ``((a1, b1), (a2, b2))``. Size is the
    product of the support sizes: keep the factors small.
    """
    with mpmath.workdps(dps):
        out = []
        for D1, D2 in zip(pair1, pair2):
            E: dict = {}
            for (k1, w1), (k2, w2) in _iproduct(D1.items(), D2.items()):
                _add(E, (k1, k2), w1 * w2)
            out.append(E)
        return tuple(out)


def conditional_pairs(pair, dps: int = DEFAULT_DPS) -> dict:
    """Decompose a clone pair with ``p0 = 0`` by the number of clones ``C``.

    With ``p0 = 0`` the first user always adds exactly one count, so
    ``C = a + b - 1`` is a function of the outcome. Returns
    ``{c: (weight, (P_c, Q_c))}`` where ``weight = Pr[C = c]`` (checked equal
    under ``P`` and ``Q``, as it must be: ``C`` does not depend on the first
    user) and ``P_c``, ``Q_c`` are the conditional laws of ``(a, b)`` given
    ``a + b = c + 1``, obtained by filtering the joint and renormalising.
    Raises if some outcome has ``a + b = 0`` (which means ``p0 > 0``).
    """
    P, Q = pair
    with mpmath.workdps(dps):
        groups: dict = {}
        for idx, D in enumerate((P, Q)):
            for (a, b), w in D.items():
                if a + b == 0:
                    raise ValueError("conditional_pairs needs p0 = 0 (outcome (0,0) present)")
                g = groups.setdefault(a + b - 1, ({}, {}))
                g[idx][(a, b)] = w
        tol = sum_tolerance(dps)
        out = {}
        for c, (Pc, Qc) in sorted(groups.items()):
            wp = mpmath.fsum(Pc.values())
            wq = mpmath.fsum(Qc.values())
            assert abs(wp - wq) <= tol, f"Pr[C={c}] differs between P and Q"
            out[c] = (wp, ({k: v / wp for k, v in Pc.items()},
                           {k: v / wq for k, v in Qc.items()}))
        return out

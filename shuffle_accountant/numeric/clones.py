"""The clone pair family and its certified hockey-stick divergence.

Spec: ``docs/math/amplification.md`` §1-§2. Sources: Feldman, McMillan, Talwar,
"Hiding Among the Clones" (FOCS 2021, arXiv 2012.12803), Theorem 3.2 and
Appendix F; Wang et al., VLDB 2024 (arXiv 2304.05007), Eq. 13 and Prop. I.1.

The pair
--------
Each of the other ``N = n - 1`` users is a clone of the first kind with probability
``r0``, of the second kind with probability ``r1``: ``C ~ Bin(N, r0 + r1)`` clones, of
which ``A | C ~ Bin(C, s)``, ``s = r0 / (r0 + r1)``, are of the first kind. The first user
adds ``(1, 0)``, ``(0, 1)`` or nothing with probabilities ``(pa, pb, p0)`` under ``P`` and
``(pb, pa, p0)`` under ``Q``. The observation is ``(a, b)``.

Exact decomposition used here (*derived*, checked against the brute-force oracle in
``tests/oracle.py``)
---------------------------------------------------------------------------------
Let ``T = a + b``. ``T`` has the same law under ``P`` and ``Q``:
``Pr[T = t] = (1 - p0) w(t-1) + p0 w(t)`` with ``w = Bin(N, r0 + r1)`` pmf. Given
``T = t >= 1``, write ``lam_t = (1 - p0) w(t-1) / Pr[T = t]``. Because
``Bin(t, s) = Bin(t - 1, s) + Bern(s)``, the conditional law of ``a`` under ``P`` is

    u_t * B(a - 1) + (1 - u_t) * B(a),   B = Bin(t - 1, s) pmf,
    u_t = lam_t * pa' + (1 - lam_t) * s,  pa' = pa / (pa + pb),

and under ``Q`` the same with ``v_t = lam_t * pb' + (1 - lam_t) * s``. So every divergence
is ``sum_t Pr[T = t] * h(t - 1, u_t, v_t)`` where ``h(c, u, v)`` is the divergence of the
*kernel pair* ``(u, v)`` at ``c`` clones (:func:`kernel_hockey_stick`). With ``p0 = 0``,
``lam_t = 1``: this is the per-``c`` decomposition of spec §2.

Monotonicity used for certified blocks (*derived*)
--------------------------------------------------
1. ``h(c, u, v)`` is non-increasing in ``c``: the pair at ``c + 1`` is the pair at ``c``
   with one more independent clone added under both hypotheses, a post-processing
   (data-processing inequality). FMT21 Lemma F.2 uses the same fact.
2. When ``r0 = r1`` (``s = 1/2``), ``u_t = 1/2 + lam_t (pa' - 1/2)`` and ``v_t = 1 - u_t``; the
   pair at a smaller ``lam`` equals ``((1-f) P + f Q, (1-f) Q + f P)`` for some ``f`` in
   ``[0, 1/2]``, and by joint convexity of f-divergences and the symmetry
   ``D(P||Q) = D(Q||P)`` its divergence is at most that of ``(P, Q)``: ``h`` is
   non-decreasing in ``lam``. ``lam_t`` is non-decreasing in ``t``.

Hence for a block of totals ``t_lo..t_hi`` the contribution lies between
``W * h(t_hi - 1, lam_{t_lo})`` and ``W * h(t_lo - 1, lam_{t_hi})`` (``W`` = block mass).
When ``p0 > 0`` and ``r0 != r1`` (2 is unavailable) only exact per-``t`` sums are used.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from scipy.special import ndtr

from ..errors import CertificationError, InvalidParameter
from ..validation import MAX_N
from . import binomial as bn
from .profile import UNDERFLOW_FLOOR, DeltaBounds
from .search import EpsilonBracket, epsilon_for_delta

#: Largest number of width-one blocks evaluated for a pair without block monotonicity.
MAX_EXACT_TERMS = 4_000_000
#: Refinement stops with a CertificationError beyond this many blocks.
MAX_BLOCKS = 3_000_000


@dataclass(frozen=True)
class ClonePair:
    """A member of the clone pair family (spec §1), validated on construction."""

    n: int
    r0: float
    r1: float
    pa: float
    pb: float
    p0: float = 0.0
    #: an ``eps`` at which the *exact* object the pair stands for is known to have ``delta = 0`` (the
    #: ``eps0`` of an ``eps0``-LDP randomizer: a shuffled output is a post-processing of ``eps0``-LDP reports),
    #: where the pair's floats were moved to dominate it (:func:`.analyses.pair_for`) and so have a log-ratio a
    #: few ulps above; :attr:`max_log_ratio` takes the smaller. ``inf``: none.
    ratio_cap: float = math.inf

    def __post_init__(self) -> None:
        if isinstance(self.n, bool) or not isinstance(self.n, (int, np.integer)) or not 1 <= self.n <= MAX_N:
            raise InvalidParameter(f"n must be an integer in [1, {MAX_N:g}], got {self.n!r}")
        object.__setattr__(self, "n", int(self.n))
        for name in ("r0", "r1", "pa", "pb", "p0"):
            x = getattr(self, name)
            if not (isinstance(x, (int, float, np.floating)) and math.isfinite(x) and 0.0 <= x <= 1.0):
                raise InvalidParameter(f"{name} must be a probability in [0, 1], got {x!r}")
            object.__setattr__(self, name, float(x))
        if self.r0 + self.r1 > 1.0 + 1e-12:
            raise InvalidParameter(f"need r0 + r1 <= 1, got r0 + r1 = {self.r0 + self.r1!r}")
        if abs(self.pa + self.pb + self.p0 - 1.0) > 1e-12:
            raise InvalidParameter(f"need pa + pb + p0 = 1, got {self.pa + self.pb + self.p0!r}")
        if self.pa + self.pb <= 0.0:
            raise InvalidParameter("need pa + pb > 0 (the first user must sometimes be counted)")
        if not (isinstance(self.ratio_cap, (int, float)) and self.ratio_cap >= 0.0):
            raise InvalidParameter(f"ratio_cap must be a number >= 0, got {self.ratio_cap!r}")

    @property
    def clone_probability(self) -> float:
        """``r0 + r1``, capped at 1 against rounding."""
        return min(self.r0 + self.r1, 1.0)

    @property
    def split(self) -> float:
        """``s = r0 / (r0 + r1)`` (1/2 when there are no clones)."""
        p = self.r0 + self.r1
        return 0.5 if p == 0.0 else self.r0 / p

    @property
    def symmetric(self) -> bool:
        """``r0 == r1``: swapping the coordinates maps P to Q, so both directions agree."""
        return self.r0 == self.r1

    @property
    def max_log_ratio(self) -> float:
        """``log max(pa/pb, pb/pa)``: every likelihood ratio of the pair lies within
        ``[e^-L, e^L]`` (a ratio of mixtures with these weights), so ``delta(eps) = 0``
        for ``eps >= L``; at most :attr:`ratio_cap`. Rounded up: each ``log`` within 2 ulps of its value and
        one subtraction (near ``pa = pb`` the float difference of logs was up to ``1e-6`` relative *below* the
        exact ratio, at ``eps0 = 1e-10``, and ``delta = 0`` was claimed where it is positive: review rev93s)."""
        if self.pa == self.pb:
            return 0.0
        lo, hi = min(self.pa, self.pb), max(self.pa, self.pb)
        if lo == 0.0:
            return float(self.ratio_cap)
        if hi <= 2.0 * lo:
            # hi - lo is exact (Sterbenz), the quotient one rounding, log1p within an ulp: relative 3u, charged 8u = 2^-50 (the
            # difference of logs below lost ~u |log lo| absolute, 3e-4 relative of a ratio of 4e-12)
            up = math.nextafter(math.log1p((hi - lo) / lo) * (1.0 + 2.0**-50), math.inf)
        else:
            la, lb = math.log(hi), math.log(lo)
            up = math.nextafter((la - lb) + 5e-16 * (abs(la) + abs(lb)), math.inf)
        return min(up, float(self.ratio_cap))

    def mirrored(self) -> "ClonePair":
        """The pair with P and Q exchanged (for the ``Q || P`` direction)."""
        return ClonePair(self.n, self.r0, self.r1, self.pb, self.pa, self.p0, self.ratio_cap)

    @property
    def block_monotone(self) -> bool:
        """Whether certified blocks over totals are available (see module docstring)."""
        return self.p0 == 0.0 or self.symmetric


# ---------------------------------------------------------------------------------------
# The kernel: one value of c, first user (u, v), clone split s.
# ---------------------------------------------------------------------------------------


def kernel_hockey_stick(
    c: np.ndarray, u: np.ndarray, v: np.ndarray, s: float, eps: float | np.ndarray, rel: float,
    uv_err: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Hockey-stick divergence ``sum_a (P(a) - e^eps Q(a))_+`` of the kernel pair

        P(a) = u B(a-1) + (1-u) B(a),   Q(a) = v B(a-1) + (1-v) B(a),   B = Bin(c, s),

    elementwise over arrays ``c, u, v``, for ``eps >= 0``. Returns ``(value, error bound)``.

    The likelihood ratio is a monotone function of ``rho(a) = B(a-1)/B(a) =
    a(1-s)/((c-a+1)s)``, itself increasing in ``a`` (FMT21 Appendix F; spec §2), so the
    optimal set is a tail ``{a >= k}`` and the value is
    ``(u - g v) B(k-1) - (g - 1) P[Bin(c,s) >= k]`` with ``g = e^eps``. The cut ``k`` is
    computed in floating point and then corrected by the exact sign of the two terms next
    to it, so an off-by-one cut cannot lower the result. ``uv_err``: how far the given ``u``,
    ``v`` may be from the exact pair's (charged as in :func:`_combine`). (The search's repeated
    evaluations on fixed blocks go through :class:`_CutState`, which keeps the cut terms.)
    """
    c, u, v, eps = np.broadcast_arrays(
        np.asarray(c, dtype=float), np.asarray(u, dtype=float), np.asarray(v, dtype=float), np.asarray(eps, dtype=float)
    )
    # Mirror a -> c + 1 - a turns u < v into u' = 1-u > v' = 1-v with split 1-s.
    flip = u < v
    uu = np.where(flip, 1.0 - u, u)
    vv = np.where(flip, 1.0 - v, v)
    value = np.zeros(c.shape)
    # u = v computed: 0, and at most _edge for the exact pair (within uv_err)
    err = np.zeros(c.shape) if not uv_err else np.where(uu > vv, 0.0, _edge(uv_err, np.expm1(eps)))
    for mirrored, ss in ((False, s), (True, 1.0 - s)):
        sel = (flip == mirrored) & (uu > vv)
        if not np.any(sel):
            continue
        val, e = _kernel_upper_tail(c[sel], uu[sel], vv[sel], ss, eps[sel], rel, None, uv_err)
        value[sel] = val
        err[sel] = e
    return value, err


#: A binomial tail below this is not trusted to its relative budget (Boost's sf underflows to 0
#: or to subnormals before the pmf does); :func:`_kernel_upper_tail` bounds it instead.
TAIL_TRUST = 1e-280


#: Runs of at least this many consecutive clone counts get their kernel values by the exact
#: recurrence of :func:`_run_values` (one Boost anchor per segment) instead of one Boost call each;
#: segments of the recurrence restart from Boost values, so errors grow over at most
#: ``RUN_SEGMENT`` steps (the same constants as :func:`.binomial.pmf_points`).
RUN_MIN = bn.RUN_MIN
RUN_SEGMENT = bn.RUN_SEGMENT
#: ... and only for requests of at least this many clone counts: below, the recurrence's set-up
#: costs more than Boost's values (measured at n <= 1e6: an exact window of 233 .. 558 counts
#: builds and answers its first eps in 0.26 .. 0.44 ms by Boost, 0.5 .. 0.64 ms by recurrence;
#: from about 1300 counts on the recurrence is faster).
RUN_BULK = 800
#: Refinement goes straight to single totals when its parts would be at most this wide (a
#: single total costs a few vectorised operations, a wider block Boost calls).
UNIT_SPLIT = 10.0
#: ... as long as a round creates at most this many single totals (beyond, at large n, the
#: per-total work outweighs the Boost calls saved).
UNIT_CAP = 8192.0
#: ... and only when the clone count's variance is at most this (sd ~ 1400; beyond, the
#: blocks that matter are wide and single totals do not pay: measured at n = 1e7 .. 1e9).
UNIT_MAX_VAR = 2.0e6
#: A fine request's first partition has single totals within this many standard deviations of the
#: mean (where refinement would put them; measured 3.5 at sd 154 down to 2.25 at sd 846).
UNIT_START_SD = 3.5
#: Requests at least this fine on pairs with at most EXACT_MAX clone counts within EXACT_SD
#: standard deviations of the mean are summed exactly over that window (``_ExactWindow``).
EXACT_RTOL = 1e-4
EXACT_MAX = 4096
EXACT_SD = 13.0
#: One refinement round aims at most this factor below the current reducible gap ...
GOAL_FLOOR = 0.05
#: ... or this one for fine requests (rtol <= EXACT_RTOL: the epsilon search's decisive looks,
#: where fewer, bolder rounds cost less: n = 1e6 .. 1e9 eps(delta) ~30 % faster, measured;
#: coarse requests such as the PLD route's keep the gentler rounds and their partitions).
GOAL_FLOOR_FINE = 0.02
#: Mean clone count from which Direction.surrogate uses the normal approximation.
SURROGATE_NORMAL = 2000.0
#: ... and the clone count from which Direction.mixture_surrogate's nodes do (below, Boost's
#: terms: the normal approximation's far tails set roots 1e-3 off at delta = 1e-10).
MIXTURE_NORMAL = 20000.0
#: Absolute error charged to the kernel pair ``u_t = lam_t pa' + (1 - lam_t) s``, ``v_t`` of pairs
#: with ``p0 > 0`` (:func:`_combine`'s ``uv_err``), first order in the unit roundoff ``u``: ``lam_t`` in
#: closed form carries at most 9 u relative (ratio 4, ``p0 / (1 - p0)`` 2, product, sum, reciprocal),
#: times ``|pa' - s| <= 1``; ``pa'`` and ``s`` (two roundings each) 2 u each; ``1 - lam``, the two
#: products and the sum 4 u; the mirror 1 u: 18 u = 2.0e-15, charged as 20 u.
LAM_UV_ERR = 2.2e-15
#: A run's values by recurrence are used only while the pmf stays this far above underflow.
_RUN_FLOOR = bn._RUN_FLOOR


def _run_values(k: np.ndarray, c: np.ndarray, s: float, rel: float) -> tuple[np.ndarray, ...] | None:
    """``B_c(k_c - 1)``, ``P[Bin(c, s) >= k_c]`` and their relative error bounds for the
    elements of ``(k, c)`` (sorted by ``c``, distinct) that lie in *runs*: at least
    :data:`RUN_MIN` consecutive ``c`` whose cuts step by 0 or 1 with ``1 <= k_c <= c``. Every
    run is cut into segments of :data:`RUN_SEGMENT` that start from Boost values at their first
    element; all segments are processed together (the cut cache asks for it from
    :data:`RUN_BULK` counts on). Returns ``(B, tail, rel_B, rel_tail, done)``
    (``done`` marks the elements computed here; the caller uses Boost for the others), or
    ``None`` when no run qualifies. Elements whose tail bound would exceed ten times Boost's
    own budget (cancellation when the cut climbs) or whose pmf nears underflow are left to Boost.

    With ``j = k_c - 1`` and ``X_{c+1} = X_c + xi``, ``xi ~ Bern(s)`` (exact identities):
    ``B_{c+1}(j) = B_c(j) (c+1)(1-s)/(c+1-j)``, ``P[X_{c+1} > j] = P[X_c > j] + s B_c(j)`` when
    the cut stays, and ``B_{c+1}(j+1) = B_c(j) (c+1)s/(j+1)``, ``P[X_{c+1} > j+1] = P[X_c > j] -
    B_c(j) (c-j)s/(j+1)`` when it moves up. Error bounds (first order in the unit roundoff
    ``u``, then widened by ``1 + 1e-6``): each pmf step costs at most ``6u`` relative, so
    ``rel_B(i) = rel_0 + 6u i`` (``i`` steps from the segment's anchor); the tail carries the
    anchor's budget, each increment's error ``|inc| (rel_B + 4u)``, and the recursive
    summation's ``u sum_l |T_l|``.
    """
    u = bn._fp.UNIT_ROUNDOFF
    n = c.size
    if n < RUN_MIN or not (0.0 < s < 1.0) or np.count_nonzero(np.diff(c) == 1.0) < RUN_MIN - 1:
        return None
    j = k - 1.0
    dj = np.diff(j)
    L = RUN_SEGMENT
    seg_start, seg_len = bn.run_segments((j >= 0.0) & (j < c), (np.diff(c) == 1.0) & ((dj == 0.0) | (dj == 1.0)),
                                         RUN_MIN, L)
    if seg_start.size == 0:
        return None
    cols = np.arange(L)[None, :]
    inrow = cols < seg_len[:, None]
    idx = np.where(inrow, seg_start[:, None] + cols, seg_start[:, None])  # padding repeats the anchor
    cc, jj = c[idx], j[idx]
    up = np.zeros(idx.shape, dtype=bool)
    up[:, :-1] = (jj[:, 1:] - jj[:, :-1] == 1.0) & inrow[:, 1:]
    step_ok = inrow[:, 1:]
    ratio = np.where(up, (cc + 1.0) * s / (jj + 1.0), (cc + 1.0) * (1.0 - s) / (cc + 1.0 - jj))[:, :-1]
    ratio = np.where(step_ok, ratio, 1.0)
    b0 = bn.pmf(jj[:, 0], cc[:, 0], s)
    t0 = bn.sf(jj[:, 0], cc[:, 0], s)
    rows = seg_start.size
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        b = b0[:, None] * np.concatenate((np.ones((rows, 1)), np.cumprod(ratio, axis=1)), axis=1)
        inc = np.where(step_ok, b[:, :-1] * np.where(up, -(cc - jj) * s / (jj + 1.0), s)[:, :-1], 0.0)
        tail = np.cumsum(np.concatenate((t0[:, None], inc), axis=1), axis=1)
    steps = cols.astype(float)
    rel_b = (rel + 6.0 * u * steps) * (1.0 + 1e-6) + np.zeros((rows, 1))
    rel_t0 = np.maximum(bn.tail_error_budget(jj[:, 0], cc[:, 0], s), rel)
    # the error analysis needs normal numbers all the way from the anchor
    good = np.cumprod(inrow & (b > _RUN_FLOOR) & (tail > 0.0) & np.isfinite(b), axis=1).astype(bool)
    abs_t = np.where(good, np.abs(tail), 0.0)
    err_t = ((rel_t0 * t0)[:, None]
             + np.concatenate((np.zeros((rows, 1)), np.cumsum(np.abs(inc) * (rel_b[:, :-1] + 4.0 * u), axis=1)), axis=1)
             + u * np.cumsum(abs_t, axis=1)) * (1.0 + 1e-6)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel_t = np.where(good, err_t / tail, np.inf)
    good &= rel_t <= 10.0 * rel_t0[:, None]
    out_b, out_t, out_rb, out_rt = np.empty(n), np.empty(n), np.empty(n), np.empty(n)
    done = np.zeros(n, dtype=bool)
    at = idx[good]
    out_b[at], out_t[at], out_rb[at], out_rt[at] = b[good], tail[good], rel_b[good], rel_t[good]
    done[at] = True
    return out_b, out_t, out_rb, out_rt, done


class _CutCache:
    """Values at cuts ``(c, k)`` of ``Bin(c, s)`` for one split ``s``: ``B(k-1)``, the tail
    ``P[Bin(c, s) >= k]`` and the relative error budgets of both, one cut per ``c`` (the
    latest), sorted by ``c``. Values are stored exactly as computed (by Boost, or by the
    recurrence of :func:`_run_values` with its own budgets), so a hit returns the same number
    with the same budget as a fresh computation."""

    def __init__(self) -> None:
        self.c = np.zeros(0)
        self.k = np.zeros(0)
        self.pmf = np.zeros(0)
        self.tail = np.zeros(0)
        self.rel_pmf = np.zeros(0)
        self.rel_tail = np.zeros(0)

    def values(self, k: np.ndarray, c: np.ndarray, s: float, rel: float) -> tuple[np.ndarray, ...]:
        """``(B(k-1), P[Bin(c,s) >= k], rel_pmf, rel_tail)`` elementwise (``c`` sorted,
        distinct); misses in runs of ``RUN_MIN`` consecutive ``c`` by recurrence, other
        misses by Boost."""
        pos = np.minimum(np.searchsorted(self.c, c), max(self.c.size - 1, 0))
        if self.c.size:
            hit = (self.c[pos] == c) & (self.k[pos] == k)
            if hit.all():
                return self.pmf[pos], self.tail[pos], self.rel_pmf[pos], self.rel_tail[pos]
        else:
            hit = np.zeros(c.shape, dtype=bool)
        b = np.empty(c.shape)
        tail = np.empty(c.shape)
        rb = np.full(c.shape, rel)
        rt = np.empty(c.shape)
        ph = pos[hit]
        b[hit], tail[hit], rb[hit], rt[hit] = self.pmf[ph], self.tail[ph], self.rel_pmf[ph], self.rel_tail[ph]
        miss = np.nonzero(~hit)[0]
        if miss.size:
            todo = np.ones(miss.size, dtype=bool)
            got = _run_values(k[miss], c[miss], s, rel) if miss.size >= RUN_BULK else None
            if got is not None:
                done = got[4]
                at = miss[done]
                b[at], tail[at], rb[at], rt[at] = got[0][done], got[1][done], got[2][done], got[3][done]
                todo = ~done
            idx = miss[todo]
            if idx.size:
                km, cm = k[idx], c[idx]
                b[idx] = bn.pmf(km - 1.0, cm, s)
                tail[idx] = bn.sf(km - 1.0, cm, s)
                rt[idx] = np.maximum(bn.tail_error_budget(km - 1.0, cm, s), rel)
            self._store(c, k, b, tail, rb, rt, pos, miss)
        return b, tail, rb, rt

    def _store(self, c: np.ndarray, k: np.ndarray, b: np.ndarray, tail: np.ndarray, rb: np.ndarray,
               rt: np.ndarray, pos: np.ndarray, miss: np.ndarray) -> None:
        """Keep the requested cuts that missed (they are what the next, nearby eps asks for):
        a ``c`` already present takes its new cut in place, a new ``c`` is inserted in order;
        while the cache stays small the cuts at other ``c`` stay, beyond it holds the request."""
        if self.c.size > 4 * c.size + 1024:
            self.c, self.k, self.pmf, self.tail, self.rel_pmf, self.rel_tail = (
                c.copy(), k.copy(), b.copy(), tail.copy(), rb.copy(), rt.copy())  # later updates are in place
            return
        cm = c[miss]
        pm = pos[miss]
        present = np.zeros(miss.size, dtype=bool) if self.c.size == 0 else self.c[pm] == cm
        where, fresh = pm[present], ~present
        arrays = [self.k, self.pmf, self.tail, self.rel_pmf, self.rel_tail]
        values = [k[miss], b[miss], tail[miss], rb[miss], rt[miss]]
        for a, v in zip(arrays, values):
            a[where] = v[present]
        if np.any(fresh):
            self.c, arrays = bn.merge_sorted(self.c, cm[fresh], [(a, v[fresh]) for a, v in zip(arrays, values)])
        self.k, self.pmf, self.tail, self.rel_pmf, self.rel_tail = arrays


def _cut(c: np.ndarray, v: np.ndarray | float, du: np.ndarray | float, coef_b: np.ndarray | float,
         gm1: np.ndarray | np.floating, s: float) -> np.ndarray:
    """The cut ``k`` of the kernel pair (``u > v``, ``coef_b = u - g v > 0``), in floating
    point: the set ``{a >= k}`` is where ``rho(a) = a(1-s)/((c-a+1)s)`` exceeds
    ``rho* = (g(1-v) - (1-u)) / (u - g v) = (du + gm1 (1-v)) / coef_b``.

    Where ``rho*`` overflows (``u - g v`` tiny against ``g``, e.g. ``eps0 = 700``, ``eps`` within 1e-9 of it) and
    ``s 1e300 > c + 1``: ``x = rho* s > 1e300 s > c + 1``, so ``a* = (c + 1) x / ((1 - s) + x)`` lies in ``[c, c + 1)``
    (``a* >= c`` iff ``x >= c (1 - s)``) and the cut is exactly ``c + 1`` (the empty tail), not the ``nan`` of
    ``inf / inf``. Other overflows keep ``nan`` (the callers' safe side)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        rho = (du + gm1 * (1.0 - v)) / coef_b
        if s <= 0.0:
            astar = np.zeros(c.shape)
        elif s >= 1.0:
            astar = c + 0.5  # B is a point mass at a = c; rho(c+1) = inf, rho(c) = 0 or less
        else:
            astar = rho * s * (c + 1.0) / ((1.0 - s) + rho * s)
            astar = np.where(np.isinf(rho) & (s * 1e300 > c + 1.0), c + 0.5, astar)
    return np.clip(np.floor(astar) + 1.0, 0.0, c + 1.0)


def _kernel_upper_tail(
    c: np.ndarray, u: np.ndarray, v: np.ndarray, s: float, eps: np.ndarray, rel: float,
    cache: _CutCache | None = None, uv_err: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`kernel_hockey_stick` for ``u > v`` (ratio increasing in ``a``), arrays of equal
    shape; ``cache`` keeps the Boost values at the cuts (:class:`_CutCache`)."""
    gm1 = np.expm1(eps)  # g - 1, accurate for small eps
    du = u - v
    coef_b = du - gm1 * v  # u - g v
    out = np.zeros(c.shape)
    live = coef_b > 0.0  # otherwise u/v <= g and the divergence is 0 ...
    # ... unless the exact u, v (within uv_err) have u > g v: then at most 2 uv_err (1 + g) (as in
    # _CutState.kernel)
    err = np.zeros(c.shape) if not uv_err else np.where(coef_b > -_edge(uv_err, gm1), _edge(uv_err, gm1), 0.0)
    if not np.any(live):
        return out, err
    c, u, v, du, coef_b, gm1 = c[live], u[live], v[live], du[live], coef_b[live], gm1[live]
    k = _cut(c, v, du, coef_b, gm1, s)
    terms = _cut_terms(k, c, s, rel, cache)
    value, e = _combine(terms, k, c, u, v, s, du, coef_b, gm1, uv_err)
    out[live] = np.maximum(value, 0.0)
    err[live] = e
    return out, err


_Terms = list  # [B(k-1), P[X >= k], rel of the pmf values, rel of the tail, B(k-2), B(k)]


def _cut_terms(k: np.ndarray, c: np.ndarray, s: float, rel: float, cache: _CutCache | None) -> _Terms:
    """The binomial values the kernel needs at cuts ``k`` of ``Bin(c, s)``: ``[B(k-1),
    P[Bin(c,s) >= k], rel_pmf, rel_tail, B(k-2), B(k)]`` (arrays; the neighbours by the exact pmf
    ratio from ``B(k-1)``). They depend on the cut only, not on ``eps``."""
    if cache is not None:
        b_km1, tail_k, rel_pmf, rel_tail = cache.values(k, c, s, rel)
    else:
        b_km1 = bn.pmf(k - 1.0, c, s)
        tail_k = bn.sf(k - 1.0, c, s)  # P[Bin(c, s) >= k]
        rel_tail = np.maximum(bn.tail_error_budget(k - 1.0, c, s), rel)
        rel_pmf = np.full(c.shape, rel)
    if 0.0 < s < 1.0:
        # neighbours by the exact pmf ratio: B(j-1)/B(j) = j(1-s)/((c-j+1)s)
        with np.errstate(divide="ignore", invalid="ignore"):
            j = k - 1.0
            b_km2 = np.where((j >= 1.0) & (j <= c), b_km1 * (j * (1.0 - s)) / ((c - j + 1.0) * s), 0.0)
            b_k = np.where((k >= 1.0) & (k <= c), b_km1 * ((c - k + 1.0) * s) / (k * (1.0 - s)), 0.0)
        first = k < 1.0  # k = 0: no left neighbour to scale from
        if np.any(first):
            b_k[first] = bn.pmf(k[first], c[first], s)
    else:
        b_km2, b_k = bn.pmf(k - 2.0, c, s), bn.pmf(k, c, s)
    return [b_km1, tail_k, rel_pmf, rel_tail, b_km2, b_k]


def _edge(uv_err: float, gm1: np.ndarray | np.floating) -> np.ndarray | np.floating:
    """Bound on a kernel computed as 0 (``u <= g v``) whose exact pair, within ``uv_err`` of the
    computed one, has ``u > g v``: ``(|du| + g |dv|) max B <= 2 uv_err (1 + g)``."""
    return 2.0 * uv_err * (2.0 + gm1)


def _combine(terms: _Terms, k: np.ndarray, c: np.ndarray, u: np.ndarray | float, v: np.ndarray | float, s: float,
             du: np.ndarray | float, coef_b: np.ndarray | float, gm1: np.ndarray | np.floating,
             uv_err: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """The kernel's value (before clipping at 0) and error bound from the cut's
    :func:`_cut_terms` (``u > v``, ``coef_b = u - g v > 0``).

    ``uv_err`` (absolute) is how far the computed ``u`` and ``v`` may be from the exact ones
    beyond the one rounding charged below (pairs with ``p0 > 0``: ``u_t``, ``v_t`` computed from
    ``lam_t``). The kernel is a maximum over sets of functions linear in ``(u, v)``, so convex;
    for a tail ``{a >= k'}`` the gradient is ``B(k'-1) (1, -g)`` (``P - g Q`` of an outcome moves
    by ``(du - g dv) (B(a-1) - B(a))``, which telescopes), so the value moves by at most ``(|du| +
    g |dv|) B(k'-1)`` with ``k'`` the optimal cut of either pair (subgradient inequality at each
    end). The cut is the first ``a`` above ``a* = s (c+1) num / D``, ``num = (u-v) + (g-1)(1-v)``,
    ``D = (u-v) + (g-1)(s-v)``; within ``uv_err`` each of ``num``, ``D`` moves by at most ``e =
    (1 + g) uv_err``, so ``a*`` stays in ``[s (c+1)(num-e)/(D+e), s (c+1)(num+e)/(D-e)]`` and the
    other pair's cut within ``J`` of ``k`` (``J = 1`` in the common case). Beyond ``[k-2, k]`` the
    pmf grows by at most the ratio at the window's ends per step (``B(a+1)/B(a)`` is
    non-increasing in ``a``), so ``uv_err (1 + g) max(B(k-2) r_-^(J-1), B(k-1), B(k) r_+^(J-1))``
    is charged, ``r_+ = max(1, B(k+1)/B(k))``, ``r_- = max(1, B(k-3)/B(k-2))``; where ``D <= e``
    (``eps`` within rounding of the largest log-ratio) the cut is unknown and ``max B <= 1`` is
    used. At ``g = 1`` (``eps = 0``, total variation) the change is at most ``(|du| + |dv|) max B
    <= 2 uv_err``: charged as ``4 uv_err``."""
    b_km1, tail_k, rel_pmf, rel_tail, b_km2, b_k = terms
    coef_a = -du - gm1 * (1.0 - v)  # (1-u) - g (1-v)
    value = coef_b * b_km1 - gm1 * tail_k
    # Exact local correction: the term at a = k-1 (if positive it belongs to the set)
    # and the term at a = k (if negative it does not).
    term_km1 = coef_b * b_km2 + coef_a * b_km1
    term_k = coef_b * b_km1 + coef_a * b_k
    value = value + np.maximum(0.0, np.maximum(term_km1, -term_k))
    scale = coef_b * b_km1 + gm1 * tail_k + np.abs(term_km1) + np.abs(term_k)
    # The values' relative errors (pmf values: rel_pmf, Boost's budget or the recurrence's;
    # the tail: its own, possibly larger, budget), rounding of the few operations here, and
    # of du = u - v.
    e = rel_pmf * scale + (rel_tail - rel_pmf) * gm1 * tail_k + 8e-16 * scale + 4e-16 * (u + v) * (b_km1 + b_km2 + b_k)
    # A tail at the edge of the double range carries no relative budget: Boost's binomial sf
    # underflows before the pmf does (P[Bin(1075, 1/2) >= 1045] came back as 0 for a true
    # ~1e-264 while B(k - 1) = 3.07e-263 was exact), and the value above, computed with that
    # tail, would then exceed the divergence by up to 70x (found by hypothesis through the k = 2
    # blanket). The value stays an upper bound (the tail enters with a minus sign); for the lower
    # end the true tail is bounded by the geometric series of the pmf ratio beyond k,
    # B(a+1)/B(a) = (c - a) s / ((a + 1)(1 - s)) (non-increasing in a), and charged to the error.
    tiny = tail_k < TAIL_TRUST
    if np.any(tiny):
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.maximum(c - k, 0.0) * s / ((k + 1.0) * (1.0 - s)) if 0.0 < s < 1.0 else np.ones(np.shape(k))
            geo = np.where(ratio < 1.0, b_k / (1.0 - ratio), 1.0)
        e = e + np.where(tiny, gm1 * np.minimum(geo, 1.0) * (1.0 + 1e-12) + 1e-300, 0.0)
    if uv_err:
        near = np.maximum(np.maximum(b_km2, b_km1), b_k)
        eu = (2.0 + gm1) * uv_err
        num = du + gm1 * (1.0 - v)
        dd = du + gm1 * (s - v)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            a_mid = s * (c + 1.0) * num / dd
            shift = np.maximum(s * (c + 1.0) * (num + eu) / (dd - eu) - a_mid, a_mid - s * (c + 1.0) * (num - eu) / (dd + eu))
            steps = np.ceil(shift * (1.0 + 1e-9) + 1e-9)  # beyond the one step of the window
            r_up = np.maximum((c - k) * s / ((k + 1.0) * (1.0 - s)), 1.0) if 0.0 < s < 1.0 else np.ones(np.shape(k))
            r_dn = np.maximum((k - 2.0) * (1.0 - s) / ((c - k + 3.0) * s), 1.0) if 0.0 < s < 1.0 else np.ones(np.shape(k))
            grow = np.maximum(b_km2 * r_dn ** np.maximum(steps - 1.0, 0.0), b_k * r_up ** np.maximum(steps - 1.0, 0.0))
        far = np.where((dd > eu) & np.isfinite(grow), np.maximum(near, grow), 1.0)
        e = e + uv_err * (2.0 + gm1) * np.where(gm1 > 0.0, far * (1.0 + 1e-12), 2.0)
    return value, e


class _CutState:
    """The kernel of one pair (``u > v``, split ``s``) at fixed clone counts ``c``, with the cut
    terms of the last ``eps`` kept: a search's next ``eps`` is close, most cuts ``k`` stay, and
    only the counts whose cut moved get new terms (through the cut cache). The numbers are those
    :func:`_kernel_upper_tail` computes from the same terms. ``u`` and ``v`` are scalars, or
    arrays matching ``c`` (pairs with ``p0 > 0``: one ``lam_t`` per count; a count where
    ``u <= g v`` has divergence 0 and keeps the empty cut ``k = c + 1``)."""

    def __init__(self, c: np.ndarray) -> None:
        self.c = c
        self.ts = c  # (the totals the counts belong to, when built for block corners)
        self.k: np.ndarray | None = None
        self.terms: _Terms = []
        self.eps: float | None = None
        self.live: np.ndarray | None = None  # counts with u > g v at the last eps (array u, v)

    def kernel(self, u: float | np.ndarray, v: float | np.ndarray, s: float, eps: float, rel: float,
               cache: _CutCache, uv_err: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """``(value, error bound)`` of the kernel at every ``c`` (as :func:`_kernel_upper_tail`;
        ``uv_err`` as in :func:`_combine`)."""
        c = self.c
        gm1 = np.expm1(np.float64(eps))
        du = u - v
        coef_b = du - gm1 * v
        live: np.ndarray | None = None
        # where u <= g v the divergence is 0, unless the exact u, v (within uv_err) have u > g v:
        # then it is at most (|du| + g |dv|) max B <= 2 uv_err (1 + g), charged to the error
        edge = _edge(uv_err, gm1)
        if np.ndim(coef_b) == 0:
            if not coef_b > 0.0:
                return np.zeros(c.shape), np.full(c.shape, edge if coef_b > -edge else 0.0)
            k = _cut(c, v, du, coef_b, gm1, s)
        else:
            live = coef_b > 0.0
            if not np.any(live):
                return np.zeros(c.shape), np.where(coef_b > -edge, edge, 0.0)
            k = np.where(live, _cut(c, v, du, np.where(live, coef_b, 1.0), gm1, s), c + 1.0)
        if self.k is None:
            self.terms = _cut_terms(k, c, s, rel, cache)
        else:
            moved = np.nonzero(k != self.k)[0]
            if moved.size:
                fresh = _cut_terms(k[moved], c[moved], s, rel, cache)
                for kept, new in zip(self.terms, fresh):
                    kept[moved] = new
        self.k, self.eps, self.live = k, eps, live
        value, e = _combine(self.terms, k, c, u, v, s, du, coef_b, gm1, uv_err)
        if live is None:
            return np.maximum(value, 0.0), e + np.zeros(c.shape)
        return np.where(live, np.maximum(value, 0.0), 0.0), np.where(live, e, np.where(coef_b > -edge, edge, 0.0))

    def q_mass(self, v: float | np.ndarray) -> np.ndarray:
        """``Q(S)`` of the kernel at every ``c`` at the last ``eps`` (the set ``S = {a >= k}``):
        ``P[Bin(c, s) >= k] + v B(k-1)`` (0 where the set is empty); for slope estimates only."""
        q = self.terms[1] + v * self.terms[0]
        return q if self.live is None else np.where(self.live, q, 0.0)


# ---------------------------------------------------------------------------------------
# Sums over totals t, with certified blocks.
# ---------------------------------------------------------------------------------------


def _corner_points(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct corner totals ``ts`` of blocks ``lo..hi`` for ``p0 = 0`` (upper corner
    ``max(lo, 1)``, lower corner ``hi + 1``), sorted, and ``inv``: the positions in ``ts`` of the
    upper corners, then of the lower ones."""
    if lo.size > 1 and np.array_equal(hi[:-1] + 1.0, lo[1:]):
        # a contiguous run of blocks (the whole partition): the corners are the edges,
        # sorted already; only lo = 0 and lo = 1 can share the corner t = 1
        edges = np.append(np.maximum(lo, 1.0), hi[-1] + 1.0)
        new = np.ones(edges.size, dtype=bool)
        new[1:] = edges[1:] != edges[:-1]
        pos = np.cumsum(new) - 1
        return edges[new], np.concatenate((pos[:-1], pos[1:]))
    return np.unique(np.concatenate((np.maximum(lo, 1.0), hi + 1.0)), return_inverse=True)



class TotalsGeometry:
    """The decomposition of a clone pair over totals ``t = a + b`` (module docstring):
    block masses ``Pr[lo <= T <= hi]``, mixing weights ``lam_t`` and the kernel at
    ``(t, lam)``, as pure functions of the pair (no state). Shared by the hockey-stick
    (:class:`Direction`), the Renyi divergences (:mod:`.renyi`) and the PLD route.
    """

    def __init__(self, pair: ClonePair) -> None:
        self.pair = pair
        self.N = pair.n - 1
        self.p = pair.clone_probability
        self.s = pair.split
        self.rel = bn.pmf_error_budget(max(self.N, 1))  # pmf values; tails charge their own
        total = pair.pa + pair.pb
        self.pa1, self.pb1 = pair.pa / total, pair.pb / total
        self._cuts: dict[float, _CutCache] = {}  # Boost values at cuts, reused across nearby eps
        self._tails = bn.TailMemo(self.N, self.p)  # Boost tails at block edges, shared by neighbours
        self._corner_state: _CutState | None = None  # cut terms at the last corners' clone counts
        # blocks narrower than this have their masses summed term by term (from N = 3e8 on that is
        # cheaper than a binomial tail per edge up to ~200 counts, and more accurate: measured)
        self._narrow = bn.NARROW if self.N < 3e8 else 4 * bn.NARROW

    def initial_edges(self) -> np.ndarray:
        """Block edges over totals t in [0, n]: block i is ``edges[i] .. edges[i+1]-1``."""
        n = self.pair.n
        if not self.pair.block_monotone:
            if n + 1 > MAX_EXACT_TERMS:
                raise CertificationError(
                    f"pairs with p0 > 0 and r0 != r1 are summed exactly, which is limited to "
                    f"n <= {MAX_EXACT_TERMS - 1}; got n = {n}"
                )
            return np.arange(0, n + 2, dtype=float)
        mu = self.N * self.p + (1.0 - self.pair.p0)
        sd = math.sqrt(max(self.N * self.p * (1.0 - self.p), 1.0))
        inner = np.round(mu + sd * np.linspace(-12.0, 12.0, 97))
        return np.unique(np.clip(np.concatenate(([0.0, n + 1.0], inner)), 0.0, n + 1.0))

    def lam(self, t: np.ndarray) -> np.ndarray:
        """``lam_t = (1-p0) w(t-1) / Pr[T = t]`` in closed form (no underflow)."""
        p0 = self.pair.p0
        t = np.asarray(t, dtype=float)
        if p0 == 0.0:
            return np.ones(t.shape)
        if self.p == 0.0:  # C = 0: t = 1 is counted, t = 0 silent
            return np.where(t >= 1.0, 1.0, 0.0)
        if self.p == 1.0:  # C = N: t = N + 1 counted, t = N silent
            return np.where(t >= self.N + 1.0, 1.0, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            # w(t) / w(t-1) = (N - t + 1) / t * p / (1 - p)
            ratio = (self.N - t + 1.0) / t * (self.p / (1.0 - self.p))
            lam = 1.0 / (1.0 + (p0 / (1.0 - p0)) * ratio) if p0 < 1.0 else np.zeros(t.shape)
        lam = np.where(t <= 0.0, 0.0, lam)
        return np.where(t >= self.N + 1.0, 1.0, lam)

    def block_mass(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``Pr[lo <= T <= hi]`` and its error bound. With ``p0 > 0``, ``Pr[lo <= T <= hi] = (1 -
        p0) P[lo-1 <= C <= hi-1] + p0 P[lo <= C <= hi] = P[lo-1 <= C <= hi-1] + p0 (w(hi) - w(lo-1))``
        (``w`` the clone count's pmf): one interval of ``C`` (binomial tails, the costly part at
        large ``n``) and two pmf values, each with Boost's budget; the subtraction, product and sum
        are rounded outwards by ``4e-16`` of the terms' sizes."""
        p0 = self.pair.p0
        m1, e1 = bn.interval_mass(lo - 1.0, hi - 1.0, self.N, self.p, self._tails, self._narrow)
        if p0 == 0.0:
            return m1, e1
        w_hi, w_below = bn.pmf(hi, self.N, self.p), bn.pmf(lo - 1.0, self.N, self.p)
        size = p0 * (w_hi + w_below)
        mass = np.maximum(m1 + p0 * (w_hi - w_below), 0.0)
        return mass, e1 + bn.pmf_error_budget(self.N) * size + 4e-16 * (m1 + size)

    def h(self, t: np.ndarray, lam: np.ndarray, eps: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Kernel value at ``c = t - 1`` (``t >= 1``) and mixing ``lam``: first user
        ``u = lam pa' + (1 - lam) s`` under P, ``v = lam pb' + (1 - lam) s`` under Q."""
        u = lam * self.pa1 + (1.0 - lam) * self.s
        v = lam * self.pb1 + (1.0 - lam) * self.s
        uv_err = 0.0 if self.pair.p0 == 0.0 else LAM_UV_ERR  # lam = lam_t computed (:data:`LAM_UV_ERR`)
        return kernel_hockey_stick(np.maximum(t - 1.0, 0.0), u, v, self.s, eps, self.rel, uv_err)

    def mirrored_pair(self) -> tuple[float, float, float]:
        """The lam = 1 kernel pair ``(u, v, split)`` with ``u >= v``: the pair's own, mirrored
        (``a -> c + 1 - a``, see :func:`kernel_hockey_stick`) when ``pa < pb``."""
        u, v, s = self.pa1, self.pb1, self.s
        if u < v:
            return 1.0 - u, 1.0 - v, 1.0 - s
        return u, v, s

    def _h_corners(self, ts: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`h` at totals ``ts`` (sorted, distinct) for ``p0 = 0`` (``lam = 1``): one kernel
        pair for all, through the cut cache (same numbers as :func:`kernel_hockey_stick`, with
        its mirror step done once)."""
        u, v, s = self.mirrored_pair()
        if not u > v:
            return np.zeros(ts.shape), np.zeros(ts.shape)
        state = self._corner_state
        if state is None or (state.ts is not ts and not (state.ts.size == ts.size and np.array_equal(state.ts, ts))):
            state = self._corner_state = _CutState(np.maximum(ts - 1.0, 0.0))  # (the partition changed since)
            state.ts = ts
        return state.kernel(u, v, s, eps, self.rel, self._cuts.setdefault(s, _CutCache()))

    def _corner_values(self, ts: np.ndarray, inv: np.ndarray, lo: np.ndarray, hi: np.ndarray, eps: float
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`corners` for ``p0 = 0`` from the blocks' corner totals ``ts`` and their
        positions ``inv`` (:func:`_corner_points`)."""
        val, err = self._h_corners(ts, eps)
        m = len(lo)
        up, up_err = val[inv[:m]], err[inv[:m]]
        certain = np.maximum(val - err, 0.0)  # the kernel's own rounding, taken off the lower corner
        return up, up_err, np.where(lo == hi, certain[inv[:m]], certain[inv[m:]])

    def corners(self, lo: np.ndarray, hi: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Kernel bounds for blocks ``lo..hi``: ``(upper, its error, certified lower)``
        (the lower value already has its floating-point error bound subtracted).

        Upper: smallest c (t = lo) with the largest lam (t = hi); lower: the opposite
        corner. When lam is constant (p0 = 0) the lower corner of a wider block is taken
        at t = hi + 1, the next block's upper corner (a valid, slightly looser lower bound
        by monotonicity), so each edge costs one kernel evaluation; a one-point block is
        exact.
        """
        if self.pair.p0 == 0.0:
            ts, inv = _corner_points(lo, hi)
            return self._corner_values(ts, inv, lo, hi, eps)
        points = self._lam_points(lo, hi)
        return self._lam_corner_values(points, points.states(), eps)

    def _lam_uv(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """The kernel pair at totals ``t`` with the first user's ``u_t``, ``v_t`` from ``lam_t``,
        mirrored (``a -> c + 1 - a``, see :func:`kernel_hockey_stick`) when ``pa < pb`` so that ``u_t >= v_t``:
        ``(u, v, split)``; the same floating-point operations as :meth:`h`."""
        lam = self.lam(t)
        u = lam * self.pa1 + (1.0 - lam) * self.s
        v = lam * self.pb1 + (1.0 - lam) * self.s
        if self.pa1 < self.pb1:
            return 1.0 - u, 1.0 - v, 1.0 - self.s
        return u, v, self.s

    def _lam_points(self, lo: np.ndarray, hi: np.ndarray) -> "_LamPoints":
        """The kernel points of blocks ``lo..hi`` (sorted, a partition or part of one) for ``p0 >
        0`` (see :class:`_LamPoints`). Upper corner: ``(max(lo, 1), lam(hi))`` for every block with
        ``hi >= 1`` (``h`` is non-increasing in ``c`` and, for block-monotone pairs, non-decreasing in
        ``lam``). Lower corner of a wider block with ``lo >= 1``: ``(hi + 1, lam(lo))``, one count
        beyond the block (a valid, slightly looser lower bound by monotonicity in ``c``), so that it
        shares its clone count, and almost always its cut and binomial terms, with the next block's
        upper corner; a block that holds ``t = 0`` has ``lam(0) = 0`` there (divergence 0); a
        one-point block is exact (both corners its point).
        """
        up_ok = hi >= 1.0
        low_ok = (hi > lo) & (lo >= 1.0)
        t_up, t_low = np.maximum(lo[up_ok], 1.0), hi[low_ok] + 1.0
        m = lo.size
        inv_up = np.full(m, -1, dtype=np.int64)
        inv_up[up_ok] = np.arange(t_up.size)
        inv_low = np.full(m, -1, dtype=np.int64)
        inv_low[low_ok] = np.arange(t_low.size)
        u_up, v_up, s = self._lam_uv(hi[up_ok])
        u_low, v_low, _ = self._lam_uv(lo[low_ok])
        return _LamPoints(t_up, u_up, v_up, t_low, u_low, v_low, s, inv_up, inv_low, up_ok & (hi == lo))

    def _lam_corner_values(self, points: "_LamPoints", states: "tuple[_CutState, _CutState]", eps: float
                           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`corners` for ``p0 > 0`` from the blocks' kernel points (``states`` hold the cut
        terms of the upper and the lower corners): the kernel at every point through the cut cache,
        with :data:`LAM_UV_ERR` charged for ``u_t``, ``v_t``."""
        cache = self._cuts.setdefault(points.s, _CutCache())
        val, err = states[0].kernel(points.u_up, points.v_up, points.s, eps, self.rel, cache, LAM_UV_ERR)
        has_up, has_low = points.inv_up >= 0, points.inv_low >= 0
        up = np.where(has_up, val[points.inv_up], 0.0)
        up_err = np.where(has_up, err[points.inv_up], 0.0)
        low = np.where(points.one, np.maximum(up - up_err, 0.0), 0.0)
        if points.t_low.size:
            val_l, err_l = states[1].kernel(points.u_low, points.v_low, points.s, eps, self.rel, cache, LAM_UV_ERR)
            low = np.where(has_low, np.maximum(val_l - err_l, 0.0)[points.inv_low], low)
        return up, up_err, low


@dataclass(frozen=True)
class _LamPoints:
    """Kernel points of a set of blocks for ``p0 > 0`` (:meth:`TotalsGeometry._lam_points`): the
    upper corners' totals ``t_up`` (sorted, distinct) with their kernel pairs ``(u_up, v_up)``, the
    lower corners' ``t_low``, ``(u_low, v_low)``, the split ``s``, per block the positions of its
    corners (``-1``: none, value 0) and ``one``: one-point blocks (lower corner = upper corner)."""

    t_up: np.ndarray
    u_up: np.ndarray
    v_up: np.ndarray
    t_low: np.ndarray
    u_low: np.ndarray
    v_low: np.ndarray
    s: float
    inv_up: np.ndarray
    inv_low: np.ndarray
    one: np.ndarray

    def states(self) -> "tuple[_CutState, _CutState]":
        """Fresh cut states at the upper and the lower corners' clone counts ``t - 1``."""
        return _CutState(self.t_up - 1.0), _CutState(self.t_low - 1.0)


@dataclass(frozen=True)
class BlockPartition:
    """A snapshot of a certified partition of the totals ``0..n`` into blocks
    ``lo[i]..hi[i]`` with masses ``mass[i]`` (error bound ``mass_err[i]``). Any partition
    gives valid bounds; one refined near the ``eps`` of interest gives tight ones."""

    lo: np.ndarray
    hi: np.ndarray
    mass: np.ndarray
    mass_err: np.ndarray

    def __post_init__(self) -> None:
        for name in ("lo", "hi", "mass", "mass_err"):
            a = np.array(getattr(self, name), dtype=float)
            a.setflags(write=False)
            object.__setattr__(self, name, a)

    @property
    def size(self) -> int:
        return int(self.lo.size)


class _ExactWindow:
    """Certified ``delta(eps)`` of one direction of a pair whose clone count is concentrated,
    with every clone count of a window ``mean +- (EXACT_SD sd + 40)`` (at most :data:`EXACT_MAX`
    of them) summed exactly (no blocks, no refinement): for fine requests at small n, where
    refinement would end at width one anyway. :meth:`Direction.bounds` uses the result only when
    it reaches the requested width (otherwise the tails beyond the window matter, and the blocks
    answer).

    ``p0 = 0``: ``delta = sum_c w(c) h(c)`` (module docstring, ``lam = 1``). Inside the window:
    ``w`` by :func:`.binomial.pmf_points` and ``h`` by the cached kernel (runs by recurrence),
    each with its error bound. Below the window: ``h(c) <= h(0, eps) <= h(0, 0) = u - v`` (``h``
    is non-increasing in ``c`` and in ``eps``; at ``c = 0`` the pair is ``Bern(u)`` against
    ``Bern(v)``); above it: ``h(c) <= h(c_hi)``. The tails' masses come from Boost's cdf / sf
    with their budgets and contribute 0 to the lower bound. Sums of ``m`` non-negative terms
    are rounded outwards by ``4e-16 (m + 2)``.

    ``p0 > 0``: ``delta = sum_t Pr[T = t] h(t - 1, lam_t)`` over totals ``t = c + 1`` of the
    window, ``Pr[T = t] = (1 - p0) w(c) + p0 w(c + 1)`` (each weight's budget, the two products
    and the sum rounded outwards by ``1e-15``), the kernel pair ``(u_t, v_t)`` from ``lam_t`` with
    :data:`LAM_UV_ERR` charged. Beyond the window the kernel is at most its total variation at
    ``c = 0``, ``|u_t - v_t| = lam_t |pa' - pb'|`` (``h`` non-increasing in ``c``), with ``lam_t``
    non-decreasing in ``t``: below the window at most the first total's ``u - v``, above it at most
    ``|pa' - pb'|``; the tails' masses are ``Pr[1 <= T <= c_lo] <= (1 - p0) P[C <= c_lo - 1] +
    p0 P[C <= c_lo]`` (``T = 0`` contributes 0) and ``Pr[T >= c_hi + 2] = (1 - p0) P[C > c_hi] +
    p0 P[C > c_hi + 1]``.
    """

    def __init__(self, geo: "TotalsGeometry") -> None:
        N, p, p0 = geo.N, geo.p, geo.pair.p0
        mu, sd = N * p, math.sqrt(N * p * (1.0 - p))
        # (+-40 more: at small means the binomial's tails are Poisson-like, heavier than 13 sd says)
        self.c = np.arange(max(math.floor(mu - EXACT_SD * sd) - 40, 0), min(math.ceil(mu + EXACT_SD * sd) + 40, N) + 1,
                           dtype=float)
        lo_c, hi_c = float(self.c[0]), float(self.c[-1])
        self.below_h: float  # the kernel's bound below the window
        self.above_h: float | None  # ... and above it (None: h(c_hi) at each eps)
        points = self.c if p0 == 0.0 else np.append(self.c, hi_c + 1.0)  # w(c + 1) too (0 at N + 1)
        if points.size >= RUN_BULK:
            w, rel_w = bn.pmf_points(points, N, p)
        else:  # few counts: Boost's values (with its budget) cost less than the recurrence's set-up
            w, rel_w = bn.pmf(points, N, p), np.full(points.shape, bn.pmf_error_budget(N))
        self.uv_err = 0.0 if p0 == 0.0 else LAM_UV_ERR

        def tail(kind: str, k: float) -> float:
            """Boost's cdf / sf of the clone count at ``k``, rounded up by its budget."""
            at = np.array([k])
            got = float((bn.cdf if kind == "cdf" else bn.sf)(at, N, p)[0])
            return got * (1.0 + float(bn.tail_error_budget(at, N, p)[0]))

        u: Any  # the kernel's first-user weights: scalars (p0 = 0) or one per clone count (p0 > 0)
        v: Any
        if p0 == 0.0:
            self.w = w
            self.w_up = w * (1.0 + rel_w)
            self.w_lo = np.maximum(w * (1.0 - rel_w), 0.0)
            u, v, s = geo.mirrored_pair()
            self.below = tail("cdf", lo_c - 1.0)
            self.above = tail("sf", hi_c)
            self.below_h = u - v
            self.above_h = None
        else:
            wa, wb, ra, rb = w[:-1], w[1:], rel_w[:-1], rel_w[1:]
            self.w = (1.0 - p0) * wa + p0 * wb
            self.w_up = ((1.0 - p0) * (wa * (1.0 + ra)) + p0 * (wb * (1.0 + rb))) * (1.0 + 1e-15)
            self.w_lo = np.maximum(((1.0 - p0) * (wa * (1.0 - ra)) + p0 * (wb * (1.0 - rb))) * (1.0 - 1e-15), 0.0)
            u, v, s = geo._lam_uv(self.c + 1.0)
            self.below = 0.0 if lo_c == 0.0 else ((1.0 - p0) * tail("cdf", lo_c - 1.0) + p0 * tail("cdf", lo_c)) * (1.0 + 1e-15)
            self.above = ((1.0 - p0) * tail("sf", hi_c) + p0 * tail("sf", hi_c + 1.0)) * (1.0 + 1e-15)
            self.below_h = float(u[0] - v[0]) + 2.0 * LAM_UV_ERR
            self.above_h = abs(geo.pa1 - geo.pb1) + 2.0 * LAM_UV_ERR
        self.u, self.v, self.s, self.rel = u, v, s, geo.rel
        self.cuts = geo._cuts.setdefault(s, _CutCache())
        self._state = _CutState(self.c)  # the cut terms of the last eps, updated where cuts move
        self._last: tuple[float, np.ndarray, np.ndarray] | None = None  # eps, h, err
        self._sums = (0.0, math.inf)  # (lower, upper) at the last eps
        self.tails = math.inf  # the mass beyond the window's share of the last upper bound

    def bounds(self, eps: float, rtol: float) -> DeltaBounds:
        """The certified bracket at ``eps`` (independent of ``rtol``, which only sets the
        ``converged`` flag; a repeated ``eps`` returns the numbers computed before)."""
        m = self.c.size
        if self._last is not None and self._last[0] == eps:
            lower, upper = self._sums
        else:
            h, err = self._state.kernel(self.u, self.v, self.s, eps, self.rel, self.cuts, self.uv_err)
            self._last = (eps, h, err)
            above_h = float(h[-1] + err[-1]) if self.above_h is None else self.above_h
            self.tails = self.below * self.below_h + self.above * above_h
            upper = (float(np.sum(self.w_up * (h + err))) + self.tails) * (1.0 + 4e-16 * (m + 4))
            lower = float(np.sum(self.w_lo * np.maximum(h - err, 0.0))) * (1.0 - 4e-16 * (m + 2))
            lower = min(max(lower, 0.0), upper)
            self._sums = (lower, upper)
        return DeltaBounds(eps, lower, upper, m, upper - lower <= rtol * lower or upper <= 1e-300)

    @property
    def rounding_bound(self) -> bool:
        """Whether the last bracket's width comes from the kernel's floating-point error, not
        from the mass beyond the window (tails at most a quarter of the width): blocks, whose
        width-one blocks carry the same kernel errors, cannot be narrower then."""
        lower, upper = self._sums
        return self.tails <= 0.25 * (upper - lower)

    def log_slope(self, eps: float) -> float:
        """Estimate of ``d log delta / d eps`` at the last evaluated ``eps`` (see
        :meth:`Direction.log_slope`)."""
        if self._last is None or self._last[0] != eps or self._state.eps != eps:
            return math.nan
        gm1 = np.expm1(np.float64(eps))
        delta = float(np.sum(self.w * self._last[1]))  # (0 where u <= g v everywhere)
        if not delta > 0.0:
            return math.nan
        return -float(1.0 + gm1) * float(np.sum(self.w * self._state.q_mass(self.v))) / delta


class Direction(TotalsGeometry):
    """Certified block sums for one direction (``P || Q``) of one pair.

    Blocks of totals ``t`` are kept between calls: their masses do not depend on
    ``eps`` and are computed once; the kernels are recomputed when ``eps`` changes, and
    within one ``eps`` only for blocks created by refinement.
    """

    def __init__(self, pair: ClonePair) -> None:
        super().__init__(pair)
        self._blocks: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None  # built on first use
        self._eps: float | None = None
        self._h_up = self._h_up_err = self._h_lo = np.zeros(0)
        self._exact: _ExactWindow | None = None
        self._exact_last: float | None = None  # eps of the last bounds() answered by the window
        # the current partition's corner totals (p0 = 0), kept while the partition stands
        self._points: tuple[tuple[np.ndarray, ...], np.ndarray, np.ndarray] | None = None
        # ... for p0 > 0: its kernel points and their cut terms
        self._lam_state: tuple[tuple[np.ndarray, ...], _LamPoints, tuple[_CutState, _CutState]] | None = None

    def _remass(self) -> bool:
        """From now on sum the masses of blocks narrower than :data:`.binomial.NARROW_MAX` term by
        term (an error relative to the block's mass instead of to the binomial tails: at large n
        the tails' errors of many narrow blocks near the median add up to a floor that refinement
        cannot lower), recomputing those of the current partition; whether any changed."""
        self._narrow = bn.NARROW_MAX
        old = self._get_blocks()
        lo, hi, mass, mass_err = old
        redo = np.nonzero((hi - lo >= bn.NARROW) & (hi - lo < bn.NARROW_MAX))[0]
        if redo.size == 0:
            return False
        mass, mass_err = mass.copy(), mass_err.copy()
        mass[redo], mass_err[redo] = self.block_mass(lo[redo], hi[redo])
        self._blocks = (lo, hi, mass, mass_err)
        # the kept corner points belong to the same blocks
        if self._points is not None and self._points[0] is old:
            self._points = (self._blocks, *self._points[1:])
        if self._lam_state is not None and self._lam_state[0] is old:
            self._lam_state = (self._blocks, *self._lam_state[1:])
        return True

    def _fine_start_blocks(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """The first partition for a fine request (the epsilon search's decisive looks) where
        refinement would go to single totals anyway (:data:`UNIT_MAX_VAR`): the initial blocks with
        every total within :data:`UNIT_START_SD` standard deviations of the mean already single,
        which saves a refinement round (n = 1e5 .. 1e6, eps0 0.5 .. 8, delta 1e-6 / 1e-10: CPU -12 %
        for clones, -27 % for the k-RR lower bound, measured); ``None`` (the initial blocks, built
        on first use) otherwise."""
        var = self.N * self.p * (1.0 - self.p)
        if not (self.pair.block_monotone and 0.0 < self.s < 1.0 and var <= UNIT_MAX_VAR):
            return None
        mu, sd = self.N * self.p + (1.0 - self.pair.p0), math.sqrt(max(var, 1.0))
        units = np.arange(max(math.floor(mu - UNIT_START_SD * sd), 0),
                          min(math.ceil(mu + UNIT_START_SD * sd), self.pair.n) + 1, dtype=float)
        if not 0 < units.size <= UNIT_CAP:
            return None
        return self._partition(np.unique(np.concatenate((self.initial_edges(), units))))

    def _partition(self, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(lo, hi, mass, mass_err)`` of the blocks ``[edges[i], edges[i+1] - 1]``."""
        lo, hi = edges[:-1], edges[1:] - 1.0
        return (lo, hi, *self.block_mass(lo, hi))

    def _get_blocks(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(lo, hi, mass, mass_err)`` of the current partition, the initial one built on
        first use (a query answered by the exact window never needs it)."""
        if self._blocks is None:
            self._blocks = self._partition(self.initial_edges())
        return self._blocks

    @property
    def lo(self) -> np.ndarray:
        return self._get_blocks()[0]

    @property
    def hi(self) -> np.ndarray:
        return self._get_blocks()[1]

    @property
    def mass(self) -> np.ndarray:
        return self._get_blocks()[2]

    @property
    def mass_err(self) -> np.ndarray:
        return self._get_blocks()[3]

    @property
    def exact_window_size(self) -> float:
        """The number of clone counts :class:`_ExactWindow` would sum (an upper estimate)."""
        var = self.N * self.p * (1.0 - self.p)
        return min(2.0 * EXACT_SD * math.sqrt(max(var, 0.0)) + 82.0, self.N + 1.0)

    @property
    def exact_window_applies(self) -> bool:
        """Whether the pair qualifies for :class:`_ExactWindow` (``0 < s < 1``, ``pa != pb``, at
        most :data:`EXACT_MAX` clone counts in the window)."""
        var = self.N * self.p * (1.0 - self.p)
        return 0.0 < self.s < 1.0 and 0.0 < var and self.pa1 != self.pb1 and self.exact_window_size <= EXACT_MAX

    def _exact_window(self) -> "_ExactWindow | None":
        """The :class:`_ExactWindow` of this direction when :attr:`exact_window_applies`
        (built on first use), else ``None``."""
        if self._exact is None:
            if not self.exact_window_applies:
                return None
            self._exact = _ExactWindow(self)
        return self._exact

    @property
    def partition(self) -> BlockPartition:
        """The current (refined) partition, as a frozen snapshot."""
        return BlockPartition(self.lo, self.hi, self.mass, self.mass_err)

    def upper_on_grid(self, eps: np.ndarray, chunk: int = 4096) -> np.ndarray:
        """Certified upper bounds on ``delta(eps)`` for a vector of ``eps >= 0``, on the
        *current* partition (no refinement): each block ``lo..hi`` contributes
        ``(W + err_W) * h(lo - 1, lam(hi)) + W * err_h`` (monotonicity 1 and 2 of the module
        docstring; FMT21 Lemma F.2), and the sum of ``nb`` non-negative terms is rounded up
        by ``4e-16 * nb``."""
        eps = np.asarray(eps, dtype=float)
        part = self.partition
        t = np.maximum(part.lo, 1.0)[:, None]
        lam = self.lam(part.hi)[:, None]
        zero = (part.hi < 1.0)[:, None]  # block {t = 0}: nothing counted, identical laws
        w_up = (part.mass + part.mass_err)[:, None]
        out = np.empty(eps.shape)
        for start in range(0, eps.size, chunk):
            sl = slice(start, start + chunk)
            h, herr = self.h(t, lam, eps[None, sl])
            h = np.where(zero, 0.0, h)
            herr = np.where(zero, 0.0, herr)
            out[sl] = np.sum(w_up * h + part.mass[:, None] * herr, axis=0)
        return out * (1.0 + 4e-16 * (part.size + 2))

    # -- evaluation -----------------------------------------------------------------
    def bounds(self, eps: float, rtol: float, max_rounds: int = 200) -> DeltaBounds:
        """Refine blocks until ``upper - lower <= rtol * lower`` (or nothing is left to
        refine); returns the certified bracket. Requests at least as fine as
        :data:`EXACT_RTOL` on a qualifying pair are answered by the exact window
        (:class:`_ExactWindow`) instead, leaving the blocks as they are."""
        if rtol <= EXACT_RTOL and math.isfinite(eps) and eps >= 0.0:
            window = self._exact_window()
            if window is not None:
                got = window.bounds(eps, rtol)
                # else (tails beyond the window matter): the blocks below; but when rounding of
                # the kernel, not the tails, sets the width, the blocks cannot do better
                if got.converged or window.rounding_bound:
                    self._exact_last = eps
                    return got
        self._exact_last = None
        if self._blocks is None and rtol <= EXACT_RTOL:
            self._blocks = self._fine_start_blocks()
        if self._eps != eps:
            self._h_up, self._h_up_err, self._h_lo = self._partition_corners(eps)
            self._eps = eps
        for _ in range(max_rounds):
            lo, hi, mass, mass_err = self.lo, self.hi, self.mass, self.mass_err
            h_up, h_up_err, h_lo = self._h_up, self._h_up_err, self._h_lo
            reducible = np.where(hi > lo, mass * (h_up - h_lo), 0.0)  # shrinks when split
            error_terms = mass_err * h_up + mass * h_up_err + mass_err * h_lo  # does not
            nblocks = len(lo)
            upper = float(np.sum(mass * h_up + mass_err * h_up + mass * h_up_err)) * (1.0 + 4e-16 * nblocks)
            lower = float(np.sum(np.maximum(mass * h_lo - mass_err * h_lo, 0.0))) * (1.0 - 4e-16 * nblocks)
            target = rtol * lower
            if upper - lower <= target or upper <= 1e-300:
                return DeltaBounds(eps, max(lower, 0.0), upper, nblocks, True)
            floor = float(np.sum(error_terms))
            if (self._narrow < bn.NARROW_MAX and float(np.sum(mass_err * (h_up + h_lo))) > 0.1 * target
                    and self._remass()):
                continue  # the same blocks with their masses summed term by term: look again
            if floor >= 0.5 * target and float(np.sum(reducible)) <= floor:
                # floating-point error dominates: refining further cannot help
                return DeltaBounds(eps, max(lower, 0.0), upper, nblocks, False)
            # Split blocks so that the reducible gap should reach 90% of the room left in one
            # round: a block split into m equal parts keeps about 1/m of its gap (W and the
            # kernel's drop both shrink by m, and there are m parts), so the fewest parts for a
            # total gap ``goal`` are m_i ~ sqrt(r_i) * sum_j sqrt(r_j) / goal (Lagrange). At
            # least 2 and at most 256 parts per block and round, never below width one.
            total_r = float(np.sum(reducible))
            goal = max(0.9 * (target - floor), (GOAL_FLOOR_FINE if rtol <= EXACT_RTOL else GOAL_FLOOR) * total_r)
            root = np.sqrt(np.maximum(reducible, 0.0))  # (rounding can make a gap slightly negative)
            parts = np.ceil(root * (float(np.sum(root)) / goal))
            width = hi - lo + 1.0
            parts = np.minimum(np.minimum(parts, 256.0), width)
            if self.pair.block_monotone and 0.0 < self.s < 1.0 and self.N * self.p * (1.0 - self.p) <= UNIT_MAX_VAR:
                # parts of UNIT_SPLIT totals or fewer: go to single totals, whose kernels come in runs
                # by recurrence (one Boost anchor per run) instead of one Boost call per edge
                unit = (parts >= 2.0) & (width <= UNIT_SPLIT * parts)
                if float(np.sum(width[unit])) <= UNIT_CAP:
                    parts = np.where(unit, width, parts)
            chosen = np.nonzero((parts >= 2.0) & (reducible > 0.0))[0]
            if chosen.size == 0:
                return DeltaBounds(eps, max(lower, 0.0), upper, nblocks, False)
            m = parts[chosen].astype(np.int64)
            if nblocks + int(np.sum(m)) - chosen.size > MAX_BLOCKS:
                raise CertificationError(
                    f"block refinement exceeded {MAX_BLOCKS} blocks at eps = {eps!r}; loosen the tolerance"
                )
            owner = np.repeat(np.arange(chosen.size), m)
            j = (np.arange(owner.size) - np.repeat(np.cumsum(m) - m, m)).astype(float)
            mm, w0, l0 = m[owner].astype(float), width[chosen][owner], lo[chosen][owner]
            child_lo = l0 + np.floor(w0 * j / mm)
            child_hi = np.where(j + 1.0 == mm, hi[chosen][owner], l0 + np.floor(w0 * (j + 1.0) / mm) - 1.0)
            keep = child_hi >= child_lo
            child_lo, child_hi = child_lo[keep], child_hi[keep]
            c_mass, c_err = self.block_mass(child_lo, child_hi)
            c_up, c_up_err, c_lo = self.corners(child_lo, child_hi, eps)
            rest = np.ones(nblocks, dtype=bool)
            rest[chosen] = False
            new_lo = np.concatenate((lo[rest], child_lo))
            order2 = np.argsort(new_lo, kind="stable")
            self._blocks = (new_lo[order2], np.concatenate((hi[rest], child_hi))[order2],
                            np.concatenate((mass[rest], c_mass))[order2], np.concatenate((mass_err[rest], c_err))[order2])
            self._h_up = np.concatenate((h_up[rest], c_up))[order2]
            self._h_up_err = np.concatenate((h_up_err[rest], c_up_err))[order2]
            self._h_lo = np.concatenate((h_lo[rest], c_lo))[order2]
        raise CertificationError(f"block refinement did not settle at eps = {eps!r}")

    def _partition_corners(self, eps: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`corners` of the current partition; for ``p0 = 0`` its corner totals are kept
        while the partition stands (the blocks tuple is replaced, never changed, on refinement)."""
        blocks = self._get_blocks()
        if self.pair.p0 != 0.0:
            if self._lam_state is None or self._lam_state[0] is not blocks:
                points = self._lam_points(blocks[0], blocks[1])
                self._lam_state = (blocks, points, points.states())
            return self._lam_corner_values(self._lam_state[1], self._lam_state[2], eps)
        if self._points is None or self._points[0] is not blocks:
            self._points = (blocks, *_corner_points(blocks[0], blocks[1]))
        return self._corner_values(self._points[1], self._points[2], blocks[0], blocks[1], eps)

    def log_slope(self, eps: float) -> float:
        """An *estimate* of ``d log delta / d eps`` at the ``eps`` of the last :meth:`bounds`
        call, from the same blocks (``nan`` when unavailable): the hockey-stick divergence is
        convex in ``g = e^eps`` with derivative ``-Q(S)``, ``S`` the set where ``P > g Q``, so
        ``d log delta / d eps = -g Q(S) / delta``; ``Q(S)`` of the kernel at ``c`` with cut ``k``
        is ``P[Bin(c, s) >= k] + v B(k-1)``, read from the cut cache at the upper corners.
        Only steers the search; never reported."""
        if self._exact_last == eps and self._exact is not None:
            return self._exact.log_slope(eps)
        if self._eps != eps or not 0.0 < self.s < 1.0 or self.lo.size == 0:
            return math.nan
        if self.pair.p0 != 0.0:
            return self._lam_log_slope(eps)
        u, v, s = self.mirrored_pair()
        gm1 = np.expm1(np.float64(eps))
        coef_b = (u - v) - gm1 * v
        if not coef_b > 0.0:
            return math.nan
        counted = self.hi >= 1.0
        w = self.mass[counted]
        delta = float(np.sum(w * self._h_up[counted]))
        if not delta > 0.0:
            return math.nan
        points, state = self._points, self._corner_state
        if (points is not None and points[0] is self._blocks and state is not None and state.ts is points[1]
                and state.eps == eps):
            # the upper corners' cut terms, as the last bounds() computed them
            q = state.q_mass(v)[points[2][: self.lo.size]][counted]
        else:
            c = np.maximum(self.lo[counted], 1.0) - 1.0
            if c.size > 1 and not np.all(np.diff(c) > 0.0):
                return math.nan
            k = _cut(c, v, u - v, coef_b, gm1, s)
            b, tail, _, _ = self._cuts.setdefault(s, _CutCache()).values(k, c, s, self.rel)
            q = tail + v * b
        return -float(1.0 + gm1) * float(np.sum(w * q)) / delta

    def _lam_log_slope(self, eps: float) -> float:
        """:meth:`log_slope` for ``p0 > 0``: ``Q(S)`` of the kernel at each block's upper corner
        (its own ``v_t``), from the partition's kernel points (rebuilt through the cut cache when
        refinement replaced the partition since they were computed)."""
        blocks = self._get_blocks()
        st = self._lam_state
        if st is None or st[0] is not blocks or st[2][0].eps != eps:
            self._partition_corners(eps)
            st = self._lam_state
            assert st is not None
        points, state = st[1], st[2][0]
        counted = points.inv_up >= 0
        w = self.mass[counted]
        delta = float(np.sum(w * self._h_up[counted]))
        if not delta > 0.0:
            return math.nan
        q = state.q_mass(points.v_up)[points.inv_up[counted]]
        return -float(np.exp(eps)) * float(np.sum(w * q)) / delta

    def surrogate(self, eps: np.ndarray) -> np.ndarray:
        """A cheap estimate of delta(eps) on an array of eps: the kernel at the mean total
        (used only to start the search; never reported). From a mean of
        :data:`SURROGATE_NORMAL` clones on (``p0 = 0``), the kernel's two binomial terms are
        taken from the normal approximation (Boost is slow near the median of a large
        binomial, which small eps reach)."""
        t0 = float(round(self.N * self.p)) + 1.0
        c = t0 - 1.0
        if self.pair.p0 != 0.0 or c < SURROGATE_NORMAL or not 0.0 < self.s < 1.0 or self.pa1 == self.pb1:
            t = np.full(np.shape(eps), t0)
            return self.h(t, self.lam(t), eps)[0]
        return self._normal_kernel(np.array([c]), eps)[0]

    def _row_pairs(self, rows: int, uv: "tuple[np.ndarray, np.ndarray, float] | None"
                   ) -> tuple[np.ndarray, np.ndarray, float]:
        """The kernel pair of each row as ``(rows, 1)`` columns ``(u, v)`` with ``u >= v`` and the
        split: the pair's own (``lam = 1``, mirrored when ``pa < pb``) or the given ``uv``."""
        if uv is None:
            u, v, s = self.mirrored_pair()
            return np.full((rows, 1), u), np.full((rows, 1), v), s
        return np.asarray(uv[0], dtype=float).reshape(-1, 1), np.asarray(uv[1], dtype=float).reshape(-1, 1), uv[2]

    def _normal_kernel(self, c: np.ndarray, eps: np.ndarray,
                       uv: "tuple[np.ndarray, np.ndarray, float] | None" = None) -> np.ndarray:
        """Estimates of the kernel at clone counts ``c`` (rows) and ``eps`` (columns), with the
        pair's ``lam = 1`` kernel pair or the rows' own ``uv = (u, v, split)`` (``u >= v``), its two
        binomial terms from the normal approximation (continuity-corrected tail, density for the
        pmf); estimates only."""
        u, v, s = self._row_pairs(c.size, uv)
        gm1 = np.expm1(np.asarray(eps, dtype=float)).reshape(1, -1)
        coef_b = (u - v) - gm1 * v
        out = np.zeros(coef_b.shape)
        live = coef_b > 0.0
        if not np.any(live):
            return out
        shape = coef_b.shape
        cc = np.broadcast_to(c.astype(float)[:, None], shape)[live]
        v_l, du_l = np.broadcast_to(v, shape)[live], np.broadcast_to(u - v, shape)[live]
        b_l, g_l = coef_b[live], np.broadcast_to(gm1, shape)[live]
        k = _cut(cc, v_l, du_l, b_l, g_l, s)
        m, sd = cc * s, np.sqrt(cc * s * (1.0 - s))
        flat = sd <= 0.0  # no clones, or s in {0, 1}: X = m exactly
        sd = np.where(flat, 1.0, sd)
        z_tail = np.where(flat, 0.0, (m - (k - 0.5)) / sd)
        z_pmf = np.where(flat, 0.0, (k - 1.0 - m) / sd)
        tail = np.where(flat, (m >= k).astype(float), ndtr(z_tail))  # P[X >= k], continuity-corrected
        with np.errstate(over="ignore", under="ignore"):  # z ~ 1e200 (sd ~ 0): the density is 0
            dens = np.exp(-0.5 * z_pmf**2) / (sd * math.sqrt(2.0 * math.pi))
        pmf = np.where(flat, (np.abs(k - 1.0 - m) < 0.5).astype(float), dens)  # P[X = k - 1]
        out[live] = np.maximum(b_l * pmf - g_l * tail, 0.0)
        return out

    def mixture_surrogate(self, eps: np.ndarray) -> np.ndarray:
        """A better cheap estimate of delta(eps) than :meth:`surrogate` at small clone means:
        the kernel averaged over three clone counts, the three-point Gauss-Hermite rule for
        ``C ~ Bin(N, p)`` (``mean + (-sqrt 3, 0, sqrt 3) sd`` with weights ``1/6, 2/3, 1/6``),
        instead of the kernel at the mean (Jensen: the mixture's delta is larger, measured 1e-3 ..
        1e-1 lower roots at n = 1e3 .. 1e5 from the mean alone, 1e-5 .. 1e-4 from the three
        points). For ``p0 > 0`` the rule is over the totals ``T = C + Bern(1 - p0)`` (variance
        ``N p (1 - p) + p0 (1 - p0)``) with each node's own ``lam_t``. Normal-approximation terms
        from a node of :data:`MIXTURE_NORMAL` clones on. Steers the search only; never reported."""
        var = self.N * self.p * (1.0 - self.p)
        p0 = self.pair.p0
        if not 0.0 < self.s < 1.0 or self.pa1 == self.pb1 or not (var > 0.0 or p0 > 0.0):
            return self.surrogate(eps)
        rule = np.array([-math.sqrt(3.0), 0.0, math.sqrt(3.0)])
        weights = np.array([1.0, 4.0, 1.0]) / 6.0
        eps = np.asarray(eps, dtype=float)
        if p0 == 0.0:
            sd, mu = math.sqrt(var), self.N * self.p
            nodes = np.clip(np.round(mu + sd * rule), 0.0, float(self.N))
            uv = None
        else:
            sd, mu = math.sqrt(var + p0 * (1.0 - p0)), self.N * self.p + (1.0 - p0)
            totals = np.clip(np.round(mu + sd * rule), 1.0, float(self.N) + 1.0)
            nodes, uv = totals - 1.0, self._lam_uv(totals)
        if nodes[0] >= MIXTURE_NORMAL:
            h = self._normal_kernel(nodes, eps.reshape(-1), uv)
        else:
            h = self._nominal_kernel(nodes, eps.reshape(-1), uv)
        return (weights[0] * h[0] + weights[1] * h[1] + weights[2] * h[2]).reshape(eps.shape)  # (no BLAS call)

    def _nominal_kernel(self, c: np.ndarray, eps: np.ndarray,
                        uv: "tuple[np.ndarray, np.ndarray, float] | None" = None) -> np.ndarray:
        """The kernel at clone counts ``c`` (rows) and ``eps`` (columns), with the pair's ``lam =
        1`` kernel pair or the rows' own ``uv``, from Boost's two terms at the floating-point cut,
        ``(u - g v) B(k-1) - (g-1) P[X >= k]``, without the cut's correction or error terms: an
        estimate (at most one term of the certified kernel away), cheap on many points."""
        u, v, s = self._row_pairs(c.size, uv)
        gm1 = np.expm1(eps)[None, :]
        coef_b = (u - v) - gm1 * v
        live = coef_b > 0.0
        shape = live.shape
        cc = np.broadcast_to(c.astype(float)[:, None], shape)[live]
        g_l = np.broadcast_to(gm1, shape)[live]
        b_l = coef_b[live]
        k = _cut(cc, np.broadcast_to(v, shape)[live], np.broadcast_to(u - v, shape)[live], b_l, g_l, s)
        out = np.zeros(shape)
        out[live] = np.maximum(b_l * bn.pmf(k - 1.0, cc, s) - g_l * bn.sf(k - 1.0, cc, s), 0.0)
        return out

    def closed_lower(self, eps: np.ndarray) -> np.ndarray:
        """A certified *lower* bound on ``delta(eps)`` of this direction in closed form, for an
        array of ``eps >= 0`` (zeros when unavailable: ``p0 > 0``). With ``u > v`` (else mirrored,
        ``a -> c + 1 - a``) the kernel at ``c`` clones is at least its single outcome ``a = c + 1``
        (the first user and every clone of the first kind): ``h(c) >= (u - g v)_+ s^c``, so
        ``delta >= (u - g v)_+ E[s^C] = (u - g v)_+ (1 - p (1 - s))^N`` (``C ~ Bin(N, p)``; module
        docstring, ``lam = 1``). Near ``eps0`` at moderate clone means this one outcome carries
        almost all of ``delta``, so it decides cheaply whether ``eps(delta)`` is within ``rtol`` of
        ``eps0``. Rounding: ``u``, ``v`` and ``s`` are within ``4.4e-16`` (absolute) of the
        exact pair's (the division by ``pa + pb``, the mirror), so ``u - g v`` is charged
        ``2e-15 (2 + g)`` absolute (this matters near eps0, where ``u ~ g v``: the oracle test
        found a 4e-11 relative excess without it); the power ``(1 - q)^N``, ``q = p (1 - s)``, is
        charged ``N 4.4e-16 (3 + 2 q / (1 - q))`` relative for its base and ``4.5e-16 (|log| + 4)``
        for log1p / exp; both are taken off."""
        eps = np.asarray(eps, dtype=float)
        if self.pair.p0 != 0.0 or self.pa1 == self.pb1:
            return np.zeros(eps.shape)
        u, v, s = self.mirrored_pair()
        gm1 = np.expm1(eps)
        coef = (u - v) - gm1 * v
        coef = np.maximum(coef - 2e-15 * (3.0 + gm1), 0.0)
        q = self.p * (1.0 - s)
        if not q < 1.0:
            return np.zeros(eps.shape)
        log_w = self.N * math.log1p(-q)
        if log_w < -745.0:
            return np.zeros(eps.shape)
        rel = self.N * 4.4e-16 * (3.0 + 2.0 * q / (1.0 - q)) + 4.5e-16 * (abs(log_w) + 4.0)
        return coef * (math.exp(log_w) * max(1.0 - rel, 0.0))


class HockeyStick:
    """Certified ``delta(eps)`` of a clone pair: the max over both directions. A
    :class:`~.profile.PrivacyProfile`.

    Keeps refined block partitions between calls, so that a search over ``eps``
    reuses the work done at nearby values.
    """

    def __init__(self, pair: ClonePair) -> None:
        self.pair = pair
        self.directions = [Direction(pair)] if pair.symmetric else [Direction(pair), Direction(pair.mirrored())]
        self._last: tuple[float, int] | None = None  # eps of the last bounds() and its larger direction

    def direction(self, reverse: bool = False) -> Direction:
        """The :class:`Direction` ``P || Q`` (or ``Q || P`` when ``reverse``; the same object
        for symmetric pairs, whose directions are equal)."""
        return self.directions[1 if reverse and len(self.directions) > 1 else 0]

    @property
    def max_log_ratio(self) -> float:
        """``delta(eps) = 0`` for ``eps`` at or beyond this (see :attr:`ClonePair.max_log_ratio`)."""
        return self.pair.max_log_ratio

    def surrogate(self, eps: np.ndarray) -> np.ndarray:
        """A cheap estimate of ``delta`` on an array of ``eps`` (the kernel at the mean
        clone count; used only to start a search, never reported)."""
        return np.max([d.surrogate(eps) for d in self.directions], axis=0)

    def mixture_surrogate(self, eps: np.ndarray) -> np.ndarray:
        """The search's start estimate (:meth:`Direction.mixture_surrogate`, max over the
        directions); :meth:`surrogate` stays the kernel at the mean for other callers."""
        return np.max([d.mixture_surrogate(eps) for d in self.directions], axis=0)

    def closed_lower(self, eps: np.ndarray) -> np.ndarray:
        """Certified lower bounds on ``delta`` on an array of ``eps`` in closed form (the max
        over directions of :meth:`Direction.closed_lower`; zeros where it has nothing): lets the
        search decide without an evaluation that ``eps(delta)`` is within ``rtol`` of eps0."""
        return np.max([d.closed_lower(eps) for d in self.directions], axis=0)

    @property
    def surrogate_rtol(self) -> float | None:
        """An *estimate* of the relative distance of the surrogate's root from ``eps(delta)``
        when it is known to be small: ``1e-3`` when every direction takes the normal
        approximation at a mean of at least :data:`SURROGATE_NORMAL` clones (block-monotone pairs;
        measured 1e-6 .. 2e-4 at n = 1e6 .. 1e9 for p0 = 0, and for the k-RR lower bound's p0 > 0
        pair (k = 3) 5e-7 .. 5.5e-4 at n = 1e5 .. 1e9, eps0 0.5 .. 8, means from 2000 on), else
        ``None``. Lets the search skip its coarse first look; only steers the search, never a bound."""
        for d in self.directions:
            if not d.pair.block_monotone or d.N * d.p < SURROGATE_NORMAL or d.exact_window_applies:
                return None
        return 1e-3

    @property
    def look_rtol(self) -> float:
        """The relative width at which a first look at a new ``eps`` is cheap (the search's
        coarse look): :data:`EXACT_RTOL` when every direction sums an exact window (a fine
        answer costs no more than a coarse one), else ``1e-2``."""
        if all(d.exact_window_applies for d in self.directions):
            return EXACT_RTOL
        return 1e-2

    def log_slope(self, eps: float) -> float:
        """Estimate of ``d log delta / d eps`` at the ``eps`` of the last :meth:`bounds` call
        (the direction with the larger upper bound; ``nan`` when unavailable). Only steers
        the search; never reported."""
        last = self._last
        if last is None or last[0] != eps:
            return math.nan
        return self.directions[last[1]].log_slope(eps)

    def bounds(self, eps: float, rtol: float = 1e-10) -> DeltaBounds:
        """Certified ``lower <= delta(eps) <= upper`` with ``upper - lower <= rtol * lower``
        when achievable in floating point (``converged`` says whether it was)."""
        if not (math.isfinite(eps) and eps >= 0.0):
            raise InvalidParameter(f"eps must be finite and >= 0, got {eps!r}")
        if eps >= self.pair.max_log_ratio:
            return DeltaBounds(eps, 0.0, 0.0, 0, True)
        results = [d.bounds(eps, rtol) for d in self.directions]
        self._last = (eps, int(np.argmax([r.upper for r in results])))
        return DeltaBounds(
            eps,
            max(r.lower for r in results),
            max(max(r.upper for r in results), UNDERFLOW_FLOOR),  # eps < max_log_ratio: delta > 0
            sum(r.blocks for r in results),
            all(r.converged for r in results),
        )


def epsilon_bracket(
    pair: ClonePair, delta: float, rtol: float = 1e-7, extra: Callable[[float], float] | None = None
) -> EpsilonBracket:
    """Certified ``eps(delta)`` of a clone pair: :func:`.search.epsilon_for_delta` on its
    :class:`HockeyStick` profile."""
    return epsilon_for_delta(HockeyStick(pair), delta, rtol, extra)

"""Certified Rényi divergences of the clone pair family, for real orders ``alpha > 1``.

Spec: ``shared/spec/amplification.md`` §2 (Rényi of order ``alpha``, max of both
directions) and §5. Sources: Feldman, McMillan, Talwar, FOCS 2021 (arXiv 2012.12803),
Theorem 3.2 and Lemma F.2 (the clone reduction and the monotonicity in the number of
clones); Mironov, CSF 2017 (Rényi DP, Definition 3 and Proposition 1).

What is computed
----------------
``S_alpha(P||Q) = sum P^alpha Q^(1-alpha)`` and ``D_alpha = log(S_alpha) / (alpha - 1)``.
We bound the *excess* ``S_alpha - 1 >= 0`` (for ``n = 10^9`` and ``alpha`` near 1 it is
about ``1e-10``, so computing ``S_alpha`` and subtracting 1 would lose every digit), in
log space (for ``alpha = 1024`` and small ``n`` it overflows a double).

Decomposition (*derived*, building on :mod:`.clones`): ``S_alpha - 1 = sum_t Pr[T=t] *
(K(t-1, u_t, v_t) - 1)`` where ``K(c, u, v) = sum_a P_c(a)^alpha Q_c(a)^(1-alpha)`` for the
kernel pair ``P_c(a) = u B(a-1) + (1-u) B(a)``, ``Q_c(a) = v B(a-1) + (1-v) B(a)``,
``B = Bin(c, s)`` (see the :mod:`.clones` module docstring; ``Pr[T=t]`` is the same under
``P`` and ``Q``). Blocks of totals are bounded with the monotone ends: ``K`` is
non-increasing in ``c`` (data processing, FMT21 Lemma F.2) and, for symmetric pairs,
non-decreasing in ``lam`` (joint convexity of ``(p, q) -> p^alpha q^(1-alpha)``).

The kernel as an expectation (*derived*). With ``M = Bin(c+1, s)`` and ``x = a/(c+1)``,
``B(a-1) = M(a) x / s`` and ``B(a) = M(a) (1-x)/(1-s)`` (given that ``c+1`` Bernoulli(s)
variables sum to ``a``, a given one is 1 with probability ``a/(c+1)``). Hence

    P_c(a) = M(a) p(x),  Q_c(a) = M(a) q(x),  p(x) = 1 + bp (x-s),  q(x) = 1 + bq (x-s),

with ``bp = (u-s)/(s(1-s))``, ``bq = (v-s)/(s(1-s))``, and ``K - 1 = E_M[g(x)]`` with

    g(x) = p(x)^alpha q(x)^(1-alpha) - 1 - f'(s) (x - s),   f'(s) = alpha bp + (1-alpha) bq,

because ``E_M[x] = s`` and ``p(s) = q(s) = 1``. ``g`` is convex (``(p, q) -> p^alpha
q^(1-alpha)`` is the perspective of ``t^alpha``, jointly convex; composed with an affine
map), ``g >= 0`` and ``g(s) = 0``. Over a group of consecutive ``a`` in ``[a1, a2]``:

* upper bound (chord): ``g <= g(x1) + (g(x2)-g(x1)) (x-x1)/(x2-x1)`` on ``[x1, x2]``, and
  ``sum_a M(a) x = s Pr[Bin(c, s) in [a1-1, a2-1]]`` exactly, so the chord integrates to
  binomial interval masses;
* lower bound (Jensen): ``sum M(a) g(x) >= M_group g(mean of x in the group)``.

Kernels with at most :data:`_EXACT_WINDOW` relevant values of ``a`` (clone counts up to
about ``10^5``) are summed term by term over a window of ``a``, all orders vectorised over
shared binomial masses (:func:`_exact_excess`; up to three groups of consecutive orders, each
over the union of its orders' windows, share the terms that do not depend on the order); the
tails beyond the window are bounded by geometric series whose ratio is certified from the monotone binomial ratio and
the monotone slopes of ``log f`` and of ``g''`` (see :func:`_exact_excess`). Larger kernels
use groups of ``a`` ("cells"), refined per kernel until the bracket is tight (one partition for all
orders; cells and block masses are computed once and kept between refinement rounds,
see :class:`RenyiDirection`); single-``a`` groups are exact. Groups whose
binomial mass underflows are bounded with the Chernoff bound
``Pr[Bin(m, s) >= k] <= exp(-m KL(k/m || s))`` times the largest value of ``g`` on the group
(``g`` is convex, so its maximum is at an end); so are blocks of totals whose mass underflows,
which are also bracketed from the log-concave pmf of the clone count (the term nearest the
mode below, a finite geometric series of the pmf ratio above). Every likelihood ratio lies in
``[1/L, L]`` (``L = max(pa/pb, pb/pa)``), so ``D_alpha <= log L`` caps the result.

Pairs without a silent first user (``p0 = 0``: every entry has ``lam = 1``) evaluate an
entry only at the orders its blocks need: when a block is split, its new corner entries are
evaluated at the live orders except those where the block is among the smallest shares of the
order's upper bound (together at most 2% of its budget). At the other orders an entry takes the
monotone envelope in ``c`` (``K`` is non-increasing in ``c``: the smallest upper bound of the
entries at ``c' <= c``, the largest lower bound of those at ``c'' >= c``), so a split block's
parts are bounded at least as tightly as the block was (see ``RenyiDirection._plan_orders``), and
above, where tighter, the chord in the order through its own evaluated orders (``log K`` is convex in
``alpha`` and at most 0 at ``alpha = 1``: :func:`_order_chord`).

For the same pairs, the clone counts around each order's saddle point form *slabs*
(:class:`_Slab`, *derived*): since ``g`` does not depend on ``c`` when ``lam = 1``, the kernels of
all counts of a slab are one integral of ``g`` against a single measure of ``x = a/(c+1)``, bounded
cell by cell from the cells' moments (Taylor's theorem with interval bounds on ``g''``). A slab has no
error of the first order in ``c``, where blocks of totals with monotone corners need one kernel per
count at large orders and moderate ``n``. Per order, the cells far from its sum are bounded together
from coarser cells (their masses times ``g`` at their ends, ``g`` convex). Blocks inside an order's slab are left out at that order;
the others are bounded as above (see ``RenyiDirection.bounds``). Which orders get a slab is work only: an order whose
slab would stay wider than its budget from the weights it clips (:func:`_slab_clip_floor`) is planned without one.

Floating-point errors (Boost's binomial budget from :mod:`.binomial`, rounding of ``g``)
are added to upper bounds and subtracted from lower bounds. The engine takes the float clone probability
``p = fl(r0 + r1)`` and split ``s = fl(r0 / p)`` as exact (a shift of up to ``N u`` in the log of the clone count's
masses, ``c u`` in the kernels'): :func:`renyi_bounds` bounds a pair whose rates ``p s``, ``p (1 - s)`` are at most
the exact ones for its upper ends and one with rates at least them for its lower ends (the divergences are
non-increasing in each rate, :func:`_rate_rounded_pair`); for every ``r0 = r1`` pair the rates are exact and the pair
is its own.

Refinement stops when the relative width of the *divergence* ``D_alpha`` (the reported
number) is at most ``rtol``; for ``(alpha - 1) D_alpha`` large this allows a much wider
relative bracket on ``S_alpha - 1`` than ``rtol`` (the printed bounds are as tight as before;
certification is unchanged: every bound is certified whatever the width).
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np
from scipy.special import gammaln, xlog1py, xlogy

from ..errors import InvalidParameter
from . import binomial as bn
from .clones import ClonePair, TotalsGeometry

#: Default order grid: dense enough for RDP -> (eps, delta) conversion (40 orders).
DEFAULT_ORDERS: tuple[float, ...] = (
    1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0,
    12.0, 14.0, 16.0, 20.0, 24.0, 28.0, 32.0, 40.0, 48.0, 56.0, 64.0, 80.0, 96.0, 128.0,
    160.0, 192.0, 256.0, 320.0, 384.0, 512.0, 640.0, 768.0, 896.0, 1024.0,
)

#: Binomial masses below this are bounded in log space (Chernoff) instead.
_TINY = 1e-250
#: Above this log-value of ``p^alpha q^(1-alpha)`` work in log space.
_BIG_LOG = 600.0
#: Kernels with at most this many values of ``a`` are summed term by term.
_SMALL_C = 126
_U = 2.3e-16  # a little more than the unit roundoff
#: relative error of the kernel's computed weights ``pa / (pa + pb)`` and ``r0 / (r0 + r1)`` (a sum and
#: a division) against the pair's exact ones, with margin (:func:`_log_first_user`)
_PAIR_REL = 4 * _U
_DEBUG = False
#: Orders whose rtol is out of reach of floating point (:meth:`RenyiDirection._log_floor`) stop refining once
#: their gap is within this many estimated floors.
_FLOOR_STOP = 20.0
#: Work limits: beyond them refinement stops and the (certified) upper bound is returned
#: with ``converged = False``.
_MAX_CELLS = 400_000
_MAX_BLOCKS = 4000
#: Blocks of totals are split into 2 .. ``_MAX_SPLIT`` parts per refinement round, planned for a
#: total gap of ``_SPLIT_SLACK`` times the round's target (see ``RenyiDirection._refine_outer``).
_MAX_SPLIT = 4
_SPLIT_SLACK = 2.0
#: ... and blocks scored above ``_HUGE_SCORE`` budgets into up to ``_HUGE_SPLIT`` parts (at large orders the kernel changes
#: by factors of e^100 and more across the lowest blocks, scores 1e100 .. 1e300: four parts a round took a round each
#: for a few blocks; measured, CPU: eps0 = 6, n = 2.15e6 70 -> 58 ms, 3/68129 71 -> 63, 4/316228 68 -> 62; 3/1e5 69 ->
#: 72, 2/14678 58 -> 60; 8 beat 16 and 64)
_HUGE_SCORE = 1e8
_HUGE_SPLIT = 8
#: Per order, the blocks with the smallest shares of its upper bound, together at most this
#: fraction of its budget, get no new entries evaluated at it (see ``RenyiDirection._plan_orders``).
_NEGLIGIBLE = 0.02
#: Wide tail cells are cut at these distances (standard deviations of ``a``) from their end facing
#: the mean, up to 8 only unless the cell's gap exceeds ``_FAR_CELL_SCORE`` budgets (the large
#: orders' tilted sums lie tens of sd out: one round reaches them; more cuts everywhere multiply
#: the cells of every later entry, whose cells copy their neighbour's).
_CELL_STEPS = np.array([2.0, 4.0, 8.0, 16.0, 32.0, 64.0])
_FAR_CELL_SCORE = 1e8
#: Cells evaluated per batch (keeps the per-order temporaries small: 256 cells x 40 orders stay below 128 kB per
#: array; measured at n = 1e7, 1e9: 6 % less CPU than 1024).
_CELL_BATCH = 256


def check_orders(orders: object) -> np.ndarray:
    """Validate an order list: finite reals ``1 < alpha <= 10^6``, returned sorted and unique."""
    try:
        arr: np.ndarray = np.asarray([float(a) for a in orders], dtype=np.float64)  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        raise InvalidParameter(f"orders must be a list of numbers > 1, got {orders!r}") from None
    if arr.size == 0:
        raise InvalidParameter("orders must not be empty")
    bad = ~np.isfinite(arr) | (arr <= 1.0) | (arr > 1e6)
    if np.any(bad):
        raise InvalidParameter(f"every Renyi order must satisfy 1 < alpha <= 1e6, got {arr[bad][0]!r}")
    return np.unique(arr)


@dataclass(frozen=True)
class RenyiBounds:
    """Certified bracket on ``D_alpha`` of a pair, per order.

    ``upper[i]`` is a certified upper bound on the divergence at ``orders[i]`` (max over
    the directions computed); ``lower[i]`` a lower bound (floating-point errors budgeted).
    """

    orders: tuple[float, ...]
    upper: tuple[float, ...]
    lower: tuple[float, ...]
    converged: bool
    blocks: int
    groups: int
    #: some order stopped short of rtol at the floating-point floor of its kernels (the bracket is
    #: still certified; see ``RenyiDirection._log_floor``)
    floor_limited: bool = False


# ---------------------------------------------------------------------------------------
# small helpers
# ---------------------------------------------------------------------------------------


def _logsumexp(x: np.ndarray, axis: int) -> np.ndarray:
    """``log sum exp`` along ``axis``; all ``-inf`` gives ``-inf``; no warnings."""
    m = np.max(x, axis=axis, keepdims=True)
    m_safe = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        s = np.sum(np.exp(x - m_safe), axis=axis, keepdims=True)
        out = np.log(s) + m_safe
    out = np.where(np.isneginf(m), -np.inf, out)
    return np.squeeze(out, axis=axis)


def _safe_log(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > 0.0, np.log(np.maximum(x, 1e-320)), -np.inf)


def _log_chernoff(lo: np.ndarray, hi: np.ndarray, m: np.ndarray, p: float) -> np.ndarray:
    """Upper bound on ``log Pr[lo <= Bin(m, p) <= hi]`` by the Chernoff-Hoeffding bound
    ``Pr[X >= k] <= exp(-m KL(k/m || p))`` for ``k >= m p`` (and its mirror), 0 if the
    interval contains the mean. Rounding: ``KL`` is formed from ``x = k/m`` (one rounding) by
    ``xlogy``/``xlog1py`` terms whose magnitudes are at most ``1/e + |log p|`` and ``1/e + |log(1-p)|``
    (``x |log x| <= 1/e``); each carries a few ulps of its magnitude, and ``x``'s rounding moves
    ``KL`` by at most ``u |log(x(1-p)/(p(1-x)))|`` of the same size, so the computed ``m KL`` is within
    ``8 u m (1 + |log p| + |log(1-p)|)`` of the exact one (absolute; where ``KL`` nearly cancels,
    e.g. ``m = 1e12``, ``x ~ p``, this is ~1e-4 nats and a relative margin alone would not cover it).
    That absolute margin is added, and a relative ``1e-12`` for the product by ``m`` and the ends'
    exact branches."""
    lo = np.asarray(lo, dtype=float)
    hi = np.asarray(hi, dtype=float)
    m = np.broadcast_to(np.asarray(m, dtype=float), lo.shape)
    out = np.zeros(lo.shape)
    if not 0.0 < p < 1.0:  # degenerate: masses are exact 0/1 and never underflow
        return np.where((lo <= m * p) & (m * p <= hi), 0.0, -np.inf)
    mean = m * p
    k = np.where(lo > mean, lo, np.where(hi < mean, hi, mean))
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.clip(k / np.maximum(m, 1.0), 0.0, 1.0)
        # (the last term's log1p(-p) is a constant: once, then a product per element, the same value as
        # xlog1py(1 - x, -p), which is (1 - x) times it where 1 - x != 0)
        kl = xlogy(x, x / p) + xlog1py(1.0 - x, -x) - (1.0 - x) * float(xlog1py(1.0, -p))
        kl = np.where((x > 0) & (x < 1), kl, np.where(x <= 0, -np.log1p(-p), -np.log(p)))
    bound = -m * np.maximum(kl, 0.0)
    margin = 8 * _U * m * (1.0 + abs(math.log(p)) + abs(math.log1p(-p)))
    out = np.where((lo > mean) | (hi < mean), bound * (1.0 - 1e-12) + 1e-12 + margin, 0.0)
    out = np.where((hi < 0) | (lo > m) | (hi < lo), -np.inf, out)
    return np.minimum(out, 0.0)


def _log_pmf_bracket(a: np.ndarray, m: np.ndarray, p: float) -> tuple[np.ndarray, np.ndarray]:
    """``log Pr[Bin(m, p) = a]`` from ``gammaln`` with a margin for its rounding (a few ulp
    of each term), as ``(lower, upper)``; used only where Boost's pmf underflows."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t1, t2, t3 = gammaln(m + 1.0), gammaln(a + 1.0), gammaln(m - a + 1.0)
        t4, t5 = xlogy(a, p), xlog1py(m - a, -p)
        val = t1 - t2 - t3 + t4 + t5
        margin = 4e-15 * (np.abs(t1) + np.abs(t2) + np.abs(t3) + np.abs(t4) + np.abs(t5)) + 1e-13
        inside = (a >= 0) & (a <= m)
        return np.where(inside, val - margin, -np.inf), np.where(inside, val + margin, -np.inf)


#: Below ``log`` of this, a binomial pmf in the term-by-term sums is taken from :func:`_log_pmf_bracket` (Boost's value
#: nears the subnormal range, where its relative error is not bounded by the budget; measured only above it).
_PMF_LOG_MIN = -650.0


def _log_pmf_anchor(a: np.ndarray, m: np.ndarray, p: float, rel: float) -> tuple[np.ndarray, np.ndarray]:
    """``(value, error)`` with ``|log Pr[Bin(m, p) = a] - value| <= error``: Boost's pmf (charged ``1.01 rel``) where
    its log is at least :data:`_PMF_LOG_MIN`, else the midpoint and half-width of :func:`_log_pmf_bracket` (``-inf``
    outside ``0 <= a <= m``)."""
    with np.errstate(divide="ignore"):
        boost = np.log(bn.pmf(a, m, p))
    return _below_floor_from_bracket(boost, np.full(boost.shape, 1.01 * rel), a, m, p)


def _below_floor_from_bracket(value: np.ndarray, err: np.ndarray, a: np.ndarray, m: np.ndarray | float, p: float
                              ) -> tuple[np.ndarray, np.ndarray]:
    """``(value, err)`` of a binomial log-pmf at counts ``a`` (size ``m``) with the entries below :data:`_PMF_LOG_MIN` (or
    nan) replaced, in place, by :func:`_log_pmf_bracket`'s midpoint and half-width (``-inf`` outside ``0 <= a <= m``)."""
    low = ~(value >= _PMF_LOG_MIN)
    if np.any(low):
        b_lo, b_up = _log_pmf_bracket(a[low], np.broadcast_to(m, a.shape)[low], p)
        with np.errstate(invalid="ignore"):
            value[low] = 0.5 * (b_lo + b_up)
            err[low] = np.nan_to_num(0.5 * (b_up - b_lo), nan=0.0) * (1.0 + 1e-12)
    return value, err


def _unique_call(fn, k: np.ndarray, m: np.ndarray, p: float, cache: dict | None = None) -> np.ndarray:
    """``fn(k, m, p)`` (a Boost binomial tail, elementwise) evaluated once per distinct ``(k, m)``: the cells
    of one kernel share their edges (a cell's upper edge is the next one's lower edge), and Boost's tails
    cost ~3.5 us each at ``m ~ 5e8`` (measured: half of the curve's CPU at n = 1e9 before). With ``cache``
    (a dict kept by the caller for one ``p``: per ``fn``, the sorted keys ``k + i m`` and their values), the
    values of earlier calls are reused too (a split cell keeps its two ends). The same values: each element
    is Boost's value at its own arguments."""
    if k.size < 8 and cache is None:
        return fn(k, m, p)
    order = np.lexsort((k, m))
    ks, ms = k[order], m[order]
    new = np.empty(k.size, dtype=bool)
    new[0] = True
    np.not_equal(ks[1:], ks[:-1], out=new[1:])
    new[1:] |= ms[1:] != ms[:-1]
    if np.count_nonzero(new) == k.size and cache is None:
        return fn(k, m, p)
    first = np.flatnonzero(new)
    uk, um = ks[first], ms[first]
    if cache is None:
        vals = np.asarray(fn(uk, um, p), dtype=float)
    else:
        key = uk + 1j * um  # (integers below 2^53: exact)
        ck, cv = cache.get(fn, (np.zeros(0, dtype=complex), np.zeros(0)))
        pos = np.minimum(np.searchsorted(ck, key), max(ck.size - 1, 0))
        hit = (ck[pos] == key) if ck.size else np.zeros(key.size, dtype=bool)
        vals = np.empty(key.size)
        vals[hit] = cv[pos[hit]]
        miss = ~hit
        if np.any(miss):
            vals[miss] = fn(uk[miss], um[miss], p)
            all_k, all_v = np.concatenate((ck, key[miss])), np.concatenate((cv, vals[miss]))
            o = np.argsort(all_k, kind="stable")
            cache[fn] = (all_k[o], all_v[o])
    out = np.empty(k.size)
    out[order] = vals[np.cumsum(new) - 1]
    return out


def _edge_masses(edges: np.ndarray, m: np.ndarray, p: float, cache: dict | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Masses (and error bounds) of ``Bin(m, p)`` on the consecutive integer intervals
    ``[edges[..., k], edges[..., k+1] - 1]`` (last axis), from one ``cdf`` and one ``sf``
    per edge. Each interval uses the tail that is small on its side of the mean (no
    cancellation against 1)."""
    mm = np.broadcast_to(m[..., None], edges.shape)
    mean = (m * p)[..., None]
    lo_e, hi_e = edges[..., :-1], edges[..., 1:]
    below = hi_e - 1.0 <= mean
    above = lo_e > mean
    # Boost is called only for the tail each edge's groups use (the other stays 0 and is
    # never selected below): F at the low edge of groups not above the mean and the high
    # edge of groups below it; S at the high edge of groups not below and the low edge of
    # groups above.
    need_f = np.zeros(edges.shape, dtype=bool)
    need_s = np.zeros(edges.shape, dtype=bool)
    need_f[..., :-1] |= ~above
    need_f[..., 1:] |= below
    need_s[..., 1:] |= ~below
    need_s[..., :-1] |= above
    F = np.zeros(edges.shape)
    S = np.zeros(edges.shape)
    # each tail value's own budget (bn.tail_error_budget): 2 n u only where Boost's series path can
    # be taken (min(k + 1, n - k) < 40, n < 2^32), the pmf's elsewhere; a flat 2 n u on every value
    # (the budget ``rel`` of the population size) made a cell's mass near the mean, a difference of
    # tails near 1/2, uncertain by 2 n u absolute: 1e-2 of a unit cell at n = 3e9, a floor that
    # splitting cells only raised (rdp_curve(3.15, 3e9) refined 200 rounds, 200k cells)
    rf = np.zeros(edges.shape)
    rs = np.zeros(edges.shape)
    if np.any(need_f):
        F[need_f] = _unique_call(bn.cdf, edges[need_f] - 1.0, mm[need_f], p, cache)  # Pr[X <= e - 1]
        rf[need_f] = bn.tail_error_budget(edges[need_f] - 1.0, mm[need_f], p)
    if np.any(need_s):
        S[need_s] = _unique_call(bn.sf, edges[need_s] - 1.0, mm[need_s], p, cache)  # Pr[X >= e]
        rs[need_s] = bn.tail_error_budget(edges[need_s] - 1.0, mm[need_s], p)
    f0, f1, s0, s1 = F[..., :-1], F[..., 1:], S[..., :-1], S[..., 1:]
    ef0, ef1, es0, es1 = rf[..., :-1] * f0, rf[..., 1:] * f1, rs[..., :-1] * s0, rs[..., 1:] * s1
    mass = np.where(below, f1 - f0, np.where(above, s0 - s1, 1.0 - f0 - s1))
    err = np.where(below, ef1 + ef0 + _U * f1, np.where(above, es0 + es1 + _U * s0, ef0 + es1 + 2 * _U))
    empty = hi_e <= lo_e
    return np.where(empty, 0.0, np.maximum(mass, 0.0)), np.where(empty, 0.0, err)


@dataclass
class _G:
    """``g`` (see module docstring) and its error bound at points ``y = x - s``, for all
    orders (last axis). The log-space bounds are computed on demand (:meth:`logs`), only
    where the caller needs them."""

    value: np.ndarray
    err: np.ndarray
    ell: np.ndarray  # log of p^alpha q^(1-alpha)
    dy: np.ndarray  # f'(s) y
    cond: np.ndarray  # the error of ell from z's (see :func:`_g`), beyond the rounding margin of logs()

    def logs(self, idx) -> tuple[np.ndarray, np.ndarray]:
        """Upper and lower bounds on ``log g`` at the positions ``idx``."""
        ell, dy, g, err = self.ell[idx], self.dy[idx], self.value[idx], self.err[idx]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            big = ell > _BIG_LOG
            corr = np.log1p(np.exp(-np.maximum(ell, _BIG_LOG)) * (1.0 + np.abs(dy)))
            margin = 1e-12 * (1.0 + np.abs(ell)) + np.broadcast_to(self.cond, self.ell.shape)[idx]
            log_up = np.where(big, ell + margin + corr, _safe_log(g + err))
            log_lo = np.where(big, ell - margin - corr, _safe_log(g - err))
        return log_up, log_lo

    def log_side(self, upper: bool) -> np.ndarray:
        """:meth:`logs`' upper (``upper``) or lower bounds on ``log g`` everywhere, alone (the same numbers)."""
        ell = self.ell
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            big = ell > _BIG_LOG
            corr = np.log1p(np.exp(-np.maximum(ell, _BIG_LOG)) * (1.0 + np.abs(self.dy)))
            margin = 1e-12 * (1.0 + np.abs(ell)) + np.broadcast_to(self.cond, ell.shape)
            if upper:
                return np.where(big, ell + margin + corr, _safe_log(self.value + self.err))
            return np.where(big, ell - margin - corr, _safe_log(self.value - self.err))


def _b_err(w: np.ndarray | float, s: float) -> np.ndarray:
    """Absolute error bound of the computed ``b = (w - s) / (s (1 - s))`` (``bp`` from ``w = u``, ``bq`` from ``v``)
    against the exact pair's, beyond the rounding of the quotient itself: ``w`` (``pa / (pa + pb)`` and, for ``lam <
    1``, ``lam pa' + (1 - lam) s``, two more roundings) is within ``(_PAIR_REL + 3u) w`` of the exact one, and ``s``
    is exact for the pair the engine bounds (``renyi_bounds`` takes pairs whose float rates are exact,
    :func:`_rate_rounded_pair`), so ``b`` moves by at most that over ``s (1 - s)`` (charged 1.01 times)."""
    return 1.01 * (_PAIR_REL + 3 * _U) * np.abs(np.asarray(w, dtype=float)) / (s * (1.0 - s))


def _g(y: np.ndarray, bp: np.ndarray, bq: np.ndarray, alpha: np.ndarray, err_y: np.ndarray,
       eb: tuple[np.ndarray | float, np.ndarray | float]) -> _G:
    """``g`` at ``y`` with its error bound. ``eb``: :func:`_b_err` of ``bp`` and ``bq`` (broadcast like them).

    *Derived*. Rounding: ``z = b y`` carries ``5u |z|`` (the quotient ``b`` and the product) and ``|b| err_y`` (``y``'s
    error, charged through ``g'`` below), and ``log1p`` turns ``z``'s error into ``1 / (1 + z)`` times it: ``log p``
    moves by at most ``cr = 1.01 5u |z| / (1 + z)``, ``log f`` by ``alpha cr_p + (alpha - 1) cr_q`` (added to the
    rounding of ``log f``; ``f`` times it bounds ``f``'s error while it is at most 2, ``e^x - 1 <= 4x`` there, the
    factor 4 below; beyond it, ``inf``). The exact pair's ``b`` (within ``eb`` of the computed one): along the segment
    between them ``dg/dbp = alpha y (f/p - 1)``, ``dg/dbq = (1 - alpha) y (f/q - 1)`` (``g = f - 1 - f'(s) y``; the
    linear term's derivative cancels ``f``'s at ``f = p = 1``), and ``p``, ``q`` move by at most ``cw = 1.01 eb |y| / (1
    + z)`` relative, so ``f/p``, ``f/q`` by at most ``Cw = 1.01 (alpha + 1)(cw_p + cw_q)`` in the log: ``|g - g_exact|
    <= alpha eb_p |y| (|f/p - 1| + f/p (e^Cw - 1)) + (alpha - 1) eb_q |y| (|f/q - 1| + f/q (e^Cw - 1))`` (mean value
    theorem; near ``f = 1`` this is second order, e.g. eps0 = 1e-9, where ``f`` times ``eb`` alone was 1e4 times
    ``g``). Both need ``eb |y| + 5u |z| <= (1 + z) / 100``; where ``1 + z`` is smaller (``p`` or ``q`` near 0, e.g.
    ``q(0) = (1 - v)/(1 - s)``, 1.1e-7 at eps0 = 16 with a 1e-9 relative error: times ``alpha - 1`` it put the cells'
    lower ends of binary-rr-lower above the exact kernel, 60 digits) the error is unbounded for ``q`` (exponent ``1 -
    alpha < 0``: ``inf``), and for ``p`` (exponent ``alpha``) ``f`` is at most ``f_top = (p + 101 (eb |y| +
    5u |z|))^alpha q^(1 - alpha)`` (``p = 1 + z``), charged as an absolute error; the pair's ``b`` there: the linear
    term's ``bp`` part, ``alpha eb_p |y|``, and ``bq``'s as above with ``f/q`` anywhere in ``[0, f_top/q]`` (``|f/q -
    1| <= max(1, f_top/q - 1)``; review rev105s: the ``bp`` part had been left to the other charges). ``cond``: the bound on ``log f``'s error from
    both, for :meth:`_G.logs`."""
    y = y[..., None]
    bp, bq, err_y = bp[..., None], bq[..., None], err_y[..., None]
    ebp, ebq = np.asarray(eb[0], dtype=float)[..., None], np.asarray(eb[1], dtype=float)[..., None]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # order-independent parts first (shape (..., 1)), then one pass per term over orders
        zp, zq = bp * y, bq * y
        lp, lq = np.log1p(zp), np.log1p(zq)
        rp, rq = bp / (1.0 + zp), bq / (1.0 + zq)
        alp, alq = np.abs(lp), np.abs(lq)
        ay = np.abs(y)
        wp, wq = ebp * ay, ebq * ay  # z's distance from the exact pair's
        rnp, rnq = 5 * _U * np.abs(zp), 5 * _U * np.abs(zq)  # z's rounding
        okp, okq = wp + rnp <= 0.01 * (1.0 + zp), wq + rnq <= 0.01 * (1.0 + zq)
        ip, iq = 1.01 / np.where(okp, 1.0 + zp, 1.0), 1.01 / np.where(okq, 1.0 + zq, 1.0)
        crp, cwp = np.where(okp, rnp * ip, 0.0), np.where(okp, wp * ip, 0.0)
        crq, cwq = np.where(okq, rnq * iq, np.inf), np.where(okq, wq * iq, np.inf)
        ell = alpha * lp + (1.0 - alpha) * lq
        em = np.expm1(np.minimum(ell, _BIG_LOG))
        d = alpha * bp + (1.0 - alpha) * bq
        dy = d * y
        g = em - dy
        f = em + 1.0
        gprime = np.abs(f * (alpha * rp + (1.0 - alpha) * rq) - d)
        cond_r = alpha * crp + (alpha - 1.0) * crq
        err_ell = (2 * _U) * (alpha * alp + (alpha - 1.0) * alq + np.abs(ell)) + cond_r
        err_ell = np.where(err_ell <= 2.0, err_ell, np.inf)
        err = 4.0 * (f * err_ell + (2 * _U) * (np.abs(em) + np.abs(dy)) + (gprime + _U * np.abs(d)) * err_y)
        big_w = 1.01 * (alpha + 1.0) * (cwp + cwq)
        e_w = np.expm1(np.minimum(big_w, _BIG_LOG))
        f_p, f_q = np.exp(np.minimum(ell - lp, _BIG_LOG)), np.exp(np.minimum(ell - lq, _BIG_LOG))
        d_w = alpha * wp * (np.abs(f_p - 1.0) + f_p * e_w) + (alpha - 1.0) * wq * (np.abs(f_q - 1.0) + f_q * e_w)
        err = err + 1.01 * np.where(okp, d_w, 0.0)
        cond = cond_r + 1.01 * (alpha * cwp + (alpha - 1.0) * cwq)
        if not np.all(okp):  # p near 0: f below (p + 101 x numerator)^alpha q^(1 - alpha), absolute
            top = alpha * np.log(np.maximum(1.0 + zp, 0.0) + 101.0 * (wp + rnp)) + (1.0 - alpha) * lq
            # the pair's b: the linear term's bp part (alpha wp), and bq's with f/q anywhere in [0, f_top/q] (review
            # rev105s: the bp part was not charged; f/q at the exact p is not near the computed one's here)
            f_qt = np.maximum(f_q, np.exp(np.minimum(top - lq, _BIG_LOG)))
            d_w0 = alpha * wp + (alpha - 1.0) * wq * (np.maximum(f_qt - 1.0, 1.0) + f_qt * e_w)
            err = err + np.where(okp, 0.0, 4.0 * np.exp(np.minimum(top, _BIG_LOG)) * (1.0 + 1e-12) + 1.01 * d_w0)
            cond = np.where(okp, cond, np.maximum(cond, top - np.minimum(ell, top) + 1e-12))
        err = np.where(np.isnan(err), np.inf, err)
    return _G(np.maximum(g, 0.0), err, ell, dy, cond)


# ---------------------------------------------------------------------------------------
# The kernel K(c, u, v) - 1 for a batch of (c, u, v), all orders at once.
# ---------------------------------------------------------------------------------------


class _Kernel:
    """``log(K - 1)`` brackets for a batch of kernels at fixed split ``s``, grouped by the
    edges ``edges`` (shape ``(entries, groups + 1)``, first column 0, last ``c + 2``)."""

    def __init__(self, c: np.ndarray, u: np.ndarray, v: np.ndarray, s: float, edges: np.ndarray,
                 cache: dict | None = None):
        self.c, self.s = c, s
        ss = s * (1.0 - s)
        self.bp, self.bq = (u - s) / ss, (v - s) / ss
        self.eb_p, self.eb_q = _b_err(u, s), _b_err(v, s)
        m1 = c + 1.0
        self.a1, self.a2 = edges[:, :-1], edges[:, 1:] - 1.0
        self.empty = self.a2 < self.a1
        self.unit = self.a1 == self.a2
        mc = m1[:, None]
        # First moment inside each group, without cancellation: with Y ~ Bin(c, s),
        # X = Y + Bern(s) and a M(a) = (c+1) s B(a-1), one finds
        #   sum_{a1..a2} (a - a1) M(a) = Pr[Y in [a1, a2]] (s(c+1) - a1) + s (c+1-a1) (B(a1-1) - B(a2)),
        # two terms of the size of the result times |a - mean| / width, each accurate to
        # Boost's relative budget (a difference of cdfs would lose ~ log10(c) digits).
        py, py_err = _edge_masses(edges, c, s, cache)  # (cache: see _unique_call)
        b_e = bn.pmf(edges - 1.0, np.broadcast_to(c[:, None], edges.shape), s)
        # the pmf values' own budget (Boost's pmf never takes the cdf/sf series path: no 2 n u, which in
        # the first-moment term below outweighed the moment itself near the mean at n = 1e9 and kept
        # rtol = 1e-4 curves from converging, cells' brackets ~ 1e-3 wide whatever their width)
        rel = bn.pmf_error_budget(float(np.max(c, initial=0.0)) + 1.0)
        b_lo, b_hi = b_e[:, :-1], b_e[:, 1:]
        # the masses of X ~ Bin(c+1, s) from the same numbers (no more binomial calls): with
        # X = Y + Bern(s), Pr[X in [a1, a2]] = Pr[Y in [a1, a2]] + s (B(a1-1) - B(a2)); each
        # term is at most a small multiple of the result (s B(a1-1) <= it, and B(a2) <=
        # Pr[Y in [a1, a2]] <= it / (1-s)), so their error budgets add up
        self.mass = np.where(self.empty, 0.0, np.maximum(py + s * (b_lo - b_hi), 0.0))
        self.mass_err = np.where(self.empty, 0.0, py_err + rel * s * (b_lo + b_hi) + 4 * _U * (py + s * (b_lo + b_hi)))
        dist = s * mc - self.a1
        t1 = py * dist
        t2 = s * (mc - self.a1) * (b_lo - b_hi)
        self.dd = np.maximum((t1 + t2) / mc, 0.0)
        self.dd_err = (
            np.abs(dist) * py_err + py * _U * s * mc + rel * s * (mc - self.a1) * (b_lo + b_hi)
            + 4 * _U * (np.abs(t1) + np.abs(t2))
        ) / mc
        self.x1, self.x2 = self.a1 / mc, self.a2 / mc
        # y = x - s computed as (a - s(c+1))/(c+1): error ~ ulp of s
        self.y1 = (self.a1 - s * mc) / mc
        self.y2 = (self.a2 - s * mc) / mc
        self.err_y = 4 * _U * (np.abs(self.y1) + np.abs(self.y2) + s)
        self.tiny = self.mass <= _TINY
        self.logm_up = _safe_log(self.mass + self.mass_err)
        self.logm_lo = _safe_log(self.mass - self.mass_err)
        if np.any(self.tiny):  # (Chernoff's bound and the pmf's bracket where the mass underflows: the same elementwise values)
            ti = np.nonzero(self.tiny)
            a1t, mt = self.a1[ti], np.broadcast_to(mc, self.a1.shape)[ti]
            log_ch = _log_chernoff(a1t, self.a2[ti], mt, s)
            pmf_lo, pmf_up = _log_pmf_bracket(a1t, mt, s)
            unit = self.unit[ti]
            self.logm_up[ti] = np.where(unit, np.minimum(log_ch, pmf_up), log_ch)
            self.logm_lo[ti] = np.where(unit, pmf_lo, -np.inf)
        self.logm_up = np.where(self.empty, -np.inf, self.logm_up)
        self.logm_lo = np.where(self.empty, -np.inf, self.logm_lo)

    def evaluate(self, alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-group ``(log upper, log lower)`` of ``sum_{a in group} M(a) g(a/(c+1))``,
        shape ``(entries, groups, orders)``."""
        bp, bq = self.bp[:, None], self.bq[:, None]
        bp, bq = np.broadcast_to(bp, self.y1.shape), np.broadcast_to(bq, self.y1.shape)
        eb = (np.broadcast_to(self.eb_p[:, None], self.y1.shape), np.broadcast_to(self.eb_q[:, None], self.y1.shape))
        g1 = _g(self.y1, bp, bq, alpha, self.err_y, eb)
        g2 = _g(self.y2, bp, bq, alpha, self.err_y, eb)
        mass = self.mass[..., None]
        m_up = mass + self.mass_err[..., None]
        width = (self.x2 - self.x1)[..., None]
        dd, dd_err = self.dd[..., None], self.dd_err[..., None]
        rising = g2.value >= g1.value
        with np.errstate(divide="ignore", invalid="ignore"):
            w2 = np.where(rising, dd + dd_err, dd - dd_err) / np.where(width > 0, width, 1.0)
        w2 = np.clip(np.where(self.unit[..., None], 0.0, w2), 0.0, m_up)
        eg = np.maximum(g1.err, g2.err)
        # (a group whose mass bound is 0 adds 0, also where its g bound is infinite: 0 * inf was nan, replaced later
        # by the crude path but a RuntimeWarning, an error under -W error: eps0 = 33, n = 1e5, review rev94r)
        with np.errstate(invalid="ignore"):
            chord = np.where(m_up > 0.0, m_up * (g1.value + eg), 0.0) + np.where(w2 > 0.0, w2 * (g2.value - g1.value), 0.0)
        chord = chord * (1.0 + 8 * _U)
        # Jensen lower bound at the conditional mean of x in the group.
        with np.errstate(divide="ignore", invalid="ignore"):
            safe_m = np.where(self.mass > 0, self.mass, 1.0)
            xbar = self.x1 + np.where(self.mass > 0, self.dd / safe_m, 0.0)
            xbar_err = (self.dd_err + self.dd * self.mass_err / safe_m) / safe_m + _U * xbar
        xbar = np.where(self.unit, self.x1, np.clip(xbar, self.x1, self.x2))
        ybar = np.where(self.unit, self.y1, xbar - self.s)
        ybar_err = np.where(self.unit, self.err_y, np.minimum(xbar_err, self.x2 - self.x1) + self.err_y)
        gb = _g(ybar, bp, bq, alpha, ybar_err, eb)
        m_lo = np.maximum(mass - self.mass_err[..., None], 0.0)
        jensen = m_lo * np.maximum(gb.value - gb.err, 0.0) * (1.0 - 8 * _U)
        crude = self.tiny[..., None] | (np.maximum(g1.ell, g2.ell) > _BIG_LOG)
        log_up = _safe_log(chord)
        log_lo = _safe_log(jensen)
        if np.any(crude):
            idx = np.nonzero(crude)
            up1, lo1 = g1.logs(idx)
            up2, _ = g2.logs(idx)
            shape = crude.shape
            logm_up = np.broadcast_to(self.logm_up[..., None], shape)[idx]
            logm_lo = np.broadcast_to(self.logm_lo[..., None], shape)[idx]
            unit = np.broadcast_to(self.unit[..., None], shape)[idx]
            log_up[idx] = logm_up + np.maximum(up1, up2)
            log_lo[idx] = np.where(unit, logm_lo + lo1, -np.inf)
        empty = self.empty[..., None]
        return np.where(empty, -np.inf, log_up), np.where(empty, -np.inf, log_lo)


def _bernoulli_excess(u: np.ndarray, v: np.ndarray, alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``log(K - 1)`` when ``B`` is a point mass (``s`` in {0, 1}): the kernel is the
    Bernoulli pair ``(u, v)``: ``K = u^a v^(1-a) + (1-u)^a (1-v)^(1-a)``."""
    u, v = u[:, None], v[:, None]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        t1 = xlogy(alpha, u) + xlogy(1.0 - alpha, v)
        t2 = xlogy(alpha, 1.0 - u) + xlogy(1.0 - alpha, 1.0 - v)
        t1 = np.where(u > 0, t1, -np.inf)
        t2 = np.where(u < 1, t2, -np.inf)
        lk = np.logaddexp(t1, t2)
        excess = np.where(lk > 30, lk, np.log(np.maximum(np.expm1(np.minimum(lk, 30)), 0.0)))
    margin = 1e-12 * (1.0 + np.abs(lk)) / np.maximum(-np.expm1(-np.maximum(lk, 1e-300)), 1e-300)
    return excess + margin, excess - margin


#: :func:`_two_term_excess` answers only where its bracket is at most this wide (in log: its upper end at most 1e-7
#: relative above ``K - 1``, 1e-4 of the curve's default rtol; its generic log-space charge ``1e-12 (1 + |log f|)``
#: makes it ~4e-9 wide at alpha = 1024, eps0 = 1, where the term-by-term sums give ~4e-11); wider ones (near the
#: floating-point floor, tiny eps0) go to the term-by-term sums.
_TWO_TERM_WIDTH = 1e-7


def _two_term_excess(u: np.ndarray, v: np.ndarray, s: float, alpha: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Certified ``log(K - 1)`` brackets (entries x orders) of the kernels at clone count ``c = 0``
    (``m = 1``: ``a`` in {0, 1}), without the term-by-term machinery (its fixed cost, ~0.7 ms a call,
    was paid by a call for this entry alone, at every order, in curves with slabs and at n >~ 70).

    *Derived*: ``M = Bin(1, s)`` has masses ``1 - s`` at ``x = 0`` and ``s`` at ``x = 1``, and
    ``sum_a M(a) (x_a - s) = 0`` exactly, so ``K - 1 = sum_a M(a) (f(x_a) - 1) = (1 - s) g(-s) + s g(1 - s)``
    with ``g(y) = f - 1 - f'(s) y`` (module docstring), the same identity as the windows' sums. ``g`` at
    both points is bracketed by :func:`_g` (its certified error, as the slabs' cells use it), with ``y = -s``
    (exact) and ``y = 1 - s`` (one rounding) charged ``4u (|y| + s)`` as :meth:`_Slab._first_tails` does
    (``bp, bq`` from the same ``(u - s)/(s (1 - s))``, their rounding inside it, as in :func:`_exact_chunk`);
    the weights' logs ``log(s)``, ``log1p(-s)`` and the two-term ``logaddexp`` round by a few ``u`` of
    ``1 + |result|``, charged ``1e-12 (1 + |result|)``. Only where ``u != v`` (``u = v``: ``K = 1``, left to the
    caller's general path) and the bracket is finite and at most :data:`_TWO_TERM_WIDTH` wide is the result used
    (third value ``True``); the caller evaluates the others term by term.

    Terms with ``b y <= -1/2`` (``p`` or ``q`` near 0 at ``x = 0`` or 1: clones from eps0 ~ 1.1 on, ``p(0) = (1 - u)/(1
    - s)``) are taken too (slab105; they were left to the term-by-term sums, 0.6 .. 2.3 ms a curve at eps0 = 2 .. 6,
    n = 1.4e4 .. 1e6, measured): :func:`_g` bounds ``g``
    there as everywhere (:class:`_Kernel`'s cells take it at their ends, ``x = 0`` and 1 included): ``log1p(z)`` carries ``z``'s
    error times ``1.01 / (1 + z)`` while ``eb |y| + 5u |z| <= (1 + z)/100``; beyond that, for ``p`` an absolute charge
    from ``(p + 101 (eb |y| + 5u |z|))^alpha q^(1 - alpha)``, for ``q`` an infinite error (the entry falls back). Its
    bracket is wider there (e.g. 1.2e-8 wide in ``log(K - 1)`` at eps0 = 3, alpha = 1024, its upper end 6e-9 above the
    term-by-term one, against ~9e-11 term by term; measured by review rev105s), and
    the width test above sends the ones beyond :data:`_TWO_TERM_WIDTH` (clones: eps0 >~ 10.5) to the term-by-term
    sums."""
    ss = s * (1.0 - s)
    bp, bq = (u - s) / ss, (v - s) / ss
    y = np.array([-s, 1.0 - s])
    ne = u.size
    plain = bp != bq
    if not np.any(plain):
        return np.full((ne, alpha.size), np.inf), np.full((ne, alpha.size), -np.inf), plain
    err_y = 4 * _U * (np.abs(y) + s)
    lg_up, lg_lo = _g(np.broadcast_to(y, (ne, 2)), np.broadcast_to(bp[:, None], (ne, 2)),
                      np.broadcast_to(bq[:, None], (ne, 2)), alpha, np.broadcast_to(err_y, (ne, 2)),
                      (np.broadcast_to(_b_err(u, s)[:, None], (ne, 2)), np.broadcast_to(_b_err(v, s)[:, None], (ne, 2)))
                      ).logs((slice(None), slice(None)))
    lw = np.array([math.log1p(-s), math.log(s)])[None, :, None]
    with np.errstate(invalid="ignore"):
        up = np.logaddexp(lw[:, 0] + lg_up[:, 0], lw[:, 1] + lg_up[:, 1])
        lo = np.logaddexp(lw[:, 0] + lg_lo[:, 0], lw[:, 1] + lg_lo[:, 1])
        up = up + 1e-12 * (1.0 + np.abs(up))
        lo = lo - 1e-12 * (1.0 + np.abs(lo))
        ok = plain & np.all(np.isfinite(up) & np.isfinite(lo) & (up - lo <= _TWO_TERM_WIDTH), axis=1)
    return up, lo, ok


# ---------------------------------------------------------------------------------------
# Kernels summed term by term over a window of a (moderate clone counts), all orders.
# ---------------------------------------------------------------------------------------

#: Kernels whose window of ``a`` has at most this many terms are summed term by term
#: (:func:`_exact_excess`); larger ones use cells (:class:`_Kernel`).
_EXACT_WINDOW = 12_000
#: Elements (entries x window x orders) per temporary array in :func:`_exact_excess`.
_EXACT_CHUNK = 1 << 20
#: Per order, the window's sum is computed in log space when ``max log f > _BIG_ELL`` or
#: ``max log(M f) > _BIG_REF`` (then ``sum M f >= e^_BIG_REF`` dwarfs ``1 + f'(s) y``).
_BIG_ELL = 600.0
_BIG_REF = 30.0
#: The overhead of one more group of orders in :func:`_exact_excess`, in terms (entries x window x orders).
_GROUP_COST = 2e5
#: Kernels with supports ``0 .. m`` up to this are summed over all of it, when evaluated at
#: at least ``_FULL_ORDERS`` orders (whose windows together span about all of it).
_FULL_WINDOW = 1024.0
#: The term-by-term windows' half-width in spreads beyond the Gaussian tail's ``sqrt(2 log(1/tail_tol))`` (work only: the
#: tails beyond any window are certified, and too narrow a window is widened and summed again).
_WINDOW_PAD = 1.5
_FULL_ORDERS = 8
#: Initial blocks near the clone count's mean about this times ``rtol mu`` wide, widening as ``exp(z^2 / _FINE_SHAPE)``
#: ``z`` sd above it and ``exp(z^2 / _FINE_SHAPE_LOW)`` below (:meth:`RenyiDirection._fine_edges`; 0: the coarse start only).
_FINE_START = 0.8
_FINE_SHAPE = 3.0
_FINE_SHAPE_LOW = 5.0
#: The block below the inner edges (from 0 to ~12 sd below the clone count's mean) has its upper half cut in eighths
#: when the smallest order's slab starts within this many sd of the mean (:meth:`RenyiDirection._initial_edges`).
_LOW_NEAR = 8.5
#: ... in this many parts (twice as many where the slab reaches 1.5 sd below the block's top).
_LOW_TOP = 8
#: Orders x terms per matrix product in :func:`_window_orders` (two coefficients each: m n k = 2 x this): OpenBLAS runs a
#: product of at most 65536 x 4 multiply-adds (m n k) on one thread (interface/gemm.c's threshold; a matter of CPU
#: time only)
_BLAS_COLS = 120_000


_SCRATCH = threading.local()


def _scratch(size: int) -> tuple[np.ndarray, np.ndarray]:
    """Two flat scratch arrays of at least ``size`` elements, kept per thread between calls:
    fresh arrays of a few MB cost page faults on first touch, about as much as the arithmetic
    done in them (contents are never read before being written)."""
    work = getattr(_SCRATCH, "work", None)
    if work is None or work[0].size < size:
        work = (np.empty(size), np.empty(size))
        _SCRATCH.work = work
    return work


#: Largest array (elements) that :func:`_pooled` keeps between calls; larger ones are fresh each time.
_POOL_MAX = 1 << 18


def _pooled(key: str, shape: tuple[int, ...], dtype: type = float) -> np.ndarray:
    """A scratch array of ``shape`` for the named use ``key``, kept per thread between calls (contents undefined; up to
    :data:`_POOL_MAX` elements, else fresh). Work only: :func:`_exact_chunk`'s order-free arrays (entries x window, a
    few hundred kB each) were fresh every chunk, and the heap's trimming between chunks made each one page-fault on
    first touch (measured at eps0 = 2, n = 21544: ~10^4 minor faults a curve, 80 -> 64 ms of its kernels' CPU time
    without them)."""
    n = math.prod(shape)
    if n > _POOL_MAX:
        return np.empty(shape, dtype=dtype)
    pool = getattr(_SCRATCH, "pool", None)
    if pool is None:
        pool = _SCRATCH.pool = {}
    buf = pool.get(key)
    if buf is None or buf.size < n:
        buf = pool[key] = np.empty(max(n, 4096), dtype=dtype)
    return buf[:n].reshape(shape)


def _stack0(*arrays: np.ndarray) -> np.ndarray:
    """``np.stack(arrays)`` (a new axis 0) of float64 arrays of one shape, without its checks and dispatch (the same
    values, copied; ~1 us instead of ~5 us on the few-element arrays of the small calls)."""
    out = np.empty((len(arrays),) + arrays[0].shape)
    for i, x in enumerate(arrays):
        out[i] = x
    return out


def _nan_to_num(x: np.ndarray, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None) -> np.ndarray:
    """``np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)`` of a float64 array, ``x`` itself where every element
    is finite (nothing to replace: the same values, one test instead of its ~10 calls; callers must not write into the
    result)."""
    if np.isfinite(x).all():
        return x
    return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


def _bisect_mode(xl: np.ndarray, xr: np.ndarray, b2: np.ndarray, ab2: np.ndarray, s: float, ls: float, steps: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """``steps`` bisection steps of :func:`_tilted_window` on ``[xl, xr]`` towards the root of the terms' log-ratio
    ``h = log((1 - x)/x) + ls + ab2[0] / (1 + b2[0] y) + ab2[1] / (1 + b2[1] y)``, ``y = x - s`` (``b2 = (bp, bq)``,
    ``ab2 = (alpha bp / m, (1 - alpha) bq / m)``, stacked: the two fractions as one pass, the same exactly rounded
    operations in the same order as term by term, so the same values; the loop-invariant numerators once)."""
    for _ in range(steps):
        x = 0.5 * (xl + xr)
        fr = np.multiply(b2, x - s)
        fr += 1.0
        np.divide(ab2, fr, out=fr)
        h = np.log((1.0 - x) / x) + ls
        h += fr[0]
        h += fr[1]
        right = h > 0.0  # log of the term ratio still positive: the mode is further right
        xl = np.where(right, x, xl)
        xr = np.where(right, xr, x)
    return xl, xr


def _tilted_window(m: np.ndarray, s: float, bp: np.ndarray, bq: np.ndarray, alpha: np.ndarray,
                   width: float, m_top: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A first guess, per entry and order, of the window ``[lo, hi]`` of ``a`` that carries
    the kernel sum (only a starting point: :func:`_exact_excess` certifies the tails beyond it).

    The mode of ``M(a) f(a/m)`` (the root of ``log((1-x)s/(x(1-s))) + phi'(x)/m``,
    ``phi = log f``, found by bisection) +- ``width`` times its local spread (for small
    orders the mode is near the binomial's, and ``g ~ (x - s)^2`` there)."""
    mm, al = m[:, None], alpha[None, :]
    bpp, bqq = bp[:, None], bq[:, None]
    ls = math.log(s) - math.log1p(-s)
    xl = np.zeros((m.size, alpha.size))
    xr = np.ones((m.size, alpha.size))
    # a guess: the mode to 1/40 of the binomial's spread sqrt(m s(1-s)) (for any s) is plenty
    # (the bisection's length from the largest m, or m_top: a subset of entries gets the same windows)
    steps = int(min(26, math.ceil(5.5 + 0.5 * math.log2(max(float(m.max()) if m_top is None else m_top, 1.0)))))
    am, a1m = al / mm, (1.0 - al) / mm
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # h = log((1 - x)/x) + ls + am bpp / (1 + bpp y) + a1m bqq / (1 + bqq y), the two fractions as one stacked pass
        # (the same operations on the same operands, elementwise and exactly rounded, added in the same order: the same
        # values; the loop-invariant products am bpp, a1m bqq once)
        xl, xr = _bisect_mode(xl, xr, _stack0(bpp, bqq), _stack0(am * bpp, a1m * bqq), s, ls, steps)
        # modes at an end of [0, 1] (large orders of extreme pairs) to full precision: the
        # curvature there decides between this window and a scan of the whole range
        ei, oj = np.nonzero((xl == 0.0) | (xr == 1.0))
        if ei.size and steps < 26:
            el, er = xl[ei, oj], xr[ei, oj]
            bp_e, bq_e = bp[ei], bq[ei]
            a_e = alpha[oj] / m[ei]
            a1_e = (1.0 - alpha[oj]) / m[ei]
            # (was log((1 - xe)/xe) + ls + a_e bp_e / (1 + bp_e ye) + a1_e bq_e / (1 + bq_e ye) per step: the same values)
            el, er = _bisect_mode(el, er, _stack0(bp_e, bq_e), _stack0(a_e * bp_e, a1_e * bq_e), s, ls, 26 - steps)
            xl[ei, oj], xr[ei, oj] = el, er
        x = 0.5 * (xl + xr)
        y = x - s
        d2phi = -al * bpp**2 / (1.0 + bpp * y) ** 2 + (al - 1.0) * bqq**2 / (1.0 + bqq * y) ** 2
        curv = 1.0 / (mm * x * (1.0 - x)) - d2phi / mm**2
        spread = np.where(curv > 0.0, 1.0 / np.sqrt(curv), mm)
    spread = _nan_to_num(spread, nan=np.inf, posinf=np.inf)
    centre = _nan_to_num(mm * x, nan=0.0)
    # the side facing the binomial's mean decays more slowly (g is at its smallest there)
    toward = np.where(centre > mm * s, -1.0, 1.0)
    lo = centre - (width + np.where(toward < 0.0, 2.0, 0.0)) * spread - 2.0
    hi = centre + (width + np.where(toward > 0.0, 2.0, 0.0)) * spread + 2.0
    lo = np.clip(np.floor(_nan_to_num(lo, nan=0.0, neginf=0.0)), 0.0, mm)
    hi = np.clip(np.ceil(_nan_to_num(hi, nan=np.inf, posinf=np.inf)), 0.0, mm)
    # a second mode at an end of the support (a = m, x = 1, where q(1) is small: every clone reports the first user's
    # value; or a = 0): the bisection finds one root of the terms' log-ratio, and the sum of a large order may lie at the
    # end instead (eps0 = 6, c = 3900, alpha = 768: the root at a = 2842 with a term of e^326, the sum e^1899 at a = m
    # alone; its window was widened twice, to 1513 terms). Estimated from the root's term times its spread and the end
    # term over its geometric decay: an end more than _END_MARGIN above takes the window alone (a few terms), one
    # within it extends the window to the end (work only: the tails beyond are certified for any window)
    lo, hi = _end_windows(mm, s, bpp, bqq, al, x, spread, centre, width, lo, hi)
    # where log(M f) is not concave at the root (an edge mode, or two), scan it on a coarse grid
    # instead: the window is where it is within width^2/2 + 20 of its largest value
    odd = ~(curv > 0.0) & (mm > 64.0)
    if odd.any():
        ei, oj = np.nonzero(odd)
        grid = np.linspace(0.0, 1.0, 257)[None, :] * m[ei][:, None]
        gx = grid / m[ei][:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            log_m = (gammaln(m[ei][:, None] + 1.0) - gammaln(grid + 1.0) - gammaln(m[ei][:, None] - grid + 1.0)
                     + xlogy(grid, s) + xlog1py(m[ei][:, None] - grid, -s))
            pu = 1.0 + bp[ei][:, None] * (gx - s)
            qv = 1.0 + bq[ei][:, None] * (gx - s)
            lt = log_m + alpha[oj][:, None] * np.log(pu) + (1.0 - alpha[oj][:, None]) * np.log(qv)
        lt = np.nan_to_num(lt, nan=-np.inf, posinf=1e300)
        above = lt >= lt.max(axis=1, keepdims=True) - (0.5 * width**2 + 20.0)
        first = np.argmax(above, axis=1)
        last = grid.shape[1] - 1 - np.argmax(above[:, ::-1], axis=1)
        step = m[ei] / 256.0
        rows = np.arange(ei.size)
        lo[ei, oj] = np.clip(np.floor(grid[rows, first] - step - 2.0), 0.0, m[ei])
        hi[ei, oj] = np.clip(np.ceil(grid[rows, last] + step + 2.0), 0.0, m[ei])
    return lo, hi


#: An end mode whose estimated sum exceeds the root's by more than this (nats) takes the window alone; one within it
#: joins the root's window (:func:`_end_windows`).
_END_MARGIN = 25.0


def _end_windows(mm: np.ndarray, s: float, bpp: np.ndarray, bqq: np.ndarray, al: np.ndarray, x: np.ndarray,
                 spread: np.ndarray, centre: np.ndarray, width: float, lo: np.ndarray, hi: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The windows of :func:`_tilted_window` (entries x orders) moved to, or extended to, an end of the support ``a = m``
    or ``a = 0`` whose terms outweigh (or rival) the root's: a guess only (the tails beyond any window are certified).

    Estimates (logs): an end's sum is its term ``log M(m) + phi(1)`` over ``1 - e^-d``, ``d`` the decay of the
    log-terms per step inwards there (``phi'(1)/m - log(m (1-s)/s)`` at ``a = m``; the mirror image at ``a = 0``), its
    window ``(width^2/2 + 20)/d`` terms; the root's sum ``log M(a*) + phi(x*) + log(2.5 spread)`` (Laplace), computed
    only where an end comes within :data:`_END_MARGIN` of the binomial's largest term (``phi(s) = 0``) at all."""
    ls = math.log(s / (1.0 - s))
    room = 0.5 * width**2 + 20.0
    ends = []
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        floor = -0.5 * np.log(2.0 * math.pi * np.maximum(mm * s * (1.0 - s), 1.0)) - _END_MARGIN
        log_mm = np.log(mm)  # (once for both ends: the same values)
        for end in (1.0, 0.0):
            y = end - s
            p_e, q_e = 1.0 + bpp * y, 1.0 + bqq * y
            term = mm * (math.log(s) if end else math.log1p(-s)) + al * np.log(p_e) + (1.0 - al) * np.log(q_e)
            slope = al * bpp / p_e + (1.0 - al) * bqq / q_e  # phi'(end)
            d = slope / mm - log_mm + ls if end else -slope / mm - log_mm - ls  # decay per step inwards
            d = np.maximum(np.where(np.isfinite(d), d, 0.0), 1e-3)
            est = term - np.log(-np.expm1(-d))
            k = np.minimum(np.ceil(room / d) + 2.0, mm)
            cand = ((est > floor) & np.isfinite(est) & (p_e > 0.0) & (q_e > 0.0) & (mm > 64.0)
                    & (np.abs(centre - end * mm) > k + width * spread))
            ends.append((end, est, k, cand))
        if not any(c.any() for _, _, _, c in ends):
            return lo, hi
        a_r = np.clip(np.round(centre), 0.0, mm)
        y_r = a_r / mm - s
        log_root = (gammaln(mm + 1.0) - gammaln(a_r + 1.0) - gammaln(mm - a_r + 1.0) + xlogy(a_r, s) + xlog1py(mm - a_r, -s)
                    + al * np.log1p(bpp * y_r) + (1.0 - al) * np.log1p(bqq * y_r) + np.log(2.5 * np.maximum(spread, 1.0)))
        for end, est, k, cand in ends:
            far = cand & np.isfinite(log_root)
            alone = far & (est > log_root + _END_MARGIN)
            join = far & ~alone & (est > log_root - _END_MARGIN)
            if end:
                lo = np.where(alone, np.maximum(mm - k, 0.0), lo)
                hi = np.where(alone | join, mm, hi)
            else:
                hi = np.where(alone, np.minimum(k, mm), hi)
                lo = np.where(alone | join, 0.0, lo)
    return lo, hi


def _log_tail_ratio(ratio_m: np.ndarray, dphi_bound: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``log(rho / (1 - rho))`` for the geometric tail bound with term ratio
    ``rho = ratio_m * exp(dphi_bound / m)`` (``+inf`` when ``rho >= 1``), with a small
    margin for rounding."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_rho = np.log(ratio_m) + dphi_bound / m
        log_rho = log_rho + 1e-12 * (1.0 + np.abs(log_rho))
        out = log_rho - np.log(-np.expm1(log_rho))
    return np.where(log_rho < 0.0, out, np.inf)


def _x_and_complement(x: np.ndarray | tuple[np.ndarray, np.ndarray], shape: tuple[int, ...], where: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
    """``x`` and ``1 - x`` at the elements ``where``; given as ``(a, m)``, ``1 - x = (m - a) / m`` (within u/2 of
    itself: the difference of integers is exact; ``1 - fl(a / m)`` was off by up to ``u x / (1 - x)`` relative, which the
    far terms' budget did not name, read-only review rev81), else ``1 - x`` of the given float."""
    if isinstance(x, tuple):
        a, m = np.broadcast_to(x[0], shape)[where], np.broadcast_to(x[1], shape)[where]
        return a / m, (m - a) / m
    x_ = np.broadcast_to(x, shape)[where]
    return x_, 1.0 - x_


def _log_first_user(b: np.ndarray, w: np.ndarray, x: np.ndarray | tuple[np.ndarray, np.ndarray], y: np.ndarray, s: float,
                    err_y: np.ndarray | float | None = 0.0, out: np.ndarray | None = None, want_near: bool = False
                    ) -> tuple[np.ndarray, np.ndarray | None]:
    """``log p(x)`` for ``p(x) = 1 + b (x - s) = w x/s + (1-w)(1-x)/(1-s)`` (the first user's
    weight in the kernel, module docstring) and a bound on its rounding error: ``log1p(b y)``
    where ``p >= 1/2`` (accurate near ``y = 0``), else the log of the two non-negative terms
    (no cancellation, so extreme pairs with ``p`` near 0 stay accurate).

    There the weights ``w``, ``1 - w``, ``1/s``, ``1/(1 - s)`` are those of the computed ``w`` and
    ``s`` (``pa / (pa + pb)``, ``r0 / (r0 + r1)``: within :data:`_PAIR_REL` relative of the pair's
    exact ones); ``1 - w`` is then off by ``_PAIR_REL w / (1 - w)`` relative (large where ``w`` is
    near 1: e.g. ``pa' = 1 - 4.5e-5`` at eps0 = 10, whose error raised to the order ``alpha`` put
    binary-rr-lower's printed lower ends above the exact divergence, found by review), and
    ``1 - s`` by ``_PAIR_REL s / (1 - s)``. ``p`` is a positive combination of the two terms, so
    its relative error is at most the larger of theirs: charged to ``log p`` (*derived*).

    ``err_y = None``: the values only (the error bound is ``None``; :func:`_first_user_row_err` bounds its largest
    value per row). ``x`` may be given as ``(a, m)`` for ``a / m``, divided only where it is used (the same values).
    ``out``: with ``err_y = None``, an array of the result's shape to compute the values in (:func:`_pooled`).
    ``want_near`` (with ``err_y = None``): the second element is the mask ``b y > -1/2`` of the computed products (the
    near elements; its caller's own test of the same products, once)."""
    z = b * y if out is None or err_y is not None else np.multiply(b, y, out=out)
    near = z > -0.5
    if err_y is None:
        with np.errstate(divide="ignore", invalid="ignore"):
            lg = np.log1p(z, out=z)  # (z is not used after near)
            if not near.all():
                far = ~near
                x_, cx_ = _x_and_complement(x, z.shape, far)
                w_ = np.broadcast_to(w, z.shape)[far]
                lg[far] = np.log(w_ * x_ / s + (1.0 - w_) * cx_ / (1.0 - s))
        return lg, (near if want_near else None)
    xa = x
    if isinstance(x, tuple):
        x = x[0] / x[1]
    with np.errstate(divide="ignore", invalid="ignore"):
        lg = np.log1p(z)
        # err = u |lg| + 1.01 (|b| err_y + 5u |z|) / (1 + z), in place (the same operations, bit for bit)
        err = np.abs(z)
        err *= 5 * _U
        err += np.abs(b) * err_y
        err *= 1.01
        err /= z + 1.0
        err += _U * np.abs(lg)
        if not near.all():
            far = ~near
            x_, cx_ = _x_and_complement(xa, z.shape, far)
            w_ = np.broadcast_to(w, z.shape)[far]
            lg[far] = np.log(w_ * x_ / s + (1.0 - w_) * cx_ / (1.0 - s))
            # the weights of the computed w, s against the exact pair's (see above)
            side = np.maximum(1.0, w_ / np.maximum(1.0 - w_, 1e-300)) + max(1.0, s / (1.0 - s)) if s < 1.0 else np.inf
            err[far] = _U * np.abs(lg[far]) + 6 * _U + 1.01 * _PAIR_REL * side
    return lg, err


def _first_user_row_err(lg: np.ndarray, fin: np.ndarray, b: np.ndarray, w: np.ndarray, s: float, y_abs: np.ndarray,
                        z_min: np.ndarray, has_far: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row, ``u max |lg| + max(near, far)`` and ``max |lg|`` over the elements ``fin`` of a row of the values
    ``lg`` of :func:`_log_first_user` (``b``, ``w`` per row): the first is at least the largest of that function's
    error bounds there (*derived*, term by term). Near elements (``z = b y > -1/2``): ``u |lg| + 1.01 (|b| 4u (|y| +
    s) + 5u |z|) / (1 + z)`` with ``|y| <= y_abs`` (the computed ``y`` is non-decreasing in ``a``: largest at a window
    end), ``|z| <= |b| y_abs (1 + u)`` and ``1 + z >= 1 + max(z_min, -1/2)`` (``z_min``: the least computed ``b y`` of
    the row, at an end), so it is at most ``1.02 u |b| (9 y_abs + 4 s) / (1 + max(z_min, -1/2))`` plus ``u max |lg|``
    (1.02 for 1.01: the rounding of this bound, and of ``|z|``); far elements: ``u |lg| + 6u + 1.01 _PAIR_REL
    side(w)``, ``side`` the same per row, counted only in rows with a far element among ``fin`` (``has_far``: as
    the elementwise bounds, which were taken at finite elements only; at eps0 = 700 ``side ~ 1e304`` and counting it
    in every row overflowed the error sums and left order 8 at [0.002, 700.001] instead of [699.999, 700.001],
    63e81aa). The sum is taken ``1 + 1e-12`` larger (its terms are added in another order
    than the elementwise bound's: one ulp below it otherwise, tested)."""
    lg_max = np.abs(np.where(fin, lg, 0.0)).max(axis=1)
    near = 1.02 * _U * np.abs(b) * (9.0 * y_abs + 4.0 * s) / (1.0 + np.maximum(z_min, -0.5))
    side = np.maximum(1.0, w / np.maximum(1.0 - w, 1e-300)) + max(1.0, s / (1.0 - s))
    far = np.where(has_far, 6 * _U + 1.01 * _PAIR_REL * side, 0.0)
    return (_U * lg_max + np.maximum(near, far)) * (1.0 + 1e-12), lg_max


def _window_orders(log_m: np.ndarray, mass: np.ndarray, dropped: np.ndarray, err_log_m: np.ndarray,
                   y: np.ndarray, lp: np.ndarray, lq: np.ndarray, finite: np.ndarray | None,
                   p_zero: np.ndarray | None, e_max: np.ndarray, bp: np.ndarray, bq: np.ndarray, alpha: np.ndarray,
                   work: tuple[np.ndarray, np.ndarray],
                   shared: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The order-dependent part of :func:`_exact_chunk`: ``(log upper, log lower, log estimate)``
    of ``sum_a M(a) g(a/m)`` over the given terms (entries x window, ``M(a) < e^-700`` dropped
    and counted in ``dropped``; ``err_log_m`` bounds the error of ``log M``, ``e_max`` (per
    entry) is such that ``alpha e_max`` bounds the error of ``log f``; ``y`` carries the error
    ``4u (|y| + s) <= 4u (|y| + 1)``; ``finite`` and ``p_zero`` (``None``: every term finite, ``lp = lq = y = 0``
    beyond the support) mark infinite logs), per entry and order. ``shared``: ``(lp_f, lq_f, rhs)`` below, when the
    caller computed them once for all its groups (slices of the same arrays: the same values)."""
    ne, width = mass.shape
    na = alpha.size
    size = ne * width * na
    # a dropped term's M: its computed log M is below -700 and within err_log_m of the true one, so M < e^(-700 +
    # err_log_m) (was charged at e^-700, short by the factor e^err_log_m ~ 1 + 1e-6 of e^-700)
    drop_m = (np.exp(err_log_m - 700.0) * (1.0 + 4 * _U))[:, None]
    buf1 = work[0][:size].reshape(ne, na, width)  # (entries, orders, window): orders' rows contiguous
    buf2 = work[1][:size].reshape(ne, na, width)
    # log f = alpha log p + (1 - alpha) log q = alpha (log p - log q) + log q, two passes over the orders;
    # its rounding is at most 4u alpha (|log p| + |log q|), inside alpha e_max
    if shared is None:
        lp_f, lq_f = (lp, lq) if finite is None else (np.where(finite, lp, 0.0), np.where(finite, lq, 0.0))
        rhs = np.stack((lp_f - lq_f, lq_f), axis=1)
    else:
        lp_f, lq_f, rhs = shared
    # (one matrix product [alpha, 1] x [log p - log q; log q] per entry: a single pass over the orders; measured the
    # same values as the products and the sum, in half the time; a BLAS that fused the two would round once, inside
    # the same bound)
    # (column blocks of at most _BLAS_COLS / na terms: OpenBLAS runs such products on one thread; larger ones wake
    # its threads, whose spinning after the call costs CPU time that the product does not save: measured at n = 5e6
    # with windows of 1e4 terms, 46 ms per curve against 24 ms with OpenBLAS on one thread)
    coef = np.empty((na, 2))  # (the values of np.stack((alpha, np.ones(na)), axis=1))
    coef[:, 0] = alpha
    coef[:, 1] = 1.0
    step = max(1, _BLAS_COLS // max(na, 1))
    if width <= step:
        ell = np.matmul(coef, rhs, out=buf1)
    else:
        ell = buf1
        for j in range(0, width, step):
            np.matmul(coef, rhs[:, :, j:j + step], out=buf1[:, :, j:j + step])
    if p_zero is not None and p_zero.any():
        pe, pw = np.nonzero(p_zero)
        ell[pe, :, pw] = -np.inf
    # max log f <= alpha max log p + (1 - alpha) min log q: an upper bound without a pass over
    # the orders; computed exactly (with max log(M f)) only for orders where it decides the path
    # (terms beyond the support have lp = lq = 0 when finite is None: the bound only grows)
    lp_max = (lp_f if finite is None else np.where(finite, lp, -np.inf)).max(axis=1)
    lq_min = (lq_f if finite is None else np.where(finite, lq, np.inf)).min(axis=1)
    with np.errstate(invalid="ignore"):
        max_ell = alpha[None, :] * lp_max[:, None] + (1.0 - alpha[None, :]) * lq_min[:, None]
        max_ell = np.where(np.isnan(max_ell), -np.inf, max_ell) + 1e-12
    ref = max_ell.copy()  # max log(M f) <= max log f (log M <= 0) ...
    need = np.flatnonzero((max_ell > _BIG_REF).any(axis=0))
    if need.size:  # ... estimated where it decides the path (columns sliced, not gathered)
        k = int(need[0])
        max_ell[:, k:] = ell[:, k:, :].max(axis=2)  # exact: it bounds the dropped terms below
        # ref only chooses the path and the scale of the log-space sum (any finite value keeps
        # that sum certified): every few terms suffice, log(M f) moves little between them
        step = max(1, min(8, width // 64))
        tmp = np.add(log_m[:, None, ::step], ell[:, k:, ::step], out=buf2[:, k:, :(width + step - 1) // step])
        ref[:, k:] = np.maximum(tmp.max(axis=2), log_m[:, -1:] + ell[:, k:, -1])  # and the last term
    big = (max_ell > _BIG_ELL) | (ref > _BIG_REF)
    d = alpha[None, :] * bp[:, None] + (1.0 - alpha[None, :]) * bq[:, None]  # f'(s)
    err_d = 6 * _U * alpha[None, :] * (np.abs(bp) + np.abs(bq))[:, None]
    log_up = np.empty((ne, na))
    log_lo = np.empty((ne, na))
    log_est = np.empty((ne, na))
    err_mass = 1.01 * err_log_m + _U
    y_abs = np.abs(y)
    ymax = y_abs.max(axis=1)[:, None]
    # the order-free sums over the terms, once for both paths below (each path needs all three)
    sum_m = mass.sum(axis=1)[:, None]
    sum_y = (mass * y).sum(axis=1)[:, None]
    sum_my = (mass * y_abs).sum(axis=1)[:, None]
    if not big.all():
        # sum M g = sum M em - f'(s) sum M y, em = expm1(log f); every error term below is a
        # bound on sum_a M(a) |error of g_a| or on the rounding of the sums
        j1 = int(np.flatnonzero(~big.all(axis=0))[-1]) + 1  # orders 0 .. j1-1 (others are big)
        d_n, al_n, err_d_n = d[:, :j1], alpha[:j1], err_d[:, :j1]
        em = buf2[:, :j1, :]
        if max_ell[:, :j1].max() > _BIG_ELL:
            np.minimum(ell[:, :j1, :], _BIG_ELL, out=em)
            np.expm1(em, out=em)
        else:
            np.expm1(ell[:, :j1, :], out=em)
        sum_em = np.matmul(em, mass[:, :, None])[:, :, 0]  # the one pass over the orders
        # sum M |em| <= sum M em + 2 sum M |log f| (|em| - em = 2 max(-em, 0) <= 2 |log f|), and
        # |log f| <= alpha |log p| + (alpha - 1) |log q|: sums over a only
        m_lp = (mass * np.abs(lp_f)).sum(axis=1)[:, None]
        m_lq = (mass * np.abs(lq_f)).sum(axis=1)[:, None]
        sum_abs = np.maximum(sum_em, 0.0) + 2.0 * (al_n * m_lp + (al_n - 1.0) * m_lq)
        total = sum_em - d_n * sum_y
        e_mx = e_max[:, None]  # sum M e f <= max e (sum M + sum M |em|), f = em + 1
        # (orders near 1 at eps0 ~ 40 overflow the error terms, review rev99c: an infinite or undefined error is no
        # information, +inf for the upper end, -inf for the lower)
        with np.errstate(over="ignore", invalid="ignore"):
            err = (_U * sum_abs + 1.01 * al_n * e_mx * (sum_m + sum_abs)  # em, and log f
                   + (err_d_n + _U * np.abs(d_n)) * sum_my + np.abs(d_n) * (4.0 * _U) * (1.01 * sum_my + sum_m)  # f'(s) y, err_y <= 4u (|y| + 1)
                   + (width + 4) * _U * (sum_abs + np.abs(d_n) * sum_my))  # the sums and the subtraction
            # dropped terms: M < drop_m each, |g| <= e^max_ell + 1 + |f'(s)| max|y|
            err = err + dropped[:, None] * drop_m * (
                np.exp(np.minimum(max_ell[:, :j1], _BIG_ELL)) + 1.0 + np.abs(d_n) * ymax)
            err = np.where(np.isnan(err), np.inf, err)
            up = (total + err) * (1.0 + err_mass[:, None])
            up = np.where(np.isnan(up), np.inf, up)
            low = (total - err) * (1.0 - err_mass[:, None])
        with np.errstate(divide="ignore"):
            log_up[:, :j1] = np.where(up > 0.0, np.log(np.maximum(up, 1e-320)), -np.inf)
            log_lo[:, :j1] = np.where(low > 0.0, np.log(np.maximum(low, 1e-320)), -np.inf)
            log_est[:, :j1] = np.where(total > 0.0, np.log(np.maximum(total, 1e-320)), -np.inf)
    if big.any():
        # sum M f in log space; g = f - 1 - f'(s) y differs from f by at most 1 + |f'(s)| max|y|
        j0 = int(np.flatnonzero(big.any(axis=0))[0])  # orders j0 .. (the others are not big)
        cols = slice(j0, na)
        x = np.add(log_m[:, None, :], ell[:, cols, :], out=buf2[:, cols, :])
        # an entry whose terms are all zero (log -inf) has ref -inf: shift by 0 there (no -inf - -inf)
        ref_s = np.where(np.isfinite(ref[:, cols]), ref[:, cols], 0.0)
        np.subtract(x, ref_s[:, :, None], out=x)
        # ref was estimated from a sample of the terms: shifted up to the largest term where it
        # fell short (no overflow below; the sum is certified for any finite ref)
        top = x.max(axis=2)
        empty = np.isneginf(top)  # every term is 0: the sum is 0
        short = np.maximum(top, 0.0)
        if (short > 0.0).any():
            np.subtract(x, short[:, :, None], out=x)
        ref_c = ref_s + short
        np.maximum(x, -700.0, out=x)  # each true term is in [0, this]: at most e^-700 too much
        np.exp(x, out=x)
        total_x = x.sum(axis=2)  # >= 1 (the largest term is e^0)
        with np.errstate(divide="ignore", invalid="ignore"):
            lse = ref_c + np.log(total_x)
            lse_lo = ref_c + np.log(np.maximum(total_x - width * math.exp(-700.0), 1e-320))
        lse = np.where(empty, -np.inf, lse)
        lse_lo = np.where(empty, -np.inf, lse_lo)
        al = alpha[cols]
        slack = (err_log_m[:, None] + al * e_max[:, None]
                 + 8 * _U * np.maximum(np.abs(ref_c), 1.0) + 4 * _U * width)
        # sum_a M(a) |g - f| = sum M |1 + f'(s) y| <= sum M (1 + |f'(s)| |y|) over the window's terms (was 1 + |f'(s)| max|y|:
        # a window reaching x ~ 1 made it ~ |f'(s)| / 2, e.g. 253 against a sum of 420 at eps0 = 6, alpha = 128): the kept
        # terms' sums with their rounding (mass relative err_mass, each sum (width + 4) u, y's error 4u (|y| + 1), f'(s)'s
        # err_d), the dropped ones at drop_m (1 + |f'(s)| max|y|) each
        s_m, s_my = sum_m, sum_my
        d_abs = np.abs(d[:, cols]) + err_d[:, cols]
        corr = ((s_m + d_abs * (s_my * (1.0 + 4.01 * _U) + 4.01 * _U * s_m))
                * (1.0 + 1.01 * err_mass[:, None] + (width + 8) * _U)
                + dropped[:, None] * drop_m * (1.0 + d_abs * ymax))
        corr = np.minimum(corr, 1.0 + d_abs * ymax * (1.0 + 4 * _U) + 4 * _U)  # (the old bound, if smaller; f'(s) with its error)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            b_up = np.logaddexp(lse + slack, np.log(corr))  # log(e^(lse + slack) + corr)
            low_lin = -np.expm1(np.log(corr) - (lse_lo - slack))  # 1 - corr e^-(lse - slack)
            b_lo = np.where(low_lin > 0.0, lse_lo - slack + np.log(np.maximum(low_lin, 1e-320)), -np.inf)
            # signed: sum M g = sum M f - L, L = sum M (1 + f'(s) y) = sum M + f'(s) sum M y over the window's terms,
            # computed as l_c with |l_c - L| <= err_l (the same error terms as corr's, and the product and sum's
            # rounding); then e^(lse_lo - slack) - (l_c + err_l) <= sum M g <= e^(lse + slack) - (l_c - err_l), each
            # formed as A + log(1 - c e^-A) with its rounding (6u of c e^-A, and 2u) charged; the tighter of the two
            # brackets is kept (both certified)
            s_y = sum_y
            l_c = s_m + d[:, cols] * s_y
            err_l = ((s_m + d_abs * s_my) * (1.01 * err_mass[:, None] + (width + 8) * _U)
                     + d_abs * 4.01 * _U * (s_my + s_m) + err_d[:, cols] * s_my
                     + dropped[:, None] * drop_m * (1.0 + d_abs * ymax))
            a_up, a_lo = lse + slack, lse_lo - slack
            for c_, a_, up_side in ((l_c - err_l, a_up, True), (l_c + err_l, a_lo, False)):
                ratio = c_ * np.exp(-a_)  # c e^-A (finite: A is at least log of the largest term's share)
                r = 1.0 - ratio
                slack_r = 6.0 * _U * np.abs(ratio) + 2.0 * _U  # (exp, the product, the difference)
                # (and 4u of the log and the sum: the log's rounding is relative to |log(r +- slack_r)| <= |b_new| +
                # |a_|, which exceeds |b_new| where a_ and the log nearly cancel)
                if up_side:
                    b_new = np.where(r + slack_r > 0.0, a_ + np.log(np.maximum(r + slack_r, 1e-320)), np.inf)
                    b_new = b_new + 4.0 * _U * (np.abs(b_new) + np.abs(a_) + 1.0)
                    b_up = np.minimum(b_up, np.where(np.isnan(b_new), np.inf, b_new))
                else:
                    b_new = np.where(r - slack_r > 0.0, a_ + np.log(np.maximum(r - slack_r, 1e-320)), -np.inf)
                    b_new = b_new - 4.0 * _U * (np.abs(b_new) + np.abs(a_) + 1.0)
                    b_lo = np.maximum(b_lo, np.where(np.isnan(b_new), -np.inf, b_new))
        sel = big[:, cols]
        lu, ll_, le = log_up[:, cols], log_lo[:, cols], log_est[:, cols]
        lu[sel], ll_[sel], le[sel] = b_up[sel], b_lo[sel], lse[sel]
        log_up[:, cols], log_lo[:, cols], log_est[:, cols] = lu, ll_, le
    return log_up, log_lo, log_est


def _exact_chunk(m: np.ndarray, start: np.ndarray, width: int, s: float, u: np.ndarray, v: np.ndarray,
                 alpha: np.ndarray, rel: float, groups: list[tuple[slice, int, int]],
                 work: tuple[np.ndarray, np.ndarray] | None = None,
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Certified ``log`` brackets of the window sums ``sum_{a in window} M(a) g(a/m)`` for a
    chunk of entries, all orders; plus the log of the computed sum (an estimate used to size
    the tails). The terms that do not depend on the order are computed once over the union
    window ``start .. start + width - 1`` (clipped to ``[0, m]``); each group ``(orders, o, w)``
    of ``groups`` sums its orders over the terms ``o .. o + w - 1`` of it (the orders' windows
    drift apart as the tilt grows with alpha).

    ``work``: two flat scratch arrays of at least ``entries * width * orders`` elements,
    reused between chunks (fresh arrays of this size cost page faults, several times the
    arithmetic). Terms with ``M(a) < e^-700`` are charged with an explicit bound instead
    of being computed, and in log space terms below ``e^-700`` of the largest are rounded
    up to it (``exp`` is slow on subnormal results).
    """
    ne, na = m.size, alpha.size
    size = ne * max(w * alpha[cols].size for cols, _, w in groups)  # each group's (entries, orders, slice)
    if work is None or work[0].size < size:
        work = _scratch(size)
    # (the order-free arrays, entries x window, live in per-thread scratch (:func:`_pooled`), computed in place: the
    # same operations in the same order as the expressions in the comments, so the same values)
    sh = (ne, width)
    mc = m[:, None]
    a = np.add(start[:, None], np.arange(width, dtype=float)[None, :], out=_pooled("a", sh))
    valid = np.less_equal(a, mc, out=_pooled("valid", sh, bool))  # a <= m
    invalid = np.logical_not(valid, out=_pooled("invalid", sh, bool))
    np.minimum(a, mc, out=a)
    # log M(a), M = Bin(m, s), by the exact ratio recurrence from the term nearest the mode
    ls = math.log(s) - math.log1p(-s)
    inc = np.subtract(mc, a, out=_pooled("inc", sh))
    with np.errstate(divide="ignore", invalid="ignore"):
        inc += 1.0
        inc /= a
        np.log(inc, out=inc)
        inc += ls  # log((m - a + 1) / a) + ls = log M(a) - log M(a-1)
    inc[:, 0] = 0.0
    off = np.greater(a, 0.0, out=_pooled("off", sh, bool))
    off &= valid
    np.logical_not(off, out=off)
    np.copyto(inc, 0.0, where=off)  # np.where(valid & (a > 0), inc, 0)
    cum = np.cumsum(inc, axis=1, out=_pooled("cum", sh))
    i0 = np.clip(np.floor((m + 1.0) * s) - start, 0, width - 1)
    i0 = np.minimum(i0, m - start).astype(np.int64)
    a0 = start + i0
    # the anchor: the window's term nearest the binomial's mode; Boost's pmf there (relative error rel) unless
    # below _PMF_LOG_MIN (a window of a large order's tilted sum off the bulk, e.g. at a = m), where the gammaln
    # bracket's midpoint is taken with its half-width as the error (:func:`_log_pmf_bracket`)
    l0, l0_err = _log_pmf_anchor(a0, m, s, rel)
    rows = np.arange(ne)
    log_m = np.subtract(cum, cum[rows, i0][:, None], out=_pooled("log_m", sh))
    log_m += l0[:, None]  # l0 + (cum - cum[i0])
    tmp = np.abs(inc, out=_pooled("tmp", sh))
    big_inc = tmp.max(axis=1)
    max_cum = np.abs(cum, out=tmp).max(axis=1)
    err_log_m = (l0_err + 4 * _U * np.abs(l0)
                 + width * _U * (6.0 * big_inc + 2.0 * abs(ls) + 2.0 * max_cum + 4.0))
    keep = np.greater_equal(log_m, -700.0, out=_pooled("keep", sh, bool))
    keep &= valid
    drop = np.logical_not(keep, out=off)
    mass = np.maximum(log_m, -700.0, out=_pooled("mass", sh))
    np.exp(mass, out=mass)
    np.copyto(mass, 0.0, where=drop)  # np.where(keep, exp(max(log_m, -700)), 0)
    drop &= valid  # valid & ~keep
    np.copyto(log_m, -np.inf, where=invalid)  # np.where(valid, log_m, -inf)
    # y = a/m - s and log p, log q with their rounding (bp, bq taken with relative error 4u)
    ss = s * (1.0 - s)
    bp, bq = (u - s) / ss, (v - s) / ss
    y = np.subtract(a, s * mc, out=_pooled("y", sh))
    y /= mc
    np.copyto(y, 0.0, where=invalid)  # np.where(valid, (a - s m) / m, 0): 0 beyond the support (log p = log q = 0 there)
    # log p = log1p(bp y) where bp y > -1/2 over the whole window (its extremes are at the window's
    # ends: the computed y is non-decreasing in a), with one error bound per entry from the ends;
    # other entries (p or q near 0 somewhere) term by term, :func:`_log_first_user`
    last = (np.minimum(start + width - 1.0, m) - start).astype(np.int64)
    # (the two ends' larger |y| and least b y: the values of np.abs(y_end).max(axis=1) and (b[:, None] * y_end).min(axis=1)
    # for y_end = np.stack((y0, y1), axis=1), by two-operand maximum / minimum; a zero's sign never reaches a result)
    y0, y1 = y[:, 0], y[rows, last]
    y_abs = np.maximum(np.abs(y0), np.abs(y1))
    z_min = [np.minimum(b * y0, b * y1) for b in (bp, bq)]
    plain = (z_min[0] > -0.5) & (z_min[1] > -0.5)
    # no plain row: every row term by term below, which sets its e_max (the zeros and the bounds from them that the
    # branch below and the loop after it would give those rows are replaced there: not computed)
    whole = not plain.any()
    if plain.all():
        lp = np.multiply(bp[:, None], y, out=_pooled("lp", sh))
        np.log1p(lp, out=lp)
        lq = np.multiply(bq[:, None], y, out=_pooled("lq", sh))
        np.log1p(lq, out=lq)
    elif not whole:  # (the other rows are computed term by term below, from the same log1p where b y > -1/2: zeros until then)
        lp, lq = _pooled("lp", sh), _pooled("lq", sh)
        lp[...] = 0.0
        lq[...] = 0.0
        pr = np.flatnonzero(plain)
        if pr.size:
            lp[pr] = np.log1p(np.multiply(bp[pr, None], y[pr]))
            lq[pr] = np.log1p(np.multiply(bq[pr, None], y[pr]))
    e_max = np.zeros(ne)
    for lg, b, zm in () if whole else ((lp, bp, z_min[0]), (lq, bq, z_min[1])):
        lg_abs = np.maximum(np.abs(lg[:, 0]), np.abs(lg[rows, last]))  # (np.abs(np.stack(ends, axis=1)).max(axis=1))
        # rounding of log1p(b y): u |log1p| + 1.01 (|b| err_y + 5u |b y|) / (1 + b y), err_y = 4u (|y| + s);
        # doubled against a non-monotone last bit of log1p; plus 5u |log p| of the sums in log f
        e_max += 2.0 * _U * lg_abs + 2.02 * _U * np.abs(b) * (9.0 * y_abs + 4.0 * s) / (1.0 + np.maximum(zm, -0.5)) + 5 * _U * lg_abs
    finite = p_zero = None
    bad_f = np.zeros(ne, dtype=bool)
    if not plain.all():
        r = np.flatnonzero(~plain)  # (whole: every row; then no gathers and scatters of rows: the same values)
        a_r, y_r = (a, y) if whole else (a[r], y[r])
        lp_r, near_p = _log_first_user(bp[r, None], u[r, None], (a_r, m[r, None]), y_r, s, None, _pooled("lp_r", y_r.shape),
                                       True)
        lq_r, near_q = _log_first_user(bq[r, None], v[r, None], (a_r, m[r, None]), y_r, s, None, _pooled("lq_r", y_r.shape),
                                       True)
        # p = 0 (an outcome P never produces): f = 0 there; q = 0 < p: an infinite likelihood ratio
        if whole:  # (the values of the row-wise lines below with r every row, in place)
            lp, lq = lp_r, lq_r
            p_zero = np.logical_and(valid, np.isneginf(lp_r), out=_pooled("p_zero", sh, bool))
            finite = np.logical_and(valid, np.isfinite(lp_r), out=_pooled("finite", sh, bool))
            finite &= np.isfinite(lq_r)
            bad_f = (valid & ~p_zero & ~finite).any(axis=1)
        else:
            lp[r], lq[r] = lp_r, lq_r
            p_zero = _pooled("p_zero", sh, bool)
            p_zero[...] = False
            finite = _pooled("finite", sh, bool)
            finite[...] = valid
            p_zero[r] = valid[r] & np.isneginf(lp_r)
            finite[r] = valid[r] & np.isfinite(lp_r) & np.isfinite(lq_r)
            bad_f[r] = (valid[r] & ~p_zero[r] & ~finite[r]).any(axis=1)
        # err(log f) <= alpha e_max: e_max bounds, per row, the largest of err(log p) + err(log q) + 5u (|log p| +
        # |log q|) over its finite terms by the sum of the terms' row maxima (was: elementwise, then the row's
        # maximum; at most about twice that, ~1e-14 relative, in brackets ~1e-11 wide at alpha = 1024)
        fin_r = finite if whole else finite[r]
        # rows with a finite far element (z = b y <= -1/2, the same products as _log_first_user's)
        # (their masks near_p, near_q: np.multiply(bp[r, None], y_r) > -0.5, computed there once)
        assert near_p is not None and near_q is not None
        far_p = (fin_r & ~near_p).any(axis=1)
        far_q = (fin_r & ~near_q).any(axis=1)
        e_p, mp = _first_user_row_err(lp_r, fin_r, bp[r], u[r], s, y_abs[r], z_min[0][r], far_p)
        e_q, mq = _first_user_row_err(lq_r, fin_r, bq[r], v[r], s, y_abs[r], z_min[1][r], far_q)
        e_max[r] = (e_p + e_q + 5 * _U * (mp + mq)) * (1.0 + 1e-12)
    log_up = np.empty((ne, na))
    log_lo = np.empty((ne, na))
    log_est = np.empty((ne, na))
    # the groups' order-free operands of log f, once for the chunk (each group takes its slice)
    # (written in place: the values of np.stack((lp_f - lq_f, lq_f), axis=1))
    rhs = _pooled("rhs", (ne, 2, width))
    if finite is None:
        lp_f = lp
        rhs[:, 1] = lq
    else:
        lp_f = _pooled("lp_f", sh)
        lp_f[...] = 0.0
        np.copyto(lp_f, lp, where=finite)  # np.where(finite, lp, 0)
        rhs[:, 1] = 0.0
        np.copyto(rhs[:, 1], lq, where=finite)
    lq_f = rhs[:, 1]
    np.subtract(lp_f, lq_f, out=rhs[:, 0])
    # (no p = 0 term in the whole chunk: none in any group's slice, whose _window_orders tests only that)
    pz = None if p_zero is None or not p_zero.any() else p_zero
    for cols, o, w in groups:
        sl = slice(o, o + w)
        log_up[:, cols], log_lo[:, cols], log_est[:, cols] = _window_orders(
            log_m[:, sl], mass[:, sl], drop[:, sl].sum(axis=1), err_log_m, y[:, sl],
            lp[:, sl], lq[:, sl], None if finite is None else finite[:, sl], None if pz is None else pz[:, sl],
            e_max, bp, bq, alpha[cols], work, (lp_f[:, sl], lq_f[:, sl], rhs[:, :, sl]))
    nonpos = ~np.isfinite(l0) | bad_f  # l0: never expected (0 <= a0 <= m); bad_f: an infinite likelihood ratio
    log_up[nonpos], log_lo[nonpos] = np.inf, -np.inf  # certified, and the caller caps the divergence
    return log_up, log_lo, log_est


def _exact_windows(m: np.ndarray, s: float, bp: np.ndarray, bq: np.ndarray, u: np.ndarray, v: np.ndarray,
                   alpha: np.ndarray, width: float, tail_tol: float, m_top: float,
                   tilted: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The windows ``[lo, hi]`` (entries x orders) of :func:`_exact_excess` (only the work depends on them: the tails
    beyond are certified); entry by entry, so a subset of entries gets the same windows (``m_top``: the largest ``m``
    of the whole call, which sets the bisection's length). ``tilted``: the windows of :func:`_tilted_window` for
    these arguments, when the caller has them."""
    lo_o, hi_o = _tilted_window(m, s, bp, bq, alpha, width, m_top) if tilted is None else tilted
    # every window also spans the smallest order's (about the binomial's bulk): the tail facing
    # that bulk is small only past it (g is of the order of f + |f'(s) y|) ... unless the order's
    # sum is so large that the crude bound of that tail (its largest end value of g, times
    # probability 1) is below the tolerance from an edge short of the bulk: that edge is
    # estimated here (a guess; the tails are certified later)
    lo0, hi0 = lo_o[:, :1], hi_o[:, :1]
    right = lo_o > lo0  # windows shifted off the bulk's (by the tilt)
    left = (hi_o < hi0) & ~right
    if (right | left).any():
        mm = m[:, None]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            ac = np.floor(0.5 * (lo_o + hi_o))  # the sum: about its largest term x its spread
            yc = ac / mm - s
            est = (gammaln(mm + 1.0) - gammaln(ac + 1.0) - gammaln(mm - ac + 1.0) + xlogy(ac, s) + xlog1py(mm - ac, -s)
                   + alpha * np.log1p(bp[:, None] * yc) + (1.0 - alpha) * np.log1p(bq[:, None] * yc)
                   + np.log(np.maximum(hi_o - lo_o + 1.0, 1.0) / 5.0))
            target = math.log(tail_tol) + est - 5.0
            lg_far = _log_g_ends(right, 0.0, bp, bq, u, v, s, alpha)
        ei, oj = np.nonzero((right | left) & (lg_far < target))  # the large orders, where it can pay
        if ei.size:
            r_, al, b_p, b_q, mc = right[ei, oj], alpha[oj], bp[ei], bq[ei], m[ei]
            al1 = 1.0 - al  # (once, not per bisection step: the same values)
            d = al * b_p + al1 * b_q
            tg = target[ei, oj]

            b_pq, al_2 = _stack0(b_p, b_q), _stack0(al, al1)

            def log_g(y: np.ndarray) -> np.ndarray:  # about log of f + (-1 - f'(s) y)_+ >= log g (called under errstate below)
                # (al log1p(b_p y) + al1 log1p(b_q y), the two logs as one stacked pass: the same values)
                lf = np.log1p(np.multiply(b_pq, y))
                lf *= al_2
                return np.maximum(lf[0] + lf[1], np.log(np.maximum(-1.0 - d * y, 0.0))) + 0.7

            # g grows away from s: the edge nearest the window (between s, or the bulk's edge,
            # and the window's own) where log g <= target, by bisection
            yw = np.where(r_, lo_o[ei, oj], hi_o[ei, oj]) / mc - s
            yb = np.where(r_, np.maximum(lo0[ei, 0] / mc - s, 0.0), np.minimum(hi0[ei, 0] / mc - s, 0.0))
            yb = np.where(r_, np.minimum(yb, np.maximum(yw, 0.0)), np.maximum(yb, np.minimum(yw, 0.0)))
            with np.errstate(divide="ignore", invalid="ignore"):  # (log_g's, once for the bisection)
                ok = log_g(yb) < tg
                ya, yz = yb, yw
                for _ in range(12):
                    ym = 0.5 * (ya + yz)
                    below = log_g(ym) < tg
                    ya, yz = np.where(below, ym, ya), np.where(below, yz, ym)
                ya = np.where(log_g(yw) < tg, yw, ya)
            edge = np.where(r_, np.floor((ya + s) * mc), np.ceil((ya + s) * mc))
            narrow_lo = lo_o.copy()
            narrow_hi = hi_o.copy()
            narrow_lo[ei, oj] = np.where(ok & r_, np.minimum(lo_o[ei, oj], edge), narrow_lo[ei, oj])
            narrow_hi[ei, oj] = np.where(ok & ~r_, np.maximum(hi_o[ei, oj], edge), narrow_hi[ei, oj])
            keep = np.zeros(lo_o.shape, dtype=bool)
            keep[ei, oj] = ok
            lo_o = np.where(keep, narrow_lo, np.minimum(lo_o, lo0))
            hi_o = np.where(keep, narrow_hi, np.maximum(hi_o, hi0))
        else:
            lo_o, hi_o = np.minimum(lo_o, lo0), np.maximum(hi_o, hi0)
    lo_o = np.clip(lo_o, 0.0, m[:, None])
    hi_o = np.clip(hi_o, lo_o, m[:, None])
    return lo_o, hi_o


def _exact_excess(c: np.ndarray, u: np.ndarray, v: np.ndarray, s: float, alpha: np.ndarray, rel: float,
                  tail_tol: float, max_window: int = _EXACT_WINDOW) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Certified ``log(K - 1)`` brackets (entries x orders) of kernels ``(c, u, v)``, summed
    term by term over a window of ``a`` with certified geometric tails beyond it.

    Tails (*derived*): for ``a >= hi`` the term ratio ``M(a+1) f(x_{a+1}) / (M(a) f(x_a))``
    is at most ``rho = M(hi+1)/M(hi) * exp(max phi' / m)``: the binomial ratio
    ``(m-a)/(a+1) * s/(1-s)`` decreases in ``a``, and ``phi' = alpha bp/p + (1-alpha) bq/q``
    is at most ``alpha bp/p(x_hi) + (1-alpha) bq/q(1)`` on ``[x_hi, 1]`` (``b/(1 + b y)``
    decreases in ``y``). If ``rho < 1`` the tail of ``sum M f`` is at most
    ``M(hi) f(x_hi) rho / (1 - rho)``; and ``g <= f + (-1 - f'(s) y)_+``, the second part
    at most the tail probability (the same geometric bound with the binomial ratio alone, and
    at most 1: a window of a large order off the binomial's bulk has ratio >= 1 at the edge
    facing it) times its largest value at the ends. The lower tail is the mirror image. Windows
    whose tails exceed ``tail_tol`` times the window sum are widened. A window need not hold
    the binomial's mode: its terms are anchored at the term nearest it (:func:`_log_pmf_anchor`).

    Returns ``(log upper, log lower, done)``; entries with ``done = False`` need more than
    ``max_window`` terms and are left to the cells of :class:`_Kernel`.
    """
    m = c + 1.0
    ss = s * (1.0 - s)
    bp, bq = (u - s) / ss, (v - s) / ss
    if m.max() <= _FULL_WINDOW and alpha.size >= _FULL_ORDERS:  # small supports: every term, no tails
        full = np.broadcast_to(m[:, None], (m.size, alpha.size))
        return _exact_group(m, bp, bq, u, v, s, alpha, rel, tail_tol, max_window, np.zeros(full.shape),
                            full.copy(), [slice(0, alpha.size)])
    width = math.sqrt(2.0 * math.log(1.0 / tail_tol)) + _WINDOW_PAD  # in spreads: Gaussian tails below tail_tol
    # every entry's union window holds its first order's window (never narrowed, see _exact_windows): entries where
    # that alone exceeds max_window are left to the cells, as _exact_group would leave them, without the windows of
    # their other orders (measured: 20 of 23 entries of the first round at n = 3e6; later calls at 3e6 .. 1e9 whole)
    # (the tilted windows of every order at once, entry by entry the values of separate calls: one call's fixed
    # cost, ~30 numpy operations per bisection step, instead of two)
    ne0 = m.size
    m_top = float(m.max())
    lo_t, hi_t = _tilted_window(m, s, bp, bq, alpha, width, m_top)
    lo_f = np.clip(lo_t[:, :1], 0.0, m[:, None])
    hi_f = np.clip(hi_t[:, :1], lo_f, m[:, None])
    wide = ((hi_f - lo_f + 1.0)[:, 0] > max_window) & (bp != bq)
    if (wide | (bp == bq)).all():  # (what _exact_group returns then: nothing summed, identical laws done)
        return np.full((ne0, alpha.size), -np.inf), np.full((ne0, alpha.size), -np.inf), bp == bq
    rows = np.unique(np.linspace(0, m.size - 1, min(m.size, 8)).astype(np.int64))  # the grouping's sample (below)
    calc = ~wide
    calc[rows] = True
    lo_o = np.repeat(lo_f, alpha.size, axis=1)  # (the wide entries: too wide whatever their other orders)
    hi_o = np.repeat(hi_f, alpha.size, axis=1)
    ci = np.flatnonzero(calc)
    lo_o[ci], hi_o[ci] = _exact_windows(m[ci], s, bp[ci], bq[ci], u[ci], v[ci], alpha, width, tail_tol, m_top,
                                        (lo_t[ci], hi_t[ci]))
    # groups of consecutive orders (the windows drift apart as the tilt grows with alpha), each
    # summed over the union of its windows; the terms that do not depend on the order are
    # computed once for all. At most three groups, split where they save the most terms,
    # counting an overhead per group (the tails, the passes' set-up)
    na = alpha.size
    if na == 1:  # (one order: one group, what the search below returns then)
        return _exact_group(m, bp, bq, u, v, s, alpha, rel, tail_tol, max_window, lo_o, hi_o, [slice(0, 1)])
    # union[i, j]: width of the union of the windows of orders i .. j-1 (0 for j <= i), over a sample of
    # the entries (cost only), all (i, j) at once: running max / min along k >= i of the (i, k) triangle
    lo_s, hi_s = lo_o[rows], hi_o[rows]
    tri = np.arange(na)[None, :] >= np.arange(na)[:, None]  # (i, k): k >= i
    run_hi = np.maximum.accumulate(np.where(tri[None], hi_s[:, None, :], -np.inf), axis=2)
    run_lo = np.minimum.accumulate(np.where(tri[None], lo_s[:, None, :], np.inf), axis=2)
    union = np.zeros((na, na + 1))
    union[:, 1:] = np.where(tri, (run_hi - run_lo).max(axis=0) + 1.0, 0.0)
    idx = np.arange(na + 1)
    cost = (idx[None, :] - idx[:na, None]) * union * m.size + _GROUP_COST
    # candidates in the order (0, na); per first cut i = 1 .. na-1: (0, i, na), then the best (0, i, j, na):
    # the first least one (ties: the earliest, as a sequential scan keeping strict improvements)
    ii = np.arange(1, na)
    two = cost[0, ii] + cost[ii, na]
    three = cost[0, :na, None] + cost[:, :na] + cost[None, :na, na]  # (i, j): cuts at i and j
    three = np.where(tri & ~np.eye(na, dtype=bool), three, np.inf)[ii]  # j > i
    jj = np.argmin(three, axis=1)
    cand = np.empty(2 * ii.size + 1)
    cand[0] = cost[0, na]
    cand[1::2] = two
    cand[2::2] = three[np.arange(ii.size), jj]
    k = int(np.argmin(cand))
    cuts: tuple[int, ...] = (0, na) if k == 0 else (0, int(ii[(k - 1) // 2]), na) if k % 2 else (
        0, int(ii[(k - 2) // 2]), int(jj[(k - 2) // 2]), na)
    ogroups = [slice(a, b) for a, b in zip(cuts[:-1], cuts[1:])]
    return _exact_group(m, bp, bq, u, v, s, alpha, rel, tail_tol, max_window, lo_o, hi_o, ogroups)


def _side_array(side: int | np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``side`` (one for all, or one per entry) as a read-only float array of ``shape``: a float array of that shape
    itself, else ``np.broadcast_to`` (the same values, without its call where not needed)."""
    if isinstance(side, np.ndarray) and side.dtype == np.float64 and side.shape == shape:
        return side
    return np.broadcast_to(np.asarray(side, dtype=float), shape)


def _log_geometric(log_rho: np.ndarray, count: np.ndarray) -> np.ndarray:
    """``log(rho + rho^2 + ... + rho^count)`` for any ``rho > 0`` (stable), ``-inf`` for ``count = 0``."""
    if (isinstance(log_rho, np.ndarray) and isinstance(count, np.ndarray) and log_rho.dtype == count.dtype == np.float64
            and log_rho.ndim >= 1 and log_rho.shape == count.shape):
        lr, n, shape = log_rho, count, log_rho.shape  # (the arrays themselves, only read: what the line below gives)
    else:
        lr, n = np.broadcast_arrays(np.atleast_1d(np.asarray(log_rho, dtype=float)), np.atleast_1d(np.asarray(count, dtype=float)))
        shape = np.broadcast_shapes(np.shape(log_rho), np.shape(count))  # (scalars too: the masked assignments need arrays)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        z = n * lr
        out = lr + np.log(-np.expm1(z)) - np.log(-np.expm1(lr))  # rho < 1 (most elements; the others replaced below)
        pos = lr > 0.0
        if pos.any():  # rho > 1: log((rho^n - 1)/(1 - 1/rho)), computed only there
            lp_, zp = lr[pos], z[pos]
            out[pos] = lp_ + zp + np.log(-np.expm1(-zp)) - lp_ - np.log(-np.expm1(-lp_))
        rest = ~(lr < 0.0) & ~pos  # rho = 1 (or nan)
        if rest.any():
            out[rest] = np.log(n[rest])
    tiny = np.abs(lr) < 1e-300
    if tiny.any():  # (the same values as np.where over every element: the log at these only)
        out[tiny] = np.log(np.maximum(n[tiny], 1e-300))
    if not np.isfinite(out).all():  # (out is this call's own array: nan to +inf, +-inf to +-max; a no-op if all finite)
        np.nan_to_num(out, copy=False, nan=np.inf)
    out[n <= 0.0] = -np.inf
    return out.reshape(shape)


#: Pieces of a tail in the geometric bound of :func:`_log_tail_f`.
_TAIL_PIECES = 16
#: The finer cuts (fractions of the tail from the window's edge) where the 16 equal pieces are too coarse
#: (:func:`_window_tail`): those 16 plus quarter-octave cuts towards both ends of the tail.
_TAIL_GEO = 2.0 ** np.arange(-12.0, -0.99, 0.25)
_TAIL_FRACS = np.unique(np.concatenate(([0.0, 1.0], _TAIL_GEO, 1.0 - _TAIL_GEO, np.arange(1, _TAIL_PIECES) / _TAIL_PIECES)))


def _log_tail_f(edge: np.ndarray, m: np.ndarray, s: float, side: int | np.ndarray, u: np.ndarray, v: np.ndarray,
                bp: np.ndarray, bq: np.ndarray, alpha: np.ndarray, gidx: np.ndarray, log_t_edge: np.ndarray,
                pieces: int = _TAIL_PIECES, fracs: np.ndarray | None = None) -> np.ndarray:
    """Upper bound on ``log sum_{a beyond edge} M(a) f(x_a)`` (``side = 1``: ``a > edge``;
    ``-1``: ``a < edge``; or one side per entry), entries x orders, from ``log_t_edge >= log M(edge) f(x_edge)``;
    ``edge`` is given per entry and group of orders (``gidx``: each order's group).

    The tail is cut into ``pieces`` equal pieces, or at the given fractions ``fracs`` of it (increasing, from 0 at
    the edge to 1 at the far end: any cuts serve, the bound below holds piece by piece; empty pieces add nothing). On
    a piece ``[b, b']`` the ratio of consecutive terms is at most the binomial ratio at the piece's inner end (it
    decreases outwards) times ``exp(max phi' / m)`` over the piece, where ``phi' = alpha bp/p +
    (1-alpha) bq/q`` and each of ``bp/p``, ``bq/q`` decreases in ``x`` (so the bound takes
    each at its own end of the piece). Hence the terms of the piece are at most a geometric
    sequence from the bound at its start, and the bound at the next piece's start follows.
    """
    b = _tail_cuts(edge, m, side, pieces, fracs)
    return _logsumexp(_tail_pieces(b, m, s, side, u, v, bp, bq, alpha, gidx, log_t_edge), axis=2)


def _tail_cuts(edge: np.ndarray, m: np.ndarray, side: int | np.ndarray, pieces: int = _TAIL_PIECES,
               fracs: np.ndarray | None = None, far: np.ndarray | None = None) -> np.ndarray:
    """The cuts ``b`` (entries x groups x (pieces + 1)) of :func:`_log_tail_f`: from ``edge`` towards ``far`` (per
    entry and group; default the end of the support, ``m`` for ``side = 1``, 0 for ``-1``), at the fractions of the
    way (rounded outwards; the last is ``far`` itself)."""
    mm = m[:, None, None]
    sgn = _side_array(side, (m.size,))[:, None, None]
    up3 = sgn > 0.0
    far3 = np.where(up3, mm, 0.0) if far is None else far[:, :, None]
    frac = np.arange(pieces + 1, dtype=float) / pieces if fracs is None else fracs
    e3 = edge[:, :, None]
    b = e3 + (far3 - e3) * frac
    b = np.where(up3, np.floor(b), np.ceil(b))
    b[:, :, -1] = far3[:, :, 0]
    return b


def _tail_pieces(b: np.ndarray, m: np.ndarray, s: float, side: int | np.ndarray, u: np.ndarray, v: np.ndarray,
                 bp: np.ndarray, bq: np.ndarray, alpha: np.ndarray, gidx: np.ndarray, log_t_edge: np.ndarray
                 ) -> np.ndarray:
    """Per piece ``[b_j, b_(j+1)]`` of the cuts ``b`` (entries x groups x (pieces + 1), monotone in the direction
    ``side``, ``b_0`` the edge), an upper bound on ``log sum M(a) f(x_a)`` over the ``|b_(j+1) - b_j|`` terms beyond
    ``b_j`` up to ``b_(j+1)`` (entries x orders x pieces; ``-inf`` for empty pieces), from ``log_t_edge >= log M(b_0)
    f(x_(b_0))`` (the argument of :func:`_log_tail_f`)."""
    ne, na = log_t_edge.shape
    mm = m[:, None, None]
    sgn = _side_array(side, (ne,))[:, None, None]
    up3 = sgn > 0.0
    inner, outer = b[:, :, :-1], b[:, :, 1:]  # entries x groups x pieces
    count = np.abs(outer - inner)
    ls = math.log(s) - math.log1p(-s)
    u3, v3, bp3, bq3 = u[:, None, None], v[:, None, None], bp[:, None, None], bq[:, None, None]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # side 1: ratio M(a+1)/M(a) at the inner end, phi' <= alpha bp/p(x_in) + (1-alpha) bq/q(x_out);
        # side -1: ratio M(a-1)/M(a) at the inner end, -phi' <= -(alpha bp/p(x_in) + (1-alpha) bq/q(x_out))
        log_rm = np.where(up3, np.log((mm - inner) / (inner + 1.0)) + ls, np.log(inner / (mm - inner + 1.0)) - ls)
        # sp_ = bp/p = bp / (u x_p / s + (1 - u)(1 - x_p) / (1 - s)) at x_p = inner / m, sq_ = bq/q likewise from v at
        # x_q = outer / m, as one stacked pass (the same exactly rounded operations in the same order: the same values)
        x_pq = _stack0(inner, outer) / mm
        uv = _stack0(u3, v3)
        sp_, sq_ = _stack0(bp3, bq3) / (uv * x_pq / s + (1.0 - uv) * (1.0 - x_pq) / (1.0 - s))
        # (entries x orders x pieces, in place: the same operations on the same operands as the expressions in the
        # comments, products and sums commuted only, so the same values; ~110 ns an element before, 98 pieces of
        # 1178 counts x 2 orders of a slab's upper tails at eps0 = 6, n = 3.16e6 took 26 ms)
        al = alpha[None, :, None]
        log_rho = sp_[:, gidx, :]
        log_rho *= al
        tmp = sq_[:, gidx, :]
        tmp *= 1.0 - al
        log_rho += tmp
        log_rho *= sgn  # dphi = sgn (al bp/p + (1 - al) bq/q)
        log_rho /= mm
        log_rho += log_rm[:, gidx, :]  # log_rho = log_rm + dphi / m
        np.abs(log_rho, out=tmp)
        tmp += 1.0
        tmp *= 1e-12
        log_rho += tmp  # + 1e-12 (1 + |log_rho|)
        log_rho[np.isnan(log_rho)] = np.inf
        count = count[:, gidx, :]
        empty = ~(count > 0.0)
        steps = np.multiply(count, log_rho)
        steps[empty] = 0.0  # (an empty piece: nothing, the next starts here)

        def before(x: np.ndarray) -> np.ndarray:  # the sum over the pieces before each one
            out = np.empty((ne, na, x.shape[2]))
            out[:, :, 0] = 0.0
            np.cumsum(x[:, :, :-1], axis=2, out=out[:, :, 1:])
            return out

        terms = before(steps)
        terms += log_t_edge[:, :, None]  # starts
        geo = _log_geometric(log_rho, count)
        terms += geo
        # the rounding of the running sum (P + 1 additions of the steps, each rounded once, and the edge's and the
        # series' logs): 2 u (P + 3) times the sum of the magnitudes (a piece came out 4.5e-12 below its 50-digit
        # value at log ~ -1.5e5, one ulp being 2.9e-11: read-only review of 5c7fadf)
        np.abs(steps, out=steps)
        mag = before(steps)
        mag += np.abs(log_t_edge)[:, :, None]
        np.abs(geo, out=geo)
        mag += geo
        mag *= 2.0 * _U * (steps.shape[2] + 3)
        np.add(terms, mag, out=terms, where=np.isfinite(terms))
    terms[np.isnan(terms)] = np.inf
    terms[empty] = -np.inf
    return terms


#: The cuts of :func:`_log_tail_split`: those of :data:`_TAIL_FRACS` and 256 equal pieces (the 16 equal pieces of
#: _TAIL_FRACS were ~300 terms each at m ~ 5000, where the terms fall, then rise to a second bump inside the tail).
_SPLIT_FRACS = np.unique(np.concatenate((_TAIL_FRACS, np.arange(0, 257) / 256)))


def _log_tail_split(edge: np.ndarray, m: np.ndarray, s: float, side: int | np.ndarray, u: np.ndarray,
                    v: np.ndarray, bp: np.ndarray, bq: np.ndarray, alpha: np.ndarray, gidx: np.ndarray,
                    log_t_edge: np.ndarray, log_t_end: np.ndarray, fracs: np.ndarray = _SPLIT_FRACS) -> np.ndarray:
    """Upper bound on ``log sum_{a beyond edge} M(a) f(x_a)``, as :func:`_log_tail_f`, for tails whose terms fall and
    then rise again towards the end of the support ``E`` (``m`` for ``side = 1``, 0 for ``-1``; a large order whose
    ``q`` is small at that end: eps0 = 4, n = 3e5, alpha = 1024, m = 5391: the terms fall from the window's edge
    4047 to a valley near 5115, then rise to e^356 at a = m, and the bound from the edge alone, its term ratios taken
    at each piece's far end, was e^528 against a true tail of e^367.5: the window was widened twice to a = m).

    *Derived*: cut the tail at ``edge = b_0, b_1, .., b_P = E - side`` (the cuts of :func:`_tail_cuts`); for every
    ``j`` the tail is the terms up to ``b_j`` plus those beyond it, so ``tail <= F_j + B_j`` with ``F_j`` the sum of the
    first ``j`` pieces' bounds of :func:`_tail_pieces` from the edge (its geometric bound, piece by piece) and ``B_j``
    the same bound run from the end inwards: its start ``log_t_end >= log M(E) f(x_E)`` (the term at ``E`` itself),
    then the pieces between the cuts ``b_P + side = E, .., b_0 + side`` in the direction ``-side`` (the piece from
    ``b_(i+1) + side`` inwards holds the terms ``b_(i+1) .. b_i + side``: the same terms as the edge's piece ``i``; the
    proof of :func:`_log_tail_f` holds in either direction: the binomial ratio towards the bulk is largest at the
    piece's inner end, and ``bp/p``, ``bq/q`` are monotone in ``x``), summed over the pieces beyond ``b_j``. The least
    of the ``P + 1`` sums is returned. Every term is ``>= 0``. Rounding: the running sums (``logaddexp``, at most
    ``2 P + 2`` of them, each within a few ulps of its result's magnitude) are charged ``1e-10 (1 + |bound|)``."""
    ne = m.size
    sgn = _side_array(side, (ne,))
    end = np.where(sgn > 0.0, m, 0.0)
    far = np.broadcast_to((end - sgn)[:, None], edge.shape)
    # (an edge at or beyond E - side: no pieces, only the term at E; such a tail is bounded there alone)
    b = _tail_cuts(edge, m, sgn, fracs=fracs, far=np.where(sgn[:, None] > 0.0, np.maximum(far, edge),
                                                           np.minimum(far, edge)))
    out = _tail_pieces(b, m, s, sgn, u, v, bp, bq, alpha, gidx, log_t_edge)  # entries x orders x pieces
    inw = _tail_pieces(b[:, :, ::-1] + sgn[:, None, None], m, s, -sgn, u, v, bp, bq, alpha, gidx, log_t_end)
    with np.errstate(invalid="ignore"):
        pre = np.concatenate((np.full(out.shape[:2] + (1,), -np.inf), np.logaddexp.accumulate(out, axis=2)), axis=2)
        suf = np.logaddexp(log_t_end[:, :, None], np.concatenate(
            (np.full(out.shape[:2] + (1,), -np.inf), np.logaddexp.accumulate(inw, axis=2)), axis=2))
        # split after piece j (j = 0 .. P): the first j pieces from the edge, the last P - j from the end and E
        tot = np.logaddexp(pre, suf[:, :, ::-1])
        tot = np.where(np.isnan(tot), np.inf, tot)
        best = np.min(tot, axis=2)
    return best + 1e-10 * (1.0 + np.abs(best))


def _window_tail(edge: np.ndarray, mg: np.ndarray, s: float, side: int | np.ndarray, u: np.ndarray, v: np.ndarray,
                 bp: np.ndarray, bq: np.ndarray, alpha: np.ndarray, gidx: np.ndarray, rel: float, log_tol: float,
                 w_est: np.ndarray, open_: np.ndarray) -> np.ndarray:
    """Upper bound on ``log sum_{a beyond edge} M(a) g(a/m)`` (``side = 1``: ``a > edge``, ``-1``:
    ``a < edge``; or one side per entry), entries x orders (see :func:`_exact_excess`); ``edge`` and ``open_`` (false:
    nothing beyond, the bound is ``-inf``) per entry and group of orders (``gidx``: each
    order's group); ``w_est`` (the window sums) only decides where one geometric piece is
    too coarse."""
    ls = math.log(s) - math.log1p(-s)
    m2 = mg[:, None]
    xe_g = edge / m2
    ye_g = xe_g - s
    ye = ye_g[:, gidx]
    sgn = _side_array(side, mg.shape)[:, None]
    up = sgn > 0.0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # side 1 (a > hi): binomial ratio M(a+1)/M(a) at a = hi; side -1 (a < lo): M(a-1)/M(a) at a = lo
        ratio_m = np.where(up, (m2 - edge) / (edge + 1.0) * math.exp(ls), edge / (m2 - edge + 1.0) * math.exp(-ls))
        y_end = np.where(up, 1.0 - s, -s)
        ratio_m = ratio_m[:, gidx]
        log_rm = _log_tail_ratio(ratio_m, np.zeros(1), m2)
        l_e, err_e = _log_pmf_anchor(edge, np.broadcast_to(m2, edge.shape), s, rel)
        log_me = (l_e + err_e + 1e-12)[:, gidx]  # >= log M(edge)
        # (x as (edge, m): 1 - x exact up to the division where p < 1/2, see _x_and_complement)
        # (err_y = None: the values only, the same as with error bounds, which were not used)
        lpe = _log_first_user(bp[:, None], u[:, None], (edge, m2), ye_g, s, None)[0][:, gidx]
        lqe = _log_first_user(bq[:, None], v[:, None], (edge, m2), ye_g, s, None)[0][:, gidx]
        ell_e = lpe * alpha + lqe * (1.0 - alpha)
        ell_e = ell_e + 1e-12 * (1.0 + np.abs(ell_e))
        t_edge = log_me + ell_e
        tail_f = _log_tail_f(edge, mg, s, sgn[:, 0], u, v, bp, bq, alpha, gidx, t_edge, 1)
        fine = np.flatnonzero((tail_f > log_tol + w_est).any(axis=1))  # one piece too coarse here
        if fine.size:
            # the 16 pieces only where that row and order asked for them (as below: each row's bound independent of the
            # others'), computed for the orders some row asked at (was every order of those rows: measured 7 of 40
            # orders asked, ~10 % of the pairs, at eps0 = 6, n = 3.16e6; either bound is certified)
            ask = ~(tail_f[fine] <= log_tol + w_est[fine])
            cols = np.flatnonzero(ask.any(axis=0))
            rc = np.ix_(fine, cols)
            e_g, g_c = _used_groups(edge[fine], gidx[cols])
            tail_f[rc] = np.where(ask[:, cols], _log_tail_f(e_g, mg[fine], s, sgn[fine, 0], u[fine], v[fine],
                                                            bp[fine], bq[fine], alpha[cols], g_c, t_edge[rc]),
                                  tail_f[rc])
        bpg, bqg = bp[:, None], bq[:, None]
        lin_e = _linear_excess(bpg, bqg, alpha, ye)  # (once: also in lg_e below)
        extra = np.maximum(lin_e, _linear_excess(bpg, bqg, alpha, y_end))
        tail_x = np.minimum(0.0, log_me + log_rm) + np.log(np.maximum(extra, 1e-320))  # (a probability: <= 1)
        tail_x = np.where(extra > 0.0, tail_x, -np.inf)
        tail = np.logaddexp(tail_f, tail_x)
        # second bound, of the scale of g itself (the first is of the scale of f, far
        # too large when g ~ g''(s) y^2 / 2 is tiny): g(y) <= y^2/2 max_[0,y] g'' with
        # g'' = alpha(alpha-1)(bp-bq)^2 p^(alpha-2) q^(-alpha-1), each factor at most
        # max(1, its value at y) on [0, y]; the terms' ratio beyond the edge is at most
        # the binomial ratio x ((|y_e| + 1/m)/|y_e|)^2 x the growth of those factors
        # (their log-slopes are monotone in y: largest at an end of the tail)
        slopes = []
        for yy in (ye, y_end):
            sp_ = sgn * (alpha - 2.0) * bpg / (1.0 + bpg * yy)
            sq_ = -sgn * (alpha + 1.0) * bqg / (1.0 + bqg * yy)
            slopes.append((np.maximum(sp_, 0.0), np.maximum(sq_, 0.0)))
        slope = np.maximum(slopes[0][0], slopes[1][0]) + np.maximum(slopes[0][1], slopes[1][1])
        quad = 2.0 * np.log1p(1.0 / (m2 * np.abs(ye))) * m2  # per-step growth of y^2, times m
        log_rg = _log_tail_ratio(ratio_m, slope + quad, m2)
        log_g2 = (np.log(alpha * (alpha - 1.0)) + 2.0 * np.log(np.abs(bp - bq))[:, None]
                  + np.maximum((alpha - 2.0) * lpe, 0.0) + np.maximum(-(alpha + 1.0) * lqe, 0.0))
        tail_g = log_me + 2.0 * np.log(np.abs(ye)) - math.log(2.0) + log_g2 + log_rg
        tail_g = tail_g + 1e-12 * (1.0 + np.abs(tail_g))
        tail_g = np.where(sgn * ye > 0.0, tail_g, np.inf)  # needs s inside the window
        tail_g = np.where(np.isnan(tail_g), np.inf, tail_g)
        # third bound, for tails that reach across s (the side facing the binomial's bulk at
        # large orders, where the others fail): g is convex, so on the tail it is at most its
        # larger end value, g <= f + (-1 - f'(s) y)_+ there, and the tail's probability is <= 1
        lg_far = _log_g_ends(up, 1.0, bp, bq, u, v, s, alpha)
        lg_e = np.logaddexp(ell_e, np.log(lin_e))
        tail_c = np.maximum(lg_e, lg_far) + np.minimum(0.0, log_me + log_rm)
        other = np.minimum(np.where(np.isnan(tail_c), np.inf, tail_c), tail_g)
        tail = np.where(open_[:, gidx], np.minimum(tail, other), -np.inf)
        # rows whose tail is still too large for the window, where the pieces of the first bound decide: again on the
        # pieces of _TAIL_FRACS, finer towards both ends of the tail (the log-ratio of the terms changes fastest next
        # to the window, and where p or q nears 0 at the far end: eps0 = 6, n = 1e6, alpha = 160, a window of 400
        # terms at c ~ 2300 whose upper tail, at most e^-12 of its sum, the 16 equal pieces bounded by e^476; its
        # window was widened twice to 1350 terms)
        if fine.size:
            redo = tail[fine] > log_tol + w_est[fine]  # (also where the 16 pieces gave inf: their sums overflowed)
            finer, cols = fine[redo.any(axis=1)], np.flatnonzero(redo.any(axis=0))  # (only those orders)
            if finer.size:
                rc = np.ix_(finer, cols)
                e_g, g_c = _used_groups(edge[finer], gidx[cols])
                tf = np.minimum(tail_f[rc], _log_tail_f(
                    e_g, mg[finer], s, sgn[finer, 0], u[finer], v[finer], bp[finer], bq[finer], alpha[cols],
                    g_c, t_edge[rc], fracs=_TAIL_FRACS))
                new = np.where(open_[finer][:, gidx[cols]], np.minimum(np.logaddexp(tf, tail_x[rc]), other[rc]), -np.inf)
                # (only where that row and order asked for it: each row's bound stays independent of the others')
                tail[rc] = np.where(redo[np.ix_(redo.any(axis=1), cols)], new, tail[rc])
                # still too large: bounded from both ends too (:func:`_log_tail_split`: terms rising again towards the
                # end of the support), where that row and order asked for it; the term at the end E bounded as the
                # edge's (Boost's pmf or the gammaln bracket, with its error; log f with the same 1e-12 margin)
                in_finer = np.zeros(tail.shape[0], dtype=bool)
                in_finer[finer] = True
                again = open_[:, gidx] & (tail > log_tol + w_est) & in_finer[:, None]
                r2, c2 = np.flatnonzero(again.any(axis=1)), np.flatnonzero(again.any(axis=0))
                if r2.size:
                    rc2 = np.ix_(r2, c2)
                    end_f = np.where(sgn[r2, 0] > 0.0, mg[r2], 0.0)
                    l_n, err_n = _log_pmf_anchor(end_f, mg[r2], s, rel)
                    x_n = end_f / mg[r2]
                    lpn = _log_first_user(bp[r2], u[r2], x_n, x_n - s, s, None)[0][:, None]
                    lqn = _log_first_user(bq[r2], v[r2], x_n, x_n - s, s, None)[0][:, None]
                    ell_n = lpn * alpha[c2] + lqn * (1.0 - alpha[c2])
                    ell_n = ell_n + 1e-12 * (1.0 + np.abs(ell_n))
                    t_end = np.where(np.isnan(ell_n), np.inf, (l_n + err_n + 1e-12)[:, None] + ell_n)
                    e_g, g_c = _used_groups(edge[r2], gidx[c2])
                    sp = _log_tail_split(e_g, mg[r2], s, sgn[r2, 0], u[r2], v[r2], bp[r2], bq[r2], alpha[c2],
                                         g_c, t_edge[rc2], t_end)
                    new2 = np.minimum(tail[rc2], np.logaddexp(sp, tail_x[rc2]))
                    tail[rc2] = np.where(again[rc2], new2, tail[rc2])
    return np.where(np.isnan(tail), np.inf, tail)


def _used_groups(edge: np.ndarray, gidx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The columns (groups of orders) of ``edge`` that the orders' group indices ``gidx`` use, and those indices
    renumbered for them: the tail bounds compute per group before they compute per order (the same values, for the
    groups used only)."""
    used, inv = np.unique(gidx, return_inverse=True)
    return edge[:, used], inv.ravel()


def _linear_excess(bp: np.ndarray, bq: np.ndarray, alpha: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Upper bound on ``(-1 - f'(s) y)_+`` (entries x orders; ``bp, bq`` columns, ``y`` broadcast against
    them), ``f'(s) = alpha bp + (1 - alpha) bq``: the computed ``d`` is within ``err_d = 6 u alpha (|bp| +
    |bq|)`` of it (as in :func:`_window_orders`) and ``-1 - d y`` within ``2 u |d y| + u`` of its value at
    ``d``, so ``(-1 - d y)_+ + (err_d + 2 u |d|) |y| + u`` bounds it (times ``1 + 1e-12``; review of the
    charge, which left out ``err_d`` and the product's rounding)."""
    d = alpha * bp + (1.0 - alpha) * bq
    err = 6 * _U * alpha * (np.abs(bp) + np.abs(bq)) + 2 * _U * np.abs(d)
    return (np.maximum(-1.0 - d * y, 0.0) + err * np.abs(y) + _U) * (1.0 + 1e-12)


def _log_g_bound(bp: np.ndarray, bq: np.ndarray, u: np.ndarray, v: np.ndarray, s: float, alpha: np.ndarray,
                 x: float) -> np.ndarray:
    """Upper bound on ``log g(x)`` at an end ``x`` in {0, 1} (entries x orders), from ``g <= f +
    (-1 - f'(s) (x - s))_+``: ``p(1) = u/s``, ``q(1) = v/s``, ``p(0) = (1-u)/(1-s)``, ``q(0) = (1-v)/(1-s)``."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if x == 1.0:
            lp, lq = np.log(u / s), np.log(v / s)
        else:
            lp, lq = np.log((1.0 - u) / (1.0 - s)), np.log((1.0 - v) / (1.0 - s))
        ell = alpha * lp[:, None] + (1.0 - alpha) * lq[:, None]
        ell = np.where(np.isneginf(lp)[:, None], -np.inf, ell)  # p = 0: f = 0
        ell = ell + 1e-12 * (1.0 + np.abs(ell))
        lin = np.log(_linear_excess(bp[:, None], bq[:, None], alpha, np.asarray(x - s)))
        out = np.logaddexp(ell, lin)
    return np.where(np.isnan(out), np.inf, out)


def _log_g_ends(first: np.ndarray, x_first: float, bp: np.ndarray, bq: np.ndarray, u: np.ndarray, v: np.ndarray,
                s: float, alpha: np.ndarray) -> np.ndarray:
    """``np.where(first, _log_g_bound(.., x_first), _log_g_bound(.., 1 - x_first))`` (entries x orders), each end's bound
    computed only where some element takes it (the values np.where would pick)."""
    if first.all():
        return _log_g_bound(bp, bq, u, v, s, alpha, x_first)
    if not first.any():
        return _log_g_bound(bp, bq, u, v, s, alpha, 1.0 - x_first)
    return np.where(first, _log_g_bound(bp, bq, u, v, s, alpha, x_first), _log_g_bound(bp, bq, u, v, s, alpha, 1.0 - x_first))


def _exact_group(m: np.ndarray, bp: np.ndarray, bq: np.ndarray, u: np.ndarray, v: np.ndarray, s: float,
                 alpha: np.ndarray, rel: float, tail_tol: float, max_window: int, lo: np.ndarray, hi: np.ndarray,
                 ogroups: list[slice]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_exact_excess` from the windows ``[lo, hi]`` (entries x orders): each group of
    orders of ``ogroups`` is summed over the union of its orders' windows (one slice of a
    chunk's terms), and its tails are bounded beyond that slice; windows whose tails are
    too large are widened and summed again, only for the groups whose tails were too large (the
    others keep their certified brackets: at eps0 = 6, n = 3.16e6 the large orders' windows were
    widened twice towards a = m, and every pass summed all 40 orders again)."""
    ne, na = m.size, alpha.size
    ng = len(ogroups)
    out_up = np.full((ne, na), -np.inf)
    out_lo = np.full((ne, na), -np.inf)
    zero = bp == bq  # u = v: identical laws, K = 1 exactly
    lo, hi = lo.copy(), hi.copy()
    work = _scratch(_EXACT_CHUNK)  # reused by every chunk (and every call of this thread)
    log_tol = math.log(tail_tol)
    gidx = np.zeros(na, dtype=np.int64)  # each order's group
    for k, cols in enumerate(ogroups):
        gidx[cols] = k
    pending = np.zeros((ne, ng), dtype=bool)  # the groups of each entry still to be summed
    pending[~zero] = True
    todo = np.flatnonzero(~zero)
    for _ in range(200):
        # each entry's union window, over the orders of its pending groups
        mask = pending[:, gidx]
        with np.errstate(invalid="ignore"):
            lo_u = np.where(mask, lo, np.inf).min(axis=1)
            hi_u = np.where(mask, hi, -np.inf).max(axis=1)
        todo = todo[(hi_u[todo] - lo_u[todo] + 1.0) <= max_window]
        if todo.size == 0:
            break
        # entries with the same pending groups share chunks (widest first within each)
        key = pending[todo] @ (1 << np.arange(ng))
        order = todo[np.lexsort((lo_u[todo] - hi_u[todo], key))]
        key = pending[order] @ (1 << np.arange(ng))
        chunks = []
        i = 0
        while i < order.size:
            width = int(hi_u[order[i]] - lo_u[order[i]] + 1.0)
            gsel = pending[order[i]]  # the chunk's groups
            nsel = int(gsel[gidx].sum())  # and their orders
            per = max(1, _EXACT_CHUNK // max(width * nsel, 1))
            grp = order[i:i + per]
            grp = grp[key[i:i + grp.size] == key[i]]
            # a chunk shares its widest window: entries much narrower go to a later chunk once
            # their padding costs more than a chunk's overhead (measured: ~3e5 terms)
            waste = np.cumsum((width - (hi_u[grp] - lo_u[grp] + 1.0)) * nsel)
            grp = grp[:max(int(np.searchsorted(waste, 3e5, side="right")), 1)]
            i += grp.size
            work = _scratch(grp.size * width * nsel)  # the thread's arrays, grown when too small
            mg = m[grp]
            start = np.clip(lo_u[grp], 0.0, np.maximum(mg - width + 1.0, 0.0))
            slices = []
            for k, cols in enumerate(ogroups):  # the slice of the chunk's terms that holds every window of the group
                if not gsel[k]:
                    slices.append((cols, 0, 1))  # not summed (a placeholder: its tails are not used)
                    continue
                o = int(np.clip((lo[grp, cols].min(axis=1) - start).min(), 0, width - 1))
                e = int(np.clip((hi[grp, cols].max(axis=1) - start).max(), o, width - 1))
                slices.append((cols, o, e - o + 1))
            w_up, w_lo, w_est = _exact_chunk(mg, start, width, s, u[grp], v[grp], alpha, rel,
                                             [sl for sl, g in zip(slices, gsel) if g], work)
            offs = np.array([float(o) for _, o, _ in slices])
            wids = np.array([float(w) for _, _, w in slices])
            # each group's tails beyond its slice
            edge_hi = np.minimum(start[:, None] + offs + wids - 1.0, mg[:, None])
            edge_lo = np.minimum(start[:, None] + offs, mg[:, None])
            chunks.append((grp, width, slices, np.where(mask[grp], w_up, -np.inf), np.where(mask[grp], w_lo, -np.inf),
                           np.where(mask[grp], w_est, np.inf), edge_hi, edge_lo,
                           (edge_hi < mg[:, None]) & gsel, (edge_lo > 0.0) & gsel, gsel))
        # the tails of every chunk, all groups and both sides, in one call (per entry and side the same
        # values as one call per chunk: the bound is computed row by row; a side with nothing beyond the
        # window in a chunk, or a group not summed, gives -inf there, which adds nothing below)
        rows = np.concatenate([c[0] for c in chunks])
        e_hi, e_lo, o_hi, o_lo, w_e = (np.concatenate([c[k] for c in chunks]) for k in (6, 7, 8, 9, 5))
        present = [sd for sd, op in ((1, o_hi), (-1, o_lo)) if op.any()]
        tails_all = {}
        if present:
            def both(x: np.ndarray) -> np.ndarray:
                return np.concatenate([x] * len(present))
            nr = rows.size
            sides = np.concatenate([np.full(nr, float(sd)) for sd in present])
            e_all = np.concatenate([e_hi if sd == 1 else e_lo for sd in present])
            o_all = np.concatenate([o_hi if sd == 1 else o_lo for sd in present])
            t_all = _window_tail(e_all, both(m[rows]), s, sides, both(u[rows]), both(v[rows]), both(bp[rows]),
                                 both(bq[rows]), alpha, gidx, rel, log_tol, both(w_e), o_all)
            for k, sd in enumerate(present):
                tails_all[sd] = t_all[k * nr:(k + 1) * nr]
        r0 = 0
        retry = []
        for grp, width, slices, w_up, w_lo, w_est, edge_hi, edge_lo, open_hi, open_lo, gsel in chunks:
            mg = m[grp]
            rs = slice(r0, r0 + grp.size)
            r0 += grp.size
            t_up = np.full((grp.size, na), -np.inf)
            ok = np.ones((grp.size, na), dtype=bool)
            for side in present:
                edge, open_ = (edge_hi, open_hi) if side == 1 else (edge_lo, open_lo)
                if not open_.any():
                    continue
                tail = tails_all[side][rs]
                with np.errstate(over="ignore", invalid="ignore"):
                    t_up = np.where(np.isposinf(tail), np.inf, np.logaddexp(t_up, tail))
                bad = open_[:, gidx] & ~(tail <= log_tol + w_est)
                ok &= ~bad
                for k, (cols, _, w) in enumerate(slices):  # widen past the slice just summed
                    if not gsel[k]:
                        continue
                    side_bad = bad[:, cols].any(axis=1)[:, None]
                    # doubled (a window far too narrow, e.g. a large order's, needed 13 rounds of +25 %),
                    # as far as the room below max_window allows; never less than +25 % (work only: the
                    # tails are certified for any window)
                    grow = max(math.floor(0.25 * w) + 8.0, min(w + 8.0, math.floor(0.5 * (max_window - width))))
                    if side == 1:
                        hi[grp, cols] = np.where(side_bad, np.minimum(mg, edge[:, k] + grow)[:, None], hi[grp, cols])
                    else:
                        lo[grp, cols] = np.where(side_bad, np.maximum(0.0, edge[:, k] - grow)[:, None], lo[grp, cols])
            # the groups summed now whose tails were small enough: their brackets are final
            fin = np.stack([ok[:, cols].all(axis=1) for cols in ogroups], axis=1) & gsel
            sel = fin[:, gidx]
            out_up[grp] = np.where(sel, np.logaddexp(w_up, t_up), out_up[grp])
            out_lo[grp] = np.where(sel, w_lo, out_lo[grp])
            pending[grp] &= ~fin
            retry.append(grp[pending[grp].any(axis=1)])
        todo = np.concatenate(retry) if retry else np.zeros(0, dtype=np.int64)
    done = ~np.any(pending, axis=1)
    return out_up, out_lo, done


#: The first blocks of pairs with ``p0 = 0`` without slabs: those below this many sd under the clone count's mean
#: first, the others (at least ``_FIRST_MIN_REST`` of them) only at orders where they are at most ``_FIRST_SKIP`` of the
#: budget (:meth:`RenyiDirection._add_first_blocks`).
_FIRST_Z = 8.5
_FIRST_MIN_REST = 16
_FIRST_SKIP = 0.01
#: :meth:`RenyiDirection.bounds` stops its last-resort splits after this many such rounds in a row in which no
#: live order's relative gap shrank by ``_STALL_REL`` of it.
_STALL_ROUNDS = 5
_STALL_REL = 1e-3
#: ... and any refinement after this many rounds of any kind in a row without such progress (a guard:
#: splits that cannot narrow a floor-limited bracket, e.g. cells' Boost budgets, ran to ``max_rounds``
#: with ever more cells; work only, the bracket is certified wherever it stops)
_IDLE_ROUNDS = 12

#: The overhead of one more call of :func:`_exact_excess` (set-up, tails), in entry-orders.
_CLUSTER_COST = 200.0


def _order_clusters(need: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Groups ``(rows, orders)`` covering ``need`` (entries x orders, bool): each entry goes to a
    group whose orders (a range of consecutive orders) contain its needed ones. Entries start
    grouped by the range spanning their orders; two groups are merged (the union range) while
    that costs less than separate calls (entry-orders computed, plus :data:`_CLUSTER_COST` per call)."""
    ne, na = need.shape
    has = np.any(need, axis=1)
    cols = np.flatnonzero(np.any(need, axis=0))
    if ne * cols.size <= 2.0 * _CLUSTER_COST:  # small: one call over the union
        return [(np.flatnonzero(has), cols)] if cols.size else []
    first = np.argmax(need, axis=1)
    last = na - 1 - np.argmax(need[:, ::-1], axis=1)
    key = np.where(has, first * na + last, -1)
    keys, inv, cnt = np.unique(key, return_inverse=True, return_counts=True)
    inv = inv.ravel()
    sel = keys >= 0
    lo, hi, n_ = (keys[sel] // na).astype(np.int64), (keys[sel] % na).astype(np.int64), cnt[sel].astype(float)
    members = [[k] for k in np.flatnonzero(sel)]
    while lo.size > 1:
        cost = n_ * (hi - lo + 1) + _CLUSTER_COST
        mlo, mhi = np.minimum(lo[:, None], lo[None, :]), np.maximum(hi[:, None], hi[None, :])
        gain = cost[:, None] + cost[None, :] - ((n_[:, None] + n_[None, :]) * (mhi - mlo + 1) + _CLUSTER_COST)
        np.fill_diagonal(gain, -np.inf)
        k = int(np.argmax(gain))
        i, j = divmod(k, lo.size)
        if gain[i, j] <= 0.0:
            break
        lo[i], hi[i], n_[i] = min(lo[i], lo[j]), max(hi[i], hi[j]), n_[i] + n_[j]
        members[i] = members[i] + members[j]
        keep = np.arange(lo.size) != j
        lo, hi, n_ = lo[keep], hi[keep], n_[keep]
        members.pop(j)
    return [(np.flatnonzero(np.isin(inv, mem)), np.arange(a, b + 1)) for mem, a, b in zip(members, lo, hi)]


# ---------------------------------------------------------------------------------------
# Slabs of clone counts (pairs with p0 = 0): the kernels of many consecutive counts at once.
# ---------------------------------------------------------------------------------------

#: Slabs are used when all their points (clone counts times values of a) number at most this.
_SLAB_MAX_POINTS = 800_000
#: ... for pairs whose log likelihood ratio exceeds _SLAB_RECT_RATIO (``None``: the same), where the blocks of totals
#: at large orders need one kernel per count over hundreds of counts (measured, CPU, min of 5 interleaved processes:
#: eps0 = 2, n = 8859 / 1e4 / 31623: 57 / 51 / 55 -> 14 / 18 / 31 ms; 4, 68129: 86 -> 26; 3, 68129: 79 -> 62; 4,
#: 215443: 72 -> 60; 6, 464159: 47 -> 37). Orders whose slab would stay too wide from its clipped weights get none
#: (:func:`_slab_clip_floor`): without that, 4M points cost 3.16e4 / 4.64e4 at eps0 = 3 13 / 15 ms for slabs dropped
#: after their build
_SLAB_MAX_POINTS_WIDE: float | None = 1_600_000
#: ... for slabs of counts up to this and of at least _SLAB_WIDE_ORDERS orders only (measured: eps0 = 6, n = 2.15e6 /
#: 3.16e6 / 4.64e6, counts ~5000 .. 12000, slabs of the orders up to 256 .. 512 whose upper tails need the geometric
#: bounds at ~1000 .. 1400 counts, 30 .. 55 ms: 75 / 85 / 81 -> 81 / 107 / 126 ms with 2.4M points; eps0 = 2, n = 14678,
#: a 450k-point slab of orders 320, 384 of which one stays: 63 -> 75 ms)
_SLAB_WIDE_COUNT = 5000.0
_SLAB_WIDE_ORDERS = 3


#: ... and for pairs whose log likelihood ratio is at most _SLAB_MID_RATIO, _SLAB_MID_POINTS points for slabs of counts up to
#: _SLAB_MID_COUNT (measured, CPU, min of 2 .. 3 interleaved: eps0 = 3, n = 1e5 / 146780: 81 / 43 -> 61 / 34 ms; 2, 46416: 30
#: -> 24; the other n of eps0 = 2, 3 from 1e4 to 3.2e6 within noise; at eps0 = 4 no gain, n = 316228 62 -> 65 ms; at eps0
#: = 5, n = 1e6, 73 -> 78 and at 6, n = 2.15e6 / 3.16e6, 70 / 81 -> 79 / 98 ms: there the slabs' upper tails at the top
#: orders need the geometric bounds on 98 pieces at ~1000 .. 1200 counts, ~14 us per count and order against ~2 us at
#: eps0 = 4)
_SLAB_MID_RATIO = 3.5
_SLAB_MID_POINTS = 2_400_000
_SLAB_MID_COUNT = 9000.0


def _wide_limit(max_points: float, c2: float, orders: int, count: float = _SLAB_WIDE_COUNT) -> float:
    """The point limit of a slab of counts up to ``c2`` and ``orders`` orders, ``max_points`` that of its pair (for
    slabs of counts up to ``count``)."""
    return max_points if c2 <= count and orders >= _SLAB_WIDE_ORDERS else min(max_points, _SLAB_MAX_POINTS)
#: ... and planned only when the binomials' own rectangle has at most this share of that many points (beyond it the blocks
#: of totals, whose first round starts near their final partition, ``_fine_edges``, are cheaper or the plan finds no slab).
_SLAB_RECT = 0.4
_SLAB_RECT_RATIO = 1.5
#: ... and when every slab has at least this many counts, none above ``_SLAB_MAX_COUNT``.
_SLAB_MIN_ROWS = 16
_SLAB_MAX_COUNT = 200_000
#: Half-widths of a slab around an order's saddle point, in its standard deviations in c and x.
_SLAB_ZC = 6.0
_SLAB_ZX = 5.5
#: A slab reaches further in c (see :func:`_slab_plan`) for at most this many times its own points.
_SLAB_EXTEND = 1.0
#: An order whose slab bracket at level 0 is wider than this many of its budgets leaves the slab.
_SLAB_DROP_STUCK = 1.0
#: Finest cells: at least this many per standard deviation of x under the binomial at the slab's
#: largest count; an order starts at about ``_SLAB_START`` cells per standard deviation of x.
_SLAB_FINE = 128.0
#: At most 2^this finest cells.
_SLAB_MAX_LEVELS = 15
_SLAB_START = 16.0
#: Per order, the slab's gap is refined (finer cells) down to this share of the divergence's budget.
_SLAB_SHARE = 0.25
#: A slab of at most this many orders starts one level finer (measured: eps0 = 1, n = 3e3, the slab of alpha
#: 512 .. 1024 needed a second window, one level finer, for four of its five orders).
_SLAB_FEW = 8
#: Blocks of totals outside the slabs whose bounds without entries (mass times K(0) - 1, or the slab's
#: average above it) are together at most this share of an order's budget are not evaluated at first
#: at that order (see ``RenyiDirection.bounds``).
_SLAB_SKIP = 0.05
#: Entries not evaluated at an order are bounded from their own evaluated orders (:func:`_order_chord`), and the skip
#: rule above evaluates the first blocks' upper corners at one order first (see ``RenyiDirection.bounds``).
_ORDER_CHORD = True
#: Neighbouring orders share a slab when that costs at most this many points more than two slabs (pairs whose
#: log likelihood ratio is at most _SLAB_RECT_RATIO): a slab's fixed costs (its window, tails and set-up: ~1.5 ..
#: 2 ms at n ~ 10^3 .. 3e3, eps0 0.5 / 1) are those of about 2e5 points of the build at ~8 .. 10 ns each (was 2e4:
#: eps0 = 1, n = 1.47e3 .. 3.16e3 and eps0 = 0.5, n = 1e3 .. 1.5e3 built two slabs, 10 .. 25% slower, CPU). There
#: a merged group must stay within _SLAB_MAX_POINTS, else it would be dropped whole (eps0 = 1, n = 3.5e3: 0.9M
#: points, 14 -> 45 ms).
_SLAB_MERGE = 200_000.0
#: The same for larger ratios, where a group over the limit stays allowed (and is dropped whole): at eps0 = 2, n =
#: 3.16e4 .. 4.6e4 the blocks alone cost less than the largest slab within the limit (72 -> 96 ms with it, CPU).
#: Was 2e4 (slab100): with it the plan split the orders into three slabs where one costs ~5% more points, e.g.
#: eps0 = 2.5, n = 1e4: a 199k-point slab of alpha = 768 alone reaching down to c = 162, whose tails took the
#: geometric stage (27 ms) and still missed tail_tol, so the order left its slab after the build (curve 45 ms, 37
#: queries, against 6-8 at its neighbours in n). A slab's fixed cost (window, tails, set-up) for these pairs is that
#: of 1e5 .. 2e5 points of the build, as for the narrow ones. Measured (in-process CPU min of 3-5, interleaved,
#: ratio to one clones query): eps0 = 2.5, n = 1e4 36-39x -> 7x; 2.75, 1.47e4 23 -> 8x; 3, 3e4 20 -> 15x; 3.25, 2e4
#: 14 -> 6x; 5, 2e5 15 -> 8x; no cell of ~190 (eps0 1.5 .. 6, n 4e3 .. 3.2e6) worse beyond the runs' noise (+-1.5x).
#: 2e5 was worse at eps0 = 2, n = 1e4 (11 -> 17x), better at 2, 1.2e4 (28 -> 20x): left at 1.5e5. Below a clone count
#: mean of _SLAB_MERGE_WIDE_COUNT the old 2e4 stays (the slabs' rows are few, their tails cheap; no cell there moved
#: beyond noise, and tests/test_renyi_oracle.py's end-bound pair, clones eps0 = 2, n = 2000, keeps its plan of two slabs).
_SLAB_MERGE_WIDE = 150_000.0
_SLAB_MERGE_WIDE_SMALL = 20_000.0
_SLAB_MERGE_WIDE_COUNT = 500.0
#: For pairs whose log likelihood ratio exceeds _SLAB_MID_RATIO, an order whose slab tails' first bounds (Chernoff
#: times the largest g per piece, both piece sets) miss tail_tol of its sum leaves the slab instead of the geometric
#: stage (work only; see :meth:`_Slab.tails`): there the stage ran on ~600 counts for two orders (160, 192 at eps0 = 6,
#: n = 1e6: 9-14 ms, a third of the curve), while the blocks of totals of the orders above the slab already take those
#: orders along. Measured (slab100, in-process CPU min of 3, interleaved, ratio to one clones query): eps0 = 6, n = 1e6
#: 22-26x -> 15-16x; 5, 3.16e5 16.6-17.2 -> 14-14.7; 5.5, 5e5 18.4 -> 12.9; 4.5, 2e5 16.4 -> 14.1; ~117 cells eps0 1.5
#: .. 8, n 3e3 .. 3.2e6 otherwise within noise. Also for ratios 1.5 .. 3.5 it gained 1-2.6x at eps0 = 3 .. 3.5, n = 3e4
#: .. 2e5 (it takes alpha = 768 out of the eps0 = 3, n = 1e5 slab: 37 of 40 orders stay), adopted there since session 30:
_SLAB_TAIL_GEOMETRIC_WIDE = False
#: ... the geometric stage runs only for pairs whose log likelihood ratio is at most this (was _SLAB_MID_RATIO). Lead,
#: session 30, ``bench_renyi_compose.py --renyi-only --clock cpu --stat min --repeats 3 --old-rev HEAD``, eps0 1.75 .. 3.5,
#: n 1e4 .. 2e5 (loaded machine): eps0 = 3, n = 1e5 24.5 -> 19.8x; 3.5, 2e5 24.2 -> 19.3x; 3.5, 1e5 16.5 -> 15.2x; the other
#: 22 cells within noise (+-1.3x); at n 1e3 .. 1e4 and rtol 1e-4 within +-0.6 ms. Grid of 216 curves (clones,
#: stronger-clones, krr-lower k = 3; eps0 1.25 .. 6; n 300 .. 1e6) against the previous rule: 193 identical, 23 changed,
#: all overlapping, upper ends -8.4e-5 .. +1.0e-4 relative (rtol 1e-3).
_SLAB_TAIL_GEOMETRIC_RATIO = 1.5
#: Orders whose slab's clipped points (:func:`_slab_clip_floor`) are estimated above e^this times their budget get no
#: slab (``None``: every order planned keeps its slab until its bracket is measured).
_SLAB_CLIP_MARGIN: float | None = -2.0
#: ... unless scaled slabs are on: a slab whose clipped points would be too many for some of its orders is built with a
#: scale per block of cells (:meth:`_Slab._block_scales`), which charges each clipped point e^-700 of its own block's
#: largest weight instead of the slab's, and keeps those orders (work only).
_SLAB_SCALED = True
#: ... for slabs of at most this many planned points (the plan's rectangle; measured, in-process CPU min of 3, ratio to one
#: clones query, scaled off / on: eps0 = 2, n = 1.2e4 (1.04e6 planned) 24 -> 14x; 2.5, 1.7e4 (1.25e6) 19.5 -> 10x; 3, 3e4
#: (1.0e6) 15 -> 13x; 2, 1.7e4 (1.21e6) 17.6 -> 19x; but 2, 2.5e4 (1.8e6) 17.5 -> 21x and 2.25, 2.5e4 (1.65e6) 18 -> 22.5x)
_SLAB_SCALED_MAX_POINTS = 1_300_000.0
#: ... and for groups of at least this many orders (slab110; a plan decision: the clipped orders of a smaller group leave
#: it, as with scaled slabs off, and take the blocks' certified bounds). Measured, in-process CPU min of 4, scaled off /
#: on, ratio to one clones query (loaded machine): groups of 3 .. 5 orders lost or tied in each of 17 cells eps0 1.75 ..
#: 3, n 1e4 .. 3.5e4 (2 / 1.4e4 (5 orders) 19.5 vs 21.0x, 2.75 / 3.5e4 (5) 12.9 vs 20.0, 1.9 / 2e4 (3) 15.0 vs 22.3), while
#: groups of 6 .. 8 won or lost by cell (2 / 1.2e4 (6) 26.2 vs 16.2x, 3 / 3e4 (8) 16.0 vs 13.3; 3 / 3.5e4 (6) 11.7 vs 17.2).
#: Measured at the default 40 orders only: a query of fewer orders than this is not affected (its groups scale as before).
_SLAB_SCALED_MIN_ORDERS = 6
#: Where some order has no slab (none planned, dropped, or left after its build), the first blocks keep the clone count's
#: one-sd edges above the lowest slab's top too (work only: every block is bounded by its monotone corners, and the orders
#: inside a slab skip its blocks as before). Without them, such an order's sum inside another slab's counts was one block
#: hundreds of counts wide, split in four per round: eps0 = 2.5, n = 2e4, orders 256 .. 384 (256 left the bulk slab,
#: 320/384 had none) took three refinement rounds (kernel calls of 8, 16, 15 entries); with them one (slab102; in-process
#: CPU min of 3, two interleaved runs, ratio to one clones query: 24.7 -> 20.2-20.4x; 2 / 1.4e4, 2 / 2e4, 3 / 3e4,
#: 3 / 1e5, 3.5 / 2e5, 4 / 3e5, 2 / 3e4, stronger-clones 2.25 / 1.2e4 within the runs' noise)
_SLAB_FREE_EDGES = True
#: Slab levels (``RenyiDirection._build_slabs``, work only): an order whose slab gap at level ``l`` exceeds
#: ``_SLAB_DROP_STUCK 64^l`` budgets leaves its slab before any finer window (its Taylor gap shrinks ~8x a level, measured;
#: the stuck rule dropped such orders after a window at level 0), and an order whose last finer level shrank its gap by
#: less than ``_SLAB_SETTLE_SHRINK`` (a gap of its tails, clip charge and rounding, which no level changes) is refined no
#: further. eps0 = 15, n = 1e9 (clones): orders 12 .. 1024 at e^18 .. e^400 budgets took a window at level 0 (9 ms) before
#: leaving, and orders 1.25 .. 10 three windows (levels 2, 1, 0: 0.51 -> 0.41 -> 0.37 budgets; 12 ms) (slab102)
_SLAB_SETTLE = True
_SLAB_SETTLE_SHRINK = 0.5
#: Each cell's chord interval reaches this far beyond the cell (its points' rounding lies well inside).
_SLAB_DELTA = 1e-12
#: Pieces of a slab's tails in its first bound (fractions of the way from the window's edge to the end).
_SLAB_TAIL_PIECES = np.array([0.0, 1 / 64, 1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 1.0])
#: ... and where that is too coarse, these (1/256 apart up to 1/16, where g grows fastest against the tail's
#: probability at large orders, then a factor sqrt(2) apart): measured, the geometric stage is then not needed at
#: eps0 = 1, n = 3e3 (alpha 384) and 1e4 (alpha 896, 1024)
_SLAB_TAIL_FINE = np.concatenate(([0.0], np.arange(1, 16) / 256, 2.0 ** np.arange(-4.0, 0.5, 0.5)))
#: Clone counts per chunk of a slab's points.
_SLAB_ROWS = 48
#: Scaled slabs (:meth:`_Slab._block_scales`): at most this many blocks of cells, each with its own scale of weights.
_SLAB_SCALE_BLOCKS = 64


def _saddles(N: float, p: float, s: float, bp: float, bq: float, alpha: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per order, an estimate of the mode ``(c*, x*)`` of ``Pr[C = c] M_{c+1}(x (c+1)) f(x)`` and of
    its standard deviations in ``c`` and ``x`` (Stirling's approximations ``log Pr[C = c] ~ -N KL(c/N
    || p)`` and ``log M ~ -(c+1) KL(x || s)``, maximised in turn over ``x`` by bisection and over
    ``c`` in closed form; spreads from the curvature there). Only places the slabs (every bound is
    certified whatever it is); where the estimate fails, the binomials' own mean and spreads."""
    lgt_s, lgt_p = math.log(s) - math.log1p(-s), math.log(p) - math.log1p(-p)
    na = alpha.size
    c = np.full(na, N * p)
    x = np.full(na, s)
    th = np.full(na, p)
    # (the products alpha bp, (1 - alpha) bq of h below evaluated once; its two fractions as one stacked pass, the same
    # exactly rounded operations added in the same order: the same values)
    b_2, a_2 = np.array([[bp], [bq]]), np.stack((alpha * bp, (1.0 - alpha) * bq))
    with np.errstate(all="ignore"):
        for _ in range(3):
            xl, xr = np.full(na, 1e-9), np.full(na, 1.0 - 1e-9)
            nc = -(c + 1.0)
            for _ in range(18):
                xm = 0.5 * (xl + xr)
                y = xm - s
                fr = b_2 * y
                fr += 1.0
                np.divide(a_2, fr, out=fr)
                h = nc * (np.log(xm / (1.0 - xm)) - lgt_s)
                h += fr[0]
                h += fr[1]
                right = h > 0.0
                xl, xr = np.where(right, xm, xl), np.where(right, xr, xm)
            x = 0.5 * (xl + xr)
            kl = xlogy(x, x / s) + xlogy(1.0 - x, (1.0 - x) / (1.0 - s))
            th = 1.0 / (1.0 + np.exp(kl - lgt_p))
            c = N * th
        y = x - s
        d2 = -alpha * bp**2 / (1.0 + bp * y) ** 2 - (1.0 - alpha) * bq**2 / (1.0 + bq * y) ** 2
        hcc = -1.0 / (N * th * (1.0 - th))
        hcx = -(np.log(x / (1.0 - x)) - lgt_s)
        hxx = -(c + 1.0) / (x * (1.0 - x)) + d2
        det = hcc * hxx - hcx**2
        sd_c = np.sqrt(-hxx / det)
        sd_x = np.sqrt(-hcc / det)
    ok = np.isfinite(c) & np.isfinite(x) & np.isfinite(sd_c) & np.isfinite(sd_x) & (det > 0.0) & (hxx < 0.0)
    mu = N * p
    sd_mu = math.sqrt(max(N * p * (1.0 - p), 1.0))
    c = np.where(ok, c, mu)
    x = np.where(ok, x, s)
    sd_c = np.where(ok, np.maximum(sd_c, 1.0), sd_mu)
    sd_x = np.where(ok, sd_x, math.sqrt(s * (1.0 - s) / (mu + 1.0)))
    return c, x, sd_c, sd_x


def _slab_plan(N: float, p: float, s: float, bp: float, bq: float, alpha: np.ndarray, tail_tol: float,
               log_k0: np.ndarray, merge: float = _SLAB_MERGE_WIDE, capped: bool = False,
               exclude: np.ndarray | None = None, est_out: list[np.ndarray] | None = None,
               saddles: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
               ) -> list[tuple[np.ndarray, int, int, float, float]]:
    """Slabs ``(orders, c1, c2, xL, xR)``: per order a rectangle of clone counts ``c`` and values of
    ``x`` around its saddle point (:func:`_saddles`; the binomial's bulk around ``s`` included unless
    the saddle lies more than ``_SLAB_ZX`` spreads beyond it), consecutive orders sharing one where
    that costs few extra points (``merge``: the cost of a slab in points; ``capped``: no group of several
    runs over ``_SLAB_MAX_POINTS``; the orders in ``exclude`` get none). ``est_out`` (a list) receives
    each order's log estimate of its sum (Gaussian volume at the saddle); ``saddles``: :func:`_saddles`'s values, when
    the caller has them. Only the work depends on this plan."""
    cs, xs, sdc, sdx = _saddles(N, p, s, bp, bq, alpha) if saddles is None else saddles
    # the sum's size at each saddle point (Gaussian volume): where a window leaves out the bulk, its
    # edge facing the bulk is moved to where g is below tail_tol of it (the tail bound there is
    # about g at the edge, times a probability)
    mm = np.floor(cs) + 1.0
    aa = np.clip(np.round(xs * mm), 0.0, mm)
    with np.errstate(all="ignore"):
        lpc = _log_pmf_bracket(np.floor(cs), np.full(cs.size, N), p)[1]
        lpm = _log_pmf_bracket(aa, mm, s)[1]
        yy = aa / mm - s
        est = (lpc + lpm + alpha * np.log1p(bp * yy) + (1.0 - alpha) * np.log1p(bq * yy)
               + np.log(2.0 * math.pi * sdc * sdx * mm))
    target = est + math.log(tail_tol) - 3.0
    d = alpha * bp + (1.0 - alpha) * bq
    # modes at an end of x (a = c + 1 or a = 0: every clone reports one value), where the likelihood
    # ratio is extreme (large eps0 and orders, small n): largest over c of log Pr[C = c] + log
    # M_{c+1}(a) + log f there (Stirling: at c = N th, th / (1 - th) = p s_e / (1 - p)); where one
    # rivals the interior saddle, the slab reaches to that end and its counts
    ends = []
    for x_e, ls_e in ((1.0, math.log(s)), (0.0, math.log1p(-s))):
        th = p * math.exp(ls_e) / (1.0 - p + p * math.exp(ls_e))
        kl_e = float(xlogy(th, th / p) + xlogy(1.0 - th, (1.0 - th) / (1.0 - p)))
        with np.errstate(all="ignore"):
            lf_e = alpha * math.log1p(bp * (x_e - s)) + (1.0 - alpha) * math.log1p(bq * (x_e - s)) if min(
                bp * (x_e - s), bq * (x_e - s)) > -1.0 else np.full(alpha.size, -np.inf)
        ends.append((-N * kl_e + (N * th + 1.0) * ls_e + lf_e > target, N * th, math.sqrt(max(N * th * (1.0 - th), 1.0))))
        if est_out is not None:  # (the larger of the saddle's and the ends' terms: the saddle estimate may fail there)
            est = np.logaddexp(est, np.nan_to_num(-N * kl_e + (N * th + 1.0) * ls_e + lf_e, nan=-np.inf))
    if est_out is not None:
        est_out.append(est)

    b_2, a_2 = np.array([[bp], [bq]]), np.stack((alpha, 1.0 - alpha))

    def log_gb(x: np.ndarray, j: np.ndarray) -> np.ndarray:  # about log g(x): log(f(x) + (-1 - f'(s)(x - s))_+)
        y = x - s
        with np.errstate(all="ignore"):
            # alpha log1p(bp y) + (1 - alpha) log1p(bq y), the two logs as one stacked pass (the same values)
            z = b_2 * y
            lz = np.log1p(z)
            lz *= a_2[:, j]
            lf = np.where(np.minimum(z[0], z[1]) > -1.0, lz[0] + lz[1], -np.inf)
            return np.logaddexp(lf, np.log(np.maximum(-1.0 - d[j] * y, 1e-300)))

    sm = np.sqrt(s * (1.0 - s) / (cs + 1.0))
    sx = np.maximum(sdx, sm)
    far = (np.abs(xs - s) > _SLAB_ZX * sm) & np.isfinite(target) & (target > 0.0)
    lo_x = np.where(far, xs, np.minimum(xs, s)) - _SLAB_ZX * sx
    hi_x = np.where(far, xs, np.maximum(xs, s)) + _SLAB_ZX * sx
    jf = np.flatnonzero(far)
    if jf.size:  # bisection between the bulk and the window's edge facing it
        up_side = xs[jf] > s
        near = np.where(up_side, lo_x[jf], hi_x[jf])
        bulk = np.full(jf.size, s)
        move = log_gb(near, jf) > target[jf]
        for _ in range(14):
            mid = 0.5 * (near + bulk)
            hot = log_gb(mid, jf) > target[jf]
            near, bulk = np.where(hot, mid, near), np.where(hot, bulk, mid)
        lo_x[jf] = np.where(move & up_side, bulk, lo_x[jf])
        hi_x[jf] = np.where(move & ~up_side, bulk, hi_x[jf])
    c_lo = np.maximum(np.floor(cs - _SLAB_ZC * sdc), 0.0)
    c_hi = np.minimum(np.ceil(cs + _SLAB_ZC * sdc), N)
    for (hot, c_e, sd_e), x_e in zip(ends, (1.0, 0.0)):
        c_lo = np.where(hot, np.minimum(c_lo, max(math.floor(c_e - _SLAB_ZC * sd_e), 0.0)), c_lo)
        c_hi = np.where(hot, np.maximum(c_hi, min(math.ceil(c_e + _SLAB_ZC * sd_e), N)), c_hi)
        if x_e == 1.0:
            hi_x = np.where(hot, 1.0, hi_x)
        else:
            lo_x = np.where(hot, 0.0, lo_x)
    # counts below the slab are bounded by blocks of totals whose kernels are at most K(0) (the kernel
    # is non-increasing in c), which grow fast downwards for orders whose saddle lies far below the
    # clone count's mean: there the slab reaches to where Chernoff's bound on Pr[C below] times K(0) - 1
    # is below tail_tol of the sum, when that adds at most _SLAB_EXTEND times its points (else blocks
    # bounded by their own corners, refined as needed)
    room = np.where(cs < N * p - 2.0 * math.sqrt(max(N * p * (1.0 - p), 1.0)), target - log_k0, -np.inf)
    width_x = np.maximum(hi_x - lo_x, 0.0)
    own = (c_hi - c_lo + 1.0) * (width_x * (0.5 * (c_lo + c_hi) + 1.0) + 1.0)
    for side in (-1.0,):
        a_, b_ = (np.zeros(alpha.size), c_lo.copy()) if side < 0 else (c_hi.copy(), np.full(alpha.size, N))
        for _ in range(int(math.log2(max(N, 2.0))) + 2):  # the count nearest the saddle with log Pr[C beyond] <= room
            mid = np.floor(0.5 * (a_ + b_))
            x = np.clip(mid / max(N, 1.0), 1e-300, 1.0)
            with np.errstate(all="ignore"):
                kl = xlogy(x, x / p) + xlogy(1.0 - x, (1.0 - x) / (1.0 - p))
            small = (-N * kl <= room) & ((mid < N * p) if side < 0 else (mid > N * p))
            if side < 0:
                a_, b_ = np.where(small, mid, a_), np.where(small, b_, mid)
            else:
                a_, b_ = np.where(small, a_, mid), np.where(small, mid, b_)
        edge = a_ if side < 0 else b_
        x = np.clip(edge / max(N, 1.0), 1e-300, 1.0)
        with np.errstate(all="ignore"):
            reach = -N * (xlogy(x, x / p) + xlogy(1.0 - x, (1.0 - x) / (1.0 - p))) <= room
        extra = np.abs(edge - (c_lo if side < 0 else c_hi)) * (width_x * (0.5 * (edge + (c_lo if side < 0 else c_hi)) + 1.0) + 1.0)
        take = np.isfinite(room) & reach & (extra <= _SLAB_EXTEND * own)
        if np.any(np.isfinite(room) & reach & ~take):
            # all or none of the orders that could reach: a few extended orders get a slab of their own, whose build
            # and tails cost about the main slab's (n = 4e3, eps0 = 1: orders 1000, 1024 of 36 .. 1024; 17.7 -> 14.9 ms)
            take[:] = False
        if side < 0:
            c_lo = np.where(take, np.minimum(c_lo, edge), c_lo)
        else:
            c_hi = np.where(take, np.maximum(c_hi, edge), c_hi)
    rects = [(int(c_lo[j]), int(c_hi[j]), max(float(lo_x[j]), 0.0), min(float(hi_x[j]), 1.0)) for j in range(alpha.size)]

    def cost(r: tuple[int, int, float, float]) -> float:
        return (r[1] - r[0] + 1.0) * ((r[3] - r[2]) * (r[1] + 1.0) + 1.0) + merge

    def union(q: tuple[int, int, float, float], r: tuple[int, int, float, float]) -> tuple[int, int, float, float]:
        return (min(q[0], r[0]), max(q[1], r[1]), min(q[2], r[2]), max(q[3], r[3]))

    # runs of orders whose rectangles barely differ first (the small orders'), then consecutive runs in
    # groups of the least total cost (points, plus an overhead per slab)
    runs: list[tuple[list[int], tuple[int, int, float, float]]] = []
    for j, r in enumerate(rects):
        if exclude is not None and exclude[j]:
            continue
        if runs and cost(union(runs[-1][1], r)) <= 1.05 * cost(runs[-1][1]):
            runs[-1] = (runs[-1][0] + [j], union(runs[-1][1], r))
        else:
            runs.append(([j], r))
    nr = len(runs)
    if nr == 0:
        return []
    best = [0.0] + [math.inf] * nr
    cut = [0] * (nr + 1)
    boxes: dict[tuple[int, int], tuple[int, int, float, float]] = {}
    for j in range(1, nr + 1):
        b = runs[j - 1][1]
        for i in range(j - 1, -1, -1):
            b = union(b, runs[i][1])
            if capped and i < j - 1 and cost(b) - merge > _SLAB_MAX_POINTS:
                break  # (a merged group over the point limit would be dropped whole: its boxes only grow with i)
            boxes[i, j] = b
            v = best[i] + cost(b)
            if v < best[j]:
                best[j], cut[j] = v, i
    groups = []
    j = nr
    while j > 0:
        groups.append((cut[j], j))
        j = cut[j]
    plan = [([k for run in runs[i:j] for k in run[0]], boxes[i, j]) for i, j in reversed(groups)]
    return [(np.array(js), r[0], r[1], r[2], r[3]) for js, r in plan]


def _slab_clip_floor(N: float, p: float, s: float, bp: float, bq: float, alpha: np.ndarray, c1: int, c2: int,
                     x_lo: float, x_hi: float) -> np.ndarray:
    """Per order of ``alpha``, about ``log`` of what the points clipped at ``e^-700`` of the largest weight
    add to a slab's upper bound (:class:`_Slab` counts each at ``e^-700`` times that weight, at its own ``x``):
    per count whose weight at an end of its window (``a_lo`` or ``a_hi``) is clipped (``log w`` is concave in
    ``a``: its clipped points are at the ends), the window's points times ``e^-700`` of the largest weight (at
    each count's mode clipped to its window, as :class:`_Slab`'s ``ref``) times ``f`` at that end (``g`` is
    convex: largest at an end). Where this exceeds an order's budget, its slab bracket stays wider than the
    budget at every level (measured: eps0 = 3, n = 3.16e4, orders 256 .. 1024 around x = 1 in one slab with
    the bulk, this estimate within e^6 of the level-0 gaps of e^100 .. e^323 budgets) and the order leaves the
    slab after its build. Only decides which orders get a slab (work only)."""
    c = np.arange(c1, c2 + 1, dtype=float)
    m = c + 1.0
    a_lo = np.clip(np.ceil(x_lo * m), 0.0, m)
    a_hi = np.clip(np.floor(x_hi * m), 0.0, m)
    nonempty = a_hi >= a_lo
    if not np.any(nonempty):
        return np.full(alpha.size, -np.inf)
    c, m, a_lo, a_hi = c[nonempty], m[nonempty], a_lo[nonempty], a_hi[nonempty]
    mode = np.clip(np.floor((m + 1.0) * s), a_lo, a_hi)
    log_s, log_1s = math.log(s), math.log1p(-s)
    with np.errstate(all="ignore"):
        row = _log_pmf_bracket(c, np.full(c.size, N), p)[1] + gammaln(m + 1.0)

        def lw(a: np.ndarray) -> np.ndarray:
            return row - gammaln(a + 1.0) - gammaln(m - a + 1.0) + a * log_s + (m - a) * log_1s

        ref = float(np.max(lw(mode)))
        out = np.full(alpha.size, -np.inf)
        lcount = np.log(a_hi - a_lo + 1.0)
        for a in (a_lo, a_hi):
            hit = lw(a) < ref - 700.0
            if np.any(hit):
                y = a[hit] / m[hit] - s
                lf = alpha[:, None] * np.log1p(bp * y) + (1.0 - alpha[:, None]) * np.log1p(bq * y)
                lf = np.nan_to_num(lf, nan=np.inf)
                out = np.logaddexp(out, _logsumexp(lcount[hit] + lf, axis=1) + ref - 700.0)
    return out


class _Slab:
    """``sum_{c = c1}^{c2} Pr[C = c] (K(c) - 1)`` of a pair with ``p0 = 0`` (every entry at
    ``lam = 1``), for a group of orders, without a kernel per count (*derived*).

    ``K(c) - 1 = sum_a M_{c+1}(a) g(a/(c+1))`` with the same ``g`` for every ``c`` (module
    docstring: ``g`` depends on ``u, v, s`` and the order only, and ``u, v`` do not depend on ``c``
    when ``lam = 1``). So the sum over the slab is ``int g dmu`` for the one measure
    ``mu = sum_{c, a} Pr[C = c] M_{c+1}(a) delta_{a/(c+1)}`` on ``[0, 1]``, and any bound on the
    integral of a convex function over a cell of ``x`` from the cell's moments applies to cells
    that pool the points of every count. A cell needs only its mass ``W`` and first two moments,
    shared by all orders; :meth:`window` bounds it by Taylor's theorem (an error of the third order
    in the cell's width, whatever the counts), so the slab has no error of the first order in ``c``
    (blocks of totals bounded by their monotone corners do: ``K(lo - 1) - K(hi)``, which at large
    orders and ``n ~ 10^3`` forces one kernel per count over hundreds of counts).

    Points: ``c1 <= c <= c2`` and ``a`` in ``[ceil(xL (c+1)), floor(xR (c+1))]``; the rest of each
    count's kernel lies in its tails (:meth:`tails`). Weights ``log w = log Pr[C = c] + log
    M_{c+1}(a)`` from ``gammaln`` (a table of ``log k!``; charged 4e-15 of the terms' magnitudes
    plus 1e-13, as :func:`_log_pmf_bracket`; scipy's ``gammaln`` is within 2.5 ulp of 50-digit
    values at the integers, tested), scaled by the largest (``exp(log w - R)``, each at least
    ``e^-700``: charged, at most ``e^-700`` per point). Cells are a power-of-two grid of width
    ``h`` from ``xL``; coarser levels (``2h``, ``4h``, ...) sum pairs of cells. Sums of non-negative
    terms: relative error at most ``1.01 N u`` for ``N`` terms. A point's cell comes from ``q =
    a/((c+1) h) - xL/h``, computed as ``j r + (a_lo r - xL/h)`` with ``j = a - a_lo`` and ``r = 1/((c+1) h)``
    rounded (``r`` carries two roundings, so ``j r`` and ``a_lo r`` three each, and together they are at most
    ``a/((c+1) h) <= 1/h``: ``3u/h``; ``xL/h``, as ``xL`` times the rounded ``1/h``, two: ``2u/h``; the
    subtraction and the sum, ``u/h`` each: error at most ``7u/h``, charged ``8u/h``, in cells), so each cell's interval ``[x_k -
    delta, x_{k+1} + delta]`` contains its points' exact values.
    """

    def __init__(self, N: float, p: float, s: float, rel: float, orders: np.ndarray, c1: int, c2: int,
                 x_lo: float, x_hi: float, scaled: bool = False,
                 rows: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None, second: np.ndarray | None = None) -> None:
        self.orders, self.c1, self.c2, self.s = orders, c1, c2, s
        # (``second``: the log weights of a second measure on the same ``rows``, built in the same pass as
        # :attr:`second`, a slab of its own; see :meth:`_second_slab`)
        assert second is None or (rows is not None and not scaled)
        # (``rows``: the counts and the lower / upper ends of their log weights, instead of every count of c1 .. c2 at
        # log Pr[C = c]: a :class:`_StrideSlab`'s measures; every bound below holds for any non-negative row weights)
        c = np.arange(c1, c2 + 1, dtype=float) if rows is None else rows[0]
        m = c + 1.0
        self.c, self.m = c, m
        # the finest grid: a power of two cells from xL, at least _SLAB_FINE per spread at the top count
        sm = math.sqrt(s * (1.0 - s) / (c2 + 1.0))
        span = max(x_hi - x_lo, 1e-6)
        levels = min(max(int(math.ceil(math.log2(span * _SLAB_FINE / sm))), 1), _SLAB_MAX_LEVELS)
        h = span / 2.0**levels
        self.x_lo, self.x_hi = x_lo, x_hi
        self.h_fine = h
        ncell = 2**levels
        a_lo = np.clip(np.ceil(x_lo * m), 0.0, m)
        a_hi = np.clip(np.floor(x_hi * m), 0.0, m)
        self.a_lo, self.a_hi = a_lo, a_hi
        lpc_lo, lpc_up = _log_pmf_bracket(c, np.full(c.size, N), p) if rows is None else rows[1:]
        self.log_pc_up = lpc_up
        mi = m.astype(np.int64)
        table = gammaln(np.arange(int(c2) + 2, dtype=float) + 1.0)  # log k!, k = 0 .. c2 + 1
        log_s, log_1s = math.log(s), math.log1p(-s)
        ls = log_s - log_1s
        row = 0.5 * (lpc_lo + lpc_up) + table[mi] + m * log_1s
        # rounding: the C pmf's bracket, the gammaln terms (4e-15 of their magnitudes + 1e-13), the sum
        err_row = (0.5 * (lpc_up - lpc_lo) + 4e-15 * (3.0 * table[mi] + m * (abs(log_s) + abs(log_1s))) + 1e-13
                   + 8 * _U * (2.0 * np.abs(row) + 3.0 * table[mi] + 2.0 * m * abs(ls)))  # (and the shift by R)
        self.eps = float(np.max(err_row)) + 2e-12 if c.size else 0.0  # + the scaling's exp and subtraction
        # the largest log w: at each row's mode (log M is concave in a), clipped to its window
        mode = np.clip(np.floor((m + 1.0) * s), a_lo, np.maximum(a_hi, a_lo)).astype(np.int64)
        top = row - table[mode] - table[mi - mode] + mode * ls
        nonempty = a_hi >= a_lo
        self.ref = float(np.max(top[nonempty])) + 1e-9 if np.any(nonempty) else 0.0
        r_cell = self._block_scales(lpc_up, m, ncell, h) if scaled else None  # (per cell, relative to ref)
        W = np.zeros(ncell)
        # Z (real parts) and S (imaginary parts) in one complex array: complex addition is componentwise, so one
        # complex np.add.at adds exactly what two float ones would, in the same order (bit-identical), for less
        # than the cost of one more (measured, numpy 2.4: ~1.5 ns per point against ~1.2 ns each)
        ZS = np.zeros(ncell, dtype=complex)
        row_r = row - self.ref
        # rows of log a! - a ls and of log (m - a)! as windows of two tables (a row's values of a are
        # consecutive: contiguous copies instead of gathers); padded past the ends (never valid there)
        wmax = int(max(np.max(a_hi - a_lo), 0.0)) + 1
        t_a = np.concatenate((table - np.arange(table.size) * ls, np.zeros(wmax)))  # (8u of the magnitudes)
        t_b = np.concatenate((table[::-1], np.zeros(wmax)))  # t_b[i] = log (c2 + 1 - i)!
        a_lo_i = a_lo.astype(np.int64)
        inv_h = 1.0 / h
        shift = x_lo * inv_h
        scale = 1.0 / (m * h)
        span_a = a_hi - a_lo
        npts = int(np.sum(np.maximum(span_a + 1.0, 0.0)))
        # the views of every window of wmax consecutive entries (made once; a chunk copies its rows' first
        # `width` columns), and each chunk's width
        win_a = np.lib.stride_tricks.sliding_window_view(t_a, wmax)
        win_b = np.lib.stride_tricks.sliding_window_view(t_b, wmax)
        b_start = (c2 + 1) - mi + a_lo_i  # log (m - a)! at a = a_lo + j is t_b[c2 + 1 - m + a_lo + j]
        starts = np.arange(0, c.size, _SLAB_ROWS)
        widths = (np.maximum(np.maximum.reduceat(span_a, starts), -1.0) + 1.0).astype(np.int64) if c.size else starts
        # columns 0 .. full - 1 of a chunk hold valid points in every row (its smallest span + 1): the validity
        # mask and the clip of the cell index are needed only from there on (the clip from the column before:
        # below it a point lies at least 1/((c+1) h) cells, far more than eta, below x_hi)
        fulls = (np.maximum(np.minimum.reduceat(span_a, starts), -1.0) + 1.0).astype(np.int64) if c.size else starts
        colf_all = np.arange(wmax, dtype=float)
        q0 = a_lo * scale - shift
        # every chunk's temporaries in buffers made once (fresh arrays of this size cost page faults, as much
        # as the arithmetic)
        size = _SLAB_ROWS * wmax
        b_w, b_q, b_zs = np.empty(size), np.empty(size), np.empty(size, dtype=complex)
        f2 = None
        if second is not None:  # (the second measure's points: the first's times f2 per row, see _second_slab)
            f2, ref2, eps2 = self._second_factors(second, rows[1])  # type: ignore[index]
            W2, ZS2 = np.zeros(ncell), np.zeros(ncell, dtype=complex)
            b_w2, b_zs2 = np.empty(size), np.empty(size, dtype=complex)
        b_k, b_v = np.empty(size, dtype=np.int64), np.empty(size, dtype=bool)
        for r0, width, full in zip(starts.tolist(), widths.tolist(), fulls.tolist()):  # rows in chunks (similar widths)
            if width <= 0:
                continue
            sl = slice(r0, r0 + _SLAB_ROWS)
            shape = (min(_SLAB_ROWS, c.size - r0), width)
            npt = shape[0] * width
            wt, q, zs = b_w[:npt].reshape(shape), b_q[:npt].reshape(shape), b_zs[:npt].reshape(shape)
            wz, ws = zs.real, zs.imag  # (strided views of the complex buffer)
            k = b_k[:npt].reshape(shape)
            np.subtract(row_r[sl, None], win_a[a_lo_i[sl], :width], out=wt)  # log w
            np.subtract(wt, win_b[b_start[sl], :width], out=wt)
            # cell of each point: q = a/((c+1) h) - xL/h
            np.multiply(colf_all[None, :width], scale[sl, None], out=q)  # j/((c+1) h) + (a_lo/((c+1) h) - xL/h)
            np.add(q, q0[sl, None], out=q)
            np.copyto(k, q, casting="unsafe")  # q >= -eta: truncation is the floor (0 below)
            c0 = max(full - 1, 0)
            np.minimum(k[:, c0:], ncell - 1, out=k[:, c0:])
            kf = k.ravel()
            if r_cell is not None:  # (each point relative to its cell's scale)
                np.subtract(wt, r_cell[k], out=wt)
            np.maximum(wt, -700.0, out=wt)
            np.exp(wt, out=wt)
            if full < width:  # (the points past a row's window: weight 0)
                valid = b_v[:shape[0] * (width - full)].reshape(shape[0], width - full)
                np.less_equal(colf_all[None, full:width], span_a[sl, None], out=valid)
                np.multiply(wt[:, full:], valid, out=wt[:, full:])
            np.add.at(W, kf, wt.ravel())
            np.subtract(q, k, out=q)  # the position in the cell (within [-eta, 1 + eta])
            np.multiply(q, wt, out=wz)  # w (x - x_k) / h
            np.multiply(wz, q, out=ws)  # w ((x - x_k) / h)^2
            np.add.at(ZS, kf, zs.ravel())  # Z: sum w (x - x_k) / h, S: sum w ((x - x_k) / h)^2
            if f2 is not None:
                wt2, zs2 = b_w2[:npt].reshape(shape), b_zs2[:npt].reshape(shape)
                np.multiply(wt, f2[sl, None], out=wt2)
                np.add.at(W2, kf, wt2.ravel())
                np.multiply(q, wt2, out=zs2.real)
                np.multiply(zs2.real, q, out=zs2.imag)
                np.add.at(ZS2, kf, zs2.ravel())
        self.W, self.Z, self.S = [W], [ZS.real.copy()], [ZS.imag.copy()]
        # terms per cell: each count puts at most h (c+1) + 2 of its values of a in a cell (np.add.at adds them to the
        # cell one by one, in any order: a sum of at most that many non-negative terms; + 1 per count spare)
        self.count = [c.size * (h * (c2 + 1.0) + 3.0)]
        self.h = [h]
        self.eta = 8 * _U / h + 4 * _U  # the rounding of q, in cells
        self.R: list[np.ndarray] | None = None if r_cell is None else [r_cell]
        if r_cell is not None:
            self.eps += 2e-12  # (the levels' factors exp(R_child - R_parent): at most 15 roundings of a few u each)
        self._pyramid()
        self.points = npts
        self._lch: dict[int, dict[float, np.ndarray]] = {}  # (:meth:`_first_tails`: Chernoff columns per side)
        self.second: _Slab | None = None
        if f2 is not None and second is not None:
            self.second = self._second_slab(W2, ZS2, second, ref2, eps2)

    def _second_factors(self, second: np.ndarray, first: np.ndarray) -> tuple[np.ndarray, float, float]:
        """Per row, the factor ``f2`` that turns a point's stored weight of the first measure into the second's, the
        second's scale ``ref2`` and its :attr:`eps` (*derived*, slab108).

        A point of row ``j`` weighs ``w1 = exp(l1_j) M_{c+1}(a)`` in the first measure and ``w2 = exp(l2_j) M_{c+1}(a)``
        in the second (``l1 = first``, ``l2 = second``: the rows' log weights, taken as exact as :class:`_Slab` takes
        ``rows``), so ``w2 = w1 exp(d_j)``, ``d_j = l2_j - l1_j``. With ``D = max_j d_j`` (finite rows), ``ref2 = ref +
        D`` and ``f2_j = exp(d_j - D) <= 1`` (0 where ``l2_j = -inf``): the stored ``w1 e^-ref`` (within ``e^{+-eps}``,
        or clipped up to ``e^-700``) times ``f2_j`` is ``w2 e^-ref2`` within ``e^{+-eps2}``, or at most ``e^-700 f2_j <=
        e^-700`` above it where the first was clipped (the same clip charge), with ``eps2 = eps`` plus the roundings of
        ``d_j`` (``u |d_j|``), of ``d_j - D`` (``u |d_j - D|``), of ``ref2`` against ``ref + D`` (``u |ref2|``), of
        ``exp`` and of the product (charged ``4u`` of their sum plus ``2e-12``, as :attr:`eps` charges its own
        ``exp``). A product below the normal range errs by at most ``2^-1075``, far below the clip charge ``e^-700`` a
        point that :meth:`window`'s lower end subtracts (and the mean's and variance's errors take, both signs); only
        the lower end of the second measure is ever used (:class:`_StrideSlab`)."""
        with np.errstate(invalid="ignore"):
            d = second - first
        fin = np.isfinite(d)
        big = float(np.max(d[fin])) if np.any(fin) else 0.0
        e = np.where(fin, d - big, -np.inf)
        f2 = np.exp(e)
        ref2 = self.ref + big
        mag = (float(np.max(np.abs(d[fin]))) + float(np.max(np.abs(e[fin])))) if np.any(fin) else 0.0
        eps2 = self.eps + 4 * _U * (mag + abs(ref2) + 4.0) + 2e-12
        return f2, ref2, eps2

    def _second_slab(self, W: np.ndarray, ZS: np.ndarray, second: np.ndarray, ref2: float, eps2: float) -> _Slab:
        """The second measure's slab (:meth:`_second_factors`): this slab's geometry (rows, windows, cells, count of
        terms per cell: the same points), its own sums, scale and rounding; its levels as :meth:`__init__`'s."""
        out = object.__new__(_Slab)
        out.__dict__.update(self.__dict__)
        out.log_pc_up, out.ref, out.eps, out.second, out._lch = second, ref2, eps2, None, {}
        out.W, out.Z, out.S = [W], [ZS.real.copy()], [ZS.imag.copy()]
        out.count, out.h = [self.count[0]], [self.h[0]]
        out._pyramid()
        out.points = 0  # (the first's points: no more built)
        return out

    def _pyramid(self) -> None:
        """The coarser levels from the finest (each cell the sum of two)."""
        while self.W[-1].size > 1:  # in the parent's units: a child's position is (its own + offset) / 2
            W, Z, S = self.W[-1], self.Z[-1], self.S[-1]
            if self.R is not None:
                W, Z, S = self._rescaled(W, Z, S)
            self.W.append(W[0::2] + W[1::2])
            self.Z.append(0.5 * (Z[0::2] + Z[1::2] + W[1::2]))  # the right child's offset is one cell
            self.S.append(0.25 * (S[0::2] + S[1::2] + 2.0 * Z[1::2] + W[1::2]))
            self.count.append(2.0 * self.count[-1])
            self.h.append(2.0 * self.h[-1])

    def _block_scales(self, lpc_up: np.ndarray, m: np.ndarray, ncell: int, h: float) -> np.ndarray:
        """Per finest cell, ``log`` of the scale of its points' weights relative to ``ref`` (scaled slabs).

        A single scale ``ref`` (the largest weight) clips every point below ``e^-700`` of it, charged
        ``e^-700`` of ``ref`` each (:meth:`window`); where a slab holds both the bulk (``x`` near ``s``)
        and an order's saddle near ``x = 1`` (eps0 = 2, n = 1.2e4, orders 512 .. 1024: the weights there
        are below ``e^-700`` of the bulk's, ``g`` above ``e^700``), that charge alone exceeds the order's
        budget (:func:`_slab_clip_floor`). Here each block of cells (at most :data:`_SLAB_SCALE_BLOCKS`) has
        its own scale ``R_b``, an upper bound on the log weights of the points in its cells (*derived*):
        ``log w = log Pr[C = c] + log M_{c+1}(a)`` and, for ``X ~ Bin(m, s)``, ``Pr[X = a] <= exp(-m
        KL(a/m || s))`` (Chernoff: ``Pr[X >= a]`` for ``a >= m s``, ``Pr[X <= a]`` below); ``KL(. || s)`` is
        convex with its minimum 0 at ``s``, so over the block's interval ``[x_b - delta, x_{b+1} + delta]``
        (which holds its points' exact ``x``, :class:`_Slab`) it is at least its value at the point nearest
        ``s``: ``R_b = max_c (upper end of log Pr[C = c] - (c + 1) KL(x*_b || s)) + 1`` (``KL`` rounded low;
        the ``+ 1`` covers the rounding of this and of the points' ``log w``, :attr:`eps`, far below 1).
        Only the scale depends on this bound: a point's weight is stored as ``exp(max(log w - R_b,
        -700))`` (at most 1: no overflow; clipped as before, relative to its own scale), a cell's sums are
        those of its scale, and a coarser level's cell takes the larger of its non-empty children's scales, the
        other child's sums multiplied by ``exp(R_child - R_parent)`` (dropped where that is below
        ``e^-701``: every point of that child then weighs at most ``e^-700`` of the parent's scale, within
        the clip charge, which :meth:`window` and :meth:`_runs` add to the upper ends of scaled slabs'
        non-empty masses too; so a cell with points never becomes empty; products below the normal range err by
        at most ``2^-1074`` each, within the same charge; the factors' roundings, a few ``u`` per level, are
        charged in :attr:`eps`)."""
        nb = min(ncell, _SLAB_SCALE_BLOCKS)
        per = ncell // nb
        edges = self.x_lo + np.arange(nb + 1) * (per * h)
        s = self.s
        xs = np.clip(np.clip(s, edges[:-1] - _SLAB_DELTA, edges[1:] + _SLAB_DELTA), 0.0, 1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            kl = xlogy(xs, xs / s) + xlogy(1.0 - xs, (1.0 - xs) / (1.0 - s))
        kl = np.maximum(np.nan_to_num(kl, nan=0.0) * (1.0 - 1e-9), 0.0)  # (rounded low: -m KL high)
        r_b = np.max(lpc_up[:, None] - m[:, None] * kl[None, :], axis=0) + 1.0 - self.ref
        return np.repeat(r_b, per)

    def _rescaled(self, W: np.ndarray, Z: np.ndarray, S: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The sums of one level of a scaled slab at its parent level's scales (appended to :attr:`R`):
        each pair of cells at the larger of their scales (:meth:`_block_scales`)."""
        assert self.R is not None
        r = self.R[-1]
        # (the larger scale of the non-empty children: a child with points is never dropped beside an empty one)
        r_pts = np.where(W > 0.0, r, -np.inf)
        rp = np.maximum(r_pts[0::2], r_pts[1::2])
        rp = np.where(np.isfinite(rp), rp, np.maximum(r[0::2], r[1::2]))
        self.R.append(rp)
        d = r - np.repeat(rp, 2)
        if not np.any(d != 0.0):
            return W, Z, S
        f = np.where(d < -701.0, 0.0, np.exp(np.minimum(np.maximum(d, -701.0), 0.0)))
        return W * f, Z * f, S * f

    def _clip_up(self, n_pt: float) -> float:
        """What the upper end of a cell's mass adds for points dropped by rescaling (scaled slabs only)."""
        return n_pt * math.exp(-700.0) if self.R is not None else 0.0

    def _log_scale(self, level: int, idx: np.ndarray | slice) -> np.ndarray | float:
        """``log`` of the scale of the cells ``idx`` of ``level``."""
        return self.ref if self.R is None else self.ref + self.R[level][idx]

    def level_for(self, h: np.ndarray) -> np.ndarray:
        """The finest level whose cells are at least ``h`` wide (clipped to the levels there are)."""
        with np.errstate(divide="ignore"):
            lv = np.floor(np.log2(np.maximum(h, 1e-300) / self.h_fine))
        return np.clip(lv, 0, len(self.h) - 1).astype(np.int64)

    def window(self, u: float, v: float, bp: float, bq: float, alpha: np.ndarray, level: int,
               log_tol: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(log upper, log lower)`` of ``int g dmu`` over the slab's points, per order of ``alpha``,
        from the cells of ``level``.

        Per cell (*derived*): with mass ``W``, mean ``xbar`` and ``V = sum w (x - xbar)^2``, Taylor's
        theorem about ``xbar`` (the linear terms sum to 0) gives ``sum w g(x) = W g(xbar) + (1/2) sum w
        g''(xi_x) (x - xbar)^2``, so the sum lies in ``W g(xbar) + [m2, M2] V / 2`` for bounds ``m2 <=
        g'' <= M2`` on the cell's interval: an error of the third order in the cell's width (the chord
        and Jensen's bound differ at the second). ``g'' = f'' = alpha (alpha - 1) f (a - b)^2`` with
        ``a = bp/p``, ``b = bq/q`` (each decreasing in ``x``) and ``log f = alpha log p + (1 - alpha)
        log q`` (``log p``, ``log q`` monotone): interval bounds from the ends of the cell's interval,
        where ``p = u x/s + (1-u)(1-x)/(1-s)`` and ``q`` likewise are sums of non-negative terms. The
        mean is known to within ``e_mu`` cells (rounding, the weights' errors): ``g`` is evaluated at the
        computed mean with that uncertainty (:func:`_g`), and ``V`` about the computed mean exceeds
        the variance by at most ``W e_mu^2`` cells^2.

        With ``log_tol``, each order evaluates only the cells inside a range of coarser cells that
        carries its sum; the cells outside are bounded from the coarse cells' masses and ``g`` at their
        ends (:meth:`_runs`, *derived*; lower bound 0), and an order whose bound of them exceeds
        ``log_tol`` of its lower bound is evaluated at every cell."""
        return _measures_window(self, self, u, v, bp, bq, alpha, level, log_tol)

    def _cell_terms(self, u: float, v: float, bp: float, bq: float, level: int) -> tuple[np.ndarray, ...]:
        """The order-independent parts of :meth:`window`'s bounds, per non-empty cell of ``level`` (``idx``): ``(idx,
        y at the mean, its error, log W up / low, log V h^2 / 2 up / low, log p low / high, log q low / high, log (a -
        b)^2 high / low on the cell's interval)``; the argument is :meth:`window`'s."""
        W, Z, S, h = self.W[level], self.Z[level], self.S[level], self.h[level]
        idx = np.flatnonzero(W > 0.0)
        W, Z, S = W[idx], Z[idx], S[idx]
        # W, Z, S have relative errors within gamma (the sums; the levels' pairwise sums) and the
        # points' exp(+-eps); every point counted is at most e^-700 too large (clipped)
        n_pt = self.count[level]
        gamma = 1.01 * (n_pt + 4 * len(self.h)) * _U
        grow = math.expm1(self.eps)
        rho = (1.0 + gamma) * (1.0 + grow) - 1.0
        w_up = W * (1.0 + rho) + self._clip_up(n_pt)
        clip = n_pt * math.exp(-700.0)
        w_lo = np.maximum(W / (1.0 + rho) - clip, 0.0)
        e1 = self.x_lo + idx * h - _SLAB_DELTA
        e2 = (self.x_lo + (idx + 1.0) * h) + _SLAB_DELTA
        mu = np.clip(Z / W, 0.0, 1.0)  # the mean's position in the cell
        with np.errstate(divide="ignore", invalid="ignore"):
            # the weights' relative errors move a weighted mean of positions in [-eta, 1 + eta] by at most
            # 2 rho (1 + 2 eta); positions are eta off; clipped points e^-700 each
            e_mu = 2.0 * rho * (1.0 + 2.0 * self.eta) + self.eta + 4 * _U + np.where(w_lo > 0.0, clip / w_lo, np.inf)
            var = S - Z * mu  # sum w (pos - mu)^2, cells^2
            e_var = 4.0 * rho * (S + 2.0 * Z + W) + W * (6.0 * self.eta + 4 * _U) + clip * 4.0
        v_up = np.maximum(var + e_var, 0.0) * (1.0 + rho)
        v_lo = np.maximum(var - e_var - W * e_mu**2, 0.0) / (1.0 + rho)
        # g at the computed mean, to within e_mu cells (and the rounding of x_k + mu h)
        xbar = self.x_lo + (idx + mu) * h
        yb = xbar - self.s
        yb_err = np.minimum(e_mu, 2.0) * h + 4 * _U * (np.abs(yb) + self.s + 1.0) + _SLAB_DELTA
        # g'' on [e1, e2]: p, q at both ends (sums of non-negative terms, 4u), log f and (a - b)^2 intervals
        s = self.s
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            pe = [u * x / s + (1.0 - u) * (1.0 - x) / (1.0 - s) for x in (e1, e2)]
            qe = [v * x / s + (1.0 - v) * (1.0 - x) / (1.0 - s) for x in (e1, e2)]
            lp_lo, lp_hi = np.log(np.minimum(*pe)) - 5 * _U, np.log(np.maximum(*pe)) + 5 * _U
            lq_lo, lq_hi = np.log(np.minimum(*qe)) - 5 * _U, np.log(np.maximum(*qe)) + 5 * _U
            ra = [bp / x for x in pe]
            rb = [bq / x for x in qe]
            m_lo = np.minimum(*ra) - np.maximum(*rb)  # a - b over the cell, with 8u relative slack below
            m_hi = np.maximum(*ra) - np.minimum(*rb)
            slack = 8 * _U * (np.abs(ra[0]) + np.abs(ra[1]) + np.abs(rb[0]) + np.abs(rb[1]))
            m_lo, m_hi = m_lo - slack, m_hi + slack
            log_sq_hi = np.log(np.maximum(m_lo**2, m_hi**2))
            log_sq_lo = np.log(np.where((m_lo > 0.0) | (m_hi < 0.0), np.minimum(m_lo**2, m_hi**2), 0.0))
            lh2 = 2.0 * math.log(h) - math.log(2.0)
            ref = self._log_scale(level, idx)
            log_wu = np.log(w_up) + ref
            log_wl = np.where(w_lo > 0.0, np.log(np.maximum(w_lo, 1e-300)), -np.inf) + ref
            log_vu = np.log(v_up) + ref + lh2
            log_vl = np.where(v_lo > 0.0, np.log(np.maximum(v_lo, 1e-300)), -np.inf) + ref + lh2
        return (idx, yb, yb_err, log_wu, log_wl, log_vu, log_vl, lp_lo, lp_hi, lq_lo, lq_hi, log_sq_hi, log_sq_lo)

    def _cell_bounds(self, t: tuple[np.ndarray, ...], ci: np.ndarray, ak: np.ndarray, u: float, v: float, bp: float,
                     bq: float, side: int) -> tuple[np.ndarray | None, np.ndarray | None]:
        """:meth:`window`'s ``(log upper, log lower)`` bounds of the (cell, order) pairs: cells ``ci`` (positions in
        ``t``, :meth:`_cell_terms`), orders ``ak`` (a column); ``side`` 1 / -1: the upper / lower bounds only (the other
        ``None``; each the same numbers as with ``side`` 0, both)."""
        (_, yb, yb_err, log_wu, log_wl, log_vu, log_vl, lp_lo, lp_hi, lq_lo, lq_hi, log_sq_hi, log_sq_lo) = t
        G = _g(yb[ci], np.full(ci.size, bp), np.full(ci.size, bq), ak, yb_err[ci], (_b_err(u, self.s), _b_err(v, self.s)))
        cell_up = cell_lo = None
        if side == 0:
            g_up, g_lo = G.logs((slice(None), slice(None)))
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            la = np.log(ak * (ak - 1.0))
            if side >= 0:
                if side > 0:
                    g_up = G.log_side(True)
                lf_hi = ak * lp_hi[ci, None] + (1.0 - ak) * lq_lo[ci, None]
                lf_hi = lf_hi + 1e-12 * (1.0 + np.abs(lf_hi))
                l2_hi = la + lf_hi + log_sq_hi[ci, None] + 1e-12 * (1.0 + np.abs(lf_hi))
                l2_hi = np.where(np.isnan(l2_hi), np.inf, l2_hi)
                cell_up = np.logaddexp(log_wu[ci, None] + g_up, l2_hi + log_vu[ci, None])
                cell_up = np.where(np.isnan(cell_up), np.inf, cell_up)
            if side <= 0:
                if side < 0:
                    g_lo = G.log_side(False)
                lf_lo = ak * lp_lo[ci, None] + (1.0 - ak) * lq_hi[ci, None]
                lf_lo = lf_lo - 1e-12 * (1.0 + np.abs(lf_lo))
                l2_lo = la + lf_lo + log_sq_lo[ci, None] - 1e-12 * (1.0 + np.abs(lf_lo))
                l2_lo = np.where(np.isnan(l2_lo), -np.inf, l2_lo)
                cell_lo = np.logaddexp(log_wl[ci, None] + g_lo, l2_lo + log_vl[ci, None])
                cell_lo = np.where(np.isnan(cell_lo), -np.inf, cell_lo)
        return cell_up, cell_lo

    def _runs(self, level: int, idx: np.ndarray, u: float, v: float, bp: float, bq: float, alpha: np.ndarray,
              log_tol: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per order, the cells ``idx[first] .. idx[last]`` of ``level`` (its non-empty cells ``idx``) that
        :meth:`window` evaluates one by one, and ``log`` of a certified upper bound on the sum over the
        others, from the cells of a coarser level (8 times wider).

        Bound (*derived*): a coarse cell ``k`` is the union of fine cells, so it holds its points in
        ``[x_k - delta, x_{k+1} + delta]`` (``x_k = xL + k H``, computed as the fine cells' edges; clipped to
        ``[0, 1]``, where every point lies), and ``g`` is convex, so there ``g <= max(g(x_k - delta),
        g(x_{k+1} + delta))``; the cell's sum is at most its mass (upper bound as in :meth:`window`, with the
        coarse level's count of terms) times that maximum (upper bounds of ``g`` from :func:`_g`, ``y = x -
        s`` with its rounding), and at least 0 (``g >= 0``). The coarse cells
        ``0 .. K0 - 1`` and ``K1 + 1 ..`` are bounded so (log-space sums, ``1e-12`` relative and
        ``4 (cells + 4) u`` charged); the fine cells inside ``K0 .. K1`` are evaluated. ``K0, K1`` are
        chosen from estimates (``log g`` at the coarse cells' means): the cells left out are bounded by
        about ``log_tol - log 4`` of the estimated sum; :meth:`window` evaluates every cell of an order
        whose bound of the cells left out exceeds ``log_tol`` of its lower bound."""
        na, ne = alpha.size, idx.size
        coarse = min(level + 3, len(self.h) - 1)
        none = (np.zeros(na, dtype=np.int64), np.full(na, ne - 1, dtype=np.int64), np.full(na, -np.inf))
        if coarse == level:
            return none
        W, Z, H = self.W[coarse], self.Z[coarse], self.h[coarse]
        nc = W.size
        s = self.s
        n_pt = self.count[coarse]
        rho = (1.0 + 1.01 * (n_pt + 4 * len(self.h)) * _U) * (1.0 + math.expm1(self.eps)) - 1.0
        # each coarse cell's interval [x_k - delta, x_{k+1} + delta] (as the fine cells': their union), clipped
        xk = self.x_lo + np.arange(nc + 1) * H
        ends = np.clip(np.concatenate((xk[:-1] - _SLAB_DELTA, xk[1:] + _SLAB_DELTA)), 0.0, 1.0)
        y = ends - s
        g_e = _g(y, np.full(y.size, bp), np.full(y.size, bq), alpha, 4 * _U * (np.abs(y) + s + 1.0),
                 (_b_err(u, s), _b_err(v, s))).logs((slice(None), slice(None)))[0]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            ref = np.reshape(self._log_scale(coarse, slice(None)), (-1, 1))
            crude = (np.log(np.where(W > 0.0, W * (1.0 + rho) + self._clip_up(n_pt), 0.0))[:, None] + ref
                     + np.maximum(g_e[:nc], g_e[nc:]))
            crude = crude + 1e-12 * (1.0 + np.abs(crude))
            crude = np.where(np.isnan(crude), np.inf, crude)
            # estimates: log g at each coarse cell's mean
            yb = self.x_lo + (np.arange(nc) + np.clip(Z / np.where(W > 0.0, W, 1.0), 0.0, 1.0)) * H - s
            lp, lq = np.log1p(bp * yb), np.log1p(bq * yb)
            ell = alpha[None, :] * (lp - lq)[:, None] + lq[:, None]
            d = alpha * bp + (1.0 - alpha) * bq
            lin = np.expm1(np.minimum(ell, 700.0)) - d[None, :] * yb[:, None]
            lg = np.where(ell > 30.0, ell, np.log(np.maximum(lin, 1e-300)))
            contrib = np.log(W)[:, None] + ref + np.where(np.isnan(lg), np.inf, lg)
            thr = _logsumexp(contrib, axis=0) + log_tol - math.log(4.0)
            cum_l = np.logaddexp.accumulate(crude, axis=0)
            cum_r = np.logaddexp.accumulate(crude[::-1], axis=0)[::-1]
        top = np.argmax(contrib, axis=0)
        k0 = np.minimum(np.where(np.all(cum_l <= thr, axis=0), nc, np.argmin(cum_l <= thr, axis=0)), top)
        k1 = np.maximum(nc - 1 - np.where(np.all(cum_r <= thr, axis=0), nc, np.argmin((cum_r <= thr)[::-1], axis=0)), top)
        cols = np.arange(na)
        left = np.where(k0 > 0, cum_l[np.maximum(k0 - 1, 0), cols], -np.inf)
        right = np.where(k1 < nc - 1, cum_r[np.minimum(k1 + 1, nc - 1), cols], -np.inf)
        with np.errstate(invalid="ignore"):
            runs = np.logaddexp(left, right)
            runs = runs + 1e-12 * (1.0 + np.abs(runs)) + math.log1p(4 * (nc + 4) * _U)
        runs = np.where(np.isnan(runs), np.inf, runs)
        # the fine cells inside coarse cells k0 .. k1 (8 fine cells per coarse cell at most)
        per = round(H / self.h[level])
        first = np.searchsorted(idx, k0 * per)
        last = np.searchsorted(idx, (k1 + 1) * per) - 1
        empty = first > last
        return (np.where(empty, none[0], first), np.where(empty, none[1], last), np.where(empty, -np.inf, runs))

    def tails(self, u: float, v: float, bp: float, bq: float, alpha: np.ndarray, rel: float, log_tol: float,
              est: np.ndarray, geometric: bool = True) -> np.ndarray:
        """Upper bound on ``log sum_c Pr[C = c] sum_{a outside the window} M_{c+1}(a) g(a/(c+1))``
        per order, both sides; ``est`` (per order, a log estimate of the slab's sum) decides where the
        first bound is too coarse.

        First (*derived*): ``g`` is convex, so on a tail ``[x_hi, 1]`` it is at most ``max(g(x_hi),
        g(1))`` (and ``max(g(0), g(x_lo))`` below), and the tail's probability is at most Chernoff's
        ``exp(-m KL(k/m || s))`` (:func:`_log_chernoff`): a sum over counts times one number per order.
        Where that exceeds ``log_tol`` of ``est``, the same with finer pieces near the window's edge
        (:data:`_SLAB_TAIL_FINE`; the tails' probabilities are the same for every order, so this costs one
        Chernoff bound per count and piece, and both bounds are certified: the smaller is taken); where
        that too exceeds it, the geometric bounds of :func:`_window_tail`, per count and order, for the
        counts (and sides) with the largest first bounds; without ``geometric``, ``+inf`` for those orders (they leave
        the slab: ``RenyiDirection._build_slabs``)."""
        first = self._first_tails(u, v, bp, bq, alpha, _SLAB_TAIL_PIECES, (1, -1))
        coarse = [sd for sd, f in first.items() if np.any(f[3] > log_tol + est)]
        if coarse:  # (the sides too coarse for some order: finer pieces, the smaller bound per order)
            for sd, f in self._first_tails(u, v, bp, bq, alpha, _SLAB_TAIL_FINE, coarse).items():
                first[sd] = f[:3] + (np.minimum(f[3], first[sd][3]),) + f[4:]
        total = np.full(alpha.size, -np.inf)
        worst = np.zeros(alpha.size, dtype=bool)
        for f in first.values():
            total = np.logaddexp(total, f[3])
            worst |= f[3] > log_tol + est
        if not np.any(worst):
            return total + 1e-12
        if not geometric:
            return np.where(worst, np.inf, total + 1e-12)
        sides = [f[:3] for f in first.values()]
        pieces = [f[4:] for f in first.values()]
        return self._geometric_tails(u, v, bp, bq, alpha, rel, log_tol, est, total, worst, sides, pieces)

    def _first_tails(self, u: float, v: float, bp: float, bq: float, alpha: np.ndarray, fracs: np.ndarray,
                     which: tuple[int, ...] | list[int]) -> dict[int, tuple]:
        """The first bound of :meth:`tails` on pieces ``fracs`` (fractions of the way from the window's edge
        to the end), for the sides ``which`` (1: above, -1: below) that have points beyond the window:
        per side ``(side, edge, open, bound per order, rows' Chernoff bounds per piece, pieces' largest g)``."""
        m = self.m
        out = {}
        for side, edge, open_ in ((1, self.a_hi, self.a_hi < m), (-1, self.a_lo, self.a_lo > 0.0)):
            if side not in which or not np.any(open_):
                continue
            # pieces [x_k, x_k+1] from the window's edge to the end (0 or 1), narrow near the edge;
            # piece k: Pr[the tail from its inner end] x max(g) at its ends
            x_end = self.x_hi if side == 1 else self.x_lo
            far = 1.0 if side == 1 else 0.0
            xs = x_end + (far - x_end) * fracs
            y = xs - self.s
            ends = np.arange(xs.size - 1)
            lg, _ = _g(y[:-1], np.full(ends.size, bp), np.full(ends.size, bq), alpha,
                       4 * _U * (np.abs(y[:-1]) + self.s), (_b_err(u, self.s), _b_err(v, self.s))
                       ).logs((slice(None), slice(None)))
            g_far = _log_g_bound(np.array([bp]), np.array([bq]), np.array([u]), np.array([v]), self.s, alpha, far)
            lg = np.concatenate((lg, g_far), axis=0)  # log g (upper) at the pieces' ends
            g_max = np.maximum(lg[:-1], lg[1:])
            # all pieces at once (rows x pieces): a > a_hi and a/m >= xs[k] (above), a < a_lo and a/m <= xs[k]
            # (each piece's column depends on its fraction only: the columns of fractions already bounded, e.g.
            # the first pieces' in the finer set, are reused, the same values)
            cache = self._lch.setdefault(side, {})
            todo = [k for k, fr in enumerate(fracs[:-1].tolist()) if fr not in cache]
            if todo:
                mk, xk = m[:, None], xs[None, todo]
                if side == 1:
                    lo = np.maximum(edge[:, None] + 1.0, np.ceil(xk * mk * (1.0 - 4 * _U)))
                    hi = np.broadcast_to(mk, lo.shape)
                else:
                    hi = np.minimum(edge[:, None] - 1.0, np.floor(xk * mk * (1.0 + 4 * _U)))
                    lo = np.zeros(hi.shape)
                new = np.where(open_[:, None], _log_chernoff(lo, hi, np.broadcast_to(mk, lo.shape), self.s), -np.inf)
                for i, k in enumerate(todo):
                    cache[float(fracs[k])] = new[:, i]
            lch = np.stack([cache[fr] for fr in fracs[:-1].tolist()], axis=1)
            piece = _logsumexp(self.log_pc_up[:, None] + lch, axis=0)  # per piece: sum over counts
            crude = _logsumexp(piece[:, None] + g_max, axis=0) + 1e-12
            out[side] = (side, edge, open_, crude, lch, g_max)
        return out

    def _geometric_tails(self, u: float, v: float, bp: float, bq: float, alpha: np.ndarray, rel: float,
                         log_tol: float, est: np.ndarray, total: np.ndarray, worst: np.ndarray, sides: list,
                         pieces: list) -> np.ndarray:
        """The second stage of :meth:`tails` (``total``: the first bound; ``pieces``: its rows' terms)."""
        m = self.m
        # the geometric bounds for the orders where the first is too coarse, on the rows (counts and
        # sides) whose first bounds are the largest: the others, together at most half of log_tol of
        # est, keep theirs (the first bound is the sum of the rows' first bounds; each row takes either)
        js = np.flatnonzero(worst)
        k = len(sides)
        lpc = np.tile(self.log_pc_up, k)
        rows = np.concatenate([_logsumexp(lch[:, :, None] + g_max[None, :, js], axis=1) for lch, g_max in pieces])
        rows = lpc[:, None] + rows + 1e-12  # (rows, orders js)
        with np.errstate(invalid="ignore"):
            rank = np.argsort(rows, axis=0)
            cum = np.logaddexp.accumulate(np.take_along_axis(rows, rank, axis=0), axis=0)
        keep = np.zeros(rows.shape, dtype=bool)
        np.put_along_axis(keep, rank, cum <= log_tol - math.log(2.0) + est[None, js], axis=0)
        sel = np.flatnonzero(~np.all(keep, axis=1))
        mg = np.tile(m, k)
        sd_all = np.concatenate([np.full(m.size, float(sd)) for sd, _, _ in sides])
        edges = np.concatenate([e for _, e, _ in sides])[:, None]
        opens = np.concatenate([o for _, _, o in sides])[:, None]
        w_est = est[None, js] - lpc[sel, None] - math.log(mg.size)  # (the rows' shares of the tolerance)
        one = np.ones(sel.size)
        tail = _window_tail(edges[sel], mg[sel], self.s, sd_all[sel], u * one, v * one, bp * one, bq * one, alpha[js],
                            np.zeros(js.size, dtype=np.int64), rel, log_tol, w_est, opens[sel])
        rows[sel] = np.minimum(rows[sel], lpc[sel, None] + tail)
        total[js] = np.minimum(total[js], _logsumexp(rows, axis=0) + math.log1p(4 * (rows.shape[0] + 4) * _U))
        return total + 1e-12


def _measures_window(up: _Slab, lo: _Slab, u: float, v: float, bp: float, bq: float, alpha: np.ndarray, level: int,
                     log_tol: float | None) -> tuple[np.ndarray, np.ndarray]:
    """:meth:`_Slab.window` of a slab (``lo is up``: both ends from its cells, one ``g`` a pair) or of the two
    measures of a :class:`_StrideSlab` (``up``'s upper end, ``lo``'s lower end); the argument is theirs."""
    one = lo is up
    tu = up._cell_terms(u, v, bp, bq, level)
    tl = tu if one else lo._cell_terms(u, v, bp, bq, level)
    iu, il = tu[0], tl[0]
    na, ne = alpha.size, iu.size
    out_up, out_lo = np.full(na, -np.inf), np.full(na, -np.inf)
    if ne == 0:
        return out_up, out_lo
    first, last = np.zeros(na, dtype=np.int64), np.full(na, ne - 1, dtype=np.int64)
    runs = np.full(na, -np.inf)
    if log_tol is not None and ne > 1:
        first, last, runs = up._runs(level, iu, u, v, bp, bq, alpha, log_tol)
    todo = np.arange(na)
    for _ in range(2):
        # the cells first .. last of each order in todo, as (cell, order) pairs in runs of one order
        ci, seg = _order_runs(todo, first, last)
        cell_up, cell_lo = up._cell_bounds(tu, ci, alpha[np.repeat(todo, last[todo] - first[todo] + 1)][:, None],
                                           u, v, bp, bq, 0 if one else 1)
        assert cell_up is not None
        # (the sums over at most ne cells, and the runs' bounds)
        out_up[todo] = np.logaddexp(_segment_logsumexp(cell_up, seg)[:, 0] + math.log1p(4 * (ne + 4) * _U) + 4 * _U,
                                    runs[todo])
        if one:
            assert cell_lo is not None
            out_lo[todo] = _segment_logsumexp(cell_lo, seg)[:, 0] + math.log1p(-4 * (ne + 4) * _U) - 4 * _U
        else:  # the lower slab's cells in the same range of cell indices (possibly none)
            f_l = np.searchsorted(il, iu[first[todo]])
            l_l = np.searchsorted(il, iu[last[todo]], side="right") - 1
            has = l_l >= f_l
            out_lo[todo[~has]] = -np.inf
            if np.any(has):
                th = todo[has]
                fl, ll = np.zeros(na, dtype=np.int64), np.zeros(na, dtype=np.int64)
                fl[th], ll[th] = f_l[has], l_l[has]
                cl, sl = _order_runs(th, fl, ll)
                cell_lo = lo._cell_bounds(tl, cl, alpha[np.repeat(th, ll[th] - fl[th] + 1)][:, None], u, v, bp, bq, -1)[1]
                assert cell_lo is not None
                out_lo[th] = _segment_logsumexp(cell_lo, sl)[:, 0] + math.log1p(-4 * (il.size + 4) * _U) - 4 * _U
        # an order whose runs left out exceed their share of its sum: all its cells
        redo = todo[(runs[todo] > log_tol + out_lo[todo]) if log_tol is not None else np.zeros(todo.size, dtype=bool)]
        if _DEBUG:
            print("slab window", ne, "cells", na, "orders", ci.size, "pairs", redo.size, "redone")
        if redo.size == 0:
            break
        first[redo], last[redo], runs[redo] = 0, ne - 1, -np.inf
        todo = redo
    return out_up, out_lo


#: Strided slabs (:class:`_StrideSlab`): the stride is ``_STRIDE_THETA`` over the steepest ``|d log Pr[C = c] / dc|``
#: at the slab's ends (eps0 = 3, n = 1e5: 1.3 / 0.1748 at c = 4213, 7 counts), used when it is at least ``_STRIDE_MIN``, for slabs of at least
#: ``_STRIDE_MIN_ROWS`` counts whose planned points times ``1 - 2 / stride`` are at least ``_STRIDE_MIN_POINTS``
#: (slab107's count of the points saved by two strided slabs; since slab108 builds both measures in one pass it saves
#: nearer ``1 - 1 / stride``, but the thresholds below were measured with this count, so it stays; work only. slab107:
#: below that a strided slab's two windows cost what the build saved, eps0 = 2, n = 1.4e4 and 6 / 1e6, ~0.3M planned
#: points; slab108's one window made 6 / 1e6 pay, see ``_STRIDE_MIN_POINTS_COARSE``), not scaled, of pairs whose log
#: likelihood ratio exceeds
#: ``_SLAB_RECT_RATIO``, where every order of the slab has a proved log-convex ``K(c)`` (:func:`_chord_orders`). 0
#: turns them off. Only the work and the brackets' widths depend on these (measured, slab107: at 3 / 1e5 the stride's
#: own gap, from exact row sums, is ~0.04 budgets of alpha = 640 for each end at a stride of 8 counts, ~0.09 at 12).
_STRIDE_THETA = 1.3
_STRIDE_MIN = 4
_STRIDE_MIN_ROWS = 64
_STRIDE_MIN_POINTS = 400_000.0
#: ... or ``_STRIDE_MIN_POINTS_COARSE`` where the stride is at least ``_STRIDE_COARSE`` (slab108: with one pass and one
#: window for both measures a strided slab costs about ``1.4 / stride`` of a full slab's build plus a quarter more window;
#: measured, CPU min of 6 interleaved in one process: eps0 = 6, n = 1e6, a 0.30M-point slab at stride 9, 31.3 -> 29.3 ms;
#: at stride 5, eps0 = 2, n = 1.4e4, 38.4 -> 38.6 ms: no gain)
_STRIDE_MIN_POINTS_COARSE = 200_000.0
_STRIDE_COARSE = 8
#: ... and none where ``log Pr[C = c]`` spans more than this many nats over the slab (:func:`_stride_weights` scales
#: the masses by their largest, and ``e^-600`` leaves room for the hat fractions and moments above the normal range;
#: review rev107s D2: a span of ~745 nats underflowed the hat weights to 0, not an upper end; work only).
_STRIDE_MAX_SPREAD = 600.0


def _stride_weights(c1: int, c2: int, N: float, p: float, stride: int
                    ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """The rows ``r_0 = c1, r_j = c1 + j stride, ..., c2`` of a :class:`_StrideSlab` and the log weights of its two
    measures on them, each as a zero-width bracket: ``omega`` (an upper end of the hat weights) and ``nu`` (a lower
    end of the Jensen pieces' masses); the argument is :class:`_StrideSlab`'s. Rows where ``nu`` is 0 get ``-inf``.

    Rounding: ``P_up >= Pr[C = c] >= P_lo`` (the gammaln bracket of :func:`_log_pmf_bracket`, its difference from
    ``ref`` and ``exp`` charged ``4u`` of the magnitudes and ``4u`` relative), scaled by ``e^-ref``; the hat fractions
    ``t``, ``1 - t`` and the sums of at most ``stride + 1`` terms err by far less than the ``1e-9`` relative margins
    applied (``omega`` up, ``nu`` down, the moment comparison on both sides), and ``log`` and the shift back by
    ``1e-12``. The masses are scaled by the largest (``ref``), so their spread ``ref - min(lo)`` over the slab must be at
    most :data:`_STRIDE_MAX_SPREAD` (``e^-600``: every product of a mass with a hat fraction ``>= 1 / stride`` or a
    distance ``<= stride`` stays in the normal range, where the relative margins hold); beyond it a mass could underflow
    to 0, and a 0 is no upper end of a positive hat weight (review rev107s D2), so that raises ``ValueError``
    (:meth:`RenyiDirection._stride` does not stride there)."""
    c = np.arange(c1, c2 + 1, dtype=float)
    n = c.size
    lo, up = _log_pmf_bracket(c, np.full(n, N), p)
    ref = float(np.max(up))
    if not ref - float(np.min(lo)) <= _STRIDE_MAX_SPREAD:
        raise ValueError(f"log Pr[C = c] spans more than {_STRIDE_MAX_SPREAD} nats over {c1} .. {c2}: no stride")
    p_up = np.exp(up - ref + 4 * _U * (np.abs(up) + abs(ref) + 1.0)) * (1.0 + 4 * _U)
    p_lo = np.exp(lo - ref - 4 * _U * (np.abs(lo) + abs(ref) + 1.0)) * (1.0 - 4 * _U)
    rows = np.append(np.arange(0, n - 1, stride, dtype=float), n - 1.0)
    nr = rows.size
    j = np.arange(n, dtype=float)
    k = np.minimum(np.searchsorted(rows, j, side="right") - 1, nr - 2)  # count j in [rows[k], rows[k + 1]]
    t = (j - rows[k]) / (rows[k + 1] - rows[k])
    dl, dr = j - rows[k], rows[k + 1] - j  # (exact integers)
    om = (np.bincount(k, p_up * (1.0 - t), minlength=nr) + np.bincount(k + 1, p_up * t, minlength=nr)) * (1.0 + 1e-9)
    # the Jensen pieces: row k takes the fraction (1 - t) lam_k of each count between it and row k + 1, which takes the
    # rest; lam_k in [0, 1] the largest for which row k's piece has its mean at most r_k (moments below the row from
    # p_lo, above it from p_up)
    b_right = np.bincount(k, p_up * (1.0 - t) * dl, minlength=nr)
    m_right = np.bincount(k, p_lo * (1.0 - t), minlength=nr)
    a_hat = np.bincount(k, p_lo * t * dr, minlength=nr)
    a_rest = np.bincount(k, p_lo * (1.0 - t) * dr, minlength=nr)
    m_hat = np.bincount(k, p_lo * t, minlength=nr)
    nu = np.zeros(nr)
    a_left, m_left = 0.0, 0.0  # the current row's piece below it: its moment about the row, its mass
    for r in range(nr - 1):
        a_cur = a_left * (1.0 - 1e-9)
        b_cur = float(b_right[r]) * (1.0 + 1e-9)
        lam = 1.0 if b_cur <= a_cur else a_cur / b_cur * (1.0 - 1e-9)
        nu[r] = m_left + lam * float(m_right[r])
        a_left = float(a_hat[r]) + (1.0 - lam) * float(a_rest[r])
        m_left = float(m_hat[r]) + (1.0 - lam) * float(m_right[r])
    nu[-1] = m_left
    nu = nu * (1.0 - 1e-9)
    with np.errstate(divide="ignore"):
        lom, lnu = np.log(om) + ref + 1e-12, np.log(nu) + ref - 1e-12
    return c1 + rows, (lom, lom), (lnu, lnu)


class _StrideSlab:
    """A slab (:class:`_Slab`'s sum ``sum_{c = c1}^{c2} Pr[C = c] (K(c) - 1)``) from every ``stride``-th count only:
    two slabs on the rows ``r_j`` of :func:`_stride_weights`, one for the upper end, one for the lower (*derived*;
    slab107).

    Write ``kappa(c) = K(c) - 1 >= 0``, ``P(c) = Pr[C = c]``. (i) ``kappa`` is convex on the integers ``c >= 0``:
    ``log K`` is (lemma94 for integer orders, Theorem K* for ``1 < alpha <= 16`` and the exact symmetric pairs:
    :func:`_chord_orders`, required of every order of the slab), so ``K(c - 1) + K(c + 1) >= 2 (K(c - 1) K(c +
    1))^(1/2) >= 2 K(c)``; and ``kappa`` is non-increasing (FMT21 Lemma F.2, as :meth:`RenyiDirection._above`). Its
    piecewise-linear interpolation ``kappa~`` is then convex and non-increasing on ``[0, inf)``. (ii) Upper: for ``c =
    (1 - t) r_j + t r_{j+1}`` convexity gives ``kappa(c) <= (1 - t) kappa(r_j) + t kappa(r_{j+1})``, so the sum is at
    most ``sum_j omega_j kappa(r_j)`` with the hat weights ``omega_j = sum_c P(c) hat_j(c)``. (iii) Lower: split every
    ``P(c)`` into pieces ``theta_jc P(c)`` (``sum_j theta_jc = 1``) such that row ``j``'s piece has its mean ``m_j <=
    r_j``; ``kappa >= 0`` (pieces may be dropped) and Jensen for ``kappa~`` give ``sum_c P(c) kappa(c) >= sum_j nu_j
    kappa~(m_j) >= sum_j nu_j kappa(r_j)`` (non-increasing), ``nu_j`` the piece's mass. :func:`_stride_weights`
    builds the pieces from the hat split, moving part of a row's share above it to the next row where its mean
    would exceed the row (that only lowers the mean of the one and adds mass below the next). (iv) Both
    ``sum_j w_j kappa(r_j)`` are sums of one ``g`` against the pooled measures ``sum_j w_j Law(X_{r_j + 1})``,
    exactly :class:`_Slab`'s with the row weights ``w_j`` in place of ``Pr[C = c]``: :attr:`up` is built with
    ``omega`` (an upper end; its upper bounds, window and tails, are used), :attr:`lo` with ``nu`` (a lower end; its
    lower window bound is used: the tails are ``>= 0``). The stride's own gap is second order in the stride (the
    chord's and Jensen's errors, ``~ kappa'' stride^2``); the points are ``1 / stride`` of a full slab's (measured,
    eps0 = 3, n = 1e5, stride 7, 170 rows: 1.55M -> 0.22M points). Since slab108 both measures come from one pass over those points
    (:attr:`lo` is :attr:`up`'s ``second``, :meth:`_Slab._second_factors`) and one window evaluates :attr:`up`'s
    upper and :attr:`lo`'s lower cell bounds only (:func:`_measures_window`)."""

    def __init__(self, N: float, p: float, s: float, rel: float, orders: np.ndarray, c1: int, c2: int,
                 x_lo: float, x_hi: float, scaled: bool, stride: int) -> None:
        rows, w_up, w_lo = _stride_weights(c1, c2, N, p, stride)
        # (the lower measure on the same rows, in the same pass: :meth:`_Slab._second_factors`; slab108)
        self.up = _Slab(N, p, s, rel, orders, c1, c2, x_lo, x_hi, scaled, (rows, *w_up), w_lo[0])
        assert self.up.second is not None
        self.lo = self.up.second
        self.orders, self.c1, self.c2, self.x_lo, self.x_hi, self.stride = orders, c1, c2, x_lo, x_hi, stride
        self.R = self.up.R
        self.points = self.up.points + self.lo.points

    def level_for(self, h: np.ndarray) -> np.ndarray:
        """As :meth:`_Slab.level_for` (both slabs have the same cells)."""
        return self.up.level_for(h)

    def window(self, u: float, v: float, bp: float, bq: float, alpha: np.ndarray, level: int,
               log_tol: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(log upper, log lower)``: :attr:`up`'s upper window bound, :attr:`lo`'s lower one, in one pass (slab108).

        The two slabs have the same cells (the same ``x_lo``, ``x_hi``, ``c2``, hence ``h``), so one :meth:`_Slab._runs`
        (:attr:`up`'s) chooses the cells for both: the upper end is :meth:`_Slab.window`'s of :attr:`up` (its cells
        ``first .. last`` one by one, the runs' bound for the rest); the lower end sums :meth:`_Slab.window`'s lower
        cell bounds of :attr:`lo` over its cells inside the same range of ``x`` (the cells outside add ``>= 0``: ``g
        >= 0``, so any subset of cells gives a lower end). Each end is evaluated on its own slab only (the other end
        of each is not needed: half the pairs' work of two windows), and an order whose runs exceed ``log_tol`` of
        this lower end is evaluated at every cell (only the work and the lower end's tightness depend on that)."""
        return _measures_window(self.up, self.lo, u, v, bp, bq, alpha, level, log_tol)

    def tails(self, u: float, v: float, bp: float, bq: float, alpha: np.ndarray, rel: float, log_tol: float,
              est: np.ndarray, geometric: bool = True) -> np.ndarray:
        """:attr:`up`'s tails (the upper measure's; the lower end needs none)."""
        return self.up.tails(u, v, bp, bq, alpha, rel, log_tol, est, geometric)


# ---------------------------------------------------------------------------------------
# One direction: blocks over totals t (outer) x groups over a (inner), refined jointly.
# ---------------------------------------------------------------------------------------

_Z0 = np.concatenate(([-np.inf, -12.0], np.linspace(-8.0, 8.0, 33), [12.0, np.inf]))


#: Blocks of totals get the end bounds (:func:`_end_block_bounds`) only where the clone counts lie below this many sd
#: above the clone count's mean (above it the kernels are flat in ``c`` and the corners are tight; work only).
_END_ABOVE_SD = 0.0
#: ... and where ``log K`` falls across the block by more than this times ``|log theta|`` per count (at most about 1:
#: the lemma's rate; where it falls much more slowly the corners' bounds are the tighter ones; work only).
_END_STEEP = 0.25
#: ... and where the corners' upper bound exceeds this share of the order's budget (work only).
_END_SHARE = 0.01


#: The initial blocks' outer edges, this many sd of the clone count from its mean
#: (:meth:`RenyiDirection._initial_edges`); the tilted first blocks fill the part below the lower one where the largest
#: order's sum sits at least as far below the mean (:meth:`RenyiDirection._tilted_edges`; one constant, review rev99t).
_TAIL_EDGE_SD = 12.0
#: The first blocks at the tilted clone count of a far end (:meth:`RenyiDirection._tilted_edges`): from this many of
#: its sd below its mean, ...
_TILT_HALF = 6.0
#: ... this many sd wide (measured, CPU min of 3 at 14 cells: 6 / 1.5 and 6 / 1 best; 8 / 2 and 5 / 1 no better) ...
_TILT_STEP = 1.5
#: ... and at most this many blocks (else none: n = 1e9, eps0 = 1 would get millions).
_TILT_MAX_BLOCKS = 64


def _log_tilted_mass(c1: np.ndarray, c2: np.ndarray, N: float, p: float, theta: float
                     ) -> tuple[np.ndarray, np.ndarray]:
    """``(upper, lower)`` bounds on ``log sum_{c = c1}^{c2} Pr[C = c] theta^c``, ``C ~ Bin(N, p)``, ``0 < theta <= 1``
    (``-inf`` for empty intervals; the lower end ``-inf`` where the mass underflows).

    Exact identity (*derived*, the exponential tilt of the binomial): ``C(N, c) p^c (1 - p)^(N - c) theta^c = (1 - p +
    p theta)^N C(N, c) p_t^c (1 - p_t)^(N - c)`` with ``p_t = p theta / (1 - p + p theta)``, so the sum is ``(1 - p (1 -
    theta))^N Pr[c1 <= Bin(N, p_t) <= c2]``: one interval mass of a binomial (Boost, with its absolute error budget from
    :func:`.binomial.interval_mass`; where it is at most ``_TINY``, the Chernoff bound :func:`_log_chernoff` instead, as
    :meth:`RenyiDirection._log_block_mass` does: Boost's value may underflow to 0). Rounding: ``1 - p (1 - theta)`` is
    formed as ``(1 - p) + p theta``, a sum of two non-negative terms each within ``u`` relative (``1 - p`` is exact for
    ``p >= 1/2``), so within ``3u`` relative with no cancellation (the difference ``1 - x``, ``x = p (1 - theta)``,
    loses ``u x / (1 - x)`` relative where ``x`` is near 1: ``p = 1 - 2^-53``, ``theta = 1e-6``, found by review);
    the computed ``p_t`` is then within ``5u`` relative and ``1 - p_t`` within ``5u p_t / (1 - p_t)``, which moves
    every term's log by at most ``5u (c + (N - c) p_t / (1 - p_t)) <= 5u N max(1, p_t / (1 - p_t))``, and ``N log(1 -
    x)`` carries ``3u`` absolute from its argument and ``u`` of itself, times ``N`` (all charged ``8u``, with
    ``p_t / (1 - p_t) = p theta / (1 - p)`` formed from the same accurate pieces). ``p = 1``: ``C = N`` surely, the sum is
    ``theta^N`` where ``c1 <= N <= c2`` (a log, charged as above)."""
    c1 = np.maximum(np.asarray(c1, dtype=float), 0.0)
    c2 = np.minimum(np.asarray(c2, dtype=float), N)
    p_theta = p * theta
    one_minus_x = (1.0 - p) + p_theta  # (no cancellation: see the docstring)
    head = N * math.log(one_minus_x)
    if p >= 1.0:
        margin = 8 * _U * (N + abs(head)) + 1e-300
        sure = (c1 <= N) & (N <= c2)
        up = np.where(sure, head + margin, -np.inf)
        return up, np.where(sure, head - margin, -np.inf)
    pt = min(p_theta / one_minus_x, 1.0)
    odds = p_theta / (1.0 - p)
    margin = 8 * _U * (N * (max(1.0, odds) + 1.0) + abs(head)) + 1e-300
    mass, err = bn.interval_mass(c1, c2, int(N), pt)
    up = _safe_log(mass + err)
    lo = _safe_log(mass - err)
    tiny = (mass <= _TINY) & (c2 >= c1)
    if np.any(tiny):
        up[tiny] = _log_chernoff(c1[tiny], c2[tiny], np.full(int(tiny.sum()), N), pt)  # (Boost's value may underflow)
        lo[tiny] = -np.inf
    empty = c2 < c1
    up = np.where(empty, -np.inf, up + head + margin)
    lo = np.where(empty, -np.inf, lo + head - margin)
    return up, lo


def _end_constants(u: float, v: float, s: float, alpha: np.ndarray) -> list[tuple[float, np.ndarray, float]]:
    """Per end of ``x`` usable by :func:`_end_block_bounds`: ``(theta, log F, theta_rel)`` with ``theta = s`` for the end ``x = 1``
    (``F = max(f(0), 1)``, an upper bound) and ``theta = 1 - s`` for ``x = 0`` (``F = max(f(1), 1)``), ``f = p^alpha
    q^(1 - alpha)`` with ``p(x) = u x / s + (1 - u)(1 - x) / (1 - s)``, ``q`` likewise with ``v`` (per order).

    Rounding: the pair's ``u``, ``v``, ``s`` are within :data:`_PAIR_REL` relative of the exact ones, so ``1 - w`` within
    ``_PAIR_REL w / (1 - w)``; the logs of the ratios carry those and ``2u`` each, times ``alpha`` and ``alpha - 1``; the
    products and the sum ``4u`` of their magnitudes (charged with a factor 2). An end whose ``p`` or ``q`` vanishes
    (or ``s`` at 0 or 1) is left out. ``theta_rel``: the relative error of ``theta`` against the exact split (or its
    complement)."""
    out: list[tuple[float, np.ndarray, float]] = []
    if not 0.0 < s < 1.0:
        return out
    for end, theta, pu, pv, ps in ((1, s, 1.0 - u, 1.0 - v, 1.0 - s), (0, 1.0 - s, u, v, s)):
        # (the other end's values: for theta = s the end x = 0, where p = (1 - u)/(1 - s); its weights' errors
        # relative to 1 - w are _PAIR_REL w / (1 - w), to w itself _PAIR_REL)
        if not (pu > 0.0 and pv > 0.0 and ps > 0.0):
            continue
        lp, lq = math.log(pu) - math.log(ps), math.log(pv) - math.log(ps)
        if end == 1:
            e_u, e_v, e_s = u / pu, v / pv, s / ps
            theta_rel = _PAIR_REL
        else:
            e_u = e_v = e_s = 1.0
            theta_rel = _PAIR_REL * s / (1.0 - s) + _U  # (1 - s: the split's error relative to it, and the rounding)
        d_p = 1.01 * _PAIR_REL * (e_u + e_s) + 4 * _U
        d_q = 1.01 * _PAIR_REL * (e_v + e_s) + 4 * _U
        ell = alpha * lp + (1.0 - alpha) * lq
        err = 2.0 * (alpha * d_p + (alpha - 1.0) * d_q + 4 * _U * (alpha * abs(lp) + (alpha - 1.0) * abs(lq) + np.abs(ell)))
        log_f = np.maximum(ell + err, 0.0)
        if np.all(np.isfinite(log_f)):
            out.append((theta, log_f, theta_rel))
    if len(out) == 2 and out[0][0] == out[1][0]:
        # (s = 1/2: both ends have the same theta, and each F gives a valid bound: the smaller one, once)
        out = [(out[0][0], np.minimum(out[0][1], out[1][1]), max(out[0][2], out[1][2]))]
    return out


def _end_block_bounds(cu: np.ndarray, cl: np.ndarray, k_up: np.ndarray, k_lo: np.ndarray | None, lw_up: np.ndarray,
                      ls_up: np.ndarray, ls_lo: np.ndarray, theta: float, log_f: np.ndarray, theta_rel: float
                      ) -> tuple[np.ndarray, np.ndarray]:
    """``(log upper, log lower)`` of ``sum_{c in block} Pr[C = c] (K(c) - 1)`` (blocks x orders) from one end of ``x``
    (*derived*), for pairs with ``lam = 1`` (``K(c) = E f(X_m)``, ``X_m = Bin(m, s) / m``, ``m = c + 1``, one convex ``f
    >= 0`` with ``f(s) = 1`` for every ``c``; module docstring).

    Lemma (end ``x = 1``, ``theta = s``): for ``c <= c'``, ``K(c) <= theta^(c - c') K(c') + F`` and ``K(c') >= theta^(c'
    - c) (K(c) - F)``, ``F = max(f(0), 1)``. Proof: let ``x*`` minimise ``f`` on ``[0, 1]`` (``f`` convex: non-decreasing
    on ``[x*, 1]``, and at most ``max(f(0), f(x*)) <= max(f(0), f(s)) = F`` on ``[0, x*)``). With ``j = m - a`` (the
    clones not reporting 1), ``E[f(X_m); X_m >= x*] = s^m R(m)``, ``R(m) = sum_{j <= m (1 - x*)} C(m, j) ((1 - s) /
    s)^j f(1 - j/m)``. ``R`` is non-decreasing in ``m``: each term's ``C(m, j)`` grows, ``1 - j/m`` grows and stays in
    ``[x*, 1]`` where ``f`` does not decrease, and terms only join the sum. So with ``m <= m'``: ``K(c) = s^m R(m) +
    E[f(X_m); X_m < x*] <= s^(m - m') s^m' R(m') + F <= s^(m - m') K(c') + F``, and ``K(c') >= s^m' R(m') >= s^(m' - m)
    s^m R(m) >= s^(m' - m) (K(c) - F)``. The end ``x = 0`` is the mirror image (``a`` in place of ``j``, ``theta = 1 -
    s``, ``F = max(f(1), 1)``, ``f`` non-increasing on ``[0, x*]``). (At large orders ``K`` falls by about ``theta`` per
    count where one end's terms carry the kernel, e.g. eps0 = 6, alpha = 1024: the bounds meet; the corner bounds
    ``K(hi) <= K(c) <= K(lo - 1)`` differ by ``theta^-width`` there, so blocks one count wide.)

    For a block of counts ``c1 .. c2`` with its upper corner's count ``cu <= c1`` and lower corner's ``cl >= c2``, and
    ``S = sum_{c1}^{c2} Pr[C = c] theta^c`` in ``[e^ls_lo, e^ls_up]`` (:func:`_log_tilted_mass`): the sum is at most
    ``K(cl) theta^-cl S + (F - 1) Pr[block]`` and at least ``(K(cu) - F) theta^-cu S - Pr[block]``. ``k_up`` bounds
    ``log K(cl)`` above, ``k_lo`` ``log K(cu)`` below (``None``: no lower bound, ``-inf``), ``lw_up`` the block's log
    mass above, ``log_f`` is ``log F`` of the order (all arrays elementwise, e.g. one element per block and order).
    Rounding: each result moves by at most a few ulps of its terms' magnitudes (charged ``16u`` of their sum, and
    where a logarithm of a difference cancels, its condition times the rounding of the difference's log-ratio);
    ``theta`` may differ from the exact split (or its complement) by ``theta_rel`` relative, which the powers
    ``theta^-cl``, ``theta^-cu`` and the tilted sum's ``theta^c`` (``c <= cl``) turn into at most ``1.01 theta_rel``
    times ``cl`` each (charged ``3.03 theta_rel (cl + 1)``)."""
    lt = math.log(theta)
    pair_c = (3.03 * theta_rel) * (cl + 1.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        big = k_up - cl * lt + ls_up
        pos = log_f > 0.0
        f1 = np.where(pos, log_f + np.log(-np.expm1(-np.where(pos, log_f, 1.0))), -np.inf)  # log(F - 1): increasing in F
        rest = f1 + lw_up
        up = np.logaddexp(big, rest)
        mags = np.abs(k_up) + np.abs(cl * lt) + np.abs(ls_up) + np.abs(up) + np.where(np.isfinite(rest), np.abs(rest), 0.0)
        up = np.where(np.isnan(up), np.inf, up + 16 * _U * mags + pair_c + 1e-13)
        if k_lo is None:
            return up, np.full(up.shape, -np.inf)
        # lower: log(K(cu) - F) = k_lo + log(1 - e^-d), d = k_lo - log F, whose rounding (dd) moves it by dd e^-d / (1 -
        # e^-d); then a = log((K(cu) - F) theta^-cu S), and the bound log(e^a - Pr[block]) = a + log(1 - e^e), e = lw_up -
        # a, moved by de e^e / (1 - e^e) for a rounding de of e
        d = k_lo - log_f
        okd = d > 0.0
        dd = 16 * _U * (np.abs(k_lo) + np.abs(log_f)) + 1e-15
        kf = np.where(okd, k_lo + np.log(-np.expm1(-np.where(okd, d, 1.0))), -np.inf)
        a = kf - cu * lt + ls_lo
        e = lw_up - a
        oke = e < 0.0
        de = 16 * _U * (np.abs(lw_up) + np.abs(a)) + 1e-15
        lo = np.where(oke, a + np.log(-np.expm1(np.where(oke, e, -1.0))), -np.inf)
        cond = (dd * np.exp(-np.where(okd, d, 1.0)) / -np.expm1(-np.where(okd, d, 1.0))
                + de * np.exp(np.where(oke, e, -1.0)) / -np.expm1(np.where(oke, e, -1.0)))
        mags = np.abs(k_lo) + np.abs(cu * lt) + np.abs(ls_lo) + np.abs(kf) + np.abs(a) + np.abs(lo)
        lo = np.where(np.isfinite(lo), lo - (16 * _U * mags + cond + pair_c + 1e-13), -np.inf)
    return up, lo


#: Blocks of totals get the chord bounds (:meth:`RenyiDirection._chord_bounds`) only where at most this many counts wide
#: (they sum count by count; wider blocks keep the other bounds until split; work only) ...
_CHORD_MAX_WIDTH = 4096
#: ... where ``log K`` at the lower corner is at least this, above (``K >= e^0.5``; work only: the bound is certified for
#: any ``K``, but near ``K = 1`` the chord of ``log K`` gains nothing over the corners) ...
_CHORD_MIN_LOG_K = 0.5
#: ... where the corners' ``log(K - 1)`` bounds differ by more than this (else the chord gains less than the masses'
#: rounding: eps0 = 6, n = 1e9) ...
_CHORD_GAP = 1e-3
#: ... and where the gap of the corners' bounds exceeds this share of the order's budget of the round before (work only).
_CHORD_SHARE = 0.01
#: The first blocks (without slabs) are evaluated at the chord bounds' orders at every this many upper corners only
#: (:meth:`RenyiDirection._chord_stride`; work only).
_CHORD_STRIDE = 8
#: ... and where the bracket of ``log K`` they would give within the block is at most this (estimated; work only).
_CHORD_MAX_GAP = 1.0
#: At most this many (count, order) terms per round (the widest blocks are left out beyond it; work only).
_CHORD_MAX_TERMS = 2_000_000


def _chord_applies(u: float, v: float, s: float) -> bool:
    """Whether ``log K(c)`` is convex in the clone count ``c >= 0`` at every integer order ``alpha >= 2`` for the
    ``lam = 1`` kernels of the pair ``(u, v, s)`` (*proved*; the hypothesis checked with a relative margin of
    ``2 _PAIR_REL`` on each of ``u``, ``v``, ``s``, ``1 - v``: the floats are within :data:`_PAIR_REL` of the exact
    values the entries certify, :func:`_end_constants`).

    Theorem (lemma94, 2026-11-24; exact-arithmetic checks of every step for ``m <= 110``, of the conclusion for ``m <=
    364``): for ``S_m ~ Bin(m, s)``, any ``s`` in ``[0, 1]`` and real ``k >= 1``, ``mu_k(m) = E[(S_m / m)^k]`` is
    log-convex in the integer ``m >= 1``. Proof sketch: with ``A, B ~ Bin(m, s)``, ``A' ~ Bin(m - 1, s)``, ``B' ~
    Bin(m + 1, s)`` independent, ``(A/m)(B/m) <=cx (A'/(m - 1))(B'/(m + 1))`` (convex order), so ``mu_k(m)^2 = E[((A/m)
    (B/m))^k] <= E[((A'/(m-1))(B'/(m+1)))^k] = mu_k(m - 1) mu_k(m + 1)``. For the convex order, draw ``2m`` iid
    Bernoulli(s) and condition on their sum ``N``: ``A`` and ``A'`` are the ones among the first ``m`` and ``m - 1``
    (hypergeometric; ``s`` drops out), and it suffices that ``phi(A) / m^2 <=cx phi(A') / (m^2 - 1)``, ``phi(h) = h (N
    - h)``. Both have the mean ``N (N - 1) / (2m (2m - 1))``; a thinning of ``phi(A)`` (from level ``kappa = |2h - N|``
    to ``kappa + 2`` with probability ``v_kappa / (m^2 (kappa + 1))``) gives ``Y`` with ``E[Y | phi(A)] = (1 - 1/m^2)
    phi(A)``, so ``phi(A)/m^2 <=cx Y/(m^2 - 1)`` (Jensen); and ``law(phi(A')) - law(Y)``, a signed measure with total
    and first moment 0, has the sign pattern ``(+)* (-)* (+)*`` (closed forms of the hypergeometric ratios and a
    quartic in ``kappa``), which integrates every convex function to ``>= 0`` (subtract the chord over the negative
    part's hull). Corollary (Cauchy-Schwarz): ``E f(S_m / m)`` is log-convex in ``m >= 1`` for every ``f(x) = sum_k c_k
    x^k`` with ``c_k >= 0`` converging on ``[0, 1]`` (sums of log-convex functions are log-convex).

    Here ``K(c) = E f(X_m)``, ``X_m = Bin(m, s)/m``, ``m = c + 1``, ``f = p^alpha q^(1 - alpha)`` with ``p(x) = u x /
    s + (1 - u)(1 - x)/(1 - s)``, ``q`` likewise with ``v`` (module docstring). For integer ``alpha >= 2`` and ``u >=
    s >= v > 0``: ``p`` is affine, non-decreasing with ``p(0) >= 0``, so ``p^alpha`` is a polynomial with non-negative
    coefficients; ``q = q(0) (1 - g x)``, ``q(0) = (1 - v)/(1 - s) > 0``, ``g = (s - v)/(s (1 - v))`` in ``[0, 1)``,
    so ``q^(1 - alpha) = q(0)^(1 - alpha) sum_k C(alpha - 2 + k, k) g^k x^k`` (non-negative, converging on ``[0, 1]``);
    their product is such an ``f``. The mirror case ``u <= s <= v < 1`` is the same under ``x -> 1 - x`` (``s -> 1 -
    s``, ``u -> 1 - u``, ``v -> 1 - v``; ``X_m`` becomes ``Bin(m, 1 - s)/m``). Non-integer orders are *not* covered
    by this theorem (the Taylor coefficients of ``f`` eventually alternate, e.g. ``alpha = 1.5``, ``u = 0.8``, ``v =
    0.2`` from ``x^5``); for the exact symmetric pairs Theorem K* covers ``1 < alpha <= 16`` (:func:`_exact_symmetric`)."""
    if not 0.0 < s < 1.0:
        return False
    m = 2.0 * _PAIR_REL
    rising = u * (1.0 - m) >= s * (1.0 + m) and 0.0 < v * (1.0 + m) <= s * (1.0 - m)
    falling = u * (1.0 + m) <= s * (1.0 - m) and s * (1.0 + m) <= v * (1.0 - m) and v * (1.0 + m) < 1.0
    return rising or falling


#: The largest order covered by Theorem K* (:func:`_exact_symmetric`).
_KSTAR_TOP = 16.0


def _exact_symmetric(pair: ClonePair) -> bool:
    """Whether the ``lam = 1`` kernels the engine certifies for ``pair`` are those of Theorem K*, decided by the pair's
    type, not by float closeness: ``p0 = 0`` (every entry at ``lam = 1``), ``r0 == r1 > 0`` (then ``s = fl(r0 / fl(r0 +
    r1)) = 1/2`` exactly: ``r0 + r1 = 2 r0`` is exact, and the engine takes the float ``s`` as exact, the rates ``p s``,
    ``p (1 - s)`` being the pair's own, :func:`_rate_rounded_pair`) and ``pa, pb > 0``. The entries' bounds are for the
    exact quotients ``u = pa / (pa + pb)``, ``v = pb / (pa + pb)`` (the floats within :data:`_PAIR_REL` of them are
    charged, :func:`_b_err`, :func:`_end_constants`), and those sum to 1 exactly whatever ``pa + pb`` is.

    Theorem K* (docs/proof_binomial_moments.md; helper lemma97, reviewed VALID by revproof97, remainder re-checked in
    rigorous arithmetic by kstar99; *computer-assisted*: exact-integer certificates and interval arithmetic). For ``s =
    1/2``, ``u + v = 1``, ``lam = 1``, every real order ``1 < alpha <= 16`` and every ``eps0`` (``w = 2u - 1`` in
    ``(-1, 1)``): ``K(m - 1) K(m + 1) >= K(m)^2`` for every ``m >= 2``, ``K(m) = E f(Bin(m, 1/2) / m)``, ``m = c + 1``,
    ``f`` as in :func:`_chord_applies`; i.e. ``log K(c)`` is convex on the integers ``c >= 0``. (With ``y = 2x - 1``:
    ``f = (1 + w y)^alpha (1 - w y)^(1 - alpha)``, ``K(m) = E F(w Y_m)``, ``F`` the even part, ``Y_m`` the mean of ``m``
    Rademacher signs.) Scope: only this exact pair and orders ``<= 16``; for other pairs or non-integer orders above 16
    nothing is proved (integer orders keep lemma94's rule, :func:`_chord_applies`)."""
    return (pair.p0 == 0.0 and pair.r0 == pair.r1 and pair.r0 > 0.0 and pair.split == 0.5
            and pair.pa > 0.0 and pair.pb > 0.0)


def _chord_orders(alpha: np.ndarray, u: float, v: float, s: float, symmetric: bool = False) -> np.ndarray:
    """Per order, whether ``log K`` is proved convex in ``c``: integer orders ``>= 2`` of a pair meeting
    :func:`_chord_applies`' hypothesis (lemma94), and, where ``symmetric`` (the pair passes :func:`_exact_symmetric`:
    Theorem K*, computer-assisted), every order ``1 < alpha <= 16``."""
    alpha = np.asarray(alpha, dtype=float)
    out = (alpha >= 2.0) & (alpha == np.floor(alpha)) & _chord_applies(u, v, s)
    if symmetric:
        out = out | ((alpha > 1.0) & (alpha <= _KSTAR_TOP))
    return out


def _log_k(log_excess: np.ndarray, side: int) -> np.ndarray:
    """``log K = log(1 + e^log_excess)`` from a bound on ``log(K - 1)``, rounded outwards (``side = +1``: up; ``logaddexp``
    is within a few ulps of its result, relative: charged ``8u``; and ``1e-320`` absolute, for subnormal results where a
    relative factor rounds nothing: review rev94c, unreachable from the chord's callers, whose ``K - 1`` is ``>~ 1e-41``)."""
    with np.errstate(over="ignore"):
        out = np.logaddexp(0.0, log_excess)
    return out * (1.0 + side * 8 * _U) + side * 1e-320


def _log_expm1(h: np.ndarray, side: int) -> np.ndarray:
    """``log(e^h - 1)`` for ``h > 0``, rounded outwards (``side = +1``: up): ``h + log(-expm1(-h))``, each operation
    within an ulp or two of its result (charged ``8u`` of the magnitudes, and ``4u`` of ``1 / h`` for the log of
    ``-expm1(-h)`` near 0); ``-inf`` for ``h <= 0``."""
    pos = h > 0.0
    hh = np.where(pos, h, 1.0)
    with np.errstate(divide="ignore"):
        t = np.log(-np.expm1(-hh))
    out = hh + t
    err = 8 * _U * (np.abs(hh) + np.abs(t) + np.abs(out)) + 4 * _U
    # (nan, no information: +inf for an upper bound, -inf for a lower one)
    return np.where(pos, out + side * err, np.where(np.isnan(h), side * np.inf, -np.inf))


def _chord_upper(hu_a: np.ndarray, hu_b: np.ndarray, c_a: np.ndarray, c_b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Upper bounds on ``h(c) = log K(c)`` for ``c_a <= c <= c_b`` (``c_a < c_b``) from upper bounds ``hu_a``, ``hu_b`` at
    ``c_a``, ``c_b``, for ``h`` convex (:func:`_chord_applies`) and non-increasing: the chord of the upper bounds lies
    above the chord of ``h``, which lies above ``h`` on ``[c_a, c_b]``; its slope ``-g``, ``g = (hu_a - hu_b) / (c_b -
    c_a)`` (a difference and a quotient of floats: within ``2.01u``), is taken with ``g`` moved up by ``4u`` and at
    least 0 (a larger ``g`` only loosens; at ``g = 0`` the bound is ``hu_b``, the larger end where ``hu_a < hu_b``); the
    product by the exact ``c_b - c`` and the sum charged ``16u`` of the magnitudes; at most ``hu_a`` (monotone).
    Elementwise."""
    with np.errstate(invalid="ignore", over="ignore"):
        g = (hu_a - hu_b) / (c_b - c_a)
        g = np.where(g > 0.0, g * (1.0 + 4 * _U), 0.0)
        h = hu_b + (c_b - c) * g
        out = np.minimum(h + 16 * _U * (np.abs(hu_a) + np.abs(hu_b) + np.abs(h)), hu_a)
    # (an infinite end gives inf * 0 = nan at c = c_b: no information, +inf; review renyi95: not reachable from the
    # callers today, which pass finite bounds and c < c_b)
    return np.where(np.isnan(out), np.inf, out)


def _secant_lower(hl_near: np.ndarray, hu_far: np.ndarray, c_near: np.ndarray, c_far: np.ndarray, c: np.ndarray
                  ) -> np.ndarray:
    """Lower bounds on ``h(c) = log K(c)`` (convex, non-increasing) from a lower bound ``hl_near`` at ``c_near`` and an
    upper bound ``hu_far`` at ``c_far``, for ``c`` on the other side of ``c_near`` than ``c_far`` (or at it): the
    secant through ``c_far``, ``c_near`` extended beyond ``c_near`` lies below ``h`` (the slopes of a convex function
    increase), so ``h(c) >= h(c_near) + (c - c_near) m`` with ``m`` the secant's slope; ``m = (hl_near - hu_far) / (c_near
    - c_far)`` is at least it for ``c_far > c_near`` and at most it for ``c_far < c_near``, as needed by the sign of ``c
    - c_near`` (for ``c < c_near`` also at most 0: ``h`` is non-increasing). ``m`` moved by ``4u`` of itself against
    that sign (its rounding: ``2.01u``), the product and sum charged ``16u`` of the magnitudes; ``-inf`` where ``m`` is
    not finite (no such neighbour). Elementwise."""
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        m = (hl_near - hu_far) / (c_near - c_far)
        d = c - c_near
        m = np.where(d < 0.0, np.minimum(m, 0.0) + 4 * _U * np.abs(m), m - 4 * _U * np.abs(m))
        s = d * m
        h = hl_near + s
        h = h - 16 * _U * (np.abs(hl_near) + np.abs(s) + np.abs(h))
        return np.where(np.isfinite(m), h, -np.inf)


def _nearest_evaluated(done: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row (entries sorted by ``c``) and column of ``done``: the index of the nearest row evaluated at or below it
    (``-1``: none) and at or above it (the row count: none)."""
    n = done.shape[0]
    ar = np.arange(n)[:, None]
    prv = np.maximum.accumulate(np.where(done, ar, -1), axis=0)
    nxt = np.minimum.accumulate(np.where(done, ar, n)[::-1], axis=0)[::-1]
    return prv, nxt


def _chord_envelope(c: np.ndarray, done: np.ndarray, up: np.ndarray, lo: np.ndarray, cols: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of entries not evaluated at an order from the evaluated ones, where ``log K`` is convex in ``c``
    (:func:`_chord_applies`; *derived*): an entry at ``c`` between the nearest evaluated ones ``c_a < c < c_b`` (at that
    order) gets the chord of their upper bounds above (:func:`_chord_upper`) and below the larger of the secants through
    ``c_b`` and the next evaluated entry above it and through ``c_a`` and the next below it (:func:`_secant_lower`), each
    as ``log(K - 1)`` (:func:`_log_k`, :func:`_log_expm1`, rounded outwards), where tighter than its bounds (the
    monotone envelope's). ``c`` sorted; ``up``, ``lo`` the entries' ``log(K - 1)`` bounds in that order (entries x
    orders); ``done`` (entries x ``cols``) whether each was evaluated at the orders ``cols``."""
    n = c.size
    U, L = up[:, cols], lo[:, cols]
    prv, nxt = _nearest_evaluated(done)
    miss = ~done & (prv >= 0) & (nxt < n)
    i, j = np.nonzero(miss)
    if i.size == 0:
        return up, lo
    a, b = prv[i, j], nxt[i, j]
    a2 = np.where(a >= 1, prv[np.maximum(a - 1, 0), j], -1)  # the next evaluated below a, above b
    b2 = np.where(b + 1 < n, nxt[np.minimum(b + 1, n - 1), j], n)
    hu, hl = _log_k(U, 1), _log_k(L, -1)
    hu_a2 = np.where(a2 >= 0, hu[np.maximum(a2, 0), j], np.inf)  # (none: the secant is -inf)
    hu_b2 = np.where(b2 < n, hu[np.minimum(b2, n - 1), j], np.inf)
    ci = c[i]
    h_up = _chord_upper(hu[a, j], hu[b, j], c[a], c[b], ci)
    h_lo = np.maximum(_secant_lower(hl[b, j], hu_b2, c[b], c[np.minimum(b2, n - 1)], ci),
                      _secant_lower(hl[a, j], hu_a2, c[a], c[np.maximum(a2, 0)], ci))
    U, L = U.copy(), L.copy()
    with np.errstate(invalid="ignore"):
        U[i, j] = np.minimum(U[i, j], _log_expm1(h_up, 1))
        L[i, j] = np.maximum(L[i, j], _log_expm1(h_lo, -1))
    up, lo = up.copy(), lo.copy()
    up[:, cols], lo[:, cols] = U, L
    return up, lo


def _order_chord(alpha: np.ndarray, up: np.ndarray, done: np.ndarray) -> np.ndarray:
    """Upper bounds on ``log(K - 1)`` of each entry (row) at the orders (columns, ``alpha``) it was not evaluated at
    (``done`` False), from its own bounds ``up`` at the nearest evaluated orders below and above (*derived*: convexity
    in the order); ``up`` where tighter or where no evaluated order lies above.

    For one kernel pair ``(P_c, Q_c)`` (any ``c``, ``u``, ``v``, ``s``; module docstring), ``h(alpha) = log K = log
    sum_a P(a) (P(a) / Q(a))^(alpha - 1)`` is convex in ``alpha`` (a log-sum-exp of functions affine in ``alpha``;
    Hoelder), and ``h(1) = log sum_{Q > 0} P <= 0`` (``P_c`` is a probability: ``sum_a P_c(a) = 1``; terms with ``Q =
    0 < P`` make ``h = +inf`` at every ``alpha > 1``, where every bound is ``+inf``). So for ``a1 < alpha < a2``
    (``a2`` the nearest evaluated order above, ``a1`` the nearest below, else ``a1 = 1`` with ``h <= 0``): ``h(alpha)
    <= ((a2 - alpha) h(a1) + (alpha - a1) h(a2)) / (a2 - a1)``, and any upper bounds ``H1 >= h(a1)``, ``H2 >= h(a2)``
    may replace them (non-negative weights). ``H = log K`` from the ``log(K - 1)`` bounds rounded up
    (:func:`_log_k`); the chord ``H1 + w (H2 - H1)``, ``w = (alpha - a1) / (a2 - a1)`` in ``[0, 1]`` (three roundings,
    ``3.01u`` relative), the difference, product and sum (``u`` of each magnitude): within ``8u (|H1| + |H2| + |h|)``,
    charged ``16u`` of that plus ``1e-300``; back to ``log(K - 1)`` by :func:`_log_expm1` rounded up. The same
    exact pair at every order: an entry's ``u``, ``v`` are fixed when it is created, and each order's bound certifies
    the ``K`` of one and the same pair: the float pair ``u = fl(pa / (pa + pb))`` that :mod:`..analyses` names as the
    engines' pair (the term-by-term sums, :func:`_exact_chunk`, certify that float pair directly; the two-term path at
    ``c = 0`` brackets it too), never a pair that differs between orders (review rev103s corrected this sentence)."""
    n_e, na = up.shape
    if n_e == 0 or na < 2 or np.all(done):
        return up
    srt = np.argsort(alpha, kind="stable")
    al, U, D = alpha[srt], up[:, srt], done[:, srt]
    cols = np.arange(na)
    prv = np.maximum.accumulate(np.where(D, cols, -1), axis=1)  # nearest evaluated order at or below
    nxt = np.minimum.accumulate(np.where(D, cols, na)[:, ::-1], axis=1)[:, ::-1]  # ... at or above
    i, j = np.nonzero(~D & (nxt < na))
    if i.size == 0:
        return up
    a, b = prv[i, j], nxt[i, j]
    h2 = _log_k(U[i, b], 1)
    h1 = np.where(a >= 0, _log_k(U[i, np.maximum(a, 0)], 1), 0.0)
    a1 = np.where(a >= 0, al[np.maximum(a, 0)], 1.0)
    with np.errstate(invalid="ignore", over="ignore"):
        w = (al[j] - a1) / (al[b] - a1)
        h = h1 + w * (h2 - h1)
        h = h + 16 * _U * (np.abs(h1) + np.abs(h2) + np.abs(h)) + 1e-300
    h = np.where(np.isnan(h), np.inf, h)
    U = U.copy()
    U[i, j] = np.minimum(U[i, j], _log_expm1(h, 1))
    out = np.empty_like(up)
    out[:, srt] = U
    return out


def _log_pmf_counts(c: np.ndarray, N: float, p: float, rel: float) -> tuple[np.ndarray, np.ndarray]:
    """``(value, error)`` with ``|log Pr[Bin(N, p) = c] - value| <= error`` at integer counts ``c`` (runs of consecutive
    counts by the ratio recurrence of :func:`.binomial.pmf_points`, with its relative bound, and at least ``rel``);
    where the pmf is below ``e^-650`` (or underflows), :func:`_log_pmf_bracket`'s midpoint and half-width."""
    v, rv = bn.pmf_points(c, N, p)
    with np.errstate(divide="ignore"):
        val = np.log(v)
    err = 1.01 * np.maximum(rv, rel) + 2 * _U * np.abs(np.where(np.isfinite(val), val, 0.0))
    return _below_floor_from_bracket(val, err, c, N, p)


def _best_of(found: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]], shape: tuple[int, int]
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Per (block, order) element the least upper bound, largest lower bound and least estimate of several ``(rows,
    orders, upper, lower, estimate)`` sets of block bounds (each certified, so their best is), as one such set with each
    element once (``None``: none; one set: itself)."""
    if len(found) < 2:
        return found[0] if found else None
    up, lo, est = np.full(shape, np.inf), np.full(shape, -np.inf), np.full(shape, np.inf)
    seen = np.zeros(shape, dtype=bool)
    for r, o, u, l, e in found:
        up[r, o], lo[r, o], est[r, o] = np.minimum(up[r, o], u), np.maximum(lo[r, o], l), np.minimum(est[r, o], e)
        seen[r, o] = True
    r, o = np.nonzero(seen)
    return r, o, up[r, o], lo[r, o], est[r, o]


def _order_runs(todo: np.ndarray, first: np.ndarray, last: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The positions ``first[j] .. last[j]`` of the orders ``j`` in ``todo`` (each at least one), one run per order,
    and the runs' starts."""
    cnt = last[todo] - first[todo] + 1
    seg = np.cumsum(cnt) - cnt
    ci = np.arange(int(np.sum(cnt))) - np.repeat(seg, cnt) + np.repeat(first[todo], cnt)
    return ci, seg


def _segment_logsumexp(x: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """``log sum exp`` of the rows of ``x`` (cells, orders) over the consecutive segments
    beginning at ``starts``; all ``-inf`` gives ``-inf``; no warnings."""
    m = np.maximum.reduceat(x, starts, axis=0)
    m_safe = np.where(np.isfinite(m), m, 0.0)
    seg = np.repeat(np.arange(starts.size), np.diff(np.append(starts, x.shape[0])))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        s = np.add.reduceat(np.exp(x - m_safe[seg]), starts, axis=0)
        out = np.log(s) + m_safe
    return np.where(np.isneginf(m), -np.inf, out)


class RenyiDirection:
    """Certified ``S_alpha(P||Q) - 1`` (in logs) of one direction of a clone pair, for many
    orders at once.

    Work layout: blocks of totals ``t`` (outer) use kernel *entries* ``(c, lam)`` at their
    corners; each entry's sum over ``a`` is split into *cells* (groups of consecutive
    ``a``), each bounded by :class:`_Kernel` (chord above, Jensen below). One partition
    serves all orders: blocks are split where any order's outer gap is large, and each
    entry's cells are split individually where any order's inner gap is large. Block
    masses, entries and cell bounds (for all orders) are computed once and kept, so a
    refinement round evaluates only the new blocks, entries and cells.
    """

    # state of the work layout, (re)set by ``bounds``
    ent_keys: np.ndarray
    ent_ids: np.ndarray
    ent_c: np.ndarray
    ent_u: np.ndarray
    ent_v: np.ndarray
    ent_up: np.ndarray
    ent_lo: np.ndarray
    ent_exact: np.ndarray
    ent_done: np.ndarray
    _c_sorted: np.ndarray | None
    cell_ent: np.ndarray
    cell_e: np.ndarray
    cell_up: np.ndarray
    cell_lo: np.ndarray
    _sorted: bool
    lo: np.ndarray
    hi: np.ndarray
    lw_up: np.ndarray
    lw_lo: np.ndarray
    iu: np.ndarray
    il: np.ndarray
    ls_up: np.ndarray
    ls_lo: np.ndarray
    _raw_totals: tuple[np.ndarray, np.ndarray] | None
    _last_raw: tuple[np.ndarray, np.ndarray] | None

    def __init__(self, pair: ClonePair, exact_window: int = _EXACT_WINDOW) -> None:
        self.pair = pair
        self.exact_window = exact_window  # 0: cells only (the reference path of the tests)
        self.dir = TotalsGeometry(pair)  # lam, block_mass, initial block edges
        self.pa1, self.pb1 = pair.pa / (pair.pa + pair.pb), pair.pb / (pair.pa + pair.pb)
        self.s = pair.split
        self.p = pair.clone_probability
        self.N = pair.n - 1
        self.rel = bn.relative_error_budget(max(pair.n, 1))
        self.bernoulli = not 0.0 < self.s < 1.0
        # entries evaluated only at the orders their blocks need (the others bounded by the
        # monotone envelope in c): pairs whose entries all have lam = 1
        self.envelope = pair.p0 == 0.0
        self._tails: dict = {}  # Boost's tails at the cells' edges, for this split s (_unique_call)
        #: the slabs of clone counts (:meth:`_build_slabs`, per call of :meth:`bounds`); none before
        self.slabs: list[_Slab | _StrideSlab] = []
        #: the ends of x for the end bounds (:func:`_end_constants`, set by :meth:`bounds`); none before
        self._ends: list[tuple[float, np.ndarray, float]] = []
        #: whether they are in use (set by :meth:`bounds` after its first round; :meth:`_envelope` applies them then)
        self._ends_on = bool(self._ends)
        #: per order, whether the chord bounds apply (:meth:`_chord_bounds`, set by :meth:`bounds`); and how many (block,
        #: order) elements they were computed at in the last :meth:`bounds`
        self._chord_cols = np.zeros(0, dtype=bool)
        self._chord_on = False
        self.chord_used = 0
        #: whether the last :meth:`bounds` stopped after :data:`_IDLE_ROUNDS` rounds without progress (or beyond
        #: :data:`_MAX_CELLS`)
        self.idle_stop = False

    # -- entries and cells ------------------------------------------------------------
    def _entry_ids(self, c: np.ndarray, lam: np.ndarray, need: np.ndarray | None = None) -> np.ndarray:
        """Indices of the entries ``(c, lam)``, creating (and evaluating) the new ones at the
        orders ``need`` (rows: per requested entry; ``None``: every order) and evaluating the
        known ones at the orders of ``need`` they lack."""
        na = self.alpha.size
        if need is None or not self.envelope:
            need = np.ones((c.size, na), dtype=bool)
        keys = c + 1j * lam
        uniq, inv = np.unique(keys, return_inverse=True)
        inv = inv.ravel()
        want = np.zeros((uniq.size, na), dtype=bool)
        np.logical_or.at(want, inv, need)
        pos = np.searchsorted(self.ent_keys, uniq)
        pos_c = np.minimum(pos, max(self.ent_keys.size - 1, 0))
        known = (pos < self.ent_keys.size) & (self.ent_keys[pos_c] == uniq) if self.ent_keys.size else np.zeros(uniq.size, bool)
        ids = np.where(known, self.ent_ids[pos_c] if self.ent_keys.size else 0, -1)
        fresh = ~known
        first = self.ent_c.size
        if np.any(fresh):
            new_keys = uniq[fresh]
            new_ids = np.arange(first, first + new_keys.size)
            ids[fresh] = new_ids
            self._new_entries(new_keys.real.copy(), new_keys.imag.copy())
            all_keys = np.concatenate((self.ent_keys, new_keys))
            all_ids = np.concatenate((self.ent_ids, new_ids))
            order = np.argsort(all_keys, kind="stable")
            self.ent_keys, self.ent_ids = all_keys[order], all_ids[order]
        todo = want & ~self.ent_done[ids]
        rows = np.flatnonzero(np.any(todo, axis=1))
        if rows.size:
            self._evaluate_entries(ids[rows], todo[rows])
        return ids[inv]

    def _new_entries(self, c: np.ndarray, lam: np.ndarray) -> None:
        """Append entries ``(c, lam)``, not yet evaluated at any order."""
        # first user of the kernel pair (clones.py module docstring): u = lam pa' + (1-lam) s
        u = lam * self.pa1 + (1.0 - lam) * self.s
        v = lam * self.pb1 + (1.0 - lam) * self.s
        na = self.alpha.size
        self.ent_c = np.concatenate((self.ent_c, c))
        self.ent_u = np.concatenate((self.ent_u, u))
        self.ent_v = np.concatenate((self.ent_v, v))
        self.ent_up = np.concatenate((self.ent_up, np.full((c.size, na), np.inf)))
        self.ent_lo = np.concatenate((self.ent_lo, np.full((c.size, na), -np.inf)))
        self.ent_exact = np.concatenate((self.ent_exact, np.zeros(c.size, dtype=bool)))
        self.ent_done = np.concatenate((self.ent_done, np.zeros((c.size, na), dtype=bool)))

    def _evaluate_entries(self, ids: np.ndarray, need: np.ndarray) -> None:
        """Evaluate the entries ``ids`` at the orders ``need`` (rows per entry): term by term
        where the window allows (entries with similar order sets share a call over the union of
        their orders), else by cells at every order."""
        c, u, v = self.ent_c[ids], self.ent_u[ids], self.ent_v[ids]
        if self.bernoulli:
            up, lo = _bernoulli_excess(u, v, self.alpha)
            self.ent_up[ids], self.ent_lo[ids] = up, lo
            self.ent_done[ids] = True
            self.ent_exact[ids] = True
            return
        failed = np.zeros(ids.size, dtype=bool)
        if self.exact_window > 0:
            for rows, cols in _order_clusters(need):
                # the kernel at c = 0 (two terms) by :func:`_two_term_excess`, unless it shares a call of small supports
                # (every term of every entry in one chunk: there it costs nothing more)
                zero = rows[c[rows] == 0.0]
                if zero.size and (rows.size == 1 or float(np.max(c[rows])) + 1.0 > _FULL_WINDOW):
                    up, lo, two = _two_term_excess(u[zero], v[zero], self.s, self.alpha[cols])
                    e = ids[zero[two]]
                    self.ent_up[np.ix_(e, cols)], self.ent_lo[np.ix_(e, cols)] = up[two], lo[two]
                    self.ent_done[np.ix_(e, cols)] = True
                    self.ent_exact[e] = True
                    rows = rows[~np.isin(rows, zero[two])]
                    if rows.size == 0:
                        continue
                up, lo, done = _exact_excess(c[rows], u[rows], v[rows], self.s, self.alpha[cols], self.rel,
                                             self._tail_tol, self.exact_window)
                ok = rows[done]
                e = ids[ok]
                self.ent_up[np.ix_(e, cols)] = up[done]
                self.ent_lo[np.ix_(e, cols)] = lo[done]
                self.ent_done[np.ix_(e, cols)] = True
                self.ent_exact[e] = True
                failed[rows[~done]] = True
        else:
            failed[:] = True
        if not np.any(failed):
            return
        # cells: every order (the entry's bounds are the sums over its cells)
        fid = ids[failed]
        self.ent_done[fid] = True
        self.ent_exact[fid] = False
        self.ent_up[fid], self.ent_lo[fid] = np.inf, -np.inf
        c = c[failed]
        small = c + 2.0 <= _SMALL_C + 2
        e_list, id_list = [], []
        if np.any(small):  # term by term: one cell per value of a
            cs = c[small]
            width = (cs + 2.0).astype(np.int64)
            rep = np.repeat(fid[small], width)
            start = np.repeat(np.cumsum(width) - width, width)
            a = (np.arange(rep.size) - start).astype(float)
            e_list.append(np.stack((a, a + 1.0), 1))
            id_list.append(rep)
        large = ~small
        if np.any(large):
            rid, z_lo, z_hi = self._templates(c[large], fid[large])
            cl = self.ent_c[rid]
            m1 = cl + 1.0
            mean = m1 * self.s
            sd = np.sqrt(np.maximum(m1 * self.s * (1.0 - self.s), 1.0))
            top = cl + 2.0
            e = []
            for z in (z_lo, z_hi):
                with np.errstate(invalid="ignore"):
                    x = np.floor(mean + z * sd)
                x = np.where(np.isneginf(z), 0.0, np.where(np.isposinf(z), top, x))
                e.append(np.clip(x, 0.0, top))
            lo_e, hi_e = e
            keep = hi_e > lo_e
            e_list.append(np.stack((lo_e[keep], hi_e[keep]), 1))
            id_list.append(rid[keep])
        self._add_cells(np.concatenate(id_list), np.concatenate(e_list))

    def _templates(self, c: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Initial cells of new large entries, in standardized units ``z = (a - mean)/sd``:
        those of the nearest existing large entry (so refinement carries over to the new
        entries of split blocks), or the default grid ``_Z0``. Returns (entry, z_lo, z_hi)
        per cell; consecutive cells share their edges exactly, so they tile ``[0, c+2)``."""
        self._sort_cells()
        old_ent = np.unique(self.cell_ent)
        old_ent = old_ent[self.ent_c[old_ent] + 2.0 > _SMALL_C + 2]
        if old_ent.size == 0:
            z_lo, z_hi = _Z0[:-1], _Z0[1:]
            return np.repeat(ids, z_lo.size), np.tile(z_lo, ids.size), np.tile(z_hi, ids.size)
        oc = self.ent_c[old_ent]
        order = np.argsort(oc, kind="stable")
        oc, old_ent = oc[order], old_ent[order]
        j = np.clip(np.searchsorted(oc, c), 1, max(oc.size - 1, 1)) if oc.size > 1 else np.zeros(c.size, np.int64)
        if oc.size > 1:
            j = np.where(np.abs(oc[j - 1] - c) <= np.abs(oc[j] - c), j - 1, j)
        tmpl = old_ent[j]
        starts = np.flatnonzero(np.diff(self.cell_ent, prepend=-1))
        ent_start = np.zeros(self.ent_c.size, dtype=np.int64)
        ent_count = np.zeros(self.ent_c.size, dtype=np.int64)
        ent_start[self.cell_ent[starts]] = starts
        ent_count[self.cell_ent[starts]] = np.diff(np.append(starts, self.cell_ent.size))
        cnt = ent_count[tmpl]
        rid = np.repeat(ids, cnt)
        first = np.repeat(ent_start[tmpl], cnt)
        off = np.arange(rid.size) - np.repeat(np.cumsum(cnt) - cnt, cnt)
        src = first + off
        te = self.ent_c[self.cell_ent[src]]
        m1 = te + 1.0
        mean = m1 * self.s
        sd = np.sqrt(np.maximum(m1 * self.s * (1.0 - self.s), 1.0))
        z = []
        for k in (0, 1):
            e = self.cell_e[src, k]
            zz = (e - mean) / sd
            zz = np.where(e <= 0.0, -np.inf, np.where(e >= te + 2.0, np.inf, zz))
            z.append(zz)
        return rid, z[0], z[1]

    def _sort_cells(self) -> None:
        if not self._sorted:
            order = np.argsort(self.cell_ent, kind="stable")
            self.cell_ent, self.cell_e = self.cell_ent[order], self.cell_e[order]
            self.cell_up, self.cell_lo = self.cell_up[order], self.cell_lo[order]
            self._sorted = True

    def _add_cells(self, ent: np.ndarray, edges: np.ndarray) -> None:
        """Evaluate cells (entry index, ``[e1, e2)`` edges) for all orders and store them."""
        if _DEBUG:
            print("  cells", ent.size)
        gu = np.empty((ent.size, self.alpha.size))
        gl = np.empty((ent.size, self.alpha.size))
        for i in range(0, ent.size, _CELL_BATCH):  # batches: temporaries stay in cache
            sl = slice(i, i + _CELL_BATCH)
            e = ent[sl]
            k = _Kernel(self.ent_c[e], self.ent_u[e], self.ent_v[e], self.s, edges[sl], self._tails)
            u, l = k.evaluate(self.alpha)
            gu[sl], gl[sl] = u[:, 0, :], l[:, 0, :]
        self.cell_ent = np.concatenate((self.cell_ent, ent))
        self.cell_e = np.concatenate((self.cell_e, edges))
        self.cell_up = np.concatenate((self.cell_up, gu))
        self.cell_lo = np.concatenate((self.cell_lo, gl))
        self._sorted = False

    def _entry_totals(self) -> tuple[np.ndarray, np.ndarray]:
        """``(log upper, log lower)`` of ``K - 1`` per entry and order: stored for entries
        summed term by term, the sum over its cells otherwise."""
        if self.cell_ent.size == 0:
            return self._envelope(self.ent_up, self.ent_lo)
        if self._raw_totals is not None:  # (the last call's sums, nothing evaluated since: see ``bounds``)
            up, lo = self._raw_totals
            self._raw_totals = None
            return self._envelope(up, lo)
        self._sort_cells()
        starts = np.flatnonzero(np.diff(self.cell_ent, prepend=-1))
        count = np.diff(np.append(starts, self.cell_ent.size))
        # rounding of the sum over cells (at least 16 terms charged)
        margin = 4.0 * np.maximum(count, 16) * _U
        up = self.ent_up.copy()
        lo = self.ent_lo.copy()
        ids = self.cell_ent[starts]
        up[ids] = _segment_logsumexp(self.cell_up, starts) + np.log1p(margin)[:, None]
        lo[ids] = _segment_logsumexp(self.cell_lo, starts) + np.log1p(-margin)[:, None]
        self._last_raw = (up, lo)
        return self._envelope(up, lo)

    def _envelope(self, up: np.ndarray, lo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Pairs without a silent first user (``p0 = 0``, every entry at ``lam = 1``): ``K`` is
        non-increasing in ``c`` (FMT21 Lemma F.2), so an upper bound at ``c'`` bounds every
        ``c >= c'`` and a lower bound at ``c''`` every ``c <= c''``. Each entry takes the best
        bound of the entries on the correct side; entries not evaluated at an order (``+inf``,
        ``-inf``) get their neighbours' bounds there, and first, where tighter, the chord in the order through
        their own evaluated orders (:func:`_order_chord`)."""
        if not self.envelope:
            return up, lo
        done = getattr(self, "ent_done", None)  # (set by ``bounds``: which orders each entry was evaluated at)
        if _ORDER_CHORD and done is not None and done.shape == up.shape and up.shape[1] > 1:
            up = _order_chord(self.alpha, up, done)  # (entries not evaluated at an order: the chord through their own)
        if up.shape[0] < 2:
            return up, lo
        order = self._c_order()
        up_s = np.minimum.accumulate(np.where(np.isnan(up), np.inf, up)[order], axis=0)
        lo_s = np.maximum.accumulate(np.where(np.isnan(lo), -np.inf, lo)[order][::-1], axis=0)[::-1]
        if self._ends_on:
            # (only orders with some K - 1 > 1: elsewhere F >= 1 makes the end bounds no better than 1 + K; with some
            # entry not evaluated at them: the others' own bounds are as good; and whose log(K - 1) spans more than
            # |log theta|: else the monotone envelope's bound from any count below is within that factor of the
            # kernel, which the end bounds, theta^-1 or more above the kernel at the next count, do not beat; work only)
            fin = np.isfinite(up)
            top = np.max(np.where(fin, up, -np.inf), axis=0)
            span = top - np.min(np.where(fin, up, np.inf), axis=0)
            lt_min = abs(math.log(min(th for th, _, _ in self._ends)))
            cols = np.flatnonzero((top > 0.0) & ~np.all(fin, axis=0) & (span > lt_min))
            if cols.size:
                up_s, lo_s = self._end_envelope(self.ent_c[order], up_s, lo_s, cols)
        if self._chord_on:
            # (orders of the chord bounds with some entry not evaluated at them)
            cols = np.flatnonzero(self._chord_cols & ~np.all(self.ent_done, axis=0))
            if cols.size:
                up_s, lo_s = _chord_envelope(self.ent_c[order], self.ent_done[order][:, cols], up_s, lo_s, cols)
        out_up, out_lo = np.empty_like(up), np.empty_like(lo)
        out_up[order], out_lo[order] = up_s, lo_s
        return out_up, out_lo

    def _end_envelope(self, c: np.ndarray, up: np.ndarray, lo: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The envelope of :meth:`_envelope` tightened by the end lemma (:func:`_end_block_bounds`): ``K(c) <=
        theta^(c - c'') K(c'') + F`` for every entry ``c'' >= c`` (the least over them: a running minimum of ``log K(c'')
        - c'' log theta`` from the top), and ``K(c'') >= theta^(c'' - c) (K(c) - F)`` for every ``c <= c''`` (a running
        maximum from the bottom), per end and at the orders ``cols``. ``c`` sorted, ``up``/``lo`` the rows of ``log(K -
        1)`` bounds in that order. Rounding: the keys, the running extremum and the shift back are within ``2u`` of magnitudes at most
        ``|key| + 2 c_max |log theta|`` each, ``logaddexp``/``log1p`` a few ulps of the result, ``theta``'s error ``theta_rel``
        moves the powers by ``1.01 theta_rel c_max`` (all charged with margin: ``16u`` of the magnitudes, ``2.02
        theta_rel c_max``); a lower bound ``log(e^L - 1)`` only where ``L > 1`` (condition at most 0.6, charged 2x)."""
        cmax = float(c[-1]) if c.size else 0.0
        up_all, lo_all = up, lo
        up, lo = up[:, cols], lo[:, cols]
        for theta, log_f_all, theta_rel in self._ends:
            log_f = log_f_all[cols]
            lt = math.log(theta)
            shift = c[:, None] * lt
            big = 2.0 * cmax * abs(lt)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                key = np.logaddexp(0.0, up) - shift  # log K(c'') - c'' log theta, above (+inf where not evaluated)
                suf = np.minimum.accumulate(np.where(np.isnan(key), np.inf, key)[::-1], axis=0)[::-1]
                cand = np.logaddexp(suf + shift, log_f[None, :])
                cand = cand + 16 * _U * (np.abs(suf) + big + np.abs(cand)) + 2.02 * theta_rel * cmax + 1e-13
                e_up = np.where(cand > 0.0, cand + np.log(-np.expm1(-np.where(cand > 0.0, cand, 1.0))), -np.inf)
                e_up = np.where(np.isfinite(suf), e_up + 16 * _U * np.abs(e_up) + 1e-13, np.inf)
                up = np.minimum(up, e_up)
                lk = np.logaddexp(0.0, lo)  # log K(c) below
                d = lk - log_f[None, :]
                okd = d > 1.0
                kf = np.where(okd, lk + np.log(-np.expm1(-np.where(okd, d, 2.0))), -np.inf)  # log(K(c) - F), below
                kf = kf - np.where(okd, 2.0 * 16 * _U * (np.abs(lk) + np.abs(log_f)[None, :] + np.abs(kf)), 0.0)
                key = np.where(np.isfinite(kf), kf - shift, -np.inf)
                pre = np.maximum.accumulate(key, axis=0)
                cand = pre + shift
                cand = cand - (16 * _U * (np.abs(pre) + big + np.abs(cand)) + 2.02 * theta_rel * cmax + 1e-13)
                ok = np.isfinite(cand) & (cand > 1.0)
                e_lo = np.where(ok, cand + np.log(-np.expm1(-np.where(ok, cand, 2.0))), -np.inf)
                e_lo = np.where(ok, e_lo - 2.0 * 16 * _U * (np.abs(e_lo) + np.abs(cand)) - 1e-13, -np.inf)
                lo = np.maximum(lo, e_lo)
        up_all, lo_all = up_all.copy(), lo_all.copy()
        up_all[:, cols], lo_all[:, cols] = up, lo
        return up_all, lo_all

    def _c_order(self) -> np.ndarray:
        if self._c_sorted is None or self._c_sorted.size != self.ent_c.size:
            self._c_sorted = np.argsort(self.ent_c, kind="stable")
        return self._c_sorted

    # -- blocks -----------------------------------------------------------------------
    def _log_block_mass(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        mass, err = self.dir.block_mass(lo, hi)
        up = _safe_log(mass + err)
        low = _safe_log(mass - err)
        tiny = (mass <= _TINY) & (0.0 < self.p < 1.0)  # degenerate C: Boost's masses are exact
        if np.any(tiny):
            # T in [lo, hi] implies C in [lo - 1, hi] (C = T - 1 when counted, T when silent)
            top = hi[tiny] - (1.0 if self.pair.p0 == 0.0 else 0.0)
            ch = _log_chernoff(lo[tiny] - 1.0, top, np.full(int(tiny.sum()), float(self.N)), self.p)
            # sharper, and a lower bound too, from the log-concave pmf of C (a tail interval:
            # its term nearest the mode, and the geometric series of the pmf ratio beyond it);
            # T = C + 1 when the first user is counted (weight 1 - p0), T = C when silent (p0)
            p0 = self.pair.p0
            t_up, t_lo = self._log_tail_interval(lo[tiny] - 1.0, hi[tiny] - 1.0)
            if p0 > 0.0:
                s_up, s_lo = self._log_tail_interval(lo[tiny], np.minimum(hi[tiny], float(self.N)))
                lw1, lw0 = math.log1p(-p0), math.log(p0)
                t_up = np.logaddexp(t_up + lw1, s_up + lw0) + 1e-12
                t_lo = np.logaddexp(t_lo + lw1, s_lo + lw0) - 1e-12
            up[tiny] = np.minimum(ch, t_up)
            low[tiny] = t_lo
        return up, low

    def _log_tail_interval(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(upper, lower)`` bounds on ``log Pr[a <= C <= b]``, ``C ~ Bin(N, p)``, for intervals on
        one side of the mode (else ``(+inf, -inf)``; empty: ``-inf``): the pmf is log-concave, so
        the term nearest the mode is the largest and the ratio of consecutive terms moving away
        from it is at most its value there (a finite geometric series bounds the rest)."""
        n_, p = float(self.N), self.p
        a, b = np.maximum(a, 0.0), np.minimum(b, n_)
        mode = math.floor((n_ + 1.0) * p)
        left = b < mode  # the interval lies below the mode: nearest term at b, ratio C(k-1)/C(k) at b
        k = np.where(left, b, a)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(left, k * (1.0 - p) / ((n_ - k + 1.0) * p), (n_ - k) * p / ((k + 1.0) * (1.0 - p)))
            ratio = ratio * (1.0 + 1e-12)
            lo_k, up_k = _log_pmf_bracket(k, np.full(k.shape, n_), p)
            count = b - a + 1.0  # 1 + r + ... + r^(count-1) = (1 - r^count) / (1 - r)
            r = np.minimum(ratio, 1.0)
            up = up_k + np.log(-np.expm1(count * np.log(r))) - np.log1p(-r) + 1e-12
        side = left | (a > mode)
        up = np.where(side & (ratio < 1.0), up, np.inf)
        lo_ = np.where(side, lo_k, -np.inf)
        empty = b < a
        return np.where(empty, -np.inf, up), np.where(empty, -np.inf, lo_)

    def _lam_outward(self, lam: np.ndarray, side: float) -> np.ndarray:
        """``lam_t`` (computed: at most 9 u relative off, :data:`.clones.LAM_UV_ERR`) moved so that
        the kernel pair ``(u, v)`` the entry computes from it (``u = lam pa' + (1 - lam) s``,
        rounded: a few u absolute) is farther from the diagonal ``u = v`` than the exact pair for
        ``side = +1`` (upper corners: ``u >= u_t``, ``v <= v_t`` when ``pa' > s > pb'``) and nearer
        for ``side = -1`` (lower corners; clipped at 0, where ``K = 1``). ``K`` is convex in
        ``(u, v)`` and 1 on the diagonal, and the exact pair lies on the segment from the diagonal
        to the outer pair (or the inner pair on the segment to the exact one), so ``K - 1`` is
        bounded above (below) there. An outer ``lam`` may exceed 1 (the rounding of ``pa'`` and
        ``pb'`` at ``lam = 1``), as long as ``u`` and ``v`` stay in ``[0, 1]``. Pairs with ``p0 = 0``
        have ``lam = 1`` exactly; pairs whose ``pa'``, ``pb'`` lie on one side of ``s`` are returned
        unchanged (no such method)."""
        da, db = self.pa1 - self.s, self.pb1 - self.s
        if self.pair.p0 == 0.0 or not da * db < 0.0:
            return lam
        shift = lam * 20.0 * _U + 8.0 * _U / min(abs(da), abs(db))
        top = 0.999 * min((1.0 - self.s) / da if da > 0.0 else self.s / -da,
                          (1.0 - self.s) / db if db > 0.0 else self.s / -db)
        return np.clip(lam + side * shift, 0.0, max(top, 1.0) if side > 0.0 else 1.0)

    def _add_blocks(self, lo: np.ndarray, hi: np.ndarray, need: np.ndarray | None = None,
                    need_lo: np.ndarray | None = None, masses: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        """Add the blocks of totals ``[lo, hi]``; their corner entries are evaluated at the orders
        ``need`` (rows per block; ``None``: all), the lower corners at ``need_lo`` if given (``masses``:
        :meth:`_log_block_mass` of the blocks, if already computed)."""
        lw_up, lw_lo = self._log_block_mass(lo, hi) if masses is None else masses
        # Corners (monotone ends): upper at the smallest c with the largest lam, lower at the
        # opposite corner. With p0 = 0 (lam = 1) the lower corner of a wider block is taken
        # at t = hi + 1, the next block's upper corner (K is non-increasing in c, so this is
        # a valid, slightly looser lower bound) and each edge costs one entry.
        c_up = np.maximum(lo, 1.0) - 1.0
        lam_up = self._lam_outward(self.dir.lam(hi), 1.0)
        if self.pair.p0 == 0.0:
            c_lo = np.where(hi > lo, hi, np.maximum(hi, 1.0) - 1.0)
            lam_lo = np.ones(lo.shape)
        else:
            # the smallest lam of the block: lam(lo), and lam(0) = 0 (no report counted at t = 0,
            # identical laws: K = 1), so a block holding t = 0 has lower bound 0 (lam(max(lo, 1))
            # counted Pr[T = 0] at K(c, lam(1)) - 1 > 0: lower ends above the divergence, e.g.
            # krr-lower k = 3, eps0 = 5, n = 200, alpha = 1.25: 1.87891 against 1.87684)
            c_lo = np.maximum(hi, 1.0) - 1.0
            lam_lo = self._lam_outward(self.dir.lam(lo), -1.0)
        need_both: np.ndarray | None = None
        if need_lo is not None:
            need_both = np.concatenate((np.ones(need_lo.shape, dtype=bool) if need is None else need, need_lo))
        elif need is not None:
            need_both = np.concatenate((need, need))
        ids = self._entry_ids(np.concatenate((c_up, c_lo)), np.concatenate((lam_up, lam_lo)), need_both)
        nb = lo.size
        # (the tilted masses of the end bounds: computed when first needed, :meth:`_end_bounds`; no columns without ends)
        self.ls_up = np.concatenate((self.ls_up, np.full((lo.size, len(self._ends)), np.nan)))
        self.ls_lo = np.concatenate((self.ls_lo, np.full((lo.size, len(self._ends)), np.nan)))
        self.lo = np.concatenate((self.lo, lo))
        self.hi = np.concatenate((self.hi, hi))
        self.lw_up = np.concatenate((self.lw_up, lw_up))
        self.lw_lo = np.concatenate((self.lw_lo, lw_lo))
        self.iu = np.concatenate((self.iu, ids[:nb]))
        self.il = np.concatenate((self.il, ids[nb:]))

    def _end_mask(self, eu: np.ndarray, el: np.ndarray, lw_up: np.ndarray, iu: np.ndarray, il: np.ndarray,
                  counted: np.ndarray) -> np.ndarray:
        """The (block, order) elements where :meth:`_end_bounds` computes the end bounds (work only; see there), from the
        ``log(K - 1)`` bounds ``eu``, ``el`` at the blocks' upper and lower corners."""
        mu = self.N * self.p
        below = (self.hi >= 1.0) & (self.hi - 1.0 <= mu + _END_ABOVE_SD * math.sqrt(self.N * self.p * (1.0 - self.p)))
        steep = _END_STEEP * abs(math.log(min(th for th, _, _ in self._ends))) * (self.ent_c[il] - self.ent_c[iu])
        with np.errstate(invalid="ignore"):
            mask = counted & below[:, None] & (eu > 0.0) & (eu - el > np.maximum(steep, 0.05)[:, None])
            # (and whose corners' bound exceeds _END_SHARE of the order's budget of the round before: the others' gaps
            # matter little)
            mask &= lw_up[:, None] + eu > self._end_budget[None, :] + math.log(_END_SHARE)
        return mask

    def _end_bounds(self, e_up: np.ndarray, e_lo: np.ndarray, eu: np.ndarray, el: np.ndarray, lw_up: np.ndarray,
                    iu: np.ndarray, il: np.ndarray, counted: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """The least upper and largest lower end bounds (:func:`_end_block_bounds`) over :attr:`_ends`, as ``(rows,
        orders, upper, lower, estimate)`` of the (block, order) elements where computed (``None``: nowhere), from the
        entries' ``log(K - 1)`` bounds ``e_up``, ``e_lo`` (``eu``, ``el``: those at the blocks' upper and lower corners,
        blocks x orders); and the upper
        ones with the lower corners' lower bounds in place of their upper bounds (an estimate for the refinement's scores,
        as there). Computed only where they may be tighter than the corners' (work only): counted blocks whose counts lie
        below :data:`_END_ABOVE_SD` sd over the clone count's mean and whose kernel at the upper corner exceeds 2 (``K -
        1 > 1``: ``F >= 1``) and falls by more than ``e^0.05`` to the lower corner. Their tilted masses
        (:func:`_log_tilted_mass`) are computed once per block, when first needed."""
        r, o = np.nonzero(self._end_mask(eu, el, lw_up, iu, il, counted))
        if r.size == 0:
            return None
        todo = np.unique(r[np.isnan(self.ls_up[r, 0])])
        if todo.size:
            c1, c2 = np.maximum(self.lo[todo] - 1.0, 0.0), self.hi[todo] - 1.0
            for k, (theta, _, _) in enumerate(self._ends):
                self.ls_up[todo, k], self.ls_lo[todo, k] = _log_tilted_mass(c1, c2, float(self.N), self.p, theta)
        cu, cl = self.ent_c[iu[r]], self.ent_c[il[r]]
        with np.errstate(over="ignore"):
            k_cl = np.logaddexp(0.0, e_up[il[r], o])  # log K at cl, above (its rounding: in the bound's margin)
            k_cl_est = np.logaddexp(0.0, e_lo[il[r], o])
            k_cu = np.logaddexp(0.0, e_lo[iu[r], o])
        lw = lw_up[r]
        u_best, l_best, e_best = np.full(r.size, np.inf), np.full(r.size, -np.inf), np.full(r.size, np.inf)
        for k, (theta, log_f, theta_rel) in enumerate(self._ends):
            args = (self.ls_up[r, k], self.ls_lo[r, k], theta, log_f[o], theta_rel)
            u_k, l_k = _end_block_bounds(cu, cl, k_cl, k_cu, lw, *args)
            e_k, _ = _end_block_bounds(cu, cl, k_cl_est, None, lw, *args)
            u_best, l_best, e_best = np.minimum(u_best, u_k), np.maximum(l_best, l_k), np.minimum(e_best, e_k)
        return r, o, u_best, l_best, e_best

    def _chord_bounds(self, e_up: np.ndarray, e_lo: np.ndarray, iu: np.ndarray, il: np.ndarray, counted: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """Bounds of blocks from the log-convexity of ``K`` in ``c`` (:func:`_chord_applies`; the orders of
        :attr:`_chord_cols`), as ``(rows, orders, upper, lower, estimate)`` of ``log sum_{c in block} Pr[C = c] (K(c) -
        1)`` where computed (``None``: nowhere); the estimate is the upper bound from the corners' lower bounds (for the
        refinement's scores, as :meth:`_end_bounds`'). ``e_up``, ``e_lo``: the entries' ``log(K - 1)`` bounds.

        *Derived* from ``h = log K`` convex on the integers ``c >= 0``. A block of counts ``c1 .. c2`` lies in ``[cu, cl]``
        (its corners' counts, ``cu < cl``). Upper (chord): ``h(c) <= h(cl) + (cl - c) g`` on ``[cu, cl]`` for every ``g
        >= (h(cu) - h(cl)) / (cl - cu)``, taken from the corners' upper bounds ``H(cu)``, ``H(cl)``: the chord of upper
        bounds lies above the chord of ``h``, which lies above ``h`` (also ``h(c) <= H(cu)``, ``K`` non-increasing).
        Lower (secants): for ``c <= cl < c'`` (``c'`` the nearest entry above ``cl`` evaluated at the order), ``h(c) >=
        h(cl) + (cl - c) sigma`` for every ``0 <= sigma <= (h(cl) - h(c')) / (c' - cl)`` (the slopes of a convex function
        increase: that of ``[c, cl]`` is at most that of ``[cl, c']``), taken from the lower bound at ``cl`` and the upper
        one at ``c'``; for ``c'' < cu <= c`` (``c''`` the nearest evaluated entry below ``cu``), ``h(c) >= h(cu) - (c -
        cu) tau`` for every ``tau >= (h(c'') - h(cu)) / (cu - c'')``; and ``h(c) >= h(cl)`` (monotone). Per count the
        least upper and the largest lower of these, turned into ``log(K - 1) = log(e^h - 1)`` (increasing in ``h``) and
        summed term by term with the counts' binomial masses (:func:`_log_pmf_counts`): exact sums of pointwise bounds.
        Only for blocks of at most :data:`_CHORD_MAX_WIDTH` counts and orders whose lower corner has ``log K >=``
        :data:`_CHORD_MIN_LOG_K` (work only).

        Rounding: the slopes are a difference and a quotient of floats (within ``2.01u`` of their value: moved by
        ``4u`` outwards, and clipped at 0, which only loosens: ``g`` up, ``sigma`` down, ``tau`` up); each pointwise
        bound a product by an exact integer and a sum (charged ``16u`` of its operands' magnitudes and its own);
        :func:`_log_k`, :func:`_log_expm1` round outwards; the pmf's error bound is added (subtracted); the sums over
        counts in log space move by at most a few ulps of the largest term's and the result's magnitudes and ``W u``
        relative (charged ``16u`` of those and ``2 W u``)."""
        lo, hi = self.lo, self.hi
        nb, na = lo.size, self.alpha.size
        width = hi - lo + 1.0
        with np.errstate(invalid="ignore"):
            hl_l_all = _log_k(e_lo[il], -1)
            mask = (np.broadcast_to(counted, (nb, na)) & self._chord_cols[None, :]
                    & ((hi > lo) & (width <= _CHORD_MAX_WIDTH))[:, None]
                    & np.isfinite(e_up[iu]) & np.isfinite(e_up[il]) & (hl_l_all >= _CHORD_MIN_LOG_K))
            # (and where the corners' gap exceeds _CHORD_SHARE of the order's budget of the round before)
            d = e_up[iu] - e_lo[il]
            # (the chord of equal upper bounds, e.g. a lower corner not evaluated at the order, is the corners' bound)
            mask &= (d > _CHORD_GAP) & (e_up[iu] - e_up[il] > _CHORD_GAP) & (self.lw_up[:, None] + e_up[iu] + np.log(-np.expm1(-np.maximum(d, 1e-300)))
                                 > self._end_budget[None, :] + math.log(_CHORD_SHARE))
        r, o = np.nonzero(mask)
        if r.size == 0:
            return None
        w = width[r].astype(np.int64)
        if int(np.sum(w)) > _CHORD_MAX_TERMS:
            keep = np.cumsum(np.sort(w)) <= _CHORD_MAX_TERMS
            cap = np.sort(w)[int(np.sum(keep)) - 1] if np.any(keep) else 0
            sel = w <= cap
            r, o, w = r[sel], o[sel], w[sel]
            if r.size == 0:
                return None
        ne = self.ent_c.size
        ia, ib = iu[r], il[r]
        cu, cl = self.ent_c[ia], self.ent_c[ib]
        hu_u, hu_l = _log_k(e_up[ia, o], 1), _log_k(e_up[ib, o], 1)
        hl_u, hl_l = _log_k(e_lo[ia, o], -1), hl_l_all[r, o]
        # the nearest entries evaluated at the order above cl and below cu (sorted by c)
        order = self._c_order()
        pos = np.empty(ne, dtype=np.int64)
        pos[order] = np.arange(ne)
        prv, nxt = _nearest_evaluated(self.ent_done[order])
        jn = np.where(pos[ib] + 1 < ne, nxt[np.minimum(pos[ib] + 1, ne - 1), o], ne)
        jp = np.where(pos[ia] >= 1, prv[np.maximum(pos[ia] - 1, 0), o], -1)
        en, ep = order[np.minimum(jn, ne - 1)], order[np.maximum(jp, 0)]
        # (no such neighbour: an upper bound +inf there gives the secant -inf)
        hu_n = np.where(jn < ne, _log_k(e_up[en, o], 1), np.inf)
        hu_p = np.where(jp >= 0, _log_k(e_up[ep, o], 1), np.inf)
        cn, cp = self.ent_c[en], self.ent_c[ep]
        # (work only: left out where the bracket of h within the block, the chord against the lower lines at the corners
        # and where the two secants meet, exceeds _CHORD_MAX_GAP: such a block is split in any case)
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            s1 = np.maximum((hl_l - hu_n) / (cn - cl), 0.0)  # the lower lines' slopes (down), from the right ...
            s2 = np.where(jp >= 0, np.maximum((hu_p - hl_u) / (cu - cp), 0.0), np.inf)  # ... and from the left
            cx = np.clip(np.nan_to_num((hl_u - hl_l + s2 * cu - s1 * cl) / (s2 - s1), nan=cu), cu, cl)
            gap = np.full(r.size, -np.inf)
            for x in (cu, cl, cx):
                chord = hu_l + (cl - x) * (hu_u - hu_l) / (cl - cu)
                low = np.maximum(np.maximum(hl_l + (cl - x) * s1, np.where(x > cu, hl_u - (x - cu) * s2, hl_u)), hl_l)
                gap = np.maximum(gap, chord - low)
        keep = ~(gap > _CHORD_MAX_GAP)
        if not np.all(keep):
            r, o, w, ia, ib, cu, cl = r[keep], o[keep], w[keep], ia[keep], ib[keep], cu[keep], cl[keep]
            hu_u, hu_l, hl_u, hl_l = hu_u[keep], hu_l[keep], hl_u[keep], hl_l[keep]
            jn, jp, hu_n, hu_p, cn, cp = jn[keep], jp[keep], hu_n[keep], hu_p[keep], cn[keep], cp[keep]
            if r.size == 0:
                return None
        # the blocks' counts (lo - 1 .. hi - 1) and their masses, once per block (a block holding the total 0 has the
        # count -1, outside [cu, cl]: its mass is 0 exactly, log -inf, so its term vanishes whatever the bounds there)
        rows, r_inv = np.unique(r, return_inverse=True)
        wr = width[rows].astype(np.int64)
        first = np.cumsum(wr) - wr
        counts = np.repeat(lo[rows] - 1.0, wr) + (np.arange(int(wr.sum())) - np.repeat(first, wr))
        lp, lp_err = _log_pmf_counts(counts, float(self.N), self.p, self.rel)
        # per (element, count)
        starts = np.cumsum(w) - w
        rep = np.repeat(np.arange(r.size), w)
        off = np.arange(int(w.sum())) - np.repeat(starts, w)
        at = first[r_inv][rep] + off
        c = counts[at]
        cu_r, cl_r = cu[rep], cl[rep]
        h_up = _chord_upper(hu_u[rep], hu_l[rep], cu_r, cl_r, c)
        h_lo = np.maximum(np.maximum(_secant_lower(hl_l[rep], hu_n[rep], cl_r, cn[rep], c),
                                     _secant_lower(hl_u[rep], hu_p[rep], cu_r, cp[rep], c)), hl_l[rep])
        with np.errstate(invalid="ignore", over="ignore"):
            t_up = lp[at] + lp_err[at] + _log_expm1(h_up, 1)
            t_lo = lp[at] - lp_err[at] + _log_expm1(h_lo, -1)
        out = []
        for t, side in ((t_up, 1.0), (t_lo, -1.0)):
            s = _segment_logsumexp(t[:, None], starts)[:, 0]
            big = np.maximum.reduceat(np.abs(np.where(np.isfinite(t), t, 0.0)), starts)
            out.append(np.where(np.isfinite(s), s + side * (16 * _U * (big + np.abs(s)) + 2 * _U * w + 1e-300), s))
        self.chord_used += int(r.size)
        return r, o, out[0], out[1], out[0]

    # -- evaluation -------------------------------------------------------------------
    def _initial_edges(self) -> np.ndarray:
        """Block edges over totals: exact single totals for pairs without block monotonicity;
        otherwise blocks one standard deviation of the clone count wide over ``+-8`` sd, tail
        blocks to ``+-12`` sd and the ends (pairs with ``p0 = 0``: the block below in quarters); refinement
        splits them where the gap is (a coarse start ends with fewer blocks than a fine one: measured,
        n = 1e3 .. 1e6). Only the work depends on the edges: every block is bounded by its monotone corners."""
        if not self.pair.block_monotone:
            return self.dir.initial_edges()
        n = self.pair.n
        mu = self.N * self.p + (1.0 - self.pair.p0)
        sd = math.sqrt(max(self.N * self.p * (1.0 - self.p), 1.0))
        z = np.concatenate((np.arange(-8.0, 8.5, 1.0), [-_TAIL_EDGE_SD, _TAIL_EDGE_SD]))
        inner = np.round(mu + sd * z)
        # with p0 > 0 the total 0 (nothing counted: identical laws) is a block of its own, so no
        # block mixes it with counted totals (whose lower corner would then be lam = 0)
        ends = [0.0, 1.0, n + 1.0] if self.pair.p0 > 0.0 else [0.0, n + 1.0]
        edges = np.unique(np.clip(np.concatenate((ends, inner)), 0.0, n + 1.0))
        if self.envelope and edges.size > 2:
            # the block from 0 to the lowest inner edge (~12 sd below the mean) cut in quarters: at large orders
            # its kernels grow fast downwards, and refinement split it so in its first round (n = 3e3 .. 1e5);
            # done here, the first round often converges (measured: a round fewer at n = 3e3, 1e4, 10% CPU)
            fr = np.array([0.25, 0.5, 0.75])
            slabs = self.slabs
            if slabs and self.slab_of[0] >= 0 and slabs[int(self.slab_of[0])].c1 < mu - _LOW_NEAR * sd:
                # one slab reaching to ~12 sd below the mean holds the large orders too (n ~ 4e3 .. 7e3, eps0 = 1):
                # their kernels below it needed the upper half of the block in 16ths over two more rounds (each
                # with a kernel call's fixed cost, ~2 ms); cut in eighths here (measured, CPU: 4e3 20.2 -> 17.3
                # ms, 5e3 17.7 -> 13.2, 7e3 15.2 -> 12.9; where the slab starts further up, n = 2e3, 3e3, 1e4,
                # 1.5e4, the finer blocks cost ~0.6 ms: more entries, in two calls); in sixteenths where the slab
                # reaches 1.5 sd below the block's top (n ~ 3.8e3 .. 4.2e3: 16.7 / 16.0 -> 14.5 / 13.6 ms at 4e3 /
                # 4.2e3; at 4.5e3 .. 7e3 sixteenths cost 0.4 .. 0.8 ms more than eighths)
                parts = 2 * _LOW_TOP if slabs[int(self.slab_of[0])].c1 < edges[1] - 1.5 * sd else _LOW_TOP
                fr = np.concatenate(([0.25], 0.5 + np.arange(parts) / (2.0 * parts)))
            edges = np.unique(np.concatenate((edges, np.round(edges[1] * fr))))
            edges = self._tilted_edges(edges, mu - _TAIL_EDGE_SD * sd)
        return edges

    def _tilted_edges(self, edges: np.ndarray, top: float) -> np.ndarray:
        """Blocks :data:`_TILT_STEP` sd of the tilted clone count wide from :data:`_TILT_HALF` such sd below its mean up to
        ``top`` (the lowest inner edge), where the largest order's sum sits at an end of ``x`` far below the clone
        count's mean (:meth:`_far_end_tilts`, :data:`_TAIL_EDGE_SD` sd; pairs with ``p0 = 0`` without slabs; at most
        :data:`_TILT_MAX_BLOCKS` blocks per end; work only, *derived*): there ``K(c)`` falls by about ``theta`` per
        count (:func:`_end_block_bounds`), so the terms ``Pr[C = c] K(c)`` follow the tilted binomial ``Bin(N, th)``,
        ``th = p theta / (1 - p + p theta)``, whose mean the quarters of the block below reach only after several rounds
        of splitting in four (eps0 = 2, n = 21544: the order 1024's terms peak at ``c ~ 1700``, the mean ``~ 2916``:
        three rounds at orders 640 .. 1024 over blocks 578 counts wide). Only the work depends on the edges: every block
        is bounded by its monotone corners."""
        if self.slabs or self.bernoulli or edges.size < 3:
            return edges
        cuts = [edges]
        for th in self._far_end_tilts(float(np.max(self.alpha)), _TAIL_EDGE_SD):
            st = math.sqrt(max(self.N * th * (1.0 - th), 1.0))
            a = max(self.N * th + 1.0 - _TILT_HALF * st, 1.0)
            if a < top and (top - a) <= _TILT_MAX_BLOCKS * _TILT_STEP * st:
                cuts.append(np.round(np.arange(a, top, _TILT_STEP * st)))
        return np.unique(np.concatenate(cuts)) if len(cuts) > 1 else edges

    def _fine_edges(self, edges: np.ndarray, rtol: float) -> np.ndarray:
        """The initial blocks within ``+-8.5`` sd of the clone count's mean split to about the widths that refinement
        ends with (pairs with ``p0 = 0`` and no slab), so that the first round usually converges: each block of
        :meth:`_initial_edges` in equal parts of at most ``_FINE_START rtol mu exp(z^2 / shape)`` counts (``z``: the
        block's end nearer the mean, in sd; ``shape`` :data:`_FINE_SHAPE` above the mean, :data:`_FINE_SHAPE_LOW`
        below it, where the large orders' kernels weigh more; at least one count). Measured at eps0 = 1: the
        converged partitions of the coarse start have blocks 0.45 .. 0.52 ``rtol mu`` wide at the mean (n = 3e4,
        5e4, 1e5), widening about as ``exp(z^2/4)`` (a block's gap is about its mass times the kernel's change across
        it, ``~ w^2 Pr[C = c] / c``); 0.8, 3 and 5 converge in one round at n = 1.78e4 .. 1e6 with fewer entries
        than the coarse start's three rounds (0.7, 3, 3: a second round at alpha = 1024, n = 1.78e4, over 26 blocks
        3.7 .. 0 sd below the mean; 0.5, 4, 4: more entries; 1.0: two rounds at 2e4 .. 5e4). Not used where the
        parts would be about a spread wide anyway, or more than ``_MAX_BLOCKS / 4``. Only the work depends on the
        edges: every block is bounded by its monotone corners."""
        mu = self.N * self.p + 1.0
        sd = math.sqrt(max(self.N * self.p * (1.0 - self.p), 1.0))
        w0 = _FINE_START * rtol * mu
        if w0 >= sd:
            return edges
        a, b = edges[:-1], edges[1:]
        za, zb = (a - mu) / sd, (b - mu) / sd
        inside = (za >= -8.5) & (zb <= 8.5)
        znear = np.where((za <= 0.0) & (zb >= 0.0), 0.0, np.minimum(np.abs(za), np.abs(zb)))
        shape = np.where(zb <= 0.0, _FINE_SHAPE_LOW, _FINE_SHAPE)  # (below the mean: the large orders' tilt)
        w = np.maximum(w0 * np.exp(np.minimum(znear, 8.5) ** 2 / shape), 1.0)
        k = np.where(inside, np.ceil((b - a) / w), 1.0).astype(np.int64)
        if int(np.sum(k)) > _MAX_BLOCKS // 4:
            return edges
        rep = np.repeat(np.arange(a.size), k)
        part = np.arange(rep.size) - np.repeat(np.cumsum(k) - k, k)
        cuts = np.round(a[rep] + (b - a)[rep] * part / k[rep])
        return np.unique(np.concatenate((cuts, edges)))

    def bounds(self, alpha: np.ndarray, rtol: float, max_rounds: int = 200, scale: float = 1.0,
               ) -> tuple[np.ndarray, np.ndarray, bool, int, int]:
        """``(log upper, log lower)`` of ``S_alpha - 1`` per order; refined until the relative
        gap of ``D = log(1 + scale (S_alpha - 1)) / (alpha - 1)`` (the divergence of the pair
        mixed with an identical branch of weight ``1 - scale``) is at most ``rtol`` for every
        order (or nothing is left to refine, or a work limit is reached).

        The target is on the divergence, the reported quantity: for ``(alpha - 1) D`` large
        the same relative width of ``D`` allows a much wider one of ``S_alpha - 1``.
        """
        self.alpha = np.asarray(alpha, dtype=float)
        na = self.alpha.size
        log_scale = math.log(scale)
        self._tail_tol = max(0.02 * rtol, 1e-15)  # the kernels' tails: a small share of the budget
        self.ent_keys = np.zeros(0, dtype=complex)
        self.ent_ids = np.zeros(0, dtype=np.int64)
        self.ent_c = self.ent_u = self.ent_v = np.zeros(0)
        self.ent_up = self.ent_lo = np.zeros((0, na))
        self.ent_exact = np.zeros(0, dtype=bool)
        self.ent_done = np.zeros((0, na), dtype=bool)
        self._c_sorted = None
        self.cell_ent = np.zeros(0, dtype=np.int64)
        self.cell_e = np.zeros((0, 2))
        self.cell_up = self.cell_lo = np.zeros((0, na))
        self._sorted = True
        self._tails = {}  # Boost's tails at the cells' edges (_unique_call)
        self.lo = self.hi = self.lw_up = self.lw_lo = np.zeros(0)
        self.iu = self.il = np.zeros(0, dtype=np.int64)
        # the end bounds of blocks (:func:`_end_block_bounds`): pairs with lam = 1 (p0 = 0) only
        self._ends = (_end_constants(self.pa1, self.pb1, self.s, self.alpha)
                      if self.pair.p0 == 0.0 and not self.bernoulli and 0.0 < self.p < 1.0 and self.N >= 1 else [])
        self.ls_up = np.zeros((0, len(self._ends)))
        self.ls_lo = np.zeros((0, len(self._ends)))
        self._ends_on = False
        self._end_budget = np.full(na, -np.inf)
        # the chord bounds of blocks (:meth:`_chord_bounds`): pairs with lam = 1 meeting :func:`_chord_applies` (integer
        # orders) or :func:`_exact_symmetric` (Theorem K*: orders 1 < alpha <= 16)
        self._chord_cols = (_chord_orders(self.alpha, self.pa1, self.pb1, self.s, _exact_symmetric(self.pair))
                            if self.envelope and not self.bernoulli and 0.0 < self.p < 1.0 and self.N >= 1
                            else np.zeros(na, dtype=bool))
        self._chord_on = False
        self.chord_used = 0
        self._raw_totals = None
        self._last_raw = None
        self._build_slabs(rtol, log_scale)
        edges = self._initial_edges()
        if not self.slabs and self.envelope and self.pair.block_monotone and _FINE_START > 0.0:
            edges = self._fine_edges(edges, rtol)
        if self.slabs:
            # blocks never straddle a slab's edge (totals t = c + 1); above the lowest slab's top, the
            # slabs' edges only (the kernels there are at most those of the counts below, and the
            # clone count's upper tail is small: one block per gap, split if it matters)
            cuts = [float(x) for sl in self.slabs for x in (sl.c1 + 1, sl.c2 + 2)]
            top = min(sl.c2 + 2.0 for sl in self.slabs)
            if _SLAB_FREE_EDGES and np.any(self.slab_of < 0):
                top = math.inf  # (orders without a slab: the one-sd blocks everywhere, see _SLAB_FREE_EDGES)
            edges = np.unique(np.clip(np.concatenate((edges[edges <= top], cuts, [self.pair.n + 1.0])),
                                      0.0, self.pair.n + 1.0))
        lo0, hi0 = edges[:-1], edges[1:] - 1.0
        need_lo = None
        mu = self.N * self.p + 1.0
        if self.envelope and lo0.size > 1 and lo0[-1] > mu + 8.0 * math.sqrt(max(self.N * self.p * (1.0 - self.p), 1.0)):
            # the last block (beyond 8 sd of the clone count, mass < e^-32) keeps its upper corner;
            # its lower corner (c = n, a kernel as wide as the population) is left unevaluated: the
            # block's lower bound is 0 until a split of it needs more
            need_lo = np.ones((lo0.size, na), dtype=bool)
            need_lo[-1] = False
        need0 = None
        masses0 = None
        if self.slabs:
            # a block inside an order's slab is not evaluated at that order, nor those whose bounds
            # without entries (mass times K(0) - 1, or above the slab its average) are together at most
            # _SLAB_SKIP of the budget (estimated from the slabs' lower bounds): the envelope bounds them
            # from the entry at c = 0 (evaluated at every order) or, since slab104, from their own upper-corner
            # entry (evaluated at some orders; the chord in the order, _order_chord, at the others); their lower
            # bound is 0
            l_lo = np.logaddexp(0.0, self.slab_lo + log_scale)
            with np.errstate(divide="ignore"):
                budget0 = math.log(rtol) + np.log(np.maximum(l_lo, 1e-300)) + l_lo - log_scale
            # the blocks' masses and the slabs' (one call), and above a slab (c > c2) every kernel is at most
            # each of the slab's (K non-increasing in c), so K(c) - 1 <= sum_slab Pr[C = c'](K(c') - 1) / Pr[C in
            # slab]: blocks there need no entry
            m_up, m_lo = self._log_block_mass(np.concatenate((lo0, [sl.c1 + 1.0 for sl in self.slabs])),
                                              np.concatenate((hi0, [sl.c2 + 1.0 for sl in self.slabs])))
            masses0 = (m_up[: lo0.size], m_lo[: lo0.size])
            for g in range(len(self.slabs)):
                js = np.flatnonzero(self.slab_of == g)
                self.slab_avg_up[js] = self.slab_up[js] - m_lo[lo0.size + g] + 1e-12
            lw0 = masses0[0]
            # per order, the blocks with the smallest such bounds, together at most _SLAB_SKIP of its budget
            with np.errstate(invalid="ignore", over="ignore"):  # (-inf + inf: no bound from the slab)
                crude = lw0[:, None] + np.where(self._above(lo0), np.minimum(self.log_k0[None, :], self.slab_avg_up[None, :]),
                                                self.log_k0[None, :])
            covered0 = self._covered(lo0, hi0)

            def skip(crude: np.ndarray) -> np.ndarray:
                with np.errstate(invalid="ignore", over="ignore"):
                    share = np.nan_to_num(np.exp(crude - budget0[None, :]), nan=1e300, posinf=1e300)
                share = np.where(covered0, 0.0, np.minimum(share, 1e300 / max(lo0.size, 1)))
                rank = np.argsort(share, axis=0)
                small = np.zeros(share.shape, dtype=bool)
                np.put_along_axis(small, rank, np.cumsum(np.take_along_axis(share, rank, axis=0), axis=0) <= _SLAB_SKIP, axis=0)
                return small

            small0 = skip(crude)
            if _ORDER_CHORD:
                # the upper corners of the blocks still to evaluate at some order, at the largest such order first (and
                # the entry at c = 0 at every order): at the others they are bounded from it by the chord in the order
                # (:func:`_order_chord`, with the monotone envelope), often far below mass x (K(0) - 1); blocks those
                # bounds make small are skipped there as above (work only: every bound is certified)
                c_up0 = np.maximum(lo0, 1.0) - 1.0
                cand = ~covered0 & ~small0 & (c_up0 > 0.0)[:, None]
                rows = np.flatnonzero(np.any(cand, axis=1))
                if rows.size:
                    # (the orders without a slab need every block: there at once)
                    one = np.ones((rows.size + 1, na), dtype=bool)
                    one[1:] = cand[rows] & (self.slab_of < 0)[None, :]
                    in_slab = cand[rows] & (self.slab_of >= 0)[None, :]
                    has = np.any(in_slab, axis=1)
                    top = np.argmax(np.where(in_slab, self.alpha[None, :], -np.inf), axis=1)
                    one[1 + np.flatnonzero(has), top[has]] = True
                    ids = self._entry_ids(np.concatenate(([0.0], c_up0[rows])),
                                          self._lam_outward(self.dir.lam(np.concatenate(([hi0[0]], hi0[rows]))), 1.0), one)
                    e_up0 = self._entry_totals()[0][ids[1:]]
                    with np.errstate(invalid="ignore"):
                        crude[rows] = np.fmin(crude[rows], lw0[rows, None] + e_up0)
                    small0 = skip(crude)
            need0 = ~self._covered(lo0, hi0) & ~small0
            need0[np.maximum(lo0, 1.0) - 1.0 == 0.0] = True  # the entry at c = 0
            need_lo = ~self._covered(lo0, hi0) & ~small0 & (True if need_lo is None else need_lo)
            if hi0[-1] >= self.pair.n and lo0[-1] > mu + 4.0 * math.sqrt(max(self.N * self.p * (1.0 - self.p), 1.0)):
                need_lo[-1] = False  # as above: the top block's lower corner (c = n) waits for a split
        if not self.slabs and self.envelope and need0 is None and masses0 is None:
            self._add_first_blocks(lo0, hi0, need_lo, rtol, log_scale)
        else:
            self._add_blocks(lo0, hi0, need0, need_lo, masses0)
        tot_up = tot_lo = np.zeros(na)
        self.floor_stop = np.zeros(na, dtype=bool)
        log_floor = self._log_floor()
        prev_gap = np.full(na, np.inf)
        slow, last_gap = 0, np.full(na, np.inf)
        idle, best_gap, best_up, best_lo = 0, np.full(na, np.inf), np.full(na, np.inf), np.full(na, -np.inf)
        self.idle_stop = False
        for _ in range(max_rounds):
            e_up, e_lo = self._entry_totals()
            lo, hi, lw_up, lw_lo, iu, il = self.lo, self.hi, self.lw_up, self.lw_lo, self.iu, self.il
            counted = (hi >= 1.0)[:, None]  # block {t = 0}: nothing counted, identical laws
            eu_b = e_up[iu]
            if self.slabs:  # blocks inside an order's slab: the slab bounds them at that order
                counted = counted & ~self._covered(lo, hi)
                eu_b = np.where(self._above(lo), np.minimum(eu_b, self.slab_avg_up[None, :]), eu_b)
            nb = lo.size
            el_b = e_lo[il]
            end = None
            with np.errstate(invalid="ignore"):  # -inf + inf where log S overflowed: caught below
                t_up = np.where(counted, lw_up[:, None] + eu_b, -np.inf)
                t_lo = np.where(counted, lw_lo[:, None] + el_b, -np.inf)
                alts = []
                if self._ends_on:
                    # the end bounds where they are tighter (both certified; computed at counted blocks only)
                    alts.append(self._end_bounds(e_up, e_lo, eu_b, el_b, lw_up, iu, il, counted))
                if self._chord_on:  # the chord bounds likewise
                    alts.append(self._chord_bounds(e_up, e_lo, iu, il, counted))
                end = _best_of([a for a in alts if a is not None], (nb, na))
                if end is not None:
                    r_e, o_e, a_up, a_lo, a_est = end
                    t_up0 = t_up[r_e, o_e]  # (the corners' bounds, for the scores below)
                    t_up[r_e, o_e] = np.minimum(t_up0, a_up)
                    t_lo[r_e, o_e] = np.maximum(t_lo[r_e, o_e], a_lo)
                tot_up = _logsumexp(t_up, axis=0) + math.log1p(4 * nb * _U)
                tot_lo = _logsumexp(t_lo, axis=0) + math.log1p(-4 * nb * _U)
                if self.slabs:
                    tot_up = np.logaddexp(tot_up, self.slab_up) + 4 * _U
                    tot_lo = np.logaddexp(tot_lo, self.slab_lo) - 4 * _U
            if np.any(np.isposinf(tot_up) | np.isnan(tot_up)):
                # log S overflowed (astronomical likelihood ratios, e.g. eps0 ~ 700 at large
                # orders): no certified finite value; the caller caps at eps0, lower end 0
                return np.full(na, np.inf), np.full(na, -np.inf), False, nb, self._max_cells()
            # relative gap of log(1 + scale E), E = S - 1 (the divergence times alpha - 1)
            l_up = np.logaddexp(0.0, tot_up + log_scale)
            l_lo = np.logaddexp(0.0, tot_lo + log_scale)
            with np.errstate(divide="ignore", invalid="ignore"):
                rel_gap = np.where(l_up <= 0.0, 0.0, np.where(l_lo > 0.0, l_up / l_lo - 1.0, np.inf))
            if np.all(rel_gap <= rtol):
                return tot_up, tot_lo, True, nb, self._max_cells()
            again = False
            if (self._ends and not self._ends_on) or (not self._chord_on and np.any(self._chord_cols)):
                with np.errstate(divide="ignore"):
                    self._end_budget = np.where(l_lo > 0.0, math.log(rtol) + np.log(np.maximum(l_lo, 1e-300)) + l_lo
                                                - log_scale, math.log(rtol) + tot_up)
            if self._ends and not self._ends_on:
                # the end bounds from the first round that does not converge on the corners' alone and has blocks where
                # they may pay (work only: most curves converge in their first round, and many have no such blocks)
                if np.any(self._end_mask(eu_b, el_b, lw_up, iu, il, counted)):
                    self._ends_on = again = True
            if not self._chord_on and np.any(self._chord_cols):  # the chord bounds likewise (work only)
                self._chord_on = again = True
            if again:
                # (nothing evaluated since: the entries' sums over their cells are reused, not summed again)
                self._raw_totals = self._last_raw if self.cell_ent.size else None
                continue
            if np.any(np.isfinite(log_floor)):
                # orders whose budget, even at their upper bound, is below the kernels' floating-point floor
                # cannot reach rtol: they stop once their gap is within _FLOOR_STOP floors, or a round shrank
                # it by less than a tenth; so do orders whose budget is below _FLOOR_STOP floors (the floor
                # is estimated low), at such a round (work only: the bracket is certified wherever it stops)
                with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                    budget_up = math.log(rtol) + np.log(np.maximum(l_up, 1e-300)) + l_up - log_scale
                    gap_e = np.exp(tot_up) - np.exp(tot_lo)
                below = (log_floor > budget_up) & (rel_gap > rtol)
                near = (log_floor + math.log(_FLOOR_STOP) > budget_up) & (rel_gap > rtol)
                stall = gap_e > 0.9 * prev_gap
                self.floor_stop |= (below & (gap_e <= _FLOOR_STOP * np.exp(log_floor))) | (near & stall)
                prev_gap = gap_e
                if np.all((rel_gap <= rtol) | self.floor_stop):
                    return tot_up, tot_lo, False, nb, self._max_cells()
            if self.cell_ent.size > _MAX_CELLS:
                # (splits stop there, but new entries copy their neighbours' cells: orders 1e5 and 1e6 at n = 1e6
                # grew 1.5 million cells and ran > 400 s; 67k is the most any default-order curve uses, eps0 <= 8,
                # n <= 1e12, rtol 1e-3 and 1e-4; more of the same would not help: no re-run with every entry)
                self.idle_stop = True
                return tot_up, tot_lo, False, nb, self._max_cells()
            live = (rel_gap > rtol) & ~self.floor_stop  # orders still to tighten
            # progress: a live order's relative gap, or (while its lower end is still 0: gap infinite) either
            # end, moved by _STALL_REL
            moved = ((rel_gap < (1.0 - _STALL_REL) * best_gap) | (tot_up < best_up + math.log1p(-_STALL_REL))
                     | (tot_lo > best_lo - math.log1p(-_STALL_REL)))
            idle = 0 if np.any(moved[live]) else idle + 1
            best_gap, best_up, best_lo = np.minimum(best_gap, rel_gap), np.minimum(best_up, tot_up), np.maximum(best_lo, tot_lo)
            if idle >= _IDLE_ROUNDS:
                self.idle_stop = True
                return tot_up, tot_lo, False, nb, self._max_cells()
            # Budget on the gap of E per order: E_up - E_lo <= rtol log1p(s E_lo)(1 + s E_lo)/s
            # suffices. Gaps are scored relative to it, so one round splits every cell and
            # block whose gap matters, not only the few beside a crude bound.
            with np.errstate(divide="ignore"):
                budget = np.where(l_lo > 0.0, math.log(rtol) + np.log(np.maximum(l_lo, 1e-300)) + l_lo - log_scale,
                                  math.log(rtol) + tot_up)
            self._end_budget = budget
            ref = budget[None, live]
            with np.errstate(invalid="ignore", over="ignore"):
                # outer part: block mass x (inner estimate at the low end - at the high end)
                # (lower bounds of the inner sums: a crude inner upper bound is the inner
                # part's gap, and must not make the blocks look wide), plus the gap of the
                # block mass itself (far tails, bounded from single terms: narrower blocks
                # tighten it)
                outer = (np.exp(lw_up[:, None] + e_lo[iu][:, live] - ref) - np.exp(lw_up[:, None] + e_lo[il][:, live] - ref)
                         + np.exp(lw_up[:, None] + e_lo[il][:, live] - ref) - np.exp(lw_lo[:, None] + e_lo[il][:, live] - ref))
                if end is not None:
                    # the blocks' gaps under the end bounds (their upper bounds estimated from the lower corners' lower
                    # bounds, as above), where those are tighter
                    col = np.full(na, -1, dtype=np.int64)
                    col[live] = np.arange(int(np.sum(live)))
                    sel = col[o_e] >= 0
                    rr, oo, cc = r_e[sel], o_e[sel], col[o_e[sel]]
                    est_up = lw_up[rr] + e_lo[iu[rr], oo]
                    lo_e = t_lo[rr, oo]
                    better = (a_est[sel] < est_up) | (lo_e > lw_lo[rr] + e_lo[il[rr], oo])
                    if np.any(better):
                        rr, cc = rr[better], cc[better]
                        ref_e = ref[0, cc]
                        outer[rr, cc] = (np.exp(np.minimum(a_est[sel][better], est_up[better]) - ref_e)
                                         - np.exp(lo_e[better] - ref_e))
            # a gap beyond the double range (inf, or inf - inf) is as large as gaps get: split first
            cnt_live = counted if counted.shape[1] == 1 else counted[:, live]
            outer = np.where(cnt_live, np.maximum(np.nan_to_num(outer, nan=1e300, posinf=1e300), 0.0), 0.0)
            outer_total = outer.sum(axis=0)
            with np.errstate(invalid="ignore", over="ignore"):
                gap_ref = np.exp(tot_up[live] - ref[0]) - np.exp(tot_lo[live] - ref[0])
                slab_gap = np.exp(self.slab_up[live] - ref[0]) - np.exp(self.slab_lo[live] - ref[0])
            slab_gap = np.maximum(np.nan_to_num(slab_gap, nan=np.inf), 0.0)
            inner_total = np.maximum(np.nan_to_num(gap_ref, nan=np.inf) - outer_total - slab_gap, 0.0)
            if _DEBUG:
                print("round", nb, self.cell_ent.size, rel_gap.max(), outer_total.max(), inner_total.max())
            refined = False
            need = None
            if self.slabs and np.any(slab_gap > _SLAB_SHARE):
                refined |= self._refine_slabs(np.flatnonzero(live)[slab_gap > _SLAB_SHARE], slab_gap[slab_gap > _SLAB_SHARE])
            if self.envelope:
                eu_p = eu_b
                if end is not None:  # (the blocks' upper bounds where the end bounds are tighter)
                    eu_p = eu_b.copy()
                    tighter = a_up < t_up0
                    eu_p[r_e[tighter], o_e[tighter]] = a_up[tighter] - lw_up[r_e[tighter]]
                gap_b = None
                if self._chord_on:  # (the blocks' gaps in budgets, at the chord bounds' orders: see _plan_orders)
                    with np.errstate(invalid="ignore", over="ignore"):
                        gap_b = np.exp(t_up - budget[None, :]) - np.exp(t_lo - budget[None, :])
                    gap_b = np.maximum(np.nan_to_num(gap_b, nan=np.inf), 0.0)
                need, filled = self._plan_orders(lw_up, e_up, iu, il, counted, budget, live, eu_p, gap_b)
                refined |= filled
            if self.cell_ent.size and np.max(inner_total) > 0.4:
                refined |= self._refine_inner(live, ref, 0.3)
            splittable = hi > lo
            if np.max(outer_total) > 0.4 and np.any(splittable):
                score = np.max(np.where(splittable[:, None], outer, 0.0), axis=1)
                if need is not None:
                    # a block is refined at least at the order that scores it highest
                    top = np.flatnonzero(live)[np.argmax(np.where(splittable[:, None], outer, 0.0), axis=1)]
                    need[np.arange(nb), top] = True
                refined |= self._refine_outer(score, 0.3, need)
            if not refined and np.any(splittable):  # last resort: split by the upper bounds
                # ... unless such rounds stopped paying: _STALL_ROUNDS in a row shrank no live order's relative gap
                # by _STALL_REL of it (eps0 = 6, n = 2.15e6: gaps of term-by-term
                # entries, which splitting blocks does not reduce, left 61 budgets; 200 rounds of one entry at every
                # order, 1e-5 of the gap each, 3 s). Work only: the bracket is certified wherever it stops
                slow = slow + 1 if not np.any(rel_gap[live] < (1.0 - _STALL_REL) * last_gap[live]) else 0
                last_gap = rel_gap
                if slow >= _STALL_ROUNDS:
                    return tot_up, tot_lo, False, nb, self._max_cells()
                with np.errstate(invalid="ignore", over="ignore"):
                    outer = np.exp(lw_up[:, None] + e_up[iu][:, live] - ref) - np.exp(lw_up[:, None] + e_up[il][:, live] - ref)
                outer = np.where(cnt_live, np.maximum(np.nan_to_num(outer, nan=1e300, posinf=1e300), 0.0), 0.0)
                score = np.max(np.where(splittable[:, None], outer, 0.0), axis=1)
                refined = self._refine_outer(score, 0.3, None if not self.slabs else ~self._covered(lo, hi))
            if not refined:
                return tot_up, tot_lo, False, nb, self._max_cells()
        return tot_up, tot_lo, False, self.lo.size, self._max_cells()

    def _chord_stride(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """The orders (blocks x orders) at which the first blocks' upper and lower corners are evaluated where the chord
        bounds apply (``None``: every order): at the orders of :attr:`_chord_cols` only every :data:`_CHORD_STRIDE`-th
        upper corner, the first and the last block's (and the last block's lower corner); the others are bounded from
        them by :func:`_chord_envelope` (and evaluated where a block's gap asks for it: :meth:`_plan_orders`). Only where
        the largest such order's sum may lie far below the clone count's mean (:meth:`_end_far_below`, ``_FIRST_Z`` sd):
        there the rounds after the first are many anyway; elsewhere the first round often converges with every corner,
        and the stride's extra rounds cost more than it saves (measured: eps0 = 1, n = 3e5: 6.9 -> 9.3 queries; eps0 =
        2 .. 4, n = 3.16e6: 8 -> 10 .. 13). Work only."""
        if (_CHORD_STRIDE <= 1 or not np.any(self._chord_cols) or lo.size < 2 * _CHORD_STRIDE
                or not self._end_far_below(float(np.max(self.alpha[self._chord_cols])), _FIRST_Z)):
            return None
        nb = lo.size
        on = np.arange(nb) % _CHORD_STRIDE == 0
        on[-1] = True
        up = np.where(self._chord_cols[None, :], on[:, None], True)
        low = np.broadcast_to(~self._chord_cols[None, :], (nb, self.alpha.size)).copy()
        low[-1] = True
        return up, low

    def _add_first_blocks(self, lo: np.ndarray, hi: np.ndarray, need_lo: np.ndarray | None, rtol: float,
                          log_scale: float) -> None:
        """The first blocks (``envelope`` pairs without slabs) in two steps: those below ``_FIRST_Z`` sd under the clone
        count's mean at every order, then the others only at the orders where, bounded from the first ones alone, they
        are at most :data:`_FIRST_SKIP` of the budget (work only, *derived*): ``K`` is non-increasing in ``c``, so at an
        order where no entry of theirs is evaluated the envelope bounds each of them by the least upper bound of the
        entries below (all at ``c' <= lo - 1``), at most ``u_min``; their sum is then at most ``Pr[rest] e^u_min`` (the
        upper bounds of their masses), and their lower bound 0. The budget is taken from the first blocks' lower bound
        (at most the total's), so the skipped blocks add at most that share of the final budget to the gap. Measured:
        at eps0 = 6, n = 3.16e6 the orders 768 .. 1024, whose sums lie far below the mean, skipped the 80 blocks around
        it (their windows of ~2700 terms ran to a = m)."""
        na = self.alpha.size
        need_up = None
        stride = self._chord_stride(lo, hi)  # (the chord bounds' orders at every few corners)
        if stride is not None:
            need_up = stride[0]
            need_lo = stride[1] if need_lo is None else need_lo & stride[1]
        mu = self.N * self.p + 1.0
        sd = math.sqrt(max(self.N * self.p * (1.0 - self.p), 1.0))
        low = hi < mu - _FIRST_Z * sd
        if (na < 2 or not np.any(low) or int(np.sum(~low)) < _FIRST_MIN_REST
                or not self._end_far_below(float(self.alpha[-1]), _FIRST_Z)):
            self._add_blocks(lo, hi, need_up, need_lo)
            return
        self._add_blocks(lo[low], hi[low], None if need_up is None else need_up[low], None if need_lo is None else need_lo[low])
        e_up, e_lo = self._entry_totals()
        counted = self.hi >= 1.0
        nb = self.lo.size
        with np.errstate(invalid="ignore"):
            tot_lo = _logsumexp(np.where(counted[:, None], self.lw_lo[:, None] + e_lo[self.il], -np.inf), axis=0)
        tot_lo = tot_lo + math.log1p(-4 * nb * _U)
        l_lo = np.logaddexp(0.0, tot_lo + log_scale)
        with np.errstate(divide="ignore", invalid="ignore"):
            budget = math.log(rtol) + np.log(np.maximum(l_lo, 1e-300)) + l_lo - log_scale
        u_min = np.min(e_up, axis=0)  # (every entry so far lies at c <= the rest's least corner)
        rest = ~low
        m_up, m_lo = self._log_block_mass(lo[rest], hi[rest])
        with np.errstate(invalid="ignore"):
            rest_up = _logsumexp(m_up, axis=0) + math.log1p(4 * m_up.size * _U) + u_min
            skip = (l_lo > 0.0) & np.isfinite(budget) & (rest_up <= math.log(_FIRST_SKIP) + budget)
        need = np.broadcast_to(~skip, (int(np.sum(rest)), na)).copy()
        if need_up is not None:
            need &= need_up[rest]
        need_r = need if need_lo is None else need & need_lo[rest]
        self._add_blocks(lo[rest], hi[rest], need, need_r, (m_up, m_lo))

    def _end_far_below(self, alpha: float, z: float) -> bool:
        """A guess (only the work depends on it): whether the largest order's sum may lie far below the clone count's
        mean, from the term at an end of ``x`` (``a = c + 1`` or ``a = 0``: every clone reports one value), whose
        largest value over ``c`` (Stirling, as :func:`_slab_plan`'s ends: at ``c = N th``) lies more than ``z`` sd
        below the mean and exceeds that end's term at the mean count (or 1, about the interior's)."""
        return bool(self._far_end_tilts(alpha, z))

    def _far_end_tilts(self, alpha: float, z: float) -> list[float]:
        """The tilted clone probabilities ``th`` of the ends of ``x`` for which :meth:`_end_far_below` holds (work only)."""
        N, p, s = float(self.N), self.p, self.s
        if not (0.0 < p < 1.0 and 0.0 < s < 1.0 and N >= 1.0):
            return []
        ss = s * (1.0 - s)
        bp, bq = (self.pa1 - s) / ss, (self.pb1 - s) / ss
        mean, sd = N * p, math.sqrt(N * p * (1.0 - p))
        out = []
        for x_e, ls_e in ((1.0, math.log(s)), (0.0, math.log1p(-s))):
            if min(bp * (x_e - s), bq * (x_e - s)) <= -1.0:
                continue
            th = p * math.exp(ls_e) / (1.0 - p + p * math.exp(ls_e))
            kl = float(xlogy(th, th / p) + xlogy(1.0 - th, (1.0 - th) / (1.0 - p)))
            lf = alpha * math.log1p(bp * (x_e - s)) + (1.0 - alpha) * math.log1p(bq * (x_e - s))
            if N * th < mean - z * sd and -N * kl + (N * th + 1.0) * ls_e + lf > max((mean + 1.0) * ls_e + lf, 0.0):
                out.append(th)
        return out

    def _log_floor(self) -> np.ndarray:
        """Per order, ``log`` of a lower estimate of the floating-point floor of the bracket's gap on
        ``S_alpha - 1`` (``-inf`` where not estimated: pairs with a silent first user, Bernoulli
        kernels). Only decides when refinement stops (:meth:`bounds`).

        Estimate (*derived* from the error terms charged): a kernel's bracket charges the rounding of
        ``g = f - 1 - f'(s) y`` at least ``8 u |f'(s) y|`` per unit of mass at each cell's end and mean
        (:func:`_g`, :class:`_Kernel`), and at least ``4 u |f'(s)|`` per unit mass when summed term by
        term (:func:`_window_orders`): at least about ``6 u |f'(s)| sd_y`` with ``sd_y`` the spread of
        ``x`` under ``Bin(c+1, s)``, which falls slowly in ``c``; the kernels of the clone counts up to
        a few spreads above the mean carry almost all of the mass. Taken at a third of that, at the
        mean count, with ``f'(s) = alpha bp + (1 - alpha) bq`` of ``lam = 1``."""
        na = self.alpha.size
        if not self.envelope or self.bernoulli or not 0.0 < self.p < 1.0:
            return np.full(na, -np.inf)
        ss = self.s * (1.0 - self.s)
        bp, bq = (self.pa1 - self.s) / ss, (self.pb1 - self.s) / ss
        d = np.abs(self.alpha * bp + (1.0 - self.alpha) * bq)
        sd_y = math.sqrt(ss / (self.N * self.p + 1.0))
        with np.errstate(divide="ignore"):
            return np.log(2.0 * _U * d * sd_y)

    # -- slabs ------------------------------------------------------------------------
    def _build_slabs(self, rtol: float, log_scale: float) -> None:
        """Slabs of clone counts (:class:`_Slab`) for pairs with ``p0 = 0`` when their points are few
        enough; each order's slab is evaluated at cells fine enough for :data:`_SLAB_SHARE` of its
        budget (estimated from the slab's own lower bound, which is at most the total's)."""
        na = self.alpha.size
        self.slabs = []
        self.slab_of = np.full(na, -1, dtype=np.int64)
        self.slab_level = np.zeros(na, dtype=np.int64)
        self.slab_win_up = np.full(na, -np.inf)
        self.slab_tail = np.full(na, -np.inf)
        self.slab_up = np.full(na, -np.inf)
        self.slab_lo = np.full(na, -np.inf)
        self.slab_avg_up = np.full(na, np.inf)  # (set by ``bounds`` from the slabs' masses, computed with the first blocks')
        self.slab_settled = np.zeros(na, dtype=bool)  # (orders whose slab gap no finer level shrinks: _SLAB_SETTLE)
        self._rtol, self._log_scale = rtol, log_scale
        if not (self.envelope and not self.bernoulli and self.exact_window > 0 and 0.0 < self.p < 1.0 and self.N >= 1):
            return
        sd_c = math.sqrt(self.N * self.p * (1.0 - self.p))
        if (self.N < 4 * _SLAB_MIN_ROWS or sd_c < _SLAB_MIN_ROWS / _SLAB_ZC
                or self.N * self.p - _SLAB_ZC * sd_c > _SLAB_MAX_COUNT):
            return  # (before planning: too few counts around the mean, or too large ones)
        s = self.s
        mu = self.N * self.p
        rect_limit = _SLAB_RECT if self.pair.max_log_ratio <= _SLAB_RECT_RATIO else 1.0
        mid = _SLAB_MAX_POINTS_WIDE is not None and self.pair.max_log_ratio <= _SLAB_MID_RATIO
        wide_count = _SLAB_MID_COUNT if mid else _SLAB_WIDE_COUNT
        max_points = _SLAB_MAX_POINTS if self.pair.max_log_ratio <= _SLAB_RECT_RATIO or _SLAB_MAX_POINTS_WIDE is None \
            or mu - _SLAB_ZC * sd_c > wide_count else max(_SLAB_MAX_POINTS_WIDE, _SLAB_MID_POINTS if mid else 0.0)
        if 4.0 * _SLAB_ZC * _SLAB_ZX * sd_c * math.sqrt(s * (1.0 - s) * (mu + 1.0)) > rect_limit * max_points:
            # the points of the binomials' own rectangle (+-_SLAB_ZC sd of the count, +-_SLAB_ZX of x at the
            # mean count), about the least any order's slab has (measured: 0.3 .. 0.94 of the cheapest
            # planned slab over 30 clones / stronger-clones pairs, n 1e4 .. 1e6): beyond the limit the plan (~1.2
            # ms) would find no slab; beyond _SLAB_RECT of it (eps0 = 1: n >~ 1.7e4; eps0 = 0.5: n >~ 1.3e4) the
            # blocks without slabs cost less than the slab (measured, CPU: eps0 = 1, n = 2e4 / 2.5e4 / 3e4: 14.4 /
            # 14.6 / 13.4 -> 13.4 / 13.1 / 12.3 ms; eps0 = 0.5, 1.5e4 / 2e4: 12.2 / 12.6 -> 10.1 / 10.0), for pairs
            # whose log likelihood ratio is at most _SLAB_RECT_RATIO (at eps0 = 6, n = 2e6 the blocks alone stop at
            # the work limit, 1.4% above the slab's bracket at alpha = 256)
            return
        ss = s * (1.0 - s)
        self.bp1, self.bq1 = (self.pa1 - s) / ss, (self.pb1 - s) / ss
        self.log_k0 = _bernoulli_excess(np.array([self.pa1]), np.array([self.pb1]), self.alpha)[0][0]  # K(0) - 1, upper
        narrow = self.pair.max_log_ratio <= _SLAB_RECT_RATIO
        est: list[np.ndarray] = []
        saddles = _saddles(float(self.N), self.p, s, self.bp1, self.bq1, self.alpha)
        merge = _SLAB_MERGE if narrow else _SLAB_MERGE_WIDE if mu >= _SLAB_MERGE_WIDE_COUNT else _SLAB_MERGE_WIDE_SMALL
        plan = _slab_plan(float(self.N), self.p, s, self.bp1, self.bq1, self.alpha, self._tail_tol, self.log_k0,
                          merge, narrow, est_out=est, saddles=saddles)
        scaled: set[tuple[int, int, float, float]] = set()
        if _SLAB_CLIP_MARGIN is not None and plan:
            # orders whose clipped points alone would keep their slab wider than the budget (_slab_clip_floor) get
            # none, and the others are planned again without them (their groups' largest weights move)
            l_est = np.logaddexp(0.0, est[0] + log_scale)
            with np.errstate(divide="ignore", invalid="ignore"):
                b_est = math.log(rtol) + np.log(np.maximum(l_est, 1e-300)) + l_est - log_scale
            excl = np.zeros(na, dtype=bool)
            for _ in range(3):
                new = excl.copy()
                for js, c1, c2, xl, xr in plan:
                    if (c2 - c1 + 1.0) * ((xr - xl) * (c2 + 1.0) + 1.0) > _wide_limit(max_points, c2, js.size, wide_count):
                        continue  # (never kept, below)
                    floor = _slab_clip_floor(float(self.N), self.p, s, self.bp1, self.bq1, self.alpha[js], c1, c2, xl, xr)
                    clipped = ~(floor <= b_est[js] + _SLAB_CLIP_MARGIN)
                    if (_SLAB_SCALED and np.any(clipped) and (js.size >= _SLAB_SCALED_MIN_ORDERS or na < _SLAB_SCALED_MIN_ORDERS)
                            and (c2 - c1 + 1.0) * ((xr - xl) * (c2 + 1.0) + 1.0) <= _SLAB_SCALED_MAX_POINTS):
                        scaled.add((c1, c2, xl, xr))  # (a scale per block of cells instead: its orders stay)
                        continue
                    new[js] |= clipped
                if np.array_equal(new, excl):
                    break
                excl = new
                plan = _slab_plan(float(self.N), self.p, s, self.bp1, self.bq1, self.alpha, self._tail_tol, self.log_k0,
                                  merge, narrow, exclude=excl, saddles=saddles)
        if not plan:
            return
        # the slabs that fit in _SLAB_MAX_POINTS, cheapest first (few counts: nothing to pool; large
        # counts: cells per kernel are cheaper); the others' orders keep blocks of totals only
        cost = [(c2 - c1 + 1.0) * ((xr - xl) * (c2 + 1.0) + 1.0) for _, c1, c2, xl, xr in plan]
        keep, total = [], 0.0
        for i in np.argsort(cost, kind="stable"):
            _, c1, c2, _, _ = plan[i]
            if total + cost[i] <= _wide_limit(max_points, c2, plan[i][0].size, wide_count) and c2 - c1 + 1 >= _SLAB_MIN_ROWS and c2 <= _SLAB_MAX_COUNT:
                keep.append(int(i))
                total += cost[i]
        plan = [plan[i] for i in sorted(keep)]
        if not plan:
            return
        log_tol = math.log(self._tail_tol)
        for g, (js, c1, c2, xl, xr) in enumerate(plan):
            is_scaled = (c1, c2, xl, xr) in scaled
            stride = self._stride(js, c1, c2, xl, xr, is_scaled)
            args = (float(self.N), self.p, s, self.rel, js, c1, c2, xl, xr, is_scaled)
            slab = _StrideSlab(*args, stride) if stride > 1 else _Slab(*args)
            self.slabs.append(slab)
            self.slab_of[js] = g
            # start: _SLAB_START cells per spread of x
            al = self.alpha[js]
            sm = math.sqrt(ss / (0.5 * (c1 + c2) + 1.0))
            self.slab_level[js] = slab.level_for(np.full(js.size, sm / _SLAB_START))
            if js.size <= _SLAB_FEW:  # (a few orders: one level finer, the window's fixed cost dominates)
                self.slab_level[js] = np.maximum(self.slab_level[js] - 1, 0)
            self._slab_window(js)
            self.slab_tail[js] = slab.tails(self.pa1, self.pb1, self.bp1, self.bq1, al, self.rel, log_tol, self.slab_lo[js],
                                            (self.pair.max_log_ratio <= _SLAB_TAIL_GEOMETRIC_RATIO
                                             or _SLAB_TAIL_GEOMETRIC_WIDE) and slab.R is None)
            self.slab_up[js] = np.logaddexp(self.slab_win_up[js], self.slab_tail[js]) + 4 * _U
            # an order whose window misses its sum (tails above tail_tol of it) leaves the slab: its
            # blocks of totals are bounded as without slabs
            bad = js[~(self.slab_tail[js] <= log_tol + self.slab_lo[js])]
            self._leave_slab(bad)
        if np.all(self.slab_of < 0):
            self.slabs = []
        prev_gap: np.ndarray | None = None
        for _ in range(8):  # finer cells where the slab alone is too wide for its budget
            l_lo = np.logaddexp(0.0, self.slab_lo + log_scale)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                budget = math.log(rtol) + np.log(np.maximum(l_lo, 1e-300)) + l_lo - log_scale
                gap = np.exp(self.slab_up - budget) - np.exp(self.slab_lo - budget)
            gap = np.where(self.slab_of >= 0, np.nan_to_num(gap, nan=np.inf), 0.0)
            over = np.flatnonzero((gap > _SLAB_SHARE) & (self.slab_level > 0))
            if _SLAB_SETTLE and _SLAB_DROP_STUCK > 0.0:  # (an early form of the stuck drop below: off with it)
                # orders that even a third-order shrink per level (at 64x a level, 8x the measured) could not bring within
                # _SLAB_DROP_STUCK budgets at level 0 leave the slab now instead of after a window at level 0; an order
                # whose last finer level shrank its gap by less than _SLAB_SETTLE_SHRINK is settled (its gap is the
                # level-independent part: the tails, the clip charge, the weights' rounding) and not refined further
                hopeless = over[gap[over] > _SLAB_DROP_STUCK * 64.0 ** self.slab_level[over].astype(float)]
                self._leave_slab(hopeless)
                if prev_gap is not None:
                    self.slab_settled[over[gap[over] > _SLAB_SETTLE_SHRINK * prev_gap[over]]] = True
                over = over[(self.slab_of[over] >= 0) & ~self.slab_settled[over]]
                prev_gap = gap
            if over.size == 0 or not self._refine_slabs(over, gap[over]):
                break
        if _SLAB_DROP_STUCK > 0.0 and self.slabs:
            # orders whose slab, at its finest cells, is alone wider than _SLAB_DROP_STUCK budgets leave it (g varies
            # too fast across a cell for Taylor's bound: e.g. eps0 = 2, n = 1.47e4, the slab of alpha 768 .. 1024
            # around x ~ 1, gaps of e^60 .. e^81 budgets): inside it, no block would be evaluated at them, and their
            # refinement ran to the work limit before the every-order fallback (0.8 s). Their blocks are bounded
            # as without slabs (work only)
            l_lo = np.logaddexp(0.0, self.slab_lo + log_scale)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                budget = math.log(rtol) + np.log(np.maximum(l_lo, 1e-300)) + l_lo - log_scale
                gap = np.exp(self.slab_up - budget) - np.exp(self.slab_lo - budget)
            # (settled orders too, at any level: no finer level is coming for them; review rev102s: settled at level 1
            # with gaps of 2-4 budgets, they left the envelope pass unconverged, stronger-clones 14, n = 1e9, rtol 1e-4
            # 0.08 -> 0.61 s)
            stuck = ((self.slab_of >= 0) & ((self.slab_level == 0) | self.slab_settled)
                     & ~(np.nan_to_num(gap, nan=np.inf) <= _SLAB_DROP_STUCK))
            if np.any(stuck):
                self._leave_slab(stuck)
        if self.slabs and np.all(self.slab_of < 0):  # (also when the level loop's drop emptied them: review rev102s)
            self.slabs = []

    def _stride(self, js: np.ndarray, c1: int, c2: int, xl: float, xr: float, scaled: bool) -> int:
        """The stride of a :class:`_StrideSlab` for the planned slab (orders ``js``, counts ``c1 .. c2``, ``x`` in ``[xl,
        xr]``), or 1 for a plain :class:`_Slab` (:data:`_STRIDE_THETA`, :data:`_STRIDE_MAX_SPREAD`; work only)."""
        if (_STRIDE_THETA <= 0.0 or scaled or self.pair.max_log_ratio <= _SLAB_RECT_RATIO
                or c2 - c1 + 1 < _STRIDE_MIN_ROWS
                or not np.all(_chord_orders(self.alpha[js], self.pa1, self.pb1, self.s, _exact_symmetric(self.pair)))):
            return 1
        N, p = float(self.N), self.p
        slope = max(abs(math.log((N - c) * p / ((c + 1.0) * (1.0 - p)))) for c in (float(c1), float(c2)))
        d = int(_STRIDE_THETA / max(slope, 1e-9))
        if d >= _STRIDE_MIN:  # (the masses' span over the slab: log Pr at its ends and at the mode, if inside)
            cs = np.array([float(c1), float(c2), min(max(math.floor((N + 1.0) * p), float(c1)), float(c2))])
            lo, up = _log_pmf_bracket(cs, np.full(3, N), p)
            if not float(np.max(up)) - float(np.min(lo)) <= _STRIDE_MAX_SPREAD - 1.0:  # (1: the brackets' rounding)
                return 1
        saved = (c2 - c1 + 1.0) * ((xr - xl) * (c2 + 1.0) + 1.0) * (1.0 - 2.0 / max(d, 1))
        need = min(_STRIDE_MIN_POINTS, _STRIDE_MIN_POINTS_COARSE) if d >= _STRIDE_COARSE else _STRIDE_MIN_POINTS
        return d if d >= _STRIDE_MIN and saved >= need else 1

    def _leave_slab(self, js: np.ndarray) -> None:
        """The orders ``js`` (indices or a mask) leave their slab: their blocks of totals bound them as without slabs."""
        self.slab_of[js] = -1
        self.slab_up[js] = self.slab_lo[js] = -np.inf

    def _slab_window(self, js: np.ndarray) -> None:
        """Evaluate the orders ``js`` (one slab) at their levels."""
        slab = self.slabs[int(self.slab_of[js[0]])]
        for lv in np.unique(self.slab_level[js]):
            sel = js[self.slab_level[js] == lv]
            up, lo = slab.window(self.pa1, self.pb1, self.bp1, self.bq1, self.alpha[sel], int(lv),
                                 math.log(self._tail_tol))
            self.slab_win_up[sel], self.slab_lo[sel] = up, lo
        new_up = np.logaddexp(self.slab_win_up[js], self.slab_tail[js]) + 4 * _U
        # (finer cells: the average's bound moves with the slab's, never up)
        old_avg, old_up = self.slab_avg_up[js], self.slab_up[js]
        ok = np.isfinite(old_avg) & np.isfinite(old_up) & np.isfinite(new_up)
        self.slab_avg_up[js] = np.where(ok, np.minimum(old_avg, old_avg + (new_up - np.where(ok, old_up, 0.0))), old_avg)
        self.slab_up[js] = new_up

    def _refine_slabs(self, orders: np.ndarray, gap: np.ndarray) -> bool:
        """Finer cells for ``orders`` whose slab gap is ``gap`` (in budgets). The window's gap (Taylor's
        bound, :meth:`_Slab.window`) is of the third order in the cells' width (measured: 7.9 .. 8.8 times
        per level where it dominates, n = 3e3), so ``log2(gap / target) / 3`` levels, at least one, aim
        at half the share (was: the square, one level too many at alpha 640 .. 1024, n = 3e3). Only the
        work depends on the level. Returns whether any moved."""
        keep = (self.slab_of[orders] >= 0) & ~self.slab_settled[orders]
        orders, gap = orders[keep], (gap[keep] if gap.size == keep.size else gap)
        if orders.size == 0:
            return False
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.ceil(np.log2(np.maximum(gap, 1e-300) / (0.5 * _SLAB_SHARE)) / 3.0)
        step = np.clip(np.nan_to_num(step, nan=8.0, posinf=8.0, neginf=1.0), 1, 8).astype(np.int64)
        old = self.slab_level[orders].copy()
        self.slab_level[orders] = np.maximum(old - step, 0)
        moved = orders[self.slab_level[orders] < old]
        for g in np.unique(self.slab_of[moved]):
            self._slab_window(moved[self.slab_of[moved] == g])
        return bool(moved.size)

    def _above(self, lo: np.ndarray) -> np.ndarray:
        """Blocks (rows) above the slab of each order (columns): totals ``t = c + 1`` with ``c`` beyond
        the slab's counts. Their kernels are bounded without entries (*derived*): ``K`` is
        non-increasing in ``c`` (FMT21 Lemma F.2), so for ``c > c2`` and every ``c'`` of the slab
        ``K(c) - 1 <= K(c') - 1``, hence ``K(c) - 1 <= sum_{c'} Pr[C = c'] (K(c') - 1) / Pr[c1 <= C <=
        c2]``, at most the slab's upper bound over a lower bound on its mass (``slab_avg_up``)."""
        ab = np.zeros((lo.size, self.alpha.size), dtype=bool)
        for g, slab in enumerate(self.slabs):
            ab[:, self.slab_of == g] = (lo >= slab.c2 + 2.0)[:, None]
        return ab

    def _covered(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Blocks (rows) inside the slab of each order (columns): totals ``t = c + 1`` with ``c``
        in the slab's counts."""
        cov = np.zeros((lo.size, self.alpha.size), dtype=bool)
        for g, slab in enumerate(self.slabs):
            inside = (lo >= slab.c1 + 1.0) & (hi <= slab.c2 + 1.0)
            cov[:, self.slab_of == g] = inside[:, None]
        return cov

    def _max_cells(self) -> int:
        if self.bernoulli or self.cell_ent.size == 0:
            return 0
        return int(np.max(np.bincount(self.cell_ent)))

    def _plan_orders(self, lw_up: np.ndarray, e_up: np.ndarray, iu: np.ndarray, il: np.ndarray, counted: np.ndarray,
                     budget: np.ndarray, live: np.ndarray, eu_b: np.ndarray | None = None, gap: np.ndarray | None = None
                     ) -> tuple[np.ndarray, bool]:
        """Entries evaluated per order (``envelope`` pairs). Returns the orders (blocks x orders)
        at which the corners of a block are to be evaluated when it is split: the live orders
        except those where the block is among the smallest shares of the order's upper bound,
        together at most :data:`_NEGLIGIBLE` of its budget (a split block's parts, bounded from the
        monotone envelope at those orders, contribute at most what the block did). Evaluates the
        entries that blocks use at orders they were not evaluated at, where those blocks' shares
        exceed ``0.3`` of the budget (so they may decide the order's convergence); returns whether
        it did. At the orders of the chord bounds (``gap``, blocks x orders, given: the blocks' gaps in budgets) an entry
        not evaluated is bounded from its evaluated neighbours (:func:`_chord_envelope`), not by the monotone envelope:
        there the blocks' gaps take the place of their shares in that test."""
        nb, na = lw_up.size, self.alpha.size
        # (shares near the float maximum sum to inf: not small, as they should be)
        with np.errstate(over="ignore", invalid="ignore"):
            share = np.exp(lw_up[:, None] + (e_up[iu] if eu_b is None else eu_b) - budget[None, :])
            share = np.where(counted, np.nan_to_num(share, nan=np.inf, posinf=np.inf), 0.0)
            rank = np.argsort(share, axis=0)
            cum = np.cumsum(np.take_along_axis(share, rank, axis=0), axis=0)
        small = np.zeros((nb, na), dtype=bool)
        np.put_along_axis(small, rank, cum <= _NEGLIGIBLE, axis=0)
        need = ~small & live[None, :]
        filled = False
        todo = np.zeros((self.ent_c.size, na), dtype=bool)
        chord = np.zeros(na, dtype=bool) if gap is None else self._chord_cols & live
        pick = np.zeros((nb, na), dtype=bool)
        if gap is not None and np.any(chord):
            # (at those orders the blocks with a corner not evaluated, largest gaps first, until the others' total is at
            # most 0.3 budgets)
            miss_b = (~self.ent_done[iu] | ~self.ent_done[il])[:, chord] & np.broadcast_to(counted, (nb, na))[:, chord]
            g = np.where(miss_b, np.minimum(gap[:, chord], 1e300), 0.0)
            rank = np.argsort(-g, axis=0)
            gs = np.take_along_axis(g, rank, axis=0)
            take = np.zeros(g.shape, dtype=bool)
            np.put_along_axis(take, rank, (gs > 0.0) & (gs[::-1].cumsum(axis=0)[::-1] > 0.3), axis=0)
            pick[:, chord] = take
        for ix in (iu, il):
            miss = ~self.ent_done[ix] & live[None, :]
            if np.any(miss):
                with np.errstate(over="ignore"):
                    heavy = miss & (np.sum(np.where(miss, share, 0.0), axis=0) > 0.3)[None, :]
                if np.any(chord):
                    heavy[:, chord] = (miss & pick)[:, chord]
                if np.any(heavy):
                    np.logical_or.at(todo, ix, heavy)
        rows = np.flatnonzero(np.any(todo, axis=1))
        if rows.size:
            self._evaluate_entries(rows, todo[rows])
            filled = True
        return need, filled

    def _refine_outer(self, score: np.ndarray, target: float, need: np.ndarray | None = None) -> bool:
        """Split the blocks with the largest scores (each block's gap in units of the divergence's
        budget, the largest over the orders) until the others' total is at most ``target``.

        The gap of a block is about proportional to its width (its mass times the kernel's change
        across it), so ``k`` parts divide it by about ``k``, and ``k_b ~ sqrt(score_b)`` parts
        (``sum_b score_b / k_b`` = the planned total) need the fewest new blocks; the plan is
        ``_SPLIT_SLACK x target`` (measured: fewer entries in all at n = 1e5, 1e6 than planning
        for ``target`` itself or always splitting in four), and ``k`` is clipped to 2 ..
        :data:`_MAX_SPLIT` (larger splits cost more entries at n = 1e3 .. 1e4: the model is crude
        where the kernel changes by large factors within a block), :data:`_HUGE_SPLIT` for blocks scored
        above :data:`_HUGE_SCORE` (far from any plan: more rounds otherwise). Only the partition depends on
        this: every block is bounded by its monotone corners whatever its width."""
        score = np.minimum(score, 1e300)  # the cumulative sum stays finite
        order = np.argsort(score)[::-1]
        cum = np.cumsum(score[order])
        count = int(np.searchsorted(cum, cum[-1] - target)) + 1
        chosen = order[:count]
        chosen = chosen[score[chosen] > 0]
        if chosen.size == 0:
            return False
        root = np.sqrt(score[chosen])
        with np.errstate(over="ignore"):
            k = np.ceil(root * (np.sum(root) / (_SPLIT_SLACK * target)))
        width = self.hi[chosen] - self.lo[chosen] + 1.0
        top_k = np.where(score[chosen] > _HUGE_SCORE, _HUGE_SPLIT, _MAX_SPLIT)
        k = np.clip(np.nan_to_num(k, posinf=_HUGE_SPLIT), 2.0, np.minimum(width, top_k)).astype(np.int64)
        if self.lo.size + int(np.sum(k)) - chosen.size > _MAX_BLOCKS:  # stop: the upper bound stays certified
            return False
        lo, hi = self.lo[chosen], self.hi[chosen]
        rep = np.repeat(np.arange(chosen.size), k)
        part = np.arange(rep.size) - np.repeat(np.cumsum(k) - k, k)
        kk = k[rep].astype(float)
        w = width[rep]
        c_lo = np.floor(lo[rep] + w * (part / kk))
        c_hi = np.where(part == kk - 1, hi[rep], np.floor(lo[rep] + w * ((part + 1) / kk)) - 1.0)
        keep = c_hi >= c_lo
        rest = np.ones(self.lo.size, dtype=bool)
        rest[chosen] = False
        for name in ("lo", "hi", "lw_up", "lw_lo", "iu", "il", "ls_up", "ls_lo"):
            setattr(self, name, getattr(self, name)[rest])
        self._add_blocks(c_lo[keep], c_hi[keep], None if need is None else need[chosen][rep][keep])
        return True

    def _refine_inner(self, live: np.ndarray, ref: np.ndarray, target: float) -> bool:
        # weight of each entry: the largest block mass that uses it
        weight = np.full(self.ent_c.size, -np.inf)
        counted = self.hi >= 1.0
        lw = np.where(counted, self.lw_up, -np.inf)
        np.maximum.at(weight, self.iu, lw)
        np.maximum.at(weight, self.il, lw)
        wl = weight[self.cell_ent][:, None]
        with np.errstate(invalid="ignore", over="ignore"):
            gap = np.exp(wl + self.cell_up[:, live] - ref) - np.exp(wl + self.cell_lo[:, live] - ref)
        # a gap beyond the double range (inf, or inf - inf) is as large as gaps get: split it
        # first (scored 0, such a cell was never split and the bound stalled ~1e4 x too wide,
        # e.g. orders [1024] alone at eps0 = 1, n = 1e7)
        gap = np.maximum(np.nan_to_num(gap, nan=1e300, posinf=1e300, neginf=0.0), 0.0)
        e1, e2 = self.cell_e[:, 0], self.cell_e[:, 1]
        score = np.minimum(np.where(e2 - e1 > 1.0, np.max(gap, axis=1), 0.0), 1e300)
        if not np.any(score > 0):
            return False
        order = np.argsort(score)[::-1]
        cum = np.cumsum(score[order])
        count = int(np.searchsorted(cum, cum[-1] - target)) + 1
        chosen = order[:count]
        chosen = chosen[score[chosen] > 0]
        if chosen.size == 0 or self.cell_ent.size + _CELL_STEPS.size * chosen.size > _MAX_CELLS:
            return False  # stop: the upper bound stays certified
        a, b = e1[chosen], e2[chosen]
        ent = self.cell_ent[chosen]
        c = self.ent_c[ent]
        m1 = c + 1.0
        mean = m1 * self.s
        sd = np.sqrt(np.maximum(m1 * self.s * (1.0 - self.s), 1.0))
        w = b - a
        # (quarters padded with repeats: the empty parts are dropped below)
        quart = a[:, None] + w[:, None] * (np.minimum(np.arange(1, _CELL_STEPS.size + 1), 3)[None, :] / 4.0)
        # the far steps only for cells whose gap is far beyond the budget (their tilted sums lie
        # tens of sd out); others 2, 4, 8 sd (repeats make empty parts, dropped below)
        far_cut = ((score[chosen] > _FAR_CELL_SCORE) & self.envelope)[:, None]
        steps = np.where(far_cut, _CELL_STEPS[None, :], np.minimum(_CELL_STEPS, 8.0)[None, :]) * sd[:, None]
        # wide tail cells: geometric cuts from the end nearer the mean (as the z-grid did)
        cuts = np.where((w > 16.0 * sd)[:, None] & (b <= mean)[:, None], b[:, None] - steps,
                        np.where((w > 16.0 * sd)[:, None] & (a >= mean)[:, None], a[:, None] + steps, quart))
        cuts = np.floor(cuts)
        cuts = np.clip(cuts, a[:, None], b[:, None])
        pts = np.sort(np.concatenate((a[:, None], cuts, b[:, None]), axis=1), axis=1)
        lo_e, hi_e = pts[:, :-1].ravel(), pts[:, 1:].ravel()
        rid = np.repeat(ent, _CELL_STEPS.size + 1)
        keep = hi_e > lo_e
        rest = np.ones(self.cell_ent.size, dtype=bool)
        rest[chosen] = False
        self.cell_ent, self.cell_e = self.cell_ent[rest], self.cell_e[rest]
        self.cell_up, self.cell_lo = self.cell_up[rest], self.cell_lo[rest]
        self._add_cells(rid[keep], np.stack((lo_e[keep], hi_e[keep]), 1))
        return True


def _to_divergence(log_excess: np.ndarray, alpha: np.ndarray, up: bool) -> np.ndarray:
    """``log(1 + exp(log_excess)) / (alpha - 1)``, rounded outwards."""
    with np.errstate(over="ignore", invalid="ignore"):  # the unselected branch may be nan
        ls = np.where(log_excess > 30.0, log_excess + np.log1p(np.exp(-np.minimum(log_excess, 700.0))),
                      np.log1p(np.exp(np.minimum(log_excess, 30.0))))
    d = ls / (alpha - 1.0)
    return d * (1.0 + 16 * _U) if up else np.maximum(d * (1.0 - 16 * _U), 0.0)


def _exact_rates(pair: ClonePair) -> tuple[Fraction, Fraction]:
    """The pair's clone rates ``(r0, r1)`` in exact arithmetic: ``p s`` and ``p (1 - s)`` with ``p = min(r0 + r1, 1)``
    and ``s = r0 / (r0 + r1)`` of its float ``r0``, ``r1`` (``ClonePair.clone_probability`` and ``split`` without their
    rounding; for ``r0 + r1 <= 1``, ``r0`` and ``r1`` themselves)."""
    r0, r1 = Fraction(pair.r0), Fraction(pair.r1)
    total = r0 + r1
    if total == 0:
        return Fraction(0), Fraction(0)
    p = min(total, Fraction(1))
    return p * r0 / total, p * r1 / total


def _engine_rates(pair: ClonePair) -> tuple[Fraction, Fraction]:
    """The clone rates of the pair the engine bounds: every binomial of clone counts and of the split (Boost's masses,
    Chernoff's bounds, tilted sums, the kernels' ``Bin(c, s)``, here and in :class:`.clones.TotalsGeometry`) takes the
    floats ``p = pair.clone_probability`` and ``s = pair.split`` as exact, so the divergences certified are those of
    the pair with rates ``p s`` and ``p (1 - s)`` (exact products of the floats)."""
    p, s = Fraction(pair.clone_probability), Fraction(pair.split)
    return p * s, p * (1 - s)


#: Steps of one ulp tried by :func:`_rate_rounded_pair` (at most a few are needed: each float operation rounds by
#: half an ulp).
_RATE_STEPS = 64


def _rate_rounded_pair(pair: ClonePair, side: int) -> ClonePair | None:
    """A pair whose engine rates (:func:`_engine_rates`) bound the exact rates (:func:`_exact_rates`) of ``pair``
    componentwise: at most them for ``side = +1`` (its divergences bound the pair's from above), at least them for
    ``side = -1`` (from below); ``pair`` itself where its rates are exact (every ``r0 = r1`` pair: ``p = 2 r`` and
    ``s = 1/2`` are exact), ``None`` where none is found (e.g. ``side = -1`` with ``r0 + r1 >= 1`` and a split that
    is not a float).

    Why (*derived*): ``p = fl(r0 + r1)`` and ``s = fl(r0 / p)`` are rounded, and the clone count's masses
    ``Bin(N, p)`` move by up to ``N |log(p'/p)|`` (and the kernels' ``Bin(c, s)`` by ``c |log(s'/s)|``) in the log
    for a relative change of ``p`` (``s``): ``~N u``, 1e-7 at ``N = 1e9``, first order, in either direction. It is
    not charged anywhere else (Boost's budget is for its float arguments).

    Lemma (``p0 = 0``): the divergences (hockey-stick and Rényi, both directions) of the clone pair are
    non-increasing in each of ``r0``, ``r1`` (on ``r0 + r1 <= 1``). Proof: with ``p0 = 0`` the first user is always
    counted, so ``C = a + b - 1`` is observed and ``N - C`` users are neither clone. Given ``(a, b)``, let each of
    these become a clone of the first kind with probability ``x = (r0' - r0)/(1 - r0 - r1)``, of the second with
    ``y = (r1' - r1)/(1 - r0 - r1)`` (``x + y <= 1`` iff ``r0' + r1' <= 1``), adding ``(1, 0)`` or ``(0, 1)``: the
    same randomisation under ``P`` and ``Q``, and its output is the pair with rates ``(r0', r1') >= (r0, r1)``
    (each other user independently: a clone of the first kind with probability ``r0 + (1 - r0 - r1) x = r0'``, of
    the second ``r1'``). Data processing (FMT21 Lemma F.2's argument; Mironov 2017 Proposition 1 for Rényi).
    Hence an upper bound for the engine pair of ``side = +1`` is one for ``pair``, and a lower bound for that of
    ``side = -1`` is one for ``pair``.

    Search: ``r0``, ``r1`` are moved by an ulp at a time (down for ``+1``, up for ``-1``) while the engine rate on
    that side is beyond the exact one, checked in rational arithmetic; for ``+1`` then the pair without either
    rate (its engine rates ``(r0, 0)`` or ``(0, r1)`` are exact when ``r0, r1 <= 1``)."""
    if side not in (1, -1):
        raise ValueError("side must be +1 or -1")
    x0, x1 = _exact_rates(pair)
    r0, r1 = pair.r0, pair.r1
    toward = 0.0 if side > 0 else 2.0
    q = pair
    for _ in range(_RATE_STEPS):
        e0, e1 = _engine_rates(q)
        bad0 = e0 > x0 if side > 0 else e0 < x0
        bad1 = e1 > x1 if side > 0 else e1 < x1
        if not (bad0 or bad1):
            return q
        if bad0:
            r0 = math.nextafter(r0, toward)
        if bad1:
            r1 = math.nextafter(r1, toward)
        try:
            q = replace(pair, r0=r0, r1=r1)
        except InvalidParameter:
            break
    if side > 0:
        # (a rate far below an ulp of the other, whose cancelled 1 - s the steps cannot reach, e.g. r0 = 1 - 2^-53,
        # r1 = 0.6 2^-53: p rounds to 1 and p (1 - s) = 2^-53: without it, the rates (r0, 0) and (0, r1) are exact)
        for q in (replace(pair, r1=0.0), replace(pair, r0=0.0)):
            e0, e1 = _engine_rates(q)
            if e0 <= x0 and e1 <= x1:
                return q
    return None


def _direction_bounds(p: ClonePair, alpha: np.ndarray, rtol: float, scale: float
                      ) -> tuple[np.ndarray, np.ndarray, bool, int, int, bool]:
    """``(log upper, log lower)`` of ``S - 1`` of one direction of ``p`` (taken as exact), converged, blocks, groups,
    floor-limited."""
    d = RenyiDirection(p)
    lu, ll, ok, b, g = d.bounds(alpha, rtol, scale=scale)
    floor = bool(np.any(d.floor_stop))
    if not ok and d.envelope and not np.any(d.floor_stop) and not d.idle_stop:
        # stopped at a work limit: the per-order partition can end looser than evaluating every
        # entry at every order would (clones n = 1e7, eps0 = 8: alpha = 80 upper 2.4e-3 above);
        # both brackets are certified, so their intersection is (not after rounds that no longer
        # narrowed the bracket: evaluating every entry does not lift what stalled them)
        full = RenyiDirection(p)
        full.envelope = False
        lu2, ll2, ok2, b2, g2 = full.bounds(alpha, rtol, scale=scale)
        lu, ll, ok, b, g = np.minimum(lu, lu2), np.maximum(ll, ll2), ok2, max(b, b2), max(g, g2)
    return lu, ll, ok, b, g, floor


def renyi_bounds(
    pair: ClonePair,
    orders: object = DEFAULT_ORDERS,
    rtol: float = 1e-4,
    scale: float = 1.0,
    directions: str = "both",
) -> RenyiBounds:
    """Certified bracket on the Rényi divergence of a clone pair at each order.

    ``directions``: ``"both"`` (the RDP value, max of ``P||Q`` and ``Q||P``), ``"pq"`` or
    ``"qp"``. ``scale``: the pair is mixed with an identical branch (``ScaledPair``), so
    ``S - 1`` is multiplied by ``scale``. ``rtol`` is the target relative gap of
    ``D_alpha``; the upper bound is certified whatever it is.
    """
    alpha = check_orders(orders)
    if not 0.0 < rtol < 1.0:
        raise InvalidParameter(f"rtol must be in (0, 1), got {rtol!r}")
    if not 0.0 <= scale <= 1.0:
        raise InvalidParameter(f"scale must be in [0, 1], got {scale!r}")
    cap = pair.max_log_ratio
    if cap == 0.0 or scale == 0.0:
        zero = tuple(0.0 for _ in alpha)
        return RenyiBounds(tuple(alpha.tolist()), zero, zero, True, 0, 0)
    if math.isinf(cap):
        inf = tuple(math.inf for _ in alpha)
        return RenyiBounds(tuple(alpha.tolist()), inf, inf, True, 0, 0)
    if directions == "both":
        pairs = [pair] if pair.symmetric else [pair, pair.mirrored()]
    elif directions in ("pq", "qp"):
        pairs = [pair if directions == "pq" else pair.mirrored()]
    else:
        raise InvalidParameter(f"directions must be 'both', 'pq' or 'qp', got {directions!r}")
    ups, los, conv, nb, ng = [], [], True, 0, 0
    floor = False
    ls = math.log(scale)
    for p in pairs:
        # the pair the engine bounds has the float p, s as exact rates: bound one above / below the exact pair
        # (:func:`_rate_rounded_pair`; the pair itself when its rates are exact, e.g. every r0 = r1 pair); p0 > 0
        # (no such lemma): exact rates only, else the trivial bracket [0, log L] (no method builds such a pair: the ones
        # with p0 > 0 have r0 = r1)
        if p.p0 == 0.0:
            p_up, p_lo = _rate_rounded_pair(p, 1), _rate_rounded_pair(p, -1)
        else:
            p_up = p_lo = p if _engine_rates(p) == _exact_rates(p) else None
        if p_up is not None:
            lu, ll, ok, b, g, fl = _direction_bounds(p_up, alpha, rtol, scale)
            conv, nb, ng, floor = conv and ok, max(nb, b), max(ng, g), floor or fl
        else:
            lu, ll, conv = np.full(alpha.size, np.inf), np.full(alpha.size, -np.inf), False
        if p_lo != p_up:
            # (p_lo is None: no float pair dominates the exact rates, e.g. binary-rr-lower with r0 + r1 >= 1 exactly
            # and a split that is not a float; its lower ends stay those of the pair's own floats, as before: not
            # certified against the rounding of p and s, ~N u relative)
            _, ll, ok, b, g, fl = _direction_bounds(p if p_lo is None else p_lo, alpha, rtol, scale)
            conv, nb, ng, floor = conv and ok, max(nb, b), max(ng, g), floor or fl
        ups.append(_to_divergence(lu + ls, alpha, True))
        los.append(_to_divergence(ll + ls, alpha, False))
    upper = np.minimum(np.max(ups, axis=0), cap * (1.0 + 4 * _U))
    lower = np.minimum(np.max(los, axis=0), upper)
    return RenyiBounds(tuple(alpha.tolist()), tuple(upper.tolist()), tuple(lower.tolist()), conv, nb, ng, floor)

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

Groups are refined until the bracket is tight; single-``a`` groups are exact. Groups whose
binomial mass underflows are bounded with the Chernoff bound
``Pr[Bin(m, s) >= k] <= exp(-m KL(k/m || s))`` times the largest value of ``g`` on the group
(``g`` is convex, so its maximum is at an end). Every likelihood ratio lies in
``[1/L, L]`` (``L = max(pa/pb, pb/pa)``), so ``D_alpha <= log L`` caps the result.

Floating-point errors (Boost's binomial budget from :mod:`.binomial`, rounding of ``g``)
are added to upper bounds and subtracted from lower bounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln, xlog1py, xlogy

from ..errors import InvalidParameter
from . import binomial as bn
from .clones import ClonePair, _Direction

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
#: Orders refined together.
_CHUNK = 5
_DEBUG = False
#: Work limits: beyond them refinement stops and the (certified) upper bound is returned
#: with ``converged = False``.
_MAX_GROUPS = 400
_MAX_BLOCKS = 4000


def check_orders(orders: object) -> np.ndarray:
    """Validate an order list: finite reals ``1 < alpha <= 10^6``, returned sorted and unique."""
    try:
        arr = np.asarray([float(a) for a in orders], dtype=float)  # type: ignore[union-attr]
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
    interval contains the mean. A relative margin covers rounding."""
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
        kl = xlogy(x, x / p) + xlog1py(1.0 - x, -x) - xlog1py(1.0 - x, -p)
        kl = np.where((x > 0) & (x < 1), kl, np.where(x <= 0, -np.log1p(-p), -np.log(p)))
    bound = -m * np.maximum(kl, 0.0)
    out = np.where((lo > mean) | (hi < mean), bound * (1.0 - 1e-12) + 1e-12, 0.0)
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


def _edge_masses(edges: np.ndarray, m: np.ndarray, p: float, rel: float) -> tuple[np.ndarray, np.ndarray]:
    """Masses (and error bounds) of ``Bin(m, p)`` on the consecutive integer intervals
    ``[edges[..., k], edges[..., k+1] - 1]`` (last axis), from one ``cdf`` and one ``sf``
    per edge. Each interval uses the tail that is small on its side of the mean (no
    cancellation against 1)."""
    mm = np.broadcast_to(m[..., None], edges.shape)
    F = bn.cdf(edges - 1.0, mm, p)  # Pr[X <= e - 1]
    S = bn.sf(edges - 1.0, mm, p)  # Pr[X >= e]
    mean = (m * p)[..., None]
    lo_e, hi_e = edges[..., :-1], edges[..., 1:]
    below = hi_e - 1.0 <= mean
    above = lo_e > mean
    f0, f1, s0, s1 = F[..., :-1], F[..., 1:], S[..., :-1], S[..., 1:]
    mass = np.where(below, f1 - f0, np.where(above, s0 - s1, 1.0 - f0 - s1))
    err = np.where(
        below, rel * (f1 + f0) + _U * f1, np.where(above, rel * (s0 + s1) + _U * s0, rel * (f0 + s1) + 2 * _U)
    )
    empty = hi_e <= lo_e
    return np.where(empty, 0.0, np.maximum(mass, 0.0)), np.where(empty, 0.0, err)


@dataclass
class _G:
    """``g`` (see module docstring) and its error bound at points ``y = x - s``, for all
    orders (last axis)."""

    value: np.ndarray
    err: np.ndarray
    ell: np.ndarray  # log of p^alpha q^(1-alpha)
    log_up: np.ndarray  # upper bound on log g
    log_lo: np.ndarray  # lower bound on log g


def _g(y: np.ndarray, bp: np.ndarray, bq: np.ndarray, alpha: np.ndarray, err_y: np.ndarray) -> _G:
    y = y[..., None]
    bp, bq, err_y = bp[..., None], bq[..., None], err_y[..., None]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        lp, lq = np.log1p(bp * y), np.log1p(bq * y)
        ell = alpha * lp + (1.0 - alpha) * lq
        em = np.expm1(np.minimum(ell, _BIG_LOG))
        d = alpha * bp + (1.0 - alpha) * bq
        dy = d * y
        g = em - dy
        f = em + 1.0
        gprime = np.abs(f * (alpha * bp / (1.0 + bp * y) + (1.0 - alpha) * bq / (1.0 + bq * y)) - d)
        err_ell = 2 * _U * (alpha * np.abs(lp) + (alpha - 1.0) * np.abs(lq) + np.abs(ell))
        err = 4.0 * (f * err_ell + 2 * _U * (np.abs(em) + np.abs(dy)) + (gprime + _U * np.abs(d)) * err_y)
        big = ell > _BIG_LOG
        corr = np.log1p(np.exp(-np.where(big, ell, _BIG_LOG)) * (1.0 + np.abs(dy)))
        margin = 1e-12 * (1.0 + np.abs(ell))
        log_up = np.where(big, ell + margin + corr, _safe_log(np.maximum(g, 0.0) + err))
        log_lo = np.where(big, ell - margin - corr, _safe_log(g - err))
    return _G(np.maximum(g, 0.0), err, ell, log_up, log_lo)


# ---------------------------------------------------------------------------------------
# The kernel K(c, u, v) - 1 for a batch of (c, u, v), all orders at once.
# ---------------------------------------------------------------------------------------


class _Kernel:
    """``log(K - 1)`` brackets for a batch of kernels at fixed split ``s``, grouped by the
    edges ``edges`` (shape ``(entries, groups + 1)``, first column 0, last ``c + 2``)."""

    def __init__(self, c: np.ndarray, u: np.ndarray, v: np.ndarray, s: float, edges: np.ndarray, rel: float):
        self.c, self.s = c, s
        ss = s * (1.0 - s)
        self.bp, self.bq = (u - s) / ss, (v - s) / ss
        m1 = c + 1.0
        self.mass, self.mass_err = _edge_masses(edges, m1, s, rel)  # X ~ Bin(c+1, s)
        self.a1, self.a2 = edges[:, :-1], edges[:, 1:] - 1.0
        self.empty = self.a2 < self.a1
        self.unit = self.a1 == self.a2
        mc = m1[:, None]
        # First moment inside each group, without cancellation: with Y ~ Bin(c, s),
        # X = Y + Bern(s) and a M(a) = (c+1) s B(a-1), one finds
        #   sum_{a1..a2} (a - a1) M(a) = Pr[Y in [a1, a2]] (s(c+1) - a1) + s (c+1-a1) (B(a1-1) - B(a2)),
        # two terms of the size of the result times |a - mean| / width, each accurate to
        # Boost's relative budget (a difference of cdfs would lose ~ log10(c) digits).
        py, py_err = _edge_masses(edges, c, s, rel)
        b_e = bn.pmf(edges - 1.0, np.broadcast_to(c[:, None], edges.shape), s)
        b_lo, b_hi = b_e[:, :-1], b_e[:, 1:]
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
        log_ch = _log_chernoff(self.a1, self.a2, np.broadcast_to(mc, self.a1.shape), s)
        pmf_lo, pmf_up = _log_pmf_bracket(self.a1, np.broadcast_to(mc, self.a1.shape), s)
        self.logm_up = np.where(
            self.tiny, np.where(self.unit, np.minimum(log_ch, pmf_up), log_ch), _safe_log(self.mass + self.mass_err)
        )
        self.logm_lo = np.where(
            self.tiny, np.where(self.unit, pmf_lo, -np.inf), _safe_log(self.mass - self.mass_err)
        )
        self.logm_up = np.where(self.empty, -np.inf, self.logm_up)
        self.logm_lo = np.where(self.empty, -np.inf, self.logm_lo)

    def evaluate(self, alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-group ``(log upper, log lower)`` of ``sum_{a in group} M(a) g(a/(c+1))``,
        shape ``(entries, groups, orders)``."""
        bp, bq = self.bp[:, None], self.bq[:, None]
        bp, bq = np.broadcast_to(bp, self.y1.shape), np.broadcast_to(bq, self.y1.shape)
        g1 = _g(self.y1, bp, bq, alpha, self.err_y)
        g2 = _g(self.y2, bp, bq, alpha, self.err_y)
        mass = self.mass[..., None]
        m_up = mass + self.mass_err[..., None]
        width = (self.x2 - self.x1)[..., None]
        dd, dd_err = self.dd[..., None], self.dd_err[..., None]
        rising = g2.value >= g1.value
        with np.errstate(divide="ignore", invalid="ignore"):
            w2 = np.where(rising, dd + dd_err, dd - dd_err) / np.where(width > 0, width, 1.0)
        w2 = np.clip(np.where(self.unit[..., None], 0.0, w2), 0.0, m_up)
        eg = np.maximum(g1.err, g2.err)
        chord = (m_up * (g1.value + eg) + w2 * (g2.value - g1.value)) * (1.0 + 8 * _U)
        # Jensen lower bound at the conditional mean of x in the group.
        with np.errstate(divide="ignore", invalid="ignore"):
            safe_m = np.where(self.mass > 0, self.mass, 1.0)
            xbar = self.x1 + np.where(self.mass > 0, self.dd / safe_m, 0.0)
            xbar_err = (self.dd_err + self.dd * self.mass_err / safe_m) / safe_m + _U * xbar
        xbar = np.where(self.unit, self.x1, np.clip(xbar, self.x1, self.x2))
        ybar = np.where(self.unit, self.y1, xbar - self.s)
        ybar_err = np.where(self.unit, self.err_y, np.minimum(xbar_err, self.x2 - self.x1) + self.err_y)
        gb = _g(ybar, bp, bq, alpha, ybar_err)
        m_lo = np.maximum(mass - self.mass_err[..., None], 0.0)
        jensen = m_lo * np.maximum(gb.value - gb.err, 0.0) * (1.0 - 8 * _U)
        crude = self.tiny[..., None] | (np.maximum(g1.ell, g2.ell) > _BIG_LOG)
        log_up = np.where(
            crude, self.logm_up[..., None] + np.maximum(g1.log_up, g2.log_up), _safe_log(chord)
        )
        crude_lo = np.where(self.unit[..., None], self.logm_lo[..., None] + g1.log_lo, -np.inf)
        log_lo = np.where(crude, crude_lo, _safe_log(jensen))
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


# ---------------------------------------------------------------------------------------
# One direction: blocks over totals t (outer) x groups over a (inner), refined jointly.
# ---------------------------------------------------------------------------------------

_Z0 = np.concatenate(([-np.inf, -12.0], np.linspace(-8.0, 8.0, 33), [12.0, np.inf]))


class RenyiDirection:
    """Certified ``S_alpha(P||Q) - 1`` (in logs) of one direction of a clone pair, for many
    orders at once; the refinement is shared by the orders."""

    def __init__(self, pair: ClonePair) -> None:
        self.pair = pair
        self.dir = _Direction(pair)  # lam, block_mass, initial block edges
        self.pa1, self.pb1 = pair.pa / (pair.pa + pair.pb), pair.pb / (pair.pa + pair.pb)
        self.s = pair.split
        self.p = pair.clone_probability
        self.N = pair.n - 1
        self.rel = bn.relative_error_budget(max(pair.n, 1))
        self.edges = self.dir._initial_edges()
        self.z = _Z0.copy()

    # -- inner ----------------------------------------------------------------------
    def _inner(self, c: np.ndarray, lam: np.ndarray, alpha: np.ndarray):
        """``(log upper, log lower)`` of ``K - 1`` per entry and order, plus the per-group
        arrays of the grouped entries (for refinement)."""
        # first user of the kernel pair (clones.py module docstring): u = lam pa' + (1-lam) s
        u = lam * self.pa1 + (1.0 - lam) * self.s
        v = lam * self.pb1 + (1.0 - lam) * self.s
        out_up = np.full((c.size, alpha.size), -np.inf)
        out_lo = np.full((c.size, alpha.size), -np.inf)
        groups = None
        if not 0.0 < self.s < 1.0:
            up, lo = _bernoulli_excess(u, v, alpha)
            return up, lo, None
        small = c + 2.0 <= _SMALL_C + 2
        if np.any(small):
            cs = c[small]
            edges = np.minimum(np.arange(_SMALL_C + 3, dtype=float)[None, :], (cs + 2.0)[:, None])
            k = _Kernel(cs, u[small], v[small], self.s, edges, self.rel)
            gu, gl = k.evaluate(alpha)
            out_up[small] = _logsumexp(gu, axis=1) + math.log1p(64 * _U)
            out_lo[small] = _logsumexp(gl, axis=1) + math.log1p(-64 * _U)
        large = ~small
        if np.any(large):
            cl = c[large]
            m1 = cl + 1.0
            mean = m1 * self.s
            sd = np.sqrt(np.maximum(m1 * self.s * (1.0 - self.s), 1.0))
            with np.errstate(invalid="ignore"):
                e = np.floor(mean[:, None] + self.z[None, :] * sd[:, None])
            e = np.where(np.isneginf(self.z)[None, :], 0.0, e)
            e = np.where(np.isposinf(self.z)[None, :], (cl + 2.0)[:, None], e)
            e = np.clip(e, 0.0, (cl + 2.0)[:, None])
            k = _Kernel(cl, u[large], v[large], self.s, e, self.rel)
            gu, gl = k.evaluate(alpha)
            n_g = gu.shape[1]
            out_up[large] = _logsumexp(gu, axis=1) + math.log1p(4 * n_g * _U)
            out_lo[large] = _logsumexp(gl, axis=1) + math.log1p(-4 * n_g * _U)
            groups = (large, gu, gl, k.a2 > k.a1)
        return out_up, out_lo, groups

    # -- outer ----------------------------------------------------------------------
    def _log_block_mass(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        mass, err = self.dir.block_mass(lo, hi)
        up = _safe_log(mass + err)
        low = _safe_log(mass - err)
        tiny = (mass <= _TINY) & (0.0 < self.p < 1.0)  # degenerate C: Boost's masses are exact
        if np.any(tiny):
            # T in [lo, hi] implies C in [lo - 1, hi] (C = T - 1 when counted, T when silent)
            top = hi[tiny] - (1.0 if self.pair.p0 == 0.0 else 0.0)
            ch = _log_chernoff(lo[tiny] - 1.0, top, np.full(int(tiny.sum()), float(self.N)), self.p)
            up[tiny] = ch
            low[tiny] = -np.inf
        return up, low

    def bounds(self, alpha: np.ndarray, rtol: float, max_rounds: int = 60) -> tuple[np.ndarray, np.ndarray, bool, int, int]:
        """``(log upper, log lower)`` of ``S_alpha - 1`` per order; refined until the relative
        gap of ``S_alpha - 1`` is at most ``rtol`` for every order (or nothing is left to
        refine)."""
        for _ in range(max_rounds):
            edges = self.edges
            lo, hi = edges[:-1], edges[1:] - 1.0
            lw_up, lw_lo = self._log_block_mass(lo, hi)
            counted = hi >= 1.0  # block {t = 0}: nothing counted, identical laws
            c_up = np.maximum(lo, 1.0) - 1.0
            c_lo = np.maximum(hi, 1.0) - 1.0
            lam_up = self.dir.lam(hi)
            lam_lo = self.dir.lam(np.maximum(lo, 1.0))
            keys = np.concatenate((np.stack((c_up, lam_up), 1), np.stack((c_lo, lam_lo), 1)))
            uniq, inv = np.unique(keys, axis=0, return_inverse=True)
            inv = inv.ravel()
            e_up, e_lo, groups = self._inner(uniq[:, 0], uniq[:, 1], alpha)
            nb = lo.size
            iu, il = inv[:nb], inv[nb:]
            t_up = np.where(counted[:, None], lw_up[:, None] + e_up[iu], -np.inf)
            t_lo = np.where(counted[:, None], lw_lo[:, None] + e_lo[il], -np.inf)
            tot_up = _logsumexp(t_up, axis=0) + math.log1p(4 * nb * _U)
            tot_lo = _logsumexp(t_lo, axis=0) + math.log1p(-4 * nb * _U)
            with np.errstate(invalid="ignore", over="ignore"):
                rel_gap = np.where(np.isneginf(tot_up), 0.0, -np.expm1(tot_lo - tot_up))
            if np.all(rel_gap <= rtol):
                return tot_up, tot_lo, True, nb, self.z.size - 1
            ref = np.where(np.isneginf(tot_up), 0.0, tot_up)[None, :]
            with np.errstate(invalid="ignore", over="ignore"):
                # outer part: block mass x (inner estimate at the low end - at the high end)
                outer = np.exp(lw_up[:, None] + e_up[iu] - ref) - np.exp(lw_up[:, None] + e_up[il] - ref)
            outer = np.where(counted[:, None] & np.isfinite(outer), np.maximum(outer, 0.0), 0.0)
            outer_total = outer.sum(axis=0)
            inner_total = np.maximum(rel_gap - outer_total, 0.0)
            if _DEBUG:
                print("round", nb, self.z.size - 1, rel_gap.max(), outer_total.max(), inner_total.max())
            refined = False
            if groups is not None and np.max(inner_total) > 0.4 * rtol:
                refined |= self._refine_inner(groups, uniq, inv, nb, lw_up, counted, ref, rtol)
            splittable = hi > lo
            if np.max(outer_total) > 0.4 * rtol and np.any(splittable):
                score = np.max(np.where(splittable[:, None], outer, 0.0), axis=1)
                refined |= self._refine_outer(score, lo, hi, 0.3 * rtol)
            if not refined:
                return tot_up, tot_lo, False, nb, self.z.size - 1
        return tot_up, tot_lo, False, self.edges.size - 1, self.z.size - 1

    def _refine_outer(self, score: np.ndarray, lo: np.ndarray, hi: np.ndarray, target: float) -> bool:
        order = np.argsort(score)[::-1]
        cum = np.cumsum(score[order])
        count = int(np.searchsorted(cum, cum[-1] - target)) + 1
        chosen = order[:count]
        chosen = chosen[score[chosen] > 0]
        if chosen.size == 0:
            return False
        w = (hi[chosen] - lo[chosen] + 1.0)[:, None]
        frac = np.arange(1, 4)[None, :] / 4.0
        new = np.floor(lo[chosen][:, None] + w * frac).ravel()
        if self.edges.size + new.size > _MAX_BLOCKS:  # stop: the upper bound stays certified
            return False
        self.edges = np.unique(np.concatenate((self.edges, new)))
        return True

    def _refine_inner(self, groups, uniq, inv, nb, lw_up, counted, ref, rtol) -> bool:
        large, gu, gl, splittable = groups
        # weight of each unique entry: the largest block mass that uses it
        weight = np.full(uniq.shape[0], -np.inf)
        lw2 = np.concatenate((np.where(counted, lw_up, -np.inf),) * 2)
        np.maximum.at(weight, inv, lw2)
        wl = weight[large][:, None, None]
        with np.errstate(invalid="ignore", over="ignore"):
            gap = np.exp(wl + gu - ref[None]) - np.exp(wl + gl - ref[None])
        gap = np.where(np.isfinite(gap), np.maximum(gap, 0.0), 0.0)
        score = np.max(np.sum(np.where(splittable[..., None], gap, 0.0), axis=0), axis=1)  # per z-group
        if not np.any(score > 0):
            return False
        order = np.argsort(score)[::-1]
        cum = np.cumsum(score[order])
        count = int(np.searchsorted(cum, cum[-1] - 0.3 * rtol)) + 1
        chosen = order[:count]
        chosen = chosen[score[chosen] > 0]
        new = []
        for k in chosen:
            z1, z2 = self.z[k], self.z[k + 1]
            if np.isneginf(z1):
                new += [z2 - 2.0, z2 - 4.0, z2 - 8.0]
            elif np.isposinf(z2):
                new += [z1 + 2.0, z1 + 4.0, z1 + 8.0]
            else:
                new += list(z1 + (z2 - z1) * np.array([0.25, 0.5, 0.75]))
        if not new:
            return False
        if self.z.size + len(new) > _MAX_GROUPS:  # stop: the upper bound stays certified
            return False
        self.z = np.unique(np.concatenate((self.z, new)))
        return True


def _to_divergence(log_excess: np.ndarray, alpha: np.ndarray, up: bool) -> np.ndarray:
    """``log(1 + exp(log_excess)) / (alpha - 1)``, rounded outwards."""
    with np.errstate(over="ignore"):
        ls = np.where(log_excess > 30.0, log_excess + np.log1p(np.exp(-np.minimum(log_excess, 700.0))),
                      np.log1p(np.exp(np.minimum(log_excess, 30.0))))
    d = ls / (alpha - 1.0)
    return d * (1.0 + 16 * _U) if up else np.maximum(d * (1.0 - 16 * _U), 0.0)


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
    ``S_alpha - 1`` (hence of ``D_alpha``); the upper bound is certified whatever it is.
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
    ls = math.log(scale)
    for p in pairs:
        # Orders are refined in chunks: small orders need resolution near the mean of the
        # clone count, large ones far in its tail; sharing one layout would cost both.
        direction = RenyiDirection(p)
        lu, ll = np.empty(alpha.size), np.empty(alpha.size)
        for start in range(0, alpha.size, _CHUNK):
            sl = slice(start, start + _CHUNK)
            direction.z = _Z0.copy()
            lu[sl], ll[sl], ok, b, g = direction.bounds(alpha[sl], rtol)
            conv, nb, ng = conv and ok, max(nb, b), max(ng, g)
        ups.append(_to_divergence(lu + ls, alpha, True))
        los.append(_to_divergence(ll + ls, alpha, False))
    upper = np.minimum(np.max(ups, axis=0), cap * (1.0 + 4 * _U))
    lower = np.minimum(np.max(los, axis=0), upper)
    return RenyiBounds(tuple(alpha.tolist()), tuple(upper.tolist()), tuple(lower.tolist()), conv, nb, ng)

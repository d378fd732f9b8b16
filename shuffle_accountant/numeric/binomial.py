"""Binomial probabilities with safe edges and a stated floating-point error budget.

Uses the Boost-backed ufuncs behind :mod:`scipy.stats.binom` directly (same numbers,
without the ~40 µs per-call overhead of the distribution object). Per
``engineering.md``: tails come from ``sf`` (never ``1 - cdf``) and ``scipy.special.bdtr``
is never used.

Out-of-support arguments are mapped to their exact values (Boost returns NaN there):
``pmf(k) = 0`` for ``k < 0`` or ``k > n``; ``sf(k) = P[X > k]`` is 1 for ``k < 0`` and 0
for ``k >= n``; ``cdf(k)`` is 0 for ``k < 0`` and 1 for ``k >= n``.
"""

from __future__ import annotations

import mpmath
import numpy as np

from . import fp as _fp

try:  # the ufuncs scipy.stats.binom itself calls (Boost.Math)
    from scipy.special._ufuncs import _binom_cdf, _binom_pmf, _binom_sf
except ImportError:  # pragma: no cover - older/newer scipy layouts
    from scipy.stats import binom as _binom

    def _binom_pmf(k, n, p):  # type: ignore[no-redef]
        return _binom.pmf(k, n, p)

    def _binom_sf(k, n, p):  # type: ignore[no-redef]
        return _binom.sf(k, n, p)

    def _binom_cdf(k, n, p):  # type: ignore[no-redef]
        return _binom.cdf(k, n, p)


def relative_error_budget(n: float) -> float:
    """Relative error we charge for one Boost binomial pmf/sf/cdf value at size ``n``.

    Measured against 40-digit mpmath (tests/test_binomial_accuracy.py re-measures it):
    about 6e-14 at n = 1e4, 1e-12 at 1e6, 2e-11 at 1e9 and 2e-10 at 1e12, i.e.
    roughly ``1e-15 * sqrt(n)``. The budget is 10-50x that.
    """
    return _fp.binomial_budget(n)  # measured budget, shared with the plug-ins (numeric/fp.py)


def pmf_error_budget(n: float) -> float:
    """Relative error charged to one Boost binomial pmf value at size ``n`` (measured,
    :func:`.fp.binomial_pmf_budget`)."""
    return _fp.binomial_pmf_budget(n)


#: Boost's cdf/sf take a series path with ``y = 1 - p`` rounded to a double when
#: ``min(k + 1, n - k)`` is below this and ``n < 2^31`` (see :mod:`.fp`).
_SERIES_PATH_TERMS = 40


def tail_error_budget(k: np.ndarray, n: np.ndarray | float, p: float) -> np.ndarray:
    """Relative error charged to each Boost binomial cdf / sf value ``(k, n, p)``,
    elementwise: the pmf budget, plus :func:`.fp.binomial_tail_budget`'s ``2 n u`` only
    where Boost can take its ``y = 1 - p`` series path (``min(k + 1, n - k) < 40``,
    ``n < 2^32``, and ``1 - p`` not exact in double precision: when it is exact, e.g. the
    fair split ``p = 1/2`` of the symmetric clone pairs, ``y`` carries no rounding error)."""
    k = np.asarray(k, dtype=float)
    n_arr = np.broadcast_to(np.asarray(n, dtype=float), k.shape)
    # the pmf budget grows with n: charging every element the budget of the largest n is safe
    base = _fp.binomial_pmf_budget(float(np.max(n_arr))) if n_arr.size else 0.0
    exact_complement = (1.0 - p) + p == 1.0 and (1.0 - (1.0 - p)) == p
    if exact_complement:
        return np.full(k.shape, base)
    on_path = (np.minimum(k + 1.0, n_arr - k) < _SERIES_PATH_TERMS) & (n_arr < 2.0**32)
    return np.where(on_path, base + 2.0 * n_arr * _fp.UNIT_ROUNDOFF, base)


def _masked(fn, k, n, p: float, *, below: float, above: float, n_inclusive: bool) -> np.ndarray:
    """Apply a Boost ufunc where ``k`` is inside the support and the exact edge values
    (``below`` for ``k < 0``, ``above`` past the support) elsewhere."""
    k = np.asarray(k, dtype=float)
    if k.size and np.ndim(n) == 0:  # common case first: one n, every k inside the support
        lo_k, hi_k = float(np.min(k)), float(np.max(k))
        if lo_k >= 0.0 and (hi_k <= n if n_inclusive else hi_k < n):
            try:
                return np.asarray(fn(k, float(n), p), dtype=float)
            except OverflowError:
                pass
    n = np.broadcast_to(np.asarray(n, dtype=float), k.shape)
    out = np.where(k < 0, below, above)
    inside = (k >= 0) & ((k <= n) if n_inclusive else (k < n))
    if inside.all():
        try:
            return np.asarray(fn(k, n, p), dtype=float)
        except OverflowError:
            pass
    if np.any(inside):
        try:
            out[inside] = fn(k[inside], n[inside], p)
        except OverflowError:  # Boost overflows internally at extreme p (e.g. p ~ 1e-304)
            out[inside] = [_mp_value(fn, kk, nn, p) for kk, nn in zip(k[inside], n[inside])]
    return out


def _mp_value(fn, k: float, n: float, p: float) -> float:
    """One binomial pmf / sf / cdf value in 40-digit mpmath, for the rare arguments where
    Boost overflows. Accurate to far better than :func:`relative_error_budget`."""
    with mpmath.workdps(40):
        k_, n_, p_ = mpmath.mpf(k), mpmath.mpf(n), mpmath.mpf(p)
        if fn is _binom_pmf:
            v = mpmath.binomial(n_, k_) * p_**k_ * (1 - p_) ** (n_ - k_)
        else:
            # P[Bin(n, p) <= k] = I_{1-p}(n - k, k + 1), P[Bin(n, p) > k] = I_p(k + 1, n - k)
            if fn is _binom_cdf:
                v = mpmath.betainc(n_ - k_, k_ + 1, 0, 1 - p_, regularized=True)
            else:
                v = mpmath.betainc(k_ + 1, n_ - k_, 0, p_, regularized=True)
        return float(v)


def pmf(k: np.ndarray, n: np.ndarray | float, p: float) -> np.ndarray:
    """``P[Bin(n, p) = k]`` elementwise, exact 0 outside ``0 <= k <= n``."""
    return _masked(_binom_pmf, k, n, p, below=0.0, above=0.0, n_inclusive=True)


def sf(k: np.ndarray, n: np.ndarray | float, p: float) -> np.ndarray:
    """``P[Bin(n, p) > k]`` elementwise."""
    return _masked(_binom_sf, k, n, p, below=1.0, above=0.0, n_inclusive=False)


def cdf(k: np.ndarray, n: np.ndarray | float, p: float) -> np.ndarray:
    """``P[Bin(n, p) <= k]`` elementwise."""
    return _masked(_binom_cdf, k, n, p, below=0.0, above=1.0, n_inclusive=False)


#: Runs of at least this many consecutive points get their pmf by the ratio recurrence of
#: :func:`pmf_points`, in segments of :data:`RUN_SEGMENT` from Boost anchors.
RUN_MIN = 16
RUN_SEGMENT = 64
_RUN_FLOOR = 1e-250


def run_segments(ok: np.ndarray, link: np.ndarray, min_len: int = RUN_MIN,
                 length: int = RUN_SEGMENT) -> tuple[np.ndarray, np.ndarray]:
    """Segments for the recurrences over runs: ``ok[i]`` says element ``i`` may join a run,
    ``link[i]`` that elements ``i`` and ``i + 1`` are consecutive. Maximal runs of at least
    ``min_len`` usable elements are cut into segments of at most ``length``; returns the
    segments' first indices and lengths."""
    m = ok.size
    first = np.ones(m, dtype=bool)
    first[1:] = ~(link & ok[:-1] & ok[1:])
    run_start = np.nonzero(first)[0]
    run_len = np.diff(np.append(run_start, m))
    run_id = np.cumsum(first) - 1
    pos = np.arange(m) - run_start[run_id]
    seg_start = np.nonzero(ok & (run_len[run_id] >= min_len) & (pos % length == 0))[0]
    return seg_start, np.minimum(length, run_len[run_id[seg_start]] - pos[seg_start])


def pmf_points(k: np.ndarray, n: float | np.ndarray, p: float, segment: int = RUN_SEGMENT
               ) -> tuple[np.ndarray, np.ndarray]:
    """``P[Bin(n, p) = k]`` at integer points ``k`` (``n`` one size, or one per point) and the
    relative error bound of each value.

    Points in runs of at least :data:`RUN_MIN` consecutive integers of one size (in the order
    given) are computed by the exact ratio ``B(k+1)/B(k) = (n-k)/(k+1) * p/(1-p)`` from a Boost
    value at the start of every segment of ``segment`` points: each step costs at most ``8u``
    relative (the ratio's four roundings, ``p/(1-p)``'s two, the product's one), so the bound is
    the Boost budget (at the largest size) plus ``8u`` per step from the anchor, widened by
    ``1 + 1e-6`` for second-order terms. Other points (and values near underflow, or after
    one) come from Boost with its budget.
    """
    k = np.asarray(k, dtype=float)
    nn = np.broadcast_to(np.asarray(n, dtype=float), k.shape)
    rel = pmf_error_budget(float(np.max(nn, initial=0.0)))
    out = np.empty(k.shape)
    rel_out = np.full(k.shape, rel)
    todo = np.ones(k.shape, dtype=bool)
    m = k.size
    if m >= RUN_MIN and 0.0 < p < 1.0:
        seg_start, seg_len = run_segments((k >= 0.0) & (k <= nn), (np.diff(k) == 1.0) & (np.diff(nn) == 0.0),
                                          length=segment)
        if seg_start.size:
            vals, rel_v, good = pmf_segments(k[seg_start], nn[seg_start], seg_len, p, segment, rel)
            at = (seg_start[:, None] + np.arange(segment)[None, :])[good]
            out[at] = vals[good]
            rel_out[at] = rel_v[good]
            todo[at] = False
    if np.any(todo):
        out[todo] = pmf(k[todo], nn[todo], p)
    return out, rel_out


def pmf_segments(k0: np.ndarray, n: np.ndarray, length: np.ndarray, p: float, segment: int, rel: float
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The recurrence of :func:`pmf_points` on segments given directly: ``P[Bin(n_i, p) = k0_i + j]`` for
    ``j < length_i <= segment`` (segments inside the support; rows = segments, ``segment`` columns) from a
    Boost value at ``k0_i`` and the exact ratio, with each value's relative bound (``rel``, the Boost budget
    at the largest size, plus ``8u`` per step, times ``1 + 1e-6``), and the mask of the values to keep:
    those in the segment before its first value below :data:`_RUN_FLOOR` (or not finite)."""
    cols = np.arange(segment)[None, :]
    inrow = cols < length[:, None]
    kk = k0[:, None] + cols[:, :-1]  # (exact integers; the ratios outside a segment are replaced by 1)
    nn = n[:, None]
    odds = p / (1.0 - p)
    ratio = np.where(inrow[:, 1:], (nn - kk) / (kk + 1.0) * odds, 1.0)
    anchor = pmf(k0, n, p)
    with np.errstate(under="ignore", over="ignore", invalid="ignore"):
        vals = anchor[:, None] * np.concatenate((np.ones((k0.size, 1)), np.cumprod(ratio, axis=1)), axis=1)
    good = np.cumprod(inrow & (vals > _RUN_FLOOR) & np.isfinite(vals), axis=1).astype(bool)
    rel_v = (rel + 8.0 * _fp.UNIT_ROUNDOFF * cols) * (1.0 + 1e-6) + np.zeros(vals.shape)
    return vals, rel_v, good


def merge_sorted(keys: np.ndarray, new_keys: np.ndarray, pairs: list[tuple[np.ndarray, np.ndarray]]
                 ) -> tuple[np.ndarray, list[np.ndarray]]:
    """Insert ``new_keys`` (sorted, none present in the sorted ``keys``) into ``keys`` and the
    matching ``new`` values into each ``(old, new)`` value array of ``pairs``, in one pass
    (``np.insert`` per array costs a sort each). Returns the merged keys and value arrays."""
    at = np.searchsorted(keys, new_keys) + np.arange(new_keys.size)  # positions in the result
    size = keys.size + new_keys.size
    old_at = np.ones(size, dtype=bool)
    old_at[at] = False
    merged = []
    for old, new in [(keys, new_keys)] + pairs:
        out = np.empty(size, dtype=np.result_type(old, new))
        out[old_at] = old
        out[at] = new
        merged.append(out)
    return merged[0], merged[1:]


class TailMemo:
    """The cdf and sf values of one ``Bin(n, p)`` asked for before, kept by point (sorted
    keys): neighbouring blocks of :func:`interval_mass` share an edge, and a refined block's
    children reuse its edges, so each edge costs one Boost call. A kept value is the very
    number :func:`cdf` / :func:`sf` returned, so results and error budgets are unchanged."""

    def __init__(self, n: float, p: float) -> None:
        self.n, self.p = n, p
        self._keys = {"cdf": np.zeros(0), "sf": np.zeros(0)}
        self._vals = {"cdf": np.zeros(0), "sf": np.zeros(0)}

    def get(self, kind: str, k: np.ndarray) -> np.ndarray:
        """``cdf(k)`` (``kind = "cdf"``) or ``sf(k)`` (``"sf"``) of ``Bin(n, p)``, elementwise."""
        k = np.asarray(k, dtype=float)
        keys, vals = self._keys[kind], self._vals[kind]
        out = np.empty(k.shape)
        if keys.size:
            pos = np.minimum(np.searchsorted(keys, k), keys.size - 1)
            hit = keys[pos] == k
            out[hit] = vals[pos[hit]]
            miss = ~hit
        else:
            miss = np.ones(k.shape, dtype=bool)
        if np.any(miss):
            new, inv = np.unique(k[miss], return_inverse=True)
            got = (cdf if kind == "cdf" else sf)(new, self.n, self.p)
            out[miss] = got[inv]
            self._keys[kind], (self._vals[kind],) = merge_sorted(keys, new, [(vals, got)])
        return out


#: Blocks narrower than this are summed term by term (see :func:`interval_mass`).
NARROW = 64
#: The widest blocks a caller may ask to be summed term by term (``narrow``): a difference of two
#: tails carries an error relative to the tails (about 1/2 near the median), which for a narrow block
#: near the median of a large binomial is hundreds of times its mass (n = 1e9: 3.6e-7 relative for a
#: block of 100 counts, against Boost's pmf budget of 1e-9 for the sum), and the errors of many such
#: blocks add up; a sum of w terms costs w vectorised operations and one pmf call.
NARROW_MAX = 1024
#: Term-by-term sums go in groups of widths below each of these (each group's matrix only as wide
#: as its blocks, at most twice their width beyond 64).
_NARROW_GROUPS = (4, 16, NARROW, 128, 256, 512, NARROW_MAX)


def _narrow_mass(a: np.ndarray, b: np.ndarray, n: int, p: float) -> np.ndarray:
    """``P[a <= Bin(n, p) <= b]`` for blocks of fewer than :data:`NARROW_MAX` points (``0 <= a``,
    ``b <= n``, ``0 < p < 1``), by the exact pmf ratio recurrence from one Boost value."""
    steps = np.arange(int(np.max(b - a)))[None, :]  # the widest block's steps (< NARROW_MAX)
    below = (b <= np.floor((n + 1) * p))[:, None]  # pmf increasing across the whole block
    # Walk away from the block's largest term so every ratio is <= 1 (no overflow): below
    # the mode downward from b with B(j-1)/B(j) = j(1-p)/((n-j+1)p), otherwise upward from
    # a with B(j+1)/B(j) = (n-j)/(j+1) p/(1-p).
    j = np.where(below, b[:, None] - steps, a[:, None] + steps)
    inside = np.where(below, j > a[:, None], j < b[:, None])
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # masked-out entries only
        step = np.where(below, j * (1.0 - p) / ((n - j + 1.0) * p), (n - j) / (j + 1.0) * (p / (1.0 - p)))
    ratio = np.where(inside, step, 0.0)
    terms = np.concatenate((np.ones((len(a), 1)), np.cumprod(ratio, axis=1)), axis=1)
    return pmf(np.where(below[:, 0], b, a), n, p) * terms.sum(axis=1)


def interval_mass(lo: np.ndarray, hi: np.ndarray, n: int, p: float,
                  memo: TailMemo | None = None, narrow: int = NARROW) -> tuple[np.ndarray, np.ndarray]:
    """``P[lo <= Bin(n, p) <= hi]`` for arrays of integer intervals, and an absolute
    error bound for each value.

    Cancellation is avoided by differencing the tail that is small on that side of
    the median (lower tails with ``cdf``, upper tails with ``sf``); single points use
    the pmf directly, and blocks of fewer than ``narrow`` points (at most :data:`NARROW_MAX`)
    sum their pmf by the exact ratio recurrence (an error relative to the block's own mass).
    ``memo`` (a :class:`TailMemo` of the same ``Bin(n, p)``) keeps the tail values of edges
    seen before (same numbers, fewer Boost calls).
    """
    if memo is not None:
        assert memo.n == n and memo.p == p
        cdf_, sf_ = (lambda k, n_, p_: memo.get("cdf", k)), (lambda k, n_, p_: memo.get("sf", k))
    else:
        cdf_, sf_ = cdf, sf
    lo = np.asarray(lo, dtype=float)
    hi = np.asarray(hi, dtype=float)
    rel = pmf_error_budget(n)
    median = n * p
    mass = np.zeros(lo.shape)
    err = np.zeros(lo.shape)
    point = lo == hi
    short = ~point & (hi - lo < min(int(narrow), NARROW_MAX)) & (lo >= 0) & (hi <= n) & (0.0 < p < 1.0)
    low_side = ~point & ~short & (hi <= median)
    high_side = ~point & ~short & (lo > median)
    middle = ~point & ~short & ~low_side & ~high_side
    if np.any(point):
        v, rel_v = pmf_points(lo[point], n, p)
        mass[point] = v
        err[point] = rel_v * v
    if np.any(short):
        # sum the pmf by the exact ratio recurrence: error relative to the block's own mass,
        # where a difference of two cdf values would carry an error relative to the cdf;
        # blocks grouped by width so that each group's matrix is only as wide as its blocks
        where = np.nonzero(short)[0]
        steps_needed = hi[where] - lo[where]
        floor = 0
        for top in _NARROW_GROUPS:
            sel = where[(steps_needed < top) & (steps_needed >= floor)]
            floor = top
            if sel.size:
                v = _narrow_mass(lo[sel], hi[sel], n, p)
                mass[sel] = v
                # Boost's budget for the anchor, ~5 roundings per ratio step (cumulative, so a term
                # j steps away carries 5 j u), the sum's w roundings: rel + 6 u w, charged as 7e-16
                # (w + 1); (+1e-300: a block whose first pmf underflowed is charged its tiny mass)
                err[sel] = (rel + 7e-16 * (hi[sel] - lo[sel] + 2.0)) * v + np.where(v == 0.0, 1e-300, 0.0)
    wide = np.nonzero(low_side | high_side | middle)[0]
    if wide.size:
        # the two tails of every wide block in one cdf and one sf request (shared edges asked
        # once): low side cdf(hi) - cdf(lo-1), high side sf(lo-1) - sf(hi), middle
        # 1 - cdf(lo-1) - sf(hi)
        low_w, mid_w = low_side[wide], middle[wide]
        lo_w, hi_w = lo[wide], hi[wide]
        ka = np.where(low_w, hi_w, lo_w - 1)
        kb = np.where(low_w, lo_w - 1, hi_w)
        a_cdf = low_w | mid_w
        na = int(np.count_nonzero(a_cdf))
        ncd = na + int(np.count_nonzero(low_w))
        keys = np.concatenate((ka[a_cdf], kb[low_w], ka[~a_cdf], kb[~low_w]))
        vals = np.concatenate((cdf_(keys[:ncd], n, p), sf_(keys[ncd:], n, p)))
        budget = np.concatenate((tail_error_budget(keys[:ncd], n, p), tail_error_budget(keys[ncd:], n, p)))
        nb = ncd + int(np.count_nonzero(~a_cdf))
        a, b, ta, tb = (np.empty(wide.size) for _ in range(4))
        a[a_cdf], b[low_w], a[~a_cdf], b[~low_w] = vals[:na], vals[na:ncd], vals[ncd:nb], vals[nb:]
        ta[a_cdf], tb[low_w], ta[~a_cdf], tb[~low_w] = budget[:na], budget[na:ncd], budget[ncd:nb], budget[nb:]
        mass[wide] = np.where(mid_w, 1.0 - a - b, a - b)
        err[wide] = ta * a + tb * b + 4e-16 * np.where(mid_w, 1.0, a)
    return np.maximum(mass, 0.0), err

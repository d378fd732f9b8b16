"""Fixed overhead of the term-by-term kernels (renyi._exact_excess and its helpers, slab106; work only): the helpers that
replace numpy calls on few-element arrays, and the shortcuts in _exact_chunk / _window_tail, must give the same values
bit for bit as the code they replace. Tested here against the numpy functions themselves and against the slower paths
that are still in the code; the whole-curve comparison with the code before (192 curves, ==) is in docs/renyi_compose.md."""

from __future__ import annotations

import numpy as np
import pytest

from shuffle_accountant.numeric import renyi as R


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def test_stack0_is_np_stack():
    """_stack0 gives np.stack's array (axis 0) for float arrays of one shape, views and non-finite values included."""
    rng = np.random.default_rng(106)
    for shape in ((1,), (3,), (30, 1), (5, 4), (2, 3, 7)):
        xs = [rng.standard_normal(shape) for _ in range(3)]
        xs[0].flat[0] = np.nan
        xs[1].flat[-1] = -np.inf
        for k in (1, 2, 3):
            assert _same(R._stack0(*xs[:k]), np.stack(xs[:k]))
    base = rng.standard_normal((6, 9))
    views = (base[:, ::2], base[1:, 1::2][:, :5])
    assert _same(R._stack0(base[:, :5], views[0]), np.stack((base[:, :5], views[0])))
    assert _same(R._stack0(views[1], views[1]), np.stack((views[1], views[1])))


@pytest.mark.parametrize("kw", [dict(nan=np.inf, posinf=np.inf), dict(nan=0.0), dict(nan=0.0, neginf=0.0), dict(nan=-np.inf, posinf=1e300)])
def test_nan_to_num_matches_numpy(kw):
    """_nan_to_num has np.nan_to_num's values, with and without elements to replace (and is its argument when there is
    none)."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 6)) * 1e300
    out = R._nan_to_num(x, **kw)
    assert out is x and _same(out, np.nan_to_num(x, **kw))
    for special in (np.nan, np.inf, -np.inf):
        y = x.copy()
        y[1, 2] = special
        y[3, 0] = -special
        assert _same(R._nan_to_num(y, **kw), np.nan_to_num(y, **kw))


def _first_user_cases():
    rng = np.random.default_rng(11)
    s = 0.5
    for u, v in ((0.95257413, 0.04742587), (0.99752738, 0.00247262), (0.7, 0.2), (0.999664, 0.000335)):
        m = float(rng.integers(50, 5000))
        a = np.sort(rng.integers(0, int(m) + 1, (3, 40)).astype(float), axis=1)
        a[0, 0], a[1, -1] = 0.0, m  # the ends of the support (p or q = 0 at an extreme pair)
        mm = np.full((3, 1), m)
        y = (a - s * mm) / mm
        for w in (u, v):
            b = np.full((3, 1), (w - s) / (s * (1 - s)))
            yield b, np.full((3, 1), w), a, mm, y, s


def test_log_first_user_near_mask_and_values_only():
    """_log_first_user: want_near returns the mask b y > -1/2 of the same products with the same values; err_y = None
    (what _window_tail now asks: it used the values only) gives the values of the call with error bounds."""
    count_far = 0
    for b, w, a, mm, y, s in _first_user_cases():
        lg0, none = R._log_first_user(b, w, (a, mm), y, s, None, np.empty(y.shape))
        lg1, near = R._log_first_user(b, w, (a, mm), y, s, None, np.empty(y.shape), True)
        assert none is None and near is not None
        assert _same(lg0, lg1) and np.array_equal(near, b * y > -0.5)
        count_far += int((~near).sum())
        for x in ((a, mm), a / mm):
            lg_err, err = R._log_first_user(b, w, x, y, s)
            lg_val, _ = R._log_first_user(b, w, x, y, s, None)
            assert err is not None and _same(lg_err, lg_val)
    assert count_far > 0  # the far branch (p or q below 1/2) was exercised


@pytest.mark.parametrize("u0, v0", [(0.9525741268224334, 0.04742587317756678), (0.99752738, 0.0), (1.0, 0.00247262)])
def test_exact_chunk_all_rows_term_by_term(u0, v0):
    """_exact_chunk where no row is plain (p or q below 1/2 in every window: the arrays in place, no per-row gathers)
    gives each row the values it gets next to a plain row (the per-row path), for extreme clone pairs (v = 0: q = 0 at
    a = m, an infinite likelihood ratio; u = 1: p = 0 at a = 0): the same infinities, the finite values to a few ulps
    (not bit for bit: the matrix product over the orders is blocked by the number of rows, here 4 against 5; the code
    before gave the same ulp differences between these two calls, and both calls' values are the same bit for bit
    before and after slab106, checked separately)."""
    s = 0.5
    alpha = np.array([2.0, 640.0, 768.0, 1024.0])
    m = np.array([2001.0, 2301.0, 2601.0, 1001.0])
    start = np.array([1101.0, 1401.0, 1701.0, 0.0])  # windows to a = m (x near 1: q small) and from 0 (p small)
    width = 1001
    groups = [(slice(0, 4), 0, width)]
    u, v = np.full(4, u0), np.full(4, v0)
    ss = s * (1 - s)
    last = np.minimum(start + width - 1.0, m)
    z = [np.minimum(b * (start / m - s), b * (last / m - s)) for b in ((u - s) / ss, (v - s) / ss)]
    assert not ((z[0] > -0.5) & (z[1] > -0.5)).any()  # no plain row: the in-place path
    whole = R._exact_chunk(m, start, width, s, u, v, alpha, 1e-12, groups)
    # a fifth row whose window stays near s (plain): the other rows take the per-row path
    m5, st5 = np.append(m, 4001.0), np.append(start, 1600.0)
    mixed = R._exact_chunk(m5, st5, width, s, np.append(u, 0.52), np.append(v, 0.49), alpha, 1e-12, groups)
    for a_, b_ in zip(whole, mixed):
        b4 = b_[:4]
        assert np.array_equal(np.isposinf(a_), np.isposinf(b4)) and np.array_equal(np.isneginf(a_), np.isneginf(b4))
        fin = np.isfinite(a_)
        assert np.array_equal(fin, np.isfinite(b4))
        assert np.allclose(a_[fin], b4[fin], rtol=1e-14, atol=1e-14)
    if v0 == 0.0:
        assert np.isposinf(whole[0][:3]).all()  # q = 0 < p in the window: certified as unbounded

"""Slab moments accumulated as one complex scatter-add (renyi._Slab.__init__, slab105; work only): the first and second
moments Z, S of a slab's cells are the real and imaginary parts of one complex np.add.at instead of two float ones.
Complex addition is componentwise, so this must be bit-identical. Tested: on random data with repeated indices and a
wide dynamic range, and on real slabs (plain and scaled) against the same constructor with every complex np.add.at
replaced by two float ones (the old code's sums)."""

from __future__ import annotations

import math
import types

import numpy as np
import pytest

from shuffle_accountant.analyses import pair_for
from shuffle_accountant.numeric import renyi as R


def test_complex_add_at_is_two_float_add_ats():
    """np.add.at on complex128 adds the real and imaginary parts exactly as two float64 np.add.at calls would (same
    order, same roundings): values spanning 1e-300 .. 1e300 with signs and many repeats per index."""
    rng = np.random.default_rng(105)
    for size, cells in ((1, 1), (1000, 3), (50_000, 257), (200_000, 4096)):
        idx = rng.integers(0, cells, size)
        re = rng.standard_normal(size) * 10.0 ** rng.integers(-300, 300, size)
        im = rng.random(size) * 10.0 ** rng.integers(-20, 20, size)
        buf = np.empty(size, dtype=complex)
        buf.real[:] = re
        buf.imag[:] = im
        acc = np.zeros(cells, dtype=complex)
        np.add.at(acc, idx, buf)
        a, b = np.zeros(cells), np.zeros(cells)
        np.add.at(a, idx, re)
        np.add.at(b, idx, im)
        assert acc.real.tobytes() == a.tobytes()
        assert acc.imag.tobytes() == b.tobytes()


class _SplitAdd:
    """``np.add`` whose ``at`` on a complex array runs two float ``np.add.at`` (the moments' old accumulation)."""

    def __getattr__(self, name):
        return getattr(np.add, name)

    def __call__(self, *args, **kwargs):
        return np.add(*args, **kwargs)

    @staticmethod
    def at(a, idx, vals):
        if np.iscomplexobj(a):
            re, im = a.real.copy(), a.imag.copy()  # (the sums so far: each point is added to them in turn)
            np.add.at(re, idx, np.ascontiguousarray(vals.real))
            np.add.at(im, idx, np.ascontiguousarray(vals.imag))
            a.real[:] = re
            a.imag[:] = im
            return None
        return np.add.at(a, idx, vals)


def _numpy_with_split_add():
    proxy = types.ModuleType("np_split")
    proxy.__dict__.update({k: getattr(np, k) for k in dir(np) if not k.startswith("__")})
    proxy.add = _SplitAdd()
    return proxy


def _slabs(method, eps0, n):
    p = pair_for(method, eps0, n, 3 if method == "krr-lower" else None).pair
    d = R.RenyiDirection(p)
    s = d.s
    mu, sd = d.N * d.p, math.sqrt(d.N * d.p * (1.0 - d.p))
    c1, c2 = max(int(mu - 3.0 * sd), 0), int(mu + 3.0 * sd)
    sx = math.sqrt(s * (1.0 - s) / (c1 + 1.0))
    rects = [(max(s - 4.0 * sx, 0.0), min(s + 4.0 * sx, 1.0)), (max(s - 1.5 * sx, 0.0), 1.0), (0.0, min(s + sx, 1.0))]
    return [(float(d.N), d.p, s, d.rel, np.arange(3), c1, c2, lo, hi, sc) for lo, hi in rects for sc in (False, True)]


@pytest.mark.parametrize("method, eps0, n", [("clones", 3.0, 3000), ("clones", 2.0, 14000), ("stronger-clones", 4.0, 500), ("krr-lower", 1.0, 2000)])
def test_slab_moments_equal_the_float_scatter_adds(method, eps0, n, monkeypatch):
    """Every level's W, Z, S of real slabs (three rectangles of x, plain and scaled) are bit-identical to the same
    constructor's with the complex scatter-add split into two float ones. Fails if Z and S are swapped, if the
    complex buffer's views were copies (the moments would stay 0) or the scatter-add put a moment in the wrong cell. It
    compares the constructor with itself (the products written into the complex buffer are the same in both runs), so
    it cannot see a change in how a point's moments are computed: the bit-identity with the code before b3ea9d7 rests
    on the one-off grids of slab105 and review rev105s (2574 slab arrays, 189 + 15 curves byte for byte)."""
    args = _slabs(method, eps0, n)
    new = [R._Slab(*a) for a in args]
    monkeypatch.setattr(R, "np", _numpy_with_split_add())
    old = [R._Slab(*a) for a in args]
    monkeypatch.undo()
    nonzero = 0
    for x, y in zip(new, old, strict=True):
        for name in ("W", "Z", "S"):
            xs, ys = getattr(x, name), getattr(y, name)
            assert len(xs) == len(ys)
            for u, v in zip(xs, ys, strict=True):
                assert u.tobytes() == v.tobytes(), name
        # and they are the moments: positions t in a cell lie in [-eta, 1 + eta], so Z <= W, S <= Z (to roundings),
        # with Z, S > 0 where a level holds points (fails with Z and S swapped or never written)
        for w, z, q in zip(x.W, x.Z, x.S, strict=True):
            assert np.all(z <= w * (1.0 + 1e-9)) and np.all(q <= z * (1.0 + 1e-9) + 1e-9 * w) and np.all(q >= 0.0)
            assert (z.sum() > 0.0 and q.sum() > 0.0) or w.sum() == 0.0
            nonzero += int(np.count_nonzero(w))
    assert nonzero > 100

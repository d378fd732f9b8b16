"""The term-by-term kernel sums of ``numeric/renyi.py`` (``_exact_excess`` and the chunks it sums): their work-only
machinery (scratch arrays kept between chunks, window choices) must never drop or reuse a term uncharged. Each kernel
bracket is checked against an independent 50-digit sum over every term of the kernel."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from shuffle_accountant.numeric import renyi as R


def _kernel_excess_exact(c: int, u: float, v: float, s: float, alpha: float, dps: int = 50) -> mpmath.mpf:
    """``K(c, u, v) - 1 = sum_a P_c(a)^alpha Q_c(a)^(1-alpha) - 1`` with ``P_c(a) = u B(a-1) + (1-u) B(a)``,
    ``Q_c(a) = v B(a-1) + (1-v) B(a)``, ``B = Bin(c, s)`` (module docstring of ``renyi.py``), every term in mpmath
    from the floats ``u``, ``v``, ``s`` taken as exact (the engine takes them so too)."""
    with mpmath.workdps(dps):
        s_, u_, v_, al = mpmath.mpf(s), mpmath.mpf(u), mpmath.mpf(v), mpmath.mpf(alpha)
        b = [mpmath.binomial(c, a) * s_**a * (1 - s_) ** (c - a) for a in range(c + 1)]
        total = mpmath.mpf(0)
        for a in range(c + 2):
            lo = b[a - 1] if a >= 1 else mpmath.mpf(0)
            hi = b[a] if a <= c else mpmath.mpf(0)
            p = u_ * lo + (1 - u_) * hi
            q = v_ * lo + (1 - v_) * hi
            if p == 0:
                continue
            total += p**al * q ** (1 - al)
        return total - 1


def _pair(eps0: float) -> tuple[float, float, float]:
    """The first user's weights ``u``, ``v`` and the split ``s`` of the clones pair of ``eps0``-randomized response
    (``s = 1/2``: ``u = e^eps0 / (e^eps0 + 1)``, ``v = 1 - u``)."""
    e = math.exp(eps0)
    return e / (e + 1.0), 1.0 / (e + 1.0), 0.5


#: kernels whose windows are narrower than their support (``c + 2`` terms), at orders whose sums lie in the bulk and
#: far off it (eps0 = 2: the large orders' tilted sums near x ~ 0.8, where q is small; eps0 = 4: at the end a = m)
KERNELS = [(2.0, [1200, 1713, 2600]), (4.0, [1500, 2400])]
ORDERS = np.array([1.25, 2.0, 8.0, 64.0, 320.0, 768.0, 1024.0])


@pytest.mark.parametrize("eps0, cs", KERNELS)
def test_exact_excess_brackets_the_50_digit_kernel(eps0: float, cs: list[int]) -> None:
    u, v, s = _pair(eps0)
    c = np.array(cs, dtype=float)
    uu, vv = np.full(c.size, u), np.full(c.size, v)
    tol = 2e-5
    up, lo, done = R._exact_excess(c, uu, vv, s, ORDERS, 1e-13, tol)
    assert np.all(done)
    # the windows really are narrower than the supports (else this tests the full sums only)
    m = c + 1.0
    ss = s * (1.0 - s)
    width = math.sqrt(2.0 * math.log(1.0 / tol)) + R._WINDOW_PAD
    wlo, whi = R._exact_windows(m, s, (uu - s) / ss, (vv - s) / ss, uu, vv, ORDERS, width, tol, float(np.max(m)))
    assert np.all(whi - wlo + 1.0 < m[:, None] / 2)
    for i, ci in enumerate(cs):
        for j, al in enumerate(ORDERS):
            exact = _kernel_excess_exact(ci, u, v, s, float(al))
            with mpmath.workdps(50):
                le = mpmath.log(exact)
            assert lo[i, j] <= le <= up[i, j], (ci, al, lo[i, j], float(le), up[i, j])
            # and tight: the tails beyond the windows are charged at most tol of the sum (plus the rounding)
            assert up[i, j] - lo[i, j] <= 2 * tol + 1e-9 * abs(float(le)), (ci, al)


def test_exact_chunk_scratch_reuse_is_invisible() -> None:
    """The order-free arrays of ``_exact_chunk`` live in per-thread scratch kept between chunks (``_pooled``): a chunk
    summed after a larger and a different one gives the values it gave with fresh arrays (stale contents of the
    scratch never enter a sum)."""
    u, v, s = _pair(2.0)
    alpha = ORDERS

    def chunk(cs: list[float], lo: list[float], width: int) -> tuple[np.ndarray, ...]:
        m = np.array(cs) + 1.0
        start = np.array(lo)
        groups = [(slice(0, 4), 0, width), (slice(4, 7), width // 3, width - width // 3)]
        return R._exact_chunk(m, start, width, s, np.full(m.size, u), np.full(m.size, v), alpha, 1e-13, groups)

    R._SCRATCH.pool = {}  # fresh scratch
    first = chunk([2000.0, 2100.0], [900.0, 950.0], 600)
    chunk([2600.0, 2500.0, 2400.0], [1500.0, 1450.0, 1400.0], 900)  # larger: the scratch grows
    chunk([700.0], [300.0], 200)  # smaller, other values
    again = chunk([2000.0, 2100.0], [900.0, 950.0], 600)
    for x, y in zip(first, again):
        assert np.array_equal(x, y)
    # and each chunk's window bracket holds the 50-digit window sum (p, q exact: x - s with s = 1/2 exact)
    m, a0, w = 2001, 900, 600
    ss = s * (1.0 - s)
    bp, bq = (u - s) / ss, (v - s) / ss
    with mpmath.workdps(50):
        for j, al in enumerate(alpha[:4]):
            tot = mpmath.mpf(0)
            for a in range(a0, a0 + w):
                y = mpmath.mpf(a) / m - mpmath.mpf(s)
                mass = mpmath.binomial(m, a) * mpmath.mpf(s) ** a * (1 - mpmath.mpf(s)) ** (m - a)
                p, q = 1 + mpmath.mpf(bp) * y, 1 + mpmath.mpf(bq) * y
                d = al * mpmath.mpf(bp) + (1 - al) * mpmath.mpf(bq)
                tot += mass * (p**al * q ** (1 - al) - 1 - d * y)
            le = mpmath.log(tot)
            assert first[1][0, j] <= le <= first[0][0, j], (al, first[1][0, j], float(le), first[0][0, j])


@pytest.mark.parametrize("eps0, c, half", [(2.0, 1713, 40.0), (2.0, 2600, 25.0), (4.0, 1500, 30.0)])
def test_narrow_windows_charge_their_tails(eps0: float, c: int, half: float) -> None:
    """Windows far narrower than their sums (about +-1.5 spreads around each order's tilted mode, kept by a tail
    tolerance of 1/2): the terms left out carry a visible share of each sum, and the bracket still holds the 50-digit
    kernel; it would not without the certified tails (the lower end is the window's sum alone)."""
    u, v, s = _pair(eps0)
    m = np.array([c + 1.0])
    uu, vv = np.array([u]), np.array([v])
    ss = s * (1.0 - s)
    bp, bq = (uu - s) / ss, (vv - s) / ss
    lo_t, hi_t = R._tilted_window(m, s, bp, bq, ORDERS, 0.0, float(m[0]))
    centre = np.clip(np.floor(0.5 * (lo_t + hi_t)), half, m[0] - half)
    lo, hi = centre - half, centre + half
    up, low, done = R._exact_group(m, bp, bq, uu, vv, s, ORDERS, 1e-13, 0.5, R._EXACT_WINDOW, lo, hi,
                                   [slice(0, 4), slice(4, 7)])
    assert np.all(done)
    left_out = 0
    for j, al in enumerate(ORDERS):
        exact = _kernel_excess_exact(c, u, v, s, float(al))
        with mpmath.workdps(50):
            le = float(mpmath.log(exact))
        assert low[0, j] <= le <= up[0, j], (al, low[0, j], le, up[0, j])
        left_out += le - low[0, j] > 1e-3  # the window really left out part of the sum (others were widened)
    assert left_out >= 2

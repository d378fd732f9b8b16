"""Review rev108s of slab108 (issue 13): the lower measure of a strided slab is built in the upper measure's pass,
each stored weight times a per-row factor ``f2_j = exp(d_j - D)`` with the scale ``ref2 = ref + D``
(``renyi._Slab._second_factors``). Its rounding charge ``eps2 - eps`` must cover, row by row, how far the float factor
and scale are from the exact ``exp(l2_j - l1_j)`` (``l1``, ``l2`` the rows' log weights, taken as exact): checked here
in 50-digit arithmetic. With that charge dropped (``eps2 = eps``, rev108s's mutant B, which the window tests' 1e-12
slack let pass) the check fails, since the roundings are not all zero."""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest

from shuffle_accountant.numeric import renyi as R


@pytest.mark.parametrize(
    "c1, c2, N, p, stride, x_lo, x_hi",
    [
        (4213, 5392, 99999.0, 0.04978706836786383, 7, 0.461, 0.734),  # eps0 = 3, n = 1e5's slab
        (40, 180, 999.0, 0.1, 9, 0.3, 0.9),
        (3800, 6200, 99999.0, 0.04978706836786383, 25, 0.3, 0.9),  # a wide slab: rows' log weights far apart
    ],
)
def test_second_factors_charge_covers_their_rounding(c1, c2, N, p, stride, x_lo, x_hi):
    rows, w_up, w_lo = R._stride_weights(c1, c2, N, p, stride)
    slab = R._Slab(N, p, 0.4, 1e-15, np.array([2.0, 64.0]), c1, c2, x_lo, x_hi, False, (rows, *w_up), w_lo[0])
    f2, ref2, eps2 = slab._second_factors(w_lo[0], w_up[0])
    charge = eps2 - slab.eps
    assert charge > 0.0
    worst = mp.mpf(0)
    with mp.workdps(50):
        for j in range(len(rows)):
            l1, l2 = mp.mpf(float(w_up[0][j])), mp.mpf(float(w_lo[0][j]))
            if not (mp.isfinite(l1) and mp.isfinite(l2)):
                assert f2[j] == 0.0  # (a row without lower weight: dropped, sound for a lower end)
                continue
            assert f2[j] > 0.0 and f2[j] <= 1.0
            err = abs(mp.log(mp.mpf(float(f2[j]))) + mp.mpf(ref2) - mp.mpf(slab.ref) - (l2 - l1))
            worst = max(worst, err)
    assert worst > 0  # (some row's factor or the scale is rounded: a charge of 0 cannot hold)
    assert worst <= charge, (float(worst), charge)

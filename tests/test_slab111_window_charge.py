"""The lower end's summation charge of a strided slab's one window (slab111, review rev108s's mutant F).

``renyi._measures_window`` sums the lower measure's certified cell bounds in floats (``_segment_logsumexp``) and
subtracts a charge for that sum's rounding, ``log1p(-4 (cells + 4) u) - 4 u``. A float sum of non-negative terms can
come out above the exact sum; the charge is what keeps the lower end below it. So: on real ``_StrideSlab.window``
calls (captured as in ``tests/test_slab108_window.py``), each order's lower end must be at most the EXACT sum (50-digit
mpmath) of the same float cell bounds over the cells the window used. Without the charge (mutant F, which passed every
test: ``test_slab108_window.py`` compares with 1e-12 slack) some (call, order) lands above it, by 1e-16..5e-16 here,
both in the window over every cell and in the window as called (the runs' cells); with the charge every one is below
(by 4e-14..1e-12, or equal where one cell carries the whole sum). Checked both ways on frozen copies under /tmp."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from shuffle_accountant.analyses import pair_for
from shuffle_accountant.numeric import renyi as R
from stride_spies import force_strides


def _windows(monkeypatch, method: str, eps0: float, n: int, force: bool) -> list:
    """The distinct (slab, window arguments) of the strided-slab windows a curve evaluates."""
    if force:
        force_strides(monkeypatch)
    calls = {}
    window = R._StrideSlab.window

    def spy(self, u, v, bp, bq, alpha, level, log_tol=None):
        key = (id(self), u, v, bp, bq, tuple(np.asarray(alpha).tolist()), level, log_tol)
        calls.setdefault(key, (self, (u, v, bp, bq, alpha, level, log_tol)))
        return window(self, u, v, bp, bq, alpha, level, log_tol)

    monkeypatch.setattr(R._StrideSlab, "window", spy)
    sp = pair_for(method, eps0, n)
    R.renyi_bounds(sp.pair, R.DEFAULT_ORDERS, rtol=1e-3, scale=sp.scale)
    monkeypatch.setattr(R._StrideSlab, "window", window)
    return list(calls.values())


def _exact_log_sum(slab, tl, cl: np.ndarray, a: float, u, v, bp, bq):
    """log of the exact sum (mpmath) of the lower measure's float cell bounds at the cells ``cl`` (positions in
    ``tl``), order ``a``; ``-inf`` without cells."""
    if cl.size == 0:
        return mpmath.mpf("-inf")
    cell_lo = slab.lo._cell_bounds(tl, cl, np.full((cl.size, 1), a), u, v, bp, bq, -1)[1][:, 0]
    return mpmath.log(mpmath.fsum(mpmath.exp(mpmath.mpf(x)) for x in cell_lo.tolist()))


def _lower_cells(il: np.ndarray, iu: np.ndarray, first: int, last: int) -> np.ndarray:
    """The lower measure's cells (positions in ``il``) in the upper measure's cells ``iu[first] .. iu[last]``."""
    return np.arange(int(np.searchsorted(il, iu[first])), int(np.searchsorted(il, iu[last], side="right")))


@pytest.mark.parametrize(
    "method, eps0, n, force",
    [
        ("clones", 2.5, 400, True),
        ("stronger-clones", 3.0, 300, True),
        ("clones", 2.5, 2000, True),
        ("clones", 3.0, 100_000, False),
    ],
)
def test_lower_end_at_most_the_exact_sum_of_its_cells(monkeypatch, method, eps0, n, force):
    calls = _windows(monkeypatch, method, eps0, n, force)
    assert calls
    checked = runs_checked = most = 0
    with mpmath.workdps(50):
        for slab, (u, v, bp, bq, alpha, level, log_tol) in calls:
            tu = slab.up._cell_terms(u, v, bp, bq, level)
            tl = slab.lo._cell_terms(u, v, bp, bq, level)
            iu, il = tu[0], tl[0]
            if iu.size == 0:
                continue
            orders = np.asarray(alpha, dtype=float).tolist()
            every = _lower_cells(il, iu, 0, iu.size - 1)
            most = max(most, every.size)
            exact_all = [_exact_log_sum(slab, tl, every, a, u, v, bp, bq) for a in orders]
            # the window over every cell (no runs)
            lo = slab.window(u, v, bp, bq, alpha, level)[1]
            for a, got, ex in zip(orders, lo.tolist(), exact_all):
                if got > -np.inf:
                    checked += 1
                    assert mpmath.mpf(got) <= ex, (a, level, every.size, got, float(mpmath.mpf(got) - ex))
            # the window as called (the runs' cells first .. last of each order; every cell where the runs' bound
            # exceeds log_tol of that lower end)
            if log_tol is None or iu.size < 2:
                continue
            lo = slab.window(u, v, bp, bq, alpha, level, log_tol)[1]
            first, last, runs = slab.up._runs(level, iu, u, v, bp, bq, alpha, log_tol)
            for j, (a, got) in enumerate(zip(orders, lo.tolist())):
                sub = _lower_cells(il, iu, int(first[j]), int(last[j]))
                ex = _exact_log_sum(slab, tl, sub, a, u, v, bp, bq)
                if runs[j] > log_tol + float(ex):
                    ex = exact_all[j]
                if got > -np.inf:
                    runs_checked += 1
                    assert mpmath.mpf(got) <= ex, (a, level, sub.size, got, float(mpmath.mpf(got) - ex))
    assert checked >= 30 and runs_checked >= 30 and most >= 100, (checked, runs_checked, most)

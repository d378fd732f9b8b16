"""krr106 (work-only savings in blanket_krr): :func:`blanket_krr._group_by_value` (one stable argsort instead
of ``np.unique`` plus a stable argsort of the inverse) gives the same grouping arrays;
:func:`blanket_krr._accumulate_rows` (column by column) the same bits as NumPy's row cumprod / cumsum; and
:func:`blanket_krr._kernel_table` and whole ``eps(delta)`` queries the same numbers bit for bit as with the
``np.unique`` grouping and NumPy's accumulates. (The frozen-extraction grid against the start commit is in the
commit message; it cannot live in the suite.)"""

from __future__ import annotations

import numpy as np
import pytest

from shuffle_accountant.numeric import blanket_krr
from shuffle_accountant.numeric.blanket_krr import KrrBlanket
from shuffle_accountant.numeric.search import epsilon_for_delta


def _reference(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The grouping :func:`blanket_krr._kernel_table` computed before krr106."""
    uc, inv = np.unique(x, return_inverse=True)
    srt = np.argsort(inv, kind="stable")
    first = np.concatenate(([0], np.nonzero(np.diff(inv[srt]))[0] + 1))
    return uc, inv, srt, first


def _arrays() -> list[np.ndarray]:
    rng = np.random.default_rng(106)
    runs = [np.sort(rng.integers(0, 5000, size)).astype(float) for size in (700, 300, 1000, 5)]
    return [
        np.array([7.0]),
        np.array([3.0, 3.0, 3.0]),
        np.array([5.0, 1.0, 5.0, 1.0, 2.0]),
        np.concatenate(runs),  # a few ascending runs, as the engine's requests
        np.concatenate(runs)[::-1].copy(),
        rng.integers(0, 50, 4000).astype(float),  # many duplicates, random order
        rng.uniform(0.0, 1e9, 3000).round(),
        np.array([0.0, -0.0, 2.0, 0.0, -0.0]),  # signed zeros: the np.unique way
        np.array([1.0, np.nan, 1.0, 0.5]),  # NaN: the np.unique way
    ]


@pytest.mark.parametrize("i", range(len(_arrays())))
def test_group_by_value_equals_unique(i: int) -> None:
    x = _arrays()[i]
    got, want = blanket_krr._group_by_value(x), _reference(x)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert np.array_equal(g, w, equal_nan=True)
        assert np.array_equal(np.signbit(g), np.signbit(w)) if g.dtype.kind == "f" else True


def test_kernel_table_same_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel table of a few ascending runs of clone counts (as the engine asks) bit for bit as with
    the ``np.unique`` grouping, with and without a row cache."""
    rng = np.random.default_rng(7)
    c = np.concatenate([np.sort(rng.integers(10**6, 10**6 + 4000, 3000)).astype(float) for _ in range(3)])
    lam = rng.uniform(0.05, 0.6, c.size)
    d, eps, rel = 0.23, 0.8, 3e-10
    for cached in (False, True):
        new = blanket_krr._kernel_table(c, lam, d, eps, rel, blanket_krr._TableCache() if cached else None)
        with monkeypatch.context() as mp:
            mp.setattr(blanket_krr, "_group_by_value", _reference)
            old = blanket_krr._kernel_table(c, lam, d, eps, rel, blanket_krr._TableCache() if cached else None)
        for a, b in zip(new, old):
            assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("n, k, eps0", [(10**8, 3, 1.0), (10**8, 10, 2.0), (10**9, 10, 0.5), (10**9, 100, 0.5), (10**6, 3, 1.0)])
def test_queries_same_bits(monkeypatch: pytest.MonkeyPatch, n: int, k: int, eps0: float) -> None:
    """Cold eps(delta) queries (engine, lines and split routes; delta 1e-6 and 1e-12): the same brackets
    with the ``np.unique`` grouping and NumPy's row accumulates (ACC_COLUMNS_MIN_ROWS out of reach)."""

    def run() -> list[tuple[float, float]]:
        blanket_krr._BACKENDS.clear()
        out = []
        for delta in (1e-6, 1e-12):
            br = epsilon_for_delta(KrrBlanket(n, k, eps0), delta, 1e-6)
            out.append((br.lower, br.upper))
        return out

    new = run()
    with monkeypatch.context() as mp:
        mp.setattr(blanket_krr, "_group_by_value", _reference)
        mp.setattr(blanket_krr, "ACC_COLUMNS_MIN_ROWS", 10**18)
        old = run()
    blanket_krr._BACKENDS.clear()
    assert new == old


@pytest.mark.parametrize("rows, cols", [(5, 7), (1024, 24), (2000, 104), (3000, 1)])
def test_accumulate_rows_equals_numpy(rows: int, cols: int) -> None:
    """Column by column (from ACC_COLUMNS_MIN_ROWS rows) the same bits as ``np.cumprod`` / ``np.cumsum``
    along rows, in place and into a reversed view (as :meth:`_TableCache.rows` calls it)."""
    rng = np.random.default_rng(rows + cols)
    x = rng.uniform(0.8, 1.2, (rows, cols)) ** rng.uniform(0.5, 2.0, (rows, 1))
    x[rows // 2, cols // 2 :] = 0.0
    y = x.copy()
    blanket_krr._accumulate_rows(np.multiply, y, y)
    assert y.tobytes() == np.cumprod(x, axis=1).tobytes()
    s_new, s_old = np.full((rows, cols + 3), 9.0), np.full((rows, cols + 3), 9.0)
    blanket_krr._accumulate_rows(np.add, x[:, ::-1], s_new[:, cols - 1 :: -1])
    np.cumsum(x[:, ::-1], axis=1, out=s_old[:, cols - 1 :: -1])
    assert s_new.tobytes() == s_old.tobytes()

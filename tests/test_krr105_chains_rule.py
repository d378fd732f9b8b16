"""krr105: the kink chains answer beyond 1e7 users where their estimated cells are few (blanket_krr.CHAINS_MAX_CELLS,
_BlanketBackend.chains_cheap), and their first evaluation takes bands from an estimate of delta (KrrChains._widths).
Both are cost decisions; these tests check that the brackets stay certified (against the other routes, which have
their own certificates) and that the rule routes as measured."""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffle_accountant.numeric import blanket_krr
from shuffle_accountant.numeric.blanket_krr import KrrBlanket
from shuffle_accountant.numeric.krr_chains import Z_O, Z_T, KrrChains, cells_estimate
from shuffle_accountant.numeric.search import epsilon_for_delta


def _answered_by_chains(prof: KrrBlanket) -> bool:
    be = prof._backend
    assert be is not None
    return any(isinstance(p, KrrChains) for p in be.answered)


@pytest.mark.parametrize("n,k,eps0", [(10**8, 100, 1.0), (10**9, 100, 2.0), (10**9, 1000, 3.0)])
def test_chains_beyond_1e7_overlap_the_other_routes(n: int, k: int, eps0: float, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the rule lets the chains answer above the old cap (1e7), their eps(1e-6) and their delta bracket at it
    overlap those of the routes that answered before (lines / engine, chains off), and the upper ends agree within
    rtol."""
    prof = KrrBlanket(n, k, eps0, shared=False)
    new = epsilon_for_delta(prof, 1e-6, 1e-6)
    assert _answered_by_chains(prof)
    ch = KrrChains(n, k, eps0).bounds(new.upper, 1e-7)
    monkeypatch.setattr(blanket_krr, "CHAINS_MAX_N", 0)
    old_prof = KrrBlanket(n, k, eps0, shared=False)
    old = epsilon_for_delta(old_prof, 1e-6, 1e-6)
    assert not _answered_by_chains(old_prof)
    ref = KrrBlanket(n, k, eps0, shared=False).bounds(new.upper, 1e-7)
    assert ch is not None and ch.converged
    assert ch.lower <= ref.upper and ref.lower <= ch.upper, (ch, ref)
    assert new.lower <= old.upper and old.lower <= new.upper, (new, old)
    assert abs(new.upper / old.upper - 1.0) <= 1e-6


@pytest.mark.parametrize("n,k,eps0", [(10**9, 3, 1.0), (10**8, 3, 0.5), (5 * 10**7, 4, 1.0)])
def test_chains_not_tried_where_dear(n: int, k: int, eps0: float) -> None:
    """Where the estimate is above the route's budget (1e9, k = 3: ~1.1e6 cells, ~15x the engine's time measured)
    the chains are never built, the search starts from the route's own surrogate, and the other routes answer."""
    prof = KrrBlanket(n, k, eps0, shared=False)
    be = prof._backend
    assert be is not None and be.use_chains and not be.chains_expected
    assert prof.mixture_surrogate is None
    epsilon_for_delta(prof, 1e-6, 1e-6)
    assert be._chains is None and not _answered_by_chains(prof)
    assert be.chains_fail_from < math.inf


def test_chains_cheap_grows_with_eps() -> None:
    """The estimate is increasing in eps, so the rule holds below one eps (chains_fail_from's semantics)."""
    est = [cells_estimate(10**8, 10, 2.0, e) for e in np.geomspace(1e-5, 1.9, 40)]
    assert all(b > a for a, b in zip(est, est[1:]))
    be = KrrBlanket(10**8, 10, 2.0, shared=False)._backend
    assert be is not None
    flags = [be.chains_cheap(e) for e in np.geomspace(1e-5, 1.9, 40)]
    assert flags[0] and not flags[-1] and flags == sorted(flags, reverse=True)


@pytest.mark.parametrize("n,k,eps0", [(10**6, 3, 1.0), (10**7, 10, 2.0), (10**8, 100, 1.0)])
def test_cells_estimate_tracks_the_cells(n: int, k: int, eps0: float) -> None:
    """Steering only, but the rule's budgets were measured against it: the counted cells of a widest-band evaluation
    at eps(1e-6) are 1 .. 2.5 times the estimate."""
    eps = epsilon_for_delta(KrrBlanket(n, k, eps0, shared=False), 1e-6, 1e-6).upper
    ch = KrrChains(n, k, eps0)
    with np.errstate(all="ignore"):
        assert ch.evaluate(eps) is not None
    assert 1.0 <= ch.last_cells / cells_estimate(n, k, eps0, eps) <= 2.5


@pytest.mark.parametrize("n,k,eps0", [(10**6, 3, 1.0), (10**7, 3, 1.0), (3 * 10**6, 10, 2.0)])
def test_estimated_widths_are_narrower_and_still_close(n: int, k: int, eps0: float) -> None:
    """The first evaluation's bands come from the saddle estimate of delta: narrower than the widest (fewer cells),
    the bracket still closes at rtol 1e-6 and overlaps the widest bands' bracket; and bands far too narrow (5 sd)
    still give a bracket around the widest one's (the neglected parts are charged, not dropped)."""
    eps = epsilon_for_delta(KrrBlanket(n, k, eps0, shared=False), 1e-6, 1e-6).upper
    ch = KrrChains(n, k, eps0)
    widths = ch._widths(eps, 1e-6)
    assert widths is not None
    z_t, z_o = widths
    assert z_t < Z_T and z_o < Z_O
    with np.errstate(all="ignore"):
        wide = ch.evaluate(eps)
        wide_cells = ch.last_cells
        narrow = ch.evaluate(eps, z_t, z_o)
        narrow_cells = ch.last_cells
        tiny = ch.evaluate(eps, 5.0, 5.0)
        # one neglected part at a time (review rev105k: at (5, 5) O's band charge hid a dropped charge of the totals
        # outside the window)
        tiny_t = ch.evaluate(eps, 5.0, Z_O)
        tiny_o = ch.evaluate(eps, Z_T, 5.0)
    assert wide is not None and narrow is not None and tiny is not None
    assert tiny_t is not None and tiny_o is not None
    for part in (tiny_t, tiny_o):
        assert part[0] <= wide[1] and part[1] >= wide[0]
    assert narrow_cells < 0.9 * wide_cells
    up = ch.charge_up(narrow[1])
    assert up - narrow[0] <= 1e-6 * narrow[0]
    assert narrow[0] <= wide[1] and wide[0] <= narrow[1]
    assert tiny[0] <= wide[1] and tiny[1] >= wide[0]
    assert tiny[1] - tiny[0] > 10.0 * (wide[1] - wide[0])  # (5 sd: the charges are decisive)
    got = KrrChains(n, k, eps0).bounds(eps, 1e-6)
    assert got is not None and got.converged


@pytest.mark.parametrize("n,k,eps0", [(10**8, 100, 1.0), (10**6, 3, 1.0)])
def test_chains_decline_where_their_floor_exceeds_rtol_delta(n: int, k: int, eps0: float,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Review rev105k: where the chains' bracket cannot close they decline without an evaluation, from
    WIDTH_MIN_TOTALS totals on (cost only; the other routes answer, and eps(delta) equals the answer without the
    chains); at delta = 1e-6 they still answer. Since krr107 the fl(e^eps) charge is relative, so delta = 1e-12 closes;
    at 1e-14 the widest bands' neglected parts are above rtol delta (and the old absolute floor is too)."""
    calls: list[float] = []
    evaluate = KrrChains.evaluate

    def counted(self: KrrChains, eps: float, *args: float) -> object:
        calls.append(eps)
        return evaluate(self, eps, *args)

    monkeypatch.setattr(KrrChains, "evaluate", counted)
    prof = KrrBlanket(n, k, eps0, shared=False)
    got = epsilon_for_delta(prof, 1e-14, 1e-6)
    assert not calls and not _answered_by_chains(prof)
    be = prof._backend
    assert be is not None and be.chains_fail_from < math.inf
    with monkeypatch.context() as mp:
        mp.setattr(blanket_krr, "CHAINS_MAX_N", 0)  # (no chains at all)
        ref = epsilon_for_delta(KrrBlanket(n, k, eps0, shared=False), 1e-14, 1e-6)
    assert got.lower <= ref.upper and ref.lower <= got.upper
    prof6 = KrrBlanket(n, k, eps0, shared=False)
    epsilon_for_delta(prof6, 1e-6, 1e-6)
    assert calls and _answered_by_chains(prof6)

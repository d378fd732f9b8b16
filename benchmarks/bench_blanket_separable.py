"""Benchmark of the separable privacy-blanket engine (``numeric/blanket_separable.py``, issue 10)
against the clones query and the lattice engine (``numeric/blanket_matrix.py``).

Run:  python benchmarks/bench_blanket_separable.py [--ns N [N ...]] [--eps0 E [E ...]] [--repeats R]
      [--search-max-n N] [--rtol R]
      python benchmarks/bench_blanket_separable.py --api [--ns ...] [--eps0 ...] [--ks K [K ...]]

``--api``: the query users make, ``api.epsilon(eps0, n, 1e-6, method="blanket", rtol, randomizer)`` for
SUE / OUE / OLH with each ``k``, against one clones query at the same n (CPU, least of ``--repeats``
runs, the two alternated), with the search's evaluations, the separable engine's computations among
them (the rest answered from its kit, module docstring §8) and the engine that answered. ``cold``: the
pmf runs every separable engine shares (``blanket_separable._SHARED``) cleared before the query; ``warm``:
the same query again right after (its runs kept, as for a repeated query or another delta).

For each randomizer (SUE and OUE with k = 100, OLH with k = 100 and its default g), eps0 and n:

- ``clones``: one ``api.epsilon(eps0, n, 1e-6)`` (the generic FMT21 query), CPU time;
- ``lattice``: one certified ``epsilon_for_delta(PairBlanket(structure, n), 1e-6, rtol)`` (``auto``:
  exact enumeration up to ~1e5 count vectors, else the lattice FFT), CPU time;
- ``separable``: the same search on ``SeparableBlanket(structure, n)`` for ``n <= --search-max-n``;
  beyond, the CPU time of ONE ``bounds(eps, 1e-3)`` at the lattice's ``eps`` (marked ``1 eval``),
  since a whole search there takes minutes (module docstring §6).

Times are CPU seconds (``time.process_time``), the least of ``--repeats`` interleaved runs (the
lattice and large-n separable runs once). Not part of the test suite.

``--grid``: issue 10's table of cells, one ``api.epsilon(eps0, n, 1e-6, method="blanket")`` for SUE / OUE /
OLH with ``--ks`` (default 2, 100), ``--eps0`` (default 0.5, 1, 3, 6) and ``--ns`` (default 10, 100, 300, 1e3,
3e3, 1e4) against one clones query ``api.epsilon(eps0, n, 1e-6)`` in the same process (CPU, least of
``--repeats``, interleaved; cold: the shared pmf runs cleared first, warm: the same query again), with the
evaluations, the engines of the query's pairs (``k-RR`` where k-RR's engines answer for a k = 2 pair) and
``MISS`` where the cold ratio exceeds 3. ``trivial`` marks cells where the clones query answers ``eps0`` itself
without an evaluation (under 0.3 ms: at eps0 >= 3 and small n), which no blanket query that evaluates once can
come within 3x of.
"""

from __future__ import annotations

import argparse
import time
from typing import Callable, Iterator

from shuffle_accountant import api, randomizers
from shuffle_accountant.numeric.blanket_matrix import BlanketProfile, PairBlanket
from shuffle_accountant.numeric.blanket_separable import SeparableBlanket, applies
from shuffle_accountant.numeric.search import epsilon_for_delta

DELTA = 1e-6


def cpu(fn: Callable[[], object], repeats: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeats):
        t = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t)
    return best, out


def _cells(ns: list[float], eps0s: list[float], ks: list[int]) -> Iterator[tuple[int, float, randomizers.Randomizer]]:
    """``(n, eps0, randomizer)`` for SUE / OUE / OLH with each ``k``, n outermost."""
    for nf in ns:
        for eps0 in eps0s:
            for make in (randomizers.SUE, randomizers.OUE, randomizers.OLH):
                for k in ks:
                    yield int(nf), eps0, make(k, eps0)


def _noted_pairs() -> list:  # type: ignore[type-arg]
    """A list that every :class:`PairBlanket` made from now on is appended to (the engines a query used)."""
    made: list[PairBlanket] = []
    init = PairBlanket.__init__

    def noted(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        init(self, *args, **kwargs)
        made.append(self)

    PairBlanket.__init__ = noted  # type: ignore[method-assign]
    return made


def api_table(ns: list[float], eps0s: list[float], ks: list[int], repeats: int, rtol: float) -> None:
    """The ``--api`` table (module docstring)."""
    from shuffle_accountant.numeric import blanket_separable as bs

    computed = [0]
    compute = bs.SeparableBlanket._compute

    def counted(self, eps, tol):  # type: ignore[no-untyped-def]
        computed[0] += 1
        return compute(self, eps, tol)

    bs.SeparableBlanket._compute = counted  # type: ignore[method-assign]
    made = _noted_pairs()
    api.epsilon(1.0, 1000, DELTA)  # (imports and caches warm)
    print(f"delta = {DELTA:g}, eps rtol = {rtol:g}; CPU ms, least of {repeats} alternated runs\n")
    print("| randomizer | n | clones (ms) | blanket cold (ms) | ratio | blanket warm (ms) | ratio | evaluations "
          "| computations | engine |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n, eps0, rand in _cells(ns, eps0s, ks):
        tc = tb = tw = float("inf")
        comp = 0
        for _ in range(repeats):
            t = time.process_time()
            api.epsilon(eps0, n, DELTA)
            tc = min(tc, time.process_time() - t)
            computed[0], made[:] = 0, []
            bs._SHARED.clear()
            t = time.process_time()
            out = api.epsilon(eps0, n, DELTA, method="blanket", rtol=rtol, randomizer=rand)
            tb = min(tb, time.process_time() - t)
            comp = computed[0]
            t = time.process_time()
            api.epsilon(eps0, n, DELTA, method="blanket", rtol=rtol, randomizer=rand)
            tw = min(tw, time.process_time() - t)
        engine = "/".join(sorted({"separable" if p.separable else ("exact" if p.exact else "lattice")
                                  for p in made}))
        print(f"| {rand.describe()} | {n:g} | {tc * 1e3:.2f} | {tb * 1e3:.2f} | {tb / tc:.1f}x | "
              f"{tw * 1e3:.2f} | {tw / tc:.1f}x | {out.details['evaluations']} | {comp} | {engine} |",
              flush=True)


def grid_table(ns: list[float], eps0s: list[float], ks: list[int], repeats: int) -> None:
    """The ``--grid`` table (module docstring)."""
    from shuffle_accountant.numeric import blanket_separable as bs

    made = _noted_pairs()
    for r in (randomizers.SUE(10, 1.0), randomizers.OLH(10, 1.0), randomizers.SUE(2, 1.0)):  # (imports, caches)
        api.epsilon(1.0, 200, DELTA, method="blanket", randomizer=r)
    api.epsilon(1.0, 1000, DELTA)
    print(f"delta = {DELTA:g}; CPU ms, least of {repeats} interleaved runs; ratio = blanket / clones\n")
    print("| randomizer | n | clones (ms) | blanket cold (ms) | ratio | blanket warm (ms) | ratio | evaluations | engine | |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    misses = cells = 0
    for n, eps0, rand in _cells(ns, eps0s, ks):
        tc = tb = tw = float("inf")
        engines: set[str] = set()
        for _ in range(repeats):
            t = time.process_time()
            ref = api.epsilon(eps0, n, DELTA)
            tc = min(tc, time.process_time() - t)
            bs._SHARED.clear()
            made[:] = []
            t = time.process_time()
            out = api.epsilon(eps0, n, DELTA, method="blanket", randomizer=rand)
            tb = min(tb, time.process_time() - t)
            engines = {"separable" if p.separable else ("exact" if p.exact else "lattice") for p in made}
            if BlanketProfile(rand, n)._krr is not None:  # (k = 2: k-RR's engines answer, blanket_matrix._krr_route)
                engines = {"k-RR"}
            t = time.process_time()
            api.epsilon(eps0, n, DELTA, method="blanket", randomizer=rand)
            tw = min(tw, time.process_time() - t)
        trivial = ref.details.get("evaluations") == 0 and tc < 3e-4
        miss = tb > 3.0 * tc
        cells += 1
        misses += miss
        note = ("MISS" if miss else "") + (" (trivial)" if trivial else "")
        print(f"| {rand.describe()} | {n:g} | {tc * 1e3:.2f} | {tb * 1e3:.2f} | {tb / tc:.1f}x | {tw * 1e3:.2f} | "
              f"{tw / tc:.1f}x | {out.details['evaluations']} | {'/'.join(sorted(engines))} | {note} |", flush=True)
    print(f"\n{misses} of {cells} cells above 3x (cold)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ns", type=float, nargs="+", default=None)
    ap.add_argument("--eps0", type=float, nargs="+", default=None)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--search-max-n", type=float, default=1e5)
    ap.add_argument("--rtol", type=float, default=1e-6)
    ap.add_argument("--api", action="store_true", help="the api.epsilon table against the clones query")
    ap.add_argument("--ks", type=int, nargs="+", default=None)
    ap.add_argument("--grid", action="store_true", help="issue 10's cells against the clones query (module docstring)")
    args = ap.parse_args()
    if args.grid:
        grid_table(args.ns or [10, 100, 300, 1e3, 3e3, 1e4], args.eps0 or [0.5, 1.0, 3.0, 6.0], args.ks or [2, 100],
                   args.repeats)
        return
    args.ns, args.eps0, args.ks = args.ns or [1e3, 1e5, 1e7, 1e9], args.eps0 or [0.5, 1.0, 2.0], args.ks or [2, 10, 100]
    if args.api:
        api_table(args.ns, args.eps0, args.ks, args.repeats, args.rtol)
        return
    print(f"delta = {DELTA:g}, eps rtol = {args.rtol:g}; CPU seconds, least of {args.repeats} runs\n")
    print("| randomizer | n | clones (ms) | lattice (ms) | separable (ms) | sep / clones | sep / lattice "
          "| eps lattice (upper) | eps separable (upper) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for eps0 in args.eps0:
        rands = [randomizers.SUE(100, eps0), randomizers.OUE(100, eps0), randomizers.OLH(100, eps0)]
        for rand in rands:
            s = rand.pair_structures()[0]
            assert applies(s)
            for nf in args.ns:
                n = int(nf)
                tc, _ = cpu(lambda: api.epsilon(eps0, n, DELTA), args.repeats)
                tl, lat = cpu(lambda: epsilon_for_delta(PairBlanket(s, n), DELTA, args.rtol), 1)
                if n <= args.search_max_n:
                    reps = args.repeats if n <= 1e4 else 1
                    ts, sep = cpu(lambda: epsilon_for_delta(SeparableBlanket(s, n), DELTA, args.rtol), reps)
                    sep_eps = f"{sep.upper:.9g}"  # type: ignore[attr-defined]
                    label = f"{ts * 1e3:.1f}"
                else:
                    ts, b = cpu(lambda: SeparableBlanket(s, n).bounds(lat.upper, 1e-3), 1)  # type: ignore[attr-defined]
                    sep_eps = f"(1 eval: [{b.lower:.6g}, {b.upper:.6g}])"  # type: ignore[attr-defined]
                    label = f"{ts * 1e3:.0f} (1 eval)"
                print(f"| {rand.describe()} | {n:.0e} | {tc * 1e3:.1f} | {tl * 1e3:.0f} | {label} | "
                      f"{ts / tc:.0f}x | {ts / tl:.2f}x | {lat.upper:.9g} | {sep_eps} |", flush=True)  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()

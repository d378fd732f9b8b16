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
"""

from __future__ import annotations

import argparse
import time
from typing import Callable

from shuffle_accountant import api, randomizers
from shuffle_accountant.numeric.blanket_matrix import PairBlanket
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


def api_table(ns: list[float], eps0s: list[float], ks: list[int], repeats: int, rtol: float) -> None:
    """The ``--api`` table (module docstring)."""
    from shuffle_accountant.numeric import blanket_matrix as bm
    from shuffle_accountant.numeric import blanket_separable as bs

    computed = [0]
    compute = bs.SeparableBlanket._compute

    def counted(self, eps, tol):  # type: ignore[no-untyped-def]
        computed[0] += 1
        return compute(self, eps, tol)

    bs.SeparableBlanket._compute = counted  # type: ignore[method-assign]
    made: list[bm.PairBlanket] = []
    init = bm.PairBlanket.__init__

    def noted(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        init(self, *args, **kwargs)
        made.append(self)

    bm.PairBlanket.__init__ = noted  # type: ignore[method-assign]
    api.epsilon(1.0, 1000, DELTA)  # (imports and caches warm)
    print(f"delta = {DELTA:g}, eps rtol = {rtol:g}; CPU ms, least of {repeats} alternated runs\n")
    print("| randomizer | n | clones (ms) | blanket cold (ms) | ratio | blanket warm (ms) | ratio | evaluations "
          "| computations | engine |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for nf in ns:
        n = int(nf)
        for eps0 in eps0s:
            for make in (randomizers.SUE, randomizers.OUE, randomizers.OLH):
                for k in ks:
                    rand = make(k, eps0)
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ns", type=float, nargs="+", default=[1e3, 1e5, 1e7, 1e9])
    ap.add_argument("--eps0", type=float, nargs="+", default=[0.5, 1.0, 2.0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--search-max-n", type=float, default=1e5)
    ap.add_argument("--rtol", type=float, default=1e-6)
    ap.add_argument("--api", action="store_true", help="the api.epsilon table against the clones query")
    ap.add_argument("--ks", type=int, nargs="+", default=[2, 10, 100])
    args = ap.parse_args()
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

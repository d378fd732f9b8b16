"""Benchmark of the separable privacy-blanket engine (``numeric/blanket_separable.py``, issue 10)
against the clones query and the lattice engine (``numeric/blanket_matrix.py``).

Run:  python benchmarks/bench_blanket_separable.py [--ns N [N ...]] [--eps0 E [E ...]] [--repeats R]
      [--search-max-n N] [--rtol R]

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ns", type=float, nargs="+", default=[1e3, 1e5, 1e7, 1e9])
    ap.add_argument("--eps0", type=float, nargs="+", default=[0.5, 1.0, 2.0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--search-max-n", type=float, default=1e5)
    ap.add_argument("--rtol", type=float, default=1e-6)
    args = ap.parse_args()
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

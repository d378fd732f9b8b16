"""Benchmark for the certified privacy-blanket bound of shuffled k-ary randomized response
(issue 10; ``shuffle_accountant/numeric/blanket_krr.py``).

Run:  python benchmarks/bench_blanket.py [--repeats R] [--quick] [--ns N [N ...]] [--no-speed] [--no-table]
      [--randomizers] [--stat {median,min}] [--clock {wall,cpu}]

Part 1, speed: median (or, with ``--stat min``, least) time of one certified ``eps(delta)``
(delta = 1e-6, rtol 1e-6) for the FMT21 clones query (``api.epsilon(method="clones")``) and for
the k-RR blanket (``epsilon_for_delta(KrrBlanket(n, k, eps0), ...)``, a fresh profile each time),
measured in the same run for n in {1e3, ..., 1e9}, their ratio, the blanket's number of
evaluations and the route that answered it. The issue's target is a ratio <= 3. On a shared
machine ``--stat min --clock cpu`` (process time) is the steadier measure. Routes
(``blanket_krr`` module docstring §3, ``_BlanketBackend.route``): ``window`` (every total of
``mean ± (8 sd + 40)`` on its own; few totals, n up to ~1e4 .. 1e5), ``split`` (a central window of
single totals plus the block engine on the other totals; n up to ~3e7 .. 1e8), ``engine`` (the block
engine alone). The cold time clears the shared cache of all of them.

Part 1b, other randomizers (``--randomizers``): the same ratio through ``api.epsilon(method="blanket")``
for SUE, OUE, OLH (k = 100, eps0 = 1) and a random 100-output matrix with 2 / 5 / 10 inputs at
n = 1e6 (the issue's targets: ratio <= 3; the matrix at most 1 s), each a fresh engine, ``--repeats``
times. Before anything is timed, one blanket query per engine at n = 200 pays the imports; the first
query at a new size in a process still costs more than the later ones (at n = 1e7 SUE ~1.7x:
first-touch page faults of the lattice's arrays), which ``--stat min`` leaves out. k-RR engines are shared per
(n, k, eps0): the cold time clears that cache before every run, the warm time repeats the query.

Part 2, tightness: the certified blanket eps (upper) over the attained lower bound
(``KrrDatasetLower``: exact divergence of the best dataset of the family, certified lower end)
for n in {1e3, ..., 1e9}, eps0 in {0.5, 1, 2, 4}, k in {2, 3, 10, 100}, delta = 1e-6. Each cell
is "blanket eps (+gap %)". The issue's goal: at most 1 % at n >= 1e3.

Not part of the test suite: tests check correctness, this measures speed and tightness.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Callable

import numpy as np

from shuffle_accountant import api, randomizers
from shuffle_accountant.numeric import blanket_krr
from shuffle_accountant.numeric.blanket_krr import KrrBlanket, KrrDatasetLower
from shuffle_accountant.numeric.krr_chains import KrrChains
from shuffle_accountant.numeric.search import epsilon_for_delta

NS = [10**3, 10**4, 10**5, 10**6, 10**7, 10**8, 10**9]
SPEED_CASES = [(3, 1.0), (10, 2.0)]  # (k, eps0)
TABLE_EPS0 = [0.5, 1.0, 2.0, 4.0]
TABLE_K = [2, 3, 10, 100]
DELTA = 1e-6
RTOL = 1e-6


#: how repeated timings are summarised and which clock they use (set from the command line)
STAT: Callable[[list[float]], float] = statistics.median
CLOCK: Callable[[], float] = time.perf_counter


def median_time(fn: Callable[[], object], repeats: int, cold: bool = False) -> float:
    times = []
    for _ in range(repeats):
        if cold:
            blanket_krr._BACKENDS.clear()
        t = CLOCK()
        fn()
        times.append(CLOCK() - t)
    return STAT(times)


def speed(repeats: int, ns: list[int]) -> None:
    print(f"## Speed: {STAT.__name__} of {repeats} runs ({CLOCK.__name__}), delta = {DELTA:g}, rtol = {RTOL:g}\n")
    for k, eps0 in SPEED_CASES:
        print(f"k = {k}, eps0 = {eps0:g}\n")
        print("| n | clones (ms) | blanket cold (ms) | ratio | blanket warm (ms) | evaluations | route "
              "| blanket eps (upper) |")
        print("|---|---|---|---|---|---|---|---|")
        for n in ns:
            tc = median_time(lambda: api.epsilon(eps0, n, DELTA, method="clones", rtol=RTOL), repeats)
            box: dict[str, float] = {}

            def blanket() -> None:
                br = epsilon_for_delta(KrrBlanket(n, k, eps0), DELTA, RTOL)
                box["eps"], box["evals"] = br.upper, br.evaluations

            tb = median_time(blanket, repeats, cold=True)
            evals = int(box["evals"])
            tw = median_time(blanket, repeats)
            backend = blanket_krr._BACKENDS.get((n, k, eps0))
            route = "pair"
            if isinstance(backend, blanket_krr._BlanketBackend):  # the route of the last evaluation
                route = "chains" if any(isinstance(p, KrrChains) for p in backend.answered) else backend.route
            print(f"| {n:.0e} | {tc * 1e3:.1f} | {tb * 1e3:.1f} | {tb / tc:.1f} | {tw * 1e3:.1f} | {evals} "
                  f"| {route} | {box['eps']:.7g} |", flush=True)
        print()


def random_matrix(inputs: int, outputs: int = 100, eps0: float = 1.0, seed: int = 0) -> randomizers.MatrixRandomizer:
    """Entries ``e^U``, ``U ~ Uniform(0, eps0)``, rows normalised (so its eps0 is below ``eps0``)."""
    m = np.exp(np.random.default_rng(seed).uniform(0.0, eps0, (inputs, outputs)))
    return randomizers.MatrixRandomizer(m / m.sum(axis=1, keepdims=True), source=f"random {inputs}x{outputs}")


def speed_randomizers(repeats: int, ns: list[int]) -> None:
    print(f"## Speed, other randomizers: {STAT.__name__} of {repeats} runs ({CLOCK.__name__}), delta = {DELTA:g}, rtol = {RTOL:g}\n")
    print("| randomizer | n | clones (ms) | blanket (ms) | ratio | evaluations | blanket eps (upper) |")
    print("|---|---|---|---|---|---|---|")
    cases: list[tuple[randomizers.Randomizer, list[int]]] = [
        (randomizers.SUE(100, 1.0), ns), (randomizers.OUE(100, 1.0), ns), (randomizers.OLH(100, 1.0), ns)]
    cases += [(random_matrix(i), [10**6]) for i in (2, 5, 10)]
    for r, sizes in cases:
        for n in sizes:
            tc = median_time(lambda: api.epsilon(r.eps0, n, DELTA, method="clones", rtol=RTOL), repeats)
            box: dict[str, float] = {}

            def blanket() -> None:
                q = api.epsilon(r.eps0, n, DELTA, method="blanket", rtol=RTOL, randomizer=r)
                assert q.value is not None
                box["eps"], box["evals"] = q.value, q.details.get("evaluations", float("nan"))

            tb = median_time(blanket, repeats)
            print(f"| {r.describe()} | {n:.0e} | {tc * 1e3:.1f} | {tb * 1e3:.1f} | {tb / tc:.1f} | {box['evals']:g} "
                  f"| {box['eps']:.7g} |", flush=True)
    print()


def tightness(ns: list[int], ks: list[int], eps0s: list[float]) -> None:
    print(f"## Tightness: blanket eps (upper) and its gap to the attained lower bound, delta = {DELTA:g}\n")
    worst = {k: 0.0 for k in ks}
    for k in ks:
        print(f"k = {k}\n")
        print("| n | " + " | ".join(f"eps0={e:g}" for e in eps0s) + " |")
        print("|---|" + "---|" * len(eps0s))
        for n in ns:
            cells = []
            for eps0 in eps0s:
                up = epsilon_for_delta(KrrBlanket(n, k, eps0), DELTA, RTOL).upper
                lo = epsilon_for_delta(KrrDatasetLower(n, k, eps0), DELTA, RTOL).lower
                gap = 100.0 * (up / lo - 1.0) if lo > 0 else float("inf")
                worst[k] = max(worst[k], gap)
                cells.append(f"{up:.6g} (+{gap:.2g}%)")
            print(f"| {n:.0e} | " + " | ".join(cells) + " |", flush=True)
        print()
    for k in ks:
        print(f"largest gap, k = {k}: {worst[k]:.3g} %")
    print("(goal: at most 1 %; for k = 2 the blanket is the stronger-clone pair, whose gap to binary RR is"
          " generic, see the module docstring of blanket_krr)")


def warm_up() -> None:
    """One untimed blanket query per engine (k-RR, separable, lattice) at small n: module imports
    (and, where bytecode is not cached, their compilation: ~0.1 s), so that the first timed case
    does not pay them."""
    for r in (randomizers.KRR(3, 1.0), randomizers.SUE(10, 1.0), random_matrix(2, 10)):
        api.epsilon(r.eps0, 200, DELTA, method="blanket", rtol=RTOL, randomizer=r)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="n in {1e3, 1e5, 1e7, 1e9} only")
    ap.add_argument("--ns", type=float, nargs="+", help="these n instead (e.g. --ns 1e4 1e6)")
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--no-table", action="store_true")
    ap.add_argument("--randomizers", action="store_true", help="also SUE / OUE / OLH and random matrices")
    ap.add_argument("--stat", choices=("median", "min"), default="median", help="summary of the repeated timings")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall", help="wall clock or process time")
    args = ap.parse_args()
    global STAT, CLOCK
    STAT = statistics.median if args.stat == "median" else min
    CLOCK = time.perf_counter if args.clock == "wall" else time.process_time
    ns = [int(x) for x in args.ns] if args.ns else NS[::2] if args.quick else NS
    warm_up()
    if not args.no_speed:
        speed(args.repeats, ns)
    if args.randomizers:
        speed_randomizers(args.repeats, ns)
    if not args.no_table:
        tightness(ns, TABLE_K, TABLE_EPS0)


if __name__ == "__main__":
    main()

"""Benchmark (issue 13): Renyi curve and compose, each next to a single clones eps(delta) query
at the same n, measured in the same run (the machine is shared: ratios, not absolute times,
are what compare across runs).

For every n: the median wall-clock time of ``api.epsilon(eps0=1, n, delta=1e-6)`` (the
reference), of ``composition.rdp_curve(1, n)`` (40 default orders, rtol 1e-3), and of
``composition.compose(eps0=1, n, T)`` with all three routes for T = 100 and 10^4 (the PLD
route's per-round caches are cleared before each run, so every run is cold). Repetitions
interleave the cases, so that load changes hit them alike. The one-off dp_accounting import
(~1 s) is paid before timing. Targets: the curve <= 10 reference queries, compose <= 50.

With ``--randomizer``: a second table for ``compose --randomizer krr --k 10`` (the PLD and
advanced routes compose the exact blanket bound, built from few evaluations of it), T = 100,
next to the single clones query and the generic compose at the same n (blanket PLDs cleared
before each run; the blanket engines' own per-(n, k, eps0) cache is not, so repeated runs
measure a warm engine).

Run: python benchmarks/bench_renyi_compose.py [--repeats R] [--quick] [--randomizer] [--clock cpu] [--stat min]
[--renyi-only] (the curve and the query only: a quick check of the curve's ratio)
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Callable

from shuffle_accountant import api, pld
from shuffle_accountant import composition as comp

NS = [10, 100, 10**3, 3 * 10**3, 10**4, 10**5, 10**6, 10**7, 10**9]  # 3e3: the Renyi curve's worst case


def cold(fn: Callable[[], object]) -> Callable[[], object]:
    """``fn`` with the PLD route's per-round caches cleared first."""

    def run() -> object:
        pld.round_tails.cache_clear()
        pld._pair_pld.cache_clear()  # noqa: SLF001 - a cold measurement
        return fn()

    return run


#: ``--clock cpu`` (process time: steadier on a shared machine) or ``wall``; ``--stat min`` or ``median``.
CLOCK = {"wall": time.perf_counter, "cpu": time.process_time}
STAT = {"median": statistics.median, "min": min}


def medians(cases: dict[str, Callable[[], object]], repeats: int, clock: str = "wall",
            stat: str = "median") -> dict[str, float]:
    """The ``stat`` over ``repeats`` interleaved runs of each case, timed by ``clock``."""
    now = CLOCK[clock]
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(repeats):
        for name, fn in cases.items():
            t = now()
            fn()
            times[name].append(now() - t)
    return {name: STAT[stat](ts) for name, ts in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="n = 1e3, 3e3, 1e4, 1e6 only")
    ap.add_argument("--randomizer", action="store_true", help="also compose a deployed k-RR (blanket routes)")
    ap.add_argument("--clock", choices=sorted(CLOCK), default="wall", help="cpu: process time (steadier under load)")
    ap.add_argument("--stat", choices=sorted(STAT), default="median")
    ap.add_argument("--renyi-only", action="store_true", help="only the Renyi curve next to the query (no compose)")
    args = ap.parse_args()
    if args.renyi_only:
        renyi_table([10**3, 3 * 10**3, 10**4, 10**6] if args.quick else NS, args.repeats, args.clock, args.stat)
        return
    ns = [10**3, 3 * 10**3, 10**4, 10**6] if args.quick else NS
    try:
        pld.import_dp_accounting()
    except pld.PldUnavailable:
        print(f"(PLD route not installed: compose runs without it; {pld.PLD_INSTALL})\n")
    print(f"{args.stat} {args.clock} ms over {args.repeats} interleaved runs; ratio = time / single query at the same n\n")
    print("| n | single eps query | renyi curve (40 orders) | ratio | compose T=100 | ratio | compose T=1e4 | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    worst = {"renyi": 0.0, "compose": 0.0}
    for n in ns:
        cases = {
            "q": lambda n=n: api.epsilon(1.0, n, 1e-6),
            "renyi": lambda n=n: comp.rdp_curve(1.0, n),
            "c100": cold(lambda n=n: comp.compose(eps0=1.0, n=n, T=100)),
            "c1e4": cold(lambda n=n: comp.compose(eps0=1.0, n=n, T=10**4)),
        }
        for fn in cases.values():  # warm-up (imports, first-call allocations)
            fn()
        m = medians(cases, args.repeats, args.clock, args.stat)
        q = m["q"]
        r, c1, c2 = m["renyi"] / q, m["c100"] / q, m["c1e4"] / q
        worst["renyi"] = max(worst["renyi"], r)
        worst["compose"] = max(worst["compose"], c1, c2)
        print(f"| {n:.0e} | {q * 1e3:.1f} | {m['renyi'] * 1e3:.1f} | {r:.1f} | {m['c100'] * 1e3:.1f} | {c1:.1f} "
              f"| {m['c1e4'] * 1e3:.1f} | {c2:.1f} |", flush=True)
    print(f"\nworst ratios: renyi curve {worst['renyi']:.1f} (target 10), compose {worst['compose']:.1f} (target 50)")
    if args.randomizer:
        randomizer_table([10**3, 10**4, 10**6] if args.quick else [10**3, 10**4, 10**5, 10**6], args.repeats)


def renyi_table(ns: list[int], repeats: int, clock: str, stat: str) -> None:
    """The Renyi curve (40 default orders, rtol 1e-3) next to one clones query at each n."""
    print(f"{stat} {clock} ms over {repeats} interleaved runs; ratio = curve / single query at the same n\n")
    print("| n | single eps query | renyi curve (40 orders) | ratio |")
    print("|---|---|---|---|")
    worst = 0.0
    for n in ns:
        cases = {"q": lambda n=n: api.epsilon(1.0, n, 1e-6), "renyi": lambda n=n: comp.rdp_curve(1.0, n)}
        for fn in cases.values():
            fn()
        m = medians(cases, repeats, clock, stat)
        worst = max(worst, m["renyi"] / m["q"])
        print(f"| {n:.0e} | {m['q'] * 1e3:.1f} | {m['renyi'] * 1e3:.1f} | {m['renyi'] / m['q']:.1f} |", flush=True)
    print(f"\nworst ratio: renyi curve {worst:.1f} (target 10)")


def randomizer_table(ns: list[int], repeats: int) -> None:
    """compose T = 100 with a deployed k-RR (k = 10) against the clones query and generic compose."""
    from shuffle_accountant.randomizers import RandomizerFamily

    fam = RandomizerFamily.named("krr", k=10)
    print("\n| n | single eps query | compose T=100 (generic) | compose T=100 --randomizer krr --k 10 | ratio to query "
          "| ratio to generic | eps: generic best / blanket PLD |")
    print("|---|---|---|---|---|---|---|")
    for n in ns:
        results: dict[str, object] = {}

        def blanket(n: int = n) -> object:
            pld._blanket_pld.cache_clear()  # noqa: SLF001 - a cold PLD
            results["b"] = comp.compose(eps0=1.0, n=n, T=100, method="stronger-clones", randomizer=fam)
            return results["b"]

        def generic(n: int = n) -> object:
            results["g"] = cold(lambda: comp.compose(eps0=1.0, n=n, T=100, method="stronger-clones"))()
            return results["g"]

        cases = {"q": lambda n=n: api.epsilon(1.0, n, 1e-6), "g": generic, "b": blanket}
        for fn in cases.values():
            fn()
        m = medians(cases, repeats)
        eg = min(x.value for x in results["g"].bounds if x.value is not None)  # type: ignore[attr-defined]
        eb = next(x.value for x in results["b"].bounds if x.method == "pld")  # type: ignore[attr-defined]
        print(f"| {n:.0e} | {m['q'] * 1e3:.1f} | {m['g'] * 1e3:.1f} | {m['b'] * 1e3:.1f} | {m['b'] / m['q']:.0f} "
              f"| {m['b'] / m['g']:.1f} | {eg:.5g} / {eb:.5g} |", flush=True)


if __name__ == "__main__":
    main()

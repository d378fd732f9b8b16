"""Benchmark (issue 13): Renyi curve and compose, each next to a single clones eps(delta) query
at the same n, measured in the same run (the machine is shared: ratios, not absolute times,
are what compare across runs).

For every eps0 (``--eps0``; default 0.5, 1, 2, 3, 4, 6, with ``--quick`` 1 and 4: the curve's regimes
move with eps0, and eps0 = 2..6 were once 100-2000x slower than eps0 = 1 at some n) and every n: the
median wall-clock time of ``api.epsilon(eps0, n, delta=1e-6)`` (the reference), of
``composition.rdp_curve(eps0, n)`` (40 default orders, rtol 1e-3), and of
``composition.compose(eps0, n, T)`` with all three routes for T = 100 and 10^4 (the PLD
route's per-round caches are cleared before each run, so every run is cold). Repetitions
interleave the cases, so that load changes hit them alike. The one-off dp_accounting import
(~1 s) is paid before timing. Targets: the curve <= 10 reference queries, compose <= 50.

With ``--randomizer``: a second table for ``compose --randomizer krr --k 10`` (the PLD and
advanced routes compose the exact blanket bound, built from few evaluations of it), T = 100,
next to the single clones query and the generic compose at the same n (blanket PLDs cleared
before each run; the blanket engines' own per-(n, k, eps0) cache is not, so repeated runs
measure a warm engine).

Run: python benchmarks/bench_renyi_compose.py [--repeats R] [--quick] [--randomizer] [--clock cpu] [--stat min]
[--eps0 1,3] [--ns 3e3,5e3 | --ns 3e3 5e3] (these eps0 and n only) [--renyi-only] (the curve and the query only: a
quick check of the curve's ratio; also at n = 5e3, 3e4, 3e6, where the curve changes regime at eps0 = 1, and 1e5, 3e5,
5e6, the worst n at eps0 = 3, 4, 6) [--old-rev REV] (with --renyi-only: also the curve of the package at git revision
REV, extracted to a temporary directory and timed in a subprocess between this process's repetitions, same clock
and statistic)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Callable

from shuffle_accountant import api, pld
from shuffle_accountant import composition as comp

NS = [10, 100, 10**3, 3 * 10**3, 10**4, 10**5, 10**6, 10**7, 10**9]  # 3e3: the Renyi curve's worst case
#: --renyi-only: also n where the curve changes regime (measured worst ratios, 2026-11-23 evening): 2e3, 4e3 (two slabs;
#: the large orders' slab extended downwards), 5e3 (slab plus blocks below it), 2e4, 3e4 (no slab), 2e6, 3e6 (kernels
#: beyond 6000 terms went to cells; the term-by-term limit is 12000 since), 5e6 (cells)
RENYI_NS = sorted(NS + [2 * 10**3, 4 * 10**3, 5 * 10**3, 2 * 10**4, 3 * 10**4, 31623, 46416, 68129, 3 * 10**5,
                        2 * 10**6, 2154435, 3 * 10**6, 5 * 10**6])
#: eps0 swept by default (``--quick``: EPS0_QUICK): the worst n of the curve moves up with eps0 (2026-11-23 sweep:
#: eps0 = 2 at n ~ 2e4, 3 at 1e5, 4 at 3e5, 6 at 5e6; 2026-11-24, on the logspace(1, 9, 20) grid: 3 and 4 at
#: n = 68129, 6 at 2154435, which RENYI_NS includes; 31623 and 46416: where eps0 = 2 / 3 changed regime
#: with the wider slabs of that day)
EPS0 = [0.5, 1.0, 2.0, 3.0, 4.0, 6.0]
EPS0_QUICK = [1.0, 4.0]


def cold(fn: Callable[[], object]) -> Callable[[], object]:
    """``fn`` with the PLD route's per-round caches cleared first."""

    def run() -> object:
        pld.round_tails.cache_clear()
        pld._pair_pld.cache_clear()  # noqa: SLF001 - a cold measurement
        return fn()

    return run


#: ``--clock cpu`` (process time: steadier on a shared machine) or ``wall``; ``--stat min`` or ``median``.
CLOCK: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.process_time}
STAT: dict[str, Callable[[list[float]], float]] = {"median": statistics.median, "min": min}


def medians(cases: dict[str, Callable[[], object]], repeats: int, clock: str = "wall",
            stat: str = "median", between: Callable[[], object] | None = None) -> dict[str, float]:
    """The ``stat`` over ``repeats`` interleaved runs of each case, timed by ``clock``; ``between``
    (untimed here) runs after each repetition."""
    now = CLOCK[clock]
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(repeats):
        for name, fn in cases.items():
            t = now()
            fn()
            times[name].append(now() - t)
        if between is not None:
            between()
    return {name: STAT[stat](ts) for name, ts in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="n = 1e3, 3e3, 1e4, 1e6 only")
    ap.add_argument("--randomizer", action="store_true", help="also compose a deployed k-RR (blanket routes)")
    ap.add_argument("--clock", choices=sorted(CLOCK), default="wall", help="cpu: process time (steadier under load)")
    ap.add_argument("--stat", choices=sorted(STAT), default="median")
    ap.add_argument("--renyi-only", action="store_true", help="only the Renyi curve next to the query (no compose)")
    ap.add_argument("--old-rev", default=None, help="with --renyi-only: also time the curve at this git revision")
    ap.add_argument("--ns", default=None, nargs="+",
                    help="these n, comma- or space-separated (e.g. 3e3,5e3 3e4)")
    ap.add_argument("--eps0", default=None, nargs="+",
                    help=f"these eps0, comma- or space-separated (default {EPS0}; --quick: {EPS0_QUICK})")
    args = ap.parse_args()
    eps0s = _numbers(args.eps0, float) if args.eps0 else EPS0_QUICK if args.quick else EPS0
    if args.renyi_only:
        ns = (_numbers(args.ns, lambda x: int(float(x))) if args.ns else
              [10**3, 3 * 10**3, 10**4, 10**6] if args.quick else RENYI_NS)
        renyi_table(eps0s, ns, args.repeats, args.clock, args.stat, args.old_rev)
        return
    ns = _numbers(args.ns, lambda x: int(float(x))) if args.ns else [10**3, 3 * 10**3, 10**4, 10**6] if args.quick else NS
    try:
        pld.import_dp_accounting()
    except pld.PldUnavailable:
        print(f"(PLD route not installed: compose runs without it; {pld.PLD_INSTALL})\n")
    print(f"{args.stat} {args.clock} ms over {args.repeats} interleaved runs; ratio = time / single query at the same n\n")
    print("| eps0 | n | single eps query | renyi curve (40 orders) | ratio | compose T=100 | ratio | compose T=1e4 "
          "| ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    worst = {"renyi": 0.0, "compose": 0.0}
    for eps0, n in ((e, n) for e in eps0s for n in ns):
        cases: dict[str, Callable[[], object]] = {
            "q": partial(api.epsilon, eps0, n, 1e-6),
            "renyi": partial(comp.rdp_curve, eps0, n),
            "c100": cold(partial(comp.compose, eps0=eps0, n=n, T=100)),
            "c1e4": cold(partial(comp.compose, eps0=eps0, n=n, T=10**4)),
        }
        for fn in cases.values():  # warm-up (imports, first-call allocations)
            fn()
        m = medians(cases, args.repeats, args.clock, args.stat)
        q = m["q"]
        r, c1, c2 = m["renyi"] / q, m["c100"] / q, m["c1e4"] / q
        worst["renyi"] = max(worst["renyi"], r)
        worst["compose"] = max(worst["compose"], c1, c2)
        print(f"| {eps0:g} | {n:.3g} | {q * 1e3:.1f} | {m['renyi'] * 1e3:.1f} | {r:.1f} | {m['c100'] * 1e3:.1f} | {c1:.1f} "
              f"| {m['c1e4'] * 1e3:.1f} | {c2:.1f} |", flush=True)
    print(f"\nworst ratios: renyi curve {worst['renyi']:.1f} (target 10), compose {worst['compose']:.1f} (target 50)")
    if args.randomizer:
        randomizer_table([10**3, 10**4, 10**6] if args.quick else [10**3, 10**4, 10**5, 10**6], args.repeats)


def _numbers(args: list[str], convert: Callable[[str], float]) -> list:
    """Command-line numbers given comma- or space-separated."""
    return [convert(x) for arg in args for x in arg.split(",") if x]


def renyi_table(eps0s: list[float], ns: list[int], repeats: int, clock: str, stat: str,
                old_rev: str | None = None) -> None:
    """The Renyi curve (40 default orders, rtol 1e-3) next to one clones query at each (eps0, n); with
    ``old_rev``, the curve of that revision too (a subprocess per repetition, between this one's runs)."""
    old: dict[tuple[float, int], list[float]] = {(e, n): [] for e in eps0s for n in ns}
    tmp = None
    if old_rev is not None:
        tmp = tempfile.TemporaryDirectory()
        root = Path(__file__).resolve().parents[1]
        archive = subprocess.run(["git", "-C", str(root), "archive", old_rev, "shuffle_accountant"], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp.name], input=archive, check=True)
    print(f"{stat} {clock} ms over {repeats} interleaved runs; ratio = curve / single query at the same n\n")
    head = "| eps0 | n | single eps query | renyi curve (40 orders) | ratio |"
    print(head + (f" curve at {old_rev} | old ratio |" if old_rev else ""))
    print("|---|---|---|---|---|" + ("---|---|" if old_rev else ""))
    worst: dict[float, tuple[float, int]] = {}
    for eps0, n in ((e, n) for e in eps0s for n in ns):
        cases: dict[str, Callable[[], object]] = {"q": partial(api.epsilon, eps0, n, 1e-6),
                                                  "renyi": partial(comp.rdp_curve, eps0, n)}
        for fn in cases.values():
            fn()
        between = None if tmp is None else partial(_old_curve_time, tmp.name, eps0, n, clock, old[eps0, n])
        m = medians(cases, repeats, clock, stat, between)
        worst[eps0] = max(worst.get(eps0, (0.0, n)), (m["renyi"] / m["q"], n))
        line = f"| {eps0:g} | {n:.3g} | {m['q'] * 1e3:.1f} | {m['renyi'] * 1e3:.1f} | {m['renyi'] / m['q']:.1f} |"
        if tmp is not None:
            o = STAT[stat](old[eps0, n])
            line += f" {o * 1e3:.1f} | {o / m['q']:.1f} |"
        print(line, flush=True)
    print("\nworst ratio of the renyi curve (target 10): "
          + ", ".join(f"eps0 = {e:g}: {r:.1f} at n = {n:.3g}" for e, (r, n) in worst.items()))
    if tmp is not None:
        tmp.cleanup()


def _old_curve_time(path: str, eps0: float, n: int, clock: str, into: list[float]) -> None:
    """One timed curve (after one untimed warm-up) of the package extracted at ``path``, in a subprocess,
    appended to ``into``."""
    code = ("import json, time\nfrom shuffle_accountant import composition as comp\n"
            f"now = time.{'process_time' if clock == 'cpu' else 'perf_counter'}\n"
            f"comp.rdp_curve({eps0!r}, {n})\nt = now()\ncomp.rdp_curve({eps0!r}, {n})\nprint(json.dumps(now() - t))")
    env = dict(os.environ, PYTHONPATH=path)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env, cwd=path)
    into.append(float(json.loads(out.stdout)))


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

        cases: dict[str, Callable[[], object]] = {"q": partial(api.epsilon, 1.0, n, 1e-6), "g": generic, "b": blanket}
        for fn in cases.values():
            fn()
        m = medians(cases, repeats)
        eg = min(x.value for x in results["g"].bounds if x.value is not None)  # type: ignore[attr-defined]
        eb = next(x.value for x in results["b"].bounds if x.method == "pld")  # type: ignore[attr-defined]
        print(f"| {n:.3g} | {m['q'] * 1e3:.1f} | {m['g'] * 1e3:.1f} | {m['b'] * 1e3:.1f} | {m['b'] / m['q']:.0f} "
              f"| {m['b'] / m['g']:.1f} | {eg:.5g} / {eb:.5g} |", flush=True)


if __name__ == "__main__":
    main()

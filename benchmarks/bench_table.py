"""Benchmark for ``shuffle-acct table`` (issues 4 and 13): a 7 x 5 x 2 grid (n x eps0 x delta)
with every method (k = 4, so the k-RR methods are included), single process and ``--jobs 2``.

Run:  python benchmarks/bench_table.py [--repeats R] [--jobs J] [--clock cpu]

Grid: n = 1e3 ... 1e9 (7 log steps), eps0 in {0.5, 1, 2, 4, 8}, delta in {1e-6, 1e-9};
every method (70 cells each). Prints a Markdown table of wall-clock times (median of R runs), the
time per cell next to the median single clones ``epsilon`` query over the grid's points
measured in the same run (issue 13's target: at most one single query per cell, serial),
and the slowest methods' share. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict

from shuffle_accountant import api, tables

GRID = {"n": "1e3:1e9:7:log", "eps0": [0.5, 1, 2, 4, 8], "delta": [1e-6, 1e-9], "methods": "all", "k": 4}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                    help="cpu: process time (steadier under load; the parallel row then counts this process only)")
    args = ap.parse_args()
    now = time.process_time if args.clock == "cpu" else time.perf_counter
    grid = tables.Grid.from_dict(GRID)
    cells = len(grid.points())
    rows = []
    reference = None
    for jobs in (1, args.jobs):
        times = []
        for _ in range(args.repeats):
            t = now()
            table = tables.evaluate(grid, jobs=jobs)
            times.append(now() - t)
        if reference is None:
            reference = table.cells
        assert table.cells == reference, "parallel table differs from the serial one"
        rows.append((jobs, statistics.median(times)))
    # the reference: one certified clones eps(delta) query at each of the grid's (n, eps0, delta)
    singles = []
    for p in grid.points():
        if p["method"] == "clones":
            t = now()
            api.epsilon(p["eps0"], p["n"], p[grid.target_axis], "clones")
            singles.append(now() - t)
    q = statistics.median(singles)
    print(f"grid: 7 n x 5 eps0 x 2 delta x {len(grid.methods)} methods = {cells} cells\n")
    print(f"median single clones query over the grid's points: {1000 * q:.1f} ms\n")
    print("| jobs | wall time (s) | ms / cell | cell / single query |")
    print("|---|---|---|---|")
    for jobs, t in rows:
        print(f"| {jobs} | {t:.1f} | {1000 * t / cells:.1f} | {t / cells / q:.2f} |")
    # where the time goes (serial, per method)
    per_method: dict[str, float] = defaultdict(float)
    for p in grid.points():
        t = now()
        tables.evaluate_cell(grid.quantity, p, grid.k, grid.rtol)
        per_method[p["method"]] += now() - t
    print("\n| method | serial time (s) |")
    print("|---|---|")
    for m, t in sorted(per_method.items(), key=lambda kv: -kv[1]):
        print(f"| {m} | {t:.2f} |")


if __name__ == "__main__":
    main()

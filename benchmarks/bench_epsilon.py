"""Benchmark for ``shuffle-acct epsilon`` (issue 2): medians in process and as a whole CLI process.

Run:  python benchmarks/bench_epsilon.py [--repeats R] [--quick]

Prints a Markdown table of median wall-clock times for the certified clones eps(delta)
(rtol 1e-6) over n in {1e3, 1e4, 1e5, 1e6, 1e8, 1e9}, eps0 in {0.5, 1, 2, 4, 8},
delta in {1e-6, 1e-10}; then the median of a whole `shuffle-acct epsilon` process.
Targets (2-core machine): in-process clones query <= 50 ms median; CLI process <= 1 s.
Not part of the test suite: tests check correctness, this measures speed.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

from shuffle_accountant import api

NS = [10**3, 10**4, 10**5, 10**6, 10**8, 10**9]
EPS0S = [0.5, 1.0, 2.0, 4.0, 8.0]
DELTAS = [1e-6, 1e-10]


def median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="only delta = 1e-6 and three eps0 values")
    args = ap.parse_args()
    deltas = DELTAS[:1] if args.quick else DELTAS
    eps0s = [0.5, 2.0, 8.0] if args.quick else EPS0S
    print("In-process `api.epsilon(method='clones', rtol=1e-6)`, median ms over", args.repeats, "runs\n")
    for delta in deltas:
        print(f"delta = {delta:g}\n")
        print("| n | " + " | ".join(f"eps0={e:g}" for e in eps0s) + " |")
        print("|---|" + "---|" * len(eps0s))
        worst = 0.0
        for n in NS:
            cells = []
            for e in eps0s:
                m = median_time(lambda: api.epsilon(e, n, delta, "clones"), args.repeats) * 1000
                worst = max(worst, m)
                cells.append(f"{m:.1f}")
            print(f"| {n:.0e} | " + " | ".join(cells) + " |", flush=True)
        print(f"\nworst median: {worst:.1f} ms (target 50 ms)\n")
    cmd = [sys.executable, "-m", "shuffle_accountant", "epsilon", "--eps0", "3", "--n", "10000"]
    m = median_time(lambda: subprocess.run(cmd, check=True, capture_output=True), args.repeats)
    print(f"whole CLI process `shuffle-acct epsilon --eps0 3 --n 10000`: median {m * 1000:.0f} ms (target 1000 ms)")


if __name__ == "__main__":
    main()

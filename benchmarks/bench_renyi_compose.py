"""Benchmark: RDP curve (40 orders) and compose (T = 1000) in process. Prints medians.

Run: python benchmarks/bench_renyi_compose.py [repeats]
"""

from __future__ import annotations

import statistics
import sys
import timeit

from shuffle_accountant import composition as comp
from shuffle_accountant.numeric.renyi import DEFAULT_ORDERS


def median_time(fn, repeats: int) -> float:
    return statistics.median(timeit.repeat(fn, number=1, repeat=repeats))


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    cases = [
        ("rdp_curve 40 orders, eps0=1, n=1e6 (target 1 s)", lambda: comp.rdp_curve(1.0, 10**6, orders=DEFAULT_ORDERS)),
        ("rdp_curve 40 orders, eps0=1, n=1e9 (target 1 s)", lambda: comp.rdp_curve(1.0, 10**9, orders=DEFAULT_ORDERS)),
        ("compose T=1000, eps0=1, n=1e6, all routes (target 5 s)",
         lambda: comp.compose(eps0=1.0, n=10**6, T=1000)),
    ]
    print(f"{'case':60s} median (s)")
    for name, fn in cases:
        print(f"{name:60s} {median_time(fn, repeats):.3f}", flush=True)


if __name__ == "__main__":
    main()

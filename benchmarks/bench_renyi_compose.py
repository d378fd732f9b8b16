"""Benchmark: RDP curve (40 orders), compose (T = 1000) and its PLD route alone, in
process. Prints medians. The PLD cases need the ``[pld]`` extra (skipped otherwise); the
one-off dp_accounting import (~1 s) is paid before timing.

Run: python benchmarks/bench_renyi_compose.py [repeats]
"""

from __future__ import annotations

import statistics
import sys
import timeit

from shuffle_accountant import composition as comp
from shuffle_accountant import pld
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
    try:
        pld.import_dp_accounting()
        cases += [
            ("PLD route alone, T=1000, eps0=1, n=1e6 (target 5 s)",
             lambda: pld.pld_route([(1.0, 10**6, 1000)], 1e-6, "clones", None)),
            ("PLD route alone, T=1000, eps0=1, n=1e3 (target 5 s)",
             lambda: pld.pld_route([(1.0, 1000, 1000)], 1e-6, "clones", None)),
            ("PLD interop: shuffled_round_pld eps0=3, n=1e4", lambda: pld.round_pld(3.0, 10**4)),
        ]
    except pld.PldUnavailable:
        print(f"PLD cases skipped: {pld.PLD_INSTALL}")
    print(f"{'case':60s} median (s)")
    for name, fn in cases:
        print(f"{name:60s} {median_time(fn, repeats):.3f}", flush=True)


if __name__ == "__main__":
    main()

"""Median wall time of the pure plug-in's sums, histograms, checks and planners (not part
of the test suite).

Run: ``python benchmarks/bench_pure.py`` (about a minute on a shared 2-core machine).
"""

from __future__ import annotations

import statistics
import time
from typing import Callable

from shuffle_accountant.plugins.pure import histogram, inverse, realsum


def _time(fn: Callable[[], object], reps: int = 3) -> float:
    out = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return statistics.median(out) * 1000.0


def main() -> None:
    eps = 1.0
    cases: list[tuple[str, int, Callable[[], object]]] = []
    for n in (10**4, 10**6, 10**9):
        cases += [
            ("sum L=8 mse", n, lambda n=n: realsum.real_sum(eps, n, 8)),
            ("sum L=8 uniform", n, lambda n=n: realsum.real_sum(eps, n, 8, split="uniform")),
            ("histogram k=1000", n, lambda n=n: histogram.histogram(eps, n, 1000)),
            ("histogram check", n, lambda n=n: histogram.histogram(eps, n, 1000).check()),
            ("plan eps (count)", n, lambda n=n: inverse.least_eps(inverse.Task("count"), n, 3.0)),
            ("plan rho (histogram)", n, lambda n=n: inverse.largest_rho(inverse.Task("histogram", k=100), eps, n, 30.0)),
        ]
    cases += [
        ("sum L=6 check", 10**4, lambda: realsum.real_sum(eps, 10**4, 6).check()),
        ("plan n (count)", 0, lambda: inverse.smallest_n(inverse.Task("count"), eps, 0.01)),
        ("plan n (histogram)", 0, lambda: inverse.smallest_n(inverse.Task("histogram", k=100), eps, 0.01)),
        ("plan n (sum L=6)", 0, lambda: inverse.smallest_n(inverse.Task("sum", bits=6), eps, 0.001)),
        ("plan bits (sum)", 10**6, lambda: inverse.fewest_bits(inverse.Task("sum"), eps, 10**6, 5.0)),
    ]
    print(f"{'computation':<22} {'n':>8} {'median ms':>10}")
    for name, n, fn in cases:
        print(f"{name:<22} {(f'{n:.0e}' if n else '-'):>8} {_time(fn):>10.1f}")


if __name__ == "__main__":
    main()

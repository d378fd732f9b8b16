"""Median wall time of the robust/pure solvers (not part of the test suite).

Run: ``python benchmarks/bench_robust_pure.py``. Each solver is timed on fresh inputs
(caches cleared between repetitions) for n = 1e4 ... 1e9; target <= 100 ms each.
"""

from __future__ import annotations

import statistics
import time

from shuffle_accountant.plugins.pure import count
from shuffle_accountant.plugins.robust import bitsum, noise, structures


def _time(fn, reps: int = 5) -> float:
    out = []
    for _ in range(reps):
        noise._mass.cache_clear()
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return statistics.median(out) * 1000.0


def main() -> None:
    eps, target, gamma = 1.0, 1e-6, 0.9
    cases = []
    for n in (10**4, 10**6, 10**9):
        for law in noise.LAWS:
            cases.append((f"noise {law}", n, lambda law=law, n=n: noise.solve_noise(law, n, eps, target, gamma=gamma)))
        for proto in bitsum.PROTOCOLS:
            cases.append((f"bitsum {proto}", n, lambda proto=proto, n=n: bitsum.bitsum_plan(proto, n, eps, target, gamma)))
        cases.append(("histogram k=1000", n, lambda n=n: structures.histogram(1000, n, eps, target, gamma=gamma)))
        cases.append(("pan counter", n, lambda n=n: structures.pan_counter(n, eps, target)))
        cases.append(("distinct k=1000", n, lambda n=n: structures.distinct_elements(n, 1000, eps, target, gamma=gamma)))
        cases.append(("pure theorem6", n, lambda n=n: count.theorem6(eps, n, 0.5)))
        cases.append(("pure optimise", n, lambda n=n: count.optimise(eps, n, 0.5)))
    cases.append(("bitsum n for 0.1%", 0, lambda: noise.users_for_error(
        lambda m: bitsum.bitsum_plan("lecture", m, eps, target, gamma).exact.rmse, 1e-3, relative=True)))
    print(f"{'solver':<20} {'n':>12} {'median ms':>10}")
    for name, n, fn in cases:
        print(f"{name:<20} {n:>12.0e} {_time(fn):>10.2f}")


if __name__ == "__main__":
    main()

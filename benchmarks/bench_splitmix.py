"""Benchmark of the split-and-mix plug-in (not part of the test suite).

    python benchmarks/bench_splitmix.py            # closed forms + a few exact sizes
    python benchmarks/bench_splitmix.py --sweep    # also: largest n answered within 10 s

Prints a table of median wall-clock times. Targets: ``messages`` and ``security`` are
closed forms, at most 1 ms each.
"""

from __future__ import annotations

import argparse
import statistics
import time
import timeit
from collections.abc import Callable
from typing import Any

from shuffle_accountant.plugin_api import CertificationError
from shuffle_accountant.plugins.splitmix import (
    bbgn_messages,
    bbgn_sigma,
    dp_sum_plan,
    exact_distance,
    lower_bound_messages,
    messages_needed,
    security_bounds,
    solve_dp_sum,
)


def median_seconds(fn: Callable[[], Any], repeat: int) -> float:
    return statistics.median(timeit.repeat(fn, number=1, repeat=repeat))


def closed_forms() -> list[tuple[str, float]]:
    q = 10**4 * 2**32
    cases: list[tuple[str, Callable[[], Any]]] = [
        ("bbgn_messages(1e4, 1e4*2^32, 40)", lambda: bbgn_messages(10**4, q, 40.0)),
        ("bbgn_sigma(1e4, 12, 1e4*2^32)", lambda: bbgn_sigma(10**4, 12, q)),
        ("lower_bound_messages(1e4, 1e4*2^32, 40)", lambda: lower_bound_messages(10**4, q, 40.0)),
        ("messages_needed(1e4, 40, 1e4*2^32)  [API: messages]", lambda: messages_needed(10**4, 40.0, q)),
        ("messages_needed(1e9, 128, 2^64)", lambda: messages_needed(10**9, 128.0, 2**64)),
        ("security_bounds(1e4, 12, 1e4*2^32)  [API: security]", lambda: security_bounds(10**4, 12, q)),
        ("security_bounds(1e9, 20, 2^64)", lambda: security_bounds(10**9, 20, 2**64)),
        ("dp_sum_plan(1e4, 1, 1e-6)  [API: dp-sum]", lambda: dp_sum_plan(10**4, 1.0, 1e-6)),
        ("dp_sum_plan(1e9, 0.1, 1e-12)", lambda: dp_sum_plan(10**9, 0.1, 1e-12)),
        ("dp_sum_plan(1e9, 0.1, 1e-12, gamma=0.5)", lambda: dp_sum_plan(10**9, 0.1, 1e-12, honest_fraction=0.5)),
    ]
    out = [(name, median_seconds(fn, 201)) for name, fn in cases]
    solves: list[tuple[str, Callable[[], Any]]] = [
        ("solve_dp_sum(n, rmse_mean 1e-3)  [API: dp-sum-solve]", lambda: solve_dp_sum("n", 1.0, 1e-6, 1e-3, "rmse_mean")),
        ("solve_dp_sum(n, rmse_mean 1e-8, gamma 0.5)",
         lambda: solve_dp_sum("n", 1.0, 1e-6, 1e-8, "rmse_mean", honest_fraction=0.5)),
        ("solve_dp_sum(precision, n 1e4, rmse 1.6)", lambda: solve_dp_sum("precision", 1.0, 1e-6, 1.6, "rmse", n=10**4)),
        ("solve_dp_sum(messages, n 1e9, mse 9.5)", lambda: solve_dp_sum("messages", 0.5, 1e-9, 9.5, "mse", n=10**9)),
    ]
    return out + [(name, median_seconds(fn, 11)) for name, fn in solves]


def exact_points() -> list[tuple[str, float]]:
    sizes = [(10, 3, 3), (100, 6, 2), (30, 4, 3), (12, 4, 4), (6, 3, 7)]
    return [(f"exact_distance{size}", median_seconds(lambda s=size: exact_distance(*s), 3)) for size in sizes]


def largest_within(q: int, m: int, budget: float = 10.0) -> tuple[int, float]:
    """Largest n (on a coarse grid) whose exact distance is answered within ``budget`` s."""
    best, best_t, n = 0, 0.0, 2
    while True:
        start = time.perf_counter()
        try:
            exact_distance(n, m, q)
        except CertificationError:
            return best, best_t
        elapsed = time.perf_counter() - start
        if elapsed > budget:
            return best, best_t
        best, best_t = n, elapsed
        n = n + max(1, n // 4)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sweep", action="store_true", help="find the largest n answered within 10 s")
    args = parser.parse_args()
    rows = closed_forms() + exact_points()
    width = max(len(name) for name, _ in rows)
    print(f"{'case':<{width}}  median")
    print(f"{'-' * width}  --------")
    for name, seconds in rows:
        shown = f"{seconds * 1e6:8.1f} us" if seconds < 1e-3 else f"{seconds:8.3f} s"
        print(f"{name:<{width}}  {shown}")
    if args.sweep:
        print("\nlargest n answered by exact_distance within 10 s (grid n -> n + n//4)")
        print("q   m   n     seconds")
        for q, m in [(2, 3), (2, 6), (2, 10), (3, 3), (3, 4), (3, 6), (4, 3), (4, 4), (5, 3), (7, 3), (11, 3)]:
            n, t = largest_within(q, m)
            print(f"{q:<3} {m:<3} {n:<5} {t:6.2f}", flush=True)


if __name__ == "__main__":
    main()

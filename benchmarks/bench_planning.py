"""Benchmark (issue 13): the planners with composed rounds, each next to a single clones
eps(delta) query at the same n, measured in the same run.

Questions (clones, delta = 1e-6 unless stated):

- ``solve n --eps 1 --eps0 1 --rounds 10`` (answer n ~ 400);
- ``solve n --eps 0.5 --delta 1e-8 --eps0 2 --rounds 100`` (answer n ~ 1.7e5);
- ``solve eps0 --eps 1 --n 1e5 --rounds 50 --rtol 1e-3`` and the same at the default rtol 1e-6;
- ``solve eps0 --eps 2 --n 1e4 --rounds 1000``.

The reference query runs at the question's n (for ``solve n``: at the answer). Every run is
cold (the PLD route's per-round caches are cleared). Repetitions interleave question and
reference. Target: each question <= 100 reference queries.

Run: python benchmarks/bench_planning.py [--repeats R] [--clock cpu] [--stat min]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Callable

from shuffle_accountant import api, pld, planning

QUESTIONS: list[tuple[str, Callable[[], object], int | None]] = [
    ("solve n eps=1 eps0=1 T=10", lambda: planning.solve_n(1.0, 1e-6, 1.0, rounds=10), None),
    ("solve n eps=0.5 delta=1e-8 eps0=2 T=100", lambda: planning.solve_n(0.5, 1e-8, 2.0, rounds=100), None),
    ("solve eps0 eps=1 n=1e5 T=50 rtol=1e-3", lambda: planning.solve_eps0(1.0, 1e-6, 10**5, rounds=50, rtol=1e-3), 10**5),
    ("solve eps0 eps=1 n=1e5 T=50 rtol=1e-6", lambda: planning.solve_eps0(1.0, 1e-6, 10**5, rounds=50), 10**5),
    ("solve eps0 eps=2 n=1e4 T=1000", lambda: planning.solve_eps0(2.0, 1e-6, 10**4, rounds=1000), 10**4),
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall", help="cpu: process time (steadier under load)")
    ap.add_argument("--stat", choices=["median", "min"], default="median")
    args = ap.parse_args()
    now = time.process_time if args.clock == "cpu" else time.perf_counter
    stat = min if args.stat == "min" else statistics.median
    try:
        pld.import_dp_accounting()
    except pld.PldUnavailable:
        print(f"(PLD route not installed: the solvers use RDP and advanced composition; {pld.PLD_INSTALL})\n")
    print(f"{args.stat} {args.clock} ms over {args.repeats} interleaved runs; ratio = time / single query at the same n\n")
    print("| question | answer | n | single eps query | question | ratio |")
    print("|---|---|---|---|---|---|")
    worst = 0.0
    for name, fn, n in QUESTIONS:
        answer = fn()  # warm-up; gives the answer (and n for solve n)
        n_ref = int(answer.value) if n is None else n  # type: ignore[attr-defined]
        ts, qs = [], []
        for _ in range(args.repeats):
            pld.round_tails.cache_clear()
            pld._pair_pld.cache_clear()  # noqa: SLF001 - a cold measurement
            t = now()
            fn()
            ts.append(now() - t)
            t = now()
            api.epsilon(1.0, n_ref, 1e-6)
            qs.append(now() - t)
        t_med, q_med = stat(ts), stat(qs)
        worst = max(worst, t_med / q_med)
        print(f"| {name} | {answer.value:.6g} | {n_ref:.3g} | {q_med * 1e3:.1f} | {t_med * 1e3:.0f} | "  # type: ignore[attr-defined]
              f"{t_med / q_med:.1f} |", flush=True)
    print(f"\nworst ratio {worst:.1f} (target 100)")


if __name__ == "__main__":
    main()

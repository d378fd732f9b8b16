"""Benchmark for the single certified ``epsilon`` query (issues 2 and 13).

Run:  python benchmarks/bench_epsilon.py [--repeats R] [--quick] [--reference DIR] [--baseline DIR]

Prints a Markdown table of median wall-clock times (ms), and the least CPU time (``cpu ms``,
``time.process_time``: less disturbed by other work on a shared machine), of the certified clones
``api.epsilon(eps0, n, delta, "clones")`` (rtol 1e-6) for n in {1e3, 1e4, 1e6, 1e9} (plus
1e5 and 1e8 without ``--quick``), eps0 in {0.5, 1, 3, 8}, delta = 1e-6 (and 1e-10 without
``--quick``), and, when they are given, in the same run and interleaved repetition by
repetition (the machine is shared: compare the ratios, not absolute times across runs):

* ``--reference DIR`` (or the environment variable ``FMT21_REFERENCE``): a directory holding
  the public reference code of Feldman, McMillan, Talwar, "Hiding Among the Clones" (FOCS 2021,
  arXiv 2012.12803), ``computeamplification.py``; its ``numericalanalysis(n, eps0, delta, 10,
  100, True)`` (the settings of its own example) is timed in a separate process, one run per cell
  capped at ``--ref-cap`` seconds (slower cells are shown as ``>cap``); ``x ref`` compares wall
  times, ``x ref cpu`` CPU times. The reference is not part
  of this project and is not shipped with it.
* ``--baseline DIR``: a directory holding another version of the ``shuffle_accountant`` package
  (e.g. ``git archive <rev> shuffle_accountant | tar -x -C DIR``), timed in a separate process.

Targets (issue 13, 2-core machine): median <= 5 ms at n <= 1e6 and <= 10 ms at n = 1e9, and
at least 10x faster than the reference at every n >= 1e3. The whole ``shuffle-acct epsilon``
process is timed at the end (target 1 s). Not part of the test suite: tests check
correctness, this measures speed.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import statistics
import subprocess
import sys
import time

from shuffle_accountant import api

NS = [10**3, 10**4, 10**5, 10**6, 10**8, 10**9]
QUICK_NS = [10**3, 10**4, 10**6, 10**9]
EPS0S = [0.5, 1.0, 3.0, 8.0]
DELTAS = [1e-6, 1e-10]

#: A timing worker: reads ``n eps0 delta`` lines, answers with the seconds one call took.
_WORKER = r"""
import json, sys, time
kind, path = sys.argv[1], sys.argv[2]
sys.path.insert(0, path)
if kind == "ref":
    import computeamplification as ca
    def run(n, e, d):
        return ca.numericalanalysis(n, e, d, 10, 100, True)
else:
    from shuffle_accountant import api
    def run(n, e, d):
        return api.epsilon(e, n, d, "clones").value
for line in sys.stdin:
    n, e, d = json.loads(line)
    t, c = time.perf_counter(), time.process_time()
    v = run(int(n), float(e), float(d))
    print(json.dumps([time.perf_counter() - t, v, time.process_time() - c]), flush=True)
"""


class Worker:
    """A child process timing one implementation; restarted after a timeout."""

    def __init__(self, kind: str, path: str) -> None:
        self.kind, self.path = kind, path
        self.proc: subprocess.Popen[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        if self.proc is None:
            env = dict(os.environ)
            if self.kind == "baseline":
                env["PYTHONPATH"] = self.path
            self.proc = subprocess.Popen([sys.executable, "-c", _WORKER, self.kind, self.path], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, text=True, env=env)
        return self.proc

    def time(self, n: int, eps0: float, delta: float, cap: float) -> tuple[float, float] | None:
        """Wall and CPU seconds of one call, or None when it exceeded ``cap`` (the worker is then
        restarted)."""
        proc = self._start()
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps([n, eps0, delta]) + "\n")
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], cap)
        if not ready:
            self.close()
            return None
        line = proc.stdout.readline()
        if not line:  # the worker died (its error is on stderr above)
            self.close()
            sys.exit(f"bench_epsilon: the {self.kind} worker ({self.path}) stopped without an answer")
        got = json.loads(line)
        return float(got[0]), float(got[2])

    def close(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


def ours(n: int, eps0: float, delta: float) -> tuple[float, float]:
    """Wall and CPU seconds of one query in this process."""
    t, c = time.perf_counter(), time.process_time()
    api.epsilon(eps0, n, delta, "clones")
    return time.perf_counter() - t, time.process_time() - c


def _refuse(message: str) -> None:
    """Bad input: one clear line on stderr, exit code 2 (the project's convention), no traceback."""
    print(f"bench_epsilon: {message}", file=sys.stderr)
    sys.exit(2)


def fmt(x: float | None, cap: float) -> str:
    return f">{cap:g} s" if x is None else f"{x * 1000:.2f}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="n in 1e3, 1e4, 1e6, 1e9 and delta = 1e-6 only")
    ap.add_argument("--reference", default=os.environ.get("FMT21_REFERENCE"),
                    help="directory with the FMT21 reference computeamplification.py (not shipped)")
    ap.add_argument("--ref-cap", type=float, default=30.0, help="seconds allowed for one reference run")
    ap.add_argument("--baseline", default=None, help="directory holding another shuffle_accountant version")
    args = ap.parse_args()
    if args.reference and not os.path.isfile(os.path.join(args.reference, "computeamplification.py")):
        _refuse(f"--reference (or FMT21_REFERENCE) must be a directory holding the FMT21 computeamplification.py; "
                f"none found in {args.reference!r}")
    if args.baseline and not os.path.isdir(os.path.join(args.baseline, "shuffle_accountant")):
        _refuse(f"--baseline must be a directory holding a shuffle_accountant package; none found in {args.baseline!r}")
    deltas = DELTAS[:1] if args.quick else DELTAS
    ns = QUICK_NS if args.quick else NS
    ref = Worker("ref", args.reference) if args.reference else None
    base = Worker("baseline", args.baseline) if args.baseline else None
    for n in ns:  # warm up every code path once
        ours(n, 1.0, 1e-6)
    print(f"Certified clones eps(delta), rtol 1e-6: median wall ms and least CPU ms over {args.repeats} runs "
          "(one run for the reference), interleaved in one run\n")
    cols = (["ms", "cpu ms"] + (["baseline ms", "speed-up", "speed-up cpu"] if base else [])
            + (["FMT21 ref ms", "x ref", "ref cpu ms", "x ref cpu"] if ref else []))
    worst: dict[str, float] = {}
    for delta in deltas:
        print(f"delta = {delta:g}\n")
        print("| n | eps0 | " + " | ".join(cols) + " |")
        print("|---|---|" + "---|" * len(cols))
        for n in ns:
            for e in EPS0S:
                mine: list[tuple[float, float]] = []
                old: list[tuple[float, float]] = []
                ref_time: tuple[float, float] | None = None
                ref_done = False
                for _ in range(args.repeats):
                    mine.append(ours(n, e, delta))
                    if base is not None:
                        t_old = base.time(n, e, delta, 600.0)
                        if t_old is not None:
                            old.append(t_old)
                    if ref is not None and not ref_done:
                        ref_time, ref_done = ref.time(n, e, delta, args.ref_cap), True
                m = statistics.median(t for t, _ in mine)
                mc = min(c for _, c in mine)
                key = "n <= 1e6" if n <= 10**6 else "n > 1e6"
                worst[key] = max(worst.get(key, 0.0), m)
                cells = [f"{m * 1000:.2f}", f"{mc * 1000:.2f}"]
                if base is not None:
                    mo = statistics.median(t for t, _ in old) if old else None
                    co = min(c for _, c in old) if old else None
                    cells += [fmt(mo, 600.0), f"{mo / m:.1f}x" if mo else "-", f"{co / mc:.1f}x" if co else "-"]
                if ref is not None:
                    rw, rc = ref_time if ref_time is not None else (None, None)
                    cells += [fmt(rw, args.ref_cap), f"{rw / m:.0f}x" if rw else f">{args.ref_cap / m:.0f}x",
                              fmt(rc, args.ref_cap), f"{rc / mc:.0f}x" if rc else f">{args.ref_cap / mc:.0f}x"]
                print(f"| {n:.0e} | {e:g} | " + " | ".join(cells) + " |", flush=True)
        print()
    for key, w in worst.items():
        print(f"worst median at {key}: {w * 1000:.2f} ms (targets: 5 ms at n <= 1e6, 10 ms at 1e9)")
    for w in (ref, base):
        if w is not None:
            w.close()
    cmd = [sys.executable, "-m", "shuffle_accountant", "epsilon", "--eps0", "3", "--n", "10000"]
    times = []
    for _ in range(args.repeats):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append(time.perf_counter() - t)
    print(f"whole CLI process `shuffle-acct epsilon --eps0 3 --n 10000`: median {statistics.median(times) * 1000:.0f} ms "
          "(target 1000 ms)")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""10 M events into pandas DataFrames: gtrace.load() + every event table, against baselines of the same run.

    python3 bench/python/bench_dataframes.py [--trace FILE] [--gtrace build/native/viewer/cli/gtrace] [--repeat R]

Without --trace it writes the viewer benchmark's synthetic 10 M-event trace (bench_viewer --save-gtrace, the same
generator as docs/benchmarks.md's load numbers) into build/bench-python/ once. Baselines, on the same file:
  * `gtrace stats --json FILE` (the CLI: load on one thread + the per-name summaries), wall time
  * gtrace.load() alone (the model, no DataFrames)
Printed: wall seconds of each (best of R), the tables' thread CPU time, rows per second, and the ratios. PYTHONPATH must reach the gtrace package
(build/native/python, or an installed one).
"""
import argparse
import os
import subprocess
import sys
import time

import gtrace

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def best(fn, repeat):
    times, result = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), result


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trace")
    ap.add_argument("--gtrace", default=os.path.join(ROOT, "build/native/viewer/cli/gtrace"))
    ap.add_argument("--bench-viewer", default=os.path.join(ROOT, "build/native/bench/viewer/bench_viewer"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="gtrace.load threads (0 = one per CPU)")
    a = ap.parse_args()

    trace = a.trace
    if not trace:
        out = os.path.join(ROOT, "build/bench-python")
        trace = os.path.join(out, "bench_viewer_10M.gtrace")
        if not os.path.exists(trace):
            os.makedirs(out, exist_ok=True)
            print(f"writing {trace} with {a.bench_viewer} --save-gtrace ...", flush=True)
            subprocess.run([a.bench_viewer, "--sizes", "10", "--save-gtrace", out, "--no-build", "--frames", "1",
                            "--repeat", "1"], check=True, stdout=subprocess.DEVNULL)
    size_mb = os.path.getsize(trace) / 1e6
    print(f"trace: {trace} ({size_mb:.0f} MB), {os.cpu_count()} CPUs, load threads {a.threads or 'all'}")

    cli_s, _ = best(lambda: subprocess.run([a.gtrace, "stats", "--json", trace], check=True,
                                           stdout=subprocess.DEVNULL), a.repeat)
    tables = ("kernels", "api", "copies", "nvtx")
    load_s = tables_s = total_s = tables_cpu = float("inf")
    for _ in range(a.repeat):  # each round: a fresh load, then every table of it
        t0 = time.perf_counter()
        t = gtrace.load(trace, threads=a.threads)
        t1, c1 = time.perf_counter(), time.thread_time()
        dfs = [getattr(t, n) for n in tables]  # built on this thread: its CPU time is their cost
        t2, c2 = time.perf_counter(), time.thread_time()
        tables_cpu = min(tables_cpu, c2 - c1)
        load_s, tables_s, total_s = min(load_s, t1 - t0), min(tables_s, t2 - t1), min(total_s, t2 - t0)
    rows = sum(len(df) for df in dfs)
    mem = sum(df.memory_usage(deep=False).sum() for df in dfs) / 1e6
    print(f"events in the trace:                 {t.event_count:,}")
    print(f"rows in {'+'.join(tables)}: {rows:,} ({mem:.0f} MB of columns)")
    print(f"gtrace stats --json (CLI, baseline): {cli_s:7.2f} s")
    print(f"gtrace.load (model only, baseline):  {load_s:7.2f} s")
    print(f"the four DataFrames of that model:   {tables_s:7.2f} s  ({rows / tables_s / 1e6:.1f} M rows/s)")
    print(f"  the same, thread CPU time:         {tables_cpu:7.2f} s  (unaffected by other jobs on the machine)")
    print(f"gtrace.load + DataFrames:            {total_s:7.2f} s  ({rows / total_s / 1e6:.1f} M rows/s)")
    print(f"ratio DataFrames / stats CLI:        {total_s / cli_s:7.2f}x")
    print(f"ratio DataFrames / load:             {total_s / load_s:7.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())

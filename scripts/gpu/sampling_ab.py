#!/usr/bin/env python3
"""What CPU sampling costs, measured inside one process: with GTRACE_SAMPLE_ALTERNATE_MS=W the sampler samples
only in the even W-ms windows of CLOCK_MONOTONIC from its start, and the workload writes each iteration's start
and duration (bench/collector/torch_loop.py or cpu_gaps.py --times FILE). Iterations wholly inside a sampled
window are compared with those wholly inside an unsampled one: run-to-run noise (the host's state, which core,
the GPU's clocks) is shared by both halves, which separate runs cannot offer.

  sampling_ab.py LOG:TIMES [LOG:TIMES ...]     # LOG: the run's stderr with GTRACE_SAMPLE_VERBOSE=1
  sampling_ab.py --control W TIMES [TIMES ...] # no sampler: windows of W ms from the first iteration (a check
                                               # that the split itself finds no difference)

Prints, per run, the iterations in each half, their medians and means, and the ratio sampled / unsampled; then
the median of the runs' ratios and the pooled ratio of means.
"""
import re
import statistics
import sys


def read_times(path):
    out = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 2:
                out.append((int(parts[0]), int(parts[1])))
    return out


def split(times, start_ns, window_ns):
    on, off = [], []
    for t0, dur in times:
        k0 = (t0 - start_ns) // window_ns
        k1 = (t0 + dur - start_ns) // window_ns
        if k0 != k1 or k0 < 0:
            continue  # straddles a window's edge, or before the sampler started
        (on if k0 % 2 == 0 else off).append(dur / 1e6)
    return on, off


def report(label, on, off):
    if len(on) < 20 or len(off) < 20:
        print(f"{label}: too few iterations ({len(on)} sampled, {len(off)} not)")
        return None
    mo, mf = statistics.median(on), statistics.median(off)
    ao, af = statistics.mean(on), statistics.mean(off)
    print(f"{label}: sampled n={len(on)} median={mo:.4f} mean={ao:.4f} ms | unsampled n={len(off)} "
          f"median={mf:.4f} mean={af:.4f} ms | median {100 * (mo / mf - 1):+.2f}% mean {100 * (ao / af - 1):+.2f}%")
    return mo / mf, ao, af, len(on), len(off)


def main(argv):
    results = []
    if argv and argv[0] == "--control":
        window_ns = int(float(argv[1]) * 1e6)
        for path in argv[2:]:
            times = read_times(path)
            if not times:
                continue
            r = report(f"control {path}", *split(times, times[0][0], window_ns))
            if r:
                results.append(r)
    else:
        for pair in argv:
            log, times_path = pair.split(":", 1)
            text = open(log, errors="replace").read()
            m = re.search(r"alternate start_ns=(\d+) window_ms=(\d+)", text)
            if not m:
                print(f"{log}: no 'alternate start_ns' line (GTRACE_SAMPLE_VERBOSE and _ALTERNATE_MS set?)")
                continue
            r = report(pair, *split(read_times(times_path), int(m[1]), int(m[2]) * 1000000))
            if r:
                results.append(r)
    if results:
        ratios = [r[0] for r in results]
        on_sum = sum(r[1] * r[3] for r in results) / sum(r[3] for r in results)
        off_sum = sum(r[2] * r[4] for r in results) / sum(r[4] for r in results)
        print(f"ALL {len(results)} runs: median of the runs' median ratios {100 * (statistics.median(ratios) - 1):+.2f}%, "
              f"pooled means {100 * (on_sum / off_sum - 1):+.2f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

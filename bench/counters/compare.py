#!/usr/bin/env python3
"""Compares gtrace's counter values with ncu's for the same kernels, launches and metrics.

    bench/counters/compare.py OUT_DIR [--tolerance 3] [--markdown]

Reads <workload>.gtrace.csv (gtrace-counters dump of the joined trace) and <workload>.ncu.csv (ncu --csv --page
raw --print-units base) for every workload run_device.sh ran, pairs kernels by base name + per-name launch
ordinal and prints, per metric, the relative difference. A value pair counts as agreeing when it is within the
tolerance, or when both are tiny against the kernel's scale (fewer than 1e-3 x the largest value of that
metric family and kernel): relative error on near-zero counters measures noise, not the collector.
"""
import csv, glob, math, os, sys
from collections import defaultdict

KEY = [
    ("gpu__time_duration.sum", "time"),
    ("dram__bytes_read.sum", "DRAM rd"),
    ("dram__bytes_write.sum", "DRAM wr"),
    ("lts__t_bytes.sum", "L2 B"),
    ("l1tex__t_bytes.sum", "L1 B"),
    ("sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "FFMA"),
    ("smsp__inst_issued.sum", "issued"),
    ("smsp__warps_issue_stalled_long_scoreboard.sum", "long_sb"),
    ("sm__warps_active.avg.pct_of_peak_sustained_active", "occ %"),
]


def base(name):
    name = name.split("(")[0].strip()
    if "<" in name:
        name = name.split("<")[0]
    return name.split("::")[-1].split(" ")[-1]


def num(text):
    text = text.replace(",", "").strip().strip('"')
    try:
        return float(text)
    except ValueError:
        return None


def load_gtrace(path):
    out = defaultdict(dict)  # (kernel, ordinal) -> metric -> value
    with open(path) as f:
        for row in csv.DictReader(f):
            out[(base(row["kernel"]), int(row["launch"]))][row["metric"]] = float(row["value"])
    return out


def load_ncu(path):
    out = defaultdict(dict)
    with open(path, newline="") as f:
        lines = [l for l in f if l.startswith('"')]  # ncu prints its ==PROF== lines to stdout too
    rows = list(csv.reader(lines))
    if len(rows) < 3:
        return out
    header, rows = rows[0], rows[2:]  # row 1 holds the units
    k_col = header.index("Kernel Name")
    ordinal = defaultdict(int)
    for r in rows:
        k = base(r[k_col])
        o = ordinal[k]
        ordinal[k] += 1
        for h, v in zip(header, r):
            x = num(v)
            if x is not None and "__" in h:
                out[(k, o)][h] = x
    return out


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__)
        return 2
    out_dir = args[0]
    tol = float(args[args.index("--tolerance") + 1]) if "--tolerance" in args else 3.0
    total = agree = tiny = 0
    worst = []
    print(f"| workload | kernel | launch | " + " | ".join(l for _, l in KEY) + " | within {tol:g}% |".format(tol=tol))
    print("|---|---|---|" + "---|" * len(KEY) + "---|")
    for g in sorted(glob.glob(os.path.join(out_dir, "*.gtrace.csv"))):
        w = os.path.basename(g)[: -len(".gtrace.csv")]
        n = os.path.join(out_dir, w + ".ncu.csv")
        if not os.path.exists(n):
            continue
        gt, nc = load_gtrace(g), load_ncu(n)
        for key in sorted(gt):
            if key not in nc:
                continue
            a, b = gt[key], nc[key]
            scale = defaultdict(float)
            for m in set(a) & set(b):
                fam = m.split("__")[0]
                scale[fam] = max(scale[fam], abs(b[m]))
            cells, k_total, k_agree = [], 0, 0
            for m in sorted(set(a) & set(b)):
                x, y = a[m], b[m]
                k_total += 1
                rel = abs(x - y) / abs(y) * 100 if y else (0.0 if x == 0 else math.inf)
                small = max(abs(x), abs(y)) < 1e-3 * scale[m.split("__")[0]]
                if rel <= tol or small:
                    k_agree += 1
                    tiny += small and rel > tol
                else:
                    worst.append((rel, w, key, m, x, y))
            for m, _ in KEY:
                if m in a and m in b and b[m]:
                    cells.append(f"{(a[m] - b[m]) / b[m] * 100:+.1f}%")
                else:
                    cells.append("-")
            total += k_total
            agree += k_agree
            print(f"| {w} | {key[0]} | {key[1]} | " + " | ".join(cells) + f" | {k_agree}/{k_total} |")
    print()
    print(f"{agree} of {total} metric values within {tol:g}% of ncu ({tiny} of them near-zero counters)")
    worst.sort(reverse=True)
    for rel, w, key, m, x, y in worst[:25]:
        print(f"  off by {rel:.1f}%: {w} {key[0]}#{key[1]} {m}: gtrace {x:.6g} ncu {y:.6g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Compares gtrace's counter values with ncu's for the same kernels, launches and metrics.

    bench/counters/compare.py OUT_DIR [--tolerance 3] [--abs 1000]

For every workload run_device.sh ran, reads <workload>.flush.gtrace.csv (gtrace-counters dump of `gcollect
--counters --cache-control all`: gtrace's own replay, L2 flushed before each pass) and <workload>.gtrace.csv
(`--cache-control none`: CUPTI's kernel replay) and compares each with <workload>.ncu.csv (`ncu
--clock-control none`, whose default --cache-control all flushes every cache before each replay pass) and with
<workload>.ncu_nocache.csv (`ncu --clock-control none --cache-control none`). The baseline is ncu against
itself: <workload>.ncu2.csv, a second `ncu --clock-control none` run of the same app, scored against the first
(what run-to-run noise alone gives). Kernels pair by base name + per-name launch ordinal.

A value agrees when it is within the tolerance (relative), or, for event/byte/cycle counts (".sum" metrics
other than gpu__time_duration) only, when the two differ by at most --abs (default 1000) in absolute terms: on counts of a few hundred,
one replay pass's +-1 warp or sector is several percent, which measures replay noise, not the collector. The
summaries say how many values agree only by that rule.
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


GRAPH_ORDINAL_BIT = 1 << 31  # gtrace counts graph-launched kernels apart (common/include/gt/model.h)


def load_gtrace(path):
    raw = defaultdict(dict)  # (kernel, ordinal) -> metric -> value
    with open(path) as f:
        for row in csv.DictReader(f):
            raw[(base(row["kernel"]), int(row["launch"]))][row["metric"]] = float(row["value"])
    # ncu numbers every profiled launch of a name in one sequence. The workloads launch a kernel directly
    # before any graph runs it, so graph ordinal n is ncu's (direct launches of the name) + n.
    direct = defaultdict(int)
    for (k, o) in raw:
        if o < GRAPH_ORDINAL_BIT:
            direct[k] = max(direct[k], o + 1)
    out = defaultdict(dict)
    for (k, o), values in raw.items():
        out[(k, o if o < GRAPH_ORDINAL_BIT else direct[k] + o - GRAPH_ORDINAL_BIT)] = values
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


def is_count(m):
    # Events, bytes, cycles; not gpu__time_duration (nanoseconds are a measurement, not a count).
    return m.endswith(".sum") and "__" in m and not m.startswith("gpu__time")


def score(a, b, tol, abs_tol):
    """(agree, total, by_abs, misses) over the metrics both report."""
    agree = total = by_abs = 0
    misses = []
    for m in sorted(set(a) & set(b)):
        x, y = a[m], b[m]
        total += 1
        rel = abs(x - y) / abs(y) * 100 if y else (0.0 if x == 0 else math.inf)
        small = is_count(m) and abs(x - y) <= abs_tol
        if rel <= tol or small:
            agree += 1
            by_abs += rel > tol
        else:
            misses.append((rel, m, x, y))
    return agree, total, by_abs, misses


def diff(a, b, m):
    return f"{(a[m] - b[m]) / b[m] * 100:+.1f}%" if m in a and m in b and b[m] else "-"


def workloads(out_dir):
    for g in sorted(glob.glob(os.path.join(out_dir, "*.gtrace.csv"))):
        w = os.path.basename(g)[: -len(".gtrace.csv")]
        if "." not in w and os.path.exists(os.path.join(out_dir, w + ".ncu.csv")):
            yield w


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__)
        return 2
    out_dir = args[0]
    tol = float(args[args.index("--tolerance") + 1]) if "--tolerance" in args else 3.0
    abs_tol = float(args[args.index("--abs") + 1]) if "--abs" in args else 1000.0
    load = lambda w, suffix: (load_gtrace if suffix.endswith("gtrace.csv") else load_ncu)(
        os.path.join(out_dir, w + suffix)) if os.path.exists(os.path.join(out_dir, w + suffix)) else {}
    # (gtrace file, ncu file) -> [agree, total, by_abs, misses]
    combos = [(".flush.gtrace.csv", ".ncu.csv"), (".flush.gtrace.csv", ".ncu_nocache.csv"),
              (".gtrace.csv", ".ncu.csv"), (".gtrace.csv", ".ncu_nocache.csv"), (".ncu2.csv", ".ncu.csv")]
    sums = {c: [0, 0, 0, []] for c in combos}
    per_metric = {c: defaultdict(lambda: [0, 0]) for c in combos}
    rows = {".flush.gtrace.csv": [], ".gtrace.csv": []}  # per-launch table rows of each gtrace mode
    for w in workloads(out_dir):
        data = {suffix: load(w, suffix) for suffix in {s for c in combos for s in c}}
        for key in sorted(set(data[".gtrace.csv"]) | set(data[".flush.gtrace.csv"]) | set(data[".ncu.csv"])):
            cells = {}
            for c in combos:
                a, b = data[c[0]].get(key), data[c[1]].get(key)
                if not a or not b:
                    continue
                if c == combos[4]:  # ncu vs ncu: only the metrics gtrace reports (ncu prints more)
                    ours = data[".gtrace.csv"].get(key) or data[".flush.gtrace.csv"].get(key) or {}
                    a = {m: v for m, v in a.items() if m in ours}
                agree, total, by_abs, misses = score(a, b, tol, abs_tol)
                acc = sums[c]
                acc[0] += agree
                acc[1] += total
                acc[2] += by_abs
                acc[3] += [(rel, w, key, m, x, y) for rel, m, x, y in misses]
                for m in set(a) & set(b):
                    per_metric[c][m][1] += 1
                for _, m, _, _ in misses:
                    per_metric[c][m][0] += 1
                cells[c] = f"{agree}/{total}"
            b, n = data[".ncu.csv"].get(key), data[".ncu_nocache.csv"].get(key)
            for mode, (c_all, c_none) in {".flush.gtrace.csv": (combos[0], combos[1]),
                                          ".gtrace.csv": (combos[2], combos[3])}.items():
                a = data[mode].get(key)
                if not a or not b:
                    continue
                row = [diff(a, b, m) for m, _ in KEY] + [diff(a, n, "dram__bytes_write.sum") if n else "-"]
                row += [cells.get(c_all, "-"), cells.get(c_none, "-"), cells.get(combos[4], "-")]
                rows[mode].append(f"| {w} | {key[0]} | {key[1]} | " + " | ".join(row) + " |")
    for mode, title in ((".flush.gtrace.csv", "gcollect --counters --cache-control all (gtrace's own replay)"),
                        (".gtrace.csv", "gcollect --counters --cache-control none (CUPTI's kernel replay)")):
        if not rows[mode]:
            continue
        print(f"### {title}: difference from ncu --clock-control none\n")
        print(f"| workload | kernel | launch | " + " | ".join(l for _, l in KEY) +
              f" | DRAM wr vs ncu none | within {tol:g}% of ncu | within {tol:g}% of ncu none |"
              f" ncu run 2 within {tol:g}% of run 1 |")
        print("|---|---|---|" + "---|" * len(KEY) + "---|---|---|---|")
        print("\n".join(rows[mode]))
        print()
    titles = {
        combos[0]: "gcollect --counters --cache-control all vs ncu --clock-control none",
        combos[1]: "gcollect --counters --cache-control all vs ncu --clock-control none --cache-control none",
        combos[2]: "gcollect --counters --cache-control none vs ncu --clock-control none",
        combos[3]: "gcollect --counters --cache-control none vs ncu --clock-control none --cache-control none",
        combos[4]: "baseline: ncu --clock-control none, second run vs first run",
    }
    # The values ncu itself reproduces (its second run within the tolerance of its first): how many gtrace
    # matches there, so that run-to-run noise of the reference is not counted against gtrace.
    for mode, title in ((".flush.gtrace.csv", "--cache-control all"), (".gtrace.csv", "--cache-control none")):
        for ref, ref_title in ((".ncu.csv", "ncu --clock-control none"),
                               (".ncu_nocache.csv", "ncu --clock-control none --cache-control none")):
            agree = total = 0
            for w in workloads(out_dir):
                a, n1, n2, r = load(w, mode), load(w, ".ncu.csv"), load(w, ".ncu2.csv"), load(w, ref)
                for key in a:
                    if key not in n1 or key not in n2 or key not in r:
                        continue
                    for m, x in a[key].items():
                        if m not in n1[key] or m not in n2[key] or m not in r[key]:
                            continue
                        if not score({m: n2[key][m]}, {m: n1[key][m]}, tol, abs_tol)[0]:
                            continue
                        total += 1
                        agree += score({m: x}, {m: r[key][m]}, tol, abs_tol)[0]
            if total:
                print(f"## on the {total} values ncu reproduces run to run: gcollect {title} vs {ref_title}: "
                      f"{agree} within {tol:g}% ({100 * agree / total:.1f}%)")
    print()
    for c in combos:
        agree, total, by_abs, worst = sums[c]
        if not total:
            continue
        print(f"## {titles[c]}: {agree} of {total} values within {tol:g}% ({by_abs} of them only by the "
              f"+-{abs_tol:g} absolute tolerance for counts)")
        misses = sorted(((v[0], m, v[1]) for m, v in per_metric[c].items() if v[0]), reverse=True)
        print("misses per metric: " + ", ".join(f"{m} {k}/{t}" for k, m, t in misses))
        worst.sort(reverse=True)
        for rel, w, key, m, x, y in worst[:25]:
            print(f"  off by {rel:.1f}%: {w} {key[0]}#{key[1]} {m}: gtrace {x:.6g} ncu {y:.6g}")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""`gtrace export --csv TABLE` end to end: every table of real traces parses as CSV, and the name tables agree
row for row with `gtrace stats --json` (the same core numbers through another encoder); the histogram's counts
add up to the kernel's instance count; bad tables/kernels are refused with a message and nothing written."""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

gtrace, traces = sys.argv[1], sys.argv[2:]
TABLES = ["kernels", "api", "copies", "nvtx", "idle-gaps", "counters", "roofline", "collectives",
          "collective-ranks", "losses"]


def run(*args, ok=(0, 2)):
    p = subprocess.run([gtrace, *args], capture_output=True)  # bytes: keep CRLF as written
    p.stdout, p.stderr = p.stdout.decode(), p.stderr.decode()
    if p.returncode not in ok:
        sys.exit(f"FAIL: gtrace {' '.join(args)} -> {p.returncode}\n{p.stderr}")
    return p


def table(path, name, *extra):
    out = run("export", "--csv", name, path, *extra, "-o", "-").stdout
    if out.count("\n") != out.count("\r\n") or not out.endswith("\r\n"):
        sys.exit(f"FAIL: {path} {name}: line ends are not CRLF")
    rows = list(csv.DictReader(io.StringIO(out, newline="")))
    return rows


checked = 0
for path in traces:
    stats = json.loads(run("stats", "--json", path).stdout)
    for name in TABLES:
        rows = table(path, name)
        key = {"kernels": "kernels", "api": "api", "copies": "copies", "nvtx": "nvtx"}.get(name)
        if key:
            want = stats[key]
            if len(rows) != len(want):
                sys.exit(f"FAIL: {path} {name}: {len(rows)} CSV rows, stats --json has {len(want)}")
            for r, w in zip(sorted(rows, key=lambda r: (r["name"].lstrip("'"), r["count"])),
                            sorted(want, key=lambda w: (w["name"], str(w["count"])))):
                if r["name"].lstrip("'") != w["name"] or int(r["count"]) != w["count"] or \
                        int(r["total_ns"]) != w["total_ns"]:
                    sys.exit(f"FAIL: {path} {name}: {r} != {w}")
        if name == "collectives":
            matched = len({(r["op"], r["kernel"], r["ordinal"]) for r in rows})
            if matched != stats["collectives"]["matched"]:
                sys.exit(f"FAIL: {path} collectives: {matched} in CSV, stats --json matched {stats['collectives']['matched']}")
        if name == "collective-ranks" and len(rows) != len(stats["collectives"]["ranks"]):
            sys.exit(f"FAIL: {path} collective-ranks: {len(rows)} rows, stats has {len(stats['collectives']['ranks'])}")
        if name == "roofline":
            profiled = {k["name"] for k in stats["kernel_counters"]}
            if any(r["kernel"].lstrip("'") not in profiled for r in rows):
                sys.exit(f"FAIL: {path} roofline: a point of a kernel stats --json did not profile")
        checked += 1
    if stats["kernels"]:
        k = stats["kernels"][0]
        bins = table(path, "histogram", "--kernel", k["name"])
        total = sum(int(b["count"]) for b in bins)
        if total != k["count"]:
            sys.exit(f"FAIL: {path} histogram of {k['name']}: {total} instances, stats says {k['count']}")
        checked += 1

# Refusals: a message, exit 64/1, and no file left behind.
path = traces[0]
with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "x.csv")
    for args, code in [(["--csv", "bogus", path], 64), (["--csv", "histogram", path], 64),
                       (["--csv", "histogram", "--kernel", "no such kernel", path], 1),
                       (["--csv", "kernels", "--kernel", "x", path], 64)]:
        p = run("export", *args, "-o", out, ok=(code,))
        if not p.stderr.strip() or os.path.exists(out):
            sys.exit(f"FAIL: {args}: no message or a file was written")
    run("export", "--csv", "kernels", path, "-o", out)
    run("export", "--csv", "kernels", path, "-o", out, ok=(1,))  # no silent overwrite
    run("export", "--csv", "kernels", path, "-o", out, "--force")
print(f"ok: {checked} tables of {len(traces)} traces")

#!/usr/bin/env python3
"""`gtrace` on an Nsight Systems SQLite export, end to end: the numbers of `gtrace stats --json` against the same
numbers computed here straight from the database with SQL (Python's sqlite3, not gtrace's code), then `info`,
`export --gtrace` (the .gtrace says the same), `export --chrome`, `diff`, and the clear errors on bad files.

  check_nsys_import.py GTRACE FIXTURE.sqlite WORKDIR
"""
import json
import os
import sqlite3
import subprocess
import sys

GTRACE, FIXTURE, WORK = sys.argv[1:4]
os.makedirs(WORK, exist_ok=True)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args, ok=(0,)):
    p = subprocess.run([GTRACE, *args], capture_output=True, text=True)
    check(p.returncode in ok, f"gtrace {' '.join(args)}: exit {p.returncode}, stderr {p.stderr.strip()}")
    return p


db = sqlite3.connect(FIXTURE)
q = lambda sql: db.execute(sql).fetchall()
# Expected, from the tables as nsys documents them.
kernels = {n: (c, t) for n, c, t in q(
    "SELECT s.value, count(*), sum(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k"
    " JOIN StringIds s ON s.id = k.demangledName GROUP BY 1")}
copy_names = {1: "Memcpy HtoD", 2: "Memcpy DtoH", 8: "Memcpy DtoD", 10: "Memcpy PtoP"}
copies = {copy_names[k]: (c, t, b) for k, c, t, b in q(
    "SELECT copyKind, count(*), sum(end - start), sum(bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY GROUP BY 1")}
copies.update({"Memset": tuple(q("SELECT count(*), sum(end - start), sum(bytes) FROM CUPTI_ACTIVITY_KIND_MEMSET")[0])})
# The API table counts calls the application made: runtime calls, and driver calls outside any runtime call of
# their thread (a driver call inside one is that call's implementation).
api = {}
for n, c, t in q("SELECT s.value, count(*), sum(r.end - r.start) FROM CUPTI_ACTIVITY_KIND_RUNTIME r"
                 " JOIN StringIds s ON s.id = r.nameId GROUP BY 1"):
    api[n] = (c, t)
for n, c, t in q("SELECT s.value, count(*), sum(d.end - d.start) FROM CUPTI_ACTIVITY_KIND_DRIVER d"
                 " JOIN StringIds s ON s.id = d.nameId WHERE NOT EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r"
                 " WHERE r.globalTid = d.globalTid AND r.start <= d.start AND r.end >= d.end) GROUP BY 1"):
    api[n] = (api.get(n, (0, 0))[0] + c, api.get(n, (0, 0))[1] + t)
nvtx = {n: (c, t) for n, c, t in q(
    "SELECT coalesce(e.text, s.value), count(*), sum(coalesce(e.end, e.start) - e.start) FROM NVTX_EVENTS e"
    " LEFT JOIN StringIds s ON s.id = e.textId WHERE e.eventType IN (34, 59, 60) GROUP BY 1")}
per_device = {d: [0, 0, 0] for (d,) in q("SELECT DISTINCT deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL")}
for i, table in enumerate(["KERNEL", "MEMCPY", "MEMSET"]):
    for d, c in q(f"SELECT deviceId, count(*) FROM CUPTI_ACTIVITY_KIND_{table} GROUP BY 1"):
        per_device.setdefault(d, [0, 0, 0])[i] = c
n_events = sum(q(f"SELECT count(*) FROM {t}")[0][0] for t in [
    "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER"]) + q(
    "SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (34, 59, 60)")[0][0]
t0 = q("SELECT min(m) FROM (SELECT min(start) m FROM CUPTI_ACTIVITY_KIND_RUNTIME UNION SELECT min(start) FROM"
       " CUPTI_ACTIVITY_KIND_DRIVER UNION SELECT min(start) FROM NVTX_EVENTS WHERE eventType != 75)")[0][0]
t1 = q("SELECT max(m) FROM (SELECT max(end) m FROM CUPTI_ACTIVITY_KIND_RUNTIME UNION SELECT max(end) FROM"
       " CUPTI_ACTIVITY_KIND_KERNEL UNION SELECT max(end) FROM CUPTI_ACTIVITY_KIND_MEMCPY UNION"
       " SELECT max(end) FROM NVTX_EVENTS)")[0][0]

stats = json.loads(run("stats", "--json", FIXTURE).stdout)
check(stats["format"] == "Nsight Systems SQLite export", f"format {stats['format']}")
check({r["name"]: (r["count"], r["total_ns"]) for r in stats["kernels"]} == kernels, f"kernels {stats['kernels']}")
check({r["name"]: (r["count"], r["total_ns"], r["bytes"]) for r in stats["copies"]} == copies,
      f"copies {stats['copies']} vs {copies}")
check({r["name"]: (r["count"], r["total_ns"]) for r in stats["api"]} == api, f"api {stats['api']} vs {api}")
check({r["name"]: (r["count"], r["total_ns"]) for r in stats["nvtx"]} == nvtx, f"nvtx {stats['nvtx']} vs {nvtx}")
check({d["id"]: [d["kernels"], d["memcpys"], d["memsets"]] for d in stats["devices"]} == per_device,
      f"devices {stats['devices']} vs {per_device}")
check(all("NVIDIA H200" in d["name"] for d in stats["devices"]), "device names from TARGET_INFO_GPU")
check(stats["events"] == n_events, f"events {stats['events']} vs {n_events}")
check(stats["duration_ns"] == t1 - t0, f"duration {stats['duration_ns']} vs {t1 - t0}")
check(stats["losses"] == [], f"losses {stats['losses']}")

info = run("info", FIXTURE).stdout
check("Nsight Systems SQLite export" in info and "Processes (1)" in info and '"data_loader"' in info,
      "info: format, process, thread names")

# .sqlite -> .gtrace: the converted file reads back with the same numbers.
out = os.path.join(WORK, "nsys_small.gtrace")
run("export", "--gtrace", "--force", FIXTURE, "-o", out)
stats2 = json.loads(run("stats", "--json", out).stdout)
for key in ("kernels", "copies", "api", "nvtx", "devices", "events", "duration_ns"):
    check(stats2[key] == stats[key], f"export --gtrace changed {key}")
run("export", "--chrome", "--force", FIXTURE, "-o", os.path.join(WORK, "nsys_small.json"))
chrome = json.load(open(os.path.join(WORK, "nsys_small.json")))
check(sum(1 for e in chrome["traceEvents"] if e.get("cat") == "kernel") == sum(c for c, _ in kernels.values()),
      "export --chrome: one event per kernel")
d = json.loads(run("diff", "--json", FIXTURE, out).stdout)
check(d["total_kernel_ns"]["before"] == d["total_kernel_ns"]["after"] == sum(t for _, t in kernels.values()),
      f"diff of the export and its .gtrace: {d['total_kernel_ns']}")
check(all(k["delta_ns"] == 0 for k in d["kernels"]) and len(d["kernels"]) == len(kernels), "diff: per kernel")

# Bad files: a clear error, exit 1, no crash.
raw = open(FIXTURE, "rb").read()
trunc = os.path.join(WORK, "truncated.sqlite")
open(trunc, "wb").write(raw[:6000])
p = run("stats", trunc, ok=(1,))
check("not a readable SQLite database" in p.stderr, f"truncated: {p.stderr}")
other = os.path.join(WORK, "not_nsys.sqlite")
if os.path.exists(other):
    os.remove(other)
c = sqlite3.connect(other)
c.execute("CREATE TABLE notes (id INTEGER, text TEXT)")
c.commit()
c.close()
p = run("stats", other, ok=(1,))
check("not an Nsight Systems export" in p.stderr and "CUPTI_ACTIVITY_KIND_KERNEL" in p.stderr,
      f"not nsys: {p.stderr}")
# The format is sniffed from content: a renamed export still opens, a .sqlite name alone proves nothing.
renamed = os.path.join(WORK, "export.bin")
open(renamed, "wb").write(raw)
check(json.loads(run("stats", "--json", renamed).stdout)["events"] == n_events, "renamed export opens")
import gzip
gz = os.path.join(WORK, "nsys_small.sqlite.gz")
open(gz, "wb").write(gzip.compress(raw))
check(json.loads(run("stats", "--json", gz).stdout)["kernels"] == stats["kernels"], "a gzipped export opens")

if failures:
    sys.exit(f"{len(failures)} check(s) failed")
print(f"nsys import: stats/info/export/diff agree with SQL on {FIXTURE} ({n_events} events)")

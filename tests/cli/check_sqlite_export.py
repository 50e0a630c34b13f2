#!/usr/bin/env python3
"""`gtrace export --sqlite` checked against `gtrace stats --json` of the same file: SQL over the exported tables
must give the numbers stats prints (kernels, copies, API calls, NVTX per name; devices' busy time and idle share;
idle gaps; counters' verdicts; losses).

  check_sqlite_export.py GTRACE TRACE...
"""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def by_name(rows):
    return {r["name"]: (r["count"], r["total_ns"], r["min_ns"], r["max_ns"], r.get("bytes", 0)) for r in rows}


def main():
    gtrace, traces = sys.argv[1], sys.argv[2:]
    tmp = tempfile.mkdtemp(prefix="gt_sqlite_")
    for path in traces:
        stats = json.loads(subprocess.run([gtrace, "stats", "--json", path], capture_output=True, check=False).stdout)
        out = os.path.join(tmp, os.path.basename(path) + ".sqlite")
        r = subprocess.run([gtrace, "export", "--sqlite", path, "-o", out], capture_output=True, text=True)
        check(r.returncode in (0, 2), f"{path}: export exit {r.returncode}: {r.stderr}")
        db = sqlite3.connect(out)
        q = lambda sql: db.execute(sql).fetchall()
        name = os.path.basename(path)

        def table(sql):
            return {row[0]: tuple(row[1:]) for row in q(sql)}

        kernels = table("SELECT name, count(*), sum(duration), min(duration), max(duration), 0 FROM KERNELS "
                        "GROUP BY name")
        check(kernels == by_name(stats["kernels"]), f"{name}: kernels per name differ from stats")
        copies = table("SELECT name, count(*), sum(duration), min(duration), max(duration), sum(bytes) FROM COPIES "
                       "GROUP BY name")
        check(copies == by_name(stats["copies"]), f"{name}: copies per name differ from stats")
        api = table("SELECT name, count(*), sum(duration), min(duration), max(duration), 0 FROM API_CALLS "
                    "WHERE depth = 0 GROUP BY name")
        check(api == by_name(stats["api"]), f"{name}: API calls per name differ from stats")
        nvtx = table("SELECT text, count(*), sum(end - start), min(end - start), max(end - start), 0 FROM NVTX_EVENTS "
                     "GROUP BY text")
        check(nvtx == by_name(stats["nvtx"]), f"{name}: NVTX per name differ from stats")
        devices = q("SELECT deviceId, spanNs, busyNs, idleShare, kernels, memcpys, memsets FROM DEVICE_ACTIVITY "
                    "ORDER BY deviceId")
        want = [(d["id"], d["span_ns"], d["busy_ns"], d["idle_share"], d["kernels"], d["memcpys"], d["memsets"])
                for d in stats["devices"]]
        check(devices == want, f"{name}: DEVICE_ACTIVITY {devices} != stats devices {want}")
        per_device = q("SELECT deviceId, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY deviceId ORDER BY 1")
        check(per_device == [(d["id"], d["kernels"]) for d in stats["devices"] if d["kernels"]],
              f"{name}: kernels per device differ")
        gaps = q("SELECT deviceId, start, duration, diagnosis FROM IDLE_GAPS ORDER BY id LIMIT 10")
        check(gaps == [(g["device_id"], g["start_ns"], g["duration_ns"], g["diagnosis"]) for g in stats["idle_gaps"]],
              f"{name}: IDLE_GAPS differ from stats idle_gaps")
        counters = q("SELECT name, pid, profiledLaunches, bottleneck, verdict, flaggedValues FROM KERNEL_COUNTERS")
        check(counters == [(k["name"], k["pid"], k["profiled_launches"], k["bottleneck"], k["verdict"],
                            k["flagged_values"]) for k in stats["kernel_counters"]],
              f"{name}: KERNEL_COUNTERS differ from stats kernel_counters")
        for row, k in zip(q("SELECT computePct, memoryPct FROM KERNEL_COUNTERS"), stats["kernel_counters"]):
            check(row == (k["compute_pct"], k["memory_pct"]), f"{name}: {k['name']}: SOL % differ")
        losses = q("SELECT name, count FROM LOSSES")
        check(losses == [(l["name"], l["count"]) for l in stats["losses"]], f"{name}: LOSSES differ")
        meta = dict(q("SELECT name, value FROM META"))
        check(int(meta["events"]) == stats["events"] and int(meta["duration_ns"]) == stats["duration_ns"],
              f"{name}: META events/duration differ")
        # nsys-style joins keep working: kernel names through StringIds, thread ids through globalTid.
        joined = q("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName")
        check(joined[0][0] == sum(k["count"] for k in stats["kernels"]), f"{name}: shortName join loses kernels")
        tids = q("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE (globalTid >> 24) != pid")
        check(tids[0][0] == 0, f"{name}: globalTid does not pack the pid")
        print(f"{name}: {sum(k['count'] for k in stats['kernels'])} kernels, {len(stats['kernels'])} names, "
              f"{len(counters)} profiled kernels checked")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

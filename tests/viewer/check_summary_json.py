#!/usr/bin/env python3
"""`gtrace stats --json` and `gtrace diff --json` on real traces: parseable, and the numbers the text reports
show. Usage: check_summary_json.py GTRACE DATA_DIR VIEWER_DATA_DIR"""
import json
import subprocess
import sys

gtrace, data, viewer_data = sys.argv[1:4]


def run(*args, code=0):
    p = subprocess.run([gtrace, *args], capture_output=True, text=True)
    assert p.returncode == code, f"{args}: exit {p.returncode}, stderr {p.stderr}"
    return json.loads(p.stdout)


# The small Kineto trace (tests/viewer/data/kineto_small.json): one launch, one copy, one memset.
s = run("stats", "--json", f"{viewer_data}/kineto_small.json")
assert s["format"] == "Kineto JSON" or "Kineto" in s["format"], s["format"]
assert [(r["name"], r["count"]) for r in s["api"]] == [("cudaLaunchKernel", 1), ("cudaMemcpyAsync", 1)], s["api"]
assert s["copies"][0] == {"name": "Memcpy DtoH", "count": 1, "total_ns": 4000, "avg_ns": 4000.0, "min_ns": 4000,
                          "max_ns": 4000, "share": 0.8, "bytes": 4000000}, s["copies"][0]
assert s["kernels"][0]["name"].startswith("volta_sgemm_64x64_nn") and s["kernels"][0]["share"] == 1.0
assert s["devices"] and s["losses"] == []

# The PyTorch training trace from the H200: 802 kernels, and the same total in the diff against itself.
t = run("stats", "--json", f"{data}/h200_torch_train.gtrace")
assert sum(r["count"] for r in t["kernels"]) == 802
gaps = t["idle_gaps"]
assert gaps and gaps == sorted(gaps, key=lambda g: -g["duration_ns"]) and all(g["diagnosis"] for g in gaps), gaps
assert any(a["name"] == "step 0" and a["kind"] == "range" for g in gaps for a in g["cpu_activity"]), gaps
assert t["kernel_counters"] == [], "a timeline-only trace has no kernel counters"

# A counters trace: one entry per profiled kernel, with the verdict naming its known bottleneck.
c = {k["name"].split("(")[0]: k for k in run("stats", "--json", f"{data}/counters_h200.gtrace")["kernel_counters"]}
assert c["fma_chains"]["bottleneck"] == "compute-bound" and c["fma_chains"]["compute_pct"] > 90, c["fma_chains"]
assert c["copy_float4"]["bottleneck"] == "memory-bound" and c["copy_float4"]["profiled_launches"] == 2
assert c["tiny_kernel"]["bottleneck"] == "launch-bound" and c["tiny_kernel"]["total_gpu_time_s"] > 0
assert all(k["verdict"] for k in c.values())
d = run("diff", "--json", "--fail-above", "0", f"{data}/h200_torch_train.gtrace", f"{data}/h200_torch_train.gtrace")
total = sum(r["total_ns"] for r in t["kernels"])
assert d["total_kernel_ns"] == {"before": total, "after": total, "change_pct": 0.0}, d["total_kernel_ns"]
assert all(c["delta_ns"] == 0 for c in d["kernels"] + d["copies"] + d["api"])

# Two different programs: names of one side only have no base (null), and the gate trips (exit 3).
d = run("diff", "--json", "--fail-above", "10", f"{data}/h200_nvtx.gtrace", f"{data}/h200_streams.gtrace", code=3)
new = [c for c in d["kernels"] if c["before"] is None]
assert new and all(c["change_pct"] is None and c["delta_ns"] == c["after"]["total_ns"] for c in new), new
assert d["total_kernel_ns"]["after"] > d["total_kernel_ns"]["before"]
print("summary json: ok")

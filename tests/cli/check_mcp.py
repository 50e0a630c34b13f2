#!/usr/bin/env python3
"""Drives `gtrace mcp` over a pipe with real JSON-RPC messages: the MCP handshake, tools/list, every tool on real
fixtures (answers checked against `gtrace stats --json`), and bad input: malformed JSON, an unknown method and
tool, a missing file, a writing SQL statement, ATTACH, an oversized line.

  check_mcp.py GTRACE TRACE_A TRACE_B COUNTERS_TRACE MULTIRANK_TRACE
"""
import json
import os
import subprocess
import sys
import tempfile

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


class Client:
    def __init__(self, gtrace):
        self.p = subprocess.Popen([gtrace, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                  bufsize=1)
        self.next_id = 1

    def send_raw(self, line, expect_reply=True):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        return json.loads(self.p.stdout.readline()) if expect_reply else None

    def request(self, method, params=None):
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.next_id += 1
        reply = self.send_raw(json.dumps(msg))
        check(reply.get("id") == msg["id"], f"{method}: reply id {reply.get('id')} != {msg['id']}")
        return reply

    def tool(self, name, **arguments):
        reply = self.request("tools/call", {"name": name, "arguments": arguments})
        result = reply.get("result", {})
        text = result.get("content", [{}])[0].get("text", "")
        if result.get("isError"):
            return None, text
        return json.loads(text), None


def main():
    gtrace, trace_a, trace_b, counters, multirank = sys.argv[1:6]
    stats = {p: json.loads(subprocess.run([gtrace, "stats", "--json", p], capture_output=True).stdout)
             for p in (trace_a, counters)}
    c = Client(gtrace)

    init = c.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "check_mcp", "version": "1"}})["result"]
    check(init["protocolVersion"] == "2025-06-18", "initialize: protocol version not echoed")
    check("tools" in init["capabilities"] and init["serverInfo"]["name"] == "gtrace", f"initialize: {init}")
    c.send_raw(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), expect_reply=False)
    check(c.request("ping")["result"] == {}, "ping")
    tools = {t["name"]: t for t in c.request("tools/list")["result"]["tools"]}
    want = {"open_trace", "top_kernels", "idle_gaps", "kernel_counters", "nvtx_ranges", "compare", "sql",
            "collectives", "cpu_samples"}
    check(set(tools) == want, f"tools/list: {sorted(tools)}")
    check(all(t["inputSchema"]["type"] == "object" and t["description"] for t in tools.values()), "tool schemas")

    a, err = c.tool("open_trace", path=trace_a)
    check(err is None and a["trace"] == "t1", f"open_trace: {err}")
    s = stats[trace_a]
    check(a["events"] == s["events"] and a["devices"][0]["idle_share"] == s["devices"][0]["idle_share"],
          "open_trace overview differs from stats")
    b, _ = c.tool("open_trace", path=trace_b)
    k, _ = c.tool("open_trace", path=counters)
    mr, _ = c.tool("open_trace", path=multirank)

    top, _ = c.tool("top_kernels", trace="t1", n=3)
    check(top["kernels"] == s["kernels"][:3], "top_kernels differs from stats' first rows")
    by_count, _ = c.tool("top_kernels", trace="t1", n=1, sort="count")
    check(by_count["kernels"][0]["count"] == max(r["count"] for r in s["kernels"]), "top_kernels sort=count")

    gaps, _ = c.tool("idle_gaps", trace="t1", n=3)
    check([g["start_ns"] for g in gaps["gaps"]] == [g["start_ns"] for g in s["idle_gaps"][:3]] and
          all(g["diagnosis"] for g in gaps["gaps"]), "idle_gaps differ from stats")

    kc, _ = c.tool("kernel_counters", trace=k["trace"])
    sk = stats[counters]["kernel_counters"]
    check(len(kc["kernels"]) == min(20, len(sk)) and kc["profiled_kernels"] == len(sk), "kernel_counters count")
    check([x["verdict"] for x in kc["kernels"]] == [x["verdict"] for x in sk[:20]], "kernel_counters verdicts")
    one = sk[0]["name"]
    kc1, _ = c.tool("kernel_counters", trace=k["trace"], kernel="^" + "".join(
        ch if ch.isalnum() else "\\" + ch if ch in ".^$*+?()[]{}|\\" else ch for ch in one) + "$")
    check(kc1["matching"] >= 1 and all(x["name"] == one for x in kc1["kernels"]), "kernel_counters regex filter")
    _, err = c.tool("kernel_counters", trace=k["trace"], kernel="(")
    check(err and "bad regular expression" in err, f"bad regex: {err}")

    nv, _ = c.tool("nvtx_ranges", trace="t1", n=5)
    check(nv["ranges"] == s["nvtx"][:5], "nvtx_ranges differ from stats")
    nvf, _ = c.tool("nvtx_ranges", trace="t1", filter="step 1")
    check(nvf["matching"] == sum(1 for r in s["nvtx"] if "step 1" in r["name"]), "nvtx_ranges filter")

    cmp, _ = c.tool("compare", trace_a="t1", trace_b=b["trace"], n=5)
    diff = json.loads(subprocess.run([gtrace, "diff", "--json", trace_a, trace_b], capture_output=True).stdout)
    check(cmp["total_kernel_ns"] == diff["total_kernel_ns"] and cmp["kernels"] == diff["kernels"][:5],
          "compare differs from gtrace diff --json")

    col, _ = c.tool("collectives", trace=mr["trace"])
    # One rank only (no 2-rank fixture yet; tests/cli/mcp_test.cc covers a simulated job): a clear note.
    check(col is not None and "no NCCL collectives" in col.get("note", ""), f"collectives: {col}")

    q, _ = c.tool("sql", trace="t1", query="SELECT count(*) AS n, sum(duration) AS t FROM KERNELS")
    check(q["rows"] == [[sum(r["count"] for r in s["kernels"]), sum(r["total_ns"] for r in s["kernels"])]],
          f"sql kernel totals: {q}")
    lim, _ = c.tool("sql", trace="t1", query="SELECT start FROM CUPTI_ACTIVITY_KIND_RUNTIME", limit=5)
    check(len(lim["rows"]) == 5 and "limit 5" in lim["truncated"][0], "sql row limit")
    check("truncated" not in q, "sql: an answer within the limit says truncated")

    # Bad input: each a clear error, the server still answering afterwards.
    tmp = tempfile.mkdtemp(prefix="gt_mcp_")
    victim = os.path.join(tmp, "x.db")
    for bad in ["DELETE FROM StringIds", "CREATE TABLE x(a)", f"ATTACH DATABASE '{victim}' AS x",
                "PRAGMA query_only=0", "SELECT 1; DROP TABLE META", "SELECT load_extension('x')"]:
        out, err = c.tool("sql", trace="t1", query=bad)
        check(out is None and err, f"sql accepted {bad!r}")
    check(not os.path.exists(victim), "ATTACH created a file")
    _, err = c.tool("sql", trace="t1", query="SELEC nonsense")
    check(err and "SQL error" in err, f"sql syntax error: {err}")
    _, err = c.tool("open_trace", path=os.path.join(tmp, "missing.gtrace"))
    check(err and "no such file" in err, f"missing file: {err}")
    _, err = c.tool("open_trace", path=__file__)
    check(err and __file__ in err, f"not a trace: {err}")
    _, err = c.tool("top_kernels", trace="t99")
    check(err and "no open trace" in err, f"unknown trace id: {err}")
    _, err = c.tool("top_kernels", trace="t1", n="ten")
    check(err and "positive integer" in err, f"bad n: {err}")
    _, err = c.tool("top_kernels")
    check(err and "missing argument" in err, f"missing argument: {err}")
    r = c.request("tools/call", {"name": "no_such_tool", "arguments": {}})
    check(r.get("error", {}).get("code") == -32602, f"unknown tool: {r}")
    r = c.request("no/such/method")
    check(r.get("error", {}).get("code") == -32601, f"unknown method: {r}")
    r = c.send_raw("{this is not json")
    check(r.get("error", {}).get("code") == -32700 and r["id"] is None, f"malformed JSON: {r}")
    r = c.send_raw('{"jsonrpc":"2.0","id":77}')
    check(r.get("error", {}).get("code") == -32600 and r["id"] == 77, f"missing method: {r}")
    r = c.send_raw('[{"jsonrpc":"2.0","id":1,"method":"ping"}]')
    check(r.get("error", {}).get("code") == -32600, f"batch: {r}")
    r = c.send_raw('{"jsonrpc":"2.0","id":5,"method":"tools/call","params":[1,2]}')
    check(r.get("error", {}).get("code") == -32602, f"params not an object: {r}")
    r = c.send_raw('"x' + "y" * (9 << 20) + '"')
    check(r.get("error", {}).get("code") == -32600 and "longer than" in r["error"]["message"], "huge line")
    check(c.request("ping")["result"] == {}, "server stopped answering after bad input")

    c.p.stdin.close()
    check(c.p.wait(timeout=30) == 0, "gtrace mcp did not exit 0 at EOF")
    for f in failures:
        print("FAIL:", f)
    print(f"gtrace mcp: {c.next_id - 1} requests, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

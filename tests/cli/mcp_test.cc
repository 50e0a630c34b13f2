// The MCP message handler as a function: protocol errors, tool errors, bounded results, and the collectives
// tool on a simulated two-rank job (no real multi-rank fixture exists yet). tests/cli/check_mcp.py drives the
// process over a pipe.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "mcp.h"
#include "sim_job.h"

using json = nlohmann::json;
using gt::cli::McpOptions;
using gt::cli::McpServer;

namespace {

json Call(McpServer& s, const std::string& tool, json args, int id = 1) {
  const std::string reply = s.Handle(json{{"jsonrpc", "2.0"},
                                          {"id", id},
                                          {"method", "tools/call"},
                                          {"params", {{"name", tool}, {"arguments", args}}}}
                                         .dump());
  return json::parse(reply);
}

std::string Text(const json& reply) {
  return reply.at("result").at("content").at(0).at("text").get<std::string>();
}

struct TempDir {
  std::string path = std::filesystem::temp_directory_path() / ("gt_mcp_" + std::to_string(getpid()));
  TempDir() { std::filesystem::create_directories(path); }
  ~TempDir() { std::filesystem::remove_all(path); }
};

}  // namespace

TEST_CASE("mcp: protocol errors are JSON-RPC errors, notifications get no answer") {
  McpServer s;
  auto code = [&](const std::string& msg) { return json::parse(s.Handle(msg))["error"]["code"].get<int>(); };
  CHECK(code("{") == -32700);
  CHECK(code("") == -32700);
  CHECK(code("42") == -32600);
  CHECK(code("[]") == -32600);
  CHECK(code(R"({"jsonrpc":"2.0","id":1})") == -32600);
  CHECK(code(R"({"jsonrpc":"1.0","id":1,"method":"ping"})") == -32600);
  CHECK(code(R"({"jsonrpc":"2.0","id":{"a":1},"method":"ping"})") == -32600);
  CHECK(code(R"({"jsonrpc":"2.0","id":1,"method":7})") == -32600);
  CHECK(code(R"({"jsonrpc":"2.0","id":1,"method":"nope"})") == -32601);
  CHECK(code(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}})") == -32602);
  CHECK(code(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}})") == -32602);
  CHECK(code(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sql","arguments":3}})") ==
        -32602);
  CHECK(s.Handle(R"({"jsonrpc":"2.0","method":"notifications/initialized"})").empty());
  CHECK(s.Handle(R"({"jsonrpc":"2.0","id":3,"result":{}})").empty());
  const json ok = json::parse(s.Handle(R"({"jsonrpc":"2.0","id":"a","method":"ping"})"));
  CHECK(ok["id"] == "a");
  CHECK(ok["result"] == json::object());
  CHECK(json::parse(McpServer::TooLargeResponse())["error"]["code"] == -32600);
  // An unknown protocol version gets the newest one the server speaks.
  const json init = json::parse(s.Handle(
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1999-01-01"}})"));
  CHECK(init["result"]["protocolVersion"] == "2025-06-18");
}

TEST_CASE("mcp: tool errors say what is wrong") {
  McpOptions o;
  o.allow_files = false;
  McpServer s(o);
  json r = Call(s, "open_trace", {{"path", "/etc/passwd"}});
  CHECK(r["result"]["isError"] == true);
  CHECK(Text(r).find("disabled") != std::string::npos);
  r = Call(s, "sql", {{"trace", "t1"}, {"query", "SELECT 1"}});
  CHECK(r["result"]["isError"] == true);
  CHECK(Text(r).find("open_trace") != std::string::npos);
  r = Call(s, "open_trace", {{"path", 5}});
  CHECK(Text(r) == "argument 'path' must be a string");
}

TEST_CASE("mcp: collectives, bounded answers and read-only SQL on a two-rank job") {
  using namespace gt::simjob;
  SimRank r0, r1;
  r1.rank = r1.local_rank = 1, r1.pid = 2000;
  for (SimRank* r : {&r0, &r1}) r->collectives = 30, r->interval_ns = 50'000'000;
  r1.straggler = 1, r0.straggler = 1;
  for (uint32_t c : {3u, 9u}) r0.straggle[c] = r1.straggle[c] = 20'000'000;
  TempDir dir;
  const std::string path = dir.path + "/job.gtrace";
  {
    const std::string bytes = RankFile(SimHost{"node-a", "boot-a"}, {r0, r1});
    std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
  }
  McpOptions o;
  o.max_result_bytes = 2000;
  McpServer s(o);
  json r = Call(s, "open_trace", {{"path", path}});
  REQUIRE(r["result"]["isError"] == false);
  const json overview = json::parse(Text(r));
  CHECK(overview["trace"] == "t1");
  CHECK(overview["processes"] == 2);
  CHECK(overview["multi_rank_collectives"] == true);
  // The same path again: the same trace, not a second copy.
  CHECK(json::parse(Text(Call(s, "open_trace", {{"path", path}})))["trace"] == "t1");

  r = Call(s, "collectives", {{"trace", "t1"}, {"n", 1}});
  REQUIRE(r["result"]["isError"] == false);
  const std::string text = Text(r);
  CHECK(text.find("rank 1 arrives late") != std::string::npos);
  const json col = json::parse(text);
  CHECK(col["matched"] == 30);
  // Two ranks, two late arrivals: both lists cut to 1 item, and the answer says so.
  REQUIRE(col.contains("truncated"));
  CHECK(col["truncated"] == json::parse(R"(["late: 2 cut to 1", "ranks: 2 cut to 1"])"));
  CHECK(col["ranks"].size() == 1);

  r = Call(s, "sql", {{"trace", "t1"}, {"query", "SELECT pid, rank FROM PROCESSES ORDER BY rank"}});
  CHECK(json::parse(Text(r))["rows"] == json::parse("[[1000,0],[2000,1]]"));
  // Over max_result_bytes: cut, and marked as cut.
  r = Call(s, "sql",
           {{"trace", "t1"}, {"query", "SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL"}, {"limit", 1000}});
  CHECK(Text(r).size() < 2200);
  CHECK(Text(r).find("result cut at 2000 bytes") != std::string::npos);
  for (const char* bad : {"INSERT INTO META VALUES('a','b')", "DROP VIEW KERNELS", "PRAGMA writable_schema=1",
                          "ATTACH ':memory:' AS m", "VACUUM INTO '/tmp/gt_mcp_vacuum.db'"}) {
    r = Call(s, "sql", {{"trace", "t1"}, {"query", bad}});
    INFO(bad);
    CHECK(r["result"]["isError"] == true);
  }
  CHECK_FALSE(std::filesystem::exists("/tmp/gt_mcp_vacuum.db"));
  r = Call(s, "sql", {{"trace", "t1"}, {"query", "SELECT count(*) FROM META"}});
  CHECK(r["result"]["isError"] == false);
}

// The slow-DataLoader fixture (H200, tests/data/README.md): in the steady state (0.3-0.8 s after the start-up
// gap) the main thread sleeps in SlowDataset.__getitem__; the same samples are in the SQL export's tables.
TEST_CASE("mcp: cpu samples of a range, per thread, and their SQL tables") {
  McpServer s;
  json r = Call(s, "open_trace", {{"path", std::string(GT_TESTS_DATA) + "/cpu_h200_loader.gtrace"}});
  REQUIRE(r["result"]["isError"] == false);
  const json gap = json::parse(Text(Call(s, "idle_gaps", {{"trace", "t1"}, {"n", 1}})))["gaps"][0];
  const int64_t start = gap["start_ns"].get<int64_t>() + gap["duration_ns"].get<int64_t>() + 300'000'000;
  const json sql =
      json::parse(Text(Call(s, "sql",
                            {{"trace", "t1"},
                             {"query",
                              "SELECT pid, tid FROM CPU_SAMPLES WHERE globalTid IN (SELECT globalTid FROM "
                              "CUPTI_ACTIVITY_KIND_RUNTIME) AND pid = tid LIMIT 1"}})));
  REQUIRE(sql["rows"].size() == 1);
  const int64_t pid = sql["rows"][0][0], tid = sql["rows"][0][1];
  r = Call(s, "cpu_samples",
           {{"trace", "t1"},
            {"start_ns", start},
            {"end_ns", start + 500'000'000},
            {"pid", pid},
            {"tid", tid},
            {"n", 3}});
  REQUIRE(r["result"]["isError"] == false);
  const json c = json::parse(Text(r));
  CHECK(c["threads"] == 1);
  CHECK(c["samples"] == 500);  // 1 kHz for 0.5 s
  REQUIRE(!c["hot"].empty());
  CHECK(c["hot"][0]["frame"].get<std::string>().find("SlowDataset.__getitem__") != std::string::npos);
  CHECK(c["hot"][0]["share"].get<double>() > 0.5);
  REQUIRE(c["stacks"].size() == 3);
  const json& top = c["stacks"][0]["frames"];
  CHECK(top.back() == "libc.so.6!clock_nanosleep");  // time.sleep's wait, under the Python frame
  CHECK(top[top.size() - 2].get<std::string>().find("SlowDataset.__getitem__") != std::string::npos);
  // Every thread of the whole trace: as many samples as the export's table has rows.
  const json all = json::parse(Text(Call(s, "cpu_samples", {{"trace", "t1"}})));
  const json rows =
      json::parse(Text(Call(s, "sql", {{"trace", "t1"}, {"query", "SELECT count(*) FROM CPU_SAMPLES"}})));
  CHECK(all["samples"] == rows["rows"][0][0]);
  // The view lists a sample's frames innermost first: the deepest of the top stack is its first row.
  const json frames = json::parse(Text(Call(
      s, "sql",
      {{"trace", "t1"},
       {"query",
        "SELECT frame FROM CPU_SAMPLE_FRAMES WHERE sampleId = (SELECT id FROM CPU_SAMPLES WHERE start >= " +
            std::to_string(start) + " AND pid = tid AND stackId != 0 LIMIT 1) ORDER BY stackDepth"}})));
  CHECK(frames["rows"].size() > 3);
  // Bad arguments are tool errors.
  CHECK(Call(s, "cpu_samples", {{"trace", "t1"}, {"tid", 5}})["result"]["isError"] == true);
  CHECK(Call(s, "cpu_samples", {{"trace", "t1"}, {"start_ns", "soon"}})["result"]["isError"] == true);
}

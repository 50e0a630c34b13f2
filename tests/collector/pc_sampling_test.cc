// PC-sampling decoding from synthetic CUpti_PCSamplingData buffers (no GPU): reason names, aggregation over
// GetData calls, totals and drops, source-line caching.
#include <catch2/catch.hpp>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "config/config.h"
#include "decode/pc_sampling_decode.h"
#include "launcher/launcher.h"

using namespace gt::config;
using namespace gt::decode;
using namespace gt::launcher;

namespace {

// A buffer shaped like the one the module hands to cuptiPCSamplingGetData, filled like CUPTI fills it.
struct FakeBuffer {
  std::vector<std::vector<CUpti_PCSamplingStallReason>> reasons;
  std::vector<CUpti_PCSamplingPCData> pcs;
  CUpti_PCSamplingData data{};

  void AddPc(const char* function, uint64_t crc, uint64_t pc, std::vector<CUpti_PCSamplingStallReason> r) {
    reasons.push_back(std::move(r));
    CUpti_PCSamplingPCData d{};
    d.size = sizeof d;
    d.cubinCrc = crc;
    d.pcOffset = pc;
    d.functionName = const_cast<char*>(function);
    pcs.push_back(d);
  }
  const CUpti_PCSamplingData& Finish(uint64_t total, uint64_t dropped, uint64_t non_user = 0) {
    for (size_t i = 0; i < pcs.size(); ++i) {
      pcs[i].stallReason = reasons[i].data();
      pcs[i].stallReasonCount = reasons[i].size();
    }
    data.size = sizeof data;
    data.collectNumPcs = pcs.size();
    data.totalNumPcs = pcs.size();
    data.pPcData = pcs.data();
    data.totalSamples = total;
    data.droppedSamples = dropped;
    data.nonUsrKernelsTotalSamples = non_user;
    return data;
  }
};

// The index -> name table as cuptiPCSamplingGetStallReasons returns it on GH100 (a subset, real names).
PcStallReasonTable H100Reasons() {
  static const uint32_t idx[] = {2, 3, 7, 8, 11, 12, 20};
  static const char* names[] = {"smsp__pcsamp_warps_issue_stalled_barrier",
                                "smsp__pcsamp_warps_issue_stalled_barrier_not_issued",
                                "smsp__pcsamp_warps_issue_stalled_long_scoreboard",
                                "smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued",
                                "smsp__pcsamp_warps_issue_stalled_no_instructions",
                                "smsp__pcsamp_warps_issue_stalled_selected",
                                "smsp__pcsamp_warps_issue_stalled_not_selected"};
  return PcStallReasonTable(idx, names, 7);
}

std::string FakeDemangle(const char* s) {
  if (std::strcmp(s, "_Z4copyPKfPfm") == 0) return "copy(const float*, float*, unsigned long)";
  return s;
}

}  // namespace

TEST_CASE("pc sampling: CUPTI reason names map onto the counters' vocabulary") {
  CHECK(PcSamplingReasonKey("smsp__pcsamp_warps_issue_stalled_long_scoreboard") == "long_scoreboard");
  CHECK(PcSamplingReasonKey("smsp__pcsamp_warps_issue_stalled_barrier_not_issued").empty());
  CHECK(PcSamplingReasonKey("smsp__pcsamp_warps_issue_stalled_no_instructions") == "no_instruction");
  CHECK(PcSamplingReasonKey("smsp__pcsamp_warps_issue_stalled_selected") == "selected");
  CHECK(PcSamplingReasonKey("smsp__pcsamp_something_new") == "something_new");
  CHECK(PcSamplingReasonKey("plain") == "plain");
  CHECK(PcSamplingReasonKey("smsp__pcsamp_warps_issue_stalled_warpgroup_arrive") == "gmma");
  CHECK(PcSamplingReasonKey("smsp__pcsamp_sample_count").empty());
  CHECK(PcSamplingReasonKey("smsp__pcsamp_samples_data_dropped").empty());
  // Every warp state CUPTI announced on the H200 (cuptiPCSamplingGetStallReasons, 40 names with the
  // _not_issued twins and the two counters) maps onto a key of the counters set.
  const char* kGh100[] = {"barrier",
                          "branch_resolving",
                          "dispatch_stall",
                          "drain",
                          "imc_miss",
                          "lg_throttle",
                          "long_scoreboard",
                          "math_pipe_throttle",
                          "membar",
                          "mio_throttle",
                          "misc",
                          "no_instructions",
                          "not_selected",
                          "selected",
                          "short_scoreboard",
                          "sleeping",
                          "tex_throttle",
                          "wait",
                          "warpgroup_arrive"};
  const char* kCountersKeys[] = {"barrier",
                                 "branch_resolving",
                                 "dispatch_stall",
                                 "drain",
                                 "imc_miss",
                                 "lg_throttle",
                                 "long_scoreboard",
                                 "math_pipe_throttle",
                                 "membar",
                                 "mio_throttle",
                                 "misc",
                                 "no_instruction",
                                 "not_selected",
                                 "selected",
                                 "short_scoreboard",
                                 "sleeping",
                                 "tex_throttle",
                                 "wait",
                                 "gmma"};
  for (size_t i = 0; i < 19; ++i) {
    CHECK(PcSamplingReasonKey(std::string("smsp__pcsamp_warps_issue_stalled_") + kGh100[i]) ==
          kCountersKeys[i]);
    CHECK(PcSamplingReasonKey(std::string("smsp__pcsamp_warps_issue_stalled_") + kGh100[i] + "_not_issued")
              .empty());
  }
  PcStallReasonTable t = H100Reasons();
  CHECK(t.size() == 7);
  CHECK(t.Key(7) == "long_scoreboard");
  CHECK(t.Key(8).empty());
  CHECK(t.Known(8));
  CHECK_FALSE(t.Known(99));
  CHECK(t.Key(99).empty());
}

TEST_CASE("pc sampling: buffers aggregate per kernel x PC x reason, not_issued twins left out") {
  PcStallReasonTable reasons = H100Reasons();
  PcSampleAggregator agg;
  FakeBuffer a;
  a.AddPc("_Z4copyPKfPfm", 0xabc, 0x90, {{7, 100}, {8, 90}, {12, 4}});
  a.AddPc("_Z4copyPKfPfm", 0xabc, 0x80, {{7, 10}, {20, 0}});
  a.AddPc("_Z7syncdivPf", 0xdef, 0x40, {{2, 30}, {3, 30}, {99, 5}});
  agg.Add(a.Finish(/*total=*/200, /*dropped=*/0, /*non_user=*/3), reasons, FakeDemangle);
  FakeBuffer b;  // a second GetData: the same PC again adds up
  b.AddPc("_Z4copyPKfPfm", 0xabc, 0x90, {{7, 50}});
  agg.Add(b.Finish(60, 7), reasons, FakeDemangle);

  std::vector<PcSampleRow> rows = agg.TakeRows();
  REQUIRE(rows.size() == 4);
  // Ordered by kernel name, PC, reason.
  CHECK(rows[0].kernel == "_Z7syncdivPf");
  CHECK(rows[0].reason == "barrier");
  CHECK(rows[0].count == 30);
  CHECK(rows[1].kernel == "copy(const float*, float*, unsigned long)");
  CHECK(rows[1].function == "_Z4copyPKfPfm");
  CHECK(rows[1].pc_offset == 0x80);
  CHECK(rows[1].reason == "long_scoreboard");
  CHECK(rows[1].count == 10);
  CHECK(rows[2].pc_offset == 0x90);
  CHECK(rows[2].reason == "long_scoreboard");
  CHECK(rows[2].count == 150);
  CHECK(rows[2].cubin_crc == 0xabc);
  CHECK(rows[3].reason == "selected");
  CHECK(rows[3].count == 4);

  const PcSamplingTotals& t = agg.totals();
  CHECK(t.buffers == 2);
  CHECK(t.total_samples == 260);
  CHECK(t.dropped_samples == 7);
  CHECK(t.non_user_samples == 3);
  CHECK(t.attributed_samples == 30 + 100 + 4 + 10 + 50);
  CHECK(t.unknown_reason_samples == 5);

  // Taken rows are gone; the next flush writes only what came after.
  CHECK(agg.empty());
  CHECK(agg.TakeRows().empty());
  FakeBuffer c;
  c.AddPc("_Z4copyPKfPfm", 0xabc, 0x90, {{7, 1}});
  agg.Add(c.Finish(1, 0), reasons, FakeDemangle);
  rows = agg.TakeRows();
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].count == 1);
  CHECK(agg.totals().total_samples == 261);
}

TEST_CASE("pc sampling: malformed buffers are bounded, not trusted") {
  PcStallReasonTable reasons = H100Reasons();
  PcSampleAggregator agg;
  FakeBuffer a;
  a.AddPc("_Z1kv", 1, 0x10, {{7, 5}});
  a.AddPc("_Z1kv", 1, 0x20, {{7, 6}});
  CUpti_PCSamplingData d = a.Finish(11, 0);
  d.totalNumPcs = 1000;  // more than the buffer holds: only collectNumPcs are read
  d.hardwareBufferFull = 1;
  agg.Add(d, reasons, FakeDemangle);
  a.pcs[1].stallReason = nullptr;  // counts without an array
  d.totalNumPcs = 2;
  agg.Add(d, reasons, FakeDemangle);
  CUpti_PCSamplingData empty{};
  empty.pPcData = nullptr;
  empty.totalNumPcs = 5;
  agg.Add(empty, reasons, FakeDemangle);
  CHECK(agg.totals().hardware_buffer_full == 2);
  CHECK(agg.totals().truncated_records == 1);
  std::vector<PcSampleRow> rows = agg.TakeRows();
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].count == 10);  // 0x10 twice
  CHECK(rows[1].count == 6);
  // A nameless function still lands somewhere visible.
  FakeBuffer n;
  n.AddPc(nullptr, 1, 0x30, {{2, 1}});
  agg.Add(n.Finish(1, 0), reasons, FakeDemangle);
  rows = agg.TakeRows();
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].kernel == "(unknown)");
}

TEST_CASE("pc sampling: source lines are resolved once per PC and cached, misses included") {
  int calls = 0;
  SourceLineCache cache(
      [&](uint64_t crc, const std::string& fn, uint64_t pc, SourceLine* out) {
        ++calls;
        if (crc != 0xabc) return false;  // unknown cubin
        out->file = JoinSourcePath("/src/kernels", "copy.cu");
        out->line = static_cast<uint32_t>(pc / 16);
        return fn == "_Z4copyPKfPfm";
      },
      /*max_lookups=*/3);
  CHECK(cache.Lookup(0xabc, "_Z4copyPKfPfm", 0x90).file == "/src/kernels/copy.cu");
  CHECK(cache.Lookup(0xabc, "_Z4copyPKfPfm", 0x90).line == 9);
  CHECK_FALSE(cache.Lookup(0xdef, "_Z4copyPKfPfm", 0x90).known());
  CHECK_FALSE(cache.Lookup(0xabc, "_Z5otherv", 0x10).known());  // resolver said no: no half-filled line
  CHECK(calls == 3);
  CHECK_FALSE(cache.Lookup(0xabc, "_Z4copyPKfPfm", 0xa0).known());  // over the lookup budget
  CHECK(calls == 3);
  CHECK(cache.skipped() == 1);
  CHECK(cache.resolved() == 1);
  CHECK(cache.lookups() == 3);
}

TEST_CASE("pc sampling: source paths join directory and file") {
  CHECK(JoinSourcePath("/a/b", "c.cu") == "/a/b/c.cu");
  CHECK(JoinSourcePath("/a/b/", "c.cu") == "/a/b/c.cu");
  CHECK(JoinSourcePath(nullptr, "c.cu") == "c.cu");
  CHECK(JoinSourcePath("/a", "/abs/c.cu") == "/abs/c.cu");
  CHECK(JoinSourcePath("/a", nullptr).empty());
}

TEST_CASE("pc sampling: --pc-sampling[=N] is validated and travels to the injection") {
  auto o = ParseOptions({"--pc-sampling", "--", "./app"});
  REQUIRE(o.ok());
  CHECK(o->pc_sampling_period_exp == kPcSamplingDefaultPeriodExp);
  o = ParseOptions({"--pc-sampling=12", "./app"});
  REQUIRE(o.ok());
  CHECK(o->pc_sampling_period_exp == 12);
  CHECK(ParseOptions({"./app"})->pc_sampling_period_exp == 0);
  for (const char* bad : {"--pc-sampling=4", "--pc-sampling=32", "--pc-sampling=", "--pc-sampling=x",
                          "--pc-sampling=-7", "--pc-sampling=10k"}) {
    auto r = ParseOptions({bad, "./app"});
    CHECK_FALSE(r.ok());
    if (!r.ok()) CHECK(r.status().message().find("--pc-sampling") != std::string::npos);
  }
  CHECK(UsageText().find("--pc-sampling[=N]") != std::string::npos);
  // It rides the timeline run: with --counters it is fine, with --counters-only (no timeline) it is an error.
  CHECK(ParseOptions({"--pc-sampling", "--counters", "./app"}).ok());
  auto only = ParseOptions({"--pc-sampling", "--counters-only", "./app"});
  REQUIRE_FALSE(only.ok());
  CHECK(only.status().message().find("--counters-only") != std::string::npos);

  // Environment round trip; a bad value falls back to the default with a warning, never aborts the app.
  Config c;
  c.modules = "pcsampling";
  c.pc_sampling_period_exp = 12;
  std::map<std::string, std::string> env;
  ConfigToEnv(
      c, [](void* m, const char* n, const char* v) { (*static_cast<decltype(env)*>(m))[n] = v; }, &env);
  auto get = [](void* m, const char* n) -> const char* {
    auto& e = *static_cast<decltype(env)*>(m);
    return e.count(n) ? e[n].c_str() : nullptr;
  };
  std::string warnings;
  Config back = ConfigFromEnv(get, &env, &warnings);
  CHECK(warnings.empty());
  CHECK(back.modules == "pcsampling");
  CHECK(back.pc_sampling_period_exp == 12);
  env["GTRACE_PC_SAMPLING_PERIOD"] = "40";
  back = ConfigFromEnv(get, &env, &warnings);
  CHECK(back.pc_sampling_period_exp == 0);
  CHECK(warnings.find("GTRACE_PC_SAMPLING_PERIOD") != std::string::npos);
}

// Queries: search, kernel summary, flows, details, hit-testing, loss, formatting, stats report.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "gt/viewer/load.h"
#include "gt/viewer/query.h"
#include "gt/viewer/summary.h"
#include "synth_trace.h"
#include "test_util.h"

using namespace gt;
using namespace gt::viewer;

static std::string Field(const std::vector<DetailField>& f, const std::string& name) {
  for (const auto& x : f)
    if (x.name == name) return x.value;
  return "<missing " + name + ">";
}

TEST_CASE("search: substring over names, counts, next/prev in time order with wrap", "[query][search]") {
  auto m = test::SmallTrace();
  Search s(*m, "LAUNCH");  // case-insensitive: cudaLaunchKernel x2, cuLaunchKernel x1
  CHECK(s.match_count() == 3);
  CHECK(s.matching_names() == 2);
  EventId a = s.Next(*m, {});
  REQUIRE(a.valid());
  CHECK(m->Start(a) == 100);
  EventId b = s.Next(*m, a);
  CHECK(m->Start(b) == 120);
  EventId c = s.Next(*m, b);
  CHECK(m->Start(c) == 450);
  CHECK(s.Next(*m, c) == a);  // wraps
  CHECK(s.Prev(*m, a) == c);
  CHECK(s.Prev(*m, c) == b);
  CHECK(s.Ordinal(*m, b) == 2);
  CHECK(s.List(*m, 0, 300, 10).size() == 2);
  Search cs(*m, "LAUNCH", true);
  CHECK(cs.match_count() == 0);
  CHECK_FALSE(cs.Next(*m, {}).valid());
  Search none(*m, "");
  CHECK(none.empty());
  CHECK(none.match_count() == 0);
}

TEST_CASE("search: next/prev visit every match once, in time order", "[query][search]") {
  gt::synth::SynthOptions o;
  o.events = 5000;
  ModelBuilder b;
  gt::synth::GenerateSynthTrace(b, o);
  auto m = b.Finish();
  Search s(*m, "gemm_kernel_1");  // _1, _10.._19: several names
  REQUIRE(s.match_count() > 10);
  EventId e = s.Next(*m, {});
  std::vector<EventId> seen{e};
  for (uint64_t i = 1; i < s.match_count(); ++i) {
    EventId n = s.Next(*m, e);
    REQUIRE((m->Start(n) > m->Start(e) || (m->Start(n) == m->Start(e) && n > e)));
    seen.push_back(n);
    e = n;
  }
  CHECK(s.Next(*m, e) == seen.front());
  for (size_t i = seen.size() - 1; i > 0; --i) REQUIRE(s.Prev(*m, seen[i]) == seen[i - 1]);
  CHECK(s.Ordinal(*m, seen[7]) == 8);
}

TEST_CASE("kernel summary: golden table, sorting, instances", "[query][kernels]") {
  auto m = test::SmallTrace();
  auto rows = KernelSummary(*m);
  REQUIRE(rows.size() == 2);
  CHECK(m->Str(rows[0].name) == "gemm");
  CHECK(rows[0].count == 1);
  CHECK(rows[0].total_ns == 1000);
  CHECK(rows[0].share == Approx(1000.0 / 1200.0));
  CHECK(m->Str(rows[1].name) == "relu");
  CHECK(rows[1].min_ns == 200);
  SortKernelSummary(*m, &rows, KernelColumn::kName, true);
  CHECK(m->Str(rows[0].name) == "relu");
  SortKernelSummary(*m, &rows, KernelColumn::kTotal, false);
  CHECK(m->Str(rows[0].name) == "relu");

  gt::synth::SynthOptions o;
  o.events = 50000;
  ModelBuilder b;
  auto counts = gt::synth::GenerateSynthTrace(b, o);
  auto big = b.Finish();
  auto all = KernelSummary(*big);
  uint64_t n = 0;
  double share = 0;
  for (const auto& r : all) {
    n += r.count;
    share += r.share;
    REQUIRE(r.min_ns <= r.avg_ns);
    REQUIRE(r.avg_ns <= r.max_ns);
    auto inst = KernelInstances(*big, r.name);
    REQUIRE(inst.size() == r.count);
    REQUIRE(big->Start(inst.front()) == r.first_ns);
  }
  CHECK(n == counts.kernels);
  CHECK(share == Approx(1.0));
  auto dev1 = KernelSummary(*big, 1);
  uint64_t n1 = 0;
  for (const auto& r : dev1) n1 += r.count;
  CHECK(n1 < n);
  CHECK(n1 > 0);
}

// Kernel names where one is a prefix (and a substring) of others: the kernel table's highlight must match the
// row's own name only.
static std::unique_ptr<TraceModel> PrefixNamesTrace() {
  ModelBuilder b;
  test::FeedStrings(b, {"", "app", "GPU", "relu", "relu_bwd", "fused_relu", "Relu"});
  test::FeedProcessAndGpu(b);
  // Stream 7: relu, relu_bwd, relu, fused_relu, Relu, relu_bwd at 1000 ns spacing, 500 ns each.
  const StringId order[] = {3, 4, 3, 5, 6, 4};
  std::vector<KernelRecord> k(6);
  for (size_t i = 0; i < k.size(); ++i) {
    k[i].start = 1000 * int64_t(i + 1), k[i].end = k[i].start + 500;
    k[i].pid = 1, k[i].device_id = 0, k[i].context_id = 1, k[i].stream_id = 7;
    k[i].correlation_id = uint32_t(i + 1), k[i].name = order[i];
  }
  b.OnKernels(k);
  return b.Finish();
}

TEST_CASE("search: exact name highlight (kernel table row) ignores prefixes and substrings",
          "[query][search][kernels]") {
  auto m = PrefixNamesTrace();
  auto rows = KernelSummary(*m);
  REQUIRE(rows.size() == 4);
  const KernelSummaryRow* relu = nullptr;
  for (const auto& r : rows)
    if (m->Str(r.name) == "relu") relu = &r;
  REQUIRE(relu);
  CHECK(relu->count == 2);
  CHECK(relu->first_ns == 1000);
  CHECK(relu->last_ns == 3500);

  // The substring search (what the row click used before) lights up all five "relu"-ish kernels.
  CHECK(Search(*m, "relu").match_count() == 6);

  Search s = Search::ExactName(*m, relu->name);
  CHECK(s.exact());
  CHECK(s.needle() == "relu");
  CHECK(s.match_count() == 2);
  CHECK(s.matching_names() == 1);
  // Golden: which of the six kernels are highlighted, in time order.
  std::vector<int> lit;
  const Lane& lane = m->lanes[test::FindByName(*m, "relu").lane];
  REQUIRE(lane.size() == 6);
  for (uint32_t i = 0; i < lane.size(); ++i) lit.push_back(s.Matches(lane.name[i]) ? 1 : 0);
  CHECK(lit == std::vector<int>{1, 0, 1, 0, 0, 0});
  // Next/previous visit exactly the row's instances, which are KernelInstances'.
  const auto inst = KernelInstances(*m, relu->name);
  REQUIRE(inst.size() == 2);
  CHECK(s.Next(*m, {}) == inst[0]);
  CHECK(s.Next(*m, inst[0]) == inst[1]);
  CHECK(s.Next(*m, inst[1]) == inst[0]);
  CHECK(s.Ordinal(*m, inst[1]) == 2);
  CHECK(s.List(*m, 0, 10000, 10) == inst);

  const StringId bwd = lane.name[1];
  Search sb = Search::ExactName(*m, bwd);
  CHECK(sb.needle() == "relu_bwd");
  CHECK(sb.match_count() == 2);
  CHECK_FALSE(sb.Matches(relu->name));
  // Folded draw blocks: exact over any block size; a substring search looks at the first `probe` events only.
  const LaneId l = test::FindByName(*m, "relu").lane;
  CHECK(s.AnyMatchIn(*m, l, 0, 6));
  CHECK(s.AnyMatchIn(*m, l, 2, 1));
  CHECK_FALSE(s.AnyMatchIn(*m, l, 3, 3));  // fused_relu, Relu, relu_bwd
  CHECK_FALSE(s.AnyMatchIn(*m, l, 1, 1));
  CHECK(s.AnyMatchIn(*m, l, 1, 2, /*probe=*/1));  // exact ignores the probe limit
  CHECK_FALSE(s.AnyMatchIn(*m, l, 0, 0));
  CHECK_FALSE(s.AnyMatchIn(*m, LaneId(m->lanes.size()), 0, 6));
  Search sub(*m, "fused");
  CHECK(sub.AnyMatchIn(*m, l, 0, 6));
  CHECK_FALSE(sub.AnyMatchIn(*m, l, 0, 6, /*probe=*/3));  // fused_relu is the 4th

  // Bad ids give an empty search, not a crash.
  CHECK(Search::ExactName(*m, 0).empty());
  CHECK(Search::ExactName(*m, StringId(m->strings.size() + 5)).empty());
}

TEST_CASE("search: exact highlight of folded blocks is exact at any fold size (randomized)",
          "[query][search][kernels]") {
  gt::synth::SynthOptions o;
  o.events = 20000;
  ModelBuilder b;
  gt::synth::GenerateSynthTrace(b, o);
  auto m = b.Finish();
  const auto rows = KernelSummary(*m);
  REQUIRE(rows.size() > 3);
  gt::synth::Rng rng(3);
  for (int r = 0; r < 4; ++r) {
    const Search s = Search::ExactName(*m, rows[r].name);
    REQUIRE(s.match_count() == rows[r].count);
    for (LaneId l = 0; l < m->lanes.size(); ++l) {
      const Lane& lane = m->lanes[l];
      for (int q = 0; q < 50 && lane.size() > 0; ++q) {
        const uint32_t first = rng.Below(lane.size());
        const uint32_t count = 1 + rng.Below(std::min<uint32_t>(lane.size() - first, 500));
        bool want = false;
        for (uint32_t i = first; i < first + count; ++i) want = want || lane.name[i] == rows[r].name;
        REQUIRE(s.AnyMatchIn(*m, l, first, count) == want);
      }
    }
  }
}

// One gcollect around torchrun: each rank's process segment interns its kernel names, so one name has an id
// per process, and the kernel table's row (one per text) must highlight the kernels of every rank.
TEST_CASE("search: a kernel row of a multi-process trace highlights every process's instances",
          "[query][search][kernels][fixtures]") {
  auto m = LoadTraceFile(std::string(GT_TESTS_DATA) + "/dist/h200x2_ddp_plugin_job.gtrace");
  REQUIRE(m.ok());
  const auto rows = KernelSummary(**m);
  auto nccl = std::find_if(rows.begin(), rows.end(), [&](const auto& r) {
    return (*m)->Str(r.name).starts_with("ncclDevKernel_AllReduce");
  });
  REQUIRE(nccl != rows.end());
  StringId ids_of_text = 0;
  for (StringId id = 1; id < (*m)->strings.size(); ++id)
    ids_of_text += (*m)->strings[id] == (*m)->Str(nccl->name);
  CHECK(ids_of_text == 2);  // one per rank: what made a row highlight half of its kernels
  const Search s = Search::ExactName(**m, nccl->name);
  CHECK(s.match_count() == nccl->count);
  std::set<uint32_t> pids;
  uint64_t highlighted = 0;
  for (LaneId l = 0; l < (*m)->lanes.size(); ++l) {
    const Lane& lane = (*m)->lanes[l];
    for (uint32_t i = 0; i < lane.size(); ++i)
      if (s.AnyMatchIn(**m, l, i, 1)) ++highlighted, pids.insert((*m)->tracks[lane.track].pid);
  }
  CHECK(highlighted == nccl->count);
  CHECK(pids.size() == 2);
}

TEST_CASE("flows: launch <-> kernel by correlation id, runtime call preferred over driver",
          "[query][flows]") {
  auto m = test::SmallTrace();
  EventId launch = test::FindByName(*m, "cudaLaunchKernel");
  EventId gemm = test::FindByName(*m, "gemm");
  EventId relu = test::FindByName(*m, "relu");
  EventId copy = test::FindByName(*m, "Memcpy HtoD");
  CHECK(FlowPartner(*m, launch) == gemm);
  CHECK(FlowPartner(*m, gemm) == launch);
  EventId memcpy_api = test::FindByName(*m, "cudaMemcpyAsync");
  CHECK(FlowPartner(*m, copy) == memcpy_api);
  CHECK(FlowPartner(*m, memcpy_api) == copy);
  EventId second_launch{launch.lane, 2};
  CHECK(FlowPartner(*m, relu) == second_launch);
  CHECK_FALSE(FlowPartner(*m, test::FindByName(*m, "epoch")).valid());
  auto arrows = FlowsOf(*m, gemm);
  REQUIRE(arrows.size() == 1);
  CHECK(arrows[0].from == launch);
  CHECK(arrows[0].to == gemm);

  // Synthetic: every kernel finds its launch and back.
  gt::synth::SynthOptions o;
  o.events = 20000;
  ModelBuilder b;
  gt::synth::GenerateSynthTrace(b, o);
  auto big = b.Finish();
  for (const Track& t : big->tracks) {
    if (t.kind != TrackKind::kGpuStream) continue;
    const Lane& l = big->lanes[t.first_lane];
    for (uint32_t i = 0; i < l.size(); i += 7) {
      EventId k{t.first_lane, i};
      EventId api = FlowPartner(*big, k);
      REQUIRE(api.valid());
      REQUIRE(big->CorrelationId(api) == l.aux[i]);
      REQUIRE(FlowPartner(*big, api) == k);
    }
  }
}

TEST_CASE("details: every field of kernels, memcpy, API calls, NVTX", "[query][details]") {
  auto m = test::SmallTrace();
  auto k = EventDetails(*m, test::FindByName(*m, "gemm"));
  CHECK(Field(k, "Name") == "gemm");
  CHECK(Field(k, "Kind") == "Kernel");
  CHECK(Field(k, "Grid") == "(4, 1, 1)");
  CHECK(Field(k, "Block") == "(128, 1, 1)");
  CHECK(Field(k, "Registers/thread") == "32");
  CHECK(Field(k, "Shared memory (static)") == "1.00 KiB");
  CHECK(Field(k, "Shared memory (dynamic)") == "0 B");
  CHECK(Field(k, "Duration") == "1 µs");
  CHECK(Field(k, "Correlation id") == "1");
  CHECK(Field(k, "Launched by") == "cudaLaunchKernel");
  CHECK(Field(k, "Launch latency") == "150 ns");
  CHECK(Field(k, "Stream") == "7");
  auto c = EventDetails(*m, test::FindByName(*m, "Memcpy HtoD"));
  CHECK(Field(c, "Bytes") == "1.00 MiB (1048576)");
  CHECK(Field(c, "Bandwidth") == "5.24 TB/s");
  CHECK(Field(c, "Copy kind") == CopyKindName(uint8_t(CopyKind::kHtoD)));
  auto a = EventDetails(*m, EventId{test::FindByName(*m, "cudaLaunchKernel").lane, 2});
  CHECK(Field(a, "Return code") == "700 (error)");
  CHECK(Field(a, "Domain") == "runtime");
  auto d = EventDetails(*m, test::FindByName(*m, "cuLaunchKernel"));
  CHECK(Field(d, "Domain") == "driver");
  auto n = EventDetails(*m, test::FindByName(*m, "fwd"));
  CHECK(Field(n, "Payload") == "-5");
  CHECK(Field(n, "Depth") == "1");
  auto i = EventDetails(*m, test::FindByName(*m, "inner"));
  CHECK(Field(i, "Color") == "0xff00ff00");
  CHECK(EventDetails(*m, {}).empty());
  CHECK(EventDetails(*m, {9999, 0}).empty());
  auto blk = BlockDetails(*m, test::FindByName(*m, "cudaLaunchKernel").lane, DrawItem{100, 520, 0, 3});
  CHECK(Field(blk, "Events") == "3");
  CHECK(Field(blk, "cudaLaunchKernel") == "2×");
}

TEST_CASE("hit-testing: inside, near within tolerance, empty space", "[query][hit]") {
  auto m = test::SmallTrace();
  LaneId api = test::FindByName(*m, "cudaLaunchKernel").lane;
  CHECK(HitTest(*m, api, 150, 1.0) == EventId{api, 0});
  CHECK(HitTest(*m, api, 201, 1.0) == EventId{api, 0});  // 1 ns past the end, 2 px tolerance
  CHECK_FALSE(HitTest(*m, api, 250, 1.0).valid());
  CHECK(HitTest(*m, api, 250, 30.0) == EventId{api, 0});  // zoomed out: 60 ns tolerance, 50 ns away
  CHECK_FALSE(HitTest(*m, 999, 0, 1.0).valid());
}

TEST_CASE("loss summary merges reader report, trace losses and importer problems", "[query][loss]") {
  auto m = test::SmallTrace();
  CHECK(LossSummary(*m).empty());
  CHECK_FALSE(HasDataLoss(*m));
  m->report.chunks_lost = 3;
  m->report.bytes_lost = 4096;
  m->report.truncated = true;
  m->losses.push_back({"cupti_dropped_records", uint8_t(Severity::kWarning), 10, 17, "buffer full"});
  auto l = LossSummary(*m);
  REQUIRE(l.size() == 3);
  CHECK(l[0].severity == uint8_t(Severity::kDataLoss));
  CHECK(l[2].name == "cupti_dropped_records");
  CHECK(HasDataLoss(*m));
}

TEST_CASE("counting and finding events", "[query]") {
  auto m = test::SmallTrace();
  CHECK(CountEvents(*m, EventKind::kKernel) == 2);
  CHECK(CountEvents(*m, EventKind::kMemcpy) == 1);
  CHECK(CountEvents(*m, EventKind::kMemset) == 0);
  CHECK(CountEvents(*m, EventKind::kApi) == 4);
  CHECK(CountEvents(*m, EventKind::kNvtx) == 3);
  const StringId gemm = FindString(*m, "gemm"), relu = FindString(*m, "relu");
  REQUIRE(gemm != 0);
  CHECK(m->Str(gemm) == "gemm");
  CHECK(FindString(*m, "no such name") == 0);
  CHECK(m->Start(FirstKernelEvent(*m, 10, gemm)) == 250);
  CHECK(FirstKernelEvent(*m, 0, relu) == FirstKernelEvent(*m, 10, relu));  // 0: any process
  CHECK(m->Start(FirstKernelEvent(*m, 0, relu)) == 1400);
  CHECK_FALSE(FirstKernelEvent(*m, 99, gemm).valid());
  CHECK_FALSE(FirstKernelEvent(*m, 0, FindString(*m, "cudaLaunchKernel")).valid());  // not a kernel

  // Many instances over several streams: the earliest of KernelInstances.
  gt::synth::SynthOptions o;
  o.events = 5000;
  ModelBuilder b;
  gt::synth::GenerateSynthTrace(b, o);
  auto big = b.Finish();
  for (const KernelSummaryRow& r : KernelSummary(*big)) {
    const auto inst = KernelInstances(*big, r.name);
    REQUIRE(!inst.empty());
    const EventId first = FirstKernelEvent(*big, 0, r.name);
    REQUIRE(first.valid());
    CHECK(big->Start(first) == big->Start(inst.front()));
  }
  uint64_t kernels = 0;
  for (const KernelSummaryRow& r : KernelSummary(*big)) kernels += r.count;
  CHECK(CountEvents(*big, EventKind::kKernel) == kernels);
}

TEST_CASE("formatting helpers", "[query][format]") {
  CHECK(FormatDuration(999) == "999 ns");
  CHECK(FormatDuration(12400) == "12.4 µs");
  CHECK(FormatDuration(3'210'000) == "3.21 ms");
  CHECK(FormatDuration(1'500'000'000) == "1.500 s");
  CHECK(FormatBytes(512) == "512 B");
  CHECK(FormatBytes(4096) == "4.00 KiB");
  CHECK(FormatBytes(1342177280ull) == "1.25 GiB");
}

TEST_CASE("stats report: kernel table and idle share", "[query][stats]") {
  auto m = test::SmallTrace();
  std::string r = StatsReport(*m);
  CHECK(r.find("gemm") != std::string::npos);
  CHECK(r.find("83.3%") != std::string::npos);  // gemm share
  CHECK(r.find("3.7%") != std::string::npos);   // idle 50 / 1350
  CHECK(r.find("GPU 0: NVIDIA H200") != std::string::npos);
}

TEST_CASE("first view: the work when it is a small part of the trace, else the whole trace", "[query]") {
  // The golden trace: NVTX and GPU activity cover [50, 2000] of [0, 2000] (counter samples from 0): the
  // whole.
  auto m = test::SmallTrace();
  TimeRange r = WorkRange(*m);
  CHECK(r.first_ns == m->first_ns);
  CHECK(r.last_ns == m->last_ns);

  // A Python process: an API call at 0 (CUDA initialised during imports), the steps 99-100 s later.
  ModelBuilder b;
  test::FeedStrings(b, {"", "train.py", "main", "cudaGetDeviceCount", "step", "gemm"});
  ProcessRecord p;
  p.pid = 10, p.name = 1;
  b.OnProcesses({&p, 1});
  ApiCallRecord early{0, 1000, 10, 11, 0, 1, 3, 0, uint8_t(ApiDomain::kRuntime)};
  b.OnApiCalls({&early, 1});
  NvtxRecord step;
  step.start = 99'000'000'000, step.end = 100'000'000'000, step.message = 4, step.pid = 10, step.tid = 11;
  b.OnNvtx({&step, 1});
  KernelRecord k;
  k.start = 99'100'000'000, k.end = 99'900'000'000, k.name = 5, k.pid = 10, k.device_id = 0, k.stream_id = 7;
  b.OnKernels({&k, 1});
  auto py = b.Finish();
  REQUIRE(py->first_ns == 0);
  r = WorkRange(*py);
  CHECK(r.first_ns == 99'000'000'000);
  CHECK(r.last_ns == 100'000'000'000);

  // A trace of API calls only: nothing to focus on, the whole.
  ModelBuilder api_only;
  test::FeedStrings(api_only, {"", "x", "main", "cudaMalloc"});
  ApiCallRecord a[2] = {{0, 10, 1, 1, 0, 1, 3, 0, 0}, {1000, 1010, 1, 1, 0, 1, 3, 0, 0}};
  api_only.OnApiCalls(a);
  auto ao = api_only.Finish();
  r = WorkRange(*ao);
  CHECK(r.first_ns == ao->first_ns);
  CHECK(r.last_ns == ao->last_ns);
}

TEST_CASE("first view of the bundled trace (scripts/main.sh) opens on its steps", "[query][fixtures]") {
  auto m = LoadTraceFile(std::string(GT_TESTS_DATA) + "/h200_torch_train.gtrace");
  REQUIRE(m.ok());
  const TraceModel& model = *m.value();
  const TimeRange r = WorkRange(model);
  // Its 40 NVTX steps and their kernels take a small part of the process's life (imports come first).
  INFO("trace " << model.first_ns << ".." << model.last_ns << ", work " << r.first_ns << ".." << r.last_ns);
  CHECK(SatSub(r.last_ns, r.first_ns) < model.span_ns() / 2);
  CHECK(r.first_ns > model.first_ns);
}

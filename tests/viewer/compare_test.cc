// Two traces on one screen (gt/viewer/compare.h): alignment, the kernel delta rows, the per-step summary and
// counterpart lookup, golden over two tiny traces built in code; then real traces of tests/data.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "gt/viewer/compare.h"
#include "gt/viewer/csv.h"
#include "gt/viewer/json.h"
#include "gt/viewer/load.h"
#include "gt/viewer/profiled.h"
#include "test_util.h"

using namespace gt;
using namespace gt::viewer;

namespace {

struct K {
  std::string name;
  int64_t start, end;
  uint32_t stream = 7;
};

// One process, one thread with NVTX ranges "step" (each of `step_ns` from `t0`, `steps` of them) and inside
// each an `inner` [s+10, s+500]; one "init" [t0, t0+5] before them; GPU 0 running `kernels`.
std::unique_ptr<TraceModel> Build(int64_t t0, int64_t step_ns, int steps, const std::vector<K>& kernels,
                                  const char* range = "step", const char* inner = "fwd") {
  ModelBuilder b;
  std::vector<std::string> strings{"", "app", "H200", "main", range, inner, "init"};
  for (const K& k : kernels) strings.push_back(k.name);
  test::FeedStrings(b, strings);
  test::FeedProcessAndGpu(b);
  ThreadRecord t;
  t.pid = 1, t.tid = 1, t.name = 3;
  b.OnThreads({&t, 1});
  std::vector<NvtxRecord> nv;
  NvtxRecord init;
  init.start = t0, init.end = t0 + 5, init.message = 6;
  nv.push_back(init);
  for (int i = 0; i < steps; ++i) {
    const int64_t s = t0 + 10 + i * step_ns;
    NvtxRecord r;
    r.start = s, r.end = s + step_ns, r.message = 4;
    nv.push_back(r);
    r.start = s + 10, r.end = s + 500, r.message = 5;
    nv.push_back(r);
  }
  for (auto& n : nv) n.pid = 1, n.tid = 1;
  b.OnNvtx(nv);
  std::vector<KernelRecord> ks(kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i) {
    ks[i].start = kernels[i].start, ks[i].end = kernels[i].end, ks[i].name = uint32_t(7 + i);
    ks[i].pid = 1, ks[i].device_id = 0, ks[i].context_id = 1, ks[i].stream_id = kernels[i].stream;
    ks[i].correlation_id = uint32_t(i + 1);
  }
  std::sort(ks.begin(), ks.end(),
            [](const KernelRecord& x, const KernelRecord& y) { return x.start < y.start; });
  b.OnKernels(ks);
  return b.Finish();
}

// A: steps of 1000 ns from 10; per step gemm 300 ns, relu 100 ns; "warm" (50 ns) in step 1 only.
std::unique_ptr<TraceModel> TraceA() {
  std::vector<K> k;
  for (int i = 0; i < 3; ++i) {
    const int64_t s = 10 + i * 1000;
    k.push_back({"gemm", s + 100, s + 400});
    k.push_back({"relu", s + 500, s + 600});
  }
  k.push_back({"warm", 10 + 700, 10 + 750, 8});
  return Build(0, 1000, 3, k);
}

// B: the same program 10 µs later, steps of 800 ns: gemm 200 ns, relu 100 ns; "new_k" (70 ns) in step 3 only.
std::unique_ptr<TraceModel> TraceB() {
  std::vector<K> k;
  for (int i = 0; i < 3; ++i) {
    const int64_t s = 10010 + i * 800;
    k.push_back({"gemm", s + 100, s + 300});
    k.push_back({"relu", s + 500, s + 600});
  }
  k.push_back({"new_k", 10010 + 1600 + 700, 10010 + 1600 + 770, 8});
  return Build(10000, 800, 3, k);
}

// The `n`th (0-based) kernel named `name` in start order.
EventId NthKernel(const TraceModel& m, const std::string& name, size_t n) {
  std::vector<EventId> found;
  for (LaneId l = 0; l < m.lanes.size(); ++l)
    for (uint32_t i = 0; i < m.lanes[l].size(); ++i)
      if (m.Kind({l, i}) == EventKind::kKernel && m.Str(m.Name({l, i})) == name) found.push_back({l, i});
  std::sort(found.begin(), found.end(), [&](EventId x, EventId y) { return m.Start(x) < m.Start(y); });
  return n < found.size() ? found[n] : EventId{};
}

}  // namespace

TEST_CASE("compare: the default alignment is the 2nd instance of the outermost range both traces repeat") {
  auto a = TraceA(), b = TraceB();
  const AlignRequest req = DefaultAlignRequest(*a, *b);
  CHECK(req.name == "step");  // "init" occurs once; "fwd" repeats too but starts inside "step"
  CHECK(req.ordinal == 1);
  const Alignment al = Align(*a, *b, AlignRequest{});
  CHECK(al.name == "step");
  CHECK(al.ordinal == 1);
  CHECK(al.a_anchor_ns == 1010);
  CHECK(al.b_anchor_ns == 10810);
  CHECK(al.offset_ns == 1010 - 10810);
  CHECK(al.reason.find("2nd 'step'") != std::string::npos);
}

TEST_CASE("compare: explicit alignments, the start, and a missing instance falling back to the start") {
  auto a = TraceA(), b = TraceB();
  AlignRequest r;
  r.automatic = false, r.name = "fwd", r.ordinal = 2;
  Alignment al = Align(*a, *b, r);
  CHECK(al.name == "fwd");
  CHECK(al.offset_ns == (2010 + 10) - (10010 + 1600 + 10));

  r.name = "", r.ordinal = 0;
  al = Align(*a, *b, r);
  CHECK(al.name.empty());
  CHECK(al.offset_ns == a->first_ns - b->first_ns);
  CHECK(al.offset_ns == -10000);

  r.name = "step", r.ordinal = 9;
  al = Align(*a, *b, r);
  CHECK(al.name.empty());
  CHECK(al.offset_ns == -10000);
  CHECK(al.reason.find("has 3 instances in A and 3 in B, no 10th") != std::string::npos);
}

TEST_CASE("compare: no range name in common aligns on the start and says so") {
  auto a = TraceA();
  auto c = Build(500, 1000, 3, {{"gemm", 600, 700}}, "iteration", "forward");
  const Alignment al = Align(*a, *c, AlignRequest{});
  CHECK(al.name.empty());
  CHECK(al.offset_ns == -500);
  CHECK(al.reason.find("no NVTX range name occurs at least twice in both traces") != std::string::npos);
  CHECK(CompareSteps(*a, *c, al.name).empty());
}

TEST_CASE("compare: align specs from the command line and links") {
  auto r = ParseAlignSpec("step:2");
  REQUIRE(r.ok());
  CHECK(r->name == "step");
  CHECK(r->ordinal == 1);
  CHECK_FALSE(r->automatic);
  r = ParseAlignSpec("train step");
  REQUIRE(r.ok());
  CHECK(r->name == "train step");
  CHECK(r->ordinal == 0);
  r = ParseAlignSpec("start");
  REQUIRE(r.ok());
  CHECK(r->name.empty());
  CHECK_FALSE(r->automatic);
  r = ParseAlignSpec("");
  REQUIRE(r.ok());
  CHECK(r->automatic);
  r = ParseAlignSpec("domain:work");  // a ':' not followed by a number is part of the name
  REQUIRE(r.ok());
  CHECK(r->name == "domain:work");
  CHECK(r->ordinal == 0);
  r = ParseAlignSpec("cub::DeviceRadixSort:3");
  REQUIRE(r.ok());
  CHECK(r->name == "cub::DeviceRadixSort");
  CHECK(r->ordinal == 2);
  CHECK_FALSE(ParseAlignSpec("step:0").ok());
  CHECK_FALSE(ParseAlignSpec("step:99999999999").ok());
  CHECK_FALSE(ParseAlignSpec(":3").ok());
  CHECK_FALSE(ParseAlignSpec(std::string(5000, 'a')).ok());
}

TEST_CASE("compare: kernel rows are gtrace diff's rows, by |delta|") {
  auto a = TraceA(), b = TraceB();
  const std::vector<NameChange> rows = CompareKernels(*a, *b);
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].name == "gemm");
  CHECK(rows[0].before.total_ns == 900);
  CHECK(rows[0].after.total_ns == 600);
  CHECK(rows[0].delta_ns() == -300);
  CHECK(rows[1].name == "new_k");
  CHECK(rows[1].only_after());
  CHECK(rows[1].delta_ns() == 70);
  CHECK(rows[2].name == "warm");
  CHECK(rows[2].only_before());
  CHECK(rows[3].name == "relu");
  CHECK(rows[3].delta_ns() == 0);
  // The same table `gtrace diff --json` prints.
  const auto diff = nlohmann::json::parse(DiffJson(*a, "a", *b, "b"));
  const auto mine = nlohmann::json::parse(NameChangesJson(rows));
  CHECK(diff["kernels"] == mine);
  CHECK(mine[0]["before"]["total_ns"] == 900);
  CHECK(mine[1]["before"].is_null());
}

TEST_CASE("compare: per-step summary pairs instances by ordinal, with the kernel time inside each") {
  auto a = TraceA(), b = TraceB();
  const std::vector<StepDelta> steps = CompareSteps(*a, *b, "step");
  REQUIRE(steps.size() == 3);
  struct Want {
    int64_t a_ns, b_ns, a_k, b_k;
  };
  const Want want[] = {{1000, 800, 450, 300}, {1000, 800, 400, 300}, {1000, 800, 400, 370}};
  for (size_t i = 0; i < 3; ++i) {
    INFO("step " << i);
    CHECK(steps[i].in_a);
    CHECK(steps[i].in_b);
    CHECK(steps[i].a_ns == want[i].a_ns);
    CHECK(steps[i].b_ns == want[i].b_ns);
    CHECK(steps[i].delta_ns() == -200);
    CHECK(steps[i].a_kernel_ns == want[i].a_k);
    CHECK(steps[i].b_kernel_ns == want[i].b_k);
  }
  // A step only one side has: null on the other.
  auto c = Build(0, 1000, 2, {{"gemm", 100, 400}});
  const auto j = nlohmann::json::parse(StepDeltasJson(CompareSteps(*a, *c, "step")));
  REQUIRE(j.size() == 3);
  CHECK(j[2]["ordinal"] == 3);
  CHECK(j[2]["b_ns"].is_null());
  CHECK(j[2]["delta_ns"].is_null());
  CHECK(j[0]["a_kernel_ns"] == 450);
  CHECK(j[0]["b_kernel_ns"] == 300);
  // Clipping: a kernel half inside the window counts half.
  CHECK(KernelTimeIn(*a, 260, 360) == 100);
  CHECK(KernelTimeIn(*a, 0, 3100) == 3 * 400 + 50);
  const std::string text = StepDeltaReport(Align(*a, *b, AlignRequest{}), steps, 0);
  CHECK(text.find("Per 'step'") != std::string::npos);
  CHECK(text.find("paired") != std::string::npos);
}

TEST_CASE("compare: a kernel's counterpart is the same name at the same ordinal in the same step") {
  auto a = TraceA(), b = TraceB();
  // gemm of A's 3rd step -> gemm of B's 3rd step.
  const EventId gemm3 = NthKernel(*a, "gemm", 2);
  auto place = PlaceOfKernel(*a, gemm3, "step");
  REQUIRE(place);
  CHECK(place->step == 2);
  CHECK(place->ordinal == 0);
  EventId other = Counterpart(*a, gemm3, *b, "step");
  REQUIRE(other.valid());
  CHECK(b->Start(other) == 10010 + 1600 + 100);
  // And back.
  CHECK(Counterpart(*b, other, *a, "step") == gemm3);
  // On the start: the overall ordinal.
  other = Counterpart(*a, NthKernel(*a, "relu", 1), *b, "");
  REQUIRE(other.valid());
  CHECK(b->Start(other) == 10010 + 800 + 500);
  // A name the other trace lacks, and a non-kernel, have none.
  CHECK_FALSE(Counterpart(*a, NthKernel(*a, "warm", 0), *b, "step").valid());
  CHECK_FALSE(Counterpart(*a, test::FindByName(*a, "fwd"), *b, "step").valid());
  CHECK_FALSE(Counterpart(*a, EventId{}, *b, "step").valid());
}

TEST_CASE("compare: a trace compared with itself: deltas 0, every kernel its own counterpart") {
  auto a = TraceA(), a2 = TraceA();
  for (const NameChange& c : CompareKernels(*a, *a2)) CHECK(c.delta_ns() == 0);
  for (const StepDelta& s : CompareSteps(*a, *a2, "step")) {
    CHECK(s.delta_ns() == 0);
    CHECK(s.kernel_delta_ns() == 0);
  }
  CHECK(Align(*a, *a2, AlignRequest{}).offset_ns == 0);
  for (const char* name : {"gemm", "relu", "warm"})
    for (size_t n = 0; n < 3; ++n) {
      const EventId e = NthKernel(*a, name, n);
      if (!e.valid()) continue;
      CHECK(Counterpart(*a, e, *a2, "step") == e);
    }
}

TEST_CASE("compare: real traces: counters pairs of the two H200 counters runs, torch self-compare") {
  auto x = LoadTraceFile(std::string(GT_TESTS_DATA) + "/counters_h200.gtrace");
  auto y = LoadTraceFile(std::string(GT_TESTS_DATA) + "/counters_h200_cache_all.gtrace");
  REQUIRE(x.ok());
  REQUIRE(y.ok());
  const ProfiledKernels px = AnalyzeProfiledKernels(**x), py = AnalyzeProfiledKernels(**y);
  const std::vector<CounterPair> pairs = PairProfiledKernels(px, py);
  REQUIRE_FALSE(pairs.empty());
  for (const CounterPair& p : pairs) {
    CHECK(p.a->kernel_name == p.name);
    CHECK(p.b->kernel_name == p.name);
  }
  const auto j = nlohmann::json::parse(CounterPairsJson(pairs));
  REQUIRE(j.size() == pairs.size());
  CHECK(j[0]["a"].contains("compute_pct"));
  CHECK(j[0]["b"]["stalls"].is_array());

  auto t = LoadTraceFile(std::string(GT_TESTS_DATA) + "/h200_torch_train.gtrace");
  REQUIRE(t.ok());
  // Its steps are numbered ranges ("step 0", "step 1", ...): instances of "step", as in the counters run.
  auto tc = LoadTraceFile(std::string(GT_TESTS_DATA) + "/h200_torch_counters.gtrace");
  REQUIRE(tc.ok());
  const Alignment numbered = Align(**t, **tc, AlignRequest{});
  CHECK(numbered.name == "step");
  CHECK(numbered.ordinal == 1);
  CHECK(numbered.a_anchor_ns == RangeInstances(**t, "step 1").at(0).start);
  CHECK(numbered.b_anchor_ns == RangeInstances(**tc, "step 1").at(0).start);
  CHECK(CompareSteps(**t, **tc, "step").size() ==
        std::max(RangeInstances(**t, "step").size(), RangeInstances(**tc, "step").size()));
  auto t2 = LoadTraceFile(std::string(GT_TESTS_DATA) + "/h200_torch_train.gtrace");
  REQUIRE(t2.ok());
  const Alignment al = Align(**t, **t2, AlignRequest{});
  CHECK(al.offset_ns == 0);
  INFO(al.reason);
  for (const NameChange& c : CompareKernels(**t, **t2)) CHECK(c.delta_ns() == 0);
  const EventId k = NthKernel(**t, CompareKernels(**t, **t2).front().name, 3);
  REQUIRE(k.valid());
  CHECK(Counterpart(**t, k, **t2, al.name) == k);
}

// The comparison's tables as CSV (the Compare tab's and the compared kernel table's CSV buttons).
TEST_CASE("compare: kernel rows and steps as CSV") {
  auto a = TraceA(), b = TraceB();
  const CsvTable steps = CompareStepsCsv(CompareSteps(*a, *b, "step"));
  REQUIRE(steps.rows.size() == 3);
  CHECK(steps.header[5] == "delta_ns");
  CHECK(steps.rows[0][3].value == "1000");
  CHECK(steps.rows[0][4].value == "800");
  CHECK(steps.rows[0][5].value == "-200");
  CHECK(steps.rows[2][8].value == "-30");  // kernel time 400 -> 370
  const std::vector<NameChange> rows = CompareKernels(*a, *b);
  const CsvTable kernels = CompareKernelsCsv(rows);
  REQUIRE(kernels.rows.size() == rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    CHECK(kernels.rows[i][0].value == rows[i].name);
    CHECK(kernels.rows[i][5].value == std::to_string(rows[i].delta_ns()));
  }
}

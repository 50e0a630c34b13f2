// Sampled CPU stacks in the viewer core (gt/viewer/cpu_samples.h): the global node table, range attribution
// and flame graphs from records built here, hostile records counted, and the idle-gap attribution on the two
// H200 ground-truth traces (a slow DataLoader, a .item() sync followed by Python bookkeeping).
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gt/viewer/cpu_samples.h"
#include "gt/viewer/json.h"
#include "gt/viewer/load.h"
#include "gt/viewer/summary.h"
#include "gt/writer.h"

using namespace gt;
using namespace gt::viewer;

namespace {

struct Built {
  std::string bytes;
  std::unique_ptr<TraceModel> model;
};

// Process 7: main -> step -> {load (python) -> sleep (native), forward (python)}; process 9 reuses node ids.
Built BuildSampleTrace(bool hostile) {
  Built b;
  auto w = std::move(TraceWriter::Create(MakeStringSink(&b.bytes)).value());
  const auto py = uint8_t(FrameKind::kPython), native = uint8_t(FrameKind::kNative);
  const StringId main = w->Intern("train.py:main:10"), step = w->Intern("train.py:step:20"),
                 load = w->Intern("data.py:Loader.__getitem__:5"),
                 sleep = w->Intern("libc.so.6!clock_nanosleep"), fwd = w->Intern("model.py:forward:30");
  w->Add(CpuStackNodeRecord{7, 1, 0, main, py});
  w->Add(CpuStackNodeRecord{7, 2, 1, step, py});
  w->Add(CpuStackNodeRecord{7, 3, 2, load, py});
  w->Add(CpuStackNodeRecord{7, 4, 3, sleep, native});
  w->Add(CpuStackNodeRecord{7, 5, 2, fwd, py});
  w->Add(CpuStackNodeRecord{9, 1, 0, sleep, native});  // same id, another process
  // 0..99 ms: 80 samples in load->sleep, 20 in forward on thread 70; 10 on thread 71 in nothing unwound;
  // 10 in process 9.
  for (int i = 0; i < 100; ++i)
    w->Add(CpuSampleRecord{int64_t(i) * 1000000, 7, 70, uint32_t(i < 80 ? 4 : 5), uint8_t(kSamplePython)});
  for (int i = 0; i < 10; ++i)
    w->Add(CpuSampleRecord{int64_t(i) * 1000000 + 5, 7, 71, 0, kSampleUnwindFailed});
  for (int i = 0; i < 10; ++i) w->Add(CpuSampleRecord{int64_t(i) * 1000000 + 7, 9, 90, 1, 0});
  if (hostile) {
    w->Add(CpuStackNodeRecord{7, 4, 0, fwd, py});   // a duplicate id
    w->Add(CpuStackNodeRecord{7, 0, 0, fwd, py});   // id 0
    w->Add(CpuStackNodeRecord{7, 6, 99, fwd, py});  // its caller never written
    w->Add(CpuStackNodeRecord{7, 8, 9, fwd, py});   // a caller made after it (a cycle, if followed)
    w->Add(CpuStackNodeRecord{7, 9, 8, load, py});
    w->Add(CpuSampleRecord{200000000, 7, 70, 12345, 0});  // a stack that does not exist
    w->Add(CpuSampleRecord{200000001, 7, 70, 9, 0});
  }
  REQUIRE(w->Finish().ok());
  auto m = LoadTrace({reinterpret_cast<const uint8_t*>(b.bytes.data()), b.bytes.size()});
  REQUIRE(m.ok());
  b.model = std::move(m.value());
  return b;
}

const LossStat* FindLoss(const TraceModel& m, const std::string& name) {
  for (const auto& l : m.losses)
    if (l.name == name) return &l;
  return nullptr;
}

}  // namespace

TEST_CASE("cpu samples: a range is attributed to its innermost Python frames, per thread set") {
  auto b = BuildSampleTrace(false);
  const TraceModel& m = *b.model;
  REQUIRE(m.cpu.size() == 120);
  CHECK(m.cpu.node_parent.size() == 7);  // node 0 + 6
  const uint32_t pids[] = {7};
  const ThreadKey main_thread[] = {{7, 70}};
  auto p = ProfileCpuRange(m, 0, 100000000, pids, main_thread);
  REQUIRE(p.samples == 100);
  CHECK(p.threads == 1);
  REQUIRE(p.hot.size() == 2);
  CHECK(p.hot[0].frame == "data.py:Loader.__getitem__:5");  // the Python frame, not the native sleep under it
  CHECK(p.hot[0].path == "train.py:step:20 → data.py:Loader.__getitem__:5");
  CHECK(p.hot[0].python);
  CHECK(p.hot[0].share == Approx(0.8));
  CHECK(p.hot[1].frame == "model.py:forward:30");
  // Every thread of process 7: the other thread's samples count, as not unwound.
  p = ProfileCpuRange(m, 0, 100000000, pids, {});
  CHECK(p.samples == 110);
  CHECK(p.not_unwound == 10);
  CHECK(p.python_samples == 100);
  CHECK(p.hot[0].share == Approx(0.8));  // of the samples with Python frames
  // Process 9 alone: a native-only stack is attributed to its native frame.
  const uint32_t other[] = {9};
  p = ProfileCpuRange(m, 0, 100000000, other, {});
  REQUIRE(p.hot.size() == 1);
  CHECK(p.hot[0].frame == "libc.so.6!clock_nanosleep");
  CHECK_FALSE(p.hot[0].python);
  // A sub-range: [80 ms, 100 ms) of thread 70 is all forward.
  p = ProfileCpuRange(m, 80000000, 100000000, pids, main_thread);
  CHECK(p.samples == 20);
  CHECK(p.hot[0].frame == "model.py:forward:30");
  CHECK(ProfileCpuRange(m, 5, 5, pids, {}).samples == 0);
}

TEST_CASE("cpu samples: the flame graph of a range merges call paths, heaviest first") {
  auto b = BuildSampleTrace(false);
  const uint32_t pids[] = {7};
  const auto f = BuildFlameGraph(*b.model, 0, 100000000, pids);
  // root, main, step, load, sleep, forward (depth-first, load before forward: 80 > 20)
  REQUIRE(f.size() == 6);
  const TraceModel& m = *b.model;
  CHECK(f[0].samples == 110);
  CHECK(f[0].self_samples == 10);  // not unwound
  CHECK(m.Str(f[1].frame) == "train.py:main:10");
  CHECK(f[1].samples == 100);
  CHECK(m.Str(f[3].frame) == "data.py:Loader.__getitem__:5");
  CHECK(f[3].depth == 3);
  CHECK(f[3].parent == 2);
  CHECK(m.Str(f[4].frame) == "libc.so.6!clock_nanosleep");
  CHECK(f[4].self_samples == 80);
  CHECK(m.Str(f[5].frame) == "model.py:forward:30");
  CHECK(f[5].parent == 2);
  CHECK(f[5].samples == 20);
  // All processes: process 9's sleep is a root frame of its own.
  CHECK(BuildFlameGraph(m, 0, 100000000, {}).size() == 7);
}

TEST_CASE("cpu samples: a flame graph of one thread") {
  auto b = BuildSampleTrace(false);
  const uint32_t pids[] = {7};
  const ThreadKey other[] = {{7, 71}}, main_thread[] = {{7, 70}};
  const auto f = BuildFlameGraph(*b.model, 0, 100000000, pids, other);
  REQUIRE(f.size() == 1);  // thread 71 has nothing unwound: the root alone, with its samples
  CHECK(f[0].samples == 10);
  CHECK(f[0].self_samples == 10);
  CHECK(BuildFlameGraph(*b.model, 0, 100000000, pids, main_thread)[0].samples == 100);
}

// The layout is the panel's drawing and the C API's answer: golden rectangles on the tiny graph.
TEST_CASE("cpu samples: flame layout by sample count, zoomed into a subtree") {
  auto b = BuildSampleTrace(false);
  const TraceModel& m = *b.model;
  const uint32_t pids[] = {7};
  const auto f = BuildFlameGraph(m, 0, 100000000, pids);  // 110 samples: root, main, step, load, sleep, fwd
  struct Want {
    uint32_t node, row;
    double x0, x1;
    bool above;
  };
  auto check = [&](const std::vector<FlameRect>& got, std::vector<Want> want) {
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      INFO("rect " << i);
      CHECK(got[i].node == want[i].node);
      CHECK(got[i].row == want[i].row);
      CHECK(got[i].x0 == Approx(want[i].x0));
      CHECK(got[i].x1 == Approx(want[i].x1));
      CHECK(got[i].above_focus == want[i].above);
    }
  };
  // Whole graph: main is 100/110 wide (10 samples not unwound leave the rest of the root bare).
  check(LayoutFlameGraph(f, 0), {{0, 0, 0, 1, false},
                                 {1, 1, 0, 100.0 / 110, false},
                                 {2, 2, 0, 100.0 / 110, false},
                                 {3, 3, 0, 80.0 / 110, false},
                                 {4, 4, 0, 80.0 / 110, false},
                                 {5, 3, 80.0 / 110, 100.0 / 110, false}});
  // Zoomed into step: root and main above it at full width, step's children by its 100 samples.
  check(LayoutFlameGraph(f, 2), {{0, 0, 0, 1, true},
                                 {1, 1, 0, 1, true},
                                 {2, 2, 0, 1, false},
                                 {3, 3, 0, 0.8, false},
                                 {4, 4, 0, 0.8, false},
                                 {5, 3, 0.8, 1, false}});
  // Zoomed into forward: load's subtree, a sibling, is gone.
  check(LayoutFlameGraph(f, 5),
        {{0, 0, 0, 1, true}, {1, 1, 0, 1, true}, {2, 2, 0, 1, true}, {5, 3, 0, 1, false}});
  // Narrower than 25% of the width: forward (20/110) left out.
  CHECK(LayoutFlameGraph(f, 0, 0.25).size() == 5);
  // A focus out of range is the root; an empty graph lays out nothing.
  CHECK(LayoutFlameGraph(f, 99).size() == 6);
  CHECK(LayoutFlameGraph({}, 0).empty());
  // The frames a folded line lists, and the JSON the C API returns.
  const auto path = FlamePath(f, 4);
  REQUIRE(path.size() == 4);
  CHECK(m.Str(f[path.front()].frame) == "train.py:main:10");
  CHECK(m.Str(f[path.back()].frame) == "libc.so.6!clock_nanosleep");
  const std::string j = FlameGraphJson(m, f, 5, LayoutFlameGraph(f, 5));
  CHECK(j.find("\"samples\":110") != std::string::npos);
  CHECK(j.find("\"function\":\"forward\"") != std::string::npos);
  CHECK(j.find("\"location\":\"model.py:30\"") != std::string::npos);
  CHECK(j.find("\"above_focus\":true") != std::string::npos);
}

TEST_CASE("cpu samples: frames split into function and location") {
  const auto py = uint8_t(FrameKind::kPython), native = uint8_t(FrameKind::kNative);
  auto p = SplitFrame("torch/utils/data/dataloader.py:_BaseDataLoaderIter.__next__:631", py);
  CHECK(p.function == "_BaseDataLoaderIter.__next__");
  CHECK(p.location == "torch/utils/data/dataloader.py:631");
  p = SplitFrame("libc.so.6!clock_nanosleep", native);
  CHECK(p.function == "clock_nanosleep");
  CHECK(p.location == "libc.so.6");
  p = SplitFrame("0x7f00deadbeef", native);  // unsymbolized: the address is all there is
  CHECK(p.function == "0x7f00deadbeef");
  CHECK(p.location.empty());
  p = SplitFrame("odd", py);  // not in the Python shape: kept whole
  CHECK(p.function == "odd");
  CHECK(SplitFrame(":x", py).function == ":x");
}

TEST_CASE("cpu samples: hostile nodes and samples are counted, never followed") {
  auto b = BuildSampleTrace(true);
  const TraceModel& m = *b.model;
  REQUIRE(FindLoss(m, "cpu_stack_nodes_duplicate"));
  CHECK(FindLoss(m, "cpu_stack_nodes_duplicate")->count == 2);
  REQUIRE(FindLoss(m, "cpu_stack_nodes_orphan"));
  CHECK(FindLoss(m, "cpu_stack_nodes_orphan")->count == 2);  // unknown caller; caller made later
  REQUIRE(FindLoss(m, "cpu_samples_unknown_stack"));
  CHECK(FindLoss(m, "cpu_samples_unknown_stack")->count == 1);
  // Every node's chain ends (no cycle) and the bad sample is "not unwound".
  for (uint32_t n = 1; n < m.cpu.node_parent.size(); ++n) CHECK(StackNodes(m, n).size() <= 4);
  const uint32_t pids[] = {7};
  auto p = ProfileCpuRange(m, 150000000, 300000000, pids, {});
  CHECK(p.samples == 2);
  CHECK(p.not_unwound == 1);
}

// Ground truth on the H200 (tests/data/README.md): steady-state gaps of the slow DataLoader belong to
// SlowDataset.__getitem__, those of the .item() loop to log_metrics.
TEST_CASE("cpu samples: H200 idle gaps are attributed to the frames that caused them") {
  struct Case {
    const char* file;
    const char* cause;
    int64_t min_ns, max_ns;
  };
  for (const Case& c : {Case{"cpu_h200_loader.gtrace", "SlowDataset.__getitem__", 10000000, 40000000},
                        Case{"cpu_h200_item.gtrace", "log_metrics", 2000000, 10000000}}) {
    INFO(c.file);
    auto m = LoadTraceFile(std::string(GT_TESTS_DATA) + "/" + c.file);
    REQUIRE(m.ok());
    REQUIRE((*m)->cpu.size() > 1000);
    const auto gaps = ExplainIdleGaps(**m, 1000, c.min_ns);
    int steady = 0, attributed = 0;
    for (const IdleGap& g : gaps) {
      if (g.end_ns - g.start_ns > c.max_ns) continue;  // start-up: imports, first launches, cuBLAS
      ++steady;
      if (std::getenv("GT_DEBUG_GAPS") && !g.cpu.hot.empty())
        std::fprintf(stderr, "%s gap %lld ns samples %llu: %s %.2f\n", c.file,
                     (long long)(g.end_ns - g.start_ns), (unsigned long long)g.cpu.samples,
                     g.cpu.hot[0].path.c_str(), g.cpu.hot[0].share);
      if (!g.cpu.hot.empty() && g.cpu.hot[0].path.find(c.cause) != std::string::npos &&
          g.cpu.hot[0].share >= 0.5) {
        ++attributed;
        CHECK(g.diagnosis.find(c.cause) != std::string::npos);
      } else {
        UNSCOPED_INFO("gap " << g.end_ns - g.start_ns
                             << " ns: " << (g.cpu.hot.empty() ? "no samples" : g.cpu.hot[0].path));
      }
    }
    // 30 steps: one gap per step at least; the others are the first step's warm-up (first forward, loss,
    // backward and optimizer calls), attributed to those frames.
    CHECK(attributed >= 25);
    CHECK(steady - attributed <= 6);
  }
}

// A CPython 3.14 process sampled on the H200 (tests/data/README.md): spin() called from Worker.run_for()
// called from the module body, each frame with its file, function and line, in that nesting; none unreadable.
TEST_CASE("cpu samples: Python 3.14 frames from a real interpreter, nested as called") {
  auto m = LoadTraceFile(std::string(GT_TESTS_DATA) + "/cpu_h200_python314.gtrace");
  REQUIRE(m.ok());
  const TraceModel& t = **m;
  const auto frame = [&](uint32_t node) -> const std::string& { return t.Str(t.cpu.node_frame[node]); };
  const auto ends = [](const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  uint64_t in_spin = 0, nested = 0, unreadable = 0;
  for (size_t i = 0; i < t.cpu.size(); ++i) {
    std::vector<std::string> python;  // innermost first
    for (uint32_t n = t.cpu.stack[i]; n != 0; n = t.cpu.node_parent[n]) {
      if (t.cpu.node_kind[n] != uint8_t(FrameKind::kPython)) continue;
      python.push_back(frame(n));
      unreadable += frame(n) == "<unreadable code object>";
    }
    if (python.empty() || python[0].find("py_spin_cuinit.py:spin:") == std::string::npos) continue;
    ++in_spin;
    nested += python.size() == 3 && ends(python[1], "py_spin_cuinit.py:Worker.run_for:13") &&
              ends(python[2], "py_spin_cuinit.py:<module>:32");
  }
  INFO("samples in spin " << in_spin << ", under run_for and the module " << nested);
  CHECK(in_spin >= 300);  // 1.5 s spinning, the rate governed down to 280-690 Hz
  CHECK(nested >= in_spin * 9 / 10);
  CHECK(unreadable == 0);
}

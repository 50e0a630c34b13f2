// The counters analyses from ProfiledData (gt/viewer/profiled.h): the one scan of the GPU lanes that
// CollectProfiledData makes gives what per-event lookups over the whole model gave (the oracle below is the
// lookup the details panel made per click before: FindProfiledLaunch with its graph-ordinal count), the wire
// form carries every number exactly, and a remote trace's counters section and roofline (what=profiled,
// built with the index) equal the loaded trace's.
#include <catch2/catch.hpp>
#include <cmath>
#include <deque>
#include <filesystem>
#include <map>
#include <tuple>

#include "gt/reader.h"
#include "gt/viewer/index.h"
#include "gt/viewer/index_query.h"
#include "gt/viewer/json.h"
#include "gt/viewer/load.h"
#include "gt/viewer/merge.h"
#include "gt/viewer/ncu.h"
#include "gt/viewer/profiled.h"
#include "gt/viewer/query.h"
#include "gt/viewer/remote.h"
#include "in_process_remote.h"

using namespace gt;
using namespace gt::viewer;

namespace {

// ---- the oracle: per-event lookups over the whole model

const LaunchConfig* ConfigOf(const TraceModel& m, EventId e) {
  const uint32_t cfg = m.Payload(e);
  return cfg < m.launch_configs.size() ? &m.launch_configs[cfg] : nullptr;
}

uint32_t GraphOrdinalOf(const TraceModel& m, EventId e, uint32_t pid) {
  const StringId name = m.Name(e);
  const auto key = std::make_tuple(m.CorrelationId(e), m.Start(e), e.lane, e.index);
  uint32_t before = 0;
  for (LaneId l = 0; l < m.lanes.size(); ++l) {
    const Lane& lane = m.lanes[l];
    if (lane.track == kNone || m.tracks[lane.track].kind != TrackKind::kGpuStream ||
        m.tracks[lane.track].pid != pid)
      continue;
    for (uint32_t i = 0; i < lane.size(); ++i) {
      const EventId o{l, i};
      if (lane.name[i] != name || m.Kind(o) != EventKind::kKernel) continue;
      const LaunchConfig* c = ConfigOf(m, o);
      if (c && c->graph_id && std::make_tuple(m.CorrelationId(o), m.Start(o), l, i) < key) ++before;
    }
  }
  return kGraphOrdinalBit | before;
}

size_t OracleLaunchOf(const TraceModel& m, const std::vector<KernelCounters>& launches, EventId e) {
  if (m.Kind(e) != EventKind::kKernel) return SIZE_MAX;
  const uint32_t corr = m.CorrelationId(e);
  if (!corr) return SIZE_MAX;
  const uint32_t pid = m.TrackOf(e).pid;
  const std::string& name = m.Str(m.Name(e));
  const LaunchConfig* config = ConfigOf(m, e);
  const bool graph = config && config->graph_id;
  const uint32_t ordinal = graph ? GraphOrdinalOf(m, e, pid) : kNone;
  for (size_t i = 0; i < launches.size(); ++i) {
    const KernelCounters& c = launches[i];
    if (c.pid != pid || c.correlation_id != corr || c.kernel_name != name) continue;
    if (IsGraphOrdinal(c.launch_ordinal) != graph) continue;
    if (!graph || c.launch_ordinal == ordinal) return i;
  }
  return SIZE_MAX;
}

std::vector<std::string> CounterFixtures() {
  std::vector<std::string> out;
  for (const auto& f : std::filesystem::recursive_directory_iterator(GT_TESTS_DATA))
    if (f.path().extension() == ".gtrace") out.push_back(f.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Everything the counters section, PC sampling and the roofline show, as text.
std::string Shown(const ProfiledKernels& p, const ProfiledData& d) {
  std::string s = KernelCountersJson(p, {}, nullptr, nullptr, nullptr);
  for (const KernelAnalysis& k : p.kernels) s += KernelCountersJson(p, {}, &k, nullptr, nullptr);
  for (const KernelAnalysis& k : p.launch_analyses) s += KernelCountersJson(p, {}, &k, nullptr, nullptr);
  for (double t : p.kernel_total_time_s) s += JsonNumber(t) + ",";
  for (EventId e : p.kernel_first_event) s += std::to_string(e.lane) + ":" + std::to_string(e.index) + ",";
  for (const auto& [e, l] : p.launch_of)
    s += std::to_string(e.lane) + ":" + std::to_string(e.index) + "=" + std::to_string(l) + ",";
  for (const PcSamplingProfile& pc :
       BuildPcSamplingProfiles(d.stall_samples, [&](StringId id) -> std::string_view { return d.Str(id); }))
    s += FormatPcSamplingProfile(pc);
  return s;
}

}  // namespace

TEST_CASE("profiled data: one lane scan finds what per-event lookups find, on every real fixture",
          "[profiled]") {
  size_t traces = 0, mapped = 0, graph = 0;
  for (const std::string& path : CounterFixtures()) {
    auto m = LoadTraceFile(path);
    if (!m.ok() || (*m)->kernel_metrics.empty()) continue;
    INFO(path);
    ++traces;
    const TraceModel& model = **m;
    const ProfiledKernels p = AnalyzeProfiledKernels(model);
    REQUIRE_FALSE(p.launches.empty());
    for (LaneId l = 0; l < model.lanes.size(); ++l)
      for (uint32_t i = 0; i < model.lanes[l].size(); ++i) {
        const size_t want = OracleLaunchOf(model, p.launches, {l, i});
        CHECK(p.LaunchOf({l, i}) == want);
        mapped += want != SIZE_MAX;
        graph += want != SIZE_MAX && IsGraphOrdinal(p.launches[want].launch_ordinal);
      }
    // Each kernel's first launch is FirstKernelEvent's; its total the sum over its events.
    REQUIRE(p.kernel_first_event.size() == p.kernels.size());
    for (size_t k = 0; k < p.kernels.size(); ++k) {
      const KernelAnalysis& a = p.kernels[k];
      const StringId id = FindString(model, a.kernel_name);
      CHECK(p.kernel_first_event[k] == (id ? FirstKernelEvent(model, a.pid, id) : EventId{}));
      double total = 0;
      bool any = false;
      for (const Lane& lane : model.lanes) {
        if (lane.track == kNone || model.tracks[lane.track].kind != TrackKind::kGpuStream ||
            model.tracks[lane.track].pid != a.pid)
          continue;
        for (uint32_t i = 0; i < lane.size(); ++i)
          if (model.Str(lane.name[i]) == a.kernel_name) total += lane.Duration(i) * 1e-9, any = true;
      }
      if (any) CHECK(p.kernel_total_time_s[k] == total);
    }
  }
  CHECK(traces >= 4);   // counters_h200, its cache_all twin, the torch graph, h200_torch_counters, ...
  CHECK(mapped >= 20);  // the fixtures' profiled launches were found on their timelines
  CHECK(graph >= 15);   // the graph fixture: every profiled graph launch by its ordinal
}

TEST_CASE("profiled data: ncu reports joined to a timeline map each profiled launch to its kernel",
          "[profiled]") {
  for (const char* w : {"copy", "fma", "strided", "bank_conflicts"}) {
    INFO(w);
    auto read = [](const std::string& f) {
      auto bytes = ReadFileBytes(std::string(GT_TESTS_DATA) + "/ncu/" + f);
      REQUIRE(bytes.ok());
      return std::move(*bytes);
    };
    const std::string timeline = read(std::string(w) + ".gtrace"), csv = read(std::string(w) + ".ncu.csv");
    auto span = [](const std::string& s) {
      return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size());
    };
    std::vector<MergeInput> inputs = {{"t.gtrace", span(timeline)}, {"n.csv", span(csv)}};
    std::vector<std::string> warnings;
    auto m = LoadTracesWithNcu(inputs, &warnings);
    REQUIRE(m.ok());
    const ProfiledKernels p = AnalyzeProfiledKernels(**m);
    size_t found = 0;
    for (LaneId l = 0; l < (*m)->lanes.size(); ++l)
      for (uint32_t i = 0; i < (*m)->lanes[l].size(); ++i) {
        const size_t want = OracleLaunchOf(**m, p.launches, {l, i});
        CHECK(p.LaunchOf({l, i}) == want);
        found += want != SIZE_MAX;
      }
    CHECK(found == p.launches.size());
  }
}

TEST_CASE("profiled data: the wire form carries every number exactly", "[profiled]") {
  for (const std::string& path : CounterFixtures()) {
    auto m = LoadTraceFile(path);
    if (!m.ok() || ((*m)->kernel_metrics.empty() && (*m)->stall_samples.empty())) continue;
    INFO(path);
    const ProfiledData d = CollectProfiledData(**m);
    auto back = ParseProfiledData(ProfiledDataJson(d));
    REQUIRE(back.ok());
    CHECK(back->devices == d.devices);
    CHECK(back->kernel_metrics == d.kernel_metrics);
    CHECK(back->stall_samples == d.stall_samples);
    CHECK(back->strings == d.strings);
    CHECK(back->launch_of == d.launch_of);
    CHECK(ProfiledDataJson(*back) == ProfiledDataJson(d));
    CHECK(Shown(AnalyzeProfiledKernels(*back), *back) == Shown(AnalyzeProfiledKernels(**m), d));
  }
  // Values JSON cannot spell travel as strings; 64-bit counts and PCs stay exact.
  ProfiledData d;
  d.kernel_metrics.push_back({1, 2, 3, kGraphOrdinalBit | 4, 5, NAN, 1});
  d.kernel_metrics.push_back({1, 2, 3, 4, 6, -INFINITY, 0});
  d.kernel_metrics.push_back({1, 2, 3, 4, 7, 0.1 + 0.2, 0});
  d.stall_samples.push_back({1, 2, 3, kNone, 8, UINT64_MAX, 9, 10, (uint64_t{1} << 63) + 1});
  d.strings = {{3, "k\"ernel\n"}, {5, "a"}, {8, "long_scoreboard"}};
  auto back = ParseProfiledData(ProfiledDataJson(d));
  REQUIRE(back.ok());
  CHECK(std::isnan(back->kernel_metrics[0].value));
  CHECK(back->kernel_metrics[1].value == -INFINITY);
  CHECK(back->kernel_metrics[2].value == 0.1 + 0.2);
  CHECK(back->stall_samples == d.stall_samples);
  CHECK(back->strings == d.strings);
}

TEST_CASE("profiled data: a damaged answer is refused with a reason, never trusted", "[profiled]") {
  for (const char* bad :
       {"", "[]", "nul", "{\"metrics\":{}}", "{\"metrics\":[[1,2,3]]}", "{\"metrics\":[[1,2,3,4,5,6,7,8]]}",
        "{\"metrics\":[[1,2,3,4,5,\"x\",7]]}", "{\"metrics\":[[-1,2,3,4,5,6,7]]}",
        "{\"metrics\":[[1,2,3,4,5,6,256]]}", "{\"joins\":[[1,2,4294967296,0,0,0,0,0]]}",
        "{\"strings\":{\"x\":\"a\"}}", "{\"strings\":{\"1\":2}}", "{\"strings\":{\"99999999999\":\"a\"}}",
        "{\"launch_of\":[[0,0]]}", "{\"names\":[[1,2,3,4,5]]}"}) {
    INFO(bad);
    auto d = ParseProfiledData(bad);
    REQUIRE_FALSE(d.ok());
    CHECK(d.status().code() == StatusCode::kCorrupt);
  }
  // Well formed but lying: a launch index past the launches, events the trace does not have. The analysis
  // does not follow them (the UI checks lanes against its layout before selecting).
  auto d = ParseProfiledData(
      "{\"metrics\":[[1,7,3,0,5,1.5,0]],\"strings\":{\"3\":\"k\",\"5\":\"gpu__time_duration.sum\"},"
      "\"launch_of\":[[0,0,99],[4000000000,1,0]],\"joins\":[[1,7,0,1,32,0,0,0]],\"names\":[[1,\"k\",1e-3,9,9]"
      "]}");
  REQUIRE(d.ok());
  const ProfiledKernels p = AnalyzeProfiledKernels(*d);
  REQUIRE(p.launches.size() == 1);
  CHECK(p.LaunchOf({0, 0}) == SIZE_MAX);  // launch 99 does not exist
  CHECK(p.LaunchOf({4000000000u, 1}) == 0);
  CHECK(p.kernel_total_time_s == std::vector<double>{1e-3});
}

TEST_CASE("profiled data: a remote trace's counters equal the loaded trace's", "[profiled][remote]") {
  size_t checked = 0;
  for (const char* f : {"counters_h200.gtrace", "counters_torch_graph_h200.gtrace", "pcsampling_h200.gtrace",
                        "h200_idle.gtrace"}) {
    INFO(f);
    auto m = LoadTraceFile(std::string(GT_TESTS_DATA) + "/" + f);
    REQUIRE(m.ok());
    const std::vector<uint8_t> bytes = EncodeIndex(**m, {});
    auto opened = MappedIndex::FromBytes(bytes, {});
    REQUIRE(opened.ok());
    test::InProcessRemote client(**opened);
    RemoteTrace& r = client.r;
    auto& queue = client.queue;
    auto pump = [&] { client.Pump(); };
    r.Start();
    pump();
    REQUIRE(r.state() == RemoteTrace::State::kReady);
    CHECK(r.Profiled() == nullptr);  // asked for now
    CHECK(r.Profiled() == nullptr);  // and once
    CHECK(queue.size() == 1);
    pump();
    const ProfiledData* got = r.Profiled();
    REQUIRE(got != nullptr);
    CHECK(r.profiled_error().empty());
    const ProfiledData want = CollectProfiledData(**m);
    CHECK(ProfiledDataJson(*got) == ProfiledDataJson(want));
    CHECK(Shown(AnalyzeProfiledKernels(*got), *got) == Shown(AnalyzeProfiledKernels(**m), want));
    checked += !want.empty();
  }
  CHECK(checked == 3);  // h200_idle has no counters: an empty answer, an empty section
}

TEST_CASE("profiled data: a server that cannot send them is said, not retried forever",
          "[profiled][remote]") {
  auto m = LoadTraceFile(std::string(GT_TESTS_DATA) + "/counters_h200.gtrace");
  REQUIRE(m.ok());
  const std::vector<uint8_t> bytes = EncodeIndex(**m, {});
  auto opened = MappedIndex::FromBytes(bytes, {});
  REQUIRE(opened.ok());
  std::deque<std::pair<uint64_t, std::string>> queue;
  RemoteTrace r([&](uint64_t id, const std::string& url) { queue.push_back({id, url}); });
  r.Start();
  REQUIRE(queue.size() == 1);
  const IndexAnswer meta = AnswerIndexQuery(**opened, "meta", {});
  r.OnAnswer(queue.front().first, meta.status, meta.body);
  queue.pop_front();
  REQUIRE(r.state() == RemoteTrace::State::kReady);
  CHECK(r.Profiled() == nullptr);
  REQUIRE(queue.size() == 1);
  CHECK(queue.front().second == "profiled");
  r.OnAnswer(queue.front().first, 404, R"({"error":"not found","status":404})");
  queue.pop_front();
  CHECK(r.Profiled() == nullptr);
  CHECK(r.profiled_error() == "not found");
  CHECK(queue.empty());
}

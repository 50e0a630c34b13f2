// Chrome trace JSON and Kineto JSON import: golden mappings, exact timestamps, damaged input.
#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>

#include "gt/viewer/load.h"
#include "gt/viewer/query.h"
#include "gt/viewer/summary.h"
#include "test_util.h"

using namespace gt;
using namespace gt::viewer;

static std::unique_ptr<TraceModel> Import(const std::string& json) {
  auto m = LoadTrace(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(json.data()), json.size()));
  REQUIRE(m.ok());
  return std::move(m.value());
}

static std::string Field(const std::vector<DetailField>& f, const std::string& name) {
  for (const auto& x : f)
    if (x.name == name) return x.value;
  return "<missing " + name + ">";
}

// Shaped like torch.profiler's export_chrome_trace (PyTorch 2.x).
static const char* kKineto = R"J({
  "schemaVersion": 1,
  "deviceProperties": [
    {"id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150754820096, "computeMajor": 9, "computeMinor": 0,
     "maxThreadsPerBlock": 1024, "numSms": 132, "regsPerMultiprocessor": 65536}
  ],
  "traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 4000, "tid": 4001, "ts": 1712345678901000.000,
     "dur": 50.5, "args": {"External id": 12, "Input Dims": [[64, 64], [64, 64]], "Input type": ["float", "float"]}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 4000, "tid": 4001,
     "ts": 1712345678901010.123, "dur": 5.25, "args": {"cbid": 211, "correlation": 77, "External id": 12}},
    {"ph": "X", "cat": "kernel", "name": "volta_sgemm_64x64_nn", "pid": 0, "tid": 7,
     "ts": 1712345678901020.456, "dur": 12.001,
     "args": {"queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": 77, "registers per thread": 126,
              "shared memory": 8192, "blocks per SM": 0.5, "warps per SM": 2.0, "grid": [2, 2, 1],
              "block": [256, 1, 1], "est. achieved occupancy %": 6}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 4000, "tid": 4001,
     "ts": 1712345678901040, "dur": 3, "args": {"cbid": 41, "correlation": 78}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pinned)", "pid": 0, "tid": 7,
     "ts": 1712345678901050, "dur": 4, "args": {"device": 0, "context": 1, "stream": 7, "correlation": 78,
     "bytes": 4000000, "memory bandwidth (GB/s)": 1000}},
    {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 1712345678901060,
     "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 79, "bytes": 256}},
    {"ph": "X", "cat": "gpu_user_annotation", "name": "forward", "pid": 0, "tid": 7, "ts": 1712345678901019,
     "dur": 40, "args": {"device": 0, "stream": 7}},
    {"ph": "s", "id": 77, "pid": 4000, "tid": 4001, "ts": 1712345678901010.123, "cat": "ac2g", "name": "ac2g"},
    {"ph": "f", "id": 77, "pid": 0, "tid": 7, "ts": 1712345678901020.456, "cat": "ac2g", "name": "ac2g", "bp": "e"},
    {"ph": "X", "cat": "python_function", "name": "train.py(10): step", "pid": 4000, "tid": 4001,
     "ts": 1712345678900990, "dur": 100},
    {"name": "process_name", "ph": "M", "ts": 0, "pid": 4000, "tid": 0, "args": {"name": "python3"}},
    {"name": "thread_name", "ph": "M", "ts": 0, "pid": 4000, "tid": 4001, "args": {"name": "MainThread"}}
  ],
  "traceName": "trace.json"
})J";

TEST_CASE("Kineto JSON: CPU ops, runtime calls, kernels, memcpy, memset, annotations", "[import][kineto]") {
  auto m = Import(kKineto);
  CHECK(m->format == SourceFormat::kKinetoJson);
  CHECK(m->event_count == 8);
  EventId k = test::FindByName(*m, "volta_sgemm_64x64_nn");
  REQUIRE(k.valid());
  CHECK(m->Kind(k) == EventKind::kKernel);
  CHECK(m->Start(k) == 1712345678901020456);  // exact to the nanosecond
  CHECK(m->End(k) - m->Start(k) == 12001);
  const Track& kt = m->TrackOf(k);
  CHECK(kt.kind == TrackKind::kGpuStream);
  CHECK(kt.pid == 4000);  // GPU work is attributed to the issuing process
  CHECK(kt.stream_id == 7);
  CHECK(m->groups[kt.group].name == "GPU 0: NVIDIA H200");
  auto d = EventDetails(*m, k);
  CHECK(Field(d, "Grid") == "(2, 2, 1)");
  CHECK(Field(d, "Block") == "(256, 1, 1)");
  CHECK(Field(d, "Registers/thread") == "126");
  CHECK(Field(d, "Shared memory (static)") == "8.00 KiB");
  CHECK(Field(d, "est. achieved occupancy %") == "6");
  EventId launch = test::FindByName(*m, "cudaLaunchKernel");
  REQUIRE(launch.valid());
  CHECK(m->Kind(launch) == EventKind::kApi);
  CHECK(FlowPartner(*m, launch) == k);
  CHECK(FlowPartner(*m, k) == launch);
  CHECK(m->flows.empty());  // ac2g flows are implied by correlation ids

  EventId copy = test::FindByName(*m, "Memcpy DtoH");
  REQUIRE(copy.valid());
  auto cd = EventDetails(*m, copy);
  CHECK(Field(cd, "Bytes") == "3.81 MiB (4000000)");
  CHECK(Field(cd, "Bandwidth") == "1.00 TB/s");
  CHECK(Field(cd, "Source memory") == MemoryKindName(uint8_t(MemoryKind::kDevice)));
  CHECK(Field(cd, "Destination memory") == MemoryKindName(uint8_t(MemoryKind::kPinned)));
  CHECK(FlowPartner(*m, copy) == test::FindByName(*m, "cudaMemcpyAsync"));
  CHECK(test::FindByName(*m, "Memset").valid());

  EventId op = test::FindByName(*m, "aten::mm");
  REQUIRE(op.valid());
  CHECK(m->Kind(op) == EventKind::kHostOp);
  CHECK(m->lanes[op.lane].depth == 1);  // under the python_function
  auto od = EventDetails(*m, op);
  CHECK(Field(od, "Category") == "cpu_op");
  CHECK(Field(od, "Input Dims") == "[[64,64],[64,64]]");
  CHECK(Field(od, "External id") == "12");
  EventId ann = test::FindByName(*m, "forward");
  REQUIRE(ann.valid());
  CHECK(m->TrackOf(ann).kind == TrackKind::kGpuAnnotations);
  CHECK(m->groups[m->TrackOf(op).group].name == "python3 (pid 4000)");
  CHECK(m->TrackOf(op).name == "MainThread (4001) · Ranges");
  auto rows = KernelSummary(*m);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].total_ns == 12001);
}

TEST_CASE("Chrome JSON: X, B/E, instants, counters, metadata, flows, async, string pids",
          "[import][chrome]") {
  const std::string json = R"J([
    {"ph":"B","name":"outer","pid":1,"tid":2,"ts":10},
    {"ph":"X","name":"inner","pid":1,"tid":2,"ts":12,"dur":3,"args":{"n":1}},
    {"ph":"E","pid":1,"tid":2,"ts":20,"args":{"result":"ok"}},
    {"ph":"i","name":"tick","pid":1,"tid":2,"ts":15,"s":"t"},
    {"ph":"C","name":"mem","pid":1,"ts":10,"args":{"heap":100,"stack":5}},
    {"ph":"C","name":"mem","pid":1,"ts":20,"args":{"heap":150,"stack":6}},
    {"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"worker"}},
    {"ph":"X","name":"consumer","pid":1,"tid":3,"ts":30,"dur":10},
    {"ph":"s","id":"0x1","cat":"q","name":"msg","pid":1,"tid":2,"ts":13},
    {"ph":"f","id":"0x1","cat":"q","name":"msg","pid":1,"tid":3,"ts":31,"bp":"e"},
    {"ph":"b","id":5,"cat":"net","name":"request","pid":1,"ts":5},
    {"ph":"e","id":5,"cat":"net","name":"request","pid":1,"ts":50},
    {"ph":"X","name":"gpu thing","pid":"Renderer","tid":"Compositor","ts":1,"dur":2},
    {"ph":"E","pid":1,"tid":9,"ts":20},
    {"ph":"X","name":"no ts","pid":1,"tid":2},
    {"ph":"Q","name":"weird","pid":1,"tid":2,"ts":1}
  ])J";
  auto m = Import(json);
  CHECK(m->format == SourceFormat::kChromeJson);
  EventId outer = test::FindByName(*m, "outer");
  REQUIRE(outer.valid());
  CHECK(m->Start(outer) == 10000);
  CHECK(m->End(outer) == 20000);
  CHECK(Field(EventDetails(*m, outer), "result") == "ok");
  EventId inner = test::FindByName(*m, "inner");
  CHECK(m->lanes[inner.lane].depth == 1);
  CHECK(m->TrackOf(inner).name == "worker (2) · Ranges");
  EventId tick = test::FindByName(*m, "tick");
  CHECK(m->Kind(tick) == EventKind::kInstant);
  REQUIRE(m->counters.size() == 2);
  CHECK(m->tracks[m->counters[0].track].name == "mem heap");
  CHECK(m->counters[0].value == std::vector<double>{100, 150});
  REQUIRE(m->flows.size() == 1);
  CHECK(m->flows[0].from == inner);
  CHECK(m->flows[0].to == test::FindByName(*m, "consumer"));
  CHECK(FlowsOf(*m, inner).size() == 1);
  EventId req = test::FindByName(*m, "request");
  REQUIRE(req.valid());
  CHECK(m->End(req) - m->Start(req) == 45000);
  CHECK(m->TrackOf(req).name == "Async events · Ranges");  // an importer's row: no thread id
  EventId g = test::FindByName(*m, "gpu thing");
  REQUIRE(g.valid());
  CHECK(m->groups[m->TrackOf(g).group].name.rfind("Renderer", 0) == 0);
  CHECK(m->TrackOf(g).name.rfind("Compositor", 0) == 0);
  // Skipped events are counted by reason, never silently dropped.
  uint64_t skipped = 0;
  for (const auto& l : LossSummary(*m))
    if (l.name == "json_events_skipped") skipped += l.count;
  CHECK(skipped == 3);
}

TEST_CASE("Chrome JSON: instants of scope g and p get rows of their own", "[import][chrome]") {
  const std::string json = R"J([
    {"ph":"X","name":"work","pid":1,"tid":2,"ts":10,"dur":5},
    {"ph":"i","name":"on thread","pid":1,"tid":2,"ts":11,"s":"t"},
    {"ph":"i","name":"no scope","pid":1,"tid":2,"ts":12},
    {"ph":"I","name":"whole process","pid":1,"tid":2,"ts":13,"s":"p"},
    {"ph":"i","name":"whole trace","pid":1,"tid":2,"ts":14,"s":"g"},
    {"ph":"i","name":"whole trace too","pid":7,"tid":8,"ts":15,"s":"g"},
    {"ph":"X","name":"other work","pid":7,"tid":8,"ts":10,"dur":9}
  ])J";
  auto m = Import(json);
  auto track = [&](const char* name) -> const Track& {
    const EventId e = test::FindByName(*m, name);
    REQUIRE(e.valid());
    CHECK(m->Kind(e) == (std::string_view(name).find("work") == std::string_view::npos ? EventKind::kInstant
                                                                                       : EventKind::kHostOp));
    return m->TrackOf(e);
  };
  const Track& work = track("work");
  CHECK(&track("on thread") == &work);
  CHECK(&track("no scope") == &work);
  const Track& process = track("whole process");
  CHECK(process.name == "Process instants · Ranges");
  CHECK(process.group == work.group);
  const Track& global = track("whole trace");
  CHECK(&track("whole trace too") == &global);
  CHECK(global.name == "Global instants · Ranges");
  CHECK(m->groups[global.group].name.rfind("Global", 0) == 0);
  // The trace-wide row comes first, above every process.
  CHECK(global.group < work.group);
  CHECK(global.group < track("other work").group);
}

TEST_CASE("Chrome JSON: row labels give ids as the trace wrote them, once, and none made up",
          "[import][chrome]") {
  const std::string json = R"J([
    {"ph":"M","name":"thread_name","pid":410,"tid":410,"args":{"name":"thread 410 (python3)"}},
    {"ph":"M","name":"thread_name","pid":410,"tid":41,"args":{"name":"worker 410"}},
    {"ph":"X","name":"a","pid":410,"tid":410,"ts":1,"dur":1},
    {"ph":"X","name":"b","pid":410,"tid":41,"ts":1,"dur":1},
    {"ph":"X","name":"c","pid":-1,"tid":0,"ts":1,"dur":1},
    {"ph":"X","name":"d","pid":"Spans","tid":"PyTorch Profiler","ts":1,"dur":1}
  ])J";
  auto m = Import(json);
  auto track = [&](const char* name) -> const Track& {
    const EventId e = test::FindByName(*m, name);
    REQUIRE(e.valid());
    return m->TrackOf(e);
  };
  CHECK(track("a").name == "thread 410 (python3) · Ranges");  // its tid is in its name already
  CHECK(track("b").name == "worker 410 (41) · Ranges");       // 410 is not 41
  CHECK(m->groups[track("c").group].name == "Process -1");
  CHECK(track("c").name == "Thread 0 · Ranges");
  CHECK(m->groups[track("d").group].name == "Spans");  // a string pid: no made-up number
  CHECK(track("d").name == "PyTorch Profiler · Ranges");
}

TEST_CASE("Chrome JSON: B/E pairs keep their own args; async ends match by name, else by id",
          "[import][chrome]") {
  // The B/E stacks reuse their slots' buffers: a later pair must not see an earlier pair's args or name.
  const std::string json = R"J([
    {"ph":"B","name":"first","pid":1,"tid":2,"ts":10,"args":{"a":1,"b":"x"}},
    {"ph":"B","name":"nested","pid":1,"tid":2,"ts":11,"args":{"c":3}},
    {"ph":"E","pid":1,"tid":2,"ts":12},
    {"ph":"E","pid":1,"tid":2,"ts":13,"args":{"end":"yes"}},
    {"ph":"B","name":"second","pid":1,"tid":2,"ts":20},
    {"ph":"B","pid":1,"tid":3,"ts":21,"args":{"t3":1}},
    {"ph":"E","pid":1,"tid":2,"ts":22},
    {"ph":"E","pid":1,"tid":3,"ts":23},
    {"ph":"b","id":5,"cat":"net","name":"outer","pid":1,"ts":100},
    {"ph":"b","id":5,"cat":"net","name":"inner","pid":1,"ts":110},
    {"ph":"b","id":5,"cat":"other","name":"inner","pid":1,"ts":111},
    {"ph":"e","id":5,"cat":"net","name":"inner","pid":1,"ts":120},
    {"ph":"e","id":5,"cat":"net","pid":1,"ts":150},
    {"ph":"e","id":5,"cat":"other","name":"renamed","pid":1,"ts":160},
    {"ph":"e","id":5,"cat":"net","name":"outer","pid":1,"ts":170},
    {"ph":"b","id":6,"cat":"net","name":"z","pid":1,"ts":200},
    {"ph":"b","id":6,"cat":"net","name":"y","pid":1,"ts":201},
    {"ph":"b","id":6,"cat":"net","name":"z","pid":1,"ts":202},
    {"ph":"e","id":6,"cat":"net","pid":1,"ts":210},
    {"ph":"e","id":6,"cat":"net","pid":1,"ts":220},
    {"ph":"e","id":6,"cat":"net","pid":1,"ts":230}
  ])J";
  auto m = Import(json);
  const EventId first = test::FindByName(*m, "first"), nested = test::FindByName(*m, "nested"),
                second = test::FindByName(*m, "second");
  REQUIRE((first.valid() && nested.valid() && second.valid()));
  CHECK(m->End(first) == 13000);
  CHECK(m->End(nested) == 12000);
  const auto fd = EventDetails(*m, first), nd = EventDetails(*m, nested), sd = EventDetails(*m, second);
  CHECK(Field(fd, "a") == "1");
  CHECK(Field(fd, "b") == "x");
  CHECK(Field(fd, "end") == "yes");
  CHECK(Field(nd, "c") == "3");
  CHECK(Field(nd, "a") == "<missing a>");
  CHECK(Field(sd, "a") == "<missing a>");
  CHECK(Field(sd, "c") == "<missing c>");
  CHECK(Field(sd, "end") == "<missing end>");
  CHECK(m->End(second) == 22000);
  // The unnamed B on thread 3 gets no name or args left over from an earlier B.
  uint64_t named_first = 0;
  for (uint32_t l = 0; l < m->lanes.size(); ++l)
    for (uint32_t i = 0; i < m->lanes[l].size(); ++i) named_first += m->Str(m->lanes[l].name[i]) == "first";
  CHECK(named_first == 1);

  // Async: the end named "inner" closes inner (110..120); the unnamed end closes the only one left of id 5
  // in "net", outer (100..150); the "other" end's name matches nothing, so the id's one open event closes.
  // The last "net" end of id 5 finds nothing open: skipped, counted.
  std::vector<std::pair<int64_t, int64_t>> outer, inner, y, z;
  for (uint32_t l = 0; l < m->lanes.size(); ++l)
    for (uint32_t i = 0; i < m->lanes[l].size(); ++i) {
      const EventId id{l, i};
      const std::string n(m->Str(m->lanes[l].name[i]));
      auto span = std::pair{m->Start(id) / 1000, m->End(id) / 1000};
      if (n == "outer") outer.push_back(span);
      if (n == "inner") inner.push_back(span);
      if (n == "y") y.push_back(span);
      if (n == "z") z.push_back(span);
    }
  std::sort(inner.begin(), inner.end());
  std::sort(z.begin(), z.end());
  CHECK(outer == std::vector<std::pair<int64_t, int64_t>>{{100, 150}});
  CHECK(inner == std::vector<std::pair<int64_t, int64_t>>{{110, 120}, {111, 160}});
  // Unnamed ends of id 6: none is named "", so each closes the latest open event of the smallest name.
  CHECK(y == std::vector<std::pair<int64_t, int64_t>>{{201, 210}});
  CHECK(z == std::vector<std::pair<int64_t, int64_t>>{{200, 230}, {202, 220}});
  uint64_t skipped = 0;
  for (const auto& l : LossSummary(*m))
    if (l.name == "json_events_skipped") skipped += l.count;
  CHECK(skipped == 1);
}

TEST_CASE("Chrome JSON: async ends without a name cost a lookup, however many ids or names came before",
          "[import][chrome]") {
  // An id's entry used to stay after its events closed, and every unnamed end scanned all of them: 40 K
  // such pairs took 84 s. Pairs one after another, so each is one event on the async row.
  constexpr int kPairs = 60000;
  std::string json = "[";
  for (int i = 0; i < kPairs; ++i) {
    json += "{\"ph\":\"b\",\"id\":\"0x" + std::to_string(i) +
            "\",\"cat\":\"c\",\"name\":\"Load\",\"pid\":1," + "\"ts\":" + std::to_string(i * 10) + "},";
    json += "{\"ph\":\"e\",\"id\":\"0x" + std::to_string(i) +
            "\",\"cat\":\"c\",\"pid\":1,\"ts\":" + std::to_string(i * 10 + 5) + "}" +
            (i + 1 < kPairs ? "," : "]");
  }
  auto m = Import(json);
  CHECK(m->event_count == kPairs);
  CHECK(LossSummary(*m).empty());

  // 30,000 begins of one id under distinct names, then as many unnamed ends (each closes the smallest name
  // left): 27 s when each end scanned the open events. Only the first 1,024 fit the async row's depths; the
  // rest are counted as too deep, so every end found its begin.
  constexpr int kOpen = 30000;
  json = "[";
  for (int i = 0; i < kOpen; ++i)
    json += "{\"ph\":\"b\",\"id\":1,\"cat\":\"c\",\"name\":\"n" + std::to_string(i) +
            "\",\"pid\":1,\"ts\":" + std::to_string(i) + "},";
  for (int i = 0; i < kOpen; ++i)
    json += "{\"ph\":\"e\",\"id\":1,\"cat\":\"c\",\"pid\":1,\"ts\":" + std::to_string(kOpen + i) + "}" +
            (i + 1 < kOpen ? "," : "]");
  m = Import(json);
  uint64_t placed = m->event_count, too_deep = 0, skipped = 0;
  for (const auto& l : LossSummary(*m)) {
    if (l.name == "nesting_too_deep") too_deep += l.count;
    if (l.name == "json_events_skipped") skipped += l.count;
  }
  CHECK(skipped == 0);
  CHECK(placed + too_deep == kOpen);
}

TEST_CASE("JSON: args texts repeated close together are stored once, distinct ones each once", "[import]") {
  // Args texts are appended to the string table (nearly all are distinct), through a small cache by hash
  // that keeps repeats from being stored again.
  std::string json = "[";
  for (int i = 0; i < 3000; ++i)
    json += std::string(i ? "," : "") +
            "{\"ph\":\"X\",\"name\":\"op\",\"pid\":1,\"tid\":1,\"ts\":" + std::to_string(i * 10) +
            ",\"dur\":5,\"args\":{\"shape\":\"[" + std::to_string(i % 3) +
            "]\",\"id\":" + std::to_string(i < 1500 ? 7 : i) + "}}";
  json += "]";
  auto m = Import(json);
  REQUIRE(m->event_count == 3000);
  size_t texts = 0;
  for (const std::string& s : m->strings) texts += s.rfind("shape: ", 0) == 0;
  CHECK(texts ==
        3 + 1500);  // the first half cycles through 3 texts; the second half's ids make each distinct
  const EventId first = test::FindByName(*m, "op");
  REQUIRE(first.valid());
  CHECK(Field(EventDetails(*m, first), "shape") == "[0]");
}

TEST_CASE("JSON: truncated input keeps what came before, garbage fails clearly", "[import][damage]") {
  std::string full = kKineto;
  std::string cut = full.substr(0, full.find("\"cat\": \"gpu_memcpy\""));
  auto m = Import(cut);
  CHECK(m->event_count >= 3);
  bool flagged = false;
  for (const auto& l : LossSummary(*m)) flagged |= l.name == "json_truncated";
  CHECK(flagged);
  CHECK(HasDataLoss(*m));

  for (std::string bad :
       {"{", "[]", "{\"traceEvents\": 5}", "{\"a\":1}", "[1,2,3]", "{\"traceEvents\":[{]}"}) {
    auto r = LoadTrace(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bad.data()), bad.size()));
    CHECK_FALSE(r.ok());
  }
  std::string text = "hello world";
  auto r = LoadTrace(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("unrecognized") != std::string::npos);
}

TEST_CASE("JSON: hostile values do not crash or wrap", "[import][damage]") {
  const std::string json = R"J({"traceEvents":[
    {"ph":"X","name":"a","pid":1,"tid":1,"ts":99999999999999999999999,"dur":1},
    {"ph":"X","name":"b","pid":-5,"tid":1e300,"ts":1,"dur":-4},
    {"ph":"X","name":"d","pid":1,"tid":1,"ts":9223372036854775,"dur":9223372036854775},
    {"ph":"X","name":"e","pid":1,"tid":1,"ts":"12","dur":"3"},
    {"ph":"X","name":"f","pid":1,"tid":1,"ts":5,"dur":1,"args":{"grid":"[99999999999, -1, x]"}},
    {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":1,"ts":5,"dur":1,"args":{"grid":[1e20,-1,"x"],"stream":-1}}
  ]})J";
  auto m = Import(json);
  CHECK(test::FindByName(*m, "e").valid());
  CHECK(test::FindByName(*m, "k").valid());
  CHECK(m->event_count >= 3);
  // A number no double can hold is a parse error in the middle: the events before it are kept.
  const std::string overflow = R"J([{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1},
                                   {"ph":"X","name":"c","pid":1,"tid":1,"ts":1e400,"dur":1}])J";
  auto o =
      LoadTrace(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(overflow.data()), overflow.size()));
  REQUIRE(o.ok());
  CHECK(o.value()->event_count == 1);
}

// Found by fuzz_import_load / fuzz_import_json: times at the int64 limit are valid input, and the model's
// extent and the per-name totals saturate instead of overflowing (UBSan: signed overflow).
TEST_CASE("import: int64-limit times saturate spans and totals", "[import]") {
  const std::string json = R"J([
    {"ph":"X","name":"a","pid":1,"tid":1,"ts":-4,"dur":1},
    {"ph":"X","name":"a","pid":1,"tid":1,"ts":9223372036854775,"dur":0},
    {"ph":"X","name":"b","pid":1,"tid":2,"ts":0,"dur":9223372036854775}
  ])J";
  auto m = Import(json);
  CHECK(m->event_count == 3);
  CHECK(m->first_ns == -4000);
  CHECK(m->span_ns() == std::numeric_limits<int64_t>::max());
  const std::string report = StatsReport(*m, 10);
  CHECK(report.find("Duration:") != std::string::npos);
  CHECK(FormatTimestamp(*m, m->last_ns) == "+9223372036.854779000 s");
  CHECK(FormatTimestamp(*m, std::numeric_limits<int64_t>::min()) == "-9223372036.854771808 s");
}

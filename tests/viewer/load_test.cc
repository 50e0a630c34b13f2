// Loading: format sniffing, .gtrace streamed into the builder, gzip, damaged files, real fixtures
// (tests/data).
#include <catch2/catch.hpp>

#include "gt/viewer/load.h"
#include "gt/viewer/query.h"
#include "gt/viewer/summary.h"
#include "gt/writer.h"
#include "gzip_util.h"
#include "parallel.h"  // GT_VIEWER_THREADS
#include "synth_trace.h"
#include "test_util.h"
#include "writer_sink.h"

using namespace gt;
using namespace gt::viewer;

static std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

static std::string SynthGtrace(uint64_t events, gt::synth::SynthCounts* counts) {
  std::string out;
  WriterOptions wo;
  wo.max_records_per_chunk = 4096;  // many chunks: damage hits only some
  auto w = TraceWriter::Create(MakeStringSink(&out), wo);
  REQUIRE(w.ok());
  gt::synth::WriterSink sink(*w.value());
  gt::synth::SynthOptions o;
  o.events = events;
  *counts = gt::synth::GenerateSynthTrace(sink, o);
  REQUIRE(sink.ok());
  REQUIRE(w.value()->Finish().ok());
  return out;
}

TEST_CASE("format sniffing by content", "[load]") {
  CHECK(DetectFormat(Bytes("  \n{\"traceEvents\":[]}")) == DetectedFormat::kJson);
  CHECK(DetectFormat(Bytes("\xEF\xBB\xBF[")) == DetectedFormat::kJson);
  CHECK(DetectFormat(Bytes(std::string("\x1f\x8b\x08", 3))) == DetectedFormat::kGzip);
  CHECK(DetectFormat(Bytes("GTRACE??")) == DetectedFormat::kUnknown);
  CHECK(DetectFormat(Bytes("")) == DetectedFormat::kUnknown);
  gt::synth::SynthCounts c;
  CHECK(DetectFormat(Bytes(SynthGtrace(100, &c))) == DetectedFormat::kGtrace);
}

TEST_CASE(".gtrace streams chunk by chunk into the model, with progress", "[load][gtrace]") {
  gt::synth::SynthCounts counts;
  std::string file = SynthGtrace(100000, &counts);
  TraceLoader loader;
  LoadOptions opt;
  opt.chunks_per_step = 2;
  REQUIRE(loader.Open(Bytes(file), opt).ok());
  int steps = 0;
  double last = 0;
  while (!loader.done()) {
    loader.Step();
    REQUIRE(loader.progress() >= last);
    last = loader.progress();
    ++steps;
  }
  CHECK(steps > 5);
  CHECK(last == Approx(1.0));
  auto m = loader.Finish();
  REQUIRE(m.ok());
  const TraceModel& model = *m.value();
  CHECK(model.format == SourceFormat::kGtrace);
  CHECK(model.event_count == counts.events());
  CHECK(model.sample_count == counts.samples);
  CHECK(model.report.clean());
  CHECK_FALSE(HasDataLoss(model));
  // Same content as feeding the builder directly.
  ModelBuilder direct;
  gt::synth::SynthOptions o;
  o.events = 100000;
  gt::synth::GenerateSynthTrace(direct, o);
  auto dm = direct.Finish();
  REQUIRE(dm->lanes.size() == model.lanes.size());
  for (size_t l = 0; l < dm->lanes.size(); ++l) {
    REQUIRE(dm->lanes[l].start == model.lanes[l].start);
    REQUIRE(dm->lanes[l].dur == model.lanes[l].dur);
  }
  CHECK(KernelSummary(*dm).size() == KernelSummary(model).size());
}

TEST_CASE("gzip: .gtrace.gz and .json.gz load the same as plain", "[load][gzip]") {
  gt::synth::SynthCounts counts;
  std::string file = SynthGtrace(20000, &counts);
  auto m = LoadTrace(Bytes(test::Gzip(file)));
  REQUIRE(m.ok());
  CHECK(m.value()->event_count == counts.events());
  std::string json = R"({"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2}]})";
  auto j = LoadTrace(Bytes(test::Gzip(json)));
  REQUIRE(j.ok());
  CHECK(j.value()->event_count == 1);
  // Concatenated members are one stream.
  auto two = LoadTrace(Bytes(test::Gzip(json.substr(0, 20)) + test::Gzip(json.substr(20))));
  REQUIRE(two.ok());
  CHECK(two.value()->event_count == 1);
  // Truncated gzip: what was inflated loads, flagged as loss.
  std::string gz = test::Gzip(file);
  auto cut = LoadTrace(Bytes(gz.substr(0, gz.size() / 2)));
  REQUIRE(cut.ok());
  CHECK(cut.value()->event_count > 0);
  CHECK(cut.value()->event_count < counts.events());
  CHECK(HasDataLoss(*cut.value()));
  // A gzip bomb guard.
  LoadOptions small;
  small.max_inflated_bytes = 1000;
  CHECK_FALSE(LoadTrace(Bytes(gz), small).ok());
  CHECK_FALSE(LoadTrace(Bytes(std::string("\x1f\x8b garbage", 10))).ok());
}

TEST_CASE("damaged .gtrace: loads what could be read and reports what was lost", "[load][damage]") {
  gt::synth::SynthCounts counts;
  std::string file = SynthGtrace(100000, &counts);
  // Flip bytes in the middle (a chunk or two) and cut the tail.
  std::string bad = file;
  for (size_t i = bad.size() / 2; i < bad.size() / 2 + 64; ++i) bad[i] ^= 0x5A;
  bad.resize(bad.size() * 9 / 10);
  auto m = LoadTrace(Bytes(bad));
  REQUIRE(m.ok());
  const TraceModel& model = *m.value();
  CHECK(model.event_count > counts.events() / 2);
  CHECK(model.event_count < counts.events());
  CHECK(HasDataLoss(model));
  auto losses = LossSummary(model);
  REQUIRE_FALSE(losses.empty());
  CHECK(losses[0].severity == uint8_t(Severity::kDataLoss));
  // Lanes stay valid whatever was lost.
  for (const Lane& l : model.lanes)
    for (uint32_t i = 1; i < l.size(); ++i) REQUIRE(l.End(i - 1) <= l.start[i]);
}

TEST_CASE("threaded .gtrace loading builds the same model as one thread", "[load][threads]") {
  gt::synth::SynthCounts counts;
  std::string file = SynthGtrace(150000, &counts);  // ~40 chunks of 4096 records
  std::string bad = file;
  for (size_t i = bad.size() / 3; i < bad.size() / 3 + 64; ++i) bad[i] ^= 0x5A;
  bad.resize(bad.size() * 9 / 10);
  for (const std::string* bytes : {&file, &bad}) {
    LoadOptions one;
    auto m1 = LoadTrace(Bytes(*bytes), one);
    REQUIRE(m1.ok());
    for (uint32_t threads : {2u, 4u, 0u}) {
      INFO("threads " << threads << (bytes == &bad ? " damaged" : " intact"));
      LoadOptions opt;
      opt.threads = threads;
      opt.chunks_per_step = 5;
      auto m2 = LoadTrace(Bytes(*bytes), opt);
      REQUIRE(m2.ok());
      const TraceModel &a = *m1.value(), &b = *m2.value();
      CHECK(a.event_count == b.event_count);
      CHECK(a.report.records == b.report.records);
      CHECK(a.report.chunks_lost == b.report.chunks_lost);
      CHECK(a.report.truncated == b.report.truncated);
      CHECK(a.MemoryBytes() == b.MemoryBytes());
      REQUIRE(a.tracks.size() == b.tracks.size());
      for (size_t t = 0; t < a.tracks.size(); ++t) CHECK(a.tracks[t].key == b.tracks[t].key);
      REQUIRE(a.lanes.size() == b.lanes.size());
      for (size_t l = 0; l < a.lanes.size(); ++l) {
        REQUIRE(a.lanes[l].start == b.lanes[l].start);
        REQUIRE(a.lanes[l].dur == b.lanes[l].dur);
        REQUIRE(a.lanes[l].name == b.lanes[l].name);
      }
      auto la = LossSummary(a), lb = LossSummary(b);
      REQUIRE(la.size() == lb.size());
      for (size_t i = 0; i < la.size(); ++i) CHECK(la[i].count == lb[i].count);
    }
  }
}

TEST_CASE("max_tracks: past the limit the load stops with a clear error; at it, the trace loads", "[load]") {
  // 20 threads of one event each, and one counter of 3 series: 23 tracks.
  std::string json = "{\"traceEvents\":[";
  for (int tid = 1; tid <= 20; ++tid)
    json += "{\"ph\":\"X\",\"name\":\"request\",\"pid\":1,\"tid\":" + std::to_string(tid) +
            ",\"ts\":" + std::to_string(tid) + ",\"dur\":1},";
  json += "{\"ph\":\"C\",\"name\":\"mem\",\"pid\":1,\"ts\":5,\"args\":{\"a\":1,\"b\":2,\"c\":3}}]}";
  for (auto parser : {LoadOptions::JsonParser::kFast, LoadOptions::JsonParser::kReference})
    for (const std::string& bytes : {json, gt::test::Gzip(json)}) {
      INFO((parser == LoadOptions::JsonParser::kFast ? "fast" : "reference")
           << (bytes == json ? ", plain" : ", gzip"));
      LoadOptions o;
      o.json_parser = parser;
      o.max_tracks = 23;
      auto ok = LoadTrace(Bytes(bytes), o);
      REQUIRE(ok.ok());
      CHECK(ok.value()->event_count == 20);
      o.max_tracks = 22;
      auto over = LoadTrace(Bytes(bytes), o);
      REQUIRE_FALSE(over.ok());
      CHECK(over.status().code() == StatusCode::kResourceExhausted);
      CHECK(over.status().message().find("more than 22 timeline tracks") != std::string::npos);
    }
  // .gtrace, on one thread and on two (chunks routed on threads, merged in order).
  gt::synth::SynthCounts counts;
  const std::string gtrace = SynthGtrace(20000, &counts);
  for (uint32_t threads : {1u, 2u}) {
    LoadOptions o;
    o.threads = threads;
    o.max_tracks = 1;
    auto over = LoadTrace(Bytes(gtrace), o);
    REQUIRE_FALSE(over.ok());
    CHECK(over.status().code() == StatusCode::kResourceExhausted);
    o.max_tracks = 100000;
    CHECK(LoadTrace(Bytes(gtrace), o).ok());
  }
}

TEST_CASE("threads: a load whose threaded peak would not fit in the memory free runs on one thread",
          "[load]") {
  gt::synth::SynthCounts counts;
  const std::string gtrace = SynthGtrace(20000, &counts);
  const uint64_t peak = ThreadedLoadPeak(DetectedFormat::kGtrace, gtrace.size());
  CHECK(peak >= 6 * gtrace.size());  // two copies of a model of ~3.6x the file
  // A build without threads (wasm's one-thread page) always loads on one.
  for (const auto& [free, expect] : {std::pair{peak, 1u}, std::pair{peak * 2, GT_VIEWER_THREADS ? 2u : 1u}}) {
    LoadOptions o;
    o.threads = 2;
    o.memory_free = free;
    TraceLoader l;
    REQUIRE(l.Open(Bytes(gtrace), o).ok());
    CHECK(l.threads() == expect);
    auto m = l.Finish();
    REQUIRE(m.ok());
    CHECK(m.value()->event_count > 0);
  }
}

TEST_CASE("LoadTraceFile: missing file is a clear error", "[load]") {
  auto r = LoadTraceFile("/nonexistent/trace.gtrace");
  REQUIRE_FALSE(r.ok());
  CHECK_FALSE(r.status().message().empty());
}

// Real traces recorded on the GPU machine (tests/data), enumerated when CMake configured the tests.
static const char* kFixtures[] = {
#include "fixtures.inc"
    nullptr};

TEST_CASE("real traces under tests/data load with events and a kernel summary", "[load][fixtures]") {
  int n = 0;
  for (const char** f = kFixtures; *f; ++f) {
    INFO(*f);
    auto m = LoadTraceFile(*f);
    REQUIRE(m.ok());
    const TraceModel& model = *m.value();
    CHECK(model.event_count > 0);
    CHECK(!model.tracks.empty());
    for (const Lane& l : model.lanes)
      for (uint32_t i = 1; i < l.size(); ++i) REQUIRE(l.End(i - 1) <= l.start[i]);
    if (!model.device_summaries.empty()) CHECK(!KernelSummary(model).empty());
    // Real CUPTI data: every kernel/memcpy/memset finds its launching API call and back (flow arrows). A
    // cudaGraphLaunch runs several kernels under its one correlation id: back leads to one of them.
    uint64_t gpu = 0, paired = 0;
    for (LaneId l = 0; l < model.lanes.size(); ++l)
      for (uint32_t i = 0; i < model.lanes[l].size(); ++i) {
        EventId e{l, i};
        if (!model.IsGpuActivity(e) || model.CorrelationId(e) == 0) continue;
        ++gpu;
        EventId p = FlowPartner(model, e);
        EventId back = p.valid() ? FlowPartner(model, p) : EventId{};
        paired += back == e || (back.valid() && model.IsGpuActivity(back) &&
                                model.CorrelationId(back) == model.CorrelationId(e) &&
                                model.TrackOf(back).pid == model.TrackOf(e).pid);
      }
    // A trace recorded without API calls (--trace kernel,nvtx) has no launches to pair with.
    const std::string* kinds = model.metadata.Find("trace_kinds");
    if (!kinds || kinds->find("runtime") != std::string::npos) CHECK(paired == gpu);
    if (std::string(*f).find("h200_streams.gtrace") != std::string::npos) {  // golden: the streams workload
      REQUIRE(model.device_summaries.size() == 1);
      CHECK(model.device_summaries[0].kernel_count == 16);
      CHECK(model.device_summaries[0].memcpy_count == 32);
      auto rows = KernelSummary(model);
      REQUIRE(rows.size() == 1);
      CHECK(model.Str(rows[0].name) == "stream_work(float*, unsigned long, int)");
    }
    if (std::string(*f).find("h200_torch_profiler") != std::string::npos) {  // golden: the real Kineto trace
      REQUIRE(model.device_summaries.size() == 1);
      CHECK(model.device_summaries[0].kernel_count == 100);
      CHECK(model.device_summaries[0].memset_count == 5);
      // Kineto writes each forward->backward flow's end before its start: all 35 still pair up.
      CHECK(model.flows.size() == 35);
      for (const LossStat& l : model.losses) CHECK(l.name != "json_events_skipped");
    }
    CHECK(!StatsReport(model).empty());
    ++n;
  }
  SUCCEED(std::to_string(n) + " fixtures");
}

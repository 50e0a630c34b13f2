// The parallel load builds the identical model for any thread count: synthetic, messy (nested, unsorted,
// overlapping, every record kind, many small chunks), damaged and real traces, compared field by field.
#include <catch2/catch.hpp>
#include <set>

#include "builder_internal.h"
#include "gt/viewer/load.h"
#include "gt/writer.h"
#include "gzip_util.h"
#include "model_diff.h"
#include "synth_trace.h"
#include "writer_sink.h"

using namespace gt;
using namespace gt::viewer;

namespace {

std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// Every record kind, small chunks (a track's events spread over many chunks), strings flushed as they
// appear, and what makes lanes hard: API calls with nested driver calls and NVTX ranges both written when
// they end (unsorted pieces), overlapping kernels on one stream (GPU depth lanes), kernels and copies of one
// stream in separate chunks (merged runs), durations over 2^32 ns, return codes, a counter without a
// descriptor, samples out of order, interleaved processes.
std::string MessyGtrace(uint64_t seed, uint32_t records_per_chunk) {
  std::string out;
  WriterOptions wo;
  wo.max_records_per_chunk = records_per_chunk;
  auto created = TraceWriter::Create(MakeStringSink(&out), wo);
  REQUIRE(created.ok());
  TraceWriter& w = *created.value();
  gt::synth::Rng rng(seed);
  for (uint32_t pid : {1u, 2u}) {
    ProcessRecord p;
    p.pid = pid, p.name = w.Intern("proc" + std::to_string(pid));
    w.Add(p);
    for (uint32_t d = 0; d < 2; ++d) {
      DeviceRecord dev;
      dev.device_id = d, dev.pid = pid, dev.name = w.Intern("GPU model " + std::to_string(d));
      w.Add(dev);
      StreamRecord s;
      s.pid = pid, s.device_id = d, s.context_id = 1, s.stream_id = 7, s.is_default = 1;
      w.Add(s);
    }
  }
  CounterDescriptor cd;
  cd.counter_id = 3, cd.device_id = 1, cd.name = w.Intern("SM clock"), cd.unit = w.Intern("MHz");
  w.Add(cd);
  std::vector<int64_t> host(6, 1000), stream(12, 1000);
  std::vector<std::pair<int64_t, int64_t>> last_kernel(12, {0, 0});
  uint32_t corr = 1;
  for (int i = 0; i < 3000; ++i) {
    const uint32_t pid = 1 + rng.Below(2), th = rng.Below(3), tid = 10 * pid + th;
    int64_t& t = host[(pid - 1) * 3 + th];
    const uint32_t dev = rng.Below(2), sidx = rng.Below(3), stream_id = 7 + sidx;
    int64_t& st = stream[(pid - 1) * 6 + dev * 3 + sidx];
    switch (rng.Below(9)) {
      case 0:
      case 1: {  // runtime call around a driver call, written inner first
        ApiCallRecord outer{t,   t + 500 + rng.Below(500),     pid, tid, corr,
                            211, w.Intern("cudaLaunchKernel"), 0,   0};
        if (rng.Below(50) == 0) outer.end = t + (int64_t{1} << 33);  // > 2^32 ns
        if (rng.Below(10) == 0) outer.return_code = int32_t(1 + rng.Below(900));
        ApiCallRecord inner{t + 50, t + 300, pid, tid, corr, 7, w.Intern("cuLaunchKernel"), 0, 1};
        w.Add(inner);
        w.Add(outer);
        KernelRecord k;
        k.start = std::max(st + 100, t + 400);
        k.end = k.start + 1000 + rng.Below(5000);
        if (rng.Below(20) == 0) k.start = st - 300;  // overlaps the previous activity on the stream
        k.pid = pid, k.device_id = dev, k.context_id = 1, k.stream_id = stream_id, k.correlation_id = corr;
        k.name = w.Intern("kernel_" + std::to_string(rng.Below(12 + i / 100)));
        k.grid = {1u + rng.Below(3), 1, 1};
        k.block = {128, 1, 1};
        w.Add(k);
        last_kernel[(pid - 1) * 6 + dev * 3 + sidx] = {k.start, k.end};
        st = std::max(st, k.end);
        t = std::max(t, outer.end) + 10;
        ++corr;
        break;
      }
      case 2: {  // a copy or a memset on a stream
        ApiCallRecord a{t, t + 400, pid, tid, corr, 41, w.Intern("cudaMemcpyAsync"), 0, 0};
        w.Add(a);
        if (rng.Below(3) == 0) {
          MemsetRecord m;
          m.start = std::max(st, t + 300), m.end = m.start + 700, m.pid = pid, m.device_id = dev;
          m.context_id = 1, m.stream_id = stream_id, m.correlation_id = corr, m.bytes = 4096u << rng.Below(4);
          auto [ks, ke] = last_kernel[(pid - 1) * 6 + dev * 3 + sidx];
          if (ke > 0 && rng.Below(2) == 0) m.start = ks, m.end = ke;  // ties the kernel: order by arrival
          w.Add(m);
          st = m.end;
        } else {
          MemcpyRecord m;
          m.start = std::max(st, t + 300), m.end = m.start + 900 + rng.Below(900), m.pid = pid;
          m.device_id = dev, m.context_id = 1, m.stream_id = stream_id, m.correlation_id = corr;
          m.bytes = 1u << (10 + rng.Below(10)), m.copy_kind = uint8_t(1 + rng.Below(4));
          w.Add(m);
          st = m.end;
        }
        t += 410;
        ++corr;
        break;
      }
      case 3: {  // NVTX: nested ranges written when they end (inner first), and marks
        NvtxRecord outer, inner;
        outer.start = t, outer.end = t + 2000, outer.pid = pid, outer.tid = tid;
        outer.message = w.Intern("range " + std::to_string(rng.Below(20)));
        outer.payload_kind = uint8_t(NvtxPayloadKind::kU64), outer.payload = rng.Below(100);
        inner = outer;
        inner.start = t + 100, inner.end = t + 900, inner.message = w.Intern("inner");
        inner.flags = kNvtxHasColor, inner.color = 0xFF000000u | rng.Below(1 << 24);
        w.Add(inner);
        w.Add(outer);
        if (rng.Below(4) == 0) {
          NvtxRecord mark = inner;
          mark.start = mark.end = t + 950, mark.flags = kNvtxMark;
          w.Add(mark);
        }
        t += 2010;
        break;
      }
      case 4: {
        SyncRecord y;
        y.start = t, y.end = t + 300 + rng.Below(300), y.pid = pid, y.tid = tid, y.correlation_id = corr++;
        y.sync_kind = uint8_t(1 + rng.Below(4)), y.device_id = dev;
        w.Add(y);
        OverheadRecord o{y.end, y.end + 50, pid, tid, w.Intern("CUPTI buffer flush")};
        w.Add(o);
        t = o.end + 10;
        break;
      }
      case 5: {  // counters: one described, one not; an occasional sample out of order
        CounterSample s{3, t - (rng.Below(8) == 0 ? 5000 : 0), double(rng.Below(2000))};
        w.Add(s);
        w.Add(CounterSample{9, t, double(i)});
        break;
      }
      case 6: {
        MemoryRecord m;
        m.timestamp = t, m.pid = pid, m.device_id = dev, m.bytes = 1u << rng.Below(20);
        m.op = uint8_t(rng.Below(3) == 0 ? MemoryOp::kFree : MemoryOp::kAlloc);
        w.Add(m);
        break;
      }
      case 7: {
        FlowRecord f;
        f.flow_id = uint64_t(i), f.pid = pid, f.src_kind = uint16_t(RecordKind::kApiCall);
        f.dst_kind = uint16_t(rng.Below(2) ? RecordKind::kKernel : RecordKind::kNvtx);
        f.src_key = f.dst_key = corr;
        w.Add(f);
        if (rng.Below(10) == 0) {
          LossRecord l{w.Intern("cupti_dropped_records"), uint8_t(Severity::kDataLoss), pid, rng.Below(9),
                       w.Intern("buffer full")};
          w.Add(l);
        }
        break;
      }
      default:
        ThreadRecord th_rec{pid, tid, w.Intern("worker " + std::to_string(tid))};
        w.Add(th_rec);
        break;
    }
    if (i % 250 == 249) REQUIRE(w.Flush().ok());  // strings chunks between record chunks
  }
  REQUIRE(w.Finish().ok());
  return out;
}

std::string SynthGtrace(uint64_t events) {
  std::string out;
  WriterOptions wo;
  wo.max_records_per_chunk = 4096;
  auto w = TraceWriter::Create(MakeStringSink(&out), wo);
  REQUIRE(w.ok());
  gt::synth::WriterSink sink(*w.value());
  gt::synth::SynthOptions o;
  o.events = events;
  gt::synth::GenerateSynthTrace(sink, o);
  REQUIRE(sink.ok());
  REQUIRE(w.value()->Finish().ok());
  return out;
}

std::unique_ptr<TraceModel> Load(const std::string& bytes, uint32_t threads, bool compact,
                                 uint32_t step = 16) {
  LoadOptions o;
  o.threads = threads;
  o.staging = compact ? LoadOptions::Staging::kCompact : LoadOptions::Staging::kPieces;
  o.chunks_per_step = step;
  auto m = LoadTrace(Bytes(bytes), o);
  REQUIRE(m.ok());
  return std::move(m.value());
}

// Loads with 1, 2, 4 and one-per-hardware threads, both ways of holding events, and compares every model
// with the one-thread one.
void CheckSameForAnyThreads(const std::string& bytes, uint32_t step = 16) {
  auto one = Load(bytes, 1, false, step);
  for (uint32_t threads : {1u, 2u, 4u, 0u})
    for (bool compact : {false, true}) {
      INFO("threads " << threads << (compact ? ", compact staging" : ", per-chunk staging") << ", step "
                      << step);
      auto m = Load(bytes, threads, compact, step);
      CHECK(test::ModelDiff(*one, *m) == "");
    }
}

}  // namespace

TEST_CASE("string index: 32-bit hashes (wasm's std::hash) spread over the slots and intern correctly",
          "[load]") {
  // Positions come from a hash's tag bits: taken from an unmixed upper half, every 32-bit hash would probe
  // from slot 0 and interning would be quadratic (the page hung on a 178 MB JSON file).
  std::set<uint32_t> positions;
  for (uint64_t i = 1; i <= 1000; ++i)
    positions.insert(detail::StringIndex::Tag(uint32_t(i * 2654435761u)) & 4095);
  CHECK(positions.size() > 800);
  std::vector<std::string> strings{""};
  detail::StringIndex index;
  for (uint32_t i = 1; i <= 5000; ++i) {
    strings.push_back("text " + std::to_string(i));
    index.Insert(i, uint32_t(std::hash<std::string>{}(strings.back())));
  }
  for (uint32_t i = 1; i <= 5000; ++i)
    CHECK(index.Find(strings[i], uint32_t(std::hash<std::string>{}(strings[i])), strings) == i);
  CHECK(index.Find("absent", uint32_t(std::hash<std::string>{}("absent")), strings) == 0);
}

TEST_CASE("parallel load: synthetic trace, identical model for any thread count", "[load][threads]") {
  const std::string file = SynthGtrace(120000);
  CheckSameForAnyThreads(file);
  CheckSameForAnyThreads(file, 3);
  // The same records fed to a builder directly give the same lanes, names and tables.
  ModelBuilder direct;
  gt::synth::SynthOptions o;
  o.events = 120000;
  gt::synth::GenerateSynthTrace(direct, o);
  auto d = direct.Finish();
  auto m = Load(file, 4, false);
  m->report = d->report;
  m->metadata = d->metadata;
  CHECK(test::ModelDiff(*d, *m) == "");
}

TEST_CASE("parallel load: messy trace (nesting, unsorted, overlaps, every kind)", "[load][threads]") {
  for (uint64_t seed : {1u, 2u, 3u}) {
    INFO("seed " << seed);
    const std::string file = MessyGtrace(seed, seed == 1 ? 7 : 61);
    auto m = Load(file, 1, false);
    CHECK(m->report.clean());
    CHECK(m->event_count > 3000);
    bool nested_gpu = false, nested_api = false;
    for (const Track& t : m->tracks) {
      nested_gpu |= t.kind == TrackKind::kGpuStream && t.lane_count > 1;
      nested_api |= t.kind == TrackKind::kThreadApi && t.lane_count > 1;
    }
    CHECK(nested_gpu);
    CHECK(nested_api);
    CheckSameForAnyThreads(file);
    CheckSameForAnyThreads(file, 2);
  }
}

TEST_CASE("parallel load: damaged traces, identical model and losses for any thread count",
          "[load][threads][damage]") {
  const std::string messy = MessyGtrace(4, 23);
  const std::string synth = SynthGtrace(60000);
  for (const std::string* file : {&messy, &synth}) {
    for (size_t at : {file->size() / 7, file->size() / 3, file->size() / 2}) {
      std::string bad = *file;
      for (size_t i = at; i < at + 48 && i < bad.size(); ++i) bad[i] ^= 0x5A;
      INFO("flipped at " << at);
      CheckSameForAnyThreads(bad);
      CHECK(Load(bad, 2, false)->report.chunks_lost > 0);
    }
    for (size_t cut : {file->size() * 9 / 10, file->size() / 4 + 3}) {
      INFO("cut at " << cut);
      CheckSameForAnyThreads(file->substr(0, cut));
    }
  }
  // Two files concatenated (two segments), the first one cut short: the second still loads.
  CheckSameForAnyThreads(messy.substr(0, messy.size() * 2 / 3) + synth, 5);
}

// Real traces recorded on the GPU machine (tests/data), enumerated when CMake configured the tests.
static const char* kParallelFixtures[] = {
#include "fixtures.inc"
    nullptr};

TEST_CASE("parallel load: real traces, identical model for any thread count", "[load][threads][fixtures]") {
  int n = 0;
  for (const char** f = kParallelFixtures; *f; ++f) {
    INFO(*f);
    auto bytes = ReadFileBytes(*f);
    REQUIRE(bytes.ok());
    CheckSameForAnyThreads(*bytes);
    CheckSameForAnyThreads(*bytes, 1);
    ++n;
  }
  CHECK(n > 0);
  // JSON builds its model on the pool too (lanes, summaries).
  CheckSameForAnyThreads(test::Gzip(R"({"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":5},)"
                                    R"({"ph":"X","name":"b","pid":1,"tid":1,"ts":2,"dur":1},)"
                                    R"({"ph":"X","name":"c","pid":1,"tid":2,"ts":3,"dur":2}]})"));
}

TEST_CASE("parallel load: long work split into many small tasks builds the same model", "[load][threads]") {
  using gt::viewer::detail::Tuning;
  const std::string messy = MessyGtrace(5, 97), synth = SynthGtrace(200000);
  for (const std::string* file : {&messy, &synth}) {
    auto whole = Load(*file, 1, false);
    const uint64_t partition = Tuning::merge_partition_events, slice = Tuning::device_slice_events;
    for (uint64_t small : {1u, 50u, 3000u}) {
      INFO("split into tasks of " << small << " events");
      Tuning::merge_partition_events = small;
      Tuning::device_slice_events = small;
      for (uint32_t threads : {1u, 4u})
        for (bool compact : {false, true})
          CHECK(test::ModelDiff(*whole, *Load(*file, threads, compact)) == "");
    }
    Tuning::merge_partition_events = partition;
    Tuning::device_slice_events = slice;
  }
}

TEST_CASE("parallel load: an overlap exactly at a merge partition boundary still nests", "[load][threads]") {
  using gt::viewer::detail::Tuning;
  // One stream: copies every 10 ns (one long run, so partitions start at copies), then kernels between them
  // (a second run), one of which runs into the next copy.
  std::string out;
  WriterOptions wo;
  wo.max_records_per_chunk = 2;
  auto w = TraceWriter::Create(MakeStringSink(&out), wo);
  REQUIRE(w.ok());
  const StringId k = (*w)->Intern("kernel");
  for (int i = 0; i < 200; ++i) {
    MemcpyRecord m;
    m.start = 10 * i, m.end = 10 * i + 3, m.stream_id = 7, m.correlation_id = uint32_t(1 + i);
    (*w)->Add(m);
  }
  for (int i = 0; i < 200; ++i) {
    if (i % 4 == 0) {
      KernelRecord r;
      r.start = 10 * i + 5, r.end = 10 * i + (i == 100 ? 12 : 8), r.stream_id = 7, r.name = k;
      r.correlation_id = uint32_t(1000 + i);
      (*w)->Add(r);
    }
  }
  REQUIRE((*w)->Finish().ok());
  auto whole = Load(out, 1, false);
  REQUIRE(whole->tracks.size() == 1);
  CHECK(whole->tracks[0].lane_count == 2);
  const uint64_t partition = Tuning::merge_partition_events;
  Tuning::merge_partition_events = 1;
  for (uint32_t threads : {1u, 3u}) {
    auto m = Load(out, threads, false);
    CHECK(m->tracks[0].lane_count == 2);
    CHECK(test::ModelDiff(*whole, *m) == "");
  }
  Tuning::merge_partition_events = partition;
}

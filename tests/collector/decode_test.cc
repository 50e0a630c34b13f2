// CUPTI activity records -> gt records, from synthetic structs (no GPU): every field mapping, names, windows,
// NVTX pairing, and a round trip through the real writer and reader.
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>
#include <catch2/catch.hpp>

#include <cstring>
#include <map>

#include "decode/cupti_decode.h"
#include "decode/nvtx_assembler.h"
#include "gt/reader.h"
#include "gt/trace_data.h"

using namespace gt;
using namespace gt::decode;

namespace {

const char* FakeApiName(uint8_t domain, uint32_t cbid) {
  if (domain == 0 && cbid == 211) return "cudaLaunchKernel_v7000";
  if (domain == 1 && cbid == 307) return "cuLaunchKernel";
  return nullptr;
}

struct Harness {
  std::string bytes;
  std::unique_ptr<TraceWriter> writer;
  std::unique_ptr<ActivityDecoder> decoder;
  std::vector<uint32_t> new_threads;
  explicit Harness(int64_t window_start = 0, int64_t window_end = 0, int64_t offset = 0,
                   std::vector<std::string> nvtx_domains_only = {}) {
    writer = std::move(TraceWriter::Create(MakeStringSink(&bytes)).value());
    DecoderOptions o;
    o.context.pid = 42;
    o.context.clock_offset_ns = offset;
    o.window_start_ns = window_start;
    o.window_end_ns = window_end;
    o.api_name = FakeApiName;
    o.on_new_thread = [](void* ctx, uint32_t tid) { static_cast<Harness*>(ctx)->new_threads.push_back(tid); };
    o.on_new_thread_ctx = this;
    o.nvtx_domains_only = std::move(nvtx_domains_only);
    decoder = std::make_unique<ActivityDecoder>(writer.get(), o);
  }
  template <typename T>
  void Feed(const T& rec) {
    decoder->Decode(reinterpret_cast<const CUpti_Activity*>(&rec));
  }
  TraceData Finish() {
    decoder->Finish();
    REQUIRE(writer->Finish().ok());
    TraceData d;
    auto r =
        ReadTrace(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), d);
    REQUIRE(r.ok());
    REQUIRE(r->clean());
    return d;
  }
};

CUpti_ActivityKernel10 Kernel(uint32_t corr, uint64_t start, uint64_t end, const char* name) {
  CUpti_ActivityKernel10 k;
  std::memset(&k, 0, sizeof k);
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = start;
  k.end = end;
  k.deviceId = 0;
  k.contextId = 1;
  k.streamId = 7;
  k.correlationId = corr;
  k.gridX = 132;
  k.gridY = 2;
  k.gridZ = 1;
  k.blockX = 256;
  k.blockY = 1;
  k.blockZ = 1;
  k.registersPerThread = 32;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 4096;
  k.localMemoryPerThread = 16;
  k.name = name;
  return k;
}

CUpti_ActivityAPI Api(uint32_t corr, uint64_t start, uint64_t end, uint32_t tid, uint32_t cbid = 211) {
  CUpti_ActivityAPI a;
  std::memset(&a, 0, sizeof a);
  a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  a.cbid = cbid;
  a.start = start;
  a.end = end;
  a.processId = 42;
  a.threadId = tid;
  a.correlationId = corr;
  return a;
}

CUpti_ActivityMarker2 Marker(uint32_t flags, uint32_t id, uint64_t ts, uint32_t tid, const char* name,
                             const char* domain = nullptr) {
  CUpti_ActivityMarker2 m;
  std::memset(&m, 0, sizeof m);
  m.kind = CUPTI_ACTIVITY_KIND_MARKER;
  m.flags = static_cast<CUpti_ActivityFlag>(flags);
  m.timestamp = ts;
  m.id = id;
  m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  m.objectId.pt.processId = 42;
  m.objectId.pt.threadId = tid;
  m.name = name;
  m.domain = domain;
  return m;
}

}  // namespace

TEST_CASE("kernel records keep geometry, resources, correlation and a demangled name") {
  Harness h;
  const char* mangled = "_Z11copy_float4PK6float4PS_m";
  h.Feed(Kernel(5, 1000, 2500, mangled));
  h.Feed(Kernel(6, 3000, 3600, mangled));
  TraceData d = h.Finish();
  REQUIRE(d.kernels.size() == 2);
  const KernelRecord& k = d.kernels[0];
  CHECK(k.start == 1000);
  CHECK(k.end == 2500);
  CHECK(k.pid == 42);
  CHECK(k.stream_id == 7);
  CHECK(k.correlation_id == 5);
  CHECK(k.grid == std::array<uint32_t, 3>{132, 2, 1});
  CHECK(k.block == std::array<uint32_t, 3>{256, 1, 1});
  CHECK(k.registers_per_thread == 32);
  CHECK(k.static_shared_bytes == 1024);
  CHECK(k.dynamic_shared_bytes == 4096);
  CHECK(k.local_bytes_per_thread == 16);
  CHECK(k.launch_type == static_cast<uint8_t>(LaunchType::kRegular));
  CHECK(d.Str(k.name) == "copy_float4(float4 const*, float4*, unsigned long)");
  CHECK(d.kernels[1].name == k.name);  // interned once
  REQUIRE(d.streams.size() == 1);      // first sight of (context 1, stream 7)
  CHECK(d.streams[0].stream_id == 7);
}

TEST_CASE("kernel name cache survives pointer reuse with a different string") {
  Harness h;
  char buf[32];
  std::strcpy(buf, "_Z3foov");
  h.Feed(Kernel(1, 10, 20, buf));
  std::strcpy(buf, "_Z3barv");
  h.Feed(Kernel(2, 30, 40, buf));
  TraceData d = h.Finish();
  REQUIRE(d.kernels.size() == 2);
  CHECK(d.Str(d.kernels[0].name) == "foo()");
  CHECK(d.Str(d.kernels[1].name) == "bar()");
}

TEST_CASE("graph, cooperative and cluster launches are classified") {
  auto k = Kernel(1, 0, 1, "k");
  CHECK(MapLaunchType(k) == static_cast<uint8_t>(LaunchType::kRegular));
  k.clusterX = 2;
  CHECK(MapLaunchType(k) == static_cast<uint8_t>(LaunchType::kCluster));
  k.clusterX = 0;
  k.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE;
  CHECK(MapLaunchType(k) == static_cast<uint8_t>(LaunchType::kCooperativeSingle));
  k.graphId = 9;
  CHECK(MapLaunchType(k) == static_cast<uint8_t>(LaunchType::kGraph));
}

TEST_CASE("memcpy, memset, sync, memory and overhead records map their enums") {
  Harness h;
  CUpti_ActivityMemcpy6 m;
  std::memset(&m, 0, sizeof m);
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  m.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
  m.bytes = 1 << 20;
  m.start = 100;
  m.end = 600;
  m.correlationId = 3;
  m.streamId = 2;
  h.Feed(m);
  CUpti_ActivityMemset4 s;
  std::memset(&s, 0, sizeof s);
  s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  s.value = 0xAB;
  s.bytes = 4096;
  s.start = 700;
  s.end = 800;
  s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  h.Feed(s);
  CUpti_ActivitySynchronization2 y;
  std::memset(&y, 0, sizeof y);
  y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  y.start = 900;
  y.end = 950;
  y.streamId = 2;
  y.cudaEventId = UINT32_MAX;
  y.correlationId = 4;
  h.Feed(y);
  CUpti_ActivityMemory4 a;
  std::memset(&a, 0, sizeof a);
  a.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  a.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
  a.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  a.address = 0x7f0000000000;
  a.bytes = 1 << 20;
  a.timestamp = 960;
  a.processId = 42;
  a.isAsync = 1;
  h.Feed(a);
  CUpti_ActivityOverhead3 o;
  std::memset(&o, 0, sizeof o);
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
  o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  o.objectId.pt.processId = 42;
  o.objectId.pt.threadId = 77;
  o.start = 970;
  o.end = 990;
  h.Feed(o);
  TraceData d = h.Finish();
  REQUIRE(d.memcpys.size() == 1);
  CHECK(d.memcpys[0].copy_kind == static_cast<uint8_t>(CopyKind::kDtoD));
  CHECK(d.memcpys[0].src_kind == static_cast<uint8_t>(MemoryKind::kDevice));
  CHECK(d.memcpys[0].dst_kind == static_cast<uint8_t>(MemoryKind::kPinned));
  CHECK(d.memcpys[0].is_async == 1);
  CHECK(d.memcpys[0].bytes == (1u << 20));
  REQUIRE(d.memsets.size() == 1);
  CHECK(d.memsets[0].value == 0xAB);
  CHECK(d.memsets[0].is_async == 0);
  REQUIRE(d.syncs.size() == 1);
  CHECK(d.syncs[0].sync_kind == static_cast<uint8_t>(SyncKind::kStreamSync));
  CHECK(d.syncs[0].event_id == kNone);
  REQUIRE(d.memory.size() == 1);
  CHECK(d.memory[0].op == static_cast<uint8_t>(MemoryOp::kFree));
  CHECK(d.memory[0].is_async == 1);
  CHECK(d.memory[0].address == 0x7f0000000000ull);
  REQUIRE(d.overheads.size() == 1);
  CHECK(d.overheads[0].tid == 77);
  CHECK(d.Str(d.overheads[0].kind) == "CUPTI buffer flush");
}

TEST_CASE("every CUPTI copy kind has a gt copy kind") {
  CHECK(MapCopyKind(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD) == static_cast<uint8_t>(CopyKind::kHtoD));
  CHECK(MapCopyKind(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH) == static_cast<uint8_t>(CopyKind::kDtoH));
  CHECK(MapCopyKind(CUPTI_ACTIVITY_MEMCPY_KIND_HTOA) == static_cast<uint8_t>(CopyKind::kHtoA));
  CHECK(MapCopyKind(CUPTI_ACTIVITY_MEMCPY_KIND_ATOH) == static_cast<uint8_t>(CopyKind::kAtoH));
  CHECK(MapCopyKind(CUPTI_ACTIVITY_MEMCPY_KIND_ATOA) == static_cast<uint8_t>(CopyKind::kAtoA));
  CHECK(MapCopyKind(CUPTI_ACTIVITY_MEMCPY_KIND_ATOD) == static_cast<uint8_t>(CopyKind::kAtoD));
  CHECK(MapCopyKind(CUPTI_ACTIVITY_MEMCPY_KIND_DTOA) == static_cast<uint8_t>(CopyKind::kDtoA));
  CHECK(MapCopyKind(CUPTI_ACTIVITY_MEMCPY_KIND_DTOD) == static_cast<uint8_t>(CopyKind::kDtoD));
  CHECK(MapCopyKind(CUPTI_ACTIVITY_MEMCPY_KIND_HTOH) == static_cast<uint8_t>(CopyKind::kHtoH));
  CHECK(MapCopyKind(CUPTI_ACTIVITY_MEMCPY_KIND_PTOP) == static_cast<uint8_t>(CopyKind::kPtoP));
  CHECK(MapCopyKind(1234) == static_cast<uint8_t>(CopyKind::kUnknown));
  CHECK(MapMemoryKind(99) == static_cast<uint8_t>(MemoryKind::kUnknown));
}

TEST_CASE("API calls get readable names, their thread is announced once") {
  Harness h;
  h.Feed(Api(1, 100, 200, 500));
  h.Feed(Api(2, 300, 400, 500));
  auto drv = Api(3, 500, 600, 501, 307);
  drv.kind = CUPTI_ACTIVITY_KIND_DRIVER;
  h.Feed(drv);
  h.Feed(Api(4, 700, 800, 501, 9999));  // unknown cbid
  TraceData d = h.Finish();
  REQUIRE(d.api_calls.size() == 4);
  CHECK(d.Str(d.api_calls[0].name) == "cudaLaunchKernel");
  CHECK(d.api_calls[0].domain == static_cast<uint8_t>(ApiDomain::kRuntime));
  CHECK(d.Str(d.api_calls[2].name) == "cuLaunchKernel");
  CHECK(d.api_calls[2].domain == static_cast<uint8_t>(ApiDomain::kDriver));
  CHECK(d.Str(d.api_calls[3].name) == "runtime cbid 9999");
  CHECK(h.new_threads == std::vector<uint32_t>{500, 501});
  CHECK(ApiDisplayName("cudaMemcpy_ptds_v7000") == "cudaMemcpy_ptds");
  CHECK(ApiDisplayName("cuMemcpyHtoD_v2") == "cuMemcpyHtoD");
  CHECK(ApiDisplayName("cudaFoo_vx") == "cudaFoo_vx");
}

TEST_CASE("the time window keeps overlapping records and counts the rest") {
  Harness h(/*window_start=*/1000, /*window_end=*/2000);
  h.Feed(Kernel(1, 100, 900, "_Z1av"));    // before
  h.Feed(Kernel(2, 900, 1100, "_Z1av"));   // overlaps the start
  h.Feed(Kernel(3, 1500, 1600, "_Z1av"));  // inside
  h.Feed(Kernel(4, 2100, 2200, "_Z1av"));  // after
  h.Feed(Api(5, 50, 60, 1));               // before
  TraceData d = h.Finish();
  REQUIRE(d.kernels.size() == 2);
  CHECK(d.kernels[0].correlation_id == 2);
  CHECK(d.kernels[1].correlation_id == 3);
  CHECK(d.api_calls.empty());
  CHECK(h.decoder->stats().outside_window == 3);
}

TEST_CASE("a clock offset moves every timestamp onto the trace clock") {
  Harness h(0, 0, /*offset=*/-1000);
  h.Feed(Kernel(1, 5000, 6000, "_Z1av"));
  h.Feed(Api(1, 4000, 4500, 1));
  TraceData d = h.Finish();
  CHECK(d.kernels[0].start == 4000);
  CHECK(d.kernels[0].end == 5000);
  CHECK(d.api_calls[0].start == 3000);
}

TEST_CASE("NVTX markers pair into ranges with colors, payloads, domains and marks") {
  Harness h;
  h.Feed(Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 100, 10, "outer"));
  CUpti_ActivityMarkerData2 data;
  std::memset(&data, 0, sizeof data);
  data.kind = CUPTI_ACTIVITY_KIND_MARKER_DATA;
  data.flags = CUPTI_ACTIVITY_FLAG_MARKER_COLOR_ARGB;
  data.id = 1;
  data.color = 0xFF76B900u;
  data.category = 3;
  data.payloadKind = CUPTI_METRIC_VALUE_KIND_UINT64;
  data.payload.metricValueUint64 = 42;
  h.Feed(data);
  h.Feed(Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 2, 150, 10, "inner", "mydomain"));
  h.Feed(Marker(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 3, 160, 10, "mark"));
  h.Feed(Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 2, 180, 10, nullptr));
  h.Feed(Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 1, 200, 10, nullptr));
  h.Feed(Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 4, 210, 10, "cross"));
  h.Feed(Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 4, 260, 11, nullptr));   // ended on another thread
  h.Feed(Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 99, 270, 10, nullptr));  // never started: ignored
  h.Feed(Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 5, 300, 10, "open"));  // still open at the end
  h.decoder->EndBuffer();
  h.Feed(Api(9, 400, 500, 10));
  TraceData d = h.Finish();
  std::map<std::string, NvtxRecord> by;
  for (const auto& n : d.nvtx) by[d.Str(n.message)] = n;
  REQUIRE(by.size() == 5);
  CHECK(by["outer"].start == 100);
  CHECK(by["outer"].end == 200);
  CHECK(by["outer"].color == 0xFF76B900u);
  CHECK((by["outer"].flags & kNvtxHasColor));
  CHECK(by["outer"].payload == 42);
  CHECK(by["outer"].payload_kind == static_cast<uint8_t>(NvtxPayloadKind::kU64));
  CHECK(by["outer"].category == 3);
  CHECK(d.Str(by["inner"].domain) == "mydomain");
  CHECK(by["inner"].start == 150);
  CHECK(by["inner"].end == 180);
  CHECK((by["mark"].flags & kNvtxMark));
  CHECK(by["mark"].start == by["mark"].end);
  CHECK((by["cross"].flags & kNvtxStartEnd));
  CHECK((by["open"].flags & kNvtxUnclosed));
  CHECK(by["open"].end == 500);  // last timestamp seen
}

TEST_CASE("NvtxAssembler: a payload that arrives after its mark still applies within the buffer") {
  NvtxAssembler a;
  MarkerEvent m;
  m.type = MarkerEvent::kMark;
  m.id = 7;
  m.timestamp = 10;
  a.OnMarker(m);
  CHECK(a.output().empty());  // held until the buffer ends
  MarkerPayload p;
  p.id = 7;
  p.has_color = true;
  p.color = 0xFF0000FFu;
  a.OnPayload(p);
  a.EndBuffer();
  REQUIRE(a.output().size() == 1);
  CHECK(a.output()[0].color == 0xFF0000FFu);
}

TEST_CASE("device records carry properties and derived peaks") {
  Harness h;
  CUpti_ActivityDevice5 dev;
  std::memset(&dev, 0, sizeof dev);
  dev.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  dev.computeCapabilityMajor = 9;
  dev.computeCapabilityMinor = 0;
  dev.numMultiprocessors = 132;
  dev.coreClockRate = 1980000;                // kHz
  dev.globalMemoryBandwidth = 4800000000ull;  // KB/s
  dev.globalMemorySize = 150ull << 30;
  dev.l2CacheSize = 60 << 20;
  dev.numThreadsPerWarp = 32;
  dev.maxWarpsPerMultiprocessor = 64;
  dev.name = "NVIDIA H200";
  h.Feed(dev);
  TraceData d = h.Finish();
  REQUIRE(d.devices.size() == 1);
  const DeviceRecord& r = d.devices[0];
  CHECK(d.Str(r.name) == "NVIDIA H200");
  CHECK(d.Str(r.chip) == "GH100");
  CHECK(r.sm_count == 132);
  CHECK(r.dram_bandwidth == Approx(4.8e12));
  CHECK(r.peak_flops[static_cast<size_t>(Precision::kFp32)] == Approx(132 * 1.98e9 * 256));
  CHECK(r.peak_source == static_cast<uint8_t>(PeakSource::kDerived));
  CHECK(d.Str(r.uuid).rfind("GPU-", 0) == 0);
}

TEST_CASE("unknown record kinds are counted, not fatal") {
  Harness h;
  CUpti_Activity weird;
  weird.kind = CUPTI_ACTIVITY_KIND_PCIE;
  h.decoder->Decode(&weird);
  CHECK(h.decoder->stats().unknown_kinds == 1);
  h.Finish();
}

TEST_CASE("NvtxAssembler: an END decoded before its START (another thread's buffer) still closes the range") {
  NvtxAssembler a;
  MarkerEvent end;
  end.type = MarkerEvent::kEnd;
  end.id = 9;
  end.timestamp = 500;
  end.tid = 11;
  a.OnMarker(end);
  a.EndBuffer();  // the START comes in a later buffer
  CHECK(a.output().empty());
  CHECK(a.pending_ends() == 1);
  MarkerEvent start;
  start.type = MarkerEvent::kStart;
  start.id = 9;
  start.timestamp = 100;
  start.tid = 10;
  start.message = 3;
  a.OnMarker(start);
  REQUIRE(a.output().size() == 1);
  CHECK(a.output()[0].start == 100);
  CHECK(a.output()[0].end == 500);
  CHECK((a.output()[0].flags & kNvtxStartEnd));
  CHECK(!(a.output()[0].flags & kNvtxUnclosed));
  CHECK(a.open_ranges() == 0);
  CHECK(a.pending_ends() == 0);
  // A second END for the same id (CUPTI's record after the callback's) opens nothing and is bounded.
  a.output().clear();
  a.OnMarker(end);
  a.CloseAll(600);
  CHECK(a.output().empty());
  CHECK(a.pending_ends() == 0);
}

TEST_CASE("NvtxAssembler: unmatched ENDs stay bounded") {
  NvtxAssembler a;
  for (uint32_t i = 0; i < 3 * NvtxAssembler::kMaxEarlyEnds; ++i) {
    MarkerEvent end;
    end.type = MarkerEvent::kEnd;
    end.id = 1000 + i;
    end.timestamp = i;
    a.OnMarker(end);
    CHECK(a.pending_ends() <= NvtxAssembler::kMaxEarlyEnds);
  }
  // The newest ENDs are kept: a late START still pairs with its END.
  MarkerEvent start;
  start.type = MarkerEvent::kStart;
  start.id = 1000 + 3 * NvtxAssembler::kMaxEarlyEnds - 1;
  start.timestamp = 0;
  a.OnMarker(start);
  CHECK(a.output().size() == 1);
}

TEST_CASE("a range ended on another thread, whose END buffer completes first, is closed (as on the H200)") {
  Harness h;
  // The worker thread's buffer (END of range 9) completes before the main thread's (its START).
  h.Feed(Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 9, 5200, 11, nullptr));
  h.decoder->EndBuffer();
  h.Feed(Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 100, 10, "startup"));
  h.Feed(Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 1, 150, 10, nullptr));
  h.Feed(Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 9, 200, 10, "cross-thread"));
  h.Feed(Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 10, 5300, 10, "after"));
  h.Feed(Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 10, 5400, 10, nullptr));
  h.decoder->EndBuffer();
  TraceData d = h.Finish();
  std::map<std::string, NvtxRecord> by;
  for (const auto& n : d.nvtx) by[d.Str(n.message)] = n;
  REQUIRE(d.nvtx.size() == 3);
  CHECK(by["cross-thread"].start == 200);
  CHECK(by["cross-thread"].end == 5200);
  CHECK(by["cross-thread"].tid == 10);
  CHECK((by["cross-thread"].flags & kNvtxStartEnd));
  CHECK(!(by["cross-thread"].flags & kNvtxUnclosed));
  CHECK(by["startup"].end == 150);
  CHECK(by["after"].end == 5400);
}

TEST_CASE("NVTX capture names match ASCII and wide messages exactly") {
  CHECK(NvtxMessageEquals("train_step", "train_step", nullptr));
  CHECK(!NvtxMessageEquals("train_step", "train_step2", nullptr));
  CHECK(!NvtxMessageEquals("train_step", "train", nullptr));
  CHECK(NvtxMessageEquals("train_step", nullptr, L"train_step"));
  CHECK(!NvtxMessageEquals("train_step", nullptr, L"train_ste"));
  CHECK(!NvtxMessageEquals("train_step", nullptr, L"train_stepX"));
  CHECK(NvtxMessageEquals("\xC3\xA9tape \xE2\x86\x92 1 \xF0\x9F\x9A\x80", nullptr,
                          L"\u00e9tape \u2192 1 \U0001F680"));
  CHECK(!NvtxMessageEquals("etape", nullptr, L"\u00e9tape"));
  CHECK(NvtxMessageEquals("", nullptr, L""));
  CHECK(!NvtxMessageEquals("x", nullptr, nullptr));  // registered string: text unknown
}

TEST_CASE("runtime calls kept by the callback-API design: launches, copies, sync, memory; not queries") {
  for (const char* keep : {"cudaLaunchKernel",
                           "cudaLaunchKernelExC",
                           "cudaLaunchCooperativeKernel",
                           "cudaGraphLaunch",
                           "cudaLaunchHostFunc",
                           "cudaMemcpyAsync",
                           "cudaMemcpy2D",
                           "cudaMemcpyPeerAsync",
                           "cudaMemsetAsync",
                           "cudaDeviceSynchronize",
                           "cudaStreamSynchronize",
                           "cudaEventSynchronize",
                           "cudaStreamWaitEvent",
                           "cudaEventRecord",
                           "cudaEventQuery",
                           "cudaStreamQuery",
                           "cudaMalloc",
                           "cudaFree",
                           "cudaMallocAsync",
                           "cudaFreeAsync",
                           "cudaMallocHost",
                           "cudaFreeHost",
                           "cudaHostAlloc",
                           "cudaHostRegister",
                           "cudaMallocManaged",
                           "cudaMemPrefetchAsync",
                           "cudaStreamCreateWithPriority",
                           "cudaStreamDestroy",
                           "cudaEventCreateWithFlags",
                           "cudaEventDestroy",
                           "cudaStreamBeginCapture",
                           "cudaStreamEndCapture",
                           "cudaGraphInstantiate",
                           "cudaSetDevice",
                           "cudaDeviceReset",
                           "cudaProfilerStart",
                           "cudaProfilerStop",
                           "cudaIpcOpenMemHandle",
                           "cudaDeviceEnablePeerAccess"})
    CHECK(IsKeyRuntimeApi(keep));
  for (const char* skip : {"cudaGetDevice",
                           "cudaGetLastError",
                           "cudaPeekAtLastError",
                           "cudaStreamIsCapturing",
                           "cudaStreamGetCaptureInfo",
                           "cudaGetDeviceCount",
                           "cudaDeviceGetAttribute",
                           "cudaGetDeviceProperties",
                           "cudaPointerGetAttributes",
                           "cudaFuncGetAttributes",
                           "cudaFuncSetAttribute",
                           "cudaGetDriverEntryPoint",
                           "cudaDriverGetVersion",
                           "cudaRuntimeGetVersion",
                           "cudaThreadExchangeStreamCaptureMode",
                           "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
                           "cudaDeviceCanAccessPeer",
                           "cudaStreamGetPriority",
                           "cuLaunchKernel",
                           ""})
    CHECK(!IsKeyRuntimeApi(skip));
}

TEST_CASE("API calls from the callback API: named, windowed, threads noted") {
  Harness h(/*window_start=*/1000, /*window_end=*/5000);
  ApiCallRecord r;
  r.start = 2000;
  r.end = 2100;
  r.tid = 77;
  r.correlation_id = 5;
  r.callback_id = 211;
  r.return_code = 0;
  r.domain = static_cast<uint8_t>(ApiDomain::kRuntime);
  h.decoder->AddApiCall(r);
  ApiCallRecord early = r;
  early.start = 10;
  early.end = 20;
  h.decoder->AddApiCall(early);  // before the window
  ApiCallRecord drv = r;
  drv.domain = static_cast<uint8_t>(ApiDomain::kDriver);
  drv.callback_id = 307;
  drv.correlation_id = 6;
  drv.return_code = 700;
  h.decoder->AddApiCall(drv);
  CHECK(h.decoder->stats().api_calls == 2);
  CHECK(h.decoder->stats().outside_window == 1);
  TraceData d = h.Finish();
  REQUIRE(d.api_calls.size() == 2);
  CHECK(d.Str(d.api_calls[0].name) == "cudaLaunchKernel");
  CHECK(d.api_calls[0].pid == 42);
  CHECK(d.api_calls[0].tid == 77);
  CHECK(d.api_calls[0].correlation_id == 5);
  CHECK(d.api_calls[0].start == 2000);  // already on the trace clock: no offset applied
  CHECK(d.Str(d.api_calls[1].name) == "cuLaunchKernel");
  CHECK(d.api_calls[1].return_code == 700);
  CHECK(h.new_threads.size() == 1);
}

TEST_CASE("sync records from API calls: the calls that wait, runtime and driver, and nothing else") {
  CHECK(SyncKindOfApi(0, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020) ==
        static_cast<uint8_t>(SyncKind::kContextSync));
  CHECK(SyncKindOfApi(0, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000) ==
        static_cast<uint8_t>(SyncKind::kStreamSync));
  CHECK(SyncKindOfApi(0, CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020) ==
        static_cast<uint8_t>(SyncKind::kEventSync));
  CHECK(SyncKindOfApi(0, CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020) ==
        static_cast<uint8_t>(SyncKind::kStreamWaitEvent));
  CHECK(SyncKindOfApi(1, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize) ==
        static_cast<uint8_t>(SyncKind::kContextSync));
  CHECK(SyncKindOfApi(1, CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent_ptsz) ==
        static_cast<uint8_t>(SyncKind::kStreamWaitEvent));
  CHECK(SyncKindOfApi(0, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) == 0);
  CHECK(SyncKindOfApi(0, CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020) == 0);
  CHECK(SyncKindOfApi(1, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel) == 0);
  // Runtime and driver callback ids overlap: the domain decides (runtime 126 = cudaThreadSynchronize, driver
  // 126 = cuStreamSynchronize).
  CHECK(SyncKindOfApi(0, 126) == static_cast<uint8_t>(SyncKind::kContextSync));
  CHECK(SyncKindOfApi(1, 126) == static_cast<uint8_t>(SyncKind::kStreamSync));

  Harness h(/*window_start=*/100, 0);
  SyncRecord s;
  s.start = 200;
  s.end = 900;
  s.tid = 5;
  s.context_id = 1;
  s.stream_id = 7;
  s.correlation_id = 33;
  s.sync_kind = static_cast<uint8_t>(SyncKind::kStreamSync);
  h.decoder->AddSync(s);
  SyncRecord before = s;
  before.start = 10;
  before.end = 50;
  h.decoder->AddSync(before);
  TraceData d = h.Finish();
  REQUIRE(d.syncs.size() == 1);
  CHECK(d.syncs[0].pid == 42);
  CHECK(d.syncs[0].stream_id == 7);
  CHECK(d.syncs[0].correlation_id == 33);
  CHECK(d.syncs[0].end == 900);
}

TEST_CASE("a decoded NVTX payload follows its range into the trace as nvtx_arg records",
          "[decode][nvtx_payload]") {
  Harness h(0, 0, /*offset=*/1000);
  // The push callback saw CUPTI's raw clock 2 us before CUPTI's START record; another thread's is not taken.
  h.decoder->nvtx_payloads().Add({10,
                                  98,
                                  {{"Message size [bytes]", NvtxArgKind::kUint, 4096, {}},
                                   {"Reduction operation", NvtxArgKind::kEnum, 0, "Sum"}}});
  h.decoder->nvtx_payloads().Add({11, 100, {{"other", NvtxArgKind::kInt, 1, {}}}});
  h.Feed(Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 100, 10, "ncclAllReduce", "NCCL"));
  h.Feed(Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 1, 300, 10, nullptr));
  h.Feed(Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 2, 400, 10, "plain", "NCCL"));
  h.Feed(Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 2, 500, 10, nullptr));
  TraceData d = h.Finish();
  REQUIRE(d.nvtx.size() == 2);
  REQUIRE(d.nvtx_args.size() == 2);
  for (const NvtxArgRecord& a : d.nvtx_args) {
    CHECK(a.start == 1100);  // the range's own start on the trace clock: the key the viewer looks up
    CHECK(a.pid == 42);
    CHECK(a.tid == 10);
  }
  CHECK(d.Str(d.nvtx_args[0].name) == "Message size [bytes]");
  CHECK(d.nvtx_args[0].value == 4096);
  CHECK(d.nvtx_args[1].kind == uint8_t(NvtxArgKind::kEnum));
  CHECK(d.Str(d.nvtx_args[1].text) == "Sum");
  CHECK(h.decoder->nvtx_payloads().pending() == 1);  // thread 11's push had no range
}

TEST_CASE("library kinds without nvtx: only the library domains' ranges are written", "[decode][libcalls]") {
  Harness h(0, 0, 0, {"cuBLAS", "NCCL"});
  h.Feed(Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 100, 10, "cublasSgemm_v2", "cuBLAS"));
  h.Feed(Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 1, 300, 10, nullptr));
  h.Feed(Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 2, 400, 10, "step 1"));  // the app's own, default domain
  h.Feed(Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 2, 500, 10, nullptr));
  h.Feed(Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 3, 600, 10, "cudnnBackendExecute", "cuDNN"));  // not asked
  h.Feed(Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 3, 700, 10, nullptr));
  CHECK(h.decoder->stats().nvtx_filtered == 2);
  TraceData d = h.Finish();
  REQUIRE(d.nvtx.size() == 1);
  CHECK(d.Str(d.nvtx[0].message) == "cublasSgemm_v2");
  CHECK(d.Str(d.nvtx[0].domain) == "cuBLAS");
}

TEST_CASE("OS runtime waits: host ranges take the window, the pid and the thread", "[decode][osrt]") {
  Harness h(/*window_start=*/1000, /*window_end=*/5000);
  const StringId domain = h.writer->Intern("OS runtime"), poll = h.writer->Intern("poll");
  NvtxRecord r;
  r.domain = domain, r.message = poll, r.tid = 77;
  r.start = 2000, r.end = 3000;
  h.decoder->AddHostRange(r);
  r.start = 100, r.end = 900;  // before the window
  h.decoder->AddHostRange(r);
  CHECK(h.decoder->stats().host_ranges == 1);
  CHECK(h.decoder->stats().outside_window == 1);
  CHECK(h.new_threads == std::vector<uint32_t>{77});  // named like any thread seen first in a record
  TraceData d = h.Finish();
  REQUIRE(d.nvtx.size() == 1);
  CHECK(d.nvtx[0].pid == 42);
  CHECK(d.nvtx[0].tid == 77);
  CHECK(d.Str(d.nvtx[0].domain) == "OS runtime");
  CHECK(d.Str(d.nvtx[0].message) == "poll");
}

// NCCL's profiler plugin without NCCL or a GPU: the exported tables (ncclProfiler_v3..v6) called as NCCL
// calls them, with descriptors built in code, then drained into a trace and read back.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "decode/nccl_profiler_decode.h"
#include "gt/reader.h"
#include "gt/trace_data.h"
#include "gt/writer.h"
#include "inject/nccl_profiler.h"

namespace abi = gt::decode::nccl_abi;
namespace nccl = gt::inject::nccl;
using gt::NcclChannelRecord;
using gt::NcclCollRecord;
using gt::TraceData;

namespace {

int64_t g_clock = 1000;
int64_t FakeNow() {
  return g_clock;
}
uint32_t FakeTid() {
  return 77;
}

void Setup(nccl::Mode mode, uint32_t slots = 64) {
  nccl::ResetForTest();
  g_clock = 1000;
  nccl::Options o;
  o.mode = mode;
  o.pool_slots = slots;
  o.now = FakeNow;
  o.thread_id = FakeTid;
  nccl::Configure(o);
}

// Drains the plugin into a trace and reads it back.
TraceData DrainToTrace(uint32_t pid = 42) {
  std::string bytes;
  auto w = gt::TraceWriter::Create(gt::MakeStringSink(&bytes));
  REQUIRE(w.ok());
  nccl::Drain(**w, pid);
  REQUIRE((*w)->Finish().ok());
  TraceData d;
  auto r = gt::ReadTrace({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, d);
  REQUIRE(r.ok());
  return d;
}

abi::DescrV5 CollV5(uint64_t seq, const char* func = "AllReduce") {
  abi::DescrV5 d;
  std::memset(&d, 0, sizeof d);
  d.type = abi::kColl;
  d.rank = 1;
  d.coll.seqNumber = seq;
  d.coll.func = func;
  d.coll.count = 1 << 20;
  d.coll.root = 0;
  d.coll.datatype = "ncclFloat32";
  d.coll.nChannels = 8;
  d.coll.nWarps = 16;
  d.coll.algo = "Ring";
  d.coll.proto = "LL128";
  return d;
}

}  // namespace

TEST_CASE("NCCL plugin v5: init, group, collective, p2p, finalize become nccl_coll records",
          "[nccl_plugin]") {
  Setup(nccl::Mode::kOps);
  void* ctx = nullptr;
  int mask = 0;
  REQUIRE(ncclProfiler_v5.init(&ctx, 0xC0FFEE, &mask, "comm", 1, 2, 1, nullptr) == abi::kSuccess);
  REQUIRE(ctx != nullptr);
  CHECK(mask == int(abi::kColl | abi::kP2p));  // no channels, no proxy, no API events
  CHECK(std::string(ncclProfiler_v5.name) == "gtrace");

  abi::DescrV5 group{};
  group.type = abi::kGroup;
  void* gh = nullptr;
  ncclProfiler_v5.startEvent(ctx, &gh, &group);
  CHECK(gh != nullptr);  // NCCL 2.26/2.27 start collectives only under a group with a handle

  abi::DescrV5 d = CollV5(7);
  d.coll.parentGroup = gh;
  void* h = nullptr;
  g_clock = 5000;
  REQUIRE(ncclProfiler_v5.startEvent(ctx, &h, &d) == abi::kSuccess);
  REQUIRE(h != nullptr);
  g_clock = 5600;
  CHECK(ncclProfiler_v5.stopEvent(h) == abi::kSuccess);

  abi::DescrV5 p{};
  p.type = abi::kP2p;
  p.rank = 1;
  p.p2p.func = "Send";
  p.p2p.datatype = "ncclInt8";
  p.p2p.count = 4096;
  p.p2p.peer = 0;
  p.p2p.nChannels = 2;
  void* ph = nullptr;
  ncclProfiler_v5.startEvent(ctx, &ph, &p);
  ncclProfiler_v5.stopEvent(ph);
  ncclProfiler_v5.stopEvent(gh);
  CHECK(ncclProfiler_v5.finalize(ctx) == abi::kSuccess);

  TraceData t = DrainToTrace();
  REQUIRE(t.nccl_colls.size() == 2);
  const NcclCollRecord& c =
      t.nccl_colls[0].kind == uint8_t(gt::NcclOpKind::kColl) ? t.nccl_colls[0] : t.nccl_colls[1];
  const NcclCollRecord& s = &c == &t.nccl_colls[0] ? t.nccl_colls[1] : t.nccl_colls[0];
  CHECK(c.comm_hash == 0xC0FFEE);
  CHECK(c.seq == 7);
  CHECK(t.Str(c.func) == "AllReduce");
  CHECK(t.Str(c.datatype) == "ncclFloat32");
  CHECK(t.Str(c.algo) == "Ring");
  CHECK(t.Str(c.proto) == "LL128");
  CHECK(c.count == 1 << 20);
  CHECK(c.n_channels == 8);
  CHECK(c.n_warps == 16);
  CHECK(c.rank == 1);
  CHECK(c.nranks == 2);
  CHECK(c.root == 0);
  CHECK(c.start == 5000);
  CHECK(c.end == 5600);
  CHECK(c.pid == 42);
  CHECK(c.tid == 77);
  CHECK(s.kind == uint8_t(gt::NcclOpKind::kP2p));
  CHECK(t.Str(s.func) == "Send");
  CHECK(s.root == 0);  // the peer
  CHECK(s.seq == 0);   // this rank's first Send on the communicator
  CHECK(s.n_channels == 2);

  const nccl::Stats st = nccl::GetStats();
  CHECK(st.inits == 1);
  CHECK(st.version == 5);
  CHECK(st.events == 2);
  CHECK(st.records == 2);
  CHECK(st.bad_handle == 0);
}

TEST_CASE("NCCL plugin: a slot is freed one drain after it was written", "[nccl_plugin]") {
  Setup(nccl::Mode::kOps, /*slots=*/4);
  void* ctx = nullptr;
  int mask = 0;
  REQUIRE(ncclProfiler_v5.init(&ctx, 1, &mask, "c", 1, 2, 0, nullptr) == abi::kSuccess);
  for (uint64_t i = 0; i < 4; ++i) {
    abi::DescrV5 d = CollV5(i);
    void* h = nullptr;
    ncclProfiler_v5.startEvent(ctx, &h, &d);
    REQUIRE(h != nullptr);
    ncclProfiler_v5.stopEvent(h);
  }
  // Pool exhausted: the fifth is dropped and counted, not a crash.
  abi::DescrV5 d = CollV5(4);
  void* h = reinterpret_cast<void*>(1);
  ncclProfiler_v5.startEvent(ctx, &h, &d);
  CHECK(h == nullptr);
  CHECK(nccl::GetStats().pool_full == 1);
  CHECK(nccl::DrainWanted());
  CHECK(DrainToTrace().nccl_colls.size() == 4);  // written, still held
  ncclProfiler_v5.startEvent(ctx, &h, &d);
  CHECK(h == nullptr);
  CHECK(DrainToTrace().nccl_colls.empty());  // freed now
  ncclProfiler_v5.startEvent(ctx, &h, &d);
  CHECK(h != nullptr);
  ncclProfiler_v5.stopEvent(h);
  CHECK(DrainToTrace().nccl_colls.size() == 1);
  CHECK(nccl::GetStats().pool_full == 2);
}

TEST_CASE("NCCL plugin: bad input from NCCL is counted, never dereferenced", "[nccl_plugin]") {
  Setup(nccl::Mode::kOps);
  void* ctx = nullptr;
  int mask = 0;
  // Null arguments to init.
  CHECK(ncclProfiler_v5.init(nullptr, 1, &mask, "c", 1, 2, 0, nullptr) != abi::kSuccess);
  CHECK(ncclProfiler_v5.init(&ctx, 1, nullptr, "c", 1, 2, 0, nullptr) != abi::kSuccess);
  REQUIRE(ncclProfiler_v5.init(&ctx, 1, &mask, nullptr, 1, 2, 0, nullptr) == abi::kSuccess);

  abi::DescrV5 d = CollV5(1);
  void* h = nullptr;
  // Null and foreign contexts, null handle pointer, null descriptor.
  ncclProfiler_v5.startEvent(nullptr, &h, &d);
  CHECK(h == nullptr);
  int not_a_context = 0;
  ncclProfiler_v5.startEvent(&not_a_context, &h, &d);
  CHECK(h == nullptr);
  ncclProfiler_v5.startEvent(ctx, nullptr, &d);
  ncclProfiler_v5.startEvent(ctx, &h, nullptr);
  CHECK(h == nullptr);
  // Unknown event types (a newer NCCL) and types we did not ask for.
  abi::DescrV5 odd{};
  odd.type = 1u << 20;
  ncclProfiler_v5.startEvent(ctx, &h, &odd);
  CHECK(h == nullptr);
  odd.type = abi::kCeColl;  // a v6 type in a v5 table: unknown
  ncclProfiler_v5.startEvent(ctx, &h, &odd);
  odd.type = abi::kProxyOp;  // known, not asked for: ignored silently
  ncclProfiler_v5.startEvent(ctx, &h, &odd);
  CHECK(h == nullptr);
  // Null, foreign and stopped handles to stop and record.
  ncclProfiler_v5.stopEvent(nullptr);
  ncclProfiler_v5.stopEvent(&not_a_context);
  ncclProfiler_v5.recordEventState(nullptr, abi::kStateKernelChStop, nullptr);
  ncclProfiler_v5.startEvent(ctx, &h, &d);
  REQUIRE(h != nullptr);
  ncclProfiler_v5.recordEventState(h, 99, nullptr);  // unknown state on a live event: ignored
  ncclProfiler_v5.stopEvent(h);
  ncclProfiler_v5.stopEvent(h);  // twice
  ncclProfiler_v5.recordEventState(h, abi::kStateKernelChStop, nullptr);
  // A handle inside the pool but not at a slot's start.
  ncclProfiler_v5.stopEvent(static_cast<char*>(h) + 1);
  // Strings longer than NCCL's are cut, null ones are empty.
  abi::DescrV5 long_names = CollV5(2, "AVeryLongFunctionNameIndeed");
  long_names.coll.algo = nullptr;
  ncclProfiler_v5.startEvent(ctx, &h, &long_names);
  ncclProfiler_v5.stopEvent(h);
  // Events after finalize, and a second finalize.
  ncclProfiler_v5.finalize(ctx);
  ncclProfiler_v5.startEvent(ctx, &h, &d);
  CHECK(h == nullptr);
  ncclProfiler_v5.finalize(ctx);
  ncclProfiler_v5.finalize(nullptr);

  const nccl::Stats s = nccl::GetStats();
  CHECK(s.refused_inits == 2);
  CHECK(s.bad_context == 4);   // null, foreign at start; finalize twice; finalize(null)
  CHECK(s.unknown_type == 3);  // null descriptor, 1<<20, CeColl under v5
  CHECK(s.bad_handle == 7);  // null handle pointer, stop null, stop foreign, record null, stop twice, record
                             // after stop, a misaligned pointer into the pool
  CHECK(s.after_finalize == 1);
  TraceData t = DrainToTrace();
  REQUIRE(t.nccl_colls.size() == 2);
  CHECK(t.Str(t.nccl_colls[1].func) == "AVeryLongFuncti");  // 15 characters
  CHECK(t.nccl_colls[1].algo == 0);
}

TEST_CASE("NCCL plugin: refuses init when not configured, off, or after shutdown", "[nccl_plugin]") {
  Setup(nccl::Mode::kOff);
  void* ctx = reinterpret_cast<void*>(1);
  int mask = -1;
  CHECK(ncclProfiler_v5.init(&ctx, 1, &mask, "c", 1, 2, 0, nullptr) != abi::kSuccess);
  CHECK(ctx == nullptr);
  CHECK(mask == 0);
  Setup(nccl::Mode::kOps);
  nccl::Shutdown();
  CHECK(ncclProfiler_v6.init(&ctx, 1, &mask, "c", 1, 2, 0, nullptr) != abi::kSuccess);
  // Events of a communicator initialized before the trace finished are counted, not recorded.
  Setup(nccl::Mode::kOps);
  REQUIRE(ncclProfiler_v6.init(&ctx, 1, &mask, "c", 1, 2, 0, nullptr) == abi::kSuccess);
  CHECK(mask == int(abi::kColl | abi::kP2p | abi::kCeColl));
  nccl::Shutdown();
  abi::DescrV6 d{};
  d.type = abi::kColl;
  void* h = nullptr;
  ncclProfiler_v6.startEvent(ctx, &h, &d);
  CHECK(h == nullptr);
  CHECK(nccl::GetStats().after_finalize == 1);
}

TEST_CASE("NCCL plugin v6/v4/v3 tables read their own layouts", "[nccl_plugin]") {
  Setup(nccl::Mode::kOps);
  int mask = 0;
  // v6: a copy-engine collective.
  void* c6 = nullptr;
  REQUIRE(ncclProfiler_v6.init(&c6, 0x66, &mask, "c", 1, 4, 3, nullptr) == abi::kSuccess);
  abi::DescrV6 ce{};
  ce.type = abi::kCeColl;
  ce.rank = 3;
  ce.ceColl.seqNumber = 11;
  ce.ceColl.func = "AllGather";
  ce.ceColl.datatype = "ncclBfloat16";
  ce.ceColl.count = 10;
  ce.ceColl.root = -1;
  ce.ceColl.syncStrategy = "UC";
  void* h = nullptr;
  ncclProfiler_v6.startEvent(c6, &h, &ce);
  ncclProfiler_v6.stopEvent(h);
  // v4: init takes the name before the hash.
  void* c4 = nullptr;
  REQUIRE(ncclProfiler_v4.init(&c4, &mask, "c", 0x44, 1, 2, 1, nullptr) == abi::kSuccess);
  abi::DescrV4 d4{};
  d4.type = abi::kColl;
  d4.rank = 1;
  d4.coll.seqNumber = 4;
  d4.coll.func = "Broadcast";
  d4.coll.root = 1;
  d4.coll.algo = "Tree";
  d4.coll.proto = "Simple";
  d4.coll.nChannels = 3;
  ncclProfiler_v4.startEvent(c4, &h, &d4);
  ncclProfiler_v4.stopEvent(h);
  // v3: the communicator is in the descriptor; no channels even when asked.
  Setup(nccl::Mode::kChannels);
  void* c3 = nullptr;
  REQUIRE(ncclProfiler_v3.init(&c3, &mask) == abi::kSuccess);
  CHECK(mask == int(abi::kColl | abi::kP2p));
  abi::DescrV3 d3{};
  d3.type = abi::kColl;
  d3.rank = 0;
  d3.coll.commHash = 0x33;
  d3.coll.seqNumber = 3;
  d3.coll.func = "ReduceScatter";
  d3.coll.nMaxChannels = 5;
  ncclProfiler_v3.startEvent(c3, &h, &d3);
  ncclProfiler_v3.stopEvent(h);
  TraceData t = DrainToTrace();
  REQUIRE(t.nccl_colls.size() == 1);  // Setup reset the pool's earlier events
  CHECK(t.nccl_colls[0].comm_hash == 0x33);
  CHECK(t.nccl_colls[0].seq == 3);
  CHECK(t.nccl_colls[0].n_channels == 5);
  CHECK(t.nccl_colls[0].nranks == 0);  // v3 does not say
  CHECK(nccl::GetStats().version == 3);
}

TEST_CASE("NCCL plugin: v6 and v4 records before a reset", "[nccl_plugin]") {
  Setup(nccl::Mode::kOps);
  int mask = 0;
  void* c6 = nullptr;
  REQUIRE(ncclProfiler_v6.init(&c6, 0x66, &mask, "c", 1, 4, 3, nullptr) == abi::kSuccess);
  abi::DescrV6 ce{};
  ce.type = abi::kCeColl;
  ce.rank = 3;
  ce.ceColl.seqNumber = 11;
  ce.ceColl.func = "AllGather";
  ce.ceColl.syncStrategy = "UC";
  void* h = nullptr;
  ncclProfiler_v6.startEvent(c6, &h, &ce);
  ncclProfiler_v6.stopEvent(h);
  void* c4 = nullptr;
  REQUIRE(ncclProfiler_v4.init(&c4, &mask, "c", 0x44, 1, 2, 1, nullptr) == abi::kSuccess);
  abi::DescrV4 d4{};
  d4.type = abi::kColl;
  d4.coll.seqNumber = 4;
  d4.coll.func = "Broadcast";
  d4.coll.algo = "Tree";
  d4.coll.nChannels = 3;
  ncclProfiler_v4.startEvent(c4, &h, &d4);
  ncclProfiler_v4.stopEvent(h);
  TraceData t = DrainToTrace();
  REQUIRE(t.nccl_colls.size() == 2);
  for (const NcclCollRecord& r : t.nccl_colls) {
    if (r.kind == uint8_t(gt::NcclOpKind::kCeColl)) {
      CHECK(r.comm_hash == 0x66);
      CHECK(r.seq == 11);
      CHECK(r.nranks == 4);
      CHECK(r.rank == 3);
      CHECK(t.Str(r.algo) == "CE");
      CHECK(t.Str(r.proto) == "UC");
    } else {
      CHECK(r.comm_hash == 0x44);
      CHECK(r.seq == 4);
      CHECK(t.Str(r.func) == "Broadcast");
      CHECK(t.Str(r.algo) == "Tree");
      CHECK(r.n_channels == 3);
    }
  }
}

TEST_CASE("NCCL plugin channels: per-channel GPU times on the trace clock", "[nccl_plugin]") {
  Setup(nccl::Mode::kChannels);
  // GPU timer = wall clock; trace clock = wall clock - 1e12 in this test.
  nccl::SetRealtimeOffset(-1'000'000'000'000);
  void* ctx = nullptr;
  int mask = 0;
  REQUIRE(ncclProfiler_v5.init(&ctx, 0xAB, &mask, "c", 1, 2, 0, nullptr) == abi::kSuccess);
  CHECK((mask & int(abi::kKernelCh)) != 0);
  abi::DescrV5 d = CollV5(9);
  void* coll = nullptr;
  g_clock = 10'000;
  ncclProfiler_v5.startEvent(ctx, &coll, &d);
  g_clock = 10'500;
  ncclProfiler_v5.stopEvent(coll);  // the host side stops before the GPU runs it
  for (uint8_t ch = 0; ch < 2; ++ch) {
    abi::DescrV5 k{};
    k.type = abi::kKernelCh;
    k.parentObj = coll;
    k.kernelCh.channelId = ch;
    k.kernelCh.pTimer = 1'000'000'000'000 + 20'000 + ch;  // trace 20'000 + ch
    void* kh = nullptr;
    g_clock = 30'000;
    ncclProfiler_v5.startEvent(ctx, &kh, &k);
    REQUIRE(kh != nullptr);
    abi::StateArgsV4 a{};
    a.kernelChPTimer = 1'000'000'000'000 + 25'000;
    ncclProfiler_v5.recordEventState(kh, abi::kStateKernelChStop, &a);
    ncclProfiler_v5.stopEvent(kh);
  }
  // A channel whose collective was never recorded, and one whose GPU timer is not wall-clock based.
  abi::DescrV5 orphan{};
  orphan.type = abi::kKernelCh;
  void* kh = nullptr;
  ncclProfiler_v5.startEvent(ctx, &kh, &orphan);
  CHECK(kh == nullptr);
  abi::DescrV5 odd{};
  odd.type = abi::kKernelCh;
  odd.parentObj = coll;
  odd.kernelCh.pTimer = 123;  // boot-relative
  ncclProfiler_v5.startEvent(ctx, &kh, &odd);
  abi::StateArgsV4 a{};
  a.kernelChPTimer = 456;
  ncclProfiler_v5.recordEventState(kh, abi::kStateKernelChStop, &a);
  ncclProfiler_v5.stopEvent(kh);

  TraceData t = DrainToTrace();
  REQUIRE(t.nccl_colls.size() == 1);
  REQUIRE(t.nccl_channels.size() == 2);
  for (const NcclChannelRecord& c : t.nccl_channels) {
    CHECK(c.comm_hash == 0xAB);
    CHECK(c.seq == 9);
    CHECK(t.Str(c.func) == "AllReduce");
    CHECK(c.start == 20'000 + c.channel);
    CHECK(c.end == 25'000);
  }
  const nccl::Stats s = nccl::GetStats();
  CHECK(s.orphan_channels == 1);
  CHECK(s.channel_unaligned == 1);
}

TEST_CASE("NCCL GPU timer to trace clock: only where it must land", "[nccl_plugin]") {
  int64_t t = 0;
  CHECK(gt::decode::NcclGpuTimeToTrace(1000, 10, 2000, &t));
  CHECK(t == 1010);
  CHECK_FALSE(gt::decode::NcclGpuTimeToTrace(0, 10, 2000, &t));
  CHECK_FALSE(gt::decode::NcclGpuTimeToTrace(10'000'000, 0, 1000, &t));           // after it was seen
  CHECK_FALSE(gt::decode::NcclGpuTimeToTrace(1, 0, 100'000'000'000, &t));         // a minute before
  CHECK_FALSE(gt::decode::NcclGpuTimeToTrace(UINT64_MAX, 0, 100, &t));            // out of range
  CHECK_FALSE(gt::decode::NcclGpuTimeToTrace(uint64_t(INT64_MAX), 10, 100, &t));  // overflow
}

// NCCL's profiler plugin tables (collector/inject/nccl_profiler.cc) driven by a call sequence read from the
// input: init of any version, start/stop/record with descriptors whose fields come from the input, handles
// and contexts that are real, stale, null or foreign (pointers the plugin must never dereference), finalize,
// drains into a trace, shutdown. A tiny pool (16 slots) so exhaustion and slot reuse happen often. The trace
// it drains must read back.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "decode/nccl_profiler_abi.h"
#include "gt/reader.h"
#include "gt/trace_data.h"
#include "gt/writer.h"
#include "inject/nccl_profiler.h"

namespace abi = gt::decode::nccl_abi;
namespace nccl = gt::inject::nccl;

namespace {

struct Input {
  const uint8_t* p;
  size_t n;
  uint8_t Byte() {
    if (!n) return 0;
    --n;
    return *p++;
  }
  uint64_t U64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = v << 8 | Byte();
    return v;
  }
};

const char* const kNames[] = {"AllReduce",
                              "Send",
                              "Recv",
                              "ncclFloat32",
                              "Ring",
                              "LL128",
                              "",
                              nullptr,
                              "AVeryLongNameThatNcclWouldNeverUseForAnything"};
const char* Name(Input& in) {
  return kNames[in.Byte() % (sizeof(kNames) / sizeof(kNames[0]))];
}

int64_t g_now = 0;
int64_t Now() {
  return g_now += 1000;
}
uint32_t Tid() {
  return 1;
}

// Something that is not the plugin's: a heap block (ASan catches a read past it), a small integer, null.
char* g_foreign = nullptr;

void* Pick(Input& in, const std::vector<void*>& real) {
  const uint8_t b = in.Byte();
  if (b < 200 && !real.empty()) return real[b % real.size()];
  if (b < 220) return nullptr;
  if (b < 240) return g_foreign + (b % 4);
  return reinterpret_cast<void*>(uintptr_t(b));
}

// Fills the union member the type names, as NCCL does (its pointers are then NCCL's strings); the other
// members stay zero.
template <class D>
void FillV5Like(Input& in, D& d, uint64_t type, const std::vector<void*>& handles) {
  d.type = type;
  d.parentObj = Pick(in, handles);
  d.rank = int(in.Byte()) - 8;
  if (type == abi::kColl) {
    d.coll.seqNumber = in.U64();
    d.coll.func = Name(in);
    d.coll.count = in.U64();
    d.coll.root = int(in.Byte()) - 1;
    d.coll.datatype = Name(in);
    d.coll.nChannels = in.Byte();
    d.coll.nWarps = in.Byte();
    d.coll.algo = Name(in);
    d.coll.proto = Name(in);
  } else if (type == abi::kP2p) {
    d.p2p.func = Name(in);
    d.p2p.datatype = Name(in);
    d.p2p.count = in.U64();
    d.p2p.peer = int(in.Byte()) - 1;
    d.p2p.nChannels = in.Byte();
  } else if (type == abi::kKernelCh) {
    d.kernelCh.channelId = in.Byte();
    d.kernelCh.pTimer = in.U64();
  }
}

uint64_t TypeBits(Input& in) {
  const uint8_t b = in.Byte();
  return b < 240 ? uint64_t(1) << (b % 16) : uint64_t(b) << 20;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!g_foreign) g_foreign = new char[4];
  Input in{data, size};
  nccl::ResetForTest();
  nccl::Options o;
  o.mode = in.Byte() & 1 ? nccl::Mode::kChannels : nccl::Mode::kOps;
  o.pool_slots = 16;
  o.now = Now;
  o.thread_id = Tid;
  nccl::Configure(o);
  nccl::SetRealtimeOffset(int64_t(in.U64() >> 2) - (int64_t(1) << 61));
  std::vector<void*> contexts, handles;
  std::string bytes;
  auto w = gt::TraceWriter::Create(gt::MakeStringSink(&bytes));
  if (!w.ok()) return 0;
  for (int steps = 0; in.n && steps < 4096; ++steps) {
    void* h = nullptr;
    int mask = 0;
    switch (in.Byte() % 8) {
      case 0: {
        void* ctx = nullptr;
        switch (in.Byte() % 4) {
          case 0:
            ncclProfiler_v6.init(&ctx, in.U64(), &mask, Name(in), 1, in.Byte(), in.Byte(), nullptr);
            break;
          case 1:
            ncclProfiler_v5.init(&ctx, in.U64(), &mask, Name(in), 1, in.Byte(), in.Byte(), nullptr);
            break;
          case 2:
            ncclProfiler_v4.init(&ctx, &mask, Name(in), in.U64(), 1, in.Byte(), in.Byte(), nullptr);
            break;
          default:
            ncclProfiler_v3.init(&ctx, &mask);
        }
        if (ctx) contexts.push_back(ctx);
        break;
      }
      case 1: {
        void* ctx = Pick(in, contexts);
        switch (in.Byte() % 4) {
          case 0: {
            abi::DescrV6 d{};
            FillV5Like(in, d, TypeBits(in), handles);
            if (d.type == abi::kCeColl) {
              d.ceColl.seqNumber = in.U64();
              d.ceColl.func = Name(in);
              d.ceColl.datatype = Name(in);
              d.ceColl.syncStrategy = Name(in);
            }
            ncclProfiler_v6.startEvent(ctx, &h, &d);
            break;
          }
          case 1: {
            abi::DescrV5 d{};
            FillV5Like(in, d, TypeBits(in), handles);
            ncclProfiler_v5.startEvent(ctx, &h, in.Byte() < 250 ? &d : nullptr);
            break;
          }
          case 2: {
            abi::DescrV4 d{};
            d.type = uint8_t(TypeBits(in));
            d.parentObj = Pick(in, handles);
            if (d.type == abi::kColl) {
              d.coll.seqNumber = in.U64();
              d.coll.func = Name(in);
              d.coll.datatype = Name(in);
              d.coll.algo = Name(in);
              d.coll.proto = Name(in);
            } else if (d.type == abi::kP2p) {
              d.p2p.func = Name(in);
              d.p2p.datatype = Name(in);
            } else if (d.type == abi::kKernelCh) {
              d.kernelCh.pTimer = in.U64();
            }
            ncclProfiler_v4.startEvent(ctx, in.Byte() < 250 ? &h : nullptr, &d);
            break;
          }
          default: {
            abi::DescrV3 d{};
            d.type = uint8_t(TypeBits(in));
            if (d.type == abi::kColl) {
              d.coll.commHash = in.U64();
              d.coll.func = Name(in);
              d.coll.name = Name(in);
            } else if (d.type == abi::kP2p) {
              d.p2p.commHash = in.U64();
              d.p2p.func = Name(in);
            }
            ncclProfiler_v3.startEvent(ctx, &h, &d);
          }
        }
        if (h) handles.push_back(h);
        break;
      }
      case 2:
        ncclProfiler_v5.stopEvent(Pick(in, handles));
        break;
      case 3: {
        abi::StateArgsV4 a{};
        a.kernelChPTimer = in.U64();
        ncclProfiler_v5.recordEventState(Pick(in, handles), in.Byte() % 32, in.Byte() & 1 ? &a : nullptr);
        break;
      }
      case 4: {
        abi::StateArgsV3 a{};
        ncclProfiler_v3.recordEventState(Pick(in, handles), in.Byte() % 32, &a);
        break;
      }
      case 5:
        ncclProfiler_v6.finalize(Pick(in, contexts));
        break;
      case 6:
        nccl::Drain(**w, 1);
        if (in.Byte() == 0xFF) nccl::Shutdown();
        break;
      default:
        if (handles.size() > 64) handles.erase(handles.begin(), handles.begin() + 32);
    }
  }
  nccl::Drain(**w, 1);
  if (!(*w)->Finish().ok()) __builtin_trap();
  gt::TraceData d;
  if (!gt::ReadTrace({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, d).ok())
    __builtin_trap();
  return 0;
}

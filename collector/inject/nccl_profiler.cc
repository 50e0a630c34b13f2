// NCCL's profiler plugin: the exported tables, the event pool and the drain (see nccl_profiler.h).
#include "inject/nccl_profiler.h"

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <new>
#include <string_view>

#include "decode/nccl_profiler_decode.h"

namespace gt::inject::nccl {
namespace {

namespace abi = decode::nccl_abi;
using decode::NcclCommInfo;
using decode::NcclEvent;
using decode::NcclEventType;

// A slot's life: free -> busy (claimed by startEvent; NCCL holds the handle) -> done (stopEvent) -> written
// (Drain wrote its record; a channel event may still read its identity) -> free (the next Drain).
enum : uint8_t { kFree = 0, kBusy = 1, kDone = 2, kWritten = 3 };

struct Slot {
  std::atomic<uint8_t> state{kFree};
  std::atomic<uint32_t> gen{0};  // bumped when the slot is freed: readers of a parent see reuse
  NcclEvent ev;
};

// One per communicator that initialized the plugin; never freed or reused, so a stale context pointer is
// still recognized (and counted) rather than dereferenced into freed memory.
struct Context {
  std::atomic<uint8_t> state{0};  // 0 unused, 1 live, 2 finalized
  int version = 0;
  NcclCommInfo comm;
  std::atomic<uint64_t> p2p_seq[2] = {};  // Send, Recv: this rank's n-th on the communicator
};
constexpr uint32_t kMaxContexts = 4096;
Context g_contexts[kMaxContexts];
std::atomic<uint32_t> g_next_context{0};

// Handed to NCCL for its group events: non-null (NCCL 2.26/2.27 start collective events only under a group
// with a handle), never a slot.
char g_group_sentinel;

struct Counters {
  std::atomic<uint64_t> inits{0}, events{0}, records{0}, pool_full{0}, unknown_type{0}, bad_handle{0},
      bad_context{0}, after_finalize{0}, orphan_channels{0}, channel_unaligned{0}, unfinished{0},
      refused_inits{0};
  std::atomic<int> version{0};
};

struct State {
  std::atomic<Mode> mode{Mode::kOff};
  std::atomic<bool> shut{false};
  std::atomic<int64_t (*)()> now{nullptr};
  std::atomic<uint32_t (*)()> thread_id{nullptr};
  std::mutex pool_mu;  // allocation of the pool (first init)
  uint32_t want_slots = 0;
  std::atomic<Slot*> slots{nullptr};
  std::atomic<uint32_t> nslots{0};
  std::atomic<uint32_t> cursor{0};
  std::atomic<int64_t> live{0};
  std::atomic<int64_t> realtime_offset{0};
  Counters c;
};
State g;

int64_t MonotonicNow() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
uint32_t GetTid() {
  thread_local uint32_t tid = uint32_t(syscall(SYS_gettid));
  return tid;
}
int64_t Now() {
  auto f = g.now.load(std::memory_order_relaxed);
  return f ? f() : MonotonicNow();
}
uint32_t Tid() {
  auto f = g.thread_id.load(std::memory_order_relaxed);
  return f ? f() : GetTid();
}
void Count(std::atomic<uint64_t>& c) {
  c.fetch_add(1, std::memory_order_relaxed);
}

bool EnsurePool() {
  std::lock_guard<std::mutex> lock(g.pool_mu);
  const uint32_t want = g.want_slots;
  if (g.slots.load() && g.nslots.load() == want) return true;
  // A pool of another size (tests reconfigure) is abandoned, not freed: NCCL may still hold its handles,
  // which are then foreign and counted.
  Slot* s = new (std::nothrow) Slot[want];
  if (!s) return false;
  g.nslots.store(0);
  g.slots.store(s);
  g.nslots.store(want);
  g.cursor.store(0);
  g.live.store(0);
  return true;
}

Slot* SlotOf(void* handle) {
  Slot* base = g.slots.load(std::memory_order_acquire);
  const uint32_t n = g.nslots.load(std::memory_order_acquire);
  if (!handle || !base) return nullptr;
  const auto h = reinterpret_cast<uintptr_t>(handle), b = reinterpret_cast<uintptr_t>(base);
  if (h < b || h >= b + uintptr_t(n) * sizeof(Slot) || (h - b) % sizeof(Slot)) return nullptr;
  return static_cast<Slot*>(handle);
}

Context* ContextOf(void* context) {
  const auto h = reinterpret_cast<uintptr_t>(context), b = reinterpret_cast<uintptr_t>(&g_contexts[0]);
  if (!context || h < b || h >= b + sizeof(g_contexts) || (h - b) % sizeof(Context)) return nullptr;
  return static_cast<Context*>(context);
}

Slot* Claim() {
  Slot* base = g.slots.load(std::memory_order_acquire);
  const uint32_t n = g.nslots.load(std::memory_order_acquire);
  if (!base || n == 0) return nullptr;
  for (int probe = 0; probe < 64; ++probe) {
    Slot& s = base[g.cursor.fetch_add(1, std::memory_order_relaxed) % n];
    uint8_t expected = kFree;
    if (s.state.load(std::memory_order_relaxed) == kFree &&
        s.state.compare_exchange_strong(expected, kBusy, std::memory_order_acq_rel)) {
      g.live.fetch_add(1, std::memory_order_relaxed);
      return &s;
    }
  }
  return nullptr;
}

abi::Result Init(int version, void** context, int* mask, const NcclCommInfo& comm) {
  if (context) *context = nullptr;
  const Mode mode = g.mode.load();
  if (!context || !mask || mode == Mode::kOff || g.shut.load() || !EnsurePool()) {
    if (mask) *mask = 0;
    Count(g.c.refused_inits);
    return abi::kInternalError;  // NCCL unloads the plugin and goes on without it
  }
  const uint32_t i = g_next_context.fetch_add(1);
  if (i >= kMaxContexts) {
    *mask = 0;
    Count(g.c.refused_inits);
    return abi::kInternalError;
  }
  Context& c = g_contexts[i];
  c.version = version;
  c.comm = comm;
  c.state.store(1, std::memory_order_release);
  *context = &c;
  int m = int(abi::kColl | abi::kP2p);
  if (version >= 6) m |= int(abi::kCeColl);
  if (mode == Mode::kChannels && version >= 4) m |= int(abi::kKernelCh);
  *mask = m;
  g.c.version.store(version);
  Count(g.c.inits);
  return abi::kSuccess;
}

// A channel event copies its collective's identity from the parent's slot, unless that slot was freed (and
// perhaps reused) meanwhile: the generation is read around the copy.
bool CopyParent(void* parent, NcclEvent* e) {
  Slot* p = SlotOf(parent);
  if (!p) return false;
  const uint32_t g1 = p->gen.load(std::memory_order_acquire);
  const uint8_t st = p->state.load(std::memory_order_acquire);
  if (st == kFree || p->ev.type == NcclEventType::kChannel) return false;
  const uint64_t comm = p->ev.comm_hash, seq = p->ev.seq;
  char func[decode::kNcclNameBytes];
  std::memcpy(func, p->ev.func, sizeof func);
  std::atomic_thread_fence(std::memory_order_acquire);
  if (p->gen.load(std::memory_order_acquire) != g1) return false;
  e->comm_hash = comm, e->seq = seq;
  func[sizeof func - 1] = '\0';
  std::memcpy(e->func, func, sizeof func);
  return true;
}

template <class Descr>
abi::Result Start(void* context, void** handle, Descr* d) {
  if (!handle) {
    Count(g.c.bad_handle);
    return abi::kSuccess;
  }
  *handle = nullptr;
  Context* c = ContextOf(context);
  const uint8_t cs = c ? c->state.load(std::memory_order_acquire) : 0;
  if (cs == 0) {
    Count(g.c.bad_context);
    return abi::kSuccess;
  }
  if (cs == 2 || g.shut.load(std::memory_order_relaxed)) {
    Count(g.c.after_finalize);
    return abi::kSuccess;
  }
  if (!d) {
    Count(g.c.unknown_type);
    return abi::kSuccess;
  }
  NcclEvent e = decode::ReadNcclDescr(*d, c->comm);
  switch (e.type) {
    case NcclEventType::kGroup:
      *handle = &g_group_sentinel;
      return abi::kSuccess;
    case NcclEventType::kIgnored:
      return abi::kSuccess;
    case NcclEventType::kUnknown:
      Count(g.c.unknown_type);
      return abi::kSuccess;
    case NcclEventType::kChannel:
      if (!CopyParent(d->parentObj, &e)) {
        Count(g.c.orphan_channels);
        return abi::kSuccess;
      }
      break;
    case NcclEventType::kP2p: {
      const bool recv = std::string_view(e.func) == "Recv";
      e.seq = c->p2p_seq[recv ? 1 : 0].fetch_add(1, std::memory_order_relaxed);
      break;
    }
    default:
      break;
  }
  Slot* s = Claim();
  if (!s) {
    Count(g.c.pool_full);
    return abi::kSuccess;
  }
  e.tid = Tid();
  e.start = Now();
  s->ev = e;
  Count(g.c.events);
  *handle = s;
  return abi::kSuccess;
}

abi::Result Stop(void* handle) {
  if (handle == &g_group_sentinel) return abi::kSuccess;
  Slot* s = SlotOf(handle);
  if (!s || s->state.load(std::memory_order_acquire) != kBusy) {
    Count(g.c.bad_handle);
    return abi::kSuccess;
  }
  s->ev.end = Now();
  uint8_t expected = kBusy;
  if (!s->state.compare_exchange_strong(expected, kDone, std::memory_order_acq_rel)) Count(g.c.bad_handle);
  return abi::kSuccess;
}

abi::Result Record(void* handle, int state, uint64_t gpu_timer, bool has_timer) {
  if (handle == &g_group_sentinel) return abi::kSuccess;
  Slot* s = SlotOf(handle);
  if (!s || s->state.load(std::memory_order_acquire) != kBusy) {
    Count(g.c.bad_handle);
    return abi::kSuccess;
  }
  if (state == abi::kStateKernelChStop && has_timer && s->ev.type == NcclEventType::kChannel)
    s->ev.gpu_end = gpu_timer;
  return abi::kSuccess;
}

abi::Result RecordV4(void* handle, int state, abi::StateArgsV4* args) {
  return Record(handle, state, args ? args->kernelChPTimer : 0, args != nullptr);
}
abi::Result RecordV3(void* handle, int state, abi::StateArgsV3*) {
  return Record(handle, state, 0, false);
}

abi::Result Finalize(void* context) {
  Context* c = ContextOf(context);
  uint8_t live = 1;
  if (!c || !c->state.compare_exchange_strong(live, 2)) Count(g.c.bad_context);
  return abi::kSuccess;
}

// ---- the versions' entry points
abi::Result InitV6(void** ctx, uint64_t comm_id, int* mask, const char*, int, int nranks, int rank,
                   abi::DebugLogger) {
  return Init(6, ctx, mask, {comm_id, rank, nranks});
}
abi::Result InitV5(void** ctx, uint64_t comm_id, int* mask, const char*, int, int nranks, int rank,
                   abi::DebugLogger) {
  return Init(5, ctx, mask, {comm_id, rank, nranks});
}
abi::Result InitV4(void** ctx, int* mask, const char*, uint64_t comm_hash, int, int nranks, int rank,
                   abi::DebugLogger) {
  return Init(4, ctx, mask, {comm_hash, rank, nranks});
}
abi::Result InitV3(void** ctx, int* mask) {
  return Init(3, ctx, mask, {});
}
abi::Result StartV6(void* ctx, void** h, abi::DescrV6* d) {
  return Start(ctx, h, d);
}
abi::Result StartV5(void* ctx, void** h, abi::DescrV5* d) {
  return Start(ctx, h, d);
}
abi::Result StartV4(void* ctx, void** h, abi::DescrV4* d) {
  return Start(ctx, h, d);
}
abi::Result StartV3(void* ctx, void** h, abi::DescrV3* d) {
  return Start(ctx, h, d);
}

}  // namespace

void Configure(const Options& o) {
  std::lock_guard<std::mutex> lock(g.pool_mu);
  g.want_slots = o.pool_slots ? o.pool_slots : o.mode == Mode::kChannels ? 65536u : 16384u;
  g.now.store(o.now);
  g.thread_id.store(o.thread_id);
  g.shut.store(false);
  g.mode.store(o.mode);
}

void Shutdown() {
  g.shut.store(true);
  Slot* base = g.slots.load();
  const uint32_t n = g.nslots.load();
  uint64_t busy = 0;
  for (uint32_t i = 0; base && i < n; ++i) busy += base[i].state.load() == kBusy;
  g.c.unfinished.store(busy);
}

void SetRealtimeOffset(int64_t realtime_to_trace_ns) {
  g.realtime_offset.store(realtime_to_trace_ns);
}

bool DrainWanted() {
  const uint32_t n = g.nslots.load(std::memory_order_relaxed);
  return n && g.live.load(std::memory_order_relaxed) > int64_t(n / 4);
}

uint64_t Drain(TraceWriter& w, uint32_t pid) {
  Slot* base = g.slots.load(std::memory_order_acquire);
  const uint32_t n = g.nslots.load(std::memory_order_acquire);
  if (!base) return 0;
  const int64_t offset = g.realtime_offset.load();
  const decode::InternFn intern = [&w](std::string_view s) { return w.Intern(s); };
  uint64_t written = 0;
  for (uint32_t i = 0; i < n; ++i) {
    Slot& s = base[i];
    const uint8_t st = s.state.load(std::memory_order_acquire);
    if (st == kWritten) {
      s.gen.fetch_add(1, std::memory_order_acq_rel);
      s.state.store(kFree, std::memory_order_release);
      g.live.fetch_sub(1, std::memory_order_relaxed);
    } else if (st == kDone) {
      const NcclEvent& e = s.ev;
      if (e.type == NcclEventType::kChannel) {
        int64_t t0 = 0, t1 = 0;
        if (decode::NcclGpuTimeToTrace(e.gpu_start, offset, e.end, &t0) &&
            decode::NcclGpuTimeToTrace(e.gpu_end, offset, e.end, &t1) && t1 >= t0) {
          NcclEvent moved = e;
          moved.start = t0, moved.end = t1;
          w.Add(decode::ToNcclChannelRecord(moved, pid, intern));
          ++written;
        } else {
          Count(g.c.channel_unaligned);
        }
      } else {
        w.Add(decode::ToNcclCollRecord(e, pid, intern));
        ++written;
      }
      s.state.store(kWritten, std::memory_order_release);
    }
  }
  g.c.records.fetch_add(written, std::memory_order_relaxed);
  return written;
}

Stats GetStats() {
  Stats s;
  const Counters& c = g.c;
  s.inits = c.inits.load(), s.version = c.version.load(), s.events = c.events.load();
  s.records = c.records.load(), s.pool_full = c.pool_full.load(), s.unknown_type = c.unknown_type.load();
  s.bad_handle = c.bad_handle.load(), s.bad_context = c.bad_context.load();
  s.after_finalize = c.after_finalize.load(), s.orphan_channels = c.orphan_channels.load();
  s.channel_unaligned = c.channel_unaligned.load(), s.unfinished = c.unfinished.load();
  s.refused_inits = c.refused_inits.load();
  return s;
}

void ResetForTest() {
  std::lock_guard<std::mutex> lock(g.pool_mu);
  for (Context& c : g_contexts) c.state.store(0);
  g_next_context.store(0);
  if (Slot* base = g.slots.load())
    for (uint32_t i = 0; i < g.nslots.load(); ++i) {
      base[i].state.store(kFree);
      base[i].gen.fetch_add(1);
    }
  g.live.store(0);
  g.cursor.store(0);
  g.shut.store(false);
  g.realtime_offset.store(0);
  for (auto* a : {&g.c.inits, &g.c.events, &g.c.records, &g.c.pool_full, &g.c.unknown_type, &g.c.bad_handle,
                  &g.c.bad_context, &g.c.after_finalize, &g.c.orphan_channels, &g.c.channel_unaligned,
                  &g.c.unfinished, &g.c.refused_inits})
    a->store(0);
  g.c.version.store(0);
}

}  // namespace gt::inject::nccl

// The tables NCCL dlsym's by these names.
#define GT_NCCL_EXPORT extern "C" __attribute__((visibility("default")))
GT_NCCL_EXPORT const gt::decode::nccl_abi::ProfilerV6 ncclProfiler_v6 = {"gtrace",
                                                                         gt::inject::nccl::InitV6,
                                                                         gt::inject::nccl::StartV6,
                                                                         gt::inject::nccl::Stop,
                                                                         gt::inject::nccl::RecordV4,
                                                                         gt::inject::nccl::Finalize};
GT_NCCL_EXPORT const gt::decode::nccl_abi::ProfilerV5 ncclProfiler_v5 = {"gtrace",
                                                                         gt::inject::nccl::InitV5,
                                                                         gt::inject::nccl::StartV5,
                                                                         gt::inject::nccl::Stop,
                                                                         gt::inject::nccl::RecordV4,
                                                                         gt::inject::nccl::Finalize};
GT_NCCL_EXPORT const gt::decode::nccl_abi::ProfilerV4 ncclProfiler_v4 = {"gtrace",
                                                                         gt::inject::nccl::InitV4,
                                                                         gt::inject::nccl::StartV4,
                                                                         gt::inject::nccl::Stop,
                                                                         gt::inject::nccl::RecordV4,
                                                                         gt::inject::nccl::Finalize};
GT_NCCL_EXPORT const gt::decode::nccl_abi::ProfilerV3 ncclProfiler_v3 = {"gtrace",
                                                                         gt::inject::nccl::InitV3,
                                                                         gt::inject::nccl::StartV3,
                                                                         gt::inject::nccl::Stop,
                                                                         gt::inject::nccl::RecordV3,
                                                                         gt::inject::nccl::Finalize};

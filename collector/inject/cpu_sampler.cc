// Periodic CPU sampling (cpu_sampler.h): the sampler thread, the SIGPROF handler and the drain.
#include "inject/cpu_sampler.h"

#include <cxxabi.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <unwind.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace gt::inject::cpu {
namespace {

// ---- raw entries
// --------------------------------------------------------------------------------------------- word 0: magic
// << 32 | flags << 16 | python frames << 8 | native frames; word 1: timestamp; then the native return
// addresses (innermost first), then two words per Python frame (innermost first): the code object and
// PackPythonLine's word (its file's hash, first line, code unit index).
constexpr uint64_t kMagic = 0x47545350;  // "GTSP"

// A Python frame's second word: a 20-bit hash of its file name | first line (20 bits) | code unit index + 1
// (24 bits). The hash tells apart code objects that took a freed one's address (a module body or exec'd code
// is freed when it finishes; the next one is often allocated in its place, with the same first line): the
// frame names are cached by (address, this word), and the name read from a code object must have the hash.
// The handler hashes what it can cheaply; the sampler thread the rest, before the drain reads the entry
// (hash 0: not yet; kFileHashGone: the name could not be read). Files past line 2^20 - 1 fail the first-line
// check (named "<unreadable code object>"); an index past 2^24 - 2 gives the function's first line.
constexpr uint64_t PackPythonLine(uint32_t file_hash, uint32_t first_line, int64_t index) {
  const uint64_t unit = index >= 0 && index < 0xffffff ? uint64_t(index + 1) : 0;
  return uint64_t(file_hash & 0xfffff) << 44 | uint64_t(std::min<uint32_t>(first_line, 0xfffff)) << 24 | unit;
}
constexpr int PythonFirstLine(uint64_t word) {
  return int((word >> 24) & 0xfffff);
}
constexpr int64_t PythonUnitIndex(uint64_t word) {
  return int64_t(word & 0xffffff) - 1;
}
constexpr uint32_t PythonFileHash(uint64_t word) {
  return uint32_t(word >> 44) & 0xfffff;
}
// An entry's header word, read back (the drain, PeekPython).
struct EntryHeader {
  int native = 0, python = 0;
  uint8_t flags = 0;
  uint64_t Words() const {
    return flags & kSampleIdleRepeat ? 2 : 2 + uint64_t(native) + 2 * uint64_t(python);
  }
  // Where Python frame i's two words start, the entry starting at `at`.
  uint64_t PythonAt(uint64_t at, int i) const { return at + 2 + uint64_t(native) + 2 * uint64_t(i); }
};
inline bool ReadHeader(uint64_t word, EntryHeader* h) {
  if ((word >> 32) != kMagic) return false;
  h->native = int(word & 0xff), h->python = int((word >> 8) & 0xff), h->flags = uint8_t(word >> 16);
  return true;
}
constexpr int kMaxNative = 64;
constexpr int kMaxPython = 64;
constexpr size_t kMaxEntryWords = 2 + kMaxNative + 2 * kMaxPython;
constexpr size_t kRingWords = 1u << 16;  // 512 KiB per sampled thread: 330 ms of the deepest stacks at 1 kHz
constexpr int kMaxSlots = 512;
constexpr int64_t kIdleCpuNs = 50000;  // CPU used since the last sample that still counts as idle

struct Slot {
  std::atomic<uint32_t> tid{0};    // 0: free
  std::atomic<uint32_t> token{0};  // 1: a producer (the handler or the sampler) owns the ring's head
  std::atomic<uint64_t> head{0}, tail{0};
  uint64_t* ring = nullptr;  // kRingWords, allocated once by the sampler thread
  // Where PeekPython stopped reading this ring: while the sampler runs, the drain reads no further (the
  // sampler thread fills in file hashes there, and names the Python frames before their code is freed).
  std::atomic<uint64_t> peeked{0};
  RuleCache* rules = nullptr;  // the handler's unwind rules (mapped with the ring, kept with it)
  // The thread's CPU clock when the handler finished its last sample.
  std::atomic<int64_t> cpu_after_sample{-1};
  std::atomic<int64_t> signal_sent_ns{0};  // when the sampler sent the signal in flight (costs only)
  sigjmp_buf guard_jmp;                    // the handler's fault guard: where a fault in its reads returns
  // Sampler thread only.
  int64_t token_since_ns = 0;
  bool confirmed = false;  // the signal that confirms where a thread stopped was sent (see Tick)
  bool sampled_once = false;
  std::atomic<bool> exited{false};  // the thread is gone: freed once drained
  // Drain only.
  uint32_t last_leaf = 0;
  uint8_t last_flags = 0;
};

// Python frame layouts (x86-64), per 3.minor. 3.11's are checked against its headers by a test.
struct PyLayout {
  int minor;
  uint32_t tstate_cframe;   // PyThreadState::cframe (3.13+: PyThreadState::current_frame, the frame itself)
  uint32_t cframe_current;  // _PyCFrame::current_frame (kNoCFrame: 3.13 dropped _PyCFrame)
  uint32_t frame_code, frame_previous, frame_prev_instr, frame_owner;
  int owner_shim;  // frames of this owner and above are shims, no code object's (-1: none)
  uint32_t code_firstlineno, code_filename, code_qualname, code_linetable, code_adaptive;
  uint32_t ascii_size, compact_size, compact_utf8;  // PyASCIIObject, PyCompactUnicodeObject, its utf8
  // The frame's code pointer is a tagged _PyStackRef (3.14): these bits are tags.
  uintptr_t code_tag_bits = 0;
};
constexpr uint32_t kNoCFrame = ~0u;
// PyASCIIObject, the same in 3.11-3.14: its length, and its state word's compact and ascii bits.
constexpr uint32_t kStrLength = 16, kStrState = 32;
constexpr bool StrCompactAscii(uint32_t state) {
  return (state >> 5 & 1) && (state >> 6 & 1);
}
constexpr PyLayout kLayouts[] = {
    {11, 56, 8, 32, 48, 56, 69, -1, 72, 112, 128, 136, 184, 48, 72, 56},
    {12, 56, 0, 0, 8, 56, 70, 3, 68, 112, 128, 136, 192, 40, 56, 48},
    // 3.13: offsetof() against Debian's 3.13.5 sources (scripts/python_layout.sh), then the
    // embedded-interpreter test run against that build. instr_ptr (the instruction executing) replaced
    // prev_instr (the last one run): for a frame that is calling, both name the call.
    {13, 72, kNoCFrame, 0, 8, 56, 70, 3, 68, 112, 128, 136, 200, 40, 56, 48},
    // 3.14: offsetof() against the headers of Debian's libpython3.14-dev 3.14.10-1 (sid), then the embedded-
    // interpreter test run against its libpython3.14 on the GPU host (glibc 2.39; this build machine's 2.36
    // is too old for it). f_executable became a _PyStackRef whose low bit tags a deferred reference; entry
    // frames are owned by the interpreter (3) and C-stack shims moved to 4: both are skipped, as 3.14's own
    // _PyFrame_IsIncomplete does.
    {14, 72, kNoCFrame, 0, 8, 56, 74, 3, 68, 112, 128, 136, 208, 40, 56, 48, 1},
};

// Where each field the walk uses sits inside _Py_DebugOffsets (offsetof() on each version's headers: 3.13.5's
// pycore_runtime.h, 3.14.10's pycore_debug_offsets.h), to check a row against the interpreter's own values.
struct DebugOffsetsAt {
  int minor;
  uint32_t tstate_current_frame, frame_previous, frame_executable, frame_instr_ptr, frame_owner,
      code_filename, code_qualname, code_linetable, code_firstlineno, code_adaptive, size;
};
constexpr DebugOffsetsAt kDebugOffsetsAt[] = {
    {13, 184, 232, 240, 248, 264, 280, 296, 304, 312, 344, 584},
    {14, 208, 256, 264, 272, 288, 320, 336, 344, 352, 384, 760},
};

// The process's readable mappings (/proc/self/maps, adjacent ones merged), for the handler to check a pointer
// before it reads there. Two buffers: the sampler fills the one not in use and flips `maps_current`; a
// handler counts itself in `maps_readers` of the buffer it reads, so the sampler never refills one in use.
constexpr uint32_t kMaxRanges = 16384;
struct MapSnapshot {
  uint32_t n = 0;
  uintptr_t lo[kMaxRanges], hi[kMaxRanges];
};

struct State {
  Slot slots[kMaxSlots];
  std::atomic<bool> running{false};
  std::atomic<bool> stop{false};
  std::thread thread;
  uint32_t sampler_tid = 0;
  Options options;
  // Python, decided by the sampler thread; the handler reads them after `py_ready` (release/acquire).
  std::atomic<bool> py_ready{false};
  void* (*py_this_tstate)() = nullptr;
  uintptr_t py_code_type = 0;  // &PyCode_Type: a frame whose code object is not one ends the walk
  const PyLayout* py = nullptr;
  std::atomic<bool> py_checked{false};
  uintptr_t py_module_base = 0;
  uintptr_t py_text_lo = 0, py_text_hi = 0;  // the interpreter module's mapped range  // the interpreter's
                                             // module (python3 or libpython): where native frames stop
  Stats stats;
  std::atomic<uint64_t> ring_full{0}, unwind_failed{0}, truncated{0}, py_unreadable{0}, py_unsupported{0},
      unwind_fallbacks{0}, stack_unbounded{0}, read_faults{0};
  bool cached_unwind = false;  // set before the handler is installed (Start), read by it
  // glibc's lock-free lookup of the module holding an address (2.35+; null before: libgcc only).
  FindObjectFn find_object = nullptr;
  // Changes when modules were loaded or unloaded (the sampler thread checks every 100 ms): the threads'
  // caches of unwind rules are emptied before their next use.
  std::atomic<uint64_t> modules_generation{0};
  uint64_t modules_adds = 0, modules_subs = 0;  // sampler thread only
  std::atomic<uint64_t> rules_read{0}, cached_frames{0};
  std::atomic<uint64_t> fallback_why[FrameRule::kWhyCount] = {}, fallback_pc[FrameRule::kWhyCount] = {};
  MapSnapshot* maps[2] = {nullptr, nullptr};  // mmap'd by the sampler thread
  std::atomic<int> maps_current{-1};
  std::atomic<uint32_t> maps_readers[2];
  std::atomic<bool> maps_miss{false};  // a handler found a pointer outside them: read them again soon
  int64_t maps_read_ns = 0;            // sampler thread only
  std::atomic<uint64_t> maps_misses{0};
  std::atomic<uint64_t> handled{0}, handler_ns{0}, unwind_ns{0}, python_ns{0}, cpu_clock_ns{0},
      delivery_ns{0};
  // The governor (Options::max_overhead): each signalled sample's cost, tgkill to the handler's end, counted
  // by the handler in quarter-octave buckets (CostBucket) and read by the sampler thread.
  static constexpr int kCostBuckets = 4 * 40;
  std::atomic<uint64_t> cost_buckets[kCostBuckets] = {};
  // Drain.
  struct NativeName {
    StringId id;
    bool interpreter;  // in the interpreter's module (where a Python thread's kept native frames end)
  };
  std::unordered_map<uint64_t, NativeName> native_names;  // address -> frame text (this writer)
  struct CodeKey {
    uint64_t code, lines;
    bool operator==(const CodeKey& o) const { return code == o.code && lines == o.lines; }
  };
  struct CodeKeyHash {
    size_t operator()(const CodeKey& k) const { return std::hash<uint64_t>()(k.code * 31 + k.lines); }
  };
  std::unordered_map<CodeKey, StringId, CodeKeyHash> python_names;
  // Python frames named by the sampler thread right after their samples (PeekPython), before the drain: the
  // code object of a module body or of exec'd code is freed when it finishes, often within the drain's 50 ms
  // (importing torch: hundreds of frames a run were <unreadable code object>). The drain takes the text out.
  std::mutex early_mu;
  std::unordered_map<CodeKey, std::string, CodeKeyHash> early_names;  // under early_mu
  std::unordered_set<CodeKey, CodeKeyHash> early_seen;                // sampler thread only
  std::atomic<uint64_t> early_used{0};
  struct NodeKey {
    uint32_t parent;
    StringId frame;
    uint8_t kind;
    bool operator==(const NodeKey& o) const {
      return parent == o.parent && frame == o.frame && kind == o.kind;
    }
  };
  struct NodeKeyHash {
    size_t operator()(const NodeKey& k) const {
      return std::hash<uint64_t>()((uint64_t(k.parent) << 32 | k.frame) * 3 + k.kind);
    }
  };
  std::unordered_map<NodeKey, uint32_t, NodeKeyHash> nodes;
  std::vector<uint8_t> node_written;  // by node id
  const TraceWriter* writer = nullptr;
};

State* g = nullptr;  // leaked on purpose: late signals may still arrive at exit

int64_t Now() {
  if (g && g->options.now) return g->options.now();
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// ---- the signal handler
// --------------------------------------------------------------------------------------
struct UnwindState {
  uint64_t* pcs;
  int n, max;
  bool more;
  uintptr_t stop_lo = 0, stop_hi = 0;  // a frame in this range (the interpreter) ends the walk
};
_Unwind_Reason_Code UnwindOne(struct _Unwind_Context* ctx, void* arg) {
  auto* s = static_cast<UnwindState*>(arg);
  const uintptr_t ip = _Unwind_GetIP(ctx);
  if (ip == 0) return _URC_END_OF_STACK;
  if (s->n == s->max) {
    s->more = true;
    return _URC_END_OF_STACK;
  }
  s->pcs[s->n++] = ip;
  // Native frames below the innermost Python frame are the interpreter's own (not kept): unwinding them,
  // often dozens of frames per Python call, was most of the handler's cost.
  if (ip - 1 >= s->stop_lo && ip - 1 < s->stop_hi) return _URC_END_OF_STACK;
  return _URC_NO_REASON;
}

// Reads that the handler makes of the interpreter's memory are plain loads: the frames belong to the
// interrupted thread itself (its own data stack, consistent between bytecodes) and stay alive while it is
// stopped here, and each frame holds a reference to its code object. A thread interrupted while it pushes or
// pops a frame may show a half-written one, whose pointers can be anything. So each pointer is checked for
// alignment, then the whole object read through it must lie in a readable mapping of the last snapshot of
// /proc/self/maps (device files excluded), else the walk ends. What remains: an object in memory unmapped
// since the snapshot (at most a second old) and reached only through such a torn frame.
template <class T>
T Load(uintptr_t base, uint32_t offset) {
  T v;
  std::memcpy(&v, reinterpret_cast<const void*>(base + offset), sizeof v);
  return v;
}
bool Plausible(uintptr_t p) {
  return p >= 4096 && (p & 7) == 0 && p < (uintptr_t(1) << 47);
}

// The handler's view of the snapshot it pinned.
struct Mapped {
  const MapSnapshot* m = nullptr;
  uint32_t hint = 0;  // the range of the last hit: a frame's neighbours and its code object repeat ranges
  bool Has(uintptr_t p, size_t n) {
    if (!m || !Plausible(p)) return false;
    if (hint < m->n && m->lo[hint] <= p && p + n <= m->hi[hint]) return true;
    // The last range starting at or below p.
    uint32_t a = 0, b = m->n;
    while (a < b) {
      const uint32_t mid = (a + b) / 2;
      if (m->lo[mid] <= p)
        a = mid + 1;
      else
        b = mid;
    }
    if (a == 0 || p + n > m->hi[a - 1]) return false;
    hint = a - 1;
    return true;
  }
};

// A snapshot of the mappings pinned for one handler (see Mapped): counted in, then still the current one, so
// the sampler does not refill it meanwhile.
struct PinnedMaps : Mapped {
  State& s;
  int mi;
  explicit PinnedMaps(State& state) : s(state), mi(state.maps_current.load()) {
    if (mi < 0) return;
    s.maps_readers[mi].fetch_add(1);
    if (s.maps_current.load() == mi)
      m = s.maps[mi];
    else
      s.maps_readers[mi].fetch_sub(1);
  }
  ~PinnedMaps() {
    if (m) s.maps_readers[mi].fetch_sub(1);
  }
  PinnedMaps(const PinnedMaps&) = delete;
  PinnedMaps& operator=(const PinnedMaps&) = delete;
  // The end of the readable range holding p (its thread's stack, for an interrupted rsp); 0: not in the
  // snapshot (a thread newer than it: the sampler reads the mappings again soon).
  uintptr_t EndOfRange(uintptr_t p) {
    if (Has(p, 8)) return m->hi[hint];
    s.maps_miss.store(true, std::memory_order_relaxed);
    return 0;
  }
};

// ---- the fault guard
// The handler reads memory the interrupted thread may be changing: a Python frame chain caught mid-push or
// mid-pop can point into a data-stack chunk the interpreter has just unmapped, which the mappings snapshot
// (up to a second old) still lists. Such a read faulted and, SIGSEGV being blocked in the handler, killed the
// process: a PyTorch training loop sampled for 45-250 s on the H200 host died that way, never the same run
// without sampling. Now the handler's reads run under a guard: SIGSEGV/SIGBUS are not blocked in it, and a
// fault while the guard is up jumps back to the handler, which keeps what it had read (counted:
// cpu_samples_read_fault). Any other fault goes to whatever handled it before (the app's, or the default).
//
// While the guard is up: where a fault jumps to (the sampled thread's slot holds it). One pointer of
// initial-exec TLS, not the 200-byte jump buffer itself: the injection is dlopen'ed, and its initial-exec TLS
// comes out of glibc's small static surplus, which other libraries need too (the handler cannot use the
// general TLS model: its first access in a thread may allocate).
__thread sigjmp_buf* volatile t_guard __attribute__((tls_model("initial-exec"))) = nullptr;
struct sigaction g_prev_fault[2];  // SIGSEGV, SIGBUS: what handled them before the sampler's guard

void OnFault(int sig, siginfo_t* info, void* uc) {
  if (sigjmp_buf* to = t_guard) {
    t_guard = nullptr;
    siglongjmp(*to, 1);
  }
  const struct sigaction& prev = g_prev_fault[sig == SIGBUS ? 1 : 0];
  if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction) {
    prev.sa_sigaction(sig, info, uc);
    return;
  }
  if (!(prev.sa_flags & SA_SIGINFO) && prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
    prev.sa_handler(sig);
    return;
  }
  // Nobody else handles it: the default action, which the faulting instruction meets again on return.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigaction(sig, &dfl, nullptr);
}

// Installs OnFault for SIGSEGV and SIGBUS unless it is already there, keeping what was there to chain to
// (an app that installs its own later is found by the sampler thread's next check and chained the same way).
void EnsureFaultGuard() {
  for (int i = 0; i < 2; ++i) {
    const int sig = i == 0 ? SIGSEGV : SIGBUS;
    struct sigaction cur {};
    if (sigaction(sig, nullptr, &cur) != 0) continue;
    if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == OnFault) continue;
    g_prev_fault[i] = cur;
    struct sigaction sa {};
    sa.sa_sigaction = OnFault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;  // a stack overflow's fault needs the app's alternate stack
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
  }
}

// libgcc: unwinds from here, through the handler and the kernel's signal trampoline, to the interrupted
// address and on; every frame's FDE is searched for again.
int UnwindLibgcc(State& s, const ucontext_t* uc, uintptr_t stop_lo, uintptr_t stop_hi, uint64_t* out,
                 uint8_t* flags) {
  uint64_t pcs[kMaxNative + 8];
  UnwindState u{pcs, 0, kMaxNative + 8, false, stop_lo, stop_hi};
  // Not under the guard: libgcc takes the loader's lock to find a frame's unwind info, and jumping out of it
  // would leave that lock held.
  sigjmp_buf* const guarded = t_guard;
  t_guard = nullptr;
  _Unwind_Backtrace(UnwindOne, &u);
  t_guard = guarded;
  const uint64_t rip = uint64_t(uc->uc_mcontext.gregs[REG_RIP]);
  int first = -1;
  for (int i = 0; i < u.n; ++i)
    if (pcs[i] == rip) {
      first = i;
      break;
    }
  if (first < 0) {  // the unwinder could not cross the signal frame: the interrupted address alone
    out[0] = rip;
    *flags |= kSampleUnwindFailed;
    s.unwind_failed.fetch_add(1, std::memory_order_relaxed);
    return 1;
  }
  const int nn = std::min(u.n - first, kMaxNative);
  for (int i = 0; i < nn; ++i) out[i] = pcs[first + i];
  if (u.more || u.n - first > kMaxNative) {
    *flags |= kSampleTruncated;
    s.truncated.fetch_add(1, std::memory_order_relaxed);
  }
  return nn;
}

// The cached unwinder (cfi_unwind.h), from the interrupted frame's registers: the handler's own frames and
// the signal trampoline are never unwound. -1: a frame needs rules it does not follow (the caller unwinds
// the sample with libgcc).
int UnwindCached(State& s, Slot& slot, PinnedMaps& maps, const ucontext_t* uc, uintptr_t stop_lo,
                 uintptr_t stop_hi, uint64_t* out, uint8_t* flags) {
  const greg_t* r = uc->uc_mcontext.gregs;
  // Stack slots are read only below the end of the mapping that holds the interrupted rsp: a frame rule that
  // leads past the thread's stack (an outermost frame not marked so) ends the unwind instead of faulting.
  const uintptr_t stack_end = maps.EndOfRange(uintptr_t(r[REG_RSP]));
  const UnwindResult res = UnwindFromContext(
      s.find_object, *slot.rules, s.modules_generation.load(std::memory_order_relaxed), uintptr_t(r[REG_RIP]),
      uintptr_t(r[REG_RSP]), uintptr_t(r[REG_RBP]), stack_end, stop_lo, stop_hi, out, kMaxNative);
  if (!stack_end) s.stack_unbounded.fetch_add(1, std::memory_order_relaxed);
  if (res.rules_read) s.rules_read.fetch_add(uint64_t(res.rules_read), std::memory_order_relaxed);
  if (res.complex) {
    // Cut here rather than handed to libgcc as before: libgcc's unwinder cannot run under the fault guard
    // (it may hold the loader's or its own lock when a read faults), and with it the handler still killed one
    // in three long sampled PyTorch runs on the H200 host. 0.6-1.8% of samples meet such a frame
    // (docs/benchmarks.md); they keep the frames below it.
    const int why = res.why < FrameRule::kWhyCount ? int(res.why) : int(FrameRule::kWhyNone);
    s.fallback_why[why].fetch_add(1, std::memory_order_relaxed);
    s.fallback_pc[why].store(res.complex_pc, std::memory_order_relaxed);
    s.unwind_fallbacks.fetch_add(1, std::memory_order_relaxed);
    *flags |= kSampleTruncated;
  }
  s.cached_frames.fetch_add(uint64_t(res.frames), std::memory_order_relaxed);
  if (res.not_unwound) {
    *flags |= kSampleUnwindFailed;
    s.unwind_failed.fetch_add(1, std::memory_order_relaxed);
  }
  if (res.truncated) {
    *flags |= kSampleTruncated;
    s.truncated.fetch_add(1, std::memory_order_relaxed);
  }
  return res.frames;
}

int UnwindNative(State& s, Slot& slot, PinnedMaps& maps, void* uc, uintptr_t stop_lo, uintptr_t stop_hi,
                 uint64_t* out, uint8_t* flags) {
  const auto* context = static_cast<const ucontext_t*>(uc);
  if (s.cached_unwind && slot.rules)
    return UnwindCached(s, slot, maps, context, stop_lo, stop_hi, out, flags);
  return UnwindLibgcc(s, context, stop_lo, stop_hi, out, flags);  // GTRACE_SAMPLE_UNWIND=libgcc, or no
                                                                  // _dl_find_object (glibc < 2.35)
}

__thread uint32_t t_tid __attribute__((tls_model("initial-exec"))) = 0;

// Quarter-octave buckets of a cost in ns: bucket 4k + q holds [(4 + q) 2^(k-2), (5 + q) 2^(k-2)) (k >= 2;
// costs under 4 ns in bucket 0..3 by value), so a bucket's middle is within 12% of any cost in it.
int CostBucket(uint64_t ns) {
  if (ns < 4) return int(ns);
  const int k = 63 - __builtin_clzll(ns);
  return std::min(State::kCostBuckets - 1, 4 * k + int((ns >> (k - 2)) & 3));
}
double CostBucketMiddleNs(int b) {
  if (b < 4) return b;
  return std::ldexp(4.5 + (b & 3), b / 4 - 2);
}

// A file name's hash for PackPythonLine, 8 bytes a step (a byte at a time cost ~2 us a sample on deep PyTorch
// stacks). The handler hashes the string in place; the sampler thread and the drain hash a copy, to check
// that a code object read later is still the one sampled.
uint32_t HashFileName(const char* bytes, int64_t length) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ uint64_t(length);
  int64_t i = 0;
  for (; i + 8 <= length; i += 8) {
    uint64_t word;
    std::memcpy(&word, bytes + i, 8);
    h = (h ^ word) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  for (; i < length; ++i) h = (h ^ uint8_t(bytes[i])) * 0x100000001b3ull;
  return (uint32_t(h ^ (h >> 32)) | 1) & 0xfffff;  // odd: never 0 ("not hashed") or kFileHashGone
}
constexpr uint32_t kFileHashGone = 2;
constexpr int64_t kMaxHashedFileName = 512;  // in the handler: longer names are hashed by the sampler thread

// A code object's file name hashed in the handler, under the fault guard; 0 for a name that is not compact
// ASCII or not in the mappings snapshot (the sampler thread hashes those: PeekPython). Never ends a walk.
uint32_t FileNameHash(Mapped& mem, const PyLayout& L, uintptr_t str) {
  if (!mem.Has(str, L.ascii_size)) return 0;
  const int64_t length = Load<int64_t>(str, kStrLength);
  if (!StrCompactAscii(Load<uint32_t>(str, kStrState)) || length <= 0 || length > kMaxHashedFileName ||
      !mem.Has(str + L.ascii_size, size_t(length)))
    return 0;
  return HashFileName(reinterpret_cast<const char*>(str + L.ascii_size), length);
}

// The Python frames of the thread whose state is `ts` into `out` (two words a frame, innermost first): the
// chain of interpreter frames, each pointer checked against the mappings snapshot first. Runs in the handler,
// under the fault guard.
int WalkPython(State& st, Mapped& mem, uintptr_t ts, uint64_t* out, uint8_t* flags_out) {
  State* s = &st;
  uint8_t flags = *flags_out;
  int np = 0;
  const PyLayout* L = s->py;
  if (!L) {
    flags |= kSampleNoPython;
    s->py_unsupported.fetch_add(1, std::memory_order_relaxed);
  } else {
    const uint32_t frame_size = std::max({L->frame_code, L->frame_previous, L->frame_prev_instr}) + 8;
    const uint32_t code_size = std::max<uint32_t>({16, L->code_firstlineno + 4, L->code_filename + 8});
    // bad: a pointer no object can have (misaligned, wrong type: a torn frame); unmapped: outside the
    // snapshot, perhaps mapped since it was taken (a new arena).
    bool bad = false, unmapped = false;
    const auto readable = [&](uintptr_t p, size_t n) {
      if (!Plausible(p)) {
        bad = true;
        return false;
      }
      if (mem.Has(p, n)) return true;
      unmapped = true;
      return false;
    };
    const uintptr_t cframe = readable(ts, L->tstate_cframe + 8) ? Load<uintptr_t>(ts, L->tstate_cframe) : 0;
    uintptr_t f = 0;
    if (L->cframe_current == kNoCFrame)
      f = cframe;
    else if (cframe && readable(cframe, L->cframe_current + 8))
      f = Load<uintptr_t>(cframe, L->cframe_current);
    for (int guard = 0; f && guard < 1024; ++guard) {
      if (!readable(f, frame_size)) break;
      const uintptr_t code = Load<uintptr_t>(f, L->frame_code) & ~L->code_tag_bits;
      const int owner = Load<char>(f, L->frame_owner);
      if (L->owner_shim < 0 || owner < L->owner_shim) {
        if (!readable(code, code_size)) break;
        if (Load<uintptr_t>(code, 8) != s->py_code_type) {
          bad = true;
          break;
        }
        if (np == kMaxPython) {
          flags |= kSampleTruncated;
          break;
        }
        const uintptr_t instr = Load<uintptr_t>(f, L->frame_prev_instr);
        const int64_t index = (int64_t(instr) - int64_t(code + L->code_adaptive)) / 2;
        const uint32_t first_line = Load<uint32_t>(code, L->code_firstlineno);
        const uint32_t file_hash = FileNameHash(mem, *L, Load<uintptr_t>(code, L->code_filename));
        out[2 * np] = code;
        out[2 * np + 1] = PackPythonLine(file_hash, first_line, index);
        ++np;
      }
      f = Load<uintptr_t>(f, L->frame_previous);
    }
    if (unmapped) {
      s->maps_miss.store(true, std::memory_order_relaxed);  // read them again soon
      s->maps_misses.fetch_add(1, std::memory_order_relaxed);
      flags |= kSampleNoPython;
    } else if (bad) {
      flags |= kSampleNoPython;
      s->py_unreadable.fetch_add(1, std::memory_order_relaxed);
    } else if (np > 0) {
      flags |= kSamplePython;
    }
  }
  *flags_out = flags;
  return np;
}

void OnSigprof(int, siginfo_t*, void* uc_void) {
  State* s = g;
  if (!s) return;
  const int saved_errno = errno;
  if (t_tid == 0) t_tid = static_cast<uint32_t>(syscall(SYS_gettid));
  Slot* slot = nullptr;
  for (Slot& x : s->slots)
    if (x.tid.load(std::memory_order_relaxed) == t_tid) {
      slot = &x;
      break;
    }
  if (!slot || slot->token.load(std::memory_order_acquire) != 1 || !slot->ring) {
    errno = saved_errno;
    return;  // not ours to record (a stray SIGPROF, or after Stop)
  }
  const int64_t t_start = Now();
  uint64_t e[kMaxEntryWords];
  // Native frames, up to the interpreter's own where this thread runs Python.
  const bool py_ready = s->py_ready.load(std::memory_order_acquire);
  const uintptr_t ts = py_ready ? reinterpret_cast<uintptr_t>(s->py_this_tstate()) : 0;
  const uintptr_t stop_lo = ts && s->py ? s->py_text_lo : 0, stop_hi = ts && s->py ? s->py_text_hi : 0;
  // One snapshot of the mappings for this sample: the unwinder's stack bound and the Python walk's checks.
  PinnedMaps mem(*s);
  // Under the fault guard (above): what a fault leaves is what the volatile copies hold.
  volatile int nn_done = 0, np_done = 0;
  volatile uint8_t flags_done = 0;
  volatile int64_t t_unwound_v = t_start;
  if (sigsetjmp(slot->guard_jmp, 0) == 0) {
    t_guard = &slot->guard_jmp;
    uint8_t f = 0;
    const auto fault_test = [s] {
      if (s->options.fault_test_address)
        (void)*reinterpret_cast<const volatile uint64_t*>(s->options.fault_test_address);
    };
    if (s->options.fault_test_before_unwind) fault_test();
    const int nn = UnwindNative(*s, *slot, mem, uc_void, stop_lo, stop_hi, e + 2, &f);
    nn_done = nn;
    flags_done = f;
    if (!s->options.fault_test_before_unwind) fault_test();
    t_unwound_v = Now();
    // Python: this thread's state, then the chain of interpreter frames.
    const int np = py_ready && ts ? WalkPython(*s, mem, ts, e + 2 + nn, &f) : 0;
    np_done = np;
    flags_done = f;
    t_guard = nullptr;
  } else {
    s->read_faults.fetch_add(1, std::memory_order_relaxed);
    flags_done = uint8_t(flags_done | (nn_done ? kSampleNoPython : kSampleUnwindFailed));
    np_done = 0;
    if (nn_done == 0) {  // the fault was in the native unwind: the interrupted address, as an unwind failure
      e[2] = uint64_t(static_cast<const ucontext_t*>(uc_void)->uc_mcontext.gregs[REG_RIP]);
      nn_done = 1;
    }
  }
  const int nn = nn_done, np = np_done;
  const uint8_t flags = flags_done;
  const int64_t t_unwound = t_unwound_v;
  const int64_t t_walked = Now();
  e[0] = (kMagic << 32) | (uint64_t(flags) << 16) | (uint64_t(np) << 8) | uint64_t(nn);
  e[1] = uint64_t(t_start);
  const size_t words = 2 + size_t(nn) + 2 * size_t(np);
  const uint64_t head = slot->head.load(std::memory_order_relaxed);
  if (head + words - slot->tail.load(std::memory_order_acquire) > kRingWords) {
    s->ring_full.fetch_add(1, std::memory_order_relaxed);
  } else {
    for (size_t i = 0; i < words; ++i) slot->ring[(head + i) % kRingWords] = e[i];
    slot->head.store(head + words, std::memory_order_release);
  }
  const int64_t t_written = Now();
  timespec cpu;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0)
    slot->cpu_after_sample.store(int64_t(cpu.tv_sec) * 1000000000 + cpu.tv_nsec, std::memory_order_relaxed);
  const int64_t t_end = Now();
  const int64_t sent = slot->signal_sent_ns.load(std::memory_order_relaxed);
  s->handled.fetch_add(1, std::memory_order_relaxed);
  s->handler_ns.fetch_add(uint64_t(t_end - t_start), std::memory_order_relaxed);
  s->unwind_ns.fetch_add(uint64_t(t_unwound - t_start), std::memory_order_relaxed);
  s->python_ns.fetch_add(uint64_t(t_walked - t_unwound), std::memory_order_relaxed);
  s->cpu_clock_ns.fetch_add(uint64_t(t_end - t_written), std::memory_order_relaxed);
  if (sent > 0 && t_start > sent)
    s->delivery_ns.fetch_add(uint64_t(t_start - sent), std::memory_order_relaxed);
  if (sent > 0 && t_end > sent)
    s->cost_buckets[CostBucket(uint64_t(t_end - sent))].fetch_add(1, std::memory_order_relaxed);
  slot->token.store(0, std::memory_order_release);
  errno = saved_errno;
}

// ---- the sampler thread
// --------------------------------------------------------------------------------------
bool ReadSelf(uintptr_t addr, void* out, size_t n);  // drain section

void CheckPython(State& s) {
  // The interpreter's symbols (the python3 executable exports them; an embedding app loads libpython).
  auto version = reinterpret_cast<const char* (*)()>(dlsym(RTLD_DEFAULT, "Py_GetVersion"));
  auto initialized = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "Py_IsInitialized"));
  auto tstate = reinterpret_cast<void* (*)()>(dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState"));
  void* code_type = dlsym(RTLD_DEFAULT, "PyCode_Type");
  if (!version || !initialized || !tstate || !code_type) return;
  // Before Py_Initialize the thread-state key does not exist yet: reading it would return another key's
  // value.
  if (!initialized()) return;
  int major = 0, minor = -1;
  if (std::sscanf(version(), "%d.%d", &major, &minor) != 2 || major != 3) minor = -1;
  s.stats.python_minor = minor;
  // A free-threaded build (3.13t: "... experimental free-threading build") lays its objects out otherwise.
  const bool free_threaded = std::strstr(version(), "free-threading") != nullptr;
  s.stats.python_free_threaded = free_threaded;
  for (const PyLayout& L : kLayouts)
    if (L.minor == minor && !free_threaded) s.py = &L;
  // A build whose layout differs from its version's (patched, or configured otherwise) says so in its own
  // offsets: its frames are not read rather than read at the wrong places.
  const size_t debug_size = DebugOffsetsSize(minor);
  const uintptr_t runtime = reinterpret_cast<uintptr_t>(dlsym(RTLD_DEFAULT, "_PyRuntime"));
  if (s.py && debug_size && runtime) {
    std::vector<uint8_t> debug(debug_size);
    const char* why = ReadSelf(runtime, debug.data(), debug.size())
                          ? CheckDebugOffsets(minor, debug.data(), debug.size())
                          : "_PyRuntime unreadable";
    if (*why) s.py = nullptr, s.stats.python_layout_mismatch = why;
  }
  s.stats.python_supported = s.py != nullptr;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(version), &info)) {
    s.py_module_base = uintptr_t(info.dli_fbase);
    struct Range {
      uintptr_t inside, lo = 0, hi = 0;  // the executable segment holding Py_GetVersion
    } r{reinterpret_cast<uintptr_t>(version)};
    dl_iterate_phdr(
        [](dl_phdr_info* i, size_t, void* arg) {
          auto* r = static_cast<Range*>(arg);
          for (int k = 0; k < i->dlpi_phnum; ++k) {
            const auto& ph = i->dlpi_phdr[k];
            if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
            const uintptr_t lo = i->dlpi_addr + ph.p_vaddr, hi = lo + ph.p_memsz;
            if (lo <= r->inside && r->inside < hi) r->lo = lo, r->hi = hi;
          }
          return 0;
        },
        &r);
    s.py_text_lo = r.lo, s.py_text_hi = r.hi;
  }
  s.py_this_tstate = tstate;
  s.py_code_type = reinterpret_cast<uintptr_t>(code_type);
  s.py_ready.store(true, std::memory_order_release);
  s.py_checked.store(true);
}

int64_t ThreadCpuNs(uint32_t tid) {
  // The kernel's per-thread CPU clock id (MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)).
  const clockid_t id = clockid_t((~tid) << 3) | 2 | 4;
  timespec ts;
  if (clock_gettime(id, &ts) != 0) return -1;
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void Rescan(State& s) {
  // Modules loaded or unloaded since the last scan: cached unwind rules may describe code no longer there.
  struct Counts {
    unsigned long long adds = 0, subs = 0;
  } counts;
  dl_iterate_phdr(
      [](dl_phdr_info* i, size_t size, void* arg) {
        if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof i->dlpi_subs) {
          static_cast<Counts*>(arg)->adds = i->dlpi_adds;
          static_cast<Counts*>(arg)->subs = i->dlpi_subs;
        }
        return 1;  // the counts are the same in every entry: the first is enough
      },
      &counts);
  if (counts.adds != s.modules_adds || counts.subs != s.modules_subs) {
    s.modules_adds = counts.adds, s.modules_subs = counts.subs;
    s.modules_generation.fetch_add(1, std::memory_order_relaxed);
  }
  std::vector<uint32_t> live;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') live.push_back(uint32_t(std::strtoul(e->d_name, nullptr, 10)));
    closedir(d);
  }
  std::sort(live.begin(), live.end());
  for (Slot& x : s.slots) {
    const uint32_t tid = x.tid.load(std::memory_order_relaxed);
    if (tid && !x.exited && !std::binary_search(live.begin(), live.end(), tid)) {
      x.exited = true;
      ++s.stats.threads_exited;
    }
  }
  for (uint32_t tid : live) {
    if (tid == s.sampler_tid || tid == 0) continue;
    bool known = false;
    for (Slot& x : s.slots)
      if (x.tid.load(std::memory_order_relaxed) == tid && !x.exited) known = true;
    if (known) continue;
    Slot* free_slot = nullptr;
    for (Slot& x : s.slots)
      if (x.tid.load(std::memory_order_relaxed) == 0) {
        free_slot = &x;
        break;
      }
    if (!free_slot) {
      ++s.stats.too_many_threads;
      continue;
    }
    if (!free_slot->ring) {
      void* p = mmap(nullptr, kRingWords * 8, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) return;
      free_slot->ring = static_cast<uint64_t*>(p);
    }
    if (!free_slot->rules) {  // zeroed pages: an empty cache (libgcc unwinds that thread if this fails)
      void* p = mmap(nullptr, sizeof(RuleCache), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p != MAP_FAILED) free_slot->rules = static_cast<RuleCache*>(p);
    }
    free_slot->cpu_after_sample.store(-1);
    free_slot->sampled_once = false;
    free_slot->confirmed = false;
    free_slot->exited = false;
    free_slot->token.store(0);
    free_slot->peeked.store(0);
    free_slot->tid.store(tid, std::memory_order_release);
    ++s.stats.threads_seen;
  }
}

void Tick(State& s, int64_t now) {
  const pid_t pid = getpid();
  for (Slot& x : s.slots) {
    const uint32_t tid = x.tid.load(std::memory_order_relaxed);
    if (!tid || x.exited) continue;
    if (x.token.load(std::memory_order_acquire) != 0) {
      // The last signal is not handled yet. After a second, assume it never will be (the thread is stopped
      // or gone) and take the ring back.
      if (now - x.token_since_ns > 1000000000) {
        ++s.stats.lost_in_flight;
        x.token.store(0, std::memory_order_release);
      } else {
        ++s.stats.busy_skips;
      }
      continue;
    }
    // A thread that has used (almost) no CPU since its last sample is where that sample found it: recorded
    // again without waking it. "Almost": returning from the handler and restarting the interrupted wait cost
    // the thread a few microseconds. Such a thread is never interrupted again, however long it stays blocked:
    // a wait interrupted by a signal returns EINTR, and code that retries it with its whole timeout (NCCL's
    // proxy service thread polls 500 ms at a time and checks its stop flag only in between) never times out
    // if the signals come faster than the timeout. Re-interrupting idle threads every 100 ms made a DDP job
    // hang in ncclCommDestroy at exit. Each signal to a thread now needs kIdleCpuNs of its own CPU since the
    // last one, which a blocked thread cannot use, with one exception: a thread that ran at all since its
    // last sample (less than kIdleCpuNs: it may have gone from work into a wait) is interrupted once more to
    // see where it stopped, then left alone. A blocked thread gets at most these two signals.
    const int64_t cpu = ThreadCpuNs(tid);
    const int64_t after = x.cpu_after_sample.load(std::memory_order_relaxed);
    if (cpu < 0) ++s.stats.cpu_clock_unreadable;
    const bool idle = cpu >= 0 && after >= 0 && x.sampled_once && cpu - after < kIdleCpuNs;
    const bool confirm = idle && cpu > after && !x.confirmed;
    if (idle && !confirm) {
      // Written here, as the ring's producer (the token is free).
      const uint64_t head = x.head.load(std::memory_order_relaxed);
      if (head + 2 - x.tail.load(std::memory_order_acquire) > kRingWords) {
        s.ring_full.fetch_add(1, std::memory_order_relaxed);
      } else {
        x.ring[head % kRingWords] = (kMagic << 32) | (uint64_t(kSampleIdleRepeat) << 16);
        x.ring[(head + 1) % kRingWords] = uint64_t(now);
        x.head.store(head + 2, std::memory_order_release);
      }
      continue;
    }
    x.confirmed = confirm;
    x.signal_sent_ns.store(Now(), std::memory_order_relaxed);
    x.token.store(1, std::memory_order_release);
    x.token_since_ns = now;
    if (syscall(SYS_tgkill, pid, tid, SIGPROF) != 0) {
      x.token.store(0, std::memory_order_release);
      if (errno == ESRCH && !x.exited) {  // exited between two scans
        x.exited = true;
        ++s.stats.threads_exited;
      }
      continue;
    }
    x.sampled_once = true;
  }
}

}  // namespace

bool MapsLineReadable(const char* line, uintptr_t* lo, uintptr_t* hi) {
  unsigned long a = 0, b = 0;
  char perms[8] = {0};
  int path_at = 0;
  if (std::sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &a, &b, perms, &path_at) < 3 || perms[0] != 'r')
    return false;
  // Device memory (the GPU driver's mappings) may fault or have side effects when read.
  const char* path = path_at > 0 ? line + path_at : "";
  if (std::strncmp(path, "/dev/", 5) == 0 && std::strncmp(path, "/dev/shm/", 9) != 0 &&
      std::strncmp(path, "/dev/zero", 9) != 0)
    return false;
  *lo = a, *hi = b;
  return a < b;
}

namespace {

void RefreshMaps(State& s) {
  const int cur = s.maps_current.load();
  const int next = cur == 0 ? 1 : 0;
  if (!s.maps[next]) {
    void* p = mmap(nullptr, sizeof(MapSnapshot), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    s.maps[next] = new (p) MapSnapshot();
  }
  // A handler still reading the buffer: try again on the next tick (handlers take microseconds).
  if (s.maps_readers[next].load() != 0) return;
  FILE* f = std::fopen("/proc/self/maps", "re");
  if (!f) return;
  MapSnapshot& m = *s.maps[next];
  m.n = 0;
  char line[512];
  while (std::fgets(line, sizeof line, f)) {
    uintptr_t lo = 0, hi = 0;
    if (!MapsLineReadable(line, &lo, &hi)) continue;
    if (m.n > 0 && m.hi[m.n - 1] == lo) {
      m.hi[m.n - 1] = hi;
    } else if (m.n < kMaxRanges) {
      m.lo[m.n] = lo, m.hi[m.n] = hi;
      ++m.n;
    }
  }
  std::fclose(f);
  s.maps_current.store(next);
  ++s.stats.maps_reads;
}

// The median of the costs counted in `n` (State::cost_buckets' layout), at its bucket's middle. The median,
// not the mean: a sample whose thread waited for a CPU (a loaded machine) took long to deliver but cost the
// thread nothing, and one such wait would move a mean; under gVisor every delivery is slow (median 35-60 us).
double MedianCostNs(const uint64_t* n) {
  uint64_t total = 0;
  for (int b = 0; b < State::kCostBuckets; ++b) total += n[b];
  uint64_t below = 0;
  for (int b = 0; b < State::kCostBuckets; ++b) {
    below += n[b];
    if (below * 2 >= total) return CostBucketMiddleNs(b);
  }
  return 0;
}

}  // namespace

int64_t GovernedPeriodNs(int64_t current, int64_t requested, double cost_ns, double max_overhead) {
  const int64_t slowest = std::max<int64_t>(requested, 1000000000 / kMinGovernedHz);
  if (max_overhead <= 0) return requested;
  const double want = cost_ns / max_overhead;
  const int64_t target = want >= double(slowest) ? slowest : std::max(requested, int64_t(want));
  // Slower at once; faster by a quarter a window, so that one window of cheap samples (the busy threads
  // blocked for a while) does not bring back at once a rate that cost too much.
  if (target >= current) return target;
  const int64_t next = std::max(target, current - (current - requested + 3) / 4);
  return next - requested < requested / 64 ? requested : next;  // within 1.6%: the rate asked for
}

namespace {

bool PythonFrameText(State& s, uint64_t code, uint64_t lines, std::string* text);  // drain section
uint32_t LiveFileHash(State& s, uint64_t code);                                    // drain section

// The Python frames of the samples written since the last look, named while their code objects are alive
// (most are: each was running when sampled). Entries up to `head` are whole and stay put until the drain
// consumes them, new ones come only from handlers this thread signalled, and the drain reads only up to
// `peeked`: the words written here race nothing.
void PeekPython(State& s) {
  for (Slot& x : s.slots) {
    if (!x.tid.load(std::memory_order_acquire) || !x.ring) continue;
    const uint64_t head = x.head.load(std::memory_order_acquire);
    const uint64_t tail = x.tail.load(std::memory_order_acquire);
    uint64_t at = x.peeked.load(std::memory_order_relaxed);
    if (at < tail || at > head) at = tail;  // the slot was freed and taken again
    EntryHeader e;
    for (; s.py && at + 2 <= head; at += e.Words()) {
      if (!ReadHeader(x.ring[at % kRingWords], &e)) {
        at = head;
        break;
      }
      if (e.flags & kSampleIdleRepeat) continue;
      for (int i = 0; i < e.python; ++i) {
        const uint64_t code = x.ring[e.PythonAt(at, i) % kRingWords];
        uint64_t& lines = x.ring[(e.PythonAt(at, i) + 1) % kRingWords];
        // The handler hashes only compact ASCII names found in its snapshot of the mappings: the others are
        // hashed here, else code objects that took a freed one's address and first line would share its name.
        if (!PythonFileHash(lines)) lines |= uint64_t(LiveFileHash(s, code)) << 44;
        if (!s.early_seen.insert({code, lines}).second) continue;
        std::string text;
        if (!PythonFrameText(s, code, lines, &text)) continue;
        std::lock_guard<std::mutex> lock(s.early_mu);
        s.early_names.emplace(State::CodeKey{code, lines}, std::move(text));
      }
    }
    x.peeked.store(head, std::memory_order_release);  // entries are whole: the walk ends at head
  }
}

void SamplerMain(State* s) {
  s->sampler_tid = static_cast<uint32_t>(syscall(SYS_gettid));
  if (s->options.on_sampler_thread) s->options.on_sampler_thread();
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);  // the app's signals go to its own threads
  const int64_t requested = 1000000000 / int64_t(s->options.hz);
  int64_t period = requested;
  // The governor's window: the cost counts when it opened, and when.
  uint64_t seen[State::kCostBuckets];
  for (int b = 0; b < State::kCostBuckets; ++b) seen[b] = s->cost_buckets[b].load();
  int64_t window_start = Now();
  double not_taken = 0;
  timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  const int64_t alternate_ns = int64_t(s->options.alternate_ms) * 1000000;
  if (alternate_ns > 0) {
    s->stats.alternate_start_ns = int64_t(next.tv_sec) * 1000000000 + next.tv_nsec;
    s->stats.alternate_ms = s->options.alternate_ms;
  }
  int64_t next_scan = 0;
  while (!s->stop.load()) {
    const int64_t now = Now();
    // Every 250 ms to 1 s (32 signalled samples, or a second with fewer), the rate that keeps the
    // samples' cost under the budget. Fewer than 8 samples in a second say nothing of the cost (the threads
    // are blocked, which costs no signal): the rate goes back toward the requested one.
    if (s->options.max_overhead > 0 && now - window_start >= 250000000) {
      uint64_t d[State::kCostBuckets], n = 0;
      for (int b = 0; b < State::kCostBuckets; ++b) {
        const uint64_t c = s->cost_buckets[b].load(std::memory_order_relaxed);
        d[b] = c - seen[b];
        n += d[b];
      }
      if (n >= 32 || now - window_start >= 1000000000) {
        const double cost = n >= 8 ? MedianCostNs(d) : 0;
        const int64_t before = period;
        period = GovernedPeriodNs(period, requested, cost, s->options.max_overhead);
        const auto hz = uint32_t(1000000000 / period);
        if (period > before && hz < s->stats.rate_min_hz) {
          s->stats.rate_min_hz = hz;
          s->stats.sample_cost_ns = uint64_t(cost);
        }
        s->stats.rate_final_hz = hz;
        for (int b = 0; b < State::kCostBuckets; ++b) seen[b] += d[b];
        window_start = now;
      }
    }
    if (now >= next_scan) {
      if (!s->py_checked.load()) CheckPython(*s);
      Rescan(*s);
      EnsureFaultGuard();  // an app that installed its own SIGSEGV handler since: chained behind the guard
      next_scan = now + 100000000;
    }
    // The mappings, for the Python walk and the cached unwinder's stack bound: every second, and 50 ms after
    // a handler missed them.
    if ((s->py || s->cached_unwind) &&
        (s->maps_current.load() < 0 || now - s->maps_read_ns >= 1000000000 ||
         (now - s->maps_read_ns >= 50000000 && s->maps_miss.exchange(false)))) {
      RefreshMaps(*s);
      s->maps_read_ns = now;
    }
    bool sampling_window = true;
    if (alternate_ns > 0) {
      timespec mono;
      clock_gettime(CLOCK_MONOTONIC, &mono);
      const int64_t since = int64_t(mono.tv_sec) * 1000000000 + mono.tv_nsec - s->stats.alternate_start_ns;
      sampling_window = (since / alternate_ns) % 2 == 0;
    }
    PeekPython(*s);  // the last tick's samples, before this tick's signals add more
    if (sampling_window) Tick(*s, now);
    // And again once the handlers just signalled are likely done (~10-50 us on a running thread): code run
    // once is freed when it returns, and a tick later was too late for its last sample in ~1 in 20 pieces
    // of 30 ms on a loaded machine.
    if (sampling_window && s->py) {
      const timespec handlers_done{0, 100000};
      nanosleep(&handlers_done, nullptr);
      PeekPython(*s);
    }
    if (period > requested) {
      s->stats.rate_lowered_ns += uint64_t(period);
      not_taken += double(period) / double(requested) - 1;
      s->stats.ticks_not_taken = uint64_t(not_taken);
    }
    next.tv_nsec += period;
    while (next.tv_nsec >= 1000000000) next.tv_nsec -= 1000000000, ++next.tv_sec;
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nullptr);
    // Fell behind (the machine was busy): skip the lost ticks rather than burst.
    timespec real;
    clock_gettime(CLOCK_MONOTONIC, &real);
    if (real.tv_sec > next.tv_sec + 1) next = real;
  }
  PeekPython(*s);  // the last tick's samples
  timespec cpu;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0)
    s->stats.sampler_cpu_ns = uint64_t(cpu.tv_sec) * 1000000000 + uint64_t(cpu.tv_nsec);
}

// ---- drain: symbols, frames, records
// ---------------------------------------------------------------------------
bool ReadSelf(uintptr_t addr, void* out, size_t n) {
  iovec local{out, n}, remote{reinterpret_cast<void*>(addr), n};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == ssize_t(n);
}

// A str object's text as UTF-8, false where it is not one (or no longer).
bool ReadPyString(const PyLayout& L, uintptr_t obj, std::string* out) {
  uint32_t state = 0;
  int64_t length = 0;
  if (!Plausible(obj) || !ReadSelf(obj + kStrState, &state, 4) || !ReadSelf(obj + kStrLength, &length, 8) ||
      length < 0 || length > 4096)
    return false;
  const bool compact = (state >> 5) & 1;
  std::string& text = *out;
  text.assign(size_t(length), '\0');
  if (StrCompactAscii(state)) return ReadSelf(obj + L.ascii_size, text.data(), text.size());
  uintptr_t utf8 = 0;
  int64_t utf8_length = 0;
  if (compact && ReadSelf(obj + L.compact_utf8, &utf8, 8) && utf8 &&
      ReadSelf(obj + L.compact_utf8 - 8, &utf8_length, 8) && utf8_length >= 0 && utf8_length <= 4096) {
    text.resize(size_t(utf8_length));
    if (ReadSelf(utf8, text.data(), text.size())) return true;
  }
  // Without the UTF-8 form cached (compile() does not leave one on a file name): the code points after the
  // object, 1, 2 or 4 bytes each as the state's kind says.
  const uint32_t kind = (state >> 2) & 7;
  if (!compact || (kind != 1 && kind != 2 && kind != 4)) return false;
  std::vector<uint8_t> units(size_t(length) * kind);
  if (!ReadSelf(obj + L.compact_size, units.data(), units.size())) return false;
  text.clear();
  for (int64_t i = 0; i < length; ++i) {
    uint32_t c = 0;
    std::memcpy(&c, units.data() + i * kind, kind);  // little-endian
    if (c < 0x80) {
      text += char(c);
    } else if (c < 0x800) {
      text += char(0xc0 | c >> 6), text += char(0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
      text += char(0xe0 | c >> 12), text += char(0x80 | (c >> 6 & 0x3f)), text += char(0x80 | (c & 0x3f));
    } else if (c < 0x110000) {
      text += char(0xf0 | c >> 18), text += char(0x80 | (c >> 12 & 0x3f));
      text += char(0x80 | (c >> 6 & 0x3f)), text += char(0x80 | (c & 0x3f));
    } else {
      return false;  // not a string: the object is gone
    }
  }
  return true;
}
std::string ReadPyString(const PyLayout& L, uintptr_t obj) {
  std::string text;
  return ReadPyString(L, obj, &text) ? text : "?";
}

// Paths inside an environment are shown from the package on: ".../site-packages/torch/x.py" -> "torch/x.py".
std::string ShortPath(const std::string& path) {
  for (const char* marker : {"site-packages/", "dist-packages/"}) {
    const size_t at = path.rfind(marker);
    if (at != std::string::npos) return path.substr(at + std::strlen(marker));
  }
  return path;
}

// The hash of a live code object's file name as PythonFrameText checks it; kFileHashGone where the name
// cannot be read (the object is gone), so that the drain does not name the frame from whatever took its
// place.
uint32_t LiveFileHash(State& s, uint64_t code) {
  uintptr_t filename = 0;
  std::string file;
  if (!ReadSelf(code + s.py->code_filename, &filename, 8) || !ReadPyString(*s.py, filename, &file))
    return kFileHashGone;
  return HashFileName(file.data(), int64_t(file.size()));
}

// The frame's text ("file:function:line") from its code object, false where the object is gone or changed
// (the code object may have been freed since the sample: process_vm_readv cannot fault, and its first line
// and file name's hash, read in the handler, must still match). The drain and the sampler thread (PeekPython)
// both call it.
bool PythonFrameText(State& s, uint64_t code, uint64_t lines, std::string* text) {
  const PyLayout& L = *s.py;
  const int first_line = PythonFirstLine(lines);
  const int64_t index = PythonUnitIndex(lines);
  uint32_t check_line = 0;
  uintptr_t filename = 0, qualname = 0, linetable = 0;
  if (!ReadSelf(code + L.code_firstlineno, &check_line, 4) ||
      int(std::min(check_line, 0xfffffu)) != first_line || first_line == 0xfffff ||
      !ReadSelf(code + L.code_filename, &filename, 8) || !ReadSelf(code + L.code_qualname, &qualname, 8) ||
      !ReadSelf(code + L.code_linetable, &linetable, 8))
    return false;
  // The same address and first line, but another file: a code object allocated where the sampled one was.
  std::string file;
  const uint32_t file_hash = PythonFileHash(lines);
  if (!ReadPyString(L, filename, &file)) {
    if (file_hash) return false;
    file = "?";
  }
  if (file_hash && HashFileName(file.data(), int64_t(file.size())) != file_hash) return false;
  int line = first_line;
  int64_t size = 0;
  if (Plausible(linetable) && ReadSelf(linetable + 16, &size, 8) && size > 0 && size < (1 << 20)) {
    std::vector<uint8_t> table(size_t(size), 0);
    if (ReadSelf(linetable + 32, table.data(), table.size()))
      line = LineFromLocationTable(table.data(), table.size(), first_line, index);
  }
  *text = ShortPath(file) + ":" + ReadPyString(L, qualname) + ":" + std::to_string(line);
  return true;
}

StringId PythonFrame(State& s, TraceWriter& w, uint64_t code, uint64_t lines) {
  auto it = s.python_names.find({code, lines});
  if (it != s.python_names.end()) return it->second;
  std::string text;
  {
    std::lock_guard<std::mutex> lock(s.early_mu);
    auto early = s.early_names.find({code, lines});
    if (early != s.early_names.end()) {
      text = std::move(early->second);
      s.early_names.erase(early);
      s.early_used.fetch_add(1, std::memory_order_relaxed);
    }
  }
  if (text.empty() && !PythonFrameText(s, code, lines, &text)) {
    ++s.stats.python_code_unreadable;
    text = "<unreadable code object>";
  }
  const StringId id = w.Intern(text);
  s.python_names.emplace(State::CodeKey{code, lines}, id);
  return id;
}

StringId NativeFrame(State& s, TraceWriter& w, uint64_t pc, bool leaf, bool* interpreter) {
  // Return addresses point after the call: look up the call itself.
  const uint64_t at = leaf ? pc : pc - 1;
  // Looked up before dladdr: dladdr scans the module's whole symbol table (libtorch has ~10^5 symbols)
  // under the loader's lock, and it ran for every frame of every sample.
  auto it = s.native_names.find(at);
  if (it != s.native_names.end()) {
    *interpreter = it->second.interpreter;
    return it->second.id;
  }
  Dl_info info{};
  const bool found = dladdr(reinterpret_cast<void*>(at), &info) != 0 && info.dli_fname;
  *interpreter = found && s.py_module_base && uintptr_t(info.dli_fbase) == s.py_module_base;
  std::string text;
  if (!found) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(at));
    text = buf;
  } else {
    const char* base = std::strrchr(info.dli_fname, '/');
    text = base ? base + 1 : info.dli_fname;
    if (info.dli_sname) {
      int status = -1;
      char* demangled = abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status);
      std::string name = status == 0 && demangled ? demangled : info.dli_sname;
      std::free(demangled);
      if (name.size() > 200) name = name.substr(0, 197) + "...";
      text += "!" + name;
    } else {  // stripped, or a static function: the offset in the module, never a guessed name
      char buf[32];
      std::snprintf(buf, sizeof buf, "+0x%llx",
                    static_cast<unsigned long long>(at - uintptr_t(info.dli_fbase)));
      text += buf;
    }
  }
  const StringId id = w.Intern(text);
  s.native_names.emplace(at, State::NativeName{id, *interpreter});
  return id;
}

uint32_t Child(State& s, TraceWriter& w, uint32_t pid, uint32_t parent, StringId frame, FrameKind kind) {
  auto [it, fresh] = s.nodes.try_emplace({parent, frame, uint8_t(kind)}, uint32_t(s.nodes.size() + 1));
  const uint32_t id = it->second;
  if (s.node_written.size() <= id) s.node_written.resize(id + 1, 0);
  if (!s.node_written[id]) {
    w.Add(CpuStackNodeRecord{pid, id, parent, frame, uint8_t(kind)});
    s.node_written[id] = 1;
  }
  (void)fresh;
  return id;
}

}  // namespace

bool AddressReadableForTest(const void* p, size_t n) {
  if (!g) g = new State();
  RefreshMaps(*g);
  const int mi = g->maps_current.load();
  Mapped mem;
  mem.m = mi >= 0 ? g->maps[mi] : nullptr;
  return mem.Has(reinterpret_cast<uintptr_t>(p), n);
}

size_t DebugOffsetsSize(int minor) {
  for (const DebugOffsetsAt& d : kDebugOffsetsAt)
    if (d.minor == minor) return d.size;
  return 0;
}

const char* CheckDebugOffsets(int minor, const uint8_t* debug, size_t size) {
  const DebugOffsetsAt* at = nullptr;
  const PyLayout* L = nullptr;
  for (const DebugOffsetsAt& d : kDebugOffsetsAt)
    if (d.minor == minor) at = &d;
  for (const PyLayout& l : kLayouts)
    if (l.minor == minor) L = &l;
  if (!at || !L) return "";
  if (size < at->size) return "size";
  const auto word = [&](uint32_t offset) {
    uint64_t v;
    std::memcpy(&v, debug + offset, 8);
    return v;
  };
  if (std::memcmp(debug, "xdebugpy", 8) != 0) return "cookie";
  const uint64_t version = word(8);  // PY_VERSION_HEX
  if ((version >> 24) != 3 || ((version >> 16) & 0xff) != uint64_t(minor)) return "version";
  if (word(16) != 0) return "free_threaded";
  const struct {
    uint32_t at;
    uint64_t want;
    const char* name;
  } fields[] = {
      {at->tstate_current_frame, L->tstate_cframe, "thread_state.current_frame"},
      {at->frame_previous, L->frame_previous, "interpreter_frame.previous"},
      {at->frame_executable, L->frame_code, "interpreter_frame.executable"},
      {at->frame_instr_ptr, L->frame_prev_instr, "interpreter_frame.instr_ptr"},
      {at->frame_owner, L->frame_owner, "interpreter_frame.owner"},
      {at->code_filename, L->code_filename, "code_object.filename"},
      {at->code_qualname, L->code_qualname, "code_object.qualname"},
      {at->code_linetable, L->code_linetable, "code_object.linetable"},
      {at->code_firstlineno, L->code_firstlineno, "code_object.firstlineno"},
      {at->code_adaptive, L->code_adaptive, "code_object.co_code_adaptive"},
  };
  for (const auto& f : fields)
    if (word(f.at) != f.want) return f.name;
  return "";
}

bool PythonVersionSupported(int minor) {
  for (const PyLayout& L : kLayouts)
    if (L.minor == minor) return true;
  return false;
}

int LineFromLocationTable(const uint8_t* table, size_t size, int first_line, int64_t index) {
  if (index < 0) return first_line;
  size_t i = 0;
  int line = first_line;
  int64_t addr = 0;
  const auto varint = [&]() {
    uint64_t v = 0;
    int shift = 0;
    while (i < size) {
      const uint8_t b = table[i++];
      v |= uint64_t(b & 63) << shift;
      shift += 6;
      if (!(b & 64) || shift > 60) break;
    }
    return v;
  };
  const auto svarint = [&]() {
    const uint64_t v = varint();
    return (v & 1) ? -int64_t(v >> 1) : int64_t(v >> 1);
  };
  while (i < size) {
    const uint8_t head = table[i++];
    if (!(head & 0x80)) return first_line;  // not an entry start: a table we do not understand
    const int code = (head >> 3) & 15;
    const int64_t length = (head & 7) + 1;
    int entry_line = line;
    bool has_line = true;
    if (code == 15) {
      has_line = false;
    } else if (code == 14) {
      entry_line = line + int(svarint());
      varint(), varint(), varint();
    } else if (code == 13) {
      entry_line = line + int(svarint());
    } else if (code >= 10) {
      entry_line = line + (code - 10);
      i += 2;
    } else {
      i += 1;
    }
    if (has_line) line = entry_line;
    if (index >= addr && index < addr + length) return has_line ? entry_line : first_line;
    addr += length;
  }
  return line;
}

bool Start(const Options& options, std::string* error) {
  if (options.hz == 0 || options.hz > kMaxHz) {
    *error = "sampling rate " + std::to_string(options.hz) + " Hz is outside 1.." + std::to_string(kMaxHz);
    return false;
  }
  if (g && g->running.load()) {
    *error = "CPU sampling already runs in this process";
    return false;
  }
  struct sigaction old {};
  sigaction(SIGPROF, nullptr, &old);
  const bool ours = (old.sa_flags & SA_SIGINFO) && old.sa_sigaction == OnSigprof;
  if (!ours && ((old.sa_flags & SA_SIGINFO) || (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN))) {
    *error = "the application has its own SIGPROF handler (another profiler?)";
    return false;
  }
  if (!g) g = new State();
  g->options = options;
  // Load libgcc_s's unwinder now, not inside the first signal.
  {
    uint64_t pcs[4];
    UnwindState u{pcs, 0, 4, false};
    _Unwind_Backtrace(UnwindOne, &u);
  }
  g->find_object = reinterpret_cast<FindObjectFn>(dlsym(RTLD_DEFAULT, "_dl_find_object"));
  g->cached_unwind = options.unwinder == Options::Unwinder::kCached && g->find_object;
  g->stats.cached_unwind = g->cached_unwind;
  struct sigaction sa {};
  sa.sa_sigaction = OnSigprof;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigfillset(&sa.sa_mask);
  sigdelset(&sa.sa_mask, SIGSEGV);  // a fault in the handler's reads must reach the guard (OnFault)
  sigdelset(&sa.sa_mask, SIGBUS);
  EnsureFaultGuard();
  if (sigaction(SIGPROF, &sa, nullptr) != 0) {
    *error = std::string("sigaction(SIGPROF): ") + std::strerror(errno);
    return false;
  }
  g->stats.rate_min_hz = g->stats.rate_final_hz = options.hz;
  g->stats.rate_lowered_ns = g->stats.ticks_not_taken = g->stats.sample_cost_ns = 0;
  g->stats.alternate_start_ns = 0, g->stats.alternate_ms = 0;
  g->stop.store(false);
  g->running.store(true);
  g->thread = std::thread(SamplerMain, g);
  return true;
}

void Stop() {
  if (!g || !g->running.load()) return;
  g->stop.store(true);
  if (g->thread.joinable()) g->thread.join();
  g->running.store(false);
}

void ForgetAfterFork() {
  if (!g) return;
  new (&g->thread) std::thread();  // it names a thread of the parent: forgotten, never joined or detached
  // The forking thread's cached id is its parent's: a sampler started here would never find its slot.
  t_tid = 0;
  g->running.store(false);
  for (Slot& x : g->slots) x.tid.store(0);
}

void ResetWrittenNodes() {
  if (!g) return;
  std::fill(g->node_written.begin(), g->node_written.end(), 0);
  g->native_names.clear();
  g->python_names.clear();
}

uint64_t Drain(TraceWriter& w, uint32_t pid) {
  if (!g) return 0;
  State& s = *g;
  if (s.writer != &w) {  // string ids are the writer's
    if (s.writer) ResetWrittenNodes();
    s.writer = &w;
  }
  const int64_t t_start = Now();
  uint64_t written = 0;
  for (Slot& x : s.slots) {
    const uint32_t tid = x.tid.load(std::memory_order_acquire);
    if (!tid || !x.ring) continue;
    // While the sampler runs, only what PeekPython has read; once it stopped (joined), the rest.
    const uint64_t head = s.running.load() ? std::min(x.head.load(std::memory_order_acquire),
                                                      x.peeked.load(std::memory_order_acquire))
                                           : x.head.load(std::memory_order_acquire);
    uint64_t at = x.tail.load(std::memory_order_relaxed);
    while (at + 2 <= head) {
      EntryHeader e;
      const int64_t ts = int64_t(x.ring[(at + 1) % kRingWords]);
      // A bad header cannot happen (entries are written whole): resynchronize by dropping the rest.
      if (!ReadHeader(x.ring[at % kRingWords], &e)) {
        at = head;
        break;
      }
      const int nn = e.native, np = e.python;
      CpuSampleRecord r;
      r.timestamp = ts, r.pid = pid, r.tid = tid;
      if (e.flags & kSampleIdleRepeat) {
        r.stack = x.last_leaf;
        r.flags = uint8_t(x.last_flags | kSampleIdleRepeat);
      } else {
        const uint64_t base = at + 2;
        // Root first: Python frames (outermost first), then the native frames run by the innermost one (those
        // above the interpreter's own); without Python, the whole native stack.
        uint32_t node = 0;
        for (int i = np - 1; i >= 0; --i) {
          const uint64_t code = x.ring[e.PythonAt(at, i) % kRingWords];
          const uint64_t lines = x.ring[(e.PythonAt(at, i) + 1) % kRingWords];
          node = Child(s, w, pid, node, s.py ? PythonFrame(s, w, code, lines) : w.Intern("?"),
                       FrameKind::kPython);
        }
        int keep = nn;
        if (np > 0) {
          for (int i = 0; i < nn; ++i) {
            bool interp = false;
            NativeFrame(s, w, x.ring[(base + i) % kRingWords], i == 0, &interp);
            if (interp) {
              keep = i;
              break;
            }
          }
        }
        for (int i = keep - 1; i >= 0; --i) {
          bool interp = false;
          node = Child(s, w, pid, node, NativeFrame(s, w, x.ring[(base + i) % kRingWords], i == 0, &interp),
                       FrameKind::kNative);
        }
        r.stack = node;
        r.flags = e.flags;
        x.last_leaf = node;
        x.last_flags = uint8_t(e.flags & ~kSampleIdleRepeat);
      }
      at += e.Words();
      const Options& o = s.options;
      if ((o.window_start_ns && r.timestamp < o.window_start_ns) ||
          (o.window_end_ns && r.timestamp >= o.window_end_ns))
        continue;  // outside --delay/--duration: decoded (the stack state above must advance), not written
      w.Add(r);
      ++written;
      ++s.stats.samples;
      if (e.flags & kSampleIdleRepeat) ++s.stats.idle_repeats;
    }
    x.tail.store(at, std::memory_order_release);
    if (x.exited && x.token.load() == 0 && at == x.head.load(std::memory_order_acquire)) {
      x.head.store(0), x.tail.store(0);
      x.last_leaf = 0, x.last_flags = 0;
      x.tid.store(0, std::memory_order_release);  // the slot is free for a new thread
    }
  }
  s.stats.drain_ns += uint64_t(Now() - t_start);
  s.stats.drained += written;
  return written;
}

Stats GetStats() {
  if (!g) return {};
  Stats out = g->stats;
  out.ring_full = g->ring_full.load();
  out.unwind_failed = g->unwind_failed.load();
  out.unwind_fallbacks = g->unwind_fallbacks.load();
  out.unwind_stack_unbounded = g->stack_unbounded.load();
  out.unwind_rules_read = g->rules_read.load();
  out.unwind_cached_frames = g->cached_frames.load();
  for (int i = 0; i < FrameRule::kWhyCount; ++i)
    out.unwind_fallback_why[i] = g->fallback_why[i].load(),
    out.unwind_fallback_pc[i] = g->fallback_pc[i].load();
  out.truncated = g->truncated.load();
  out.read_faults = g->read_faults.load();
  out.python_unreadable = g->py_unreadable.load();
  out.python_unsupported = g->py_unsupported.load();
  out.maps_misses = g->maps_misses.load();
  out.handled = g->handled.load();
  out.handler_ns = g->handler_ns.load();
  out.unwind_ns = g->unwind_ns.load();
  out.python_ns = g->python_ns.load();
  out.cpu_clock_ns = g->cpu_clock_ns.load();
  out.delivery_ns = g->delivery_ns.load();
  out.stack_nodes = g->nodes.size();
  out.native_names = g->native_names.size();
  out.python_names = g->python_names.size();
  out.python_names_early = g->early_used.load();
  return out;
}

}  // namespace gt::inject::cpu

// Periodic CPU sampling of every thread of this process (gcollect's default, 1 kHz unless --sample-hz;
// --sample=none turns it off): native stacks and, for CPython 3.11, 3.12 and 3.13, the Python stack of each
// sampled thread.
//
// One sampler thread wakes `hz` times a second. For each thread of the process (/proc/self/task, re-read
// every 100 ms, so threads created before the injection loaded are covered) it reads the thread's CPU clock:
// a thread that has not run since its last sample is still where it was, so that stack is recorded again
// without interrupting it (kSampleIdleRepeat), for as long as it stays blocked (a signal would end its wait
// with EINTR); any other thread gets SIGPROF (tgkill). The handler, on the
// sampled thread, unwinds its native stack (from the signal's context, each address's unwind rule cached:
// cfi_unwind.h; libgcc's _Unwind_Backtrace for a sample with rules that reader does not follow) and walks its
// Python frames (raw reads of the interpreter's frame chain, at offsets per CPython version), and appends the
// raw addresses to that thread's ring (one producer at a time: a token taken by the sampler before the signal
// and given back by the handler). No allocation, lock or symbol lookup on that path.
//
// Drain (the injection's flusher, under its lock) turns the raw entries into records: native addresses are
// symbolized with dladdr (exported symbols; "lib.so+0x1f00" where none), Python code objects are read with
// process_vm_readv (a freed object cannot fault us) into "file.py:qualname:line", and each stack becomes one
// node of the process's frame tree (CpuStackNodeRecord), each sample one CpuSampleRecord.
//
// This file has no CUDA or CUPTI dependency: tests drive it in their own process.
#pragma once

#include <cstdint>
#include <string>

#include "gt/writer.h"
#include "inject/cfi_unwind.h"

namespace gt::inject::cpu {

inline constexpr uint32_t kDefaultHz = 1000;
inline constexpr uint32_t kMaxHz = 10000;
// The overhead governor's defaults: a signalled sample costs the thread its signal's delivery and return plus
// the handler, a few microseconds on Linux but 35-90 us under gVisor (docs/benchmarks.md), so a fixed 1 kHz
// costs a busy thread anywhere from 0.5% to 9%. Like the kernel's perf_cpu_time_max_percent, the sampler
// lowers its rate (never below kMinGovernedHz) to keep that cost under max_overhead of a busy thread's time.
inline constexpr double kDefaultMaxOverhead = 0.015;
inline constexpr uint32_t kMinGovernedHz = 20;

struct Options {
  uint32_t hz = kDefaultHz;
  int64_t (*now)() = nullptr;                      // the trace clock; null: CLOCK_MONOTONIC
  int64_t window_start_ns = 0, window_end_ns = 0;  // --delay/--duration on the trace clock; 0 = open
  void (*on_sampler_thread)() = nullptr;  // called first on the sampler thread (the osrt shim ignores it)
  // How the handler unwinds native frames. kCached (cfi_unwind.h) starts from the signal's context and keeps
  // each address's unwind rule in a per-thread cache; a sample it cannot follow is unwound with libgcc.
  // kLibgcc is the first version's _Unwind_Backtrace alone (through the handler and the signal trampoline,
  // every frame's rule read again), kept for comparisons (GTRACE_SAMPLE_UNWIND=libgcc).
  enum class Unwinder : uint8_t { kCached, kLibgcc };
  Unwinder unwinder = Unwinder::kCached;
  // The most of a busy thread's time sampling may take (0: keep `hz` whatever it costs). Measured from the
  // signalled samples' cost (tgkill to the handler's end, the median of each window: a loaded machine's
  // scheduling delays are not the sample's cost).
  double max_overhead = kDefaultMaxOverhead;
  // Measurement only (GTRACE_SAMPLE_ALTERNATE_MS): > 0 samples only in the even windows of this many ms of
  // CLOCK_MONOTONIC counted from Stats::alternate_start_ns, so one process runs with and without sampling in
  // turns and its own timings compare the two (scripts/gpu/sampling_ab.py).
  uint32_t alternate_ms = 0;
  // Tests: each sample also reads 8 bytes here under the handler's fault guard (an unmapped page: the guard's
  // recovery, without a Python whose frames move).
  uintptr_t fault_test_address = 0;
  bool fault_test_before_unwind = false;  // read it before the native unwind instead of after
};

// Installs the SIGPROF handler and starts the sampler thread. False with `error` set when it cannot (the app
// has its own SIGPROF handler, already running, hz out of range).
bool Start(const Options& options, std::string* error);
// Stops the sampler thread (the handler stays installed and ignores late signals). Idempotent.
void Stop();
// After fork in the child: the sampler thread did not survive; forget it (nothing is sampled there).
void ForgetAfterFork();
// Writes the samples taken since the last drain as records with `pid`. The caller serializes calls.
uint64_t Drain(TraceWriter& writer, uint32_t pid);
// The writer changed (a new part): stack nodes are written again as they are next used.
void ResetWrittenNodes();

struct Stats {
  uint64_t samples = 0;         // samples written (signalled + idle repeats)
  uint64_t idle_repeats = 0;    // of which the thread had not run since its last sample
  uint64_t ring_full = 0;       // samples dropped: the thread's ring was full (drains too rare)
  uint64_t busy_skips = 0;      // ticks skipped for a thread whose previous signal was not yet handled
  uint64_t lost_in_flight = 0;  // signals never handled (the thread exited or stayed stopped)
  uint64_t threads_seen = 0;
  uint64_t threads_exited = 0;     // threads that exited while sampled (their samples kept)
  uint64_t too_many_threads = 0;   // threads not sampled: every slot in use
  uint64_t unwind_failed = 0;      // samples with no native frame beyond the interrupted address
  uint64_t unwind_fallbacks = 0;   // samples the cached unwinder cut at a frame whose rule it does not follow
  uint64_t unwind_rules_read = 0;  // frames whose unwind rule was read from .eh_frame (cache misses)
  uint64_t unwind_cached_frames = 0;  // frames unwound by the cached unwinder
  // Samples the cached unwinder took without its stack bound (the thread's stack newer than the snapshot of
  // the mappings): 256 MiB above the interrupted rsp instead.
  uint64_t unwind_stack_unbounded = 0;
  // Samples cut short by reason (FrameRule::Why in cfi_unwind.h), with the last address of each.
  uint64_t unwind_fallback_why[FrameRule::kWhyCount] = {}, unwind_fallback_pc[FrameRule::kWhyCount] = {};
  uint64_t truncated = 0;               // samples deeper than the frames kept
  uint64_t read_faults = 0;             // samples whose reads faulted (the guard kept the frames read before)
  uint64_t python_unreadable = 0;       // Python threads whose frame chain could not be read (bad frame)
  uint64_t python_unsupported = 0;      // samples of threads of an unsupported CPython (native stack only)
  uint64_t python_code_unreadable = 0;  // Python frames whose code object could not be read at drain
  uint64_t cpu_clock_unreadable = 0;    // ticks where a thread's CPU clock could not be read (signalled)
  // Costs (GTRACE_SAMPLE_VERBOSE prints them): wall time on the trace clock.
  uint64_t handled = 0;                                     // signals handled
  uint64_t handler_ns = 0;                                  // in the handler, of which:
  uint64_t unwind_ns = 0, python_ns = 0, cpu_clock_ns = 0;  // native unwinding, Python walk, own CPU clock
  uint64_t delivery_ns = 0;                                 // from tgkill to the handler's start
  uint64_t drain_ns = 0, drained = 0;  // turning raw entries into records (the flusher, under its lock)
  uint64_t sampler_cpu_ns = 0;         // the sampler thread's CPU (ticks, rescans)
  // The governor (Options::max_overhead), since the last Start.
  uint32_t rate_min_hz = 0,
           rate_final_hz = 0;      // the lowest and the last tick rate (the requested one if kept)
  uint64_t rate_lowered_ns = 0;    // time spent below the requested rate
  uint64_t ticks_not_taken = 0;    // ticks the requested rate would have made meanwhile
  uint64_t sample_cost_ns = 0;     // the cost that set the lowest rate (a window's median)
  int64_t alternate_start_ns = 0;  // Options::alternate_ms: the windows' origin (CLOCK_MONOTONIC)
  uint32_t alternate_ms = 0;       // Options::alternate_ms when it alternated (0: sampled all the time)
  // The drain's tables, which live as long as the process (read under the drain's lock): they grow with the
  // code that runs, not with time (a long run's memory: docs/benchmarks.md "Long runs").
  uint64_t stack_nodes = 0, native_names = 0, python_names = 0;
  // Of the Python names, those the sampler thread read right after their sample (PeekPython).
  uint64_t python_names_early = 0;
  uint64_t maps_reads = 0;     // snapshots of /proc/self/maps (the Python walk, the stack bound)
  uint64_t maps_misses = 0;    // Python walks ended by a pointer outside them
  bool cached_unwind = false;  // the last Start unwinds with the cache (false: libgcc only)
  int python_minor = -1;       // 3.x of the interpreter found in the process; -1 none
  bool python_supported = false;
  bool python_free_threaded = false;  // a free-threaded CPython (3.13t): native stacks only
  // The interpreter's own offsets (3.13+: _Py_DebugOffsets) disagree with this build's row: which field.
  // Native stacks only. Empty: they agree, or the version publishes none.
  const char* python_layout_mismatch = "";
};
// The counters, and the drain's own fields: serialized with Drain by the caller, as Drain is.
Stats GetStats();

// The governor's next tick period: `cost_ns` a signalled sample (0: none measured), `requested` the period of
// Options::hz. Tests drive it with made-up costs.
int64_t GovernedPeriodNs(int64_t current, int64_t requested, double cost_ns, double max_overhead);

// Tests: whether the handler's check of a pointer (against a snapshot of /proc/self/maps taken now) lets it
// read [p, p + n).
bool AddressReadableForTest(const void* p, size_t n);
// One line of /proc/self/maps: a readable mapping that is not a device's ([lo, hi) set), or false.
bool MapsLineReadable(const char* line, uintptr_t* lo, uintptr_t* hi);
// Tests: the Python frame layouts this build reads (3.11-3.14), and the line-table reader.
bool PythonVersionSupported(int minor);
// CPython 3.13+ begins `_PyRuntime` with `_Py_DebugOffsets`, its own offsets for out-of-process debuggers.
// `debug` holds `size` bytes from there; "" where they agree with this build's row for 3.`minor` (or that
// version has none), else the first field that disagrees.
const char* CheckDebugOffsets(int minor, const uint8_t* debug, size_t size);
// How many bytes of _Py_DebugOffsets CheckDebugOffsets reads for 3.`minor` (0: none).
size_t DebugOffsetsSize(int minor);
// The line of code unit `index` from a CPython 3.11+ location table (co_linetable bytes); first_line when
// `index` is before the code (a frame just pushed) or no entry covers it.
int LineFromLocationTable(const uint8_t* table, size_t size, int first_line, int64_t index);

}  // namespace gt::inject::cpu

// Internal state of the injection library (libgtrace_inject.so). One instance per traced process, created by
// whichever entry point runs first: InitializeInjection (the CUDA driver, at cuInit) or
// InitializeInjectionNvtx2 (the first NVTX call, possibly long before CUDA starts).
#pragma once

#include <cupti.h>
#include <semaphore.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "config/config.h"
#include "decode/cupti_decode.h"
#include "gt/writer.h"

namespace gt::inject {

struct Injection {
  config::Config config;
  uint32_t pid = 0;
  std::string part_path;

  std::mutex mu;  // guards writer + decoder (CUPTI's buffer thread, the flush thread and exit race for them)
  std::unique_ptr<TraceWriter> writer;
  std::unique_ptr<decode::ActivityDecoder> decoder;
  bool finished = false;
  // This process's record as written at start (ids interned), when it describes itself (not the root app,
  // whose record gcollect writes with the exit status it reaps): rewritten at exit with how it ended, so
  // workers of torchrun show as exited rather than running.
  ProcessRecord self;
  bool describes_self = false;
  int exit_status = -1;  // from on_exit: the status passed to exit(); -1 = not a normal exit

  CUpti_SubscriberHandle subscriber = nullptr;
  bool clock_shifted = false;  // CUPTI stamps CLOCK_REALTIME; the decoder shifts them onto CLOCK_MONOTONIC
  bool cupti_ok = false;
  std::atomic<bool> tracing_enabled{false};  // the configured kinds are currently enabled in CUPTI
  std::atomic<bool> capture_open{false};     // inside a capture range (or no capture range configured)
  std::atomic<uint64_t> dropped_records{0};
  uint64_t dropped_reported = 0;
  std::atomic<uint64_t> buffers_completed{0};
  std::atomic<uint64_t> bytes_completed{0};
  // Set by an optional module (counters) to receive the subscriber's callbacks it enabled; see modules.cc.
  std::atomic<void (*)(Injection&, CUpti_CallbackDomain, CUpti_CallbackId, const void*)> module_callback{
      nullptr};
  // Launches a module made itself (the counters module's replay passes and L2 flushes), by correlation id:
  // their kernel records are dropped when decoded, so the run's launch ordinals stay the app's own.
  std::mutex own_launches_mu;
  std::vector<uint32_t> own_launches;  // unordered; an id leaves when its record is dropped
  std::atomic<bool> has_own_launches{false};

  std::thread flusher;
  std::mutex flush_mu;
  std::condition_variable flush_cv;
  bool stop_flusher = false;
  std::atomic<int> fatal_signal{0};  // set by a signal handler; the finisher finalizes, the handler re-raises
  std::atomic<bool> fatal_flush_done{false};
  // The finisher thread writes the trace's tail after a fatal signal. Not the flusher: the signal may have
  // stopped an app thread holding a lock (CUPTI's, an API buffer's) that the flusher's periodic work waits
  // for. The handler posts `fatal_sem` (sem_post is async-signal-safe; a condition variable is not).
  std::thread finisher;
  sem_t fatal_sem;
  std::atomic<bool> stop_finisher{false};
  enum class FatalFinish : uint8_t { kPending, kFinished, kWriterBusy };
  std::atomic<FatalFinish> fatal_finish{FatalFinish::kPending};

  // In-process recording (gtrace.profile; inproc.cc): the app starts and stops it, and the trace is published
  // to this path at stop (or at exit). Empty when started by CUDA or NVTX under gcollect.
  std::string inproc_output;
  std::vector<ClockSync> clock_syncs;  // in-process only: gcollect keeps the anchors of its runs itself
  int64_t next_anchor_ns = 0;
  bool on_exit_registered = false;
};

Injection* GetInjection();  // null until started

// In-process recording (inproc.cc's C API). StartInProcess starts CUPTI with recording paused (or, after a
// stopped recording, opens a new trace on the subscriber already attached); StopInProcess finishes the trace
// and publishes it. Both return false with `error` set when they cannot (gcollect traces this process, a
// recording is running, CUPTI refuses: another profiler holds it).
bool StartInProcess(const config::Config& config, const std::string& output, std::string* error);
bool StopInProcess(std::string* error);
bool TracedByLauncher();  // gcollect set this process up (its environment), whether or not CUDA started yet

// activity.cc
bool StartActivity(Injection& inj, std::string* error);  // callbacks, clock, always-on kinds
void EnableTraceKinds(Injection& inj, bool enable);  // the configured kinds on/off (capture ranges, window)
void FlushActivity(bool forced);
void EnableCaptureContext(Injection& inj);  // NVTX on for the whole run when a capture range is set
// API calls recorded through the callback API (the default; GTRACE_API=activity uses CUPTI's RUNTIME kind):
// moves the per-thread batches into the decoder. kFullBatches: only the batches app threads handed over;
// kAll: every thread's partial batch too (each flush, and at exit); kNoWait: kAll without waiting on a lock
// (fatal-signal path: the interrupted thread may hold one).
enum class DrainMode : uint8_t { kFullBatches, kAll, kNoWait };
void DrainApiCalls(Injection& inj, DrainMode mode);
void StopApiCalls();                      // records nothing more (the final drain is under way)
void RefreshClockOffset(Injection& inj);  // re-measures realtime -> monotonic (NTP slews realtime)

// interpose.cc: thread names seen through pthread_setname_np (kept even after the thread exits) and /proc
// scans.
void RememberThreadName(uint32_t tid, const char* name);
bool LookupThreadName(uint32_t tid, std::string* name);
void ScanThreadNames();  // reads /proc/self/task/*/comm
void AddLoss(Injection& inj, const char* name, uint8_t severity, uint64_t count, const std::string& detail);
void NoteOwnLaunch(Injection& inj, uint32_t correlation_id);

// capture.cc: callbacks for --capture-range (cudaProfilerStart/Stop, NVTX push/pop of a named range).
bool StartCapture(Injection& inj, std::string* error);

// nvtx_ext.cc: NVTX extended payloads (NCCL's): the push callback, and the counts reported at exit.
void EnableNvtxPayloads(Injection& inj);
void OnNvtxPayloadPush(Injection& inj, const void* cbdata);
void ReportNvtxPayloads(Injection& inj);

// nccl_glue.cc: NCCL's profiler plugin (nccl_profiler.h) in this process: configured at start, drained into
// the writer (under inj.mu) by the flusher, its counts reported as losses at finish.
void StartNcclPlugin(Injection& inj);
void NcclPluginRefreshClock();
void DrainNcclPlugin(Injection& inj);
void FinishNcclPlugin(Injection& inj);
bool NcclPluginDrainWanted();

// cpu_glue.cc: sampled CPU stacks (cpu_sampler.h): started with the trace, drained by the flusher (under
// inj.mu), stopped and its counts reported at finish.
void StartCpuSampling(Injection& inj);
void DrainCpuSamples(Injection& inj);
void FinishCpuSampling(Injection& inj);
// osrt_glue.cc: OS runtime waits (--trace=osrt) from the preloaded libgtrace_osrt.so, drained by the flusher
// (under inj.mu) into "OS runtime" ranges; the injection's own threads are not recorded.
void StartOsrt(Injection& inj);
void DrainOsrt(Injection& inj);
void FinishOsrt(Injection& inj);
void OsrtIgnoreThisThread();

// modules.cc: optional modules (the counters engineer's range profiler plugs in here).
void StartOptionalModules(Injection& inj);
void FlushOptionalModules(Injection& inj);
void StopOptionalModules(Injection& inj);

void Warn(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace gt::inject

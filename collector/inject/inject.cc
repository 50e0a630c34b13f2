// libgtrace_inject.so entry points and process lifecycle.
//
// [SECTION] entry points (InitializeInjection, InitializeInjectionNvtx2)
// [SECTION] start: config, part file, process record, CUPTI, flusher, exit hooks
// [SECTION] in-process recording (gtrace.profile: started and stopped by the app; inproc.cc's C API)
// [SECTION] flusher thread: periodic flush (crash loses <= one interval), window on/off
// [SECTION] finisher thread: the trace's tail after a fatal signal
// [SECTION] exit, fork and signals
#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "config/job.h"
#include "gt/env.h"
#include "gt/parts.h"
#include "inject/cpu_sampler.h"
#include "inject/injection.h"

namespace gt::inject {

using config::CaptureMode;
using config::Config;
using config::ConfigFromEnv;
using config::JobIdentity;
using config::ReadBootId;
using config::ReadJobIdentity;
using config::TraceClockNow;
using decode::ActivityDecoder;
using decode::DecoderOptions;

namespace {

Injection* g_injection = nullptr;  // leaked on purpose: it must outlive static destructors and atexit order
std::mutex g_start_mu;
bool g_start_attempted = false;
uint32_t g_owner_pid = 0;  // a forked child must not touch the parent's writer
// A termination request that arrives while the injection starts (CUPTI's start takes 1-3 s, the trace is
// already open) waits until the finisher exists, then is raised again: killed there, the part was cut short.
std::atomic<bool> g_starting{false};
std::atomic<int> g_deferred_signal{0};

std::string ReadSmallFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string CommandLine() {
  std::string raw = ReadSmallFile("/proc/self/cmdline");
  for (char& ch : raw)
    if (ch == '\0') ch = ' ';
  return Trim(raw);
}

void OnNewThread(void* ctx, uint32_t tid) {
  auto* inj = static_cast<Injection*>(ctx);
  std::string name;
  if (!LookupThreadName(tid, &name))
    name = Trim(ReadSmallFile("/proc/self/task/" + std::to_string(tid) + "/comm"));
  if (name.empty()) return;  // exited before we looked and never named: the viewer shows the tid
  ThreadRecord t;
  t.pid = inj->pid;
  t.tid = tid;
  t.name = inj->writer->Intern(name);
  inj->writer->Add(t);  // called from ActivityDecoder under inj->mu
}

const char* ApiNameOf(uint8_t domain, uint32_t cbid) {
  const char* name = nullptr;
  CUpti_CallbackDomain d = domain ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
  if (cuptiGetCallbackName(d, cbid, &name) != CUPTI_SUCCESS) return nullptr;
  return name;
}

// ---- [SECTION] flusher thread
// ------------------------------------------------------------------------------------

void FinalizeLocked(Injection& inj, const char* reason);
bool PublishInProcess(Injection& inj, std::string* error);

void StopFlusher(Injection& inj) {
  {
    std::lock_guard<std::mutex> lock(inj.flush_mu);
    inj.stop_flusher = true;
  }
  inj.flush_cv.notify_all();
  if (inj.flusher.joinable()) inj.flusher.join();
  if (inj.finisher.joinable()) {
    inj.stop_finisher.store(true);
    sem_post(&inj.fatal_sem);
    inj.finisher.join();
    sem_destroy(&inj.fatal_sem);
  }
}

// Wall-clock anchors of in-process traces, as often as gcollect records them.
constexpr int64_t kAnchorIntervalNs = 10'000'000'000;

void FlushOnce(Injection& inj) {
  ScanThreadNames();  // before the buffers: threads named since the last flush may exit before we decode them
  RefreshClockOffset(inj);
  NcclPluginRefreshClock();
  FlushActivity(false);
  DrainApiCalls(inj, DrainMode::kAll);
  FlushOptionalModules(inj);
  std::lock_guard<std::mutex> lock(inj.mu);
  if (inj.finished) return;
  DrainNcclPlugin(inj);
  DrainCpuSamples(inj);
  DrainOsrt(inj);
  if (!inj.inproc_output.empty() && TraceClockNow() >= inj.next_anchor_ns) {
    inj.clock_syncs.push_back(config::ReadClockSync());
    inj.next_anchor_ns = TraceClockNow() + kAnchorIntervalNs;
  }
  uint64_t dropped = inj.dropped_records.load();
  if (dropped > inj.dropped_reported) {
    AddLoss(inj, "cupti_dropped_records", static_cast<uint8_t>(Severity::kDataLoss),
            dropped - inj.dropped_reported,
            "CUPTI dropped activity records (buffers full); the timeline has gaps");
    inj.dropped_reported = dropped;
  }
  Status s = inj.writer->Flush();
  (void)s;  // sticky in the writer; reported at finish
}

void FlusherMain(Injection* inj) {
  OsrtIgnoreThisThread();  // its own 50 ms waits are gtrace's, not the app's
  const auto tick = std::chrono::milliseconds(50);
  int64_t next_flush = TraceClockNow() + int64_t(inj->config.flush_interval_ms) * 1000000;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(inj->flush_mu);
      inj->flush_cv.wait_for(lock, tick, [&] { return inj->stop_flusher || inj->fatal_signal.load() != 0; });
      if (inj->stop_flusher) return;
    }
    if (inj->fatal_signal.load()) return;  // the finisher writes the tail (FinisherMain)
    int64_t now = TraceClockNow();
    // --delay / --duration: keep CUPTI off outside the window (records are also filtered by time).
    const Config& c = inj->config;
    if (c.capture == CaptureMode::kNone) {
      bool want = (c.window_start_ns == 0 || now >= c.window_start_ns) &&
                  (c.window_end_ns == 0 || now < c.window_end_ns);
      if (want != inj->tracing_enabled.load()) EnableTraceKinds(*inj, want);
    }
    if (now >= next_flush) {
      FlushOnce(*inj);
      next_flush = now + int64_t(c.flush_interval_ms) * 1000000;
    } else {
      DrainApiCalls(*inj, DrainMode::kFullBatches);
      {
        std::lock_guard<std::mutex> lock(inj->mu);
        DrainOsrt(*inj);
        if (inj->config.cpu_sample_hz)
          DrainCpuSamples(*inj);  // rings: ~330 ms of the deepest stacks at 1 kHz
      }
      if (NcclPluginDrainWanted()) {  // a burst of NCCL operations: free the plugin's slots before the flush
        std::lock_guard<std::mutex> lock(inj->mu);
        DrainNcclPlugin(*inj);
      }
    }
  }
}

// ---- [SECTION] finisher thread
// ------------------------------------------------------------------------------------

// After a fatal signal: the trace's tail, whatever the flusher is doing. The signal may have interrupted an
// app thread inside CUPTI or the driver, holding a lock that a forced CUPTI flush needs, so the flush runs on
// a helper given 1.5 s; API buffers whose owner holds their lock are skipped (kNoWait); the writer's lock is
// waited for at most 2 s (the flusher may be stuck holding it), then the trace is finished with what was
// decoded. The handler waits for `fatal_flush_done` and says so when it does not come.
void FinisherMain(Injection* inj) {
  OsrtIgnoreThisThread();
  while (sem_wait(&inj->fatal_sem) != 0 && errno == EINTR) {
  }
  if (inj->stop_finisher.load() || inj->fatal_signal.load() == 0) return;  // stopped (or sem_wait failed)
  auto done = std::make_shared<std::atomic<bool>>(false);
  std::thread([done] {
    FlushActivity(true);
    done->store(true);
  }).detach();
  for (int i = 0; i < 150 && !done->load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  StopApiCalls();
  DrainApiCalls(*inj, DrainMode::kNoWait);
  std::unique_lock<std::mutex> lock(inj->mu, std::defer_lock);
  for (int i = 0; i < 200 && !lock.try_lock(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (lock.owns_lock()) {
    FinalizeLocked(*inj, strsignal(inj->fatal_signal.load()));
    inj->fatal_finish.store(Injection::FatalFinish::kFinished);
  } else {
    inj->fatal_finish.store(Injection::FatalFinish::kWriterBusy);
  }
  inj->fatal_flush_done.store(true);
}

// ---- [SECTION] exit, fork and signals
// ----------------------------------------------------------------------------

void FinalizeLocked(Injection& inj, const char* reason) {
  if (inj.finished) return;
  inj.decoder->Finish();
  ReportNvtxPayloads(inj);
  FinishNcclPlugin(inj);
  FinishCpuSampling(inj);
  FinishOsrt(inj);
  uint64_t dropped = inj.dropped_records.load();
  if (dropped > inj.dropped_reported) {
    AddLoss(inj, "cupti_dropped_records", static_cast<uint8_t>(Severity::kDataLoss),
            dropped - inj.dropped_reported,
            "CUPTI dropped activity records (buffers full); the timeline has gaps");
    inj.dropped_reported = dropped;
  }
  if (reason) {
    int sig = inj.fatal_signal.load();
    bool request =
        sig == SIGTERM || sig == SIGINT || sig == SIGHUP;  // asked to stop: normal for pool workers
    AddLoss(
        inj, "process_terminated_by_signal",
        static_cast<uint8_t>(request ? Severity::kInfo : Severity::kWarning), 1,
        std::string("the process received ") + reason + "; the trace was finalized from the signal handler");
  }
  if (inj.describes_self) {
    ProcessRecord p = inj.self;
    p.end_ns = TraceClockNow();
    const int sig = inj.fatal_signal.load();
    // An in-process recording stopped by the app: the process goes on.
    const bool still_running = !inj.inproc_output.empty() && !sig && inj.exit_status < 0;
    p.exit_kind = static_cast<uint8_t>(sig                    ? ExitKind::kSignaled
                                       : inj.exit_status >= 0 ? ExitKind::kExited
                                       : still_running        ? ExitKind::kRunning
                                                              : ExitKind::kUnknown);
    p.exit_code = sig ? sig : std::max(inj.exit_status, 0);
    inj.writer->Add(p);
  }
  if (!inj.inproc_output.empty()) {  // gcollect writes the metadata of its runs in its own part
    inj.clock_syncs.push_back(config::ReadClockSync());
    TraceMetadata meta;
    char host[256] = {0};
    gethostname(host, sizeof host - 1);
    meta.entries = {
        {"tool", "gtrace.profile"},      {"tool_version", GT_VERSION},
        {"command_line", CommandLine()}, {"host", host},
        {"boot_id", ReadBootId()},       {"trace_kinds", config::FormatTraceKinds(inj.config.kinds)},
        {"clock", "CLOCK_MONOTONIC"},    {"capture_range", "in-process"}};
    meta.clock_syncs = inj.clock_syncs;
    inj.writer->SetMetadata(meta);
  }
  Status s = inj.writer->Finish();
  if (!s.ok()) Warn("could not finish %s: %s", inj.part_path.c_str(), s.ToString().c_str());
  inj.finished = true;
}

// on_exit rather than atexit: the status passed to exit() is what a worker's record should say.
void OnExit(int status, void*) {
  Injection* inj = g_injection;
  if (!inj || static_cast<uint32_t>(getpid()) != g_owner_pid) return;
  inj->exit_status = status & 0xff;
  StopFlusher(*inj);
  StopOptionalModules(*inj);
  if (inj->cupti_ok) FlushActivity(true);
  StopApiCalls();
  DrainApiCalls(*inj, DrainMode::kAll);
  std::lock_guard<std::mutex> lock(inj->mu);
  const bool was_recording = !inj->finished;
  FinalizeLocked(*inj, nullptr);
  if (was_recording && !inj->inproc_output.empty()) {
    std::string error;
    if (!PublishInProcess(*inj, &error)) Warn("%s", error.c_str());
  }
}

void OnForkChild() {
  // The child has no flusher thread and shares the parent's part file offset: it must never write to it.
  // CUDA cannot be used in a child forked after cuInit anyway; a child that execs starts a fresh injection.
  g_owner_pid = 0;
  g_injection = nullptr;    // leaked copy-on-write memory; cheap
  cpu::ForgetAfterFork();   // the sampler thread stayed in the parent: nothing is sampled here
  g_starting.store(false);  // a fork while another thread started the injection: nothing starts here
  g_deferred_signal.store(0);
  new (&g_start_mu) std::mutex();
  g_start_attempted = false;
}

constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT, SIGHUP};

void FatalSignalHandler(int sig) {
  Injection* inj = g_injection;
  // A termination request that landed on a helper thread (CUPTI's worker, a pool thread) is handed to the
  // main thread: waiting here could block the very thread the final flush needs.
  bool async = sig == SIGINT || sig == SIGTERM || sig == SIGHUP;
  // GTRACE_DEBUG_BACKTRACE=1: which path a signal takes (a trace cut short after a SIGTERM).
  static const bool debug = env::Get(env::Var::kDebugBacktrace) != nullptr;
  if (debug) {
    char line[160];
    const int n = std::snprintf(line, sizeof line,
                                "gtrace: pid %d tid %d: signal %d (starting %d, injection %d, finisher %d)\n",
                                int(getpid()), int(gettid()), sig, int(g_starting.load()), inj != nullptr,
                                inj && inj->finisher.joinable());
    if (n > 0) (void)!write(STDERR_FILENO, line, size_t(std::min<int>(n, sizeof line - 1)));
  }
  if (async && g_starting.load()) {
    int expected = 0;
    g_deferred_signal.compare_exchange_strong(expected, sig);
    return;
  }
  // The same request again, while the trace finishes: timeout(1), Slurm and a terminal signal the process and
  // then its group, and that copy, if it found the default action restored on another thread, ended the
  // process mid-finish (a part cut short, about half of `timeout -s TERM` runs on the H200 host).
  if (async && inj && inj->fatal_signal.load() != 0) return;
  if (async && inj && gettid() != getpid() && syscall(SYS_tgkill, getpid(), getpid(), sig) == 0) return;
  // A fault restores the default first: a second fault (or one on the finisher itself) terminates at once.
  if (!async) signal(sig, SIG_DFL);
  // ... and where a crash happened (GPU machines may have no debugger).
  if (debug && !async) {
    void* frames[48];
    int n = backtrace(frames, 48);
    backtrace_symbols_fd(frames, n, STDERR_FILENO);
  }
  if (inj && static_cast<uint32_t>(getpid()) == g_owner_pid && inj->finisher.joinable() &&
      std::this_thread::get_id() != inj->finisher.get_id()) {
    int expected = 0;
    if (inj->fatal_signal.compare_exchange_strong(expected, sig)) {
      sem_post(&inj->fatal_sem);
      // Wait (bounded: 5 s) for the finisher to write the tail of the trace; a busy app can leave ~1 s of
      // records to decode and compress.
      for (int i = 0; i < 500 && !inj->fatal_flush_done.load(); ++i) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, nullptr);
      }
      if (inj->fatal_finish.load() != Injection::FatalFinish::kFinished) {
        // Said here, in the process, because gcollect only sees a part cut short.
        char line[256];
        const int n = std::snprintf(
            line, sizeof line,
            "gtrace: pid %d: the trace could not be finished after signal %d (%s): its part keeps what was "
            "flushed before (about the last second is lost)\n",
            int(getpid()), sig,
            inj->fatal_finish.load() == Injection::FatalFinish::kWriterBusy ? "the writer stayed busy"
                                                                            : "no answer within 5 s");
        if (n > 0) (void)!write(STDERR_FILENO, line, size_t(std::min<int>(n, sizeof line - 1)));
      }
    }
  }
  signal(sig, SIG_DFL);
  raise(sig);  // delivered when the handler returns (sig is blocked in it): the default action, at last
}

void InstallSignalHandlers() {
  for (int sig : kFatalSignals) {
    struct sigaction old {};
    if (sigaction(sig, nullptr, &old) != 0) continue;
    // Only where the app kept the default: an app's own handler (Python's SIGINT) stays in charge.
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL) {
      struct sigaction sa {};
      sa.sa_handler = FatalSignalHandler;
      sigemptyset(&sa.sa_mask);
      sa.sa_flags = SA_ONSTACK;
      sigaction(sig, &sa, nullptr);
    }
  }
}

// ---- [SECTION] start
// ---------------------------------------------------------------------------------------------

const char* GetEnv(void*, const char* name) {
  return std::getenv(name);
}

bool OpenPart(Injection& inj) {
  std::string dir = inj.config.parts_dir;
  if (dir.empty()) dir = ".";
  mkdir(dir.c_str(), 0755);  // gcollect creates it; standalone use may not have
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string path =
        dir + "/" + std::to_string(inj.pid) + (attempt ? "." + std::to_string(attempt) : "") + ".gtrace";
    auto sink = MakeFileSink(path, /*overwrite=*/false);
    if (!sink.ok()) {
      if (sink.status().code() == StatusCode::kIoError && access(path.c_str(), F_OK) != 0) {
        Warn("cannot create %s: %s", path.c_str(), sink.status().ToString().c_str());
        return false;
      }
      continue;  // pid reuse within one run: pick the next name
    }
    auto writer = TraceWriter::Create(std::move(*sink));
    if (!writer.ok()) {
      Warn("cannot start trace %s: %s", path.c_str(), writer.status().ToString().c_str());
      return false;
    }
    inj.writer = std::move(*writer);
    inj.part_path = path;
    return true;
  }
  return false;
}

void WriteProcessRecord(Injection& inj, bool with_process) {
  ProcessRecord p;
  p.pid = inj.pid;
  p.parent_pid = static_cast<uint32_t>(getppid());
  p.name = inj.writer->Intern(Trim(ReadSmallFile("/proc/self/comm")));
  p.command_line = inj.writer->Intern(CommandLine());
  p.start_ns = TraceClockNow();
  p.exit_kind = static_cast<uint8_t>(ExitKind::kRunning);
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  const JobIdentity job = ReadJobIdentity([](const char* n) { return std::getenv(n); });
  p.host = inj.writer->Intern(host);
  p.boot_id = inj.writer->Intern(ReadBootId());
  p.job = inj.writer->Intern(job.job);
  p.rank = job.rank, p.local_rank = job.local_rank, p.world_size = job.world_size;
  inj.self = p;
  inj.describes_self = with_process;
  if (with_process) inj.writer->Add(p);
  ThreadRecord main_thread;
  main_thread.pid = inj.pid;
  main_thread.tid = inj.pid;
  main_thread.name = p.name;
  inj.writer->Add(main_thread);
}

// A new trace on `inj`: its part file, this process's record, a fresh decoder. Called at start, and again by
// an in-process recording that follows a stopped one (CUPTI stays attached in between).
bool OpenTrace(Injection& inj, std::string* error) {
  if (!OpenPart(inj)) {
    *error = "cannot create a trace in " + (inj.config.parts_dir.empty() ? "." : inj.config.parts_dir);
    return false;
  }
  // gcollect writes the root process's record (it knows the exit status); other processes describe
  // themselves.
  bool is_root = inj.config.launcher_pid != 0 && static_cast<uint32_t>(getppid()) == inj.config.launcher_pid;
  WriteProcessRecord(inj, /*with_process=*/!is_root);

  DecoderOptions opts;
  opts.context.pid = inj.pid;
  opts.window_start_ns = inj.config.window_start_ns;
  opts.window_end_ns = inj.config.window_end_ns;
  opts.api_name = ApiNameOf;
  opts.on_new_thread = OnNewThread;
  opts.on_new_thread_ctx = &inj;
  // Library kinds without nvtx: the libraries' domains only, not the app's own ranges.
  if (!(inj.config.kinds & config::kTraceNvtx)) {
    if (inj.config.kinds & config::kTraceCublas) opts.nvtx_domains_only.push_back(config::kCublasDomain);
    if (inj.config.kinds & config::kTraceCudnn) opts.nvtx_domains_only.push_back(config::kCudnnDomain);
    if (inj.config.kinds & config::kTraceNccl) opts.nvtx_domains_only.push_back(config::kNcclDomain);
  }
  inj.decoder = std::make_unique<ActivityDecoder>(inj.writer.get(), opts);
  inj.decoder->MarkThreadKnown(inj.pid);  // WriteProcessRecord named the main thread
  ScanThreadNames();
  inj.finished = false;
  StartOsrt(inj);
  inj.dropped_reported = inj.dropped_records.load();
  return true;
}

// Threads created while this lives (CUPTI's worker, our flusher) inherit a mask that blocks the asynchronous
// termination signals, so a Ctrl-C / SIGTERM is delivered to an app thread: the handler there waits for the
// flusher, which in turn waits for CUPTI's worker; either one catching the signal would deadlock the final
// flush.
class BlockTerminationSignals {
 public:
  BlockTerminationSignals() {
    sigset_t async_signals;
    sigemptyset(&async_signals);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&async_signals, sig);
    pthread_sigmask(SIG_BLOCK, &async_signals, &saved_);
  }
  ~BlockTerminationSignals() { pthread_sigmask(SIG_SETMASK, &saved_, nullptr); }

 private:
  sigset_t saved_;
};

void StartFlusher(Injection& inj) {
  inj.stop_flusher = false;
  inj.stop_finisher.store(false);
  sem_init(&inj.fatal_sem, 0, 0);
  BlockTerminationSignals blocked;
  inj.flusher = std::thread(FlusherMain, &inj);
  inj.finisher = std::thread(FinisherMain, &inj);
}

Injection* StartLocked(const Config& config, std::string* error) {
  auto* inj = new Injection();
  inj->config = config;
  inj->pid = static_cast<uint32_t>(getpid());
  if (!OpenTrace(*inj, error)) {
    Warn("%s", error->c_str());
    delete inj;
    return nullptr;
  }
  // From here a termination request is held until the trace can be finished (g_starting).
  struct StartWindow {
    StartWindow() {
      g_starting.store(true);
      InstallSignalHandlers();
    }
    ~StartWindow() {
      g_starting.store(false);
      if (const int sig = g_deferred_signal.exchange(0)) kill(getpid(), sig);
    }
  } start_window;

  {
    BlockTerminationSignals blocked;
    inj->cupti_ok = StartActivity(*inj, error);
  }
  if (!inj->cupti_ok) {
    Warn("CUPTI could not start (%s): process %u is not traced", error->c_str(), inj->pid);
    std::lock_guard<std::mutex> wl(inj->mu);
    AddLoss(*inj, "cupti_unavailable", static_cast<uint8_t>(Severity::kError), 1, *error);
    Status s = inj->writer->Finish();
    (void)s;
    inj->finished = true;
    g_injection = nullptr;
    *error = "CUPTI could not start: " + *error;
    return nullptr;
  }
  if (config::HasCaptureRange(inj->config.capture)) {
    std::string capture_error;
    if (!StartCapture(*inj, &capture_error)) {
      Warn("capture range unavailable (%s): tracing everything", capture_error.c_str());
      inj->config.capture = CaptureMode::kNone;
    } else {
      EnableCaptureContext(*inj);
    }
  }
  bool now_in_window = inj->config.window_start_ns == 0 || TraceClockNow() >= inj->config.window_start_ns;
  if (inj->config.capture == CaptureMode::kNone && now_in_window) EnableTraceKinds(*inj, true);

  g_owner_pid = inj->pid;
  g_injection = inj;
  StartNcclPlugin(*inj);  // before NCCL can initialize a communicator (it needs CUDA, which started us)
  StartOptionalModules(*inj);
  StartCpuSampling(*inj);
  StartFlusher(*inj);
  on_exit(OnExit, nullptr);
  inj->on_exit_registered = true;
  static bool atfork_done = false;
  if (!atfork_done) {
    pthread_atfork(nullptr, nullptr, OnForkChild);
    atfork_done = true;
  }
  return inj;
}

Injection* Start(const char* entry_point) {
  std::lock_guard<std::mutex> lock(g_start_mu);
  if (g_start_attempted) return g_injection;
  g_start_attempted = true;
  if (env::Get(env::Var::kDisable)) return nullptr;
  std::string warnings, error;
  Config config = ConfigFromEnv(GetEnv, nullptr, &warnings);
  if (!warnings.empty()) Warn("%s", Trim(warnings).c_str());
  return StartLocked(config, &error);
}

// ---- [SECTION] in-process recording
// ------------------------------------------------------------------------------

// The finished part becomes the trace the app asked for (the same concatenation gcollect and `gtrace recover`
// do); the parts folder goes when it held nothing else.
bool PublishInProcess(Injection& inj, std::string* error) {
  const std::string part = inj.part_path;
  auto done = ConcatenateParts({part}, inj.inproc_output, /*overwrite=*/true);
  if (!done.ok()) {
    *error = "could not write " + inj.inproc_output + ": " + done.status().message() +
             " (the recording is kept in " + part + ")";
    return false;
  }
  unlink(part.c_str());
  rmdir(inj.config.parts_dir.c_str());  // fails, harmlessly, while another part is in it
  return true;
}

// What an in-process recording may use of the app's options: its own switching, no replay modules (counters
// and PC sampling need gcollect's passes), and its own process record.
Config InProcessConfig(Config c) {
  c.capture = CaptureMode::kInProcess;
  c.modules.clear();
  c.launcher_pid = 0;
  return c;
}

void BeginInProcessTrace(Injection& inj, const std::string& output) {
  inj.inproc_output = output;
  inj.clock_syncs = {config::ReadClockSync()};
  inj.next_anchor_ns = TraceClockNow() + kAnchorIntervalNs;
}

}  // namespace

bool TracedByLauncher() {
  return env::Get(env::Var::kLauncherPid) != nullptr || env::Get(env::Var::kPartsDir) != nullptr;
}

bool StartInProcess(const Config& config, const std::string& output, std::string* error) {
  std::lock_guard<std::mutex> lock(g_start_mu);
  Injection* inj = g_injection;
  if (inj && inj->inproc_output.empty()) {
    *error = "this process is already traced by gcollect";
    return false;
  }
  if (inj && !inj->finished) {
    *error = "a recording is already running in this process (stop it first)";
    return false;
  }
  if (!inj) {
    if (g_start_attempted && TracedByLauncher()) {
      *error = "this process is already traced by gcollect";
      return false;
    }
    g_start_attempted = true;  // a later cuInit must not start a second injection
    const Config c = InProcessConfig(config);
    inj = StartLocked(c, error);
    if (!inj) {  // the app gets the reason; a part holding only that reason would be litter
      unlink((c.parts_dir + "/" + std::to_string(getpid()) + ".gtrace").c_str());
      rmdir(c.parts_dir.c_str());
      return false;
    }
    std::lock_guard<std::mutex> wl(inj->mu);  // the flusher reads these under the lock
    BeginInProcessTrace(*inj, output);
    return true;
  }
  // A new recording after a stopped one: CUPTI is still subscribed; a new part, decoder and flusher.
  {
    std::lock_guard<std::mutex> wl(inj->mu);
    inj->config = InProcessConfig(config);
    if (!OpenTrace(*inj, error)) return false;
    BeginInProcessTrace(*inj, output);
  }
  RefreshClockOffset(*inj);  // the new decoder starts without the realtime -> monotonic shift
  StartFlusher(*inj);
  return true;
}

bool StopInProcess(std::string* error) {
  std::lock_guard<std::mutex> start_lock(g_start_mu);
  Injection* inj = g_injection;
  if (!inj || inj->inproc_output.empty() || inj->finished) {
    *error = "no recording is running in this process";
    return false;
  }
  if (inj->tracing_enabled.load()) EnableTraceKinds(*inj, false);
  StopFlusher(*inj);
  FlushActivity(true);
  DrainApiCalls(*inj, DrainMode::kAll);
  std::lock_guard<std::mutex> wl(inj->mu);
  FinalizeLocked(*inj, nullptr);
  return PublishInProcess(*inj, error);
}

Injection* GetInjection() {
  return g_injection;
}

void Warn(const char* fmt, ...) {
  if (env::Get(env::Var::kQuiet)) return;
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "gcollect[%d]: %s\n", static_cast<int>(getpid()), buf);
}

}  // namespace gt::inject

// ---- [SECTION] entry points
// --------------------------------------------------------------------------------------

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  gt::inject::Start("cuda");
  return 1;  // never make cuInit fail because of the profiler
}

// NVTX calls this on the first NVTX API use in the process (NVTX_INJECTION64_PATH). Starting CUPTI here keeps
// ranges opened before CUDA initializes; CUPTI's own NVTX handler then receives the calls.
//
// Outside gcollect, NVTX reaches here because in-process recording offered this library (inproc.cc): then the
// app starts recording itself, so only CUPTI's handler is installed, ready for when MARKER records are
// enabled.
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(const void* get_export_table) {
  if (gt::inject::TracedByLauncher() && !gt::inject::Start("nvtx")) return 0;
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&cuptiActivityEnable), &info) || !info.dli_fname) return 0;
  void* cupti = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  if (!cupti) return 0;
  using NvtxInit = int (*)(const void*);
  auto forward = reinterpret_cast<NvtxInit>(dlsym(cupti, "InitializeInjectionNvtx2"));
  if (!forward) {
    gt::inject::Warn("this CUPTI has no NVTX handler: NVTX ranges are not recorded");
    return 0;
  }
  return forward(get_export_table);
}

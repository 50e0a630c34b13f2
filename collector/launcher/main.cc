// gcollect [options] -- ./app args...   (see UsageText in options.cc)
#include <limits.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <dirent.h>
#include <sys/wait.h>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "config/job.h"
#include "gt/env.h"
#include "gt/reader.h"
#include "launcher/counters_pass.h"
#include "launcher/launcher.h"
#include "launcher/output_name.h"
#include "launcher/preflight.h"

#ifndef GT_VERSION
#define GT_VERSION "dev"
#endif
#ifndef GT_CUPTI_LIBRARY_PATH
#define GT_CUPTI_LIBRARY_PATH ""
#endif
#ifndef GT_CUDA_VERSION
#define GT_CUDA_VERSION 0
#endif
#ifndef GT_INJECT_REL_FROM_BINDIR
#define GT_INJECT_REL_FROM_BINDIR ""
#endif

using namespace gt;
using namespace gt::config;
using namespace gt::launcher;

namespace {

bool Exists(const std::string& p) {
  return access(p.c_str(), F_OK) == 0;
}

std::string SelfDir() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  buf[n] = 0;
  std::string s(buf);
  return s.substr(0, s.find_last_of('/'));
}

std::string FindInjectionLibrary(const LaunchOptions& o) {
  return ResolveInjectionLibrary(o.inject_lib, env::Get(env::Var::kInjectLib), SelfDir(),
                                 GT_INJECT_REL_FROM_BINDIR, Exists);
}

// The `gtrace` CLI that does the uploading: the collector itself links no HTTP code.
std::string FindGtraceCli() {
  if (const char* e = env::Get(env::Var::kCli)) return e;
  std::string dir = SelfDir();
  for (const char* rel : {"/gtrace", "/../viewer/cli/gtrace", "/../bin/gtrace"}) {
    std::string p = dir + rel;
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return "gtrace";  // from PATH
}

// Runs `gtrace upload FILE --server URL`; its stdout (the link) goes straight to ours. Returns its exit
// status.
int UploadTrace(const std::string& file, const std::string& url) {
  std::string cli = FindGtraceCli();
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    execlp(cli.c_str(), cli.c_str(), "upload", file.c_str(), "--server", url.c_str(),
           static_cast<char*>(nullptr));
    std::fprintf(stderr, "gcollect: error: cannot run '%s' for --upload: %s\n", cli.c_str(), strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string AbsolutePath(const std::string& p) {
  if (!p.empty() && p[0] == '/') return p;
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof cwd)) return p;
  return std::string(cwd) + "/" + p;
}

void RemoveTree(const std::string& dir) {
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n == "." || n == "..") continue;
      unlink((dir + "/" + n).c_str());
    }
    closedir(d);
  }
  rmdir(dir.c_str());
}

std::string Hostname() {
  char buf[256] = {0};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

std::string Joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& a : v) {
    if (!s.empty()) s += ' ';
    s += a;
  }
  return s;
}

// Anchors for the whole run, not only its ends: a merge places this host on other hosts' clocks from them and
// can fit drift over a long run.
class ClockAnchors {
 public:
  explicit ClockAnchors(std::chrono::milliseconds every) {
    syncs_.push_back(ReadClockSync());
    thread_ = std::thread([this, every] {
      std::unique_lock<std::mutex> lock(mu_);
      while (!cv_.wait_for(lock, every, [this] { return stop_; })) syncs_.push_back(ReadClockSync());
    });
  }
  ~ClockAnchors() { Stop(); }
  std::vector<ClockSync> Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!stop_) syncs_.push_back(ReadClockSync());
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    return syncs_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::vector<ClockSync> syncs_;
  std::thread thread_;
};

// Less than 1 MiB left for us: writes there are failing or about to.
bool DiskFull(const std::string& path) {
  struct statvfs v {};
  return statvfs(path.c_str(), &v) == 0 && uint64_t(v.f_bavail) * v.f_frsize < (1u << 20);
}

// bin/../lib/gtrace/libgtrace_inject.so reads better (and in /proc/PID/environ) as /usr/lib/gtrace/...
std::string CanonicalPath(const std::string& p) {
  char* real = realpath(p.c_str(), nullptr);
  if (!real) return AbsolutePath(p);
  std::string r = real;
  free(real);
  return r;
}

int Fail(int code, const std::string& msg) {
  std::fprintf(stderr, "gcollect: error: %s\n", msg.c_str());
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto parsed = ParseOptions(args);
  if (!parsed.ok()) {
    std::fprintf(stderr, "gcollect: error: %s\n", parsed.status().message().c_str());
    return 2;
  }
  LaunchOptions o = std::move(*parsed);
  if (o.help) {
    std::fputs(UsageText().c_str(), stdout);
    return 0;
  }
  if (o.version) {
    // The build facts a bug report needs, and where this gcollect finds its injection library (an installed
    // gcollect must find the installed one, never a build tree's).
    std::printf("gcollect %s\n", GT_VERSION);
    std::printf("built with CUDA %s (CUPTI %s)\n", FormatCudaVersion(GT_CUDA_VERSION).c_str(),
                GT_CUPTI_LIBRARY_PATH);
    std::string inject = FindInjectionLibrary(o);
    std::printf("injection library: %s\n",
                inject.empty() || !Exists(inject) ? "not found" : CanonicalPath(inject).c_str());
    return 0;
  }

  std::string why;
  if (ResolveProgram(o.app[0], &why).empty()) return Fail(127, "cannot run '" + o.app[0] + "': " + why);
  std::string inject = FindInjectionLibrary(o);
  if (inject.empty() || !Exists(inject))
    return Fail(
        2, "injection library libgtrace_inject.so not found (looked beside gcollect; set GTRACE_INJECT_LIB)");
  inject = CanonicalPath(inject);
  // Nothing stops the app from running: without a driver or CUPTI it runs as it would without gcollect, and
  // the warning says why the trace holds no GPU activity.
  const GpuReadiness readiness = ProbeGpuReadiness(inject);
  const std::string gpu_problem = GpuReadinessProblem(readiness, GT_CUDA_VERSION);
  if (!gpu_problem.empty()) std::fprintf(stderr, "gcollect: warning: %s\n", gpu_problem.c_str());
  const bool inject_loads = readiness.inject_load_error.empty();

  std::string output;
  if (o.output.empty()) {
    output = DefaultOutputPath(o.app[0], Exists);
  } else {
    auto expanded = ExpandOutputPattern(o.output, Hostname(), long(getpid()),
                                        [](const char* n) { return std::getenv(n); });
    if (!expanded.ok()) return Fail(2, expanded.status().message());
    output = NormalizeOutputPath(*expanded);
  }
  if (Exists(output) && !o.force_overwrite)
    return Fail(2, output + " already exists; pass -f to replace it or choose another name with -o");
  std::string parts_dir = AbsolutePath(output + ".parts");
  if (Exists(parts_dir)) {
    if (!o.force_overwrite)
      return Fail(2, parts_dir + " holds the parts of an interrupted run: `gtrace recover " + parts_dir +
                         "` turns them into a trace (or pass -f to discard them)");
    RemoveTree(parts_dir);
  }
  if (mkdir(parts_dir.c_str(), 0755) != 0)
    return Fail(2, "cannot create " + parts_dir + ": " + std::strerror(errno));

  // gcollect's own part: metadata, the root process, GPU metrics.
  std::string own_part = parts_dir + "/gcollect.gtrace";
  auto sink = MakeFileSink(own_part, /*overwrite=*/false);
  if (!sink.ok()) return Fail(2, sink.status().ToString());
  auto writer_or = TraceWriter::Create(std::move(*sink));
  if (!writer_or.ok()) return Fail(2, writer_or.status().ToString());
  std::unique_ptr<TraceWriter> writer = std::move(*writer_or);
  std::mutex writer_mu;

  Config config;
  config.kinds = o.kinds;
  config.parts_dir = parts_dir;
  config.capture = o.capture;
  config.capture_nvtx_name = o.capture_nvtx_name;
  config.launcher_pid = static_cast<uint32_t>(getpid());
  config.nccl_plugin = o.nccl_plugin;
  config.cpu_sample_hz = o.cpu_sample_hz;
  config.cpu_sample_max_overhead_pct = o.cpu_sample_max_overhead_pct;
  config.osrt_threshold_ns = o.osrt_threshold_ns;
  if (o.pc_sampling_period_exp) {  // rides the timeline run (the counters run builds its own Config)
    config.modules = config.modules.empty() ? "pcsampling" : config.modules + ",pcsampling";
    config.pc_sampling_period_exp = o.pc_sampling_period_exp;
  }
  int64_t start_ns = TraceClockNow();
  if (o.delay_s > 0) config.window_start_ns = start_ns + static_cast<int64_t>(o.delay_s * 1e9);
  if (o.duration_s > 0)
    config.window_end_ns = (config.window_start_ns ? config.window_start_ns : start_ns) +
                           static_cast<int64_t>(o.duration_s * 1e9);

  TraceMetadata meta;
  meta.entries = {{"tool", "gcollect"},
                  {"tool_version", GT_VERSION},
                  {"command_line", Joined(o.app)},
                  {"host", Hostname()},
                  {"boot_id", ReadBootId()},
                  {"trace_kinds", FormatTraceKinds(o.counters_only ? kTraceKernel : o.kinds)},
                  {"clock", "CLOCK_MONOTONIC"}};
  if (o.capture == CaptureMode::kProfilerApi) meta.entries.emplace_back("capture_range", "cudaProfilerApi");
  if (o.capture == CaptureMode::kNvtx)
    meta.entries.emplace_back("capture_range", "nvtx:" + o.capture_nvtx_name);
  ClockAnchors anchors(std::chrono::seconds(10));
  if (!gpu_problem.empty()) {
    std::lock_guard<std::mutex> lock(writer_mu);
    writer->Add(
        MakeLoss(writer->Intern("gpu_unavailable"), Severity::kWarning, 0, writer->Intern(gpu_problem)));
  }

  NvmlSampler sampler;
  if (o.gpu_metrics) {
    Status s = sampler.Start(writer.get(), &writer_mu, o.gpu_metrics_interval_ms);
    if (!s.ok()) {
      std::fprintf(stderr, "gcollect: warning: --gpu-metrics unavailable: %s\n", s.message().c_str());
      std::lock_guard<std::mutex> lock(writer_mu);
      writer->Add(MakeLoss(writer->Intern("gpu_metrics_unavailable"), Severity::kWarning, 0,
                           writer->Intern(s.message())));
    }
  }

  std::vector<EnvVar> env;
  auto setter = [](void* ctx, const char* n, const char* v) {
    static_cast<std::vector<EnvVar>*>(ctx)->push_back({n, v});
  };
  // A pass is one run of the app. The timeline is pass 1; the counters module (range profiler) adds a second
  // pass with config.modules = "counters" and its own parts directory, merged after this one.
  std::vector<EnvVar> pass_env;
  if (o.counters_only) {  // the one run is a counters run (kernel records + counters, no timeline)
    AppendCountersRunEnv(o, config, /*self_describing_root=*/false, &pass_env);
    PrintCountersPlan(o, o.cache_control_all ? "run 1 (--counters-only, no timeline)"
                                             : "one run (--counters-only, no timeline)");
  } else {
    ConfigToEnv(config, setter, &pass_env);
    // NCCL's profiler plugin, in the timeline run only (the counters runs record kernels, not NCCL).
    std::string nccl_warning;
    const std::string plugin =
        inject_loads ? NcclProfilerPluginValue(o.nccl_plugin, std::getenv("NCCL_PROFILER_PLUGIN"), inject,
                                               &nccl_warning)
                     : std::string();
    if (!plugin.empty()) pass_env.push_back({"NCCL_PROFILER_PLUGIN", plugin});
    if (!nccl_warning.empty() && !o.quiet)
      std::fprintf(stderr, "gcollect: warning: %s\n", nccl_warning.c_str());
  }
  // A library that cannot load is not handed to the driver, NVTX or ld.so: each would fail in every process.
  if (inject_loads) env.push_back({"CUDA_INJECTION64_PATH", inject});
  if (inject_loads && !o.counters_only && (config::WantsNvtx(o.kinds) || o.capture == CaptureMode::kNvtx))
    env.push_back({"NVTX_INJECTION64_PATH", inject});
  if (o.quiet) env.push_back({env::Name(env::Var::kQuiet), "1"});
  // Preloading the injection library (1) loads the toolkit's libcupti it was built against before a
  // framework's same-soname copy, and (2) lets it see an app's own cuptiSubscribe calls (second-client
  // warning). It does nothing in a process until CUDA or NVTX start it.
  const char* user_preload = std::getenv("LD_PRELOAD");
  const auto preload_with = [&](const std::string& ours) {
    return user_preload && *user_preload ? ours + ":" + user_preload : ours;
  };
  const std::string inject_preload = inject_loads && !env::Get(env::Var::kNoPreload) ? inject : std::string();
  if (!inject_preload.empty()) env.push_back({"LD_PRELOAD", preload_with(inject_preload)});
  const std::vector<EnvVar> base_env = env;  // a counters run (--counters) reuses it with its own Config
  // The timeline run only (a counters run records neither library calls nor waits):
  if (!o.counters_only) {
    // --trace=osrt: the libc-only shim goes first, so every process's blocking calls reach it (it also runs
    // where the injection never starts, and counts what it could not hand over). GTRACE_NO_PRELOAD leaves it:
    // it is there only when asked for, and carries no sanitizer-unfriendly runtime.
    if (o.kinds & config::kTraceOsrt) {
      const std::string shim = OsrtShimPath(inject);
      if (!shim.empty()) {
        const std::string value = preload_with(inject_preload.empty() ? shim : shim + ":" + inject_preload);
        bool replaced = false;
        for (auto& e : env)
          if (e.name == "LD_PRELOAD") e.value = value, replaced = true;
        if (!replaced) env.push_back({"LD_PRELOAD", value});
      } else if (!o.quiet) {
        std::fprintf(stderr,
                     "gcollect: warning: --trace=osrt: libgtrace_osrt.so not found beside %s; OS runtime "
                     "waits are not recorded\n",
                     inject.c_str());
      }
    }
    AppendLibraryTraceEnv(
        o.kinds, [](const char* n) { return std::getenv(n); }, &env);
  }
  for (auto& e : pass_env) env.push_back(e);

  AppExit app = RunApp(o.app, env, o.wait_children_s, nullptr);
  int64_t exit_seen_ns = TraceClockNow();
  if (!app.started) {
    sampler.Stop();
    writer.reset();
    RemoveTree(parts_dir);
    return Fail(127, app.error);
  }
  sampler.Stop();
  {
    std::lock_guard<std::mutex> lock(writer_mu);
    ProcessRecord p;
    p.pid = static_cast<uint32_t>(app.pid);
    p.parent_pid = static_cast<uint32_t>(getpid());
    std::string base =
        o.app[0].substr(o.app[0].find_last_of('/') == std::string::npos ? 0 : o.app[0].find_last_of('/') + 1);
    p.name = writer->Intern(base);
    p.command_line = writer->Intern(Joined(o.app));
    p.start_ns = app.start_ns;
    p.end_ns = app.end_ns;
    p.exit_code = app.signaled ? app.signal : app.exit_code;
    p.exit_kind = static_cast<uint8_t>(app.signaled ? ExitKind::kSignaled : ExitKind::kExited);
    const JobIdentity job = ReadJobIdentity([](const char* n) { return std::getenv(n); });  // the app's, too
    p.host = writer->Intern(Hostname());
    p.boot_id = writer->Intern(ReadBootId());
    p.job = writer->Intern(job.job);
    p.rank = job.rank, p.local_rank = job.local_rank, p.world_size = job.world_size;
    writer->Add(p);
    if (app.still_running) {
      writer->Add(MakeLoss(
          writer->Intern("processes_still_running"), Severity::kWarning, 1,
          writer->Intern("descendants of the app were still running when gcollect stopped "
                         "waiting (" +
                         std::to_string(o.wait_children_s) + " s); their traces end at their last flush")));
    }
    if (o.kinds & config::kTraceOsrt) {
      const OsrtUnrecorded u = CollectOsrtUnrecorded(parts_dir);
      if (u.waits)
        writer->Add(MakeLoss(
            writer->Intern("osrt_waits_unrecorded"), Severity::kInfo, u.waits,
            writer->Intern(std::to_string(u.waits) + " OS runtime waits in " + std::to_string(u.processes) +
                           " processes that never started CUDA (no injection to write "
                           "them): not in the trace")));
    }
    meta.entries.emplace_back("exit_status", std::to_string(app.ShellStatus()));
    meta.clock_syncs = anchors.Stop();
    writer->SetMetadata(meta);
    Status s = writer->Finish();
    if (!s.ok()) std::fprintf(stderr, "gcollect: warning: %s\n", s.ToString().c_str());
  }
  writer.reset();

  auto merged = MergeParts(own_part, parts_dir, output, o.force_overwrite);
  if (!merged.ok()) {
    std::fprintf(stderr,
                 "gcollect: error: %s. Every recorded part is kept in %s: `gtrace info %s` reads it as it is;"
                 " `gtrace recover %s` writes the trace%s\n",
                 merged.status().message().c_str(), parts_dir.c_str(), parts_dir.c_str(), parts_dir.c_str(),
                 DiskFull(parts_dir) ? " once the disk has space again" : "");
    return app.ShellStatus();
  }
  if (DiskFull(parts_dir))
    std::fprintf(
        stderr,
        "gcollect: warning: the disk holding %s is full: a process's part may stop where the disk filled"
        " (the summary below names what was cut short)\n",
        output.c_str());
  for (const auto& p : merged->problems) std::fprintf(stderr, "gcollect: warning: %s\n", p.c_str());
  if (!o.keep_parts) RemoveTree(parts_dir);
  if (o.counters_only)
    FinishCountersOnly(o, config, base_env, output);  // kernels from the counters run, no timeline
  else if (o.counter_sets)
    RunCountersPass(o, config, base_env, output);  // run 2 of 2, joined into `output`
  double finalize_s = (TraceClockNow() - exit_seen_ns) / 1e9;

  // Summary from the file itself: what the user gets is what was written. Built while reading
  // (SummaryBuilder), so a run of 50 M kernels does not need the records in memory to report on them.
  auto bytes = ReadFileBytes(output);
  SummaryBuilder builder;
  LoadReport report;
  if (bytes.ok()) {
    auto r = ReadTrace(
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size()), builder);
    if (r.ok()) report = *r;
  }
  bytes = std::string();  // the file's bytes go before the idle-share sort needs its memory
  TraceSummary summary = builder.Finish();
  if (app.signaled) {
    std::fprintf(stderr,
                 "gcollect: the app was terminated by signal %d (%s); the trace holds what was flushed\n",
                 app.signal, strsignal(app.signal));
  } else if (app.exit_code != 0 && !o.quiet) {
    std::fprintf(stderr, "gcollect: the app exited with status %d\n", app.exit_code);
  }
  // Not when the warning before the run said why, nor when the trace is cut short (a full disk).
  if (!builder.saw_devices() && report.clean() && gpu_problem.empty()) {
    std::fprintf(
        stderr, "gcollect: no process of the app initialized CUDA, so no GPU activity was recorded%s\n",
        merged->injected_processes ? " (NVTX only)" : " (a CPU-only program, or CUDA failed to start)");
  }
  for (const auto& w : summary.warnings)
    if (gpu_problem.empty() || w.find(gpu_problem) == std::string::npos)  // printed before the run
      std::fprintf(stderr, "gcollect: warning: %s\n", w.c_str());
  if (!o.quiet) {
    summary.warnings.clear();
    std::string text = FormatSummary(summary, output, merged->bytes);
    std::fputs(text.c_str(), stderr);
    std::fprintf(stderr, "  finalized %.3f s after the app exited\n", finalize_s);
  }
  if (!report.clean())  // data lost: said under --quiet too
    std::fprintf(stderr,
                 "gcollect: warning: %" PRIu64
                 " chunk(s) lost, %s (a process ended without finishing its part; "
                 "`gtrace info` names it)\n",
                 report.chunks_lost, report.truncated ? "truncated segment(s)" : "no truncation");
  if (!o.upload_url.empty()) {
    // The app's exit status stays gcollect's; a failed upload is a warning, and the local trace is kept.
    int rc = UploadTrace(output, o.upload_url);
    if (rc != 0)
      std::fprintf(stderr,
                   "gcollect: warning: upload to %s failed (gtrace upload exited %d); the trace is at %s\n",
                   o.upload_url.c_str(), rc, output.c_str());
  }
  return app.ShellStatus();
}

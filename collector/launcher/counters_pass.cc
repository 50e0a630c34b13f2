#include "launcher/counters_pass.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "counters/join.h"
#include "counters/metric_sets.h"
#include "counters/selection.h"
#include "gt/trace_data.h"
#include "gt/writer.h"
#include "launcher/launcher.h"

namespace gt::launcher {

using config::CaptureMode;
using config::Config;
using config::ConfigToEnv;
using config::EnvVar;
using config::kTraceKernel;

namespace {

std::vector<std::string> PartFiles(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n.size() > 7 && n.compare(n.size() - 7, 7, ".gtrace") == 0) out.push_back(dir + "/" + n);
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void RemoveDir(const std::string& dir) {
  for (const auto& f : PartFiles(dir)) unlink(f.c_str());
  rmdir(dir.c_str());
}

// With --cache-control all the metrics that do not depend on the cache state need a run of their own under
// CUPTI's kernel replay (selection.h, MetricSubset); the own-replay run collects the cache-sensitive ones.
bool NeedsKernelReplayRun(const LaunchOptions& o) {
  return o.cache_control_all &&
         !counters::MetricsOfSubset(counters::MetricsForSets(o.counter_sets), counters::MetricSubset::kOther)
              .empty();
}

counters::CountersOptions CountersOptionsFor(const LaunchOptions& o) {
  counters::CountersOptions co;
  co.sets = o.counter_sets;
  co.kernel_regex = o.kernel_regex;
  co.launch_skip = o.launch_skip;
  co.launch_count = o.launch_count;
  co.per_name_limit = o.counters_per_kernel >= 0 ? static_cast<uint32_t>(o.counters_per_kernel)
                      : o.launch_count           ? 0
                                                 : 3;
  co.flush_caches = o.cache_control_all;
  if (o.cache_control_all) co.subset = counters::MetricSubset::kCacheSensitive;
  return co;
}

// The extra run's options: the other metrics, by CUPTI's kernel replay.
counters::CountersOptions KernelReplayRunOptions(const LaunchOptions& o) {
  counters::CountersOptions co = CountersOptionsFor(o);
  co.flush_caches = false;
  co.subset = counters::MetricSubset::kOther;
  return co;
}

// Reads trace files, saying on stderr what they lack.
Status LoadSayingWarnings(const std::vector<std::string>& paths, TraceData* out) {
  std::vector<std::string> warnings;
  Status s = counters::LoadTraceFiles(paths, out, &warnings);
  for (const auto& w : warnings) fprintf(stderr, "gcollect: warning: %s\n", w.c_str());
  return s;
}

bool WriteTrace(const TraceData& data, const std::string& output) {
  const std::string tmp = output + ".counters.tmp";
  auto sink = MakeFileSink(tmp, /*overwrite=*/true);
  if (!sink.ok()) {
    fprintf(stderr, "gcollect: error: %s\n", sink.status().ToString().c_str());
    return false;
  }
  Status s;
  auto writer = TraceWriter::Create(std::move(*sink));
  if (writer.ok()) {
    s = WriteTraceData(data, **writer);
    if (s.ok()) s = (*writer)->Finish();
  } else {
    s = writer.status();
  }
  writer = Status(StatusCode::kInternal, "closed");  // close the file before renaming it
  if (!s.ok() || rename(tmp.c_str(), output.c_str()) != 0) {
    fprintf(stderr, "gcollect: error: writing the counters trace: %s\n",
            s.ok() ? strerror(errno) : s.ToString().c_str());
    unlink(tmp.c_str());
    return false;
  }
  return true;
}

void PrintReport(const LaunchOptions& o, const counters::JoinReport& report) {
  if (!o.quiet || report.unmatched_launches) {
    fprintf(stderr, "gcollect: counters: %s\n", report.Summary().c_str());
    for (size_t i = 0; i < report.problems.size() && i < 10; ++i)
      fprintf(stderr, "  unmatched: %s\n", report.problems[i].c_str());
  }
  if (!o.quiet)
    for (size_t i = 0; i < report.not_profiled.size() && i < 20; ++i)
      fprintf(stderr, "  %s\n", report.not_profiled[i].c_str());
}

}  // namespace

void PrintCountersPlan(const LaunchOptions& o, const char* run) {
  if (o.quiet) return;
  counters::CountersOptions co = CountersOptionsFor(o);
  std::string which = co.per_name_limit
                          ? "the first " + std::to_string(co.per_name_limit) + " launches of each kernel"
                          : std::string("every matching launch");
  fprintf(stderr,
          "gcollect: %s: counters (%s) on %s%s%s, L2 %s before each; each profiled launch is replayed once "
          "per pass (about 14 ms per pass), the rest run at full speed; graph launches with a profiled "
          "kernel are replayed node by node\n",
          run, counters::CounterSetsToString(co.sets).c_str(), which.c_str(),
          co.kernel_regex.empty() ? "" : " matching ", co.kernel_regex.c_str(),
          co.flush_caches ? "flushed" : "not flushed (--cache-control none)");
}

void AppendCountersRunEnv(const LaunchOptions& o, Config c, bool self_describing_root,
                          std::vector<EnvVar>* env) {
  AppendCountersRunEnv(CountersOptionsFor(o), c, self_describing_root, env);
}

void AppendCountersRunEnv(const counters::CountersOptions& co, Config c, bool self_describing_root,
                          std::vector<EnvVar>* env) {
  c.kinds =
      kTraceKernel;  // the counters run records its kernels only to name them; timestamps come from run 1
  c.capture = CaptureMode::kNone;
  c.window_start_ns = c.window_end_ns = 0;
  c.modules = "counters";
  if (self_describing_root) c.launcher_pid = 0;
  auto setter = [](void* ctx, const char* n, const char* v) {
    static_cast<std::vector<EnvVar>*>(ctx)->push_back({n, v});
  };
  ConfigToEnv(c, setter, env);
  counters::CountersOptionsToEnv(co, setter, env);
}

namespace {

// Runs the app once more as a counters run with `co`, its processes' parts in a fresh `parts` folder, and
// loads what it recorded into `out`. False (said on stderr) when nothing could be read.
bool RunCountersApp(const LaunchOptions& o, const Config& timeline_config,
                    const std::vector<EnvVar>& base_env, const counters::CountersOptions& co,
                    const std::string& parts, const char* label, TraceData* out) {
  RemoveDir(parts);
  if (mkdir(parts.c_str(), 0755) != 0) {
    fprintf(stderr, "gcollect: error: cannot create %s: %s; the trace has no counters from the %s\n",
            parts.c_str(), strerror(errno), label);
    return false;
  }
  Config c = timeline_config;
  c.parts_dir = parts;
  std::vector<EnvVar> env;
  for (const auto& e : base_env)
    if (e.name != "NVTX_INJECTION64_PATH") env.push_back(e);
  // Every process of this run describes itself (the root too): the join pairs processes by those names.
  AppendCountersRunEnv(co, c, /*self_describing_root=*/true, &env);
  AppExit app = RunApp(o.app, env, o.wait_children_s, nullptr);
  if (!app.started) {
    fprintf(stderr, "gcollect: error: the %s could not start: %s\n", label, app.error.c_str());
    RemoveDir(parts);
    return false;
  }
  if (app.ShellStatus() != 0 && !o.quiet)
    fprintf(stderr, "gcollect: the %s exited with status %d; joining what it recorded\n", label,
            app.ShellStatus());
  Status s = LoadSayingWarnings(PartFiles(parts), out);
  if (!s.ok()) {
    fprintf(stderr, "gcollect: error: reading the %s: %s (parts kept in %s)\n", label, s.ToString().c_str(),
            parts.c_str());
    return false;
  }
  if (!o.keep_parts) RemoveDir(parts);
  return true;
}

// --cache-control all: the metrics that do not depend on the cache state, from a run of their own under
// CUPTI's kernel replay, joined into `trace`.
void SupplementKernelReplayMetrics(const LaunchOptions& o, const Config& config,
                                   const std::vector<EnvVar>& base_env, const std::string& output,
                                   const char* label, TraceData& trace) {
  if (!o.quiet)
    fprintf(
        stderr,
        "gcollect: %s: instruction, stall and occupancy counters under CUPTI's kernel replay (gtrace's own "
        "replay, with the L2 flushed, gave DRAM, L2 and time)\n",
        label);
  TraceData other;
  if (!RunCountersApp(o, config, base_env, KernelReplayRunOptions(o), output + ".replay.parts",
                      "kernel-replay run", &other))
    return;
  counters::JoinReport report =
      counters::JoinCountersIntoTimeline(trace, other, counters::JoinMode::kSupplement);
  PrintReport(o, report);
}

}  // namespace

bool FinishCountersOnly(const LaunchOptions& o, const Config& config, const std::vector<EnvVar>& base_env,
                        const std::string& output) {
  TraceData data;
  Status s = LoadSayingWarnings({output}, &data);
  if (!s.ok()) {
    fprintf(stderr, "gcollect: error: reading the counters run: %s\n", s.ToString().c_str());
    return false;
  }
  // Before the counters-only layout: the supplement pairs launches by their ordinals among all kernels.
  if (NeedsKernelReplayRun(o)) SupplementKernelReplayMetrics(o, config, base_env, output, "run 2 of 2", data);
  counters::JoinReport report = counters::BuildCountersOnlyTrace(data);
  PrintReport(o, report);
  return WriteTrace(data, output);
}

bool RunCountersPass(const LaunchOptions& o, const Config& timeline_config,
                     const std::vector<EnvVar>& base_env, const std::string& output) {
  const bool patched_run = NeedsKernelReplayRun(o);
  PrintCountersPlan(o, patched_run ? "run 2 of 3" : "run 2 of 2");
  TraceData timeline, counters_data;
  if (!RunCountersApp(o, timeline_config, base_env, CountersOptionsFor(o), output + ".counters.parts",
                      "counters run", &counters_data))
    return false;
  Status s = LoadSayingWarnings({output}, &timeline);
  if (!s.ok()) {
    fprintf(stderr, "gcollect: error: reading the timeline run: %s\n", s.ToString().c_str());
    return false;
  }
  counters::JoinReport report = counters::JoinCountersIntoTimeline(timeline, counters_data);
  PrintReport(o, report);
  if (patched_run)
    SupplementKernelReplayMetrics(o, timeline_config, base_env, output, "run 3 of 3", timeline);
  return WriteTrace(timeline, output);
}

}  // namespace gt::launcher

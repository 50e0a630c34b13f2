#include "counters/counters_pass.h"

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

namespace gt::collector {
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
  return co;
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
          "per pass (about 14 ms per pass), the rest run at full speed; graph-launched kernels are not "
          "profiled\n",
          run, counters::CounterSetsToString(co.sets).c_str(), which.c_str(),
          co.kernel_regex.empty() ? "" : " matching ", co.kernel_regex.c_str(),
          co.flush_caches ? "flushed" : "not flushed (--cache-control none)");
}

void AppendCountersRunEnv(const LaunchOptions& o, Config c, bool self_describing_root,
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
  counters::CountersOptionsToEnv(CountersOptionsFor(o), setter, env);
}

bool FinishCountersOnly(const LaunchOptions& o, const std::string& output) {
  TraceData data;
  std::vector<std::string> warnings;
  Status s = counters::LoadTraceFiles({output}, &data, &warnings);
  for (const auto& w : warnings) fprintf(stderr, "gcollect: warning: %s\n", w.c_str());
  if (!s.ok()) {
    fprintf(stderr, "gcollect: error: reading the counters run: %s\n", s.ToString().c_str());
    return false;
  }
  counters::JoinReport report = counters::BuildCountersOnlyTrace(data);
  PrintReport(o, report);
  return WriteTrace(data, output);
}

bool RunCountersPass(const LaunchOptions& o, const Config& timeline_config,
                     const std::vector<EnvVar>& base_env, const std::string& output) {
  const std::string parts = output + ".counters.parts";
  RemoveDir(parts);
  if (mkdir(parts.c_str(), 0755) != 0) {
    fprintf(stderr, "gcollect: error: cannot create %s: %s; the trace has no counters\n", parts.c_str(),
            strerror(errno));
    return false;
  }
  Config c = timeline_config;
  c.parts_dir = parts;
  std::vector<EnvVar> env;
  for (const auto& e : base_env)
    if (e.name != "NVTX_INJECTION64_PATH") env.push_back(e);
  // Every process of this run describes itself (the root too): the join pairs processes by those names.
  AppendCountersRunEnv(o, c, /*self_describing_root=*/true, &env);
  PrintCountersPlan(o, "run 2 of 2");
  AppExit app = RunApp(o.app, env, o.wait_children_s, nullptr);
  if (!app.started) {
    fprintf(stderr, "gcollect: error: the counters run could not start: %s\n", app.error.c_str());
    RemoveDir(parts);
    return false;
  }
  if (app.ShellStatus() != 0 && !o.quiet)
    fprintf(stderr, "gcollect: the counters run exited with status %d; joining what it recorded\n",
            app.ShellStatus());

  TraceData timeline, counters_data;
  std::vector<std::string> warnings;
  Status s = counters::LoadTraceFiles({output}, &timeline, &warnings);
  if (s.ok()) s = counters::LoadTraceFiles(PartFiles(parts), &counters_data, &warnings);
  for (const auto& w : warnings) fprintf(stderr, "gcollect: warning: %s\n", w.c_str());
  if (!s.ok()) {
    fprintf(stderr, "gcollect: error: reading the counters run: %s (parts kept in %s)\n",
            s.ToString().c_str(), parts.c_str());
    return false;
  }
  counters::JoinReport report = counters::JoinCountersIntoTimeline(timeline, counters_data);
  PrintReport(o, report);
  if (!WriteTrace(timeline, output)) return false;
  if (!o.keep_parts) RemoveDir(parts);
  return true;
}

}  // namespace gt::collector

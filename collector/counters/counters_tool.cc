// gtrace-counters: the counters module's offline helper.
//   plan  [--chip GH100] [--counters SET] [--list]   metric names and replay passes, no GPU needed
//   join  TIMELINE.gtrace COUNTERS.gtrace... -o OUT   the two-run join (what gcollect --counters does)
//   dump  TRACE.gtrace                               kernel,launch,metric,value CSV (bench/counters compares
//   it)
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "counters/host_config.h"
#include "counters/join.h"
#include "counters/metric_sets.h"
#include "counters/selection.h"
#include "gt/reader.h"
#include "gt/trace_data.h"
#include "gt/writer.h"

using namespace gt;

namespace {

int Usage(int code) {
  fprintf(code ? stderr : stdout,
          "usage: gtrace-counters plan [--chip GH100] [--counters roofline,stalls,...|default|all] [--list]\n"
          "       gtrace-counters join TIMELINE.gtrace COUNTERS.gtrace... -o OUT.gtrace [-f]\n"
          "       gtrace-counters dump TRACE.gtrace\n");
  return code;
}

bool Load(const std::string& path, TraceData* data) {
  auto bytes = ReadFileBytes(path);
  if (!bytes.ok()) {
    fprintf(stderr, "gtrace-counters: %s: %s\n", path.c_str(), bytes.status().ToString().c_str());
    return false;
  }
  auto r = ReadTrace(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size()),
                     *data);
  if (!r.ok()) {
    fprintf(stderr, "gtrace-counters: %s: %s\n", path.c_str(), r.status().ToString().c_str());
    return false;
  }
  if (!r->clean())
    fprintf(stderr, "gtrace-counters: warning: %s is damaged; using what is intact\n", path.c_str());
  return true;
}

int Plan(int argc, char** argv) {
  std::string chip = "GH100", spec = "default";
  bool list = false;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--chip" && i + 1 < argc)
      chip = argv[++i];
    else if (a == "--counters" && i + 1 < argc)
      spec = argv[++i];
    else if (a.rfind("--counters=", 0) == 0)
      spec = a.substr(11);
    else if (a == "--list")
      list = true;
    else
      return Usage(2);
  }
  auto sets = counters::ParseCounterSets(spec);
  if (!sets.ok()) {
    fprintf(stderr, "gtrace-counters: %s\n", sets.status().message().c_str());
    return 2;
  }
  auto plan = counters::PlanMetricsForChip(chip, counters::MetricsForSets(*sets));
  if (!plan.ok()) {
    fprintf(stderr, "gtrace-counters: %s\n", plan.status().ToString().c_str());
    return 1;
  }
  printf("%s: %s = %zu metrics in %zu replay passes\n", chip.c_str(),
         counters::CounterSetsToString(*sets).c_str(), plan->metrics.size(), plan->passes);
  printf("estimated cost: %s\n", counters::EstimateCost(plan->passes, 0).Describe(plan->passes, 3).c_str());
  for (const auto& r : plan->rejected) printf("  not on this chip: %s\n", r.c_str());
  if (list)
    for (const auto& m : plan->metrics) printf("  %s\n", m.c_str());
  return 0;
}

int Join(int argc, char** argv) {
  std::vector<std::string> inputs;
  std::string out;
  bool force = false;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-o" && i + 1 < argc)
      out = argv[++i];
    else if (a == "-f")
      force = true;
    else
      inputs.push_back(a);
  }
  if (inputs.size() < 2 || out.empty()) return Usage(2);
  TraceData timeline, counters_data;
  if (!Load(inputs[0], &timeline)) return 1;
  std::vector<std::string> warnings;
  Status loaded = counters::LoadTraceFiles({inputs.begin() + 1, inputs.end()}, &counters_data, &warnings);
  for (const auto& w : warnings) fprintf(stderr, "gtrace-counters: warning: %s\n", w.c_str());
  if (!loaded.ok()) {
    fprintf(stderr, "gtrace-counters: %s\n", loaded.ToString().c_str());
    return 1;
  }
  counters::JoinReport report = counters::JoinCountersIntoTimeline(timeline, counters_data);
  fprintf(stderr, "gtrace-counters: %s\n", report.Summary().c_str());
  for (const auto& p : report.problems) fprintf(stderr, "  unmatched: %s\n", p.c_str());
  auto sink = MakeFileSink(out, force);
  if (!sink.ok()) {
    fprintf(stderr, "gtrace-counters: %s\n", sink.status().ToString().c_str());
    return 1;
  }
  auto writer = TraceWriter::Create(std::move(*sink));
  if (!writer.ok()) return 1;
  Status s = WriteTraceData(timeline, **writer);
  if (s.ok()) s = (*writer)->Finish();
  if (!s.ok()) {
    fprintf(stderr, "gtrace-counters: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}

int Dump(int argc, char** argv) {
  if (argc != 1) return Usage(2);
  TraceData t;
  if (!Load(argv[0], &t)) return 1;
  printf("pid,kernel,launch,metric,value,flags\n");
  for (const auto& m : t.kernel_metrics) {
    std::string name = t.Str(m.kernel_name);
    for (char& c : name)
      if (c == ',' || c == '"') c = ';';
    printf("%u,%s,%u,%s,%.17g,%u\n", m.pid, name.c_str(), m.launch_ordinal, t.Str(m.metric).c_str(), m.value,
           unsigned(m.flags));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage(2);
  std::string cmd = argv[1];
  if (cmd == "plan") return Plan(argc - 2, argv + 2);
  if (cmd == "join") return Join(argc - 2, argv + 2);
  if (cmd == "dump") return Dump(argc - 2, argv + 2);
  if (cmd == "--help" || cmd == "-h") return Usage(0);
  return Usage(2);
}

#include "summary_json.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "gt/viewer/profiled.h"
#include "gt/viewer/query.h"
#include "gt/viewer/summary.h"

namespace gt::cli {

namespace {

using nlohmann::json;
using viewer::SummaryOf;

json Row(const viewer::NameSummary& r) {
  json j = {{"name", r.name},     {"count", r.count},   {"total_ns", r.total_ns}, {"avg_ns", r.avg_ns},
            {"min_ns", r.min_ns}, {"max_ns", r.max_ns}, {"share", r.share}};
  if (r.bytes) j["bytes"] = r.bytes;
  return j;
}

json Rows(const std::vector<viewer::NameSummary>& rows) {
  json a = json::array();
  for (const auto& r : rows) a.push_back(Row(r));
  return a;
}

json Percent(double a, double b) {
  const double p = viewer::PercentChange(a, b);
  return std::isinf(p) ? json(nullptr) : json(p);
}

json Changes(const std::vector<viewer::NameChange>& changes) {
  json a = json::array();
  for (const auto& c : changes) {
    json j = {{"name", c.name},
              {"delta_ns", c.delta_ns()},
              {"change_pct", Percent(double(c.before.total_ns), double(c.after.total_ns))}};
    for (const auto& [key, side] : {std::pair{"before", &c.before}, std::pair{"after", &c.after}})
      j[key] = side->count
                   ? json{{"count", side->count}, {"total_ns", side->total_ns}, {"avg_ns", side->avg_ns}}
                   : json(nullptr);
    a.push_back(std::move(j));
  }
  return a;
}

json Trace(const viewer::TraceModel& m) {
  json devices = json::array();
  for (const auto& d : m.device_summaries)
    devices.push_back({{"id", d.device_id},
                       {"name", d.name},
                       {"span_ns", d.last_ns - d.first_ns},
                       {"busy_ns", d.busy_ns},
                       {"idle_share", d.idle_share()},
                       {"kernels", d.kernel_count},
                       {"memcpys", d.memcpy_count},
                       {"memsets", d.memset_count}});
  json losses = json::array();
  for (const auto& l : viewer::LossSummary(m))
    losses.push_back(
        {{"name", l.name}, {"severity", SeverityName(l.severity)}, {"count", l.count}, {"detail", l.detail}});
  return {{"format", viewer::SourceFormatName(m.format)},
          {"events", m.event_count},
          {"counter_samples", m.sample_count},
          {"duration_ns", m.last_ns - m.first_ns},
          {"devices", devices},
          {"losses", losses}};
}

}  // namespace

std::string StatsJson(const viewer::TraceModel& model) {
  json j = Trace(model);
  json gaps = json::array();
  for (const auto& g : viewer::ExplainIdleGaps(model, 10)) {
    json activity = json::array();
    for (const auto& a : g.activity)
      activity.push_back({{"name", a.name}, {"kind", a.api ? "api" : "range"}, {"overlap_ns", a.overlap_ns}});
    gaps.push_back({{"device_id", g.device_id},
                    {"start_ns", g.start_ns},
                    {"duration_ns", g.end_ns - g.start_ns},
                    {"cpu_activity", activity},
                    {"diagnosis", g.diagnosis}});
  }
  j["idle_gaps"] = gaps;
  // Per profiled kernel (launches merged): the counters' verdict, as `gtrace stats` prints it.
  json counters = json::array();
  const viewer::ProfiledKernels profiled = viewer::AnalyzeProfiledKernels(model);
  auto pct = [](const Quantity& q) { return q ? json(q.value) : json(nullptr); };
  for (size_t i = 0; i < profiled.kernels.size(); ++i) {
    const KernelAnalysis& a = profiled.kernels[i];
    counters.push_back({{"name", a.kernel_name},
                        {"pid", a.pid},
                        {"profiled_launches", a.launches},
                        {"time_per_launch_s", a.time_s ? json(a.time_s.value) : json(nullptr)},
                        {"total_gpu_time_s", profiled.kernel_total_time_s[i]},
                        {"compute_pct", pct(a.compute_pct)},
                        {"memory_pct", pct(a.memory_pct)},
                        {"bottleneck", BottleneckName(a.bottleneck)},
                        {"verdict", a.verdict},
                        {"flagged_values", a.flags.size()}});
  }
  j["kernel_counters"] = counters;
  for (SummaryOf what : {SummaryOf::kKernels, SummaryOf::kCopies, SummaryOf::kApi, SummaryOf::kNvtx})
    j[viewer::SummaryOfName(what)] = Rows(viewer::SummarizeByName(model, what));
  return j.dump(2) + "\n";
}

std::string DiffJson(const viewer::TraceModel& before, const std::string& before_label,
                     const viewer::TraceModel& after, const std::string& after_label) {
  json j;
  j["before"] = Trace(before);
  j["before"]["file"] = before_label;
  j["after"] = Trace(after);
  j["after"]["file"] = after_label;
  int64_t total[2] = {0, 0};
  for (SummaryOf what : {SummaryOf::kKernels, SummaryOf::kCopies, SummaryOf::kApi}) {
    const auto a = viewer::SummarizeByName(before, what), b = viewer::SummarizeByName(after, what);
    if (what == SummaryOf::kKernels) total[0] = viewer::TotalNs(a), total[1] = viewer::TotalNs(b);
    j[viewer::SummaryOfName(what)] = Changes(viewer::CompareSummaries(a, b));
  }
  j["total_kernel_ns"] = {
      {"before", total[0]}, {"after", total[1]}, {"change_pct", Percent(double(total[0]), double(total[1]))}};
  return j.dump(2) + "\n";
}

}  // namespace gt::cli

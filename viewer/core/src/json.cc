#include "gt/viewer/json.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "gt/sat_math.h"
#include "gt/viewer/collectives.h"
#include "gt/viewer/profiled.h"

namespace gt::viewer {

namespace {

using nlohmann::json;

// Trace strings are not guaranteed UTF-8 (imported or binary names): invalid bytes become U+FFFD instead of
// throwing, which the wasm build (no exceptions) could not survive.
std::string Dump(const json& j, int indent = -1) {
  std::string s = j.dump(indent, ' ', false, json::error_handler_t::replace);
  return indent >= 0 ? s + "\n" : s;
}

json Num(double v) {
  return std::isfinite(v) ? json(v) : json(nullptr);
}

json NameRowJson(const std::string& name, uint64_t count, int64_t total_ns, double avg_ns, int64_t min_ns,
                 int64_t max_ns, double share, uint64_t bytes) {
  return {{"name", name},     {"count", count},   {"total_ns", total_ns}, {"avg_ns", avg_ns},
          {"min_ns", min_ns}, {"max_ns", max_ns}, {"share", share},       {"bytes", bytes}};
}

json Rows(const std::vector<NameSummary>& rows, size_t limit = SIZE_MAX) {
  json a = json::array();
  for (size_t i = 0; i < rows.size() && i < limit; ++i) {
    const NameSummary& r = rows[i];
    a.push_back(NameRowJson(r.name, r.count, r.total_ns, r.avg_ns, r.min_ns, r.max_ns, r.share, r.bytes));
  }
  return a;
}

json CpuProfile(const CpuRangeProfile& p) {
  json hot = json::array();
  for (const HotFrame& h : p.hot)
    hot.push_back({{"frame", h.frame},
                   {"path", h.path},
                   {"kind", h.python ? "python" : "native"},
                   {"samples", h.samples},
                   {"share", h.share}});
  return {{"samples", p.samples},
          {"threads", p.threads},
          {"python_samples", p.python_samples},
          {"not_unwound", p.not_unwound},
          {"hot", hot}};
}

json Gaps(const std::vector<IdleGap>& gaps) {
  json a = json::array();
  for (const IdleGap& g : gaps) {
    json names = json::array(), activity = json::array();
    for (const GapActivity& x : g.activity) {
      names.push_back(x.name);
      json item = {{"name", x.name}, {"kind", x.kind()}, {"overlap_ns", x.overlap_ns}};
      if (!x.source.empty()) item["source"] = x.source;
      if (!x.thread.empty()) item["thread"] = x.thread;
      activity.push_back(std::move(item));
    }
    a.push_back({{"device_id", g.device_id},
                 {"start_ns", g.start_ns},
                 {"cpu_samples", CpuProfile(g.cpu)},
                 {"duration_ns", g.end_ns - g.start_ns},
                 {"activity", names},
                 {"cpu_activity", activity},
                 {"diagnosis", g.diagnosis}});
  }
  return a;
}

json Losses(const std::vector<LossStat>& losses) {
  json a = json::array();
  for (const LossStat& l : losses)
    a.push_back({{"name", l.name},
                 {"severity", SeverityName(l.severity)},
                 {"count", l.count},
                 {"pid", l.pid},
                 {"detail", l.detail}});
  return a;
}

json Percent(double a, double b) {
  const double p = PercentChange(a, b);
  return std::isinf(p) ? json(nullptr) : json(p);
}

json Changes(const std::vector<NameChange>& changes) {
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

json Devices(const TraceModel& m) {
  json devices = json::array();
  for (const auto& d : m.device_summaries)
    devices.push_back({{"id", d.device_id},
                       {"name", d.name},
                       {"span_ns", d.span_ns()},
                       {"busy_ns", d.busy_ns},
                       {"idle_share", d.idle_share()},
                       {"kernels", d.kernel_count},
                       {"memcpys", d.memcpy_count},
                       {"memsets", d.memset_count}});
  return devices;
}

json Trace(const TraceModel& m) {
  json devices = Devices(m);
  return {
      {"format", SourceFormatName(m.format)}, {"events", m.event_count}, {"counter_samples", m.sample_count},
      {"duration_ns", m.span_ns()},           {"devices", devices},      {"losses", Losses(LossSummary(m))}};
}

}  // namespace

std::string JsonQuote(std::string_view s) {
  return Dump(json(std::string(s)));
}

std::string JsonNumber(double v) {
  return Dump(Num(v));
}

std::string NameSummaryJson(const std::vector<NameSummary>& rows, size_t limit) {
  return Dump(Rows(rows, limit));
}

std::string KernelSummaryJson(const TraceModel& model, const std::vector<KernelSummaryRow>& rows) {
  json a = json::array();
  for (const KernelSummaryRow& r : rows)
    a.push_back(
        NameRowJson(model.Str(r.name), r.count, r.total_ns, r.avg_ns, r.min_ns, r.max_ns, r.share, 0));
  return Dump(a);
}

std::string FlameGraphJson(const TraceModel& model, std::span<const FlameNode> graph, uint32_t focus,
                           std::span<const FlameRect> layout) {
  const uint64_t total = graph.empty() ? 0 : graph[0].samples;
  json nodes = json::array();
  for (const FlameRect& r : layout) {
    if (r.node >= graph.size()) continue;
    const FlameNode& f = graph[r.node];
    const bool root = r.node == 0;
    const std::string& frame = model.Str(f.frame);
    const FrameParts parts = SplitFrame(frame, f.kind);
    nodes.push_back({{"node", r.node},
                     {"frame", root ? "all" : frame},
                     {"function", root ? "all" : parts.function},
                     {"location", parts.location},
                     {"kind", root                                    ? "root"
                              : f.kind == uint8_t(FrameKind::kPython) ? "python"
                                                                      : "native"},
                     {"depth", f.depth},
                     {"parent", f.parent},
                     {"samples", f.samples},
                     {"self_samples", f.self_samples},
                     {"share", total ? double(f.samples) / double(total) : 0.0},
                     {"x0", r.x0},
                     {"x1", r.x1},
                     {"above_focus", r.above_focus}});
  }
  return Dump(json{{"samples", total}, {"focus", focus}, {"nodes", std::move(nodes)}});
}

std::string CpuRangeProfileJson(const CpuRangeProfile& profile) {
  return Dump(CpuProfile(profile));
}

std::string HotStacksJson(const TraceModel& model, std::span<const FlameNode> graph, size_t limit) {
  std::vector<std::pair<uint64_t, uint32_t>> leaves;  // (self samples, node): each is one distinct stack
  for (uint32_t n = 1; n < graph.size(); ++n)
    if (graph[n].self_samples) leaves.push_back({graph[n].self_samples, n});
  std::sort(leaves.begin(), leaves.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  json a = json::array();
  const double total = graph.empty() ? 0 : double(graph[0].samples);
  for (size_t i = 0; i < leaves.size() && i < limit; ++i) {
    json frames = json::array();
    for (uint32_t n : FlamePath(graph, leaves[i].second)) frames.push_back(model.Str(graph[n].frame));
    a.push_back(
        {{"samples", leaves[i].first}, {"share", double(leaves[i].first) / total}, {"frames", frames}});
  }
  return Dump(a);
}

std::string IdleGapsJson(const std::vector<IdleGap>& gaps) {
  return Dump(Gaps(gaps));
}

std::string IdleGapsWithDevicesJson(const std::vector<IdleGap>& gaps) {
  json devices = json::array();
  for (const IdleGap& g : gaps) devices.push_back(g.device);
  return Dump(json{{"gaps", Gaps(gaps)}, {"devices", std::move(devices)}});
}

StatusOr<std::vector<IdleGap>> ParseIdleGapsJson(std::string_view text) {
  const json j = json::parse(text.begin(), text.end(), nullptr, false);
  if (!j.is_object() || !j.contains("gaps") || !j["gaps"].is_array())
    return Corrupt("the idle gaps answer is not {\"gaps\":[...]}");
  auto str = [](const json& o, const char* k) {
    auto it = o.find(k);
    return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  auto num = [](const json& o, const char* k, auto fallback) {
    auto it = o.find(k);
    return it != o.end() && it->is_number() ? it->get<decltype(fallback)>() : fallback;
  };
  const json& devices = j.value("devices", json::array());
  std::vector<IdleGap> out;
  for (size_t i = 0; i < j["gaps"].size(); ++i) {
    const json& g = j["gaps"][i];
    if (!g.is_object()) return Corrupt("an idle gap is not an object");
    IdleGap gap;
    gap.device_id = num(g, "device_id", uint32_t{0});
    gap.device = i < devices.size() && devices[i].is_string() ? devices[i].get<std::string>() : "";
    gap.start_ns = num(g, "start_ns", int64_t{0});
    gap.end_ns = SatAdd(gap.start_ns, num(g, "duration_ns", int64_t{0}));
    gap.diagnosis = str(g, "diagnosis");
    for (const json& a : g.value("cpu_activity", json::array())) {
      if (!a.is_object()) continue;
      GapActivity x{.name = str(a, "name"),
                    .api = str(a, "kind") == "api",
                    .overlap_ns = num(a, "overlap_ns", int64_t{0}),
                    .source = str(a, "source"),
                    .thread = str(a, "thread")};
      gap.activity.push_back(std::move(x));
    }
    if (auto c = g.find("cpu_samples"); c != g.end() && c->is_object()) {
      gap.cpu.samples = num(*c, "samples", uint64_t{0});
      gap.cpu.threads = num(*c, "threads", uint64_t{0});
      gap.cpu.python_samples = num(*c, "python_samples", uint64_t{0});
      gap.cpu.not_unwound = num(*c, "not_unwound", uint64_t{0});
      for (const json& h : c->value("hot", json::array())) {
        if (!h.is_object()) continue;
        gap.cpu.hot.push_back({.frame = str(h, "frame"),
                               .path = str(h, "path"),
                               .python = str(h, "kind") == "python",
                               .samples = num(h, "samples", uint64_t{0}),
                               .share = num(h, "share", 0.0)});
      }
    }
    out.push_back(std::move(gap));
  }
  return out;
}

std::string LossesJson(const std::vector<LossStat>& losses) {
  return Dump(Losses(losses));
}

std::string DevicesJson(const TraceModel& model) {
  return Dump(Devices(model));
}

std::string EventJson(const TraceModel& m, EventId e) {
  if (!e.valid()) return "null";
  json fields = json::object();
  for (const DetailField& f : EventDetails(m, e)) fields[f.name] = f.value;
  json j = {{"name", m.Str(m.Name(e))},
            {"kind", EventKindName(m.Kind(e))},
            {"track", m.TrackOf(e).name},
            {"key", m.EventKey(e)},
            {"start", m.Start(e)},
            {"end", m.End(e)},
            {"fields", fields}};
  return Dump(j);
}

std::string KernelCountersJson(const ProfiledKernels& profiled, const std::vector<RooflinePoint>& points,
                               const KernelAnalysis* selected, const std::string* launch,
                               const PcSamplingProfile* pc_sampling) {
  json kernels = json::array();
  for (size_t i = 0; i < profiled.kernels.size(); ++i) {
    const KernelAnalysis& a = profiled.kernels[i];
    json k = {{"name", a.kernel_name},
              {"bottleneck", BottleneckName(a.bottleneck)},
              {"verdict", a.verdict},
              {"flags", a.flags.size()}};
    for (const RooflinePoint& p : points) {
      if (p.analysis_index != i) continue;
      k["intensity"] = Num(p.intensity);
      k["flops_per_s"] = Num(p.flops_per_s);
      k["memory_side"] = p.memory_side;
    }
    kernels.push_back(std::move(k));
  }
  json sel = nullptr;
  if (selected)
    sel = {{"name", selected->kernel_name},
           {"verdict", selected->verdict},
           {"compute_pct", Num(selected->compute_pct.value)},
           {"memory_pct", Num(selected->memory_pct.value)},
           {"top_stall", selected->stalls.empty() ? "" : selected->stalls.front().reason},
           {"launch", launch ? json(*launch) : json(nullptr)}};
  json pcs = nullptr;
  if (const PcSamplingProfile* p = pc_sampling)
    pcs = {{"samples", p->samples},
           {"top_reason", p->reasons.empty() ? "" : p->reasons.front().reason},
           {"hot_spot", !p->by_line.empty() ? HotSpotLabel(p->by_line.front())
                        : !p->by_pc.empty() ? HotSpotLabel(p->by_pc.front())
                                            : std::string()},
           {"summary", p->summary}};
  return Dump(json{{"profiled_launches", profiled.launches.size()},
                   {"kernels", kernels},
                   {"selected", sel},
                   {"pc_sampling", pcs}});
}

namespace {
// Cross-rank NCCL analysis: per rank its totals, the straggler lines, and every late collective (the others
// are summarized by the per-rank totals; a long run has thousands).
json Collectives(const CollectiveReport& r) {
  json ranks = json::array(), late = json::array();
  for (const auto& s : r.ranks)
    ranks.push_back({{"rank", s.rank},
                     {"pid", s.pid},
                     {"collectives", s.collectives},
                     {"late_at", s.last_arrivals},
                     {"late_ns", s.late_ns},
                     {"max_late_ns", s.max_late_ns},
                     {"wait_ns", s.wait_ns},
                     {"comm_ns", s.comm_ns},
                     {"compute_ns", s.compute_ns},
                     {"hidden_comm_ns", s.overlap_ns}});
  for (const Collective& c : r.collectives) {
    const CollectiveRank& last = c.ranks[c.last];
    if (c.skew_ns() <= r.late_threshold_ns) continue;
    late.push_back({{"op", c.op},
                    {"ordinal", c.ordinal},
                    {"last_rank", last.rank},
                    {"last_pid", last.pid},
                    {"skew_ns", c.skew_ns()},
                    {"step", c.step},
                    {"bytes", c.bytes},
                    {"comm", c.by_comm ? c.comm : 0},
                    {"seq", c.by_plugin ? c.seq : 0},
                    {"algo", c.algo},
                    {"proto", c.proto},
                    {"channels", c.n_channels}});
  }
  json algorithms = json::array();  // NCCL's choices per op (profiler plugin)
  {
    std::map<std::tuple<std::string, std::string, std::string, uint32_t, uint32_t>, uint32_t> n;
    for (const Collective& c : r.collectives)
      if (c.by_plugin) ++n[{c.op, c.algo, c.proto, c.n_channels, c.n_warps}];
    for (const auto& [k, count] : n)
      algorithms.push_back({{"op", std::get<0>(k)},
                            {"algo", std::get<1>(k)},
                            {"proto", std::get<2>(k)},
                            {"channels", std::get<3>(k)},
                            {"warps", std::get<4>(k)},
                            {"count", count}});
  }
  json bandwidth = json::array();
  for (const CollectiveBandwidth& b : r.bandwidth)
    bandwidth.push_back({{"op", b.op},
                         {"algo", b.algo},
                         {"bytes", b.bytes},
                         {"ranks", b.ranks},
                         {"count", b.count},
                         {"median_ns", b.median_ns},
                         {"algbw_bytes_per_s", b.algbw},
                         {"busbw_bytes_per_s", b.busbw}});
  return {{"matched", r.collectives.size()},
          {"unmatched_kernels", r.unmatched},
          {"matched_by_communicator", r.by_comm},
          {"matched_by_plugin", r.by_plugin},
          {"algorithms", algorithms},
          {"bandwidth", bandwidth},
          {"late_threshold_ns", r.late_threshold_ns},
          {"ranks", ranks},
          {"late", late},
          {"diagnosis", r.diagnosis}};
}
}  // namespace

std::string CollectivesJson(const CollectiveReport& report) {
  return Dump(Collectives(report), -1);
}

std::string StatsJson(const TraceModel& model) {
  json j = Trace(model);
  j["idle_gaps"] = Gaps(ExplainIdleGaps(model, 10));
  // Per profiled kernel (launches merged): the counters' verdict, as `gtrace stats` prints it.
  json counters = json::array();
  const ProfiledKernels profiled = AnalyzeProfiledKernels(model);
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
  j["collectives"] = Collectives(CollectivesOf(model));
  for (SummaryOf what : {SummaryOf::kKernels, SummaryOf::kCopies, SummaryOf::kApi, SummaryOf::kNvtx})
    j[SummaryOfName(what)] = Rows(SummarizeByName(model, what));
  j["library_calls"] = Rows(SummarizeLibraryCalls(model));  // also OS runtime waits ("OS wait: poll")
  return Dump(j, 2);
}

namespace {
json AlignmentObj(const Alignment& a) {
  return {{"name", a.name.empty() ? json(nullptr) : json(a.name)},
          {"ordinal", a.name.empty() ? json(nullptr) : json(a.ordinal + 1)},
          {"offset_ns", a.offset_ns},
          {"a_anchor_ns", a.a_anchor_ns},
          {"b_anchor_ns", a.b_anchor_ns},
          {"reason", a.reason}};
}
json Steps(const std::vector<StepDelta>& steps) {
  json arr = json::array();
  for (const StepDelta& s : steps) {
    const bool both = s.in_a && s.in_b;
    arr.push_back({{"ordinal", s.ordinal + 1},
                   {"a_ns", s.in_a ? json(s.a_ns) : json(nullptr)},
                   {"b_ns", s.in_b ? json(s.b_ns) : json(nullptr)},
                   {"delta_ns", both ? json(s.delta_ns()) : json(nullptr)},
                   {"a_kernel_ns", s.in_a ? json(s.a_kernel_ns) : json(nullptr)},
                   {"b_kernel_ns", s.in_b ? json(s.b_kernel_ns) : json(nullptr)},
                   {"kernel_delta_ns", both ? json(s.kernel_delta_ns()) : json(nullptr)}});
  }
  return arr;
}
}  // namespace

std::string NameChangesJson(const std::vector<NameChange>& changes, size_t limit) {
  if (changes.size() <= limit) return Dump(Changes(changes));
  return Dump(Changes(std::vector<NameChange>(changes.begin(), changes.begin() + std::ptrdiff_t(limit))));
}
std::string AlignmentJson(const Alignment& align) {
  return Dump(AlignmentObj(align));
}
std::string StepDeltasJson(const std::vector<StepDelta>& steps) {
  return Dump(Steps(steps));
}

std::string CounterPairsJson(const std::vector<CounterPair>& pairs) {
  auto pct = [](const Quantity& q) { return q ? json(q.value) : json(nullptr); };
  auto side = [&](const KernelAnalysis* k) -> json {
    if (!k) return nullptr;
    json stalls = json::array();
    for (size_t i = 0; i < k->stalls.size() && stalls.size() < 5; ++i)
      stalls.push_back({{"reason", k->stalls[i].reason}, {"stall_share", k->stalls[i].stall_share}});
    json roof = nullptr;
    const auto level = static_cast<size_t>(MemoryLevel::kDram);
    if (k->intensity[level] && k->flops_per_s)
      roof = {{"intensity", k->intensity[level].value}, {"flops_per_s", k->flops_per_s.value}};
    return {{"compute_pct", pct(k->compute_pct)},
            {"memory_pct", pct(k->memory_pct)},
            {"bottleneck", BottleneckName(k->bottleneck)},
            {"verdict", k->verdict},
            {"time_per_launch_s", k->time_s ? json(k->time_s.value) : json(nullptr)},
            {"stalls", stalls},
            {"roofline", roof}};
  };
  json arr = json::array();
  for (const CounterPair& p : pairs) arr.push_back({{"name", p.name}, {"a", side(p.a)}, {"b", side(p.b)}});
  return Dump(arr);
}

std::string DiffJson(const TraceModel& before, const std::string& before_label, const TraceModel& after,
                     const std::string& after_label, const Alignment* align,
                     const std::vector<StepDelta>* steps) {
  json j;
  j["before"] = Trace(before);
  j["before"]["file"] = before_label;
  j["after"] = Trace(after);
  j["after"]["file"] = after_label;
  int64_t total[2] = {0, 0};
  for (SummaryOf what : {SummaryOf::kKernels, SummaryOf::kCopies, SummaryOf::kApi}) {
    const auto a = SummarizeByName(before, what), b = SummarizeByName(after, what);
    if (what == SummaryOf::kKernels) total[0] = TotalNs(a), total[1] = TotalNs(b);
    j[SummaryOfName(what)] = Changes(CompareSummaries(a, b));
  }
  auto ranks = [](const TraceModel& m) {
    json out = json::array();
    for (const RankKernelTime& r : KernelTimeByRank(m))
      out.push_back({{"rank", r.rank},
                     {"kernels", r.kernels},
                     {"kernel_ns", r.kernel_ns},
                     {"nccl_ns", r.nccl_ns},
                     {"wait_ns", r.wait_ns}});
    return out;
  };
  j["ranks"] = {{"before", ranks(before)}, {"after", ranks(after)}};
  j["total_kernel_ns"] = {
      {"before", total[0]}, {"after", total[1]}, {"change_pct", Percent(double(total[0]), double(total[1]))}};
  if (align) {
    j["alignment"] = AlignmentObj(*align);
    j["steps"] = steps ? Steps(*steps) : json::array();
  }
  return Dump(j, 2);
}

}  // namespace gt::viewer

// CSV writer and the viewer's tables as CSV (gt/viewer/csv.h).
#include "gt/viewer/csv.h"

#include <cstdio>

namespace gt::viewer {

namespace {

CsvCell Num(int64_t v) {
  return {std::to_string(v), false};
}
CsvCell Num(uint64_t v) {
  return {std::to_string(v), false};
}
CsvCell Num(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.17g", v);
  return {b, false};
}
CsvCell Text(std::string s) {
  return {std::move(s), true};
}

const char* SeverityName(uint8_t s) {
  switch (s) {
    case 0:
      return "info";
    case 1:
      return "warning";
    default:
      return "error";
  }
}

}  // namespace

std::string CsvField(std::string_view v, bool text) {
  std::string s;
  if (text && !v.empty() &&
      (v[0] == '=' || v[0] == '+' || v[0] == '-' || v[0] == '@' || v[0] == '\t' || v[0] == '\r'))
    s += '\'';
  s.append(v);
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  q += '"';
  return q;
}

std::string ToCsv(const CsvTable& t) {
  std::string o;
  for (size_t i = 0; i < t.header.size(); ++i) o += (i ? "," : "") + CsvField(t.header[i], true);
  o += "\r\n";
  for (const auto& row : t.rows) {
    for (size_t i = 0; i < row.size(); ++i) o += (i ? "," : "") + CsvField(row[i].value, row[i].text);
    o += "\r\n";
  }
  return o;
}

CsvTable KernelTableCsv(const TraceModel& m, const std::vector<KernelSummaryRow>& rows) {
  CsvTable t{{"name", "count", "total_ns", "avg_ns", "min_ns", "max_ns", "share", "first_ns", "last_ns"}, {}};
  for (const auto& r : rows)
    t.rows.push_back({Text(m.Str(r.name)), Num(r.count), Num(r.total_ns), Num(r.avg_ns), Num(r.min_ns),
                      Num(r.max_ns), Num(r.share), Num(r.first_ns), Num(r.last_ns)});
  return t;
}

CsvTable NameSummaryCsv(const std::vector<NameSummary>& rows) {
  CsvTable t{{"name", "count", "total_ns", "avg_ns", "min_ns", "max_ns", "share", "bytes"}, {}};
  for (const auto& r : rows)
    t.rows.push_back({Text(r.name), Num(r.count), Num(r.total_ns), Num(r.avg_ns), Num(r.min_ns),
                      Num(r.max_ns), Num(r.share), Num(r.bytes)});
  return t;
}

CsvTable IdleGapsCsv(const std::vector<IdleGap>& gaps) {
  CsvTable t{{"device_id", "device", "start_ns", "end_ns", "duration_ns", "cpu_activity", "diagnosis"}, {}};
  for (const auto& g : gaps) {
    std::string act;
    for (const auto& a : g.activity) {
      if (!act.empty()) act += "; ";
      act += a.name + " (" + a.kind() + (a.source.empty() || a.os_wait() ? "" : " " + a.source) +
             (a.thread.empty() ? "" : " on " + a.thread) + ", " + std::to_string(a.overlap_ns) + " ns)";
    }
    t.rows.push_back({Num(uint64_t{g.device_id}), Text(g.device), Num(g.start_ns), Num(g.end_ns),
                      Num(g.end_ns - g.start_ns), Text(act), Text(g.diagnosis)});
  }
  return t;
}

CsvTable KernelCountersCsv(const std::vector<KernelCounters>& kernels) {
  CsvTable t{{"pid", "kernel", "launch", "launches", "correlation_id", "counter", "value"}, {}};
  for (const auto& k : kernels)
    for (const auto& v : k.values)
      t.rows.push_back(
          {Num(uint64_t{k.pid}), Text(k.kernel_name),
           Text(k.launch_ordinal == kNone ? std::string("merged") : LaunchOrdinalLabel(k.launch_ordinal)),
           Num(uint64_t{k.launches}), Num(uint64_t{k.correlation_id}), Text(v.name), Num(v.value)});
  return t;
}

CsvTable LossesCsv(const std::vector<LossStat>& losses) {
  CsvTable t{{"name", "severity", "pid", "count", "detail"}, {}};
  for (const auto& l : losses)
    t.rows.push_back(
        {Text(l.name), Text(SeverityName(l.severity)), Num(uint64_t{l.pid}), Num(l.count), Text(l.detail)});
  return t;
}

CsvTable NotesCsv(const TraceModel* m, const std::vector<Note>& notes) {
  CsvTable t{{"start_ns", "end_ns", "event_key", "event", "status", "text"}, {}};
  for (const auto& n : notes) {
    std::string name, status = n.event.empty() ? "range" : "event";
    if (!n.event.empty() && m) {
      EventId e = ResolveNote(*m, n);
      if (e.valid())
        name = m->Str(m->Name(e));
      else
        status = "orphaned";
    }
    t.rows.push_back({Num(n.t0), Num(n.t1), Text(n.event), Text(name), Text(status), Text(n.text)});
  }
  return t;
}

CsvTable HistogramCsv(const DurationHistogram& h) {
  CsvTable t{{"bin", "lo_ns", "hi_ns", "count", "share"}, {}};
  for (size_t i = 0; i < h.bins.size(); ++i)
    t.rows.push_back({Num(uint64_t{i}), Num(h.bins[i].lo_ns), Num(h.bins[i].hi_ns), Num(h.bins[i].count),
                      Num(h.total ? double(h.bins[i].count) / double(h.total) : 0.0)});
  return t;
}

CsvTable CollectivesCsv(const TraceModel& m, const CollectiveReport& r) {
  CsvTable t{{"op", "kernel", "ordinal", "step", "rank", "pid", "start_ns", "end_ns", "wait_ns",
              "transfer_ns", "skew_ns", "last_to_arrive", "comm", "bytes", "time_ns", "algbw", "busbw"},
             {}};
  for (const Collective& c : r.collectives)
    for (size_t i = 0; i < c.ranks.size(); ++i) {
      const CollectiveRank& k = c.ranks[i];
      t.rows.push_back({Text(c.op), Text(m.Str(c.kernel_name)), Num(int64_t{c.ordinal}), Text(c.step),
                        Num(int64_t{k.rank}), Num(int64_t{k.pid}), Num(k.start), Num(k.end), Num(k.wait_ns),
                        Num(k.transfer_ns), Num(c.skew_ns()), Num(int64_t{i == c.last}),
                        Text(c.by_comm ? std::to_string(c.comm) : ""), Num(c.bytes), Num(c.time_ns),
                        Num(c.algbw), Num(c.busbw)});
    }
  return t;
}

CsvTable CollectiveRanksCsv(const CollectiveReport& r) {
  CsvTable t{{"rank", "pid", "collectives", "last_arrivals", "late_ns", "max_late_ns", "wait_ns", "comm_ns",
              "compute_ns", "overlap_ns"},
             {}};
  for (const RankCollectiveStats& s : r.ranks)
    t.rows.push_back({Num(int64_t{s.rank}), Num(int64_t{s.pid}), Num(int64_t{s.collectives}),
                      Num(int64_t{s.last_arrivals}), Num(s.late_ns), Num(s.max_late_ns), Num(s.wait_ns),
                      Num(s.comm_ns), Num(s.compute_ns), Num(s.overlap_ns)});
  return t;
}

CsvTable RooflineCsv(const ProfiledKernels& p) {
  CsvTable t{{"kernel", "level", "precision", "flop_per_byte", "flop_per_s", "attainable_flop_per_s",
              "share_of_roof", "bandwidth_bound", "total_time_s"},
             {}};
  const RooflineModel model = BuildRoofline(p.device);
  for (size_t l = 0; l < kMemoryLevelCount; ++l) {
    const auto level = static_cast<MemoryLevel>(l);
    for (const RooflinePoint& pt : PlaceOnRoofline(model, p.kernels, level, p.kernel_total_time_s))
      t.rows.push_back({Text(pt.kernel_name), Text(MemoryLevelName(level)), Text(PrecisionName(pt.precision)),
                        Num(pt.intensity), Num(pt.flops_per_s), Num(pt.attainable), Num(pt.pct_of_roof),
                        Num(int64_t{pt.memory_side}), Num(pt.total_time_s)});
  }
  return t;
}

CsvTable CompareKernelsCsv(const std::vector<NameChange>& rows) {
  CsvTable t{{"name", "count_a", "count_b", "total_a_ns", "total_b_ns", "delta_ns", "avg_a_ns", "avg_b_ns"},
             {}};
  for (const NameChange& r : rows)
    t.rows.push_back({Text(r.name), Num(r.before.count), Num(r.after.count), Num(r.before.total_ns),
                      Num(r.after.total_ns), Num(r.delta_ns()), Num(r.before.avg_ns), Num(r.after.avg_ns)});
  return t;
}

CsvTable CompareStepsCsv(const std::vector<StepDelta>& steps) {
  CsvTable t{
      {"step", "in_a", "in_b", "a_ns", "b_ns", "delta_ns", "a_kernel_ns", "b_kernel_ns", "kernel_delta_ns"},
      {}};
  for (const StepDelta& s : steps)
    t.rows.push_back({Num(int64_t{s.ordinal}), Num(int64_t{s.in_a}), Num(int64_t{s.in_b}), Num(s.a_ns),
                      Num(s.b_ns), Num(s.delta_ns()), Num(s.a_kernel_ns), Num(s.b_kernel_ns),
                      Num(s.kernel_delta_ns())});
  return t;
}

const std::vector<std::string_view>& CsvTableNames() {
  static const std::vector<std::string_view> k = {"kernels",          "api",      "copies",   "nvtx",
                                                  "idle-gaps",        "counters", "roofline", "collectives",
                                                  "collective-ranks", "losses",   "histogram"};
  return k;
}

StatusOr<CsvTable> TraceTableCsv(const TraceModel& m, std::string_view table, std::string_view kernel) {
  if (table == "kernels") return KernelTableCsv(m, KernelSummary(m));
  if (table == "api") return NameSummaryCsv(SummarizeByName(m, SummaryOf::kApi));
  if (table == "copies") return NameSummaryCsv(SummarizeByName(m, SummaryOf::kCopies));
  if (table == "nvtx") return NameSummaryCsv(SummarizeByName(m, SummaryOf::kNvtx));
  if (table == "idle-gaps") return IdleGapsCsv(ExplainIdleGaps(m, SIZE_MAX));
  if (table == "losses") return LossesCsv(LossSummary(m));
  if (table == "counters") {
    StringLookup str = [&m](StringId id) -> std::string_view { return m.Str(id); };
    return KernelCountersCsv(GroupKernelCounters(m.kernel_metrics, m.stall_samples, str));
  }
  if (table == "roofline") return RooflineCsv(AnalyzeProfiledKernels(m));
  if (table == "collectives") return CollectivesCsv(m, CollectivesOf(m));
  if (table == "collective-ranks") return CollectiveRanksCsv(CollectivesOf(m));
  if (table == "histogram") {
    if (kernel.empty()) return InvalidArgument("the histogram table needs a kernel name (--kernel NAME)");
    StringId id = FindString(m, kernel);
    if (id == 0 || KernelInstances(m, id).empty())
      return InvalidArgument("no kernel named '" + std::string(kernel) + "' in this trace");
    return HistogramCsv(KernelDurationHistogram(m, id));
  }
  std::string names;
  for (auto n : CsvTableNames()) names += (names.empty() ? "" : ", ") + std::string(n);
  return InvalidArgument("unknown table '" + std::string(table) + "' (tables: " + names + ")");
}

}  // namespace gt::viewer

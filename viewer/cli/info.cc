// `gtrace info`: everything a user checks first about a trace, in a stable layout (the golden test pins it).
#include "info.h"

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>

#include "gt/units.h"

namespace gt::cli {
namespace {

std::string Printf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Printf(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) return "";
  if (size_t(n) < sizeof buf) return std::string(buf, size_t(n));
  std::string s(size_t(n) + 1, '\0');
  va_start(ap, fmt);
  std::vsnprintf(s.data(), s.size(), fmt, ap);
  va_end(ap);
  s.resize(size_t(n));
  return s;
}

struct Span {
  int64_t first = INT64_MAX, last = INT64_MIN;
  void Add(int64_t a, int64_t b) {
    first = std::min(first, a);
    last = std::max(last, b);
  }
  bool valid() const { return first <= last; }
};

Span TimeSpan(const TraceData& t) {
  Span s;
  for (const auto& r : t.kernels) s.Add(r.start, r.end);
  for (const auto& r : t.memcpys) s.Add(r.start, r.end);
  for (const auto& r : t.memsets) s.Add(r.start, r.end);
  for (const auto& r : t.api_calls) s.Add(r.start, r.end);
  for (const auto& r : t.nvtx) s.Add(r.start, r.end);
  for (const auto& r : t.syncs) s.Add(r.start, r.end);
  for (const auto& r : t.memory) s.Add(r.timestamp, r.timestamp);
  for (const auto& r : t.overheads) s.Add(r.start, r.end);
  for (const auto& r : t.counter_samples) s.Add(r.timestamp, r.timestamp);
  return s;
}

// Maps a trace-clock time to wall clock through the first clock sync, if any.
bool ToWallClock(const TraceData& t, int64_t trace_ns, int64_t* realtime) {
  if (t.metadata.clock_syncs.empty()) return false;
  const ClockSync& c = t.metadata.clock_syncs.front();
  *realtime = c.realtime_ns + (trace_ns - c.trace_ns);
  return true;
}

struct KindCount {
  const char* name;
  size_t count;
};

std::vector<KindCount> Counts(const TraceData& t) {
  return {{"process", t.processes.size()},
          {"thread", t.threads.size()},
          {"device", t.devices.size()},
          {"context", t.contexts.size()},
          {"stream", t.streams.size()},
          {"kernel", t.kernels.size()},
          {"memcpy", t.memcpys.size()},
          {"memset", t.memsets.size()},
          {"api_call", t.api_calls.size()},
          {"nvtx", t.nvtx.size()},
          {"sync", t.syncs.size()},
          {"memory", t.memory.size()},
          {"overhead", t.overheads.size()},
          {"counter_descriptor", t.counter_descriptors.size()},
          {"counter_sample", t.counter_samples.size()},
          {"kernel_metric", t.kernel_metrics.size()},
          {"stall_sample", t.stall_samples.size()},
          {"flow", t.flows.size()},
          {"loss", t.losses.size()},
          {"nvtx_arg", t.nvtx_args.size()},
          {"nccl_coll", t.nccl_colls.size()},
          {"nccl_channel", t.nccl_channels.size()},
          {"cpu_stack_node", t.cpu_stack_nodes.size()},
          {"cpu_sample", t.cpu_samples.size()}};
}

const char* ExitKindText(uint8_t k) {
  switch (ExitKind(k)) {
    case ExitKind::kExited:
      return "exited";
    case ExitKind::kSignaled:
      return "killed by signal";
    case ExitKind::kRunning:
      return "running";
    default:
      return "exit unknown";
  }
}

// A device figure the trace may lack (0): "?" rather than "0.00 B/s".
std::string KnownRate(double v, const char* unit) {
  return v > 0 ? FormatRate(v, unit) : "?";
}

std::string DeviceLine(const TraceData& t, const DeviceRecord& d) {
  std::string s =
      Printf("  GPU %u  %s", d.device_id, t.Str(d.name).empty() ? "(unnamed)" : t.Str(d.name).c_str());
  if (!t.Str(d.chip).empty()) s += " (" + t.Str(d.chip) + ")";
  s += Printf("  pid %u\n", d.pid);
  s += Printf("      compute capability %u.%u, %u SMs @ %.0f MHz, warp %u, %u regs/SM, %u warps/SM max\n",
              d.cc_major, d.cc_minor, d.sm_count, d.sm_clock_khz / 1000.0, d.warp_size, d.regs_per_sm,
              d.max_warps_per_sm);
  s += "      memory " + FormatBytes(double(d.memory_bytes)) + ", L2 " + FormatBytes(double(d.l2_bytes)) +
       ", shared " + FormatBytes(double(d.shared_mem_per_sm)) + "/SM\n";
  s += "      bandwidth DRAM " + KnownRate(d.dram_bandwidth, "B/s") + ", L2 " +
       KnownRate(d.l2_bandwidth, "B/s") + ", L1 " + KnownRate(d.l1_bandwidth, "B/s") + "\n";
  std::string peaks;
  for (size_t i = 0; i < kPrecisionCount; ++i) {
    if (d.peak_flops[i] <= 0) continue;
    if (!peaks.empty()) peaks += ", ";
    peaks += std::string(PrecisionName(Precision(i))) + " " + KnownRate(d.peak_flops[i], "FLOP/s");
  }
  static const char* const kSources[] = {"unknown", "derived", "measured", "table"};
  s += "      peaks " + (peaks.empty() ? std::string("unknown") : peaks) + " (" +
       (d.peak_source < 4 ? kSources[d.peak_source] : "unknown") + ")\n";
  return s;
}

}  // namespace

std::string FormatWallClock(int64_t realtime_ns) {
  time_t secs = time_t(realtime_ns / 1000000000);
  int64_t ms = (realtime_ns % 1000000000) / 1000000;
  if (ms < 0) secs -= 1, ms += 1000;
  struct tm tm {};
  if (!gmtime_r(&secs, &tm)) return "?";
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return Printf("%s.%03" PRId64 " UTC", buf, ms);
}

std::string FormatInfoText(const InfoInput& in) {
  const TraceData& t = *in.data;
  const LoadReport& r = *in.report;
  std::string s;
  s += "File       " + in.path + " (" + std::to_string(r.bytes_total) + " bytes)\n";
  if (r.segments == 0 &&
      r.version_major == 0)  // read by the nsys import (nsys_input.h), not the .gtrace reader
    s += "Format     Nsight Systems SQLite export (nsys export --type sqlite)";
  else
    s += Printf("Format     .gtrace %u.%u, %u segment%s, %" PRIu64 " chunks", r.version_major,
                r.version_minor, r.segments, r.segments == 1 ? "" : "s", r.chunks_ok);
  if (r.chunks_unknown) s += Printf(" (+%" PRIu64 " of unknown type skipped)", r.chunks_unknown);
  s += "\n";
  s += std::string("Status     ") +
       (r.clean() ? "complete" : "LOADED WITH LOSSES (see \"Load problems\" below)") + "\n";

  Span span = TimeSpan(t);
  if (span.valid()) {
    s += "Time span  " + FormatDuration(span.last - span.first);
    int64_t wall = 0;
    if (ToWallClock(t, span.first, &wall)) s += ", starting " + FormatWallClock(wall);
    s += Printf(" (trace clock %" PRId64 " .. %" PRId64 " ns)\n", span.first, span.last);
  } else {
    s += "Time span  (no timed events)\n";
  }
  s += Printf("Events     %" PRIu64 " timeline events (%" PRIu64 " records decoded, strings included)\n",
              t.EventCount(), r.records);

  s += "\nMetadata\n";
  if (t.metadata.entries.empty()) s += "  (none)\n";
  size_t key_w = 0;
  for (const auto& [k, v] : t.metadata.entries) key_w = std::max(key_w, k.size());
  for (const auto& [k, v] : t.metadata.entries) s += Printf("  %-*s  %s\n", int(key_w), k.c_str(), v.c_str());
  for (const auto& c : t.metadata.clock_syncs)
    s += Printf("  clock sync  trace %" PRId64 " ns = ", c.trace_ns) + FormatWallClock(c.realtime_ns) + "\n";

  std::vector<ProcessRecord> processes = t.processes;  // one line per pid: start and exit records joined
  CollapseProcesses(processes);
  s += Printf("\nProcesses (%zu)\n", processes.size());
  std::map<uint32_t, std::vector<const ThreadRecord*>> threads;
  for (const auto& th : t.threads) threads[th.pid].push_back(&th);
  for (const auto& p : processes) {
    s += Printf("  pid %-7u %s", p.pid, t.Str(p.name).empty() ? "(unnamed)" : t.Str(p.name).c_str());
    if (p.parent_pid) s += Printf("  parent %u", p.parent_pid);
    s += std::string("  ") + ExitKindText(p.exit_kind);
    if (p.exit_kind == uint8_t(ExitKind::kExited) || p.exit_kind == uint8_t(ExitKind::kSignaled))
      s += Printf(" %d", p.exit_code);
    if (p.end_ns > p.start_ns) s += ", ran " + FormatDuration(p.end_ns - p.start_ns);
    s += "\n";
    if (!t.Str(p.command_line).empty()) s += "      command " + t.Str(p.command_line) + "\n";
    if (p.rank >= 0 || !t.Str(p.host).empty()) {
      std::string where = "      ";
      if (p.rank >= 0) {
        where += Printf("rank %d", p.rank);
        if (p.world_size > 0) where += Printf(" of %d", p.world_size);
        if (p.local_rank >= 0) where += Printf(" (local %d)", p.local_rank);
        if (!t.Str(p.job).empty()) where += ", job " + t.Str(p.job);
        where += ", ";
      }
      where += "host " + (t.Str(p.host).empty() ? std::string("?") : t.Str(p.host));
      if (!t.Str(p.boot_id).empty()) where += " (boot " + t.Str(p.boot_id).substr(0, 8) + ")";
      s += where + "\n";
    }
    auto it = threads.find(p.pid);
    if (it != threads.end()) {
      s += Printf("      threads (%zu):", it->second.size());
      size_t shown = 0;
      for (const ThreadRecord* th : it->second) {
        if (shown++ == in.max_threads_listed) {
          s += Printf(" ... +%zu more", it->second.size() - in.max_threads_listed);
          break;
        }
        s += Printf(" %u", th->tid);
        if (!t.Str(th->name).empty()) s += " \"" + t.Str(th->name) + "\"";
      }
      s += "\n";
    }
  }

  s += Printf("\nDevices (%zu)\n", t.devices.size());
  for (const auto& d : t.devices) s += DeviceLine(t, d);

  s += "\nRecords\n";
  for (const auto& c : Counts(t))
    if (c.count) s += Printf("  %-20s %12zu\n", c.name, c.count);

  s += "\nLosses and health\n";
  if (t.losses.empty()) s += "  (none recorded)\n";
  for (const auto& l : t.losses) {
    s += Printf("  %-24s %-9s count %-8" PRIu64, t.Str(l.name).c_str(), SeverityName(l.severity), l.count);
    if (l.pid) s += Printf(" pid %u", l.pid);
    if (!t.Str(l.detail).empty()) s += "  " + t.Str(l.detail);
    s += "\n";
  }

  s += "\nLoad problems\n";
  if (r.problems.empty()) s += "  (none)\n";
  if (!r.problems.empty())
    s += Printf("  %" PRIu64 " chunks lost, %" PRIu64 " bytes lost%s\n", r.chunks_lost, r.bytes_lost,
                r.truncated ? ", truncated" : "");
  for (const auto& p : r.problems) s += "  - " + p + "\n";
  return s;
}

std::string FormatInfoJson(const InfoInput& in) {
  using nlohmann::json;
  const TraceData& t = *in.data;
  const LoadReport& r = *in.report;
  json j;
  j["file"] = in.path;
  j["bytes"] = r.bytes_total;
  j["version"] = std::to_string(r.version_major) + "." + std::to_string(r.version_minor);
  j["segments"] = r.segments;
  j["clean"] = r.clean();
  j["load"] = {
      {"chunks_ok", r.chunks_ok}, {"chunks_lost", r.chunks_lost}, {"chunks_unknown", r.chunks_unknown},
      {"records", r.records},     {"bytes_lost", r.bytes_lost},   {"truncated", r.truncated},
      {"problems", r.problems}};
  Span span = TimeSpan(t);
  if (span.valid()) j["time_span_ns"] = {{"first", span.first}, {"last", span.last}};
  json meta = json::object();
  for (const auto& [k, v] : t.metadata.entries) meta[k] = v;
  j["metadata"] = meta;
  j["clock_syncs"] = json::array();
  for (const auto& c : t.metadata.clock_syncs)
    j["clock_syncs"].push_back({{"realtime_ns", c.realtime_ns}, {"trace_ns", c.trace_ns}});
  j["processes"] = json::array();
  std::vector<ProcessRecord> processes = t.processes;
  CollapseProcesses(processes);
  for (const auto& p : processes) {
    json threads = json::array();
    for (const auto& th : t.threads)
      if (th.pid == p.pid) threads.push_back({{"tid", th.tid}, {"name", t.Str(th.name)}});
    j["processes"].push_back({{"pid", p.pid},
                              {"parent_pid", p.parent_pid},
                              {"name", t.Str(p.name)},
                              {"command_line", t.Str(p.command_line)},
                              {"start_ns", p.start_ns},
                              {"end_ns", p.end_ns},
                              {"exit_kind", ExitKindText(p.exit_kind)},
                              {"exit_code", p.exit_code},
                              {"host", t.Str(p.host)},
                              {"boot_id", t.Str(p.boot_id)},
                              {"job", t.Str(p.job)},
                              {"rank", p.rank},
                              {"local_rank", p.local_rank},
                              {"world_size", p.world_size},
                              {"threads", threads}});
  }
  j["devices"] = json::array();
  for (const auto& d : t.devices) {
    json peaks = json::object();
    for (size_t i = 0; i < kPrecisionCount; ++i)
      if (d.peak_flops[i] > 0) peaks[PrecisionName(Precision(i))] = d.peak_flops[i];
    j["devices"].push_back(
        {{"device_id", d.device_id},
         {"pid", d.pid},
         {"name", t.Str(d.name)},
         {"chip", t.Str(d.chip)},
         {"uuid", t.Str(d.uuid)},
         {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
         {"sm_count", d.sm_count},
         {"memory_bytes", d.memory_bytes},
         {"l2_bytes", d.l2_bytes},
         {"dram_bandwidth", d.dram_bandwidth},
         {"l2_bandwidth", d.l2_bandwidth},
         {"l1_bandwidth", d.l1_bandwidth},
         {"peak_flops", peaks}});
  }
  json counts = json::object();
  for (const auto& c : Counts(t)) counts[c.name] = c.count;
  j["counts"] = counts;
  j["losses"] = json::array();
  for (const auto& l : t.losses)
    j["losses"].push_back({{"name", t.Str(l.name)},
                           {"severity", SeverityName(l.severity)},
                           {"pid", l.pid},
                           {"count", l.count},
                           {"detail", t.Str(l.detail)}});
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace gt::cli

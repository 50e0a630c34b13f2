// Field-by-field comparison of two models: "" when they are identical, else the first difference.
#pragma once

#include <cstring>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "gt/viewer/model.h"

namespace gt::test {

namespace diff_detail {

// Records and detail structs are plain data. Those whose bytes are their value compare as bytes; the others
// (padding, whose bytes a copy need not keep: clang's don't; floating point) field by field.
template <typename T>
bool SameRecords(const std::vector<T>& a, const std::vector<T>& b) {
  static_assert(std::is_trivially_copyable_v<T>);
  if constexpr (std::has_unique_object_representations_v<T>)
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
  else
    return a == b;
}

class Differ {
 public:
  template <typename T>
  void Eq(const char* what, const T& a, const T& b) {
    if (!out_.empty()) return;
    if (!(a == b)) out_ = path_ + what + " differs";
  }
  void Bytes(const char* what, bool same) {
    if (out_.empty() && !same) out_ = path_ + what + " differs";
  }
  void At(const std::string& path) { path_ = path; }
  std::string result() const { return out_; }

 private:
  std::string path_, out_;
};

inline bool SameDoubles(const std::vector<double>& a, const std::vector<double>& b) {  // NaN equals NaN
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

}  // namespace diff_detail

// compare_memory = false: a mapped index's model (gt/viewer/index.h) holds the same values in other storage.
inline std::string ModelDiff(const gt::viewer::TraceModel& a, const gt::viewer::TraceModel& b,
                             bool compare_memory = true) {
  using namespace gt::viewer;
  diff_detail::Differ d;
  using diff_detail::SameRecords;
  d.At("model.");
  d.Eq("format", a.format, b.format);
  d.Eq("metadata.entries", a.metadata.entries, b.metadata.entries);
  d.Bytes("metadata.clock_syncs", SameRecords(a.metadata.clock_syncs, b.metadata.clock_syncs));
  const LoadReport &ra = a.report, &rb = b.report;
  d.Eq("report.version", std::tie(ra.version_major, ra.version_minor),
       std::tie(rb.version_major, rb.version_minor));
  d.Eq("report.counts", std::tie(ra.segments, ra.chunks_ok, ra.chunks_lost, ra.chunks_unknown, ra.records),
       std::tie(rb.segments, rb.chunks_ok, rb.chunks_lost, rb.chunks_unknown, rb.records));
  d.Eq("report.bytes", std::tie(ra.bytes_total, ra.bytes_lost, ra.truncated),
       std::tie(rb.bytes_total, rb.bytes_lost, rb.truncated));
  d.Eq("report.problems", ra.problems, rb.problems);
  d.Eq("losses.size", a.losses.size(), b.losses.size());
  for (size_t i = 0; i < a.losses.size() && i < b.losses.size(); ++i) {
    const LossStat &x = a.losses[i], &y = b.losses[i];
    d.At("model.losses[" + std::to_string(i) + "].");
    d.Eq("fields", std::tie(x.name, x.severity, x.pid, x.count, x.detail),
         std::tie(y.name, y.severity, y.pid, y.count, y.detail));
  }
  d.At("model.");
  d.Eq("problems", a.problems, b.problems);
  d.Eq("strings", a.strings, b.strings);
  d.Eq("name_counts", a.name_counts, b.name_counts);
  d.Eq("groups.size", a.groups.size(), b.groups.size());
  for (size_t i = 0; i < a.groups.size() && i < b.groups.size(); ++i) {
    const TrackGroup &x = a.groups[i], &y = b.groups[i];
    d.At("model.groups[" + std::to_string(i) + "].");
    d.Eq("fields", std::tie(x.kind, x.name, x.key, x.pid, x.device_id, x.tracks),
         std::tie(y.kind, y.name, y.key, y.pid, y.device_id, y.tracks));
  }
  d.At("model.");
  d.Eq("tracks.size", a.tracks.size(), b.tracks.size());
  for (size_t i = 0; i < a.tracks.size() && i < b.tracks.size(); ++i) {
    const Track &x = a.tracks[i], &y = b.tracks[i];
    d.At("model.tracks[" + std::to_string(i) + "].");
    d.Eq("identity",
         std::tie(x.kind, x.group, x.name, x.key, x.pid, x.tid, x.device_id, x.context_id, x.stream_id),
         std::tie(y.kind, y.group, y.name, y.key, y.pid, y.tid, y.device_id, y.context_id, y.stream_id));
    d.Eq("layout",
         std::tie(x.counter, x.first_lane, x.lane_count, x.event_count, x.first_ns, x.last_ns,
                  x.default_collapsed),
         std::tie(y.counter, y.first_lane, y.lane_count, y.event_count, y.first_ns, y.last_ns,
                  y.default_collapsed));
  }
  d.At("model.");
  d.Eq("lanes.size", a.lanes.size(), b.lanes.size());
  for (size_t i = 0; i < a.lanes.size() && i < b.lanes.size(); ++i) {
    const Lane &x = a.lanes[i], &y = b.lanes[i];
    d.At("model.lanes[" + std::to_string(i) + "].");
    d.Eq("track/depth", std::tie(x.track, x.depth), std::tie(y.track, y.depth));
    d.Eq("start", x.start, y.start);
    d.Eq("dur", x.dur, y.dur);
    d.Eq("name", x.name, y.name);
    d.Eq("ref", x.ref, y.ref);
    d.Eq("aux", x.aux, y.aux);
    d.Eq("long_dur", x.long_dur, y.long_dur);
    d.Eq("return_code", x.return_code, y.return_code);
    d.Eq("args", x.args, y.args);
    d.Eq("lod", x.lod, y.lod);
    d.Eq("aux_sorted", x.aux_sorted, y.aux_sorted);
  }
  d.At("model.");
  d.Eq("counters.size", a.counters.size(), b.counters.size());
  for (size_t i = 0; i < a.counters.size() && i < b.counters.size(); ++i) {
    const CounterTrack &x = a.counters[i], &y = b.counters[i];
    d.At("model.counters[" + std::to_string(i) + "].");
    d.Eq("identity", std::tie(x.name, x.unit, x.pid, x.device_id, x.source_id, x.track),
         std::tie(y.name, y.unit, y.pid, y.device_id, y.source_id, y.track));
    d.Eq("time", x.time, y.time);
    d.Bytes("value", diff_detail::SameDoubles(x.value, y.value));
    d.Eq("levels.size", x.levels.size(), y.levels.size());
    for (size_t k = 0; k < x.levels.size() && k < y.levels.size(); ++k) {
      bool same = x.levels[k].size() == y.levels[k].size();
      for (size_t j = 0; same && j < x.levels[k].size(); ++j)
        same = std::memcmp(&x.levels[k][j].first, &y.levels[k][j].first, sizeof(double)) == 0 &&
               std::memcmp(&x.levels[k][j].second, &y.levels[k][j].second, sizeof(double)) == 0;
      d.Bytes("levels", same);
    }
    d.Bytes("min/max",
            std::memcmp(&x.min, &y.min, sizeof x.min) == 0 && std::memcmp(&x.max, &y.max, sizeof x.max) == 0);
  }
  d.At("model.");
  d.Eq("flows.size", a.flows.size(), b.flows.size());
  for (size_t i = 0; i < a.flows.size() && i < b.flows.size(); ++i)
    d.Eq("flows", std::tie(a.flows[i].from, a.flows[i].to), std::tie(b.flows[i].from, b.flows[i].to));
  d.Eq("launch_configs", a.launch_configs, b.launch_configs);
  // Detail structs field by field: their padding is not part of the value.
  auto fields = [](const auto& v, auto tie) {
    std::vector<decltype(tie(v[0]))> out;
    for (const auto& x : v) out.push_back(tie(x));
    return out;
  };
  auto memcpy_tie = [](const MemcpyInfo& x) {
    return std::tie(x.bytes, x.peer_device_id, x.graph_id, x.copy_kind, x.src_kind, x.dst_kind, x.is_async);
  };
  auto memset_tie = [](const MemsetInfo& x) {
    return std::tie(x.bytes, x.value, x.graph_id, x.memory_kind, x.is_async);
  };
  auto nvtx_tie = [](const NvtxInfo& x) {
    return std::tie(x.domain, x.category, x.color, x.payload, x.payload_kind, x.flags);
  };
  auto sync_tie = [](const SyncInfo& x) {
    return std::tie(x.device_id, x.context_id, x.stream_id, x.correlation_id, x.event_id, x.sync_kind);
  };
  d.Eq("memcpys", fields(a.memcpys, memcpy_tie), fields(b.memcpys, memcpy_tie));
  d.Eq("memsets", fields(a.memsets, memset_tie), fields(b.memsets, memset_tie));
  d.Eq("nvtx", fields(a.nvtx, nvtx_tie), fields(b.nvtx, nvtx_tie));
  d.Eq("syncs", fields(a.syncs, sync_tie), fields(b.syncs, sync_tie));
  d.Bytes("processes", SameRecords(a.processes, b.processes));
  d.Bytes("threads", SameRecords(a.threads, b.threads));
  d.Bytes("devices", SameRecords(a.devices, b.devices));
  d.Bytes("streams", SameRecords(a.streams, b.streams));
  d.Bytes("kernel_metrics", SameRecords(a.kernel_metrics, b.kernel_metrics));
  d.Bytes("stall_samples", SameRecords(a.stall_samples, b.stall_samples));
  d.Eq("device_summaries.size", a.device_summaries.size(), b.device_summaries.size());
  for (size_t i = 0; i < a.device_summaries.size() && i < b.device_summaries.size(); ++i) {
    const DeviceSummary &x = a.device_summaries[i], &y = b.device_summaries[i];
    d.At("model.device_summaries[" + std::to_string(i) + "].");
    d.Eq("fields",
         std::tie(x.device_id, x.group, x.name, x.first_ns, x.last_ns, x.busy_ns, x.kernel_count,
                  x.memcpy_count, x.memset_count, x.largest_gaps),
         std::tie(y.device_id, y.group, y.name, y.first_ns, y.last_ns, y.busy_ns, y.kernel_count,
                  y.memcpy_count, y.memset_count, y.largest_gaps));
  }
  d.At("model.");
  d.Eq("extent", std::tie(a.first_ns, a.last_ns, a.event_count, a.sample_count),
       std::tie(b.first_ns, b.last_ns, b.event_count, b.sample_count));
  if (compare_memory) d.Eq("memory", a.MemoryBytes(), b.MemoryBytes());
  return d.result();
}

}  // namespace gt::test

namespace gt::test {

// A 64-bit digest of the fields ModelDiff compares, for comparing models that do not fit in memory together
// (wasm32, 100 M events).
inline uint64_t ModelFingerprint(const gt::viewer::TraceModel& m) {
  using namespace gt::viewer;
  uint64_t h = 0xcbf29ce484222325ull;
  auto bytes = [&h](const void* p, size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
  };
  auto pod = [&](const auto& v) { bytes(&v, sizeof v); };
  // Sizes as 64 bits: the same model hashes alike natively and in wasm32 (the page against native).
  auto size = [&](size_t n) { pod(uint64_t{n}); };
  auto str = [&](const std::string& s) { size(s.size()), bytes(s.data(), s.size()); };
  auto column = [&](const auto& v) { size(v.size()), bytes(v.data(), v.size() * sizeof(v[0])); };
  auto pairs = [&](const auto& v) {
    size(v.size());
    for (const auto& [a, b] : v) pod(a), pod(b);
  };
  pod(m.format);
  for (const auto& [k, v] : m.metadata.entries) str(k), str(v);
  pod(m.report.chunks_ok), pod(m.report.chunks_lost), pod(m.report.records), pod(m.report.bytes_lost);
  for (const auto& p : m.report.problems) str(p);
  for (const auto& l : m.losses) str(l.name), pod(l.severity), pod(l.pid), pod(l.count), str(l.detail);
  for (const auto& s : m.strings) str(s);
  column(m.name_counts);
  for (const auto& g : m.groups) pod(g.kind), str(g.name), str(g.key), column(g.tracks);
  for (const auto& t : m.tracks) {
    pod(t.kind), pod(t.group), str(t.name), str(t.key), pod(t.first_lane), pod(t.lane_count);
    pod(t.event_count), pod(t.first_ns), pod(t.last_ns), pod(t.counter);
  }
  for (const auto& l : m.lanes) {
    pod(l.track), pod(l.depth), column(l.start), column(l.dur), column(l.name), column(l.ref), column(l.aux);
    pairs(l.long_dur), pairs(l.return_code), pairs(l.args), pod(l.aux_sorted);
    for (const auto& level : l.lod) pairs(level);
  }
  for (const auto& c : m.counters) {
    pod(c.name), pod(c.unit), pod(c.track), column(c.time), column(c.value), pod(c.min), pod(c.max);
    for (const auto& level : c.levels) pairs(level);
  }
  for (const auto& f : m.flows) pod(f.from), pod(f.to);
  for (const auto& c : m.launch_configs) pod(c.name), pod(c.grid), pod(c.block), pod(c.registers_per_thread);
  size(m.memcpys.size()), size(m.memsets.size()), size(m.nvtx.size()), size(m.syncs.size());
  for (const auto& d : m.device_summaries) {
    pod(d.device_id), pod(d.first_ns), pod(d.last_ns), pod(d.busy_ns), pod(d.kernel_count);
    pairs(d.largest_gaps);
  }
  pod(m.first_ns), pod(m.last_ns), pod(m.event_count), pod(m.sample_count);
  return h;
}

}  // namespace gt::test

#include "gt/trace_data.h"

#include <algorithm>
#include <unordered_map>

#include "schema.h"

namespace gt {

const std::string& TraceData::Str(StringId id) const {
  static const std::string kEmpty;
  return id < strings.size() ? strings[id] : kEmpty;
}

uint64_t TraceData::EventCount() const {
  return kernels.size() + memcpys.size() + memsets.size() + api_calls.size() + nvtx.size() + syncs.size() +
         memory.size() + overheads.size();
}

void TraceMetadata::MergeFrom(const TraceMetadata& later) {
  for (const auto& entry : later.entries) {
    // No structured binding here: clang 14 (em++) cannot capture one in the lambda.
    const std::string& k = entry.first;
    const std::string& v = entry.second;
    auto it = std::find_if(entries.begin(), entries.end(), [&](const auto& e) { return e.first == k; });
    if (it != entries.end())
      it->second = v;
    else
      entries.emplace_back(k, v);
  }
  for (const auto& c : later.clock_syncs) {
    bool seen = std::any_of(clock_syncs.begin(), clock_syncs.end(), [&](const ClockSync& o) {
      return o.realtime_ns == c.realtime_ns && o.trace_ns == c.trace_ns;
    });
    if (!seen) clock_syncs.push_back(c);
  }
}

void TraceData::OnMetadata(const TraceMetadata& m) {
  metadata.MergeFrom(m);
}

void TraceData::OnStrings(StringId first_id, std::span<const std::string_view> s) {
  if (strings.size() < size_t(first_id) + s.size()) strings.resize(size_t(first_id) + s.size());
  for (size_t i = 0; i < s.size(); ++i) strings[first_id + i].assign(s[i]);
}

void UpdateProcess(ProcessRecord& q, const ProcessRecord& p) {
  if (p.end_ns != 0 || p.exit_kind != uint8_t(ExitKind::kRunning)) {
    if (p.end_ns) q.end_ns = p.end_ns;
    q.exit_code = p.exit_code, q.exit_kind = p.exit_kind;
  }
  if (!q.parent_pid) q.parent_pid = p.parent_pid;
  if (!q.name) q.name = p.name;
  if (!q.command_line) q.command_line = p.command_line;
  if (!q.start_ns) q.start_ns = p.start_ns;
  if (!q.host) q.host = p.host;
  if (!q.boot_id) q.boot_id = p.boot_id;
  if (!q.job) q.job = p.job;
  if (q.rank < 0) q.rank = p.rank, q.local_rank = p.local_rank;
  if (!q.world_size) q.world_size = p.world_size;
}

void CollapseProcesses(std::vector<ProcessRecord>& processes) {
  std::unordered_map<uint32_t, size_t> first;
  size_t kept = 0;
  for (size_t i = 0; i < processes.size(); ++i) {
    const ProcessRecord p = processes[i];
    auto [it, fresh] = first.try_emplace(p.pid, kept);
    if (fresh)
      processes[kept++] = p;
    else
      UpdateProcess(processes[it->second], p);
  }
  processes.resize(kept);
}

}  // namespace gt

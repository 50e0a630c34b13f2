// The report printed when the app ends: what ran on the GPU, how busy it was, and what is missing.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>

#include "gt/name_stats.h"
#include "gt/units.h"
#include "launcher/launcher.h"

namespace gt::launcher {
namespace {

std::string Ellipsize(const std::string& s, size_t n) {
  if (s.size() <= n) return s;
  return s.substr(0, n - 3) + "...";
}

}  // namespace

TraceSummary Summarize(const TraceData& d, size_t top_n) {
  TraceSummary s;
  s.processes = static_cast<uint32_t>(d.processes.size());
  {
    std::vector<uint32_t> pids;
    for (const auto& p : d.processes) pids.push_back(p.pid);
    for (const auto& k : d.kernels) pids.push_back(k.pid);
    for (const auto& a : d.api_calls) pids.push_back(a.pid);
    std::sort(pids.begin(), pids.end());
    s.processes = static_cast<uint32_t>(std::unique(pids.begin(), pids.end()) - pids.begin());
  }
  {
    std::vector<std::string> uuids;  // every process reports the devices it sees: count each GPU once
    for (const auto& dev : d.devices) uuids.push_back(d.Str(dev.uuid) + "/" + std::to_string(dev.device_id));
    std::sort(uuids.begin(), uuids.end());
    s.devices = static_cast<uint32_t>(std::unique(uuids.begin(), uuids.end()) - uuids.begin());
  }
  s.kernels = d.kernels.size();
  s.memcpys = d.memcpys.size();
  s.memsets = d.memsets.size();
  s.api_calls = d.api_calls.size();
  s.nvtx = d.nvtx.size();
  s.syncs = d.syncs.size();
  s.memory = d.memory.size();

  NameAggregator by_name;
  for (const auto& k : d.kernels) by_name.Add(k.name, k.start, k.end > k.start ? k.end - k.start : 0);
  s.kernel_ns = by_name.total_ns();
  for (const NameRow& r : by_name.Rows([&](StringId a, StringId b) { return d.Str(a) < d.Str(b); }))
    s.top_kernels.push_back({d.Str(r.name), r.stats.count, r.stats.total_ns, r.stats.max_ns});
  if (s.top_kernels.size() > top_n) s.top_kernels.resize(top_n);

  std::map<uint8_t, CopyStat> copies;
  for (const auto& m : d.memcpys) {
    auto& c = copies[m.copy_kind];
    c.copy_kind = m.copy_kind;
    ++c.count;
    c.bytes += m.bytes;
    c.total_ns += m.end > m.start ? m.end - m.start : 0;
  }
  for (auto& [k, c] : copies) s.copies.push_back(c);

  // GPU idle share: per device, the part of [first GPU activity, last GPU activity] with nothing running.
  std::map<uint32_t, std::vector<std::pair<int64_t, int64_t>>> per_device;
  for (const auto& k : d.kernels) per_device[k.device_id].emplace_back(k.start, k.end);
  for (const auto& m : d.memcpys) per_device[m.device_id].emplace_back(m.start, m.end);
  for (const auto& m : d.memsets) per_device[m.device_id].emplace_back(m.start, m.end);
  for (auto& [dev, iv] : per_device) {
    std::sort(iv.begin(), iv.end());
    int64_t first = iv.front().first, last = iv.front().second;
    int64_t busy = 0, cur_s = iv.front().first, cur_e = iv.front().second;
    for (size_t i = 1; i < iv.size(); ++i) {
      last = std::max(last, iv[i].second);
      if (iv[i].first <= cur_e) {
        cur_e = std::max(cur_e, iv[i].second);
      } else {
        busy += cur_e - cur_s;
        cur_s = iv[i].first;
        cur_e = iv[i].second;
      }
    }
    busy += cur_e - cur_s;
    s.gpu_span_ns += std::max<int64_t>(0, last - first);
    s.gpu_busy_ns += std::max<int64_t>(0, busy);
  }

  std::map<std::string, uint64_t> loss_counts;
  std::map<std::string, std::string> loss_detail;
  for (const auto& l : d.losses) {
    const std::string& name = d.Str(l.name);
    if (l.severity == static_cast<uint8_t>(Severity::kInfo)) continue;
    if (l.severity == static_cast<uint8_t>(Severity::kDataLoss)) {
      loss_counts[name] += l.count;
      loss_detail[name] = d.Str(l.detail);
    } else {
      std::string w = name + ": " + d.Str(l.detail);
      if (l.pid) w += " (pid " + std::to_string(l.pid) + ")";
      if (std::find(s.warnings.begin(), s.warnings.end(), w) == s.warnings.end()) s.warnings.push_back(w);
    }
  }
  for (const auto& [name, count] : loss_counts) {
    std::string line = name + ": " + std::to_string(count);
    if (!loss_detail[name].empty()) line += " (" + loss_detail[name] + ")";
    s.losses.push_back(line);
  }
  return s;
}

std::string FormatSummary(const TraceSummary& s, const std::string& path, uint64_t bytes) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line,
                "gcollect: %u process%s, %u GPU%s: %" PRIu64 " kernels, %" PRIu64 " memcpys, %" PRIu64
                " memsets, %" PRIu64 " API calls, %" PRIu64 " NVTX ranges\n",
                s.processes, s.processes == 1 ? "" : "es", s.devices, s.devices == 1 ? "" : "s", s.kernels,
                s.memcpys, s.memsets, s.api_calls, s.nvtx);
  out += line;
  if (!s.top_kernels.empty()) {
    out += "  top kernels by GPU time:\n";
    for (const auto& k : s.top_kernels) {
      double share = s.kernel_ns > 0 ? 100.0 * double(k.total_ns) / double(s.kernel_ns) : 0;
      std::snprintf(
          line, sizeof line, "    %5.1f%%  %s  %7" PRIu64 " x  avg %s  %s\n", share,
          PadColumn(FormatDuration(k.total_ns), 10, true).c_str(), k.count,
          PadColumn(FormatDuration(k.count ? double(k.total_ns) / double(k.count) : 0), 10, true).c_str(),
          Ellipsize(k.name, 70).c_str());
      out += line;
    }
  }
  for (const auto& c : s.copies) {
    std::snprintf(line, sizeof line, "  memcpy %-5s %7" PRIu64 " x  %10s  %s  %11s\n",
                  CopyKindName(c.copy_kind), c.count, FormatBytes(double(c.bytes)).c_str(),
                  PadColumn(FormatDuration(c.total_ns), 10, true).c_str(),
                  FormatBandwidth(double(c.bytes), double(c.total_ns)).c_str());
    out += line;
  }
  if (s.gpu_span_ns > 0) {
    std::snprintf(line, sizeof line, "  GPU idle: %.1f%% of %s between the first and last GPU activity\n",
                  100.0 * s.gpu_idle_share(), FormatDuration(s.gpu_span_ns).c_str());
    out += line;
  }
  for (const auto& l : s.losses) out += "  DROPPED " + l + "\n";
  for (const auto& w : s.warnings) out += "  warning: " + w + "\n";
  out += "  trace: " + path + " (" + FormatBytes(double(bytes)) + ")\n";
  return out;
}

}  // namespace gt::launcher

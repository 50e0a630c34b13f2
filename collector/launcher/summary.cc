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

const std::string& SummaryBuilder::Str(StringId id) const {
  static const std::string kEmpty;
  return id < strings_.size() ? strings_[id] : kEmpty;
}

void SummaryBuilder::OnStrings(StringId first_id, std::span<const std::string_view> strings) {
  if (strings_.size() < first_id + strings.size()) strings_.resize(first_id + strings.size());
  for (size_t i = 0; i < strings.size(); ++i) strings_[first_id + i] = std::string(strings[i]);
}

void SummaryBuilder::OnProcesses(std::span<const ProcessRecord> r) {
  for (const auto& p : r) pids_.push_back(p.pid);
}

void SummaryBuilder::OnDevices(std::span<const DeviceRecord> r) {
  // Every process reports the devices it sees: each GPU counts once (by uuid and id, compared as text at the
  // end since each part interns its own strings).
  for (const auto& dev : r) device_keys_.emplace_back(dev.uuid, dev.device_id);
}

void SummaryBuilder::OnKernels(std::span<const KernelRecord> r) {
  summary_.kernels += r.size();
  for (const auto& k : r) {
    kernel_names_.Add(k.name, k.start, k.end > k.start ? k.end - k.start : 0);
    busy_[k.device_id].emplace_back(k.start, k.end);
    NotePid(k.pid);
  }
}

void SummaryBuilder::OnMemcpys(std::span<const MemcpyRecord> r) {
  summary_.memcpys += r.size();
  for (const auto& m : r) {
    auto& c = copies_[m.copy_kind];
    c.copy_kind = m.copy_kind;
    ++c.count;
    c.bytes += m.bytes;
    c.total_ns += m.end > m.start ? m.end - m.start : 0;
    busy_[m.device_id].emplace_back(m.start, m.end);
  }
}

void SummaryBuilder::OnMemsets(std::span<const MemsetRecord> r) {
  summary_.memsets += r.size();
  for (const auto& m : r) busy_[m.device_id].emplace_back(m.start, m.end);
}

void SummaryBuilder::OnApiCalls(std::span<const ApiCallRecord> r) {
  summary_.api_calls += r.size();
  for (const auto& a : r) NotePid(a.pid);
}

void SummaryBuilder::NotePid(uint32_t pid) {
  if (!pids_.empty() && pids_.back() == pid) return;  // records come in runs of one process
  pids_.push_back(pid);
  if (pids_.size() > (1u << 16)) {  // many interleaved processes: dedupe before it grows with the records
    std::sort(pids_.begin(), pids_.end());
    pids_.erase(std::unique(pids_.begin(), pids_.end()), pids_.end());
  }
}

void SummaryBuilder::OnLoss(std::span<const LossRecord> r) {
  losses_.insert(losses_.end(), r.begin(), r.end());
}

TraceSummary SummaryBuilder::Finish(size_t top_n) {
  TraceSummary s = summary_;
  std::sort(pids_.begin(), pids_.end());
  s.processes = static_cast<uint32_t>(std::unique(pids_.begin(), pids_.end()) - pids_.begin());
  {
    std::vector<std::string> uuids;
    for (const auto& [uuid, id] : device_keys_) uuids.push_back(Str(uuid) + "/" + std::to_string(id));
    std::sort(uuids.begin(), uuids.end());
    s.devices = static_cast<uint32_t>(std::unique(uuids.begin(), uuids.end()) - uuids.begin());
  }
  s.kernel_ns = kernel_names_.total_ns();
  for (const NameRow& r : kernel_names_.Rows([&](StringId a, StringId b) { return Str(a) < Str(b); }))
    s.top_kernels.push_back({Str(r.name), r.stats.count, r.stats.total_ns, r.stats.max_ns});
  if (s.top_kernels.size() > top_n) s.top_kernels.resize(top_n);
  for (auto& [k, c] : copies_) s.copies.push_back(c);

  // GPU idle share: per device, the part of [first GPU activity, last GPU activity] with nothing running.
  for (auto& [dev, iv] : busy_) {
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
  for (const auto& l : losses_) {
    const std::string& name = Str(l.name);
    if (l.severity == static_cast<uint8_t>(Severity::kInfo)) continue;
    if (l.severity == static_cast<uint8_t>(Severity::kDataLoss)) {
      loss_counts[name] += l.count;
      loss_detail[name] = Str(l.detail);
    } else {
      std::string w = name + ": " + Str(l.detail);
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

TraceSummary Summarize(const TraceData& d, size_t top_n) {
  SummaryBuilder b;
  std::vector<std::string_view> views(d.strings.begin(), d.strings.end());
  b.OnStrings(0, views);
#define GT_FEED(R, Method, field) b.Method(std::span<const R>(d.field));
  GT_FOR_EACH_RECORD_TYPE(GT_FEED)
#undef GT_FEED
  return b.Finish(top_n);
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

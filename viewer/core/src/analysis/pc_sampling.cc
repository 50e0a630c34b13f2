// [SECTION] PC sampling of analysis.h: per-kernel stall histograms and hot spots from PC samples.
#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

#include "gt/trace_data.h"
#include "gt/viewer/analysis.h"

namespace gt {
namespace {

struct SpotAcc {
  uint64_t samples = 0;
  uint64_t best_pc_samples = 0;
  uint64_t pc_offset = 0;
  uint32_t pcs = 0;
  std::string file;
  uint32_t line = 0;
  std::map<std::string, uint64_t> reasons;
};

std::string_view Basename(std::string_view path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

PcHotSpot Finish(const SpotAcc& a, uint64_t kernel_samples) {
  PcHotSpot h;
  h.pc_offset = a.pc_offset;
  h.source_file = a.file;
  h.source_line = a.line;
  h.pcs = a.pcs;
  h.samples = a.samples;
  h.share = kernel_samples ? double(a.samples) / double(kernel_samples) : 0;
  uint64_t best = 0;
  for (const auto& [reason, n] : a.reasons)
    if (n > best) {  // map order breaks ties by name: deterministic
      best = n;
      h.dominant_reason = reason;
    }
  h.dominant_share = a.samples ? double(best) / double(a.samples) : 0;
  return h;
}

std::vector<PcHotSpot> Top(std::vector<PcHotSpot> spots, size_t top) {
  std::stable_sort(spots.begin(), spots.end(), [](const PcHotSpot& a, const PcHotSpot& b) {
    return a.samples != b.samples ? a.samples > b.samples : a.pc_offset < b.pc_offset;
  });
  if (spots.size() > top) spots.resize(top);
  return spots;
}

std::string Summary(const PcSamplingProfile& p) {
  std::string out;
  const PcStallBin* top_stall = nullptr;
  for (const auto& r : p.reasons) {
    const StallReasonInfo* info = FindStallReason(r.reason);
    if (!info || info->is_stall) {
      top_stall = &r;
      break;
    }
  }
  char buf[200];
  // Warps that are ready (not_selected) or issuing (selected) are not stalled: when they hold most samples
  // the kernel is issue-bound and the top stall is a footnote, so say that first.
  const PcStallBin* top = p.reasons.empty() ? nullptr : &p.reasons.front();
  const StallReasonInfo* top_info = top ? FindStallReason(top->reason) : nullptr;
  if (top && top_info && !top_info->is_stall && top->share >= 0.5) {
    snprintf(buf, sizeof buf, "%s of samples %s (not a stall; %s)", FormatPercent(100 * top->share).c_str(),
             top_info->title, top_info->short_fix);
    out = buf;
    if (top_stall) {
      const StallReasonInfo* info = FindStallReason(top_stall->reason);
      snprintf(buf, sizeof buf, "; top stall %s %s", info ? info->title : top_stall->reason.c_str(),
               FormatPercent(100 * top_stall->share).c_str());
      out += buf;
    }
  } else if (top_stall) {
    const StallReasonInfo* info = FindStallReason(top_stall->reason);
    snprintf(buf, sizeof buf, "%s of samples stalled on %s", FormatPercent(100 * top_stall->share).c_str(),
             info ? info->title : top_stall->reason.c_str());
    out = buf;
    if (info) out += std::string(": ") + info->short_fix;
  } else if (top) {
    snprintf(buf, sizeof buf, "no stall dominates (%s of samples %s)",
             FormatPercent(100 * top->share).c_str(), top->reason.c_str());
    out = buf;
  }
  const PcHotSpot* hot = !p.by_line.empty() ? &p.by_line.front()
                         : !p.by_pc.empty() ? &p.by_pc.front()
                                            : nullptr;
  if (hot) {
    const StallReasonInfo* info = FindStallReason(hot->dominant_reason);
    snprintf(buf, sizeof buf, "; hottest %s (%s of samples, mostly %s)", HotSpotLabel(*hot).c_str(),
             FormatPercent(100 * hot->share).c_str(), info ? info->title : hot->dominant_reason.c_str());
    out += buf;
  }
  return out;
}

}  // namespace

std::vector<PcSamplingProfile> BuildPcSamplingProfiles(std::span<const StallSample> samples,
                                                       const StringLookup& str, size_t top) {
  // Per (pid, name id): per PC (reason counts, line), per reason.
  struct KernelAcc {
    std::map<uint64_t, SpotAcc> pcs;
    std::map<std::string, uint64_t> reasons;
    uint64_t total = 0;
  };
  std::map<std::pair<uint32_t, StringId>, KernelAcc> kernels;
  for (const auto& s : samples) {
    if (!IsPcSample(s) || s.count == 0) continue;
    KernelAcc& k = kernels[{s.pid, s.kernel_name}];
    std::string reason(str(s.reason));
    k.total += s.count;
    k.reasons[reason] += s.count;
    SpotAcc& pc = k.pcs[s.pc_offset];
    pc.pc_offset = s.pc_offset;
    pc.pcs = 1;
    pc.samples += s.count;
    pc.reasons[reason] += s.count;
    if (s.source_line && s.source_file && pc.line == 0) {
      pc.file = std::string(str(s.source_file));
      pc.line = s.source_line;
    }
  }
  std::vector<PcSamplingProfile> out;
  for (auto& [key, k] : kernels) {
    PcSamplingProfile p;
    p.pid = key.first;
    p.kernel_name = std::string(str(key.second));
    p.samples = k.total;
    p.distinct_pcs = static_cast<uint32_t>(k.pcs.size());
    uint64_t stalled = 0;
    for (const auto& [reason, n] : k.reasons) {
      const StallReasonInfo* info = FindStallReason(reason);
      if (!info || info->is_stall) stalled += n;
    }
    for (const auto& [reason, n] : k.reasons) {
      PcStallBin b;
      b.reason = reason;
      b.samples = n;
      b.share = k.total ? double(n) / double(k.total) : 0;
      const StallReasonInfo* info = FindStallReason(reason);
      b.stall_share = (!info || info->is_stall) && stalled ? double(n) / double(stalled) : 0;
      p.reasons.push_back(std::move(b));
    }
    std::stable_sort(p.reasons.begin(), p.reasons.end(),
                     [](const PcStallBin& a, const PcStallBin& b) { return a.samples > b.samples; });
    std::vector<PcHotSpot> by_pc;
    std::map<std::pair<std::string, uint32_t>, SpotAcc> lines;
    uint64_t with_line = 0;
    for (const auto& [pc, acc] : k.pcs) {
      by_pc.push_back(Finish(acc, k.total));
      if (!acc.line) continue;
      with_line += acc.samples;
      SpotAcc& l = lines[{acc.file, acc.line}];
      l.file = acc.file;
      l.line = acc.line;
      l.samples += acc.samples;
      l.pcs += 1;
      if (acc.samples > l.best_pc_samples) {  // ascending PCs: ties keep the lowest
        l.best_pc_samples = acc.samples;
        l.pc_offset = pc;
      }
      for (const auto& [reason, n] : acc.reasons) l.reasons[reason] += n;
    }
    p.by_pc = Top(std::move(by_pc), top);
    std::vector<PcHotSpot> by_line;
    for (const auto& [key2, acc] : lines) by_line.push_back(Finish(acc, k.total));
    p.by_line = Top(std::move(by_line), top);
    p.line_coverage = k.total ? double(with_line) / double(k.total) : 0;
    p.summary = Summary(p);
    out.push_back(std::move(p));
  }
  std::stable_sort(out.begin(), out.end(), [](const PcSamplingProfile& a, const PcSamplingProfile& b) {
    return a.samples > b.samples;
  });
  return out;
}

std::vector<PcSamplingProfile> BuildPcSamplingProfiles(const TraceData& trace, size_t top) {
  return BuildPcSamplingProfiles(
      trace.stall_samples, [&](StringId id) -> std::string_view { return trace.Str(id); }, top);
}

const PcSamplingProfile* FindPcSamplingProfile(std::span<const PcSamplingProfile> profiles, uint32_t pid,
                                               std::string_view kernel_name) {
  for (const auto& p : profiles)
    if (p.pid == pid && p.kernel_name == kernel_name) return &p;
  return nullptr;
}

std::string HotSpotLabel(const PcHotSpot& h) {
  char buf[48];
  if (h.source_line && !h.source_file.empty()) {
    snprintf(buf, sizeof buf, ":%u", h.source_line);
    return std::string(Basename(h.source_file)) + buf;
  }
  snprintf(buf, sizeof buf, "pc 0x%llx", static_cast<unsigned long long>(h.pc_offset));
  return buf;
}

std::string FormatPcSamplingProfile(const PcSamplingProfile& p) {
  std::string out;
  char buf[256];
  snprintf(buf, sizeof buf, "%s: %llu samples at %u PCs, %s with a source line\n", p.kernel_name.c_str(),
           static_cast<unsigned long long>(p.samples), p.distinct_pcs,
           FormatPercent(100 * p.line_coverage).c_str());
  out += buf;
  out += p.summary + "\n";
  out += "reason               samples   share  of stalls\n";
  for (const auto& r : p.reasons) {
    snprintf(buf, sizeof buf, "%-18s %9llu %7s %9s\n", r.reason.c_str(),
             static_cast<unsigned long long>(r.samples), FormatPercent(100 * r.share).c_str(),
             r.stall_share > 0 ? FormatPercent(100 * r.stall_share).c_str() : "-");
    out += buf;
  }
  auto table = [&](const char* title, const std::vector<PcHotSpot>& spots, bool with_pc) {
    if (spots.empty()) return;
    snprintf(buf, sizeof buf, "%-24s %9s %7s  %-18s %s\n", title, "samples", "share", "dominant", "PCs");
    out += buf;
    for (const auto& h : spots) {
      std::string label = HotSpotLabel(h);
      if (with_pc && h.source_line) {
        char pc[24];
        snprintf(pc, sizeof pc, "0x%llx ", static_cast<unsigned long long>(h.pc_offset));
        label = pc + label;
      }
      snprintf(buf, sizeof buf, "%-24s %9llu %7s  %-18s %u\n", label.c_str(),
               static_cast<unsigned long long>(h.samples), FormatPercent(100 * h.share).c_str(),
               (h.dominant_reason + " " + FormatPercent(100 * h.dominant_share)).c_str(), h.pcs);
      out += buf;
    }
  };
  table("hot lines", p.by_line, false);
  table("hot PCs", p.by_pc, true);
  return out;
}

}  // namespace gt

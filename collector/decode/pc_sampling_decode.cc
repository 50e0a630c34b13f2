#include "decode/pc_sampling_decode.h"

#include <algorithm>

namespace gt::decode {

std::string PcSamplingReasonKey(std::string_view name) {
  constexpr std::string_view kStalled = "smsp__pcsamp_warps_issue_stalled_";
  constexpr std::string_view kPcsamp = "smsp__pcsamp_";
  constexpr std::string_view kNotIssued = "_not_issued";
  if (name.size() >= kNotIssued.size() && name.substr(name.size() - kNotIssued.size()) == kNotIssued)
    return "";
  std::string_view key = name;
  if (key.substr(0, kStalled.size()) == kStalled)
    key.remove_prefix(kStalled.size());
  else if (key.substr(0, kPcsamp.size()) == kPcsamp)
    key.remove_prefix(kPcsamp.size());
  // Not warp states: CUPTI's own sample and drop counters share the index space (seen on GH100).
  if (key == "sample_count" || key == "samples_data_dropped") return "";
  // Same states, the counters' names: one vocabulary in the viewer.
  if (key == "no_instructions") return "no_instruction";
  if (key == "warpgroup_arrive")
    return "gmma";  // smsp__warps_issue_stalled_gmma: waiting on WARPGROUP.ARRIVES
  return std::string(key);
}

PcStallReasonTable::PcStallReasonTable(const uint32_t* indices, const char* const* names, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    std::string name = names && names[i] ? names[i] : "";
    cupti_names_.push_back(name);
    if (indices) keys_[indices[i]] = PcSamplingReasonKey(name);
  }
}

std::string_view PcStallReasonTable::Key(uint32_t index) const {
  auto it = keys_.find(index);
  return it == keys_.end() ? std::string_view() : std::string_view(it->second);
}

void PcSampleAggregator::Add(const CUpti_PCSamplingData& data, const PcStallReasonTable& reasons,
                             const std::function<std::string(const char*)>& demangle) {
  ++totals_.buffers;
  totals_.total_samples += data.totalSamples;
  totals_.dropped_samples += data.droppedSamples;
  totals_.non_user_samples += data.nonUsrKernelsTotalSamples;
  if (data.hardwareBufferFull) ++totals_.hardware_buffer_full;
  if (!data.pPcData) return;
  // CUPTI never fills more than the buffer holds; a larger count means a corrupt or foreign buffer.
  const size_t n = std::min(data.totalNumPcs, data.collectNumPcs);
  for (size_t i = 0; i < n; ++i) {
    const CUpti_PCSamplingPCData& pc = data.pPcData[i];
    if (!pc.stallReason && pc.stallReasonCount) {
      ++totals_.truncated_records;
      continue;
    }
    std::string function = pc.functionName ? pc.functionName : "";
    auto named = kernel_names_.find(function);
    if (named == kernel_names_.end())
      named =
          kernel_names_.emplace(function, function.empty() ? "(unknown)" : demangle(pc.functionName)).first;
    for (size_t r = 0; r < pc.stallReasonCount; ++r) {
      const CUpti_PCSamplingStallReason& s = pc.stallReason[r];
      if (s.samples == 0) continue;
      if (!reasons.Known(s.pcSamplingStallReasonIndex)) {
        totals_.unknown_reason_samples += s.samples;
        continue;
      }
      std::string_view key = reasons.Key(s.pcSamplingStallReasonIndex);
      if (key.empty()) continue;  // a _not_issued twin
      bins_[Key{function, pc.cubinCrc, pc.pcOffset, std::string(key)}] += s.samples;
      totals_.attributed_samples += s.samples;
    }
  }
}

std::vector<PcSampleRow> PcSampleAggregator::TakeRows() {
  std::vector<PcSampleRow> rows;
  rows.reserve(bins_.size());
  for (auto& [key, count] : bins_) {
    PcSampleRow r;
    r.function = std::get<0>(key);
    r.kernel = kernel_names_[r.function];
    r.cubin_crc = std::get<1>(key);
    r.pc_offset = std::get<2>(key);
    r.reason = std::get<3>(key);
    r.count = count;
    rows.push_back(std::move(r));
  }
  bins_.clear();
  std::stable_sort(rows.begin(), rows.end(), [](const PcSampleRow& a, const PcSampleRow& b) {
    return std::tie(a.kernel, a.pc_offset, a.reason) < std::tie(b.kernel, b.pc_offset, b.reason);
  });
  return rows;
}

const SourceLine& SourceLineCache::Lookup(uint64_t crc, const std::string& function, uint64_t pc) {
  auto key = std::make_tuple(crc, function, pc);
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  if (lookups_ >= max_lookups_) {
    ++skipped_;
    return none_;
  }
  ++lookups_;
  SourceLine line;
  if (!resolve_ || !resolve_(crc, function, pc, &line) || !line.known()) line = SourceLine{};
  if (line.known()) ++resolved_;
  return cache_.emplace(std::move(key), std::move(line)).first->second;
}

std::string JoinSourcePath(const char* dir, const char* file) {
  std::string f = file ? file : "";
  std::string d = dir ? dir : "";
  if (f.empty()) return "";
  if (d.empty() || f[0] == '/') return f;
  if (d.back() != '/') d += '/';
  return d + f;
}

}  // namespace gt::decode

// CUPTI PC sampling (cupti_pcsampling.h) -> StallSample aggregates. Pure: CUPTI *headers* only, no CUPTI
// calls, so tests feed synthetic CUpti_PCSamplingData buffers.
//
// What the injection's PC-sampling module (inject/pc_sampling.cc) does with these:
//   GetData buffer --Add--> PcSampleAggregator (kernel x PC x reason counts, sample/drop totals)
//   TakeRows() at every flush --> SourceLineCache (cubin CRC + function + PC -> file:line, resolved once)
//   --> one StallSample per (kernel, PC, reason) with launch_ordinal = kNone (aggregated over launches).
// A flush writes the counts gathered since the previous flush, so the same (kernel, PC, reason) can appear in
// several records of one trace: readers sum them (the viewer's PC-sampling analysis does).
//
// Reason names: CUPTI calls them smsp__pcsamp_warps_issue_stalled_<reason> (every sample of a warp in that
// state) and ..._<reason>_not_issued (the subset of those samples in which the warp did not issue). The
// histogram uses the first kind, keyed like the counters set (long_scoreboard, barrier, ...), so the viewer
// shows one vocabulary for both sources.
#pragma once

#include <cupti_pcsampling.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace gt::decode {

// "smsp__pcsamp_warps_issue_stalled_long_scoreboard" -> "long_scoreboard". The "_not_issued" twins -> ""
// (not part of the histogram), and so do CUPTI's counters in the same list (smsp__pcsamp_sample_count,
// smsp__pcsamp_samples_data_dropped). Names without the prefix are kept (minus a "smsp__pcsamp_" prefix) so a
// new reason still shows up; "no_instructions" and "warpgroup_arrive" become the counters' "no_instruction"
// and "gmma". The 40 names GH100 reports are in tests/collector/pc_sampling_test.cc.
std::string PcSamplingReasonKey(std::string_view cupti_name);

// Stall-reason index (as in CUpti_PCSamplingStallReason) -> key, from cuptiPCSamplingGetStallReasons.
class PcStallReasonTable {
 public:
  PcStallReasonTable() = default;
  PcStallReasonTable(const uint32_t* indices, const char* const* names, size_t count);
  // "" for an index CUPTI never announced or one left out of the histogram (_not_issued).
  std::string_view Key(uint32_t index) const;
  bool Known(uint32_t index) const { return keys_.count(index) != 0; }
  size_t size() const { return keys_.size(); }
  // The names CUPTI announced, for a verbose log.
  const std::vector<std::string>& cupti_names() const { return cupti_names_; }

 private:
  std::unordered_map<uint32_t, std::string> keys_;
  std::vector<std::string> cupti_names_;
};

// One histogram bin waiting to be written: samples of one kernel at one PC in one state.
struct PcSampleRow {
  std::string kernel;    // demangled, as the timeline names kernels
  std::string function;  // CUPTI's (mangled) function name: what source correlation needs
  uint64_t cubin_crc = 0;
  uint64_t pc_offset = 0;
  std::string reason;  // key, see PcSamplingReasonKey
  uint64_t count = 0;
};

struct PcSamplingTotals {
  uint64_t buffers = 0;                 // CUpti_PCSamplingData buffers added
  uint64_t total_samples = 0;           // CUPTI's totalSamples: user + non-user kernels + dropped
  uint64_t dropped_samples = 0;         // dropped by the hardware (back pressure / overflow)
  uint64_t non_user_samples = 0;        // in kernels CUPTI gives no PCs for (driver-internal kernels)
  uint64_t attributed_samples = 0;      // samples in the histogram (known reasons, user kernels)
  uint64_t unknown_reason_samples = 0;  // reason index CUPTI never announced
  uint64_t hardware_buffer_full = 0;    // buffers that reported a full hardware buffer
  uint64_t truncated_records = 0;       // PC records whose counts were out of range (ignored)
};

// Accumulates PC records between flushes. Not thread-safe: the module holds its lock around it.
class PcSampleAggregator {
 public:
  // Adds the first totalNumPcs records of `data` (bounded by collectNumPcs). `demangle` turns CUPTI's
  // function name into the kernel name the timeline uses (called once per distinct name).
  void Add(const CUpti_PCSamplingData& data, const PcStallReasonTable& reasons,
           const std::function<std::string(const char*)>& demangle);
  // The bins gathered since the last call, ordered by kernel, PC, reason; clears them (totals stay).
  std::vector<PcSampleRow> TakeRows();
  const PcSamplingTotals& totals() const { return totals_; }
  bool empty() const { return bins_.empty(); }

 private:
  using Key = std::tuple<std::string, uint64_t, uint64_t, std::string>;  // function, crc, pc, reason
  std::map<Key, uint64_t> bins_;
  std::unordered_map<std::string, std::string> kernel_names_;  // function -> demangled
  PcSamplingTotals totals_;
};

// cubin CRC + function + PC -> source file and line, asked once per PC (CUPTI's correlation parses the
// cubin; asking again for every flush would cost more than the sampling). `resolve` returns false when the
// cubin is unknown or has no line info (-lineinfo); the answer is cached either way.
struct SourceLine {
  std::string file;  // "dir/file.cu" (or just the file when CUPTI gives no directory)
  uint32_t line = 0;
  bool known() const { return line != 0 && !file.empty(); }
};
class SourceLineCache {
 public:
  using Resolver = std::function<bool(uint64_t cubin_crc, const std::string& function, uint64_t pc_offset,
                                      SourceLine* out)>;
  explicit SourceLineCache(Resolver resolve, size_t max_lookups = 50000)
      : resolve_(std::move(resolve)), max_lookups_(max_lookups) {}
  const SourceLine& Lookup(uint64_t cubin_crc, const std::string& function, uint64_t pc_offset);
  uint64_t lookups() const { return lookups_; }
  uint64_t resolved() const { return resolved_; }
  uint64_t skipped() const { return skipped_; }  // PCs left without a line because max_lookups was reached

 private:
  Resolver resolve_;
  size_t max_lookups_;
  std::map<std::tuple<uint64_t, std::string, uint64_t>, SourceLine> cache_;
  SourceLine none_;
  uint64_t lookups_ = 0, resolved_ = 0, skipped_ = 0;
};

// "src/dir" + "file.cu" -> "src/dir/file.cu"; either may be empty or null.
std::string JoinSourcePath(const char* dir, const char* file);

}  // namespace gt::decode

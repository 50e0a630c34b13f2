// Per-name summaries of a trace's timed events and the comparison of two traces: what `nsys stats` users know
// as cuda_gpu_kern_sum, cuda_api_sum, cuda_gpu_mem_time_sum and nvtx_sum, and what a before/after check of an
// optimization needs (`gtrace stats`, `gtrace diff`). Headless and deterministic.
//
// [SECTION] Summaries by name
// [SECTION] What the CPU did while the GPU was idle
// [SECTION] Two traces compared
// [SECTION] Text reports
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gt/units.h"
#include "gt/viewer/cpu_samples.h"
#include "gt/viewer/model.h"

namespace gt::viewer {

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Summaries by name
// ---------------------------------------------------------------------------------------------------------------

enum class SummaryOf : uint8_t {
  kKernels = 0,  // GPU kernels, every stream of every device
  kCopies,       // memcpy ("Memcpy HtoD", ...) and memset ("Memset"), named by direction
  kApi,   // CUDA API calls a thread made itself (depth 0: the driver calls under a runtime call are its cost)
  kNvtx,  // NVTX ranges and imported host ops, every nesting depth
};
const char* SummaryOfName(SummaryOf what);  // "kernels", "copies", "api", "nvtx"

struct NameSummary {
  std::string name;  // text, not a StringId: summaries of two traces are compared by name
  uint64_t count = 0;
  int64_t total_ns = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  double avg_ns = 0;
  double share = 0;    // total_ns / the sum of total_ns over all rows (ranges nest: for kNvtx it is not time)
  uint64_t bytes = 0;  // kCopies: bytes moved or set
};

// One row per name, by total time (descending; ties by name).
std::vector<NameSummary> SummarizeByName(const TraceModel& model, SummaryOf what);
struct KernelSummaryRow;
// SummarizeByName for all four tables (by_name[k]: SummaryOf(k)) and KernelSummary(model) for all devices,
// the same rows, with each lane read once instead of once per table (the viewer index's build).
void SummarizeAll(const TraceModel& model, std::vector<KernelSummaryRow>* kernels,
                  std::vector<NameSummary> (&by_name)[4]);
// The sum of total_ns over `rows` (e.g. all kernel time, the figure `gtrace diff --fail-above` gates on).
int64_t TotalNs(const std::vector<NameSummary>& rows);

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] What the CPU did while the GPU was idle
// ---------------------------------------------------------------------------------------------------------------

// The first question of every timeline ("is the GPU starved, and by what?") answered per gap: the host
// activity recorded during one of a device's largest idle gaps, by the processes that use that device.
// Library calls (--trace=cublas,cudnn,nccl) and OS runtime waits (--trace=osrt) by name, each row named
// "cuBLAS: cublasSgemm_v2" or "OS wait: poll" (these are NVTX ranges of their domains, also counted in the
// kNvtx summary). Empty when the trace has none.
std::vector<NameSummary> SummarizeLibraryCalls(const TraceModel& model);

struct GapActivity {
  std::string name;    // "cudaMalloc", "step 3", "cublasSgemm_v2", "pthread_cond_wait"
  bool api = false;    // a CUDA API call (else an NVTX range or host op, a library call or an OS wait)
  int64_t overlap_ns;  // time of the gap it covers (the instances of one name added up)
  // A library call (--trace=cublas,cudnn,nccl: the library's NVTX domain, "cuBLAS", "cuDNN", "NCCL") or an OS
  // runtime wait (--trace=osrt: "OS runtime"); "" for API calls and the app's own ranges.
  std::string source;
  std::string thread;  // OS waits: the waiting thread ("pt_main_thread", else "thread 4242")
  bool os_wait() const;
  bool library() const { return !source.empty() && !os_wait(); }
  const char* kind() const;   // "api", "range", "library", "os_wait" (JSON, CSV, SQLite)
  std::string label() const;  // "API", "range", "cuBLAS", "OS wait": the stats text's column
};
struct IdleGap {
  uint32_t device_id = 0;
  std::string device;  // "GPU 0: NVIDIA H200"
  int64_t start_ns = 0, end_ns = 0;
  // Most overlap first: at most 3 API calls, 3 ranges, 3 library calls and 3 OS waits. OS waits count only on
  // threads that made CUDA calls (the threads that feed the GPU; CUDA's and NCCL's helper threads wait all
  // the time).
  std::vector<GapActivity> activity;
  std::string diagnosis;  // the likely cause and what to try, from the table in docs/user-guide.md
  // Sampled CPU stacks (gcollect --sample=cpu) of the threads that call CUDA in those processes (all their
  // threads where none did): the hottest Python frames (else native) during the gap.
  CpuRangeProfile cpu;
};
// The top_n longest idle gaps over all devices (longest first), gaps shorter than min_gap_ns left out.
std::vector<IdleGap> ExplainIdleGaps(const TraceModel& model, size_t top_n, int64_t min_gap_ns = 10'000);

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Two traces compared
// ---------------------------------------------------------------------------------------------------------------

struct NameChange {
  std::string name;
  NameSummary before, after;  // count 0 on the side where the name does not occur
  int64_t delta_ns() const { return after.total_ns - before.total_ns; }
  bool only_before() const { return after.count == 0; }
  bool only_after() const { return before.count == 0; }
};

// Rows of both summaries matched by name, by |change of total time| (descending; ties by name).
std::vector<NameChange> CompareSummaries(const std::vector<NameSummary>& before,
                                         const std::vector<NameSummary>& after);

// Relative change of b against a in percent; 0 when both are 0, +inf when only b is non-zero.
double PercentChange(double a, double b);
// The diff's spellings of a change (its tables and the viewer's delta columns): "+12.5%" ("new" for +inf),
// "+1.2 ms" / "-3 µs".
std::string SignedPercent(double a, double b);
std::string SignedDuration(int64_t ns);

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Text reports
// ---------------------------------------------------------------------------------------------------------------

// The `gtrace stats` report: trace summary, loss, per-device idle share, the largest idle gaps with what the
// CPU did during them, then kernels, CUDA API calls, memory copies/sets and NVTX ranges by total time (top_n
// rows each).
std::string StatsReport(const TraceModel& model, size_t top_n = 30);

// The `gtrace diff` report: both traces' spans and GPU busy time per device, the change of total kernel time,
// then the kernels, API calls and copies whose total time changed most (top_n rows each), names found in one
// trace only marked as such.
std::string DiffReport(const TraceModel& before, const std::string& before_label, const TraceModel& after,
                       const std::string& after_label, size_t top_n = 20);

}  // namespace gt::viewer

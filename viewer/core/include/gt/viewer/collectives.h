// NCCL collectives across ranks: every collective matched on every rank that ran it, with who arrived last
// and by how much, how long the others waited, and a straggler diagnosis in words. Works on any trace with
// NCCL kernels of several processes: one torchrun under gcollect, or a `gtrace merge` of one file per rank.
//
// Matching: the n-th NCCL kernel of one name in one process is the n-th of that name in every other process
// (NCCL runs a communicator's collectives in the same order on every rank, and its kernel name carries the
// operation, algorithm, protocol and type, which all ranks choose alike). A rank's kernel starts when that
// rank arrives; no rank can finish before the last one arrived, so for each rank `wait` = last arrival - its
// own arrival, and `transfer` = its end - the last arrival.
//
// With NCCL's NVTX payloads (NCCL 2.19+, recorded since format 1.2; gt/viewer/nvtx_args.h) a kernel is tied
// to the NCCL API range whose call launched it (the range on the launching thread around the launch), and
// kernels are matched by communicator hash + the call's sequence number on that communicator in each process
// instead: two communicators running the same kernel stay apart. Kernels without such a range (an older NCCL,
// or a launch from ncclGroupEnd outside the call's range) keep the name + ordinal match.
//
// With NCCL's profiler plugin records (format 1.3; gcollect sets NCCL_PROFILER_PLUGIN), a kernel is tied to
// the plugin's record of the operation it runs: NCCL starts that record on the launching thread right after
// the launch, so the record belongs to the last NCCL kernel launched on its thread before it. Such kernels
// are matched by (communicator hash, function, NCCL's own sequence number), exactly, in preference to the
// NVTX payloads' per-process call count; the record adds the algorithm, protocol, channels, warps, element
// count and data type, and with --nccl-plugin=channels each rank's per-channel GPU span.
//
// Bandwidth (nccl-tests' definitions, doc/PERFORMANCE.md there), per collective with a message size:
//   time  = the last rank's end - the last arrival (the collective once every rank was there)
//   algbw = S / time, S = NCCL's message size, x n for AllGather, ReduceScatter, AlltoAll, Gather, Scatter
//           (NCCL's payload holds the per-rank size for those)
//   busbw = algbw x 2(n-1)/n (AllReduce), x (n-1)/n (AllGather, ReduceScatter, AlltoAll, Gather, Scatter),
//           x 1 (Broadcast, Reduce, Send/Recv)
// n = the communicator's ranks from its init payload (ncclCommInitRank*), else the ranks matched.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gt/viewer/model.h"

namespace gt::viewer {

struct CollectiveRank {
  int32_t rank = -1;  // -1: the process named no rank (then ranks are told apart by pid)
  uint32_t pid = 0;
  EventId kernel;
  int64_t start = 0, end = 0;
  int64_t wait_ns = 0;      // last arrival - this rank's arrival
  int64_t transfer_ns = 0;  // end - last arrival
  EventId call;             // NCCL's API range ("ncclAllReduce") with its payload; invalid when none
  int32_t plugin = -1;      // index into TraceModel::nccl_colls: the plugin's record; -1 when none
  int64_t gpu_start = 0, gpu_end = 0;  // the plugin's per-channel GPU span (first start, last end); 0 none
  uint32_t channels = 0;               // channel records seen for it
};

struct Collective {
  std::string op;            // "AllReduce", "AllGather", "ReduceScatter", "Broadcast", "SendRecv", ...
  StringId kernel_name = 0;  // the full NCCL kernel name
  uint32_t ordinal = 0;      // n-th kernel of that name in each process
  std::vector<CollectiveRank> ranks;  // by rank (or pid)
  int64_t first_arrival = 0, last_arrival = 0;
  size_t last = 0;   // index in ranks of the last to arrive
  std::string step;  // NVTX range around the last rank's launch ("step 12"), "" when none
  // From NCCL's payloads, when present: matched by communicator (then `ordinal` is the sequence number of
  // the call on that communicator), the message size and the bandwidth it reached.
  bool by_comm = false;
  uint64_t comm = 0;
  uint64_t bytes = 0;           // NCCL's message size; 0 unknown
  uint32_t comm_ranks = 0;      // n of the formulas
  std::string redop;            // "Sum", ... where the op has one
  int64_t time_ns = 0;          // last end - last arrival
  double algbw = 0, busbw = 0;  // bytes per second; 0 unknown
  // From NCCL's profiler plugin, when every matched rank has its record: matched by (communicator, function,
  // sequence number), and NCCL's choices for it.
  bool by_plugin = false;
  uint64_t seq = 0;         // NCCL's sequence number (per communicator and function)
  std::string algo, proto;  // "Ring", "LL128"
  std::string datatype;     // "ncclFloat32"
  uint64_t count = 0;       // elements
  uint32_t n_channels = 0, n_warps = 0;
  int64_t skew_ns() const { return last_arrival - first_arrival; }
};

// One row of the bandwidth table: the collectives of one op, message size and rank count.
struct CollectiveBandwidth {
  std::string op;
  std::string algo;  // "Ring/LL128" from the plugin's records; "" without them
  uint64_t bytes = 0;
  uint32_t ranks = 0;
  uint32_t count = 0;
  int64_t median_ns = 0;        // median time (last end - last arrival)
  double algbw = 0, busbw = 0;  // at the median time, bytes per second
};

struct RankCollectiveStats {
  int32_t rank = -1;
  uint32_t pid = 0;
  uint32_t collectives = 0;
  uint32_t last_arrivals = 0;  // collectives at which it arrived last, by more than the lateness threshold
  int64_t late_ns = 0;         // sum over those of how much later than the second-to-last it arrived
  int64_t max_late_ns = 0;
  int64_t wait_ns = 0;     // time its NCCL kernels spent waiting for later ranks
  int64_t comm_ns = 0;     // time inside NCCL kernels
  int64_t compute_ns = 0;  // time in its other kernels
  int64_t overlap_ns = 0;  // NCCL time during which its compute kernels ran too (communication hidden)
};

struct CollectiveReport {
  std::vector<Collective> collectives;  // in order of last arrival
  std::vector<RankCollectiveStats> ranks;
  int64_t late_threshold_ns = 0;  // arriving later than this after the others counts as late
  // "rank 1 arrives late at 3 of 30 AllReduce collectives (by 20.0 ms at most, steps: step 4, step 9); the
  // other ranks wait 60.0 ms in total" — one line per straggler, most lateness first; empty when none.
  std::vector<std::string> diagnosis;
  uint32_t unmatched = 0;  // NCCL kernels found on only one rank
  uint32_t by_comm = 0;    // collectives matched by communicator + sequence number (NCCL payloads or plugin)
  uint32_t by_plugin = 0;  // of those, matched by NCCL's profiler plugin records
  std::vector<CollectiveBandwidth> bandwidth;  // by op, then message size
  // Every matched kernel -> (collective, rank entry), sorted by event, for the details of a selected kernel.
  struct KernelRef {
    EventId kernel;
    uint32_t collective, rank;
    friend bool operator<(const KernelRef& a, const KernelRef& b) { return a.kernel < b.kernel; }
  };
  std::vector<KernelRef> by_kernel;
  const KernelRef* Find(EventId kernel) const;
};

// The lateness threshold: max(100 us, 5% of the median transfer time), so ordinary jitter is never a
// straggler.
CollectiveReport AnalyzeCollectives(const TraceModel& model);

// Per rank of a job: GPU time in its kernels, how much of it in NCCL kernels, and how long those waited for
// later ranks. Ranked processes only (ProcessRecord::rank); empty for a trace without ranks. Sorted by rank;
// two processes of one rank (a rank recorded twice) add up.
struct RankKernelTime {
  int32_t rank = -1;
  uint64_t kernels = 0;
  int64_t kernel_ns = 0;
  int64_t nccl_ns = 0;
  int64_t wait_ns = 0;
};
std::vector<RankKernelTime> KernelTimeByRank(const TraceModel& model);

// Bytes of one element of an NCCL data type by name ("ncclFloat32" -> 4, "ncclBfloat16" -> 2); 0 unknown.
uint32_t NcclTypeBytes(const std::string& datatype);

// nccl-tests' bus-bandwidth factor for `op` on n ranks (2(n-1)/n, (n-1)/n or 1), and the size S that
// algbw divides (NCCL's per-rank size x n for the gathering and scattering ops).
double BusBandwidthFactor(const std::string& op, uint32_t n);
uint64_t AlgorithmBytes(const std::string& op, uint64_t nccl_bytes, uint32_t n);

// The model's report (computed once when it was built), or an empty one.
const CollectiveReport& CollectivesOf(const TraceModel& model);

// The report for a terminal: per-rank table and the diagnosis lines.
std::string FormatCollectiveReport(const CollectiveReport& report);

}  // namespace gt::viewer

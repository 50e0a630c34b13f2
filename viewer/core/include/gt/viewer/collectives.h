// NCCL collectives across ranks: every collective matched on every rank that ran it, with who arrived last
// and by how much, how long the others waited, and a straggler diagnosis in words. Works on any trace with
// NCCL kernels of several processes: one torchrun under gcollect, or a `gtrace merge` of one file per rank.
//
// Matching: the n-th NCCL kernel of one name in one process is the n-th of that name in every other process
// (NCCL runs a communicator's collectives in the same order on every rank, and its kernel name carries the
// operation, algorithm, protocol and type, which all ranks choose alike). A rank's kernel starts when that
// rank arrives; no rank can finish before the last one arrived, so for each rank `wait` = last arrival - its
// own arrival, and `transfer` = its end - the last arrival.
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
};

struct Collective {
  std::string op;            // "AllReduce", "AllGather", "ReduceScatter", "Broadcast", "SendRecv", ...
  StringId kernel_name = 0;  // the full NCCL kernel name
  uint32_t ordinal = 0;      // n-th kernel of that name in each process
  std::vector<CollectiveRank> ranks;  // by rank (or pid)
  int64_t first_arrival = 0, last_arrival = 0;
  size_t last = 0;   // index in ranks of the last to arrive
  std::string step;  // NVTX range around the last rank's launch ("step 12"), "" when none
  int64_t skew_ns() const { return last_arrival - first_arrival; }
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

// The model's report (computed once when it was built), or an empty one.
const CollectiveReport& CollectivesOf(const TraceModel& model);

// The report for a terminal: per-rank table and the diagnosis lines.
std::string FormatCollectiveReport(const CollectiveReport& report);

}  // namespace gt::viewer

// The warp-stall reasons and the stall counters' names of counter_vocab.h. Meanings follow NVIDIA's Kernel
// Profiling Guide ("Warp Stall Reasons") and the counter descriptions of CUPTI's metric list; titles are the
// ones Nsight Compute shows, so users can cross-check.
#include "gt/counter_vocab.h"

namespace gt {
namespace {

constexpr StallReasonInfo kStallReasons[] = {
    {"long_scoreboard", "Long Scoreboard",
     "Waiting for data from an L1TEX operation (global, local, surface or texture memory): an L2 or DRAM "
     "round "
     "trip of hundreds of cycles.",
     "Improve locality and coalescing so fewer bytes come from DRAM, tile data into shared memory, prefetch, "
     "or "
     "raise occupancy / independent loads so other warps hide the latency.",
     "improve locality / coalescing", true},
    {"barrier", "Barrier (Synchronization)",
     "Waiting for sibling warps at a CTA barrier (__syncthreads); the block runs at the pace of its slowest "
     "warp, "
     "often because of divergent work before the barrier.",
     "Balance the work of the warps before the barrier, remove barriers that are not needed, or use smaller "
     "blocks "
     "so fewer warps wait on each other.",
     "balance work before __syncthreads", true},
    {"short_scoreboard", "Short Scoreboard",
     "Waiting for the result of an MIO operation: shared memory, or special math (MUFU: sin, exp, rsqrt...).",
     "Remove shared-memory bank conflicts (padding, swizzling), use wider shared loads, or replace "
     "special-function "
     "math with cheaper arithmetic.",
     "fix shared-memory bank conflicts", true},
    {"lg_throttle", "LG Throttle (Memory Throttle)",
     "The LSU queue for local/global memory instructions is full: too many memory instructions in flight, "
     "typical "
     "of atomics to one address, narrow loads, or register spills to local memory.",
     "Issue fewer, wider memory instructions (vectorized float4 loads), aggregate atomics in registers or "
     "shared "
     "memory before one global atomic per warp/block, and remove local-memory spills.",
     "fewer, wider memory ops; aggregate atomics", true},
    {"mio_throttle", "MIO Throttle",
     "The MIO instruction queue (shared memory, special math, dynamic branches) is full.",
     "Reduce shared-memory bank conflicts and shared-memory instruction count (wider accesses), and special-"
     "function instructions.",
     "fewer / conflict-free shared-memory ops", true},
    {"wait", "Wait (Execution Dependency)",
     "Waiting on a fixed-latency dependency: the next instruction needs the result of a recent arithmetic "
     "one.",
     "Expose instruction-level parallelism: interleave independent work (unroll with several accumulators) "
     "or run "
     "more warps.",
     "add instruction-level parallelism", true},
    {"math_pipe_throttle", "Math Pipe Throttle",
     "The execution pipe (FMA, ALU, FP64, tensor...) is busy: the kernel is bound by that pipe's throughput.",
     "Compute-bound: use a faster pipe (tensor cores, FP16x2), fewer instructions, or balance work across "
     "pipes.",
     "use tensor cores / fewer instructions", true},
    {"not_selected", "Not Selected",
     "The warp was ready but the scheduler issued another warp: the SM has more ready warps than it can "
     "issue.",
     "Usually not a problem: it means latency is hidden. Only if dominant with low throughput, check "
     "issue-slot "
     "use; fewer warps would not help.",
     "none needed: issue slots are busy", false},
    {"selected", "Selected", "The warp issued an instruction this cycle (not a stall).", "Nothing to fix.",
     "none", false},
    {"branch_resolving", "Branch Resolving",
     "Waiting for a branch target to be computed and the warp's PC to be updated.",
     "Reduce divergent and indirect branches: predication, uniform control flow, fewer jumps in hot loops.",
     "reduce branching / divergence", true},
    {"no_instruction", "No Instruction",
     "Waiting to be selected for instruction fetch, or on an instruction-cache miss; common right after "
     "launch in "
     "very short kernels.",
     "For tiny kernels: more work per launch (fuse, CUDA Graphs); for huge kernels: less unrolling / "
     "inlining to "
     "shrink the hot code.",
     "more work per launch or smaller code", true},
    {"drain", "Drain",
     "After EXIT, waiting for the warp's outstanding memory writes to complete before its resources are "
     "freed.",
     "Usually minor; if large, stores at the end of the kernel are slow (uncoalesced or atomics): coalesce "
     "them.",
     "coalesce final stores", true},
    {"membar", "Memory Barrier", "Waiting on a memory fence (__threadfence, fence.acq_rel...).",
     "Remove unneeded fences or use a narrower scope (block instead of device or system).",
     "fewer / narrower memory fences", true},
    {"imc_miss", "IMC Miss",
     "Waiting for an immediate-constant-cache miss (__constant__ or kernel parameters).",
     "Access constants uniformly across the warp and keep the constant working set small; use global memory "
     "(__ldg) for per-thread-indexed tables.",
     "uniform constant access", true},
    {"gmma", "GMMA", "Waiting for warpgroup MMA (wgmma) results: WARPGROUP.ARRIVES.",
     "Pipeline wgmma deeper (more stages in flight) and overlap the next tile's loads (TMA) with the math.",
     "deeper wgmma pipelining", true},
    {"dispatch_stall", "Dispatch Stall",
     "The dispatcher could not issue the selected instruction (pipeline conflict or event).",
     "Rarely actionable; if large, check for register-bank or pipe conflicts in the SASS.",
     "inspect the SASS", true},
    {"tex_throttle", "TEX Throttle",
     "The TEX pipeline's queue is full (texture, surface or some global loads via the texture path).",
     "Fewer texture/surface fetches per thread, or more work per fetch.", "fewer texture fetches", true},
    {"sleeping", "Sleeping", "All threads of the warp are asleep (nanosleep) or yielded.",
     "Shorter sleeps / back-off in spin loops; prefer blocking primitives.", "shorter back-off", true},
    {"misc", "Misc", "A miscellaneous hardware reason.", "Rarely actionable.", "none known", true},
};

}  // namespace

std::span<const StallReasonInfo> StallReasonVocabulary() {
  return kStallReasons;
}

const StallReasonInfo* FindStallReasonInfo(std::string_view key) {
  for (const auto& r : kStallReasons)
    if (key == r.key) return &r;
  return nullptr;
}

std::string StallMetricName(std::string_view reason) {
  return std::string(kStallMetricPrefix) + std::string(reason) + std::string(kStallMetricSuffix);
}

std::string_view StallReasonOfMetric(std::string_view metric) {
  if (metric.substr(0, kStallMetricPrefix.size()) != kStallMetricPrefix) return {};
  metric.remove_prefix(kStallMetricPrefix.size());
  if (metric.size() <= kStallMetricSuffix.size() ||
      metric.substr(metric.size() - kStallMetricSuffix.size()) != kStallMetricSuffix)
    return {};
  metric.remove_suffix(kStallMetricSuffix.size());
  // Only the raw per-reason counters: "<reason>_not_issued" and friends are other metrics.
  if (const StallReasonInfo* r = FindStallReasonInfo(metric)) return r->key;
  return {};
}

}  // namespace gt

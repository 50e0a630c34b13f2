// Sampled CPU stacks (gcollect --sample=cpu; TraceModel::cpu): where the CPU threads were during a time range
// (an idle gap's attribution in `gtrace stats`, its JSON and the Summary tab) and the flame graph of a range.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gt/viewer/model.h"

namespace gt::viewer {

// One frame that samples in a range were in, with what called it.
struct HotFrame {
  std::string frame;  // "train.py:__getitem__:41" (Python) or "libc.so.6!clock_nanosleep" (native)
  std::string path;  // its caller and itself, outermost first: "dataloader.py:__next__:631 → __getitem__:41"
  bool python = false;  // a Python frame (else native: the thread had no Python frame)
  uint64_t samples = 0;
  double share = 0;  // of the range's samples with a Python frame (of all its samples where none has one)
};
struct CpuRangeProfile {
  uint64_t samples = 0;         // samples of the threads considered in the range
  uint64_t threads = 0;         // distinct threads among them
  uint64_t python_samples = 0;  // samples with at least one Python frame
  uint64_t not_unwound = 0;     // samples with no frame at all (counted, never guessed)
  std::vector<HotFrame> hot;    // by samples, at most top_n
};

// The samples in [start_ns, end_ns) of the given threads ((pid, tid) pairs; empty: every thread of `pids`;
// both empty: every thread), each attributed to its innermost Python frame, else its innermost native frame.
// Where some samples have Python frames, only those are ranked: a thread parked in a native wait (PyTorch's
// autograd or pool threads, which call CUDA too) says nothing about what the Python code was doing.
struct ThreadKey {
  uint32_t pid = 0, tid = 0;
};
CpuRangeProfile ProfileCpuRange(const TraceModel& model, int64_t start_ns, int64_t end_ns,
                                std::span<const uint32_t> pids, std::span<const ThreadKey> threads,
                                size_t top_n = 3);

// A flame graph of the samples in [start_ns, end_ns) (pids empty: all processes): one node per distinct
// call path, children grouped under their caller, in depth-first order (children by samples, descending).
struct FlameNode {
  StringId frame = 0;
  uint8_t kind = 0;  // FrameKind
  uint32_t depth = 0;
  uint32_t parent = 0;        // index into the result; the root (index 0, frame 0) is its own parent
  uint64_t samples = 0;       // inclusive: samples whose stack passes through this path
  uint64_t self_samples = 0;  // samples whose innermost frame is this one
};
std::vector<FlameNode> BuildFlameGraph(const TraceModel& model, int64_t start_ns, int64_t end_ns,
                                       std::span<const uint32_t> pids);

// The frames of one global stack node, outermost first.
std::vector<uint32_t> StackNodes(const TraceModel& model, uint32_t node);

}  // namespace gt::viewer

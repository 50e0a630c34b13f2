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
// `threads` narrows it as ProfileCpuRange's does (the viewer's flame panel: one process or one thread).
std::vector<FlameNode> BuildFlameGraph(const TraceModel& model, int64_t start_ns, int64_t end_ns,
                                       std::span<const uint32_t> pids,
                                       std::span<const ThreadKey> threads = {});

// Where a flame graph's nodes are drawn, zoomed into `focus` (0: the root, the whole graph). x0..x1 is a
// share of the width, by inclusive samples: `focus` and its ancestors span all of it (the ancestors say where
// the zoomed subtree sits), its descendants are laid side by side under their parent, heaviest first (the
// graph's order). row = depth: the drawing puts row 0 at the top (icicle). Nodes outside the focus's subtree
// and not above it are left out, and so are those narrower than `min_width` (and so their children).
struct FlameRect {
  uint32_t node = 0;  // index into the graph
  uint32_t row = 0;
  double x0 = 0, x1 = 0;
  bool above_focus = false;  // an ancestor of the focus, stretched to the full width
};
std::vector<FlameRect> LayoutFlameGraph(std::span<const FlameNode> graph, uint32_t focus,
                                        double min_width = 0);

// A frame string cut into what a tooltip shows: Python frames are "file:function:line" (qualified names use
// '.', so the last two ':' delimit the function), native ones "module!symbol" (or a bare address).
struct FrameParts {
  std::string function;  // "__getitem__", "clock_nanosleep"
  std::string location;  // "train.py:41", "libc.so.6"; empty when the frame says nothing more
};
FrameParts SplitFrame(std::string_view frame, uint8_t kind);

// The frames from the root's child down to `node`, outermost first (what a folded stack line lists).
std::vector<uint32_t> FlamePath(std::span<const FlameNode> graph, uint32_t node);

// The frames of one global stack node, outermost first.
std::vector<uint32_t> StackNodes(const TraceModel& model, uint32_t node);

}  // namespace gt::viewer

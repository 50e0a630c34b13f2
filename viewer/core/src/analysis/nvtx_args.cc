#include "gt/viewer/nvtx_args.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <tuple>

namespace gt::viewer {
namespace {

std::tuple<uint32_t, uint32_t, int64_t> Key(const NvtxArgRecord& a) {
  return {a.pid, a.tid, a.start};
}

// The thread's NVTX range track, or null.
const Track* RangesOf(const TraceModel& m, uint32_t pid, uint32_t tid) {
  for (const Track& t : m.tracks)
    if (t.kind == TrackKind::kThreadRanges && t.pid == pid && t.tid == tid) return &t;
  return nullptr;
}

// The NVTX range event that starts at `start` on the track: one binary search per depth lane.
EventId FindRange(const TraceModel& m, const Track* t, int64_t start) {
  if (!t) return {};
  for (uint32_t d = 0; d < t->lane_count; ++d) {
    const Lane& lane = m.lanes[t->first_lane + d];
    auto it = std::lower_bound(lane.start.begin(), lane.start.end(), start);
    for (; it != lane.start.end() && *it == start; ++it) {
      const EventId e{t->first_lane + d, uint32_t(it - lane.start.begin())};
      if (m.Kind(e) == EventKind::kNvtx) return e;
    }
  }
  return {};
}

}  // namespace

std::span<const NvtxArgRecord> NvtxArgsAt(const TraceModel& m, uint32_t pid, uint32_t tid, int64_t start) {
  NvtxArgRecord k;
  k.pid = pid, k.tid = tid, k.start = start;
  auto [lo, hi] =
      std::equal_range(m.nvtx_args.begin(), m.nvtx_args.end(), k,
                       [](const NvtxArgRecord& a, const NvtxArgRecord& b) { return Key(a) < Key(b); });
  return {m.nvtx_args.data() + (lo - m.nvtx_args.begin()), size_t(hi - lo)};
}

std::span<const NvtxArgRecord> NvtxArgsOf(const TraceModel& m, EventId e) {
  if (m.nvtx_args.empty() || !e.valid() || m.Kind(e) != EventKind::kNvtx) return {};
  const Track& t = m.TrackOf(e);
  return NvtxArgsAt(m, t.pid, t.tid, m.Start(e));
}

std::string FormatNvtxArg(const TraceModel& m, const NvtxArgRecord& a) {
  switch (static_cast<NvtxArgKind>(a.kind)) {
    case NvtxArgKind::kInt:
      return std::to_string(int64_t(a.value));
    case NvtxArgKind::kUint:
      return std::to_string(a.value);
    case NvtxArgKind::kFloat: {
      double d;
      std::memcpy(&d, &a.value, sizeof d);
      char buf[32];
      std::snprintf(buf, sizeof buf, "%g", d);
      return buf;
    }
    case NvtxArgKind::kEnum:
      return a.text ? m.Str(a.text) : std::to_string(a.value);
    case NvtxArgKind::kString:
      return m.Str(a.text);
    default:
      return std::to_string(a.value);
  }
}

std::vector<NcclCall> NcclCalls(const TraceModel& m) {
  std::vector<NcclCall> out;
  const auto& args = m.nvtx_args;
  const Track* track = nullptr;  // the current thread's (args are sorted by pid, tid)
  uint32_t track_pid = 0, track_tid = 0;
  bool have_track = false;
  for (size_t i = 0; i < args.size();) {
    size_t j = i;
    while (j < args.size() && Key(args[j]) == Key(args[i])) ++j;
    NcclCall c;
    bool has_comm = false;
    for (size_t k = i; k < j; ++k) {
      const NvtxArgRecord& a = args[k];
      const std::string& name = m.Str(a.name);
      const bool integer = a.kind == uint8_t(NvtxArgKind::kInt) || a.kind == uint8_t(NvtxArgKind::kUint);
      if (name == kNcclCommField && integer)
        has_comm = true, c.comm = a.value;
      else if (name == kNcclBytesField && integer)
        c.has_bytes = true, c.bytes = a.value;
      else if (name == kNcclRanksField && integer)
        c.nranks = int32_t(a.value);
      else if (name == "Reduction operation")
        c.redop = FormatNvtxArg(m, a);
      else if (name == "Root" && integer)
        c.root = int32_t(a.value);
      else if (name == "Peer rank" && integer)
        c.peer = int32_t(a.value);
    }
    if (has_comm) {
      c.pid = args[i].pid, c.tid = args[i].tid, c.start = c.end = args[i].start;
      if (!have_track || track_pid != c.pid || track_tid != c.tid) {
        track = RangesOf(m, c.pid, c.tid), track_pid = c.pid, track_tid = c.tid, have_track = true;
      }
      c.range = FindRange(m, track, c.start);
      if (c.range.valid()) {
        c.end = m.End(c.range);
        const std::string& name = m.Str(m.Name(c.range));
        c.op = name.rfind("nccl", 0) == 0 ? name.substr(4) : name;
      }
      out.push_back(std::move(c));
    }
    i = j;
  }
  return out;
}

}  // namespace gt::viewer

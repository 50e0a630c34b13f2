// Event details: every field of an event as (name, value) rows for the details panel and tooltips.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>

#include "gt/sat_math.h"
#include "gt/viewer/collectives.h"
#include "gt/viewer/nvtx_args.h"
#include "gt/viewer/query.h"

namespace gt::viewer {

static std::string Dim3(const std::array<uint32_t, 3>& v) {
  return "(" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " + std::to_string(v[2]) + ")";
}

static std::string Hex(uint64_t v, int width = 0) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%0*" PRIx64, width, v);
  return buf;
}

static const char* LaunchTypeName(uint8_t t) {
  switch (static_cast<LaunchType>(t)) {
    case LaunchType::kRegular:
      return "regular";
    case LaunchType::kCooperativeSingle:
      return "cooperative (single device)";
    case LaunchType::kCooperativeMulti:
      return "cooperative (multi device)";
    case LaunchType::kCluster:
      return "cluster";
    case LaunchType::kGraph:
      return "graph";
  }
  return "unknown";
}

static std::string Payload(const NvtxInfo& n) {
  char buf[64];
  uint64_t raw = n.payload;
  switch (static_cast<NvtxPayloadKind>(n.payload_kind)) {
    case NvtxPayloadKind::kNone:
      return "";
    case NvtxPayloadKind::kU64:
      std::snprintf(buf, sizeof buf, "%" PRIu64, raw);
      break;
    case NvtxPayloadKind::kI64:
      std::snprintf(buf, sizeof buf, "%" PRId64, static_cast<int64_t>(raw));
      break;
    case NvtxPayloadKind::kU32:
      std::snprintf(buf, sizeof buf, "%" PRIu32, static_cast<uint32_t>(raw));
      break;
    case NvtxPayloadKind::kI32:
      std::snprintf(buf, sizeof buf, "%" PRId32, static_cast<int32_t>(raw));
      break;
    case NvtxPayloadKind::kF64: {
      double d;
      std::memcpy(&d, &raw, sizeof d);
      std::snprintf(buf, sizeof buf, "%.17g", d);
      break;
    }
    case NvtxPayloadKind::kF32: {
      float f;
      uint32_t bits = static_cast<uint32_t>(raw);
      std::memcpy(&f, &bits, sizeof f);
      std::snprintf(buf, sizeof buf, "%.9g", double(f));
      break;
    }
    default:
      return Hex(raw);
  }
  return buf;
}

std::vector<DetailField> EventDetails(const TraceModel& model, EventId e) {
  std::vector<DetailField> f;
  if (!e.valid() || e.lane >= model.lanes.size() || e.index >= model.lanes[e.lane].size()) return f;
  const Lane& lane = model.lanes[e.lane];
  const Track& track = model.TrackOf(e);
  const EventKind kind = model.Kind(e);
  const uint32_t i = e.index;
  const int64_t dur = lane.Duration(i);
  auto add = [&f](std::string n, std::string v) { f.push_back({std::move(n), std::move(v)}); };
  std::string name = model.Str(lane.name[i]);
  add("Name", name.empty() ? "(unnamed)" : name);
  add("Kind", EventKindName(kind));
  add("Track", track.name);
  add("Start", FormatTimestamp(model, lane.start[i]));
  add("Duration", FormatDuration(dur));
  add("Depth", std::to_string(lane.depth));
  const uint32_t payload = lane.ref[i] & kRefPayloadMask;
  const uint32_t corr = model.CorrelationId(e);

  switch (kind) {
    case EventKind::kKernel: {
      if (payload < model.launch_configs.size()) {
        const LaunchConfig& c = model.launch_configs[payload];
        add("Grid", Dim3(c.grid));
        add("Block", Dim3(c.block));
        if (c.cluster[0] | c.cluster[1] | c.cluster[2]) add("Cluster", Dim3(c.cluster));
        uint64_t threads = uint64_t(c.block[0]) * c.block[1] * c.block[2];
        uint64_t blocks = uint64_t(c.grid[0]) * c.grid[1] * c.grid[2];
        add("Threads", std::to_string(blocks * threads) + " (" + std::to_string(blocks) + " blocks × " +
                           std::to_string(threads) + ")");
        add("Registers/thread", std::to_string(c.registers_per_thread));
        add("Shared memory (static)", FormatBytes(c.static_shared_bytes));
        add("Shared memory (dynamic)", FormatBytes(c.dynamic_shared_bytes));
        add("Local memory/thread", FormatBytes(c.local_bytes_per_thread));
        add("Launch type", LaunchTypeName(c.launch_type));
        if (c.graph_id) add("Graph", std::to_string(c.graph_id) + " node " + std::to_string(c.graph_node_id));
      }
      // An NCCL collective matched across ranks: who arrived when, who waited, and for whom.
      if (const auto* ref = CollectivesOf(model).Find(e)) {
        const Collective& c = CollectivesOf(model).collectives[ref->collective];
        auto who = [](const CollectiveRank& r) {
          return r.rank >= 0 ? "rank " + std::to_string(r.rank) : "pid " + std::to_string(r.pid);
        };
        add("Collective", c.op + " #" + std::to_string(c.ordinal) + " across " +
                              std::to_string(c.ranks.size()) + " ranks" +
                              (c.step.empty() ? "" : ", in " + c.step));
        add("Arrived last",
            who(c.ranks[c.last]) + ", " + FormatDuration(double(c.skew_ns())) + " after the first");
        if (c.by_plugin)
          add("Communicator",
              Hex(c.comm) + ", " + c.op + " #" + std::to_string(c.seq) + " (NCCL's sequence)");
        else if (c.by_comm)
          add("Communicator", Hex(c.comm) + ", call #" + std::to_string(c.ordinal));
        if (!c.algo.empty())
          add("Algorithm", c.algo + ", " + c.proto + ", " + std::to_string(c.n_channels) + " channels" +
                               (c.n_warps ? ", " + std::to_string(c.n_warps) + " warps" : ""));
        if (c.count)
          add("Elements", std::to_string(c.count) + (c.datatype.empty() ? "" : " × " + c.datatype));
        if (c.bytes) {
          add("Message size", FormatBytes(double(c.bytes)) + " (" + std::to_string(c.bytes) + ")" +
                                  (c.redop.empty() ? "" : ", " + c.redop));
          if (c.algbw > 0)
            add("Bandwidth", "algbw " + FormatRate(c.algbw, "B/s") + ", busbw " + FormatRate(c.busbw, "B/s") +
                                 " over " + FormatDuration(double(c.time_ns)) + " on " +
                                 std::to_string(c.comm_ranks) + " ranks");
        }
        for (const CollectiveRank& r : c.ranks)
          add(who(r) + (&r == &c.ranks[ref->rank] ? " (this)" : ""),
              "arrived +" + FormatDuration(double(r.start - c.first_arrival)) + ", waited " +
                  FormatDuration(double(r.wait_ns)) + ", transfer " + FormatDuration(double(r.transfer_ns)) +
                  (r.channels ? ", channels " + FormatDuration(double(r.gpu_end - r.gpu_start)) +
                                    " on GPU (" + std::to_string(r.channels) + ")"
                              : ""));
      }
      break;
    }
    case EventKind::kMemcpy: {
      if (payload < model.memcpys.size()) {
        const MemcpyInfo& m = model.memcpys[payload];
        add("Bytes", FormatBytes(m.bytes) + " (" + std::to_string(m.bytes) + ")");
        add("Bandwidth", FormatBandwidth(double(m.bytes), double(dur)));
        add("Copy kind", CopyKindName(m.copy_kind));
        add("Source memory", MemoryKindName(m.src_kind));
        add("Destination memory", MemoryKindName(m.dst_kind));
        add("Async", m.is_async ? "yes" : "no");
        if (m.peer_device_id != kNone) add("Peer device", std::to_string(m.peer_device_id));
        if (m.graph_id) add("Graph", std::to_string(m.graph_id));
      }
      break;
    }
    case EventKind::kMemset: {
      if (payload < model.memsets.size()) {
        const MemsetInfo& m = model.memsets[payload];
        add("Bytes", FormatBytes(m.bytes) + " (" + std::to_string(m.bytes) + ")");
        add("Bandwidth", FormatBandwidth(double(m.bytes), double(dur)));
        add("Value", Hex(m.value));
        add("Memory", MemoryKindName(m.memory_kind));
        add("Async", m.is_async ? "yes" : "no");
        if (m.graph_id) add("Graph", std::to_string(m.graph_id));
      }
      break;
    }
    case EventKind::kApi: {
      const bool driver = name.rfind("cu", 0) == 0 && name.rfind("cuda", 0) != 0;
      add("Domain", driver ? "driver" : "runtime");
      int32_t rc = lane.ReturnCode(i);
      add("Return code", rc == 0 ? "0 (success)" : std::to_string(rc) + " (error)");
      break;
    }
    case EventKind::kNvtx: {
      if (payload < model.nvtx.size()) {
        const NvtxInfo& n = model.nvtx[payload];
        add("Domain", n.domain ? model.Str(n.domain) : "(default)");
        if (n.category) add("Category", std::to_string(n.category));
        if (n.flags & kNvtxHasColor) add("Color", Hex(n.color, 8));
        std::string p = Payload(n);
        if (!p.empty()) add("Payload", p);
        if (n.flags & kNvtxMark) add("Marker", "yes");
        if (n.flags & kNvtxStartEnd) add("Range type", "start/end");
        if (n.flags & kNvtxUnclosed) add("Unclosed", "still open when the trace ended");
      }
      // Extended payload fields (NCCL's communicator, message size, ...), as the app's schema names them.
      for (const NvtxArgRecord& a : NvtxArgsOf(model, e)) {
        std::string v = FormatNvtxArg(model, a);
        const std::string& field = model.Str(a.name);
        if (field == kNcclCommField) v = Hex(a.value);
        if (field == kNcclBytesField) v = FormatBytes(double(a.value)) + " (" + v + ")";
        add(field.empty() ? "(unnamed field)" : field, v);
      }
      break;
    }
    case EventKind::kSync: {
      if (payload < model.syncs.size()) {
        const SyncInfo& s = model.syncs[payload];
        add("Sync kind", SyncKindName(s.sync_kind));
        if (s.device_id != kNone) add("Device", std::to_string(s.device_id));
        if (s.stream_id != kNone) add("Stream", std::to_string(s.stream_id));
        if (s.event_id != kNone) add("CUDA event", std::to_string(s.event_id));
        if (s.correlation_id) add("Correlation id", std::to_string(s.correlation_id));
      }
      break;
    }
    case EventKind::kHostOp:
    case EventKind::kInstant: {
      if (payload) add("Category", model.Str(payload));
      break;
    }
    default:
      break;
  }
  if (track.kind == TrackKind::kGpuStream || track.kind == TrackKind::kGpuAnnotations) {
    add("Device", std::to_string(track.device_id));
    add("Stream", std::to_string(track.stream_id));
  }
  add("Process", std::to_string(track.pid));
  if (track.tid) add("Thread", std::to_string(track.tid));
  if (corr) add("Correlation id", std::to_string(corr));
  EventId partner = FlowPartner(model, e);
  if (partner.valid()) {
    add(kind == EventKind::kApi ? "Launched" : "Launched by", model.Str(model.Name(partner)));
    add(kind == EventKind::kApi ? "Queue delay" : "Launch latency",
        // Saturated: imported traces (and indexes) may place the two ends anywhere in int64.
        FormatDuration(kind == EventKind::kApi ? SatSub(model.Start(partner), lane.start[i])
                                               : SatSub(lane.start[i], model.Start(partner))));
  }
  // Imported fields ("key: value" lines) last, each its own row.
  StringId args = lane.Args(i);
  if (args) {
    const std::string& a = model.Str(args);
    size_t p = 0;
    while (p < a.size()) {
      size_t nl = a.find('\n', p);
      if (nl == std::string::npos) nl = a.size();
      std::string line = a.substr(p, nl - p);
      size_t colon = line.find(": ");
      if (colon == std::string::npos)
        add("Arg", line);
      else
        add(line.substr(0, colon), line.substr(colon + 2));
      p = nl + 1;
    }
  }
  return f;
}

std::vector<DetailField> BlockDetails(const TraceModel& model, LaneId lane_id, const DrawItem& item) {
  std::vector<DetailField> f;
  if (lane_id >= model.lanes.size()) return f;
  const Lane& lane = model.lanes[lane_id];
  if (item.first >= lane.size()) return f;
  const uint32_t end = std::min<uint32_t>(lane.size(), item.first + item.count);
  f.push_back({"Events", std::to_string(end - item.first)});
  f.push_back({"Span", FormatDuration(item.end - item.start)});
  // Busy time and the most frequent names: bounded work so hovering a huge block stays cheap.
  constexpr uint32_t kScanLimit = 1u << 16;
  const uint32_t scan_end = std::min(end, item.first + kScanLimit);
  int64_t busy = 0;
  std::map<StringId, uint32_t> names;
  for (uint32_t i = item.first; i < scan_end; ++i) {
    busy = SatAdd(busy, lane.Duration(i));
    ++names[lane.name[i]];
  }
  const bool partial = scan_end < end;
  f.push_back({partial ? "Busy (first 65536)" : "Busy", FormatDuration(busy)});
  std::vector<std::pair<uint32_t, StringId>> top;
  for (auto [n, c] : names) top.push_back({c, n});
  std::sort(top.begin(), top.end(),
            [](auto a, auto b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  for (size_t k = 0; k < top.size() && k < 5; ++k)
    f.push_back({model.Str(top[k].second).empty() ? "(unnamed)" : model.Str(top[k].second),
                 std::to_string(top[k].first) + "×"});
  return f;
}

}  // namespace gt::viewer

// gtrace._core: the viewer core's trace model seen from Python, one numpy array per column.
//
// A table is gathered from the model's lanes into std::vectors with the GIL released, then each vector is
// handed to numpy without a copy (a capsule owns it). Names and other strings travel as int32 codes plus one
// list of distinct texts per column, which the Python side turns into a pandas Categorical: 10 M events cost
// 10 M integers, never 10 M Python strings. Small result tables (summaries, idle gaps, counter verdicts) are
// built from the same core functions `gtrace stats --json` prints, so the numbers agree by construction.
//
// Errors: a Status from the core becomes gtrace.TraceError (FileNotFoundError for a missing file); no C++
// exception reaches the interpreter (pybind11 translates std::exception, bad_alloc -> MemoryError).
//
// [SECTION] Columns and string codes
// [SECTION] Event tables
// [SECTION] Small tables
// [SECTION] Module
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gt/model.h"
#include "gt/nsys/sqlite_reader.h"
#include "gt/status.h"
#include "gt/viewer/json.h"
#include "gt/viewer/load.h"
#include "gt/viewer/model.h"
#include "gt/viewer/profiled.h"
#include "gt/viewer/query.h"
#include "gt/viewer/summary.h"

namespace py = pybind11;

namespace gt::python {
namespace {

using viewer::EventKind;
using viewer::Lane;
using viewer::TraceModel;
using viewer::Track;
using viewer::TrackKind;

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Columns and string codes
// ---------------------------------------------------------------------------------------------------------------

// A failed Status on its way to Python (translated in the module init).
struct StatusError : std::exception {
  Status status;
  explicit StatusError(Status s) : status(std::move(s)) {}
  const char* what() const noexcept override { return status.message().c_str(); }
};

// Trace text as a Python str; bytes that are not UTF-8 (a damaged or foreign trace) become U+FFFD instead of
// a UnicodeDecodeError in the middle of a table.
py::str Text(std::string_view t) {
  return py::reinterpret_steal<py::str>(PyUnicode_DecodeUTF8(t.data(), py::ssize_t(t.size()), "replace"));
}

// The distinct texts of one string column, in order of first use, and each row's index into them. Distinct
// StringIds may carry the same text (imports intern per source), so codes are by text, as the summaries are.
class Codes {
 public:
  explicit Codes(const TraceModel* model = nullptr) : model_(model) {
    if (model) by_id_.assign(model->strings.size(), -1);
  }
  int32_t Of(StringId id) {
    if (id >= by_id_.size()) return Of(std::string_view());
    int32_t& c = by_id_[id];
    if (c < 0) c = Of(std::string_view(model_->Str(id)));
    return c;
  }
  int32_t Of(std::string_view text) {
    auto [it, added] = by_text_.try_emplace(text, int32_t(texts_.size()));
    if (added) texts_.push_back(text);
    return it->second;
  }
  void Push(StringId id) { codes.push_back(Of(id)); }
  void Push(std::string_view text) { codes.push_back(Of(text)); }
  std::vector<int32_t> codes;
  const std::vector<std::string_view>& texts() const { return texts_; }

 private:
  const TraceModel* model_;
  std::vector<int32_t> by_id_;
  std::unordered_map<std::string_view, int32_t> by_text_;
  std::vector<std::string_view> texts_;  // views into the model or static names: valid while the model lives
};

// A vector handed to numpy without a copy: the array's base is a capsule that owns it.
template <typename T>
py::array ToNumpy(std::vector<T>&& v) {
  auto* owned = new std::vector<T>(std::move(v));
  py::capsule owner(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>({py::ssize_t(owned->size())}, {py::ssize_t(sizeof(T))}, owned->data(), owner);
}

// An ordered table of columns, filled without the GIL and converted with it: numeric columns as arrays,
// string columns as (codes array, [texts]) for the Python side's Categorical.
class Table {
 public:
  template <typename T>
  std::vector<T>& Num(const char* name) {
    auto col = std::make_unique<NumCol<T>>();
    std::vector<T>& v = col->v;
    order_.push_back({name, std::move(col)});
    return v;
  }
  // numpy bool column (std::vector<bool> has no data()).
  std::vector<uint8_t>& Bool(const char* name) {
    auto col = std::make_unique<BoolCol>();
    std::vector<uint8_t>& v = col->v;
    order_.push_back({name, std::move(col)});
    return v;
  }
  Codes& Str(const char* name, const TraceModel* model) {
    auto col = std::make_unique<StrCol>(model);
    Codes& c = col->c;
    order_.push_back({name, std::move(col)});
    return c;
  }
  // Capacity for n rows in every column declared so far: one allocation per column instead of a doubling
  // series of copies (untouched capacity of an over-estimate costs address space, not memory).
  void Reserve(size_t n) {
    for (auto& [name, col] : order_) col->Reserve(n);
  }
  // Needs the GIL.
  py::dict ToPython() {
    py::dict d;
    for (auto& [name, col] : order_) d[py::str(name)] = col->ToPython();
    return d;
  }

 private:
  struct Col {
    virtual ~Col() = default;
    virtual py::object ToPython() = 0;
    virtual void Reserve(size_t n) = 0;
  };
  template <typename T>
  struct NumCol : Col {
    std::vector<T> v;
    py::object ToPython() override { return ToNumpy(std::move(v)); }
    void Reserve(size_t n) override { v.reserve(n); }
  };
  struct BoolCol : Col {
    std::vector<uint8_t> v;
    py::object ToPython() override { return ToNumpy(std::move(v)).attr("view")(py::dtype("bool")); }
    void Reserve(size_t n) override { v.reserve(n); }
  };
  struct StrCol : Col {
    explicit StrCol(const TraceModel* m) : c(m) {}
    void Reserve(size_t n) override { c.codes.reserve(n); }
    Codes c;
    py::object ToPython() override {
      py::list texts;
      for (std::string_view t : c.texts()) texts.append(Text(t));
      return py::make_tuple(ToNumpy(std::move(c.codes)), texts);
    }
  };
  std::vector<std::pair<const char*, std::unique_ptr<Col>>> order_;
};

int64_t OrNone(uint32_t v) {
  return v == kNone ? -1 : int64_t(v);
}

// The rank and host of each process (merged multi-rank traces and torchrun under gcollect name them).
struct ProcessInfo {
  int32_t rank = -1;
  StringId host = 0;
};
std::unordered_map<uint32_t, ProcessInfo> ProcessesOf(const TraceModel& m) {
  std::unordered_map<uint32_t, ProcessInfo> out;
  for (const ProcessRecord& p : m.processes) out[p.pid] = {p.rank, p.host};
  return out;
}

// Which lanes a table reads: the tracks of one kind (all depths, or depth 0 only).
template <typename F>
void ForEachLane(const TraceModel& m, TrackKind kind, F&& f) {
  for (const Track& t : m.tracks) {
    if (t.kind != kind) continue;
    for (uint32_t d = 0; d < t.lane_count; ++d) f(t, m.lanes[t.first_lane + d]);
  }
}

// Events on the tracks of one kind: the row count of a table over them, or an upper bound of it.
size_t EventsOn(const TraceModel& m, TrackKind kind) {
  size_t n = 0;
  ForEachLane(m, kind, [&](const Track&, const Lane& lane) { n += lane.size(); });
  return n;
}

EventKind KindAt(const Lane& lane, uint32_t i) {
  return static_cast<EventKind>(lane.ref[i] >> viewer::kRefKindShift);
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Event tables
// ---------------------------------------------------------------------------------------------------------------

// Columns every event table starts with.
struct Timing {
  std::vector<int64_t>*start, *end, *dur;
  Codes* name;
  Timing(Table& t, const TraceModel* m)
      : start(&t.Num<int64_t>("start_ns")),
        end(&t.Num<int64_t>("end_ns")),
        dur(&t.Num<int64_t>("dur_ns")),
        name(&t.Str("name", m)) {}
  void Push(const Lane& lane, uint32_t i) {
    const int64_t d = lane.Duration(i);
    start->push_back(lane.start[i]);
    end->push_back(SatAdd(lane.start[i], d));
    dur->push_back(d);
    name->Push(lane.name[i]);
  }
};

// Where an event ran: process (with its rank and host), and device/stream for GPU work or thread for host
// work.
struct Place {
  std::vector<int64_t>*device = nullptr, *stream = nullptr;
  std::vector<uint32_t>*tid = nullptr, *pid;
  std::vector<int32_t>* rank;
  Codes* host;
  const std::unordered_map<uint32_t, ProcessInfo>* procs;
  Place(Table& t, const TraceModel* m, const std::unordered_map<uint32_t, ProcessInfo>* p, bool gpu)
      : procs(p) {
    if (gpu) {
      device = &t.Num<int64_t>("device");
      stream = &t.Num<int64_t>("stream");
    }
    pid = &t.Num<uint32_t>("pid");
    if (!gpu) tid = &t.Num<uint32_t>("tid");
    rank = &t.Num<int32_t>("rank");
    host = &t.Str("host", m);
  }
  // Per track, not per event: the same values for every event of a lane.
  void Push(const Track& tr, size_t n) {
    if (device) {
      device->insert(device->end(), n, OrNone(tr.device_id));
      stream->insert(stream->end(), n, OrNone(tr.stream_id));
    }
    pid->insert(pid->end(), n, tr.pid);
    if (tid) tid->insert(tid->end(), n, tr.tid);
    auto it = procs->find(tr.pid);
    rank->insert(rank->end(), n, it == procs->end() ? -1 : it->second.rank);
    const int32_t h = host->Of(it == procs->end() ? StringId(0) : it->second.host);
    host->codes.insert(host->codes.end(), n, h);
  }
};

void KernelTable(const TraceModel& m, Table& t) {
  static const viewer::LaunchConfig kNoConfig;
  const auto procs = ProcessesOf(m);
  Timing time(t, &m);
  Place place(t, &m, &procs, true);
  auto& corr = t.Num<uint32_t>("correlation_id");
  std::vector<uint32_t>* dims[6] = {&t.Num<uint32_t>("grid_x"),  &t.Num<uint32_t>("grid_y"),
                                    &t.Num<uint32_t>("grid_z"),  &t.Num<uint32_t>("block_x"),
                                    &t.Num<uint32_t>("block_y"), &t.Num<uint32_t>("block_z")};
  auto& regs = t.Num<uint32_t>("registers_per_thread");
  auto& sshared = t.Num<uint32_t>("static_shared_bytes");
  auto& dshared = t.Num<uint32_t>("dynamic_shared_bytes");
  auto& graph = t.Num<uint32_t>("graph_id");
  t.Reserve(EventsOn(m, TrackKind::kGpuStream));
  ForEachLane(m, TrackKind::kGpuStream, [&](const Track& tr, const Lane& lane) {
    size_t n = 0;
    for (uint32_t i = 0; i < lane.size(); ++i) {
      if (KindAt(lane, i) != EventKind::kKernel) continue;
      ++n;
      time.Push(lane, i);
      corr.push_back(i < lane.aux.size() ? lane.aux[i] : 0);
      const uint32_t p = lane.ref[i] & viewer::kRefPayloadMask;
      const viewer::LaunchConfig& lc = p < m.launch_configs.size() ? m.launch_configs[p] : kNoConfig;
      for (int k = 0; k < 3; ++k) dims[k]->push_back(lc.grid[k]), dims[3 + k]->push_back(lc.block[k]);
      regs.push_back(lc.registers_per_thread);
      sshared.push_back(lc.static_shared_bytes);
      dshared.push_back(lc.dynamic_shared_bytes);
      graph.push_back(lc.graph_id);
    }
    place.Push(tr, n);
  });
}

void CopyTable(const TraceModel& m, Table& t) {
  const auto procs = ProcessesOf(m);
  Timing time(t, &m);
  Place place(t, &m, &procs, true);
  auto& corr = t.Num<uint32_t>("correlation_id");
  Codes& kind = t.Str("kind", nullptr);
  Codes& copy_kind = t.Str("copy_kind", nullptr);
  auto& bytes = t.Num<uint64_t>("bytes");
  Codes& src = t.Str("src_kind", nullptr);
  Codes& dst = t.Str("dst_kind", nullptr);
  auto& async = t.Bool("is_async");
  t.Reserve(m.memcpys.empty() && m.memsets.empty() ? 0 : EventsOn(m, TrackKind::kGpuStream));
  ForEachLane(m, TrackKind::kGpuStream, [&](const Track& tr, const Lane& lane) {
    size_t n = 0;
    for (uint32_t i = 0; i < lane.size(); ++i) {
      const EventKind k = KindAt(lane, i);
      const uint32_t p = lane.ref[i] & viewer::kRefPayloadMask;
      if (k == EventKind::kMemcpy) {
        const viewer::MemcpyInfo c = p < m.memcpys.size() ? m.memcpys[p] : viewer::MemcpyInfo{};
        kind.Push("memcpy");
        copy_kind.Push(CopyKindName(c.copy_kind));
        bytes.push_back(c.bytes);
        src.Push(MemoryKindName(c.src_kind));
        dst.Push(MemoryKindName(c.dst_kind));
        async.push_back(c.is_async != 0);
      } else if (k == EventKind::kMemset) {
        const viewer::MemsetInfo s = p < m.memsets.size() ? m.memsets[p] : viewer::MemsetInfo{};
        kind.Push("memset");
        copy_kind.Push("");
        bytes.push_back(s.bytes);
        src.Push("");
        dst.Push(MemoryKindName(s.memory_kind));
        async.push_back(s.is_async != 0);
      } else {
        continue;
      }
      ++n;
      time.Push(lane, i);
      corr.push_back(i < lane.aux.size() ? lane.aux[i] : 0);
    }
    place.Push(tr, n);
  });
}

void ApiTable(const TraceModel& m, Table& t) {
  const auto procs = ProcessesOf(m);
  Timing time(t, &m);
  Place place(t, &m, &procs, false);
  auto& depth = t.Num<uint32_t>("depth");
  auto& corr = t.Num<uint32_t>("correlation_id");
  auto& rc = t.Num<int32_t>("return_code");
  t.Reserve(EventsOn(m, TrackKind::kThreadApi));
  ForEachLane(m, TrackKind::kThreadApi, [&](const Track& tr, const Lane& lane) {
    auto code = lane.return_code.begin();  // sparse, sorted by index
    for (uint32_t i = 0; i < lane.size(); ++i) {
      time.Push(lane, i);
      corr.push_back(lane.ref[i]);  // the whole ref is the correlation id on API lanes
      while (code != lane.return_code.end() && code->first < i) ++code;
      rc.push_back(code != lane.return_code.end() && code->first == i ? code->second : 0);
    }
    depth.insert(depth.end(), lane.size(), lane.depth);
    place.Push(tr, lane.size());
  });
}

void NvtxTable(const TraceModel& m, Table& t) {
  const auto procs = ProcessesOf(m);
  Timing time(t, &m);
  Place place(t, &m, &procs, false);
  auto& depth = t.Num<uint32_t>("depth");
  Codes& kind = t.Str("kind", nullptr);
  Codes& domain = t.Str("domain", &m);  // NVTX domain, or an imported host op's category
  t.Reserve(EventsOn(m, TrackKind::kThreadRanges));
  ForEachLane(m, TrackKind::kThreadRanges, [&](const Track& tr, const Lane& lane) {
    size_t n = 0;
    for (uint32_t i = 0; i < lane.size(); ++i) {
      const EventKind k = KindAt(lane, i);
      const uint32_t p = lane.ref[i] & viewer::kRefPayloadMask;
      if (k == EventKind::kNvtx) {
        kind.Push("nvtx");
        domain.Push(p < m.nvtx.size() ? m.nvtx[p].domain : StringId(0));
      } else if (k == EventKind::kHostOp) {
        kind.Push("host_op");
        domain.Push(StringId(p));
      } else {
        continue;
      }
      ++n;
      time.Push(lane, i);
    }
    depth.insert(depth.end(), n, lane.depth);
    place.Push(tr, n);
  });
}

// Sampled CPU stacks (gcollect --sample=cpu): one row per sample, its innermost frame and the id of its stack
// (a node of CpuStackTable's tree; 0: nothing could be unwound).
void CpuSampleTable(const TraceModel& m, Table& t) {
  const auto procs = ProcessesOf(m);
  const auto& c = m.cpu;
  auto& time = t.Num<int64_t>("time_ns");
  auto& pid = t.Num<uint32_t>("pid");
  auto& tid = t.Num<uint32_t>("tid");
  auto& rank = t.Num<int32_t>("rank");
  Codes& host = t.Str("host", &m);
  auto& stack = t.Num<uint32_t>("stack_id");
  Codes& frame = t.Str("frame", &m);
  Codes& kind = t.Str("frame_kind", nullptr);
  auto& flags = t.Num<uint8_t>("flags");
  auto& python = t.Bool("python");
  auto& idle = t.Bool("idle_repeat");
  t.Reserve(c.size());
  time.insert(time.end(), c.ts.begin(), c.ts.end());
  pid.insert(pid.end(), c.pid.begin(), c.pid.end());
  tid.insert(tid.end(), c.tid.begin(), c.tid.end());
  flags.insert(flags.end(), c.flags.begin(), c.flags.end());
  for (size_t i = 0; i < c.size(); ++i) {
    auto it = procs.find(c.pid[i]);
    rank.push_back(it == procs.end() ? -1 : it->second.rank);
    host.Push(it == procs.end() ? StringId(0) : it->second.host);
    const uint32_t n = c.stack[i] < c.node_parent.size() ? c.stack[i] : 0;
    stack.push_back(n);
    frame.Push(c.node_frame[n]);
    kind.Push(n == 0 ? "none" : c.node_kind[n] == uint8_t(FrameKind::kPython) ? "python" : "native");
    python.push_back((c.flags[i] & kSamplePython) != 0);
    idle.push_back((c.flags[i] & kSampleIdleRepeat) != 0);
  }
}

// The frame tree the samples point into: node ids are global (every process's nodes renumbered), parents
// before children; a stack is the walk from its node to parent 0.
void CpuStackTable(const TraceModel& m, Table& t) {
  const auto& c = m.cpu;
  auto& id = t.Num<uint32_t>("stack_id");
  auto& parent = t.Num<uint32_t>("parent_id");
  Codes& frame = t.Str("frame", &m);
  Codes& kind = t.Str("frame_kind", nullptr);
  auto& depth = t.Num<uint32_t>("depth");
  t.Reserve(c.node_parent.size());
  for (uint32_t n = 1; n < c.node_parent.size(); ++n) {
    id.push_back(n);
    parent.push_back(c.node_parent[n]);
    frame.Push(c.node_frame[n]);
    kind.Push(c.node_kind[n] == uint8_t(FrameKind::kPython) ? "python" : "native");
    const uint32_t p = c.node_parent[n];
    depth.push_back(p == 0 || p >= n ? 0 : depth[p - 1] + 1);  // parents precede: their depth is known
  }
}

void SampleTable(const TraceModel& m, Table& t) {
  auto& time = t.Num<int64_t>("time_ns");
  auto& value = t.Num<double>("value");
  Codes& name = t.Str("counter", &m);
  Codes& unit = t.Str("unit", &m);
  auto& pid = t.Num<uint32_t>("pid");
  auto& device = t.Num<int64_t>("device");
  for (const viewer::CounterTrack& c : m.counters) {
    const size_t n = c.time.size();
    time.insert(time.end(), c.time.begin(), c.time.end());
    value.insert(value.end(), c.value.begin(), c.value.end());
    name.codes.insert(name.codes.end(), n, name.Of(c.name));
    unit.codes.insert(unit.codes.end(), n, unit.Of(c.unit));
    pid.insert(pid.end(), n, c.pid);
    device.insert(device.end(), n, OrNone(c.device_id));
  }
}

void MetricTable(const TraceModel& m, Table& t) {
  auto& pid = t.Num<uint32_t>("pid");
  auto& corr = t.Num<uint32_t>("correlation_id");
  Codes& kernel = t.Str("kernel", &m);
  auto& ordinal = t.Num<int64_t>("launch_ordinal");
  Codes& metric = t.Str("metric", &m);
  auto& value = t.Num<double>("value");
  auto& flags = t.Num<uint8_t>("flags");
  for (const KernelMetricRecord& r : m.kernel_metrics) {
    pid.push_back(r.pid);
    corr.push_back(r.correlation_id);
    kernel.Push(r.kernel_name);
    ordinal.push_back(OrNone(r.launch_ordinal));
    metric.Push(r.metric);
    value.push_back(r.value);
    flags.push_back(r.flags);
  }
}

// Gathers a table without the GIL (the model is read-only and the Trace object keeps it alive).
template <typename F>
py::dict Gather(const TraceModel& m, F f) {
  Table t;
  {
    py::gil_scoped_release nogil;
    f(m, t);
  }
  return t.ToPython();
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Small tables
// ---------------------------------------------------------------------------------------------------------------

double Nan() {
  return std::numeric_limits<double>::quiet_NaN();
}
double Value(const Quantity& q) {
  return q ? q.value : Nan();
}

viewer::SummaryOf ParseSummaryOf(const std::string& what) {
  for (auto w : {viewer::SummaryOf::kKernels, viewer::SummaryOf::kCopies, viewer::SummaryOf::kApi,
                 viewer::SummaryOf::kNvtx})
    if (what == viewer::SummaryOfName(w)) return w;
  throw py::value_error("summary of '" + what + "': expected 'kernels', 'copies', 'api' or 'nvtx'");
}

py::dict Summary(const TraceModel& m, const std::string& what) {
  const viewer::SummaryOf of = ParseSummaryOf(what);
  std::vector<viewer::NameSummary> rows;
  {
    py::gil_scoped_release nogil;
    rows = viewer::SummarizeByName(m, of);
  }
  py::list name;
  std::vector<uint64_t> count, bytes;
  std::vector<int64_t> total, min, max;
  std::vector<double> avg, share;
  for (const auto& r : rows) {
    name.append(Text(r.name));
    count.push_back(r.count);
    total.push_back(r.total_ns);
    avg.push_back(r.avg_ns);
    min.push_back(r.min_ns);
    max.push_back(r.max_ns);
    share.push_back(r.share);
    bytes.push_back(r.bytes);
  }
  py::dict d;
  d["name"] = name;
  d["count"] = ToNumpy(std::move(count));
  d["total_ns"] = ToNumpy(std::move(total));
  d["avg_ns"] = ToNumpy(std::move(avg));
  d["min_ns"] = ToNumpy(std::move(min));
  d["max_ns"] = ToNumpy(std::move(max));
  d["share"] = ToNumpy(std::move(share));
  if (of == viewer::SummaryOf::kCopies) d["bytes"] = ToNumpy(std::move(bytes));
  return d;
}

py::list Gaps(const TraceModel& m, size_t top, int64_t min_gap_ns) {
  std::vector<viewer::IdleGap> gaps;
  {
    py::gil_scoped_release nogil;
    gaps = viewer::ExplainIdleGaps(m, top, min_gap_ns);
  }
  py::list out;
  for (const auto& g : gaps) {
    py::list activity;
    for (const auto& a : g.activity)
      activity.append(py::dict(py::arg("name") = Text(a.name), py::arg("kind") = a.kind(),
                               py::arg("overlap_ns") = a.overlap_ns, py::arg("source") = Text(a.source),
                               py::arg("thread") = Text(a.thread)));
    out.append(py::dict(py::arg("device") = g.device_id, py::arg("device_name") = Text(g.device),
                        py::arg("start_ns") = g.start_ns, py::arg("end_ns") = g.end_ns,
                        py::arg("dur_ns") = g.end_ns - g.start_ns, py::arg("cpu_activity") = activity,
                        py::arg("diagnosis") = Text(g.diagnosis)));
  }
  return out;
}

py::list Counters(const TraceModel& m) {
  viewer::ProfiledKernels p;
  {
    py::gil_scoped_release nogil;
    p = viewer::AnalyzeProfiledKernels(m);
  }
  const auto procs = ProcessesOf(m);
  py::list out;
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    const KernelAnalysis& a = p.kernels[i];
    auto it = procs.find(a.pid);
    py::dict row;
    row["name"] = Text(a.kernel_name);
    row["pid"] = a.pid;
    row["rank"] = it == procs.end() ? -1 : it->second.rank;
    row["profiled_launches"] = a.launches;
    row["time_per_launch_s"] = Value(a.time_s);
    row["total_gpu_time_s"] = p.kernel_total_time_s[i];
    row["compute_pct"] = Value(a.compute_pct);
    row["memory_pct"] = Value(a.memory_pct);
    row["memory_level"] = MemoryLevelName(a.memory_level);
    row["bottleneck"] = BottleneckName(a.bottleneck);
    row["verdict"] = Text(a.verdict);
    row["flagged_values"] = a.flags.size();
    row["flops_per_s"] = Value(a.flops_per_s);
    row["issue_pct"] = Value(a.issue_pct);
    row["l1_hit_pct"] = Value(a.l1_hit_pct);
    row["l2_hit_pct"] = Value(a.l2_hit_pct);
    row["dram_read_bytes"] = Value(a.dram_read_bytes);
    row["dram_write_bytes"] = Value(a.dram_write_bytes);
    row["achieved_occupancy_pct"] = Value(a.achieved_occupancy_pct);
    row["top_stall"] = Text(a.stalls.empty() ? std::string() : a.stalls.front().reason);
    out.append(row);
  }
  return out;
}

py::list Devices(const TraceModel& m) {
  py::list out;
  for (const auto& d : m.device_summaries)
    out.append(py::dict(py::arg("device") = d.device_id, py::arg("name") = Text(d.name),
                        py::arg("first_ns") = d.first_ns, py::arg("last_ns") = d.last_ns,
                        py::arg("span_ns") = d.span_ns(), py::arg("busy_ns") = d.busy_ns,
                        py::arg("idle_ns") = d.idle_ns(), py::arg("idle_share") = d.idle_share(),
                        py::arg("kernels") = d.kernel_count, py::arg("memcpys") = d.memcpy_count,
                        py::arg("memsets") = d.memset_count));
  return out;
}

py::list Processes(const TraceModel& m) {
  py::list out;
  for (const ProcessRecord& p : m.processes)
    out.append(py::dict(
        py::arg("pid") = p.pid, py::arg("name") = Text(m.Str(p.name)),
        py::arg("command_line") = Text(m.Str(p.command_line)), py::arg("host") = Text(m.Str(p.host)),
        py::arg("rank") = p.rank, py::arg("local_rank") = p.local_rank, py::arg("world_size") = p.world_size,
        py::arg("start_ns") = p.start_ns, py::arg("end_ns") = p.end_ns, py::arg("exit_code") = p.exit_code));
  return out;
}

py::list Losses(const TraceModel& m) {
  py::list out;
  for (const viewer::LossStat& l : viewer::LossSummary(m))
    out.append(py::dict(py::arg("name") = Text(l.name), py::arg("severity") = SeverityName(l.severity),
                        py::arg("count") = l.count, py::arg("pid") = l.pid,
                        py::arg("detail") = Text(l.detail)));
  return out;
}

py::dict Metadata(const TraceModel& m) {
  py::dict d;
  for (const auto& [k, v] : m.metadata.entries) d[Text(k)] = Text(v);
  return d;
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Module
// ---------------------------------------------------------------------------------------------------------------

// The loaded model; Python holds it through a shared_ptr, so tables gathered without the GIL stay valid.
struct Trace {
  std::unique_ptr<TraceModel> model;
  const TraceModel& m() const { return *model; }
};

std::shared_ptr<Trace> Finish(StatusOr<std::unique_ptr<TraceModel>> r, const std::string& what) {
  if (!r.ok()) throw StatusError(Status(r.status().code(), what + ": " + r.status().message()));
  auto t = std::make_shared<Trace>();
  t->model = std::move(r.value());
  return t;
}

viewer::LoadOptions Options(uint32_t threads) {
  viewer::LoadOptions o;
  o.threads = threads;
  return o;
}

std::shared_ptr<Trace> LoadFile(const std::string& path, uint32_t threads) {
  StatusOr<std::unique_ptr<TraceModel>> r = Status(StatusCode::kInternal, "not loaded");
  {
    py::gil_scoped_release nogil;
    r = viewer::LoadTraceFile(path, Options(threads));
  }
  return Finish(std::move(r), path);
}

std::shared_ptr<Trace> LoadBytes(py::bytes data, uint32_t threads) {
  const std::string_view v = data;  // `data` is held by the caller for the whole call
  StatusOr<std::unique_ptr<TraceModel>> r = Status(StatusCode::kInternal, "not loaded");
  {
    py::gil_scoped_release nogil;
    r = viewer::LoadTrace(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(v.data()), v.size()),
                          Options(threads));
  }
  return Finish(std::move(r), "<bytes>");
}

}  // namespace
}  // namespace gt::python

PYBIND11_MODULE(_core, m) {
  using namespace gt::python;
  m.doc() = "gtrace's viewer core (trace model, summaries, idle gaps, counters) as numpy columns";
  gt::nsys::RegisterNsysReader();  // gtrace.load() opens Nsight Systems SQLite exports too

  static py::exception<StatusError> trace_error(m, "TraceError", PyExc_Exception);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StatusError& e) {
      const gt::Status& s = e.status;
      if (s.code() == gt::StatusCode::kNotFound) {
        PyErr_SetString(PyExc_FileNotFoundError, s.message().c_str());
      } else {
        py::object err = py::reinterpret_borrow<py::object>(trace_error.ptr())(s.message());
        std::string code = gt::StatusCodeName(s.code());  // "invalid argument" -> "invalid_argument"
        for (char& c : code)
          if (c == ' ') c = '_';
        err.attr("code") = code;
        PyErr_SetObject(trace_error.ptr(), err.ptr());
      }
    }
  });

  py::class_<Trace, std::shared_ptr<Trace>>(m, "Trace")
      .def_property_readonly("format",
                             [](const Trace& t) { return gt::viewer::SourceFormatName(t.m().format); })
      .def_property_readonly("event_count", [](const Trace& t) { return t.m().event_count; })
      .def_property_readonly("sample_count", [](const Trace& t) { return t.m().sample_count; })
      .def_property_readonly("first_ns", [](const Trace& t) { return t.m().first_ns; })
      .def_property_readonly("last_ns", [](const Trace& t) { return t.m().last_ns; })
      .def_property_readonly("span_ns", [](const Trace& t) { return t.m().span_ns(); })
      .def_property_readonly("has_data_loss", [](const Trace& t) { return gt::viewer::HasDataLoss(t.m()); })
      .def("kernels", [](const Trace& t) { return Gather(t.m(), KernelTable); })
      .def("copies", [](const Trace& t) { return Gather(t.m(), CopyTable); })
      .def("api", [](const Trace& t) { return Gather(t.m(), ApiTable); })
      .def("nvtx", [](const Trace& t) { return Gather(t.m(), NvtxTable); })
      .def("samples", [](const Trace& t) { return Gather(t.m(), SampleTable); })
      .def("cpu_samples", [](const Trace& t) { return Gather(t.m(), CpuSampleTable); })
      .def("cpu_stacks", [](const Trace& t) { return Gather(t.m(), CpuStackTable); })
      .def("metrics", [](const Trace& t) { return Gather(t.m(), MetricTable); })
      .def("summary", [](const Trace& t, const std::string& what) { return Summary(t.m(), what); })
      .def("gaps",
           [](const Trace& t, size_t top, int64_t min_gap_ns) { return Gaps(t.m(), top, min_gap_ns); })
      .def("counters", [](const Trace& t) { return Counters(t.m()); })
      .def("devices", [](const Trace& t) { return Devices(t.m()); })
      .def("processes", [](const Trace& t) { return Processes(t.m()); })
      .def("losses", [](const Trace& t) { return Losses(t.m()); })
      .def("metadata", [](const Trace& t) { return Metadata(t.m()); })
      .def("problems",
           [](const Trace& t) {
             py::list out;
             for (const std::string& p : t.m().problems) out.append(Text(p));
             return out;
           })
      .def("stats_json", [](const Trace& t) {
        py::gil_scoped_release nogil;
        return gt::viewer::StatsJson(t.m());
      });

  m.def("load_file", &LoadFile, py::arg("path"), py::arg("threads") = 0,
        "Loads a .gtrace, Chrome/Kineto JSON (plain or gzipped) or NAME.gtrace.parts folder");
  m.def("load_bytes", &LoadBytes, py::arg("data"), py::arg("threads") = 0,
        "Loads a trace from bytes in memory (any format load_file reads)");
}

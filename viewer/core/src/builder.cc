// ModelBuilder, records in: routers append events to per-track pieces and intern detail tables; chunks routed
// on other threads are merged here in file order. Finish() lives in builder_finish.cc.
//
// [SECTION] Tables
// [SECTION] Router
// [SECTION] Chunk merging
// [SECTION] TraceSink entry points
// [SECTION] Importer entry points
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

#include "builder_internal.h"

namespace gt::viewer::detail {

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Tables
// -----------------------------------------------------------------------------------------------------------------

// The per-kernel hot path. name .. local_bytes_per_thread are 14 contiguous uint32 in both structs: compared
// as 7 words without branches (field by field was a compare and a branch per field).
constexpr size_t kConfigSpan = 14 * sizeof(uint32_t);
static_assert(offsetof(KernelRecord, local_bytes_per_thread) + sizeof(uint32_t) -
                  offsetof(KernelRecord, name) ==
              kConfigSpan);
static_assert(offsetof(LaunchConfig, local_bytes_per_thread) + sizeof(uint32_t) -
                  offsetof(LaunchConfig, name) ==
              kConfigSpan);
static bool SameConfig(const LaunchConfig& a, const KernelRecord& b) {
  const auto* pa = reinterpret_cast<const unsigned char*>(&a.name);
  const auto* pb = reinterpret_cast<const unsigned char*>(&b.name);
  uint64_t diff = 0;
  for (size_t i = 0; i < kConfigSpan; i += 8) {
    uint64_t x, y;
    std::memcpy(&x, pa + i, 8);
    std::memcpy(&y, pb + i, 8);
    diff |= x ^ y;
  }
  return diff == 0 && a.graph_id == b.graph_id && a.graph_node_id == b.graph_node_id &&
         a.launch_type == b.launch_type;
}

uint32_t Tables::Config(const KernelRecord& r) {
  uint32_t& cached = config_cache_[(r.name * 0x9E3779B1u) >> 22];
  if (cached != 0 && SameConfig(configs[cached - 1], r)) return cached - 1;
  LaunchConfig c;
  c.name = r.name;
  c.grid = r.grid;
  c.block = r.block;
  c.cluster = r.cluster;
  c.registers_per_thread = r.registers_per_thread;
  c.static_shared_bytes = r.static_shared_bytes;
  c.dynamic_shared_bytes = r.dynamic_shared_bytes;
  c.local_bytes_per_thread = r.local_bytes_per_thread;
  c.graph_id = r.graph_id;
  c.graph_node_id = r.graph_node_id;
  c.launch_type = r.launch_type;
  const uint32_t id = Config(c);
  cached = id + 1;
  return id;
}

uint32_t Tables::Config(const LaunchConfig& c) {
  return config_index_.Intern(&configs, c, c.name, c.grid, c.block, c.cluster, c.registers_per_thread,
                              c.static_shared_bytes, c.dynamic_shared_bytes, c.local_bytes_per_thread,
                              c.graph_id, c.graph_node_id, c.launch_type);
}

StringId Tables::Synthetic(const std::string& text) {
  auto [it, inserted] = synthetic_ids_.try_emplace(text, kSyntheticBase + StringId(synthetic.size()));
  if (inserted) synthetic.push_back(text);
  return it->second;
}
// Per-record names from a one-byte kind: looked up once per kind, not built and hashed per record.
StringId Tables::MemcpyName(uint8_t copy_kind) {
  StringId& id = memcpy_names_[copy_kind];
  if (id == 0) id = Synthetic(std::string("Memcpy ") + CopyKindName(copy_kind));
  return id;
}
StringId Tables::SyncName(uint8_t sync_kind) {
  StringId& id = sync_names_[sync_kind];
  if (id == 0) id = Synthetic(std::string("Sync: ") + SyncKindName(sync_kind));
  return id;
}
StringId Tables::MemsetName() {
  if (memset_name_ == 0) memset_name_ = Synthetic("Memset");
  return memset_name_;
}

int64_t Piece::End(uint32_t i) const {
  const uint32_t d = dur[i];
  if (d != kDurOverflow) return start[i] + d;
  auto it = std::lower_bound(long_dur.begin(), long_dur.end(), i,
                             [](const auto& p, uint32_t k) { return p.first < k; });
  return start[i] + (it != long_dur.end() && it->first == i ? it->second : int64_t{kDurOverflow});
}

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Router
// -----------------------------------------------------------------------------------------------------------------

Router::Router() : own_tables(std::make_unique<Tables>()) {
  tables = own_tables.get();
}
Router::Router(Tables* t) : tables(t) {}

void Router::ClearStages() {
  stages.clear();
  index_.clear();
  cache_.fill(CacheSlot{});
}

// Out of line: keeps the hit path small enough to inline into every record loop.
Router::Stage& Router::StageMiss(const StageKey& k, size_t slot_index) {
  CacheSlot& slot = cache_[slot_index];
  auto [it, inserted] = index_.try_emplace(k, static_cast<uint32_t>(stages.size()));
  if (inserted) stages.push_back({k, Piece(), {}});
  slot.key = k;
  slot.stage = it->second;
  return stages[slot.stage];
}

void Router::Room(Stage& s, bool in_order) {
  Piece& p = s.piece;
  const bool full = max_piece_ != 0 && p.n >= max_piece_;
  if (p.n > 0 && (full || (!in_order && p.sorted && max_piece_ != 0 && p.n >= kSplitMin))) {
    const bool aux = p.has_aux;
    s.earlier.push_back(std::move(p));
    p = Piece();
    p.has_aux = aux;
  }
  if (p.n == p.start.size()) {
    p.Grow(p.start.empty() ? kFirstBlock : hint_, growth_halves_);
    if (max_piece_ != 0 && p.start.size() > max_piece_) p.Reserve(max_piece_);
  }
}

GT_ROUTE_INLINE void Router::Kernel(const KernelRecord& r, StringId args) {
  Stage& p = StageFor(TrackKind::kGpuStream, r.pid, r.device_id, r.context_id, r.stream_id);
  PushGpu(p, r.start, r.end, r.name, MakeRef(EventKind::kKernel, tables->Config(r)), r.correlation_id);
  PushArgs(p.piece, args);
}
GT_ROUTE_INLINE void Router::Memcpy(const MemcpyRecord& r, StringId args) {
  const StringId name = tables->MemcpyName(r.copy_kind);
  const uint32_t id = tables->Memcpy(
      {r.bytes, r.peer_device_id, r.graph_id, r.copy_kind, r.src_kind, r.dst_kind, r.is_async});
  Stage& p = StageFor(TrackKind::kGpuStream, r.pid, r.device_id, r.context_id, r.stream_id);
  PushGpu(p, r.start, r.end, name, MakeRef(EventKind::kMemcpy, id), r.correlation_id);
  p.piece.synthetic_names = true;
  PushArgs(p.piece, args);
}
GT_ROUTE_INLINE void Router::Memset(const MemsetRecord& r, StringId args) {
  const StringId name = tables->MemsetName();
  const uint32_t id = tables->Memset({r.bytes, r.value, r.graph_id, r.memory_kind, r.is_async});
  Stage& p = StageFor(TrackKind::kGpuStream, r.pid, r.device_id, r.context_id, r.stream_id);
  PushGpu(p, r.start, r.end, name, MakeRef(EventKind::kMemset, id), r.correlation_id);
  p.piece.synthetic_names = true;
  PushArgs(p.piece, args);
}
GT_ROUTE_INLINE void Router::Api(const ApiCallRecord& r, StringId args) {
  Stage& p = StageFor(TrackKind::kThreadApi, r.pid, r.tid);
  Push(p, r.start, r.end, r.name, r.correlation_id, r.correlation_id);
  if (r.return_code != 0) p.piece.ret.emplace_back(p.piece.n - 1, r.return_code);
  PushArgs(p.piece, args);
}
void Router::HostSlice(const HostSliceRecord& r) {
  const EventKind kind = r.kind == EventKind::kInstant ? EventKind::kInstant : EventKind::kHostOp;
  Stage& p = StageFor(TrackKind::kThreadRanges, r.pid, r.tid);
  Push(p, r.start, kind == EventKind::kInstant ? r.start : r.end, r.name, MakeRef(kind, r.category), 0);
  PushArgs(p.piece, r.args);
}
void Router::GpuAnnotation(const GpuAnnotationRecord& r) {
  Stage& p = StageFor(TrackKind::kGpuAnnotations, r.pid, r.device_id, 0, r.stream_id);
  Push(p, r.start, r.end, r.name, MakeRef(EventKind::kAnnotation, 0), 0);
  PushArgs(p.piece, r.args);
}

// Kernel(), Memcpy(), ... inline into these loops (their only other callers are in this file).
void Router::OnKernels(std::span<const KernelRecord> r) {
  for (const auto& k : r) Kernel(k, 0);
}
void Router::OnMemcpys(std::span<const MemcpyRecord> r) {
  for (const auto& c : r) Memcpy(c, 0);
}
void Router::OnMemsets(std::span<const MemsetRecord> r) {
  for (const auto& c : r) Memset(c, 0);
}
void Router::OnApiCalls(std::span<const ApiCallRecord> r) {
  for (const auto& a : r) Api(a, 0);
}
void Router::OnNvtx(std::span<const NvtxRecord> r) {
  for (const auto& n : r) {
    const uint32_t id = tables->Nvtx({n.domain, n.category, n.color, n.payload, n.payload_kind, n.flags});
    Stage& p = StageFor(TrackKind::kThreadRanges, n.pid, n.tid);
    Push(p, n.start, (n.flags & kNvtxMark) ? n.start : n.end, n.message, MakeRef(EventKind::kNvtx, id), 0);
  }
}
void Router::OnSyncs(std::span<const SyncRecord> r) {
  for (const auto& y : r) {
    const uint32_t id =
        tables->Sync({y.device_id, y.context_id, y.stream_id, y.correlation_id, y.event_id, y.sync_kind});
    Stage& p = StageFor(TrackKind::kThreadSync, y.pid, y.tid);
    Push(p, y.start, y.end, tables->SyncName(y.sync_kind), MakeRef(EventKind::kSync, id), 0);
    p.piece.synthetic_names = true;
  }
}
void Router::OnOverheads(std::span<const OverheadRecord> r) {
  for (const auto& o : r) {
    Stage& p = StageFor(TrackKind::kThreadSync, o.pid, o.tid);
    Push(p, o.start, o.end, o.kind, MakeRef(EventKind::kOverhead, 0), 0);
  }
}

// Other record kinds of a chunk, kept as bytes (a chunk holds one kind) until the merge replays them.
namespace {
template <typename R>
struct ColdKind;
#define GT_COLD_KIND(R, N, Method)                                                \
  template <>                                                                     \
  struct ColdKind<R> {                                                            \
    static constexpr uint16_t kValue = N;                                         \
    static void Deliver(TraceSink& s, const R* r, size_t n) { s.Method({r, n}); } \
  };
GT_COLD_KIND(ProcessRecord, 1, OnProcesses)
GT_COLD_KIND(ThreadRecord, 2, OnThreads)
GT_COLD_KIND(DeviceRecord, 3, OnDevices)
GT_COLD_KIND(ContextRecord, 4, OnContexts)
GT_COLD_KIND(StreamRecord, 5, OnStreams)
GT_COLD_KIND(MemoryRecord, 6, OnMemory)
GT_COLD_KIND(CounterDescriptor, 7, OnCounterDescriptors)
GT_COLD_KIND(CounterSample, 8, OnCounterSamples)
GT_COLD_KIND(KernelMetricRecord, 9, OnKernelMetrics)
GT_COLD_KIND(StallSample, 10, OnStallSamples)
GT_COLD_KIND(FlowRecord, 11, OnFlows)
GT_COLD_KIND(LossRecord, 12, OnLoss)
GT_COLD_KIND(NvtxArgRecord, 13, OnNvtxArgs)
GT_COLD_KIND(NcclCollRecord, 14, OnNcclColls)
GT_COLD_KIND(NcclChannelRecord, 15, OnNcclChannels)
GT_COLD_KIND(CpuStackNodeRecord, 16, OnCpuStackNodes)
GT_COLD_KIND(CpuSampleRecord, 17, OnCpuSamples)
#undef GT_COLD_KIND

template <typename R>
void DeliverCold(TraceSink& to, uint16_t type, const std::vector<uint8_t>& bytes, uint64_t count) {
  if (type == ColdKind<R>::kValue)
    ColdKind<R>::Deliver(to, reinterpret_cast<const R*>(bytes.data()), size_t(count));
}
}  // namespace

template <typename R>
void Router::Capture(std::span<const R> r) {
  static_assert(std::is_trivially_copyable_v<R>);
  if (r.empty()) return;
  // One kind per chunk; a second kind (a caller other than the reader) would be replayed as the first.
  GT_ASSERT(cold_.empty() || cold_type_ == ColdKind<R>::kValue);
  cold_type_ = ColdKind<R>::kValue;
  const size_t old = cold_.size();
  cold_.resize(old + r.size_bytes());  // operator new's alignment suits every record struct
  std::memcpy(cold_.data() + old, r.data(), r.size_bytes());
  cold_count_ += r.size();
}

void Router::Replay(TraceSink& to) const {
  if (cold_count_ == 0) return;
  DeliverCold<ProcessRecord>(to, cold_type_, cold_, cold_count_);
  DeliverCold<ThreadRecord>(to, cold_type_, cold_, cold_count_);
  DeliverCold<DeviceRecord>(to, cold_type_, cold_, cold_count_);
  DeliverCold<ContextRecord>(to, cold_type_, cold_, cold_count_);
  DeliverCold<StreamRecord>(to, cold_type_, cold_, cold_count_);
  DeliverCold<MemoryRecord>(to, cold_type_, cold_, cold_count_);
  DeliverCold<CounterDescriptor>(to, cold_type_, cold_, cold_count_);
  DeliverCold<CounterSample>(to, cold_type_, cold_, cold_count_);
  DeliverCold<KernelMetricRecord>(to, cold_type_, cold_, cold_count_);
  DeliverCold<StallSample>(to, cold_type_, cold_, cold_count_);
  DeliverCold<FlowRecord>(to, cold_type_, cold_, cold_count_);
  DeliverCold<LossRecord>(to, cold_type_, cold_, cold_count_);
  DeliverCold<NvtxArgRecord>(to, cold_type_, cold_, cold_count_);
  DeliverCold<NcclCollRecord>(to, cold_type_, cold_, cold_count_);
  DeliverCold<NcclChannelRecord>(to, cold_type_, cold_, cold_count_);
  DeliverCold<CpuStackNodeRecord>(to, cold_type_, cold_, cold_count_);
  DeliverCold<CpuSampleRecord>(to, cold_type_, cold_, cold_count_);
}

}  // namespace gt::viewer::detail

namespace gt::viewer {

using detail::ChunkMaps;
using detail::Piece;
using detail::Router;
using detail::Stage;
using detail::StageKey;

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Chunk merging
// -----------------------------------------------------------------------------------------------------------------

detail::Stage& ModelBuilder::Impl::StageOf(const StageKey& k) {
  auto [it, inserted] = stage_index.try_emplace(k, static_cast<uint32_t>(stages.size()));
  if (inserted) stages.push_back({k, {}});
  return stages[it->second];
}

void ModelBuilder::Impl::FlushDirect() {
  for (Router::Stage& s : direct.stages) {
    std::vector<Piece>& to = StageOf(s.key).pieces;
    for (Piece& p : s.earlier) to.push_back(std::move(p));
    if (s.piece.n > 0) to.push_back(std::move(s.piece));
  }
  merged_events += direct.events;
  negative_durations += direct.negative_durations;
  direct.events = direct.negative_durations = 0;
  direct.ClearStages();
}

void ModelBuilder::Impl::MergeChunk(Router&& chunk) {
  if (!direct.stages.empty()) FlushDirect();  // records fed directly before this chunk come first
  chunk.Replay(*self);
  // Local table ids -> the model's, interning each distinct entry once, in the chunk's first-use order.
  auto maps = std::make_shared<ChunkMaps>();
  bool remapped = false;
  auto remap = [&](EventKind kind, size_t n, auto&& intern) {
    std::vector<uint32_t> map(n);
    bool same = true;
    for (size_t i = 0; i < n; ++i) same &= (map[i] = intern(i)) == i;
    if (!same) maps->ref[size_t(kind)] = std::move(map), remapped = true;
  };
  const detail::Tables& t = *chunk.tables;
  remap(EventKind::kKernel, t.configs.size(), [&](size_t i) { return tables.Config(t.configs[i]); });
  remap(EventKind::kMemcpy, t.memcpys.size(), [&](size_t i) { return tables.Memcpy(t.memcpys[i]); });
  remap(EventKind::kMemset, t.memsets.size(), [&](size_t i) { return tables.Memset(t.memsets[i]); });
  remap(EventKind::kNvtx, t.nvtx.size(), [&](size_t i) { return tables.Nvtx(t.nvtx[i]); });
  remap(EventKind::kSync, t.syncs.size(), [&](size_t i) { return tables.Sync(t.syncs[i]); });
  bool same = true;
  for (size_t i = 0; i < t.synthetic.size(); ++i) {
    maps->synthetic.push_back(tables.Synthetic(t.synthetic[i]) - detail::kSyntheticBase);
    same &= maps->synthetic.back() == i;
  }
  if (same)
    maps->synthetic.clear();
  else
    remapped = true;
  for (Router::Stage& s : chunk.stages) {
    std::vector<Piece>& to = StageOf(s.key).pieces;
    for (Piece& p : s.earlier) {
      if (remapped) p.maps = maps;
      to.push_back(std::move(p));
    }
    if (remapped) s.piece.maps = maps;
    if (s.piece.n > 0) to.push_back(std::move(s.piece));
  }
  merged_events += chunk.events;
  negative_durations += chunk.negative_durations;
}

void ModelBuilder::Impl::Consolidate(detail::ThreadPool& pool) {
  std::vector<uint32_t> work;
  for (uint32_t i = 0; i < stages.size(); ++i)
    if (stages[i].pieces.size() > 1 || (stages[i].pieces.size() == 1 && stages[i].pieces[0].maps))
      work.push_back(i);
  pool.For(work.size(), [&](size_t w, unsigned) {
    std::vector<Piece>& pieces = stages[work[w]].pieces;
    const TrackKind kind = stages[work[w]].key.kind;
    Piece& into = pieces[0];
    if (into.maps) {  // the first chunk's ids: made global in place
      Piece global;
      detail::AppendPiece(into, kind, &global);
      into = std::move(global);
    }
    for (size_t i = 1; i < pieces.size(); ++i) {
      detail::AppendPiece(pieces[i], kind, &into);
      pieces[i].Free();
    }
    pieces.resize(1);
  });
}

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] TraceSink entry points
// -----------------------------------------------------------------------------------------------------------------

ModelBuilder::ModelBuilder() : impl_(std::make_unique<Impl>(this)) {}
ModelBuilder::~ModelBuilder() = default;

void ModelBuilder::OnMetadata(const TraceMetadata& m) {
  impl_->m->metadata.MergeFrom(m);  // as every reader does: gcollect's parts, a counters run, merged ranks
}

void ModelBuilder::OnStrings(StringId first_id, std::span<const std::string_view> strings) {
  impl_->record_strings_ = true;
  auto& s = impl_->m->strings;
  if (first_id == 0 && !strings.empty()) {  // id 0 is always ""
    strings = strings.subspan(1);
    first_id = 1;
  }
  size_t need = size_t{first_id} + strings.size();
  if (need > (size_t{1} << 31)) return;  // the reader validates ids; this guards a hostile sink caller
  if (s.size() < need) s.resize(need);
  for (size_t i = 0; i < strings.size(); ++i) s[first_id + i] = std::string(strings[i]);
}

void ModelBuilder::OnProcesses(std::span<const ProcessRecord> r) {
  auto& v = impl_->m->processes;
  v.insert(v.end(), r.begin(), r.end());
}
void ModelBuilder::OnThreads(std::span<const ThreadRecord> r) {
  auto& v = impl_->m->threads;
  v.insert(v.end(), r.begin(), r.end());
}
void ModelBuilder::OnDevices(std::span<const DeviceRecord> r) {
  auto& v = impl_->m->devices;
  v.insert(v.end(), r.begin(), r.end());
}
void ModelBuilder::OnContexts(std::span<const ContextRecord>) {}
void ModelBuilder::OnStreams(std::span<const StreamRecord> r) {
  auto& v = impl_->m->streams;
  v.insert(v.end(), r.begin(), r.end());
}

void ModelBuilder::OnKernels(std::span<const KernelRecord> r) {
  impl_->direct.OnKernels(r);
}
void ModelBuilder::OnMemcpys(std::span<const MemcpyRecord> r) {
  impl_->direct.OnMemcpys(r);
}
void ModelBuilder::OnMemsets(std::span<const MemsetRecord> r) {
  impl_->direct.OnMemsets(r);
}
void ModelBuilder::OnApiCalls(std::span<const ApiCallRecord> r) {
  impl_->direct.OnApiCalls(r);
}
void ModelBuilder::OnNvtx(std::span<const NvtxRecord> r) {
  impl_->direct.OnNvtx(r);
}
void ModelBuilder::OnSyncs(std::span<const SyncRecord> r) {
  impl_->direct.OnSyncs(r);
}
void ModelBuilder::OnOverheads(std::span<const OverheadRecord> r) {
  impl_->direct.OnOverheads(r);
}

void ModelBuilder::OnMemory(std::span<const MemoryRecord> r) {
  for (const auto& x : r) {
    int64_t b = static_cast<int64_t>(std::min<uint64_t>(x.bytes, INT64_MAX / 4));
    impl_->memory[{x.pid, x.device_id}].push_back({x.timestamp, x.op == uint8_t(MemoryOp::kFree) ? -b : b});
  }
}

void ModelBuilder::OnCounterDescriptors(std::span<const CounterDescriptor> r) {
  for (const auto& d : r) {
    auto [it, inserted] = impl_->counter_by_id.try_emplace(d.counter_id, uint32_t(impl_->m->counters.size()));
    if (inserted) impl_->m->counters.emplace_back();
    CounterTrack& c = impl_->m->counters[it->second];
    c.name = d.name;
    c.unit = d.unit;
    c.pid = d.pid;
    c.device_id = d.device_id;
    c.source_id = d.counter_id;
  }
}

void ModelBuilder::OnCounterSamples(std::span<const CounterSample> r) {
  uint32_t last_id = kNone, last_index = 0;
  for (const auto& s : r) {
    if (s.counter_id != last_id) {
      auto [it, inserted] =
          impl_->counter_by_id.try_emplace(s.counter_id, uint32_t(impl_->m->counters.size()));
      if (inserted) {  // samples whose descriptor was lost: keep them under a placeholder name
        impl_->m->counters.emplace_back();
        impl_->m->counters.back().source_id = s.counter_id;
        impl_->m->counters.back().name = impl_->tables.Synthetic("Counter " + std::to_string(s.counter_id));
      }
      last_id = s.counter_id;
      last_index = it->second;
    }
    CounterTrack& c = impl_->m->counters[last_index];
    c.time.push_back(s.timestamp);
    c.value.push_back(s.value);
  }
}

void ModelBuilder::OnKernelMetrics(std::span<const KernelMetricRecord> r) {  // shown by the analysis views
  impl_->m->kernel_metrics.insert(impl_->m->kernel_metrics.end(), r.begin(), r.end());
}
void ModelBuilder::OnStallSamples(std::span<const StallSample> r) {
  impl_->m->stall_samples.insert(impl_->m->stall_samples.end(), r.begin(), r.end());
}

void ModelBuilder::OnFlows(std::span<const FlowRecord> r) {
  impl_->flow_records.insert(impl_->flow_records.end(), r.begin(), r.end());
}

// Decoded NVTX payload fields: sorted by key at Finish, looked up per range (gt/viewer/nvtx_args.h).
void ModelBuilder::OnNvtxArgs(std::span<const NvtxArgRecord> r) {
  impl_->m->nvtx_args.insert(impl_->m->nvtx_args.end(), r.begin(), r.end());
}

// NCCL's profiler plugin records: sorted at Finish, matched across ranks there (gt/viewer/collectives.h).
void ModelBuilder::OnNcclColls(std::span<const NcclCollRecord> r) {
  impl_->m->nccl_colls.insert(impl_->m->nccl_colls.end(), r.begin(), r.end());
}
void ModelBuilder::OnNcclChannels(std::span<const NcclChannelRecord> r) {
  impl_->m->nccl_channels.insert(impl_->m->nccl_channels.end(), r.begin(), r.end());
}

// Sampled CPU stacks: per-process node ids are made global at Finish (BuildCpuSamples).
void ModelBuilder::OnCpuStackNodes(std::span<const CpuStackNodeRecord> r) {
  impl_->cpu_nodes.insert(impl_->cpu_nodes.end(), r.begin(), r.end());
}
void ModelBuilder::OnCpuSamples(std::span<const CpuSampleRecord> r) {
  impl_->cpu_samples.insert(impl_->cpu_samples.end(), r.begin(), r.end());
}

void ModelBuilder::OnLoss(std::span<const LossRecord> r) {
  for (const auto& l : r)
    impl_->m->losses.push_back({impl_->m->Str(l.name), l.severity, l.pid, l.count, impl_->m->Str(l.detail)});
}

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Importer entry points
// -----------------------------------------------------------------------------------------------------------------

uint64_t ModelBuilder::HashText(std::string_view text) {
  return detail::HashText(text);
}

StringId ModelBuilder::InternArgs(std::string_view text, uint64_t h) {
  if (text.empty()) return 0;
  auto& im = *impl_;
  auto& slot = im.args_cache[(h ^ (h >> 21)) & (im.args_cache.size() - 1)];
  if (slot.id != 0 && slot.hash == h && im.m->strings[slot.id] == text) return slot.id;
  const StringId id = static_cast<StringId>(im.m->strings.size());
  im.m->strings.emplace_back(text);
  slot = {h, id};
  return id;
}

StringId ModelBuilder::Intern(std::string_view text) {
  if (text.empty()) return 0;
  const uint64_t h = detail::HashText(text);
  auto& im = *impl_;
  if (StringId id = im.interned.Find(text, h, im.m->strings)) return id;
  StringId id = static_cast<StringId>(im.m->strings.size());
  im.m->strings.emplace_back(text);
  im.interned.Insert(id, h);
  return id;
}

void ModelBuilder::AddHostSlice(const HostSliceRecord& r) {
  impl_->direct.HostSlice(r);
}
void ModelBuilder::AddGpuAnnotation(const GpuAnnotationRecord& r) {
  impl_->direct.GpuAnnotation(r);
}
void ModelBuilder::AddKernel(const KernelRecord& r, StringId args) {
  impl_->direct.Kernel(r, args);
}
void ModelBuilder::AddMemcpy(const MemcpyRecord& r, StringId args) {
  impl_->direct.Memcpy(r, args);
}
void ModelBuilder::AddMemset(const MemsetRecord& r, StringId args) {
  impl_->direct.Memset(r, args);
}
void ModelBuilder::AddApiCall(const ApiCallRecord& r, StringId args) {
  impl_->direct.Api(r, args);
}
void ModelBuilder::AddFlow(const FlowEndpoints& f) {
  impl_->flow_endpoints.push_back(f);
}
void ModelBuilder::SetProcessName(uint32_t pid, std::string_view name) {
  impl_->process_names[pid] = std::string(name);
}
void ModelBuilder::SetThreadName(uint32_t pid, uint32_t tid, std::string_view name) {
  impl_->thread_names[{pid, tid}] = std::string(name);
}
void ModelBuilder::SetProcessSortIndex(uint32_t pid, int64_t index) {
  impl_->process_sort[pid] = index;
}
void ModelBuilder::SetThreadSortIndex(uint32_t pid, uint32_t tid, int64_t index) {
  impl_->thread_sort[{pid, tid}] = index;
}
void ModelBuilder::SetFormat(SourceFormat f) {
  impl_->m->format = f;
}
void ModelBuilder::AddLoss(std::string_view name, Severity severity, uint64_t count,
                           std::string_view detail) {
  auto [it, inserted] = impl_->builder_losses.try_emplace(std::string(name));
  LossStat& l = it->second;
  if (inserted) l = {std::string(name), static_cast<uint8_t>(severity), 0, 0, std::string(detail)};
  l.count += count;
}
void ModelBuilder::AddProblem(std::string problem) {
  if (impl_->m->problems.size() < 100) impl_->m->problems.push_back(std::move(problem));
}
void ModelBuilder::SetReport(const LoadReport& report) {
  impl_->m->report = report;
}
uint64_t ModelBuilder::events_added() const {
  return impl_->events();
}

std::unique_ptr<TraceModel> ModelBuilder::Finish() {
  return impl_->Finish(nullptr);
}

}  // namespace gt::viewer

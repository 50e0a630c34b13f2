// ModelBuilder: streams records into per-track staging columns, then Finish() sorts them, packs them into
// lanes by nesting depth, orders tracks and computes the per-device summaries.
//
// [SECTION] Staging
// [SECTION] Interning helpers
// [SECTION] TraceSink entry points
// [SECTION] Importer entry points
// [SECTION] Finish: track order
// [SECTION] Finish: lanes
// [SECTION] Finish: counters, flows, summaries
#include "gt/viewer/builder.h"

#include "gt/viewer/lod.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <numeric>
#include <queue>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>

namespace gt::viewer {

namespace {

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Staging
// ---------------------------------------------------------------------------------------------------------------

// Identity of a track while building. `a`/`b`/`c`: tid for thread tracks; device/context/stream for GPU
// tracks.
struct StageKey {
  TrackKind kind;
  uint32_t pid, a, b, c;
  friend bool operator==(const StageKey&, const StageKey&) = default;
};
struct StageKeyHash {
  size_t operator()(const StageKey& k) const {
    uint64_t h = static_cast<uint64_t>(k.kind) * 0x9E3779B97F4A7C15ull;
    for (uint32_t v : {k.pid, k.a, k.b, k.c}) h = (h ^ v) * 0xFF51AFD7ED558CCDull;
    return static_cast<size_t>(h ^ (h >> 29));
  }
};

// Columns are sized to their capacity and written through indices; `n` events are valid. One capacity check
// per event for all columns instead of one push_back per column (this is the per-record hot path).
struct Staging {
  StageKey key;
  uint32_t n = 0;
  std::vector<int64_t> start, end;
  std::vector<uint32_t> name, ref, aux;
  std::vector<std::pair<uint32_t, int32_t>> ret;
  std::vector<std::pair<uint32_t, StringId>> args;
  bool has_aux = false;

  void Grow() {
    const size_t cap = std::max<size_t>(256, size_t{n} * 2);
    start.resize(cap), end.resize(cap), name.resize(cap), ref.resize(cap);
    if (has_aux) aux.resize(cap);
  }
  void Trim() {
    start.resize(n), end.resize(n), name.resize(n), ref.resize(n);
    if (has_aux) aux.resize(n);
  }
};

constexpr uint32_t kMaxDepth =
    1024;  // deeper nesting is pathological input; counted as loss, not a lane each

struct MemoryDelta {
  int64_t t;
  int64_t delta;
};

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Interning helpers
// ---------------------------------------------------------------------------------------------------------------

// Interns small POD-like detail structs by their field bytes (fields appended explicitly: no padding in
// keys). Every key of one interner has the same length, so keys live back to back in one buffer and an
// open-addressing table of indices finds them: no string allocation and no node per record (memcpys and NVTX
// ranges take this path once each).
template <typename T>
class Interner {
 public:
  template <typename... F>
  uint32_t Intern(std::vector<T>* table, const T& value, const F&... fields) {
    constexpr size_t kLen = (sizeof(F) + ... + 0);
    char key[kLen];
    size_t at = 0;
    ((std::memcpy(key + at, &fields, sizeof(F)), at += sizeof(F)), ...);
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < kLen; i += 8) {
      uint64_t w = 0;
      std::memcpy(&w, key + i, std::min<size_t>(8, kLen - i));
      h = (h ^ w) * 0xFF51AFD7ED558CCDull;
      h ^= h >> 32;
    }
    if ((count_ + 1) * 2 > slots_.size()) Grow();
    const size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      const uint32_t s = slots_[i];
      if (s == 0) {
        const uint32_t id = static_cast<uint32_t>(table->size());
        table->push_back(value);
        keys_.append(key, kLen);
        hashes_.push_back(h);
        slots_[i] = id + 1;
        ++count_;
        return id;
      }
      if (hashes_[s - 1] == h && std::memcmp(keys_.data() + size_t{s - 1} * kLen, key, kLen) == 0)
        return s - 1;
    }
  }

 private:
  void Grow() {
    std::vector<uint32_t> next(std::max<size_t>(64, slots_.size() * 2), 0);
    const size_t mask = next.size() - 1;
    for (uint32_t s : slots_) {
      if (s == 0) continue;
      size_t i = hashes_[s - 1] & mask;
      while (next[i] != 0) i = (i + 1) & mask;
      next[i] = s;
    }
    slots_ = std::move(next);
  }
  std::string keys_;
  std::vector<uint64_t> hashes_;
  std::vector<uint32_t> slots_;
  size_t count_ = 0;
};

}  // namespace

class ModelBuilder::Impl {
 public:
  std::unique_ptr<TraceModel> m = std::make_unique<TraceModel>();
  std::vector<Staging> stages;
  std::unordered_map<StageKey, uint32_t, StageKeyHash> stage_index;
  uint64_t events = 0;

  std::unordered_map<std::string, StringId> interned;  // importer strings
  bool strings_by_intern = false;

  std::vector<uint32_t> last_config_by_name;  // fast path: same name -> usually the same config
  std::unordered_map<std::string, uint32_t> config_map;
  Interner<MemcpyInfo> memcpy_interner;
  Interner<MemsetInfo> memset_interner;
  Interner<NvtxInfo> nvtx_interner;
  Interner<SyncInfo> sync_interner;

  std::map<uint32_t, uint32_t> counter_by_id;  // trace counter_id -> counters index
  std::map<std::pair<uint32_t, uint32_t>, std::vector<MemoryDelta>> memory;  // (pid, device)
  std::vector<FlowRecord> flow_records;
  std::vector<FlowEndpoints> flow_endpoints;
  std::map<uint32_t, std::string> process_names;
  std::map<std::pair<uint32_t, uint32_t>, std::string> thread_names;
  std::map<uint32_t, int64_t> process_sort;
  std::map<std::pair<uint32_t, uint32_t>, int64_t> thread_sort;
  std::map<std::string, LossStat> builder_losses;  // merged by name
  uint64_t negative_durations = 0;
  uint64_t too_deep = 0;

  // Records of one batch hop between a handful of streams/threads: a direct-mapped cache in front of the hash
  // map keeps the per-record lookup to a hash and a compare.
  struct CacheSlot {
    StageKey key{TrackKind::kCounter, kNone, kNone, kNone, kNone};
    uint32_t stage = kNone;
  };
  static constexpr size_t kStageCacheSize = 256;
  std::array<CacheSlot, kStageCacheSize> stage_cache;

  Staging& Stage(TrackKind kind, uint32_t pid, uint32_t a, uint32_t b = 0, uint32_t c = 0) {
    uint64_t h = (uint64_t{pid} * 0x9E3779B97F4A7C15ull) ^ (uint64_t{a} * 0xC2B2AE3D27D4EB4Full) ^
                 (uint64_t{b} * 0x165667B19E3779F9ull) ^ (uint64_t{c} * 0xFF51AFD7ED558CCDull) ^
                 uint64_t(kind);
    h ^= h >> 31;
    const CacheSlot& slot = stage_cache[h & (kStageCacheSize - 1)];
    if (slot.stage != kNone && slot.key.pid == pid && slot.key.a == a && slot.key.b == b && slot.key.c == c &&
        slot.key.kind == kind) [[likely]]
      return stages[slot.stage];
    return StageMiss(StageKey{kind, pid, a, b, c}, h & (kStageCacheSize - 1));
  }
  // Out of line: keeps the hit path above small enough to inline into every record loop.
  [[gnu::noinline]] Staging& StageMiss(const StageKey& k, size_t slot_index) {
    CacheSlot& slot = stage_cache[slot_index];
    auto [it, inserted] = stage_index.try_emplace(k, static_cast<uint32_t>(stages.size()));
    if (inserted) {
      stages.emplace_back();
      stages.back().key = k;
    }
    slot.key = k;
    slot.stage = it->second;
    return stages[slot.stage];
  }

  void Push(Staging& s, Timestamp start, Timestamp end, StringId name, uint32_t ref) {
    if (end < start) {
      ++negative_durations;
      end = start;
    }
    if (s.n == s.start.size()) s.Grow();
    const uint32_t i = s.n++;
    s.start[i] = start;
    s.end[i] = end;
    s.name[i] = name;
    s.ref[i] = ref;
    ++events;
  }
  void PushGpu(Staging& s, Timestamp start, Timestamp end, StringId name, uint32_t ref, uint32_t corr) {
    if (!s.has_aux) {  // tolerate a mix (annotations never set aux): earlier events get 0
      s.has_aux = true;
      s.aux.assign(s.start.size(), 0);
    }
    Push(s, start, end, name, ref);
    s.aux[s.n - 1] = corr;
  }
  void PushArgs(Staging& s, StringId args) {
    if (args != 0) s.args.emplace_back(s.n - 1, args);
  }

  // Field by field: std::array's operator== goes through memcmp calls, this is the per-kernel hot path.
  static bool SameConfig(const LaunchConfig& a, const KernelRecord& b) {
    return a.name == b.name && a.grid[0] == b.grid[0] && a.grid[1] == b.grid[1] && a.grid[2] == b.grid[2] &&
           a.block[0] == b.block[0] && a.block[1] == b.block[1] && a.block[2] == b.block[2] &&
           a.cluster[0] == b.cluster[0] && a.cluster[1] == b.cluster[1] && a.cluster[2] == b.cluster[2] &&
           a.registers_per_thread == b.registers_per_thread &&
           a.static_shared_bytes == b.static_shared_bytes &&
           a.dynamic_shared_bytes == b.dynamic_shared_bytes &&
           a.local_bytes_per_thread == b.local_bytes_per_thread && a.graph_id == b.graph_id &&
           a.graph_node_id == b.graph_node_id && a.launch_type == b.launch_type;
  }

  uint32_t InternConfig(const KernelRecord& r) {
    if (r.name < last_config_by_name.size()) {
      uint32_t last = last_config_by_name[r.name];
      if (last != kNone && SameConfig(m->launch_configs[last], r)) return last;
    }
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
    if (r.name < (1u << 24) && last_config_by_name.size() <= r.name)
      last_config_by_name.resize(r.name + 1, kNone);
    std::string key;
    auto app = [&key](const auto& v) { key.append(reinterpret_cast<const char*>(&v), sizeof(v)); };
    app(c.name), app(c.grid), app(c.block), app(c.cluster), app(c.registers_per_thread);
    app(c.static_shared_bytes), app(c.dynamic_shared_bytes), app(c.local_bytes_per_thread), app(c.graph_id);
    app(c.graph_node_id), app(c.launch_type);
    auto [it, inserted] =
        config_map.try_emplace(std::move(key), static_cast<uint32_t>(m->launch_configs.size()));
    if (inserted) m->launch_configs.push_back(c);
    if (r.name < last_config_by_name.size()) last_config_by_name[r.name] = it->second;
    return it->second;
  }

  void AddKernel(const KernelRecord& r, StringId args) {
    Staging& s = Stage(TrackKind::kGpuStream, r.pid, r.device_id, r.context_id, r.stream_id);
    PushGpu(s, r.start, r.end, r.name, MakeRef(EventKind::kKernel, InternConfig(r)), r.correlation_id);
    PushArgs(s, args);
  }
  void AddMemcpy(const MemcpyRecord& r, StringId args, StringId name) {
    MemcpyInfo i{r.bytes, r.peer_device_id, r.graph_id, r.copy_kind, r.src_kind, r.dst_kind, r.is_async};
    uint32_t id = memcpy_interner.Intern(&m->memcpys, i, i.bytes, i.peer_device_id, i.graph_id, i.copy_kind,
                                         i.src_kind, i.dst_kind, i.is_async);
    Staging& s = Stage(TrackKind::kGpuStream, r.pid, r.device_id, r.context_id, r.stream_id);
    PushGpu(s, r.start, r.end, name, MakeRef(EventKind::kMemcpy, id), r.correlation_id);
    PushArgs(s, args);
  }
  void AddMemset(const MemsetRecord& r, StringId args, StringId name) {
    MemsetInfo i{r.bytes, r.value, r.graph_id, r.memory_kind, r.is_async};
    uint32_t id =
        memset_interner.Intern(&m->memsets, i, i.bytes, i.value, i.graph_id, i.memory_kind, i.is_async);
    Staging& s = Stage(TrackKind::kGpuStream, r.pid, r.device_id, r.context_id, r.stream_id);
    PushGpu(s, r.start, r.end, name, MakeRef(EventKind::kMemset, id), r.correlation_id);
    PushArgs(s, args);
  }
  void AddApi(const ApiCallRecord& r, StringId args) {
    Staging& s = Stage(TrackKind::kThreadApi, r.pid, r.tid);
    Push(s, r.start, r.end, r.name, r.correlation_id);
    if (r.return_code != 0) s.ret.emplace_back(s.n - 1, r.return_code);
    PushArgs(s, args);
  }

  // Names for activity without a name string of its own ("Memcpy HtoD", "Memset"). They live in their own id
  // space while building (.gtrace string chunks may still arrive for any id) and are appended at Finish.
  static constexpr StringId kSyntheticBase = 0x80000000u;
  std::vector<std::string> synthetic;
  std::unordered_map<std::string, StringId> synthetic_ids;
  StringId SyntheticName(const std::string& text) {
    auto [it, inserted] = synthetic_ids.try_emplace(text, kSyntheticBase + StringId(synthetic.size()));
    if (inserted) synthetic.push_back(text);
    return it->second;
  }
  // Per-record names from a one-byte kind: looked up once per kind, not built and hashed per record.
  std::array<StringId, 256> memcpy_names{}, sync_names{};  // 0 = not yet named
  StringId MemcpyNameId(uint8_t copy_kind) {
    StringId& id = memcpy_names[copy_kind];
    if (id == 0) id = SyntheticName(std::string("Memcpy ") + CopyKindName(copy_kind));
    return id;
  }
  StringId SyncNameId(uint8_t sync_kind) {
    StringId& id = sync_names[sync_kind];
    if (id == 0) id = SyntheticName(std::string("Sync: ") + SyncKindName(sync_kind));
    return id;
  }
  const std::string& S(StringId id) const {
    if (id >= kSyntheticBase && id - kSyntheticBase < synthetic.size()) return synthetic[id - kSyntheticBase];
    return m->Str(id);
  }
  void AppendSyntheticStrings() {
    if (synthetic.empty()) return;
    const StringId base = static_cast<StringId>(m->strings.size());
    auto remap = [&](StringId& id) {
      if (id >= kSyntheticBase && id - kSyntheticBase < synthetic.size()) id = base + (id - kSyntheticBase);
    };
    for (auto& s : synthetic) m->strings.push_back(std::move(s));
    for (Lane& l : m->lanes)
      for (StringId& n : l.name) remap(n);
    for (CounterTrack& c : m->counters) remap(c.name), remap(c.unit);
    synthetic.clear();
    synthetic_ids.clear();
  }

  std::unique_ptr<TraceModel> Finish();
  void BuildTracks();
  void PackLanes(Staging& s, TrackId track_id);
  void GatherOneLane(Staging& s, const std::vector<uint32_t>& perm, TrackId track_id, int64_t* first,
                     int64_t* last);
  void BuildCounters();
  void ResolveFlows();
  void Summarize();
  EventId EnclosingEvent(TrackId t, Timestamp ts) const;
  TrackId FindTrack(TrackKind kind, uint32_t pid, uint32_t a, uint32_t b, uint32_t c) const;
  void BuildMemoryCounters();
  int64_t SortIndex(uint32_t pid) const {
    auto it = process_sort.find(pid);
    return it != process_sort.end() ? it->second : 0;
  }
  std::map<std::tuple<int, uint32_t, uint32_t, uint32_t, uint32_t>, TrackId> track_lookup;
  std::vector<bool> is_memory_counter;
};

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] TraceSink entry points
// -----------------------------------------------------------------------------------------------------------------

ModelBuilder::ModelBuilder() : impl_(std::make_unique<Impl>()) {}
ModelBuilder::~ModelBuilder() = default;

void ModelBuilder::OnMetadata(const TraceMetadata& m) {
  impl_->m->metadata = m;
}

void ModelBuilder::OnStrings(StringId first_id, std::span<const std::string_view> strings) {
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
  for (const auto& k : r) impl_->AddKernel(k, 0);
}

void ModelBuilder::OnMemcpys(std::span<const MemcpyRecord> r) {
  for (const auto& c : r) impl_->AddMemcpy(c, 0, impl_->MemcpyNameId(c.copy_kind));
}
void ModelBuilder::OnMemsets(std::span<const MemsetRecord> r) {
  StringId name = r.empty() ? 0 : impl_->SyntheticName("Memset");
  for (const auto& c : r) impl_->AddMemset(c, 0, name);
}
void ModelBuilder::OnApiCalls(std::span<const ApiCallRecord> r) {
  for (const auto& a : r) impl_->AddApi(a, 0);
}

void ModelBuilder::OnNvtx(std::span<const NvtxRecord> r) {
  for (const auto& n : r) {
    NvtxInfo i{n.domain, n.category, n.color, n.payload, n.payload_kind, n.flags};
    uint32_t id = impl_->nvtx_interner.Intern(&impl_->m->nvtx, i, i.domain, i.category, i.color, i.payload,
                                              i.payload_kind, i.flags);
    Staging& s = impl_->Stage(TrackKind::kThreadRanges, n.pid, n.tid);
    impl_->Push(s, n.start, (n.flags & kNvtxMark) ? n.start : n.end, n.message,
                MakeRef(EventKind::kNvtx, id));
  }
}

void ModelBuilder::OnSyncs(std::span<const SyncRecord> r) {
  for (const auto& y : r) {
    SyncInfo i{y.device_id, y.context_id, y.stream_id, y.correlation_id, y.event_id, y.sync_kind};
    uint32_t id = impl_->sync_interner.Intern(&impl_->m->syncs, i, i.device_id, i.context_id, i.stream_id,
                                              i.correlation_id, i.event_id, i.sync_kind);
    Staging& s = impl_->Stage(TrackKind::kThreadSync, y.pid, y.tid);
    StringId name = impl_->SyncNameId(y.sync_kind);
    impl_->Push(s, y.start, y.end, name, MakeRef(EventKind::kSync, id));
  }
}

void ModelBuilder::OnMemory(std::span<const MemoryRecord> r) {
  for (const auto& x : r) {
    int64_t b = static_cast<int64_t>(std::min<uint64_t>(x.bytes, INT64_MAX / 4));
    impl_->memory[{x.pid, x.device_id}].push_back({x.timestamp, x.op == uint8_t(MemoryOp::kFree) ? -b : b});
  }
}

void ModelBuilder::OnOverheads(std::span<const OverheadRecord> r) {
  for (const auto& o : r) {
    Staging& s = impl_->Stage(TrackKind::kThreadSync, o.pid, o.tid);
    impl_->Push(s, o.start, o.end, o.kind, MakeRef(EventKind::kOverhead, 0));
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
        impl_->m->counters.back().name = impl_->SyntheticName("Counter " + std::to_string(s.counter_id));
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

void ModelBuilder::OnLoss(std::span<const LossRecord> r) {
  for (const auto& l : r)
    impl_->m->losses.push_back({impl_->m->Str(l.name), l.severity, l.pid, l.count, impl_->m->Str(l.detail)});
}

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Importer entry points
// -----------------------------------------------------------------------------------------------------------------

StringId ModelBuilder::Intern(std::string_view text) {
  if (text.empty()) return 0;
  auto& im = *impl_;
  auto it = im.interned.find(std::string(text));
  if (it != im.interned.end()) return it->second;
  StringId id = static_cast<StringId>(im.m->strings.size());
  im.m->strings.emplace_back(text);
  im.interned.emplace(std::string(text), id);
  return id;
}

void ModelBuilder::AddHostSlice(const HostSliceRecord& r) {
  EventKind kind = r.kind == EventKind::kInstant ? EventKind::kInstant : EventKind::kHostOp;
  Staging& s = impl_->Stage(TrackKind::kThreadRanges, r.pid, r.tid);
  impl_->Push(s, r.start, kind == EventKind::kInstant ? r.start : r.end, r.name, MakeRef(kind, r.category));
  impl_->PushArgs(s, r.args);
}

void ModelBuilder::AddGpuAnnotation(const GpuAnnotationRecord& r) {
  Staging& s = impl_->Stage(TrackKind::kGpuAnnotations, r.pid, r.device_id, 0, r.stream_id);
  impl_->Push(s, r.start, r.end, r.name, MakeRef(EventKind::kAnnotation, 0));
  impl_->PushArgs(s, r.args);
}

void ModelBuilder::AddKernel(const KernelRecord& r, StringId args) {
  impl_->AddKernel(r, args);
}
void ModelBuilder::AddMemcpy(const MemcpyRecord& r, StringId args) {
  impl_->AddMemcpy(r, args, impl_->MemcpyNameId(r.copy_kind));
}
void ModelBuilder::AddMemset(const MemsetRecord& r, StringId args) {
  impl_->AddMemset(r, args, impl_->SyntheticName("Memset"));
}
void ModelBuilder::AddApiCall(const ApiCallRecord& r, StringId args) {
  impl_->AddApi(r, args);
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
  return impl_->events;
}

std::unique_ptr<TraceModel> ModelBuilder::Finish() {
  return impl_->Finish();
}

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Finish: track order
// -----------------------------------------------------------------------------------------------------------------

static std::string ThreadLabel(const std::string& name, uint32_t tid) {
  if (name.empty()) return "Thread " + std::to_string(tid);
  return name + " (" + std::to_string(tid) + ")";
}

void ModelBuilder::Impl::BuildTracks() {
  TraceModel& M = *m;
  // Names from records, then importer metadata (which wins: it is what the user's tool showed).
  std::map<uint32_t, std::string> pname;
  for (const auto& p : M.processes)
    if (p.name != 0) pname[p.pid] = M.Str(p.name);
  for (const auto& [pid, n] : process_names) pname[pid] = n;
  std::map<std::pair<uint32_t, uint32_t>, std::string> tname;
  for (const auto& t : M.threads)
    if (t.name != 0) tname[{t.pid, t.tid}] = M.Str(t.name);
  for (const auto& [k, n] : thread_names) tname[k] = n;
  std::map<uint32_t, std::string> dname;
  for (const auto& d : M.devices)
    if (d.name != 0 && !dname.count(d.device_id)) dname[d.device_id] = M.Str(d.name);
  std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>, const StreamRecord*> srec;
  for (const auto& s : M.streams) srec[{s.pid, s.device_id, s.context_id, s.stream_id}] = &s;

  // Sort order: host processes (sort index, pid) -> threads (sort index, main thread first, tid) -> ranges,
  // API, sync; then GPUs (device) -> streams (pid, context, stream) each followed by its annotations;
  // counters last.
  struct Order {
    int section;  // 0 host, 1 gpu, 2 counters
    int64_t s0;
    uint32_t g, s1;
    int64_t s2;
    uint32_t s3, s4, s5;
    int sub;
    auto tie() const { return std::tie(section, s0, g, s1, s2, s3, s4, s5, sub); }
  };
  std::vector<std::pair<Order, uint32_t>> order;
  std::map<uint32_t, std::set<uint32_t>> pids_per_device;
  for (const auto& s : stages)
    if (s.key.kind == TrackKind::kGpuStream || s.key.kind == TrackKind::kGpuAnnotations)
      pids_per_device[s.key.a].insert(s.key.pid);
  for (uint32_t i = 0; i < stages.size(); ++i) {
    const StageKey& k = stages[i].key;
    Order o{};
    switch (k.kind) {
      case TrackKind::kThreadRanges:
      case TrackKind::kThreadApi:
      case TrackKind::kThreadSync: {
        auto ps = process_sort.find(k.pid);
        auto ts = thread_sort.find({k.pid, k.a});
        int sub = k.kind == TrackKind::kThreadRanges ? 0 : k.kind == TrackKind::kThreadApi ? 1 : 2;
        o = {0,
             ps != process_sort.end() ? ps->second : 0,
             k.pid,
             0,
             ts != thread_sort.end() ? ts->second : 0,
             k.a == k.pid ? 0u : 1u,
             k.a,
             0,
             sub};
        break;
      }
      case TrackKind::kGpuStream:
      case TrackKind::kGpuAnnotations:
        o = {1, 0, k.a, 0, 0, k.pid, k.b, k.c, k.kind == TrackKind::kGpuStream ? 0 : 1};
        break;
      case TrackKind::kCounter:
        break;
    }
    order.push_back({o, i});
  }
  std::sort(order.begin(), order.end(), [](const auto& x, const auto& y) {
    if (x.first.tie() != y.first.tie()) return x.first.tie() < y.first.tie();
    return x.second < y.second;
  });

  std::map<std::string, GroupId> group_by_key;
  auto group = [&](GroupKind kind, const std::string& key, const std::string& name, uint32_t pid,
                   uint32_t dev) -> GroupId {
    auto [it, inserted] = group_by_key.try_emplace(key, static_cast<GroupId>(M.groups.size()));
    if (inserted) {
      TrackGroup g;
      g.kind = kind;
      g.key = key;
      g.name = name;
      g.pid = pid;
      g.device_id = dev;
      M.groups.push_back(std::move(g));
    }
    return it->second;
  };
  auto process_group = [&](uint32_t pid) {
    auto it = pname.find(pid);
    std::string name = it != pname.end() && !it->second.empty()
                           ? it->second + " (pid " + std::to_string(pid) + ")"
                           : "Process " + std::to_string(pid);
    return group(GroupKind::kProcess, "p" + std::to_string(pid), name, pid, kNone);
  };
  auto gpu_group = [&](uint32_t dev) {
    auto it = dname.find(dev);
    std::string name = "GPU " + std::to_string(dev) + (it != dname.end() ? ": " + it->second : "");
    return group(GroupKind::kGpu, "g" + std::to_string(dev), name, 0, dev);
  };

  for (const auto& [o, si] : order) {
    Staging& s = stages[si];
    const StageKey& k = s.key;
    Track t;
    t.kind = k.kind;
    t.pid = k.pid;
    if (k.kind == TrackKind::kGpuStream || k.kind == TrackKind::kGpuAnnotations) {
      t.device_id = k.a;
      t.context_id = k.b;
      t.stream_id = k.c;
      t.group = gpu_group(k.a);
      std::string sname = "Stream " + std::to_string(k.c);
      auto sr = srec.find({k.pid, k.a, k.b, k.c});
      if (sr != srec.end()) {
        if (sr->second->is_default) sname += " (default)";
        if (sr->second->name != 0) sname += " " + M.Str(sr->second->name);
      }
      if (pids_per_device[k.a].size() > 1) sname += " · pid " + std::to_string(k.pid);
      if (k.kind == TrackKind::kGpuAnnotations) sname += " · annotations";
      t.name = sname;
      t.key = "g" + std::to_string(k.a) + "/p" + std::to_string(k.pid) + "/c" + std::to_string(k.b) + "/s" +
              std::to_string(k.c) + (k.kind == TrackKind::kGpuAnnotations ? "/ann" : "");
    } else {
      t.tid = k.a;
      t.group = process_group(k.pid);
      auto tn = tname.find({k.pid, k.a});
      std::string label = ThreadLabel(tn != tname.end() ? tn->second : std::string(), k.a);
      const char* what = k.kind == TrackKind::kThreadApi    ? "CUDA API"
                         : k.kind == TrackKind::kThreadSync ? "Sync & overhead"
                                                            : "Ranges";
      t.name = label + " · " + what;
      t.key = "p" + std::to_string(k.pid) + "/t" + std::to_string(k.a) + "/" +
              (k.kind == TrackKind::kThreadApi    ? "api"
               : k.kind == TrackKind::kThreadSync ? "sync"
                                                  : "ranges");
      t.default_collapsed = k.kind == TrackKind::kThreadSync;
    }
    TrackId id = static_cast<TrackId>(M.tracks.size());
    M.groups[t.group].tracks.push_back(id);
    track_lookup[{int(k.kind), k.pid, k.a, k.b, k.c}] = id;
    M.tracks.push_back(std::move(t));
    PackLanes(s, id);
    s = Staging();  // free the staging columns as soon as the lanes own the events
  }

  // Counters: device-bound ones join their GPU group, process-bound ones their process, the rest "Counters".
  BuildMemoryCounters();
  std::vector<uint32_t> corder(M.counters.size());
  std::iota(corder.begin(), corder.end(), 0u);
  std::stable_sort(corder.begin(), corder.end(), [&](uint32_t x, uint32_t y) {
    const CounterTrack &a = M.counters[x], &b = M.counters[y];
    auto ka = std::make_tuple(a.device_id != kNone ? 0 : a.pid != 0 ? 1 : 2, a.device_id, a.pid, a.source_id);
    auto kb = std::make_tuple(b.device_id != kNone ? 0 : b.pid != 0 ? 1 : 2, b.device_id, b.pid, b.source_id);
    return ka < kb;
  });
  for (uint32_t ci : corder) {
    CounterTrack& c = M.counters[ci];
    Track t;
    t.kind = TrackKind::kCounter;
    t.pid = c.pid;
    t.device_id = c.device_id;
    t.counter = ci;
    if (c.device_id != kNone)
      t.group = gpu_group(c.device_id);
    else if (c.pid != 0)
      t.group = process_group(c.pid);
    else
      t.group = group(GroupKind::kCounters, "c", "Counters", 0, kNone);
    t.name = S(c.name);
    if (t.name.empty()) t.name = "Counter " + std::to_string(c.source_id);
    if (c.unit != 0 && !S(c.unit).empty()) t.name += " (" + S(c.unit) + ")";
    t.key = ci < is_memory_counter.size() && is_memory_counter[ci]
                ? "m/p" + std::to_string(c.pid) + "/g" + std::to_string(c.device_id)
                : "c/" + std::to_string(c.source_id);
    t.event_count = 0;
    if (!c.time.empty()) {
      t.first_ns = c.time.front();
      t.last_ns = c.time.back();
    }
    c.track = static_cast<TrackId>(M.tracks.size());
    M.groups[t.group].tracks.push_back(c.track);
    M.tracks.push_back(std::move(t));
  }
  // Groups in display order: processes, GPUs, counters (creation order above follows the track order, except
  // for groups first created by counters).
  std::vector<GroupId> gorder(M.groups.size());
  std::iota(gorder.begin(), gorder.end(), 0u);
  std::stable_sort(gorder.begin(), gorder.end(), [&](GroupId x, GroupId y) {
    const TrackGroup &a = M.groups[x], &b = M.groups[y];
    auto ka = std::make_tuple(int(a.kind), a.kind == GroupKind::kProcess ? SortIndex(a.pid) : 0, a.pid,
                              a.device_id);
    auto kb = std::make_tuple(int(b.kind), b.kind == GroupKind::kProcess ? SortIndex(b.pid) : 0, b.pid,
                              b.device_id);
    return ka < kb;
  });
  std::vector<GroupId> remap(M.groups.size());
  std::vector<TrackGroup> sorted;
  for (GroupId i = 0; i < gorder.size(); ++i) {
    remap[gorder[i]] = i;
    sorted.push_back(std::move(M.groups[gorder[i]]));
  }
  M.groups = std::move(sorted);
  for (auto& t : M.tracks) t.group = remap[t.group];
}

}  // namespace gt::viewer

namespace gt::viewer {

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Finish: lanes
// -----------------------------------------------------------------------------------------------------------------

void ModelBuilder::Impl::GatherOneLane(Staging& s, const std::vector<uint32_t>& perm, TrackId track_id,
                                       int64_t* first, int64_t* last) {
  const uint32_t n = s.n;
  Lane lane;
  lane.track = track_id;
  lane.start.resize(n), lane.dur.resize(n), lane.name.resize(n), lane.ref.resize(n);
  if (s.has_aux) lane.aux.resize(n);
  const bool sparse = !s.ret.empty() || !s.args.empty();
  std::vector<uint32_t> new_index;
  if (sparse) new_index.assign(n, kNone);
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (uint32_t k = 0; k < n; ++k) {
    const uint32_t i = perm[k];
    const int64_t st = s.start[i], en = s.end[i], d = en - st;
    lane.start[k] = st;
    if (d >= int64_t{kDurOverflow}) {
      lane.dur[k] = kDurOverflow;
      lane.long_dur.emplace_back(k, d);  // k ascends: sorted by index
    } else {
      lane.dur[k] = static_cast<uint32_t>(d);
    }
    lane.name[k] = s.name[i];
    lane.ref[k] = s.ref[i];
    if (s.has_aux) lane.aux[k] = s.aux[i];
    if (sparse) new_index[i] = k;
    lo = std::min(lo, st);
    hi = std::max(hi, en);
  }
  auto by_index = [](const auto& a, const auto& b) { return a.first < b.first; };
  for (const auto& [i, v] : s.ret) lane.return_code.emplace_back(new_index[i], v);
  for (const auto& [i, v] : s.args) lane.args.emplace_back(new_index[i], v);
  std::sort(lane.return_code.begin(), lane.return_code.end(), by_index);
  std::sort(lane.args.begin(), lane.args.end(), by_index);
  m->lanes.push_back(std::move(lane));
  *first = std::min(*first, lo);
  *last = std::max(*last, hi);
}

void ModelBuilder::Impl::PackLanes(Staging& s, TrackId track_id) {
  TraceModel& M = *m;
  Track& t = M.tracks[track_id];
  t.first_lane = static_cast<LaneId>(M.lanes.size());
  s.Trim();
  const uint32_t n = s.n;
  if (n == 0) return;

  bool sorted = true, disjoint = true;
  for (uint32_t i = 1; i < n; ++i) {
    if (s.start[i] < s.start[i - 1] || (s.start[i] == s.start[i - 1] && s.end[i] > s.end[i - 1])) {
      sorted = false;
      break;
    }
    if (s.end[i - 1] > s.start[i]) disjoint = false;
  }

  auto fill_dur = [](Lane& lane, int64_t start, int64_t end, uint32_t index) {
    int64_t d = end - start;
    if (d >= int64_t{kDurOverflow}) {
      lane.dur.push_back(kDurOverflow);
      lane.long_dur.emplace_back(index, d);
    } else {
      lane.dur.push_back(static_cast<uint32_t>(d));
    }
  };

  int64_t first = INT64_MAX, last = INT64_MIN;
  if (sorted && disjoint) {  // the common case (GPU streams, API rows): one lane, columns move, no copy
    Lane lane;
    lane.track = track_id;
    lane.dur.reserve(n);
    for (uint32_t i = 0; i < n; ++i) fill_dur(lane, s.start[i], s.end[i], i);
    first = s.start.front();
    last = s.end.back();
    std::vector<int64_t>().swap(s.end);
    lane.start = std::move(s.start);
    lane.name = std::move(s.name);
    lane.ref = std::move(s.ref);
    lane.aux = std::move(s.aux);
    lane.return_code = std::move(s.ret);
    lane.args = std::move(s.args);
    M.lanes.push_back(std::move(lane));
    t.lane_count = 1;
  } else {
    // Order by (start, longer first, arrival). Records arrive in per-kind chunks (kernels, then memcpys of an
    // earlier span, ...), so a stream's staging is a few long sorted runs: merge them (sequential reads)
    // rather than sort indices (random reads); fall back to a sort when the runs are many.
    auto before = [&s](uint32_t a, uint32_t b) {
      if (s.start[a] != s.start[b]) return s.start[a] < s.start[b];
      if (s.end[a] != s.end[b]) return s.end[a] > s.end[b];
      return a < b;
    };
    std::vector<uint32_t> perm;
    if (sorted) {
      perm.resize(n);
      std::iota(perm.begin(), perm.end(), 0u);
    } else {
      std::vector<uint32_t> run_start{0};
      for (uint32_t i = 1; i < n && run_start.size() <= 256; ++i)
        if (before(i, i - 1)) run_start.push_back(i);
      if (run_start.size() <= 256) {
        run_start.push_back(n);
        perm.reserve(n);
        using Head = std::pair<uint32_t, uint32_t>;  // (next index, run end)
        auto later = [&before](const Head& x, const Head& y) { return before(y.first, x.first); };
        std::priority_queue<Head, std::vector<Head>, decltype(later)> heads(later);
        for (size_t r = 0; r + 1 < run_start.size(); ++r) heads.push({run_start[r], run_start[r + 1]});
        while (!heads.empty()) {
          Head h = heads.top();
          heads.pop();
          // Take from this run while it stays ahead of the next run's head.
          const bool alone = heads.empty();
          do {
            perm.push_back(h.first++);
          } while (h.first < h.second && (alone || before(h.first, heads.top().first)));
          if (h.first < h.second) heads.push(h);
        }
      } else {
        perm.resize(n);
        std::iota(perm.begin(), perm.end(), 0u);
        std::sort(perm.begin(), perm.end(), before);
      }
    }
    // Depth: the lowest lane free at the event's start (first fit). For properly nested input this is the
    // nesting depth (every ancestor's lane is still busy, every deeper lane is free); partially overlapping
    // input packs compactly instead of stacking ever deeper. Lanes never overlap by construction.
    bool merged_disjoint = true;
    for (uint32_t k = 1; k < n && merged_disjoint; ++k)
      if (s.end[perm[k - 1]] > s.start[perm[k]]) merged_disjoint = false;
    if (merged_disjoint) {
      // Interleaved runs that don't overlap (a stream's kernels and copies): one lane, gathered in merge
      // order through sized columns (no per-event push_back, no depth array).
      GatherOneLane(s, perm, track_id, &first, &last);
      t.lane_count = 1;
    } else {
      std::vector<uint32_t> depth(n, 0);
      uint32_t max_depth = 0;
      {
        using Busy = std::pair<int64_t, uint32_t>;  // (end, lane)
        std::priority_queue<Busy, std::vector<Busy>, std::greater<Busy>> busy;
        std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<uint32_t>> free_lanes;
        uint32_t lanes_used = 0;
        for (uint32_t i : perm) {
          while (!busy.empty() && busy.top().first <= s.start[i])
            free_lanes.push(busy.top().second), busy.pop();
          uint32_t d;
          if (!free_lanes.empty()) {
            d = free_lanes.top();
            free_lanes.pop();
          } else if (lanes_used < kMaxDepth) {
            d = lanes_used++;
          } else {
            depth[i] = kNone;
            ++too_deep;
            continue;
          }
          depth[i] = d;
          max_depth = std::max(max_depth, d);
          busy.push({s.end[i], d});
        }
      }
      const uint32_t lanes = max_depth + 1;
      std::vector<uint32_t> counts(lanes, 0);
      for (uint32_t i = 0; i < n; ++i)
        if (depth[i] != kNone) ++counts[depth[i]];
      const LaneId base = static_cast<LaneId>(M.lanes.size());
      M.lanes.resize(base + lanes);
      for (uint32_t d = 0; d < lanes; ++d) {
        Lane& l = M.lanes[base + d];
        l.track = track_id;
        l.depth = d;
        l.start.reserve(counts[d]);
        l.dur.reserve(counts[d]);
        l.name.reserve(counts[d]);
        l.ref.reserve(counts[d]);
        if (s.has_aux) l.aux.reserve(counts[d]);
      }
      // Sparse attributes follow their event: staging index -> (lane, index).
      std::vector<uint32_t> new_index;
      const bool sparse = !s.ret.empty() || !s.args.empty();
      if (sparse) new_index.assign(n, kNone);
      for (uint32_t i : perm) {
        if (depth[i] == kNone) continue;
        Lane& l = M.lanes[base + depth[i]];
        uint32_t idx = l.size();
        if (sparse) new_index[i] = idx;
        l.start.push_back(s.start[i]);
        fill_dur(l, s.start[i], s.end[i], idx);
        l.name.push_back(s.name[i]);
        l.ref.push_back(s.ref[i]);
        if (s.has_aux) l.aux.push_back(s.aux[i]);
        first = std::min(first, s.start[i]);
        last = std::max(last, s.end[i]);
      }
      for (const auto& [i, v] : s.ret)
        if (depth[i] != kNone) M.lanes[base + depth[i]].return_code.emplace_back(new_index[i], v);
      for (const auto& [i, v] : s.args)
        if (depth[i] != kNone) M.lanes[base + depth[i]].args.emplace_back(new_index[i], v);
      for (uint32_t d = 0; d < lanes; ++d) {
        Lane& l = M.lanes[base + d];
        auto by_index = [](const auto& a, const auto& b) { return a.first < b.first; };
        std::sort(l.return_code.begin(), l.return_code.end(), by_index);
        std::sort(l.args.begin(), l.args.end(), by_index);
        std::sort(l.long_dur.begin(), l.long_dur.end(), by_index);
      }
      t.lane_count = lanes;
    }
  }
  uint64_t count = 0;
  for (uint32_t d = 0; d < t.lane_count; ++d) {
    Lane& l = M.lanes[t.first_lane + d];
    // Staging columns grew by doubling: give the slack back, the model lives as long as the view.
    l.start.shrink_to_fit(), l.dur.shrink_to_fit(), l.name.shrink_to_fit(), l.ref.shrink_to_fit();
    l.aux.shrink_to_fit(), l.return_code.shrink_to_fit(), l.args.shrink_to_fit(), l.long_dur.shrink_to_fit();
    BuildLaneLod(l);
    count += l.size();
    // Correlation ids ascending (GPU lanes: aux; API lanes: ref) lets FlowPartner binary-search.
    const auto& corr = t.kind == TrackKind::kThreadApi ? l.ref : l.aux;
    for (uint32_t i = 1; i < corr.size() && l.aux_sorted; ++i)
      if (corr[i] < corr[i - 1]) l.aux_sorted = false;
  }
  t.event_count = count;
  t.first_ns = first == INT64_MAX ? 0 : first;
  t.last_ns = last == INT64_MIN ? 0 : last;
}

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Finish: counters, flows, summaries
// -----------------------------------------------------------------------------------------------------------------

// Alloc/free records become a "Device memory" counter per (process, device): the running sum of live bytes.
void ModelBuilder::Impl::BuildMemoryCounters() {
  for (auto& [key, deltas] : memory) {
    std::stable_sort(deltas.begin(), deltas.end(),
                     [](const MemoryDelta& a, const MemoryDelta& b) { return a.t < b.t; });
    CounterTrack c;
    c.pid = key.first;
    c.device_id = key.second;
    c.name = SyntheticName(m->processes.size() > 1 || memory.size() > 1
                               ? "Device memory · pid " + std::to_string(key.first)
                               : std::string("Device memory"));
    c.unit = SyntheticName("bytes");
    int64_t live = 0;
    for (const auto& d : deltas) {
      live += d.delta;
      if (!c.time.empty() && c.time.back() == d.t) {
        c.value.back() = double(live);
      } else {
        c.time.push_back(d.t);
        c.value.push_back(double(live));
      }
    }
    is_memory_counter.resize(m->counters.size() + 1, false);
    is_memory_counter[m->counters.size()] = true;
    m->counters.push_back(std::move(c));
  }
  memory.clear();
}

static void BuildPyramid(CounterTrack& c) {
  // Samples arrive in time order per counter almost always; sort (stably, keeping the last value of a tie
  // last) only when they don't.
  if (!std::is_sorted(c.time.begin(), c.time.end())) {
    std::vector<uint32_t> perm(c.time.size());
    std::iota(perm.begin(), perm.end(), 0u);
    std::stable_sort(perm.begin(), perm.end(), [&](uint32_t a, uint32_t b) { return c.time[a] < c.time[b]; });
    std::vector<int64_t> t(perm.size());
    std::vector<double> v(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) t[i] = c.time[perm[i]], v[i] = c.value[perm[i]];
    c.time = std::move(t);
    c.value = std::move(v);
  }
  c.levels.clear();
  if (c.value.empty()) return;
  c.min = c.max = c.value[0];
  for (double v : c.value) c.min = std::min(c.min, v), c.max = std::max(c.max, v);
  std::vector<std::pair<double, double>> level;
  const size_t n = c.value.size();
  for (size_t j = 0; j < n; j += kCounterFanout) {
    double lo = c.value[j], hi = c.value[j];
    for (size_t i = j; i < std::min(n, j + kCounterFanout); ++i)
      lo = std::min(lo, c.value[i]), hi = std::max(hi, c.value[i]);
    level.emplace_back(lo, hi);
  }
  while (level.size() > 1) {
    std::vector<std::pair<double, double>> up;
    for (size_t j = 0; j < level.size(); j += kCounterFanout) {
      auto mm = level[j];
      for (size_t i = j; i < std::min(level.size(), j + kCounterFanout); ++i)
        mm.first = std::min(mm.first, level[i].first), mm.second = std::max(mm.second, level[i].second);
      up.push_back(mm);
    }
    c.levels.push_back(std::move(level));
    level = std::move(up);
  }
  c.levels.push_back(std::move(level));
}

TrackId ModelBuilder::Impl::FindTrack(TrackKind kind, uint32_t pid, uint32_t a, uint32_t b,
                                      uint32_t c) const {
  auto it = track_lookup.find({int(kind), pid, a, b, c});
  return it == track_lookup.end() ? kNone : it->second;
}

// The deepest event of track t that contains ts (start <= ts <= end).
EventId ModelBuilder::Impl::EnclosingEvent(TrackId t, Timestamp ts) const {
  if (t == kNone) return {};
  const Track& tr = m->tracks[t];
  EventId best;
  for (uint32_t d = 0; d < tr.lane_count; ++d) {
    const Lane& l = m->lanes[tr.first_lane + d];
    auto it = std::upper_bound(l.start.begin(), l.start.end(), ts);
    if (it == l.start.begin()) continue;
    uint32_t i = static_cast<uint32_t>(it - l.start.begin() - 1);
    if (l.End(i) >= ts) best = {tr.first_lane + d, i};
  }
  return best;
}

void ModelBuilder::Impl::ResolveFlows() {
  TraceModel& M = *m;
  uint64_t unresolved = 0;
  for (const auto& f : flow_endpoints) {
    EventId from =
        EnclosingEvent(FindTrack(TrackKind::kThreadRanges, f.from_pid, f.from_tid, 0, 0), f.from_ts);
    if (!from.valid())
      from = EnclosingEvent(FindTrack(TrackKind::kThreadApi, f.from_pid, f.from_tid, 0, 0), f.from_ts);
    EventId to;
    if (f.to_gpu) {
      for (const auto& [key, id] : track_lookup)
        if (std::get<0>(key) == int(TrackKind::kGpuStream) && std::get<1>(key) == f.to_pid &&
            std::get<2>(key) == f.to_device && std::get<4>(key) == f.to_tid) {
          to = EnclosingEvent(id, f.to_ts);
          if (to.valid()) break;
        }
    } else {
      to = EnclosingEvent(FindTrack(TrackKind::kThreadRanges, f.to_pid, f.to_tid, 0, 0), f.to_ts);
      if (!to.valid())
        to = EnclosingEvent(FindTrack(TrackKind::kThreadApi, f.to_pid, f.to_tid, 0, 0), f.to_ts);
    }
    if (from.valid() && to.valid())
      M.flows.push_back({from, to});
    else
      ++unresolved;
  }
  flow_endpoints.clear();
  // FlowRecords between correlation-carrying kinds are implied by correlation ids (FlowPartner); others refer
  // to external ids the viewer does not index yet: counted, not silently dropped.
  for (const auto& f : flow_records) {
    auto corr_kind = [](uint16_t k) {
      return k == uint16_t(RecordKind::kApiCall) || k == uint16_t(RecordKind::kKernel) ||
             k == uint16_t(RecordKind::kMemcpy) || k == uint16_t(RecordKind::kMemset);
    };
    if (!(corr_kind(f.src_kind) && corr_kind(f.dst_kind))) ++unresolved;
  }
  flow_records.clear();
  std::sort(M.flows.begin(), M.flows.end(),
            [](const Flow& a, const Flow& b) { return std::tie(a.from, a.to) < std::tie(b.from, b.to); });
  if (unresolved)
    builder_losses["flows_unresolved"] = {"flows_unresolved", uint8_t(Severity::kInfo), 0, unresolved,
                                          "flow arrows whose endpoints match no event"};
}

void ModelBuilder::Impl::Summarize() {
  TraceModel& M = *m;
  M.name_counts.assign(M.strings.size(), 0);
  int64_t first = INT64_MAX, last = INT64_MIN;
  uint64_t events_total = 0;
  for (const Lane& l : M.lanes) {
    for (StringId n : l.name)
      if (n < M.name_counts.size()) ++M.name_counts[n];
    events_total += l.size();
  }
  for (const Track& t : M.tracks) {
    bool has = t.kind == TrackKind::kCounter ? M.counters[t.counter].time.size() > 0 : t.event_count > 0;
    if (!has) continue;
    first = std::min(first, t.first_ns);
    last = std::max(last, t.last_ns);
  }
  M.event_count = events_total;
  M.sample_count = 0;
  for (const auto& c : M.counters) M.sample_count += c.time.size();
  M.first_ns = first == INT64_MAX ? 0 : first;
  M.last_ns = last == INT64_MIN ? 0 : last;

  // Per device: union of GPU activity over all its stream lanes (k-way merge by start), gaps between.
  std::map<uint32_t, std::vector<LaneId>> dev_lanes;
  std::map<uint32_t, GroupId> dev_group;
  for (TrackId ti = 0; ti < M.tracks.size(); ++ti) {
    const Track& t = M.tracks[ti];
    if (t.kind != TrackKind::kGpuStream) continue;
    dev_group[t.device_id] = t.group;
    for (uint32_t d = 0; d < t.lane_count; ++d) dev_lanes[t.device_id].push_back(t.first_lane + d);
  }
  for (auto& [dev, lanes] : dev_lanes) {
    DeviceSummary s;
    s.device_id = dev;
    s.group = dev_group[dev];
    s.name = M.groups[s.group].name;
    // K-way merge by start over the device's lanes. Streams take turns every few events, so the next head is
    // found by a linear scan (a GPU has a handful of busy streams; no heap churn per event).
    std::vector<uint32_t> pos(lanes.size(), 0);
    std::vector<int64_t> head(lanes.size(), INT64_MAX);
    for (uint32_t i = 0; i < lanes.size(); ++i)
      if (M.lanes[lanes[i]].size()) head[i] = M.lanes[lanes[i]].start[0];
    bool any = false;
    int64_t cur_s = 0, cur_e = 0;
    using Gap = std::pair<int64_t, int64_t>;                            // (length, start)
    std::priority_queue<Gap, std::vector<Gap>, std::greater<Gap>> top;  // smallest of the kept on top
    auto close_gap = [&](int64_t gs, int64_t ge) {
      if (ge <= gs) return;
      if (top.size() < 256)
        top.push({ge - gs, gs});
      else if (ge - gs > top.top().first)
        top.pop(), top.push({ge - gs, gs});
    };
    while (true) {
      // One scan for the smallest head (first lane on ties) and the second-smallest: consume lane li up to
      // it.
      uint32_t li = 0;
      int64_t limit = INT64_MAX;
      for (uint32_t i = 1; i < head.size(); ++i) {
        if (head[i] < head[li]) {
          limit = head[li];
          li = i;
        } else {
          limit = std::min(limit, head[i]);
        }
      }
      if (head[li] == INT64_MAX) break;
      const Lane& l = M.lanes[lanes[li]];
      uint32_t& p = pos[li];
      do {
        const uint32_t k = l.ref[p] >> kRefKindShift;
        if (k == uint32_t(EventKind::kKernel))
          ++s.kernel_count;
        else if (k == uint32_t(EventKind::kMemcpy))
          ++s.memcpy_count;
        else if (k == uint32_t(EventKind::kMemset))
          ++s.memset_count;
        int64_t es = l.start[p], ee = l.End(p);
        if (!any) {
          any = true;
          cur_s = es, cur_e = ee;
          s.first_ns = es;
        } else if (es > cur_e) {
          s.busy_ns += cur_e - cur_s;
          close_gap(cur_e, es);
          cur_s = es, cur_e = ee;
        } else {
          cur_e = std::max(cur_e, ee);
        }
        ++p;
      } while (p < l.size() && l.start[p] <= limit);
      head[li] = p < l.size() ? l.start[p] : INT64_MAX;
    }
    if (!any) continue;
    s.busy_ns += cur_e - cur_s;
    s.last_ns = cur_e;
    while (!top.empty()) {
      s.largest_gaps.push_back({top.top().second, top.top().second + top.top().first});
      top.pop();
    }
    std::reverse(s.largest_gaps.begin(), s.largest_gaps.end());
    M.device_summaries.push_back(std::move(s));
  }
}

std::unique_ptr<TraceModel> ModelBuilder::Impl::Finish() {
  BuildTracks();
  AppendSyntheticStrings();
  stages.clear();
  stage_index.clear();
  for (auto& c : m->counters) BuildPyramid(c);
  ResolveFlows();
  Summarize();
  if (negative_durations)
    builder_losses["negative_duration"] = {"negative_duration", uint8_t(Severity::kWarning), 0,
                                           negative_durations,
                                           "events ending before they start; shown with zero duration"};
  if (too_deep)
    builder_losses["nesting_too_deep"] = {
        "nesting_too_deep", uint8_t(Severity::kDataLoss), 0, too_deep,
        "events nested deeper than 1024 levels were not placed on the timeline"};
  for (auto& [name, l] : builder_losses) m->losses.push_back(std::move(l));
  builder_losses.clear();
  interned.clear();
  config_map.clear();
  return std::move(m);
}

}  // namespace gt::viewer

// Internal to the viewer core: the builder's staging structures, shared by builder.cc (records in, chunk
// merging), builder_finish.cc (lanes out) and load.cc (the parallel load).
//
// [SECTION] Stage keys and pieces
// [SECTION] Interned tables
// [SECTION] Router: records -> pieces
// [SECTION] ModelBuilder::Impl
//
// Records reach a Router, which appends each timeline event to the piece of its track (stage) in lane format
// (start, duration, name, ref, aux) and interns detail structs into its tables. The builder's own router
// writes global ids into one growing piece per track (records fed to the builder directly, the importers,
// single-threaded loads). A parallel load gives every chunk a router of its own with local tables, on a
// worker thread; the builder merges chunks in file order (local ids -> global, pieces appended to their
// track's list), so the model is the same as if one router had seen every record. Finish() turns each
// track's pieces into lanes: a concatenation when they are already in order, otherwise a merge of sorted
// pieces, then depth lanes when events nest.
#pragma once

#include <array>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gt/viewer/builder.h"
#include "gt/viewer/load.h"
#include "parallel.h"
#include "text_index.h"

// The per-record paths (StageFor, Push) must inline into the record loops: GCC keeps Push out of line, and
// its call (a dozen registers saved and restored) cost a third of its instructions.
#if defined(__GNUC__) || defined(__clang__)
#define GT_ROUTE_INLINE inline __attribute__((always_inline))
#else
#define GT_ROUTE_INLINE inline
#endif

namespace gt::viewer::detail {

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Stage keys and pieces
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

// How finely Finish splits long work into tasks (tests set them small to exercise the splits).
struct Tuning {
  static inline uint64_t merge_partition_events = 1u << 19;  // a track's merge: events per time partition
  static inline uint64_t device_slice_events = 1u << 16;     // a device summary: events per time slice
};

// Names for activity without a name string of its own ("Memcpy HtoD", "Memset") live in their own id space
// while building (.gtrace string chunks may still arrive for any id) and are appended to the string table at
// Finish.
inline constexpr StringId kSyntheticBase = 0x80000000u;
// Deeper nesting is pathological input; counted as loss, not a lane each.
inline constexpr uint32_t kMaxDepth = 1024;

// A chunk's local ids -> the builder's.
struct ChunkMaps {
  std::array<std::vector<uint32_t>, size_t(EventKind::kCount)> ref;  // payload by event kind; empty = same
  std::vector<uint32_t> synthetic;  // local synthetic name index -> the builder's
};

// Events of one track in arrival order, in lane format. Columns are sized to their capacity and written by
// index; `n` are valid. The order summary is kept as events arrive, so Finish knows without a pass whether a
// track's pieces simply concatenate into a lane.
struct Piece {
  uint32_t n = 0;
  Column<int64_t> start;
  Column<uint32_t> dur, name, ref, aux;                // aux only when has_aux
  std::vector<std::pair<uint32_t, int64_t>> long_dur;  // (index, duration) for dur == kDurOverflow, sorted
  std::vector<std::pair<uint32_t, int32_t>> ret;       // sorted by index
  std::vector<std::pair<uint32_t, StringId>> args;     // sorted by index
  bool has_aux = false;
  bool synthetic_names = false;  // some name is kSyntheticBase + a synthetic index
  // Order summary: sorted by (start, longer first); consecutive events disjoint; correlation ids (API: ref,
  // GPU: aux) ascending.
  bool sorted = true, disjoint = true, corr_sorted = true;
  int64_t first_start = 0, first_end = 0, last_start = 0, last_end = 0;
  uint32_t first_corr = 0, last_corr = 0;
  std::shared_ptr<const ChunkMaps> maps;  // null: ids are the builder's already

  int64_t End(uint32_t i) const;  // start + duration (searches long_dur for long ones)
  void Reserve(uint32_t cap) {
    start.resize(cap), dur.resize(cap), name.resize(cap), ref.resize(cap);
    if (has_aux) aux.resize(cap);
  }
  // Capacity for at least one more event: `growth_halves` / 2 times the events, at least `hint`.
  void Grow(uint32_t hint, uint32_t growth_halves) {
    const uint64_t grown = std::max<uint64_t>(uint64_t{n} * growth_halves / 2, uint64_t{n} + 1);
    Reserve(uint32_t(std::min<uint64_t>(std::max<uint64_t>(hint, grown), kNone - 1)));
  }
  void Free() { *this = Piece(); }
};

// Appends src's events to dst with src's ids made the builder's (synthetic names stay synthetic), keeping
// dst's order summary (builder_finish.cc).
void AppendPiece(const Piece& src, TrackKind kind, Piece* dst);

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Interned tables
// ---------------------------------------------------------------------------------------------------------------

// Interns small POD-like detail structs by their field bytes (fields appended explicitly: no padding in
// keys). Every key of one interner has the same length, so keys live back to back in one buffer and an
// open-addressing table of indices finds them: no string allocation and no node per record.
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

// Detail tables and synthetic names: the model's (the builder's own router) or one chunk's (merged later).
// Ids are table indices in first-use order, so merging chunks in file order gives the ids one router would.
struct Tables {
  std::vector<LaunchConfig> configs;
  std::vector<MemcpyInfo> memcpys;
  std::vector<MemsetInfo> memsets;
  std::vector<NvtxInfo> nvtx;
  std::vector<SyncInfo> syncs;
  std::vector<std::string> synthetic;

  uint32_t Config(const KernelRecord& r);
  uint32_t Config(const LaunchConfig& c);
  uint32_t Memcpy(const MemcpyInfo& i) {
    return memcpy_index_.Intern(&memcpys, i, i.bytes, i.peer_device_id, i.graph_id, i.copy_kind, i.src_kind,
                                i.dst_kind, i.is_async);
  }
  uint32_t Memset(const MemsetInfo& i) {
    return memset_index_.Intern(&memsets, i, i.bytes, i.value, i.graph_id, i.memory_kind, i.is_async);
  }
  uint32_t Nvtx(const NvtxInfo& i) {
    return nvtx_index_.Intern(&nvtx, i, i.domain, i.category, i.color, i.payload, i.payload_kind, i.flags);
  }
  uint32_t Sync(const SyncInfo& i) {
    return sync_index_.Intern(&syncs, i, i.device_id, i.context_id, i.stream_id, i.correlation_id, i.event_id,
                              i.sync_kind);
  }
  // Synthetic names as kSyntheticBase + index.
  StringId Synthetic(const std::string& text);
  StringId MemcpyName(uint8_t copy_kind);
  StringId SyncName(uint8_t sync_kind);
  StringId MemsetName();

 private:
  Interner<LaunchConfig> config_index_;
  Interner<MemcpyInfo> memcpy_index_;
  Interner<MemsetInfo> memset_index_;
  Interner<NvtxInfo> nvtx_index_;
  Interner<SyncInfo> sync_index_;
  // Kernels of one name almost always share one configuration: the last one per name hash is tried first.
  std::array<uint32_t, 1024> config_cache_{};  // config id + 1
  std::unordered_map<std::string, StringId> synthetic_ids_;
  std::array<StringId, 256> memcpy_names_{}, sync_names_{};  // 0 = not named yet
  StringId memset_name_ = 0;
};

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Router: records -> pieces
// ---------------------------------------------------------------------------------------------------------------

// Routes timeline records to the piece of their track. A chunk's router (capture_cold) also keeps the chunk's
// other records (processes, counters, losses, ...) to be replayed into the builder in file order.
class Router final : public TraceSink {
 public:
  Router();                         // a chunk's: tables of its own
  explicit Router(Tables* tables);  // the builder's: the model's tables
  Router(Router&&) noexcept = default;
  Router& operator=(Router&&) noexcept = default;

  // Capacity hint for new pieces: the chunk's record count.
  void SetHint(uint32_t records) { hint_ = std::max<uint32_t>(64, records / 4); }

  void OnKernels(std::span<const KernelRecord> r) override;
  void OnMemcpys(std::span<const MemcpyRecord> r) override;
  void OnMemsets(std::span<const MemsetRecord> r) override;
  void OnApiCalls(std::span<const ApiCallRecord> r) override;
  void OnNvtx(std::span<const NvtxRecord> r) override;
  void OnSyncs(std::span<const SyncRecord> r) override;
  void OnOverheads(std::span<const OverheadRecord> r) override;
  // Everything else: kept for Replay (chunk routers only).
  void OnProcesses(std::span<const ProcessRecord> r) override { Capture(r); }
  void OnThreads(std::span<const ThreadRecord> r) override { Capture(r); }
  void OnDevices(std::span<const DeviceRecord> r) override { Capture(r); }
  void OnContexts(std::span<const ContextRecord> r) override { Capture(r); }
  void OnStreams(std::span<const StreamRecord> r) override { Capture(r); }
  void OnMemory(std::span<const MemoryRecord> r) override { Capture(r); }
  void OnCounterDescriptors(std::span<const CounterDescriptor> r) override { Capture(r); }
  void OnCounterSamples(std::span<const CounterSample> r) override { Capture(r); }
  void OnKernelMetrics(std::span<const KernelMetricRecord> r) override { Capture(r); }
  void OnStallSamples(std::span<const StallSample> r) override { Capture(r); }
  void OnFlows(std::span<const FlowRecord> r) override { Capture(r); }
  void OnLoss(std::span<const LossRecord> r) override { Capture(r); }
  void OnNvtxArgs(std::span<const NvtxArgRecord> r) override { Capture(r); }
  void OnNcclColls(std::span<const NcclCollRecord> r) override { Capture(r); }
  void OnNcclChannels(std::span<const NcclChannelRecord> r) override { Capture(r); }
  void OnCpuStackNodes(std::span<const CpuStackNodeRecord> r) override { Capture(r); }
  void OnCpuSamples(std::span<const CpuSampleRecord> r) override { Capture(r); }
  void Replay(TraceSink& to) const;

  void Kernel(const KernelRecord& r, StringId args);
  void Memcpy(const MemcpyRecord& r, StringId args);
  void Memset(const MemsetRecord& r, StringId args);
  void Api(const ApiCallRecord& r, StringId args);
  void HostSlice(const HostSliceRecord& r);
  void GpuAnnotation(const GpuAnnotationRecord& r);

  // A track's events so far: `piece` takes new events; `earlier` pieces came before it, closed when they
  // reached the piece size limit or when arrival order broke (so pieces stay sorted and Finish merges them
  // instead of sorting).
  struct Stage {
    StageKey key;
    Piece piece;
    std::vector<Piece> earlier;
  };
  std::vector<Stage> stages;  // first-use order
  Tables* tables = nullptr;
  std::unique_ptr<Tables> own_tables;
  uint64_t events = 0;
  uint64_t negative_durations = 0;
  bool empty() const { return stages.empty() && cold_.empty(); }
  void ClearStages();
  // Piece sizes: at most `max_events` (0: unbounded; then pieces also never split on disorder, so that a
  // track is one array: the least memory) and grown by `growth_halves` / 2 times at a time.
  void SetPieceLimits(uint32_t max_events, uint32_t growth_halves) {
    max_piece_ = max_events, growth_halves_ = growth_halves;
  }

 private:
  GT_ROUTE_INLINE Stage& StageFor(TrackKind kind, uint32_t pid, uint32_t a, uint32_t b = 0, uint32_t c = 0) {
    uint64_t h = (uint64_t{pid} * 0x9E3779B97F4A7C15ull) ^ (uint64_t{a} * 0xC2B2AE3D27D4EB4Full) ^
                 (uint64_t{b} * 0x165667B19E3779F9ull) ^ (uint64_t{c} * 0xFF51AFD7ED558CCDull) ^
                 uint64_t(kind);
    h ^= h >> 31;
    const CacheSlot& slot = cache_[h & (kCacheSize - 1)];
    if (slot.stage != kNone && slot.key.pid == pid && slot.key.a == a && slot.key.b == b && slot.key.c == c &&
        slot.key.kind == kind) [[likely]]
      return stages[slot.stage];
    return StageMiss(StageKey{kind, pid, a, b, c}, h & (kCacheSize - 1));
  }
  Stage& StageMiss(const StageKey& k, size_t slot_index);
  // Out of line: room for one more event in s.piece, closing it first when full or when the event would
  // break its order.
  void Room(Stage& s, bool in_order);

  GT_ROUTE_INLINE void Push(Stage& s, Timestamp start, Timestamp end, StringId name, uint32_t ref,
                            uint32_t corr) {
    if (end < start) [[unlikely]] {
      ++negative_durations;
      end = start;
    }
    Piece& p = s.piece;
    const bool in_order = !(start < p.last_start || (start == p.last_start && end > p.last_end));
    if (p.n == p.start.size() || (!in_order && p.sorted && max_piece_ && p.n >= kSplitMin)) [[unlikely]]
      Room(s, in_order || p.n == 0);
    const uint32_t i = p.n++;
    p.start[i] = start;
    const int64_t d = end - start;
    if (d >= int64_t{kDurOverflow}) [[unlikely]] {
      p.dur[i] = kDurOverflow;
      p.long_dur.emplace_back(i, d);
    } else {
      p.dur[i] = static_cast<uint32_t>(d);
    }
    p.name[i] = name;
    p.ref[i] = ref;
    if (i == 0) [[unlikely]] {
      p.first_start = start, p.first_end = end, p.first_corr = corr;
    } else {
      // Branch-free: these hold for almost every event of a real trace.
      p.sorted &= in_order;
      p.disjoint &= p.last_end <= start;
      p.corr_sorted &= p.last_corr <= corr;
    }
    p.last_start = start, p.last_end = end, p.last_corr = corr;
    ++events;
  }
  GT_ROUTE_INLINE void PushGpu(Stage& s, Timestamp start, Timestamp end, StringId name, uint32_t ref,
                               uint32_t corr) {
    Piece& p = s.piece;
    if (!p.has_aux) [[unlikely]] {  // tolerate a mix (annotations never set aux): earlier events get 0
      p.has_aux = true;
      p.aux.resize(p.start.size());
      std::fill(p.aux.begin(), p.aux.begin() + p.n, 0u);
    }
    Push(s, start, end, name, ref, corr);
    p.aux[p.n - 1] = corr;
  }
  static void PushArgs(Piece& p, StringId args) {
    if (args != 0) p.args.emplace_back(p.n - 1, args);
  }
  template <typename R>
  void Capture(std::span<const R> r);

  struct CacheSlot {
    StageKey key{TrackKind::kCounter, kNone, kNone, kNone, kNone};
    uint32_t stage = kNone;
  };
  static constexpr size_t kCacheSize = 64;
  std::array<CacheSlot, kCacheSize> cache_;
  std::unordered_map<StageKey, uint32_t, StageKeyHash> index_;
  static constexpr uint32_t kSplitMin = 4096;  // smaller pieces are sorted at Finish rather than split
  // A piece's first block, before hint_: a trace of tens of thousands of one-event threads held hint_ (256)
  // events of staging for each, 5 KB a thread (1.4 GB for a 12 MB JSON of 200 K threads).
  static constexpr uint32_t kFirstBlock = 8;
  uint32_t hint_ = 256;
  uint32_t max_piece_ = 1u << 20, growth_halves_ = 4;
  uint16_t cold_type_ = 0;
  std::vector<uint8_t> cold_;
  uint64_t cold_count_ = 0;
};

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] ModelBuilder::Impl
// ---------------------------------------------------------------------------------------------------------------

struct MemoryDelta {
  int64_t t;
  int64_t delta;
};

// A track's pieces in arrival order.
struct Stage {
  StageKey key;
  std::vector<Piece> pieces;
};

// Adds the wall time of a scope to a LoadTimings field (when there is one).
class ScopedTime {
 public:
  explicit ScopedTime(double* into) : into_(into), t0_(std::chrono::steady_clock::now()) {}
  ~ScopedTime() {
    if (into_) *into_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  }

 private:
  double* into_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace gt::viewer::detail

namespace gt::viewer {

class ModelBuilder::Impl {
 public:
  explicit Impl(ModelBuilder* self) : self(self) { SetCompact(sizeof(void*) < 8); }
  // Compact: one array per track, grown as events arrive (the least memory, wasm32's 4 GiB); otherwise
  // pieces of at most 1 M events, so that nothing is copied twice (no reallocation of long arrays, no shrink:
  // Finish copies each piece once into a lane sized once).
  void SetCompact(bool compact) {
    compact_ = compact;
    // Compact grows by 2x, in 32-bit builds by 1.5x: less slack, smaller blocks to find in a fragmented heap.
    direct.SetPieceLimits(compact ? 0 : 1u << 20, compact ? (sizeof(void*) < 8 ? 3 : 4) : 8);
  }
  bool compact() const { return compact_; }

  ModelBuilder* self;
  std::unique_ptr<TraceModel> m = std::make_unique<TraceModel>();
  detail::Tables tables;              // the model's detail tables and synthetic names
  detail::Router direct{&tables};     // records fed to the builder itself
  std::vector<detail::Stage> stages;  // first-use order
  std::unordered_map<detail::StageKey, uint32_t, detail::StageKeyHash> stage_index;
  uint64_t merged_events = 0;       // events of merged chunks (direct.events counts the rest)
  uint64_t negative_durations = 0;  // of merged chunks
  uint64_t too_deep = 0;

  detail::StringIndex interned;  // importer strings
  struct ArgsSlot {
    uint64_t hash = 0;
    StringId id = 0;
  };
  std::vector<ArgsSlot> args_cache = std::vector<ArgsSlot>(4096);  // InternArgs
  std::map<uint32_t, uint32_t> counter_by_id;                      // trace counter_id -> counters index
  std::map<std::pair<uint32_t, uint32_t>, std::vector<detail::MemoryDelta>> memory;  // (pid, device)
  std::vector<FlowRecord> flow_records;
  std::vector<CpuStackNodeRecord> cpu_nodes;  // as recorded (per-process node ids), made global at Finish
  std::vector<CpuSampleRecord> cpu_samples;
  std::vector<FlowEndpoints> flow_endpoints;
  std::map<uint32_t, std::string> process_names;
  std::map<std::pair<uint32_t, uint32_t>, std::string> thread_names;
  std::map<uint32_t, int64_t> process_sort;
  std::map<std::pair<uint32_t, uint32_t>, int64_t> thread_sort;
  std::map<std::string, LossStat> builder_losses;  // merged by name

  // ---- parallel load (load.cc) ----
  // Merges one chunk's router (decoded on any thread) in file order: its other records are replayed, its
  // tables interned into the model's, its pieces appended to their tracks.
  void MergeChunk(detail::Router&& chunk);
  // Appends every track's pieces into its first one (ids made global), in parallel over tracks: bounds the
  // memory a load holds to one copy of the events plus growth (wasm's 4 GiB).
  void Consolidate(detail::ThreadPool& pool);
  uint64_t events() const { return merged_events + direct.events; }
  // Tracks so far: the direct router's stages are merged into `stages` only at times (FlushDirect), so the
  // larger of the two counts them (exact for a load on one thread), plus the counter tracks.
  size_t tracks() const { return std::max(stages.size(), direct.stages.size()) + m->counters.size(); }

  // ---- Finish (builder_finish.cc) ----
  std::unique_ptr<TraceModel> Finish(detail::ThreadPool* pool);
  LoadTimings* timings = nullptr;  // Finish's phases are added here when set

 private:
  void FlushDirect();
  detail::Stage& StageOf(const detail::StageKey& k);
  // builder_finish.cc
  void BuildMemoryCounters();
  void AppendSyntheticStrings();
  void BuildTracks(detail::ThreadPool& pool);
  void BuildLanes(detail::ThreadPool& pool, const std::vector<uint32_t>& stage_order);
  void BuildCounterTracks();
  void ResolveFlows();
  void BuildCpuSamples();
  void Summarize(detail::ThreadPool& pool);
  EventId EnclosingEvent(TrackId t, Timestamp ts) const;
  TrackId FindTrack(TrackKind kind, uint32_t pid, uint32_t a, uint32_t b, uint32_t c) const;
  int64_t SortIndex(uint32_t pid) const {
    auto it = process_sort.find(pid);
    return it != process_sort.end() ? it->second : 0;
  }
  const std::string& S(StringId id) const {
    if (id >= detail::kSyntheticBase && id - detail::kSyntheticBase < tables.synthetic.size())
      return tables.synthetic[id - detail::kSyntheticBase];
    return m->Str(id);
  }
  std::map<std::tuple<int, uint32_t, uint32_t, uint32_t, uint32_t>, TrackId> track_lookup;
  std::vector<bool> is_memory_counter;
  StringId synthetic_final_base_ = 0;  // final id of synthetic index 0 (after AppendSyntheticStrings)
  bool compact_ = false;
  bool record_strings_ = false;  // the strings came as a trace's tables (OnStrings), not interned here
  friend class ModelBuilder;
};

}  // namespace gt::viewer

namespace gt::viewer::detail {
// Level-of-detail pyramid in two steps, so that long lanes build level 0 on several threads (lod.cc).
void BuildLaneLodLevel0(const Lane& lane, Column<LodMax>* level0, size_t first_block, size_t last_block);
void BuildLaneLodUpper(Lane& lane, Column<LodMax> level0);
}  // namespace gt::viewer::detail

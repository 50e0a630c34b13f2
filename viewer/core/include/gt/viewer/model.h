// The viewer's compact, read-only trace model (Tracy-style): timeline events live in lanes, structs of arrays
// with 32-bit names and refs, so 100 M events fit in about 2 GB and a frame touches only what is on screen.
//
// [SECTION] Ids and kinds
// [SECTION] Kind-specific detail tables (interned)
// [SECTION] Lanes: the hot event storage
// [SECTION] Tracks and groups
// [SECTION] Counters
// [SECTION] TraceModel
//
// Layout:
//   TraceModel
//     groups[]  (process, GPU, counters)  -> tracks[] (thread API row, thread ranges, GPU stream, counter,
//     ...) tracks[]  -> lanes[first_lane .. first_lane + lane_count)  (lane d = depth d, events never overlap
//     in a lane) lanes[]   -> start[], dur[], name[], ref[], aux[]  (one entry per event, sorted by start)
//
// Identity: a build is deterministic (same bytes -> same groups, tracks, lanes and event indices), so EventId
// and the string keys below are stable across loads of the same file (share links rely on it).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "gt/model.h"
#include "gt/reader.h"
#include "gt/sat_math.h"
#include "gt/status.h"

namespace gt::viewer {

struct CollectiveReport;  // gt/viewer/collectives.h

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Ids and kinds
// ---------------------------------------------------------------------------------------------------------------

using LaneId = uint32_t;
using TrackId = uint32_t;
using GroupId = uint32_t;

// One timeline event: lane + index within the lane (index order = start order).
struct EventId {
  LaneId lane = kNone;
  uint32_t index = kNone;
  bool valid() const { return lane != kNone; }
  friend bool operator==(const EventId&, const EventId&) = default;
  friend auto operator<=>(const EventId&, const EventId&) = default;
};

// What an event is. Stored in the top 4 bits of Lane::ref except on kThreadApi lanes, whose ref is the
// correlation id (every event there is kApi).
enum class EventKind : uint8_t {
  kKernel = 0,    // ref payload: LaunchConfig index; aux: correlation id
  kMemcpy = 1,    // ref payload: MemcpyInfo index; aux: correlation id
  kMemset = 2,    // ref payload: MemsetInfo index; aux: correlation id
  kApi = 3,       // CUDA runtime/driver call; ref: correlation id (whole 32 bits)
  kNvtx = 4,      // ref payload: NvtxInfo index
  kSync = 5,      // ref payload: SyncInfo index
  kOverhead = 6,  // profiler overhead; ref payload unused
  kHostOp =
      7,  // imported host slice (cpu_op, python_function, Chrome "X"/"B..E"); ref payload: category string
  kAnnotation =
      8,  // imported user annotation on a GPU stream (gpu_user_annotation); ref payload: category string
  kInstant = 9,  // zero-duration marker (Chrome "i"); ref payload: category string
  kCount = 10,
};
const char* EventKindName(EventKind k);

inline constexpr uint32_t kRefKindShift = 28;
inline constexpr uint32_t kRefPayloadMask = (1u << kRefKindShift) - 1;
inline constexpr uint32_t MakeRef(EventKind k, uint32_t payload) {
  return (static_cast<uint32_t>(k) << kRefKindShift) | (payload & kRefPayloadMask);
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Kind-specific detail tables (interned)
// ---------------------------------------------------------------------------------------------------------------

// Interned per distinct launch configuration: grid/block/registers rarely vary per kernel name, so kernels
// cost no per-instance detail memory beyond the correlation id.
struct LaunchConfig {
  StringId name = 0;
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint32_t, 3> block{1, 1, 1};
  std::array<uint32_t, 3> cluster{0, 0, 0};
  uint32_t registers_per_thread = 0;
  uint32_t static_shared_bytes = 0;
  uint32_t dynamic_shared_bytes = 0;
  uint32_t local_bytes_per_thread = 0;
  uint32_t graph_id = 0;
  uint64_t graph_node_id = 0;
  uint8_t launch_type = 0;  // gt::LaunchType
  friend bool operator==(const LaunchConfig&, const LaunchConfig&) = default;
};

struct MemcpyInfo {
  uint64_t bytes = 0;
  uint32_t peer_device_id = kNone;
  uint32_t graph_id = 0;
  uint8_t copy_kind = 0;  // gt::CopyKind
  uint8_t src_kind = 0;   // gt::MemoryKind
  uint8_t dst_kind = 0;   // gt::MemoryKind
  uint8_t is_async = 0;
};

struct MemsetInfo {
  uint64_t bytes = 0;
  uint32_t value = 0;
  uint32_t graph_id = 0;
  uint8_t memory_kind = 0;  // gt::MemoryKind
  uint8_t is_async = 0;
};

struct NvtxInfo {
  StringId domain = 0;
  uint32_t category = 0;
  uint32_t color = 0;  // ARGB, valid when flags & kNvtxHasColor
  uint64_t payload = 0;
  uint8_t payload_kind = 0;  // gt::NvtxPayloadKind
  uint8_t flags = 0;         // gt::NvtxFlags
};

struct SyncInfo {
  uint32_t device_id = kNone;
  uint32_t context_id = 0;
  uint32_t stream_id = kNone;
  uint32_t correlation_id = 0;
  uint32_t event_id = kNone;
  uint8_t sync_kind = 0;  // gt::SyncKind
};

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Lanes: the hot event storage
// ---------------------------------------------------------------------------------------------------------------

// Storage of a lane column (model.cc). Long columns are mapped pages of their own (Linux), so growing one
// moves its pages (mremap) instead of copying its events and touching every page twice, and shrinking one
// gives the tail back in place; short ones, and every column elsewhere (wasm), are malloc/realloc blocks.
namespace column_storage {
// While one is open (any thread), long columns made by any thread are file-backed in `dir` (an existing
// folder on a disk with room for the model): for building the index of a trace whose model exceeds memory.
// Reads and writes are as usual; the pages go to disk under memory pressure instead of failing. Linux only;
// elsewhere a no-op.
class SpillScope {
 public:
  explicit SpillScope(const std::string& dir);
  ~SpillScope();
  SpillScope(const SpillScope&) = delete;
  SpillScope& operator=(const SpillScope&) = delete;
};
size_t SpilledColumns();        // file-backed columns alive now
uint64_t SpilledColumnsMade();  // file-backed columns made since the process started
// Why columns could not spill to `dir` (it is not a folder this process may create files in); empty: they
// can.
std::string SpillDirProblem(const std::string& dir);
void* Allocate(size_t bytes);
// `used` leading bytes survive; the block may move.
void* Reallocate(void* p, size_t old_bytes, size_t new_bytes, size_t used);
void Free(void* p, size_t bytes);
}  // namespace column_storage

// A lane column: a vector of trivially copyable values whose resize() leaves new elements uninitialized (they
// are written right after), so the builder sizes a column once and threads fill disjoint parts of it;
// zero-filling hundreds of MB on one thread first would serialize the parallel load. Growth and
// shrink_to_fit reallocate in place where the storage allows (column_storage): the one-thread load grows
// each track's staging arrays by doubling and hands them to the model shrunk. Otherwise like std::vector.
template <typename T>
class Column {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  using value_type = T;
  using size_type = size_t;
  using difference_type = ptrdiff_t;
  using reference = T&;
  using const_reference = const T&;
  using pointer = T*;
  using const_pointer = const T*;
  using iterator = T*;
  using const_iterator = const T*;

  Column() = default;
  explicit Column(size_t n) { resize(n); }
  Column(size_t n, const T& v) { assign(n, v); }
  Column(std::initializer_list<T> v) { assign(v.begin(), v.end()); }
  template <typename It, typename = typename std::iterator_traits<It>::iterator_category>
  Column(It first, It last) {
    assign(first, last);
  }
  Column(const Column& o) { assign(o.begin(), o.end()); }
  Column(Column&& o) noexcept : p_(o.p_), n_(o.n_), cap_(o.cap_), borrowed_(o.borrowed_) {
    o.p_ = nullptr, o.n_ = o.cap_ = 0, o.borrowed_ = false;
  }
  Column& operator=(const Column& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  Column& operator=(Column&& o) noexcept {
    if (this != &o) {
      Release();
      p_ = o.p_, n_ = o.n_, cap_ = o.cap_, borrowed_ = o.borrowed_;
      o.p_ = nullptr, o.n_ = o.cap_ = 0, o.borrowed_ = false;
    }
    return *this;
  }
  ~Column() { Release(); }

  // A read-only view of n values someone else keeps alive: a mapped viewer index (gt/viewer/index.h) hands
  // its lanes to the model this way, so the query code runs on the file's pages without a copy. Reading is
  // as usual; anything that would grow or move a borrowed column is a bug (asserted); copying one makes an
  // owned column.
  static Column Borrow(const T* p, size_t n) {
    Column c;
    c.p_ = const_cast<T*>(p), c.n_ = c.cap_ = n, c.borrowed_ = true;
    return c;
  }
  bool borrowed() const { return borrowed_; }

  size_t size() const { return n_; }
  size_t capacity() const { return cap_; }
  bool empty() const { return n_ == 0; }
  T* data() { return p_; }
  const T* data() const { return p_; }
  T& operator[](size_t i) { return p_[i]; }
  const T& operator[](size_t i) const { return p_[i]; }
  T& front() { return p_[0]; }
  const T& front() const { return p_[0]; }
  T& back() { return p_[n_ - 1]; }
  const T& back() const { return p_[n_ - 1]; }
  T* begin() { return p_; }
  T* end() { return p_ + n_; }
  const T* begin() const { return p_; }
  const T* end() const { return p_ + n_; }
  const T* cbegin() const { return p_; }
  const T* cend() const { return p_ + n_; }

  void reserve(size_t cap) {
    if (cap > cap_) Reallocate(cap);
  }
  void resize(size_t n) {  // new elements uninitialized
    reserve(n);
    n_ = n;
  }
  void resize(size_t n, const T& v) {
    reserve(n);
    for (size_t i = n_; i < n; ++i) p_[i] = v;
    n_ = n;
  }
  void clear() {
    GT_ASSERT(!borrowed_);
    n_ = 0;
  }
  void shrink_to_fit() {
    if (cap_ > n_) Reallocate(n_);
  }
  void push_back(const T& v) {
    const T value = v;  // v may be an element of this column, moved by the growth
    if (n_ == cap_) Grow(n_ + 1);
    p_[n_++] = value;
  }
  template <typename... A>
  T& emplace_back(A&&... a) {
    const T value(std::forward<A>(a)...);
    if (n_ == cap_) Grow(n_ + 1);
    p_[n_] = value;
    return p_[n_++];
  }
  void pop_back() { --n_; }
  void assign(size_t n, const T& v) {
    clear();
    resize(n, v);
  }
  template <typename It>
  void assign(It first, It last) {
    clear();
    insert(end(), first, last);
  }
  template <typename It>
  T* insert(const T* pos, It first, It last) {
    const size_t at = size_t(pos - p_), k = size_t(std::distance(first, last));
    if constexpr (std::is_pointer_v<It> && std::is_same_v<std::remove_cv_t<std::remove_pointer_t<It>>, T>) {
      // A range inside this column would move under the growth or the shift: insert a copy of it.
      if (k > 0 && first >= p_ && first < p_ + n_) {
        const Column copy(first, last);
        return insert(p_ + at, copy.begin(), copy.end());
      }
    }
    if (n_ + k > cap_) Grow(n_ + k);
    if (at < n_) std::memmove(p_ + at + k, p_ + at, (n_ - at) * sizeof(T));
    for (size_t i = 0; i < k; ++i, ++first) p_[at + i] = *first;
    n_ += k;
    return p_ + at;
  }
  T* insert(const T* pos, const T& v) { return insert(pos, &v, &v + 1); }
  T* erase(const T* first, const T* last) {
    GT_ASSERT(!borrowed_);
    const size_t at = size_t(first - p_), k = size_t(last - first);
    if (k > 0) std::memmove(p_ + at, p_ + at + k, (n_ - at - k) * sizeof(T));
    n_ -= k;
    return p_ + at;
  }
  T* erase(const T* pos) { return erase(pos, pos + 1); }
  void swap(Column& o) noexcept {
    std::swap(p_, o.p_), std::swap(n_, o.n_), std::swap(cap_, o.cap_), std::swap(borrowed_, o.borrowed_);
  }
  friend bool operator==(const Column& a, const Column& b) {
    return a.n_ == b.n_ && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  void Grow(size_t need) { Reallocate(std::max(need, cap_ * 2)); }
  void Reallocate(size_t cap) {
    GT_ASSERT(!borrowed_);
    p_ = static_cast<T*>(column_storage::Reallocate(p_, cap_ * sizeof(T), cap * sizeof(T), n_ * sizeof(T)));
    cap_ = cap;
    n_ = std::min(n_, cap);
  }
  void Release() {
    if (p_ && !borrowed_) column_storage::Free(p_, cap_ * sizeof(T));
    p_ = nullptr, n_ = cap_ = 0, borrowed_ = false;
  }
  T* p_ = nullptr;
  size_t n_ = 0, cap_ = 0;
  bool borrowed_ = false;
};

// Per-event bytes in a lane: start 8 + dur 4 + name 4 + ref 4 (+ aux 4 on GPU lanes). Rarely-set attributes
// (durations >= 2^32-1 ns, nonzero API return codes, imported args) live in sparse sorted side tables.
inline constexpr uint32_t kDurOverflow = UINT32_MAX;
inline constexpr uint32_t kLaneLodFanout = 16;

// One block of a lane's LOD pyramid: the largest duration and the largest gap to the predecessor, saturated
// to 32 bits. Plain 8 bytes (first, second as in the pair it was), so a mapped index holds it as it is.
struct LodMax {
  uint32_t first = 0;   // max duration
  uint32_t second = 0;  // max gap
  friend bool operator==(const LodMax&, const LodMax&) = default;
};

struct Lane {
  TrackId track = kNone;
  uint32_t depth = 0;
  Column<int64_t> start;  // ns, ascending; events in a lane never overlap
  Column<uint32_t> dur;   // ns; kDurOverflow -> see long_dur
  Column<StringId> name;
  Column<uint32_t> ref;  // MakeRef(kind, payload), or the correlation id on kThreadApi tracks
  Column<uint32_t> aux;  // GPU lanes: correlation id per event; empty elsewhere
  std::vector<std::pair<uint32_t, int64_t>> long_dur;     // (index, duration) sorted by index
  std::vector<std::pair<uint32_t, int32_t>> return_code;  // (index, code) nonzero API results, sorted
  std::vector<std::pair<uint32_t, StringId>> args;        // (index, "key: value\n..." text) imported fields
  // LOD index (BuildLaneLod): lod[k][b] = (max duration, max gap to the predecessor), saturated to 32 bits,
  // over events [b * F^(k+1), (b+1) * F^(k+1)) with F = kLaneLodFanout. Lets a merged block skip to its end
  // in O(log n) however many events it folds.
  std::vector<Column<LodMax>> lod;
  bool aux_sorted = true;  // correlation ids (aux; ref on kThreadApi lanes) ascending: lookups binary-search

  uint32_t size() const { return static_cast<uint32_t>(start.size()); }
  int64_t Duration(uint32_t i) const;
  int64_t End(uint32_t i) const { return start[i] + Duration(i); }
  int32_t ReturnCode(uint32_t i) const;  // 0 when not recorded
  StringId Args(uint32_t i) const;       // 0 when none
  size_t MemoryBytes() const;            // capacity-based, for the memory benchmark
  size_t LodBytes() const;
};

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Tracks and groups
// ---------------------------------------------------------------------------------------------------------------

enum class TrackKind : uint8_t {
  kThreadApi = 0,       // CUDA runtime calls at depth 0, driver calls they make at depth 1+
  kThreadRanges = 1,    // NVTX ranges and imported host ops, nested by depth
  kThreadSync = 2,      // synchronization records and profiler overhead of a thread
  kGpuStream = 3,       // kernels, memcpy, memset of one stream
  kGpuAnnotations = 4,  // imported GPU-side user annotations of one stream
  kCounter = 5,         // a counter time series (see TraceModel::counters)
};
const char* TrackKindName(TrackKind k);

enum class GroupKind : uint8_t { kProcess = 0, kGpu = 1, kCounters = 2 };

struct Track {
  TrackKind kind = TrackKind::kThreadRanges;
  GroupId group = kNone;
  std::string name;  // "Thread 4242 (python3) · CUDA API", "Stream 7", "GPU utilization (%)"
  std::string key;   // stable identity for view state: "p1234/t5678/api", "g0/p1234/s7", "c/12"
  uint32_t pid = 0;
  uint32_t tid = 0;            // thread tracks
  uint32_t device_id = kNone;  // GPU and device-bound counter tracks
  uint32_t context_id = 0;
  uint32_t stream_id = kNone;
  uint32_t counter = kNone;  // kCounter: index into TraceModel::counters
  LaneId first_lane = 0;
  uint32_t lane_count = 0;  // 0 for counter tracks
  uint64_t event_count = 0;
  int64_t first_ns = 0, last_ns = 0;  // extent of the track's events
  bool default_collapsed = false;
};

struct TrackGroup {
  GroupKind kind = GroupKind::kProcess;
  std::string name;  // "python3 (pid 1234)", "GPU 0: NVIDIA H200", "Counters"
  std::string key;   // "p1234", "g0", "c"
  uint32_t pid = 0;
  uint32_t device_id = kNone;
  std::vector<TrackId> tracks;  // default display order
};

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Counters
// ---------------------------------------------------------------------------------------------------------------

// Samples of one counter, plus a min/max pyramid (branching kCounterFanout) so per-pixel folding is
// O(log n) per pixel column regardless of sample count.
inline constexpr uint32_t kCounterFanout = 16;

struct CounterTrack {
  StringId name = 0;
  StringId unit = 0;
  uint32_t pid = 0;
  uint32_t device_id = kNone;
  uint32_t source_id = 0;  // counter_id from the trace
  TrackId track = kNone;
  std::vector<int64_t> time;  // ascending
  std::vector<double> value;
  // levels[k][j] = (min, max) over samples [j * F^(k+1), (j+1) * F^(k+1))
  std::vector<std::vector<std::pair<double, double>>> levels;
  double min = 0, max = 0;
};

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] TraceModel
// ---------------------------------------------------------------------------------------------------------------

// An explicit flow arrow (FlowRecord, or a Chrome/Kineto flow event), resolved to events at build time.
// Launch -> kernel arrows by correlation id are not stored; FlowPartner() finds them.
struct Flow {
  EventId from;
  EventId to;
};

// Per device (GPU) activity summary computed at build time.
struct DeviceSummary {
  uint32_t device_id = 0;
  GroupId group = kNone;
  std::string name;      // "NVIDIA H200" or "GPU 0"
  int64_t first_ns = 0;  // first GPU activity start
  int64_t last_ns = 0;   // last GPU activity end
  int64_t busy_ns = 0;   // union of kernel/memcpy/memset intervals over all streams
  uint64_t kernel_count = 0;
  uint64_t memcpy_count = 0;
  uint64_t memset_count = 0;
  // The largest idle intervals between first_ns and last_ns (at most 256, longest first).
  std::vector<std::pair<int64_t, int64_t>> largest_gaps;
  int64_t span_ns() const { return SatSub(last_ns, first_ns); }
  int64_t idle_ns() const { return SatSub(span_ns(), busy_ns); }
  double idle_share() const { return last_ns > first_ns ? double(idle_ns()) / double(span_ns()) : 0.0; }
};

enum class SourceFormat : uint8_t {
  kGtrace = 0,
  kChromeJson = 1,
  kKinetoJson = 2,
  kNsysSqlite = 3,
  kNcuCsv = 4
};
const char* SourceFormatName(SourceFormat f);

// What could not be shown: the reader's LoadReport (chunks lost, truncation), the trace's own LossRecords
// (CUPTI drops, ...) and the importer's problems (malformed events skipped, unmatched B/E, ...).
struct LossStat {
  std::string name;      // "chunk_lost", "cupti_dropped_records", "json_events_skipped"
  uint8_t severity = 0;  // gt::Severity
  uint32_t pid = 0;
  uint64_t count = 0;
  std::string detail;
};

// What an event is from its track's kind and its ref column value (TraceModel::Kind without the model: the
// mapped index reads ref through its block cache).
EventKind KindOfRef(TrackKind track, uint32_t ref);

struct TraceModel {
  SourceFormat format = SourceFormat::kGtrace;
  TraceMetadata metadata;
  LoadReport report;  // .gtrace reader report (JSON: bytes_total and problems only)
  std::vector<LossStat> losses;
  std::vector<std::string> problems;  // importer/builder problems, human-readable, first 100

  std::vector<std::string> strings{""};  // index = StringId
  std::vector<uint32_t> name_counts;     // events per StringId (search match counts without a scan)

  std::vector<TrackGroup> groups;  // default display order
  std::vector<Track> tracks;
  std::vector<Lane> lanes;
  std::vector<CounterTrack> counters;
  Column<Flow> flows;  // sorted by `from`

  std::vector<LaunchConfig> launch_configs;
  std::vector<MemcpyInfo> memcpys;
  std::vector<MemsetInfo> memsets;
  std::vector<NvtxInfo> nvtx;
  std::vector<SyncInfo> syncs;

  std::vector<ProcessRecord> processes;
  std::vector<ThreadRecord> threads;
  std::vector<DeviceRecord> devices;
  std::vector<StreamRecord> streams;
  std::vector<DeviceSummary> device_summaries;  // one per device with GPU activity, by device id
  // Per-launch hardware counters and warp-stall bins, as recorded (gt/viewer/analysis.h derives the views).
  std::vector<KernelMetricRecord> kernel_metrics;
  std::vector<StallSample> stall_samples;
  // Decoded NVTX payload fields (NCCL's communicator, message size, ...), sorted by (pid, tid, start):
  // gt/viewer/nvtx_args.h finds a range's.
  std::vector<NvtxArgRecord> nvtx_args;
  // NCCL's profiler plugin (format 1.3): one record per collective / P2P operation, sorted by (pid, start);
  // per-channel GPU times sorted by (pid, comm_hash, func, seq, channel). gt/viewer/collectives.h matches
  // collectives across ranks by them where present.
  std::vector<NcclCollRecord> nccl_colls;
  std::vector<NcclChannelRecord> nccl_channels;
  // Sampled CPU stacks (format 1.4), made global at build: node 0 is "nothing unwound", every other node is
  // one frame called from node_parent (0: outermost); samples sorted by (time, pid, tid).
  // gt/viewer/cpu_samples.h attributes idle gaps and builds flame graphs from them.
  struct CpuSamples {
    std::vector<uint32_t> node_parent{0};
    std::vector<StringId> node_frame{0};
    std::vector<uint8_t> node_kind{0};  // FrameKind
    std::vector<int64_t> ts;
    std::vector<uint32_t> pid, tid, stack;
    std::vector<uint8_t> flags;  // CpuSampleFlags
    size_t size() const { return ts.size(); }
  } cpu;
  // NCCL collectives matched across ranks, computed once at build (null when the trace has none across two or
  // more processes): the Summary, the details of a selected collective and the JSON read it.
  std::shared_ptr<const CollectiveReport> collectives;

  int64_t first_ns = 0, last_ns = 0;  // extent of all events and samples
  // last_ns - first_ns, saturated: an imported trace may span more than int64 nanoseconds can hold.
  int64_t span_ns() const { return SatSub(last_ns, first_ns); }
  uint64_t event_count = 0;   // timeline events (not counter samples)
  uint64_t sample_count = 0;  // counter samples

  const std::string& Str(StringId id) const {
    static const std::string kEmpty;
    return id < strings.size() ? strings[id] : kEmpty;
  }
  EventKind Kind(EventId e) const;  // KindOfRef of the event
  uint32_t Payload(EventId e) const { return lanes[e.lane].ref[e.index] & kRefPayloadMask; }
  int64_t Start(EventId e) const { return lanes[e.lane].start[e.index]; }
  int64_t End(EventId e) const { return lanes[e.lane].End(e.index); }
  StringId Name(EventId e) const { return lanes[e.lane].name[e.index]; }
  const Track& TrackOf(EventId e) const { return tracks[lanes[e.lane].track]; }
  // Correlation id of a kernel/memcpy/memset/API event, 0 otherwise.
  uint32_t CorrelationId(EventId e) const;
  bool IsGpuActivity(EventId e) const;  // kernel, memcpy or memset

  // Stable string identity of an event for share links: "<track key>/<depth>/<index>". Round-trips through
  // FindEventByKey on any load of the same file.
  std::string EventKey(EventId e) const;
  EventId FindEventByKey(std::string_view key) const;
  TrackId FindTrackByKey(std::string_view key) const;

  // All memory the model holds (strings, lanes, tables, counters), for the per-event memory budget.
  size_t MemoryBytes() const;
};

}  // namespace gt::viewer

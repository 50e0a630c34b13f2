// TraceModel accessors, stable keys and memory accounting.
#include "gt/viewer/model.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(__linux__)
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <unordered_map>
#endif

namespace gt::viewer {

const char* EventKindName(EventKind k) {
  switch (k) {
    case EventKind::kKernel:
      return "Kernel";
    case EventKind::kMemcpy:
      return "Memcpy";
    case EventKind::kMemset:
      return "Memset";
    case EventKind::kApi:
      return "CUDA API";
    case EventKind::kNvtx:
      return "NVTX range";
    case EventKind::kSync:
      return "Synchronization";
    case EventKind::kOverhead:
      return "Profiler overhead";
    case EventKind::kHostOp:
      return "Host op";
    case EventKind::kAnnotation:
      return "GPU annotation";
    case EventKind::kInstant:
      return "Instant";
    case EventKind::kCount:
      break;
  }
  return "Unknown";
}

const char* TrackKindName(TrackKind k) {
  switch (k) {
    case TrackKind::kThreadApi:
      return "CUDA API";
    case TrackKind::kThreadRanges:
      return "Ranges";
    case TrackKind::kThreadSync:
      return "Synchronization";
    case TrackKind::kGpuStream:
      return "Stream";
    case TrackKind::kGpuAnnotations:
      return "Annotations";
    case TrackKind::kCounter:
      return "Counter";
  }
  return "Unknown";
}

const char* SourceFormatName(SourceFormat f) {
  switch (f) {
    case SourceFormat::kGtrace:
      return "gtrace";
    case SourceFormat::kChromeJson:
      return "Chrome trace JSON";
    case SourceFormat::kKinetoJson:
      return "PyTorch profiler (Kineto) JSON";
    case SourceFormat::kNcuCsv:
      return "Nsight Compute CSV (ncu --csv --page raw)";
    case SourceFormat::kNsysSqlite:
      return "Nsight Systems SQLite export";
  }
  return "unknown";
}

// ---- Lane
// ------------------------------------------------------------------------------------------------------

template <typename T>
static const T* FindSparse(const std::vector<std::pair<uint32_t, T>>& v, uint32_t i) {
  auto it = std::lower_bound(v.begin(), v.end(), i, [](const auto& p, uint32_t k) { return p.first < k; });
  return it != v.end() && it->first == i ? &it->second : nullptr;
}

int64_t Lane::Duration(uint32_t i) const {
  uint32_t d = dur[i];
  if (d != kDurOverflow) return d;
  const int64_t* l = FindSparse(long_dur, i);
  return l ? *l : int64_t{kDurOverflow};
}

int32_t Lane::ReturnCode(uint32_t i) const {
  const int32_t* r = FindSparse(return_code, i);
  return r ? *r : 0;
}

StringId Lane::Args(uint32_t i) const {
  const StringId* a = FindSparse(args, i);
  return a ? *a : 0;
}

template <typename V>
static size_t Cap(const V& v) {
  return v.capacity() * sizeof(typename V::value_type);
}
// A borrowed column (a mapped index's) is the file's pages, not memory the model holds.
template <typename T>
static size_t Cap(const Column<T>& v) {
  return v.borrowed() ? 0 : v.capacity() * sizeof(T);
}

// ---- Column storage
// ----------------------------------------------------------------------------------------------

namespace column_storage {
namespace {
#if defined(__linux__)
// Columns from this size on are mappings of their own: glibc would put many of them on its heap (its mmap
// threshold adapts upwards to 32 MB), where realloc copies unless the block happens to be last.
constexpr size_t kMapBytes = size_t{256} << 10;
bool Mapped(size_t bytes) {
  return bytes >= kMapBytes;
}

// Spilled columns: while a SpillScope is open, each mapped column is a shared mapping of an unlinked file of
// its own in the spill folder, so under memory pressure the kernel writes its pages out instead of failing:
// a model bigger than RAM (an index build of a billion events) pages through the disk. The fd of each is kept
// to grow the file with the column; a column knows nothing of this, so the registry, not the scope, decides
// how a block is released (a column made while spilling may be freed after the scope closed).
struct Spill {
  std::mutex mu;
  std::string dir;  // empty: not spilling
  int scopes = 0;
  std::unordered_map<void*, int> fds;  // mapping -> its file
  uint64_t made = 0;                   // spilled columns ever made (tests: did a build spill?)
};
Spill& SpillState() {
  static Spill* s = new Spill;  // never destroyed: columns may be freed during static destruction
  return *s;
}
std::atomic<bool> g_spilling{false};
// Spilled columns alive: while none is, freeing or growing a column does not look in the registry (the
// parallel load's threads would meet on its lock for nothing).
std::atomic<size_t> g_spilled_alive{0};
#endif  // elsewhere (wasm) every column is a malloc block
// A mapping can also fail for the number of mappings (vm.max_map_count, about 65,000 by default): each long
// column is one, so that limit is met only by tens of thousands of long lanes; say which it was.
[[noreturn]] void OutOfMemory(size_t bytes) {
  const int err = errno;
  std::fprintf(stderr, "gtrace: cannot allocate a column of %zu bytes: %s%s\n", bytes, std::strerror(err),
               err == ENOMEM ? " (out of memory, or more mappings than vm.max_map_count allows)" : "");
  std::abort();
}

#if defined(__linux__)
// The disk's blocks are reserved up front (posix_fallocate): a sparse file that cannot grow on a full disk
// would be a SIGBUS at some later store, with no word of why.
[[noreturn]] void SpillFailed(const std::string& dir, size_t bytes, int err) {
  std::fprintf(stderr, "gtrace: cannot spill a column of %zu bytes to %s: %s\n", bytes, dir.c_str(),
               std::strerror(err));
  std::abort();
}

int OpenSpillFile(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0 && errno != ENOENT && errno != ENOTDIR && errno != EACCES) {
    // A file system without O_TMPFILE: a named file, unlinked at once.
    std::string name = dir + "/gtrace-spill-XXXXXX";
    fd = mkostemp(name.data(), O_CLOEXEC);
    if (fd >= 0) ::unlink(name.c_str());
  }
  return fd;
}

void* SpillAllocate(size_t bytes) {
  Spill& s = SpillState();
  std::lock_guard lock(s.mu);
  if (s.dir.empty()) return nullptr;
  const int fd = OpenSpillFile(s.dir);
  if (fd < 0) SpillFailed(s.dir, bytes, errno);
  if (const int err = posix_fallocate(fd, 0, off_t(bytes)); err != 0) {
    ::close(fd);
    SpillFailed(s.dir, bytes, err);
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    ::close(fd);
    OutOfMemory(bytes);
  }
  s.fds.emplace(p, fd);
  ++s.made;
  g_spilled_alive.fetch_add(1, std::memory_order_relaxed);
  return p;
}

// -1: not a spilled column.
int SpillFd(void* p) {
  if (!p || g_spilled_alive.load(std::memory_order_relaxed) == 0) return -1;
  Spill& s = SpillState();
  std::lock_guard lock(s.mu);
  const auto it = s.fds.find(p);
  return it == s.fds.end() ? -1 : it->second;
}

void SpillFree(void* p, size_t bytes, int fd) {
  munmap(p, bytes);
  ::close(fd);
  Spill& s = SpillState();
  std::lock_guard lock(s.mu);
  s.fds.erase(p);
  g_spilled_alive.fetch_sub(1, std::memory_order_relaxed);
}

void* SpillResize(void* p, size_t old_bytes, size_t new_bytes, int fd) {
  if (new_bytes > old_bytes) {
    if (const int err = posix_fallocate(fd, 0, off_t(new_bytes)); err != 0)
      SpillFailed(SpillState().dir, new_bytes, err);
  }
  void* q = mremap(p, old_bytes, new_bytes, MREMAP_MAYMOVE);
  if (q == MAP_FAILED) OutOfMemory(new_bytes);
  // A shrink that fails to give the file's tail back costs disk, not correctness.
  if (new_bytes < old_bytes) {
    [[maybe_unused]] const int shrunk = ftruncate(fd, off_t(new_bytes));
  }
  Spill& s = SpillState();
  std::lock_guard lock(s.mu);
  s.fds.erase(p);
  s.fds.emplace(q, fd);
  return q;
}
#endif
}  // namespace

SpillScope::SpillScope(const std::string& dir) {
#if defined(__linux__)
  Spill& s = SpillState();
  std::lock_guard lock(s.mu);
  if (s.scopes++ == 0) s.dir = dir;
  g_spilling.store(true, std::memory_order_relaxed);
#else
  (void)dir;
#endif
}

SpillScope::~SpillScope() {
#if defined(__linux__)
  Spill& s = SpillState();
  std::lock_guard lock(s.mu);
  if (--s.scopes == 0) {
    s.dir.clear();
    g_spilling.store(false, std::memory_order_relaxed);
  }
#endif
}

uint64_t SpilledColumnsMade() {
#if defined(__linux__)
  Spill& s = SpillState();
  std::lock_guard lock(s.mu);
  return s.made;
#else
  return 0;
#endif
}

std::string SpillDirProblem(const std::string& dir) {
#if defined(__linux__)
  const int fd = OpenSpillFile(dir);
  if (fd < 0) return "cannot create files in " + dir + ": " + std::strerror(errno);
  ::close(fd);
#else
  (void)dir;
#endif
  return {};
}

size_t SpilledColumns() {
#if defined(__linux__)
  return g_spilled_alive.load(std::memory_order_relaxed);
#else
  return 0;
#endif
}

void* Allocate(size_t bytes) {
  if (bytes == 0) return nullptr;
#if defined(__linux__)
  if (Mapped(bytes)) {
    if (g_spilling.load(std::memory_order_relaxed))
      if (void* p = SpillAllocate(bytes)) return p;
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) OutOfMemory(bytes);
    return p;
  }
#endif
  void* p = std::malloc(bytes);
  if (!p) OutOfMemory(bytes);
  return p;
}

void Free(void* p, size_t bytes) {
  if (!p) return;
#if defined(__linux__)
  if (Mapped(bytes)) {
    if (const int fd = SpillFd(p); fd >= 0)
      SpillFree(p, bytes, fd);
    else
      munmap(p, bytes);
    return;
  }
#endif
  std::free(p);
}

void* Reallocate(void* p, size_t old_bytes, size_t new_bytes, size_t used) {
  if (!p) return Allocate(new_bytes);
  if (new_bytes == 0) {
    Free(p, old_bytes);
    return nullptr;
  }
  used = std::min(used, new_bytes);
#if defined(__linux__)
  if (Mapped(old_bytes) && Mapped(new_bytes)) {
    if (const int fd = SpillFd(p); fd >= 0) return SpillResize(p, old_bytes, new_bytes, fd);
    void* q = mremap(p, old_bytes, new_bytes, MREMAP_MAYMOVE);
    if (q == MAP_FAILED) OutOfMemory(new_bytes);
    return q;
  }
  if (Mapped(old_bytes) != Mapped(new_bytes)) {
    void* q = Allocate(new_bytes);
    if (used) std::memcpy(q, p, used);
    Free(p, old_bytes);
    return q;
  }
#endif
  void* q = std::realloc(p, new_bytes);
  if (!q) OutOfMemory(new_bytes);
  return q;
}
}  // namespace column_storage

size_t Lane::LodBytes() const {
  size_t b = Cap(lod);
  for (const auto& l : lod) b += Cap(l);
  return b;
}

size_t Lane::MemoryBytes() const {
  return sizeof(Lane) + Cap(start) + Cap(dur) + Cap(name) + Cap(ref) + Cap(aux) + Cap(long_dur) +
         Cap(return_code) + Cap(args) + LodBytes();
}

// ---- TraceModel
// ----------------------------------------------------------------------------------------------

EventKind KindOfRef(TrackKind track, uint32_t ref) {
  if (track == TrackKind::kThreadApi) return EventKind::kApi;
  uint32_t k = ref >> kRefKindShift;
  return k < static_cast<uint32_t>(EventKind::kCount) ? static_cast<EventKind>(k) : EventKind::kHostOp;
}

EventKind TraceModel::Kind(EventId e) const {
  const Lane& l = lanes[e.lane];
  return KindOfRef(tracks[l.track].kind, l.ref[e.index]);
}

uint32_t TraceModel::CorrelationId(EventId e) const {
  const Lane& l = lanes[e.lane];
  if (tracks[l.track].kind == TrackKind::kThreadApi) return l.ref[e.index];
  if (!l.aux.empty()) return l.aux[e.index];
  return 0;
}

bool TraceModel::IsGpuActivity(EventId e) const {
  EventKind k = Kind(e);
  return k == EventKind::kKernel || k == EventKind::kMemcpy || k == EventKind::kMemset;
}

std::string TraceModel::EventKey(EventId e) const {
  if (!e.valid() || e.lane >= lanes.size() || e.index >= lanes[e.lane].size()) return {};
  const Lane& l = lanes[e.lane];
  return tracks[l.track].key + "/" + std::to_string(l.depth) + "/" + std::to_string(e.index);
}

static bool ParseU32(std::string_view s, uint32_t* out) {
  if (s.empty() || s.size() > 10) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

EventId TraceModel::FindEventByKey(std::string_view key) const {
  size_t slash2 = key.rfind('/');
  if (slash2 == std::string_view::npos || slash2 == 0) return {};
  size_t slash1 = key.rfind('/', slash2 - 1);
  if (slash1 == std::string_view::npos) return {};
  uint32_t depth = 0, index = 0;
  if (!ParseU32(key.substr(slash1 + 1, slash2 - slash1 - 1), &depth) ||
      !ParseU32(key.substr(slash2 + 1), &index))
    return {};
  TrackId t = FindTrackByKey(key.substr(0, slash1));
  if (t == kNone) return {};
  const Track& tr = tracks[t];
  if (depth >= tr.lane_count) return {};
  LaneId lane = tr.first_lane + depth;
  if (index >= lanes[lane].size()) return {};
  return {lane, index};
}

TrackId TraceModel::FindTrackByKey(std::string_view key) const {
  for (size_t i = 0; i < tracks.size(); ++i)
    if (tracks[i].key == key) return static_cast<TrackId>(i);
  return kNone;
}

size_t TraceModel::MemoryBytes() const {
  size_t b = sizeof(TraceModel);
  for (const auto& s : strings) b += sizeof(std::string) + (s.size() >= 16 ? s.capacity() + 1 : 0);
  b += Cap(name_counts);
  for (const auto& g : groups) b += sizeof(g) + g.name.capacity() + g.key.capacity() + Cap(g.tracks);
  for (const auto& t : tracks) b += sizeof(t) + t.name.capacity() + t.key.capacity();
  for (const auto& l : lanes) b += l.MemoryBytes();
  for (const auto& c : counters) {
    b += sizeof(c) + Cap(c.time) + Cap(c.value);
    for (const auto& lv : c.levels) b += sizeof(lv) + Cap(lv);
  }
  b += Cap(flows) + Cap(launch_configs) + Cap(memcpys) + Cap(memsets) + Cap(nvtx) + Cap(syncs);
  b += Cap(processes) + Cap(threads) + Cap(devices) + Cap(streams) + Cap(kernel_metrics) + Cap(stall_samples);
  for (const auto& d : device_summaries) b += sizeof(d) + Cap(d.largest_gaps);
  for (const auto& l : losses) b += sizeof(l) + l.name.capacity() + l.detail.capacity();
  for (const auto& p : problems) b += sizeof(p) + p.capacity();
  return b;
}

}  // namespace gt::viewer

// Opening the viewer index: every offset and size is checked against the file before it is used, the
// header, section table, small tables and block directory against their checksums, and the decoded model
// against the invariants the queries rely on (lanes in range, columns and LOD levels of the exact size), so
// a damaged or hostile index is refused with a reason, never read out of bounds. The blocks are not read
// here: each is checked when first decoded (index_blocks.cc: its checksum, its size, ascending lane starts;
// ends are saturated), so opening costs the tables, not the trace. The caller rebuilds a refused index.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#if !defined(__EMSCRIPTEN__) && !defined(_WIN32)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#endif

#include "gt/index_format.h"
#include "gt/parts.h"
#include "gt/sat_math.h"
#include "gt/viewer/index.h"
#include "index_blocks.h"
#include "index_codec.h"

namespace gt::viewer {
namespace index_detail {
namespace {

// Decodes what Encoder wrote. The first failure sticks: later reads return zeros and sizes of zero, so the
// visitor runs to its end without branching on errors, and nothing is sized from bytes that are not there
// (a count needs at least min_bytes per element left in the section).
class Decoder {
 public:
  // `blocks` null: no columns expected (the summaries). `materialize`: lane columns are decoded whole into
  // the model; otherwise their references are collected in refs (in visiting order) and the columns stay
  // empty.
  Decoder(std::span<const uint8_t> in, const IndexBlocks* blocks, bool materialize = false)
      : in_(in), blocks_(blocks), materialize_(materialize) {}
  const Status& status() const { return status_; }
  std::vector<ColRef> refs;

  template <typename T>
  void Pod(T& v) {
    v = T{};
    if (!Need(sizeof(T))) return;
    std::memcpy(&v, in_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    if constexpr (std::is_same_v<T, bool>) {
      uint8_t raw;
      std::memcpy(&raw, &v, 1);
      if (raw > 1) Fail("a flag is neither 0 nor 1"), v = false;
    }
  }
  void Str(std::string& s) {
    uint32_t n = 0;
    Pod(n);
    s.clear();
    if (!Need(n)) return;
    s.assign(reinterpret_cast<const char*>(in_.data() + at_), n);
    at_ += n;
  }
  void Strs(std::vector<std::string>& v) {
    const size_t n = Count(v, 4);
    for (size_t i = 0; i < n; ++i) Str(v[i]);
  }
  template <typename C>
  size_t Count(C& c, size_t min_bytes) {
    uint64_t n = 0;
    Pod(n);
    if (!ok()) n = 0;
    if (n > (in_.size() - at_) / std::max<size_t>(min_bytes, 1))
      Fail("a count larger than its section"), n = 0;
    c.clear();
    c.resize(size_t(n));
    return size_t(n);
  }
  template <typename T>
  void Col(Column<T>& c) {
    const ColRef r = Ref<T>();
    c.clear();
    if (!ok()) return;
    refs.push_back(r);
    if (materialize_ && r.count) {
      c.resize(size_t(r.count));
      if (Status s = blocks_->DecodeAll(r, c.data()); !s.ok()) status_ = s;
    }
  }
  template <typename T>
  void Array(std::vector<T>& v) {
    const ColRef r = Ref<T>();
    v.clear();
    if (!ok() || !r.count) return;
    v.resize(size_t(r.count));
    if (Status s = blocks_->DecodeAll(r, v.data()); !s.ok()) status_ = s, v.clear();
  }
  template <typename T>
  void Raw(std::vector<T>& v) {
    uint64_t n = 0;
    uint32_t size = 0;
    Pod(n), Pod(size);
    v.clear();
    if (!ok()) return;
    if (size != sizeof(T)) return Fail("a record table of another layout");
    if (n > (in_.size() - at_) / sizeof(T)) return Fail("a record table larger than its section");
    v.resize(size_t(n));
    if (n) std::memcpy(static_cast<void*>(v.data()), in_.data() + at_, size_t(n) * sizeof(T));
    at_ += size_t(n) * sizeof(T);
  }
  template <typename A, typename B>
  void Pairs(std::vector<std::pair<A, B>>& v) {
    const size_t n = Count(v, sizeof(A) + sizeof(B));
    for (size_t i = 0; i < n; ++i) Pod(v[i].first), Pod(v[i].second);
  }
  bool ok() const { return status_.ok(); }
  bool at_end() const { return at_ == in_.size(); }
  void Fail(const std::string& why) {
    if (status_.ok()) status_ = Corrupt("damaged index: " + why);
  }

 private:
  bool Need(uint64_t n) {
    if (!ok()) return false;
    if (n > in_.size() - at_) {
      Fail("a table runs past its section");
      return false;
    }
    return true;
  }
  // A column of the blocks section: its blocks exist in the directory. A count is bounded by what the
  // directory can hold, so nothing is sized from a count that the file cannot back.
  template <typename T>
  ColRef Ref() {
    ColRef r;
    r.elem = sizeof(T);
    r.codec = CodecOf<T>();
    Pod(r.count), Pod(r.first_block);
    if (!ok() || r.count == 0) return r.count = 0, r;
    const uint64_t have = blocks_ ? blocks_->directory.size() / kDirEntryBytes : 0;
    // Compared as values, not blocks: BlocksOf rounds up and wraps for counts near 2^64.
    if (r.first_block > have || r.count > (have - r.first_block) * kBlockValues) {
      Fail("a column outside the blocks section");
      r.count = 0;
    }
    return r;
  }
  std::span<const uint8_t> in_;
  const IndexBlocks* blocks_;
  bool materialize_;
  size_t at_ = 0;
  Status status_;
};

inline uint64_t SizeOf(const ColRef& r) {
  return r.count;
}
template <typename C>
uint64_t SizeOf(const C& c) {
  return c.size();
}

// The level sizes a pyramid of n values must have: lanes keep none up to one block, counters always reach
// a single top block (see BuildLaneLod and the builder's counter levels).
bool LevelSizesOk(size_t n, const auto& levels, bool to_one) {
  constexpr uint64_t F = kLaneLodFanout;
  static_assert(kLaneLodFanout == kCounterFanout);
  if (n == 0 || (!to_one && n <= F)) return levels.empty();
  uint64_t size = (n + F - 1) / F;
  for (size_t k = 0; k < levels.size(); ++k) {
    if (SizeOf(levels[k]) != size) return false;
    const bool last = to_one ? size <= 1 : size <= F;
    if (last) return k + 1 == levels.size();
    size = (size + F - 1) / F;
  }
  return false;
}

template <typename V>
bool SortedIndices(const V& v, uint32_t n) {
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i].first >= n || (i && v[i].first <= v[i - 1].first)) return false;
  return true;
}

// What the query code assumes of a model and the builder guarantees: checked here because the index may
// have been written by anything.
// Hands the collected column references to the lanes (five columns, then the LOD levels, per lane).
Status AssignLaneRefs(TraceModel& m, const std::vector<ColRef>& refs, std::vector<LaneRefs>* lanes) {
  // Each block belongs to one column: the cache keys decoded blocks by their number, and a block decoded for
  // a shorter or narrower column would be read past its end through another column sharing it.
  std::vector<std::pair<uint64_t, uint64_t>> spans;  // [first block, end block) of each column with values
  for (const ColRef& r : refs)
    if (r.count) spans.push_back({r.first_block, r.first_block + BlocksOf(r.count)});
  std::sort(spans.begin(), spans.end());
  for (size_t i = 1; i < spans.size(); ++i)
    if (spans[i].first < spans[i - 1].second) return Corrupt("damaged index: two columns share a block");
  size_t at = 0;
  lanes->assign(m.lanes.size(), {});
  for (size_t i = 0; i < m.lanes.size(); ++i) {
    Lane& l = m.lanes[i];
    LaneRefs& r = (*lanes)[i];
    if (refs.size() - at < 5 + l.lod.size()) return Corrupt("damaged index: lane columns missing");
    r.start = refs[at++], r.dur = refs[at++], r.name = refs[at++], r.ref = refs[at++], r.aux = refs[at++];
    r.start.ascending = true;
    for (size_t k = 0; k < l.lod.size(); ++k) r.lod.push_back(refs[at++]);
    // The references are handed out in file order: a lane that claims other LOD levels than it has shifts
    // another table's column (of other value sizes) into its slots, whose reads would run past the blocks.
    bool typed = r.start.elem == sizeof(int64_t) && r.dur.elem == sizeof(uint32_t) &&
                 r.name.elem == sizeof(StringId) && r.ref.elem == sizeof(uint32_t) &&
                 r.aux.elem == sizeof(uint32_t);
    for (const ColRef& lod : r.lod) typed &= lod.elem == sizeof(LodMax);
    if (!typed) return Corrupt("damaged index: a lane column of another type");
    if (l.start.empty()) l.lod.clear();  // not materialized: the levels are read through the cache
  }
  return at == refs.size() ? Status::Ok() : Corrupt("damaged index: columns no lane owns");
}

// What the query code assumes of a model and the builder guarantees: checked here because the index may
// have been written by anything. The values inside the blocks (starts ascending, ends within int64) are
// checked or saturated where they are read (index_blocks.cc).
Status ValidateModel(const TraceModel& m, const std::vector<LaneRefs>& refs) {
  auto bad = [](const std::string& why) { return Corrupt("damaged index: " + why); };
  if (m.strings.empty() || !m.strings[0].empty()) return bad("string 0 is not the empty string");
  if (m.name_counts.size() != m.strings.size()) return bad("name counts do not match the strings");
  for (const TrackGroup& g : m.groups)
    for (TrackId t : g.tracks)
      if (t >= m.tracks.size()) return bad("a group lists a track that does not exist");
  for (const Track& t : m.tracks) {
    if (t.group != kNone && t.group >= m.groups.size()) return bad("a track in a group that does not exist");
    if (uint64_t{t.first_lane} + t.lane_count > m.lanes.size()) return bad("a track's lanes do not exist");
    if (t.counter != kNone && t.counter >= m.counters.size()) return bad("a track's counter does not exist");
  }
  for (size_t li = 0; li < m.lanes.size(); ++li) {
    const Lane& l = m.lanes[li];
    const LaneRefs& r = refs[li];
    const uint64_t n = r.start.count;
    if (l.track >= m.tracks.size()) return bad("a lane of a track that does not exist");
    if (n > UINT32_MAX || r.dur.count != n || r.name.count != n || r.ref.count != n ||
        (r.aux.count && r.aux.count != n))
      return bad("a lane's columns differ in length");
    if (!LevelSizesOk(size_t(n), r.lod, false)) return bad("a lane's LOD levels do not match its events");
    const uint32_t n32 = uint32_t(n);
    if (!SortedIndices(l.long_dur, n32) || !SortedIndices(l.return_code, n32) || !SortedIndices(l.args, n32))
      return bad("a lane's side table names events that do not exist");
    for (const auto& [i, d] : l.long_dur)
      if (d < 0) return bad("a negative duration");
  }
  for (const CounterTrack& c : m.counters) {
    if (c.time.size() != c.value.size() || c.time.size() > UINT32_MAX)
      return bad("a counter's columns differ");
    if (c.track != kNone && c.track >= m.tracks.size()) return bad("a counter's track does not exist");
    if (!std::is_sorted(c.time.begin(), c.time.end())) return bad("a counter's samples are not sorted");
    if (!LevelSizesOk(c.value.size(), c.levels, true)) return bad("a counter's levels do not match it");
  }
  auto event_ok = [&refs](EventId e) { return e.lane < refs.size() && e.index < refs[e.lane].start.count; };
  for (const Flow& f : m.flows)
    if (!event_ok(f.from) || !event_ok(f.to)) return bad("a flow between events that do not exist");
  for (const DeviceSummary& d : m.device_summaries)
    if (d.group != kNone && d.group >= m.groups.size()) return bad("a device summary of no group");
  return Status::Ok();
}

Status Refuse(const IndexSource& expected, const IndexSource& found) {
  return Unsupported("stale: the index was built from other bytes (" + found.tag + ", " +
                     std::to_string(found.bytes) + " bytes; expected " + expected.tag + ", " +
                     std::to_string(expected.bytes) + " bytes)");
}

}  // namespace
}  // namespace index_detail

StatusOr<std::unique_ptr<MappedIndex>> MappedIndex::Decode(std::unique_ptr<MappedIndex> index,
                                                           const IndexSource& expected,
                                                           IndexOpenOptions options) {
  using namespace index_detail;
  const std::span<const uint8_t> b = index->bytes_;
  if (b.size() < kHeaderBytes) return Truncated("damaged index: shorter than its header");
  if (std::memcmp(b.data(), kMagic, sizeof kMagic) != 0) return Corrupt("not a gtrace viewer index");
  if (options.verify_checksums &&
      Load<uint32_t>(b.data() + kOffHeaderCrc) != Crc32c(0, b.data(), kOffHeaderCrc))
    return Corrupt("damaged index: header checksum");
  GT_RETURN_IF_ERROR(
      CheckIndexVersion({Load<uint16_t>(b.data() + kOffMajor), Load<uint16_t>(b.data() + kOffMinor)}));
  if (Load<uint32_t>(b.data() + kOffLayout) != LayoutKey())
    return Unsupported("stale: the index was written by a build with other record layouts");
  const uint64_t file_bytes = Load<uint64_t>(b.data() + kOffFileBytes);
  if (file_bytes != b.size())
    return file_bytes > b.size() ? Truncated("damaged index: truncated (" + std::to_string(b.size()) +
                                             " of " + std::to_string(file_bytes) + " bytes)")
                                 : Corrupt("damaged index: longer than written");
  IndexSource found;
  found.bytes = Load<uint64_t>(b.data() + kOffSourceBytes);
  const uint8_t tag_len = b[kOffTagLen];
  if (tag_len > kIndexTagMax) return Corrupt("damaged index: source tag");
  found.tag.assign(reinterpret_cast<const char*>(b.data() + kOffTag), tag_len);
  if (!expected.tag.empty() && !(found == expected)) return Refuse(expected, found);

  const uint32_t sections = Load<uint32_t>(b.data() + kOffSectionCount);
  if (sections > kMaxSections || kHeaderBytes + uint64_t{sections} * kSectionEntryBytes > b.size())
    return Corrupt("damaged index: section table");
  if (options.verify_checksums && Load<uint32_t>(b.data() + kOffTableCrc) !=
                                      Crc32c(0, b.data() + kHeaderBytes, sections * kSectionEntryBytes))
    return Corrupt("damaged index: section table checksum");
  std::span<const uint8_t> sec[5];
  bool seen[5] = {};
  for (uint32_t i = 0; i < sections; ++i) {
    const uint8_t* e = b.data() + kHeaderBytes + i * kSectionEntryBytes;
    const uint32_t kind = Load<uint32_t>(e);
    const uint64_t offset = Load<uint64_t>(e + 8), bytes = Load<uint64_t>(e + 16);
    const uint32_t crc = Load<uint32_t>(e + 24);
    if (kind < kSectionModel || kind > kSectionDirectory || seen[kind])
      return Corrupt("damaged index: section kinds");
    if (offset % kAlign != 0 || offset > b.size() || bytes > b.size() - offset)
      return Corrupt("damaged index: a section outside the file");
    seen[kind] = true;
    sec[kind] = b.subspan(size_t(offset), size_t(bytes));
    // The blocks section has none: its blocks are checked one by one when first read.
    if (options.verify_checksums && kind != kSectionBlocks &&
        Crc32c(0, sec[kind].data(), sec[kind].size()) != crc)
      return Corrupt(std::string("damaged index: checksum of the ") +
                     (kind == kSectionModel       ? "model"
                      : kind == kSectionSummaries ? "summaries"
                                                  : "block directory") +
                     " section");
  }
  if (!seen[kSectionModel] || !seen[kSectionSummaries] || !seen[kSectionBlocks] || !seen[kSectionDirectory])
    return Corrupt("damaged index: a section is missing");
  if (sec[kSectionDirectory].size() % kDirEntryBytes != 0) return Corrupt("damaged index: block directory");

  index->blocks_ = std::make_unique<IndexBlocks>();
  IndexBlocks& blocks = *index->blocks_;
  blocks.blocks = sec[kSectionBlocks];
  blocks.directory = sec[kSectionDirectory];
  blocks.verify = options.verify_checksums;
  blocks.cache_cap = options.cache_bytes;
  index->model_section_ = sec[kSectionModel];
  index->model_ = std::make_unique<TraceModel>();
  Decoder meta(sec[kSectionModel], &blocks);
  VisitModel(meta, *index->model_);
  if (meta.ok() && !meta.at_end()) meta.Fail("bytes after the model's tables");
  GT_RETURN_IF_ERROR(meta.status());
  GT_RETURN_IF_ERROR(AssignLaneRefs(*index->model_, meta.refs, &blocks.lanes));
  GT_RETURN_IF_ERROR(ValidateModel(*index->model_, blocks.lanes));
  // Cached blocks are the reads of earlier queries: they do not count against what open holds.
  {
    std::lock_guard<std::mutex> lock(blocks.mu);
    blocks.lru.clear(), blocks.where.clear(), blocks.bytes = 0;
  }
  Decoder sums(sec[kSectionSummaries], nullptr);
  VisitSummaries(sums, index->summaries_);
  if (sums.ok() && !sums.at_end()) sums.Fail("bytes after the summaries");
  GT_RETURN_IF_ERROR(sums.status());
  index->source_ = std::move(found);
  return index;
}

uint32_t MappedIndex::lane_size(LaneId lane) const {
  return lane < blocks_->lanes.size() ? uint32_t(blocks_->lanes[lane].start.count) : 0;
}

std::span<const uint32_t> MappedIndex::flows_by_target() const {
  std::call_once(flows_by_target_once_, [this] {
    const auto& flows = model_->flows;
    flows_by_target_.resize(flows.size());
    for (uint32_t i = 0; i < flows_by_target_.size(); ++i) flows_by_target_[i] = i;
    std::stable_sort(flows_by_target_.begin(), flows_by_target_.end(),
                     [&](uint32_t a, uint32_t b) { return flows[a].to < flows[b].to; });
  });
  return flows_by_target_;
}

std::string MappedIndex::damage() const {
  std::lock_guard<std::mutex> lock(blocks_->mu);
  return blocks_->damage;
}

size_t MappedIndex::cached_bytes() const {
  return blocks_->cached_bytes();
}

StatusOr<std::unique_ptr<TraceModel>> MappedIndex::Materialize() const {
  using namespace index_detail;
  auto m = std::make_unique<TraceModel>();
  Decoder d(model_section_, blocks_.get(), true);
  VisitModel(d, *m);
  GT_RETURN_IF_ERROR(d.status());  // the tables decoded at open again: only a block can fail here
  return m;
}

StatusOr<std::unique_ptr<TraceModel>> MappedIndex::Shell() const {
  using namespace index_detail;
  auto m = std::make_unique<TraceModel>();
  Decoder d(model_section_, blocks_.get());
  VisitModel(d, *m);
  GT_RETURN_IF_ERROR(d.status());
  for (Lane& l : m->lanes) l.lod.clear();
  return m;
}

MappedIndex::~MappedIndex() {
  model_.reset();  // borrowed columns first, then the pages they point into
#if !defined(__EMSCRIPTEN__) && !defined(_WIN32)
  if (map_) munmap(map_, map_bytes_);
#endif
}

StatusOr<std::unique_ptr<MappedIndex>> MappedIndex::FromBytes(std::span<const uint8_t> bytes,
                                                              const IndexSource& expected,
                                                              IndexOpenOptions options) {
  std::unique_ptr<MappedIndex> index(new MappedIndex());
  index->bytes_ = bytes;
  return Decode(std::move(index), expected, options);
}

StatusOr<std::unique_ptr<MappedIndex>> MappedIndex::Open(const std::string& path, const IndexSource& expected,
                                                         IndexOpenOptions options) {
#if defined(__EMSCRIPTEN__) || defined(_WIN32)
  (void)path, (void)expected, (void)options;
  return Unsupported("mapping an index needs mmap");
#else
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT ? NotFound("no index at " + path)
                           : IoError("cannot open " + path + ": " + std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    return IoError("cannot stat " + path + ": " + std::strerror(e));
  }
  std::unique_ptr<MappedIndex> index(new MappedIndex());
  if (st.st_size > 0) {
    // Private and read-only: the pages are the file's, shared with the page cache, never copied. Writers
    // replace an index by rename, so the mapped file never changes under a reader.
    void* p = mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int e = errno;
      ::close(fd);
      return IoError("cannot map " + path + ": " + std::strerror(e));
    }
    index->map_ = p;
    index->map_bytes_ = size_t(st.st_size);
#if defined(__linux__)
    // A zoomed-out tile reads about one block per pixel per lane, scattered over the whole file: from a cold
    // page cache that is thousands of random reads for the first view (seconds per tile at 1 B events). An
    // index that fits comfortably in the memory free is read ahead in the background, sequentially, so the
    // first views find it cached; a bigger one is left to the requests.
    if (uint64_t(st.st_size) <= MemoryAvailableForModels() / 4) {
      if (const int ahead = ::dup(fd); ahead >= 0)
        std::thread([ahead] {
          posix_fadvise(ahead, 0, 0, POSIX_FADV_WILLNEED);
          ::close(ahead);
        }).detach();
    }
#endif
    index->bytes_ = {static_cast<const uint8_t*>(p), size_t(st.st_size)};
  }
  ::close(fd);
  return Decode(std::move(index), expected, options);
#endif
}

bool IndexNeedsRebuild(const Status& s) {
  return s.code() == StatusCode::kNotFound || s.code() == StatusCode::kUnsupported ||
         s.code() == StatusCode::kCorrupt || s.code() == StatusCode::kTruncated;
}

uint64_t MemoryAvailableForModels() {
#if defined(__linux__)
  uint64_t available = UINT64_MAX;
  if (FILE* f = std::fopen("/proc/meminfo", "r")) {
    char line[256];
    unsigned long long kb = 0;
    while (std::fgets(line, sizeof line, f))
      if (std::sscanf(line, "MemAvailable: %llu kB", &kb) == 1) available = uint64_t(kb) << 10;
    std::fclose(f);
  }
  // A container's limit (cgroup v2) is what an allocation meets first.
  auto read_u64 = [](const char* path, uint64_t* v) {
    FILE* f = std::fopen(path, "r");
    if (!f) return false;
    unsigned long long x = 0;
    const bool ok = std::fscanf(f, "%llu", &x) == 1;  // "max" (no limit) does not parse
    std::fclose(f);
    *v = x;
    return ok;
  };
  uint64_t limit = 0, used = 0;
  if (read_u64("/sys/fs/cgroup/memory.max", &limit) && read_u64("/sys/fs/cgroup/memory.current", &used))
    available = std::min(available, limit > used ? limit - used : 0);
  return available;
#else
  return UINT64_MAX;
#endif
}

bool IndexBuildShouldSpill(uint64_t trace_bytes, uint64_t available_bytes) {
  // The model of a .gtrace takes about 3.6x its bytes (22.5 against 6.3 bytes per event at 100 M events,
  // docs/benchmarks.md); JSON takes much less than its text, so it spills early, which costs disk writes,
  // not a failure. Three quarters of what is free: the page cache and other builds need the rest.
  return trace_bytes > available_bytes / 16 * 3;  // 4x the trace > 3/4 of what is free, without overflow
}

StatusOr<std::unique_ptr<MappedIndex>> OpenOrBuildIndex(std::span<const uint8_t> trace_bytes,
                                                        const IndexSource& source,
                                                        const std::string& index_path, LoadOptions load,
                                                        IndexBuildReport* report, IndexSpill spill,
                                                        unsigned write_threads) {
  IndexBuildReport local;
  IndexBuildReport& r = report ? *report : local;
  r = {};
  r.trace_bytes = trace_bytes.size();
  auto opened = MappedIndex::Open(index_path, source);
  if (opened.ok() || !IndexNeedsRebuild(opened.status())) return opened;
  r.rebuilt = true;
  r.why = opened.status().code() == StatusCode::kNotFound ? "no index" : opened.status().message();
  if (load.spill_dir.empty() && spill == IndexSpill::kAuto &&
      IndexBuildShouldSpill(trace_bytes.size(), MemoryAvailableForModels())) {
    const size_t slash = index_path.find_last_of('/');
    load.spill_dir = slash == std::string::npos ? "." : slash == 0 ? "/" : index_path.substr(0, slash);
  }
  r.spill_dir = load.spill_dir;
#if defined(__linux__)
  // A spill file that cannot grow ends the process (a column has no way to report it), so a build that
  // would fill the disk is refused before it starts: about 3.5x the .gtrace while it runs, less for JSON.
  if (!load.spill_dir.empty()) {
    struct statvfs fs {};
    const uint64_t need = uint64_t(trace_bytes.size()) / 2 * 7;
    if (statvfs(load.spill_dir.c_str(), &fs) == 0 && uint64_t(fs.f_bavail) * fs.f_frsize < need)
      return Status(StatusCode::kResourceExhausted,
                    "not enough free disk in " + load.spill_dir + " to build the index through it (about " +
                        std::to_string(need >> 20) + " MiB needed, " +
                        std::to_string((uint64_t(fs.f_bavail) * fs.f_frsize) >> 20) + " MiB free)");
  }
#endif
  const auto t0 = std::chrono::steady_clock::now();
  {
    auto model = LoadTrace(trace_bytes, load);
    if (!model.ok()) return model.status();
    r.load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const unsigned threads = write_threads  ? write_threads
                             : load.threads ? load.threads
                                            : std::max(1u, std::thread::hardware_concurrency());
    GT_RETURN_IF_ERROR(WriteIndex(**model, source, index_path, &r.write, threads));
  }
  return MappedIndex::Open(index_path, source);
}

StatusOr<std::unique_ptr<MappedIndex>> OpenOrBuildIndexFile(const std::string& trace_path,
                                                            const std::string& index_path, LoadOptions load,
                                                            IndexBuildReport* report, IndexSpill spill,
                                                            unsigned write_threads) {
#if !defined(__EMSCRIPTEN__) && !defined(_WIN32)
  // A regular file is mapped: fingerprinting it reads it through the page cache, never into the heap, so a
  // trace bigger than RAM whose index exists opens without loading anything.
  const int fd = ::open(trace_path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    void* p = mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (p != MAP_FAILED) {
      const std::span<const uint8_t> bytes(static_cast<const uint8_t*>(p), size_t(st.st_size));
      auto index =
          OpenOrBuildIndex(bytes, FingerprintBytes(bytes), index_path, load, report, spill, write_threads);
      munmap(p, size_t(st.st_size));
      return index;
    }
  } else if (fd >= 0) {
    ::close(fd);
  }
#endif
  // A parts folder, an empty file, or no mmap: read into memory as `gtrace index build` does.
  auto bytes = ReadTraceOrParts(trace_path);
  if (!bytes.ok()) return bytes.status();
  const std::span<const uint8_t> b(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size());
  return OpenOrBuildIndex(b, FingerprintBytes(b), index_path, load, report, spill, write_threads);
}

}  // namespace gt::viewer

// Writing the viewer index: VisitModel numbers the column blocks while it encodes the small tables, then the
// file is written in one sequential pass, each block compressed from the model's own arrays, so the writer
// holds no second copy of the events.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#if !defined(_WIN32)
#include <fcntl.h>
#include <unistd.h>
#endif

#include "gt/index_format.h"
#include "gt/viewer/index.h"
#include "gt/viewer/json.h"
#include "gt/viewer/profiled.h"
#include "gt/viewer/query.h"
#include "gt/viewer/summary.h"
#include "index_blocks.h"
#include "index_codec.h"

#if GT_HAVE_ZSTD_COMPRESS
#include <zstd.h>
#endif

namespace gt::viewer {
namespace index_detail {

uint32_t LayoutKey() {
  uint32_t h = 2166136261u;
  auto mix = [&h](uint64_t v) {
    for (int i = 0; i < 8; ++i) h = (h ^ uint8_t(v >> (8 * i))) * 16777619u;
  };
  auto type = [&mix](size_t size, size_t align) { mix(size), mix(align); };
  type(sizeof(ClockSync), alignof(ClockSync));
  type(sizeof(ProcessRecord), alignof(ProcessRecord));
  type(sizeof(ThreadRecord), alignof(ThreadRecord));
  type(sizeof(DeviceRecord), alignof(DeviceRecord));
  type(sizeof(StreamRecord), alignof(StreamRecord));
  type(sizeof(KernelMetricRecord), alignof(KernelMetricRecord));
  type(sizeof(StallSample), alignof(StallSample));
  type(sizeof(NvtxArgRecord), alignof(NvtxArgRecord));
  type(sizeof(LodMax), alignof(LodMax));
  return h;
}

namespace {

// One column to be cut into blocks: where its values are now.
struct ColumnSrc {
  const void* data;
  uint64_t count;
  uint32_t elem;
  Codec codec;
};

// Encodes the small tables little-endian, fixed width; numbers the columns' blocks in visiting order.
class Encoder {
 public:
  std::vector<uint8_t> out;
  std::vector<ColumnSrc> columns;
  uint64_t blocks = 0;

  template <typename T>
  void Pod(const T& v) {
    static_assert(std::is_trivially_copyable_v<T> && (std::is_arithmetic_v<T> || std::is_enum_v<T>));
    const size_t at = out.size();
    out.resize(at + sizeof(T));
    std::memcpy(out.data() + at, &v, sizeof(T));
  }
  void Str(const std::string& s) {
    Pod(uint32_t(s.size()));
    out.insert(out.end(), s.begin(), s.end());
  }
  void Strs(const std::vector<std::string>& v) {
    Pod(uint64_t(v.size()));
    for (const auto& s : v) Str(s);
  }
  template <typename C>
  size_t Count(const C& c, size_t) {
    Pod(uint64_t(c.size()));
    return c.size();
  }
  template <typename C>
  void Col(const C& c) {
    using T = typename C::value_type;
    Ref(c.data(), c.size(), sizeof(T), CodecOf<T>());
  }
  template <typename T>
  void Array(const std::vector<T>& v) {
    static_assert(std::is_arithmetic_v<T>);
    Ref(v.data(), v.size(), sizeof(T), CodecOf<T>());
  }
  template <typename T>
  void Raw(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    Pod(uint64_t(v.size())), Pod(uint32_t(sizeof(T)));
    const size_t at = out.size();
    out.resize(at + v.size() * sizeof(T));
    if (!v.empty()) std::memcpy(out.data() + at, v.data(), v.size() * sizeof(T));
  }
  template <typename A, typename B>
  void Pairs(const std::vector<std::pair<A, B>>& v) {
    Pod(uint64_t(v.size()));
    for (const auto& [a, b] : v) Pod(a), Pod(b);
  }

 private:
  void Ref(const void* data, size_t count, uint32_t elem, Codec codec) {
    Pod(uint64_t(count)), Pod(uint64_t(blocks));
    if (count) columns.push_back({data, count, elem, codec});
    blocks += BlocksOf(count);
  }
};

using Clock = std::chrono::steady_clock;
double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

IndexSummaries ComputeSummaries(const TraceModel& model) {
  IndexSummaries s;
  SummarizeAll(model, &s.kernels, s.by_name);
  s.idle_gaps_json = IdleGapsWithDevicesJson(ExplainIdleGaps(model, kIndexIdleGaps));
  if (!model.kernel_metrics.empty() || !model.stall_samples.empty())
    s.profiled_json = ProfiledDataJson(CollectProfiledData(model));
  // Each track's distinct names: `seen` remembers the last track a name was met on, so an event costs one
  // load and compare, no hashing.
  std::vector<TrackId> seen(model.strings.size(), kNone);
  for (TrackId t = 0; t < model.tracks.size(); ++t) {
    const Track& track = model.tracks[t];
    const size_t begin = s.track_names.size();
    bool too_many = false;
    for (uint32_t d = 0; d < track.lane_count && !too_many; ++d) {
      const Lane& lane = model.lanes[track.first_lane + d];
      for (uint32_t i = 0; i < lane.size(); ++i) {
        const StringId name = lane.name[i];
        if (name >= seen.size() || seen[name] == t) continue;
        seen[name] = t;
        if (s.track_names.size() - begin == kTrackNamesMax) {
          too_many = true;
          break;
        }
        s.track_names.push_back(name);
      }
    }
    if (too_many) {
      s.track_names.resize(begin);
      s.track_names.push_back(kNone);
    } else {
      std::sort(s.track_names.begin() + begin, s.track_names.end());
    }
    s.track_name_ends.push_back(s.track_names.size());
  }
  return s;
}

constexpr uint32_t kSections = 4;

// Where the file goes: appended bytes, and the header rewritten at the end (it holds the sizes and
// checksums of what follows it).
struct Sink {
  virtual ~Sink() = default;
  virtual bool Write(const void* p, uint64_t n) = 0;
  virtual bool Patch(const void* p, uint64_t n) = 0;  // at offset 0
};

// Compresses one block (as differences for ascending int64 columns). Falls back to the raw bytes when
// zstd does not shrink them or this build has no compressor (wasm): kStoredFlag in the directory says so.
// Values of more than one byte are byte-shuffled before zstd (every value's byte 0, then every byte 1, ...):
// a column's high bytes are mostly equal, which makes long runs zstd's fastest level finds at once (about
// twice the build speed and two thirds of the size of unshuffled blocks: docs/benchmarks.md, "index 2.1").
class BlockCompressor {
 public:
  BlockCompressor() {
#if GT_HAVE_ZSTD_COMPRESS
    cctx_ = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, 1);  // negative levels: 1.7-1.9x the .gtrace
#endif
  }
  ~BlockCompressor() {
#if GT_HAVE_ZSTD_COMPRESS
    ZSTD_freeCCtx(cctx_);
#endif
  }
  // Returns the bytes to write and whether they are compressed.
  std::pair<std::span<const uint8_t>, bool> Compress(const ColumnSrc& c, uint64_t block) {
    const uint64_t first = block * kBlockValues;
    const uint64_t n = std::min<uint64_t>(kBlockValues, c.count - first);
    const size_t raw_bytes = size_t(n * c.elem);
    const uint8_t* raw = static_cast<const uint8_t*>(c.data) + first * c.elem;
#if GT_HAVE_ZSTD_COMPRESS
    // Delta and shuffle in one pass over the block (index_shuffle.cc); the unshuffled differences are only
    // needed when zstd cannot shrink the block, which a compressible column's blocks almost never are.
    const uint8_t* packed = raw;
    if (c.codec == Codec::kDelta64 || c.elem > 1) {
      shuffled_.resize(raw_bytes);
      if (c.codec == Codec::kDelta64)
        DeltaShuffle64(raw, size_t(n), shuffled_.data());
      else
        ShuffleBytes(raw, size_t(n), c.elem, shuffled_.data());
      packed = shuffled_.data();
    }
    out_.resize(ZSTD_compressBound(raw_bytes));
    const size_t z = ZSTD_compress2(cctx_, out_.data(), out_.size(), packed, raw_bytes);
    if (!ZSTD_isError(z) && z < raw_bytes) return {{out_.data(), z}, true};
#endif
    return Stored(c, raw, size_t(n));
  }

 private:
  // The block as it is stored uncompressed: its values, or for int64 columns their differences.
  std::pair<std::span<const uint8_t>, bool> Stored(const ColumnSrc& c, const uint8_t* raw, size_t n) {
    if (c.codec != Codec::kDelta64) return {{raw, n * c.elem}, false};
    delta_.resize(n * 8);
    Delta64(raw, n, delta_.data());  // wraps: the reader's prefix sum wraps back
    return {{delta_.data(), n * 8}, false};
  }

#if GT_HAVE_ZSTD_COMPRESS
  std::vector<uint8_t> shuffled_;
  ZSTD_CCtx* cctx_ = nullptr;
#endif
  std::vector<uint8_t> delta_;
  std::vector<uint8_t> out_;
};

// The whole file in one sequential pass: header and section table (placeholders, patched at the end), the
// model and summaries sections, the blocks, then the directory. The writer holds no copy of the events:
// one block at a time is compressed from the model's own arrays.
bool Emit(const TraceModel& model, const IndexSummaries& summaries, const IndexSource& source, Sink& sink,
          uint64_t* file_bytes, unsigned threads) {
  GT_ASSERT(source.tag.size() <= kIndexTagMax);
  Encoder meta;
  VisitModel(meta, model);
  Encoder sums;
  VisitSummaries(sums, summaries);
  GT_ASSERT(sums.columns.empty());

  const uint64_t meta_offset = AlignUp(kHeaderBytes + kSections * kSectionEntryBytes);
  const uint64_t sums_offset = AlignUp(meta_offset + meta.out.size());
  const uint64_t blocks_offset = AlignUp(sums_offset + sums.out.size());
  std::vector<uint8_t> h(blocks_offset, 0);
  std::memcpy(h.data() + meta_offset, meta.out.data(), meta.out.size());
  std::memcpy(h.data() + sums_offset, sums.out.data(), sums.out.size());
  if (!sink.Write(h.data(), h.size())) return false;

  std::vector<uint8_t> dir(meta.blocks * kDirEntryBytes);
  uint64_t at = 0, block = 0;
  auto put = [&](std::span<const uint8_t> bytes, bool compressed) {
    if (!sink.Write(bytes.data(), bytes.size())) return false;
    uint8_t* e = dir.data() + block * kDirEntryBytes;
    Store(e, at), Store(e + 8, uint32_t(bytes.size()) | (compressed ? 0 : kStoredFlag));
    Store(e + 12, Crc32c(0, bytes.data(), bytes.size()));
    at += bytes.size(), ++block;
    return true;
  };
  if (threads <= 1) {
    BlockCompressor z;
    for (const ColumnSrc& c : meta.columns)
      for (uint64_t b = 0; b < BlocksOf(c.count); ++b) {
        const auto [bytes, compressed] = z.Compress(c, b);
        if (!put(bytes, compressed)) return false;
      }
  } else {
#if defined(__EMSCRIPTEN__)
    GT_ASSERT(false && "threaded index writes need threads");
#else
    // Windows of blocks compressed in parallel (thread t takes every t-th), written in order: the same file
    // as one thread writes, memory bounded by the window.
    std::vector<std::pair<const ColumnSrc*, uint64_t>> jobs;
    for (const ColumnSrc& c : meta.columns)
      for (uint64_t b = 0; b < BlocksOf(c.count); ++b) jobs.emplace_back(&c, b);
    const size_t window = 64 * size_t(threads);
    std::vector<std::vector<uint8_t>> out(window);
    std::vector<char> compressed(window);
    std::vector<BlockCompressor> z(threads);
    for (size_t w0 = 0; w0 < jobs.size(); w0 += window) {
      const size_t n = std::min(window, jobs.size() - w0);
      std::vector<std::thread> pool;
      for (unsigned t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
          for (size_t k = t; k < n; k += threads) {
            const auto [bytes, c] = z[t].Compress(*jobs[w0 + k].first, jobs[w0 + k].second);
            out[k].assign(bytes.begin(), bytes.end());
            compressed[k] = c;
          }
        });
      for (auto& th : pool) th.join();
      for (size_t k = 0; k < n; ++k)
        if (!put(out[k], compressed[k])) return false;
    }
#endif
  }
  GT_ASSERT(block == meta.blocks);
  static const uint8_t kZeros[kAlign] = {};
  const uint64_t dir_offset = AlignUp(blocks_offset + at);
  if (!sink.Write(kZeros, dir_offset - blocks_offset - at) || !sink.Write(dir.data(), dir.size()))
    return false;
  *file_bytes = dir_offset + dir.size();

  struct Entry {
    uint32_t kind;
    uint64_t offset, bytes;
    uint32_t crc;
  };
  // The blocks section has no checksum of its own: each block has one in the directory, verified when the
  // block is first read (open does not read the blocks).
  const Entry entries[kSections] = {
      {kSectionModel, meta_offset, meta.out.size(), Crc32c(0, meta.out.data(), meta.out.size())},
      {kSectionSummaries, sums_offset, sums.out.size(), Crc32c(0, sums.out.data(), sums.out.size())},
      {kSectionBlocks, blocks_offset, at, 0},
      {kSectionDirectory, dir_offset, dir.size(), Crc32c(0, dir.data(), dir.size())},
  };
  h.resize(kHeaderBytes + kSections * kSectionEntryBytes);
  for (uint32_t i = 0; i < kSections; ++i) {
    uint8_t* e = h.data() + kHeaderBytes + i * kSectionEntryBytes;
    Store(e, entries[i].kind), Store(e + 8, entries[i].offset), Store(e + 16, entries[i].bytes),
        Store(e + 24, entries[i].crc);
  }
  std::memcpy(h.data(), kMagic, sizeof kMagic);
  const IndexVersion version = CurrentIndexVersion();
  Store(h.data() + kOffMajor, version.major), Store(h.data() + kOffMinor, version.minor);
  Store(h.data() + kOffLayout, LayoutKey());
  Store(h.data() + kOffFileBytes, *file_bytes);
  Store(h.data() + kOffSourceBytes, source.bytes);
  h[kOffTagLen] = uint8_t(source.tag.size());
  std::memcpy(h.data() + kOffTag, source.tag.data(), source.tag.size());
  Store(h.data() + kOffSectionCount, kSections);
  Store(h.data() + kOffTableCrc, Crc32c(0, h.data() + kHeaderBytes, kSections * kSectionEntryBytes));
  Store(h.data() + kOffHeaderCrc, Crc32c(0, h.data(), kOffHeaderCrc));
  return sink.Patch(h.data(), h.size());
}

}  // namespace
}  // namespace index_detail

IndexSource FingerprintBytes(std::span<const uint8_t> bytes) {
  char tag[32];
  std::snprintf(tag, sizeof tag, "crc32c:%08x", Crc32c(0, bytes.data(), bytes.size()));
  return {bytes.size(), tag};
}

std::vector<uint8_t> EncodeIndex(const TraceModel& model, const IndexSource& source) {
  using namespace index_detail;
  struct VectorSink final : Sink {
    std::vector<uint8_t> out;
    bool Write(const void* p, uint64_t n) override {
      out.insert(out.end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + n);
      return true;
    }
    bool Patch(const void* p, uint64_t n) override {
      std::memcpy(out.data(), p, n);
      return true;
    }
  } sink;
  uint64_t file_bytes = 0;
  Emit(model, ComputeSummaries(model), source, sink, &file_bytes, 1);
  GT_ASSERT(sink.out.size() == file_bytes);
  return std::move(sink.out);
}

Status WriteIndex(const TraceModel& model, const IndexSource& source, const std::string& path,
                  IndexWriteStats* stats, unsigned threads) {
  using namespace index_detail;
  if (source.tag.size() > kIndexTagMax) return InvalidArgument("index source tag longer than 64 bytes");
  auto t0 = Clock::now();
  const IndexSummaries summaries = ComputeSummaries(model);
  const double summaries_s = Seconds(t0);
  t0 = Clock::now();
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return IoError("cannot create " + tmp + ": " + std::strerror(errno));
  struct FileSink final : Sink {
    std::FILE* f;
    explicit FileSink(std::FILE* file) : f(file) {}
    bool Write(const void* p, uint64_t n) override { return std::fwrite(p, 1, n, f) == n; }
    bool Patch(const void* p, uint64_t n) override {
      return std::fseek(f, 0, SEEK_SET) == 0 && std::fwrite(p, 1, n, f) == n;
    }
  } sink(f);
  uint64_t file_bytes = 0;
  bool ok = Emit(model, summaries, source, sink, &file_bytes, threads);
  ok = std::fflush(f) == 0 && ok;
#if !defined(__EMSCRIPTEN__) && !defined(_WIN32)
  ok = ok && ::fsync(fileno(f)) == 0;  // the rename below must never publish a file whose bytes are not there
#endif
  const int err = errno;
  ok = std::fclose(f) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = ok ? errno : err;
    std::remove(tmp.c_str());
    return IoError("cannot write " + path + ": " + std::strerror(e));
  }
  if (stats) {
    stats->events = model.event_count + model.sample_count;
    stats->index_bytes = file_bytes;
    stats->summaries_s = summaries_s;
    stats->write_s = Seconds(t0);
  }
  return Status::Ok();
}

}  // namespace gt::viewer

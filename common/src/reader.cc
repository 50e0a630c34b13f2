// .gtrace reader: validates every byte it reads and loads every intact chunk of a damaged file.
//
// [SECTION] Decoders (columns -> structs)
// [SECTION] TraceReader::Impl: segment/chunk walk, resync, loss reporting
// [SECTION] Public API
//
// Work bound on hostile input: the walk only moves forward. A chunk whose header checksum validates is
// skipped by its declared size (its payload checksum is computed once); resync scans each byte at most once
// for a magic, and each candidate costs O(1) (a 24-byte header CRC). Allocations are capped by
// kMaxChunkRawSize, kMaxRecordsPerChunk and a string-table size proportional to the file size.
#include "gt/reader.h"

#include <zstd.h>

#include <sys/stat.h>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "format.h"
#include "schema.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if GT_HAVE_PEXT
#include <cpuid.h>
#endif

// Parallel chunk decoding needs threads; wasm builds without pthreads read on one thread.
#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)
#define GT_READER_THREADS 1
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#else
#define GT_READER_THREADS 0
#endif

namespace gt {
namespace format {
namespace {

GT_INLINE uint64_t Popcount(uint64_t x) {
#if defined(__POPCNT__) || defined(__wasm__)
  return uint64_t(__builtin_popcountll(x));
#else  // baseline x86-64 has no POPCNT; the builtin would call libgcc
  x -= (x >> 1) & 0x5555555555555555ull;
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
  return (x * 0x0101010101010101ull) >> 56;
#endif
}

// Bit i set: p[i] < 0x80 (ends a varint), for i < 64.
GT_INLINE uint64_t TerminatorBits(const uint8_t* p) {
#if defined(__SSE2__)
  uint64_t m = 0;
  for (int j = 0; j < 4; ++j)
    m |= uint64_t(uint32_t(_mm_movemask_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * j)))))
         << (16 * j);
  return ~m;
#else
  uint64_t m = 0;
  for (int j = 0; j < 8; ++j) {
    uint64_t x;
    std::memcpy(&x, p + 8 * j, 8);
    // One flag per byte at bits 0, 8, ..., 56; the multiply gathers them into the top byte (no carries).
    m |= ((((~x >> 7) & 0x0101010101010101ull) * 0x0102040810204080ull) >> 56) << (8 * j);
  }
  return m;
#endif
}

#if GT_HAVE_PEXT
bool DetectFastPext() {
  __builtin_cpu_init();  // runs from a static initializer, maybe before libgcc's
  if (!__builtin_cpu_supports("bmi2")) return false;
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return false;
  const bool amd_like = (ebx == 0x68747541 /* "Auth"enticAMD */ || ebx == 0x6f677948 /* "Hygo"nGenuine */);
  if (!amd_like) return true;
  __get_cpuid(1, &eax, &ebx, &ecx, &edx);
  const unsigned family = ((eax >> 8) & 0xf) + ((eax >> 20) & 0xff);
  return family >= 0x19;  // Zen 3 on; Zen 1/2 (and Hygon) microcode PEXT
}
bool fast_pext = DetectFastPext();
#endif

}  // namespace

bool FastPext() {
#if GT_HAVE_PEXT
  return fast_pext;
#else
  return false;
#endif
}

void SetFastPextForTesting(bool on) {
#if GT_HAVE_PEXT
  fast_pext = on && DetectFastPext();
#else
  (void)on;
#endif
}

namespace {

template <bool kPopcnt>
GT_INLINE VarintStats ScanVarintsImpl(const uint8_t* p, size_t n, uint64_t* ends) {
  auto popcount = [](uint64_t x) -> uint64_t {
    if constexpr (kPopcnt) return uint64_t(__builtin_popcountll(x));
    return Popcount(x);
  };
  VarintStats s;
  uint64_t last = ~0ull;  // as if byte -1 ended a value: the first value starts at byte 0
  const size_t words = (n + 63) / 64;
  for (size_t w = 0; w < words; ++w) {
    uint64_t e = TerminatorBits(p + 64 * w);
    if (w + 1 == words && n % 64 != 0) e &= (1ull << (n % 64)) - 1;
    ends[w] = e;
    const uint64_t prev1 = (e << 1) | (last >> 63), prev2 = (e << 2) | (last >> 62);
    s.values += popcount(e);
    s.one += popcount(e & prev1);
    s.two += popcount(e & ~prev1 & prev2);
    last = e;
  }
  return s;
}

#if GT_HAVE_PEXT
// The POPCNT instruction instead of a dozen bit operations, three times per 64 bytes.
__attribute__((target("popcnt"))) VarintStats ScanVarintsPopcnt(const uint8_t* p, size_t n, uint64_t* ends) {
  return ScanVarintsImpl<true>(p, n, ends);
}
const bool kHavePopcnt = (__builtin_cpu_init(), __builtin_cpu_supports("popcnt"));
#endif

}  // namespace

VarintStats ScanVarints(const uint8_t* p, size_t n, uint64_t* ends) {
#if GT_HAVE_PEXT
  if (kHavePopcnt) return ScanVarintsPopcnt(p, n, ends);
#endif
  return ScanVarintsImpl<false>(p, n, ends);
}

}  // namespace format

using namespace format;

// ================================================================================================================
// [SECTION] Decoders
// ================================================================================================================
namespace {

#define GT_DELIVER(R, Method, field)                 \
  void Deliver(TraceSink& s, std::span<const R> r) { \
    s.Method(r);                                     \
  }
GT_FOR_EACH_RECORD_TYPE(GT_DELIVER)
#undef GT_DELIVER

std::string Offset(size_t pos) {
  return "offset " + std::to_string(pos);
}

std::string KindLabel(uint16_t type) {
  if (type == kChunkEndOfSegment) return "end-of-segment";
  if (type >= 1 && type <= uint16_t(kLastRecordKind)) return RecordKindName(RecordKind(type));
  return "type " + std::to_string(type);
}

bool IsKnownType(uint16_t type) {
  return type == kChunkEndOfSegment || (type >= 1 && type <= uint16_t(kLastRecordKind));
}

// Decompresses and decodes record chunks. Holds every per-chunk scratch buffer, so each thread of a parallel
// read has its own.
struct DecodeContext {
  SegmentVersion version;
  const StringId* smap = nullptr;  // segment-local string id -> global (ids >= smap_size read as 0)
  uint64_t smap_size = 0;
  const uint8_t* file_end = nullptr;  // readable memory ends here (uncompressed payloads)
};

class ChunkDecoder {
 public:
  ChunkDecoder() : dctx_(ZSTD_createDCtx()) {}
  ~ChunkDecoder() { ZSTD_freeDCtx(dctx_); }
  ChunkDecoder(const ChunkDecoder&) = delete;
  ChunkDecoder& operator=(const ChunkDecoder&) = delete;

  Status Decompress(const ChunkHeader& h, const uint8_t* payload, const uint8_t* file_end,
                    const uint8_t** raw) {
    if (!(h.flags & kChunkFlagZstd)) {
      if (h.stored_size != h.raw_size)
        return Corrupt("stored size differs from raw size of an uncompressed chunk");
      *raw = payload;
      raw_limit_ = file_end;
      return Status::Ok();
    }
    raw_.Clear();
    // Zeroed padding after the payload lets the column decoder skip per-value bounds checks (see limit_).
    uint8_t* dst = raw_.Reserve(h.raw_size + kDecodePadding);
    std::memset(dst + h.raw_size, 0, kDecodePadding);
    size_t n = ZSTD_decompressDCtx(dctx_, dst, h.raw_size, payload, h.stored_size);
    if (ZSTD_isError(n)) return Corrupt(std::string("zstd: ") + ZSTD_getErrorName(n));
    if (n != h.raw_size)
      return Corrupt("decompressed to " + std::to_string(n) + " bytes, header says " +
                     std::to_string(h.raw_size));
    *raw = dst;
    raw_limit_ = dst + h.raw_size + kDecodePadding;
    return Status::Ok();
  }

  // A record chunk (types 3..21): decompress, check, decode, deliver in batches.
  Status DecodeRecordChunk(TraceSink& sink, const ChunkHeader& h, const uint8_t* payload,
                           const DecodeContext& ctx) {
    const uint8_t* raw = nullptr;
    GT_RETURN_IF_ERROR(Decompress(h, payload, ctx.file_end, &raw));
    ColumnReader in{raw, raw + h.raw_size};
    raw_begin_ = raw;
    Status s = Internal("unhandled record kind");
    schema::ForEachRecordType([&](auto tag) {
      using R = typename decltype(tag)::Type;
      if (h.type == uint16_t(schema::KindOf<R>::kValue)) s = DecodeRecords<R>(sink, h, in, ctx);
    });
    return s;
  }

 private:
  template <class R>
  std::vector<R>& Buffer() {
    return std::get<std::vector<R>>(records_);
  }

  template <class R>
  Status DecodeRecords(TraceSink& sink, const ChunkHeader& h, ColumnReader& in, const DecodeContext& ctx) {
    static const uint32_t expected = schema::ColumnCount<R>();
    const char* kind = RecordKindName(schema::KindOf<R>::kValue);
    uint64_t ncols = in.Varint();
    if (in.bad || ncols > kMaxColumns) return Corrupt(std::string(kind) + " chunk: bad column count");
    uint32_t n = uint32_t(ncols);
    columns_.assign(std::max(n, expected), ColumnReader{});
    col_len_.resize(n);
    for (uint32_t i = 0; i < n; ++i) {
      uint64_t v = in.Varint();
      if ((v >> 1) > h.raw_size) in.bad = true;
      col_len_[i] = v;
    }
    if (in.bad) return Corrupt(std::string(kind) + " chunk: column table runs past the chunk");
    const uint8_t* p = in.p;
    uint32_t stored_columns = 0;  // columns that hold one value per record (the others repeat two values)
    for (uint32_t i = 0; i < n; ++i) {
      uint64_t len = col_len_[i] >> 1;
      if (len > uint64_t(in.end - p))
        return Corrupt(std::string(kind) + " chunk: column " + std::to_string(i) + " runs past the chunk");
      ColumnReader& c = columns_[i];
      c.p = p;
      c.end = p + len;
      p += len;
      if (col_len_[i] & 1) {
        c.repeat = true;
        c.repeat_next = c.Varint();
        c.repeat_rest = c.Varint();
        if (c.bad || !c.done())
          return Corrupt(std::string(kind) + " chunk: repeat column " + std::to_string(i) + " is malformed");
      } else {
        ++stored_columns;
      }
    }
    if (p != in.end) return Corrupt(std::string(kind) + " chunk: bytes after the last column");
    GT_RETURN_IF_ERROR(UpgradeRecordColumns(ctx.version, schema::KindOf<R>::kValue, expected, h.record_count,
                                            columns_.data(), &n, &defaults_));
    for (uint32_t i = 0; i < expected; ++i)  // columns inside the payload (not synthesized by an upgrade)
      if (columns_[i].p >= raw_begin_ && columns_[i].end <= in.end) columns_[i].limit = raw_limit_;
    if (stored_columns > 0 && uint64_t(h.record_count) > h.raw_size)
      return Corrupt(std::string(kind) + " chunk: " + std::to_string(h.record_count) +
                     " records cannot fit in " + std::to_string(h.raw_size) + " bytes");
    // Every stored column must hold exactly one value per record. Checked before decoding, so that records
    // can be handed to the sink batch by batch while they are still in cache: nothing of a malformed chunk
    // is delivered. (The decoder still checks; only an over-long varint, which no writer produces, is
    // caught there, after earlier batches of its chunk were delivered.)
    const std::vector<uint8_t>& types = schema::ColumnTypesOf<R>();
    ends_.resize(h.raw_size / 64 + expected + 1);
    uint64_t* ends = ends_.data();
    for (uint32_t i = 0; i < expected; ++i) {
      ColumnReader& c = columns_[i];
      if (c.repeat) continue;
      const uint64_t len = uint64_t(c.end - c.p), n = h.record_count;
      uint64_t values = 0;
      switch (types[i]) {
        case schema::EncodeColumn::kByte:
          values = len;
          break;
        case schema::EncodeColumn::kRaw8:
          values = len / 8 + (len % 8 != 0);
          break;
        default:
          if (c.limit && c.limit - c.end >= 64) {  // the bitmap scan may read 63 bytes past the column
            const VarintStats st = ScanVarints(c.p, len, ends);
            values = st.values;
            // Lengths that vary cost the byte loop a mispredicted branch per change; the bitmap reader
            // pays a constant cost per value instead. Past 1 in 8 values off the common length it is faster
            // (measured on the bench_format trace, with and without PEXT).
            const uint64_t same = std::max({st.one, st.two, st.values - st.one - st.two});
            if ((st.values - same) * 8 > st.values) {
              c.ends = ends;
              c.base = c.p;
            }
            ends += (len + 63) / 64;
          } else {
            values = schema::CountVarintEnds(c.p, len);
          }
          if (len > 0 && c.end[-1] >= 0x80) values = n + 1;  // ends inside a value
          break;
      }
      if (values != n || (types[i] == schema::EncodeColumn::kRaw8 && len % 8 != 0))
        return Corrupt(std::string(kind) + " chunk: column " + std::to_string(i) +
                       (values < n ? " ends early" : " has trailing bytes"));
    }
#if GT_HAVE_PEXT
    if (FastPext()) return DecodeBlocks<R, true>(sink, h, ctx);
#endif
    return DecodeBlocks<R, false>(sink, h, ctx);
  }

  template <class R, bool kPext>
  Status DecodeBlocks(TraceSink& sink, const ChunkHeader& h, const DecodeContext& ctx) {
    static const uint32_t expected = schema::ColumnCount<R>();
    const char* kind = RecordKindName(schema::KindOf<R>::kValue);
    std::vector<R>& out = Buffer<R>();
    const size_t count = h.record_count;
    out.resize(std::min(count, kDeliverBatch));
    R proto{};
    bool fill = false;
    for (size_t b = 0; b < count; b += schema::kBlock) {
      const size_t block = std::min(schema::kBlock, count - b);
      const size_t at = b % kDeliverBatch;
      if (b == schema::kBlock) {
        // From here on, columns that hold one value from the second record on are stamped from a prototype.
        schema::MarkFill mark{columns_.data()};
        schema::Visit(mark, out[1]);
        fill = mark.marked != 0;
        proto = out[1];
      }
      R* dst = out.data() + at;
      if (fill)
        for (size_t k = 0; k < block; ++k) std::memcpy(static_cast<void*>(dst + k), &proto, sizeof(R));
      schema::BlockDecoder<R, kPext> d{block, columns_.data(), ctx.smap, ctx.smap_size};
      schema::Visit(d, *dst);
      if (at + block == kDeliverBatch || b + block == count) {
        for (uint32_t i = 0; i < expected; ++i)
          if (columns_[i].bad)
            return Corrupt(std::string(kind) + " chunk: column " + std::to_string(i) +
                           " holds a malformed value");
        Deliver(sink, std::span<const R>(out.data(), at + block));
      }
    }
    for (uint32_t i = 0; i < expected; ++i)
      if (!columns_[i].repeat && (columns_[i].bad || !columns_[i].done()))
        return Corrupt(std::string(kind) + " chunk: column " + std::to_string(i) +
                       (columns_[i].bad ? " ends early" : " has trailing bytes"));
    return Status::Ok();
  }

  ZSTD_DCtx* dctx_;
  ByteBuf raw_, defaults_;
  static constexpr size_t kDecodePadding = 10 * schema::kBlock;  // one block's worst case
  // Records are decoded into a buffer of this many and handed to the sink batch by batch (a few hundred KB:
  // decode and the sink's reads of them stay in L2).
  static constexpr size_t kDeliverBatch = 8 * schema::kBlock;
  const uint8_t* raw_begin_ = nullptr;  // the payload being decoded ...
  const uint8_t* raw_limit_ = nullptr;  // ... and the end of readable memory after it
  std::vector<ColumnReader> columns_;
  std::vector<uint64_t> col_len_;
  std::vector<uint64_t> ends_;  // terminator bitmaps of the chunk's varint columns
  std::tuple<std::vector<ProcessRecord>, std::vector<ThreadRecord>, std::vector<DeviceRecord>,
             std::vector<ContextRecord>, std::vector<StreamRecord>, std::vector<KernelRecord>,
             std::vector<MemcpyRecord>, std::vector<MemsetRecord>, std::vector<ApiCallRecord>,
             std::vector<NvtxRecord>, std::vector<SyncRecord>, std::vector<MemoryRecord>,
             std::vector<OverheadRecord>, std::vector<CounterDescriptor>, std::vector<CounterSample>,
             std::vector<KernelMetricRecord>, std::vector<StallSample>, std::vector<FlowRecord>,
             std::vector<LossRecord>, std::vector<NvtxArgRecord>, std::vector<NcclCollRecord>,
             std::vector<NcclChannelRecord>, std::vector<CpuStackNodeRecord>, std::vector<CpuSampleRecord>>
      records_;
};

// Keeps the records a worker decoded until the reading thread hands them to the real sink, in file order.
class CaptureSink final : public TraceSink {
 public:
  uint64_t count() const { return count_; }
  void Replay(TraceSink& sink) const {
    schema::ForEachRecordType([&](auto tag) {
      using R = typename decltype(tag)::Type;
      if (type_ == uint16_t(schema::KindOf<R>::kValue) && count_ > 0)
        Deliver(sink, std::span<const R>(reinterpret_cast<const R*>(bytes_.data()), count_));
    });
  }
#define GT_CAPTURE(R, Method, field)           \
  void Method(std::span<const R> r) override { \
    Append(r);                                 \
  }
  GT_FOR_EACH_RECORD_TYPE(GT_CAPTURE)
#undef GT_CAPTURE

 private:
  template <class R>
  void Append(std::span<const R> r) {
    static_assert(std::is_trivially_copyable_v<R>);
    type_ = uint16_t(schema::KindOf<R>::kValue);
    const size_t old = bytes_.size();
    bytes_.resize(old + r.size_bytes());  // operator new's alignment suits every record struct
    std::memcpy(bytes_.data() + old, r.data(), r.size_bytes());
    count_ += r.size();
  }
  std::vector<uint8_t> bytes_;
  uint16_t type_ = 0;
  uint64_t count_ = 0;
};

// One record chunk of a parallel Step: found by the walk, decoded by any thread, delivered by the reading
// one.
struct Job {
  ChunkHeader h;
  const uint8_t* payload = nullptr;
  size_t chunk_start = 0, chunk_end = 0;
  std::string label;
  bool is_loss = false;  // not a chunk: a loss record found by the walk, delivered at its place
  LossRecord loss;
  DecodeContext ctx;
  Status status;
  CaptureSink out;
};

}  // namespace

// ================================================================================================================
// [SECTION] TraceReader::Impl
// ================================================================================================================
class TraceReader::Impl {
 public:
  Status Open(std::span<const uint8_t> bytes) {
    bytes_ = bytes;
    report_ = LoadReport{};
    report_.bytes_total = bytes.size();
    pos_ = 0;
    done_ = false;
    opened_ = false;
    if (!LooksLikeGtrace(bytes)) {
      if (bytes.size() < sizeof kSegmentMagic &&
          std::memcmp(bytes.data(), kSegmentMagic, bytes.size()) == 0 && !bytes.empty())
        return Truncated("file is " + std::to_string(bytes.size()) + " bytes, shorter than the " +
                         std::to_string(kSegmentHeaderSize) + "-byte .gtrace header");
      return Corrupt("not a .gtrace file (bad magic; expected \"GTRACE\" header)");
    }
    if (bytes.size() < kSegmentHeaderSize)
      return Truncated("file is " + std::to_string(bytes.size()) + " bytes, shorter than the " +
                       std::to_string(kSegmentHeaderSize) + "-byte .gtrace header");
    if (GetU32(bytes.data() + 16) != Crc32c(0, bytes.data(), 16))
      return Corrupt("the .gtrace file header is damaged (checksum mismatch at offset 0)");
    SegmentVersion v{GetU16(bytes.data() + 10), GetU16(bytes.data() + 12)};
    GT_RETURN_IF_ERROR(CheckSegmentVersion(v));
    report_.version_major = v.major;
    report_.version_minor = v.minor;
    // A distinct string costs more than one byte even compressed, so a string-id table larger than the file
    // is hostile input; the cap keeps its allocation proportional to the file.
    smap_cap_ = 1024 + uint64_t(bytes.size());
    opened_ = true;
    return Status::Ok();
  }

  void Step(TraceSink& sink, uint32_t max_chunks) {
    if (!opened_) {
      done_ = true;
      return;
    }
#if GT_READER_THREADS
    if (threads_ > 1) return StepParallel(sink, max_chunks);
#endif
    for (uint32_t i = 0; i < max_chunks && !done_; ++i) StepOne(sink);
  }

  void SetThreads(unsigned n) {
#if GT_READER_THREADS
    if (n == 0) n = std::max(1u, std::thread::hardware_concurrency());
    threads_ = std::min(n, 256u);
#else
    (void)n;
    threads_ = 1;  // no threads in this build (wasm without pthreads)
#endif
  }

  bool done() const {
    return done_ || !opened_;
  }
  double progress() const {
    return bytes_.empty() ? 1.0 : double(pos_) / double(bytes_.size());
  }
  const LoadReport& report() const {
    return report_;
  }

 private:
  size_t remaining() const {
    return bytes_.size() - pos_;
  }
  const uint8_t* at(size_t p) const {
    return bytes_.data() + p;
  }

  bool SegmentHeaderAt(size_t p) const {
    return bytes_.size() - p >= kSegmentHeaderSize &&
           std::memcmp(at(p), kSegmentMagic, sizeof kSegmentMagic) == 0 &&
           GetU32(at(p + 16)) == Crc32c(0, at(p), 16);
  }

  // A chunk header is plausible when magic, header checksum and size limits all hold.
  bool ChunkHeaderAt(size_t p, ChunkHeader* h) const {
    if (bytes_.size() - p < kChunkHeaderSize) return false;
    const uint8_t* b = at(p);
    if (std::memcmp(b, kChunkMagic, 4) != 0 || GetU32(b + 24) != Crc32c(0, b, 24)) return false;
    h->type = GetU16(b + 4);
    h->flags = GetU16(b + 6);
    h->record_count = GetU32(b + 8);
    h->raw_size = GetU32(b + 12);
    h->stored_size = GetU32(b + 16);
    h->payload_crc = GetU32(b + 20);
    return h->raw_size <= kMaxChunkRawSize && h->stored_size <= ZSTD_COMPRESSBOUND(kMaxChunkRawSize) &&
           h->record_count <= kMaxRecordsPerChunk;
  }

  // Next offset >= from holding a valid segment or chunk header (or the end). Each byte is looked at once.
  size_t ScanForHeader(size_t from, size_t limit, bool segments_only) const {
    size_t p = from;
    while (p < limit) {
      const void* g = std::memchr(at(p), 'G', limit - p);
      if (!g) return limit;
      p = size_t(static_cast<const uint8_t*>(g) - bytes_.data());
      ChunkHeader h;
      if (SegmentHeaderAt(p) || (!segments_only && ChunkHeaderAt(p, &h))) return p;
      ++p;
    }
    return limit;
  }

  void Problem(std::string text) {
    if (report_.problems.size() < 100)
      report_.problems.push_back(std::move(text));
    else if (report_.problems.size() == 100)
      report_.problems.push_back("... further problems omitted");
  }

  StringId SyntheticString(TraceSink& sink, std::string_view s) {
    StringId id = next_global_++;
    sink.OnStrings(id, std::span<const std::string_view>(&s, 1));
    return id;
  }

  void EmitLoss(TraceSink& sink, bool truncation, uint64_t count, const std::string& detail) {
    StringId& name_id = truncation ? truncated_name_ : lost_name_;
    if (name_id == 0) name_id = SyntheticString(sink, truncation ? "file_truncated" : "chunk_lost");
    LossRecord r;
    r.name = name_id;
    r.severity = uint8_t(Severity::kDataLoss);
    r.count = count;
    r.detail = SyntheticString(sink, detail);
    if (collecting_) {  // a parallel Step: delivered in file order, between the records around it
      Job& j = jobs_.emplace_back();
      j.is_loss = true;
      j.loss = r;
      return;
    }
    if (walk_out_) {  // a Walk: delivered by Settle, between the chunks around it
      PendingChunk& c = walk_out_->emplace_back();
      c.is_loss = true;
      c.loss = r;
      return;
    }
    sink.OnLoss(std::span<const LossRecord>(&r, 1));
  }

  void LoseChunk(TraceSink& sink, size_t from, size_t to, const std::string& what) {
    ++report_.chunks_lost;
    report_.bytes_lost += to - from;
    std::string detail = what + " (bytes " + std::to_string(from) + ".." + std::to_string(to) + " skipped)";
    Problem(detail);
    EmitLoss(sink, false, 1, detail);
  }

  void Truncate(TraceSink& sink, size_t from, const std::string& what) {
    report_.truncated = true;
    report_.bytes_lost += bytes_.size() - from;
    segment_ended_ = true;  // reported here; Finish() must not report it again
    Problem(what);
    EmitLoss(sink, true, 1, what);
    pos_ = bytes_.size();
    done_ = true;
  }

  void Finish(TraceSink& sink) {
    done_ = true;
    if (in_segment_ && !segment_ended_) {
      report_.truncated = true;
      std::string what = "segment " + std::to_string(report_.segments) +
                         " has no end-of-segment marker: the writer did not finish (crashed, killed or still "
                         "running); records after its last flush are missing";
      Problem(what);
      EmitLoss(sink, true, 1, what);
    }
  }

  void StartSegment(TraceSink& sink) {
    if (in_segment_ && !segment_ended_) {
      report_.truncated = true;
      std::string what = "segment " + std::to_string(report_.segments) +
                         " has no end-of-segment marker before the next segment at " + Offset(pos_) +
                         ": its writer did not finish";
      Problem(what);
      EmitLoss(sink, true, 1, what);
    }
    SegmentVersion v{GetU16(at(pos_ + 10)), GetU16(at(pos_ + 12))};
    Status s = CheckSegmentVersion(v);
    ++report_.segments;
    if (!s.ok()) {
      size_t next = ScanForHeader(pos_ + kSegmentHeaderSize, bytes_.size(), /*segments_only=*/true);
      LoseChunk(sink, pos_, next, "segment " + std::to_string(report_.segments) + " skipped: " + s.message());
      in_segment_ = false;
      pos_ = next;
      return;
    }
    version_ = v;
    in_segment_ = true;
    segment_ended_ = false;
    smap_.assign(1, 0);
    pos_ += kSegmentHeaderSize;
  }

  void StepOne(TraceSink& sink) {
    if (pos_ >= bytes_.size()) return Finish(sink);
    if (remaining() >= sizeof kSegmentMagic &&
        std::memcmp(at(pos_), kSegmentMagic, sizeof kSegmentMagic) == 0) {
      if (remaining() < kSegmentHeaderSize)
        return Truncate(sink, pos_, "file ends inside a segment header at " + Offset(pos_));
      if (SegmentHeaderAt(pos_)) return StartSegment(sink);
    }
    if (!in_segment_) return Resync(sink, "data outside any segment");
    if (remaining() < kChunkHeaderSize) {
      if (std::memcmp(at(pos_), kChunkMagic, std::min<size_t>(4, remaining())) == 0)
        return Truncate(sink, pos_, "file ends inside a chunk header at " + Offset(pos_));
      return Resync(sink, "damaged bytes");
    }
    ChunkHeader h;
    if (!ChunkHeaderAt(pos_, &h)) return Resync(sink, "damaged chunk header");

    const std::string label = KindLabel(h.type) + " chunk at " + Offset(pos_) +
                              (h.record_count ? " (" + std::to_string(h.record_count) + " records)" : "");
    size_t payload = pos_ + kChunkHeaderSize;
    if (h.stored_size > bytes_.size() - payload) {
      // Ends past EOF: a crash mid-write, or a crashed segment followed by a concatenated one.
      size_t next = ScanForHeader(payload, bytes_.size(), /*segments_only=*/true);
      if (next < bytes_.size()) {
        LoseChunk(sink, pos_, next, label + " cut short by the next segment");
        pos_ = next;
        return;
      }
      return Truncate(sink, pos_,
                      "file truncated: " + label + " needs " + std::to_string(h.stored_size) +
                          " payload bytes, " + std::to_string(bytes_.size() - payload) + " present");
    }
    size_t end = payload + h.stored_size;
    uint32_t crc = Crc32c(Crc32c(0, at(pos_), 20), at(payload), h.stored_size);
    if (crc != h.payload_crc) {
      size_t next = ScanForHeader(payload, end, /*segments_only=*/true);
      LoseChunk(sink, pos_, next, label + ": checksum mismatch");
      pos_ = next;
      return;
    }
    size_t chunk_start = pos_;
    pos_ = end;
    if (!IsKnownType(h.type) || (h.flags & ~kKnownChunkFlags) != 0) {
      ++report_.chunks_unknown;
      Problem("skipped " + label + (IsKnownType(h.type) ? " with unknown flags" : "") +
              ": written by a newer gtrace");
      return;
    }
    if (h.type == kChunkEndOfSegment) {
      segment_ended_ = true;
      ++report_.chunks_ok;
      return;
    }
    if (collecting_ && h.type != uint16_t(RecordKind::kMetadata) &&
        h.type != uint16_t(RecordKind::kStrings)) {
      Job& j = jobs_.emplace_back();
      j.h = h;
      j.payload = at(payload);
      j.chunk_start = chunk_start;
      j.chunk_end = end;
      j.label = label;
      j.ctx = Context();  // smap_ may grow later in this Step; the job sees only the ids defined before it
      return;
    }
    if (walk_out_ && h.type != uint16_t(RecordKind::kMetadata) && h.type != uint16_t(RecordKind::kStrings)) {
      PendingChunk& c = walk_out_->emplace_back();
      c.type = h.type;
      c.flags = h.flags;
      c.record_count = h.record_count;
      c.raw_size = h.raw_size;
      c.stored_size = h.stored_size;
      c.payload = at(payload);
      c.offset = chunk_start;
      c.end = end;
      c.version_major = version_.major;
      c.version_minor = version_.minor;
      c.string_map_size = smap_.size();  // ids defined later in the walk read as 0, as in Step()
      c.file_end = bytes_.data() + bytes_.size();
      return;
    }
    Status s = DecodeChunk(sink, h, at(payload));
    if (!s.ok()) {
      // pos_ stays at the chunk end: the header checksum held, so its size is trustworthy.
      LoseChunk(sink, chunk_start, end, label + ": " + s.message());
      return;
    }
    ++report_.chunks_ok;
  }

#if GT_READER_THREADS
  // Walks up to max_chunks chunks like the serial path, but only collects record chunks (metadata, strings,
  // losses are handled during the walk, in file order); then decodes the collected chunks on up to threads_
  // threads and delivers them, and the loss records of the walk, in file order. A Step stops at a segment
  // header so that its chunks share one string map. The sink sees the same records in the same order as from
  // the serial path; only strings chunks may arrive earlier (before records that precede them in the file).
  // (A chunk whose CRC holds but whose columns are malformed, which only a broken writer produces, is
  // reported when its turn comes, so its loss record's synthetic string ids can differ from the serial
  // path's.)
  void StepParallel(TraceSink& sink, uint32_t max_chunks) {
    const uint32_t window =
        std::max(1u, std::min(max_chunks, 4 * threads_));  // bounds decoded-but-held memory
    jobs_.clear();
    collecting_ = true;
    for (uint32_t i = 0; i < window && !done_; ++i) {
      if (!jobs_.empty() && remaining() >= sizeof kSegmentMagic &&
          std::memcmp(at(pos_), kSegmentMagic, sizeof kSegmentMagic) == 0)
        break;
      StepOne(sink);
    }
    collecting_ = false;
    RunJobs(sink);
  }

  void RunJobs(TraceSink& sink) {
    const size_t n = jobs_.size();
    if (n == 0) return;
    for (Job& j : jobs_) j.ctx.smap = smap_.data();  // the walk may have grown (moved) the map; ids kept
    const size_t workers = std::min<size_t>(threads_ - 1, n);  // this thread decodes too
    while (worker_dec_.size() < workers) worker_dec_.push_back(std::make_unique<ChunkDecoder>());
    std::atomic<size_t> next{0};
    std::vector<std::atomic<bool>> ready(n);
    std::mutex m;
    std::condition_variable cv;
    auto decode = [&](ChunkDecoder& d, size_t i) {
      Job& j = jobs_[i];
      if (!j.is_loss) j.status = d.DecodeRecordChunk(j.out, j.h, j.payload, j.ctx);
      {
        std::lock_guard<std::mutex> lock(m);
        ready[i].store(true);
      }
      cv.notify_all();
    };
    std::vector<std::thread> pool;
    for (size_t w = 0; w < workers; ++w)
      pool.emplace_back([&, w] {
        for (size_t i; (i = next.fetch_add(1)) < n;) decode(*worker_dec_[w], i);
      });
    for (size_t i = 0; i < n; ++i) {
      while (!ready[i].load()) {  // help while the next chunk in file order is not decoded yet
        size_t k = next.fetch_add(1);
        if (k < n) {
          decode(dec_, k);
          continue;
        }
        std::unique_lock<std::mutex> lock(m);
        cv.wait(lock, [&] { return ready[i].load(); });
      }
      Job& j = jobs_[i];
      if (j.is_loss) {
        sink.OnLoss(std::span<const LossRecord>(&j.loss, 1));
      } else if (j.status.ok()) {
        j.out.Replay(sink);
        report_.records += j.h.record_count;
        ++report_.chunks_ok;
      } else {
        LoseChunk(sink, j.chunk_start, j.chunk_end, j.label + ": " + j.status.message());
      }
      j.out = CaptureSink();  // release the records now, not at the end of the Step
    }
    for (std::thread& t : pool) t.join();
    jobs_.clear();
  }
#endif

  // Split reading (TraceReader::Walk/Decode/Settle): the walk of Step() with record chunks queued, not
  // decoded.
 public:
  void Walk(TraceSink& sink, uint32_t max_chunks, std::vector<PendingChunk>* pending) {
    if (!opened_) {
      done_ = true;
      return;
    }
    const size_t first = pending->size();
    walk_out_ = pending;
    for (uint32_t i = 0; i < max_chunks && !done_; ++i) {
      if (pending->size() > first && remaining() >= sizeof kSegmentMagic &&
          std::memcmp(at(pos_), kSegmentMagic, sizeof kSegmentMagic) == 0)
        break;
      StepOne(sink);
    }
    walk_out_ = nullptr;
    for (size_t i = first; i < pending->size(); ++i)
      (*pending)[i].string_map = smap_.data();  // final address
  }

  void Settle(const PendingChunk& c, const Status& decoded, TraceSink& sink) {
    if (c.is_loss) return sink.OnLoss(std::span<const LossRecord>(&c.loss, 1));
    if (decoded.ok()) {
      report_.records += c.record_count;
      ++report_.chunks_ok;
      return;
    }
    const std::string label = KindLabel(c.type) + " chunk at " + Offset(c.offset) +
                              (c.record_count ? " (" + std::to_string(c.record_count) + " records)" : "");
    LoseChunk(sink, c.offset, c.end, label + ": " + decoded.message());
  }

 private:
  void Resync(TraceSink& sink, const char* why) {
    size_t from = pos_;
    size_t next = ScanForHeader(pos_ + 1, bytes_.size(), /*segments_only=*/false);
    if (next >= bytes_.size()) {
      // Nothing valid follows: a torn tail (truncation) or damage up to the end.
      return Truncate(sink, from,
                      std::string(why) + " at " + Offset(from) + "; nothing readable follows (" +
                          std::to_string(bytes_.size() - from) + " bytes lost)");
    }
    LoseChunk(sink, from, next,
              std::string(why) + " at " + Offset(from) + ", resynchronized at " + Offset(next));
    pos_ = next;
  }

  DecodeContext Context() const {
    return DecodeContext{version_, smap_.data(), smap_.size(), bytes_.data() + bytes_.size()};
  }

  Status DecodeChunk(TraceSink& sink, const ChunkHeader& h, const uint8_t* payload) {
    if (h.type != uint16_t(RecordKind::kMetadata) && h.type != uint16_t(RecordKind::kStrings)) {
      Status s = dec_.DecodeRecordChunk(sink, h, payload, Context());
      if (s.ok()) report_.records += h.record_count;
      return s;
    }
    const uint8_t* raw = nullptr;
    GT_RETURN_IF_ERROR(dec_.Decompress(h, payload, bytes_.data() + bytes_.size(), &raw));
    ColumnReader in{raw, raw + h.raw_size};
    if (h.type == uint16_t(RecordKind::kMetadata)) return DecodeMetadata(sink, in);
    return DecodeStrings(sink, h, in);
  }

  Status DecodeMetadata(TraceSink& sink, ColumnReader& in) {
    TraceMetadata m;
    auto read_str = [&](std::string* out) {
      uint64_t n = in.Varint();
      const uint8_t* p = nullptr;
      if (in.bad || !in.Bytes(n, &p)) return false;
      out->assign(reinterpret_cast<const char*>(p), n);
      return true;
    };
    uint64_t n = in.Varint();
    if (in.bad || n > uint64_t(in.end - in.p) / 2) return Corrupt("metadata entry count out of range");
    m.entries.resize(n);
    for (auto& [k, v] : m.entries)
      if (!read_str(&k) || !read_str(&v)) return Corrupt("metadata entry runs past the chunk");
    uint64_t syncs = in.Varint();
    if (in.bad || syncs > uint64_t(in.end - in.p) / 2) return Corrupt("clock sync count out of range");
    m.clock_syncs.resize(syncs);
    for (auto& c : m.clock_syncs) {
      c.realtime_ns = Unzig(in.Varint());
      c.trace_ns = Unzig(in.Varint());
    }
    if (in.bad) return Corrupt("clock syncs run past the chunk");
    // Bytes after the known fields: a newer minor's additions, ignored.
    ++report_.records;
    sink.OnMetadata(m);
    return Status::Ok();
  }

  Status DecodeStrings(TraceSink& sink, const ChunkHeader& h, ColumnReader& in) {
    uint64_t first = in.Varint();
    uint64_t count = in.Varint();
    if (in.bad) return Corrupt("strings chunk header runs past the chunk");
    if (count != h.record_count) return Corrupt("strings chunk count differs from its header");
    if (first == 0 || first < smap_.size())
      return Corrupt("strings chunk redefines id " + std::to_string(first) + " (next expected " +
                     std::to_string(smap_.size()) + ")");
    if (count > uint64_t(in.end - in.p) || first + count > smap_cap_)
      return Corrupt("strings chunk claims more strings than the file can hold");
    lengths_.resize(count);
    uint64_t total = 0;
    for (auto& len : lengths_) {
      uint64_t l = in.Varint();
      if (l > kMaxChunkRawSize) l = kMaxChunkRawSize + 1ull;
      len = uint32_t(l);
      total += l;
    }
    if (in.bad || total != uint64_t(in.end - in.p))
      return Corrupt("string lengths do not match the chunk size");
    views_.resize(count);
    const char* p = reinterpret_cast<const char*>(in.p);
    for (size_t i = 0; i < count; ++i) {
      views_[i] = std::string_view(p, lengths_[i]);
      p += lengths_[i];
    }
    smap_.resize(first, 0);  // a gap = a lost strings chunk: those ids read as ""
    StringId global = next_global_;
    for (size_t i = 0; i < count; ++i) smap_.push_back(global + StringId(i));
    next_global_ += StringId(count);
    report_.records += count;
    sink.OnStrings(global, views_);
    return Status::Ok();
  }

  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
  bool opened_ = false, done_ = false;
  LoadReport report_;
  // segment state
  bool in_segment_ = false, segment_ended_ = false;
  SegmentVersion version_;
  std::vector<StringId> smap_{0};
  uint64_t smap_cap_ = 0;
  StringId next_global_ = 1;
  StringId lost_name_ = 0, truncated_name_ = 0;
  // scratch, reused chunk to chunk
  ChunkDecoder dec_;
  std::vector<uint32_t> lengths_;
  std::vector<std::string_view> views_;
  // Parallel decoding (SetThreads > 1): a Step's record chunks are decoded on threads and delivered in order.
  unsigned threads_ = 1;
  std::vector<Job> jobs_;
  std::vector<std::unique_ptr<ChunkDecoder>> worker_dec_;
  bool collecting_ = false;
  std::vector<PendingChunk>* walk_out_ = nullptr;  // set during Walk(): record chunks are queued here
};

struct TraceReader::Decoder::State {
  ChunkDecoder decoder;
};

// ================================================================================================================
// [SECTION] Public API
// ================================================================================================================
TraceReader::TraceReader() : impl_(std::make_unique<Impl>()) {}
TraceReader::~TraceReader() = default;
Status TraceReader::Open(std::span<const uint8_t> bytes) {
  return impl_->Open(bytes);
}
void TraceReader::Step(TraceSink& sink, uint32_t max_chunks) {
  impl_->Step(sink, max_chunks);
}
void TraceReader::SetThreads(unsigned threads) {
  impl_->SetThreads(threads);
}
bool TraceReader::done() const {
  return impl_->done();
}
double TraceReader::progress() const {
  return impl_->progress();
}
const LoadReport& TraceReader::report() const {
  return impl_->report();
}

TraceReader::Decoder::Decoder() : state_(std::make_unique<State>()) {}
TraceReader::Decoder::~Decoder() = default;
TraceReader::Decoder::Decoder(Decoder&&) noexcept = default;
TraceReader::Decoder& TraceReader::Decoder::operator=(Decoder&&) noexcept = default;

void TraceReader::Walk(TraceSink& sink, uint32_t max_chunks, std::vector<PendingChunk>* pending) {
  impl_->Walk(sink, max_chunks, pending);
}
Status TraceReader::Decode(const PendingChunk& c, TraceSink& sink, Decoder& decoder) {
  if (c.is_loss) return Status::Ok();
  ChunkHeader h;
  h.type = c.type;
  h.flags = c.flags;
  h.record_count = c.record_count;
  h.raw_size = c.raw_size;
  h.stored_size = c.stored_size;
  DecodeContext ctx{SegmentVersion{c.version_major, c.version_minor}, c.string_map, c.string_map_size,
                    c.file_end};
  return decoder.state_->decoder.DecodeRecordChunk(sink, h, c.payload, ctx);
}
void TraceReader::Settle(const PendingChunk& chunk, const Status& decoded, TraceSink& sink) {
  impl_->Settle(chunk, decoded, sink);
}

StatusOr<LoadReport> ReadTrace(std::span<const uint8_t> bytes, TraceSink& sink) {
  return ReadTrace(bytes, sink, 1);
}

StatusOr<LoadReport> ReadTrace(std::span<const uint8_t> bytes, TraceSink& sink, unsigned threads) {
  TraceReader reader;
  reader.SetThreads(threads);
  GT_RETURN_IF_ERROR(reader.Open(bytes));
  while (!reader.done()) reader.Step(sink, 256);
  return reader.report();
}

bool LooksLikeGtrace(std::span<const uint8_t> bytes) {
  return bytes.size() >= sizeof kSegmentMagic &&
         std::memcmp(bytes.data(), kSegmentMagic, sizeof kSegmentMagic) == 0;
}

StatusOr<std::string> ReadFileBytes(const std::string& path, uint64_t max_bytes) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    int e = errno;
    if (e == ENOENT) return NotFound("'" + path + "': no such file");
    return IoError("cannot open '" + path + "': " + std::strerror(e));
  }
  struct stat st {};
  if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
    std::fclose(f);
    return InvalidArgument("'" + path + "' is a directory");
  }
  std::string out;
  if (st.st_size > 0) {
    if (uint64_t(st.st_size) > max_bytes) {
      std::fclose(f);
      return ResourceExhausted("'" + path + "' is " + std::to_string(st.st_size) +
                               " bytes, over the limit of " + std::to_string(max_bytes));
    }
    out.reserve(size_t(st.st_size));
  }
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
    if (out.size() + n > max_bytes) {
      std::fclose(f);
      return ResourceExhausted("'" + path + "' is over the limit of " + std::to_string(max_bytes) + " bytes");
    }
    out.append(buf, n);
  }
  bool err = std::ferror(f);
  std::fclose(f);
  if (err) return IoError("error reading '" + path + "'");
  return out;
}

}  // namespace gt

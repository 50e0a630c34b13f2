// Internal: .gtrace v1 byte layout, varints, CRC32C and the byte buffers shared by the writer and the reader.
// docs/format.md is the normative description; the constants here must match it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

#include "gt/model.h"
#include "gt/status.h"

// The codec's per-field helpers must inline into the per-record loops; GCC otherwise keeps some out of line.
#if defined(__GNUC__) || defined(__clang__)
#define GT_INLINE inline __attribute__((always_inline))
#else
#define GT_INLINE inline
#endif

namespace gt::format {

// ---- versions (only format_upgrade.cc interprets them)
// --------------------------------------------------------
inline constexpr uint16_t kVersionMajor = 1;
// 1.1: ProcessRecord host, boot id, job, ranks; 1.2: nvtx_arg; 1.3: nccl_coll, nccl_channel;
// 1.4: cpu_stack_node, cpu_sample
inline constexpr uint16_t kVersionMinor = 4;
// The viewer index (.gtindex, a cache of the built viewer model; docs/format.md "The viewer index"): any
// change to its layout or to the model structs it holds bumps it, and an index of another version is rebuilt.
inline constexpr uint16_t kIndexVersionMajor = 2;
// 2.0: compressed column blocks (1.1: sampled CPU stacks); 2.1: a compressed block's values byte-shuffled;
// 2.2: the idle-gap explanations in the summaries; 2.3: the counter tables' timeline joins (ProfiledData)
inline constexpr uint16_t kIndexVersionMinor = 3;

// ---- segment header: 20 bytes
// -------------------------------------------------------------------------------- magic[10]
// "GTRACE\r\n\x1a\n" | u16 major | u16 minor | u16 flags | u32 crc32c(bytes 0..16)
inline constexpr uint8_t kSegmentMagic[10] = {'G', 'T', 'R', 'A', 'C', 'E', '\r', '\n', 0x1a, '\n'};
inline constexpr size_t kSegmentHeaderSize = 20;

// ---- chunk header: 28 bytes
// ---------------------------------------------------------------------------------- magic[4] "GTCK" | u16
// type | u16 flags | u32 record_count | u32 raw_size | u32 stored_size | u32 crc32c(header bytes 0..20 +
// stored payload) | u32 crc32c(header bytes 0..24)
inline constexpr uint8_t kChunkMagic[4] = {'G', 'T', 'C', 'K'};
inline constexpr size_t kChunkHeaderSize = 28;
inline constexpr uint16_t kChunkFlagZstd = 1 << 0;  // payload is one zstd frame; else stored raw
inline constexpr uint16_t kKnownChunkFlags = kChunkFlagZstd;
inline constexpr uint16_t kChunkEndOfSegment = 0x0100;  // no payload: the segment was finished cleanly

// ---- limits that keep hostile headers from allocating or looping
// --------------------------------------------
inline constexpr uint32_t kMaxChunkRawSize = 64u << 20;    // decompressed payload cap
inline constexpr uint32_t kMaxRecordsPerChunk = 1u << 18;  // writer clamps to this, reader rejects above
inline constexpr uint32_t kMaxColumns = 1024;

struct ChunkHeader {
  uint16_t type = 0;
  uint16_t flags = 0;
  uint32_t record_count = 0;
  uint32_t raw_size = 0;
  uint32_t stored_size = 0;
  uint32_t payload_crc = 0;
};

uint32_t Crc32c(uint32_t crc, const void* data, size_t n);  // crc: 0 to start, previous result to continue
uint32_t Crc32cPortable(uint32_t crc, const void* data, size_t n);  // the table version (wasm, old CPUs)

inline void PutU16(uint8_t* p, uint16_t v) {
  p[0] = uint8_t(v);
  p[1] = uint8_t(v >> 8);
}
inline void PutU32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
}
inline uint16_t GetU16(const uint8_t* p) {
  return uint16_t(p[0] | (p[1] << 8));
}
inline uint32_t GetU32(const uint8_t* p) {
  return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24);
}

GT_INLINE constexpr uint64_t Zig(int64_t v) {
  return (uint64_t(v) << 1) ^ uint64_t(v >> 63);
}
GT_INLINE int64_t Unzig(uint64_t v) {
  return int64_t((v >> 1) ^ (~(v & 1) + 1));
}

GT_INLINE size_t WriteVarint(uint8_t* p, uint64_t v) {
  // 1- and 2-byte values (most deltas, ids and sizes) take no loop.
  if (v < 0x80) {
    p[0] = uint8_t(v);
    return 1;
  }
  if (v < 0x4000) {
    p[0] = uint8_t(v) | 0x80;
    p[1] = uint8_t(v >> 7);
    return 2;
  }
  size_t n = 0;
  while (v >= 0x80) {
    p[n++] = uint8_t(v) | 0x80;
    v >>= 7;
  }
  p[n++] = uint8_t(v);
  return n;
}

// x86-64 has PEXT (BMI2), fast on Intel and on AMD from Zen 3 (microcoded before): used when the CPU says so.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__EMSCRIPTEN__)
#define GT_HAVE_PEXT 1
#else
#define GT_HAVE_PEXT 0
#endif
bool FastPext();                      // this CPU has a fast PEXT (decided once)
void SetFastPextForTesting(bool on);  // tests decode with and without it (ignored where unavailable)

// WriteVarint without a branch on the value's length (values below 2^56; longer ones take WriteVarint):
// faster where lengths vary from value to value, which the branches mispredict. Stores 8 bytes at p.
// kPdep: spread the 7-bit groups with PDEP (BMI2; only where FastPext()), else with three mask-shift steps.
template <bool kPdep>
GT_INLINE size_t WriteVarintFlat(uint8_t* p, uint64_t v) {
  if (v >> 56) [[unlikely]]
    return WriteVarint(p, v);
  // Bytes per value by leading zeros of v | 1, and the continuation bits of a value of that many bytes.
  static constexpr uint8_t kLen[64] = {10, 9, 9, 9, 9, 9, 9, 9, 8, 8, 8, 8, 8, 8, 8, 7, 7, 7, 7, 7, 7, 7,
                                       6,  6, 6, 6, 6, 6, 6, 5, 5, 5, 5, 5, 5, 5, 4, 4, 4, 4, 4, 4, 4, 3,
                                       3,  3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1};
  static constexpr uint64_t kCont[9] = {
      0, 0, 0x80, 0x8080, 0x808080, 0x80808080, 0x8080808080, 0x808080808080, 0x80808080808080};
  const size_t len = kLen[__builtin_clzll(v | 1)];
  uint64_t x;
#if GT_HAVE_PEXT
  if constexpr (kPdep) {
    asm("pdepq %2, %1, %0" : "=r"(x) : "r"(v), "r"(0x7f7f7f7f7f7f7f7full));
  } else
#endif
  {
    x = (v & 0x000000000fffffffull) | ((v << 4) & 0x0fffffff00000000ull);
    x = (x & 0x00003fff00003fffull) | ((x << 2) & 0x3fff00003fff0000ull);
    x = (x & 0x007f007f007f007full) | ((x << 1) & 0x7f007f007f007f00ull);
  }
  x |= kCont[len];
  std::memcpy(p, &x, 8);
  return len;
}

// Growable byte buffer without zero-initialisation (std::vector::resize would clear every byte it adds).
class ByteBuf {
 public:
  ByteBuf() = default;
  ByteBuf(const ByteBuf&) = delete;
  ByteBuf& operator=(const ByteBuf&) = delete;
  ByteBuf(ByteBuf&& o) noexcept : data_(o.data_), size_(o.size_), cap_(o.cap_) {
    o.data_ = nullptr, o.size_ = o.cap_ = 0;
  }
  ~ByteBuf() { std::free(data_); }

  GT_INLINE uint8_t* Reserve(size_t n) {
    if (cap_ - size_ < n) Grow(n);
    return data_ + size_;
  }
  void Commit(size_t n) { size_ += n; }
  GT_INLINE void PutVarint(uint64_t v) { size_ += WriteVarint(Reserve(10), v); }
  GT_INLINE void PutByte(uint8_t b) { *Reserve(1) = b, ++size_; }
  void Append(const void* p, size_t n) {
    if (n == 0) return;
    std::memcpy(Reserve(n), p, n);
    size_ += n;
  }
  void Clear() { size_ = 0; }
  // Gives memory back when a burst left a large buffer behind (keeps the writer's footprint bounded).
  void ShrinkTo(size_t max_cap) {
    if (cap_ > max_cap && size_ == 0) {
      std::free(data_);
      data_ = nullptr;
      cap_ = 0;
    }
  }
  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  size_t capacity() const { return cap_; }
  std::span<const uint8_t> span() const { return {data_, size_}; }

 private:
  __attribute__((noinline)) void Grow(size_t n) {
    size_t cap = cap_ ? cap_ * 2 : 256;
    while (cap - size_ < n) cap *= 2;
    auto* d = static_cast<uint8_t*>(std::realloc(data_, cap));
    GT_ASSERT_MSG(d != nullptr, "out of memory");
    data_ = d;
    cap_ = cap;
  }
  uint8_t* data_ = nullptr;
  size_t size_ = 0, cap_ = 0;
};

// Bounds-checked reader of one column. Errors are sticky (`bad`); values read after an error are 0, so the
// decode loop needs no branch per field and the chunk is rejected once at the end.
struct ColumnReader {
  const uint8_t* p = nullptr;
  const uint8_t* end = nullptr;
  uint64_t prev = 0;  // delta state
  bool bad = false;
  // A "repeat" column (docs/format.md): the first value, then `repeat_rest` for every other record. Decoded
  // by RepeatReader without touching bytes.
  bool repeat = false;
  uint64_t repeat_next = 0, repeat_rest = 0;
  // A repeat column whose field holds one value from the second record on: the decoder stamps those fields
  // from a prototype record, block by block, and skips the column.
  bool fill = false;
  // Readable memory ends here (>= end; null = end): the decoder may read a block's values without a bounds
  // check per value when the block cannot read past it, and checks p <= end once after the block.
  const uint8_t* limit = nullptr;
  // Varint terminator bitmap of the column (bit i of word w: byte base[64 w + i] ends a value), set when its
  // values have mixed lengths: MaskReader then decodes them without a branch on each value's length.
  const uint64_t* ends = nullptr;
  const uint8_t* base = nullptr;

  GT_INLINE uint64_t Varint() {
    if (end - p >= 10) [[likely]] {
      uint64_t b = *p++;
      if (b < 0x80) return b;
      uint64_t r = b & 0x7f;
      for (int s = 7; s < 64; s += 7) {
        b = *p++;
        r |= (b & 0x7f) << s;
        if (b < 0x80) return r;
      }
      bad = true;
      return 0;
    }
    return VarintSlow();
  }
  __attribute__((noinline)) uint64_t VarintSlow() {
    uint64_t r = 0;
    for (int s = 0; s < 64; s += 7) {
      if (p >= end) {
        bad = true;
        return 0;
      }
      uint64_t b = *p++;
      r |= (b & 0x7f) << s;
      if (b < 0x80) return r;
    }
    bad = true;
    return 0;
  }
  GT_INLINE uint8_t Byte() {
    if (p < end) [[likely]]
      return *p++;
    bad = true;
    return 0;
  }
  GT_INLINE double F64() {
    double d = 0;
    if (end - p >= 8) [[likely]] {
      std::memcpy(&d, p, 8);
      p += 8;
    } else {
      bad = true;
    }
    return d;
  }
  bool Bytes(size_t n, const uint8_t** out) {
    if (size_t(end - p) < n) {
      bad = true;
      return false;
    }
    *out = p;
    p += n;
    return true;
  }
  bool done() const { return p == end; }
};

struct VarintResult {
  uint64_t value;
  size_t len;  // 0: longer than 10 bytes
};
// Out of line and by value, so that the decode loops' cursors stay in registers.
__attribute__((noinline)) inline VarintResult VarintAt(const uint8_t* p) {
  uint64_t r = 0;
  for (size_t i = 0; i < 10; ++i) {
    const uint64_t b = p[i];
    r |= (b & 0x7f) << (7 * i);
    if (b < 0x80) return {r, i + 1};
  }
  return {0, 0};
}

// A ColumnReader's cursor for a block whose worst case (10 bytes per value) stays inside readable memory:
// no bounds check per value. Running past the column's end is detected after the block (p > end).
struct UncheckedReader {
  const uint8_t* p;
  uint64_t prev;
  bool bad;
  GT_INLINE uint64_t Varint() {
    // Most values here take 1 or 2 bytes: both are straight-line; longer ones take the loop.
    const uint64_t b0 = p[0];
    if (b0 < 0x80) [[likely]] {
      p += 1;
      return b0;
    }
    const uint64_t b1 = p[1];
    if (b1 < 0x80) [[likely]] {
      p += 2;
      return (b0 & 0x7f) | (b1 << 7);
    }
    const uint64_t b2 = p[2];
    if (b2 < 0x80) {
      p += 3;
      return (b0 & 0x7f) | ((b1 & 0x7f) << 7) | (b2 << 14);
    }
    const VarintResult r = VarintAt(p);
    p += r.len;
    bad |= r.len == 0;
    return r.value;
  }
  GT_INLINE uint8_t Byte() { return *p++; }
  GT_INLINE double F64() {
    double d;
    std::memcpy(&d, p, 8);
    p += 8;
    return d;
  }
};

// The 7-bit groups of a varint's bytes x (the value's n + 1 bytes, n < 8, in the low bytes; others ignored)
// packed into one integer.
template <bool kPext>
GT_INLINE uint64_t PackVarint(uint64_t x, size_t n) {
  // kKeep[n]: the payload bits of bytes 0..n.
  static constexpr uint64_t kKeep[8] = {
      0x7full,         0x7f7full,         0x7f7f7full,         0x7f7f7f7full,
      0x7f7f7f7f7full, 0x7f7f7f7f7f7full, 0x7f7f7f7f7f7f7full, 0x7f7f7f7f7f7f7f7full};
#if GT_HAVE_PEXT
  if constexpr (kPext) {
    uint64_t r;
    // Inline asm rather than the intrinsic: only reached when FastPext(), and the code around it stays
    // baseline x86-64 (no target attribute to spread through the inlined decode loops).
    asm("pextq %2, %1, %0" : "=r"(r) : "r"(x), "r"(kKeep[n]));
    return r;
  }
#endif
  uint64_t v = x & kKeep[n];
  v = (v & 0x007f007f007f007full) | ((v >> 1) & 0x3f803f803f803f80ull);
  v = (v & 0x00003fff00003fffull) | ((v >> 2) & 0x0fffc0000fffc000ull);
  return (v & 0x000000000fffffffull) | ((v >> 4) & 0x00fffffff0000000ull);
}

// A cursor over a column with a terminator bitmap (ColumnReader::ends): each value's end comes from the
// bitmap, not from its bytes, so the next value's load does not wait for this one's length (the byte loop
// serializes on it, or mispredicts when lengths vary). Needs 8 readable bytes after the column; the column
// was checked to hold exactly one terminator per value before decoding.
template <bool kPext>
struct MaskReader {
  const uint8_t* base;
  const uint64_t* ends;
  size_t start;   // offset of the next value
  size_t word;    // bitmap word holding its terminator
  uint64_t bits;  // terminators of ends[word] not consumed yet
  uint64_t prev;
  bool bad;

  GT_INLINE MaskReader(const ColumnReader& c)
      : base(c.base),
        ends(c.ends),
        start(size_t(c.p - c.base)),
        word(start / 64),
        bits(c.ends[word] & (~0ull << (start % 64))),
        prev(c.prev),
        bad(false) {}
  GT_INLINE uint64_t Varint() {
    while (bits == 0) bits = ends[++word];
    const size_t end = word * 64 + size_t(__builtin_ctzll(bits));
    bits &= bits - 1;
    const size_t n = end - start;  // bytes after the first
    uint64_t x;
    std::memcpy(&x, base + start, 8);
    start = end + 1;
    if (n < 8) [[likely]]
      return PackVarint<kPext>(x, n);
    const VarintResult r = VarintAt(base + end - n);  // 9 or 10 bytes; longer is malformed
    bad |= r.len != n + 1;
    return r.value;
  }
  GT_INLINE const uint8_t* p() const { return base + start; }
};

// Writes the terminator bitmap of the varints in p[0..n) to ends[0..(n + 63) / 64) (bits past n clear) and
// counts the values, and how many take one and two bytes (how predictable their lengths are). Reads up to
// 63 bytes past n.
struct VarintStats {
  uint64_t values = 0, one = 0, two = 0;
};
VarintStats ScanVarints(const uint8_t* p, size_t n, uint64_t* ends);

// Reads a repeat column's constant part through the ColumnReader interface: no bytes, no bounds, no errors.
struct RepeatReader {
  uint64_t rest, prev;
  bool bad = false;
  GT_INLINE uint64_t Varint() { return rest; }
  GT_INLINE uint8_t Byte() { return uint8_t(Varint()); }
  GT_INLINE double F64() {
    uint64_t v = Varint();
    double d;
    std::memcpy(&d, &v, 8);
    return d;
  }
};

// A segment's version as read from its header; format_upgrade.cc decides what it means.
struct SegmentVersion {
  uint16_t major = 0, minor = 0;
};

// Every version check lives in format_upgrade.cc.
Status CheckSegmentVersion(SegmentVersion v);
// Maps the columns of a record chunk written by `v` to the current layout of `kind`: on return `columns`
// holds exactly `expected` readers (missing columns of an older layout are filled in, extra ones of a newer
// minor are dropped). `defaults` is scratch storage for synthesized columns and must outlive the decode.
Status UpgradeRecordColumns(SegmentVersion v, RecordKind kind, uint32_t expected, uint32_t record_count,
                            ColumnReader* columns, uint32_t* column_count, ByteBuf* defaults);

}  // namespace gt::format

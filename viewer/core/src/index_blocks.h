// Internal: the compressed column blocks of the viewer index (docs/format.md "The viewer index") and how a
// mapped index reads them. Every column is cut into blocks of kBlockValues values, each compressed on its own
// (zstd; int64 columns as deltas) and listed in the directory section with its CRC32C. Open reads the
// directory, never the blocks: a block is decoded (and its checksum verified) the first time a query reads
// it, and kept in a cache whose decoded bytes are capped (least recently used go first), so the server's
// resident memory follows the requests, not the trace.
#pragma once

#include <cstdint>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "gt/sat_math.h"
#include "gt/status.h"
#include "gt/viewer/index.h"
#include "gt/viewer/model.h"

namespace gt::viewer::index_detail {

inline constexpr uint32_t kBlockValues = 16384;       // 128 KiB of int64, 64 KiB of uint32 decoded
inline constexpr size_t kDirEntryBytes = 16;          // offset u64 (in the blocks section), size u32, crc u32
inline constexpr uint32_t kStoredFlag = 0x80000000u;  // in the size: the block's bytes are not compressed

// How a column's values are laid out before compression: int64 columns (lane starts, counter times) ascend,
// so their differences are small and compress far better than the values.
enum class Codec : uint8_t { kRaw = 0, kDelta64 = 1 };
template <typename T>
constexpr Codec CodecOf() {
  return std::is_same_v<T, int64_t> ? Codec::kDelta64 : Codec::kRaw;
}

inline uint64_t BlocksOf(uint64_t count) {
  return (count + kBlockValues - 1) / kBlockValues;
}

// A compressed block's values are byte-shuffled (format 2.1): every value's byte 0, then every byte 1, and so
// on. Unshuffle is the inverse. The build and every block read pass through these (index_shuffle.cc: widths
// 4, 8 and 16 in SSE2 registers where there are any). DeltaShuffle64 is the int64 columns' delta pass and the
// shuffle in one pass over the block (the first value's difference is from 0).
void ShuffleBytes(const uint8_t* in, size_t n, size_t elem, uint8_t* out);
void UnshuffleBytes(const uint8_t* in, size_t n, size_t elem, uint8_t* out);
void DeltaShuffle64(const uint8_t* in, size_t n, uint8_t* out);
void Delta64(const uint8_t* in, size_t n, uint8_t* out);  // the differences alone (a block stored raw)

// One column in the blocks section: `count` values of `elem` bytes in blocks [first_block, first_block +
// BlocksOf(count)).
struct ColRef {
  uint64_t count = 0, first_block = 0;
  uint32_t elem = 0;
  Codec codec = Codec::kRaw;
  bool ascending = false;  // lane starts: a decoded block whose values do not ascend is damaged
};

struct LaneRefs {
  ColRef start, dur, name, ref, aux;
  std::vector<ColRef> lod;
};

struct DecodedBlock {
  std::unique_ptr<uint8_t[]> bytes;
  size_t size = 0;
};

// What a MappedIndex keeps of its blocks: the two sections, the lanes' column references and the cache.
struct IndexBlocks {
  std::span<const uint8_t> blocks, directory;
  std::vector<LaneRefs> lanes;
  bool verify = true;
  size_t cache_cap = 0;

  // Block `b` of `col` (b < BlocksOf(col.count)), decoded and verified, from the cache or the file.
  StatusOr<std::shared_ptr<const DecodedBlock>> Get(const ColRef& col, uint64_t b) const;
  // Decodes a whole column (Materialize, the small arrays decoded at open).
  Status DecodeAll(const ColRef& col, void* out) const;
  size_t cached_bytes() const;

  mutable std::mutex mu;
  mutable std::list<std::pair<uint64_t, std::shared_ptr<const DecodedBlock>>> lru;  // most recent first
  mutable std::unordered_map<uint64_t, decltype(lru)::iterator> where;
  mutable size_t bytes = 0;
  mutable std::string damage;  // the first damaged block's reason: the index must be rebuilt
};

// One lane of a mapped index read through the block cache, for one request (it pins the blocks it is
// reading). The accessors QueryLane's template needs (lod_query.h); a damaged block makes the reads return
// zeros from then on and status() says why (the caller answers an error: the result is not used).
class LaneReader {
 public:
  LaneReader(const IndexBlocks& blocks, const Lane& shell, LaneId id)
      : b_(blocks), shell_(shell), refs_(blocks.lanes[id]) {}
  // Every block read is also copied into `fill`'s columns (sized to the lane here, their other values left
  // as they are): the event view (index_query.cc) runs the model's own code on exactly what was read.
  void FillInto(Lane* fill);

  uint32_t size() const { return uint32_t(refs_.start.count); }
  int64_t Start(uint32_t i) const { return Get<int64_t>(kStart, refs_.start, i); }
  uint32_t Dur(uint32_t i) const { return Get<uint32_t>(kDur, refs_.dur, i); }
  StringId Name(uint32_t i) const { return Get<uint32_t>(kName, refs_.name, i); }
  uint32_t Ref(uint32_t i) const { return Get<uint32_t>(kRef, refs_.ref, i); }
  uint32_t Aux(uint32_t i) const { return refs_.aux.count ? Get<uint32_t>(kAux, refs_.aux, i) : 0; }
  uint32_t aux_size() const { return uint32_t(refs_.aux.count); }
  int64_t Duration(uint32_t i) const;
  // Saturated: a hostile index may place an end past INT64_MAX (the loaded model refuses those at build).
  int64_t End(uint32_t i) const { return SatAdd(Start(i), Duration(i)); }
  uint32_t LowerBoundStart(int64_t t) const;
  size_t lod_levels() const { return refs_.lod.size(); }
  size_t lod_size(size_t k) const { return refs_.lod[k].count; }
  LodMax Lod(size_t k, size_t b) const;
  const Lane& shell() const { return shell_; }
  const Status& status() const { return status_; }

 private:
  enum Slot { kStart, kDur, kName, kRef, kAux, kLod, kSlots };
  template <typename T>
  T Get(int slot, const ColRef& col, uint64_t i) const {
    if (i >= col.count || !status_.ok()) return T{};
    const uint64_t b = i / kBlockValues;
    if (cur_[slot] != &col || cur_block_[slot] != b) {
      if (!Load(slot, col, b)) return T{};
    }
    T v;
    std::memcpy(&v, pinned_[slot]->bytes.get() + (i % kBlockValues) * sizeof(T), sizeof(T));
    return v;
  }
  bool Load(int slot, const ColRef& col, uint64_t b) const;

  const IndexBlocks& b_;
  const Lane& shell_;
  const LaneRefs& refs_;
  Lane* fill_ = nullptr;
  mutable const ColRef* cur_[kSlots] = {};
  mutable uint64_t cur_block_[kSlots] = {};
  mutable std::shared_ptr<const DecodedBlock> pinned_[kSlots];
  mutable Status status_;
};

}  // namespace gt::viewer::index_detail

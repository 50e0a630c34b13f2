// Reading the viewer index's column blocks: decode, verify, cache (index_blocks.h).
#include "index_blocks.h"

#include <zstd.h>

#include <algorithm>
#include <vector>

#include "gt/index_format.h"
#include "index_codec.h"

namespace gt::viewer::index_detail {
namespace {

struct DCtx {
  ZSTD_DCtx* ctx = ZSTD_createDCtx();
  ~DCtx() { ZSTD_freeDCtx(ctx); }
};

// Decodes block `b` of `col` into `out` (exactly the block's values): checksum, size, codec, and for lane
// starts the order the queries' searches rely on. Blocks are independent: any one can be read alone.
Status DecodeBlock(const IndexBlocks& ib, const ColRef& col, uint64_t b, uint8_t* out) {
  auto bad = [&](const char* why) {
    return Corrupt("damaged index: block " + std::to_string(col.first_block + b) + " " + why);
  };
  const uint8_t* e = ib.directory.data() + (col.first_block + b) * kDirEntryBytes;
  const uint64_t offset = Load<uint64_t>(e);
  const uint32_t size_field = Load<uint32_t>(e + 8), crc = Load<uint32_t>(e + 12);
  const uint32_t size = size_field & ~kStoredFlag;
  const uint64_t n = std::min<uint64_t>(kBlockValues, col.count - b * kBlockValues);
  const size_t want = size_t(n * col.elem);
  if (offset > ib.blocks.size() || size > ib.blocks.size() - offset) return bad("lies outside the file");
  const uint8_t* p = ib.blocks.data() + offset;
  if (ib.verify && Crc32c(0, p, size) != crc) return bad("fails its checksum");
  if (size_field & kStoredFlag) {
    if (size != want) return bad("has the wrong size");
    std::memcpy(out, p, want);
  } else {
    thread_local DCtx d;
    thread_local std::vector<uint8_t> shuffled;  // a block at most (kBlockValues values): kept per thread
    uint8_t* to = out;
    if (col.elem > 1) {
      shuffled.resize(want);
      to = shuffled.data();
    }
    const size_t got = ZSTD_decompressDCtx(d.ctx, to, want, p, size);
    if (ZSTD_isError(got) || got != want) return bad("does not decompress to its size");
    if (col.elem > 1) UnshuffleBytes(to, size_t(n), col.elem, out);
  }
  if (col.codec == Codec::kDelta64) {
    uint64_t acc = 0;
    for (size_t i = 0; i < n; ++i) {
      uint64_t d;
      std::memcpy(&d, out + i * 8, 8);
      acc += d;
      std::memcpy(out + i * 8, &acc, 8);
    }
  }
  if (col.ascending) {
    int64_t prev = INT64_MIN;
    for (size_t i = 0; i < n; ++i) {
      int64_t v;
      std::memcpy(&v, out + i * 8, 8);
      if (v < prev) return bad("holds starts out of order");
      prev = v;
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::shared_ptr<const DecodedBlock>> IndexBlocks::Get(const ColRef& col, uint64_t b) const {
  const uint64_t key = col.first_block + b;
  const size_t size = size_t(std::min<uint64_t>(kBlockValues, col.count - b * kBlockValues) * col.elem);
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = where.find(key); it != where.end()) {
      // Open refuses columns that share blocks; this keeps a block decoded for another shape from being read.
      if (it->second->second->size != size) {
        Status bad = Corrupt("damaged index: block " + std::to_string(key) + " read as two columns");
        if (damage.empty()) damage = bad.message();
        return bad;
      }
      lru.splice(lru.begin(), lru, it->second);
      return it->second->second;
    }
  }
  // Decoded outside the lock: queries on other blocks go on meanwhile (two queries may decode the same block
  // at once; the second insert finds the first's).
  auto block = std::make_shared<DecodedBlock>();
  block->size = size;
  block->bytes.reset(new uint8_t[block->size]);
  if (Status s = DecodeBlock(*this, col, b, block->bytes.get()); !s.ok()) {
    std::lock_guard<std::mutex> lock(mu);
    if (damage.empty()) damage = s.message();
    return s;
  }
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = where.find(key); it != where.end()) {
    // Another query decoded it meanwhile; a block of another shape (open refuses that) leaves ours uncached.
    if (it->second->second->size == size) return it->second->second;
    return std::shared_ptr<const DecodedBlock>(std::move(block));
  }
  lru.emplace_front(key, block);
  where[key] = lru.begin();
  bytes += block->size;
  while (bytes > cache_cap && lru.size() > 1) {  // what a request still reads stays pinned by its shared_ptr
    bytes -= lru.back().second->size;
    where.erase(lru.back().first);
    lru.pop_back();
  }
  return std::shared_ptr<const DecodedBlock>(std::move(block));
}

Status IndexBlocks::DecodeAll(const ColRef& col, void* out) const {
  uint8_t* p = static_cast<uint8_t*>(out);
  for (uint64_t b = 0; b < BlocksOf(col.count); ++b) {
    Status s = DecodeBlock(*this, col, b, p + b * kBlockValues * col.elem);
    if (!s.ok()) {
      std::lock_guard<std::mutex> lock(mu);
      if (damage.empty()) damage = s.message();
      return s;
    }
  }
  return Status::Ok();
}

size_t IndexBlocks::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mu);
  return bytes;
}

void LaneReader::FillInto(Lane* fill) {
  fill_ = fill;
  fill->start.resize(size_t(refs_.start.count));
  fill->dur.resize(size_t(refs_.dur.count));
  fill->name.resize(size_t(refs_.name.count));
  fill->ref.resize(size_t(refs_.ref.count));
  fill->aux.resize(size_t(refs_.aux.count));
}

bool LaneReader::Load(int slot, const ColRef& col, uint64_t b) const {
  auto got = b_.Get(col, b);
  if (!got.ok()) {
    status_ = got.status();
    pinned_[slot].reset();
    cur_[slot] = nullptr;
    return false;
  }
  pinned_[slot] = std::move(*got);
  cur_[slot] = &col;
  cur_block_[slot] = b;
  if (fill_ && slot != kLod) {
    void* dst = slot == kStart  ? static_cast<void*>(fill_->start.data())
                : slot == kDur  ? static_cast<void*>(fill_->dur.data())
                : slot == kName ? static_cast<void*>(fill_->name.data())
                : slot == kRef  ? static_cast<void*>(fill_->ref.data())
                                : static_cast<void*>(fill_->aux.data());
    std::memcpy(static_cast<uint8_t*>(dst) + b * kBlockValues * col.elem, pinned_[slot]->bytes.get(),
                pinned_[slot]->size);
  }
  return true;
}

int64_t LaneReader::Duration(uint32_t i) const {
  const uint32_t d = Dur(i);
  if (d != kDurOverflow) return d;
  const auto& ld = shell_.long_dur;
  auto it = std::lower_bound(ld.begin(), ld.end(), std::make_pair(i, INT64_MIN));
  return it != ld.end() && it->first == i ? it->second : int64_t{kDurOverflow};
}

uint32_t LaneReader::LowerBoundStart(int64_t t) const {
  uint32_t lo = 0, hi = size();
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (Start(mid) < t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

LodMax LaneReader::Lod(size_t k, size_t b) const {
  // Levels share one slot: a query reads one level at a time, moving between them rarely.
  return Get<LodMax>(kLod, refs_.lod[k], b);
}

}  // namespace gt::viewer::index_detail

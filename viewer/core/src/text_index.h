// Texts the builder and the importers intern: their hash, and an index of ids over a table of strings.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "gt/model.h"

namespace gt::viewer::detail {

// Inlined where it runs per event (std::hash is an out-of-line call, ~2% of a JSON import) and 64 bits in
// every build (std::hash is 32 in wasm32). Two lanes over 16-byte steps halve the multiply chain of an
// args text; the finalizer spreads every input bit over the low bits that pick a slot.
inline uint64_t HashText(std::string_view s) {
  constexpr uint64_t kA = 0x9E3779B97F4A7C15ull, kB = 0xFF51AFD7ED558CCDull, kC = 0xC4CEB9FE1A85EC53ull;
  const auto load8 = [](const char* p) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    return w;
  };
  const char* p = s.data();
  size_t n = s.size();
  uint64_t h = n * kA, g = ~n * kC;
  for (; n > 16; p += 16, n -= 16) {
    h = (h ^ load8(p)) * kB;
    g = (g ^ load8(p + 8)) * kC;
    h ^= h >> 31;
    g ^= g >> 29;
  }
  if (n > 8) {  // 9..16 bytes left: the first and the last 8 (they overlap)
    h ^= load8(p);
    g ^= load8(p + n - 8);
  } else if (n >= 4) {
    uint32_t a, b;
    std::memcpy(&a, p, 4);
    std::memcpy(&b, p + n - 4, 4);
    h ^= uint64_t(a) << 32 | b;
  } else if (n > 0) {
    const auto* u = reinterpret_cast<const unsigned char*>(p);
    h ^= uint64_t(u[0]) << 16 | uint64_t(u[n >> 1]) << 8 | u[n - 1];
  }
  h = (h ^ (g * kA)) * kB;
  h ^= h >> 33;
  h *= kC;
  return h ^ (h >> 29);
}

// Importer text -> StringId (ModelBuilder::Intern): an open-addressing table of ids whose text lives in the
// model's string table, so each string is stored once (JSON args texts are mostly unique: a map keyed by
// strings held every one twice) and a lookup builds no temporary string.
class StringIndex {
 public:
  // The id of `text` (hash `h`) in `strings`, or 0.
  StringId Find(std::string_view text, uint64_t h, const std::vector<std::string>& strings) const {
    if (slots_.empty()) return 0;
    const uint32_t tag = Tag(h);
    for (size_t i = tag & mask_;; i = (i + 1) & mask_) {
      const uint64_t s = slots_[i];
      if (s == 0) return 0;
      const StringId id = static_cast<StringId>(s);
      if (static_cast<uint32_t>(s >> 32) == tag && strings[id] == text) return id;
    }
  }
  void Insert(StringId id, uint64_t h) {
    if ((count_ + 1) * 2 > slots_.size()) Grow();
    Place((uint64_t(Tag(h)) << 32) | id);
    ++count_;
  }
  void clear() {
    slots_ = {};
    count_ = 0;
    mask_ = 0;
  }
  // A slot's position comes from the same bits as its tag, so growing needs no hash kept beside the slots
  // (nor the texts hashed again); the tag's bits above the position still tell most different texts apart.
  // Both halves of the hash: std::hash has 64 bits natively but 32 in wasm32, whose upper half is 0.
  static uint32_t Tag(uint64_t h) { return static_cast<uint32_t>(h >> 32) ^ static_cast<uint32_t>(h); }

 private:
  void Place(uint64_t slot) {
    size_t i = (slot >> 32) & mask_;
    while (slots_[i] != 0) i = (i + 1) & mask_;
    slots_[i] = slot;
  }
  void Grow() {
    std::vector<uint64_t> old = std::move(slots_);
    const size_t n = std::max<size_t>(1024, old.size() * 2);
    slots_.assign(n, 0);
    mask_ = n - 1;
    for (const uint64_t s : old)
      if (s) Place(s);
  }
  std::vector<uint64_t> slots_;  // tag << 32 | id; 0 = empty (id 0, "", is never interned)
  size_t count_ = 0, mask_ = 0;
};

}  // namespace gt::viewer::detail

// The hash of texts the builder interns (names, categories, args texts), by every importer and cache.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

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

}  // namespace gt::viewer::detail

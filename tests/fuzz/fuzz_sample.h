// A deterministic sample of fuzz inputs for a target's expensive checks: every small input and 1 in N of the
// rest, picked by a hash of the bytes, so a reproducer always takes the same path.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace gt::fuzz {

inline uint64_t SampleHash(const uint8_t* data, size_t size) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over 256 bytes at each end: cheap on big inputs
  auto mix = [&](size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) h = (h ^ data[i]) * 1099511628211ull;
  };
  mix(0, std::min<size_t>(size, 256));
  mix(size > 256 ? size - 256 : 0, size);
  h ^= size;
  h *= 1099511628211ull;
  return h >> 32;
}

inline bool Sampled(const uint8_t* data, size_t size, uint64_t one_in) {
  return size < 512 || SampleHash(data, size) % one_in == 0;
}

}  // namespace gt::fuzz

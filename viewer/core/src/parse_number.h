// Whole-string integer parsing for the text formats the viewer reads back (view-state links, notes).
#pragma once

#include <charconv>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace gt::viewer::detail {

// The whole of `s` as a decimal int64 (at most 20 characters): false for anything else, no partial reads.
inline bool ParseI64(std::string_view s, int64_t* v) {
  if (s.empty() || s.size() > 20) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace gt::viewer::detail

namespace gt::viewer::detail {

// SWAR digit helpers for the JSON lexer and the timestamp parser: eight bytes per step in every build (wasm
// has no SSE), where a byte loop spent most of a number's time on its compare-and-branch per digit.
inline uint64_t Load8(const char* s) {
  uint64_t w;
  std::memcpy(&w, s, 8);
  return w;
}
// How many of the 8 bytes at s, from the first, are ASCII digits. A byte is a digit when its high nibble is
// 3 and adding 6 keeps it so; the add's carry only reaches bytes after a non-digit, which are not counted.
inline unsigned DigitRun8(uint64_t w) {
  constexpr uint64_t kHigh = 0xF0F0F0F0F0F0F0F0ull, kThree = 0x3030303030303030ull;
  const uint64_t bad = ((w & kHigh) ^ kThree) | (((w + 0x0606060606060606ull) & kHigh) ^ kThree);
  return bad == 0 ? 8u : unsigned(__builtin_ctzll(bad)) / 8u;
}
// The value of 8 ASCII digits (the first in memory is the most significant).
inline uint64_t Digits8(uint64_t w) {
  w -= 0x3030303030303030ull;
  w = (w * 10 + (w >> 8)) & 0x00FF00FF00FF00FFull;
  w = (w * 100 + (w >> 16)) & 0x0000FFFF0000FFFFull;
  return (w * 10000 + (w >> 32)) & 0xFFFFFFFFull;
}
// The value of n <= 18 ASCII digits at s (already checked to be digits).
inline uint64_t DigitsValue(const char* s, size_t n) {
  uint64_t v = 0;
  for (; n >= 8; s += 8, n -= 8) v = v * 100000000 + Digits8(Load8(s));
  for (; n > 0; ++s, --n) v = v * 10 + uint64_t(*s - '0');
  return v;
}

}  // namespace gt::viewer::detail

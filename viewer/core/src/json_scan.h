// Byte scanning for the JSON lexer (import_json_fast.cc) and the timestamp parser: eight or sixteen bytes per
// step. Each has a byte-by-byte reference in tests/viewer/json_scan_test.cc; the SWAR ones are all the wasm
// build has (no SSE2 there), so they are tested natively too.
#pragma once

#include <cstdint>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace gt::viewer::detail {

constexpr uint64_t kOnes = 0x0101010101010101ull, kHighs = 0x8080808080808080ull;
// The bytes of w that end the plain run of a string, flagged in their high bits: '"', '\\', a control
// character, a non-ASCII byte. Exact at the lowest flag (a borrow only flags bytes above a flagged one), so
// the first special byte is at ctz / 8.
inline uint64_t SpecialBits8(uint64_t w) {
  const uint64_t q = w ^ (kOnes * '"'), b = w ^ (kOnes * '\\');
  return (((q - kOnes) & ~q) | ((b - kOnes) & ~b) | ((w - kOnes * 0x20) & ~w) | w) & kHighs;
}
#if defined(__SSE2__)
// The same over the 16 bytes at s, a bit per byte (signed compare: control characters and non-ASCII bytes are
// both below 0x20).
inline unsigned SpecialMask16(const char* s) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
  const __m128i special = _mm_or_si128(
      _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
      _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
  return static_cast<unsigned>(_mm_movemask_epi8(special));
}
#endif

// Digits, eight bytes per step in every build, where a byte loop spent most of a number's time on its
// compare-and-branch per digit.
inline uint64_t Load8(const char* s) {
  uint64_t w;
  std::memcpy(&w, s, 8);
  return w;
}
// How many of the 8 bytes of w, from the first in memory, are ASCII digits. A byte is a digit when its high
// nibble is 3 and adding 6 keeps it so; the add's carry only reaches bytes after a non-digit, which are not
// counted.
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

// The first byte at or after s that is not an ASCII digit, or end.
inline const char* SkipDigits(const char* s, const char* end) {
  while (end - s >= 8) {
    const unsigned run = DigitRun8(Load8(s));
    s += run;
    if (run < 8) return s;
  }
  while (s < end && *s >= '0' && *s <= '9') ++s;
  return s;
}

// A short string's length, from w, the 8 bytes after its opening quote: when the first special byte among
// them is its closing quote (only printable ASCII other than '\\' before it), their count (0..7); -1
// otherwise.
inline int PlainStringLength8(uint64_t w) {
  const uint64_t bits = SpecialBits8(w);
  if (bits == 0) return -1;
  const unsigned len = static_cast<unsigned>(__builtin_ctzll(bits)) / 8;
  return ((w >> (8 * len)) & 0xFF) == '"' ? int(len) : -1;
}

#if defined(__SSE2__)
// PlainStringLength8 over the 16 bytes at s (0..15).
inline int PlainStringLength16(const char* s) {
  const unsigned mask = SpecialMask16(s);
  if (mask == 0) return -1;
  const unsigned len = static_cast<unsigned>(__builtin_ctz(mask));
  return s[len] == '"' ? int(len) : -1;
}
#endif

}  // namespace gt::viewer::detail

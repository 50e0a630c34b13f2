// The JSON lexer's byte scans (viewer/core/src/json_scan.h) against byte-by-byte references: every byte value
// at every position of a word, then random words biased towards the bytes that matter. The SWAR versions are
// all the wasm build has, so they are checked here, natively, as well as the SSE2 one the native build uses.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>

#include "json_scan.h"

using namespace gt::viewer::detail;

namespace {

bool IsPlain(unsigned char c) {
  return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}
// The closing quote's index among the first n bytes when only plain bytes come before it, else -1.
int ReferencePlainLength(const unsigned char* s, int n) {
  for (int i = 0; i < n; ++i) {
    if (s[i] == '"') return i;
    if (!IsPlain(s[i])) return -1;
  }
  return -1;
}
unsigned ReferenceDigitRun(const unsigned char* s) {
  unsigned k = 0;
  while (k < 8 && s[k] >= '0' && s[k] <= '9') ++k;
  return k;
}

// Each check counts mismatches and keeps the first: one assertion per case, not one per word.
struct Mismatches {
  uint64_t count = 0;
  std::string first;
  void Add(const unsigned char* s, int n, long got, long want) {
    if (count++ > 0) return;
    for (int i = 0; i < n; ++i) first += std::to_string(s[i]) + " ";
    first += "-> " + std::to_string(got) + ", expected " + std::to_string(want);
  }
};

void CheckPlainLength(const unsigned char* buf, Mismatches* m) {
  const int got8 = PlainStringLength8(Load8(reinterpret_cast<const char*>(buf)));
  const int want8 = ReferencePlainLength(buf, 8);
  if (got8 != want8) m->Add(buf, 8, got8, want8);
#if defined(__SSE2__)
  const int got16 = PlainStringLength16(reinterpret_cast<const char*>(buf));
  const int want16 = ReferencePlainLength(buf, 16);
  if (got16 != want16) m->Add(buf, 16, got16, want16);
#endif
}

// Bytes near the ones the scans test for: the specials, their neighbours, and those that differ from a
// special only in the high bit (what a borrow or a sign could confuse).
constexpr unsigned char kEdgeBytes[] = {'"',  '\\', 0x00, 0x01, 0x1f, 0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f,
                                        0x80, 0x81, 0xa2, 0xdc, 0xfa, 0xff, '/',  '0',  '9',  ':',  'a'};

// Three bytes in four from [first, first + count), the rest edge bytes.
void FillRandom(unsigned char* buf, size_t n, char first, int count, std::mt19937_64& rng) {
  for (size_t i = 0; i < n; ++i) {
    const uint64_t r = rng();
    buf[i] = (r & 3) ? static_cast<unsigned char>(first + (r >> 8) % count)
                     : kEdgeBytes[(r >> 8) % sizeof kEdgeBytes];
  }
}

}  // namespace

TEST_CASE("json scan: a short string's end is found as a byte loop finds it") {
  Mismatches m;
  unsigned char buf[16];
  for (int pos = 0; pos < 16; ++pos)
    for (int v = 0; v < 256; ++v)
      for (int quote = -1; quote < 16; ++quote) {
        std::memset(buf, 'x', sizeof buf);
        buf[pos] = static_cast<unsigned char>(v);
        if (quote >= 0) buf[quote] = '"';
        CheckPlainLength(buf, &m);
      }
  std::mt19937_64 rng(16);
  for (int i = 0; i < 300000; ++i) {
    FillRandom(buf, sizeof buf, 'a', 26, rng);
    CheckPlainLength(buf, &m);
  }
  INFO(m.first);
  REQUIRE(m.count == 0);
}

TEST_CASE("json scan: digit runs and their values match a byte loop") {
  Mismatches m;
  unsigned char buf[8];
  for (int pos = 0; pos < 8; ++pos)
    for (int v = 0; v < 256; ++v)
      for (int before = 0; before < 2; ++before) {
        std::memset(buf, '7', sizeof buf);
        buf[pos] = static_cast<unsigned char>(v);
        // A byte at or above 0xfa carries into the next one when 6 is added: put one ahead of the tested
        // byte.
        if (before && pos > 0) buf[pos - 1] = 0xfa;
        const unsigned got = DigitRun8(Load8(reinterpret_cast<const char*>(buf)));
        const unsigned want = ReferenceDigitRun(buf);
        if (got != want) m.Add(buf, 8, got, want);
      }
  std::mt19937_64 rng(8);
  for (int i = 0; i < 300000; ++i) {
    FillRandom(buf, sizeof buf, '0', 10, rng);
    const unsigned got = DigitRun8(Load8(reinterpret_cast<const char*>(buf)));
    const unsigned want = ReferenceDigitRun(buf);
    if (got != want) m.Add(buf, 8, got, want);
  }
  // Values: 8 digits at once, and 0..18 digits (the longest a uint64 always holds).
  for (int i = 0; i < 200000; ++i) {
    const int n = int(rng() % 19);
    std::string digits;
    uint64_t want = 0;
    for (int k = 0; k < n; ++k) {
      const int d = i < 10 ? i % 10 : int(rng() % 10);  // runs of one digit first: 000..., 999...
      digits += char('0' + d);
      want = want * 10 + uint64_t(d);
    }
    const uint64_t got = DigitsValue(digits.data(), digits.size());
    if (got != want) m.Add(reinterpret_cast<const unsigned char*>(digits.data()), n, long(got), long(want));
  }
  INFO(m.first);
  REQUIRE(m.count == 0);
}

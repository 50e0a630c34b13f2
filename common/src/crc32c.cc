// CRC32C (Castagnoli), slicing-by-8 tables built once. Portable so the wasm reader needs no SSE4.2.
#include <array>
#include <cstring>

#include "format.h"

namespace gt::format {
namespace {

struct Tables {
  std::array<std::array<uint32_t, 256>, 8> t{};
  Tables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i)
      for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
  }
};

const Tables& GetTables() {
  static const Tables tables;
  return tables;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__EMSCRIPTEN__)
// Appending n zero bytes to a CRC register is linear in it: ShiftTables tabulate that operator, byte by byte.
// The hardware path runs three streams at once and joins them with it.
struct ShiftTables {
  uint32_t t[4][256];
  explicit ShiftTables(size_t n) {
    // GF(2) 32x32 matrices as 32 columns; one zero bit first, squared up to one byte, then n bytes.
    using Mat = std::array<uint32_t, 32>;
    auto times = [](const Mat& m, uint32_t v) {
      uint32_t r = 0;
      for (int i = 0; v; ++i, v >>= 1)
        if (v & 1) r ^= m[i];
      return r;
    };
    auto mul = [&](const Mat& a, const Mat& b) {  // a after b
      Mat r;
      for (int i = 0; i < 32; ++i) r[i] = times(a, b[i]);
      return r;
    };
    Mat op;
    op[0] = 0x82F63B78u;
    for (int i = 1; i < 32; ++i) op[i] = 1u << (i - 1);
    for (int i = 0; i < 3; ++i) op = mul(op, op);  // one byte
    Mat acc;
    for (int i = 0; i < 32; ++i) acc[i] = 1u << i;
    for (; n; n >>= 1, op = mul(op, op))
      if (n & 1) acc = mul(op, acc);
    for (int k = 0; k < 4; ++k)
      for (uint32_t b = 0; b < 256; ++b) t[k][b] = times(acc, b << (8 * k));
  }
  uint32_t Shift(uint32_t crc) const {
    return t[0][crc & 0xff] ^ t[1][(crc >> 8) & 0xff] ^ t[2][(crc >> 16) & 0xff] ^ t[3][crc >> 24];
  }
};

// The instruction has a 3-cycle latency and a throughput of one per cycle: three independent streams
// (lanes of kLong or kShort bytes) keep it busy.
constexpr size_t kLong = 8192, kShort = 256;
const ShiftTables& LongShift() {
  static const ShiftTables t(kLong);
  return t;
}
const ShiftTables& ShortShift() {
  static const ShiftTables t(kShort);
  return t;
}

template <size_t kLane>
__attribute__((target("sse4.2"))) inline uint64_t Crc3(uint64_t c0, const uint8_t* p,
                                                       const ShiftTables& shift) {
  uint64_t c1 = 0, c2 = 0;
  for (size_t i = 0; i < kLane; i += 8) {
    uint64_t a, b, c;
    std::memcpy(&a, p + i, 8);
    std::memcpy(&b, p + kLane + i, 8);
    std::memcpy(&c, p + 2 * kLane + i, 8);
    c0 = __builtin_ia32_crc32di(c0, a);
    c1 = __builtin_ia32_crc32di(c1, b);
    c2 = __builtin_ia32_crc32di(c2, c);
  }
  c0 = shift.Shift(uint32_t(c0)) ^ c1;
  return shift.Shift(uint32_t(c0)) ^ c2;
}

// SSE4.2 has a CRC32C instruction (~10x the table loop); chosen at run time so the binary runs on any x86-64.
__attribute__((target("sse4.2"))) uint32_t Crc32cHw(uint32_t crc, const uint8_t* p, size_t n) {
  uint64_t c = ~crc;
  if (n >= 3 * kShort) {
    const ShiftTables& lng = LongShift();
    for (; n >= 3 * kLong; p += 3 * kLong, n -= 3 * kLong) c = Crc3<kLong>(c, p, lng);
    const ShiftTables& shrt = ShortShift();
    for (; n >= 3 * kShort; p += 3 * kShort, n -= 3 * kShort) c = Crc3<kShort>(c, p, shrt);
  }
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    c = __builtin_ia32_crc32di(c, v);
    p += 8;
    n -= 8;
  }
  uint32_t c32 = uint32_t(c);
  while (n--) c32 = __builtin_ia32_crc32qi(c32, *p++);
  return ~c32;
}
const bool kHaveHwCrc = (__builtin_cpu_init(), __builtin_cpu_supports("sse4.2"));
#define GT_HW_CRC 1
#endif

}  // namespace

uint32_t Crc32c(uint32_t crc, const void* data, size_t n) {
#ifdef GT_HW_CRC
  if (kHaveHwCrc) return Crc32cHw(crc, static_cast<const uint8_t*>(data), n);
#endif
  return Crc32cPortable(crc, data, n);
}

uint32_t Crc32cPortable(uint32_t crc, const void* data, size_t n) {
  const auto& t = GetTables().t;
  const auto* p = static_cast<const uint8_t*>(data);
  crc = ~crc;
  while (n >= 8) {
    uint32_t lo = crc ^ GetU32(p);
    uint32_t hi = GetU32(p + 4);
    crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^
          t[3][hi & 0xff] ^ t[2][(hi >> 8) & 0xff] ^ t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n--) crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xff];
  return ~crc;
}

}  // namespace gt::format

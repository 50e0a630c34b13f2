// The byte shuffle of the index's compressed blocks (index_blocks.h): every value's byte 0, then every
// byte 1, ... Every block the build writes and every block a query reads passes through here, so the widths
// the index uses (4 and 8 bytes, 16 for LOD entries) transpose 16 values at a time in SSE2 registers
// (baseline x86-64: no run-time dispatch); the scalar loops do the tails, other widths and wasm. Profiled at
// 10 M events, the scalar shuffle plus the delta pass was ~45% of the build's write (docs/benchmarks.md,
// "stop 32").
//
// [SECTION] Scalar reference
// [SECTION] SSE2 transposes of 16 values
// [SECTION] Entry points
#include <algorithm>
#include <cstring>

#include "index_blocks.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#define GT_SHUFFLE_SSE2 1
#endif

namespace gt::viewer::index_detail {
namespace {

//-------------------------------------------------------------------------------------------------------
// [SECTION] Scalar reference
//-------------------------------------------------------------------------------------------------------

// Values [from, n) of `in` (n values in all; the planes are n bytes long).
template <size_t kElem>
void ShuffleTail(const uint8_t* in, size_t from, size_t n, size_t elem, uint8_t* out) {
  const size_t w = kElem ? kElem : elem;
  for (size_t i = from; i < n; ++i)
    for (size_t b = 0; b < w; ++b) out[b * n + i] = in[i * w + b];
}
template <size_t kElem>
void UnshuffleTail(const uint8_t* in, size_t from, size_t n, size_t elem, uint8_t* out) {
  const size_t w = kElem ? kElem : elem;
  for (size_t i = from; i < n; ++i)
    for (size_t b = 0; b < w; ++b) out[i * w + b] = in[b * n + i];
}

// Differences of ascending int64 values [from, n), the one before `from` taken as `prev`; wraps (the
// reader's prefix sum wraps back).
void DeltaTail(const uint8_t* in, size_t from, size_t n, uint64_t prev, uint8_t* out) {
  for (size_t i = from; i < n; ++i) {
    uint64_t x;
    std::memcpy(&x, in + i * 8, 8);
    const uint64_t d = x - prev;
    std::memcpy(out + i * 8, &d, 8);
    prev = x;
  }
}

#if GT_SHUFFLE_SSE2
//-------------------------------------------------------------------------------------------------------
// [SECTION] SSE2 transposes of 16 values
//-------------------------------------------------------------------------------------------------------
// Each is a network of byte, word and dword interleaves (unpacklo/hi); the comments name what each
// register holds after a step (vK = value K of the 16, bJ = byte J of a value).

inline __m128i Ld(const uint8_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}
inline void St(uint8_t* p, __m128i v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v);
}

// r[0..3] hold v0-3, v4-7, v8-11, v12-15 (4 bytes each); writes plane b's 16 bytes at out + b * stride.
inline void Shuffle4x16(const __m128i r[4], uint8_t* out, size_t stride) {
  __m128i e[2], f[2];
  for (int h = 0; h < 2; ++h) {
    const __m128i a = _mm_unpacklo_epi8(r[2 * h], r[2 * h + 1]);  // v0,v4 then v1,v5: bytes paired
    const __m128i b = _mm_unpackhi_epi8(r[2 * h], r[2 * h + 1]);  // v2,v6 then v3,v7
    const __m128i c = _mm_unpacklo_epi8(a, b);                    // b0 of v0,v2,v4,v6 .. b3 of them
    const __m128i d = _mm_unpackhi_epi8(a, b);                    // the same of v1,v3,v5,v7
    e[h] = _mm_unpacklo_epi8(c, d);                               // b0 of v0-7, b1 of v0-7
    f[h] = _mm_unpackhi_epi8(c, d);                               // b2 of v0-7, b3 of v0-7
  }
  St(out, _mm_unpacklo_epi64(e[0], e[1]));
  St(out + stride, _mm_unpackhi_epi64(e[0], e[1]));
  St(out + 2 * stride, _mm_unpacklo_epi64(f[0], f[1]));
  St(out + 3 * stride, _mm_unpackhi_epi64(f[0], f[1]));
}

// Plane b's 16 bytes at in + b * stride; writes v0-15 (64 bytes) at out.
inline void Unshuffle4x16(const uint8_t* in, size_t stride, uint8_t* out) {
  const __m128i p0 = Ld(in), p1 = Ld(in + stride), p2 = Ld(in + 2 * stride), p3 = Ld(in + 3 * stride);
  const __m128i a = _mm_unpacklo_epi8(p0, p1), b = _mm_unpackhi_epi8(p0, p1);  // b0b1 of v0-7, v8-15
  const __m128i c = _mm_unpacklo_epi8(p2, p3), d = _mm_unpackhi_epi8(p2, p3);  // b2b3 of v0-7, v8-15
  St(out, _mm_unpacklo_epi16(a, c));                                           // v0-3
  St(out + 16, _mm_unpackhi_epi16(a, c));                                      // v4-7
  St(out + 32, _mm_unpacklo_epi16(b, d));                                      // v8-11
  St(out + 48, _mm_unpackhi_epi16(b, d));                                      // v12-15
}

// r[k] holds v(2k), v(2k+1) (8 bytes each); writes plane b's 16 bytes at out + b * stride.
inline void Shuffle8x16(const __m128i r[8], uint8_t* out, size_t stride) {
  __m128i s[8], t[8], u[8];
  for (int k = 0; k < 8; ++k)  // words: (v2k, v2k+1) of b0, of b1, ... of b7
    s[k] = _mm_unpacklo_epi8(r[k], _mm_unpackhi_epi64(r[k], r[k]));
  for (int p = 0; p < 4; ++p) {  // dwords: b0..b3 (lo), b4..b7 (hi) of v4p..v4p+3
    t[2 * p] = _mm_unpacklo_epi16(s[2 * p], s[2 * p + 1]);
    t[2 * p + 1] = _mm_unpackhi_epi16(s[2 * p], s[2 * p + 1]);
  }
  for (int g = 0; g < 2; ++g)  // qwords of v8g..v8g+7: b0,b1 | b2,b3 | b4,b5 | b6,b7
    for (int h = 0; h < 2; ++h) {
      u[4 * g + 2 * h] = _mm_unpacklo_epi32(t[4 * g + h], t[4 * g + 2 + h]);
      u[4 * g + 2 * h + 1] = _mm_unpackhi_epi32(t[4 * g + h], t[4 * g + 2 + h]);
    }
  for (int q = 0; q < 4; ++q) {  // planes 2q, 2q+1: v0-7 from u[q], v8-15 from u[4 + q]
    St(out + 2 * q * stride, _mm_unpacklo_epi64(u[q], u[4 + q]));
    St(out + (2 * q + 1) * stride, _mm_unpackhi_epi64(u[q], u[4 + q]));
  }
}

// Plane b's 16 bytes at in + b * stride; writes v0-15 (128 bytes) at out.
inline void Unshuffle8x16(const uint8_t* in, size_t stride, uint8_t* out) {
  __m128i q[8], x[8];
  for (int j = 0; j < 4; ++j) {  // words (b2j, b2j+1) of v0-7 (q[j]) and v8-15 (q[4 + j])
    const __m128i lo = Ld(in + 2 * j * stride), hi = Ld(in + (2 * j + 1) * stride);
    q[j] = _mm_unpacklo_epi8(lo, hi);
    q[4 + j] = _mm_unpackhi_epi8(lo, hi);
  }
  for (int g = 0; g < 2; ++g) {  // dwords b0-3 and b4-7 of v8g+0..3 and v8g+4..7
    x[4 * g + 0] = _mm_unpacklo_epi16(q[4 * g + 0], q[4 * g + 1]);  // b0-3 of v0-3
    x[4 * g + 1] = _mm_unpackhi_epi16(q[4 * g + 0], q[4 * g + 1]);  // b0-3 of v4-7
    x[4 * g + 2] = _mm_unpacklo_epi16(q[4 * g + 2], q[4 * g + 3]);  // b4-7 of v0-3
    x[4 * g + 3] = _mm_unpackhi_epi16(q[4 * g + 2], q[4 * g + 3]);  // b4-7 of v4-7
  }
  for (int g = 0; g < 2; ++g)
    for (int h = 0; h < 2; ++h) {  // v8g+4h .. +3, two values a store
      uint8_t* o = out + (8 * g + 4 * h) * 8;
      St(o, _mm_unpacklo_epi32(x[4 * g + h], x[4 * g + 2 + h]));
      St(o + 16, _mm_unpackhi_epi32(x[4 * g + h], x[4 * g + 2 + h]));
    }
}
// 16 rows of 16 bytes at in + k * in_stride, transposed to out + b * out_stride: four rounds that each
// interleave row k with row k + 8 (the LOD levels' 16-byte entries; the network is its own inverse).
inline void Transpose16x16(const uint8_t* in, size_t in_stride, uint8_t* out, size_t out_stride) {
  __m128i r[16], o[16];
  for (int k = 0; k < 16; ++k) r[k] = Ld(in + k * in_stride);
  for (int round = 0; round < 4; ++round) {
    for (int k = 0; k < 8; ++k) {
      o[2 * k] = _mm_unpacklo_epi8(r[k], r[k + 8]);
      o[2 * k + 1] = _mm_unpackhi_epi8(r[k], r[k + 8]);
    }
    for (int k = 0; k < 16; ++k) r[k] = o[k];
  }
  for (int b = 0; b < 16; ++b) St(out + b * out_stride, r[b]);
}
#endif  // GT_SHUFFLE_SSE2

}  // namespace

//-------------------------------------------------------------------------------------------------------
// [SECTION] Entry points
//-------------------------------------------------------------------------------------------------------

void ShuffleBytes(const uint8_t* in, size_t n, size_t elem, uint8_t* out) {
  size_t done = 0;
#if GT_SHUFFLE_SSE2
  if (elem == 4) {
    for (; done + 16 <= n; done += 16) {
      const uint8_t* p = in + done * 4;
      const __m128i r[4] = {Ld(p), Ld(p + 16), Ld(p + 32), Ld(p + 48)};
      Shuffle4x16(r, out + done, n);
    }
  } else if (elem == 8) {
    for (; done + 16 <= n; done += 16) {
      const uint8_t* p = in + done * 8;
      __m128i r[8];
      for (int k = 0; k < 8; ++k) r[k] = Ld(p + 16 * k);
      Shuffle8x16(r, out + done, n);
    }
  } else if (elem == 16) {
    for (; done + 16 <= n; done += 16) Transpose16x16(in + done * 16, 16, out + done, n);
  }
#endif
  if (elem == 4) return ShuffleTail<4>(in, done, n, elem, out);
  if (elem == 8) return ShuffleTail<8>(in, done, n, elem, out);
  if (elem == 16) return ShuffleTail<16>(in, done, n, elem, out);
  ShuffleTail<0>(in, done, n, elem, out);
}

void UnshuffleBytes(const uint8_t* in, size_t n, size_t elem, uint8_t* out) {
  size_t done = 0;
#if GT_SHUFFLE_SSE2
  if (elem == 4)
    for (; done + 16 <= n; done += 16) Unshuffle4x16(in + done, n, out + done * 4);
  else if (elem == 8)
    for (; done + 16 <= n; done += 16) Unshuffle8x16(in + done, n, out + done * 8);
  else if (elem == 16)
    for (; done + 16 <= n; done += 16) Transpose16x16(in + done, n, out + done * 16, 16);
#endif
  if (elem == 4) return UnshuffleTail<4>(in, done, n, elem, out);
  if (elem == 8) return UnshuffleTail<8>(in, done, n, elem, out);
  if (elem == 16) return UnshuffleTail<16>(in, done, n, elem, out);
  UnshuffleTail<0>(in, done, n, elem, out);
}

void Delta64(const uint8_t* in, size_t n, uint8_t* out) {
  DeltaTail(in, 0, n, 0, out);
}

void DeltaShuffle64(const uint8_t* in, size_t n, uint8_t* out) {
  size_t done = 0;
#if GT_SHUFFLE_SSE2
  for (; done + 16 <= n; done += 16) {
    // Each register's two values minus the two before them (an unaligned load one value back; the
    // block's first value has 0 before it).
    const uint8_t* p = in + done * 8;
    __m128i r[8];
    for (int k = 0; k < 8; ++k) {
      const __m128i v = Ld(p + 16 * k);
      const __m128i before = (done == 0 && k == 0) ? _mm_slli_si128(v, 8) : Ld(p + 16 * k - 8);
      r[k] = _mm_sub_epi64(v, before);
    }
    Shuffle8x16(r, out + done, n);
  }
  if (done == n) return;
#endif
  // The tail: its differences into the planes through a small buffer (at most 15 values here; all of
  // them without SSE2).
  uint64_t prev = 0;
  if (done) std::memcpy(&prev, in + (done - 1) * 8, 8);
  uint8_t tail[16 * 8];
  for (size_t i = done; i < n;) {
    const size_t m = std::min<size_t>(16, n - i);
    DeltaTail(in + i * 8, 0, m, prev, tail);
    std::memcpy(&prev, in + (i + m - 1) * 8, 8);
    for (size_t j = 0; j < m; ++j)
      for (size_t b = 0; b < 8; ++b) out[b * n + i + j] = tail[j * 8 + b];
    i += m;
  }
}

}  // namespace gt::viewer::index_detail

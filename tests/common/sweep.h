// Exhaustive damage sweeps (every flipped byte, every cut) run 20-40x slower under ASan+UBSan, where they
// were the longest tests of CI's sanitizer step. There they visit every kSweepStride-th position (each mask
// of a sweep starting at another offset, so that the masks together still touch every byte); the native build
// visits all of them.
#pragma once

#include <cstddef>

namespace gt::test {

#if defined(GT_SANITIZED)  // the root CMakeLists, with GT_SANITIZE
inline constexpr size_t kSweepStride = 3;
#else
inline constexpr size_t kSweepStride = 1;
#endif

}  // namespace gt::test

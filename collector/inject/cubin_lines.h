// Cubins kept for PC sampling's source correlation: copied at MODULE_LOADED (the driver's image may go away),
// keyed by CUPTI's cubin CRC (the key PC records carry), asked once per sampled PC for its file and line with
// cuptiGetSassToSourceCorrelation. Both CUPTI calls are host-only: tests run them on a cubin built by nvcc,
// without a GPU (tests/collector/test_cubin_lines.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "decode/pc_sampling_decode.h"

namespace gt::inject {

class CubinLines {
 public:
  explicit CubinLines(size_t max_bytes) : max_bytes_(max_bytes) {}
  // Copies the cubin unless one with the same CRC is kept or the copy would pass max_bytes (then counted in
  // skipped()). Returns false when CUPTI cannot compute the CRC (not a cubin).
  bool Keep(const void* cubin, size_t size, uint64_t* crc = nullptr);
  // False when the cubin is unknown, the function is not in it, or the cubin has no line info (-lineinfo).
  bool Resolve(uint64_t crc, const std::string& function, uint64_t pc_offset, decode::SourceLine* out) const;
  size_t count() const;
  size_t bytes() const;
  uint64_t skipped() const;

 private:
  mutable std::mutex mu_;  // Keep runs in the app's module-load callbacks, Resolve on the flush thread
  size_t max_bytes_;
  size_t bytes_ = 0;
  uint64_t skipped_ = 0;
  std::map<uint64_t, std::vector<uint8_t>> cubins_;
};

}  // namespace gt::inject

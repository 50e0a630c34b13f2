// What common knows of the viewer index (.gtindex, docs/format.md "The viewer index"): its version, which
// only format_upgrade.cc interprets (next to the .gtrace versions), and the checksum both formats use. The
// index itself is written and read by the viewer core (gt/viewer/index.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "gt/status.h"

namespace gt {

struct IndexVersion {
  uint16_t major = 0, minor = 0;
};
IndexVersion CurrentIndexVersion();
// Ok for the version this build writes; kUnsupported ("stale: ...") for any other: the index is rebuilt.
Status CheckIndexVersion(IndexVersion v);

// CRC32C (Castagnoli), hardware-accelerated where the CPU has it. crc: 0 to start, the previous result to
// continue.
uint32_t Crc32c(uint32_t crc, const void* data, size_t n);

}  // namespace gt

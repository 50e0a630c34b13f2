// Peak arithmetic and memory rates for the roofline, derived from device attributes.
//
// FLOP/s = SM count x SM clock x FLOP per clock per SM (dense, an FMA counts 2). The per-SM table comes from
// NVIDIA's architecture whitepapers (V100, T4/Turing, A100, GA102, AD102, H100, B200); docs/collector.md
// lists it. DRAM bandwidth = memory clock x bus width / 8 x 2 (double data rate) when those attributes are
// known, else CUPTI's globalMemoryBandwidth. Values are marked PeakSource::kDerived; unknown architectures
// keep 0 (kUnknown).
#pragma once

#include <array>
#include <cstdint>

#include "gt/model.h"

namespace gt::decode {

// FLOP per clock per SM for each Precision; all zero when the architecture is not in the table.
std::array<double, kPrecisionCount> FlopsPerClockPerSm(uint32_t cc_major, uint32_t cc_minor);

// Fills peak_flops, dram_bandwidth (if mem clock and bus width are set or `cupti_bandwidth_bytes` > 0) and
// peak_source from the other fields of `d`.
void DerivePeaks(DeviceRecord& d, double cupti_bandwidth_bytes_per_s);

// Marketing chip name for a compute capability when CUPTI cannot tell ("GH100" for 9.0); "" when unknown.
const char* ChipForComputeCapability(uint32_t cc_major, uint32_t cc_minor);

}  // namespace gt::decode

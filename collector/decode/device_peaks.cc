#include "decode/device_peaks.h"

namespace gt::decode {
namespace {

struct ArchRow {
  uint8_t major, minor;
  // Order: fp64, fp32, fp16, bf16, fp64 tensor, tf32 tensor, fp16 tensor, bf16 tensor, fp8 tensor, int8
  // tensor.
  double per_sm[kPrecisionCount];
};

// Dense rates, FLOP (or OP for int8) per clock per SM.
constexpr ArchRow kArchTable[] = {
    {7, 0, {64, 128, 256, 0, 0, 0, 1024, 0, 0, 0}},                      // V100
    {7, 5, {4, 128, 256, 0, 0, 0, 512, 0, 0, 1024}},                     // T4 (Turing)
    {8, 0, {64, 128, 512, 512, 128, 512, 1024, 1024, 0, 2048}},          // A100
    {8, 6, {2, 256, 256, 256, 0, 256, 512, 512, 0, 1024}},               // GA10x
    {8, 7, {2, 256, 256, 256, 0, 256, 512, 512, 0, 1024}},               // Orin
    {8, 9, {2, 256, 256, 256, 0, 256, 512, 512, 1024, 1024}},            // AD10x
    {9, 0, {128, 256, 512, 512, 256, 2048, 4096, 4096, 8192, 8192}},     // H100 / H200 (SXM)
    {10, 0, {128, 256, 512, 512, 256, 4096, 8192, 8192, 16384, 16384}},  // B200
};

}  // namespace

std::array<double, kPrecisionCount> FlopsPerClockPerSm(uint32_t cc_major, uint32_t cc_minor) {
  std::array<double, kPrecisionCount> out{};
  for (const auto& row : kArchTable) {
    if (row.major == cc_major && row.minor == cc_minor) {
      for (size_t i = 0; i < kPrecisionCount; ++i) out[i] = row.per_sm[i];
      break;
    }
  }
  return out;
}

void DerivePeaks(DeviceRecord& d, double cupti_bandwidth) {
  auto per_sm = FlopsPerClockPerSm(d.cc_major, d.cc_minor);
  bool any = false;
  const double sm_hz = static_cast<double>(d.sm_clock_khz) * 1e3;
  for (size_t i = 0; i < kPrecisionCount; ++i) {
    d.peak_flops[i] = per_sm[i] * d.sm_count * sm_hz;
    any = any || d.peak_flops[i] > 0;
  }
  if (d.mem_clock_khz && d.mem_bus_width_bits) {
    d.dram_bandwidth = static_cast<double>(d.mem_clock_khz) * 1e3 * 2.0 * d.mem_bus_width_bits / 8.0;
  } else if (cupti_bandwidth > 0) {
    d.dram_bandwidth = cupti_bandwidth;
  }
  any = any || d.dram_bandwidth > 0;
  d.peak_source = static_cast<uint8_t>(any ? PeakSource::kDerived : PeakSource::kUnknown);
}

const char* ChipForComputeCapability(uint32_t major, uint32_t minor) {
  switch (major * 10 + minor) {
    case 70:
      return "GV100";
    case 75:
      return "TU10x";
    case 80:
      return "GA100";
    case 86:
      return "GA10x";
    case 87:
      return "GA10B";
    case 89:
      return "AD10x";
    case 90:
      return "GH100";
    case 100:
      return "GB100";
    default:
      return "";
  }
}

}  // namespace gt::decode

// [SECTION] Occupancy of analysis.h: the CUDA occupancy calculator's rules for sm_80/sm_90.
#include <algorithm>
#include <cstdio>

#include "gt/viewer/analysis.h"

namespace gt {

const char* OccupancyLimiterName(OccupancyLimiter l) {
  switch (l) {
    case OccupancyLimiter::kWarps:
      return "warps per SM (block size)";
    case OccupancyLimiter::kRegisters:
      return "registers";
    case OccupancyLimiter::kSharedMemory:
      return "shared memory";
    case OccupancyLimiter::kBlocks:
      return "blocks per SM";
    case OccupancyLimiter::kInvalid:
      return "launch exceeds the SM's resources";
    case OccupancyLimiter::kUnknown:
      break;
  }
  return "unknown";
}

namespace {
constexpr uint32_t kRegisterAllocUnit = 256;        // registers, per warp
constexpr uint32_t kSharedAllocUnit = 128;          // bytes
constexpr uint32_t kSharedReservedPerBlock = 1024;  // bytes the driver keeps per block on sm_80+
constexpr uint32_t kMaxRegistersPerThread = 255;

uint32_t RoundUp(uint64_t v, uint64_t unit) {
  return static_cast<uint32_t>((v + unit - 1) / unit * unit);
}
}  // namespace

Occupancy ComputeOccupancy(const LaunchShape& launch, const DeviceRecord& device) {
  Occupancy o;
  if (!launch.known() || device.max_warps_per_sm == 0) return o;
  const uint32_t warp = device.warp_size ? device.warp_size : 32;
  const uint32_t max_blocks = device.max_blocks_per_sm ? device.max_blocks_per_sm : 32;
  const uint32_t regs_per_sm = device.regs_per_sm ? device.regs_per_sm : 65536;
  const uint32_t smem_per_sm = device.shared_mem_per_sm;
  o.warps_per_block = (launch.block_threads + warp - 1) / warp;
  o.blocks_by_warps = device.max_warps_per_sm / o.warps_per_block;
  o.blocks_by_limit = max_blocks;
  // Registers: allocated per warp in units of 256; 0 registers (unknown) does not limit.
  o.blocks_by_registers = max_blocks;
  if (launch.registers_per_thread > 0) {
    uint32_t regs = std::min(launch.registers_per_thread, kMaxRegistersPerThread);
    uint32_t per_warp = RoundUp(uint64_t{regs} * warp, kRegisterAllocUnit);
    uint32_t warps_by_regs = regs_per_sm / per_warp;
    o.blocks_by_registers = warps_by_regs / o.warps_per_block;
  }
  o.blocks_by_shared = max_blocks;
  uint64_t smem = uint64_t{launch.static_shared_bytes} + launch.dynamic_shared_bytes;
  if (smem_per_sm > 0) {
    uint32_t per_block = RoundUp(smem + kSharedReservedPerBlock, kSharedAllocUnit);
    o.blocks_by_shared = smem_per_sm / per_block;
  }
  o.blocks_per_sm =
      std::min({o.blocks_by_warps, o.blocks_by_registers, o.blocks_by_shared, o.blocks_by_limit});
  // The first resource (in the calculator's order) that reaches the minimum is the limiter.
  if (o.blocks_per_sm == 0)
    o.limiter = OccupancyLimiter::kInvalid;
  else if (o.blocks_by_registers == o.blocks_per_sm && o.blocks_by_registers < o.blocks_by_warps)
    o.limiter = OccupancyLimiter::kRegisters;
  else if (o.blocks_by_shared == o.blocks_per_sm && o.blocks_by_shared < o.blocks_by_warps)
    o.limiter = OccupancyLimiter::kSharedMemory;
  else if (o.blocks_by_limit == o.blocks_per_sm && o.blocks_by_limit < o.blocks_by_warps)
    o.limiter = OccupancyLimiter::kBlocks;
  else
    o.limiter = OccupancyLimiter::kWarps;
  o.theoretical_warps = o.blocks_per_sm * o.warps_per_block;
  o.theoretical_pct = 100.0 * o.theoretical_warps / device.max_warps_per_sm;
  if (o.blocks_per_sm > 0 && device.sm_count > 0 && launch.grid_blocks > 0) {
    double resident = double(o.blocks_per_sm) * device.sm_count;
    o.waves = double(launch.grid_blocks) / resident;
    o.grid_too_small = double(launch.grid_blocks) < resident;
  }
  o.valid = true;
  char buf[256];
  switch (o.limiter) {
    case OccupancyLimiter::kRegisters:
      snprintf(buf, sizeof buf, "registers: %u regs/thread x %u threads -> %u blocks/SM",
               launch.registers_per_thread, launch.block_threads, o.blocks_per_sm);
      break;
    case OccupancyLimiter::kSharedMemory:
      snprintf(buf, sizeof buf, "shared memory: %llu B/block (+1 KiB reserved) of %u B/SM -> %u blocks/SM",
               static_cast<unsigned long long>(smem), smem_per_sm, o.blocks_per_sm);
      break;
    case OccupancyLimiter::kBlocks:
      snprintf(buf, sizeof buf, "blocks per SM: at most %u blocks of %u threads", o.blocks_by_limit,
               launch.block_threads);
      break;
    case OccupancyLimiter::kWarps:
      snprintf(buf, sizeof buf, "warps: %u warps/block, %u blocks fill the SM's %u warps", o.warps_per_block,
               o.blocks_per_sm, device.max_warps_per_sm);
      break;
    case OccupancyLimiter::kInvalid:
      snprintf(buf, sizeof buf, "no block of this launch fits on an SM");
      break;
    case OccupancyLimiter::kUnknown:
      buf[0] = 0;
      break;
  }
  o.explanation = buf;
  return o;
}

}  // namespace gt

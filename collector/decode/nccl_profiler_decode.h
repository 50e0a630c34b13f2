// NCCL's profiler plugin events, decoded: pure functions from the descriptors NCCL hands the plugin
// (nccl_profiler_abi.h, one layout per plugin version) to a plain NcclEvent the plugin keeps in its pool, and
// from a finished NcclEvent to the records of the trace (NcclCollRecord, NcclChannelRecord; format 1.3).
//
// Strings NCCL passes (function, data type, algorithm, protocol: its static names) are copied at once,
// bounded, so nothing later reads NCCL's memory; the plugin (collector/inject/nccl_profiler.cc) and the tests
// and fuzzer call the same functions.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "decode/nccl_profiler_abi.h"
#include "gt/model.h"

namespace gt::decode {

// What a descriptor is, as far as gtrace cares.
enum class NcclEventType : uint8_t {
  kUnknown = 0,  // a type this build does not know (a newer NCCL): refused, counted
  kGroup,        // NCCL's group event: no record, but the handle must be non-null (NCCL 2.26/2.27 start
                 // collective events only under a group that has one)
  kColl,
  kP2p,
  kCeColl,   // v6: a copy-engine collective
  kChannel,  // ncclProfileKernelCh: one channel of an operation on the GPU
  kIgnored,  // a known type gtrace did not ask for (proxy, API, net plugin events)
};

inline constexpr size_t kNcclNameBytes = 16;  // 15 characters + NUL: NCCL's longest names are 14

struct NcclEvent {
  NcclEventType type = NcclEventType::kUnknown;
  uint8_t n_channels = 0, n_warps = 0, channel = 0;
  int32_t root = -1, rank = -1, nranks = 0;
  uint32_t tid = 0;
  uint64_t comm_hash = 0, seq = 0, count = 0;
  int64_t start = 0, end = 0;           // host, trace clock (set by the plugin)
  uint64_t gpu_start = 0, gpu_end = 0;  // kChannel: NCCL's GPU timer values (%globaltimer, ns)
  char func[kNcclNameBytes] = {}, datatype[kNcclNameBytes] = {}, algo[kNcclNameBytes] = {},
       proto[kNcclNameBytes] = {};
};

// What the plugin knows of a communicator from init (v4+); v3 descriptors carry the hash themselves.
struct NcclCommInfo {
  uint64_t comm_hash = 0;
  int32_t rank = -1, nranks = 0;
};

// Copies a NUL-terminated name, at most kNcclNameBytes - 1 characters (longer ones are cut); null -> "".
void CopyNcclName(const char* s, char (&dst)[kNcclNameBytes]);

// Descriptor -> event. `comm` fills the communicator fields (v4+). A kChannel event gets its channel and GPU
// start; its parent's identity is the plugin's to copy. Never reads a string past kNcclNameBytes - 1.
NcclEvent ReadNcclDescr(const nccl_abi::DescrV6& d, const NcclCommInfo& comm);  // v6 (and v5's members)
NcclEvent ReadNcclDescr(const nccl_abi::DescrV5& d, const NcclCommInfo& comm);
NcclEvent ReadNcclDescr(const nccl_abi::DescrV4& d, const NcclCommInfo& comm);
NcclEvent ReadNcclDescr(const nccl_abi::DescrV3& d, const NcclCommInfo& comm);
NcclEventType NcclTypeOf(uint64_t type_bits, int version);

// The GPU timer (%globaltimer) counts nanoseconds of wall-clock time on NVIDIA's Linux driver; on the trace
// clock it is `gpu + realtime_to_trace_ns` (trace = CLOCK_MONOTONIC = CLOCK_REALTIME + offset). A value is
// kept only when it lands where it must: not after the host saw it (`observed`, trace clock; 2 ms of slack
// for the clocks' disagreement) and not more than 60 s before. False: the timer is not wall-clock based here.
bool NcclGpuTimeToTrace(uint64_t gpu, int64_t realtime_to_trace_ns, int64_t observed, int64_t* trace);

using InternFn = std::function<StringId(std::string_view)>;
// A finished kColl / kP2p / kCeColl event -> its record.
NcclCollRecord ToNcclCollRecord(const NcclEvent& e, uint32_t pid, const InternFn& intern);
// A finished kChannel event (gpu times already on the trace clock in start/end) -> its record.
NcclChannelRecord ToNcclChannelRecord(const NcclEvent& e, uint32_t pid, const InternFn& intern);

}  // namespace gt::decode

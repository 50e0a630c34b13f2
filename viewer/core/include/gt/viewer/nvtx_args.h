// Decoded NVTX payload fields of a range (TraceModel::nvtx_args, format 1.2), and NCCL's API calls read
// from them: communicator hash, message size, reduction op, root or peer, as NCCL 2.19+ names its schema
// entries (src/include/nvtx_payload_schemas.h).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gt/viewer/model.h"

namespace gt::viewer {

// The fields of the NVTX range that starts at `start` on (pid, tid); empty when it has none.
std::span<const NvtxArgRecord> NvtxArgsAt(const TraceModel& m, uint32_t pid, uint32_t tid, int64_t start);
// The fields of an NVTX range event; empty for other events.
std::span<const NvtxArgRecord> NvtxArgsOf(const TraceModel& m, EventId e);
// A field's value as text: "Sum", "67108864", "-1", "1.5", the string; sizes are shown by the caller.
std::string FormatNvtxArg(const TraceModel& m, const NvtxArgRecord& a);

// NCCL's schema entry names.
inline constexpr const char* kNcclCommField = "NCCL communicator ID";
inline constexpr const char* kNcclBytesField = "Message size [bytes]";
inline constexpr const char* kNcclRanksField = "No. of ranks";

// One NCCL API call with a payload: the NVTX range NCCL pushed ("ncclAllReduce") and its fields.
struct NcclCall {
  uint32_t pid = 0, tid = 0;
  int64_t start = 0, end = 0;
  EventId range;           // the NVTX range event (invalid when the args have no range in the model)
  std::string op;          // the range's name without "nccl": "AllReduce", "Send", "CommInitRankConfig"
  uint64_t comm = 0;       // communicator hash: one value on every rank of the communicator
  bool has_bytes = false;  // collectives and point-to-point calls carry a message size; init/destroy do not
  uint64_t bytes = 0;      // NCCL's message size: count x type size (per rank for AllGather/ReduceScatter)
  int32_t nranks = 0;      // CommInitRank* / CommSplit: ranks in the new communicator
  std::string redop;       // "Sum", ... (AllReduce, Reduce, ReduceScatter)
  int32_t root = -1, peer = -1;
};

// Every NCCL call of the model whose range carries a communicator hash, sorted by (pid, tid, start).
std::vector<NcclCall> NcclCalls(const TraceModel& m);

}  // namespace gt::viewer

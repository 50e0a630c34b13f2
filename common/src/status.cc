#include "gt/status.h"

#include "gt/model.h"

namespace gt {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalidArgument:
      return "invalid argument";
    case StatusCode::kNotFound:
      return "not found";
    case StatusCode::kCorrupt:
      return "corrupt";
    case StatusCode::kTruncated:
      return "truncated";
    case StatusCode::kUnsupported:
      return "unsupported";
    case StatusCode::kIoError:
      return "I/O error";
    case StatusCode::kResourceExhausted:
      return "resource exhausted";
    case StatusCode::kInternal:
      return "internal error";
  }
  return "unknown status";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  std::string s = StatusCodeName(code_);
  if (!message_.empty()) s += ": " + message_;
  return s;
}

void AssertFail(const char* expr, const char* file, int line, const char* msg) {
  std::fprintf(stderr, "%s:%d: assertion failed: %s%s%s\n", file, line, expr, msg ? ": " : "",
               msg ? msg : "");
  std::fflush(stderr);
  std::abort();
}

const char* RecordKindName(RecordKind kind) {
  switch (kind) {
    case RecordKind::kMetadata:
      return "metadata";
    case RecordKind::kStrings:
      return "strings";
    case RecordKind::kProcess:
      return "process";
    case RecordKind::kThread:
      return "thread";
    case RecordKind::kDevice:
      return "device";
    case RecordKind::kContext:
      return "context";
    case RecordKind::kStream:
      return "stream";
    case RecordKind::kKernel:
      return "kernel";
    case RecordKind::kMemcpy:
      return "memcpy";
    case RecordKind::kMemset:
      return "memset";
    case RecordKind::kApiCall:
      return "api_call";
    case RecordKind::kNvtx:
      return "nvtx";
    case RecordKind::kSync:
      return "sync";
    case RecordKind::kMemory:
      return "memory";
    case RecordKind::kOverhead:
      return "overhead";
    case RecordKind::kCounterDescriptor:
      return "counter_descriptor";
    case RecordKind::kCounterSample:
      return "counter_sample";
    case RecordKind::kKernelMetric:
      return "kernel_metric";
    case RecordKind::kStallSample:
      return "stall_sample";
    case RecordKind::kFlow:
      return "flow";
    case RecordKind::kLoss:
      return "loss";
    case RecordKind::kNvtxArg:
      return "nvtx_arg";
    case RecordKind::kNcclColl:
      return "nccl_coll";
    case RecordKind::kNcclChannel:
      return "nccl_channel";
    case RecordKind::kCpuStackNode:
      return "cpu_stack_node";
    case RecordKind::kCpuSample:
      return "cpu_sample";
  }
  return "unknown";
}

const char* NvtxArgKindName(uint8_t kind) {
  static const char* const kNames[] = {"none", "int", "uint", "float", "enum", "string"};
  return kind < sizeof(kNames) / sizeof(kNames[0]) ? kNames[kind] : "unknown";
}

const char* NcclOpKindName(uint8_t kind) {
  static const char* const kNames[] = {"unknown", "coll", "p2p", "ce_coll"};
  return kind < sizeof(kNames) / sizeof(kNames[0]) ? kNames[kind] : "unknown";
}

const char* CopyKindName(uint8_t kind) {
  static const char* const kNames[] = {"unknown", "HtoD", "DtoH", "DtoD", "HtoH", "PtoP",
                                       "HtoA",    "AtoH", "AtoD", "DtoA", "AtoA"};
  return kind < sizeof(kNames) / sizeof(kNames[0]) ? kNames[kind] : "unknown";
}

const char* MemoryKindName(uint8_t kind) {
  static const char* const kNames[] = {"unknown", "pageable", "pinned",          "device",
                                       "array",   "managed",  "device (static)", "managed (static)"};
  return kind < sizeof(kNames) / sizeof(kNames[0]) ? kNames[kind] : "unknown";
}

const char* PrecisionName(Precision p) {
  static const char* const kNames[] = {"FP64",        "FP32",        "FP16",        "BF16",
                                       "FP64 tensor", "TF32 tensor", "FP16 tensor", "BF16 tensor",
                                       "FP8 tensor",  "INT8 tensor"};
  auto i = static_cast<size_t>(p);
  return i < kPrecisionCount ? kNames[i] : "unknown";
}

const char* SeverityName(uint8_t severity) {
  static const char* const kNames[] = {"info", "warning", "error", "data loss"};
  return severity < 4 ? kNames[severity] : "unknown";
}

const char* SyncKindName(uint8_t kind) {
  static const char* const kNames[] = {"unknown", "event sync", "stream wait event", "stream sync",
                                       "context sync"};
  return kind < 5 ? kNames[kind] : "unknown";
}

}  // namespace gt

// The record model shared by the collector (writes), the reader (decodes) and the viewer (imports).
//
// Plain structs, one per record kind. They are the *interface* of the format, not its encoding: on disk each
// kind lives in its own chunk type as delta/zigzag/varint columns + zstd (see docs/format.md). Enum values
// are stored on disk: never renumber, only append.
//
// Conventions:
//  - Timestamps are int64 nanoseconds on the trace clock (CUPTI's, shared by host API records and GPU
//  records);
//    ClockSync pairs map it to wall-clock time.
//  - Strings are interned: StringId 0 is the empty string. Ids are global within one ReadTrace() call (the
//  reader
//    remaps per-segment ids; see docs/format.md "Segments").
//  - kNone (UINT32_MAX) marks an absent id.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace gt {

using StringId = uint32_t;
using Timestamp = int64_t;
inline constexpr uint32_t kNone = UINT32_MAX;

// Chunk payload kinds that carry records. On-disk values: append only.
enum class RecordKind : uint16_t {
  kMetadata = 1,
  kStrings = 2,
  kProcess = 3,
  kThread = 4,
  kDevice = 5,
  kContext = 6,
  kStream = 7,
  kKernel = 8,
  kMemcpy = 9,
  kMemset = 10,
  kApiCall = 11,
  kNvtx = 12,
  kSync = 13,
  kMemory = 14,
  kOverhead = 15,
  kCounterDescriptor = 16,
  kCounterSample = 17,
  kKernelMetric = 18,
  kStallSample = 19,
  kFlow = 20,
  kLoss = 21,
  kNvtxArg = 22,      // 1.2
  kNcclColl = 23,     // 1.3
  kNcclChannel = 24,  // 1.3
  kCpuStackNode = 25,  // 1.4
  kCpuSample = 26,     // 1.4
};
inline constexpr RecordKind kLastRecordKind = RecordKind::kCpuSample;

// ---- trace-level
// ---------------------------------------------------------------------------------------------

struct ClockSync {
  int64_t realtime_ns = 0;  // CLOCK_REALTIME, ns since the Unix epoch
  Timestamp trace_ns = 0;   // the same instant on the trace clock
  friend bool operator==(const ClockSync&, const ClockSync&) = default;
};

struct TraceMetadata {
  std::vector<std::pair<std::string, std::string>> entries;  // "command_line", "host", "tool_version", ...
  std::vector<ClockSync> clock_syncs;
  const std::string* Find(const std::string& key) const {
    for (const auto& [k, v] : entries)
      if (k == key) return &v;
    return nullptr;
  }
  // What every reader does with a second metadata chunk (a file of several segments: gcollect's parts, a
  // counters run, merged ranks): later values win per key, clock anchors accumulate (each once).
  void MergeFrom(const TraceMetadata& later);
};

// ---- entities
// ------------------------------------------------------------------------------------------------

struct ProcessRecord {
  uint32_t pid = 0;
  uint32_t parent_pid = 0;  // 0 = unknown / not traced
  StringId name = 0;        // e.g. "python3"
  StringId command_line = 0;
  Timestamp start_ns = 0;
  Timestamp end_ns = 0;  // 0 while running / unknown
  int32_t exit_code = 0;
  uint8_t exit_kind = 0;  // ExitKind
  // Where the process ran and which rank of a distributed job it was (format 1.1): what a merge of one file
  // per rank needs to group host -> rank -> GPU and to know which processes share a clock (same boot id).
  StringId host = 0;        // host name
  StringId boot_id = 0;     // /proc/sys/kernel/random/boot_id: one CLOCK_MONOTONIC per boot
  StringId job = 0;         // the launcher's job id (TORCHELASTIC_RUN_ID, SLURM_JOB_ID, ...), "" = none
  int32_t rank = -1;        // global rank (RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK, ...), -1 = none
  int32_t local_rank = -1;  // rank on its host, -1 = none
  int32_t world_size = 0;   // ranks in the job, 0 = unknown
  friend bool operator==(const ProcessRecord&, const ProcessRecord&) = default;
};

enum class ExitKind : uint8_t { kUnknown = 0, kExited = 1, kSignaled = 2, kRunning = 3 };

struct ThreadRecord {
  uint32_t pid = 0;
  uint32_t tid = 0;
  StringId name = 0;
  friend bool operator==(const ThreadRecord&, const ThreadRecord&) = default;
};

// Peak rates per precision for the roofline; 0 = unknown.
enum class Precision : uint8_t {
  kFp64 = 0,
  kFp32 = 1,
  kFp16 = 2,
  kBf16 = 3,
  kFp64Tensor = 4,
  kTf32Tensor = 5,
  kFp16Tensor = 6,
  kBf16Tensor = 7,
  kFp8Tensor = 8,
  kInt8Tensor = 9,
  kCount = 10,
};
inline constexpr size_t kPrecisionCount = static_cast<size_t>(Precision::kCount);

enum class PeakSource : uint8_t { kUnknown = 0, kDerived = 1, kMeasured = 2, kTable = 3 };

struct DeviceRecord {
  uint32_t device_id = 0;  // CUPTI device index in its process
  uint32_t pid = 0;        // the process that reported it
  StringId name = 0;       // "NVIDIA H200"
  StringId uuid = 0;
  StringId chip = 0;  // "GH100"
  uint8_t cc_major = 0, cc_minor = 0;
  uint32_t sm_count = 0;
  uint32_t sm_clock_khz = 0;
  uint32_t mem_clock_khz = 0;
  uint32_t mem_bus_width_bits = 0;
  uint64_t memory_bytes = 0;
  uint64_t l2_bytes = 0;
  uint32_t shared_mem_per_sm = 0;
  uint32_t shared_mem_per_block_max = 0;
  uint32_t regs_per_sm = 0;
  uint32_t max_warps_per_sm = 0;
  uint32_t max_blocks_per_sm = 0;
  uint32_t max_threads_per_block = 0;
  uint32_t warp_size = 32;
  double dram_bandwidth = 0;                         // bytes/s
  double l2_bandwidth = 0;                           // bytes/s
  double l1_bandwidth = 0;                           // bytes/s (all SMs)
  std::array<double, kPrecisionCount> peak_flops{};  // FLOP/s
  uint8_t peak_source = 0;                           // PeakSource
  friend bool operator==(const DeviceRecord&, const DeviceRecord&) = default;
};

struct ContextRecord {
  uint32_t pid = 0;
  uint32_t device_id = 0;
  uint32_t context_id = 0;
};

struct StreamRecord {
  uint32_t pid = 0;
  uint32_t device_id = 0;
  uint32_t context_id = 0;
  uint32_t stream_id = 0;
  int32_t priority = 0;
  uint8_t is_default = 0;
  StringId name = 0;  // NVTX-named streams
  friend bool operator==(const StreamRecord&, const StreamRecord&) = default;
};

// ---- GPU activity
// --------------------------------------------------------------------------------------------

enum class LaunchType : uint8_t {
  kRegular = 0,
  kCooperativeSingle = 1,
  kCooperativeMulti = 2,
  kCluster = 3,
  kGraph = 4
};

struct KernelRecord {
  Timestamp start = 0, end = 0;
  uint32_t pid = 0;
  uint32_t device_id = 0;
  uint32_t context_id = 0;
  uint32_t stream_id = 0;
  uint32_t correlation_id = 0;
  StringId name = 0;  // demangled
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint32_t, 3> block{1, 1, 1};
  std::array<uint32_t, 3> cluster{0, 0, 0};
  uint32_t registers_per_thread = 0;
  uint32_t static_shared_bytes = 0;
  uint32_t dynamic_shared_bytes = 0;
  uint32_t local_bytes_per_thread = 0;
  uint8_t launch_type = 0;  // LaunchType
  uint32_t graph_id = 0;    // 0 = not from a graph
  uint64_t graph_node_id = 0;
};

enum class CopyKind : uint8_t {
  kUnknown = 0,
  kHtoD = 1,
  kDtoH = 2,
  kDtoD = 3,
  kHtoH = 4,
  kPtoP = 5,
  kHtoA = 6,
  kAtoH = 7,
  kAtoD = 8,
  kDtoA = 9,
  kAtoA = 10
};
enum class MemoryKind : uint8_t {
  kUnknown = 0,
  kPageable = 1,
  kPinned = 2,
  kDevice = 3,
  kArray = 4,
  kManaged = 5,
  kDeviceStatic = 6,
  kManagedStatic = 7
};

struct MemcpyRecord {
  Timestamp start = 0, end = 0;
  uint32_t pid = 0;
  uint32_t device_id = 0;
  uint32_t context_id = 0;
  uint32_t stream_id = 0;
  uint32_t correlation_id = 0;
  uint64_t bytes = 0;
  uint8_t copy_kind = 0;  // CopyKind
  uint8_t src_kind = 0;   // MemoryKind
  uint8_t dst_kind = 0;   // MemoryKind
  uint8_t is_async = 0;
  uint32_t peer_device_id = kNone;  // PtoP destination
  uint32_t graph_id = 0;
};

struct MemsetRecord {
  Timestamp start = 0, end = 0;
  uint32_t pid = 0;
  uint32_t device_id = 0;
  uint32_t context_id = 0;
  uint32_t stream_id = 0;
  uint32_t correlation_id = 0;
  uint64_t bytes = 0;
  uint32_t value = 0;
  uint8_t memory_kind = 0;  // MemoryKind
  uint8_t is_async = 0;
  uint32_t graph_id = 0;
};

// ---- host activity
// -------------------------------------------------------------------------------------------

enum class ApiDomain : uint8_t { kRuntime = 0, kDriver = 1 };

struct ApiCallRecord {
  Timestamp start = 0, end = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint32_t correlation_id = 0;
  uint32_t callback_id = 0;  // CUPTI cbid in its domain
  StringId name = 0;         // "cudaLaunchKernel"
  int32_t return_code = 0;
  uint8_t domain = 0;  // ApiDomain
};

enum class NvtxPayloadKind : uint8_t {
  kNone = 0,
  kU64 = 1,
  kI64 = 2,
  kF64 = 3,
  kU32 = 4,
  kI32 = 5,
  kF32 = 6
};
enum NvtxFlags : uint8_t {
  kNvtxMark = 1 << 0,      // instantaneous (start == end)
  kNvtxHasColor = 1 << 1,  // color holds ARGB
  kNvtxStartEnd = 1 << 2,  // nvtxRangeStart/End (may end on another thread) rather than push/pop
  kNvtxUnclosed = 1 << 3,  // still open when the trace ended: end is the trace end
};

struct NvtxRecord {
  Timestamp start = 0, end = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  StringId domain = 0;  // 0 = default domain
  StringId message = 0;
  uint32_t category = 0;
  uint32_t color = 0;        // ARGB
  uint64_t payload = 0;      // raw bits, interpreted by payload_kind
  uint8_t payload_kind = 0;  // NvtxPayloadKind
  uint8_t flags = 0;         // NvtxFlags
};

// One decoded field of an NVTX extended payload (NVTX's payload extension: nvtxPayloadSchemaRegister'd
// schemas; NCCL 2.19+ attaches one to each API range). A range's fields are separate records keyed by the
// range's (pid, tid, start): NvtxRecord stays fixed-size, and ranges without payload (nearly all) cost
// nothing.
enum class NvtxArgKind : uint8_t { kNone = 0, kInt = 1, kUint = 2, kFloat = 3, kEnum = 4, kString = 5 };

struct NvtxArgRecord {
  Timestamp start = 0;  // the range's start: with pid and tid the key of its NvtxRecord
  uint32_t pid = 0;
  uint32_t tid = 0;
  StringId name = 0;   // the schema entry's name ("Message size [bytes]")
  StringId text = 0;   // kEnum: the value's name (0 when not registered); kString: the text
  uint64_t value = 0;  // kInt: int64 bits; kUint: value; kFloat: double bits; kEnum: the raw value
  uint8_t kind = 0;    // NvtxArgKind
};

// One NCCL collective or point-to-point operation as NCCL's profiler plugin saw it (format 1.3; the
// plugin is libgtrace_inject.so itself, loaded by NCCL through NCCL_PROFILER_PLUGIN). `start`/`end` are the
// host times, on the trace clock, of NCCL's task event: it starts when NCCL hands the operation's kernel plan
// to its proxy, right after launching the kernel on the same thread, and stops when that is done (the GPU
// work runs later; its per-channel times are NcclChannelRecords). (comm_hash, func, seq) names one collective
// on every rank of the communicator: NCCL counts `seq` per communicator and per function.
enum class NcclOpKind : uint8_t { kColl = 1, kP2p = 2, kCeColl = 3 };

struct NcclCollRecord {
  Timestamp start = 0, end = 0;
  uint64_t comm_hash = 0;  // NCCL's communicator hash (the NVTX payload's "NCCL communicator ID")
  uint64_t seq = 0;        // kColl/kCeColl: NCCL's sequence number; kP2p: this rank's n-th Send (or Recv)
  uint64_t count = 0;      // elements
  uint32_t pid = 0;
  uint32_t tid = 0;        // the thread that launched it
  StringId func = 0;       // "AllReduce", "AllGather", "Send", "Recv", ...
  StringId datatype = 0;   // "ncclFloat32", ...
  StringId algo = 0;       // "Ring", "Tree", "NVLS", ... (collectives); 0 for P2P
  StringId proto = 0;      // "LL", "LL128", "Simple" (collectives); CE: the sync strategy
  int32_t root = -1;       // kColl: the root (-1 none); kP2p: the peer rank
  int32_t rank = -1;       // this process's rank in the communicator
  int32_t nranks = 0;      // the communicator's ranks; 0 unknown (NCCL before 2.27)
  uint8_t n_channels = 0;  // channels NCCL chose (kColl, kP2p)
  uint8_t n_warps = 0;     // warps per block (kColl)
  uint8_t kind = 0;        // NcclOpKind
};

// One channel of an NCCL operation on the GPU (NCCL's ncclProfileKernelCh events: the kernel's start and
// stop on that channel, read from the GPU's global timer by NCCL's proxy thread), on the trace clock. Keyed
// to its NcclCollRecord by (pid, comm_hash, func, seq). Recorded with gcollect --nccl-plugin=channels only.
struct NcclChannelRecord {
  Timestamp start = 0, end = 0;
  uint64_t comm_hash = 0;
  uint64_t seq = 0;
  uint32_t pid = 0;
  StringId func = 0;
  uint8_t channel = 0;
};

// Sampled CPU stacks (gcollect --sample=cpu, 1.4). A process's stacks form a tree: each node is one frame
// called from its parent node, so a sample names its whole stack by one node id and a stack seen a thousand
// times costs one set of nodes. Frames are interned strings: "file.py:function:line" (Python, kind 1),
// "libfoo.so!symbol" or "libfoo.so+0x1234" where no symbol is exported (native, kind 0).
enum class FrameKind : uint8_t { kNative = 0, kPython = 1 };
struct CpuStackNodeRecord {
  uint32_t pid = 0;
  uint32_t node = 0;    // >= 1, unique within the process
  uint32_t parent = 0;  // 0: an outermost frame
  StringId frame = 0;
  uint8_t kind = 0;  // FrameKind
};
// What one sample could and could not see (CpuSampleRecord::flags).
enum CpuSampleFlags : uint8_t {
  kSampleTruncated = 1 << 0,     // deeper than the frames kept (the outermost ones are missing)
  kSamplePython = 1 << 1,        // the thread runs Python and its Python frames were read
  kSampleNoPython = 1 << 2,      // a Python thread whose frames could not be read (version, bad frame)
  kSampleIdleRepeat = 1 << 3,    // the thread used no CPU since its last sample: that stack, not re-read
  kSampleUnwindFailed = 1 << 4,  // no native frame could be unwound (stack = 0 when no Python either)
};
struct CpuSampleRecord {
  Timestamp timestamp = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint32_t stack = 0;  // the innermost frame's CpuStackNodeRecord::node; 0: nothing could be unwound
  uint8_t flags = 0;   // CpuSampleFlags
};

enum class SyncKind : uint8_t {
  kUnknown = 0,
  kEventSync = 1,
  kStreamWaitEvent = 2,
  kStreamSync = 3,
  kContextSync = 4
};

struct SyncRecord {
  Timestamp start = 0, end = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;  // 0 = unknown
  uint32_t device_id = kNone;
  uint32_t context_id = 0;
  uint32_t stream_id = kNone;
  uint32_t correlation_id = 0;
  uint32_t event_id = kNone;
  uint8_t sync_kind = 0;  // SyncKind
};

enum class MemoryOp : uint8_t { kAlloc = 0, kFree = 1 };

struct MemoryRecord {
  Timestamp timestamp = 0;
  uint32_t pid = 0;
  uint32_t device_id = 0;
  uint32_t context_id = 0;
  uint32_t stream_id = kNone;
  uint32_t correlation_id = 0;
  uint64_t address = 0;
  uint64_t bytes = 0;
  uint8_t op = 0;           // MemoryOp
  uint8_t memory_kind = 0;  // MemoryKind
  uint8_t is_async = 0;     // cudaMallocAsync / pools
};

struct OverheadRecord {
  Timestamp start = 0, end = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  StringId kind = 0;  // "CUPTI buffer flush", "driver compiler", ...
};

// ---- metrics
// -------------------------------------------------------------------------------------------------

// A time series: GPU utilization, SM clock, power, ... (NVML) or any imported counter track.
struct CounterDescriptor {
  uint32_t counter_id = 0;
  uint32_t pid = 0;            // 0 = system-wide
  uint32_t device_id = kNone;  // kNone = not device-bound
  StringId name = 0;           // "GPU utilization"
  StringId unit = 0;           // "%", "MHz", "W", "C", "bytes"
};

struct CounterSample {
  uint32_t counter_id = 0;
  Timestamp timestamp = 0;
  double value = 0;
};

enum KernelMetricFlags : uint8_t {
  kMetricSuspect = 1 << 0,  // impossible value (e.g. ratio > 100% from mixed replay passes); shown flagged
  kMetricClamped = 1 << 1,  // value was clamped for display; raw value kept in `value`
};

// Launch ordinals count the launches of one kernel name in one process, 0-based, in launch order. Kernels run
// by CUDA graph launches are counted apart, with this bit set: the n-th graph-launched kernel of that name
// (graph launches in call order, a graph's kernels in dependency order). Keeping the two apart means a graph
// whose kernels cannot be counted never shifts the ordinals of direct launches.
inline constexpr uint32_t kGraphOrdinalBit = 1u << 31;
constexpr bool IsGraphOrdinal(uint32_t ordinal) {
  return ordinal != kNone && (ordinal & kGraphOrdinalBit) != 0;
}
constexpr uint32_t OrdinalIndex(uint32_t ordinal) {
  return ordinal == kNone ? kNone : ordinal & ~kGraphOrdinalBit;
}

// One hardware-counter value of one kernel instance. Joined to a KernelRecord by (pid, correlation_id) when
// the counters came from the same run, else by (pid, kernel_name, launch_ordinal): the n-th launch (0-based)
// of that kernel name in that process (see kGraphOrdinalBit).
struct KernelMetricRecord {
  uint32_t pid = 0;
  uint32_t correlation_id = 0;  // 0 = join by name + ordinal
  StringId kernel_name = 0;
  uint32_t launch_ordinal = 0;
  StringId metric = 0;  // full CUPTI name, e.g. "dram__bytes_read.sum"
  double value = 0;
  uint8_t flags = 0;  // KernelMetricFlags
  friend bool operator==(const KernelMetricRecord&, const KernelMetricRecord&) = default;
};

// A warp-stall histogram bin of one kernel instance (counters) or of one kernel name (PC sampling).
struct StallSample {
  uint32_t pid = 0;
  uint32_t correlation_id = 0;  // 0 = join by name + ordinal
  StringId kernel_name = 0;
  uint32_t launch_ordinal = kNone;  // kNone = aggregated over all launches of the name
  StringId reason = 0;              // "long_scoreboard"
  uint64_t pc_offset = UINT64_MAX;  // UINT64_MAX = whole kernel
  StringId source_file = 0;
  uint32_t source_line = 0;
  uint64_t count = 0;
  friend bool operator==(const StallSample&, const StallSample&) = default;
};

// An explicit causal link between two records, identified by (kind, pid, correlation id). CUDA launches and
// their GPU work share correlation ids and need no Flow record; these carry links the ids cannot express
// (external correlation: a framework op -> the CUDA API calls it issued).
struct FlowRecord {
  uint64_t flow_id = 0;
  uint32_t pid = 0;
  uint16_t src_kind = 0;  // RecordKind
  uint16_t dst_kind = 0;  // RecordKind
  uint64_t src_key = 0;   // correlation id, or external id
  uint64_t dst_key = 0;
};

// ---- health
// --------------------------------------------------------------------------------------------------

enum class Severity : uint8_t { kInfo = 0, kWarning = 1, kError = 2, kDataLoss = 3 };

// Named statistics about what the trace is missing or how it was produced (Perfetto's "stats").
struct LossRecord {
  StringId name = 0;     // "cupti_dropped_records", "chunk_lost", ...
  uint8_t severity = 0;  // Severity
  uint32_t pid = 0;      // 0 = whole trace
  uint64_t count = 0;
  StringId detail = 0;  // human-readable explanation
};
// One loss, its strings already interned in the trace being written.
inline LossRecord MakeLoss(StringId name, Severity severity, uint64_t count, StringId detail,
                           uint32_t pid = 0) {
  LossRecord l;
  l.name = name;
  l.severity = static_cast<uint8_t>(severity);
  l.pid = pid;
  l.count = count;
  l.detail = detail;
  return l;
}

// Every record type in chunk-flush order (entities before the events that use them), with its TraceSink
// method and its TraceData vector. The codec's type list (schema.h ForEachRecordType), the sink interface and
// the sinks that take every type (the reader's dispatch and capture sink, TraceData) all expand this one
// list: a new record type is a line here, its struct above and its fields' codec in schema.h.
#define GT_FOR_EACH_RECORD_TYPE(X)                                \
  X(ProcessRecord, OnProcesses, processes)                        \
  X(ThreadRecord, OnThreads, threads)                             \
  X(DeviceRecord, OnDevices, devices)                             \
  X(ContextRecord, OnContexts, contexts)                          \
  X(StreamRecord, OnStreams, streams)                             \
  X(CounterDescriptor, OnCounterDescriptors, counter_descriptors) \
  X(KernelRecord, OnKernels, kernels)                             \
  X(MemcpyRecord, OnMemcpys, memcpys)                             \
  X(MemsetRecord, OnMemsets, memsets)                             \
  X(ApiCallRecord, OnApiCalls, api_calls)                         \
  X(NvtxRecord, OnNvtx, nvtx)                                     \
  X(SyncRecord, OnSyncs, syncs)                                   \
  X(MemoryRecord, OnMemory, memory)                               \
  X(OverheadRecord, OnOverheads, overheads)                       \
  X(CounterSample, OnCounterSamples, counter_samples)             \
  X(KernelMetricRecord, OnKernelMetrics, kernel_metrics)          \
  X(StallSample, OnStallSamples, stall_samples)                   \
  X(FlowRecord, OnFlows, flows)                                   \
  X(LossRecord, OnLoss, losses)                                   \
  X(NvtxArgRecord, OnNvtxArgs, nvtx_args)                         \
  X(NcclCollRecord, OnNcclColls, nccl_colls)                      \
  X(NcclChannelRecord, OnNcclChannels, nccl_channels)                \
  X(CpuStackNodeRecord, OnCpuStackNodes, cpu_stack_nodes)           \
  X(CpuSampleRecord, OnCpuSamples, cpu_samples)

// Record structs are copied in bulk (the reader's capture sink, the collector's buffers) and sized into every
// sink's memory, so each stays trivially copyable and its size changes only on purpose. The sizes hold for
// the wasm build too: records have only fixed-width fields.
#define GT_RECORD_IS_TRIVIAL(R, Method, field) \
  static_assert(std::is_trivially_copyable_v<R>, #R " is copied as bytes");
GT_FOR_EACH_RECORD_TYPE(GT_RECORD_IS_TRIVIAL)
#undef GT_RECORD_IS_TRIVIAL
static_assert(sizeof(ProcessRecord) == 64);  // 1.1: host, boot id, job, ranks
static_assert(sizeof(ThreadRecord) == 12);
static_assert(sizeof(DeviceRecord) == 200);
static_assert(sizeof(ContextRecord) == 12);
static_assert(sizeof(StreamRecord) == 28);
static_assert(sizeof(CounterDescriptor) == 20);
static_assert(sizeof(KernelRecord) == 112);
static_assert(sizeof(MemcpyRecord) == 64);
static_assert(sizeof(MemsetRecord) == 64);
static_assert(sizeof(ApiCallRecord) == 48);
static_assert(sizeof(NvtxRecord) == 56);
static_assert(sizeof(SyncRecord) == 48);
static_assert(sizeof(MemoryRecord) == 56);
static_assert(sizeof(OverheadRecord) == 32);
static_assert(sizeof(CounterSample) == 24);
static_assert(sizeof(KernelMetricRecord) == 40);
static_assert(sizeof(StallSample) == 48);
static_assert(sizeof(FlowRecord) == 32);
static_assert(sizeof(LossRecord) == 32);
static_assert(sizeof(NvtxArgRecord) == 40);
static_assert(sizeof(NcclCollRecord) == 80);
static_assert(sizeof(NcclChannelRecord) == 48);
static_assert(sizeof(CpuStackNodeRecord) == 20);
static_assert(sizeof(CpuSampleRecord) == 24);

const char* RecordKindName(RecordKind kind);
const char* CopyKindName(uint8_t kind);
const char* MemoryKindName(uint8_t kind);
const char* PrecisionName(Precision p);
const char* SeverityName(uint8_t severity);
const char* SyncKindName(uint8_t kind);
const char* NvtxArgKindName(uint8_t kind);
const char* NcclOpKindName(uint8_t kind);

}  // namespace gt

// CUPTI activity records -> gt::* records. Pure: no CUPTI calls, no globals, so tests feed synthetic structs.
//
// [SECTION] field mappers (one CUPTI struct -> one gt record)
// [SECTION] ActivityDecoder (stateful: string caches, NVTX pairing, time window, first-seen threads/streams)
//
// Hot path: a buffer of CUPTI records is decoded record by record into the TraceWriter. No per-record heap
// allocation: names are interned once per distinct pointer (kernel names) or callback id (API names).
#pragma once

#include <cupti_activity.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "decode/nvtx_assembler.h"
#include "decode/nvtx_payload.h"
#include "gt/model.h"
#include "gt/writer.h"

namespace gt::decode {

// ---- [SECTION] field mappers
// -------------------------------------------------------------------------------------

struct DecodeContext {
  uint32_t pid = 0;
  int64_t clock_offset_ns = 0;  // added to every CUPTI timestamp to land on the trace clock
  Timestamp T(uint64_t cupti_ns) const { return static_cast<Timestamp>(cupti_ns) + clock_offset_ns; }
};

uint8_t MapCopyKind(uint32_t cupti_copy_kind);      // CUpti_ActivityMemcpyKind -> gt::CopyKind
uint8_t MapMemoryKind(uint32_t cupti_memory_kind);  // CUpti_ActivityMemoryKind -> gt::MemoryKind
uint8_t MapSyncKind(uint32_t cupti_sync_type);      // CUpti_ActivitySynchronizationType -> gt::SyncKind
uint8_t MapLaunchType(const CUpti_ActivityKernel10& k);
const char* OverheadKindName(uint32_t cupti_overhead_kind);

// String fields (name) are left 0: the caller interns them.
KernelRecord DecodeKernel(const CUpti_ActivityKernel10& a, const DecodeContext& c);
MemcpyRecord DecodeMemcpy(const CUpti_ActivityMemcpy6& a, const DecodeContext& c);
MemsetRecord DecodeMemset(const CUpti_ActivityMemset4& a, const DecodeContext& c);
ApiCallRecord DecodeApi(const CUpti_ActivityAPI& a, const DecodeContext& c);
SyncRecord DecodeSync(const CUpti_ActivitySynchronization2& a, const DecodeContext& c);
MemoryRecord DecodeMemory(const CUpti_ActivityMemory4& a, const DecodeContext& c);
OverheadRecord DecodeOverhead(const CUpti_ActivityOverhead3& a, const DecodeContext& c);
ContextRecord DecodeContextRecord(const CUpti_ActivityContext3& a, const DecodeContext& c);
// Device properties, peaks derived (device_peaks.h). `chip` is filled by the caller when known.
DeviceRecord DecodeDevice(const CUpti_ActivityDevice5& a, const DecodeContext& c);

// CUPTI callback names carry the API version ("cudaMalloc_v3020"); the trace shows the name users call.
std::string ApiDisplayName(std::string_view cupti_name);
// The runtime calls recorded by default when API calls come from the callback API (GTRACE_API=callback):
// launches, copies, memsets, synchronization, allocations, events, streams, graphs, device selection and the
// profiler switches. Everything else (queries such as cudaGetDevice, cudaFuncGetAttributes, attribute
// setters) is left to --trace=runtime-all. `display_name` is ApiDisplayName's output ("cudaLaunchKernel").
bool IsKeyRuntimeApi(std::string_view display_name);
// The SyncKind of an API call that waits (cudaStreamSynchronize, cuEventSynchronize, ...; domain 0 = runtime,
// 1 = driver), or 0 (kUnknown) for any other call. With API calls from callbacks, sync records come from
// these calls instead of CUPTI's SYNCHRONIZATION kind, which slowed every runtime call (see
// docs/benchmarks.md).
uint8_t SyncKindOfApi(uint8_t domain, uint32_t cbid);
// Demangles an Itanium C++ name; returns the input when it is not mangled or demangling fails.
std::string Demangle(const char* name);

// ---- [SECTION] ActivityDecoder
// -----------------------------------------------------------------------------------

// Counts by kind, for the summary line and the tests.
struct DecodeStats {
  uint64_t kernels = 0, memcpys = 0, memsets = 0, api_calls = 0, nvtx = 0, syncs = 0, memory = 0,
           overheads = 0;
  uint64_t devices = 0, contexts = 0, names = 0;
  uint64_t outside_window = 0;  // dropped by --delay/--duration
  uint64_t unknown_kinds = 0;   // record kinds this decoder does not handle (skipped)
  uint64_t nvtx_filtered = 0;   // NVTX ranges of domains not asked for (DecoderOptions::nvtx_domains_only)
  uint64_t host_ranges = 0;     // ranges added by AddHostRange (OS runtime waits)
  uint64_t total() const {
    return kernels + memcpys + memsets + api_calls + nvtx + syncs + memory + overheads;
  }
};

struct DecoderOptions {
  DecodeContext context;
  int64_t window_start_ns = 0;  // trace clock; 0 = open
  int64_t window_end_ns = 0;    // 0 = open
  // cbid -> "cudaLaunchKernel". domain 0 = runtime, 1 = driver. Null returns are shown as "cbid N".
  const char* (*api_name)(uint8_t domain, uint32_t cbid) = nullptr;
  // Called the first time a thread id shows up (to read /proc/<pid>/task/<tid>/comm). May be null.
  void (*on_new_thread)(void* ctx, uint32_t tid) = nullptr;
  void* on_new_thread_ctx = nullptr;
  // Non-empty: only NVTX ranges of these domains are written (--trace=cublas without nvtx keeps the cuBLAS
  // domain's ranges, not the app's own); the others count in DecodeStats::nvtx_filtered.
  std::vector<std::string> nvtx_domains_only;
};

class ActivityDecoder {
 public:
  ActivityDecoder(TraceWriter* writer, DecoderOptions options);

  // One CUPTI record of any kind. Unknown kinds are counted and skipped.
  void Decode(const CUpti_Activity* record);
  // An API call recorded through the callback API: timestamps already on the trace clock, name and pid filled
  // here (pid 0 = this process). Same window and thread handling as an activity API record.
  void AddApiCall(ApiCallRecord r);
  // A sync record made from such an API call (SyncKindOfApi); same window handling as CUPTI's.
  void AddSync(SyncRecord r);
  // A range recorded outside CUPTI on the trace clock (an OS runtime wait from libgtrace_osrt.so), written as
  // an NVTX range of its domain on its thread: same window and thread handling as an API call; pid 0 = this
  // process.
  void AddHostRange(NvtxRecord r);
  // Call after each CUPTI buffer: emits NVTX marks whose payload records were in the same buffer.
  void EndBuffer();
  // Emits still-open NVTX ranges as unclosed (end = last timestamp seen). Call once, before
  // TraceWriter::Finish.
  void Finish();

  const DecodeStats& stats() const { return stats_; }
  Timestamp last_timestamp() const { return last_ts_; }
  void set_window(int64_t start_ns, int64_t end_ns) {
    options_.window_start_ns = start_ns;
    options_.window_end_ns = end_ns;
  }
  void set_clock_offset(int64_t offset_ns) { options_.context.clock_offset_ns = offset_ns; }
  // Interns a kernel name (demangled), cached by pointer and verified by content.
  StringId KernelName(const char* mangled);
  StringId ApiName(uint8_t domain, uint32_t cbid);
  void NoteThread(uint32_t tid);
  void MarkThreadKnown(uint32_t tid) { threads_.push_back(tid); }
  // Decoded NVTX extended payloads (NCCL's), added from NVTX's callbacks on any thread with CUPTI's raw
  // timestamp of the push; each NVTX range written afterwards takes its own and is followed by its
  // NvtxArgRecords.
  PayloadJoiner& nvtx_payloads() { return nvtx_payloads_; }
  uint64_t nvtx_args_written() const { return nvtx_args_written_; }

 private:
  bool InWindow(Timestamp start, Timestamp end) {
    if (end > last_ts_) last_ts_ = end;
    if (options_.window_start_ns && end < options_.window_start_ns) return false;
    if (options_.window_end_ns && start > options_.window_end_ns) return false;
    return true;
  }
  void NoteStream(uint32_t device, uint32_t context, uint32_t stream);
  void EmitNvtx();  // writes the assembler's completed records that overlap the window
  void WriteNvtx(const NvtxRecord& r);

  TraceWriter* writer_;
  DecoderOptions options_;
  DecodeStats stats_;
  Timestamp last_ts_ = 0;
  NvtxAssembler nvtx_;
  PayloadJoiner nvtx_payloads_;
  std::vector<PayloadField> payload_fields_;
  std::vector<NvtxArgRecord> payload_args_;
  uint64_t nvtx_args_written_ = 0;
  std::vector<StringId> nvtx_domain_ids_;  // nvtx_domains_only, interned

  struct NameEntry {
    std::string mangled;
    StringId id;
  };
  std::unordered_map<const void*, NameEntry> kernel_names_;
  std::vector<StringId> api_names_[2];
  std::vector<uint32_t> threads_;  // few: linear scan beats hashing
  std::vector<uint64_t> streams_;  // (context << 32 | stream)
  std::unordered_map<uint32_t, uint32_t> null_stream_of_context_;
};

}  // namespace gt::decode

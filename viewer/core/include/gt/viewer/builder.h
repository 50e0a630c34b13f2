// Builds a TraceModel from records as they stream in: a TraceSink for .gtrace (TraceReader::Step feeds it
// chunk by chunk, no TraceData in between) and the target of the JSON importers (AddHostSlice,
// AddCounterSample, ...).
//
// Build order is deterministic: the same input sequence yields the same model, so ids and keys are stable.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "gt/reader.h"
#include "gt/viewer/model.h"

namespace gt::viewer {

// A host slice that has no .gtrace record kind (imported Chrome/Kineto events).
struct HostSliceRecord {
  Timestamp start = 0, end = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  StringId name = 0;
  StringId category = 0;                // "cpu_op", "python_function", "user_annotation", ...
  StringId args = 0;                    // "key: value\n..." (0 = none)
  EventKind kind = EventKind::kHostOp;  // kHostOp or kInstant
};

// A GPU-side annotation range on a stream (Kineto gpu_user_annotation).
struct GpuAnnotationRecord {
  Timestamp start = 0, end = 0;
  uint32_t pid = 0;
  uint32_t device_id = 0;
  uint32_t stream_id = 0;
  StringId name = 0;
  StringId args = 0;
};

// An imported flow endpoint pair, resolved to the enclosing (deepest) event at each end when the model is
// built.
struct FlowEndpoints {
  uint32_t from_pid = 0, from_tid = 0;
  Timestamp from_ts = 0;
  uint32_t to_pid = 0, to_tid = 0;
  Timestamp to_ts = 0;
  bool to_gpu = false;  // to_tid is a GPU stream of device to_device
  uint32_t to_device = 0;
};

class ModelBuilder : public TraceSink {
 public:
  ModelBuilder();
  ~ModelBuilder() override;

  // ---- TraceSink (.gtrace) ----
  void OnMetadata(const TraceMetadata& m) override;
  void OnStrings(StringId first_id, std::span<const std::string_view> strings) override;
  void OnProcesses(std::span<const ProcessRecord> r) override;
  void OnThreads(std::span<const ThreadRecord> r) override;
  void OnDevices(std::span<const DeviceRecord> r) override;
  void OnContexts(std::span<const ContextRecord> r) override;
  void OnStreams(std::span<const StreamRecord> r) override;
  void OnKernels(std::span<const KernelRecord> r) override;
  void OnMemcpys(std::span<const MemcpyRecord> r) override;
  void OnMemsets(std::span<const MemsetRecord> r) override;
  void OnApiCalls(std::span<const ApiCallRecord> r) override;
  void OnNvtx(std::span<const NvtxRecord> r) override;
  void OnSyncs(std::span<const SyncRecord> r) override;
  void OnMemory(std::span<const MemoryRecord> r) override;
  void OnOverheads(std::span<const OverheadRecord> r) override;
  void OnCounterDescriptors(std::span<const CounterDescriptor> r) override;
  void OnCounterSamples(std::span<const CounterSample> r) override;
  void OnKernelMetrics(std::span<const KernelMetricRecord> r) override;
  void OnStallSamples(std::span<const StallSample> r) override;
  void OnFlows(std::span<const FlowRecord> r) override;
  void OnLoss(std::span<const LossRecord> r) override;
  void OnNvtxArgs(std::span<const NvtxArgRecord> r) override;
  void OnNcclColls(std::span<const NcclCollRecord> r) override;
  void OnNcclChannels(std::span<const NcclChannelRecord> r) override;
  void OnCpuStackNodes(std::span<const CpuStackNodeRecord> r) override;
  void OnCpuSamples(std::span<const CpuSampleRecord> r) override;

  // ---- importers ----
  // Interns text into the model's string table (idempotent). Don't mix with OnStrings in one build.
  StringId Intern(std::string_view text);
  static uint64_t HashText(std::string_view text);
  // An args text ("key: value\n..."), `hash` its HashText. Nearly every one is distinct (ids, correlations,
  // shapes), so they are appended rather than looked up in the index of names; a small cache by hash still
  // stores a text once when its repeats come close together. Ids of equal args texts may differ.
  StringId InternArgs(std::string_view text, uint64_t hash);
  void AddHostSlice(const HostSliceRecord& r);
  void AddGpuAnnotation(const GpuAnnotationRecord& r);
  // Kernel/memcpy/memset/API records with imported extra fields ("key: value\n..." string id).
  void AddKernel(const KernelRecord& r, StringId args);
  void AddMemcpy(const MemcpyRecord& r, StringId args);
  void AddMemset(const MemsetRecord& r, StringId args);
  void AddApiCall(const ApiCallRecord& r, StringId args);
  void AddFlow(const FlowEndpoints& f);
  void SetProcessName(uint32_t pid, std::string_view name);
  void SetThreadName(uint32_t pid, uint32_t tid, std::string_view name);
  // Process and thread ids from here up are an importer's own (a JSON trace's processes and threads named by
  // strings; rows such as a process's async events): labelled by name alone, without the made-up id.
  static constexpr uint32_t kImporterIdBase = 0x40000000u;
  void SetProcessSortIndex(uint32_t pid, int64_t index);
  void SetThreadSortIndex(uint32_t pid, uint32_t tid, int64_t index);
  void SetFormat(SourceFormat f);
  // A named problem/loss statistic ("json_events_skipped", count, why); shown in the loss panel.
  void AddLoss(std::string_view name, Severity severity, uint64_t count, std::string_view detail);
  void AddProblem(std::string problem);
  void SetReport(const LoadReport& report);

  uint64_t events_added() const;

  // Sorts, assigns depths, interns tables, computes summaries. The builder is spent afterwards.
  std::unique_ptr<TraceModel> Finish();

  class Impl;

 private:
  friend class TraceLoader;  // the parallel load merges chunks routed on its threads
  std::unique_ptr<Impl> impl_;
};

}  // namespace gt::viewer

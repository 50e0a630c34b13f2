// A TraceSink that keeps everything: for the CLI (info, export), the server's validation, and tests.
// The viewer builds its own compact model instead (viewer/core).
#pragma once

#include <string>
#include <vector>

#include "gt/reader.h"
#include "gt/writer.h"

namespace gt {

struct TraceData : TraceSink {
  TraceMetadata metadata;
  std::vector<std::string> strings{""};  // index = StringId
  std::vector<ProcessRecord> processes;  // as recorded: a pid may have several (see CollapseProcesses)
  std::vector<ThreadRecord> threads;
  std::vector<DeviceRecord> devices;
  std::vector<ContextRecord> contexts;
  std::vector<StreamRecord> streams;
  std::vector<KernelRecord> kernels;
  std::vector<MemcpyRecord> memcpys;
  std::vector<MemsetRecord> memsets;
  std::vector<ApiCallRecord> api_calls;
  std::vector<NvtxRecord> nvtx;
  std::vector<SyncRecord> syncs;
  std::vector<MemoryRecord> memory;
  std::vector<OverheadRecord> overheads;
  std::vector<CounterDescriptor> counter_descriptors;
  std::vector<CounterSample> counter_samples;
  std::vector<KernelMetricRecord> kernel_metrics;
  std::vector<StallSample> stall_samples;
  std::vector<FlowRecord> flows;
  std::vector<LossRecord> losses;
  std::vector<NvtxArgRecord> nvtx_args;          // 1.2: decoded NVTX payload fields
  std::vector<NcclCollRecord> nccl_colls;        // 1.3: NCCL's profiler plugin
  std::vector<NcclChannelRecord> nccl_channels;  // 1.3
  std::vector<CpuStackNodeRecord> cpu_stack_nodes;  // 1.4: sampled CPU stacks
  std::vector<CpuSampleRecord> cpu_samples;         // 1.4

  // "" for unknown ids (lost strings chunk) rather than out-of-bounds.
  const std::string& Str(StringId id) const;
  uint64_t EventCount() const;  // timeline events: kernels+memcpy+memset+api+nvtx+sync+memory+overhead

  void OnMetadata(const TraceMetadata& m) override;
  void OnStrings(StringId first_id, std::span<const std::string_view> s) override;
#define GT_KEEP(R, Method, field)                  \
  void Method(std::span<const R> r) override {     \
    field.insert(field.end(), r.begin(), r.end()); \
  }
  GT_FOR_EACH_RECORD_TYPE(GT_KEEP)
#undef GT_KEEP
};

// One record per pid, in order of first appearance: a process that describes itself writes its record when it
// starts and again when it ends; the later one says how it ended, and fills what the earlier one left empty.
void CollapseProcesses(std::vector<ProcessRecord>& processes);
void UpdateProcess(ProcessRecord& earlier, const ProcessRecord& later);

// Writes every record of `data` through `writer` (re-interning strings). For tools that transform traces.
Status WriteTraceData(const TraceData& data, TraceWriter& writer);

}  // namespace gt

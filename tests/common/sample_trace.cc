#include "sample_trace.h"

#include "gt/counter_vocab.h"

namespace gt::test {

Status WriteSampleTrace(TraceWriter& w) {
  TraceMetadata m;
  m.entries = {{"command_line", "./matmul --n 4096"}, {"host", "node7"}, {"tool_version", "gcollect 0.1.0"}};
  m.clock_syncs = {{1'763'805'600'000'000'000, 1'000'000}};  // 2025-11-22 10:00:00 UTC
  w.SetMetadata(m);
  const uint32_t pid = 4242;
  w.Add(ProcessRecord{pid, 1, w.Intern("matmul"), w.Intern("./matmul --n 4096"), 1'000'000, 9'000'000, 0,
                      uint8_t(ExitKind::kExited)});
  w.Add(ThreadRecord{pid, 4242, w.Intern("matmul")});
  w.Add(ThreadRecord{pid, 4250, w.Intern("cuda-EvtHandlr")});
  DeviceRecord d;
  d.device_id = 0, d.pid = pid, d.name = w.Intern("NVIDIA H200"), d.chip = w.Intern("GH100");
  d.uuid = w.Intern("GPU-1234"), d.cc_major = 9, d.cc_minor = 0, d.sm_count = 132, d.sm_clock_khz = 1'980'000;
  d.mem_clock_khz = 2'619'000, d.mem_bus_width_bits = 6144, d.memory_bytes = 150'323'855'360ull;
  d.l2_bytes = 52'428'800, d.shared_mem_per_sm = 233'472, d.shared_mem_per_block_max = 232'448;
  d.regs_per_sm = 65536, d.max_warps_per_sm = 64, d.max_blocks_per_sm = 32, d.max_threads_per_block = 1024;
  d.dram_bandwidth = 4.8e12, d.l2_bandwidth = 1.2e13, d.l1_bandwidth = 3.3e13;
  d.peak_flops[size_t(Precision::kFp64)] = 6.7e13;
  d.peak_flops[size_t(Precision::kFp32)] = 6.7e13;
  d.peak_flops[size_t(Precision::kBf16Tensor)] = 9.89e14;
  d.peak_source = uint8_t(PeakSource::kTable);
  w.Add(d);
  w.Add(ContextRecord{pid, 0, 1});
  w.Add(StreamRecord{pid, 0, 1, 7, 0, 0, w.Intern("compute")});
  StringId launch = w.Intern("cudaLaunchKernel");
  w.Add(ApiCallRecord{2'000'000, 2'000'500, pid, 4242, 10, 20, w.Intern("cudaMalloc"), 0, 0});
  w.Add(ApiCallRecord{2'001'000, 2'050'000, pid, 4242, 11, 31, w.Intern("cudaMemcpy"), 0, 0});
  w.Add(ApiCallRecord{2'060'000, 2'062'000, pid, 4242, 12, 211, launch, 0, 0});
  w.Add(ApiCallRecord{2'063'000, 2'064'000, pid, 4242, 13, 211, launch, 0, 0});
  w.Add(ApiCallRecord{2'065'000, 2'066'000, pid, 4242, 14, 51, w.Intern("cudaMemsetAsync"), 0, 0});
  w.Add(ApiCallRecord{2'067'000, 2'400'000, pid, 4242, 15, 131, w.Intern("cudaStreamSynchronize"), 0, 0});
  KernelRecord k;
  k.start = 2'070'000, k.end = 2'200'000, k.pid = pid, k.device_id = 0, k.context_id = 1, k.stream_id = 7;
  k.correlation_id = 12, k.name = w.Intern("void gemm<float, 128>(float const*, float const*, float*, int)");
  k.grid = {32, 32, 1}, k.block = {256, 1, 1}, k.registers_per_thread = 128, k.static_shared_bytes = 49152;
  w.Add(k);
  k.start = 2'210'000, k.end = 2'390'000, k.correlation_id = 13, k.name = w.Intern("relu_kernel");
  k.grid = {4096, 1, 1}, k.registers_per_thread = 16, k.static_shared_bytes = 0;
  w.Add(k);
  w.Add(MemcpyRecord{2'010'000, 2'045'000, pid, 0, 1, 7, 11, 67'108'864, uint8_t(CopyKind::kHtoD),
                     uint8_t(MemoryKind::kPageable), uint8_t(MemoryKind::kDevice), 0, kNone, 0});
  w.Add(
      MemsetRecord{2'391'000, 2'395'000, pid, 0, 1, 7, 14, 1'048'576, 0, uint8_t(MemoryKind::kDevice), 1, 0});
  w.Add(NvtxRecord{2'055'000, 2'398'000, pid, 4242, 0, w.Intern("forward"), 0, 0xff00ff00, 0, 0,
                   kNvtxHasColor});
  w.Add(NvtxRecord{2'056'000, 2'056'000, pid, 4242, w.Intern("app"), w.Intern("checkpoint \"A\""), 0, 0, 0, 0,
                   kNvtxMark});
  w.Add(SyncRecord{2'067'000, 2'400'000, pid, 4242, 0, 1, 7, 15, kNone, uint8_t(SyncKind::kStreamSync)});
  w.Add(MemoryRecord{2'000'200, pid, 0, 1, kNone, 10, 0x7f0000000000ull, 67'108'864,
                     uint8_t(MemoryOp::kAlloc), uint8_t(MemoryKind::kDevice), 0});
  w.Add(OverheadRecord{2'500'000, 2'520'000, pid, 4250, w.Intern("CUPTI buffer flush")});
  w.Add(CounterDescriptor{1, 0, 0, w.Intern("GPU utilization"), w.Intern("%")});
  w.Add(CounterSample{1, 2'000'000, 0});
  w.Add(CounterSample{1, 2'100'000, 97.5});
  w.Add(CounterSample{1, 2'400'000, 3});
  w.Add(KernelMetricRecord{pid, 12, k.name, 0, w.Intern(gt::metric::kDramBytesRead), 1.5e8, 0});
  w.Add(StallSample{pid, 12, k.name, 0, w.Intern("long_scoreboard"), UINT64_MAX, 0, 0, 1234});
  w.Add(FlowRecord{1, pid, uint16_t(RecordKind::kNvtx), uint16_t(RecordKind::kApiCall), 77, 12});
  w.Add(LossRecord{w.Intern("cupti_dropped_records"), uint8_t(Severity::kWarning), pid, 3,
                   w.Intern("CUPTI dropped 3 activity records (buffer full)")});
  return w.Flush();
}

std::string SampleTraceBytes() {
  std::string out;
  auto w = TraceWriter::Create(MakeStringSink(&out));
  if (!w.ok()) return out;
  (void)WriteSampleTrace(**w);
  (void)(*w)->Finish();
  return out;
}

}  // namespace gt::test

// Helpers shared by the viewer tests: tiny traces built in code.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gt/viewer/builder.h"
#include "gt/viewer/model.h"

namespace gt::test {

// Feeds a string table (index = id) and returns a builder ready for records.
inline void FeedStrings(gt::viewer::ModelBuilder& b, const std::vector<std::string>& s) {
  std::vector<std::string_view> v(s.begin(), s.end());
  b.OnStrings(0, v);
}

// Process 1 named by string 1, with GPU 0 named by string 2: what most small traces built in code start with.
inline void FeedProcessAndGpu(gt::viewer::ModelBuilder& b) {
  gt::ProcessRecord p;
  p.pid = 1, p.name = 1;
  b.OnProcesses({&p, 1});
  gt::DeviceRecord d;
  d.device_id = 0, d.pid = 1, d.name = 2;
  b.OnDevices({&d, 1});
}

// Finds the first event named `name` (linear: tests only).
inline gt::viewer::EventId FindByName(const gt::viewer::TraceModel& m, const std::string& name) {
  for (gt::viewer::LaneId l = 0; l < m.lanes.size(); ++l)
    for (uint32_t i = 0; i < m.lanes[l].size(); ++i)
      if (m.Str(m.lanes[l].name[i]) == name) return {l, i};
  return {};
}

}  // namespace gt::test

namespace gt::test {

// The golden mini trace (times in ns):
//   pid 10 "train.py", thread 11 "main":
//     NVTX  epoch [50, 2000] > fwd [60, 500] > inner [70, 90]
//     API   cudaLaunchKernel [100, 200] corr 1 > cuLaunchKernel [120, 180] corr 1 (driver)
//           cudaMemcpyAsync [300, 400] corr 2;  cudaLaunchKernel [450, 520] corr 3 (returns 700)
//   GPU 0 "NVIDIA H200":
//     stream 7: gemm [250, 1250] corr 1 (grid 4x1x1, block 128, 32 regs, 1 KiB smem), memcpy HtoD 1 MiB
//               [1300, 1500] corr 2
//     stream 8: relu [1400, 1600] corr 3
//   counter "SM clock" (MHz) on GPU 0: samples at 0, 1000, 2000
inline std::unique_ptr<gt::viewer::TraceModel> SmallTrace() {
  using namespace gt;
  viewer::ModelBuilder b;
  FeedStrings(b, {"", "train.py", "main", "epoch", "fwd", "inner", "cudaLaunchKernel", "cuLaunchKernel",
                  "cudaMemcpyAsync", "gemm", "relu", "NVIDIA H200", "SM clock", "MHz"});
  ProcessRecord p;
  p.pid = 10, p.name = 1;
  b.OnProcesses({&p, 1});
  ThreadRecord t;
  t.pid = 10, t.tid = 11, t.name = 2;
  b.OnThreads({&t, 1});
  DeviceRecord d;
  d.device_id = 0, d.pid = 10, d.name = 11;
  b.OnDevices({&d, 1});
  std::vector<NvtxRecord> nv(3);
  nv[0].start = 50, nv[0].end = 2000, nv[0].message = 3;
  nv[1].start = 60, nv[1].end = 500, nv[1].message = 4, nv[1].payload_kind = uint8_t(NvtxPayloadKind::kI64);
  nv[1].payload = uint64_t(-5);
  nv[2].start = 70, nv[2].end = 90, nv[2].message = 5, nv[2].flags = kNvtxHasColor, nv[2].color = 0xFF00FF00;
  for (auto& n : nv) n.pid = 10, n.tid = 11;
  b.OnNvtx(nv);
  std::vector<ApiCallRecord> api(4);
  api[0] = {100, 200, 10, 11, 1, 211, 6, 0, uint8_t(ApiDomain::kRuntime)};
  api[1] = {120, 180, 10, 11, 1, 7, 7, 0, uint8_t(ApiDomain::kDriver)};
  api[2] = {300, 400, 10, 11, 2, 41, 8, 0, uint8_t(ApiDomain::kRuntime)};
  api[3] = {450, 520, 10, 11, 3, 211, 6, 700, uint8_t(ApiDomain::kRuntime)};
  b.OnApiCalls(api);
  std::vector<KernelRecord> k(2);
  k[0].start = 250, k[0].end = 1250, k[0].stream_id = 7, k[0].correlation_id = 1, k[0].name = 9;
  k[0].grid = {4, 1, 1}, k[0].block = {128, 1, 1}, k[0].registers_per_thread = 32,
  k[0].static_shared_bytes = 1024;
  k[1].start = 1400, k[1].end = 1600, k[1].stream_id = 8, k[1].correlation_id = 3, k[1].name = 10;
  for (auto& x : k) x.pid = 10, x.device_id = 0, x.context_id = 1;
  b.OnKernels(k);
  MemcpyRecord m;
  m.start = 1300, m.end = 1500, m.pid = 10, m.device_id = 0, m.context_id = 1, m.stream_id = 7;
  m.correlation_id = 2, m.bytes = 1 << 20, m.copy_kind = uint8_t(CopyKind::kHtoD);
  m.src_kind = uint8_t(MemoryKind::kPinned), m.dst_kind = uint8_t(MemoryKind::kDevice);
  b.OnMemcpys({&m, 1});
  CounterDescriptor cd;
  cd.counter_id = 5, cd.device_id = 0, cd.name = 12, cd.unit = 13;
  b.OnCounterDescriptors({&cd, 1});
  std::vector<CounterSample> cs{{5, 0, 1000.0}, {5, 1000, 1980.0}, {5, 2000, 1500.0}};
  b.OnCounterSamples(cs);
  return b.Finish();
}

}  // namespace gt::test

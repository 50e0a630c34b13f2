// Writes a deterministic, realistic-looking .gtrace (a short training loop: one Python process, CUDA API and
// NVTX on two threads, kernels / memcpy / memset on two streams of one GPU, GPU metrics, and a collector loss
// statistic) plus a sidecar <out>.expect.json with the counts the viewer must show. Used by the browser tests
// and by scripts/main.sh when no recorded trace is bundled.
//
//   gt_sample_trace OUT.gtrace [--steps N]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "gt/writer.h"

namespace {

struct Counts {
  uint64_t kernels = 0, memcpys = 0, memsets = 0, api = 0, nvtx = 0, samples = 0;
};

int Run(const std::string& out, int steps) {
  auto sink = gt::MakeFileSink(out, /*overwrite=*/true);
  if (!sink.ok()) {
    std::fprintf(stderr, "gt_sample_trace: %s\n", sink.status().ToString().c_str());
    return 1;
  }
  auto writer_or = gt::TraceWriter::Create(std::move(*sink));
  if (!writer_or.ok()) {
    std::fprintf(stderr, "gt_sample_trace: %s\n", writer_or.status().ToString().c_str());
    return 1;
  }
  gt::TraceWriter& w = **writer_or;
  Counts n;
  constexpr uint32_t kPid = 31337, kMain = 31337, kLoader = 31350;
  const int64_t t0 = 1'000'000'000;

  gt::TraceMetadata meta;
  meta.entries = {{"command_line", "python train.py --steps " + std::to_string(steps)},
                  {"host", "sample"},
                  {"tool_version", "gt_sample_trace"}};
  meta.clock_syncs.push_back({1'790'000'000'000'000'000LL, t0});
  w.SetMetadata(meta);

  gt::ProcessRecord proc;
  proc.pid = kPid;
  proc.name = w.Intern("python3");
  proc.command_line = w.Intern("python train.py");
  proc.start_ns = t0;
  w.Add(proc);
  w.Add(gt::ThreadRecord{kPid, kMain, w.Intern("MainThread")});
  w.Add(gt::ThreadRecord{kPid, kLoader, w.Intern("DataLoader")});

  gt::DeviceRecord dev;
  dev.device_id = 0;
  dev.pid = kPid;
  dev.name = w.Intern("NVIDIA H200");
  dev.chip = w.Intern("GH100");
  dev.cc_major = 9;
  dev.sm_count = 132;
  dev.memory_bytes = 141ull << 30;
  w.Add(dev);
  w.Add(gt::ContextRecord{kPid, 0, 1});
  for (uint32_t s : {7u, 13u}) {
    gt::StreamRecord st;
    st.pid = kPid, st.device_id = 0, st.context_id = 1, st.stream_id = s, st.is_default = s == 7;
    w.Add(st);
  }
  gt::CounterDescriptor util{1, 0, 0, w.Intern("GPU utilization"), w.Intern("%")};
  gt::CounterDescriptor power{2, 0, 0, w.Intern("GPU power"), w.Intern("W")};
  w.Add(util);
  w.Add(power);

  const char* kKernels[] = {
      "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn",
      "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>",
      "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float>",
      "flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64, 64, 4>>"};
  const uint32_t kGrid[] = {264, 4096, 1024, 132};
  const uint32_t kRegs[] = {232, 32, 48, 255};
  const int64_t kDur[] = {180'000, 12'000, 25'000, 240'000};
  uint32_t corr = 1;
  int64_t t = t0 + 2'000'000;
  for (int step = 0; step < steps; ++step) {
    const int64_t step_start = t;
    // Data loader thread: fetch a batch.
    gt::NvtxRecord fetch;
    fetch.start = t - 900'000, fetch.end = t - 100'000, fetch.pid = kPid, fetch.tid = kLoader;
    fetch.message = w.Intern("next_batch");
    w.Add(fetch), ++n.nvtx;
    // Host to device copy of the batch.
    gt::ApiCallRecord api;
    api.pid = kPid, api.tid = kMain, api.domain = 0;
    api.start = t, api.end = t + 8'000, api.correlation_id = corr, api.name = w.Intern("cudaMemcpyAsync");
    w.Add(api), ++n.api;
    gt::MemcpyRecord cp;
    cp.start = t + 10'000, cp.end = t + 10'000 + 85'000, cp.pid = kPid, cp.device_id = 0, cp.context_id = 1;
    cp.stream_id = 13, cp.correlation_id = corr++, cp.bytes = 32ull << 20;
    cp.copy_kind = static_cast<uint8_t>(gt::CopyKind::kHtoD), cp.src_kind = 2, cp.dst_kind = 3,
    cp.is_async = 1;
    w.Add(cp), ++n.memcpys;
    int64_t gpu = cp.end + 5'000;
    // Forward pass: NVTX range around kernel launches.
    gt::NvtxRecord fwd;
    fwd.start = t + 12'000, fwd.pid = kPid, fwd.tid = kMain, fwd.message = w.Intern("forward");
    fwd.flags = gt::kNvtxHasColor, fwd.color = 0xff4a90d9;
    int64_t h = t + 15'000;
    for (int layer = 0; layer < 6; ++layer) {
      for (int k = 0; k < 4; ++k) {
        api.start = h, api.end = h + 4'500, api.correlation_id = corr,
        api.name = w.Intern("cudaLaunchKernel");
        w.Add(api), ++n.api;
        gt::KernelRecord kr;
        kr.start = std::max(gpu, h + 6'000);
        kr.end = kr.start + kDur[k] + (layer * 1'000);
        kr.pid = kPid, kr.device_id = 0, kr.context_id = 1, kr.stream_id = 7, kr.correlation_id = corr++;
        kr.name = w.Intern(kKernels[k]);
        kr.grid = {kGrid[k], 1, 1}, kr.block = {256, 1, 1};
        kr.registers_per_thread = kRegs[k], kr.dynamic_shared_bytes = k == 3 ? 98'304 : 0;
        kr.static_shared_bytes = k == 0 ? 49'152 : 0;
        w.Add(kr), ++n.kernels;
        gpu = kr.end + 2'000;
        h += 7'000;
      }
    }
    fwd.end = h;
    w.Add(fwd), ++n.nvtx;
    // Zero the gradients, then a synchronize: the CPU waits for the GPU.
    api.start = h, api.end = h + 3'000, api.correlation_id = corr, api.name = w.Intern("cudaMemsetAsync");
    w.Add(api), ++n.api;
    gt::MemsetRecord ms;
    ms.start = gpu, ms.end = gpu + 20'000, ms.pid = kPid, ms.device_id = 0, ms.context_id = 1,
    ms.stream_id = 7;
    ms.correlation_id = corr++, ms.bytes = 64ull << 20, ms.memory_kind = 3, ms.is_async = 1;
    w.Add(ms), ++n.memsets;
    gpu = ms.end;
    api.start = h + 4'000, api.end = gpu + 3'000, api.correlation_id = corr++;
    api.name = w.Intern("cudaStreamSynchronize");
    w.Add(api), ++n.api;
    gt::NvtxRecord whole;
    whole.start = step_start - 1'000, whole.end = api.end + 1'000, whole.pid = kPid, whole.tid = kMain;
    whole.message = w.Intern("train_step " + std::to_string(step));
    w.Add(whole), ++n.nvtx;
    // Metrics every 100 us over the step.
    for (int64_t s = step_start; s < api.end; s += 100'000) {
      const bool busy = s > cp.end && s < gpu;
      w.Add(gt::CounterSample{1, s, busy ? 92.0 + (s / 100'000) % 7 : 8.0});
      w.Add(gt::CounterSample{2, s, busy ? 610.0 + (s / 100'000) % 40 : 180.0});
      n.samples += 2;
    }
    t = api.end + 1'500'000;  // the input pipeline stalls between steps: the GPU idles
  }
  gt::LossRecord loss;
  loss.name = w.Intern("cupti_dropped_records");
  loss.severity = static_cast<uint8_t>(gt::Severity::kDataLoss);
  loss.pid = kPid;
  loss.count = 3;
  loss.detail = w.Intern("CUPTI activity buffer full: 3 records dropped (sample)");
  w.Add(loss);
  gt::Status st = w.Finish();
  if (!st.ok()) {
    std::fprintf(stderr, "gt_sample_trace: %s\n", st.ToString().c_str());
    return 1;
  }
  std::string sidecar = out;
  if (sidecar.size() > 7 && sidecar.compare(sidecar.size() - 7, 7, ".gtrace") == 0)
    sidecar.resize(sidecar.size() - 7);
  sidecar += ".expect.json";
  std::ofstream js(sidecar);
  js << "{\"kernels\": " << n.kernels << ", \"memcpys\": " << n.memcpys << ", \"memsets\": " << n.memsets
     << ", \"api\": " << n.api << ", \"nvtx\": " << n.nvtx << ", \"counter_samples\": " << n.samples
     << ", \"streams\": [\"7\", \"13\"]}\n";
  std::printf("%s: %llu kernels, %llu memcpy, %llu memset, %llu API calls, %llu NVTX ranges\n", out.c_str(),
              (unsigned long long)n.kernels, (unsigned long long)n.memcpys, (unsigned long long)n.memsets,
              (unsigned long long)n.api, (unsigned long long)n.nvtx);
  return js.good() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help")) {
    std::fprintf(stderr, "usage: gt_sample_trace OUT.gtrace [--steps N]\n");
    return argc < 2 ? 64 : 0;
  }
  int steps = 12;
  for (int i = 2; i + 1 < argc; ++i)
    if (!std::strcmp(argv[i], "--steps")) steps = std::max(1, std::atoi(argv[i + 1]));
  return Run(argv[1], steps);
}

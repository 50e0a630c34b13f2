#include "synthetic_trace.h"

#include <cmath>
#include <random>
#include <string>

namespace gt::bench {

namespace {

struct KernelKind {
  StringId name;
  int64_t mean_ns;
  std::array<uint32_t, 3> grid, block;
  uint32_t regs, smem;
};

StringId Add(TraceData& t, std::string s) {
  t.strings.push_back(std::move(s));
  return StringId(t.strings.size() - 1);
}

}  // namespace

TraceData MakeSyntheticTrace(uint64_t events, uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng); };
  TraceData t;
  const uint32_t pid = 31337, main_tid = 31337, device = 0, context = 1;
  const uint32_t streams[] = {7, 13, 14, 15};

  t.metadata.entries = {{"command_line", "python train.py --model gpt2-medium --steps 100000"},
                        {"host", "bench-node"},
                        {"tool_version", "gcollect 0.1.0"}};
  t.metadata.clock_syncs = {{1'763'805'600'000'000'000, 0}};
  t.processes.push_back({pid, 1, Add(t, "python3"), Add(t, "python train.py --model gpt2-medium"), 0, 0, 0,
                         uint8_t(ExitKind::kRunning)});
  for (uint32_t i = 0; i < 4; ++i)
    t.threads.push_back({pid, main_tid + i, Add(t, "pt_thread_" + std::to_string(i))});
  DeviceRecord d;
  d.pid = pid, d.name = Add(t, "NVIDIA H200"), d.cc_major = 9, d.sm_count = 132;
  t.devices.push_back(d);
  t.contexts.push_back({pid, device, context});
  for (uint32_t s : streams) t.streams.push_back({pid, device, context, s, 0, uint8_t(s == 7), 0});

  StringId api_launch = Add(t, "cudaLaunchKernel");
  StringId api_extra[] = {Add(t, "cudaGetLastError"), Add(t, "cudaStreamGetCaptureInfo"),
                          Add(t, "cudaPeekAtLastError")};
  StringId api_memcpy = Add(t, "cudaMemcpyAsync"), api_memset = Add(t, "cudaMemsetAsync");
  StringId domain = Add(t, "PyTorch");
  std::vector<KernelKind> kinds;
  for (int i = 0; i < 60; ++i) {
    KernelKind k;
    k.name = Add(t, "void at::native::kernel_" + std::to_string(i) +
                        "<float, 4, at::native::ReduceOp<float>>(at::TensorIteratorBase&, int)");
    k.mean_ns = int64_t(std::exp(uniform(std::log(2000.0), std::log(400000.0))));
    k.grid = {uint32_t(1u << (rng() % 12)), 1, 1};
    k.block = {uint32_t(64u << (rng() % 4)), 1, 1};
    k.regs = 16 + uint32_t(rng() % 8) * 16;
    k.smem = uint32_t(rng() % 4) * 16384;
    kinds.push_back(k);
  }
  std::vector<StringId> layer_names;
  for (int i = 0; i < 24; ++i) layer_names.push_back(Add(t, "layer." + std::to_string(i)));

  int64_t host = 1'000'000;
  int64_t stream_free[4] = {0, 0, 0, 0};
  uint32_t corr = 1;
  uint64_t step = 0;
  auto api = [&](StringId name, uint32_t cbid, int64_t dur) {
    ApiCallRecord a{host, host + dur, pid, main_tid, corr++, cbid, name, 0, 0};
    t.api_calls.push_back(a);
    host = a.end + 200 + int64_t(rng() % 400);
    return a;
  };
  while (t.EventCount() < events) {
    StringId step_name = Add(t, "step " + std::to_string(step++));
    int64_t step_start = host;
    size_t step_index = t.nvtx.size();
    t.nvtx.push_back({host, 0, pid, main_tid, domain, step_name, 0, 0xff3366cc, 0, 0, kNvtxHasColor});
    for (size_t layer = 0; layer < layer_names.size() && t.EventCount() < events; ++layer) {
      int64_t layer_start = host;
      for (int k = 0; k < 12; ++k) {
        uint32_t si = (rng() % 10 == 0) ? 1 + uint32_t(rng() % 3) : 0;
        const KernelKind& kk = kinds[(layer * 7 + size_t(k) * 13 + (rng() % 3)) % kinds.size()];
        ApiCallRecord a = api(api_launch, 211, 2500 + int64_t(rng() % 2000));
        KernelRecord r;
        r.start = std::max(a.start + 4000 + int64_t(rng() % 1000), stream_free[si]);
        r.end = r.start + int64_t(double(kk.mean_ns) * uniform(0.95, 1.05));
        stream_free[si] = r.end + 1000;
        r.pid = pid, r.device_id = device, r.context_id = context, r.stream_id = streams[si];
        r.correlation_id = a.correlation_id, r.name = kk.name, r.grid = kk.grid, r.block = kk.block;
        r.registers_per_thread = kk.regs, r.static_shared_bytes = kk.smem;
        t.kernels.push_back(r);
        for (uint64_t extra = rng() % 3; extra > 0; --extra)
          api(api_extra[rng() % 3], 1, 300 + int64_t(rng() % 300));
        if (rng() % 20 == 0) {
          ApiCallRecord c = api(api_memcpy, 41, 3000 + int64_t(rng() % 2000));
          int64_t s = std::max(c.start + 3000, stream_free[si]);
          uint64_t bytes = uint64_t(4096) << (rng() % 14);
          MemcpyRecord m{s,
                         s + 1000 + int64_t(bytes / 20),
                         pid,
                         device,
                         context,
                         streams[si],
                         c.correlation_id,
                         bytes,
                         uint8_t(rng() % 2 ? CopyKind::kHtoD : CopyKind::kDtoH),
                         uint8_t(MemoryKind::kPinned),
                         uint8_t(MemoryKind::kDevice),
                         1,
                         kNone,
                         0};
          stream_free[si] = m.end + 500;
          t.memcpys.push_back(m);
        }
        if (rng() % 50 == 0) {
          ApiCallRecord c = api(api_memset, 51, 2000 + int64_t(rng() % 1000));
          int64_t s = std::max(c.start + 3000, stream_free[si]);
          t.memsets.push_back({s, s + 2000, pid, device, context, streams[si], c.correlation_id, 1u << 20, 0,
                               uint8_t(MemoryKind::kDevice), 1, 0});
          stream_free[si] = s + 2500;
        }
      }
      t.nvtx.push_back({layer_start, host, pid, main_tid, domain, layer_names[layer], 0, 0, 0, 0, 0});
    }
    // The step ends when the host synchronizes with the GPU.
    host = std::max(host, stream_free[0]) + 5000;
    t.nvtx[step_index].end = host;
    (void)step_start;
  }
  return t;
}

}  // namespace gt::bench

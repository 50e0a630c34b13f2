// Deterministic synthetic CUDA traces shaped like a training loop, streamed into any TraceSink in batches (so
// 100 M events never exist as one array): per iteration a cudaLaunchKernel on a host thread and its kernel on
// a stream, every 16th iteration a cudaMemcpyAsync + memcpy, an NVTX range per 64 iterations, GPU counters.
// Shared by tests/viewer and bench/viewer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gt/model.h"
#include "gt/reader.h"

namespace gt::synth {

struct SynthOptions {
  uint64_t events = 1'000'000;  // timeline events (API + kernel + memcpy + NVTX), approximately
  uint32_t threads = 2;
  uint32_t devices = 2;
  uint32_t streams_per_device = 4;
  uint32_t kernel_names = 40;
  uint32_t batch = 65536;
  uint64_t seed = 42;
  bool counters = true;
};

class Rng {
 public:
  explicit Rng(uint64_t s) : s_(s * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t Next() {
    s_ ^= s_ << 13, s_ ^= s_ >> 7, s_ ^= s_ << 17;
    return s_;
  }
  uint32_t Below(uint32_t n) { return static_cast<uint32_t>(Next() % n); }

 private:
  uint64_t s_;
};

struct SynthCounts {
  uint64_t api = 0, kernels = 0, memcpys = 0, nvtx = 0, samples = 0;
  uint64_t events() const { return api + kernels + memcpys + nvtx; }
};

// Streams the trace into `sink`. String ids: 1.. as delivered by OnStrings.
inline SynthCounts GenerateSynthTrace(TraceSink& sink, const SynthOptions& o) {
  SynthCounts n;
  std::vector<std::string> strings{""};
  auto add = [&strings](std::string s) {
    strings.push_back(std::move(s));
    return static_cast<StringId>(strings.size() - 1);
  };
  const StringId launch = add("cudaLaunchKernel"), memcpy_api = add("cudaMemcpyAsync");
  const StringId proc_name = add("python3"), gpu_name = add("NVIDIA H200");
  const StringId util = add("GPU utilization"), pct = add("%");
  std::vector<StringId> kernels, ranges;
  for (uint32_t k = 0; k < o.kernel_names; ++k)
    kernels.push_back(add("void gemm_kernel_" + std::to_string(k) + "<float, 128, 64>(Params)"));
  for (uint32_t k = 0; k < 8; ++k) ranges.push_back(add("step " + std::to_string(k)));
  {
    std::vector<std::string_view> views(strings.begin(), strings.end());
    sink.OnStrings(0, views);
  }
  const uint32_t pid = 4242;
  ProcessRecord p;
  p.pid = pid;
  p.name = proc_name;
  sink.OnProcesses({&p, 1});
  std::vector<DeviceRecord> devs(o.devices);
  for (uint32_t d = 0; d < o.devices; ++d) devs[d].device_id = d, devs[d].pid = pid, devs[d].name = gpu_name;
  sink.OnDevices(devs);
  if (o.counters) {
    std::vector<CounterDescriptor> cds(o.devices);
    for (uint32_t d = 0; d < o.devices; ++d)
      cds[d].counter_id = d + 1, cds[d].device_id = d, cds[d].name = util, cds[d].unit = pct;
    sink.OnCounterDescriptors(cds);
  }

  Rng rng(o.seed);
  std::vector<ApiCallRecord> api;
  std::vector<KernelRecord> ker;
  std::vector<MemcpyRecord> mcp;
  std::vector<NvtxRecord> nvtx;
  std::vector<CounterSample> smp;
  auto flush = [&](bool all) {
    if (all || api.size() >= o.batch) sink.OnApiCalls(api), api.clear();
    if (all || ker.size() >= o.batch) sink.OnKernels(ker), ker.clear();
    if (all || mcp.size() >= o.batch) sink.OnMemcpys(mcp), mcp.clear();
    if (all || nvtx.size() >= o.batch) sink.OnNvtx(nvtx), nvtx.clear();
    if (all || smp.size() >= o.batch) sink.OnCounterSamples(smp), smp.clear();
  };
  const uint32_t streams = o.devices * o.streams_per_device;
  std::vector<int64_t> host_t(o.threads, 1'000'000);
  std::vector<int64_t> stream_t(streams, 1'000'000);
  std::vector<int64_t> next_sample(o.devices, 1'000'000);
  uint32_t corr = 1;
  uint64_t iter = 0;
  while (n.events() < o.events) {
    const uint32_t t = static_cast<uint32_t>(iter % o.threads);
    const uint32_t s = rng.Below(streams);
    const uint32_t dev = s / o.streams_per_device;
    if (iter % 64 == 0) {  // an NVTX range around the next 64 launches of this thread (closed approximately)
      NvtxRecord r;
      r.start = host_t[t];
      r.end = host_t[t] + 60000;
      r.pid = pid, r.tid = 100 + t;
      r.message = ranges[(iter / 64) % ranges.size()];
      r.flags = kNvtxHasColor;
      r.color = 0xFF76B900;
      nvtx.push_back(r);
      ++n.nvtx;
    }
    const bool copy = iter % 16 == 15;
    ApiCallRecord a;
    a.start = host_t[t] + 200;
    a.end = a.start + 2500 + rng.Below(1000);
    a.pid = pid, a.tid = 100 + t;
    a.correlation_id = corr;
    a.name = copy ? memcpy_api : launch;
    api.push_back(a);
    ++n.api;
    host_t[t] = a.end;
    const int64_t gstart = std::max(stream_t[s] + 500 + rng.Below(4000), a.start + 5000);
    if (copy) {
      MemcpyRecord m;
      m.start = gstart;
      m.end = gstart + 8000 + rng.Below(20000);
      m.pid = pid, m.device_id = dev, m.context_id = 1, m.stream_id = 7 + s % o.streams_per_device;
      m.correlation_id = corr;
      m.bytes = 1 << (16 + rng.Below(8));
      m.copy_kind = uint8_t(CopyKind::kHtoD), m.src_kind = uint8_t(MemoryKind::kPinned);
      m.dst_kind = uint8_t(MemoryKind::kDevice), m.is_async = 1;
      mcp.push_back(m);
      ++n.memcpys;
      stream_t[s] = m.end;
    } else {
      KernelRecord k;
      const uint32_t kn = rng.Below(o.kernel_names);
      k.start = gstart;
      k.end = gstart + 2000 + (kn * 997) % 50000 + rng.Below(3000);
      k.pid = pid, k.device_id = dev, k.context_id = 1, k.stream_id = 7 + s % o.streams_per_device;
      k.correlation_id = corr;
      k.name = kernels[kn];
      k.grid = {128u + kn, 1, 1};
      k.block = {256, 1, 1};
      k.registers_per_thread = 64;
      k.static_shared_bytes = 16384;
      ker.push_back(k);
      ++n.kernels;
      stream_t[s] = k.end;
    }
    ++corr;
    ++iter;
    if (o.counters) {
      for (uint32_t d = 0; d < o.devices; ++d)
        while (next_sample[d] < host_t[t]) {
          smp.push_back({d + 1, next_sample[d], double(rng.Below(101))});
          next_sample[d] += 1'000'000;  // 1 kHz
          ++n.samples;
        }
    }
    flush(false);
  }
  flush(true);
  return n;
}

}  // namespace gt::synth

// --gpu-metrics: NVML (part of the driver) sampled by gcollect itself, one sampler for the whole machine.
// libnvidia-ml.so.1 is opened at run time with our own minimal declarations (nvml.h is not installed, and a
// link-time dependency would stop gcollect from starting on machines without a driver).
#include <dlfcn.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "launcher/launcher.h"
#include "launcher/nvml_map.h"

namespace gt::launcher {

using config::TraceClockNow;

namespace {

using nvmlReturn = int;  // NVML_SUCCESS = 0
struct nvmlDeviceOpaque;
using nvmlDevice = nvmlDeviceOpaque*;
struct nvmlUtilization {
  unsigned int gpu, memory;
};
struct nvmlMemory {
  unsigned long long total, free, used;
};
struct nvmlPciInfo {  // nvmlPciInfo_t (v3): only domain, bus and device are read
  char bus_id_legacy[16];
  unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};
constexpr int kNvmlClockSm = 1;
constexpr int kNvmlTemperatureGpu = 0;

struct NvmlApi {
  void* lib = nullptr;
  nvmlReturn (*Init)() = nullptr;
  nvmlReturn (*Shutdown)() = nullptr;
  nvmlReturn (*GetCount)(unsigned int*) = nullptr;
  nvmlReturn (*GetHandle)(unsigned int, nvmlDevice*) = nullptr;
  nvmlReturn (*GetUtilization)(nvmlDevice, nvmlUtilization*) = nullptr;
  nvmlReturn (*GetClock)(nvmlDevice, int, unsigned int*) = nullptr;
  nvmlReturn (*GetPower)(nvmlDevice, unsigned int*) = nullptr;
  nvmlReturn (*GetTemperature)(nvmlDevice, int, unsigned int*) = nullptr;
  nvmlReturn (*GetMemory)(nvmlDevice, nvmlMemory*) = nullptr;
  nvmlReturn (*GetUuid)(nvmlDevice, char*, unsigned int) = nullptr;
  nvmlReturn (*GetPciInfo)(nvmlDevice, nvmlPciInfo*) = nullptr;  // optional
  nvmlReturn (*GetName)(nvmlDevice, char*, unsigned int) = nullptr;
  const char* (*ErrorString)(nvmlReturn) = nullptr;

  Status Load() {
    lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return NotFound(std::string("libnvidia-ml.so.1 not found (no NVIDIA driver?): ") + dlerror());
    bool ok = Sym(Init, "nvmlInit_v2") && Sym(Shutdown, "nvmlShutdown") &&
              Sym(GetCount, "nvmlDeviceGetCount_v2") && Sym(GetHandle, "nvmlDeviceGetHandleByIndex_v2") &&
              Sym(GetUtilization, "nvmlDeviceGetUtilizationRates") &&
              Sym(GetClock, "nvmlDeviceGetClockInfo") && Sym(GetPower, "nvmlDeviceGetPowerUsage") &&
              Sym(GetTemperature, "nvmlDeviceGetTemperature") && Sym(GetMemory, "nvmlDeviceGetMemoryInfo") &&
              Sym(ErrorString, "nvmlErrorString") && Sym(GetUuid, "nvmlDeviceGetUUID") &&
              Sym(GetName, "nvmlDeviceGetName");
    if (!Sym(GetPciInfo, "nvmlDeviceGetPciInfo_v3")) GetPciInfo = nullptr;
    if (!ok) return Unsupported("libnvidia-ml.so.1 lacks a needed function (driver too old?)");
    return Status::Ok();
  }
  template <typename F>
  bool Sym(F& f, const char* name) {
    f = reinterpret_cast<F>(dlsym(lib, name));
    return f != nullptr;
  }
};

enum Metric { kGpuUtil, kMemUtil, kSmClock, kPower, kTemperature, kMemUsed, kMetricCount };
constexpr const char* kMetricNames[kMetricCount] = {"GPU utilization", "Memory utilization", "SM clock",
                                                    "Power",           "Temperature",        "Memory used"};
constexpr const char* kMetricUnits[kMetricCount] = {"%", "%", "MHz", "W", "C", "bytes"};

}  // namespace

class NvmlSampler::Impl {
 public:
  NvmlApi api;
  std::vector<nvmlDevice> devices;  // the GPUs CUDA sees in the app
  std::vector<int> cuda_ordinals;   // per entry of `devices`
  TraceWriter* writer = nullptr;
  std::mutex* mu = nullptr;
  uint32_t interval_ms = 100;
  std::thread thread;
  std::mutex stop_mu;
  std::condition_variable stop_cv;
  bool stop = false;
  std::atomic<uint64_t> samples{0};

  static uint32_t CounterId(size_t device, int metric) {
    return static_cast<uint32_t>(device * 16 + metric + 1);
  }

  void SampleOnce() {
    int64_t now = TraceClockNow();
    std::lock_guard<std::mutex> lock(*mu);
    for (size_t i = 0; i < devices.size(); ++i) {
      auto add = [&](int metric, double v) {
        CounterSample s;
        s.counter_id = CounterId(i, metric);
        s.timestamp = now;
        s.value = v;
        writer->Add(s);
        samples.fetch_add(1, std::memory_order_relaxed);
      };
      nvmlUtilization u{};
      if (api.GetUtilization(devices[i], &u) == 0) {
        add(kGpuUtil, u.gpu);
        add(kMemUtil, u.memory);
      }
      unsigned int v = 0;
      if (api.GetClock(devices[i], kNvmlClockSm, &v) == 0) add(kSmClock, v);
      if (api.GetPower(devices[i], &v) == 0) add(kPower, v / 1000.0);
      if (api.GetTemperature(devices[i], kNvmlTemperatureGpu, &v) == 0) add(kTemperature, v);
      nvmlMemory m{};
      if (api.GetMemory(devices[i], &m) == 0) add(kMemUsed, static_cast<double>(m.used));
    }
  }

  void Run() {
    std::unique_lock<std::mutex> lock(stop_mu);
    while (!stop) {
      lock.unlock();
      SampleOnce();
      lock.lock();
      stop_cv.wait_for(lock, std::chrono::milliseconds(interval_ms), [&] { return stop; });
    }
  }
};

NvmlSampler::NvmlSampler() : impl_(new Impl) {}
NvmlSampler::~NvmlSampler() {
  Stop();
  delete impl_;
}

Status NvmlSampler::Start(TraceWriter* writer, std::mutex* mu, uint32_t interval_ms) {
  Impl& s = *impl_;
  GT_RETURN_IF_ERROR(s.api.Load());
  nvmlReturn r = s.api.Init();
  if (r != 0) return Unsupported(std::string("nvmlInit failed: ") + s.api.ErrorString(r));
  unsigned int count = 0;
  if (s.api.GetCount(&count) != 0 || count == 0) return NotFound("NVML sees no GPU");
  // Only the GPUs the app can use, each under its CUDA device number (CUDA_VISIBLE_DEVICES, by UUID / PCI).
  std::vector<nvmlDevice> all;
  std::vector<NvmlGpu> ids;
  for (unsigned int i = 0; i < count; ++i) {
    nvmlDevice d = nullptr;
    if (s.api.GetHandle(i, &d) != 0) continue;
    NvmlGpu g;
    char text[96] = {0};
    if (s.api.GetUuid(d, text, sizeof text - 1) == 0) g.uuid = text;
    std::memset(text, 0, sizeof text);
    if (s.api.GetName(d, text, sizeof text - 1) == 0) g.name = text;
    nvmlPciInfo pci{};
    if (s.api.GetPciInfo && s.api.GetPciInfo(d, &pci) == 0)
      g.pci_key = (uint64_t(pci.domain) << 32) | (uint64_t(pci.bus) << 8) | pci.device;
    all.push_back(d);
    ids.push_back(g);
  }
  NvmlCudaMap map = MapNvmlToCuda(ids, std::getenv("CUDA_VISIBLE_DEVICES"), std::getenv("CUDA_DEVICE_ORDER"));
  if (!map.warning.empty())
    std::fprintf(stderr, "gcollect: warning: --gpu-metrics: %s\n", map.warning.c_str());
  s.cuda_ordinals.assign(ids.size(), -1);
  for (size_t i = 0; i < all.size(); ++i) {
    if (map.cuda_ordinal[i] < 0) continue;
    s.devices.push_back(all[i]);
    s.cuda_ordinals[s.devices.size() - 1] = map.cuda_ordinal[i];
  }
  s.cuda_ordinals.resize(s.devices.size());
  if (s.devices.empty())
    return NotFound(
        "no GPU visible to CUDA (CUDA_VISIBLE_DEVICES=" +
        std::string(std::getenv("CUDA_VISIBLE_DEVICES") ? std::getenv("CUDA_VISIBLE_DEVICES") : "") + ")");
  s.writer = writer;
  s.mu = mu;
  s.interval_ms = interval_ms;
  {
    std::lock_guard<std::mutex> lock(*mu);
    for (size_t i = 0; i < s.devices.size(); ++i) {
      for (int m = 0; m < kMetricCount; ++m) {
        CounterDescriptor c;
        c.counter_id = Impl::CounterId(i, m);
        c.pid = 0;
        c.device_id = static_cast<uint32_t>(s.cuda_ordinals[i]);  // the app's device number
        c.name = writer->Intern(kMetricNames[m]);
        c.unit = writer->Intern(kMetricUnits[m]);
        writer->Add(c);
      }
    }
  }
  s.thread = std::thread([&s] { s.Run(); });
  return Status::Ok();
}

void NvmlSampler::Stop() {
  Impl& s = *impl_;
  if (!s.thread.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(s.stop_mu);
    s.stop = true;
  }
  s.stop_cv.notify_all();
  s.thread.join();
  s.SampleOnce();  // one sample at the end, so the last interval is closed
  s.api.Shutdown();
}

uint64_t NvmlSampler::samples() const {
  return impl_->samples.load();
}

}  // namespace gt::launcher

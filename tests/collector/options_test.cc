#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "config/config.h"
#include "launcher/launcher.h"
#include "launcher/nvml_map.h"

using namespace gt;
using namespace gt::config;
using namespace gt::launcher;

static StatusOr<LaunchOptions> Parse(std::vector<std::string> args) {
  return ParseOptions(args);
}

TEST_CASE("options: defaults and the app after --") {
  auto o = Parse({"--", "./app", "-x", "--flag"});
  REQUIRE(o.ok());
  CHECK(o->app == std::vector<std::string>{"./app", "-x", "--flag"});
  CHECK(o->kinds == kTraceDefault);
  CHECK_FALSE(o->gpu_metrics);
  CHECK(o->capture == CaptureMode::kNone);
  // CPU sampling is on unless turned off (docs/collector.md, "Sampled CPU stacks", says why).
  CHECK(o->cpu_sample_hz == 1000);
  CHECK(Parse({"--sample=none", "--", "./app"})->cpu_sample_hz == 0);
  CHECK(Parse({"--sample=off", "--sample=cpu", "--", "./app"})->cpu_sample_hz == 1000);
  CHECK(Parse({"--sample=cpu", "--", "./app"})->cpu_sample_hz == 1000);
  CHECK(Parse({"--sample-hz=250", "--", "./app"})->cpu_sample_hz == 250);
  CHECK(Parse({"--sample-hz=250", "--sample=none", "--", "./app"})->cpu_sample_hz == 0);
  // The governor's budget: 1.5% unless given; 0 keeps the rate.
  CHECK(o->cpu_sample_max_overhead_pct == 1.5);
  CHECK(Parse({"--sample-overhead=0.5", "--", "./app"})->cpu_sample_max_overhead_pct == 0.5);
  CHECK(Parse({"--sample-overhead", "0", "--", "./app"})->cpu_sample_max_overhead_pct == 0);
  auto no_dashes = Parse({"-q", "python3", "train.py", "--lr", "1"});
  REQUIRE(no_dashes.ok());
  CHECK(no_dashes->quiet);
  CHECK(no_dashes->app.size() == 4);
}

TEST_CASE("options: every flag") {
  auto o = Parse({"-o", "out", "-f", "--trace=cuda,driver", "--delay", "1.5", "--duration=500ms",
                  "--capture-range=nvtx:train step", "--gpu-metrics=20ms", "--keep-parts", "--wait-children",
                  "2", "--", "app"});
  REQUIRE(o.ok());
  CHECK(o->output == "out");
  CHECK(o->force_overwrite);
  CHECK(o->kinds == (kTraceCuda | kTraceDriver));
  CHECK(o->delay_s == Approx(1.5));
  CHECK(o->duration_s == Approx(0.5));
  CHECK(o->capture == CaptureMode::kNvtx);
  CHECK(o->capture_nvtx_name == "train step");
  CHECK(o->gpu_metrics);
  CHECK(o->gpu_metrics_interval_ms == 20);
  CHECK(o->keep_parts);
  CHECK(o->wait_children_s == Approx(2));
  auto p = Parse({"--capture-range", "cudaProfilerApi", "--gpu-metrics", "app"});
  REQUIRE(p.ok());
  CHECK(p->capture == CaptureMode::kProfilerApi);
  CHECK(p->gpu_metrics_interval_ms == 100);
}

TEST_CASE("options: bad flags are errors that name the flag") {
  struct Case {
    std::vector<std::string> args;
    const char* mentions;
  };
  std::vector<Case> cases = {
      {{"--bogus", "app"}, "--bogus"},
      {{"--trace=cuda,gpu", "app"}, "gpu"},
      {{"--trace="}, "empty"},
      {{"--delay", "soon", "app"}, "--delay"},
      {{"--delay", "-1", "app"}, "--delay"},
      {{"--duration", "0", "app"}, "--duration"},
      {{"--capture-range=whenever", "app"}, "--capture-range"},
      {{"--capture-range=nvtx:", "app"}, "--capture-range"},
      {{"--gpu-metrics=0ms", "app"}, "--gpu-metrics"},
      {{"--gpu-metrics=fast", "app"}, "--gpu-metrics"},
      {{"-o"}, "-o"},
      {{"--force-overwrite=maybe", "app"}, "--force-overwrite"},
      {{"--sample-overhead=lots", "app"}, "--sample-overhead"},
      {{"--sample-overhead=-1", "app"}, "--sample-overhead"},
      {{"--sample-overhead=101", "app"}, "--sample-overhead"},
      {{"--sample-overhead=nan", "app"}, "--sample-overhead"},
      {{"-q"}, "no application"},
      {{}, "no application"},
  };
  for (const auto& c : cases) {
    auto o = Parse(c.args);
    INFO(c.mentions);
    REQUIRE_FALSE(o.ok());
    CHECK(o.status().code() == StatusCode::kInvalidArgument);
    CHECK(o.status().message().find(c.mentions) != std::string::npos);
  }
  CHECK(Parse({"--help"})->help);
  CHECK(Parse({"--version"})->version);
}

TEST_CASE("options: durations") {
  double ms = 0;
  CHECK(ParseDurationMs("2", true, &ms));
  CHECK(ms == 2000);
  CHECK(ParseDurationMs("2", false, &ms));
  CHECK(ms == 2);
  CHECK(ParseDurationMs("0.5s", false, &ms));
  CHECK(ms == 500);
  CHECK(ParseDurationMs("250us", true, &ms));
  CHECK(ms == Approx(0.25));
  CHECK(ParseDurationMs("1min", true, &ms));
  CHECK(ms == 60000);
  CHECK_FALSE(ParseDurationMs("", true, &ms));
  CHECK_FALSE(ParseDurationMs("5 parsecs", true, &ms));
  CHECK_FALSE(ParseDurationMs("nan", true, &ms));
}

TEST_CASE("output names: default from the app, numbered when taken, extension added") {
  std::set<std::string> taken;
  auto exists = [&](const std::string& p) { return taken.count(p) > 0; };
  CHECK(DefaultOutputPath("/usr/bin/python3", exists) == "python3.gtrace");
  taken = {"python3.gtrace", "python3-2.gtrace.parts"};
  CHECK(DefaultOutputPath("python3", exists) == "python3-3.gtrace");
  CHECK(DefaultOutputPath("", exists) == "gcollect.gtrace");
  CHECK(NormalizeOutputPath("run1") == "run1.gtrace");
  CHECK(NormalizeOutputPath("run1.gtrace") == "run1.gtrace");
}

TEST_CASE("trace kinds parse and format") {
  uint32_t k = 0;
  std::string err;
  REQUIRE(ParseTraceKinds("cuda,nvtx", &k, &err));
  CHECK(k == (kTraceCuda | kTraceNvtx));
  REQUIRE(ParseTraceKinds(" kernel , memcpy ", &k, &err));
  CHECK(FormatTraceKinds(k) == "kernel,memcpy");
  REQUIRE(ParseTraceKinds("none", &k, &err));
  CHECK(FormatTraceKinds(k) == "none");
  CHECK_FALSE(ParseTraceKinds("cuda,warp", &k, &err));
  CHECK(err.find("warp") != std::string::npos);
}

TEST_CASE("config survives the environment round trip; bad values fall back with a warning") {
  Config c;
  c.kinds = kTraceKernel | kTraceNvtx;
  c.parts_dir = "/tmp/x.parts";
  c.window_start_ns = 123;
  c.window_end_ns = 456;
  c.capture = CaptureMode::kNvtx;
  c.capture_nvtx_name = "step:1";
  c.launcher_pid = 77;
  c.flush_interval_ms = 250;
  c.modules = "counters";
  c.nccl_plugin = NcclPluginMode::kChannels;
  c.cpu_sample_max_overhead_pct = 0.25;
  std::map<std::string, std::string> env;
  ConfigToEnv(
      c,
      [](void* ctx, const char* n, const char* v) {
        (*static_cast<std::map<std::string, std::string>*>(ctx))[n] = v;
      },
      &env);
  auto get = [](void* ctx, const char* n) -> const char* {
    auto& m = *static_cast<std::map<std::string, std::string>*>(ctx);
    auto it = m.find(n);
    return it == m.end() ? nullptr : it->second.c_str();
  };
  std::string warnings;
  Config back = ConfigFromEnv(get, &env, &warnings);
  CHECK(warnings.empty());
  CHECK(back.kinds == c.kinds);
  CHECK(back.parts_dir == c.parts_dir);
  CHECK(back.window_start_ns == 123);
  CHECK(back.window_end_ns == 456);
  CHECK(back.capture == CaptureMode::kNvtx);
  CHECK(back.capture_nvtx_name == "step:1");
  CHECK(back.launcher_pid == 77);
  CHECK(back.flush_interval_ms == 250);
  CHECK(back.modules == "counters");
  CHECK(back.nccl_plugin == NcclPluginMode::kChannels);
  CHECK(back.cpu_sample_max_overhead_pct == 0.25);

  std::map<std::string, std::string> bad = {
      {"GTRACE_TRACE", "cuda,bogus"}, {"GTRACE_WINDOW", "abc"},        {"GTRACE_CAPTURE", "later"},
      {"GTRACE_FLUSH_MS", "1"},       {"GTRACE_NCCL_PLUGIN", "maybe"}, {"GTRACE_SAMPLE_OVERHEAD", "2%"}};
  warnings.clear();
  Config fallback = ConfigFromEnv(get, &bad, &warnings);
  CHECK(fallback.kinds == kTraceDefault);
  CHECK(fallback.window_start_ns == 0);
  CHECK(fallback.capture == CaptureMode::kNone);
  CHECK(fallback.flush_interval_ms == 1000);
  CHECK(warnings.find("GTRACE_TRACE") != std::string::npos);
  CHECK(warnings.find("GTRACE_WINDOW") != std::string::npos);
  CHECK(warnings.find("GTRACE_CAPTURE") != std::string::npos);
  CHECK(warnings.find("GTRACE_NCCL_PLUGIN") != std::string::npos);
  CHECK(fallback.nccl_plugin == NcclPluginMode::kOps);
  CHECK(warnings.find("GTRACE_SAMPLE_OVERHEAD") != std::string::npos);
  CHECK(fallback.cpu_sample_max_overhead_pct == 1.5);
}

TEST_CASE("options: --nccl-plugin, and NCCL_PROFILER_PLUGIN kept when the user set it") {
  CHECK(Parse({"app"})->nccl_plugin == NcclPluginMode::kOps);
  CHECK(Parse({"--nccl-plugin=channels", "app"})->nccl_plugin == NcclPluginMode::kChannels);
  CHECK(Parse({"--nccl-plugin", "off", "app"})->nccl_plugin == NcclPluginMode::kOff);
  auto bad = Parse({"--nccl-plugin=sometimes", "app"});
  REQUIRE(!bad.ok());
  CHECK(bad.status().message().find("--nccl-plugin") != std::string::npos);

  std::string warning;
  CHECK(NcclProfilerPluginValue(NcclPluginMode::kOps, nullptr, "/x/libgtrace_inject.so", &warning) ==
        "/x/libgtrace_inject.so");
  CHECK(warning.empty());
  CHECK(NcclProfilerPluginValue(NcclPluginMode::kOff, nullptr, "/x/libgtrace_inject.so", &warning).empty());
  CHECK(NcclProfilerPluginValue(NcclPluginMode::kOps, "/opt/inspector.so", "/x/libgtrace_inject.so", &warning)
            .empty());
  CHECK(warning.find("/opt/inspector.so") != std::string::npos);
  warning.clear();  // already ours (gcollect inside gcollect): kept, silently
  CHECK(NcclProfilerPluginValue(NcclPluginMode::kOps, "/x/libgtrace_inject.so", "/x/libgtrace_inject.so",
                                &warning)
            .empty());
  CHECK(warning.empty());
}

// ---- --gpu-metrics: NVML device -> CUDA device number (launcher/nvml_map.h)

namespace {
std::vector<NvmlGpu> FourGpus() {
  // NVML order deliberately differs from PCI order for the last two.
  return {{"GPU-aaaa1111-0000-0000-0000-000000000000", 0x1b00, "NVIDIA H200"},
          {"GPU-bbbb2222-0000-0000-0000-000000000000", 0x2900, "NVIDIA H200"},
          {"GPU-cccc3333-0000-0000-0000-000000000000", 0x9d00, "NVIDIA H200"},
          {"GPU-dddd4444-0000-0000-0000-000000000000", 0x4f00, "NVIDIA H200"}};
}
}  // namespace

TEST_CASE("gpu metrics: without CUDA_VISIBLE_DEVICES, CUDA numbers GPUs in PCI bus order") {
  NvmlCudaMap m = MapNvmlToCuda(FourGpus(), nullptr, nullptr);
  CHECK(m.cuda_ordinal == std::vector<int>{0, 1, 3, 2});
  CHECK(m.warning.empty());
}

TEST_CASE("gpu metrics: CUDA_VISIBLE_DEVICES indices and UUIDs pick and renumber GPUs") {
  // "2,0": CUDA device 0 is the third GPU in PCI order (NVML index 3), device 1 the first.
  CHECK(MapNvmlToCuda(FourGpus(), "2,0", nullptr).cuda_ordinal == std::vector<int>{1, -1, -1, 0});
  // UUID prefixes, in any order, spaces tolerated.
  CHECK(
      MapNvmlToCuda(FourGpus(), "GPU-cccc, GPU-aaaa1111-0000-0000-0000-000000000000", nullptr).cuda_ordinal ==
      std::vector<int>{1, -1, 0, -1});
  // Mixed forms.
  CHECK(MapNvmlToCuda(FourGpus(), "GPU-dddd,1", "PCI_BUS_ID").cuda_ordinal == std::vector<int>{-1, 1, -1, 0});
  // Empty: CUDA sees nothing.
  CHECK(MapNvmlToCuda(FourGpus(), "", nullptr).cuda_ordinal == std::vector<int>{-1, -1, -1, -1});
}

TEST_CASE("gpu metrics: the list ends at the first entry that names no GPU, as in CUDA") {
  CHECK(MapNvmlToCuda(FourGpus(), "1,7,0", nullptr).cuda_ordinal == std::vector<int>{-1, 0, -1, -1});
  CHECK(MapNvmlToCuda(FourGpus(), "0,0,1", nullptr).cuda_ordinal == std::vector<int>{0, -1, -1, -1});
  CHECK(MapNvmlToCuda(FourGpus(), "GPU-,1", nullptr).cuda_ordinal == std::vector<int>{-1, -1, -1, -1});
  CHECK(MapNvmlToCuda(FourGpus(), "x", nullptr).cuda_ordinal == std::vector<int>{-1, -1, -1, -1});
  CHECK(MapNvmlToCuda(FourGpus(), "99999999999,0", nullptr).cuda_ordinal == std::vector<int>{-1, -1, -1, -1});
  // An ambiguous UUID prefix names no device.
  auto gpus = FourGpus();
  gpus[1].uuid = "GPU-aaaa9999-0000-0000-0000-000000000000";
  CHECK(MapNvmlToCuda(gpus, "GPU-aaaa,0", nullptr).cuda_ordinal == std::vector<int>{-1, -1, -1, -1});
  CHECK(MapNvmlToCuda(gpus, "GPU-aaaa9,0", nullptr).cuda_ordinal == std::vector<int>{1, 0, -1, -1});
}

TEST_CASE("gpu metrics: mixed GPU models or MIG instances come with a warning") {
  auto gpus = FourGpus();
  gpus[2].name = "NVIDIA A100";
  NvmlCudaMap m = MapNvmlToCuda(gpus, "1", nullptr);
  CHECK(m.cuda_ordinal == std::vector<int>{-1, 0, -1, -1});
  CHECK(!m.warning.empty());
  CHECK(MapNvmlToCuda(gpus, "1", "PCI_BUS_ID").warning.empty());
  CHECK(MapNvmlToCuda(gpus, "GPU-bbbb", nullptr).warning.empty());  // by UUID: exact
  NvmlCudaMap mig = MapNvmlToCuda(FourGpus(), "MIG-1234", nullptr);
  CHECK(mig.cuda_ordinal == std::vector<int>{-1, -1, -1, -1});
  CHECK(!mig.warning.empty());
  // Unknown PCI ids: NVML's order.
  std::vector<NvmlGpu> nopci = {{"GPU-1", UINT64_MAX, "X"}, {"GPU-2", UINT64_MAX, "X"}};
  CHECK(MapNvmlToCuda(nopci, nullptr, nullptr).cuda_ordinal == std::vector<int>{0, 1});
}

#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "config/config.h"
#include "launcher/launcher.h"

using namespace gt;
using namespace gt::collector;

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

  std::map<std::string, std::string> bad = {{"GTRACE_TRACE", "cuda,bogus"},
                                            {"GTRACE_WINDOW", "abc"},
                                            {"GTRACE_CAPTURE", "later"},
                                            {"GTRACE_FLUSH_MS", "1"}};
  warnings.clear();
  Config fallback = ConfigFromEnv(get, &bad, &warnings);
  CHECK(fallback.kinds == kTraceDefault);
  CHECK(fallback.window_start_ns == 0);
  CHECK(fallback.capture == CaptureMode::kNone);
  CHECK(fallback.flush_interval_ms == 1000);
  CHECK(warnings.find("GTRACE_TRACE") != std::string::npos);
  CHECK(warnings.find("GTRACE_WINDOW") != std::string::npos);
  CHECK(warnings.find("GTRACE_CAPTURE") != std::string::npos);
}

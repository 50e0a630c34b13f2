// What gcollect says before running the app on a machine that cannot record GPU activity, and where it looks
// for its injection library (installed tree first, then the build tree).
#include <catch2/catch.hpp>

#include <set>

#include "launcher/preflight.h"

using namespace gt::launcher;

namespace {
std::set<std::string>* g_present = nullptr;
bool Present(const std::string& p) {
  return g_present->count(p) > 0;
}
}  // namespace

TEST_CASE("preflight: CUDA versions read as major.minor") {
  CHECK(FormatCudaVersion(13000) == "13.0");
  CHECK(FormatCudaVersion(12040) == "12.4");
  CHECK(FormatCudaVersion(12090) == "12.9");
}

TEST_CASE("preflight: each missing piece gets its own message, and a ready machine none") {
  GpuReadiness ready;
  ready.driver_found = true;
  ready.driver_cuda_version = 13000;
  CHECK(GpuReadinessProblem(ready, 13000) == "");
  ready.driver_cuda_version = 13010;  // a newer driver is fine
  CHECK(GpuReadinessProblem(ready, 13000) == "");
  ready.driver_cuda_version = 0;  // unknown: nothing known to be wrong
  CHECK(GpuReadinessProblem(ready, 13000) == "");

  GpuReadiness no_driver;
  std::string m = GpuReadinessProblem(no_driver, 13000);
  CHECK(m.find("no NVIDIA driver") != std::string::npos);
  CHECK(m.find("libcuda.so.1") != std::string::npos);
  CHECK(m.find("the app runs anyway") != std::string::npos);

  GpuReadiness old_driver = ready;
  old_driver.driver_cuda_version = 12040;
  m = GpuReadinessProblem(old_driver, 13000);
  CHECK(m.find("supports CUDA 12.4") != std::string::npos);
  CHECK(m.find("CUDA 13.0") != std::string::npos);
  CHECK(m.find("update the driver") != std::string::npos);
  CHECK(GpuReadinessProblem(old_driver, 0) == "");  // built without knowing its CUDA: no comparison

  // A library that cannot load comes first: without it nothing is recorded even with a driver.
  GpuReadiness no_cupti = ready;
  no_cupti.inject_load_error = "libcupti.so.13: cannot open shared object file: No such file or directory";
  m = GpuReadinessProblem(no_cupti, 13000);
  CHECK(m.find("libcupti.so.13: cannot open shared object file") != std::string::npos);
  CHECK(m.find("CUDA 13.0 toolkit") != std::string::npos);
  CHECK(m.find("LD_LIBRARY_PATH") != std::string::npos);
  no_cupti.driver_found = false;
  CHECK(GpuReadinessProblem(no_cupti, 13000).find("cannot be loaded") != std::string::npos);
}

TEST_CASE("preflight: the injection library is found in the install tree before the build tree") {
  std::set<std::string> present;
  g_present = &present;
  const std::string rel = "../lib/gtrace/libgtrace_inject.so";
  // Flag and environment win, whether or not the file exists (gcollect then reports it missing).
  CHECK(ResolveInjectionLibrary("/x/flag.so", "/x/env.so", "/opt/gt/bin", rel, Present) == "/x/flag.so");
  CHECK(ResolveInjectionLibrary("", "/x/env.so", "/opt/gt/bin", rel, Present) == "/x/env.so");
  CHECK(ResolveInjectionLibrary("", "", "/opt/gt/bin", rel, Present) == "");  // empty env = unset

  present = {"/opt/gt/bin/../lib/gtrace/libgtrace_inject.so", "/opt/gt/bin/libgtrace_inject.so"};
  CHECK(ResolveInjectionLibrary("", nullptr, "/opt/gt/bin", rel, Present) ==
        "/opt/gt/bin/../lib/gtrace/libgtrace_inject.so");
  present = {"/b/native/collector/libgtrace_inject.so"};  // the build tree: beside gcollect
  CHECK(ResolveInjectionLibrary("", nullptr, "/b/native/collector", rel, Present) ==
        "/b/native/collector/libgtrace_inject.so");
  present.clear();
  CHECK(ResolveInjectionLibrary("", nullptr, "/b/native/collector", rel, Present) == "");
}

TEST_CASE("preflight: a library that is not there is reported, not loaded") {
  GpuReadiness r = ProbeGpuReadiness("/nonexistent/libgtrace_inject.so");
#if !defined(GT_SANITIZED)
  CHECK(r.inject_load_error.find("/nonexistent/libgtrace_inject.so") != std::string::npos);
  CHECK(GpuReadinessProblem(r, 13000).find("cannot be loaded") != std::string::npos);
#else
  CHECK(r.inject_load_error.empty());  // not probed under ASan
#endif
}

#include "launcher/preflight.h"

#include <dlfcn.h>

#include <vector>

namespace gt::launcher {

GpuReadiness ProbeGpuReadiness(const std::string& inject_path) {
  GpuReadiness r;
  if (void* cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL)) {
    r.driver_found = true;
    using GetVersion = int (*)(int*);  // CUresult cuDriverGetVersion(int*): needs no cuInit
    if (auto get = reinterpret_cast<GetVersion>(dlsym(cuda, "cuDriverGetVersion"))) {
      int v = 0;
      if (get(&v) == 0) r.driver_cuda_version = v;
    }
    dlclose(cuda);
  }
  dlerror();
  // RTLD_LAZY: only whether the library and its libcupti (by its RUNPATH, LD_LIBRARY_PATH, ld.so.cache) load.
  // Not under ASan: libcupti's libraries are not loaded into sanitized processes
  // (tests/collector/CMakeLists.txt).
#if defined(GT_SANITIZED)
  return r;
#endif
  if (void* inject = dlopen(inject_path.c_str(), RTLD_LAZY | RTLD_LOCAL)) {
    dlclose(inject);
  } else {
    const char* e = dlerror();
    r.inject_load_error = e ? e : "unknown dlopen error";
  }
  return r;
}

std::string FormatCudaVersion(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

std::string GpuReadinessProblem(const GpuReadiness& r, int built_cuda_version) {
  const std::string built = built_cuda_version > 0 ? FormatCudaVersion(built_cuda_version) : "?";
  if (!r.inject_load_error.empty())
    return "the injection library cannot be loaded (" + r.inject_load_error +
           "); gcollect needs CUPTI from NVIDIA's CUDA " + built +
           " toolkit (libcupti.so): install it, or add its lib64 folder to LD_LIBRARY_PATH. The app runs "
           "without the collector, so no GPU activity is recorded";
  if (!r.driver_found)
    return "no NVIDIA driver on this machine (libcuda.so.1 cannot be loaded), so no GPU activity can be "
           "recorded; the app runs anyway";
  if (built_cuda_version > 0 && r.driver_cuda_version > 0 && r.driver_cuda_version < built_cuda_version)
    return "the NVIDIA driver supports CUDA " + FormatCudaVersion(r.driver_cuda_version) +
           ", older than the CUDA " + built +
           " this gcollect and its CUPTI were built with; CUPTI needs a driver for CUDA " + built +
           " or newer (update the driver), so GPU activity will likely not be recorded; the app runs anyway";
  return "";
}

std::string ResolveInjectionLibrary(const std::string& flag, const char* env_value,
                                    const std::string& self_dir, const std::string& rel_from_bindir,
                                    bool (*exists)(const std::string&)) {
  if (!flag.empty()) return flag;
  if (env_value && *env_value) return env_value;
  std::vector<std::string> candidates;
  if (!rel_from_bindir.empty()) candidates.push_back(self_dir + "/" + rel_from_bindir);
  // The build tree (gcollect and the library in build/native/collector), and older install layouts.
  for (const char* rel :
       {"/libgtrace_inject.so", "/../lib/libgtrace_inject.so", "/../collector/libgtrace_inject.so"})
    candidates.push_back(self_dir + rel);
  for (const auto& c : candidates)
    if (exists(c)) return c;
  return "";
}

}  // namespace gt::launcher

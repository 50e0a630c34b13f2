// What gcollect checks before it runs the app: can anything be recorded on this machine? The app runs either
// way (a profiler must never be the reason a job did not run); the answer becomes a warning before the app
// starts and a loss record in the trace.
#pragma once

#include <string>

namespace gt::launcher {

struct GpuReadiness {
  bool driver_found = false;      // libcuda.so.1 (NVIDIA's driver) loads
  int driver_cuda_version = 0;    // cuDriverGetVersion: 12040 = CUDA 12.4; 0 = unknown
  std::string inject_load_error;  // "" when libgtrace_inject.so and the libcupti it needs load
};

// Loads libcuda.so.1 and the injection library into this process (RTLD_LOCAL) and unloads them; starts no
// CUDA context and touches no GPU.
GpuReadiness ProbeGpuReadiness(const std::string& inject_path);

// Why no GPU activity can be recorded, one sentence for the user; "" when nothing is known to be wrong.
// built_cuda_version: the toolkit gcollect and its CUPTI come from (13000 = 13.0); 0 skips the driver check.
std::string GpuReadinessProblem(const GpuReadiness& r, int built_cuda_version);

// 13000 -> "13.0", 12040 -> "12.4".
std::string FormatCudaVersion(int version);

// The injection library gcollect uses, in order: --inject-lib, $GTRACE_INJECT_LIB, the install tree
// (self_dir/rel_from_bindir: ../lib/gtrace/libgtrace_inject.so), then the build tree (beside gcollect).
// exists() decides which candidate is there; "" when none is.
std::string ResolveInjectionLibrary(const std::string& flag, const char* env_value,
                                    const std::string& self_dir, const std::string& rel_from_bindir,
                                    bool (*exists)(const std::string&));

}  // namespace gt::launcher

// Checks a recorded trace against what a kernels/ workload must produce (counts, ordering, nesting,
// correlation). Used by the GPU suite (gtrace_check on fresh traces) and by CI over the committed fixtures in
// tests/data/.
#pragma once

#include <string>
#include <vector>

#include "gt/trace_data.h"

namespace gt::check {

struct CheckReport {
  std::vector<std::string> failures;
  std::vector<std::string> notes;
  bool ok() const { return failures.empty(); }
};

// Invariants every CUDA trace must hold: GPU records have start <= end; each kernel/memcpy/memset has a
// runtime API call with its correlation id that started before it (when runtime calls were traced); kernel
// correlation ids are unique per process; devices carry derived peaks.
void CheckGeneric(const TraceData& d, CheckReport& r);
// Workload-specific expectations ("copy", "nvtx", "multithread", "torch_train", ...). Unknown names: generic
// only.
void CheckWorkload(const TraceData& d, const std::string& workload, CheckReport& r);
std::vector<std::string> KnownWorkloads();

}  // namespace gt::check

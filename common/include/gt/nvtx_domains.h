// NVTX domains with a meaning beyond the app's own ranges, spelled once for the collector and the viewer:
// library API calls (the libraries' own NVTX, gcollect --trace=cublas,cudnn,nccl; cuBLASLt uses the cuBLAS
// domain) and OS runtime waits (written by the injection from libgtrace_osrt.so, --trace=osrt).
#pragma once

namespace gt {

inline constexpr const char* kCublasNvtxDomain = "cuBLAS";
inline constexpr const char* kCudnnNvtxDomain = "cuDNN";
inline constexpr const char* kNcclNvtxDomain = "NCCL";
inline constexpr const char* kOsRuntimeNvtxDomain = "OS runtime";

}  // namespace gt

// Shared helpers for the ground-truth workloads: error checks and a tiny argument parser.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#define GT_CHECK(call)                                                                                  \
  do {                                                                                                  \
    cudaError_t err_ = (call);                                                                          \
    if (err_ != cudaSuccess) {                                                                          \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_));     \
      std::exit(1);                                                                                     \
    }                                                                                                   \
  } while (0)

// "--name=value" integer argument, else the default.
inline long ArgInt(int argc, char** argv, const char* name, long fallback) {
  size_t n = std::strlen(name);
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--", 2) == 0 && std::strncmp(argv[i] + 2, name, n) == 0 && argv[i][2 + n] == '=')
      return std::strtol(argv[i] + 3 + n, nullptr, 10);
  }
  return fallback;
}

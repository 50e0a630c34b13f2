// A synthetic but realistically shaped CUDA trace: training-loop NVTX nesting, 1-3 API calls per kernel
// launch, kernels from a fixed set of names with characteristic durations, occasional memcpy/memset, several
// streams.
#pragma once

#include <cstdint>

#include "gt/trace_data.h"

namespace gt::bench {

// Generates at least `events` timeline events (TraceData::EventCount()) with a fixed seed.
TraceData MakeSyntheticTrace(uint64_t events, uint64_t seed = 1);

}  // namespace gt::bench

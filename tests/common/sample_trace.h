// A tiny, fully deterministic trace with at least one record of every kind: the golden test's input, the CLI
// tests' file (make_sample_trace) and a fuzz seed.
#pragma once

#include <string>

#include "gt/writer.h"

namespace gt::test {

Status WriteSampleTrace(TraceWriter& w);
std::string SampleTraceBytes();  // WriteSampleTrace + Finish into memory

}  // namespace gt::test

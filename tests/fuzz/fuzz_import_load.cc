// libFuzzer: the viewer's whole open path on arbitrary bytes: content sniffing, gzip, .gtrace via the reader,
// JSON via the importer, then the model's queries.
#include <cstdint>
#include <span>

#include "fuzz_viewer_common.h"
#include "gt/viewer/load.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gt::viewer::LoadOptions opt;
  opt.max_inflated_bytes = 16u << 20;  // keep gzip bombs within the fuzzer's memory limit
  auto model = gt::viewer::LoadTrace(std::span<const uint8_t>(data, size), opt);
  if (!model.ok()) return 0;
  gt::fuzz::ExerciseModel(*model.value());
  return 0;
}

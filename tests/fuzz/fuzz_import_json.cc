// libFuzzer: Chrome / Kineto JSON import. Any bytes: no crash, no hang, no sanitizer report; when the import
// succeeds the model is well-formed (lanes sorted and disjoint) and every query runs on it.
#include <cstdint>
#include <string_view>

#include "fuzz_viewer_common.h"
#include "gt/viewer/builder.h"
#include "gt/viewer/load.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gt::viewer::ModelBuilder builder;
  gt::Status s = gt::viewer::ImportJson(std::string_view(reinterpret_cast<const char*>(data), size), builder);
  if (!s.ok()) return 0;
  auto model = builder.Finish();
  gt::fuzz::ExerciseModel(*model);
  return 0;
}

// libFuzzer: the query string of GET /api/t/<id>/<what> is whatever a client sends. Parsing it must give an
// answer or a clear error, with work bounded by the caps of gt/viewer/index_query.h whatever the numbers
// (windows anywhere in int64, any pixel width, unknown tracks and keys). Input: "<what>?k=v&k=v...", run
// against the index of a small synthetic trace built once.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "gt/viewer/builder.h"
#include "gt/viewer/index.h"
#include "gt/viewer/index_query.h"
#include "synth_trace.h"

namespace {

struct Fixture {
  std::vector<uint8_t> bytes;
  std::unique_ptr<gt::viewer::MappedIndex> index;
  Fixture() {
    gt::synth::SynthOptions o;
    o.events = 20'000;
    gt::viewer::ModelBuilder b;
    gt::synth::GenerateSynthTrace(b, o);
    auto model = b.Finish();
    bytes = gt::viewer::EncodeIndex(*model, {});
    auto opened = gt::viewer::MappedIndex::FromBytes(bytes, {});
    if (!opened.ok()) std::abort();
    index = std::move(*opened);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Fixture fixture;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t q = in.find('?');
  const std::string_view what = in.substr(0, q);
  gt::viewer::QueryParams params;
  if (q != std::string_view::npos) {
    std::string_view rest = in.substr(q + 1);
    while (!rest.empty() && params.size() < 16) {
      const size_t amp = rest.find('&');
      const std::string_view kv = rest.substr(0, amp);
      const size_t eq = kv.find('=');
      params.emplace_back(std::string(kv.substr(0, eq)),
                          eq == std::string_view::npos ? "" : std::string(kv.substr(eq + 1)));
      rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    }
  }
  const auto a = gt::viewer::AnswerIndexQuery(*fixture.index, what, params);
  if (a.body.empty() || (a.status != 200 && a.status != 400 && a.status != 404)) std::abort();
  return 0;
}

// libFuzzer: Chrome / Kineto JSON import. Any bytes: no crash, no hang, no sanitizer report; when the import
// succeeds the model is well-formed (lanes sorted and disjoint) and every query runs on it.
// Both front ends run on every input: the fast one (the default) must build exactly the reference's (nlohmann
// SAX) model, and fail where it fails; on damaged input only the byte position named in the damage note may
// differ. The same bytes gzipped go through the fast front end's streaming inflate, to the same model, and
// the text loads on threads (event-array slices parsed in parallel) to the one-thread model.
#include <zlib.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "fuzz_viewer_common.h"
#include "gt/viewer/builder.h"
#include "gt/viewer/load.h"
#include "model_diff.h"

namespace {

std::unique_ptr<gt::viewer::TraceModel> Import(std::string_view text, bool reference, gt::Status* status) {
  gt::viewer::ModelBuilder builder;
  *status =
      reference ? gt::viewer::ImportJsonReference(text, builder) : gt::viewer::ImportJson(text, builder);
  if (!status->ok()) return nullptr;
  auto m = builder.Finish();
  for (auto& l : m->losses)
    if (l.name == "json_truncated")
      std::string("damaged").swap(l.detail);  // capacity too: MemoryBytes counts it
  return m;
}

std::string Gzip(std::string_view in) {
  z_stream zs{};
  if (deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) std::abort();
  std::string out(deflateBound(&zs, in.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  if (deflate(&zs, Z_FINISH) != Z_STREAM_END) std::abort();
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  gt::Status fast_status, ref_status;
  auto fast = Import(text, false, &fast_status);
  auto ref = Import(text, true, &ref_status);
  if (fast_status.ok() != ref_status.ok()) {
    std::fprintf(stderr, "fast: %s; reference: %s\n", fast_status.message().c_str(),
                 ref_status.message().c_str());
    std::abort();
  }
  if (!fast) return 0;
  if (const std::string d = gt::test::ModelDiff(*fast, *ref); !d.empty()) {
    std::fprintf(stderr, "fast and reference models differ: %s\n", d.c_str());
    std::abort();
  }
  gt::fuzz::ExerciseModel(*fast);
  // Slices of the event array parsed on threads (tiny slices: guesses land inside strings and nested
  // values, slices fail and are dropped): the one-thread fast model, damage note included.
  if (gt::viewer::DetectFormat(std::span<const uint8_t>(data, size)) == gt::viewer::DetectedFormat::kJson) {
    gt::viewer::LoadOptions o;
    o.threads = 3;
    o.json_slice_bytes = 23;
    auto par = gt::viewer::LoadTrace(std::span<const uint8_t>(data, size), o);
    auto one = gt::viewer::LoadTrace(std::span<const uint8_t>(data, size));
    if (par.ok() != one.ok()) std::abort();
    if (par.ok()) {
      if (const std::string d = gt::test::ModelDiff(*par.value(), *one.value()); !d.empty()) {
        std::fprintf(stderr, "threads: the model differs from one thread's: %s\n", d.c_str());
        std::abort();
      }
    }
  }
  // The streaming gzip path (through the loader, which sniffs the inflated text first).
  if (gt::viewer::DetectFormat(std::span<const uint8_t>(data, size)) == gt::viewer::DetectedFormat::kJson) {
    const std::string gz = Gzip(text);
    auto a = gt::viewer::LoadTrace(
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(gz.data()), gz.size()));
    gt::viewer::LoadOptions o;
    o.json_parser = gt::viewer::LoadOptions::JsonParser::kReference;
    auto b = gt::viewer::LoadTrace(
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(gz.data()), gz.size()), o);
    if (a.ok() != b.ok()) std::abort();
    if (a.ok()) {
      for (auto* m : {a.value().get(), b.value().get()})
        for (auto& l : m->losses)
          if (l.name == "json_truncated")
            std::string("damaged").swap(l.detail);  // capacity too: MemoryBytes counts it
      if (const std::string d = gt::test::ModelDiff(*a.value(), *b.value()); !d.empty()) {
        std::fprintf(stderr, "gzip: fast and reference models differ: %s\n", d.c_str());
        std::abort();
      }
    }
  }
  return 0;
}

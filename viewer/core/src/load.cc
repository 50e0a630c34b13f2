// Format sniffing and incremental loading (.gtrace chunk by chunk; JSON in one step).
#include <fstream>

#include "gt/viewer/load.h"

namespace gt::viewer {

DetectedFormat DetectFormat(std::span<const uint8_t> bytes) {
  if (bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b) return DetectedFormat::kGzip;
  if (LooksLikeGtrace(bytes)) return DetectedFormat::kGtrace;
  size_t i = 0;
  if (bytes.size() >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF) i = 3;  // UTF-8 BOM
  while (i < bytes.size() && (bytes[i] == ' ' || bytes[i] == '\n' || bytes[i] == '\r' || bytes[i] == '\t'))
    ++i;
  if (i < bytes.size() && (bytes[i] == '{' || bytes[i] == '[')) return DetectedFormat::kJson;
  return DetectedFormat::kUnknown;
}

static std::string Describe(std::span<const uint8_t> bytes) {
  if (bytes.empty()) return "the file is empty";
  std::string hex;
  static const char* kHex = "0123456789abcdef";
  for (size_t i = 0; i < bytes.size() && i < 8; ++i) {
    hex += kHex[bytes[i] >> 4];
    hex += kHex[bytes[i] & 15];
    hex += ' ';
  }
  return "unrecognized content (first bytes: " + hex +
         "); expected .gtrace, Chrome/Kineto JSON, or gzip of those";
}

class TraceLoader::Impl {
 public:
  enum class Mode { kNone, kGtrace, kJson, kDone };
  Mode mode = Mode::kNone;
  LoadOptions options;
  std::string inflated;
  bool gzip = false, gzip_truncated = false;
  std::span<const uint8_t> bytes;
  ModelBuilder builder;
  TraceReader reader;
  Status json_status;
  bool finished = false;
  bool is_gtrace = false;
};

TraceLoader::TraceLoader() : impl_(std::make_unique<Impl>()) {}
TraceLoader::~TraceLoader() = default;

Status TraceLoader::Open(std::span<const uint8_t> bytes, LoadOptions options) {
  Impl& I = *impl_;
  I.options = options;
  I.bytes = bytes;
  DetectedFormat f = DetectFormat(bytes);
  if (f == DetectedFormat::kGzip) {
    auto out = Gunzip(bytes, options.max_inflated_bytes, &I.gzip_truncated);
    if (!out.ok()) return out.status();
    I.inflated = std::move(out.value());
    I.gzip = true;
    I.bytes =
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(I.inflated.data()), I.inflated.size());
    f = DetectFormat(I.bytes);
    if (f == DetectedFormat::kGzip) return Unsupported("gzip inside gzip is not supported");
    if (f == DetectedFormat::kUnknown) return Corrupt("inside the gzip: " + Describe(I.bytes));
  }
  if (I.gzip_truncated)
    I.builder.AddLoss("gzip_truncated", Severity::kDataLoss, 1,
                      "the gzip stream ends early or is damaged; only the part before that was read");
  switch (f) {
    case DetectedFormat::kGtrace: {
      I.reader.SetThreads(options.threads);
      GT_RETURN_IF_ERROR(I.reader.Open(I.bytes));
      I.mode = Impl::Mode::kGtrace;
      I.is_gtrace = true;
      return Status::Ok();
    }
    case DetectedFormat::kJson:
      I.mode = Impl::Mode::kJson;
      return Status::Ok();
    default:
      return InvalidArgument(Describe(bytes));
  }
}

void TraceLoader::Step() {
  Impl& I = *impl_;
  switch (I.mode) {
    case Impl::Mode::kGtrace:
      I.reader.Step(I.builder, std::max<uint32_t>(1, I.options.chunks_per_step));
      if (I.reader.done()) I.mode = Impl::Mode::kDone;
      break;
    case Impl::Mode::kJson: {
      std::string_view text(reinterpret_cast<const char*>(I.bytes.data()), I.bytes.size());
      I.json_status = ImportJson(text, I.builder);
      I.mode = Impl::Mode::kDone;
      break;
    }
    default:
      break;
  }
}

bool TraceLoader::done() const {
  return impl_->mode == Impl::Mode::kDone || impl_->mode == Impl::Mode::kNone;
}

double TraceLoader::progress() const {
  switch (impl_->mode) {
    case Impl::Mode::kGtrace:
      return impl_->reader.progress();
    case Impl::Mode::kDone:
      return 1.0;
    default:
      return 0.0;
  }
}

StatusOr<std::unique_ptr<TraceModel>> TraceLoader::Finish() {
  Impl& I = *impl_;
  if (I.finished) return InvalidArgument("TraceLoader::Finish called twice");
  if (I.mode == Impl::Mode::kNone) return InvalidArgument("TraceLoader: Open failed or was not called");
  while (!done()) Step();
  I.finished = true;
  if (!I.json_status.ok()) return I.json_status;
  LoadReport report = I.is_gtrace ? I.reader.report() : LoadReport{};
  report.bytes_total = std::max<uint64_t>(report.bytes_total, I.bytes.size());
  I.builder.SetReport(report);
  return I.builder.Finish();
}

StatusOr<std::unique_ptr<TraceModel>> LoadTrace(std::span<const uint8_t> bytes, LoadOptions options) {
  TraceLoader loader;
  GT_RETURN_IF_ERROR(loader.Open(bytes, options));
  while (!loader.done()) loader.Step();
  return loader.Finish();
}

StatusOr<std::unique_ptr<TraceModel>> LoadTraceFile(const std::string& path, LoadOptions options) {
  auto bytes = ReadFileBytes(path);
  if (!bytes.ok()) return bytes.status();
  const std::string& b = bytes.value();
  return LoadTrace(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(b.data()), b.size()), options);
}

}  // namespace gt::viewer

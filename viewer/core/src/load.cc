// Format sniffing and incremental loading (.gtrace chunk by chunk; JSON some MB of text per step, gzip of
// JSON inflated as it is parsed).
//
// A .gtrace Step walks a window of chunks (TraceReader::Walk) and routes each record chunk into a router of
// its own on the pool's threads (records -> per-track pieces, local interning); the routers are merged in
// file order on the calling thread. With one thread the chunks are routed straight into the builder. Either
// way the builder sees the same records in the same order, so the model does not depend on the threads.
#include <fstream>

#include "builder_internal.h"
#include "gt/viewer/index.h"  // MemoryAvailableForModels
#include "gt/viewer/load.h"
#include "gt/viewer/ncu.h"
#include "gt/viewer/nsys.h"
#include "import_json_internal.h"

#include "gt/parts.h"

namespace gt::viewer {

DetectedFormat DetectFormat(std::span<const uint8_t> bytes) {
  if (bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b) return DetectedFormat::kGzip;
  if (LooksLikeGtrace(bytes)) return DetectedFormat::kGtrace;
  if (LooksLikeSqlite(bytes)) return DetectedFormat::kSqlite;
  size_t i = 0;
  if (bytes.size() >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF) i = 3;  // UTF-8 BOM
  while (i < bytes.size() && (bytes[i] == ' ' || bytes[i] == '\n' || bytes[i] == '\r' || bytes[i] == '\t'))
    ++i;
  if (i < bytes.size() && (bytes[i] == '{' || bytes[i] == '[')) return DetectedFormat::kJson;
  if (LooksLikeNcuCsv(bytes)) return DetectedFormat::kNcuCsv;
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
         "); expected .gtrace, Chrome/Kineto JSON, Nsight Compute CSV (ncu --csv --page raw), gzip of those, "
         "or an Nsight Systems SQLite export";
}

// JSON text parsed per Step (the page draws its progress bar between Steps).
constexpr uint64_t kJsonBytesPerStep = 8ull << 20;

class TraceLoader::Impl {
 public:
  std::unique_ptr<column_storage::SpillScope> spill;  // first member: closed after everything it covers
  enum class Mode { kNone, kGtrace, kJson, kNcu, kDone };
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
  std::unique_ptr<detail::ThreadPool> pool;
  std::vector<PendingChunk> pending;
  std::vector<TraceReader::Decoder> decoders;  // one per pool thread
  std::vector<detail::Router> routers;
  std::vector<Status> decoded;
  LoadTimings timings;
  std::unique_ptr<json_import::FastJsonImport> fast_json;

  void StepGtrace();
  // Past options.max_tracks: the load's error (the load stops at the next check).
  Status TrackLimit() const {
    if (options.max_tracks == 0 || builder.impl_->tracks() <= options.max_tracks) return Status::Ok();
    return ResourceExhausted(
        "the trace has more than " + std::to_string(options.max_tracks) +
        " timeline tracks (threads, GPU streams and counters), the most this load may build");
  }
};

void TraceLoader::Impl::StepGtrace() {
  pending.clear();
  {
    detail::ScopedTime t(&timings.walk);
    reader.Walk(builder, std::max<uint32_t>(1, options.chunks_per_step), &pending);
  }
  const size_t n = pending.size();
  if (pool->size() == 1) {
    detail::ScopedTime t(&timings.route);
    for (const PendingChunk& c : pending)
      reader.Settle(c, TraceReader::Decode(c, builder, decoders[0]), builder);
  } else {
    routers.clear();
    routers.resize(n);
    decoded.assign(n, Status::Ok());
    {
      detail::ScopedTime t(&timings.route);
      pool->For(n, [&](size_t i, unsigned slot) {
        routers[i].SetHint(pending[i].record_count);
        decoded[i] = TraceReader::Decode(pending[i], routers[i], decoders[slot]);
      });
    }
    detail::ScopedTime t(&timings.merge);
    for (size_t i = 0; i < n; ++i) {
      // A chunk that failed while decoding keeps the records it delivered, as on one thread.
      builder.impl_->MergeChunk(std::move(routers[i]));
      reader.Settle(pending[i], decoded[i], builder);
    }
    routers.clear();
    if (builder.impl_->compact()) builder.impl_->Consolidate(*pool);
  }
  if (reader.done()) mode = Mode::kDone;
}

TraceLoader::TraceLoader() : impl_(std::make_unique<Impl>()) {}
TraceLoader::~TraceLoader() = default;

uint64_t ThreadedLoadPeak(DetectedFormat format, uint64_t text_bytes) {
  // What a load on threads allocates at its peak, beyond the input: per-chunk pieces of the events and the
  // lanes they are copied into, about twice the model (42 B/event against 23 on one thread,
  // docs/benchmarks.md, for .gtrace files of ~6.2 B/event: ~7x the file). JSON's model is far smaller than
  // its text (~1x the text at the peak with threads, the inflated text for gzip).
  return format == DetectedFormat::kGtrace ? text_bytes * 7 : text_bytes + text_bytes / 2;
}

Status TraceLoader::Open(std::span<const uint8_t> bytes, LoadOptions options) {
  Impl& I = *impl_;
  I.options = options;
  I.bytes = bytes;
  if (!options.spill_dir.empty()) {
    if (std::string why = column_storage::SpillDirProblem(options.spill_dir); !why.empty())
      return Status(StatusCode::kInvalidArgument, "spill folder: " + why);
    I.spill = std::make_unique<column_storage::SpillScope>(options.spill_dir);
  }
  DetectedFormat f = DetectFormat(bytes);
  const bool fast_json = options.json_parser == LoadOptions::JsonParser::kFast;
  uint64_t text_size = bytes.size();
  if (f == DetectedFormat::kGzip && fast_json) {
    // gzip of JSON streams into the parser; anything else is inflated whole below.
    I.fast_json = std::make_unique<json_import::FastJsonImport>(bytes, options.max_inflated_bytes, I.builder);
    GT_RETURN_IF_ERROR(I.fast_json->Prime());
    std::string_view head = I.fast_json->Head();
    if (DetectFormat(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(head.data()), head.size())) ==
        DetectedFormat::kJson) {
      f = DetectedFormat::kJson;
      I.gzip = true;
      // The gzip trailer holds the inflated size modulo 4 GiB: the estimate that decides on threads.
      if (bytes.size() >= 18) {
        const uint8_t* t = bytes.data() + bytes.size() - 4;
        text_size = std::max<uint64_t>(
            text_size, uint64_t(t[0]) | uint64_t(t[1]) << 8 | uint64_t(t[2]) << 16 | uint64_t(t[3]) << 24);
      }
    } else {
      I.fast_json.reset();
    }
  }
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
    text_size = I.bytes.size();
  }
  if (I.gzip_truncated) json_import::AddGzipTruncatedLoss(I.builder);
  // In a 32-bit address space a large input leaves no room for routing chunks on threads (their pieces and
  // the per-track arrays fragment wasm32's 4 GiB until a long array finds no room): it loads on one thread.
  // Elsewhere, likewise where the threaded load's peak would not fit in the memory free: one thread builds
  // the same model in the least memory.
  const bool scarce = (sizeof(void*) < 8 && text_size > (uint64_t{256} << 20)) ||
                      (options.threads != 1 &&
                       ThreadedLoadPeak(f, text_size) >
                           (options.memory_free ? options.memory_free : MemoryAvailableForModels()) / 4 * 3);
  I.pool = std::make_unique<detail::ThreadPool>(scarce ? 1 : options.threads);
  // Auto: one thread appends to one array per track anyway (compact costs it no extra pass and saves a
  // copy of every event in memory); threads keep per-chunk pieces.
  const bool compact = options.staging == LoadOptions::Staging::kCompact ||
                       (options.staging == LoadOptions::Staging::kAuto && I.pool->size() == 1);
  I.builder.impl_->SetCompact(compact);
  switch (f) {
    case DetectedFormat::kGtrace: {
      GT_RETURN_IF_ERROR(I.reader.Open(I.bytes));
      I.decoders.resize(I.pool->size());
      I.mode = Impl::Mode::kGtrace;
      I.is_gtrace = true;
      return Status::Ok();
    }
    case DetectedFormat::kJson:
      I.mode = Impl::Mode::kJson;
      if (fast_json && !I.fast_json) {
        std::string_view text(reinterpret_cast<const char*>(I.bytes.data()), I.bytes.size());
        I.fast_json = std::make_unique<json_import::FastJsonImport>(text, I.builder);
      }
      if (I.fast_json) I.fast_json->SetParallel(I.pool.get(), options.json_slice_bytes);
      return Status::Ok();
    case DetectedFormat::kNcuCsv:
      I.mode = Impl::Mode::kNcu;
      return Status::Ok();
    case DetectedFormat::kSqlite: {
      // Read and mapped at once: the tables arrive whole from SQLite, so there is nothing to step through.
      NsysTableReader read = GetNsysTableReader();
      if (!read)
        return Unsupported(
            "an SQLite database (Nsight Systems export?), but this build of gtrace has no SQLite reader");
      auto tables = read(I.bytes);
      if (!tables.ok()) return tables.status();
      TraceData data;
      GT_RETURN_IF_ERROR(MapNsysTables(*tables, &data));
      I.builder.SetFormat(SourceFormat::kNsysSqlite);
      ReplayTraceData(data, I.builder);
      I.mode = Impl::Mode::kDone;
      return Status::Ok();
    }
    default:
      return InvalidArgument(Describe(bytes));
  }
}

void TraceLoader::Step() {
  Impl& I = *impl_;
  switch (I.mode) {
    case Impl::Mode::kGtrace:
      I.StepGtrace();
      break;
    case Impl::Mode::kJson: {
      if (I.fast_json) {
        I.fast_json->Step(kJsonBytesPerStep);
        if (I.fast_json->done()) {
          I.json_status = I.fast_json->Finish();
          I.mode = Impl::Mode::kDone;
        }
        break;
      }
      std::string_view text(reinterpret_cast<const char*>(I.bytes.data()), I.bytes.size());
      I.json_status = ImportJsonReference(text, I.builder);
      I.mode = Impl::Mode::kDone;
      break;
    }
    case Impl::Mode::kNcu: {  // one step: a CSV of some hundred launches parses in milliseconds
      std::string_view text(reinterpret_cast<const char*>(I.bytes.data()), I.bytes.size());
      I.json_status = ImportNcuCsv(text, I.builder);  // the importer's status, whatever the format
      I.mode = Impl::Mode::kDone;
      break;
    }
    default:
      break;
  }
  if (I.mode != Impl::Mode::kNone && I.json_status.ok()) {
    if (Status s = I.TrackLimit(); !s.ok()) {
      I.json_status = std::move(s);  // the load's outcome, whatever the format
      I.mode = Impl::Mode::kDone;
    }
  }
}

bool TraceLoader::done() const {
  return impl_->mode == Impl::Mode::kDone || impl_->mode == Impl::Mode::kNone;
}

double TraceLoader::progress() const {
  switch (impl_->mode) {
    case Impl::Mode::kGtrace:
      return impl_->reader.progress();
    case Impl::Mode::kJson:
      return impl_->fast_json ? impl_->fast_json->progress() : 0.0;
    case Impl::Mode::kDone:
      return 1.0;
    default:
      return 0.0;
  }
}

TraceLoader::Progress TraceLoader::progress_detail() const {
  const Impl& I = *impl_;
  Progress p;
  // The bytes being read: the caller's, or the inflated text where a gzip was inflated whole up front.
  p.bytes_total = I.bytes.size();
  p.bytes_read = static_cast<uint64_t>(progress() * double(p.bytes_total));
  if (I.is_gtrace)
    p.records = I.reader.report().records;
  else if (I.fast_json)
    p.records = I.fast_json->events();
  return p;
}

StatusOr<std::unique_ptr<TraceModel>> TraceLoader::Finish() {
  Impl& I = *impl_;
  if (I.finished) return InvalidArgument("TraceLoader::Finish called twice");
  if (I.mode == Impl::Mode::kNone) return InvalidArgument("TraceLoader: Open failed or was not called");
  while (!done()) Step();
  I.finished = true;
  if (!I.json_status.ok()) return I.json_status;
  GT_RETURN_IF_ERROR(I.TrackLimit());  // formats read whole in Open (nsys SQLite) come here directly
  LoadReport report = I.is_gtrace ? I.reader.report() : LoadReport{};
  report.bytes_total =
      std::max<uint64_t>(report.bytes_total, I.fast_json ? I.fast_json->text_bytes() : I.bytes.size());
  I.builder.SetReport(report);
  I.builder.impl_->timings = &I.timings;
  return I.builder.impl_->Finish(I.pool.get());
}

uint32_t TraceLoader::threads() const {
  return impl_->pool ? uint32_t(impl_->pool->size()) : 0;
}

const LoadTimings& TraceLoader::timings() const {
  return impl_->timings;
}

StatusOr<std::unique_ptr<TraceModel>> LoadTrace(std::span<const uint8_t> bytes, LoadOptions options) {
  TraceLoader loader;
  GT_RETURN_IF_ERROR(loader.Open(bytes, options));
  while (!loader.done()) loader.Step();
  return loader.Finish();
}

StatusOr<std::unique_ptr<TraceModel>> LoadTraceFile(const std::string& path, LoadOptions options) {
  auto bytes = ReadTraceOrParts(path);  // a NAME.gtrace.parts folder opens as the trace it would recover to
  if (!bytes.ok()) return bytes.status();
  const std::string& b = bytes.value();
  return LoadTrace(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(b.data()), b.size()), options);
}

}  // namespace gt::viewer

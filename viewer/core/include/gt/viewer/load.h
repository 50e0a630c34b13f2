// Opening traces: .gtrace, Chrome trace JSON, PyTorch profiler (Kineto) JSON, Nsight Compute CSV (ncu --csv
// --page raw: the profiled launches and their counters, gt/viewer/ncu.h), each plain or gzipped, and Nsight
// Systems SQLite exports (through the reader registered in gt/viewer/nsys.h). The format is sniffed from the
// content (gzip magic, .gtrace magic, '{' / '[', "SQLite format 3", ncu's header), never from the file name.
//
// A partly damaged file loads what could be read; what was lost lands in TraceModel::losses / report.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "gt/status.h"
#include "gt/viewer/builder.h"
#include "gt/viewer/model.h"

namespace gt::viewer {

enum class DetectedFormat : uint8_t { kUnknown = 0, kGzip, kGtrace, kJson, kSqlite, kNcuCsv = 10 };
DetectedFormat DetectFormat(std::span<const uint8_t> bytes);
// Bytes a load on threads allocates at its peak for an input of `text_bytes` (inflated) in `format`, beyond
// the input itself: where it does not fit, the load runs on one thread (LoadOptions::threads).
uint64_t ThreadedLoadPeak(DetectedFormat format, uint64_t text_bytes);

struct LoadOptions {
  uint64_t max_inflated_bytes = 4ull << 30;  // gzip bomb guard
  uint32_t chunks_per_step = 16;             // .gtrace chunks decoded per Step()
  // Threads that load (decode .gtrace chunks and route their records, then build lanes in Finish): 1 = the
  // calling thread only, 0 = one per hardware thread. The model is the same for any value. Always 1 in
  // builds without threads (wasm without pthreads), for inputs over 256 MB in 32-bit builds (wasm32's 4 GiB
  // hold one such load only as compact staging on one thread), and where the threaded load's peak
  // (ThreadedLoadPeak) would not fit in three quarters of the memory free (MemoryAvailableForModels).
  uint32_t threads = 1;
  uint64_t memory_free = 0;  // for that decision; 0: MemoryAvailableForModels() (tests give a number)
  // How events wait for Finish: in pieces of bounded size (per chunk with threads), each copied once into
  // its lane (at the peak about twice the model's memory), or compact: one growing array per track (more
  // copying, less memory at the peak). Auto: compact on one thread, pieces on more. The model is the same
  // either way.
  enum class Staging : uint8_t { kAuto, kPieces, kCompact };
  Staging staging = Staging::kAuto;
  // JSON front end: the streaming parser (kFast; gzip is inflated piece by piece as it parses) or nlohmann's
  // SAX parser over the whole inflated text (kReference: the baseline of tests and benchmarks). The model is
  // the same either way.
  enum class JsonParser : uint8_t { kFast, kReference };
  JsonParser json_parser = JsonParser::kFast;
  // With threads, the fast front end parses the event array in slices of about this many bytes (0: its
  // default; gzip inflates the next round's text while one is parsed). Tests and the fuzzer make them tiny
  // so that every input crosses slice edges.
  uint32_t json_slice_bytes = 0;
  // A folder where the model's long columns are files rather than memory while this load runs
  // (column_storage::SpillScope): a model bigger than the machine's memory pages through the disk. Empty:
  // memory. Index builds choose the index's folder by themselves when the trace would not fit
  // (OpenOrBuildIndex).
  std::string spill_dir;
  // Timeline tracks (threads, GPU streams, counters) past which the load stops with kResourceExhausted; 0:
  // no limit. A track costs memory however few events it holds (about 2.4 KB while a JSON trace loads), so a
  // small upload of one event per thread would cost a server far more than its size: gtrace serve sets this.
  uint32_t max_tracks = 0;
};

// Where a load's wall time went, in seconds (benchmarks; the phases are described in docs/architecture.md).
struct LoadTimings {
  double walk = 0;     // Steps: chunk headers, checksums, strings (calling thread)
  double route = 0;    // Steps: decoding chunks and routing their records (on the threads)
  double merge = 0;    // Steps: routed chunks merged in file order (calling thread)
  double lanes = 0;    // Finish: pieces -> lanes (threads)
  double lod = 0;      // Finish: LOD pyramids and name counts (threads)
  double devices = 0;  // Finish: per-device summaries (threads)
  double other = 0;    // Finish: the rest (track order, counters, flows; mostly the calling thread)
};

// Incremental loading so the UI can draw a progress bar:
//   TraceLoader l; status = l.Open(bytes); while (!l.done()) { l.Step(); draw(l.progress()); } model =
//   l.Finish();
// The bytes must outlive the loader (a gzip input is inflated into a buffer the loader owns).
class TraceLoader {
 public:
  TraceLoader();
  ~TraceLoader();
  // Fails when the bytes are no supported format (with a message that says what they look like), or when a
  // gzip stream is corrupt before any byte could be inflated.
  Status Open(std::span<const uint8_t> bytes, LoadOptions options = {});
  void Step();
  bool done() const;
  double progress() const;  // 0..1
  // What the bar stands for: input bytes consumed (of a gzip, compressed bytes) and records (.gtrace) or
  // events (JSON) read so far. Once done(), Finish() still builds lanes, LOD and summaries: a UI says so
  // rather than show a full bar that does not move.
  struct Progress {
    uint64_t bytes_read = 0, bytes_total = 0;
    uint64_t records = 0;
  };
  Progress progress_detail() const;
  // Builds the model. Fails only when nothing at all could be read (e.g. JSON that is not a trace).
  StatusOr<std::unique_ptr<TraceModel>> Finish();
  const LoadTimings& timings() const;
  // What the load runs on (after Open): LoadOptions::threads, or 1 where it fell back.
  uint32_t threads() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// One call: Open + Step until done + Finish.
StatusOr<std::unique_ptr<TraceModel>> LoadTrace(std::span<const uint8_t> bytes, LoadOptions options = {});
StatusOr<std::unique_ptr<TraceModel>> LoadTraceFile(const std::string& path, LoadOptions options = {});

// Inflates a gzip (or zlib) stream. Truncated streams return what was inflated and set *truncated.
StatusOr<std::string> Gunzip(std::span<const uint8_t> bytes, uint64_t max_bytes, bool* truncated);

// Parses Chrome trace JSON or Kineto JSON (object with "traceEvents", or a bare event array) into `builder`.
// Malformed events are skipped and counted (AddLoss); a document that is not JSON or has no events fails.
Status ImportJson(std::string_view text, ModelBuilder& builder);
// The same through nlohmann's SAX parser (the reference the fast parser is tested against).
Status ImportJsonReference(std::string_view text, ModelBuilder& builder);

}  // namespace gt::viewer

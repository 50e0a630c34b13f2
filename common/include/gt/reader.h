// .gtrace reader: validates every byte, never reads out of bounds, and from a damaged or truncated file
// delivers every intact chunk and reports what was lost.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gt/model.h"
#include "gt/status.h"

namespace gt {

// Receives decoded records chunk by chunk. String ids in records are already global (see model.h).
// OnStrings always arrives before any record that references those ids, unless a strings chunk was lost; then
// the ids resolve to nothing and the consumer shows a placeholder.
class TraceSink {
 public:
  virtual ~TraceSink() = default;
  virtual void OnMetadata(const TraceMetadata& m) {}
  virtual void OnStrings(StringId first_id, std::span<const std::string_view> strings) {}
  // One method per record type: OnProcesses(std::span<const ProcessRecord>), OnKernels(...), ... (model.h).
#define GT_SINK_METHOD(R, Method, field) \
  virtual void Method(std::span<const R> r) {}
  GT_FOR_EACH_RECORD_TYPE(GT_SINK_METHOD)
#undef GT_SINK_METHOD
};

// What a read saw. A file with lost chunks still loads; the loss is reported here and, for consumers that
// show it, as LossRecords named "chunk_lost" / "file_truncated" delivered through the sink.
struct LoadReport {
  uint16_t version_major = 0, version_minor = 0;
  uint32_t segments = 0;
  uint64_t chunks_ok = 0;
  uint64_t chunks_lost = 0;     // checksum, decode or bounds failures
  uint64_t chunks_unknown = 0;  // skipped: a newer writer's chunk type
  uint64_t records = 0;
  uint64_t bytes_total = 0;
  uint64_t bytes_lost = 0;
  bool truncated = false;             // ended inside a chunk, or without an end-of-segment marker
  std::vector<std::string> problems;  // human-readable, first 100
  bool clean() const { return chunks_lost == 0 && !truncated; }
};

// A record chunk that TraceReader::Walk found but did not decode, or a loss the walk found between chunks
// (kept in its place so that Settle delivers losses and records in file order). The fields are the reader's
// (where the chunk is and how to decode it); consumers read `type` and `record_count`. Valid until the next
// Walk() or Step().
struct PendingChunk {
  bool is_loss = false;  // not a chunk: `loss`, delivered by Settle
  LossRecord loss;
  uint16_t type = 0;  // RecordKind of its records
  uint16_t flags = 0;
  uint32_t record_count = 0;
  uint32_t raw_size = 0, stored_size = 0;
  const uint8_t* payload = nullptr;
  uint64_t offset = 0, end = 0;  // the chunk's bytes in the file
  uint16_t version_major = 0, version_minor = 0;
  const StringId* string_map = nullptr;  // the segment's string ids defined before the chunk
  uint64_t string_map_size = 0;
  const uint8_t* file_end = nullptr;
};

// Incremental reading, so a UI can show progress: Open(), then Step() until done().
class TraceReader {
 public:
  TraceReader();
  ~TraceReader();
  // Fails only when the bytes are not a .gtrace at all (bad magic) or of an unsupported major version.
  // The bytes must outlive the reader.
  Status Open(std::span<const uint8_t> bytes);
  // Decodes up to `max_chunks` chunks into `sink`. Bad chunks are recorded in the report and skipped.
  void Step(TraceSink& sink, uint32_t max_chunks);
  // Threads that decode chunks (1, the default: the calling thread only; 0: one per hardware thread). With
  // more than one, each Step decodes its record chunks in parallel and still delivers them in file order,
  // from the calling thread; the sink needs no locking. Builds without threads (wasm) always use 1.
  void SetThreads(unsigned threads);
  bool done() const;
  double progress() const;  // 0..1 by bytes
  const LoadReport& report() const;

  // Split reading, for consumers that decode record chunks on threads of their own (the viewer routes each
  // chunk's records into per-chunk structures in parallel). Walk() visits up to `max_chunks` chunks like
  // Step(): metadata, strings and losses go to `sink` in file order, record chunks are appended to *pending
  // undecoded. It stops before a segment header once *pending is not empty (a segment's chunks share one
  // string map). Decode every pending chunk with Decode() (any thread; one Decoder per thread at a time),
  // then Settle() each one in file order, before the next Walk() or Step(). The same sequence of Walk() calls
  // gives the same sink calls whatever the threads, so a consumer's result does not depend on them.
  class Decoder {
   public:
    Decoder();
    ~Decoder();
    Decoder(Decoder&&) noexcept;
    Decoder& operator=(Decoder&&) noexcept;

   private:
    friend class TraceReader;
    struct State;
    std::unique_ptr<State> state_;
  };
  void Walk(TraceSink& sink, uint32_t max_chunks, std::vector<PendingChunk>* pending);
  // Decodes one pending chunk's records into `sink` (nothing for a loss entry). A chunk whose columns turn
  // out malformed while decoding (only a broken writer produces one) may have delivered some of its records
  // before the error.
  static Status Decode(const PendingChunk& chunk, TraceSink& sink, Decoder& decoder);
  // Counts a decoded chunk in the report, or, when `decoded` failed, reports it lost (a "chunk_lost" loss
  // record through `sink`, as Step() does). A loss entry is delivered to `sink`.
  void Settle(const PendingChunk& chunk, const Status& decoded, TraceSink& sink);

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Reads everything. Returns an error only when nothing could be read (not a .gtrace, unsupported version).
StatusOr<LoadReport> ReadTrace(std::span<const uint8_t> bytes, TraceSink& sink);
// The same with `threads` decoding threads (see TraceReader::SetThreads).
StatusOr<LoadReport> ReadTrace(std::span<const uint8_t> bytes, TraceSink& sink, unsigned threads);
// "1.1": the format version this build writes (and the newest it reads).
std::string FormatVersionString();

// True when the bytes start with the .gtrace magic (format sniffing for importers and the server).
bool LooksLikeGtrace(std::span<const uint8_t> bytes);

// Reads a whole file into memory with a clear error (missing, unreadable, too large).
StatusOr<std::string> ReadFileBytes(const std::string& path, uint64_t max_bytes = UINT64_MAX);

}  // namespace gt

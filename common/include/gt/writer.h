// Streaming .gtrace writer: bounded memory, one chunk per record kind flushed when full or on Flush().
// A crash loses at most the records not yet flushed (the collector flushes about once a second).
// Not thread-safe: the caller serializes (the collector holds one mutex around it).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "gt/model.h"
#include "gt/status.h"

namespace gt {

// Where encoded bytes go. Write() must write all or fail.
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual Status Write(std::span<const uint8_t> bytes) = 0;
  virtual Status Sync() { return Status::Ok(); }  // push to the OS (file sinks: fdatasync optional)
};

// Appends to a std::string (tests, in-memory traces).
std::unique_ptr<ByteSink> MakeStringSink(std::string* out);
// Creates `path` exclusively (O_EXCL unless overwrite) and writes to it.
StatusOr<std::unique_ptr<ByteSink>> MakeFileSink(const std::string& path, bool overwrite);
// Writes to an already open file descriptor (owned).
std::unique_ptr<ByteSink> MakeFdSink(int fd);

struct WriterOptions {
  uint32_t max_records_per_chunk = 64 * 1024;  // a chunk is flushed when one kind reaches this many records
  int zstd_level = 1;                          // speed matters more than the last few percent of size
};

class TraceWriter {
 public:
  // Writes the file header immediately.
  static StatusOr<std::unique_ptr<TraceWriter>> Create(std::unique_ptr<ByteSink> sink, WriterOptions options = {});
  ~TraceWriter();

  // Interning is idempotent: the same text yields the same id within this writer. 0 is "".
  StringId Intern(std::string_view text);

  void SetMetadata(const TraceMetadata& metadata);  // written at the next Flush(); may be called again
  // One Add per record type (GT_FOR_EACH_RECORD_TYPE in model.h).
#define GT_WRITER_ADD(R, Method, field) void Add(const R& r);
  GT_FOR_EACH_RECORD_TYPE(GT_WRITER_ADD)
#undef GT_WRITER_ADD

  // Encodes every pending record (strings first) and hands the bytes to the sink.
  Status Flush();
  // Flush + end-of-segment marker. Further Add() calls are bugs.
  Status Finish();

  uint64_t bytes_written() const;
  uint64_t records_written() const;
  uint64_t records_lost() const;  // records dropped because the sink failed (see sticky_error)
  // First error from the sink, sticky: once the sink fails, records are counted as lost, not buffered forever.
  const Status& sticky_error() const;

  class Impl;

 private:
  explicit TraceWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gt

// One gzip/zlib inflater for the viewer's imports (the whole-file Gunzip and the JSON parser's streaming
// window), so that both read the same text out of the same bytes, damaged or not. Natively ISA-L's igzip
// where the machine has it (libisal.so.2, opened at run time: a binary copied to a machine without it
// inflates with zlib; igzip is several times zlib's speed on JSON: docs/benchmarks.md, 2026-11-28), else
// zlib; zlib in wasm.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "gt/status.h"

namespace gt::viewer::detail {

class Inflater {
 public:
  enum class Backend : uint8_t { kFastest, kZlib };  // kZlib: tests hold the two to one contract
  // More than `max_bytes` of text fails the stream (ResourceExhausted): the gzip bomb guard.
  explicit Inflater(std::span<const uint8_t> in, uint64_t max_bytes = UINT64_MAX,
                    Backend backend = Backend::kFastest);
  ~Inflater();
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;

  // Inflates into out[0, room) and returns the bytes written; call again until done(). Concatenated members
  // are one text (what `cat a.gz b.gz` makes); each may be gzip or zlib-wrapped.
  size_t Read(char* out, size_t room);
  bool done() const { return done_; }
  // The stream ends early or is damaged after some text: what came before the damage is kept.
  bool truncated() const { return truncated_; }
  // Corrupt when damaged before any text; ResourceExhausted past max_bytes; Internal when the inflater could
  // not start.
  const Status& status() const { return status_; }
  uint64_t consumed() const;  // input bytes read so far
  uint64_t produced() const { return produced_; }
  const char* backend() const;  // "isa-l" or "zlib"

 private:
  struct State;
  std::unique_ptr<State> state_;
  std::span<const uint8_t> in_;
  uint64_t max_ = 0;
  uint64_t produced_ = 0;
  bool done_ = false, truncated_ = false;
  Status status_ = Status::Ok();
  void Fail(const char* what);
};

}  // namespace gt::viewer::detail

// A TraceSink that writes what it receives through a TraceWriter: lets the synthetic generator produce real
// .gtrace bytes (tests and the load benchmark).
#pragma once

#include <memory>
#include <string>

#include "gt/reader.h"
#include "gt/writer.h"

namespace gt::synth {

class WriterSink : public TraceSink {
 public:
  explicit WriterSink(TraceWriter& w) : w_(w) {}
  void OnStrings(StringId first_id, std::span<const std::string_view> s) override {
    for (size_t i = 0; i < s.size(); ++i) {
      if (first_id + i == 0) continue;
      StringId id = w_.Intern(s[i]);
      ok_ &= id == first_id + i;  // the generator's ids must be the writer's
    }
  }
#define GT_WRITE_ALL(R, Method, field)         \
  void Method(std::span<const R> r) override { \
    AddAll(r);                                 \
  }
  GT_FOR_EACH_RECORD_TYPE(GT_WRITE_ALL)
#undef GT_WRITE_ALL
  bool ok() const {
    return ok_;
  }

 private:
  template <typename T>
  void AddAll(std::span<const T> r) {
    for (const auto& x : r) w_.Add(x);
  }
  TraceWriter& w_;
  bool ok_ = true;
};

}  // namespace gt::synth

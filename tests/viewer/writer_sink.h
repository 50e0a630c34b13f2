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
  void OnProcesses(std::span<const ProcessRecord> r) override { AddAll(r); }
  void OnThreads(std::span<const ThreadRecord> r) override { AddAll(r); }
  void OnDevices(std::span<const DeviceRecord> r) override { AddAll(r); }
  void OnStreams(std::span<const StreamRecord> r) override { AddAll(r); }
  void OnKernels(std::span<const KernelRecord> r) override { AddAll(r); }
  void OnMemcpys(std::span<const MemcpyRecord> r) override { AddAll(r); }
  void OnMemsets(std::span<const MemsetRecord> r) override { AddAll(r); }
  void OnApiCalls(std::span<const ApiCallRecord> r) override { AddAll(r); }
  void OnNvtx(std::span<const NvtxRecord> r) override { AddAll(r); }
  void OnCounterDescriptors(std::span<const CounterDescriptor> r) override { AddAll(r); }
  void OnCounterSamples(std::span<const CounterSample> r) override { AddAll(r); }
  bool ok() const { return ok_; }

 private:
  template <typename T>
  void AddAll(std::span<const T> r) {
    for (const auto& x : r) w_.Add(x);
  }
  TraceWriter& w_;
  bool ok_ = true;
};

}  // namespace gt::synth

// libFuzzer target for the .gtrace reader: any bytes must load without crash, overrun or unbounded
// allocation, and whatever loaded must re-encode and re-read to the same record counts.
#include <cstdint>
#include <string>

#include "gt/trace_data.h"

namespace {

// The re-encode round trip (writer + zstd compression + a second read) costs far more than reading: run on
// every input it held this target near 200 exec/s, so the reader's own checks got few executions. It runs on
// a deterministic sample instead -- every input under 512 bytes (where most structure-level mutations live)
// and 1 in 64 of the rest, picked by a hash of the bytes so a reproducer always takes the same path.
bool RoundTripSample(const uint8_t* data, size_t size) {
  if (size < 512) return true;
  uint64_t h = 1469598103934665603ull;  // FNV-1a over at most 256 bytes from each end: cheap on big inputs
  auto mix = [&](size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) h = (h ^ data[i]) * 1099511628211ull;
  };
  mix(0, 256);
  mix(size - 256, size);
  h ^= size;
  h *= 1099511628211ull;
  return (h >> 32) % 64 == 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gt::TraceData first;
  auto report = gt::ReadTrace({data, size}, first);
  if (!report.ok()) return 0;
  GT_ASSERT(report->bytes_lost <= size);
  GT_ASSERT(report->clean() || !report->problems.empty());

  // Incremental reading must see the same thing as one-shot reading.
  gt::TraceData stepped;
  gt::TraceReader reader;
  GT_ASSERT(reader.Open({data, size}).ok());
  while (!reader.done()) reader.Step(stepped, 1);
  GT_ASSERT(stepped.EventCount() == first.EventCount());
  GT_ASSERT(reader.report().records == report->records);

#if GT_HAVE_ZSTD_COMPRESS
  if (!RoundTripSample(data, size)) return 0;
  std::string bytes;
  auto writer = gt::TraceWriter::Create(gt::MakeStringSink(&bytes));
  GT_ASSERT(writer.ok());
  GT_ASSERT(gt::WriteTraceData(first, **writer).ok());
  GT_ASSERT((*writer)->Finish().ok());
  gt::TraceData second;
  auto again = gt::ReadTrace({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, second);
  GT_ASSERT(again.ok() && again->clean());
  GT_ASSERT(second.EventCount() == first.EventCount());
  GT_ASSERT(second.kernel_metrics.size() == first.kernel_metrics.size());
  GT_ASSERT(second.losses.size() == first.losses.size());
#endif
  return 0;
}

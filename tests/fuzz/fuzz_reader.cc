// libFuzzer target for the .gtrace reader: any bytes must load without crash, overrun or unbounded
// allocation, and whatever loaded must re-encode and re-read to the same record counts.
#include <cstdint>
#include <string>

#include "gt/trace_data.h"

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

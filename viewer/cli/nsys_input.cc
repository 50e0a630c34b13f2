#include "nsys_input.h"

#include "gt/nsys/sqlite_reader.h"
#include "gt/viewer/nsys.h"

namespace gt::cli {

StatusOr<LoadReport> ReadTraceOrNsys(std::span<const uint8_t> bytes, TraceData& data) {
  if (!viewer::LooksLikeSqlite(bytes)) return ReadTrace(bytes, data);
  auto tables = nsys::ReadNsysSqlite(bytes);
  if (!tables.ok()) return tables.status();
  GT_RETURN_IF_ERROR(viewer::MapNsysTables(*tables, &data));
  LoadReport report;
  report.bytes_total = bytes.size();
  return report;
}

}  // namespace gt::cli

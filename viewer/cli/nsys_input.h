// The CLI's raw-record commands (info, export --chrome/--gtrace) read Nsight Systems SQLite exports as well
// as .gtrace: the viewer core maps the nsys tables onto the same records a gcollect trace holds.
#pragma once

#include <cstdint>
#include <span>

#include "gt/reader.h"
#include "gt/status.h"
#include "gt/trace_data.h"

namespace gt::cli {

// .gtrace -> ReadTrace; SQLite content (sniffed, never by name) -> the nsys import. The report of an nsys
// import is clean: its dropped rows are LossRecords in `data`.
StatusOr<LoadReport> ReadTraceOrNsys(std::span<const uint8_t> bytes, TraceData& data);

}  // namespace gt::cli

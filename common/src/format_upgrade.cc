// The one place that interprets format version numbers.
//
// How to evolve the format:
//  - Appending a column to a record kind, or adding a chunk type, is a *minor* bump (kVersionMinor): old
//    readers ignore the extra column / skip the unknown chunk type. Add a row to kAppended below so that a
//    segment of an older minor reads with the new fields at their defaults.
//  - Changing the meaning or encoding of an existing column, or the header layout, is a *major* bump: old
//    readers refuse the segment with a clear message; add the conversion for the old major here.
#include <string>

#include "format.h"
#include "gt/index_format.h"

namespace gt::format {
namespace {

// Columns appended to a record kind by a minor version, with the raw column value (as a repeat column holds
// it: zigzag for signed fields, the id for strings) that decodes to each new field's default.
struct AppendedColumns {
  RecordKind kind;
  uint16_t minor;         // the minor that added them
  uint32_t first_column;  // their index: the kind's column count before that minor
  uint32_t count;
  uint64_t raw_default[8];
};
constexpr AppendedColumns kAppended[] = {
    // 1.1: host, boot_id, job (strings: 0 = ""), rank, local_rank (-1), world_size (0).
    {RecordKind::kProcess, 1, 8, 6, {0, 0, 0, Zig(-1), Zig(-1), Zig(0)}},
    // 1.2 added a chunk type (nvtx_arg, decoded NVTX payload fields) and no columns: older segments have no
    // such chunks, so there is nothing to fill; a 1.1 reader skips them as an unknown type.
    // 1.3 added two chunk types (nccl_coll, nccl_channel: NCCL's profiler plugin) and no columns, likewise.
    // 1.4 added two chunk types (cpu_stack_node, cpu_sample: sampled CPU stacks) and no columns, likewise.
};

}  // namespace

Status CheckSegmentVersion(SegmentVersion v) {
  if (v.major == kVersionMajor) return Status::Ok();
  if (v.major > kVersionMajor)
    return Unsupported("trace format version " + std::to_string(v.major) + "." + std::to_string(v.minor) +
                       " is newer than this build understands (" + std::to_string(kVersionMajor) + "." +
                       std::to_string(kVersionMinor) + "); upgrade gtrace to read it");
  return Unsupported("trace format version " + std::to_string(v.major) + "." + std::to_string(v.minor) +
                     " predates format 1 and is not supported");
}

Status UpgradeRecordColumns(SegmentVersion v, RecordKind kind, uint32_t expected, uint32_t record_count,
                            ColumnReader* columns, uint32_t* column_count, ByteBuf* defaults) {
  (void)record_count, (void)defaults;  // synthesized columns are repeat columns: no bytes needed
  for (const AppendedColumns& a : kAppended) {
    if (a.kind != kind || v.minor >= a.minor || *column_count != a.first_column) continue;
    GT_ASSERT(a.first_column + a.count <= expected);
    for (uint32_t i = 0; i < a.count; ++i) {
      ColumnReader& c = columns[a.first_column + i];
      c = ColumnReader{};
      c.repeat = true;
      c.repeat_next = c.repeat_rest = a.raw_default[i];
    }
    *column_count = a.first_column + a.count;
  }
  if (*column_count < expected)
    return Corrupt(std::string(RecordKindName(kind)) + " chunk has " + std::to_string(*column_count) +
                   " columns; format " + std::to_string(v.major) + "." + std::to_string(v.minor) + " has " +
                   std::to_string(expected));
  *column_count = expected;  // a newer minor's extra columns: ignored
  return Status::Ok();
}

}  // namespace gt::format

namespace gt {
IndexVersion CurrentIndexVersion() {
  return {format::kIndexVersionMajor, format::kIndexVersionMinor};
}

// An index is a cache of what the viewer builds from a trace: rebuilding it is cheaper and safer than
// converting one, so only this build's exact version is used.
Status CheckIndexVersion(IndexVersion v) {
  if (v.major == format::kIndexVersionMajor && v.minor == format::kIndexVersionMinor) return Status::Ok();
  return Unsupported("stale: index version " + std::to_string(v.major) + "." + std::to_string(v.minor) +
                     ", this build writes " + std::to_string(format::kIndexVersionMajor) + "." +
                     std::to_string(format::kIndexVersionMinor));
}

uint32_t Crc32c(uint32_t crc, const void* data, size_t n) {
  return format::Crc32c(crc, data, n);
}

std::string FormatVersionString() {
  return std::to_string(format::kVersionMajor) + "." + std::to_string(format::kVersionMinor);
}
}  // namespace gt

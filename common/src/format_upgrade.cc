// The one place that interprets format version numbers.
//
// How to evolve the format:
//  - Appending a column to a record kind, or adding a chunk type, is a *minor* bump (kVersionMinor): old
//  readers
//    ignore the extra column / skip the unknown chunk type. Teach UpgradeRecordColumns() to synthesize the
//    new column (with the field's default) when it reads a segment of an older minor.
//  - Changing the meaning or encoding of an existing column, or the header layout, is a *major* bump: old
//  readers
//    refuse the segment with a clear message; add the conversion for the old major here.
#include <string>

#include "format.h"

namespace gt::format {

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
  (void)v, (void)record_count, (void)defaults, (void)columns;  // v1.0 is the only layout so far.
  if (*column_count < expected)
    return Corrupt(std::string(RecordKindName(kind)) + " chunk has " + std::to_string(*column_count) +
                   " columns; format " + std::to_string(v.major) + "." + std::to_string(v.minor) + " has " +
                   std::to_string(expected));
  *column_count = expected;  // a newer minor's extra columns: ignored
  return Status::Ok();
}

}  // namespace gt::format

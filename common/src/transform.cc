#include "gt/transform.h"

#include "schema.h"

namespace gt {
namespace {

// One pass over a record's fields through the schema: timestamps onto the new clock, string ids past the
// base. Process ids are named fields, handled after the pass.
struct FieldMover : schema::PassFields {
  const ClockMap& clock;
  StringId base;
  StringId* max_id;
  FieldMover(const ClockMap& c, StringId b, StringId* m) : clock(c), base(b), max_id(m) {}
  void Ts(int64_t& t) { t = clock.Apply(t); }
  void Dur(int64_t& end, const int64_t&) { end = clock.Apply(end); }
  void Str(StringId& id) {
    if (id == 0) return;
    id += base;
    if (id > *max_id) *max_id = id;
  }
};

}  // namespace

TransformSink::TransformSink(TraceSink& next, const RecordTransform& transform) : next_(next), t_(transform) {
  const std::string_view fill[kReservedIds] = {t_.fill_host, t_.fill_boot_id};
  next_.OnStrings(t_.string_base + 1, std::span<const std::string_view>(fill, kReservedIds));
  max_string_id_ = t_.string_base + kReservedIds;
}

template <class R>
std::vector<R> TransformSink::Transform(std::span<const R> in) {
  std::vector<R> out(in.size());  // one allocation per batch of up to 2048 records
  FieldMover mover{t_.clock, t_.string_base + kReservedIds, &max_string_id_};
  for (size_t i = 0; i < in.size(); ++i) {
    R r = in[i];
    if constexpr (std::is_same_v<R, ProcessRecord>) {
      const int64_t start = r.start_ns, end = r.end_ns;
      schema::Visit(mover, r);
      if (start == 0) r.start_ns = 0;
      if (end == 0) r.end_ns = 0;
      if (r.parent_pid != 0) r.parent_pid = t_.Pid(r.parent_pid);
      if (r.host == 0 && !t_.fill_host.empty()) r.host = t_.string_base + 1;
      if (r.boot_id == 0 && !t_.fill_boot_id.empty()) r.boot_id = t_.string_base + 2;
    } else {
      schema::Visit(mover, r);
    }
    if constexpr (requires { r.pid; }) r.pid = t_.Pid(r.pid);
    if constexpr (requires { r.device_id; })
      if (r.device_id != kNone) r.device_id += t_.device_base;
    if constexpr (requires { r.peer_device_id; })
      if (r.peer_device_id != kNone) r.peer_device_id += t_.device_base;
    out[i] = r;
  }
  return out;
}

void TransformSink::OnMetadata(const TraceMetadata& m) {
  TraceMetadata moved = m;
  for (auto& c : moved.clock_syncs) c.trace_ns = t_.clock.Apply(c.trace_ns);
  next_.OnMetadata(moved);
}
void TransformSink::OnStrings(StringId first_id, std::span<const std::string_view> strings) {
  const StringId first = first_id + t_.string_base + kReservedIds;
  if (!strings.empty() && first + strings.size() - 1 > max_string_id_)
    max_string_id_ = first + StringId(strings.size()) - 1;
  next_.OnStrings(first, strings);
}

#define GT_FORWARD(R, Method, field)                 \
  void TransformSink::Method(std::span<const R> r) { \
    const auto moved = Transform(r);                 \
    next_.Method(std::span<const R>(moved));         \
  }
GT_FOR_EACH_RECORD_TYPE(GT_FORWARD)
#undef GT_FORWARD

}  // namespace gt

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
  const std::vector<StringId>* local = nullptr;  // with an interner: input id -> shared id
  FieldMover(const ClockMap& c, StringId b, StringId* m, const std::vector<StringId>* l)
      : clock(c), base(b), max_id(m), local(l) {}
  void Ts(int64_t& t) { t = clock.Apply(t); }
  void Dur(int64_t& end, const int64_t&) { end = clock.Apply(end); }
  void Str(StringId& id) {
    if (id == 0) return;
    if (local) {  // the reader checked the id against the strings it delivered, which local_ holds
      id = id < local->size() ? (*local)[id] : 0;
      return;
    }
    id += base;
    if (id > *max_id) *max_id = id;
  }
};

}  // namespace

StringId StringInterner::Intern(std::string_view text, bool* added) {
  *added = false;
  if (text.empty()) return 0;
  auto [it, inserted] = ids_.try_emplace(std::string(text), next_);
  if (inserted) {
    *added = true;
    texts_.push_back(it->first);
    ++next_;
  }
  return it->second;
}

TransformSink::TransformSink(TraceSink& next, const RecordTransform& transform) : next_(next), t_(transform) {
  if (t_.interner) {
    const std::string* fill[kReservedIds] = {&t_.fill_host, &t_.fill_boot_id};
    for (StringId i = 0; i < kReservedIds; ++i) {
      bool added = false;
      fill_ids_[i] = t_.interner->Intern(*fill[i], &added);
      if (added) {
        const std::string_view text = t_.interner->Text(fill_ids_[i]);
        next_.OnStrings(fill_ids_[i], std::span<const std::string_view>(&text, 1));
      }
    }
    max_string_id_ = t_.interner->max_id();
    return;
  }
  fill_ids_[0] = t_.string_base + 1, fill_ids_[1] = t_.string_base + 2;
  const std::string_view fill[kReservedIds] = {t_.fill_host, t_.fill_boot_id};
  next_.OnStrings(t_.string_base + 1, std::span<const std::string_view>(fill, kReservedIds));
  max_string_id_ = t_.string_base + kReservedIds;
}

template <class R>
std::vector<R> TransformSink::Transform(std::span<const R> in) {
  std::vector<R> out(in.size());  // one allocation per batch of up to 2048 records
  FieldMover mover{t_.clock, t_.string_base + kReservedIds, &max_string_id_, t_.interner ? &local_ : nullptr};
  for (size_t i = 0; i < in.size(); ++i) {
    R r = in[i];
    if constexpr (std::is_same_v<R, ProcessRecord>) {
      const int64_t start = r.start_ns, end = r.end_ns;
      schema::Visit(mover, r);
      if (start == 0) r.start_ns = 0;
      if (end == 0) r.end_ns = 0;
      if (r.parent_pid != 0) r.parent_pid = t_.Pid(r.parent_pid);
      if (r.host == 0 && !t_.fill_host.empty()) r.host = fill_ids_[0];
      if (r.boot_id == 0 && !t_.fill_boot_id.empty()) r.boot_id = fill_ids_[1];
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
  if (t_.interner) {
    // New texts get consecutive shared ids, so they go on in one call; texts seen before only map.
    if (local_.size() < size_t{first_id} + strings.size())
      local_.resize(size_t{first_id} + strings.size(), 0);
    std::vector<std::string_view> added_texts;
    StringId first_added = 0;
    for (size_t i = 0; i < strings.size(); ++i) {
      bool added = false;
      const StringId id = t_.interner->Intern(strings[i], &added);
      local_[first_id + i] = id;
      if (!added) continue;
      if (added_texts.empty()) first_added = id;
      added_texts.push_back(t_.interner->Text(id));
    }
    if (!added_texts.empty()) next_.OnStrings(first_added, added_texts);
    max_string_id_ = t_.interner->max_id();
    return;
  }
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

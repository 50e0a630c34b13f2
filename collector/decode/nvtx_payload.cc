#include "decode/nvtx_payload.h"

#include <algorithm>
#include <cstring>

namespace gt::decode {
namespace {

// NVTX_PAYLOAD_ENTRY_TYPE_* values (nvToolsExtPayload.h) the decoder reads.
enum : uint64_t {
  kChar = 1,
  kUchar = 2,
  kShort = 3,
  kUshort = 4,
  kInt = 5,
  kUint = 6,
  kLong = 7,
  kUlong = 8,
  kLongLong = 9,
  kUlongLong = 10,
  kInt8 = 11,
  kUint8 = 12,
  kInt16 = 13,
  kUint16 = 14,
  kInt32 = 15,
  kUint32 = 16,
  kInt64 = 17,
  kUint64 = 18,
  kFloat = 19,
  kDouble = 20,
  kSize = 22,
  kAddress = 23,
  kWchar = 24,
  kChar8 = 25,
  kChar16 = 26,
  kChar32 = 27,
  kByte = 32,
  kFloat32 = 43,
  kFloat64 = 44,
  kCategory = 68,
  kColorArgb = 69,
  kScopeId = 70,
  kPid32 = 71,
  kPid64 = 72,
  kTid32 = 73,
  kTid64 = 74,
};

bool IsSigned(uint64_t t) {
  switch (t) {
    case kChar:
    case kShort:
    case kInt:
    case kLong:
    case kLongLong:
    case kInt8:
    case kInt16:
    case kInt32:
    case kInt64:
      return true;
    default:
      return false;
  }
}

bool IsFloat(uint64_t t) {
  return t == kFloat || t == kDouble || t == kFloat32 || t == kFloat64;
}

bool IsCharType(uint64_t t) {
  return t == kChar || t == kUchar || t == kChar8 || t == kByte;
}

uint64_t ReadUnsigned(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  std::memcpy(&v, p, n);  // little-endian hosts only (NVTX payloads are native layout)
  return v;
}

uint64_t SignExtend(uint64_t v, size_t n) {
  if (n >= 8) return v;
  const uint64_t sign = 1ull << (n * 8 - 1);
  return (v ^ sign) - sign;
}

size_t AlignUp(size_t v, size_t a) {
  return a ? (v + a - 1) / a * a : v;
}

std::string Cut(std::string_view s) {
  return std::string(s.substr(0, PayloadRegistry::kMaxNameBytes));
}

}  // namespace

size_t PayloadTypeSize(uint64_t t) {
  switch (t) {
    case kChar:
    case kUchar:
    case kInt8:
    case kUint8:
    case kChar8:
    case kByte:
      return 1;
    case kShort:
    case kUshort:
    case kInt16:
    case kUint16:
    case kChar16:
      return 2;
    case kInt:
    case kUint:
    case kInt32:
    case kUint32:
    case kFloat:
    case kFloat32:
    case kWchar:
    case kChar32:
    case kCategory:
    case kColorArgb:
    case kPid32:
    case kTid32:
      return 4;
    case kLong:
    case kUlong:
    case kLongLong:
    case kUlongLong:
    case kInt64:
    case kUint64:
    case kDouble:
    case kFloat64:
    case kSize:
    case kAddress:
    case kScopeId:
    case kPid64:
    case kTid64:
      return 8;
    default:
      return 0;
  }
}

Status PayloadRegistry::AddSchema(uint64_t domain, PayloadSchema s) {
  std::lock_guard<std::mutex> lock(mu_);
  auto refuse = [&](std::string why) {
    ++stats_.bad_registrations;
    Status st = InvalidArgument("NVTX payload schema " + std::to_string(s.id) + ": " + why);
    if (stats_.first_bad_registration.empty()) stats_.first_bad_registration = st.message();
    return st;
  };
  if (s.id < nvtxp::kSchemaIdStaticStart) return refuse("id below the static range");
  if (s.type != nvtxp::kSchemaTypeStatic) return refuse("only static-layout schemas are decoded");
  if (s.entries.empty() || s.entries.size() > kMaxEntries) return refuse("entry count out of range");
  if (schemas_.size() >= kMaxSchemas) return refuse("too many schemas");
  if (enums_.count({domain, s.id})) return refuse("id already names an enum");
  s.name = Cut(s.name);
  for (PayloadEntry& e : s.entries) e.name = Cut(e.name);
  schemas_[{domain, s.id}] = std::move(s);  // a re-registration replaces: the app's latest layout wins
  return Status::Ok();
}

Status PayloadRegistry::AddEnum(uint64_t domain, PayloadEnum e) {
  std::lock_guard<std::mutex> lock(mu_);
  auto refuse = [&](std::string why) {
    ++stats_.bad_registrations;
    Status st = InvalidArgument("NVTX payload enum " + std::to_string(e.id) + ": " + why);
    if (stats_.first_bad_registration.empty()) stats_.first_bad_registration = st.message();
    return st;
  };
  if (e.id < nvtxp::kSchemaIdStaticStart) return refuse("id below the static range");
  if (e.size != 1 && e.size != 2 && e.size != 4 && e.size != 8) return refuse("size not 1, 2, 4 or 8");
  if (e.values.size() > kMaxEnumValues) return refuse("too many values");
  if (enums_.size() >= kMaxSchemas) return refuse("too many enums");
  if (schemas_.count({domain, e.id})) return refuse("id already names a schema");
  e.name = Cut(e.name);
  for (PayloadEnumValue& v : e.values) v.name = Cut(v.name);
  enums_[{domain, e.id}] = std::move(e);
  return Status::Ok();
}

bool PayloadRegistry::Accepts(uint64_t domain, uint64_t schema_id, uint64_t size) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = schemas_.find({domain, schema_id});
  return it != schemas_.end() && size <= kMaxPayloadBytes &&
         (it->second.static_size == 0 || it->second.static_size == size);
}

PayloadStats PayloadRegistry::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

Status PayloadRegistry::Decode(uint64_t domain, uint64_t schema_id, std::span<const uint8_t> bytes,
                               std::vector<PayloadField>* out, std::string_view context) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = schemas_.find({domain, schema_id});
  if (it == schemas_.end()) {
    ++stats_.unknown_schema;
    Status st = NotFound("NVTX payload of unregistered schema " + std::to_string(schema_id) + " (" +
                         std::to_string(schemas_.size()) + " schemas registered)");
    if (stats_.first_unknown.empty())
      stats_.first_unknown = context.empty() ? st.message() : st.message() + "; " + std::string(context);
    return st;
  }
  if (bytes.size() > kMaxPayloadBytes) {
    ++stats_.refused;
    Status st = InvalidArgument("NVTX payload of " + std::to_string(bytes.size()) + " bytes (at most " +
                                std::to_string(kMaxPayloadBytes) + " are decoded)");
    if (stats_.first_refusal.empty()) stats_.first_refusal = st.message();
    return st;
  }
  const size_t before = out->size();
  Status st = DecodeLocked(domain, it->second, bytes, 0, "", out);
  if (!st.ok()) {
    out->resize(before);
    ++stats_.refused;
    if (stats_.first_refusal.empty())
      stats_.first_refusal = st.message() + " (schema " + std::to_string(schema_id) + ", " +
                             std::to_string(bytes.size()) + " bytes)";
    return st;
  }
  ++stats_.decoded;
  return Status::Ok();
}

Status PayloadRegistry::DecodeLocked(uint64_t domain, const PayloadSchema& s, std::span<const uint8_t> bytes,
                                     int depth, const std::string& prefix, std::vector<PayloadField>* out) {
  if (depth > kMaxDepth)
    return InvalidArgument("NVTX payload schemas nest deeper than " + std::to_string(kMaxDepth) +
                           " (or refer to themselves)");
  if (s.static_size && bytes.size() < s.static_size)
    return InvalidArgument("NVTX payload of " + std::to_string(bytes.size()) + " bytes, schema " +
                           std::to_string(s.id) + " says " + std::to_string(s.static_size));
  size_t next = 0;  // end of the previous entry: where an entry with offset 0 goes
  for (size_t i = 0; i < s.entries.size(); ++i) {
    const PayloadEntry& e = s.entries[i];
    const std::string name = prefix.empty() ? e.name : prefix + "." + e.name;
    if (out->size() >= kMaxFields) return InvalidArgument("NVTX payload has more than 128 fields");
    // Nested schema or registered enum.
    if (e.type >= nvtxp::kSchemaIdStaticStart) {
      if (e.flags & ~nvtxp::kFlagHide) {
        ++stats_.skipped_entries;
        return InvalidArgument("NVTX payload entry '" + name + "': flags on a nested entry");
      }
      if (auto en = enums_.find({domain, e.type}); en != enums_.end()) {
        const size_t n = en->second.size;
        const size_t off = (i && !e.offset) ? AlignUp(next, n) : e.offset;
        if (off > bytes.size() || bytes.size() - off < n)
          return InvalidArgument("NVTX payload entry '" + name + "' lies past the payload's end");
        next = off + n;
        if (e.flags & nvtxp::kFlagHide) continue;
        PayloadField f{name, NvtxArgKind::kEnum, ReadUnsigned(bytes.data() + off, n), {}};
        for (const PayloadEnumValue& v : en->second.values)
          if (v.value == f.value) {
            f.text = v.name;
            break;
          }
        out->push_back(std::move(f));
        continue;
      }
      auto sub = schemas_.find({domain, e.type});
      if (sub == schemas_.end())
        return InvalidArgument("NVTX payload entry '" + name + "' of unregistered type");
      const size_t n = sub->second.static_size;
      if (!n) return InvalidArgument("NVTX payload entry '" + name + "': nested schema without a size");
      const size_t off = (i && !e.offset) ? AlignUp(next, 8) : e.offset;
      if (off > bytes.size() || bytes.size() - off < n)
        return InvalidArgument("NVTX payload entry '" + name + "' lies past the payload's end");
      next = off + n;
      if (e.flags & nvtxp::kFlagHide) continue;
      Status st = DecodeLocked(domain, sub->second, bytes.subspan(off, n), depth + 1, name, out);
      if (!st.ok()) return st;
      continue;
    }
    const size_t size = PayloadTypeSize(e.type);
    const bool char_array = (e.flags & ~nvtxp::kFlagHide) == nvtxp::kFlagArrayFixedSize && IsCharType(e.type);
    if (!size || ((e.flags & ~nvtxp::kFlagHide) && !char_array)) {
      // Pointers, arrays, unions, 128-bit values: skipped; without a size the layout after it is unknown.
      ++stats_.skipped_entries;
      if (!e.offset && i + 1 < s.entries.size() && !s.entries[i + 1].offset)
        return InvalidArgument("NVTX payload entry '" + name + "' has an unsupported layout");
      continue;
    }
    if (char_array && (e.array_length == 0 || e.array_length > kMaxPayloadBytes))
      return InvalidArgument("NVTX payload entry '" + name + "': array length out of range");
    const size_t n = char_array ? size_t(e.array_length) : size;
    const size_t off = (i && !e.offset) ? AlignUp(next, size) : e.offset;
    if (off > bytes.size() || bytes.size() - off < n)
      return InvalidArgument("NVTX payload entry '" + name + "' lies past the payload's end");
    next = off + n;
    if (e.flags & nvtxp::kFlagHide) continue;
    const uint8_t* p = bytes.data() + off;
    PayloadField f;
    f.name = name;
    if (char_array) {
      const size_t len = std::find(p, p + n, uint8_t{0}) - p;
      f.kind = NvtxArgKind::kString;
      f.text = Cut(std::string_view(reinterpret_cast<const char*>(p), len));
    } else if (IsFloat(e.type)) {
      double d = 0;
      if (size == 4) {
        float x;
        std::memcpy(&x, p, 4);
        d = x;
      } else {
        std::memcpy(&d, p, 8);
      }
      f.kind = NvtxArgKind::kFloat;
      std::memcpy(&f.value, &d, 8);
    } else if (IsSigned(e.type)) {
      f.kind = NvtxArgKind::kInt;
      f.value = SignExtend(ReadUnsigned(p, size), size);
    } else {
      f.kind = NvtxArgKind::kUint;
      f.value = ReadUnsigned(p, size);
    }
    out->push_back(std::move(f));
  }
  return Status::Ok();
}

// ---- joiner

void PayloadJoiner::Add(PendingPayload p) {
  std::lock_guard<std::mutex> lock(mu_);
  if (count_ >= kMaxPending) {  // the thread with the most pending loses its oldest
    auto worst = std::max_element(by_tid_.begin(), by_tid_.end(), [](const auto& a, const auto& b) {
      return a.second.size() < b.second.size();
    });
    worst->second.erase(worst->second.begin());
    --count_, ++dropped_;
  }
  by_tid_[p.tid].push_back(std::move(p));
  ++count_;
}

bool PayloadJoiner::Take(const NvtxRecord& r, std::vector<PayloadField>* fields) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_tid_.find(r.tid);
  if (it == by_tid_.end()) return false;
  std::vector<PendingPayload>& v = it->second;
  constexpr int64_t kStale = 10'000'000'000;
  const size_t stale =
      std::find_if(v.begin(), v.end(), [&](const PendingPayload& p) { return p.at >= r.start - kStale; }) -
      v.begin();
  v.erase(v.begin(), v.begin() + stale);
  count_ -= stale, dropped_ += stale;
  size_t best = v.size();
  int64_t best_d = kMaxSkewNs + 1;
  for (size_t i = 0; i < v.size(); ++i) {
    const int64_t d = v[i].at > r.start ? v[i].at - r.start : r.start - v[i].at;
    if (d < best_d) best = i, best_d = d;
  }
  if (best == v.size()) return false;
  *fields = std::move(v[best].fields);
  v.erase(v.begin() + best);
  --count_;
  if (v.empty()) by_tid_.erase(it);
  return true;
}

uint64_t PayloadJoiner::dropped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_;
}

size_t PayloadJoiner::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return count_;
}

}  // namespace gt::decode

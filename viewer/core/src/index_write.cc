// Writing the viewer index: VisitModel lays the columns section out (offsets only) while it encodes the
// small tables, then the file is written in one sequential pass from the model's own arrays, so the writer
// holds no second copy of the events.
#include <chrono>
#include <cstdio>
#include <cstring>

#if !defined(_WIN32)
#include <fcntl.h>
#include <unistd.h>
#endif

#include "gt/index_format.h"
#include "gt/viewer/index.h"
#include "gt/viewer/query.h"
#include "gt/viewer/summary.h"
#include "index_codec.h"

namespace gt::viewer {
namespace index_detail {

uint32_t LayoutKey() {
  uint32_t h = 2166136261u;
  auto mix = [&h](uint64_t v) {
    for (int i = 0; i < 8; ++i) h = (h ^ uint8_t(v >> (8 * i))) * 16777619u;
  };
  auto type = [&mix](size_t size, size_t align) { mix(size), mix(align); };
  type(sizeof(ClockSync), alignof(ClockSync));
  type(sizeof(ProcessRecord), alignof(ProcessRecord));
  type(sizeof(ThreadRecord), alignof(ThreadRecord));
  type(sizeof(DeviceRecord), alignof(DeviceRecord));
  type(sizeof(StreamRecord), alignof(StreamRecord));
  type(sizeof(KernelMetricRecord), alignof(KernelMetricRecord));
  type(sizeof(StallSample), alignof(StallSample));
  type(sizeof(NvtxArgRecord), alignof(NvtxArgRecord));
  type(sizeof(LodMax), alignof(LodMax));
  return h;
}

namespace {

// One array of the columns section: where it goes and where its bytes are now.
struct Block {
  const void* data;
  uint64_t bytes;
  uint64_t offset;  // within the columns section, kAlign-aligned
};

// Encodes the small tables little-endian, fixed width; assigns column offsets in visiting order.
class Encoder {
 public:
  std::vector<uint8_t> out;
  std::vector<Block> blocks;
  uint64_t columns_bytes = 0;

  template <typename T>
  void Pod(const T& v) {
    static_assert(std::is_trivially_copyable_v<T> && (std::is_arithmetic_v<T> || std::is_enum_v<T>));
    const size_t at = out.size();
    out.resize(at + sizeof(T));
    std::memcpy(out.data() + at, &v, sizeof(T));
  }
  void Str(const std::string& s) {
    Pod(uint32_t(s.size()));
    out.insert(out.end(), s.begin(), s.end());
  }
  void Strs(const std::vector<std::string>& v) {
    Pod(uint64_t(v.size()));
    for (const auto& s : v) Str(s);
  }
  template <typename C>
  size_t Count(const C& c, size_t) {
    Pod(uint64_t(c.size()));
    return c.size();
  }
  template <typename C>
  void Col(const C& c) {
    Ref(c.data(), c.size(), sizeof(typename C::value_type));
  }
  template <typename T>
  void Array(const std::vector<T>& v) {
    static_assert(std::is_arithmetic_v<T>);
    Ref(v.data(), v.size(), sizeof(T));
  }
  template <typename T>
  void Raw(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    Pod(uint64_t(v.size())), Pod(uint32_t(sizeof(T)));
    const size_t at = out.size();
    out.resize(at + v.size() * sizeof(T));
    if (!v.empty()) std::memcpy(out.data() + at, v.data(), v.size() * sizeof(T));
  }
  template <typename A, typename B>
  void Pairs(const std::vector<std::pair<A, B>>& v) {
    Pod(uint64_t(v.size()));
    for (const auto& [a, b] : v) Pod(a), Pod(b);
  }

 private:
  void Ref(const void* data, size_t count, size_t elem) {
    const uint64_t offset = AlignUp(columns_bytes), bytes = uint64_t(count) * elem;
    Pod(offset), Pod(uint64_t(count));
    if (bytes) blocks.push_back({data, bytes, offset});
    columns_bytes = offset + bytes;
  }
};

using Clock = std::chrono::steady_clock;
double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

IndexSummaries ComputeSummaries(const TraceModel& model) {
  IndexSummaries s;
  SummarizeAll(model, &s.kernels, s.by_name);
  return s;
}

// The whole file as a plan: header + section table, the two encoded sections, then the column blocks.
struct Plan {
  std::vector<uint8_t> head;  // header, section table, model and summaries sections, padding to columns
  std::vector<Block> blocks;
  uint64_t columns_offset = 0, file_bytes = 0;
};

Plan MakePlan(const TraceModel& model, const IndexSummaries& summaries, const IndexSource& source) {
  GT_ASSERT(source.tag.size() <= kIndexTagMax);
  Encoder meta;
  VisitModel(meta, model);
  Encoder sums;
  VisitSummaries(sums, summaries);
  GT_ASSERT(sums.blocks.empty());

  Plan plan;
  constexpr uint32_t kSections = 3;
  const uint64_t meta_offset = AlignUp(kHeaderBytes + kSections * kSectionEntryBytes);
  const uint64_t sums_offset = AlignUp(meta_offset + meta.out.size());
  plan.columns_offset = AlignUp(sums_offset + sums.out.size());
  plan.file_bytes = plan.columns_offset + meta.columns_bytes;
  plan.blocks = std::move(meta.blocks);

  uint32_t columns_crc = 0;
  uint64_t at = 0;
  static const uint8_t kZeros[kAlign] = {};
  for (const Block& b : plan.blocks) {  // the padding between blocks is zeros, checksummed like the rest
    columns_crc = Crc32c(columns_crc, kZeros, b.offset - at);
    columns_crc = Crc32c(columns_crc, b.data, b.bytes);
    at = b.offset + b.bytes;
  }

  std::vector<uint8_t>& h = plan.head;
  h.assign(plan.columns_offset, 0);
  std::memcpy(h.data() + meta_offset, meta.out.data(), meta.out.size());
  std::memcpy(h.data() + sums_offset, sums.out.data(), sums.out.size());
  struct Entry {
    uint32_t kind;
    uint64_t offset, bytes;
    uint32_t crc;
  };
  const Entry entries[kSections] = {
      {kSectionModel, meta_offset, meta.out.size(), Crc32c(0, meta.out.data(), meta.out.size())},
      {kSectionSummaries, sums_offset, sums.out.size(), Crc32c(0, sums.out.data(), sums.out.size())},
      {kSectionColumns, plan.columns_offset, meta.columns_bytes, columns_crc},
  };
  for (uint32_t i = 0; i < kSections; ++i) {
    uint8_t* e = h.data() + kHeaderBytes + i * kSectionEntryBytes;
    Store(e, entries[i].kind), Store(e + 8, entries[i].offset), Store(e + 16, entries[i].bytes),
        Store(e + 24, entries[i].crc);
  }
  std::memcpy(h.data(), kMagic, sizeof kMagic);
  const IndexVersion version = CurrentIndexVersion();
  Store(h.data() + kOffMajor, version.major), Store(h.data() + kOffMinor, version.minor);
  Store(h.data() + kOffLayout, LayoutKey());
  Store(h.data() + kOffFileBytes, plan.file_bytes);
  Store(h.data() + kOffSourceBytes, source.bytes);
  h[kOffTagLen] = uint8_t(source.tag.size());
  std::memcpy(h.data() + kOffTag, source.tag.data(), source.tag.size());
  Store(h.data() + kOffSectionCount, kSections);
  Store(h.data() + kOffTableCrc, Crc32c(0, h.data() + kHeaderBytes, kSections * kSectionEntryBytes));
  Store(h.data() + kOffHeaderCrc, Crc32c(0, h.data(), kOffHeaderCrc));
  return plan;
}

// Writes the plan through `write(data, bytes)`, zero padding between blocks.
template <typename W>
bool Emit(const Plan& plan, W&& write) {
  static const uint8_t kZeros[kAlign] = {};
  if (!write(plan.head.data(), plan.head.size())) return false;
  uint64_t at = 0;
  for (const Block& b : plan.blocks) {
    if (b.offset > at && !write(kZeros, b.offset - at)) return false;
    if (!write(b.data, b.bytes)) return false;
    at = b.offset + b.bytes;
  }
  return true;
}

}  // namespace
}  // namespace index_detail

IndexSource FingerprintBytes(std::span<const uint8_t> bytes) {
  char tag[32];
  std::snprintf(tag, sizeof tag, "crc32c:%08x", Crc32c(0, bytes.data(), bytes.size()));
  return {bytes.size(), tag};
}

std::vector<uint8_t> EncodeIndex(const TraceModel& model, const IndexSource& source) {
  using namespace index_detail;
  const IndexSummaries summaries = ComputeSummaries(model);
  const Plan plan = MakePlan(model, summaries, source);
  std::vector<uint8_t> out;
  out.reserve(plan.file_bytes);
  Emit(plan, [&out](const void* p, uint64_t n) {
    out.insert(out.end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + n);
    return true;
  });
  GT_ASSERT(out.size() == plan.file_bytes);
  return out;
}

Status WriteIndex(const TraceModel& model, const IndexSource& source, const std::string& path,
                  IndexWriteStats* stats) {
  using namespace index_detail;
  if (source.tag.size() > kIndexTagMax) return InvalidArgument("index source tag longer than 64 bytes");
  auto t0 = Clock::now();
  const IndexSummaries summaries = ComputeSummaries(model);
  const double summaries_s = Seconds(t0);
  t0 = Clock::now();
  const Plan plan = MakePlan(model, summaries, source);
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return IoError("cannot create " + tmp + ": " + std::strerror(errno));
  bool ok = Emit(plan, [f](const void* p, uint64_t n) { return std::fwrite(p, 1, n, f) == n; });
  ok = std::fflush(f) == 0 && ok;
#if !defined(__EMSCRIPTEN__) && !defined(_WIN32)
  ok = ok && ::fsync(fileno(f)) == 0;  // the rename below must never publish a file whose bytes are not there
#endif
  const int err = errno;
  ok = std::fclose(f) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = ok ? errno : err;
    std::remove(tmp.c_str());
    return IoError("cannot write " + path + ": " + std::strerror(e));
  }
  if (stats) {
    stats->events = model.event_count + model.sample_count;
    stats->index_bytes = plan.file_bytes;
    stats->summaries_s = summaries_s;
    stats->write_s = Seconds(t0);
  }
  return Status::Ok();
}

}  // namespace gt::viewer

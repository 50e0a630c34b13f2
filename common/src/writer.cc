// Streaming .gtrace writer (native only: needs zstd's compressor).
//
// [SECTION] Column encoder
// [SECTION] Byte sinks
// [SECTION] TraceWriter::Impl
// [SECTION] TraceWriter
// [SECTION] TraceData through a writer
#include "gt/writer.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "format.h"
#include "gt/trace_data.h"
#include "schema.h"

namespace gt {
using namespace format;

// ================================================================================================================
// [SECTION] Column encoder
// ================================================================================================================
namespace {

// Pending records of one kind. Records are encoded a block at a time as they arrive (while the block is
// still in cache); the chunk holds only the encoded columns until it is flushed.
template <class R>
struct KindBuffer {
  std::unique_ptr<R[]> block;  // schema::kBlock records: the first `in_block` are not encoded yet
  uint32_t in_block = 0;
  // Records Add() can take before the block is full or the chunk reaches its limit (its fast path).
  uint32_t room = 0;
  std::vector<schema::EncodeColumn> columns;
  uint32_t pending = 0;  // records of the chunk being built (encoded + in `block`)
  uint32_t limit = 0;    // records per chunk: the option, clamped so the worst-case encoding fits a chunk
  // The chunk's second record, once encoded: the value every still-constant column repeats.
  bool have_ref = false;
  R ref{};
};

constexpr size_t kMaxStringBytes = 1u << 20;  // longer strings are cut (keeps a strings chunk under the cap)
constexpr size_t kStringsChunkBytes = 16u << 20;
constexpr size_t kBufferKeepBytes = 16u << 20;  // scratch buffers above this are released after use

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

}  // namespace

// ================================================================================================================
// [SECTION] Byte sinks
// ================================================================================================================
namespace {

class StringSink final : public ByteSink {
 public:
  explicit StringSink(std::string* out) : out_(out) {}
  Status Write(std::span<const uint8_t> b) override {
    out_->append(reinterpret_cast<const char*>(b.data()), b.size());
    return Status::Ok();
  }

 private:
  std::string* out_;
};

class FdSink final : public ByteSink {
 public:
  FdSink(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}
  ~FdSink() override {
    if (fd_ >= 0) ::close(fd_);
  }
  Status Write(std::span<const uint8_t> b) override {
    const uint8_t* p = b.data();
    size_t n = b.size();
    while (n > 0) {
      ssize_t w = ::write(fd_, p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        return IoError("write to " + name_ + " failed: " + std::strerror(errno));
      }
      p += w;
      n -= size_t(w);
    }
    return Status::Ok();
  }
  // write() already handed the bytes to the kernel, which is all crash safety of the *traced app* needs;
  // fdatasync per Flush() would stall the collector on slow disks.

 private:
  int fd_;
  std::string name_;
};

}  // namespace

std::unique_ptr<ByteSink> MakeStringSink(std::string* out) {
  return std::make_unique<StringSink>(out);
}

std::unique_ptr<ByteSink> MakeFdSink(int fd) {
  return std::make_unique<FdSink>(fd, "fd " + std::to_string(fd));
}

StatusOr<std::unique_ptr<ByteSink>> MakeFileSink(const std::string& path, bool overwrite) {
  int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (overwrite ? O_TRUNC : O_EXCL);
  int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) {
    int e = errno;
    if (e == EEXIST)
      return InvalidArgument("'" + path + "' already exists (choose another name or overwrite it)");
    if (e == ENOENT) return NotFound("cannot create '" + path + "': directory does not exist");
    return IoError("cannot create '" + path + "': " + std::strerror(e));
  }
  return std::unique_ptr<ByteSink>(std::make_unique<FdSink>(fd, "'" + path + "'"));
}

// ================================================================================================================
// [SECTION] TraceWriter::Impl
// ================================================================================================================
class TraceWriter::Impl {
 public:
  Impl(std::unique_ptr<ByteSink> sink, WriterOptions options) : sink_(std::move(sink)), options_(options) {
    if (options_.max_records_per_chunk == 0) options_.max_records_per_chunk = 1;
    if (options_.max_records_per_chunk > kMaxRecordsPerChunk)
      options_.max_records_per_chunk = kMaxRecordsPerChunk;
    cctx_ = ZSTD_createCCtx();
    strings_.emplace("", 0);
  }
  ~Impl() { ZSTD_freeCCtx(cctx_); }

  Status WriteHeader() {
    uint8_t h[kSegmentHeaderSize];
    std::memcpy(h, kSegmentMagic, sizeof kSegmentMagic);
    PutU16(h + 10, kVersionMajor);
    PutU16(h + 12, kVersionMinor);
    PutU16(h + 14, 0);
    PutU32(h + 16, Crc32c(0, h, 16));
    return Emit({h, sizeof h});
  }

  StringId Intern(std::string_view text) {
    if (text.size() > kMaxStringBytes) text = text.substr(0, kMaxStringBytes);
    auto it = strings_.find(text);
    if (it != strings_.end()) return it->second;
    StringId id = next_string_id_++;
    strings_.emplace(std::string(text), id);
    pending_strings_.emplace_back(text);
    pending_string_bytes_ += text.size();
    return id;
  }

  void SetMetadata(const TraceMetadata& m) {
    metadata_ = m;
    metadata_dirty_ = true;
  }

  // The common case inlines into TraceWriter::Add(): a copy into the block.
  template <class R>
  GT_INLINE void Add(const R& r) {
    KindBuffer<R>& kb = std::get<KindBuffer<R>>(kinds_);
    if (kb.room > 0 && sticky_.ok() && !finished_) [[likely]] {
      --kb.room;
      kb.block[kb.in_block++] = r;
      ++kb.pending;
      return;
    }
    AddSlow(r);
  }

  template <class R>
  __attribute__((noinline)) void AddSlow(const R& r) {
    GT_ASSERT_MSG(!finished_, "TraceWriter::Add after Finish");
    if (!sticky_.ok()) {
      ++records_lost_;
      return;
    }
    KindBuffer<R>& kb = std::get<KindBuffer<R>>(kinds_);
    if (kb.limit == 0) {
      uint64_t fit = (kMaxChunkRawSize - (64u << 10)) / schema::MaxRecordBytes<R>();
      kb.limit = uint32_t(std::min<uint64_t>(options_.max_records_per_chunk, fit));
      kb.block = std::make_unique<R[]>(schema::kBlock);
      kb.columns.resize(schema::ColumnCount<R>());
      schema::ColumnTypes types{kb.columns.data()};
      R proto{};
      schema::Visit(types, proto);
      for (auto& c : kb.columns) c.Reset();
    }
    kb.block[kb.in_block++] = r;
    ++kb.pending;
    if (kb.in_block == schema::kBlock) EncodeBlock(kb);
    if (kb.pending >= kb.limit) {
      (void)FlushStrings();
      (void)FlushKind<R>();
    }
    kb.room = std::min<uint32_t>(uint32_t(schema::kBlock) - 1 - kb.in_block, kb.limit - 1 - kb.pending);
  }

  Status Flush() {
    if (finished_) return sticky_;
    if (metadata_dirty_) {
      metadata_dirty_ = false;
      (void)WriteMetadata();
    }
    (void)FlushStrings();
    schema::ForEachRecordType([&](auto tag) { (void)FlushKind<typename decltype(tag)::Type>(); });
    if (sticky_.ok()) {
      Status s = sink_->Sync();
      if (!s.ok()) sticky_ = s;
    }
    return sticky_;
  }

  Status Finish() {
    if (finished_) return sticky_;
    (void)Flush();
    (void)WriteChunk(kChunkEndOfSegment, 0, {});
    finished_ = true;
    if (sticky_.ok()) {
      Status s = sink_->Sync();
      if (!s.ok()) sticky_ = s;
    }
    return sticky_;
  }

  uint64_t bytes_written_ = 0;
  uint64_t records_written_ = 0;
  uint64_t records_lost_ = 0;
  Status sticky_;

 private:
  Status Emit(std::span<const uint8_t> bytes) {
    if (!sticky_.ok()) return sticky_;
    Status s = sink_->Write(bytes);
    if (!s.ok()) {
      sticky_ = s;
      return s;
    }
    bytes_written_ += bytes.size();
    return s;
  }

  Status WriteChunk(uint16_t type, uint32_t count, std::span<const uint8_t> raw) {
    if (!sticky_.ok()) {
      records_lost_ += count;
      return sticky_;
    }
    GT_ASSERT(raw.size() <= kMaxChunkRawSize);
    uint16_t flags = 0;
    size_t stored = raw.size();
    uint8_t* h = nullptr;
    if (!raw.empty()) {
      size_t bound = ZSTD_compressBound(raw.size());
      out_.Clear();
      h = out_.Reserve(kChunkHeaderSize + bound);
      size_t z =
          ZSTD_compressCCtx(cctx_, h + kChunkHeaderSize, bound, raw.data(), raw.size(), options_.zstd_level);
      if (!ZSTD_isError(z) && z < raw.size()) {
        flags |= kChunkFlagZstd;
        stored = z;
      } else {
        std::memcpy(h + kChunkHeaderSize, raw.data(), raw.size());
      }
    } else {
      out_.Clear();
      h = out_.Reserve(kChunkHeaderSize);
    }
    std::memcpy(h, kChunkMagic, 4);
    PutU16(h + 4, type);
    PutU16(h + 6, flags);
    PutU32(h + 8, count);
    PutU32(h + 12, uint32_t(raw.size()));
    PutU32(h + 16, uint32_t(stored));
    uint32_t crc = Crc32c(0, h, 20);
    crc = Crc32c(crc, h + kChunkHeaderSize, stored);
    PutU32(h + 20, crc);
    PutU32(h + 24, Crc32c(0, h, 24));
    out_.Commit(kChunkHeaderSize + stored);
    Status s = Emit(out_.span());
    if (s.ok())
      records_written_ += count;
    else
      records_lost_ += count;
    out_.ShrinkTo(kBufferKeepBytes);
    return s;
  }

  Status WriteMetadata() {
    payload_.Clear();
    payload_.PutVarint(metadata_.entries.size());
    for (const auto& [k, v] : metadata_.entries) {
      payload_.PutVarint(k.size());
      payload_.Append(k.data(), k.size());
      payload_.PutVarint(v.size());
      payload_.Append(v.data(), v.size());
    }
    payload_.PutVarint(metadata_.clock_syncs.size());
    for (const auto& c : metadata_.clock_syncs) {
      payload_.PutVarint(Zig(c.realtime_ns));
      payload_.PutVarint(Zig(c.trace_ns));
    }
    if (payload_.size() > kMaxChunkRawSize)
      return sticky_;  // absurd metadata: dropped rather than a bad file
    return WriteChunk(uint16_t(RecordKind::kMetadata), 1, payload_.span());
  }

  Status FlushStrings() {
    size_t i = 0;
    while (i < pending_strings_.size()) {
      // Split so one strings chunk stays well under the reader's raw-size cap.
      size_t j = i, bytes = 0;
      while (j < pending_strings_.size() &&
             (j == i || bytes + pending_strings_[j].size() < kStringsChunkBytes))
        bytes += pending_strings_[j++].size();
      payload_.Clear();
      payload_.PutVarint(pending_first_id_ + i);
      payload_.PutVarint(j - i);
      for (size_t k = i; k < j; ++k) payload_.PutVarint(pending_strings_[k].size());
      for (size_t k = i; k < j; ++k) payload_.Append(pending_strings_[k].data(), pending_strings_[k].size());
      (void)WriteChunk(uint16_t(RecordKind::kStrings), uint32_t(j - i), payload_.span());
      i = j;
    }
    pending_first_id_ = next_string_id_;
    pending_strings_.clear();
    pending_string_bytes_ = 0;
    return sticky_;
  }

  template <class R>
  static void EncodeBlock(KindBuffer<R>& kb) {
    const size_t n = kb.in_block;
    const R* block = kb.block.get();
    alignas(16) uint8_t changed[sizeof(R)];
    if (kb.have_ref) schema::ChangedBytes(block, n, kb.ref, changed);
#if GT_HAVE_PEXT
    if (FastPext()) {
      schema::BlockEncoder<R, true> e{n, kb.columns.data(), block, kb.have_ref ? changed : nullptr};
      schema::Visit(e, kb.block[0]);
    } else
#endif
    {
      schema::BlockEncoder<R> e{n, kb.columns.data(), block, kb.have_ref ? changed : nullptr};
      schema::Visit(e, kb.block[0]);
    }
    if (!kb.have_ref && n >= 2) {  // the chunk's first block
      kb.ref = kb.block[1];
      kb.have_ref = true;
    }
    kb.in_block = 0;
  }

  template <class R>
  Status FlushKind() {
    KindBuffer<R>& kb = std::get<KindBuffer<R>>(kinds_);
    if (kb.pending == 0) return sticky_;
    if (kb.in_block > 0) EncodeBlock(kb);
    const uint32_t n = kb.pending;
    kb.pending = 0;
    kb.room = 0;  // AddSlow() recomputes it
    kb.have_ref = false;
    payload_.Clear();
    payload_.PutVarint(kb.columns.size());
    for (auto& c : kb.columns) {
      uint64_t x, y;
      if (c.lazy && c.count >= 3) {  // never written: a repeat column by construction
        c.buf.Clear();
        c.buf.PutVarint(c.first);
        c.buf.PutVarint(c.rest);
        payload_.PutVarint(c.buf.size() << 1 | 1);
        continue;
      }
      if (c.lazy) c.Materialize();  // 1 or 2 values: stored unless their bytes form a repeat (as before)
      if (schema::DetectRepeat(c, &x, &y)) {  // replace the column by its two values
        c.buf.Clear();
        c.buf.PutVarint(x);
        c.buf.PutVarint(y);
        payload_.PutVarint(c.buf.size() << 1 | 1);
      } else {
        payload_.PutVarint(c.buf.size() << 1);
      }
    }
    for (const auto& c : kb.columns) payload_.Append(c.buf.data(), c.buf.size());
    for (auto& c : kb.columns) {
      c.Reset();
      c.buf.ShrinkTo(4u << 20);
    }
    Status s = WriteChunk(uint16_t(schema::KindOf<R>::kValue), n, payload_.span());
    payload_.ShrinkTo(kBufferKeepBytes);
    return s;
  }

  std::unique_ptr<ByteSink> sink_;
  WriterOptions options_;
  ZSTD_CCtx* cctx_ = nullptr;
  std::unordered_map<std::string, StringId, StringHash, std::equal_to<>> strings_;
  std::vector<std::string> pending_strings_;
  size_t pending_string_bytes_ = 0;
  StringId next_string_id_ = 1;
  StringId pending_first_id_ = 1;
  TraceMetadata metadata_;
  bool metadata_dirty_ = false;
  bool finished_ = false;
  std::tuple<KindBuffer<ProcessRecord>, KindBuffer<ThreadRecord>, KindBuffer<DeviceRecord>,
             KindBuffer<ContextRecord>, KindBuffer<StreamRecord>, KindBuffer<KernelRecord>,
             KindBuffer<MemcpyRecord>, KindBuffer<MemsetRecord>, KindBuffer<ApiCallRecord>,
             KindBuffer<NvtxRecord>, KindBuffer<SyncRecord>, KindBuffer<MemoryRecord>,
             KindBuffer<OverheadRecord>, KindBuffer<CounterDescriptor>, KindBuffer<CounterSample>,
             KindBuffer<KernelMetricRecord>, KindBuffer<StallSample>, KindBuffer<FlowRecord>,
             KindBuffer<LossRecord>, KindBuffer<NvtxArgRecord>, KindBuffer<NcclCollRecord>,
             KindBuffer<NcclChannelRecord>, KindBuffer<CpuStackNodeRecord>, KindBuffer<CpuSampleRecord>>
      kinds_;
  ByteBuf payload_, out_;
};

// ================================================================================================================
// [SECTION] TraceWriter
// ================================================================================================================
TraceWriter::TraceWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TraceWriter::~TraceWriter() = default;

StatusOr<std::unique_ptr<TraceWriter>> TraceWriter::Create(std::unique_ptr<ByteSink> sink,
                                                           WriterOptions options) {
  if (!sink) return InvalidArgument("TraceWriter needs a sink");
  if (options.zstd_level < ZSTD_minCLevel() || options.zstd_level > ZSTD_maxCLevel())
    return InvalidArgument("zstd level " + std::to_string(options.zstd_level) + " out of range");
  auto impl = std::make_unique<Impl>(std::move(sink), options);
  GT_RETURN_IF_ERROR(impl->WriteHeader());
  return std::unique_ptr<TraceWriter>(new TraceWriter(std::move(impl)));
}

StringId TraceWriter::Intern(std::string_view text) {
  return impl_->Intern(text);
}
void TraceWriter::SetMetadata(const TraceMetadata& m) {
  impl_->SetMetadata(m);
}
#define GT_WRITER_ADD(R, Method, field) \
  void TraceWriter::Add(const R& r) {   \
    impl_->Add(r);                      \
  }
GT_FOR_EACH_RECORD_TYPE(GT_WRITER_ADD)
#undef GT_WRITER_ADD
Status TraceWriter::Flush() {
  return impl_->Flush();
}
Status TraceWriter::Finish() {
  return impl_->Finish();
}
uint64_t TraceWriter::bytes_written() const {
  return impl_->bytes_written_;
}
uint64_t TraceWriter::records_written() const {
  return impl_->records_written_;
}
uint64_t TraceWriter::records_lost() const {
  return impl_->records_lost_;
}
const Status& TraceWriter::sticky_error() const {
  return impl_->sticky_;
}

// ================================================================================================================
// [SECTION] TraceData through a writer (WriteTraceData, declared in gt/trace_data.h)
// ================================================================================================================

namespace {

// Re-interns every Str field through the writer; all other fields pass through.
struct Remap : schema::PassFields {
  const TraceData& data;
  TraceWriter& writer;
  std::vector<StringId>& cache;  // data id -> writer id, kNone = not yet interned
  Remap(const TraceData& d, TraceWriter& w, std::vector<StringId>& c) : data(d), writer(w), cache(c) {}
  void Str(StringId& id) {
    if (id == 0) return;
    if (id >= cache.size()) {
      id = writer.Intern(data.Str(id));
      return;
    }
    if (cache[id] == kNone) cache[id] = writer.Intern(data.strings[id]);
    id = cache[id];
  }
};

template <class R>
void WriteAll(const std::vector<R>& v, Remap& remap, TraceWriter& w) {
  for (R r : v) {
    schema::Visit(remap, r);
    w.Add(r);
  }
}

}  // namespace

Status WriteTraceData(const TraceData& data, TraceWriter& writer) {
  std::vector<StringId> cache(data.strings.size(), kNone);
  Remap remap{data, writer, cache};
  writer.SetMetadata(data.metadata);
#define GT_WRITE_FIELD(R, Method, field) WriteAll(data.field, remap, writer);
  GT_FOR_EACH_RECORD_TYPE(GT_WRITE_FIELD)
#undef GT_WRITE_FIELD
  return writer.Flush();
}

}  // namespace gt

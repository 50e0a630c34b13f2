// [SECTION] file helpers
// [SECTION] blobs and staging
// [SECTION] metadata
// [SECTION] LocalDirStore
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <list>
#include <mutex>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "gt/server/ids.h"
#include "gt/server/store.h"

namespace gt::server {
namespace {

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] file helpers
// ---------------------------------------------------------------------------------------------------------------

Status Errno(const std::string& what) {
  return IoError(what + ": " + std::strerror(errno));
}

Status MakeDir(const std::string& path) {
  if (mkdir(path.c_str(), 0750) == 0 || errno == EEXIST) {
    struct stat st;
    if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return Status::Ok();
    return IoError(path + " exists and is not a directory");
  }
  return Errno("cannot create " + path);
}

Status WriteAll(int fd, const char* data, size_t size, const std::string& path) {
  while (size > 0) {
    ssize_t n = write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("cannot write " + path);
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

void SyncDir(const std::string& dir) {
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    fsync(fd);
    close(fd);
  }
}

StatusOr<std::string> ReadSmallFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT) return NotFound(path);
    return Errno("cannot open " + path);
  }
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Status s = Errno("cannot read " + path);
      close(fd);
      return s;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > (1u << 20)) {
      close(fd);
      return Corrupt(path + " is unexpectedly large");
    }
  }
  close(fd);
  return out;
}

std::string UniqueSuffix() {
  auto bytes = RandomBytes(12);
  GT_ASSERT_MSG(bytes.ok(), "no randomness for temp names");
  return Base32({reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size()});
}

// tmp file + fsync + rename + fsync(dir): readers see the old or the new file, never a torn one.
Status WriteFileAtomic(const std::string& tmp_dir, const std::string& path, const std::string& content,
                       mode_t mode) {
  std::string tmp = tmp_dir + "/meta-" + UniqueSuffix() + ".part";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return Errno("cannot create " + tmp);
  Status s = WriteAll(fd, content.data(), content.size(), tmp);
  if (s.ok() && fsync(fd) != 0) s = Errno("cannot sync " + tmp);
  close(fd);
  if (s.ok() && rename(tmp.c_str(), path.c_str()) != 0) s = Errno("cannot rename to " + path);
  if (!s.ok()) {
    unlink(tmp.c_str());
    return s;
  }
  SyncDir(path.substr(0, path.rfind('/')));
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] blobs and staging
// ---------------------------------------------------------------------------------------------------------------

class MappedBlob final : public TraceBlob {
 public:
  MappedBlob(const uint8_t* data, uint64_t size) : data_(data), size_(size) {}
  ~MappedBlob() override {
    if (data_ != nullptr) munmap(const_cast<uint8_t*>(data_), size_);
  }
  uint64_t size() const override { return size_; }
  bool Read(uint64_t offset, uint64_t length,
            const std::function<bool(const char*, size_t)>& write) const override {
    if (offset > size_ || length > size_ - offset) return false;
    constexpr uint64_t kPiece = 1 << 20;
    while (length > 0) {
      uint64_t n = std::min(length, kPiece);
      if (!write(reinterpret_cast<const char*>(data_) + offset, static_cast<size_t>(n))) return false;
      offset += n;
      length -= n;
    }
    return true;
  }

 private:
  const uint8_t* data_;
  uint64_t size_;
};

StatusOr<std::shared_ptr<const TraceBlob>> MapFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT) return NotFound("no such trace");
    return Errno("cannot open trace");
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return IoError("trace file is not a regular file");
  }
  uint64_t size = static_cast<uint64_t>(st.st_size);
  const uint8_t* data = nullptr;
  if (size > 0) {
    void* p = mmap(nullptr, size, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (p == MAP_FAILED) {
      Status s = Errno("cannot map trace");
      close(fd);
      return s;
    }
    data = static_cast<const uint8_t*>(p);
  }
  close(fd);
  return std::shared_ptr<const TraceBlob>(std::make_shared<MappedBlob>(data, size));
}

class LocalStaging final : public UploadStaging {
 public:
  LocalStaging(int fd, std::string path) : fd_(fd), path_(std::move(path)) { buffer_.reserve(kBufferSize); }
  ~LocalStaging() override {
    if (map_ != nullptr) munmap(map_, size_);
    if (fd_ >= 0) close(fd_);
    if (!committed_) unlink(path_.c_str());
  }
  Status Append(const char* data, size_t size) override {
    GT_ASSERT_MSG(!finished_, "Append after Finish");
    size_ += size;
    if (buffer_.size() + size > kBufferSize) {
      GT_RETURN_IF_ERROR(FlushBuffer());
      if (size >= kBufferSize) return WriteAll(fd_, data, size, path_);
    }
    buffer_.append(data, size);
    return Status::Ok();
  }
  uint64_t size() const override { return size_; }
  StatusOr<std::span<const uint8_t>> Finish() override {
    GT_ASSERT_MSG(!finished_, "Finish twice");
    finished_ = true;
    GT_RETURN_IF_ERROR(FlushBuffer());
    if (fdatasync(fd_) != 0) return Errno("cannot sync upload");
    if (size_ == 0) return std::span<const uint8_t>();
    void* p = mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd_, 0);
    if (p == MAP_FAILED) return Errno("cannot map upload");
    map_ = p;
    return std::span<const uint8_t>(static_cast<const uint8_t*>(p), size_);
  }

  const std::string& path() const { return path_; }
  bool finished() const { return finished_; }
  void MarkCommitted() { committed_ = true; }

 private:
  static constexpr size_t kBufferSize = 256 * 1024;
  Status FlushBuffer() {
    Status s = WriteAll(fd_, buffer_.data(), buffer_.size(), path_);
    buffer_.clear();
    return s;
  }
  int fd_;
  std::string path_;
  std::string buffer_;
  uint64_t size_ = 0;
  void* map_ = nullptr;
  bool finished_ = false;
  bool committed_ = false;
};

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] metadata
// ---------------------------------------------------------------------------------------------------------------

std::string EncodeMeta(const TraceMeta& m) {
  nlohmann::json j;
  j["bytes"] = m.bytes;
  j["uploaded"] = m.uploaded_unix;
  j["accessed"] = m.accessed_unix;
  j["owners"] = m.owner_hashes;
  j["format"] = m.format;
  if (!m.name.empty()) j["name"] = m.name;
  return j.dump();
}

StatusOr<TraceMeta> DecodeMeta(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Corrupt("trace metadata is not JSON");
  TraceMeta m;
  auto get_int = [&](const char* key, auto& out) {
    auto it = j.find(key);
    if (it != j.end() && it->is_number_integer()) out = it->template get<std::decay_t<decltype(out)>>();
  };
  get_int("bytes", m.bytes);
  get_int("uploaded", m.uploaded_unix);
  get_int("accessed", m.accessed_unix);
  if (auto it = j.find("owners"); it != j.end() && it->is_array())
    for (const auto& o : *it)
      if (o.is_string()) m.owner_hashes.push_back(o.get<std::string>());
  if (auto it = j.find("format"); it != j.end() && it->is_string()) m.format = it->get<std::string>();
  // Sanitized again on the way out: the metadata file is ours, but a name must never carry a quote or CR/LF
  // into a header whatever is on disk.
  if (auto it = j.find("name"); it != j.end() && it->is_string())
    m.name = SanitizeTraceName(it->get<std::string>());
  return m;
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] LocalDirStore
// ---------------------------------------------------------------------------------------------------------------

class LocalDirStore final : public TraceStore {
 public:
  LocalDirStore(std::string dir, int lock_fd) : dir_(std::move(dir)), lock_fd_(lock_fd) {}
  ~LocalDirStore() override {
    if (lock_fd_ >= 0) close(lock_fd_);  // releases the flock
  }

  StatusOr<std::string> LoadOrCreateSecret() override {
    std::lock_guard<std::mutex> lock(secret_mu_);
    if (!secret_.empty()) return secret_;
    const std::string path = dir_ + "/secret.key";
    auto existing = ReadSmallFile(path);
    if (!existing.ok() && existing.status().code() != StatusCode::kNotFound) return existing.status();
    if (!existing.ok()) {
      auto bytes = RandomBytes(32);
      if (!bytes.ok()) return bytes.status();
      std::string hex = HexLower({reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size()}) + "\n";
      // link() instead of rename(): if another process created the key meanwhile, theirs wins and we read it.
      std::string tmp = tmp_dir() + "/secret-" + UniqueSuffix() + ".part";
      int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      if (fd < 0) return Errno("cannot create " + tmp);
      Status s = WriteAll(fd, hex.data(), hex.size(), tmp);
      if (s.ok() && fsync(fd) != 0) s = Errno("cannot sync " + tmp);
      close(fd);
      if (s.ok() && link(tmp.c_str(), path.c_str()) != 0 && errno != EEXIST)
        s = Errno("cannot create " + path);
      unlink(tmp.c_str());
      GT_RETURN_IF_ERROR(s);
      SyncDir(dir_);
      existing = ReadSmallFile(path);
      if (!existing.ok()) return existing.status();
    }
    std::string text = *existing;
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' '))
      text.pop_back();
    if (text.size() < 32) return Corrupt(path + " is too short to be a server key");
    secret_ = text;
    return secret_;
  }

  StatusOr<std::unique_ptr<UploadStaging>> BeginUpload() override {
    std::string path = tmp_dir() + "/upload-" + UniqueSuffix() + ".part";
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
    if (fd < 0) return Errno("cannot create upload file");
    return std::unique_ptr<UploadStaging>(std::make_unique<LocalStaging>(fd, path));
  }

  StatusOr<CommitResult> Commit(UploadStaging& staging, const std::string& id, const std::string& owner_hash,
                                const std::string& format, const std::string& name,
                                int64_t now_unix) override {
    GT_ASSERT(IsValidTraceId(id));
    auto& local = static_cast<LocalStaging&>(staging);
    GT_ASSERT_MSG(local.finished(), "Commit before Finish");
    std::lock_guard<std::mutex> lock(IdMutex(id));
    GT_RETURN_IF_ERROR(MakeDir(fan_dir(id)));
    CommitResult result;
    struct stat st;
    if (stat(data_path(id).c_str(), &st) == 0) {
      auto meta = ReadMetaLocked(id, static_cast<uint64_t>(st.st_size));
      if (!meta.ok()) return meta.status();
      result.meta = std::move(*meta);
      AddOwner(result.meta, owner_hash);
      result.meta.accessed_unix = now_unix;
      if (result.meta.name.empty()) result.meta.name = name;
      GT_RETURN_IF_ERROR(WriteMetaLocked(id, result.meta));
      return result;  // the staging object's destructor drops the duplicate bytes
    }
    result.created = true;
    result.meta.bytes = staging.size();
    result.meta.uploaded_unix = now_unix;
    result.meta.accessed_unix = now_unix;
    result.meta.format = format;
    result.meta.name = name;
    AddOwner(result.meta, owner_hash);
    // Metadata first: a crash between the two renames leaves an orphan .json (harmless, overwritten by the
    // next upload of that content) rather than a trace without owners.
    GT_RETURN_IF_ERROR(WriteMetaLocked(id, result.meta));
    if (rename(local.path().c_str(), data_path(id).c_str()) != 0) return Errno("cannot publish trace");
    local.MarkCommitted();
    SyncDir(fan_dir(id));
    return result;
  }

  StatusOr<TraceMeta> Head(const std::string& id) override {
    GT_ASSERT(IsValidTraceId(id));
    std::lock_guard<std::mutex> lock(IdMutex(id));
    struct stat st;
    if (stat(data_path(id).c_str(), &st) != 0) return NotFound("no such trace");
    return ReadMetaLocked(id, static_cast<uint64_t>(st.st_size));
  }

  StatusOr<std::shared_ptr<const TraceBlob>> Open(const std::string& id) override {
    GT_ASSERT(IsValidTraceId(id));
    {
      std::lock_guard<std::mutex> lock(cache_mu_);
      auto it = cache_.find(id);
      if (it != cache_.end()) {
        lru_.splice(lru_.begin(), lru_, it->second.lru_pos);
        return it->second.blob;
      }
    }
    // The id lock orders this miss against a delete (which evicts under the same lock), so a blob mapped just
    // before an unlink is never cached after it. A blob handed out earlier still reads the old bytes (POSIX).
    std::lock_guard<std::mutex> id_lock(IdMutex(id));
    auto blob = MapFile(data_path(id));
    if (!blob.ok()) return blob.status();
    std::lock_guard<std::mutex> lock(cache_mu_);
    if (cache_.find(id) == cache_.end()) {
      lru_.push_front(id);
      cache_[id] = CacheEntry{*blob, lru_.begin()};
      cached_bytes_ += (*blob)->size();
      while (!lru_.empty() && (cache_.size() > kCacheEntries || cached_bytes_ > kCacheBytes)) {
        auto victim = cache_.find(lru_.back());
        cached_bytes_ -= victim->second.blob->size();
        cache_.erase(victim);
        lru_.pop_back();
      }
    }
    return *blob;
  }

  Status Touch(const std::string& id, int64_t now_unix) override {
    GT_ASSERT(IsValidTraceId(id));
    std::lock_guard<std::mutex> lock(IdMutex(id));
    struct stat st;
    if (stat(data_path(id).c_str(), &st) != 0) return NotFound("no such trace");
    auto meta = ReadMetaLocked(id, static_cast<uint64_t>(st.st_size));
    if (!meta.ok()) return meta.status();
    meta->accessed_unix = std::max(meta->accessed_unix, now_unix);
    return WriteMetaLocked(id, *meta);
  }

  StatusOr<bool> RemoveOwner(const std::string& id, const std::string& owner_hash) override {
    GT_ASSERT(IsValidTraceId(id));
    std::lock_guard<std::mutex> lock(IdMutex(id));
    struct stat st;
    if (stat(data_path(id).c_str(), &st) != 0) return NotFound("no such trace");
    auto meta = ReadMetaLocked(id, static_cast<uint64_t>(st.st_size));
    if (!meta.ok()) return meta.status();
    if (!owner_hash.empty()) {
      auto& owners = meta->owner_hashes;
      auto it = std::find_if(owners.begin(), owners.end(),
                             [&](const std::string& o) { return ConstantTimeEquals(o, owner_hash); });
      if (it == owners.end()) return InvalidArgument("not an owner of this trace");
      owners.erase(it);
      if (!owners.empty()) {
        GT_RETURN_IF_ERROR(WriteMetaLocked(id, *meta));
        return false;
      }
    }
    // Data first: once it is gone the trace is gone, whatever happens to the metadata.
    if (unlink(data_path(id).c_str()) != 0 && errno != ENOENT) return Errno("cannot delete trace");
    unlink(meta_path(id).c_str());
    unlink(index_path(id).c_str());  // a cache of the bytes: nothing to keep once they are gone
    SyncDir(fan_dir(id));
    Evict(id);
    return true;
  }

  StatusOr<LocalFiles> Local(const std::string& id) override {
    GT_ASSERT(IsValidTraceId(id));
    return LocalFiles{data_path(id), index_path(id)};
  }

  Status ForEach(const std::function<void(const std::string& id, const TraceMeta& meta)>& visit) override {
    const std::string root = dir_ + "/traces";
    DIR* top = opendir(root.c_str());
    if (top == nullptr) return Errno("cannot list " + root);
    std::vector<std::string> ids;
    while (dirent* fan = readdir(top)) {
      if (fan->d_name[0] == '.') continue;
      std::string sub = root + "/" + fan->d_name;
      DIR* d = opendir(sub.c_str());
      if (d == nullptr) continue;
      while (dirent* e = readdir(d)) {
        std::string name = e->d_name;
        const std::string ext = ".gtrace";
        if (name.size() == kTraceIdChars + ext.size() && name.compare(kTraceIdChars, ext.size(), ext) == 0) {
          std::string id = name.substr(0, kTraceIdChars);
          if (IsValidTraceId(id)) ids.push_back(id);
        }
      }
      closedir(d);
    }
    closedir(top);
    for (const auto& id : ids) {
      auto meta = Head(id);
      if (meta.ok()) visit(id, *meta);
    }
    return Status::Ok();
  }

  Status PutView(const std::string& id, const std::string& text) override {
    GT_RETURN_IF_ERROR(MakeDir(dir_ + "/views"));
    return WriteFileAtomic(tmp_dir(), view_path(id), text,
                           0640);  // same id, same text: a rewrite is harmless
  }

  StatusOr<std::string> GetView(const std::string& id) override {
    int fd = open(view_path(id).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT ? NotFound("no such view") : Errno("cannot open view " + id);
    std::string out;
    char buf[16384];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0 && out.size() <= kMaxStoredView)
      out.append(buf, static_cast<size_t>(n));
    close(fd);
    if (n < 0) return Errno("cannot read view " + id);
    if (out.size() > kMaxStoredView) return Corrupt("stored view too large");
    return out;
  }

  Status Init() {
    GT_RETURN_IF_ERROR(MakeDir(tmp_dir()));
    GT_RETURN_IF_ERROR(MakeDir(dir_ + "/traces"));
    // Leftovers of a crash mid-upload: nothing in tmp/ was ever published.
    if (lock_fd_ >= 0) {
      if (DIR* d = opendir(tmp_dir().c_str())) {
        while (dirent* e = readdir(d))
          if (e->d_name[0] != '.') unlink((tmp_dir() + "/" + e->d_name).c_str());
        closedir(d);
      }
    }
    return Status::Ok();
  }

 private:
  struct CacheEntry {
    std::shared_ptr<const TraceBlob> blob;
    std::list<std::string>::iterator lru_pos;
  };
  static constexpr size_t kCacheEntries = 256;
  static constexpr uint64_t kCacheBytes = 2ull << 30;  // address space, not memory: the page cache backs it

  std::string tmp_dir() const { return dir_ + "/tmp"; }
  std::string view_path(const std::string& id) const { return dir_ + "/views/" + id + ".view"; }
  static constexpr size_t kMaxStoredView =
      1 << 20;  // far above the server's cap: a bound on a hand-edited file
  std::string fan_dir(const std::string& id) const { return dir_ + "/traces/" + id.substr(0, 2); }
  std::string data_path(const std::string& id) const { return fan_dir(id) + "/" + id + ".gtrace"; }
  std::string index_path(const std::string& id) const { return fan_dir(id) + "/" + id + ".gtindex"; }
  std::string meta_path(const std::string& id) const { return fan_dir(id) + "/" + id + ".json"; }

  std::mutex& IdMutex(const std::string& id) { return id_mu_[std::hash<std::string>()(id) % id_mu_.size()]; }

  static void AddOwner(TraceMeta& meta, const std::string& owner_hash) {
    if (owner_hash.empty()) return;
    for (const auto& o : meta.owner_hashes)
      if (o == owner_hash) return;
    meta.owner_hashes.push_back(owner_hash);
  }

  StatusOr<TraceMeta> ReadMetaLocked(const std::string& id, uint64_t data_size) {
    auto text = ReadSmallFile(meta_path(id));
    TraceMeta meta;
    if (text.ok()) {
      auto decoded = DecodeMeta(*text);
      if (decoded.ok()) meta = std::move(*decoded);
    }
    // A missing or damaged sidecar must not lose the trace: it stays downloadable, ownerless (only expiry
    // removes it), dated now so the sweep does not take it at once.
    if (meta.uploaded_unix == 0) {
      struct stat st;
      int64_t t = stat(data_path(id).c_str(), &st) == 0 ? static_cast<int64_t>(st.st_mtime) : 0;
      meta.uploaded_unix = meta.accessed_unix = t;
    }
    meta.bytes = data_size;
    return meta;
  }

  Status WriteMetaLocked(const std::string& id, const TraceMeta& meta) {
    return WriteFileAtomic(tmp_dir(), meta_path(id), EncodeMeta(meta), 0640);
  }

  void Evict(const std::string& id) {
    std::lock_guard<std::mutex> lock(cache_mu_);
    auto it = cache_.find(id);
    if (it == cache_.end()) return;
    cached_bytes_ -= it->second.blob->size();
    lru_.erase(it->second.lru_pos);
    cache_.erase(it);
  }

  std::string dir_;
  int lock_fd_;
  std::mutex secret_mu_;
  std::string secret_;
  std::array<std::mutex, 64> id_mu_;
  std::mutex cache_mu_;
  std::unordered_map<std::string, CacheEntry> cache_;
  std::list<std::string> lru_;
  uint64_t cached_bytes_ = 0;
};

}  // namespace

StatusOr<std::unique_ptr<TraceStore>> OpenLocalDirStore(const std::string& dir_in, bool exclusive) {
  if (dir_in.empty()) return InvalidArgument("store directory is empty");
  std::string dir = dir_in;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  // Parents too, as `mkdir -p`: the default store ~/.local/share/gtrace/store on a fresh account has none.
  for (size_t slash = dir.find('/', 1); slash != std::string::npos; slash = dir.find('/', slash + 1)) {
    const std::string parent = dir.substr(0, slash);
    if (mkdir(parent.c_str(), 0755) != 0 && errno != EEXIST) return Errno("cannot create " + parent);
  }
  GT_RETURN_IF_ERROR(MakeDir(dir));
  int lock_fd = -1;
  if (exclusive) {
    const std::string lock_path = dir + "/lock";
    lock_fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0640);
    if (lock_fd < 0) return Errno("cannot open " + lock_path);
    if (flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
      close(lock_fd);
      return IoError("store " + dir + " is in use by another gtrace server");
    }
  }
  auto store = std::make_unique<LocalDirStore>(dir, lock_fd);
  GT_RETURN_IF_ERROR(store->Init());
  return std::unique_ptr<TraceStore>(std::move(store));
}

}  // namespace gt::server

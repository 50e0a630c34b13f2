#include "serve_index.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>

#include "gt/viewer/index_query.h"
#include "gt/viewer/json.h"

namespace gt::cli {
namespace {

// Free disk an index build leaves for uploads.
constexpr uint64_t kIndexDiskReserve = 64ull << 20;

// The same shape as the server's own errors.
std::string ErrorBody(int status, const std::string& reason) {
  return "{\"error\":" + viewer::JsonQuote(reason) + ",\"status\":" + std::to_string(status) + "}";
}

// The stored trace, mapped read-only for the build (a trace is never changed in place: uploads publish by
// rename, deletes unlink, so the mapping stays valid).
class MappedTrace {
 public:
  static StatusOr<std::unique_ptr<MappedTrace>> Open(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NotFound("cannot open the stored trace: " + std::string(std::strerror(errno)));
    struct stat st;
    auto t = std::unique_ptr<MappedTrace>(new MappedTrace());
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
      void* p = mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (p != MAP_FAILED) t->p_ = p, t->n_ = size_t(st.st_size);
    }
    ::close(fd);
    if (!t->p_) return IoError("cannot map the stored trace");
    return t;
  }
  ~MappedTrace() {
    if (p_) munmap(p_, n_);
  }
  std::span<const uint8_t> bytes() const { return {static_cast<const uint8_t*>(p_), n_}; }

 private:
  MappedTrace() = default;
  void* p_ = nullptr;
  size_t n_ = 0;
};

}  // namespace

IndexService::IndexService(server::TraceStore* store, IndexServiceOptions options)
    : store_(store), options_(options), worker_([this] { Run(); }) {}

IndexService::~IndexService() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

void IndexService::Prepare(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (Find(id) || pending_.count(id) || queue_.size() >= options_.max_queued) return;
  failed_.erase(id);  // a new upload of the same bytes gets another try
  pending_.insert(id);
  queue_.push_back(id);
  cv_.notify_one();
}

std::shared_ptr<const viewer::MappedIndex> IndexService::Find(const std::string& id) {
  for (auto it = open_.begin(); it != open_.end(); ++it)
    if (it->first == id) {
      open_.splice(open_.begin(), open_, it);
      return it->second;
    }
  return nullptr;
}

server::TraceQueryAnswer IndexService::Answer(const server::TraceQuery& q) {
  std::shared_ptr<const viewer::MappedIndex> index;
  {
    std::lock_guard<std::mutex> lock(mu_);
    index = Find(q.id);
    if (!index) {
      if (auto f = failed_.find(q.id); f != failed_.end())
        return {422, ErrorBody(422, "this trace has no index: " + f->second), 0};
      if (!pending_.count(q.id)) {
        if (queue_.size() >= options_.max_queued)
          return {503, ErrorBody(503, "too many traces waiting for their index; try again later"), 5};
        pending_.insert(q.id);
        queue_.push_back(q.id);
        cv_.notify_one();
      }
      return {202, ErrorBody(202, "the index of this trace is being built; ask again shortly"), 1};
    }
  }
  // Outside the lock: queries run in parallel on the mapping they hold.
  const viewer::IndexAnswer a = viewer::AnswerIndexQuery(*index, q.what, q.params);
  if (const std::string why = index->damage(); !why.empty()) {
    // A block failed its checks (open reads only the tables): this answer was an error, other queries on
    // the index may read the same block, so the index is dropped and rebuilt from the trace. Those in
    // flight keep their mapping until they finish.
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = open_.begin(); it != open_.end(); ++it)
      if (it->second == index) {
        open_.erase(it);
        if (auto files = store_->Local(q.id); files.ok()) std::remove(files->index.c_str());
        if (options_.log)
          std::fprintf(stderr, "gtrace serve: index of %s: %s; rebuilding\n", q.id.c_str(), why.c_str());
        if (!pending_.count(q.id) && queue_.size() < options_.max_queued) {
          pending_.insert(q.id);
          queue_.push_back(q.id);
          cv_.notify_one();
        }
        break;
      }
  }
  return {a.status, a.body, 0};
}

void IndexService::WaitIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [this] { return pending_.empty(); });
}

void IndexService::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    const std::string id = queue_.front();
    queue_.pop_front();
    lock.unlock();
    Build(id);
    lock.lock();
    pending_.erase(id);
    if (pending_.empty()) idle_cv_.notify_all();
  }
}

// Opens the index, or (no index, stale, damaged) loads the trace and builds it. One at a time: a build holds
// the whole model for a moment, in memory or (bigger than the memory free) in spill files.
void IndexService::Build(const std::string& id) {
  const auto t0 = std::chrono::steady_clock::now();
  auto fail = [&](const std::string& why) {
    std::lock_guard<std::mutex> lock(mu_);
    failed_[id] = why;
    if (options_.log) std::fprintf(stderr, "gtrace serve: index of %s: %s\n", id.c_str(), why.c_str());
  };
  auto files = store_->Local(id);
  if (!files.ok()) return fail(files.status().message());
  auto trace = MappedTrace::Open(files->trace);
  if (!trace.ok()) return fail(trace.status().message());
  // The index is a cache: it must not take the disk space uploads need (a store that filled up refused
  // uploads while indexes of earlier ones were being written). A build that would leave less than the reserve
  // is not started; an index already on disk is opened whatever the space.
  // A trace whose model would not fit in memory builds with the model's columns spilled to files beside the
  // index (LoadOptions::spill_dir): about 3.5x the .gtrace of disk while it builds (22.5 GB at 1 B events,
  // docs/benchmarks.md), counted below.
  const uint64_t trace_bytes = (*trace)->bytes().size();
  const std::string dir = files->index.substr(0, files->index.find_last_of('/') + 1);
  const bool spill = viewer::IndexBuildShouldSpill(
      trace_bytes, options_.build_memory ? options_.build_memory : viewer::MemoryAvailableForModels());
  struct stat have {};
  if (stat(files->index.c_str(), &have) != 0) {
    struct statvfs fs {};
    // The index is ~0.8x the .gtrace; twice that leaves room for a trace that compresses worse.
    const uint64_t need = (spill ? 5 : 2) * trace_bytes + kIndexDiskReserve;
    if (statvfs(dir.empty() ? "." : dir.c_str(), &fs) == 0 && uint64_t(fs.f_bavail) * fs.f_frsize < need)
      return fail("not enough free disk for its index (about " + std::to_string(need >> 20) + " MiB" +
                  (spill ? ", building through the disk since its model exceeds the memory free," : "") +
                  " with the reserve kept for uploads, " +
                  std::to_string((uint64_t(fs.f_bavail) * fs.f_frsize) >> 20) + " MiB free)");
  }
  const viewer::IndexSource source{trace_bytes, id};
  viewer::LoadOptions load;
  load.threads = 1;
  if (spill) load.spill_dir = dir.empty() ? "." : dir;
  viewer::IndexBuildReport report;
  auto index = viewer::OpenOrBuildIndex((*trace)->bytes(), source, files->index, load, &report,
                                        viewer::IndexSpill::kNever);
  if (!index.ok()) return fail(index.status().message());
  if (options_.log)
    std::fprintf(stderr, "gtrace serve: index of %s %s in %.2f s%s%s%s\n", id.c_str(),
                 report.rebuilt ? "built" : "opened",
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                 report.rebuilt ? ": " : "", report.rebuilt ? report.why.c_str() : "",
                 report.rebuilt && !report.spill_dir.empty() ? " (its model spilled to disk)" : "");
  std::lock_guard<std::mutex> lock(mu_);
  open_.emplace_front(id, std::shared_ptr<const viewer::MappedIndex>(std::move(*index)));
  while (open_.size() > options_.max_open) open_.pop_back();
}

}  // namespace gt::cli

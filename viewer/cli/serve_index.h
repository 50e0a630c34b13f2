// The viewer index of `gtrace serve`'s stored traces: built once per trace on a thread of its own (queued at
// upload, or at the first query after a restart or a rebuild), kept mapped for the queries of
// GET /api/t/<id>/... (gt/viewer/index_query.h), rebuilt when stale or damaged. docs/server.md "Remote
// traces".
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "gt/server/server.h"
#include "gt/server/store.h"
#include "gt/viewer/index.h"

namespace gt::cli {

struct IndexServiceOptions {
  size_t max_open = 16;      // indexes kept mapped (least recently used go first)
  size_t max_queued = 1024;  // builds waiting: beyond this a query is told to come back later (503)
  bool log = false;          // one line per build on stderr
  // Memory a build may hold its model in; a trace whose model would not fit builds spilled to disk
  // (viewer::IndexBuildShouldSpill). 0: the memory free when the build starts.
  uint64_t build_memory = 0;
};

class IndexService {
 public:
  IndexService(server::TraceStore* store, IndexServiceOptions options = {});
  ~IndexService();  // stops after the build in progress
  IndexService(const IndexService&) = delete;
  IndexService& operator=(const IndexService&) = delete;

  // ServerOptions::on_stored: opens or builds the index off the calling thread.
  void Prepare(const std::string& id);
  // ServerOptions::trace_query: an answer from the mapped index, or 202 while it is being built.
  server::TraceQueryAnswer Answer(const server::TraceQuery& query);
  // Blocks until nothing is queued or building (tests, benchmarks).
  void WaitIdle();

 private:
  void Run();
  void Build(const std::string& id);
  std::shared_ptr<const viewer::MappedIndex> Find(const std::string& id);  // mu_ held

  server::TraceStore* store_;
  IndexServiceOptions options_;
  std::mutex mu_;
  std::condition_variable cv_, idle_cv_;
  std::list<std::pair<std::string, std::shared_ptr<const viewer::MappedIndex>>> open_;  // most recent first
  std::deque<std::string> queue_;
  std::set<std::string> pending_;              // queued or building
  std::map<std::string, std::string> failed_;  // id -> why the trace could not be indexed
  bool stop_ = false;
  std::thread worker_;
};

}  // namespace gt::cli

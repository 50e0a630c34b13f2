// The page's client (RemoteTrace) answered in process from a mapped index, as `gtrace-ui --index` and
// `gtrace serve` answer it: requests queue up until Pump answers them, so a test sees the client before and
// after the answers.
#pragma once

#include <deque>
#include <string>
#include <utility>

#include "gt/viewer/index.h"
#include "gt/viewer/index_query.h"
#include "gt/viewer/remote.h"

namespace gt::test {

struct InProcessRemote {
  const viewer::MappedIndex& index;
  std::deque<std::pair<uint64_t, std::string>> queue;
  viewer::RemoteTrace r{[this](uint64_t id, const std::string& url) { queue.push_back({id, url}); }};
  explicit InProcessRemote(const viewer::MappedIndex& mapped) : index(mapped) {}
  void Pump() {
    while (!queue.empty()) {
      auto [id, url] = queue.front();
      queue.pop_front();
      auto [what, params] = viewer::SplitIndexUrl(url);
      const viewer::IndexAnswer a = viewer::AnswerIndexQuery(index, what, params);
      r.OnAnswer(id, a.status, a.body);
    }
  }
};

}  // namespace gt::test

// ThreadPool: workers sleep on a condition variable between jobs; a job's indices are claimed with one atomic
// counter, and the caller works on them too.
#include "parallel.h"

#include <algorithm>
#include <atomic>
#include <vector>

#if GT_VIEWER_THREADS
#include <condition_variable>
#include <mutex>
#include <thread>
#endif

namespace gt::viewer::detail {

#if GT_VIEWER_THREADS

struct ThreadPool::State {
  std::vector<std::thread> workers;
  std::mutex mutex;
  std::condition_variable wake, idle;
  uint64_t generation = 0;  // bumped per job; a worker runs each generation once
  bool stop = false;
  // The current job.
  size_t n = 0;
  Call call = nullptr;
  void* ctx = nullptr;
  std::atomic<size_t> next{0};
  unsigned busy = 0;  // workers that have not finished the current generation

  void Work(size_t limit, unsigned slot) {
    for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < limit;) call(ctx, i, slot);
  }

  void Loop(unsigned slot) {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex);
    while (true) {
      wake.wait(lock, [&] { return stop || generation != seen; });
      if (stop) return;
      seen = generation;
      const size_t limit = n;
      lock.unlock();
      Work(limit, slot);
      lock.lock();
      if (--busy == 0) idle.notify_one();
    }
  }
};

ThreadPool::ThreadPool(unsigned threads) : state_(std::make_unique<State>()) {
  if (threads == 0) threads = HardwareThreads();
  threads = std::min(threads, 256u);
  for (unsigned w = 1; w < threads; ++w) state_->workers.emplace_back([s = state_.get(), w] { s->Loop(w); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->stop = true;
  }
  state_->wake.notify_all();
  for (std::thread& t : state_->workers) t.join();
}

unsigned ThreadPool::size() const {
  return unsigned(state_->workers.size()) + 1;
}

unsigned ThreadPool::HardwareThreads() {
  return std::max(1u, std::thread::hardware_concurrency());
}

void ThreadPool::Run(size_t n, Call call, void* ctx) {
  State& s = *state_;
  if (n == 0) return;
  if (s.workers.empty() || n == 1) {
    for (size_t i = 0; i < n; ++i) call(ctx, i, 0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.n = n;
    s.call = call;
    s.ctx = ctx;
    s.next.store(0, std::memory_order_relaxed);
    s.busy = unsigned(s.workers.size());
    ++s.generation;
  }
  s.wake.notify_all();
  s.Work(n, 0);
  std::unique_lock<std::mutex> lock(s.mutex);
  s.idle.wait(lock, [&] { return s.busy == 0; });
}

#else  // no threads in this build

struct ThreadPool::State {};
ThreadPool::ThreadPool(unsigned) : state_(std::make_unique<State>()) {}
ThreadPool::~ThreadPool() = default;
unsigned ThreadPool::size() const {
  return 1;
}
unsigned ThreadPool::HardwareThreads() {
  return 1;
}
void ThreadPool::Run(size_t n, Call call, void* ctx) {
  for (size_t i = 0; i < n; ++i) call(ctx, i, 0);
}

#endif

}  // namespace gt::viewer::detail

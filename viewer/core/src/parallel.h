// A small pool of persistent threads for the parallel load (chunk routing, per-track lane building). Threads
// start once per loader, not per Step: a Step is a few milliseconds of work on 16 threads.
//
// Builds without threads (wasm without pthreads) get a pool of one: For() runs on the calling thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)
#define GT_VIEWER_THREADS 1
#else
#define GT_VIEWER_THREADS 0
#endif

namespace gt::viewer::detail {

class ThreadPool {
 public:
  // `threads` in all, the calling thread included; 0 = one per hardware thread.
  explicit ThreadPool(unsigned threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned size() const;
  // Calls fn(i, slot) once for every i in [0, n) and returns when all calls have returned. Indices are handed
  // out in ascending order to whichever thread is free (put the largest tasks first); `slot` in [0, size())
  // names the thread (the caller is 0), for per-thread scratch. fn must not call For() itself.
  template <typename F>
  void For(size_t n, F&& fn) {
    Run(
        n, [](void* ctx, size_t i, unsigned slot) { (*static_cast<F*>(ctx))(i, slot); }, &fn);
  }

  static unsigned HardwareThreads();

 private:
  using Call = void (*)(void*, size_t, unsigned);
  void Run(size_t n, Call call, void* ctx);
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace gt::viewer::detail

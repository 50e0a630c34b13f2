// libgtrace_osrt.so: OS runtime waits (gcollect --trace=osrt). gcollect preloads it into every process it
// starts; each wrapped libc call is timed with CLOCK_MONOTONIC (vDSO, no syscall) and, when it lasted at
// least GTRACE_OSRT_THRESHOLD_NS, put into a preallocated lock-free buffer that the injection library drains
// (dlsym, osrt_abi.h) into the trace. It depends on libc only: it also runs in processes that never load
// CUDA, where nothing drains it (their waits are counted at exit, not recorded).
//
// Rules of the wrapped path: no allocation, no lock, errno as the real call left it, and nothing that is not
// async-signal-safe (read, poll, select, sleeps, waitpid may be called from signal handlers): clock_gettime,
// atomics and initial-exec TLS only. The real functions are resolved in the constructor (dlsym is not
// async-signal-safe; a call made before the constructor resolves lazily, at start-up only).
#define _GNU_SOURCE
#undef _FORTIFY_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "osrt_abi.h"

#define GT_EXPORT __attribute__((visibility("default")))
#define GT_TLS __attribute__((tls_model("initial-exec")))

// ---- the buffer ------------------------------------------------------------------------------------------
// A bounded multi-producer queue (Vyukov's): each slot's sequence number says whose turn it is. Stored as
// (sequence - slot index) so that the zeroed .bss is the initial state: no constructor touches 512 KiB of
// pages in every process, and a process that never waits above the threshold never faults them in.
enum { kCap = 16384 };  // power of two; ~16k waits between two drains (the injection drains every 50 ms)
typedef struct {
  _Atomic uint64_t seq;
  GtOsrtEvent ev;
} Slot;
static Slot g_ring[kCap];
static _Atomic uint64_t g_head;  // next position a producer claims
static uint64_t g_tail;          // next position the (single) drainer reads
static _Atomic uint64_t g_recorded, g_dropped;
static _Atomic int g_drained;  // an injection drained this process's buffer at least once
static int64_t g_threshold_ns = 1000;
static GT_TLS __thread uint32_t t_tid;
static GT_TLS __thread int t_ignore;

static inline uint64_t SlotSeq(const Slot* s, uint64_t idx) {
  return atomic_load_explicit(&s->seq, memory_order_acquire) + idx;
}
static inline void SetSlotSeq(Slot* s, uint64_t idx, uint64_t seq) {
  atomic_store_explicit(&s->seq, seq - idx, memory_order_release);
}

static void Push(int64_t start, int64_t end, uint32_t func) {
  if (!t_tid) t_tid = (uint32_t)gettid();
  uint64_t pos = atomic_load_explicit(&g_head, memory_order_relaxed);
  for (;;) {
    const uint64_t idx = pos & (kCap - 1);
    Slot* s = &g_ring[idx];
    const int64_t dif = (int64_t)(SlotSeq(s, idx) - pos);
    if (dif == 0) {
      if (atomic_compare_exchange_weak_explicit(&g_head, &pos, pos + 1, memory_order_relaxed,
                                                memory_order_relaxed)) {
        s->ev.start_ns = start;
        s->ev.end_ns = end;
        s->ev.tid = t_tid;
        s->ev.func = func;
        SetSlotSeq(s, idx, pos + 1);
        atomic_fetch_add_explicit(&g_recorded, 1, memory_order_relaxed);
        return;
      }
    } else if (dif < 0) {  // full: the drainer is a whole buffer behind
      atomic_fetch_add_explicit(&g_dropped, 1, memory_order_relaxed);
      return;
    } else {
      pos = atomic_load_explicit(&g_head, memory_order_relaxed);
    }
  }
}

GT_EXPORT uint32_t gtrace_osrt_drain(GtOsrtEvent* out, uint32_t max) {
  atomic_store_explicit(&g_drained, 1, memory_order_relaxed);
  uint32_t n = 0;
  while (n < max) {
    const uint64_t pos = g_tail, idx = pos & (kCap - 1);
    Slot* s = &g_ring[idx];
    if (SlotSeq(s, idx) != pos + 1) break;  // empty, or a producer is between its claim and its publish
    out[n++] = s->ev;
    SetSlotSeq(s, idx, pos + kCap);
    g_tail = pos + 1;
  }
  return n;
}

GT_EXPORT void gtrace_osrt_stats(GtOsrtStats* out) {
  out->recorded = atomic_load_explicit(&g_recorded, memory_order_relaxed);
  out->dropped = atomic_load_explicit(&g_dropped, memory_order_relaxed);
  out->timed = 0;
  out->threshold_ns = g_threshold_ns;
}

GT_EXPORT void gtrace_osrt_ignore_thread(void) {
  t_ignore = 1;
}

// ---- the wrapped calls
// -------------------------------------------------------------------------------------
#define GT_FUNCS(X)                                                                                          \
  X(read)                                                                                                    \
  X(recv) X(recvmsg) X(poll) X(ppoll) X(select) X(pselect) X(epoll_wait) X(epoll_pwait) X(nanosleep)         \
      X(clock_nanosleep) X(usleep) X(sleep) X(pthread_cond_wait) X(pthread_cond_timedwait)                   \
          X(pthread_cond_clockwait) X(sem_wait) X(sem_timedwait) X(sem_clockwait) X(pthread_join) X(waitpid) \
              X(wait) X(futex)
#define GT_ENUM(f) kF_##f,
enum { GT_FUNCS(GT_ENUM) kFuncCount };
#define GT_NAME(f) #f,
static const char* const kNames[] = {GT_FUNCS(GT_NAME)};

GT_EXPORT const char* gtrace_osrt_func_name(uint32_t func) {
  return func < kFuncCount ? kNames[func] : 0;
}

static inline int64_t NowNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
static inline int64_t Begin(void) {
  return t_ignore ? 0 : NowNs();
}
static inline void End(int64_t t0, uint32_t func) {
  if (!t0) return;
  const int saved = errno;
  const int64_t t1 = NowNs();
  if (t1 - t0 >= g_threshold_ns) Push(t0, t1, func);
  errno = saved;
}

static void* Next(const char* name) {
  return dlsym(RTLD_NEXT, name);
}
#define GT_REAL(f) static __typeof__(f)* real_##f;
GT_REAL(read)
GT_REAL(recv) GT_REAL(recvmsg) GT_REAL(poll) GT_REAL(ppoll) GT_REAL(select) GT_REAL(pselect)
    GT_REAL(epoll_wait) GT_REAL(epoll_pwait) GT_REAL(nanosleep) GT_REAL(clock_nanosleep) GT_REAL(usleep)
        GT_REAL(sleep) GT_REAL(pthread_cond_wait) GT_REAL(pthread_cond_timedwait)
            GT_REAL(pthread_cond_clockwait) GT_REAL(sem_wait) GT_REAL(sem_timedwait) GT_REAL(sem_clockwait)
                GT_REAL(pthread_join) GT_REAL(waitpid) GT_REAL(wait) GT_REAL(syscall)
#define GT_RESOLVE(f) \
  if (!real_##f) real_##f = (__typeof__(f)*)Next(#f);

// Resolves lazily when called before the constructor; a symbol libc lacks fails like the call would not
// exist.
#define GT_WRAP(ret, f, params, args, fail) \
  ret f params {                            \
    GT_RESOLVE(f)                           \
    if (!real_##f) {                        \
      errno = ENOSYS;                       \
      return fail;                          \
    }                                       \
    const int64_t t0 = Begin();             \
    ret gt_r_ = real_##f args;              \
    End(t0, kF_##f);                        \
    return gt_r_;                           \
  }

                    GT_EXPORT
    GT_WRAP(ssize_t, read, (int fd, void* buf, size_t n), (fd, buf, n), -1) GT_EXPORT
    GT_WRAP(ssize_t, recv, (int fd, void* buf, size_t n, int flags), (fd, buf, n, flags), -1) GT_EXPORT
    GT_WRAP(ssize_t, recvmsg, (int fd, struct msghdr* m, int flags), (fd, m, flags), -1) GT_EXPORT
    GT_WRAP(int, poll, (struct pollfd * f, nfds_t n, int ms), (f, n, ms), -1) GT_EXPORT
    GT_WRAP(int, ppoll, (struct pollfd * f, nfds_t n, const struct timespec* t, const sigset_t* m),
            (f, n, t, m), -1) GT_EXPORT
    GT_WRAP(int, select, (int n, fd_set* r, fd_set* w, fd_set* e, struct timeval* t), (n, r, w, e, t),
            -1) GT_EXPORT
    GT_WRAP(int, pselect,
            (int n, fd_set* r, fd_set* w, fd_set* e, const struct timespec* t, const sigset_t* m),
            (n, r, w, e, t, m), -1) GT_EXPORT
    GT_WRAP(int, epoll_wait, (int fd, struct epoll_event* ev, int n, int ms), (fd, ev, n, ms), -1) GT_EXPORT
    GT_WRAP(int, epoll_pwait, (int fd, struct epoll_event* ev, int n, int ms, const sigset_t* m),
            (fd, ev, n, ms, m), -1) GT_EXPORT
    GT_WRAP(int, nanosleep, (const struct timespec* t, struct timespec* rem), (t, rem), -1)
    // clock_nanosleep and the pthread/sem calls return the error number (errno untouched by them).
    GT_EXPORT
    GT_WRAP(int, clock_nanosleep, (clockid_t c, int fl, const struct timespec* t, struct timespec* rem),
            (c, fl, t, rem), ENOSYS)
GT_EXPORT GT_WRAP(int, usleep, (useconds_t us), (us), -1) GT_EXPORT
    GT_WRAP(unsigned int, sleep, (unsigned int s), (s), s)
GT_EXPORT GT_WRAP(int, pthread_cond_wait, (pthread_cond_t * c, pthread_mutex_t* m), (c, m), ENOSYS)
GT_EXPORT GT_WRAP(int, pthread_cond_timedwait,
                  (pthread_cond_t * c, pthread_mutex_t* m, const struct timespec* t), (c, m, t), ENOSYS)
GT_EXPORT GT_WRAP(int, pthread_cond_clockwait,
                  (pthread_cond_t * c, pthread_mutex_t* m, clockid_t k, const struct timespec* t),
                  (c, m, k, t), ENOSYS)
GT_EXPORT GT_WRAP(int, sem_wait, (sem_t * s), (s), -1) GT_EXPORT
    GT_WRAP(int, sem_timedwait, (sem_t * s, const struct timespec* t), (s, t), -1) GT_EXPORT
    GT_WRAP(int, sem_clockwait, (sem_t * s, clockid_t k, const struct timespec* t), (s, k, t), -1) GT_EXPORT
    GT_WRAP(int, pthread_join, (pthread_t t, void** ret), (t, ret), ENOSYS)
GT_EXPORT GT_WRAP(pid_t, waitpid, (pid_t p, int* st, int o), (p, st, o), -1) GT_EXPORT
    GT_WRAP(pid_t, wait, (int* st), (st), -1)

    // futex() has no libc wrapper: code calls syscall(SYS_futex, ...). Only the waiting operations are timed;
    // every other system call goes straight through. Six register arguments cover every Linux system call.
    GT_EXPORT long syscall(long n, ...) {
  va_list ap;
  va_start(ap, n);
  long a[6];
  for (int i = 0; i < 6; ++i) a[i] = va_arg(ap, long);
  va_end(ap);
  GT_RESOLVE(syscall)
  if (!real_syscall) {
    errno = ENOSYS;
    return -1;
  }
  int64_t t0 = 0;
  if (n == SYS_futex) {
    const int op = (int)a[1] & FUTEX_CMD_MASK;
    if (op == FUTEX_WAIT || op == FUTEX_WAIT_BITSET || op == FUTEX_LOCK_PI || op == FUTEX_WAIT_REQUEUE_PI)
      t0 = Begin();
  }
  const long r = real_syscall(n, a[0], a[1], a[2], a[3], a[4], a[5]);
  End(t0, kF_futex);
  return r;
}

// ---- process lifetime
// --------------------------------------------------------------------------------------- A child forked
// without exec starts with an empty buffer of its own: the parent's undrained waits are the parent's (its
// injection writes them), and the cached thread id is the parent thread's.
static void AtForkChild(void) {
  const uint64_t head = atomic_load_explicit(&g_head, memory_order_relaxed);
  for (uint64_t pos = g_tail; pos != head; ++pos)
    SetSlotSeq(&g_ring[pos & (kCap - 1)], pos & (kCap - 1), pos + kCap);
  g_tail = head;
  atomic_store(&g_recorded, 0);
  atomic_store(&g_dropped, 0);
  atomic_store(&g_drained, 0);
  t_tid = 0;
}

__attribute__((constructor)) static void OsrtStart(void) {
  const char* v = getenv(GT_OSRT_THRESHOLD_ENV);
  if (v && *v) {
    char* end = 0;
    const long long ns = strtoll(v, &end, 10);
    if (!*end && ns >= 0) g_threshold_ns = ns;
  }
#define GT_RESOLVE_NOW(f) GT_RESOLVE(f)
  GT_RESOLVE_NOW(read)
  GT_RESOLVE_NOW(recv) GT_RESOLVE_NOW(recvmsg) GT_RESOLVE_NOW(poll) GT_RESOLVE_NOW(ppoll)
      GT_RESOLVE_NOW(select) GT_RESOLVE_NOW(pselect) GT_RESOLVE_NOW(epoll_wait) GT_RESOLVE_NOW(epoll_pwait)
          GT_RESOLVE_NOW(nanosleep) GT_RESOLVE_NOW(clock_nanosleep) GT_RESOLVE_NOW(usleep)
              GT_RESOLVE_NOW(sleep) GT_RESOLVE_NOW(pthread_cond_wait) GT_RESOLVE_NOW(pthread_cond_timedwait)
                  GT_RESOLVE_NOW(pthread_cond_clockwait) GT_RESOLVE_NOW(sem_wait)
                      GT_RESOLVE_NOW(sem_timedwait) GT_RESOLVE_NOW(sem_clockwait) GT_RESOLVE_NOW(pthread_join)
                          GT_RESOLVE_NOW(waitpid) GT_RESOLVE_NOW(wait) GT_RESOLVE_NOW(syscall)
                              pthread_atfork(0, 0, AtForkChild);
}

// Nothing drained this process (it never started CUDA, so no injection ran): its waits are not in the trace.
// Say how many, for gcollect's loss report. open/write/close only; a failure loses the count, nothing else.
__attribute__((destructor)) static void OsrtEnd(void) {
  const uint64_t n = atomic_load(&g_recorded) + atomic_load(&g_dropped);
  const char* dir = getenv(GT_OSRT_PARTS_ENV);
  if (atomic_load(&g_drained) || !n || !dir || !*dir) return;
  char path[4096], text[32];
  if (snprintf(path, sizeof path, "%s/" GT_OSRT_UNRECORDED_PREFIX "%d.txt", dir, (int)getpid()) >=
      (int)sizeof path)
    return;
  const int len = snprintf(text, sizeof text, "%llu\n", (unsigned long long)n);
  const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  if (write(fd, text, (size_t)len) < 0) { /* the count is lost; nothing else depends on it */
  }
  close(fd);
}

// The interface between libgtrace_osrt.so (the OS-runtime shim gcollect preloads with --trace=osrt) and the
// injection library, which finds these functions with dlsym in its own process and drains the shim's buffer
// into the trace. C, so the shim depends on libc only; both sides include this one declaration.
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// One wait longer than the threshold, on the trace clock (CLOCK_MONOTONIC ns).
typedef struct GtOsrtEvent {
  int64_t start_ns;
  int64_t end_ns;
  uint32_t tid;
  uint32_t func;  // index into the shim's name table: gtrace_osrt_func_name(func)
} GtOsrtEvent;

// What the shim counted since it started in this process (or since fork, in a child).
typedef struct GtOsrtStats {
  uint64_t recorded;     // waits above the threshold put in the buffer
  uint64_t dropped;      // waits above the threshold that found the buffer full (the drainer was behind)
  uint64_t timed;        // wrapped calls made (above the threshold or not)
  int64_t threshold_ns;  // GTRACE_OSRT_THRESHOLD_NS as the shim read it
} GtOsrtStats;

// Copies up to `max` waiting events into `out`, oldest first; returns how many. One drainer at a time.
typedef uint32_t (*GtOsrtDrainFn)(GtOsrtEvent* out, uint32_t max);
typedef void (*GtOsrtStatsFn)(GtOsrtStats* out);
// "pthread_cond_wait", ...; null for an unknown index.
typedef const char* (*GtOsrtFuncNameFn)(uint32_t func);
// The calling thread's waits are not recorded from now on (the injection's own threads).
typedef void (*GtOsrtIgnoreThreadFn)(void);

#define GT_OSRT_DRAIN "gtrace_osrt_drain"
#define GT_OSRT_STATS "gtrace_osrt_stats"
#define GT_OSRT_FUNC_NAME "gtrace_osrt_func_name"
#define GT_OSRT_IGNORE_THREAD "gtrace_osrt_ignore_thread"
#define GT_OSRT_THRESHOLD_ENV "GTRACE_OSRT_THRESHOLD_NS"
#define GT_OSRT_PARTS_ENV "GTRACE_PARTS_DIR"
// A process that never drained (no CUDA, so no injection) leaves <parts dir>/osrt-unrecorded-<pid>.txt
// holding "<count>\n": gcollect adds them up as the loss osrt_waits_unrecorded.
#define GT_OSRT_UNRECORDED_PREFIX "osrt-unrecorded-"

#ifdef __cplusplus
}
#endif

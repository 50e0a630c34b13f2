// NCCL's profiler plugin, inside the injection library. gcollect sets NCCL_PROFILER_PLUGIN to the injection
// library's own path; NCCL dlopen's it (the library is already loaded through CUDA_INJECTION64_PATH /
// LD_PRELOAD, so the loader hands back the same instance, with the same trace writer) and dlsym's
// ncclProfiler_v6 (NCCL 2.29+), _v5 (2.28), _v4 (2.27) or _v3 (2.26): the tables exported by
// nccl_profiler.cc, which read NCCL's descriptors through decode/nccl_profiler_decode.h.
//
// Cost per event: no heap allocation and no lock. Events live in a fixed pool of slots (allocated once, at
// the first communicator's init), claimed with a compare-and-swap; a stopped event is left for the flusher
// thread, which writes it (Drain, under the injection's lock) and frees its slot one drain later (so a
// channel event that arrives after its collective stopped still finds the collective's identity). A full pool
// drops the event and counts it (the trace's "nccl_plugin_pool_full" loss). Bad input from NCCL (null or
// foreign handles, unknown event types, events after finalize) is counted, never dereferenced.
//
// This file has no CUDA or CUPTI dependency: tests and the fuzzer drive the exported tables directly.
#pragma once

#include <cstdint>

#include "decode/nccl_profiler_abi.h"
#include "gt/writer.h"

// The tables NCCL looks up by name (nccl_profiler_abi.h says which NCCL wants which).
extern "C" {
extern const gt::decode::nccl_abi::ProfilerV6 ncclProfiler_v6;
extern const gt::decode::nccl_abi::ProfilerV5 ncclProfiler_v5;
extern const gt::decode::nccl_abi::ProfilerV4 ncclProfiler_v4;
extern const gt::decode::nccl_abi::ProfilerV3 ncclProfiler_v3;
}

namespace gt::inject::nccl {

enum class Mode : uint8_t {
  kOff = 0,       // init refuses: NCCL goes on without a profiler
  kOps = 1,       // collectives and point-to-point operations (ncclProfileColl | P2p | CeColl)
  kChannels = 2,  // + per-channel GPU start/stop (ncclProfileKernelCh; NCCL 2.27+)
};

struct Options {
  Mode mode = Mode::kOff;
  uint32_t pool_slots = 0;            // 0: the default (16384 for kOps, 65536 for kChannels)
  int64_t (*now)() = nullptr;         // the trace clock; null: CLOCK_MONOTONIC
  uint32_t (*thread_id)() = nullptr;  // null: gettid()
};

// Configures the plugin (the injection at start; tests). Until then, or with kOff, init refuses. The pool is
// allocated at the next init; one of another size from an earlier configuration is abandoned (tests).
void Configure(const Options& options);
// The trace is finished: later calls are counted as after-finalize and record nothing.
void Shutdown();
// trace clock = CLOCK_REALTIME + this (the flusher re-measures it): maps NCCL's GPU timer onto the trace.
void SetRealtimeOffset(int64_t realtime_to_trace_ns);
// Whether a drain is due before the next flush (the pool is over a quarter full).
bool DrainWanted();
// Writes stopped events as records (NcclCollRecord, NcclChannelRecord) with `pid`, and frees the slots the
// previous drain wrote. The caller serializes calls (the injection's lock). Returns the records written.
uint64_t Drain(TraceWriter& writer, uint32_t pid);

struct Stats {
  uint64_t inits = 0;              // communicators that initialized the plugin
  int version = 0;                 // the plugin version NCCL chose (6, 5, 4, 3); 0 none yet
  uint64_t events = 0;             // events recorded (operations + channels) so far
  uint64_t records = 0;            // records written by Drain
  uint64_t pool_full = 0;          // events dropped: no free slot
  uint64_t unknown_type = 0;       // descriptors of a type this build does not know
  uint64_t bad_handle = 0;         // stop/record calls with a null or foreign handle, or twice
  uint64_t bad_context = 0;        // calls with a null or foreign context
  uint64_t after_finalize = 0;     // events on a finalized communicator, or after Shutdown
  uint64_t orphan_channels = 0;    // channel events whose collective was not recorded
  uint64_t channel_unaligned = 0;  // channel events whose GPU timer did not map onto the trace clock
  uint64_t unfinished = 0;         // events started but never stopped, seen at the last drain
  uint64_t refused_inits = 0;      // init calls refused (not configured, kOff, too many communicators)
};
Stats GetStats();

// Tests only: forgets every communicator, event and count (the pool memory stays).
void ResetForTest();

}  // namespace gt::inject::nccl

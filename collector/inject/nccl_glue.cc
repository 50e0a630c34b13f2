// The injection's side of NCCL's profiler plugin (inject/nccl_profiler.h): configured at start, drained by
// the flusher into the trace, its counts reported as losses when the trace finishes.
#include <time.h>

#include <string>

#include "decode/clock.h"
#include "inject/injection.h"
#include "inject/nccl_profiler.h"

namespace gt::inject {

void NcclPluginRefreshClock() {
  const decode::ClockOffset o = decode::EstimateOffset(decode::SampleClocks(CLOCK_REALTIME, 5));
  if (o.valid) nccl::SetRealtimeOffset(o.offset_ns);
}

void StartNcclPlugin(Injection& inj) {
  nccl::Options o;
  o.mode = static_cast<nccl::Mode>(inj.config.nccl_plugin);
  o.now = &config::TraceClockNow;
  NcclPluginRefreshClock();
  nccl::Configure(o);
}

bool NcclPluginDrainWanted() {
  return nccl::DrainWanted();
}

void DrainNcclPlugin(Injection& inj) {  // under inj.mu
  if (!inj.finished && inj.writer) nccl::Drain(*inj.writer, inj.pid);
}

void FinishNcclPlugin(Injection& inj) {  // under inj.mu, before the writer finishes
  nccl::Shutdown();
  DrainNcclPlugin(inj);
  const nccl::Stats s = nccl::GetStats();
  if (s.inits == 0) return;
  const auto add = [&](const char* name, Severity sev, uint64_t n, const std::string& what) {
    if (n) AddLoss(inj, name, static_cast<uint8_t>(sev), n, what);
  };
  add("nccl_plugin_pool_full", Severity::kDataLoss, s.pool_full,
      "NCCL profiler plugin events dropped: every slot of the event pool was in use (collectives or channels "
      "missing from the nccl_coll / nccl_channel records)");
  add("nccl_plugin_unknown_events", Severity::kInfo, s.unknown_type,
      "NCCL profiler plugin events of a type this gtrace does not know (a newer NCCL)");
  add("nccl_plugin_bad_handles", Severity::kWarning, s.bad_handle + s.bad_context,
      "NCCL profiler plugin calls with a null, foreign or already stopped handle or context (ignored)");
  add("nccl_plugin_after_finalize", Severity::kInfo, s.after_finalize,
      "NCCL profiler plugin events after their communicator was finalized or the trace finished");
  add("nccl_channel_orphans", Severity::kInfo, s.orphan_channels,
      "NCCL per-channel events whose collective was not recorded");
  add("nccl_channel_timer_unaligned", Severity::kWarning, s.channel_unaligned,
      "NCCL per-channel GPU times that did not map onto the trace clock (GPU timer not wall-clock based)");
  add("nccl_plugin_unfinished", Severity::kInfo, s.unfinished,
      "NCCL profiler plugin events started but not stopped when the trace finished");
}

}  // namespace gt::inject

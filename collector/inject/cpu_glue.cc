// The injection's side of CPU stack sampling (inject/cpu_sampler.h): started with the trace, drained by the
// flusher into the writer (under inj.mu), its counts reported as losses when the trace finishes.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "gt/env.h"
#include "inject/cpu_sampler.h"
#include "inject/injection.h"

namespace gt::inject {

void StartCpuSampling(Injection& inj) {
  if (inj.config.cpu_sample_hz == 0) return;
  cpu::Options o;
  o.hz = inj.config.cpu_sample_hz;
  o.max_overhead = inj.config.cpu_sample_max_overhead_pct / 100;
  o.now = &config::TraceClockNow;
  o.window_start_ns = inj.config.window_start_ns;
  o.window_end_ns = inj.config.window_end_ns;
  o.on_sampler_thread = &OsrtIgnoreThisThread;  // its 1 ms sleeps are gtrace's, not the app's OS waits
  if (const char* u = env::Get(env::Var::kSampleUnwind); u && *u) {
    if (std::string(u) == "libgcc")
      o.unwinder = cpu::Options::Unwinder::kLibgcc;
    else
      std::fprintf(stderr,
                   "gtrace: GTRACE_SAMPLE_UNWIND=%s is not `libgcc`: CPU samples unwind with cached rules\n",
                   u);
  }
  if (const char* a = env::Get(env::Var::kSampleAlternateMs); a && *a) {
    char* end = nullptr;
    const unsigned long ms = std::strtoul(a, &end, 10);
    if (*end == '\0' && ms >= 1 && ms <= 60000)
      o.alternate_ms = uint32_t(ms);
    else
      std::fprintf(stderr, "gtrace: GTRACE_SAMPLE_ALTERNATE_MS=%s is not 1..60000: sampling all the time\n",
                   a);
  }
  cpu::ResetWrittenNodes();  // a new trace (an in-process recording restarted): its parts need their nodes
  std::string error;
  if (!cpu::Start(o, &error)) {
    std::lock_guard<std::mutex> lock(inj.mu);
    AddLoss(inj, "cpu_sampling_unavailable", static_cast<uint8_t>(Severity::kWarning), 1,
            "CPU stacks were not sampled: " + error);
  }
}

void DrainCpuSamples(Injection& inj) {  // under inj.mu
  if (!inj.finished && inj.writer) cpu::Drain(*inj.writer, inj.pid);
}

void FinishCpuSampling(Injection& inj) {  // under inj.mu, before the writer finishes
  if (inj.config.cpu_sample_hz == 0) return;
  cpu::Stop();
  DrainCpuSamples(inj);
  const cpu::Stats s = cpu::GetStats();
  const auto add = [&](const char* name, Severity sev, uint64_t n, const std::string& what) {
    if (n) AddLoss(inj, name, static_cast<uint8_t>(sev), n, what);
  };
  if (env::Get(env::Var::kSampleVerbose)) {
    const auto per = [&](uint64_t ns) { return s.handled ? double(ns) / double(s.handled) / 1e3 : 0.0; };
    std::fprintf(
        stderr,
        "gtrace: CPU sampling, pid %u: %llu samples (%llu signalled, %llu idle repeats); handler %.1f "
        "us a sample (unwind %.1f, Python %.1f, own CPU clock %.1f), signal delivery %.1f us; unwinder "
        "%s (%llu frames, %llu rules read, %llu samples cut at a frame not followed, %llu without a stack "
        "bound); "
        "drain %.1f ms for %llu records; sampler thread %.1f ms CPU; %llu reads of the mappings, %llu "
        "walks ended outside them; %llu stack nodes, %llu native and %llu Python frame names (%llu read "
        "early)\n",
        inj.pid, static_cast<unsigned long long>(s.samples), static_cast<unsigned long long>(s.handled),
        static_cast<unsigned long long>(s.idle_repeats), per(s.handler_ns), per(s.unwind_ns),
        per(s.python_ns), per(s.cpu_clock_ns), per(s.delivery_ns), s.cached_unwind ? "cached" : "libgcc",
        static_cast<unsigned long long>(s.unwind_cached_frames),
        static_cast<unsigned long long>(s.unwind_rules_read),
        static_cast<unsigned long long>(s.unwind_fallbacks),
        static_cast<unsigned long long>(s.unwind_stack_unbounded), double(s.drain_ns) / 1e6,
        static_cast<unsigned long long>(s.drained), double(s.sampler_cpu_ns) / 1e6,
        static_cast<unsigned long long>(s.maps_reads), static_cast<unsigned long long>(s.maps_misses),
        static_cast<unsigned long long>(s.stack_nodes), static_cast<unsigned long long>(s.native_names),
        static_cast<unsigned long long>(s.python_names),
        static_cast<unsigned long long>(s.python_names_early));
    if (s.alternate_ms)
      std::fprintf(stderr, "gtrace: CPU sampling, pid %u: alternate start_ns=%lld window_ms=%u\n", inj.pid,
                   static_cast<long long>(s.alternate_start_ns), s.alternate_ms);
    std::fprintf(stderr,
                 "gtrace: CPU sampling, pid %u: rate %u Hz at its lowest, %u Hz at the end (asked %u, budget "
                 "%.3g%%), below the asked rate for %.1f s; the sample cost that set the lowest %.1f us\n",
                 inj.pid, s.rate_min_hz, s.rate_final_hz, inj.config.cpu_sample_hz,
                 inj.config.cpu_sample_max_overhead_pct, double(s.rate_lowered_ns) / 1e9,
                 double(s.sample_cost_ns) / 1e3);
    // Why samples were cut short, with the last address of each reason (FrameRule::Why).
    for (int i = 1; i < cpu::FrameRule::kWhyCount; ++i) {
      if (!s.unwind_fallback_why[i]) continue;
      Dl_info info{};
      const uintptr_t pc = s.unwind_fallback_pc[i];
      const bool found = dladdr(reinterpret_cast<void*>(pc), &info) && info.dli_fname;
      std::fprintf(
          stderr,
          "gtrace: CPU sampling, pid %u: %llu samples cut short for reason %d, last at %s+0x%llx (%s)\n",
          inj.pid, static_cast<unsigned long long>(s.unwind_fallback_why[i]), i, found ? info.dli_fname : "?",
          static_cast<unsigned long long>(found ? pc - uintptr_t(info.dli_fbase) : pc),
          found && info.dli_sname ? info.dli_sname : "");
    }
  }
  if (s.ticks_not_taken) {
    char what[320];
    std::snprintf(
        what, sizeof what,
        "CPU samples not taken: a signalled sample cost %.0f us (signal delivery and handler), so the "
        "rate came down to keep sampling under %.3g%% of a busy thread's time: %u Hz at its lowest, "
        "%u Hz at the end, for %.1f s of the %u Hz asked for (--sample-overhead)",
        double(s.sample_cost_ns) / 1e3, inj.config.cpu_sample_max_overhead_pct, s.rate_min_hz,
        s.rate_final_hz, double(s.rate_lowered_ns) / 1e9, inj.config.cpu_sample_hz);
    add("cpu_sample_rate_lowered", Severity::kInfo, s.ticks_not_taken, what);
  }
  add("cpu_samples_ring_full", Severity::kDataLoss, s.ring_full,
      "CPU samples dropped: a thread's sample ring was full before the flusher drained it");
  add("cpu_samples_busy", Severity::kInfo, s.busy_skips,
      "CPU sampling ticks skipped for a thread whose previous sample was still being taken");
  add("cpu_samples_lost_in_flight", Severity::kInfo, s.lost_in_flight,
      "CPU samples never taken: the thread exited or stayed stopped after it was signalled");
  add("cpu_sample_threads_over_limit", Severity::kDataLoss, s.too_many_threads,
      "threads not sampled: more live threads than the sampler's 512 slots");
  add("cpu_samples_not_unwound", Severity::kInfo, s.unwind_failed,
      "CPU samples whose native stack could not be unwound past the interrupted address (no unwind info)");
  add("cpu_samples_read_fault", Severity::kInfo, s.read_faults,
      "CPU samples whose stack reads hit memory unmapped since the mappings were last read (a Python frame "
      "chain caught mid-change): kept with the frames read before");
  add("cpu_samples_truncated", Severity::kInfo, s.truncated,
      "CPU samples deeper than the 64 native / 64 Python frames kept (outermost frames missing)");
  add("cpu_samples_python_unreadable", Severity::kWarning, s.python_unreadable,
      "CPU samples of Python threads whose frame chain could not be read (native stack only)");
  add("cpu_samples_python_unmapped", Severity::kInfo, s.maps_misses,
      "CPU samples of Python threads whose frames were not read: they lay outside the process's mappings as "
      "last read (mapped since; the mappings are read again within 50 ms), native stack only");
  if (s.python_unsupported)
    add("cpu_samples_python_unsupported", Severity::kInfo, s.python_unsupported,
        "CPU samples of Python threads of CPython 3." + std::to_string(s.python_minor) +
            (s.python_free_threaded ? " (free-threaded)" : "") +
            (*s.python_layout_mismatch
                 ? std::string(", whose own offsets (_Py_DebugOffsets) disagree with gtrace's at ") +
                       s.python_layout_mismatch + ": frames not read, native stacks only"
                 : std::string(", whose frames this build cannot read (3.11-3.14 with the GIL can): native "
                               "stacks only")));
  add("cpu_samples_python_code_unreadable", Severity::kInfo, s.python_code_unreadable,
      "Python frames whose code object was gone or changed before it could be named (shown as "
      "<unreadable code object>)");
}

}  // namespace gt::inject

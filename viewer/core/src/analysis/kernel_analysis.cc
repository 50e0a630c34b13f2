// [SECTION] Analysis of analysis.h: derived metrics, speed of light, flags and the one-line verdict.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gt/counter_vocab.h"
#include "gt/viewer/analysis.h"

namespace gt {
namespace {

// Metric names are the counter vocabulary's (gt/counter_vocab.h), shared with the collector's sets.
using metric::kIssued;
using metric::kIssuedPeak;
using metric::kSmClock;
using metric::kSmCycles;
using metric::kTime;

struct FlopTerm {
  const char* metric;
  double flops_per_count;
};
struct PrecisionCounters {
  Precision precision;
  FlopTerm terms[3];
  const char* peak_metric;      // per-cycle peak of the first term's counter, all SMs
  double peak_flops_per_count;  // FLOPs per counted unit at peak
};
const PrecisionCounters kPrecisions[] = {
    {Precision::kFp64, {{metric::kDfma, 2}, {metric::kDadd, 1}, {metric::kDmul, 1}}, metric::kDfmaPeak, 2},
    {Precision::kFp32, {{metric::kFfma, 2}, {metric::kFadd, 1}, {metric::kFmul, 1}}, metric::kFfmaPeak, 2},
    // Half precision outside tensor cores; the SASS counters do not tell fp16 from bf16 (both land here).
    {Precision::kFp16, {{metric::kHfma, 2}, {metric::kHadd, 1}, {metric::kHmul, 1}}, metric::kHfmaPeak, 2},
    {Precision::kFp64Tensor, {{metric::kTensorFp64, 1}}, metric::kTensorFp64Peak, 1},
    {Precision::kTf32Tensor,
     {{metric::kTensorHgmmaTf32, 1}, {metric::kTensorHmmaTf32, 1}},
     metric::kTensorHgmmaTf32Peak,
     1},
    {Precision::kFp16Tensor,
     {{metric::kTensorHgmmaFp16, 1}, {metric::kTensorHmmaFp16, 1}},
     metric::kTensorHgmmaFp16Peak,
     1},
    {Precision::kBf16Tensor,
     {{metric::kTensorHgmmaBf16, 1}, {metric::kTensorHmmaBf16, 1}},
     metric::kTensorHgmmaBf16Peak,
     1},
    {Precision::kFp8Tensor, {{metric::kTensorFp8, 1}}, metric::kTensorFp8Peak, 1},
    {Precision::kInt8Tensor, {{metric::kTensorIgmmaInt8, 1}}, metric::kTensorIgmmaInt8Peak, 1},
};

struct LevelCounters {
  const char* bytes;
  const char* peak_per_cycle;
  const char* clock;  // per second; nullptr = the SM clock
};
const LevelCounters kLevels[kMemoryLevelCount] = {
    {metric::kDramBytes, metric::kDramBytesPeak, metric::kDramClock},
    {metric::kL2Bytes, metric::kL2BytesPeak, metric::kL2Clock},
    {metric::kL1Bytes, metric::kL1BytesPeak, nullptr},
};

Quantity Present(double v) {
  Quantity q;
  q.value = q.raw = v;
  q.present = true;
  return q;
}

// Percentages that cannot exceed 100 (a hit rate, a share of peak): above `limit` they are clamped and
// flagged.
Quantity Percent(double v, const char* name, std::vector<AnalysisFlag>* flags, const char* why,
                 double limit = 100.5) {
  Quantity q = Present(v);
  if (!std::isfinite(v) || v < 0 || v > limit) {
    q.suspect = true;
    q.value = std::isfinite(v) ? std::clamp(v, 0.0, 100.0) : 0;
    char buf[96];
    snprintf(buf, sizeof buf, "%s is %.1f%%: ", name, v);
    flags->push_back({name, std::string(buf) + why});
  }
  return q;
}

std::string Dashed(std::string_view key) {
  std::string s(key);
  std::replace(s.begin(), s.end(), '_', '-');
  return s;
}

// ---- default peaks per SM per clock (Hopper sm_90; H100/H200 whitepaper rates divided by SMs x clock) ----
struct ChipRates {
  uint8_t cc_major, cc_minor;
  double flops_per_sm_clock[kPrecisionCount];
  double l1_bytes_per_sm_clock;
};
const ChipRates kChipRates[] = {
    {9, 0, {128, 256, 512, 512, 256, 2048, 4096, 4096, 8192, 8192}, 128},
    {8, 0, {64, 128, 512, 512, 128, 512, 1024, 1024, 0, 2048}, 128},
};

}  // namespace

const char* MemoryLevelName(MemoryLevel l) {
  switch (l) {
    case MemoryLevel::kDram:
      return "DRAM";
    case MemoryLevel::kL2:
      return "L2";
    case MemoryLevel::kL1:
      return "L1";
    case MemoryLevel::kCount:
      break;
  }
  return "?";
}

const char* BottleneckName(Bottleneck b) {
  switch (b) {
    case Bottleneck::kMemory:
      return "memory-bound";
    case Bottleneck::kCompute:
      return "compute-bound";
    case Bottleneck::kLatency:
      return "latency-bound";
    case Bottleneck::kLaunch:
      return "launch-bound";
    case Bottleneck::kUnknown:
      break;
  }
  return "unknown";
}

DeviceRecord WithDefaultPeaks(const DeviceRecord& device) {
  DeviceRecord d = device;
  const ChipRates* rates = nullptr;
  for (const auto& r : kChipRates)
    if (r.cc_major == d.cc_major && r.cc_minor == d.cc_minor) rates = &r;
  const double sm_hz = d.sm_clock_khz * 1e3;
  bool filled = false;
  if (rates && d.sm_count > 0 && sm_hz > 0) {
    for (size_t p = 0; p < kPrecisionCount; ++p) {
      if (d.peak_flops[p] > 0 || rates->flops_per_sm_clock[p] <= 0) continue;
      d.peak_flops[p] = rates->flops_per_sm_clock[p] * d.sm_count * sm_hz;
      filled = true;
    }
    if (d.l1_bandwidth <= 0) {
      d.l1_bandwidth = rates->l1_bytes_per_sm_clock * d.sm_count * sm_hz;
      filled = true;
    }
  }
  if (d.dram_bandwidth <= 0 && d.mem_clock_khz > 0 && d.mem_bus_width_bits > 0) {
    // Double data rate: two transfers per memory clock over the whole bus.
    d.dram_bandwidth = 2.0 * d.mem_clock_khz * 1e3 * d.mem_bus_width_bits / 8.0;
    filled = true;
  }
  if (filled && d.peak_source == static_cast<uint8_t>(PeakSource::kUnknown))
    d.peak_source = static_cast<uint8_t>(PeakSource::kTable);
  return d;
}

KernelAnalysis AnalyzeKernel(const KernelCounters& c, const DeviceRecord& device_in,
                             const LaunchShape& launch_in) {
  const DeviceRecord device = WithDefaultPeaks(device_in);
  KernelAnalysis a;
  a.kernel_name = c.kernel_name;
  a.pid = c.pid;
  a.launch_ordinal = c.launch_ordinal;
  a.launches = c.launches ? c.launches : 1;
  const double n = a.launches;
  auto& flags = a.flags;

  for (const auto& v : c.values)
    if (v.flags & kMetricSuspect)
      flags.push_back({v.name, "the collector flagged this value as impossible (mixed replay passes)"});

  if (const auto* t = c.Find(kTime); t && t->value > 0) a.time_s = Present(t->value * 1e-9 / n);
  if (const auto* clk = c.Find(kSmClock); clk && clk->value > 0)
    a.sm_clock_hz = Present(clk->value);
  else if (device.sm_clock_khz > 0)
    a.sm_clock_hz = Present(device.sm_clock_khz * 1e3);
  const double seconds = a.time_s ? a.time_s.value : 0;
  const double sm_hz = a.sm_clock_hz ? a.sm_clock_hz.value : 0;

  // ---- FLOPs per precision and % of each precision's peak ----
  bool any_flop_counter = false;
  double best_pct = -1;
  for (const auto& pc : kPrecisions) {
    size_t p = static_cast<size_t>(pc.precision);
    double f = 0;
    bool have = false;
    for (const auto& term : pc.terms) {
      if (!term.metric) continue;
      if (const auto* v = c.Find(term.metric)) {
        f += v->value * term.flops_per_count;
        have = true;
      }
    }
    if (!have) continue;
    any_flop_counter = true;
    a.flops[p] = f / n;
    a.total_flops += a.flops[p];
    double peak = device.peak_flops[p];
    if (const auto* ps = c.Find(pc.peak_metric); ps && ps->value > 0 && sm_hz > 0)
      peak = ps->value * pc.peak_flops_per_count * sm_hz;  // the hardware's own peak at the clock it ran at
    if (peak > 0 && seconds > 0) {
      double pct = 100.0 * a.flops[p] / seconds / peak;
      a.flops_pct[p] = Percent(pct, (std::string(PrecisionName(pc.precision)) + " % of peak").c_str(), &flags,
                               "more FLOPs than the peak allows; the peak or the time is wrong");
      if (a.flops[p] > 0 && pct > best_pct) {
        best_pct = pct;
        a.main_precision = pc.precision;
      }
    }
  }
  if (best_pct < 0) {  // no peaks known: the precision with the most FLOPs
    double most = 0;
    for (size_t p = 0; p < kPrecisionCount; ++p)
      if (a.flops[p] > most) {
        most = a.flops[p];
        a.main_precision = static_cast<Precision>(p);
      }
  }
  if (any_flop_counter && seconds > 0) a.flops_per_s = Present(a.total_flops / seconds);

  // ---- bytes, bandwidth and intensity per memory level ----
  if (const auto* r = c.Find(metric::kDramBytesRead)) a.dram_read_bytes = Present(r->value / n);
  if (const auto* w = c.Find(metric::kDramBytesWrite)) a.dram_write_bytes = Present(w->value / n);
  double level_peak[kMemoryLevelCount] = {device.dram_bandwidth, device.l2_bandwidth, device.l1_bandwidth};
  for (size_t l = 0; l < kMemoryLevelCount; ++l) {
    const auto& lc = kLevels[l];
    double bytes = -1;
    if (const auto* b = c.Find(lc.bytes))
      bytes = b->value / n;
    else if (l == 0 && a.dram_read_bytes && a.dram_write_bytes)
      bytes = a.dram_read_bytes.value + a.dram_write_bytes.value;
    if (bytes < 0) continue;
    a.bytes[l] = bytes;
    if (const auto* ps = c.Find(lc.peak_per_cycle); ps && ps->value > 0) {
      double hz = sm_hz;
      if (lc.clock)
        if (const auto* clk = c.Find(lc.clock); clk && clk->value > 0) hz = clk->value;
      if (hz > 0) level_peak[l] = ps->value * hz;
    }
    if (seconds > 0) a.bandwidth[l] = Present(bytes / seconds);
    if (seconds > 0 && level_peak[l] > 0) {
      std::string name = std::string(MemoryLevelName(static_cast<MemoryLevel>(l))) + " % of peak";
      a.bandwidth_pct[l] =
          Percent(100.0 * bytes / seconds / level_peak[l], name.c_str(), &flags,
                  "more bytes than the peak bandwidth allows; the peak or the time is wrong");
    }
    if (any_flop_counter && bytes > 0) a.intensity[l] = Present(a.total_flops / bytes);
  }

  // ---- issue slots ----
  if (const auto* issued = c.Find(kIssued); issued && c.Has(kSmCycles)) {
    double per_cycle = c.Get(kIssuedPeak, device.sm_count * 4.0);
    double cycles = c.Get(kSmCycles);  // an .avg: per launch already, also after MergeLaunches
    if (per_cycle > 0 && cycles > 0)
      a.issue_pct = Percent(100.0 * issued->value / n / (per_cycle * cycles), "issue slots", &flags,
                            "more instructions issued than the schedulers can issue");
  }

  // ---- speed of light ----
  if (const auto* sm = c.Find(metric::kSmThroughputPct)) {
    a.compute_pct = Percent(sm->value, "SM throughput", &flags, "a throughput above 100% of peak");
    a.sol_from_hardware = true;
  } else {
    double best = -1;
    for (size_t p = 0; p < kPrecisionCount; ++p)
      if (a.flops_pct[p] && a.flops_pct[p].value > best) best = a.flops_pct[p].value;
    if (a.issue_pct && a.issue_pct.value > best) best = a.issue_pct.value;
    if (best >= 0) a.compute_pct = Present(best);
  }
  {
    double best = -1;
    for (size_t l = 0; l < kMemoryLevelCount; ++l)
      if (a.bandwidth_pct[l] && a.bandwidth_pct[l].value > best) {
        best = a.bandwidth_pct[l].value;
        a.memory_level = static_cast<MemoryLevel>(l);
      }
    if (const auto* mem = c.Find(metric::kComputeMemoryThroughputPct))
      a.memory_pct = Percent(mem->value, "memory throughput", &flags, "a throughput above 100% of peak");
    else if (best >= 0)
      a.memory_pct = Present(best);
  }

  // ---- caches ----
  auto hit_rate = [&](const char* hits, const char* total, const char* name) -> Quantity {
    const auto* h = c.Find(hits);
    const auto* t = c.Find(total);
    if (!h || !t || t->value <= 0) return {};
    return Percent(100.0 * h->value / t->value, name, &flags,
                   "hits and lookups were counted in different replay passes (too little traffic to trust)");
  };
  a.l1_hit_pct = hit_rate(metric::kL1SectorHits, metric::kL1Sectors, "L1 hit rate");
  a.l2_hit_pct = hit_rate(metric::kL2SectorHits, metric::kL2Sectors, "L2 hit rate");

  // ---- occupancy ----
  LaunchShape launch = launch_in.known() ? launch_in : LaunchShapeOf(c);
  a.occupancy = ComputeOccupancy(launch, device);
  if (const auto* occ = c.Find(metric::kWarpsActivePct)) {
    a.achieved_occupancy_pct =
        Percent(occ->value, "achieved occupancy", &flags, "above 100% of the SM's warps");
    if (a.occupancy.valid && occ->value > a.occupancy.theoretical_pct + 10) {
      a.achieved_occupancy_pct.suspect = true;
      char buf[160];
      snprintf(buf, sizeof buf,
               "achieved occupancy %.0f%% exceeds the theoretical %.0f%%: the launch attributes "
               "do not match the profiled launch",
               occ->value, a.occupancy.theoretical_pct);
      flags.push_back({"achieved occupancy", buf});
    }
  }

  // ---- access patterns ----
  auto ratio = [&](const char* num, const char* den) -> Quantity {
    const auto* x = c.Find(num);
    const auto* y = c.Find(den);
    if (!x || !y || y->value <= 0) return {};
    return Present(x->value / y->value);
  };
  a.sectors_per_request_ld = ratio(metric::kGlobalLoadSectors, metric::kGlobalLoadRequests);
  a.sectors_per_request_st = ratio(metric::kGlobalStoreSectors, metric::kGlobalStoreRequests);
  for (Quantity* q : {&a.sectors_per_request_ld, &a.sectors_per_request_st}) {
    if (*q && q->value > 32.5) {  // a warp-wide request touches at most 32 sectors
      q->suspect = true;
      q->value = 32;
      flags.push_back(
          {"sectors per request", "more than 32 sectors per request (counters from different passes)"});
    }
  }
  a.bank_conflict_ratio = ratio(metric::kSharedBankConflicts, metric::kSharedWavefronts);
  if (a.bank_conflict_ratio && a.bank_conflict_ratio.value > 1.0) {
    a.bank_conflict_ratio.suspect = true;
    a.bank_conflict_ratio.value = 1.0;
    flags.push_back(
        {"bank conflicts", "more conflicts than shared-memory wavefronts (counters from different passes)"});
  }
  a.active_threads_per_warp = ratio(metric::kThreadInstExecuted, metric::kInstExecuted);
  if (a.active_threads_per_warp && a.active_threads_per_warp.value > 32.5) {
    a.active_threads_per_warp.suspect = true;
    a.active_threads_per_warp.value = 32;
    flags.push_back({"active threads per warp", "more than 32 threads per warp instruction"});
  }
  if (c.Has(metric::kGlobalAtomics) || c.Has(metric::kGlobalReductions))
    a.atomics = Present((c.Get(metric::kGlobalAtomics) + c.Get(metric::kGlobalReductions)) / n);
  if (const auto* h = c.Find(metric::kHmmaInstructions)) a.hmma_instructions = Present(h->value / n);

  a.stalls = ComputeStallShares(c);

  // ---- verdict ----
  const double compute = a.compute_pct ? a.compute_pct.value : -1;
  const double memory = a.memory_pct ? a.memory_pct.value : -1;
  std::vector<std::string> clauses;
  char buf[256];
  auto compute_phrase = [&]() -> std::string {
    size_t p = static_cast<size_t>(a.main_precision);
    // FLOPs name the limit when they are the bulk of the work (an FMA loop at 97% of FP32 peak issues at
    // 99%).
    bool flop_led =
        a.flops_pct[p] && a.flops[p] > 0 &&
        (!a.issue_pct || a.flops_pct[p].value >= 60 || a.flops_pct[p].value >= a.issue_pct.value - 10);
    if (flop_led && !a.sol_from_hardware) {
      snprintf(buf, sizeof buf, "%s of %s peak (%s)", FormatPercent(a.flops_pct[p].value).c_str(),
               PrecisionName(a.main_precision), FormatRate(a.flops[p] / seconds, "FLOP/s").c_str());
      return buf;
    }
    if (a.sol_from_hardware) return FormatPercent(compute) + " of SM throughput";
    return FormatPercent(a.issue_pct.value) + " of issue slots";
  };
  auto memory_phrase = [&]() -> std::string {
    size_t l = static_cast<size_t>(a.memory_level);
    if (a.bandwidth_pct[l]) {
      snprintf(buf, sizeof buf, "%s of %s peak (%s)", FormatPercent(a.bandwidth_pct[l].value).c_str(),
               MemoryLevelName(a.memory_level), FormatRate(a.bandwidth[l].value, "B/s").c_str());
      return buf;
    }
    return FormatPercent(memory) + " of memory throughput";
  };
  if (compute < 0 && memory < 0) {
    a.bottleneck = Bottleneck::kUnknown;
    clauses.push_back(a.stalls.empty() ? "no throughput counters: collect --counters=roofline"
                                       : "no throughput counters");
  } else if (seconds > 0 && seconds < 10e-6 && std::max(compute, memory) < 30) {
    a.bottleneck = Bottleneck::kLaunch;
    std::string s = "launch-bound: " + FormatDuration(seconds * 1e9) + " per launch at " +
                    FormatPercent(std::max(compute, memory)) + " of peak";
    if (a.occupancy.valid && a.occupancy.grid_too_small && launch.grid_blocks > 0) {
      snprintf(buf, sizeof buf, ", %llu block%s for %u SMs",
               static_cast<unsigned long long>(launch.grid_blocks), launch.grid_blocks == 1 ? "" : "s",
               device.sm_count);
      s += buf;
    }
    s += ": too little work per launch, fuse kernels or use CUDA Graphs";
    clauses.push_back(s);
  } else if (memory >= 60 && memory >= compute) {
    a.bottleneck = Bottleneck::kMemory;
    clauses.push_back("memory-bound: " + memory_phrase());
  } else if (compute >= 60) {
    a.bottleneck = Bottleneck::kCompute;
    clauses.push_back("compute-bound: " + compute_phrase());
  } else {
    a.bottleneck = Bottleneck::kLatency;
    std::string s = "latency-bound: " + (memory >= 0 ? memory_phrase() : std::string("memory unknown"));
    if (compute >= 0) s += ", " + compute_phrase();
    clauses.push_back(s);
  }

  // The stall that explains it. Compute-bound kernels whose top reason is "not selected" are fine as they
  // are.
  const StallShare* top_stall = nullptr;
  for (const auto& s : a.stalls) {
    const auto* info = FindStallReason(s.reason);
    if (info && info->is_stall && s.count > 0) {
      top_stall = &s;
      break;
    }
  }
  const StallShare* top_any = nullptr;
  for (const auto& s : a.stalls)
    if (s.reason != "selected" && s.count > 0) {
      top_any = &s;
      break;
    }
  const bool ready = top_any && top_any->reason == "not_selected" && a.bottleneck == Bottleneck::kCompute;
  if (ready) {
    snprintf(buf, sizeof buf,
             "warps are ready (%s of warp cycles not-selected): the math pipes are the limit",
             FormatPercent(100 * top_any->share).c_str());
    clauses.push_back(buf);
  }
  // The top stall (and a second one that holds a fifth of the stalls too); when warps are mostly ready, only
  // a stall that costs a tenth of all warp cycles is worth naming.
  if (top_stall && a.bottleneck != Bottleneck::kLaunch && (!ready || top_stall->share >= 0.10)) {
    const auto* info = FindStallReason(top_stall->reason);
    std::string s = FormatPercent(100 * top_stall->stall_share) + " of stalls are " +
                    Dashed(top_stall->reason) + ": " + info->short_fix;
    for (const auto& st : a.stalls) {
      const auto* second = FindStallReason(st.reason);
      if (&st == top_stall || !second || !second->is_stall) continue;
      if (st.stall_share >= 0.20)
        s += ", " + FormatPercent(100 * st.stall_share) + " " + Dashed(st.reason) + ": " + second->short_fix;
      break;
    }
    clauses.push_back(s);
  }

  // Access-pattern diagnoses, strongest evidence first; at most two to keep it one line.
  std::vector<std::string> diagnoses;
  if (a.sectors_per_request_ld && !a.sectors_per_request_ld.suspect &&
      a.sectors_per_request_ld.value > 16.5) {
    snprintf(buf, sizeof buf, "uncoalesced loads: %.1f sectors per request (at most 16 needed)",
             a.sectors_per_request_ld.value);
    diagnoses.push_back(buf);
  }
  if (a.sectors_per_request_st && !a.sectors_per_request_st.suspect &&
      a.sectors_per_request_st.value > 16.5) {
    snprintf(buf, sizeof buf, "uncoalesced stores: %.1f sectors per request", a.sectors_per_request_st.value);
    diagnoses.push_back(buf);
  }
  if (a.bank_conflict_ratio && !a.bank_conflict_ratio.suspect && a.bank_conflict_ratio.value >= 0.05) {
    snprintf(buf, sizeof buf, "shared-memory bank conflicts: %s of shared wavefronts are conflicts",
             FormatPercent(100 * a.bank_conflict_ratio.value).c_str());
    diagnoses.push_back(buf);
  }
  if (a.active_threads_per_warp && !a.active_threads_per_warp.suspect &&
      a.active_threads_per_warp.value < 24) {
    snprintf(buf, sizeof buf, "branch divergence: %.1f of 32 threads active per instruction",
             a.active_threads_per_warp.value);
    diagnoses.push_back(buf);
  }
  const double executed = c.Get(metric::kInstExecuted) / n;
  if (a.atomics && a.atomics.value > 0 && executed > 0 && a.atomics.value / executed >= 0.01 &&
      a.bottleneck != Bottleneck::kMemory && a.bottleneck != Bottleneck::kCompute) {
    snprintf(buf, sizeof buf, "atomic contention: %s global atomics serialize in L2",
             FormatRate(a.atomics.value, "").c_str());
    std::string s = buf;
    while (!s.empty() && s.back() == ' ') s.pop_back();
    diagnoses.push_back(s);
  }
  if (a.bottleneck == Bottleneck::kLatency && a.occupancy.valid && a.occupancy.theoretical_pct < 50 &&
      diagnoses.size() < 2) {
    snprintf(buf, sizeof buf, "theoretical occupancy %.0f%% (limited by %s)", a.occupancy.theoretical_pct,
             OccupancyLimiterName(a.occupancy.limiter));
    diagnoses.push_back(buf);
  }
  // A launch-bound kernel's access pattern is not what limits it.
  if (a.bottleneck == Bottleneck::kLaunch) diagnoses.clear();
  for (size_t i = 0; i < diagnoses.size() && i < 2; ++i) clauses.push_back(diagnoses[i]);
  if (!flags.empty())
    clauses.push_back(std::to_string(flags.size()) + (flags.size() == 1 ? " value" : " values") +
                      " flagged as impossible");

  for (size_t i = 0; i < clauses.size(); ++i) a.verdict += (i ? "; " : "") + clauses[i];
  return a;
}

}  // namespace gt

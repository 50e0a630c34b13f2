#include <dirent.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "osrt/osrt_abi.h"

#include "counters/metric_sets.h"
#include "launcher/launcher.h"

namespace gt::launcher {

using config::CaptureMode;
using config::kPcSamplingDefaultPeriodExp;
using config::kPcSamplingMaxPeriodExp;
using config::kPcSamplingMinPeriodExp;
using config::ParseTraceKinds;

std::string UsageText() {
  return R"(usage: gcollect [options] -- ./app [args...]

Records a CUDA timeline of ./app and of every process it starts (C++ or Python/PyTorch, unmodified).

  -o, --output FILE            trace file (default: <app>.gtrace, or <app>-N.gtrace if taken); never
                               overwritten unless -f. Expands %q{VAR} (environment variable, e.g.
                               %q{RANK}), %h (host), %p (gcollect's pid), %% (a %): one file per rank
  -f, --force-overwrite        replace an existing output file
  -t, --trace LIST             record kinds, comma separated (default: cuda,nvtx,overhead):
                                 cuda = kernel,memcpy,memset,runtime,sync,memory
                                 runtime = the runtime calls that launch, copy, wait, allocate, or
                                 manage streams/events/graphs (and the driver's launch, copy and sync
                                 calls); runtime-all = every runtime call (cudaGetDevice, ...)
                                 driver (CUDA driver API calls; opt-in, mostly noise under PyTorch),
                                 nvtx, overhead, none, or single kinds
                                 cublas, cudnn, nccl: library API calls as ranges (the libraries' own
                                 NVTX, switched on through CUBLAS/CUBLASLT/CUDNN_NVTX_LEVEL)
                                 osrt: OS runtime waits (read, poll, sleeps, condition/futex waits,
                                 join, waitpid) longer than --osrt-threshold, in CUDA processes
      --osrt-threshold NS      shortest OS runtime wait recorded, ns (default 1000, as Nsight Systems)
      --delay S                start recording S seconds after the app starts
      --duration S             stop recording S seconds after recording starts
      --capture-range=cudaProfilerApi
                               record only between cudaProfilerStart() and cudaProfilerStop()
      --capture-range=nvtx:NAME
                               record only inside NVTX ranges whose message is NAME (push/pop or
                               start/end, any domain, ASCII or wide text; not registered strings)
      --gpu-metrics[=INTERVAL] sample GPU utilization, memory utilization, SM clock, power, temperature and
                               memory used through NVML (default interval 100ms; e.g. 10ms, 0.5s), for
                               the GPUs the app can use (CUDA_VISIBLE_DEVICES), under its device numbers
      --wait-children S        after the app exits, wait up to S seconds for its children (default 5)
      --keep-parts             keep the per-process part files (OUTPUT.parts/)

Kernel counters (CUPTI Range Profiler, kernel replay; see docs/counters.md):
      --counters[=SETS]        per-kernel hardware counters: roofline, stalls, occupancy, access, sol, hmma,
                               default (= roofline,stalls,occupancy,access: 8 replay passes on an H200) or all.
                               Replayed kernels lose their timestamps, so gcollect RUNS THE APP AGAIN: a
                               timeline run, then counters runs (two with --cache-control all, one with none),
                               joined by kernel name and per-name launch ordinal into one trace (launches the
                               runs do not share are reported, not guessed). Each profiled launch costs about
                               13 ms per replay pass.
      --kernel-regex RE        profile only kernels whose demangled name matches RE (ECMAScript)
      --launch-skip N          let the first N matching launches run unprofiled
      --launch-count N         profile at most N matching launches in all
      --counters-per-kernel N  profile the first N launches of each kernel name (default 3; 0 = all; with
                               --launch-count the default is all)
      --counters-only          skip the timeline run: ONE run of the app, under the range profiler (implies
                               --counters). The trace holds the profiled launches only, laid end to end in
                               launch order with their measured gpu__time_duration; positions, gaps, overlap,
                               copies and API calls are not measured (the trace says so)
      --cache-control all|none all (default, as ncu): DRAM and L2 traffic, duration and cycles come from
                               gtrace's own replay, which saves device memory and restores it and cleans the
                               L2 before every pass; instruction, stall and occupancy counters from a second
                               counters run under CUPTI's kernel replay. none: one counters run, CUPTI's
                               kernel replay for everything (faster; its save/restore leaves dirty L2 lines,
                               so DRAM writes read high). docs/counters.md, Caches
  Kernels run by cudaGraphLaunch (CUDA graphs, torch.cuda.graph) are profiled like others, per kernel node and
  counted apart from direct launches: the counters run saves device memory, issues the graph's nodes one by
  one, restores memory, then lets the app's graph run. Graphs with host, memory-allocation or conditional nodes,
  or changed after instantiation, are not replayed: their kernels are listed as "not profiled: graph launch".
      --pc-sampling[=N]        warp-state PC sampling during the timeline run (CUPTI continuous mode: kernels
                               are not serialized, timestamps stay true): stall-reason histograms per kernel
                               and per SASS offset / source line (build with -lineinfo for lines). One sample
                               per SM every 2^N cycles, N = 5..31 (default 10)
      --nccl-plugin=MODE       what NCCL's profiler plugin records (gcollect sets NCCL_PROFILER_PLUGIN to the
                               injection library; kept as it is if you set it yourself): ops (default:
                               every collective and send/recv with its communicator, sequence number,
                               algorithm, protocol, channels), channels (+ each channel's GPU start/stop;
                               NCCL 2.27+, adds work to NCCL's proxy thread), off
      --sample=cpu|none        sample every thread's stack (native, and Python for CPython 3.11-3.13) of
                               the traced processes: idle gaps are attributed to the hottest frames (default
                               cpu; none turns it off)
      --sample-hz=N            samples a second per thread, 1..10000 (default 1000; implies --sample=cpu)
      --sample-overhead=PCT    the most of a busy thread's time sampling may take (default 1.5): where a
                               sample costs more (signal delivery under gVisor: 35-90 us), the rate comes
                               down to keep it, never below 20 Hz, and the trace says so; 0 = keep the rate
      --upload URL             after recording, upload the trace to a `gtrace serve` server and print its link
                               (runs `gtrace upload`; a token comes from $GTRACE_TOKEN_FILE)
      --inject-lib FILE        the injection library (default: $GTRACE_INJECT_LIB, else
                               <prefix>/lib/gtrace/libgtrace_inject.so of an installed gcollect, else the
                               one beside gcollect in a build tree)
  -q, --quiet                  print nothing but errors
  -h, --help                   this text
      --version                print the version, the CUDA it was built with and the injection library found

Exit status: the app's (128+N when it died of signal N); 127 when it could not start; 2 for bad flags.
Without an NVIDIA driver, or without CUPTI (libcupti.so from the CUDA toolkit), the app still runs and a
warning says why the trace holds no GPU activity (exit status: still the app's).
)";
}

void AppendLibraryTraceEnv(uint32_t kinds, const std::function<const char*(const char*)>& get_env,
                           std::vector<config::EnvVar>* env) {
  const auto add = [&](const char* name) {
    const char* user = get_env(name);
    if (!user || !*user) env->push_back({name, kLibraryNvtxLevel});
  };
  // cuBLASLt reads its own variable; its ranges arrive in the cuBLAS domain.
  if (kinds & config::kTraceCublas) add("CUBLAS_NVTX_LEVEL"), add("CUBLASLT_NVTX_LEVEL");
  if (kinds & config::kTraceCudnn) add("CUDNN_NVTX_LEVEL");
  // NCCL's NVTX ranges are on by default (NCCL_NVTX_DISABLE=1 turns them off): nothing to set.
}

std::string OsrtShimPath(const std::string& inject_path) {
  const size_t slash = inject_path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : inject_path.substr(0, slash);
  const std::string shim = dir + "/libgtrace_osrt.so";
  return access(shim.c_str(), R_OK) == 0 ? shim : std::string();
}

OsrtUnrecorded CollectOsrtUnrecorded(const std::string& parts_dir) {
  OsrtUnrecorded u;
  DIR* d = opendir(parts_dir.c_str());
  if (!d) return u;
  const size_t prefix = std::strlen(GT_OSRT_UNRECORDED_PREFIX);
  while (dirent* e = readdir(d)) {
    if (std::strncmp(e->d_name, GT_OSRT_UNRECORDED_PREFIX, prefix) != 0) continue;
    const std::string path = parts_dir + "/" + e->d_name;
    FILE* f = std::fopen(path.c_str(), "r");
    if (!f) continue;
    unsigned long long n = 0;
    if (std::fscanf(f, "%llu", &n) == 1 && n > 0) {
      u.waits += n;
      ++u.processes;
    }
    std::fclose(f);
  }
  closedir(d);
  return u;
}

std::string NcclProfilerPluginValue(config::NcclPluginMode mode, const char* user_value,
                                    const std::string& inject_path, std::string* warning) {
  if (mode == config::NcclPluginMode::kOff || inject_path.empty()) return {};
  if (user_value) {
    if (user_value != inject_path && warning)
      *warning = std::string("NCCL_PROFILER_PLUGIN is set (") + user_value +
                 "): keeping it, so NCCL loads that plugin and gtrace records no nccl_coll records "
                 "(unset it, or pass --nccl-plugin=off to silence this)";
    return {};
  }
  return inject_path;
}

bool ParseDurationMs(const std::string& text, bool plain_is_seconds, double* ms) {
  if (text.empty()) return false;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !std::isfinite(v) || v < 0) return false;
  std::string unit(end);
  double scale;
  if (unit.empty())
    scale = plain_is_seconds ? 1000.0 : 1.0;
  else if (unit == "ms")
    scale = 1.0;
  else if (unit == "s")
    scale = 1000.0;
  else if (unit == "us")
    scale = 0.001;
  else if (unit == "min")
    scale = 60000.0;
  else
    return false;
  *ms = v * scale;
  return true;
}

std::string NormalizeOutputPath(const std::string& path) {
  const std::string ext = ".gtrace";
  if (path.size() >= ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0) return path;
  return path + ext;
}

std::string DefaultOutputPath(const std::string& app, const std::function<bool(const std::string&)>& exists) {
  std::string base = app;
  size_t slash = base.find_last_of('/');
  if (slash != std::string::npos) base = base.substr(slash + 1);
  for (char& c : base)
    if (c == ' ' || c == '\t') c = '_';
  if (base.empty() || base == "." || base == "..") base = "gcollect";
  std::string candidate = base + ".gtrace";
  for (int n = 2; exists(candidate) || exists(candidate + ".parts"); ++n)
    candidate = base + "-" + std::to_string(n) + ".gtrace";
  return candidate;
}

StatusOr<LaunchOptions> ParseOptions(const std::vector<std::string>& args) {
  LaunchOptions o;
  size_t i = 0;
  auto need_value = [&](const std::string& flag, std::string* value) -> Status {
    if (i + 1 >= args.size()) return InvalidArgument(flag + " needs a value");
    *value = args[++i];
    return Status::Ok();
  };
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string flag = a, value;
    bool has_inline = false;
    if (a.rfind("--", 0) == 0) {
      size_t eq = a.find('=');
      if (eq != std::string::npos) {
        flag = a.substr(0, eq);
        value = a.substr(eq + 1);
        has_inline = true;
      }
    }
    auto value_of = [&](const std::string& f) -> Status {
      if (has_inline) return Status::Ok();
      return need_value(f, &value);
    };
    if (a == "--") {
      ++i;
      break;
    } else if (flag == "-h" || flag == "--help") {
      o.help = true;
    } else if (flag == "--version") {
      o.version = true;
    } else if (flag == "-q" || flag == "--quiet") {
      o.quiet = true;
    } else if (flag == "-f" || flag == "--force-overwrite") {
      // nsys spells it "--force-overwrite true"
      if (has_inline && value != "true" && value != "false")
        return InvalidArgument("--force-overwrite takes true or false, got '" + value + "'");
      o.force_overwrite = !has_inline || value == "true";
    } else if (flag == "--keep-parts") {
      o.keep_parts = true;
    } else if (flag == "-o" || flag == "--output") {
      GT_RETURN_IF_ERROR(value_of(flag));
      if (value.empty()) return InvalidArgument(flag + " needs a file name");
      o.output = value;
    } else if (flag == "-t" || flag == "--trace") {
      GT_RETURN_IF_ERROR(value_of(flag));
      std::string err;
      if (!ParseTraceKinds(value, &o.kinds, &err)) return InvalidArgument("--trace: " + err);
    } else if (flag == "--delay" || flag == "--duration" || flag == "--wait-children") {
      GT_RETURN_IF_ERROR(value_of(flag));
      double ms = 0;
      if (!ParseDurationMs(value, /*plain_is_seconds=*/true, &ms))
        return InvalidArgument(flag + ": expected seconds (e.g. 2, 0.5, 1500ms), got '" + value + "'");
      (flag == "--delay" ? o.delay_s : flag == "--duration" ? o.duration_s : o.wait_children_s) = ms / 1000.0;
      if (flag == "--duration" && ms == 0) return InvalidArgument("--duration must be > 0");
    } else if (flag == "--capture-range" || flag == "-c") {
      GT_RETURN_IF_ERROR(value_of(flag));
      if (value == "cudaProfilerApi") {
        o.capture = CaptureMode::kProfilerApi;
      } else if (value.rfind("nvtx:", 0) == 0 && value.size() > 5) {
        o.capture = CaptureMode::kNvtx;
        o.capture_nvtx_name = value.substr(5);
      } else if (value == "none") {
        o.capture = CaptureMode::kNone;
      } else {
        return InvalidArgument("--capture-range: expected cudaProfilerApi or nvtx:NAME, got '" + value + "'");
      }
    } else if (flag == "--gpu-metrics") {
      o.gpu_metrics = true;
      if (has_inline) {
        double ms = 0;
        if (!ParseDurationMs(value, /*plain_is_seconds=*/false, &ms) || ms < 1 || ms > 60000)
          return InvalidArgument("--gpu-metrics: expected an interval from 1ms to 60s (e.g. 100ms), got '" +
                                 value + "'");
        o.gpu_metrics_interval_ms = static_cast<uint32_t>(std::lround(ms));
      }
    } else if (flag == "--counters") {
      auto sets = counters::ParseCounterSets(has_inline ? value : "default");
      if (!sets.ok()) return InvalidArgument("--counters: " + sets.status().message());
      o.counter_sets = *sets;
    } else if (flag == "--counters-only") {
      if (has_inline)
        return InvalidArgument("--counters-only takes no value; choose the set with --counters=SET");
      o.counters_only = true;
    } else if (flag == "--cache-control") {
      GT_RETURN_IF_ERROR(value_of(flag));
      if (value != "all" && value != "none")
        return InvalidArgument("--cache-control: expected all or none, got '" + value + "'");
      o.cache_control_all = value == "all";
      o.cache_control_set = true;
    } else if (flag == "--kernel-regex" || flag == "--launch-skip" || flag == "--launch-count" ||
               flag == "--counters-per-kernel") {
      GT_RETURN_IF_ERROR(value_of(flag));
      if (flag == "--kernel-regex") {
        if (value.empty()) return InvalidArgument("--kernel-regex needs a pattern");
        o.kernel_regex = value;
      } else {
        char* end = nullptr;
        unsigned long long n = std::strtoull(value.c_str(), &end, 10);
        if (value.empty() || *end || value[0] == '-')
          return InvalidArgument(flag + ": expected a count, got '" + value + "'");
        if (flag == "--launch-skip") o.launch_skip = n;
        if (flag == "--launch-count") o.launch_count = n;
        if (flag == "--counters-per-kernel") o.counters_per_kernel = static_cast<int64_t>(n);
      }
    } else if (flag == "--pc-sampling") {
      o.pc_sampling_period_exp = kPcSamplingDefaultPeriodExp;
      if (has_inline) {
        char* end = nullptr;
        unsigned long n = std::strtoul(value.c_str(), &end, 10);
        if (value.empty() || *end || value[0] == '-' || n < kPcSamplingMinPeriodExp ||
            n > kPcSamplingMaxPeriodExp)
          return InvalidArgument("--pc-sampling: expected the period exponent N (2^N cycles) from " +
                                 std::to_string(kPcSamplingMinPeriodExp) + " to " +
                                 std::to_string(kPcSamplingMaxPeriodExp) + ", got '" + value + "'");
        o.pc_sampling_period_exp = static_cast<uint32_t>(n);
      }
    } else if (flag == "--sample") {
      GT_RETURN_IF_ERROR(value_of(flag));
      if (value == "none" || value == "off")
        o.cpu_sample_hz = 0;
      else if (value == "cpu")
        o.cpu_sample_hz = o.cpu_sample_hz ? o.cpu_sample_hz : config::kCpuSampleDefaultHz;
      else
        return InvalidArgument("--sample: expected cpu or none, got '" + value + "'");
    } else if (flag == "--sample-hz") {
      GT_RETURN_IF_ERROR(value_of(flag));
      char* end = nullptr;
      const unsigned long n = std::strtoul(value.c_str(), &end, 10);
      if (value.empty() || *end || value[0] == '-' || n < 1 || n > config::kCpuSampleMaxHz)
        return InvalidArgument("--sample-hz: expected 1.." + std::to_string(config::kCpuSampleMaxHz) +
                               " samples a second per thread, got '" + value + "'");
      o.cpu_sample_hz = static_cast<uint32_t>(n);
    } else if (flag == "--sample-overhead") {
      GT_RETURN_IF_ERROR(value_of(flag));
      if (!config::ParseOverheadPct(value, &o.cpu_sample_max_overhead_pct))
        return InvalidArgument(
            "--sample-overhead: expected the most of a busy thread's time sampling may take, 0..100 "
            "(percent; 0 = keep the rate), got '" +
            value + "'");
    } else if (flag == "--osrt-threshold") {
      GT_RETURN_IF_ERROR(value_of(flag));
      char* end = nullptr;
      long long n = std::strtoll(value.c_str(), &end, 10);
      if (value.empty() || *end || n < 0)
        return InvalidArgument("--osrt-threshold: expected nanoseconds (e.g. 1000), got '" + value + "'");
      o.osrt_threshold_ns = n;
    } else if (flag == "--nccl-plugin") {
      GT_RETURN_IF_ERROR(value_of(flag));
      if (!config::ParseNcclPluginMode(value, &o.nccl_plugin))
        return InvalidArgument("--nccl-plugin: expected ops, channels or off, got '" + value + "'");
    } else if (flag == "--upload") {
      GT_RETURN_IF_ERROR(value_of(flag));
      if (value.rfind("http://", 0) != 0 && value.rfind("https://", 0) != 0)
        return InvalidArgument("--upload: expected the server's http:// or https:// URL, got '" + value +
                               "'");
      o.upload_url = value;
    } else if (flag == "--inject-lib") {
      GT_RETURN_IF_ERROR(value_of(flag));
      o.inject_lib = value;
    } else if (!a.empty() && a[0] == '-') {
      return InvalidArgument("unknown option '" + a + "' (see gcollect --help)");
    } else {
      break;  // first non-option: the app (the "--" is optional)
    }
  }
  for (; i < args.size(); ++i) o.app.push_back(args[i]);
  if (o.app.empty() && !o.help && !o.version)
    return InvalidArgument("no application given: gcollect [options] -- ./app args...");
  if (o.counters_only && !o.counter_sets) o.counter_sets = counters::kDefaultSets;
  if (!o.counter_sets && (!o.kernel_regex.empty() || o.launch_skip || o.launch_count ||
                          o.counters_per_kernel >= 0 || o.cache_control_set))
    return InvalidArgument(
        "--kernel-regex, --launch-skip, --launch-count, --counters-per-kernel and --cache-control select "
        "launches for --counters; add --counters");
  if (o.counters_only &&
      (o.capture != CaptureMode::kNone || o.delay_s > 0 || o.duration_s > 0 || o.gpu_metrics))
    return InvalidArgument(
        "--counters-only records no timeline, so --capture-range, --delay, --duration and --gpu-metrics do "
        "not "
        "apply; choose launches with --kernel-regex, --launch-skip, --launch-count");
  if (o.counters_only && o.pc_sampling_period_exp)
    return InvalidArgument(
        "--pc-sampling rides the timeline run, which --counters-only skips; use --counters");
  return o;
}

}  // namespace gt::launcher

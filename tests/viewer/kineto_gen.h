// Generated Chrome / Kineto JSON for the JSON import's tests and benchmark.
//
// KinetoJson: what torch.profiler writes for a transformer training loop (the event mix of a real Kineto
// trace of one: CPU ops with record_shapes args, runtime calls and their kernels joined by ac2g flows, fwdbwd
// flows, annotations, memsets and memcpys, metadata; long templated kernel names, epoch microsecond
// timestamps with three decimals), to about `bytes` bytes. OddJson: small documents that exercise every
// corner the importer handles: all phases (B/E/X/i/I/C/M/s/t/f/ b/e/n and unknown ones), ts and dur as
// floats, integers, strings and garbage, string and numeric pids, unicode escapes and raw UTF-8, nested and
// odd args, missing fields, duplicate keys, displayTimeUnit and other top-level members, a bare array instead
// of an object. ChromeJson: a plain Chrome trace; ManyThreadsJson: one event per thread (below).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace gt::test {

class GenRng {
 public:
  explicit GenRng(uint64_t seed) : s_(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t Next() {
    s_ ^= s_ << 13, s_ ^= s_ >> 7, s_ ^= s_ << 17;
    return s_;
  }
  uint32_t Below(uint32_t n) { return static_cast<uint32_t>(Next() % n); }
  bool Chance(uint32_t percent) { return Below(100) < percent; }

 private:
  uint64_t s_;
};

namespace gen_detail {

inline void Us(std::string& o,
               uint64_t ns) {  // epoch microseconds with three decimals, as Kineto writes them
  char b[48];
  std::snprintf(b, sizeof b, "%llu.%03llu", (unsigned long long)(ns / 1000), (unsigned long long)(ns % 1000));
  o += b;
}

inline const char* const kKernels[] = {
    "void "
    "cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8>(cutlass_80_wmma_"
    "tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8::Params)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, "
    "1ul> "
    ">(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)",
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, "
    "c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_"
    "kernel__5x_cublas",
    "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
    "cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, "
    "false, true, true, false, false>(pytorch_flash::Flash_fwd_params)",
    "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_"
    "add<c10::BFloat16> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<c10::BFloat16> const&)::"
    "{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<c10::BFloat16> "
    ">(at::TensorIteratorBase&, at::native::CUDAFunctor_add<c10::BFloat16> const&)::{lambda(int)#1})",
};
inline const char* const kOps[] = {"aten::linear",
                                   "aten::matmul",
                                   "aten::mm",
                                   "aten::add",
                                   "aten::layer_norm",
                                   "aten::native_layer_norm",
                                   "aten::view",
                                   "aten::_to_copy",
                                   "aten::empty",
                                   "aten::softmax",
                                   "aten::scaled_dot_product_attention",
                                   "aten::gelu",
                                   "autograd::engine::evaluate_function: MmBackward0",
                                   "aten::t",
                                   "aten::transpose",
                                   "aten::copy_"};

}  // namespace gen_detail

inline std::string KinetoJson(uint64_t bytes, uint64_t seed = 1) {
  using namespace gen_detail;
  GenRng r(seed);
  std::string o;
  o.reserve(bytes + (1 << 16));
  o += "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n    {\"id\": 0, \"name\": \"NVIDIA H200\", "
       "\"totalGlobalMem\": 150754820096, \"computeMajor\": 9, \"computeMinor\": 0, \"maxThreadsPerBlock\": "
       "1024, \"maxThreadsPerMultiprocessor\": 2048, \"regsPerBlock\": 65536, \"regsPerMultiprocessor\": "
       "65536, \"warpSize\": 32, \"sharedMemPerBlock\": 49152, \"sharedMemPerMultiprocessor\": 233472, "
       "\"numSms\": 132, \"sharedMemPerBlockOptin\": 232448}\n  ],\n  \"cupti_version\": 24, "
       "\"cuda_runtime_version\": 12040, \"cuda_driver_version\": 12060, \"record_shapes\": 1, "
       "\"trace_id\": \"5C0F1E2D3B4A\",\n  \"traceEvents\": [\n";
  const uint32_t pid = 2810, tids[] = {2810, 2894};
  uint64_t t = 1732500000000000000ull + r.Below(1000000) * 1000ull;
  uint64_t ext = 1, corr = 1000, flow = 1, pending_flow = 0;
  bool first = true;
  auto sep = [&] {
    if (!first) o += ",\n";
    first = false;
  };
  char b[512];
  // Metadata first, as Kineto writes it.
  sep();
  std::snprintf(b, sizeof b,
                "  {\"name\": \"process_name\", \"ph\": \"M\", \"ts\": %llu.000, \"pid\": %u, \"tid\": 0, "
                "\"args\": {\"name\": \"python3\"}}",
                (unsigned long long)(t / 1000), pid);
  o += b;
  for (uint32_t tid : tids) {
    sep();
    std::snprintf(b, sizeof b,
                  "  {\"name\": \"thread_name\", \"ph\": \"M\", \"ts\": %llu.000, \"pid\": %u, \"tid\": %u, "
                  "\"args\": {\"name\": \"thread %u (python3)\"}}",
                  (unsigned long long)(t / 1000), pid, tid, tid);
    o += b;
  }
  uint64_t gpu_t = t;
  while (o.size() < bytes) {
    const uint32_t tid = tids[r.Below(10) == 0 ? 1 : 0];
    // A CPU op with shapes, usually launching a kernel through the runtime.
    const uint64_t op_dur = 5000 + r.Below(200000);
    sep();
    o += "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"";
    o += kOps[r.Below(sizeof kOps / sizeof *kOps)];
    o += "\", \"pid\": ";
    o += std::to_string(pid);
    o += ", \"tid\": ";
    o += std::to_string(tid);
    o += ", \"ts\": ";
    Us(o, t);
    o += ", \"dur\": ";
    Us(o, op_dur);
    const uint32_t d0 = 1 << (4 + r.Below(8)), d1 = 1 << (4 + r.Below(8));
    std::snprintf(
        b, sizeof b,
        ",\n    \"args\": {\"External id\": %llu, \"Record function id\": 0, \"Sequence number\": %llu, "
        "\"Fwd thread id\": 0, \"Ev Idx\": %llu, \"Input Dims\": [[%u, %u], [%u, %u], []], "
        "\"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"\"], \"Input Strides\": [[%u, 1], "
        "[%u, 1], []], \"Concrete Inputs\": [\"\", \"\", \"\"]}}",
        (unsigned long long)ext, (unsigned long long)(ext / 2), (unsigned long long)ext, d0, d1, d1, d0, d1,
        d0);
    o += b;
    if (r.Chance(70)) {
      const uint64_t rt = t + 1000 + r.Below(3000), rt_dur = 2000 + r.Below(8000);
      const bool memset = r.Chance(4), memcpy = !memset && r.Chance(4);
      sep();
      std::snprintf(
          b, sizeof b,
          "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"%s\", \"pid\": %u, \"tid\": %u, "
          "\"ts\": ",
          memset   ? "cudaMemsetAsync"
          : memcpy ? "cudaMemcpyAsync"
                   : "cudaLaunchKernel",
          pid, tid);
      o += b;
      Us(o, rt);
      o += ", \"dur\": ";
      Us(o, rt_dur);
      std::snprintf(b, sizeof b,
                    ",\n    \"args\": {\"External id\": %llu, \"cbid\": %u, \"correlation\": %llu}}",
                    (unsigned long long)ext,
                    memset   ? 51
                    : memcpy ? 41
                             : 211,
                    (unsigned long long)corr);
      o += b;
      sep();
      o += "  {\"ph\": \"s\", \"id\": " + std::to_string(corr) + ", \"pid\": " + std::to_string(pid) +
           ", \"tid\": " + std::to_string(tid) + ", \"ts\": ";
      Us(o, rt);
      o += ", \"cat\": \"ac2g\", \"name\": \"ac2g\"}";
      gpu_t = std::max(gpu_t, rt + 3000) + r.Below(2000);
      const uint64_t k_dur = 1000 + r.Below(400000);
      sep();
      if (memset || memcpy) {
        std::snprintf(b, sizeof b,
                      "  {\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": 0, \"tid\": 7, \"ts\": ",
                      memset ? "gpu_memset" : "gpu_memcpy",
                      memset ? "Memset (Device)" : "Memcpy HtoD (Pinned -> Device)");
        o += b;
        Us(o, gpu_t);
        o += ", \"dur\": ";
        Us(o, k_dur);
        std::snprintf(
            b, sizeof b,
            ",\n    \"args\": {\"External id\": %llu, \"device\": 0, \"context\": 1, \"stream\": 7, "
            "\"correlation\": %llu, \"bytes\": %u, \"memory bandwidth (GB/s)\": %u.%06u}}",
            (unsigned long long)ext, (unsigned long long)corr, 4096u << r.Below(12), r.Below(900),
            r.Below(1000000));
        o += b;
      } else {
        o += "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"";
        o += kKernels[r.Below(sizeof kKernels / sizeof *kKernels)];
        o += "\", \"pid\": 0, \"tid\": 7, \"ts\": ";
        Us(o, gpu_t);
        o += ", \"dur\": ";
        Us(o, k_dur);
        std::snprintf(
            b, sizeof b,
            ",\n    \"args\": {\"External id\": %llu, \"queued\": 0, \"device\": 0, \"context\": 1, "
            "\"stream\": 7, \"correlation\": %llu, \"registers per thread\": %u, \"shared memory\": %u, "
            "\"blocks per SM\": %u.%03u, \"warps per SM\": %u.%03u, \"grid\": [%u, %u, 1], "
            "\"block\": [%u, 1, 1], \"est. achieved occupancy %%\": %u}}",
            (unsigned long long)ext, (unsigned long long)corr, 16 + r.Below(200), r.Below(200000),
            r.Below(16), r.Below(1000), r.Below(64), r.Below(1000), 1 + r.Below(4096), 1 + r.Below(64),
            32u << r.Below(5), r.Below(100));
        o += b;
      }
      sep();
      o += "  {\"ph\": \"f\", \"id\": " + std::to_string(corr) + ", \"pid\": 0, \"tid\": 7, \"ts\": ";
      Us(o, gpu_t);
      o += ", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}";
      gpu_t += k_dur;
      ++corr;
    }
    if (pending_flow) {  // forward -> backward flow: from an earlier op to the start of this one
      sep();
      o += "  {\"ph\": \"f\", \"id\": " + std::to_string(pending_flow) + ", \"pid\": " + std::to_string(pid) +
           ", \"tid\": " + std::to_string(tid) + ", \"ts\": ";
      Us(o, t);
      o += ", \"cat\": \"fwdbwd\", \"name\": \"fwdbwd\", \"bp\": \"e\"}";
      pending_flow = 0;
    } else if (r.Chance(5)) {
      sep();
      o += "  {\"ph\": \"s\", \"id\": " + std::to_string(flow) + ", \"pid\": " + std::to_string(pid) +
           ", \"tid\": " + std::to_string(tid) + ", \"ts\": ";
      Us(o, t);
      o += ", \"cat\": \"fwdbwd\", \"name\": \"fwdbwd\"}";
      pending_flow = flow++;
    }
    if (r.Chance(3)) {
      sep();
      o += "  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"## forward ##\", \"pid\": " +
           std::to_string(pid) + ", \"tid\": " + std::to_string(tid) + ", \"ts\": ";
      Us(o, t);
      o += ", \"dur\": ";
      Us(o, op_dur);
      o += ",\n    \"args\": {\"External id\": " + std::to_string(ext) + ", \"Record function id\": 0}}";
      sep();
      o += "  {\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"## forward ##\", \"pid\": 0, "
           "\"tid\": 7, \"ts\": ";
      Us(o, gpu_t);
      o += ", \"dur\": ";
      Us(o, 10000);
      o += ",\n    \"args\": {\"External id\": " + std::to_string(ext) + "}}";
    }
    t += op_dur / 4 + 1000;
    ++ext;
  }
  o += ",\n  {\"name\": \"Iteration Start: PyTorch Profiler\", \"ph\": \"i\", \"s\": \"g\", \"pid\": "
       "\"Traces\", "
       "\"tid\": \"Trace PyTorch Profiler\", \"ts\": ";
  Us(o, t);
  o += "}\n  ],\n  \"traceName\": \"/tmp/trace.json\",\n  \"displayTimeUnit\": \"ms\",\n  "
       "\"baseTimeNanoseconds\": 1732400000000000000\n}\n";
  return o;
}

// ChromeJson: a plain Chrome trace (what Chrome's tracing, the JAX / TensorFlow profilers' trace.json.gz and
// hand-instrumented apps write), to about `bytes` bytes: several processes and threads named by "M" events;
// on each thread nested "B"/"E" pairs with "X" events inside, integer microsecond timestamps with thread
// times ("tts"), args of small objects; counters ("C") of one and of two series, thread instants, nestable
// async pairs ("b"/"e") with hex ids, and flows ("s"/"f"). Every event is well formed: the importer keeps all
// of them (the benchmark checks that nothing is skipped).
inline std::string ChromeJson(uint64_t bytes, uint64_t seed = 1) {
  GenRng r(seed);
  std::string o;
  o.reserve(bytes + (1 << 16));
  o += "{\"traceEvents\":[\n";
  static const char* const kProcesses[] = {"Browser", "Renderer", "GPU Process", "python3"};
  static const char* const kThreads[] = {"CrBrowserMain", "ThreadPoolForegroundWorker", "Compositor",
                                         "VizCompositorThread"};
  static const char* const kSlices[] = {"ThreadControllerImpl::RunTask",
                                        "v8.run",
                                        "FunctionCall",
                                        "Layout",
                                        "UpdateLayoutTree",
                                        "Paint",
                                        "RasterTask",
                                        "ProxyMain::BeginMainFrame",
                                        "jit_train_step",
                                        "XlaModule:#fused_computation.42#",
                                        "ParseHTML",
                                        "EvaluateScript"};
  static const char* const kCats[] = {"toplevel", "v8",  "devtools.timeline", "blink",
                                      "cc",       "xla", "benchmark"};
  static const char* const kFiles[] = {"https://example.com/static/js/app.7f3a9c.js",
                                       "third_party/blink/renderer/core/frame/local_frame_view.cc",
                                       "jax/_src/interpreters/pxla.py", "train.py"};
  constexpr uint32_t kPids = 4, kTids = 4;
  uint64_t ts[kPids][kTids];  // each thread's clock, microseconds
  char b[640];
  bool first = true;
  auto sep = [&] {
    if (!first) o += ",\n";
    first = false;
  };
  for (uint32_t p = 0; p < kPids; ++p) {
    sep();
    std::snprintf(b, sizeof b,
                  "{\"args\":{\"name\":\"%s\"},\"cat\":\"__metadata\",\"name\":\"process_name\",\"ph\":\"M\","
                  "\"pid\":%u,\"tid\":0,\"ts\":0}",
                  kProcesses[p], 1000 + p);
    o += b;
    for (uint32_t t = 0; t < kTids; ++t) {
      ts[p][t] = 5000000000ull + r.Below(100000);
      sep();
      std::snprintf(
          b, sizeof b,
          "{\"args\":{\"name\":\"%s\"},\"cat\":\"__metadata\",\"name\":\"thread_name\",\"ph\":\"M\","
          "\"pid\":%u,\"tid\":%u,\"ts\":0}",
          kThreads[t], 1000 + p, 20000 + p * 100 + t);
      o += b;
    }
  }
  uint64_t async_id = 0x1000, flow_id = 1;
  while (o.size() < bytes) {
    const uint32_t p = r.Below(kPids), t = r.Below(kTids), pid = 1000 + p, tid = 20000 + p * 100 + t;
    uint64_t& now = ts[p][t];
    uint64_t tts = now / 3;
    // A nested stack of B/E slices, X slices inside the innermost one.
    const uint32_t depth = 1 + r.Below(4);
    std::vector<const char*> open;
    for (uint32_t d = 0; d < depth; ++d) {
      const char* name = kSlices[r.Below(sizeof kSlices / sizeof *kSlices)];
      const char* cat = kCats[r.Below(sizeof kCats / sizeof *kCats)];
      sep();
      if (r.Chance(50))
        std::snprintf(b, sizeof b,
                      "{\"args\":{\"data\":{\"frame\":\"%016llX\",\"url\":\"%s\",\"lineNumber\":%u}},"
                      "\"cat\":\"%s\",\"name\":\"%s\",\"ph\":\"B\",\"pid\":%u,\"tid\":%u,\"ts\":%llu,"
                      "\"tts\":%llu}",
                      (unsigned long long)r.Next(), kFiles[r.Below(4)], r.Below(5000), cat, name, pid, tid,
                      (unsigned long long)now, (unsigned long long)tts);
      else
        std::snprintf(b, sizeof b,
                      "{\"args\":{},\"cat\":\"%s\",\"name\":\"%s\",\"ph\":\"B\",\"pid\":%u,\"tid\":%u,"
                      "\"ts\":%llu,\"tts\":%llu}",
                      cat, name, pid, tid, (unsigned long long)now, (unsigned long long)tts);
      o += b;
      open.push_back(cat);
      now += 1 + r.Below(50), tts += 1 + r.Below(20);
    }
    for (uint32_t x = r.Below(4); x > 0; --x) {
      const uint64_t dur = 1 + r.Below(400);
      sep();
      std::snprintf(
          b, sizeof b,
          "{\"args\":{\"src_file\":\"%s\",\"src_func\":\"Run\"},\"cat\":\"%s\",\"dur\":%llu,"
          "\"name\":\"%s\",\"ph\":\"X\",\"pid\":%u,\"tdur\":%llu,\"tid\":%u,\"ts\":%llu,\"tts\":%llu}",
          kFiles[r.Below(4)], kCats[r.Below(sizeof kCats / sizeof *kCats)], (unsigned long long)dur,
          kSlices[r.Below(sizeof kSlices / sizeof *kSlices)], pid, (unsigned long long)(dur / 2), tid,
          (unsigned long long)now, (unsigned long long)tts);
      o += b;
      now += dur + r.Below(20), tts += dur / 2;
    }
    if (r.Chance(10)) {
      sep();
      std::snprintf(
          b, sizeof b,
          "{\"args\":{\"data\":{\"type\":\"click\"}},\"cat\":\"devtools.timeline\",\"name\":"
          "\"EventDispatch\",\"ph\":\"i\",\"pid\":%u,\"s\":\"t\",\"tid\":%u,\"ts\":%llu,\"tts\":%llu}",
          pid, tid, (unsigned long long)now, (unsigned long long)tts);
      o += b;
    }
    if (r.Chance(8)) {  // a flow from here to another process's thread, a little later
      const uint32_t q = r.Below(kPids), u = r.Below(kTids);
      sep();
      std::snprintf(b, sizeof b,
                    "{\"bind_id\":\"0x%llx\",\"cat\":\"toplevel.flow\",\"id\":%llu,\"name\":\"PostTask\","
                    "\"ph\":\"s\",\"pid\":%u,\"tid\":%u,\"ts\":%llu}",
                    (unsigned long long)flow_id, (unsigned long long)flow_id, pid, tid,
                    (unsigned long long)now);
      o += b;
      uint64_t& later = ts[q][u];
      later = std::max(later, now + 5);
      sep();
      std::snprintf(b, sizeof b,
                    "{\"bp\":\"e\",\"cat\":\"toplevel.flow\",\"id\":%llu,\"name\":\"PostTask\",\"ph\":\"f\","
                    "\"pid\":%u,\"tid\":%u,\"ts\":%llu}",
                    (unsigned long long)flow_id, 1000 + q, 20000 + q * 100 + u, (unsigned long long)later);
      o += b;
      ++flow_id;
    }
    while (!open.empty()) {
      now += 1 + r.Below(30), tts += 1 + r.Below(10);
      sep();
      std::snprintf(b, sizeof b,
                    "{\"args\":{},\"cat\":\"%s\",\"ph\":\"E\",\"pid\":%u,\"tid\":%u,\"ts\":%llu,"
                    "\"tts\":%llu}",
                    open.back(), pid, tid, (unsigned long long)now, (unsigned long long)tts);
      o += b;
      open.pop_back();
    }
    if (r.Chance(15)) {  // counters: one series, or two
      sep();
      if (r.Chance(50))
        std::snprintf(b, sizeof b,
                      "{\"args\":{\"value\":%u},\"cat\":\"memory\",\"name\":\"JSHeapUsed\",\"ph\":\"C\","
                      "\"pid\":%u,\"tid\":%u,\"ts\":%llu}",
                      1000000 + r.Below(90000000), pid, tid, (unsigned long long)now);
      else
        std::snprintf(b, sizeof b,
                      "{\"args\":{\"allocated\":%u.%02u,\"reserved\":%u},\"cat\":\"memory\",\"name\":"
                      "\"GPU memory\",\"ph\":\"C\",\"pid\":%u,\"tid\":%u,\"ts\":%llu}",
                      r.Below(80000), r.Below(100), 80000 + r.Below(10000), pid, tid,
                      (unsigned long long)now);
      o += b;
    }
    if (r.Chance(6)) {  // a nestable async pair on the process's async row
      const uint64_t id = async_id++, end = now + 10 + r.Below(5000);
      sep();
      std::snprintf(
          b, sizeof b,
          "{\"args\":{\"url\":\"%s\"},\"cat\":\"loading\",\"id2\":{\"local\":\"0x%llx\"},\"id\":\"0x%llx\","
          "\"name\":\"ResourceLoad\",\"ph\":\"b\",\"pid\":%u,\"tid\":%u,\"ts\":%llu}",
          kFiles[r.Below(4)], (unsigned long long)id, (unsigned long long)id, pid, tid,
          (unsigned long long)now);
      o += b;
      sep();
      std::snprintf(
          b, sizeof b,
          "{\"args\":{},\"cat\":\"loading\",\"id\":\"0x%llx\",\"name\":\"ResourceLoad\",\"ph\":\"e\","
          "\"pid\":%u,\"tid\":%u,\"ts\":%llu}",
          (unsigned long long)id, pid, tid, (unsigned long long)end);
      o += b;
    }
    now += r.Below(200);
  }
  o += "\n],\"displayTimeUnit\":\"ns\",\"metadata\":{\"command_line\":\"chrome --enable-tracing\"}}\n";
  return o;
}

// ManyThreadsJson: one "X" event on each of as many threads as fit in about `bytes` (a server's log of a
// thread per request, or a hostile upload): what each track costs, with hardly any events to amortize it.
inline std::string ManyThreadsJson(uint64_t bytes) {
  std::string o = "{\"traceEvents\":[\n";
  o.reserve(bytes + 128);
  char b[160];
  for (uint32_t tid = 1; o.size() < bytes; ++tid)
    o.append(b, size_t(std::snprintf(b, sizeof b,
                                     "%s{\"ph\":\"X\",\"name\":\"request\",\"pid\":1,\"tid\":%u,\"ts\":%u,"
                                     "\"dur\":1}",
                                     tid == 1 ? "" : ",\n", tid, tid)));
  o += "\n]}\n";
  return o;
}

inline std::string OddJson(uint64_t seed, uint32_t events = 200) {
  GenRng r(seed);
  std::string o;
  const bool bare = r.Chance(15);
  auto ws = [&] {
    static const char* const kWs[] = {"", " ", "\n", "\t", " \r\n  "};
    o += kWs[r.Below(5)];
  };
  auto pick = [&](std::initializer_list<const char*> v) {
    return *(v.begin() + r.Below(uint32_t(v.size())));
  };
  auto str_value = [&] {
    return pick({"\"plain\"", "\"caf\\u00e9 \\ud83d\\ude00\"", "\"caf\xc3\xa9 \xe2\x82\xac\"",
                 "\"q\\\"uote\\\\\"", "\"tab\\tnl\\nctl\\u0001\"", "\"\"", "\"\\/slash\"", "\"x\\u0000y\""});
  };
  auto number = [&] {
    return pick({"0", "-0", "12", "-7", "3.25", "1e3", "1.5E-2", "123456789012345678901234567890", "-9.0e+2",
                 "18446744073709551615", "9223372036854775808", "0.000001", "1712345678901234.567891"});
  };
  auto value = [&](int depth, auto&& self) -> void {
    switch (r.Below(depth > 2 ? 4 : 6)) {
      case 0:
        o += str_value();
        break;
      case 1:
        o += number();
        break;
      case 2:
        o += pick({"true", "false", "null"});
        break;
      case 3:
        o += "\"v" + std::to_string(r.Below(50)) + "\"";
        break;
      case 4: {
        o += '[';
        const uint32_t n = r.Below(4);
        for (uint32_t i = 0; i < n; ++i) {
          if (i) o += ',';
          ws();
          self(depth + 1, self);
        }
        o += ']';
        break;
      }
      default: {
        o += '{';
        const uint32_t n = r.Below(4);
        for (uint32_t i = 0; i < n; ++i) {
          if (i) o += ',';
          o += pick({"\"k\"", "\"name\"", "\"\\u006bey\"", "\"grid\"", "\"caf\xc3\xa9\""});
          o += ':';
          self(depth + 1, self);
        }
        o += '}';
      }
    }
  };
  if (!bare) {
    o += "{";
    ws();
    if (r.Chance(50)) o += "\"displayTimeUnit\": \"ns\", ";
    if (r.Chance(30)) o += "\"schemaVersion\": 1, ";
    if (r.Chance(30)) {
      o += "\"otherData\": ";
      value(0, value);
      o += ", ";
    }
    if (r.Chance(20))
      o += "\"deviceProperties\": [{\"id\": 1, \"name\": \"GPU \\u00e9\", \"numSms\": 8, \"totalGlobalMem\": "
           "1e3}, 5], ";
    o += "\"traceEvents\"";
    ws();
    o += ":";
    ws();
  }
  o += "[";
  static const char* const kPh[] = {"X", "B", "E", "i", "I", "C", "M", "s",  "t", "f",
                                    "b", "e", "n", "S", "F", "R", "Q", "XX", ""};
  static const char* const kCat[] = {
      "cpu_op", "kernel", "cuda_runtime", "gpu_memcpy",  "gpu_memset",
      "ac2g",   "python", "Kernel",       "cuda_driver", "gpu_user_annotation"};
  for (uint32_t i = 0; i < events; ++i) {
    if (i) o += ",";
    ws();
    if (r.Chance(2)) {  // not an event object
      value(3, value);
      continue;
    }
    std::vector<std::string> fields;
    if (!r.Chance(3))
      fields.push_back(std::string("\"ph\": \"") + kPh[r.Below(sizeof kPh / sizeof *kPh)] + "\"");
    if (r.Chance(90))
      fields.push_back(std::string("\"name\": ") +
                       pick({"\"op\"", "\"aten::mm\"", "\"k\\u00e9rnel\"", "\"process_name\"",
                             "\"thread_name\"", "\"thread_sort_index\"", "\"\"", "7"}));
    if (r.Chance(80)) fields.push_back(std::string("\"cat\": \"") + kCat[r.Below(10)] + "\"");
    if (r.Chance(95)) {
      const uint64_t ts = 1000 + r.Below(100000);
      switch (r.Below(6)) {
        case 0:
          fields.push_back("\"ts\": " + std::to_string(ts));
          break;
        case 1:
          fields.push_back("\"ts\": " + std::to_string(ts) + "." + std::to_string(r.Below(1000000)));
          break;
        case 2:
          fields.push_back("\"ts\": \"" + std::to_string(ts) + ".5\"");
          break;
        case 3:
          fields.push_back("\"ts\": " + std::to_string(ts) + "e0");
          break;
        case 4:
          fields.push_back(std::string("\"ts\": ") + pick({"null", "\"x\"", "-5", "true"}));
          break;
        default:
          fields.push_back("\"ts\": " + std::to_string(ts) + ".25");
          break;
      }
    }
    if (r.Chance(70))
      fields.push_back(std::string("\"dur\": ") +
                       pick({"5", "0.5", "\"3\"", "-1", "12.3456", "100", "null"}));
    if (r.Chance(90))
      fields.push_back(std::string("\"pid\": ") + pick({"1", "2", "\"3\"", "\"Spans\"", "-1", "0"}));
    if (r.Chance(90)) fields.push_back(std::string("\"tid\": ") + pick({"1", "7", "\"t\"", "2.0", "\"9\""}));
    if (r.Chance(40)) fields.push_back(std::string("\"id\": ") + pick({"1", "\"0x2a\"", "3", "\"a\""}));
    if (r.Chance(10)) fields.push_back(std::string("\"bp\": \"e\""));
    if (r.Chance(10)) fields.push_back(std::string("\"s\": \"") + pick({"g", "p", "t"}) + "\"");
    if (r.Chance(70)) {
      std::string a = "\"args\": {";
      const uint32_t n = r.Below(6);
      for (uint32_t k = 0; k < n; ++k) {
        if (k) a += ", ";
        a += pick({"\"name\"", "\"correlation\"", "\"device\"", "\"stream\"", "\"grid\"", "\"block\"",
                   "\"bytes\"", "\"value\"", "\"sort_index\"", "\"External id\"", "\"n\\u00e9sted\""});
        a += ": ";
        std::string save;
        save.swap(o);
        value(0, value);
        a += o;
        o.swap(save);
      }
      fields.push_back(a + "}");
    }
    if (r.Chance(5)) fields.push_back("\"args\": [1, 2]");
    if (r.Chance(5)) fields.push_back("\"extra\": {\"deep\": [[[]]]}");
    if (r.Chance(5) && !fields.empty())
      fields.push_back(fields[r.Below(uint32_t(fields.size()))]);  // duplicate
    for (size_t k = fields.size(); k > 1; --k) std::swap(fields[k - 1], fields[r.Below(uint32_t(k))]);
    o += "{";
    for (size_t k = 0; k < fields.size(); ++k) {
      if (k) o += ",";
      ws();
      o += fields[k];
    }
    ws();
    o += "}";
  }
  ws();
  o += "]";
  if (!bare) {
    if (r.Chance(30)) o += ", \"traceName\": \"x\"";
    o += "}";
  }
  ws();
  return o;
}

}  // namespace gt::test

// Golden tests: the sample trace -> `gtrace info` text and Chrome JSON facts, compared to expected output.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "chrome_export.h"
#include "info.h"
#include "random_records.h"
#include "sample_trace.h"

using namespace gt;
using namespace gt::test;

TEST_CASE("gtrace info summary of the sample trace", "[cli][golden]") {
  Loaded l = Decode(SampleTraceBytes());
  REQUIRE(l.status.ok());
  l.report.bytes_total = 1234;  // the compressed size depends on the zstd version; pin it
  cli::InfoInput in{"sample.gtrace", &l.data, &l.report};
  const char* expected = R"(File       sample.gtrace (1234 bytes)
Format     .gtrace 1.4, 1 segment, 22 chunks
Status     complete
Time span  520 µs, starting 2025-11-22 10:00:00.001 UTC (trace clock 2000000 .. 2520000 ns)
Events     15 timeline events (54 records decoded, strings included)

Metadata
  command_line  ./matmul --n 4096
  host          node7
  tool_version  gcollect 0.1.0
  clock sync  trace 1000000 ns = 2025-11-22 10:00:00.000 UTC

Processes (1)
  pid 4242    matmul  parent 1  exited 0, ran 8 ms
      command ./matmul --n 4096
      threads (2): 4242 "matmul" 4250 "cuda-EvtHandlr"

Devices (1)
  GPU 0  NVIDIA H200 (GH100)  pid 4242
      compute capability 9.0, 132 SMs @ 1980 MHz, warp 32, 65536 regs/SM, 64 warps/SM max
      memory 140 GiB, L2 50.0 MiB, shared 228 KiB/SM
      bandwidth DRAM 4.80 TB/s, L2 12.0 TB/s, L1 33.0 TB/s
      peaks FP64 67.0 TFLOP/s, FP32 67.0 TFLOP/s, BF16 tensor 989 TFLOP/s (table)

Records
  process                         1
  thread                          2
  device                          1
  context                         1
  stream                          1
  kernel                          2
  memcpy                          1
  memset                          1
  api_call                        6
  nvtx                            2
  sync                            1
  memory                          1
  overhead                        1
  counter_descriptor              1
  counter_sample                  3
  kernel_metric                   1
  stall_sample                    1
  flow                            1
  loss                            1

Losses and health
  cupti_dropped_records    warning   count 3        pid 4242  CUPTI dropped 3 activity records (buffer full)

Load problems
  (none)
)";
  CHECK(cli::FormatInfoText(in) == expected);
}

TEST_CASE("gtrace info --json is parseable and complete", "[cli]") {
  Loaded l = Decode(SampleTraceBytes());
  REQUIRE(l.status.ok());
  cli::InfoInput in{"sample.gtrace", &l.data, &l.report};
  auto j = nlohmann::json::parse(cli::FormatInfoJson(in), nullptr, false);
  REQUIRE_FALSE(j.is_discarded());
  CHECK(j["clean"] == true);
  CHECK(j["counts"]["kernel"] == 2);
  CHECK(j["devices"][0]["name"] == "NVIDIA H200");
  CHECK(j["devices"][0]["compute_capability"] == "9.0");
  CHECK(j["metadata"]["host"] == "node7");
  CHECK(j["processes"][0]["threads"].size() == 2);
}

TEST_CASE("Chrome export of the sample trace", "[cli][export]") {
  Loaded l = Decode(SampleTraceBytes());
  REQUIRE(l.status.ok());
  std::string out;
  size_t pieces = 0;
  ChromeExportOptions o;
  o.buffer_bytes = 256;  // force many pieces
  REQUIRE(ExportChromeJson(
              l.data,
              [&](std::string_view s) {
                out.append(s);
                ++pieces;
                return Status::Ok();
              },
              o)
              .ok());
  CHECK(pieces > 3);
  auto j = nlohmann::json::parse(out, nullptr, false);
  REQUIRE_FALSE(j.is_discarded());
  const auto& ev = j["traceEvents"];
  auto count = [&](const std::string& ph, const std::string& cat = "") {
    size_t n = 0;
    for (const auto& e : ev)
      if (e["ph"] == ph && (cat.empty() || e.value("cat", "") == cat)) ++n;
    return n;
  };
  CHECK(count("X", "kernel") == 2);
  CHECK(count("X", "cuda_api") == 6);
  CHECK(count("X", "memcpy") == 1);
  CHECK(count("X", "memset") == 1);
  CHECK(count("X", "nvtx") == 1);
  CHECK(count("i", "nvtx") == 1);
  CHECK(count("C", "counter") == 3);
  CHECK(count("C", "memory") == 1);
  // Launch -> kernel flows for both kernels, the memcpy and the memset (correlation ids 11..14).
  CHECK(count("s") == 4);
  CHECK(count("f") == 4);
  bool gpu_named = false, stream_named = false;
  uint64_t gemm_pid = 0;
  for (const auto& e : ev) {
    if (e["ph"] == "M" && e["name"] == "process_name" && e["args"]["name"] == "GPU 0 (NVIDIA H200)")
      gpu_named = true;
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["args"]["name"] == "stream 7 (compute)")
      stream_named = true;
    if (e["ph"] == "X" && e.value("cat", "") == "kernel" && e["tid"] == 7) gemm_pid = e["pid"];
    if (e["ph"] == "X" && e["name"] == "relu_kernel") {
      CHECK(e["ts"] == 2210.0);
      CHECK(e["dur"] == 180.0);
    }
  }
  CHECK(gpu_named);
  CHECK(stream_named);
  CHECK(gemm_pid >= (1u << 30));  // GPU pseudo-process, not a host pid
  CHECK(j["otherData"]["host"] == "node7");
  bool mark = false;
  for (const auto& e : ev)
    if (e["ph"] == "i" && e["name"] == "checkpoint \"A\"") mark = true;
  CHECK(mark);
}

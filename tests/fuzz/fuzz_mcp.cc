// libFuzzer: `gtrace mcp`'s JSON-RPC handling. The input is a session, one message per line, sent to one
// server that holds a small trace built in code (no files: open_trace is disabled). Any bytes: no crash, no
// hang, no sanitizer report, and every answer is one line of valid JSON-RPC (a result or an error with the
// request's id).
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>

#include "gt/viewer/builder.h"
#include "mcp.h"

namespace {

std::unique_ptr<gt::viewer::TraceModel> SmallTrace() {
  gt::viewer::ModelBuilder b;
  std::string_view strings[] = {"", "app", "GPU", "void k<int>(int)", "cudaLaunchKernel", "step"};
  b.OnStrings(0, strings);
  gt::ProcessRecord p;
  p.pid = 1, p.name = 1;
  b.OnProcesses({&p, 1});
  gt::DeviceRecord d;
  d.pid = 1, d.name = 2;
  b.OnDevices({&d, 1});
  gt::KernelRecord k[3];
  gt::ApiCallRecord a[3];
  for (int i = 0; i < 3; ++i) {
    k[i].start = 100'000 * i, k[i].end = k[i].start + 20'000, k[i].pid = 1, k[i].stream_id = 7, k[i].name = 3;
    k[i].correlation_id = uint32_t(i + 1);
    a[i] = {k[i].start - 5'000, k[i].start - 1'000, 1, 2, uint32_t(i + 1), 211, 4, 0, 0};
  }
  b.OnApiCalls(a);
  b.OnKernels(k);
  gt::NvtxRecord n;
  n.start = 0, n.end = 300'000, n.pid = 1, n.tid = 2, n.message = 5;
  b.OnNvtx({&n, 1});
  return b.Finish();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gt::cli::McpOptions o;
  o.allow_files = false;
  o.sql_timeout_s = 0.05;
  gt::cli::McpServer server(o);
  server.AdoptTrace("small", SmallTrace());
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  size_t from = 0;
  // At most 16 messages per input: each sql call may run its full 50 ms, and a run must stay well under
  // scripts/fuzz.sh's 10 s timeout.
  for (int messages = 0; messages < 16 && from <= in.size(); ++messages) {
    size_t nl = in.find('\n', from);
    if (nl == std::string_view::npos) nl = in.size();
    const std::string reply = server.Handle(in.substr(from, nl - from));
    if (!reply.empty()) {
      if (reply.find('\n') != std::string::npos) std::abort();
      auto j = nlohmann::json::parse(reply, nullptr, false);
      if (j.is_discarded() || !j.is_object() || j["jsonrpc"] != "2.0" ||
          (!j.contains("result") && !j.contains("error")))
        std::abort();
    }
    from = nl + 1;
  }
  return 0;
}

// gtrace serve [--store DIR] [--bind ADDR] [--port N] [--web-root DIR] [--token-file F] [--max-upload SIZE]
//              [--index-memory SIZE] [--ttl DAYS] [--public-url URL] [--open FILE [--compare OTHER]]
#include <pthread.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "cli.h"
#include "gt/env.h"
#include "gt/server/client.h"
#include "gt/server/server.h"
#include "gt/viewer/view_state.h"
#include "serve_index.h"
#include "serve_validate.h"

namespace gt::cli {
namespace {

const char* kServeUsage =
    "Usage: gtrace serve [options]\n\n"
    "Serves the viewer page and a trace store, so that a link opens the same trace at the same view for a\n"
    "teammate. It stores what the page opens: .gtrace, and Chrome or PyTorch profiler (Kineto) JSON, plain "
    "or\n"
    "gzipped. API and deployment: docs/server.md.\n\n"
    "Options:\n"
    "  --store DIR         where uploaded traces live (default: $GTRACE_STORE, else "
    "~/.local/share/gtrace/store)\n"
    "  --bind ADDR         address to listen on (default 127.0.0.1; 0.0.0.0 for the team network)\n"
    "  --port N            port (default 8080, or a free one when 8080 is taken; 0: a free one)\n"
    "  --web-root DIR      the built viewer page (default: $GTRACE_WEB_ROOT, else found next to this "
    "binary)\n"
    "  --token-file F      require 'Authorization: Bearer <first line of F>' for uploads\n"
    "  --max-upload SIZE   largest accepted upload, e.g. 512M, 8G (default 4G)\n"
    "  --index-memory SIZE memory a viewer index build may use; bigger traces build through the disk\n"
    "                      (default: the memory free when a build starts)\n"
    "  --ttl DAYS          delete traces neither uploaded nor opened for DAYS days (default: keep forever)\n"
    "  --public-url URL    base of printed links when behind a proxy (e.g. https://gtrace.example.com)\n"
    "  --open FILE         store FILE at start and print the link that opens it\n"
    "  --compare OTHER     with --open: store OTHER too; the link opens FILE compared with OTHER (OTHER's\n"
    "                      tracks under FILE's, aligned; docs/user-guide.md, Comparing two traces)\n"
    "  --threads N         worker threads (default 64)\n"
    "  --log               log every request to stderr\n"
    "  -h, --help          this help\n\n"
    "Stops cleanly on Ctrl-C / SIGTERM. Exit codes: 0 stopped by a signal, 1 error (store, port, --open "
    "FILE),\n"
    "64 usage error.\n";

// "512M", "2G", "100k", "4096": binary units, as people mean them for file sizes.
bool ParseSize(const std::string& s, uint64_t* out) {
  if (s.empty()) return false;
  size_t i = 0;
  uint64_t v = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    if (v > (UINT64_MAX - 9) / 10) return false;
    v = v * 10 + static_cast<uint64_t>(s[i++] - '0');
  }
  if (i == 0) return false;
  std::string unit = s.substr(i);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int shift = 0;
  if (unit.empty() || unit == "B")
    shift = 0;
  else if (unit == "K" || unit == "KB" || unit == "KIB")
    shift = 10;
  else if (unit == "M" || unit == "MB" || unit == "MIB")
    shift = 20;
  else if (unit == "G" || unit == "GB" || unit == "GIB")
    shift = 30;
  else
    return false;
  if (shift > 0 && v > (UINT64_MAX >> shift)) return false;
  *out = v << shift;
  return *out > 0;
}

bool ParseInt(const std::string& s, int64_t lo, int64_t hi, int64_t* out) {
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno != 0 || v < lo || v > hi) return false;
  *out = v;
  return true;
}

std::string DefaultStore() {
  if (const char* env = env::Get(env::Var::kStore); env && *env) return env;
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg) return std::string(xdg) + "/gtrace/store";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.local/share/gtrace/store";
  return "gtrace-store";
}

// The page is built by the wasm preset (build/wasm/web) or installed next to the binary (share/gtrace/web).
std::string FindWebRoot() {
  if (const char* env = env::Get(env::Var::kWebRoot); env && *env) return env;
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const std::filesystem::path dir = exe.parent_path();
  for (const auto& candidate : {dir / "../share/gtrace/web", dir / "../../web", dir / "../../../wasm/web",
                                dir / "../../../../build/wasm/web"}) {
    if (std::filesystem::exists(candidate / "index.html", ec) &&
        std::filesystem::exists(candidate / "gtrace.wasm", ec))
      return std::filesystem::weakly_canonical(candidate, ec).string();
  }
  return "";
}

}  // namespace

int CmdServe(int argc, char** argv) {
  server::ServerOptions options;
  options.port = 8080;
  std::string store_dir = DefaultStore(), token_file, open_file, compare_file;
  uint64_t index_memory = 0;  // 0: IndexService measures the memory free per build
  bool web_root_given = false, port_given = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (IsHelp(a)) {
      std::printf("%s", kServeUsage);
      return kExitOk;
    }
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    std::string v;
    int64_t n = 0;
    if (a == "--store") {
      if (!value(&store_dir)) return UsageError("serve", "--store needs a directory");
    } else if (a == "--bind") {
      if (!value(&options.bind)) return UsageError("serve", "--bind needs an address");
    } else if (a == "--port") {
      if (!value(&v) || !ParseInt(v, 0, 65535, &n))
        return UsageError("serve", "--port needs a number 0..65535");
      options.port = static_cast<int>(n);
      port_given = true;
    } else if (a == "--web-root") {
      if (!value(&options.web_root)) return UsageError("serve", "--web-root needs a directory");
      web_root_given = true;
    } else if (a == "--token-file") {
      if (!value(&token_file)) return UsageError("serve", "--token-file needs a file");
    } else if (a == "--index-memory") {
      if (!value(&v) || !ParseSize(v, &index_memory) || index_memory == 0)
        return UsageError("serve", "--index-memory needs a size like 8G");
    } else if (a == "--max-upload") {
      if (!value(&v) || !ParseSize(v, &options.max_upload))
        return UsageError("serve", "--max-upload needs a size like 512M or 2G");
    } else if (a == "--ttl") {
      if (!value(&v) || !ParseInt(v, 1, 100000, &n))
        return UsageError("serve", "--ttl needs a number of days");
      options.ttl_seconds = n * 86400;
    } else if (a == "--public-url") {
      if (!value(&options.public_url)) return UsageError("serve", "--public-url needs a URL");
      if (options.public_url.rfind("http://", 0) != 0 && options.public_url.rfind("https://", 0) != 0)
        return UsageError("serve", "--public-url must start with http:// or https://");
    } else if (a == "--open") {
      if (!value(&open_file)) return UsageError("serve", "--open needs a trace file");
    } else if (a == "--compare") {
      if (!value(&compare_file)) return UsageError("serve", "--compare needs a trace file");
    } else if (a == "--threads") {
      if (!value(&v) || !ParseInt(v, 4, 1024, &n))
        return UsageError("serve", "--threads needs a number 4..1024");
      options.threads = static_cast<int>(n);
    } else if (a == "--log") {
      options.quiet = false;
    } else {
      return UsageError("serve", "unknown option '" + a + "'");
    }
  }
  if (!compare_file.empty() && open_file.empty())
    return UsageError("serve", "--compare needs --open: it names the trace to compare the opened one with");
  if (!token_file.empty()) {
    auto token = server::ReadTokenFile(token_file);
    if (!token.ok()) return Fail("serve", token.status());
    options.token = *token;
  }
  if (!web_root_given) options.web_root = FindWebRoot();
  options.any_port_if_busy = !port_given;  // `gtrace serve --open run.gtrace` must work with 8080 taken

  auto store = server::OpenLocalDirStore(store_dir);
  if (!store.ok()) return Fail("serve", store.status());
  // Everything the page opens can be shared; a gzipped JSON may expand to 8x the upload limit (at most 4
  // GiB).
  const uint64_t max_inflated = std::min<uint64_t>(options.max_upload * 8, 4ull << 30);
  // A saved view (POST /api/views) must be one the viewer opens: its own parser, limits included.
  options.view_validator = [](std::string_view text) { return viewer::ViewState::Parse(text).status(); };
  options.validator = [max_inflated](std::span<const uint8_t> bytes) {
    return ValidateViewerTrace(bytes, max_inflated);
  };
  // Stored traces' viewer indexes (GET /api/t/<id>/...): built off the request threads. Declared before the
  // server, so the server (whose handlers use it) stops first.
  std::unique_ptr<IndexService> indexes;
  options.trace_query = [&indexes](const server::TraceQuery& q) { return indexes->Answer(q); };
  options.on_stored = [&indexes](const std::string& id) { indexes->Prepare(id); };
  auto srv = server::ShareServer::Create(std::move(*store), options);
  if (!srv.ok()) return Fail("serve", srv.status());
  IndexServiceOptions index_options;
  index_options.log = !options.quiet;
  index_options.build_memory = index_memory;
  indexes = std::make_unique<IndexService>(&(*srv)->store(), index_options);

  std::string opened_id, compared_id;
  for (const std::string* file : {&open_file, &compare_file}) {
    if (file->empty()) continue;
    auto ingested = (*srv)->IngestFile(*file);
    if (!ingested.ok())
      return Fail("serve", Status(ingested.status().code(), *file + ": " + ingested.status().message()));
    (file == &open_file ? opened_id : compared_id) = ingested->id;
    if (!ingested->validation.clean())
      std::fprintf(stderr, "gtrace serve: %s is damaged (%llu chunk(s) lost%s); serving what is readable\n",
                   file->c_str(), static_cast<unsigned long long>(ingested->validation.chunks_lost),
                   ingested->validation.truncated ? ", truncated" : "");
  }

  // Signals go to one waiting thread (this one); every server thread starts with them blocked.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  Status started = (*srv)->Start();
  if (!started.ok()) return Fail("serve", started);

  std::printf("gtrace serve: listening on %s (store %s)\n", (*srv)->base_url().c_str(), store_dir.c_str());
  if (options.web_root.empty())
    std::printf(
        "gtrace serve: no viewer page found (build it with the wasm preset or pass --web-root); "
        "serving the API only\n");
  else
    std::printf("gtrace serve: viewer page from %s\n", options.web_root.c_str());
  if (options.token.empty() && options.bind != "127.0.0.1" && options.bind != "localhost" &&
      options.bind != "::1")
    std::printf("gtrace serve: note: anyone who can reach %s can upload (use --token-file)\n",
                options.bind.c_str());
  if (!opened_id.empty())
    std::printf("open: %s%s\n", (*srv)->LinkFor(opened_id).c_str(),
                compared_id.empty() ? "" : ("&compare=" + compared_id).c_str());
  std::fflush(stdout);

  int sig = 0;
  sigwait(&signals, &sig);
  std::printf("gtrace serve: %s, stopping\n", sig == SIGINT ? "interrupted" : "terminated");
  std::fflush(stdout);
  (*srv)->Stop();
  return kExitOk;
}

}  // namespace gt::cli

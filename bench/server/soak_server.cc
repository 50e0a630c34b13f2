// Soak test of `gtrace serve` (issue 20): many uploads and downloads against the real binary with periodic
// restarts (SIGTERM, and SIGKILL with an upload in flight) and a full disk. The property: nothing the server
// acknowledged is ever lost or changed, refusals for lack of space are clear (507 with a reason), and the
// server keeps serving through all of it. Bounded in counts and wall-clock time; traffic only on 127.0.0.1.
//
//   server_soak --gtrace PATH [--uploads N] [--downloads N] [--clients N] [--restart-every N]
//               [--full-disk-kib N] [--max-seconds S] [--require-full-disk]
//
// The full disk is a tmpfs of --full-disk-kib mounted in a private mount namespace (entered as root, or as an
// unprivileged user through a user namespace), so the mount never shows outside this process and its children
// and goes away with them. Exit 0 when every check held, 1 otherwise; one summary line per phase on stdout.
#include <arpa/inet.h>
#include <fcntl.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gt/writer.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using nlohmann::json;
constexpr const char* kLoopback = "127.0.0.1";  // never any other address

struct Args {
  std::string gtrace;
  int uploads = 1000;
  int downloads = 100000;
  int clients = 4;
  int restart_every = 200;
  int full_disk_kib = 8192;  // 0: no full-disk phase
  double max_seconds = 600;
  bool require_full_disk = false;
};

// Every violated property, printed at the end; any entry fails the run.
std::mutex g_fail_mu;
std::vector<std::string> g_failures;
void Fail(const std::string& what) {
  std::lock_guard<std::mutex> lock(g_fail_mu);
  if (g_failures.size() < 50) g_failures.push_back(what);
  std::fprintf(stderr, "FAIL: %s\n", what.c_str());
}
// The running server, for the watchdog to kill before it gives up.
std::atomic<pid_t> g_server_pid{0};

size_t FailureCount() {
  std::lock_guard<std::mutex> lock(g_fail_mu);
  return g_failures.size();
}

// A valid .gtrace of at least `min_bytes`, different for every seed (the seed is in the metadata and the
// random kernel names, so no two seeds share an id).
std::string MakeTrace(uint32_t seed, size_t min_bytes, int records) {
  std::string out;
  auto w = gt::TraceWriter::Create(gt::MakeStringSink(&out));
  GT_ASSERT(w.ok());
  gt::TraceMetadata meta;
  meta.entries = {{"command_line", "./soak --seed " + std::to_string(seed)}};
  (*w)->SetMetadata(meta);
  std::mt19937 rng(seed);
  int64_t t = 1000;
  uint32_t i = 0;
  do {
    for (int k = 0; k < records; ++k, ++i) {
      std::string name = "soak_" + std::to_string(seed) + "_";
      for (int c = 0; c < 24; ++c) name.push_back(static_cast<char>('a' + rng() % 26));
      gt::KernelRecord r;
      r.start = t;
      r.end = t + 100 + static_cast<int64_t>(rng() % 1000);
      t = r.end + static_cast<int64_t>(rng() % 50);
      r.name = (*w)->Intern(name);
      r.correlation_id = i;
      (*w)->Add(r);
    }
    GT_ASSERT((*w)->Flush().ok());
  } while (out.size() < min_bytes);
  GT_ASSERT((*w)->Finish().ok());
  return out;
}

size_t CountFiles(const fs::path& dir) {
  size_t n = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file(ec)) ++n;
  return n;
}

// ---------------------------------------------------------------------------------------------------------------
// The server process
// ---------------------------------------------------------------------------------------------------------------

class ServerProcess {
 public:
  ServerProcess(std::string gtrace, std::string store, std::string log)
      : gtrace_(std::move(gtrace)), store_(std::move(store)), log_(std::move(log)) {}
  ~ServerProcess() {
    if (pid_ > 0) Stop(SIGKILL);
  }

  // Starts `gtrace serve` on a free loopback port and waits for its "listening on" line.
  bool Start() {
    GT_ASSERT(pid_ <= 0);
    const off_t log_start = LogSize();
    pid_ = fork();
    if (pid_ < 0) return false;
    if (pid_ == 0) {
      int fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
      if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
      }
      // API only: the page is not what this measures, and a found web root would only add startup work.
      execl(gtrace_.c_str(), gtrace_.c_str(), "serve", "--store", store_.c_str(), "--bind", kLoopback,
            "--port", "0", "--threads", "16", "--web-root", "", static_cast<char*>(nullptr));
      _exit(127);
    }
    g_server_pid = pid_;
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    const std::string marker = std::string("listening on http://") + kLoopback + ":";
    while (Clock::now() < deadline) {
      std::ifstream in(log_);
      in.seekg(log_start);
      std::string line;
      while (std::getline(in, line)) {
        size_t at = line.find(marker);
        if (at != std::string::npos) {
          port_ = std::atoi(line.c_str() + at + marker.size());
          return port_ > 0;
        }
      }
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = 0;
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  // Sends `sig` and reaps the process. A SIGTERM must end it cleanly (exit 0) within 15 s: more is a hang.
  bool Stop(int sig) {
    if (pid_ <= 0) return true;
    kill(pid_, sig);
    const auto deadline = Clock::now() + std::chrono::seconds(15);
    int status = 0;
    bool reaped = false;
    while (Clock::now() < deadline) {
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        reaped = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (!reaped) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
    }
    pid_ = 0;
    port_ = 0;
    g_server_pid = 0;
    // How it ended, for the failure message (a rare unclean stop was seen once in CI, 1 run in ~70 here).
    last_stop_ = !reaped               ? "still running after 15 s"
                 : WIFEXITED(status)   ? "exit " + std::to_string(WEXITSTATUS(status))
                 : WIFSIGNALED(status) ? std::string("killed by ") + strsignal(WTERMSIG(status))
                                       : "status " + std::to_string(status);
    if (sig == SIGKILL) return true;
    return reaped && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  const std::string& last_stop() const { return last_stop_; }

  int port() const { return port_; }

 private:
  std::string last_stop_;
  off_t LogSize() const {
    std::error_code ec;
    auto n = fs::file_size(log_, ec);
    return ec ? 0 : static_cast<off_t>(n);
  }
  std::string gtrace_, store_, log_;
  pid_t pid_ = 0;
  int port_ = 0;
};

// ---------------------------------------------------------------------------------------------------------------
// What was acknowledged
// ---------------------------------------------------------------------------------------------------------------

struct Acked {
  std::string id;
  std::string delete_token;
  size_t trace = 0;  // index into the generated traces
};

struct Ledger {
  std::mutex mu;
  std::vector<Acked> acked;
  std::map<std::string, size_t> id_to_trace;  // one id, one content
  void Add(const std::string& id, const std::string& token, size_t trace) {
    std::lock_guard<std::mutex> lock(mu);
    auto [it, inserted] = id_to_trace.emplace(id, trace);
    if (!inserted && it->second != trace) Fail("id " + id + " acknowledged for two different traces");
    if (inserted) acked.push_back({id, token, trace});
  }
  std::vector<Acked> Snapshot() {
    std::lock_guard<std::mutex> lock(mu);
    return acked;
  }
  size_t size() {
    std::lock_guard<std::mutex> lock(mu);
    return acked.size();
  }
};

std::unique_ptr<httplib::Client> NewClient(int port) {
  auto c = std::make_unique<httplib::Client>(kLoopback, port);
  c->set_keep_alive(true);
  c->set_connection_timeout(5, 0);
  c->set_read_timeout(30, 0);
  c->set_write_timeout(30, 0);
  return c;
}

// One download of `a` checked byte for byte: the whole trace, or a range of it (as the page's reader asks).
// Returns 1 verified, 0 transport error (the caller retries: the server may be restarting), -1 wrong answer.
int DownloadAndCheck(httplib::Client& c, const Acked& a, const std::string& expected, std::mt19937& rng,
                     bool ranged) {
  httplib::Headers h;
  size_t from = 0, to = expected.size() - 1;
  if (ranged) {
    from = rng() % expected.size();
    to = from + rng() % (expected.size() - from);
    h.emplace("Range", "bytes=" + std::to_string(from) + "-" + std::to_string(to));
  }
  auto r = c.Get("/api/traces/" + a.id, h);
  if (!r) return 0;
  const int want = ranged ? 206 : 200;
  if (r->status != want) {
    Fail("GET " + a.id + (ranged ? " (range)" : "") + ": HTTP " + std::to_string(r->status) + " " +
         r->body.substr(0, 120));
    return -1;
  }
  if (r->body.size() != to - from + 1 ||
      r->body.compare(0, std::string::npos, expected, from, to - from + 1) != 0) {
    Fail("GET " + a.id + ": bytes differ from the upload (" + std::to_string(r->body.size()) + " bytes)");
    return -1;
  }
  return 1;
}

// Downloads every acknowledged trace once (whole), on `threads` connections; the proof after a restart that
// nothing acknowledged was lost.
size_t VerifyAll(int port, const std::vector<Acked>& acked, const std::vector<std::string>& traces,
                 const char* when, int threads = 2) {
  std::atomic<size_t> next{0}, ok{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      auto c = NewClient(port);
      std::mt19937 rng(t);
      for (size_t i = next++; i < acked.size(); i = next++) {
        int got = 0;
        for (int attempt = 0; attempt < 5 && got == 0; ++attempt) {
          got = DownloadAndCheck(*c, acked[i], traces[acked[i].trace], rng, false);
          if (got == 0) c = NewClient(port);
        }
        if (got == 0) Fail(std::string(when) + ": GET " + acked[i].id + " failed 5 times (transport)");
        if (got == 1) ++ok;
      }
    });
  }
  for (auto& th : pool) th.join();
  if (ok != acked.size())
    Fail(std::string(when) + ": " + std::to_string(acked.size() - ok) + " of " +
         std::to_string(acked.size()) + " acknowledged traces not downloadable intact");
  return ok;
}

// Sends the headers and half the body of an upload and leaves it hanging, so a kill lands mid-upload for
// sure.
int HalfUpload(int port, const std::string& bytes) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  std::string req =
      "POST /api/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\n"
      "Content-Length: " +
      std::to_string(bytes.size()) + "\r\n\r\n" + bytes.substr(0, bytes.size() / 2);
  (void)!send(fd, req.data(), req.size(), MSG_NOSIGNAL);
  return fd;
}

// ---------------------------------------------------------------------------------------------------------------
// Phase 1: uploads with restarts, then downloads with a restart
// ---------------------------------------------------------------------------------------------------------------

struct Counts {
  size_t upload_attempts = 0, acked = 0, transport_errors = 0, downloads_verified = 0, ranged = 0;
  int restarts = 0, kills = 0, tmp_leftovers_after_kill = 0;
};

bool RunMain(const Args& args, const fs::path& work, Counts& counts) {
  std::vector<std::string> traces(static_cast<size_t>(args.uploads));
  for (size_t i = 0; i < traces.size(); ++i)
    traces[i] = MakeTrace(static_cast<uint32_t>(1'000'000 + i), 0, 16 + static_cast<int>(i % 64));
  const fs::path store = work / "store";
  ServerProcess server(args.gtrace, store.string(), (work / "serve.log").string());
  if (!server.Start()) {
    Fail("gtrace serve did not start (see " + (work / "serve.log").string() + ")");
    return false;
  }
  std::atomic<int> port{server.port()};  // 0 while the server is down: clients wait
  Ledger ledger;
  std::atomic<size_t> next{0}, attempts{0}, transport{0};
  std::atomic<int> uploaders_done{0};

  auto uploader = [&](int) {
    std::unique_ptr<httplib::Client> c;
    int client_port = 0;
    for (size_t i = next++; i < traces.size(); i = next++) {
      // Retried until acknowledged (for up to a minute): a restart may cut an upload, which is then simply
      // not acknowledged, and a server being stopped refuses connections until the new one is up.
      const auto give_up = Clock::now() + std::chrono::seconds(60);
      while (Clock::now() < give_up) {
        int p = port.load();
        if (p < 0) break;
        if (p == 0) {
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
          continue;
        }
        if (!c || client_port != p) c = NewClient(client_port = p);
        ++attempts;
        auto r = c->Post("/api/traces", traces[i], "application/octet-stream");
        if (!r) {
          ++transport;
          c.reset();
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
          continue;
        }
        if (r->status == 200 || r->status == 201) {
          json body = json::parse(r->body, nullptr, false);
          if (!body.is_object() || !body.contains("id") || !body["id"].is_string()) {
            Fail("upload answered " + std::to_string(r->status) + " without an id");
            break;
          }
          ledger.Add(body["id"], body.value("delete_token", ""), i);
          break;
        }
        Fail("upload of trace " + std::to_string(i) + ": HTTP " + std::to_string(r->status) + " " +
             r->body.substr(0, 160));
        break;
      }
    }
    ++uploaders_done;
  };

  // Restart #k: SIGKILL for every second one (with a half-sent upload on the wire), SIGTERM otherwise.
  auto restart = [&](bool kill_it, const char* phase) {
    const std::string half = traces[counts.restarts % traces.size()];
    int hanging = HalfUpload(server.port(), half + "tail");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let the server start reading it
    const bool clean = server.Stop(kill_it ? SIGKILL : SIGTERM);
    port = 0;
    if (hanging >= 0) close(hanging);
    ++counts.restarts;
    if (kill_it) ++counts.kills;
    if (!clean)
      Fail(std::string(phase) +
           ": SIGTERM did not stop the server cleanly (exit 0 within 15 s): " + server.last_stop());
    if (kill_it) counts.tmp_leftovers_after_kill += static_cast<int>(CountFiles(store / "tmp"));
    if (!server.Start()) {
      Fail(std::string(phase) + ": gtrace serve did not restart on the same store");
      return false;
    }
    // The restarted server empties tmp/ before it listens: nothing half-received survives.
    if (size_t left = CountFiles(store / "tmp"); left != 0)
      Fail(std::string(phase) + ": " + std::to_string(left) + " temp files left after restart");
    counts.downloads_verified += VerifyAll(server.port(), ledger.Snapshot(), traces, phase);
    port = server.port();
    return true;
  };

  std::vector<std::thread> pool;
  for (int t = 0; t < args.clients; ++t) pool.emplace_back(uploader, t);
  size_t next_restart = static_cast<size_t>(args.restart_every);
  bool alive = true;
  while (uploaders_done.load() < args.clients) {
    if (alive && args.restart_every > 0 && ledger.size() >= next_restart &&
        next_restart < static_cast<size_t>(args.uploads)) {
      alive = restart(counts.restarts % 2 == 1, "upload phase");
      next_restart += static_cast<size_t>(args.restart_every);
      if (!alive) {
        next = traces.size();  // stop handing out work; the uploaders give up on port 0 below
        port = -1;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  for (auto& th : pool) th.join();
  if (!alive) return false;
  counts.upload_attempts = attempts;
  counts.transport_errors = transport;
  std::vector<Acked> acked = ledger.Snapshot();
  counts.acked = acked.size();
  if (acked.size() != traces.size())
    Fail("only " + std::to_string(acked.size()) + " of " + std::to_string(traces.size()) +
         " uploads acknowledged after retries");
  if (acked.empty()) return false;

  // Downloads: whole traces and ranges, spread over every acknowledged id, one SIGTERM restart halfway.
  std::atomic<int> done{0}, ranged{0}, verified{0};
  std::atomic<int> dl_transport{0};
  auto downloader = [&](int t) {
    std::mt19937 rng(static_cast<uint32_t>(t * 7919 + 1));
    std::unique_ptr<httplib::Client> c;
    int client_port = 0;
    for (int n = done++; n < args.downloads; n = done++) {
      const Acked& a = acked[rng() % acked.size()];
      const bool want_range = rng() % 3 == 0;
      int got = 0;
      const auto give_up = Clock::now() + std::chrono::seconds(60);
      while (got == 0 && Clock::now() < give_up) {
        int p = port.load();
        if (p <= 0) {
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
          continue;
        }
        if (!c || client_port != p) c = NewClient(client_port = p);
        got = DownloadAndCheck(*c, a, traces[a.trace], rng, want_range);
        if (got == 0) {
          ++dl_transport;
          c.reset();
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
      }
      if (got == 0) Fail("GET " + a.id + ": no answer after retries");
      if (got == 1) {
        ++verified;
        if (want_range) ++ranged;
      }
    }
  };
  pool.clear();
  for (int t = 0; t < args.clients; ++t) pool.emplace_back(downloader, t);
  bool restarted = args.restart_every == 0;
  while (done.load() < args.downloads) {
    if (!restarted && done.load() >= args.downloads / 2) {
      restarted = true;
      restart(false, "download phase");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  for (auto& th : pool) th.join();
  counts.downloads_verified += static_cast<size_t>(verified.load());
  counts.ranged = static_cast<size_t>(ranged.load());
  counts.transport_errors += static_cast<size_t>(dl_transport.load());
  if (!server.Stop(SIGTERM)) Fail("final SIGTERM did not stop the server cleanly: " + server.last_stop());
  return true;
}

// ---------------------------------------------------------------------------------------------------------------
// Phase 2: a full disk
// ---------------------------------------------------------------------------------------------------------------

// A private mount namespace, so the tmpfs below is seen by this process and its children only and vanishes
// with them even if the soak is killed. Must run before any thread exists (unshare(CLONE_NEWUSER) requires
// it).
bool EnterPrivateMounts(std::string* why) {
  if (geteuid() == 0) {
    if (unshare(CLONE_NEWNS) != 0)
      return *why = std::string("unshare(CLONE_NEWNS): ") + strerror(errno), false;
  } else {
    const uid_t uid = geteuid();
    const gid_t gid = getegid();
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
      return *why = std::string("unshare(CLONE_NEWUSER|CLONE_NEWNS): ") + strerror(errno), false;
    auto write_file = [](const char* path, const std::string& text) {
      int fd = open(path, O_WRONLY | O_CLOEXEC);
      if (fd < 0) return false;
      bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
      close(fd);
      return ok;
    };
    write_file("/proc/self/setgroups", "deny");
    if (!write_file("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1\n") ||
        !write_file("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1\n"))
      return *why = "cannot write the user namespace's id maps", false;
  }
  if (mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return *why = std::string("cannot make mounts private: ") + strerror(errno), false;
  return true;
}

struct DiskCounts {
  size_t acked = 0, rejected_507 = 0, other_refusals = 0, transport_errors = 0, verified = 0, deleted = 0;
  size_t acked_after_free = 0;
  int restarts = 0;
};

bool RunFullDisk(const Args& args, const fs::path& work, DiskCounts& counts) {
  const fs::path mnt = work / "small-disk";
  fs::create_directories(mnt);
  const std::string opts = "size=" + std::to_string(args.full_disk_kib) + "k,mode=0755";
  if (mount("tmpfs", mnt.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, opts.c_str()) != 0) {
    Fail(std::string("cannot mount a tmpfs: ") + strerror(errno));
    return false;
  }
  struct Unmount {
    fs::path p;
    ~Unmount() { umount2(p.c_str(), MNT_DETACH); }
  } unmount{mnt};
  const fs::path store = mnt / "store";
  ServerProcess server(args.gtrace, store.string(), (work / "serve-full.log").string());
  if (!server.Start()) {
    Fail("gtrace serve did not start on the small disk");
    return false;
  }
  // ~64 KiB traces: a few dozen fill the disk. Uploads go until 6 refusals in a row (the disk is full for
  // good).
  const size_t max_traces = static_cast<size_t>(args.full_disk_kib) / 32 + 50;
  std::vector<std::string> traces(max_traces);
  for (size_t i = 0; i < max_traces; ++i)
    traces[i] = MakeTrace(static_cast<uint32_t>(5'000'000 + i), 64 << 10, 256);
  Ledger ledger;
  std::mutex counts_mu;  // the fill below runs on several clients
  auto upload = [&](size_t i, bool expect_ok) {
    auto c = NewClient(server.port());
    auto r = c->Post("/api/traces", traces[i], "application/octet-stream");
    std::lock_guard<std::mutex> lock(counts_mu);
    if (!r) {
      ++counts.transport_errors;
      Fail("full disk: upload " + std::to_string(i) + " got no answer (" + httplib::to_string(r.error()) +
           "): a refusal must be an HTTP answer");
      return 0;
    }
    if (r->status == 200 || r->status == 201) {
      json body = json::parse(r->body, nullptr, false);
      ledger.Add(body["id"], body["delete_token"], i);
      return 1;
    }
    json body = json::parse(r->body, nullptr, false);
    const bool has_reason = body.is_object() && body.contains("error") && body["error"].is_string() &&
                            !body["error"].get<std::string>().empty();
    if (r->status == 507 && has_reason && !expect_ok) {
      ++counts.rejected_507;
      if (counts.rejected_507 == 1)
        std::printf("full disk: first refusal: HTTP 507 %s\n", body["error"].get<std::string>().c_str());
      return -1;
    }
    ++counts.other_refusals;
    Fail("full disk: upload " + std::to_string(i) + ": HTTP " + std::to_string(r->status) + " " +
         r->body.substr(0, 200) + (expect_ok ? " (space had been freed)" : " (want 507 with a reason)"));
    return -1;
  };
  // Fill the disk from all clients at once, until 6 refusals in a row (full for good). After each refusal the
  // client downloads an earlier trace: a full disk must not stop the server serving what it has.
  std::atomic<size_t> next{0};
  std::atomic<int> refused_in_a_row{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < args.clients; ++t) {
    pool.emplace_back([&, t] {
      std::mt19937 rng(static_cast<uint32_t>(t + 100));
      for (size_t i = next++; i < max_traces && refused_in_a_row < 6; i = next++) {
        const int got = upload(i, false);
        if (got == 1) {
          refused_in_a_row = 0;
          continue;
        }
        ++refused_in_a_row;
        auto acked = ledger.Snapshot();
        if (acked.empty()) continue;
        const Acked& a = acked[rng() % acked.size()];
        auto c = NewClient(server.port());
        if (DownloadAndCheck(*c, a, traces[a.trace], rng, rng() % 2 == 0) == 1) {
          std::lock_guard<std::mutex> lock(counts_mu);
          ++counts.verified;
        } else {
          Fail("full disk: GET " + a.id + " failed while the disk was full");
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  if (counts.rejected_507 == 0) Fail("full disk: the disk never filled up (no 507)");
  if (size_t left = CountFiles(store / "tmp"); left != 0)
    Fail("full disk: " + std::to_string(left) + " temp files left behind by refused uploads");
  auto acked = ledger.Snapshot();
  counts.acked = acked.size();
  // Still full: everything acknowledged downloads intact, before and after a restart on the full disk.
  counts.verified += VerifyAll(server.port(), acked, traces, "full disk");
  if (!server.Stop(SIGTERM))
    Fail("full disk: SIGTERM did not stop the server cleanly: " + server.last_stop());
  ++counts.restarts;
  if (!server.Start()) {
    Fail("full disk: gtrace serve did not restart on the full store");
    return false;
  }
  counts.verified += VerifyAll(server.port(), acked, traces, "full disk, restarted");
  // Free space the way a user would: delete half of the traces with their tokens.
  std::vector<Acked> kept;
  for (size_t k = 0; k < acked.size(); ++k) {
    if (k % 2 == 1) {
      kept.push_back(acked[k]);
      continue;
    }
    auto c = NewClient(server.port());
    auto r =
        c->Delete("/api/traces/" + acked[k].id, httplib::Headers{{"X-Delete-Token", acked[k].delete_token}});
    if (!r || r->status != 204)
      Fail("full disk: DELETE " + acked[k].id + " -> " + (r ? std::to_string(r->status) : "no answer"));
    else
      ++counts.deleted;
  }
  // Uploads work again: the next few fresh traces must all be acknowledged.
  const size_t before = ledger.size();
  for (size_t k = 0; k < 3; ++k) {
    traces.push_back(MakeTrace(static_cast<uint32_t>(6'000'000 + k), 64 << 10, 256));
    upload(traces.size() - 1, true);
  }
  counts.acked_after_free = ledger.size() - before;
  auto all = ledger.Snapshot();
  for (size_t k = before; k < all.size(); ++k) kept.push_back(all[k]);
  counts.verified += VerifyAll(server.port(), kept, traces, "full disk, after freeing space");
  if (!server.Stop(SIGTERM)) Fail("full disk: final SIGTERM did not stop the server cleanly");
  return true;
}

bool ParseArgs(int argc, char** argv, Args& a) {
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : ""; };
    if (k == "--gtrace")
      a.gtrace = next();
    else if (k == "--uploads")
      a.uploads = std::atoi(next());
    else if (k == "--downloads")
      a.downloads = std::atoi(next());
    else if (k == "--clients")
      a.clients = std::max(1, std::atoi(next()));
    else if (k == "--restart-every")
      a.restart_every = std::atoi(next());
    else if (k == "--full-disk-kib")
      a.full_disk_kib = std::atoi(next());
    else if (k == "--max-seconds")
      a.max_seconds = std::atof(next());
    else if (k == "--require-full-disk")
      a.require_full_disk = true;
    else
      return false;
  }
  return !a.gtrace.empty() && a.uploads > 0 && a.downloads >= 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!ParseArgs(argc, argv, args)) {
    std::fprintf(stderr,
                 "usage: server_soak --gtrace PATH [--uploads N] [--downloads N] [--clients N] "
                 "[--restart-every N] [--full-disk-kib N] [--max-seconds S] [--require-full-disk]\n");
    return 64;
  }
  // Before any thread: entering a user namespace needs a single-threaded process.
  std::string no_mounts;
  const bool can_mount = args.full_disk_kib > 0 && EnterPrivateMounts(&no_mounts);
  signal(SIGPIPE, SIG_IGN);

  // A wall-clock cap: a hang anywhere fails the run instead of blocking CI (the server child goes first).
  std::thread([max = args.max_seconds] {
    std::this_thread::sleep_for(std::chrono::duration<double>(max));
    std::fprintf(stderr, "FAIL: soak still running after %.0f s (hang?)\n", max);
    std::fflush(stderr);
    if (pid_t pid = g_server_pid.load(); pid > 0) kill(pid, SIGKILL);
    _exit(1);
  }).detach();

  std::string pattern = (fs::temp_directory_path() / "gtrace-soak-XXXXXX").string();
  GT_ASSERT(mkdtemp(pattern.data()) != nullptr);
  const fs::path work = pattern;
  const auto t0 = Clock::now();

  Counts c;
  RunMain(args, work, c);
  const double main_s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf(
      "soak: %zu uploads acknowledged of %d (%zu attempts), %zu downloads verified byte for byte (%zu "
      "ranged), "
      "%d restarts (%d SIGKILL mid-upload, %d temp files they left, removed at restart), %zu transport "
      "errors "
      "retried, %.1f s\n",
      c.acked, args.uploads, c.upload_attempts, c.downloads_verified, c.ranged, c.restarts, c.kills,
      c.tmp_leftovers_after_kill, c.transport_errors, main_s);

  if (args.full_disk_kib > 0) {
    if (!can_mount) {
      std::printf("full disk: SKIPPED (%s)\n", no_mounts.c_str());
      if (args.require_full_disk) Fail("full disk required but no tmpfs: " + no_mounts);
    } else {
      const auto t1 = Clock::now();
      DiskCounts d;
      RunFullDisk(args, work, d);
      std::printf(
          "full disk (tmpfs %d KiB): %zu uploads acknowledged, %zu refused with 507, %zu other refusals, %zu "
          "without an answer; %zu downloads verified (also after a restart on the full disk); %zu deleted to "
          "free space, then %zu of 3 uploads acknowledged; %.1f s\n",
          args.full_disk_kib, d.acked, d.rejected_507, d.other_refusals, d.transport_errors, d.verified,
          d.deleted, d.acked_after_free, std::chrono::duration<double>(Clock::now() - t1).count());
    }
  }
  const size_t failures = FailureCount();
  if (failures == 0) {
    std::error_code ec;
    fs::remove_all(work, ec);
  } else {
    std::printf("logs and stores kept in %s\n", work.c_str());
  }
  std::printf("soak: %s (%zu failures)\n", failures == 0 ? "PASS" : "FAIL", failures);
  std::fflush(stdout);
  return failures == 0 ? 0 : 1;
}

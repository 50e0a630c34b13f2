// gcollect end to end with a CPU-only app: exit codes, signals, exit() from a thread, missing programs, bad
// flags, no-overwrite, Ctrl-C forwarding, and traces written by processes that crash or fork.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "gt/parts.h"
#include "gt/reader.h"
#include "gt/trace_data.h"

using namespace gt;

namespace {

struct Result {
  int status = -1;  // shell-style
  std::string err;
};

std::string Work(const std::string& name) {
  mkdir(WORK_DIR, 0755);
  std::string p = std::string(WORK_DIR) + "/" + name;
  unlink(p.c_str());
  std::string parts = "rm -rf '" + p + ".parts'";  // left by an earlier --keep-parts run
  CHECK(std::system(parts.c_str()) == 0);
  return p;
}

// Runs gcollect with `args`, stderr to a file. GTRACE_NO_PRELOAD: sanitizer runtimes must come first in a
// process, so tests never preload the (possibly sanitized) injection library into other programs.
Result Run(const std::vector<std::string>& args, pid_t* pid_out = nullptr, bool wait = true) {
  // Per test process: CTest runs the test cases as separate processes in parallel.
  std::string err_path = std::string(WORK_DIR) + "/stderr-" + std::to_string(getpid()) + ".txt";
  mkdir(WORK_DIR, 0755);
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    setenv("GTRACE_NO_PRELOAD", "1", 1);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(GCOLLECT));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(GCOLLECT, argv.data());
    _exit(126);
  }
  if (pid_out) *pid_out = pid;
  Result r;
  if (!wait) return r;
  int status = 0;
  waitpid(pid, &status, 0);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream f(err_path);
  std::stringstream ss;
  ss << f.rdbuf();
  r.err = ss.str();
  return r;
}

TraceData Load(const std::string& path, LoadReport* report = nullptr) {
  auto bytes = ReadFileBytes(path);
  REQUIRE(bytes.ok());
  TraceData d;
  auto r =
      ReadTrace(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size()), d);
  REQUIRE(r.ok());
  if (report) *report = *r;
  return d;
}

const ProcessRecord* Root(const TraceData& d) {
  for (const auto& p : d.processes)
    if (p.exit_kind == static_cast<uint8_t>(ExitKind::kExited) ||
        p.exit_kind == static_cast<uint8_t>(ExitKind::kSignaled))
      return &p;
  return nullptr;
}

}  // namespace

TEST_CASE("exit codes pass through and land in the trace") {
  for (int code : {0, 7, 255}) {
    std::string out = Work("exit" + std::to_string(code) + ".gtrace");
    Result r = Run({"-q", "-o", out, "--", FAKE_APP, "exit", std::to_string(code)});
    CHECK(r.status == code);
    TraceData d = Load(out);
    const ProcessRecord* p = Root(d);
    REQUIRE(p);
    CHECK(p->exit_code == code);
    CHECK(p->exit_kind == static_cast<uint8_t>(ExitKind::kExited));
    CHECK(d.Str(p->command_line).find("exit") != std::string::npos);
    CHECK(d.metadata.Find("command_line") != nullptr);
    CHECK(d.metadata.clock_syncs.size() >= 1);
  }
}

TEST_CASE("exit() from another thread") {
  std::string out = Work("thread_exit.gtrace");
  CHECK(Run({"-q", "-o", out, "--", FAKE_APP, "thread-exit", "5"}).status == 5);
  TraceData data = Load(out);
  REQUIRE(Root(data));
  CHECK(Root(data)->exit_code == 5);
}

TEST_CASE("an app killed by a signal: 128+N, the trace says so") {
  std::string out = Work("segv.gtrace");
  Result r = Run({"-o", out, "--", FAKE_APP, "signal", std::to_string(SIGSEGV)});
  CHECK(r.status == 128 + SIGSEGV);
  CHECK(r.err.find("signal 11") != std::string::npos);
  TraceData data = Load(out);
  const ProcessRecord* p = Root(data);
  REQUIRE(p);
  CHECK(p->exit_kind == static_cast<uint8_t>(ExitKind::kSignaled));
  CHECK(p->exit_code == SIGSEGV);
}

TEST_CASE("a program without CUDA gets a clear message and a trace") {
  std::string out = Work("nocuda.gtrace");
  Result r = Run({"-o", out, "--", FAKE_APP, "exit", "0"});
  CHECK(r.status == 0);
  // Where a driver is installed the summary says no process started CUDA; where none is (CI), the warning
  // before the run says so instead.
  const bool no_cuda = r.err.find("no process of the app initialized CUDA") != std::string::npos;
  const bool no_driver = r.err.find("no NVIDIA driver on this machine") != std::string::npos;
  CHECK(no_cuda != no_driver);
  CHECK(r.err.find(out) != std::string::npos);  // summary names the trace
}

TEST_CASE("gcollect --version names the CUDA it was built with and the injection library it uses") {
  // The build tree's gcollect finds the library beside itself (an installed one: scripts/package-test.sh).
  std::string cmd = std::string(GCOLLECT) + " --version";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  std::string text;
  char buf[512];
  while (size_t n = fread(buf, 1, sizeof buf, p)) text.append(buf, n);
  CHECK(pclose(p) == 0);
  CHECK(text.find("gcollect ") == 0);
  CHECK(text.find("built with CUDA ") != std::string::npos);
  std::string gcollect_dir = std::string(GCOLLECT).substr(0, std::string(GCOLLECT).rfind('/'));
  CHECK(text.find("injection library: " + gcollect_dir + "/libgtrace_inject.so") != std::string::npos);
}

TEST_CASE("missing or non-executable programs: 127 and no trace") {
  std::string out = Work("missing.gtrace");
  Result r = Run({"-o", out, "--", "/nonexistent/app"});
  CHECK(r.status == 127);
  CHECK(r.err.find("cannot run '/nonexistent/app'") != std::string::npos);
  CHECK(access(out.c_str(), F_OK) != 0);
  CHECK(access((out + ".parts").c_str(), F_OK) != 0);
  r = Run({"-o", out, "--", "no-such-command-gtrace"});
  CHECK(r.status == 127);
  CHECK(r.err.find("not found") != std::string::npos);
  r = Run({"-o", out, "--", WORK_DIR});  // a directory
  CHECK(r.status == 127);
}

TEST_CASE("bad flags: status 2 and a message, the app never runs") {
  std::string out = Work("badflag.gtrace");
  Result r = Run({"--trace=cuda,bogus", "-o", out, "--", FAKE_APP, "exit", "3"});
  CHECK(r.status == 2);
  CHECK(r.err.find("bogus") != std::string::npos);
  CHECK(access(out.c_str(), F_OK) != 0);
  CHECK(Run({"--frobnicate", "--", FAKE_APP}).status == 2);
  CHECK(Run({}).status == 2);
  CHECK(Run({"--help"}).status == 0);
}

TEST_CASE("an existing output is never overwritten silently") {
  std::string out = Work("exists.gtrace");
  { std::ofstream(out) << "precious"; }
  Result r = Run({"-o", out, "--", FAKE_APP, "exit", "0"});
  CHECK(r.status == 2);
  CHECK(r.err.find("already exists") != std::string::npos);
  std::ifstream f(out);
  std::string content;
  f >> content;
  CHECK(content == "precious");
  r = Run({"-q", "-f", "-o", out, "--", FAKE_APP, "exit", "0"});
  CHECK(r.status == 0);
  CHECK(LooksLikeGtrace(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(ReadFileBytes(out)->data()),
                                                 ReadFileBytes(out)->size())));
}

namespace {
// Starts gcollect on a long-running fake app (`mode`, 20 s) without waiting for it, and returns once the app
// says it is running (it touches FAKE_READY_FILE): gcollect's pid.
pid_t StartUntilReady(const std::string& out, const char* mode, const char* ready_name) {
  const std::string ready = std::string(WORK_DIR) + "/" + ready_name;
  unlink(ready.c_str());
  setenv("FAKE_READY_FILE", ready.c_str(), 1);
  pid_t pid = 0;
  Run({"-q", "-o", out, "--", FAKE_APP, mode, "20000"}, &pid, /*wait=*/false);
  unsetenv("FAKE_READY_FILE");
  for (int i = 0; i < 500 && access(ready.c_str(), F_OK) != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(access(ready.c_str(), F_OK) == 0);
  return pid;
}
}  // namespace

TEST_CASE("Ctrl-C sent to gcollect reaches the app, and the trace is finalized") {
  std::string out = Work("sigint.gtrace");
  const pid_t pid = StartUntilReady(out, "sleep", "ready");
  auto t0 = std::chrono::steady_clock::now();
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(s < 5.0);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 128 + SIGINT);
  TraceData data = Load(out);
  const ProcessRecord* p = Root(data);
  REQUIRE(p);
  CHECK(p->exit_kind == static_cast<uint8_t>(ExitKind::kSignaled));
  CHECK(p->exit_code == SIGINT);
}

TEST_CASE("gcollect killed with SIGKILL leaves its parts; the next run says how to recover them") {
  std::string out = Work("killed.gtrace");
  const pid_t pid = StartUntilReady(out, "part-wait", "ready-killed");
  kill(pid, SIGKILL);  // gcollect itself, as if the machine lost it: no merge, no cleanup
  waitpid(pid, nullptr, 0);
  const std::vector<std::string> parts = ListParts(out + ".parts");
  REQUIRE(parts.size() == 2);  // gcollect's own and the app's
  CHECK(parts[0] == out + ".parts/gcollect.gtrace");
  const std::string app_part = parts[1].substr(parts[1].rfind('/') + 1);
  kill(pid_t(std::stol(app_part)), SIGKILL);  // the orphaned app

  Result again = Run({"-q", "-o", out, "--", FAKE_APP, "exit", "0"});
  CHECK(again.status == 2);
  CHECK(again.err.find("gtrace recover " + out + ".parts") != std::string::npos);

  // What `gtrace recover` does: the app's flushed kernels are all there.
  const std::string recovered = std::string(WORK_DIR) + "/killed-recovered.gtrace";
  unlink(recovered.c_str());
  auto joined = ConcatenateParts(parts, recovered, false);
  REQUIRE(joined.ok());
  CHECK(joined->parts == 2);
  LoadReport rep;
  TraceData d = Load(recovered, &rep);
  CHECK(d.kernels.size() == 6);
  CHECK(rep.truncated);  // neither part was finished
}

TEST_CASE("an app killed with SIGKILL (as the OOM killer does) keeps every flushed record") {
  std::string out = Work("oomkilled.gtrace");
  const pid_t pid = StartUntilReady(out, "part-wait", "ready-oom");
  const std::vector<std::string> parts = ListParts(out + ".parts");
  REQUIRE(parts.size() == 2);
  const std::string app_part = parts[1].substr(parts[1].rfind('/') + 1);
  kill(pid_t(std::stol(app_part)), SIGKILL);  // the app, not gcollect: no handler of the app runs
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 128 + SIGKILL);
  LoadReport rep;
  TraceData d = Load(out, &rep);
  CHECK(d.kernels.size() == 6);  // everything flushed before the kill
  CHECK(rep.truncated);          // the app's part was never finished: named as a loss
  const ProcessRecord* p = Root(d);
  REQUIRE(p);
  CHECK(p->exit_kind == static_cast<uint8_t>(ExitKind::kSignaled));
  CHECK(p->exit_code == SIGKILL);
}

TEST_CASE("children that outlive the app: waited for, then recorded as still running") {
  std::string out = Work("orphan.gtrace");
  Result r = Run({"-o", out, "--wait-children", "0.5", "--", FAKE_APP, "orphan", "3000"});
  CHECK(r.status == 0);
  LoadReport rep;
  TraceData d = Load(out, &rep);
  CHECK(d.kernels.size() == 5);  // the child's flushed part is in the trace
  bool named = false;
  for (const auto& l : d.losses) named |= d.Str(l.name) == "processes_still_running";
  CHECK(named);  // and the trace says the child was still running when gcollect stopped waiting
}

TEST_CASE("a process that crashes after a flush keeps every flushed record") {
  std::string out = Work("partcrash.gtrace");
  Result r = Run({"-o", out, "--", FAKE_APP, "part-crash"});
  CHECK(r.status == 128 + SIGABRT);
  LoadReport rep;
  TraceData d = Load(out, &rep);
  CHECK(d.kernels.size() == 10);  // flushed before the abort; the 5 after it are gone
  CHECK(d.api_calls.size() == 10);
  CHECK(rep.truncated);
  bool reported = false;
  for (const auto& l : d.losses) reported = reported || d.Str(l.name) == "file_truncated";
  CHECK(reported);
  CHECK(Root(d) != nullptr);  // gcollect's own segment is intact
}

TEST_CASE("forked children's parts are merged: one trace, several processes") {
  std::string out = Work("fork.gtrace");
  Result r = Run({"-q", "-o", out, "--keep-parts", "--", FAKE_APP, "part-fork"});
  CHECK(r.status == 0);
  LoadReport rep;
  TraceData d = Load(out, &rep);
  CHECK(rep.clean());
  std::set<uint32_t> pids;
  for (const auto& k : d.kernels) pids.insert(k.pid);
  CHECK(pids.size() == 2);
  CHECK(d.kernels.size() == 7);
  CHECK(access((out + ".parts").c_str(), F_OK) == 0);  // --keep-parts
}

TEST_CASE(
    "gcollect --upload hands the finished trace to gtrace upload, a failed upload keeps trace and status") {
  // A stand-in for the gtrace CLI (GTRACE_CLI): records its arguments and exits with the status it is told.
  std::string fake = std::string(WORK_DIR) + "/fake-gtrace.sh";
  std::string args_file = std::string(WORK_DIR) + "/fake-gtrace.args";
  {
    std::ofstream f(fake);
    f << "#!/bin/sh\nprintf '%s\\n' \"$@\" > '" << args_file << "'\necho http://example.invalid/?trace=abc\n"
      << "exit ${FAKE_UPLOAD_STATUS:-0}\n";
  }
  chmod(fake.c_str(), 0755);
  setenv("GTRACE_CLI", fake.c_str(), 1);

  std::string out = Work("upload.gtrace");
  unlink(args_file.c_str());
  Result r = Run({"-q", "--upload", "http://127.0.0.1:9/", "-o", out, "--", FAKE_APP, "exit", "3"});
  CHECK(r.status == 3);  // the app's status, not the upload's
  std::ifstream a(args_file);
  std::stringstream got;
  got << a.rdbuf();
  CHECK(got.str() == "upload\n" + out + "\n--server\nhttp://127.0.0.1:9/\n");
  CHECK(access(out.c_str(), F_OK) == 0);

  setenv("FAKE_UPLOAD_STATUS", "1", 1);
  out = Work("upload-fails.gtrace");
  r = Run({"-q", "--upload", "http://127.0.0.1:9/", "-o", out, "--", FAKE_APP, "exit", "0"});
  unsetenv("FAKE_UPLOAD_STATUS");
  CHECK(r.status == 0);
  CHECK(r.err.find("upload to http://127.0.0.1:9/ failed") != std::string::npos);
  CHECK(access(out.c_str(), F_OK) == 0);  // kept locally

  // A URL that is no URL is a usage error before the app runs.
  out = Work("upload-bad.gtrace");
  r = Run({"--upload", "ftp://x", "-o", out, "--", FAKE_APP, "exit", "0"});
  CHECK(r.status == 2);
  CHECK(access(out.c_str(), F_OK) != 0);
  unsetenv("GTRACE_CLI");
}

TEST_CASE("osrt: a process that never starts CUDA has its waits counted, not recorded") {
  // /bin/sleep waits in clock_nanosleep: the preloaded shim times it, but no injection runs there to write
  // it.
  std::string out = Work("osrt_nocuda.gtrace");
  Result r = Run({"-o", out, "--trace=default,osrt", "--", "/bin/sh", "-c", "sleep 0.05"});
  REQUIRE(r.status == 0);
  INFO(r.err);
  TraceData d = Load(out);
  uint64_t unrecorded = 0;
  for (const auto& l : d.losses)
    if (d.Str(l.name) == "osrt_waits_unrecorded") unrecorded += l.count;
  CHECK(unrecorded >= 1);
  CHECK(d.nvtx.empty());  // nothing recorded as a range without CUDA
  // Above the threshold only: a 50 ms sleep under a 10 s threshold is not even counted.
  std::string quiet = Work("osrt_threshold.gtrace");
  r = Run({"-o", quiet, "--trace=default,osrt", "--osrt-threshold", "10000000000", "--", "/bin/sh", "-c",
           "sleep 0.05"});
  REQUIRE(r.status == 0);
  TraceData q = Load(quiet);
  for (const auto& l : q.losses) CHECK(q.Str(l.name) != "osrt_waits_unrecorded");
}

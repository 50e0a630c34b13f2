// Runs the app: fork/exec with the injection's environment, forwards signals, reaps every descendant.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "launcher/launcher.h"

extern char** environ;

namespace gt::launcher {

using config::EnvVar;
using config::TraceClockNow;

namespace {

std::atomic<int> g_pending_signal{0};
std::atomic<int> g_interrupts{0};
std::atomic<pid_t> g_root{0};
// A signal sent to us before the app's pid was published: RunApp forwards it as soon as it is (found under
// load: `kill -INT gcollect` right after the app started was lost, and the app ran to its end).
std::atomic<int> g_unforwarded{0};

void OnSignal(int sig, siginfo_t* info, void*) {
  if (sig == SIGINT) g_interrupts.fetch_add(1);
  // Terminal-generated signals (si_code SI_KERNEL) already reached the app: it shares our process group.
  bool sent_to_us =
      info && (info->si_code == SI_USER || info->si_code == SI_QUEUE || info->si_code == SI_TKILL);
  pid_t root = g_root.load();
  if (root <= 0) {
    if (!sent_to_us) return;
    g_unforwarded.store(sig);
    // Published meanwhile? Then whichever of us takes the signal back out forwards it, exactly once.
    root = g_root.load();
    if (root <= 0 || g_unforwarded.exchange(0) == 0) return;
  }
  if (sent_to_us) kill(root, sig);
  if (g_interrupts.load() >= 3) kill(root, SIGKILL);
  g_pending_signal.store(sig);
}

struct SignalGuard {
  static constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
  struct sigaction old[4];
  SignalGuard() {
    for (int i = 0; i < 4; ++i) {
      struct sigaction sa {};
      sa.sa_sigaction = OnSignal;
      sa.sa_flags = SA_SIGINFO;  // no SA_RESTART: waitpid returns EINTR and we look again
      sigemptyset(&sa.sa_mask);
      sigaction(kSignals[i], &sa, &old[i]);
    }
  }
  ~SignalGuard() {
    for (int i = 0; i < 4; ++i) sigaction(kSignals[i], &old[i], nullptr);
  }
};

bool IsExecutableFile(const std::string& path, std::string* why) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    *why = std::strerror(errno);
    return false;
  }
  if (S_ISDIR(st.st_mode)) {
    *why = "is a directory";
    return false;
  }
  if (access(path.c_str(), X_OK) != 0) {
    *why = "permission denied (not executable)";
    return false;
  }
  return true;
}

}  // namespace

std::string ResolveProgram(const std::string& name, std::string* why) {
  if (name.empty()) {
    *why = "empty program name";
    return "";
  }
  if (name.find('/') != std::string::npos) return IsExecutableFile(name, why) ? name : "";
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t pos = 0;
  std::string last_why = "command not found";
  while (pos <= p.size()) {
    size_t colon = p.find(':', pos);
    if (colon == std::string::npos) colon = p.size();
    std::string dir = p.substr(pos, colon - pos);
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/" + name;
    std::string w;
    if (IsExecutableFile(candidate, &w)) return candidate;
    if (access(candidate.c_str(), F_OK) == 0) last_why = w;
    pos = colon + 1;
  }
  *why = last_why;
  return "";
}

AppExit RunApp(const std::vector<std::string>& argv, const std::vector<EnvVar>& env_extra,
               double wait_children_s, const std::function<void(pid_t)>& on_started) {
  AppExit result;
  std::string why;
  std::string program = ResolveProgram(argv.empty() ? "" : argv[0], &why);
  if (program.empty()) {
    result.error = "cannot run '" + (argv.empty() ? std::string() : argv[0]) + "': " + why;
    return result;
  }

  // Build argv/envp before fork: the child only calls async-signal-safe functions.
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    bool overridden = false;
    for (const auto& x : env_extra)
      if (kv.compare(0, x.name.size() + 1, x.name + "=") == 0) overridden = true;
    if (!overridden) env_strings.push_back(kv);
  }
  for (const auto& x : env_extra) env_strings.push_back(x.name + "=" + x.value);
  std::vector<char*> cenv;
  for (auto& s : env_strings) cenv.push_back(s.data());
  cenv.push_back(nullptr);

  // Orphaned grandchildren (daemonized workers) re-parent to us, so we can wait for their traces too.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  int error_pipe[2];
  if (pipe2(error_pipe, O_CLOEXEC) != 0) {
    result.error = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  SignalGuard guard;
  g_interrupts.store(0);
  g_unforwarded.store(0);
  result.start_ns = TraceClockNow();
  pid_t pid = fork();
  if (pid < 0) {
    result.error = std::string("fork: ") + std::strerror(errno);
    close(error_pipe[0]);
    close(error_pipe[1]);
    return result;
  }
  if (pid > 0) {
    // Published at once, not after exec succeeded: the app may start and be signalled before we run again.
    g_root.store(pid);
    if (int sig = g_unforwarded.exchange(0)) kill(pid, sig);
  }
  if (pid == 0) {
    // Child: default signal handling, then exec. Errors go back through the CLOEXEC pipe.
    for (int s : SignalGuard::kSignals) signal(s, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    close(error_pipe[0]);
    execve(program.c_str(), cargv.data(), cenv.data());
    int err = errno;
    ssize_t n = write(error_pipe[1], &err, sizeof err);
    (void)n;
    _exit(127);
  }
  close(error_pipe[1]);
  int child_errno = 0;
  ssize_t n;
  do {
    n = read(error_pipe[0], &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  close(error_pipe[0]);
  result.pid = pid;
  if (n == static_cast<ssize_t>(sizeof child_errno)) {
    waitpid(pid, nullptr, 0);
    g_root.store(0);
    result.error = "cannot run '" + program + "': " + std::strerror(child_errno);
    return result;
  }
  result.started = true;
  if (on_started) on_started(pid);

  for (;;) {
    int status = 0;
    pid_t w = waitpid(-1, &status, 0);
    if (w < 0) {
      if (errno == EINTR) continue;
      break;  // ECHILD: nothing left (should not happen before the root)
    }
    if (w == pid && (WIFEXITED(status) || WIFSIGNALED(status))) {
      result.end_ns = TraceClockNow();
      if (WIFEXITED(status)) {
        result.exit_code = WEXITSTATUS(status);
      } else {
        result.signaled = true;
        result.signal = WTERMSIG(status);
      }
      break;
    }
  }
  g_root.store(0);

  // Descendants still alive (workers, daemons): give them time to finish their traces.
  int64_t deadline = TraceClockNow() + static_cast<int64_t>(wait_children_s * 1e9);
  for (;;) {
    pid_t w = waitpid(-1, nullptr, WNOHANG);
    if (w < 0 && errno == ECHILD) break;
    if (w > 0) continue;
    if (TraceClockNow() >= deadline || g_interrupts.load() > 0) {
      result.still_running = 1;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  prctl(PR_SET_CHILD_SUBREAPER, 0);
  return result;
}

}  // namespace gt::launcher

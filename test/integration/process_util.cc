#include "test/integration/process_util.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/time/clock.h"

extern char** environ;

namespace kcr {
namespace apiserver {
namespace {

std::vector<std::string> Environment(
    const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> all;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string s(*e);
    size_t eq = s.find('=');
    if (eq == std::string::npos) continue;
    all[s.substr(0, eq)] = s.substr(eq + 1);
  }
  for (const auto& [k, v] : extra) all[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : all) out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> Pointers(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (std::string& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

pid_t Spawn(const std::vector<std::string>& argv,
            const std::map<std::string, std::string>& env, int in_fd,
            int out_fd, int err_fd) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (in_fd >= 0) posix_spawn_file_actions_adddup2(&actions, in_fd, 0);
  if (out_fd >= 0) posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  if (err_fd >= 0) posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  std::vector<std::string> args = argv;
  std::vector<std::string> envs = Environment(env);
  std::vector<char*> argp = Pointers(args);
  std::vector<char*> envp = Pointers(envs);
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0].c_str(), &actions, &attr, argp.data(),
                  envp.data()) != 0) {
    pid = -1;
  }
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return pid;
}

std::optional<int> WaitPid(pid_t pid, absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  while (true) {
    int status = 0;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      return 128 + WTERMSIG(status);
    }
    if (r < 0) return -1;
    if (absl::Now() >= deadline) return std::nullopt;
    absl::SleepFor(absl::Milliseconds(10));
  }
}

}  // namespace

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool WaitFor(const std::function<bool()>& pred, absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  while (true) {
    if (pred()) return true;
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(absl::Milliseconds(20));
  }
}

ProcessResult RunProcess(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env,
                         const std::string& stdin_data,
                         absl::Duration timeout) {
  ProcessResult result;
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 ||
      pipe2(err, O_CLOEXEC) != 0)
    return result;
  pid_t pid = Spawn(argv, env, in[0], out[1], err[1]);
  close(in[0]);
  close(out[1]);
  close(err[1]);
  if (pid < 0) {
    close(in[1]);
    close(out[0]);
    close(err[0]);
    result.err = "cannot start " + argv[0];
    return result;
  }
  // Small inputs fit the pipe buffer; write then close.
  size_t off = 0;
  while (off < stdin_data.size()) {
    ssize_t n = write(in[1], stdin_data.data() + off, stdin_data.size() - off);
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  close(in[1]);
  absl::Time deadline = absl::Now() + timeout;
  struct pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_fds = 2;
  bool killed = false;
  while (open_fds > 0) {
    int wait_ms = static_cast<int>(std::max<int64_t>(
        0, absl::ToInt64Milliseconds(deadline - absl::Now())));
    int r = poll(fds, 2, wait_ms);
    if (r == 0) {
      kill(pid, SIGKILL);
      killed = true;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[65536];
      ssize_t n = read(fds[i].fd, buf, sizeof(buf));
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? result.out : result.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  std::optional<int> code = WaitPid(pid, absl::Seconds(5));
  if (!code.has_value()) {
    kill(pid, SIGKILL);
    WaitPid(pid, absl::Seconds(5));
  }
  result.exit_code = (killed || !code.has_value()) ? -1 : *code;
  return result;
}

BackgroundProcess::BackgroundProcess(
    const std::vector<std::string>& argv,
    const std::map<std::string, std::string>& env, const std::string& out_path,
    const std::string& err_path) {
  int out =
      open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int err =
      open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  pid_ = Spawn(argv, env, devnull, out, err);
  close(out);
  close(err);
  close(devnull);
}

BackgroundProcess::~BackgroundProcess() { Stop(absl::Milliseconds(200)); }

std::optional<int> BackgroundProcess::Wait(absl::Duration timeout) {
  if (exit_code_.has_value() || pid_ <= 0) return exit_code_;
  exit_code_ = WaitPid(pid_, timeout);
  return exit_code_;
}

bool BackgroundProcess::Running() {
  return pid_ > 0 && !Wait(absl::ZeroDuration()).has_value();
}

void BackgroundProcess::Stop(absl::Duration grace) {
  if (!Running()) return;
  kill(pid_, SIGTERM);
  if (!Wait(grace).has_value()) {
    kill(pid_, SIGKILL);
    Wait(absl::Seconds(5));
  }
}

void BackgroundProcess::Signal(int sig) {
  if (Running()) kill(pid_, sig);
}

LocalApiServerProcess::LocalApiServerProcess(
    const std::string& binary, const std::string& dir,
    const std::vector<std::string>& extra_args) {
  kubeconfig_ = dir + "/kubeconfig";
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    error_ = "pipe failed";
    return;
  }
  std::vector<std::string> argv = {binary, "--port=0",
                                   "--kubeconfig-out=" + kubeconfig_};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  int err = open((dir + "/apiserver.log").c_str(),
                 O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  pid_ = Spawn(argv, {}, -1, out[1], err);
  close(out[1]);
  close(err);
  if (pid_ < 0) {
    close(out[0]);
    error_ = "cannot start " + binary;
    return;
  }
  // The first line of stdout is the URL.
  std::string line;
  absl::Time deadline = absl::Now() + absl::Seconds(20);
  struct pollfd p = {out[0], POLLIN, 0};
  while (line.find('\n') == std::string::npos && absl::Now() < deadline) {
    if (poll(&p, 1, 100) <= 0) continue;
    char buf[256];
    ssize_t n = read(out[0], buf, sizeof(buf));
    if (n <= 0) break;
    line.append(buf, static_cast<size_t>(n));
  }
  close(out[0]);
  size_t nl = line.find('\n');
  if (nl == std::string::npos) {
    error_ = "no URL on stdout; log: " + ReadFile(dir + "/apiserver.log");
    return;
  }
  url_ = line.substr(0, nl);
}

LocalApiServerProcess::~LocalApiServerProcess() { Stop(); }

std::optional<int> LocalApiServerProcess::Stop(absl::Duration timeout,
                                               int sig) {
  if (pid_ <= 0) return std::nullopt;
  kill(pid_, sig);
  std::optional<int> code = WaitPid(pid_, timeout);
  if (!code.has_value()) {
    kill(pid_, SIGKILL);
    WaitPid(pid_, absl::Seconds(5));
  }
  pid_ = -1;
  return code;
}

}  // namespace apiserver
}  // namespace kcr

#include "test/integration/kubectl_harness.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <utility>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace kcr {
namespace integration {
namespace {

// Starts `argv` with `env`, stdin from `stdin_text`, stdout (and stderr,
// when `err_fd` is null, to /dev/null) to pipes. Returns the pid.
pid_t Spawn(const std::vector<std::string>& argv,
            const std::vector<std::string>& env, const std::string& stdin_text,
            int* out_fd, int* err_fd) {
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (pipe(in_pipe) != 0 || pipe(out_pipe) != 0 || pipe(err_pipe) != 0) {
    return -1;
  }
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    if (err_fd != nullptr) {
      dup2(err_pipe[1], 2);
    } else {
      int null_fd = open("/dev/null", O_WRONLY);
      dup2(null_fd, 2);
    }
    for (int fd = 3; fd < 1024; ++fd) close(fd);
    std::vector<char*> args;
    for (const std::string& a : argv)
      args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::vector<char*> envp;
    for (const std::string& e : env)
      envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (!stdin_text.empty()) {
    (void)!write(in_pipe[1], stdin_text.data(), stdin_text.size());
  }
  close(in_pipe[1]);
  *out_fd = out_pipe[0];
  if (err_fd != nullptr) {
    *err_fd = err_pipe[0];
  } else {
    close(err_pipe[0]);
  }
  return pid;
}

std::string FindKubectl() {
  const char* path = getenv("PATH");
  std::string dirs = path != nullptr ? path : "";
  dirs += ":/usr/bin:/usr/local/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string candidate = dirs.substr(start, end - start) + "/kubectl";
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "kubectl";
}

}  // namespace

KubectlProcess::~KubectlProcess() {
  Stop();
  if (fd_ >= 0) close(fd_);
}

void KubectlProcess::Reaped(int status) {
  pid_ = -1;
  exit_code_ = WIFEXITED(status) ? std::optional<int>(WEXITSTATUS(status))
                                 : std::optional<int>(-1);
}

void KubectlProcess::Stop() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  Reaped(status);
}

bool KubectlProcess::Running() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) Reaped(status);
  return pid_ > 0;
}

std::optional<int> KubectlProcess::Wait(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (fd_ >= 0 && absl::Now() < deadline) {
    pollfd p{fd_, POLLIN, 0};
    const absl::Duration left = deadline - absl::Now();
    int r = poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
    if (r <= 0) continue;
    char buf[4096];
    ssize_t n = read(fd_, buf, sizeof(buf));
    if (n <= 0) {
      close(fd_);
      fd_ = -1;
    } else {
      out_.append(buf, static_cast<size_t>(n));
    }
  }
  while (Running() && absl::Now() < deadline)
    absl::SleepFor(absl::Milliseconds(20));
  if (Running()) return std::nullopt;
  if (exit_code_ == std::optional<int>(-1)) return std::nullopt;
  return exit_code_;
}

template <typename Done>
bool KubectlProcess::WaitFor(Done done, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!done(out_)) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return false;
    pollfd p{fd_, POLLIN, 0};
    int r = poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
    if (r <= 0) continue;
    char buf[4096];
    ssize_t n = read(fd_, buf, sizeof(buf));
    if (n <= 0) return done(out_);
    out_.append(buf, static_cast<size_t>(n));
  }
  return true;
}

bool KubectlProcess::WaitForOutput(const std::string& text,
                                   absl::Duration timeout) {
  return WaitFor(
      [&](const std::string& out) {
        return out.find(text) != std::string::npos;
      },
      timeout);
}

bool KubectlProcess::WaitForLine(const std::string& prefix,
                                 absl::Duration timeout) {
  return WaitFor(
      [&](const std::string& out) {
        size_t start = 0;
        while (true) {
          const size_t end = out.find('\n', start);
          if (end == std::string::npos) return false;
          if (out.compare(start, prefix.size(), prefix) == 0) return true;
          start = end + 1;
        }
      },
      timeout);
}

KubectlHarness::KubectlHarness(apiserver::ApiServer* server) {
  home_ = ::testing::TempDir();
  kubeconfig_ = home_ + "/kubeconfig";
  absl::Status s = server->WriteKubeconfig(kubeconfig_);
  EXPECT_TRUE(s.ok()) << s;
}

KubectlHarness::KubectlHarness(std::string kubeconfig, std::string home)
    : home_(std::move(home)), kubeconfig_(std::move(kubeconfig)) {}

std::vector<std::string> KubectlHarness::Env() const {
  const char* path = getenv("PATH");
  return {"HOME=" + home_, "KUBECONFIG=" + kubeconfig_,
          std::string("PATH=") + (path != nullptr ? path : "/usr/bin:/bin") +
              ":/usr/bin:/bin",
          "KUBECTL_COMMAND_HEADERS=false"};
}

KubectlResult KubectlHarness::Run(const std::vector<std::string>& args,
                                  const std::string& stdin_text,
                                  absl::Duration timeout) {
  std::vector<std::string> argv = {FindKubectl()};
  argv.insert(argv.end(), args.begin(), args.end());
  int out_fd = -1, err_fd = -1;
  KubectlResult result;
  pid_t pid = Spawn(argv, Env(), stdin_text, &out_fd, &err_fd);
  if (pid < 0) return result;
  const absl::Time deadline = absl::Now() + timeout;
  bool out_open = true, err_open = true;
  while (out_open || err_open) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) break;
    pollfd fds[2] = {{out_open ? out_fd : -1, POLLIN, 0},
                     {err_open ? err_fd : -1, POLLIN, 0}};
    int r = poll(fds, 2, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
    if (r <= 0) continue;
    char buf[8192];
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof(buf));
      if (n <= 0) {
        (i == 0 ? out_open : err_open) = false;
      } else {
        (i == 0 ? result.out : result.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  close(out_fd);
  close(err_fd);
  if (out_open || err_open) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    result.err += "\n[killed: timeout]";
    return result;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::unique_ptr<KubectlProcess> KubectlHarness::Start(
    const std::vector<std::string>& args) {
  std::vector<std::string> argv = {FindKubectl()};
  argv.insert(argv.end(), args.begin(), args.end());
  auto p = std::unique_ptr<KubectlProcess>(new KubectlProcess());
  p->pid_ = Spawn(argv, Env(), "", &p->fd_, nullptr);
  p->started_ = p->pid_ > 0;
  return p;
}

std::vector<std::vector<std::string>> KubectlHarness::Columns(
    const std::string& out) {
  std::vector<std::vector<std::string>> rows;
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    std::string line = out.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    std::vector<std::string> cells;
    size_t i = 0;
    while (i < line.size()) {
      size_t gap = line.find("  ", i);
      if (gap == std::string::npos) gap = line.size();
      cells.push_back(line.substr(i, gap - i));
      i = gap;
      while (i < line.size() && line[i] == ' ') ++i;
    }
    rows.push_back(std::move(cells));
  }
  return rows;
}

}  // namespace integration
}  // namespace kcr

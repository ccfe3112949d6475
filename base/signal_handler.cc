#include "base/signal_handler.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <thread>
#include <utility>

#include "glog/logging.h"

namespace kcr {
namespace {

std::atomic<bool> installed{false};
// Signals seen so far; written only by the handler.
std::atomic<int> received{0};
// The handler's write end and the watcher's read end.
int signal_pipe[2] = {-1, -1};

// Async-signal-safe: an atomic, write(2) and _exit(2) only.
void OnSignal(int signo) {
  if (received.fetch_add(1) > 0) _exit(1);
  const unsigned char byte = static_cast<unsigned char>(signo);
  const int saved = errno;
  (void)!write(signal_pipe[1], &byte, 1);
  errno = saved;
}

}  // namespace

Context SetupSignalHandler() {
  CHECK(!installed.exchange(true)) << "SetupSignalHandler called twice";
  PCHECK(pipe2(signal_pipe, O_CLOEXEC) == 0);
  auto [ctx, cancel] = WithCancel(Context::Background());
  std::thread([cancel = std::move(cancel)] {
    unsigned char signo = 0;
    ssize_t n;
    do {
      n = read(signal_pipe[0], &signo, 1);
    } while (n < 0 && errno == EINTR);
    if (n == 1) {
      LOG(INFO) << "received signal " << strsignal(signo)
                << ", stopping (a second signal exits at once)";
    }
    cancel();
  }).detach();
  struct sigaction action {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  PCHECK(sigaction(SIGTERM, &action, nullptr) == 0);
  PCHECK(sigaction(SIGINT, &action, nullptr) == 0);
  return ctx;
}

}  // namespace kcr

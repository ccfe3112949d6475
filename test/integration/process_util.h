// Child processes for tests that drive real clients (kubectl, the Python
// client) against the local API server: run a command and collect its
// output, start one in the background and wait for or stop it, and start
// cmd/local-apiserver and read the URL it prints first.
#ifndef KCR_TEST_INTEGRATION_PROCESS_UTIL_H_
#define KCR_TEST_INTEGRATION_PROCESS_UTIL_H_

#include <signal.h>
#include <sys/types.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace kcr {
namespace apiserver {

struct ProcessResult {
  int exit_code = -1;  // -1: did not finish in time (killed) or not started
  std::string out;
  std::string err;
};

// Runs argv[0] (a path) with `env` added to the environment, feeding
// `stdin_data`; kills it after `timeout`.
ProcessResult RunProcess(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env,
                         const std::string& stdin_data = "",
                         absl::Duration timeout = absl::Seconds(30));

// A process running in the background; stdout and stderr go to files.
class BackgroundProcess {
 public:
  BackgroundProcess(const std::vector<std::string>& argv,
                    const std::map<std::string, std::string>& env,
                    const std::string& out_path, const std::string& err_path);
  ~BackgroundProcess();  // kills it if still running
  bool started() const { return pid_ > 0; }
  // The exit code once it has exited, within `timeout`; nullopt otherwise.
  std::optional<int> Wait(absl::Duration timeout);
  // True while it has not exited.
  bool Running();
  // SIGTERM, then SIGKILL after `grace`.
  void Stop(absl::Duration grace = absl::Seconds(2));
  // Sends `sig` if it is still running (SIGKILL: a crash, for tests of
  // what the others do when a process dies).
  void Signal(int sig);

 private:
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
};

// Reads a whole file ("" when missing).
std::string ReadFile(const std::string& path);
// Polls `pred` every 20 ms until it holds or `timeout` passes.
bool WaitFor(const std::function<bool()>& pred,
             absl::Duration timeout = absl::Seconds(20));

// cmd/local-apiserver started with --port=0 --kubeconfig-out=<dir>/kubeconfig
// plus `extra_args`; url() is the first line it printed.
class LocalApiServerProcess {
 public:
  LocalApiServerProcess(const std::string& binary, const std::string& dir,
                        const std::vector<std::string>& extra_args = {});
  ~LocalApiServerProcess();
  bool ok() const { return !url_.empty(); }
  const std::string& url() const { return url_; }
  const std::string& kubeconfig() const { return kubeconfig_; }
  const std::string& error() const { return error_; }
  // Sends `sig` (SIGTERM by default; the server also stops on SIGINT)
  // and waits; returns the exit code (nullopt if it had to be killed).
  // The default timeout only guards against a hang: a clean exit on a slow
  // machine must not count as one.
  std::optional<int> Stop(absl::Duration timeout = absl::Seconds(30),
                          int sig = SIGTERM);

 private:
  pid_t pid_ = -1;
  std::string url_;
  std::string kubeconfig_;
  std::string error_;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_TEST_INTEGRATION_PROCESS_UTIL_H_

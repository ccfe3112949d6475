// KubectlHarness: runs the kubectl on the PATH (the dispatcher that picks
// kubectl 1.27-1.33 from the server's /version) against an in-process local
// API server, or against a server running as a process (given its
// kubeconfig), for tests of what kubectl users see.
//
//   KubectlHarness k(server);
//   KubectlResult r = k.Run({"get", "pods", "-o", "wide"});
//   EXPECT_EQ(r.exit_code, 0) << r.err;
//   auto rows = KubectlHarness::Columns(r.out);  // cells split as printed
//
// Each call has a timeout so a hanging kubectl fails the test. HOME and the
// kubeconfig live in the test's temporary directory unless given. Not
// thread-safe.
#ifndef KCR_TEST_INTEGRATION_KUBECTL_HARNESS_H_
#define KCR_TEST_INTEGRATION_KUBECTL_HARNESS_H_

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "apiserver/api_server.h"

namespace kcr {
namespace integration {

struct KubectlResult {
  int exit_code = -1;  // -1: killed by the timeout or not started
  std::string out;
  std::string err;
};

// A kubectl running in the background (e.g. `get -w`), whose output is read
// as it comes.
class KubectlProcess {
 public:
  ~KubectlProcess();  // kills and reaps the process
  bool started() const { return started_; }
  // Reads stdout until it contains `text` or `timeout` passes; true when
  // found. Everything read so far is in out().
  bool WaitForOutput(const std::string& text, absl::Duration timeout);
  // The same, until a whole line (ended by a newline) starts with `prefix`.
  bool WaitForLine(const std::string& prefix, absl::Duration timeout);
  // Reads stdout to its end and waits for the exit, within `timeout`;
  // the exit code, or nullopt if it has not exited (or was killed).
  std::optional<int> Wait(absl::Duration timeout);
  // True while it has not exited.
  bool Running();
  // Kills and reaps the process.
  void Stop();
  const std::string& out() const { return out_; }

 private:
  // Reads until `done(out_)` or the timeout.
  template <typename Done>
  bool WaitFor(Done done, absl::Duration timeout);

  friend class KubectlHarness;
  // Records the exit of a reaped process; -1 when killed by a signal.
  void Reaped(int status);

  bool started_ = false;
  pid_t pid_ = -1;  // -1 once reaped
  int fd_ = -1;
  std::string out_;
  std::optional<int> exit_code_;
};

class KubectlHarness {
 public:
  // Writes a kubeconfig for `server` into the test's temporary directory.
  explicit KubectlHarness(apiserver::ApiServer* server);
  // For a server running as a process: uses its `kubeconfig` as is, and
  // `home` (an existing directory) as HOME.
  KubectlHarness(std::string kubeconfig, std::string home);

  KubectlResult Run(const std::vector<std::string>& args,
                    const std::string& stdin_text = "",
                    absl::Duration timeout = absl::Seconds(30));
  std::unique_ptr<KubectlProcess> Start(const std::vector<std::string>& args);

  // The lines of kubectl's table output, each split into cells at runs of
  // two or more spaces (kubectl pads columns with at least three).
  static std::vector<std::vector<std::string>> Columns(const std::string& out);

 private:
  std::vector<std::string> Env() const;

  std::string home_;
  std::string kubeconfig_;
};

}  // namespace integration
}  // namespace kcr

#endif  // KCR_TEST_INTEGRATION_KUBECTL_HARNESS_H_

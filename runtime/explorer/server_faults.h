// ServerFaults: what the explorer asks of the in-process API server — its
// write log, and the faults it injects for one run (a crash fence on a
// Manager's identity, an error on the n-th matching write, held and dropped
// watch events) — behind one small seam, so the run logic reads in the
// explorer's own terms.
//
// Thread-safe.
#ifndef KCR_RUNTIME_EXPLORER_SERVER_FAULTS_H_
#define KCR_RUNTIME_EXPLORER_SERVER_FAULTS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace kcr::apiserver {
class ApiServer;
}  // namespace kcr::apiserver

namespace kcr::explorer {

// One stored write, as the server's write log has it.
struct Write {
  int64_t seq = 0;
  // The resourceVersion it was stored at.
  int64_t resource_version = 0;
  std::string verb;  // create, update, patch, delete, deletecollection
  std::string group, resource, subresource, namespace_, name;
  std::string user_agent;
};

// Which requests or watchers a fault applies to; empty fields match
// anything, user_agent is a prefix.
struct Match {
  std::string verb, group, resource, subresource, namespace_, name;
  std::string user_agent;
};

class ServerFaults {
 public:
  // `server` must outlive this.
  explicit ServerFaults(apiserver::ApiServer* server);
  ~ServerFaults();
  ServerFaults(const ServerFaults&) = delete;
  ServerFaults& operator=(const ServerFaults&) = delete;

  // The writes stored with seq > `seq`, oldest first.
  std::vector<Write> WritesSince(int64_t seq) const;
  int64_t last_seq() const;
  // Calls `fn` with every write stored from now on, on the writing thread,
  // before its response is sent. One subscriber; removed by the destructor.
  void Subscribe(std::function<void(const Write&)> fn);

  // Fences the client whose User-Agent starts with `user_agent`: after its
  // next stored write (one already under way), every request of it is
  // dropped unanswered and its watches are cut, as if the process died.
  absl::Status CrashNow(const std::string& user_agent);
  bool Crashed(const std::string& user_agent) const;

  // The `nth` request matching `match` from now on is answered `code`
  // (after being stored, for a 504 with after_store).
  absl::Status FailRequest(const Match& match, int nth, int code,
                           bool after_store);
  // How many of the rules set (FailRequest, DropNextWatchEvent) fired.
  int64_t rules_fired() const;

  // Holds back watch events matching `match` (group, resource, namespace,
  // name of the object; user_agent of the watcher) until ReleaseHold.
  absl::StatusOr<int64_t> HoldWatch(const Match& match);
  void ReleaseHold(int64_t id);
  // The next watch event matching `match` is never delivered.
  absl::Status DropNextWatchEvent(const Match& match);

 private:
  apiserver::ApiServer* const server_;
  int64_t subscription_ = 0;
};

}  // namespace kcr::explorer

#endif  // KCR_RUNTIME_EXPLORER_SERVER_FAULTS_H_

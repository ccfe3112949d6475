// WriteLog: every write the local API server stores, in storage order, with
// who made it and through which request — the order of a controller's
// writes that its tests (and the controller explorer) reason about.
//
// A record is made for each stored event: creates, updates, patches,
// deletes, each delete of a deletecollection, status and scale
// subresource writes, and the writes of the built-in controllers (whose
// identity is "kcr-builtin/<controller>"). Requests that fail store
// nothing and leave no record; dry runs neither.
//
//   WriteLog* log = server->write_log();
//   int64_t mark = log->last_seq();
//   ... run a controller ...
//   for (const WriteRecord& w : log->Since(mark)) ...
//
// It keeps the last `capacity` records (seq goes on counting). Subscribers
// are called with each record, in order, on the writing thread, after the
// write is stored and before its response is sent; a subscriber must not
// block on another write.
//
// Thread-safe.
#ifndef KCR_APISERVER_ENDPOINTS_WRITE_LOG_H_
#define KCR_APISERVER_ENDPOINTS_WRITE_LOG_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "apiserver/storage/watch_cache.h"
#include "base/mutex.h"

namespace kcr {
namespace apiserver {

struct WriteRecord {
  // 1, 2, ... in storage order.
  int64_t seq = 0;
  // The resourceVersion the write was stored at.
  std::string resource_version;
  // kube's verb: create, update, patch, delete, deletecollection.
  std::string verb;
  std::string group, version, resource, subresource, namespace_, name;
  // The client's User-Agent, or "kcr-builtin/<controller>"; empty for the
  // server's own writes (bootstrap, expiry).
  std::string user_agent;
  // The status code the request is answered with.
  int code = 0;

  // {"seq":1,"resourceVersion":"7","verb":"create","group":"",
  //  "version":"v1","resource":"configmaps","subresource":"",
  //  "namespace":"default","name":"a","userAgent":"kubectl/v1.32",
  //  "code":201}
  std::string ToJson() const;
};

// Who made a write (apiserver/internal/write_context.h: private to the
// server, so only declared here).
struct WriteContext;

class WriteLog {
 public:
  static constexpr size_t kDefaultCapacity = 100000;

  explicit WriteLog(size_t capacity = kDefaultCapacity)
      : capacity_(capacity == 0 ? 1 : capacity) {}
  WriteLog(const WriteLog&) = delete;
  WriteLog& operator=(const WriteLog&) = delete;

  // The record of a stored event made under `context` (seq unset). Without
  // a verb in the context, the verb is the event's: create, update, delete.
  static WriteRecord FromEvent(const StoredEvent& event,
                               const WriteContext& context);

  // Appends `record`, numbered next; returns its seq. The server calls it
  // in storage order.
  int64_t Append(WriteRecord record);
  // Calls the subscribers with every record appended so far that they
  // have not had yet. Returns once they have had all those appended before
  // the call (by this thread or by another delivering at the same time).
  void Deliver();

  // The records kept with seq > `seq`, oldest first.
  std::vector<WriteRecord> Since(int64_t seq) const;
  // The seq of the latest record (0 before any).
  int64_t last_seq() const;
  // Forgets the records kept; numbering goes on.
  void Clear();

  // Calls `fn` with every record appended from now on (see the file
  // comment). Returns an id for Unsubscribe.
  int64_t Subscribe(std::function<void(const WriteRecord&)> fn);
  void Unsubscribe(int64_t id);

  // {"items":[record, ...]}
  static std::string ToJson(const std::vector<WriteRecord>& records);

 private:
  using Subscriber =
      std::pair<int64_t, std::function<void(const WriteRecord&)>>;

  const size_t capacity_;
  mutable Mutex mu_;
  std::deque<WriteRecord> records_ ABSL_GUARDED_BY(mu_);
  int64_t last_seq_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<Subscriber> subscribers_ ABSL_GUARDED_BY(mu_);
  int64_t next_subscriber_ ABSL_GUARDED_BY(mu_) = 1;
  // Records not yet delivered (kept only while anyone subscribes).
  std::deque<WriteRecord> undelivered_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> subscribed_{false};
  // Held while delivering, so that subscribers see records in order.
  Mutex deliver_mu_;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_ENDPOINTS_WRITE_LOG_H_

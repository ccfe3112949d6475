// FakeListWatch: a scripted cache::ListerWatcher for unit tests of code that
// lists and watches (the Reflector).
//
// Lists are answered from a queue of scripted results, one per call in
// order, and, when the queue is empty, from a "current state" (a list of
// objects and a resourceVersion) paged by the call's limit. Each Watch call
// either takes the next scripted error or opens a FakeWatch, which the test
// drives: push events, end it cleanly, break it, or send an ERROR event.
// Every call's options are recorded, so tests assert what was asked.
//
//   FakeListWatch lw;
//   lw.SetState({cm1, cm2}, "10");
//   ... run a reflector on another thread ...
//   std::shared_ptr<FakeWatch> w = lw.WaitForWatch(0);
//   w->Add(cm3);
//   w->Close();
#ifndef KCR_TEST_FAKES_FAKE_LIST_WATCH_H_
#define KCR_TEST_FAKES_FAKE_LIST_WATCH_H_

#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/object.h"
#include "base/context.h"
#include "base/mutex.h"
#include "runtime/cache/list_watch.h"
#include "runtime/client/options.h"
#include "runtime/client/watch.h"

namespace kcr::testing {

// A bookmark object: `kind`'s apiVersion/kind with only
// metadata.resourceVersion, annotated k8s.io/initial-events-end=true when
// `initial_events_end`.
api::ObjectPtr BookmarkObject(std::string_view resource_version,
                              bool initial_events_end = false,
                              std::string_view api_version = "v1",
                              std::string_view kind = "ConfigMap");

// The test's end of one watch opened by FakeListWatch. Thread-safe.
class FakeWatch {
 public:
  // Queue an event for the watcher's Next().
  void Push(client::WatchEvent event);
  // Queues `events` at once: the watcher finds them all buffered
  // (WatchStream::Buffered).
  void PushAll(std::vector<client::WatchEvent> events);
  void Add(api::ObjectPtr object);
  void Modify(api::ObjectPtr object);
  void Delete(api::ObjectPtr object);
  void Bookmark(std::string_view resource_version,
                bool initial_events_end = false);
  // An ERROR event carrying `error` (e.g. a 410 from
  // api::StatusError(...).ToStatus()).
  void Error(absl::Status error);
  // Ends the stream after the queued events: cleanly (status OK), or
  // broken with `status` (e.g. kUnavailable).
  void Close();
  void Break(absl::Status status);

  // Whether the watcher called Stop() (or its context ended).
  bool stopped() const;
  // Blocks until the watcher has taken every queued event and is waiting
  // for more (or the stream is over).
  void WaitUntilDrained() const;
  // The options the watch was opened with.
  const client::ListOptions& options() const { return options_; }

 private:
  friend class FakeListWatch;
  class Stream;
  explicit FakeWatch(client::ListOptions options)
      : options_(std::move(options)) {}

  bool DrainedLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const client::ListOptions options_;
  mutable Mutex mu_;
  ContextCondVar cv_;
  std::deque<client::WatchEvent> events_ ABSL_GUARDED_BY(mu_);
  // Set when the stream is to end once events_ is empty.
  std::optional<absl::Status> end_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  bool waiting_ ABSL_GUARDED_BY(mu_) = false;
  // The stream's status() once it is over.
  absl::Status status_ ABSL_GUARDED_BY(mu_);
};

// Thread-safe.
class FakeListWatch final : public cache::ListerWatcher {
 public:
  // One scripted list answer: an error, or one page.
  struct ListResult {
    absl::Status status;
    std::vector<api::ObjectPtr> items;
    std::string resource_version;
    std::string continue_token;
  };

  // Answers the next List call with `result`.
  void PushList(ListResult result);
  void PushListError(absl::Status status);
  // What List answers once the scripted results are used up: `items` at
  // `resource_version`, in pages of options.limit (0: all) with the
  // offset as continue token. Before any SetState: an empty list at "1".
  void SetState(std::vector<api::ObjectPtr> items,
                std::string resource_version);

  // Fails the next Watch call with `status` (the calls after it open
  // watches again).
  void PushWatchError(absl::Status status);

  // The options of every List / Watch call so far, in order.
  std::vector<client::ListOptions> list_calls() const;
  std::vector<client::ListOptions> watch_calls() const;
  size_t list_call_count() const;
  size_t watch_call_count() const;

  // Block until at least `n` List / Watch calls have been made.
  void WaitForListCalls(size_t n) const;
  void WaitForWatchCalls(size_t n) const;
  // Blocks until the `index`-th (0-based) Watch call opened a watch and
  // returns it (a Watch call answered by PushWatchError opens none, and
  // does not count here).
  std::shared_ptr<FakeWatch> WaitForWatch(size_t index) const;

  absl::StatusOr<client::ListMeta> List(
      const Context& ctx, const client::ListOptions& options,
      const cache::ListItemFunc& on_item) override;
  absl::StatusOr<std::unique_ptr<client::WatchStream>> Watch(
      const Context& ctx, const client::ListOptions& options) override;
  // Any selector is taken (true when it differs from the last); the
  // answers stay what SetState and PushList script.
  absl::StatusOr<bool> SetShardSelector(std::string selector) override;
  std::string shard_selector() const;

 private:
  mutable Mutex mu_;
  std::deque<ListResult> lists_ ABSL_GUARDED_BY(mu_);
  std::vector<api::ObjectPtr> state_ ABSL_GUARDED_BY(mu_);
  std::string state_rv_ ABSL_GUARDED_BY(mu_) = "1";
  std::deque<absl::Status> watch_errors_ ABSL_GUARDED_BY(mu_);
  std::vector<client::ListOptions> list_calls_ ABSL_GUARDED_BY(mu_);
  std::vector<client::ListOptions> watch_calls_ ABSL_GUARDED_BY(mu_);
  std::vector<std::shared_ptr<FakeWatch>> watches_ ABSL_GUARDED_BY(mu_);
  std::string shard_selector_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kcr::testing

#endif  // KCR_TEST_FAKES_FAKE_LIST_WATCH_H_

// Shared informers against the local API server with its faults on:
// watches closed every few events, 500s and 429s, compactions that force
// relists, and restarts that drop every connection, while random creates,
// updates and deletes run. Afterwards every cache must equal the server's
// state, and no handler may have been told anything out of order.
//
// KCR_INFORMER_FAULT_OPS sets the number of writes (10,000 by default;
// `make soak` runs 1,000,000).
#include <atomic>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/random/random.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "api/object_builder.h"
#include "apiserver/api_server.h"
#include "base/mutex.h"
#include "gtest/gtest.h"
#include "runtime/cache/shared_informer_factory.h"
#include "runtime/client/rest_client.h"

namespace kcr::cache {
namespace {

constexpr int kNamespaces = 4;
constexpr int kNamesPerNamespace = 150;

int64_t Version(const api::Object& o) {
  int64_t v = -1;
  EXPECT_TRUE(absl::SimpleAtoi(std::string(o.resource_version()), &v));
  return v;
}

// Checks what one handler is told: per key, never an older version than
// one it was given, never a change of an instance after its deletion.
//
// With a label selector, an object that stops matching is DELETED for the
// watcher and ADDED again (same uid) when it matches again, as
// kube-apiserver sends it, so `same_instance_after_delete_ok` is set there.
class OrderChecker : public ResourceEventHandler {
 public:
  explicit OrderChecker(bool same_instance_after_delete_ok)
      : same_instance_after_delete_ok_(same_instance_after_delete_ok) {}

  void OnAdd(const api::ObjectPtr& o, bool) override { See("add", *o); }
  void OnUpdate(const api::ObjectPtr&, const api::ObjectPtr& o) override {
    See("update", *o);
  }
  void OnDelete(const api::ObjectPtr& o, bool) override {
    MutexLock lock(&mu_);
    CheckLocked("delete", *o);
    deleted_uids_.insert(std::string(o->uid()));
    ++events_;
  }

  std::vector<std::string> violations() {
    MutexLock lock(&mu_);
    return violations_;
  }
  int64_t events() {
    MutexLock lock(&mu_);
    return events_;
  }

 private:
  void See(const char* what, const api::Object& o) {
    MutexLock lock(&mu_);
    CheckLocked(what, o);
    if (!same_instance_after_delete_ok_ &&
        deleted_uids_.contains(std::string(o.uid()))) {
      violations_.push_back(absl::StrCat(what, " after delete: ", o.Key(),
                                         " uid ", std::string(o.uid())));
    }
    ++events_;
  }
  void CheckLocked(const char* what, const api::Object& o)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    int64_t& last = last_[o.Key()];
    const int64_t v = Version(o);
    if (v < last) {
      violations_.push_back(
          absl::StrCat(what, " went back: ", o.Key(), " ", last, " -> ", v));
    }
    last = std::max(last, v);
  }

  const bool same_instance_after_delete_ok_;
  Mutex mu_;
  absl::flat_hash_map<std::string, int64_t> last_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> deleted_uids_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> violations_ ABSL_GUARDED_BY(mu_);
  int64_t events_ ABSL_GUARDED_BY(mu_) = 0;
};

// Sleeps a second per notification.
class SlowHandler : public ResourceEventHandler {
 public:
  void OnAdd(const api::ObjectPtr&, bool) override { Stall(); }
  void OnUpdate(const api::ObjectPtr&, const api::ObjectPtr&) override {
    Stall();
  }
  void OnDelete(const api::ObjectPtr&, bool) override { Stall(); }
  int64_t calls() const { return calls_.load(); }
  // Lets every call return (at once, from then on).
  void Release() { released_.Notify(); }

 private:
  // Stuck in its first call until released: as slow as a handler can be,
  // and it says so by its call count rather than by the time it took.
  void Stall() {
    ++calls_;
    released_.WaitForNotification();
  }
  std::atomic<int64_t> calls_{0};
  Notification released_;
};

int Ops() {
  const char* env = std::getenv("KCR_INFORMER_FAULT_OPS");
  int ops = 0;
  if (env != nullptr && absl::SimpleAtoi(env, &ops) && ops > 0) return ops;
  return 10000;
}

std::string Ns(int i) { return absl::StrCat("fault-", i); }

// key → resourceVersion of what `informer` caches.
std::map<std::string, std::string> Cached(const SharedIndexInformer& informer) {
  std::map<std::string, std::string> out;
  for (const api::ObjectPtr& o : informer.GetStore()->List()) {
    out[o->Key()] = std::string(o->resource_version());
  }
  return out;
}

// key → resourceVersion of what the server holds for the same collection.
std::map<std::string, std::string> Served(client::RestClient* client,
                                          const client::Resource& resource,
                                          const std::string& labels) {
  client::ListOptions options;
  options.label_selector = labels;
  absl::StatusOr<client::ObjectList> list =
      client->List(Context::Background(), resource, options);
  EXPECT_TRUE(list.ok()) << list.status();
  std::map<std::string, std::string> out;
  if (!list.ok()) return out;
  for (const api::ObjectPtr& o : list->items) {
    out[o->Key()] = std::string(o->resource_version());
  }
  return out;
}

TEST(InformerFaultTest, CachesEqualTheServerAfterFaults) {
  const int ops = Ops();
  apiserver::ApiServerOptions server_options;
  server_options.history_size = 3000;
  auto server = apiserver::ApiServer::Start(server_options);
  ASSERT_TRUE(server.ok()) << server.status();
  apiserver::Registry* registry = (*server)->registry();
  auto namespaces = (*server)->resources()->Lookup("", "v1", "namespaces");
  auto configmaps = (*server)->resources()->Lookup("", "v1", "configmaps");
  ASSERT_NE(namespaces, nullptr);
  ASSERT_NE(configmaps, nullptr);
  for (int i = 0; i < kNamespaces; ++i) {
    auto ns = api::ObjectBuilder::FromJson(absl::StrCat(
        R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")", Ns(i),
        R"("}})"));
    ASSERT_TRUE(ns.ok());
    ASSERT_TRUE(registry->Create(*namespaces, "", std::move(*ns)).ok());
  }

  absl::BitGen gen;
  absl::flat_hash_map<std::string, bool> exists;
  int64_t writes = 0;
  // One random write through the registry (faults apply to HTTP only).
  auto write = [&] {
    const std::string ns = Ns(absl::Uniform(gen, 0, kNamespaces));
    const std::string name =
        absl::StrCat("cm-", absl::Uniform(gen, 0, kNamesPerNamespace));
    const std::string key = ns + "/" + name;
    const std::string group = absl::Bernoulli(gen, 0.5) ? "a" : "b";
    const std::string json = absl::StrCat(
        R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")", name,
        R"(","namespace":")", ns, R"(","labels":{"group":")", group,
        R"("}},"data":{"n":")", writes, R"("}})");
    bool& present = exists[key];
    absl::Status s;
    if (!present) {
      s = registry->Create(*configmaps, ns, *api::ObjectBuilder::FromJson(json))
              .status();
      present = s.ok();
    } else if (absl::Bernoulli(gen, 0.3)) {
      s = registry->Delete(*configmaps, ns, name).status();
      present = !s.ok();
    } else {
      s = registry
              ->Update(*configmaps, ns, name,
                       *api::ObjectBuilder::FromJson(json))
              .status();
    }
    ASSERT_TRUE(s.ok()) << s;
    ++writes;
  };
  // Objects before the informers start, so that the slow handler has an
  // initial list to be slow with.
  for (int i = 0; i < 200; ++i) write();

  client::Config config;
  config.host = (*server)->url();
  config.qps = -1;
  client::ClientOptions client_options;
  client_options.initial_backoff = absl::Milliseconds(10);
  client_options.max_backoff = absl::Milliseconds(100);
  client_options.parse_options.strip_managed_fields = true;
  auto client = client::NewRestClient(config, client_options);
  ASSERT_TRUE(client.ok()) << client.status();

  SharedInformerFactoryOptions factory_options;
  factory_options.informer.reflector.backoff.initial = absl::Milliseconds(10);
  factory_options.informer.reflector.backoff.cap = absl::Milliseconds(200);
  SharedInformerFactory factory(client->get(), factory_options);
  const client::Resource cms =
      client::Resource::Namespaced({"", "v1", "configmaps"});
  struct Watched {
    SharedIndexInformer* informer;
    client::Resource resource;
    std::string labels;
    std::shared_ptr<OrderChecker> checker;
  };
  std::vector<Watched> watched = {
      {factory.InformerFor(cms), cms, "", nullptr},
      {factory.InformerFor(cms.InNamespace(Ns(1))), cms.InNamespace(Ns(1)), "",
       nullptr},
      {factory.InformerFor(cms, {.label_selector = "group=a"}), cms, "group=a",
       nullptr},
  };
  for (Watched& w : watched) {
    w.checker = std::make_shared<OrderChecker>(!w.labels.empty());
    ASSERT_TRUE(w.informer->AddEventHandler(w.checker).ok());
  }
  auto slow = std::make_shared<SlowHandler>();
  auto slow_registration = watched[0].informer->AddEventHandler(slow);
  ASSERT_TRUE(slow_registration.ok());
  // Released before the factory stops (also when an ASSERT returns early),
  // so that its dispatch thread can be joined.
  auto release_slow = absl::MakeCleanup([&] { slow->Release(); });

  auto [ctx, cancel] = WithCancel(Context::Background());
  factory.Start(ctx);
  {
    auto [sync_ctx, sync_cancel] = WithTimeout(ctx, absl::Seconds(30));
    ASSERT_TRUE(factory.WaitForCacheSync(sync_ctx).ok());
    sync_cancel();
  }
  // The slow handler is stuck in the first of its 200 objects: the informer
  // (and the other handlers) did not wait for it.
  EXPECT_LE(slow->calls(), 1);
  EXPECT_FALSE((*slow_registration)->HasSynced());

  apiserver::FaultOptions faults;
  faults.watch_close_after_events = 150;
  faults.error_fraction = 0.03;
  faults.throttle_fraction = 0.005;
  faults.retry_after_seconds = 1;
  (*server)->faults()->set_options(faults);
  const absl::Time writes_start = absl::Now();
  for (int i = 0; i < ops; ++i) {
    write();
    // About 20,000 writes a second, so that most changes travel by watch
    // (faster, and watchers overflow and everything goes by relist).
    if (i % 200 == 199) absl::SleepFor(absl::Milliseconds(10));
    if (i % 1500 == 1499) (*server)->storage()->Compact();
    if (i % 4000 == 3999) (*server)->DropConnections();
  }
  // The informers' requests are few (a re-watch per 150 events, relists),
  // so at 3 % a run can end without a 500: keep writing, each 150 writes
  // forcing one more request per informer, until one was injected.
  for (int i = 0; (*server)->faults()->errors_injected() == 0 && i < 300000;
       ++i) {
    write();
    if (i % 200 == 199) absl::SleepFor(absl::Milliseconds(10));
  }
  (*server)->faults()->set_options(apiserver::FaultOptions());
  EXPECT_GT((*server)->faults()->errors_injected(), 0);
  const absl::Time writes_end = absl::Now();

  // Every cache converges on the server's state.
  for (Watched& w : watched) {
    const std::map<std::string, std::string> served =
        Served(client->get(), w.resource, w.labels);
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    std::map<std::string, std::string> cached = Cached(*w.informer);
    while (cached != served && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(20));
      cached = Cached(*w.informer);
    }
    EXPECT_EQ(cached, served) << w.informer->name();
    EXPECT_GT(w.checker->events(), 0) << w.informer->name();
    EXPECT_EQ(w.checker->violations(), std::vector<std::string>())
        << w.informer->name();
  }
  std::cout << "writes=" << ops << " write_time=" << (writes_end - writes_start)
            << " converged_after=" << (absl::Now() - writes_end)
            << " errors_injected=" << (*server)->faults()->errors_injected()
            << " throttles_injected="
            << (*server)->faults()->throttles_injected();
  for (Watched& w : watched) {
    std::cout << " " << w.informer->name() << ".events=" << w.checker->events();
  }
  std::cout << std::endl;
  // The slow handler is still at its first few objects.
  EXPECT_LT(slow->calls(), 100);
  cancel();
  factory.Shutdown();
}

}  // namespace
}  // namespace kcr::cache

#include "runtime/controller/handler.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/object.h"
#include "gtest/gtest.h"

namespace kcr::controller {
namespace {

api::ObjectPtr Obj(const std::string& ns, const std::string& name,
                   const std::string& owners = "[]") {
  auto o = api::Object::Parse(absl::StrCat(
      R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":")", name,
      R"(","namespace":")", ns, R"(","ownerReferences":)", owners, "}}"));
  EXPECT_TRUE(o.ok()) << o.status();
  return *o;
}

std::string Ref(const std::string& api_version, const std::string& kind,
                const std::string& name, bool controller) {
  return absl::StrCat(R"({"apiVersion":")", api_version, R"(","kind":")", kind,
                      R"(","name":")", name, R"(","uid":"u-)", name,
                      R"(","controller":)", controller ? "true" : "false", "}");
}

// Everything in the queue, in order.
std::vector<std::string> Drain(RequestQueue& q) {
  std::vector<std::string> out;
  while (q.Len() > 0) {
    auto r = q.Get();
    out.push_back(r->ToString());
    q.Done(*r);
  }
  return out;
}

using Keys = std::vector<std::string>;

TEST(EnqueueRequestForObjectTest, EnqueuesTheObject) {
  workqueue::RateLimitingQueue<Request> q;
  auto h = EnqueueRequestForObject();
  h->Create({Obj("ns", "a"), true}, q);
  h->Update({Obj("ns", "b"), Obj("ns", "c")}, q);
  h->Update({Obj("ns", "d"), nullptr}, q);
  h->Delete({Obj("ns", "e"), true}, q);
  h->Generic({Obj("", "f")}, q);
  h->Create({nullptr, false}, q);  // logged, ignored
  EXPECT_EQ(Drain(q), (Keys{"ns/a", "ns/c", "ns/d", "ns/e", "f"}));
}

TEST(EnqueueRequestForOwnerTest, EnqueuesTheControllerOwnerOfTheKind) {
  workqueue::RateLimitingQueue<Request> q;
  auto h = EnqueueRequestForOwner({"apps", "Deployment", true, true});
  const std::string owners =
      absl::StrCat("[", Ref("apps/v1", "Deployment", "web", true), ",",
                   Ref("apps/v1", "Deployment", "other", false), ",",
                   Ref("v1", "Deployment", "core-group", true), ",",
                   Ref("apps/v1", "ReplicaSet", "rs", true), "]");
  h->Create({Obj("ns", "child", owners), false}, q);
  EXPECT_EQ(Drain(q), Keys{"ns/web"});
  // No owner: nothing.
  h->Create({Obj("ns", "orphan"), false}, q);
  EXPECT_EQ(Drain(q), Keys{});
}

TEST(EnqueueRequestForOwnerTest, EveryOwnerWhenNotOnlyController) {
  workqueue::RateLimitingQueue<Request> q;
  auto h = EnqueueRequestForOwner({"apps", "Deployment", true, false});
  const std::string owners =
      absl::StrCat("[", Ref("apps/v1", "Deployment", "web", true), ",",
                   Ref("apps/v1beta1", "Deployment", "other", false), "]");
  h->Delete({Obj("ns", "child", owners), true}, q);
  EXPECT_EQ(Drain(q), (Keys{"ns/web", "ns/other"}));
}

TEST(EnqueueRequestForOwnerTest, UpdateEnqueuesOldAndNewOwnersOnce) {
  workqueue::RateLimitingQueue<Request> q;
  auto h = EnqueueRequestForOwner({"", "ConfigMap", true, true});
  auto old_obj =
      Obj("ns", "s", absl::StrCat("[", Ref("v1", "ConfigMap", "a", true), "]"));
  auto new_obj =
      Obj("ns", "s", absl::StrCat("[", Ref("v1", "ConfigMap", "b", true), "]"));
  h->Update({old_obj, new_obj}, q);
  EXPECT_EQ(Drain(q), (Keys{"ns/a", "ns/b"}));
  h->Update({old_obj, old_obj}, q);
  EXPECT_EQ(Drain(q), Keys{"ns/a"});
}

TEST(EnqueueRequestForOwnerTest, ClusterScopedOwnerHasNoNamespace) {
  workqueue::RateLimitingQueue<Request> q;
  auto h = EnqueueRequestForOwner({"", "Namespace", false, true});
  h->Create({Obj("ns", "s",
                 absl::StrCat("[", Ref("v1", "Namespace", "ns", true), "]")),
             false},
            q);
  EXPECT_EQ(Drain(q), Keys{"ns"});
}

TEST(EnqueueRequestsFromMapFuncTest, MapsOldAndNewToTheirUnion) {
  workqueue::RateLimitingQueue<Request> q;
  auto h = EnqueueRequestsFromMapFunc([](const api::Object& o) {
    return std::vector<Request>{{"x", std::string(o.name())}, {"x", "all"}};
  });
  h->Update({Obj("ns", "a"), Obj("ns", "b")}, q);
  EXPECT_EQ(Drain(q), (Keys{"x/a", "x/all", "x/b"}));
  h->Generic({Obj("ns", "g")}, q);
  EXPECT_EQ(Drain(q), (Keys{"x/g", "x/all"}));
}

// An object at resourceVersion `rv`.
api::ObjectPtr AtVersion(const std::string& name, const std::string& rv,
                         const std::string& owners = "[]") {
  auto o = api::Object::Parse(
      absl::StrCat(R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":")",
                   name, R"(","namespace":"ns","resourceVersion":")", rv,
                   R"(","ownerReferences":)", owners, "}}"));
  EXPECT_TRUE(o.ok()) << o.status();
  return *o;
}

// Everything in a priority queue, in order, as "key@priority".
std::vector<std::string> DrainWithPriority(PriorityRequestQueue& q) {
  std::vector<std::string> out;
  while (q.Len() > 0) {
    auto r = q.GetWithPriority();
    out.push_back(absl::StrCat(r->item.ToString(), "@", r->priority));
    q.Done(r->item);
  }
  return out;
}

TEST(HandlerPriorityTest, InitialListAndResyncsAreLowPriority) {
  workqueue::PriorityQueue<Request> q;
  auto h = EnqueueRequestForObject();
  h->Create({AtVersion("listed", "1"), /*is_in_initial_list=*/true}, q);
  h->Update({AtVersion("resynced", "2"), AtVersion("resynced", "2")}, q);
  h->Create({AtVersion("created", "3"), false}, q);
  h->Update({AtVersion("changed", "3"), AtVersion("changed", "4")}, q);
  h->Delete({AtVersion("deleted", "5"), false}, q);
  h->Generic({AtVersion("generic", "6")}, q);
  EXPECT_EQ(DrainWithPriority(q),
            (Keys{"ns/created@0", "ns/changed@0", "ns/deleted@0",
                  "ns/generic@0", "ns/listed@-100", "ns/resynced@-100"}));
}

TEST(HandlerPriorityTest, AFreshChangeRaisesAListedObject) {
  workqueue::PriorityQueue<Request> q;
  auto h = EnqueueRequestForObject();
  h->Create({AtVersion("a", "1"), true}, q);
  h->Create({AtVersion("b", "1"), true}, q);
  h->Update({AtVersion("b", "1"), AtVersion("b", "2")}, q);
  EXPECT_EQ(DrainWithPriority(q), (Keys{"ns/b@0", "ns/a@-100"}));
}

TEST(HandlerPriorityTest, OwnerAndMapFuncHandlersUseTheSamePriorities) {
  workqueue::PriorityQueue<Request> q;
  const std::string owned =
      absl::StrCat("[", Ref("apps/v1", "Deployment", "web", true), "]");
  auto owner = EnqueueRequestForOwner({"apps", "Deployment", true, true});
  owner->Create({AtVersion("pod", "1", owned), true}, q);
  auto mapped = EnqueueRequestsFromMapFunc([](const api::Object& o) {
    return std::vector<Request>{{"x", std::string(o.name())}};
  });
  mapped->Update({AtVersion("m", "1"), AtVersion("m", "1")}, q);
  mapped->Create({AtVersion("n", "1"), false}, q);
  EXPECT_EQ(DrainWithPriority(q), (Keys{"x/n@0", "ns/web@-100", "x/m@-100"}));
}

TEST(HandlerPriorityTest, EventHandlerFuncsAddAtTheEventsPriority) {
  // Rate-limited adds wait an hour: long enough to be seen waiting.
  workqueue::PriorityQueue<Request> q(
      std::make_unique<workqueue::ItemExponentialFailureRateLimiter<Request>>(
          absl::Hours(1), absl::Hours(1)));
  EventHandlerFuncs h;
  h.create = [](const CreateEvent& e, RequestQueue& queue) {
    queue.Add(Request::For(*e.object));
    // An explicit priority wins over the event's.
    if (auto* pq = dynamic_cast<PriorityRequestQueue*>(&queue)) {
      workqueue::AddOpts opts;
      opts.priority = 7;
      pq->AddWithOpts(opts, Request{"ns", "explicit"});
    }
  };
  h.update = [](const UpdateEvent& e, RequestQueue& queue) {
    queue.AddRateLimited(Request::For(*e.object_new));
  };
  h.Create({AtVersion("listed", "1"), true}, q);
  h.Create({AtVersion("created", "1"), false}, q);
  h.Update({AtVersion("resynced", "1"), AtVersion("resynced", "1")}, q);
  EXPECT_EQ(DrainWithPriority(q),
            (Keys{"ns/explicit@7", "ns/created@0", "ns/listed@-100"}));
  EXPECT_EQ(q.NumRequeues(Request{"ns", "resynced"}), 1);
  EXPECT_EQ(q.WaitingLen(), 1u);
}

TEST(HandlerPriorityTest, APlainQueueGetsPlainAdds) {
  workqueue::RateLimitingQueue<Request> q;
  auto h = EnqueueRequestForObject();
  h->Create({AtVersion("listed", "1"), true}, q);
  h->Create({AtVersion("created", "1"), false}, q);
  EXPECT_EQ(Drain(q), (Keys{"ns/listed", "ns/created"}));
}

}  // namespace
}  // namespace kcr::controller

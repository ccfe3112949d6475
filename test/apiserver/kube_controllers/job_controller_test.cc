#include "apiserver/kube_controllers/job_controller.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "api/object_builder.h"
#include "api/types/time.h"
#include "apiserver/kube_controllers/ttl_after_finished_controller.h"
#include "base/str_cat.h"
#include "gtest/gtest.h"
#include "test/apiserver/controller_test_util.h"

namespace kcr::apiserver {
namespace {

int64_t Int(const api::Object& o, const char* pointer) {
  const rapidjson::Value* v = o.Find(pointer);
  return v != nullptr && v->IsInt64() ? v->GetInt64() : 0;
}

std::string Str(const api::Object& o, const std::string& pointer) {
  const rapidjson::Value* v = o.Find(pointer);
  return v != nullptr && v->IsString() ? v->GetString() : "";
}

// "Type=Status/Reason" of each condition, in order.
std::vector<std::string> Conditions(const api::Object& job) {
  std::vector<std::string> out;
  const rapidjson::Value* c = job.Find("/status/conditions");
  if (c == nullptr) return out;
  for (const rapidjson::Value& v : c->GetArray()) {
    out.push_back(Cat(v["type"].GetString(), "=", v["status"].GetString(), "/",
                      v["reason"].GetString()));
  }
  return out;
}

class JobControllerTest : public ControllerTest {
 protected:
  const ResourceInfo& Jobs() { return Resource("batch", "v1", "jobs"); }

  // A Job; `spec` is spliced into its spec before the template.
  api::ObjectPtr CreateJob(const std::string& name, const std::string& spec) {
    return Create(
        Jobs(), "default",
        Cat(R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":")",
            name, R"("},"spec":{)", spec, spec.empty() ? "" : ",",
            R"("template":{"metadata":{"labels":{"app":"x"}},"spec":{)",
            R"("restartPolicy":"Never","containers":[{"name":"c",)",
            R"("image":"busybox"}]}}}})"));
  }

  api::ObjectPtr Job(const std::string& name) {
    return Get(Jobs(), "default", name);
  }

  void Patch(const std::string& name, const char* pointer, bool v) {
    api::ObjectBuilder b = Job(name)->ToBuilder();
    ASSERT_TRUE(b.SetBool(pointer, v).ok());
    ASSERT_TRUE(registry_.Update(Jobs(), "default", name, std::move(b)).ok());
  }

  // The Job's pods, oldest first.
  std::vector<api::ObjectPtr> PodsOf(const std::string& name) {
    std::vector<api::ObjectPtr> out;
    api::ObjectPtr job = Job(name);
    for (api::ObjectPtr& p : storage_.Snapshot("/pods")) {
      auto ref = p->controller_reference();
      if (job != nullptr && ref.has_value() && ref->uid == job->uid()) {
        out.push_back(p);
      }
    }
    return out;
  }

  std::vector<api::ObjectPtr> Running(const std::string& name) {
    std::vector<api::ObjectPtr> out;
    for (api::ObjectPtr& p : PodsOf(name)) {
      const std::string phase = Str(*p, "/status/phase");
      if (phase != "Succeeded" && phase != "Failed" && !p->being_deleted()) {
        out.push_back(p);
      }
    }
    return out;
  }

  // Ends a pod as the kubelet would.
  void Finish(const api::Object& pod, const std::string& phase) {
    api::ObjectBuilder b = pod.ToBuilder();
    ASSERT_TRUE(
        b.SetJson("/status", Cat(R"({"phase":")", phase, R"("})")).ok());
    WriteOptions w;
    w.subresource = "status";
    ASSERT_TRUE(
        registry_.Update(Pods(), "default", pod.name(), std::move(b), w).ok());
  }

  void Settle() {
    for (int i = 0; i < 20; ++i) {
      const uint64_t before = jc_.keys_synced();
      jc_.Sync();
      if (jc_.keys_synced() == before) return;
    }
    FAIL() << "the job controller does not settle";
  }

  std::vector<std::string> EventsOf(const std::string& name) {
    std::vector<std::string> out;
    for (const api::ObjectPtr& e : storage_.Snapshot("/events")) {
      if (Str(*e, "/involvedObject/name") != name ||
          Str(*e, "/involvedObject/kind") != "Job") {
        continue;
      }
      out.push_back(Cat(Str(*e, "/reason"), ": ", Str(*e, "/message")));
    }
    return out;
  }

  JobController jc_{&registry_, &clock_};
};

TEST_F(JobControllerTest, CreatesTrackedPodsAndCompletes) {
  api::ObjectPtr job = CreateJob("pi", "");
  Settle();
  std::vector<api::ObjectPtr> pods = PodsOf("pi");
  ASSERT_EQ(pods.size(), 1u);
  const api::Object& pod = *pods[0];
  EXPECT_EQ(pod.name().substr(0, 3), "pi-");
  EXPECT_EQ(pod.name().size(), 8u);
  EXPECT_EQ(pod.Label("job-name"), "pi");
  EXPECT_EQ(pod.Label("batch.kubernetes.io/job-name"), "pi");
  EXPECT_EQ(pod.Label("batch.kubernetes.io/controller-uid"), job->uid());
  EXPECT_EQ(pod.Label("controller-uid"), job->uid());
  EXPECT_EQ(pod.Label("app"), "x");
  EXPECT_TRUE(pod.HasFinalizer(kJobTrackingFinalizer));
  ASSERT_TRUE(pod.controller_reference().has_value());
  EXPECT_EQ(pod.controller_reference()->kind, "Job");
  EXPECT_TRUE(pod.controller_reference()->block_owner_deletion);
  job = Job("pi");
  EXPECT_EQ(Int(*job, "/status/active"), 1);
  EXPECT_NE(job->Find("/status/ready"), nullptr);
  EXPECT_NE(job->Find("/status/terminating"), nullptr);
  EXPECT_EQ(Str(*job, "/status/startTime"), api::FormatRfc3339(clock_.Now()));
  EXPECT_NE(job->Find("/status/uncountedTerminatedPods"), nullptr);

  clock_.Advance(absl::Seconds(5));
  Finish(pod, "Succeeded");
  Settle();
  job = Job("pi");
  EXPECT_EQ(Int(*job, "/status/succeeded"), 1);
  EXPECT_EQ(Int(*job, "/status/active"), 0);
  EXPECT_EQ(Conditions(*job), (std::vector<std::string>{
                                  "SuccessCriteriaMet=True/CompletionsReached",
                                  "Complete=True/CompletionsReached"}));
  EXPECT_EQ(Str(*job, "/status/completionTime"),
            api::FormatRfc3339(clock_.Now()));
  EXPECT_EQ(Str(*job, "/status/conditions/1/message"),
            "Reached expected number of succeeded pods");
  // Counted: the finalizer is gone, the pod stays.
  pods = PodsOf("pi");
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_FALSE(pods[0]->HasFinalizer(kJobTrackingFinalizer));
  EXPECT_EQ(job->Find("/status/uncountedTerminatedPods/succeeded"), nullptr);
  EXPECT_EQ(EventsOf("pi"),
            (std::vector<std::string>{
                Cat("SuccessfulCreate: Created pod: ", pod.name()),
                "Completed: Job completed"}));
}

TEST_F(JobControllerTest, CompletionsWithParallelism) {
  CreateJob("w", R"("completions":5,"parallelism":2)");
  Settle();
  int finished = 0;
  for (int round = 0; round < 10 && finished < 5; ++round) {
    std::vector<api::ObjectPtr> running = Running("w");
    ASSERT_LE(running.size(), 2u);
    ASSERT_FALSE(running.empty());
    // Never more pods than completions left.
    EXPECT_LE(static_cast<int>(running.size()), 5 - finished);
    Finish(*running[0], "Succeeded");
    ++finished;
    Settle();
  }
  api::ObjectPtr job = Job("w");
  EXPECT_EQ(Int(*job, "/status/succeeded"), 5);
  EXPECT_EQ(PodsOf("w").size(), 5u);
  EXPECT_EQ(Conditions(*job).back(), "Complete=True/CompletionsReached");
}

TEST_F(JobControllerTest, WorkQueueCompletesWhenOnePodSucceededAndAllEnded) {
  CreateJob("q", R"("parallelism":3)");
  Settle();
  std::vector<api::ObjectPtr> running = Running("q");
  ASSERT_EQ(running.size(), 3u);
  Finish(*running[0], "Succeeded");
  Settle();
  // No replacement, no completion while the others run.
  EXPECT_EQ(Running("q").size(), 2u);
  EXPECT_TRUE(Conditions(*Job("q")).empty());
  Finish(*running[1], "Succeeded");
  Finish(*running[2], "Succeeded");
  Settle();
  EXPECT_EQ(Conditions(*Job("q")).back(), "Complete=True/CompletionsReached");
  EXPECT_EQ(Int(*Job("q"), "/status/succeeded"), 3);
}

TEST_F(JobControllerTest, RetriesWithBackoffThenFailsAtBackoffLimit) {
  CreateJob("f", R"("backoffLimit":2)");
  Settle();
  // Failure 1: the replacement waits 10s.
  Finish(*Running("f")[0], "Failed");
  Settle();
  EXPECT_TRUE(Running("f").empty());
  EXPECT_EQ(Int(*Job("f"), "/status/failed"), 1);
  clock_.Advance(absl::Seconds(9));
  Settle();
  EXPECT_TRUE(Running("f").empty());
  clock_.Advance(absl::Seconds(1));
  Settle();
  ASSERT_EQ(Running("f").size(), 1u);
  // Failure 2: 20s.
  Finish(*Running("f")[0], "Failed");
  Settle();
  clock_.Advance(absl::Seconds(19));
  Settle();
  EXPECT_TRUE(Running("f").empty());
  clock_.Advance(absl::Seconds(1));
  Settle();
  ASSERT_EQ(Running("f").size(), 1u);
  // Failure 3 exceeds backoffLimit 2.
  Finish(*Running("f")[0], "Failed");
  Settle();
  api::ObjectPtr job = Job("f");
  EXPECT_EQ(Int(*job, "/status/failed"), 3);
  EXPECT_EQ(Conditions(*job),
            (std::vector<std::string>{"FailureTarget=True/BackoffLimitExceeded",
                                      "Failed=True/BackoffLimitExceeded"}));
  EXPECT_EQ(Str(*job, "/status/conditions/1/message"),
            "Job has reached the specified backoff limit");
  EXPECT_EQ(job->Find("/status/completionTime"), nullptr);
  EXPECT_EQ(PodsOf("f").size(), 3u);
  EXPECT_EQ(
      EventsOf("f").back(),
      "BackoffLimitExceeded: Job has reached the specified backoff limit");
  clock_.Advance(absl::Minutes(10));
  Settle();
  EXPECT_EQ(PodsOf("f").size(), 3u);
}

TEST_F(JobControllerTest, IndexedCompletion) {
  CreateJob("ix", R"("completions":3,"parallelism":2,)"
                  R"("completionMode":"Indexed")");
  Settle();
  std::vector<api::ObjectPtr> running = Running("ix");
  ASSERT_EQ(running.size(), 2u);
  std::vector<std::string> indexes;
  for (const api::ObjectPtr& p : running) {
    const std::string i(*p->Annotation(kJobCompletionIndexAnnotation));
    indexes.push_back(i);
    EXPECT_EQ(p->Label(kJobCompletionIndexAnnotation), i);
    EXPECT_EQ(p->name().substr(0, 5), Cat("ix-", i, "-"));
    EXPECT_EQ(Str(*p, "/spec/hostname"), Cat("ix-", i));
    EXPECT_EQ(Str(*p, "/spec/containers/0/env/0/name"), "JOB_COMPLETION_INDEX");
    EXPECT_EQ(Str(*p, "/spec/containers/0/env/0/valueFrom/fieldRef/fieldPath"),
              "metadata.labels['batch.kubernetes.io/job-completion-index']");
  }
  std::sort(indexes.begin(), indexes.end());
  EXPECT_EQ(indexes, (std::vector<std::string>{"0", "1"}));
  // Index 1 succeeds, 0 fails (and is retried after the back-off).
  for (const api::ObjectPtr& p : running) {
    Finish(*p, *p->Annotation(kJobCompletionIndexAnnotation) == "1"
                   ? "Succeeded"
                   : "Failed");
  }
  Settle();
  EXPECT_EQ(Str(*Job("ix"), "/status/completedIndexes"), "1");
  clock_.Advance(absl::Seconds(10));
  Settle();
  running = Running("ix");
  ASSERT_EQ(running.size(), 2u);
  for (const api::ObjectPtr& p : running) Finish(*p, "Succeeded");
  Settle();
  api::ObjectPtr job = Job("ix");
  EXPECT_EQ(Str(*job, "/status/completedIndexes"), "0-2");
  EXPECT_EQ(Int(*job, "/status/succeeded"), 3);
  EXPECT_EQ(Int(*job, "/status/failed"), 1);
  EXPECT_EQ(Conditions(*job).back(), "Complete=True/CompletionsReached");
}

TEST_F(JobControllerTest, BackoffLimitPerIndexFailsTheIndexNotTheJob) {
  CreateJob("pi", R"("completions":3,"parallelism":3,)"
                  R"("completionMode":"Indexed","backoffLimitPerIndex":1)");
  Settle();
  EXPECT_EQ(Str(*Job("pi"), "/status/failedIndexes"), "");
  auto of_index = [&](const std::string& i) {
    for (const api::ObjectPtr& p : Running("pi")) {
      if (p->Annotation(kJobCompletionIndexAnnotation) == i) return p;
    }
    return api::ObjectPtr();
  };
  // Index 0 fails once: retried, its pod says so.
  ASSERT_NE(of_index("0"), nullptr);
  EXPECT_EQ(
      of_index("0")->Annotation("batch.kubernetes.io/job-index-failure-count"),
      "0");
  Finish(*of_index("0"), "Failed");
  Settle();
  clock_.Advance(absl::Seconds(10));
  Settle();
  ASSERT_NE(of_index("0"), nullptr);
  EXPECT_EQ(
      of_index("0")->Annotation("batch.kubernetes.io/job-index-failure-count"),
      "1");
  // Twice: the index has failed, the Job goes on with the others.
  Finish(*of_index("0"), "Failed");
  Settle();
  clock_.Advance(absl::Minutes(1));
  Settle();
  EXPECT_EQ(of_index("0"), nullptr);
  EXPECT_EQ(Str(*Job("pi"), "/status/failedIndexes"), "0");
  EXPECT_TRUE(Conditions(*Job("pi")).empty());
  Finish(*of_index("1"), "Succeeded");
  Finish(*of_index("2"), "Succeeded");
  Settle();
  api::ObjectPtr job = Job("pi");
  EXPECT_EQ(Str(*job, "/status/completedIndexes"), "1-2");
  EXPECT_EQ(Conditions(*job),
            (std::vector<std::string>{"FailureTarget=True/FailedIndexes",
                                      "Failed=True/FailedIndexes"}));
  EXPECT_EQ(Str(*job, "/status/conditions/1/message"),
            "Job has failed indexes");
}

TEST_F(JobControllerTest, ActiveDeadlineSecondsFailsTheJob) {
  CreateJob("d", R"("activeDeadlineSeconds":30,"parallelism":2)");
  Settle();
  ASSERT_EQ(Running("d").size(), 2u);
  clock_.Advance(absl::Seconds(29));
  Settle();
  EXPECT_TRUE(Conditions(*Job("d")).empty());
  clock_.Advance(absl::Seconds(1));
  Settle();
  api::ObjectPtr job = Job("d");
  // Its pods were deleted (and, being tracked, counted as failed).
  EXPECT_TRUE(PodsOf("d").empty());
  EXPECT_EQ(Int(*job, "/status/failed"), 2);
  EXPECT_EQ(Int(*job, "/status/active"), 0);
  EXPECT_EQ(Conditions(*job),
            (std::vector<std::string>{"FailureTarget=True/DeadlineExceeded",
                                      "Failed=True/DeadlineExceeded"}));
  EXPECT_EQ(Str(*job, "/status/conditions/1/message"),
            "Job was active longer than specified deadline");
  std::vector<std::string> events = EventsOf("d");
  EXPECT_EQ(std::count_if(events.begin(), events.end(),
                          [](const std::string& e) {
                            return e.rfind("SuccessfulDelete: Deleted pod: ",
                                           0) == 0;
                          }),
            2);
  EXPECT_EQ(events.back(),
            "DeadlineExceeded: Job was active longer than specified deadline");
}

TEST_F(JobControllerTest, SuspendDeletesActivePodsAndResumeRestarts) {
  CreateJob("s", R"("parallelism":2,"completions":2)");
  Settle();
  ASSERT_EQ(Running("s").size(), 2u);
  clock_.Advance(absl::Seconds(3));
  Patch("s", "/spec/suspend", true);
  Settle();
  api::ObjectPtr job = Job("s");
  EXPECT_TRUE(PodsOf("s").empty());
  EXPECT_EQ(Int(*job, "/status/active"), 0);
  EXPECT_EQ(Conditions(*job),
            (std::vector<std::string>{"Suspended=True/JobSuspended"}));
  EXPECT_EQ(Str(*job, "/status/conditions/0/message"), "Job suspended");
  clock_.Advance(absl::Minutes(10));  // past any back-off
  Settle();
  EXPECT_TRUE(PodsOf("s").empty());

  Patch("s", "/spec/suspend", false);
  Settle();
  job = Job("s");
  EXPECT_EQ(Running("s").size(), 2u);
  EXPECT_EQ(Conditions(*job),
            (std::vector<std::string>{"Suspended=False/JobResumed"}));
  EXPECT_EQ(Str(*job, "/status/startTime"), api::FormatRfc3339(clock_.Now()));
  std::vector<std::string> events = EventsOf("s");
  EXPECT_NE(std::find(events.begin(), events.end(), "Suspended: Job suspended"),
            events.end());
  EXPECT_EQ(events.back().rfind("SuccessfulCreate", 0), 0u);
  EXPECT_NE(std::find(events.begin(), events.end(), "Resumed: Job resumed"),
            events.end());
}

TEST_F(JobControllerTest, TtlAfterFinishedDeletesTheJobInTheForeground) {
  TtlAfterFinishedController ttl(&registry_, &clock_);
  CreateJob("t", R"("ttlSecondsAfterFinished":60)");
  Settle();
  ttl.Sync();
  Finish(*Running("t")[0], "Succeeded");
  Settle();
  ASSERT_EQ(Conditions(*Job("t")).back(), "Complete=True/CompletionsReached");
  ttl.Sync();
  clock_.Advance(absl::Seconds(59));
  ttl.Sync();
  EXPECT_FALSE(Job("t")->being_deleted());
  clock_.Advance(absl::Seconds(1));
  ttl.Sync();
  api::ObjectPtr job = Job("t");
  ASSERT_NE(job, nullptr);  // the garbage collector finishes it
  EXPECT_TRUE(job->being_deleted());
  EXPECT_TRUE(job->HasFinalizer("foregroundDeletion"));
}

TEST_F(JobControllerTest, APodLeftByADeletedJobLosesTheFinalizer) {
  CreateJob("gone", "");
  Settle();
  std::vector<api::ObjectPtr> pods = PodsOf("gone");
  ASSERT_EQ(pods.size(), 1u);
  ASSERT_TRUE(registry_.Delete(Jobs(), "default", "gone", {}).ok());
  Settle();
  api::ObjectPtr pod = Get(Pods(), "default", pods[0]->name());
  ASSERT_NE(pod, nullptr);
  EXPECT_FALSE(pod->HasFinalizer(kJobTrackingFinalizer));
}

TEST_F(JobControllerTest, AdoptsAnOrphanItsSelectorMatches) {
  api::ObjectPtr job = CreateJob("a", R"("parallelism":2,"completions":2)");
  // An orphan carrying the Job's labels (a pod its Job once released, or
  // one a user made) is adopted and counts toward parallelism.
  Create(
      Pods(), "default",
      Cat(R"({"metadata":{"name":"stray","labels":{"job-name":"a",)",
          R"("batch.kubernetes.io/job-name":"a","controller-uid":")",
          job->uid(), R"(","batch.kubernetes.io/controller-uid":")", job->uid(),
          R"("}},"spec":{"restartPolicy":"Never","containers":[)",
          R"({"name":"c","image":"busybox"}]}})"));
  Create(Pods(), "default",
         R"({"metadata":{"name":"other","labels":{"job-name":"a"}},)"
         R"("spec":{"containers":[{"name":"c","image":"busybox"}]}})");
  Settle();
  api::ObjectPtr stray = Get(Pods(), "default", "stray");
  ASSERT_TRUE(stray->controller_reference().has_value());
  EXPECT_EQ(stray->controller_reference()->uid, job->uid());
  EXPECT_TRUE(stray->HasFinalizer(kJobTrackingFinalizer));
  EXPECT_EQ(Running("a").size(), 2u);
  EXPECT_FALSE(
      Get(Pods(), "default", "other")->controller_reference().has_value());
}

TEST_F(JobControllerTest, AWriteSyncsOnlyTheJobItTouches) {
  for (int i = 0; i < 50; ++i) CreateJob(Cat("j", i), "");
  Settle();
  const uint64_t before = jc_.keys_synced();
  EXPECT_GE(before, 50u);
  // One pod of one Job finishes: that Job alone is synced, once per write
  // its sync makes (status, finalizer, status).
  Finish(*Running("j7")[0], "Succeeded");
  jc_.Sync();
  EXPECT_EQ(jc_.keys_synced(), before + 1);
  Settle();
  EXPECT_LE(jc_.keys_synced(), before + 5);
  EXPECT_EQ(Conditions(*Job("j7")).back(), "Complete=True/CompletionsReached");
  EXPECT_TRUE(Conditions(*Job("j8")).empty());
}

}  // namespace
}  // namespace kcr::apiserver

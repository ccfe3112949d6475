#include "apiserver/kube_controllers/cronjob_controller.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "api/object_builder.h"
#include "api/types/time.h"
#include "base/str_cat.h"
#include "gtest/gtest.h"
#include "test/apiserver/controller_test_util.h"

namespace kcr::apiserver {
namespace {

absl::Time At(const std::string& rfc3339) {
  absl::StatusOr<absl::Time> t = api::ParseTime(rfc3339);
  EXPECT_TRUE(t.ok()) << rfc3339;
  return *t;
}

std::string Str(const api::Object& o, const std::string& pointer) {
  const rapidjson::Value* v = o.Find(pointer);
  return v != nullptr && v->IsString() ? v->GetString() : "";
}

class CronJobControllerTest : public ControllerTest {
 protected:
  CronJobControllerTest() { clock_.SetTime(At("2024-05-01T10:00:30Z")); }

  const ResourceInfo& CronJobs() { return Resource("batch", "v1", "cronjobs"); }
  const ResourceInfo& Jobs() { return Resource("batch", "v1", "jobs"); }

  api::ObjectPtr CreateCronJob(const std::string& name,
                               const std::string& schedule,
                               const std::string& extra = "") {
    return Create(
        CronJobs(), "default",
        Cat(R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":")",
            name, R"("},"spec":{"schedule":")", schedule, R"(",)", extra,
            extra.empty() ? "" : ",",
            R"("jobTemplate":{"metadata":{"labels":{"team":"a"},)",
            R"("annotations":{"note":"n"}},"spec":{"template":{"spec":{)",
            R"("restartPolicy":"OnFailure","containers":[{"name":"c",)",
            R"("image":"busybox"}]}}}}}})"));
  }

  api::ObjectPtr CronJob(const std::string& name) {
    return Get(CronJobs(), "default", name);
  }

  // The CronJob's Jobs, by name.
  std::vector<std::string> JobsOf(const std::string& name) {
    std::vector<std::string> out;
    api::ObjectPtr cj = CronJob(name);
    for (const api::ObjectPtr& j : storage_.Snapshot("batch/jobs")) {
      auto ref = j->controller_reference();
      if (cj != nullptr && ref.has_value() && ref->uid == cj->uid()) {
        out.emplace_back(j->name());
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  // Finishes a Job as the job controller would.
  void FinishJob(const std::string& name, const std::string& type) {
    api::ObjectPtr job = Get(Jobs(), "default", name);
    ASSERT_NE(job, nullptr) << name;
    const std::string now = api::FormatRfc3339(clock_.Now());
    api::ObjectBuilder b = job->ToBuilder();
    ASSERT_TRUE(
        b.SetJson(
             "/status",
             Cat(R"({"startTime":")", Str(*job, "/metadata/creationTimestamp"),
                 R"(",)",
                 type == "Complete" ? Cat(R"("completionTime":")", now, R"(",)")
                                    : "",
                 R"("conditions":[{"type":")", type,
                 R"(","status":"True","lastTransitionTime":")", now, R"("}]})"))
            .ok());
    WriteOptions w;
    w.subresource = "status";
    ASSERT_TRUE(
        registry_.Update(Jobs(), "default", name, std::move(b), w).ok());
  }

  // Moves the clock to `t` and runs the passes due.
  void RunUntil(const std::string& t) {
    clock_.SetTime(At(t));
    for (int i = 0; i < 10; ++i) {
      const uint64_t before = cc_.keys_synced();
      cc_.Sync();
      if (cc_.keys_synced() == before) return;
    }
    FAIL() << "the cronjob controller does not settle";
  }

  std::vector<std::string> EventsOf(const std::string& name) {
    std::vector<std::string> out;
    for (const api::ObjectPtr& e : storage_.Snapshot("/events")) {
      if (Str(*e, "/involvedObject/name") != name ||
          Str(*e, "/involvedObject/kind") != "CronJob") {
        continue;
      }
      out.push_back(Cat(Str(*e, "/reason"), ": ", Str(*e, "/message")));
    }
    return out;
  }

  static std::string JobName(const std::string& cj, const std::string& t) {
    return Cat(cj, "-", absl::ToUnixSeconds(At(t)) / 60);
  }

  CronJobController cc_{&registry_, &clock_};
};

TEST_F(CronJobControllerTest, FiresOnScheduleAndWaitsForTheNextTime) {
  CreateCronJob("every5", "*/5 * * * *");
  RunUntil("2024-05-01T10:00:30Z");
  EXPECT_TRUE(JobsOf("every5").empty());
  // Due at 10:05 (plus 100ms), not before.
  EXPECT_EQ(cc_.Sync(), At("2024-05-01T10:05:00Z") + absl::Milliseconds(100));
  RunUntil("2024-05-01T10:04:59Z");
  EXPECT_TRUE(JobsOf("every5").empty());
  RunUntil("2024-05-01T10:05:00.1Z");
  const std::string name = JobName("every5", "2024-05-01T10:05:00Z");
  ASSERT_EQ(JobsOf("every5"), std::vector<std::string>{name});
  api::ObjectPtr job = Get(Jobs(), "default", name);
  EXPECT_EQ(job->Label("team"), "a");
  EXPECT_EQ(job->Annotation("note"), "n");
  EXPECT_EQ(job->Annotation(kCronJobScheduledTimestampAnnotation),
            "2024-05-01T10:05:00Z");
  ASSERT_TRUE(job->controller_reference().has_value());
  EXPECT_EQ(job->controller_reference()->kind, "CronJob");
  EXPECT_TRUE(job->controller_reference()->block_owner_deletion);
  api::ObjectPtr cj = CronJob("every5");
  EXPECT_EQ(Str(*cj, "/status/lastScheduleTime"), "2024-05-01T10:05:00Z");
  EXPECT_EQ(Str(*cj, "/status/active/0/name"), name);
  EXPECT_EQ(Str(*cj, "/status/active/0/kind"), "Job");
  EXPECT_EQ(Str(*cj, "/status/active/0/uid"), job->uid());
  EXPECT_EQ(cc_.Sync(), At("2024-05-01T10:10:00Z") + absl::Milliseconds(100));

  // The Job completes: it leaves status.active, and lastSuccessfulTime
  // follows.
  clock_.Advance(absl::Seconds(30));
  FinishJob(name, "Complete");
  RunUntil("2024-05-01T10:05:30.1Z");
  cj = CronJob("every5");
  EXPECT_EQ(cj->Find("/status/active"), nullptr);
  EXPECT_EQ(Str(*cj, "/status/lastSuccessfulTime"), "2024-05-01T10:05:30Z");
  EXPECT_EQ(EventsOf("every5"), (std::vector<std::string>{
                                    Cat("SuccessfulCreate: Created job ", name),
                                    Cat("SawCompletedJob: Saw completed job: ",
                                        name, ", condition: Complete")}));
}

TEST_F(CronJobControllerTest, OnlyTheMostRecentMissedTimeRuns) {
  CreateCronJob("m", "* * * * *");
  RunUntil("2024-05-01T10:30:10Z");
  EXPECT_EQ(JobsOf("m"),
            std::vector<std::string>{JobName("m", "2024-05-01T10:30:00Z")});
}

TEST_F(CronJobControllerTest, ForbidSkipsWhileAJobIsActive) {
  CreateCronJob("f", "* * * * *", R"("concurrencyPolicy":"Forbid")");
  RunUntil("2024-05-01T10:01:00.1Z");
  ASSERT_EQ(JobsOf("f").size(), 1u);
  RunUntil("2024-05-01T10:02:00.1Z");
  EXPECT_EQ(JobsOf("f").size(), 1u);
  EXPECT_EQ(EventsOf("f").back(),
            "JobAlreadyActive: Not starting job because prior execution is "
            "running and concurrency policy is Forbid");
  FinishJob(JobName("f", "2024-05-01T10:01:00Z"), "Complete");
  RunUntil("2024-05-01T10:03:00.1Z");
  EXPECT_EQ(JobsOf("f"),
            (std::vector<std::string>{JobName("f", "2024-05-01T10:01:00Z"),
                                      JobName("f", "2024-05-01T10:03:00Z")}));
}

TEST_F(CronJobControllerTest, ReplaceDeletesTheActiveJob) {
  CreateCronJob("r", "* * * * *", R"("concurrencyPolicy":"Replace")");
  RunUntil("2024-05-01T10:01:00.1Z");
  RunUntil("2024-05-01T10:02:00.1Z");
  const std::string second = JobName("r", "2024-05-01T10:02:00Z");
  EXPECT_EQ(JobsOf("r"), std::vector<std::string>{second});
  EXPECT_EQ(Str(*CronJob("r"), "/status/active/0/name"), second);
  EXPECT_EQ(CronJob("r")->Find("/status/active/1"), nullptr);
  std::vector<std::string> events = EventsOf("r");
  EXPECT_NE(std::find(events.begin(), events.end(),
                      Cat("SuccessfulDelete: Deleted job ",
                          JobName("r", "2024-05-01T10:01:00Z"))),
            events.end());
}

TEST_F(CronJobControllerTest, HistoryLimitsPruneTheOldestFinishedJobs) {
  CreateCronJob("h", "* * * * *",
                R"("successfulJobsHistoryLimit":2,"failedJobsHistoryLimit":1)");
  std::vector<std::string> names;
  for (int minute = 1; minute <= 6; ++minute) {
    const std::string t = Cat("2024-05-01T10:0", minute, ":00Z");
    RunUntil(Cat("2024-05-01T10:0", minute, ":00.1Z"));
    names.push_back(JobName("h", t));
    // Three succeed, then three fail.
    FinishJob(names.back(), minute <= 3 ? "Complete" : "Failed");
    RunUntil(Cat("2024-05-01T10:0", minute, ":30Z"));
  }
  EXPECT_EQ(JobsOf("h"),
            (std::vector<std::string>{names[1], names[2], names[5]}));
}

TEST_F(CronJobControllerTest, StartingDeadlineSkipsALateTime) {
  CreateCronJob("late", "0 * * * *", R"("startingDeadlineSeconds":10)");
  RunUntil("2024-05-01T11:00:30Z");
  EXPECT_TRUE(JobsOf("late").empty());
  RunUntil("2024-05-01T12:00:05Z");
  EXPECT_EQ(JobsOf("late"),
            std::vector<std::string>{JobName("late", "2024-05-01T12:00:00Z")});
}

TEST_F(CronJobControllerTest, SuspendStopsScheduling) {
  CreateCronJob("s", "* * * * *", R"("suspend":true)");
  RunUntil("2024-05-01T10:05:00.1Z");
  EXPECT_TRUE(JobsOf("s").empty());
}

TEST_F(CronJobControllerTest, ScheduleInItsTimeZone) {
  CreateCronJob("tz", "0 9 * * *", R"("timeZone":"Europe/Berlin")");
  RunUntil("2024-05-02T06:59:59Z");
  EXPECT_TRUE(JobsOf("tz").empty());
  RunUntil("2024-05-02T07:00:00.1Z");
  const std::string name = JobName("tz", "2024-05-02T07:00:00Z");
  ASSERT_EQ(JobsOf("tz"), std::vector<std::string>{name});
  EXPECT_EQ(Get(Jobs(), "default", name)
                ->Annotation(kCronJobScheduledTimestampAnnotation),
            "2024-05-02T09:00:00+02:00");
}

TEST_F(CronJobControllerTest, AWriteOfOneJobSyncsOnlyItsCronJob) {
  for (int i = 0; i < 50; ++i) {
    CreateCronJob(Cat("c", i), "0 * * * *");
  }
  RunUntil("2024-05-01T11:00:00.1Z");
  ASSERT_EQ(JobsOf("c7").size(), 1u);
  const uint64_t before = cc_.keys_synced();
  // One Job finishes: its CronJob alone is synced (then once more for its
  // own status write).
  FinishJob(JobsOf("c7")[0], "Complete");
  cc_.Sync();
  EXPECT_EQ(cc_.keys_synced(), before + 1);
  cc_.Sync();
  cc_.Sync();
  EXPECT_LE(cc_.keys_synced(), before + 3);
  EXPECT_EQ(CronJob("c7")->Find("/status/active"), nullptr);
  EXPECT_NE(CronJob("c8")->Find("/status/active"), nullptr);
}

}  // namespace
}  // namespace kcr::apiserver

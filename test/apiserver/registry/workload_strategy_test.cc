// The workload, policy, autoscaling, storage, scheduling, apiregistration
// and certificates kinds through the registry as requests reach them:
// kube's defaults, the 422 causes kube gives for what users get wrong, the
// objects a cluster starts with, and HorizontalPodAutoscalers read and
// written at autoscaling/v1 and v2 alike.
#include "apiserver/registry/workload_strategy.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/errors/errors.h"
#include "apiserver/registry/workload_validation.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/apiserver/registry_fixture.h"

namespace kcr::apiserver {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// The causes of a 422, as "<field>|<reason>|<message>".
std::vector<std::string> Causes(const absl::Status& s) {
  std::vector<std::string> out;
  std::optional<api::StatusError> e = api::GetStatusError(s);
  if (!e.has_value()) return out;
  EXPECT_EQ(e->code, 422) << s;
  for (const auto& c : e->causes) {
    out.push_back(absl::StrCat(c.field, "|", c.reason, "|", c.message));
  }
  return out;
}

std::string Template(const std::string& labels,
                     const std::string& restart = "") {
  return absl::StrCat(R"("template":{"metadata":{"labels":)", labels,
                      R"(},"spec":{)", restart,
                      R"("containers":[{"name":"c","image":"busybox"}]}})");
}

class WorkloadStrategyTest : public RegistryFixture {
 protected:
  absl::StatusOr<WriteResult> Create(const std::string& group,
                                     const std::string& version,
                                     const std::string& plural,
                                     const std::string& json,
                                     const std::string& ns = "default") {
    ResourceInfoPtr r = Resource(group, version, plural);
    held_.push_back(r);
    return registry_.Create(*r, r->namespaced() ? ns : "", FromJson(json));
  }

  std::vector<ResourceInfoPtr> held_;
};

TEST_F(WorkloadStrategyTest, StatefulSetDefaultsAndSelectorRules) {
  auto created = Create(
      "apps", "v1", "statefulsets",
      absl::StrCat(R"({"metadata":{"name":"db"},"spec":{"serviceName":"db",)",
                   R"("selector":{"matchLabels":{"app":"db"}},)",
                   Template(R"({"app":"db"})"), "}}"));
  ASSERT_TRUE(created.ok()) << created.status();
  const std::string json = created->object->ToJson();
  EXPECT_THAT(json, HasSubstr(R"("replicas":1)"));
  EXPECT_THAT(json, HasSubstr(R"("podManagementPolicy":"OrderedReady")"));
  EXPECT_THAT(json, HasSubstr(R"("updateStrategy":{"type":"RollingUpdate",)"
                              R"("rollingUpdate":{"partition":0}})"));
  EXPECT_THAT(json,
              HasSubstr(R"("status":{"replicas":0,"availableReplicas":0})"));
  EXPECT_EQ(created->object->generation(), 1);

  auto bad = Create("apps", "v1", "statefulsets",
                    absl::StrCat(R"({"metadata":{"name":"x"},"spec":{)",
                                 R"("selector":{"matchLabels":{"app":"db"}},)",
                                 Template(R"({"app":"web"})"), "}}"));
  EXPECT_THAT(Causes(bad.status()),
              ElementsAre(HasSubstr("spec.template.metadata.labels|"
                                    "FieldValueInvalid|Invalid value: "
                                    "map[string]string{\"app\":\"web\"}: "
                                    "`selector` does not match template "
                                    "`labels`")));
  auto empty = Create("apps", "v1", "statefulsets",
                      absl::StrCat(R"({"metadata":{"name":"y"},"spec":{)",
                                   Template(R"({"app":"web"})"), "}}"));
  EXPECT_THAT(Causes(empty.status()),
              Contains(HasSubstr("spec.selector|FieldValueRequired")));
}

TEST_F(WorkloadStrategyTest, DaemonSetNeedsRestartAlways) {
  auto bad = Create(
      "apps", "v1", "daemonsets",
      absl::StrCat(R"({"metadata":{"name":"agent"},"spec":{)",
                   R"("selector":{"matchLabels":{"app":"a"}},)",
                   Template(R"({"app":"a"})", R"("restartPolicy":"Never",)"),
                   "}}"));
  EXPECT_THAT(Causes(bad.status()),
              ElementsAre("spec.template.spec.restartPolicy|"
                          "FieldValueNotSupported|Unsupported value: "
                          "\"Never\": supported values: \"Always\""));
}

// kube's daemonset strategy keeps the template's generation, shown in
// apps/v1 as an annotation: 1 on create, one more per template change.
TEST_F(WorkloadStrategyTest, DaemonSetTemplateGenerationAnnotation) {
  auto created =
      Create("apps", "v1", "daemonsets",
             absl::StrCat(R"({"metadata":{"name":"agent"},"spec":{)",
                          R"("selector":{"matchLabels":{"app":"a"}},)",
                          Template(R"({"app":"a"})"), "}}"));
  ASSERT_TRUE(created.ok()) << created.status();
  const char kKey[] = "deprecated.daemonset.template.generation";
  EXPECT_EQ(created->object->Annotation(kKey), "1");
  ResourceInfoPtr r = Resource("apps", "v1", "daemonsets");
  // A change outside the template keeps it.
  api::ObjectBuilder b = created->object->ToBuilder();
  ASSERT_TRUE(b.SetInt("/spec/minReadySeconds", 5).ok());
  auto updated = registry_.Update(*r, "default", "agent", std::move(b));
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ(updated->object->Annotation(kKey), "1");
  EXPECT_EQ(updated->object->generation(), 2);
  // A template change bumps it.
  b = updated->object->ToBuilder();
  ASSERT_TRUE(
      b.SetString("/spec/template/spec/containers/0/image", "busybox:2").ok());
  updated = registry_.Update(*r, "default", "agent", std::move(b));
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ(updated->object->Annotation(kKey), "2");
  EXPECT_EQ(updated->object->generation(), 3);
}

TEST_F(WorkloadStrategyTest, ReplicationControllerSelectorFromTemplate) {
  auto created =
      Create("", "v1", "replicationcontrollers",
             absl::StrCat(R"({"metadata":{"name":"rc"},"spec":{"replicas":2,)",
                          Template(R"({"app":"rc"})"), "}}"));
  ASSERT_TRUE(created.ok()) << created.status();
  const std::string json = created->object->ToJson();
  EXPECT_THAT(json, HasSubstr(R"("selector":{"app":"rc"})"));
  EXPECT_THAT(json, HasSubstr(R"("labels":{"app":"rc"})"));

  auto bad = Create("", "v1", "replicationcontrollers",
                    absl::StrCat(R"({"metadata":{"name":"rc2"},"spec":{)",
                                 R"("selector":{"app":"other"},)",
                                 Template(R"({"app":"rc"})"), "}}"));
  EXPECT_THAT(Causes(bad.status()),
              ElementsAre(HasSubstr("spec.template.metadata.labels|"
                                    "FieldValueInvalid")));
}

TEST_F(WorkloadStrategyTest, JobSelectorIsGeneratedAndTemplateImmutable) {
  auto created =
      Create("batch", "v1", "jobs",
             absl::StrCat(R"({"metadata":{"name":"pi"},"spec":{)",
                          Template("{}", R"("restartPolicy":"Never",)"), "}}"));
  ASSERT_TRUE(created.ok()) << created.status();
  const std::string uid(created->object->uid());
  const std::string json = created->object->ToJson();
  EXPECT_THAT(
      json, HasSubstr(absl::StrCat(R"("selector":{"matchLabels":{)"
                                   R"("batch.kubernetes.io/controller-uid":")",
                                   uid, R"("}})")));
  EXPECT_THAT(json, HasSubstr(R"("job-name":"pi")"));
  EXPECT_THAT(json, HasSubstr(R"("completions":1,"parallelism":1,)"
                              R"("backoffLimit":6,)"
                              R"("completionMode":"NonIndexed",)"
                              R"("suspend":false)"));

  // kube refuses a template change of a running Job.
  api::ObjectBuilder changed = created->object->ToBuilder();
  ASSERT_TRUE(
      changed.SetString("/spec/template/spec/containers/0/image", "busybox:2")
          .ok());
  ResourceInfoPtr jobs = Resource("batch", "v1", "jobs");
  auto updated = registry_.Update(*jobs, "default", "pi", std::move(changed));
  EXPECT_THAT(Causes(updated.status()),
              ElementsAre(AllOf(StartsWith("spec.template|FieldValueInvalid|"
                                           "Invalid value: {"),
                                HasSubstr("busybox:2"),
                                EndsWith("}: field is immutable"))));

  // Pods that restart Always are not a Job's.
  auto always = Create("batch", "v1", "jobs",
                       absl::StrCat(R"({"metadata":{"name":"p2"},"spec":{)",
                                    Template("{}"), "}}"));
  EXPECT_THAT(Causes(always.status()),
              ElementsAre("spec.template.spec.restartPolicy|"
                          "FieldValueNotSupported|Unsupported value: "
                          "\"Always\": supported values: \"OnFailure\", "
                          "\"Never\""));
}

TEST_F(WorkloadStrategyTest, CronJobScheduleThatDoesNotParseIs422) {
  const auto cron = [](const std::string& name, const std::string& schedule) {
    return absl::StrCat(
        R"({"metadata":{"name":")", name, R"("},"spec":{"schedule":")",
        schedule, R"(","jobTemplate":{"spec":{)",
        Template("{}", R"("restartPolicy":"OnFailure",)"), "}}}}");
  };
  auto ok =
      Create("batch", "v1", "cronjobs", cron("hourly", "*/5 1-3 * * mon-fri"));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_THAT(ok->object->ToJson(),
              HasSubstr(R"("concurrencyPolicy":"Allow","suspend":false,)"
                        R"("successfulJobsHistoryLimit":3,)"
                        R"("failedJobsHistoryLimit":1)"));
  auto bad = Create("batch", "v1", "cronjobs", cron("bad", "every minute"));
  EXPECT_THAT(Causes(bad.status()),
              ElementsAre("spec.schedule|FieldValueInvalid|Invalid value: "
                          "\"every minute\": expected exactly 5 fields, "
                          "found 2: [every minute]"));
  auto range = Create("batch", "v1", "cronjobs", cron("range", "61 * * * *"));
  EXPECT_THAT(Causes(range.status()),
              ElementsAre(HasSubstr("end of range (61) above maximum (59): "
                                    "61")));
  auto missing = Create("batch", "v1", "cronjobs", cron("none", ""));
  EXPECT_THAT(Causes(missing.status()),
              ElementsAre("spec.schedule|FieldValueRequired|Required value"));
  // A zone prefix parses, but belongs in spec.timeZone.
  auto tz = Create("batch", "v1", "cronjobs", cron("tz", "TZ=UTC 0 * * * *"));
  EXPECT_THAT(Causes(tz.status()),
              ElementsAre("spec.schedule|FieldValueInvalid|Invalid value: "
                          "\"TZ=UTC 0 * * * *\": cannot use TZ or CRON_TZ in "
                          "schedule, use timeZone field instead"));
  std::string zoned = cron("zoned", "0 * * * *");
  zoned.insert(zoned.find(R"("schedule")"), R"("timeZone":"Mars/Olympus",)");
  auto mars = Create("batch", "v1", "cronjobs", zoned);
  EXPECT_THAT(Causes(mars.status()),
              ElementsAre("spec.timeZone|FieldValueInvalid|Invalid value: "
                          "\"Mars/Olympus\": unknown time zone Mars/Olympus"));
}

TEST(CronScheduleErrorTest, ParsesAsRobfigCron) {
  for (const char* good :
       {"* * * * *", "0 0 1 1 *", "@hourly", "@every 1h30m", "0,30 * * * ?",
        "5/15 * * * *", "0 12 * JAN-MAR SUN", "  0 0 * * 6  "}) {
    EXPECT_EQ(CronScheduleError(good), "") << good;
  }
  EXPECT_EQ(CronScheduleError("@often"), "unrecognized descriptor: @often");
  EXPECT_EQ(CronScheduleError("@every forever"),
            "failed to parse duration @every forever: time: invalid duration "
            "\"forever\"");
  EXPECT_EQ(CronScheduleError("x * * * *"),
            "failed to parse int from x: strconv.Atoi: parsing \"x\": invalid "
            "syntax");
  EXPECT_EQ(CronScheduleError("* * 0 * *"),
            "beginning of range (0) below minimum (1): 0");
  EXPECT_EQ(CronScheduleError("5-1 * * * *"),
            "beginning of range (5) beyond end of range (1): 5-1");
  EXPECT_EQ(CronScheduleError("*/0 * * * *"),
            "step of range should be a positive number: */0");
  EXPECT_EQ(CronScheduleError("1-2-3 * * * *"), "too many hyphens: 1-2-3");
  EXPECT_EQ(CronScheduleError("1/2/3 * * * *"), "too many slashes: 1/2/3");
  EXPECT_EQ(CronScheduleError(""), "empty spec string");
}

TEST_F(WorkloadStrategyTest, PodDisruptionBudgetRules) {
  auto ok = Create("policy", "v1", "poddisruptionbudgets",
                   R"({"metadata":{"name":"p"},"spec":{"minAvailable":"50%",)"
                   R"("selector":{"matchLabels":{"app":"x"}}}})");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_THAT(ok->object->ToJson(), HasSubstr(R"("disruptionsAllowed":0)"));
  auto both = Create("policy", "v1", "poddisruptionbudgets",
                     R"({"metadata":{"name":"b"},"spec":{"minAvailable":1,)"
                     R"("maxUnavailable":"120%"}})");
  EXPECT_THAT(
      Causes(both.status()),
      ElementsAre(HasSubstr("spec|FieldValueInvalid|Invalid value: "
                            "policy.PodDisruptionBudgetSpec{...}: minAvailable "
                            "and maxUnavailable cannot be both set"),
                  HasSubstr("spec.maxUnavailable|FieldValueInvalid|Invalid "
                            "value: \"120%\": must not be greater than "
                            "100%")));
}

TEST_F(WorkloadStrategyTest, PersistentVolumeClaimRequiredFields) {
  auto bad = Create("", "v1", "persistentvolumeclaims",
                    R"({"metadata":{"name":"data"},"spec":{}})");
  EXPECT_THAT(Causes(bad.status()),
              ElementsAre("spec.accessModes|FieldValueRequired|Required "
                          "value: at least 1 access mode is required",
                          "spec.resources[storage]|FieldValueRequired|"
                          "Required value"));
  auto ok = Create("", "v1", "persistentvolumeclaims",
                   R"({"metadata":{"name":"data"},"spec":{)"
                   R"("accessModes":["ReadWriteOnce"],)"
                   R"("resources":{"requests":{"storage":"1Gi"}}}})");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_THAT(ok->object->ToJson(), HasSubstr(R"("volumeMode":"Filesystem")"));
  EXPECT_THAT(ok->object->ToJson(),
              HasSubstr(R"("status":{"phase":"Pending"})"));
}

TEST_F(WorkloadStrategyTest, HorizontalPodAutoscalerAtBothVersions) {
  auto created =
      Create("autoscaling", "v1", "horizontalpodautoscalers",
             R"({"metadata":{"name":"web"},"spec":{"scaleTargetRef":)"
             R"({"apiVersion":"apps/v1","kind":"Deployment","name":"web"},)"
             R"("maxReplicas":5,"targetCPUUtilizationPercentage":60}})");
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(created->object->api_version(), "autoscaling/v1");
  EXPECT_THAT(created->object->ToJson(),
              HasSubstr(R"("targetCPUUtilizationPercentage":60)"));

  ResourceInfoPtr v2 =
      Resource("autoscaling", "v2", "horizontalpodautoscalers");
  auto read = registry_.Get(*v2, "default", "web");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ((*read)->api_version(), "autoscaling/v2");
  EXPECT_THAT((*read)->ToJson(),
              HasSubstr(R"("metrics":[{"type":"Resource","resource":)"
                        R"({"name":"cpu","target":{"type":"Utilization",)"
                        R"("averageUtilization":60}}}])"));
  EXPECT_THAT((*read)->ToJson(), HasSubstr(R"("minReplicas":1)"));

  // A v2 object with a metric v1 cannot show keeps it through v1.
  auto memory =
      Create("autoscaling", "v2", "horizontalpodautoscalers",
             R"({"metadata":{"name":"mem"},"spec":{"scaleTargetRef":)"
             R"({"kind":"Deployment","name":"web"},"maxReplicas":3,"metrics":[)"
             R"({"type":"Resource","resource":{"name":"memory","target":)"
             R"({"type":"AverageValue","averageValue":"1Gi"}}}]}})");
  ASSERT_TRUE(memory.ok()) << memory.status();
  ResourceInfoPtr v1 =
      Resource("autoscaling", "v1", "horizontalpodautoscalers");
  auto as_v1 = registry_.Get(*v1, "default", "mem");
  ASSERT_TRUE(as_v1.ok());
  EXPECT_THAT((*as_v1)->ToJson(), Not(HasSubstr(R"("metrics")")));
  auto again = registry_.Update(*v1, "default", "mem", (*as_v1)->ToBuilder());
  ASSERT_TRUE(again.ok()) << again.status();
  auto back = registry_.Get(*v2, "default", "mem");
  ASSERT_TRUE(back.ok());
  EXPECT_THAT((*back)->ToJson(), HasSubstr(R"("averageValue":"1Gi")"));
  EXPECT_THAT((*back)->ToJson(), Not(HasSubstr("autoscaling.alpha")));

  auto bad = Create("autoscaling", "v2", "horizontalpodautoscalers",
                    R"({"metadata":{"name":"bad"},"spec":{"scaleTargetRef":)"
                    R"({"name":"web"},"minReplicas":4,"maxReplicas":2}})");
  EXPECT_THAT(Causes(bad.status()),
              ElementsAre("spec.scaleTargetRef.kind|FieldValueRequired|"
                          "Required value",
                          "spec.maxReplicas|FieldValueInvalid|Invalid value: "
                          "2: must be greater than or equal to "
                          "`minReplicas`"));
}

TEST_F(WorkloadStrategyTest, ClusterStartsWithPriorityClassesAndAPIServices) {
  ResourceInfoPtr pcs = Resource("scheduling.k8s.io", "v1", "priorityclasses");
  auto critical = registry_.Get(*pcs, "", "system-node-critical");
  ASSERT_TRUE(critical.ok()) << critical.status();
  EXPECT_THAT((*critical)->ToJson(), HasSubstr(R"("value":2000001000)"));
  EXPECT_THAT((*critical)->ToJson(),
              HasSubstr(R"("preemptionPolicy":"PreemptLowerPriority")"));
  auto reserved = Create("scheduling.k8s.io", "v1", "priorityclasses",
                         R"({"metadata":{"name":"system-mine"},"value":1})");
  EXPECT_THAT(Causes(reserved.status()),
              ElementsAre(HasSubstr("metadata.name|FieldValueForbidden")));

  ResourceInfoPtr services =
      Resource("apiregistration.k8s.io", "v1", "apiservices");
  for (const char* name : {"v1.", "v1.apps", "v1.batch", "v2.autoscaling",
                           "v1.autoscaling", "v1.apiregistration.k8s.io"}) {
    auto s = registry_.Get(*services, "", name);
    ASSERT_TRUE(s.ok()) << name << " " << s.status();
    EXPECT_THAT((*s)->ToJson(),
                HasSubstr(R"("type":"Available","status":"True")"));
  }
}

TEST_F(WorkloadStrategyTest, CertificateSigningRequestApprovalWritesStatus) {
  auto created =
      Create("certificates.k8s.io", "v1", "certificatesigningrequests",
             R"({"metadata":{"name":"csr"},"spec":{"request":"LS0t",)"
             R"("signerName":"example.com/signer","usages":["client auth"]}})");
  ASSERT_TRUE(created.ok()) << created.status();
  ResourceInfoPtr csrs =
      Resource("certificates.k8s.io", "v1", "certificatesigningrequests");
  api::ObjectBuilder b = created->object->ToBuilder();
  ASSERT_TRUE(b.SetJson("/status", R"({"conditions":[{"type":"Approved",)"
                                   R"("status":"True","reason":"OK"}]})")
                  .ok());
  ASSERT_TRUE(b.SetString("/spec/signerName", "changed/too").ok());
  WriteOptions approval;
  approval.subresource = "approval";
  auto approved = registry_.Update(*csrs, "", "csr", std::move(b), approval);
  ASSERT_TRUE(approved.ok()) << approved.status();
  EXPECT_THAT(approved->object->ToJson(), HasSubstr(R"("type":"Approved")"));
  EXPECT_THAT(approved->object->ToJson(),
              HasSubstr(R"("signerName":"example.com/signer")"));
  auto missing =
      Create("certificates.k8s.io", "v1", "certificatesigningrequests",
             R"({"metadata":{"name":"m"},"spec":{}})");
  EXPECT_THAT(Causes(missing.status()),
              ElementsAre("spec.request|FieldValueRequired|Required value",
                          "spec.signerName|FieldValueRequired|Required "
                          "value"));
}

TEST_F(WorkloadStrategyTest, EventsK8sIoEventsAreTheCoreEvents) {
  auto created = Create(
      "events.k8s.io", "v1", "events",
      R"({"metadata":{"name":"e1"},"eventTime":"2026-11-29T08:00:00.000000Z",)"
      R"("reportingController":"example.com/ctl","reportingInstance":"i",)"
      R"("action":"Scale","reason":"Scaled","type":"Normal",)"
      R"("regarding":{"kind":"Deployment","name":"web"},"note":"scaled"})");
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(created->object->api_version(), "events.k8s.io/v1");
  EXPECT_THAT(created->object->ToJson(), HasSubstr(R"("note":"scaled")"));

  ResourceInfoPtr core = Resource("", "v1", "events");
  auto as_core = registry_.Get(*core, "default", "e1");
  ASSERT_TRUE(as_core.ok()) << as_core.status();
  EXPECT_EQ((*as_core)->api_version(), "v1");
  EXPECT_THAT((*as_core)->ToJson(), HasSubstr(R"("message":"scaled")"));
  EXPECT_THAT((*as_core)->ToJson(),
              HasSubstr(R"("involvedObject":{"kind":"Deployment")"));
  EXPECT_THAT((*as_core)->ToJson(),
              HasSubstr(R"("reportingComponent":"example.com/ctl")"));

  auto from_core = registry_.Create(
      *core, "default",
      FromJson(R"({"metadata":{"name":"e2"},"involvedObject":{"kind":"Pod",)"
               R"("name":"p"},"reason":"Started","message":"hi","count":3,)"
               R"("type":"Normal"})"));
  ASSERT_TRUE(from_core.ok()) << from_core.status();
  ResourceInfoPtr events = Resource("events.k8s.io", "v1", "events");
  auto list = registry_.List(*events, "default", ListOptions());
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->items.size(), 2u);
  EXPECT_EQ(list->items[1]->api_version(), "events.k8s.io/v1");
  EXPECT_THAT(list->items[1]->ToJson(), HasSubstr(R"("deprecatedCount":3)"));
  EXPECT_THAT(list->items[1]->ToJson(), HasSubstr(R"("note":"hi")"));
}

}  // namespace
}  // namespace kcr::apiserver

// The copyrator controller as users run it, with the tutorial's sample
// rule (manifests/samples/copyrator_rule.yaml, applied as is): copies
// follow their source's data and labels, reach a namespace created later,
// and go when the source or the rule goes; a foreign object at a target
// name is left alone and reported; a Secret rule copies Secrets without
// their data reaching the manager's log.
#include <algorithm>
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/e2e/manager_fixture.h"

namespace kcr::e2e {
namespace {

using apiserver::WaitFor;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kSampleRule[] = "manifests/samples/copyrator_rule.yaml";

class CopyratorE2eTest : public ManagerFixture {
 protected:
  void SetUp() override {
    ManagerFixture::SetUp();
    ASSERT_NO_FATAL_FAILURE(StartServerWithCrds("copyrator"));
    mgr_ = StartManager({"--controllers=copyrator"});
    ASSERT_TRUE(mgr_->started());
    ASSERT_TRUE(WaitFor([&] {
      return mgr_->CountLogLines("controller=copyrator") > 0;
    })) << mgr_->Log();
  }

  void Namespace(const std::string& name) {
    Kubectl({"create", "namespace", name});
  }

  // How many namespaces there are besides the source's, as a string.
  std::string OtherNamespaces() {
    const std::string names = Kubectl({"get", "namespaces", "-o", "name"});
    return std::to_string(std::count(names.begin(), names.end(), '\n') - 1);
  }

  ManagerProcess* mgr_ = nullptr;
};

constexpr char kSource[] = R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: app-config
  namespace: default
  labels:
    copyrator: "true"
data:
  greeting: hello
)";

TEST_F(CopyratorE2eTest, CopiesFollowTheSourceAndTheRule) {
  Namespace("team-a");
  ASSERT_TRUE(Apply(kSource));
  Kubectl({"apply", "-f", kSampleRule});

  EXPECT_TRUE(WaitForJsonpath({"configmap", "app-config", "-n", "team-a"},
                              "{.data.greeting}", "hello"))
      << last_jsonpath_ << mgr_->Log();
  EXPECT_EQ(Jsonpath({"configmap", "app-config", "-n", "team-a"},
                     "{.metadata.annotations.copyrator\\.flant\\.com/source}"),
            "default/app-config");
  EXPECT_EQ(Jsonpath({"configmap", "app-config", "-n", "team-a"},
                     "{.metadata.annotations.copyrator\\.flant\\.com/rule}"),
            "default/main-rule");
  EXPECT_EQ(Jsonpath({"configmap", "app-config", "-n", "team-a"},
                     "{.metadata.labels.copyrator\\.flant\\.com/rule}"),
            "default.main-rule");
  EXPECT_TRUE(WaitForJsonpath(
      {"copyrator", "main-rule"},
      "{.status.conditions[?(@.type==\"Ready\")].status}", "True"))
      << last_jsonpath_;
  EXPECT_EQ(Jsonpath({"copyrator", "main-rule"}, "{.metadata.finalizers[0]}"),
            "copyrator.flant.com/finalizer");
  // Never onto itself: the source stays the only one in its namespace.
  EXPECT_EQ(Jsonpath({"configmap", "app-config"},
                     "{.metadata.annotations.copyrator\\.flant\\.com/rule}"),
            "");

  // A change of data and of labels reaches the copy.
  Kubectl(
      {"patch", "configmap", "app-config", "--type=merge", "-p",
       R"({"data":{"greeting":"bonjour"},"metadata":{"labels":{"tier":"web"}}})"});
  EXPECT_TRUE(WaitForJsonpath({"configmap", "app-config", "-n", "team-a"},
                              "{.data.greeting}", "bonjour"))
      << last_jsonpath_;
  EXPECT_TRUE(WaitForJsonpath({"configmap", "app-config", "-n", "team-a"},
                              "{.metadata.labels.tier}", "web"))
      << last_jsonpath_;

  // A namespace created later gets a copy.
  Namespace("team-b");
  EXPECT_TRUE(WaitForJsonpath({"configmap", "app-config", "-n", "team-b"},
                              "{.data.greeting}", "bonjour"))
      << last_jsonpath_;
  // One copy in every namespace but the source's.
  EXPECT_TRUE(WaitForJsonpath({"copyrator", "main-rule"}, "{.status.copies}",
                              OtherNamespaces()))
      << last_jsonpath_;

  // The source deleted: its copies go.
  Kubectl({"delete", "configmap", "app-config"});
  EXPECT_TRUE(WaitForGone({"configmap", "app-config", "-n", "team-a"}));
  EXPECT_TRUE(WaitForGone({"configmap", "app-config", "-n", "team-b"}));
  EXPECT_TRUE(
      WaitForJsonpath({"copyrator", "main-rule"}, "{.status.copies}", "0"))
      << last_jsonpath_;

  // Back, then the rule deleted: the copies go, then the rule.
  ASSERT_TRUE(Apply(kSource));
  EXPECT_TRUE(WaitForJsonpath({"configmap", "app-config", "-n", "team-b"},
                              "{.data.greeting}", "hello"))
      << last_jsonpath_;
  Kubectl({"delete", "copyrator", "main-rule", "--wait=false"});
  EXPECT_TRUE(WaitForGone({"configmap", "app-config", "-n", "team-a"}));
  EXPECT_TRUE(WaitForGone({"configmap", "app-config", "-n", "team-b"}));
  EXPECT_TRUE(WaitForGone({"copyrator", "main-rule"}));
  // The source itself is untouched.
  EXPECT_EQ(Jsonpath({"configmap", "app-config"}, "{.data.greeting}"), "hello");
}

TEST_F(CopyratorE2eTest, LeavesAForeignObjectAloneAndReportsIt) {
  Namespace("team-a");
  Namespace("team-b");
  ASSERT_TRUE(Apply(R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: app-config
  namespace: team-a
data:
  greeting: mine
)"));
  ASSERT_TRUE(Apply(kSource));
  Kubectl({"apply", "-f", kSampleRule});

  EXPECT_TRUE(WaitForJsonpath({"configmap", "app-config", "-n", "team-b"},
                              "{.data.greeting}", "hello"))
      << last_jsonpath_;
  EXPECT_TRUE(WaitForJsonpath(
      {"copyrator", "main-rule"},
      "{.status.conditions[?(@.type==\"Ready\")].reason}", "Conflict"))
      << last_jsonpath_;
  EXPECT_THAT(Jsonpath({"copyrator", "main-rule"},
                       "{.status.conditions[?(@.type==\"Ready\")].message}")
                  .value_or(""),
              HasSubstr("team-a/app-config (exists and is not a copy"));
  EXPECT_TRUE(WaitFor([&] {
    return absl::StrContains(
        Kubectl({"get", "events", "--field-selector",
                 "involvedObject.name=main-rule,type=Warning", "-o",
                 "jsonpath={.items[*].reason}"}),
        "Conflict");
  }));
  // Counted once: a standing conflict is not reported again.
  const std::string metrics = mgr_->MetricsUrl();
  ASSERT_FALSE(metrics.empty()) << mgr_->Out();
  EXPECT_TRUE(WaitFor([&] {
    return absl::StrContains(
        ManagerProcess::HttpGet(metrics, "/metrics"),
        "kcr_copyrator_warnings_total{reason=\"Conflict\"} 1\n");
  })) << ManagerProcess::HttpGet(metrics, "/metrics");
  EXPECT_EQ(
      Jsonpath({"configmap", "app-config", "-n", "team-a"}, "{.data.greeting}"),
      "mine");
  EXPECT_EQ(Jsonpath({"configmap", "app-config", "-n", "team-a"},
                     "{.metadata.annotations.copyrator\\.flant\\.com/rule}"),
            "");

  // Deleting the rule removes its copies only.
  Kubectl({"delete", "copyrator", "main-rule", "--wait=false"});
  EXPECT_TRUE(WaitForGone({"configmap", "app-config", "-n", "team-b"}));
  EXPECT_TRUE(WaitForGone({"copyrator", "main-rule"}));
  EXPECT_EQ(
      Jsonpath({"configmap", "app-config", "-n", "team-a"}, "{.data.greeting}"),
      "mine");
}

TEST_F(CopyratorE2eTest, CopiesSecretsWithoutLoggingTheirData) {
  Namespace("team-a");
  ASSERT_TRUE(Apply(R"(apiVersion: v1
kind: Secret
metadata:
  name: db-password
  namespace: default
  labels:
    share: "yes"
stringData:
  password: hunter2-very-secret
)"));
  ASSERT_TRUE(Apply(R"(apiVersion: flant.com/v1
kind: CopyratorRule
metadata:
  name: secret-rule
ruleType: secret
selector:
  share: "yes"
namespace: default
)"));
  const std::string data =
      Jsonpath({"secret", "db-password"}, "{.data.password}").value_or("");
  ASSERT_FALSE(data.empty());
  EXPECT_TRUE(WaitForJsonpath({"secret", "db-password", "-n", "team-a"},
                              "{.data.password}", data))
      << last_jsonpath_ << mgr_->Log();
  EXPECT_TRUE(WaitForJsonpath({"copyrator", "secret-rule"}, "{.status.copies}",
                              OtherNamespaces()))
      << last_jsonpath_;
  EXPECT_TRUE(WaitFor([&] {
    return mgr_->CountLogLines(
               "created copy kind=Secret "
               "target=team-a/db-password") == 1;
  })) << mgr_->Log();

  Kubectl({"delete", "copyrator", "secret-rule", "--wait=false"});
  EXPECT_TRUE(WaitForGone({"secret", "db-password", "-n", "team-a"}));
  EXPECT_TRUE(WaitForGone({"copyrator", "secret-rule"}));
  EXPECT_THAT(mgr_->Log(), Not(HasSubstr("hunter2-very-secret")));
  EXPECT_THAT(mgr_->Log(), Not(HasSubstr(data)));
}

TEST_F(CopyratorE2eTest, TwoRulesForOneTargetAreReportedNotFoughtOver) {
  Namespace("team-a");
  ASSERT_TRUE(Apply(kSource));
  Kubectl({"apply", "-f", kSampleRule});
  EXPECT_TRUE(WaitForJsonpath({"configmap", "app-config", "-n", "team-a"},
                              "{.data.greeting}", "hello"))
      << last_jsonpath_;
  ASSERT_TRUE(Apply(R"(apiVersion: flant.com/v1
kind: CopyratorRule
metadata:
  name: second-rule
ruleType: configmap
selector: "copyrator=true"
namespace: [default]
)"));
  EXPECT_TRUE(WaitForJsonpath(
      {"copyrator", "second-rule"},
      "{.status.conditions[?(@.type==\"Ready\")].reason}", "Conflict"))
      << last_jsonpath_;
  EXPECT_THAT(Jsonpath({"copyrator", "second-rule"},
                       "{.status.conditions[?(@.type==\"Ready\")].message}")
                  .value_or(""),
              HasSubstr("is a copy made by rule default/main-rule"));
  EXPECT_EQ(Jsonpath({"configmap", "app-config", "-n", "team-a"},
                     "{.metadata.annotations.copyrator\\.flant\\.com/rule}"),
            "default/main-rule");
  EXPECT_EQ(Jsonpath({"copyrator", "second-rule"}, "{.status.copies}"), "0");

  // The first rule gone, the second takes the targets over.
  Kubectl({"delete", "copyrator", "main-rule", "--wait=false"});
  EXPECT_TRUE(
      WaitForJsonpath({"configmap", "app-config", "-n", "team-a"},
                      "{.metadata.annotations.copyrator\\.flant\\.com/rule}",
                      "default/second-rule"))
      << last_jsonpath_;
  EXPECT_TRUE(WaitForJsonpath(
      {"copyrator", "second-rule"},
      "{.status.conditions[?(@.type==\"Ready\")].status}", "True"))
      << last_jsonpath_;
}

TEST_F(CopyratorE2eTest, ARuleTheSchemaRejectsChangesNothing) {
  Namespace("team-a");
  ASSERT_TRUE(Apply(kSource));
  Kubectl({"apply", "-f", kSampleRule});
  EXPECT_TRUE(WaitForJsonpath({"configmap", "app-config", "-n", "team-a"},
                              "{.data.greeting}", "hello"))
      << last_jsonpath_;
  const std::string copy_version =
      Jsonpath({"configmap", "app-config", "-n", "team-a"},
               "{.metadata.resourceVersion}")
          .value_or("");

  // An edit of the rule to a ruleType the CRD's schema does not allow.
  integration::KubectlResult edit = kubectl_->Run({"apply", "-f", "-"},
                                                  R"(apiVersion: flant.com/v1
kind: CopyratorRule
metadata:
  name: main-rule
ruleType: configmaps
selector:
  copyrator: "true"
namespace: default
)");
  EXPECT_NE(edit.exit_code, 0) << edit.out;
  EXPECT_THAT(edit.err, HasSubstr("ruleType"));
  EXPECT_THAT(edit.err, HasSubstr("supported values"));
  EXPECT_THAT(edit.err, HasSubstr("\"configmap\", \"secret\""));
  // And a new rule with one: neither is stored.
  integration::KubectlResult create = kubectl_->Run({"apply", "-f", "-"},
                                                    R"(apiVersion: flant.com/v1
kind: CopyratorRule
metadata:
  name: typo-rule
ruleType: Secret
selector:
  copyrator: "true"
)");
  EXPECT_NE(create.exit_code, 0) << create.out;
  EXPECT_THAT(create.err, HasSubstr("ruleType"));
  EXPECT_EQ(Jsonpath({"copyrator", "typo-rule"}, "{.metadata.name}"),
            std::nullopt);

  EXPECT_EQ(Jsonpath({"copyrator", "main-rule"}, "{.ruleType}"), "configmap");
  EXPECT_EQ(Jsonpath({"copyrator", "main-rule"}, "{.metadata.generation}"),
            "1");
  EXPECT_EQ(Jsonpath({"copyrator", "main-rule"},
                     "{.status.conditions[?(@.type==\"Ready\")].status}"),
            "True");
  EXPECT_EQ(Jsonpath({"configmap", "app-config", "-n", "team-a"},
                     "{.metadata.resourceVersion}"),
            copy_version);
}

}  // namespace
}  // namespace kcr::e2e

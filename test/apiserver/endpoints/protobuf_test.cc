#include "apiserver/endpoints/protobuf.h"

#include <cstdint>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "test/apiserver/protobuf_wire.h"

namespace kcr {
namespace apiserver {
namespace {

using ::testing::HasSubstr;

using testing::Bytes;
using testing::Envelope;
using testing::VarintField;

std::string Envelope(const std::string& kind, const std::string& raw) {
  return Envelope("v1", kind, raw);
}

// Whether two JSON texts are the same value (object members in any order).
::testing::AssertionResult SameJson(const std::string& got,
                                    const std::string& want) {
  rapidjson::Document g, w;
  g.Parse(got.c_str());
  w.Parse(want.c_str());
  if (g.HasParseError() || w.HasParseError()) {
    return ::testing::AssertionFailure() << "not JSON: " << got;
  }
  if (g != w) {
    return ::testing::AssertionFailure() << "got  " << got << "\nwant " << want;
  }
  return ::testing::AssertionSuccess();
}

// What `kubectl create configmap c --from-literal=a=b -n team` sends.
std::string ConfigMap() {
  std::string meta = Bytes(1, "c") + Bytes(3, "team") +
                     Bytes(11, Bytes(1, "app") + Bytes(2, "web"));
  std::string data = Bytes(1, "a") + Bytes(2, "b");
  return Envelope("ConfigMap", Bytes(1, meta) + Bytes(2, data));
}

TEST(ProtobufTest, DecodesConfigMap) {
  auto json = KubernetesProtobufToJson(ConfigMap());
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(
      *json,
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"team","labels":{"app":"web"}},"data":{"a":"b"}})");
}

// A map entry without its key or value is the empty string, as in Go. It
// once reached RapidJSON as a null pointer and aborted the server.
TEST(ProtobufTest, MapEntryWithoutKeyOrValueIsEmpty) {
  std::string meta = Bytes(1, "c") + Bytes(11, "") + Bytes(12, Bytes(1, "k"));
  std::string data = Bytes(2, Bytes(2, "v"));
  auto json =
      KubernetesProtobufToJson(Envelope("ConfigMap", Bytes(1, meta) + data));
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(
      *json,
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"":""},"annotations":{"k":""}},"data":{"":"v"}})");
}

TEST(ProtobufTest, DecodesNamespaceAndSecretBytesAsBase64) {
  auto ns = KubernetesProtobufToJson(
      Envelope("Namespace",
               Bytes(1, Bytes(1, "team")) + Bytes(2, Bytes(1, "kubernetes"))));
  ASSERT_TRUE(ns.ok());
  EXPECT_EQ(
      *ns,
      R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team"},"spec":{"finalizers":["kubernetes"]}})");
  auto secret = KubernetesProtobufToJson(
      Envelope("Secret", Bytes(1, Bytes(1, "s")) +
                             Bytes(2, Bytes(1, "k") + Bytes(2, "hi")) +
                             Bytes(3, "Opaque")));
  ASSERT_TRUE(secret.ok());
  EXPECT_THAT(*secret, HasSubstr(R"("data":{"k":"aGk="})"));
  EXPECT_THAT(*secret, HasSubstr(R"("type":"Opaque")"));
}

TEST(ProtobufTest, OtherKindsAreUnimplemented) {
  auto r = KubernetesProtobufToJson(
      Envelope("apps/v1", "StatefulSet", Bytes(1, Bytes(1, "s"))));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(r.status().message(), HasSubstr("apps/v1 StatefulSet"));
  // The kind alone does not decide: Deployment is apps/v1.
  r = KubernetesProtobufToJson(Envelope("Deployment", Bytes(1, Bytes(1, "d"))));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
}

// What `kubectl create job --from=cronjob/x` sends: the CronJob's defaulted
// job template, whose pod spec carries `securityContext: {}`.
TEST(ProtobufTest, DecodesJobAndCronJob) {
  const std::string pod_spec = Bytes(2, Bytes(1, "c") + Bytes(2, "busybox")) +
                               Bytes(3, "Never") + Bytes(14, "");
  const std::string job_spec = VarintField(1, 1) + VarintField(7, 6) +
                               Bytes(6, Bytes(2, pod_spec)) +
                               Bytes(9, "NonIndexed") + VarintField(10, 0);
  auto job = KubernetesProtobufToJson(Envelope(
      "batch/v1", "Job",
      Bytes(1, Bytes(1, "manual")) + Bytes(2, job_spec) + Bytes(3, "")));
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_THAT(*job,
              HasSubstr(R"("spec":{"parallelism":1,"backoffLimit":6,)"
                        R"("template":{"spec":{"containers":[{"name":"c",)"
                        R"("image":"busybox"}],"restartPolicy":"Never",)"
                        R"("securityContext":{}}},)"
                        R"("completionMode":"NonIndexed",)"
                        R"("suspend":false},"status":{})"));
  auto cron = KubernetesProtobufToJson(Envelope(
      "batch/v1", "CronJob",
      Bytes(1, Bytes(1, "nightly")) +
          Bytes(2, Bytes(1, "0 3 * * *") + Bytes(5, Bytes(2, job_spec)))));
  ASSERT_TRUE(cron.ok()) << cron.status();
  EXPECT_THAT(*cron, HasSubstr(R"("spec":{"schedule":"0 3 * * *",)"
                               R"("jobTemplate":{"spec":{"parallelism":1,)"));
}

// The bytes kubectl 1.32 sends for
// `kubectl create deployment web --image=nginx:1.7.9 --replicas=2 --port=80`:
// every non-pointer field is written, empty or not.
const std::string kKubectlCreateDeployment(
    "\x6b\x38\x73\x00\x0a\x15\x0a\x07\x61\x70\x70\x73\x2f\x76\x31\x12"
    "\x0a\x44\x65\x70\x6c\x6f\x79\x6d\x65\x6e\x74\x12\xbe\x01\x0a\x1f"
    "\x0a\x03\x77\x65\x62\x12\x00\x1a\x00\x22\x00\x2a\x00\x32\x00\x38"
    "\x00\x42\x00\x5a\x0a\x0a\x03\x61\x70\x70\x12\x03\x77\x65\x62\x12"
    "\x8c\x01\x08\x02\x12\x0c\x0a\x0a\x0a\x03\x61\x70\x70\x12\x03\x77"
    "\x65\x62\x1a\x72\x0a\x1c\x0a\x00\x12\x00\x1a\x00\x22\x00\x2a\x00"
    "\x32\x00\x38\x00\x42\x00\x5a\x0a\x0a\x03\x61\x70\x70\x12\x03\x77"
    "\x65\x62\x12\x52\x12\x34\x0a\x05\x6e\x67\x69\x6e\x78\x12\x0b\x6e"
    "\x67\x69\x6e\x78\x3a\x31\x2e\x37\x2e\x39\x2a\x00\x32\x0a\x0a\x00"
    "\x10\x00\x18\x50\x22\x00\x2a\x00\x42\x00\x6a\x00\x72\x00\x80\x01"
    "\x00\x88\x01\x00\x90\x01\x00\xa2\x01\x00\x1a\x00\x32\x00\x42\x00"
    "\x4a\x00\x52\x00\x58\x00\x60\x00\x68\x00\x82\x01\x00\x8a\x01\x00"
    "\x9a\x01\x00\xc2\x01\x00\x22\x02\x0a\x00\x28\x00\x38\x00\x1a\x0c"
    "\x08\x00\x10\x00\x18\x00\x20\x00\x28\x00\x38\x00\x1a\x00\x22\x00",
    224);

// `kubectl create service nodeport np --tcp=80:8080 --node-port=30080`.
const std::string kKubectlCreateServiceNodePort(
    "\x6b\x38\x73\x00\x0a\x0d\x0a\x02\x76\x31\x12\x07\x53\x65\x72\x76"
    "\x69\x63\x65\x12\x67\x0a\x1d\x0a\x02\x6e\x70\x12\x00\x1a\x00\x22"
    "\x00\x2a\x00\x32\x00\x38\x00\x42\x00\x5a\x09\x0a\x03\x61\x70\x70"
    "\x12\x02\x6e\x70\x12\x42\x0a\x1d\x0a\x07\x38\x30\x2d\x38\x30\x38"
    "\x30\x12\x03\x54\x43\x50\x18\x50\x22\x07\x08\x00\x10\x90\x3f\x1a"
    "\x00\x28\x80\xeb\x01\x12\x09\x0a\x03\x61\x70\x70\x12\x02\x6e\x70"
    "\x1a\x00\x22\x08\x4e\x6f\x64\x65\x50\x6f\x72\x74\x3a\x00\x42\x00"
    "\x52\x00\x5a\x00\x60\x00\x68\x00\x1a\x02\x0a\x00\x1a\x00\x22\x00",
    128);

// `kubectl create service loadbalancer lb --tcp=80:http`: a named
// targetPort.
const std::string kKubectlCreateServiceLoadBalancer(
    "\x6b\x38\x73\x00\x0a\x0d\x0a\x02\x76\x31\x12\x07\x53\x65\x72\x76"
    "\x69\x63\x65\x12\x6c\x0a\x1d\x0a\x02\x6c\x62\x12\x00\x1a\x00\x22"
    "\x00\x2a\x00\x32\x00\x38\x00\x42\x00\x5a\x09\x0a\x03\x61\x70\x70"
    "\x12\x02\x6c\x62\x12\x47\x0a\x1e\x0a\x07\x38\x30\x2d\x68\x74\x74"
    "\x70\x12\x03\x54\x43\x50\x18\x50\x22\x0a\x08\x01\x10\x00\x1a\x04"
    "\x68\x74\x74\x70\x28\x00\x12\x09\x0a\x03\x61\x70\x70\x12\x02\x6c"
    "\x62\x1a\x00\x22\x0c\x4c\x6f\x61\x64\x42\x61\x6c\x61\x6e\x63\x65"
    "\x72\x3a\x00\x42\x00\x52\x00\x5a\x00\x60\x00\x68\x00\x1a\x02\x0a"
    "\x00\x1a\x00\x22\x00",
    133);

// Each decodes to the object `kubectl create ... --dry-run=client -o json`
// prints for the same command.
TEST(ProtobufTest, DecodesWhatKubectlCreateDeploymentSends) {
  auto json = KubernetesProtobufToJson(kKubectlCreateDeployment);
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_TRUE(SameJson(*json, R"({"kind":"Deployment","apiVersion":"apps/v1",
      "metadata":{"name":"web","creationTimestamp":null,"labels":{"app":"web"}},
      "spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},
        "template":{"metadata":{"creationTimestamp":null,"labels":{"app":"web"}},
          "spec":{"containers":[{"name":"nginx","image":"nginx:1.7.9",
            "ports":[{"containerPort":80}],"resources":{}}]}},
        "strategy":{}},
      "status":{}})"));
}

TEST(ProtobufTest, DecodesWhatKubectlCreateServiceSends) {
  auto json = KubernetesProtobufToJson(kKubectlCreateServiceNodePort);
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_TRUE(SameJson(*json, R"({"kind":"Service","apiVersion":"v1",
      "metadata":{"name":"np","creationTimestamp":null,"labels":{"app":"np"}},
      "spec":{"ports":[{"name":"80-8080","protocol":"TCP","port":80,
          "targetPort":8080,"nodePort":30080}],
        "selector":{"app":"np"},"type":"NodePort"},
      "status":{"loadBalancer":{}}})"));

  json = KubernetesProtobufToJson(kKubectlCreateServiceLoadBalancer);
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_TRUE(SameJson(*json, R"({"kind":"Service","apiVersion":"v1",
      "metadata":{"name":"lb","creationTimestamp":null,"labels":{"app":"lb"}},
      "spec":{"ports":[{"name":"80-http","protocol":"TCP","port":80,
          "targetPort":"http"}],
        "selector":{"app":"lb"},"type":"LoadBalancer"},
      "status":{"loadBalancer":{}}})"));
}

std::string IntOrStringInt(int32_t v) {
  return VarintField(1, 0) +
         VarintField(2, static_cast<uint64_t>(static_cast<int64_t>(v))) +
         Bytes(3, "");
}
std::string IntOrStringStr(const std::string& s) {
  return VarintField(1, 1) + VarintField(2, 0) + Bytes(3, s);
}

TEST(ProtobufTest, IntOrStringIsANumberOrAString) {
  std::string ports =
      Bytes(1, VarintField(3, 80) + Bytes(4, IntOrStringInt(8080))) +
      Bytes(1, Bytes(1, "web") + VarintField(3, 443) +
                   Bytes(4, IntOrStringStr("https"))) +
      // Go writes a zero IntOrString too: {"targetPort": 0}.
      Bytes(1, VarintField(3, 53) + Bytes(4, ""));
  auto json = KubernetesProtobufToJson(
      Envelope("Service", Bytes(1, Bytes(1, "s")) + Bytes(2, ports)));
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_TRUE(SameJson(*json, R"({"apiVersion":"v1","kind":"Service",
      "metadata":{"name":"s"},
      "spec":{"ports":[{"port":80,"targetPort":8080},
                       {"name":"web","port":443,"targetPort":"https"},
                       {"port":53,"targetPort":0}]}})"));

  // Only types 0 (int) and 1 (string) exist.
  auto bad = KubernetesProtobufToJson(
      Envelope("Service", Bytes(2, Bytes(1, Bytes(4, VarintField(1, 2))))));
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
}

// What `kubectl run` and `--overrides` put in a Pod, hand-encoded.
TEST(ProtobufTest, DecodesPod) {
  std::string quantity_cpu = Bytes(1, "cpu") + Bytes(2, Bytes(1, "250m"));
  std::string quantity_mem = Bytes(1, "memory") + Bytes(2, Bytes(1, "64Mi"));
  std::string container =
      Bytes(1, "nginx") + Bytes(2, "nginx") + Bytes(3, "sh") + Bytes(3, "-c") +
      Bytes(4, "echo hi") + Bytes(5, "/work") +
      Bytes(6, Bytes(1, "http") + VarintField(2, 0) + VarintField(3, 8080) +
                   Bytes(4, "TCP") + Bytes(5, "")) +
      Bytes(7, Bytes(1, "A") + Bytes(2, "B")) +
      Bytes(7, Bytes(1, "EMPTY") + Bytes(2, "")) +
      Bytes(7, Bytes(1, "NODE") +
                   Bytes(3, Bytes(1, Bytes(1, "v1") +
                                         Bytes(2, "spec.nodeName")))) +
      Bytes(7, Bytes(1, "PASSWORD") +
                   Bytes(3, Bytes(4, Bytes(1, Bytes(1, "db")) +
                                         Bytes(2, "password")))) +
      Bytes(8, Bytes(1, quantity_cpu) + Bytes(2, quantity_mem)) +
      Bytes(11, Bytes(1, Bytes(2, Bytes(1, "/healthz") +
                                      Bytes(2, IntOrStringStr("http")))) +
                    VarintField(4, 5)) +
      Bytes(13, "/dev/termination-log") + Bytes(14, "IfNotPresent") +
      VarintField(16, 1) + VarintField(17, 0) + VarintField(18, 1) +
      Bytes(20, "File");
  std::string spec =
      Bytes(2, container) + Bytes(3, "Never") + VarintField(4, 0) +
      Bytes(6, "ClusterFirst") + Bytes(7, Bytes(1, "disk") + Bytes(2, "ssd")) +
      Bytes(8, "builder") + VarintField(11, 0) +
      Bytes(22, Bytes(1, "gpu") + Bytes(2, "Exists") + Bytes(4, "NoSchedule")) +
      // A negative int32 travels sign-extended in ten bytes.
      VarintField(25, static_cast<uint64_t>(int64_t{-5}));
  std::string meta = Bytes(1, "nginx") + Bytes(2, "") + Bytes(8, "") +
                     Bytes(11, Bytes(1, "app") + Bytes(2, "x")) +
                     Bytes(12, Bytes(1, "note") + Bytes(2, "hi"));
  auto json = KubernetesProtobufToJson(
      Envelope("Pod", Bytes(1, meta) + Bytes(2, spec) + Bytes(3, "")));
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_TRUE(SameJson(*json, R"({"apiVersion":"v1","kind":"Pod",
      "metadata":{"name":"nginx","creationTimestamp":null,
        "labels":{"app":"x"},"annotations":{"note":"hi"}},
      "spec":{"containers":[{"name":"nginx","image":"nginx",
          "command":["sh","-c"],"args":["echo hi"],"workingDir":"/work",
          "ports":[{"name":"http","containerPort":8080,"protocol":"TCP"}],
          "env":[{"name":"A","value":"B"},{"name":"EMPTY"},
            {"name":"NODE","valueFrom":{"fieldRef":
              {"apiVersion":"v1","fieldPath":"spec.nodeName"}}},
            {"name":"PASSWORD","valueFrom":{"secretKeyRef":
              {"name":"db","key":"password"}}}],
          "resources":{"limits":{"cpu":"250m"},"requests":{"memory":"64Mi"}},
          "readinessProbe":{"httpGet":{"path":"/healthz","port":"http"},
            "periodSeconds":5},
          "terminationMessagePath":"/dev/termination-log",
          "imagePullPolicy":"IfNotPresent","stdin":true,"tty":true,
          "terminationMessagePolicy":"File"}],
        "restartPolicy":"Never","terminationGracePeriodSeconds":0,
        "dnsPolicy":"ClusterFirst","nodeSelector":{"disk":"ssd"},
        "serviceAccountName":"builder",
        "tolerations":[{"key":"gpu","operator":"Exists","effect":"NoSchedule"}],
        "priority":-5},
      "status":{}})"));
}

TEST(ProtobufTest, DecodesDeploymentSelectorAndStrategy) {
  std::string selector = Bytes(1, Bytes(1, "app") + Bytes(2, "web")) +
                         Bytes(2, Bytes(1, "tier") + Bytes(2, "In") +
                                      Bytes(3, "a") + Bytes(3, "b"));
  std::string strategy =
      Bytes(1, "RollingUpdate") +
      Bytes(2, Bytes(1, IntOrStringInt(0)) + Bytes(2, IntOrStringStr("50%")));
  std::string spec =
      VarintField(1, 0) + Bytes(2, selector) +
      Bytes(3, Bytes(1, Bytes(11, Bytes(1, "app") + Bytes(2, "web"))) +
                   Bytes(2, Bytes(2, Bytes(1, "c")))) +
      Bytes(4, strategy) + VarintField(5, 0) + VarintField(6, 3) +
      VarintField(7, 0);
  auto json = KubernetesProtobufToJson(Envelope(
      "apps/v1", "Deployment", Bytes(1, Bytes(1, "web")) + Bytes(2, spec)));
  ASSERT_TRUE(json.ok()) << json.status();
  // replicas is a pointer: an explicit 0 stays.
  EXPECT_TRUE(SameJson(*json, R"({"apiVersion":"apps/v1","kind":"Deployment",
      "metadata":{"name":"web"},
      "spec":{"replicas":0,
        "selector":{"matchLabels":{"app":"web"},
          "matchExpressions":[{"key":"tier","operator":"In","values":["a","b"]}]},
        "template":{"metadata":{"labels":{"app":"web"}},
          "spec":{"containers":[{"name":"c"}]}},
        "strategy":{"type":"RollingUpdate",
          "rollingUpdate":{"maxUnavailable":0,"maxSurge":"50%"}},
        "revisionHistoryLimit":3}})"));
}

TEST(ProtobufTest, UnknownFieldIsRefusedNamingMessageAndField) {
  std::string container = Bytes(1, "c") + Bytes(99, "x");
  auto r =
      KubernetesProtobufToJson(Envelope("Pod", Bytes(2, Bytes(2, container))));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(r.status().message(),
              HasSubstr("protobuf field 99 of v1 Container"));

  // A varint field the table lacks (securityContext-free PodSpec field 36).
  r = KubernetesProtobufToJson(
      Envelope("Pod", Bytes(2, Bytes(36, Bytes(1, "linux")))));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(r.status().message(), HasSubstr("field 36 of v1 PodSpec"));

  // A Pod's status must come empty.
  r = KubernetesProtobufToJson(Envelope("Pod", Bytes(3, Bytes(2, "Running"))));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(r.status().message(), HasSubstr("field 2 of v1 PodStatus"));

  // Also in the kinds decoded before, and in ObjectMeta.
  r = KubernetesProtobufToJson(
      Envelope("apps/v1", "Deployment",
               Bytes(1, Bytes(1, "d") + Bytes(17, Bytes(1, "kubectl")))));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(r.status().message(),
              HasSubstr("field 17 of meta/v1 ObjectMeta"));
}

TEST(ProtobufTest, TruncatedOrMistypedInputIsMalformed) {
  // Every cut inside the envelope's object is malformed (400), never a
  // partial object and never a 415.
  const std::string& good = kKubectlCreateDeployment;
  size_t raw_end = good.size() - 4;  // the trailing contentEncoding/Type
  for (size_t cut = 4; cut < raw_end; ++cut) {
    auto r = KubernetesProtobufToJson(good.substr(0, cut));
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument)
        << "cut at " << cut;
  }
  // A truncated nested message with a consistent outer length.
  std::string truncated_container = Bytes(1, "c") + "\x12\x05ng";
  auto r = KubernetesProtobufToJson(
      Envelope("Pod", Bytes(2, Bytes(2, truncated_container))));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  // A varint where a string belongs, and a string where a varint belongs.
  r = KubernetesProtobufToJson(
      Envelope("Pod", Bytes(2, Bytes(2, VarintField(1, 7)))));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  r = KubernetesProtobufToJson(
      Envelope("apps/v1", "Deployment", Bytes(2, Bytes(1, "two"))));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  // An unterminated varint.
  r = KubernetesProtobufToJson(
      Envelope("apps/v1", "Deployment", Bytes(2, "\x08\xff\xff")));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
}

// What kubectl 1.32 and 1.33 `drain` (and a client-go Delete with
// metav1.DeleteOptions{} over protobuf) send: the envelope with an empty
// object, empty contentEncoding and contentType (31 bytes, from -v=9).
TEST(ProtobufTest, AnEmptyObjectIsTheDefaults) {
  const std::string kDrainDelete(
      "k8s\0"
      "\x0a\x13\x0a\x02v1\x12\x0d"
      "DeleteOptions"
      "\x12\x00\x1a\x00\x22\x00",
      31);
  auto json = KubernetesProtobufToJson(kDrainDelete);
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(*json, R"({"apiVersion":"v1","kind":"DeleteOptions"})");
  // Without the object field at all it is still malformed (a body cut
  // right after the type).
  auto cut = KubernetesProtobufToJson(kDrainDelete.substr(0, 25));
  EXPECT_EQ(cut.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ProtobufTest, MalformedInputNeverCrashes) {
  EXPECT_FALSE(KubernetesProtobufToJson("").ok());
  EXPECT_FALSE(KubernetesProtobufToJson("not protobuf").ok());
  std::string good = ConfigMap();
  for (size_t cut = 4; cut < good.size(); ++cut) {
    (void)KubernetesProtobufToJson(good.substr(0, cut));
  }
  std::string flipped = good;
  for (size_t i = 4; i < flipped.size(); ++i) {
    flipped[i] = static_cast<char>(flipped[i] ^ 0x5a);
    (void)KubernetesProtobufToJson(flipped);
  }
  // A length beyond the input.
  EXPECT_FALSE(
      KubernetesProtobufToJson(std::string("k8s\0", 4) + "\x12\xff\xff\xff\x0f")
          .ok());
}

}  // namespace
}  // namespace apiserver
}  // namespace kcr

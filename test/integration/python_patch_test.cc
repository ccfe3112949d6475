// The official Python client (Debian's python3-kubernetes) against the local
// API server for patches: a dict body is sent as a strategic merge patch and
// a list as a JSON patch; server-side apply (sent as a JSON string: the
// client has no apply-patch+yaml serialiser) creates, conflicts and forces
// as with kube-apiserver.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "apiserver/api_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kcr::integration {
namespace {

using apiserver::ApiServer;
using apiserver::ApiServerOptions;

using ::testing::HasSubstr;

class PythonPatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TEST_TMPDIR");
    dir_ = tmp != nullptr ? tmp : "/tmp";
    ApiServerOptions options;
    options.controllers.node_simulator = false;  // objects change only here
    auto s = ApiServer::Start(options);
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    kubeconfig_ = dir_ + "/kubeconfig";
    ASSERT_TRUE(server_->WriteKubeconfig(kubeconfig_).ok());
  }

  // Runs `script` with /usr/bin/python3; `v1`, `apps` and `custom` are
  // clients of the server. Returns stdout and stderr; `*code` the exit code.
  std::string Python(const std::string& script, int* code) {
    const std::string path = dir_ + "/script.py";
    std::ofstream(path) << "from kubernetes import client, config\n"
                        << "config.load_kube_config('" << kubeconfig_ << "')\n"
                        << "v1 = client.CoreV1Api()\n"
                        << "apps = client.AppsV1Api()\n"
                        << script;
    const std::string cmd =
        "HOME='" + dir_ + "' /usr/bin/python3 '" + path + "' 2>&1";
    std::string out;
    FILE* pipe = popen(cmd.c_str(), "r");
    if (pipe == nullptr) return out;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) out.append(buf, n);
    const int status = pclose(pipe);
    *code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return out;
  }

  std::string dir_;
  std::string kubeconfig_;
  std::unique_ptr<ApiServer> server_;
};

TEST_F(PythonPatchTest, DictIsStrategicMergeAndListIsJsonPatch) {
  int code = -1;
  const std::string out = Python(R"(
body = {'metadata': {'name': 'd'}, 'spec': {'replicas': 1,
  'selector': {'matchLabels': {'app': 'd'}},
  'template': {'metadata': {'labels': {'app': 'd'}}, 'spec': {'containers': [
    {'name': 'a', 'image': 'busybox:1', 'env': [{'name': 'X', 'value': '1'}]},
    {'name': 'b', 'image': 'busybox:1'}]}}}}
apps.create_namespaced_deployment('default', body)
# A dict: strategic merge patch, merged by container name.
d = apps.patch_namespaced_deployment('d', 'default', {'spec': {'template': {'spec': {
    'containers': [{'name': 'b', 'image': 'busybox:2'}]}}}})
print('images', [c.image for c in d.spec.template.spec.containers])
print('managers', sorted(m.manager for m in d.metadata.managed_fields))
# A list: JSON patch.
d = apps.patch_namespaced_deployment('d', 'default',
    [{'op': 'replace', 'path': '/spec/replicas', 'value': 3}])
print('replicas', d.spec.replicas)
# $patch: delete through the client.
d = apps.patch_namespaced_deployment('d', 'default', {'spec': {'template': {'spec': {
    'containers': [{'$patch': 'delete', 'name': 'a'}]}}}})
print('names', [c.name for c in d.spec.template.spec.containers])
try:
    apps.patch_namespaced_deployment('d', 'default', {'spec': {'template': {'spec': {
        'containers': [{'image': 'x'}]}}}})
except client.ApiException as e:
    print('error', e.status)
)",
                                 &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_THAT(out, HasSubstr("images ['busybox:1', 'busybox:2']"));
  EXPECT_THAT(out, HasSubstr("managers ['OpenAPI-Generator']"));
  EXPECT_THAT(out, HasSubstr("replicas 3"));
  EXPECT_THAT(out, HasSubstr("names ['b']"));
  EXPECT_THAT(out, HasSubstr("error 400"));
}

TEST_F(PythonPatchTest, ServerSideApplyThroughTheClient) {
  int code = -1;
  const std::string out = Python(R"(
import json
api = client.ApiClient()
def apply(manager, body, force=False):
    q = [('fieldManager', manager)] + ([('force', 'true')] if force else [])
    return api.call_api('/api/v1/namespaces/{ns}/configmaps/{name}', 'PATCH',
        path_params={'ns': 'default', 'name': 'cm1'}, query_params=q,
        header_params={'Content-Type': 'application/apply-patch+yaml',
                       'Accept': 'application/json'},
        body=json.dumps(body), response_type='V1ConfigMap', auth_settings=['BearerToken'],
        _return_http_data_only=False)
cm = {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'cm1'},
      'data': {'a': '1'}}
obj, status, _ = apply('first', cm)
print('created', status, obj.data)
cm['data']['a'] = '2'
try:
    apply('second', cm)
except client.ApiException as e:
    print('conflict', e.status, json.loads(e.body)['message'])
obj, status, _ = apply('second', cm, force=True)
print('forced', status, obj.data)
)",
                                 &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_THAT(out, HasSubstr("created 201 {'a': '1'}"));
  EXPECT_THAT(out, HasSubstr("conflict 409 Apply failed with 1 conflict: "
                             "conflict with \"first\": .data.a"));
  EXPECT_THAT(out, HasSubstr("forced 200 {'a': '2'}"));
}

}  // namespace
}  // namespace kcr::integration

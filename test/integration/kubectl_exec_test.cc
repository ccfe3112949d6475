// kubectl exec, attach and port-forward against the simulated node, with an
// old kubectl (1.28: SPDY) and a new one (1.33: WebSocket for exec and
// attach, SPDY for port-forward after its WebSocket attempt is refused):
// each prints one clear error that the node runs no containers, instead of
// a 404 or a hang. The checks before the upgrade answer as kube-apiserver
// does.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <ostream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/time/time.h"
#include "apiserver/api_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/integration/kubectl_apiserver_fixture.h"
#include "test/integration/kubectl_harness.h"
#include "test/integration/process_util.h"

namespace kcr::integration {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct Version {
  std::string git_version;
  std::string minor;
};

void PrintTo(const Version& v, std::ostream* os) { *os << v.git_version; }

constexpr char kNoContainers[] =
    "the simulated node \"kcr-node\" runs no containers";

class KubectlExecTest : public KubectlApiServerFixture,
                        public ::testing::WithParamInterface<Version> {
 protected:
  void SetUp() override {
    apiserver::ApiServerOptions options;
    options.git_version = GetParam().git_version;
    options.minor = GetParam().minor;
    ASSERT_NO_FATAL_FAILURE(StartServer(std::move(options)));
    KubectlResult r = kubectl_->Run({"run", "web", "--image=nginx"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = RunUntil({"get", "pod", "web", "-o", "jsonpath={.status.phase}"},
                 [](const KubectlResult& r) { return r.out == "Running"; });
    ASSERT_EQ(r.out, "Running") << r.err;
  }
};

TEST_P(KubectlExecTest, ExecReportsThatTheNodeRunsNoContainers) {
  KubectlResult r =
      kubectl_->Run({"exec", "web", "--", "ls", "/"}, "", absl::Seconds(20));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("error: Internal error occurred: cannot exec "
                               "in container \"web\" of pod \"web\": "));
  EXPECT_THAT(r.err, HasSubstr(kNoContainers));
  // With stdin and a TTY: more streams, the same answer.
  r = kubectl_->Run({"exec", "-i", "web", "--", "sh"}, "echo hi\n",
                    absl::Seconds(20));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr(kNoContainers));
}

TEST_P(KubectlExecTest, AttachReportsThatTheNodeRunsNoContainers) {
  KubectlResult r = kubectl_->Run({"attach", "web"}, "", absl::Seconds(20));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("cannot attach to container \"web\" of pod "
                               "\"web\": "));
  EXPECT_THAT(r.err, HasSubstr(kNoContainers));
}

TEST_P(KubectlExecTest, PortForwardReportsTheErrorPerConnection) {
  std::unique_ptr<KubectlProcess> pf =
      kubectl_->Start({"port-forward", "pod/web", ":80"});
  ASSERT_TRUE(pf->started());
  ASSERT_TRUE(pf->WaitForLine("Forwarding from 127.0.0.1:", absl::Seconds(20)))
      << pf->out();
  const std::string prefix = "Forwarding from 127.0.0.1:";
  const size_t at = pf->out().find(prefix) + prefix.size();
  int port = 0;
  ASSERT_TRUE(absl::SimpleAtoi(
      pf->out().substr(at, pf->out().find(' ', at) - at), &port))
      << pf->out();

  // A connection through the forward is closed without a byte: the error
  // goes to kubectl, which reports it and gives up.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  char buf[64];
  EXPECT_LE(read(fd, buf, sizeof(buf)), 0);
  close(fd);
  EXPECT_EQ(pf->Wait(absl::Seconds(20)), 1);
}

TEST_P(KubectlExecTest, TheRequestIsCheckedBeforeTheUpgrade) {
  KubectlResult r = kubectl_->Run({"exec", "web", "-c", "sidecar", "--", "ls"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("container sidecar is not valid for pod web"));
  r = kubectl_->Run({"exec", "nothere", "--", "ls"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("pods \"nothere\" not found"));
  // Not an upgrade: kube-apiserver (the kubelet behind it) wants one.
  r = kubectl_->Run(
      {"create", "--raw", "/api/v1/namespaces/default/pods/web/exec?command=ls",
       "-f", "-"},
      "{}");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("Upgrade request required"));
}

INSTANTIATE_TEST_SUITE_P(Minors, KubectlExecTest,
                         ::testing::Values(Version{"v1.28.15", "28"},
                                           Version{"v1.33.1", "33"}),
                         [](const ::testing::TestParamInfo<Version>& info) {
                           return "Minor" + info.param.minor;
                         });

// Without the simulated node nothing places a pod on a node.
class KubectlExecWithoutNodeTest : public KubectlApiServerFixture {
 protected:
  void SetUp() override {
    apiserver::ApiServerOptions options;
    options.controllers.node_simulator = false;
    ASSERT_NO_FATAL_FAILURE(StartServer(std::move(options)));
  }
};

TEST_F(KubectlExecWithoutNodeTest, APodWithoutANodeHasNoHost) {
  KubectlResult r = kubectl_->Run({"run", "waiting", "--image=nginx"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = kubectl_->Run({"exec", "waiting", "--", "ls"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("pod waiting does not have a host assigned"));
  EXPECT_THAT(r.err, Not(HasSubstr(kNoContainers)));
  // kubectl port-forward checks the phase itself, as on a cluster.
  r = kubectl_->Run({"port-forward", "pod/waiting", ":80"}, "",
                    absl::Seconds(20));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("pod is not running. Current status=Pending"));
}

// What a client sends after an upgrade is untrusted: SPDY frames cut short,
// a frame that claims 16 MB and never comes, bytes that are no frame at
// all, and WebSocket bytes after the error. Each connection ends (the
// server answered 101 first) without a crash, and the server goes on
// serving.
class PodStreamHostileInputTest : public KubectlApiServerFixture {
 protected:
  // Opens a connection, sends `request` then `after`, and returns what the
  // server wrote until it closed the connection (at most 10 s).
  std::string Exchange(const std::string& request, const std::string& after) {
    const std::string url = server_->url();
    int port = 0;
    EXPECT_TRUE(absl::SimpleAtoi(url.substr(url.rfind(':') + 1), &port));
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    EXPECT_GE(fd, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    const std::string all = request + after;
    EXPECT_EQ(write(fd, all.data(), all.size()),
              static_cast<ssize_t>(all.size()));
    shutdown(fd, SHUT_WR);
    timeval tv{10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    std::string got;
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0) got.append(buf, n);
    close(fd);
    return got;
  }

  std::string Upgrade(const std::string& path, const std::string& headers) {
    return "POST /api/v1/namespaces/default/pods/web/" + path +
           " HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\n" + headers +
           "Content-Length: 0\r\n\r\n";
  }
};

TEST_F(PodStreamHostileInputTest, BadFramesEndTheConnectionOnly) {
  KubectlResult r = kubectl_->Run({"run", "web", "--image=nginx"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunUntil({"get", "pod", "web", "-o", "jsonpath={.spec.nodeName}"},
               [](const KubectlResult& r) { return !r.out.empty(); });
  ASSERT_FALSE(r.out.empty());

  const std::string spdy =
      Upgrade("exec?command=ls&stdout=true",
              "Upgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: "
              "v4.channel.k8s.io\r\n");
  const std::string cases[] = {
      // A SYN_STREAM header cut in the middle.
      std::string("\x80\x03\x00\x01\x00\x00", 6),
      // A control frame that claims 16 MB and ends after 3 bytes.
      std::string("\x80\x03\x00\x01\x00\xff\xff\xff"
                  "abc",
                  11),
      // A SYN_STREAM shorter than its stream id.
      std::string("\x80\x03\x00\x01\x00\x00\x00\x02\x00\x01", 10),
      // Not SPDY at all, with invalid UTF-8.
      std::string("\xff\xfe\xfd GET / HTTP/1.1\r\n\r\n", 22),
  };
  for (const std::string& bytes : cases) {
    const std::string got = Exchange(spdy, bytes);
    EXPECT_EQ(got.rfind("HTTP/1.1 101 Switching Protocols\r\n", 0), 0u) << got;
  }
  // WebSocket: the error and the close frame come whatever the client
  // sends after the handshake.
  const std::string ws = Upgrade(
      "exec?command=ls&stdout=true",
      "Upgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
      "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: "
      "v4.channel.k8s.io\r\n");
  std::string got = Exchange(ws, std::string("\x82\xff\x00\x01", 4));
  EXPECT_EQ(got.rfind("HTTP/1.1 101 Switching Protocols\r\n", 0), 0u) << got;
  EXPECT_THAT(got, HasSubstr("runs no containers"));
  EXPECT_THAT(got, HasSubstr(std::string("\x88\x02\x03\xe8", 4)));

  // The server still serves.
  r = kubectl_->Run({"get", "pod", "web", "-o", "name"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "pod/web\n");
}

}  // namespace
}  // namespace kcr::integration

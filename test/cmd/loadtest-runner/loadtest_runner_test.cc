// cmd/loadtest-runner as a process against a local HTTP server
// (runtime/metrics' HttpEndpoint): every request succeeds, some are
// answered 500, the server is down; the exit code and the summary it
// writes to --termination-log; flags from the environment; bad flags.
#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "runtime/metrics/http_endpoint.h"
#include "test/integration/process_util.h"

namespace kcr {
namespace {

using ::kcr::apiserver::ProcessResult;
using ::kcr::apiserver::ReadFile;
using ::kcr::apiserver::RunProcess;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kBinary[] = "cmd/loadtest-runner/loadtest-runner";

class LoadtestRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static int n = 0;
    log_ = absl::StrCat(::testing::TempDir(), "/termination-log-", ++n);
  }

  // A server on a free loopback port: /ok answers 200, /flaky answers 500
  // to every third request.
  void StartServer() {
    metrics::HttpEndpointOptions options;
    options.bind_address = "127.0.0.1:0";
    auto endpoint = metrics::HttpEndpoint::Create(options);
    ASSERT_TRUE(endpoint.ok()) << endpoint.status();
    server_ = std::move(*endpoint);
    server_->Handle("/ok", [](const metrics::HttpGet&) {
      return metrics::HttpReply{200, "text/plain", "fine\n"};
    });
    server_->Handle("/flaky", [this](const metrics::HttpGet&) {
      const int i = ++flaky_count_;
      return metrics::HttpReply{i % 3 == 0 ? 500 : 200, "text/plain",
                                std::string(1000, 'x')};
    });
    server_->Start();
  }

  ProcessResult Run(std::vector<std::string> args,
                    std::map<std::string, std::string> env = {}) {
    args.insert(args.begin(), kBinary);
    args.push_back("--termination-log=" + log_);
    return RunProcess(args, env);
  }

  // The summary written to the termination log.
  rapidjson::Document Summary() {
    const std::string text = ReadFile(log_);
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
    rapidjson::Document doc;
    doc.Parse(text.c_str());
    EXPECT_FALSE(doc.HasParseError()) << text;
    if (!doc.IsObject()) doc.SetObject();
    return doc;
  }

  std::string log_;
  std::unique_ptr<metrics::HttpEndpoint> server_;
  std::atomic<int> flaky_count_{0};
};

TEST_F(LoadtestRunnerTest, AllSucceed) {
  StartServer();
  ProcessResult r = Run({"--service-name=127.0.0.1",
                         absl::StrCat("--service-port=", server_->port()),
                         "--path=/ok", "--repeat=10"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  rapidjson::Document s = Summary();
  ASSERT_TRUE(s.HasMember("requests") && s.HasMember("failures"));
  EXPECT_EQ(s["requests"].GetInt(), 10);
  EXPECT_EQ(s["failures"].GetInt(), 0);
  for (const char* p : {"p50Ms", "p90Ms", "p99Ms"}) {
    ASSERT_TRUE(s.HasMember(p) && s[p].IsNumber()) << p;
    EXPECT_GT(s[p].GetDouble(), 0) << p;
  }
  EXPECT_LE(s["p50Ms"].GetDouble(), s["p90Ms"].GetDouble());
  EXPECT_LE(s["p90Ms"].GetDouble(), s["p99Ms"].GetDouble());
  // The summary is also what the pod's log shows last.
  EXPECT_THAT(r.out, HasSubstr("\"requests\":10,\"failures\":0"));
}

TEST_F(LoadtestRunnerTest, SomeFail) {
  StartServer();
  ProcessResult r = Run({"--service-name=localhost",
                         absl::StrCat("--service-port=", server_->port()),
                         "--path=/flaky", "--repeat=9"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  rapidjson::Document s = Summary();
  EXPECT_EQ(s["requests"].GetInt(), 9);
  EXPECT_EQ(s["failures"].GetInt(), 3);
  EXPECT_THAT(r.out, HasSubstr("request 3 failed: HTTP 500"));
}

TEST_F(LoadtestRunnerTest, ServerDown) {
  StartServer();
  const int port = server_->port();
  server_->Stop();
  server_.reset();  // closes the listening socket: connections are refused
  ProcessResult r = Run({"--service-name=127.0.0.1",
                         absl::StrCat("--service-port=", port), "--repeat=3"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  rapidjson::Document s = Summary();
  EXPECT_EQ(s["requests"].GetInt(), 3);
  EXPECT_EQ(s["failures"].GetInt(), 3);
  EXPECT_THAT(r.out, HasSubstr("Connection refused"));
}

TEST_F(LoadtestRunnerTest, FlagsFromTheEnvironment) {
  StartServer();
  ProcessResult r = RunProcess(
      {kBinary}, {{"LOADTEST_METHOD", "GET"},
                  {"LOADTEST_SERVICE_NAME", "127.0.0.1"},
                  {"LOADTEST_SERVICE_PORT", absl::StrCat(server_->port())},
                  {"LOADTEST_PATH", "/ok"},
                  {"LOADTEST_REPEAT", "4"},
                  {"LOADTEST_TERMINATION_LOG", log_}});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(Summary()["requests"].GetInt(), 4);

  // A flag given on the command line wins over its variable.
  r = RunProcess({kBinary, "--repeat=2"},
                 {{"LOADTEST_SERVICE_NAME", "127.0.0.1"},
                  {"LOADTEST_SERVICE_PORT", absl::StrCat(server_->port())},
                  {"LOADTEST_PATH", "/ok"},
                  {"LOADTEST_REPEAT", "4"},
                  {"LOADTEST_TERMINATION_LOG", log_}});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(Summary()["requests"].GetInt(), 2);
}

TEST_F(LoadtestRunnerTest, BadFlagsAreOneLineAndExitTwo) {
  const std::vector<std::vector<std::string>> cases = {
      {"--repeat=0", "--service-name=a"},
      {"--repeat=x", "--service-name=a"},
      {"--service-port=70000", "--service-name=a"},
      {"--path=nope", "--service-name=a"},
      {"--method=get", "--service-name=a"},
      {"--bogus"},
      {},  // no --service-name
      {"--service-name=a", "extra"},
  };
  for (const auto& args : cases) {
    std::vector<std::string> argv = {kBinary};
    argv.insert(argv.end(), args.begin(), args.end());
    ProcessResult r = RunProcess(argv, {});
    const std::string label = args.empty() ? "(none)" : args[0];
    EXPECT_EQ(r.exit_code, 2) << label << ": " << r.err;
    EXPECT_THAT(r.err, StartsWith("loadtest-runner: ")) << label;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1)
        << label << ": " << r.err;
  }
  ProcessResult r = RunProcess(
      {kBinary}, {{"LOADTEST_REPEAT", "many"}, {"LOADTEST_SERVICE_NAME", "a"}});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("$LOADTEST_REPEAT"));
  EXPECT_THAT(r.err, HasSubstr("--repeat"));
}

TEST_F(LoadtestRunnerTest, HelpListsTheFlags) {
  ProcessResult r = RunProcess({kBinary, "--help"}, {});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string text = r.out + r.err;
  for (const char* flag :
       {"--method", "--service-name", "--service-port", "--path", "--repeat",
        "--timeout-seconds", "--termination-log"}) {
    EXPECT_THAT(text, HasSubstr(flag)) << flag;
  }
}

}  // namespace
}  // namespace kcr

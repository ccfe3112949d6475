// loadtest-runner: the program inside a LoadTest's pods. Sends --repeat
// requests with --method to http://<service-name>:<service-port><path>,
// one after another, prints one line per failed request (the first 20)
// and the summary on stdout, writes the summary as one line of JSON to
// --termination-log (the pod's termination message), and exits 0 only if
// every request succeeded (1 otherwise; 2 for bad flags).
//
//   loadtest-runner --service-name=web --service-port=80 --path=/ --repeat=100
//
// Each flag falls back to an environment variable when not given
// (LOADTEST_METHOD, LOADTEST_SERVICE_NAME, ...; see kEnvFallbacks), so
// that a controller can set either.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "base/flags.h"
#include "cmd/loadtest-runner/runner.h"
#include "gflags/gflags.h"

DEFINE_string(method, "GET",
              "HTTP method of every request (env LOADTEST_METHOD).");
DEFINE_string(service_name, "",
              "Host to send to: a Service's name, a DNS name or an IP "
              "(env LOADTEST_SERVICE_NAME; required).");
DEFINE_int32(service_port, 80, "Port to send to (env LOADTEST_SERVICE_PORT).");
DEFINE_string(path, "/", "Request path, with any query (env LOADTEST_PATH).");
DEFINE_int64(repeat, 1,
             "Number of requests, sent in sequence (env LOADTEST_REPEAT).");
DEFINE_double(timeout_seconds, 10,
              "Per-request timeout in seconds (env LOADTEST_TIMEOUT_SECONDS).");
DEFINE_string(termination_log, "/dev/termination-log",
              "Where the one-line JSON summary goes; empty for nowhere "
              "(env LOADTEST_TERMINATION_LOG).");

namespace {

constexpr char kProgram[] = "loadtest-runner";

struct EnvFallback {
  const char* flag;
  const char* env;
};
constexpr EnvFallback kEnvFallbacks[] = {
    {"method", "LOADTEST_METHOD"},
    {"service_name", "LOADTEST_SERVICE_NAME"},
    {"service_port", "LOADTEST_SERVICE_PORT"},
    {"path", "LOADTEST_PATH"},
    {"repeat", "LOADTEST_REPEAT"},
    {"timeout_seconds", "LOADTEST_TIMEOUT_SECONDS"},
    {"termination_log", "LOADTEST_TERMINATION_LOG"},
};

// Flags not given on the command line take their environment variable;
// a value that does not parse is a bad flag (exit 2).
bool ApplyEnvFallbacks() {
  for (const EnvFallback& f : kEnvFallbacks) {
    const char* value = getenv(f.env);
    if (value == nullptr || *value == '\0') continue;
    if (!gflags::GetCommandLineFlagInfoOrDie(f.flag).is_default) continue;
    if (gflags::SetCommandLineOption(f.flag, value).empty()) {
      std::string dashed = f.flag;
      for (char& c : dashed) c = c == '_' ? '-' : c;
      std::cerr << kProgram << ": invalid value \"" << value << "\" in $"
                << f.env << " for --" << dashed << "\n";
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const kcr::ProgramInfo program{
      .name = kProgram,
      .usage = "loadtest-runner --service-name=HOST [flags]",
      .about =
          "loadtest-runner: sends --repeat HTTP requests to "
          "http://<service-name>:<service-port><path>, writes a one-line "
          "JSON summary {requests, failures, p50Ms, p90Ms, p99Ms} to "
          "--termination-log, and exits 0 only if every request "
          "succeeded (status below 400). Every flag falls back to "
          "$LOADTEST_<FLAG> (e.g. LOADTEST_SERVICE_NAME).",
      .flag_files = {"cmd/loadtest-runner/main.cc"}};
  if (std::vector<std::string> args =
          kcr::ParseFlagsOrExit(program, argc, argv);
      !args.empty()) {
    std::cerr << kProgram << ": unexpected argument \"" << args[0]
              << "\" (it takes flags only)\n";
    return 2;
  }
  if (!ApplyEnvFallbacks()) return 2;

  kcr::loadtest::RunnerOptions options;
  options.method = FLAGS_method;
  options.host = FLAGS_service_name;
  options.port = FLAGS_service_port;
  options.path = FLAGS_path;
  options.repeat = FLAGS_repeat;
  options.timeout = absl::Seconds(FLAGS_timeout_seconds);
  if (absl::Status s = kcr::loadtest::ValidateOptions(options); !s.ok()) {
    std::cerr << kProgram << ": " << s.message() << " (see " << kProgram
              << " --help)\n";
    return 2;
  }

  const std::string url =
      absl::StrCat("http://", options.host, ":", options.port, options.path);
  std::cout << "sending " << options.repeat << " " << options.method
            << " requests to " << url << std::endl;
  constexpr int64_t kFailuresShown = 20;
  const kcr::loadtest::Summary summary = kcr::loadtest::Run(
      options, [&](int64_t i, const kcr::loadtest::RequestResult& r) {
        if (i < kFailuresShown) {
          std::cout << "request " << i + 1 << " failed: " << r.error.message()
                    << std::endl;
        }
      });
  const std::string json = kcr::loadtest::SummaryJson(summary);
  std::cout << json << std::endl;

  int code = summary.failures == 0 ? 0 : 1;
  if (!FLAGS_termination_log.empty()) {
    std::ofstream out(FLAGS_termination_log, std::ios::trunc);
    out << json << "\n";
    out.close();
    if (!out) {
      std::cerr << kProgram << ": cannot write the summary to "
                << FLAGS_termination_log << "\n";
      code = 1;
    }
  }
  return code;
}

// kcr as a process: its --help texts, one line and exit code 2 for bad
// usage, and a project made, re-made (a no-op) and refused through it.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/integration/process_util.h"

namespace {

namespace fs = std::filesystem;
using ::kcr::apiserver::ProcessResult;
using ::kcr::apiserver::RunProcess;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kBinary[] = "cmd/kcr/kcr";

ProcessResult Kcr(std::vector<std::string> args) {
  args.insert(args.begin(), kBinary);
  return RunProcess(args, {});
}

void ExpectOneLineExit2(const ProcessResult& r, const std::string& what) {
  EXPECT_EQ(r.exit_code, 2) << what << "\n" << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.out, "") << what;
}

std::string TempDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const fs::path dir = fs::path(tmp != nullptr ? tmp : "/tmp") / name;
  fs::remove_all(dir);
  return dir.string();
}

TEST(KcrTest, HelpListsTheCommands) {
  for (const char* help : {"--help", "-h", "help"}) {
    ProcessResult r = Kcr({help});
    EXPECT_EQ(r.exit_code, 0) << help;
    EXPECT_THAT(r.out, HasSubstr("init "));
    EXPECT_THAT(r.out, HasSubstr("create api "));
    EXPECT_THAT(r.out, HasSubstr("create handlers "));
  }
  ProcessResult none = Kcr({});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_THAT(none.err, HasSubstr("Commands:"));
}

TEST(KcrTest, EachCommandListsItsOwnFlags) {
  ProcessResult init = Kcr({"init", "--help"});
  EXPECT_EQ(init.exit_code, 0);
  for (const char* flag : {"--domain string", "--build string", "--repo string",
                           "--kcr-path string", "--force"}) {
    EXPECT_THAT(init.out, HasSubstr(flag));
  }
  EXPECT_THAT(init.out, Not(HasSubstr("--kind")));
  for (const char* what : {"api", "handlers"}) {
    ProcessResult create = Kcr({"create", what, "--help"});
    EXPECT_EQ(create.exit_code, 0) << what;
    for (const char* flag : {"--group string", "--kind string", "--namespaced",
                             "given as --version", "--force"}) {
      EXPECT_THAT(create.out, HasSubstr(flag)) << what;
    }
    EXPECT_THAT(create.out, Not(HasSubstr("--domain"))) << what;
  }
}

TEST(KcrTest, BadUsageIsOneLineAndExit2) {
  const std::string repo = TempDir("bad");
  ExpectOneLineExit2(Kcr({"bogus"}), "unknown command");
  ProcessResult flag = Kcr({"--bogus"});
  ExpectOneLineExit2(flag, "unknown flag");
  EXPECT_THAT(flag.err, HasSubstr("unknown flag: --bogus"));
  ExpectOneLineExit2(Kcr({"create"}), "create without what");
  ExpectOneLineExit2(Kcr({"create", "webhook"}), "unknown create");
  ExpectOneLineExit2(Kcr({"init", "--bogus"}), "unknown flag");
  ExpectOneLineExit2(
      Kcr({"init", "--repo", repo, "--domain", "x.io", "--kind", "Foo"}),
      "create's flag to init");
  ExpectOneLineExit2(Kcr({"init", "--domain", "example.com"}), "no --repo");
  ExpectOneLineExit2(Kcr({"init", "--repo", repo}), "no --domain");
  ExpectOneLineExit2(Kcr({"init", "--repo", repo, "--domain", "Example.com"}),
                     "bad domain");
  ExpectOneLineExit2(Kcr({"init", "--repo", repo, "--domain", "example.com",
                          "--build", "make"}),
                     "bad build");
  ExpectOneLineExit2(
      Kcr({"init", "--repo", repo, "--domain", "example.com", "extra"}),
      "an argument");
  EXPECT_FALSE(fs::exists(repo));

  ASSERT_EQ(Kcr({"init", "--repo", repo, "--domain", "example.com"}).exit_code,
            0);
  const std::vector<std::string> good = {"--repo", repo,        "--group",
                                         "webapp", "--version", "v1"};
  auto create = [&](std::vector<std::string> more) {
    std::vector<std::string> args = {"create", "api"};
    args.insert(args.end(), more.begin(), more.end());
    return Kcr(args);
  };
  std::vector<std::string> args = good;
  args.insert(args.end(), {"--kind", "guestbook"});
  ProcessResult r = create(args);
  ExpectOneLineExit2(r, "lower-case kind");
  EXPECT_THAT(r.err, HasSubstr("CamelCase"));
  r = create({"--repo", repo, "--group", "Web_App", "--version", "v1", "--kind",
              "Guestbook"});
  ExpectOneLineExit2(r, "bad group");
  EXPECT_THAT(r.err, HasSubstr("DNS subdomain"));
  r = create({"--repo", repo, "--group", "webapp", "--version=1", "--kind",
              "Guestbook"});
  ExpectOneLineExit2(r, "bad version");
  EXPECT_THAT(r.err, HasSubstr("v1beta1"));
  ExpectOneLineExit2(
      create({"--repo", repo, "--group", "webapp", "--kind", "Guestbook"}),
      "no version");
  ExpectOneLineExit2(
      create({"--repo", repo, "--group", "webapp", "--version", "v1", "--kind",
              "Guestbook", "--namespaced=maybe"}),
      "bad bool");
  ExpectOneLineExit2(create({"--repo", repo, "--domain", "x.io"}),
                     "init's flag to create");
}

TEST(KcrTest, MakesAProjectAndReRunsSafely) {
  const std::string repo = TempDir("guestbook");
  ProcessResult init = Kcr({"init", "--repo", repo, "--domain", "example.com"});
  ASSERT_EQ(init.exit_code, 0) << init.err;
  EXPECT_THAT(init.out, HasSubstr("create WORKSPACE\n"));
  ProcessResult api = Kcr({"create", "api", "--repo", repo, "--group", "webapp",
                           "--version", "v1", "--kind", "Guestbook"});
  ASSERT_EQ(api.exit_code, 0) << api.err;
  EXPECT_THAT(api.out, HasSubstr("update cmd/manager/main.cc\n"));
  ProcessResult handlers =
      Kcr({"create", "handlers", "--repo", repo, "--group", "webapp",
           "--version=v1", "--kind=MemCached", "--namespaced=false"});
  ASSERT_EQ(handlers.exit_code, 0) << handlers.err;
  EXPECT_THAT(
      handlers.out,
      HasSubstr("create controllers/mem_cached/mem_cached_handlers.cc"));

  // Again: nothing changes.
  ProcessResult again =
      Kcr({"create", "api", "--repo", repo, "--group", "webapp", "--version",
           "v1", "--kind", "Guestbook"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  for (absl::string_view line :
       absl::StrSplit(again.out, '\n', absl::SkipEmpty())) {
    EXPECT_TRUE(absl::StartsWith(line, "unchanged ")) << line;
  }
  // A file changed by hand is not overwritten: exit 1, one line.
  const std::string readme = repo + "/README.md";
  std::ofstream(readme) << "mine\n";
  ProcessResult refused =
      Kcr({"init", "--repo", repo, "--domain", "example.com"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.err, HasSubstr("refusing to overwrite README.md"));
  EXPECT_EQ(std::count(refused.err.begin(), refused.err.end(), '\n'), 1);
  ProcessResult forced =
      Kcr({"init", "--repo", repo, "--domain", "example.com", "--force"});
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_THAT(forced.out, HasSubstr("overwrite README.md\n"));
}

}  // namespace

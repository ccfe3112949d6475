// Keeps the top-level Dockerfile in step with the build, since no container
// engine runs here to build it: the build stage installs exactly
// third_party/deps.sh's packages (by running deps.sh), builds both binaries
// with -c opt, and the runtime stage installs exactly the Debian packages
// that hold the shared libraries the binaries link (their NEEDED entries,
// resolved with ldd and mapped to packages with dpkg -S), runs as the
// non-root uid the Deployment expects, and starts the manager.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/integration/process_util.h"

namespace kcr::e2e {
namespace {

using apiserver::ProcessResult;
using apiserver::ReadFile;
using apiserver::RunProcess;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kDockerfile[] = "Dockerfile";
constexpr char kDeployment[] = "manifests/deploy/deployment.yaml";
const char* const kBinaries[] = {"cmd/controller-manager/controller-manager",
                                 "cmd/loadtest-runner/loadtest-runner"};

// The runtimes a sanitizer build (--config=asan/tsan) links in; the image
// is built without them.
const std::set<std::string>& SanitizerPackages() {
  static const auto* const packages = new std::set<std::string>{
      "libasan8", "liblsan0", "libtsan2", "libubsan1"};
  return *packages;
}

struct Instruction {
  std::string keyword;  // upper case: FROM, RUN, COPY, ...
  std::string args;     // continuation lines joined with a space
};

// The Dockerfile's instructions by stage (each starts with its FROM), as
// Docker reads them: comment lines dropped, `\` continuations joined.
std::vector<std::vector<Instruction>> ParseStages(const std::string& text) {
  std::vector<std::vector<Instruction>> stages;
  std::string current;
  auto flush = [&] {
    std::string line(absl::StripAsciiWhitespace(current));
    current.clear();
    if (line.empty()) return;
    std::vector<std::string> parts =
        absl::StrSplit(line, absl::MaxSplits(' ', 1));
    Instruction i{absl::AsciiStrToUpper(parts[0]),
                  parts.size() > 1
                      ? std::string(absl::StripAsciiWhitespace(parts[1]))
                      : ""};
    if (i.keyword == "FROM") stages.emplace_back();
    if (!stages.empty()) stages.back().push_back(std::move(i));
  };
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (absl::StartsWith(line, "#")) continue;
    if (absl::ConsumeSuffix(&line, "\\")) {
      absl::StrAppend(&current, line, " ");
      continue;
    }
    absl::StrAppend(&current, line);
    flush();
  }
  flush();
  return stages;
}

// The packages of every `apt-get install` in `run` (options skipped).
std::vector<std::string> AptInstalls(const std::string& run) {
  std::vector<std::string> packages;
  for (absl::string_view command :
       absl::StrSplit(run, absl::ByAnyChar("&;|"), absl::SkipWhitespace())) {
    std::vector<std::string> words =
        absl::StrSplit(command, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    auto install = std::find(words.begin(), words.end(), "install");
    if (words.empty() || words[0] != "apt-get" || install == words.end()) {
      continue;
    }
    for (auto it = install + 1; it != words.end(); ++it) {
      if (!absl::StartsWith(*it, "-")) packages.push_back(*it);
    }
  }
  return packages;
}

// The sonames `binary` names in its dynamic section (NEEDED).
std::vector<std::string> Needed(const std::string& binary) {
  ProcessResult r = RunProcess({"/usr/bin/objdump", "-p", binary}, {});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> sonames;
  for (absl::string_view line : absl::StrSplit(r.out, '\n')) {
    std::vector<std::string> words =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (words.size() == 2 && words[0] == "NEEDED") sonames.push_back(words[1]);
  }
  return sonames;
}

// The file ldd resolves `soname` to for `binary`, "" if none.
std::string Resolve(const std::string& ldd_out, const std::string& soname) {
  for (absl::string_view line : absl::StrSplit(ldd_out, '\n')) {
    std::vector<std::string> words =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (words.size() >= 3 && words[0] == soname && words[1] == "=>") {
      return words[2];
    }
    // The dynamic loader: "/lib64/ld-linux-x86-64.so.2 (0x...)".
    if (!words.empty() && absl::EndsWith(words[0], "/" + soname)) {
      return words[0];
    }
  }
  return "";
}

// The Debian package that holds each of `paths`, by path ("" if none).
// ldd prints /lib paths, which many packages list under /usr/lib since the
// merged /usr: both are asked, in one dpkg call (each call reads the whole
// package database).
std::map<std::string, std::string> PackagesOf(
    const std::set<std::string>& paths) {
  std::vector<std::string> argv = {"/usr/bin/dpkg", "-S"};
  for (const std::string& path : paths) {
    argv.push_back(path);
    argv.push_back("/usr" + path);
  }
  // Exits 1 when some path is not found (half the candidates are not).
  ProcessResult r = RunProcess(argv, {}, "", absl::Seconds(120));
  std::map<std::string, std::string> owner;
  for (absl::string_view line : absl::StrSplit(r.out, '\n')) {
    // "libssl3:amd64: /usr/lib/x86_64-linux-gnu/libssl.so.3"
    const size_t sep = line.find(": ");
    if (sep == absl::string_view::npos) continue;
    std::string path(line.substr(sep + 2));
    if (absl::StartsWith(path, "/usr/") && paths.count(path.substr(4)) != 0) {
      path = path.substr(4);
    }
    absl::string_view package = line.substr(0, sep);
    package = package.substr(0, package.find_first_of(":,"));
    owner.emplace(path, std::string(package));
  }
  for (const std::string& path : paths) owner.emplace(path, "");
  return owner;
}

class DockerfileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    stages_ = ParseStages(ReadFile(kDockerfile));
    ASSERT_EQ(stages_.size(), 2u) << "a build stage and a runtime stage";
  }

  // The args of every `keyword` instruction of stage `stage`.
  std::vector<std::string> All(int stage, const std::string& keyword) const {
    std::vector<std::string> out;
    for (const Instruction& i : stages_[stage]) {
      if (i.keyword == keyword) out.push_back(i.args);
    }
    return out;
  }

  std::vector<std::vector<Instruction>> stages_;
};

TEST_F(DockerfileTest, BuildStageInstallsWhatDepsShInstallsAndBuildsBoth) {
  EXPECT_EQ(stages_[0][0].args, "debian:12 AS build");
  // deps.sh, copied in and run: its package list is the build stage's.
  std::vector<std::string> copies = All(0, "COPY");
  auto deps = std::find_if(copies.begin(), copies.end(), [](const auto& c) {
    return absl::StartsWith(c, "third_party/deps.sh ");
  });
  ASSERT_NE(deps, copies.end()) << "the build stage must COPY deps.sh";
  const std::string deps_in_image(
      absl::StripAsciiWhitespace(deps->substr(deps->find(' '))));
  bool runs_deps = false;
  bool builds = false;
  for (const std::string& run : All(0, "RUN")) {
    if (absl::StartsWith(run, deps_in_image)) runs_deps = true;
    EXPECT_THAT(AptInstalls(run), IsEmpty())
        << "packages belong in third_party/deps.sh: " << run;
    if (absl::StrContains(run,
                          "bazel build -c opt //cmd/controller-manager "
                          "//cmd/loadtest-runner")) {
      builds = true;
    }
  }
  EXPECT_TRUE(runs_deps) << "the build stage must RUN " << deps_in_image;
  EXPECT_TRUE(builds);
  // deps.sh itself installs Bazel from Debian (the build needs nothing
  // else from outside the archive).
  EXPECT_THAT(ReadFile("third_party/deps.sh"), HasSubstr("bazel-bootstrap"));
}

TEST_F(DockerfileTest, RuntimeStageInstallsExactlyTheLibrariesTheBinariesLink) {
  EXPECT_EQ(stages_[1][0].args, "debian:12-slim");
  std::set<std::string> installed;
  for (const std::string& run : All(1, "RUN")) {
    for (const std::string& p : AptInstalls(run)) installed.insert(p);
  }
  // Each binary's NEEDED sonames and the files ldd finds for them.
  std::map<std::string, std::vector<std::pair<std::string, std::string>>>
      libraries;
  std::set<std::string> paths;
  for (const char* binary : kBinaries) {
    ProcessResult ldd = RunProcess({"/usr/bin/ldd", binary}, {});
    ASSERT_EQ(ldd.exit_code, 0) << binary << ": " << ldd.err;
    std::vector<std::string> sonames = Needed(binary);
    ASSERT_FALSE(sonames.empty()) << binary;
    for (const std::string& soname : sonames) {
      const std::string path = Resolve(ldd.out, soname);
      ASSERT_FALSE(path.empty()) << binary << ": ldd cannot find " << soname;
      libraries[binary].emplace_back(soname, path);
      paths.insert(path);
    }
  }
  const std::map<std::string, std::string> owner = PackagesOf(paths);
  std::set<std::string> needed;
  for (const auto& [binary, libs] : libraries) {
    for (const auto& [soname, path] : libs) {
      const std::string& package = owner.at(path);
      ASSERT_FALSE(package.empty()) << binary << ": no package holds " << path;
      if (SanitizerPackages().count(package) != 0) continue;
      needed.insert(package);
      EXPECT_EQ(installed.count(package), 1u)
          << binary << " links " << soname << " (" << path << ") from package "
          << package << ", which the runtime stage does not install";
    }
  }
  for (const std::string& package : installed) {
    EXPECT_EQ(needed.count(package), 1u)
        << "the runtime stage installs " << package
        << ", which holds none of the binaries' shared libraries";
  }
}

TEST_F(DockerfileTest, RuntimeStageRunsTheManagerAsTheDeploymentsUser) {
  EXPECT_THAT(All(1, "COPY"),
              ElementsAre("--from=build /out/controller-manager "
                          "/usr/local/bin/controller-manager",
                          "--from=build /out/loadtest-runner "
                          "/usr/local/bin/loadtest-runner"));
  EXPECT_THAT(All(1, "ENTRYPOINT"),
              ElementsAre("[\"/usr/local/bin/controller-manager\"]"));
  // The last USER, numeric (runAsNonRoot can only check a number) and not
  // root, after every RUN.
  int last_run = -1, last_user = -1;
  for (int i = 0; i < static_cast<int>(stages_[1].size()); ++i) {
    if (stages_[1][i].keyword == "RUN") last_run = i;
    if (stages_[1][i].keyword == "USER") last_user = i;
  }
  ASSERT_GT(last_user, last_run) << "USER must come after the last RUN";
  std::vector<std::string> ids =
      absl::StrSplit(stages_[1][last_user].args, ':');
  int uid = -1, gid = -1;
  ASSERT_TRUE(absl::SimpleAtoi(ids[0], &uid)) << "USER must be numeric";
  ASSERT_EQ(ids.size(), 2u) << "USER uid:gid";
  ASSERT_TRUE(absl::SimpleAtoi(ids[1], &gid));
  EXPECT_NE(uid, 0);
  // The Deployment runs as the same uid and gid.
  const std::string deployment = ReadFile(kDeployment);
  EXPECT_THAT(deployment, HasSubstr(absl::StrCat("runAsUser: ", uid, "\n")));
  EXPECT_THAT(deployment, HasSubstr(absl::StrCat("runAsGroup: ", gid, "\n")));
}

}  // namespace
}  // namespace kcr::e2e

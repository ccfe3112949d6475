#include "cmd/kcr/scaffold.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cmd/kcr/templates.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kcr::scaffold {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::Each;
using ::testing::HasSubstr;
using ::testing::IsSupersetOf;
using ::testing::Not;
using ::testing::StartsWith;

std::string Read(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void Write(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

// A fresh folder under the test's temporary directory.
fs::path TempDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  fs::path dir = fs::path(tmp != nullptr ? tmp : "/tmp") / name;
  fs::remove_all(dir);
  return dir;
}

Resource Guestbook() {
  return {.group = "webapp", .version = "v1", .kind = "Guestbook"};
}

Resource MemCached() {
  return {.group = "cache",
          .version = "v1beta1",
          .kind = "MemCached",
          .namespaced = false,
          .model = Model::kHandlers};
}

Project Sample(const std::string& build) {
  return {.name = "guestbook",
          .domain = "example.com",
          .build = build,
          .kcr_path = "/src/kcr",
          .resources = {Guestbook(), MemCached()}};
}

std::set<std::string> Paths(const std::map<std::string, std::string>& files) {
  std::set<std::string> out;
  for (const auto& [path, text] : files) out.insert(path);
  return out;
}

TEST(NamesTest, Kinds) {
  EXPECT_TRUE(ValidateKind("Guestbook").ok());
  EXPECT_TRUE(ValidateKind("HTTPRoute2").ok());
  for (const char* bad :
       {"", "guestbook", "Guest-book", "Guest_book", "9Lives", "Guest book"}) {
    absl::Status s = ValidateKind(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << bad;
    EXPECT_THAT(std::string(s.message()), HasSubstr("CamelCase")) << bad;
  }
}

TEST(NamesTest, GroupsAndDomains) {
  EXPECT_TRUE(ValidateGroup("webapp").ok());
  EXPECT_TRUE(ValidateGroup("batch.tutorial").ok());
  EXPECT_TRUE(ValidateDomain("example.com").ok());
  for (const char* bad : {"", "WebApp", "web_app", "-web", "web.", "a..b"}) {
    EXPECT_TRUE(absl::IsInvalidArgument(ValidateGroup(bad))) << bad;
    EXPECT_TRUE(absl::IsInvalidArgument(ValidateDomain(bad))) << bad;
  }
  EXPECT_THAT(std::string(ValidateGroup("Web").message()),
              HasSubstr("DNS subdomain"));
}

TEST(NamesTest, Versions) {
  for (const char* good : {"v1", "v2", "v10", "v1beta1", "v2alpha3"}) {
    EXPECT_TRUE(ValidateVersion(good).ok()) << good;
  }
  for (const char* bad : {"", "1", "v", "v0", "v01", "V1", "v1beta", "v1gamma1",
                          "v1beta0", "v1.2", "v1alpha1x"}) {
    absl::Status s = ValidateVersion(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << bad;
    EXPECT_THAT(std::string(s.message()), HasSubstr("v1beta1")) << bad;
  }
}

TEST(NamesTest, ProjectNamesAndBuilds) {
  EXPECT_TRUE(ValidateProjectName("guestbook-operator").ok());
  EXPECT_FALSE(ValidateProjectName("Guestbook").ok());
  EXPECT_FALSE(ValidateProjectName("guest_book").ok());
  EXPECT_FALSE(ValidateProjectName("1guestbook").ok());
  EXPECT_TRUE(ValidateBuild("bazel").ok());
  EXPECT_TRUE(ValidateBuild("cmake").ok());
  EXPECT_FALSE(ValidateBuild("make").ok());
}

TEST(NamesTest, SnakeCaseAndPlural) {
  EXPECT_EQ(SnakeCase("Guestbook"), "guestbook");
  EXPECT_EQ(SnakeCase("GuestBook"), "guest_book");
  EXPECT_EQ(SnakeCase("HTTPRoute"), "http_route");
  EXPECT_EQ(SnakeCase("CronJob2"), "cron_job2");
  EXPECT_EQ(Plural("Guestbook"), "guestbooks");
  EXPECT_EQ(Plural("Policy"), "policies");
  EXPECT_EQ(Plural("Gateway"), "gateways");
  EXPECT_EQ(Plural("Ingress"), "ingresses");
  EXPECT_EQ(Plural("Box"), "boxes");
  EXPECT_EQ(Plural("Batch"), "batches");
}

TEST(RenderTest, SubstitutesAndLeavesBracesAlone) {
  auto out = Render("a {{X}} b {{X}}{{Y}} m{{\"k\", 1}} {{}}",
                    {{"X", "1"}, {"Y", "2"}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, "a 1 b 12 m{{\"k\", 1}} {{}}");
}

TEST(RenderTest, UnknownPlaceholderIsAnError) {
  auto out = Render("{{Nope}}", {{"X", "1"}});
  EXPECT_TRUE(absl::IsInvalidArgument(out.status()));
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("{{Nope}}"));
}

TEST(InsertAtMarkerTest, InsertsIndentedOnceAboveTheMarker) {
  const std::string text = "deps = [\n    \"a\",\n    # +m\n]\n";
  auto once = InsertAtMarker(text, "# +m", "\"b\",\n\"c\",\n");
  ASSERT_TRUE(once.ok()) << once.status();
  EXPECT_EQ(*once,
            "deps = [\n    \"a\",\n    \"b\",\n    \"c\",\n    # +m\n]\n");
  auto twice = InsertAtMarker(*once, "# +m", "\"b\",\n\"c\",\n");
  ASSERT_TRUE(twice.ok());
  EXPECT_EQ(*twice, *once);
  EXPECT_TRUE(absl::IsNotFound(InsertAtMarker(text, "# +x", "y").status()));
}

TEST(ProjectTest, RoundTrips) {
  const Project p = Sample("cmake");
  auto parsed = ParseProject(FormatProject(p));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(FormatProject(*parsed), FormatProject(p));
  ASSERT_EQ(parsed->resources.size(), 2u);
  EXPECT_FALSE(parsed->resources[1].namespaced);
  EXPECT_EQ(parsed->resources[1].model, Model::kHandlers);
  Project empty = p;
  empty.resources.clear();
  auto parsed_empty = ParseProject(FormatProject(empty));
  ASSERT_TRUE(parsed_empty.ok());
  EXPECT_TRUE(parsed_empty->resources.empty());
  EXPECT_FALSE(ParseProject("resources: []\n").ok());
}

// Every placeholder of every template is substituted.
void ExpectNoPlaceholders(const std::map<std::string, std::string>& files) {
  const std::regex placeholder(R"(\{\{[A-Za-z]+\}\}|__[A-Za-z]+__)");
  for (const auto& [path, text] : files) {
    EXPECT_FALSE(std::regex_search(path, placeholder)) << path;
    EXPECT_FALSE(std::regex_search(text, placeholder)) << path;
  }
}

const std::vector<std::string> kCommonFiles = {
    "PROJECT",
    "README.md",
    ".gitignore",
    ".dockerignore",
    "Makefile",
    "Dockerfile",
    "cmd/manager/main.cc",
    "config/crd/kustomization.yaml",
    "config/default/kustomization.yaml",
    "config/manager/kustomization.yaml",
    "config/manager/manager.yaml",
    "config/manager/namespace.yaml",
    "config/rbac/kustomization.yaml",
    "config/rbac/leader_election_role.yaml",
    "config/rbac/leader_election_role_binding.yaml",
    "config/rbac/role.yaml",
    "config/rbac/role_binding.yaml",
    "config/rbac/service_account.yaml",
    "config/crd/bases/webapp.example.com_guestbooks.yaml",
    "config/samples/webapp_v1_guestbook.yaml",
    "controllers/guestbook/guestbook_types.h",
    "controllers/guestbook/guestbook_types.cc",
    "controllers/guestbook/guestbook_controller.h",
    "controllers/guestbook/guestbook_controller.cc",
    "controllers/guestbook/guestbook_controller_test.cc",
    "config/crd/bases/cache.example.com_memcacheds.yaml",
    "config/samples/cache_v1beta1_mem_cached.yaml",
    "controllers/mem_cached/mem_cached_types.h",
    "controllers/mem_cached/mem_cached_types.cc",
    "controllers/mem_cached/mem_cached_handlers.h",
    "controllers/mem_cached/mem_cached_handlers.cc",
    "controllers/mem_cached/mem_cached_handlers_test.cc",
};

TEST(ProjectFilesTest, Bazel) {
  auto files = ProjectFiles(Sample("bazel"));
  ASSERT_TRUE(files.ok()) << files.status();
  std::vector<std::string> want = kCommonFiles;
  want.insert(want.end(),
              {"WORKSPACE", ".bazelrc", "BUILD.bazel",
               "cmd/manager/BUILD.bazel", "controllers/guestbook/BUILD.bazel",
               "controllers/mem_cached/BUILD.bazel"});
  EXPECT_EQ(Paths(*files), std::set<std::string>(want.begin(), want.end()));
  ExpectNoPlaceholders(*files);
  EXPECT_THAT(files->at("WORKSPACE"), HasSubstr("path = \"/src/kcr\""));
  EXPECT_THAT(files->at("WORKSPACE"), HasSubstr("kcr_dependencies()"));
  EXPECT_THAT(files->at("cmd/manager/BUILD.bazel"),
              HasSubstr("\"//controllers/guestbook\",\n        "
                        "\"//controllers/mem_cached\",\n        # "
                        "+kcr:scaffold:deps"));
  EXPECT_THAT(files->at("controllers/guestbook/BUILD.bazel"),
              HasSubstr("@kcr//:envtest"));
  EXPECT_THAT(files->at(".bazelrc"), HasSubstr("processwrapper-sandbox"));
}

TEST(ProjectFilesTest, CMake) {
  auto files = ProjectFiles(Sample("cmake"));
  ASSERT_TRUE(files.ok()) << files.status();
  std::vector<std::string> want = kCommonFiles;
  want.insert(want.end(),
              {"CMakeLists.txt", "controllers/guestbook/CMakeLists.txt",
               "controllers/mem_cached/CMakeLists.txt"});
  EXPECT_EQ(Paths(*files), std::set<std::string>(want.begin(), want.end()));
  ExpectNoPlaceholders(*files);
  const std::string& cmake = files->at("CMakeLists.txt");
  EXPECT_THAT(cmake, HasSubstr("find_package(kcr CONFIG REQUIRED)"));
  EXPECT_THAT(cmake, HasSubstr("add_subdirectory(controllers/guestbook)\n"
                               "add_subdirectory(controllers/mem_cached)\n"));
  EXPECT_THAT(cmake, HasSubstr("  guestbook\n  mem_cached\n"));
  EXPECT_THAT(files->at("controllers/mem_cached/CMakeLists.txt"),
              HasSubstr("kcr::envtest"));
}

TEST(ProjectFilesTest, KindsAreWiredIntoMainAndRbac) {
  auto files = ProjectFiles(Sample("bazel"));
  ASSERT_TRUE(files.ok()) << files.status();
  const std::string& main = files->at("cmd/manager/main.cc");
  EXPECT_THAT(main,
              HasSubstr("#include "
                        "\"controllers/guestbook/guestbook_controller.h\""));
  EXPECT_THAT(main,
              HasSubstr("added = guestbook::AddGuestbookController(**mgr);"));
  EXPECT_THAT(main,
              HasSubstr("guestbook::RegisterMemCachedHandlers(registry);"));
  const std::string& role = files->at("config/rbac/role.yaml");
  EXPECT_THAT(role, HasSubstr("resources: [\"guestbooks/status\"]"));
  EXPECT_THAT(role, HasSubstr("resources: [\"memcacheds/status\"]"));
  EXPECT_THAT(files->at("config/crd/bases/cache.example.com_memcacheds.yaml"),
              HasSubstr("scope: Cluster"));
  EXPECT_THAT(files->at("config/samples/webapp_v1_guestbook.yaml"),
              HasSubstr("namespace: default"));
  EXPECT_THAT(files->at("config/samples/cache_v1beta1_mem_cached.yaml"),
              Not(HasSubstr("namespace:")));
  EXPECT_THAT(files->at("controllers/guestbook/guestbook_types.h"),
              HasSubstr("kNamespaced = true;"));
  EXPECT_THAT(files->at("controllers/mem_cached/mem_cached_types.h"),
              HasSubstr("kPlural[] = \"memcacheds\";"));
}

TEST(BuiltFromTest, IsThisCheckout) {
  ASSERT_NE(std::string(kBuiltFrom), "");
  EXPECT_TRUE(fs::exists(fs::path(kBuiltFrom) / "repositories.bzl"))
      << kBuiltFrom;
}

class CommandsTest : public ::testing::Test {
 protected:
  void SetUp() override { root_ = TempDir("project"); }

  InitOptions Init(std::string build = "bazel") {
    return {.repo = root_.string(),
            .domain = "example.com",
            .build = std::move(build),
            .kcr_path = "/src/kcr"};
  }
  CreateOptions Create(Resource r) {
    return {.repo = root_.string(), .resource = std::move(r)};
  }

  fs::path root_;
};

TEST_F(CommandsTest, InitWritesThenIsANoOp) {
  auto first = scaffold::Init(Init());
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_THAT(*first, Each(StartsWith("create ")));
  EXPECT_THAT(*first, Contains("create cmd/manager/main.cc"));
  EXPECT_EQ(ParseProject(Read(root_ / "PROJECT"))->name, "project");
  auto again = scaffold::Init(Init());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->size(), first->size());
  EXPECT_THAT(*again, Each(StartsWith("unchanged ")));
}

TEST_F(CommandsTest, RefusesAChangedFileUnlessForced) {
  ASSERT_TRUE(scaffold::Init(Init()).ok());
  const std::string readme = Read(root_ / "README.md");
  Write(root_ / "README.md", "mine\n");
  fs::remove(root_ / "Makefile");
  auto refused = scaffold::Init(Init());
  EXPECT_TRUE(absl::IsFailedPrecondition(refused.status()));
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("refusing to overwrite README.md"));
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("--force"));
  // Nothing written: not even the missing file.
  EXPECT_EQ(Read(root_ / "README.md"), "mine\n");
  EXPECT_FALSE(fs::exists(root_ / "Makefile"));

  InitOptions forced = Init();
  forced.force = true;
  auto overwritten = scaffold::Init(forced);
  ASSERT_TRUE(overwritten.ok()) << overwritten.status();
  EXPECT_THAT(*overwritten, Contains("overwrite README.md"));
  EXPECT_THAT(*overwritten, Contains("create Makefile"));
  EXPECT_EQ(Read(root_ / "README.md"), readme);
}

TEST_F(CommandsTest, CreateInsertsOnceAndReRunsAreNoOps) {
  ASSERT_TRUE(scaffold::Init(Init()).ok());
  auto created = scaffold::Create(Create(Guestbook()));
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_THAT(
      *created,
      IsSupersetOf({"create controllers/guestbook/guestbook_controller.cc",
                    "update cmd/manager/main.cc",
                    "update cmd/manager/BUILD.bazel",
                    "update config/rbac/role.yaml", "update PROJECT"}));
  const std::string main = Read(root_ / "cmd/manager/main.cc");
  auto again = scaffold::Create(Create(Guestbook()));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_THAT(*again, Each(StartsWith("unchanged ")));
  EXPECT_EQ(Read(root_ / "cmd/manager/main.cc"), main);
  // init again knows the kind's lines in the files it made.
  auto init_again = scaffold::Init(Init());
  ASSERT_TRUE(init_again.ok()) << init_again.status();
  EXPECT_THAT(*init_again, Each(StartsWith("unchanged ")));
  // The whole tree is what ProjectFiles says.
  auto files = ProjectFiles(*ParseProject(Read(root_ / "PROJECT")));
  ASSERT_TRUE(files.ok());
  for (const auto& [path, text] : *files) {
    EXPECT_EQ(Read(root_ / path), text) << path;
  }
}

TEST_F(CommandsTest, CreateKeepsWhatTheUserWroteInMain) {
  ASSERT_TRUE(scaffold::Init(Init()).ok());
  ASSERT_TRUE(scaffold::Create(Create(Guestbook())).ok());
  const fs::path main = root_ / "cmd/manager/main.cc";
  Write(main, Read(main) + "// mine\n");
  auto created = scaffold::Create(Create(MemCached()));
  ASSERT_TRUE(created.ok()) << created.status();
  const std::string text = Read(main);
  EXPECT_THAT(text, HasSubstr("// mine\n"));
  EXPECT_THAT(text, HasSubstr("project::RegisterMemCachedHandlers(registry);"));
  // The guestbook's lines are there once.
  const std::string line = "project::AddGuestbookController(**mgr);";
  EXPECT_EQ(text.find(line), text.rfind(line));
  // init would now overwrite the user's main.cc: it refuses.
  EXPECT_TRUE(absl::IsFailedPrecondition(scaffold::Init(Init()).status()));
}

TEST_F(CommandsTest, CreateRefusesAChangedKindFileUnlessForced) {
  ASSERT_TRUE(scaffold::Init(Init()).ok());
  ASSERT_TRUE(scaffold::Create(Create(Guestbook())).ok());
  const fs::path cc = root_ / "controllers/guestbook/guestbook_controller.cc";
  const std::string generated = Read(cc);
  Write(cc, "// mine\n");
  auto refused = scaffold::Create(Create(Guestbook()));
  EXPECT_TRUE(absl::IsFailedPrecondition(refused.status()));
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("controllers/guestbook/guestbook_controller.cc"));
  EXPECT_EQ(Read(cc), "// mine\n");
  CreateOptions forced = Create(Guestbook());
  forced.force = true;
  ASSERT_TRUE(scaffold::Create(forced).ok());
  EXPECT_EQ(Read(cc), generated);
}

TEST_F(CommandsTest, CreateNeedsTheMarkersAndAProject) {
  EXPECT_TRUE(absl::IsFailedPrecondition(
      scaffold::Create(Create(Guestbook())).status()));
  ASSERT_TRUE(scaffold::Init(Init()).ok());
  const fs::path role = root_ / "config/rbac/role.yaml";
  std::string text = Read(role);
  text.erase(text.find("  # +kcr:scaffold:rules"));
  Write(role, text);
  auto refused = scaffold::Create(Create(Guestbook()));
  EXPECT_TRUE(absl::IsFailedPrecondition(refused.status()));
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("+kcr:scaffold:rules"));
  // Nothing was written.
  EXPECT_FALSE(fs::exists(root_ / "controllers/guestbook"));
  EXPECT_TRUE(ParseProject(Read(root_ / "PROJECT"))->resources.empty());
}

TEST_F(CommandsTest, CreateRefusesBadNamesAndAnotherModel) {
  ASSERT_TRUE(scaffold::Init(Init("cmake")).ok());
  Resource bad = Guestbook();
  bad.kind = "guestbook";
  EXPECT_TRUE(absl::IsInvalidArgument(scaffold::Create(Create(bad)).status()));
  bad = Guestbook();
  bad.version = "1";
  EXPECT_TRUE(absl::IsInvalidArgument(scaffold::Create(Create(bad)).status()));
  bad = Guestbook();
  bad.group = "Web_App";
  EXPECT_TRUE(absl::IsInvalidArgument(scaffold::Create(Create(bad)).status()));
  ASSERT_TRUE(scaffold::Create(Create(Guestbook())).ok());
  Resource other = Guestbook();
  other.model = Model::kHandlers;
  EXPECT_TRUE(absl::IsAlreadyExists(scaffold::Create(Create(other)).status()));
  EXPECT_THAT(Read(root_ / "CMakeLists.txt"),
              HasSubstr("add_subdirectory(controllers/guestbook)"));
}

TEST_F(CommandsTest, InitRefusesBadOptions) {
  InitOptions o = Init();
  o.domain = "Example.com";
  EXPECT_TRUE(absl::IsInvalidArgument(scaffold::Init(o).status()));
  o = Init();
  o.build = "make";
  EXPECT_TRUE(absl::IsInvalidArgument(scaffold::Init(o).status()));
  o = Init();
  o.project_name = "Bad_Name";
  EXPECT_TRUE(absl::IsInvalidArgument(scaffold::Init(o).status()));
  EXPECT_FALSE(fs::exists(root_));
}

}  // namespace
}  // namespace kcr::scaffold

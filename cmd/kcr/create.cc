// kcr create api and kcr create handlers: their flags and what they do
// with them.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/flags.h"
#include "cmd/kcr/commands.h"
#include "gflags/gflags.h"

DECLARE_string(repo);
DECLARE_bool(force);

DEFINE_string(group, "",
              "The kind's API group without the domain, a DNS subdomain "
              "(required).");
// --version on the command line: gflags has a --version of its own.
DEFINE_string(api_version, "",
              "The kind's API version, given as --version: v1, v1beta1, "
              "v2alpha1... (required).");
DEFINE_string(kind, "", "The kind, in CamelCase (required).");
DEFINE_bool(namespaced, true,
            "Whether the kind's objects live in namespaces "
            "(--namespaced=false: cluster-scoped).");

namespace kcr::scaffold {

int RunCreate(Model model, int argc, char** argv) {
  const std::string command = argv[0];
  const bool handlers = model == Model::kHandlers;
  const kcr::ProgramInfo program{
      .name = command,
      .usage = absl::StrCat(command,
                            " --group <group> --version <version> --kind "
                            "<Kind> [--namespaced=true|false]"),
      .about = absl::StrCat(
          "Adds a kind to the project in --repo (default the current "
          "folder): its CRD (config/crd/bases) with a spec/status schema "
          "and the status subresource, a typed view "
          "(controllers/<kind>/<kind>_types.h), ",
          handlers ? "kopf-style handlers (runtime/handlers) registered "
                     "in cmd/manager/main.cc"
                   : "a reconciler added to the manager in "
                     "cmd/manager/main.cc",
          ", its RBAC rules, a sample (config/samples) and a test that "
          "runs it against an embedded API server."),
      .flag_files = {"cmd/kcr/main.cc", "cmd/kcr/create.cc"}};
  // --version is --api-version (see its definition).
  std::vector<std::string> renamed(argv, argv + argc);
  for (size_t i = 1; i < renamed.size(); ++i) {
    std::string& a = renamed[i];
    if (a == "--") break;
    for (const char* prefix : {"--version", "-version"}) {
      const std::string p = prefix;
      if (a == p || a.rfind(p + "=", 0) == 0) {
        a = "--api-version" + a.substr(p.size());
        break;
      }
    }
  }
  std::vector<char*> renamed_argv;
  for (std::string& a : renamed) renamed_argv.push_back(a.data());
  const std::vector<std::string> args = kcr::ParseFlagsOrExit(
      program, static_cast<int>(renamed_argv.size()), renamed_argv.data());
  if (!args.empty()) {
    return UsageError(command, absl::StrCat("unexpected argument \"", args[0],
                                            "\" (it takes flags only)"));
  }
  if (FLAGS_group.empty()) return UsageError(command, "--group is required");
  if (FLAGS_api_version.empty()) {
    return UsageError(command, "--version is required");
  }
  if (FLAGS_kind.empty()) return UsageError(command, "--kind is required");
  CreateOptions options;
  options.repo = FLAGS_repo.empty() ? "." : FLAGS_repo;
  options.resource.group = FLAGS_group;
  options.resource.version = FLAGS_api_version;
  options.resource.kind = FLAGS_kind;
  options.resource.namespaced = FLAGS_namespaced;
  options.resource.model = model;
  options.force = FLAGS_force;
  return Finish(command.c_str(), Create(options));
}

}  // namespace kcr::scaffold

// kcr init: its flags and what it does with them.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/flags.h"
#include "cmd/kcr/commands.h"
#include "gflags/gflags.h"

DECLARE_string(repo);
DECLARE_bool(force);

DEFINE_string(domain, "",
              "The domain of the project's API groups: a kind of group "
              "webapp is in webapp.<domain> (required).");
DEFINE_string(build, "bazel",
              "The project's build system: bazel (a workspace depending on "
              "kcr with local_repository) or cmake (find_package(kcr) of "
              "an installed kcr).");
DEFINE_string(kcr_path, "",
              "The kcr checkout a bazel project depends on (default: the "
              "one this kcr was built from).");
DEFINE_string(project_name, "",
              "The project's name, a DNS label (default: the folder's "
              "name).");
namespace kcr::scaffold {

int RunInit(int argc, char** argv) {
  const std::string command = argv[0];
  const kcr::ProgramInfo program{
      .name = command,
      .usage = "kcr init --repo <dir> --domain <domain> [--build bazel|cmake]",
      .about =
          "Makes a new operator project in --repo: a manager (cmd/manager) "
          "that runs its controllers against a cluster or, with "
          "--embedded, an API server of its own; a Makefile (make run, "
          "make test), manifests under config/ (namespace, RBAC, "
          "Deployment, kustomizations), a Dockerfile and a README. Then "
          "add kinds with `kcr create api` or `kcr create handlers`.",
      .flag_files = {"cmd/kcr/main.cc", "cmd/kcr/init.cc"}};
  const std::vector<std::string> args =
      kcr::ParseFlagsOrExit(program, argc, argv);
  if (!args.empty()) {
    return UsageError(command, absl::StrCat("unexpected argument \"", args[0],
                                            "\" (it takes flags only)"));
  }
  if (FLAGS_repo.empty()) return UsageError(command, "--repo is required");
  if (FLAGS_domain.empty()) return UsageError(command, "--domain is required");
  InitOptions options;
  options.repo = FLAGS_repo;
  options.domain = FLAGS_domain;
  options.build = FLAGS_build;
  options.kcr_path = FLAGS_kcr_path;
  options.project_name = FLAGS_project_name;
  options.force = FLAGS_force;
  return Finish(command.c_str(), Init(options));
}

}  // namespace kcr::scaffold

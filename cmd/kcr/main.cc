// kcr: scaffolds operator projects on kcr, as kubebuilder does for Go.
//
//   kcr init --repo guestbook --domain example.com [--build bazel|cmake]
//   cd guestbook
//   kcr create api --group webapp --version v1 --kind Guestbook
//   kcr create handlers --group webapp --version v1 --kind Memcached
//   make test    # the generated tests, against an embedded API server
//   make run     # the manager, on an embedded API server
//
// `kcr --help` lists the commands, `kcr <command> --help` a command's
// flags. Exit codes: 0 done, 1 failed, 2 bad usage.
#include <iostream>
#include <string>

#include "cmd/kcr/commands.h"
#include "cmd/kcr/scaffold.h"
#include "gflags/gflags.h"

DEFINE_string(repo, "",
              "The project's folder (init: made if missing; create: "
              "default the current folder).");
DEFINE_bool(force, false,
            "Overwrite generated files that were changed since kcr wrote "
            "them.");

namespace {

constexpr char kUsage[] =
    "kcr: scaffolds Kubernetes operator projects on kcr, the C++ "
    "controller runtime.\n"
    "\n"
    "Usage:\n"
    "  kcr [command] [flags]\n"
    "\n"
    "Commands:\n"
    "  init              Make a new project: a manager, its Makefile, "
    "manifests, a Dockerfile\n"
    "  create api        Add a kind with a reconciler (runtime/controller)\n"
    "  create handlers   Add a kind with kopf-style handlers "
    "(runtime/handlers)\n"
    "\n"
    "Flags:\n"
    "  -h, --help   help for kcr\n"
    "\n"
    "Use \"kcr [command] --help\" for more about a command.\n";

int BadUsage(const std::string& why) {
  std::cerr << "kcr: " << why << " (see kcr --help)\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string command = argv[1];
  if (command == "-h" || command == "--help" || command == "help") {
    std::cout << kUsage;
    return 0;
  }
  if (command == "init") {
    argv[1] = const_cast<char*>("kcr init");
    return kcr::scaffold::RunInit(argc - 1, argv + 1);
  }
  if (command == "create") {
    if (argc < 3 || argv[2][0] == '-') {
      if (argc >= 3 &&
          (std::string(argv[2]) == "-h" || std::string(argv[2]) == "--help")) {
        std::cout << "Add a kind to the project.\n\nUsage:\n"
                     "  kcr create api [flags]\n"
                     "  kcr create handlers [flags]\n";
        return 0;
      }
      return BadUsage("create needs what to create: api or handlers");
    }
    const std::string what = argv[2];
    if (what == "api") {
      argv[2] = const_cast<char*>("kcr create api");
      return kcr::scaffold::RunCreate(kcr::scaffold::Model::kReconciler,
                                      argc - 2, argv + 2);
    }
    if (what == "handlers") {
      argv[2] = const_cast<char*>("kcr create handlers");
      return kcr::scaffold::RunCreate(kcr::scaffold::Model::kHandlers, argc - 2,
                                      argv + 2);
    }
    return BadUsage("unknown command \"create " + what +
                    "\" (known: create api, create handlers)");
  }
  if (command[0] == '-') return BadUsage("unknown flag: " + command);
  return BadUsage("unknown command \"" + command +
                  "\" (known: init, create api, create handlers)");
}

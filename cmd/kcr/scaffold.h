// The scaffolder behind `kcr init` and `kcr create api|handlers`: it
// renders the templates compiled into the binary (templates.h) into a
// project folder, the way kubebuilder does for Go.
//
// A project remembers what was scaffolded in its PROJECT file (the name,
// domain, build system and kcr checkout from `init`, and one entry per
// kind from `create`), so that every command knows what every generated
// file should hold. Writing is safe to repeat:
//   - a missing file is created; a file that already holds what kcr would
//     write is left alone ("unchanged");
//   - a file that differs (changed by hand, or made by someone else) is
//     never overwritten: the command writes nothing and fails naming the
//     files, unless `force` is set;
//   - the files `create` extends (main.cc, the manager's build file, RBAC,
//     kustomizations) get their lines inserted just above a marker comment
//     (`// +kcr:scaffold:<name>`), keeping whatever else the user wrote;
//     lines already present are not inserted again.
#ifndef KCR_CMD_KCR_SCAFFOLD_H_
#define KCR_CMD_KCR_SCAFFOLD_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kcr::scaffold {

// The programming model a kind is scaffolded for.
enum class Model {
  kReconciler,  // runtime/controller: a Reconciler and ControllerBuilder
  kHandlers,    // runtime/handlers: kopf-style handlers on a Registry
};

// One kind created in the project.
struct Resource {
  std::string group;    // without the domain: "webapp"
  std::string version;  // "v1"
  std::string kind;     // "Guestbook"
  bool namespaced = true;
  Model model = Model::kReconciler;
};

// What PROJECT records.
struct Project {
  std::string name;      // "guestbook" (a DNS label)
  std::string domain;    // "example.com"
  std::string build;     // "bazel" or "cmake"
  std::string kcr_path;  // the kcr checkout (bazel); may be empty for cmake
  std::vector<Resource> resources;
};

// Name checks: OK, or InvalidArgument with one line saying what is wrong.
absl::Status ValidateKind(absl::string_view kind);         // CamelCase
absl::Status ValidateGroup(absl::string_view group);       // DNS subdomain
absl::Status ValidateDomain(absl::string_view domain);     // DNS subdomain
absl::Status ValidateVersion(absl::string_view version);   // v1, v1beta1
absl::Status ValidateProjectName(absl::string_view name);  // DNS label
absl::Status ValidateBuild(absl::string_view build);       // bazel, cmake

// "GuestBook" -> "guest_book", "HTTPRoute" -> "http_route".
std::string SnakeCase(absl::string_view kind);
// The lower-case English plural of a kind: "guestbooks", "policies".
std::string Plural(absl::string_view kind);

// {{Name}} replaced by vars.at("Name"); InvalidArgument naming a
// placeholder that `vars` lacks.
absl::StatusOr<std::string> Render(
    absl::string_view text, const std::map<std::string, std::string>& vars);

// Inserts `fragment` (lines without indentation) above the line holding
// `marker`, each line indented as the marker's line. Unchanged when the
// indented fragment is already there; NotFound when the marker is not.
absl::StatusOr<std::string> InsertAtMarker(absl::string_view content,
                                           absl::string_view marker,
                                           absl::string_view fragment);

// PROJECT's text and back.
std::string FormatProject(const Project& project);
absl::StatusOr<Project> ParseProject(absl::string_view text);

struct InitOptions {
  std::string repo;  // the project folder (made if missing)
  std::string domain;
  std::string build = "bazel";
  std::string kcr_path;      // "": PROJECT's, else the built-from path
  std::string project_name;  // "": the folder's name
  bool force = false;
};

struct CreateOptions {
  std::string repo = ".";
  Resource resource;
  bool force = false;
};

// What a command did, one line per file: "create PATH", "unchanged PATH",
// "overwrite PATH", "update PATH" (lines inserted at markers).
using Report = std::vector<std::string>;

// kcr init. InvalidArgument for a bad name or option; FailedPrecondition
// (nothing written) when files differ and !force.
absl::StatusOr<Report> Init(const InitOptions& options);
// kcr create api / kcr create handlers: as Init, plus FailedPrecondition
// when the folder holds no PROJECT or a marker is missing, and
// AlreadyExists when the kind was created with the other model.
absl::StatusOr<Report> Create(const CreateOptions& options);

// Every file a project as `project` says consists of, with what kcr writes
// into it (for tests).
absl::StatusOr<std::map<std::string, std::string>> ProjectFiles(
    const Project& project);

}  // namespace kcr::scaffold

#endif  // KCR_CMD_KCR_SCAFFOLD_H_

#include "cmd/kcr/scaffold.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cmd/kcr/templates.h"

namespace kcr::scaffold {
namespace {

namespace fs = std::filesystem;

using Vars = std::map<std::string, std::string>;

constexpr char kProjectFile[] = "PROJECT";

// A line inserted into a file that `init` made, above a marker.
struct Insertion {
  const char* build;  // "" for every build system
  const char* file;
  const char* marker;
  const char* fragment;  // a template under fragments/
};

constexpr Insertion kReconcilerInsertions[] = {
    {"", "cmd/manager/main.cc", "// +kcr:scaffold:includes",
     "fragments/api/main_include"},
    {"", "cmd/manager/main.cc", "// +kcr:scaffold:controllers",
     "fragments/api/main_controller"},
    {"bazel", "cmd/manager/BUILD.bazel", "# +kcr:scaffold:deps",
     "fragments/common/bazel_dep"},
    {"cmake", "CMakeLists.txt", "# +kcr:scaffold:subdirectories",
     "fragments/common/cmake_subdirectory"},
    {"cmake", "CMakeLists.txt", "# +kcr:scaffold:manager-libraries",
     "fragments/common/cmake_library"},
    {"", "config/rbac/role.yaml", "# +kcr:scaffold:rules",
     "fragments/api/rbac_rules"},
    {"", "config/crd/kustomization.yaml", "# +kcr:scaffold:crds",
     "fragments/common/crd_resource"},
};

constexpr Insertion kHandlersInsertions[] = {
    {"", "cmd/manager/main.cc", "// +kcr:scaffold:includes",
     "fragments/handlers/main_include"},
    {"", "cmd/manager/main.cc", "// +kcr:scaffold:handlers",
     "fragments/handlers/main_register"},
    {"bazel", "cmd/manager/BUILD.bazel", "# +kcr:scaffold:deps",
     "fragments/common/bazel_dep"},
    {"cmake", "CMakeLists.txt", "# +kcr:scaffold:subdirectories",
     "fragments/common/cmake_subdirectory"},
    {"cmake", "CMakeLists.txt", "# +kcr:scaffold:manager-libraries",
     "fragments/common/cmake_library"},
    {"", "config/rbac/role.yaml", "# +kcr:scaffold:rules",
     "fragments/handlers/rbac_rules"},
    {"", "config/crd/kustomization.yaml", "# +kcr:scaffold:crds",
     "fragments/common/crd_resource"},
};

const char* ModelName(Model model) {
  return model == Model::kHandlers ? "handlers" : "api";
}

std::string Text(const Template& t) {
  // The generator starts each text on the line after its opening quote.
  absl::string_view text = t.text;
  absl::ConsumePrefix(&text, "\n");
  return std::string(text);
}

std::optional<std::string> FindTemplate(absl::string_view path) {
  for (int i = 0; i < kTemplateCount; ++i) {
    if (kTemplates[i].path == path) return Text(kTemplates[i]);
  }
  return std::nullopt;
}

// The templates under `prefix`, keyed by the rest of their path.
std::vector<std::pair<std::string, std::string>> TemplatesUnder(
    absl::string_view prefix) {
  std::vector<std::pair<std::string, std::string>> out;
  for (int i = 0; i < kTemplateCount; ++i) {
    absl::string_view path = kTemplates[i].path;
    if (absl::ConsumePrefix(&path, prefix)) {
      out.emplace_back(std::string(path), Text(kTemplates[i]));
    }
  }
  return out;
}

bool IsDnsLabel(absl::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  for (char c : s) {
    if (!absl::ascii_islower(c) && !absl::ascii_isdigit(c) && c != '-') {
      return false;
    }
  }
  return s.front() != '-' && s.back() != '-';
}

bool IsDnsSubdomain(absl::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  for (absl::string_view label : absl::StrSplit(s, '.')) {
    if (!IsDnsLabel(label)) return false;
  }
  return true;
}

Vars ProjectVars(const Project& p) {
  std::string ns = p.name;
  std::replace(ns.begin(), ns.end(), '-', '_');
  return {{"ProjectName", p.name},
          {"ProjectNs", ns},
          {"ProjectUpper", absl::AsciiStrToUpper(ns)},
          {"Domain", p.domain},
          {"KcrPath", p.kcr_path},
          {"Namespace", p.name + "-system"}};
}

Vars ResourceVars(const Project& p, const Resource& r) {
  Vars vars = ProjectVars(p);
  const std::string snake = SnakeCase(r.kind);
  vars["Kind"] = r.kind;
  vars["KindLower"] = absl::AsciiStrToLower(r.kind);
  vars["KindSnake"] = snake;
  vars["KindUpper"] = absl::AsciiStrToUpper(snake);
  vars["Plural"] = Plural(r.kind);
  vars["GroupShort"] = r.group;
  vars["Group"] = absl::StrCat(r.group, ".", p.domain);
  vars["Version"] = r.version;
  vars["Namespaced"] = r.namespaced ? "true" : "false";
  vars["Scope"] = r.namespaced ? "Namespaced" : "Cluster";
  // The sample's metadata line, for a namespaced kind.
  vars["NamespaceField"] = r.namespaced ? "  namespace: default\n" : "";
  return vars;
}

// A template's path with its __Name__ placeholders (braces make poor file
// names) as {{Name}}.
std::string PathTemplate(absl::string_view path) {
  std::string out;
  size_t i = 0;
  while (i < path.size()) {
    if (path.substr(i, 2) == "__") {
      size_t end = i + 2;
      while (end < path.size() && absl::ascii_isalpha(path[end])) ++end;
      if (end > i + 2 && path.substr(end, 2) == "__") {
        absl::StrAppend(&out, "{{", path.substr(i + 2, end - i - 2), "}}");
        i = end + 2;
        continue;
      }
    }
    out += path[i++];
  }
  return out;
}

// The rendered templates under `prefix`, into `files`; their paths into
// `paths`.
absl::Status RenderUnder(absl::string_view prefix, const Vars& vars,
                         std::map<std::string, std::string>* files,
                         std::set<std::string>* paths) {
  for (const auto& [path, text] : TemplatesUnder(prefix)) {
    absl::StatusOr<std::string> name = Render(PathTemplate(path), vars);
    if (!name.ok()) return name.status();
    absl::StatusOr<std::string> body = Render(text, vars);
    if (!body.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "template ", prefix, path, ": ", body.status().message()));
    }
    (*files)[*name] = *std::move(body);
    if (paths != nullptr) paths->insert(*name);
  }
  return absl::OkStatus();
}

// A resource's insertions for the project's build system, rendered.
struct Rendered {
  std::string file;
  std::string marker;
  std::string fragment;
};

absl::StatusOr<std::vector<Rendered>> InsertionsFor(const Project& p,
                                                    const Resource& r) {
  const Vars vars = ResourceVars(p, r);
  std::vector<Rendered> out;
  auto add = [&](const Insertion& ins) -> absl::Status {
    if (*ins.build != '\0' && p.build != ins.build) return absl::OkStatus();
    std::optional<std::string> text = FindTemplate(ins.fragment);
    if (!text) {
      return absl::InternalError(
          absl::StrCat("no template ", ins.fragment, " in this binary"));
    }
    absl::StatusOr<std::string> fragment = Render(*text, vars);
    if (!fragment.ok()) return fragment.status();
    out.push_back({ins.file, ins.marker, *std::move(fragment)});
    return absl::OkStatus();
  };
  if (r.model == Model::kHandlers) {
    for (const Insertion& ins : kHandlersInsertions) {
      if (absl::Status s = add(ins); !s.ok()) return s;
    }
  } else {
    for (const Insertion& ins : kReconcilerInsertions) {
      if (absl::Status s = add(ins); !s.ok()) return s;
    }
  }
  return out;
}

struct Tree {
  std::map<std::string, std::string> files;
  std::set<std::string> init_paths;                   // init's own files
  std::vector<std::set<std::string>> resource_paths;  // per resource
};

absl::StatusOr<Tree> BuildTree(const Project& p) {
  Tree tree;
  const Vars vars = ProjectVars(p);
  for (const std::string& prefix :
       {std::string("init/common/"), absl::StrCat("init/", p.build, "/")}) {
    if (absl::Status s =
            RenderUnder(prefix, vars, &tree.files, &tree.init_paths);
        !s.ok()) {
      return s;
    }
  }
  tree.files[kProjectFile] = FormatProject(p);
  tree.init_paths.insert(kProjectFile);
  for (const Resource& r : p.resources) {
    const Vars rvars = ResourceVars(p, r);
    std::set<std::string>& paths = tree.resource_paths.emplace_back();
    for (const std::string& prefix :
         {std::string("kind/common/"),
          absl::StrCat(ModelName(r.model), "/common/"),
          absl::StrCat(ModelName(r.model), "/", p.build, "/")}) {
      if (absl::Status s = RenderUnder(prefix, rvars, &tree.files, &paths);
          !s.ok()) {
        return s;
      }
    }
    absl::StatusOr<std::vector<Rendered>> insertions = InsertionsFor(p, r);
    if (!insertions.ok()) return insertions.status();
    for (const Rendered& ins : *insertions) {
      absl::StatusOr<std::string> updated =
          InsertAtMarker(tree.files[ins.file], ins.marker, ins.fragment);
      if (!updated.ok()) {
        return absl::InternalError(absl::StrCat("template of ", ins.file, ": ",
                                                updated.status().message()));
      }
      tree.files[ins.file] = *std::move(updated);
    }
  }
  return tree;
}

std::optional<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

absl::Status WriteFile(const fs::path& path, const std::string& content) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) {
    return absl::PermissionDeniedError(absl::StrCat(
        "cannot create ", path.parent_path().string(), ": ", ec.message()));
  }
  const fs::path tmp = path.string() + ".kcr-tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << content;
    if (!out) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot write ", path.string()));
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot write ", path.string(), ": ", ec.message()));
  }
  return absl::OkStatus();
}

// What to write, decided before anything is written.
struct Plan {
  std::vector<std::pair<std::string, std::string>> writes;  // path, content
  Report report;
  std::vector<std::string> conflicts;
};

// Adds `path` with `content`: created, unchanged, or (differing) a
// conflict unless `force`.
void PlanFile(const fs::path& root, const std::string& path,
              const std::string& content, bool force, Plan* plan) {
  const std::optional<std::string> have = ReadFile(root / path);
  if (!have) {
    plan->writes.emplace_back(path, content);
    plan->report.push_back("create " + path);
  } else if (*have == content) {
    plan->report.push_back("unchanged " + path);
  } else if (force) {
    plan->writes.emplace_back(path, content);
    plan->report.push_back("overwrite " + path);
  } else {
    plan->conflicts.push_back(path);
  }
}

absl::StatusOr<Report> Apply(const fs::path& root, Plan plan) {
  if (!plan.conflicts.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "refusing to overwrite ", absl::StrJoin(plan.conflicts, ", "), " in ",
        root.string(),
        ": changed since kcr wrote it (nothing was written; --force "
        "overwrites)"));
  }
  for (const auto& [path, content] : plan.writes) {
    if (absl::Status s = WriteFile(root / path, content); !s.ok()) return s;
  }
  return std::move(plan.report);
}

absl::Status ValidateResource(const Resource& r) {
  if (absl::Status s = ValidateGroup(r.group); !s.ok()) return s;
  if (absl::Status s = ValidateVersion(r.version); !s.ok()) return s;
  return ValidateKind(r.kind);
}

}  // namespace

absl::Status ValidateKind(absl::string_view kind) {
  bool ok = !kind.empty() && kind.size() <= 63 && absl::ascii_isupper(kind[0]);
  for (char c : kind) ok = ok && absl::ascii_isalnum(c);
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid --kind \"", kind,
        "\": must be CamelCase, a capital letter then letters and digits "
        "(e.g. Guestbook)"));
  }
  return absl::OkStatus();
}

absl::Status ValidateGroup(absl::string_view group) {
  if (!IsDnsSubdomain(group)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid --group \"", group,
        "\": must be a DNS subdomain, lower-case letters, digits, '-' and "
        "'.' (e.g. webapp)"));
  }
  return absl::OkStatus();
}

absl::Status ValidateDomain(absl::string_view domain) {
  if (!IsDnsSubdomain(domain)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid --domain \"", domain,
        "\": must be a DNS subdomain, lower-case letters, digits, '-' and "
        "'.' (e.g. example.com)"));
  }
  return absl::OkStatus();
}

absl::Status ValidateVersion(absl::string_view version) {
  // v<N>, v<N>alpha<M> or v<N>beta<M>, N and M positive without leading
  // zeros (Kubernetes' version priority rules).
  auto number = [](absl::string_view* s) {
    if (s->empty() || (*s)[0] < '1' || (*s)[0] > '9') return false;
    size_t n = 1;
    while (n < s->size() && absl::ascii_isdigit((*s)[n])) ++n;
    s->remove_prefix(n);
    return true;
  };
  absl::string_view s = version;
  bool ok = absl::ConsumePrefix(&s, "v") && number(&s);
  if (ok && !s.empty()) {
    ok =
        (absl::ConsumePrefix(&s, "alpha") || absl::ConsumePrefix(&s, "beta")) &&
        number(&s) && s.empty();
  }
  if (!ok) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid --version \"", version,
                     "\": must be like v1, v1beta1 or v2alpha1"));
  }
  return absl::OkStatus();
}

absl::Status ValidateProjectName(absl::string_view name) {
  // It also names the project's C++ namespace: a letter first.
  if (!IsDnsLabel(name) || !absl::ascii_isalpha(name[0])) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid project name \"", name,
        "\": must be a DNS label starting with a letter, lower-case letters, "
        "digits and '-' (name the folder so, or pass --project-name)"));
  }
  return absl::OkStatus();
}

absl::Status ValidateBuild(absl::string_view build) {
  if (build != "bazel" && build != "cmake") {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid --build \"", build, "\": must be bazel or cmake"));
  }
  return absl::OkStatus();
}

std::string SnakeCase(absl::string_view kind) {
  std::string out;
  for (size_t i = 0; i < kind.size(); ++i) {
    const char c = kind[i];
    if (absl::ascii_isupper(c) && i > 0) {
      const bool prev_lower = !absl::ascii_isupper(kind[i - 1]);
      const bool next_lower =
          i + 1 < kind.size() && absl::ascii_islower(kind[i + 1]);
      if (prev_lower || next_lower) out += '_';
    }
    out += absl::ascii_tolower(c);
  }
  return out;
}

std::string Plural(absl::string_view kind) {
  std::string lower = absl::AsciiStrToLower(kind);
  auto ends = [&](absl::string_view s) { return absl::EndsWith(lower, s); };
  if (ends("s") || ends("x") || ends("z") || ends("ch") || ends("sh")) {
    return lower + "es";
  }
  if (lower.size() >= 2 && ends("y") &&
      absl::string_view("aeiou").find(lower[lower.size() - 2]) ==
          absl::string_view::npos) {
    lower.pop_back();
    return lower + "ies";
  }
  return lower + "s";
}

absl::StatusOr<std::string> Render(absl::string_view text, const Vars& vars) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const size_t open = text.find("{{", i);
    if (open == absl::string_view::npos) break;
    size_t end = open + 2;
    while (end < text.size() && absl::ascii_isalpha(text[end])) ++end;
    if (end == open + 2 || text.substr(end, 2) != "}}") {
      // Not a placeholder (C++ braces): copied as it is.
      absl::StrAppend(&out, text.substr(i, open + 2 - i));
      i = open + 2;
      continue;
    }
    const std::string name(text.substr(open + 2, end - open - 2));
    const auto it = vars.find(name);
    if (it == vars.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown placeholder {{", name, "}}"));
    }
    absl::StrAppend(&out, text.substr(i, open - i));
    out.append(it->second);
    i = end + 2;
  }
  absl::StrAppend(&out, text.substr(std::min(i, text.size())));
  return out;
}

absl::StatusOr<std::string> InsertAtMarker(absl::string_view content,
                                           absl::string_view marker,
                                           absl::string_view fragment) {
  const size_t at = content.find(marker);
  if (at == absl::string_view::npos) {
    return absl::NotFoundError(absl::StrCat("no marker \"", marker, "\""));
  }
  const size_t line_start = content.rfind('\n', at);
  const size_t begin =
      line_start == absl::string_view::npos ? 0 : line_start + 1;
  const std::string indent(content.substr(begin, at - begin));
  std::string block;
  for (absl::string_view line :
       absl::StrSplit(absl::StripSuffix(fragment, "\n"), '\n')) {
    absl::StrAppend(&block, line.empty() ? "" : indent, line, "\n");
  }
  if (absl::StrContains(content, block)) return std::string(content);
  return absl::StrCat(content.substr(0, begin), block, content.substr(begin));
}

std::string FormatProject(const Project& p) {
  std::string out = absl::StrCat(
      "# The kcr project: what `kcr init` and `kcr create` scaffolded, which\n"
      "# they read to know what each generated file holds. Keep it.\n",
      "projectName: ", p.name, "\n", "domain: ", p.domain, "\n",
      "build: ", p.build, "\n", "kcrPath: ", p.kcr_path, "\n",
      "resources:", p.resources.empty() ? " []" : "", "\n");
  for (const Resource& r : p.resources) {
    absl::StrAppend(
        &out, "- group: ", r.group, "\n", "  version: ", r.version, "\n",
        "  kind: ", r.kind, "\n",
        "  namespaced: ", r.namespaced ? "true" : "false", "\n",
        "  model: ", r.model == Model::kHandlers ? "handlers" : "reconciler",
        "\n");
  }
  return out;
}

absl::StatusOr<Project> ParseProject(absl::string_view text) {
  Project p;
  Resource* current = nullptr;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    absl::string_view body = absl::StripTrailingAsciiWhitespace(line);
    if (body.empty() || body[0] == '#') continue;
    const bool item = absl::ConsumePrefix(&body, "- ");
    if (item) current = &p.resources.emplace_back();
    const bool nested = item || absl::ConsumePrefix(&body, "  ");
    const size_t colon = body.find(':');
    if (colon == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("PROJECT:", line_no, ": expected key: value"));
    }
    const absl::string_view key = body.substr(0, colon);
    const std::string value(absl::StripAsciiWhitespace(body.substr(colon + 1)));
    if (nested && current != nullptr) {
      if (key == "group")
        current->group = value;
      else if (key == "version")
        current->version = value;
      else if (key == "kind")
        current->kind = value;
      else if (key == "namespaced")
        current->namespaced = value != "false";
      else if (key == "model")
        current->model =
            value == "handlers" ? Model::kHandlers : Model::kReconciler;
      continue;
    }
    current = nullptr;
    if (key == "projectName")
      p.name = value;
    else if (key == "domain")
      p.domain = value;
    else if (key == "build")
      p.build = value;
    else if (key == "kcrPath")
      p.kcr_path = value;
  }
  if (p.name.empty() || p.domain.empty() || p.build.empty()) {
    return absl::InvalidArgumentError(
        "PROJECT lacks projectName, domain or build");
  }
  return p;
}

absl::StatusOr<std::map<std::string, std::string>> ProjectFiles(
    const Project& project) {
  absl::StatusOr<Tree> tree = BuildTree(project);
  if (!tree.ok()) return tree.status();
  return std::move(tree->files);
}

absl::StatusOr<Report> Init(const InitOptions& options) {
  if (options.repo.empty()) {
    return absl::InvalidArgumentError("--repo is required");
  }
  if (absl::Status s = ValidateDomain(options.domain); !s.ok()) return s;
  if (absl::Status s = ValidateBuild(options.build); !s.ok()) return s;
  const fs::path root = fs::absolute(options.repo).lexically_normal();
  Project p;
  p.name = options.project_name;
  if (p.name.empty()) {
    p.name = (root.has_filename() ? root : root.parent_path()).filename();
  }
  if (absl::Status s = ValidateProjectName(p.name); !s.ok()) return s;
  p.domain = options.domain;
  p.build = options.build;
  std::optional<Project> before;
  if (std::optional<std::string> text = ReadFile(root / kProjectFile)) {
    absl::StatusOr<Project> parsed = ParseProject(*text);
    if (!parsed.ok()) return parsed.status();
    before = *std::move(parsed);
    p.resources = before->resources;
  }
  p.kcr_path = options.kcr_path;
  if (p.kcr_path.empty() && before) p.kcr_path = before->kcr_path;
  if (p.kcr_path.empty()) p.kcr_path = kBuiltFrom;
  if (p.build == "bazel" && p.kcr_path.empty()) {
    return absl::InvalidArgumentError(
        "--kcr-path is required: this kcr binary does not know the kcr "
        "checkout it was built from");
  }
  if (!p.kcr_path.empty()) {
    p.kcr_path = fs::absolute(p.kcr_path).lexically_normal().string();
    if (absl::EndsWith(p.kcr_path, "/") && p.kcr_path.size() > 1) {
      p.kcr_path.pop_back();
    }
  }
  absl::StatusOr<Tree> tree = BuildTree(p);
  if (!tree.ok()) return tree.status();
  Plan plan;
  for (const std::string& path : tree->init_paths) {
    PlanFile(root, path, tree->files.at(path), options.force, &plan);
  }
  return Apply(root, std::move(plan));
}

absl::StatusOr<Report> Create(const CreateOptions& options) {
  if (absl::Status s = ValidateResource(options.resource); !s.ok()) return s;
  const fs::path root = fs::absolute(options.repo).lexically_normal();
  std::optional<std::string> text = ReadFile(root / kProjectFile);
  if (!text) {
    return absl::FailedPreconditionError(
        absl::StrCat("no PROJECT file in ", root.string(),
                     ": run kcr init there first (or pass --repo)"));
  }
  absl::StatusOr<Project> parsed = ParseProject(*text);
  if (!parsed.ok()) return parsed.status();
  Project p = *std::move(parsed);
  const Resource& want = options.resource;
  size_t index = p.resources.size();
  for (size_t i = 0; i < p.resources.size(); ++i) {
    const Resource& r = p.resources[i];
    if (r.kind == want.kind && r.group == want.group) {
      if (r.model != want.model) {
        return absl::AlreadyExistsError(
            absl::StrCat("kind ", want.kind, " of group ", want.group,
                         " was created with `kcr create ", ModelName(r.model),
                         "`; a kind has one model"));
      }
      if (r.version != want.version) {
        return absl::AlreadyExistsError(absl::StrCat(
            "kind ", want.kind, " of group ", want.group, " exists at version ",
            r.version, "; kcr scaffolds one version per kind"));
      }
      index = i;
    } else if (SnakeCase(r.kind) == SnakeCase(want.kind)) {
      return absl::AlreadyExistsError(
          absl::StrCat("kind ", want.kind, " would share controllers/",
                       SnakeCase(r.kind), "/ with kind ", r.kind));
    }
  }
  if (index == p.resources.size()) {
    p.resources.push_back(want);
  } else {
    p.resources[index] = want;
  }
  absl::StatusOr<Tree> tree = BuildTree(p);
  if (!tree.ok()) return tree.status();
  Plan plan;
  for (const std::string& path : tree->resource_paths[index]) {
    PlanFile(root, path, tree->files.at(path), options.force, &plan);
  }
  // PROJECT is kcr's own record: rewritten as it now stands.
  if (*text != tree->files.at(kProjectFile)) {
    plan.writes.emplace_back(kProjectFile, tree->files.at(kProjectFile));
    plan.report.push_back(absl::StrCat("update ", kProjectFile));
  }
  // The files init made get the new kind's lines at their markers,
  // whatever else the user changed in them.
  absl::StatusOr<std::vector<Rendered>> insertions = InsertionsFor(p, want);
  if (!insertions.ok()) return insertions.status();
  std::map<std::string, std::string> edited;
  std::vector<std::string> order;
  for (const Rendered& ins : *insertions) {
    if (!edited.count(ins.file)) {
      std::optional<std::string> have = ReadFile(root / ins.file);
      if (!have) {
        return absl::FailedPreconditionError(
            absl::StrCat(ins.file, " is missing in ", root.string(),
                         ": re-run kcr init to make it"));
      }
      edited[ins.file] = *std::move(have);
      order.push_back(ins.file);
    }
    absl::StatusOr<std::string> updated =
        InsertAtMarker(edited[ins.file], ins.marker, ins.fragment);
    if (!updated.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(
          ins.file, " has no line with the marker \"", ins.marker,
          "\": put it back where kcr should add these lines, or add them "
          "by hand: ",
          absl::StrJoin(
              absl::StrSplit(absl::StripSuffix(ins.fragment, "\n"), '\n'),
              " / ")));
    }
    edited[ins.file] = *std::move(updated);
  }
  for (const std::string& file : order) {
    if (ReadFile(root / file) != edited[file]) {
      plan.writes.emplace_back(file, edited[file]);
      plan.report.push_back("update " + file);
    } else {
      plan.report.push_back("unchanged " + file);
    }
  }
  return Apply(root, std::move(plan));
}

}  // namespace kcr::scaffold

#include "api/meta/api_path.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/string_view.h"

namespace kcr {
namespace api {
namespace {

absl::Status CheckSegmentName(absl::string_view what, absl::string_view s) {
  if (s.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": Required value"));
  }
  if (s == "." || s == "..") {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": Invalid value: \"", s, "\": may not be '.' or '..'"));
  }
  if (s.find('/') != absl::string_view::npos ||
      s.find('%') != absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": Invalid value: \"", s, "\": may not contain '/' or '%'"));
  }
  return absl::OkStatus();
}

}  // namespace

std::string EscapePathSegment(std::string_view segment) {
  std::string out;
  out.reserve(segment.size());
  for (char c : segment) {
    unsigned char u = static_cast<unsigned char>(c);
    if (absl::ascii_isalnum(u) ||
        std::string_view("-._~!$&'()*+,;=:@").find(c) !=
            std::string_view::npos) {
      out.push_back(c);
    } else {
      absl::StrAppendFormat(&out, "%%%02X", u);
    }
  }
  return out;
}

std::string GroupVersionPath(const GroupVersion& gv) {
  if (gv.group.empty()) return absl::StrCat("/api/", gv.version);
  return absl::StrCat("/apis/", gv.group, "/", gv.version);
}

absl::StatusOr<std::string> CollectionPath(const GroupVersionResource& resource,
                                           bool namespaced,
                                           std::string_view ns) {
  if (resource.resource.empty() || resource.version.empty()) {
    return absl::InvalidArgumentError("resource and version must not be empty");
  }
  std::string path = GroupVersionPath(resource.GetGroupVersion());
  if (!ns.empty()) {
    if (!namespaced) {
      return absl::InvalidArgumentError(
          absl::StrCat(resource.ToString(),
                       " is cluster-scoped: a namespace may not be given"));
    }
    absl::Status s = CheckSegmentName("namespace", ToAbsl(ns));
    if (!s.ok()) return s;
    absl::StrAppend(&path, "/namespaces/", EscapePathSegment(ns));
  }
  absl::StrAppend(&path, "/", resource.resource);
  return path;
}

absl::StatusOr<std::string> CollectionPath(const RESTMapping& mapping,
                                           std::string_view ns) {
  return CollectionPath(mapping.resource, mapping.namespaced(), ns);
}

absl::StatusOr<std::string> ItemPath(const GroupVersionResource& resource,
                                     bool namespaced, std::string_view ns,
                                     std::string_view name,
                                     std::string_view subresource) {
  if (namespaced && ns.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        resource.ToString(), " is namespaced: namespace: Required value"));
  }
  absl::Status s = CheckSegmentName("name", ToAbsl(name));
  if (!s.ok()) return s;
  absl::StatusOr<std::string> path = CollectionPath(resource, namespaced, ns);
  if (!path.ok()) return path.status();
  absl::StrAppend(&*path, "/", EscapePathSegment(name));
  if (!subresource.empty()) {
    s = CheckSegmentName("subresource", ToAbsl(subresource));
    if (!s.ok()) return s;
    absl::StrAppend(&*path, "/", EscapePathSegment(subresource));
  }
  return path;
}

absl::StatusOr<std::string> ItemPath(const RESTMapping& mapping,
                                     std::string_view ns, std::string_view name,
                                     std::string_view subresource) {
  if (!subresource.empty() && !mapping.HasSubresource(subresource)) {
    return absl::NotFoundError(absl::StrCat(mapping.resource.ToString(),
                                            " has no subresource \"",
                                            ToAbsl(subresource), "\""));
  }
  return ItemPath(mapping.resource, mapping.namespaced(), ns, name,
                  subresource);
}

}  // namespace api
}  // namespace kcr

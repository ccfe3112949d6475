#include "api/meta/group_version.h"

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/string_view.h"

namespace kcr {
namespace api {

std::string GroupVersion::ToString() const {
  if (group.empty()) return version;
  return absl::StrCat(group, "/", version);
}

absl::StatusOr<GroupVersion> ParseGroupVersion(std::string_view api_version) {
  if (api_version.empty()) return GroupVersion();
  size_t slash = api_version.find('/');
  if (slash == std::string_view::npos) {
    return GroupVersion("", std::string(api_version));
  }
  std::string_view group = api_version.substr(0, slash);
  std::string_view version = api_version.substr(slash + 1);
  if (version.find('/') != std::string_view::npos || version.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unexpected GroupVersion string: \"", ToAbsl(api_version), "\""));
  }
  return GroupVersion(std::string(group), std::string(version));
}

std::string GroupVersionKind::ToString() const {
  return absl::StrCat(GetGroupVersion().ToString(), ", Kind=", kind);
}

absl::StatusOr<GroupVersionKind> GroupVersionKindFromApiVersion(
    std::string_view api_version, std::string_view kind) {
  absl::StatusOr<GroupVersion> gv = ParseGroupVersion(api_version);
  if (!gv.ok()) return gv.status();
  if (gv->version.empty()) {
    return absl::InvalidArgumentError("apiVersion is empty");
  }
  if (kind.empty()) return absl::InvalidArgumentError("kind is empty");
  return GroupVersionKind(*gv, std::string(kind));
}

std::string GroupVersionResource::ToString() const {
  return absl::StrCat(GetGroupVersion().ToString(), ", Resource=", resource);
}

std::string GroupResource::ToString() const {
  if (group.empty()) return resource;
  return absl::StrCat(resource, ".", group);
}

std::string GroupKind::ToString() const {
  if (group.empty()) return kind;
  return absl::StrCat(kind, ".", group);
}

namespace {

// A version of the form v<major>[(alpha|beta)<minor>].
struct KubeVersion {
  bool ok = false;
  int64_t major = 0;
  int stability = 0;  // 2 GA, 1 beta, 0 alpha.
  int64_t minor = 0;
};

KubeVersion ParseKubeVersion(absl::string_view v) {
  KubeVersion out;
  if (v.size() < 2 || v[0] != 'v') return out;
  size_t i = 1;
  while (i < v.size() &&
         absl::ascii_isdigit(static_cast<unsigned char>(v[i]))) {
    ++i;
  }
  if (i == 1 || v[1] == '0') return out;
  if (!absl::SimpleAtoi(v.substr(1, i - 1), &out.major)) return out;
  if (i == v.size()) {
    out.stability = 2;
    out.ok = true;
    return out;
  }
  absl::string_view rest = v.substr(i);
  if (absl::ConsumePrefix(&rest, "beta")) {
    out.stability = 1;
  } else if (absl::ConsumePrefix(&rest, "alpha")) {
    out.stability = 0;
  } else {
    return out;
  }
  if (rest.empty() || rest[0] == '0') return out;
  for (char c : rest) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return out;
  }
  if (!absl::SimpleAtoi(rest, &out.minor)) return out;
  out.ok = true;
  return out;
}

}  // namespace

bool KubeVersionLess(std::string_view a, std::string_view b) {
  KubeVersion va = ParseKubeVersion(ToAbsl(a));
  KubeVersion vb = ParseKubeVersion(ToAbsl(b));
  if (va.ok != vb.ok) return va.ok;
  if (!va.ok) return a < b;
  if (va.stability != vb.stability) return va.stability > vb.stability;
  if (va.major != vb.major) return va.major > vb.major;
  return va.minor > vb.minor;
}

}  // namespace api
}  // namespace kcr

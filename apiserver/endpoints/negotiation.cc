#include "apiserver/endpoints/negotiation.h"

#include <cctype>

namespace kcr {
namespace apiserver {

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t')) --e;
  return std::string(s.substr(b, e - b));
}

std::vector<std::string> Split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    out.emplace_back(s.substr(start, pos == std::string_view::npos
                                         ? std::string_view::npos
                                         : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return out;
}

MediaType ParseMediaType(std::string_view text) {
  MediaType m;
  std::vector<std::string> parts = Split(text, ';');
  m.type = Trim(parts[0]);
  for (char& c : m.type) c = static_cast<char>(tolower(c));
  for (size_t i = 1; i < parts.size(); ++i) {
    std::string p = Trim(parts[i]);
    size_t eq = p.find('=');
    if (eq == std::string::npos) continue;
    m.params[Trim(std::string_view(p).substr(0, eq))] =
        Trim(std::string_view(p).substr(eq + 1));
  }
  return m;
}

std::vector<MediaType> ParseAccept(const std::string& accept) {
  std::vector<MediaType> out;
  if (Trim(accept).empty()) return out;
  for (const std::string& part : Split(accept, ',')) {
    if (Trim(part).empty()) continue;
    out.push_back(ParseMediaType(part));
  }
  return out;
}

bool IsJsonLike(const MediaType& m) {
  return (m.type == "application/json" || m.type == "*/*" ||
          m.type == "application/*") &&
         m.Param("as").empty();
}

namespace {

// True if the first clause of `accept` is a JSON-like type with no
// parameters ("application/json, */*", what client-go sends): the clauses
// are tried in order and such a clause always ends the search with plain
// JSON, so the rest need not be parsed.
bool FirstClauseIsPlainJson(std::string_view accept) {
  std::string_view first = accept.substr(0, accept.find(','));
  if (first.find(';') != std::string_view::npos) return false;
  size_t b = 0, e = first.size();
  while (b < e && (first[b] == ' ' || first[b] == '\t')) ++b;
  while (e > b && (first[e - 1] == ' ' || first[e - 1] == '\t')) --e;
  first = first.substr(b, e - b);
  auto equals = [first](std::string_view lower) {
    if (first.size() != lower.size()) return false;
    for (size_t i = 0; i < first.size(); ++i) {
      char c = first[i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      if (c != lower[i]) return false;
    }
    return true;
  };
  return equals("application/json") || equals("*/*") || equals("application/*");
}

}  // namespace

Negotiated NegotiateResource(const HttpRequest& req, bool have_table) {
  Negotiated n;
  auto header = req.headers.find("accept");
  if (header == req.headers.end() || FirstClauseIsPlainJson(header->second)) {
    return n;
  }
  std::vector<MediaType> accept = ParseAccept(header->second);
  if (accept.empty()) return n;
  for (const MediaType& m : accept) {
    if (m.type == "application/json" && m.Param("as") == "Table" &&
        m.Param("g") == "meta.k8s.io" &&
        (m.Param("v") == "v1" || m.Param("v") == "v1beta1")) {
      if (have_table) {
        n.table = true;
        return n;
      }
      continue;
    }
    const std::string as = m.Param("as");
    if (m.type == "application/json" &&
        (as == "PartialObjectMetadata" || as == "PartialObjectMetadataList") &&
        m.Param("g") == "meta.k8s.io" &&
        (m.Param("v") == "v1" || m.Param("v") == "v1beta1")) {
      n.partial = as == "PartialObjectMetadata" ? Negotiated::Partial::kObject
                                                : Negotiated::Partial::kList;
      n.partial_version = m.Param("v");
      return n;
    }
    if (IsJsonLike(m)) return n;
  }
  n.acceptable = false;
  return n;
}

}  // namespace apiserver
}  // namespace kcr

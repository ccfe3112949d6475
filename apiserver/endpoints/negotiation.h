// Content negotiation as kube-apiserver's endpoints/handlers/negotiation
// does it: media types with parameters, Accept lists, and what a resource
// response may be (JSON, a meta.k8s.io Table, or meta.k8s.io
// PartialObjectMetadata / PartialObjectMetadataList: metadata only).
#ifndef KCR_APISERVER_ENDPOINTS_NEGOTIATION_H_
#define KCR_APISERVER_ENDPOINTS_NEGOTIATION_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "apiserver/endpoints/http_server.h"

namespace kcr {
namespace apiserver {

// A media type: "application/json;as=Table;g=meta.k8s.io;v=v1".
struct MediaType {
  std::string type;  // "application/json", lower case
  std::map<std::string, std::string> params;
  // The parameter `k`; empty when absent.
  std::string Param(const std::string& k) const {
    auto it = params.find(k);
    return it == params.end() ? "" : it->second;
  }
};

MediaType ParseMediaType(std::string_view text);
// The media types of an Accept header, in order; empty for none.
std::vector<MediaType> ParseAccept(const std::string& accept);
// application/json, application/* or */* without an `as` parameter.
bool IsJsonLike(const MediaType& m);

// What the client accepts for a resource response.
struct Negotiated {
  // False: nothing the server can produce (406).
  bool acceptable = true;
  // A Table (only offered when `have_table`).
  bool table = false;
  // Metadata only, as client-go's metadata client asks
  // ("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"):
  // kNone, or the kind asked for, whose fit to the request the handler
  // checks (a list needs ...List, anything else the object kind).
  enum class Partial { kNone, kObject, kList };
  Partial partial = Partial::kNone;
  std::string partial_version;  // "v1" or "v1beta1"
};
Negotiated NegotiateResource(const HttpRequest& req, bool have_table);

// `s` without leading and trailing spaces and tabs.
std::string Trim(std::string_view s);
// `s` cut at every `sep`; empty pieces kept.
std::vector<std::string> Split(std::string_view s, char sep);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_ENDPOINTS_NEGOTIATION_H_

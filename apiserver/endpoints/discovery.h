// Discovery documents, generated from the ResourceRegistry on every request
// (so a CRD shows up, or disappears, at once):
//   /api                 APIVersions
//   /apis                APIGroupList
//   /apis/{g}            APIGroup
//   /api/v1, /apis/g/v   APIResourceList (with "<resource>/<sub>" entries)
// and the aggregated form kubectl 1.27+ asks for on /api and /apis
// (apidiscovery.k8s.io v2 or v2beta1 APIGroupDiscoveryList).
#ifndef KCR_APISERVER_ENDPOINTS_DISCOVERY_H_
#define KCR_APISERVER_ENDPOINTS_DISCOVERY_H_

#include <optional>
#include <string>

#include "apiserver/registry/resources.h"

namespace kcr {
namespace apiserver {

// `server_address` is "host:port" for serverAddressByClientCIDRs.
std::string ApiVersionsJson(const std::string& server_address);
std::string ApiGroupListJson(const ResourceRegistry& resources);
// nullopt when the group is not served.
std::optional<std::string> ApiGroupJson(const ResourceRegistry& resources,
                                        const std::string& group);
std::optional<std::string> ApiResourceListJson(
    const ResourceRegistry& resources, const std::string& group,
    const std::string& version);
// `legacy`: the core group (/api) only; otherwise every named group
// (/apis). `version` is "v2" or "v2beta1".
std::string AggregatedDiscoveryJson(const ResourceRegistry& resources,
                                    bool legacy, const std::string& version);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_ENDPOINTS_DISCOVERY_H_

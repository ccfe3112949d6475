// The controller manager's --embedded mode: a local API server in this
// process on loopback (with its garbage collector, namespace controller,
// deployment controllers and simulated node), a kubeconfig file for it,
// and manifests/crds and manifests/samples (compiled into the binary)
// installed into it.
#ifndef KCR_CMD_CONTROLLER_MANAGER_EMBEDDED_H_
#define KCR_CMD_CONTROLLER_MANAGER_EMBEDDED_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/meta/rest_mapper.h"
#include "apiserver/api_server.h"
#include "base/context.h"
#include "runtime/client/rest_client.h"

namespace kcr::cmd {

class EmbeddedCluster {
 public:
  // Starts the server on 127.0.0.1 (a free port) and writes its kubeconfig
  // into a new directory under $TMPDIR. Its Events live `event_ttl` after
  // their last write (ApiServerOptions::event_ttl; <= 0 keeps them).
  static absl::StatusOr<std::unique_ptr<EmbeddedCluster>> Start(
      absl::Duration event_ttl = apiserver::ApiServerOptions().event_ttl);

  // Stops the server and removes the kubeconfig's directory.
  ~EmbeddedCluster();
  // The same, ahead of destruction (idempotent): a process that ends
  // right after need not free the store object by object.
  void Stop();
  EmbeddedCluster(const EmbeddedCluster&) = delete;
  EmbeddedCluster& operator=(const EmbeddedCluster&) = delete;

  std::string url() const { return server_->url(); }
  const std::string& kubeconfig() const { return kubeconfig_; }

  // Creates the CRDs of manifests/crds, waits (up to `timeout`) until each
  // is Established, and teaches `mapper` their kinds. A CRD that exists
  // already is left as it is.
  absl::Status InstallCrds(const Context& ctx, client::RestClient& client,
                           api::RESTMapper& mapper,
                           absl::Duration timeout = absl::Seconds(30));

  // Creates every object of manifests/samples (InstallCrds first, for the
  // custom resources), in file order; one that exists already is left as
  // it is. The error names the file and the object.
  absl::Status InstallSamples(const Context& ctx, client::RestClient& client,
                              const api::RESTMapper& mapper);

 private:
  EmbeddedCluster(std::unique_ptr<apiserver::ApiServer> server,
                  std::string dir);

  std::unique_ptr<apiserver::ApiServer> server_;
  std::string dir_;
  std::string kubeconfig_;
};

// One manifest file compiled into the binary (embedded_samples.cc, made
// from manifests/samples by a genrule).
struct EmbeddedManifest {
  const char* path;  // e.g. "manifests/samples/nginx.yaml"
  const char* text;
};
extern const EmbeddedManifest kEmbeddedSamples[];
extern const int kEmbeddedSampleCount;

}  // namespace kcr::cmd

#endif  // KCR_CMD_CONTROLLER_MANAGER_EMBEDDED_H_

// What the handlers' tests share: a CRD for kopf's KopfExample (status
// subresource, any spec), a KopfExample built from its parts, and an
// EventRecorder that keeps what it is given.
#ifndef KCR_TEST_RUNTIME_HANDLERS_HANDLERS_TEST_UTIL_H_
#define KCR_TEST_RUNTIME_HANDLERS_HANDLERS_TEST_UTIL_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/meta/group_version.h"
#include "api/object.h"
#include "api/types/event.h"
#include "base/mutex.h"
#include "base/str_cat.h"
#include "runtime/events/event_recorder.h"

namespace kcr::testing {

inline const api::GroupVersionResource kKopfExampleGvr{"kopf.dev", "v1",
                                                       "kopfexamples"};

// A KopfExample `name` in "default" with `spec`, and `metadata_extra`
// (",\"labels\":{...}" and the like) added to its metadata.
inline absl::StatusOr<api::ObjectPtr> KopfExample(
    const std::string& name, std::string_view spec = R"({"x":1})",
    std::string_view metadata_extra = "") {
  return api::Object::Parse(
      Cat(R"({"apiVersion":"kopf.dev/v1","kind":"KopfExample",)",
          R"("metadata":{"name":")", name, R"(","namespace":"default")",
          metadata_extra, R"(},"spec":)", spec, "}"));
}

inline constexpr char kKopfExampleCrdYaml[] = R"(
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: kopfexamples.kopf.dev
spec:
  group: kopf.dev
  scope: Namespaced
  names:
    plural: kopfexamples
    singular: kopfexample
    kind: KopfExample
  versions:
    - name: v1
      served: true
      storage: true
      subresources:
        status: {}
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              x-kubernetes-preserve-unknown-fields: true
            status:
              type: object
              x-kubernetes-preserve-unknown-fields: true
)";

struct RecordedEvent {
  std::string name;  // the object's
  std::string type;
  std::string reason;
  std::string message;
};

class RecordingEventRecorder final : public events::EventRecorder {
 public:
  void Record(const api::ObjectReference& ref,
              const std::map<std::string, std::string>& annotations,
              std::string_view type, std::string_view reason,
              std::string_view message) override {
    MutexLock lock(&mu_);
    events_.push_back({ref.name, std::string(type), std::string(reason),
                       std::string(message)});
  }
  std::vector<RecordedEvent> events() const {
    MutexLock lock(&mu_);
    return events_;
  }
  // Whether an event of `type` has a message containing `text`.
  bool Has(std::string_view type, std::string_view text) const {
    MutexLock lock(&mu_);
    for (const RecordedEvent& e : events_) {
      if (e.type == type && e.message.find(text) != std::string::npos) {
        return true;
      }
    }
    return false;
  }

 private:
  mutable Mutex mu_;
  std::vector<RecordedEvent> events_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kcr::testing

#endif  // KCR_TEST_RUNTIME_HANDLERS_HANDLERS_TEST_UTIL_H_

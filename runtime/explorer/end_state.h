// EndState: the objects a scenario's controllers leave behind, normalised
// so that two runs that reached the same state compare equal however they
// got there.
//
// Normalising an object drops what says how or when it was written rather
// than what it is: metadata.uid, resourceVersion, creationTimestamp,
// managedFields, generation, selfLink, every ownerReference's uid, and
// status.observedGeneration; every member whose name ends in "Time" or
// "Timestamp" keeps its presence but not its value ("<time>"); a list of
// objects that each have a string "type" (conditions) is sorted by it. A
// name the
// server generated (metadata.generateName set and a prefix of the name) is
// replaced by a stable one, "<generateName><n>", numbered in the order of
// the objects' normalised content, and every string equal to it elsewhere
// (an owner reference's name) is replaced the same way. Members named by
// `ignored_fields` (JSON pointers, "/status/readyReplicas") are dropped.
//
// Objects are keyed "<group>/<resource> <namespace>/<name>" ("core" for the
// core group) and rendered as JSON with sorted members.
#ifndef KCR_RUNTIME_EXPLORER_END_STATE_H_
#define KCR_RUNTIME_EXPLORER_END_STATE_H_

#include <map>
#include <string>
#include <vector>

#include "api/object.h"

namespace kcr::explorer {

// One object of a collection, as read from the server.
struct StateObject {
  std::string group;
  std::string resource;
  api::ObjectPtr object;
};

class EndState {
 public:
  EndState() = default;
  // Normalises `objects` (see the file comment).
  static EndState Of(const std::vector<StateObject>& objects,
                     const std::vector<std::string>& ignored_fields = {});

  // Key -> normalised JSON.
  const std::map<std::string, std::string>& objects() const { return objects_; }
  bool operator==(const EndState& other) const {
    return objects_ == other.objects_;
  }
  bool operator!=(const EndState& other) const { return !(*this == other); }

  // What differs from `reference`, one line per object ("missing: <key>",
  // "extra: <key> <json>", "differs: <key> reference=<json> got=<json>");
  // empty when equal.
  std::string DiffFrom(const EndState& reference) const;
  // Every object, one "<key> <json>" line each.
  std::string ToString() const;

 private:
  std::map<std::string, std::string> objects_;
};

}  // namespace kcr::explorer

#endif  // KCR_RUNTIME_EXPLORER_END_STATE_H_

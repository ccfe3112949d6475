// What the registry records for the engine: one Entry per handler of a
// resource, and the operator-level activities.
#ifndef KCR_RUNTIME_HANDLERS_INTERNAL_ENTRY_H_
#define KCR_RUNTIME_HANDLERS_INTERNAL_ENTRY_H_

#include <string>
#include <vector>

#include "runtime/handlers/diff.h"
#include "runtime/handlers/registry.h"

namespace kcr::handlers {

struct ResourceHandlers::Entry {
  enum class Kind {
    kCreate,
    kUpdate,
    kDelete,
    kResume,
    kField,
    kEvent,
    kTimer,
    kDaemon,
  };
  Kind kind = Kind::kCreate;
  std::string id;
  // Change handlers, field handlers and timers.
  Handler handler;
  EventHandler event_handler;
  Daemon daemon;
  // For every kind: options.filters says which objects it runs for.
  HandlerOptions options;
  // Field handlers: the field, parsed and as given.
  FieldPath field;
  std::string field_name;
  TimerOptions timer;
  DaemonOptions daemon_options;
};

struct Registry::Activities {
  struct Activity {
    std::string id;
    handlers::Activity fn;
    ActivityOptions options;
  };
  struct Login {
    std::string id;
    LoginHandler fn;
  };
  struct Probe {
    std::string id;
    handlers::Probe fn;
  };
  std::vector<Activity> startup;
  std::vector<Login> login;
  std::vector<Probe> probes;
  std::vector<Activity> cleanup;
};

}  // namespace kcr::handlers

#endif  // KCR_RUNTIME_HANDLERS_INTERNAL_ENTRY_H_

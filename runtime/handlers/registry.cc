#include "runtime/handlers/registry.h"

#include <utility>

#include "base/str_cat.h"
#include "runtime/handlers/internal/entry.h"

namespace kcr::handlers {

bool MetaFilter::Matches(std::optional<std::string_view> value) const {
  switch (kind_) {
    case Kind::kPresent:
      return value.has_value();
    case Kind::kAbsent:
      return !value.has_value();
    case Kind::kEquals:
      return value.has_value() && *value == value_;
  }
  return false;
}

bool Filters::Matches(const api::Object& object) const {
  for (const auto& [key, filter] : labels) {
    if (!filter.Matches(object.Label(key))) return false;
  }
  for (const auto& [key, filter] : annotations) {
    if (!filter.Matches(object.Annotation(key))) return false;
  }
  return !when || when(object);
}

ResourceHandlers::ResourceHandlers(api::GroupVersionResource gvr)
    : gvr_(std::move(gvr)) {}
ResourceHandlers::~ResourceHandlers() = default;
ResourceHandlers::ResourceHandlers(ResourceHandlers&&) noexcept = default;

namespace {

ResourceHandlers::Entry ChangeEntry(ResourceHandlers::Entry::Kind kind,
                                    std::string id, Handler fn,
                                    HandlerOptions options) {
  ResourceHandlers::Entry e;
  e.kind = kind;
  e.id = std::move(id);
  e.handler = std::move(fn);
  e.options = std::move(options);
  return e;
}

}  // namespace

ResourceHandlers& ResourceHandlers::OnCreate(std::string id, Handler fn,
                                             HandlerOptions options) {
  entries_.push_back(ChangeEntry(Entry::Kind::kCreate, std::move(id),
                                 std::move(fn), std::move(options)));
  return *this;
}

ResourceHandlers& ResourceHandlers::OnUpdate(std::string id, Handler fn,
                                             HandlerOptions options) {
  entries_.push_back(ChangeEntry(Entry::Kind::kUpdate, std::move(id),
                                 std::move(fn), std::move(options)));
  return *this;
}

ResourceHandlers& ResourceHandlers::OnDelete(std::string id, Handler fn,
                                             HandlerOptions options) {
  entries_.push_back(ChangeEntry(Entry::Kind::kDelete, std::move(id),
                                 std::move(fn), std::move(options)));
  return *this;
}

ResourceHandlers& ResourceHandlers::OnResume(std::string id, Handler fn,
                                             HandlerOptions options) {
  entries_.push_back(ChangeEntry(Entry::Kind::kResume, std::move(id),
                                 std::move(fn), std::move(options)));
  return *this;
}

ResourceHandlers& ResourceHandlers::OnField(std::string id, std::string field,
                                            Handler fn,
                                            HandlerOptions options) {
  Entry e = ChangeEntry(Entry::Kind::kField, std::move(id), std::move(fn),
                        std::move(options));
  e.field = ParseFieldPath(field);
  e.field_name = std::move(field);
  entries_.push_back(std::move(e));
  return *this;
}

ResourceHandlers& ResourceHandlers::OnEvent(std::string id, EventHandler fn,
                                            Filters filters) {
  Entry e;
  e.kind = Entry::Kind::kEvent;
  e.id = std::move(id);
  e.event_handler = std::move(fn);
  e.options.filters = std::move(filters);
  entries_.push_back(std::move(e));
  return *this;
}

ResourceHandlers& ResourceHandlers::OnTimer(std::string id, Handler fn,
                                            TimerOptions options) {
  Entry e;
  e.kind = Entry::Kind::kTimer;
  e.id = std::move(id);
  e.handler = std::move(fn);
  e.options.filters = options.filters;
  e.timer = std::move(options);
  entries_.push_back(std::move(e));
  return *this;
}

ResourceHandlers& ResourceHandlers::OnDaemon(std::string id, Daemon fn,
                                             DaemonOptions options) {
  Entry e;
  e.kind = Entry::Kind::kDaemon;
  e.id = std::move(id);
  e.daemon = std::move(fn);
  e.options.filters = options.filters;
  e.daemon_options = std::move(options);
  entries_.push_back(std::move(e));
  return *this;
}

Registry::Registry(OperatorOptions options)
    : options_(std::move(options)),
      activities_(std::make_unique<Activities>()) {}
Registry::~Registry() = default;

ResourceHandlers& Registry::For(const api::GroupVersionResource& gvr) {
  std::string key = Cat(gvr.group, "/", gvr.version, "/", gvr.resource);
  return resources_.try_emplace(std::move(key), gvr).first->second;
}

Registry& Registry::OnStartup(std::string id, Activity fn,
                              ActivityOptions options) {
  activities_->startup.push_back(
      {std::move(id), std::move(fn), std::move(options)});
  return *this;
}

Registry& Registry::OnLogin(std::string id, LoginHandler fn) {
  activities_->login.push_back({std::move(id), std::move(fn)});
  return *this;
}

Registry& Registry::OnProbe(std::string id, Probe fn) {
  activities_->probes.push_back({std::move(id), std::move(fn)});
  return *this;
}

Registry& Registry::OnCleanup(std::string id, Activity fn,
                              ActivityOptions options) {
  activities_->cleanup.push_back(
      {std::move(id), std::move(fn), std::move(options)});
  return *this;
}

}  // namespace kcr::handlers

#include "runtime/explorer/server_faults.h"

#include <utility>

#include "absl/strings/numbers.h"
#include "apiserver/api_server.h"
#include "apiserver/endpoints/faults.h"
#include "apiserver/endpoints/write_log.h"

namespace kcr::explorer {
namespace {

Write FromRecord(const apiserver::WriteRecord& r) {
  Write w;
  w.seq = r.seq;
  if (!absl::SimpleAtoi(r.resource_version, &w.resource_version)) {
    w.resource_version = 0;
  }
  w.verb = r.verb;
  w.group = r.group;
  w.resource = r.resource;
  w.subresource = r.subresource;
  w.namespace_ = r.namespace_;
  w.name = r.name;
  w.user_agent = r.user_agent;
  return w;
}

apiserver::RequestFilter Filter(const Match& m) {
  apiserver::RequestFilter f;
  f.verb = m.verb;
  f.group = m.group;
  f.resource = m.resource;
  f.subresource = m.subresource;
  f.namespace_ = m.namespace_;
  f.name = m.name;
  f.user_agent = m.user_agent;
  return f;
}

}  // namespace

ServerFaults::ServerFaults(apiserver::ApiServer* server) : server_(server) {}

ServerFaults::~ServerFaults() {
  if (subscription_ != 0) server_->write_log()->Unsubscribe(subscription_);
}

std::vector<Write> ServerFaults::WritesSince(int64_t seq) const {
  std::vector<Write> out;
  for (const apiserver::WriteRecord& r : server_->write_log()->Since(seq)) {
    out.push_back(FromRecord(r));
  }
  return out;
}

int64_t ServerFaults::last_seq() const {
  return server_->write_log()->last_seq();
}

void ServerFaults::Subscribe(std::function<void(const Write&)> fn) {
  subscription_ = server_->write_log()->Subscribe(
      [fn = std::move(fn)](const apiserver::WriteRecord& r) {
        fn(FromRecord(r));
      });
}

absl::Status ServerFaults::CrashNow(const std::string& user_agent) {
  // The server's fence goes up after the client's next stored write (one
  // already under way when the client stopped sending); the explorer's
  // FencedClient refuses everything else.
  apiserver::CrashRule rule;
  rule.user_agent = user_agent;
  rule.after_writes = 1;
  return server_->faults()->SetCrashRule(std::move(rule));
}

bool ServerFaults::Crashed(const std::string& user_agent) const {
  return server_->faults()->crashed(user_agent);
}

absl::Status ServerFaults::FailRequest(const Match& match, int nth, int code,
                                       bool after_store) {
  apiserver::ErrorRule rule;
  rule.match = Filter(match);
  rule.nth = nth;
  rule.code = code;
  rule.retry_after_seconds = 1;
  rule.after_store = after_store;
  return server_->faults()->AddErrorRule(std::move(rule));
}

int64_t ServerFaults::rules_fired() const {
  return server_->faults()->rules_fired();
}

absl::StatusOr<int64_t> ServerFaults::HoldWatch(const Match& match) {
  apiserver::WatchHold hold;
  hold.match = Filter(match);
  return server_->faults()->HoldWatch(std::move(hold));
}

void ServerFaults::ReleaseHold(int64_t id) {
  server_->faults()->ReleaseWatchHold(id);
}

absl::Status ServerFaults::DropNextWatchEvent(const Match& match) {
  apiserver::WatchDrop drop;
  drop.match = Filter(match);
  drop.count = 1;
  return server_->faults()->DropWatchEvents(std::move(drop));
}

}  // namespace kcr::explorer

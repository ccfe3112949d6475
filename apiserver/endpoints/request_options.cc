#include "apiserver/endpoints/request_options.h"

#include <algorithm>
#include <utility>

#include "absl/strings/numbers.h"
#include "api/errors/errors.h"
#include "api/json/json_util.h"
#include "api/selector/shard_selector.h"
#include "apiserver/endpoints/negotiation.h"
#include "apiserver/endpoints/protobuf.h"
#include "apiserver/internal/object_fields.h"
#include "base/str_cat.h"
#include "base/string_view.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {

bool ParseBool(const std::string& v) {
  return v == "true" || v == "1" || v == "True" || v == "TRUE" || v == "t" ||
         v == "T";
}

absl::StatusOr<ListOptions> ParseListOptions(const HttpRequest& req) {
  ListOptions o;
  if (req.HasQuery("labelSelector")) {
    auto s = api::LabelSelector::Parse(req.Query("labelSelector"));
    if (!s.ok()) {
      return api::StatusError::BadRequest(ToStd(s.status().message()))
          .ToStatus();
    }
    o.label_selector = std::move(*s);
  }
  if (req.HasQuery("fieldSelector")) {
    auto s = api::FieldSelector::Parse(req.Query("fieldSelector"));
    if (!s.ok()) {
      return api::StatusError::BadRequest(ToStd(s.status().message()))
          .ToStatus();
    }
    o.field_selector = std::move(*s);
  }
  // As kube-apiserver's ListOptions conversion: an empty value is no
  // selector; anything else must parse, or the request is a 400.
  if (!req.Query("shardSelector").empty()) {
    auto s = api::ShardSelector::Parse(req.Query("shardSelector"));
    if (!s.ok()) {
      return api::StatusError::BadRequest(
                 Cat("invalid shard selector: ", ToStd(s.status().message())))
          .ToStatus();
    }
    o.shard_selector = std::move(*s);
  }
  o.resource_version = req.Query("resourceVersion");
  o.resource_version_match = req.Query("resourceVersionMatch");
  o.continue_token = req.Query("continue");
  if (req.HasQuery("limit") && !req.Query("limit").empty()) {
    int64_t limit = 0;
    if (!absl::SimpleAtoi(req.Query("limit"), &limit)) {
      return api::StatusError::BadRequest(
                 Cat("invalid limit: ", Quote(req.Query("limit"))))
          .ToStatus();
    }
    o.limit = std::max<int64_t>(0, limit);
  }
  // Read by watches; checked here for lists too, as kube-apiserver's
  // parameter codec converts it for both.
  if (req.HasQuery("timeoutSeconds") && !req.Query("timeoutSeconds").empty()) {
    int64_t timeout = 0;
    if (!absl::SimpleAtoi(req.Query("timeoutSeconds"), &timeout)) {
      return api::StatusError::BadRequest(
                 Cat("invalid timeoutSeconds: ",
                     Quote(req.Query("timeoutSeconds"))))
          .ToStatus();
    }
  }
  o.send_initial_events_set = req.HasQuery("sendInitialEvents");
  return o;
}

bool DryRun(const HttpRequest& req) {
  return req.HasQuery("dryRun") && !req.Query("dryRun").empty();
}

absl::StatusOr<DeleteOptions> ParseDeleteOptions(const HttpRequest& req) {
  DeleteOptions o;
  o.dry_run = DryRun(req);
  std::string body = req.body;
  if (ParseMediaType(req.Header("content-type")).type ==
          "application/vnd.kubernetes.protobuf" &&
      !body.empty()) {
    absl::StatusOr<std::string> json = KubernetesProtobufToJson(body);
    if (!json.ok()) {
      if (json.status().code() == absl::StatusCode::kUnimplemented) {
        return api::StatusError::UnsupportedMediaType(
                   Cat("the body of the request was in an unknown format - "
                       "accepted media types include: application/json, "
                       "application/yaml, application/vnd.kubernetes.protobuf "
                       "(",
                       ToStd(json.status().message()), ")"))
            .ToStatus();
      }
      return api::StatusError::BadRequest(ToStd(json.status().message()))
          .ToStatus();
    }
    body = *std::move(json);
  }
  if (!Trim(body).empty()) {
    rapidjson::Document d;
    absl::Status s = json::ParseJson(body, &d);
    if (!s.ok() || !d.IsObject()) {
      return api::StatusError::BadRequest(
                 Cat("couldn't get version/kind; json parse error: ",
                     s.ok() ? "not an object"
                            : std::string(ToStd(s.message()))))
          .ToStatus();
    }
    auto p = d.FindMember("propagationPolicy");
    if (p != d.MemberEnd() && p->value.IsString()) {
      o.propagation_policy = p->value.GetString();
    }
    auto g = d.FindMember("gracePeriodSeconds");
    if (g != d.MemberEnd() && g->value.IsInt64()) {
      o.grace_period_seconds = g->value.GetInt64();
    }
    auto od = d.FindMember("orphanDependents");
    if (od != d.MemberEnd() && od->value.IsBool()) {
      o.orphan_dependents = od->value.GetBool();
    }
    auto pre = d.FindMember("preconditions");
    if (pre != d.MemberEnd() && pre->value.IsObject()) {
      auto u = pre->value.FindMember("uid");
      if (u != pre->value.MemberEnd() && u->value.IsString()) {
        o.precondition_uid = u->value.GetString();
      }
      auto rv = pre->value.FindMember("resourceVersion");
      if (rv != pre->value.MemberEnd() && rv->value.IsString()) {
        o.precondition_resource_version = rv->value.GetString();
      }
    }
    auto dr = d.FindMember("dryRun");
    if (dr != d.MemberEnd() && dr->value.IsArray() && !dr->value.Empty()) {
      o.dry_run = true;
    }
  }
  if (req.HasQuery("propagationPolicy")) {
    o.propagation_policy = req.Query("propagationPolicy");
  }
  if (req.HasQuery("orphanDependents")) {
    o.orphan_dependents = ParseBool(req.Query("orphanDependents"));
  }
  if (req.HasQuery("gracePeriodSeconds") &&
      !req.Query("gracePeriodSeconds").empty()) {
    int64_t g = 0;
    // kube-apiserver refuses a value its parameter codec cannot convert.
    if (!absl::SimpleAtoi(req.Query("gracePeriodSeconds"), &g)) {
      return api::StatusError::BadRequest(
                 Cat("invalid gracePeriodSeconds: ",
                     Quote(req.Query("gracePeriodSeconds"))))
          .ToStatus();
    }
    o.grace_period_seconds = g;
  }
  return o;
}

}  // namespace apiserver
}  // namespace kcr

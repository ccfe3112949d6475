#include "apiserver/kube_controllers/controller_history.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "api/errors/errors.h"
#include "api/json/json_util.h"
#include "api/object_builder.h"
#include "api/selector/label_selector.h"
#include "api/types/field.h"
#include "apiserver/kube_controllers/controller_indexes.h"
#include "apiserver/kube_controllers/template_hash.h"
#include "base/str_cat.h"

namespace kcr {
namespace apiserver {
namespace {

namespace field = ::kcr::api::field;
using Value = rapidjson::Value;

// kube's ControllerRevisionName: the owner's name cut to leave room for
// the hash within a name's 253 characters.
std::string RevisionName(std::string_view owner, std::string_view hash) {
  if (owner.size() > 223) owner = owner.substr(0, 223);
  return Cat(owner, "-", hash);
}

// {"spec":{"template":{...,"$patch":"replace"}}} of the owner's template.
rapidjson::Document TemplatePatch(const Value* pod_template) {
  rapidjson::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  Value t(rapidjson::kObjectType);
  if (pod_template != nullptr && pod_template->IsObject()) {
    t.CopyFrom(*pod_template, a);
  }
  t.RemoveMember("$patch");
  t.AddMember("$patch", "replace", a);
  Value spec(rapidjson::kObjectType);
  spec.AddMember("template", t, a);
  d.AddMember("spec", spec, a);
  return d;
}

bool SameData(const api::Object& revision, const Value& data) {
  const Value* d = field::Member(&revision.json(), "data");
  return d != nullptr && json::JsonDeepEqual(*d, data);
}

bool Before(const api::ObjectPtr& a, const api::ObjectPtr& b) {
  const int64_t ra = RevisionNumber(*a), rb = RevisionNumber(*b);
  if (ra != rb) return ra < rb;
  return a->name() < b->name();
}

api::OwnerReferenceView OwnerRef(const api::Object& owner,
                                 const HistoryStyle& style) {
  api::OwnerReferenceView ref;
  ref.api_version = "apps/v1";
  ref.kind = style.owner_kind;
  ref.name = owner.name();
  ref.uid = owner.uid();
  ref.controller = true;
  ref.block_owner_deletion = true;
  return ref;
}

// The owner's revisions: those it controls that its selector matches, and
// the orphans it adopts; releases those it controls but no longer matches.
absl::StatusOr<std::vector<api::ObjectPtr>> Claim(Registry* registry,
                                                  const ResourceInfo& revisions,
                                                  const api::Object& owner,
                                                  const HistoryStyle& style) {
  const Value* selector_json =
      field::Member(field::Object(&owner.json(), "spec"), "selector");
  absl::StatusOr<api::LabelSelector> selector =
      selector_json == nullptr
          ? absl::StatusOr<api::LabelSelector>(api::LabelSelector::Nothing())
          : api::LabelSelector::FromLabelSelector(*selector_json);
  if (!selector.ok()) return selector.status();
  const auto matches = [&](const api::Object& r) {
    return !selector->Empty() &&
           selector->Matches(
               field::Object(field::Object(&r.json(), "metadata"), "labels"));
  };
  Storage* storage = registry->storage();
  std::vector<api::ObjectPtr> out;
  for (api::ObjectPtr& r : storage->ByIndex(revisions.StorageKey(),
                                            kControllerIndex, owner.uid())) {
    if (matches(*r)) {
      out.push_back(std::move(r));
      continue;
    }
    api::ObjectBuilder b = r->ToBuilder();
    b.RemoveOwnerReference(owner.uid());
    absl::StatusOr<WriteResult> w =
        registry->Update(revisions, r->namespace_(), r->name(), std::move(b));
    if (!w.ok() && !api::IsNotFound(w.status())) return w.status();
  }
  if (owner.being_deleted()) return out;
  for (const api::ObjectPtr& r :
       storage->ByIndex(revisions.StorageKey(), kControllerIndex,
                        OrphanKey(owner.namespace_()))) {
    if (r->being_deleted() || !matches(*r)) continue;
    api::ObjectBuilder b = r->ToBuilder();
    b.AddOwnerReference(OwnerRef(owner, style));
    absl::StatusOr<WriteResult> w =
        registry->Update(revisions, r->namespace_(), r->name(), std::move(b));
    if (w.ok()) {
      out.push_back(w->object);
    } else if (!api::IsNotFound(w.status()) && !api::IsConflict(w.status())) {
      return w.status();
    }
  }
  return out;
}

// A new revision of `owner` holding `data`, named by `hash`.
absl::StatusOr<api::ObjectBuilder> NewRevision(const api::Object& owner,
                                               const HistoryStyle& style,
                                               const Value* pod_template,
                                               const Value& data,
                                               std::string_view hash,
                                               int64_t number) {
  api::ObjectBuilder b("apps/v1", "ControllerRevision");
  b.SetName(RevisionName(owner.name(), hash));
  b.SetNamespace(owner.namespace_());
  if (const Value* labels =
          field::Object(field::Object(pod_template, "metadata"), "labels");
      labels != nullptr) {
    if (absl::Status s = b.Set("/metadata/labels", *labels); !s.ok()) return s;
  }
  b.SetLabel(style.hash_label, hash);
  if (const Value* annotations = field::Object(
          field::Object(&owner.json(), "metadata"), "annotations");
      annotations != nullptr) {
    if (absl::Status s = b.Set("/metadata/annotations", *annotations);
        !s.ok()) {
      return s;
    }
  }
  b.AddOwnerReference(OwnerRef(owner, style));
  if (absl::Status s = b.Set("/data", data); !s.ok()) return s;
  if (absl::Status s = b.SetInt("/revision", number); !s.ok()) return s;
  return b;
}

}  // namespace

int64_t RevisionNumber(const api::Object& revision) {
  const Value* v = field::Member(&revision.json(), "revision");
  return v != nullptr && v->IsInt64() ? v->GetInt64() : 0;
}

api::ObjectPtr FindRevision(const History& history, std::string_view name) {
  for (const api::ObjectPtr& r : history.revisions) {
    if (r->name() == name) return r;
  }
  return nullptr;
}

absl::StatusOr<History> SyncHistory(Registry* registry,
                                    const api::Object& owner,
                                    const HistoryStyle& style) {
  ResourceInfoPtr revisions =
      registry->resources()->Lookup("apps", "v1", "controllerrevisions");
  if (revisions == nullptr) {
    return absl::FailedPreconditionError("controllerrevisions are not served");
  }
  History history;
  absl::StatusOr<std::vector<api::ObjectPtr>> claimed =
      Claim(registry, *revisions, owner, style);
  if (!claimed.ok()) return claimed.status();
  history.revisions = std::move(*claimed);
  std::sort(history.revisions.begin(), history.revisions.end(), Before);

  const Value* status = field::Object(&owner.json(), "status");
  const Value* count = field::Member(status, "collisionCount");
  const bool has_count = count != nullptr && count->IsInt64();
  history.collision_count = has_count ? count->GetInt64() : 0;
  const Value* pod_template =
      field::Object(field::Object(&owner.json(), "spec"), "template");
  const rapidjson::Document data = TemplatePatch(pod_template);
  std::string text;
  if (pod_template != nullptr) {
    AppendCanonicalJson(*pod_template, &text);
  } else {
    text = "{}";
  }
  const auto hash_now = [&] {
    return SafeEncodedHash(text,
                           has_count || history.collision_count > 0
                               ? std::optional<int64_t>(history.collision_count)
                               : std::nullopt);
  };
  const int64_t next = history.revisions.empty()
                           ? 1
                           : RevisionNumber(*history.revisions.back()) + 1;

  // The revisions already holding this template, newest last.
  std::vector<size_t> equal;
  for (size_t i = 0; i < history.revisions.size(); ++i) {
    if (SameData(*history.revisions[i], data)) equal.push_back(i);
  }
  if (!equal.empty()) {
    api::ObjectPtr keep = history.revisions[equal.back()];
    // Duplicates of one template: all but the newest go.
    for (size_t k = 0; k + 1 < equal.size(); ++k) {
      const api::ObjectPtr& dup = history.revisions[equal[k]];
      absl::StatusOr<DeleteResult> d = registry->Delete(
          *revisions, dup->namespace_(), dup->name(), DeleteOptions{});
      if (!d.ok() && !api::IsNotFound(d.status())) return d.status();
    }
    if (equal.size() > 1) {
      std::vector<api::ObjectPtr> rest;
      for (size_t i = 0; i < history.revisions.size(); ++i) {
        if (i == equal.back() ||
            std::find(equal.begin(), equal.end(), i) == equal.end()) {
          rest.push_back(history.revisions[i]);
        }
      }
      history.revisions = std::move(rest);
    }
    if (keep != history.revisions.back()) {
      // A rollback: the old revision becomes the newest.
      api::ObjectBuilder b = keep->ToBuilder();
      if (absl::Status s = b.SetInt("/revision", next); !s.ok()) return s;
      absl::StatusOr<WriteResult> w = registry->Update(
          *revisions, keep->namespace_(), keep->name(), std::move(b));
      if (!w.ok()) return w.status();
      for (api::ObjectPtr& r : history.revisions) {
        if (r == keep) r = w->object;
      }
      keep = w->object;
      std::sort(history.revisions.begin(), history.revisions.end(), Before);
    }
    history.update = keep;
    std::optional<std::string_view> label = keep->Label(style.hash_label);
    history.hash = label.has_value() ? std::string(*label) : hash_now();
    return history;
  }

  // A new revision; a name taken by other data raises the collision count.
  for (int attempt = 0; attempt < 16; ++attempt) {
    const std::string hash = hash_now();
    absl::StatusOr<api::ObjectBuilder> b =
        NewRevision(owner, style, pod_template, data, hash, next);
    if (!b.ok()) return b.status();
    absl::StatusOr<WriteResult> w =
        registry->Create(*revisions, owner.namespace_(), std::move(*b));
    if (w.ok()) {
      history.update = w->object;
      history.hash = hash;
      history.revisions.push_back(w->object);
      return history;
    }
    if (!api::IsAlreadyExists(w.status())) return w.status();
    api::ObjectPtr taken =
        registry->storage()->Get(revisions->StorageKey(), owner.namespace_(),
                                 RevisionName(owner.name(), hash));
    if (taken != nullptr && SameData(*taken, data)) {
      // Another owner's, or one not yet claimed: kube takes it as it is.
      history.update = taken;
      history.hash = hash;
      history.revisions.push_back(taken);
      return history;
    }
    ++history.collision_count;
  }
  return absl::AbortedError(
      Cat("controllerrevision name collisions for ", owner.name()));
}

absl::Status TruncateHistory(Registry* registry, const History& history,
                             const absl::flat_hash_set<std::string>& live,
                             int64_t limit) {
  ResourceInfoPtr revisions =
      registry->resources()->Lookup("apps", "v1", "controllerrevisions");
  if (revisions == nullptr) return absl::OkStatus();
  std::vector<api::ObjectPtr> dead;
  for (const api::ObjectPtr& r : history.revisions) {
    if (r == history.update || r->name() == history.update->name() ||
        live.contains(std::string(r->name()))) {
      continue;
    }
    dead.push_back(r);
  }
  if (static_cast<int64_t>(dead.size()) <= limit) return absl::OkStatus();
  dead.resize(dead.size() - std::max<int64_t>(limit, 0));
  for (const api::ObjectPtr& r : dead) {
    absl::StatusOr<DeleteResult> d = registry->Delete(
        *revisions, r->namespace_(), r->name(), DeleteOptions{});
    if (!d.ok() && !api::IsNotFound(d.status())) return d.status();
  }
  return absl::OkStatus();
}

absl::StatusOr<rapidjson::Document> RevisionTemplate(
    const api::Object& revision) {
  const Value* t = field::Object(
      field::Object(field::Member(&revision.json(), "data"), "spec"),
      "template");
  if (t == nullptr) {
    return absl::InvalidArgumentError(
        Cat("controllerrevision ", revision.name(), " holds no template"));
  }
  rapidjson::Document d;
  d.CopyFrom(*t, d.GetAllocator());
  d.RemoveMember("$patch");
  return d;
}

}  // namespace apiserver
}  // namespace kcr

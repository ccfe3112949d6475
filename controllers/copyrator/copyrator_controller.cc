#include "controllers/copyrator/copyrator_controller.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "api/errors/errors.h"
#include "api/object_builder.h"
#include "api/selector/label_selector.h"
#include "api/types/condition.h"
#include "api/types/config_map.h"
#include "api/types/event.h"
#include "api/types/namespace.h"
#include "api/types/secret.h"
#include "base/mutex.h"
#include "base/status_macros.h"
#include "base/string_view.h"
#include "controllers/copyrator/copy_plan.h"
#include "controllers/copyrator/copyrator_types.h"
#include "glog/logging.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/registry.h"
#include "runtime/cache/lister.h"
#include "runtime/cache/typed_lister.h"
#include "runtime/client/options.h"
#include "runtime/client/typed_client.h"
#include "runtime/controller/builder.h"
#include "runtime/controller/controllerutil/conditions.h"
#include "runtime/controller/controllerutil/finalizer.h"
#include "runtime/controller/controllerutil/status.h"
#include "runtime/controller/handler.h"
#include "runtime/controller/reconciler.h"
#include "runtime/events/event_recorder.h"

namespace kcr::copyrator {
namespace {

// Where rules and copies live, as their types declare it.
client::Resource Rules(std::string ns = "") {
  return client::ResourceFor<CopyratorRule>(std::move(ns));
}
client::Resource CopiesOf(std::string_view kind, std::string ns = "") {
  return kind == kSecretKind
             ? client::ResourceFor<api::SecretView>(std::move(ns))
             : client::ResourceFor<api::ConfigMapView>(std::move(ns));
}

// At most this many conflicts are named in the Ready condition's message.
constexpr size_t kConflictsListed = 10;
// How long to wait for copies still being deleted before looking again
// (their delete events wake the rule earlier).
constexpr absl::Duration kDeletePoll = absl::Seconds(2);

// A rule as the reconciler uses it.
struct ParsedRule {
  std::string kind;  // kConfigMapKind or kSecretKind
  api::LabelSelector selector;
  std::vector<std::string> namespaces;  // the sources', without repeats
};

// The rule's kind, selector and source namespaces, or the reasons it is
// invalid. A rule without a selector selects nothing, one with an empty
// selector ({} or "") everything, as apimachinery reads a nil and an empty
// LabelSelector.
absl::StatusOr<ParsedRule> Parse(const api::Object& object) {
  absl::StatusOr<CopyratorRule> rule = CopyratorRule::FromJson(object.json());
  if (!rule.ok()) return rule.status();
  std::vector<std::string> errors = rule->Validate();
  if (!errors.empty()) {
    return absl::InvalidArgumentError(absl::StrJoin(errors, "; "));
  }
  ParsedRule out;
  out.kind = rule->rule_type == "secret" ? kSecretKind : kConfigMapKind;
  switch (rule->selector_form) {
    case CopyratorRule::SelectorForm::kAbsent:
      out.selector = api::LabelSelector::Nothing();
      break;
    case CopyratorRule::SelectorForm::kLabelMap: {
      api::LabelMap set(rule->selector_labels.begin(),
                        rule->selector_labels.end());
      KCR_ASSIGN_OR_RETURN(out.selector,
                           api::LabelSelector::ValidatedSelectorFromSet(set));
      break;
    }
    case CopyratorRule::SelectorForm::kString:
      KCR_ASSIGN_OR_RETURN(out.selector,
                           api::LabelSelector::Parse(rule->selector_string));
      break;
  }
  std::vector<std::string> namespaces = rule->namespaces;
  if (namespaces.empty()) namespaces.emplace_back(object.namespace_());
  for (std::string& ns : namespaces) {
    if (std::find(out.namespaces.begin(), out.namespaces.end(), ns) ==
        out.namespaces.end()) {
      out.namespaces.push_back(std::move(ns));
    }
  }
  return out;
}

// Whether a create was refused because its namespace is being deleted
// (the cause kube-apiserver's NamespaceLifecycle admission gives): the
// namespace turned Terminating after the cache was read, and gets no copy.
bool NamespaceTerminating(const absl::Status& s) {
  if (!api::IsForbidden(s)) return false;
  std::optional<api::StatusError> e = api::GetStatusError(s);
  if (!e.has_value()) return false;
  return std::any_of(e->causes.begin(), e->causes.end(),
                     [](const api::StatusCause& c) {
                       return c.reason == "NamespaceTerminating";
                     });
}

bool IsSource(const ParsedRule& rule, const api::Object& object) {
  return !IsCopy(object) && !object.being_deleted() &&
         std::find(rule.namespaces.begin(), rule.namespaces.end(),
                   object.namespace_()) != rule.namespaces.end() &&
         rule.selector.Matches(object.Find("/metadata/labels"));
}

// What status the rule should show.
struct WantedStatus {
  int64_t copies = 0;
  api::Condition ready;
};

int64_t IntAt(const api::Object& o, const char* pointer) {
  const rapidjson::Value* v = o.Find(pointer);
  return v != nullptr && v->IsInt64() ? v->GetInt64() : -1;
}

// Whether the rule's status already says what `want` says.
bool StatusShows(const api::Object& rule, const WantedStatus& want) {
  if (IntAt(rule, "/status/copies") != want.copies) return false;
  if (IntAt(rule, "/status/observedGeneration") != rule.generation()) {
    return false;
  }
  const std::vector<api::Condition> conditions = api::ConditionsOf(rule);
  const api::Condition* ready =
      api::FindStatusCondition(conditions, kReadyCondition);
  return ready != nullptr && ready->status == want.ready.status &&
         ready->reason == want.ready.reason &&
         ready->message == want.ready.message &&
         ready->observed_generation == rule.generation();
}

// ConfigMaps and Secrets alike, as the whole objects a copy is made of.
class Sources {
 public:
  explicit Sources(controller::Manager& mgr)
      : configmaps_(mgr.ListerFor<api::ConfigMapView>()),
        secrets_(mgr.ListerFor<api::SecretView>()) {}

  std::vector<api::ObjectPtr> List(std::string_view kind, std::string ns,
                                   const api::LabelSelector& selector) const {
    return kind == kSecretKind
               ? Objects(secrets_.Namespace(std::move(ns)).List(selector))
               : Objects(configmaps_.Namespace(std::move(ns)).List(selector));
  }
  // In every namespace.
  std::vector<api::ObjectPtr> List(std::string_view kind,
                                   const api::LabelSelector& selector) const {
    return kind == kSecretKind ? Objects(secrets_.List(selector))
                               : Objects(configmaps_.List(selector));
  }
  // Null when the cache has none.
  api::ObjectPtr Get(std::string_view kind, std::string_view ns,
                     std::string_view name) const {
    if (kind == kSecretKind) return Object(secrets_.Get(ns, name));
    return Object(configmaps_.Get(ns, name));
  }

 private:
  template <typename View>
  static std::vector<api::ObjectPtr> Objects(const std::vector<View>& views) {
    std::vector<api::ObjectPtr> out;
    out.reserve(views.size());
    for (const View& v : views) out.push_back(v.ptr());
    return out;
  }
  template <typename View>
  static api::ObjectPtr Object(const absl::StatusOr<View>& view) {
    return view.ok() ? view->ptr() : nullptr;
  }

  const cache::ConfigMapLister configmaps_;
  const cache::SecretLister secrets_;
};

// What one reconcile did to the copies.
struct Applied {
  int64_t copies = 0;    // in step after it
  absl::Status failed;   // the first write that failed, not for a stale cache
  bool requeue = false;  // a write found the cache behind
};

class CopyratorReconciler final : public controller::Reconciler {
 public:
  // `warnings` (the Manager's registry's) counts the Warning Events.
  CopyratorReconciler(controller::Manager& mgr,
                      prometheus::Family<prometheus::Counter>& warnings)
      : invalid_spec_(&warnings.Add({{"reason", kEventInvalidSpec}})),
        conflicts_(&warnings.Add({{"reason", kEventConflict}})),
        client_(mgr.GetClient()),
        clock_(mgr.clock()),
        recorder_(mgr.GetEventRecorderFor(kCopyratorEventComponent)),
        rules_(mgr.ListerFor<CopyratorRule>()),
        sources_(mgr),
        namespaces_(mgr.ListerFor<api::NamespaceView>()) {}

  absl::StatusOr<controller::Result> Reconcile(
      const controller::Request& request,
      controller::ReconcileContext& ctx) override {
    // 1. The rule. Gone: its leftover copies go. Being deleted: its copies
    // go, then its finalizer.
    const std::string rule_ref =
        absl::StrCat(request.namespace_, "/", request.name);
    absl::StatusOr<api::ObjectPtr> rule =
        rules_.Get(request.namespace_, request.name);
    if (api::IsNotFound(rule.status())) return Orphans(rule_ref, ctx);
    KCR_RETURN_IF_ERROR(rule.status());
    if ((*rule)->being_deleted()) return Finalize(*rule, rule_ref, ctx);

    // 2. The finalizer, so that a delete waits for the copies.
    api::ObjectPtr current = *rule;
    if (!current->HasFinalizer(kFinalizer)) {
      KCR_ASSIGN_OR_RETURN(
          current, controller::controllerutil::AddFinalizer(
                       ctx.ctx(), client_, Rules(request.namespace_), current,
                       kFinalizer));
    }

    // 3. What the rule asks for. Nothing changes for a rule that does not
    // say what it means; its copies stay until it is fixed or deleted.
    absl::StatusOr<ParsedRule> parsed = Parse(*current);
    if (!parsed.ok()) {
      KCR_RETURN_IF_ERROR(
          RefuseInvalid(ctx, current, rule_ref, parsed.status()));
      return controller::Result::Done();
    }

    // 4. The copies to create, update and delete, from the cache.
    const std::vector<api::ObjectPtr> sources = SourcesOf(*parsed);
    KCR_ASSIGN_OR_RETURN(CopyPlan plan, Plan(rule_ref, *parsed, sources));

    // 5. Make them so, and report the targets left alone.
    const Applied applied = Apply(ctx, *parsed, plan);
    ReportConflicts(rule_ref, *current, plan.conflicts, ctx);

    // 6. The status.
    const absl::Status status_written = WriteStatus(
        ctx, current,
        {applied.copies, ReadyFor(*current, applied, plan, sources.size())});
    KCR_RETURN_IF_ERROR(applied.failed);
    if (applied.requeue || api::IsConflict(status_written)) {
      return controller::Result::Requeue();
    }
    KCR_RETURN_IF_ERROR(status_written);
    return controller::Result::Done();
  }

  // The rules a ConfigMap or Secret of `kind` can concern: the rule its
  // copy annotation names, and every rule of that kind for which it is a
  // source or stands at a target name of one of its sources.
  std::vector<controller::Request> RulesFor(std::string_view kind,
                                            const api::Object& object) const {
    std::set<std::pair<std::string, std::string>> keys;
    if (std::optional<std::string_view> rule =
            object.Annotation(kRuleAnnotation)) {
      const size_t slash = rule->find('/');
      if (slash != std::string_view::npos) {
        keys.emplace(rule->substr(0, slash), rule->substr(slash + 1));
      }
    }
    for (const api::ObjectPtr& r :
         rules_.List(api::LabelSelector::Everything())) {
      absl::StatusOr<ParsedRule> parsed = Parse(*r);
      if (!parsed.ok() || parsed->kind != kind) continue;
      bool concerned = IsSource(*parsed, object);
      for (size_t i = 0; !concerned && i < parsed->namespaces.size(); ++i) {
        const api::ObjectPtr source =
            sources_.Get(kind, parsed->namespaces[i], object.name());
        concerned = source != nullptr && IsSource(*parsed, *source);
      }
      if (concerned) keys.emplace(r->namespace_(), r->name());
    }
    std::vector<controller::Request> out;
    for (auto& [ns, name] : keys) out.push_back({ns, name});
    return out;
  }

  std::vector<controller::Request> AllRules() const {
    std::vector<controller::Request> out;
    for (const api::ObjectPtr& r :
         rules_.List(api::LabelSelector::Everything())) {
      out.push_back({std::string(r->namespace_()), std::string(r->name())});
    }
    return out;
  }

 private:
  // A rule that cannot be acted on: the Ready condition says why, and a
  // Warning Event when it first says so.
  absl::Status RefuseInvalid(controller::ReconcileContext& ctx,
                             const api::ObjectPtr& rule,
                             const std::string& rule_ref,
                             const absl::Status& invalid) {
    WantedStatus want;
    want.copies = CountCopies(rule_ref);
    want.ready = Ready("False", kEventInvalidSpec,
                       std::string(invalid.message()), *rule);
    if (!StatusShows(*rule, want)) {
      invalid_spec_->Increment();
      recorder_->Event(*rule, api::kEventTypeWarning, kEventInvalidSpec,
                       ToStd(invalid.message()));
      LOG(WARNING) << ctx.log_prefix()
                   << " invalid rule: " << invalid.message();
    }
    return WriteStatus(ctx, rule, want);
  }

  // The rule's sources in the cache, by namespace and name.
  std::vector<api::ObjectPtr> SourcesOf(const ParsedRule& rule) const {
    std::vector<api::ObjectPtr> out;
    for (const std::string& ns : rule.namespaces) {
      std::vector<api::ObjectPtr> found =
          sources_.List(rule.kind, ns, rule.selector);
      std::sort(found.begin(), found.end(),
                [](const api::ObjectPtr& a, const api::ObjectPtr& b) {
                  return a->name() < b->name();
                });
      for (api::ObjectPtr& o : found) {
        if (IsSource(rule, *o)) out.push_back(std::move(o));
      }
    }
    return out;
  }

  absl::StatusOr<CopyPlan> Plan(const std::string& rule_ref,
                                const ParsedRule& rule,
                                const std::vector<api::ObjectPtr>& sources) {
    PlanInput in;
    in.rule = rule_ref;
    in.kind = rule.kind;
    in.sources = sources;
    for (const api::NamespaceView& ns :
         namespaces_.List(api::LabelSelector::Everything())) {
      in.namespaces.push_back(ns.ptr());
    }
    in.existing = [this, &rule](std::string_view ns, std::string_view name) {
      return sources_.Get(rule.kind, ns, name);
    };
    in.copies = CachedCopies(rule_ref);
    return PlanCopies(in);
  }

  // Creates, updates and deletes the copies `plan` lists. A write that
  // finds the cache behind (AlreadyExists, Conflict, NotFound) asks for a
  // requeue; the watch catches up.
  Applied Apply(controller::ReconcileContext& ctx, const ParsedRule& rule,
                const CopyPlan& plan) {
    Applied applied;
    applied.copies = plan.in_step;
    auto note = [&](const absl::Status& s) {
      if (api::IsAlreadyExists(s) || api::IsConflict(s) || api::IsNotFound(s)) {
        applied.requeue = true;
      } else if (!s.ok() && applied.failed.ok()) {
        applied.failed = s;
      }
    };
    for (const api::ObjectPtr& copy : plan.create) {
      absl::Status s =
          client_
              ->Create(ctx.ctx(),
                       CopiesOf(rule.kind, std::string(copy->namespace_())),
                       *copy)
              .status();
      if (NamespaceTerminating(s)) {
        VLOG(2) << ctx.log_prefix()
                << " namespace terminating, no copy target=" << RefOf(*copy);
        continue;
      }
      LogWrite(ctx, "created", *copy, s);
      if (s.ok()) ++applied.copies;
      note(s);
    }
    for (const api::ObjectPtr& copy : plan.update) {
      absl::Status s =
          client_
              ->Update(ctx.ctx(),
                       CopiesOf(rule.kind, std::string(copy->namespace_())),
                       *copy)
              .status();
      LogWrite(ctx, "updated", *copy, s);
      if (s.ok()) ++applied.copies;
      note(s);
    }
    for (const api::ObjectPtr& copy : plan.remove) {
      absl::Status s = DeleteCopy(ctx, *copy);
      LogWrite(ctx, "deleted", *copy, s);
      if (!api::IsNotFound(s)) note(s);
    }
    return applied;
  }

  // Ready: False when a write failed (SyncFailed) or targets are left
  // alone (Conflict), else True (Synced) counting copies and sources.
  api::Condition ReadyFor(const api::Object& rule, const Applied& applied,
                          const CopyPlan& plan, size_t sources) const {
    if (!applied.failed.ok()) {
      return Ready("False", "SyncFailed", std::string(applied.failed.message()),
                   rule);
    }
    if (!plan.conflicts.empty()) {
      return Ready("False", kEventConflict, ConflictMessage(plan.conflicts),
                   rule);
    }
    return Ready("True", "Synced",
                 absl::StrCat(plan.wanted, " copies of ", sources,
                              sources == 1 ? " source" : " sources"),
                 rule);
  }

  api::Condition Ready(std::string status, std::string reason,
                       std::string message, const api::Object& rule) const {
    api::Condition c;
    c.type = kReadyCondition;
    c.status = std::move(status);
    c.reason = std::move(reason);
    c.message = std::move(message);
    c.observed_generation = rule.generation();
    return c;
  }

  // The copies in the cache whose rule annotation names `rule_ref`.
  std::vector<api::ObjectPtr> CachedCopies(const std::string& rule_ref) const {
    const size_t slash = rule_ref.find('/');
    absl::StatusOr<api::LabelSelector> selector =
        api::LabelSelector::Parse(absl::StrCat(
            kRuleLabel, "=",
            LabelValue(rule_ref.substr(0, slash), rule_ref.substr(slash + 1))));
    std::vector<api::ObjectPtr> out;
    if (!selector.ok()) return out;
    for (const char* kind : {kConfigMapKind, kSecretKind}) {
      for (api::ObjectPtr& o : sources_.List(kind, *selector)) {
        if (o->Annotation(kRuleAnnotation) == rule_ref) {
          out.push_back(std::move(o));
        }
      }
    }
    return out;
  }

  int64_t CountCopies(const std::string& rule_ref) const {
    int64_t n = 0;
    for (const api::ObjectPtr& o : CachedCopies(rule_ref)) {
      if (!o->being_deleted()) ++n;
    }
    return n;
  }

  absl::Status DeleteCopy(controller::ReconcileContext& ctx,
                          const api::Object& copy) {
    client::DeleteOptions options;
    // Only the object we looked at: never one made since under that name.
    options.preconditions.uid = std::string(copy.uid());
    return client_->Delete(
        ctx.ctx(), CopiesOf(copy.kind(), std::string(copy.namespace_())),
        copy.name(), options);
  }

  // Names only: a Secret's data never reaches the log.
  void LogWrite(controller::ReconcileContext& ctx, const char* what,
                const api::Object& copy, const absl::Status& s) const {
    if (s.ok()) {
      LOG(INFO) << ctx.log_prefix() << " " << what
                << " copy kind=" << copy.kind() << " target=" << RefOf(copy)
                << " source="
                << copy.Annotation(kSourceAnnotation).value_or("");
    } else {
      LOG(WARNING) << ctx.log_prefix() << " copy not " << what
                   << " kind=" << copy.kind() << " target=" << RefOf(copy)
                   << " code=" << absl::StatusCodeToString(s.code());
    }
  }

  // The copies of a deleted rule (its finalizer was removed by hand, or
  // the rule went while no manager ran): nothing should keep them.
  absl::StatusOr<controller::Result> Orphans(
      const std::string& rule_ref, controller::ReconcileContext& ctx) {
    {
      MutexLock lock(&mu_);
      reported_.erase(rule_ref);
    }
    absl::Status failed;
    for (const api::ObjectPtr& copy : CachedCopies(rule_ref)) {
      if (copy->being_deleted()) continue;
      absl::Status s = DeleteCopy(ctx, *copy);
      LogWrite(ctx, "deleted", *copy, s);
      if (!s.ok() && !api::IsNotFound(s) && failed.ok()) failed = s;
    }
    KCR_RETURN_IF_ERROR(failed);
    return controller::Result::Done();
  }

  // A rule being deleted: delete its copies, then release the finalizer.
  // The copies are listed from the API server, as the cache may not yet
  // hold one created by the last reconcile.
  absl::StatusOr<controller::Result> Finalize(
      const api::ObjectPtr& rule, const std::string& rule_ref,
      controller::ReconcileContext& ctx) {
    {
      MutexLock lock(&mu_);
      reported_.erase(rule_ref);
    }
    if (!rule->HasFinalizer(kFinalizer)) return controller::Result::Done();
    client::ListOptions options;
    options.label_selector = absl::StrCat(
        kRuleLabel, "=", LabelValue(rule->namespace_(), rule->name()));
    bool remaining = false;
    for (int pass = 0; pass < 2; ++pass) {
      remaining = false;
      for (const char* kind : {kConfigMapKind, kSecretKind}) {
        KCR_ASSIGN_OR_RETURN(client::ObjectList list,
                             client_->List(ctx.ctx(), CopiesOf(kind), options));
        for (const api::ObjectPtr& copy : list.items) {
          if (copy->Annotation(kRuleAnnotation) != rule_ref) continue;
          remaining = true;
          if (pass == 1 || copy->being_deleted()) continue;
          absl::Status s = DeleteCopy(ctx, *copy);
          LogWrite(ctx, "deleted", *copy, s);
          if (!s.ok() && !api::IsNotFound(s)) return s;
        }
      }
      if (!remaining) break;
    }
    if (remaining) return controller::Result::RequeueAfter(kDeletePoll);
    absl::Status s =
        controller::controllerutil::RemoveFinalizer(
            ctx.ctx(), client_, Rules(std::string(rule->namespace_())), rule,
            kFinalizer)
            .status();
    if (api::IsNotFound(s)) return controller::Result::Done();
    KCR_RETURN_IF_ERROR(s);
    LOG(INFO) << ctx.log_prefix() << " copies removed, finalizer released";
    return controller::Result::Done();
  }

  static std::string ConflictText(const Conflict& c) {
    return absl::StrCat(c.target, " (", c.reason, "; source ", c.source, ")");
  }

  static std::string ConflictMessage(const std::vector<Conflict>& conflicts) {
    std::vector<std::string> parts;
    for (size_t i = 0; i < conflicts.size() && i < kConflictsListed; ++i) {
      parts.push_back(ConflictText(conflicts[i]));
    }
    std::string message = absl::StrCat(
        conflicts.size(), conflicts.size() == 1 ? " target" : " targets",
        " left alone: ", absl::StrJoin(parts, ", "));
    if (conflicts.size() > kConflictsListed) {
      absl::StrAppend(&message, ", and ", conflicts.size() - kConflictsListed,
                      " more");
    }
    return message;
  }

  // A Warning Event for each conflict not reported since it last began,
  // so that a standing conflict is reported once, not on every reconcile.
  void ReportConflicts(const std::string& rule_ref, const api::Object& rule,
                       const std::vector<Conflict>& conflicts,
                       controller::ReconcileContext& ctx) {
    std::set<std::string> now;
    for (const Conflict& c : conflicts) now.insert(ConflictText(c));
    std::vector<std::string> fresh;
    {
      MutexLock lock(&mu_);
      std::set<std::string>& before = reported_[rule_ref];
      for (const std::string& c : now) {
        if (!before.count(c)) fresh.push_back(c);
      }
      before = std::move(now);
      if (before.empty()) reported_.erase(rule_ref);
    }
    for (const std::string& c : fresh) {
      LOG(WARNING) << ctx.log_prefix() << " conflict target=" << c;
      conflicts_->Increment();
      recorder_->Event(rule, api::kEventTypeWarning, kEventConflict,
                       absl::StrCat("not copying to ", c));
    }
  }

  // Writes status.copies, status.observedGeneration and the Ready
  // condition, when the rule does not show them already.
  absl::Status WriteStatus(controller::ReconcileContext& ctx,
                           const api::ObjectPtr& rule,
                           const WantedStatus& want) {
    if (StatusShows(*rule, want)) return absl::OkStatus();
    const absl::Time now = clock_->Now();
    const int64_t generation = rule->generation();
    absl::Status s =
        controller::controllerutil::UpdateStatus(
            ctx.ctx(), client_, Rules(), rule,
            [&](api::ObjectBuilder& o) -> absl::Status {
              KCR_RETURN_IF_ERROR(o.SetInt("/status/copies", want.copies));
              KCR_RETURN_IF_ERROR(
                  o.SetInt("/status/observedGeneration", generation));
              return controller::controllerutil::SetStatusCondition(
                         o, want.ready, now)
                  .status();
            })
            .status();
    return api::IsNotFound(s) ? absl::OkStatus() : s;
  }

  prometheus::Counter* const invalid_spec_;
  prometheus::Counter* const conflicts_;
  client::RestClient* const client_;
  const Clock* const clock_;
  const std::unique_ptr<events::EventRecorder> recorder_;
  const cache::Lister rules_;
  const Sources sources_;
  const cache::NamespaceViewLister namespaces_;

  Mutex mu_;
  // Per rule, the conflicts its last reconcile reported.
  std::map<std::string, std::set<std::string>> reported_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

absl::Status AddCopyratorController(controller::Manager& mgr,
                                    const CopyratorOptions& options) {
  auto& warnings =
      prometheus::BuildCounter()
          .Name("kcr_copyrator_warnings_total")
          .Help(
              "Warning Events the copyrator controller recorded on rules, by "
              "reason: InvalidSpec (a rule it cannot act on), Conflict (a "
              "target it must leave alone).")
          .Register(mgr.GetMetricsRegistry());
  auto reconciler = std::make_shared<CopyratorReconciler>(mgr, warnings);
  CopyratorReconciler* r = reconciler.get();
  controller::ControllerOptions controller_options;
  controller_options.max_concurrent_reconciles = options.workers;
  return controller::ControllerBuilder(mgr)
      .For<CopyratorRule>()
      .Watches<api::ConfigMapView>(
          [r](const api::Object& o) { return r->RulesFor(kConfigMapKind, o); })
      .Watches<api::SecretView>(
          [r](const api::Object& o) { return r->RulesFor(kSecretKind, o); })
      .Watches<api::NamespaceView>(
          [r](const api::Object&) { return r->AllRules(); })
      .Named(kCopyratorControllerName)
      .WithOptions(std::move(controller_options))
      .Complete(std::move(reconciler));
}

}  // namespace kcr::copyrator

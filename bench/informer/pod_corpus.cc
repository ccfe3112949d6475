#include "bench/informer/pod_corpus.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/string_view.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kcr::bench {
namespace {

constexpr std::string_view kNamePrefix = "web-frontend-7c5ddbdf54-";
constexpr int kNameDigits = 7;

// The fields that vary between pods, in the order of kPlaceholders.
enum Field { kName, kNamespace, kUid, kResourceVersion, kRev, kFieldCount };
constexpr std::string_view kPlaceholders[kFieldCount] = {
    "\"@@NAME@@\"", "\"@@NAMESPACE@@\"", "\"@@UID@@\"", "\"@@RV@@\"",
    "\"@@REV@@\""};

// The minified fixture cut at its placeholders: literal[0] field[0]
// literal[1] ... field[n-1] literal[n].
struct Template {
  std::vector<std::string> literals;
  std::vector<Field> fields;
};

absl::StatusOr<Template> MakeTemplate(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  rapidjson::Document doc;
  doc.Parse(text.c_str(), text.size());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("metadata") ||
      !doc["metadata"].IsObject()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a JSON object with metadata"));
  }
  auto& alloc = doc.GetAllocator();
  rapidjson::Value& meta = doc["metadata"];
  auto set = [&](const char* key, std::string_view placeholder) {
    // Without the quotes: the writer adds them.
    std::string_view bare = placeholder.substr(1, placeholder.size() - 2);
    rapidjson::Value value(
        bare.data(), static_cast<rapidjson::SizeType>(bare.size()), alloc);
    if (meta.HasMember(key)) {
      meta[key] = value;
    } else {
      meta.AddMember(rapidjson::Value(key, alloc), value, alloc);
    }
  };
  set("name", kPlaceholders[kName]);
  set("namespace", kPlaceholders[kNamespace]);
  set("uid", kPlaceholders[kUid]);
  set("resourceVersion", kPlaceholders[kResourceVersion]);
  if (!meta.HasMember("labels") || !meta["labels"].IsObject()) {
    meta.RemoveMember("labels");
    meta.AddMember("labels", rapidjson::Value(rapidjson::kObjectType), alloc);
  }
  std::string_view rev = kPlaceholders[kRev].substr(1);
  rev.remove_suffix(1);
  meta["labels"].AddMember(
      "bench-rev",
      rapidjson::Value(rev.data(), static_cast<rapidjson::SizeType>(rev.size()),
                       alloc),
      alloc);
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  doc.Accept(writer);
  std::string_view json(buffer.GetString(), buffer.GetSize());

  Template t;
  t.literals.emplace_back();
  while (!json.empty()) {
    size_t best = std::string_view::npos;
    int which = -1;
    for (int f = 0; f < kFieldCount; ++f) {
      size_t at = json.find(kPlaceholders[f]);
      if (at < best) {
        best = at;
        which = f;
      }
    }
    if (which < 0) {
      t.literals.back().append(json);
      break;
    }
    t.literals.back().append(json.substr(0, best));
    t.fields.push_back(static_cast<Field>(which));
    t.literals.emplace_back();
    json.remove_prefix(best + kPlaceholders[which].size());
  }
  return t;
}

struct PodValues {
  std::string name;
  std::string_view namespace_;
  std::string uid;
  int64_t resource_version;
  int64_t rev;
};

void Render(const Template& t, const PodValues& v, std::string* out) {
  for (size_t i = 0; i < t.fields.size(); ++i) {
    out->append(t.literals[i]);
    out->push_back('"');
    switch (t.fields[i]) {
      case kName:
        out->append(v.name);
        break;
      case kNamespace:
        out->append(v.namespace_);
        break;
      case kUid:
        out->append(v.uid);
        break;
      case kResourceVersion:
        absl::StrAppend(out, v.resource_version);
        break;
      case kRev:
        absl::StrAppend(out, v.rev);
        break;
      case kFieldCount:
        break;
    }
    out->push_back('"');
  }
  out->append(t.literals.back());
}

size_t RenderedSize(const Template& t) {
  size_t size = 0;
  for (const std::string& l : t.literals) size += l.size();
  return size + t.fields.size() * 48;
}

std::string Uid(int64_t i) {
  return absl::StrFormat("3f2b8c1e-9a4d-4e7b-b1c2-%012x", i);
}

}  // namespace

std::string PodName(int64_t i) {
  return absl::StrFormat("%s%0*d", kNamePrefix, kNameDigits, i);
}

absl::StatusOr<std::unique_ptr<PodCorpus>> PodCorpus::Create(
    const Options& options) {
  if (options.pods <= 0 || options.updates < 0 || options.namespaces.empty()) {
    return absl::InvalidArgumentError(
        "need pods > 0, updates >= 0 and at least one namespace");
  }
  absl::StatusOr<Template> t = MakeTemplate(options.fixture_path);
  if (!t.ok()) return t.status();

  std::unique_ptr<PodCorpus> corpus(new PodCorpus());
  corpus->namespaces_ = options.namespaces;
  const int64_t n = options.pods;
  const int64_t k_ns = static_cast<int64_t>(options.namespaces.size());
  const size_t size_hint = RenderedSize(*t);

  corpus->items_.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    std::string& item = corpus->items_[i];
    item.reserve(size_hint + 1);
    item.push_back(',');
    Render(*t,
           {PodName(i), options.namespaces[i % k_ns], Uid(i), i + 1,
            /*rev=*/0},
           &item);
    corpus->item_bytes_ += static_cast<int64_t>(item.size()) - 1;
  }
  constexpr std::string_view kEventHead = "{\"type\":\"MODIFIED\",\"object\":";
  corpus->events_.resize(options.updates);
  for (int64_t k = 0; k < options.updates; ++k) {
    std::string& event = corpus->events_[k];
    event.reserve(size_hint + kEventHead.size() + 2);
    event.append(kEventHead);
    const int64_t i = k % n;
    Render(*t,
           {PodName(i), options.namespaces[i % k_ns], Uid(i), n + 1 + k,
            k / n + 1},
           &event);
    event.append("}\n");
    corpus->event_bytes_ += static_cast<int64_t>(event.size());
  }

  // Key order: namespaces by name, then pods by name (= by index).
  std::vector<int> sorted_ns(k_ns);
  for (int j = 0; j < k_ns; ++j) sorted_ns[j] = j;
  std::sort(sorted_ns.begin(), sorted_ns.end(), [&](int a, int b) {
    return options.namespaces[a] < options.namespaces[b];
  });
  corpus->namespace_order_.resize(k_ns);
  for (int64_t i = 0; i < n; ++i) {
    corpus->namespace_order_[i % k_ns].push_back(i);
  }
  corpus->all_order_.reserve(n);
  corpus->namespace_offset_.resize(k_ns);
  for (int j : sorted_ns) {
    corpus->namespace_offset_[j] =
        static_cast<int64_t>(corpus->all_order_.size());
    const auto& order = corpus->namespace_order_[j];
    corpus->all_order_.insert(corpus->all_order_.end(), order.begin(),
                              order.end());
  }
  for (int j = 0; j < k_ns; ++j) {
    corpus->namespace_index_[options.namespaces[j]] = j;
  }
  return corpus;
}

const std::vector<int64_t>* PodCorpus::ScopeOrder(
    std::string_view namespace_) const {
  if (namespace_.empty()) return &all_order_;
  auto it = namespace_index_.find(ToAbsl(namespace_));
  if (it == namespace_index_.end()) return nullptr;
  return &namespace_order_[it->second];
}

int64_t PodCorpus::PositionOf(std::string_view namespace_,
                              std::string_view key) const {
  size_t slash = key.find('/');
  if (slash == std::string_view::npos) return -1;
  std::string_view ns = key.substr(0, slash);
  std::string_view name = key.substr(slash + 1);
  if (name.size() != kNamePrefix.size() + kNameDigits ||
      name.substr(0, kNamePrefix.size()) != kNamePrefix) {
    return -1;
  }
  int64_t i = 0;
  if (!absl::SimpleAtoi(ToAbsl(name.substr(kNamePrefix.size())), &i) || i < 0 ||
      i >= pods()) {
    return -1;
  }
  auto it = namespace_index_.find(ToAbsl(ns));
  if (it == namespace_index_.end() || it->second != namespace_of(i)) return -1;
  if (!namespace_.empty() && namespace_ != ns) return -1;
  // Pod i is the (i / K)-th of its namespace, whose run starts at
  // namespace_offset_ in the order of all pods.
  const int64_t in_namespace = i / static_cast<int64_t>(namespaces_.size());
  if (!namespace_.empty()) return in_namespace;
  return namespace_offset_[it->second] + in_namespace;
}

std::string PodCorpus::KeyOf(int64_t i) const {
  return absl::StrCat(namespaces_[namespace_of(i)], "/", PodName(i));
}

}  // namespace kcr::bench

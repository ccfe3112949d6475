#include "apiserver/endpoints/write_log.h"

#include "apiserver/internal/write_context.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kcr {
namespace apiserver {
namespace {

void String(rapidjson::Writer<rapidjson::StringBuffer>* w, const char* key,
            const std::string& value) {
  w->Key(key);
  w->String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
}

void Write(const WriteRecord& r,
           rapidjson::Writer<rapidjson::StringBuffer>* w) {
  w->StartObject();
  w->Key("seq");
  w->Int64(r.seq);
  String(w, "resourceVersion", r.resource_version);
  String(w, "verb", r.verb);
  String(w, "group", r.group);
  String(w, "version", r.version);
  String(w, "resource", r.resource);
  String(w, "subresource", r.subresource);
  String(w, "namespace", r.namespace_);
  String(w, "name", r.name);
  String(w, "userAgent", r.user_agent);
  w->Key("code");
  w->Int(r.code);
  w->EndObject();
}

}  // namespace

std::string WriteRecord::ToJson() const {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  Write(*this, &w);
  return std::string(buf.GetString(), buf.GetSize());
}

std::string WriteLog::ToJson(const std::vector<WriteRecord>& records) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("items");
  w.StartArray();
  for (const WriteRecord& r : records) Write(r, &w);
  w.EndArray();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

WriteRecord WriteLog::FromEvent(const StoredEvent& event,
                                const WriteContext& context) {
  WriteRecord r;
  r.resource_version = std::to_string(event.resource_version);
  // Storage keys are "<group>/<resource>".
  const size_t slash = event.collection.find('/');
  r.group = event.collection.substr(0, slash);
  if (slash != std::string::npos) {
    r.resource = event.collection.substr(slash + 1);
  }
  if (event.object != nullptr) {
    std::string_view api_version = event.object->api_version();
    const size_t v = api_version.rfind('/');
    if (v != std::string_view::npos) api_version.remove_prefix(v + 1);
    r.version = std::string(api_version);
    r.namespace_ = std::string(event.object->namespace_());
    r.name = std::string(event.object->name());
  }
  if (!context.verb.empty()) {
    r.verb = std::string(context.verb);
    r.subresource = std::string(context.subresource);
  } else {
    r.verb = event.type == EventType::kAdded     ? "create"
             : event.type == EventType::kDeleted ? "delete"
                                                 : "update";
  }
  r.user_agent = std::string(context.user_agent);
  if (context.code != 0) {
    r.code = context.code;
  } else {
    // kube answers 201 to a write that created the object.
    const bool created =
        event.type == EventType::kAdded &&
        (r.verb == "create" || r.verb == "update" || r.verb == "patch");
    r.code = created ? 201 : 200;
  }
  return r;
}

int64_t WriteLog::Append(WriteRecord record) {
  MutexLock l(&mu_);
  record.seq = ++last_seq_;
  if (subscribed_.load(std::memory_order_relaxed)) {
    undelivered_.push_back(record);
  }
  records_.push_back(std::move(record));
  while (records_.size() > capacity_) records_.pop_front();
  return last_seq_;
}

void WriteLog::Deliver() {
  if (!subscribed_.load(std::memory_order_acquire)) return;
  // A subscriber's own writes are delivered by the loop below, after it.
  thread_local bool delivering = false;
  if (delivering) return;
  MutexLock d(&deliver_mu_);
  delivering = true;
  while (true) {
    std::deque<WriteRecord> batch;
    std::vector<Subscriber> subscribers;
    {
      MutexLock l(&mu_);
      batch.swap(undelivered_);
      subscribers = subscribers_;
    }
    if (batch.empty()) break;
    for (const WriteRecord& r : batch) {
      for (const Subscriber& s : subscribers) s.second(r);
    }
  }
  delivering = false;
}

std::vector<WriteRecord> WriteLog::Since(int64_t seq) const {
  MutexLock l(&mu_);
  std::vector<WriteRecord> out;
  if (records_.empty() || seq >= last_seq_) return out;
  // Records are numbered consecutively: find the first by arithmetic.
  const int64_t first = records_.front().seq;
  const size_t from = seq < first ? 0 : static_cast<size_t>(seq - first + 1);
  out.assign(records_.begin() + static_cast<std::ptrdiff_t>(from),
             records_.end());
  return out;
}

int64_t WriteLog::last_seq() const {
  MutexLock l(&mu_);
  return last_seq_;
}

void WriteLog::Clear() {
  MutexLock l(&mu_);
  records_.clear();
}

int64_t WriteLog::Subscribe(std::function<void(const WriteRecord&)> fn) {
  MutexLock l(&mu_);
  const int64_t id = next_subscriber_++;
  subscribers_.emplace_back(id, std::move(fn));
  subscribed_.store(true, std::memory_order_release);
  return id;
}

void WriteLog::Unsubscribe(int64_t id) {
  MutexLock l(&mu_);
  for (auto it = subscribers_.begin(); it != subscribers_.end(); ++it) {
    if (it->first == id) {
      subscribers_.erase(it);
      break;
    }
  }
  if (subscribers_.empty()) {
    subscribed_.store(false, std::memory_order_release);
    undelivered_.clear();
  }
}

}  // namespace apiserver
}  // namespace kcr

#include "runtime/cache/thread_safe_store.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/string_view.h"
#include "glog/logging.h"

namespace kcr::cache {

namespace {

// An object's MetaNamespaceKey, "namespace/name" or "name", as one string
// only when it must be one (hashing, or a lookup that splits differently).
bool KeyIs(std::string_view ns, std::string_view name, std::string_view key) {
  if (ns.empty()) return name == key;
  return key.size() == ns.size() + 1 + name.size() &&
         key.compare(0, ns.size(), ns) == 0 && key[ns.size()] == '/' &&
         key.compare(ns.size() + 1, std::string_view::npos, name) == 0;
}

size_t HashKey(std::string_view ns, std::string_view name) {
  if (ns.empty()) return absl::Hash<std::string_view>{}(name);
  const size_t size = ns.size() + 1 + name.size();
  char buffer[320];  // a namespace (63) and a name (253) fit
  if (size > sizeof(buffer)) {
    return absl::Hash<std::string_view>{}(
        absl::StrCat(ToAbsl(ns), "/", ToAbsl(name)));
  }
  std::memcpy(buffer, ns.data(), ns.size());
  buffer[ns.size()] = '/';
  std::memcpy(buffer + ns.size() + 1, name.data(), name.size());
  return absl::Hash<std::string_view>{}(std::string_view(buffer, size));
}

}  // namespace

// The contents: keys, objects and indexes. Objects live in a dense array of
// fixed-size chunks, so that a List snapshot is a copy of the chunk table,
// not of every object; removal moves the last object into the hole. Keys
// live in a node map whose entries do not move, so index sets hold
// pointers to them (8 bytes per indexed value instead of a key copy).
//
// A key is not a string: it is read from the stored object itself (its
// namespace and name), through a pointer that an update moves to the new
// object. A key string would cost ~64 bytes more per object (its heap
// copy, and a larger node), 4% of a cached pod; lookups by a string key
// compare it piecewise.
struct ThreadSafeStore::State {
  static constexpr size_t kChunkSize = 256;

  // The object in the key's slot, and the key's hash: a rehash must not
  // read every object again (the node has room for it: 24 bytes of a
  // 32-byte allocation either way). Mutable: an update retargets it to the
  // new object under the same key (equal namespace and name, so its hash
  // and equality do not change).
  struct Key {
    explicit Key(const api::Object* o)
        : object(o), hash(HashKey(o->namespace_(), o->name())) {}
    mutable const api::Object* object;
    size_t hash;
  };
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(const Key& key) const { return key.hash; }
    size_t operator()(std::string_view key) const {
      return absl::Hash<std::string_view>{}(key);
    }
  };
  struct KeyEq {
    using is_transparent = void;
    bool operator()(const Key& a, const Key& b) const {
      if (a.object == b.object) return true;
      if (a.hash != b.hash) return false;
      const std::string_view a_ns = a.object->namespace_();
      const std::string_view b_ns = b.object->namespace_();
      if (a_ns.size() == b_ns.size()) {
        return a_ns == b_ns && a.object->name() == b.object->name();
      }
      // Equal strings split differently: only with a '/' in a name.
      return KeyIs(b_ns, b.object->name(), a.object->Key());
    }
    bool operator()(const Key& a, std::string_view b) const {
      return KeyIs(a.object->namespace_(), a.object->name(), b);
    }
    bool operator()(std::string_view a, const Key& b) const {
      return (*this)(b, a);
    }
  };

  // Key -> the object's position in the chunks.
  using KeyMap = absl::node_hash_map<Key, uint32_t, KeyHash, KeyEq>;
  using KeyEntry = KeyMap::value_type;
  struct Slot {
    api::ObjectPtr object;
    KeyEntry* entry = nullptr;
    // The object's name has no '/', so its key ("ns/name" or "name")
    // tells its namespace: two such objects under one key share it, and an
    // update need not read the old object (cold by then) for the
    // namespace index.
    bool plain_name = false;
  };
  struct Chunk {
    // The list epoch this chunk was made or copied in; see List.
    uint64_t epoch = 0;
    std::array<Slot, kChunkSize> slots;
  };
  using IndexSet = absl::flat_hash_set<const KeyEntry*>;
  // Indexed value -> the entries indexed under it; never an empty set.
  using IndexValues = absl::flat_hash_map<std::string, IndexSet>;

  KeyMap keys;
  std::vector<std::shared_ptr<Chunk>> chunks;
  size_t size = 0;
  // By index name; one per indexer.
  absl::flat_hash_map<std::string, IndexValues> indices;

  const Slot& At(uint32_t i) const {
    return chunks[i / kChunkSize]->slots[i % kChunkSize];
  }

  // The slot, in a chunk no List snapshot shares (copied first if needed).
  Slot& MutableAt(uint32_t i, uint64_t epoch) {
    std::shared_ptr<Chunk>& chunk = chunks[i / kChunkSize];
    if (chunk->epoch != epoch) {
      chunk = std::make_shared<Chunk>(*chunk);
      chunk->epoch = epoch;
    }
    return chunk->slots[i % kChunkSize];
  }

  // Calls f(value) for each value `func` indexes `object` under; the
  // namespace index without building a list of strings.
  template <typename F>
  static void ForEachValue(const IndexFunc& func, const api::Object& object,
                           F f) {
    if (func.target<index_internal::NamespaceIndex>() != nullptr) {
      f(object.namespace_());
      return;
    }
    for (const std::string& value : func(object)) f(value);
  }

  static void AddValues(IndexValues& index, const IndexFunc& func,
                        const api::Object& object, const KeyEntry* entry) {
    ForEachValue(func, object, [&](std::string_view value) {
      auto it = index.find(ToAbsl(value));
      if (it == index.end()) {
        it = index.emplace(std::string(value), IndexSet()).first;
      }
      it->second.insert(entry);
    });
  }

  static void AddValues(IndexValues& index,
                        const std::vector<std::string>& values,
                        const KeyEntry* entry) {
    for (const std::string& value : values) index[value].insert(entry);
  }

  static void RemoveValue(IndexValues& index, std::string_view value,
                          const KeyEntry* entry) {
    auto it = index.find(ToAbsl(value));
    if (it == index.end()) return;
    it->second.erase(entry);
    // Empty sets would pin every value ever seen (kubernetes#84959).
    if (it->second.empty()) index.erase(it);
  }

  static void RemoveValues(IndexValues& index,
                           const std::vector<std::string>& values,
                           const KeyEntry* entry) {
    for (const std::string& value : values) RemoveValue(index, value, entry);
  }

  // Inserts or replaces; returns the previous object. Keeps the indexes of
  // `indexers` up to date.
  // `object` must have a name.
  api::ObjectPtr Upsert(api::ObjectPtr object, const Indexers& indexers,
                        uint64_t epoch) {
    auto [it, inserted] =
        keys.try_emplace(Key(object.get()), static_cast<uint32_t>(size));
    KeyEntry* entry = &*it;
    const bool plain_name = object->name().find('/') == std::string_view::npos;
    if (inserted) {
      if (size % kChunkSize == 0) {
        chunks.push_back(std::make_shared<Chunk>());
        chunks.back()->epoch = epoch;
      }
      for (const auto& [name, func] : indexers) {
        AddValues(indices[name], func, *object, entry);
      }
      Slot& slot = MutableAt(static_cast<uint32_t>(size), epoch);
      slot.object = std::move(object);
      slot.entry = entry;
      slot.plain_name = plain_name;
      ++size;
      return nullptr;
    }
    const Slot& old_slot = At(entry->second);
    const api::ObjectPtr& old = old_slot.object;
    const bool same_namespace = plain_name && old_slot.plain_name;
    for (const auto& [name, func] : indexers) {
      if (same_namespace &&
          func.target<index_internal::NamespaceIndex>() != nullptr) {
        continue;
      }
      // The common update (same namespace, same labels) builds no value
      // lists at all.
      if (IndexValuesUnchanged(func, *old, *object)) continue;
      std::vector<std::string> old_values = func(*old);
      std::vector<std::string> new_values = func(*object);
      // client-go's fast path covers one equal value; any equal list
      // leaves the index as it is.
      if (old_values == new_values) continue;
      IndexValues& index = indices[name];
      RemoveValues(index, old_values, entry);
      AddValues(index, new_values, entry);
    }
    Slot& slot = MutableAt(entry->second, epoch);
    slot.plain_name = plain_name;
    entry->first.object = object.get();
    return std::exchange(slot.object, std::move(object));
  }

  api::ObjectPtr Remove(std::string_view key, const Indexers& indexers,
                        uint64_t epoch) {
    auto it = keys.find(key);
    if (it == keys.end()) return nullptr;
    KeyEntry* entry = &*it;
    const uint32_t i = entry->second;
    api::ObjectPtr removed = At(i).object;
    for (const auto& [name, func] : indexers) {
      IndexValues& index = indices[name];
      ForEachValue(func, *removed, [&](std::string_view value) {
        RemoveValue(index, value, entry);
      });
    }
    const uint32_t last = static_cast<uint32_t>(size - 1);
    const bool drop_last_chunk = last % kChunkSize == 0;
    if (i != last) {
      Slot& hole = MutableAt(i, epoch);
      hole = At(last);
      hole.entry->second = i;
    }
    if (drop_last_chunk) {
      chunks.pop_back();
    } else {
      MutableAt(last, epoch) = Slot{};
    }
    --size;
    keys.erase(it);
    return removed;
  }

  void BuildIndex(const std::string& name, const IndexFunc& func) {
    IndexValues& index = indices[name];
    for (uint32_t i = 0; i < size; ++i) {
      const Slot& slot = At(i);
      AddValues(index, func, *slot.object, slot.entry);
    }
  }
};

ThreadSafeStore::ThreadSafeStore(Indexers indexers)
    : indexers_(std::move(indexers)), state_(std::make_unique<State>()) {
  for (const auto& [name, func] : indexers_) state_->indices[name];
}

ThreadSafeStore::~ThreadSafeStore() = default;

api::ObjectPtr ThreadSafeStore::Upsert(api::ObjectPtr object) {
  if (object->name().empty()) {
    LOG(WARNING) << "not caching an object without a key: "
                 << MetaNamespaceKey(*object).status();
    return nullptr;
  }
  WriterMutexLock lock(&mu_);
  return state_->Upsert(std::move(object), indexers_, WriteEpoch());
}

api::ObjectPtr ThreadSafeStore::Remove(std::string_view key) {
  WriterMutexLock lock(&mu_);
  return state_->Remove(key, indexers_, WriteEpoch());
}

absl::Status ThreadSafeStore::Add(api::ObjectPtr object) {
  if (object->name().empty()) return MetaNamespaceKey(*object).status();
  api::ObjectPtr old;  // released after the lock
  WriterMutexLock lock(&mu_);
  old = state_->Upsert(std::move(object), indexers_, WriteEpoch());
  return absl::OkStatus();
}

absl::Status ThreadSafeStore::Update(api::ObjectPtr object) {
  return Add(std::move(object));
}

absl::Status ThreadSafeStore::Delete(api::ObjectPtr object) {
  absl::StatusOr<std::string> key = MetaNamespaceKey(*object);
  if (!key.ok()) return key.status();
  Remove(*key);
  return absl::OkStatus();
}

std::vector<api::ObjectPtr> ThreadSafeStore::List() const {
  std::vector<std::shared_ptr<const State::Chunk>> snapshot;
  size_t size;
  {
    ReaderMutexLock lock(&mu_);
    // From here on writers copy any chunk before changing it (its epoch is
    // older than the new one), so the chunks taken below stay as they are.
    list_epoch_.fetch_add(1, std::memory_order_relaxed);
    snapshot.assign(state_->chunks.begin(), state_->chunks.end());
    size = state_->size;
  }
  std::vector<api::ObjectPtr> objects;
  objects.reserve(size);
  for (size_t i = 0; i < size; ++i) {
    objects.push_back(
        snapshot[i / State::kChunkSize]->slots[i % State::kChunkSize].object);
  }
  return objects;
}

std::vector<std::string> ThreadSafeStore::ListKeys() const {
  // Every stored object's key is its MetaNamespaceKey, so keys come from a
  // snapshot without holding the lock while strings are copied.
  std::vector<api::ObjectPtr> objects = List();
  std::vector<std::string> keys;
  keys.reserve(objects.size());
  for (const api::ObjectPtr& object : objects) keys.push_back(object->Key());
  return keys;
}

api::ObjectPtr ThreadSafeStore::GetByKey(std::string_view key) const {
  ReaderMutexLock lock(&mu_);
  auto it = state_->keys.find(key);
  if (it == state_->keys.end()) return nullptr;
  return state_->At(it->second).object;
}

absl::Status ThreadSafeStore::Replace(std::vector<api::ObjectPtr> objects,
                                      std::string resource_version) {
  size_t skipped = 0;
  ItemMap old = ReplaceCounting(std::move(objects), &skipped);
  if (skipped > 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "replace: ", skipped, " objects without a name were left out"));
  }
  return absl::OkStatus();
}

ThreadSafeStore::ItemMap ThreadSafeStore::ReplaceAll(
    std::vector<api::ObjectPtr> objects) {
  size_t skipped = 0;
  return ReplaceCounting(std::move(objects), &skipped);
}

ThreadSafeStore::ItemMap ThreadSafeStore::ReplaceCounting(
    std::vector<api::ObjectPtr> objects, size_t* skipped) {
  Indexers indexers;
  {
    ReaderMutexLock lock(&mu_);
    indexers = indexers_;
  }
  // A List between here and the swap only makes the first writes copy a
  // chunk no snapshot holds; never the reverse.
  const uint64_t epoch = list_epoch_.load(std::memory_order_relaxed);
  auto state = std::make_unique<State>();
  state->keys.reserve(objects.size());
  const Indexers no_indexers;
  for (api::ObjectPtr& object : objects) {
    if (object->name().empty()) {
      LOG(WARNING) << "replace: leaving out an object without a key: "
                   << MetaNamespaceKey(*object).status();
      ++*skipped;
      continue;
    }
    state->Upsert(std::move(object), no_indexers, epoch);
  }
  for (const auto& [name, func] : indexers) state->BuildIndex(name, func);
  {
    WriterMutexLock lock(&mu_);
    // AddIndexers may have run since the copy above.
    for (const auto& [name, func] : indexers_) {
      if (indexers.find(name) == indexers.end()) state->BuildIndex(name, func);
    }
    std::swap(state_, state);
  }
  // `state` is now the old contents; hand them back, outside the lock.
  state->indices.clear();
  ItemMap old;
  old.reserve(state->size);
  for (auto it = state->keys.begin(); it != state->keys.end();) {
    const State::KeyEntry& entry = *it++;
    old.emplace(entry.first.object->Key(), state->At(entry.second).object);
  }
  return old;
}

absl::Status ThreadSafeStore::Resync() { return absl::OkStatus(); }

absl::StatusOr<std::vector<api::ObjectPtr>> ThreadSafeStore::ByIndex(
    std::string_view index_name, std::string_view value) const {
  ReaderMutexLock lock(&mu_);
  auto index = state_->indices.find(ToAbsl(index_name));
  if (index == state_->indices.end()) {
    return absl::NotFoundError(absl::StrCat(
        "index with name ", ToAbsl(index_name), " does not exist"));
  }
  std::vector<api::ObjectPtr> objects;
  auto set = index->second.find(ToAbsl(value));
  if (set == index->second.end()) return objects;
  objects.reserve(set->second.size());
  for (const State::KeyEntry* entry : set->second) {
    objects.push_back(state_->At(entry->second).object);
  }
  return objects;
}

absl::StatusOr<std::vector<std::string>> ThreadSafeStore::IndexKeys(
    std::string_view index_name, std::string_view value) const {
  ReaderMutexLock lock(&mu_);
  auto index = state_->indices.find(ToAbsl(index_name));
  if (index == state_->indices.end()) {
    return absl::NotFoundError(absl::StrCat(
        "index with name ", ToAbsl(index_name), " does not exist"));
  }
  std::vector<std::string> keys;
  auto set = index->second.find(ToAbsl(value));
  if (set == index->second.end()) return keys;
  keys.reserve(set->second.size());
  for (const State::KeyEntry* entry : set->second) {
    keys.push_back(entry->first.object->Key());
  }
  return keys;
}

absl::StatusOr<std::vector<api::ObjectPtr>> ThreadSafeStore::Index(
    std::string_view index_name, const api::Object& object) const {
  ReaderMutexLock lock(&mu_);
  auto func = indexers_.find(index_name);
  auto index = state_->indices.find(ToAbsl(index_name));
  if (func == indexers_.end() || index == state_->indices.end()) {
    return absl::NotFoundError(absl::StrCat(
        "index with name ", ToAbsl(index_name), " does not exist"));
  }
  const std::vector<std::string> values = func->second(object);
  // One value needs no union (client-go's common case).
  absl::flat_hash_set<const State::KeyEntry*> union_set;
  const State::IndexSet* only = nullptr;
  for (const std::string& value : values) {
    auto set = index->second.find(ToAbsl(value));
    if (set == index->second.end()) continue;
    if (values.size() == 1) {
      only = &set->second;
    } else {
      union_set.insert(set->second.begin(), set->second.end());
    }
  }
  std::vector<api::ObjectPtr> objects;
  const State& state = *state_;
  auto append = [&](const auto& entries) {
    objects.reserve(entries.size());
    for (const State::KeyEntry* entry : entries) {
      objects.push_back(state.At(entry->second).object);
    }
  };
  if (only != nullptr) {
    append(*only);
  } else {
    append(union_set);
  }
  return objects;
}

std::vector<std::string> ThreadSafeStore::ListIndexFuncValues(
    std::string_view index_name) const {
  ReaderMutexLock lock(&mu_);
  std::vector<std::string> values;
  auto index = state_->indices.find(ToAbsl(index_name));
  if (index == state_->indices.end()) return values;
  values.reserve(index->second.size());
  for (const auto& [value, set] : index->second) values.push_back(value);
  return values;
}

absl::Status ThreadSafeStore::AddIndexers(Indexers indexers) {
  WriterMutexLock lock(&mu_);
  for (const auto& [name, func] : indexers) {
    if (indexers_.find(name) != indexers_.end()) {
      return absl::AlreadyExistsError(absl::StrCat("indexer conflict: ", name));
    }
  }
  for (auto& [name, func] : indexers) {
    state_->BuildIndex(name, func);
    indexers_.emplace(name, std::move(func));
  }
  return absl::OkStatus();
}

std::vector<std::string> ThreadSafeStore::IndexNames() const {
  ReaderMutexLock lock(&mu_);
  std::vector<std::string> names;
  names.reserve(indexers_.size());
  for (const auto& [name, func] : indexers_) names.push_back(name);
  return names;
}

size_t ThreadSafeStore::size() const {
  ReaderMutexLock lock(&mu_);
  return state_->size;
}

}  // namespace kcr::cache

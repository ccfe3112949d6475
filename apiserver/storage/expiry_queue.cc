#include "apiserver/storage/expiry_queue.h"

#include "base/str_cat.h"

namespace kcr {
namespace apiserver {
namespace {

std::string ObjectId(std::string_view collection, std::string_view key) {
  return Cat(collection, std::string_view("\0", 1), key);
}

}  // namespace

void ExpiryQueue::Set(std::string_view collection, std::string_view key,
                      absl::Time deadline) {
  auto [it, inserted] =
      by_object_.try_emplace(ObjectId(collection, key), deadline);
  if (!inserted) {
    if (it->second == deadline) return;
    by_deadline_.erase(
        Item(it->second, std::string(collection), std::string(key)));
    it->second = deadline;
  }
  by_deadline_.emplace(deadline, std::string(collection), std::string(key));
}

void ExpiryQueue::Erase(std::string_view collection, std::string_view key) {
  auto it = by_object_.find(ObjectId(collection, key));
  if (it == by_object_.end()) return;
  by_deadline_.erase(
      Item(it->second, std::string(collection), std::string(key)));
  by_object_.erase(it);
}

std::vector<ExpiryQueue::Entry> ExpiryQueue::PopDue(absl::Time now) {
  std::vector<Entry> due;
  while (!by_deadline_.empty() && std::get<0>(*by_deadline_.begin()) <= now) {
    auto node = by_deadline_.extract(by_deadline_.begin());
    Item& item = node.value();
    by_object_.erase(ObjectId(std::get<1>(item), std::get<2>(item)));
    due.emplace_back(std::move(std::get<1>(item)),
                     std::move(std::get<2>(item)));
  }
  return due;
}

std::optional<absl::Time> ExpiryQueue::NextDeadline() const {
  if (by_deadline_.empty()) return std::nullopt;
  return std::get<0>(*by_deadline_.begin());
}

}  // namespace apiserver
}  // namespace kcr

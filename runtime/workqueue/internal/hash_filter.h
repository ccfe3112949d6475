// HashFilter: a set of 32-bit hashes with false positives and no misses,
// read without a lock. The work queue records in one the hashes of the Adds
// waiting to be folded, so that Get and Done can ask, without taking the
// producers' lock, whether an Add of their item may still be on its way
// (see FoldingQueue::UnfoldedAddMayBeOf).
#ifndef KCR_RUNTIME_WORKQUEUE_INTERNAL_HASH_FILTER_H_
#define KCR_RUNTIME_WORKQUEUE_INTERNAL_HASH_FILTER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace kcr::workqueue::internal {

// One bit per hash value modulo kBits, enough for the few dozen Adds an
// inbox holds between folds. Writers serialise among themselves (the
// queue writes under its inbox lock); readers need no lock.
class HashFilter {
 public:
  void Insert(uint32_t hash) {
    std::atomic<uint64_t>& word = words_[Word(hash)];
    word.store(word.load(std::memory_order_relaxed) | Bit(hash),
               std::memory_order_relaxed);
  }
  bool Has(uint32_t hash) const {
    return (words_[Word(hash)].load(std::memory_order_acquire) & Bit(hash)) !=
           0;
  }
  void CopyFrom(const HashFilter& other) {
    for (size_t i = 0; i < kWords; ++i) {
      words_[i].store(other.words_[i].load(std::memory_order_relaxed),
                      std::memory_order_relaxed);
    }
  }
  // Release: a reader that sees a word cleared sees what was written
  // before it (the fold's own filter and folding_now_).
  void Clear() {
    for (auto& word : words_) word.store(0, std::memory_order_release);
  }

 private:
  static constexpr uint32_t kBits = 1024;
  static constexpr size_t kWords = kBits / 64;
  static size_t Word(uint32_t hash) { return (hash % kBits) / 64; }
  static uint64_t Bit(uint32_t hash) { return uint64_t{1} << (hash % 64); }
  std::atomic<uint64_t> words_[kWords] = {};
};

}  // namespace kcr::workqueue::internal

#endif  // KCR_RUNTIME_WORKQUEUE_INTERNAL_HASH_FILTER_H_

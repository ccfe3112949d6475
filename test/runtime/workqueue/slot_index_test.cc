// SlotIndex (runtime/workqueue/slot_index.h) against a map, with
// few distinct hashes so that runs of colliding cells form, wrap around the
// table and are broken up by erases (backward-shift deletion).
#include "runtime/workqueue/slot_index.h"

#include <cstdint>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/workqueue/slab.h"

namespace kcr::workqueue::internal {
namespace {

using Index = SlotIndex<std::string, std::equal_to<std::string>>;

class SlotIndexTest : public ::testing::Test {
 protected:
  // The slot of `key`'s entry, created if it has none.
  uint32_t Insert(const std::string& key, uint32_t hash) {
    return index_.FindOrInsert(key, hash, [&] {
      const uint32_t slot = slab_.Allocate();
      Entry<std::string>& e = slab_.at(slot);
      new (&e.key) std::string(key);
      e.hash = hash;
      e.state.store(kFinished);
      return slot;
    });
  }
  void Erase(uint32_t slot) {
    Entry<std::string>& e = slab_.at(slot);
    index_.Erase(slot, e.hash);
    e.key.~basic_string();
    e.state.store(kFree);
    slab_.Free(slot);
  }

  Slab<Entry<std::string>> slab_;
  Index index_{&slab_};
};

TEST_F(SlotIndexTest, FindsWhatWasInsertedAndNotWhatWasErased) {
  const uint32_t a = Insert("a", 1);
  const uint32_t b = Insert("b", 1);  // same hash, another key
  EXPECT_NE(a, b);
  EXPECT_EQ(Insert("a", 1), a);  // found, not inserted again
  EXPECT_EQ(index_.size(), 2u);
  EXPECT_EQ(index_.Find("a", 1), a);
  EXPECT_EQ(index_.Find("b", 1), b);
  EXPECT_EQ(index_.Find("c", 1), kNilSlot);
  Erase(a);
  EXPECT_EQ(index_.Find("a", 1), kNilSlot);
  EXPECT_EQ(index_.Find("b", 1), b);  // moved back over the erased cell
  EXPECT_EQ(index_.size(), 1u);
}

TEST_F(SlotIndexTest, AgreesWithAMapThroughRandomInsertsAndErases) {
  std::map<std::string, uint32_t> want;  // key -> slot
  uint64_t s = 88172645463325252ull;
  auto next = [&s] {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  };
  for (int step = 0; step < 200000; ++step) {
    const uint64_t r = next();
    const std::string key = absl::StrCat("k", r % 3000);
    // 64 distinct hashes for 3,000 keys: long runs of collisions.
    const uint32_t hash = static_cast<uint32_t>((r % 3000) % 64) * 0x01000193u;
    auto it = want.find(key);
    // Inserts outnumber erases while the index is small, so it grows
    // through several sizes, then it shrinks and grows again.
    const bool insert = (step / 50000) % 2 == 0 ? r % 3 != 0 : r % 3 == 0;
    if (insert) {
      const uint32_t slot = Insert(key, hash);
      if (it != want.end()) {
        ASSERT_EQ(slot, it->second) << "step " << step;
      } else {
        want.emplace(key, slot);
      }
    } else if (it != want.end()) {
      Erase(it->second);
      want.erase(it);
    }
    ASSERT_EQ(index_.size(), want.size()) << "step " << step;
    if (step % 997 == 0) {
      for (const auto& [k, slot] : want) {
        const uint32_t h =
            static_cast<uint32_t>(std::stoul(k.substr(1)) % 64) * 0x01000193u;
        ASSERT_EQ(index_.Find(k, h), slot) << "step " << step << " key " << k;
      }
    }
  }
}

}  // namespace
}  // namespace kcr::workqueue::internal

// Fuzzes shard-selector parsing: arbitrary bytes must never crash (nor
// recurse past the server's connection stack); whatever parses must render
// to a canonical string that parses back to an equal selector that matches
// the same hashes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "api/selector/shard_selector.h"
#include "test/fuzz/server_stack.h"

namespace {

using ::kcr::api::ShardSelector;

void Check(bool ok) {
  if (!ok) std::abort();
}

void Fuzz(std::string_view input) {
  absl::StatusOr<ShardSelector> s = ShardSelector::Parse(input);
  if (!s.ok()) {
    Check(!s.status().message().empty());
    return;
  }
  Check(!s->Empty());
  const std::string canonical = s->ToString();
  absl::StatusOr<ShardSelector> again = ShardSelector::Parse(canonical);
  Check(again.ok());
  Check(*again == *s);
  Check(again->ToString() == canonical);
  for (const auto& r : s->ranges()) Check(r.start < r.end);
  for (uint64_t h : {uint64_t{0}, uint64_t{1} << 63, ~uint64_t{0},
                     kcr::api::Fnv1a64(input)}) {
    Check(s->MatchesHash(h) == again->MatchesHash(h));
  }
}

}  // namespace

static int FuzzOne(const uint8_t* data, size_t size) {
  Fuzz(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}

// On a thread with the local API server's connection stack, so that
// recursion the server could not afford fails here too.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kcr::fuzz::RunOnServerStack([data, size] { FuzzOne(data, size); });
  return 0;
}

// Fuzzes ListDecoder: any body, cut into chunks anywhere, must decode to
// the same items, list metadata and final status as the body fed in one
// piece, and never crash. The first byte picks the chunk size.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/client/list_decoder.h"
#include "test/fuzz/server_stack.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

struct Result {
  std::vector<std::string> items;
  std::string meta;
  absl::Status status;
};

Result Decode(std::string_view input, size_t chunk) {
  Result r;
  kcr::client::ListDecoderOptions options;
  options.max_item_bytes = 1 << 16;
  kcr::client::ListDecoder decoder(options, [&r](kcr::api::ObjectPtr item) {
    r.items.push_back(item->ToJson());
    return absl::OkStatus();
  });
  absl::Status status;
  for (size_t i = 0; i < input.size() && status.ok(); i += chunk) {
    status = decoder.Feed(input.substr(i, chunk));
  }
  if (status.ok()) status = decoder.Finish();
  r.status = status;
  const kcr::client::ListMeta& m = decoder.meta();
  r.meta = m.kind + "|" + m.api_version + "|" + m.resource_version + "|" +
           m.continue_token;
  return r;
}

}  // namespace

static int FuzzOne(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t chunk = 1 + data[0] % 64;
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  Result whole = Decode(input, input.size() + 1);
  Result pieces = Decode(input, chunk);
  Check(whole.status == pieces.status);
  Check(whole.items == pieces.items);
  if (whole.status.ok()) Check(whole.meta == pieces.meta);
  return 0;
}

// On a thread with the local API server's connection stack, so that
// recursion the server could not afford fails here too.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kcr::fuzz::RunOnServerStack([data, size] { FuzzOne(data, size); });
  return 0;
}

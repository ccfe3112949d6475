// Fuzzes WatchDecoder: any byte stream, cut into chunks anywhere, must
// decode to the same events and the same final status as the stream fed in
// one piece, and never crash. The first byte picks the chunk size.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/client/watch_decoder.h"
#include "test/fuzz/server_stack.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

struct Result {
  std::vector<std::string> events;
  absl::Status status;
};

Result Decode(std::string_view input, size_t chunk) {
  kcr::client::WatchDecoder decoder;
  std::vector<kcr::client::WatchEvent> events;
  absl::Status status;
  for (size_t i = 0; i < input.size() && status.ok(); i += chunk) {
    status = decoder.Feed(input.substr(i, chunk), &events);
  }
  if (status.ok()) status = decoder.Finish();
  Result r;
  r.status = status;
  for (const auto& e : events) {
    std::string d(kcr::client::EventTypeName(e.type));
    d += e.object ? e.object->ToJson() : "-";
    d += e.error.ToString();
    r.events.push_back(std::move(d));
  }
  return r;
}

}  // namespace

static int FuzzOne(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t chunk = 1 + data[0] % 64;
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  Result whole = Decode(input, input.size() + 1);
  Result pieces = Decode(input, chunk);
  Check(whole.status.code() == pieces.status.code());
  Check(whole.events == pieces.events);
  return 0;
}

// On a thread with the local API server's connection stack, so that
// recursion the server could not afford fails here too.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kcr::fuzz::RunOnServerStack([data, size] { FuzzOne(data, size); });
  return 0;
}

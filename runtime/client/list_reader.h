// ReadList: decodes a list response body as it streams in, on two threads,
// handing each item to the caller in order (what RestClient::ListEach and
// List do with a 2xx answer).
//
// One thread of ReadList's own reads the body and frames items
// (ListFramer, list_decoder.h); `parse_threads` more (one by default) and
// the caller's thread parse the framed batches, oldest first, and the
// caller hands the items to `on_item` in order. Framing costs a fifth of what
// parsing does, so on two cores the list decodes at about twice the rate
// of one thread (docs/benchmarks.md, "List decoding"). At most 16 batches
// not parsed yet and 64 in all (up to 256 KiB of the body each)
// wait between the threads: a consumer slower than the network slows the
// reading instead of growing memory. The reader reads the body straight
// into a batch's buffer and frames it there (ListFramer::FeedInPlace), so
// that each item's bytes are written once; an item cut by the batch's end
// moves to the next batch. It gathers reads into a batch while each one
// fills the 64 KiB it asked for (more of the body is at hand), up to
// 256 KiB, and hands a batch over at once after a shorter read: a body
// that stalls just after a full read holds back at most 256 KiB of items
// until its next read. A batch with no complete item yet (an item larger
// than a batch) goes on growing, up to the decoder's max_item_bytes.
#ifndef KCR_RUNTIME_CLIENT_LIST_READER_H_
#define KCR_RUNTIME_CLIENT_LIST_READER_H_

#include <functional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/object.h"
#include "base/context.h"
#include "runtime/client/list_decoder.h"
#include "runtime/client/options.h"
#include "runtime/client/stream_watcher.h"

namespace kcr::client {

struct ListReaderOptions {
  ListDecoderOptions decoder;
  // Threads that parse besides the caller's; 0 leaves all parsing to the
  // caller's thread.
  int parse_threads = 1;
};

// Reads `body` to its end and returns the list's kind, apiVersion and
// metadata, after handing every item to `on_item`, in order, on the
// caller's thread. Stops at the first error, which may come after some
// items: the decoder's (list_decoder.h), `on_item`'s, a broken body
// (kDataLoss when it cut the list short, else kUnavailable), or ctx.Err()
// when `ctx` ends first, which closes the body at once (body.Cancel()).
// Returns only when its thread has ended; `body` is not used afterwards.
absl::StatusOr<ListMeta> ReadList(
    const Context& ctx, BodyReader& body, const ListReaderOptions& options,
    const std::function<absl::Status(api::ObjectPtr)>& on_item);

}  // namespace kcr::client

#endif  // KCR_RUNTIME_CLIENT_LIST_READER_H_

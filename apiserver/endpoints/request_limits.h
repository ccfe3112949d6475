// The limits the local API server holds every request to, in one place: the
// HTTP server enforces them, docs/local-apiserver.md states them, and the
// fuzz targets run their inputs with them (test/fuzz/server_stack.h), so
// that a stack overflow the server would hit is one the fuzzers find.
#ifndef KCR_APISERVER_ENDPOINTS_REQUEST_LIMITS_H_
#define KCR_APISERVER_ENDPOINTS_REQUEST_LIMITS_H_

#include <cstddef>

#include "absl/base/config.h"

namespace kcr {
namespace apiserver {

// Sanitizers make stack frames much larger: AddressSanitizer gives every
// local its own redzoned slot, and the recursive routines that walk a body
// (the patch algorithms, YAML conversion) grow with them. Measured at
// api::kMaxJsonDepth, a strategic merge patch with its managed fields
// needs 200 KiB of stack in a plain gcc build (340 KiB with clang -O0),
// 2.8 MiB under AddressSanitizer (gcc -O1; 1.4 MiB with clang's fuzz
// build) and 1 MiB under ThreadSanitizer. Sanitizer builds therefore give every
// connection thread proportionally more stack, so that the server, and the
// fuzzers that run with the same figure, keep the margin a plain build has.
#if defined(ABSL_HAVE_ADDRESS_SANITIZER) || defined(ABSL_HAVE_THREAD_SANITIZER)
inline constexpr size_t kSanitizerStackScale = 8;
#else
inline constexpr size_t kSanitizerStackScale = 1;
#endif

// The largest request body read: kube-apiserver's MaxRequestBodyBytes, 3
// MiB (twice etcd's 1.5 MiB request limit, so a JSON body that shrinks to
// protobuf in storage still fits). A larger body is answered 413
// RequestEntityTooLarge, "Request entity too large: limit is 3145728",
// before more than the limit is buffered.
inline constexpr size_t kMaxRequestBodyBytes = size_t{3} << 20;

// The largest request line plus headers read. A longer one (a URL with a
// megabyte of query) is refused with 431, as Go's server does.
inline constexpr size_t kMaxRequestHeaderBytes = size_t{1} << 20;

// The stack of every connection thread: a request runs to completion on the
// thread of its connection, so this is all the stack that parsing,
// validation and patching of one body get. 1 MiB (times
// kSanitizerStackScale): small, because hundreds of open watches each hold
// a thread, and more than four times what the deepest body a request may
// carry (api::kMaxJsonDepth) needs.
inline constexpr size_t kConnectionThreadStackBytes =
    (size_t{1} << 20) * kSanitizerStackScale;

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_ENDPOINTS_REQUEST_LIMITS_H_

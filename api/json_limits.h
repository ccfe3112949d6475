// The one nesting limit every JSON document kcr reads is held to: request
// bodies and patches on the local API server, responses, watch events and
// error bodies in the REST client, Objects, and YAML turned into JSON.
//
// Why one number: the recursive routines (RapidJSON's serialiser, copies
// and comparisons, the patch algorithms, Object's arena replay, yaml-cpp's
// parser) each recurse once per level, and the local API server runs every
// request on a thread with a 1 MiB stack. Checking every document against
// the same limit, with an iterative parse or scan, before any of them runs
// is what makes "no body crashes the process" hold for all of them at once;
// two limits would leave a band of documents that one part accepts and a
// later one cannot survive.
#ifndef KCR_API_JSON_LIMITS_H_
#define KCR_API_JSON_LIMITS_H_

namespace kcr {
namespace api {

// The deepest nesting accepted: 0 for a scalar, 1 for [] or {}, 2 for [[]]
// or {"a":{}}, ... Deeper documents are refused with InvalidArgument ("JSON
// nests deeper than 256 levels"). Real Kubernetes objects nest about 15
// levels; a CRD with a 64-level schema about 130. At 256 levels the
// deepest recursive path (a strategic merge patch or server-side apply
// with its managed fields) needs 200 KiB of stack built with gcc (-O0 or
// -O2) and 340 KiB with clang -O0, at most a third of a local API server
// connection thread (test/api/json_limits_test.cc runs it in half); and
// YAML meets this limit before yaml-cpp's own guard (about 500 levels).
// Go's decoder accepts 10,000 levels (see docs/deviations.md).
inline constexpr int kMaxJsonDepth = 256;

}  // namespace api
}  // namespace kcr

#endif  // KCR_API_JSON_LIMITS_H_

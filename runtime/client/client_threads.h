// The threads that carry the REST client's requests and responses
// (cpprestsdk's shared pool, 40 threads unless told otherwise). A process
// with a few reconcile workers on a few cores does best with a few: more
// only add context switches between them.
#ifndef KCR_RUNTIME_CLIENT_CLIENT_THREADS_H_
#define KCR_RUNTIME_CLIENT_CLIENT_THREADS_H_

namespace kcr {
namespace client {

// Sizes the pool. Call once, before the first request (the pool is made at
// first use); later calls change nothing and return false.
bool SetClientThreads(int threads);

}  // namespace client
}  // namespace kcr

#endif  // KCR_RUNTIME_CLIENT_CLIENT_THREADS_H_

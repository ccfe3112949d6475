// cpprestsdk's shared thread pool (40 threads unless told otherwise), on
// which anything in the process built on cpprestsdk runs. The REST client
// no longer does: it sends and reads on its callers' threads. A process
// with a few workers on a few cores does best with a few: more only add
// context switches between them.
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

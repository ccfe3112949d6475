#include "runtime/client/client_threads.h"

#include <cstddef>
#include <exception>

#include "pplx/threadpool.h"

namespace kcr {
namespace client {

bool SetClientThreads(int threads) {
  if (threads < 1) return false;
  try {
    crossplat::threadpool::initialize_with_threads(
        static_cast<size_t>(threads));
  } catch (const std::exception&) {
    // The pool exists already.
    return false;
  }
  return true;
}

}  // namespace client
}  // namespace kcr

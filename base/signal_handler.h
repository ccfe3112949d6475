// SetupSignalHandler: the stop signal of a process, as controller-runtime's
// pkg/manager/signals gives it: a context that ends at the first SIGTERM
// or SIGINT, so that everything running under it stops gracefully; a
// second such signal ends the process at once with exit code 1, for when
// graceful takes too long for the person at the terminal.
//
//   int main(int argc, char** argv) {
//     ...
//     kcr::Context ctx = kcr::SetupSignalHandler();
//     absl::Status s = manager->Start(ctx);  // returns once ctx ends
//   }
#ifndef KCR_BASE_SIGNAL_HANDLER_H_
#define KCR_BASE_SIGNAL_HANDLER_H_

#include "base/context.h"

namespace kcr {

// Installs the handlers and returns the context. Once per process: a second
// call is a programmer error (CHECK). The handlers stay for the process's
// lifetime, and so does the thread that turns a signal into the context's
// end (it logs which signal arrived).
Context SetupSignalHandler();

}  // namespace kcr

#endif  // KCR_BASE_SIGNAL_HANDLER_H_

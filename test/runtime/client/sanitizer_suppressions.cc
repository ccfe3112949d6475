// Sanitizer suppressions for tests that run cpprestsdk.
//
// ThreadSanitizer: Debian's libcpprest is prebuilt without instrumentation:
// TSan sees the memory its threads free but not the atomic reference
// counts that order those frees (pplx tasks, cancellation tokens, asio
// contexts), and reports races that cannot happen. Only reports with a
// frame inside libcpprest are suppressed; races in kcr code still show.
//
// LeakSanitizer: connections that cpprestsdk's process-wide thread pool
// still holds when the test process exits (pooled keep-alive sockets,
// handshakes its io_service has not finished) leave their OpenSSL objects
// unreachable from any root. Allocations made by libcrypto/libssl are
// suppressed; leaks of kcr's own allocations still show.
extern "C" const char* __tsan_default_suppressions() {
  return "race:libcpprest.so\n";
}

extern "C" const char* __lsan_default_suppressions() {
  return "leak:libcrypto.so\n"
         "leak:libssl.so\n"
         "leak:libcpprest.so\n";
}

// Sanitizer suppressions for tests that run cpprestsdk.
//
// ThreadSanitizer: Debian's libcpprest, libstdc++, OpenSSL and yaml-cpp
// are prebuilt without instrumentation. TSan sees the memory their code
// frees (free and pthread calls are intercepted) but not the atomics that
// order those frees, so it reports races that cannot happen:
//  - libcpprest: reference counts of pplx tasks, cancellation tokens and
//    asio contexts.
//  - libstdc++'s std::exception_ptr: a cpprestsdk task keeps the exception
//    it failed with in one; whichever thread drops the last reference
//    frees the exception the client already read (transport errors).
//  - libyaml-cpp: it exports its out-of-line copy of shared_ptr's
//    reference-count release, and the dynamic linker binds other
//    libraries' calls to that copy, so a shared_ptr released on a
//    cpprestsdk thread (a watch stream's state) is freed by uninstrumented
//    code.
//  - libcrypto/libssl: OpenSSL's internal locks and reference counts.
//  - libabsl_status: the reference count of an absl::Status that carries
//    a message; a copy made on one thread and dropped on another (a
//    context's error, a read's error) frees the message the other thread
//    read before it dropped its reference.
// Only reports with a frame inside those libraries (for libstdc++, inside
// exception_ptr's release alone) are suppressed; a race between two
// accesses in kcr code still shows. The local API server's tests, which
// use none of these on more than one thread, link no suppressions.
//
// LeakSanitizer: connections that cpprestsdk's process-wide thread pool
// still holds when the test process exits (pooled keep-alive sockets,
// handshakes its io_service has not finished) leave their OpenSSL objects
// unreachable from any root. Allocations made by libcrypto/libssl are
// suppressed; leaks of kcr's own allocations still show.
extern "C" const char* __tsan_default_suppressions() {
  return "race:libcpprest.so\n"
         "race:std::__exception_ptr::exception_ptr::_M_release\n"
         "race:libyaml-cpp.so\n"
         "race:libcrypto.so\n"
         "race:libssl.so\n"
         "race:absl::*Status::UnrefNonInlined\n";
}

extern "C" const char* __lsan_default_suppressions() {
  return "leak:libcrypto.so\n"
         "leak:libssl.so\n"
         "leak:libcpprest.so\n";
}

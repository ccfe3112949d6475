// ThreadSanitizer suppressions for tests that run cpprestsdk.
//
// Debian's libcpprest is prebuilt without TSan instrumentation: TSan sees
// the memory its threads free but not the atomic reference counts that
// order those frees (pplx tasks, cancellation tokens, asio contexts), and
// reports races that cannot happen. Only frames inside libcpprest are
// suppressed; races in kcr code are still reported.
extern "C" const char* __tsan_default_suppressions() {
  return "race:libcpprest.so\n";
}

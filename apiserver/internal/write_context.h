// WriteContext: who makes the writes of the calling thread, and through
// which request — what Storage alone cannot know about a write. The HTTP
// handler names the client (its User-Agent), each built-in controller its
// own identity ("kcr-builtin/<controller>"), and the Registry the verb and
// subresource of the write it is making; the server's write log and fault
// injection read them when a write is stored.
//
//   ScopedWriteContext who({.user_agent = request_user_agent});
//   ... registry->Create(...) ...   // records carry the user agent
//
// A scope sets only the members that no enclosing scope of the same thread
// has set (the outermost wins: a deletecollection's deletes are recorded
// as "deletecollection"), and restores the previous context when it ends.
// The strings must outlive the scope. Thread-local: no locking.
#ifndef KCR_APISERVER_INTERNAL_WRITE_CONTEXT_H_
#define KCR_APISERVER_INTERNAL_WRITE_CONTEXT_H_

#include <string_view>

namespace kcr {
namespace apiserver {

struct WriteContext {
  // kube's verb: create, update, patch, delete, deletecollection. Set
  // together with `subresource` ("status", "scale", ...).
  std::string_view verb;
  std::string_view subresource;
  // The client's identity.
  std::string_view user_agent;
  // The status code the request is answered with in place of its own (a
  // timeout injected after the write is stored); 0: its own.
  int code = 0;
};

// The calling thread's context; every member empty outside any scope.
const WriteContext& CurrentWriteContext();

class ScopedWriteContext {
 public:
  explicit ScopedWriteContext(const WriteContext& context);
  ~ScopedWriteContext();
  ScopedWriteContext(const ScopedWriteContext&) = delete;
  ScopedWriteContext& operator=(const ScopedWriteContext&) = delete;

 private:
  const WriteContext saved_;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_INTERNAL_WRITE_CONTEXT_H_

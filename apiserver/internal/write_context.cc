#include "apiserver/internal/write_context.h"

namespace kcr {
namespace apiserver {
namespace {

thread_local WriteContext current;

}  // namespace

const WriteContext& CurrentWriteContext() { return current; }

ScopedWriteContext::ScopedWriteContext(const WriteContext& context)
    : saved_(current) {
  if (current.verb.empty() && !context.verb.empty()) {
    current.verb = context.verb;
    current.subresource = context.subresource;
  }
  if (current.user_agent.empty()) current.user_agent = context.user_agent;
  if (current.code == 0) current.code = context.code;
}

ScopedWriteContext::~ScopedWriteContext() { current = saved_; }

}  // namespace apiserver
}  // namespace kcr

#include "base/internal/timer_queue.h"

#include <utility>

namespace kcr {
namespace internal {

TimerQueue::TimerId TimerQueue::Create(std::function<void()> fn) {
  MutexLock lock(&mu_);
  const TimerId id = next_id_++;
  Timer& t = timers_[id];
  t.fn = std::make_shared<const std::function<void()>>(std::move(fn));
  return id;
}

bool TimerQueue::Arm(TimerId id, absl::Time when) {
  bool was_armed = false;
  {
    MutexLock lock(&mu_);
    auto it = timers_.find(id);
    if (it == timers_.end()) return false;
    Timer& t = it->second;
    was_armed = t.armed;
    if (t.armed) due_.erase(Key(t.when, t.seq, id));
    t.armed = true;
    t.when = when;
    t.seq = next_seq_++;
    due_.insert(Key(t.when, t.seq, id));
  }
  if (on_armed_) on_armed_();
  return was_armed;
}

bool TimerQueue::DisarmLocked(TimerId id) {
  auto it = timers_.find(id);
  if (it == timers_.end()) return false;
  // Wait out a callback running elsewhere before disarming: it may re-arm
  // itself, and the caller is about to free what it uses.
  while (true) {
    it = timers_.find(id);
    if (it == timers_.end()) return false;
    if (!it->second.running ||
        it->second.runner == std::this_thread::get_id()) {
      break;
    }
    callback_done_.Wait(&mu_);
  }
  Timer& t = it->second;
  if (!t.armed) return false;
  due_.erase(Key(t.when, t.seq, id));
  t.armed = false;
  return true;
}

bool TimerQueue::Disarm(TimerId id) {
  MutexLock lock(&mu_);
  return DisarmLocked(id);
}

void TimerQueue::Destroy(TimerId id) {
  // Freed outside the lock: the callback may own objects whose destructors
  // use this queue.
  std::shared_ptr<const std::function<void()>> fn;
  {
    MutexLock lock(&mu_);
    DisarmLocked(id);
    auto it = timers_.find(id);
    if (it == timers_.end()) return;
    fn = std::move(it->second.fn);
    timers_.erase(it);
  }
}

void TimerQueue::RunDue(absl::Time now) {
  while (true) {
    std::shared_ptr<const std::function<void()>> fn;
    TimerId id = 0;
    {
      MutexLock lock(&mu_);
      if (due_.empty() || std::get<0>(*due_.begin()) > now) return;
      id = std::get<2>(*due_.begin());
      due_.erase(due_.begin());
      Timer& t = timers_[id];
      t.armed = false;
      t.running = true;
      t.runner = std::this_thread::get_id();
      fn = t.fn;
    }
    if (*fn) (*fn)();
    fn.reset();
    {
      MutexLock lock(&mu_);
      // The callback may have destroyed its own timer.
      auto it = timers_.find(id);
      if (it != timers_.end()) it->second.running = false;
    }
    callback_done_.SignalAll();
  }
}

absl::Time TimerQueue::NextDue() const {
  MutexLock lock(&mu_);
  if (due_.empty()) return absl::InfiniteFuture();
  return std::get<0>(*due_.begin());
}

int TimerQueue::armed() const {
  MutexLock lock(&mu_);
  return static_cast<int>(due_.size());
}

void TimerQueue::AwaitArmed(int n) const {
  std::pair<const TimerQueue*, int> arg(this, n);
  MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](std::pair<const TimerQueue*, int>* a) {
        a->first->mu_.AssertHeld();
        return a->first->ArmedAtLeastLocked(a->second);
      },
      &arg));
}

}  // namespace internal
}  // namespace kcr

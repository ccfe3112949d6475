#include "base/clock.h"

#include <thread>
#include <utility>

#include "base/context.h"
#include "base/internal/queue_timer.h"
#include "base/internal/timer_queue.h"
#include "base/status_macros.h"
#include "glog/logging.h"

namespace kcr {
namespace internal {
namespace {

class QueueTimer final : public Timer {
 public:
  QueueTimer(const Clock* clock, TimerQueue* queue, std::function<void()> fn)
      : clock_(clock),
        queue_(queue),
        fn_(std::move(fn)),
        id_(queue->Create([this] { Fire(); })) {}

  ~QueueTimer() override { queue_->Destroy(id_); }

  bool Stop() override {
    const bool was_armed = queue_->Disarm(id_);
    MutexLock lock(&mu_);
    fired_ = false;
    return was_armed;
  }

  bool Reset(absl::Duration d) override {
    // Disarm first: it waits out a firing in progress, whose fired_ would
    // otherwise outlive the reset.
    const bool was_armed = queue_->Disarm(id_);
    {
      MutexLock lock(&mu_);
      fired_ = false;
    }
    queue_->Arm(id_, clock_->Now() + d);
    return was_armed;
  }

  absl::Status Wait(const Context& ctx) override {
    MutexLock lock(&mu_);
    KCR_RETURN_IF_ERROR(cv_.Await(&mu_, ctx, absl::Condition(&fired_)));
    fired_ = false;
    return absl::OkStatus();
  }

 private:
  void Fire() {
    {
      MutexLock lock(&mu_);
      fired_ = true;
    }
    cv_.SignalAll();
    if (fn_) fn_();
  }

  const Clock* const clock_;
  TimerQueue* const queue_;
  const std::function<void()> fn_;
  Mutex mu_;
  bool fired_ ABSL_GUARDED_BY(mu_) = false;
  ContextCondVar cv_;
  const TimerQueue::TimerId id_;  // last: Create's callback uses the rest
};

}  // namespace

std::unique_ptr<Timer> NewQueueTimer(const Clock* clock, TimerQueue* queue,
                                     absl::Duration d,
                                     std::function<void()> fn) {
  auto timer = std::make_unique<QueueTimer>(clock, queue, std::move(fn));
  timer->Reset(d);
  return timer;
}

}  // namespace internal

namespace {

class RealClock final : public Clock {
 public:
  RealClock() {
    queue_.set_on_armed([this] {
      MutexLock lock(&mu_);
      if (!started_) {
        started_ = true;
        // Runs for the life of the process, as the clock does.
        std::thread([this] { Loop(); }).detach();
      }
      wake_.Signal();
    });
  }

  absl::Time Now() const override { return absl::Now(); }

  void WaitUntil(Mutex* mu, CondVar* cv, absl::Time deadline) const override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (deadline == absl::InfiniteFuture()) {
      cv->Wait(mu);
    } else {
      cv->WaitWithDeadline(mu, deadline);
    }
  }

  std::unique_ptr<Timer> AfterFunc(absl::Duration d,
                                   std::function<void()> fn) const override {
    return internal::NewQueueTimer(this, &queue_, d, std::move(fn));
  }

 private:
  // The timer thread: sleeps until the earliest timer is due, runs what is
  // due, repeats. An Arm signals `wake_` under mu_, and the thread reads
  // NextDue under mu_ before it sleeps, so no earlier timer is missed.
  void Loop() const {
    mu_.Lock();
    while (true) {
      const absl::Time next = queue_.NextDue();
      const absl::Time now = absl::Now();
      if (next <= now) {
        mu_.Unlock();
        queue_.RunDue(now);
        mu_.Lock();
        continue;
      }
      if (next == absl::InfiniteFuture()) {
        wake_.Wait(&mu_);
      } else {
        wake_.WaitWithDeadline(&mu_, next);
      }
    }
  }

  mutable internal::TimerQueue queue_;
  mutable Mutex mu_;
  mutable CondVar wake_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
};

class TickerImpl final : public Ticker {
 public:
  TickerImpl(const Clock* clock, absl::Duration period)
      : clock_(clock), period_(period), next_(clock->Now() + period) {
    CHECK_GT(period, absl::ZeroDuration())
        << "a ticker needs a positive period";
    // Armed only once timer_ is set: Tick uses it.
    timer_ = clock_->AfterFunc(absl::InfiniteDuration(), [this] { Tick(); });
    timer_->Reset(period);
  }

  ~TickerImpl() override { timer_->Stop(); }

  void Stop() override {
    {
      MutexLock lock(&mu_);
      stopped_ = true;
    }
    // Waits out a Tick in progress, which would re-arm the timer.
    timer_->Stop();
    MutexLock lock(&mu_);
    ticked_ = false;
  }

  void Reset(absl::Duration period) override {
    CHECK_GT(period, absl::ZeroDuration())
        << "a ticker needs a positive period";
    timer_->Stop();
    {
      MutexLock lock(&mu_);
      stopped_ = false;
      ticked_ = false;
      period_ = period;
      next_ = clock_->Now() + period;
    }
    timer_->Reset(period);
  }

  absl::Status Wait(const Context& ctx) override {
    MutexLock lock(&mu_);
    KCR_RETURN_IF_ERROR(cv_.Await(&mu_, ctx, absl::Condition(&ticked_)));
    ticked_ = false;
    return absl::OkStatus();
  }

 private:
  // On the clock's timer thread: records the tick and re-arms for the next
  // multiple of the period after now, skipping the ticks a late clock (or a
  // fake clock moved far) has passed.
  void Tick() {
    absl::Duration until_next;
    {
      MutexLock lock(&mu_);
      if (stopped_) return;
      ticked_ = true;
      const absl::Time now = clock_->Now();
      if (next_ <= now) {
        absl::Duration rem;
        const int64_t missed = absl::IDivDuration(now - next_, period_, &rem);
        next_ += period_ * (missed + 1);
      }
      until_next = next_ - now;
    }
    cv_.SignalAll();
    timer_->Reset(until_next);
  }

  const Clock* const clock_;
  Mutex mu_;
  absl::Duration period_ ABSL_GUARDED_BY(mu_);
  absl::Time next_ ABSL_GUARDED_BY(mu_);
  bool ticked_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  ContextCondVar cv_;
  std::unique_ptr<Timer> timer_;  // set in the constructor, then const
};

}  // namespace

std::unique_ptr<Ticker> Clock::NewTicker(absl::Duration period) const {
  return std::make_unique<TickerImpl>(this, period);
}

absl::Status Clock::Sleep(const Context& ctx, absl::Duration d) const {
  if (ctx.done()) return ctx.Err();
  if (d <= absl::ZeroDuration()) return absl::OkStatus();
  return NewTimer(d)->Wait(ctx);
}

const Clock* Clock::Real() {
  static const RealClock* const clock = new RealClock();
  return clock;
}

}  // namespace kcr

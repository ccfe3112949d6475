// Stress-test machinery for the work queues: random stalls at the queue's
// step hooks (runtime/workqueue/step_hooks.h) and threads that keep
// every core busy, so that a test sees the interleavings of a loaded
// machine. Tests that use it compile the queue with KCR_WORKQUEUE_STEP_HOOKS.
#ifndef KCR_TEST_RUNTIME_WORKQUEUE_STRESS_H_
#define KCR_TEST_RUNTIME_WORKQUEUE_STRESS_H_

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "runtime/workqueue/step_hooks.h"

#ifndef KCR_WORKQUEUE_STEP_HOOKS
#error "stress tests compile the queue with KCR_WORKQUEUE_STEP_HOOKS"
#endif

namespace kcr::workqueue::stress {

// A small per-thread generator (xorshift64*), seeded per thread and per
// round so that a failing round can be told apart from its neighbours.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t Next() {
    s_ ^= s_ >> 12;
    s_ ^= s_ << 25;
    s_ ^= s_ >> 27;
    return s_ * 0x2545F4914F6CDD1Dull;
  }
  // Uniform in [0, n).
  uint64_t Below(uint64_t n) { return Next() % n; }

 private:
  uint64_t s_;
};

inline Rng& ThreadRng() {
  static std::atomic<uint64_t> seeds{1};
  thread_local Rng rng(seeds.fetch_add(1));
  return rng;
}

// Stalls the calling thread for a random short while: nothing (most often),
// a yield, a busy wait of up to ~20 µs, or (rarely: beside busy cores a
// sleep costs a scheduler tick) a sleep of up to ~200 µs. The sleeps let
// another thread run through a whole handshake in between.
inline void RandomStall() {
  Rng& rng = ThreadRng();
  const uint64_t r = rng.Below(100);
  if (r < 70) return;
  if (r < 90) {
    std::this_thread::yield();
  } else if (r < 99) {
    const auto until = std::chrono::steady_clock::now() +
                       std::chrono::nanoseconds(rng.Below(20'000));
    while (std::chrono::steady_clock::now() < until) {
    }
  } else {
    std::this_thread::sleep_for(std::chrono::microseconds(rng.Below(200)));
  }
}

// Rounds to run: `fallback` (a quarter of it under ThreadSanitizer, which
// runs each round several times slower), or the KCR_STRESS_ROUNDS environment
// variable, to run a stress test longer by hand.
inline int Rounds(int fallback) {
  if (const char* env = std::getenv("KCR_STRESS_ROUNDS")) return std::atoi(env);
#if defined(__SANITIZE_THREAD__)
  return std::max(1, fallback / 4);
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
  return std::max(1, fallback / 4);
#endif
#endif
  return fallback;
}

// How long a round may take to drain before it counts as a hang: far more
// than any round needs even under load, far less than a test's timeout.
inline constexpr auto kHangAfter = std::chrono::seconds(20);

// Waits until `done()` holds or kHangAfter passes; returns whether it held.
// Yields at first (a hand-over between workers is usually quick), then
// sleeps briefly between looks.
template <typename F>
bool WaitFor(F done) {
  const auto give_up = std::chrono::steady_clock::now() + kHangAfter;
  for (int looks = 0; !done(); ++looks) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    if (looks < 1000) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  return true;
}

// Installs RandomStall at every step hook for its lifetime.
class StallAtEveryStep {
 public:
  StallAtEveryStep() {
    internal::step_hook.store(
        +[](internal::Step) { RandomStall(); }, std::memory_order_release);
  }
  ~StallAtEveryStep() {
    internal::step_hook.store(nullptr, std::memory_order_release);
  }
  StallAtEveryStep(const StallAtEveryStep&) = delete;
  StallAtEveryStep& operator=(const StallAtEveryStep&) = delete;
};

// Keeps every core busy (one spinning thread per core, at nice 10) for its
// lifetime, so that the threads under test are preempted at arbitrary
// points.
class CpuHogs {
 public:
  CpuHogs() {
    const unsigned n = std::max(2u, std::thread::hardware_concurrency());
    for (unsigned i = 0; i < n; ++i) {
      threads_.emplace_back([this] {
        // A lower priority: the threads under test still lose their core
        // at arbitrary points, but a woken one gets it back within a tick
        // instead of after every hog's full slice.
        setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 10);
        uint64_t x = 0;
        while (!stop_.load(std::memory_order_relaxed)) {
          for (int j = 0; j < 1000; ++j) x = x * 31 + j;
        }
        sink_.store(x, std::memory_order_relaxed);
      });
    }
  }
  ~CpuHogs() {
    stop_.store(true);
    for (auto& t : threads_) t.join();
  }
  CpuHogs(const CpuHogs&) = delete;
  CpuHogs& operator=(const CpuHogs&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> sink_{0};
  std::vector<std::thread> threads_;
};

// Per-key versions, to check that no add is lost and no key is processed
// twice at once: whoever adds a key first bumps its version; a worker, after
// Get, takes the key (noting any other worker holding it) and records the
// newest version it sees, and releases the key before Done. Once the queue
// has drained, every key's newest version has been seen.
class KeyVersions {
 public:
  explicit KeyVersions(int keys) : version_(keys), seen_(keys), busy_(keys) {}

  void Bump(int k) { version_[k].fetch_add(1); }

  void Take(int k) {
    if (busy_[k].exchange(1) != 0) overlaps_.fetch_add(1);
    const int64_t v = version_[k].load();
    int64_t seen = seen_[k].load();
    while (seen < v && !seen_[k].compare_exchange_weak(seen, v)) {
    }
  }

  void Release(int k) { busy_[k].store(0); }

  bool AllSeen() const {
    for (size_t k = 0; k < version_.size(); ++k) {
      if (seen_[k].load() != version_[k].load()) return false;
    }
    return true;
  }

  // The keys whose newest version no worker has seen, as " k:seen<newest".
  std::string Behind() const {
    std::string out;
    for (size_t k = 0; k < version_.size(); ++k) {
      if (seen_[k].load() != version_[k].load()) {
        out += " " + std::to_string(k) + ":" + std::to_string(seen_[k]) + "<" +
               std::to_string(version_[k]);
      }
    }
    return out;
  }

  // Times a key was taken while another worker held it.
  int overlaps() const { return overlaps_.load(); }

 private:
  std::vector<std::atomic<int64_t>> version_;
  std::vector<std::atomic<int64_t>> seen_;
  std::vector<std::atomic<int>> busy_;
  std::atomic<int> overlaps_{0};
};

}  // namespace kcr::workqueue::stress

#endif  // KCR_TEST_RUNTIME_WORKQUEUE_STRESS_H_

#include "libshare/work_pool.h"

#include <algorithm>
#include <utility>

namespace libshare {

WorkPool::WorkPool(int threads) {
  absl::MutexLock lock(&join_mu_);
  threads = std::max(1, threads);
  threads_.reserve(threads);
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Work(); });
}

WorkPool::~WorkPool() { Shutdown(); }

void WorkPool::Submit(std::function<void()> task) {
  absl::MutexLock lock(&mu_);
  if (state_ == State::kCancelled) return;
  ready_.push_back({std::move(task), std::string(), false});
  ++pending_;
}

void WorkPool::Submit(const std::string& key, std::function<void()> task) {
  absl::MutexLock lock(&mu_);
  if (state_ == State::kCancelled) return;
  auto [it, inserted] = behind_.try_emplace(key);
  if (!inserted) {  // the key has a task queued or running: wait behind it
    it->second.push_back(std::move(task));
  } else {
    try {
      ready_.push_back({std::move(task), key, true});
    } catch (...) {  // std::bad_alloc: no key left waiting for nothing
      behind_.erase(it);
      throw;
    }
  }
  ++pending_;
}

void WorkPool::Work() {
  mu_.Lock();
  while (true) {
    mu_.Await(absl::Condition(
        +[](WorkPool* p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(p->mu_) {
          return !p->ready_.empty() || p->state_ != State::kRunning;
        },
        this));
    // Draining ends once nothing is left; cancelling at once.
    if (ready_.empty() || state_ == State::kCancelled) break;
    Ready r = std::move(ready_.front());
    ready_.pop_front();
    mu_.Unlock();
    r.task();
    r.task = nullptr;  // its captures go before the lock is taken
    mu_.Lock();
    --pending_;
    if (!r.keyed || state_ == State::kCancelled) continue;
    auto it = behind_.find(r.key);
    if (it->second.empty()) {
      behind_.erase(it);
      continue;
    }
    // The key's next task goes behind the tasks already free to start.
    r.task = std::move(it->second.front());
    it->second.pop_front();
    ready_.push_back(std::move(r));
  }
  mu_.Unlock();
}

void WorkPool::Stop(State how) {
  absl::MutexLock join(&join_mu_);
  {
    absl::MutexLock lock(&mu_);
    if (state_ != State::kCancelled) state_ = how;
  }
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  if (how == State::kCancelled) {
    absl::MutexLock lock(&mu_);
    ready_.clear();
    behind_.clear();
    pending_ = 0;
  }
}

void WorkPool::Shutdown() { Stop(State::kDraining); }

void WorkPool::Cancel() { Stop(State::kCancelled); }

void WorkPool::WaitIdle() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](WorkPool* p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(p->mu_) {
        return p->pending_ == 0 || p->state_ == State::kCancelled;
      },
      this));
}

bool WorkPool::Idle() const {
  absl::MutexLock lock(&mu_);
  return pending_ == 0;
}

std::size_t WorkPool::pending() const {
  absl::MutexLock lock(&mu_);
  return pending_;
}

}  // namespace libshare

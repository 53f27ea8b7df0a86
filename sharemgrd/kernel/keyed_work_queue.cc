#include "keyed_work_queue.h"

#include <algorithm>

namespace sharemgrd::kernel {

KeyedWorkQueue::KeyedWorkQueue(int threads) {
  for (int i = 0; i < std::max(1, threads); ++i) {
    threads_.emplace_back([this] { Work(); });
  }
}

KeyedWorkQueue::~KeyedWorkQueue() { Stop(); }

void KeyedWorkQueue::Submit(const std::string& key, std::function<void()> job) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return;
  auto [it, inserted] = queues_.try_emplace(key);
  // A key with a queue is either in ready_ or running; only a new one
  // needs scheduling.
  it->second.push_back(std::move(job));
  ++pending_;
  if (inserted) ready_.push_back(key);
}

void KeyedWorkQueue::Work() {
  while (true) {
    std::string key;
    std::function<void()> job;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](KeyedWorkQueue* q) ABSL_EXCLUSIVE_LOCKS_REQUIRED(q->mu_) {
            return q->stopping_ || !q->ready_.empty();
          },
          this));
      if (stopping_) return;
      key = std::move(ready_.front());
      ready_.pop_front();
      auto& q = queues_[key];
      job = std::move(q.front());
      q.pop_front();
    }
    job();
    absl::MutexLock lock(&mu_);
    --pending_;
    auto it = queues_.find(key);
    if (it->second.empty()) {
      queues_.erase(it);
    } else {
      ready_.push_back(key);
    }
  }
}

void KeyedWorkQueue::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_ && threads_.empty()) return;
    stopping_ = true;
  }
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  absl::MutexLock lock(&mu_);
  queues_.clear();
  ready_.clear();
  pending_ = 0;
}

void KeyedWorkQueue::WaitIdle() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](KeyedWorkQueue* q) ABSL_EXCLUSIVE_LOCKS_REQUIRED(q->mu_) {
        return q->pending_ == 0 || q->stopping_;
      },
      this));
}

std::size_t KeyedWorkQueue::pending() const {
  absl::MutexLock lock(&mu_);
  return pending_;
}

}  // namespace sharemgrd::kernel

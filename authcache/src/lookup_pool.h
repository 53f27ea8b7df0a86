// A fixed set of threads running submitted tasks in order. Private to
// authcache. Thread-safe.
//
// The bound matters: a dead name server can hold at most `threads` calls;
// further tasks queue, and their callers give up at their own deadline.
#ifndef AUTHCACHE_SRC_LOOKUP_POOL_H_
#define AUTHCACHE_SRC_LOOKUP_POOL_H_

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace authcache::internal {

class LookupPool {
 public:
  explicit LookupPool(int threads);
  // Runs every queued task, then joins the threads.
  ~LookupPool();
  LookupPool(const LookupPool&) = delete;
  LookupPool& operator=(const LookupPool&) = delete;

  void Submit(std::function<void()> task);
  // Blocks until no task is queued or running.
  void WaitIdle();
  // Whether no task is queued or running now.
  bool Idle();

 private:
  void Work();

  absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  int running_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace authcache::internal

#endif  // AUTHCACHE_SRC_LOOKUP_POOL_H_

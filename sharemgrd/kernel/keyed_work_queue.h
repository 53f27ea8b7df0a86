// KeyedWorkQueue: a small pool of threads that runs jobs in order per
// key and never two jobs of one key at once, so a job that waits (a slow
// name lookup for one client) holds only the jobs of its own key and one
// thread; the other keys go on on the other threads.
//
// Thread-safe.
#ifndef SHAREMGRD_KERNEL_KEYED_WORK_QUEUE_H_
#define SHAREMGRD_KERNEL_KEYED_WORK_QUEUE_H_

#include <cstddef>
#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace sharemgrd::kernel {

class KeyedWorkQueue {
 public:
  explicit KeyedWorkQueue(int threads);
  // Stops (see Stop).
  ~KeyedWorkQueue();
  KeyedWorkQueue(const KeyedWorkQueue&) = delete;
  KeyedWorkQueue& operator=(const KeyedWorkQueue&) = delete;

  // Queues `job` behind the queued jobs of `key`. Ignored after Stop.
  void Submit(const std::string& key, std::function<void()> job);
  // Drops the jobs not started, waits for the running ones, joins.
  void Stop();
  // Blocks until no job is queued or running.
  void WaitIdle();
  std::size_t pending() const;

 private:
  void Work();
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::deque<std::function<void()>>> queues_
      ABSL_GUARDED_BY(mu_);
  std::deque<std::string> ready_ ABSL_GUARDED_BY(mu_);  // keys not running
  std::size_t pending_ ABSL_GUARDED_BY(mu_) = 0;        // queued + running jobs
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace sharemgrd::kernel

#endif  // SHAREMGRD_KERNEL_KEYED_WORK_QUEUE_H_

// KeyedWorkQueue: a small pool of threads that runs jobs in order per
// key and never two jobs of one key at once, so a job that waits (a slow
// name lookup for one client) holds only the jobs of its own key and one
// thread; the other keys go on on the other threads. The keyed form of
// the project's one thread pool (libshare/work_pool.h), with the kernel
// mode's stop: jobs not started are dropped.
//
// Thread-safe.
#ifndef SHAREMGRD_KERNEL_KEYED_WORK_QUEUE_H_
#define SHAREMGRD_KERNEL_KEYED_WORK_QUEUE_H_

#include <cstddef>
#include <functional>
#include <string>
#include <utility>

#include "libshare/work_pool.h"

namespace sharemgrd::kernel {

class KeyedWorkQueue {
 public:
  explicit KeyedWorkQueue(int threads) : pool_(threads) {}
  // Stops (see Stop).
  ~KeyedWorkQueue() { Stop(); }
  KeyedWorkQueue(const KeyedWorkQueue&) = delete;
  KeyedWorkQueue& operator=(const KeyedWorkQueue&) = delete;

  // Queues `job` behind the queued jobs of `key`. Ignored after Stop.
  void Submit(const std::string& key, std::function<void()> job) {
    pool_.Submit(key, std::move(job));
  }
  // Drops the jobs not started, waits for the running ones, joins.
  void Stop() { pool_.Cancel(); }
  // Blocks until no job is queued or running (or Stop began).
  void WaitIdle() { pool_.WaitIdle(); }
  std::size_t pending() const { return pool_.pending(); }

 private:
  libshare::WorkPool pool_;
};

}  // namespace sharemgrd::kernel

#endif  // SHAREMGRD_KERNEL_KEYED_WORK_QUEUE_H_

// WorkPool: the project's one thread pool. A fixed set of threads runs
// submitted tasks in the order they were submitted (first in, first
// started); a task submitted with a key also waits for the earlier tasks
// of that key, so the tasks of one key run in order and never two at once
// while other keys go on. The authorization cache's lookups and refreshes
// run on it (authcache/src/auth_cache.cc); the kernel mode's per-client
// queue is its keyed form (sharemgrd/kernel/keyed_work_queue.h).
//
//   libshare::WorkPool pool(4);
//   pool.Submit([] { ... });                 // any free thread
//   pool.Submit("10.0.0.1", [] { ... });     // after 10.0.0.1's earlier ones
//   pool.WaitIdle();  // every task submitted so far has run
//
// The bound is the point: a task that blocks (a dead name server) holds
// one of `threads` threads (and, if keyed, its key's later tasks); other
// tasks go on on the other threads or queue, and whoever waits for them
// gives up at its own deadline (the pool has none).
//
// Thread-safe.
#ifndef LIBSHARE_WORK_POOL_H_
#define LIBSHARE_WORK_POOL_H_

#include <cstddef>
#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace libshare {

class WorkPool {
 public:
  // Starts max(1, threads) threads.
  explicit WorkPool(int threads);
  // Shutdown().
  ~WorkPool();
  WorkPool(const WorkPool&) = delete;
  WorkPool& operator=(const WorkPool&) = delete;

  // Queues `task`. After Cancel it is dropped; one submitted after
  // Shutdown returned never runs.
  void Submit(std::function<void()> task);
  // Queues `task` to start after every task submitted earlier with `key`
  // has ended; once its turn comes it goes behind the tasks queued
  // meanwhile. Otherwise as Submit.
  void Submit(const std::string& key, std::function<void()> task);
  // Runs every task queued (and those the running tasks submit
  // meanwhile), then joins the threads. Idempotent; not to be called from
  // a task of this pool.
  void Shutdown();
  // Drops the tasks not started, waits for the running ones, joins; later
  // submits are dropped. Not to be called from a task of this pool.
  void Cancel();
  // Blocks until no task is queued or running, or Cancel began.
  void WaitIdle();
  // Whether no task is queued or running now.
  bool Idle() const;
  // Tasks queued or running.
  std::size_t pending() const;

 private:
  struct Ready {
    std::function<void()> task;
    std::string key;  // with `keyed`: the key whose turn this is
    bool keyed = false;
  };
  enum class State { kRunning, kDraining, kCancelled };

  void Work();
  void Stop(State how);

  mutable absl::Mutex mu_;
  // Tasks free to start, in order.
  std::deque<Ready> ready_ ABSL_GUARDED_BY(mu_);
  // Per key with a task in ready_ or running: its later tasks, in order.
  absl::flat_hash_map<std::string, std::deque<std::function<void()>>> behind_
      ABSL_GUARDED_BY(mu_);
  std::size_t pending_ ABSL_GUARDED_BY(mu_) = 0;  // queued + running
  State state_ ABSL_GUARDED_BY(mu_) = State::kRunning;
  // Started in the constructor, joined once by Shutdown or Cancel.
  absl::Mutex join_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(join_mu_);
};

}  // namespace libshare

#endif  // LIBSHARE_WORK_POOL_H_

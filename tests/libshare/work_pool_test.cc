#include "libshare/work_pool.h"

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace libshare {
namespace {

TEST(WorkPoolTest, OneThreadRunsTasksInSubmitOrder) {
  WorkPool pool(1);
  absl::Mutex mu;
  std::vector<int> order;
  for (int i = 0; i < 100; ++i) {
    pool.Submit([&, i] {
      absl::MutexLock lock(&mu);
      order.push_back(i);
    });
  }
  pool.WaitIdle();
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
  EXPECT_TRUE(pool.Idle());
}

TEST(WorkPoolTest, AtMostThreadsTasksRunAtOnce) {
  WorkPool pool(3);
  absl::Notification release;
  std::atomic<int> running{0}, most{0}, started{0};
  for (int i = 0; i < 8; ++i) {
    pool.Submit([&] {
      const int now = running.fetch_add(1) + 1;
      int m = most.load();
      while (now > m && !most.compare_exchange_weak(m, now)) {
      }
      started.fetch_add(1);
      release.WaitForNotification();
      running.fetch_sub(1);
    });
  }
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (started.load() < 3 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  absl::SleepFor(absl::Milliseconds(20));  // a fourth would start now
  EXPECT_EQ(started.load(), 3);
  EXPECT_FALSE(pool.Idle());
  release.Notify();
  pool.WaitIdle();
  EXPECT_EQ(started.load(), 8);
  EXPECT_EQ(most.load(), 3);
}

TEST(WorkPoolTest, ShutdownRunsQueuedTasksAndThoseTheySubmit) {
  auto pool = std::make_unique<WorkPool>(1);
  absl::Notification release;
  std::atomic<int> ran{0};
  pool->Submit([&] { release.WaitForNotification(); });
  for (int i = 0; i < 5; ++i) {
    pool->Submit([&, p = pool.get()] {
      ran.fetch_add(1);
      p->Submit([&] { ran.fetch_add(10); });  // submitted while stopping
    });
  }
  std::thread stopper([&] { pool->Shutdown(); });
  absl::SleepFor(absl::Milliseconds(20));
  release.Notify();
  stopper.join();
  EXPECT_EQ(ran.load(), 55);
  bool late = false;
  pool->Submit([&] { late = true; });  // after Shutdown: never runs
  pool->Shutdown();                     // idempotent
  pool.reset();
  EXPECT_FALSE(late);
}

TEST(WorkPoolTest, KeyedTasksRunInOrderOneAtATimeWhileOthersGoOn) {
  WorkPool pool(3);
  absl::Mutex mu;
  std::vector<int> order;
  std::atomic<int> running{0};
  std::atomic<bool> overlap{false};
  absl::Notification release, unkeyed_ran, other_key_ran;
  pool.Submit("k", [&] { release.WaitForNotification(); });
  for (int i = 0; i < 50; ++i) {
    pool.Submit("k", [&, i] {
      if (running.fetch_add(1) != 0) overlap = true;
      {
        absl::MutexLock lock(&mu);
        order.push_back(i);
      }
      running.fetch_sub(1);
    });
  }
  pool.Submit([&] { unkeyed_ran.Notify(); });
  pool.Submit("other", [&] { other_key_ran.Notify(); });
  // "k" holds one thread; its later tasks wait, the rest do not.
  EXPECT_TRUE(unkeyed_ran.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_TRUE(other_key_ran.WaitForNotificationWithTimeout(absl::Seconds(10)));
  {
    absl::MutexLock lock(&mu);
    EXPECT_TRUE(order.empty());
  }
  release.Notify();
  pool.WaitIdle();
  EXPECT_FALSE(overlap);
  ASSERT_EQ(order.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(order[i], i);
  EXPECT_EQ(pool.pending(), 0u);
}

TEST(WorkPoolTest, CancelDropsTasksNotStartedAndLaterSubmits) {
  WorkPool pool(1);
  absl::Notification started, release;
  std::atomic<bool> finished{false}, later_ran{false};
  pool.Submit("a", [&] {
    started.Notify();
    release.WaitForNotification();
    finished = true;
  });
  pool.Submit("a", [&] { later_ran = true; });
  pool.Submit([&] { later_ran = true; });
  started.WaitForNotification();
  EXPECT_EQ(pool.pending(), 3u);
  std::thread canceller([&] { pool.Cancel(); });
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (absl::Now() < deadline) {  // Cancel began once a submit is dropped
    const std::size_t before = pool.pending();
    pool.Submit([&] { later_ran = true; });
    if (pool.pending() == before) break;
    absl::SleepFor(absl::Milliseconds(1));
  }
  pool.WaitIdle();  // returns once Cancel began
  release.Notify();
  canceller.join();
  EXPECT_TRUE(finished);
  EXPECT_FALSE(later_ran);
  EXPECT_EQ(pool.pending(), 0u);
}

}  // namespace
}  // namespace libshare

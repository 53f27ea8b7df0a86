#include "kernel/keyed_work_queue.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharemgrd::kernel {
namespace {

TEST(KeyedWorkQueueTest, JobsOfOneKeyRunInOrderOneAtATime) {
  KeyedWorkQueue q(4);
  absl::Mutex mu;
  std::vector<int> order;
  std::atomic<int> running{0};
  std::atomic<bool> overlap{false};
  for (int i = 0; i < 50; ++i) {
    q.Submit("k", [&, i] {
      if (running.fetch_add(1) != 0) overlap = true;
      {
        absl::MutexLock lock(&mu);
        order.push_back(i);
      }
      running.fetch_sub(1);
    });
  }
  q.WaitIdle();
  EXPECT_FALSE(overlap);
  ASSERT_EQ(order.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(order[i], i);
}

TEST(KeyedWorkQueueTest, ABlockedKeyLeavesOthersRunning) {
  KeyedWorkQueue q(2);
  absl::Notification release, other_done;
  q.Submit("slow", [&] { release.WaitForNotification(); });
  q.Submit("slow", [] {});
  q.Submit("fast", [&] { other_done.Notify(); });
  EXPECT_TRUE(other_done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  // The fast job ends (its count drops just after it notified); the
  // blocked job and the one behind it stay.
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (q.pending() != 2u && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  EXPECT_EQ(q.pending(), 2u);
  release.Notify();
  q.WaitIdle();
  EXPECT_EQ(q.pending(), 0u);
}

TEST(KeyedWorkQueueTest, StopDropsJobsNotStartedAndWaitsForTheRunningOne) {
  KeyedWorkQueue q(1);
  absl::Notification started, release;
  std::atomic<bool> finished{false}, later_ran{false};
  q.Submit("a", [&] {
    started.Notify();
    release.WaitForNotification();
    finished = true;
  });
  q.Submit("a", [&] { later_ran = true; });
  q.Submit("b", [&] { later_ran = true; });
  started.WaitForNotification();
  std::thread stopper([&] { q.Stop(); });
  // Stop has begun once a submit no longer counts (it is ignored).
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (absl::Now() < deadline) {
    const std::size_t before = q.pending();
    q.Submit("probe", [&] { later_ran = true; });
    if (q.pending() == before) break;
    absl::SleepFor(absl::Milliseconds(1));
  }
  release.Notify();
  stopper.join();
  EXPECT_TRUE(finished);  // Stop returned after the running job ended
  EXPECT_FALSE(later_ran);
  EXPECT_EQ(q.pending(), 0u);
}

TEST(KeyedWorkQueueTest, SubmitAfterStopIsIgnored) {
  KeyedWorkQueue q(1);
  q.Stop();
  bool ran = false;
  q.Submit("k", [&] { ran = true; });
  q.WaitIdle();
  EXPECT_FALSE(ran);
}

}  // namespace
}  // namespace sharemgrd::kernel

#include "change_log.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharemgrd {
namespace {

using ::testing::ElementsAre;

libshare::ChangeRecord Batch(uint64_t generation, int shares) {
  libshare::ChangeRecord r;
  r.generation = generation;
  r.operations = static_cast<uint64_t>(shares);
  for (int i = 0; i < shares; ++i) {
    libshare::ShareChange c;
    c.path = "/e/" + std::to_string(generation) + "/" + std::to_string(i);
    r.shares.push_back(c);
  }
  return r;
}

// The generations of the batches answered after `since`, which must not
// be too old.
std::vector<uint64_t> GenerationsSince(const ChangeLog& log, uint64_t since) {
  ChangeLog::Answer a = log.Since(since);
  EXPECT_FALSE(a.too_old) << "since " << since;
  std::vector<uint64_t> out;
  for (const libshare::ChangeRecord& r : a.batches) out.push_back(r.generation);
  return out;
}

TEST(ChangeLogTest, AnswersTheBatchesAfterAGenerationOldestFirst) {
  ChangeLog log(10);
  log.Add(Batch(11, 1));
  log.Add(Batch(12, 2));
  log.Add(Batch(13, 1));
  EXPECT_THAT(GenerationsSince(log, 11), ElementsAre(12u, 13u));
  EXPECT_TRUE(log.Since(13).batches.empty());
}

TEST(ChangeLogTest, TheStartGenerationIsAnsweredButNothingBeforeIt) {
  ChangeLog log(10);
  log.Add(Batch(11, 1));
  EXPECT_EQ(log.Since(10).batches.size(), 1u);
  EXPECT_TRUE(log.Since(9).too_old);
}

TEST(ChangeLogTest, ABatchThatLeftTheGenerationIsNotListed) {
  ChangeLog log(10);
  log.Add(Batch(10, 1));  // a no-op right after start
  log.Add(Batch(11, 1));
  log.Add(Batch(11, 1));  // a no-op batch: the generation did not move
  EXPECT_THAT(GenerationsSince(log, 10), ElementsAre(11u));
}

TEST(ChangeLogTest, ANewStoresWholeHistoryAnswersGenerationZero) {
  ChangeLog log(kFirstGeneration);
  EXPECT_FALSE(log.Since(0).too_old);
  log.Add(Batch(2, 1));
  log.Add(Batch(3, 1));
  EXPECT_THAT(GenerationsSince(log, 0), ElementsAre(2u, 3u));
}

TEST(ChangeLogTest, ANewStoresHistoryOnceCutNoLongerAnswersZero) {
  ChangeLog log(kFirstGeneration, /*max_shares=*/2, /*max_batches=*/100);
  log.Add(Batch(2, 2));
  log.Add(Batch(3, 1));  // 3 > 2: batch 2 goes
  EXPECT_TRUE(log.Since(0).too_old);
  EXPECT_TRUE(log.Since(1).too_old);
  EXPECT_EQ(log.Since(2).batches.size(), 1u);
}

TEST(ChangeLogTest, ALogStartedLaterDoesNotAnswerZero) {
  ChangeLog log(5);  // a restart: what came before 5 is not here
  log.Add(Batch(6, 1));
  EXPECT_TRUE(log.Since(0).too_old);
}

TEST(ChangeLogTest, DroppingOldBatchesMakesTheirGenerationsTooOld) {
  ChangeLog log(0, /*max_shares=*/4, /*max_batches=*/100);
  log.Add(Batch(1, 2));
  log.Add(Batch(2, 2));
  log.Add(Batch(3, 2));  // 6 > 4: batch 1 goes
  EXPECT_EQ(log.oldest(), 1u);
  EXPECT_TRUE(log.Since(0).too_old);
  EXPECT_EQ(log.Since(1).batches.size(), 2u);
}

TEST(ChangeLogTest, BatchCountIsBoundedToo) {
  ChangeLog log(0, 100, /*max_batches=*/2);
  for (uint64_t g = 1; g <= 5; ++g) log.Add(Batch(g, 0));
  EXPECT_TRUE(log.Since(2).too_old);
  EXPECT_EQ(log.Since(3).batches.size(), 2u);
}

TEST(ChangeLogTest, ABatchTooBigToKeepRestartsTheLogAfterIt) {
  ChangeLog log(0, /*max_shares=*/4, 100);
  log.Add(Batch(1, 1));
  log.Add(Batch(2, 5));
  EXPECT_TRUE(log.Since(1).too_old);  // batch 2's shares are unknown
  EXPECT_FALSE(log.Since(2).too_old);
  EXPECT_TRUE(log.Since(2).batches.empty());
}

// Keeps answers as Add decides: what it says no to restarts the log.
TEST(ChangeLogTest, KeepsTellsWhetherAddWouldKeepABatch) {
  ChangeLog log(0, /*max_shares=*/4, 100);
  EXPECT_TRUE(log.Keeps(4));
  EXPECT_FALSE(log.Keeps(5));
  log.Add(Batch(1, 4));
  EXPECT_FALSE(log.Since(0).too_old);
  ASSERT_EQ(log.Since(0).batches.size(), 1u);
  EXPECT_EQ(log.Since(0).batches[0].shares.size(), 4u);
}

TEST(ChangeLogTest, AnIncompleteBatchRestartsTheLogAfterIt) {
  ChangeLog log(0);
  log.Add(Batch(1, 1));
  log.Add(Batch(2, 1), /*complete=*/false);
  EXPECT_TRUE(log.Since(1).too_old);
  EXPECT_EQ(log.oldest(), 2u);
}

}  // namespace
}  // namespace sharemgrd

#include "record_reader.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharemgrd {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::string Mark(uint32_t len, bool last) {
  uint32_t m = len | (last ? 0x80000000u : 0);
  return std::string{static_cast<char>(m >> 24), static_cast<char>(m >> 16),
                     static_cast<char>(m >> 8), static_cast<char>(m)};
}

TEST(RecordReaderTest, WholeRecordInOneFeed) {
  RecordReader r(100);
  std::vector<std::string> out;
  std::string in = Mark(5, true) + "hello";
  ASSERT_TRUE(r.Feed(in.data(), in.size(), &out));
  EXPECT_THAT(out, ElementsAre("hello"));
  EXPECT_FALSE(r.partial());
}

TEST(RecordReaderTest, RecordFedOneByteAtATime) {
  RecordReader r(100);
  std::vector<std::string> out;
  std::string in = Mark(3, true) + "abc";
  for (std::size_t i = 0; i < in.size(); ++i) {
    ASSERT_TRUE(r.Feed(&in[i], 1, &out));
    if (i + 1 < in.size()) {
      EXPECT_THAT(out, IsEmpty());
      EXPECT_TRUE(r.partial());
    }
  }
  EXPECT_THAT(out, ElementsAre("abc"));
}

TEST(RecordReaderTest, FragmentsAreJoinedUntilTheLastOne) {
  RecordReader r(100);
  std::vector<std::string> out;
  std::string in =
      Mark(2, false) + "ab" + Mark(0, false) + Mark(3, true) + "cde";
  ASSERT_TRUE(r.Feed(in.data(), in.size(), &out));
  EXPECT_THAT(out, ElementsAre("abcde"));
}

TEST(RecordReaderTest, SeveralRecordsInOneFeed) {
  RecordReader r(100);
  std::vector<std::string> out;
  std::string in =
      Mark(1, true) + "x" + Mark(2, true) + "yz" + Mark(4, true) + "pa";
  ASSERT_TRUE(r.Feed(in.data(), in.size(), &out));
  EXPECT_THAT(out, ElementsAre("x", "yz"));
  EXPECT_TRUE(r.partial());
}

TEST(RecordReaderTest, RecordOverTheLimitBreaksTheStream) {
  RecordReader r(10);
  std::vector<std::string> out;
  std::string in = Mark(11, true);
  EXPECT_FALSE(r.Feed(in.data(), in.size(), &out));
  std::string more = Mark(1, true) + "a";
  EXPECT_FALSE(r.Feed(more.data(), more.size(), &out));
  EXPECT_THAT(out, IsEmpty());
}

TEST(RecordReaderTest, FragmentsAddingUpOverTheLimitBreakTheStream) {
  RecordReader r(10);
  std::vector<std::string> out;
  std::string in = Mark(6, false) + "aaaaaa" + Mark(6, true);
  EXPECT_FALSE(r.Feed(in.data(), in.size(), &out));
}

// On a connection allowed calls over 1 MiB, a record of up to 1 MiB is
// given its whole buffer when its first bytes arrive; a bigger one holds
// 1 MiB, then grows with what arrives (at most twice that). A connection
// limited to 1 MiB (a reader) holds what it sent.
TEST(RecordReaderTest, BufferIsWholeUpToOneMebibyteThenGrowsWithWhatArrives) {
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  std::vector<std::string> out;
  RecordReader small(64 * kMiB);
  const std::string start(100, 'a');  // past the string's own bytes
  std::string in = Mark(600000, true) + start;
  ASSERT_TRUE(small.Feed(in.data(), in.size(), &out));
  EXPECT_EQ(small.held(), 600000u);
  RecordReader big(64 * kMiB);
  in = Mark(static_cast<uint32_t>(10 * kMiB), true) + start;
  ASSERT_TRUE(big.Feed(in.data(), in.size(), &out));
  EXPECT_EQ(big.held(), kMiB);
  const std::string more(kMiB, 'x');
  ASSERT_TRUE(big.Feed(more.data(), more.size(), &out));
  EXPECT_EQ(big.held(), 2 * kMiB);
  RecordReader reader(kMiB);
  in = Mark(600000, true) + start;
  ASSERT_TRUE(reader.Feed(in.data(), in.size(), &out));
  EXPECT_EQ(reader.held(), start.size());
  EXPECT_THAT(out, IsEmpty());
}

// A record sent as many small fragments: the buffer grows geometrically
// (more than it holds, at most twice), not by each fragment's bytes.
TEST(RecordReaderTest, ManySmallFragmentsGrowTheBufferGeometrically) {
  RecordReader r(1u << 20);
  std::vector<std::string> out;
  std::string in;
  for (int i = 0; i < 1000; ++i) in += Mark(1, false) + "f";
  ASSERT_TRUE(r.Feed(in.data(), in.size(), &out));
  EXPECT_GT(r.held(), 1000u);
  EXPECT_LE(r.held(), 2000u);
  in = Mark(1, true) + "l";
  ASSERT_TRUE(r.Feed(in.data(), in.size(), &out));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], std::string(1000, 'f') + "l");
}

TEST(RecordReaderTest, EmptyRecordIsARecord) {
  RecordReader r(10);
  std::vector<std::string> out;
  std::string in = Mark(0, true);
  ASSERT_TRUE(r.Feed(in.data(), in.size(), &out));
  EXPECT_THAT(out, ElementsAre(""));
}

}  // namespace
}  // namespace sharemgrd

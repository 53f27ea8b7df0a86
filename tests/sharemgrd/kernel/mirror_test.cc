#include "kernel/mirror.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharemgrd::kernel {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

TEST(MirrorTest, ExportEntriesByPathWithTheirDigest) {
  Mirror m(10);
  m.RecordExport("$a", "/p", 1, nullptr);
  m.RecordExport("$b", "/p", 2, nullptr);
  m.RecordExport("$a", "/q", 3, nullptr);
  EXPECT_THAT(m.ExportsOf("/p"),
              UnorderedElementsAre(Field(&MirrorEntry::domain, "$a"),
                                   Field(&MirrorEntry::domain, "$b")));
  EXPECT_EQ(m.ExportDigest("$b", "/p"), 2u);
  m.RecordExport("$b", "/p", 7, nullptr);
  EXPECT_EQ(m.ExportDigest("$b", "/p"), 7u);
  EXPECT_EQ(m.size(), 3u);
  EXPECT_FALSE(m.ExportDigest("$c", "/p").has_value());
}

TEST(MirrorTest, FhEntriesByKeyAndByAnsweredPath) {
  Mirror m(10);
  m.RecordFh("$a", 3, "k1", "/p", 1, nullptr);
  m.RecordFh("$b", 3, "k1", "", 2, nullptr);  // negative
  EXPECT_EQ(m.FhOf(3, "k1").size(), 2u);
  EXPECT_THAT(m.FhAnsweredWith("/p"),
              ElementsAre(Field(&MirrorEntry::domain, "$a")));
  m.RecordFh("$a", 3, "k1", "/r", 5, nullptr);  // the answer moved
  EXPECT_THAT(m.FhAnsweredWith("/p"), IsEmpty());
  EXPECT_EQ(m.FhAnsweredWith("/r").size(), 1u);
  EXPECT_EQ(m.FhDigest("$a", 3, "k1"), 5u);
}

TEST(MirrorTest, PastTheBoundTheLeastRecentlyAnsweredGo) {
  Mirror m(2);
  std::vector<MirrorEntry> evicted;
  m.RecordExport("$a", "/1", 1, &evicted);
  m.RecordFh("$a", 1, "k", "/", 1, &evicted);
  m.RecordExport("$a", "/1", 2, &evicted);  // answered again: most recent
  m.RecordExport("$a", "/2", 1, &evicted);
  ASSERT_EQ(evicted.size(), 1u);
  EXPECT_EQ(evicted[0].kind, MirrorEntry::Kind::kFh);
  EXPECT_THAT(m.FhAnsweredWith("/"), IsEmpty());
  EXPECT_EQ(m.size(), 2u);
}

TEST(MirrorTest, ClearForgetsEverything) {
  Mirror m(10);
  m.RecordExport("$a", "/1", 1, nullptr);
  m.RecordFh("$a", 1, "k", "/", 1, nullptr);
  m.Clear();
  EXPECT_EQ(m.size(), 0u);
  EXPECT_THAT(m.ExportsOf("/1"), IsEmpty());
  EXPECT_THAT(m.FhOf(1, "k"), IsEmpty());
}

}  // namespace
}  // namespace sharemgrd::kernel

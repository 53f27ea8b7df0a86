#include "libshare/mount_table.h"

#include "gtest/gtest.h"

namespace libshare {
namespace {

constexpr char kMountinfo[] =
    "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
    "40 22 0:45 / /tank/home rw shared:20 - zfs tank/home rw,xattr\n"
    "41 40 0:46 / /tank/home/alice rw shared:21 master:3 - zfs "
    "tank/home/alice rw\n"
    "42 22 0:47 / /srv/with\\040space rw - tmpfs tmpfs rw\n"
    "43 22 0:48 / /tank/home rw shared:22 - zfs tank/home2 rw\n"
    "garbage line\n";

TEST(MountTable, NearestMountPointContainsThePath) {
  MountTable m = MountTable::Parse(kMountinfo);
  ASSERT_NE(m.Containing("/tank/home/alice/x"), nullptr);
  EXPECT_EQ(m.Containing("/tank/home/alice/x")->source, "tank/home/alice");
  EXPECT_EQ(m.Containing("/tank/homes")->mount_point, "/");
  EXPECT_EQ(m.Containing("/")->fstype, "ext4");
}

TEST(MountTable, LaterMountOnTheSamePointIsOnTop) {
  MountTable m = MountTable::Parse(kMountinfo);
  EXPECT_EQ(m.Containing("/tank/home/bob")->source, "tank/home2");
  EXPECT_EQ(m.MountedAt("/tank/home")->source, "tank/home2");
  EXPECT_EQ(m.MountedAt("/tank/home/bob"), nullptr);
}

TEST(MountTable, EscapedSpaceIsUnescaped) {
  MountTable m = MountTable::Parse(kMountinfo);
  EXPECT_EQ(m.Containing("/srv/with space/a")->fstype, "tmpfs");
}

TEST(MountTable, UnparsableLinesAreSkipped) {
  EXPECT_EQ(MountTable::Parse(kMountinfo).size(), 4u);
  EXPECT_EQ(MountTable::Parse("x y z\n").size(), 0u);
}

TEST(ParseMountinfoLine, OptionalFieldsBeforeTheDashAreSkipped) {
  MountTableEntry e;
  ASSERT_TRUE(ParseMountinfoLine(
      "41 40 0:46 / /tank/a\\134b rw shared:21 master:3 - zfs tank/a rw", &e));
  EXPECT_EQ(e.mount_point, "/tank/a\\b");
  EXPECT_EQ(e.fstype, "zfs");
  EXPECT_EQ(e.source, "tank/a");
}

TEST(ParseMountinfoLine, NoDashOrARelativePointDoesNotParse) {
  MountTableEntry e;
  EXPECT_FALSE(ParseMountinfoLine("41 40 0:46 / /tank/a rw shared:21", &e));
  EXPECT_FALSE(ParseMountinfoLine("41 40 0:46 / tank/a rw - zfs t rw", &e));
  EXPECT_FALSE(ParseMountinfoLine("", &e));
}

TEST(UnescapeMountinfo, OctalEscapesOnlyInRange) {
  EXPECT_EQ(UnescapeMountinfo("a\\040b\\011c\\012d"), "a b\tc\nd");
  EXPECT_EQ(UnescapeMountinfo("\\400\\08"), "\\400\\08");  // not escapes
  EXPECT_EQ(UnescapeMountinfo("end\\04"), "end\\04");      // cut short
}

}  // namespace
}  // namespace libshare

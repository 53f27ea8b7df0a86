#include "fs_watch.h"

#include <string>

#include "gtest/gtest.h"

namespace sharemgrd {
namespace {

constexpr char kMountinfo[] =
    "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
    "40 22 0:45 / /tank/home rw shared:20 - zfs tank/home rw,xattr\n"
    "41 40 0:46 / /tank/home/alice rw shared:21 master:3 - zfs "
    "tank/home/alice rw\n"
    "42 22 0:47 / /srv/with\\040space rw - tmpfs tmpfs rw\n"
    "43 22 0:48 / /tank/home rw shared:22 - zfs tank/home2 rw\n"
    "garbage line\n";

PathStat Stat(PathStat::Kind kind) {
  PathStat st;
  st.kind = kind;
  st.dev = 46;
  return st;
}
PathStat Dir() { return Stat(PathStat::Kind::kDirectory); }

TEST(MountInfo, NearestMountPointContainsThePath) {
  MountInfo m = MountInfo::Parse(kMountinfo);
  ASSERT_NE(m.Containing("/tank/home/alice/x"), nullptr);
  EXPECT_EQ(m.Containing("/tank/home/alice/x")->source, "tank/home/alice");
  EXPECT_EQ(m.Containing("/tank/homes")->mount_point, "/");
  EXPECT_EQ(m.Containing("/")->fstype, "ext4");
}

TEST(MountInfo, LaterMountOnTheSamePointIsOnTop) {
  MountInfo m = MountInfo::Parse(kMountinfo);
  EXPECT_EQ(m.Containing("/tank/home/bob")->source, "tank/home2");
}

TEST(MountInfo, EscapedSpaceIsUnescaped) {
  MountInfo m = MountInfo::Parse(kMountinfo);
  EXPECT_EQ(m.Containing("/srv/with space/a")->fstype, "tmpfs");
}

TEST(MountInfo, UnparsableLinesAreSkipped) {
  EXPECT_EQ(MountInfo::Parse(kMountinfo).size(), 4u);
  EXPECT_EQ(MountInfo::Parse("x y z\n").size(), 0u);
}

TEST(ProbeShare, NothingRecordedIsServedAndRecordsTheCurrentMount) {
  MountInfo m = MountInfo::Parse(kMountinfo);
  ShareProbe p = ProbeShare("/tank/home/alice", Dir(), nullptr, m);
  EXPECT_TRUE(p.served);
  ASSERT_TRUE(p.record.has_value());
  EXPECT_EQ(p.record->mount_point, "/tank/home/alice");
  EXPECT_EQ(p.record->source, "tank/home/alice");
}

// A share added since start and not recorded yet: its device at the add
// (added_dev) against the path's now.
TEST(ProbeShare, AddedThenUnmountedBeforeRecordedIsNotServedNorRecorded) {
  MountInfo m = MountInfo::Parse(
      "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
      "40 22 0:45 / /tank/home rw - zfs tank/home rw\n");
  PathStat st = Dir();
  st.dev = 45;  // the parent's device: /tank/home/alice is unmounted
  ShareProbe p = ProbeShare("/tank/home/alice", st, nullptr, m, false, 46);
  EXPECT_FALSE(p.served);
  EXPECT_FALSE(p.record.has_value());
  EXPECT_EQ(p.reason,
            "the folder is on another file system than when the share was "
            "added, and none is mounted at it (unmounted before its file "
            "system was recorded)");
  // The same device as at the add: served and recorded.
  st.dev = 46;
  MountInfo mounted = MountInfo::Parse(kMountinfo);
  p = ProbeShare("/tank/home/alice", st, nullptr, mounted, false, 46);
  EXPECT_TRUE(p.served);
  ASSERT_TRUE(p.record.has_value());
  EXPECT_EQ(p.record->source, "tank/home/alice");
  // Another device, but a file system mounted at the path (mounted again
  // under a new device number): served and that one recorded.
  st.dev = 47;
  p = ProbeShare("/tank/home/alice", st, nullptr, mounted, false, 46);
  EXPECT_TRUE(p.served);
  ASSERT_TRUE(p.record.has_value());
  EXPECT_EQ(p.record->mount_point, "/tank/home/alice");
  // Something recorded already: the recorded place decides, not the add.
  FsPlace rec{"/tank/home/alice", "zfs", "tank/home/alice"};
  st.dev = 45;
  p = ProbeShare("/tank/home/alice", st, &rec, mounted, false, 46);
  EXPECT_TRUE(p.served);
  // Without added_dev (a share loaded at start): recorded as it is.
  p = ProbeShare("/tank/home/alice", st, nullptr, m);
  EXPECT_TRUE(p.served);
  ASSERT_TRUE(p.record.has_value());
  EXPECT_EQ(p.record->mount_point, "/tank/home");
}

// The same device change for a share of a plain folder (nothing mounted
// at it when added): its parent's file system was remounted under a new
// device number; the folder is what was shared, served and recorded where
// it is now.
TEST(ProbeShare, PlainFolderWhoseParentWasRemountedBeforeRecordedIsServed) {
  MountInfo m = MountInfo::Parse(
      "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
      "41 22 0:47 / /tank/home rw - zfs tank/home rw\n");
  PathStat st = Dir();
  st.dev = 47;  // /tank/home remounted: 45 when the share was added
  ShareProbe p = ProbeShare("/tank/home/carol", st, nullptr, m, false, 45,
                            /*added_mount_root=*/false);
  EXPECT_TRUE(p.served) << p.reason;
  ASSERT_TRUE(p.record.has_value());
  EXPECT_EQ(p.record->mount_point, "/tank/home");
  // Had a file system been mounted at it when added: not served.
  p = ProbeShare("/tank/home/carol", st, nullptr, m, false, 45,
                 /*added_mount_root=*/true);
  EXPECT_FALSE(p.served);
  EXPECT_FALSE(p.record.has_value());
}

TEST(ProbeShare, UnmountedDatasetSaysWhereItWasAndIsNow) {
  MountInfo m = MountInfo::Parse(
      "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
      "40 22 0:45 / /tank/home rw - zfs tank/home rw\n");
  FsPlace rec{"/tank/home/alice", "zfs", "tank/home/alice"};
  ShareProbe p = ProbeShare("/tank/home/alice", Dir(), &rec, m);
  EXPECT_FALSE(p.served);
  EXPECT_FALSE(p.record.has_value());
  EXPECT_EQ(p.reason,
            "recorded on a file system mounted at /tank/home/alice, now "
            "/tank/home");
}

TEST(ProbeShare, AnotherFileSystemAtTheSamePointIsNotServed) {
  MountInfo m = MountInfo::Parse(kMountinfo);
  FsPlace rec{"/tank/home", "zfs", "tank/home"};
  ShareProbe p = ProbeShare("/tank/home", Dir(), &rec, m);
  EXPECT_FALSE(p.served);
  EXPECT_EQ(p.reason,
            "recorded on tank/home (zfs) mounted at /tank/home, now "
            "tank/home2 (zfs)");
}

TEST(ProbeShare, RemountedWithANewDeviceIsServed) {
  MountInfo m = MountInfo::Parse(kMountinfo);
  FsPlace rec{"/tank/home/alice", "zfs", "tank/home/alice"};
  PathStat st = Dir();
  st.dev = 999;  // st_dev is not compared: ZFS gets a new one per mount
  EXPECT_TRUE(ProbeShare("/tank/home/alice", st, &rec, m).served);
}

TEST(ProbeShare, MountpointOptionRefusesAFolderWithNothingMountedOnIt) {
  MountInfo m = MountInfo::Parse(kMountinfo);
  PathStat st = Dir();
  st.mount_point = false;  // the parent's folder: nothing mounted there
  ShareProbe p = ProbeShare("/tank/home/bob", st, nullptr, m, true);
  EXPECT_FALSE(p.served);
  EXPECT_FALSE(p.record.has_value());
  EXPECT_EQ(p.reason,
            "no file system is mounted at the path (option mountpoint)");
  // Without the option the same folder is served (recorded on the parent).
  EXPECT_TRUE(ProbeShare("/tank/home/bob", st, nullptr, m).served);
}

TEST(ProbeShare, MountpointOptionRecordsTheFileSystemMountedLater) {
  MountInfo m = MountInfo::Parse(kMountinfo);
  PathStat st = Dir();
  st.mount_point = true;
  // Recorded on the parent before the dataset was mounted: recorded anew.
  FsPlace parent{"/tank/home", "zfs", "tank/home"};
  ShareProbe p = ProbeShare("/tank/home/alice", st, &parent, m, true);
  EXPECT_TRUE(p.served);
  ASSERT_TRUE(p.record.has_value());
  EXPECT_EQ(p.record->mount_point, "/tank/home/alice");
  // Mounted (the live check says so) but not yet in the table read last:
  // served, nothing recorded until the next round.
  ShareProbe q = ProbeShare("/tank/new", st, nullptr, m, true);
  EXPECT_TRUE(q.served);
  EXPECT_FALSE(q.record.has_value());
}

TEST(ProbeShare, HasMountpointOptionMatchesTheWordOnly) {
  EXPECT_TRUE(HasMountpointOption("rw,mountpoint"));
  EXPECT_TRUE(HasMountpointOption("mountpoint"));
  EXPECT_FALSE(HasMountpointOption("rw=mountpoint"));
  EXPECT_FALSE(HasMountpointOption("rw=a:mountpoint,nohide"));
  EXPECT_FALSE(HasMountpointOption(""));
}

TEST(ProbeShare, MissingLinkAndFileAreNotServed) {
  MountInfo m = MountInfo::Parse(kMountinfo);
  FsPlace rec{"/", "ext4", "/dev/sda1"};
  EXPECT_EQ(ProbeShare("/a", Stat(PathStat::Kind::kMissing), &rec, m).reason,
            "the folder does not exist");
  EXPECT_EQ(ProbeShare("/a", Stat(PathStat::Kind::kLink), &rec, m).reason,
            "the path is now a symbolic link");
  EXPECT_EQ(ProbeShare("/a", Stat(PathStat::Kind::kOther), &rec, m).reason,
            "the path is no longer a directory");
  EXPECT_FALSE(
      ProbeShare("/a", Stat(PathStat::Kind::kMissing), nullptr, m).served);
  // A folder above it a link: not served, nothing recorded, the round's why.
  PathStat above = Stat(PathStat::Kind::kLinkAbove);
  above.error = "/a: a symlink component";
  ShareProbe p = ProbeShare("/a/b", above, nullptr, m);
  EXPECT_FALSE(p.served);
  EXPECT_FALSE(p.record.has_value());
  EXPECT_EQ(p.reason, "/a: a symlink component");
}

}  // namespace
}  // namespace sharemgrd

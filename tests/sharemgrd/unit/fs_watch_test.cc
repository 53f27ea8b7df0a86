#include "fs_watch.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "libshare/batch.h"
#include "libshare/catalog.h"

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

TEST(ProbeShare, NothingRecordedIsServedAndRecordsTheCurrentMount) {
  libshare::MountTable m = libshare::MountTable::Parse(kMountinfo);
  ShareProbe p = ProbeShare("/tank/home/alice", Dir(), nullptr, m);
  EXPECT_TRUE(p.served);
  ASSERT_TRUE(p.record.has_value());
  EXPECT_EQ(p.record->mount_point, "/tank/home/alice");
  EXPECT_EQ(p.record->source, "tank/home/alice");
}

// A share added since start and not recorded yet: its device at the add
// (added_dev) against the path's now.
TEST(ProbeShare, AddedThenUnmountedBeforeRecordedIsNotServedNorRecorded) {
  libshare::MountTable m = libshare::MountTable::Parse(
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
  libshare::MountTable mounted = libshare::MountTable::Parse(kMountinfo);
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
  libshare::MountTable m = libshare::MountTable::Parse(
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
  libshare::MountTable m = libshare::MountTable::Parse(
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
  libshare::MountTable m = libshare::MountTable::Parse(kMountinfo);
  FsPlace rec{"/tank/home", "zfs", "tank/home"};
  ShareProbe p = ProbeShare("/tank/home", Dir(), &rec, m);
  EXPECT_FALSE(p.served);
  EXPECT_EQ(p.reason,
            "recorded on tank/home (zfs) mounted at /tank/home, now "
            "tank/home2 (zfs)");
}

TEST(ProbeShare, RemountedWithANewDeviceIsServed) {
  libshare::MountTable m = libshare::MountTable::Parse(kMountinfo);
  FsPlace rec{"/tank/home/alice", "zfs", "tank/home/alice"};
  PathStat st = Dir();
  st.dev = 999;  // st_dev is not compared: ZFS gets a new one per mount
  EXPECT_TRUE(ProbeShare("/tank/home/alice", st, &rec, m).served);
}

TEST(ProbeShare, MountpointOptionRefusesAFolderWithNothingMountedOnIt) {
  libshare::MountTable m = libshare::MountTable::Parse(kMountinfo);
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
  libshare::MountTable m = libshare::MountTable::Parse(kMountinfo);
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

TEST(ProbeShare, MissingLinkAndFileAreNotServed) {
  libshare::MountTable m = libshare::MountTable::Parse(kMountinfo);
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

// A watch over a real Catalog in a temporary folder (/proc/self/mountinfo,
// real folders): which rounds a batch wakes, and what they decide.
class FsWatchRoundsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sharemgrd_fswatch_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto catalog = libshare::Catalog::Open({dir_ + "/db", 1});
    ASSERT_TRUE(catalog.ok()) << catalog.status();
    catalog_ = std::move(*catalog);
    libshare::Operation create;
    create.type = libshare::Operation::Type::kCreateGroup;
    create.group = "g";
    create.options = "rw";
    std::vector<libshare::Operation> ops = {create};
    for (int i = 0; i < 3; ++i)
      ops.push_back(Add(Mkdir("s" + std::to_string(i))));
    ASSERT_TRUE(Apply(ops).ok());
    // A copy of the mount table: mounts made meanwhile by other tests
    // (each wakes a full round) do not reach this watch.
    ASSERT_EQ(
        system(("cp /proc/self/mountinfo '" + dir_ + "/mountinfo'").c_str()),
        0);
    auto w = FsWatch::Open({.mountinfo = dir_ + "/mountinfo",
                            .recheck = recheck_,
                            .log =
                                [this](const std::string& line) {
                                  absl::MutexLock l(&mu_);
                                  log_.push_back(line);
                                }},
                           catalog_.get(), catalog_->fs_places());
    ASSERT_TRUE(w.ok()) << w.status();
    watch_ = std::move(*w);
    watch_->Watch(
        [this](const std::vector<std::string>& paths) {
          absl::MutexLock l(&mu_);
          changed_.insert(changed_.end(), paths.begin(), paths.end());
        },
        [this] {
          absl::MutexLock l(&mu_);
          first_done_ = true;
        });
    absl::MutexLock l(&mu_);
    ASSERT_TRUE(
        mu_.AwaitWithTimeout(absl::Condition(&first_done_), absl::Seconds(10)));
  }
  void TearDown() override {
    watch_.reset();
    catalog_.reset();
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(system(cmd.c_str()), 0);
  }
  std::string Mkdir(const std::string& name) {
    std::string p = dir_ + "/" + name;
    EXPECT_EQ(mkdir(p.c_str(), 0755), 0) << p;
    return p;
  }
  static libshare::Operation Add(const std::string& path,
                                 const std::string& options = "") {
    libshare::Operation op;
    op.type = libshare::Operation::Type::kAddShare;
    op.group = "g";
    op.path = path;
    op.options = options;
    return op;
  }
  static libshare::Operation Remove(const std::string& path) {
    libshare::Operation op;
    op.type = libshare::Operation::Type::kRemoveShare;
    op.path = path;
    return op;
  }
  // Applies a batch and tells the watch, as the daemon does.
  libshare::BatchResult Apply(const std::vector<libshare::Operation>& ops) {
    libshare::Batch b;
    b.ops = ops;
    libshare::BatchResult r = catalog_->Apply(b);
    EXPECT_TRUE(r.ok()) << (r.errors.empty() ? r.commit_error
                                             : r.errors[0].message);
    if (watch_ != nullptr) watch_->SharesChanged(r.changes);
    return r;
  }
  // Waits until `done` holds (polled), at most 10 s.
  template <typename Pred>
  bool WaitFor(Pred done) {
    for (int i = 0; i < 1000; ++i) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return done();
  }
  bool Changed(const std::string& path) {
    absl::MutexLock l(&mu_);
    return std::find(changed_.begin(), changed_.end(), path) != changed_.end();
  }
  bool Logged(const std::string& part) {
    absl::MutexLock l(&mu_);
    return std::any_of(log_.begin(), log_.end(), [&](const std::string& line) {
      return line.find(part) != std::string::npos;
    });
  }

  absl::Duration recheck_ = absl::Seconds(30);
  std::string dir_;
  std::unique_ptr<libshare::Catalog> catalog_;
  std::unique_ptr<FsWatch> watch_;
  absl::Mutex mu_;
  bool first_done_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::string> changed_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> log_ ABSL_GUARDED_BY(mu_);
};

// A small batch wakes a round over its own shares, not over every share,
// and that round decides them as a full one would: a share with the
// option mountpoint on a plain folder is not served, and its path is
// reported as changed.
TEST_F(FsWatchRoundsTest, SmallBatchWakesARoundOverItsSharesOnly) {
  ASSERT_EQ(watch_->full_rounds(), 1u);
  const std::string m = Mkdir("m");
  Apply({Add(m, "rw,mountpoint")});
  ASSERT_TRUE(WaitFor([&] { return Changed(m); }))
      << "the new share's state was never reported";
  EXPECT_EQ(watch_->changed_rounds(), 1u);
  EXPECT_EQ(watch_->full_rounds(), 1u) << "a full round for one add";
  EXPECT_EQ(watch_->NotServed(m, false, true).value_or("served"),
            "no file system is mounted at the path (option mountpoint)");

  // Removed, it is forgotten by the next round over changes: a share added
  // there again later starts afresh.
  Apply({Remove(m)});
  ASSERT_TRUE(WaitFor([&] { return watch_->changed_rounds() == 2; }));
  EXPECT_EQ(watch_->NotServed(m, false, false), std::nullopt);
  EXPECT_EQ(watch_->full_rounds(), 1u);
}

// The round over a batch's changes probes the changed share's folder
// anew: a share whose folder went away before its options changed is not
// served once that round is done, and says why.
TEST_F(FsWatchRoundsTest, ChangedShareIsProbedAgain) {
  const std::string s1 = dir_ + "/s1";
  EXPECT_EQ(watch_->NotServed(s1, false, false), std::nullopt);
  ASSERT_EQ(rmdir(s1.c_str()), 0);
  libshare::Operation set;
  set.type = libshare::Operation::Type::kSetOptions;
  set.group = "g";
  set.path = s1;
  set.options = "ro";
  Apply({set});
  ASSERT_TRUE(WaitFor([&] { return Changed(s1); }));
  EXPECT_EQ(watch_->NotServed(s1, false, false).value_or("served"),
            "the folder does not exist");
  EXPECT_EQ(watch_->full_rounds(), 1u);
  // Back, and changed again: served again.
  Mkdir("s1");
  set.options = "rw";
  Apply({set});
  ASSERT_TRUE(WaitFor([&] { return watch_->changed_rounds() == 2; }));
  EXPECT_EQ(watch_->NotServed(s1, false, false), std::nullopt);
}

// A batch that changes more than a quarter of the shares (and at least
// 1,024) wakes one full round instead.
TEST_F(FsWatchRoundsTest, BigBatchWakesAFullRound) {
  Mkdir("big");
  std::vector<libshare::Operation> ops;
  for (int i = 0; i < 1100; ++i) {
    ops.push_back(Add(Mkdir("big/" + std::to_string(i))));
  }
  Apply(ops);
  ASSERT_TRUE(WaitFor([&] { return watch_->full_rounds() == 2; }));
  EXPECT_EQ(watch_->changed_rounds(), 0u);
  // The next small change is a round over it alone again.
  const std::string m = Mkdir("m");
  Apply({Add(m, "rw,mountpoint")});
  ASSERT_TRUE(WaitFor([&] { return Changed(m); }));
  EXPECT_EQ(watch_->changed_rounds(), 1u);
  EXPECT_EQ(watch_->full_rounds(), 2u);
}

// A full round that cannot read the mount table keeps the states it has,
// and the changes it was to cover stay asked for: the next change's round
// is a full one, not a round over that change alone.
TEST_F(FsWatchRoundsTest, RoundWithoutTheMountTableKeepsTheChangesAskedFor) {
  const std::string mountinfo = dir_ + "/mountinfo";
  ASSERT_EQ(system(("cp '" + mountinfo + "' '" + mountinfo + ".kept' && : >'" +
                    mountinfo + "'")
                       .c_str()),
            0);
  Mkdir("big");
  std::vector<libshare::Operation> ops;
  for (int i = 0; i < 1100; ++i) {
    ops.push_back(Add(Mkdir("big/" + std::to_string(i))));
  }
  Apply(ops);
  ASSERT_TRUE(WaitFor([&] { return Logged("cannot read " + mountinfo); }));
  EXPECT_EQ(watch_->full_rounds(), 1u);
  ASSERT_EQ(rename((mountinfo + ".kept").c_str(), mountinfo.c_str()), 0);
  const std::string m = Mkdir("m");
  Apply({Add(m, "rw,mountpoint")});
  ASSERT_TRUE(WaitFor([&] { return Changed(m); }));
  EXPECT_EQ(watch_->full_rounds(), 2u) << "the big batch's shares were lost";
  EXPECT_EQ(watch_->changed_rounds(), 0u);
  EXPECT_TRUE(Logged("file systems probed: 1104 shares"));
}

// The periodic recheck probes every share with no change asked for: a
// folder moved away (no mount changed) is found by it.
class FsWatchRecheckTest : public FsWatchRoundsTest {
 protected:
  void SetUp() override {
    recheck_ = absl::Milliseconds(200);
    FsWatchRoundsTest::SetUp();
  }
};

TEST_F(FsWatchRecheckTest, RecheckFindsAFolderMovedAway) {
  const std::string s2 = dir_ + "/s2";
  ASSERT_EQ(rename(s2.c_str(), (s2 + ".moved").c_str()), 0);
  ASSERT_TRUE(WaitFor([&] { return Changed(s2); }));
  EXPECT_EQ(watch_->changed_rounds(), 0u) << "no batch asked for a round";
  EXPECT_EQ(watch_->NotServed(s2, false, false).value_or("served"),
            "the folder does not exist");
}

// A share first seen by a round over changes keeps its state through the
// full rounds after it (which rebuild every key: run under ASan, a key
// left pointing at the old paths would be read after free).
TEST_F(FsWatchRecheckTest, ShareAddedBetweenFullRoundsKeepsItsState) {
  const std::string m = Mkdir("m");
  Apply({Add(m, "rw,mountpoint")});
  ASSERT_TRUE(WaitFor([&] { return Changed(m); }));
  const uint64_t full = watch_->full_rounds();
  ASSERT_TRUE(WaitFor([&] { return watch_->full_rounds() >= full + 2; }));
  EXPECT_EQ(watch_->NotServed(m, false, true).value_or("served"),
            "no file system is mounted at the path (option mountpoint)");
  EXPECT_EQ(watch_->NotServed(dir_ + "/s0", false, false), std::nullopt);
}

}  // namespace
}  // namespace sharemgrd

#include "libshare/dir_walk.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "share_test_dirs.h"

namespace libshare {
namespace {

using ::testing::HasSubstr;

class DirWalkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char* real = realpath(tmp_.path().c_str(), nullptr);
    ASSERT_NE(real, nullptr);
    dir_ = real;
    free(real);
    ASSERT_EQ(mkdir((dir_ + "/share").c_str(), 0755), 0);
    ASSERT_EQ(mkdir((dir_ + "/share/a").c_str(), 0755), 0);
    ASSERT_EQ(mkdir((dir_ + "/share/a/b").c_str(), 0755), 0);
    ASSERT_EQ(mkdir((dir_ + "/outside").c_str(), 0755), 0);
    ASSERT_EQ(symlink("../outside", (dir_ + "/share/out").c_str()), 0);
    ASSERT_EQ(symlink("a", (dir_ + "/share/in").c_str()), 0);
    base_ = UniqueFd(open((dir_ + "/share").c_str(), O_PATH | O_DIRECTORY));
    ASSERT_TRUE(base_.valid());
  }
  WalkResult Walk(const std::string& rel, WalkIdentity who = {}) {
    return WalkBeneath(base_.get(), dir_ + "/share", rel, who);
  }

  testing::TempDir tmp_;
  std::string dir_;
  UniqueFd base_;
};

TEST_F(DirWalkTest, EndsOnTheDirectoryItself) {
  WalkResult w = Walk("a/b");
  ASSERT_EQ(w.stop, WalkStop::kOk);
  struct stat st;
  ASSERT_EQ(stat((dir_ + "/share/a/b").c_str(), &st), 0);
  EXPECT_EQ(w.dev, st.st_dev);
  EXPECT_EQ(w.ino, st.st_ino);
}

TEST_F(DirWalkTest, EmptyRelativeIsTheBase) {
  EXPECT_EQ(Walk("").stop, WalkStop::kOk);
}

TEST_F(DirWalkTest, LinkOutIsStoppedAtTheLink) {
  WalkResult w = Walk("out");
  EXPECT_EQ(w.stop, WalkStop::kSymlink);
  EXPECT_EQ(w.at, dir_ + "/share/out");
}

TEST_F(DirWalkTest, IntermediateLinkIsStoppedBeforeAMissingName) {
  EXPECT_EQ(Walk("out/nothing").stop, WalkStop::kSymlink);
}

TEST_F(DirWalkTest, LinkThatStaysInsideIsNotFollowedEither) {
  EXPECT_EQ(Walk("in/b").stop, WalkStop::kSymlink);
}

TEST_F(DirWalkTest, MissingNameInsideIsNotFound) {
  WalkResult w = Walk("a/missing");
  EXPECT_EQ(w.stop, WalkStop::kNotFound);
  EXPECT_EQ(w.at, dir_ + "/share/a/missing");
}

TEST_F(DirWalkTest, FileIsNotADirectory) {
  int fd = open((dir_ + "/share/f").c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_GE(fd, 0);
  close(fd);
  EXPECT_EQ(Walk("f").stop, WalkStop::kNotDirectory);
  EXPECT_EQ(Walk("f/x").stop, WalkStop::kNotDirectory);
}

TEST_F(DirWalkTest, UserWithoutSearchRightIsStoppedAtThatDirectory) {
  ASSERT_EQ(chmod((dir_ + "/share/a").c_str(), 0700), 0);
  WalkResult w = Walk("a/b", {.root = false, .uid = 4242, .gid = 4242});
  EXPECT_EQ(w.stop, WalkStop::kNoSearch);
  EXPECT_EQ(w.at, dir_ + "/share/a");
  // The last directory itself needs no search right.
  EXPECT_EQ(Walk("a", {.root = false, .uid = 4242, .gid = 4242}).stop,
            WalkStop::kOk);
}

TEST_F(DirWalkTest, OwnerAndGroupBitsApplyToTheirIds) {
  struct stat st;
  ASSERT_EQ(stat((dir_ + "/share/a").c_str(), &st), 0);
  ASSERT_EQ(chmod((dir_ + "/share/a").c_str(), 0710), 0);
  EXPECT_EQ(Walk("a/b", {.root = false, .uid = st.st_uid, .gid = 4242}).stop,
            WalkStop::kOk);
  EXPECT_EQ(Walk("a/b", {.root = false, .uid = 4242, .gid = st.st_gid}).stop,
            WalkStop::kOk);
  ASSERT_EQ(chmod((dir_ + "/share/a").c_str(), 0601), 0);
  // The owner class decides for the owner, even if "other" would allow.
  EXPECT_EQ(Walk("a/b", {.root = false, .uid = st.st_uid, .gid = 4242}).stop,
            WalkStop::kNoSearch);
}

TEST_F(DirWalkTest, AnotherMountIsNotEntered) {
  UniqueFd root(open("/", O_PATH | O_DIRECTORY));
  ASSERT_TRUE(root.valid());
  // /proc is a mount of its own on every Linux system.
  EXPECT_EQ(WalkBeneath(root.get(), "/", "proc", {}).stop,
            WalkStop::kOtherMount);
}

TEST_F(DirWalkTest, OpenFromRootRefusesAnyLinkComponent) {
  EXPECT_EQ(OpenDirectoryNoSymlinks(dir_ + "/share/a/b").stop, WalkStop::kOk);
  EXPECT_EQ(OpenDirectoryNoSymlinks(dir_ + "/share/in/b").stop,
            WalkStop::kSymlink);
  EXPECT_EQ(OpenDirectoryNoSymlinks(dir_ + "/share/out").stop,
            WalkStop::kSymlink);
}

TEST_F(DirWalkTest, CanonicalRuleNamesTheCanonicalForm) {
  absl::StatusOr<DirectoryPlace> s =
      CanonicalDirectoryPlace(dir_ + "/share/in/b");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()),
              HasSubstr("path \"" + dir_ + "/share/in/b\": a symlink "
                        "component; its canonical form is \"" +
                        dir_ + "/share/a/b\""));
}

TEST_F(DirWalkTest, CanonicalRuleGivesTheDeviceOfADirectory) {
  struct stat st;
  ASSERT_EQ(stat((dir_ + "/share/a").c_str(), &st), 0);
  absl::StatusOr<DirectoryPlace> s =
      CanonicalDirectoryPlace(dir_ + "/share/a");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->dev, st.st_dev);
  EXPECT_EQ(CanonicalDirectoryPlace(dir_ + "/none").status().code(),
            absl::StatusCode::kNotFound);
}

// Whether a file system is mounted at the path (fs_watch tells a dataset
// unmounted right after its add from a plain folder whose parent file
// system was remounted): "/" and "/proc" are mount roots, a folder in the
// test's directory is not; the checker says the same.
TEST_F(DirWalkTest, CanonicalRuleSaysWhetherAFileSystemIsMountedThere) {
  CanonicalDirectoryChecker checker;
  const std::pair<std::string, bool> cases[] = {
      {"/", true},
      {"/proc", true},
      {dir_ + "/share/a", false},
      {dir_ + "/share/a/b", false}};
  for (const auto& [p, mounted] : cases) {
    absl::StatusOr<DirectoryPlace> s = CanonicalDirectoryPlace(p);
    ASSERT_TRUE(s.ok()) << p << ": " << s.status();
    EXPECT_EQ(s->mount_root, mounted) << p;
    absl::StatusOr<DirectoryPlace> c = checker.Check(p);
    ASSERT_TRUE(c.ok()) << p;
    EXPECT_EQ(c->mount_root, mounted) << p;
  }
}

// The checker a big batch uses answers every path as
// CanonicalDirectoryPlace does: the device, or the same error, whether
// the parent is the one it holds open, another, a link or missing.
TEST_F(DirWalkTest, CheckerAnswersAsTheCanonicalRule) {
  ASSERT_EQ(mkdir((dir_ + "/share/c").c_str(), 0755), 0);
  {
    std::ofstream f(dir_ + "/share/file");
    f << "x";
  }
  const std::vector<std::string> paths = {
      dir_ + "/share/a",      dir_ + "/share/c",     dir_ + "/share/in",
      dir_ + "/share/out",    dir_ + "/share/none",  dir_ + "/share/file",
      dir_ + "/share/a/b",    dir_ + "/share/in/b",  dir_ + "/share/out/x",
      dir_ + "/share/none/x", dir_ + "/share/file/x", dir_ + "/share/a",
      dir_ + "/share//a",     dir_ + "/share/./a",   dir_ + "/share/a/",
      "/",                    "/proc",               "relative/path",
      "",                     dir_ + "/outside",     dir_ + "/share/c"};
  CanonicalDirectoryChecker checker;
  int ok = 0;
  for (const std::string& p : paths) {
    absl::StatusOr<DirectoryPlace> want = CanonicalDirectoryPlace(p);
    absl::StatusOr<DirectoryPlace> got = checker.Check(p);
    EXPECT_EQ(got.status(), want.status()) << p;
    if (want.ok() && got.ok()) {
      EXPECT_EQ(got->dev, want->dev) << p;
      EXPECT_EQ(got->mount_root, want->mount_root) << p;
      ++ok;
    }
  }
  EXPECT_GE(ok, 8);  // the directories among them were answered
}

// A sibling is looked up by name each time, without following it: one
// swapped for a link after its parent was opened is refused.
TEST_F(DirWalkTest, CheckerSeesASiblingSwappedForALink) {
  const std::string c = dir_ + "/share/c";
  ASSERT_EQ(mkdir(c.c_str(), 0755), 0);
  CanonicalDirectoryChecker checker;
  ASSERT_TRUE(checker.Check(dir_ + "/share/a").ok());
  ASSERT_TRUE(checker.Check(c).ok());
  ASSERT_EQ(rmdir(c.c_str()), 0);
  ASSERT_EQ(symlink("a", c.c_str()), 0);
  absl::StatusOr<DirectoryPlace> s = checker.Check(c);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()),
              HasSubstr("a symlink component; its canonical form is \"" +
                        dir_ + "/share/a\""));
  ASSERT_EQ(unlink(c.c_str()), 0);
  EXPECT_EQ(checker.Check(c).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace libshare

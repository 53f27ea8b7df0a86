// ReplaceFile and MakeParentFolders (libshare/files.h): what root relies on
// when it writes in a folder others can plant names in.
#include "libshare/files.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace libshare {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class FilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/files_test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/x.pid";
    victim_ = dir_ + "/victim";
    std::ofstream(victim_) << "secret\n";
    ASSERT_EQ(::chmod(victim_.c_str(), 0600), 0);
  }
  void TearDown() override {
    std::string rm = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(::system(rm.c_str()), 0);
  }
  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  static mode_t ModeOf(const std::string& path) {
    struct stat st;
    return ::lstat(path.c_str(), &st) == 0 ? st.st_mode : 0;
  }
  std::vector<std::string> Names() const {
    std::vector<std::string> out;
    DIR* d = ::opendir(dir_.c_str());
    while (dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") out.push_back(n);
    }
    ::closedir(d);
    std::sort(out.begin(), out.end());
    return out;
  }

  std::string dir_, path_, victim_;
};

TEST_F(FilesTest, NewFileHasTheContentAndExactlyTheMode) {
  mode_t old = ::umask(0077);
  absl::Status s = ReplaceFile(path_, "42\n", 0644);
  ::umask(old);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(Read(path_), "42\n");
  EXPECT_EQ(ModeOf(path_) & 07777, 0644u);
  EXPECT_THAT(Names(), ElementsAre("victim", "x.pid"));
}

TEST_F(FilesTest, LinkAtTheNameIsReplacedNotFollowed) {
  ASSERT_EQ(::symlink(victim_.c_str(), path_.c_str()), 0);
  ASSERT_TRUE(ReplaceFile(path_, "42\n", 0644).ok());
  EXPECT_TRUE(S_ISREG(ModeOf(path_)));
  EXPECT_EQ(Read(victim_), "secret\n");
  EXPECT_EQ(ModeOf(victim_) & 07777, 0600u);
}

TEST_F(FilesTest, PlantedTemporaryNamesAreNotUsed) {
  // The names an old writer used: a link and a world-writable file.
  ASSERT_EQ(::symlink(victim_.c_str(), (path_ + ".tmp").c_str()), 0);
  std::ofstream(path_ + ".tmpXXXXXX") << "planted\n";
  ASSERT_EQ(::chmod((path_ + ".tmpXXXXXX").c_str(), 0666), 0);
  ASSERT_TRUE(ReplaceFile(path_, "42\n", 0644).ok());
  EXPECT_EQ(Read(victim_), "secret\n");
  EXPECT_EQ(Read(path_), "42\n");
  EXPECT_EQ(ModeOf(path_) & 07777, 0644u);
  EXPECT_EQ(Read(path_ + ".tmpXXXXXX"), "planted\n");
}

TEST_F(FilesTest, FailureLeavesTheOldFileAndNoTemporary) {
  ASSERT_EQ(::mkdir(path_.c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((path_ + "/sub").c_str(), 0755), 0);
  absl::Status s = ReplaceFile(path_, "42\n", 0644);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr(path_));
  EXPECT_THAT(std::string(s.message()), HasSubstr("rename"));
  EXPECT_THAT(Names(), ElementsAre("victim", "x.pid"));
}

TEST_F(FilesTest, MakeParentFoldersMakesEveryMissingLevel) {
  std::string file = dir_ + "/a/b/c/file";
  ASSERT_TRUE(MakeParentFolders(file).ok());
  EXPECT_TRUE(S_ISDIR(ModeOf(dir_ + "/a/b/c")));
  EXPECT_TRUE(MakeParentFolders(file).ok());  // all exist: not an error
}

TEST_F(FilesTest, MakeParentFoldersNamesTheFolderItCannotMake) {
  std::ofstream(dir_ + "/plain") << "x";
  absl::Status s = MakeParentFolders(dir_ + "/plain/sub/file");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr(dir_ + "/plain/sub"));
}

}  // namespace
}  // namespace libshare

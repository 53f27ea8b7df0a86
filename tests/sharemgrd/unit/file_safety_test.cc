// sharemgrd refuses to start on a store or socket folder that other users
// own or may write (found by tests/reliability/unsafe_files_refused.sh).
#include "file_safety.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharemgrd {
namespace {

using ::testing::HasSubstr;

class FileSafetyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/file_safety_test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    db_ = dir_ + "/shares.db";
    int fd = ::open(db_.c_str(), O_CREAT | O_WRONLY, 0644);
    ASSERT_GE(fd, 0);
    ::close(fd);
    run_ = dir_ + "/run";
    ASSERT_EQ(::mkdir(run_.c_str(), 0755), 0);
    socket_ = run_ + "/sharemgrd.sock";
  }
  void TearDown() override {
    ::chmod(dir_.c_str(), 0700);
    ::unlink(db_.c_str());
    ::rmdir(run_.c_str());
    ::rmdir(dir_.c_str());
  }

  std::string dir_, db_, run_, socket_;
};

TEST_F(FileSafetyTest, OwnFilesWithUsualModesAreAccepted) {
  EXPECT_TRUE(CheckStartupFiles(db_, socket_, ::geteuid()).ok());
}

TEST_F(FileSafetyTest, MissingFilesAreAccepted) {
  EXPECT_TRUE(CheckStartupFiles(dir_ + "/new/shares.db", dir_ + "/new-run/sock",
                                ::geteuid())
                  .ok());
}

TEST_F(FileSafetyTest, StoreOwnedBySomeoneElseIsRefused) {
  absl::Status s = CheckStartupFiles(db_, socket_, ::geteuid() + 1);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr(db_ + " is owned by uid"));
  EXPECT_THAT(s.message(), HasSubstr("refusing to start"));
}

TEST_F(FileSafetyTest, StoreWritableByOthersIsRefused) {
  ASSERT_EQ(::chmod(db_.c_str(), 0646), 0);
  absl::Status s = CheckStartupFiles(db_, socket_, ::geteuid());
  EXPECT_THAT(s.message(), HasSubstr(db_ + " is writable by others"));
}

TEST_F(FileSafetyTest, StoreFolderWritableByOthersIsRefusedEvenIfSticky) {
  ASSERT_EQ(::chmod(dir_.c_str(), 01777), 0);
  absl::Status s = CheckStartupFiles(db_, socket_, ::geteuid());
  EXPECT_THAT(s.message(), HasSubstr(dir_ + " is writable by others"));
}

TEST_F(FileSafetyTest, SocketFolderWritableByOthersIsRefused) {
  ASSERT_EQ(::chmod(run_.c_str(), 0777), 0);
  absl::Status s = CheckStartupFiles(db_, socket_, ::geteuid());
  EXPECT_THAT(s.message(), HasSubstr(run_ + " is writable by others"));
}

TEST_F(FileSafetyTest, StickySocketFolderIsAccepted) {
  ASSERT_EQ(::chmod(run_.c_str(), 01777), 0);
  EXPECT_TRUE(CheckStartupFiles(db_, socket_, ::geteuid()).ok());
}

TEST_F(FileSafetyTest, StoreThatIsAFolderIsRefused) {
  absl::Status s = CheckStartupFiles(run_, socket_, ::geteuid());
  EXPECT_THAT(s.message(), HasSubstr("is not a regular file"));
}

}  // namespace
}  // namespace sharemgrd

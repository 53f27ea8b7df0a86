// sharemgrd refuses to start on a store, socket or pid-file folder that
// other users own or may write (found by
// tests/reliability/unsafe_files_refused.sh), opens its lock files without
// following links (lock_links_refused.sh) and binds its socket without a
// path race (socket_race_chowns_nothing.sh).
#include "file_safety.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

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
    std::string rm = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(::system(rm.c_str()), 0);
  }

  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  void WriteVictim() {
    std::ofstream(victim_) << "secret\n";
    ASSERT_EQ(::chmod(victim_.c_str(), 0600), 0);
  }
  static std::vector<std::string> Names(const std::string& dir) {
    std::vector<std::string> out;
    DIR* d = ::opendir(dir.c_str());
    while (dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") out.push_back(n);
    }
    ::closedir(d);
    std::sort(out.begin(), out.end());
    return out;
  }

  std::string dir_, db_, run_, socket_;
  std::string victim_ = "/tmp/x";  // set in tests that use it
};

TEST_F(FileSafetyTest, OwnFilesWithUsualModesAreAccepted) {
  EXPECT_TRUE(CheckStartupFiles(db_, socket_, "", ::geteuid()).ok());
}

TEST_F(FileSafetyTest, MissingFilesAreAccepted) {
  EXPECT_TRUE(CheckStartupFiles(dir_ + "/new/shares.db", dir_ + "/new-run/sock",
                                dir_ + "/new-pid/pid", ::geteuid())
                  .ok());
}

TEST_F(FileSafetyTest, StoreOwnedBySomeoneElseIsRefused) {
  absl::Status s = CheckStartupFiles(db_, socket_, "", ::geteuid() + 1);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr(db_ + " is owned by uid"));
  EXPECT_THAT(s.message(), HasSubstr("refusing to start"));
}

TEST_F(FileSafetyTest, StoreWritableByOthersIsRefused) {
  ASSERT_EQ(::chmod(db_.c_str(), 0646), 0);
  absl::Status s = CheckStartupFiles(db_, socket_, "", ::geteuid());
  EXPECT_THAT(s.message(), HasSubstr(db_ + " is writable by others"));
}

TEST_F(FileSafetyTest, StoreFolderWritableByOthersIsRefusedEvenIfSticky) {
  ASSERT_EQ(::chmod(dir_.c_str(), 01777), 0);
  absl::Status s = CheckStartupFiles(db_, socket_, "", ::geteuid());
  EXPECT_THAT(s.message(), HasSubstr(dir_ + " is writable by others"));
}

// SQLite follows links at shares.db-wal/-shm/-journal: a group member who
// could plant shares.db-shm -> /etc/shadow would have it truncated.
TEST_F(FileSafetyTest, StoreFolderWritableByItsGroupIsRefusedNamingIt) {
  ASSERT_EQ(::chmod(dir_.c_str(), 0775), 0);
  absl::Status s = CheckStartupFiles(db_, socket_, "", ::geteuid());
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr(dir_ + " is writable by its group"));
  EXPECT_THAT(s.message(), HasSubstr("-shm"));
  EXPECT_THAT(s.message(), HasSubstr("refusing to start"));
}

TEST_F(FileSafetyTest, StoreFolderWritableByItsGroupIsRefusedEvenIfSticky) {
  ASSERT_EQ(::chmod(dir_.c_str(), 01770), 0);
  absl::Status s = CheckStartupFiles(db_, socket_, "", ::geteuid());
  EXPECT_THAT(s.message(), HasSubstr(dir_ + " is writable by its group"));
}

TEST_F(FileSafetyTest, SocketAndPidFoldersWritableByTheirGroupAreAccepted) {
  ASSERT_EQ(::chmod(run_.c_str(), 0775), 0);
  EXPECT_TRUE(
      CheckStartupFiles(db_, socket_, run_ + "/x.pid", ::geteuid()).ok());
}

TEST_F(FileSafetyTest, SocketFolderWritableByOthersIsRefused) {
  ASSERT_EQ(::chmod(run_.c_str(), 0777), 0);
  absl::Status s = CheckStartupFiles(db_, socket_, "", ::geteuid());
  EXPECT_THAT(s.message(), HasSubstr(run_ + " is writable by others"));
}

TEST_F(FileSafetyTest, StickySocketFolderIsAccepted) {
  ASSERT_EQ(::chmod(run_.c_str(), 01777), 0);
  EXPECT_TRUE(CheckStartupFiles(db_, socket_, "", ::geteuid()).ok());
}

TEST_F(FileSafetyTest, StoreThatIsAFolderIsRefused) {
  absl::Status s = CheckStartupFiles(run_, socket_, "", ::geteuid());
  EXPECT_THAT(s.message(), HasSubstr("is not a regular file"));
}

TEST_F(FileSafetyTest, PidFolderWritableByOthersIsRefused) {
  std::string pid_dir = dir_ + "/pid";
  ASSERT_EQ(::mkdir(pid_dir.c_str(), 0777), 0);
  ASSERT_EQ(::chmod(pid_dir.c_str(), 0777), 0);
  absl::Status s =
      CheckStartupFiles(db_, socket_, pid_dir + "/x.pid", ::geteuid());
  EXPECT_THAT(s.message(), HasSubstr(pid_dir + " is writable by others"));
}

TEST_F(FileSafetyTest, PidFolderIsNotCheckedWithoutAPidFile) {
  ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
  std::string pid_dir = dir_ + "/pid";
  ASSERT_EQ(::mkdir(pid_dir.c_str(), 0777), 0);
  ASSERT_EQ(::chmod(pid_dir.c_str(), 0777), 0);
  EXPECT_TRUE(CheckStartupFiles(db_, socket_, "", ::geteuid()).ok());
}

TEST_F(FileSafetyTest, LockFileIsCreatedWithMode0644AndOneLink) {
  std::string lock = dir_ + "/x.lock";
  absl::StatusOr<int> fd = OpenLockFile(lock, ::geteuid());
  ASSERT_TRUE(fd.ok()) << fd.status();
  struct stat st;
  ASSERT_EQ(::fstat(*fd, &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  EXPECT_EQ(::fcntl(*fd, F_GETFL) & O_NONBLOCK, 0);
  EXPECT_NE(::fcntl(*fd, F_GETFD) & FD_CLOEXEC, 0);
  ::close(*fd);
}

TEST_F(FileSafetyTest, LockFileOfOursWritableByOthersIsMade0644) {
  std::string lock = dir_ + "/x.lock";
  std::ofstream(lock) << "1\n";
  ASSERT_EQ(::chmod(lock.c_str(), 0666), 0);
  absl::StatusOr<int> fd = OpenLockFile(lock, ::geteuid());
  ASSERT_TRUE(fd.ok()) << fd.status();
  ::close(*fd);
  struct stat st;
  ASSERT_EQ(::stat(lock.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
}

TEST_F(FileSafetyTest, SymbolicLinkAtTheLockNameIsRefusedAndNotFollowed) {
  victim_ = dir_ + "/victim";
  WriteVictim();
  std::string lock = dir_ + "/x.lock";
  ASSERT_EQ(::symlink(victim_.c_str(), lock.c_str()), 0);
  absl::StatusOr<int> fd = OpenLockFile(lock, ::geteuid());
  ASSERT_FALSE(fd.ok());
  EXPECT_THAT(fd.status().message(),
              HasSubstr(lock + " is a symbolic link (owned by uid"));
  EXPECT_EQ(Read(victim_), "secret\n");
}

TEST_F(FileSafetyTest, DanglingSymbolicLinkAtTheLockNameCreatesNothing) {
  std::string target = dir_ + "/created-through-link";
  std::string lock = dir_ + "/x.lock";
  ASSERT_EQ(::symlink(target.c_str(), lock.c_str()), 0);
  EXPECT_FALSE(OpenLockFile(lock, ::geteuid()).ok());
  EXPECT_NE(::access(target.c_str(), F_OK), 0);
}

TEST_F(FileSafetyTest, HardLinkAtTheLockNameIsRefused) {
  victim_ = dir_ + "/victim";
  WriteVictim();
  std::string lock = dir_ + "/x.lock";
  ASSERT_EQ(::link(victim_.c_str(), lock.c_str()), 0);
  absl::StatusOr<int> fd = OpenLockFile(lock, ::geteuid());
  ASSERT_FALSE(fd.ok());
  EXPECT_THAT(fd.status().message(), HasSubstr(lock + " has 2 links"));
  EXPECT_EQ(Read(victim_), "secret\n");
}

TEST_F(FileSafetyTest, LockFileOwnedBySomeoneElseIsRefusedNamingTheOwner) {
  std::string lock = dir_ + "/x.lock";
  std::ofstream(lock) << "1\n";
  absl::StatusOr<int> fd = OpenLockFile(lock, ::geteuid() + 1);
  ASSERT_FALSE(fd.ok());
  EXPECT_THAT(fd.status().message(), HasSubstr(lock + " is owned by uid " +
                                               std::to_string(::geteuid())));
  EXPECT_EQ(Read(lock), "1\n");
}

TEST_F(FileSafetyTest, FifoAtTheLockNameIsRefusedWithoutBlocking) {
  std::string lock = dir_ + "/x.lock";
  ASSERT_EQ(::mkfifo(lock.c_str(), 0644), 0);
  absl::StatusOr<int> fd = OpenLockFile(lock, ::geteuid());
  ASSERT_FALSE(fd.ok());
  EXPECT_THAT(fd.status().message(), HasSubstr("is not a regular file"));
}

TEST_F(FileSafetyTest, SocketIsBoundWithTheModeAndLeavesNoPrivateFolder) {
  absl::StatusOr<int> fd =
      BindSocket(socket_, static_cast<uid_t>(-1), static_cast<gid_t>(-1), 0660);
  ASSERT_TRUE(fd.ok()) << fd.status();
  struct stat st;
  ASSERT_EQ(::lstat(socket_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0660u);
  EXPECT_THAT(Names(run_), ::testing::ElementsAre("sharemgrd.sock"));
  // Reachable at its final name.
  int c = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, socket_.data(), socket_.size());
  EXPECT_EQ(::connect(c, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ::close(c);
  ::close(*fd);
}

TEST_F(FileSafetyTest, SymbolicLinkAtTheSocketNameIsReplacedNotFollowed) {
  victim_ = dir_ + "/victim";
  WriteVictim();
  ASSERT_EQ(::symlink(victim_.c_str(), socket_.c_str()), 0);
  absl::StatusOr<int> fd = BindSocket(socket_, ::geteuid(), ::getegid(), 0666);
  ASSERT_TRUE(fd.ok()) << fd.status();
  struct stat st;
  ASSERT_EQ(::lstat(socket_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  ASSERT_EQ(::stat(victim_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(Read(victim_), "secret\n");
  ::close(*fd);
}

TEST_F(FileSafetyTest, StaleSocketIsReplaced) {
  absl::StatusOr<int> first =
      BindSocket(socket_, static_cast<uid_t>(-1), static_cast<gid_t>(-1), 0660);
  ASSERT_TRUE(first.ok()) << first.status();
  ::close(*first);  // a daemon killed without removing its socket
  absl::StatusOr<int> second =
      BindSocket(socket_, static_cast<uid_t>(-1), static_cast<gid_t>(-1), 0660);
  ASSERT_TRUE(second.ok()) << second.status();
  ::close(*second);
}

TEST_F(FileSafetyTest, FolderAtTheSocketNameIsAnErrorAndLeavesNoPrivateFolder) {
  ASSERT_EQ(::mkdir(socket_.c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((socket_ + "/x").c_str(), 0755), 0);
  absl::StatusOr<int> fd =
      BindSocket(socket_, static_cast<uid_t>(-1), static_cast<gid_t>(-1), 0660);
  ASSERT_FALSE(fd.ok());
  EXPECT_THAT(fd.status().message(), HasSubstr(socket_));
  EXPECT_THAT(Names(run_), ::testing::ElementsAre("sharemgrd.sock"));
}

}  // namespace
}  // namespace sharemgrd

#include "libshare/file_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "share_test_dirs.h"

namespace libshare {
namespace {

using ::testing::HasSubstr;

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

TEST(ReadRegularFile, ReadsTheWholeText) {
  testing::TempDir d;
  const std::string f = d.path() + "/exports";
  Write(f, std::string(200000, 'x') + "\nend\n");
  absl::StatusOr<std::optional<std::string>> t = ReadRegularFile(f, 1 << 20);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_TRUE(t->has_value());
  EXPECT_EQ((*t)->size(), 200005u);
}

TEST(ReadRegularFile, NothingAtTheNameIsNoValueNotAnError) {
  testing::TempDir d;
  absl::StatusOr<std::optional<std::string>> t =
      ReadRegularFile(d.path() + "/none", 100);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_FALSE(t->has_value());
}

TEST(ReadRegularFile, AFifoIsRefusedNotWaitedOn) {
  testing::TempDir d;
  const std::string f = d.path() + "/fifo";
  ASSERT_EQ(mkfifo(f.c_str(), 0600), 0);
  absl::StatusOr<std::optional<std::string>> t = ReadRegularFile(f, 100);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), f + ": not a regular file");
  t = ReadRegularFile(d.path(), 100);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), d.path() + ": not a regular file");
}

TEST(ReadRegularFile, BiggerThanTheBoundIsRefusedNamingIt) {
  testing::TempDir d;
  const std::string f = d.path() + "/big";
  Write(f, std::string(101, 'x'));
  absl::StatusOr<std::optional<std::string>> t = ReadRegularFile(f, 100);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), f + ": bigger than 100 bytes");
  Write(f, std::string((1 << 20) + 1, 'x'));
  t = ReadRegularFile(f, 1 << 20);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), f + ": bigger than 1 MiB");
  EXPECT_TRUE(ReadRegularFile(f, (1 << 20) + 1).ok());
}

TEST(ReadFromStart, ReadsAgainFromTheStartOfAKeptDescriptor) {
  testing::TempDir d;
  const std::string f = d.path() + "/m";
  Write(f, "one\ntwo\n");
  const int fd = ::open(f.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  absl::StatusOr<std::string> a = ReadFromStart(fd, 100);
  absl::StatusOr<std::string> b = ReadFromStart(fd, 100);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, "one\ntwo\n");
  EXPECT_EQ(*b, *a);
  absl::StatusOr<std::string> c = ReadFromStart(fd, 4);
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(absl::IsOutOfRange(c.status()));
  EXPECT_THAT(c.status().message(), HasSubstr("more than 4 bytes"));
  ::close(fd);
}

TEST(ReadFromStart, ProcMountinfoReadsWhole) {
  const int fd = ::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  absl::StatusOr<std::string> t = ReadFromStart(fd, 64 << 20);
  ::close(fd);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(*t, HasSubstr(" / / "));  // the root mount's line
}

}  // namespace
}  // namespace libshare

// Log lines cannot be forged or flooded by clients (found by the fuzzing
// and reliability work: a MNT path with a newline forged log lines, and
// every refused MNT logged a line).
#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharemgrd {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(EscapeForLogTest, PrintableTextIsKept) {
  EXPECT_EQ(EscapeForLog("/export/home/a b"), "/export/home/a b");
}

TEST(EscapeForLogTest, NewlineNulAndHighBytesAreEscaped) {
  EXPECT_EQ(EscapeForLog(std::string("/a\nsharemgrd: x\0y\xff", 18)),
            "/a\\nsharemgrd: x\\x00y\\xff");
}

TEST(EscapeForLogTest, BackslashIsDoubledSoEscapesAreUnambiguous) {
  EXPECT_EQ(EscapeForLog("/a\\n"), "/a\\\\n");
}

TEST(EscapeForLogTest, AReasonKeepsTheEscapesItQuotesButNotControlBytes) {
  // A refusal's reason that quotes a path already escaped is not escaped
  // twice; a raw control byte in it still is.
  EXPECT_EQ(EscapeReasonForLog("path \"/x\\ny\\001\": bad\n"),
            "path \"/x\\ny\\001\": bad\\n");
}

TEST(EscapeForLogTest, LongTextIsCutAndSaysItsLength) {
  EXPECT_EQ(EscapeForLog(std::string(1000, 'a'), 4), "aaaa...(1000 bytes)");
}

TEST(LogLineTest, ControlCharactersCannotStartALine) {
  testing::internal::CaptureStderr();
  LogLine("one\ntwo\r");
  std::string out = testing::internal::GetCapturedStderr();
  EXPECT_EQ(out, "sharemgrd: one\\x0atwo\\x0d\n");
}

TEST(LogRateLimiterTest, LinesOverTheQuotaInOneSecondAreDropped) {
  LogRateLimiter limiter("test", 3);
  absl::Time t = absl::FromUnixSeconds(1000);
  testing::internal::CaptureStderr();
  for (int i = 0; i < 10; ++i) limiter.Log("line", t);
  std::string out = testing::internal::GetCapturedStderr();
  EXPECT_EQ(out, "sharemgrd: line\nsharemgrd: line\nsharemgrd: line\n");
  EXPECT_EQ(limiter.suppressed(), 7);
}

TEST(LogRateLimiterTest, NextSecondReportsHowManyWereSuppressed) {
  LogRateLimiter limiter("refused-mount", 1);
  absl::Time t = absl::FromUnixSeconds(1000);
  testing::internal::CaptureStderr();
  limiter.Log("a", t);
  limiter.Log("b", t);
  limiter.Log("c", t);
  limiter.Log("d", t + absl::Seconds(1));
  std::string out = testing::internal::GetCapturedStderr();
  EXPECT_THAT(out, Not(HasSubstr("sharemgrd: b")));
  EXPECT_THAT(out, HasSubstr("sharemgrd: suppressed 2 refused-mount log "
                             "lines\nsharemgrd: d\n"));
  EXPECT_EQ(limiter.suppressed(), 0);
}

}  // namespace
}  // namespace sharemgrd

namespace sharemgrd {
namespace {

std::string ReadFile(const std::string& path) {
  std::string out;
  FILE* f = fopen(path.c_str(), "r");
  if (f == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  fclose(f);
  return out;
}

class LogFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sharemgrd_log_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    (void)SetLogFile("");
    SetLogTarget(LogTarget::kStderr);
    std::string cmd = "rm -rf '" + dir_ + "'";
    (void)!system(cmd.c_str());
  }
  std::string dir_;
};

TEST_F(LogFileTest, LinesGoToTheFileWithTimestampAndPid) {
  const std::string path = dir_ + "/log";
  ASSERT_TRUE(SetLogFile(path).ok());
  SetLogTarget(LogTarget::kFileOnly);
  testing::internal::CaptureStderr();
  LogLine("hello\nforged");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");  // file only
  EXPECT_THAT(ReadFile(path),
              ::testing::MatchesRegex(
                  "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9.]+Z "
                  "sharemgrd\\[[0-9]+\\]: hello\\\\x0aforged\n"));
}

TEST_F(LogFileTest, InTheForegroundLinesGoToStderrToo) {
  const std::string path = dir_ + "/log";
  ASSERT_TRUE(SetLogFile(path).ok());
  testing::internal::CaptureStderr();
  LogLine("both");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "sharemgrd: both\n");
  EXPECT_THAT(ReadFile(path), HasSubstr("]: both\n"));
}

TEST_F(LogFileTest, ReopenFollowsTheNameAfterARotation) {
  const std::string path = dir_ + "/log";
  ASSERT_TRUE(SetLogFile(path).ok());
  SetLogTarget(LogTarget::kFileOnly);
  LogLine("before");
  ASSERT_EQ(rename(path.c_str(), (path + ".1").c_str()), 0);
  ASSERT_TRUE(ReopenLogFile().ok());
  LogLine("after");
  EXPECT_THAT(ReadFile(path + ".1"), HasSubstr("before"));
  EXPECT_THAT(ReadFile(path + ".1"), Not(HasSubstr("after")));
  EXPECT_THAT(ReadFile(path), HasSubstr("after"));
}

TEST_F(LogFileTest, AFileThatCannotBeOpenedIsAnErrorNamingIt) {
  absl::Status s = SetLogFile(dir_ + "/no/such/log");
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr(dir_ + "/no/such/log"));
}

TEST_F(LogFileTest, ASymbolicLinkIsNotFollowed) {
  const std::string target = dir_ + "/target";
  ASSERT_EQ(symlink(target.c_str(), (dir_ + "/link").c_str()), 0);
  EXPECT_FALSE(SetLogFile(dir_ + "/link").ok());
  EXPECT_NE(access(target.c_str(), F_OK), 0);
}

}  // namespace
}  // namespace sharemgrd

// Log lines cannot be forged or flooded by clients (found by the fuzzing
// and reliability work: a MNT path with a newline forged log lines, and
// every refused MNT logged a line).
#include "log.h"

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

#include "output.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharectl {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Text from an older store may hold control characters; printed raw they
// would drive the terminal (clear it, retitle it, hide lines).
libshare::ShareInfo Hostile() {
  libshare::ShareInfo s;
  s.path = "/srv/a\x1b[2J";
  s.group = "g";
  s.resource = "r\a";
  s.description = "desc\x1b]0;owned\x07";
  return s;
}

TEST(OutputEscapingTest, ShowVerbosePrintsNoControlCharacter) {
  libshare::GroupInfo g;
  g.name = "g";
  std::string out = FormatShow({g}, {Hostile()}, /*verbose=*/true);
  EXPECT_THAT(out, Not(HasSubstr("\x1b")));
  EXPECT_THAT(out, Not(HasSubstr("\a")));
  EXPECT_THAT(out, HasSubstr("/srv/a\\x1b[2J"));
  EXPECT_THAT(out, HasSubstr("r\\x07"));
  EXPECT_THAT(out, HasSubstr("\"desc\\x1b]0;owned\\x07\""));
}

TEST(OutputEscapingTest, ShowPrintsPathsEscaped) {
  libshare::GroupInfo g;
  g.name = "g";
  EXPECT_THAT(FormatShow({g}, {Hostile()}, /*verbose=*/false),
              Not(HasSubstr("\x1b")));
}

TEST(OutputEscapingTest, SharetabPrintsNoControlCharacter) {
  libshare::SharetabEntry e;
  e.path = "/srv/a\x1b[2J";
  e.resource = "r\x7f";
  e.description = "d\x1b";
  std::string out = FormatSharetab({e});
  EXPECT_THAT(out, Not(HasSubstr("\x1b")));
  EXPECT_THAT(out, Not(HasSubstr("\x7f")));
  EXPECT_THAT(out, HasSubstr("r\\x7f"));
}

TEST(OutputEscapingTest, PlainTextUnchanged) {
  libshare::GroupInfo g;
  g.name = "g";
  libshare::ShareInfo s;
  s.path = "/srv/plain";
  s.group = "g";
  s.description = "say \"hi\"";
  EXPECT_THAT(FormatShow({g}, {s}, /*verbose=*/true),
              HasSubstr("/srv/plain  -  -  \"say \\\"hi\\\"\""));
}

}  // namespace
}  // namespace sharectl

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
  std::string out =
      FormatShow({g}, {Hostile()}, /*verbose=*/true, /*kernel_mode=*/true);
  EXPECT_THAT(out, Not(HasSubstr("\x1b")));
  EXPECT_THAT(out, Not(HasSubstr("\a")));
  EXPECT_THAT(out, HasSubstr("/srv/a\\x1b[2J"));
  EXPECT_THAT(out, HasSubstr("r\\x07"));
  EXPECT_THAT(out, HasSubstr("\"desc\\x1b]0;owned\\x07\""));
}

TEST(OutputEscapingTest, ShowPrintsPathsEscaped) {
  libshare::GroupInfo g;
  g.name = "g";
  EXPECT_THAT(
      FormatShow({g}, {Hostile()}, /*verbose=*/false, /*kernel_mode=*/true),
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
  EXPECT_THAT(FormatShow({g}, {s}, /*verbose=*/true, /*kernel_mode=*/true),
              HasSubstr("/srv/plain  -  -  \"say \\\"hi\\\"\""));
}

libshare::ShareInfo WithOptions(std::string path, std::string options) {
  libshare::ShareInfo s;
  s.path = std::move(path);
  s.group = "g";
  s.options = options;
  s.effective_options = std::move(options);
  return s;
}

TEST(OpenNotesTest, HostBitsAreNamedAndNotCountedAsOpenToAll) {
  libshare::GroupInfo g;
  g.name = "g";
  g.options = "rw=@10.0.0.1/8";
  libshare::ShareInfo s = WithOptions("/srv/a", "ro,root=@192.168.1.9/24");
  std::string out =
      FormatShow({g}, {s}, /*verbose=*/true, /*kernel_mode=*/true);
  EXPECT_THAT(out, HasSubstr("g nfs=(rw=@10.0.0.1/8) !! @10.0.0.1/8 has host "
                             "bits set: it matches all of @10.0.0.0/8\n"));
  EXPECT_THAT(out, HasSubstr("/srv/a: !! @192.168.1.9/24 has host bits set: "
                             "it matches all of @192.168.1.0/24\n"));
  // The list's note counts shares open to every client, which these are not.
  std::string list = FormatList({g}, {s});
  EXPECT_THAT(list, HasSubstr("!! @10.0.0.1/8 has host bits set"));
  EXPECT_THAT(list, Not(HasSubstr("every client")));
}

TEST(KernelNotesTest, ShowVerboseNamesOptionsTheKernelCannotApply) {
  libshare::GroupInfo g;
  g.name = "g";
  std::string out = FormatShow(
      {g},
      {WithOptions("/srv/a", "rw,log,nosuid"), WithOptions("/srv/b", "ro")},
      /*verbose=*/true, /*kernel_mode=*/true);
  EXPECT_THAT(out, HasSubstr("/srv/a: no effect in kernel mode: log: nfsd "
                             "does not log accesses\n"));
  EXPECT_THAT(out, HasSubstr("/srv/a: no effect in kernel mode: nosuid: "));
  EXPECT_THAT(out, Not(HasSubstr("/srv/b: no effect")));
}

TEST(KernelNotesTest, ShowVerboseHasNoNotesWhenKernelModeIsOff) {
  libshare::GroupInfo g;
  g.name = "g";
  std::string out = FormatShow({g}, {WithOptions("/srv/a", "rw,log,nosuid")},
                               /*verbose=*/true, /*kernel_mode=*/false);
  EXPECT_THAT(out, Not(HasSubstr("no effect")));
  EXPECT_THAT(out, HasSubstr("/srv/a: effective nfs=(rw,log,nosuid)"));
}

TEST(KernelNotesTest, ShowWithoutVerboseHasNoNotes) {
  libshare::GroupInfo g;
  g.name = "g";
  EXPECT_THAT(FormatShow({g}, {WithOptions("/srv/a", "rw,log")},
                         /*verbose=*/false, /*kernel_mode=*/true),
              Not(HasSubstr("no effect")));
}

TEST(KernelNotesTest, ShowJsonListsThemPerShare) {
  libshare::GroupInfo g;
  g.name = "g";
  std::string out = FormatShowJson({g}, {WithOptions("/srv/a", "rw,window=60"),
                                         WithOptions("/srv/b", "ro")});
  EXPECT_THAT(out, HasSubstr("\"kernel_no_effect\":[\"window=: applies to "
                             "AUTH_DH only\"]"));
  EXPECT_THAT(out, HasSubstr("\"kernel_no_effect\":[]"));
}

TEST(JsonShapeTest, ShowJsonAbsentValuesAreNullAndLatin1PathsRoundTrip) {
  libshare::GroupInfo g;
  g.name = "g";
  libshare::ShareInfo s;
  s.path = "/srv/Jos\xe9";
  s.group = "g";
  s.effective_options = "rw";
  std::string out = FormatShowJson({g}, {s});
  EXPECT_THAT(out, HasSubstr("\"path\":\"/srv/Jos\\ufffd\","
                             "\"path_b64\":\"L3Nydi9Kb3Pp\""));
  EXPECT_THAT(out, HasSubstr("\"resource\":null,\"description\":null,"
                             "\"options\":null,\"effective_options\":\"rw\""));
}

TEST(JsonShapeTest, CheckJsonUsesNullForNoDecidingOptionOrEntry) {
  libshare::CheckResult r;
  r.client = "10.1.2.3";
  r.address = "10.1.2.3";
  r.access = "none";
  r.reason = "no share covers /x";
  std::string out = FormatCheckJson(r);
  EXPECT_THAT(out, HasSubstr("\"share\":null,\"option\":null,\"entry\":null"));
}

TEST(StatsTest, SharesAreSplitIntoServedNotServedAndDisabled) {
  libshare::DaemonStats s;
  s.shares = 15000;
  s.shares_served = 14990;
  s.shares_not_served = 4;
  s.shares_disabled = 6;
  EXPECT_THAT(FormatStats(s), HasSubstr("15000 (14990 served, 4 not served, "
                                        "6 disabled)\n"));
  EXPECT_THAT(FormatStatsJson(s),
              HasSubstr("\"shares\":15000,\"shares_served\":14990,"
                        "\"shares_not_served\":4,\"shares_disabled\":6,"));
}

}  // namespace
}  // namespace sharectl

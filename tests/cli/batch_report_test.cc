#include "batch_report.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharectl {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::vector<std::string> Origins(const std::vector<Problem>& ps) {
  std::vector<std::string> out;
  for (const Problem& p : ps) out.push_back(p.origin);
  return out;
}

TEST(SortProblemsTest, ByFileThenLineNumberNotText) {
  std::vector<Problem> ps = {{"b.exports:2", "", "x"},
                             {"a.batch:10", "", "x"},
                             {"a.batch:9", "", "x"},
                             {"sharectl", "create", "x"},
                             {"a.batch:9", "", "y"}};
  SortProblems(&ps);
  EXPECT_THAT(Origins(ps),
              ::testing::ElementsAre("sharectl", "a.batch:9", "a.batch:9",
                                     "a.batch:10", "b.exports:2"));
  EXPECT_EQ(ps[2].message, "y");  // problems of one line keep their order
}

TEST(FormatProblemsTest, SameErrorShownFiveTimesThenCounted) {
  std::vector<Problem> ps;
  for (int i = 1; i <= 8; ++i) {
    ps.push_back({"f:" + std::to_string(i), "add-share", "group x missing"});
  }
  ps.push_back({"f:9", "add-share", "other"});
  EXPECT_EQ(FormatProblems(ps),
            "f:1: add-share: group x missing\n"
            "f:2: add-share: group x missing\n"
            "f:3: add-share: group x missing\n"
            "f:4: add-share: group x missing\n"
            "f:5: add-share: group x missing\n"
            "f:6: ... and 3 more lines with the same error: add-share: group "
            "x missing\n"
            "f:9: add-share: other\n");
}

// The man page's 15,000 homes with their folders missing: one kind, five
// lines and a count, not 15,000 lines (issue 48, item 6).
TEST(FormatProblemsTest, ErrorsOfOneKindAreCountedThoughTheirTextDiffers) {
  std::vector<Problem> ps;
  for (int i = 1; i <= 15000; ++i) {
    ps.push_back(
        {"homes.batch:" + std::to_string(i + 1), "add-share",
         "/export/home/u" + std::to_string(i) + ": no such directory"});
  }
  ps.push_back({"homes.batch:15002", "create", "group homes already exists"});
  const std::string text = FormatProblems(ps, "error", 5, "--all-errors");
  EXPECT_EQ(text,
            "homes.batch:2: add-share: /export/home/u1: no such directory\n"
            "homes.batch:3: add-share: /export/home/u2: no such directory\n"
            "homes.batch:4: add-share: /export/home/u3: no such directory\n"
            "homes.batch:5: add-share: /export/home/u4: no such directory\n"
            "homes.batch:6: add-share: /export/home/u5: no such directory\n"
            "homes.batch:7: ... and 14995 more lines with this kind of error: "
            "add-share: PATH: no such directory; --all-errors lists every "
            "line\n"
            "homes.batch:15002: create: group homes already exists\n");
  // Every line on request.
  const std::string all = FormatProblems(ps, "error", 0, "--all-errors");
  EXPECT_EQ(std::count(all.begin(), all.end(), '\n'), 15001);
  EXPECT_THAT(all, Not(HasSubstr("more lines")));
}

TEST(FormatProblemsTest, KindsAreKeptApartByCommandAndShape) {
  std::vector<Problem> ps;
  for (int i = 1; i <= 7; ++i) {
    ps.push_back({"f:" + std::to_string(i), "add-share",
                  "group g" + std::to_string(i) + " does not exist"});
  }
  for (int i = 8; i <= 14; ++i) {
    ps.push_back({"f:" + std::to_string(i), "move-share",
                  "group g" + std::to_string(i) + " does not exist"});
  }
  const std::string text = FormatProblems(ps);
  EXPECT_THAT(text, HasSubstr("f:6: ... and 2 more lines with this kind of "
                              "error: add-share: group GROUP does not "
                              "exist\n"));
  EXPECT_THAT(text, HasSubstr("f:13: ... and 2 more lines with this kind of "
                              "error: move-share: group GROUP does not "
                              "exist\n"));
  EXPECT_THAT(text, HasSubstr("f:12: move-share: group g12 does not exist\n"));
}

TEST(FormatProblemsTest, OneLineMoreThanShownIsShownNotCounted) {
  std::vector<Problem> ps;
  for (int i = 1; i <= 6; ++i) {
    ps.push_back({"f:" + std::to_string(i), "add-share", "same"});
  }
  const std::string text = FormatProblems(ps);
  EXPECT_THAT(text, HasSubstr("f:6: add-share: same\n"));
  EXPECT_THAT(text, Not(HasSubstr("more lines")));
}

TEST(ErrorKindTest, SetsAsideWhatVariesFromLineToLine) {
  EXPECT_EQ(ErrorKind("/export/home/u1: no such directory"),
            "PATH: no such directory");
  EXPECT_EQ(ErrorKind("/export/my home: not a directory"),
            "PATH: not a directory");
  EXPECT_EQ(ErrorKind("/e/a: already shared (group homes)"),
            "PATH: already shared (group GROUP)");
  EXPECT_EQ(ErrorKind("path \"/srv/link\": a symlink component; its "
                      "canonical form is \"/srv/real\""),
            "path \"...\": a symlink component; its canonical form is "
            "\"...\"");
  EXPECT_EQ(ErrorKind("group g has 3 shares; delete -f removes them"),
            "group GROUP has N shares; delete -f removes them");
  EXPECT_EQ(ErrorKind("/a: path is inside share /a/b"),
            "PATH: path is inside share PATH");
  EXPECT_EQ(ErrorKind("option \"sec=krb5\": unknown"),
            "option \"...\": unknown");
}

TEST(FormatSummaryTest, AppliedRefusedAndDryRun) {
  BatchSummary s;
  s.label = "batch b";
  s.lines = 15001;
  s.ms = 812;
  s.committed = true;
  s.operations = 15001;
  s.generation = 7;
  EXPECT_EQ(FormatSummary(s),
            "sharectl: batch b: 15001 operations applied in 812 ms: 15001 "
            "lines, 0 refused, generation 7\n");
  s.committed = false;
  s.operations = 0;
  s.refused_lines = 14993;
  s.errors = 14993;
  EXPECT_EQ(FormatSummary(s),
            "sharectl: batch b: refused in 812 ms, nothing applied: 15001 "
            "lines, 14993 refused, 14993 errors\n");
  s.dry_run = true;
  s.refused_lines = s.errors = 0;
  s.operations = 15001;
  EXPECT_THAT(FormatSummary(s),
              HasSubstr("dry run passed in 812 ms, nothing changed: 15001 "
                        "lines, 15001 operations would apply"));
}

TEST(FormatSummaryTest, OneLineAndOneOperationAreSingular) {
  BatchSummary s;
  s.label = "batch b";
  s.lines = 1;
  s.ms = 3;
  s.committed = true;
  s.operations = 1;
  s.generation = 7;
  EXPECT_EQ(FormatSummary(s),
            "sharectl: batch b: 1 operation applied in 3 ms: 1 line, 0 "
            "refused, generation 7\n");
  s.committed = false;
  s.dry_run = true;
  EXPECT_EQ(FormatSummary(s),
            "sharectl: batch b: dry run passed in 3 ms, nothing changed: 1 "
            "line, 1 operation would apply\n");
  s.refused_lines = s.errors = 1;
  EXPECT_EQ(FormatSummary(s),
            "sharectl: batch b: dry run refused in 3 ms, nothing changed: 1 "
            "line, 1 refused, 1 error\n");
}

TEST(FormatChangesTest, HeaderPerBatchAndOneLinePerShare) {
  libshare::ChangeList c;
  libshare::ChangeRecord& b = c.batches.emplace_back();
  b.generation = 8;
  b.uid = 1001;
  b.pid = 4242;
  b.origin = "batch x";
  b.operations = 2;
  b.summary = "disable \"g\"";
  b.shares.push_back({libshare::ShareChange::Kind::kChanged, "/e/a", 1, false});
  b.shares.push_back({libshare::ShareChange::Kind::kRemoved, "/e/b", 2, false});
  const std::string text = FormatChanges(c);
  EXPECT_THAT(text, HasSubstr("generation 8 "));
  EXPECT_THAT(text, HasSubstr("uid 1001 pid 4242  batch x  2 operations: "
                              "disable \"g\"\n"));
  EXPECT_THAT(text, HasSubstr("  changed /e/a (inactive)\n"));
  EXPECT_THAT(text, HasSubstr("  removed /e/b\n"));
}

// A batch origin is what the client said: one carrying terminal controls
// (an admin-group member's fake "uid 0" line drawn over the real one) is
// shown escaped, as the log shows it (issue 48, item 13).
TEST(FormatChangesTest, ControlCharactersInTheOriginAndSummaryAreEscaped) {
  libshare::ChangeList c;
  libshare::ChangeRecord& b = c.batches.emplace_back();
  b.generation = 9;
  b.uid = 1001;
  b.pid = 7;
  b.origin = "x\r\x1b[2K\x1b[1Ageneration 9  uid 0 pid 1";
  b.operations = 1;
  b.summary = "create \"g\xc2\x9b\"";
  b.shares.push_back(
      {libshare::ShareChange::Kind::kAdded, "/e/\x1b]0;t\x07", 1, true});
  const std::string text = FormatChanges(c);
  EXPECT_EQ(text.find('\r'), std::string::npos) << text;
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find('\x07'), std::string::npos) << text;
  EXPECT_EQ(text.find("\xc2\x9b"), std::string::npos) << text;  // C1 CSI
  EXPECT_THAT(text, HasSubstr("create \"g\\u009b\""));
  EXPECT_THAT(text, HasSubstr("uid 1001 pid 7  x"));
}

TEST(FormatChangesTest, JsonCarriesTheExactBytesOfANonUtf8Path) {
  libshare::ChangeList c;
  libshare::ChangeRecord& b = c.batches.emplace_back();
  b.generation = 3;
  b.origin = "add-share";
  b.shares.push_back(
      {libshare::ShareChange::Kind::kAdded, "/e/j\xf6rg", 7, true});
  const std::string json = FormatChangesJson(c);
  // base64 of "/e/j\xf6rg"
  EXPECT_THAT(json, HasSubstr("\"path_b64\":\"L2UvavZyZw==\""));
  EXPECT_THAT(FormatChangesJson(libshare::ChangeList{}),
              Not(HasSubstr("_b64")));
}

// Batches 2, 3, 4 at 2026-12-07 13:40:05 UTC, each adding `shares[i]`
// shares.
libshare::ChangeList Batches(const std::vector<int>& shares) {
  libshare::ChangeList c;
  for (std::size_t i = 0; i < shares.size(); ++i) {
    libshare::ChangeRecord& b = c.batches.emplace_back();
    b.generation = 2 + i;
    b.time = 1796650805;
    b.origin = "batch b" + std::to_string(i);
    b.operations = shares[i];
    b.summary = std::to_string(shares[i]) + " add-share";
    for (int j = 0; j < shares[i]; ++j) {
      b.shares.push_back({libshare::ShareChange::Kind::kAdded,
                          "/e/" + std::to_string(i) + "/" + std::to_string(j),
                          static_cast<uint64_t>(j), true});
    }
  }
  return c;
}

int Lines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

TEST(FormatChangesTest, TimesAreIso8601InUtcInTextAndJson) {
  const libshare::ChangeList c = Batches({1});
  EXPECT_THAT(FormatChanges(c),
              HasSubstr("generation 2  2026-12-07T13:40:05Z  uid 0"));
  const std::string json = FormatChangesJson(c);
  EXPECT_THAT(json, HasSubstr("\"time\":\"2026-12-07T13:40:05Z\","
                              "\"time_unix\":1796650805,"));
}

TEST(FormatChangesTest, OneOperationIsSingular) {
  EXPECT_THAT(FormatChanges(Batches({1})),
              HasSubstr("  1 operation: 1 add-share\n"));
}

TEST(FormatChangesTest, LimitCutsABigBatchAndSaysWhatIsLeftOut) {
  const libshare::ChangeList c = Batches({3, 2000, 5});
  ChangesView view;
  view.limit = 10;
  const std::string text = FormatChanges(c, view);
  // 10 lines listed, the cut batch's count, the last line.
  EXPECT_EQ(Lines(text), 12) << text;
  EXPECT_THAT(text, HasSubstr("  added /e/1/4\n  ... and 1995 more shares\n"));
  EXPECT_THAT(text, Not(HasSubstr("generation 4 ")));
  EXPECT_THAT(text,
              HasSubstr("... 2001 more lines not shown: 1995 more shares of "
                        "generation 3 and 1 more batch, up to generation 4; "
                        "--limit 0 shows all, --summary one line per batch, "
                        "--since 2 starts after the last batch shown whole\n"));
  view.limit = 0;
  EXPECT_EQ(Lines(FormatChanges(c, view)), 3 + 2008);
}

TEST(FormatChangesTest, WithinTheLimitNothingIsSaidAboutIt) {
  ChangesView view;
  view.limit = 5;
  const std::string text = FormatChanges(Batches({1, 2}), view);
  EXPECT_EQ(Lines(text), 5) << text;
  EXPECT_THAT(text, Not(HasSubstr("more")));
}

TEST(FormatChangesTest, SummaryIsOneLinePerBatchWithShareCounts) {
  libshare::ChangeList c = Batches({3, 2000});
  c.batches[0].shares[1].kind = libshare::ShareChange::Kind::kRemoved;
  ChangesView view;
  view.summary = true;
  const std::string text = FormatChanges(c, view);
  EXPECT_EQ(Lines(text), 2) << text;
  EXPECT_THAT(text, HasSubstr("3 operations: 3 add-share; shares: 2 added, "
                              "1 removed\n"));
  EXPECT_THAT(text, HasSubstr("2000 operations: 2000 add-share; shares: 2000 "
                              "added\n"));
  view.limit = 1;
  EXPECT_THAT(FormatChanges(c, view),
              HasSubstr("... 1 more line not shown: 1 more batch, up to "
                        "generation 3; --limit 0 shows all, --since 2 starts "
                        "after the last batch shown whole\n"));
}

TEST(FormatChangesTest, JsonLimitCountsWhatIsLeftOut) {
  const libshare::ChangeList c = Batches({3, 2000, 5});
  EXPECT_THAT(FormatChangesJson(c), HasSubstr("\"more\":null}"));
  ChangesView view;
  view.limit = 10;
  const std::string json = FormatChangesJson(c, view);
  EXPECT_THAT(json, HasSubstr("\"limit\":10,"));
  EXPECT_THAT(json, HasSubstr("\"shares_omitted\":1995}"));
  EXPECT_THAT(json, HasSubstr("\"more\":{\"batches\":1,\"shares\":2000}}"));
  EXPECT_THAT(json, Not(HasSubstr("\"generation\":4,")));
  view.summary = true;
  view.limit = 0;
  EXPECT_THAT(FormatChangesJson(c, view),
              HasSubstr("\"share_counts\":{\"added\":5,\"removed\":0,"
                        "\"changed\":0},\"shares\":null,"));
}

}  // namespace
}  // namespace sharectl

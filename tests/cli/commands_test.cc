#include "commands.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "libshare/path.h"
#include "libshare/shell_words.h"

namespace sharectl {
namespace {

using libshare::Operation;
using ::testing::HasSubstr;

absl::StatusOr<ChangeCommand> Parse(std::vector<std::string> words) {
  return ParseChangeCommand(words);
}

TEST(ParseChangeCommandTest, AddShareTakesEveryField) {
  auto c = Parse({"add-share", "-o", "rw=@10.0.0.0/8", "-d", "a b", "-r", "res",
                  "-s", "/export//home/", "homes"});
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->ops.size(), 1u);
  const Operation& op = c->ops[0];
  EXPECT_EQ(op.type, Operation::Type::kAddShare);
  EXPECT_EQ(op.path, "/export/home");  // normalized
  EXPECT_EQ(op.group, "homes");
  EXPECT_EQ(op.options, "rw=@10.0.0.0/8");
  EXPECT_EQ(op.description, "a b");
  EXPECT_EQ(op.resource, "res");
}

TEST(ParseChangeCommandTest, AttachedAndLongFormValuesAreAccepted) {
  auto c = Parse({"add-share", "-oro", "-s/a", "g"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->ops[0].options, "ro");
  EXPECT_EQ(c->ops[0].path, "/a");
}

TEST(ParseChangeCommandTest, EnableWithGroupsMakesOneOperationEach) {
  auto c = Parse({"enable", "a", "b"});
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->ops.size(), 2u);
  EXPECT_EQ(c->ops[1].type, Operation::Type::kEnableGroup);
  EXPECT_EQ(c->ops[1].group, "b");
  EXPECT_FALSE(c->all);
}

TEST(ParseChangeCommandTest, DisableAllIsLeftForTheDaemonsGroups) {
  auto c = Parse({"disable", "-a"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->all);
  EXPECT_EQ(c->all_type, Operation::Type::kDisableGroup);
  EXPECT_TRUE(c->ops.empty());
}

TEST(ParseChangeCommandTest, EnableNeedsExactlyOneOfAllAndGroups) {
  EXPECT_EQ(Parse({"enable"}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Parse({"enable", "-a", "g"}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ParseChangeCommandTest, DeleteForceAndRemoveWithoutGroup) {
  auto d = Parse({"delete", "-f", "g"});
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->ops[0].force);
  auto r = Parse({"remove-share", "-s", "/a"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->ops[0].type, Operation::Type::kRemoveShare);
  EXPECT_EQ(r->ops[0].group, "");
}

TEST(ParseChangeCommandTest, EmptyOptionsAreRefusedSayingWhatToWrite) {
  for (const std::vector<std::string>& words :
       std::vector<std::vector<std::string>>{{"set", "-o", "", "g"},
                                             {"create", "-o", "", "g"}}) {
    auto c = Parse(words);
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(c.status().message(),
                HasSubstr("read-write to every client; write the access you "
                          "mean: -o rw"));
  }
  for (const std::vector<std::string>& words :
       std::vector<std::vector<std::string>>{
           {"set", "-o", "", "-s", "/a", "g"},
           {"add-share", "-o", "", "-s", "/a", "g"},
           {"set-share", "-o", "", "-s", "/a"}}) {
    auto c = Parse(words);
    ASSERT_FALSE(c.ok());
    EXPECT_THAT(c.status().message(), HasSubstr("leave -o out to inherit"));
  }
}

TEST(ParseChangeCommandTest, SetShareChangesOnlyTheFieldsGiven) {
  auto c = Parse({"set-share", "-d", "", "-r", "res", "-s", "/a/", "g"});
  ASSERT_TRUE(c.ok()) << c.status();
  const Operation& op = c->ops[0];
  EXPECT_EQ(op.type, Operation::Type::kModifyShare);
  EXPECT_EQ(op.path, "/a");
  EXPECT_EQ(op.group, "g");
  EXPECT_FALSE(op.set_options);
  EXPECT_TRUE(op.set_description);
  EXPECT_TRUE(op.set_resource);
  EXPECT_EQ(op.resource, "res");
  EXPECT_EQ(libshare::JoinShellWords(OperationWords(op)),
            "set-share -d '' -r res -s /a g");
  auto none = Parse({"set-share", "-s", "/a"});
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ParseChangeCommandTest, UnsetNamesOneProperty) {
  auto c = Parse({"unset", "-p", "nosuid", "-s", "/a", "g"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->ops[0].type, Operation::Type::kUnsetOption);
  EXPECT_EQ(c->ops[0].options, "nosuid");
  EXPECT_EQ(libshare::JoinShellWords(OperationWords(c->ops[0])),
            "unset -p nosuid -s /a g");
  auto all = Parse({"unset", "-p", "all", "g"});
  EXPECT_THAT(all.status().message(), HasSubstr("-p all needs -s"));
}

TEST(ParseChangeCommandTest, UsageErrorsNameTheCulprit) {
  auto unknown = Parse({"add-share", "-x", "-s", "/a", "g"});
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.status().message(), HasSubstr("\"-x\""));
  auto missing = Parse({"add-share", "g"});
  EXPECT_THAT(missing.status().message(), HasSubstr("-s is required"));
  auto novalue = Parse({"add-share", "g", "-s"});
  EXPECT_THAT(novalue.status().message(), HasSubstr("\"-s\" needs a value"));
  auto extra = Parse({"create", "a", "b"});
  EXPECT_THAT(extra.status().message(), HasSubstr("unexpected argument \"b\""));
  auto cmd = Parse({"frobnicate"});
  EXPECT_THAT(cmd.status().message(), HasSubstr("unknown command"));
}

TEST(ParseChangeCommandTest, ReadOnlyCommandsAreNotChanges) {
  EXPECT_THAT(Parse({"list"}).status().message(),
              HasSubstr("not a changing command"));
}

TEST(ParseChangeCommandTest, BadPathIsARefusalNotAUsageError) {
  auto c = Parse({"add-share", "-s", "relative/path", "g"});
  EXPECT_EQ(c.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(c.status().message(), HasSubstr("relative/path"));
}

TEST(ParseChangeCommandTest, PathIsWhatNormalizePathMakesOfIt) {
  // Valid paths are taken as they are, the others normalized or refused:
  // either way as NormalizePath says.
  const std::vector<std::string> paths = {"/",
                                          "/a",
                                          "/export/home/u1",
                                          "/a/",
                                          "//a//b//",
                                          "/a/./b",
                                          "/a/../b",
                                          "/a/.",
                                          "/.hidden",
                                          "/a..b/c.",
                                          "a/b",
                                          "",
                                          "/a\tb",
                                          "/a\nb",
                                          std::string("/a\0b", 4),
                                          "/\x7f",
                                          "/" + std::string(1023, 'x'),
                                          "/" + std::string(1024, 'x'),
                                          "/" + std::string(1024, 'x') + "/"};
  for (const std::string& path : paths) {
    auto c = Parse({"add-share", "-s", path, "g"});
    absl::StatusOr<std::string> want = libshare::NormalizePath(path);
    if (want.ok()) {
      ASSERT_TRUE(c.ok()) << path << ": " << c.status();
      EXPECT_EQ(c->ops[0].path, *want);
    } else {
      ASSERT_FALSE(c.ok()) << path;
      EXPECT_EQ(c.status().code(), absl::StatusCode::kFailedPrecondition);
      EXPECT_EQ(c.status().message(), want.status().message());
    }
  }
}

TEST(OperationWordsTest, ParseGivesBackTheSameOperation) {
  std::vector<Operation> ops(10);
  ops[0] = {Operation::Type::kCreateGroup, "g", "", "ro", "", "", false};
  ops[1] = {Operation::Type::kDeleteGroup, "g", "", "", "", "", true};
  ops[2] = {Operation::Type::kEnableGroup, "g", "", "", "", "", false};
  ops[3] = {Operation::Type::kDisableGroup, "g", "", "", "", "", false};
  ops[4] = {Operation::Type::kAddShare,
            "g",
            "/a b",
            "rw",
            "it's \"x\"",
            "res",
            false};
  ops[5] = {Operation::Type::kRemoveShare, "", "/a", "", "", "", false};
  ops[6] = {Operation::Type::kMoveShare, "h", "/a", "", "", "", false};
  ops[7] = {Operation::Type::kSetOptions, "g", "/a", "ro", "", "", false};
  ops[8] = {Operation::Type::kModifyShare, "", "/a", "rw", "", "r", false};
  ops[8].set_options = ops[8].set_description = ops[8].set_resource = true;
  ops[9] = {Operation::Type::kUnsetOption, "g", "", "nosuid", "", "", false};
  for (const Operation& op : ops) {
    auto c = ParseChangeCommand(OperationWords(op));
    ASSERT_TRUE(c.ok()) << c.status();
    ASSERT_EQ(c->ops.size(), 1u);
    const Operation& back = c->ops[0];
    EXPECT_EQ(back.type, op.type);
    EXPECT_EQ(back.group, op.group);
    EXPECT_EQ(back.path, op.path);
    EXPECT_EQ(back.options, op.options);
    EXPECT_EQ(back.description, op.description);
    EXPECT_EQ(back.resource, op.resource);
    EXPECT_EQ(back.force, op.force);
    EXPECT_EQ(back.set_options, op.set_options);
    EXPECT_EQ(back.set_description, op.set_description);
    EXPECT_EQ(back.set_resource, op.set_resource);
  }
}

TEST(OperationWordsTest, ShareBackToGroupOptionsIsWrittenAsUnsetAll) {
  Operation op{Operation::Type::kSetOptions, "g", "/a", "", "", "", false};
  EXPECT_EQ(libshare::JoinShellWords(OperationWords(op)),
            "unset -p all -s /a g");
}

TEST(HelpTest, GlobalHelpListsEveryCommandAndOption) {
  const std::string help = GlobalHelp();
  for (const auto& c : Commands()) {
    EXPECT_THAT(help, HasSubstr(std::string(c.name))) << c.name;
    for (const auto& o : c.options) {
      EXPECT_THAT(help, HasSubstr(std::string(o.name))) << o.name;
    }
  }
  for (const auto& o : GlobalOptions()) {
    EXPECT_THAT(help, HasSubstr(std::string(o.name)));
  }
}

// Found by fuzzing (tests/fuzz/regressions/batch): the client refuses
// group names the daemon would refuse, before connecting.
TEST(ParseChangeCommandTest, EmptyGroupNameIsRefusedForCreateAndAddShare) {
  auto c = Parse({"create", ""});
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("group name"));
  auto a = Parse({"add-share", "-s", "/a", ""});
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(std::string(a.status().message()), HasSubstr("empty"));
}

TEST(ParseChangeCommandTest, GroupNamedLikeAnOptionIsRefused) {
  auto c = Parse({"create", "--", "--help"});
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("\"--help\""));
}

TEST(ParseChangeCommandTest, RemoveShareStillTakesNoGroup) {
  auto c = Parse({"remove-share", "-s", "/a"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->ops[0].group, "");
}

TEST(OperationWordsTest, GroupStartingWithDashIsWrittenAfterDoubleDash) {
  Operation op;
  op.type = Operation::Type::kCreateGroup;
  op.group = "--help";
  EXPECT_EQ(OperationWords(op),
            (std::vector<std::string>{"create", "--", "--help"}));
}

}  // namespace
}  // namespace sharectl

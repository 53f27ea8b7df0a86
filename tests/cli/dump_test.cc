// sharectl dump: the batch it prints parses back into the operations that
// recreate the table, whatever bytes the table holds.
#include "dump.h"

#include "commands.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "libshare/shell_words.h"

namespace sharectl {
namespace {

using libshare::GroupInfo;
using libshare::Operation;
using libshare::ShareInfo;
using ::testing::StartsWith;

ShareInfo Share(std::string path, std::string group) {
  ShareInfo s;
  s.path = std::move(path);
  s.group = std::move(group);
  return s;
}

// The operations a batch file means, as `sharectl batch` reads it.
std::vector<Operation> Parse(const std::string& text) {
  std::vector<Operation> ops;
  for (const libshare::SplitLine& l : libshare::SplitShellLines(text)) {
    EXPECT_EQ(l.error, "") << "line " << l.line;
    absl::StatusOr<ChangeCommand> c = ParseChangeCommand(l.words);
    EXPECT_TRUE(c.ok()) << "line " << l.line << ": " << c.status();
    if (c.ok()) ops.insert(ops.end(), c->ops.begin(), c->ops.end());
  }
  return ops;
}

TEST(DumpTest, EveryFieldAndByteReadsBack) {
  ShareInfo s = Share("/export/Jos\xe9 's \"x\"", "homes");
  s.options = "rw=@10.0.0.0/8,root=admin";
  s.description = "# not a comment \\ 'q' \"d\" $HOME `x`";
  s.resource = "res";
  const std::string text = FormatDump({{"homes", false, "ro", 1}}, {s});
  const std::vector<Operation> ops = Parse(text);
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0].type, Operation::Type::kCreateGroup);
  EXPECT_EQ(ops[0].options, "ro");
  EXPECT_EQ(ops[1].type, Operation::Type::kAddShare);
  EXPECT_EQ(ops[1].path, s.path);
  EXPECT_EQ(ops[1].options, s.options);
  EXPECT_EQ(ops[1].description, s.description);
  EXPECT_EQ(ops[1].resource, s.resource);
  EXPECT_EQ(ops[1].group, "homes");
  EXPECT_EQ(ops[2].type, Operation::Type::kDisableGroup);
}

TEST(DumpTest, OrderDependsOnlyOnContent) {
  const std::vector<GroupInfo> groups = {{"b", true, "", 1},
                                         {"a", true, "", 2}};
  const std::string one = FormatDump(
      groups, {Share("/z", "a"), Share("/y", "b"), Share("/x", "a")});
  const std::string two =
      FormatDump({groups[1], groups[0]},
                 {Share("/x", "a"), Share("/z", "a"), Share("/y", "b")});
  EXPECT_EQ(one, two);
  EXPECT_EQ(one,
            "# sharectl dump: 2 groups, 3 shares\n"
            "create a\nadd-share -s /x a\nadd-share -s /z a\n"
            "create b\nadd-share -s /y b\n");
}

// A followed exports file's group is made by the daemon that follows the
// file: a dump that recreated it as an ordinary group could not be
// applied on a server following the same file ("group exports already
// exists"). It is left out, with a comment naming the file.
TEST(DumpTest, ManagedGroupsAreLeftOutWithAComment) {
  GroupInfo followed{"exports-zfs", true, "", 2};
  followed.managed_by = "/etc/exports.d/zfs.exports";
  const std::string text =
      FormatDump({{"homes", true, "rw", 1}, followed},
                 {Share("/h/a", "homes"), Share("/tank/a", "exports-zfs"),
                  Share("/tank/b", "exports-zfs")});
  EXPECT_EQ(text,
            "# sharectl dump: 1 group, 1 share\n"
            "# group exports-zfs (2 shares) is made by sharemgrd "
            "--follow-exports from /etc/exports.d/zfs.exports: not dumped; "
            "follow that file to recreate it\n"
            "create -o rw homes\nadd-share -s /h/a homes\n");
  const std::vector<Operation> ops = Parse(text);
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].group, "homes");
}

TEST(DumpTest, EmptyTableIsOnlyTheComment) {
  EXPECT_THAT(FormatDump({}, {}), StartsWith("# sharectl dump: 0 groups"));
  EXPECT_TRUE(Parse(FormatDump({}, {})).empty());
}

}  // namespace
}  // namespace sharectl

// ParseBatchFile, the batch file read straight into a batch (words as
// views, operations appended in place), against the line-by-line path it
// replaced: SplitShellLines' copied words, then ParseChangeCommand of each
// line and sharectl's own -n and -a rules.
#include "batch_file.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "commands.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "libshare/shell_words.h"

namespace sharectl {
namespace {

using libshare::Operation;

// What `sharectl batch` made of a file before ParseBatchFile.
BatchFile LineByLine(const std::string& text, const std::string& where) {
  BatchFile out;
  for (const libshare::SplitLine& l : libshare::SplitShellLines(text)) {
    ++out.commands;
    const std::string origin = absl::StrCat(where, ":", l.line);
    const std::string what = l.words.empty() ? "batch" : l.words[0];
    if (!l.error.empty()) {
      out.bad.push_back({origin, what, l.error});
      continue;
    }
    absl::StatusOr<ChangeCommand> cmd = ParseChangeCommand(l.words);
    if (!cmd.ok()) {
      out.bad.push_back({origin, what, std::string(cmd.status().message())});
      continue;
    }
    if (cmd->dry_run) {
      out.bad.push_back(
          {origin, what,
           "-n applies to the whole batch: sharectl batch -n FILE"});
      continue;
    }
    if (cmd->all) {
      out.all.emplace_back(out.ops.size(), cmd->all_type);
      out.ops.emplace_back();
      out.op_lines.push_back(l.line);
      continue;
    }
    for (const Operation& op : cmd->ops) {
      out.ops.push_back(op);
      out.op_lines.push_back(l.line);
    }
  }
  return out;
}

void ExpectSame(const BatchFile& got, const BatchFile& want,
                const std::string& text) {
  SCOPED_TRACE(text);
  EXPECT_EQ(got.commands, want.commands);
  EXPECT_EQ(got.op_lines, want.op_lines);
  EXPECT_EQ(got.all, want.all);
  ASSERT_EQ(got.ops.size(), want.ops.size());
  for (size_t i = 0; i < got.ops.size(); ++i) {
    const Operation& a = got.ops[i];
    const Operation& b = want.ops[i];
    EXPECT_EQ(a.type, b.type) << i;
    EXPECT_EQ(a.group, b.group) << i;
    EXPECT_EQ(a.path, b.path) << i;
    EXPECT_EQ(a.options, b.options) << i;
    EXPECT_EQ(a.description, b.description) << i;
    EXPECT_EQ(a.resource, b.resource) << i;
    EXPECT_EQ(a.force, b.force) << i;
    EXPECT_EQ(a.set_options, b.set_options) << i;
    EXPECT_EQ(a.set_description, b.set_description) << i;
    EXPECT_EQ(a.set_resource, b.set_resource) << i;
  }
  ASSERT_EQ(got.bad.size(), want.bad.size());
  for (size_t i = 0; i < got.bad.size(); ++i) {
    EXPECT_EQ(got.bad[i].origin, want.bad[i].origin) << i;
    EXPECT_EQ(got.bad[i].command, want.bad[i].command) << i;
    EXPECT_EQ(got.bad[i].message, want.bad[i].message) << i;
    EXPECT_EQ(got.bad[i].index, want.bad[i].index) << i;
  }
}

TEST(ParseBatchFileTest, SameAsLineByLineForTrickyLines) {
  const std::vector<std::string> texts = {
      // Plain lines, blanks of every kind, CRLF, comments, no final newline.
      "create g1\n"
      "add-share\t-s  /export/a\tg1\r\n"
      "# a comment\n\n   \t\r\n"
      "add-share -s /export/b g1 # trailing comment\n"
      "add-share -d a#b -s /export/c g1",
      // Quotes, escapes, empty words, adjacent parts.
      "create -o 'rw=@10.0.0.0/8,root=admin' g2\n"
      "add-share -d \"it's \\\"x\\\" \\$HOME\" -r '' -s '/export/d e' g2\n"
      "add-share -d it\\'s\\ fine -s /export/f g2\n"
      "create \"\"g\"3\"''\n"
      "set-share -d '' -s /export/d\\ e\n",
      // Joined lines: between words, inside a word, inside double quotes.
      "add-share \\\n  -s /export/g \\\n  g1\n"
      "add-sh\\\nare -s /export/h g1\n"
      "set-share -d \"two \\\nlines\" -s /export/h\n"
      "create last\n",
      // Paths that NormalizePath changes or refuses.
      "add-share -s /export//i/ g1\n"
      "add-share -s / g1\n"
      "add-share -s relative g1\n"
      "add-share -s /export/../j g1\n"
      "add-share -s '' g1\n"
      "move-share -s/export/k g2\n",
      // Several operations or none per line: enable lists, -a, -n.
      "enable g1 g2 g3\n"
      "disable -a\n"
      "create -n g4\n"
      "enable --dry-run g1 g2\n"
      "enable -a g1\n"
      "create g5\n"
      "enable -a\n",
      // Refusals of every kind, between good lines.
      "create ok1\n"
      "frobnicate -x\n"
      "list\n"
      "add-share -x -s /export/l g1\n"
      "add-share g1\n"
      "remove-share /export/m\n"
      "add-share -o '' -s /export/n g1\n"
      "create -o '' g6\n"
      "unset -p all g1\n"
      "set -s /export/o g1\n"
      "set-share -s /export/o\n"
      "create a b\n"
      "create ''\n"
      "create -- --help\n"
      "create --help\n"
      "delete -f=yes g1\n"
      "create ok2\n",
      // Splitting errors: the line is refused, the next one still read.
      "add-share -d 'oops -s /export/p g1\n"
      "create after1\n"
      "x \"abc\n"
      "create after2\n"
      "add-share -s /export/q g1 \\",
  };
  for (const std::string& text : texts) {
    ExpectSame(ParseBatchFile(text, "b.txt"), LineByLine(text, "b.txt"), text);
  }
}

TEST(ParseBatchFileTest, ManyQuotedWordsOnOneLineKeepTheirText) {
  // Each quoted word is a copy the reader keeps while the line is parsed:
  // adding one must not move the others under their views.
  std::string text = "create";
  for (int i = 0; i < 100; ++i) absl::StrAppend(&text, " 'w", i, "'");
  text += "\ncreate 'g'\n";
  const BatchFile got = ParseBatchFile(text, "<stdin>");
  ExpectSame(got, LineByLine(text, "<stdin>"), text);
  ASSERT_EQ(got.bad.size(), 1u);
  EXPECT_THAT(got.bad[0].message,
              ::testing::StartsWith("unexpected argument \"w1\""));
  ASSERT_EQ(got.ops.size(), 1u);
  EXPECT_EQ(got.ops[0].group, "g");
}

TEST(ParseBatchFileTest, EmptyAndCommentOnlyFilesHaveNoCommands) {
  for (const std::string text : {"", "\n", "# x\n  # y\n\\\n"}) {
    const BatchFile got = ParseBatchFile(text, "b");
    EXPECT_EQ(got.commands, 0u) << text;
    EXPECT_TRUE(got.ops.empty());
    EXPECT_TRUE(got.bad.empty());
  }
}

}  // namespace
}  // namespace sharectl

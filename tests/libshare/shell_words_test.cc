#include "libshare/shell_words.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace libshare {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(SplitShellLinesTest, PlainWordsSplitOnBlanks) {
  auto lines = SplitShellLines("add-share  -s /a\tg\n");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].line, 1);
  EXPECT_THAT(lines[0].words, ElementsAre("add-share", "-s", "/a", "g"));
}

TEST(SplitShellLinesTest, SingleQuotesKeepEverythingLiterally) {
  auto lines = SplitShellLines(R"(x 'a "b" \c $d')");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0].words, ElementsAre("x", R"(a "b" \c $d)"));
}

TEST(SplitShellLinesTest, DoubleQuotesHonourBackslashEscapes) {
  auto lines = SplitShellLines(R"(x "say \"hi\" \\ \$HOME \n")");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0].words, ElementsAre("x", R"(say "hi" \ $HOME \n)"));
}

TEST(SplitShellLinesTest, BackslashOutsideQuotesEscapesOneCharacter) {
  auto lines = SplitShellLines(R"(a\ b \'c\#)");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0].words, ElementsAre("a b", "'c#"));
}

TEST(SplitShellLinesTest, AdjacentQuotedPartsFormOneWord) {
  auto lines = SplitShellLines(R"(it'"s'" ok")");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0].words, ElementsAre(R"(it"s ok)"));
}

TEST(SplitShellLinesTest, EmptyQuotesAreAWord) {
  auto lines = SplitShellLines(R"(set -o '' -s /a g)");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0].words, ElementsAre("set", "-o", "", "-s", "/a", "g"));
}

TEST(SplitShellLinesTest, CommentsAndBlankLinesProduceNothing) {
  auto lines = SplitShellLines("# header\n\n   \ncreate g # trailing\n#x\n");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].line, 4);
  EXPECT_THAT(lines[0].words, ElementsAre("create", "g"));
}

TEST(SplitShellLinesTest, HashInsideAWordIsNotAComment) {
  auto lines = SplitShellLines("add-share -d a#b -s /a g");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0].words,
              ElementsAre("add-share", "-d", "a#b", "-s", "/a", "g"));
}

TEST(SplitShellLinesTest, PlainRunsEndAtEveryBlankQuoteAndBackslash) {
  // Runs of plain characters are taken whole: each character that ends a
  // run (blank, CR, quote, backslash, end of text) still does its part.
  auto lines = SplitShellLines("ab#c'd e'f\"g\"h\\ i\tj\r\nk#\\\nl m#");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_THAT(lines[0].words, ElementsAre("ab#cd efgh i", "j"));
  EXPECT_EQ(lines[1].line, 2);
  EXPECT_THAT(lines[1].words, ElementsAre("k#l", "m#"));
}

TEST(SplitShellLinesTest, TrailingBackslashJoinsLinesAndKeepsStartLine) {
  auto lines =
      SplitShellLines("create a\nadd-share \\\n  -s /x \\\n  g\ncreate b\n");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1].line, 2);
  EXPECT_THAT(lines[1].words, ElementsAre("add-share", "-s", "/x", "g"));
  EXPECT_EQ(lines[2].line, 5);
}

TEST(SplitShellLinesTest, UnterminatedQuoteIsAnErrorOnItsLineOnly) {
  auto lines =
      SplitShellLines("create a\nadd-share -d 'oops -s /x g\ncreate b\n");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1].line, 2);
  EXPECT_EQ(lines[1].error, "unterminated single quote");
  EXPECT_THAT(lines[2].words, ElementsAre("create", "b"));
  EXPECT_EQ(lines[2].line, 3);
  auto dq = SplitShellLines("x \"abc\n");
  ASSERT_EQ(dq.size(), 1u);
  EXPECT_EQ(dq[0].error, "unterminated double quote");
}

TEST(SplitShellLinesTest, CrLfLineEndsAreAccepted) {
  auto lines = SplitShellLines("create a\r\ncreate b\r\n");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_THAT(lines[1].words, ElementsAre("create", "b"));
}

TEST(ShellLineReaderTest, PlainWordsAreViewsOfTheText) {
  const std::string text = "add-share -s /export/a g\ncreate g\n";
  ShellLineReader reader(text);
  ShellLineView l;
  ASSERT_TRUE(reader.Next(&l));
  EXPECT_THAT(l.words, ElementsAre("add-share", "-s", "/export/a", "g"));
  for (std::string_view w : l.words) {
    EXPECT_GE(w.data(), text.data()) << w;
    EXPECT_LE(w.data() + w.size(), text.data() + text.size()) << w;
  }
  ASSERT_TRUE(reader.Next(&l));
  EXPECT_EQ(l.line, 2);
  EXPECT_THAT(l.words, ElementsAre("create", "g"));
  EXPECT_FALSE(reader.Next(&l));
}

TEST(ShellLineReaderTest, WordsUnlikeTheirTextAreCopiedUnquoted) {
  // A quote, an escape or a joined line anywhere in a word: the word is
  // not a view of the text but its unquoted copy.
  const std::string text = "a'b' c\\d ''e ab\\\ncd \"\" f\n";
  ShellLineReader reader(text);
  ShellLineView l;
  ASSERT_TRUE(reader.Next(&l));
  EXPECT_THAT(l.words, ElementsAre("ab", "cd", "e", "abcd", "", "f"));
  EXPECT_TRUE(l.error.empty());
  EXPECT_FALSE(reader.Next(&l));
}

TEST(ShellLineReaderTest, ErrorKeepsTheWordsBeforeIt) {
  ShellLineReader reader("add-share -d 'oops\ncreate b");
  ShellLineView l;
  ASSERT_TRUE(reader.Next(&l));
  EXPECT_EQ(l.error, "unterminated single quote");
  EXPECT_THAT(l.words, ElementsAre("add-share", "-d"));
  ASSERT_TRUE(reader.Next(&l));
  EXPECT_EQ(l.line, 2);
  EXPECT_TRUE(l.error.empty());
  EXPECT_THAT(l.words, ElementsAre("create", "b"));
}

TEST(QuoteShellWordTest, SafeWordsStayBare) {
  EXPECT_EQ(QuoteShellWord("/export/home"), "/export/home");
  EXPECT_EQ(QuoteShellWord("rw=@10.0.0.0/8:.example.com"),
            "rw=@10.0.0.0/8:.example.com");
}

TEST(QuoteShellWordTest, OtherWordsAreSingleQuoted) {
  EXPECT_EQ(QuoteShellWord(""), "''");
  EXPECT_EQ(QuoteShellWord("a b"), "'a b'");
  EXPECT_EQ(QuoteShellWord("it's"), R"('it'\''s')");
}

TEST(QuoteShellWordTest, QuotedWordsSplitBackToThemselves) {
  const std::vector<std::string> words = {
      "add-share", "-d", R"(Alice's "home" \ $x #1)", "", "-s", "/a b", "g"};
  auto lines = SplitShellLines(JoinShellWords(words));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0].error, IsEmpty());
  EXPECT_EQ(lines[0].words, words);
}

}  // namespace
}  // namespace libshare

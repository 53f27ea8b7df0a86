#include "libshare/spelling.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "libshare/options.h"

namespace libshare {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Optional;

const std::vector<std::string_view> kCommands = {
    "create",     "delete", "add-share", "remove-share",
    "move-share", "list",   "show",      "stats"};

TEST(SpellingTest, OneLetterMissingSuggestsTheCommand) {
  EXPECT_THAT(ClosestName("add-shar", kCommands),
              Optional(std::string_view("add-share")));
  EXPECT_THAT(ClosestName("lst", kCommands),
              Optional(std::string_view("list")));
}

TEST(SpellingTest, SwappedLettersAndCaseAreTypos) {
  EXPECT_THAT(ClosestName("craete", kCommands),
              Optional(std::string_view("create")));
  EXPECT_THAT(ClosestName("SHOW", kCommands),
              Optional(std::string_view("show")));
}

TEST(SpellingTest, UniquePrefixSuggestsTheCommand) {
  EXPECT_THAT(ClosestName("remove", kCommands),
              Optional(std::string_view("remove-share")));
  EXPECT_EQ(ClosestName("sta", {"stats", "status"}), std::nullopt);
}

TEST(SpellingTest, DistantOrShortNamesGetNoSuggestion) {
  EXPECT_EQ(ClosestName("frobnicate", kCommands), std::nullopt);
  EXPECT_EQ(ClosestName("-x", {"-o", "-s"}), std::nullopt);
  EXPECT_EQ(ClosestName("rx", {"rw", "ro"}), std::nullopt);
  EXPECT_EQ(ClosestName("", kCommands), std::nullopt);
}

TEST(SpellingTest, DidYouMeanAppendsTheSuffix) {
  EXPECT_EQ(DidYouMean("rooot", {"root", "ro"}, "="),
            "; did you mean \"root=\"?");
  EXPECT_EQ(DidYouMean("zzzzzz", {"root", "ro"}), "");
}

TEST(SpellingTest, UnknownShareOptionSuggestsTheKnownOne) {
  absl::StatusOr<ShareOptions> o = ParseOptions("rw,rooot=adminhost");
  ASSERT_FALSE(o.ok());
  EXPECT_THAT(o.status().message(),
              HasSubstr("unknown option; did you mean \"root=\"?"));
  o = ParseOptions("nosiud");
  ASSERT_FALSE(o.ok());
  EXPECT_THAT(o.status().message(), HasSubstr("did you mean \"nosuid\"?"));
  o = ParseOptions("frobnicate");
  ASSERT_FALSE(o.ok());
  EXPECT_THAT(o.status().message(), Not(HasSubstr("did you mean")));
}

}  // namespace
}  // namespace libshare

#include "libshare/path.h"

#include <random>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace libshare {
namespace {

using ::testing::HasSubstr;

std::string Error(std::string_view path) {
  absl::Status st = ValidatePath(path);
  EXPECT_FALSE(st.ok()) << path;
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  return std::string(st.message());
}

TEST(ValidatePath, AcceptsCanonicalPaths) {
  EXPECT_TRUE(ValidatePath("/").ok());
  EXPECT_TRUE(ValidatePath("/export").ok());
  EXPECT_TRUE(ValidatePath("/export/home/u1").ok());
  EXPECT_TRUE(ValidatePath("/a/.hidden/..dots/x.y").ok());
  EXPECT_TRUE(ValidatePath("/with space/and:colon,comma").ok());
}

// Issue 48, item 14: U+009B is CSI to a terminal, as ESC [ is.
TEST(ValidatePath, C1ControlCharactersAreRefused) {
  EXPECT_THAT(Error("/a\xc2\x9b" "2Jb"),
              HasSubstr("contains the C1 control character U+009B"));
  EXPECT_THAT(Error("/x/\xc2\x80"),
              HasSubstr("C1 control character U+0080"));
  // Latin-1 bytes and other UTF-8 letters stay valid.
  EXPECT_TRUE(ValidatePath("/home/Jos\xe9").ok());
  EXPECT_TRUE(ValidatePath("/home/\xc2\xa9-\xc3\xa9t\xc3\xa9").ok());
  EXPECT_TRUE(ValidatePath("/home/\x9b").ok());
}

TEST(ValidatePath, RelativePathIsRefused) {
  EXPECT_EQ(Error("a/b"), "path \"a/b\": must be absolute");
}

TEST(ValidatePath, EmptyPathIsRefused) {
  EXPECT_EQ(Error(""), "path \"\": must be absolute");
}

TEST(ValidatePath, EmptyComponentIsRefused) {
  EXPECT_EQ(Error("/a//b"), "path \"/a//b\": empty component (\"//\")");
  EXPECT_THAT(Error("//a"), HasSubstr("empty component"));
}

TEST(ValidatePath, DotComponentIsRefused) {
  EXPECT_EQ(Error("/a/."), "path \"/a/.\": \".\" component not allowed");
  EXPECT_THAT(Error("/./a"), HasSubstr("\".\" component not allowed"));
}

TEST(ValidatePath, DotDotComponentIsRefused) {
  EXPECT_EQ(Error("/a/../b"), "path \"/a/../b\": \"..\" component not allowed");
  EXPECT_THAT(Error("/.."), HasSubstr("\"..\" component not allowed"));
}

TEST(ValidatePath, TrailingSlashIsRefused) {
  EXPECT_EQ(Error("/a/"), "path \"/a/\": trailing \"/\"");
}

TEST(ValidatePath, PathOfExactlyMaxLengthIsAccepted) {
  std::string p = "/" + std::string(kMaxPathLength - 1, 'x');
  ASSERT_EQ(p.size(), 1024u);
  EXPECT_TRUE(ValidatePath(p).ok());
}

TEST(ValidatePath, PathOverMaxLengthIsRefusedNamingTheLimit) {
  std::string p = "/" + std::string(kMaxPathLength, 'x');
  std::string msg = Error(p);
  EXPECT_THAT(msg, HasSubstr("longer than 1024 bytes"));
  EXPECT_THAT(msg, HasSubstr("path \"/xxx"));
  EXPECT_LT(msg.size(), 200u);  // the message quotes a prefix only
}

TEST(ValidatePath, NulIsRefused) {
  std::string p("/a\0b", 4);
  EXPECT_EQ(Error(p), "path \"/a\\000b\": contains a NUL byte");
}

TEST(ValidatePath, NewlineIsRefused) {
  EXPECT_EQ(Error("/a\nb"), "path \"/a\\nb\": contains a newline");
}

TEST(ValidatePath, TabIsRefused) {
  EXPECT_EQ(Error("/a\tb"), "path \"/a\\tb\": contains a tab");
}

TEST(ValidatePath, TerminalEscapeIsRefused) {
  EXPECT_EQ(Error("/a\x1b[2Jb"),
            "path \"/a\\033[2Jb\": contains a control character");
  EXPECT_THAT(Error("/a\x7f"), HasSubstr("control character"));
}

// Every string of up to 6 bytes over the characters the rules look at:
// ValidatePath accepts exactly what the rules, applied one by one, accept.
// The rules of a share path, one at a time, for the tests below to hold
// ValidatePath (which checks them eight bytes at a time) against.
bool ValidByRules(const std::string& p) {
  if (p.empty() || p[0] != '/' || p.size() > kMaxPathLength) return false;
  for (char c : p) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  }
  if (p == "/") return true;
  std::size_t start = 1;
  for (;;) {
    std::size_t end = p.find('/', start);
    const std::string comp =
        p.substr(start, end == std::string::npos ? end : end - start);
    if (comp.empty() || comp == "." || comp == "..") return false;
    if (end == std::string::npos) return true;
    start = end + 1;
  }
}

TEST(ValidatePath, AcceptsExactlyWhatEachRuleAllows) {
  const std::string alphabet("/.a\t\0\x7f", 6);
  auto by_rules = ValidByRules;
  std::vector<std::string> layer = {""};
  int checked = 0;
  for (int len = 0; len <= 6; ++len) {
    std::vector<std::string> next;
    for (const std::string& p : layer) {
      EXPECT_EQ(ValidatePath(p).ok(), by_rules(p)) << absl::CEscape(p);
      ++checked;
      for (char c : alphabet) next.push_back(p + c);
    }
    layer = std::move(next);
  }
  EXPECT_EQ(checked, 1 + 6 + 36 + 216 + 1296 + 7776 + 46656);
}

// Longer paths, where ValidatePath's words are full and a rule breaks at
// any byte of one, or across two: random strings over bytes each rule
// looks at (every byte below 0x20 and from 0x7f up counted by a few),
// and each valid one with one byte changed.
TEST(ValidatePath, LongPathsAgreeWithTheRulesAtEveryByte) {
  const std::string alphabet("/./.a\t\0\x1f \x7f\x80\xff~", 14);
  std::mt19937 rng(12);
  int valid = 0;
  for (int k = 0; k < 200000; ++k) {
    std::string p = "/";
    const std::size_t len = rng() % 40;
    for (std::size_t i = 0; i < len; ++i) {
      // Mostly plain bytes, so that valid paths are common too.
      p += rng() % 3 ? "abc/"[rng() % 4] : alphabet[rng() % alphabet.size()];
    }
    const bool want = ValidByRules(p);
    valid += want;
    ASSERT_EQ(ValidatePath(p).ok(), want) << absl::CEscape(p);
    if (want && p.size() > 1) {
      std::string q = p;
      q[1 + rng() % (q.size() - 1)] = alphabet[rng() % alphabet.size()];
      ASSERT_EQ(ValidatePath(q).ok(), ValidByRules(q)) << absl::CEscape(q);
    }
  }
  EXPECT_GT(valid, 1000);  // both answers well represented
  EXPECT_LT(valid, 199000);
  // At the length limit and one past it.
  std::string at_limit = "/" + std::string(kMaxPathLength - 1, 'a');
  EXPECT_TRUE(ValidatePath(at_limit).ok());
  EXPECT_FALSE(ValidatePath(at_limit + "a").ok());
  at_limit[kMaxPathLength - 1] = '\x7f';
  EXPECT_FALSE(ValidatePath(at_limit).ok());
}

TEST(NormalizePath, CollapsesSlashesAndDropsTrailingSlash) {
  EXPECT_EQ(*NormalizePath("/export//home/"), "/export/home");
  EXPECT_EQ(*NormalizePath("///a///b///"), "/a/b");
  EXPECT_EQ(*NormalizePath("/"), "/");
  EXPECT_EQ(*NormalizePath("//"), "/");
  EXPECT_EQ(*NormalizePath("/a"), "/a");
  EXPECT_EQ(*NormalizePath("/export/home/"), "/export/home");
  EXPECT_EQ(*NormalizePath("/export/home"), "/export/home");
}

TEST(NormalizePath, DotComponentsAreStillRefusedNamingTheInput) {
  absl::StatusOr<std::string> p = NormalizePath("/a/./b/");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(),
            "path \"/a/./b/\": \".\" component not allowed");
  EXPECT_FALSE(NormalizePath("/a/../b").ok());
}

TEST(NormalizePath, RelativeAndEmptyAreRefused) {
  EXPECT_FALSE(NormalizePath("a//b").ok());
  EXPECT_FALSE(NormalizePath("").ok());
}

TEST(NormalizePath, LengthIsCheckedAfterCollapsing) {
  std::string p = "//" + std::string(kMaxPathLength - 1, 'x');
  EXPECT_TRUE(NormalizePath(p).ok());
  EXPECT_FALSE(NormalizePath(p + "y").ok());
}

TEST(NormalizePath, ResultAlwaysPassesValidatePath) {
  for (const char* in : {"/", "//", "/a//b/", "/x/y/z", "////q////"}) {
    absl::StatusOr<std::string> p = NormalizePath(in);
    ASSERT_TRUE(p.ok()) << in;
    EXPECT_TRUE(ValidatePath(*p).ok()) << *p;
  }
}

TEST(ValidateGroupName, AcceptsLettersDigitsUnderscoreDash) {
  EXPECT_TRUE(ValidateGroupName("a").ok());
  EXPECT_TRUE(ValidateGroupName("homes").ok());
  EXPECT_TRUE(ValidateGroupName("Proj_2-x").ok());
  EXPECT_TRUE(ValidateGroupName("a" + std::string(99, '9')).ok());
}

TEST(ValidateGroupName, EmptyIsRefused) {
  EXPECT_EQ(ValidateGroupName("").message(), "group name \"\": empty");
}

TEST(ValidateGroupName, MustStartWithALetter) {
  EXPECT_EQ(ValidateGroupName("1abc").message(),
            "group name \"1abc\": must start with a letter");
  EXPECT_FALSE(ValidateGroupName("_a").ok());
  EXPECT_FALSE(ValidateGroupName("-a").ok());
}

TEST(ValidateGroupName, OtherCharactersAreRefused) {
  EXPECT_THAT(ValidateGroupName("a b").message(),
              HasSubstr("character \" \" not allowed"));
  EXPECT_FALSE(ValidateGroupName("a.b").ok());
  EXPECT_FALSE(ValidateGroupName("a/b").ok());
  EXPECT_FALSE(ValidateGroupName("a\nb").ok());
}

TEST(ValidateGroupName, OverHundredCharactersIsRefused) {
  std::string name = "a" + std::string(100, 'b');
  EXPECT_THAT(ValidateGroupName(name).message(),
              HasSubstr("longer than 100 characters"));
}

TEST(ParentPath, GivesTheEnclosingPath) {
  EXPECT_EQ(ParentPath("/a/b"), "/a");
  EXPECT_EQ(ParentPath("/a/b/c"), "/a/b");
  EXPECT_EQ(ParentPath("/a"), "/");
  EXPECT_EQ(ParentPath("/"), "");
}

TEST(ParentPath, WalkingUpFromAnyPathEndsAtRoot) {
  std::string_view p = "/export/home/u1/sub";
  int steps = 0;
  while (p != "/") {
    p = ParentPath(p);
    ++steps;
  }
  EXPECT_EQ(steps, 4);
}

}  // namespace
}  // namespace libshare

// libshare::Text (text.h): the one-word string of a batch operation's
// fields, at the lengths where it changes how it keeps its bytes.
#include "libshare/text.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include "libshare/batch.h"

namespace libshare {
namespace {

TEST(TextTest, IsOneWordAndAnOperationIsSmall) {
  EXPECT_EQ(sizeof(Text), 8u);
  // Five texts, the flags, and the identity: 64 bytes, not 208.
  EXPECT_LE(sizeof(Operation), 64u);
}

TEST(TextTest, KeepsEveryLengthAroundTheInlineLimit) {
  for (std::size_t n = 0; n <= 40; ++n) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s.push_back(static_cast<char>('a' + i % 26));
    const Text t(s);
    EXPECT_EQ(t.size(), n) << n;
    EXPECT_EQ(t.empty(), n == 0) << n;
    EXPECT_EQ(t.view(), s) << n;
    EXPECT_EQ(std::string(t.c_str()), s) << n;  // NUL-terminated
    EXPECT_EQ(t.c_str()[n], '\0') << n;
    EXPECT_EQ(t.str(), s) << n;
  }
}

TEST(TextTest, KeepsNulBytesAndHighBytes) {
  const std::string s("a\0b\xff", 4);
  const Text t(s);
  EXPECT_EQ(t.size(), 4u);
  EXPECT_EQ(t.view(), s);
  const std::string l("/export/caf\xe9\0/long-enough-for-the-heap", 38);
  EXPECT_EQ(Text(l).view(), l);
}

TEST(TextTest, CopiesMovesAndAssigns) {
  Text a("/export/home/user0001");  // on the heap
  Text b(a);
  EXPECT_EQ(b, a);
  EXPECT_NE(b.data(), a.data());
  Text c(std::move(a));
  EXPECT_EQ(c, "/export/home/user0001");
  EXPECT_TRUE(a.empty());  // NOLINT: moved-from is empty
  b = "rw";                // heap to inline
  EXPECT_EQ(b, "rw");
  b = std::string("sec=krb5:krb5i,rw=@10.0.0.0/8");  // inline to heap
  EXPECT_EQ(b, "sec=krb5:krb5i,rw=@10.0.0.0/8");
  b = b;  // self
  EXPECT_EQ(b, "sec=krb5:krb5i,rw=@10.0.0.0/8");
  b = std::string_view(b).substr(4);  // from a view of itself
  EXPECT_EQ(b, "krb5:krb5i,rw=@10.0.0.0/8");
  Text small("g01");
  small = std::string_view(small).substr(1);  // inline, from itself
  EXPECT_EQ(small, "01");
  b.swap(small);
  EXPECT_EQ(b, "01");
  EXPECT_EQ(small, "krb5:krb5i,rw=@10.0.0.0/8");
  b.clear();
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b, "");
}

TEST(TextTest, ComparesWithEveryKindOfString) {
  const Text t("homes");
  const std::string s("homes");
  const std::string_view v("homes");
  EXPECT_TRUE(t == "homes" && "homes" == t);
  EXPECT_TRUE(t == s && s == t);
  EXPECT_TRUE(t == v && v == t);
  EXPECT_TRUE(t != "home" && "home" != t);
  EXPECT_TRUE(Text("a") < Text("b"));
  std::ostringstream out;
  out << t;
  EXPECT_EQ(out.str(), "homes");
}

}  // namespace
}  // namespace libshare

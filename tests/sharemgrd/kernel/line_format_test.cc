#include "kernel/line_format.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharemgrd::kernel {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(LineWriterTest, EscapesSpaceTabNewlineBackslashAsOctal) {
  struct Row {
    std::string text, want;
  } rows[] = {
      {"/export/a", "/export/a\n"},
      {"a b", "a\\040b\n"},
      {"a\tb", "a\\011b\n"},
      {"a\nb", "a\\012b\n"},
      {"a\\b", "a\\134b\n"},
      {"\xc3\xa9", "\xc3\xa9\n"},  // other bytes pass as they are
  };
  for (const Row& r : rows) {
    LineWriter w;
    w.Text(r.text);
    EXPECT_EQ(std::move(w).Finish(), r.want) << r.text;
  }
}

TEST(LineWriterTest, HexIsLowerCaseAfterBackslashX) {
  LineWriter w;
  w.Hex(std::string("\x00\xab\x10\xff", 4));
  EXPECT_EQ(std::move(w).Finish(), "\\x00ab10ff\n");
}

TEST(LineWriterTest, FieldsAreSpaceSeparatedAndLineEndsInNewline) {
  LineWriter w;
  w.Text("nfsd");
  w.Int(-2);
  w.Uint(4294967295u);
  EXPECT_EQ(std::move(w).Finish(), "nfsd -2 4294967295\n");
}

TEST(SplitLineTest, DecodesWhatTheWriterEncodes) {
  const std::vector<std::string> texts = {"a b",    "x\\y",  "tab\there",
                                          "nl\nin", "\\x41", "\\0123"};
  for (const std::string& t : texts) {
    LineWriter w;
    w.Text(t);
    w.Hex(t);
    auto f = SplitLine(std::move(w).Finish());
    ASSERT_TRUE(f.ok()) << f.status();
    EXPECT_THAT(*f, ElementsAre(t, t));
  }
}

TEST(SplitLineTest, ReadsAsTheKernelsQwordGet) {
  struct Row {
    std::string line;
    std::vector<std::string> want;
  } rows[] = {
      {"a  b\n", {"a", "b"}},       // runs of spaces
      {"  a\n", {"a"}},             // leading spaces
      {"\n", {}},                   // nothing
      {"a\\40b\n", {"a\\40b"}},     // two digits: literal
      {"a\\400b\n", {"a\\400b"}},   // first digit over 3: literal
      {"a\\101\n", {"aA"}},         // octal
      {"\\xAbCd\n", {"\xab\xcd"}},  // either case of hex
      {"a\\x41\n", {"a\\x41"}},     // \x only opens a field
  };
  for (const Row& r : rows) {
    auto f = SplitLine(r.line);
    ASSERT_TRUE(f.ok()) << r.line << ": " << f.status();
    EXPECT_EQ(*f, r.want) << r.line;
  }
}

TEST(SplitLineTest, RefusesBrokenLines) {
  for (const std::string line :
       {"no newline", "two\nlines\n", "\\x4\n", "\\x41g\n", "\\x\n"}) {
    EXPECT_FALSE(SplitLine(line).ok()) << line;
  }
}

TEST(ParseIpUpcallTest, ReadsClassAndAddressOfBothFamilies) {
  auto v4 = ParseIpUpcall("nfsd 10.1.2.3\n");
  ASSERT_TRUE(v4.ok()) << v4.status();
  EXPECT_EQ(v4->cls, "nfsd");
  EXPECT_EQ(v4->address_text, "10.1.2.3");
  EXPECT_EQ(v4->address.ToString(), "10.1.2.3");
  // The kernel prints IPv6 with %pI6: eight full groups.
  auto v6 = ParseIpUpcall("nfsd 2001:0db8:0000:0000:0000:0000:0000:0001\n");
  ASSERT_TRUE(v6.ok()) << v6.status();
  EXPECT_EQ(v6->address.ToString(), "2001:db8::1");
}

TEST(ParseIpUpcallTest, RefusesWhatTheKernelNeverSends) {
  for (const std::string line :
       {"nfsd\n", "nfsd 10.1.2.3 x\n", "nfsd host\n", "nfsd 10.1.2\n"}) {
    EXPECT_FALSE(ParseIpUpcall(line).ok()) << line;
  }
}

TEST(ParseGidUpcallTest, ReadsUid) {
  auto u = ParseGidUpcall("1000\n");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->uid, 1000u);
  EXPECT_FALSE(ParseGidUpcall("-1\n").ok());
  EXPECT_FALSE(ParseGidUpcall("4294967296\n").ok());
  EXPECT_FALSE(ParseGidUpcall("1 2\n").ok());
}

TEST(ParseFhUpcallTest, ChecksFsidLengthPerType) {
  struct Row {
    int type;
    int length;
  } rows[] = {{0, 8}, {1, 4}, {2, 12}, {3, 8},
              {4, 8}, {5, 8}, {6, 16}, {7, 24}};
  for (const Row& r : rows) {
    LineWriter w;
    w.Text("$10.1.2.3");
    w.Int(r.type);
    w.Hex(std::string(r.length, '\x5a'));
    auto u = ParseFhUpcall(std::move(w).Finish());
    ASSERT_TRUE(u.ok()) << r.type << ": " << u.status();
    EXPECT_EQ(u->domain, "$10.1.2.3");
    EXPECT_EQ(u->fsid_type, r.type);
    EXPECT_EQ(u->fsid, std::string(r.length, '\x5a'));

    LineWriter bad;
    bad.Text("$10.1.2.3");
    bad.Int(r.type);
    bad.Hex(std::string(r.length + 1, '\x5a'));
    EXPECT_FALSE(ParseFhUpcall(std::move(bad).Finish()).ok()) << r.type;
  }
  EXPECT_THAT(ParseFhUpcall("d 8 \\x0000000000000000\n").status().message(),
              HasSubstr("unknown fsid type"));
}

TEST(ParseExportUpcallTest, DecodesEscapedPath) {
  auto u = ParseExportUpcall("$10.1.2.3 /export/my\\040dir\n");
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->domain, "$10.1.2.3");
  EXPECT_EQ(u->path, "/export/my dir");
  EXPECT_FALSE(ParseExportUpcall("$10.1.2.3\n").ok());
  EXPECT_FALSE(ParseExportUpcall("$10.1.2.3 /a\\000b\n").ok());
}

TEST(DowncallTest, IpPositiveAndNegative) {
  EXPECT_EQ(IpDowncall("nfsd", "10.1.2.3", 1700000000, "$10.1.2.3"),
            "nfsd 10.1.2.3 1700000000 $10.1.2.3\n");
  EXPECT_EQ(IpDowncall("nfsd", "10.1.2.3", 1700000000, std::nullopt),
            "nfsd 10.1.2.3 1700000000\n");
}

TEST(DowncallTest, GidListsCountThenGroups) {
  EXPECT_EQ(GidDowncall(1000, 5, {100, 4294967294u}),
            "1000 5 2 100 4294967294\n");
  EXPECT_EQ(GidDowncall(1000, 5, {}), "1000 5 0\n");
}

TEST(DowncallTest, FhPositiveAndNegative) {
  EXPECT_EQ(FhDowncall("$h", 1, std::string(4, '\0'), 9, "/"),
            "$h 1 \\x00000000 9 /\n");
  EXPECT_EQ(FhDowncall("$h", 1, std::string(4, '\0'), 9, std::nullopt),
            "$h 1 \\x00000000 9\n");
}

TEST(DowncallTest, ExportWithSecinfoAndUuid) {
  ExportEntry e;
  e.flags = 0x425;
  e.anonuid = 65534;
  e.anongid = 65534;
  e.secinfo = {{1, 0x425}, {390003, 0x421}};
  std::array<uint8_t, 16> u{};
  u[0] = 0x12;
  u[15] = 0xef;
  e.uuid = u;
  EXPECT_EQ(ExportDowncall("$h", "/a b", 77, e),
            "$h /a\\040b 77 1061 65534 65534 0 secinfo 2 1 1061 390003 1057 "
            "uuid \\x120000000000000000000000000000ef\n");
  EXPECT_EQ(ExportDowncall("$h", "/a", 77, std::nullopt), "$h /a 77\n");
}

}  // namespace
}  // namespace sharemgrd::kernel

#include "libshare/import.h"

#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "libshare/options.h"

namespace libshare {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// path -> options
std::map<std::string, std::string> Options(const ImportPlan& plan) {
  std::map<std::string, std::string> out;
  for (const auto& op : plan.ops) out[op.path.str()] = op.options.str();
  return out;
}

std::string Problems(const ImportPlan& plan) {
  std::string out;
  for (const auto& p : plan.problems) {
    out += p.where + ": " + p.message + (p.unsupported ? " [u]" : "") + "\n";
  }
  return out;
}

constexpr char kExports[] = R"(# /etc/exports: the access control list for NFS
/export/home     10.0.0.0/8(rw,sync,no_subtree_check) *.lab.example.com(ro)
/export/scratch  *(rw,no_root_squash,async)
/export/proj     @engineers(rw) 192.168.1.0/255.255.255.0(ro,no_root_squash) \
                 admin.example.com(rw,no_root_squash)   # builders too
"/export/with space"  host1(rw)
/export/anon     -anonuid=65534,ro host2 host3(rw)
/export/world
/export/home     backup(ro)
/export/sec      *(sec=krb5:krb5i,rw)
/export/v6       fe80::/10(rw) 2001:db8::1(ro)
)";

TEST(ImportExportsTest, RealisticFileMapsEveryPathToShareNfsOptions) {
  ImportPlan plan = ImportExports({{"/etc/exports", kExports}}, "imported");
  EXPECT_THAT(plan.problems, IsEmpty()) << Problems(plan);
  auto opts = Options(plan);
  // backup is a host: rpc.mountd tries it before the network, so a backup
  // host inside 10/8 stays ro.
  EXPECT_EQ(opts["/export/home"],
            "rw=-backup:@10.0.0.0/8,ro=backup:.lab.example.com");
  EXPECT_EQ(opts["/export/scratch"], "rw,root=*");
  EXPECT_EQ(opts["/export/proj"],
            "rw=admin.example.com:-@192.168.1.0/24:engineers,"
            "ro=@192.168.1.0/24,root=admin.example.com:@192.168.1.0/24");
  EXPECT_EQ(opts["/export/with space"], "rw=host1");
  // anonuid=65534 is the default both sides; host2 and host3 may be one
  // address under two names, so host2 is denied in rw=.
  EXPECT_EQ(opts["/export/anon"], "rw=-host2:host3,ro=host2");
  EXPECT_EQ(opts["/export/world"], "ro");
  EXPECT_EQ(opts["/export/sec"], "sec=krb5:krb5i,rw");
  EXPECT_EQ(opts["/export/v6"], "rw=@[fe80::]/10,ro=@[2001:db8::1]/128");
  ASSERT_EQ(plan.ops.size(), 8u);
  for (const auto& op : plan.ops) {
    EXPECT_EQ(op.group, "imported");
    EXPECT_EQ(op.type, libshare::Operation::Type::kAddShare);
  }
}

TEST(ImportExportsTest, EveryProducedOptionStringParses) {
  ImportPlan plan = ImportExports({{"/etc/exports", kExports}}, "imported");
  for (const auto& op : plan.ops) {
    auto parsed = libshare::ParseOptions(op.options);
    EXPECT_TRUE(parsed.ok())
        << op.path << ": " << op.options << ": " << parsed.status();
  }
}

TEST(ImportExportsTest, OriginIsTheFirstLineOfThePath) {
  ImportPlan plan = ImportExports({{"/etc/exports", kExports}}, "g");
  ASSERT_EQ(plan.origins.size(), plan.ops.size());
  EXPECT_EQ(plan.ops[0].path, "/export/home");
  EXPECT_EQ(plan.origins[0], "/etc/exports:2");
  EXPECT_EQ(plan.ops[2].path, "/export/proj");
  EXPECT_EQ(plan.origins[2], "/etc/exports:4");
  EXPECT_EQ(plan.ops[3].path, "/export/with space");
  EXPECT_EQ(plan.origins[3], "/etc/exports:6");  // after a continuation
}

TEST(ImportExportsTest, WildcardStarWithRwAndReadOnlyHostGivesRwRoList) {
  ImportPlan plan = ImportExports({{"e", "/x *(rw) ws1(ro) ws2(rw)\n"}}, "g");
  EXPECT_THAT(plan.problems, IsEmpty()) << Problems(plan);
  EXPECT_EQ(Options(plan)["/x"], "rw,ro=ws1");
}

TEST(ImportExportsTest, TrailingDefaultsWithNoClientAfterThemExportToEveryone) {
  // getexportent() reaches the end of the line with default options and
  // exports to "*" with them: host1 keeps its (default) ro, everyone ro.
  ImportPlan plan =
      ImportExports({{"e", "/q host1(rw) -ro\n/p -ro\n/r -rw host2\n"}}, "g");
  ASSERT_THAT(plan.problems, IsEmpty()) << Problems(plan);
  std::map<std::string, std::string> o = Options(plan);
  EXPECT_EQ(o["/q"], "ro,rw=host1");
  EXPECT_EQ(o["/p"], "ro");
  EXPECT_EQ(o["/r"], "rw=host2");  // defaults a client followed: no "*"
  ASSERT_EQ(plan.warnings.size(), 1u);
  EXPECT_EQ(plan.warnings[0].where, "e:1");
  EXPECT_THAT(plan.warnings[0].message,
              HasSubstr("\"-ro\" at the end of the line, with no client "
                        "after it, exports the path to every client"));
}

TEST(ImportExportsTest, UnknownOptionGetsTheClosestKnownName) {
  ImportPlan plan =
      ImportExports({{"e", "/q *(rw,no_root_sqash,anonuidd=5)\n"}}, "g");
  EXPECT_THAT(Problems(plan),
              HasSubstr("option \"no_root_sqash\": unknown exports option; "
                        "did you mean \"no_root_squash\"?"));
  EXPECT_THAT(Problems(plan),
              HasSubstr("option \"anonuidd=5\": unknown exports option; "
                        "did you mean \"anonuid=\"?"));
}

TEST(ImportExportsTest, OptionWithoutEquivalentIsReportedPerLine) {
  ImportPlan plan =
      ImportExports({{"/etc/exports",
                      "/a host(rw)\n\n/b h1(rw,crossmnt) h2(crossmnt)\n"
                      "/c *(insecure)\n"}},
                    "g");
  ASSERT_EQ(plan.problems.size(), 2u) << Problems(plan);
  EXPECT_EQ(plan.problems[0].where, "/etc/exports:3");
  EXPECT_EQ(plan.problems[0].message,
            "option \"crossmnt\" has no share_nfs equivalent");
  EXPECT_TRUE(plan.problems[0].unsupported);
  EXPECT_EQ(plan.problems[1].where, "/etc/exports:4");
  EXPECT_THAT(plan.problems[1].message, HasSubstr("\"insecure\""));
  EXPECT_TRUE(plan.problems[1].unsupported);
  // The shares are still planned, for --skip-unsupported.
  EXPECT_EQ(Options(plan)["/b"], "rw=h1,ro=h2");
}

// OpenZFS's zfs.exports line: mountpoint on every client becomes the share
// option; crossmnt is dropped (narrows only).
TEST(ImportExportsTest, OpenZfsLineGivesMountpointShare) {
  ImportPlan plan = ImportExports(
      {{"zfs.exports",
        "# !!! DO NOT EDIT THIS FILE MANUALLY !!!\n\n"
        "/tank/a *(sec=sys,rw,no_subtree_check,mountpoint,crossmnt)\n"
        "/tank/b h1(sec=sys,rw,no_subtree_check,mp) h2(ro,mp)\n"}},
      "g");
  ASSERT_EQ(plan.problems.size(), 1u) << Problems(plan);
  EXPECT_THAT(plan.problems[0].message, HasSubstr("\"crossmnt\""));
  EXPECT_TRUE(plan.problems[0].unsupported);
  EXPECT_EQ(Options(plan)["/tank/a"], "rw,mountpoint");
  EXPECT_EQ(Options(plan)["/tank/b"], "rw=h1,ro=h2,mountpoint");
}

// fsid= and uuid= decide the kernel's file handles: dropping them gives
// mounted clients ESTALE, so they are not dropped silently.
TEST(ImportExportsTest, FsidIsUnsupportedAndSaysClientsMustRemount) {
  ImportPlan plan = ImportExports({{"f", "/a *(rw,fsid=17)\n"}}, "g");
  ASSERT_EQ(plan.problems.size(), 1u) << Problems(plan);
  EXPECT_EQ(plan.problems[0].where, "f:1");
  EXPECT_TRUE(plan.problems[0].unsupported);
  EXPECT_THAT(plan.problems[0].message,
              HasSubstr("option \"fsid=17\" has no share_nfs equivalent"));
  EXPECT_THAT(plan.problems[0].message, HasSubstr("must remount"));
  EXPECT_THAT(plan.problems[0].message, Not(HasSubstr("NFSv4 root")));
  // Still planned, for --skip-unsupported.
  EXPECT_EQ(Options(plan)["/a"], "rw");
}

// uuid= is recorded as the share's file-system identity, folded as
// rpc.mountd folds it, so the kernel mode answers the same handles.
TEST(ImportExportsTest, UuidIsRecordedAsTheSharesIdentity) {
  ImportPlan plan = ImportExports(
      {{"f", "/a *(rw,uuid=8c9a3e3a:1c4d4b1e:9f0e2a7b:5d6c8e01)\n"
             "/b *(rw)\n"}},
      "g");
  ASSERT_TRUE(plan.problems.empty()) << Problems(plan);
  ASSERT_EQ(plan.ops.size(), 2u);
  EXPECT_EQ(plan.ops[0].fs_identity, "uuid:8c9a3e3a1c4d4b1e9f0e2a7b5d6c8e01");
  EXPECT_EQ(plan.ops[1].fs_identity, "");
}

TEST(ImportExportsTest, UuidsThatDifferBetweenClientsAreRefused) {
  ImportPlan plan = ImportExports(
      {{"f", "/a 10.0.0.1(rw,uuid=1111-2222) 10.0.0.2(rw,uuid=3333-4444)\n"}},
      "g");
  ASSERT_EQ(plan.problems.size(), 1u) << Problems(plan);
  EXPECT_FALSE(plan.problems[0].unsupported);
  EXPECT_THAT(plan.problems[0].message, HasSubstr("different uuid="));
  EXPECT_TRUE(plan.ops.empty());
}

TEST(ImportExportsTest, UuidForSomeClientsOnlyIsSkippableAndRecorded) {
  ImportPlan plan = ImportExports(
      {{"f", "/a 10.0.0.1(rw,uuid=1111-2222) 10.0.0.2(rw)\n"}}, "g");
  ASSERT_EQ(plan.problems.size(), 1u) << Problems(plan);
  EXPECT_TRUE(plan.problems[0].unsupported);
  EXPECT_THAT(plan.problems[0].message, HasSubstr("some clients only"));
  ASSERT_EQ(plan.ops.size(), 1u);
  EXPECT_EQ(plan.ops[0].fs_identity, "uuid:11112222000000000000000000000000");
}

TEST(ImportExportsTest, FsidNumberIsUnsupportedAndSaysClientsMustRemount) {
  ImportPlan plan = ImportExports({{"f", "/a *(rw,fsid=7)\n"}}, "g");
  ASSERT_EQ(plan.problems.size(), 1u) << Problems(plan);
  EXPECT_TRUE(plan.problems[0].unsupported);
  EXPECT_THAT(plan.problems[0].message, HasSubstr("\"fsid=7\""));
  EXPECT_THAT(plan.problems[0].message, HasSubstr("must remount"));
}

TEST(ImportExportsTest, FsidZeroOrRootAlsoSaysTheNfsv4RootMoves) {
  for (const char* v : {"0", "root"}) {
    ImportPlan plan =
        ImportExports({{"f", absl::StrCat("/a *(rw,fsid=", v, ")\n")}}, "g");
    ASSERT_EQ(plan.problems.size(), 1u) << v << ": " << Problems(plan);
    EXPECT_TRUE(plan.problems[0].unsupported) << v;
    EXPECT_THAT(plan.problems[0].message, HasSubstr("must remount")) << v;
    EXPECT_THAT(plan.problems[0].message, HasSubstr("NFSv4 root")) << v;
  }
}

TEST(ImportExportsTest, AllSquashIsRefusedNotSkippable) {
  ImportPlan plan = ImportExports({{"f", "/c *(ro,all_squash)\n"}}, "g");
  ASSERT_EQ(plan.problems.size(), 1u) << Problems(plan);
  EXPECT_FALSE(plan.problems[0].unsupported);
  EXPECT_EQ(plan.problems[0].where, "f:1");
  EXPECT_THAT(plan.problems[0].message, HasSubstr("all_squash"));
  EXPECT_TRUE(plan.ops.empty());
}

TEST(ImportExportsTest, MountpointAsOpenZfsWritesItBecomesTheShareOption) {
  // OpenZFS's zfs.exports: sharenfs=on is rw,crossmnt plus these.
  ImportPlan plan =
      ImportExports({{"zfs.exports",
                      "/tank/home/alice\t*(rw,no_subtree_check,mountpoint)\n"
                      "/tank/home/bob\t10.0.0.0/8(ro,mp=/tank/home/bob)\n"}},
                    "g");
  EXPECT_THAT(plan.problems, IsEmpty()) << Problems(plan);
  EXPECT_EQ(Options(plan)["/tank/home/alice"], "rw,mountpoint");
  EXPECT_EQ(Options(plan)["/tank/home/bob"], "ro=@10.0.0.0/8,mountpoint");
}

TEST(ImportExportsTest, MountpointOfAnotherPathIsRefused) {
  ImportPlan plan =
      ImportExports({{"f", "/c *(rw,mountpoint=/elsewhere)\n"}}, "g");
  ASSERT_EQ(plan.problems.size(), 1u) << Problems(plan);
  EXPECT_FALSE(plan.problems[0].unsupported);
  EXPECT_THAT(plan.problems[0].message, HasSubstr("mountpoint=/elsewhere"));
  EXPECT_TRUE(plan.ops.empty());
}

TEST(ImportExportsTest, MountpointForSomeClientsOnlyIsReported) {
  ImportPlan plan = ImportExports({{"f", "/c a(rw,mountpoint) b(rw)\n"}}, "g");
  ASSERT_EQ(plan.problems.size(), 1u) << Problems(plan);
  EXPECT_TRUE(plan.problems[0].unsupported);
  EXPECT_THAT(plan.problems[0].message, HasSubstr("some clients only"));
}

TEST(ImportExportsTest, AnonuidWithoutTheSameAnongidIsRefused) {
  // sharemgr's anon= sets both ids; Linux keeps anongid=65534.
  ImportPlan plan = ImportExports({{"f", "/c *(ro,anonuid=0)\n"}}, "g");
  ASSERT_EQ(plan.problems.size(), 1u) << Problems(plan);
  EXPECT_FALSE(plan.problems[0].unsupported);
  EXPECT_THAT(plan.problems[0].message,
              HasSubstr("anonuid=0,anongid=65534 for *"));
}

TEST(ImportExportsTest, AnonuidWithTheSameAnongidBecomesAnon) {
  ImportPlan plan =
      ImportExports({{"f", "/c *(ro,anonuid=0,anongid=0)\n"}}, "g");
  EXPECT_THAT(plan.problems, IsEmpty()) << Problems(plan);
  EXPECT_EQ(Options(plan)["/c"], "ro,anon=0");
}

TEST(ImportExportsTest, AnonOfClientsThatKeepRootDoesNotMatter) {
  ImportPlan plan = ImportExports(
      {{"f", "/c 10.1.0.0/16(rw,no_root_squash) *(ro,anonuid=7,anongid=7)\n"}},
      "g");
  EXPECT_THAT(plan.problems, IsEmpty()) << Problems(plan);
  EXPECT_EQ(Options(plan)["/c"], "ro,rw=@10.1.0.0/16,root=@10.1.0.0/16,anon=7");
}

TEST(ImportExportsTest, SingleHostInsideARwNetworkStaysReadOnly) {
  ImportPlan plan =
      ImportExports({{"exports", "/a 10.1.0.0/16(rw) 10.1.2.3(ro)\n"}}, "g");
  EXPECT_THAT(plan.problems, IsEmpty()) << Problems(plan);
  EXPECT_EQ(Options(plan)["/a"], "rw=-10.1.2.3:@10.1.0.0/16,ro=10.1.2.3");
}

TEST(ImportExportsTest, UnknownOptionIsAHardError) {
  ImportPlan plan = ImportExports({{"f", "/a h(rw,bogus)\n"}}, "g");
  ASSERT_EQ(plan.problems.size(), 1u);
  EXPECT_FALSE(plan.problems[0].unsupported);
  EXPECT_THAT(plan.problems[0].message, HasSubstr("\"bogus\""));
}

TEST(ImportExportsTest, BadPathsAndNetworksAreHardErrors) {
  ImportPlan plan = ImportExports(
      {{"f", "relative h(rw)\n/a 10.0.0.0/255.0.255.0(rw)\n/b h(rw\n"}}, "g");
  ASSERT_EQ(plan.problems.size(), 3u) << Problems(plan);
  EXPECT_EQ(plan.problems[0].where, "f:1");
  EXPECT_EQ(plan.problems[1].where, "f:2");
  EXPECT_THAT(plan.problems[1].message, HasSubstr("bad mask"));
  EXPECT_EQ(plan.problems[2].where, "f:3");
  for (const auto& p : plan.problems) EXPECT_FALSE(p.unsupported);
}

TEST(ImportExportsTest, PerClientAnonuidIsRefusedNamingLineAndClient) {
  ImportPlan plan =
      ImportExports({{"exports",
                      "# two networks\n\n"
                      "/a 10.2.0.0/16(rw,anonuid=1000) 10.3.0.0/16(rw)\n"}},
                    "g");
  ASSERT_EQ(plan.problems.size(), 1u) << Problems(plan);
  EXPECT_FALSE(plan.problems[0].unsupported);
  EXPECT_EQ(plan.problems[0].where, "exports:3");
  EXPECT_THAT(plan.problems[0].message,
              HasSubstr("anonuid=1000 applies to 10.2.0.0/16 only"));
  EXPECT_THAT(plan.problems[0].message,
              HasSubstr("sharemgr's anon= is per share: refusing"));
  EXPECT_TRUE(plan.ops.empty());
}

TEST(ImportExportsTest, HostWildcardOtherThanDomainIsUnsupported) {
  ImportPlan plan = ImportExports({{"f", "/a node?.lab(rw) h(ro)\n"}}, "g");
  ASSERT_EQ(plan.problems.size(), 1u);
  EXPECT_TRUE(plan.problems[0].unsupported);
}

TEST(ImportExportsTest, DroppingAWildcardThatOthersWouldCatchIsRefused) {
  // Without the wildcard its hosts would get "*"'s rw.
  ImportPlan plan = ImportExports({{"f", "/a node?.lab(ro) *(rw)\n"}}, "g");
  ASSERT_EQ(plan.problems.size(), 1u) << Problems(plan);
  EXPECT_FALSE(plan.problems[0].unsupported);
  EXPECT_THAT(plan.problems[0].message, HasSubstr("fall through to \"*\""));
}

TEST(ImportExportsTest, SeveralFilesKeepTheirOwnNames) {
  ImportPlan plan =
      ImportExports({{"/etc/exports.d/a.exports", "/a h(rw)\n"},
                     {"/etc/exports.d/b.exports", "# x\n/b h(rw)\n"}},
                    "g");
  ASSERT_EQ(plan.origins.size(), 2u);
  EXPECT_EQ(plan.origins[1], "/etc/exports.d/b.exports:2");
}

TEST(NetmaskToPrefixTest, AcceptsOnlyContiguousMasks) {
  EXPECT_EQ(NetmaskToPrefix("255.0.0.0"), 8);
  EXPECT_EQ(NetmaskToPrefix("255.255.255.255"), 32);
  EXPECT_EQ(NetmaskToPrefix("0.0.0.0"), 0);
  EXPECT_EQ(NetmaskToPrefix("255.0.255.0"), -1);
  EXPECT_EQ(NetmaskToPrefix("nonsense"), -1);
}

constexpr char kDfstab[] =
    R"(#       Place share(1M) commands here for automatic execution
#       on entering init state 3.
share -F nfs -o rw=@10.0.0.0/8,root=admin -d "Home directories" /export/home
share -F nfs -o ro /export/pub pub
/usr/sbin/share -o 'rw,anon=0' -d 'Alice'\''s "lab"' /export/lab

share /export/plain
)";

TEST(ImportDfstabTest, EveryShareLineBecomesAnAddShare) {
  ImportPlan plan = ImportDfstab({{"/etc/dfs/dfstab", kDfstab}}, "solaris");
  EXPECT_THAT(plan.problems, IsEmpty());
  ASSERT_EQ(plan.ops.size(), 4u);
  EXPECT_EQ(plan.ops[0].path, "/export/home");
  EXPECT_EQ(plan.ops[0].options, "rw=@10.0.0.0/8,root=admin");
  EXPECT_EQ(plan.ops[0].description, "Home directories");
  EXPECT_EQ(plan.ops[0].group, "solaris");
  EXPECT_EQ(plan.ops[1].resource, "pub");
  EXPECT_EQ(plan.ops[2].options, "rw,anon=0");
  EXPECT_EQ(plan.ops[2].description, "Alice's \"lab\"");
  EXPECT_EQ(plan.ops[3].options, "");
  EXPECT_EQ(plan.origins[3], "/etc/dfs/dfstab:7");
}

TEST(ImportDfstabTest, OtherCommandsAndFileSystemsAreRefusedWithLine) {
  ImportPlan plan = ImportDfstab(
      {{"d", "share -F smb /a\nmount /b\nshare -x /c\nshare\nshare rel\n"}},
      "g");
  ASSERT_EQ(plan.problems.size(), 5u);
  EXPECT_EQ(plan.problems[0].where, "d:1");
  EXPECT_THAT(plan.problems[0].message, HasSubstr("\"smb\""));
  EXPECT_THAT(plan.problems[1].message, HasSubstr("not a share command"));
  EXPECT_THAT(plan.problems[2].message, HasSubstr("\"-x\""));
  EXPECT_EQ(plan.problems[4].where, "d:5");
  EXPECT_TRUE(plan.ops.empty());
}

// Found by fuzzing (tests/fuzz/regressions/exports): an escaped newline
// reached the options, and `import --dry-run` printed a line that does
// not load.
TEST(ImportExportsTest, EscapedControlCharacterIsRefusedWithItsLine) {
  ImportPlan plan = ImportExports(
      {{"/etc/exports", "/b *(ro)\n/export/a \\012x(ro)\n"}}, "g");
  EXPECT_THAT(Problems(plan), HasSubstr("/etc/exports:2: \"\\012x(ro)\": "
                                        "control characters are not allowed"));
  ASSERT_EQ(plan.ops.size(), 1u);
  EXPECT_EQ(plan.ops[0].path, "/b");
}

TEST(ImportDfstabTest, ControlCharacterIsRefusedWithItsLine) {
  ImportPlan plan =
      ImportDfstab({{"dfstab", "share -d \"a\x1b[2Jb\" /export/a\n"}}, "g");
  EXPECT_THAT(Problems(plan), HasSubstr("dfstab:1: "));
  EXPECT_THAT(Problems(plan), HasSubstr("control characters"));
  EXPECT_TRUE(plan.ops.empty());
}

}  // namespace
}  // namespace libshare

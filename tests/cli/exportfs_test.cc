#include "exportfs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "libshare/options.h"

namespace sharectl {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

ExportfsArgs Parse(const std::vector<std::string>& args) {
  absl::StatusOr<ExportfsArgs> a = ParseExportfsArgs(args);
  EXPECT_TRUE(a.ok()) << a.status();
  return a.ok() ? *a : ExportfsArgs();
}

std::string UsageError(const std::vector<std::string>& args) {
  absl::StatusOr<ExportfsArgs> a = ParseExportfsArgs(args);
  EXPECT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(a.status().message());
}

TEST(ParseExportfsArgs, CombinedRaSetsAllAndReexport) {
  ExportfsArgs a = Parse({"-ra"});
  EXPECT_TRUE(a.all);
  EXPECT_TRUE(a.reexport);
  EXPECT_FALSE(a.unexport);
}

TEST(ParseExportfsArgs, OptionValueInlineOrSeparate) {
  EXPECT_EQ(Parse({"-orw,sync", "h:/x"}).options, "rw,sync");
  EXPECT_EQ(Parse({"-o", "ro", "h:/x"}).options, "ro");
  EXPECT_EQ(Parse({"-vo", "ro", "h:/x"}).options, "ro");
}

TEST(ParseExportfsArgs, FlagsAfterTargetsAreFlags) {
  ExportfsArgs a = Parse({"h:/x", "-v", "-o", "rw"});
  EXPECT_TRUE(a.verbose);
  EXPECT_THAT(a.targets, ElementsAre("h:/x"));
  EXPECT_EQ(a.options, "rw");
}

TEST(ParseExportfsArgs, DoubleDashEndsFlags) {
  EXPECT_THAT(Parse({"--", "-weird:/x"}).targets, ElementsAre("-weird:/x"));
}

TEST(ParseExportfsArgs, UnknownFlagNamed) {
  EXPECT_THAT(UsageError({"-x"}), HasSubstr("\"-x\""));
  EXPECT_THAT(UsageError({"-rax"}), HasSubstr("\"-x\""));
  EXPECT_THAT(UsageError({"--verbose"}), HasSubstr("\"--verbose\""));
}

TEST(ParseExportfsArgs, DebugAndNetlinkFlagsRefusedByName) {
  EXPECT_THAT(UsageError({"-d", "all"}), HasSubstr("\"-d\""));
  EXPECT_THAT(UsageError({"-L"}), HasSubstr("\"-L\""));
}

TEST(ParseExportfsArgs, ExportfsOwnChecks) {
  EXPECT_EQ(UsageError({"-a", "h:/x"}),
            "extra arguments are not permitted with -a or -r");
  EXPECT_EQ(UsageError({"-ia"}), "-i not meaningful with -a, -r or -u");
  EXPECT_EQ(UsageError({"-ru"}), "-r and -u are incompatible");
  EXPECT_THAT(UsageError({"-o", "rw"}), HasSubstr("CLIENT:PATH"));
  EXPECT_THAT(UsageError({"-o"}), HasSubstr("\"-o\" needs a value"));
  EXPECT_THAT(UsageError({"-u"}), HasSubstr("-u needs"));
}

TEST(ParseExportfsArgs, UnexportAll) {
  ExportfsArgs a = Parse({"-ua"});
  EXPECT_TRUE(a.all);
  EXPECT_TRUE(a.unexport);
}

TEST(ParseExportfsArgs, HelpSkipsChecks) {
  EXPECT_TRUE(Parse({"-h", "-ru"}).help);
  EXPECT_TRUE(Parse({"--help"}).help);
}

TEST(SplitClientPath, HostAndPath) {
  absl::StatusOr<ClientPath> cp = SplitClientPath("10.0.0.1:/export/a/");
  ASSERT_TRUE(cp.ok()) << cp.status();
  EXPECT_EQ(cp->client, "10.0.0.1");
  EXPECT_EQ(cp->path, "/export/a");
}

TEST(SplitClientPath, EmptyClientIsEveryone) {
  absl::StatusOr<ClientPath> cp = SplitClientPath(":/export");
  ASSERT_TRUE(cp.ok());
  EXPECT_EQ(cp->client, "*");
}

TEST(SplitClientPath, BracketedIpv6WithPrefix) {
  absl::StatusOr<ClientPath> cp = SplitClientPath("[fe80::]/64:/export");
  ASSERT_TRUE(cp.ok()) << cp.status();
  EXPECT_EQ(cp->client, "fe80::/64");
  EXPECT_EQ(cp->path, "/export");
  cp = SplitClientPath("[fe80::1]:/export");
  ASSERT_TRUE(cp.ok());
  EXPECT_EQ(cp->client, "fe80::1");
}

TEST(SplitClientPath, BracketWildcardSplitsAtFirstColon) {
  absl::StatusOr<ClientPath> cp = SplitClientPath("node[1-4]:/export");
  ASSERT_TRUE(cp.ok());
  EXPECT_EQ(cp->client, "node[1-4]");
}

TEST(SplitClientPath, BadSyntaxRefused) {
  EXPECT_FALSE(SplitClientPath("host").ok());
  EXPECT_FALSE(SplitClientPath("host:relative").ok());
  EXPECT_FALSE(SplitClientPath("ho(st:/x").ok());
  EXPECT_THAT(std::string(SplitClientPath("host").status().message()),
              HasSubstr("Invalid export syntax: host"));
}

TEST(ClientList, RoundTripsThroughTheDescription) {
  absl::StatusOr<std::vector<ExportfsClient>> l =
      ParseClientList("10.0.0.1(rw,no_root_squash) *(ro) @eng");
  ASSERT_TRUE(l.ok()) << l.status();
  ASSERT_EQ(l->size(), 3u);
  EXPECT_EQ((*l)[0].options, "rw,no_root_squash");
  EXPECT_EQ((*l)[2].spec, "@eng");
  EXPECT_EQ((*l)[2].options, "");
  EXPECT_EQ(FormatClientList(*l), "10.0.0.1(rw,no_root_squash) *(ro) @eng");
}

TEST(ClientList, NotAClientListRefused) {
  EXPECT_FALSE(ParseClientList("home of u1 (x").ok());
}

TEST(ClientList, AddingAgainPutsOptionsOnTop) {
  std::vector<ExportfsClient> l = {{"host", "ro"}};
  AddExportfsClient(&l, "HOST", "rw");
  AddExportfsClient(&l, "other", "");
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(l[0].options, "ro,rw");
  EXPECT_TRUE(RemoveExportfsClient(&l, "Other"));
  EXPECT_FALSE(RemoveExportfsClient(&l, "other"));
  EXPECT_EQ(l.size(), 1u);
}

TEST(ExportsLine, EscapesThePath) {
  EXPECT_EQ(ExportsLine("/a b", {{"h", "rw"}, {"*", ""}}),
            "/a\\040b h(rw) *()");
}

TEST(EffectiveLinuxOptions, DefaultsAsTheKernelModeApplies) {
  libshare::ExportsClientView c;
  c.flavors = {{libshare::SecFlavor::kSys, true, true, false}};
  EXPECT_EQ(EffectiveLinuxOptions(c),
            "sync,wdelay,hide,no_subtree_check,sec=sys,ro,secure,root_squash,"
            "no_all_squash");
}

TEST(EffectiveLinuxOptions, FlavorsWithEqualFlagsJoined) {
  libshare::ExportsClientView c;
  c.nohide = true;
  c.anonuid = 1000;
  c.flavors = {{libshare::SecFlavor::kKrb5, false, false, false},
               {libshare::SecFlavor::kKrb5p, false, false, false},
               {libshare::SecFlavor::kSys, true, true, false}};
  EXPECT_EQ(EffectiveLinuxOptions(c),
            "sync,wdelay,nohide,no_subtree_check,anonuid=1000,"
            "sec=krb5:krb5p,rw,secure,no_root_squash,no_all_squash,"
            "sec=sys,ro,secure,root_squash,no_all_squash");
}

std::vector<libshare::ExportsClientView> Views(const std::string& text) {
  return libshare::ExportsClients({{"/etc/exports", text}}, nullptr);
}

TEST(FormatExportfsList, ShortPathPaddedLongPathOnItsOwnLine) {
  EXPECT_EQ(FormatExportfsList(Views("/x *(rw)\n/a/very/long/path h(ro)\n"),
                               false, false),
            "/a/very/long/path\n\t\th\n"
            "/x            \t<world>\n");
}

TEST(FormatExportfsList, ByClientKindThenFileOrder) {
  std::string out = FormatExportfsList(
      Views("/x *(ro) @ng(ro) 10.0.0.0/8(ro) h2(rw)\n/y h1(ro)\n"), false,
      false);
  EXPECT_EQ(out,
            "/x            \th2\n"
            "/y            \th1\n"
            "/x            \t10.0.0.0/8\n"
            "/x            \t@ng\n"
            "/x            \t<world>\n");
}

TEST(FormatExportfsList, ExportFormatHasStarAndOptions) {
  EXPECT_EQ(
      FormatExportfsList(Views("\"/a b\" *(rw,no_root_squash)\n"), false, true),
      "/a\\040b  *(sync,wdelay,hide,no_subtree_check,sec=sys,rw,secure,"
      "no_root_squash,no_all_squash)\n");
}

TEST(FormatExportfsList, InsecureDaemonShowsInsecure) {
  EXPECT_EQ(FormatExportfsList(Views("/x h(rw)\n"), true, false, true),
            "/x            \th(sync,wdelay,hide,no_subtree_check,sec=sys,rw,"
            "insecure,root_squash,no_all_squash)\n");
}

// "PATH CLIENT(OPTIONS)" lines of what ServedClients lists for `options`.
std::string Served(const std::string& options) {
  absl::StatusOr<libshare::ShareOptions> o = libshare::ParseOptions(options);
  EXPECT_TRUE(o.ok()) << o.status();
  if (!o.ok()) return "";
  return FormatExportfsList(ServedClients("/p", *o), false, true);
}
constexpr char kHead[] = "sync,wdelay,hide,no_subtree_check,sec=sys,";

TEST(ServedClients, EditedShareShowsWhatIsServedNotTheStoredText) {
  // exportfs -o ro 127.0.0.9:/p, then set-share -o 'rw,root=*': every
  // client gets rw and root.
  EXPECT_EQ(Served("rw,root=*"),
            absl::StrCat("/p  *(", kHead,
                         "rw,secure,no_root_squash,no_all_squash)\n"));
}

TEST(ServedClients, EachListedClientWithItsAccessThenEveryone) {
  EXPECT_EQ(
      Served("rw=h1:@10.0.0.0/8,root=h1,ro=.example.com:*"),
      absl::StrCat(
          "/p  h1(", kHead, "rw,secure,no_root_squash,no_all_squash)\n",
          "/p  10.0.0.0/8(", kHead, "rw,secure,root_squash,no_all_squash)\n",
          "/p  *.example.com(", kHead, "ro,secure,root_squash,no_all_squash)\n",
          "/p  *(", kHead, "ro,secure,root_squash,no_all_squash)\n"));
}

TEST(ServedClients, DeniedAndNoneEntriesGetNothing) {
  // h2 is denied by rw=; h3 by none=; neither is listed, nor is "*"
  // (no bare rw or ro).
  EXPECT_EQ(
      Served("rw=-h2:h1,none=h3,ro=h3"),
      absl::StrCat("/p  h1(", kHead, "rw,secure,root_squash,no_all_squash)\n"));
}

TEST(ServedClients, BareRwWithRoListNarrowsTheListed) {
  EXPECT_EQ(Served("rw,ro=h1,anon=1000"),
            absl::StrCat("/p  h1(sync,wdelay,hide,no_subtree_check,"
                         "anonuid=1000,anongid=1000,sec=sys,ro,secure,"
                         "root_squash,no_all_squash)\n",
                         "/p  *(sync,wdelay,hide,no_subtree_check,"
                         "anonuid=1000,anongid=1000,sec=sys,rw,secure,"
                         "root_squash,no_all_squash)\n"));
}

TEST(FormatExportfsList, VerboseHasOptions) {
  EXPECT_EQ(FormatExportfsList(Views("/x h(rw)\n"), true, false),
            "/x            \th(sync,wdelay,hide,no_subtree_check,sec=sys,rw,"
            "secure,root_squash,no_all_squash)\n");
}

}  // namespace
}  // namespace sharectl

#include "libshare/options.h"

#include <arpa/inet.h>

#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace libshare {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Kind = AccessEntry::Kind;

ShareOptions Parse(std::string_view text) {
  absl::StatusOr<ShareOptions> o = ParseOptions(text);
  EXPECT_TRUE(o.ok()) << text << ": " << o.status().message();
  return o.ok() ? *std::move(o) : ShareOptions{};
}

std::string Error(std::string_view text) {
  absl::StatusOr<ShareOptions> o = ParseOptions(text);
  EXPECT_FALSE(o.ok()) << text << " parsed as " << o->Canonical();
  if (o.ok()) return "";
  EXPECT_EQ(o.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(o.status().message());
}

// The one entry of the sys scope's rw= list of "rw=ENTRY".
AccessEntry Entry(std::string_view entry) {
  ShareOptions o = Parse(std::string("rw=") + std::string(entry));
  if (o.scopes.size() != 1 || !o.scopes[0].rw ||
      o.scopes[0].rw->entries.size() != 1) {
    ADD_FAILURE() << entry << " did not give one entry";
    return AccessEntry{};
  }
  return o.scopes[0].rw->entries[0];
}

IpAddress Ip(std::string_view text) {
  std::optional<IpAddress> a = IpAddress::Parse(text);
  EXPECT_TRUE(a.has_value()) << text;
  return a.value_or(IpAddress{});
}

// ---- IpAddress ----

TEST(IpAddress, ParsesIpv4AsMappedIpv6) {
  IpAddress a = Ip("10.1.2.3");
  EXPECT_TRUE(a.is_v4());
  EXPECT_EQ(a, IpAddress::FromV4(0x0a010203));
  EXPECT_EQ(a, Ip("::ffff:10.1.2.3"));
  EXPECT_EQ(a.ToString(), "10.1.2.3");
}

TEST(IpAddress, ParsesIpv6) {
  IpAddress a = Ip("fe80::1");
  EXPECT_FALSE(a.is_v4());
  EXPECT_EQ(a.bytes[0], 0xfe);
  EXPECT_EQ(a.bytes[1], 0x80);
  EXPECT_EQ(a.bytes[15], 1);
  EXPECT_EQ(a.ToString(), "fe80::1");
  EXPECT_EQ(Ip("FE80:0:0:0:0:0:0:1"), a);
}

TEST(IpAddress, RefusesNonLiterals) {
  for (const char* s :
       {"", "host", "10.1.2", "10.1.2.3.4", "256.1.1.1", "10.1.2.3 ",
        "fe80::1::2", "[fe80::1]", "fe80::1%eth0", "1.2.3.-4", "::g"}) {
    EXPECT_FALSE(IpAddress::Parse(s).has_value()) << s;
  }
}

// IPv4 addresses are spelled digit by digit: the same text as inet_ntop
// for every value of each byte, and of every prefix length in an entry.
TEST(IpAddress, V4TextIsInetNtopsForEveryByteValue) {
  for (uint32_t v = 0; v < 256; ++v) {
    for (uint32_t a : {v << 24 | 0x010203u, 0x0a000000u | v << 16 | v,
                       0xc0a80000u | (v << 8) | (255u - v)}) {
      in_addr in;
      in.s_addr = htonl(a);
      char buf[INET_ADDRSTRLEN];
      ASSERT_NE(inet_ntop(AF_INET, &in, buf, sizeof buf), nullptr);
      EXPECT_EQ(IpAddress::FromV4(a).ToString(), buf);
    }
  }
  for (int len = 0; len <= 32; ++len) {
    const std::string text = "@10.0.0.0/" + std::to_string(len);
    absl::StatusOr<ShareOptions> o = ParseOptions("rw=" + text);
    ASSERT_TRUE(o.ok()) << text;
    EXPECT_EQ(o->scopes[0].rw->entries[0].Canonical(), text);
  }
  absl::StatusOr<ShareOptions> v6 = ParseOptions("rw=@[fe80::]/128");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->scopes[0].rw->entries[0].Canonical(), "@[fe80::]/128");
}

TEST(IpAddress, FromV4AndToStringAgree) {
  EXPECT_EQ(IpAddress::FromV4(0).ToString(), "0.0.0.0");
  EXPECT_EQ(IpAddress::FromV4(0xffffffff).ToString(), "255.255.255.255");
  EXPECT_EQ(IpAddress::FromV4(0xc0a80001).ToString(), "192.168.0.1");
}

TEST(IpAddress, AllZeroIpv6IsNotIpv4) {
  EXPECT_FALSE(Ip("::").is_v4());
  EXPECT_EQ(Ip("::").ToString(), "::");
}

TEST(IpAddress, InNetworkIpv4) {
  IpAddress net = Ip("10.1.0.0");
  EXPECT_TRUE(Ip("10.1.200.3").InNetwork(net, 96 + 16));
  EXPECT_FALSE(Ip("10.2.0.1").InNetwork(net, 96 + 16));
  // A length that is not a multiple of 8.
  EXPECT_TRUE(Ip("10.1.127.1").InNetwork(net, 96 + 17));
  EXPECT_FALSE(Ip("10.1.128.1").InNetwork(net, 96 + 17));
}

TEST(IpAddress, InNetworkIpv4ZeroLengthMatchesEveryIpv4Address) {
  EXPECT_TRUE(Ip("192.0.2.1").InNetwork(Ip("10.0.0.0"), 96));
  EXPECT_FALSE(Ip("fe80::1").InNetwork(Ip("10.0.0.0"), 96));
}

TEST(IpAddress, InNetworkFullLengthIsExactMatch) {
  EXPECT_TRUE(Ip("10.1.2.3").InNetwork(Ip("10.1.2.3"), 128));
  EXPECT_FALSE(Ip("10.1.2.4").InNetwork(Ip("10.1.2.3"), 128));
  EXPECT_TRUE(Ip("fe80::1").InNetwork(Ip("fe80::1"), 128));
  EXPECT_FALSE(Ip("fe80::2").InNetwork(Ip("fe80::1"), 128));
}

TEST(IpAddress, InNetworkIpv6) {
  IpAddress net = Ip("fe80::");
  EXPECT_TRUE(Ip("fe80::1").InNetwork(net, 10));
  EXPECT_TRUE(Ip("febf::1").InNetwork(net, 10));
  EXPECT_FALSE(Ip("fec0::1").InNetwork(net, 10));
  EXPECT_TRUE(Ip("2001:db8:1::5").InNetwork(Ip("2001:db8::"), 32));
  EXPECT_FALSE(Ip("2001:db9::5").InNetwork(Ip("2001:db8::"), 32));
}

TEST(IpAddress, InNetworkZeroLengthMatchesEverything) {
  EXPECT_TRUE(Ip("fe80::1").InNetwork(Ip("::"), 0));
  EXPECT_TRUE(Ip("10.0.0.1").InNetwork(Ip("::"), 0));
}

TEST(IpAddress, InNetworkNegativeLengthComparesWholeAddress) {
  EXPECT_TRUE(Ip("10.0.0.1").InNetwork(Ip("10.0.0.1"), -1));
  EXPECT_FALSE(Ip("10.0.0.2").InNetwork(Ip("10.0.0.1"), -1));
}

// ---- Security flavors ----

TEST(SecFlavor, NamesAndRpcNumbers) {
  EXPECT_EQ(SecFlavorName(SecFlavor::kSys), "sys");
  EXPECT_EQ(SecFlavorName(SecFlavor::kNone), "none");
  EXPECT_EQ(SecFlavorName(SecFlavor::kDh), "dh");
  EXPECT_EQ(SecFlavorName(SecFlavor::kKrb5), "krb5");
  EXPECT_EQ(SecFlavorName(SecFlavor::kKrb5i), "krb5i");
  EXPECT_EQ(SecFlavorName(SecFlavor::kKrb5p), "krb5p");
  EXPECT_EQ(SecFlavorRpcNumber(SecFlavor::kSys), 1u);
  EXPECT_EQ(SecFlavorRpcNumber(SecFlavor::kNone), 0u);
  EXPECT_EQ(SecFlavorRpcNumber(SecFlavor::kDh), 3u);
  EXPECT_EQ(SecFlavorRpcNumber(SecFlavor::kKrb5), 390003u);
  EXPECT_EQ(SecFlavorRpcNumber(SecFlavor::kKrb5i), 390004u);
  EXPECT_EQ(SecFlavorRpcNumber(SecFlavor::kKrb5p), 390005u);
}

// ---- Options, one by one ----

TEST(ParseOptions, EmptyStringGivesDefaults) {
  ShareOptions o = Parse("");
  ASSERT_EQ(o.scopes.size(), 1u);
  EXPECT_THAT(o.scopes[0].flavors, ElementsAre(SecFlavor::kSys));
  EXPECT_TRUE(o.scopes[0].HasNoAccessOption());
  EXPECT_FALSE(o.anon.has_value());
  EXPECT_FALSE(o.nosuid || o.nosub || o.nohide || o.public_fh || o.aclok ||
               o.log);
  EXPECT_EQ(o, ShareOptions{o});
  EXPECT_EQ(o.Canonical(), "");
}

TEST(ParseOptions, BareRw) {
  ShareOptions o = Parse("rw");
  EXPECT_TRUE(o.scopes[0].rw_all);
  EXPECT_FALSE(o.scopes[0].ro_all);
  EXPECT_FALSE(o.scopes[0].HasNoAccessOption());
  EXPECT_FALSE(o == Parse(""));
}

TEST(ParseOptions, BareRo) {
  ShareOptions o = Parse("ro");
  EXPECT_TRUE(o.scopes[0].ro_all);
  EXPECT_FALSE(o.scopes[0].rw_all);
}

TEST(ParseOptions, RwList) {
  ShareOptions o = Parse("rw=a:b");
  ASSERT_TRUE(o.scopes[0].rw.has_value());
  ASSERT_EQ(o.scopes[0].rw->entries.size(), 2u);
  EXPECT_EQ(o.scopes[0].rw->entries[0].name, "a");
  EXPECT_EQ(o.scopes[0].rw->entries[1].name, "b");
}

TEST(ParseOptions, RoList) {
  ShareOptions o = Parse("ro=a");
  ASSERT_TRUE(o.scopes[0].ro.has_value());
  EXPECT_EQ(o.scopes[0].ro->entries[0].name, "a");
}

TEST(ParseOptions, RootList) {
  ShareOptions o = Parse("root=admin");
  ASSERT_TRUE(o.scopes[0].root.has_value());
  EXPECT_EQ(o.scopes[0].root->entries[0].name, "admin");
  EXPECT_TRUE(o.scopes[0].HasNoAccessOption());  // root= grants no access
}

TEST(ParseOptions, NoneList) {
  ShareOptions o = Parse("none=bad");
  ASSERT_TRUE(o.scopes[0].none.has_value());
  EXPECT_EQ(o.scopes[0].none->entries[0].name, "bad");
}

TEST(ParseOptions, BareRwWithRoListIsAllowed) {
  ShareOptions o = Parse("rw,ro=a");
  EXPECT_TRUE(o.scopes[0].rw_all);
  EXPECT_TRUE(o.scopes[0].ro.has_value());
}

TEST(ParseOptions, BareRoWithRwListIsAllowed) {
  ShareOptions o = Parse("ro,rw=a");
  EXPECT_TRUE(o.scopes[0].ro_all);
  EXPECT_TRUE(o.scopes[0].rw.has_value());
}

TEST(ParseOptions, Anon) {
  EXPECT_EQ(Parse("anon=65534").anon, 65534);
  EXPECT_EQ(Parse("anon=0").anon, 0);
  EXPECT_EQ(Parse("anon=-1").anon, -1);
  EXPECT_EQ(Parse("anon=4294967294").anon, 4294967294);
}

TEST(ParseOptions, RootMappingBelongsToScope) {
  ShareOptions o = Parse("root_mapping=0");
  EXPECT_EQ(o.scopes[0].root_mapping, 0);
  EXPECT_EQ(Parse("root_mapping=-1").scopes[0].root_mapping, -1);
  EXPECT_FALSE(o.anon.has_value());
}

TEST(ParseOptions, Flags) {
  EXPECT_TRUE(Parse("nosuid").nosuid);
  EXPECT_TRUE(Parse("nosub").nosub);
  EXPECT_TRUE(Parse("nohide").nohide);
  EXPECT_TRUE(Parse("mountpoint").mountpoint);
  EXPECT_FALSE(Parse("nohide").mountpoint);
  EXPECT_TRUE(Parse("public").public_fh);
  EXPECT_TRUE(Parse("aclok").aclok);
}

TEST(ParseOptions, Index) {
  EXPECT_EQ(Parse("index=index.html").index, "index.html");
}

TEST(ParseOptions, LogWithoutTag) {
  ShareOptions o = Parse("log");
  EXPECT_TRUE(o.log);
  EXPECT_FALSE(o.log_tag.has_value());
}

TEST(ParseOptions, LogWithTag) {
  ShareOptions o = Parse("log=global");
  EXPECT_TRUE(o.log);
  EXPECT_EQ(o.log_tag, "global");
}

TEST(ParseOptions, Window) {
  EXPECT_EQ(Parse("window=30000").window, 30000u);
  EXPECT_EQ(Parse("window=0").window, 0u);
  EXPECT_EQ(Parse("window=4294967295").window, 4294967295u);
}

TEST(ParseOptions, GlobalOptionsAreGlobalWhereverTheyAppear) {
  ShareOptions o = Parse("sec=krb5,nosuid,rw,anon=1");
  EXPECT_TRUE(o.nosuid);
  EXPECT_EQ(o.anon, 1);
  EXPECT_EQ(o, Parse("nosuid,anon=1,sec=krb5,rw"));
}

// ---- List entries ----

TEST(AccessEntryParse, Star) {
  AccessEntry e = Entry("*");
  EXPECT_EQ(e.kind, Kind::kAny);
  EXPECT_FALSE(e.deny);
}

TEST(AccessEntryParse, Ipv4Network) {
  AccessEntry e = Entry("@10.1.0.0/16");
  EXPECT_EQ(e.kind, Kind::kNetwork);
  EXPECT_EQ(e.address, Ip("10.1.0.0"));
  EXPECT_EQ(e.prefix_len, 16);
}

TEST(AccessEntryParse, Ipv4NetworkKeepsHostBitsAsWritten) {
  AccessEntry e = Entry("@10.1.2.3/16");
  EXPECT_EQ(e.address, Ip("10.1.2.3"));
  EXPECT_EQ(e.prefix_len, 16);
}

TEST(AccessEntryParse, Ipv4NetworkWithoutLengthIsWholeAddress) {
  AccessEntry e = Entry("@10.1.2.3");
  EXPECT_EQ(e.kind, Kind::kNetwork);
  EXPECT_EQ(e.prefix_len, -1);
}

TEST(AccessEntryParse, Ipv4ShorthandImpliesLengthFromParts) {
  AccessEntry e = Entry("@10.1");
  EXPECT_EQ(e.kind, Kind::kNetwork);
  EXPECT_EQ(e.address, Ip("10.1.0.0"));
  EXPECT_EQ(e.prefix_len, 16);
  EXPECT_EQ(Entry("@10").prefix_len, 8);
  EXPECT_EQ(Entry("@192.168.7").prefix_len, 24);
  EXPECT_EQ(Entry("@10.1/20").prefix_len, 20);
}

TEST(AccessEntryParse, Ipv4NetworkZeroAndFullLength) {
  EXPECT_EQ(Entry("@0.0.0.0/0").prefix_len, 0);
  EXPECT_EQ(Entry("@10.1.2.3/32").prefix_len, 32);
}

TEST(AccessEntryParse, Ipv6NetworkUnbracketed) {
  AccessEntry e = Entry("@fe80::/10");
  EXPECT_EQ(e.kind, Kind::kNetwork);
  EXPECT_EQ(e.address, Ip("fe80::"));
  EXPECT_EQ(e.prefix_len, 10);
}

TEST(AccessEntryParse, Ipv6NetworkBracketed) {
  AccessEntry e = Entry("@[fe80::]/10");
  EXPECT_EQ(e.kind, Kind::kNetwork);
  EXPECT_EQ(e.address, Ip("fe80::"));
  EXPECT_EQ(e.prefix_len, 10);
  EXPECT_EQ(Entry("@[2001:db8::1]").prefix_len, -1);
}

TEST(AccessEntryParse, Ipv6NetworkZeroAndFullLength) {
  EXPECT_EQ(Entry("@::/0").prefix_len, 0);
  EXPECT_EQ(Entry("@[::1]/128").prefix_len, 128);
}

TEST(AccessEntryParse, UnbracketedIpv6NetworkFollowedByOtherEntries) {
  ShareOptions o = Parse("rw=@fe80::/10:host:@2001:db8::/32:-@::1");
  const auto& e = o.scopes[0].rw->entries;
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[0].address, Ip("fe80::"));
  EXPECT_EQ(e[1].name, "host");
  EXPECT_EQ(e[2].address, Ip("2001:db8::"));
  EXPECT_EQ(e[2].prefix_len, 32);
  EXPECT_EQ(e[3].address, Ip("::1"));
  EXPECT_TRUE(e[3].deny);
}

TEST(AccessEntryParse, NetworkName) {
  AccessEntry e = Entry("@engnet");
  EXPECT_EQ(e.kind, Kind::kNetworkName);
  EXPECT_EQ(e.name, "engnet");
  EXPECT_EQ(e.prefix_len, -1);
  AccessEntry f = Entry("@engnet/24");
  EXPECT_EQ(f.kind, Kind::kNetworkName);
  EXPECT_EQ(f.prefix_len, 24);
}

TEST(AccessEntryParse, DomainSuffixIsLowerCasedWithoutDot) {
  AccessEntry e = Entry(".Eng.Example.COM");
  EXPECT_EQ(e.kind, Kind::kDomainSuffix);
  EXPECT_EQ(e.name, "eng.example.com");
}

TEST(AccessEntryParse, LoneDotIsDotless) {
  EXPECT_EQ(Entry(".").kind, Kind::kDotless);
}

TEST(AccessEntryParse, Ipv4Address) {
  AccessEntry e = Entry("192.0.2.7");
  EXPECT_EQ(e.kind, Kind::kAddress);
  EXPECT_EQ(e.address, Ip("192.0.2.7"));
}

TEST(AccessEntryParse, BracketedIpv6Address) {
  AccessEntry e = Entry("[2001:db8::7]");
  EXPECT_EQ(e.kind, Kind::kAddress);
  EXPECT_EQ(e.address, Ip("2001:db8::7"));
}

TEST(AccessEntryParse, HostOrNetgroupNameKeptAsWritten) {
  AccessEntry e = Entry("Host-1.example.com");
  EXPECT_EQ(e.kind, Kind::kName);
  EXPECT_EQ(e.name, "Host-1.example.com");
  EXPECT_EQ(Entry("eng_netgroup").kind, Kind::kName);
}

TEST(AccessEntryParse, DashPrefixDenies) {
  for (const char* s :
       {"-*", "-@10.0.0.0/8", "-@fe80::/10", "-@engnet", "-.example.com", "-.",
        "-10.1.2.3", "-[::1]", "-host"}) {
    EXPECT_TRUE(Entry(s).deny) << s;
  }
  EXPECT_FALSE(Entry("host").deny);
}

TEST(AccessListParse, KeepsEntryOrder) {
  ShareOptions o = Parse("rw=-bad:@10.0.0.0/8:*");
  const auto& e = o.scopes[0].rw->entries;
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].kind, Kind::kName);
  EXPECT_EQ(e[1].kind, Kind::kNetwork);
  EXPECT_EQ(e[2].kind, Kind::kAny);
}

TEST(AccessListParse, NeedsNamesOnlyForNameBasedEntries) {
  EXPECT_FALSE(Parse("rw=@10.0.0.0/8:10.1.2.3:*:[::1]").NeedsNames());
  EXPECT_FALSE(Parse("rw=@engnet").NeedsNames());
  EXPECT_TRUE(Parse("rw=host").NeedsNames());
  EXPECT_TRUE(Parse("ro=.example.com").NeedsNames());
  EXPECT_TRUE(Parse("root=.").NeedsNames());
  EXPECT_TRUE(Parse("none=ng").NeedsNames());
  EXPECT_TRUE(Parse("sec=krb5,rw,sec=sys,rw=h").NeedsNames());
  EXPECT_FALSE(Parse("").NeedsNames());
}

// ---- sec= scoping ----

TEST(SecScoping, AccessOptionsFollowTheirSec) {
  ShareOptions o = Parse("sec=krb5,rw=a,sec=sys,ro");
  ASSERT_EQ(o.scopes.size(), 2u);
  EXPECT_THAT(o.scopes[0].flavors, ElementsAre(SecFlavor::kKrb5));
  EXPECT_TRUE(o.scopes[0].rw.has_value());
  EXPECT_THAT(o.scopes[1].flavors, ElementsAre(SecFlavor::kSys));
  EXPECT_TRUE(o.scopes[1].ro_all);
  const SecScope* sys = o.ScopeFor(SecFlavor::kSys);
  ASSERT_NE(sys, nullptr);
  EXPECT_TRUE(sys->ro_all);
  EXPECT_FALSE(sys->rw.has_value());
  EXPECT_EQ(o.ScopeFor(SecFlavor::kKrb5), &o.scopes[0]);
}

TEST(SecScoping, FlavorNotOfferedHasNoScope) {
  ShareOptions o = Parse("sec=krb5,rw");
  EXPECT_EQ(o.ScopeFor(SecFlavor::kSys), nullptr);
  EXPECT_EQ(o.ScopeFor(SecFlavor::kKrb5p), nullptr);
  EXPECT_NE(o.ScopeFor(SecFlavor::kKrb5), nullptr);
}

TEST(SecScoping, DefaultScopeIsSys) {
  ShareOptions o = Parse("ro");
  EXPECT_NE(o.ScopeFor(SecFlavor::kSys), nullptr);
  EXPECT_EQ(o.ScopeFor(SecFlavor::kKrb5), nullptr);
  EXPECT_THAT(o.RpcFlavors(), ElementsAre(1u));
}

TEST(SecScoping, MultipleModesShareOneScope) {
  ShareOptions o = Parse("sec=krb5:krb5i:krb5p,rw");
  ASSERT_EQ(o.scopes.size(), 1u);
  EXPECT_EQ(o.ScopeFor(SecFlavor::kKrb5i), &o.scopes[0]);
  EXPECT_THAT(o.RpcFlavors(), ElementsAre(390003u, 390004u, 390005u));
}

TEST(SecScoping, OptionsBeforeFirstSecFormASysScope) {
  ShareOptions o = Parse("ro,sec=krb5,rw");
  ASSERT_EQ(o.scopes.size(), 2u);
  EXPECT_TRUE(o.ScopeFor(SecFlavor::kSys)->ro_all);
  EXPECT_TRUE(o.ScopeFor(SecFlavor::kKrb5)->rw_all);
  EXPECT_THAT(o.RpcFlavors(), ElementsAre(1u, 390003u));
}

TEST(SecScoping, OnlyGlobalOptionsBeforeSecDoNotOfferSys) {
  ShareOptions o = Parse("nosuid,sec=krb5,rw");
  ASSERT_EQ(o.scopes.size(), 1u);
  EXPECT_EQ(o.ScopeFor(SecFlavor::kSys), nullptr);
}

TEST(SecScoping, ExplicitSecSysEqualsDefault) {
  EXPECT_EQ(Parse("sec=sys"), Parse(""));
  EXPECT_EQ(Parse("sec=sys,rw=a"), Parse("rw=a"));
}

TEST(SecScoping, SameOptionInDifferentScopesIsNotDuplicate) {
  ShareOptions o = Parse("sec=krb5,rw=a,root=r,sec=sys,rw=b,root=s");
  EXPECT_EQ(o.scopes[0].rw->entries[0].name, "a");
  EXPECT_EQ(o.scopes[1].rw->entries[0].name, "b");
}

TEST(SecScoping, SecWithNoAccessOptionsGivesEmptyScope) {
  ShareOptions o = Parse("sec=dh:none");
  ASSERT_EQ(o.scopes.size(), 1u);
  EXPECT_TRUE(o.scopes[0].HasNoAccessOption());
  EXPECT_THAT(o.RpcFlavors(), ElementsAre(3u, 0u));
}

// ---- Errors ----

TEST(ParseOptionsError, UnknownOption) {
  EXPECT_EQ(Error("foo"), "option \"foo\": unknown option");
  EXPECT_EQ(Error("rw,Rw"),
            "option \"Rw\": unknown option; did you mean \"rw\"?");
  EXPECT_EQ(Error("=x"), "option \"=x\": unknown option");
  EXPECT_EQ(Error("rw, ro"),
            "option \" ro\": unknown option; did you mean \"ro\"?");
}

TEST(ParseOptionsError, EmptyAccessList) {
  EXPECT_EQ(Error("rw="), "option \"rw=\": empty access list");
  EXPECT_EQ(Error("ro="), "option \"ro=\": empty access list");
  EXPECT_EQ(Error("root="), "option \"root=\": empty access list");
  EXPECT_EQ(Error("none="), "option \"none=\": empty access list");
}

TEST(ParseOptionsError, EmptyListEntry) {
  EXPECT_EQ(Error("rw=a::b"), "option \"rw=a::b\": empty list entry");
  EXPECT_THAT(Error("rw=:a"), HasSubstr("empty list entry"));
  EXPECT_THAT(Error("rw=a:"), HasSubstr("empty list entry"));
  EXPECT_THAT(Error("rw=-"), HasSubstr("empty list entry"));
  EXPECT_THAT(Error("rw=a:-:b"), HasSubstr("empty list entry"));
}

TEST(ParseOptionsError, ListNeedsValue) {
  EXPECT_THAT(Error("root"), HasSubstr("option \"root\": needs a value"));
  EXPECT_THAT(Error("none"), HasSubstr("needs a value"));
}

TEST(ParseOptionsError, BadIpv4PrefixLength) {
  EXPECT_EQ(Error("rw=@10.0.0.0/33"),
            "option \"rw=@10.0.0.0/33\": bad prefix length 33 (IPv4 allows "
            "0-32)");
  EXPECT_THAT(Error("rw=@engnet/33"), HasSubstr("bad prefix length 33"));
  EXPECT_THAT(Error("rw=@10.0.0.0/"), HasSubstr("bad prefix length"));
  EXPECT_THAT(Error("rw=@10.0.0.0/x"), HasSubstr("bad prefix length \"x\""));
  EXPECT_THAT(Error("rw=@10.0.0.0/-1"), HasSubstr("bad prefix length"));
  EXPECT_THAT(Error("rw=@10.0.0.0/0008"), HasSubstr("bad prefix length"));
}

TEST(ParseOptionsError, BadIpv6PrefixLength) {
  EXPECT_EQ(Error("rw=@fe80::/129"),
            "option \"rw=@fe80::/129\": bad prefix length 129 (IPv6 allows "
            "0-128)");
  EXPECT_THAT(Error("rw=@[fe80::]/200"), HasSubstr("bad prefix length 200"));
  EXPECT_THAT(Error("rw=@fe80::/10x"), HasSubstr("bad prefix length"));
}

TEST(ParseOptionsError, BadNetworks) {
  EXPECT_THAT(Error("rw=@"), HasSubstr("empty network"));
  EXPECT_THAT(Error("rw=@300.1"), HasSubstr("bad IPv4 network \"300.1\""));
  EXPECT_THAT(Error("rw=@1.2.3.4.5"), HasSubstr("bad IPv4 network"));
  EXPECT_THAT(Error("rw=@[fe80::"), HasSubstr("missing \"]\""));
  EXPECT_THAT(Error("rw=@[10.0.0.0]/8"), HasSubstr("bad IPv6 network"));
  EXPECT_THAT(Error("rw=@[fe80::]x"), HasSubstr("unexpected \"x\""));
  EXPECT_THAT(Error("rw=@[::ffff:10.0.0.0]/104"),
              HasSubstr("write it in IPv4 form"));
  EXPECT_THAT(Error("rw=@bad!name"), HasSubstr("bad network name"));
}

TEST(ParseOptionsError, BadEntries) {
  EXPECT_THAT(Error("rw=a b"), HasSubstr("bad host or netgroup name \"a b\""));
  EXPECT_THAT(Error("rw=--a"), HasSubstr("bad host or netgroup name \"-a\""));
  EXPECT_THAT(Error("rw=**"), HasSubstr("bad host or netgroup name"));
  EXPECT_THAT(Error("rw=.a..b"), HasSubstr("bad domain suffix \".a..b\""));
  EXPECT_THAT(Error("rw=.a."), HasSubstr("bad domain suffix"));
  EXPECT_THAT(Error("rw=[fe80::1"), HasSubstr("bad IPv6 address"));
  EXPECT_THAT(Error("rw=[nothex]"), HasSubstr("bad IPv6 address"));
  EXPECT_THAT(Error("rw=[fe80::1]x"), HasSubstr("bad IPv6 address"));
  EXPECT_THAT(Error("rw=10.1.2"), HasSubstr("bad IPv4 address \"10.1.2\""));
  EXPECT_THAT(Error("rw=300.1.1.1"), HasSubstr("bad IPv4 address"));
  EXPECT_THAT(Error("rw=1.2.3.4.5"), HasSubstr("bad IPv4 address"));
}

TEST(ParseOptionsError, BadUid) {
  EXPECT_THAT(Error("anon=x"), HasSubstr("option \"anon=x\": bad uid"));
  EXPECT_THAT(Error("anon="), HasSubstr("bad uid"));
  EXPECT_THAT(Error("anon=-2"), HasSubstr("bad uid"));
  EXPECT_THAT(Error("anon=4294967295"), HasSubstr("bad uid"));
  EXPECT_THAT(Error("anon=99999999999"), HasSubstr("bad uid"));
  EXPECT_THAT(Error("anon=+1"), HasSubstr("bad uid"));
  EXPECT_THAT(Error("anon=1x"), HasSubstr("bad uid"));
  EXPECT_THAT(Error("root_mapping=-5"),
              HasSubstr("option \"root_mapping=-5\": bad uid"));
  EXPECT_THAT(Error("anon"), HasSubstr("needs a value"));
}

TEST(ParseOptionsError, BadWindow) {
  EXPECT_THAT(Error("window=x"), HasSubstr("bad number of seconds"));
  EXPECT_THAT(Error("window=-1"), HasSubstr("bad number of seconds"));
  EXPECT_THAT(Error("window=4294967296"), HasSubstr("bad number of seconds"));
  EXPECT_THAT(Error("window"), HasSubstr("needs a value"));
}

TEST(ParseOptionsError, BareRwWithBareRo) {
  EXPECT_EQ(Error("rw,ro"), "option \"ro\": bare rw and bare ro together");
  EXPECT_EQ(Error("ro,nosuid,rw"),
            "option \"rw\": bare rw and bare ro together");
  EXPECT_THAT(Error("sec=krb5,ro,rw"), HasSubstr("bare rw and bare ro"));
}

TEST(ParseOptionsError, BareRwAndRoInDifferentScopesIsAllowed) {
  EXPECT_TRUE(ParseOptions("rw,sec=krb5,ro").ok());
}

TEST(ParseOptionsError, StrayCommas) {
  EXPECT_THAT(Error(",rw"), HasSubstr("empty option at position 1"));
  EXPECT_THAT(Error("rw,,ro"), HasSubstr("empty option at position 2"));
  EXPECT_THAT(Error("rw,"), HasSubstr("empty option at position 2"));
  EXPECT_THAT(Error(","), HasSubstr("empty option at position 1"));
}

TEST(ParseOptionsError, DuplicateOptionInScope) {
  EXPECT_THAT(Error("rw=a,rw=b"),
              HasSubstr("option \"rw=b\": duplicate option in this sec= "
                        "scope"));
  EXPECT_THAT(Error("rw,rw"), HasSubstr("duplicate option"));
  EXPECT_THAT(Error("ro,ro"), HasSubstr("duplicate option"));
  EXPECT_THAT(Error("ro=a,ro=a"), HasSubstr("duplicate option"));
  EXPECT_THAT(Error("root=a,root=b"), HasSubstr("duplicate option"));
  EXPECT_THAT(Error("none=a,none=b"), HasSubstr("duplicate option"));
  EXPECT_THAT(Error("root_mapping=0,root_mapping=1"),
              HasSubstr("duplicate option"));
}

TEST(ParseOptionsError, DuplicateGlobalOption) {
  for (const char* s :
       {"nosuid,nosuid", "nosub,rw,nosub", "nohide,nohide", "public,public",
        "aclok,aclok", "anon=1,anon=1", "index=a,index=b", "log,log",
        "log,log=x", "log=x,log", "window=1,window=2",
        "sec=krb5,nosuid,sec=sys,nosuid"}) {
    EXPECT_THAT(Error(s), HasSubstr("duplicate option")) << s;
  }
}

TEST(ParseOptionsError, FlagWithValue) {
  EXPECT_EQ(Error("nosuid=1"), "option \"nosuid=1\": takes no value");
  EXPECT_THAT(Error("aclok="), HasSubstr("takes no value"));
}

TEST(ParseOptionsError, EmptyTextValue) {
  EXPECT_THAT(Error("index="), HasSubstr("option \"index=\": empty value"));
  EXPECT_THAT(Error("log="), HasSubstr("empty value"));
  EXPECT_THAT(Error("index"), HasSubstr("needs a value"));
}

TEST(ParseOptionsError, SecErrors) {
  EXPECT_THAT(Error("sec="), HasSubstr("empty security mode list"));
  EXPECT_THAT(Error("sec"), HasSubstr("needs a value"));
  EXPECT_THAT(Error("sec=krb6"),
              HasSubstr("option \"sec=krb6\": unknown security mode \"krb6\""));
  EXPECT_THAT(Error("sec=sys:"), HasSubstr("empty security mode"));
  EXPECT_THAT(Error("sec=krb5:krb5"), HasSubstr("named twice"));
}

TEST(ParseOptionsError, LaterSecNamingUsedFlavor) {
  EXPECT_THAT(Error("sec=krb5,rw,sec=krb5,ro"),
              HasSubstr("option \"sec=krb5\": security mode \"krb5\" already"));
  EXPECT_THAT(Error("sec=krb5:sys,rw,sec=sys"), HasSubstr("already"));
  // Options before any sec= are the sys scope.
  EXPECT_THAT(Error("rw,sec=sys,ro"), HasSubstr("already"));
}

TEST(ParseOptionsError, ControlCharacters) {
  EXPECT_THAT(Error("index=a\tb"), HasSubstr("control character"));
  EXPECT_THAT(Error("rw=a\nb"), HasSubstr("control character"));
  EXPECT_THAT(Error(std::string("log=a\0b", 7)),
              HasSubstr("control character"));
}

TEST(ParseOptionsError, OverLongTextValue) {
  std::string ok(1024, 'f');
  EXPECT_EQ(Parse("index=" + ok).index, ok);
  EXPECT_EQ(Parse("log=" + ok).log_tag, ok);
  EXPECT_THAT(Error("index=" + ok + "f"),
              HasSubstr("value longer than 1024 bytes (1025)"));
  EXPECT_THAT(Error("log=" + ok + "f"), HasSubstr("value longer than 1024"));
}

TEST(ParseOptionsError, OverLongListEntry) {
  std::string ok(255, 'h');
  EXPECT_EQ(Parse("rw=" + ok).scopes[0].rw->entries[0].name, ok);
  std::string msg = Error("rw=a:" + ok + "h");
  EXPECT_THAT(msg, HasSubstr("longer than 255 characters"));
  EXPECT_LT(msg.size(), 300u);  // the message shows a prefix only
  EXPECT_THAT(Error("rw=-" + ok), HasSubstr("longer than 255"));  // "-" counts
}

TEST(ParseOptionsError, OverLongOptionString) {
  // 64 KiB of valid options is accepted; one byte more is not.
  std::string text = "rw=";
  while (text.size() + 2 <= 64 * 1024) text += "h:";
  text.resize(64 * 1024 - 1);
  text += "h";
  ASSERT_EQ(text.size(), 64u * 1024);
  EXPECT_TRUE(ParseOptions(text).ok());
  std::string msg = Error(text + "h");
  EXPECT_THAT(msg, HasSubstr("longer than 65536 bytes (65537)"));
  EXPECT_LT(msg.size(), 200u);
}

// ---- Canonical text and round trip ----

TEST(Canonical, DefaultIsEmpty) { EXPECT_EQ(Parse("").Canonical(), ""); }

TEST(Canonical, FixedOrder) {
  EXPECT_EQ(Parse("window=5,nosuid,root=r,anon=0,rw=a,ro").Canonical(),
            "ro,rw=a,root=r,anon=0,nosuid,window=5");
  EXPECT_EQ(Parse("sec=sys,rw,sec=krb5,ro,nosub").Canonical(),
            "nosub,sec=sys,rw,sec=krb5,ro");
}

TEST(Canonical, EntriesAreNormalized) {
  EXPECT_EQ(Parse("rw=@fe80::/10:.EXAMPLE.com:@10.1:[0:0::1]").Canonical(),
            "rw=@[fe80::]/10:.example.com:@10.1.0.0/16:[::1]");
  EXPECT_EQ(Parse("rw=[::ffff:10.1.2.3]").Canonical(), "rw=10.1.2.3");
}

TEST(Canonical, AccessEntryForms) {
  EXPECT_EQ(Entry("-*").Canonical(), "-*");
  EXPECT_EQ(Entry("@10.1.2.3").Canonical(), "@10.1.2.3");
  EXPECT_EQ(Entry("@engnet/8").Canonical(), "@engnet/8");
  EXPECT_EQ(Entry(".").Canonical(), ".");
  EXPECT_EQ(Entry("-[fe80::1]").Canonical(), "-[fe80::1]");
  EXPECT_EQ(Entry("Host").Canonical(), "Host");
}

class RoundTrip : public ::testing::TestWithParam<const char*> {};

TEST_P(RoundTrip, CanonicalParsesToEqualValueAndIsAFixedPoint) {
  ShareOptions o = Parse(GetParam());
  std::string c = o.Canonical();
  absl::StatusOr<ShareOptions> again = ParseOptions(c);
  ASSERT_TRUE(again.ok()) << c << ": " << again.status().message();
  EXPECT_EQ(*again, o) << GetParam() << " -> " << c;
  EXPECT_EQ(again->Canonical(), c);
}

INSTANTIATE_TEST_SUITE_P(
    Inputs, RoundTrip,
    ::testing::Values(
        "", "rw", "ro", "rw=a", "ro=a:b:c", "root=r", "none=n", "anon=0",
        "anon=-1", "anon=4294967294", "root_mapping=0", "root_mapping=-1",
        "nosuid", "nosub", "nohide", "mountpoint", "rw,mountpoint", "public",
        "aclok", "index=index.html", "log", "log=tag", "window=0",
        "window=4294967295", "rw,ro=a", "ro,rw=a", "rw=a,ro=b,root=c,none=d",
        "sec=sys", "sec=none", "sec=dh", "sec=krb5", "sec=krb5i", "sec=krb5p",
        "sec=krb5:krb5i:krb5p,rw", "sec=krb5,rw=a,sec=sys,ro", "ro,sec=krb5,rw",
        "nosuid,sec=krb5,rw", "sec=krb5,nosuid,rw",
        "sec=sys:krb5,rw=@10.0.0.0/8,root=admin,sec=dh,ro,root_mapping=0",
        "rw=*", "rw=-*", "rw=@10.1.0.0/16", "rw=@10.1.2.3/16", "rw=@10.1.2.3",
        "rw=@10", "rw=@10.1", "rw=@10.1.2", "rw=@10.1/20", "rw=@0.0.0.0/0",
        "rw=@255.255.255.255/32", "rw=@fe80::/10", "rw=@[fe80::]/10",
        "rw=@::/0", "rw=@[::1]/128", "rw=@2001:db8::1", "rw=@fe80::1:abc",
        "rw=@engnet", "rw=@engnet/24", "rw=.", "rw=.example.com",
        "rw=.Example.COM", "rw=10.1.2.3", "rw=[fe80::1]", "rw=[::ffff:1.2.3.4]",
        "rw=host", "rw=Host.Dom", "rw=ng_1",
        "rw=-host:-@10.0.0.0/8:-.dom:-.:-[::1]:-@engnet",
        "rw=@fe80::/10:host:@2001:db8::/32:-@::1",
        "none=bad,rw=@10.0.0.0/8:.example.com,ro=*,root=admin:10.1.1.1",
        "anon=65534,nosuid,nosub,nohide,public,aclok,index=i,log=t,window=9",
        "index=a b c", "log=x=y", "index=/a/b:c",
        "sec=krb5p,none=x,sec=none,rw,sec=sys,ro=a,anon=5"));

// A round trip over generated combinations: every option kind in every
// position of a few scopes.
TEST(RoundTripGenerated, ManyCombinations) {
  const std::vector<std::string> access = {"rw",
                                           "ro",
                                           "rw=h1:-h2",
                                           "ro=@10.0.0.0/8:.dom",
                                           "root=r:@fe80::/64",
                                           "none=-*:.",
                                           "root_mapping=7"};
  const std::vector<std::string> globals = {
      "",    "nosuid", "anon=-1",  "index=x",
      "log", "log=t",  "window=3", "nosub,nohide,public,aclok"};
  const std::vector<std::string> secs = {"", "sec=krb5", "sec=sys:dh",
                                         "sec=none:krb5i"};
  int checked = 0;
  for (const std::string& g : globals) {
    for (const std::string& s : secs) {
      for (std::size_t i = 0; i < access.size(); ++i) {
        for (std::size_t j = i + 1; j < access.size(); ++j) {
          if (access[i] == "rw" && access[j] == "ro") continue;
          std::string text = access[i] + "," + access[j];
          if (!s.empty()) text = s + "," + text;
          if (!g.empty()) text = g + "," + text;
          absl::StatusOr<ShareOptions> o = ParseOptions(text);
          ASSERT_TRUE(o.ok()) << text << ": " << o.status().message();
          absl::StatusOr<ShareOptions> again = ParseOptions(o->Canonical());
          ASSERT_TRUE(again.ok()) << o->Canonical();
          EXPECT_EQ(*again, *o) << text << " -> " << o->Canonical();
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 500);
}

// Random strings built from grammar fragments: whatever parses must round
// trip, and nothing may crash (the ASan build runs this too).
TEST(RoundTripGenerated, RandomFragmentSoup) {
  const std::vector<std::string> frags = {"rw",
                                          "ro",
                                          "rw=",
                                          "ro=",
                                          "root=",
                                          "none=",
                                          "sec=",
                                          "krb5",
                                          "sys",
                                          "dh",
                                          ":",
                                          ",",
                                          "@",
                                          "10.0.0.0",
                                          "/8",
                                          "/33",
                                          "/0",
                                          "fe80::",
                                          "[",
                                          "]",
                                          "-",
                                          ".",
                                          "*",
                                          "host",
                                          ".Dom",
                                          "anon=",
                                          "-1",
                                          "5",
                                          "nosuid",
                                          "log",
                                          "log=",
                                          "index=",
                                          "window=",
                                          "=",
                                          "::",
                                          "1",
                                          "root_mapping=",
                                          "public",
                                          "::ffff:1.2.3.4",
                                          "10.1"};
  std::mt19937 rng(12345);
  int parsed = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::string text;
    int n = 1 + static_cast<int>(rng() % 12);
    for (int k = 0; k < n; ++k) text += frags[rng() % frags.size()];
    absl::StatusOr<ShareOptions> o = ParseOptions(text);
    if (!o.ok()) continue;
    ++parsed;
    std::string c = o->Canonical();
    absl::StatusOr<ShareOptions> again = ParseOptions(c);
    ASSERT_TRUE(again.ok())
        << text << " -> " << c << ": " << again.status().message();
    ASSERT_EQ(*again, *o) << text << " -> " << c;
    ASSERT_EQ(again->Canonical(), c) << text;
  }
  EXPECT_GT(parsed, 1000);
}

TEST(ParseOptions, LongListOfHexLikeNamesParses) {
  // Every entry looks like the start of an unbracketed IPv6 network.
  std::string text = "rw=@a";
  while (text.size() < 60000) text += ":@a:b";
  absl::StatusOr<ShareOptions> o = ParseOptions(text);
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_GT(o->scopes[0].rw->entries.size(), 20000u);
  EXPECT_EQ(o->scopes[0].rw->entries[0].kind, Kind::kNetworkName);
}

TEST(Equality, DiffersWhenAnyFieldDiffers) {
  const ShareOptions base = Parse("rw=a");
  for (const char* other :
       {"rw=b",        "rw=-a",        "ro=a",          "rw=a,nosuid",
        "rw=a,anon=1", "rw=a:b",       "rw=a,window=1", "rw=a,log",
        "rw=a,log=x",  "rw=a,index=i", "sec=krb5,rw=a", "rw=a,root_mapping=0",
        "rw=a,root=a", "rw=a,none=a",  "rw=a,nosub",    "rw=a,nohide",
        "rw=a,public", "rw=a,aclok",   "rw,rw=a",       "ro,rw=a"}) {
    EXPECT_FALSE(Parse(other) == base) << other;
  }
  EXPECT_EQ(Parse("rw=a"), base);
}

// ---- Per-property inheritance (InheritOptions and friends).

std::string Inherit(std::string_view group, std::string_view own) {
  return InheritOptions(Parse(group), Parse(own)).Canonical();
}

TEST(InheritOptionsTest, ShareListOverridesGroupListAndKeepsOtherProperties) {
  EXPECT_EQ(Inherit("root=adminhost", "rw=@127.0.0.0/8,nosuid"),
            "rw=@127.0.0.0/8,root=adminhost,nosuid");
}

TEST(InheritOptionsTest, AccessListIsReplacedWholeNotMergedEntryByEntry) {
  EXPECT_EQ(Inherit("rw=a:b,root=c", "rw=d"), "rw=d,root=c");
}

TEST(InheritOptionsTest, ShareWithOnlyGlobalOptionsKeepsGroupAccess) {
  EXPECT_EQ(Inherit("ro=@10.0.0.0/8,anon=-1", "nosuid,anon=5"),
            "ro=@10.0.0.0/8,anon=5,nosuid");
}

TEST(InheritOptionsTest, BareRwOfShareDropsInheritedBareRo) {
  EXPECT_EQ(Inherit("ro,root=a", "rw"), "rw,root=a");
  EXPECT_EQ(Inherit("rw", "ro"), "ro");
  // "rw,ro=LIST" is a valid combination and stays.
  EXPECT_EQ(Inherit("rw", "ro=a"), "ro=a,rw");
}

TEST(InheritOptionsTest, SameFlavorScopeMergesPerProperty) {
  EXPECT_EQ(Inherit("sec=krb5,rw=a,root=b", "sec=krb5,rw=c"),
            "sec=krb5,rw=c,root=b");
}

TEST(InheritOptionsTest, NewScopeIsAddedAfterGroupScopes) {
  EXPECT_EQ(Inherit("rw=a", "sec=krb5,ro"), "sec=sys,rw=a,sec=krb5,ro");
}

TEST(InheritOptionsTest, OverlappingScopeReplacesGroupScope) {
  EXPECT_EQ(Inherit("sec=krb5:krb5i,rw=a,sec=sys,ro", "sec=krb5,rw=b"),
            "sec=sys,ro,sec=krb5,rw=b");
}

TEST(InheritOptionsTest, GroupScopeWithoutAccessOptionIsNotInherited) {
  // "nosuid" opens sec=sys only as a default; a share that writes its
  // own scope does not get it.
  EXPECT_EQ(Inherit("nosuid", "sec=krb5,rw"), "nosuid,sec=krb5,rw");
}

TEST(InheritOptionsTest, ShareScopeWithoutAccessOptionAddsNothing) {
  EXPECT_EQ(Inherit("sec=krb5,rw", "sec=sys"), "sec=krb5,rw");
}

TEST(InheritOptionsTest, EmptyGroupGivesOwnOptions) {
  EXPECT_EQ(InheritOptions(Parse(""), Parse("rw=a,nosub")),
            Parse("rw=a,nosub"));
}

TEST(InheritOptionsTest, ResultAlwaysParsesBack) {
  for (auto [g, o] : std::vector<std::pair<std::string, std::string>>{
           {"rw=a,sec=krb5,ro", "sec=krb5:krb5p,root=b"},
           {"sec=dh,rw,window=5", "log=x,index=i.html"},
           {"public,ro", "sec=none,rw"}}) {
    ShareOptions merged = InheritOptions(Parse(g), Parse(o));
    EXPECT_EQ(Parse(merged.Canonical()), merged) << g << " + " << o;
  }
}

TEST(OptionPropertiesTest, ListsEachPropertyWithItsScope) {
  EXPECT_THAT(OptionProperties(Parse("rw,rw=a,root=b,nosuid,sec=krb5,ro")),
              ElementsAre(OptionProperty{"sec=sys", "rw", "rw,rw=a"},
                          OptionProperty{"sec=sys", "root", "root=b"},
                          OptionProperty{"sec=krb5", "ro", "ro"},
                          OptionProperty{"", "nosuid", "nosuid"}));
  EXPECT_TRUE(OptionProperties(Parse("")).empty());
}

TEST(RemoveOptionPropertyTest, RemovesGlobalAccessAndScopeProperties) {
  EXPECT_EQ(RemoveOptionProperty(Parse("rw=a,nosuid"), "nosuid")->Canonical(),
            "rw=a");
  EXPECT_EQ(RemoveOptionProperty(Parse("rw=a,root=b"), "root")->Canonical(),
            "rw=a");
  EXPECT_EQ(
      RemoveOptionProperty(Parse("rw=a,sec=krb5,ro"), "sec=krb5")->Canonical(),
      "rw=a");
  EXPECT_EQ(RemoveOptionProperty(Parse("log=t"), "log")->Canonical(), "");
}

TEST(RemoveOptionPropertyTest, MissingPropertyIsNotFound) {
  absl::StatusOr<ShareOptions> r =
      RemoveOptionProperty(Parse("rw=a"), "nosuid");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(), "option \"nosuid\": not set");
}

TEST(RemoveOptionPropertyTest, UnknownNameIsInvalid) {
  absl::StatusOr<ShareOptions> r = RemoveOptionProperty(Parse("rw=a"), "rooot");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("no such property"));
}

TEST(OpensToAllTest, FlagsWorldWritableAndRootForAll) {
  EXPECT_TRUE(OpensReadWriteToAll(Parse("")));
  EXPECT_TRUE(OpensReadWriteToAll(Parse("rw")));
  EXPECT_TRUE(OpensReadWriteToAll(Parse("rw=*")));
  EXPECT_TRUE(OpensReadWriteToAll(Parse("nosuid")));
  EXPECT_FALSE(OpensReadWriteToAll(Parse("ro")));
  EXPECT_FALSE(OpensReadWriteToAll(Parse("rw=@10.0.0.0/8")));
  EXPECT_FALSE(OpensReadWriteToAll(Parse("rw,none=*")));
  EXPECT_TRUE(GivesRootToAll(Parse("ro,root=*")));
  EXPECT_TRUE(GivesRootToAll(Parse("rw,root=-adminhost:*")));
  EXPECT_TRUE(OpensReadWriteToAll(Parse("rw=-badhost:*")));
  EXPECT_FALSE(GivesRootToAll(Parse("root=adminhost")));
}

TEST(HostBitsTest, NetworksWrittenWithHostBitsAreNamedWithWhatTheyMatch) {
  std::vector<HostBitsEntry> h = NetworksWithHostBits(
      Parse("rw=@10.0.0.1/8:@10.0.0.0/8:@10.1:10.0.0.1:@192.168.1.7/32,"
            "root=-@[fe80::1]/10:@10.0.0.1/8,ro=@172.16.5.0/23"));
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0].written, "@10.0.0.1/8");
  EXPECT_EQ(h[0].network, "@10.0.0.0/8");
  EXPECT_EQ(h[1].written, "@172.16.5.0/23");
  EXPECT_EQ(h[1].network, "@172.16.4.0/23");
  EXPECT_EQ(h[2].written, "@[fe80::1]/10");
  EXPECT_EQ(h[2].network, "@[fe80::]/10");
  EXPECT_TRUE(NetworksWithHostBits(Parse("rw=@10.0.0.0/8:@[fe80::]/10,"
                                         "ro=@10.1.2.3/32:@0.0.0.0/0"))
                  .empty());
}

}  // namespace
}  // namespace libshare

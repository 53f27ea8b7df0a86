// Access-list evaluation: one row per rule of DESIGN.md "Option grammar".
#include "authcache/evaluate.h"

#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "fakes.h"
#include "gtest/gtest.h"

namespace authcache {
namespace {

using libshare::SecFlavor;
using testing::Ip;
using testing::Opts;

// A client whose names and netgroups are given directly; counts what
// evaluation asked.
class FakeIdentity : public ClientIdentity {
 public:
  explicit FakeIdentity(std::string_view addr) : addr_(Ip(addr)) {}
  const libshare::IpAddress& address() const override { return addr_; }
  absl::StatusOr<std::vector<std::string>> Names() override {
    ++names_asked;
    if (fail_names) return absl::UnavailableError("names down");
    return names;
  }
  // Records which names evaluation wanted confirmed.
  absl::StatusOr<std::vector<std::string>> NamesMatching(
      absl::FunctionRef<bool(std::string_view)> wanted) override {
    ++names_asked;
    if (fail_names) return absl::UnavailableError("names down");
    std::vector<std::string> out;
    for (const std::string& n : names) {
      if (!wanted(n)) continue;
      names_wanted.push_back(n);
      out.push_back(n);
    }
    return out;
  }
  absl::StatusOr<bool> InNetgroup(std::string_view netgroup) override {
    ++netgroups_asked;
    if (fail_netgroups) return absl::UnavailableError("netgroups down");
    return netgroups.count(std::string(netgroup)) > 0;
  }
  absl::StatusOr<std::optional<libshare::IpAddress>> NetworkNamed(
      std::string_view name) override {
    auto it = networks.find(std::string(name));
    if (it == networks.end()) return std::nullopt;
    return it->second;
  }

  std::vector<std::string> names;
  std::set<std::string> netgroups;
  std::map<std::string, libshare::IpAddress> networks;
  bool fail_names = false;
  bool fail_netgroups = false;
  int names_asked = 0;
  std::vector<std::string> names_wanted;
  int netgroups_asked = 0;

 private:
  libshare::IpAddress addr_;
};

struct Row {
  const char* test_name;
  const char* options;
  const char* address;
  std::vector<std::string> names;
  std::set<std::string> netgroups;
  SecFlavor flavor;
  uint32_t uid;
  Access access;
  bool root;
  const char* option;  // Decision.option expected
  const char* entry;   // Decision.entry expected
};

// Keeps ctest's test names short: a row prints as its options and client.
void PrintTo(const Row& r, std::ostream* os) {
  *os << '"' << r.options << "\" for " << r.address;
}

constexpr SecFlavor kSys = SecFlavor::kSys;
constexpr SecFlavor kKrb5 = SecFlavor::kKrb5;
constexpr Access kRw = Access::kRw;
constexpr Access kRo = Access::kRo;
constexpr Access kNone = Access::kNone;

const Row kRows[] = {
    {"NoOptionsGiveEveryoneRw",
     "",
     "10.0.0.1",
     {},
     {},
     kSys,
     1000,
     kRw,
     false,
     "",
     ""},
    {"NoneListMatchDeniesEvenWithRwList",
     "rw=@10.0.0.0/8,none=10.0.0.1",
     "10.0.0.1",
     {},
     {},
     kSys,
     1000,
     kNone,
     false,
     "none=",
     "10.0.0.1"},
    {"NoneListOtherClientUsesRwList",
     "rw=@10.0.0.0/8,none=10.0.0.1",
     "10.0.0.2",
     {},
     {},
     kSys,
     1000,
     kRw,
     false,
     "rw=",
     "@10.0.0.0/8"},
    {"NoneListAloneLeavesOthersRw",
     "none=10.0.0.1",
     "10.0.0.2",
     {},
     {},
     kSys,
     1000,
     kRw,
     false,
     "",
     ""},
    {"RwListUnlistedClientGetsNothing",
     "rw=@10.0.0.0/8",
     "192.168.1.1",
     {},
     {},
     kSys,
     1000,
     kNone,
     false,
     "",
     ""},
    {"BareRwWithRoListListedHostGetsRo",
     "rw,ro=h1",
     "10.0.0.1",
     {"h1"},
     {},
     kSys,
     1000,
     kRo,
     false,
     "ro=",
     "h1"},
    {"BareRwWithRoListOtherHostGetsRw",
     "rw,ro=h1",
     "10.0.0.2",
     {"h2"},
     {},
     kSys,
     1000,
     kRw,
     false,
     "rw",
     ""},
    {"BareRoWithRwListListedHostGetsRw",
     "ro,rw=h1",
     "10.0.0.1",
     {"h1"},
     {},
     kSys,
     1000,
     kRw,
     false,
     "rw=",
     "h1"},
    {"BareRoWithRwListOtherHostGetsRo",
     "ro,rw=h1",
     "10.0.0.2",
     {"h2"},
     {},
     kSys,
     1000,
     kRo,
     false,
     "ro",
     ""},
    {"RwListBeatsRoList",
     "ro=h1,rw=h1",
     "10.0.0.1",
     {"h1"},
     {},
     kSys,
     1000,
     kRw,
     false,
     "rw=",
     "h1"},
    {"RoListOnlyGivesRo",
     "ro=h1",
     "10.0.0.1",
     {"h1"},
     {},
     kSys,
     1000,
     kRo,
     false,
     "ro=",
     "h1"},
    {"DenyBeforeNetgroupDenies",
     "rw=-h1:ng",
     "10.0.0.1",
     {"h1"},
     {"ng"},
     kSys,
     1000,
     kNone,
     false,
     "rw=",
     "-h1"},
    {"DenyAfterNetgroupStillDeniesBecauseNetgroupsComeLast",
     "rw=ng:-h1",
     "10.0.0.1",
     {"h1"},
     {"ng"},
     kSys,
     1000,
     kNone,
     false,
     "rw=",
     "-h1"},
    {"NetgroupMemberGetsAccess",
     "rw=ng:-h2",
     "10.0.0.1",
     {"h1"},
     {"ng"},
     kSys,
     1000,
     kRw,
     false,
     "rw=",
     "ng"},
    {"DeniedInRwListStillGetsRoList",
     "rw=-h1:*,ro=h1",
     "10.0.0.1",
     {"h1"},
     {},
     kSys,
     1000,
     kRo,
     false,
     "ro=",
     "h1"},
    {"FirstMatchWinsDenyFirst",
     "rw=-@10.0.0.0/8:10.0.0.1",
     "10.0.0.1",
     {},
     {},
     kSys,
     1000,
     kNone,
     false,
     "rw=",
     "-@10.0.0.0/8"},
    {"FirstMatchWinsAllowFirst",
     "rw=10.0.0.1:-@10.0.0.0/8",
     "10.0.0.1",
     {},
     {},
     kSys,
     1000,
     kRw,
     false,
     "rw=",
     "10.0.0.1"},
    {"SecKrb5ScopeListedKrb5ClientGetsRw",
     "sec=krb5,rw=a,sec=sys,ro",
     "10.0.0.1",
     {"a"},
     {},
     kKrb5,
     1000,
     kRw,
     false,
     "rw=",
     "a"},
    {"SecKrb5ScopeUnlistedKrb5ClientGetsNothing",
     "sec=krb5,rw=a,sec=sys,ro",
     "10.0.0.2",
     {"b"},
     {},
     kKrb5,
     1000,
     kNone,
     false,
     "",
     ""},
    {"SecSysScopeGivesRoEvenToKrb5ListedHost",
     "sec=krb5,rw=a,sec=sys,ro",
     "10.0.0.1",
     {"a"},
     {},
     kSys,
     1000,
     kRo,
     false,
     "ro",
     ""},
    {"FlavorNotOfferedGetsNothing",
     "sec=krb5,rw",
     "10.0.0.1",
     {},
     {},
     kSys,
     1000,
     kNone,
     false,
     "sec=",
     ""},
    {"RootListGivesRootToUid0",
     "rw,root=h1",
     "10.0.0.1",
     {"h1"},
     {},
     kSys,
     0,
     kRw,
     true,
     "rw",
     ""},
    {"RootListGivesNoRootToOtherUid",
     "rw,root=h1",
     "10.0.0.1",
     {"h1"},
     {},
     kSys,
     1000,
     kRw,
     false,
     "rw",
     ""},
    {"RootListGivesNoRootToUnlistedUid0",
     "rw,root=h1",
     "10.0.0.2",
     {"h2"},
     {},
     kSys,
     0,
     kRw,
     false,
     "rw",
     ""},
    {"RootListGivesNoRootWithoutAccess",
     "rw=h2,root=h1",
     "10.0.0.1",
     {"h1"},
     {},
     kSys,
     0,
     kNone,
     false,
     "",
     ""},
    {"RootIsOnlyForAuthSys",
     "sec=krb5,rw,root=h1",
     "10.0.0.1",
     {"h1"},
     {},
     kKrb5,
     0,
     kRw,
     false,
     "rw",
     ""},
    {"Ipv6NetworkMatches",
     "rw=@[fe80::]/10",
     "fe80::1",
     {},
     {},
     kSys,
     1000,
     kRw,
     false,
     "rw=",
     "@[fe80::]/10"},
    {"Ipv6NetworkRejectsOutsider",
     "rw=@[fe80::]/10",
     "2001:db8::1",
     {},
     {},
     kSys,
     1000,
     kNone,
     false,
     "",
     ""},
    {"Ipv4NetworkNeverMatchesIpv6Client",
     "rw=@0.0.0.0/0",
     "2001:db8::1",
     {},
     {},
     kSys,
     1000,
     kNone,
     false,
     "",
     ""},
    {"Ipv4NetworkWithoutLengthImpliesIt",
     "rw=@10.0.0.0",
     "10.200.1.1",
     {},
     {},
     kSys,
     1000,
     kRw,
     false,
     "rw=",
     "@10.0.0.0"},
    {"Ipv6AddressEntryMatchesExactly",
     "rw=[2001:db8::5]",
     "2001:db8::5",
     {},
     {},
     kSys,
     1000,
     kRw,
     false,
     "rw=",
     "[2001:db8::5]"},
    {"LoneDotMatchesDotlessName",
     "rw=.",
     "10.0.0.1",
     {"h1"},
     {},
     kSys,
     1000,
     kRw,
     false,
     "rw=",
     "."},
    {"LoneDotRejectsDottedName",
     "rw=.",
     "10.0.0.1",
     {"h1.example.com"},
     {},
     kSys,
     1000,
     kNone,
     false,
     "",
     ""},
    {"DomainSuffixMatchesCaseInsensitively",
     "rw=.EXAMPLE.Com",
     "10.0.0.1",
     {"h1.example.com"},
     {},
     kSys,
     1000,
     kRw,
     false,
     "rw=",
     ".example.com"},
    {"DomainSuffixNeedsDotBoundary",
     "rw=.example.com",
     "10.0.0.1",
     {"badexample.com"},
     {},
     kSys,
     1000,
     kNone,
     false,
     "",
     ""},
    {"DomainSuffixDoesNotMatchTheDomainItself",
     "rw=.example.com",
     "10.0.0.1",
     {"example.com"},
     {},
     kSys,
     1000,
     kNone,
     false,
     "",
     ""},
    {"HostNameMatchIgnoresCase",
     "rw=Host1.Example.COM",
     "10.0.0.1",
     {"host1.example.com"},
     {},
     kSys,
     1000,
     kRw,
     false,
     "rw=",
     "Host1.Example.COM"},
    {"StarMatchesEveryone",
     "ro=*",
     "10.9.9.9",
     {},
     {},
     kSys,
     1000,
     kRo,
     false,
     "ro=",
     "*"},
    {"NameListWithoutNamesMatchesNothing",
     "rw=h1",
     "10.0.0.1",
     {},
     {},
     kSys,
     1000,
     kNone,
     false,
     "",
     ""},
};

class DecisionTable : public ::testing::TestWithParam<Row> {};

TEST_P(DecisionTable, GivesExpectedDecision) {
  const Row& r = GetParam();
  FakeIdentity id(r.address);
  id.names = r.names;
  id.netgroups = r.netgroups;
  Decision d = Evaluate(*Opts(r.options), id, r.flavor, r.uid);
  EXPECT_EQ(d.access, r.access) << d.reason;
  EXPECT_EQ(d.root, r.root) << d.reason;
  EXPECT_EQ(d.option, r.option) << d.reason;
  EXPECT_EQ(d.entry, r.entry) << d.reason;
  EXPECT_FALSE(d.reason.empty());
  EXPECT_FALSE(d.lookup_failed);
}

INSTANTIATE_TEST_SUITE_P(Rules, DecisionTable, ::testing::ValuesIn(kRows),
                         [](const ::testing::TestParamInfo<Row>& info) {
                           return std::string(info.param.test_name);
                         });

TEST(Evaluate, NoListMatchedNamesClientAndList) {
  FakeIdentity id("10.1.2.3");
  Decision d = Evaluate(*Opts("rw=@192.168.0.0/16"), id, SecFlavor::kSys, 0);
  EXPECT_EQ(d.reason, "10.1.2.3 matches no entry of rw=@192.168.0.0/16");
}

TEST(Evaluate, NoListMatchedNamesEveryListConsulted) {
  FakeIdentity id("10.1.2.3");
  Decision d = Evaluate(*Opts("rw=@192.168.0.0/16,ro=@172.16.0.0/12:.example"),
                        id, SecFlavor::kSys, 0);
  EXPECT_EQ(d.reason,
            "10.1.2.3 matches no entry of rw=@192.168.0.0/16 or "
            "ro=@172.16.0.0/12:.example");
}

TEST(Evaluate, DenyEntryReasonNamesTheOtherLists) {
  FakeIdentity id("10.1.2.3");
  Decision d = Evaluate(*Opts("rw=-@10.0.0.0/8:*,ro=@192.168.0.0/16"), id,
                        SecFlavor::kSys, 0);
  EXPECT_EQ(d.reason,
            "10.1.2.3 matched -@10.0.0.0/8 in rw= (denied) and no entry of "
            "ro=@192.168.0.0/16");
}

TEST(Evaluate, FlavorNotOfferedReasonNamesFlavor) {
  FakeIdentity id("10.0.0.1");
  Decision d = Evaluate(*Opts("sec=krb5,rw"), id, SecFlavor::kSys, 0);
  EXPECT_NE(d.reason.find("sec=sys"), std::string::npos) << d.reason;
}

TEST(Evaluate, AddressEntryDecidesWithoutAskingNames) {
  FakeIdentity id("10.0.0.1");
  Decision d =
      Evaluate(*Opts("rw=10.0.0.1:h1:.example.com"), id, SecFlavor::kSys, 1000);
  EXPECT_EQ(d.access, Access::kRw);
  EXPECT_EQ(id.names_asked, 0);
  EXPECT_EQ(id.netgroups_asked, 0);
}

TEST(Evaluate, NetworkListsNeverAskNames) {
  FakeIdentity id("192.168.1.1");
  Decision d = Evaluate(*Opts("rw=@10.0.0.0/8,ro=@172.16.0.0/12,root=10.0.0.1"),
                        id, SecFlavor::kSys, 0);
  EXPECT_EQ(d.access, Access::kNone);
  EXPECT_EQ(id.names_asked, 0);
}

TEST(Evaluate, OnlyNamesAnEntryCouldMatchAreAskedFor) {
  FakeIdentity id("10.0.0.1");
  id.names = {"zz.b.com", "zz"};
  Decision d =
      Evaluate(*Opts("rw=h1:.a.com:h2,ro=h3:.,root=h4"), id, SecFlavor::kSys, 0);
  EXPECT_EQ(d.access, Access::kRo);
  // "." (a dotless name) is the one entry a name of the client fits.
  EXPECT_EQ(id.names_wanted, std::vector<std::string>{"zz"});
}

TEST(Evaluate, NetgroupsTriedOnlyAfterHostEntries) {
  FakeIdentity id("10.0.0.1");
  id.names = {"h1"};
  id.netgroups = {"ng"};
  Decision d = Evaluate(*Opts("rw=ng:h1"), id, SecFlavor::kSys, 1000);
  EXPECT_EQ(d.entry, "h1");
  EXPECT_EQ(id.netgroups_asked, 0);
}

TEST(Evaluate, NetworkNameMatchesItsNetwork) {
  FakeIdentity id("10.1.2.3");
  id.networks["engnet"] = Ip("10.1.0.0");
  Decision d = Evaluate(*Opts("rw=@engnet"), id, SecFlavor::kSys, 1000);
  EXPECT_EQ(d.access, Access::kRw);
  EXPECT_EQ(d.entry, "@engnet");
}

TEST(Evaluate, UnknownNetworkNameMatchesNothing) {
  FakeIdentity id("10.1.2.3");
  Decision d = Evaluate(*Opts("rw=@nosuchnet"), id, SecFlavor::kSys, 1000);
  EXPECT_EQ(d.access, Access::kNone);
}

TEST(Evaluate, FailedNameLookupRefusesAndSaysSo) {
  FakeIdentity id("10.0.0.1");
  id.fail_names = true;
  Decision d = Evaluate(*Opts("rw=-badhost:*"), id, SecFlavor::kSys, 1000);
  EXPECT_EQ(d.access, Access::kNone);
  EXPECT_TRUE(d.lookup_failed);
  EXPECT_NE(d.reason.find("lookup failed"), std::string::npos) << d.reason;
}

TEST(Evaluate, FailedNameLookupInNoneListRefuses) {
  FakeIdentity id("10.0.0.1");
  id.fail_names = true;
  Decision d = Evaluate(*Opts("none=badhost"), id, SecFlavor::kSys, 1000);
  EXPECT_EQ(d.access, Access::kNone);
  EXPECT_TRUE(d.lookup_failed);
}

TEST(Evaluate, FailedNetgroupLookupRefuses) {
  FakeIdentity id("10.0.0.1");
  id.names = {"h1"};
  id.fail_netgroups = true;
  Decision d = Evaluate(*Opts("rw=ng"), id, SecFlavor::kSys, 1000);
  EXPECT_EQ(d.access, Access::kNone);
  EXPECT_TRUE(d.lookup_failed);
}

TEST(Evaluate, AddressDecidedBeforeFailingNameEntryStillGrants) {
  FakeIdentity id("10.0.0.1");
  id.fail_names = true;
  Decision d = Evaluate(*Opts("rw=@10.0.0.0/8:h1"), id, SecFlavor::kSys, 1000);
  EXPECT_EQ(d.access, Access::kRw);
  EXPECT_FALSE(d.lookup_failed);
}

TEST(Evaluate, FailedRootLookupKeepsAccessButNotRoot) {
  FakeIdentity id("10.0.0.1");
  id.fail_names = true;
  Decision d = Evaluate(*Opts("rw,root=admin"), id, SecFlavor::kSys, 0);
  EXPECT_EQ(d.access, Access::kRw);
  EXPECT_FALSE(d.root);
  EXPECT_TRUE(d.lookup_failed);
}

TEST(AccessName, NamesEachAccess) {
  EXPECT_EQ(AccessName(Access::kRw), "rw");
  EXPECT_EQ(AccessName(Access::kRo), "ro");
  EXPECT_EQ(AccessName(Access::kNone), "none");
}

}  // namespace
}  // namespace authcache

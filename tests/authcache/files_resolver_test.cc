// The files resolver: hosts(5) and netgroup(5) parsing, nesting, cycles,
// reload; and a smoke test of the system resolver.
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "authcache/auth_cache.h"
#include "authcache/resolver.h"
#include "fakes.h"
#include "gtest/gtest.h"

namespace authcache {
namespace {

using testing::Ip;
using testing::Opts;

class FilesResolverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl =
        absl::StrCat(::testing::TempDir(), "/authcache_files_XXXXXX");
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    hosts_ = dir_ + "/hosts";
    netgroup_ = dir_ + "/netgroup";
  }
  void TearDown() override {
    unlink(hosts_.c_str());
    unlink(netgroup_.c_str());
    rmdir(dir_.c_str());
  }
  static void Write(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
  }
  std::unique_ptr<Resolver> Make(const std::string& hosts,
                                 const std::string& netgroups) {
    Write(hosts_, hosts);
    Write(netgroup_, netgroups);
    absl::StatusOr<std::unique_ptr<Resolver>> r =
        MakeFilesResolver(hosts_, netgroup_);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *std::move(r) : nullptr;
  }

  std::string dir_, hosts_, netgroup_;
};

TEST_F(FilesResolverTest, HostsGivesNamesAndAliasesInLowerCase) {
  auto r = Make(
      "# comment\n10.0.0.1  Alpha.Example.com alpha  # trailing\n"
      "\n2001:db8::1\tsix\n",
      "");
  absl::StatusOr<std::vector<std::string>> names = r->NamesOf(Ip("10.0.0.1"));
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, (std::vector<std::string>{"alpha.example.com", "alpha"}));
  names = r->NamesOf(Ip("2001:db8::1"));
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, std::vector<std::string>{"six"});
}

TEST_F(FilesResolverTest, HostsForwardLookupIgnoresCase) {
  auto r = Make("10.0.0.1 alpha\n10.0.0.2 alpha\n", "");
  absl::StatusOr<std::vector<libshare::IpAddress>> a = r->AddressesOf("ALPHA");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a,
            (std::vector<libshare::IpAddress>{Ip("10.0.0.1"), Ip("10.0.0.2")}));
}

TEST_F(FilesResolverTest, UnknownAddressHasNoNameAndIsNoError) {
  auto r = Make("10.0.0.1 alpha\n", "");
  absl::StatusOr<std::vector<std::string>> names = r->NamesOf(Ip("10.0.0.9"));
  ASSERT_TRUE(names.ok());
  EXPECT_TRUE(names->empty());
  absl::StatusOr<std::vector<libshare::IpAddress>> a = r->AddressesOf("nope");
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->empty());
}

TEST_F(FilesResolverTest, BadHostsLineNamesFileAndLine) {
  Write(hosts_, "10.0.0.1 alpha\n\nnot-an-address beta\n");
  absl::StatusOr<std::unique_ptr<Resolver>> r = MakeFilesResolver(hosts_, "");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(hosts_ + ":3:"), std::string::npos)
      << r.status();
  EXPECT_NE(r.status().message().find("not-an-address"), std::string::npos);
}

TEST_F(FilesResolverTest, HostsLineWithoutNameIsAnError) {
  Write(hosts_, "10.0.0.1\n");
  absl::StatusOr<std::unique_ptr<Resolver>> r = MakeFilesResolver(hosts_, "");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(hosts_ + ":1:"), std::string::npos);
}

TEST_F(FilesResolverTest, MissingFileIsAnErrorNamingIt) {
  absl::StatusOr<std::unique_ptr<Resolver>> r =
      MakeFilesResolver(dir_ + "/absent", "");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(dir_ + "/absent"), std::string::npos);
}

TEST_F(FilesResolverTest, EmptyPathsMeanNoSource) {
  absl::StatusOr<std::unique_ptr<Resolver>> r = MakeFilesResolver("", "");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE((*r)->NamesOf(Ip("10.0.0.1"))->empty());
  EXPECT_FALSE(*(*r)->InNetgroup("ng", "alpha"));
}

TEST_F(FilesResolverTest, NetgroupTripleHostMatchesIgnoringCase) {
  auto r = Make("", "eng (Alpha,,) (beta,user,dom)\n");
  EXPECT_TRUE(*r->InNetgroup("eng", "alpha"));
  EXPECT_TRUE(*r->InNetgroup("eng", "BETA"));
  EXPECT_FALSE(*r->InNetgroup("eng", "gamma"));
}

TEST_F(FilesResolverTest, NestedNetgroupsAreFollowed) {
  auto r = Make("",
                "all eng ops\neng (alpha,,)\nops (beta,-,) deeper\n"
                "deeper (gamma,,)\n");
  EXPECT_TRUE(*r->InNetgroup("all", "alpha"));
  EXPECT_TRUE(*r->InNetgroup("all", "gamma"));
  EXPECT_FALSE(*r->InNetgroup("eng", "gamma"));
}

TEST_F(FilesResolverTest, NetgroupCycleEnds) {
  auto r = Make("", "a b (alpha,,)\nb c\nc a (gamma,,)\n");
  EXPECT_TRUE(*r->InNetgroup("b", "alpha"));
  EXPECT_TRUE(*r->InNetgroup("a", "gamma"));
  EXPECT_FALSE(*r->InNetgroup("a", "nobody"));
}

TEST_F(FilesResolverTest, EmptyHostFieldMatchesAnyHost) {
  auto r = Make("", "everyone (,user,)\n");
  EXPECT_TRUE(*r->InNetgroup("everyone", "whoever"));
}

TEST_F(FilesResolverTest, DashHostFieldMatchesNoHost) {
  auto r = Make("", "users (-,alice,)\n");
  EXPECT_FALSE(*r->InNetgroup("users", "alpha"));
  EXPECT_FALSE(*r->InNetgroup("users", "-"));
}

TEST_F(FilesResolverTest, UnknownNetgroupHasNoMembers) {
  auto r = Make("", "eng (alpha,,)\n");
  EXPECT_FALSE(*r->InNetgroup("nosuch", "alpha"));
}

TEST_F(FilesResolverTest, NetgroupLinesContinueAfterBackslash) {
  auto r = Make("", "eng (alpha,,) \\\n    (beta,,)\nops (gamma,,)\n");
  EXPECT_TRUE(*r->InNetgroup("eng", "beta"));
  EXPECT_TRUE(*r->InNetgroup("ops", "gamma"));
}

TEST_F(FilesResolverTest, BadTripleNamesFileAndLine) {
  Write(netgroup_, "eng (alpha,,)\nops (beta,\n");
  absl::StatusOr<std::unique_ptr<Resolver>> r =
      MakeFilesResolver("", netgroup_);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(netgroup_ + ":2:"), std::string::npos)
      << r.status();
}

TEST_F(FilesResolverTest, TripleWithTwoFieldsIsAnError) {
  Write(netgroup_, "eng (alpha,)\n");
  absl::StatusOr<std::unique_ptr<Resolver>> r =
      MakeFilesResolver("", netgroup_);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(":1:"), std::string::npos);
}

TEST_F(FilesResolverTest, ReloadSeesNewContent) {
  auto r = Make("10.0.0.1 alpha\n", "eng (alpha,,)\n");
  Write(hosts_, "10.0.0.1 renamed\n");
  Write(netgroup_, "eng (beta,,)\n");
  ASSERT_TRUE(r->Reload().ok());
  EXPECT_EQ(*r->NamesOf(Ip("10.0.0.1")), std::vector<std::string>{"renamed"});
  EXPECT_FALSE(*r->InNetgroup("eng", "alpha"));
}

TEST_F(FilesResolverTest, FailedReloadKeepsOldContent) {
  auto r = Make("10.0.0.1 alpha\n", "");
  Write(hosts_, "garbage\n");
  EXPECT_FALSE(r->Reload().ok());
  EXPECT_EQ(*r->NamesOf(Ip("10.0.0.1")), std::vector<std::string>{"alpha"});
}

TEST_F(FilesResolverTest, CacheWithFilesGrantsNetgroupMember) {
  std::shared_ptr<Resolver> r =
      Make("10.0.0.1 alpha.example.com\n", "farm (alpha.example.com,,)\n");
  AuthCache cache(r, AuthCacheConfig{});
  const std::shared_ptr<const libshare::ShareOptions> farm = Opts("rw=farm");
  Decision d =
      cache.Check(Ip("10.0.0.1"), farm, libshare::SecFlavor::kSys, 1000);
  EXPECT_EQ(d.access, Access::kRw) << d.reason;
  EXPECT_EQ(d.entry, "farm");
  d = cache.Check(Ip("10.0.0.2"), farm, libshare::SecFlavor::kSys, 1000);
  EXPECT_EQ(d.access, Access::kNone) << d.reason;
}

TEST(SystemResolver, LocalhostResolvesToLoopback) {
  std::unique_ptr<Resolver> r = MakeSystemResolver();
  absl::StatusOr<std::vector<libshare::IpAddress>> a =
      r->AddressesOf("localhost");
  ASSERT_TRUE(a.ok()) << a.status();
  bool loopback = false;
  for (const libshare::IpAddress& x : *a) {
    loopback = loopback || x == Ip("127.0.0.1") || x == Ip("::1");
  }
  EXPECT_TRUE(loopback);
}

TEST(SystemResolver, UnknownNetgroupHasNoMembers) {
  std::unique_ptr<Resolver> r = MakeSystemResolver();
  absl::StatusOr<bool> in = r->InNetgroup("sharemgr-no-such-group", "host");
  ASSERT_TRUE(in.ok());
  EXPECT_FALSE(*in);
}

TEST(SystemResolver, UnknownNetworkNameIsNoMatch) {
  std::unique_ptr<Resolver> r = MakeSystemResolver();
  absl::StatusOr<std::optional<libshare::IpAddress>> n =
      r->NetworkNamed("sharemgr-no-such-net");
  ASSERT_TRUE(n.ok());
  EXPECT_FALSE(n->has_value());
}

TEST(RealClock, Advances) {
  absl::Time a = RealClock()->Now();
  absl::SleepFor(absl::Milliseconds(2));
  EXPECT_GT(RealClock()->Now(), a);
}

}  // namespace
}  // namespace authcache

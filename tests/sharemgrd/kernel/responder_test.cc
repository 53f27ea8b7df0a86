#include "kernel/responder.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernel/fsid.h"
#include "kernel_fixture.h"

namespace sharemgrd::kernel {
namespace {

using ::testing::HasSubstr;
using testing::Ip;
using testing::kNow;

class ResponderTest : public testing::KernelFixture {
 protected:
  std::string Pos(const std::string& client, const std::string& path,
                  uint32_t flags) {
    return absl::StrCat("$", client, " ", path, " ", kNow + 1800, " ", flags,
                        " 65534 65534 0 secinfo 1 1 ", flags, "\n");
  }
  std::string Neg(const std::string& client, const std::string& path, int ttl) {
    return absl::StrCat("$", client, " ", path, " ", kNow + ttl, "\n");
  }
};

TEST_F(ResponderTest, IpAnswerIsThePerAddressDomain) {
  auto r = MakeResponder();
  auto up = ParseIpUpcall("nfsd 10.0.0.1\n");
  ASSERT_TRUE(up.ok());
  Answer a = r->Ip(*up);
  EXPECT_EQ(a.line,
            absl::StrCat("nfsd 10.0.0.1 ", kNow + 1800, " $10.0.0.1\n"));
  EXPECT_FALSE(a.negative);
}

TEST_F(ResponderTest, IpAnswerIsTheSameWithOrWithoutShares) {
  auto before = MakeResponder()->Ip(*ParseIpUpcall("nfsd 10.0.0.1\n"));
  Share("a", "rw=10.0.0.2");
  auto after = MakeResponder()->Ip(*ParseIpUpcall("nfsd 10.0.0.1\n"));
  EXPECT_EQ(before.line, after.line);
}

TEST_F(ResponderTest, IpOfAnotherClassIsNegative) {
  Answer a = MakeResponder()->Ip(*ParseIpUpcall("lockd 10.0.0.1\n"));
  EXPECT_EQ(a.line, absl::StrCat("lockd 10.0.0.1 ", kNow + 60, "\n"));
  EXPECT_TRUE(a.negative);
}

TEST_F(ResponderTest, RwShareGivesTheExactLine) {
  const std::string p = Share("a");
  Answer a = MakeResponder()->Export("$10.0.0.1", p);
  EXPECT_EQ(a.line, Pos("10.0.0.1", p, 0x424));
  EXPECT_FALSE(a.negative);
}

TEST_F(ResponderTest, RoClientGetsReadonly) {
  const std::string p = Share("a", "rw=10.0.0.2,ro=10.0.0.1");
  auto r = MakeResponder();
  EXPECT_EQ(r->Export("$10.0.0.1", p).line, Pos("10.0.0.1", p, 0x425));
  EXPECT_EQ(r->Export("$10.0.0.2", p).line, Pos("10.0.0.2", p, 0x424));
}

TEST_F(ResponderTest, RootClientIsNotSquashed) {
  const std::string p = Share("a", "root=10.0.0.1");
  auto r = MakeResponder();
  EXPECT_EQ(r->Export("$10.0.0.1", p).line, Pos("10.0.0.1", p, 0x420));
  EXPECT_EQ(r->Export("$10.0.0.3", p).line, Pos("10.0.0.3", p, 0x424));
}

TEST_F(ResponderTest, RefusedClientGetsNegativeWithShortExpiry) {
  const std::string p = Share("a", "rw=10.0.0.1");
  Answer a = MakeResponder()->Export("$10.0.0.9", p);
  EXPECT_EQ(a.line, Neg("10.0.0.9", p, 60));
  EXPECT_TRUE(a.negative);
}

TEST_F(ResponderTest, AnonAndSecFlavorsReachTheLine) {
  const std::string p = Share("a", "anon=1000,sec=krb5:sys,rw");
  Answer a = MakeResponder()->Export("$10.0.0.1", p);
  EXPECT_EQ(a.line, absl::StrCat("$10.0.0.1 ", p, " ", kNow + 1800,
                                 " 1060 1000 1000 0 secinfo 2 390003 1060 1 "
                                 "1060\n"));
}

TEST_F(ResponderTest, UuidOfTheFileSystemReachesTheLine) {
  const std::string p = Share("a");
  FsIdentity id;
  id.inode = 7;
  id.uuid = Uuid{0xab};
  probe_.Set(p, id);
  Answer a = MakeResponder()->Export("$10.0.0.1", p);
  EXPECT_THAT(a.line, HasSubstr(" uuid \\xab000000000000000000000000000000\n"));
}

TEST_F(ResponderTest, FailingResolverGivesNegativeNeverGrant) {
  auto resolver = std::make_shared<authcache::testing::FakeResolver>();
  resolver->SetFailing(true);
  Open(resolver);
  const std::string p = Share("a", "rw=hosta");
  Answer a = MakeResponder()->Export("$10.0.0.1", p);
  EXPECT_EQ(a.line, Neg("10.0.0.1", p, 5));
  EXPECT_TRUE(a.negative);
}

TEST_F(ResponderTest, PathInsideAShareIsNegative) {
  const std::string p = Share("a");
  dir_.Mkdir("a/sub");
  Answer a = MakeResponder()->Export("$10.0.0.1", p + "/sub");
  EXPECT_EQ(a.line, Neg("10.0.0.1", p + "/sub", 60));
}

TEST_F(ResponderTest, DomainNotMadeByUsIsNegative) {
  const std::string p = Share("a");
  Answer a = MakeResponder()->Export("*", p);
  EXPECT_EQ(a.line, absl::StrCat("* ", p, " ", kNow + 60, "\n"));
}

TEST_F(ResponderTest, FhOfEveryTypeFindsTheShare) {
  const std::string p = Share("a");
  FsIdentity id;
  id.major = 8;
  id.minor = 3;
  id.inode = 4242;
  id.uuid = Uuid{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  id.fs_root = true;
  probe_.Set(p, id);
  auto r = MakeResponder();
  for (int type : {0, 2, 3, 4, 5, 6, 7}) {
    FhUpcall u{"$10.0.0.1", type, *EncodeFsid(type, id)};
    Answer a = r->Fh(u);
    EXPECT_FALSE(a.negative) << type;
    EXPECT_EQ(a.line, FhDowncall("$10.0.0.1", type, u.fsid, kNow + 1800, p))
        << type;
  }
}

TEST_F(ResponderTest, FhNumZeroIsTheRoot) {
  Answer a = MakeResponder()->Fh({"$10.0.0.1", kFsidNum, FsidNumBytes(0)});
  EXPECT_EQ(a.line,
            absl::StrCat("$10.0.0.1 1 \\x00000000 ", kNow + 1800, " /\n"));
  Answer other = MakeResponder()->Fh({"$10.0.0.1", kFsidNum, FsidNumBytes(5)});
  EXPECT_TRUE(other.negative);
}

TEST_F(ResponderTest, FhUnknownIsNegative) {
  Share("a");
  FsIdentity id;
  id.inode = 999999;
  FhUpcall u{"$10.0.0.1", kFsidEncodeDev, *EncodeFsid(kFsidEncodeDev, id)};
  Answer a = MakeResponder()->Fh(u);
  EXPECT_TRUE(a.negative);
  EXPECT_EQ(a.line, FhDowncall("$10.0.0.1", kFsidEncodeDev, u.fsid, kNow + 60,
                               std::nullopt));
}

class FakeGroups : public GroupSource {
 public:
  absl::StatusOr<std::vector<uint32_t>> GroupsOf(uint32_t uid) override {
    if (uid == 1000) return std::vector<uint32_t>{10, 20};
    if (uid == 1) return absl::UnavailableError("ldap down");
    return absl::NotFoundError("no such user");
  }
};

TEST_F(ResponderTest, FhBeforeTheStartUpIndexIsReadyGetsTheFailureExpiry) {
  const std::string p = Share("a");
  ResponderConfig c;
  c.index_wait = absl::Milliseconds(10);
  std::unique_ptr<Responder> r = MakeResponder(c);
  // As right after a restart: the index is still being built.
  FsidIndex unready;
  Responder early(c, catalog_.get(), access_.get(), &unready, tree_.get(),
                  &probe_, [] { return kNow; });
  const FsIdentity id = *probe_.Probe(p);
  const FhUpcall u{"$10.0.0.1", kFsidEncodeDev,
                   *EncodeFsid(kFsidEncodeDev, id)};
  EXPECT_EQ(early.Fh(u).line,
            FhDowncall(u.domain, u.fsid_type, u.fsid, kNow + 5, std::nullopt));
}

TEST_F(ResponderTest, GidListsGroupsOrNoneForUnknownOrFailed) {
  auto r = MakeResponder();
  FakeGroups g;
  EXPECT_EQ(r->Gid({1000}, &g).line,
            absl::StrCat("1000 ", kNow + 1800, " 2 10 20\n"));
  EXPECT_EQ(r->Gid({7}, &g).line, absl::StrCat("7 ", kNow + 60, " 0\n"));
  EXPECT_EQ(r->Gid({1}, &g).line, absl::StrCat("1 ", kNow + 5, " 0\n"));
}

TEST(SystemGroupSourceTest, RootIsInGroupZero) {
  auto g = MakeSystemGroupSource()->GroupsOf(0);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_THAT(*g, ::testing::Contains(0u));
}

TEST(DomainTest, RoundTripsTheAddress) {
  EXPECT_EQ(Responder::DomainOf(Ip("10.1.2.3")), "$10.1.2.3");
  EXPECT_EQ(Responder::ClientOf("$fe80::1"), Ip("fe80::1"));
  EXPECT_FALSE(Responder::ClientOf("*").has_value());
  EXPECT_FALSE(Responder::ClientOf("$x").has_value());
}

}  // namespace
}  // namespace sharemgrd::kernel

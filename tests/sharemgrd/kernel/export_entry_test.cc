#include "kernel/export_entry.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharemgrd::kernel {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using Access = authcache::Access;
using Flavor = libshare::SecFlavor;

libshare::ShareOptions Opts(const char* text) {
  auto o = libshare::ParseOptions(text);
  EXPECT_TRUE(o.ok()) << text << ": " << o.status();
  return o.ok() ? *o : libshare::ShareOptions{};
}

std::optional<ExportEntry> Export(const libshare::ShareOptions& o,
                                  std::vector<FlavorGrant> grants) {
  ShareExportInput in;
  in.options = &o;
  in.grants = std::move(grants);
  return ShareExport(in, ExportFeatures{});
}

TEST(ShareExportTest, FlagsPerDecision) {
  const libshare::ShareOptions o = Opts("");
  struct Row {
    Access access;
    bool root;
    uint32_t want;
  } rows[] = {
      // NOSUBTREECHECK 0x400 | wdelay 0x20, then READONLY 0x1, ROOTSQUASH 0x4
      {Access::kRw, false, 0x424},
      {Access::kRo, false, 0x425},
      {Access::kRw, true, 0x420},
      {Access::kRo, true, 0x421},
  };
  for (const Row& r : rows) {
    auto e = Export(o, {{Flavor::kSys, r.access, r.root}});
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->flags, r.want);
    EXPECT_THAT(e->secinfo, ElementsAre(SecinfoEntry{1, r.want}));
    EXPECT_EQ(e->anonuid, 65534);
    EXPECT_EQ(e->anongid, 65534);
    EXPECT_EQ(e->fsid, 0);
  }
}

TEST(ShareExportTest, NoGrantedFlavorIsNoEntry) {
  const libshare::ShareOptions o = Opts("");
  EXPECT_FALSE(Export(o, {{Flavor::kSys, Access::kNone, false}}).has_value());
  EXPECT_FALSE(Export(o, {}).has_value());
}

TEST(ShareExportTest, SecinfoInShareOrderWithPerFlavorFlags) {
  const libshare::ShareOptions o = Opts("sec=krb5p,rw,sec=sys,ro");
  auto e = Export(o, {{Flavor::kKrb5p, Access::kRw, false},
                      {Flavor::kSys, Access::kRo, false},
                      {Flavor::kNone, Access::kNone, false}});
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->flags, 0x424u);  // the first flavor's
  EXPECT_THAT(e->secinfo,
              ElementsAre(SecinfoEntry{390005, 0x424}, SecinfoEntry{1, 0x425}));
}

TEST(ShareExportTest, DhAloneIsNoEntry) {
  const libshare::ShareOptions o = Opts("sec=dh");
  EXPECT_FALSE(Export(o, {{Flavor::kDh, Access::kRw, false}}).has_value());
}

TEST(ShareExportTest, AnonSetsAnonuidAndAnongid) {
  auto e = Export(Opts("anon=1000"), {{Flavor::kSys, Access::kRw, false}});
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->anonuid, 1000);
  EXPECT_EQ(e->anongid, 1000);
  auto deny = Export(Opts("anon=-1"), {{Flavor::kSys, Access::kRw, false}});
  ASSERT_TRUE(deny.has_value());
  EXPECT_EQ(deny->anonuid, 65534);
}

TEST(ShareExportTest, NohideInsecureUuidAndRoot) {
  const libshare::ShareOptions o = Opts("nohide");
  ShareExportInput in;
  in.options = &o;
  in.grants = {{Flavor::kSys, Access::kRw, false}};
  in.insecure = true;
  in.uuid = Uuid{1, 2, 3};
  auto e = ShareExport(in, ExportFeatures{});
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->flags, 0x424u | nfsexp::kNoHide | nfsexp::kInsecurePort);
  EXPECT_EQ(e->uuid, in.uuid);
  in.root_path = true;
  e = ShareExport(in, ExportFeatures{});
  EXPECT_TRUE(e->flags & nfsexp::kFsid);
  EXPECT_EQ(e->fsid, 0);
  EXPECT_FALSE(e->uuid.has_value());
}

TEST(ShareExportTest, MaskedWithKernelFeatures) {
  const libshare::ShareOptions o = Opts("");
  ShareExportInput in;
  in.options = &o;
  in.grants = {{Flavor::kSys, Access::kRw, false}};
  ExportFeatures f;
  f.all_flags = ~nfsexp::kGatheredWrites;
  auto e = ShareExport(in, f);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->flags, 0x404u);
  EXPECT_EQ(e->secinfo[0].flags, 0x404u);
}

TEST(PseudoExportTest, RootHasFsidZeroOthersV4RootWithUuid) {
  ExportEntry root = PseudoExport(true, Uuid{9}, ExportFeatures{});
  EXPECT_EQ(root.flags, 0x12403u);
  EXPECT_EQ(root.fsid, 0);
  EXPECT_EQ(root.anonuid, 65534);
  EXPECT_EQ(root.anongid, 65534);
  EXPECT_FALSE(root.uuid.has_value());
  ExportEntry dir = PseudoExport(false, Uuid{9}, ExportFeatures{});
  EXPECT_EQ(dir.flags, 0x10403u);
  EXPECT_EQ(dir.fsid, 0);
  EXPECT_EQ(dir.uuid, Uuid{9});
}

TEST(PseudoExportTest, SecinfoInNfsUtilsFlavorOrderWithTheExportFlags) {
  // rpc.mountd 2.6.2: "sec=390003:390004:390005:1" on every pseudo entry.
  ExportEntry root = PseudoExport(true, std::nullopt, ExportFeatures{});
  EXPECT_THAT(
      root.secinfo,
      ElementsAre(SecinfoEntry{390003, 0x12403}, SecinfoEntry{390004, 0x12403},
                  SecinfoEntry{390005, 0x12403}, SecinfoEntry{1, 0x12403}));
  ExportEntry dir = PseudoExport(false, std::nullopt, ExportFeatures{});
  EXPECT_THAT(
      dir.secinfo,
      ElementsAre(SecinfoEntry{390003, 0x10403}, SecinfoEntry{390004, 0x10403},
                  SecinfoEntry{390005, 0x10403}, SecinfoEntry{1, 0x10403}));
}

TEST(ParseExportFeaturesTest, ReadsTwoHexWords) {
  auto f = ParseExportFeatures("0x3feff 0xf\n");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->all_flags, 0x3feffu);
  EXPECT_EQ(f->secinfo_flags, 0xfu);
  EXPECT_FALSE(ParseExportFeatures("3feff f").ok());
  EXPECT_FALSE(ParseExportFeatures("0x3feff").ok());
}

TEST(OptionsWithoutKernelEffectTest, NamesEachOptionInOrder) {
  EXPECT_THAT(libshare::OptionsWithoutKernelEffect(Opts("")), IsEmpty());
  EXPECT_THAT(
      libshare::OptionsWithoutKernelEffect(Opts("rw,root=a,anon=7,nohide")),
      IsEmpty());
  auto got = libshare::OptionsWithoutKernelEffect(
      Opts("sec=dh,root_mapping=5,anon=-1,nosuid,nosub,public,aclok,index=i,"
           "log,window=60"));
  ASSERT_EQ(got.size(), 10u);
  const char* prefixes[] = {
      "sec=dh:", "root_mapping=5:", "anon=-1:", "nosuid:", "nosub:",
      "public:", "aclok:",          "index=:",  "log:",    "window=:"};
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_THAT(got[i], ::testing::StartsWith(prefixes[i]));
  }
}

}  // namespace
}  // namespace sharemgrd::kernel

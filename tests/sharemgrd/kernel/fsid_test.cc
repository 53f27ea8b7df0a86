#include "kernel/fsid.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernel/fs_probe.h"
#include "kernel/line_format.h"
#include "share_test_dirs.h"

namespace sharemgrd::kernel {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;

std::string Bytes(std::vector<int> v) {
  std::string s;
  for (int b : v) s.push_back(static_cast<char>(b));
  return s;
}

Uuid TestUuid() {
  Uuid u{};
  for (int i = 0; i < 16; ++i) u[i] = static_cast<uint8_t>(0x10 + 7 * i);
  return u;
}

// The uuid folded byte by byte (rpc.mountd's get_uuid folds hex digits the
// same way): an independent statement of the kernel's word xors.
std::string Fold(const Uuid& u, int len) {
  std::string out(len, '\0');
  for (int i = 0; i < 16; ++i) out[i % len] ^= static_cast<char>(u[i]);
  return out;
}

FsIdentity Identity() {
  FsIdentity id;
  id.major = 8;
  id.minor = 1;
  id.inode = 0x11223344;
  id.uuid = TestUuid();
  id.fs_root = true;
  return id;
}

TEST(EncodeFsidTest, EveryTypeAsTheKernelMakesIt) {
  const FsIdentity id = Identity();
  const std::string ino = Bytes({0x44, 0x33, 0x22, 0x11});  // host order
  const Uuid u = TestUuid();
  const std::string uuid(reinterpret_cast<const char*>(u.data()), 16);
  struct Row {
    int type;
    std::string want;
  } rows[] = {
      {kFsidDev, Bytes({0, 8, 0, 1}) + ino},
      {kFsidMajorMinor, Bytes({0, 0, 0, 8, 0, 0, 0, 1}) + ino},
      {kFsidEncodeDev, Bytes({0x01, 0x08, 0, 0}) + ino},
      {kFsidUuid4Inum, ino + Fold(u, 4)},
      {kFsidUuid8, Fold(u, 8)},
      {kFsidUuid16, uuid},
      {kFsidUuid16Inum, ino + Bytes({0, 0, 0, 0}) + uuid},
  };
  for (const Row& r : rows) {
    std::optional<std::string> got = EncodeFsid(r.type, id);
    ASSERT_TRUE(got.has_value()) << r.type;
    EXPECT_EQ(*got, r.want) << "type " << r.type;
    EXPECT_EQ(static_cast<int>(got->size()), FsidLength(r.type));
  }
  EXPECT_FALSE(EncodeFsid(kFsidNum, id).has_value());
  EXPECT_EQ(FsidNumBytes(0), Bytes({0, 0, 0, 0}));
}

TEST(EncodeFsidTest, LargeMinorUsesTheNewEncoding) {
  FsIdentity id;
  id.major = 0x103;
  id.minor = 0x12345;
  EXPECT_FALSE(EncodeFsid(kFsidDev, id).has_value());
  // new_encode_dev: minor low byte | major << 8 | (minor & ~0xff) << 12.
  const uint32_t dev = 0x45 | (0x103 << 8) | (0x12300 << 12);
  std::string want(4, '\0');
  memcpy(want.data(), &dev, 4);
  EXPECT_EQ(EncodeFsid(kFsidEncodeDev, id)->substr(0, 4), want);
}

TEST(DecodeFsidTest, ReadsBackWhatWasEncoded) {
  const FsIdentity id = Identity();
  for (int type : {kFsidDev, kFsidMajorMinor, kFsidEncodeDev}) {
    auto d = DecodeFsid(type, *EncodeFsid(type, id));
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(d->major, 8u) << type;
    EXPECT_EQ(d->minor, 1u) << type;
    EXPECT_EQ(d->inode, 0x11223344u) << type;
  }
  auto d7 = DecodeFsid(kFsidUuid16Inum, *EncodeFsid(kFsidUuid16Inum, id));
  ASSERT_TRUE(d7.ok());
  EXPECT_EQ(d7->inode, 0x11223344u);
  EXPECT_EQ(d7->uuid_part.size(), 16u);
  auto d1 = DecodeFsid(kFsidNum, FsidNumBytes(42));
  ASSERT_TRUE(d1.ok());
  EXPECT_EQ(d1->number, 42u);
  EXPECT_FALSE(DecodeFsid(kFsidDev, "short").ok());
  EXPECT_FALSE(DecodeFsid(9, "12345678").ok());
}

TEST(FsidKeysTest, UuidTypesOnlyWithUuidAndInodelessOnlyAtRoot) {
  FsIdentity id = Identity();
  EXPECT_THAT(FsidKeys(id), ElementsAre(Field(&FsidKey::type, kFsidDev),
                                        Field(&FsidKey::type, kFsidMajorMinor),
                                        Field(&FsidKey::type, kFsidEncodeDev),
                                        Field(&FsidKey::type, kFsidUuid4Inum),
                                        Field(&FsidKey::type, kFsidUuid16Inum),
                                        Field(&FsidKey::type, kFsidUuid8),
                                        Field(&FsidKey::type, kFsidUuid16)));
  id.fs_root = false;
  EXPECT_EQ(FsidKeys(id).size(), 5u);
  id.uuid.reset();
  EXPECT_THAT(FsidKeys(id), ElementsAre(Field(&FsidKey::type, kFsidDev),
                                        Field(&FsidKey::type, kFsidMajorMinor),
                                        Field(&FsidKey::type, kFsidEncodeDev)));
}

TEST(UuidFromStatfsFsidTest, WordsPrintedAsHexThenZeros) {
  // "%08x%08x" of 0x12345678, 0x9abcdef0 read back as bytes.
  const Uuid u = UuidFromStatfsFsid(0x12345678, 0x9abcdef0);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(u.data()), 16),
            Bytes({0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0, 0, 0, 0,
                   0, 0, 0, 0}));
}

TEST(UuidFromStatfsTest, ZfsBtrfsTmpfsAndDevicelessUseStatfs) {
  EXPECT_TRUE(UuidFromStatfs(0x2fc12fc1, 0));  // ZFS
  EXPECT_TRUE(UuidFromStatfs(0x9123683e, 8));  // btrfs on a disk
  EXPECT_TRUE(UuidFromStatfs(0x01021994, 0));  // tmpfs
  EXPECT_TRUE(UuidFromStatfs(0x794c7630, 0));  // overlay: no device
  EXPECT_FALSE(UuidFromStatfs(0xef53, 8));     // ext4 on a disk
}

TEST(SystemFsProbeTest, DirectoryGivesItsDeviceAndInode) {
  libshare::testing::TempDir dir;
  const std::string d = dir.Mkdir("share");
  struct stat st;
  ASSERT_EQ(stat(d.c_str(), &st), 0);
  auto id = MakeSystemFsProbe()->Probe(d);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(id->inode, st.st_ino);
  EXPECT_EQ(id->major, major(st.st_dev));
  EXPECT_EQ(id->minor, minor(st.st_dev));
  EXPECT_FALSE(id->fs_root);
}

TEST(SystemFsProbeTest, RootIsAFileSystemRoot) {
  auto id = MakeSystemFsProbe()->Probe("/");
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_TRUE(id->fs_root);
}

TEST(SystemFsProbeTest, MissingPathIsAnErrorNamingIt) {
  auto id = MakeSystemFsProbe()->Probe("/nonexistent/kcore");
  ASSERT_FALSE(id.ok());
  EXPECT_THAT(std::string(id.status().message()),
              ::testing::HasSubstr("/nonexistent/kcore"));
}

}  // namespace
}  // namespace sharemgrd::kernel

namespace sharemgrd::kernel {
namespace {

std::string Hex(const Uuid& u) {
  std::string s;
  char b[3];
  for (uint8_t x : u) {
    snprintf(b, sizeof b, "%02x", x);
    s += b;
  }
  return s;
}

TEST(UuidFromTextTest, FoldsHexDigitsAsRpcMountd) {
  EXPECT_EQ(Hex(*UuidFromText("1b4e28ba-2fa1-11d2-883f-0016d3cca427")),
            "1b4e28ba2fa111d2883f0016d3cca427");
  EXPECT_EQ(Hex(*UuidFromText("ABCD-1234")),
            "abcd1234000000000000000000000000");
  // Over 32 digits the rest xors over the start.
  EXPECT_EQ(Hex(*UuidFromText(std::string(32, '0') + "ff")),
            "ff000000000000000000000000000000");
  EXPECT_FALSE(UuidFromText("-").has_value());
}

// A block-device file system's uuid comes from the by-uuid link to its
// device; needs a folder on a block device and that device's node.
TEST(SystemFsProbeTest, BlockDeviceUuidFromTheByUuidLink) {
  char tmpl[] = "/tmp/kcore_probe.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  struct stat st;
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  std::string node;
  for (const auto& e : std::filesystem::directory_iterator("/dev")) {
    struct stat b;
    if (stat(e.path().c_str(), &b) == 0 && S_ISBLK(b.st_mode) &&
        b.st_rdev == st.st_dev) {
      node = e.path();
      break;
    }
  }
  if (node.empty()) {
    std::filesystem::remove_all(dir);
    GTEST_SKIP() << "no block device node for /tmp";
  }
  std::filesystem::create_directories(dir + "/by-uuid");
  std::filesystem::create_symlink(
      node, dir + "/by-uuid/1b4e28ba-2fa1-11d2-883f-0016d3cca427");
  std::filesystem::create_directories(dir + "/share");
  auto id = MakeSystemFsProbe(dir + "/by-uuid")->Probe(dir + "/share");
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(id.ok()) << id.status();
  ASSERT_TRUE(id->uuid.has_value());
  EXPECT_EQ(Hex(*id->uuid), "1b4e28ba2fa111d2883f0016d3cca427");
}

TEST(SystemFsProbeTest, NoByUuidLinkNoUuidForABlockDevice) {
  struct stat st;
  ASSERT_EQ(stat("/tmp", &st), 0);
  auto id = MakeSystemFsProbe("/nonexistent")->Probe("/tmp");
  ASSERT_TRUE(id.ok());
  if (major(st.st_dev) == 0) GTEST_SKIP() << "/tmp has no block device";
  EXPECT_FALSE(id->uuid.has_value());
}

}  // namespace
}  // namespace sharemgrd::kernel

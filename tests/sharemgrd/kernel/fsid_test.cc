#include "kernel/fsid.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernel/line_format.h"

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

TEST(FsidKeysTest, APseudoDirsUuidAddsItsOwnUuidKeys) {
  FsIdentity id = Identity();
  id.fs_root = false;
  const size_t plain = FsidKeys(id).size();
  id.pseudo_uuid = Uuid{0x42};
  std::vector<FsidKey> keys = FsidKeys(id);
  ASSERT_EQ(keys.size(), plain + 2);  // UUID4_INUM and UUID16_INUM again
  FsIdentity as_pseudo = id;
  as_pseudo.uuid = id.pseudo_uuid;
  EXPECT_EQ(keys[plain].bytes, *EncodeFsid(kFsidUuid4Inum, as_pseudo));
  EXPECT_EQ(keys[plain + 1].bytes, *EncodeFsid(kFsidUuid16Inum, as_pseudo));
  id.pseudo_uuid = id.uuid;  // the same uuid: no key twice
  EXPECT_EQ(FsidKeys(id).size(), plain);
}

TEST(UuidFromStatfsFsidTest, WordsPrintedAsHexThenZeros) {
  // "%08x%08x" of 0x12345678, 0x9abcdef0 read back as bytes.
  const Uuid u = UuidFromStatfsFsid(0x12345678, 0x9abcdef0);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(u.data()), 16),
            Bytes({0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0, 0, 0, 0,
                   0, 0, 0, 0}));
}

}  // namespace
}  // namespace sharemgrd::kernel

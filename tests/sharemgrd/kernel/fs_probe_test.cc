// The uuids of kernel/fs_probe.h against what rpc.mountd computes: the
// fold of UUID texts, the choice between libblkid and statfs, the
// pseudo-root uuid (values rpc.mountd 2.6.2 wrote into a Linux 6.1 nfsd),
// libblkid on real ext4 images made with mkfs.ext4, and the system probe.
#include "kernel/fs_probe.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "share_test_dirs.h"

namespace sharemgrd::kernel {
namespace {

std::string Hex(const Uuid& u) {
  std::string s;
  for (uint8_t x : u) s += absl::StrFormat("%02x", x);
  return s;
}

// The first of `names` that is an executable file, or "".
std::string FindProgram(const std::vector<std::string>& names) {
  for (const std::string& n : names) {
    if (access(n.c_str(), X_OK) == 0) return n;
  }
  return "";
}

std::string MkfsExt4() {
  return FindProgram(
      {"/usr/sbin/mkfs.ext4", "/sbin/mkfs.ext4", "/usr/bin/mkfs.ext4"});
}

// Runs `command` with sh; its standard output, or nullopt if it failed.
std::optional<std::string> RunShell(const std::string& command) {
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return std::nullopt;
  std::string out;
  char buf[256];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  if (pclose(p) != 0) return std::nullopt;
  return out;
}

// A 4 MiB ext4 image with file-system UUID `uuid`.
bool MakeExt4(const std::string& mkfs, const std::string& image,
              const std::string& uuid) {
  return RunShell(
             absl::StrCat(mkfs, " -q -F -U ", uuid, " ", image, " 4M 2>&1"))
      .has_value();
}

TEST(UuidFromTextTest, Ext4AndXfsUuidIsItsSixteenBytes) {
  // ext4 and xfs both report the RFC 4122 form.
  EXPECT_EQ(Hex(UuidFromText("1b4e28ba-2fa1-11d2-883f-0016d3cca427")),
            "1b4e28ba2fa111d2883f0016d3cca427");
  EXPECT_EQ(Hex(UuidFromText("C0FFEE00-1234-4ABC-9DEF-00112233AAbb")),
            "c0ffee0012344abc9def00112233aabb");
}

TEST(UuidFromTextTest, ShortSerialsFillTheStartThenZeros) {
  // vfat and exfat: a 32-bit serial; NTFS: 64 bits.
  EXPECT_EQ(Hex(UuidFromText("ABCD-1234")), "abcd1234000000000000000000000000");
  EXPECT_EQ(Hex(UuidFromText("1A2B3C4D5E6F7081")),
            "1a2b3c4d5e6f70810000000000000000");
}

TEST(UuidFromTextTest, OnlyHexDigitsCount) {
  // iso9660's UUID is a date: its digits are read as hex.
  EXPECT_EQ(Hex(UuidFromText("2021-08-09-16-35-23-00")),
            "20210809163523000000000000000000");
  EXPECT_EQ(Hex(UuidFromText("xyz")), std::string(32, '0'));
}

TEST(UuidFromTextTest, DigitsPast32XorOverTheStart) {
  EXPECT_EQ(Hex(UuidFromText(std::string(32, '0') + "ff")),
            "ff000000000000000000000000000000");
  EXPECT_EQ(Hex(UuidFromText("0f" + std::string(30, '0') + "f1")),
            "fe000000000000000000000000000000");
}

TEST(UuidFromTextTest, StatfsTextFoldsToTheFsidUuid) {
  // uuid_by_path prints f_fsid "%08x%08x" and folds it like any UUID.
  for (uint32_t w : {0u, 1u, 0x12345678u, 0xfedcba98u}) {
    EXPECT_EQ(UuidFromText(absl::StrFormat("%08x%08x", w, ~w)),
              UuidFromStatfsFsid(w, ~w));
  }
}

TEST(UuidFromStatfsTest, NonblkidTypesAndDevicelessUseStatfs) {
  EXPECT_TRUE(UuidFromStatfs(0x2fc12fc1, 0));     // ZFS
  EXPECT_TRUE(UuidFromStatfs(0x9123683e, 8));     // btrfs on a disk
  EXPECT_TRUE(UuidFromStatfs(0x01021994, 0));     // tmpfs
  EXPECT_TRUE(UuidFromStatfs(0x6969, 0));         // NFS
  EXPECT_TRUE(UuidFromStatfs(0x794c7630, 0));     // overlay: no device
  EXPECT_FALSE(UuidFromStatfs(0xef53, 8));        // ext4 on a disk
  EXPECT_FALSE(UuidFromStatfs(0x58465342, 259));  // xfs on a disk
}

TEST(UuidByPathTest, LibblkidUuidWinsOverFsid) {
  std::optional<Uuid> u =
      UuidByPath("/srv/a", false, "1b4e28ba-2fa1-11d2-883f-0016d3cca427",
                 0x11111111, 0x22222222);
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(Hex(*u), "1b4e28ba2fa111d2883f0016d3cca427");
}

TEST(UuidByPathTest, FsidWhenLibblkidHasNone) {
  for (bool statfs_only : {false, true}) {
    std::optional<Uuid> u =
        UuidByPath("/srv/a", statfs_only, std::nullopt, 0x11111111, 0x22);
    ASSERT_TRUE(u.has_value());
    EXPECT_EQ(Hex(*u), "11111111000000220000000000000000");
  }
}

TEST(UuidByPathTest, DeviceFileSystemWithNeitherHasNoUuid) {
  EXPECT_FALSE(UuidByPath("/srv/a", false, std::nullopt, 0, 0).has_value());
}

TEST(UuidByPathTest, StatfsOnlyFileSystemWithoutFsidTakesThePathUuid) {
  std::optional<Uuid> u = UuidByPath("/srv/a", true, std::nullopt, 0, 0);
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(*u, PseudoRootUuid("/srv/a"));
}

TEST(PseudoRootUuidTest, EqualsWhatRpcMountdWroteIntoTheKernel) {
  // /proc/net/rpc/nfsd.export/content after rpc.mountd 2.6.2 answered an
  // NFSv4 walk to /srv/a/x/y (/srv tmpfs, /srv/a ext4), Linux 6.1.
  EXPECT_EQ(Hex(PseudoRootUuid("/srv")), "0c21a5bec5395c6081ba26139041c6d8");
  EXPECT_EQ(Hex(PseudoRootUuid("/srv/a")), "54781838afd550e0a6c2741e79e04f89");
  EXPECT_EQ(Hex(PseudoRootUuid("/srv/a/x")),
            "4f2ccb3fe6ce50acb7176e128b8a5732");
}

TEST(PseudoRootUuidTest, IsTheV5UuidWithItsLastTwoBytesXoredOverTheFirst) {
  // uuid5(39c6b5c1-..., "/srv/a") = 1bf11838-afd5-50e0-a6c2-741e79e04f89;
  // the 4 digits left behind, 4f89, fold over 1bf1.
  const Uuid u = PseudoRootUuid("/srv/a");
  EXPECT_EQ(u[0], 0x1b ^ 0x4f);
  EXPECT_EQ(u[1], 0xf1 ^ 0x89);
  EXPECT_EQ(u[6] >> 4, 5);  // version 5
  EXPECT_NE(PseudoRootUuid("/srv/b"), u);
}

class BlkidUuidsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mkfs_ = MkfsExt4();
    if (mkfs_.empty()) GTEST_SKIP() << "no mkfs.ext4 (e2fsprogs)";
  }
  std::string Image(const std::string& name) const {
    return dir_.path() + "/" + name;
  }

  libshare::testing::TempDir dir_;
  std::string mkfs_;
};

TEST_F(BlkidUuidsTest, Ext4ImageGivesTheUuidMkfsWrote) {
  const std::string img = Image("a.img");
  ASSERT_TRUE(MakeExt4(mkfs_, img, "1b4e28ba-2fa1-11d2-883f-0016d3cca427"));
  BlkidUuids blkid;
  std::optional<std::string> text = blkid.UuidText(img);
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(*text, "1b4e28ba-2fa1-11d2-883f-0016d3cca427");
  EXPECT_EQ(Hex(UuidFromText(*text)), "1b4e28ba2fa111d2883f0016d3cca427");
}

TEST_F(BlkidUuidsTest, ARewrittenImageIsProbedAgain) {
  const std::string img = Image("a.img");
  ASSERT_TRUE(MakeExt4(mkfs_, img, "11111111-2222-3333-4444-555555555555"));
  BlkidUuids blkid;
  EXPECT_EQ(blkid.UuidText(img), "11111111-2222-3333-4444-555555555555");
  EXPECT_EQ(blkid.UuidText(img), "11111111-2222-3333-4444-555555555555");
  // libblkid trusts its cache for a device not modified since it probed
  // (mtime); let the clock move past the probe.
  usleep(20000);
  ASSERT_TRUE(MakeExt4(mkfs_, img, "66666666-7777-4888-9999-aaaaaaaaaaaa"));
  EXPECT_EQ(blkid.UuidText(img), "66666666-7777-4888-9999-aaaaaaaaaaaa");
}

TEST_F(BlkidUuidsTest, NoFileSystemOrNoFileIsNoUuid) {
  const std::string img = Image("zeros.img");
  {
    std::ofstream f(img);
    f << std::string(1 << 20, '\0');
  }
  BlkidUuids blkid;
  EXPECT_EQ(blkid.UuidText(img), std::nullopt);
  EXPECT_EQ(blkid.UuidText(Image("missing.img")), std::nullopt);
}

TEST_F(BlkidUuidsTest, ConcurrentReadersAllGetTheUuid) {
  const std::string img = Image("a.img");
  ASSERT_TRUE(MakeExt4(mkfs_, img, "1b4e28ba-2fa1-11d2-883f-0016d3cca427"));
  BlkidUuids blkid;
  std::atomic<int> right{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        if (blkid.UuidText(img) == "1b4e28ba-2fa1-11d2-883f-0016d3cca427") {
          ++right;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(right.load(), 800);
}

TEST(BlkidDeviceNameTest, NoBlockDeviceIsNoName) {
  EXPECT_EQ(BlkidUuids::DeviceName(makedev(0, 42)), std::nullopt);
  EXPECT_EQ(BlkidUuids::DeviceName(makedev(4095, 1048575)), std::nullopt);
}

TEST(BlkidDeviceNameTest, FindsTheNodeOfABlockDevice) {
  std::error_code ec;
  int tried = 0;
  for (const auto& e :
       std::filesystem::directory_iterator("/sys/dev/block", ec)) {
    unsigned maj, min;
    if (sscanf(e.path().filename().c_str(), "%u:%u", &maj, &min) != 2) {
      continue;
    }
    std::optional<std::string> name = BlkidUuids::DeviceName(makedev(maj, min));
    if (!name.has_value()) continue;  // no node in this /dev
    ++tried;
    struct stat st;
    ASSERT_EQ(stat(name->c_str(), &st), 0) << *name;
    EXPECT_TRUE(S_ISBLK(st.st_mode)) << *name;
    EXPECT_EQ(st.st_rdev, makedev(maj, min)) << *name;
  }
  if (tried == 0) GTEST_SKIP() << "no block device with a node in /dev";
}

// A folder on this machine's own block-device file system (the test's
// /tmp) gets the UUID blkid(8)'s low-level probe reads from that device,
// found without udev's /dev/disk/by-uuid; when the device cannot be read
// (a container's device policy), f_fsid, as rpc.mountd falls back to.
TEST(SystemFsProbeTest, BlockDeviceFileSystemGetsLibblkidsUuid) {
  char tmpl[] = "/tmp/fs_probe_test.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  struct stat st;
  struct statfs sf;
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  ASSERT_EQ(statfs(dir.c_str(), &sf), 0);
  auto id = MakeSystemFsProbe()->Probe(dir);
  rmdir(dir.c_str());
  ASSERT_TRUE(id.ok()) << id.status();
  if (UuidFromStatfs(static_cast<uint64_t>(sf.f_type), major(st.st_dev))) {
    GTEST_SKIP() << "/tmp is not on a block device rpc.mountd asks libblkid "
                    "about";
  }
  std::optional<std::string> node = BlkidUuids::DeviceName(st.st_dev);
  const std::string blkid = FindProgram({"/usr/sbin/blkid", "/sbin/blkid"});
  if (!node.has_value() || blkid.empty()) {
    GTEST_SKIP() << "no device node for /tmp, or no blkid(8)";
  }
  uint32_t w0, w1;
  memcpy(&w0, &sf.f_fsid, 4);
  memcpy(&w1, reinterpret_cast<const char*>(&sf.f_fsid) + 4, 4);
  std::optional<Uuid> fsid;
  if (w0 != 0 || w1 != 0) fsid = UuidFromStatfsFsid(w0, w1);
  const int fd = open(node->c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    EXPECT_EQ(id->uuid, fsid) << *node << " cannot be read";
    return;
  }
  close(fd);
  std::optional<std::string> out =
      RunShell(absl::StrCat(blkid, " -p -s UUID -o value ", *node));
  ASSERT_TRUE(out.has_value()) << blkid << " -p " << *node << " failed";
  while (!out->empty() && out->back() == '\n') out->pop_back();
  const std::optional<Uuid> want =
      out->empty() ? fsid : std::optional<Uuid>(UuidFromText(*out));
  ASSERT_EQ(id->uuid.has_value(), want.has_value()) << *node << ": " << *out;
  if (want.has_value()) {
    EXPECT_EQ(Hex(*id->uuid), Hex(*want)) << *node;
  }
}

TEST(SystemFsProbeTest, TmpfsGetsItsFsidOrThePathUuid) {
  libshare::testing::TempDir dir;
  const std::string d = dir.Mkdir("share");
  struct statfs sf;
  ASSERT_EQ(statfs(d.c_str(), &sf), 0);
  if (sf.f_type != 0x01021994) GTEST_SKIP() << d << " is not on tmpfs";
  auto id = MakeSystemFsProbe()->Probe(d);
  ASSERT_TRUE(id.ok()) << id.status();
  ASSERT_TRUE(id->uuid.has_value());
  uint32_t w0, w1;
  memcpy(&w0, &sf.f_fsid, 4);
  memcpy(&w1, reinterpret_cast<const char*>(&sf.f_fsid) + 4, 4);
  EXPECT_EQ(*id->uuid,
            (w0 || w1) ? UuidFromStatfsFsid(w0, w1) : PseudoRootUuid(d));
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

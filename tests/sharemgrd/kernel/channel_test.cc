#include "kernel/channel.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "share_test_dirs.h"

namespace sharemgrd::kernel {
namespace {

using ::testing::HasSubstr;

// A folder laid out like /proc, with regular files for the kernel's.
class FakeProcTree {
 public:
  std::string root() const { return dir_.path(); }
  std::string File(const std::string& rel, const std::string& content) {
    const std::string p = dir_.path() + "/" + rel;
    dir_.Mkdir(rel.substr(0, rel.rfind('/')));
    std::ofstream(p) << content;
    return p;
  }
  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

 private:
  libshare::testing::TempDir dir_;
};

TEST(ProcChannelTest, ReadsARequestAndWritesOneReplyPerCall) {
  FakeProcTree proc;
  const std::string ch =
      proc.File("net/rpc/nfsd.export/channel", "$10.1.2.3 /export/a\n");
  auto c = OpenProcChannel(proc.root(), kExportCache);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c)->cache(), "nfsd.export");
  EXPECT_GE((*c)->fd(), 0);
  auto line = (*c)->Read();
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_EQ(*line, "$10.1.2.3 /export/a\n");
  ASSERT_TRUE((*c)->Write("$10.1.2.3 /export/a 5\n").ok());
  EXPECT_EQ(FakeProcTree::Read(ch),
            "$10.1.2.3 /export/a\n$10.1.2.3 /export/a 5\n");
}

TEST(ProcChannelTest, RefusesAReplyTheKernelWouldRefuse) {
  FakeProcTree proc;
  proc.File("net/rpc/nfsd.fh/channel", "");
  auto c = OpenProcChannel(proc.root(), kFhCache);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE((*c)->Write(std::string(kMaxDowncall + 1, 'a')).ok());
}

TEST(ProcChannelTest, MissingChannelNamesThePath) {
  FakeProcTree proc;
  auto c = OpenProcChannel(proc.root(), kIpCache);
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(absl::IsNotFound(c.status()));
  EXPECT_THAT(std::string(c.status().message()),
              HasSubstr("/net/rpc/auth.unix.ip/channel"));
}

TEST(ProcNfsdFilesTest, FlushWritesTheTime) {
  FakeProcTree proc;
  const std::string f = proc.File("net/rpc/nfsd.fh/flush", "");
  auto files = MakeProcNfsdFiles(proc.root());
  ASSERT_TRUE(files->Flush(kFhCache).ok());
  const std::string got = FakeProcTree::Read(f);
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got.back(), '\n');
  EXPECT_GT(std::stoll(got), 1700000000);
}

TEST(ProcNfsdFilesTest, UnlockWritesTheEscapedPath) {
  FakeProcTree proc;
  const std::string f = proc.File("fs/nfsd/unlock_filesystem", "");
  ASSERT_TRUE(MakeProcNfsdFiles(proc.root())->UnlockFilesystem("/a b").ok());
  EXPECT_EQ(FakeProcTree::Read(f), "/a\\040b\n");
}

TEST(ProcNfsdFilesTest, ExportFeaturesReadsTheFile) {
  FakeProcTree proc;
  auto files = MakeProcNfsdFiles(proc.root());
  EXPECT_TRUE(absl::IsNotFound(files->ExportFeatures().status()));
  proc.File("fs/nfsd/export_features", "0x3feff 0xf\n");
  auto got = files->ExportFeatures();
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, "0x3feff 0xf\n");
}

TEST(ProcNfsdFilesTest, FileHandleWithoutNfsdIsAnError) {
  FakeProcTree proc;
  auto fh = MakeProcNfsdFiles(proc.root())->FileHandle("$h", "/a", 64);
  ASSERT_FALSE(fh.ok());
  EXPECT_THAT(std::string(fh.status().message()), HasSubstr("filehandle"));
}

TEST(ParseFileHandleReplyTest, HexToBytes) {
  auto fh = ParseFileHandleReply("\\x01000100aabb\n");
  ASSERT_TRUE(fh.ok()) << fh.status();
  EXPECT_EQ(*fh, std::string("\x01\x00\x01\x00\xaa\xbb", 6));
  EXPECT_FALSE(ParseFileHandleReply("$h /a 64\n").ok());
  EXPECT_FALSE(ParseFileHandleReply("\\x0100").ok());
}

}  // namespace
}  // namespace sharemgrd::kernel

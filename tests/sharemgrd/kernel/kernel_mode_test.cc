#include "kernel/kernel_mode.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "fake_channel.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernel/share_tree.h"
#include "kernel_fixture.h"
#include "pg_engine.h"

namespace sharemgrd::kernel {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using testing::FakeChannel;
using testing::FakeNfsdFiles;
using ::testing::HasSubstr;
using testing::Ip;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::kNow;
using ::testing::UnorderedElementsAre;

// Lets the kernel mode own a probe while the fixture keeps setting it.
class ProbeRef : public FsProbe {
 public:
  explicit ProbeRef(FsProbe* p) : p_(p) {}
  absl::StatusOr<FsIdentity> Probe(const std::string& path) override {
    return p_->Probe(path);
  }

 private:
  FsProbe* p_;
};

class FakeGroups : public GroupSource {
 public:
  absl::StatusOr<std::vector<uint32_t>> GroupsOf(uint32_t uid) override {
    return std::vector<uint32_t>{uid, 100};
  }
};

class KernelModeTest : public testing::KernelFixture {
 protected:
  void TearDown() override {
    if (km_) km_->Stop();
  }

  void StartKernel(KernelConfig config = {},
                   std::unique_ptr<FsProbe> probe = nullptr) {
    KernelDeps deps;
    auto add = [&](const char* cache) {
      auto ch = std::make_unique<FakeChannel>(cache, &domains_);
      FakeChannel* raw = ch.get();
      deps.channels.push_back(std::move(ch));
      return raw;
    };
    ip_ = add(kIpCache);
    fh_ = add(kFhCache);
    export_ = add(kExportCache);
    gid_ = add(kGidCache);
    auto files = std::make_unique<FakeNfsdFiles>();
    files_ = files.get();
    files_->SetFlushTime(start_flush_time_);
    deps.files = std::move(files);
    deps.probe = probe ? std::move(probe) : std::make_unique<ProbeRef>(&probe_);
    deps.groups = std::make_unique<FakeGroups>();
    deps.now = [] { return kNow; };
    config.log = [this](const std::string& line) {
      absl::MutexLock lock(&log_mu_);
      log_.push_back(line);
    };
    auto km = KernelMode::StartWith(config, catalog_.get(), access_.get(),
                                    std::move(deps));
    ASSERT_TRUE(km.ok()) << km.status();
    km_ = *std::move(km);
  }

  // MOUNT's decision for `client` (AUTH_SYS nobody), as Mnt() makes it.
  AccessResult Mnt(const std::string& client, const std::string& path) {
    AccessRequest req;
    req.client = Ip(client);
    req.path = path;
    req.resolve = true;
    return access_->Decide(req);
  }

  std::string Pos(const std::string& client, const std::string& path) {
    return absl::StrCat("$", client, " ", path, " ", kNow + 1800,
                        " 1060 65534 65534 0 secinfo 1 1 1060\n");
  }

  testing::FakeDomains domains_;
  FakeChannel* ip_ = nullptr;
  FakeChannel* fh_ = nullptr;
  FakeChannel* export_ = nullptr;
  FakeChannel* gid_ = nullptr;
  FakeNfsdFiles* files_ = nullptr;
  int64_t start_flush_time_ = 0;  // what the flush files read at start
  std::unique_ptr<KernelMode> km_;
  absl::Mutex log_mu_;
  std::vector<std::string> log_;
};

TEST_F(KernelModeTest, StartFlushesEachAnsweredCacheOnce) {
  KernelConfig c;
  c.manage_gids = true;
  StartKernel(c);
  EXPECT_THAT(files_->flushed(),
              UnorderedElementsAre("auth.unix.ip", "auth.unix.gid", "nfsd.fh",
                                   "nfsd.export"));
  EXPECT_EQ(km_->stats().flushes, 4u);
}

TEST_F(KernelModeTest, StartDoesNotFlushCachesFlushedAheadOfTheClock) {
  // A run of `exportfs -ra` left the flush time 40 s ahead: every entry
  // already counts as flushed, and flushing again would move it further.
  start_flush_time_ = time(nullptr) + 40;
  KernelConfig c;
  c.manage_gids = true;
  StartKernel(c);
  EXPECT_THAT(files_->flushed(), IsEmpty());
  EXPECT_EQ(km_->stats().flushes, 0u);
  absl::MutexLock lock(&log_mu_);
  EXPECT_THAT(log_, Contains(AllOf(HasSubstr("s ahead of the clock"),
                                   HasSubstr("NFS requests that need one wait up to"))));
}

TEST_F(KernelModeTest, StartFlushesCachesFlushedInThePast) {
  start_flush_time_ = time(nullptr) - 1;
  StartKernel();
  EXPECT_EQ(files_->flushed().size(), 3u);
  absl::MutexLock lock(&log_mu_);
  EXPECT_THAT(log_, Not(Contains(HasSubstr("ahead of the clock"))));
}

TEST_F(KernelModeTest, WithoutManageGidsTheGidCacheIsNeverFlushed) {
  StartKernel();
  // The entries a previous responder left expire on their own: a flush
  // cannot drop the pending ones, and would only make more upcalls.
  EXPECT_THAT(files_->flushed(),
              UnorderedElementsAre("auth.unix.ip", "nfsd.fh", "nfsd.export"));
  EXPECT_EQ(km_->stats().flushes, 3u);
  ASSERT_TRUE(km_->Flush().ok());
  std::vector<std::string> f = files_->flushed();
  EXPECT_EQ(std::count(f.begin(), f.end(), "auth.unix.gid"), 0);
}

TEST_F(KernelModeTest, AnswersAnExportUpcall) {
  const std::string p = Share("a");
  StartKernel();
  export_->Upcall(absl::StrCat("$10.0.0.1 ", p, "\n"));
  ASSERT_TRUE(export_->WaitWritten(1));
  EXPECT_THAT(export_->written(), ElementsAre(Pos("10.0.0.1", p)));
  km_->WaitIdle();
  KernelStats s = km_->stats();
  EXPECT_EQ(s.upcalls, 1u);
  EXPECT_EQ(s.negative, 0u);
}

TEST_F(KernelModeTest, AnswersIpAndFhUpcalls) {
  const std::string p = Share("a");
  StartKernel();
  ip_->Upcall("nfsd 10.0.0.1\n");
  ASSERT_TRUE(ip_->WaitWritten(1));
  EXPECT_THAT(
      ip_->written(),
      ElementsAre(absl::StrCat("nfsd 10.0.0.1 ", kNow + 1800, " $10.0.0.1\n")));
  const FsIdentity id = *probe_.Probe(p);
  const std::string fsid = *EncodeFsid(kFsidEncodeDev, id);
  LineWriter w;
  w.Text("$10.0.0.1");
  w.Int(kFsidEncodeDev);
  w.Hex(fsid);
  fh_->Upcall(std::move(w).Finish());
  ASSERT_TRUE(fh_->WaitWritten(1));
  EXPECT_EQ(fh_->written()[0],
            FhDowncall("$10.0.0.1", kFsidEncodeDev, fsid, kNow + 1800, p));
}

// A share answers with the identity recorded when it was added, not the
// one its file system has now (a replica with another uuid, the failover
// partner's copy): export lines carry the recorded uuid and handles made
// from it lead to the share; the difference is logged.
TEST_F(KernelModeTest, ShareIsAnsweredWithItsRecordedIdentity) {
  const std::string p = dir_.Mkdir("replica");
  libshare::Operation add = libshare::testing::AddShare(p, "g");
  add.fs_identity = "uuid:0123456789abcdef0123456789abcdef";
  Apply({libshare::testing::CreateGroup("g"), add});
  group_made_ = true;
  FsIdentity live;
  live.major = 8;
  live.minor = 1;
  live.inode = 4242;
  live.fs_root = true;
  live.uuid = Uuid{0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10,
                   0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10};
  probe_.Set(p, live);
  StartKernel();
  export_->Upcall(absl::StrCat("$10.0.0.1 ", p, "\n"));
  ASSERT_TRUE(export_->WaitWritten(1));
  EXPECT_THAT(export_->written()[0],
              HasSubstr(" uuid \\x0123456789abcdef0123456789abcdef\n"));
  FsIdentity recorded = live;
  recorded.uuid = Uuid{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
                       0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef};
  // A handle the partner gave out (made from the recorded uuid) is found.
  const std::string good = *EncodeFsid(kFsidUuid16Inum, recorded);
  LineWriter w;
  w.Text("$10.0.0.1");
  w.Int(kFsidUuid16Inum);
  w.Hex(good);
  fh_->Upcall(std::move(w).Finish());
  ASSERT_TRUE(fh_->WaitWritten(1));
  EXPECT_EQ(fh_->written()[0],
            FhDowncall("$10.0.0.1", kFsidUuid16Inum, good, kNow + 1800, p));
  // One made from the replica's own uuid is not this share's.
  const std::string other = *EncodeFsid(kFsidUuid16Inum, live);
  LineWriter w2;
  w2.Text("$10.0.0.1");
  w2.Int(kFsidUuid16Inum);
  w2.Hex(other);
  fh_->Upcall(std::move(w2).Finish());
  ASSERT_TRUE(fh_->WaitWritten(2));
  EXPECT_THAT(fh_->written()[1], Not(HasSubstr(p)));
  absl::MutexLock lock(&log_mu_);
  EXPECT_THAT(log_, Contains(AllOf(
                        HasSubstr(p),
                        HasSubstr("now uuid:fedcba9876543210fedcba9876543210"),
                        HasSubstr("recorded uuid:0123456789abcdef"))));
}

// A share added before its own file system was mounted recorded the
// identity of the one above it: once mounted, it is answered with its own
// (the recorded one would be the parent export's too), and that is logged.
TEST_F(KernelModeTest, IdentityRecordedOnTheParentBeforeItsMountIsNotAnswered) {
  const std::string p = dir_.Mkdir("dataset");
  const std::string parent = p.substr(0, p.rfind('/'));
  libshare::Operation add = libshare::testing::AddShare(p, "g");
  add.fs_identity = "uuid:0123456789abcdef0123456789abcdef";
  Apply({libshare::testing::CreateGroup("g"), add});
  group_made_ = true;
  FsIdentity above;
  above.major = 8;
  above.minor = 1;
  above.inode = 2;
  above.uuid = Uuid{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
                    0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef};
  probe_.Set(parent, above);
  FsIdentity own;
  own.major = 8;
  own.minor = 2;
  own.inode = 2;
  own.fs_root = true;
  own.uuid = Uuid{0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10,
                  0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10};
  probe_.Set(p, own);
  StartKernel();
  export_->Upcall(absl::StrCat("$10.0.0.1 ", p, "\n"));
  ASSERT_TRUE(export_->WaitWritten(1));
  EXPECT_THAT(export_->written()[0],
              HasSubstr(" uuid \\xfedcba9876543210fedcba9876543210\n"));
  absl::MutexLock lock(&log_mu_);
  EXPECT_THAT(log_, Contains(AllOf(
                        HasSubstr(p),
                        HasSubstr("is the identity of the file system above it"),
                        HasSubstr("its own, uuid:fedcba9876543210"))));
}

TEST_F(KernelModeTest, GidUpcallsAreAnsweredBrieflyWithoutManageGids) {
  // Only made while the kernel still counts a previous responder that
  // managed gids (or our own last answer) as listening: answered at once,
  // as that responder would have, but kept for two minutes only.
  StartKernel();
  gid_->Upcall("1000\n");
  ASSERT_TRUE(gid_->WaitWritten(1));
  EXPECT_EQ(gid_->written()[0],
            absl::StrCat("1000 ", kNow + 120, " 2 1000 100\n"));
}

TEST_F(KernelModeTest, GidUpcallsAreAnsweredForTheTtlWithManageGids) {
  KernelConfig c;
  c.manage_gids = true;
  StartKernel(c);
  EXPECT_THAT(files_->flushed(), ::testing::Contains("auth.unix.gid"));
  gid_->Upcall("1000\n");
  ASSERT_TRUE(gid_->WaitWritten(1));
  EXPECT_EQ(gid_->written()[0],
            absl::StrCat("1000 ", kNow + 1800, " 2 1000 100\n"));
}

TEST_F(KernelModeTest, BadUpcallIsCountedAndLogged) {
  StartKernel();
  export_->Upcall("only-one-field\n");
  // Counted by the reading thread, with no answer to wait for.
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (km_->stats().bad_upcalls == 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  km_->WaitIdle();
  EXPECT_EQ(km_->stats().bad_upcalls, 1u);
  EXPECT_EQ(km_->stats().upcalls, 0u);
  EXPECT_THAT(export_->written(), IsEmpty());
  absl::MutexLock lock(&log_mu_);
  EXPECT_THAT(log_, ::testing::Contains(HasSubstr("nfsd.export")));
}

TEST_F(KernelModeTest, SlowResolverForOneClientDoesNotDelayAnother) {
  auto resolver = std::make_shared<authcache::testing::FakeResolver>();
  resolver->AddHost("10.0.0.1", "hosta");
  resolver->AddHost("10.0.0.2", "hostb");
  resolver->CloseGate("10.0.0.1", absl::Seconds(20));
  Open(resolver);
  const std::string p = Share("a", "rw=hosta:hostb");
  StartKernel();
  export_->Upcall(absl::StrCat("$10.0.0.1 ", p, "\n"));
  resolver->WaitUntilGateEntered();
  export_->Upcall(absl::StrCat("$10.0.0.2 ", p, "\n"));
  ASSERT_TRUE(export_->WaitWritten(1));
  EXPECT_TRUE(resolver->GateHolding());
  EXPECT_THAT(export_->written(), ElementsAre(Pos("10.0.0.2", p)));
  resolver->OpenGate();
  ASSERT_TRUE(export_->WaitWritten(2));
  EXPECT_EQ(export_->written()[1], Pos("10.0.0.1", p));
}

TEST_F(KernelModeTest, UnknownDomainIsRecreatedThenAnswered) {
  const std::string p = Share("a");
  StartKernel();
  domains_.SetStrict(true);  // as after `exportfs -f` by someone else
  export_->Upcall(absl::StrCat("$10.0.0.1 ", p, "\n"));
  ASSERT_TRUE(export_->WaitWritten(1));
  EXPECT_THAT(
      ip_->written(),
      ElementsAre(absl::StrCat("nfsd 10.0.0.1 ", kNow + 1800, " $10.0.0.1\n")));
  EXPECT_THAT(export_->written(), ElementsAre(Pos("10.0.0.1", p)));
  EXPECT_EQ(km_->stats().write_errors, 0u);
}

TEST_F(KernelModeTest, FileHandleWritesIpAndExportThenAsksTheKernel) {
  const std::string p = Share("a");
  dir_.Mkdir("a/sub");
  StartKernel();
  auto fh = km_->FileHandle(Ip("10.0.0.1"), Mnt("10.0.0.1", p + "/sub"), 64);
  ASSERT_TRUE(fh.ok()) << fh.status();
  EXPECT_EQ(fh->substr(0, 4), std::string("\x01\x00\x01\x00", 4));
  EXPECT_EQ(ip_->written().size(), 1u);
  EXPECT_THAT(export_->written(), ElementsAre(Pos("10.0.0.1", p)));
  EXPECT_THAT(files_->handle_requests(),
              ElementsAre(absl::StrCat("$10.0.0.1 ", p, "/sub 64")));
}

TEST_F(KernelModeTest, FileHandleOfARefusedDecisionAsksNothing) {
  const std::string p = Share("a", "rw=10.0.0.1");
  StartKernel();
  AccessResult refused = Mnt("10.0.0.9", p);
  ASSERT_FALSE(refused.granted());
  ASSERT_TRUE(refused.share.has_value());
  auto fh = km_->FileHandle(Ip("10.0.0.9"), refused, 32);
  EXPECT_TRUE(absl::IsPermissionDenied(fh.status())) << fh.status();
  EXPECT_THAT(files_->handle_requests(), IsEmpty());
  EXPECT_THAT(export_->written(), IsEmpty());
}

TEST_F(KernelModeTest, FileHandleTrustsTheMountDecisionOfTheCaller) {
  // Only the mounting user may search "private"; MOUNT walked as that
  // user, and the kernel mode must not walk again as nobody.
  const std::string p = Share("a", "root=10.0.0.1");
  dir_.Mkdir("a/private/sub");
  ASSERT_EQ(chmod((p + "/private").c_str(), 0700), 0);
  AccessRequest req;
  req.client = Ip("10.0.0.1");
  const std::string path = p + "/private/sub";
  req.path = path;
  req.uid = getuid();
  req.gid = getgid();
  req.resolve = true;
  AccessResult decided = access_->Decide(req);
  ASSERT_TRUE(decided.granted()) << decided.reason;
  // Nobody may not pass "private": a second decision as nobody would
  // refuse what MOUNT granted.
  ASSERT_FALSE(Mnt("10.0.0.1", path).granted());
  StartKernel();
  auto fh = km_->FileHandle(Ip("10.0.0.1"), decided, 64);
  EXPECT_TRUE(fh.ok()) << fh.status();
}

TEST_F(KernelModeTest,
       FileHandleRefusesAPathMadeALinkWhileTheKernelResolvedIt) {
  const std::string p = Share("a");
  dir_.Mkdir("a/sub");
  dir_.Mkdir("elsewhere");
  const AccessResult decided = Mnt("10.0.0.1", p + "/sub");
  StartKernel();
  files_->OnHandle([&] {
    std::filesystem::rename(p + "/sub", p + "/sub.old");
    std::filesystem::create_directory_symlink(dir_.path() + "/elsewhere",
                                              p + "/sub");
  });
  auto fh = km_->FileHandle(Ip("10.0.0.1"), decided, 64);
  EXPECT_TRUE(absl::IsPermissionDenied(fh.status())) << fh.status();
  // The grant written for the mount is taken back at once.
  EXPECT_THAT(export_->written(),
              ElementsAre(Pos("10.0.0.1", p),
                          absl::StrCat("$10.0.0.1 ", p, " ", kNow + 5, "\n")));
}

TEST_F(KernelModeTest, ExportOfAShareMadeALinkWhileAnsweredIsTakenBack) {
  const std::string p = Share("a");
  dir_.Mkdir("elsewhere");
  StartKernel();
  std::atomic<bool> swapped{false};
  export_->OnWrite([&](const std::string& line) {
    if (line != Pos("10.0.0.1", p) || swapped.exchange(true)) return;
    std::filesystem::rename(p, p + ".old");
    std::filesystem::create_directory_symlink(dir_.path() + "/elsewhere", p);
  });
  export_->Upcall(absl::StrCat("$10.0.0.1 ", p, "\n"));
  ASSERT_TRUE(export_->WaitWritten(2));
  km_->WaitIdle();
  EXPECT_THAT(export_->written(),
              ElementsAre(Pos("10.0.0.1", p),
                          absl::StrCat("$10.0.0.1 ", p, " ", kNow + 5, "\n")));
}

TEST_F(KernelModeTest, ExportOfAShareReplacedByAnotherDirectoryIsTakenBack) {
  const std::string p = Share("a");
  StartKernel();
  std::atomic<bool> swapped{false};
  export_->OnWrite([&](const std::string& line) {
    if (line != Pos("10.0.0.1", p) || swapped.exchange(true)) return;
    std::filesystem::rename(p, p + ".old");
    std::filesystem::create_directory(p);
  });
  export_->Upcall(absl::StrCat("$10.0.0.1 ", p, "\n"));
  ASSERT_TRUE(export_->WaitWritten(2));
  km_->WaitIdle();
  EXPECT_EQ(export_->written().back(),
            absl::StrCat("$10.0.0.1 ", p, " ", kNow + 5, "\n"));
}

TEST_F(KernelModeTest,
       FileHandleAnswerIsToldAgainWhenTheTableChangesMeanwhile) {
  auto resolver = std::make_shared<authcache::testing::FakeResolver>();
  resolver->AddHost("10.0.0.1", "hosta");
  resolver->CloseGate("10.0.0.1", absl::Seconds(20));
  Open(resolver);
  const std::string p = Share("a", "rw=10.0.0.1");
  const AccessResult decided = Mnt("10.0.0.1", p);
  ASSERT_TRUE(decided.granted());
  SetOptions(p, "rw=hosta");
  StartKernel();
  absl::StatusOr<std::string> fh;
  std::thread mnt([&] { fh = km_->FileHandle(Ip("10.0.0.1"), decided, 64); });
  resolver->WaitUntilGateEntered();
  // The MNT's answer is being computed with rw; the table changes. The
  // change's rewrite waits behind the MNT on the client's key.
  SetOptions(p, "ro=hosta");
  std::thread change([&] { km_->SharesChanged({p}); });
  resolver->OpenGate();
  mnt.join();
  change.join();
  km_->WaitIdle();
  ASSERT_FALSE(export_->written().empty());
  const std::string last = export_->written().back();
  EXPECT_NE(last, Pos("10.0.0.1", p));  // not the stale rw grant
  EXPECT_THAT(last, HasSubstr(absl::StrCat(" ", kNow + 1800, " ")));
}

TEST_F(KernelModeTest, FlushWritesTheFlushFilesAgain) {
  StartKernel();
  ASSERT_TRUE(km_->Flush().ok());
  EXPECT_EQ(files_->flushed().size(), 6u);  // never auth.unix.gid
  EXPECT_EQ(km_->stats().flushes, 6u);
}

TEST_F(KernelModeTest, AnswersWaitOutASharectlCacheFlush) {
  const std::string p = Share("a");
  StartKernel();
  const int64_t flushed_at = time(nullptr);
  files_->SetFlushTime(flushed_at);
  std::atomic<int64_t> written_at{0};
  export_->OnWrite([&](const std::string&) { written_at = time(nullptr); });
  const size_t before = files_->flushed().size();
  std::thread flush([&] { ASSERT_TRUE(km_->Flush().ok()); });
  while (files_->flushed().size() < before + 3) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  export_->Upcall(absl::StrCat("$10.0.0.1 ", p, "\n"));
  ASSERT_TRUE(export_->WaitWritten(1));
  flush.join();
  km_->WaitIdle();  // the hook runs just after the reply is recorded
  // An answer written in the flush's second would count as flushed.
  EXPECT_GE(written_at, flushed_at + 2);
}

TEST_F(KernelModeTest, UnparseableUpcallWithItsKeyIsToldNoBriefly) {
  StartKernel();
  // fsid type 99 does not exist.
  fh_->Upcall("$10.0.0.1 99 \\x0102\n");
  ASSERT_TRUE(fh_->WaitWritten(1));
  EXPECT_THAT(fh_->written(), ElementsAre(absl::StrCat("$10.0.0.1 99 \\x0102 ",
                                                       kNow + 5, "\n")));
  km_->WaitIdle();
  EXPECT_EQ(km_->stats().bad_upcalls, 1u);
}

TEST(NfsdAvailableTest, TrueOnlyWhenTheNfsdFileSystemIsThere) {
  libshare::testing::TempDir proc;
  proc.Mkdir("fs/nfsd");
  auto before = NfsdAvailable(proc.path());
  ASSERT_TRUE(before.ok());
  EXPECT_FALSE(*before);
  std::ofstream(proc.path() + "/fs/nfsd/export_features") << "0x3feff 0xf\n";
  auto after = NfsdAvailable(proc.path());
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(*after);
}

TEST(CheckNoOtherResponderTest, NamesTheProcessHoldingAChannel) {
  libshare::testing::TempDir proc;
  proc.Mkdir("4242/fd");
  proc.Mkdir("77/fd");
  std::ofstream(proc.path() + "/4242/comm") << "rpc.mountd\n";
  std::filesystem::create_symlink("/dev/null", proc.path() + "/77/fd/0");
  EXPECT_TRUE(CheckNoOtherResponder(proc.path()).ok());
  std::filesystem::create_symlink("/proc/4242/net/rpc/nfsd.export/channel",
                                  proc.path() + "/4242/fd/5");
  absl::Status s = CheckNoOtherResponder(proc.path());
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("process 4242 (rpc.mountd)"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("nfsd.export"));
}

// Each network namespace has its own nfsd: a responder in another one (a
// second head) holds another channel of the same name.
TEST(CheckNoOtherResponderTest, IgnoresAResponderOfAnotherNetworkNamespace) {
  libshare::testing::TempDir proc;
  const std::string self = std::to_string(getpid());
  proc.Mkdir(self + "/ns");
  proc.Mkdir("4242/fd");
  proc.Mkdir("4242/ns");
  std::filesystem::create_symlink("net:[4026531840]",
                                  proc.path() + "/" + self + "/ns/net");
  std::filesystem::create_symlink("net:[4026532999]",
                                  proc.path() + "/4242/ns/net");
  std::filesystem::create_symlink("/proc/4242/net/rpc/nfsd.export/channel",
                                  proc.path() + "/4242/fd/5");
  EXPECT_TRUE(CheckNoOtherResponder(proc.path()).ok());
  // The same namespace: refused.
  std::filesystem::remove(proc.path() + "/4242/ns/net");
  std::filesystem::create_symlink("net:[4026531840]",
                                  proc.path() + "/4242/ns/net");
  EXPECT_FALSE(CheckNoOtherResponder(proc.path()).ok());
}

TEST(CheckNoOtherResponderTest, IgnoresItself) {
  libshare::testing::TempDir proc;
  const std::string self = std::to_string(getpid());
  proc.Mkdir(self + "/fd");
  std::filesystem::create_symlink("/proc/self/net/rpc/nfsd.fh/channel",
                                  proc.path() + "/" + self + "/fd/3");
  EXPECT_TRUE(CheckNoOtherResponder(proc.path()).ok());
}

}  // namespace
}  // namespace sharemgrd::kernel

namespace sharemgrd::kernel {
namespace {

std::string ExportLine(const std::string& client, const std::string& path) {
  return absl::StrCat("$", client, " ", path, "\n");
}

std::string FhLine(const std::string& client, const FsIdentity& id) {
  LineWriter w;
  w.Text("$" + client);
  w.Int(kFsidEncodeDev);
  w.Hex(*EncodeFsid(kFsidEncodeDev, id));
  return std::move(w).Finish();
}

class PusherTest : public KernelModeTest {
 protected:
  // Adds `n` shares many/sNNNNN in one batch and returns their paths.
  std::vector<std::string> AddMany(int n) {
    std::vector<std::string> paths;
    std::vector<libshare::Operation> ops;
    for (int i = 0; i < n; ++i) {
      paths.push_back(dir_.Mkdir(absl::StrCat("many/s", 10000 + i)));
      ops.push_back(libshare::testing::AddShare(paths.back(), "g"));
    }
    Apply(std::move(ops));
    return paths;
  }
};

TEST_F(PusherTest, OptionChangeRewritesExactlyItsEntries) {
  const std::string a = Share("x/a");
  const std::string b = Share("x/b");
  const std::string x = ShareTree::Ancestors(a)[0];
  StartKernel();
  export_->Upcall(ExportLine("10.0.0.1", a));
  export_->Upcall(ExportLine("10.0.0.2", a));
  export_->Upcall(ExportLine("10.0.0.1", b));
  export_->Upcall(ExportLine("10.0.0.1", "/"));
  export_->Upcall(ExportLine("10.0.0.1", x));
  ASSERT_TRUE(export_->WaitWritten(5));
  km_->WaitIdle();
  export_->ClearWritten();

  SetOptions(a, "ro");
  km_->SharesChanged({a});
  km_->WaitIdle();
  const std::string ro =
      absl::StrCat(" ", kNow + 1800, " 1061 65534 65534 0 secinfo 1 1 1061\n");
  EXPECT_THAT(export_->written(),
              UnorderedElementsAre(absl::StrCat("$10.0.0.1 ", a, ro),
                                   absl::StrCat("$10.0.0.2 ", a, ro)));
  EXPECT_EQ(km_->stats().pushed, 2u);
  EXPECT_EQ(files_->flushed().size(), 3u);  // only the start's
  EXPECT_THAT(fh_->written(), IsEmpty());
}

TEST_F(PusherTest, WaitPushedReturnsOnceTheChangeIsWritten) {
  const std::string a = Share("x/a");
  StartKernel();
  export_->Upcall(ExportLine("10.0.0.1", a));
  ASSERT_TRUE(export_->WaitWritten(1));
  km_->WaitIdle();
  export_->ClearWritten();
  SetOptions(a, "ro");
  km_->SharesChanged({a});
  // What `exportfs -r` waits on: no WaitIdle, the rewrite is there.
  km_->WaitPushed();
  EXPECT_THAT(
      export_->written(),
      ElementsAre(absl::StrCat("$10.0.0.1 ", a, " ", kNow + 1800,
                               " 1061 65534 65534 0 secinfo 1 1 1061\n")));
  EXPECT_EQ(km_->stats().pushed, 1u);
}

TEST_F(PusherTest, UnchangedShareWritesNothing) {
  const std::string a = Share("x/a");
  StartKernel();
  export_->Upcall(ExportLine("10.0.0.1", a));
  ASSERT_TRUE(export_->WaitWritten(1));
  km_->WaitIdle();
  km_->SharesChanged({a});
  km_->WaitIdle();
  EXPECT_EQ(export_->written().size(), 1u);
  EXPECT_EQ(km_->stats().pushed, 0u);
}

TEST_F(PusherTest, RemovalTellsNoAndReleasesTheFileSystemsLocks) {
  const std::string a = Share("x/a");
  const std::string b = Share("x/b");
  FsIdentity other;
  other.major = 9;
  other.minor = 9;
  other.inode = 2;
  probe_.Set(b, other);
  StartKernel();
  export_->Upcall(ExportLine("10.0.0.1", b));
  fh_->Upcall(FhLine("10.0.0.1", other));
  ASSERT_TRUE(export_->WaitWritten(1));
  ASSERT_TRUE(fh_->WaitWritten(1));
  km_->WaitIdle();
  EXPECT_THAT(fh_->written()[0], ::testing::EndsWith(" " + b + "\n"));
  export_->ClearWritten();
  fh_->ClearWritten();

  Apply({libshare::testing::RemoveShare(b)});
  km_->SharesChanged({b});
  km_->WaitIdle();
  EXPECT_THAT(export_->written(),
              ElementsAre(absl::StrCat("$10.0.0.1 ", b, " ", kNow + 60, "\n")));
  ASSERT_EQ(fh_->written().size(), 1u);
  EXPECT_EQ(fh_->written()[0], FhDowncall("$10.0.0.1", kFsidEncodeDev,
                                          *EncodeFsid(kFsidEncodeDev, other),
                                          kNow + 60, std::nullopt));
  EXPECT_THAT(files_->unlocked(), ElementsAre(b));
  EXPECT_EQ(km_->stats().pushed, 2u);
}

TEST_F(PusherTest, RemovalKeepsLocksOfAFileSystemOtherSharesUse) {
  const std::string a = Share("x/a");
  const std::string b = Share("x/b");  // both on the fake device 8:1
  StartKernel();
  Apply({libshare::testing::RemoveShare(b)});
  km_->SharesChanged({b});
  km_->WaitIdle();
  EXPECT_THAT(files_->unlocked(), IsEmpty());
}

TEST_F(PusherTest, AddTurnsEarlierNegativesPositive) {
  const std::string a = Share("x/a");
  const std::string c = dir_.Mkdir("x/c");
  const FsIdentity cid = *probe_.Probe(c);
  StartKernel();
  export_->Upcall(ExportLine("10.0.0.1", c));
  fh_->Upcall(FhLine("10.0.0.1", cid));
  ASSERT_TRUE(export_->WaitWritten(1));
  ASSERT_TRUE(fh_->WaitWritten(1));
  km_->WaitIdle();
  EXPECT_EQ(export_->written()[0],
            absl::StrCat("$10.0.0.1 ", c, " ", kNow + 60, "\n"));
  export_->ClearWritten();
  fh_->ClearWritten();

  Apply({libshare::testing::AddShare(c, "g")});
  km_->SharesChanged({c});
  km_->WaitIdle();
  EXPECT_THAT(export_->written(), ElementsAre(Pos("10.0.0.1", c)));
  ASSERT_EQ(fh_->written().size(), 1u);
  EXPECT_THAT(fh_->written()[0], ::testing::EndsWith(" " + c + "\n"));
  EXPECT_EQ(km_->stats().pushed, 2u);
}

TEST_F(PusherTest, LastVisibleShareGoneTurnsItsPseudoDirsNegative) {
  const std::string a = Share("x/a", "rw=10.0.0.1");
  const std::string x = ShareTree::Ancestors(a)[0];
  StartKernel();
  export_->Upcall(ExportLine("10.0.0.1", x));
  ASSERT_TRUE(export_->WaitWritten(1));
  km_->WaitIdle();
  export_->ClearWritten();
  SetOptions(a, "rw=10.0.0.5");
  km_->SharesChanged({a});
  km_->WaitIdle();
  EXPECT_THAT(export_->written(),
              ElementsAre(absl::StrCat("$10.0.0.1 ", x, " ", kNow + 60, "\n")));
}

TEST_F(PusherTest, GroupDisabledThenEnabledTurnsItsSharesOffAndOn) {
  const std::string a = Share("x/a");
  StartKernel();
  export_->Upcall(ExportLine("10.0.0.1", a));
  ASSERT_TRUE(export_->WaitWritten(1));
  km_->WaitIdle();
  export_->ClearWritten();
  Apply({libshare::testing::GroupOp(libshare::Operation::Type::kDisableGroup,
                                    "g")});
  km_->SharesChanged({a});
  km_->WaitIdle();
  EXPECT_THAT(export_->written(),
              ElementsAre(absl::StrCat("$10.0.0.1 ", a, " ", kNow + 60, "\n")));
  Apply({libshare::testing::GroupOp(libshare::Operation::Type::kEnableGroup,
                                    "g")});
  km_->SharesChanged({a});
  km_->WaitIdle();
  EXPECT_EQ(export_->written().size(), 2u);
  EXPECT_EQ(export_->written()[1], Pos("10.0.0.1", a));
  EXPECT_EQ(km_->stats().pushed, 2u);
  // Disabled, no share was left on its file system: its locks went.
  EXPECT_THAT(files_->unlocked(), ElementsAre(a));
}

TEST_F(PusherTest, APseudoDirsHandleLeadsToItAtStartAndAfterAPush) {
  const std::string a = Share("x/a");
  const std::string x = ShareTree::Ancestors(a)[0];
  StartKernel();
  km_->WaitIdle();
  // What rpc.mountd gave the pseudo directory x: its handles carry the
  // inode and rpc.mountd's uuid of the path.
  auto pseudo_fh = [&](const std::string& path) {
    FsIdentity id = *probe_.Probe(path);
    id.uuid = PseudoRootUuid(path);
    LineWriter w;
    w.Text("$10.0.0.1");
    w.Int(kFsidUuid16Inum);
    w.Hex(*EncodeFsid(kFsidUuid16Inum, id));
    return std::move(w).Finish();
  };
  fh_->Upcall(pseudo_fh(x));
  ASSERT_TRUE(fh_->WaitWritten(1));
  EXPECT_THAT(fh_->written()[0], ::testing::EndsWith(" " + x + "\n"));
  // Still after a push that learnt x again (a share added beside a).
  const std::string c = dir_.Mkdir("x/c");
  Apply({libshare::testing::AddShare(c, "g")});
  km_->SharesChanged({c});
  fh_->ClearWritten();
  fh_->Upcall(pseudo_fh(x));
  ASSERT_TRUE(fh_->WaitWritten(1));
  EXPECT_THAT(fh_->written()[0], ::testing::EndsWith(" " + x + "\n"));
}

// A probe that takes its time and counts how many run at once, as a
// batch's paths on a busy disk would.
class SlowProbe : public FsProbe {
 public:
  explicit SlowProbe(FsProbe* p) : p_(p) {}
  absl::StatusOr<FsIdentity> Probe(const std::string& path) override {
    const int now = ++running_;
    int seen = most_.load();
    while (now > seen && !most_.compare_exchange_weak(seen, now)) {
    }
    absl::SleepFor(absl::Microseconds(200));
    --running_;
    return p_->Probe(path);
  }
  int most() const { return most_; }

 private:
  FsProbe* p_;
  std::atomic<int> running_{0};
  std::atomic<int> most_{0};
};

TEST_F(PusherTest, ABatchsSharesAnswerFhPositivelyWhenSharesChangedReturns) {
  Share("x/a");
  auto slow = std::make_unique<SlowProbe>(&probe_);
  StartKernel({}, std::move(slow));
  km_->WaitIdle();
  const std::vector<std::string> added = AddMany(2000);
  km_->SharesChanged(added);
  // No WaitIdle: what a mount right after `sharectl batch` meets.
  for (const std::string& p : {added.front(), added[1000], added.back()}) {
    fh_->ClearWritten();
    fh_->Upcall(FhLine("10.0.0.1", *probe_.Probe(p)));
    ASSERT_TRUE(fh_->WaitWritten(1));
    EXPECT_THAT(fh_->written()[0], ::testing::EndsWith(" " + p + "\n"));
  }
}

// A probe that holds the probes of paths under many/ until opened.
class GatedProbe : public FsProbe {
 public:
  explicit GatedProbe(FsProbe* p) : p_(p) {}
  absl::StatusOr<FsIdentity> Probe(const std::string& path) override {
    if (path.find("/many/") != std::string::npos) {
      if (!entered_.HasBeenNotified()) entered_.Notify();
      open_.WaitForNotification();
    }
    return p_->Probe(path);
  }
  absl::Notification entered_, open_;

 private:
  FsProbe* p_;
};

TEST_F(PusherTest, AnFhUpcallDuringABatchsProbesWaitsForThem) {
  Share("x/a");
  auto gated = std::make_unique<GatedProbe>(&probe_);
  GatedProbe* gate = gated.get();
  StartKernel({}, std::move(gated));
  km_->WaitIdle();
  const std::vector<std::string> added = AddMany(50);
  const FsIdentity last = *probe_.Probe(added.back());
  std::thread change([&] { km_->SharesChanged(added); });
  gate->entered_.WaitForNotification();
  // Asked while the batch's paths are being examined.
  fh_->Upcall(FhLine("10.0.0.1", last));
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_THAT(fh_->written(), IsEmpty());
  gate->open_.Notify();
  ASSERT_TRUE(fh_->WaitWritten(1));
  change.join();
  EXPECT_THAT(fh_->written()[0],
              ::testing::EndsWith(" " + added.back() + "\n"));
}

TEST_F(PusherTest, ABatchsPathsAreExaminedInParallel) {
  Share("x/a");
  auto slow = std::make_unique<SlowProbe>(&probe_);
  SlowProbe* seen = slow.get();
  KernelConfig c;
  c.probe_threads = 4;
  StartKernel(c, std::move(slow));
  km_->WaitIdle();
  km_->SharesChanged(AddMany(2000));
  EXPECT_GE(seen->most(), 2);
  EXPECT_LE(seen->most(), 4);
}

// A probe that fails for the paths under many/ (folders gone).
class GoneProbe : public FsProbe {
 public:
  explicit GoneProbe(FsProbe* p) : p_(p) {}
  absl::StatusOr<FsIdentity> Probe(const std::string& path) override {
    if (path.find("/many/") != std::string::npos) {
      return absl::FailedPreconditionError(
          path + ": stat: No such file or directory");
    }
    return p_->Probe(path);
  }

 private:
  FsProbe* p_;
};

TEST_F(PusherTest, PathsThatCannotBeExaminedAreNamedUpToFiveThenCounted) {
  Share("x/a");
  StartKernel({}, std::make_unique<GoneProbe>(&probe_));
  km_->WaitIdle();
  km_->SharesChanged(AddMany(20));
  absl::MutexLock lock(&log_mu_);
  int named = 0, counted = 0;
  for (const std::string& l : log_) {
    named += l.find("No such file") != std::string::npos;
    counted +=
        l.find("15 more paths could not be examined") != std::string::npos;
  }
  EXPECT_EQ(named, 5);
  EXPECT_EQ(counted, 1);
}

TEST_F(PusherTest, BoundedMirrorTellsTheKernelToAskAgainForWhatItForgets) {
  const std::string a = Share("x/a");
  const std::string b = Share("x/b");
  const std::string c = Share("x/c");
  KernelConfig config;
  config.mirror_max_entries = 2;
  config.threads = 1;
  StartKernel(config);
  export_->Upcall(ExportLine("10.0.0.1", a));
  ASSERT_TRUE(export_->WaitWritten(1));
  export_->Upcall(ExportLine("10.0.0.1", b));
  ASSERT_TRUE(export_->WaitWritten(2));
  export_->Upcall(ExportLine("10.0.0.1", c));
  ASSERT_TRUE(export_->WaitWritten(4));
  km_->WaitIdle();
  EXPECT_EQ(export_->written()[3], absl::StrCat("$10.0.0.1 ", a, " 1\n"));
}

TEST_F(PusherTest, FlushForgetsWhatWasAnswered) {
  const std::string a = Share("x/a");
  StartKernel();
  export_->Upcall(ExportLine("10.0.0.1", a));
  ASSERT_TRUE(export_->WaitWritten(1));
  km_->WaitIdle();
  ASSERT_TRUE(km_->Flush().ok());
  SetOptions(a, "ro");
  km_->SharesChanged({a});
  km_->WaitIdle();
  EXPECT_EQ(export_->written().size(), 1u);
}

}  // namespace
}  // namespace sharemgrd::kernel

// Several heads (issue 46): head B's kernel mode follows a change another
// head committed, entry by entry, as a local one. Head B's catalog follows
// a real PostgreSQL (tests/support/pg_server.sh, started for this test in
// its own folder); its replayed batches go to KernelMode::SharesChanged as
// the daemon's fan-out sends them (MgmtService::Replicated).
namespace sharemgrd::kernel {
namespace {

class ClusterPusherTest : public KernelModeTest {
 protected:
  void SetUp() override {
    pg_dir_ = dir_.path() + "/pg";
    chmod(dir_.path().c_str(), 0755);
    url_ = Run(absl::StrCat(PG_SERVER_SH, " start ", pg_dir_));
    ASSERT_FALSE(url_.empty());
    a_ = OpenHead("a");
    KernelFixture::SetUp();  // an ordinary catalog, replaced below
    access_.reset();
    catalog_ = OpenHead("b");
    access_ = std::make_unique<ShareAccess>(catalog_.get(), cache_.get());
  }
  void TearDown() override {
    kernel_ready_.store(false);
    KernelModeTest::TearDown();
    a_.reset();
    catalog_.reset();
    Run(absl::StrCat(PG_SERVER_SH, " stop ", pg_dir_, " immediate"));
  }
  static std::string Run(const std::string& cmd) {
    std::string out;
    FILE* p = popen(cmd.c_str(), "r");
    if (p == nullptr) return out;
    char buf[512];
    std::size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    if (pclose(p) != 0) return "";
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }
  std::unique_ptr<libshare::Catalog> OpenHead(const std::string& name) {
    libshare::Catalog::Config c;
    c.db_path = absl::StrCat(dir_.path(), "/", name, ".db");
    c.head_name = name;
    c.follow_interval_ms = 100;
    const std::string url = url_;
    c.engine = [url, name] { return libshare::ConnectPostgres(url, name); };
    if (name == "b") {
      c.on_replicated = [this](const libshare::Batch&,
                               libshare::BatchResult& r, std::string_view) {
        replicated_.fetch_add(1);
        if (!kernel_ready_.load()) return;
        std::vector<std::string> paths;
        for (const libshare::ShareChange& ch : r.changes) paths.push_back(ch.path);
        km_->SharesChanged(paths);
      };
    }
    auto cat = libshare::Catalog::Open(c);
    EXPECT_TRUE(cat.ok()) << cat.status();
    return cat.ok() ? *std::move(cat) : nullptr;
  }
  // Applies on head A and waits (10 s at most) for head B to have it.
  void ApplyOnA(std::vector<libshare::Operation> ops) {
    libshare::Batch b;
    b.ops = std::move(ops);
    const int before = replicated_.load();
    libshare::BatchResult r = a_->Apply(b);
    ASSERT_TRUE(r.ok()) << (r.errors.empty() ? r.commit_error
                                             : r.errors[0].message);
    for (int i = 0; i < 1000 && (catalog_->generation() < r.generation ||
                                 replicated_.load() == before);
         ++i) {
      absl::SleepFor(absl::Milliseconds(10));
    }
    ASSERT_EQ(catalog_->generation(), r.generation);
  }

  std::string pg_dir_, url_;
  std::unique_ptr<libshare::Catalog> a_;
  std::atomic<int> replicated_{0};
  std::atomic<bool> kernel_ready_{false};
};

TEST_F(ClusterPusherTest, ChangeOnAnotherHeadRewritesExactlyItsEntries) {
  const std::string a = dir_.Mkdir("x/a");
  const std::string b = dir_.Mkdir("x/b");
  ApplyOnA({libshare::testing::CreateGroup("g"),
            libshare::testing::AddShare(a, "g"),
            libshare::testing::AddShare(b, "g")});
  StartKernel();
  kernel_ready_.store(true);
  export_->Upcall(ExportLine("10.0.0.1", a));
  export_->Upcall(ExportLine("10.0.0.2", a));
  export_->Upcall(ExportLine("10.0.0.1", b));
  ASSERT_TRUE(export_->WaitWritten(3));
  km_->WaitIdle();
  export_->ClearWritten();

  libshare::Operation ro;
  ro.type = libshare::Operation::Type::kSetOptions;
  ro.group = "g";
  ro.path = a;
  ro.options = "ro";
  ApplyOnA({ro});
  km_->WaitIdle();
  const std::string line =
      absl::StrCat(" ", kNow + 1800, " 1061 65534 65534 0 secinfo 1 1 1061\n");
  EXPECT_THAT(export_->written(),
              UnorderedElementsAre(absl::StrCat("$10.0.0.1 ", a, line),
                                   absl::StrCat("$10.0.0.2 ", a, line)));
  EXPECT_EQ(km_->stats().pushed, 2u);
  EXPECT_EQ(files_->flushed().size(), 3u);  // only the start's: no flush
}

}  // namespace
}  // namespace sharemgrd::kernel

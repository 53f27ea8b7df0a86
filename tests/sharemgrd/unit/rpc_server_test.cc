#include "rpc_server.h"

#include <dirent.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "libshare/client.h"
#include "mgmt_service.h"
#include "xdr_writer.h"

namespace sharemgrd {
namespace {

using ::testing::HasSubstr;

constexpr uint32_t kProg = 0x30000001;

// Procedures: 0 NULL; 1 returns the AUTH_SYS uid; 7 returns the AUTH_SYS
// gid, the number of supplementary groups and the groups; 2 waits for
// `release`;
// 3 appends a result, then fails with GARBAGE_ARGS; 4 returns 64 KiB and
// counts its calls; 5 returns 7 then a shared tail (8, 9); 6 shares a tail
// and then fails with SYSTEM_ERR.
class FakeProgram : public RpcProgram {
 public:
  uint32_t program() const override { return kProg; }
  uint32_t low_version() const override { return 1; }
  uint32_t high_version() const override { return 2; }
  accept_stat Call(const CallContext& ctx, XDR*, std::string* out) override {
    XdrWriter w(out);
    switch (ctx.proc) {
      case 0:
        return SUCCESS;
      case 1:
        w.U32(ctx.auth_sys ? ctx.uid : 0xffffffffu);
        return SUCCESS;
      case 7:
        w.U32(ctx.gid);
        w.U32(static_cast<uint32_t>(ctx.groups().size()));
        for (uint32_t g : ctx.groups()) w.U32(g);
        return SUCCESS;
      case 2:
        release.WaitForNotification();
        return SUCCESS;
      case 3:
        w.U32(42);
        return GARBAGE_ARGS;
      case 5:
        w.U32(7);
        SetSharedReplyTail(tail);
        return SUCCESS;
      case 6:
        SetSharedReplyTail(tail);
        return SYSTEM_ERR;
      case 4:
        big_calls.fetch_add(1);
        out->append(64 << 10, 'b');
        return SUCCESS;
      default:
        return PROC_UNAVAIL;
    }
  }
  absl::Notification release;
  std::atomic<int> big_calls{0};
  std::shared_ptr<const std::string> tail = std::make_shared<std::string>(
      std::string("\0\0\0\x08\0\0\0\x09", 8));
};

std::string Call(uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
                 uint32_t rpcvers = 2, int uid = -1,
                 const std::vector<uint32_t>& gids = {}) {
  std::string s;
  XdrWriter w(&s);
  w.U32(xid);
  w.U32(0);  // CALL
  w.U32(rpcvers);
  w.U32(prog);
  w.U32(vers);
  w.U32(proc);
  if (uid >= 0) {
    std::string body;
    XdrWriter b(&body);
    b.U32(0);            // stamp
    b.String("client");  // machine name
    b.U32(static_cast<uint32_t>(uid));
    b.U32(100);  // gid
    b.U32(static_cast<uint32_t>(gids.size()));
    for (uint32_t g : gids) b.U32(g);
    w.U32(1);    // AUTH_SYS
    w.Opaque(body);
  } else {
    w.U32(0);
    w.U32(0);
  }
  w.U32(0);  // verifier
  w.U32(0);
  return s;
}

std::vector<uint32_t> Words(const std::string& s) {
  std::vector<uint32_t> out;
  for (std::size_t i = 0; i + 4 <= s.size(); i += 4) {
    const unsigned char* u = reinterpret_cast<const unsigned char*>(&s[i]);
    out.push_back((uint32_t{u[0]} << 24) | (uint32_t{u[1]} << 16) |
                  (uint32_t{u[2]} << 8) | u[3]);
  }
  return out;
}

std::vector<uint32_t> Handle(FakeProgram& p, const std::string& rec,
                             bool* sent = nullptr) {
  std::string reply;
  bool s = HandleCallRecord(p, rec.data(), rec.size(), CallContext{}, &reply);
  if (sent) *sent = s;
  return Words(reply);
}

TEST(HandleCallRecordTest, NullCallGetsAcceptedSuccess) {
  FakeProgram p;
  EXPECT_EQ(Handle(p, Call(7, kProg, 1, 0)),
            (std::vector<uint32_t>{7, 1, 0, 0, 0, SUCCESS}));
}

TEST(HandleCallRecordTest, OtherProgramIsProgUnavail) {
  FakeProgram p;
  EXPECT_EQ(Handle(p, Call(7, 100005, 1, 0)),
            (std::vector<uint32_t>{7, 1, 0, 0, 0, PROG_UNAVAIL}));
}

TEST(HandleCallRecordTest, VersionOutOfRangeIsProgMismatchWithTheRange) {
  FakeProgram p;
  EXPECT_EQ(Handle(p, Call(7, kProg, 3, 0)),
            (std::vector<uint32_t>{7, 1, 0, 0, 0, PROG_MISMATCH, 1, 2}));
}

TEST(HandleCallRecordTest, RpcVersionOtherThanTwoIsDenied) {
  FakeProgram p;
  EXPECT_EQ(Handle(p, Call(7, kProg, 1, 0, /*rpcvers=*/3)),
            (std::vector<uint32_t>{7, 1, MSG_DENIED, RPC_MISMATCH, 2, 2}));
}

TEST(HandleCallRecordTest, UnknownProcedureIsProcUnavail) {
  FakeProgram p;
  EXPECT_EQ(Handle(p, Call(7, kProg, 1, 99)),
            (std::vector<uint32_t>{7, 1, 0, 0, 0, PROC_UNAVAIL}));
}

TEST(HandleCallRecordTest, AuthSysUidReachesTheProgram) {
  FakeProgram p;
  EXPECT_EQ(Handle(p, Call(7, kProg, 1, 1, 2, /*uid=*/1234)),
            (std::vector<uint32_t>{7, 1, 0, 0, 0, SUCCESS, 1234}));
}

TEST(HandleCallRecordTest, AuthSysSupplementaryGroupsReachTheProgram) {
  FakeProgram p;
  EXPECT_EQ(
      Handle(p, Call(7, kProg, 1, 7, 2, /*uid=*/1234, {5, 6, 70000})),
      (std::vector<uint32_t>{7, 1, 0, 0, 0, SUCCESS, 100, 3, 5, 6, 70000}));
}

TEST(HandleCallRecordTest, AuthSysWithSixteenGroupsKeepsThemAll) {
  FakeProgram p;
  std::vector<uint32_t> gids;
  for (uint32_t g = 1; g <= 16; ++g) gids.push_back(g);
  std::vector<uint32_t> want{7, 1, 0, 0, 0, SUCCESS, 100, 16};
  want.insert(want.end(), gids.begin(), gids.end());
  EXPECT_EQ(Handle(p, Call(7, kProg, 1, 7, 2, /*uid=*/1234, gids)), want);
}

// RFC 5531 bounds the list at 16; the kernel answers AUTH_BADCRED.
TEST(HandleCallRecordTest, AuthSysWithSeventeenGroupsIsNotAuthSys) {
  FakeProgram p;
  std::vector<uint32_t> gids(17, 5);
  EXPECT_EQ(Handle(p, Call(7, kProg, 1, 1, 2, /*uid=*/1234, gids)),
            (std::vector<uint32_t>{7, 1, 0, 0, 0, SUCCESS, 0xffffffffu}));
}

TEST(HandleCallRecordTest, FailedProcedureSendsOnlyItsStatus) {
  FakeProgram p;
  EXPECT_EQ(Handle(p, Call(7, kProg, 1, 3)),
            (std::vector<uint32_t>{7, 1, 0, 0, 0, GARBAGE_ARGS}));
}

TEST(HandleCallRecordTest, SharedTailFollowsTheResults) {
  FakeProgram p;
  EXPECT_EQ(Handle(p, Call(9, kProg, 1, 5)),
            (std::vector<uint32_t>{9, 1, 0, 0, 0, SUCCESS, 7, 8, 9}));
}

TEST(HandleCallRecordTest, FailedProcedureSendsNoSharedTail) {
  FakeProgram p;
  EXPECT_EQ(Handle(p, Call(9, kProg, 1, 6)),
            (std::vector<uint32_t>{9, 1, 0, 0, 0, SYSTEM_ERR}));
}

TEST(HandleCallRecordTest, ReplyOrTruncatedHeaderIsDropped) {
  FakeProgram p;
  std::string reply_msg;
  XdrWriter(&reply_msg).U32(7);
  XdrWriter(&reply_msg).U32(1);  // REPLY
  bool sent = true;
  Handle(p, reply_msg, &sent);
  EXPECT_FALSE(sent);
  std::string truncated = Call(7, kProg, 1, 0).substr(0, 10);
  sent = true;
  Handle(p, truncated, &sent);
  EXPECT_FALSE(sent);
}

// A live server on a Unix socket in a temporary folder.
class LiveServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sharemgrd_rpc_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/sock";
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strcpy(a.sun_path, path_.c_str());
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ASSERT_EQ(listen(fd, 16), 0);
    server_ = std::make_unique<RpcServer>(threads(), max_connections());
    ListenerLimits limits;
    limits.max_record = 1024;
    limits.idle_timeout = absl::Seconds(60);
    AdjustLimits(limits);
    server_->AddStreamListener(fd, Transport::kUnix, &program_, limits);
    ASSERT_TRUE(server_->Start().ok());
  }
  virtual int threads() const { return 3; }
  virtual void AdjustLimits(ListenerLimits&) const {}
  virtual std::size_t max_connections() const { return 4096; }
  void TearDown() override {
    if (!program_.release.HasBeenNotified()) program_.release.Notify();
    server_->Stop();
    unlink(path_.c_str());
    rmdir(dir_.c_str());
  }
  int Connect() {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strcpy(a.sun_path, path_.c_str());
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    return fd;
  }
  static void Send(int fd, const std::string& rec, bool whole = true) {
    std::string m;
    XdrWriter(&m).U32(0x80000000u | static_cast<uint32_t>(rec.size()));
    m += whole ? rec : rec.substr(0, rec.size() / 2);
    ASSERT_EQ(write(fd, m.data(), m.size()), static_cast<ssize_t>(m.size()));
  }
  // The reply's words, or empty on timeout or closed connection.
  static std::vector<uint32_t> Receive(int fd, int timeout_ms = 5000) {
    std::string buf;
    char tmp[4096];
    for (;;) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, timeout_ms) <= 0) return {};
      ssize_t n = read(fd, tmp, sizeof tmp);
      if (n <= 0) return {};
      buf.append(tmp, static_cast<std::size_t>(n));
      if (buf.size() >= 4) {
        uint32_t len = Words(buf.substr(0, 4))[0] & 0x7fffffffu;
        if (buf.size() >= 4 + len) return Words(buf.substr(4, len));
      }
    }
  }

  std::string dir_, path_;
  FakeProgram program_;
  std::unique_ptr<RpcServer> server_;
};

TEST_F(LiveServerTest, ServesACall) {
  int fd = Connect();
  Send(fd, Call(1, kProg, 1, 0));
  EXPECT_EQ(Receive(fd), (std::vector<uint32_t>{1, 1, 0, 0, 0, SUCCESS}));
  close(fd);
}

TEST_F(LiveServerTest, SharedTailIsSentInsideTheReplyRecord) {
  int fd = Connect();
  Send(fd, Call(1, kProg, 1, 5));
  Send(fd, Call(2, kProg, 1, 0));
  EXPECT_EQ(Receive(fd),
            (std::vector<uint32_t>{1, 1, 0, 0, 0, SUCCESS, 7, 8, 9}));
  close(fd);
}

TEST_F(LiveServerTest, HalfARecordDoesNotBlockOtherClients) {
  int slow = Connect();
  Send(slow, Call(1, kProg, 1, 0), /*whole=*/false);
  int fast = Connect();
  Send(fast, Call(2, kProg, 1, 0));
  EXPECT_EQ(Receive(fast), (std::vector<uint32_t>{2, 1, 0, 0, 0, SUCCESS}));
  close(slow);
  close(fast);
}

TEST_F(LiveServerTest, StalledCallDoesNotBlockOtherClients) {
  int stalled = Connect();
  Send(stalled, Call(1, kProg, 1, 2));
  int other = Connect();
  Send(other, Call(2, kProg, 1, 0));
  EXPECT_EQ(Receive(other), (std::vector<uint32_t>{2, 1, 0, 0, 0, SUCCESS}));
  program_.release.Notify();
  EXPECT_EQ(Receive(stalled), (std::vector<uint32_t>{1, 1, 0, 0, 0, SUCCESS}));
  close(stalled);
  close(other);
}

class OneThreadServerTest : public LiveServerTest {
 protected:
  int threads() const override { return 1; }
};

TEST_F(OneThreadServerTest, PoolGrowsWhenItsOnlyThreadIsBlocked) {
  int stalled = Connect();
  Send(stalled, Call(1, kProg, 1, 2));
  int other = Connect();
  Send(other, Call(2, kProg, 1, 0));
  EXPECT_EQ(Receive(other), (std::vector<uint32_t>{2, 1, 0, 0, 0, SUCCESS}));
  program_.release.Notify();
  EXPECT_EQ(Receive(stalled), (std::vector<uint32_t>{1, 1, 0, 0, 0, SUCCESS}));
  close(stalled);
  close(other);
}

TEST_F(LiveServerTest, OversizedRecordClosesOnlyThatConnection) {
  int bad = Connect();
  Send(bad, std::string(2000, 'x'));
  EXPECT_TRUE(Receive(bad).empty());
  int good = Connect();
  Send(good, Call(3, kProg, 1, 0));
  EXPECT_EQ(Receive(good), (std::vector<uint32_t>{3, 1, 0, 0, 0, SUCCESS}));
  close(bad);
  close(good);
}

TEST_F(LiveServerTest, PeerCredentialsReachTheProgram) {
  // Procedure 1 reports the AUTH_SYS uid; SO_PEERCRED is checked by
  // MgmtService, so here only that the call is served with a Unix peer.
  int fd = Connect();
  Send(fd, Call(4, kProg, 2, 1, 2, /*uid=*/0));
  EXPECT_EQ(Receive(fd), (std::vector<uint32_t>{4, 1, 0, 0, 0, SUCCESS, 0}));
  close(fd);
}

class FourConnectionServerTest : public LiveServerTest {
 protected:
  std::size_t max_connections() const override { return 4; }
};

TEST_F(FourConnectionServerTest, NewConnectionAtTheLimitClosesTheIdlest) {
  std::vector<int> fds;
  for (uint32_t i = 0; i < 4; ++i) {
    fds.push_back(Connect());
    Send(fds.back(), Call(i, kProg, 1, 0));
    ASSERT_FALSE(Receive(fds.back()).empty());
    usleep(5000);  // distinct last-activity times: fds[0] is idle longest
  }
  int fresh = Connect();
  Send(fresh, Call(9, kProg, 1, 0));
  EXPECT_EQ(Receive(fresh), (std::vector<uint32_t>{9, 1, 0, 0, 0, SUCCESS}));
  EXPECT_TRUE(Receive(fds[0], 2000).empty()) << "idlest not closed";
  Send(fds[3], Call(8, kProg, 1, 0));
  EXPECT_EQ(Receive(fds[3]), (std::vector<uint32_t>{8, 1, 0, 0, 0, SUCCESS}));
  for (int fd : fds) close(fd);
  close(fresh);
}

// Sends `n` calls of procedure 4 at once, without reading.
void Pipeline(int fd, int n) {
  std::string rec = Call(1, kProg, 1, 4);
  std::string all;
  for (int i = 0; i < n; ++i) {
    XdrWriter(&all).U32(0x80000000u | static_cast<uint32_t>(rec.size()));
    all += rec;
  }
  ASSERT_EQ(write(fd, all.data(), all.size()),
            static_cast<ssize_t>(all.size()));
}

std::size_t ThreadCount() {
  std::size_t n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
  }
  return n;
}

TEST_F(OneThreadServerTest, ClientNotReadingItsRepliesHoldsNoThread) {
  const std::size_t threads_before = ThreadCount();
  int stuck = Connect();
  int small = 4096;
  setsockopt(stuck, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  Pipeline(stuck, 200);
  usleep(300 * 1000);  // a blocked thread would have been replaced by now
  int other = Connect();
  Send(other, Call(2, kProg, 1, 0));
  EXPECT_EQ(Receive(other, 1000),
            (std::vector<uint32_t>{2, 1, 0, 0, 0, SUCCESS}));
  // The pool grows only while a thread is stuck: it did not.
  EXPECT_EQ(ThreadCount(), threads_before);
  close(stuck);
  close(other);
}

TEST_F(LiveServerTest, PipelinedCallsWaitWhileRepliesAreQueued) {
  int fd = Connect();
  int small = 4096;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  Pipeline(fd, 200);
  usleep(300 * 1000);
  // Served: what fits the queue's watermark and the socket, not all 200.
  EXPECT_LT(program_.big_calls.load(), 50);
  // Every reply arrives, whole and in order, once the client reads.
  std::string all;
  const std::size_t reply_size = 4 + 6 * 4 + (64u << 10);
  char tmp[65536];
  while (all.size() < 200 * reply_size) {
    pollfd p{fd, POLLIN, 0};
    ASSERT_GT(poll(&p, 1, 5000), 0) << "after " << all.size() << " bytes";
    ssize_t n = read(fd, tmp, sizeof tmp);
    ASSERT_GT(n, 0);
    all.append(tmp, static_cast<std::size_t>(n));
  }
  EXPECT_EQ(all.size(), 200 * reply_size);
  for (std::size_t i = 0; i < 200; ++i) {
    std::vector<uint32_t> head = Words(all.substr(i * reply_size, 28));
    ASSERT_EQ(head[0], 0x80000000u | (reply_size - 4)) << "reply " << i;
    EXPECT_EQ(head[6], SUCCESS) << "reply " << i;
  }
  EXPECT_EQ(program_.big_calls.load(), 200);
  close(fd);
}

class ShortSendTimeoutServerTest : public LiveServerTest {
 protected:
  void AdjustLimits(ListenerLimits& l) const override {
    l.send_timeout = absl::Milliseconds(200);
  }
};

TEST_F(ShortSendTimeoutServerTest, ClientNotReadingIsClosedAfterSendTimeout) {
  int fd = Connect();
  int small = 4096;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  Pipeline(fd, 50);
  for (int i = 0; i < 20 && server_->connection_count() == 0; ++i) {
    usleep(10 * 1000);
  }
  ASSERT_EQ(server_->connection_count(), 1u);
  for (int i = 0; i < 40 && server_->connection_count() > 0; ++i) {
    usleep(100 * 1000);
  }
  EXPECT_EQ(server_->connection_count(), 0u);
  close(fd);
}

class SmallQueueServerTest : public LiveServerTest {
 protected:
  void AdjustLimits(ListenerLimits& l) const override {
    l.max_queued = 16 << 10;
  }
};

TEST_F(SmallQueueServerTest, ReplyOverTheQueueCapClosesTheConnection) {
  int fd = Connect();
  int small = 4096;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  Pipeline(fd, 4);
  usleep(200 * 1000);
  for (int i = 0; i < 40 && server_->connection_count() > 0; ++i) {
    usleep(50 * 1000);
  }
  EXPECT_EQ(server_->connection_count(), 0u);
  close(fd);
}

class PeerRecordLimitServerTest : public LiveServerTest {
 protected:
  void AdjustLimits(ListenerLimits& l) const override {
    l.record_limit = [](const CallContext& c) -> std::size_t {
      return c.has_peer_cred ? 100 : 1024;
    };
  }
};

TEST_F(PeerRecordLimitServerTest, RecordOverThePeersLimitClosesTheConnection) {
  int fd = Connect();
  Send(fd, std::string(200, 'x'));  // under max_record, over the peer's
  EXPECT_TRUE(Receive(fd, 2000).empty());
  int good = Connect();
  Send(good, Call(3, kProg, 1, 0));
  EXPECT_EQ(Receive(good), (std::vector<uint32_t>{3, 1, 0, 0, 0, SUCCESS}));
  close(fd);
  close(good);
}

std::atomic<int> big_inputs{0};

class BigInputServerTest : public LiveServerTest {
 protected:
  void AdjustLimits(ListenerLimits& l) const override {
    big_inputs.store(0);
    l.big_input_bytes = 300;
    l.on_big_input = [](const CallContext& c) {
      if (c.has_peer_cred) big_inputs.fetch_add(1);  // its peer is known
    };
  }
};

// on_big_input is called once per call, as soon as the part received
// holds big_input_bytes, before the rest of it arrives; never for a small
// call.
TEST_F(BigInputServerTest, BigCallIsSaidBeforeItsRestArrives) {
  int fd = Connect();
  Send(fd, Call(1, kProg, 1, 0));
  EXPECT_EQ(Receive(fd), (std::vector<uint32_t>{1, 1, 0, 0, 0, SUCCESS}));
  EXPECT_EQ(big_inputs.load(), 0) << "a small call";
  for (uint32_t xid : {2u, 3u}) {
    const std::string rec = Call(xid, kProg, 1, 0) + std::string(600, 'p');
    std::string marked;
    XdrWriter(&marked).U32(0x80000000u | static_cast<uint32_t>(rec.size()));
    marked += rec;
    const int said = big_inputs.load();
    ASSERT_EQ(write(fd, marked.data(), 400), 400);
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (big_inputs.load() == said &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_EQ(big_inputs.load(), said + 1) << "not said before the rest";
    ASSERT_EQ(write(fd, marked.data() + 400, marked.size() - 400),
              static_cast<ssize_t>(marked.size() - 400));
    EXPECT_EQ(Receive(fd), (std::vector<uint32_t>{xid, 1, 0, 0, 0, SUCCESS}));
    EXPECT_EQ(big_inputs.load(), said + 1) << "said more than once";
  }
  close(fd);
}

class InputBudgetServerTest : public LiveServerTest {
 protected:
  void AdjustLimits(ListenerLimits& l) const override {
    l.input_budget = 1000;
  }
};

TEST_F(InputBudgetServerTest, RecordPassingTheSharedBudgetClosesItsConnection) {
  std::string rec = Call(1, kProg, 1, 0) + std::string(900, 'p');
  std::string marked;
  XdrWriter(&marked).U32(0x80000000u | static_cast<uint32_t>(rec.size()));
  marked += rec;
  int first = Connect();
  ASSERT_EQ(write(first, marked.data(), 800), 800);
  usleep(100 * 1000);
  int second = Connect();
  ASSERT_EQ(write(second, marked.data(), 800), 800);
  EXPECT_TRUE(Receive(second, 2000).empty()) << "second not closed";
  ASSERT_EQ(write(first, marked.data() + 800, marked.size() - 800),
            static_cast<ssize_t>(marked.size() - 800));
  EXPECT_EQ(Receive(first), (std::vector<uint32_t>{1, 1, 0, 0, 0, SUCCESS}));
  close(first);
  close(second);
}

class TwoConnectionServerTest : public LiveServerTest {
 protected:
  std::size_t max_connections() const override { return 2; }
};

TEST_F(TwoConnectionServerTest, ConnectionWithACallInProgressIsNotEvicted) {
  int busy = Connect();
  Send(busy, Call(1, kProg, 1, 2));  // waits for release: silent, in a call
  usleep(20 * 1000);
  int idle = Connect();
  Send(idle, Call(2, kProg, 1, 0));
  ASSERT_FALSE(Receive(idle).empty());
  usleep(20 * 1000);
  int fresh = Connect();  // at the limit: closes one
  Send(fresh, Call(3, kProg, 1, 0));
  EXPECT_EQ(Receive(fresh), (std::vector<uint32_t>{3, 1, 0, 0, 0, SUCCESS}));
  EXPECT_TRUE(Receive(idle, 2000).empty()) << "idle connection not closed";
  program_.release.Notify();
  EXPECT_EQ(Receive(busy), (std::vector<uint32_t>{1, 1, 0, 0, 0, SUCCESS}));
  close(busy);
  close(idle);
  close(fresh);
}

TEST(DescriptorLimitTest, RaisesTheSoftLimitUpToTheHardLimit) {
  rlimit before{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &before), 0);
  if (before.rlim_max != RLIM_INFINITY && before.rlim_max < 512) {
    GTEST_SKIP() << "hard descriptor limit below 512";
  }
  rlimit low = before;
  low.rlim_cur = 256;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  EXPECT_EQ(RaiseDescriptorLimit(512), 512u);
  rlimit now{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &now), 0);
  EXPECT_EQ(now.rlim_cur, 512u);
  EXPECT_EQ(RaiseDescriptorLimit(100), 512u) << "never lowered";
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &before), 0);
}

TEST(ClientTest, ConnectToMissingSocketIsUnavailableAndNamesThePath) {
  auto c = libshare::Client::Connect("/nonexistent/sharemgrd.sock");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(c.status().message()),
              HasSubstr("/nonexistent/sharemgrd.sock"));
}

TEST(MayChangeTest, RootMayChange) { EXPECT_TRUE(MayChange(0, 0, {})); }

TEST(MayChangeTest, OtherUserWithoutAdminGroupMayNot) {
  EXPECT_FALSE(MayChange(65534, 65534, {}));
}

TEST(MayChangeTest, PrimaryGroupMatchingAdminGroupMay) {
  EXPECT_TRUE(MayChange(65534, 4242, gid_t{4242}));
}

}  // namespace
}  // namespace sharemgrd

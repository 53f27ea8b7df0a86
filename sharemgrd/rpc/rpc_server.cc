// Why this server owns its sockets instead of using libtirpc's svc_run:
// svc_run serves one request at a time on one thread and has no
// multi-threaded mode, so one MNT stalled on a 20 s name lookup would stop
// every other client, and one client sending half a record would block the
// loop in a read. Here every worker thread waits on one epoll set with
// EPOLLONESHOT: the thread that gets a connection's event reads what is
// there, serves the complete calls in order and re-arms the connection.
// No hand-off between an I/O thread and workers (the cost that would
// dominate a 40,000 calls/s MNT load on two cores), a stalled call holds
// one thread and its own connection only, and each connection keeps its
// own partial-record buffer with a size limit and an idle timeout.
// Replies are never written with a wait: they queue on their connection and
// leave when epoll says it is writable, so a client that does not read
// holds no thread (it once held one for 10 s per reply, and 70 of them
// stalled every other client). A connection with a full queue is not read:
// pipelining more calls cannot grow it.
// libtirpc still does the XDR (xdr_callmsg, xdrmem) and, in the daemon,
// rpcbind registration.
#include "rpc_server.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <optional>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "log.h"
#include "record_reader.h"
#include "xdr_writer.h"

namespace sharemgrd {
namespace {

// The pool keeps --threads threads that are free or in a call younger than
// kStuckMs: while calls block (name lookups), it grows up to kThreadGrowth
// times --threads; the extra threads stay, idle, until Stop().
constexpr std::size_t kThreadGrowth = 16;
constexpr int64_t kStuckMs = 100;
constexpr auto kJanitorTick = absl::Milliseconds(50);
constexpr std::size_t kReadChunk = 64 * 1024;
constexpr std::size_t kReadBudget = 1024 * 1024;  // per event, for fairness
constexpr uint32_t kAuthSys = 1;
constexpr std::size_t kMaxDatagramReply = 65507;
// UDP answers no datagram with more than this many times its size: source
// addresses are not verified, so a bigger answer (EXPORT of many shares)
// would make us a traffic amplifier. Such calls get SYSTEM_ERR and clients
// use TCP (showmount tries TCP first; MNT and UMNT replies are small).
constexpr std::size_t kUdpAmplification = 4;
// Replies smaller than this are appended to the queue's last chunk.
constexpr std::size_t kKeptQueueCapacity = 256u << 10;
// After accept found no free descriptor: how long the listener rests while
// the evicted connection's thread closes it (instead of spinning on a
// listener that stays readable).
constexpr auto kNoDescriptorPause = std::chrono::milliseconds(5);

int64_t NowMs() {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000 + ts.tv_nsec / 1000000;
}

uint32_t GetU32(const char* p) {
  const unsigned char* u = reinterpret_cast<const unsigned char*>(p);
  return (uint32_t{u[0]} << 24) | (uint32_t{u[1]} << 16) |
         (uint32_t{u[2]} << 8) | uint32_t{u[3]};
}

// AUTH_SYS body (RFC 5531 appendix A): stamp, machinename<255>, uid, gid,
// gids<16>. A body without the complete list, or with more than 16
// groups, is not AUTH_SYS (the kernel answers AUTH_BADCRED).
bool ParseAuthSys(const char* p, std::size_t n, CallContext* ctx) {
  if (n < 8) return false;
  uint32_t name_len = GetU32(p + 4);
  if (name_len > 255) return false;
  std::size_t off = 8 + name_len + XdrWriter::Pad(name_len);
  if (off + 12 > n) return false;
  uint32_t count = GetU32(p + off + 8);
  if (count > ctx->gids.size() || off + 12 + 4 * std::size_t{count} > n) {
    return false;
  }
  ctx->uid = GetU32(p + off);
  ctx->gid = GetU32(p + off + 4);
  for (uint32_t i = 0; i < count; ++i) {
    ctx->gids[i] = GetU32(p + off + 12 + 4 * i);
  }
  ctx->group_count = static_cast<uint8_t>(count);
  return true;
}

}  // namespace

namespace {
thread_local std::shared_ptr<const std::string> t_shared_tail;
}  // namespace

void SetSharedReplyTail(std::shared_ptr<const std::string> body) {
  t_shared_tail = std::move(body);
}

bool HandleCallRecord(RpcProgram& program, const char* data, std::size_t n,
                      CallContext ctx, std::string* reply) {
  std::shared_ptr<const std::string> tail;
  if (!HandleCallRecord(program, data, n, std::move(ctx), reply, &tail)) {
    return false;
  }
  if (tail != nullptr) reply->append(*tail);
  return true;
}

bool HandleCallRecord(RpcProgram& program, const char* data, std::size_t n,
                      CallContext ctx, std::string* reply,
                      std::shared_ptr<const std::string>* tail) {
  tail->reset();
  // xdr_callmsg refuses an RPC version other than 2 without telling which
  // one; RFC 5531 wants a denial naming the versions we speak.
  if (n >= 12 && GetU32(data + 4) == CALL &&
      GetU32(data + 8) != RPC_MSG_VERSION) {
    XdrWriter w(reply);
    w.U32(GetU32(data));
    w.U32(REPLY);
    w.U32(MSG_DENIED);
    w.U32(RPC_MISMATCH);
    w.U32(RPC_MSG_VERSION);
    w.U32(RPC_MSG_VERSION);
    return true;
  }
  char cred_body[MAX_AUTH_BYTES];
  char verf_body[MAX_AUTH_BYTES];
  rpc_msg msg{};
  msg.rm_call.cb_cred.oa_base = cred_body;
  msg.rm_call.cb_verf.oa_base = verf_body;
  XDR x;
  ::xdrmem_create(&x, const_cast<char*>(data), static_cast<u_int>(n),
                  XDR_DECODE);
  // xdr_callmsg checks the direction; a reply or garbage is dropped.
  if (!::xdr_callmsg(&x, &msg)) {
    xdr_destroy(&x);
    return false;
  }
  ctx.record_bytes = n;
  ctx.xid = msg.rm_xid;
  ctx.prog = msg.rm_call.cb_prog;
  ctx.vers = msg.rm_call.cb_vers;
  ctx.proc = msg.rm_call.cb_proc;
  ctx.cred_flavor = msg.rm_call.cb_cred.oa_flavor;
  if (ctx.cred_flavor == kAuthSys) {
    ctx.auth_sys = ParseAuthSys(cred_body, msg.rm_call.cb_cred.oa_length, &ctx);
  }

  XdrWriter w(reply);
  w.U32(ctx.xid);
  w.U32(REPLY);
  w.U32(MSG_ACCEPTED);
  w.U32(AUTH_NONE);  // verifier
  w.U32(0);
  if (ctx.prog != program.program()) {
    w.U32(PROG_UNAVAIL);
  } else if (ctx.vers < program.low_version() ||
             ctx.vers > program.high_version()) {
    w.U32(PROG_MISMATCH);
    w.U32(program.low_version());
    w.U32(program.high_version());
  } else {
    std::size_t stat_pos = reply->size();
    w.U32(SUCCESS);
    t_shared_tail.reset();
    accept_stat st = program.Call(ctx, &x, reply);
    if (st != SUCCESS) {
      t_shared_tail.reset();
      reply->resize(stat_pos);
      w.U32(st);
    }
    *tail = std::move(t_shared_tail);
    t_shared_tail.reset();
  }
  xdr_destroy(&x);
  return true;
}

std::size_t RaiseDescriptorLimit(std::size_t wanted) {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return 0;
  rlim_t target = static_cast<rlim_t>(wanted);
  if (rl.rlim_max != RLIM_INFINITY && target > rl.rlim_max) {
    target = rl.rlim_max;
  }
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < target) {
    rl.rlim_cur = target;
    if (::setrlimit(RLIMIT_NOFILE, &rl) != 0) ::getrlimit(RLIMIT_NOFILE, &rl);
  }
  return rl.rlim_cur == RLIM_INFINITY ? wanted
                                      : static_cast<std::size_t>(rl.rlim_cur);
}

struct RpcServer::Source {
  enum class Kind : uint8_t { kListener, kDatagram, kConnection };
  Kind kind;
  int fd;
  Transport transport;
  RpcProgram* program;
  ListenerLimits limits;
  // Connections only.
  CallContext base;
  Source* listener = nullptr;  // for the input budget
  // Used only by the one thread serving the connection (EPOLLONESHOT), or
  // by Stop() once no worker runs.
  RecordReader reader{0};
  std::deque<std::string> pending;  // complete calls not served yet
  bool big_input_said = false;      // on_big_input called for this call
  std::size_t pending_bytes = 0;
  // Record-marked replies not sent yet: from out_off in the first chunk.
  // A chunk is owned, or a body shared with other replies.
  struct Chunk {
    std::string own;
    std::shared_ptr<const std::string> shared;
    std::string_view data() const {
      return shared != nullptr ? std::string_view(*shared)
                               : std::string_view(own);
    }
  };
  std::deque<Chunk> outq;
  std::size_t out_off = 0;
  std::size_t queued_bytes = 0;  // unsent bytes in outq
  bool read_closed = false;  // the client sent EOF
  std::size_t input_accounted = 0;
  // Read by the janitor and by eviction.
  std::atomic<int64_t> last_active_ms{0};
  std::atomic<std::size_t> queued{0};
  std::atomic<int64_t> send_progress_ms{0};
  std::atomic<bool> in_call{false};
  bool evicted = false;  // guarded by RpcServer::mu_
  // Listeners only: input held by all their connections.
  std::atomic<std::size_t> input_held{0};
  // Listeners only: unsent reply bytes of their connections under the
  // output budget.
  std::atomic<std::size_t> output_held{0};
  // Connections only: the listener's output budget applies to this one,
  // and what it counted there.
  bool output_budgeted = false;
  std::size_t output_accounted = 0;

  Source(Kind k, int f, Transport t, RpcProgram* p, ListenerLimits l)
      : kind(k),
        fd(f),
        transport(t),
        program(p),
        limits(l),
        reader(l.max_record) {}
  ~Source() {
    if (fd >= 0) ::close(fd);
  }
};

RpcServer::RpcServer(int threads, std::size_t max_connections)
    : threads_(threads < 1 ? 1 : threads),
      max_threads_(static_cast<std::size_t>(threads_) * kThreadGrowth),
      max_connections_(max_connections),
      busy_since_ms_(new std::atomic<int64_t>[max_threads_]) {
  for (std::size_t i = 0; i < max_threads_; ++i) busy_since_ms_[i].store(0);
}

RpcServer::~RpcServer() { Stop(); }

void RpcServer::AddStreamListener(int fd, Transport transport,
                                  RpcProgram* program, ListenerLimits limits) {
  endpoints_.push_back(std::make_unique<Source>(Source::Kind::kListener, fd,
                                                transport, program, limits));
}

void RpcServer::AddDatagramSocket(int fd, RpcProgram* program) {
  endpoints_.push_back(std::make_unique<Source>(
      Source::Kind::kDatagram, fd, Transport::kUdp, program, ListenerLimits{}));
}

void RpcServer::Arm(Source* s, bool add) {
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLONESHOT;
  if (s->kind == Source::Kind::kConnection) ev.events |= EPOLLRDHUP;
  ev.data.ptr = s;
  ::epoll_ctl(epfd_, add ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, s->fd, &ev);
}

absl::Status RpcServer::Start() {
  const std::size_t wanted = max_connections_ + kReservedDescriptors;
  if (std::size_t limit = RaiseDescriptorLimit(wanted); limit < wanted) {
    LogLine(absl::StrCat("descriptor limit (RLIMIT_NOFILE) is ", limit,
                         ", below the ", wanted, " that ", max_connections_,
                         " connections need: when descriptors run out, the "
                         "connection idle longest is closed"));
  }
  epfd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wakefd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epfd_ < 0 || wakefd_ < 0) {
    return absl::InternalError(absl::StrCat("epoll: ", ::strerror(errno)));
  }
  // Level-triggered, never re-armed: once written, every waiting thread
  // wakes and sees stopping_.
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.ptr = nullptr;
  ::epoll_ctl(epfd_, EPOLL_CTL_ADD, wakefd_, &ev);
  for (auto& e : endpoints_) {
    int fl = ::fcntl(e->fd, F_GETFL);
    ::fcntl(e->fd, F_SETFL, fl | O_NONBLOCK);
    if (e->kind == Source::Kind::kDatagram) {
      int one = 1;
      ::setsockopt(e->fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof one);
      ::setsockopt(e->fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof one);
    }
    Arm(e.get(), true);
  }
  {
    absl::MutexLock l(&workers_mu_);
    for (int i = 0; i < threads_; ++i) {
      std::size_t id = workers_.size();
      workers_.emplace_back([this, id] { WorkerLoop(id); });
    }
  }
  janitor_ = std::thread([this] { JanitorLoop(); });
  return absl::OkStatus();
}

void RpcServer::Stop() {
  if (epfd_ < 0) return;
  stopping_.store(true);
  // No new connections or calls: listeners leave the set first.
  for (auto& e : endpoints_) ::epoll_ctl(epfd_, EPOLL_CTL_DEL, e->fd, nullptr);
  uint64_t one = 1;
  if (::write(wakefd_, &one, sizeof one) < 0) {
    // Cannot happen with an eventfd below its maximum; threads still wake on
    // their own events.
  }
  {
    absl::MutexLock l(&mu_);
    janitor_cv_.SignalAll();
  }
  std::vector<std::thread> workers;
  {
    absl::MutexLock l(&workers_mu_);
    workers.swap(workers_);  // no thread is added once stopping_ is set
  }
  for (auto& t : workers) t.join();
  if (janitor_.joinable()) janitor_.join();
  {
    absl::MutexLock l(&mu_);
    DrainQueues();
    conns_.clear();
  }
  endpoints_.clear();
  ::close(wakefd_);
  ::close(epfd_);
  epfd_ = wakefd_ = -1;
}

std::size_t RpcServer::connection_count() {
  absl::MutexLock l(&mu_);
  return conns_.size();
}

void RpcServer::DrainQueues() {
  const int64_t deadline = NowMs() + absl::ToInt64Milliseconds(kStopDrain);
  for (auto& [ptr, c] : conns_) {
    while (c->queued.load() > 0) {
      if (!Flush(c.get()) || c->queued.load() == 0) break;
      int64_t left = deadline - NowMs();
      if (left <= 0) return;
      pollfd p{c->fd, POLLOUT, 0};
      ::poll(&p, 1, static_cast<int>(left));
    }
  }
}

void RpcServer::WorkerLoop(std::size_t id) {
  epoll_event events[8];
  while (!stopping_.load(std::memory_order_relaxed)) {
    // One event at a time per thread: a thread that takes an event serves
    // it before taking another, so events are not stuck behind a slow call.
    int n = ::epoll_wait(epfd_, events, 1, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      LogLine(absl::StrCat("epoll_wait: ", ::strerror(errno)));
      return;
    }
    for (int i = 0; i < n; ++i) {
      Source* s = static_cast<Source*>(events[i].data.ptr);
      if (s == nullptr) return;  // stop
      if (stopping_.load()) return;
      busy_since_ms_[id].store(NowMs(), std::memory_order_relaxed);
      switch (s->kind) {
        case Source::Kind::kListener:
          OnAccept(s);
          break;
        case Source::Kind::kDatagram:
          OnDatagram(s);
          break;
        case Source::Kind::kConnection:
          OnStream(s);
          break;
      }
      busy_since_ms_[id].store(0, std::memory_order_relaxed);
    }
  }
}

void RpcServer::KeepEnoughWorkers() {
  absl::MutexLock l(&workers_mu_);
  if (stopping_.load()) return;
  const int64_t now = NowMs();
  std::size_t free = 0;
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    int64_t since = busy_since_ms_[i].load(std::memory_order_relaxed);
    if (since == 0 || now - since < kStuckMs) ++free;
  }
  while (free < static_cast<std::size_t>(threads_) &&
         workers_.size() < max_threads_) {
    std::size_t id = workers_.size();
    workers_.emplace_back([this, id] { WorkerLoop(id); });
    ++free;
  }
}

void RpcServer::JanitorLoop() {
  int64_t last_scan = NowMs();
  absl::MutexLock l(&mu_);
  while (!stopping_.load()) {
    janitor_cv_.WaitWithTimeout(&mu_, kJanitorTick);
    if (stopping_.load()) break;
    KeepEnoughWorkers();
    int64_t now = NowMs();
    if (now - last_scan < 1000) continue;
    last_scan = now;
    for (auto& [ptr, c] : conns_) {
      int64_t idle_ms = absl::ToInt64Milliseconds(c->limits.idle_timeout);
      int64_t send_ms = absl::ToInt64Milliseconds(c->limits.send_timeout);
      if (now - c->last_active_ms.load() > idle_ms ||
          (c->queued.load() > 0 &&
           now - c->send_progress_ms.load() > send_ms)) {
        // Makes the connection's (armed) event fire; its thread closes it.
        ::shutdown(c->fd, SHUT_RDWR);
      }
    }
  }
}

void RpcServer::OnAccept(Source* s) {
  for (int i = 0; i < 64; ++i) {
    sockaddr_storage peer{};
    socklen_t len = sizeof peer;
    int fd = ::accept4(s->fd, reinterpret_cast<sockaddr*>(&peer), &len,
                       SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE) {
        const int err = errno;
        bool evicted;
        {
          absl::MutexLock l(&mu_);
          evicted = EvictIdlest();
        }
        conn_log_.Log(absl::StrCat("accept: ", ::strerror(err),
                                   evicted
                                       ? "; closing the connection idle longest"
                                       : "; no connection to close"));
        // The listener stays readable: give the evicted connection's thread
        // time to close it rather than spin. Only this thread waits.
        std::this_thread::sleep_for(kNoDescriptorPause);
        break;
      }
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        conn_log_.Log(absl::StrCat("accept: ", ::strerror(errno)));
      }
      break;
    }
    auto c = std::make_unique<Source>(Source::Kind::kConnection, fd,
                                      s->transport, s->program, s->limits);
    c->listener = s;
    c->base.transport = s->transport;
    c->base.peer = peer;
    c->base.peer_len = len;
    if (s->transport == Transport::kUnix) {
      ucred cred{};
      socklen_t cl = sizeof cred;
      if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0) {
        c->base.has_peer_cred = true;
        c->base.peer_uid = cred.uid;
        c->base.peer_gid = cred.gid;
        c->base.peer_pid = cred.pid;
      }
    } else {
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    if (s->limits.record_limit) {
      c->limits.max_record = s->limits.record_limit(c->base);
      c->reader = RecordReader(c->limits.max_record);
    }
    c->output_budgeted = s->limits.output_budget > 0 &&
                         (!s->limits.output_budget_applies ||
                          s->limits.output_budget_applies(c->base));
    c->last_active_ms.store(NowMs());
    Source* raw = c.get();
    {
      absl::MutexLock l(&mu_);
      if (conns_.size() >= max_connections_ && !EvictIdlest()) {
        conn_log_.Log("connection limit reached; refusing a connection");
        continue;  // c closes the fd
      }
      conns_.emplace(raw, std::move(c));
    }
    Arm(raw, true);
  }
  Arm(s, false);
}

void RpcServer::OnDatagram(Source* s) {
  thread_local std::string buf;
  thread_local std::string reply;
  buf.resize(65536);
  CallContext ctx;
  ctx.transport = Transport::kUdp;
  iovec iov{buf.data(), buf.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(in6_pktinfo))];
  msghdr msg{};
  msg.msg_name = &ctx.peer;
  msg.msg_namelen = sizeof ctx.peer;
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n = ::recvmsg(s->fd, &msg, 0);
  // Re-arm before serving so other threads read the next datagrams.
  Arm(s, false);
  if (n <= 0) return;
  ctx.peer_len = msg.msg_namelen;
  // The address the client sent to: the reply must come from it, or a
  // client of a host with several addresses drops it.
  std::optional<in_addr> local;
  std::optional<in6_pktinfo> local6;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr;
       c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
      in_pktinfo pi;
      std::memcpy(&pi, CMSG_DATA(c), sizeof pi);
      local = pi.ipi_addr;
    } else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
      in6_pktinfo pi;
      std::memcpy(&pi, CMSG_DATA(c), sizeof pi);
      local6 = pi;
    }
  }
  reply.clear();
  if (!HandleCallRecord(*s->program, buf.data(), static_cast<std::size_t>(n),
                        ctx, &reply)) {
    return;
  }
  if (reply.size() > kMaxDatagramReply ||
      reply.size() > kUdpAmplification * static_cast<std::size_t>(n)) {
    // Too big for UDP (EXPORT of many shares), or more than a spoofed
    // source should be able to direct at a victim: say so instead of
    // letting the client time out; it can retry over TCP.
    reply.resize(5 * 4);
    XdrWriter(&reply).U32(SYSTEM_ERR);
  }
  iovec out{reply.data(), reply.size()};
  msghdr m{};
  m.msg_name = &ctx.peer;
  m.msg_namelen = ctx.peer_len;
  m.msg_iov = &out;
  m.msg_iovlen = 1;
  alignas(cmsghdr) char out_control[CMSG_SPACE(sizeof(in6_pktinfo))] = {};
  if (local6.has_value()) {
    m.msg_control = out_control;
    m.msg_controllen = CMSG_SPACE(sizeof(in6_pktinfo));
    cmsghdr* c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = IPPROTO_IPV6;
    c->cmsg_type = IPV6_PKTINFO;
    c->cmsg_len = CMSG_LEN(sizeof(in6_pktinfo));
    std::memcpy(CMSG_DATA(c), &*local6, sizeof(in6_pktinfo));
  } else if (local.has_value()) {
    m.msg_control = out_control;
    m.msg_controllen = CMSG_SPACE(sizeof(in_pktinfo));
    cmsghdr* c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = IPPROTO_IP;
    c->cmsg_type = IP_PKTINFO;
    c->cmsg_len = CMSG_LEN(sizeof(in_pktinfo));
    in_pktinfo pi{};
    pi.ipi_spec_dst = *local;
    std::memcpy(CMSG_DATA(c), &pi, sizeof pi);
  }
  ::sendmsg(s->fd, &m, MSG_NOSIGNAL);
}

bool RpcServer::Flush(Source* s) {
  constexpr int kMaxIov = 16;
  while (!s->outq.empty()) {
    iovec iov[kMaxIov];
    int n = 0;
    std::size_t off = s->out_off;
    for (auto it = s->outq.begin(); it != s->outq.end() && n < kMaxIov; ++it) {
      std::string_view d = it->data();
      iov[n++] = {const_cast<char*>(d.data()) + off, d.size() - off};
      off = 0;
    }
    msghdr m{};
    m.msg_iov = iov;
    m.msg_iovlen = static_cast<std::size_t>(n);
    ssize_t w = ::sendmsg(s->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w > 0) {
      const int64_t now = NowMs();
      s->send_progress_ms.store(now);
      s->last_active_ms.store(now);
      std::size_t left = static_cast<std::size_t>(w);
      s->queued_bytes -= left;
      while (left > 0) {
        std::size_t rest = s->outq.front().data().size() - s->out_off;
        if (left < rest) {
          s->out_off += left;
          break;
        }
        left -= rest;
        s->outq.pop_front();
        s->out_off = 0;
      }
      continue;
    }
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    AccountOutput(s);
    return false;
  }
  s->queued.store(s->queued_bytes);
  AccountOutput(s);
  return true;
}

void RpcServer::AccountOutput(Source* s) {
  Source* l = s->listener;
  if (l == nullptr || !s->output_budgeted) return;
  const std::size_t held = s->queued_bytes;
  if (held > s->output_accounted) {
    l->output_held.fetch_add(held - s->output_accounted);
  } else {
    l->output_held.fetch_sub(s->output_accounted - held);
  }
  s->output_accounted = held;
}

bool RpcServer::AccountInput(Source* s) {
  const std::size_t held = s->reader.held() + s->pending_bytes;
  Source* l = s->listener;
  if (l == nullptr) return true;
  bool over = false;
  if (held > s->input_accounted) {
    const std::size_t grow = held - s->input_accounted;
    const std::size_t now = l->input_held.fetch_add(grow) + grow;
    over = l->limits.input_budget > 0 && now > l->limits.input_budget;
  } else {
    l->input_held.fetch_sub(s->input_accounted - held);
  }
  s->input_accounted = held;
  return !over;
}

void RpcServer::ArmConnection(Source* s) {
  const std::size_t queued = s->queued.load();
  epoll_event ev{};
  ev.events = EPOLLONESHOT;
  if (!s->read_closed && s->pending.empty() &&
      queued < s->limits.queue_watermark) {
    ev.events |= EPOLLIN | EPOLLRDHUP;
  }
  if (queued > 0) ev.events |= EPOLLOUT;
  ev.data.ptr = s;
  ::epoll_ctl(epfd_, EPOLL_CTL_MOD, s->fd, &ev);
}

void RpcServer::OnStream(Source* s) {
  thread_local std::string buf;
  thread_local std::string reply;
  thread_local std::vector<std::string> records;
  buf.resize(kReadChunk);
  s->in_call.store(true);
  bool close = !Flush(s);
  std::size_t total = 0;
  while (!close) {
    // Serve the calls read so far while the queue has room; the rest wait
    // (unread) until the client has taken its replies.
    while (!s->pending.empty() &&
           s->queued.load() < s->limits.queue_watermark) {
      std::string rec = std::move(s->pending.front());
      s->pending.pop_front();
      s->pending_bytes -= rec.size();
      reply.assign(4, '\0');
      std::shared_ptr<const std::string> tail;
      CallContext ctx = s->base;
      if (s->output_budgeted) {
        ctx.replies_held = &s->listener->output_held;
        ctx.reply_budget = s->limits.output_budget;
      }
      ctx.record = &rec;
      if (!HandleCallRecord(*s->program, rec.data(), rec.size(), ctx, &reply,
                            &tail)) {
        continue;
      }
      const std::size_t tail_size = tail != nullptr ? tail->size() : 0;
      uint32_t len = static_cast<uint32_t>(reply.size() - 4 + tail_size);
      uint32_t mark = 0x80000000u | len;
      reply[0] = static_cast<char>(mark >> 24);
      reply[1] = static_cast<char>(mark >> 16);
      reply[2] = static_cast<char>(mark >> 8);
      reply[3] = static_cast<char>(mark);
      const int64_t now = NowMs();
      s->last_active_ms.store(now);
      if (s->queued_bytes == 0) {
        s->send_progress_ms.store(now);  // the send timeout starts now
      }
      s->queued_bytes += reply.size() + tail_size;
      // Small replies behind others share a chunk; a reply alone moves its
      // buffer into the queue (no copy), and a shared tail is not copied.
      if (!s->outq.empty() && s->outq.back().shared == nullptr &&
          reply.size() < kKeptQueueCapacity) {
        s->outq.back().own += reply;
      } else {
        s->outq.push_back({std::move(reply), nullptr});
        reply = std::string();
      }
      if (tail_size > 0) s->outq.push_back({std::string(), std::move(tail)});
      s->queued.store(s->queued_bytes);
      AccountOutput(s);
      if (s->queued_bytes > s->limits.max_queued) {
        conn_log_.Log(absl::StrCat("closing a connection: over ",
                                   s->limits.max_queued,
                                   " bytes of replies queued"));
        close = true;
        break;
      }
      if (!Flush(s)) {
        close = true;
        break;
      }
    }
    if (close) break;
    AccountInput(s);  // served calls no longer count
    if (stopping_.load() || s->read_closed || !s->pending.empty() ||
        s->queued.load() >= s->limits.queue_watermark ||
        total >= kReadBudget) {
      break;
    }
    ssize_t n = ::recv(s->fd, buf.data(), buf.size(), 0);
    if (n > 0) {
      total += static_cast<std::size_t>(n);
      s->last_active_ms.store(NowMs());
      records.clear();
      bool ok =
          s->reader.Feed(buf.data(), static_cast<std::size_t>(n), &records);
      for (std::string& r : records) {
        s->pending_bytes += r.size();
        s->pending.push_back(std::move(r));
      }
      if (!records.empty()) s->big_input_said = false;
      records.clear();
      if (ok && s->limits.on_big_input && !s->big_input_said &&
          s->reader.buffered() >= s->limits.big_input_bytes) {
        s->big_input_said = true;
        s->limits.on_big_input(s->base);
      }
      if (!ok) {
        conn_log_.Log(absl::StrCat("closing a connection: record over ",
                                   s->limits.max_record, " bytes"));
        close = true;
      } else if (!AccountInput(s)) {
        conn_log_.Log(absl::StrCat(
            "closing a connection: calls buffered by all connections over ",
            s->limits.input_budget, " bytes"));
        close = true;
      }
      continue;
    }
    if (n == 0) {
      s->read_closed = true;  // replies to what was sent still go out
    } else if (errno == EINTR) {
      continue;
    } else if (errno != EAGAIN && errno != EWOULDBLOCK) {
      close = true;
    }
    break;
  }
  if (!close && s->read_closed && s->pending.empty() &&
      s->queued.load() == 0) {
    close = true;
  }
  s->in_call.store(false);
  if (close) {
    CloseConnection(s);
    return;
  }
  if (stopping_.load()) return;  // Stop() sends what is queued, then closes
  ArmConnection(s);
}

void RpcServer::CloseConnection(Source* s) {
  ::epoll_ctl(epfd_, EPOLL_CTL_DEL, s->fd, nullptr);
  std::unique_ptr<Source> owned;
  if (s->listener != nullptr) {
    s->listener->input_held.fetch_sub(s->input_accounted);
    s->listener->output_held.fetch_sub(s->output_accounted);
  }
  s->input_accounted = 0;
  s->output_accounted = 0;
  absl::MutexLock l(&mu_);
  auto it = conns_.find(s);
  if (it != conns_.end()) {
    owned = std::move(it->second);
    conns_.erase(it);
  }
  // owned closes the fd when it goes out of scope, still under mu_, so the
  // janitor never shuts down a reused descriptor.
}

bool RpcServer::EvictIdlest() {
  Source* idlest = nullptr;
  int64_t oldest = 0;
  for (auto& [ptr, c] : conns_) {
    // A connection with a call in progress (a batch being applied) is
    // never the one closed, however long the call has been silent.
    if (c->evicted || c->in_call.load()) continue;
    int64_t t = c->last_active_ms.load();
    if (idlest == nullptr || t < oldest) {
      idlest = ptr;
      oldest = t;
    }
  }
  if (idlest == nullptr) return false;
  idlest->evicted = true;
  // Makes the connection's (armed) event fire; its thread closes it. Until
  // then it still counts, so the limit may be passed by the few evicted.
  ::shutdown(idlest->fd, SHUT_RDWR);
  return true;
}

}  // namespace sharemgrd

// RpcServer: a multi-threaded ONC RPC server over sockets it owns (TCP,
// UDP and Unix stream), for the MOUNT and management programs.
//
// Thread-safety: configure (Add*) before Start(); Start() and Stop() from
// one thread. RpcProgram::Call() is invoked from several threads at once.
//
// Guarantees: a connection is served by one thread at a time (its calls in
// order); a call that blocks (a slow name lookup) holds one thread and only
// its own connection; no thread ever waits for a client's socket: replies
// queue per connection and go out as the socket takes them. A connection
// whose queue is over the listener's watermark is not read (so pipelined
// calls cannot grow the queue); one over the cap, one whose replies made
// no progress for send_timeout, a record over the listener's limit or an
// idle connection is closed without affecting others.
#ifndef SHAREMGRD_RPC_SERVER_H_
#define SHAREMGRD_RPC_SERVER_H_

#include <rpc/rpc.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "log.h"

namespace sharemgrd {

enum class Transport : uint8_t { kTcp, kUdp, kUnix };

// What a procedure knows about its caller.
struct CallContext {
  Transport transport = Transport::kTcp;
  sockaddr_storage peer{};  // TCP, UDP
  socklen_t peer_len = 0;
  bool has_peer_cred = false;  // Unix: SO_PEERCRED
  uid_t peer_uid = 0;
  gid_t peer_gid = 0;
  pid_t peer_pid = 0;
  std::size_t record_bytes = 0;  // the whole call, as received
  uint32_t xid = 0;
  uint32_t prog = 0;
  uint32_t vers = 0;
  uint32_t proc = 0;
  uint32_t cred_flavor = 0;  // AUTH_NONE, AUTH_SYS, ...
  bool auth_sys = false;     // cred parsed as AUTH_SYS
  uint32_t uid = 0;          // AUTH_SYS only
  uint32_t gid = 0;
  // AUTH_SYS supplementary groups (gids<16>, RFC 5531): the first
  // group_count of `gids`.
  std::array<uint32_t, 16> gids{};
  uint8_t group_count = 0;
  absl::Span<const uint32_t> groups() const {
    return absl::Span<const uint32_t>(gids.data(), group_count);
  }
  // The listener's output budget (ListenerLimits::output_budget), when it
  // applies to this connection: the bytes of replies not yet read that
  // such connections hold now (null when no budget applies), and the
  // budget. A procedure with a big reply refuses the call rather than
  // pass it (ReplyOverBudget).
  const std::atomic<std::size_t>* replies_held = nullptr;
  std::size_t reply_budget = 0;
  // The call's record, owned by the server, when the procedure may give
  // it back early (a stream's calls; null for UDP, whose buffer is the
  // server's): ReleaseCallRecord frees it once the arguments are decoded,
  // so a big call (a batch of 1,000,000 operations: 76 MiB) does not stay
  // beside what was decoded from it while the procedure works.
  std::string* record = nullptr;
};

// Frees the call's record (CallContext::record), if the server lets the
// procedure do so. Only after the arguments are decoded: `args` then
// points into freed memory and must not be read again.
inline void ReleaseCallRecord(const CallContext& ctx) {
  if (ctx.record != nullptr) std::string().swap(*ctx.record);
}

// True when a reply of `reply_bytes` would take the replies held under
// ctx's budget past it (never when no budget applies).
inline bool ReplyOverBudget(const CallContext& ctx, std::size_t reply_bytes) {
  return ctx.replies_held != nullptr &&
         ctx.replies_held->load() + reply_bytes > ctx.reply_budget;
}

// One RPC program (all its versions).
class RpcProgram {
 public:
  virtual ~RpcProgram() = default;
  virtual uint32_t program() const = 0;
  virtual uint32_t low_version() const = 0;
  virtual uint32_t high_version() const = 0;
  // Decodes the arguments from `args` and appends the XDR-encoded results
  // to `out`. Returns SUCCESS, PROC_UNAVAIL, GARBAGE_ARGS or SYSTEM_ERR;
  // unless SUCCESS, whatever was appended is dropped.
  virtual accept_stat Call(const CallContext& ctx, XDR* args,
                           std::string* out) = 0;
};

// Called from RpcProgram::Call, on the thread serving the call, instead of
// appending `body` to `out`: the reply is then `out` followed by `body`,
// which stream connections queue without copying. For a body that many
// replies share (EXPORT's cached list): thousands of clients that do not
// read their replies then hold one copy of it, not one each.
void SetSharedReplyTail(std::shared_ptr<const std::string> body);

// Encodes the reply to one call record (no record mark) into `reply`,
// after its current contents. Returns false if nothing must be sent
// (not a call, or undecodable header). Exposed for tests.
bool HandleCallRecord(RpcProgram& program, const char* data, std::size_t n,
                      CallContext ctx, std::string* reply);
// The same, but a body the procedure shared (SetSharedReplyTail) is left
// in *tail (null if none) rather than appended to `reply`.
bool HandleCallRecord(RpcProgram& program, const char* data, std::size_t n,
                      CallContext ctx, std::string* reply,
                      std::shared_ptr<const std::string>* tail);

struct ListenerLimits {
  std::size_t max_record = 8192;  // bytes, one call
  absl::Duration idle_timeout = absl::Seconds(120);
  // Replies queued on a connection: at or over queue_watermark bytes its
  // calls are not read or served until the client has read enough; over
  // max_queued (one reply that big) the connection is closed.
  std::size_t queue_watermark = 256u << 10;
  std::size_t max_queued = 64u << 20;
  // A connection with queued replies and no send progress this long is
  // closed (a client that never reads).
  absl::Duration send_timeout = absl::Seconds(10);
  // If set: the record limit of a new connection, from what is known of
  // its peer (Unix: SO_PEERCRED), instead of max_record.
  std::function<std::size_t(const CallContext&)> record_limit = nullptr;
  // If non-zero: bytes of calls (partial or waiting to be served) that all
  // connections of this listener together may hold; a connection whose
  // record would pass it is closed.
  std::size_t input_budget = 0;
  // If set: called on the thread reading a connection, with what is known
  // of its peer, when the call it is receiving first holds big_input_bytes
  // or more, before the rest of it arrives (the management socket: a
  // batch is on its way, and the warm a PREPARE_BATCH started makes ready
  // the memory the batch will take).
  std::function<void(const CallContext&)> on_big_input = nullptr;
  std::size_t big_input_bytes = 256u << 10;
  // If non-zero: bytes of replies not yet read that the connections of
  // this listener (those `output_budget_applies` says it applies to; all
  // if unset) may hold together. Their calls carry the count and the
  // budget (CallContext::replies_held) for the program to refuse a reply
  // that would pass it; a reply already queued is never dropped.
  std::size_t output_budget = 0;
  std::function<bool(const CallContext&)> output_budget_applies = nullptr;
};

// Raises the soft RLIMIT_NOFILE towards the hard limit so that `wanted`
// descriptors can be open (never lowers it). Returns the soft limit now in
// force; it is below `wanted` only when the hard limit is.
std::size_t RaiseDescriptorLimit(std::size_t wanted);

class RpcServer {
 public:
  // Descriptors kept besides connections: store, sockets, resolver, logs.
  static constexpr std::size_t kReservedDescriptors = 256;

  // `threads` serve calls; while calls block for long (name lookups), more
  // are started (up to 16 times as many) so that they do not starve others.
  // At max_connections open connections (or when descriptors run out), a
  // new connection closes the one idle longest that has no call in
  // progress: an idle flood cannot lock out active clients. Start() raises RLIMIT_NOFILE to fit
  // max_connections + kReservedDescriptors.
  explicit RpcServer(int threads, std::size_t max_connections = 4096);
  ~RpcServer();
  RpcServer(const RpcServer&) = delete;
  RpcServer& operator=(const RpcServer&) = delete;

  // The server takes ownership of the listening/bound fd.
  void AddStreamListener(int fd, Transport transport, RpcProgram* program,
                         ListenerLimits limits);
  void AddDatagramSocket(int fd, RpcProgram* program);

  [[nodiscard]] absl::Status Start();
  // Stops accepting and reading, waits for calls in progress to finish and
  // their replies to be sent (for at most kStopDrain), then closes every
  // socket.
  void Stop();
  static constexpr absl::Duration kStopDrain = absl::Seconds(2);

  // Open connections (for tests and stats).
  std::size_t connection_count() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Source;
  void WorkerLoop(std::size_t id);
  void KeepEnoughWorkers();
  void JanitorLoop();
  void Arm(Source* s, bool add);
  void OnAccept(Source* s);
  void OnDatagram(Source* s);
  void OnStream(Source* s);
  void CloseConnection(Source* s);
  // Sends what the connection's queue holds, without waiting; false if the
  // connection failed.
  bool Flush(Source* s);
  // Updates the listener's input accounting after the connection's
  // buffered input changed; false if over the listener's budget.
  bool AccountInput(Source* s);
  // Updates the listener's count of replies held after the connection's
  // queue changed.
  void AccountOutput(Source* s);
  // Re-arms a connection for what it waits for: reading (queue below the
  // watermark) and/or writing (queue not empty).
  void ArmConnection(Source* s);
  // At Stop(): sends what is queued, for at most kStopDrain in all.
  void DrainQueues() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Shuts down the connection idle longest (its thread closes it); false
  // if there is none.
  bool EvictIdlest() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int threads_;
  const std::size_t max_threads_;
  const std::size_t max_connections_;
  int epfd_ = -1;
  int wakefd_ = -1;
  std::atomic<bool> stopping_{false};
  absl::Mutex workers_mu_;
  std::vector<std::thread> workers_ ABSL_GUARDED_BY(workers_mu_);
  // Per worker: when its current call started (ms), 0 while it waits.
  std::unique_ptr<std::atomic<int64_t>[]> busy_since_ms_;
  std::thread janitor_;
  absl::Mutex mu_;
  // Listeners and datagram sockets; live until Stop().
  std::vector<std::unique_ptr<Source>> endpoints_;
  // Open connections, owned here; removed by the thread that closes them.
  absl::flat_hash_map<Source*, std::unique_ptr<Source>> conns_
      ABSL_GUARDED_BY(mu_);
  absl::CondVar janitor_cv_;
  // Lines about refused or closed connections, which clients can trigger.
  LogRateLimiter conn_log_{"connection", 10};
};

}  // namespace sharemgrd

#endif  // SHAREMGRD_RPC_SERVER_H_

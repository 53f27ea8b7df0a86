// RpcServer: a multi-threaded ONC RPC server over sockets it owns (TCP,
// UDP and Unix stream), for the MOUNT and management programs.
//
// Thread-safety: configure (Add*) before Start(); Start() and Stop() from
// one thread. RpcProgram::Call() is invoked from several threads at once.
//
// Guarantees: a connection is served by one thread at a time (its calls in
// order); a call that blocks (a slow name lookup) holds one thread and only
// its own connection; a record over the listener's limit, an idle
// connection or a client that does not read its replies loses its
// connection without affecting others.
#ifndef SHAREMGRD_RPC_SERVER_H_
#define SHAREMGRD_RPC_SERVER_H_

#include <rpc/rpc.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
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
  uint32_t xid = 0;
  uint32_t prog = 0;
  uint32_t vers = 0;
  uint32_t proc = 0;
  uint32_t cred_flavor = 0;  // AUTH_NONE, AUTH_SYS, ...
  bool auth_sys = false;     // cred parsed as AUTH_SYS
  uint32_t uid = 0;          // AUTH_SYS only
  uint32_t gid = 0;
};

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

// Encodes the reply to one call record (no record mark) into `reply`,
// after its current contents. Returns false if nothing must be sent
// (not a call, or undecodable header). Exposed for tests.
bool HandleCallRecord(RpcProgram& program, const char* data, std::size_t n,
                      CallContext ctx, std::string* reply);

struct ListenerLimits {
  std::size_t max_record = 8192;  // bytes, one call
  absl::Duration idle_timeout = absl::Seconds(120);
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
  // new connection closes the one idle longest: an idle flood cannot lock
  // out active clients. Start() raises RLIMIT_NOFILE to fit
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
  // their replies to be sent, then closes every socket.
  void Stop();

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
  // Shuts down the connection idle longest (its thread closes it); false
  // if there is none.
  bool EvictIdlest() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool SendAll(Source* s, const std::string& data);

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

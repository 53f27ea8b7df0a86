// Daemon: sharemgrd's life cycle. Start() takes the locks, opens the
// store, binds the sockets, registers with rpcbind and starts serving;
// Stop() undoes it in order (stop accepting, finish calls in progress,
// unregister, flush mount records, close the store).
//
// Start() and Stop() are called from one thread (main); the services run
// on the server's threads.
#ifndef SHAREMGRD_DAEMON_H_
#define SHAREMGRD_DAEMON_H_

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "authcache/auth_cache.h"
#include "authcache/resolver.h"
#include "config.h"
#include "exports_follow.h"
#include "fs_watch.h"
#include "kernel/kernel_mode.h"
#include "libshare/catalog.h"
#include "mgmt_service.h"
#include "mount_service.h"
#include "rpc_server.h"
#include "share_access.h"

namespace sharemgrd {

// Wraps a resolver so that calls about configured addresses sleep first
// (--debug-resolver-delay, for tests and benchmarks).
std::unique_ptr<authcache::Resolver> MakeDelayingResolver(
    std::unique_ptr<authcache::Resolver> inner,
    std::map<std::string, int> delays_ms);

class Daemon {
 public:
  explicit Daemon(DaemonConfig config);
  ~Daemon();

  // On failure, the message is the one stderr line to print (without the
  // "sharemgrd: " prefix), and the start has been undone: Abandon().
  [[nodiscard]] absl::Status Start();
  // Stops, then removes what this run created and still owns: the store
  // (with its -wal and -shm files) and lock files whose locks it holds,
  // the socket, the sharetab view and the pid file, and the folders made
  // for them (if empty). For a start that failed, so that it leaves the
  // state folders as they were. Files that existed before are kept.
  void Abandon();
  // The "serving ..." line (without the prefix), valid after Start().
  std::string ServingLine() const;
  void ReloadResolver();
  // For the daemon's last Stop before the process exits: the share
  // table's memory is then left to the exit instead of freed share by
  // share (Catalog::KeepTableMemoryAtExit).
  void KeepMemoryAtExit() { keep_memory_at_exit_ = true; }
  void Stop();

 private:
  // The start, step by step; each step's failure leaves what the steps
  // before it made for Abandon() to undo.
  [[nodiscard]] absl::Status StartServing();
  // The store's, the socket's and the sharetab view's locks (the view's
  // only refused when another daemon holds it).
  [[nodiscard]] absl::Status TakeLocks();
  // The system resolver, or the files one (--hosts, --netgroups); with
  // --debug-resolver-delay, wrapped.
  [[nodiscard]] absl::StatusOr<std::unique_ptr<authcache::Resolver>>
  MakeResolver() const;
  // Loads the share table into catalog_ and, beside the load, reads the
  // shares' recorded file systems: the watch returned, not yet watching.
  [[nodiscard]] absl::StatusOr<std::unique_ptr<FsWatch>> OpenCatalog(
      int load_threads);
  // MOUNT's service (mount_), with the mount records loaded.
  [[nodiscard]] absl::Status StartMountService();
  // Keeps the watch in fs_watch_ and has MOUNT and management serve only
  // the shares it says are served.
  void ServeFromFsWatch(std::unique_ptr<FsWatch> fs_watch);
  // Starts fs_watch_'s rounds. A big table's start view
  // (!view_before_serving) is written at the end of the first round, or
  // by WriteViewOnceServing if serving starts later.
  void WatchFileSystems(bool view_before_serving);
  // --follow-exports, or groups a previous run managed: the follower.
  [[nodiscard]] absl::Status StartFollowingExports();
  // server_ with MOUNT's TCP and UDP sockets (which it owns from then on).
  void AddMountListeners();
  // mgmt_server_ with the management socket (which it owns from then on).
  void AddManagementListener(std::optional<gid_t> admin_gid);
  [[nodiscard]] absl::Status StartServers();
  // The start's sharetab view: now, or after fs_watch's first round.
  void WriteViewOnceServing(bool view_before_serving)
      ABSL_LOCKS_EXCLUDED(view_mu_);
  // Notes which of the files and folders a start may create are missing.
  void NoteMissingFiles();
  [[nodiscard]] absl::Status TakeLock(const std::string& what,
                                      const std::string& lock_path, int* fd);
  // Holds the lock TakeLock took on `lock_path` (in *fd) through a
  // read-only descriptor of the same file instead.
  [[nodiscard]] absl::Status HoldReadOnly(const std::string& what,
                                          const std::string& lock_path, int* fd);
  [[nodiscard]] absl::Status BindMount();
  [[nodiscard]] absl::Status BindManagement();
  // Turns the kernel mode on or off as --kernel says (and logs which and
  // why); on, answers the nfsd caches and gives MOUNT the kernel's handles.
  [[nodiscard]] absl::Status StartKernelMode();
  [[nodiscard]] absl::Status RegisterRpcbind();
  void UnregisterRpcbind();

  DaemonConfig config_;
  int db_lock_fd_ = -1;
  int socket_lock_fd_ = -1;
  // Two daemons writing one sharetab view would overwrite (and at stop,
  // empty) each other's: the view has a lock of its own too.
  int sharetab_lock_fd_ = -1;
  // MOUNT's sockets, one TCP and one UDP per --listen address.
  std::vector<int> tcp_fds_;
  std::vector<int> udp_fds_;
  bool listens_v4_ = false;  // for rpcbind: tcp/udp
  bool listens_v6_ = false;  // tcp6/udp6
  std::vector<std::string> listening_;  // addresses bound, for the log
  int unix_fd_ = -1;
  // This start bound the management socket at its path (a start that then
  // fails removes it: it is not another daemon's).
  bool socket_bound_ = false;
  int mount_port_ = 0;
  bool registered_ = false;
  bool started_ = false;
  bool keep_memory_at_exit_ = false;
  bool kernel_on_ = false;
  // The start's sharetab view of a big table waits for fs_watch's first
  // round (WatchFileSystems, WriteViewOnceServing): whichever of the two
  // comes last writes it.
  absl::Mutex view_mu_;
  bool view_serving_ ABSL_GUARDED_BY(view_mu_) = false;  // start finished
  bool view_probed_ ABSL_GUARDED_BY(view_mu_) = false;   // first round done
  // Missing before Start(): removed by Abandon() if this run made them.
  std::vector<std::string> missing_db_files_;  // store, -wal, -shm
  bool missing_db_lock_ = false;
  bool missing_socket_lock_ = false;
  bool missing_sharetab_lock_ = false;
  bool missing_sharetab_ = false;
  bool missing_pid_file_ = false;
  std::vector<std::string> missing_folders_;
  int threads_ = 0;
  std::unique_ptr<libshare::Catalog> catalog_;
  std::unique_ptr<authcache::AuthCache> cache_;
  std::unique_ptr<FsWatch> fs_watch_;  // which shares are served
  // The file-system identities added shares record and LIST_SHARES
  // compares with (the kernel mode's probe: rpc.mountd's uuid).
  std::shared_ptr<kernel::FsProbe> identity_probe_ =
      kernel::MakeSystemFsProbe();
  std::unique_ptr<MountService> mount_;
  std::unique_ptr<ShareAccess> access_;         // kernel mode
  std::unique_ptr<kernel::KernelMode> kernel_;  // null when off
  std::unique_ptr<MgmtService> mgmt_;
  // Where the catalog reports other heads' batches (set once mgmt_ is).
  std::atomic<MgmtService*> replicated_to_{nullptr};
  std::unique_ptr<ExportsFollower> follower_;  // --follow-exports
  // MOUNT (TCP, UDP) and management each have their own threads and
  // connection limit: remote clients can neither starve nor evict the
  // administrator.
  std::unique_ptr<RpcServer> server_;
  std::unique_ptr<RpcServer> mgmt_server_;
};

}  // namespace sharemgrd

#endif  // SHAREMGRD_DAEMON_H_

// KernelMode: the front of the kernel mode, the one object the daemon
// starts and stops. It opens the nfsd cache channels, answers every
// upcall (reads on one poll thread, answers on a small keyed worker pool
// so a slow name lookup for one client holds only that client's upcalls),
// keeps the NFSv4 pseudo-root and the fsid index current as the table
// changes, rewrites what the kernel holds for changed shares, and gives
// MOUNT the kernel's file handles. See DESIGN.md "Kernel mode" and
// KERNEL.md for the facts it rests on.
//
//   auto km = KernelMode::Start({}, catalog, access);
//   ... after each committed batch: km->SharesChanged(paths);
//   ... MNT: km->FileHandle(client, path, 64);
//   km->Stop();
//
// Thread-safe: every method may be called from any thread.
#ifndef SHAREMGRD_KERNEL_KERNEL_MODE_H_
#define SHAREMGRD_KERNEL_KERNEL_MODE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "channel.h"
#include "fs_probe.h"
#include "responder.h"
#include "libshare/catalog.h"
#include "libshare/options.h"
#include "share_access.h"

namespace sharemgrd::kernel {

struct KernelConfig {
  std::string proc_root = "/proc";
  bool manage_gids = false;  // answer auth.unix.gid (--manage-gids)
  bool insecure = false;     // NFS calls from unreserved ports (--insecure)
  int threads = 4;           // answer workers
  // Threads examining changed shares' paths (a batch's, the start's).
  int probe_threads = 4;
  absl::Duration positive_ttl = absl::Minutes(30);
  absl::Duration negative_ttl = absl::Minutes(1);
  absl::Duration failure_ttl = absl::Seconds(5);
  // Bound on the remembered answers (the mirror); past it the oldest are
  // forgotten after telling the kernel to ask again.
  std::size_t mirror_max_entries = 200000;
  // Without manage_gids, how long the group lists told for the
  // auth.unix.gid upcalls the kernel still makes after a previous
  // responder that managed gids stopped are kept (kernel_mode.cc,
  // Impl::Flushes). Over twice the kernel's 30 s listener grace, so a
  // refresh at half this life comes after the grace of our own answer.
  absl::Duration gid_bridge_ttl = absl::Minutes(2);
  // One line per event worth a log line (errors, refusals of the kernel).
  std::function<void(const std::string&)> log;
  // Start's file-system probe, when the caller has one to share (the
  // daemon's, which added shares record identities with: one libblkid
  // cache); null: Start makes its own. Must be thread-safe.
  std::shared_ptr<FsProbe> probe;
};

struct KernelStats {
  uint64_t upcalls = 0;        // answered
  uint64_t negative = 0;       // of them negative
  uint64_t pushed = 0;         // entries rewritten after changes
  uint64_t flushes = 0;        // whole-cache flushes (start and Flush())
  uint64_t answer_p99_us = 0;  // over the last answers, read to write
  uint64_t bad_upcalls = 0;    // lines that did not parse
  uint64_t write_errors = 0;   // replies the kernel refused
};

// The parts KernelMode talks to, for tests; Start() uses /proc's.
struct KernelDeps {
  std::vector<std::unique_ptr<CacheChannel>> channels;
  std::unique_ptr<NfsdFiles> files;
  std::unique_ptr<FsProbe> probe;
  std::unique_ptr<GroupSource> groups;
  std::function<int64_t()> now;  // wall-clock seconds
};

// True if PROC_ROOT/fs/nfsd is the mounted nfsd file system (it holds
// export_features); false if not mounted. Error only if it cannot be told.
[[nodiscard]] absl::StatusOr<bool> NfsdAvailable(const std::string& proc_root);

// Fails with a message naming the process (pid and command) if another
// process (rpc.mountd, nfsv4.exportd) has a cache channel open: both would
// answer every upcall and the last write would win.
[[nodiscard]] absl::Status CheckNoOtherResponder(const std::string& proc_root);

class KernelMode {
 public:
  // Checks that nfsd is there and no other responder runs, opens the
  // channels, flushes the caches once (dropping what an earlier responder
  // left), and starts answering. The catalog and access must outlive it.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<KernelMode>> Start(
      KernelConfig config, const libshare::Catalog* catalog,
      const ShareAccess* access);
  // The same over given parts (no presence checks).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<KernelMode>> StartWith(
      KernelConfig config, const libshare::Catalog* catalog,
      const ShareAccess* access, KernelDeps deps);

  ~KernelMode();
  KernelMode(const KernelMode&) = delete;
  KernelMode& operator=(const KernelMode&) = delete;

  // Stops reading and answering; what the kernel holds keeps serving, and
  // requests left unanswered stay queued in the kernel for the next
  // responder. Waits for answers being computed (a name lookup: at most
  // the auth cache's lookup timeout); drops queued ones.
  void Stop();

  // After each committed batch: the paths of the shares it added,
  // removed, changed, or whose group changed state. Rewrites, entry by
  // entry, what the kernel was told about them, their fsids and their
  // pseudo-root ancestors; releases the locks of removed ones. Returns
  // once the fsid index and the pseudo-root know the changed shares
  // (their paths examined in parallel) and the rewrites are written, so a
  // share added is mountable when the batch replies (a rewrite stuck
  // behind a client's slow name lookup is waited for 10 s at most, then
  // goes on). Calls apply in the order they are made.
  void SharesChanged(const std::vector<std::string>& share_paths);
  // Returns once the rewrites SharesChanged() queued before this call are
  // done (`exportfs -r` replies only then), or at once when stopping.
  void WaitPushed();

  // `sharectl cache flush`: drops every entry of every cache we answer.
  [[nodiscard]] absl::Status Flush();

  // MNT in kernel mode, after MOUNT's access decision `decided` (resolved,
  // granted; trusted, not made again): writes the auth.unix.ip and
  // nfsd.export entries of (client, decided.share), under the client's
  // key as upcall answers are, then reads the kernel's handle for
  // decided.path (max_size 64 for MOUNT v3, 32 for v1) and checks that
  // path is still the directory MOUNT walked to. PermissionDenied if the
  // client may not use the share or a path changed on disk meanwhile.
  [[nodiscard]] absl::StatusOr<std::string> FileHandle(
      const libshare::IpAddress& client, const AccessResult& decided,
      int max_size);

  KernelStats stats() const;

  // Blocks until no upcall answer or change is pending. For tests.
  void WaitIdle();

 private:
  struct Impl;
  explicit KernelMode(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sharemgrd::kernel

#endif  // SHAREMGRD_KERNEL_KERNEL_MODE_H_

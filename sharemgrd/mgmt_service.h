// MgmtService: the management program (mgmt_prot.x) that sharectl and the
// libshare client API call over the daemon's Unix socket.
//
// Thread-safe. Changing calls (BATCH) are group-committed: the calls that
// arrive while a commit is in flight are applied together as one
// transaction (one fsync) by Catalog::ApplyGroup, each validated as if
// alone after the ones before it, and each answered once the group is
// durable. Their after-commit work (cache, kernel, audit and change log)
// runs in arrival order. Reads run concurrently.
#ifndef SHAREMGRD_MGMT_SERVICE_H_
#define SHAREMGRD_MGMT_SERVICE_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "authcache/auth_cache.h"
#include "change_log.h"
#include "fs_watch.h"
#include "libshare/catalog.h"
#include "libshare/client.h"
#include "libshare/mgmt_prot.h"
#include "mount_service.h"
#include "request_stats.h"
#include "rpc_server.h"
#include "sharetab_writer.h"

namespace sharemgrd {

// Whether a caller with these credentials may change shares: uid 0, or
// membership (primary or supplementary group of its user) of admin_gid.
bool MayChange(uid_t uid, gid_t gid, std::optional<gid_t> admin_gid);

class MgmtService final : public RpcProgram {
 public:
  MgmtService(libshare::Catalog* catalog, authcache::AuthCache* cache,
              MountService* mounts, std::string sharetab_path,
              std::optional<gid_t> admin_gid);

  uint32_t program() const override { return SHAREMGR_MGMT_PROG; }
  uint32_t low_version() const override { return SHAREMGR_MGMT_V1; }
  uint32_t high_version() const override { return SHAREMGR_MGMT_V1; }
  accept_stat Call(const CallContext& ctx, XDR* args,
                   std::string* out) override;

  ~MgmtService() override;

  // Has the sharetab view of the current table written: now for a small
  // table, by the background writer for a big one (daemon start: the view
  // is rewritten, but not before the first calls are served).
  void RefreshSharetab();
  // Stops the background sharetab writer after it wrote what was asked.
  void Stop();
  // Writes an empty sharetab view: nothing is served any more (a clean
  // stop without the kernel mode). Call after Stop().
  void ClearSharetab();

  // What the kernel mode (sharemgrd/kernel) needs from the management
  // calls: each committed batch's change list, `cache flush`, and its
  // counters for STATS. Set before serving; unset members are skipped.
  struct KernelHooks {
    std::function<void(const std::vector<libshare::ShareChange>&)> changed;
    std::function<absl::Status()> flush;
    std::function<libshare::KernelStats()> stats;
    // Returns once the changes passed to `changed` so far are pushed.
    std::function<void()> wait_pushed;
  };
  void SetKernelHooks(KernelHooks hooks) { kernel_ = std::move(hooks); }
  // Shares not served (fs_watch.h) are left out of the sharetab view,
  // refused by CHECK with the reason, and said so by LIST_SHARES; each
  // batch's changes are passed on. Set before serving (may stay null).
  void SetServedShares(FsWatch* served) { served_ = served; }
  // The file-system identity a path's file system has now, in the
  // recorded identity's text form ("" when it has none or cannot be
  // examined): LIST_SHARES says where it differs from the recorded one.
  // Set before serving (may stay null: nothing is compared).
  void SetLiveIdentity(std::function<std::string(const std::string&)> fn) {
    live_identity_ = std::move(fn);
  }

  // Applies a batch made inside the daemon (the exports follower) as a
  // BATCH call applies its batch: serialized with them, then the cache,
  // the kernel's entries (incrementally) and the sharetab view follow it.
  // Who asked for a batch, for the audit log and the change log.
  struct BatchCaller {
    std::string who;  // as Caller() says it; "" = the daemon itself
    uint32_t uid = 0;
    int32_t pid = 0;
    // A call's arrival (its record complete), and how long decoding it
    // took: the audit line's duration counts from there. Unset for the
    // daemon's own batches.
    std::optional<std::chrono::steady_clock::time_point> arrived;
    double decode_ms = 0;
  };
  // The result's change list goes to the change log (CHANGES_SINCE): the
  // result returned has none, unless the log could not keep it.
  libshare::BatchResult ApplyBatch(const libshare::Batch& batch,
                                   const BatchCaller& caller);
  // The daemon's own batches (the exports follower).
  libshare::BatchResult ApplyBatch(const libshare::Batch& batch);
  // A batch another head of the cluster committed, now in this head's
  // table (Catalog::Config::on_replicated; `head` "" for a
  // resynchronization): the views, the EXPORT cache, the kernel and the
  // change log follow it as a local batch's. The catalog's writer lock is
  // held: nothing here may apply a batch.
  void Replicated(const libshare::Batch& batch, libshare::BatchResult& result,
                  std::string_view head);
  // Changing calls waiting for their group's commit or in it (tests).
  std::size_t queued_batches() ABSL_LOCKS_EXCLUDED(writers_mu_);
  // Returns once the sharetab view of the table as it is now is written
  // (tests; the view is written after the replies).
  void WaitForSharetab();
  // LIST_GROUPS fills each group's follow_error from this (the exports
  // follower's last refusal). Set before serving.
  void SetFollowErrorSource(
      std::function<std::string(const libshare::GroupInfo&)> source) {
    follow_error_ = std::move(source);
  }
  // FOLLOW_SYNC (`exportfs -r`): what the exports follower does when
  // asked to sync now (ExportsFollower::SyncNow) and the patterns it
  // follows. Unset: the daemon follows no files. Set before serving.
  struct FollowSyncHooks {
    std::function<std::vector<libshare::FollowedFile>()> sync;
    std::vector<std::string> patterns;
    // Every followed file's state, without syncing (STATS).
    std::function<std::vector<libshare::FollowedFileStatus>()> status;
  };
  void SetFollowSync(FollowSyncHooks hooks) { follow_sync_ = std::move(hooks); }

 private:
  accept_stat Batch(const CallContext& ctx, XDR* args, std::string* out,
                    bool* error);
  accept_stat PrepareBatch(const CallContext& ctx, XDR* args, std::string* out,
                           bool* error);
  // Unless the caller may change shares (root, or the admin group): true,
  // with *error set and MGMT_ERR_PERM naming `what` encoded in *out.
  bool RefusedUnlessMayChange(const CallContext& ctx, absl::string_view what,
                              std::string* out, bool* error);
  accept_stat ListShares(XDR* args, std::string* out, bool* error);
  accept_stat Check(XDR* args, std::string* out, bool* error);
  accept_stat Stats(std::string* out);
  // sharectl rerecord (FsWatch::Rerecord); needs change rights.
  accept_stat Rerecord(const CallContext& ctx, XDR* args, std::string* out,
                       bool* error);
  // Fills the split of s->shares: served, not served, disabled.
  void ShareCounts(libshare::DaemonStats* s) const;
  // The refusal of a listing whose reply would pass the budget of unread
  // replies (CallContext::replies_held).
  accept_stat ReplyBusy(const CallContext& ctx, std::string* out);
  // One of the kReaderListingsAtOnce listings for callers under that
  // budget being built (waited for while all are taken).
  static constexpr int kReaderListingsAtOnce = 2;
  class ReaderListingSlot {
   public:
    explicit ReaderListingSlot(MgmtService* s);
    ~ReaderListingSlot();
    ReaderListingSlot(const ReaderListingSlot&) = delete;
    ReaderListingSlot& operator=(const ReaderListingSlot&) = delete;

   private:
    MgmtService* const s_;
  };
  absl::Mutex reader_listings_mu_;
  int reader_listings_ ABSL_GUARDED_BY(reader_listings_mu_) = 0;
  accept_stat Mounts(std::string* out);
  accept_stat FollowSync(const CallContext& ctx, std::string* out, bool* error);
  accept_stat EncodeBatchResult(const libshare::BatchResult& r,
                                std::string* out);
  // The catalog's sharetab entries without the shares not served.
  std::vector<libshare::SharetabEntry> ServedSharetabEntries() const;
  // The sharetab view of the shares served, written to `file` from the
  // catalog's text (no entry per share: 1,000,000 shares took 260 MiB so).
  absl::Status WriteServedSharetab(const std::string& file) const;
  // Whether the share at `path` is served (the file-system watch's word).
  bool Served(std::string_view path, bool mountpoint) const;
  accept_stat ChangesSince(XDR* args, std::string* out, bool* error);

  libshare::Catalog* const catalog_;
  authcache::AuthCache* const cache_;
  MountService* const mounts_;
  const std::optional<gid_t> admin_gid_;
  RequestStats stats_;
  KernelHooks kernel_;
  std::function<std::string(const libshare::GroupInfo&)> follow_error_;
  FollowSyncHooks follow_sync_;
  // The identity `path`'s file system has now if it differs from
  // `recorded` ("none" when it has none), else "".
  std::string LiveIdentityDiffering(const std::string& path,
                                    const std::string& recorded);
  FsWatch* served_ = nullptr;
  std::function<std::string(const std::string&)> live_identity_;
  ChangeLog changes_;  // committed batches, for CHANGES_SINCE

  // A changing call in the group-commit queue, on its caller's stack.
  struct Writer {
    const libshare::Batch* batch = nullptr;
    const BatchCaller* caller = nullptr;
    std::chrono::steady_clock::time_point start;
    libshare::BatchResult result;  // set by the group's leader
    bool done = false;             // under writers_mu_
  };
  // The leader's part: applies the group, then each call's after-commit
  // work, in order. Only one leader runs at a time.
  void CommitGroup(const std::vector<Writer*>& group);
  // Cache invalidation, served state, kernel entries, audit log and change
  // log for one call of a group; `committed` calls of it committed. Moves
  // r.changes into the change log when it keeps them.
  void AfterBatch(const libshare::Batch& batch, const BatchCaller& caller,
                  std::chrono::steady_clock::time_point start,
                  std::size_t committed, libshare::BatchResult& r);

  absl::Mutex writers_mu_;
  // Front: the leader (committing), then the calls waiting for the next
  // group.
  std::deque<Writer*> writers_ ABSL_GUARDED_BY(writers_mu_);

  // Frees a big batch and its result, and trims the heap, after its reply
  // (on release_thread_; in the caller if no thread can start).
  void ReleaseAfterReply(libshare::Batch batch, libshare::BatchResult result);
  absl::Mutex release_mu_;
  std::thread release_thread_ ABSL_GUARDED_BY(release_mu_);

  // After a batch the view is rewritten in the background, paced, so that
  // no change is an O(N) file write before its reply; the same thread
  // sweeps the authorization cache after removals. Declared last: destroyed
  // (its thread joined) before the members its entries read.
  SharetabWriter sharetab_;
};

}  // namespace sharemgrd

#endif  // SHAREMGRD_MGMT_SERVICE_H_

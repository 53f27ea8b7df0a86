// SharetabWriter: keeps the sharetab view (libshare/sharetab.h) of the
// share table written, in the background after a change, paced, so that no
// change is an O(N) file write before its reply. The same thread sweeps
// the authorization cache after changes that dropped options
// (AuthCache::DropUnused), paced with the view.
//
// Thread-safe: every method may be called from any thread. One view write
// runs at a time (from reading the entries to the rename), whichever thread
// does it. Owned by MgmtService, which says when the view is due and what
// it shows.
//
//   SharetabWriter view(path, cache, [&](const std::string& file) {
//     return catalog.SharetabText().Write(file, keep);
//   });
//   view.Request(result.generation, /*wait=*/false);  // after a commit
//   view.Stop();   // the last asked-for view is written
//   view.Clear();  // nothing is served any more
#ifndef SHAREMGRD_SHARETAB_WRITER_H_
#define SHAREMGRD_SHARETAB_WRITER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "authcache/auth_cache.h"
#include "libshare/sharetab.h"

namespace sharemgrd {

class SharetabWriter {
 public:
  // `write` writes the view of the table as it is now to the file it is
  // given (SharetabLines::Write); it is called with no lock of this class
  // held but one write at a time. `cache` is
  // swept after a write when SweepCacheAfterNextWrite asked for it. Both
  // must outlive Stop().
  SharetabWriter(std::string path, authcache::AuthCache* cache,
                 std::function<absl::Status(const std::string& file)> write);
  SharetabWriter(const SharetabWriter&) = delete;
  SharetabWriter& operator=(const SharetabWriter&) = delete;
  // Stops the background thread (Stop).
  ~SharetabWriter();

  // Writes the view now, on the caller's thread; on failure logs it and
  // keeps the error (error()), retried after the next change.
  void Write() ABSL_LOCKS_EXCLUDED(write_mu_, mu_);
  // Has the background thread write the view of generation `generation`
  // or later (a change's rewrite starts after a settle, paced after the
  // last write); with `wait`, returns once it is written, without waiting
  // out the settle. Nothing once stopping.
  void Request(uint64_t generation, bool wait) ABSL_LOCKS_EXCLUDED(mu_);
  // Has the background thread write the view once more, whatever the
  // generation (the table's served state changed). Nothing once stopping.
  void RequestRefresh() ABSL_LOCKS_EXCLUDED(mu_);
  // The next background write also drops the cached decisions of options
  // no share holds (a change removed or changed shares).
  void SweepCacheAfterNextWrite() ABSL_LOCKS_EXCLUDED(mu_);
  // Stops the background thread after it wrote what was asked; later
  // requests are ignored. Idempotent.
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);
  // Writes an empty view (after any write under way): nothing is served
  // any more. Call after Stop(). A failure is logged.
  void Clear() ABSL_LOCKS_EXCLUDED(write_mu_);
  // The last write's failure ("" when it was written).
  std::string error() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Loop() ABSL_LOCKS_EXCLUDED(mu_);
  // Starts the thread if it is not running.
  void StartThread() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string path_;
  authcache::AuthCache* const cache_;
  const std::function<absl::Status(const std::string& file)> write_;

  // One view write at a time, from reading the table to the rename: the
  // background thread and a served-state change (RefreshSharetab, which
  // writes a small table itself) could otherwise each read the table, and
  // the one that read first rename last, leaving a stale view.
  absl::Mutex write_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  mutable absl::Mutex mu_;
  std::string error_ ABSL_GUARDED_BY(mu_);
  uint64_t requested_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t written_ ABSL_GUARDED_BY(mu_) = 0;
  // RequestRefresh: write once more, whatever generation.
  bool refresh_ ABSL_GUARDED_BY(mu_) = false;
  // When the pending rewrite a change asked for may start (settled).
  absl::Time due_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  int waiting_ ABSL_GUARDED_BY(mu_) = 0;  // Request(..., wait=true) callers
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // The next round also runs AuthCache::DropUnused.
  bool cache_sweep_ ABSL_GUARDED_BY(mu_) = false;
  // Started under mu_, joined by Stop.
  std::thread thread_;
};

}  // namespace sharemgrd

#endif  // SHAREMGRD_SHARETAB_WRITER_H_

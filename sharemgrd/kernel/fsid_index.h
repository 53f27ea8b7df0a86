// FsidIndex: from the fsid bytes of a file handle to the export root it
// names, for every fsid type, so an nfsd.fh upcall is one hash lookup
// whatever the number of shares (rpc.mountd stats every export, and
// /etc/mtab for crossmnt ones, per upcall). Holds the identity of every
// active share and every pseudo-root directory, kept current on changes.
//
// Thread-safe.
#ifndef SHAREMGRD_KERNEL_FSID_INDEX_H_
#define SHAREMGRD_KERNEL_FSID_INDEX_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "fsid.h"

namespace sharemgrd::kernel {

class FsidIndex {
 public:
  // Sets what `path` is (replacing what it was), or forgets it (nullopt).
  void Set(const std::string& path, const std::optional<FsIdentity>& id);
  // The path whose export root has these fsid bytes. Two paths with one
  // key (bind mounts): the one set first.
  std::optional<std::string> Find(int type, std::string_view bytes) const;
  std::optional<FsIdentity> IdentityOf(const std::string& path) const;
  // How many indexed paths are on the device (major, minor).
  std::size_t PathsOnDevice(uint32_t major, uint32_t minor) const;
  std::size_t size() const;

  // Start-up: the index is filled in the background; Find callers wait
  // (at most `timeout`) until MarkReady.
  void MarkReady();
  bool WaitReady(absl::Duration timeout) const;

  // Between these, changed shares are being learnt (KernelMode's pushes;
  // they may nest). FindSettled is Find, except that a miss while an
  // update is under way waits for the updates to end (at most `timeout`)
  // and looks again: the fsid may be a share being added.
  void BeginUpdate();
  void EndUpdate();
  std::optional<std::string> FindSettled(int type, std::string_view bytes,
                                         absl::Duration timeout) const;

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, FsIdentity> by_path_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::vector<std::string>> by_key_
      ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint64_t, std::size_t> per_device_ ABSL_GUARDED_BY(mu_);
  bool ready_ ABSL_GUARDED_BY(mu_) = false;
  int updating_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace sharemgrd::kernel

#endif  // SHAREMGRD_KERNEL_FSID_INDEX_H_

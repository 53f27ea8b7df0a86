// Mirror: what the kernel was told, per nfsd.export entry (domain, path)
// and per nfsd.fh entry (domain, fsid type, fsid), positive or negative,
// so a change can rewrite exactly the entries it affects: O(affected
// entries), never O(table). Only a digest of each answer's content (the
// line without its expiry) is kept, to skip rewriting an answer that did
// not change.
//
// Bounded: past max_entries the least recently answered entries are
// dropped and handed back to the caller, which tells the kernel to ask
// again (a negative entry already expired), since a change could no
// longer reach them.
//
// Thread-safe.
#ifndef SHAREMGRD_KERNEL_MIRROR_H_
#define SHAREMGRD_KERNEL_MIRROR_H_

#include <cstddef>
#include <cstdint>
#include <list>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace sharemgrd::kernel {

struct MirrorEntry {
  enum class Kind : uint8_t { kExport, kFh };
  Kind kind = Kind::kExport;
  std::string domain;
  std::string path;   // export: the key; fh: the answer ("" if negative)
  int fsid_type = 0;  // fh
  std::string fsid;   // fh
  uint64_t digest = 0;
};

class Mirror {
 public:
  explicit Mirror(std::size_t max_entries) : max_(max_entries) {}

  // Records an answer (replacing the entry's previous one). Entries
  // dropped for the bound are appended to *evicted.
  void RecordExport(const std::string& domain, const std::string& path,
                    uint64_t digest, std::vector<MirrorEntry>* evicted);
  void RecordFh(const std::string& domain, int fsid_type,
                const std::string& fsid, const std::string& answer_path,
                uint64_t digest, std::vector<MirrorEntry>* evicted);

  // The export entries recorded for `path` (every domain).
  std::vector<MirrorEntry> ExportsOf(const std::string& path) const;
  // The fh entries answered with `path`.
  std::vector<MirrorEntry> FhAnsweredWith(const std::string& path) const;
  // The fh entries of one fsid (every domain), positive or negative.
  std::vector<MirrorEntry> FhOf(int fsid_type, const std::string& fsid) const;
  // The digest last recorded for an entry.
  std::optional<uint64_t> ExportDigest(const std::string& domain,
                                       const std::string& path) const;
  std::optional<uint64_t> FhDigest(const std::string& domain, int fsid_type,
                                   const std::string& fsid) const;

  void Clear();
  std::size_t size() const;

 private:
  using List = std::list<MirrorEntry>;
  void Touch(List::iterator it) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Evict(std::vector<MirrorEntry>* evicted)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Unlink(List::iterator it) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::size_t max_;
  mutable absl::Mutex mu_;
  List lru_ ABSL_GUARDED_BY(mu_);  // least recently answered first
  // path -> domain -> entry
  absl::flat_hash_map<std::string,
                      absl::flat_hash_map<std::string, List::iterator>>
      exports_ ABSL_GUARDED_BY(mu_);
  // fh key -> domain -> entry
  absl::flat_hash_map<std::string,
                      absl::flat_hash_map<std::string, List::iterator>>
      fh_ ABSL_GUARDED_BY(mu_);
  // answered path -> fh key + '\0' + domain -> entry
  absl::flat_hash_map<std::string,
                      absl::flat_hash_map<std::string, List::iterator>>
      fh_by_path_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sharemgrd::kernel

#endif  // SHAREMGRD_KERNEL_MIRROR_H_

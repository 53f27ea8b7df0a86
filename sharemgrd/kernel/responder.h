// Responder: the answer to each kind of upcall, one handler per cache,
// computed from the share table, the one access decision (ShareAccess)
// and the indexes. Each handler returns the reply line; none writes it
// (the front does, on its worker pool).
//
//  - auth.unix.ip: every address gets its own domain, "$" + the address
//    ("$10.1.2.3", as rpc.mountd's --use-ipaddr names them). Never
//    negative for class "nfsd": deciding "allowed by some share" would be
//    a scan of the table (or of every access list's names and
//    netgroups), and would change with every table change, forcing ip
//    rewrites. Refusal happens one step later, on nfsd.export and nfsd.fh,
//    which every NFS and NLM request passes through (fh_verify).
//  - nfsd.export (DOMAIN PATH): a share's own path gets the entry of
//    ShareExport() from one decision per flavor (ShareAccess, resolving
//    the path); a directory above a share the client may see gets the
//    pseudo-root's V4ROOT entry (so does a share the client may not use
//    that lies above one it may); anything else is negative. Whether a
//    directory leads somewhere walks the ShareTree below it and stops at
//    the first share the client may use: one decision for a client that
//    sees anything, one per share below for one that sees nothing there
//    (cached decisions after the first time). A lookup that
//    failed or timed out gives a negative answer with the short failure
//    TTL, never a grant.
//  - nfsd.fh (DOMAIN FSIDTYPE FSID): one FsidIndex lookup; FSID_NUM 0 is
//    "/". A miss while changed shares are being learnt waits for them
//    (never a negative for a share being added). Which client may use the
//    path is the export entry's business.
//  - auth.unix.gid (UID): the user's groups from GroupSource.
//
// Thread-safe: handlers may run on any number of threads.
#ifndef SHAREMGRD_KERNEL_RESPONDER_H_
#define SHAREMGRD_KERNEL_RESPONDER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "export_entry.h"
#include "fs_probe.h"
#include "fsid_index.h"
#include "line_format.h"
#include "share_tree.h"
#include "libshare/catalog.h"
#include "share_access.h"

namespace sharemgrd::kernel {

// A user's groups (auth.unix.gid, --manage-gids). NotFound: no such user.
class GroupSource {
 public:
  virtual ~GroupSource() = default;
  [[nodiscard]] virtual absl::StatusOr<std::vector<uint32_t>> GroupsOf(
      uint32_t uid) = 0;
};
// getpwuid_r + getgrouplist (the system's passwd and group databases).
std::unique_ptr<GroupSource> MakeSystemGroupSource();

struct ResponderConfig {
  absl::Duration positive_ttl = absl::Minutes(30);
  absl::Duration negative_ttl = absl::Minutes(1);  // refused, unknown
  absl::Duration failure_ttl = absl::Seconds(5);   // a lookup failed
  bool insecure = false;  // accept NFS calls from unreserved ports
  absl::Duration gid_ttl = absl::Minutes(30);  // auth.unix.gid answers
  ExportFeatures features;
  // How long nfsd.fh waits for the start-up index before answering with
  // failure_ttl (the fsid may belong to a share not indexed yet).
  absl::Duration index_wait = absl::Seconds(30);
  // How long nfsd.fh waits, on a miss, for the shares being learnt (a
  // batch's adds) before answering no.
  absl::Duration update_wait = absl::Seconds(10);
};

struct Answer {
  std::string line;
  bool negative = false;
  // A positive nfsd.export answer: the kernel resolves its path by name,
  // following links, so the writer checks after writing that the path
  // still has no symlink component and (when walked) is still the
  // directory the access decision walked to (see kernel_mode.cc).
  bool recheck = false;
  bool walked = false;
  uint64_t dev = 0;
  uint64_t ino = 0;
};

class Responder {
 public:
  // All pointers must outlive the responder. `now` gives wall-clock
  // seconds (expiries are absolute).
  Responder(ResponderConfig config, const libshare::Catalog* catalog,
            const ShareAccess* access, FsidIndex* index, const ShareTree* tree,
            FsProbe* probe, std::function<int64_t()> now);

  Answer Ip(const IpUpcall& u) const;
  Answer Export(const std::string& domain, const std::string& path) const;
  Answer Fh(const FhUpcall& u) const;
  Answer Gid(const GidUpcall& u, GroupSource* groups) const;

  // How long nfsd.fh waits for the start-up index.
  static constexpr absl::Duration kIndexWait = absl::Seconds(30);

  static std::string DomainOf(const libshare::IpAddress& client);
  // The client of a domain this responder made; nullopt for another.
  static std::optional<libshare::IpAddress> ClientOf(std::string_view domain);

  const ResponderConfig& config() const { return config_; }

 private:
  int64_t Expiry(absl::Duration ttl) const;
  struct FlavorGrants {
    std::vector<FlavorGrant> grants;  // in the share's flavor order
    bool failed = false;              // a lookup failed or timed out
    Answer walked;                    // walked, dev, ino of the first grant
  };
  // One decision per flavor of a share for `client` at `path`. For the
  // share's own entry (any = false): as root, resolving the path, every
  // flavor, stopping at a failed lookup. any = true: whether the client
  // may see anything there (a pseudo dir leads to it), stopping at the
  // first flavor granted.
  FlavorGrants GrantsFor(const libshare::IpAddress& client,
                         const std::string& path,
                         const libshare::ShareOptions& options, bool any) const;
  std::optional<FsIdentity> IdentityOf(const std::string& path) const;

  const ResponderConfig config_;
  const libshare::Catalog* const catalog_;
  const ShareAccess* const access_;
  FsidIndex* const index_;
  const ShareTree* const tree_;
  FsProbe* const probe_;
  const std::function<int64_t()> now_;
};

}  // namespace sharemgrd::kernel

#endif  // SHAREMGRD_KERNEL_RESPONDER_H_

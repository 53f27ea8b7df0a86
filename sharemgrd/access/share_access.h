// ShareAccess: the one access decision of the daemon. MNT, `sharectl
// check` and every kernel upcall (auth.unix.ip, nfsd.export, nfsd.fh) ask
// it, so they can never disagree: the nearest active share of a path, its
// nosub rule, the authorization cache's decision for the client, and (when
// asked) where the path really is on disk beneath the share.
//
// Thread-safe: Decide() may be called from any number of threads; it
// holds no lock of its own. The Catalog and AuthCache must outlive it.
//
//   ShareAccess access(catalog, cache);
//   AccessResult r = access.Decide({.client = addr, .path = "/export/home/a"});
//   if (r.granted()) { ... r.share->path, r.decision.access, r.decision.root }
#ifndef SHAREMGRD_SHARE_ACCESS_H_
#define SHAREMGRD_SHARE_ACCESS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/types/span.h"
#include "authcache/auth_cache.h"
#include "authcache/evaluate.h"
#include "libshare/catalog.h"
#include "libshare/options.h"

namespace sharemgrd {

class FsWatch;

enum class AccessOutcome : uint8_t {
  kGranted,    // decision.access is ro or rw
  kBadPath,    // the path is not absolute/normal (reason says why)
  kNotShared,  // no active share is the path or above it, the share is
               // not served (not on its recorded file system, see
               // fs_watch.h), or the path leaves its share on disk (a
               // symlink out): same answer
  kNosub,      // below a share that has nosub
  kDenied,     // the share's lists give the client nothing
  kNoent,      // (resolve only) the path does not exist beneath the share
  kNotdir,     // (resolve only) a component is not a directory
};

struct AccessRequest {
  libshare::IpAddress client;
  std::string_view path;  // as the client sent it
  libshare::SecFlavor flavor = libshare::SecFlavor::kSys;
  uint32_t uid = 65534;  // caller's uid (0 asks whether root is kept)
  uint32_t gid = 65534;  // caller's primary gid (for the on-disk walk)
  // caller's supplementary groups (AUTH_SYS gids; the walk only); must
  // outlive Decide().
  absl::Span<const uint32_t> groups = {};
  // No user credentials (AUTH_NONE): decided as the share's first flavor
  // with the nobody uid (flavor and uid are then ignored); the walk uses
  // the share's anon uid.
  bool anonymous = false;
  // Check the path on disk beneath its share (MNT, and paths handed to
  // the kernel), once the share's lists grant the client access: the
  // share's own path must still have no symlink component; the rest is
  // walked from the share's directory without following any link, without
  // entering another mount (a nested share on another file system is found
  // by FindNearest and decides for itself), with the client's search
  // rights on each directory passed: uid 0 is squashed to the share's
  // anon= id as uid and gid, as the kernel squashes (default 65534;
  // anon=-1: ids owning nothing) unless
  // root= keeps it; other AUTH_SYS users walk as their uid, gid and
  // supplementary groups;
  // `anonymous` callers as anon. A path that would leave the share, or
  // that the client may not reach, is kNotShared, exactly as an unshared
  // path; kNoent / kNotdir only for names inside what the client reaches.
  bool resolve = false;
  // `sharectl check`: when no active share covers the path, name the
  // disabled group of a share that would (costs a scan of disabled
  // groups' shares; never on MNT or upcalls).
  bool explain = false;
};

struct AccessResult {
  AccessOutcome outcome = AccessOutcome::kNotShared;
  std::string path;  // the normalized request path ("" if kBadPath)
  std::optional<libshare::ShareMatch> share;  // the share that decided
  authcache::Decision decision;               // set when a share matched
  std::string reason;  // one sentence, for logs and `sharectl check`
  // resolve and granted: the directory the walk ended on (for the MNT
  // file handle), from fstat of its descriptor, never re-resolved by name.
  bool resolved = false;
  // kNotShared because the share is not served (reason says why).
  bool not_served = false;
  uint64_t dev = 0;
  uint64_t ino = 0;
  bool granted() const { return outcome == AccessOutcome::kGranted; }
};

class ShareAccess {
 public:
  // `served` (may be null: every share is served) must outlive this.
  ShareAccess(const libshare::Catalog* catalog, authcache::AuthCache* cache,
              const FsWatch* served = nullptr)
      : catalog_(catalog), cache_(cache), served_(served) {}

  AccessResult Decide(const AccessRequest& req) const;

 private:
  void Resolve(const AccessRequest& req, AccessResult* r) const;
  // "PATH is not inside an active share", or, explained, the disabled
  // group whose share would cover it.
  std::string NotSharedReason(const std::string& path, bool explain) const;

  const libshare::Catalog* const catalog_;
  authcache::AuthCache* const cache_;
  const FsWatch* const served_;
};

}  // namespace sharemgrd

#endif  // SHAREMGRD_SHARE_ACCESS_H_

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

#include "authcache/auth_cache.h"
#include "authcache/evaluate.h"
#include "libshare/catalog.h"
#include "libshare/options.h"

namespace sharemgrd {

enum class AccessOutcome : uint8_t {
  kGranted,    // decision.access is ro or rw
  kBadPath,    // the path is not absolute/normal (reason says why)
  kNotShared,  // no active share is the path or above it, or the path
               // leaves its share on disk (a symlink out): same answer
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
  // Check the path on disk beneath its share (MNT, and paths handed to
  // the kernel): a path that leaves the share is kNotShared.
  bool resolve = false;
};

struct AccessResult {
  AccessOutcome outcome = AccessOutcome::kNotShared;
  std::string path;  // the normalized request path ("" if kBadPath)
  std::optional<libshare::ShareMatch> share;  // the share that decided
  authcache::Decision decision;               // set when a share matched
  std::string reason;  // one sentence, for logs and `sharectl check`
  bool granted() const { return outcome == AccessOutcome::kGranted; }
};

class ShareAccess {
 public:
  ShareAccess(const libshare::Catalog* catalog, authcache::AuthCache* cache)
      : catalog_(catalog), cache_(cache) {}

  AccessResult Decide(const AccessRequest& req) const;

 private:
  const libshare::Catalog* const catalog_;
  authcache::AuthCache* const cache_;
};

}  // namespace sharemgrd

#endif  // SHAREMGRD_SHARE_ACCESS_H_

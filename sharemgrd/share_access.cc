#include "share_access.h"

#include "absl/strings/str_cat.h"
#include "libshare/path.h"

namespace sharemgrd {

AccessResult ShareAccess::Decide(const AccessRequest& req) const {
  AccessResult r;
  absl::StatusOr<std::string> path = libshare::NormalizePath(req.path);
  if (!path.ok()) {
    r.outcome = AccessOutcome::kBadPath;
    r.reason = std::string(path.status().message());
    return r;
  }
  r.path = *std::move(path);
  r.share = catalog_->FindNearest(r.path);
  if (!r.share.has_value()) {
    r.outcome = AccessOutcome::kNotShared;
    r.reason = absl::StrCat(r.path, " is not inside an active share");
    return r;
  }
  if (!r.share->exact && r.share->options->nosub) {
    r.outcome = AccessOutcome::kNosub;
    r.reason = absl::StrCat("share ", r.share->path,
                            " has nosub: only the share itself may be mounted");
    return r;
  }
  cache_->Check(req.client, r.share->id, r.share->generation, *r.share->options,
                req.flavor, req.uid, &r.decision);
  r.reason = r.decision.reason;
  r.outcome = r.decision.access == authcache::Access::kNone
                  ? AccessOutcome::kDenied
                  : AccessOutcome::kGranted;
  // TODO(security issue 13): with req.resolve, walk the path beneath the
  // share (no symlink leaves it) and report kNoent / kNotdir / kNotShared.
  return r;
}

}  // namespace sharemgrd

#include "share_access.h"

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "fs_watch.h"
#include "libshare/dir_walk.h"
#include "libshare/path.h"

namespace sharemgrd {
namespace {

constexpr uint32_t kNobody = 65534;
// anon=-1 ("deny unmapped users"): an id no file can be owned by, so only
// the "other" bits let such a caller pass.
constexpr uint32_t kNoId = 0xFFFFFFFFu;

libshare::WalkIdentity WalkerFor(const AccessRequest& req,
                                 const libshare::ShareOptions& opts,
                                 const authcache::Decision& d) {
  if (!req.anonymous && req.uid != 0) {
    return {
        .root = false, .uid = req.uid, .gid = req.gid, .groups = req.groups};
  }
  if (!req.anonymous && d.root) return {.root = true};
  if (opts.anon.has_value() && *opts.anon < 0) {
    return {.root = false, .uid = kNoId, .gid = kNoId};
  }
  // anon=N is both ids, as the kernel's anonuid and anongid
  // (kernel/export_entry.cc), so MNT and NFS decide alike.
  uint32_t anon =
      opts.anon.has_value() ? static_cast<uint32_t>(*opts.anon) : kNobody;
  return {.root = false, .uid = anon, .gid = anon};
}

// `path` is `top` or below it (both normalized).
bool IsWithin(std::string_view path, std::string_view top) {
  if (top == "/") return true;
  return path.size() >= top.size() && path.substr(0, top.size()) == top &&
         (path.size() == top.size() || path[top.size()] == '/');
}

}  // namespace

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
    r.reason = NotSharedReason(r.path, req.explain);
    return r;
  }
  // An unserved share is refused, never left to an ancestor share: its
  // folder may be the empty mountpoint of a dataset not mounted.
  if (served_ != nullptr) {
    if (std::optional<std::string> why = served_->NotServed(
            r.share->path, req.resolve, r.share->options->mountpoint,
            r.share->id, r.share->dev, r.share->mount_root)) {
      r.outcome = AccessOutcome::kNotShared;
      r.not_served = true;
      r.reason = absl::StrCat(r.share->path, ": not served: ", *why);
      return r;
    }
  }
  if (!r.share->exact && r.share->options->nosub) {
    r.outcome = AccessOutcome::kNosub;
    r.reason = absl::StrCat("share ", r.share->path,
                            " has nosub: only the share itself may be mounted");
    return r;
  }
  // A caller without credentials is decided as the share's first flavor
  // with the nobody uid (probing clients send AUTH_NONE).
  const libshare::ShareOptions& opts = *r.share->options;
  libshare::SecFlavor flavor = req.flavor;
  if (req.anonymous && !opts.scopes.empty()) {
    flavor = opts.scopes.front().flavors.front();
  }
  cache_->Check(req.client, r.share->options, flavor,
                req.anonymous ? kNobody : req.uid, &r.decision);
  r.reason = r.decision.reason;
  r.outcome = r.decision.access == authcache::Access::kNone
                  ? AccessOutcome::kDenied
                  : AccessOutcome::kGranted;
  if (req.resolve && r.granted()) Resolve(req, &r);
  return r;
}

std::string ShareAccess::NotSharedReason(const std::string& path,
                                         bool explain) const {
  if (explain) {
    std::vector<std::string> disabled;
    for (const libshare::GroupInfo& g : catalog_->ListGroups()) {
      if (!g.enabled) disabled.push_back(g.name);
    }
    absl::StatusOr<std::vector<libshare::ShareInfo>> shares =
        disabled.empty() ? absl::StatusOr<std::vector<libshare::ShareInfo>>(
                               std::vector<libshare::ShareInfo>())
                         : catalog_->ListShares(disabled);
    const libshare::ShareInfo* nearest = nullptr;
    if (shares.ok()) {
      for (const libshare::ShareInfo& s : *shares) {
        if (IsWithin(path, s.path) &&
            (nearest == nullptr || s.path.size() > nearest->path.size())) {
          nearest = &s;
        }
      }
    }
    if (nearest != nullptr) {
      return absl::StrCat(nearest->path, " is in group ", nearest->group,
                          ", which is disabled");
    }
  }
  return absl::StrCat(path, " is not inside an active share");
}

// Every refusal that concerns what lies outside the client's reach is
// kNotShared, so its MNT answer cannot tell "outside" from "not there".
void ShareAccess::Resolve(const AccessRequest& req, AccessResult* r) const {
  const std::string& share = r->share->path;
  libshare::WalkResult root = libshare::OpenDirectoryNoSymlinks(share);
  if (!root.ok()) {
    // A share's own path is public (EXPORT lists it): that it is gone or no
    // longer a directory may be said; a link in it means it is not served.
    switch (root.stop) {
      case libshare::WalkStop::kNotFound:
        r->outcome = AccessOutcome::kNoent;
        r->reason =
            absl::StrCat("share ", share, ": ", root.at, ": no such directory");
        break;
      case libshare::WalkStop::kNotDirectory:
        r->outcome = AccessOutcome::kNotdir;
        r->reason =
            absl::StrCat("share ", share, ": ", root.at, ": not a directory");
        break;
      default: {
        // The daemon short of descriptors or memory: nothing is known of
        // the path, and a round would fail the same way.
        const bool short_of_resources =
            root.stop == libshare::WalkStop::kError &&
            (root.error == EMFILE || root.error == ENFILE ||
             root.error == ENOMEM);
        // Otherwise the share was served by the last round, so a round has
        // to say it is not (EXPORT, the sharetab view, the log): none would
        // come before the next recheck, as no mount changed. Rounds are
        // paced; a client retrying against a lack of descriptors would
        // still wake one per pace for nothing.
        if (served_ != nullptr && !short_of_resources) served_->Recheck();
        r->outcome = AccessOutcome::kNotShared;
        r->reason = absl::StrCat(
            "share ", share, " is not served: ", root.at, ": ", root.Why(),
            root.stop == libshare::WalkStop::kError
                ? ""
                : " (a share path must stay the canonical directory it was "
                  "when added)");
      }
    }
    return;
  }
  std::string_view rest;
  if (!r->share->exact) {
    rest =
        std::string_view(r->path).substr(share == "/" ? 1 : share.size() + 1);
  }
  const libshare::WalkIdentity who =
      WalkerFor(req, *r->share->options, r->decision);
  libshare::WalkResult w =
      libshare::WalkBeneath(root.fd.get(), share, rest, who);
  switch (w.stop) {
    case libshare::WalkStop::kOk:
      r->resolved = true;
      r->dev = w.dev;
      r->ino = w.ino;
      return;
    case libshare::WalkStop::kNotFound:
      r->outcome = AccessOutcome::kNoent;
      r->reason = absl::StrCat(w.at, ": no such directory in share ", share);
      return;
    case libshare::WalkStop::kNotDirectory:
      r->outcome = AccessOutcome::kNotdir;
      r->reason =
          absl::StrCat(w.at, ": not a directory (in share ", share, ")");
      return;
    case libshare::WalkStop::kSymlink:
      r->reason = absl::StrCat(w.at,
                               " is a symlink: MNT never follows links "
                               "below share ",
                               share);
      break;
    case libshare::WalkStop::kOtherMount:
      r->reason = absl::StrCat(w.at,
                               " is another mount, not a share itself "
                               "(below share ",
                               share, ")");
      break;
    case libshare::WalkStop::kNoSearch:
      r->reason = absl::StrCat("the client (as uid ", who.uid,
                               ") may not search ", w.at, " in share ", share);
      break;
    case libshare::WalkStop::kError:
      r->reason = absl::StrCat(w.at, ": ", w.Why());
      break;
  }
  r->outcome = AccessOutcome::kNotShared;
}

}  // namespace sharemgrd

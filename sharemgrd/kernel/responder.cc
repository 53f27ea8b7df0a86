#include "responder.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace sharemgrd::kernel {
namespace {

// Old kernels keep expiries in 32 bits.
constexpr int64_t kMaxExpiry = 0x7fffffff;
// unix_gid_parse refuses more.
constexpr size_t kMaxGroups = 8192;

class SystemGroupSource : public GroupSource {
 public:
  absl::StatusOr<std::vector<uint32_t>> GroupsOf(uint32_t uid) override {
    struct passwd pw;
    struct passwd* found = nullptr;
    std::vector<char> buf(16384);
    int rc;
    while ((rc = getpwuid_r(uid, &pw, buf.data(), buf.size(), &found)) ==
               ERANGE &&
           buf.size() < (1u << 20)) {
      buf.resize(buf.size() * 2);
    }
    if (rc != 0) {
      return absl::UnavailableError(
          absl::StrCat("getpwuid_r(", uid, "): error ", rc));
    }
    if (found == nullptr) {
      return absl::NotFoundError(absl::StrCat("uid ", uid, ": no such user"));
    }
    int n = 64;
    std::vector<gid_t> groups(n);
    while (getgrouplist(pw.pw_name, pw.pw_gid, groups.data(), &n) < 0) {
      if (static_cast<size_t>(n) <= groups.size()) n = groups.size() * 2;
      if (static_cast<size_t>(n) > kMaxGroups * 4) break;
      groups.resize(n);
    }
    groups.resize(std::min<size_t>(n, groups.size()));
    return std::vector<uint32_t>(groups.begin(), groups.end());
  }
};

}  // namespace

std::unique_ptr<GroupSource> MakeSystemGroupSource() {
  return std::make_unique<SystemGroupSource>();
}

Responder::Responder(ResponderConfig config, const libshare::Catalog* catalog,
                     const ShareAccess* access, FsidIndex* index,
                     const ShareTree* tree, FsProbe* probe,
                     std::function<int64_t()> now)
    : config_(std::move(config)),
      catalog_(catalog),
      access_(access),
      index_(index),
      tree_(tree),
      probe_(probe),
      now_(std::move(now)) {}

int64_t Responder::Expiry(absl::Duration ttl) const {
  return std::min(kMaxExpiry, now_() + absl::ToInt64Seconds(ttl));
}

std::string Responder::DomainOf(const libshare::IpAddress& client) {
  return absl::StrCat("$", client.ToString());
}

std::optional<libshare::IpAddress> Responder::ClientOf(
    std::string_view domain) {
  if (domain.empty() || domain[0] != '$') return std::nullopt;
  return libshare::IpAddress::Parse(domain.substr(1));
}

std::optional<FsIdentity> Responder::IdentityOf(const std::string& path) const {
  if (std::optional<FsIdentity> id = index_->IdentityOf(path)) return id;
  absl::StatusOr<FsIdentity> id = probe_->Probe(path);
  if (!id.ok()) return std::nullopt;
  return *id;
}

Answer Responder::Ip(const IpUpcall& u) const {
  if (u.cls != "nfsd") {
    return {IpDowncall(u.cls, u.address_text, Expiry(config_.negative_ttl),
                       std::nullopt),
            true};
  }
  return {IpDowncall(u.cls, u.address_text, Expiry(config_.positive_ttl),
                     DomainOf(u.address)),
          false};
}

Responder::FlavorGrants Responder::GrantsFor(
    const libshare::IpAddress& client, const std::string& path,
    const libshare::ShareOptions& options, bool any) const {
  FlavorGrants g;
  for (const libshare::SecScope& scope : options.scopes) {
    for (libshare::SecFlavor f : scope.flavors) {
      AccessRequest req;
      req.client = client;
      req.path = path;
      req.flavor = f;
      if (!any) {
        req.uid = 0;
        req.resolve = true;
      }
      AccessResult r = access_->Decide(req);
      if (r.decision.lookup_failed) {
        g.failed = true;
        // The entry must not grant less than the lists say: no answer.
        if (!any) return g;
        continue;
      }
      if (!r.granted()) continue;
      if (any) {
        g.grants.push_back({f, r.decision.access, r.decision.root});
        return g;
      }
      if (!r.share.has_value() || !r.share->exact) continue;
      g.grants.push_back({f, r.decision.access, r.decision.root});
      if (r.resolved && !g.walked.walked) {
        g.walked.walked = true;
        g.walked.dev = r.dev;
        g.walked.ino = r.ino;
      }
    }
  }
  return g;
}

Answer Responder::Export(const std::string& domain,
                         const std::string& path) const {
  auto negative = [&](absl::Duration ttl) {
    return Answer{ExportDowncall(domain, path, Expiry(ttl), std::nullopt),
                  true};
  };
  const std::optional<libshare::IpAddress> client = ClientOf(domain);
  if (!client.has_value()) return negative(config_.negative_ttl);

  const std::optional<libshare::ShareMatch> share = catalog_->FindNearest(path);
  if (share.has_value() && share->exact) {
    ShareExportInput in;
    in.options = share->options.get();
    in.insecure = config_.insecure;
    in.root_path = path == "/";
    FlavorGrants g = GrantsFor(*client, path, *share->options, false);
    if (g.failed) return negative(config_.failure_ttl);
    in.grants = std::move(g.grants);
    Answer walked = g.walked;
    std::optional<FsIdentity> id = IdentityOf(path);
    if (!id.has_value()) return negative(config_.failure_ttl);
    in.uuid = id->uuid;
    std::optional<ExportEntry> e = ShareExport(in, config_.features);
    if (e.has_value()) {
      walked.line =
          ExportDowncall(domain, path, Expiry(config_.positive_ttl), *e);
      walked.recheck = true;
      return walked;
    }
    // A share the client may not use that lies above one it may (a
    // parent dataset) is still a way through for NFSv4: a pseudo dir.
    if (!tree_->IsAbove(path)) return negative(config_.negative_ttl);
  }

  if (path == "/" || tree_->IsAbove(path)) {
    bool failed = false;
    const bool visible = tree_->AnyShareBelow(path, [&](const std::string& s) {
      std::optional<libshare::ShareMatch> m = catalog_->FindNearest(s);
      if (!m.has_value() || !m->exact) return false;
      FlavorGrants g = GrantsFor(*client, s, *m->options, true);
      failed |= g.failed;
      return !g.grants.empty();
    });
    if (!visible) {
      return negative(failed ? config_.failure_ttl : config_.negative_ttl);
    }
    std::optional<FsIdentity> id = IdentityOf(path);
    if (!id.has_value()) return negative(config_.failure_ttl);
    Answer a;
    // rpc.mountd's uuid for a pseudo directory (v4root_create), so
    // handles stay valid across a switch between the two.
    a.line = ExportDowncall(
        domain, path, Expiry(config_.positive_ttl),
        PseudoExport(path == "/",
                     id->pseudo_uuid.value_or(PseudoRootUuid(path)),
                     config_.features));
    a.recheck = true;  // no walk here: only "no symlink component"
    return a;
  }
  return negative(config_.negative_ttl);
}

Answer Responder::Fh(const FhUpcall& u) const {
  std::optional<std::string> path;
  bool ready = true;
  if (u.fsid_type == kFsidNum) {
    if (u.fsid == FsidNumBytes(0)) path = "/";
  } else {
    ready = index_->WaitReady(config_.index_wait);
    path = index_->FindSettled(u.fsid_type, u.fsid, config_.update_wait);
  }
  // Before the start-up index is complete an unknown fsid may be a share
  // not indexed yet: a long negative would give mounted clients ESTALE
  // for a minute, so the kernel asks again soon.
  const int64_t expiry = Expiry(path    ? config_.positive_ttl
                                : ready ? config_.negative_ttl
                                        : config_.failure_ttl);
  return {FhDowncall(u.domain, u.fsid_type, u.fsid, expiry, path),
          !path.has_value()};
}

Answer Responder::Gid(const GidUpcall& u, GroupSource* groups) const {
  absl::StatusOr<std::vector<uint32_t>> g = groups->GroupsOf(u.uid);
  if (!g.ok()) {
    const absl::Duration ttl = absl::IsNotFound(g.status())
                                   ? config_.negative_ttl
                                   : config_.failure_ttl;
    return {GidDowncall(u.uid, Expiry(ttl), {}), true};
  }
  if (g->size() > kMaxGroups) g->resize(kMaxGroups);
  return {GidDowncall(u.uid, Expiry(config_.gid_ttl), *g), false};
}

}  // namespace sharemgrd::kernel

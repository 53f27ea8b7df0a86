// Working with parsed share_nfs options property by property (options.h):
// listing, per-property inheritance, removal, and the questions the
// daemon and the CLI ask of them (open to every client, root for every
// client, host bits in a network, no effect on the kernel server).
#include <algorithm>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "internal_text.h"
#include "libshare/options.h"
#include "options_internal.h"

namespace libshare {

std::vector<std::string> OptionsWithoutKernelEffect(const ShareOptions& o) {
  std::vector<std::string> out;
  for (const SecScope& s : o.scopes) {
    for (SecFlavor f : s.flavors) {
      if (f == SecFlavor::kDh) {
        out.push_back(absl::StrCat("sec=", std::string(SecFlavorName(f)),
                                   ": nfsd does not offer this flavor"));
      }
    }
    if (s.root_mapping.has_value()) {
      out.push_back(absl::StrCat(
          "root_mapping=", *s.root_mapping,
          ": nfsd cannot map root to another user; root is squashed to the "
          "anonymous user unless root= lists the client"));
    }
  }
  if (o.anon.has_value() && *o.anon < 0) {
    out.push_back(
        "anon=-1: nfsd cannot refuse unmapped users; they act as 65534");
  }
  if (o.nosuid) {
    out.push_back(
        "nosuid: nfsd has no per-export nosuid; clients must mount with "
        "nosuid");
  }
  if (o.nosub) {
    out.push_back(
        "nosub: applies to MOUNT only; NFSv4 clients can still reach "
        "subdirectories");
  }
  if (o.public_fh) out.push_back("public: nfsd has no WebNFS public handle");
  if (o.aclok) out.push_back("aclok: nfsd applies the file system's ACLs");
  if (o.index.has_value()) out.push_back("index=: no effect on nfsd");
  if (o.log) out.push_back("log: nfsd does not log accesses");
  if (o.window.has_value()) out.push_back("window=: applies to AUTH_DH only");
  return out;
}

// ---- Per-property inheritance (options.h).
namespace {

using internal::AppendList;
using internal::AppendWord;
using internal::Quote;
using internal::ScopeHasAccessOption;
using internal::ToAbsl;

std::string ScopeName(const SecScope& s) {
  std::string out = "sec=";
  for (std::size_t i = 0; i < s.flavors.size(); ++i) {
    if (i > 0) out.push_back(':');
    out.append(SecFlavorName(s.flavors[i]));
  }
  return out;
}

bool SameFlavors(const SecScope& a, const SecScope& b) {
  if (a.flavors.size() != b.flavors.size()) return false;
  for (SecFlavor f : a.flavors) {
    if (std::find(b.flavors.begin(), b.flavors.end(), f) == b.flavors.end()) {
      return false;
    }
  }
  return true;
}

bool SharesFlavor(const SecScope& a, const SecScope& b) {
  for (SecFlavor f : a.flavors) {
    if (std::find(b.flavors.begin(), b.flavors.end(), f) != b.flavors.end()) {
      return true;
    }
  }
  return false;
}

bool HasRw(const SecScope& s) { return s.rw_all || s.rw.has_value(); }
bool HasRo(const SecScope& s) { return s.ro_all || s.ro.has_value(); }

// `own`'s access properties over `into`'s (same flavors).
void InheritScope(const SecScope& own, SecScope* into) {
  if (HasRw(own)) {
    into->rw_all = own.rw_all;
    into->rw = own.rw;
    if (into->rw_all && into->ro_all && !HasRo(own)) into->ro_all = false;
  }
  if (HasRo(own)) {
    into->ro_all = own.ro_all;
    into->ro = own.ro;
    if (into->rw_all && into->ro_all && !HasRw(own)) into->rw_all = false;
  }
  if (own.root) into->root = own.root;
  if (own.none) into->none = own.none;
  if (own.root_mapping) into->root_mapping = own.root_mapping;
}

// A "*" entry that is not a deny: every client the list does not name
// before it ("-a:*" still opens to every other client).
bool FirstEntryIsEveryone(const std::optional<AccessList>& l) {
  if (!l) return false;
  for (const AccessEntry& e : l->entries) {
    if (e.kind == AccessEntry::Kind::kAny) return !e.deny;
  }
  return false;
}

constexpr std::string_view kScopedNames[] = {"rw", "ro", "root", "none",
                                             "root_mapping"};
}  // namespace

std::vector<OptionProperty> OptionProperties(const ShareOptions& o) {
  std::vector<OptionProperty> out;
  auto add = [&](std::string scope, std::string_view name, std::string text) {
    out.push_back({std::move(scope), std::string(name), std::move(text)});
  };
  for (const SecScope& s : o.scopes) {
    const std::string scope = ScopeName(s);
    if (HasRo(s)) {
      std::string t;
      if (s.ro_all) AppendWord(&t, "ro");
      AppendList(&t, "ro", s.ro);
      add(scope, "ro", std::move(t));
    }
    if (HasRw(s)) {
      std::string t;
      if (s.rw_all) AppendWord(&t, "rw");
      AppendList(&t, "rw", s.rw);
      add(scope, "rw", std::move(t));
    }
    if (s.root) add(scope, "root", "root=" + s.root->Canonical());
    if (s.none) add(scope, "none", "none=" + s.none->Canonical());
    if (s.root_mapping) {
      add(scope, "root_mapping",
          absl::StrCat("root_mapping=", *s.root_mapping));
    }
  }
  if (o.anon) add("", "anon", absl::StrCat("anon=", *o.anon));
  if (o.nosuid) add("", "nosuid", "nosuid");
  if (o.nosub) add("", "nosub", "nosub");
  if (o.nohide) add("", "nohide", "nohide");
  if (o.mountpoint) add("", "mountpoint", "mountpoint");
  if (o.public_fh) add("", "public", "public");
  if (o.aclok) add("", "aclok", "aclok");
  if (o.index) add("", "index", absl::StrCat("index=", *o.index));
  if (o.log)
    add("", "log", o.log_tag ? absl::StrCat("log=", *o.log_tag) : "log");
  if (o.window) add("", "window", absl::StrCat("window=", *o.window));
  return out;
}

ShareOptions InheritOptions(const ShareOptions& group,
                            const ShareOptions& own) {
  ShareOptions out = group;
  if (own.anon) out.anon = own.anon;
  out.nosuid = out.nosuid || own.nosuid;
  out.nosub = out.nosub || own.nosub;
  out.nohide = out.nohide || own.nohide;
  out.mountpoint = out.mountpoint || own.mountpoint;
  out.public_fh = out.public_fh || own.public_fh;
  out.aclok = out.aclok || own.aclok;
  if (own.index) out.index = own.index;
  if (own.log) {
    out.log = true;
    out.log_tag = own.log_tag;
  }
  if (own.window) out.window = own.window;

  bool writes_scope = false;
  for (const SecScope& s : own.scopes) {
    writes_scope = writes_scope || ScopeHasAccessOption(s);
  }
  if (!writes_scope) return out;
  // A group scope with no access option is a default, not a decision: a
  // share that writes scopes of its own does not inherit it.
  std::vector<SecScope> scopes;
  for (SecScope& g : out.scopes) {
    bool keep = ScopeHasAccessOption(g);
    for (const SecScope& s : own.scopes) {
      if (ScopeHasAccessOption(s) && SameFlavors(s, g)) keep = true;
    }
    if (keep) scopes.push_back(std::move(g));
  }
  for (const SecScope& s : own.scopes) {
    if (!ScopeHasAccessOption(s)) continue;
    auto same =
        std::find_if(scopes.begin(), scopes.end(),
                     [&](const SecScope& g) { return SameFlavors(s, g); });
    if (same != scopes.end()) {
      InheritScope(s, &*same);
      continue;
    }
    scopes.erase(
        std::remove_if(scopes.begin(), scopes.end(),
                       [&](const SecScope& g) { return SharesFlavor(s, g); }),
        scopes.end());
    scopes.push_back(s);
  }
  out.scopes = std::move(scopes);
  return out;
}

absl::StatusOr<ShareOptions> RemoveOptionProperty(const ShareOptions& options,
                                                  std::string_view name) {
  ShareOptions out = options;
  auto not_set = [&]() {
    return absl::NotFoundError(
        absl::StrCat("option ", Quote(name), ": not set"));
  };
  if (name.substr(0, 4) == "sec=") {
    absl::StatusOr<ShareOptions> probe =
        ParseOptions(absl::StrCat(ToAbsl(name), ",rw"));
    if (!probe.ok()) return probe.status();
    const SecScope& want = probe->scopes.back();
    auto it =
        std::find_if(out.scopes.begin(), out.scopes.end(),
                     [&](const SecScope& s) { return SameFlavors(s, want); });
    if (it == out.scopes.end()) return not_set();
    out.scopes.erase(it);
    if (out.scopes.empty()) {
      out.scopes.emplace_back().flavors.push_back(SecFlavor::kSys);
    }
    return out;
  }
  if (std::find(std::begin(kScopedNames), std::end(kScopedNames), name) !=
      std::end(kScopedNames)) {
    bool found = false;
    for (SecScope& s : out.scopes) {
      if (name == "rw" && HasRw(s)) {
        s.rw_all = false;
        s.rw.reset();
        found = true;
      } else if (name == "ro" && HasRo(s)) {
        s.ro_all = false;
        s.ro.reset();
        found = true;
      } else if (name == "root" && s.root) {
        s.root.reset();
        found = true;
      } else if (name == "none" && s.none) {
        s.none.reset();
        found = true;
      } else if (name == "root_mapping" && s.root_mapping) {
        s.root_mapping.reset();
        found = true;
      }
    }
    if (!found) return not_set();
    return out;
  }
  bool found = true;
  if (name == "anon") {
    found = out.anon.has_value();
    out.anon.reset();
  } else if (name == "nosuid") {
    found = std::exchange(out.nosuid, false);
  } else if (name == "nosub") {
    found = std::exchange(out.nosub, false);
  } else if (name == "nohide") {
    found = std::exchange(out.nohide, false);
  } else if (name == "mountpoint") {
    found = std::exchange(out.mountpoint, false);
  } else if (name == "public") {
    found = std::exchange(out.public_fh, false);
  } else if (name == "aclok") {
    found = std::exchange(out.aclok, false);
  } else if (name == "index") {
    found = out.index.has_value();
    out.index.reset();
  } else if (name == "log") {
    found = std::exchange(out.log, false);
    out.log_tag.reset();
  } else if (name == "window") {
    found = out.window.has_value();
    out.window.reset();
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "option ", Quote(name),
        ": no such property (a global one: anon, nosuid, nosub, nohide, "
        "mountpoint, public, aclok, index, log, window; an access one: rw, ro, "
        "root, "
        "none, root_mapping; or a scope: sec=MODE[:MODE]...)"));
  }
  if (!found) return not_set();
  return out;
}

bool OpensReadWriteToAll(const ShareOptions& o) {
  for (const SecScope& s : o.scopes) {
    if (FirstEntryIsEveryone(s.none)) continue;
    if (s.HasNoAccessOption() || s.rw_all || FirstEntryIsEveryone(s.rw)) {
      return true;
    }
  }
  return false;
}

std::vector<HostBitsEntry> NetworksWithHostBits(const ShareOptions& o) {
  std::vector<HostBitsEntry> out;
  for (const SecScope& s : o.scopes) {
    for (const std::optional<AccessList>* l :
         {&s.rw, &s.ro, &s.root, &s.none}) {
      if (!l->has_value()) continue;
      for (const AccessEntry& e : (*l)->entries) {
        if (e.kind != AccessEntry::Kind::kNetwork || e.prefix_len < 0) continue;
        const int bits = e.address.is_v4() ? 96 + e.prefix_len : e.prefix_len;
        AccessEntry network = e;
        network.deny = false;
        for (int i = 0; i < 16; ++i) {
          const int keep = std::clamp(bits - 8 * i, 0, 8);
          network.address.bytes[i] &= static_cast<uint8_t>(0xff00 >> keep);
        }
        if (network.address == e.address) continue;
        AccessEntry written = e;
        written.deny = false;
        HostBitsEntry h{written.Canonical(), network.Canonical()};
        if (std::none_of(out.begin(), out.end(), [&h](const HostBitsEntry& x) {
              return x.written == h.written;
            })) {
          out.push_back(std::move(h));
        }
      }
    }
  }
  return out;
}

bool GivesRootToAll(const ShareOptions& o) {
  for (const SecScope& s : o.scopes) {
    if (FirstEntryIsEveryone(s.none)) continue;
    if (FirstEntryIsEveryone(s.root)) return true;
  }
  return false;
}

}  // namespace libshare

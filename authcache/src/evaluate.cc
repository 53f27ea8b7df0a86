// Access-list evaluation, illumos mountd semantics (DESIGN.md, "Option
// grammar"). Decisions taken where DESIGN.md is silent are marked "Choice:".
#include "authcache/evaluate.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "internal/net_match.h"

namespace authcache {

using libshare::AccessEntry;
using libshare::AccessList;
using libshare::IpAddress;
using libshare::SecScope;

std::string_view AccessName(Access a) {
  switch (a) {
    case Access::kNone:
      return "none";
    case Access::kRo:
      return "ro";
    case Access::kRw:
      return "rw";
  }
  return "none";
}

namespace internal {

int PrefixFromTrailingZeros(const IpAddress& a) {
  // As illumos does for "@129.144": the mask covers every byte up to the
  // last non-zero one. Counted on the written family's bytes.
  const int first = a.is_v4() ? 12 : 0;
  int last_nonzero = first - 1;
  for (int i = first; i < 16; ++i) {
    if (a.bytes[i] != 0) last_nonzero = i;
  }
  return (last_nonzero - first + 1) * 8;
}

bool InWrittenNetwork(const IpAddress& client, const IpAddress& network,
                      int prefix_len_as_written) {
  const bool v4 = network.is_v4();
  if (v4 != client.is_v4()) return false;
  int len = prefix_len_as_written >= 0 ? prefix_len_as_written
                                       : PrefixFromTrailingZeros(network);
  if (v4) len += 96;
  if (len > 128) len = 128;
  return client.InNetwork(network, len);
}

}  // namespace internal

namespace {

// absl here is built without std::string_view as its string_view.
absl::string_view Sv(std::string_view s) { return {s.data(), s.size()}; }

// What evaluation has learnt about the client so far; names are fetched at
// most once, and only when an entry needs them.
class Evaluation {
 public:
  explicit Evaluation(ClientIdentity& client) : client_(client) {}

  // Outcome of matching one list.
  struct ListResult {
    bool in_list = false;
    const AccessEntry* entry = nullptr;  // the entry that decided, if any
    bool as_netgroup = false;
    absl::Status error;  // a lookup failed before the list decided
  };

  const IpAddress& address() const { return client_.address(); }

  ListResult Match(const AccessList& list) {
    ListResult r;
    // First pass: every entry in order, kName as a host name.
    for (const AccessEntry& e : list.entries) {
      absl::StatusOr<bool> m = MatchesDirectly(e);
      if (!m.ok()) {
        r.error = m.status();
        return r;
      }
      if (*m) {
        r.in_list = !e.deny;
        r.entry = &e;
        return r;
      }
    }
    // Second pass: kName entries as netgroups, in order.
    for (const AccessEntry& e : list.entries) {
      if (e.kind != AccessEntry::Kind::kName) continue;
      absl::StatusOr<bool> m = client_.InNetgroup(e.name);
      if (!m.ok()) {
        r.error = m.status();
        return r;
      }
      if (*m) {
        r.in_list = !e.deny;
        r.entry = &e;
        r.as_netgroup = true;
        return r;
      }
    }
    return r;
  }

 private:
  // Whether a forward-confirmed name of the client satisfies `wanted`.
  absl::StatusOr<bool> AnyName(absl::FunctionRef<bool(std::string_view)> wanted) {
    absl::StatusOr<std::vector<std::string>> n = client_.NamesMatching(wanted);
    if (!n.ok()) return n.status();
    return !n->empty();
  }

  absl::StatusOr<bool> MatchesDirectly(const AccessEntry& e) {
    using Kind = AccessEntry::Kind;
    const IpAddress& addr = client_.address();
    switch (e.kind) {
      case Kind::kAny:
        return true;
      case Kind::kAddress:
        return addr == e.address;
      case Kind::kNetwork:
        return internal::InWrittenNetwork(addr, e.address, e.prefix_len);
      case Kind::kNetworkName: {
        absl::StatusOr<std::optional<IpAddress>> net =
            client_.NetworkNamed(e.name);
        if (!net.ok()) return net.status();
        if (!net->has_value()) return false;
        return internal::InWrittenNetwork(addr, **net, e.prefix_len);
      }
      case Kind::kDomainSuffix: {
        absl::string_view suffix = e.name;
        if (absl::StartsWith(suffix, ".")) suffix.remove_prefix(1);
        return AnyName([suffix](std::string_view n) {
          return n.size() > suffix.size() &&
                 n[n.size() - suffix.size() - 1] == '.' &&
                 absl::EndsWithIgnoreCase(Sv(n), suffix);
        });
      }
      case Kind::kDotless:
        return AnyName([](std::string_view n) {
          return !n.empty() && n.find('.') == std::string_view::npos;
        });
      case Kind::kName:
        return AnyName([&e](std::string_view n) {
          return absl::EqualsIgnoreCase(Sv(n), e.name);
        });
    }
    return false;
  }

  ClientIdentity& client_;
};

Decision Make(Access access, std::string option, std::string entry,
              std::string reason) {
  Decision d;
  d.access = access;
  d.option = std::move(option);
  d.entry = std::move(entry);
  d.reason = std::move(reason);
  return d;
}

// Choice: a lookup failure met before a list has decided refuses access
// (fail closed) rather than skipping the entry: skipping a deny entry could
// grant, and skipping an entry of none= or of ro= under bare rw could too.
Decision Failed(absl::string_view option, const absl::Status& s) {
  Decision d = Make(Access::kNone, std::string(option), "",
                    absl::StrCat("name lookup failed while checking ", option,
                                 ": ", s.message()));
  d.lookup_failed = true;
  return d;
}

// The entry of list `option` that decided: its text is spelled once, for
// the decision and its reason (a cache miss pays for it).
Decision MatchedBy(Access access, absl::string_view option,
                   const Evaluation::ListResult& r,
                   absl::string_view tail = "") {
  std::string entry = r.entry->Canonical();
  std::string reason =
      absl::StrCat("client matched ", r.as_netgroup ? "netgroup " : "", entry,
                   " in ", option, tail);
  return Make(access, std::string(option), std::move(entry), std::move(reason));
}

Decision DecideAccess(const SecScope& scope, Evaluation& ev) {
  if (scope.none.has_value()) {
    Evaluation::ListResult r = ev.Match(*scope.none);
    if (!r.error.ok()) return Failed("none=", r.error);
    if (r.in_list) {
      return MatchedBy(Access::kNone, "none=", r, ": no access");
    }
  }
  if (scope.HasNoAccessOption()) {
    return Make(Access::kRw, "", "",
                "no rw or ro option: every client gets rw");
  }
  // A deny entry that decided a list, remembered for the reason if no other
  // list gives access.
  std::optional<std::pair<std::string, std::string>> denied;
  // The lists that gave nothing, as written ("rw=@192.168.0.0/16"), for a
  // reason that names them.
  std::vector<std::string> unmatched;
  auto note_deny = [&](const Evaluation::ListResult& r, const char* option,
                       const AccessList& list) {
    if (r.entry != nullptr && !r.in_list && !denied.has_value()) {
      denied.emplace(option, r.entry->Canonical());
    } else if (r.entry == nullptr) {
      unmatched.push_back(absl::StrCat(option, list.Canonical()));
    }
  };
  if (scope.rw.has_value()) {
    Evaluation::ListResult r = ev.Match(*scope.rw);
    if (!r.error.ok()) return Failed("rw=", r.error);
    if (r.in_list) {
      // rw beats ro, including bare ro ("ro,rw=LIST").
      return MatchedBy(Access::kRw, "rw=", r);
    }
    note_deny(r, "rw=", *scope.rw);
  }
  if (scope.rw_all) {
    // The one exception to "rw beats ro": bare rw with ro=LIST.
    if (scope.ro.has_value()) {
      Evaluation::ListResult r = ev.Match(*scope.ro);
      if (!r.error.ok()) return Failed("ro=", r.error);
      if (r.in_list) {
        return MatchedBy(Access::kRo, "ro=", r, " (ro= narrows bare rw)");
      }
    }
    return Make(Access::kRw, "rw", "", "bare rw: every client gets rw");
  }
  if (scope.ro.has_value()) {
    Evaluation::ListResult r = ev.Match(*scope.ro);
    if (!r.error.ok()) return Failed("ro=", r.error);
    if (r.in_list) {
      return MatchedBy(Access::kRo, "ro=", r);
    }
    note_deny(r, "ro=", *scope.ro);
  }
  if (scope.ro_all) {
    return Make(Access::kRo, "ro", "", "bare ro: every client gets ro");
  }
  const std::string who = ev.address().ToString();
  if (denied.has_value()) {
    return Make(
        Access::kNone, denied->first, denied->second,
        absl::StrCat(who, " matched ", denied->second, " in ", denied->first,
                     " (denied)",
                     unmatched.empty()
                         ? std::string(" and no other list")
                         : absl::StrCat(" and no entry of ",
                                        absl::StrJoin(unmatched, " or "))));
  }
  return Make(Access::kNone, "", "",
              absl::StrCat(who, " matches no entry of ",
                           absl::StrJoin(unmatched, " or ")));
}

}  // namespace

Decision Evaluate(const libshare::ShareOptions& opts, ClientIdentity& client,
                  libshare::SecFlavor flavor, uint32_t uid) {
  const SecScope* scope = opts.ScopeFor(flavor);
  if (scope == nullptr) {
    return Make(Access::kNone, "sec=", "",
                absl::StrCat("share is not offered with sec=",
                             Sv(libshare::SecFlavorName(flavor))));
  }
  Evaluation ev(client);
  Decision d = DecideAccess(*scope, ev);
  // root= matters only to AUTH_SYS uid 0 with some access; anyone else is
  // mapped to anon whatever root= says, so the list is not even consulted.
  if (d.access != Access::kNone && flavor == libshare::SecFlavor::kSys &&
      uid == 0 && scope->root.has_value()) {
    Evaluation::ListResult r = ev.Match(*scope->root);
    if (!r.error.ok()) {
      // Choice: access stands (it was decided without the failed lookup);
      // root is refused and the decision is cached only briefly.
      d.lookup_failed = true;
      absl::StrAppend(
          &d.reason, "; root refused: name lookup failed: ", r.error.message());
    } else if (r.in_list) {
      d.root = true;
      absl::StrAppend(&d.reason, "; uid 0 keeps root (",
                      r.as_netgroup ? "netgroup " : "", r.entry->Canonical(),
                      " in root=)");
    }
  }
  return d;
}

}  // namespace authcache

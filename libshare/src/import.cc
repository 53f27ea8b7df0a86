#include "libshare/import.h"

#include "import_common.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "libshare/fs_identity.h"
#include "libshare/options.h"
#include "libshare/path.h"
#include "libshare/spelling.h"

namespace libshare {

using import_internal::AddOpenWarnings;
using import_internal::ControlCharacterProblem;

int NetmaskToPrefix(const std::string& mask) {
  in_addr a{};
  if (inet_pton(AF_INET, mask.c_str(), &a) != 1) return -1;
  uint32_t m = ntohl(a.s_addr);
  int len = 0;
  while (len < 32 && (m & (0x80000000u >> len))) ++len;
  // Every bit after the first zero must be zero too.
  if (len < 32 && (m << len) != 0) return -1;
  return len;
}

namespace {

// ---------------------------------------------------------------- exports

struct ExportsLine {
  int line = 0;
  std::vector<std::string> tokens;
  std::string error;
};

// Splits exports(5) text into logical lines of tokens: "#" comments,
// backslash-newline continuation, "double quoted" text (the path), and
// \NNN octal escapes (exportfs writes a space in a path as \040).
std::vector<ExportsLine> SplitExports(const std::string& text) {
  std::vector<ExportsLine> out;
  ExportsLine cur;
  cur.line = 1;
  std::string tok;
  bool in_tok = false;
  bool in_quote = false;
  int line = 1;
  const auto end_tok = [&] {
    if (in_tok) cur.tokens.push_back(std::move(tok));
    tok.clear();
    in_tok = false;
  };
  const auto end_line = [&] {
    end_tok();
    if (in_quote) cur.error = "unterminated double quote";
    in_quote = false;
    if (!cur.tokens.empty() || !cur.error.empty())
      out.push_back(std::move(cur));
    cur = ExportsLine();
    cur.line = line;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' && i + 1 < text.size() && text[i + 1] == '\n') {
      ++i;
      ++line;
      continue;
    }
    if (c == '\n') {
      ++line;
      end_line();
      continue;
    }
    if (c == '\\' && i + 3 < text.size() && text[i + 1] >= '0' &&
        text[i + 1] <= '3' && text[i + 2] >= '0' && text[i + 2] <= '7' &&
        text[i + 3] >= '0' && text[i + 3] <= '7') {
      tok.push_back(static_cast<char>((text[i + 1] - '0') * 64 +
                                      (text[i + 2] - '0') * 8 +
                                      (text[i + 3] - '0')));
      in_tok = true;
      i += 3;
      continue;
    }
    if (c == '"') {
      in_quote = !in_quote;
      in_tok = true;
      continue;
    }
    if (!in_quote && c == '#' && !in_tok) {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
      continue;
    }
    if (!in_quote && (c == ' ' || c == '\t' || c == '\r')) {
      end_tok();
      continue;
    }
    tok.push_back(c);
    in_tok = true;
  }
  end_line();
  return out;
}

// The kinds of client specification, in the order rpc.mountd tries them
// (nfs-utils: the MCL_* types of support/include/exportfs.h, which
// lookup_export() and auth_authenticate_newcache() walk type by type, each
// type's entries in file order, the first match deciding). client_gettype()
// classifies: "" or "*" anyone, "gss/..." gss, "@..." netgroup, a '*', '?'
// or '[' a wildcard, a '/' a network, anything else (a host name or a
// single address) a host.
enum class LinuxType : uint8_t {
  kHost = 0,
  kNetwork = 1,
  kWildcard = 2,
  kNetgroup = 3,
  kAnyone = 4,
  kGss = 5,
};

LinuxType ClassifySpec(std::string_view spec) {
  if (spec.empty() || spec == "*") return LinuxType::kAnyone;
  if (spec.rfind("gss/", 0) == 0) return LinuxType::kGss;
  if (spec[0] == '@') return LinuxType::kNetgroup;
  for (size_t i = 0; i < spec.size(); ++i) {
    char c = spec[i];
    if (c == '*' || c == '?' || c == '[') return LinuxType::kWildcard;
    if (c == '/') return LinuxType::kNetwork;
    if (c == '\\' && i + 1 < spec.size()) ++i;
  }
  return LinuxType::kHost;
}

// The per-flavor flags of exports(5) (NFSEXP_READONLY, _ROOTSQUASH,
// _ALLSQUASH), with their defaults (ro, root_squash, no_all_squash).
struct FlavorFlags {
  bool ro = true;
  bool root_squash = true;
  bool all_squash = false;
};

struct ExportsFlavor {
  SecFlavor flavor;
  FlavorFlags flags;
};

// What nfs-utils' parseopts() builds for one client: export-wide flags,
// the sec= flavors each with its own flags (a flavor takes the export
// flags of the moment it is named; later flag options change the flavors
// of the latest sec= only, and the export flags), and the anonymous ids.
struct ClientOptions {
  FlavorFlags flags;
  std::vector<ExportsFlavor> secinfo;
  int64_t anonuid = 65534;
  int64_t anongid = 65534;
  bool nohide = false;
  bool mountpoint = false;      // mountpoint or mp
  std::string mountpoint_path;  // its value, if given
  std::string uuid;             // uuid=, as written ("" if not given)
};

struct Client {
  std::string spec;   // as written ("10.1.0.0/16", "@eng", "*")
  std::string where;  // "FILE:LINE"
  LinuxType type = LinuxType::kHost;
  std::string entry;  // share_nfs list entry; empty if none exists
  std::optional<AccessEntry> parsed;   // entry, parsed
  std::string no_entry_why;            // when entry is empty
  std::vector<ExportsFlavor> flavors;  // never empty
  int64_t anonuid = 65534;
  int64_t anongid = 65534;
  bool nohide = false;
  bool mountpoint = false;
  std::string mountpoint_path;
  std::string uuid;  // uuid=, as written

  const FlavorFlags* FlagsFor(SecFlavor f) const {
    for (const ExportsFlavor& x : flavors) {
      if (x.flavor == f) return &x.flags;
    }
    return nullptr;
  }
};

struct ExportedPath {
  std::string path;
  std::string where;  // first line
  std::vector<Client> clients;
};

bool HasWildcard(std::string_view s) {
  return s.find_first_of("*?[") != std::string_view::npos;
}

// The share_nfs entry for an exports(5) client spec. Sets *unsupported
// when the spec has no equivalent.
absl::StatusOr<std::string> ClientEntry(const std::string& spec,
                                        bool* unsupported) {
  *unsupported = false;
  if (spec == "*") return spec;
  if (spec[0] == '@') {
    if (spec.size() == 1) {
      return absl::InvalidArgumentError("empty netgroup name \"@\"");
    }
    return spec.substr(1);
  }
  if (spec.rfind("gss/", 0) == 0) {
    *unsupported = true;
    return absl::InvalidArgumentError(
        absl::StrCat("client \"", spec,
                     "\" (gss/ pseudo-client) has no share_nfs "
                     "equivalent; use sec="));
  }
  if (HasWildcard(spec)) {
    if (spec.rfind("*.", 0) == 0 && !HasWildcard(spec.substr(2)) &&
        spec.size() > 2) {
      return absl::AsciiStrToLower(spec.substr(1));
    }
    *unsupported = true;
    return absl::InvalidArgumentError(
        absl::StrCat("client \"", spec,
                     "\": wildcard has no share_nfs equivalent (only *.DOMAIN "
                     "and * have one)"));
  }
  if (size_t slash = spec.find('/'); slash != std::string::npos) {
    std::string addr = spec.substr(0, slash);
    std::string mask = spec.substr(slash + 1);
    in_addr a4{};
    in6_addr a6{};
    int len = -1;
    if (inet_pton(AF_INET, addr.c_str(), &a4) == 1) {
      if (!absl::SimpleAtoi(mask, &len) || len < 0 || len > 32) {
        len = NetmaskToPrefix(mask);
      }
      if (len < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("network \"", spec, "\": bad mask \"", mask, "\""));
      }
      uint32_t host = ntohl(a4.s_addr);
      if (len < 32) host &= len == 0 ? 0 : ~((1u << (32 - len)) - 1);
      a4.s_addr = htonl(host);
      char buf[INET_ADDRSTRLEN];
      inet_ntop(AF_INET, &a4, buf, sizeof buf);
      return absl::StrCat("@", buf, "/", len);
    }
    if (inet_pton(AF_INET6, addr.c_str(), &a6) == 1) {
      if (!absl::SimpleAtoi(mask, &len) || len < 0 || len > 128) {
        return absl::InvalidArgumentError(
            absl::StrCat("network \"", spec, "\": bad prefix \"", mask, "\""));
      }
      return absl::StrCat("@[", addr, "]/", len);
    }
    return absl::InvalidArgumentError(
        absl::StrCat("network \"", spec, "\": bad address \"", addr, "\""));
  }
  in6_addr a6{};
  if (spec.find(':') != std::string::npos &&
      inet_pton(AF_INET6, spec.c_str(), &a6) == 1) {
    // ":" separates list entries, so an IPv6 host is written as a /128.
    return absl::StrCat("@[", spec, "]/128");
  }
  return spec;
}

// The share_nfs kinds that say what an exports(5) client type says: an
// entry that parsed as another kind (a netgroup named like an address) would
// match other clients.
bool KindFits(LinuxType type, AccessEntry::Kind kind) {
  using Kind = AccessEntry::Kind;
  switch (type) {
    case LinuxType::kHost:
      return kind == Kind::kName || kind == Kind::kAddress ||
             kind == Kind::kNetwork;  // an IPv6 host, as a /128
    case LinuxType::kNetwork:
      return kind == Kind::kNetwork;
    case LinuxType::kWildcard:
      return kind == Kind::kDomainSuffix;
    case LinuxType::kNetgroup:
      return kind == Kind::kName;
    case LinuxType::kAnyone:
      return kind == Kind::kAny;
    case LinuxType::kGss:
      return false;
  }
  return false;
}

// Options of exports(5) that change nothing in share_nfs terms (they tune
// the Linux server, or repeat its default).
constexpr absl::string_view kHarmless[] = {
    "sync",      "async",         "wdelay",
    "no_wdelay", "subtree_check", "no_subtree_check",
    "secure",    "secure_locks",  "auth_nlm",
    "acl",       "no_acl",        "nocrossmnt"};
bool IsHarmlessOption(absl::string_view name) {
  return std::find(std::begin(kHarmless), std::end(kHarmless), name) !=
         std::end(kHarmless);
}

// fsid= and uuid= decide the file handles the kernel gives out (sharemgr's
// kernel mode takes the file system's uuid, as rpc.mountd does without
// them): dropping them breaks the handles mounted clients hold, and
// fsid=0 (or root) also moves the NFSv4 root. Narrows access only, so
// skippable, with what the switch costs.
std::string FileHandleOptionMessage(absl::string_view option,
                                    absl::string_view name,
                                    absl::string_view value) {
  std::string m = absl::StrCat(
      "option \"", option,
      "\" has no share_nfs equivalent: it decides the kernel's file handles "
      "for the share, so clients that have it mounted get stale handles "
      "(ESTALE) after the switch and must remount");
  if (name == "fsid" && (value == "0" || value == "root")) {
    absl::StrAppend(&m,
                    "; it also makes the share the NFSv4 root, so NFSv4 "
                    "clients' paths change");
  }
  return m;
}

// Options without an equivalent whose loss only narrows access: with
// --skip-unsupported they are dropped. Why each has no equivalent.
const std::map<absl::string_view, absl::string_view>& UnsupportedOptions() {
  static const auto* kUnsupported =
      new std::map<absl::string_view, absl::string_view>{
          {"insecure", " (sharemgrd --insecure is server-wide)"},
          {"crossmnt", ""},
          {"insecure_locks", ""},
          {"no_auth_nlm", ""},
          {"pnfs", ""},
          {"no_pnfs", ""},
          {"security_label", ""},
          {"nordirplus", ""},
      };
  return *kUnsupported;
}
std::optional<absl::string_view> UnsupportedReason(absl::string_view name) {
  const std::map<absl::string_view, absl::string_view>& unsupported =
      UnsupportedOptions();
  auto it = unsupported.find(name);
  if (it == unsupported.end()) return std::nullopt;
  return it->second;
}

// Options without an equivalent whose loss would widen access: always
// refused. Why.
std::optional<absl::string_view> WideningReason(absl::string_view name) {
  static const std::map<absl::string_view, absl::string_view> kWidening = {
      {"refer", "sharemgr would serve the local directory, not a referral"},
      {"replicas", "sharemgr would serve the local directory, not a referral"},
  };
  auto it = kWidening.find(name);
  if (it == kWidening.end()) return std::nullopt;
  return it->second;
}

// Every option name ApplyClientOptions knows, for a suggestion after an
// unknown one.
const std::vector<std::string_view>& KnownExportsOptions() {
  static const auto* kKnown = [] {
    auto* v = new std::vector<std::string_view>{"rw",          "ro",
                                                "root_squash", "no_root_squash",
                                                "all_squash",  "no_all_squash",
                                                "anonuid",     "anongid",
                                                "sec",         "nohide",
                                                "hide",        "mountpoint",
                                                "mp",          "xprtsec",
                                                "fsid",        "uuid",
                                                "refer",       "replicas"};
    for (absl::string_view h : kHarmless) v->emplace_back(h.data(), h.size());
    for (const auto& [name, why] : UnsupportedOptions()) {
      v->emplace_back(name.data(), name.size());
    }
    return v;
  }();
  return *kKnown;
}

struct LineProblems {
  std::string where;
  std::vector<ImportProblem>* out;
  std::vector<std::string> seen;  // one report per message per line

  void Add(std::string message, bool unsupported) {
    if (std::find(seen.begin(), seen.end(), message) != seen.end()) return;
    seen.push_back(message);
    out->push_back({where, std::move(message), unsupported});
  }
};

// exports(5) anonuid=/anongid=: a C int, as the kernel reads it (-2 is
// 4294967294). 4294967295 (-1) is no id.
std::optional<int64_t> ParseAnonId(absl::string_view v) {
  int64_t id;
  if (!absl::SimpleAtoi(v, &id)) return std::nullopt;
  if (id < 0 && id >= -2147483648LL) id += 4294967296LL;
  if (id < 0 || id > 4294967294LL) return std::nullopt;
  return id;
}

std::optional<SecFlavor> LinuxFlavor(absl::string_view name) {
  // nfs-utils' flav_map: "unix" is sys, "null" is none.
  if (name == "sys" || name == "unix") return SecFlavor::kSys;
  if (name == "none" || name == "null") return SecFlavor::kNone;
  if (name == "krb5") return SecFlavor::kKrb5;
  if (name == "krb5i") return SecFlavor::kKrb5i;
  if (name == "krb5p") return SecFlavor::kKrb5p;
  return std::nullopt;
}

// nfs-utils' parseopts() over one option list, onto *c.
void ApplyClientOptions(absl::string_view opts, ClientOptions* c,
                        LineProblems* p) {
  std::vector<size_t> active;  // secinfo indexes of the latest sec=
  const auto set = [&](bool FlavorFlags::*flag, bool value) {
    c->flags.*flag = value;
    for (size_t i : active) c->secinfo[i].flags.*flag = value;
  };
  for (absl::string_view o : absl::StrSplit(opts, ',', absl::SkipEmpty())) {
    absl::string_view name = o;
    absl::string_view value;
    bool has_value = false;
    if (size_t eq = o.find('='); eq != absl::string_view::npos) {
      name = o.substr(0, eq);
      value = o.substr(eq + 1);
      has_value = true;
    }
    if (name == "rw" && !has_value) {
      set(&FlavorFlags::ro, false);
    } else if (name == "ro" && !has_value) {
      set(&FlavorFlags::ro, true);
    } else if (name == "no_root_squash" && !has_value) {
      set(&FlavorFlags::root_squash, false);
    } else if (name == "root_squash" && !has_value) {
      set(&FlavorFlags::root_squash, true);
    } else if (name == "all_squash" && !has_value) {
      set(&FlavorFlags::all_squash, true);
    } else if (name == "no_all_squash" && !has_value) {
      set(&FlavorFlags::all_squash, false);
    } else if (name == "anonuid" || name == "anongid") {
      std::optional<int64_t> id = ParseAnonId(value);
      if (!id) {
        p->Add(absl::StrCat("option \"", o, "\": bad ",
                            name == "anonuid" ? "user" : "group", " id"),
               false);
      } else {
        (name == "anonuid" ? c->anonuid : c->anongid) = *id;
      }
    } else if (name == "sec") {
      std::vector<size_t> now;
      bool ok = !value.empty();
      for (absl::string_view m : absl::StrSplit(value, ':')) {
        std::optional<SecFlavor> f = LinuxFlavor(m);
        if (!f) {
          // rpc.mountd refuses the entry too.
          p->Add(absl::StrCat("option \"", o, "\": unknown security flavor \"",
                              m, "\""),
                 false);
          ok = false;
          continue;
        }
        size_t i = 0;
        while (i < c->secinfo.size() && c->secinfo[i].flavor != *f) ++i;
        if (i == c->secinfo.size()) c->secinfo.push_back({*f, c->flags});
        now.push_back(i);
      }
      if (ok) active = std::move(now);
    } else if (name == "nohide" && !has_value) {
      c->nohide = true;
    } else if (name == "hide" && !has_value) {
      c->nohide = false;
    } else if (name == "mountpoint" || name == "mp") {
      // Exported only while a file system is mounted there: share_nfs
      // extended with the same option (sharemgrd.8).
      c->mountpoint = true;
      c->mountpoint_path = std::string(value);
    } else if (name == "xprtsec") {
      bool allows_plain = false;
      for (absl::string_view m : absl::StrSplit(value, ':')) {
        allows_plain |= m == "none";
      }
      p->Add(absl::StrCat("option \"", o, "\" has no share_nfs equivalent",
                          allows_plain ? ""
                                       : " and dropping it would admit clients "
                                         "without TLS: refusing"),
             allows_plain);
    } else if (name == "uuid" && has_value &&
               absl::c_any_of(value, [](char ch) {
                 return absl::ascii_isxdigit(static_cast<unsigned char>(ch));
               })) {
      // Recorded as the share's file-system identity (fs_identity.h): the
      // kernel mode answers it as rpc.mountd did, so handles stay valid.
      c->uuid = std::string(value);
    } else if ((name == "fsid" || name == "uuid") && has_value) {
      p->Add(FileHandleOptionMessage(o, name, value), true);
    } else if (IsHarmlessOption(name)) {
      // Nothing to carry over.
    } else if (auto why = UnsupportedReason(name)) {
      p->Add(
          absl::StrCat("option \"", o, "\" has no share_nfs equivalent", *why),
          true);
    } else if (auto widening = WideningReason(name)) {
      p->Add(absl::StrCat("option \"", o, "\": ", *widening, ": refusing"),
             false);
    } else {
      p->Add(
          absl::StrCat("option \"", o, "\": unknown exports option",
                       DidYouMean(std::string_view(name.data(), name.size()),
                                  KnownExportsOptions(), has_value ? "=" : "")),
          false);
    }
  }
}

// ---- translation of one path's clients into share_nfs options

enum class Grant : uint8_t { kNone, kRo, kRw };

Grant GrantFor(const Client& c, SecFlavor f) {
  const FlavorFlags* fl = c.FlagsFor(f);
  if (fl == nullptr) return Grant::kNone;
  return fl->ro ? Grant::kRo : Grant::kRw;
}

// True if some client could match both entries. Only addresses and
// networks are known not to overlap; names, domains, netgroups could be
// anyone.
bool MayOverlap(const AccessEntry& a, const AccessEntry& b) {
  using Kind = AccessEntry::Kind;
  const auto as_net = [](const AccessEntry& e, IpAddress* n, int* len) {
    if (e.kind == Kind::kAddress) {
      *n = e.address;
      *len = 128;
      return true;
    }
    if (e.kind == Kind::kNetwork && e.prefix_len >= 0) {
      *n = e.address;
      *len = e.address.is_v4() ? 96 + e.prefix_len : e.prefix_len;
      return true;
    }
    return false;
  };
  IpAddress na, nb;
  int la = 0, lb = 0;
  if (!as_net(a, &na, &la) || !as_net(b, &nb, &lb)) return true;
  if (na.is_v4() != nb.is_v4()) return false;
  return na.InNetwork(nb, std::min(la, lb));
}

// One share_nfs list in rpc.mountd's order: `verdict` says for each client
// whether it is listed (allow), denied (so that the clients it decides
// stop here, as they stop at it in rpc.mountd) or left out (its clients
// never consult this list). A deny that no later allowed entry could
// overlap changes nothing and is left out.
enum class Verdict : uint8_t { kAllow, kDeny, kOmit };

std::string BuildList(const std::vector<const Client*>& order,
                      const std::function<Verdict(const Client&)>& verdict) {
  std::vector<std::pair<const Client*, bool>> items;  // client, allowed
  for (const Client* c : order) {
    Verdict v = verdict(*c);
    if (v != Verdict::kOmit) items.emplace_back(c, v == Verdict::kAllow);
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].second) {
      out.push_back(items[i].first->entry);
      continue;
    }
    bool needed = false;
    for (size_t j = i + 1; j < items.size() && !needed; ++j) {
      needed = items[j].second &&
               MayOverlap(*items[i].first->parsed, *items[j].first->parsed);
    }
    if (needed) out.push_back(absl::StrCat("-", items[i].first->entry));
  }
  return absl::StrJoin(out, ":");
}

std::string Show(const Client& c) {
  return absl::StrCat("\"", c.spec, "\" (", c.where, ")");
}

std::string AnonText(const Client& c) {
  return absl::StrCat("anonuid=", c.anonuid, ",anongid=", c.anongid);
}

// The problems of one path's translation. One that is not merely
// unsupported refuses the path: BuildShareOptions then gives no options.
class PathProblems {
 public:
  explicit PathProblems(std::vector<ImportProblem>* out) : out_(out) {}

  void Add(const std::string& where, std::string message, bool unsupported) {
    out_->push_back({where, std::move(message), unsupported});
    refused_ |= !unsupported;
  }
  bool refused() const { return refused_; }

 private:
  std::vector<ImportProblem>* out_;
  bool refused_ = false;
};

// The clients with a share_nfs entry in rpc.mountd's order: by type, then
// file order. A client without an equivalent can be dropped only if no
// client after it could catch its hosts: they then get no access, which
// is less.
std::vector<const Client*> MountdOrder(const ExportedPath& e,
                                       PathProblems* problems) {
  std::vector<const Client*> all;
  for (const Client& c : e.clients) all.push_back(&c);
  std::stable_sort(
      all.begin(), all.end(),
      [](const Client* a, const Client* b) { return a->type < b->type; });
  std::vector<const Client*> order;
  for (size_t i = 0; i < all.size(); ++i) {
    const Client& c = *all[i];
    if (!c.entry.empty()) {
      order.push_back(&c);
      continue;
    }
    const Client* next = nullptr;
    for (size_t j = i + 1; j < all.size() && next == nullptr; ++j) {
      if (all[j]->type != LinuxType::kGss) next = all[j];
    }
    if (next == nullptr) {
      problems->Add(c.where, c.no_entry_why, true);
    } else {
      problems->Add(
          c.where,
          absl::StrCat(c.no_entry_why, ", and without it its hosts would ",
                       "fall through to ", Show(*next), ": refusing"),
          false);
    }
  }
  return order;
}

// all_squash has no equivalent; no_root_squash is kept for sec=sys only.
void CheckSquashing(const std::vector<const Client*>& order,
                    PathProblems* problems) {
  for (const Client* c : order) {
    for (const ExportsFlavor& f : c->flavors) {
      if (f.flags.all_squash) {
        problems->Add(
            c->where,
            absl::StrCat("all_squash for \"", c->spec,
                         "\" has no sharemgr equivalent (its users would "
                         "keep their own ids): refusing"),
            false);
        break;
      }
    }
    for (const ExportsFlavor& f : c->flavors) {
      if (f.flavor != SecFlavor::kSys && f.flavor != SecFlavor::kNone &&
          !f.flags.root_squash) {
        problems->Add(
            c->where,
            absl::StrCat("no_root_squash for \"", c->spec,
                         "\" under sec=", std::string(SecFlavorName(f.flavor)),
                         ": sharemgr keeps root for sec=sys only; root "
                         "would be squashed"),
            true);
      }
    }
  }
}

// anon= is one pair of ids for the whole share (the kernel mode sets
// anonuid and anongid both to it); every client whose users can be
// squashed must map them to that pair. The share's anon= value, or none
// when it is the default (or refused).
std::optional<int64_t> SharedAnon(const std::vector<const Client*>& order,
                                  PathProblems* problems) {
  const Client* anon_from = nullptr;
  for (const Client* c : order) {
    bool squashes = false;
    for (const ExportsFlavor& f : c->flavors) {
      squashes |= f.flavor == SecFlavor::kNone || f.flags.root_squash;
    }
    if (!squashes) continue;
    if (anon_from == nullptr) {
      anon_from = c;
      continue;
    }
    if (c->anonuid == anon_from->anonuid && c->anongid == anon_from->anongid) {
      continue;
    }
    const bool from_default =
        anon_from->anonuid == 65534 && anon_from->anongid == 65534;
    const Client& odd = from_default ? *c : *anon_from;
    const Client& other = from_default ? *anon_from : *c;
    std::string what = odd.anonuid != other.anonuid
                           ? absl::StrCat("anonuid=", odd.anonuid)
                           : absl::StrCat("anongid=", odd.anongid);
    problems->Add(
        odd.where,
        absl::StrCat(what, " applies to ", odd.spec, " only (", other.spec,
                     " has ", AnonText(other),
                     "); sharemgr's anon= is per share: refusing (split "
                     "the share or use one anonuid)"),
        false);
    anon_from = nullptr;
    break;
  }
  std::optional<int64_t> anon;
  if (anon_from != nullptr &&
      (anon_from->anonuid != 65534 || anon_from->anongid != 65534)) {
    if (anon_from->anonuid != anon_from->anongid) {
      problems->Add(
          anon_from->where,
          absl::StrCat(AnonText(*anon_from), " for ", anon_from->spec,
                       ": sharemgr's anon= maps squashed users to one id "
                       "as user and group: refusing (give anonuid and "
                       "anongid the same value)"),
          false);
    } else {
      anon = anon_from->anonuid;
    }
  }
  return anon;
}

// The flavors in the order clients name them.
std::vector<SecFlavor> FlavorsInOrder(const std::vector<const Client*>& order) {
  std::vector<SecFlavor> flavors;
  for (const Client* c : order) {
    for (const ExportsFlavor& f : c->flavors) {
      if (std::find(flavors.begin(), flavors.end(), f.flavor) ==
          flavors.end()) {
        flavors.push_back(f.flavor);
      }
    }
  }
  return flavors;
}

// The access options of flavor `f`'s scope (see DESIGN.md, "Option
// grammar": none= first, then rw=, then bare rw with ro=, or ro=, then
// bare ro), for the clients `listed` before the "*" client `star` (or
// nullptr).
std::vector<std::string> AccessParts(const std::vector<const Client*>& listed,
                                     const Client* star, SecFlavor f) {
  const Grant star_grant = star ? GrantFor(*star, f) : Grant::kNone;
  std::vector<std::string> parts;
  if (star_grant != Grant::kNone) {
    std::string none = BuildList(listed, [&](const Client& c) {
      return GrantFor(c, f) == Grant::kNone ? Verdict::kAllow : Verdict::kDeny;
    });
    if (!none.empty()) parts.push_back(absl::StrCat("none=", none));
  }
  if (star_grant == Grant::kRw) {
    parts.push_back("rw");
    std::string ro = BuildList(listed, [&](const Client& c) {
      Grant g = GrantFor(c, f);
      return g == Grant::kRo   ? Verdict::kAllow
             : g == Grant::kRw ? Verdict::kDeny
                               : Verdict::kOmit;
    });
    if (!ro.empty()) parts.push_back(absl::StrCat("ro=", ro));
  } else if (star_grant == Grant::kRo) {
    parts.push_back("ro");
    std::string rw = BuildList(listed, [&](const Client& c) {
      Grant g = GrantFor(c, f);
      return g == Grant::kRw   ? Verdict::kAllow
             : g == Grant::kRo ? Verdict::kDeny
                               : Verdict::kOmit;
    });
    if (!rw.empty()) parts.push_back(absl::StrCat("rw=", rw));
  } else {
    std::string rw = BuildList(listed, [&](const Client& c) {
      return GrantFor(c, f) == Grant::kRw ? Verdict::kAllow : Verdict::kDeny;
    });
    std::string ro = BuildList(listed, [&](const Client& c) {
      Grant g = GrantFor(c, f);
      return g == Grant::kRo     ? Verdict::kAllow
             : g == Grant::kNone ? Verdict::kDeny
                                 : Verdict::kOmit;
    });
    if (!rw.empty()) parts.push_back(absl::StrCat("rw=", rw));
    if (!ro.empty()) parts.push_back(absl::StrCat("ro=", ro));
  }
  return parts;
}

// The sec=sys root= list (empty for none). A netgroup that squashes root
// cannot be written when "*" keeps it: share_nfs tries netgroups after
// "*" in root=.
std::string SysRootList(const std::vector<const Client*>& order,
                        const Client* star,
                        const std::vector<const Client*>& netgroups,
                        PathProblems* problems) {
  const SecFlavor f = SecFlavor::kSys;
  const auto keeps_root = [&](const Client& c) {
    const FlavorFlags* fl = c.FlagsFor(f);
    return fl != nullptr && !fl->root_squash;
  };
  std::string root = BuildList(order, [&](const Client& c) {
    return keeps_root(c) ? Verdict::kAllow : Verdict::kDeny;
  });
  if (star != nullptr && keeps_root(*star)) {
    for (const Client* g : netgroups) {
      if (GrantFor(*g, f) != Grant::kNone && !keeps_root(*g)) {
        problems->Add(g->where,
                      absl::StrCat("\"", g->spec,
                                   "\" squashes root but \"*\" (", star->where,
                                   ") keeps it, and share_nfs "
                                   "tries netgroups after \"*\" in root=: "
                                   "refusing (list the netgroup's hosts, or "
                                   "give \"*\" root_squash)"),
                      false);
        break;
      }
    }
  }
  return root;
}

// One scope's options per flavor a client gets, in the order clients name
// the flavors. Netgroup entries are tried after every other entry, as
// rpc.mountd tries netgroups after hosts, networks and wildcards; "*" is
// never put in a list before them.
std::vector<std::pair<SecFlavor, std::string>> BuildScopes(
    const std::vector<const Client*>& order, PathProblems* problems) {
  const Client* star =
      order.back()->type == LinuxType::kAnyone ? order.back() : nullptr;
  std::vector<const Client*> listed = order;
  if (star != nullptr) listed.pop_back();
  std::vector<const Client*> netgroups;
  for (const Client* c : listed) {
    if (c->type == LinuxType::kNetgroup) netgroups.push_back(c);
  }
  std::vector<std::pair<SecFlavor, std::string>> scopes;
  for (SecFlavor f : FlavorsInOrder(order)) {
    std::vector<std::string> parts = AccessParts(listed, star, f);
    if (parts.empty()) continue;  // no client gets this flavor
    if (f == SecFlavor::kSys) {
      std::string root = SysRootList(order, star, netgroups, problems);
      if (!root.empty()) parts.push_back(absl::StrCat("root=", root));
    }
    scopes.emplace_back(f, absl::StrJoin(parts, ","));
  }
  return scopes;
}

// The scopes as option words: a lone sec=sys scope without its "sec=";
// otherwise neighbouring flavors with the same options share one sec=.
std::vector<std::string> ScopeWords(
    const std::vector<std::pair<SecFlavor, std::string>>& scopes) {
  std::vector<std::string> text;
  if (scopes.size() == 1 && scopes[0].first == SecFlavor::kSys) {
    text.push_back(scopes[0].second);
    return text;
  }
  for (size_t i = 0; i < scopes.size();) {
    size_t j = i;
    std::vector<std::string> names;
    while (j < scopes.size() && scopes[j].second == scopes[i].second) {
      names.emplace_back(SecFlavorName(scopes[j].first));
      ++j;
    }
    text.push_back(
        absl::StrCat("sec=", absl::StrJoin(names, ":"), ",", scopes[i].second));
    i = j;
  }
  return text;
}

// uuid=: recorded as the share's file-system identity. One per share: the
// clients of a path that give it must give the same one (folded as
// rpc.mountd folds it), and a client without it would get the live uuid
// from rpc.mountd, which sharemgr answers for none of them once one is
// recorded: refused (skippable: the share is then added without it).
std::optional<std::string> RecordedIdentity(
    const ExportedPath& e, std::vector<ImportProblem>* problems) {
  const Client* first = nullptr;
  size_t with = 0;
  for (const Client& c : e.clients) {
    if (c.uuid.empty()) continue;
    ++with;
    if (first == nullptr) {
      first = &c;
    } else if (FoldUuidText(c.uuid) != FoldUuidText(first->uuid)) {
      problems->push_back(
          {c.where,
           absl::StrCat(e.path, ": clients give different uuid= (",
                        first->uuid, ", ", c.uuid,
                        "); sharemgr records one per share"),
           false});
      return std::nullopt;
    }
  }
  if (first == nullptr) return std::string();
  if (with < e.clients.size()) {
    problems->push_back(
        {e.where,
         absl::StrCat(e.path, ": option \"uuid=", first->uuid,
                      "\" is given for some clients only: sharemgr records "
                      "one identity per share, for every client"),
         true});
  }
  return FormatFsIdentity(FoldUuidText(first->uuid));
}

// mountpoint: sharemgr's is per share and checks the share's own path.
// Appends "mountpoint" to *text when a client has it; false when a
// client's mountpoint= names another path (the path is refused).
bool AddMountpoint(const ExportedPath& e,
                   const std::vector<const Client*>& order,
                   PathProblems* problems, std::vector<std::string>* text) {
  size_t with_mountpoint = 0;
  for (const Client* c : order) {
    if (!c->mountpoint) continue;
    ++with_mountpoint;
    if (!c->mountpoint_path.empty() && c->mountpoint_path != e.path) {
      problems->Add(
          c->where,
          absl::StrCat("option \"mountpoint=", c->mountpoint_path, "\" of ",
                       e.path,
                       ": sharemgr's mountpoint checks the share's own "
                       "path only: refusing"),
          false);
      return false;
    }
  }
  if (with_mountpoint > 0) {
    if (with_mountpoint < order.size()) {
      problems->Add(
          e.where,
          absl::StrCat(e.path,
                       ": option \"mountpoint\" is given for some "
                       "clients only; sharemgr's is per share, so every "
                       "client is refused while nothing is mounted there"),
          true);
    }
    text->push_back("mountpoint");
  }
  return true;
}

// The share_nfs options that give every client what rpc.mountd would give
// it, or nothing (with a problem naming why) when sharemgr cannot say it.
std::optional<std::string> BuildShareOptions(const ExportedPath& e,
                                             std::vector<ImportProblem>* out) {
  PathProblems problems(out);
  const std::vector<const Client*> order = MountdOrder(e, &problems);
  if (order.empty()) return std::nullopt;
  CheckSquashing(order, &problems);
  const std::optional<int64_t> anon = SharedAnon(order, &problems);
  const std::vector<std::pair<SecFlavor, std::string>> scopes =
      BuildScopes(order, &problems);
  if (problems.refused()) return std::nullopt;

  std::vector<std::string> text = ScopeWords(scopes);
  if (anon) text.push_back(absl::StrCat("anon=", *anon));
  bool nohide = false;
  for (const Client* c : order) nohide |= c->nohide;
  if (nohide) text.push_back("nohide");
  if (!AddMountpoint(e, order, &problems, &text)) return std::nullopt;
  std::string options = absl::StrJoin(text, ",");
  if (absl::StatusOr<ShareOptions> parsed = ParseOptions(options);
      !parsed.ok()) {
    problems.Add(e.where,
                 absl::StrCat(e.path, ": the translated options \"", options,
                              "\" do not parse: ", parsed.status().message()),
                 false);
    return std::nullopt;
  }
  return options;
}

// The exported paths of exports(5) files, each with its clients as
// rpc.mountd reads them (first entry of a client kept), in file order;
// problems and warnings go to *plan.
std::vector<ExportedPath> ParseExports(const std::vector<SourceFile>& files,
                                       ImportPlan* out) {
  ImportPlan& plan = *out;
  std::vector<ExportedPath> paths;
  std::map<std::string, size_t> index;
  for (const SourceFile& f : files) {
    for (const ExportsLine& l : SplitExports(f.text)) {
      LineProblems p{absl::StrCat(f.name, ":", l.line), &plan.problems, {}};
      if (!l.error.empty()) {
        p.Add(l.error, false);
        continue;
      }
      if (std::optional<std::string> bad = ControlCharacterProblem(l.tokens)) {
        p.Add(*std::move(bad), false);
        continue;
      }
      absl::StatusOr<std::string> path = NormalizePath(l.tokens[0]);
      if (!path.ok()) {
        p.Add(std::string(path.status().message()), false);
        continue;
      }
      auto [it, added] = index.emplace(*path, paths.size());
      if (added) paths.push_back({*path, p.where, {}});
      ExportedPath& e = paths[it->second];
      // "-OPTS" sets the defaults of the clients after it on its line, on
      // top of any earlier "-OPTS" (as getexportent() parses them into one
      // default entry).
      ClientOptions defaults;
      bool any_client = false;
      const auto add_client = [&](const std::string& spec,
                                  absl::string_view opts) {
        ClientOptions o = defaults;
        ApplyClientOptions(opts, &o, &p);
        Client c;
        c.spec = spec;
        c.where = p.where;
        c.type = ClassifySpec(spec);
        c.flavors = o.secinfo.empty()
                        ? std::vector<ExportsFlavor>{{SecFlavor::kSys, o.flags}}
                        : o.secinfo;
        c.anonuid = o.anonuid;
        c.anongid = o.anongid;
        c.nohide = o.nohide;
        c.mountpoint = o.mountpoint;
        c.mountpoint_path = o.mountpoint_path;
        c.uuid = o.uuid;
        bool unsupported = false;
        absl::StatusOr<std::string> entry = ClientEntry(spec, &unsupported);
        if (!entry.ok() && !unsupported) {
          p.Add(std::string(entry.status().message()), false);
          return;
        }
        if (entry.ok()) {
          absl::StatusOr<ShareOptions> one =
              ParseOptions(absl::StrCat("rw=", *entry));
          if (one.ok() && one->scopes.size() == 1 &&
              one->scopes[0].rw.has_value() &&
              one->scopes[0].rw->entries.size() == 1 &&
              KindFits(c.type, one->scopes[0].rw->entries[0].kind)) {
            c.entry = *entry;
            c.parsed = one->scopes[0].rw->entries[0];
          } else {
            c.no_entry_why =
                absl::StrCat("client \"", spec,
                             "\" cannot be written as a share_nfs list entry");
          }
        } else {
          c.no_entry_why = std::string(entry.status().message());
        }
        // rpc.mountd keeps the first entry for a client named twice.
        for (const Client& old : e.clients) {
          if (absl::EqualsIgnoreCase(old.spec, c.spec) ||
              (!c.entry.empty() && old.entry == c.entry)) {
            return;
          }
        }
        e.clients.push_back(std::move(c));
      };
      // A "-OPTS" that no client follows: getexportent() reaches the end
      // of the line with default options and exports to "*" with them.
      std::string trailing_defaults;
      for (size_t i = 1; i < l.tokens.size(); ++i) {
        const std::string& t = l.tokens[i];
        if (t[0] == '-') {
          ApplyClientOptions(t.substr(1), &defaults, &p);
          trailing_defaults = t;
          continue;
        }
        any_client = true;
        trailing_defaults.clear();
        size_t open = t.find('(');
        if (open == std::string::npos) {
          add_client(t, "");
          continue;
        }
        if (t.back() != ')') {
          p.Add(absl::StrCat("client \"", t, "\": missing \")\""), false);
          continue;
        }
        std::string spec = t.substr(0, open);
        if (spec.empty() && i > 1 && l.tokens[i - 1][0] != '-' &&
            l.tokens[i - 1].find('(') == std::string::npos) {
          plan.warnings.push_back(
              {p.where,
               absl::StrCat(
                   "\"", l.tokens[i - 1], " ", t, "\": the space makes \"", t,
                   "\" apply to every client and gives \"", l.tokens[i - 1],
                   "\" the default options (imported so, as "
                   "rpc.mountd reads it); write \"",
                   l.tokens[i - 1], t, "\" if that was meant")});
        }
        add_client(spec.empty() ? "*" : spec,
                   absl::string_view(t).substr(open + 1, t.size() - open - 2));
      }
      if (any_client && !trailing_defaults.empty()) {
        plan.warnings.push_back(
            {p.where,
             absl::StrCat("\"", trailing_defaults,
                          "\" at the end of the line, with no client after "
                          "it, exports the path to every client (\"*\") with "
                          "those options, as rpc.mountd reads it (imported "
                          "so); put it before the clients it is for, or "
                          "remove it")});
      }
      if (!any_client || !trailing_defaults.empty()) add_client("*", "");
    }
  }
  return paths;
}

}  // namespace

ImportPlan ImportExports(const std::vector<SourceFile>& files,
                         const std::string& group) {
  ImportPlan plan;
  std::vector<ExportedPath> paths = ParseExports(files, &plan);
  for (const ExportedPath& e : paths) {
    if (e.clients.empty()) continue;  // every client was refused
    std::optional<std::string> options = BuildShareOptions(e, &plan.problems);
    if (!options.has_value()) continue;
    Operation op;
    op.type = Operation::Type::kAddShare;
    op.path = e.path;
    op.group = group;
    op.options = *std::move(options);
    std::optional<std::string> identity = RecordedIdentity(e, &plan.problems);
    if (!identity.has_value()) continue;
    op.fs_identity = *std::move(identity);
    AddOpenWarnings(op, e.where, &plan.warnings);
    plan.ops.push_back(std::move(op));
    plan.origins.push_back(e.where);
  }
  return plan;
}

std::vector<ExportsClientView> ExportsClients(
    const std::vector<SourceFile>& files,
    std::vector<ImportProblem>* problems) {
  ImportPlan plan;
  std::vector<ExportedPath> paths = ParseExports(files, &plan);
  if (problems != nullptr) *problems = std::move(plan.problems);
  std::vector<ExportsClientView> out;
  for (const ExportedPath& e : paths) {
    for (const Client& c : e.clients) {
      ExportsClientView& v = out.emplace_back();
      v.path = e.path;
      v.spec = c.spec;
      v.where = c.where;
      v.rank = static_cast<int>(c.type);
      for (const ExportsFlavor& f : c.flavors) {
        v.flavors.push_back(
            {f.flavor, f.flags.ro, f.flags.root_squash, f.flags.all_squash});
      }
      v.anonuid = c.anonuid;
      v.anongid = c.anongid;
      v.nohide = c.nohide;
    }
  }
  return out;
}

}  // namespace libshare

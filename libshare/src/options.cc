// The share_nfs option grammar (DESIGN.md "Option grammar").
//
// ParseOptions() runs once per share at load time (15,000-100,000 shares),
// so it is a hand-written single pass over the text: no regex, no streams,
// and no allocation beyond the result itself. Errors are built only on the
// failure path.
//
// Choices the grammar summary leaves open, decided here:
// - Canonical() of the defaults is "" (bare "rw" is a different value:
//   it sets rw_all).
// - Options before any "sec=" form an implicit sec=sys scope. At the first
//   "sec=" that scope is dropped if it holds no access option (so "nosuid,
//   sec=krb5,rw" offers krb5 only) and kept otherwise; a later "sec=" that
//   names a flavor some kept scope already has is an error.
// - IPv6 addresses in lists: "@fe80::/10" and "@[fe80::]/10" for networks;
//   a lone address must be bracketed, "[fe80::1]", because ':' separates
//   entries ("a::b" is an empty entry, not an address). Canonical() always
//   brackets IPv6.
// - "@10.1" (one to three IPv4 parts, no length) means "@10.1.0.0/16", as
//   in share_nfs; it is stored and printed as the explicit form.
// - IPv4-mapped IPv6 networks ("@[::ffff:10.0.0.0]/104") are refused: the
//   IPv4 form says the same thing and keeps one spelling per value.
// - anon= and root_mapping= take -1 or 0-4294967294 (uid_t without -1).
#include "libshare/options.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "internal_text.h"
#include "libshare/spelling.h"
#include "options_internal.h"

namespace libshare {
namespace {

// The option names ParseOne knows, for "did you mean" on an unknown one.
const std::vector<std::string_view>& OptionNames() {
  static const auto* const kNames = new std::vector<std::string_view>{
      "rw",    "ro",     "root",   "none",      "root_mapping", "sec",
      "anon",  "nosuid", "nosub",  "nohide",    "public",       "aclok",
      "index", "log",    "window", "mountpoint"};
  return *kNames;
}

using internal::Quote;
using internal::ScopeHasAccessOption;
using internal::ToAbsl;

constexpr std::size_t kMaxOptionsLength = 64 * 1024;
constexpr std::size_t kMaxValueLength = 1024;  // index=, log=
constexpr std::size_t kMaxEntryLength = 255;   // one list entry
constexpr int64_t kMaxUid = 4294967294;        // uid_t, less (uid_t)-1

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlnum(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool IsHex(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
char ToLower(char c) { return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c; }

absl::Status OptionError(std::string_view option, std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("option ", Quote(option), ": ", ToAbsl(what)));
}

// Host, netgroup and network names: letters, digits, '.', '_', '-', not
// starting with '-' or '.' (those prefixes mean deny and domain suffix).
bool IsValidName(std::string_view s) {
  if (s.empty() || s[0] == '-' || s[0] == '.') return false;
  for (char c : s) {
    if (!IsAlnum(c) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

// A DNS suffix: non-empty labels of letters, digits, '_' and '-'.
bool IsValidDomain(std::string_view s) {
  if (s.empty() || s.front() == '.' || s.back() == '.') return false;
  char prev = 0;
  for (char c : s) {
    if (c == '.') {
      if (prev == '.') return false;
    } else if (!IsAlnum(c) && c != '_' && c != '-') {
      return false;
    }
    prev = c;
  }
  return true;
}

std::optional<IpAddress> ParseV6(std::string_view text) {
  char buf[INET6_ADDRSTRLEN + 1];
  if (text.size() >= sizeof(buf)) return std::nullopt;
  std::memcpy(buf, text.data(), text.size());
  buf[text.size()] = '\0';
  IpAddress a;
  if (inet_pton(AF_INET6, buf, a.bytes.data()) != 1) return std::nullopt;
  return a;
}

// Dotted decimal with 1 to 4 parts, each 0-255, missing parts zero.
// Returns the number of parts, or 0 if `text` is not of that form.
int ParseV4Parts(std::string_view text, IpAddress* out) {
  uint32_t addr = 0;
  int parts = 0;
  std::size_t i = 0;
  while (true) {
    if (parts == 4 || i >= text.size() || !IsDigit(text[i])) return 0;
    uint32_t v = 0;
    std::size_t digits = 0;
    while (i < text.size() && IsDigit(text[i])) {
      if (++digits > 3) return 0;
      v = v * 10 + (text[i] - '0');
      ++i;
    }
    if (v > 255) return 0;
    addr |= v << (24 - 8 * parts);
    ++parts;
    if (i == text.size()) break;
    if (text[i] != '.') return 0;
    ++i;
  }
  *out = IpAddress::FromV4(addr);
  return parts;
}

// Parses "-1" or a decimal uid in 0..kMaxUid.
std::optional<int64_t> ParseUid(std::string_view s) {
  if (s == "-1") return -1;
  if (s.empty() || s.size() > 10) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (!IsDigit(c)) return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v > kMaxUid) return std::nullopt;
  return v;
}

std::optional<uint32_t> ParseU32(std::string_view s) {
  if (s.empty() || s.size() > 10) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (!IsDigit(c)) return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v > UINT32_MAX) return std::nullopt;
  return static_cast<uint32_t>(v);
}

// "/LEN" (or "" for none) into *len; family limit `max`.
absl::Status ParsePrefix(std::string_view tail, int max,
                         std::string_view family, int* len,
                         std::string_view option) {
  if (tail.empty()) {
    *len = -1;
    return absl::OkStatus();
  }
  std::string_view digits = tail.substr(1);  // tail[0] == '/'
  bool ok = !digits.empty() && digits.size() <= 3 &&
            std::all_of(digits.begin(), digits.end(), IsDigit);
  int v = 0;
  if (ok) {
    for (char c : digits) v = v * 10 + (c - '0');
  }
  if (!ok) {
    return OptionError(option,
                       absl::StrCat("bad prefix length ", Quote(digits)));
  }
  if (v > max) {
    return OptionError(
        option, absl::StrCat("bad prefix length ", v, " (", ToAbsl(family),
                             " allows 0-", max, ")"));
  }
  *len = v;
  return absl::OkStatus();
}

// "@..." without the '@'.
absl::Status ParseNetwork(std::string_view net, AccessEntry* e,
                          std::string_view option) {
  std::string_view addr, tail;
  bool bracketed = false;
  if (!net.empty() && net[0] == '[') {
    std::size_t close = net.find(']');
    if (close == std::string_view::npos) {
      return OptionError(option, "missing \"]\" after IPv6 network");
    }
    addr = net.substr(1, close - 1);
    tail = net.substr(close + 1);
    bracketed = true;
  } else {
    std::size_t slash = net.find('/');
    addr = net.substr(0, slash);
    tail = slash == std::string_view::npos ? std::string_view()
                                           : net.substr(slash);
  }
  if (!tail.empty() && tail[0] != '/') {
    return OptionError(option, absl::StrCat("unexpected ", Quote(tail),
                                            " after network address"));
  }
  if (addr.empty()) return OptionError(option, "empty network");

  if (bracketed || addr.find(':') != std::string_view::npos) {
    std::optional<IpAddress> a = ParseV6(addr);
    if (!a) {
      return OptionError(option,
                         absl::StrCat("bad IPv6 network ", Quote(addr)));
    }
    if (a->is_v4()) {
      return OptionError(option,
                         absl::StrCat("IPv4-mapped network ", Quote(addr),
                                      ": write it in IPv4 form"));
    }
    e->kind = AccessEntry::Kind::kNetwork;
    e->address = *a;
    return ParsePrefix(tail, 128, "IPv6", &e->prefix_len, option);
  }
  bool numeric = std::all_of(addr.begin(), addr.end(),
                             [](char c) { return IsDigit(c) || c == '.'; });
  if (numeric) {
    int parts = ParseV4Parts(addr, &e->address);
    if (parts == 0) {
      return OptionError(option,
                         absl::StrCat("bad IPv4 network ", Quote(addr)));
    }
    e->kind = AccessEntry::Kind::kNetwork;
    absl::Status st = ParsePrefix(tail, 32, "IPv4", &e->prefix_len, option);
    if (st.ok() && e->prefix_len < 0 && parts < 4) e->prefix_len = 8 * parts;
    return st;
  }
  if (!IsValidName(addr)) {
    return OptionError(option, absl::StrCat("bad network name ", Quote(addr)));
  }
  e->kind = AccessEntry::Kind::kNetworkName;
  e->name.assign(addr.data(), addr.size());
  // networks(5) holds IPv4 networks only.
  return ParsePrefix(tail, 32, "IPv4", &e->prefix_len, option);
}

// One entry without its '-' prefix.
absl::Status ParseEntryBody(std::string_view body, AccessEntry* e,
                            std::string_view option) {
  switch (body[0]) {
    case '*':
      if (body.size() != 1) break;
      e->kind = AccessEntry::Kind::kAny;
      return absl::OkStatus();
    case '@':
      return ParseNetwork(body.substr(1), e, option);
    case '.':
      if (body.size() == 1) {
        e->kind = AccessEntry::Kind::kDotless;
        return absl::OkStatus();
      }
      if (!IsValidDomain(body.substr(1))) {
        return OptionError(option,
                           absl::StrCat("bad domain suffix ", Quote(body)));
      }
      e->kind = AccessEntry::Kind::kDomainSuffix;
      e->name.resize(body.size() - 1);
      std::transform(body.begin() + 1, body.end(), e->name.begin(), ToLower);
      return absl::OkStatus();
    case '[': {
      std::optional<IpAddress> a;
      if (body.back() == ']') a = ParseV6(body.substr(1, body.size() - 2));
      if (!a) {
        return OptionError(option,
                           absl::StrCat("bad IPv6 address ", Quote(body)));
      }
      e->kind = AccessEntry::Kind::kAddress;
      e->address = *a;
      return absl::OkStatus();
    }
    default:
      break;
  }
  // Digits and dots only: an IPv4 address or a mistake, never a name (a
  // typo such as "10.1.2" would otherwise be a host name that never
  // matches).
  if (std::all_of(body.begin(), body.end(),
                  [](char c) { return IsDigit(c) || c == '.'; })) {
    if (ParseV4Parts(body, &e->address) != 4) {
      return OptionError(option,
                         absl::StrCat("bad IPv4 address ", Quote(body),
                                      " (a network is written @NET[/LEN])"));
    }
    e->kind = AccessEntry::Kind::kAddress;
    return absl::OkStatus();
  }
  if (!IsValidName(body)) {
    return OptionError(option,
                       absl::StrCat("bad host or netgroup name ", Quote(body)));
  }
  e->kind = AccessEntry::Kind::kName;
  e->name.assign(body.data(), body.size());
  return absl::OkStatus();
}

// Where an unbracketed "@IPV6[/LEN]" entry starting at net (after the '@')
// ends, or npos if it is not one. The address may itself hold ':', so take
// the longest run of address characters that parses as IPv6 and is
// followed by the end, a ':' separator or "/LEN".
std::size_t UnbracketedV6End(std::string_view net) {
  // No IPv6 text is longer than INET6_ADDRSTRLEN, so looking further
  // would only make a long list quadratic.
  std::size_t run = 0;
  while (run < net.size() && run < INET6_ADDRSTRLEN &&
         (IsHex(net[run]) || net[run] == ':' || net[run] == '.')) {
    ++run;
  }
  for (std::size_t cut = run; cut >= 2; --cut) {
    if (cut < net.size() && net[cut] != ':' && net[cut] != '/') continue;
    std::string_view cand = net.substr(0, cut);
    if (cand.find(':') == std::string_view::npos) return std::string_view::npos;
    if (!ParseV6(cand)) continue;
    if (cut < net.size() && net[cut] == '/') {
      std::size_t end = cut + 1;
      while (end < net.size() && IsDigit(net[end])) ++end;
      return end;
    }
    return cut;
  }
  return std::string_view::npos;
}

absl::Status ParseList(std::string_view value, std::string_view option,
                       std::optional<AccessList>* slot) {
  if (value.empty()) return OptionError(option, "empty access list");
  AccessList& list = slot->emplace();
  list.entries.reserve(std::count(value.begin(), value.end(), ':') + 1);
  const std::size_t n = value.size();
  std::size_t i = 0;
  while (true) {
    const std::size_t start = i;
    bool deny = false;
    if (i < n && value[i] == '-') {
      deny = true;
      ++i;
    }
    std::size_t end = std::string_view::npos;
    if (i < n && value[i] == '@' && i + 1 < n && value[i + 1] != '[') {
      std::size_t v6 = UnbracketedV6End(value.substr(i + 1));
      if (v6 != std::string_view::npos) end = i + 1 + v6;
    } else if (i < n && (value[i] == '[' || value[i] == '@')) {
      // Bracketed IPv6: the entry runs past the ']'.
      std::size_t close = value.find(']', i);
      if (close != std::string_view::npos) end = close + 1;
    }
    if (end == std::string_view::npos) end = i;
    // Whatever follows the address part up to the next ':' still belongs
    // to this entry (and makes it fail to parse if it is not "/LEN").
    if (end < n && value[end] != ':') end = value.find(':', end);
    if (end == std::string_view::npos) end = n;

    std::string_view entry = value.substr(start, end - start);
    std::string_view body = value.substr(i, end - i);
    if (body.empty()) {
      return OptionError(option, "empty list entry");
    }
    if (entry.size() > kMaxEntryLength) {
      return OptionError(
          option, absl::StrCat("list entry ", Quote(entry, 40), " longer than ",
                               kMaxEntryLength, " characters"));
    }
    AccessEntry& e = list.entries.emplace_back();
    e.deny = deny;
    absl::Status st = ParseEntryBody(body, &e, option);
    if (!st.ok()) return st;
    if (end == n) break;
    i = end + 1;
    if (i == n) return OptionError(option, "empty list entry");
  }
  return absl::OkStatus();
}

std::optional<SecFlavor> FlavorFromName(std::string_view s) {
  if (s == "sys") return SecFlavor::kSys;
  if (s == "none") return SecFlavor::kNone;
  if (s == "dh") return SecFlavor::kDh;
  if (s == "krb5") return SecFlavor::kKrb5;
  if (s == "krb5i") return SecFlavor::kKrb5i;
  if (s == "krb5p") return SecFlavor::kKrb5p;
  return std::nullopt;
}

class OptionParser {
 public:
  absl::StatusOr<ShareOptions> Parse(std::string_view text);

 private:
  absl::Status ParseOne(std::string_view option);
  absl::Status ParseSec(std::string_view option, std::string_view value);
  absl::Status ParseFlag(std::string_view option, bool has_value, bool* flag);
  absl::Status ParseText(std::string_view option, std::string_view value,
                         std::optional<std::string>* slot);

  ShareOptions out_;
  bool explicit_sec_ = false;  // a "sec=" has been seen
};

absl::StatusOr<ShareOptions> OptionParser::Parse(std::string_view text) {
  if (text.size() > kMaxOptionsLength) {
    return absl::InvalidArgumentError(
        absl::StrCat("options ", Quote(text, 40), ": longer than ",
                     kMaxOptionsLength, " bytes (", text.size(), ")"));
  }
  out_.scopes.reserve(2);
  out_.scopes.emplace_back().flavors.push_back(SecFlavor::kSys);
  if (text.empty()) return std::move(out_);
  std::size_t pos = 0;
  for (std::size_t number = 1;; ++number) {
    std::size_t comma = text.find(',', pos);
    std::string_view option = text.substr(pos, comma == std::string_view::npos
                                                   ? std::string_view::npos
                                                   : comma - pos);
    if (option.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "options ", Quote(text, 40), ": empty option at position ", number,
          " (stray \",\")"));
    }
    absl::Status st = ParseOne(option);
    if (!st.ok()) return st;
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return std::move(out_);
}

absl::Status OptionParser::ParseFlag(std::string_view option, bool has_value,
                                     bool* flag) {
  if (has_value) return OptionError(option, "takes no value");
  if (*flag) return OptionError(option, "duplicate option");
  *flag = true;
  return absl::OkStatus();
}

absl::Status OptionParser::ParseText(std::string_view option,
                                     std::string_view value,
                                     std::optional<std::string>* slot) {
  if (slot->has_value()) return OptionError(option, "duplicate option");
  if (value.empty()) return OptionError(option, "empty value");
  if (value.size() > kMaxValueLength) {
    return OptionError(
        option, absl::StrCat("value longer than ", kMaxValueLength, " bytes (",
                             value.size(), ")"));
  }
  slot->emplace(value);
  return absl::OkStatus();
}

absl::Status OptionParser::ParseSec(std::string_view option,
                                    std::string_view value) {
  if (value.empty()) return OptionError(option, "empty security mode list");
  if (!explicit_sec_) {
    explicit_sec_ = true;
    // The implicit sec=sys scope stays only if something was put in it.
    if (!ScopeHasAccessOption(out_.scopes[0])) out_.scopes.clear();
  }
  SecScope scope;
  std::size_t pos = 0;
  while (true) {
    std::size_t colon = value.find(':', pos);
    std::string_view mode = value.substr(pos, colon == std::string_view::npos
                                                  ? std::string_view::npos
                                                  : colon - pos);
    if (mode.empty()) return OptionError(option, "empty security mode");
    std::optional<SecFlavor> f = FlavorFromName(mode);
    if (!f) {
      return OptionError(option,
                         absl::StrCat("unknown security mode ", Quote(mode),
                                      " (sys, none, dh, krb5, krb5i, krb5p)"));
    }
    if (std::find(scope.flavors.begin(), scope.flavors.end(), *f) !=
        scope.flavors.end()) {
      return OptionError(
          option, absl::StrCat("security mode ", Quote(mode), " named twice"));
    }
    if (out_.ScopeFor(*f) != nullptr) {
      return OptionError(
          option, absl::StrCat("security mode ", Quote(mode),
                               " already has its options (an earlier sec=, "
                               "or options before any sec= for sys)"));
    }
    scope.flavors.push_back(*f);
    if (colon == std::string_view::npos) break;
    pos = colon + 1;
  }
  out_.scopes.push_back(std::move(scope));
  return absl::OkStatus();
}

absl::Status OptionParser::ParseOne(std::string_view option) {
  for (char c : option) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return OptionError(option, "control character not allowed");
    }
  }
  std::size_t eq = option.find('=');
  const bool has_value = eq != std::string_view::npos;
  std::string_view name = option.substr(0, eq);
  std::string_view value =
      has_value ? option.substr(eq + 1) : std::string_view();
  SecScope& scope = out_.scopes.back();

  auto need_value = [&]() {
    return OptionError(option,
                       absl::StrCat("needs a value (", ToAbsl(name), "=...)"));
  };
  auto list_option = [&](std::optional<AccessList>* slot) -> absl::Status {
    if (!has_value) return need_value();
    if (slot->has_value()) {
      return OptionError(option, "duplicate option in this sec= scope");
    }
    return ParseList(value, option, slot);
  };
  auto uid_option = [&](std::optional<int64_t>* slot,
                        bool scoped) -> absl::Status {
    if (!has_value) return need_value();
    if (slot->has_value()) {
      return OptionError(option, scoped ? "duplicate option in this sec= scope"
                                        : "duplicate option");
    }
    std::optional<int64_t> uid = ParseUid(value);
    if (!uid) return OptionError(option, "bad uid (want -1 or 0-4294967294)");
    *slot = uid;
    return absl::OkStatus();
  };

  if (name == "rw" || name == "ro") {
    const bool rw = name == "rw";
    if (has_value) return list_option(rw ? &scope.rw : &scope.ro);
    bool& mine = rw ? scope.rw_all : scope.ro_all;
    bool other = rw ? scope.ro_all : scope.rw_all;
    if (mine) return OptionError(option, "duplicate option in this sec= scope");
    if (other) return OptionError(option, "bare rw and bare ro together");
    mine = true;
    return absl::OkStatus();
  }
  if (name == "root") return list_option(&scope.root);
  if (name == "none") return list_option(&scope.none);
  if (name == "root_mapping") return uid_option(&scope.root_mapping, true);
  if (name == "sec") {
    if (!has_value) return need_value();
    return ParseSec(option, value);
  }
  if (name == "anon") return uid_option(&out_.anon, false);
  if (name == "nosuid") return ParseFlag(option, has_value, &out_.nosuid);
  if (name == "nosub") return ParseFlag(option, has_value, &out_.nosub);
  if (name == "nohide") return ParseFlag(option, has_value, &out_.nohide);
  if (name == "mountpoint") {
    return ParseFlag(option, has_value, &out_.mountpoint);
  }
  if (name == "public") return ParseFlag(option, has_value, &out_.public_fh);
  if (name == "aclok") return ParseFlag(option, has_value, &out_.aclok);
  if (name == "index") {
    if (!has_value) return need_value();
    return ParseText(option, value, &out_.index);
  }
  if (name == "log") {
    if (out_.log) return OptionError(option, "duplicate option");
    if (has_value) {
      absl::Status st = ParseText(option, value, &out_.log_tag);
      if (!st.ok()) return st;
    }
    out_.log = true;
    return absl::OkStatus();
  }
  if (name == "window") {
    if (!has_value) return need_value();
    if (out_.window) return OptionError(option, "duplicate option");
    std::optional<uint32_t> w = ParseU32(value);
    if (!w) {
      return OptionError(option, "bad number of seconds (want 0-4294967295)");
    }
    out_.window = w;
    return absl::OkStatus();
  }
  return OptionError(
      option, absl::StrCat("unknown option", DidYouMean(name, OptionNames(),
                                                        has_value ? "=" : "")));
}

}  // namespace

std::optional<IpAddress> IpAddress::Parse(std::string_view text) {
  if (text.find(':') != std::string_view::npos) return ParseV6(text);
  IpAddress a;
  if (ParseV4Parts(text, &a) != 4) return std::nullopt;
  return a;
}

absl::StatusOr<ShareOptions> ParseOptions(std::string_view text) {
  return OptionParser().Parse(text);
}

}  // namespace libshare

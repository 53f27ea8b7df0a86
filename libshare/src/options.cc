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

bool ScopeHasAccessOption(const SecScope& s) {
  return s.rw_all || s.ro_all || s.rw || s.ro || s.root || s.none ||
         s.root_mapping;
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

void AppendList(std::string* out, std::string_view name,
                const std::optional<AccessList>& list) {
  if (!list) return;
  if (!out->empty()) out->push_back(',');
  out->append(name);
  out->push_back('=');
  out->append(list->Canonical());
}

void AppendWord(std::string* out, std::string_view word) {
  if (!out->empty()) out->push_back(',');
  out->append(word);
}

// Writes `v` (0-999) in decimal at `p`; returns the end.
char* PutDecimal(char* p, unsigned v) {
  if (v >= 100) *p++ = static_cast<char>('0' + v / 100);
  if (v >= 10) *p++ = static_cast<char>('0' + v / 10 % 10);
  *p++ = static_cast<char>('0' + v % 10);
  return p;
}

// Appends the dotted quad of an IPv4 (mapped) address: written digit by
// digit, since a client's address is spelled on every cache miss and for
// every client the record flusher writes (StrCat took about 4x longer).
void AppendV4(const IpAddress& a, std::string* out) {
  char buf[16];
  char* p = buf;
  for (int i = 12; i < 16; ++i) {
    p = PutDecimal(p, a.bytes[i]);
    if (i < 15) *p++ = '.';
  }
  out->append(buf, static_cast<std::size_t>(p - buf));
}

// Appends "/N" (a prefix length, 0-128).
void AppendPrefix(int prefix_len, std::string* out) {
  char buf[4];
  buf[0] = '/';
  char* end = PutDecimal(buf + 1, static_cast<unsigned>(prefix_len));
  out->append(buf, static_cast<std::size_t>(end - buf));
}

}  // namespace

// ---- IpAddress ----

bool IpAddress::is_v4() const {
  static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0,    0,
                                          0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(bytes.data(), kMapped, sizeof(kMapped)) == 0;
}

std::optional<IpAddress> IpAddress::Parse(std::string_view text) {
  if (text.find(':') != std::string_view::npos) return ParseV6(text);
  IpAddress a;
  if (ParseV4Parts(text, &a) != 4) return std::nullopt;
  return a;
}

IpAddress IpAddress::FromV4(uint32_t host_order) {
  IpAddress a;
  a.bytes[10] = 0xff;
  a.bytes[11] = 0xff;
  a.bytes[12] = static_cast<uint8_t>(host_order >> 24);
  a.bytes[13] = static_cast<uint8_t>(host_order >> 16);
  a.bytes[14] = static_cast<uint8_t>(host_order >> 8);
  a.bytes[15] = static_cast<uint8_t>(host_order);
  return a;
}

std::string IpAddress::ToString() const {
  if (is_v4()) {
    std::string out;  // at most 15 characters: no allocation
    AppendV4(*this, &out);
    return out;
  }
  char buf[INET6_ADDRSTRLEN];
  if (inet_ntop(AF_INET6, bytes.data(), buf, sizeof(buf)) == nullptr) {
    return std::string();  // cannot happen with a 16-byte input
  }
  return buf;
}

// A negative length compares all 128 bits: an unset length must never
// widen a match.
bool IpAddress::InNetwork(const IpAddress& network, int prefix_len_128) const {
  int bits = prefix_len_128 < 0 || prefix_len_128 > 128 ? 128 : prefix_len_128;
  int whole = bits / 8;
  if (std::memcmp(bytes.data(), network.bytes.data(), whole) != 0) {
    return false;
  }
  int rest = bits % 8;
  if (rest == 0) return true;
  uint8_t mask = static_cast<uint8_t>(0xff << (8 - rest));
  return (bytes[whole] & mask) == (network.bytes[whole] & mask);
}

// ---- SecFlavor ----

std::string_view SecFlavorName(SecFlavor f) {
  switch (f) {
    case SecFlavor::kSys:
      return "sys";
    case SecFlavor::kNone:
      return "none";
    case SecFlavor::kDh:
      return "dh";
    case SecFlavor::kKrb5:
      return "krb5";
    case SecFlavor::kKrb5i:
      return "krb5i";
    case SecFlavor::kKrb5p:
      return "krb5p";
  }
  return "unknown";
}

uint32_t SecFlavorRpcNumber(SecFlavor f) {
  switch (f) {
    case SecFlavor::kSys:
      return 1;
    case SecFlavor::kNone:
      return 0;
    case SecFlavor::kDh:
      return 3;
    case SecFlavor::kKrb5:
      return 390003;
    case SecFlavor::kKrb5i:
      return 390004;
    case SecFlavor::kKrb5p:
      return 390005;
  }
  return 1;
}

// ---- AccessEntry / AccessList ----

std::string AccessEntry::Canonical() const {
  std::string out;
  if (deny) out.push_back('-');
  switch (kind) {
    case Kind::kAny:
      out.push_back('*');
      break;
    case Kind::kNetwork:
      if (address.is_v4()) {
        out.push_back('@');
        AppendV4(address, &out);
      } else {
        absl::StrAppend(&out, "@[", address.ToString(), "]");
      }
      if (prefix_len >= 0) AppendPrefix(prefix_len, &out);
      break;
    case Kind::kNetworkName:
      absl::StrAppend(&out, "@", name);
      if (prefix_len >= 0) absl::StrAppend(&out, "/", prefix_len);
      break;
    case Kind::kDomainSuffix:
      absl::StrAppend(&out, ".", name);
      break;
    case Kind::kDotless:
      out.push_back('.');
      break;
    case Kind::kAddress:
      if (address.is_v4()) {
        AppendV4(address, &out);
      } else {
        absl::StrAppend(&out, "[", address.ToString(), "]");
      }
      break;
    case Kind::kName:
      out.append(name);
      break;
  }
  return out;
}

bool AccessEntry::operator==(const AccessEntry& o) const {
  return kind == o.kind && deny == o.deny && name == o.name &&
         address == o.address && prefix_len == o.prefix_len;
}

bool AccessList::NeedsNames() const {
  for (const AccessEntry& e : entries) {
    if (e.kind == AccessEntry::Kind::kName ||
        e.kind == AccessEntry::Kind::kDomainSuffix ||
        e.kind == AccessEntry::Kind::kDotless) {
      return true;
    }
  }
  return false;
}

std::string AccessList::Canonical() const {
  std::string out;
  for (const AccessEntry& e : entries) {
    if (!out.empty()) out.push_back(':');
    out.append(e.Canonical());
  }
  return out;
}

// ---- SecScope / ShareOptions ----

bool SecScope::operator==(const SecScope& o) const {
  return flavors == o.flavors && rw_all == o.rw_all && ro_all == o.ro_all &&
         rw == o.rw && ro == o.ro && root == o.root && none == o.none &&
         root_mapping == o.root_mapping;
}

const SecScope* ShareOptions::ScopeFor(SecFlavor f) const {
  for (const SecScope& s : scopes) {
    for (SecFlavor g : s.flavors) {
      if (g == f) return &s;
    }
  }
  return nullptr;
}

std::vector<uint32_t> ShareOptions::RpcFlavors() const {
  std::vector<uint32_t> out;
  for (const SecScope& s : scopes) {
    for (SecFlavor f : s.flavors) {
      uint32_t n = SecFlavorRpcNumber(f);
      if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
    }
  }
  return out;
}

bool ShareOptions::NeedsNames() const {
  for (const SecScope& s : scopes) {
    for (const std::optional<AccessList>* l :
         {&s.rw, &s.ro, &s.root, &s.none}) {
      if (*l && (*l)->NeedsNames()) return true;
    }
  }
  return false;
}

// Order: when the only scope is the default sec=sys one, its access options
// come first and the global options follow ("rw=a,root=b,nosuid"). With
// explicit scopes the global options come first so that none of them reads
// as if it belonged to the last scope ("nosuid,sec=krb5,rw,sec=sys,ro").
std::string ShareOptions::Canonical() const {
  std::string globals;
  if (anon) AppendWord(&globals, absl::StrCat("anon=", *anon));
  if (nosuid) AppendWord(&globals, "nosuid");
  if (nosub) AppendWord(&globals, "nosub");
  if (nohide) AppendWord(&globals, "nohide");
  if (mountpoint) AppendWord(&globals, "mountpoint");
  if (public_fh) AppendWord(&globals, "public");
  if (aclok) AppendWord(&globals, "aclok");
  if (index) AppendWord(&globals, absl::StrCat("index=", *index));
  if (log)
    AppendWord(&globals, log_tag ? absl::StrCat("log=", *log_tag) : "log");
  if (window) AppendWord(&globals, absl::StrCat("window=", *window));

  const bool implicit = scopes.size() == 1 && scopes[0].flavors.size() == 1 &&
                        scopes[0].flavors[0] == SecFlavor::kSys;
  std::string out = implicit ? std::string() : globals;
  for (const SecScope& s : scopes) {
    if (!implicit) {
      std::string sec = "sec=";
      for (std::size_t i = 0; i < s.flavors.size(); ++i) {
        if (i > 0) sec.push_back(':');
        sec.append(SecFlavorName(s.flavors[i]));
      }
      AppendWord(&out, sec);
    }
    if (s.ro_all) AppendWord(&out, "ro");
    AppendList(&out, "ro", s.ro);
    if (s.rw_all) AppendWord(&out, "rw");
    AppendList(&out, "rw", s.rw);
    AppendList(&out, "root", s.root);
    AppendList(&out, "none", s.none);
    if (s.root_mapping) {
      AppendWord(&out, absl::StrCat("root_mapping=", *s.root_mapping));
    }
  }
  if (implicit && !globals.empty()) AppendWord(&out, globals);
  return out;
}

bool ShareOptions::operator==(const ShareOptions& o) const {
  return scopes == o.scopes && anon == o.anon && nosuid == o.nosuid &&
         nosub == o.nosub && nohide == o.nohide && mountpoint == o.mountpoint &&
         public_fh == o.public_fh && aclok == o.aclok && index == o.index &&
         log == o.log && log_tag == o.log_tag && window == o.window;
}

absl::StatusOr<ShareOptions> ParseOptions(std::string_view text) {
  return OptionParser().Parse(text);
}

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

}  // namespace libshare

// ---- Per-property inheritance (options.h).
namespace libshare {
namespace {

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

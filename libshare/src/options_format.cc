// The value types of the share_nfs option grammar (options.h): their
// canonical text (the form stored and shown; see options.cc for the
// choices it makes), comparison, addresses and security flavors.
#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "libshare/options.h"
#include "options_internal.h"

namespace libshare {
namespace {

using internal::AppendList;
using internal::AppendWord;

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

}  // namespace libshare

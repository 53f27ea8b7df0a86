// The share_nfs option grammar, parsed once into a compiled form.
//
// ParseOptions() turns an option string such as
//   "sec=krb5,rw=@10.0.0.0/8:-badhost,sec=sys,ro,root=admin,nosub"
// into ShareOptions, which access checks read without re-parsing text.
// ShareOptions::Canonical() gives a text that parses to an equal value
// (round trip). Values are immutable after parsing; share them between
// threads through std::shared_ptr<const ShareOptions>.
//
// Access options (rw, ro, root, none, root_mapping) belong to the security
// scope opened by the latest "sec=" before them; the ones before any
// "sec=" belong to the default scope, sec=sys. Other options are global.
#ifndef LIBSHARE_OPTIONS_H_
#define LIBSHARE_OPTIONS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace libshare {

// An IPv4 or IPv6 address. IPv4 is held as its IPv4-mapped IPv6 form
// (::ffff:a.b.c.d) so that one comparison serves both families.
struct IpAddress {
  std::array<uint8_t, 16> bytes{};

  bool is_v4() const;
  // "10.1.2.3" or "fe80::1"; nullopt if text is not a literal address.
  static std::optional<IpAddress> Parse(std::string_view text);
  static IpAddress FromV4(uint32_t host_order);
  std::string ToString() const;
  // True if the first prefix_len bits (counted on the 128-bit form) agree.
  bool InNetwork(const IpAddress& network, int prefix_len_128) const;
  friend bool operator==(const IpAddress& a, const IpAddress& b) {
    return a.bytes == b.bytes;
  }
  friend bool operator!=(const IpAddress& a, const IpAddress& b) {
    return !(a == b);
  }
};

enum class SecFlavor : uint8_t { kSys, kNone, kDh, kKrb5, kKrb5i, kKrb5p };

// "sys", "none", "dh", "krb5", "krb5i", "krb5p".
std::string_view SecFlavorName(SecFlavor f);
// The RPC flavor number MOUNT v3 lists: AUTH_SYS=1, AUTH_NONE=0, AUTH_DH=3,
// krb5=390003, krb5i=390004, krb5p=390005.
uint32_t SecFlavorRpcNumber(SecFlavor f);

// One entry of an access list.
struct AccessEntry {
  enum class Kind : uint8_t {
    kAny,           // "*"
    kNetwork,       // "@10.1.0.0/16", "@fe80::/10", "@[fe80::]/10"
    kNetworkName,   // "@engnet" or "@engnet/24": a networks(5) name
    kDomainSuffix,  // ".example.com" (name holds "example.com", lower case)
    kDotless,       // "." alone: host names without a dot
    kAddress,       // "10.1.2.3", "fe80::1"
    kName,          // a host name, or failing that a netgroup name
  };
  Kind kind = Kind::kAny;
  bool deny = false;    // "-" prefix
  std::string name;     // kDomainSuffix, kNetworkName, kName (as written)
  IpAddress address;    // kNetwork, kAddress
  int prefix_len = -1;  // kNetwork/kNetworkName: bits as written
                        // (IPv4 0-32, IPv6 0-128); -1 if none given.
                        // IPv4 lengths count on the IPv4 address: pass
                        // 96 + prefix_len to IpAddress::InNetwork. The
                        // share_nfs shorthand "@10.1" is stored as
                        // "@10.1.0.0/16".
  std::string Canonical() const;
  bool operator==(const AccessEntry& o) const;
};

struct AccessList {
  std::vector<AccessEntry> entries;

  // True if an entry needs the client's names (kName, kDomainSuffix,
  // kDotless) or a netgroup lookup (kName).
  bool NeedsNames() const;
  std::string Canonical() const;  // ":"-joined entries
  bool operator==(const AccessList& o) const { return entries == o.entries; }
};

// The access options that apply to one set of security flavors.
struct SecScope {
  std::vector<SecFlavor> flavors;       // never empty
  bool rw_all = false;                  // bare "rw"
  bool ro_all = false;                  // bare "ro"
  std::optional<AccessList> rw;         // "rw=LIST"
  std::optional<AccessList> ro;         // "ro=LIST"
  std::optional<AccessList> root;       // "root=LIST"
  std::optional<AccessList> none;       // "none=LIST"
  std::optional<int64_t> root_mapping;  // "root_mapping=UID"

  // True if no rw/ro option at all was given (then access is rw).
  bool HasNoAccessOption() const { return !rw_all && !ro_all && !rw && !ro; }
  bool operator==(const SecScope& o) const;
};

struct ShareOptions {
  std::vector<SecScope> scopes;  // never empty; first is sec=sys by default
  std::optional<int64_t> anon;   // "anon=UID" (-1: deny unmapped users)
  bool nosuid = false;
  bool nosub = false;
  bool nohide = false;
  // sharemgr's extension, for exports(5)'s mountpoint: served only while a
  // file system is mounted at the share's path itself (sharemgrd.8).
  bool mountpoint = false;
  bool public_fh = false;  // "public"
  bool aclok = false;
  std::optional<std::string> index;  // "index=FILE"
  bool log = false;
  std::optional<std::string> log_tag;  // "log=TAG"
  std::optional<uint32_t> window;      // "window=SECONDS"

  // The scope that governs a client using flavor f, or nullptr if the share
  // is not offered with that flavor.
  const SecScope* ScopeFor(SecFlavor f) const;
  // RPC flavor numbers in scope order, without duplicates (MNT v3 reply).
  std::vector<uint32_t> RpcFlavors() const;
  // True if any list in any scope needs client names.
  bool NeedsNames() const;
  // Fixed-order text that ParseOptions() maps to an equal value. The
  // defaults (ParseOptions("")) give "" (bare "rw" is a different value:
  // it sets rw_all). IPv6 list entries are written bracketed:
  // "@[fe80::]/10", "[fe80::1]".
  std::string Canonical() const;
  bool operator==(const ShareOptions& o) const;
};

// Parses a share_nfs option string. "" means the defaults (sec=sys, rw for
// every client). Errors name the option and what is wrong:
//   option "rw=": empty access list
//   option "foo": unknown option
// Limits: the whole text 64 KiB, index=/log= values 1024 bytes, one list
// entry 255 characters; anon= and root_mapping= take -1 or 0-4294967294.
// In a list, an IPv6 address must be bracketed ("[fe80::1]", since ':'
// separates entries); an IPv6 network may be ("@fe80::/10" or
// "@[fe80::]/10"). Options before the first "sec=" that hold no access
// option do not open a sec=sys scope: "nosuid,sec=krb5,rw" offers krb5
// only. A "sec=" naming a flavor an earlier scope has is an error.
[[nodiscard]] absl::StatusOr<ShareOptions> ParseOptions(std::string_view text);

// ---- Per-property inheritance (sharectl(8) "Option inheritance").
//
// A share's effective options are its group's options with the share's
// own properties overriding property by property, as illumos sharemgr
// merges a group's optionset with a share's. The properties:
//   global: anon, nosuid, nosub, nohide, mountpoint, public, aclok, index, log,
//   window in each sec= scope: rw (bare "rw" and "rw=LIST" together), ro
//   (likewise),
//     root, none, root_mapping
// An access list is one property: a share's rw= replaces the group's rw=
// list whole, never entry by entry. Scopes are matched by their flavor
// list: a share scope naming exactly a group scope's flavors overrides that
// scope property by property; one that shares only some flavors with a
// group scope replaces that scope; one the group lacks is added after the
// group's scopes. A share scope with no access option adds nothing; a group
// scope with no access option (the implicit sec=sys of "nosuid") is not
// inherited by a share that writes a scope of its own. When the merge
// leaves bare "rw" and bare "ro" together, the one the share wrote wins.

// One property of a ShareOptions, as Canonical() spells it.
struct OptionProperty {
  std::string
      scope;  // "" for a global property, else "sec=sys", "sec=krb5:krb5i"
  std::string name;  // "nosuid", "rw", "root", ...
  std::string text;  // "nosuid", "rw=@10.0.0.0/8", "rw,rw=adminhost"
  bool operator==(const OptionProperty& o) const {
    return scope == o.scope && name == o.name && text == o.text;
  }
};

// The properties `options` sets, in Canonical() order. The defaults
// (ParseOptions("")) set none.
std::vector<OptionProperty> OptionProperties(const ShareOptions& options);

// `group` with `own`'s properties overriding, by the rules above.
ShareOptions InheritOptions(const ShareOptions& group, const ShareOptions& own);

// `options` without property `name` (a global or access property name,
// removed from every scope that has it) or without the whole scope `name`
// ("sec=krb5", flavors as written). NotFound when nothing matches:
//   option "nosuid": not set
// InvalidArgument for a name that is no property.
[[nodiscard]] absl::StatusOr<ShareOptions> RemoveOptionProperty(
    const ShareOptions& options, std::string_view name);

// True if some offered flavor gives every client rw: a scope with no rw/ro
// option, bare "rw", or an rw= list with a "*" entry ("rw=-a:*": every
// client but a); a scope whose none= list has "*" denies all and is not
// counted.
bool OpensReadWriteToAll(const ShareOptions& options);
// True if some scope's root= list has a "*" entry ("root=*",
// "root=-a:*"), unless its none= list has one too.
bool GivesRootToAll(const ShareOptions& options);

// Each network entry of an access list written with bits set past its
// prefix ("@10.0.0.1/8"), as written, with the network it matches
// ("@10.0.0.0/8"), in option order, each once. Such an entry grants the
// whole network, as exportfs(8) reads it too; the address may be a typo
// for a host or a longer prefix, so `sharectl` warns.
struct HostBitsEntry {
  std::string written;  // "@10.0.0.1/8"
  std::string network;  // "@10.0.0.0/8"
};
std::vector<HostBitsEntry> NetworksWithHostBits(const ShareOptions& options);

// The options the Linux kernel NFS server (sharemgrd's kernel mode) cannot
// apply, each as "OPTION: what happens instead", in option order; empty if
// none. `sharectl check` and `show -v` print them: an option is never
// dropped silently.
std::vector<std::string> OptionsWithoutKernelEffect(
    const ShareOptions& options);

}  // namespace libshare

#endif  // LIBSHARE_OPTIONS_H_

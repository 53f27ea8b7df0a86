// What sharectl says about options beyond echoing them: where each
// property of a share's effective options comes from (show -v), which
// options open a share to every client (warnings, list -v), and how many
// shares keep their own value of a property a group change touched (set).
// Pure functions over the client API's values; thread-safe.
#ifndef SHARECTL_OPTION_REPORT_H_
#define SHARECTL_OPTION_REPORT_H_

#include <string>
#include <string_view>
#include <vector>

#include "libshare/records.h"

namespace sharectl {

// One property of a share's effective options and where it comes from.
struct PropertyOrigin {
  std::string scope;  // "" (global) or "sec=sys", ...
  std::string name;   // "rw"
  std::string text;   // "rw=@10.0.0.0/8"
  bool from_share = false;
};

struct EffectiveView {
  std::vector<PropertyOrigin> properties;  // in the effective text's order
  // The share's own options replace the group's whole (stored before
  // per-property inheritance; see sharectl(8) OPTION INHERITANCE).
  bool replaces_group = false;
};

// `share`'s effective options explained against its group's options.
EffectiveView ExplainEffective(const libshare::ShareInfo& share,
                               const std::string& group_options);

// "rw=@10.0.0.0/8 (share), root=adminhost (group)"
std::string FormatOrigins(const EffectiveView& view);

// "read-write to every client" and/or "root for every client" for an
// option text that opens so, and "@10.0.0.1/8 has host bits set: it
// matches all of @10.0.0.0/8" for each such network entry; empty
// otherwise (and for a text that does not parse).
std::vector<std::string> OpenConcerns(std::string_view options);

// After a group's options changed from `old_options` to `new_options`:
// one line per changed property that some of `shares` (the group's) set
// themselves, e.g.
//   "homes: 3 shares keep their own rw (show -v homes lists them)"
std::vector<std::string> KeptOwnValues(
    const std::string& group, const std::string& old_options,
    const std::string& new_options,
    const std::vector<libshare::ShareInfo>& shares);

// list -v's note for a group: its own options' concerns and how many of
// its shares open to every client, e.g.
//   "read-write to every client; 2 shares root for every client"
std::string GroupOpenNote(const libshare::GroupInfo& group,
                          const std::vector<libshare::ShareInfo>& shares);

}  // namespace sharectl

#endif  // SHARECTL_OPTION_REPORT_H_

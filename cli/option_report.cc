#include "option_report.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libshare/options.h"

namespace sharectl {
namespace {

constexpr std::string_view kReadWriteToAll = "read-write to every client";
constexpr std::string_view kRootToAll = "root for every client";

std::string Key(const libshare::OptionProperty& p) {
  return absl::StrCat(p.scope, "/", p.name);
}

std::string Shown(const libshare::OptionProperty& p) {
  // Access properties of the default scope read as they are written.
  return p.scope.empty() || p.scope == "sec=sys" ? p.name
                                                 : absl::StrCat(p.scope, ":", p.name);
}

}  // namespace

EffectiveView ExplainEffective(const libshare::ShareInfo& share,
                               const std::string& group_options) {
  EffectiveView view;
  absl::StatusOr<libshare::ShareOptions> eff =
      libshare::ParseOptions(share.effective_options);
  if (!eff.ok()) return view;
  std::set<std::string> own_keys;
  if (!share.options.empty()) {
    absl::StatusOr<libshare::ShareOptions> own =
        libshare::ParseOptions(share.options);
    absl::StatusOr<libshare::ShareOptions> group =
        libshare::ParseOptions(group_options);
    if (own.ok()) {
      for (const auto& p : libshare::OptionProperties(*own)) {
        own_keys.insert(Key(p));
      }
      view.replaces_group =
          group.ok() && *eff == *own &&
          !(libshare::InheritOptions(*group, *own) == *own);
    }
  }
  for (const auto& p : libshare::OptionProperties(*eff)) {
    view.properties.push_back(
        {p.scope, p.name, p.text, view.replaces_group || own_keys.count(Key(p)) > 0});
  }
  return view;
}

std::string FormatOrigins(const EffectiveView& view) {
  std::vector<std::string> parts;
  for (const auto& p : view.properties) {
    std::string text = p.scope.empty() || p.scope == "sec=sys"
                           ? p.text
                           : absl::StrCat(p.scope, ":", p.text);
    parts.push_back(
        absl::StrCat(text, " (", p.from_share ? "share" : "group", ")"));
  }
  std::string out = absl::StrJoin(parts, ", ");
  if (view.replaces_group) {
    absl::StrAppend(&out, out.empty() ? "" : " ",
                    "(own options replace the group's)");
  }
  return out;
}

std::vector<std::string> OpenConcerns(std::string_view options) {
  std::vector<std::string> out;
  absl::StatusOr<libshare::ShareOptions> o = libshare::ParseOptions(options);
  if (!o.ok()) return out;
  if (libshare::OpensReadWriteToAll(*o)) {
    out.push_back(std::string(kReadWriteToAll));
  }
  if (libshare::GivesRootToAll(*o)) out.push_back(std::string(kRootToAll));
  for (const libshare::HostBitsEntry& h : libshare::NetworksWithHostBits(*o)) {
    out.push_back(absl::StrCat(
        h.written, " has host bits set: it matches all of ", h.network));
  }
  return out;
}

std::vector<std::string> KeptOwnValues(
    const std::string& group, const std::string& old_options,
    const std::string& new_options,
    const std::vector<libshare::ShareInfo>& shares) {
  absl::StatusOr<libshare::ShareOptions> before =
      libshare::ParseOptions(old_options);
  absl::StatusOr<libshare::ShareOptions> after =
      libshare::ParseOptions(new_options);
  if (!before.ok() || !after.ok()) return {};
  // Changed properties: added, removed, or with another value.
  std::map<std::string, std::string> old_props, new_props, shown;
  for (const auto& p : libshare::OptionProperties(*before)) {
    old_props[Key(p)] = p.text;
    shown[Key(p)] = Shown(p);
  }
  for (const auto& p : libshare::OptionProperties(*after)) {
    new_props[Key(p)] = p.text;
    shown[Key(p)] = Shown(p);
  }
  std::map<std::string, std::size_t> kept;
  for (const auto& [key, name] : shown) {
    auto o = old_props.find(key);
    auto n = new_props.find(key);
    const bool same = o != old_props.end() && n != new_props.end() &&
                      o->second == n->second;
    if (!same) kept[key] = 0;
  }
  if (kept.empty()) return {};
  // Count per distinct own text: 15,000 shares usually have a few.
  std::map<std::string, std::size_t> texts;
  for (const auto& s : shares) {
    if (s.group == group && !s.options.empty()) ++texts[s.options];
  }
  for (const auto& [text, count] : texts) {
    absl::StatusOr<libshare::ShareOptions> own = libshare::ParseOptions(text);
    if (!own.ok()) continue;
    for (const auto& p : libshare::OptionProperties(*own)) {
      auto it = kept.find(Key(p));
      if (it != kept.end()) it->second += count;
    }
  }
  std::vector<std::string> out;
  for (const auto& [key, count] : kept) {
    if (count == 0) continue;
    out.push_back(absl::StrCat(group, ": ", count,
                               count == 1 ? " share keeps its" : " shares keep their",
                               " own ", shown[key], " (show -v ", group,
                               " lists them)"));
  }
  return out;
}

std::string GroupOpenNote(const libshare::GroupInfo& group,
                          const std::vector<libshare::ShareInfo>& shares) {
  // The group's own options are what its shares without options of their
  // own serve, and what a share added to it would: said when there is
  // such a share, or none at all. A group whose every share has its own
  // (a followed exports file's: its own options are empty, which alone
  // would read "read-write to every client") is judged by its shares.
  bool inheriting = group.share_count == 0;
  for (const auto& s : shares) {
    if (s.group == group.name && s.options.empty()) inheriting = true;
  }
  std::vector<std::string> parts;
  if (inheriting) parts = OpenConcerns(group.options);
  std::size_t rw = 0;
  std::size_t root = 0;
  std::map<std::string, std::vector<std::string>> memo;
  for (const auto& s : shares) {
    if (s.group != group.name || s.options.empty()) continue;
    auto it = memo.find(s.effective_options);
    if (it == memo.end()) {
      it = memo.emplace(s.effective_options, OpenConcerns(s.effective_options))
               .first;
    }
    for (const std::string& c : it->second) {
      rw += c == kReadWriteToAll;
      root += c == kRootToAll;
    }
  }
  // Shares without own options are as the group is: counted in its note.
  if (rw > 0) {
    parts.push_back(absl::StrCat(rw, rw == 1 ? " share" : " shares",
                                 " read-write to every client"));
  }
  if (root > 0) {
    parts.push_back(absl::StrCat(root, root == 1 ? " share" : " shares",
                                 " root for every client"));
  }
  return absl::StrJoin(parts, "; ");
}

}  // namespace sharectl

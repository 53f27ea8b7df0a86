#include "output.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "json_writer.h"
#include "option_report.h"
#include "libshare/options.h"

namespace sharectl {

using libshare::GroupInfo;
using libshare::ShareInfo;

std::string FormatColumns(const std::vector<std::vector<std::string>>& rows,
                          const std::string& indent) {
  std::vector<size_t> width;
  for (const auto& r : rows) {
    if (width.size() < r.size()) width.resize(r.size(), 0);
    for (size_t i = 0; i + 1 < r.size(); ++i) {
      width[i] = std::max(width[i], r[i].size());
    }
  }
  std::string out;
  for (const auto& r : rows) {
    std::string line = indent;
    for (size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line.append(width[i] - r[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
  }
  return out;
}

namespace {

// A share whose file system's identity differs from the one recorded when
// it was added (a replica, a file system made again): the kernel mode
// answers the recorded one, so clients' file handles stay valid.
std::string IdentityDiffers(const std::string& recorded,
                            const std::string& live) {
  return absl::StrCat("file-system identity differs: recorded ", recorded,
                      ", its file system now has ", live,
                      "; the kernel mode answers the recorded identity, "
                      "unless it is the file system above's (the share was "
                      "added before its own was mounted)");
}

// A control character as \xNN, so that text from the daemon (which
// refuses them, but a store may be older) cannot drive the terminal.
void AppendShown(char c, std::string* out) {
  const auto u = static_cast<unsigned char>(c);
  if (u < 0x20 || u == 0x7f) {
    static constexpr char kHex[] = "0123456789abcdef";
    out->append({'\\', 'x', kHex[u >> 4], kHex[u & 15]});
  } else {
    out->push_back(c);
  }
}

// Whether s[i] starts a C1 control (U+0080-U+009F) in UTF-8: terminals
// may act on it as on ESC (U+009B is CSI).
bool C1At(std::string_view s, std::size_t i) {
  return static_cast<unsigned char>(s[i]) == 0xc2 && i + 1 < s.size() &&
         static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
         static_cast<unsigned char>(s[i + 1]) <= 0x9f;
}

// Appends `s` with C0, DEL and UTF-8 C1 controls escaped (\xNN, \u00NN);
// with `quote`, '"' and '\\' get a backslash.
void AppendShownText(std::string_view s, bool quote, std::string* out) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (C1At(s, i)) {
      static constexpr char kHex[] = "0123456789abcdef";
      const auto u = static_cast<unsigned char>(s[++i]);
      out->append({'\\', 'u', '0', '0', kHex[u >> 4], kHex[u & 15]});
      continue;
    }
    if (quote && (s[i] == '"' || s[i] == '\\')) out->push_back('\\');
    AppendShown(s[i], out);
  }
}

std::string Shown(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  AppendShownText(s, /*quote=*/false, &out);
  return out;
}

std::string Quoted(const std::string& s) {
  std::string out = "\"";
  AppendShownText(s, /*quote=*/true, &out);
  out.push_back('"');
  return out;
}

std::string NfsOptions(const std::string& options) {
  return absl::StrCat("nfs=(", options, ")");
}

}  // namespace

std::string ShownForTerminal(std::string_view s) { return Shown(s); }

std::string Counted(std::size_t n, std::string_view one,
                    std::string_view many) {
  return absl::StrCat(n, " ", std::string(n == 1 ? one : many));
}

std::string IsoTime(int64_t unix_seconds) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ",
                          absl::FromUnixSeconds(unix_seconds),
                          absl::UTCTimeZone());
}

std::string ShownWord(std::string_view s) {
  if (s.size() <= kShownWordBytes) return Shown(s);
  return Shown(s.substr(0, kShownWordBytes)) + "...";
}

std::string FormatList(const std::vector<GroupInfo>& groups,
                       const std::vector<ShareInfo>& shares) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"GROUP", "STATE", "SHARES", "OPTIONS", "OPEN"});
  for (const auto& g : groups) {
    std::string note = GroupOpenNote(g, shares);
    rows.push_back({g.name, g.enabled ? "enabled" : "disabled",
                    std::to_string(g.share_count), NfsOptions(g.options),
                    note.empty() ? "-" : "!! " + note});
  }
  return FormatColumns(rows);
}

std::string FormatList(const std::vector<GroupInfo>& groups, bool verbose) {
  if (!verbose) {
    std::string out;
    for (const auto& g : groups) absl::StrAppend(&out, g.name, "\n");
    return out;
  }
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"GROUP", "STATE", "SHARES", "OPTIONS"});
  for (const auto& g : groups) {
    rows.push_back({g.name, g.enabled ? "enabled" : "disabled",
                    std::to_string(g.share_count), NfsOptions(g.options)});
  }
  return FormatColumns(rows);
}

namespace {

void WriteGroup(const GroupInfo& g, JsonWriter* w) {
  w->StringMember("name", g.name);
  w->Key("enabled");
  w->Bool(g.enabled);
  w->StringMember("options", g.options);
  w->Key("share_count");
  w->Uint(g.share_count);
  if (!g.managed_by.empty()) {
    w->Key("managed_by");
    w->String(g.managed_by);
    w->Key("follow_error");
    w->String(g.follow_error);
  }
}

}  // namespace

std::string FormatFollowed(
    const std::vector<libshare::FollowedFileStatus>& files,
    const std::vector<GroupInfo>& groups) {
  std::string out;
  for (const libshare::FollowedFileStatus& f : files) {
    if (out.empty()) out = "followed exports files:\n";
    const GroupInfo* g = nullptr;
    for (const GroupInfo& x : groups) {
      if (x.name == f.group) g = &x;
    }
    std::string state;
    if (!f.error.empty()) {
      state = absl::StrCat(
          "not applied since ", IsoTime(f.error_since), ": ",
          ShownForTerminal(f.error),
          g == nullptr ? "; nothing of it is served (no version of it was "
                         "ever applied)"
                       : "; its group keeps its last good version");
    } else if (f.applied_generation != 0) {
      state = absl::StrCat("ok (applied at generation ", f.applied_generation,
                           ")");
    } else {
      state = f.in_step ? "ok" : "not read yet";
    }
    absl::StrAppend(
        &out, "  ", ShownForTerminal(f.path), " -> group ", f.group,
        g == nullptr
            ? std::string(" (not created)")
            : absl::StrCat(" (", g->share_count,
                           g->share_count == 1 ? " share" : " shares", ")"),
        ": ", state, "\n");
  }
  return out;
}

std::string FormatListJson(const std::vector<GroupInfo>& groups) {
  JsonWriter w;
  w.BeginObject();
  w.Key("groups");
  w.BeginArray();
  for (const auto& g : groups) {
    w.BeginObject();
    WriteGroup(g, &w);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.str() + "\n";
}

namespace {

// What the kernel mode cannot apply of a share's effective options
// (libshare::OptionsWithoutKernelEffect); empty when the text does not
// parse (the daemon accepted it, so only a newer grammar does that).
std::vector<std::string> KernelNotes(const ShareInfo& s) {
  absl::StatusOr<libshare::ShareOptions> o =
      libshare::ParseOptions(s.effective_options);
  if (!o.ok()) return {};
  return libshare::OptionsWithoutKernelEffect(*o);
}

}  // namespace

std::string FormatShow(const std::vector<GroupInfo>& groups,
                       const std::vector<ShareInfo>& shares, bool verbose,
                       bool kernel_mode) {
  std::string out;
  for (const auto& g : groups) {
    std::string head = g.name;
    if (verbose) absl::StrAppend(&head, " ", NfsOptions(g.options));
    if (!g.enabled) absl::StrAppend(&head, " (disabled)");
    if (verbose) {
      for (const std::string& c : OpenConcerns(g.options)) {
        absl::StrAppend(&head, " !! ", c);
      }
    }
    absl::StrAppend(&out, head, "\n");
    std::vector<std::vector<std::string>> rows;
    std::string notes;
    for (const auto& s : shares) {
      if (s.group != g.name) continue;
      if (!verbose) {
        rows.push_back({Shown(s.path)});
        continue;
      }
      rows.push_back({Shown(s.path),
                      s.resource.empty() ? "-" : Shown(s.resource),
                      s.options.empty() ? "-" : NfsOptions(s.options),
                      s.description.empty() ? "" : Quoted(s.description)});
      if (!s.options.empty()) {
        // Its own options are only part of the story: what it gets.
        absl::StrAppend(&notes, "    ", Shown(s.path), ": effective ",
                        NfsOptions(s.effective_options), " = ",
                        FormatOrigins(ExplainEffective(s, g.options)), "\n");
      }
      for (const std::string& c : OpenConcerns(s.effective_options)) {
        if (!s.options.empty()) {
          absl::StrAppend(&notes, "    ", Shown(s.path), ": !! ", c, "\n");
        }
      }
      for (const std::string& n :
           kernel_mode ? KernelNotes(s) : std::vector<std::string>()) {
        absl::StrAppend(&notes, "    ", Shown(s.path),
                        ": no effect in kernel mode: ", n, "\n");
      }
      if (!s.not_served.empty()) {
        absl::StrAppend(&notes, "    ", Shown(s.path),
                        ": not served: ", Shown(s.not_served), "\n");
      }
      if (!s.live_fs_identity.empty()) {
        absl::StrAppend(&notes, "    ", Shown(s.path), ": ",
                        IdentityDiffers(s.fs_identity, s.live_fs_identity),
                        "\n");
      }
    }
    out += FormatColumns(rows, "    ");
    out += notes;
  }
  return out;
}

std::string FormatShowJson(const std::vector<GroupInfo>& groups,
                           const std::vector<ShareInfo>& shares) {
  JsonWriter w;
  w.BeginObject();
  w.Key("groups");
  w.BeginArray();
  for (const auto& g : groups) {
    w.BeginObject();
    WriteGroup(g, &w);
    w.Key("shares");
    w.BeginArray();
    for (const auto& s : shares) {
      if (s.group != g.name) continue;
      w.BeginObject();
      w.StringMember("path", s.path);
      w.StringMember("group", s.group);
      w.OptionalStringMember("resource", s.resource);
      w.OptionalStringMember("description", s.description);
      w.OptionalStringMember("options", s.options);  // null: inherited
      w.StringMember("effective_options", s.effective_options);
      {
        const EffectiveView view = ExplainEffective(s, g.options);
        w.Key("replaces_group");
        w.Bool(view.replaces_group);
        w.Key("origins");
        w.BeginArray();
        for (const auto& p : view.properties) {
          w.BeginObject();
          w.Key("property");
          w.String(p.name);
          w.Key("scope");
          w.String(p.scope);
          w.Key("text");
          w.String(p.text);
          w.Key("from");
          w.String(p.from_share ? "share" : "group");
          w.EndObject();
        }
        w.EndArray();
      }
      w.Key("kernel_no_effect");
      w.BeginArray();
      for (const std::string& n : KernelNotes(s)) w.String(n);
      w.EndArray();
      w.Key("active");
      w.Bool(s.active);
      w.Key("not_served");
      if (s.not_served.empty()) {
        w.Null();  // served
      } else {
        w.String(s.not_served);
      }
      w.OptionalStringMember("fs_identity", s.fs_identity);
      w.OptionalStringMember("live_fs_identity", s.live_fs_identity);
      w.Key("id");
      w.Uint(s.id);
      w.Key("generation");
      w.Uint(s.generation);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.str() + "\n";
}

std::string FormatNotServed(const std::vector<ShareInfo>& shares) {
  std::string out;
  for (const auto& s : shares) {
    if (s.not_served.empty()) continue;
    absl::StrAppend(&out, Shown(s.path), ": not served: ", Shown(s.not_served),
                    "\n");
  }
  return out;
}

std::string FormatSharetab(
    const std::vector<libshare::SharetabEntry>& entries) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& e : entries) {
    rows.push_back({e.resource.empty() ? "-" : Shown(e.resource), Shown(e.path),
                    e.options.empty() ? "rw" : e.options,
                    Quoted(e.description)});
  }
  return FormatColumns(rows);
}

std::string FormatSharetabJson(
    const std::vector<libshare::SharetabEntry>& entries) {
  JsonWriter w;
  w.BeginObject();
  w.Key("shares");
  w.BeginArray();
  for (const auto& e : entries) {
    w.BeginObject();
    w.StringMember("path", e.path);
    w.OptionalStringMember("resource", e.resource);
    w.StringMember("fstype", e.fstype);
    w.StringMember("options", e.options);
    w.OptionalStringMember("description", e.description);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.str() + "\n";
}

std::string FormatCheck(const libshare::CheckResult& r) {
  std::vector<std::vector<std::string>> rows;
  std::string client = r.client;
  if (!r.address.empty() && r.address != r.client) {
    absl::StrAppend(&client, " (", r.address, ")");
  }
  rows.push_back({"client:", client});
  rows.push_back({"share:", r.share ? *r.share : "(none)"});
  rows.push_back({"access:", r.access});
  rows.push_back({"root:", r.root ? "yes" : "no"});
  if (!r.option.empty()) rows.push_back({"option:", r.option});
  if (!r.entry.empty()) rows.push_back({"entry:", r.entry});
  if (!r.sec.empty() && r.sec != "sys") rows.push_back({"sec:", r.sec});
  rows.push_back({"reason:", r.reason});
  if (!r.live_fs_identity.empty()) {
    rows.push_back({"identity:", IdentityDiffers(r.fs_identity,
                                                 r.live_fs_identity)});
  }
  return FormatColumns(rows);
}

void WriteCheckMembers(const libshare::CheckResult& r, JsonWriter* w) {
  w->StringMember("client", r.client);
  w->OptionalStringMember("address", r.address);
  w->StringMember("access", r.access);
  w->Key("root");
  w->Bool(r.root);
  if (r.share) {
    w->StringMember("share", *r.share);
  } else {
    w->Key("share");
    w->Null();
  }
  w->OptionalStringMember("option", r.option);
  w->OptionalStringMember("entry", r.entry);
  w->StringMember("reason", r.reason);
  w->StringMember("sec", r.sec);
  w->OptionalStringMember("fs_identity", r.fs_identity);
  w->OptionalStringMember("live_fs_identity", r.live_fs_identity);
}

std::string FormatCheckJson(const libshare::CheckResult& r) {
  JsonWriter w;
  w.BeginObject();
  WriteCheckMembers(r, &w);
  w.EndObject();
  return w.str() + "\n";
}

namespace {

std::string Micros(double us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", us);
  return buf;
}

}  // namespace

std::string FormatStats(const libshare::DaemonStats& s) {
  char load[32];
  std::snprintf(load, sizeof load, "%.1f ms (%d threads)", s.load_ms,
                s.load_threads);
  std::vector<std::vector<std::string>> rows = {
      {"shares:", absl::StrCat(s.shares, " (", s.shares_served, " served, ",
                               s.shares_not_served, " not served, ",
                               s.shares_disabled, " disabled)")},
      {"groups:", std::to_string(s.groups)},
      {"generation:", std::to_string(s.generation)},
      {"load:", load},
      {"mounts:", absl::StrCat(s.mounts, " (limit ", s.mount_limit, ", ",
                               s.mount_client_limit, " per client; ",
                               s.mounts_dropped, " not kept)")},
  };
  if (!s.sharetab_error.empty()) {
    rows.push_back({"sharetab error:", s.sharetab_error});
  }
  std::string out = FormatColumns(rows);
  const libshare::CacheStats& c = s.cache;
  out += "authorization cache:\n";
  out += FormatColumns({{"entries:", std::to_string(c.entries)},
                        {"hits:", std::to_string(c.hits)},
                        {"misses:", std::to_string(c.misses)},
                        {"coalesced:", std::to_string(c.coalesced)},
                        {"refreshes:", std::to_string(c.refreshes)},
                        {"reclaims:", std::to_string(c.reclaims)},
                        {"lookups:", std::to_string(c.lookups)},
                        {"lookup failures:", std::to_string(c.lookup_failures)},
                        {"timeouts:", std::to_string(c.timeouts)}},
                       "    ");
  const libshare::StoreStatus& st = s.store;
  if (st.kind == "sqlite") {
    out += "store: sqlite\n";
  } else {
    out += "store: " + st.kind + "\n";
    std::vector<std::vector<std::string>> store_rows = {
        {"engine:", st.engine},
        {"head:", st.head},
        {"applied generation:", std::to_string(st.applied)},
        {"cluster generation:", std::to_string(st.cluster)},
        {"lag:", std::to_string(st.cluster > st.applied
                                    ? st.cluster - st.applied
                                    : 0) +
                     " generations"},
        {"engine reachable:",
         st.reachable ? std::string("yes")
                      : "no, since " + IsoTime(st.unreachable_since)},
        {"resynchronizations:", std::to_string(st.resyncs)}};
    if (!st.error.empty()) store_rows.push_back({"last error:", st.error});
    out += FormatColumns(store_rows, "    ");
  }
  const libshare::KernelStats& k = s.kernel;
  out += "kernel mode: " + k.mode + "\n";
  if (k.mode != "off") {
    out += FormatColumns({{"upcalls:", std::to_string(k.upcalls)},
                          {"negative:", std::to_string(k.negative)},
                          {"pushed:", std::to_string(k.pushed)},
                          {"flushes:", std::to_string(k.flushes)},
                          {"answer p99:", Micros(k.answer_p99_us) + " us"}},
                         "    ");
  }
  if (!s.requests.empty()) {
    std::vector<std::vector<std::string>> rows2 = {
        {"REQUEST", "COUNT", "ERRORS", "P50_US", "P99_US"}};
    for (const auto& r : s.requests) {
      rows2.push_back({r.name, std::to_string(r.count),
                       std::to_string(r.errors), Micros(r.p50_us),
                       Micros(r.p99_us)});
    }
    out += "requests:\n";
    out += FormatColumns(rows2, "    ");
  }
  return out;
}

std::string FormatStatsJson(const libshare::DaemonStats& s) {
  JsonWriter w;
  w.BeginObject();
  w.Key("shares");
  w.Uint(s.shares);
  w.Key("shares_served");
  w.Uint(s.shares_served);
  w.Key("shares_not_served");
  w.Uint(s.shares_not_served);
  w.Key("shares_disabled");
  w.Uint(s.shares_disabled);
  w.Key("groups");
  w.Uint(s.groups);
  w.Key("generation");
  w.Uint(s.generation);
  w.Key("load_ms");
  w.Double(s.load_ms);
  w.Key("load_threads");
  w.Int(s.load_threads);
  w.Key("mounts");
  w.Uint(s.mounts);
  w.Key("mounts_dropped");
  w.Uint(s.mounts_dropped);
  w.Key("mount_limit");
  w.Uint(s.mount_limit);
  w.Key("mount_client_limit");
  w.Uint(s.mount_client_limit);
  w.OptionalStringMember("sharetab_error", s.sharetab_error);
  const libshare::CacheStats& c = s.cache;
  w.Key("cache");
  w.BeginObject();
  w.Key("entries");
  w.Uint(c.entries);
  w.Key("hits");
  w.Uint(c.hits);
  w.Key("misses");
  w.Uint(c.misses);
  w.Key("coalesced");
  w.Uint(c.coalesced);
  w.Key("refreshes");
  w.Uint(c.refreshes);
  w.Key("reclaims");
  w.Uint(c.reclaims);
  w.Key("lookups");
  w.Uint(c.lookups);
  w.Key("lookup_failures");
  w.Uint(c.lookup_failures);
  w.Key("timeouts");
  w.Uint(c.timeouts);
  w.EndObject();
  w.Key("followed");
  w.BeginArray();
  for (const libshare::FollowedFileStatus& f : s.followed) {
    w.BeginObject();
    w.Key("path");
    w.String(f.path);
    w.Key("group");
    w.String(f.group);
    w.Key("applied_generation");
    if (f.applied_generation != 0) {
      w.Uint(f.applied_generation);
    } else {
      w.Null();
    }
    w.Key("in_step");
    w.Bool(f.in_step);
    w.Key("error");
    if (f.error.empty()) {
      w.Null();
    } else {
      w.String(f.error);
    }
    w.Key("error_since");
    if (f.error_since != 0) {
      w.String(IsoTime(f.error_since));
    } else {
      w.Null();
    }
    w.EndObject();
  }
  w.EndArray();
  const libshare::StoreStatus& st = s.store;
  w.Key("store");
  w.BeginObject();
  w.Key("kind");
  w.String(st.kind);
  if (st.kind != "sqlite") {
    w.Key("engine");
    w.String(st.engine);
    w.Key("head");
    w.String(st.head);
    w.Key("applied_generation");
    w.Uint(st.applied);
    w.Key("cluster_generation");
    w.Uint(st.cluster);
    w.Key("lag");
    w.Uint(st.cluster > st.applied ? st.cluster - st.applied : 0);
    w.Key("reachable");
    w.Bool(st.reachable);
    w.Key("unreachable_since");
    if (st.reachable) {
      w.Null();
    } else {
      w.String(IsoTime(st.unreachable_since));
    }
    w.Key("resyncs");
    w.Uint(st.resyncs);
    w.OptionalStringMember("error", st.error);
  }
  w.EndObject();
  const libshare::KernelStats& k = s.kernel;
  w.Key("kernel");
  w.BeginObject();
  w.Key("mode");
  w.String(k.mode);
  w.Key("upcalls");
  w.Uint(k.upcalls);
  w.Key("negative");
  w.Uint(k.negative);
  w.Key("pushed");
  w.Uint(k.pushed);
  w.Key("flushes");
  w.Uint(k.flushes);
  w.Key("answer_p99_us");
  w.Double(k.answer_p99_us);
  w.EndObject();
  // Keyed by request name, so scripts can say .requests.MNT.count.
  w.Key("requests");
  w.BeginObject();
  for (const auto& r : s.requests) {
    w.Key(r.name);
    w.BeginObject();
    w.Key("count");
    w.Uint(r.count);
    w.Key("errors");
    w.Uint(r.errors);
    w.Key("p50_us");
    w.Double(r.p50_us);
    w.Key("p99_us");
    w.Double(r.p99_us);
    w.EndObject();
  }
  w.EndObject();
  w.EndObject();
  return w.str() + "\n";
}

}  // namespace sharectl

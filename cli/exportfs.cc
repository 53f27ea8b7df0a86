#include "exportfs.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "commands.h"
#include "libshare/client.h"
#include "libshare/options.h"
#include "libshare/path.h"
#include "output.h"

namespace sharectl {
namespace {

using libshare::Operation;

// The flags of nfs-utils' exportfs that sharemgr does not offer, and why.
std::optional<std::string> UnsupportedFlag(char c) {
  switch (c) {
    case 'd':
      return "option \"-d\" (debug) is not supported: sharemgrd logs every "
             "change it makes";
    case 'L':
      return "option \"-L\" (no netlink) is not supported: sharemgrd talks "
             "to the kernel itself";
    default:
      return std::nullopt;
  }
}

std::string FlavorName(libshare::SecFlavor f) {
  return std::string(libshare::SecFlavorName(f));
}

// A client spec that can be kept in a description and read back.
bool PlainSpec(const std::string& spec) {
  return !spec.empty() &&
         spec.find_first_of(" \t\n\r()\"#\\,") == std::string::npos;
}

// exportfs writes special characters of a path as \ooo (qword_add).
std::string EscapePath(const std::string& path) {
  std::string out;
  for (unsigned char c : path) {
    if (c <= ' ' || c == '\\' || c == '"' || c == '#' || c == '(' ||
        c >= 0x7f) {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\%03o", c);
      out += buf;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<ExportfsArgs> ParseExportfsArgs(
    const std::vector<std::string>& args) {
  ExportfsArgs out;
  bool only_targets = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& w = args[i];
    if (only_targets || w.size() < 2 || w[0] != '-') {
      out.targets.push_back(w);
      continue;
    }
    if (w == "--") {
      only_targets = true;
      continue;
    }
    if (w == "--help") {
      out.help = true;
      continue;
    }
    if (w[1] == '-') {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown option \"", w, "\"; see sharectl exportfs --help"));
    }
    for (size_t k = 1; k < w.size(); ++k) {
      const char c = w[k];
      switch (c) {
        case 'a':
          out.all = true;
          break;
        case 'r':
          out.reexport = true;
          out.all = true;
          break;
        case 'u':
          out.unexport = true;
          break;
        case 'v':
          out.verbose = true;
          break;
        case 's':
          out.export_format = true;
          break;
        case 'f':
          out.flush = true;
          break;
        case 'i':
          out.ignore = true;
          break;
        case 'h':
          out.help = true;
          break;
        case 'o':
          if (k + 1 < w.size()) {
            out.options = w.substr(k + 1);
          } else if (i + 1 < args.size()) {
            out.options = args[++i];
          } else {
            return absl::InvalidArgumentError(
                "option \"-o\" needs a value (OPTS)");
          }
          k = w.size();
          break;
        default:
          if (std::optional<std::string> why = UnsupportedFlag(c)) {
            return absl::InvalidArgumentError(*why);
          }
          return absl::InvalidArgumentError(
              absl::StrCat("unknown option \"-", std::string(1, c),
                           "\"; see sharectl exportfs --help"));
      }
    }
  }
  if (out.help) return out;
  // exportfs's own checks, in its order.
  if (!out.targets.empty() && out.all) {
    return absl::InvalidArgumentError(
        "extra arguments are not permitted with -a or -r");
  }
  if (out.ignore && (out.all || out.unexport)) {
    return absl::InvalidArgumentError("-i not meaningful with -a, -r or -u");
  }
  if (out.reexport && out.unexport) {
    return absl::InvalidArgumentError("-r and -u are incompatible");
  }
  if (out.options.has_value() && (out.unexport || out.all)) {
    return absl::InvalidArgumentError(
        "-o goes with CLIENT:PATH arguments to export, not with -a, -r or "
        "-u");
  }
  if (out.options.has_value() && out.targets.empty()) {
    return absl::InvalidArgumentError("-o needs a CLIENT:PATH to export");
  }
  if (out.unexport && !out.all && out.targets.empty()) {
    return absl::InvalidArgumentError(
        "-u needs CLIENT:PATH arguments, or -a to unexport all");
  }
  return out;
}

absl::StatusOr<ClientPath> SplitClientPath(const std::string& arg) {
  const auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("Invalid export syntax: ", arg, " (", why, ")"));
  };
  ClientPath out;
  std::string path;
  if (!arg.empty() && arg[0] == '[') {
    size_t close = arg.find(']');
    if (close == std::string::npos) return bad("no \"]\"");
    const std::string inside = arg.substr(1, close - 1);
    if (inside.find(':') == std::string::npos) {
      // "[...]" is a wildcard of a DNS name: split at the first ':'.
      size_t colon = arg.find(':');
      if (colon == std::string::npos) return bad("no \":/PATH\"");
      out.client = arg.substr(0, colon);
      path = arg.substr(colon + 1);
    } else {
      size_t sep = arg.find(":/", close);
      if (sep == std::string::npos) return bad("no \":/PATH\"");
      // Anything between "]" and ":/" is the prefix length ("/64").
      out.client = inside + arg.substr(close + 1, sep - close - 1);
      path = arg.substr(sep + 1);
    }
  } else {
    size_t colon = arg.find(':');
    if (colon == std::string::npos) return bad("no \":/PATH\"");
    out.client = arg.substr(0, colon);
    path = arg.substr(colon + 1);
  }
  if (path.empty() || path[0] != '/') return bad("PATH is not absolute");
  // exportfs accepts a trailing "/".
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  absl::StatusOr<std::string> normal = libshare::NormalizePath(path);
  if (!normal.ok()) return bad(normal.status().message());
  out.path = *std::move(normal);
  if (out.client.empty()) out.client = "*";
  if (!PlainSpec(out.client)) {
    return bad(absl::StrCat("client \"", out.client,
                            "\" is not a host, "
                            "network, wildcard or @netgroup"));
  }
  return out;
}

absl::StatusOr<std::vector<ExportfsClient>> ParseClientList(
    const std::string& description) {
  std::vector<ExportfsClient> out;
  for (absl::string_view t :
       absl::StrSplit(description, ' ', absl::SkipWhitespace())) {
    ExportfsClient c;
    size_t open = t.find('(');
    if (open == absl::string_view::npos) {
      c.spec = std::string(t);
    } else {
      if (t.back() != ')') {
        return absl::InvalidArgumentError(
            absl::StrCat("\"", t, "\": missing \")\""));
      }
      c.spec = std::string(t.substr(0, open));
      c.options = std::string(t.substr(open + 1, t.size() - open - 2));
    }
    if (!PlainSpec(c.spec) ||
        c.options.find_first_of("() \"") != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", t, "\": not CLIENT or CLIENT(OPTIONS)"));
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::string FormatClientList(const std::vector<ExportfsClient>& clients) {
  std::vector<std::string> parts;
  for (const ExportfsClient& c : clients) {
    parts.push_back(
        c.options.empty() ? c.spec : absl::StrCat(c.spec, "(", c.options, ")"));
  }
  return absl::StrJoin(parts, " ");
}

void AddExportfsClient(std::vector<ExportfsClient>* clients,
                       const std::string& spec, const std::string& options) {
  for (ExportfsClient& c : *clients) {
    if (!absl::EqualsIgnoreCase(c.spec, spec)) continue;
    if (options.empty()) return;
    c.options =
        c.options.empty() ? options : absl::StrCat(c.options, ",", options);
    return;
  }
  clients->push_back({spec, options});
}

bool RemoveExportfsClient(std::vector<ExportfsClient>* clients,
                          const std::string& spec) {
  auto it = std::find_if(clients->begin(), clients->end(),
                         [&](const ExportfsClient& c) {
                           return absl::EqualsIgnoreCase(c.spec, spec);
                         });
  if (it == clients->end()) return false;
  clients->erase(it);
  return true;
}

std::string ExportsLine(const std::string& path,
                        const std::vector<ExportfsClient>& clients) {
  std::string line = EscapePath(path);
  for (const ExportfsClient& c : clients) {
    absl::StrAppend(&line, " ", c.spec, "(", c.options, ")");
  }
  return line;
}

std::string EffectiveLinuxOptions(const libshare::ExportsClientView& c,
                                  bool insecure) {
  // sharemgrd's kernel mode: always sync, wdelay, no_subtree_check; the
  // port check is server-wide (--insecure), so every export shows it.
  std::string out = absl::StrCat("sync,wdelay,", c.nohide ? "nohide" : "hide",
                                 ",no_subtree_check");
  if (c.anonuid != 65534) absl::StrAppend(&out, ",anonuid=", c.anonuid);
  if (c.anongid != 65534) absl::StrAppend(&out, ",anongid=", c.anongid);
  // Consecutive flavors with the same flags are shown as one sec=A:B.
  for (size_t i = 0; i < c.flavors.size();) {
    const libshare::ExportsClientView::Flavor& f = c.flavors[i];
    absl::StrAppend(&out, ",sec=", FlavorName(f.flavor));
    size_t k = i + 1;
    for (; k < c.flavors.size(); ++k) {
      const libshare::ExportsClientView::Flavor& g = c.flavors[k];
      if (g.ro != f.ro || g.root_squash != f.root_squash ||
          g.all_squash != f.all_squash) {
        break;
      }
      absl::StrAppend(&out, ":", FlavorName(g.flavor));
    }
    absl::StrAppend(&out, f.ro ? ",ro" : ",rw",
                    insecure ? ",insecure" : ",secure",
                    f.root_squash ? ",root_squash" : ",no_root_squash",
                    f.all_squash ? ",all_squash" : ",no_all_squash");
    i = k;
  }
  return out;
}

std::string FormatExportfsList(std::vector<libshare::ExportsClientView> clients,
                               bool verbose, bool export_format,
                               bool insecure) {
  std::stable_sort(
      clients.begin(), clients.end(),
      [](const libshare::ExportsClientView& a,
         const libshare::ExportsClientView& b) { return a.rank < b.rank; });
  std::string out;
  for (const libshare::ExportsClientView& c : clients) {
    const bool world = c.spec == "*";
    const std::string host = world && !export_format ? "<world>" : c.spec;
    if (export_format) {
      absl::StrAppend(&out, EscapePath(c.path), "  ", host);
    } else {
      std::string path = c.path;
      if (path.size() < 14) path.resize(14, ' ');
      absl::StrAppend(&out, path, c.path.size() > 14 ? "\n\t\t" : "\t", host);
    }
    if (verbose || export_format) {
      absl::StrAppend(&out, "(", EffectiveLinuxOptions(c, insecure), ")");
    }
    out += "\n";
  }
  return out;
}

namespace {

using libshare::AccessEntry;
using libshare::AccessList;

// `e` as exportfs names a client, and rpc.mountd's rank of that kind.
std::pair<std::string, int> ExportfsSpec(const AccessEntry& e) {
  switch (e.kind) {
    case AccessEntry::Kind::kAny:
      return {"*", 4};
    case AccessEntry::Kind::kAddress:
      return {e.address.ToString(), 0};
    case AccessEntry::Kind::kName:
      return {e.name, 0};
    case AccessEntry::Kind::kNetwork: {
      std::string net = e.address.ToString();
      if (e.prefix_len >= 0) absl::StrAppend(&net, "/", e.prefix_len);
      return {net, 1};
    }
    case AccessEntry::Kind::kDomainSuffix:
      return {absl::StrCat("*.", e.name), 2};
    case AccessEntry::Kind::kNetworkName:
    case AccessEntry::Kind::kDotless:
      break;
  }
  // No exportfs spelling: the share_nfs entry as written.
  AccessEntry allow = e;
  allow.deny = false;
  return {allow.Canonical(), 2};
}

// Whether list `l` lets in a client named by `who`: its first entry that
// is `who` (either sign) or "*" decides; nullopt when none does.
std::optional<bool> ListLetsIn(const std::optional<AccessList>& l,
                               const AccessEntry& who) {
  if (!l.has_value()) return std::nullopt;
  for (const AccessEntry& e : l->entries) {
    AccessEntry unsigned_e = e;
    unsigned_e.deny = false;
    if (unsigned_e == who || e.kind == AccessEntry::Kind::kAny) {
      return !e.deny;
    }
  }
  return std::nullopt;
}

// What such a client gets in `scope`, as the access decision gives it
// (sharemgrd/access/share_access, authcache's Evaluate): nullopt for
// nothing, else read-only or not.
std::optional<bool> ScopeReadOnly(const libshare::SecScope& scope,
                                  const AccessEntry& who) {
  if (ListLetsIn(scope.none, who).value_or(false)) return std::nullopt;
  if (scope.HasNoAccessOption()) return false;
  if (ListLetsIn(scope.rw, who).value_or(false)) return false;
  if (scope.rw_all) return ListLetsIn(scope.ro, who).value_or(false);
  if (ListLetsIn(scope.ro, who).value_or(false)) return true;
  if (scope.ro_all) return true;
  return std::nullopt;
}

}  // namespace

std::vector<libshare::ExportsClientView> ServedClients(
    const std::string& path, const libshare::ShareOptions& served) {
  // The entries that name clients, in option order, each once.
  std::vector<AccessEntry> who;
  const auto note = [&](const AccessEntry& e) {
    if (e.deny) return;
    if (std::find(who.begin(), who.end(), e) == who.end()) who.push_back(e);
  };
  bool everyone = false;
  for (const libshare::SecScope& scope : served.scopes) {
    everyone |= scope.HasNoAccessOption() || scope.rw_all || scope.ro_all;
    for (const std::optional<AccessList>* l :
         {&scope.rw, &scope.ro, &scope.root}) {
      if (!l->has_value()) continue;
      for (const AccessEntry& e : (*l)->entries) note(e);
    }
  }
  if (everyone) note(AccessEntry{});  // kAny
  std::vector<libshare::ExportsClientView> out;
  for (const AccessEntry& w : who) {
    libshare::ExportsClientView v;
    v.path = path;
    std::tie(v.spec, v.rank) = ExportfsSpec(w);
    v.nohide = served.nohide;
    if (served.anon.has_value() && *served.anon >= 0) {
      v.anonuid = v.anongid = *served.anon;
    }
    for (const libshare::SecScope& scope : served.scopes) {
      std::optional<bool> ro = ScopeReadOnly(scope, w);
      if (!ro.has_value()) continue;
      const bool root = ListLetsIn(scope.root, w).value_or(false);
      for (libshare::SecFlavor f : scope.flavors) {
        if (f == libshare::SecFlavor::kDh) continue;  // Linux has no AUTH_DH
        v.flavors.push_back({f, *ro, !root, false});
      }
    }
    if (!v.flavors.empty()) out.push_back(std::move(v));
  }
  return out;
}

namespace {

// One run of `exportfs`.
class ExportfsRunner {
 public:
  ExportfsRunner(const Environment& env, std::string socket)
      : env_(env), socket_(std::move(socket)) {}

  int Run(const ExportfsArgs& a);

 private:
  std::ostream& out() { return *env_.out; }
  std::ostream& err() { return *env_.err; }
  int Refused(std::string_view message) {
    err() << "exportfs: " << message << "\n";
    return kExitRefused;
  }
  int CallFailed(const absl::Status& s) {
    err() << "exportfs: "
          << ShownForTerminal({s.message().data(), s.message().size()})
          << "\n";
    if (s.code() == absl::StatusCode::kUnavailable) return kExitUnreachable;
    return kExitRefused;
  }
  libshare::Client* Connection(int* rc) {
    if (client_) return client_.get();
    auto c = env_.connect ? env_.connect(socket_)
                          : libshare::Client::Connect(socket_);
    if (!c.ok()) {
      *rc = CallFailed(c.status());  // kPermissionDenied: exit 1
      return nullptr;
    }
    client_ = *std::move(c);
    return client_.get();
  }

  int SyncFollowed(const ExportfsArgs& a);
  int Change(const ExportfsArgs& a);
  int UnexportAll(const ExportfsArgs& a);
  int List(const ExportfsArgs& a);
  int Flush();
  // Reads a followed file for the listing; "" with a note when it cannot.
  bool ReadFile(const std::string& path, std::string* text);

  const Environment& env_;
  const std::string socket_;
  std::unique_ptr<libshare::Client> client_;
};

int ExportfsRunner::Run(const ExportfsArgs& a) {
  int rc = kExitOk;
  if (a.all && !a.unexport) {
    rc = SyncFollowed(a);
  } else if (a.all && a.unexport) {
    rc = UnexportAll(a);
  } else if (!a.targets.empty()) {
    rc = Change(a);
  } else if (!a.flush) {
    return List(a);
  }
  if (a.flush && rc != kExitUnreachable) {
    int f = Flush();
    if (rc == kExitOk) rc = f;
  }
  return rc;
}

int ExportfsRunner::Flush() {
  int rc = kExitOk;
  libshare::Client* c = Connection(&rc);
  if (c == nullptr) return rc;
  if (absl::Status s = c->FlushCache(); !s.ok()) return CallFailed(s);
  return kExitOk;
}

int ExportfsRunner::SyncFollowed(const ExportfsArgs& a) {
  int rc = kExitOk;
  libshare::Client* c = Connection(&rc);
  if (c == nullptr) return rc;
  absl::StatusOr<libshare::FollowSyncResult> r = c->FollowSync();
  if (!r.ok()) return CallFailed(r.status());
  if (r->files.empty() && a.verbose) {
    err() << "exportfs: no followed file exists (sharemgrd follows "
          << absl::StrJoin(r->patterns, ", ") << ")\n";
  }
  for (const libshare::FollowedFile& f : r->files) {
    if (!f.error.empty()) {
      err() << "exportfs: " << f.error << "\n";
      err() << "exportfs: " << f.path << ": not applied; group " << f.group
            << " keeps its last good state\n";
      rc = kExitRefused;
    } else if (a.verbose) {
      out() << "exporting " << f.path << " (group " << f.group << ", "
            << (f.changed ? "changed" : "unchanged") << ")\n";
    }
  }
  return rc;
}

int ExportfsRunner::UnexportAll(const ExportfsArgs& a) {
  int rc = kExitOk;
  libshare::Client* c = Connection(&rc);
  if (c == nullptr) return rc;
  absl::StatusOr<std::vector<libshare::GroupInfo>> groups = c->ListGroups();
  if (!groups.ok()) return CallFailed(groups.status());
  bool have = false;
  std::vector<std::string> others;
  for (const libshare::GroupInfo& g : *groups) {
    if (g.name == kExportfsGroup) {
      have = true;
    } else if (g.enabled && g.share_count > 0) {
      others.push_back(g.name);
    }
  }
  if (have) {
    absl::StatusOr<std::vector<libshare::ShareInfo>> shares =
        c->ListShares({kExportfsGroup});
    if (!shares.ok()) return CallFailed(shares.status());
    libshare::Batch b;
    b.origin = "exportfs -ua";
    for (const libshare::ShareInfo& s : *shares) {
      Operation op;
      op.type = Operation::Type::kRemoveShare;
      op.group = kExportfsGroup;
      op.path = s.path;
      b.ops.push_back(std::move(op));
      if (a.verbose) {
        absl::StatusOr<std::vector<ExportfsClient>> list =
            ParseClientList(s.description);
        for (const ExportfsClient& x :
             list.ok() ? *list : std::vector<ExportfsClient>{}) {
          out() << "unexporting " << x.spec << ":" << s.path << "\n";
        }
      }
    }
    if (!b.ops.empty()) {
      absl::StatusOr<libshare::BatchResult> r = c->Apply(b);
      if (!r.ok()) return CallFailed(r.status());
      if (!r->ok()) {
        for (const libshare::OperationError& e : r->errors) {
          err() << "exportfs: " << e.message << "\n";
        }
        if (!r->commit_error.empty()) {
          err() << "exportfs: commit failed, nothing changed: "
                << r->commit_error << "\n";
        }
        return kExitRefused;
      }
    }
  }
  if (!others.empty()) {
    err() << "exportfs: -ua removes only the exports of exportfs -o; the "
             "shares of groups "
          << absl::StrJoin(others, ", ")
          << " stay exported (sharectl disable GROUP stops them)\n";
  }
  return kExitOk;
}

int ExportfsRunner::Change(const ExportfsArgs& a) {
  std::vector<ClientPath> targets;
  for (const std::string& t : a.targets) {
    absl::StatusOr<ClientPath> cp = SplitClientPath(t);
    if (!cp.ok()) {
      err() << "exportfs: " << cp.status().message() << "\n";
      return kExitUsage;
    }
    targets.push_back(*std::move(cp));
  }
  int rc = kExitOk;
  libshare::Client* c = Connection(&rc);
  if (c == nullptr) return rc;
  absl::StatusOr<std::vector<libshare::GroupInfo>> groups = c->ListGroups();
  if (!groups.ok()) return CallFailed(groups.status());
  std::map<std::string, const libshare::GroupInfo*> group_by_name;
  for (const libshare::GroupInfo& g : *groups) group_by_name[g.name] = &g;
  absl::StatusOr<std::vector<libshare::ShareInfo>> shares = c->ListShares({});
  if (!shares.ok()) return CallFailed(shares.status());
  std::map<std::string, const libshare::ShareInfo*> share_by_path;
  for (const libshare::ShareInfo& s : *shares) share_by_path[s.path] = &s;

  // The clients of each touched path, as the call leaves them.
  std::map<std::string, std::vector<ExportfsClient>> touched;
  std::vector<std::string> problems;
  std::vector<std::string> done;  // -v: printed once committed
  for (const ClientPath& t : targets) {
    const std::string what = absl::StrCat(t.client, ":", t.path);
    auto s = share_by_path.find(t.path);
    if (s != share_by_path.end() && s->second->group != kExportfsGroup) {
      const std::string& group = s->second->group;
      auto g = group_by_name.find(group);
      if (g != group_by_name.end() && !g->second->managed_by.empty()) {
        const std::string& file = g->second->managed_by;
        problems.push_back(absl::StrCat(
            what, ": ", t.path, " is exported by ", file, " (group ", group,
            "): change ", file, a.unexport ? "" : " instead",
            " and run exportfs -r",
            a.unexport ? "; exportfs -r would export it again" : ""));
      } else {
        problems.push_back(absl::StrCat(
            what, ": ", t.path, " is shared by group ", group,
            ": change it with sharectl (exportfs changes only the group ",
            kExportfsGroup, ")"));
      }
      continue;
    }
    auto [it, added] = touched.try_emplace(t.path);
    if (added && s != share_by_path.end()) {
      absl::StatusOr<std::vector<ExportfsClient>> list =
          ParseClientList(s->second->description);
      if (!list.ok()) {
        problems.push_back(absl::StrCat(
            t.path, ": the description of this share of group ", kExportfsGroup,
            " does not list exports clients: ", list.status().message()));
        continue;
      }
      it->second = *std::move(list);
    }
    if (a.unexport) {
      if (!RemoveExportfsClient(&it->second, t.client)) {
        problems.push_back(
            absl::StrCat("Could not find '", what, "' to unexport."));
      } else {
        done.push_back("unexporting " + what);
      }
    } else {
      AddExportfsClient(&it->second, t.client, a.options.value_or(""));
      done.push_back("exporting " + what);
    }
  }

  libshare::Batch b;
  b.origin = absl::StrCat("exportfs", a.unexport ? " -u" : "",
                          a.options ? absl::StrCat(" -o ", *a.options) : "",
                          " ", absl::StrJoin(a.targets, " "));
  if (group_by_name.count(kExportfsGroup) == 0 && !a.unexport) {
    Operation create;
    create.type = Operation::Type::kCreateGroup;
    create.group = kExportfsGroup;
    b.ops.push_back(std::move(create));
  }
  for (const auto& [path, clients] : touched) {
    const bool exists = share_by_path.count(path) != 0;
    if (clients.empty()) {
      if (!exists) continue;
      Operation op;
      op.type = Operation::Type::kRemoveShare;
      op.group = kExportfsGroup;
      op.path = path;
      b.ops.push_back(std::move(op));
      continue;
    }
    // The same translation as a followed file's: options without an
    // equivalent that only narrow access are dropped, with a warning.
    libshare::ImportPlan plan = libshare::ImportExports(
        {{path, ExportsLine(path, clients)}}, kExportfsGroup);
    bool refused = false;
    for (const libshare::ImportProblem& p : plan.problems) {
      if (p.unsupported) {
        err() << "exportfs: " << path << ": " << p.message << " (dropped)\n";
      } else {
        problems.push_back(absl::StrCat(path, ": ", p.message));
        refused = true;
      }
    }
    if (refused || plan.ops.size() != 1) continue;
    Operation op;
    op.group = kExportfsGroup;
    op.path = path;
    op.options = plan.ops[0].options;
    op.description = FormatClientList(clients);
    if (exists) {
      op.type = Operation::Type::kModifyShare;
      op.set_options = true;
      op.set_description = true;
    } else {
      op.type = Operation::Type::kAddShare;
    }
    b.ops.push_back(std::move(op));
  }
  if (!problems.empty()) {
    for (const std::string& p : problems) err() << "exportfs: " << p << "\n";
    err() << "exportfs: nothing changed\n";
    return kExitRefused;
  }
  if (!b.ops.empty()) {
    absl::StatusOr<libshare::BatchResult> r = c->Apply(b);
    if (!r.ok()) return CallFailed(r.status());
    if (!r->ok()) {
      for (const libshare::OperationError& e : r->errors) {
        const std::string path =
            e.index < b.ops.size() ? b.ops[e.index].path.str() : std::string();
        err() << "exportfs: " << (path.empty() ? "" : path + ": ") << e.message
              << "\n";
      }
      if (!r->commit_error.empty()) {
        err() << "exportfs: commit failed: " << r->commit_error << "\n";
      }
      err() << "exportfs: nothing changed\n";
      return kExitRefused;
    }
  }
  if (a.verbose) {
    for (const std::string& line : done) out() << line << "\n";
  }
  return kExitOk;
}

bool ExportfsRunner::ReadFile(const std::string& path, std::string* text) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    err() << "exportfs: " << path << ": " << std::strerror(errno)
          << "; its exports are not listed\n";
    return false;
  }
  text->assign(std::istreambuf_iterator<char>(f), {});
  return !f.bad();
}

int ExportfsRunner::List(const ExportfsArgs& a) {
  int rc = kExitOk;
  libshare::Client* c = Connection(&rc);
  if (c == nullptr) return rc;
  absl::StatusOr<std::vector<libshare::GroupInfo>> groups = c->ListGroups();
  if (!groups.ok()) return CallFailed(groups.status());
  std::vector<std::string> names;
  std::size_t others = 0;  // shares of enabled groups edited with sharectl
  for (const libshare::GroupInfo& g : *groups) {
    if (!g.enabled) continue;
    if (g.name == kExportfsGroup || !g.managed_by.empty()) {
      names.push_back(g.name);
    } else {
      others += g.share_count;
    }
  }
  // exportfs lists every export; these have share_nfs options, not
  // exports(5) clients: say where they are rather than hide them.
  if (others > 0) {
    err() << "exportfs: " << others << (others == 1 ? " share" : " shares")
          << " of sharectl's own groups not listed (sharectl share lists "
             "them)\n";
  }
  // The options shown are those the daemon applies: its port check is
  // server-wide (--insecure).
  bool insecure = false;
  if (a.verbose || a.export_format) {
    absl::StatusOr<libshare::DaemonStats> st = c->Stats();
    if (!st.ok()) return CallFailed(st.status());
    insecure = st->insecure;
  }
  std::vector<libshare::ExportsClientView> views;
  if (names.empty()) {
    out() << FormatExportfsList(views, a.verbose, a.export_format, insecure);
    return kExitOk;
  }
  absl::StatusOr<std::vector<libshare::ShareInfo>> shares =
      c->ListShares(names);
  if (!shares.ok()) return CallFailed(shares.status());
  // What is served, with the options that apply: a share's exports(5)
  // text (its followed file read again, or the clients kept in the
  // description of a share of group exportfs) is listed when it
  // translates to the options the daemon serves; otherwise (the file
  // changed and was refused, a share edited with set-share) the clients
  // are read from the served options themselves (ServedClients). Shares
  // the daemon does not serve (file system gone) are not listed.
  // The followed files first (exportfs reads /etc/exports before its
  // table of transient exports), then the group of exportfs -o.
  std::vector<const libshare::GroupInfo*> order;
  for (const libshare::GroupInfo& g : *groups) {
    if (g.enabled && !g.managed_by.empty() && g.name != kExportfsGroup) {
      order.push_back(&g);
    }
  }
  for (const libshare::GroupInfo& g : *groups) {
    if (g.enabled && g.name == kExportfsGroup) order.push_back(&g);
  }
  for (const libshare::GroupInfo* gp : order) {
    const libshare::GroupInfo& g = *gp;
    absl::StatusOr<libshare::ShareOptions> group_options =
        libshare::ParseOptions(g.options);
    std::map<std::string, const libshare::ShareInfo*> active;
    for (const libshare::ShareInfo& s : *shares) {
      if (s.group != g.name || !s.active) continue;
      if (!s.not_served.empty()) {
        err() << "exportfs: " << s.path << ": not listed: not served ("
              << s.not_served << ")\n";
        continue;
      }
      active[s.path] = &s;
    }
    // The exports(5) text of this group's paths.
    std::vector<libshare::SourceFile> text;
    if (g.name == kExportfsGroup) {
      for (const auto& [path, s] : active) {
        absl::StatusOr<std::vector<ExportfsClient>> list =
            ParseClientList(s->description);
        if (list.ok()) text.push_back({path, ExportsLine(path, *list)});
      }
    } else {
      std::string file;
      if (ReadFile(g.managed_by, &file)) text.push_back({g.managed_by, file});
    }
    std::map<std::string, std::string> said;  // path -> options translated
    for (const libshare::SourceFile& f : text) {
      for (const Operation& op : libshare::ImportExports({f}, g.name).ops) {
        said[op.path.str()] = op.options.str();
      }
    }
    // The paths whose text says what is served.
    std::set<std::string> as_said;
    for (const auto& [path, s] : active) {
      absl::StatusOr<libshare::ShareOptions> served =
          libshare::ParseOptions(s->effective_options);
      if (!served.ok()) {
        err() << "exportfs: " << path << ": not listed: its options do not "
              << "parse: " << served.status().message() << "\n";
        continue;
      }
      auto it = said.find(path);
      if (it != said.end() && group_options.ok()) {
        absl::StatusOr<libshare::ShareOptions> own =
            libshare::ParseOptions(it->second);
        if (own.ok() &&
            libshare::InheritOptions(*group_options, *own) == *served) {
          as_said.insert(path);
          continue;
        }
      }
      if (g.name != kExportfsGroup) {
        err() << "exportfs: " << path << ": listed as served from an "
              << "earlier version of " << g.managed_by
              << (g.follow_error.empty()
                      ? ""
                      : absl::StrCat(" (", g.follow_error, ")"))
              << "\n";
      }
      std::vector<libshare::ExportsClientView> v = ServedClients(path, *served);
      views.insert(views.end(), v.begin(), v.end());
    }
    for (libshare::ExportsClientView& v :
         libshare::ExportsClients(text, nullptr)) {
      if (as_said.count(v.path) != 0) views.push_back(std::move(v));
    }
  }
  out() << FormatExportfsList(std::move(views), a.verbose, a.export_format,
                              insecure);
  return kExitOk;
}

}  // namespace

int RunExportfs(const std::vector<std::string>& args, const Environment& env,
                const std::string& socket) {
  absl::StatusOr<ExportfsArgs> a = ParseExportfsArgs(args);
  if (!a.ok()) {
    *env.err << "exportfs: " << a.status().message() << "\n";
    return kExitUsage;
  }
  if (a->help) {
    if (const CommandSpec* spec = FindCommand("exportfs")) {
      *env.out << CommandHelp(*spec);
    }
    return kExitOk;
  }
  ExportfsRunner runner(env, socket);
  return runner.Run(*a);
}

}  // namespace sharectl

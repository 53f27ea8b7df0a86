#include "importers.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "libshare/path.h"
#include "shell_words.h"

namespace sharectl {

using libshare::Operation;

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

// A word holding a control character (an exports "\012" escape, a quoted
// newline) would put it into a path or options, and `import --dry-run`
// would print a batch line that does not read back: the message naming the
// first such word, or nothing.
std::optional<std::string> ControlCharacterProblem(
    const std::vector<std::string>& words) {
  for (const std::string& w : words) {
    for (char c : w) {
      const auto u = static_cast<unsigned char>(c);
      if (u >= 0x20 && u != 0x7f) continue;
      std::string shown;
      for (char d : w) {
        const auto v = static_cast<unsigned char>(d);
        if (v < 0x20 || v == 0x7f) {
          absl::StrAppend(&shown, "\\", (v >> 6) & 7, (v >> 3) & 7, v & 7);
        } else {
          shown.push_back(d);
        }
      }
      return absl::StrCat("\"", shown,
                          "\": control characters are not allowed");
    }
  }
  return std::nullopt;
}

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

struct Client {
  std::string entry;  // share_nfs list entry, or "*"
  bool rw = false;    // exports(5) default: ro
  bool root = false;  // exports(5) default: root_squash
  std::optional<int64_t> anon;
  std::string sec = "sys";
  bool nohide = false;
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
  in6_addr a6{};
  if (spec.find(':') != std::string::npos &&
      inet_pton(AF_INET6, spec.c_str(), &a6) == 1) {
    // ":" separates list entries, so an IPv6 host is written as a /128.
    return absl::StrCat("@[", spec, "]/128");
  }
  return spec;
}

// Options of exports(5) that change nothing in share_nfs terms (they tune
// the Linux server, or repeat its default).
bool IsHarmlessOption(absl::string_view name) {
  static constexpr absl::string_view kHarmless[] = {
      "sync",          "async",         "wdelay",
      "no_wdelay",     "subtree_check", "no_subtree_check",
      "secure",        "hide",          "root_squash",
      "no_all_squash", "secure_locks",  "auth_nlm",
      "fsid",          "uuid",          "acl",
      "no_acl"};
  return std::find(std::begin(kHarmless), std::end(kHarmless), name) !=
         std::end(kHarmless);
}

// Why an exports(5) option has no equivalent.
std::optional<absl::string_view> UnsupportedReason(absl::string_view name) {
  static const std::map<absl::string_view, absl::string_view> kUnsupported = {
      {"insecure", " (sharemgrd --insecure is server-wide)"},
      {"crossmnt", ""},
      {"all_squash", ""},
      {"anongid", " (anon= maps the user id only)"},
      {"insecure_locks", ""},
      {"no_auth_nlm", ""},
      {"mountpoint", ""},
      {"mp", ""},
      {"refer", ""},
      {"replicas", ""},
      {"pnfs", ""},
      {"no_pnfs", ""},
      {"security_label", ""},
      {"xprtsec", ""},
      {"nordirplus", ""},
  };
  auto it = kUnsupported.find(name);
  if (it == kUnsupported.end()) return std::nullopt;
  return it->second;
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

void ApplyClientOptions(absl::string_view opts, Client* c, LineProblems* p) {
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
      c->rw = true;
    } else if (name == "ro" && !has_value) {
      c->rw = false;
    } else if (name == "no_root_squash" && !has_value) {
      c->root = true;
    } else if (name == "root_squash" && !has_value) {
      c->root = false;
    } else if (name == "anonuid") {
      int64_t uid;
      if (!absl::SimpleAtoi(value, &uid) || uid < -1 || uid > 0xFFFFFFFFLL) {
        p->Add(absl::StrCat("option \"", o, "\": bad user id"), false);
      } else {
        c->anon = uid;
      }
    } else if (name == "sec") {
      std::vector<std::string> modes;
      bool ok = !value.empty();
      for (absl::string_view m : absl::StrSplit(value, ':')) {
        if (m == "sys" || m == "none" || m == "krb5" || m == "krb5i" ||
            m == "krb5p") {
          modes.emplace_back(m);
        } else {
          p->Add(absl::StrCat("option \"", o, "\": security flavor \"", m,
                              "\" has no share_nfs equivalent"),
                 true);
          ok = false;
        }
      }
      if (ok) c->sec = absl::StrJoin(modes, ":");
    } else if (name == "nohide" && !has_value) {
      c->nohide = true;
    } else if (IsHarmlessOption(name)) {
      // Nothing to carry over.
    } else if (auto why = UnsupportedReason(name)) {
      p->Add(
          absl::StrCat("option \"", o, "\" has no share_nfs equivalent", *why),
          true);
    } else {
      p->Add(absl::StrCat("option \"", o, "\": unknown exports option"), false);
    }
  }
}

std::string BuildShareOptions(const ExportedPath& e, LineProblems* p) {
  std::vector<std::string> out;
  const std::string& sec = e.clients.front().sec;
  std::optional<int64_t> anon;
  bool nohide = false, rw_all = false, ro_all = false;
  std::vector<std::string> rw, ro, root;
  for (const Client& c : e.clients) {
    if (c.sec != sec) {
      p->Add(
          absl::StrCat(e.path, ": clients use different sec= lists (\"", sec,
                       "\" and \"", c.sec, "\"); share_nfs sets one per share"),
          true);
    }
    if (c.anon) {
      if (anon && *anon != *c.anon) {
        p->Add(absl::StrCat(e.path, ": clients use different anonuid= values (",
                            *anon, " and ", *c.anon,
                            "); share_nfs sets one per share"),
               true);
      } else {
        anon = c.anon;
      }
    }
    nohide |= c.nohide;
    if (c.entry == "*") {
      (c.rw ? rw_all : ro_all) = true;
    }
    if (c.root) root.push_back(c.entry);
  }
  for (const Client& c : e.clients) {
    if (c.entry == "*") continue;
    // A list entry that repeats the bare option adds nothing.
    if (c.rw && !rw_all) rw.push_back(c.entry);
    if (!c.rw && !ro_all && !rw_all) ro.push_back(c.entry);
    if (!c.rw && rw_all) ro.push_back(c.entry);
  }
  if (sec != "sys") out.push_back(absl::StrCat("sec=", sec));
  if (rw_all) out.push_back("rw");
  if (ro_all && !rw_all) out.push_back("ro");
  if (!rw.empty()) out.push_back(absl::StrCat("rw=", absl::StrJoin(rw, ":")));
  if (!ro.empty()) out.push_back(absl::StrCat("ro=", absl::StrJoin(ro, ":")));
  if (!root.empty()) {
    out.push_back(absl::StrCat("root=", absl::StrJoin(root, ":")));
  }
  if (anon) out.push_back(absl::StrCat("anon=", *anon));
  if (nohide) out.push_back("nohide");
  return absl::StrJoin(out, ",");
}

}  // namespace

ImportPlan ImportExports(const std::vector<SourceFile>& files,
                         const std::string& group) {
  ImportPlan plan;
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
      absl::StatusOr<std::string> path = libshare::NormalizePath(l.tokens[0]);
      if (!path.ok()) {
        p.Add(std::string(path.status().message()), false);
        continue;
      }
      auto [it, added] = index.emplace(*path, paths.size());
      if (added) paths.push_back({*path, p.where, {}});
      ExportedPath& e = paths[it->second];
      std::string defaults;
      std::vector<std::pair<std::string, std::string>> specs;
      bool any_client = false;
      for (size_t i = 1; i < l.tokens.size(); ++i) {
        const std::string& t = l.tokens[i];
        if (t[0] == '-') {
          defaults = t.substr(1);
          continue;
        }
        any_client = true;
        size_t open = t.find('(');
        if (open == std::string::npos) {
          specs.emplace_back(t, "");
          continue;
        }
        if (t.back() != ')') {
          p.Add(absl::StrCat("client \"", t, "\": missing \")\""), false);
          continue;
        }
        std::string spec = t.substr(0, open);
        specs.emplace_back(spec.empty() ? "*" : spec,
                           t.substr(open + 1, t.size() - open - 2));
      }
      if (!any_client) specs.emplace_back("*", "");
      for (auto& [spec, opts] : specs) {
        Client c;
        ApplyClientOptions(defaults, &c, &p);
        ApplyClientOptions(opts, &c, &p);
        bool unsupported = false;
        absl::StatusOr<std::string> entry = ClientEntry(spec, &unsupported);
        if (!entry.ok()) {
          p.Add(std::string(entry.status().message()), unsupported);
          continue;
        }
        c.entry = *entry;
        bool dup = false;
        for (const Client& old : e.clients) dup |= old.entry == c.entry;
        if (!dup) e.clients.push_back(std::move(c));
      }
    }
  }
  for (const ExportedPath& e : paths) {
    if (e.clients.empty()) continue;  // every client was refused
    LineProblems p{e.where, &plan.problems, {}};
    Operation op;
    op.type = Operation::Type::kAddShare;
    op.path = e.path;
    op.group = group;
    op.options = BuildShareOptions(e, &p);
    plan.ops.push_back(std::move(op));
    plan.origins.push_back(e.where);
  }
  return plan;
}

ImportPlan ImportDfstab(const std::vector<SourceFile>& files,
                        const std::string& group) {
  ImportPlan plan;
  for (const SourceFile& f : files) {
    for (const SplitLine& l : SplitShellLines(f.text)) {
      const std::string where = absl::StrCat(f.name, ":", l.line);
      const auto fail = [&](std::string why) {
        plan.problems.push_back({where, std::move(why), false});
      };
      if (!l.error.empty()) {
        fail(l.error);
        continue;
      }
      if (std::optional<std::string> bad = ControlCharacterProblem(l.words)) {
        fail(*std::move(bad));
        continue;
      }
      const std::vector<std::string>& w = l.words;
      std::string_view cmd = w[0];
      if (size_t slash = cmd.rfind('/'); slash != std::string_view::npos) {
        cmd = cmd.substr(slash + 1);
      }
      if (cmd != "share") {
        fail(absl::StrCat("\"", w[0], "\": not a share command"));
        continue;
      }
      Operation op;
      op.type = Operation::Type::kAddShare;
      op.group = group;
      std::vector<std::string> args;
      bool bad = false;
      for (size_t i = 1; i < w.size() && !bad; ++i) {
        const std::string& t = w[i];
        if (t.size() < 2 || t[0] != '-') {
          args.push_back(t);
          continue;
        }
        char flag = t[1];
        if (flag == 'p' && t.size() == 2) continue;  // persistent: always
        if (flag != 'F' && flag != 'o' && flag != 'd') {
          fail(absl::StrCat("unknown option \"", t, "\""));
          bad = true;
          break;
        }
        std::string value;
        if (t.size() > 2) {
          value = t.substr(2);
        } else if (i + 1 < w.size()) {
          value = w[++i];
        } else {
          fail(absl::StrCat("option \"", t, "\" needs a value"));
          bad = true;
          break;
        }
        if (flag == 'F' && value != "nfs") {
          fail(absl::StrCat("file system type \"", value,
                            "\": only nfs is supported"));
          bad = true;
        } else if (flag == 'o') {
          op.options = value;
        } else if (flag == 'd') {
          op.description = value;
        }
      }
      if (bad) continue;
      if (args.empty() || args.size() > 2) {
        fail("expected: share [-F nfs] [-o OPTS] [-d DESC] PATH [RESOURCE]");
        continue;
      }
      absl::StatusOr<std::string> path = libshare::NormalizePath(args[0]);
      if (!path.ok()) {
        fail(std::string(path.status().message()));
        continue;
      }
      op.path = *path;
      if (args.size() == 2 && args[1] != "-") op.resource = args[1];
      plan.ops.push_back(std::move(op));
      plan.origins.push_back(where);
    }
  }
  return plan;
}

}  // namespace sharectl

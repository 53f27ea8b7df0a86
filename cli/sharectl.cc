// sharectl's command runner: Run() reads the global options and hands the
// command to a Runner (runner.h). Here: dispatch, the connection and how
// a failure is reported, sending a batch (Apply), the changing commands
// and the commands that only read. `batch` is in batch_command.cc,
// `import` in import_command.cc, the --json change and error documents in
// json_report.cc.
#include "sharectl.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "batch_report.h"
#include "commands.h"
#include "dump.h"
#include "exportfs.h"
#include "json_writer.h"
#include "libshare/options.h"
#include "libshare/path.h"
#include "libshare/spelling.h"
#include "mounts.h"
#include "option_report.h"
#include "output.h"
#include "runner.h"

#ifndef SHARECTL_VERSION
#define SHARECTL_VERSION "unknown"
#endif

namespace sharectl {
namespace {

using libshare::Batch;
using libshare::BatchResult;
using libshare::Client;
using libshare::Operation;

// "; did you mean \"NAME\"?" for the group name closest to `typed`, or "".
std::string GroupSuggestion(const std::vector<libshare::GroupInfo>& all,
                            std::string_view typed) {
  std::vector<std::string_view> names;
  names.reserve(all.size());
  for (const libshare::GroupInfo& g : all) names.push_back(g.name);
  return libshare::DidYouMean(typed, names);
}

// The groups `names` names, in that order (all of them if `names` is
// empty); "group NAME does not exist" (the daemon's words for a change's
// group), with a suggestion, in *missing for each unknown one.
std::vector<libshare::GroupInfo> PickGroups(
    const std::vector<libshare::GroupInfo>& all,
    const std::vector<std::string>& names, std::vector<std::string>* missing) {
  if (names.empty()) return all;
  std::vector<libshare::GroupInfo> chosen;
  for (const auto& name : names) {
    auto it = std::find_if(all.begin(), all.end(),
                           [&](const auto& g) { return g.name == name; });
    if (it == all.end()) {
      missing->push_back(absl::StrCat("group ", name, " does not exist",
                                      GroupSuggestion(all, name)));
    } else {
      chosen.push_back(*it);
    }
  }
  return chosen;
}

// Whether the daemon runs its kernel mode (stats' kernel.mode), asked only
// for show -v's kernel notes. When its stats cannot be read the notes are
// shown: they say what would be lost, never that it is.
bool KernelModeOn(Client* c) {
  absl::StatusOr<libshare::DaemonStats> s = c->Stats();
  return !s.ok() || s->kernel.mode != "off";
}

}  // namespace

CallFailure ClassifyCallFailure(const absl::Status& s,
                                const std::string& socket) {
  const std::string m(s.message().data(), s.message().size());
  if (s.code() == absl::StatusCode::kUnavailable) {
    // The client's message usually names the socket already.
    if (absl::StrContains(m, socket)) {
      return {kExitUnreachable, "unreachable", m};
    }
    return {kExitUnreachable, "unreachable",
            absl::StrCat("cannot reach sharemgrd at ", socket, ": ", m)};
  }
  if (s.code() == absl::StatusCode::kPermissionDenied) {
    return {kExitRefused, "permission", m};
  }
  return {kExitRefused, "refused", m};
}

void Runner::SayFailure(std::string_view cmd, std::string_view message) {
  // Escaped here too: a message may quote what the user or the daemon
  // gave, and a control byte must not reach the terminal.
  err() << "sharectl: " << cmd << ": " << ShownForTerminal(message) << "\n";
}

int Runner::Fail(int code, std::string_view kind, std::string_view cmd,
                 std::string_view message) {
  SayFailure(cmd, message);
  if (!json_) return code;
  if (change_document_) {
    // A change keeps its document's shape however it fails, so that a
    // script reads .ok and .errors alike (sharectl(8), --json).
    ChangeOutcome o;
    o.dry_run = dry_run_;
    o.error_kind = std::string(kind);
    o.error_message = std::string(message);
    Problem p;
    p.command = std::string(cmd);
    p.message = std::string(message);
    out() << ChangeJson(o, {p});
  } else {
    out() << ErrorJson(kind, cmd, message);
  }
  return code;
}

int Runner::RefusedAll(std::string_view cmd,
                       const std::vector<std::string>& what) {
  for (const auto& m : what) SayFailure(cmd, m);
  if (json_) out() << ErrorJson("refused", cmd, absl::StrJoin(what, "; "));
  return kExitRefused;
}

int Runner::CallFailed(std::string_view cmd, const absl::Status& s) {
  const CallFailure f = ClassifyCallFailure(s, socket_);
  return Fail(f.code, f.kind, cmd, f.message);
}

absl::StatusOr<Client*> Runner::Connect() {
  if (client_) return client_.get();
  auto c = env_.connect ? env_.connect(socket_) : Client::Connect(socket_);
  if (!c.ok()) {
    // Unavailable, or PermissionDenied when the socket is not ours to
    // use: a refusal (exit 1), not an unreachable daemon (exit 3).
    return c.status().code() == absl::StatusCode::kPermissionDenied
               ? c.status()
               : absl::UnavailableError(c.status().message());
  }
  client_ = *std::move(c);
  return client_.get();
}

Client* Runner::Connection(std::string_view cmd, int* rc) {
  absl::StatusOr<Client*> c = Connect();
  if (!c.ok()) {
    *rc = CallFailed(cmd, c.status());
    return nullptr;
  }
  return *c;
}

std::string Runner::ProblemText(const std::vector<Problem>& problems,
                                std::string_view kind) const {
  return FormatProblems(problems, kind, all_errors_ ? 0 : kErrorsShownPerKind,
                        takes_all_errors_ ? "--all-errors" : "");
}

void Runner::ReportProblems(const std::vector<Problem>& problems) {
  err() << ProblemText(problems);
  if (!json_) return;
  ChangeOutcome o;  // nothing was sent
  o.dry_run = dry_run_;
  out() << ChangeJson(o, problems);
}

absl::StatusOr<std::vector<std::string>> Runner::GroupNames(
    std::string_view cmd, int* rc) {
  Client* c = Connection(cmd, rc);
  if (c == nullptr) return absl::UnavailableError("unreachable");
  auto groups = c->ListGroups();
  if (!groups.ok()) {
    *rc = CallFailed(cmd, groups.status());
    return groups.status();
  }
  std::vector<std::string> names;
  for (const auto& g : *groups) names.push_back(g.name);
  return names;
}

int Runner::Apply(std::string_view cmd, Batch batch, OriginOf origin_of,
                  bool progress, std::vector<Problem> problems,
                  BatchSummary* summary) {
  // Text the protocol cannot carry (a NUL byte) is refused here, like a
  // line that does not parse: the other operations are still checked by
  // the daemon, as a dry run, and come in the same report.
  // The usual batch has none: it is not copied.
  std::vector<std::size_t> kept;  // kept[i]: op i's index in the caller's
  if (std::any_of(batch.ops.begin(), batch.ops.end(), [](const Operation& op) {
        return !CheckOperationText(op).ok();
      })) {
    std::vector<Operation> ops;
    for (std::size_t j = 0; j < batch.ops.size(); ++j) {
      absl::Status bad = CheckOperationText(batch.ops[j]);
      if (bad.ok()) {
        kept.push_back(j);
        ops.push_back(std::move(batch.ops[j]));
        continue;
      }
      Problem& p = problems.emplace_back();
      p.index = j;
      p.origin = origin_of(j);
      p.command = std::string(libshare::OperationName(batch.ops[j].type));
      p.message = std::string(bad.message());
    }
    batch.ops = std::move(ops);
  }
  const auto caller_index = [&kept](std::size_t i) {
    return i < kept.size() ? kept[i] : i;
  };
  const bool parse_failed = !problems.empty();
  const bool asked_dry_run = batch.dry_run;
  if (parse_failed) batch.dry_run = true;  // nothing may be committed
  const auto start = std::chrono::steady_clock::now();
  auto elapsed_ms = [&start] {
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now() - start)
        .count();
  };
  std::optional<BatchResult> r;
  if (!batch.ops.empty()) {
    absl::StatusOr<Client*> connected = Connect();
    Client* c = connected.ok() ? *connected : nullptr;
    if (c == nullptr) {
      if (!parse_failed) return CallFailed(cmd, connected.status());
      // The bad lines are reported below, in one document.
      SayFailure(cmd, ClassifyCallFailure(connected.status(), socket_).message);
      err() << "sharectl: " << cmd
            << ": the lines that parsed were not checked\n";
    } else {
      if (progress) {
        err() << "sharectl: " << cmd << ": sending "
              << Counted(batch.ops.size(), "operation", "operations")
              << (batch.dry_run ? " (dry run)" : "") << std::endl;
      }
      absl::StatusOr<BatchResult> sent = c->Apply(batch);
      if (!sent.ok()) {
        if (!parse_failed) return CallFailed(cmd, sent.status());
        // The bad lines are reported below, in one document.
        err() << "sharectl: " << cmd << ": "
              << ShownForTerminal({sent.status().message().data(),
                                   sent.status().message().size()})
              << "\n";
      } else {
        r = *std::move(sent);
      }
    }
  }
  if (r.has_value()) {
    for (const auto& e : r->errors) {
      Problem& p = problems.emplace_back();
      p.index = caller_index(e.index);
      if (e.index < batch.ops.size()) {
        p.origin = origin_of(caller_index(e.index));
        p.command =
            std::string(libshare::OperationName(batch.ops[e.index].type));
      }
      p.message = e.message;
    }
    // A mistyped group gets the closest existing name (asked once, only
    // when some operation named a group that does not exist).
    std::optional<std::vector<libshare::GroupInfo>> groups;
    for (Problem& p : problems) {
      if (!absl::StartsWith(p.message, "group ") ||
          !absl::EndsWith(p.message, " does not exist")) {
        continue;
      }
      if (!groups.has_value()) {
        absl::StatusOr<Client*> c = Connect();
        absl::StatusOr<std::vector<libshare::GroupInfo>> all =
            c.ok()
                ? (*c)->ListGroups()
                : absl::StatusOr<std::vector<libshare::GroupInfo>>(c.status());
        groups =
            all.ok() ? *std::move(all) : std::vector<libshare::GroupInfo>{};
      }
      const std::string_view name = std::string_view(p.message).substr(
          6, p.message.size() - 6 - std::strlen(" does not exist"));
      p.message += GroupSuggestion(*groups, name);
    }
  }
  SortProblems(&problems);
  err() << ProblemText(problems);
  const std::string commit_error = r ? r->commit_error : "";
  std::vector<Problem> warnings = std::move(batch_warnings_);
  batch_warnings_.clear();
  if (problems.empty() && commit_error.empty() && !parse_failed &&
      !warnings.empty()) {
    SortProblems(&warnings);
    err() << ProblemText(warnings, "warning");
    for (const Problem& w : warnings) {
      warnings_.push_back({w.origin, absl::StrCat(w.command, ": ", w.message)});
    }
  }
  if (!commit_error.empty()) {
    err() << "sharectl: " << cmd
          << ": commit failed, nothing changed: " << commit_error << "\n";
  }
  const bool ok = problems.empty() && commit_error.empty() && !parse_failed;
  const uint64_t applied = r ? r->applied : 0;
  const uint64_t generation = r ? r->generation : 0;
  if (json_) {
    ChangeOutcome o;
    o.ok = ok;
    o.dry_run = asked_dry_run;
    o.applied = applied;
    // Checked by the daemon: the batch passes whole or not at all.
    if (r.has_value()) o.would_apply = ok ? batch.ops.size() : 0;
    o.generation = generation;
    o.commit_error = commit_error;
    out() << ChangeJson(o, problems);
  }
  if (progress && ok && !batch.dry_run) {
    err() << "sharectl: " << cmd << ": committed" << std::endl;
  }
  if (summary != nullptr) {
    summary->dry_run = asked_dry_run;
    summary->committed = ok && !batch.dry_run && applied > 0;
    summary->operations = ok && batch.dry_run ? batch.ops.size() : applied;
    summary->refused_lines = RefusedLines(problems);
    summary->errors = problems.size();
    summary->ms = elapsed_ms();
    summary->generation = generation;
    summary->commit_error = commit_error;
    err() << FormatSummary(*summary);
  } else if (ok && batch.dry_run) {
    err() << "sharectl: " << cmd << ": dry run passed, nothing changed ("
          << Counted(batch.ops.size(), "operation", "operations")
          << " would apply)\n";
  }
  if (r && r->store_unreachable) return kExitUnreachable;
  return ok ? kExitOk : kExitRefused;
}

int Runner::RunChange(const CommandSpec& spec,
                      const std::vector<std::string>& words) {
  absl::StatusOr<ChangeCommand> cmd = ParseChangeCommand(words);
  if (!cmd.ok()) {
    if (cmd.status().code() == absl::StatusCode::kInvalidArgument) {
      return Usage(spec.name, cmd.status().message());
    }
    return Refused(spec.name, cmd.status().message());
  }
  Batch batch;
  batch.ops = cmd->ops;
  if (cmd->all) {
    int rc = kExitOk;
    auto names = GroupNames(spec.name, &rc);
    if (!names.ok()) return rc;
    for (const auto& n : *names) {
      Operation op;
      op.type = cmd->all_type;
      op.group = n;
      batch.ops.push_back(std::move(op));
    }
    if (batch.ops.empty()) {  // no groups: nothing to do
      if (json_) {
        ChangeOutcome o;
        o.ok = true;
        o.dry_run = cmd->dry_run;
        o.would_apply = 0;
        out() << ChangeJson(o, {});
      }
      return kExitOk;
    }
  }
  // A group's options before `set` changes them, for its report.
  std::optional<std::string> old_group_options;
  const Operation* only = batch.ops.size() == 1 ? &batch.ops[0] : nullptr;
  if (only != nullptr && only->type == Operation::Type::kSetOptions &&
      only->path.empty()) {
    int rc = kExitOk;
    Client* c = Connection(spec.name, &rc);
    if (c == nullptr) return rc;
    auto groups = c->ListGroups();
    if (!groups.ok()) return CallFailed(spec.name, groups.status());
    for (const auto& g : *groups) {
      if (g.name == only->group) old_group_options = g.options;
    }
  }
  batch.dry_run = cmd->dry_run;
  batch.origin = std::string(spec.name);
  int rc = Apply(
      spec.name, batch, [](std::size_t) { return std::string("sharectl"); },
      false);
  if (rc == kExitOk && only != nullptr) {
    if (batch.dry_run && only->type == Operation::Type::kDeleteGroup) {
      ReportDeleteDryRun(only->group.str());
    }
    ReportChange(spec.name, *only, old_group_options);
  }
  return rc;
}

void Runner::ReportChange(std::string_view cmd, const Operation& op,
                          const std::optional<std::string>& old_group_options) {
  auto warn = [&](std::string_view who, std::string_view what) {
    err() << "sharectl: " << cmd << ": warning: " << who << ": " << what
          << "\n";
  };
  if (op.type == Operation::Type::kCreateGroup) {
    for (const std::string& c : OpenConcerns(op.options)) {
      warn("group " + op.group.str(),
           op.options.empty()
               ? c + " (no -o given; -o rw says so explicitly, -o ro or "
                     "-o rw=LIST narrow it)"
               : c);
    }
    return;
  }
  const bool share_options =
      (op.type == Operation::Type::kAddShare ||
       op.type == Operation::Type::kSetOptions ||
       (op.type == Operation::Type::kModifyShare && op.set_options)) &&
      !op.path.empty();
  const bool group_set =
      op.type == Operation::Type::kSetOptions && op.path.empty();
  const bool moved = op.type == Operation::Type::kMoveShare;
  if (!share_options && !group_set && !moved) return;
  int rc = kExitOk;
  Client* c = Connection(cmd, &rc);
  if (c == nullptr) return;
  if (moved) {
    // What the share has now, from its new group's listing (its own
    // options are not in the operation).
    auto shares = c->ListShares({op.group.str()});
    if (!shares.ok()) return;
    for (const auto& sh : *shares) {
      if (sh.path != op.path) continue;
      for (const std::string& w : OpenConcerns(sh.effective_options)) {
        warn(op.path, sh.options.empty()
                          ? w + " (group " + op.group.str() + "'s options)"
                          : w);
      }
    }
    return;
  }
  if (group_set) {
    for (const std::string& w : OpenConcerns(op.options)) {
      warn("group " + op.group.str(), w);
    }
    auto shares = c->ListShares({op.group.str()});
    if (!shares.ok() || !old_group_options) return;
    for (const std::string& line : KeptOwnValues(
             op.group.str(), *old_group_options, op.options.str(), *shares)) {
      err() << "sharectl: " << cmd << ": " << line << "\n";
    }
    return;
  }
  // The share's effective options from its group's (the groups are few:
  // listing the shares would cost O(N) per add-share).
  auto groups = c->ListGroups();
  if (!groups.ok()) return;
  std::string group_options;
  for (const auto& g : *groups) {
    if (g.name == op.group) group_options = g.options;
  }
  std::string effective = group_options;
  if (op.type != Operation::Type::kModifyShare || !op.group.empty()) {
    if (!op.options.empty()) {
      auto group = libshare::ParseOptions(group_options);
      auto own = libshare::ParseOptions(op.options);
      if (!group.ok() || !own.ok()) return;
      effective = libshare::InheritOptions(*group, *own).Canonical();
    }
  } else {
    // set-share without GROUP: the group is not known here (finding it
    // would list every share). What the own options open, they open
    // whatever the group says: an own property overrides the group's.
    effective = op.options;
  }
  for (const std::string& w : OpenConcerns(effective)) {
    warn(op.path.str(), op.options.empty() ? w + " (its group's options)" : w);
  }
}

void Runner::ReportDeleteDryRun(const std::string& group) {
  int rc = kExitOk;
  Client* c = Connection("delete", &rc);
  if (c == nullptr) return;
  auto groups = c->ListGroups();
  if (!groups.ok()) return;
  for (const libshare::GroupInfo& g : *groups) {
    if (g.name != group) continue;
    err() << "sharectl: delete: dry run: would remove group " << group
          << (g.share_count == 0
                  ? std::string(", which has no shares")
                  : absl::StrCat(" and its ",
                                 Counted(g.share_count, "share", "shares")))
          << "\n";
  }
}

int Runner::RunList(const ParsedArgs& a) {
  int rc = kExitOk;
  Client* c = Connection("list", &rc);
  if (c == nullptr) return rc;
  auto groups = c->ListGroups();
  if (!groups.ok()) return CallFailed("list", groups.status());
  if (!json_ && a.Has("-v")) {
    auto shares = c->ListShares({});
    if (!shares.ok()) return CallFailed("list", shares.status());
    out() << FormatList(*groups, *shares) << FormatNotServed(*shares);
    return kExitOk;
  }
  out() << (json_ ? FormatListJson(*groups) : FormatList(*groups, false));
  return kExitOk;
}

int Runner::RunShow(const ParsedArgs& a) {
  if (a.values.count("-s")) return RunShowShares(a);
  int rc = kExitOk;
  Client* c = Connection("show", &rc);
  if (c == nullptr) return rc;
  auto groups = c->ListGroups();
  if (!groups.ok()) return CallFailed("show", groups.status());
  std::vector<std::string> missing;
  std::vector<libshare::GroupInfo> chosen =
      PickGroups(*groups, a.args, &missing);
  if (!missing.empty()) return RefusedAll("show", missing);
  auto shares = c->ListShares(a.args);
  if (!shares.ok()) return CallFailed("show", shares.status());
  const bool verbose = a.Has("-v");
  out() << (json_ ? FormatShowJson(chosen, *shares)
                  : FormatShow(chosen, *shares, verbose,
                               verbose && KernelModeOn(c)));
  return kExitOk;
}

// show -s PATH...: the shares of those exact paths, each under its group,
// in the shape of `show GROUP`.
int Runner::RunShowShares(const ParsedArgs& a) {
  if (!a.args.empty()) {
    return Usage("show",
                 absl::StrCat("give -s PATH or group names, not both; "
                              "usage: show ",
                              std::string(FindCommand("show")->synopsis)));
  }
  std::vector<std::string> paths;
  for (const auto& text : a.values.at("-s")) {
    absl::StatusOr<std::string> p = libshare::NormalizePath(text);
    if (!p.ok()) return Refused("show", p.status().message());
    // Each share once, however often (or however spelled) it was named.
    if (std::find(paths.begin(), paths.end(), *p) != paths.end()) continue;
    paths.push_back(*std::move(p));
  }
  int rc = kExitOk;
  Client* c = Connection("show", &rc);
  if (c == nullptr) return rc;
  auto groups = c->ListGroups();
  if (!groups.ok()) return CallFailed("show", groups.status());
  auto shares = c->ListShares({});
  if (!shares.ok()) return CallFailed("show", shares.status());
  std::vector<libshare::ShareInfo> found;
  std::vector<std::string> missing;
  for (const std::string& path : paths) {
    const libshare::ShareInfo* exact = nullptr;
    const libshare::ShareInfo* around = nullptr;  // the nearest share above
    for (const auto& s : *shares) {
      if (s.path == path) exact = &s;
      if (absl::StartsWith(path, s.path) &&
          (s.path == "/" || path[s.path.size()] == '/') &&
          (around == nullptr || s.path.size() > around->path.size())) {
        around = &s;
      }
    }
    if (exact != nullptr) {
      found.push_back(*exact);
    } else if (around != nullptr) {
      missing.push_back(
          absl::StrCat(path, ": no such share (it is inside share ",
                       around->path, " of group ", around->group, ")"));
    } else {
      missing.push_back(absl::StrCat(path, ": no such share"));
    }
  }
  if (!missing.empty()) return RefusedAll("show", missing);
  std::vector<libshare::GroupInfo> chosen;
  for (const auto& g : *groups) {
    for (const auto& s : found) {
      if (s.group == g.name) {
        chosen.push_back(g);
        break;
      }
    }
  }
  const bool verbose = a.Has("-v");
  out() << (json_ ? FormatShowJson(chosen, found)
                  : FormatShow(chosen, found, verbose,
                               verbose && KernelModeOn(c)));
  return kExitOk;
}

int Runner::RunDump(const ParsedArgs& a) {
  int rc = kExitOk;
  Client* c = Connection("dump", &rc);
  if (c == nullptr) return rc;
  auto groups = c->ListGroups();
  if (!groups.ok()) return CallFailed("dump", groups.status());
  std::vector<std::string> missing;
  std::vector<libshare::GroupInfo> chosen =
      PickGroups(*groups, a.args, &missing);
  if (!missing.empty()) return RefusedAll("dump", missing);
  auto shares = c->ListShares(a.args);
  if (!shares.ok()) return CallFailed("dump", shares.status());
  const std::string text = FormatDump(chosen, *shares);
  if (json_) {
    JsonWriter w;
    w.BeginObject();
    w.StringMember("batch", text);
    w.EndObject();
    out() << w.str() << "\n";
  } else {
    out() << text;
  }
  return kExitOk;
}

int Runner::RunShare() {
  int rc = kExitOk;
  Client* c = Connection("share", &rc);
  if (c == nullptr) return rc;
  auto tab = c->Sharetab();
  if (!tab.ok()) return CallFailed("share", tab.status());
  out() << (json_ ? FormatSharetabJson(*tab) : FormatSharetab(*tab));
  return kExitOk;
}

int Runner::RunCheck(const ParsedArgs& a) {
  const std::string sec = a.Get("--sec");
  if (a.Has("--sec")) {
    bool known = false;
    for (std::string_view f : {"sys", "none", "dh", "krb5", "krb5i", "krb5p"}) {
      known |= sec == f;
    }
    if (!known) {
      return Usage("check",
                   absl::StrCat("--sec \"", sec,
                                "\": not a flavor (sys, none, dh, krb5, "
                                "krb5i, krb5p)"));
    }
  }
  absl::StatusOr<std::string> path = libshare::NormalizePath(a.args[1]);
  if (!path.ok()) return Refused("check", path.status().message());
  int rc = kExitOk;
  Client* c = Connection("check", &rc);
  if (c == nullptr) return rc;
  auto r = c->Check(a.args[0], *path, sec);
  if (!r.ok()) return CallFailed("check", r.status());
  // As a test would use it: 0 when the client may mount, 1 when refused;
  // refused, the document has its "error" as every exit 1 has.
  const bool refused = r->access == "none";
  if (!json_) {
    out() << FormatCheck(*r);
  } else {
    JsonWriter w;
    w.BeginObject();
    WriteCheckMembers(*r, &w);
    if (refused) WriteErrorMember("refused", "check", r->reason, &w);
    w.EndObject();
    out() << w.str() << "\n";
  }
  return refused ? kExitRefused : kExitOk;
}

int Runner::RunStats() {
  int rc = kExitOk;
  Client* c = Connection("stats", &rc);
  if (c == nullptr) return rc;
  auto s = c->Stats();
  if (!s.ok()) return CallFailed("stats", s.status());
  out() << (json_ ? FormatStatsJson(*s) : FormatStats(*s));
  if (!json_) {
    // The followed exports files (list -j shows the same per group).
    auto groups = c->ListGroups();
    if (!groups.ok()) return CallFailed("stats", groups.status());
    out() << FormatFollowed(s->followed, *groups);
  }
  return kExitOk;
}

int Runner::RunMounts() {
  int rc = kExitOk;
  Client* c = Connection("mounts", &rc);
  if (c == nullptr) return rc;
  auto m = c->Mounts();
  if (!m.ok()) return CallFailed("mounts", m.status());
  out() << (json_ ? FormatMountsJson(*m) : FormatMounts(*m));
  return kExitOk;
}

int Runner::RunCacheFlush(const ParsedArgs& a) {
  if (a.args[0] != "flush") {
    return Usage("cache", absl::StrCat("unknown subcommand \"", a.args[0],
                                       "\"; usage: cache flush"));
  }
  int rc = kExitOk;
  Client* c = Connection("cache", &rc);
  if (c == nullptr) return rc;
  if (absl::Status s = c->FlushCache(); !s.ok()) return CallFailed("cache", s);
  if (json_) out() << "{\"ok\":true}\n";
  return kExitOk;
}

int Runner::RunRerecord(const ParsedArgs& a) {
  if (!a.Has("-s")) {
    return Usage("rerecord", "give -s PATH; usage: rerecord -s PATH...");
  }
  std::vector<std::string> paths;
  for (const auto& text : a.values.at("-s")) {
    absl::StatusOr<std::string> p = libshare::NormalizePath(text);
    if (!p.ok()) return Refused("rerecord", p.status().message());
    if (std::find(paths.begin(), paths.end(), *p) != paths.end()) continue;
    paths.push_back(*std::move(p));
  }
  int rc = kExitOk;
  Client* c = Connection("rerecord", &rc);
  if (c == nullptr) return rc;
  absl::StatusOr<std::vector<std::string>> lines = c->Rerecord(paths);
  if (!lines.ok()) return CallFailed("rerecord", lines.status());
  if (json_) {
    JsonWriter w;
    w.BeginObject();
    w.Key("recorded");
    w.BeginArray();
    for (const std::string& l : *lines) w.String(l);
    w.EndArray();
    w.EndObject();
    out() << w.str() << "\n";
  } else {
    for (const std::string& l : *lines) out() << ShownForTerminal(l) << "\n";
  }
  return kExitOk;
}

int Runner::RunChanges(const ParsedArgs& a) {
  if (!a.Has("--since")) {
    return Usage("changes",
                 absl::StrCat("option --since is required; usage: changes ",
                              std::string(FindCommand("changes")->synopsis)));
  }
  uint64_t since = 0;
  if (!absl::SimpleAtoi(a.Get("--since"), &since)) {
    return Usage("changes", absl::StrCat("--since \"", a.Get("--since"),
                                         "\": not a generation number"));
  }
  ChangesView view;
  view.summary = a.Has("--summary");
  view.limit = json_ ? 0 : kDefaultChangesLimit;
  if (a.Has("--limit") && !absl::SimpleAtoi(a.Get("--limit"), &view.limit)) {
    return Usage("changes",
                 absl::StrCat("--limit \"", ShownWord(a.Get("--limit")),
                              "\": not a number of lines (0: all)"));
  }
  int rc = kExitOk;
  Client* c = Connection("changes", &rc);
  if (c == nullptr) return rc;
  absl::StatusOr<libshare::ChangeList> changes = c->ChangesSince(since);
  if (!changes.ok()) return CallFailed("changes", changes.status());
  out() << (json_ ? FormatChangesJson(*changes, view)
                  : FormatChanges(*changes, view));
  return kExitOk;
}

int Runner::Dispatch(const CommandSpec& spec,
                     const std::vector<std::string>& words) {
  absl::StatusOr<ParsedArgs> parsed =
      ParseArgs(spec, std::vector<std::string>(words.begin() + 1, words.end()));
  command_ = std::string(spec.name);
  change_document_ = TakesDryRun(spec);
  if (!parsed.ok()) return Usage(spec.name, parsed.status().message());
  dry_run_ = parsed->DryRun();
  takes_all_errors_ =
      std::any_of(spec.options.begin(), spec.options.end(),
                  [](const OptionSpec& o) { return o.name == "--all-errors"; });
  all_errors_ = parsed->Has("--all-errors");
  if (parsed->help) {
    out() << CommandHelp(spec);
    return kExitOk;
  }
  if (spec.changes) return RunChange(spec, words);
  const std::string_view n = spec.name;
  if (n == "list") return RunList(*parsed);
  if (n == "show") return RunShow(*parsed);
  if (n == "dump") return RunDump(*parsed);
  if (n == "share") return RunShare();
  if (n == "check") return RunCheck(*parsed);
  if (n == "stats") return RunStats();
  if (n == "mounts") return RunMounts();
  if (n == "cache") return RunCacheFlush(*parsed);
  if (n == "rerecord") return RunRerecord(*parsed);
  if (n == "batch") return RunBatch(*parsed);
  if (n == "import") return RunImport(*parsed);
  if (n == "changes") return RunChanges(*parsed);
  return Usage(n, "not implemented");
}

int Run(const std::vector<std::string>& args, const Environment& env) {
  std::string socket = env.socket_from_env.empty()
                           ? libshare::kDefaultSocketPath
                           : env.socket_from_env;
  // The global options --socket and --json may come before or after the
  // command (not after a "--"); --help and --version only before it.
  bool json = false;
  bool socket_given = false;  // on the command line (SHARECTL_SOCKET aside)
  std::string dry_run;        // "-n" or "--dry-run" before the command
  std::vector<std::string> words;  // the command and its own words
  std::string usage_error;
  bool only_args = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (only_args) {
      words.push_back(a);
      continue;
    }
    if (a == "--json") {
      json = true;
    } else if (a == "--socket" || a.rfind("--socket=", 0) == 0) {
      std::string value;
      if (a != "--socket") {
        value = a.substr(9);  // --socket=PATH
      } else if (i + 1 >= args.size()) {
        usage_error = "option \"--socket\" needs a value (PATH)";
        break;
      } else {
        value = args[++i];
      }
      if (socket_given) {
        usage_error = absl::StrCat("option \"--socket\" given twice (\"",
                                   ShownWord(socket), "\" and \"",
                                   ShownWord(value), "\"); give it once");
        break;
      }
      socket_given = true;
      socket = std::move(value);
    } else if (!words.empty()) {
      if (a == "--") only_args = true;
      words.push_back(a);
    } else if (a == "-n" || a == "--dry-run") {
      dry_run = a;  // the command's own -n (see below)
    } else if (a == "--help" || a == "-h") {
      *env.out << GlobalHelp();
      return kExitOk;
    } else if (a == "--version") {
      *env.out << "sharectl " << SHARECTL_VERSION << "\n";
      return kExitOk;
    } else if (!a.empty() && a[0] == '-') {
      std::vector<std::string_view> names;
      for (const auto& o : GlobalOptions()) names.push_back(o.name);
      const std::string name = a.substr(0, a.find('='));
      const std::string hint = libshare::DidYouMean(name, names);
      usage_error = absl::StrCat("unknown option \"", ShownWord(a), "\"",
                                 hint.empty() ? "; see sharectl --help" : hint);
      break;
    } else {
      words.push_back(a);
    }
  }
  const auto usage = [&](const std::string& message) {
    *env.err << "sharectl: " << ShownForTerminal(message) << "\n";
    if (json) *env.out << ErrorJson("usage", "", message);
    return kExitUsage;
  };
  if (!usage_error.empty()) return usage(usage_error);
  if (words.empty()) return usage("missing command; see sharectl --help");
  if (!dry_run.empty()) {
    // "sharectl -n COMMAND ..." is "sharectl COMMAND -n ...".
    const CommandSpec* spec = FindCommand(words[0]);
    if (spec == nullptr || !TakesDryRun(*spec)) {
      return usage(absl::StrCat("option \"", dry_run,
                                "\" (dry run) goes with a changing command, "
                                "batch or import; \"",
                                ShownWord(words[0]), "\" is not one"));
    }
    words.insert(words.begin() + 1, dry_run);
  }
  if (words[0] == "help") {  // as --help, or COMMAND --help
    if (words.size() == 1) {
      *env.out << GlobalHelp();
      return kExitOk;
    }
    const CommandSpec* spec =
        words.size() == 2 ? FindCommand(words[1]) : nullptr;
    if (spec == nullptr && words.size() == 2) {
      std::vector<std::string_view> names;
      for (const auto& c : Commands()) names.push_back(c.name);
      const std::string hint = libshare::DidYouMean(words[1], names);
      return usage(absl::StrCat("help: unknown command \"", ShownWord(words[1]),
                                "\"",
                                hint.empty() ? "; see sharectl --help" : hint));
    }
    if (spec == nullptr) {
      return usage("help: give one command; usage: help [COMMAND]");
    }
    *env.out << CommandHelp(*spec);
    return kExitOk;
  }
  if (socket.empty()) return usage("empty socket path");
  if (words[0] == "exportfs") {
    // exportfs(8)'s own flags ("-ra", "-orw"): not sharectl's parser.
    if (json) {
      // exportfs(8)'s output is text; the same facts come as JSON from
      // show, share and stats.
      const std::string m =
          "--json is not supported (sharectl --json show, share or stats "
          "give the same facts)";
      *env.err << "sharectl: exportfs: " << m << "\n";
      *env.out << ErrorJson("usage", "exportfs", m);
      return kExitUsage;
    }
    return RunExportfs(std::vector<std::string>(words.begin() + 1, words.end()),
                       env, socket);
  }
  const CommandSpec* spec = FindCommand(words[0]);
  if (spec == nullptr) {
    std::vector<std::string_view> names;
    for (const auto& c : Commands()) names.push_back(c.name);
    const std::string hint = libshare::DidYouMean(words[0], names);
    return usage(absl::StrCat("unknown command \"", ShownWord(words[0]), "\"",
                              hint.empty() ? "; see sharectl --help" : hint));
  }
  Runner runner(env, socket, json);
  return runner.Dispatch(*spec, words);
}

}  // namespace sharectl

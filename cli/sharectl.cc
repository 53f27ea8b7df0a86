#include "sharectl.h"

#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <set>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "batch_file.h"
#include "batch_report.h"
#include "commands.h"
#include "dump.h"
#include "exportfs.h"
#include "json_writer.h"
#include "libshare/heap_reserve.h"
#include "libshare/import.h"
#include "libshare/options.h"
#include "libshare/path.h"
#include "libshare/shell_words.h"
#include "libshare/spelling.h"
#include "mounts.h"
#include "option_report.h"
#include "output.h"

#ifndef SHARECTL_VERSION
#define SHARECTL_VERSION "unknown"
#endif

namespace sharectl {
namespace {

using libshare::Batch;
using libshare::BatchResult;
using libshare::Client;
using libshare::Operation;

constexpr char kDefaultImportGroup[] = "imported";

// A warning that did not stop the command (an import option dropped by
// --skip-unsupported): where and why.
struct Warning {
  std::string origin;
  std::string message;
};

// The origin of operation i of a batch being sent, asked only for an i
// below the number of its operations.
using OriginOf = absl::FunctionRef<std::string(std::size_t)>;

// An origin as JSON: {"file", "line"} (either may be null), or null for
// an operation sharectl made itself or one from the command line.
// `batch_file` is the file that a bare line number refers to.
void WriteOrigin(const std::string& origin, const std::string& batch_file,
                 JsonWriter* w) {
  const auto digits = [](std::string_view t) {
    return !t.empty() && t.size() < 10 &&
           t.find_first_not_of("0123456789") == std::string_view::npos;
  };
  w->Key("origin");
  if (origin.empty() || origin == "sharectl") {
    w->Null();
    return;
  }
  std::string file;
  std::string line;
  if (digits(origin)) {
    file = batch_file;
    line = origin;
  } else if (size_t colon = origin.rfind(':');
             colon != std::string::npos && digits(origin.substr(colon + 1))) {
    file = origin.substr(0, colon);
    line = origin.substr(colon + 1);
  } else {
    file = origin;
  }
  w->BeginObject();
  w->OptionalStringMember("file", file);
  w->Key("line");
  if (line.empty()) {
    w->Null();
  } else {
    w->Uint(std::stoul(line));
  }
  w->EndObject();
}

// The "error" member of every document printed for a failure: kind is
// "usage" (exit 2), "refused" or "permission" (exit 1), "unreachable"
// (exit 3).
void WriteError(std::string_view kind, std::string_view command,
                std::string_view message, JsonWriter* w) {
  w->Key("error");
  w->BeginObject();
  w->Key("kind");
  w->String(kind);
  w->OptionalStringMember("command", command);
  w->StringMember("message", message);
  w->EndObject();
}

std::string ErrorJson(std::string_view kind, std::string_view command,
                      std::string_view message) {
  JsonWriter w;
  w.BeginObject();
  WriteError(kind, command, message, &w);
  w.EndObject();
  return w.str() + "\n";
}

// The groups `names` names, in that order (all of them if `names` is
// empty); "NAME: no such group" in *missing for each unknown one.
std::vector<libshare::GroupInfo> PickGroups(
    const std::vector<libshare::GroupInfo>& all,
    const std::vector<std::string>& names, std::vector<std::string>* missing) {
  if (names.empty()) return all;
  std::vector<libshare::GroupInfo> chosen;
  for (const auto& name : names) {
    auto it = std::find_if(all.begin(), all.end(),
                           [&](const auto& g) { return g.name == name; });
    if (it == all.end()) {
      missing->push_back(absl::StrCat(name, ": no such group"));
    } else {
      chosen.push_back(*it);
    }
  }
  return chosen;
}

// A batch file this big or bigger is announced to the daemon before it is
// read (Runner::AnnounceBatch): about 45,000 add-share lines. At 15,000
// (0.8 MB) announcing gained nothing end to end: the daemon's memory took
// 4 instead of 11 ms, but the client, faulting in its own memory while the
// daemon warmed, took 1-6 ms longer; at 100,000 (4.5 MB) a batch took 341
// instead of 414 ms (bench/JOURNAL.md, "A batch announced before it is
// parsed"). After the daemon idled 3 s (its freed memory gone back to the
// host), announcing at 15,000 cut the daemon's memory step from 28 to 8 ms
// (medians) but the batch only from 90 to 88 ms: 40 rounds each, "Announcing
// 15,000 adds after an idle spell".
constexpr std::size_t kAnnounceFileBytes = std::size_t{2} << 20;

// One run of one command: its streams, socket and output mode.
class Runner {
 public:
  Runner(const Environment& env, std::string socket, bool json)
      : env_(env), socket_(std::move(socket)), json_(json) {}

  int Dispatch(const CommandSpec& spec, const std::vector<std::string>& words);

 private:
  std::ostream& out() { return *env_.out; }
  std::ostream& err() { return *env_.err; }

  // Prints "sharectl: CMD: MESSAGE" on stderr and, with --json, the error
  // document on stdout; returns the exit code.
  int Fail(int code, std::string_view kind, std::string_view cmd,
           std::string_view message) {
    // Escaped here too: a message may quote what the user or the daemon
    // gave, and a control byte must not reach the terminal.
    err() << "sharectl: " << cmd << ": " << ShownForTerminal(message) << "\n";
    if (json_) out() << ErrorJson(kind, cmd, message);
    return code;
  }
  int Usage(std::string_view cmd, absl::string_view message) {
    return Fail(kExitUsage, "usage", cmd, {message.data(), message.size()});
  }
  int Refused(std::string_view cmd, absl::string_view message) {
    return Fail(kExitRefused, "refused", cmd, {message.data(), message.size()});
  }
  // Several refusals: one line each on stderr, one error document.
  int RefusedAll(std::string_view cmd, const std::vector<std::string>& what) {
    for (const auto& m : what)
      err() << "sharectl: " << cmd << ": " << ShownForTerminal(m) << "\n";
    if (json_) out() << ErrorJson("refused", cmd, absl::StrJoin(what, "; "));
    return kExitRefused;
  }
  // Maps a client call's failure to a message and an exit code.
  int CallFailed(std::string_view cmd, const absl::Status& s) {
    const std::string_view m(s.message().data(), s.message().size());
    if (s.code() == absl::StatusCode::kUnavailable) {
      // The client's message usually names the socket already.
      if (absl::StrContains(s.message(), socket_)) {
        return Fail(kExitUnreachable, "unreachable", cmd, m);
      }
      return Fail(kExitUnreachable, "unreachable", cmd,
                  absl::StrCat("cannot reach sharemgrd at ", socket_, ": ",
                               s.message()));
    }
    if (s.code() == absl::StatusCode::kPermissionDenied) {
      return Fail(kExitRefused, "permission", cmd, m);
    }
    return Refused(cmd, s.message());
  }
  // Says to the daemon that a big batch follows (PREPARE_BATCH), before
  // `file` is read and parsed, so that it makes the batch's memory ready
  // meanwhile. On a connection of its own, closed at once: the batch's
  // own is opened when it is sent, as before (a PREPARE that failed, or a
  // long parse, cannot leave it broken or idle). Quiet: a daemon that
  // cannot be reached or refuses is told nothing, and the batch then
  // fails or goes as it would have.
  void AnnounceBatch(const std::string& file) {
    struct stat st;
    if (::stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
        static_cast<std::size_t>(st.st_size) < kAnnounceFileBytes ||
        static_cast<std::size_t>(st.st_size) > env_.max_input_bytes) {
      return;
    }
    auto c = env_.connect ? env_.connect(socket_) : Client::Connect(socket_);
    if (!c.ok()) return;
    // An add-share line of a home folder (45 bytes) is about 64 bytes
    // encoded; shorter lines weigh more.
    const auto size = static_cast<std::size_t>(st.st_size);
    (void)(*c)->PrepareBatch(size + size / 2);
  }

  // Connects once; on failure prints why and sets *rc.
  Client* Connection(std::string_view cmd, int* rc) {
    if (client_) return client_.get();
    auto c = env_.connect ? env_.connect(socket_) : Client::Connect(socket_);
    if (!c.ok()) {
      // Unavailable, or PermissionDenied when the socket is not ours to
      // use: a refusal (exit 1), not an unreachable daemon (exit 3).
      *rc = CallFailed(cmd, c.status().code() == absl::StatusCode::kPermissionDenied
                                ? c.status()
                                : absl::UnavailableError(c.status().message()));
      return nullptr;
    }
    client_ = *std::move(c);
    return client_.get();
  }

  // One line per problem on stderr, and with --json the same as the
  // document Apply() prints for a refused batch.
  void ReportProblems(const std::vector<Problem>& problems) {
    err() << FormatProblems(problems);
    if (!json_) return;
    out() << ChangeJson(false, 0, 0, "", problems);  // nothing was sent
  }

  // The document a changing command prints with --json, whether the batch
  // was refused before sending (problems without index), by the daemon,
  // or committed. It has "error" exactly when the command fails.
  // With import --dry-run --json it also holds the batch text ("batch").
  std::string ChangeJson(bool ok, uint64_t applied, uint64_t generation,
                         const std::string& commit_error,
                         const std::vector<Problem>& problems,
                         bool dry_run = false) const;

  int RunChange(const CommandSpec& spec, const std::vector<std::string>& words);
  // Warnings and notes on stderr after one committed change: options that
  // open to every client; for a group's `set`, the shares that keep their
  // own value of a changed property.
  void ReportChange(std::string_view cmd, const Operation& op,
                    const std::optional<std::string>& old_group_options);
  int RunList(const ParsedArgs& a);
  int RunShow(const ParsedArgs& a);
  int RunShowShares(const ParsedArgs& a);
  int RunDump(const ParsedArgs& a);
  int RunShare();
  int RunCheck(const ParsedArgs& a);
  int RunStats();
  int RunMounts();
  int RunCacheFlush(const ParsedArgs& a);
  int RunBatch(const ParsedArgs& a);
  int RunImport(const ParsedArgs& a);
  int RunChanges(const ParsedArgs& a);

  // Sends ops as one batch. origin_of(i) prefixes operation i's errors
  // ("FILE:12" for a batch line, "/etc/exports:3", or "sharectl"); it is
  // asked only for the operations reported.
  // `problems` are bad lines found before sending: the other lines are
  // then sent as a dry run, so that every bad line is reported in one run
  // (sorted by FILE:LINE) and nothing is committed. With `summary`, one
  // summary line ends the report (label and lines set by the caller).
  int Apply(std::string_view cmd, Batch batch, OriginOf origin_of,
            bool progress, std::vector<Problem> problems = {},
            BatchSummary* summary = nullptr);
  // Group names the daemon knows, for enable -a and import.
  absl::StatusOr<std::vector<std::string>> GroupNames(std::string_view cmd,
                                                      int* rc);

  const Environment& env_;
  const std::string socket_;
  const bool json_;
  std::unique_ptr<Client> client_;
  // import --dry-run --json: the batch text, put in the one document.
  std::optional<std::string> json_batch_text_;
  std::string command_;     // the command being run, for error documents
  std::string batch_file_;  // batch's FILE ("-": standard input)
  std::vector<Warning> warnings_;
  // Warnings about the operations of the batch being applied (options
  // open to every client), said by Apply once it is committed or passes
  // as a dry run.
  std::vector<Problem> batch_warnings_;
};

// The options of `batch` that open to every client: one warning per
// operation and concern, the same text for the same concern so that
// FormatProblems collapses a table's worth of them.
std::vector<Problem> OpenWarnings(const Batch& batch, OriginOf origin_of) {
  std::vector<Problem> out;
  for (std::size_t i = 0; i < batch.ops.size(); ++i) {
    const Operation& op = batch.ops[i];
    const bool own_options =
        op.type == Operation::Type::kCreateGroup ||
        op.type == Operation::Type::kSetOptions ||
        ((op.type == Operation::Type::kAddShare ||
          (op.type == Operation::Type::kModifyShare && op.set_options)) &&
         !op.options.empty());
    if (!own_options) continue;
    for (const std::string& c : OpenConcerns(op.options)) {
      Problem& p = out.emplace_back();
      p.origin = origin_of(i);
      p.command = std::string(libshare::OperationName(op.type));
      p.index = i;
      p.message = absl::StrCat(
          "warning: ", c,
          op.type == Operation::Type::kCreateGroup && op.options.empty()
              ? " (no -o given; -o rw says so explicitly)"
              : "");
    }
  }
  return out;
}

std::string Runner::ChangeJson(bool ok, uint64_t applied, uint64_t generation,
                               const std::string& commit_error,
                               const std::vector<Problem>& problems,
                               bool dry_run) const {
  JsonWriter w;
  w.BeginObject();
  if (json_batch_text_) w.StringMember("batch", *json_batch_text_);
  w.Key("ok");
  w.Bool(ok);
  w.Key("dry_run");
  w.Bool(dry_run);
  w.Key("applied");
  w.Uint(applied);
  w.Key("generation");
  if (generation > 0) {
    w.Uint(generation);
  } else {
    w.Null();  // the daemon was not asked (nothing to send)
  }
  w.Key("errors");
  w.BeginArray();
  for (const auto& p : problems) {
    w.BeginObject();
    w.Key("index");
    if (p.index) {
      w.Uint(*p.index);
    } else {
      w.Null();
    }
    WriteOrigin(p.origin, batch_file_, &w);
    w.OptionalStringMember("command", p.command);
    w.StringMember("message", p.message);
    w.EndObject();
  }
  w.EndArray();
  w.Key("warnings");
  w.BeginArray();
  for (const auto& warning : warnings_) {
    w.BeginObject();
    WriteOrigin(warning.origin, batch_file_, &w);
    w.StringMember("message", warning.message);
    w.EndObject();
  }
  w.EndArray();
  w.OptionalStringMember("commit_error", commit_error);
  if (!ok) {
    std::string message = commit_error;
    if (message.empty()) {
      message = absl::StrCat(problems.size(),
                             problems.size() == 1 ? " problem" : " problems",
                             ", nothing applied");
    }
    WriteError("refused", command_, message, &w);
  }
  w.EndObject();
  return w.str() + "\n";
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
    int rc = kExitOk;
    Client* c = Connection(cmd, &rc);
    if (c == nullptr) {
      if (!parse_failed) return rc;
      err() << "sharectl: " << cmd
            << ": the lines that parsed were not checked\n";
    } else {
      if (progress) {
        err() << "sharectl: " << cmd << ": sending " << batch.ops.size()
              << " operations" << (batch.dry_run ? " (dry run)" : "")
              << std::endl;
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
  }
  SortProblems(&problems);
  err() << FormatProblems(problems);
  const std::string commit_error = r ? r->commit_error : "";
  std::vector<Problem> warnings = std::move(batch_warnings_);
  batch_warnings_.clear();
  if (problems.empty() && commit_error.empty() && !parse_failed &&
      !warnings.empty()) {
    SortProblems(&warnings);
    err() << FormatProblems(warnings, "warning");
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
    out() << ChangeJson(ok, applied, generation, commit_error, problems,
                        asked_dry_run);
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
          << batch.ops.size()
          << (batch.ops.size() == 1 ? " operation" : " operations")
          << " would apply)\n";
  }
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
      if (json_) out() << ChangeJson(true, 0, 0, "", {});
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
  if (rc == kExitOk && only != nullptr)
    ReportChange(spec.name, *only, old_group_options);
  return rc;
}

void Runner::ReportChange(std::string_view cmd, const Operation& op,
                          const std::optional<std::string>& old_group_options) {
  auto warn = [&](const std::string& who, const std::string& what) {
    err() << "sharectl: " << cmd << ": warning: " << who << ": " << what
          << "\n";
  };
  if (op.type == Operation::Type::kCreateGroup) {
    for (const std::string& c : OpenConcerns(op.options)) {
      warn("group " + op.group,
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
    auto shares = c->ListShares({op.group});
    if (!shares.ok()) return;
    for (const auto& sh : *shares) {
      if (sh.path != op.path) continue;
      for (const std::string& w : OpenConcerns(sh.effective_options)) {
        warn(op.path, sh.options.empty()
                          ? w + " (group " + op.group + "'s options)"
                          : w);
      }
    }
    return;
  }
  if (group_set) {
    for (const std::string& w : OpenConcerns(op.options)) {
      warn("group " + op.group, w);
    }
    auto shares = c->ListShares({op.group});
    if (!shares.ok() || !old_group_options) return;
    for (const std::string& line :
         KeptOwnValues(op.group, *old_group_options, op.options, *shares)) {
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
    return;  // set-share without GROUP: the group is not known here
  }
  for (const std::string& w : OpenConcerns(effective)) {
    warn(op.path, op.options.empty() ? w + " (its group's options)" : w);
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
  out() << (json_ ? FormatShowJson(chosen, *shares)
                  : FormatShow(chosen, *shares, a.Has("-v")));
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
  out() << (json_ ? FormatShowJson(chosen, found)
                  : FormatShow(chosen, found, a.Has("-v")));
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
  out() << (json_ ? FormatCheckJson(*r) : FormatCheck(*r));
  // As a test would use it: 0 when the client may mount, 1 when refused.
  return r->access == "none" ? kExitRefused : kExitOk;
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
    out() << FormatFollowed(*groups);
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

// All of `in` into `text` (after what it holds), in blocks: an
// istreambuf_iterator copy costs a call per byte (12% of sharectl's CPU
// for a 15,000-line batch). False if it stopped because `text` grew past
// `limit` bytes.
bool ReadAll(std::istream& in, std::string* text, std::size_t limit) {
  char block[1 << 16];
  while (in.read(block, sizeof block) || in.gcount() > 0) {
    text->append(block, static_cast<size_t>(in.gcount()));
    if (text->size() > limit) return false;
  }
  return true;
}

std::string TooLong(absl::string_view name, std::size_t limit) {
  return absl::StrCat(name, ": longer than ",
                      limit >= (std::size_t{1} << 20)
                          ? absl::StrCat(limit >> 20, " MiB")
                          : absl::StrCat(limit, " bytes"),
                      ", the most sharemgrd accepts in one call; "
                      "nothing was sent or changed: split it into smaller "
                      "files (each batch is its own transaction)");
}

// The file's text, the parsed operations and the encoded call take about
// 7 bytes of heap per byte of a batch file (15,000 adds: 825 KB of file,
// 1,400 pages first touched); made resident in one go before reading
// (libshare/heap_reserve.h).
constexpr std::size_t kReservePerFileByte = 8;

// With `reserve`, a regular file's heap is reserved in it (see above),
// before its text is read.
bool ReadWholeFile(const std::string& path, std::string* text,
                   std::string* error, std::size_t limit,
                   std::optional<libshare::HeapReserve>* reserve = nullptr) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    *error = absl::StrCat(path, ": ", std::strerror(errno));
    return false;
  }
  text->clear();
  // Room for a regular file's size: a 15,000-line batch file was copied
  // through four regrowths, each into fresh pages.
  struct stat st;
  const bool known = ::stat(path.c_str(), &st) == 0;
  if (known && S_ISDIR(st.st_mode)) {
    *error = absl::StrCat(path, ": ", std::strerror(EISDIR));
    return false;
  }
  if (known && S_ISREG(st.st_mode)) {
    if (static_cast<std::size_t>(st.st_size) > limit) {
      *error = TooLong(path, limit);
      return false;
    }
    if (reserve != nullptr) {
      reserve->emplace(static_cast<std::size_t>(st.st_size) *
                       kReservePerFileByte);
    }
    text->reserve(static_cast<std::size_t>(st.st_size));
  }
  if (!ReadAll(f, text, limit)) {
    *error = TooLong(path, limit);
    return false;
  }
  if (f.bad()) {
    *error = absl::StrCat(path, ": read error");
    return false;
  }
  return true;
}

int Runner::RunBatch(const ParsedArgs& a) {
  std::string text;
  const std::string& file = a.args[0];
  batch_file_ = file;
  // Held until the batch is sent (standard input's size is not known).
  std::optional<libshare::HeapReserve> reserve;
  if (file == "-") {
    if (!ReadAll(*env_.in, &text, env_.max_input_bytes)) {
      return Refused("batch",
                     TooLong("standard input", env_.max_input_bytes));
    }
  } else {
    AnnounceBatch(file);
    std::string error;
    if (!ReadWholeFile(file, &text, &error, env_.max_input_bytes,
                       &reserve)) {
      return Refused("batch", error);
    }
  }
  // Errors and the summary name lines as FILE:LINE.
  const std::string where = file == "-" ? "<stdin>" : file;
  BatchFile parsed = ParseBatchFile(text, where);
  // Said once the file is parsed (a few ms for 15,000 lines): the number
  // of commands is known only then.
  const bool progress =
      env_.interactive && parsed.commands > kProgressThreshold;
  if (progress) {
    err() << "sharectl: batch: parsing " << parsed.commands << " commands"
          << std::endl;
  }
  Batch batch;
  batch.dry_run = a.DryRun();
  batch.origin = absl::StrCat("batch ", where);
  batch.ops = std::move(parsed.ops);
  std::vector<int> op_lines = std::move(parsed.op_lines);
  BatchSummary summary;
  summary.label = absl::StrCat("batch ", where);
  summary.lines = parsed.commands;
  if (!parsed.all.empty()) {
    int rc = kExitOk;
    auto names = GroupNames("batch", &rc);
    if (!names.ok()) {
      if (!parsed.bad.empty()) ReportProblems(parsed.bad);
      return rc;
    }
    // -a means every group that exists at that point of the batch.
    std::vector<Operation> expanded;
    std::vector<int> expanded_lines;
    std::vector<std::string> known = *names;
    size_t next_all = 0;
    for (size_t i = 0; i < batch.ops.size(); ++i) {
      if (next_all < parsed.all.size() && parsed.all[next_all].first == i) {
        for (const auto& g : known) {
          Operation op;
          op.type = parsed.all[next_all].second;
          op.group = g;
          expanded.push_back(std::move(op));
          expanded_lines.push_back(op_lines[i]);
        }
        ++next_all;
        continue;
      }
      Operation& op = batch.ops[i];
      if (op.type == Operation::Type::kCreateGroup) known.push_back(op.group);
      if (op.type == Operation::Type::kDeleteGroup) {
        known.erase(std::remove(known.begin(), known.end(), op.group),
                    known.end());
      }
      expanded.push_back(std::move(op));
      expanded_lines.push_back(op_lines[i]);
    }
    batch.ops = std::move(expanded);
    op_lines = std::move(expanded_lines);
  }
  const auto origin_of = [&](std::size_t i) {
    return absl::StrCat(where, ":", op_lines[i]);
  };
  batch_warnings_ = OpenWarnings(batch, origin_of);
  return Apply("batch", std::move(batch), origin_of, progress,
               std::move(parsed.bad), &summary);
}

// The files an --exports argument names: the file, the *.exports files of
// a folder, or the matches of a glob pattern.
bool ExpandExportsArgument(const std::string& arg,
                           std::vector<std::string>* files,
                           std::string* error) {
  struct stat st;
  std::string pattern;
  if (stat(arg.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) {
      files->push_back(arg);
      return true;
    }
    pattern = arg + "/*.exports";
  } else if (arg.find_first_of("*?[") != std::string::npos) {
    pattern = arg;
  } else {
    *error = absl::StrCat(arg, ": ", std::strerror(errno));
    return false;
  }
  glob_t g{};
  int rc = glob(pattern.c_str(), 0, nullptr, &g);
  if (rc == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) files->push_back(g.gl_pathv[i]);
  }
  globfree(&g);
  if (rc != 0 && rc != GLOB_NOMATCH) {
    *error = absl::StrCat(pattern, ": cannot list files");
    return false;
  }
  if (rc == GLOB_NOMATCH && pattern == arg) {
    // A pattern the user typed that names nothing is as wrong as a
    // missing file (a typo must not pass as "nothing to import").
    *error = absl::StrCat(arg, ": no file matches");
    return false;
  }
  return true;  // a folder with no *.exports file imports nothing
}

int Runner::RunImport(const ParsedArgs& a) {
  const bool exports = a.values.count("--exports") != 0;
  const bool dfstab = a.values.count("--dfstab") != 0;
  if (exports == dfstab) {
    return Usage("import", exports ? "give --exports FILE or --dfstab FILE, "
                                     "not both (one import per format)"
                                   : "give --exports FILE or --dfstab FILE");
  }
  if (dfstab && a.Has("--skip-unsupported")) {
    return Usage("import", "--skip-unsupported goes with --exports");
  }
  std::vector<std::string> names;
  for (const auto& arg : a.values.at(exports ? "--exports" : "--dfstab")) {
    std::string error;
    if (!exports) {
      names.push_back(arg);
    } else if (!ExpandExportsArgument(arg, &names, &error)) {
      return Refused("import", error);
    }
  }
  std::vector<libshare::SourceFile> files;
  for (const auto& n : names) {
    libshare::SourceFile f{n, ""};
    std::string error;
    if (!ReadWholeFile(n, &f.text, &error, env_.max_input_bytes)) {
      return Refused("import", error);
    }
    files.push_back(std::move(f));
  }
  const std::string group =
      a.Has("-g") ? a.Get("-g") : std::string(kDefaultImportGroup);
  // Refused up front, not as a create that fails and the add-shares after
  // it that name a group that does not exist.
  if (absl::Status s = libshare::ValidateGroupName(group); !s.ok()) {
    return Usage("import", absl::StrCat("-g: ", s.message()));
  }
  libshare::ImportPlan plan = exports ? libshare::ImportExports(files, group)
                                      : libshare::ImportDfstab(files, group);

  const bool skip = a.Has("--skip-unsupported");
  std::vector<Problem> stopping;
  for (const auto& p : plan.problems) {
    if (!p.unsupported || !skip) {
      stopping.push_back({p.where, "", p.message});
    } else {
      err() << p.where << ": " << p.message << " (skipped)\n";
      warnings_.push_back({p.where, absl::StrCat(p.message, " (skipped)")});
    }
  }
  if (!stopping.empty()) {
    bool any_unsupported = false;
    for (const auto& p : plan.problems) any_unsupported |= p.unsupported;
    if (any_unsupported && !skip) {
      err() << "sharectl: import: nothing applied; --skip-unsupported drops "
               "options that have no share_nfs equivalent\n";
    }
  }
  for (const auto& w : plan.warnings) {
    err() << w.where << ": warning: " << w.message << "\n";
    warnings_.push_back({w.where, w.message});
  }
  if (plan.ops.empty() && stopping.empty()) {
    err() << "sharectl: import: no shares found\n";
    warnings_.push_back({"", "no shares found"});
    if (json_) out() << ChangeJson(true, 0, 0, "", {});
    return kExitOk;
  }

  // The group is created in the same batch unless it exists.
  const bool dry_run = a.DryRun();
  bool group_exists = false;
  bool reachable = true;
  {
    int rc = kExitOk;
    auto c = env_.connect ? env_.connect(socket_) : Client::Connect(socket_);
    absl::StatusOr<std::vector<libshare::GroupInfo>> groups =
        c.ok() ? (*c)->ListGroups()
               : absl::StatusOr<std::vector<libshare::GroupInfo>>(c.status());
    if (groups.ok()) {
      for (const auto& g : *groups) group_exists |= g.name == group;
      client_ = *std::move(c);
    } else if (dry_run) {
      // A dry run works without a daemon: it then assumes a new group,
      // and says that nothing was checked.
      reachable = false;
    } else {
      rc = CallFailed("import",
                      absl::UnavailableError(groups.status().message()));
      if (!stopping.empty()) {
        SortProblems(&stopping);
        ReportProblems(stopping);
        return kExitRefused;
      }
      return rc;
    }
  }
  Batch batch;
  batch.dry_run = dry_run;
  batch.origin = absl::StrCat("import ", exports ? "--exports" : "--dfstab");
  for (const auto& n : names) absl::StrAppend(&batch.origin, " ", n);
  std::vector<std::string> origins;
  if (!group_exists) {
    Operation create;
    create.type = Operation::Type::kCreateGroup;
    create.group = group;
    batch.ops.push_back(std::move(create));
    origins.push_back("sharectl");
  }
  for (size_t i = 0; i < plan.ops.size(); ++i) {
    batch.ops.push_back(plan.ops[i]);
    origins.push_back(plan.origins[i]);
  }
  if (dry_run) {
    std::string text =
        absl::StrCat("# sharectl import ", exports ? "--exports" : "--dfstab",
                     " (dry run): ", batch.ops.size(), " operations\n");
    for (size_t i = 0; i < batch.ops.size(); ++i) {
      absl::StrAppend(&text,
                      libshare::JoinShellWords(OperationWords(batch.ops[i])));
      if (origins[i] != "sharectl") {
        std::string where = origins[i];
        std::replace(where.begin(), where.end(), '\n', '?');
        absl::StrAppend(&text, "  # ", where);
      }
      text += "\n";
    }
    if (json_) {
      json_batch_text_ = text;
    } else {
      out() << text;
    }
    if (!reachable) {
      SortProblems(&stopping);
      err() << FormatProblems(stopping);
      err() << "sharectl: import: dry run not checked: cannot reach sharemgrd "
               "at "
            << socket_ << "\n";
      if (json_) {
        out() << ChangeJson(stopping.empty(), 0, 0, "", stopping, true);
      }
      return stopping.empty() ? kExitOk : kExitRefused;
    }
  }
  std::set<std::string> entries(plan.origins.begin(), plan.origins.end());
  for (const auto& p : stopping) entries.insert(p.origin);
  BatchSummary summary;
  summary.label = "import";
  summary.lines = entries.size();
  const bool progress =
      env_.interactive && batch.ops.size() > kProgressThreshold;
  return Apply(
      "import", std::move(batch), [&](std::size_t i) { return origins[i]; },
      progress, std::move(stopping), &summary);
}

int Runner::RunChanges(const ParsedArgs& a) {
  if (!a.Has("--since")) {
    return Usage("changes",
                 "option --since is required; usage: changes "
                 "--since GENERATION");
  }
  uint64_t since = 0;
  if (!absl::SimpleAtoi(a.Get("--since"), &since)) {
    return Usage("changes", absl::StrCat("--since \"", a.Get("--since"),
                                         "\": not a generation number"));
  }
  int rc = kExitOk;
  Client* c = Connection("changes", &rc);
  if (c == nullptr) return rc;
  absl::StatusOr<libshare::ChangeList> changes = c->ChangesSince(since);
  if (!changes.ok()) return CallFailed("changes", changes.status());
  out() << (json_ ? FormatChangesJson(*changes) : FormatChanges(*changes));
  return kExitOk;
}

int Runner::Dispatch(const CommandSpec& spec,
                     const std::vector<std::string>& words) {
  absl::StatusOr<ParsedArgs> parsed =
      ParseArgs(spec, std::vector<std::string>(words.begin() + 1, words.end()));
  command_ = std::string(spec.name);
  if (!parsed.ok()) return Usage(spec.name, parsed.status().message());
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
  if (n == "batch") return RunBatch(*parsed);
  if (n == "import") return RunImport(*parsed);
  if (n == "changes") return RunChanges(*parsed);
  return Usage(n, "not implemented");
}

}  // namespace

int Run(const std::vector<std::string>& args, const Environment& env) {
  std::string socket = env.socket_from_env.empty()
                           ? libshare::kDefaultSocketPath
                           : env.socket_from_env;
  // The global options --socket and --json may come before or after the
  // command (not after a "--"); --help and --version only before it.
  bool json = false;
  bool socket_given = false;  // on the command line (SHARECTL_SOCKET aside)
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
  if (socket.empty()) return usage("empty socket path");
  if (words[0] == "exportfs") {
    // exportfs(8)'s own flags ("-ra", "-orw"): not sharectl's parser.
    if (json) return usage("exportfs: --json is not supported");
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

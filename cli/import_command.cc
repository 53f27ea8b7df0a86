// `sharectl import {--exports FILE | --dfstab FILE}`: the files read and
// turned into share operations by libshare's importers (import.h), sent
// as one batch that also creates the group unless it exists. Here too:
// --skip-unsupported, and a --dry-run that prints the batch and works
// without a daemon.
#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "batch_report.h"
#include "input_file.h"
#include "libshare/import.h"
#include "libshare/path.h"
#include "libshare/shell_words.h"
#include "output.h"
#include "runner.h"

namespace sharectl {
namespace {

using libshare::Batch;
using libshare::Client;
using libshare::Operation;

constexpr char kDefaultImportGroup[] = "imported";

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

// The files that import's arguments name, in `names`, and their text, in
// `files`; with --exports (`exports`) each argument is expanded as above.
// False, with the refusal in `error`, at the first that cannot be listed
// or read (nothing is read before every argument is expanded).
bool ReadImportFiles(const std::vector<std::string>& args, bool exports,
                     std::size_t limit, std::vector<std::string>* names,
                     std::vector<libshare::SourceFile>* files,
                     std::string* error) {
  for (const auto& arg : args) {
    if (!exports) {
      names->push_back(arg);
    } else if (!ExpandExportsArgument(arg, names, error)) {
      return false;
    }
  }
  for (const auto& n : *names) {
    libshare::SourceFile f{n, ""};
    if (!ReadWholeFile(n, &f.text, error, limit)) return false;
    files->push_back(std::move(f));
  }
  return true;
}

// The batch an import sends: `group` created first unless it exists,
// then the plan's operations. (*origins)[i] is where operation i came
// from ("sharectl" for the group's creation). `flag` is "--exports" or
// "--dfstab", `names` the files read, for the batch's origin.
Batch ImportBatch(const libshare::ImportPlan& plan, const std::string& group,
                  bool group_exists, bool dry_run, const char* flag,
                  const std::vector<std::string>& names,
                  std::vector<std::string>* origins) {
  Batch batch;
  batch.dry_run = dry_run;
  batch.origin = absl::StrCat("import ", flag);
  for (const auto& n : names) {
    absl::StrAppend(&batch.origin, " ", AbsoluteName(n));
  }
  if (!group_exists) {
    Operation create;
    create.type = Operation::Type::kCreateGroup;
    create.group = group;
    batch.ops.push_back(std::move(create));
    origins->push_back("sharectl");
  }
  for (size_t i = 0; i < plan.ops.size(); ++i) {
    batch.ops.push_back(plan.ops[i]);
    origins->push_back(plan.origins[i]);
  }
  return batch;
}

// What import --dry-run prints: a header line, then each operation as a
// batch-file line with its origin as a comment.
std::string DryRunText(const Batch& batch,
                       const std::vector<std::string>& origins,
                       const char* flag) {
  std::string text =
      absl::StrCat("# sharectl import ", flag, " (dry run): ",
                   Counted(batch.ops.size(), "operation", "operations"), "\n");
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
  return text;
}

}  // namespace

std::vector<Problem> Runner::ImportStoppingProblems(
    const libshare::ImportPlan& plan, bool skip) {
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
  return stopping;
}

int Runner::LookUpImportGroup(const std::string& group, bool dry_run,
                              std::vector<Problem>* stopping,
                              bool* group_exists, bool* reachable) {
  auto c = env_.connect ? env_.connect(socket_) : Client::Connect(socket_);
  absl::StatusOr<std::vector<libshare::GroupInfo>> groups =
      c.ok() ? (*c)->ListGroups()
             : absl::StatusOr<std::vector<libshare::GroupInfo>>(c.status());
  if (groups.ok()) {
    for (const auto& g : *groups) *group_exists |= g.name == group;
    client_ = *std::move(c);
    return kExitOk;
  }
  if (dry_run) {
    // A dry run works without a daemon: it then assumes a new group,
    // and says that nothing was checked.
    *reachable = false;
    return kExitOk;
  }
  const absl::Status why = absl::UnavailableError(groups.status().message());
  if (stopping->empty()) return CallFailed("import", why);
  // The bad entries come in the one document.
  SayFailure("import", ClassifyCallFailure(why, socket_).message);
  SortProblems(stopping);
  ReportProblems(*stopping);
  return kExitRefused;
}

int Runner::EndUncheckedImport(std::vector<Problem> stopping) {
  SortProblems(&stopping);
  err() << ProblemText(stopping);
  err() << "sharectl: import: dry run not checked: cannot reach sharemgrd "
           "at "
        << socket_ << "\n";
  if (json_) {
    ChangeOutcome o;  // would_apply stays null: no daemon checked it
    o.ok = stopping.empty();
    o.dry_run = true;
    out() << ChangeJson(o, stopping);
  }
  return stopping.empty() ? kExitOk : kExitRefused;
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
  const char* const flag = exports ? "--exports" : "--dfstab";
  std::vector<std::string> names;
  std::vector<libshare::SourceFile> files;
  if (std::string error;
      !ReadImportFiles(a.values.at(flag), exports, env_.max_input_bytes, &names,
                       &files, &error)) {
    return Refused("import", error);
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
  std::vector<Problem> stopping =
      ImportStoppingProblems(plan, a.Has("--skip-unsupported"));
  if (plan.ops.empty() && stopping.empty()) {
    err() << "sharectl: import: no shares found\n";
    warnings_.push_back({"", "no shares found"});
    if (json_) {
      ChangeOutcome o;
      o.ok = true;
      o.dry_run = a.DryRun();
      o.would_apply = 0;
      out() << ChangeJson(o, {});
    }
    return kExitOk;
  }

  // The group is created in the same batch unless it exists.
  const bool dry_run = a.DryRun();
  bool group_exists = false;
  bool reachable = true;
  if (int rc = LookUpImportGroup(group, dry_run, &stopping, &group_exists,
                                 &reachable);
      rc != kExitOk) {
    return rc;
  }
  std::vector<std::string> origins;
  Batch batch =
      ImportBatch(plan, group, group_exists, dry_run, flag, names, &origins);
  if (dry_run) {
    std::string text = DryRunText(batch, origins, flag);
    if (json_) {
      json_batch_text_ = text;
    } else {
      out() << text;
    }
    if (!reachable) return EndUncheckedImport(std::move(stopping));
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

}  // namespace sharectl

#include "exports_follow.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <chrono>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "libshare/file_read.h"
#include "libshare/import.h"
#include "libshare/path.h"

namespace sharemgrd {
namespace {

using libshare::Operation;

// A followed file bigger than this is refused (a 15,000-line exports file
// is about 1 MiB).
constexpr std::size_t kMaxFileBytes = 64 << 20;
// Dropped options logged per version of a file (the rest are counted).
constexpr std::size_t kDropsLogged = 3;

bool HasGlob(std::string_view s) {
  return s.find_first_of("*?[") != std::string_view::npos;
}

// Who may write what the daemon follows: root, or the daemon's own user.
// A file or folder that anyone else may write lets them grant themselves
// any share (`/x *(rw,no_root_squash)` planted in a world-writable
// exports.d was applied within 200 ms): refused, naming it and why.
// Group write is allowed only to group root; the sticky bit does not help
// (anyone may still add a file of their own).
absl::Status CheckTrusted(const struct stat& st, const std::string& name,
                          std::string_view what) {
  const uid_t self = ::geteuid();
  if (st.st_uid != 0 && st.st_uid != self) {
    return absl::PermissionDeniedError(absl::StrCat(
        name, ": ", std::string(what), " is owned by uid ", st.st_uid,
        ", not root: not followed (its owner could grant themselves any "
        "share)"));
  }
  if ((st.st_mode & S_IWOTH) != 0) {
    return absl::PermissionDeniedError(absl::StrCat(
        name, ": ", std::string(what),
        " is writable by every user: not followed (anyone could grant "
        "themselves any share)"));
  }
  if ((st.st_mode & S_IWGRP) != 0 && st.st_gid != 0) {
    return absl::PermissionDeniedError(absl::StrCat(
        name, ": ", std::string(what), " is writable by group ", st.st_gid,
        ": not followed (its members could grant themselves any share)"));
  }
  return absl::OkStatus();
}

absl::Status CheckTrustedFolder(const std::string& folder) {
  struct stat st {};
  if (::stat(folder.c_str(), &st) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(folder, ": cannot examine: ", ::strerror(errno)));
  }
  return CheckTrusted(st, folder, "the folder");
}

// The file's text; "" with *missing set when it does not exist. The file
// (a link's target too) and the folders it and its target are in must be
// trusted (CheckTrusted).
absl::StatusOr<std::string> ReadFollowed(const std::string& path,
                                         bool* missing) {
  *missing = false;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) {
      *missing = true;
      return std::string();
    }
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": cannot open: ", ::strerror(errno)));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": cannot examine: ", ::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": not a regular file"));
  }
  if (absl::Status s = CheckTrusted(st, path, "the file"); !s.ok()) return s;
  const std::string folder = path.substr(0, std::max<std::size_t>(1, path.rfind('/')));
  if (absl::Status s = CheckTrustedFolder(folder); !s.ok()) return s;
  // A link: its target's folder too (whoever may write it may replace
  // the target).
  char target[PATH_MAX];
  const std::string self = absl::StrCat("/proc/self/fd/", fd);
  const ssize_t n = ::readlink(self.c_str(), target, sizeof target - 1);
  if (n > 0) {
    const std::string real(target, static_cast<std::size_t>(n));
    const std::string real_folder =
        real.substr(0, std::max<std::size_t>(1, real.rfind('/')));
    if (real_folder != folder) {
      if (absl::Status s = CheckTrustedFolder(real_folder); !s.ok()) {
        return absl::PermissionDeniedError(
            absl::StrCat(path, " (a link to ", real, "): ", s.message()));
      }
    }
  }
  absl::StatusOr<std::string> text = libshare::ReadFromStart(fd, kMaxFileBytes);
  if (!text.ok()) {
    return absl::FailedPreconditionError(
        absl::IsOutOfRange(text.status())
            ? absl::StrCat(path, ": bigger than ", kMaxFileBytes >> 20, " MiB")
            : absl::StrCat(path, ": cannot read: ", text.status().message()));
  }
  return text;
}

}  // namespace

absl::StatusOr<FollowPattern> ParseFollowPattern(const std::string& arg) {
  const auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("\"", arg, "\": ", why));
  };
  if (arg.empty() || arg[0] != '/') return bad("not an absolute path");
  if (arg.back() == '/') return bad("names a folder, not a file");
  std::size_t slash = arg.rfind('/');
  FollowPattern p;
  p.folder = slash == 0 ? "/" : arg.substr(0, slash);
  p.name = arg.substr(slash + 1);
  if (HasGlob(p.folder)) {
    return bad("only the file name may be a pattern, not its folder");
  }
  if (p.name == "." || p.name == "..") return bad("names a folder");
  absl::StatusOr<std::string> folder = libshare::NormalizePath(p.folder);
  if (!folder.ok()) return bad(folder.status().message());
  p.folder = *folder;
  p.glob = HasGlob(p.name);
  return p;
}

absl::StatusOr<std::string> FollowGroupName(const std::string& path) {
  std::string name = path.substr(path.rfind('/') + 1);
  std::string group;
  if (name == "exports") {
    group = "exports";
  } else {
    if (absl::EndsWith(name, ".exports") && name.size() > 8) {
      name.resize(name.size() - 8);
    }
    // Group names take A-Z a-z 0-9 _ - only.
    for (char& c : name) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' &&
          c != '-') {
        c = '_';
      }
    }
    group = absl::StrCat("exports-", name);
  }
  if (absl::Status s = libshare::ValidateGroupName(group); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": its group name \"", group, "\" is not valid: ", s.message()));
  }
  return group;
}

std::vector<Operation> FollowDiff(
    const std::string& group, const std::vector<libshare::ShareInfo>& current,
    const std::vector<Operation>& wanted, std::vector<int>* origin) {
  std::map<std::string_view, int> want;  // path -> index in wanted
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    want.emplace(wanted[i].path, static_cast<int>(i));
  }
  std::map<std::string_view, const libshare::ShareInfo*> have;
  for (const libshare::ShareInfo& s : current) have.emplace(s.path, &s);
  std::vector<Operation> removes, sets, adds;
  std::vector<int> set_from, add_from;
  for (const libshare::ShareInfo& s : current) {
    if (want.count(s.path) > 0) continue;
    Operation op;
    op.type = Operation::Type::kRemoveShare;
    op.group = group;
    op.path = s.path;
    removes.push_back(std::move(op));
  }
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    const Operation& w = wanted[i];
    auto it = have.find(w.path);
    if (it == have.end()) {
      Operation op = w;
      op.group = group;
      adds.push_back(std::move(op));
      add_from.push_back(static_cast<int>(i));
    } else if (it->second->options != w.options) {
      Operation op;
      op.type = Operation::Type::kSetOptions;
      op.group = group;
      op.path = w.path;
      op.options = w.options;
      if (op.options.empty()) {
        // "" would return the share to the group's defaults; the importer
        // never writes "" (it always says rw or ro), but be exact anyway:
        // remove and add it again.
        Operation rm;
        rm.type = Operation::Type::kRemoveShare;
        rm.group = group;
        rm.path = w.path;
        removes.push_back(std::move(rm));
        Operation add = w;
        add.group = group;
        adds.push_back(std::move(add));
        add_from.push_back(static_cast<int>(i));
        continue;
      }
      sets.push_back(std::move(op));
      set_from.push_back(static_cast<int>(i));
    }
  }
  std::vector<Operation> out;
  origin->clear();
  for (Operation& op : removes) {
    out.push_back(std::move(op));
    origin->push_back(-1);
  }
  for (std::size_t i = 0; i < sets.size(); ++i) {
    out.push_back(std::move(sets[i]));
    origin->push_back(set_from[i]);
  }
  for (std::size_t i = 0; i < adds.size(); ++i) {
    out.push_back(std::move(adds[i]));
    origin->push_back(add_from[i]);
  }
  return out;
}

ExportsFollower::ExportsFollower(Config config) : config_(std::move(config)) {}

ExportsFollower::~ExportsFollower() { Stop(); }

void ExportsFollower::Log(const std::string& line) const {
  if (config_.log) config_.log(absl::StrCat("follow: ", line));
}

absl::StatusOr<std::unique_ptr<ExportsFollower>> ExportsFollower::Start(
    Config config) {
  std::unique_ptr<ExportsFollower> f(new ExportsFollower(std::move(config)));
  if (absl::Status s = f->Setup(); !s.ok()) return s;
  return f;
}

absl::Status ExportsFollower::Setup() {
  std::set<std::string> folders;
  for (const std::string& arg : config_.patterns) {
    absl::StatusOr<FollowPattern> p = ParseFollowPattern(arg);
    if (!p.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("option --follow-exports: ", p.status().message()));
    }
    struct stat st {};
    if (::stat(p->folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat("option --follow-exports: \"", arg, "\": folder ",
                       p->folder, " does not exist"));
    }
    if (absl::Status s = CheckTrustedFolder(p->folder); !s.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("option --follow-exports: ", s.message()));
    }
    folders.insert(p->folder);
    patterns_.push_back(*std::move(p));
  }
  inotify_fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (inotify_fd_ < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("--follow-exports: inotify: ", ::strerror(errno)));
  }
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (stop_fd_ < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("--follow-exports: eventfd: ", ::strerror(errno)));
  }
  // Watched before the first read, so that a change made while the files
  // are read is seen.
  for (const std::string& folder : folders) {
    int wd = ::inotify_add_watch(inotify_fd_, folder.c_str(),
                                 IN_CLOSE_WRITE | IN_MODIFY | IN_MOVED_TO |
                                     IN_MOVED_FROM | IN_CREATE | IN_DELETE |
                                     IN_ATTRIB | IN_ONLYDIR);
    if (wd < 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "--follow-exports: cannot watch ", folder, ": ", ::strerror(errno)));
    }
    watches_[wd] = folder;
  }

  // The followed files: those the patterns name or match now, and those
  // whose groups are marked as theirs (a file deleted while the daemon was
  // down still empties its group).
  std::vector<std::string> paths;
  for (const FollowPattern& p : patterns_) {
    if (!p.glob) {
      paths.push_back(p.folder == "/" ? "/" + p.name
                                      : absl::StrCat(p.folder, "/", p.name));
      continue;
    }
    std::vector<std::string> found = GlobMatches(p);
    paths.insert(paths.end(), found.begin(), found.end());
  }
  std::vector<libshare::GroupInfo> groups = config_.catalog->ListGroups();
  {
    absl::MutexLock l(&mu_);
    std::map<std::string, std::string> group_file;
    for (const std::string& path : paths) {
      if (files_.count(path) > 0) continue;
      absl::StatusOr<std::string> group = FollowGroupName(path);
      if (!group.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "option --follow-exports: ", group.status().message()));
      }
      auto [it, added] = group_file.emplace(*group, path);
      if (!added) {
        return absl::InvalidArgumentError(
            absl::StrCat("option --follow-exports: ", it->second, " and ", path,
                         " would both be mirrored into group ", *group,
                         "; follow only one of them"));
      }
      files_[path] = {path, *group};
    }
  }
  std::vector<std::pair<std::string, std::string>> released;  // group, file
  for (const libshare::GroupInfo& g : groups) {
    if (g.managed_by.empty()) continue;
    if (Match(g.managed_by) != nullptr) continue;
    released.emplace_back(g.name, g.managed_by);
  }
  for (const auto& [group, file] : released) {
    libshare::Batch b;
    b.manager = file;
    // The audit line's origin: why the group is released (the file's own
    // batches are named "--follow-exports FILE").
    b.origin = absl::StrCat(file,
                            " no longer followed: sharemgrd started without "
                            "--follow-exports for it");
    Operation op;
    op.type = Operation::Type::kManageGroup;
    op.group = group;
    b.ops.push_back(std::move(op));
    libshare::BatchResult r = config_.apply(b);
    Log(r.ok() ? absl::StrCat(file, " is no longer followed: group ", group,
                              " keeps its shares and is edited by hand now")
               : absl::StrCat("cannot release group ", group, " of ", file));
  }

  std::vector<std::string> all;
  {
    absl::MutexLock l(&mu_);
    for (const auto& [path, f] : files_) all.push_back(path);
  }
  for (const std::string& path : all) Sync(path);
  if (!patterns_.empty()) thread_ = std::thread([this] { Run(); });
  return absl::OkStatus();
}

std::vector<std::string> ExportsFollower::GlobMatches(const FollowPattern& p) {
  std::vector<std::string> found;
  if (DIR* d = ::opendir(p.folder.c_str())) {
    while (dirent* e = ::readdir(d)) {
      if (::fnmatch(p.name.c_str(), e->d_name, FNM_PERIOD) == 0) {
        found.push_back(
            absl::StrCat(p.folder == "/" ? "" : p.folder, "/", e->d_name));
      }
    }
    ::closedir(d);
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::vector<ExportsFollower::FileState> ExportsFollower::SyncNow() {
  absl::MutexLock sync(&sync_mu_);
  for (const FollowPattern& p : patterns_) {
    if (!p.glob) continue;
    for (const std::string& path : GlobMatches(p)) (void)Match(path);
  }
  std::vector<FileState> out;
  {
    absl::MutexLock l(&mu_);
    for (const auto& [path, f] : files_)
      out.push_back({path, f.group, "", false});
  }
  for (FileState& f : out) {
    f.changed = SyncLocked(f.path);
    f.error = ErrorFor(f.group);
  }
  return out;
}

const ExportsFollower::Followed* ExportsFollower::Match(
    const std::string& path) {
  absl::MutexLock l(&mu_);
  auto it = files_.find(path);
  if (it != files_.end()) return &it->second;
  std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return nullptr;
  std::string folder = slash == 0 ? "/" : path.substr(0, slash);
  std::string name = path.substr(slash + 1);
  for (const FollowPattern& p : patterns_) {
    if (!p.glob || p.folder != folder) continue;
    if (::fnmatch(p.name.c_str(), name.c_str(), FNM_PERIOD) != 0) continue;
    absl::StatusOr<std::string> group = FollowGroupName(path);
    if (!group.ok()) {
      Log(std::string(group.status().message()));
      return nullptr;
    }
    for (const auto& [other, f] : files_) {
      if (f.group == *group) {
        Log(absl::StrCat(path, ": not followed: ", other,
                         " is already mirrored into group ", *group));
        return nullptr;
      }
    }
    return &(files_[path] = {path, *group});
  }
  return nullptr;
}

void ExportsFollower::SetError(const std::string& path,
                               const std::string& group, std::string error,
                               uint64_t applied_generation) {
  absl::MutexLock l(&mu_);
  auto f = files_.find(path);
  if (f != files_.end()) {
    Followed& file = f->second;
    if (applied_generation != 0) file.applied_generation = applied_generation;
    file.in_step = error.empty();
    if (error.empty()) {
      file.error_since = 0;
    } else if (file.error_since == 0) {
      file.error_since = absl::ToUnixSeconds(absl::Now());
    }
  }
  if (error.empty()) {
    errors_.erase(group);
  } else {
    errors_[group] = std::move(error);
  }
}

std::vector<libshare::FollowedFileStatus> ExportsFollower::Files() const {
  absl::MutexLock l(&mu_);
  std::vector<libshare::FollowedFileStatus> out;
  out.reserve(files_.size());
  for (const auto& [path, f] : files_) {
    libshare::FollowedFileStatus st;
    st.path = path;
    st.group = f.group;
    st.applied_generation = f.applied_generation;
    st.in_step = f.in_step;
    auto e = errors_.find(f.group);
    if (e != errors_.end()) st.error = e->second;
    st.error_since = f.error_since;
    out.push_back(std::move(st));
  }
  return out;
}

std::string ExportsFollower::ErrorFor(const std::string& group) const {
  absl::MutexLock l(&mu_);
  auto it = errors_.find(group);
  return it == errors_.end() ? std::string() : it->second;
}

bool ExportsFollower::Sync(const std::string& path) {
  absl::MutexLock sync(&sync_mu_);
  return SyncLocked(path);
}

bool ExportsFollower::SyncLocked(const std::string& path) {
  std::string group;
  {
    absl::MutexLock l(&mu_);
    auto it = files_.find(path);
    if (it == files_.end()) return false;
    group = it->second.group;
  }
  bool missing = false;
  absl::StatusOr<std::string> text = ReadFollowed(path, &missing);
  if (!text.ok()) {
    std::string e(text.status().message());
    Log(absl::StrCat(e, "; group ", group, " left as it was"));
    SetError(path, group, std::move(e));
    return false;
  }
  libshare::ImportPlan plan =
      libshare::ImportExports({{path, *std::move(text)}}, group);
  std::string first_refusal;
  std::size_t refusals = 0;
  std::size_t dropped = 0;
  for (const libshare::ImportProblem& p : plan.problems) {
    // An option without an equivalent whose loss only narrows access is
    // dropped, as `sharectl import --skip-unsupported` drops it; anything
    // else keeps the last good state. Drops are logged a few per version:
    // OpenZFS writes crossmnt on every line, and a file of 15,000 lines
    // rewritten per dataset must not log 15,000 lines each time.
    if (p.unsupported) {
      if (dropped++ < kDropsLogged) {
        Log(absl::StrCat(p.where, ": ", p.message, " (dropped)"));
      }
      continue;
    }
    Log(absl::StrCat(p.where, ": ", p.message));
    if (refusals++ == 0) first_refusal = absl::StrCat(p.where, ": ", p.message);
  }
  if (dropped > kDropsLogged) {
    Log(absl::StrCat(path, ": ", dropped - kDropsLogged,
                     " more options without a share_nfs equivalent dropped"));
  }
  // What is applied as written but worth a look (a trailing "-ro" that
  // exports to every client, "host (rw)"), as few per version as drops.
  for (std::size_t i = 0; i < plan.warnings.size() && i < kDropsLogged; ++i) {
    Log(absl::StrCat(plan.warnings[i].where,
                     ": warning: ", plan.warnings[i].message));
  }
  if (plan.warnings.size() > kDropsLogged) {
    Log(absl::StrCat(path, ": ", plan.warnings.size() - kDropsLogged,
                     " more warnings"));
  }
  if (refusals > 0) {
    if (refusals > 1) {
      absl::StrAppend(&first_refusal, " (and ", refusals - 1, " more)");
    }
    Log(absl::StrCat(path, ": not applied; group ", group,
                     " keeps its last good state"));
    SetError(path, group, std::move(first_refusal));
    return false;
  }

  libshare::Batch b;
  b.manager = path;
  std::vector<libshare::GroupInfo> groups = config_.catalog->ListGroups();
  auto g = std::find_if(
      groups.begin(), groups.end(),
      [&](const libshare::GroupInfo& x) { return x.name == group; });
  std::vector<libshare::ShareInfo> current;
  if (g == groups.end()) {
    Operation create;
    create.type = Operation::Type::kCreateGroup;
    create.group = group;
    b.ops.push_back(std::move(create));
  } else {
    absl::StatusOr<std::vector<libshare::ShareInfo>> shares =
        config_.catalog->ListShares({group});
    if (shares.ok()) current = *std::move(shares);
    if (g->managed_by.empty()) {
      Log(absl::StrCat("group ", group, " exists and was edited by hand; ",
                       path, " manages it from now on"));
    }
  }
  if (g == groups.end() || g->managed_by != path) {
    Operation manage;
    manage.type = Operation::Type::kManageGroup;
    manage.group = group;
    manage.path = path;
    b.ops.push_back(std::move(manage));
  }
  const std::size_t head = b.ops.size();
  std::vector<int> origin;
  std::vector<Operation> diff = FollowDiff(group, current, plan.ops, &origin);
  if (diff.empty() && head == 0) {
    Log(absl::StrCat(path, ": group ", group, " unchanged"));
    SetError(path, group, "");
    return false;
  }
  for (Operation& op : diff) b.ops.push_back(std::move(op));
  libshare::BatchResult r = config_.apply(b);
  if (!r.ok()) {
    std::string e;
    if (!r.errors.empty()) {
      const libshare::OperationError& oe = r.errors.front();
      std::string where = path;
      if (oe.index >= head && origin[oe.index - head] >= 0) {
        where = plan.origins[static_cast<std::size_t>(origin[oe.index - head])];
      }
      e = absl::StrCat(where, ": ", oe.message);
      if (r.errors.size() > 1) {
        absl::StrAppend(&e, " (and ", r.errors.size() - 1, " more)");
      }
      for (const libshare::OperationError& x : r.errors) {
        Log(absl::StrCat(path, ": ", x.message));
      }
    } else {
      e = absl::StrCat(path, ": ", r.commit_error);
    }
    Log(absl::StrCat(path, ": not applied; group ", group,
                     " keeps its last good state: ", e));
    SetError(path, group, std::move(e));
    return false;
  }
  ++applied_;
  std::size_t adds = 0, removes = 0, sets = 0;
  for (std::size_t i = head; i < b.ops.size(); ++i) {
    switch (b.ops[i].type) {
      case Operation::Type::kAddShare:
        ++adds;
        break;
      case Operation::Type::kRemoveShare:
        ++removes;
        break;
      default:
        ++sets;
    }
  }
  Log(absl::StrCat(path, missing ? " (deleted)" : "", ": group ", group, ": ",
                   adds, " added, ", removes, " removed, ", sets, " changed"));
  SetError(path, group, "", r.generation);
  return true;
}

void ExportsFollower::Run() {
  using Clock = std::chrono::steady_clock;
  std::set<std::string> dirty;
  Clock::time_point quiet_at{};
  const auto settle = absl::ToChronoMilliseconds(config_.settle);
  alignas(inotify_event) char buf[16384];
  for (;;) {
    int timeout = -1;
    if (!dirty.empty()) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          quiet_at - Clock::now());
      timeout = static_cast<int>(std::max<int64_t>(0, left.count()));
    }
    pollfd fds[2] = {{inotify_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    int n = ::poll(fds, 2, timeout);
    if (n < 0 && errno != EINTR) {
      Log(absl::StrCat("poll: ", ::strerror(errno), "; stopped following"));
      return;
    }
    if (n > 0 && (fds[1].revents & POLLIN)) return;
    if (n > 0 && (fds[0].revents & POLLIN)) {
      for (;;) {
        ssize_t len = ::read(inotify_fd_, buf, sizeof buf);
        if (len <= 0) break;
        for (char* p = buf; p < buf + len;) {
          auto* e = reinterpret_cast<inotify_event*>(p);
          p += sizeof(inotify_event) + e->len;
          if (e->mask & IN_Q_OVERFLOW) {
            // Events were lost: read every followed file again.
            absl::MutexLock l(&mu_);
            for (const auto& [path, f] : files_) dirty.insert(path);
            continue;
          }
          if (e->mask & IN_IGNORED) {
            auto w = watches_.find(e->wd);
            if (w != watches_.end()) {
              Log(absl::StrCat("folder ", w->second,
                               " is gone; its files are no longer watched"));
            }
            continue;
          }
          auto w = watches_.find(e->wd);
          if (w == watches_.end() || e->len == 0) continue;
          std::string path =
              absl::StrCat(w->second == "/" ? "" : w->second, "/", e->name);
          if (Match(path) != nullptr) dirty.insert(path);
        }
      }
      if (!dirty.empty()) {
        quiet_at = Clock::now() + settle;
      }
      continue;
    }
    if (!dirty.empty() && Clock::now() >= quiet_at) {
      std::set<std::string> now;
      now.swap(dirty);
      for (const std::string& path : now) Sync(path);
    }
  }
}

void ExportsFollower::Stop() {
  if (thread_.joinable()) {
    uint64_t one = 1;
    (void)!::write(stop_fd_, &one, sizeof one);
    thread_.join();
  }
  if (inotify_fd_ >= 0) ::close(inotify_fd_);
  if (stop_fd_ >= 0) ::close(stop_fd_);
  inotify_fd_ = stop_fd_ = -1;
}

}  // namespace sharemgrd

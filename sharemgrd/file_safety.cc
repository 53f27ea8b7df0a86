#include "file_safety.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace sharemgrd {
namespace {

std::string FolderOf(const std::string& path) {
  std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string UserText(uid_t uid) {
  return uid == 0 ? std::string("root")
                  : absl::StrCat("uid ", uid, " (the daemon's user)");
}

absl::Status Refuse(const std::string& path, const std::string& why) {
  return absl::FailedPreconditionError(
      absl::StrCat(path, " ", why, ": refusing to start"));
}

enum class Kind { kStore, kStoreFolder, kSocketFolder };

absl::Status Check(const std::string& path, Kind kind, uid_t owner) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return absl::OkStatus();  // we create it
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": cannot stat: ", ::strerror(errno)));
  }
  const bool folder = kind != Kind::kStore;
  if (folder != S_ISDIR(st.st_mode)) {
    return Refuse(path, folder ? "is not a folder" : "is not a regular file");
  }
  const bool owner_ok = st.st_uid == owner || (folder && st.st_uid == 0);
  if (!owner_ok) {
    return Refuse(path, absl::StrCat("is owned by uid ", st.st_uid, ", not ",
                                     UserText(owner)));
  }
  if ((st.st_mode & S_IWOTH) != 0 &&
      !(kind == Kind::kSocketFolder && (st.st_mode & S_ISVTX) != 0)) {
    return Refuse(path, absl::StrFormat("is writable by others (mode %04o)",
                                        st.st_mode & 07777));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckStartupFiles(const std::string& db_path,
                               const std::string& socket_path, uid_t owner) {
  if (absl::Status s = Check(FolderOf(db_path), Kind::kStoreFolder, owner);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = Check(db_path, Kind::kStore, owner); !s.ok()) return s;
  return Check(FolderOf(socket_path), Kind::kSocketFolder, owner);
}

}  // namespace sharemgrd

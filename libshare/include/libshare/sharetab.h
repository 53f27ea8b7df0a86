// The sharetab view: one line per active share,
//   path<TAB>resource<TAB>nfs<TAB>options<TAB>description
// with "-" for an empty resource (sharetab(5)). Pure functions, plus an
// atomic file writer; thread-safe.
#ifndef LIBSHARE_SHARETAB_H_
#define LIBSHARE_SHARETAB_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace libshare {

struct SharetabEntry {
  std::string path;
  std::string resource;  // "" is written as "-"
  std::string fstype = "nfs";
  std::string options;
  std::string description;
  // Not written: the effective options hold the flag mountpoint (the
  // catalog fills it from the compiled options; the daemon's view leaves
  // out a mountpoint share with nothing mounted at it).
  bool mountpoint = false;
  bool operator==(const SharetabEntry& o) const {
    return path == o.path && resource == o.resource && fstype == o.fstype &&
           options == o.options && description == o.description;
  }
};

// One line, with its trailing newline.
std::string FormatSharetabLine(const SharetabEntry& e);
// One line, with or without its newline. Error names the line's problem.
[[nodiscard]] absl::StatusOr<SharetabEntry> ParseSharetabLine(std::string_view line);
[[nodiscard]] absl::StatusOr<std::vector<SharetabEntry>> ParseSharetab(std::string_view text);

// Replaces `path` atomically with mode 0644 through ReplaceFile()
// (libshare/files.h): a reader sees the old file or the new one, never a
// part, and no link planted in the folder is followed.
[[nodiscard]] absl::Status WriteSharetab(const std::string& path,
                                         const std::vector<SharetabEntry>& entries);

}  // namespace libshare

#endif  // LIBSHARE_SHARETAB_H_

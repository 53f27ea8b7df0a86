// SharetabLines: the sharetab(5) view of a whole table as its text, for
// the daemon's view file: every line in one buffer and a small index to
// sort and filter them. At 1,000,000 shares a vector of SharetabEntry
// (five std::string each) took about 260 MiB beside the table; this takes
// the text (about 50 bytes a line) and 24 bytes a line. Private to this
// project (the daemon and the Catalog). Plain value; not synchronized.
#ifndef LIBSHARE_SHARETAB_LINES_H_
#define LIBSHARE_SHARETAB_LINES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "libshare/sharetab.h"

namespace libshare {

class SharetabLines {
 public:
  // Appends the line of one share (fields as SharetabEntry's, fstype
  // "nfs"). A field that sharetab(5) cannot hold (a tab, a newline, a NUL)
  // is kept as the error Write returns, as WriteSharetab refuses it.
  void Add(std::string_view path, std::string_view resource,
           std::string_view options, std::string_view description,
           bool mountpoint);
  void Reserve(std::size_t lines);
  // Drops every line (a walk that starts again).
  void Clear();
  // Sorts the lines by path and keeps one line per path.
  void SortUnique();

  std::size_t size() const { return lines_.size(); }
  std::string_view path(std::size_t i) const {
    return std::string_view(text_).substr(lines_[i].offset,
                                          lines_[i].path_length);
  }
  bool mountpoint(std::size_t i) const { return lines_[i].mountpoint; }

  // Replaces `file` as WriteSharetab does with the lines `keep` accepts
  // (given a line's path and mountpoint flag), in order.
  [[nodiscard]] absl::Status Write(
      const std::string& file,
      absl::FunctionRef<bool(std::string_view path, bool mountpoint)> keep)
      const;

 private:
  struct Line {
    uint64_t offset = 0;  // in text_
    uint32_t length = 0;  // with its newline
    uint32_t path_length : 31;
    uint32_t mountpoint : 1;
  };
  std::string text_;
  std::vector<Line> lines_;
  absl::Status error_;
};

}  // namespace libshare

#endif  // LIBSHARE_SHARETAB_LINES_H_

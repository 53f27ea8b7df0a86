// How sharectl reads a batch or an exports file: whole, in blocks, and no
// further than a limit (sharectl.h, kMaxInputBytes), so that a device or
// a pipe that never ends is refused rather than read until memory runs
// out. Private to sharectl_core. Thread-compatible (no shared state).
#ifndef SHARECTL_INPUT_FILE_H_
#define SHARECTL_INPUT_FILE_H_

#include <cstddef>
#include <iosfwd>
#include <string>

#include "absl/strings/string_view.h"

namespace sharectl {

// All of `in` into `text` (after what it holds). False if it stopped
// because `text` grew past `limit` bytes.
bool ReadAll(std::istream& in, std::string* text, std::size_t limit);

// The refusal of an input `name` longer than `limit` bytes.
std::string TooLong(absl::string_view name, std::size_t limit);

// The whole of file `path` into `text` (replacing what it holds). False,
// with a message that names `path` in `error`, if it cannot be opened, is
// a folder, cannot be read, or is longer than `limit` bytes.
bool ReadWholeFile(const std::string& path, std::string* text,
                   std::string* error, std::size_t limit);

// `path` as an absolute name, for a batch's origin in the daemon's audit
// log and change log (which are read far from the caller's folder): a
// relative path is joined to the current folder and "." and ".." are
// resolved by name (links are not followed). `path` itself if the current
// folder cannot be read.
std::string AbsoluteName(const std::string& path);

}  // namespace sharectl

#endif  // SHARECTL_INPUT_FILE_H_

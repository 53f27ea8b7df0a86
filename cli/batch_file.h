// `sharectl batch FILE`'s reading of FILE: its commands split and parsed
// straight into one batch's operations, and the lines refused before
// anything is sent.
//
// Pure function; thread-safe.
#ifndef SHARECTL_BATCH_FILE_H_
#define SHARECTL_BATCH_FILE_H_

#include <cstddef>
#include <string_view>
#include <utility>
#include <vector>

#include "batch_report.h"
#include "libshare/batch.h"

namespace sharectl {

struct BatchFile {
  // The operations of the lines that parsed, in order; enable/disable -a
  // stand as a placeholder each (see `all`).
  std::vector<libshare::Operation> ops;
  // The line of each of ops. Its "FILE:LINE" is made only for the few
  // operations that get reported, not for every line.
  std::vector<int> op_lines;
  // enable/disable -a: the index of the placeholder in ops and the type
  // of its operations, made once the daemon's groups are known.
  std::vector<std::pair<std::size_t, libshare::Operation::Type>> all;
  // The lines refused before sending, in line order, each with its origin
  // "WHERE:LINE" and command.
  std::vector<Problem> bad;
  std::size_t commands = 0;  // commands read, good or bad
};

// `where` names the file in origins ("<stdin>" for standard input).
BatchFile ParseBatchFile(std::string_view text, std::string_view where);

}  // namespace sharectl

#endif  // SHARECTL_BATCH_FILE_H_

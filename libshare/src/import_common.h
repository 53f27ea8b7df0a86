// What the exports(5) and dfstab importers (import.cc, import_dfstab.cc)
// share: checks of the words they read and of the operations they make.
#ifndef LIBSHARE_SRC_IMPORT_COMMON_H_
#define LIBSHARE_SRC_IMPORT_COMMON_H_

#include <optional>
#include <string>
#include <vector>

#include "libshare/import.h"

namespace libshare::import_internal {

// A word holding a control character (an exports "\012" escape, a quoted
// newline) would put it into a path or options, and `import --dry-run`
// would print a batch line that does not read back: the message naming the
// first such word, or nothing.
std::optional<std::string> ControlCharacterProblem(
    const std::vector<std::string>& words);

// A warning for an imported share that opens rw or root to every client
// by its own options (the group's are checked when it is created).
void AddOpenWarnings(const Operation& op, const std::string& where,
                     std::vector<ImportProblem>* out);

}  // namespace libshare::import_internal

#endif  // LIBSHARE_SRC_IMPORT_COMMON_H_

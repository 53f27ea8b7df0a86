// `sharectl dump`: the share table as a batch file that recreates it.
// Pure function; thread-safe.
#ifndef SHARECTL_DUMP_H_
#define SHARECTL_DUMP_H_

#include <string>
#include <vector>

#include "libshare/records.h"

namespace sharectl {

// A batch (sharectl(8)) that recreates `groups` (with their options and
// state) and those of `shares` that belong to them (with their own
// options, description and resource), for a table without them. Groups
// come sorted by name, each followed by its shares sorted by path, then
// `disable GROUP` if it is disabled; a comment line first counts them.
// Words are quoted by QuoteShellWord, so any byte except NUL (paths that
// are not UTF-8 included) reads back as it was. The output depends only
// on the table's content, so dumping the table a dump recreated gives the
// same text.
std::string FormatDump(const std::vector<libshare::GroupInfo>& groups,
                       const std::vector<libshare::ShareInfo>& shares);

}  // namespace sharectl

#endif  // SHARECTL_DUMP_H_

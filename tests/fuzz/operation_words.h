// The round trip the sharectl batch format promises, shared by the batch
// and importer fuzz targets: an operation written as a batch line
// (JoinShellWords(OperationWords(op)), what `import --dry-run` prints)
// splits back into the same words and parses back into the same
// operation.
#ifndef TESTS_FUZZ_OPERATION_WORDS_H_
#define TESTS_FUZZ_OPERATION_WORDS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "commands.h"
#include "fuzz_check.h"
#include "libshare/batch.h"
#include "libshare/options.h"
#include "libshare/path.h"
#include "libshare/shell_words.h"

namespace fuzz {

inline bool SameOperation(const libshare::Operation& a,
                          const libshare::Operation& b) {
  return a.type == b.type && a.group == b.group && a.path == b.path &&
         a.options == b.options && a.description == b.description &&
         a.resource == b.resource && a.force == b.force;
}

inline std::string ShowOperation(const libshare::Operation& op) {
  return std::string(libshare::OperationName(op.type)) +
         " group=" + Escape(op.group) + " path=" + Escape(op.path) +
         " options=" + Escape(op.options) +
         " description=" + Escape(op.description) +
         " resource=" + Escape(op.resource) +
         " force=" + (op.force ? "1" : "0");
}

inline std::string ShowWords(const std::vector<std::string>& words) {
  std::string out = "[";
  for (const std::string& w : words) out += " \"" + Escape(w) + "\"";
  return out + " ]";
}

// Words -> quoted line -> words must be the identity.
inline void CheckWordsRoundTrip(const std::vector<std::string>& words) {
  const std::string line = libshare::JoinShellWords(words);
  std::vector<libshare::SplitLine> split = libshare::SplitShellLines(line);
  FUZZ_CHECK(
      split.size() == 1 && split[0].error.empty() && split[0].words == words,
      "words " + ShowWords(words) + " joined as \"" + Escape(line) +
          "\" do not split back" +
          (split.size() == 1 ? ": " + split[0].error + ShowWords(split[0].words)
                             : ""));
}

// Only operations the daemon could accept are checked: the group must be
// a valid name (or empty for remove-share, "any group") and the options
// must parse. An empty group is written as no word, a "group" such as
// "--help" (which the parser takes only after "--") is written without
// "--", and options holding a newline (an exports client "\012x") cannot
// be quoted on one line; the daemon refuses all of these anyway.
inline void CheckOperationRoundTrip(const libshare::Operation& op) {
  if (op.group.empty() ? op.type != libshare::Operation::Type::kRemoveShare
                       : !libshare::ValidateGroupName(op.group).ok()) {
    return;
  }
  if (!libshare::ParseOptions(op.options).ok()) return;
  const std::vector<std::string> words = sharectl::OperationWords(op);
  CheckWordsRoundTrip(words);
  absl::StatusOr<sharectl::ChangeCommand> cmd =
      sharectl::ParseChangeCommand(words);
  FUZZ_CHECK(cmd.ok(), "operation " + ShowOperation(op) + " written as " +
                           ShowWords(words) + " is refused: " +
                           std::string(cmd.status().message()));
  FUZZ_CHECK(
      !cmd->all && cmd->ops.size() == 1 && SameOperation(cmd->ops[0], op),
      "operation " + ShowOperation(op) + " written as " + ShowWords(words) +
          " reads back as " +
          (cmd->ops.size() == 1
               ? ShowOperation(cmd->ops[0])
               : std::to_string(cmd->ops.size()) + " operations"));
}

}  // namespace fuzz

#endif  // TESTS_FUZZ_OPERATION_WORDS_H_

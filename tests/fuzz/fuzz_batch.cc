// Fuzz target: the sharectl batch-file parser, the same path `sharectl
// batch FILE` takes: SplitShellLines, then ParseChangeCommand per line.
//
// Properties:
//  - the words of every split line, quoted with JoinShellWords, split back
//    to the same words;
//  - every operation a line parses to, written back with OperationWords,
//    parses to the same operation;
//  - refusals carry a message; line numbers are positive and ascending.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "operation_words.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::vector<libshare::SplitLine> lines =
      libshare::SplitShellLines(text);
  int previous = 0;
  for (const libshare::SplitLine& l : lines) {
    FUZZ_CHECK(l.line > previous,
               "line numbers not ascending: " + std::to_string(l.line) +
                   " after " + std::to_string(previous));
    previous = l.line;
    if (!l.error.empty()) continue;
    fuzz::CheckWordsRoundTrip(l.words);
    absl::StatusOr<sharectl::ChangeCommand> cmd =
        sharectl::ParseChangeCommand(l.words);
    if (!cmd.ok()) {
      FUZZ_CHECK(!cmd.status().message().empty(),
                 "refusal without message for " + fuzz::ShowWords(l.words));
      continue;
    }
    for (const libshare::Operation& op : cmd->ops) {
      fuzz::CheckOperationRoundTrip(op);
    }
  }
  return 0;
}

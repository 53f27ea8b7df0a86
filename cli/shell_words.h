// Shell-style splitting of batch files and dfstab files into commands, and
// the reverse (quoting words so that the splitter gives them back).
//
// Rules, a subset of POSIX sh: words are separated by blanks; 'single
// quotes' keep everything literally; "double quotes" keep everything except
// that a backslash escapes $ ` " \ and newline; outside quotes a backslash
// escapes any character; a backslash before a newline (outside single
// quotes) joins the two lines; `#` at the start of a word starts a comment
// that runs to the end of the line. An empty quoted string ('' or "") is a
// word. A newline inside quotes is an error: a command never spans lines
// except through a trailing backslash.
//
// Pure functions; thread-safe.
#ifndef SHARECTL_SHELL_WORDS_H_
#define SHARECTL_SHELL_WORDS_H_

#include <string>
#include <string_view>
#include <vector>

namespace sharectl {

// One command of a file: the words of a logical line, or why it could not
// be split. Blank and comment-only lines produce no SplitLine.
struct SplitLine {
  int line = 0;  // 1-based number of the line where the command starts
  std::vector<std::string> words;
  std::string error;  // non-empty if the line could not be split
};

std::vector<SplitLine> SplitShellLines(std::string_view text);

// Quotes `word` for SplitShellLines (and sh): unchanged if it holds only
// safe characters, else in single quotes, with ' written as '\''.
std::string QuoteShellWord(std::string_view word);

// Words joined by spaces, each quoted.
std::string JoinShellWords(const std::vector<std::string>& words);

}  // namespace sharectl

#endif  // SHARECTL_SHELL_WORDS_H_

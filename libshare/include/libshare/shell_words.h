// Shell-style splitting of batch files (`sharectl batch`, and what
// `sharectl dump` writes) and dfstab files into commands, and the reverse
// (quoting words so that the splitter gives them back).
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
#ifndef LIBSHARE_SHELL_WORDS_H_
#define LIBSHARE_SHELL_WORDS_H_

#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace libshare {

// One command of a file: the words of a logical line, or why it could not
// be split. Blank and comment-only lines produce no SplitLine.
struct SplitLine {
  int line = 0;  // 1-based number of the line where the command starts
  std::vector<std::string> words;
  std::string error;  // non-empty if the line could not be split
};

std::vector<SplitLine> SplitShellLines(std::string_view text);

// A SplitLine as views, from ShellLineReader.
struct ShellLineView {
  int line = 0;
  std::vector<std::string_view> words;
  std::string_view error;  // a constant text; empty if the line split
};

// SplitShellLines one command at a time, without a string per word: a
// word that is one run of plain characters (no quote, backslash or joined
// line: nearly every word of a batch file) is a view of the text itself;
// only the others are copied, into strings the reader keeps until its next
// Next(). A big batch file then splits without allocating.
class ShellLineReader {
 public:
  // `text` must outlive the reader and the lines it gives.
  explicit ShellLineReader(std::string_view text) : text_(text) {}

  // Reads the next command into *out (its words replace out->words; blank
  // and comment-only lines are skipped). False at the end of the text.
  bool Next(ShellLineView* out);

 private:
  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 1;
  // The words of the current command that are not views of text_: a deque,
  // so that adding one does not move the others under their views.
  std::deque<std::string> unquoted_;
};

// Quotes `word` for SplitShellLines (and sh): unchanged if it holds only
// safe characters, else in single quotes, with ' written as '\''.
std::string QuoteShellWord(std::string_view word);

// Words joined by spaces, each quoted.
std::string JoinShellWords(const std::vector<std::string>& words);

}  // namespace libshare

#endif  // LIBSHARE_SHELL_WORDS_H_

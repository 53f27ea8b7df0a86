#include "libshare/shell_words.h"

namespace libshare {
namespace {

// The characters that end a run of plain ones in a word: blanks, newline,
// backslash and the quotes.
struct SpecialTable {
  bool v[256] = {};
  constexpr SpecialTable() {
    for (char c : {' ', '\t', '\r', '\n', '\\', '\'', '"'}) {
      v[static_cast<unsigned char>(c)] = true;
    }
  }
  constexpr bool operator[](unsigned char c) const { return v[c]; }
};
constexpr SpecialTable kSpecial;

}  // namespace

std::vector<SplitLine> SplitShellLines(std::string_view text) {
  std::vector<SplitLine> out;
  ShellLineReader reader(text);
  ShellLineView l;
  while (reader.Next(&l)) {
    SplitLine& s = out.emplace_back();
    s.line = l.line;
    s.words.assign(l.words.begin(), l.words.end());
    s.error = std::string(l.error);
  }
  return out;
}

bool ShellLineReader::Next(ShellLineView* out) {
  const std::string_view text = text_;
  const size_t n = text.size();
  size_t i = pos_;
  int line = line_;
  // Tested first: clear() walks the deque's nodes even when it is empty,
  // as it is for nearly every line.
  if (!unquoted_.empty()) unquoted_.clear();
  while (i < n) {
    out->line = line;
    out->words.clear();
    out->error = {};
    // The word being read: `plain` while it is one run of plain characters
    // of the text, else `copy` (made by owned() from the run so far).
    std::string_view plain;
    std::string* copy = nullptr;
    bool in_word = false;  // a word has started (even if empty, as in '')
    bool done = false;
    const auto owned = [&]() -> std::string& {
      if (copy == nullptr) copy = &unquoted_.emplace_back(plain);
      return *copy;
    };
    const auto end_word = [&] {
      if (in_word) {
        out->words.push_back(copy != nullptr ? std::string_view(*copy) : plain);
      }
      plain = {};
      copy = nullptr;
      in_word = false;
    };
    // Skips the rest of the physical line, after an error.
    const auto fail = [&](std::string_view why) {
      out->error = why;
      while (i < n && text[i] != '\n') ++i;
      if (i < n) {
        ++i;
        ++line;
      }
      done = true;
    };
    while (!done) {
      if (i >= n) {
        end_word();
        break;
      }
      char c = text[i];
      if (c == '\n') {
        end_word();
        ++i;
        ++line;
        break;
      }
      if (c == ' ' || c == '\t' || c == '\r') {
        end_word();
        ++i;
        continue;
      }
      if (c == '#' && !in_word) {
        while (i < n && text[i] != '\n') ++i;
        continue;
      }
      if (c == '\\') {
        if (i + 1 >= n) {  // a lone backslash at the end of the file
          ++i;
          continue;
        }
        if (text[i + 1] == '\n') {
          i += 2;
          ++line;
          continue;
        }
        owned().push_back(text[i + 1]);
        in_word = true;
        i += 2;
        continue;
      }
      if (c == '\'') {
        size_t close = text.find_first_of("'\n", i + 1);
        if (close == std::string_view::npos || text[close] == '\n') {
          fail("unterminated single quote");
          break;
        }
        owned().append(text.substr(i + 1, close - i - 1));
        in_word = true;
        i = close + 1;
        continue;
      }
      if (c == '"') {
        std::string& word = owned();
        in_word = true;
        ++i;
        bool closed = false;
        while (i < n) {
          char d = text[i];
          if (d == '"') {
            closed = true;
            ++i;
            break;
          }
          if (d == '\n') break;
          if (d == '\\' && i + 1 < n) {
            char e = text[i + 1];
            if (e == '\n') {
              i += 2;
              ++line;
              continue;
            }
            if (e == '"' || e == '\\' || e == '$' || e == '`') {
              word.push_back(e);
              i += 2;
              continue;
            }
          }
          word.push_back(d);
          ++i;
        }
        if (!closed) {
          fail("unterminated double quote");
          break;
        }
        continue;
      }
      // A run of plain characters (none of the above; '#' inside a word
      // is plain), taken at once rather than a character at a time: the
      // word itself if it starts here, else added to the word's copy.
      size_t j = i + 1;
      while (j < n && !kSpecial[static_cast<unsigned char>(text[j])]) ++j;
      const std::string_view run = text.substr(i, j - i);
      if (in_word) {
        owned().append(run);
      } else {
        plain = run;
        in_word = true;
      }
      i = j;
    }
    if (!out->error.empty() || !out->words.empty()) {
      pos_ = i;
      line_ = line;
      return true;
    }
  }
  pos_ = i;
  line_ = line;
  return false;
}

std::string QuoteShellWord(std::string_view word) {
  bool safe = !word.empty();
  for (char c : word) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '/' || c == '.' || c == '_' ||
              c == '-' || c == '=' || c == ',' || c == ':' || c == '@' ||
              c == '+' || c == '%';
    if (!ok) {
      safe = false;
      break;
    }
  }
  if (safe) return std::string(word);
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out.push_back(c);
    }
  }
  out += "'";
  return out;
}

std::string JoinShellWords(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    if (!out.empty()) out.push_back(' ');
    out += QuoteShellWord(w);
  }
  return out;
}

}  // namespace libshare

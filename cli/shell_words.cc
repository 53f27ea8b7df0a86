#include "shell_words.h"

namespace sharectl {
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
  const size_t n = text.size();
  size_t i = 0;
  int line = 1;
  while (i < n) {
    SplitLine cur;
    cur.line = line;
    cur.words.reserve(4);  // "add-share -s PATH GROUP" without regrowing
    std::string word;
    bool in_word = false;  // a word has started (even if empty, as in '')
    bool done = false;
    const auto end_word = [&] {
      if (in_word) cur.words.push_back(std::move(word));
      word.clear();
      in_word = false;
    };
    // Skips the rest of the physical line, after an error.
    const auto fail = [&](std::string why) {
      cur.error = std::move(why);
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
        word.push_back(text[i + 1]);
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
        word.append(text.substr(i + 1, close - i - 1));
        in_word = true;
        i = close + 1;
        continue;
      }
      if (c == '"') {
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
      // is plain), appended at once rather than a character at a time.
      size_t j = i + 1;
      while (j < n && !kSpecial[static_cast<unsigned char>(text[j])]) ++j;
      word.append(text.data() + i, j - i);
      in_word = true;
      i = j;
    }
    if (!cur.error.empty() || !cur.words.empty()) out.push_back(std::move(cur));
  }
  return out;
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

}  // namespace sharectl

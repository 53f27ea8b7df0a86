#include "libshare/spelling.h"

#include <algorithm>

namespace libshare {
namespace {

char Lower(char c) { return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c; }

// Optimal string alignment distance, case ignored.
size_t EditDistance(std::string_view a, std::string_view b) {
  const size_t n = a.size();
  const size_t m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = Lower(a[i - 1]) == Lower(b[j - 1]) ? 0 : 1;
      d[i][j] =
          std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && Lower(a[i - 1]) == Lower(b[j - 2]) &&
          Lower(a[i - 2]) == Lower(b[j - 1])) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

bool IsPrefixIgnoringCase(std::string_view prefix, std::string_view s) {
  if (prefix.size() > s.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (Lower(prefix[i]) != Lower(s[i])) return false;
  }
  return true;
}

}  // namespace

std::optional<std::string_view> ClosestName(
    std::string_view typed, const std::vector<std::string_view>& candidates) {
  // Long input is no name: skip the quadratic distance.
  if (typed.empty() || typed.size() > 64) return std::nullopt;
  const size_t limit = typed.size() <= 2   ? 0
                       : typed.size() <= 5 ? 1
                                           : typed.size() / 3;
  std::optional<std::string_view> best;
  size_t best_distance = limit + 1;
  for (std::string_view c : candidates) {
    if (c == typed) continue;
    const size_t dist = EditDistance(typed, c);
    if (dist < best_distance) {
      best = c;
      best_distance = dist;
    }
  }
  if (best) return best;
  if (typed.size() >= 3) {
    std::optional<std::string_view> only;
    for (std::string_view c : candidates) {
      if (!IsPrefixIgnoringCase(typed, c)) continue;
      if (only) return std::nullopt;  // ambiguous prefix
      only = c;
    }
    return only;
  }
  return std::nullopt;
}

std::string DidYouMean(std::string_view typed,
                       const std::vector<std::string_view>& candidates,
                       std::string_view suffix) {
  std::optional<std::string_view> c = ClosestName(typed, candidates);
  if (!c) return "";
  std::string out = "; did you mean \"";
  out.append(*c);
  out.append(suffix);
  out.append("\"?");
  return out;
}

}  // namespace libshare

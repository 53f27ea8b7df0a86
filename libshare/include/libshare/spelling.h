// Suggestions for mistyped names ("did you mean ...?"), for sharectl's
// commands and options and for share_nfs option names. Pure functions;
// thread-safe.
//
//   ClosestName("add-shar", {"add-share", "remove-share"})  // "add-share"
//   DidYouMean("rooot", {"root", "ro", "rw"})  // "; did you mean \"root\"?"
#ifndef LIBSHARE_SPELLING_H_
#define LIBSHARE_SPELLING_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace libshare {

// The candidate closest to `typed`, or nullopt when none is close enough
// to be a likely typo. Close means: equal ignoring case, a unique prefix
// of at least 3 characters, or an edit distance (insert, delete, replace,
// swap of neighbours; case ignored) of at most 1 for 3-5 characters and
// of at most a third of the length beyond that. Names of 1 or 2
// characters ("rw", "-o") get no suggestion other than a case change: one
// edit turns any of them into another. On a tie the first candidate wins.
std::optional<std::string_view> ClosestName(
    std::string_view typed, const std::vector<std::string_view>& candidates);

// "; did you mean \"NAME\"?" for ClosestName's answer with `suffix`
// appended to it ("=" for options that take a value), or "".
std::string DidYouMean(std::string_view typed,
                       const std::vector<std::string_view>& candidates,
                       std::string_view suffix = "");

}  // namespace libshare

#endif  // LIBSHARE_SPELLING_H_

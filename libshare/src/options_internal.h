// Private helpers the option grammar's files share (options.cc parses,
// options_format.cc writes the canonical text, options_properties.cc
// works per property). Not part of the API.
#ifndef LIBSHARE_SRC_OPTIONS_INTERNAL_H_
#define LIBSHARE_SRC_OPTIONS_INTERNAL_H_

#include <optional>
#include <string>
#include <string_view>

#include "libshare/options.h"

namespace libshare::internal {

// True if the scope holds an access option (rw, ro, root, none,
// root_mapping), as opposed to only naming its flavors.
inline bool ScopeHasAccessOption(const SecScope& s) {
  return s.rw_all || s.ro_all || s.rw || s.ro || s.root || s.none ||
         s.root_mapping;
}

// Appends `word` to a comma-separated option text.
inline void AppendWord(std::string* out, std::string_view word) {
  if (!out->empty()) out->push_back(',');
  out->append(word);
}

// Appends "NAME=LIST" to a comma-separated option text if `list` is set.
inline void AppendList(std::string* out, std::string_view name,
                       const std::optional<AccessList>& list) {
  if (!list) return;
  if (!out->empty()) out->push_back(',');
  out->append(name);
  out->push_back('=');
  out->append(list->Canonical());
}

}  // namespace libshare::internal

#endif  // LIBSHARE_SRC_OPTIONS_INTERNAL_H_

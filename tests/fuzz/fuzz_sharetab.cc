// Fuzz target: the sharetab(5) view parser (libshare/sharetab.h).
//
// Properties:
//  - parse -> format -> parse: a text ParseSharetab accepts yields entries
//    whose formatted lines (joined) parse back to the same entries;
//  - format -> parse: an entry WriteSharetab would write (absolute path,
//    non-empty fstype, no tab, newline or NUL in any field; resource not
//    "-", which is sharetab's spelling of "none") reads back equal. The
//    entry is taken from the input split at 0x1f bytes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "fuzz_check.h"
#include "libshare/sharetab.h"

namespace {

using fuzz::Escape;
using libshare::FormatSharetabLine;
using libshare::ParseSharetab;
using libshare::ParseSharetabLine;
using libshare::SharetabEntry;

std::string Show(const SharetabEntry& e) {
  return "{" + Escape(e.path) + " | " + Escape(e.resource) + " | " +
         Escape(e.fstype) + " | " + Escape(e.options) + " | " +
         Escape(e.description) + "}";
}

bool Writable(const std::string& field) {
  return field.find_first_of(std::string_view("\t\n\0", 3)) ==
         std::string::npos;
}

void CheckParseFormat(std::string_view text) {
  absl::StatusOr<std::vector<SharetabEntry>> entries = ParseSharetab(text);
  if (!entries.ok()) {
    FUZZ_CHECK(!entries.status().message().empty(), "refusal without message");
    return;
  }
  std::string formatted;
  for (const SharetabEntry& e : *entries) {
    const std::string line = FormatSharetabLine(e);
    FUZZ_CHECK(!line.empty() && line.back() == '\n',
               "formatted line without newline: " + Escape(line));
    absl::StatusOr<SharetabEntry> back = ParseSharetabLine(line);
    FUZZ_CHECK(back.ok(),
               "line " + Escape(line) + " of entry " + Show(e) +
                   " is refused: " + std::string(back.status().message()));
    FUZZ_CHECK(*back == e,
               "entry " + Show(e) + " reads back as " + Show(*back));
    formatted += line;
  }
  absl::StatusOr<std::vector<SharetabEntry>> again = ParseSharetab(formatted);
  FUZZ_CHECK(again.ok(), "formatted text " + Escape(formatted) + " refused: " +
                             std::string(again.status().message()));
  FUZZ_CHECK(*again == *entries,
             "formatted text " + Escape(formatted) + " reads back differently");
}

void CheckFormatParse(std::string_view text) {
  std::vector<std::string> fields;
  std::size_t pos = 0;
  while (fields.size() < 5) {
    std::size_t sep = text.find('\x1f', pos);
    fields.emplace_back(text.substr(pos, sep - pos));
    if (sep == std::string_view::npos) break;
    pos = sep + 1;
  }
  if (fields.size() != 5) return;
  SharetabEntry e;
  e.path = fields[0];
  e.resource = fields[1];
  e.fstype = fields[2];
  e.options = fields[3];
  e.description = fields[4];
  for (const std::string& f : fields) {
    if (!Writable(f)) return;
  }
  if (e.path.empty() || e.path[0] != '/' || e.fstype.empty() ||
      e.resource == "-") {
    return;
  }
  const std::string line = FormatSharetabLine(e);
  absl::StatusOr<SharetabEntry> back = ParseSharetabLine(line);
  FUZZ_CHECK(back.ok(), "entry " + Show(e) + " formats as refused line " +
                            Escape(line) + ": " +
                            std::string(back.status().message()));
  FUZZ_CHECK(*back == e, "entry " + Show(e) + " reads back as " + Show(*back));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  CheckParseFormat(text);
  CheckFormatParse(text);
  (void)ParseSharetabLine(text);
  return 0;
}

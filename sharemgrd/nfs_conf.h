// NfsConf: the settings of nfs-utils' configuration files (nfs.conf(5)),
// read as nfs-utils' conffile.c reads them, so that sharemgrd can take what
// rpc.mountd would take from the same files.
//
//   absl::StatusOr<NfsConf> conf = NfsConf::Load("/etc/nfs.conf");
//   if (!conf.ok()) ...  // "/etc/nfs.conf:12: not a [section] header, ..."
//   if (const NfsConfEntry* e = conf->Find("mountd", "port")) {
//     ... e->value, e->Where() ("/etc/nfs.conf.d/local.conf:3")
//   }
//
// The files: PATH, then the files of PATH.d whose names end in ".conf" (not
// starting with '.'), in version-sort order as scandir(3) with
// versionsort gives them ("9.conf" before "10.conf"). A later assignment to
// the same (section, subsection, key) replaces an earlier one, in a file
// and across files. Neither PATH nor PATH.d need exist.
//
// The syntax, as conffile.c has it: "[section]" or [section "subsection"]
// headers (text after ']' ignored); "key = value" lines, blanks around
// both trimmed; a value in double or single quotes is what lies between
// them (the rest of the line ignored), an unquoted one ends at '#' or ';';
// an empty value assigns nothing; lines starting with '#' or ';' and blank
// lines are skipped; a backslash ending a line joins the next one to it.
// "include = FILE" reads FILE in place (relative to the including file's
// folder), its lines in the current section until it opens one of its own;
// "include = -FILE" does the same if FILE exists. Sections, subsections and
// keys compare case-insensitively.
//
// Where nfs-utils only warns about a line it cannot read and goes on, Load
// fails with an error naming FILE:LINE: sharemgrd would otherwise start
// with a setting missing that the administrator wrote. What nfs-utils
// itself skips with a warning (a missing non-optional include, a last line
// without a newline, which nfs-utils ignores) is skipped here too and
// listed in warnings().
//
// Immutable once loaded: the const methods may be called from any thread.
#ifndef SHAREMGRD_NFS_CONF_H_
#define SHAREMGRD_NFS_CONF_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sharemgrd {

inline constexpr char kDefaultNfsConfPath[] = "/etc/nfs.conf";

// One assignment in force, with where it was written.
struct NfsConfEntry {
  std::string section;     // lower case, as nfs-utils keeps it
  std::string subsection;  // as written; "" for none
  std::string key;         // as written (the last assignment's spelling)
  std::string value;       // unquoted; never empty
  std::string file;
  int line = 0;

  // "FILE:LINE".
  std::string Where() const;
};

class NfsConf {
 public:
  // Reads `path` and `path`.d/*.conf as described above. Error (naming
  // FILE:LINE, or FILE when it cannot be read) on a line that does not
  // parse, a file that exists but cannot be read, or includes nested more
  // than 16 deep.
  [[nodiscard]] static absl::StatusOr<NfsConf> Load(const std::string& path);

  // The assignment in force for `key` in [section] (subsection "") or
  // [section "subsection"], or nullptr if none.
  const NfsConfEntry* Find(absl::string_view section, absl::string_view key,
                           absl::string_view subsection = "") const;
  // Every assignment in force in `section` (any subsection), ordered by
  // subsection then key.
  std::vector<const NfsConfEntry*> Section(absl::string_view section) const;

  // The value as nfs-utils' conf_get_str gives it: a value "$NAME" is
  // replaced by the environment variable NAME when that is set and not
  // empty, else by NAME in [environment] (expanded in turn). nullopt when
  // the name is found in neither (nfs-utils then behaves as if the key
  // were not set), or when such references loop.
  std::optional<std::string> Expand(
      const NfsConfEntry& entry,
      const std::function<const char*(const char*)>& getenv = nullptr) const;

  // The files read, in order (PATH if it exists, included files, PATH.d's).
  const std::vector<std::string>& files() const { return files_; }
  // "FILE:LINE: why" for what was skipped as nfs-utils skips it.
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  class Reader;
  // (section, subsection, key), each lower case.
  using Key = std::tuple<std::string, std::string, std::string>;

  std::map<Key, NfsConfEntry> entries_;
  std::vector<std::string> files_;
  std::vector<std::string> warnings_;
};

}  // namespace sharemgrd

#endif  // SHAREMGRD_NFS_CONF_H_

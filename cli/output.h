// What sharectl prints: human text that lines up in columns and reads like
// Solaris sharemgr(1M), or one JSON document (--json) for scripts. Pure
// functions from the client API's values to text; thread-safe.
#ifndef SHARECTL_OUTPUT_H_
#define SHARECTL_OUTPUT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "libshare/records.h"
#include "libshare/client.h"
#include "libshare/sharetab.h"

namespace sharectl {

// Rows padded so that every column but the last lines up; `indent` is
// put before each row.
std::string FormatColumns(const std::vector<std::vector<std::string>>& rows,
                          const std::string& indent = "");

std::string FormatList(const std::vector<libshare::GroupInfo>& groups,
                       bool verbose);
// list -v with an OPEN column: what opens the group's shares to every
// client (GroupOpenNote).
std::string FormatList(const std::vector<libshare::GroupInfo>& groups,
                       const std::vector<libshare::ShareInfo>& shares);
std::string FormatListJson(const std::vector<libshare::GroupInfo>& groups);
// `list -v`'s lines about shares the daemon does not serve (see
// sharemgrd.8, "Shares follow their file systems"): "PATH: not served: WHY".
std::string FormatNotServed(const std::vector<libshare::ShareInfo>& shares);

// `groups` in the order to print; `shares` may be of any of them.
// `kernel_mode`: the daemon runs its kernel mode (stats' kernel.mode is
// "on"); only then does `verbose` name the options the kernel cannot
// apply ("PATH: no effect in kernel mode: ...").
std::string FormatShow(const std::vector<libshare::GroupInfo>& groups,
                       const std::vector<libshare::ShareInfo>& shares,
                       bool verbose, bool kernel_mode);
std::string FormatShowJson(const std::vector<libshare::GroupInfo>& groups,
                           const std::vector<libshare::ShareInfo>& shares);

std::string FormatSharetab(const std::vector<libshare::SharetabEntry>& entries);
std::string FormatSharetabJson(
    const std::vector<libshare::SharetabEntry>& entries);

class JsonWriter;

std::string FormatCheck(const libshare::CheckResult& r);
std::string FormatCheckJson(const libshare::CheckResult& r);
// The members of FormatCheckJson's object, for a document that adds more
// (a refused check's "error").
void WriteCheckMembers(const libshare::CheckResult& r, JsonWriter* w);

// `s` with control and non-printable bytes escaped, as paths are shown in
// text output.
std::string ShownForTerminal(std::string_view s);
// A word the user gave, echoed in an error message ("unknown command
// \"...\""): escaped as ShownForTerminal, and cut after kShownWordBytes
// bytes (marked "...") so that a line of junk is not printed back whole.
inline constexpr std::size_t kShownWordBytes = 64;
std::string ShownWord(std::string_view s);

// "1 operation", "2 operations": n and the word that goes with it.
std::string Counted(std::size_t n, std::string_view one, std::string_view many);

// Unix seconds as ISO 8601 in UTC, "2026-12-07T13:40:05Z": the times of
// `mounts` and `changes`, in text and JSON alike.
std::string IsoTime(int64_t unix_seconds);

std::string FormatStats(const libshare::DaemonStats& s);
std::string FormatStatsJson(const libshare::DaemonStats& s);
// The managed groups (sharemgrd --follow-exports), one line each: the
// file, its group and "ok" or the error that keeps its last version out.
// "" when there is none.
// `stats`' followed exports files: each file --follow-exports matches,
// its group and share count, and whether its last version is applied
// (with the generation it made) or refused (since when, and why).
std::string FormatFollowed(
    const std::vector<libshare::FollowedFileStatus>& files,
    const std::vector<libshare::GroupInfo>& groups);

}  // namespace sharectl

#endif  // SHARECTL_OUTPUT_H_

// sharectl's command runner: everything main() does, with its streams,
// terminal state and connection made injectable so tests can drive it.
// Not thread-safe (one Run per Environment at a time).
#ifndef SHARECTL_SHARECTL_H_
#define SHARECTL_SHARECTL_H_

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "libshare/client.h"

namespace sharectl {

// Exit codes (sharectl(8)).
inline constexpr int kExitOk = 0;
inline constexpr int kExitRefused = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitUnreachable = 3;

// A batch with more commands than this shows progress on a terminal.
inline constexpr size_t kProgressThreshold = 2000;

// The most text a batch or an exports file is read to: the daemon takes
// at most 256 MiB in one call, and a batch's encoding is no smaller than
// its text but for comments, blank lines, quoting and spacing. A longer
// input (a device such as /dev/zero, a pipe that never ends) is refused
// once it passes this, not read until memory runs out.
inline constexpr std::size_t kMaxInputBytes = std::size_t{256} << 20;

struct Environment {
  std::ostream* out = nullptr;
  std::ostream* err = nullptr;
  std::istream* in = nullptr;  // for `batch -`
  // Both standard output and standard error are terminals: progress and
  // the summary line are shown only then.
  bool interactive = false;
  std::string socket_from_env;  // $SHARECTL_SOCKET, "" if unset
  std::function<absl::StatusOr<std::unique_ptr<libshare::Client>>(
      const std::string& socket)>
      connect;  // default: libshare::Client::Connect
  std::size_t max_input_bytes = kMaxInputBytes;  // tests make it small
};

// args excludes the program name. Returns the exit code.
int Run(const std::vector<std::string>& args, const Environment& env);

}  // namespace sharectl

#endif  // SHARECTL_SHARECTL_H_

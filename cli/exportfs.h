// `sharectl exportfs`: an exportfs(8)-compatible front end, also what
// sharectl does when it is run under the name `exportfs` (a symlink or a
// dpkg-divert of /usr/sbin/exportfs), so that OpenZFS and scripts that
// run `exportfs -ra` call the daemon unchanged. See sharectl(8), EXPORTFS.
//
//   exportfs -r | -a   the daemon re-reads its followed exports files now
//                      (MGMTPROC_FOLLOW_SYNC) and replies once applied
//   exportfs [-o OPTS] CLIENT:PATH...   transient exports: group "exportfs"
//   exportfs -u CLIENT:PATH...          remove them
//   exportfs [-v | -s]                  list, in exportfs's own format
//   exportfs -f                         flush, as `sharectl cache flush`
//
// A transient export is a share of the group "exportfs" whose description
// holds its exports(5) clients ("host(rw) *(ro)"); its share_nfs options
// are that line translated by the importer (libshare/import.h), as a followed
// file's would be.
//
// The parsing and formatting functions are pure and thread-safe;
// RunExportfs is not (one run at a time per Environment).
#ifndef SHARECTL_EXPORTFS_H_
#define SHARECTL_EXPORTFS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "libshare/import.h"
#include "sharectl.h"

namespace sharectl {

// The group that holds the transient exports of `exportfs -o`.
inline constexpr char kExportfsGroup[] = "exportfs";

// exportfs(8)'s command line (getopt "afhio:ruvs"; flags may be combined,
// "-ra", "-orw", and mixed with CLIENT:PATH arguments).
struct ExportfsArgs {
  bool all = false;                    // -a (or -r)
  bool reexport = false;               // -r
  bool unexport = false;               // -u
  bool verbose = false;                // -v
  bool export_format = false;          // -s
  bool flush = false;                  // -f
  bool ignore = false;                 // -i
  bool help = false;                   // -h, --help
  std::optional<std::string> options;  // -o OPTS
  std::vector<std::string> targets;    // CLIENT:PATH
};

// Usage errors (kInvalidArgument) name the flag: `unknown option "-x"`,
// `option "-d" (debug) is not supported`, and exportfs's own checks
// ("extra arguments are not permitted with -a or -r", ...).
[[nodiscard]] absl::StatusOr<ExportfsArgs> ParseExportfsArgs(
    const std::vector<std::string>& args);

// CLIENT:PATH as exportfs splits it: at the first ':' (an IPv6 client in
// brackets, "[fe80::1]:/x" or "[fe80::/64]:/x", at the ':' after ']'),
// PATH absolute and normalized. kInvalidArgument: "Invalid export syntax".
struct ClientPath {
  std::string client;
  std::string path;
};
[[nodiscard]] absl::StatusOr<ClientPath> SplitClientPath(
    const std::string& arg);

// One client of a transient export, as kept in its share's description.
struct ExportfsClient {
  std::string spec;     // "10.0.0.1", "*.example.com", "@eng"
  std::string options;  // exports(5) options as given, "" for defaults
};
// The clients a description holds ("host(rw) *(ro)"); an error names the
// token that is not `SPEC` or `SPEC(OPTS)`.
[[nodiscard]] absl::StatusOr<std::vector<ExportfsClient>> ParseClientList(
    const std::string& description);
std::string FormatClientList(const std::vector<ExportfsClient>& clients);
// exportfs -o: a client already there gets OPTS on top of its own (as
// exportfs updates an existing entry); a new one is appended.
void AddExportfsClient(std::vector<ExportfsClient>* clients,
                       const std::string& spec, const std::string& options);
// exportfs -u: false when no client has that spec (case-insensitive).
bool RemoveExportfsClient(std::vector<ExportfsClient>* clients,
                          const std::string& spec);
// The exports(5) line of PATH with these clients (the path quoted and
// escaped as exportfs writes it).
std::string ExportsLine(const std::string& path,
                        const std::vector<ExportfsClient>& clients);

// The options exportfs -v shows for a client, as sharemgrd applies them
// in kernel mode: "sync,wdelay,hide,no_subtree_check,sec=sys,rw,secure,
// root_squash,no_all_squash" (anonuid=/anongid= when not 65534);
// "insecure" for a daemon that runs --insecure (the port check is
// server-wide there).
std::string EffectiveLinuxOptions(const libshare::ExportsClientView& c,
                                  bool insecure = false);
// The listing of exportfs (nfs-utils' dump()): by client kind, then in
// the order given; "<world>" for "*" unless export_format (-s, whose
// lines are "PATH  CLIENT(OPTIONS)", two spaces as exportfs writes);
// options with verbose or export_format.
std::string FormatExportfsList(std::vector<libshare::ExportsClientView> clients,
                               bool verbose, bool export_format,
                               bool insecure = false);

// The clients exportfs -v lists for a share the daemon serves with
// `served` (its effective options), when no exports(5) text says them
// (a followed file's path served from its last good version, a share of
// the group exportfs edited with set-share): each allowing entry of its
// rw=, ro=, root= lists, and "*" when a scope opens to every client, with
// what a client named by that entry gets, flavor by flavor (none= and
// deny entries decide as they do for such a client; an entry that gets
// nothing is left out). Specs in exportfs's spelling: "10.0.0.0/8",
// "*.example.com", host names and addresses as written.
std::vector<libshare::ExportsClientView> ServedClients(
    const std::string& path, const libshare::ShareOptions& served);

// Runs `exportfs ARGS` (args exclude the program name) against the daemon
// at `socket`. Messages start with "exportfs: ". Exit codes as sharectl's.
int RunExportfs(const std::vector<std::string>& args, const Environment& env,
                const std::string& socket);

}  // namespace sharectl

#endif  // SHARECTL_EXPORTFS_H_

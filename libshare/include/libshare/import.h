// Import of existing share tables: turns a Linux exports(5) file or a
// Solaris dfstab into the share operations that reproduce it, so an
// existing server moves over in one batch. `sharectl import` and
// sharemgrd's --follow-exports both read files through it. Each operation
// remembers the file and line it came from, so a refusal by the daemon is
// reported where the user can fix it.
//
// Pure functions over file contents (the caller reads the files); thread-
// safe.
//
//   libshare::ImportPlan plan =
//       libshare::ImportExports({{"/etc/exports", text}}, "imported");
//   for (const libshare::ImportProblem& p : plan.problems)
//     std::cerr << p.where << ": " << p.message << "\n";
//   // plan.ops: one add-share into group "imported" per exported path
#ifndef LIBSHARE_IMPORT_H_
#define LIBSHARE_IMPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "libshare/batch.h"
#include "libshare/options.h"

namespace libshare {

struct SourceFile {
  std::string name;  // as shown in messages ("/etc/exports")
  std::string text;
};

struct ImportProblem {
  std::string where;    // "/etc/exports:7"
  std::string message;  // "option \"crossmnt\" has no share_nfs equivalent"
  // True for an option with no share_nfs equivalent: --skip-unsupported
  // drops it and goes on. Any other problem always stops the import.
  bool unsupported = false;
};

struct ImportPlan {
  std::vector<Operation> ops;        // kAddShare, in file order
  std::vector<std::string> origins;  // "FILE:LINE" of each op
  std::vector<ImportProblem> problems;
  // Imported as written but worth a look: "host (rw)" (a space that makes
  // the options apply to every client), a share read-write to every
  // client or giving root to every client. Never stop the import.
  std::vector<ImportProblem> warnings;
};

// Each exported path becomes one add-share into `group`; several lines for
// one path are merged. The options give every client what rpc.mountd
// would: its deciding entry is the first match in rpc.mountd's order
// (hosts, networks, wildcards, netgroups, "*"; file order within each),
// so rw=/ro=/root= (and none= where a flavor is missing) list the entries
// in that order with "-" entries where needed, "*" becomes bare rw or ro,
// and each sec= flavor gets its own scope. Networks map to @NET/LEN,
// "*.dom" to .dom, @netgroup to the netgroup's name, one anonuid=anongid
// pair to anon=. What sharemgr cannot say exactly is a problem: one whose
// loss only narrows access is `unsupported` (--skip-unsupported drops it);
// one that would widen access (per-client anon ids, all_squash, ...)
// stops the import (fsid= and uuid=, whose loss changes the file handles
// mounted clients hold, are unsupported). Options that change nothing in
// share_nfs (sync, no_subtree_check, ...) are dropped silently.
ImportPlan ImportExports(const std::vector<SourceFile>& files,
                         const std::string& group);

// One client of one exported path as rpc.mountd reads it (the first
// entry of a client named twice for a path is kept): what `exportfs -v`
// lists. Options sharemgr drops or refuses are not in it.
struct ExportsClientView {
  std::string path;   // normalized
  std::string spec;   // "10.0.0.0/8", "*", "@eng"
  std::string where;  // "FILE:LINE"
  // rpc.mountd's order of client kinds (hosts, networks, wildcards,
  // netgroups, "*", gss): its export list is walked kind by kind.
  int rank = 0;
  struct Flavor {
    SecFlavor flavor;
    bool ro = true;
    bool root_squash = true;
    bool all_squash = false;
  };
  std::vector<Flavor> flavors;  // sec= order; sys alone by default
  int64_t anonuid = 65534;
  int64_t anongid = 65534;
  bool nohide = false;
};

// The clients of every path of exports(5) files, in file order; the
// problems ImportExports would report go to *problems (may be null).
std::vector<ExportsClientView> ExportsClients(
    const std::vector<SourceFile>& files, std::vector<ImportProblem>* problems);

// Lines "share [-F nfs] [-o OPTS] [-d DESC] PATH [RESOURCE]", shell-quoted,
// with # comments and blank lines.
ImportPlan ImportDfstab(const std::vector<SourceFile>& files,
                        const std::string& group);

// Converts a netmask ("255.255.0.0") to a prefix length, or -1 if it is
// not a contiguous IPv4 mask.
int NetmaskToPrefix(const std::string& mask);

}  // namespace libshare

#endif  // LIBSHARE_IMPORT_H_

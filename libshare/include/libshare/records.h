// The records a listing returns, to a program using the client API
// (libshare/client.h) and inside the daemon (libshare/catalog.h) alike: a
// share and a group as the share table holds them. See libshare(3).
#ifndef LIBSHARE_RECORDS_H_
#define LIBSHARE_RECORDS_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace libshare {

struct ShareInfo {
  uint64_t id = 0;           // stable for the life of the share
  uint64_t generation = 0;   // changes whenever the share's effective
                             // options, group or state change
  std::string path;
  std::string group;
  std::string resource;
  std::string description;
  std::string options;            // the share's own text ("" = inherit)
  std::string effective_options;  // own text, or the group's if own is ""
  bool active = false;            // its group is enabled
  // The device its path was on when it was added (or, for a share loaded
  // at start, when it was added then: device numbers may change across
  // boots and pool imports).
  uint64_t dev = 0;
  // Whether a file system was mounted at the path when it was added (true
  // when unknown: loaded at start, or a kernel before 5.8).
  bool mount_root = true;
  // Its effective options hold the flag mountpoint (from the compiled
  // options, inside the daemon; LIST_SHARES does not send it: a client
  // reads effective_options).
  bool mountpoint = false;
  // Filled by the daemon's LIST_SHARES: why it does not serve the share
  // ("" if it does; see sharemgrd's fs_watch.h). Never set by the Catalog.
  std::string not_served;
  // The file-system identity recorded when the share was added ("uuid:"
  // and 32 hex digits; "" when none was recorded): what the kernel mode
  // answers for it on every head. See sharemgrd(8), "File-system identity".
  std::string fs_identity{};
  // Filled by the daemon's LIST_SHARES: the identity the share's file
  // system has now, when it differs from the recorded one ("" otherwise,
  // or when it cannot be examined).
  std::string live_fs_identity{};
};

struct GroupInfo {
  std::string name;
  bool enabled = true;
  std::string options;  // defaults for shares with no options of their own
  std::size_t share_count = 0;
  // The exports file the group mirrors (sharemgrd --follow-exports), or ""
  // when it is edited by hand.
  std::string managed_by{};
  // Why the file's last version was not applied ("FILE:LINE: message"),
  // or "" (filled by the daemon; the catalog leaves it empty).
  std::string follow_error{};
};

// The authorization cache's counters since the daemon started (STATS;
// inside the daemon, authcache::AuthCache::counters()).
struct CacheStats {
  uint64_t entries = 0;
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t coalesced = 0;
  uint64_t refreshes = 0;
  uint64_t reclaims = 0;
  uint64_t lookups = 0;  // calls made to the resolver
  uint64_t lookup_failures = 0;
  uint64_t timeouts = 0;
};

// Where the table is kept (STATS): the head's own SQLite store, or a
// cluster engine (PostgreSQL) that several heads follow, with the head's
// SQLite copy beside it.
struct StoreStatus {
  std::string kind = "sqlite";  // "sqlite" or "postgresql"
  std::string engine;   // "PostgreSQL at HOST:PORT, database DB"; "" for sqlite
  std::string head;     // this head's name in the change log
  uint64_t applied = 0;  // the generation this head's table is at
  uint64_t cluster = 0;  // the engine's, when last seen
  bool reachable = true;
  int64_t unreachable_since = 0;  // Unix seconds; 0 while reachable
  std::string error;              // why it is unreachable, or the last fault
  uint64_t resyncs = 0;           // full resynchronizations since the start
};

}  // namespace libshare

#endif  // LIBSHARE_RECORDS_H_

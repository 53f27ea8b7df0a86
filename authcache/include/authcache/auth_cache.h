// AuthCache: access decisions for MOUNT, cached so that name-service storms,
// slow name servers and memory pressure do not reach the clients.
//
// Thread-safe: Check() may be called from any number of threads. The cache
// is sharded; each shard has its own lock, held only for map and LRU list
// updates, never across a name-service call.
//
// Usage:
//   AuthCache cache(std::shared_ptr<Resolver>(MakeSystemResolver()), {});
//   Decision d = cache.Check(addr, share.options, libshare::SecFlavor::kSys,
//                            uid);
//
// Two layers:
//  - decisions, keyed by (client address, the compiled options object,
//    flavor, uid == 0), living as long as the name answers they used (or
//    positive_ttl when they used none). A decision depends on nothing else
//    of a share, so the shares that hold one options object (the shares of
//    a group that have no options of their own hold the group's) share
//    their decisions: a client's first mount of another such share is a
//    hit. Options that change are a new object, so a decision made from
//    the old ones is never used for them;
//  - name answers: address -> forward-confirmed names, and
//    (host, netgroup) -> membership; each with positive, negative and
//    failure TTLs.
// Concurrent misses on one key make one resolver call; the other callers
// wait for it (counted as "coalesced"). An entry past its TTL is served
// while one background refresh runs; a failed refresh keeps the old answer
// until hard_limit. Resolver calls run on a bounded pool; one that takes
// longer than lookup_timeout is a failure (counted in "timeouts"), cached
// for failure_ttl, never as a positive answer. Past max_entries, least
// recently used entries are dropped, O(1) each.
#ifndef AUTHCACHE_AUTH_CACHE_H_
#define AUTHCACHE_AUTH_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "authcache/evaluate.h"
#include "authcache/resolver.h"
#include "libshare/options.h"
#include "libshare/records.h"

namespace authcache {

// Defaults suit a site name service: answers live 15 minutes (2 for "no
// such name"/"not a member"), a failure is retried after 10 s, and a stale
// answer is served for at most an hour while refreshes fail.
struct AuthCacheConfig {
  // Bound on cached decisions plus name answers, split evenly over the
  // shards (each keeps max_entries / shards; fewer shards when
  // max_entries is below `shards`, one entry each).
  std::size_t max_entries = 100000;
  absl::Duration positive_ttl = absl::Minutes(15);  // names found, member
  absl::Duration negative_ttl = absl::Minutes(2);   // no name, not a member
  absl::Duration failure_ttl = absl::Seconds(10);   // failed or timed out
  // Stale answers are served at most this long past their TTL.
  absl::Duration hard_limit = absl::Hours(1);
  // A caller waits at most this long for a lookup (real time, from when
  // the lookup was queued), then gets a failure.
  absl::Duration lookup_timeout = absl::Seconds(5);
  // Bound on concurrent resolver calls; background decision refreshes use
  // max(1, lookup_threads / 2) further threads.
  int lookup_threads = 8;
  int shards = 16;
};

// hits/misses count Check() calls (a stale answer served is a hit);
// coalesced counts callers that waited for another's lookup, decisions and
// name answers alike; refreshes counts background refreshes started;
// reclaims counts entries dropped for the memory bound (not Flush or
// DropUnused); lookups counts resolver calls; lookup_failures counts
// failed resolver calls and timeouts; timeouts counts lookups abandoned at
// lookup_timeout.
// The counters STATS reports (one definition, libshare/records.h).
using AuthCacheCounters = libshare::CacheStats;

class AuthCache {
 public:
  // `clock` may be nullptr (real clock); it must outlive the cache.
  AuthCache(std::shared_ptr<Resolver> resolver, AuthCacheConfig config,
            Clock* clock = nullptr);
  // Does not wait for resolver calls still running (a dead name server
  // must not hold up shutdown): they finish on a detached thread, which
  // then frees what they used; their answers are dropped.
  ~AuthCache();
  AuthCache(const AuthCache&) = delete;
  AuthCache& operator=(const AuthCache&) = delete;

  // The decision for `client` mounting a share whose effective options
  // are `opts` (not null). Cached by the object's identity: a decision made
  // from another object, equal or not, is never used, and the cache keeps
  // only a weak reference to it.
  Decision Check(const libshare::IpAddress& client,
                 const std::shared_ptr<const libshare::ShareOptions>& opts,
                 libshare::SecFlavor flavor, uint32_t uid);
  // The same, into `*out`: a caller that reuses one Decision per thread
  // makes a cache hit allocate nothing (string capacity is reused).
  void Check(const libshare::IpAddress& client,
             const std::shared_ptr<const libshare::ShareOptions>& opts,
             libshare::SecFlavor flavor, uint32_t uid, Decision* out);

  // Resolves a host name to its first address (for `sharectl check NAME`),
  // through the cache's resolver and timeout.
  [[nodiscard]] absl::StatusOr<libshare::IpAddress> AddressOf(
      std::string_view name);

  // Drops the decisions made from options no share holds any more (their
  // shares were removed or given other options), in one pass over the
  // cache; returns how many. Those decisions can never answer again:
  // dropping them frees their memory sooner than the LRU would. A shard's
  // lock is held for a few hundred entries at a time.
  std::size_t DropUnused();
  // Drops least recently used entries until at most `target` remain;
  // returns how many were dropped.
  std::size_t Reclaim(std::size_t target);
  // Drops everything.
  void Flush();
  // Reloads the resolver (SIGHUP) and flushes name answers.
  [[nodiscard]] absl::Status ReloadResolver();

  AuthCacheCounters counters() const;

  // Blocks until no background refresh or lookup is queued or running
  // (a stalled resolver call included). For tests and benchmarks.
  void WaitForBackgroundWork();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace authcache

#endif  // AUTHCACHE_AUTH_CACHE_H_

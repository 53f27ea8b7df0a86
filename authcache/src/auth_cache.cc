// The authorization cache. Invariants (per shard, under Shard::mu):
//  - every Entry in `decisions` or `names` is on the shard's LRU list
//    exactly once, and `count` is the number of such entries;
//  - a name entry's `inflight` is set while a lookup (first fill or
//    refresh) for it runs; callers join it instead of starting another, and
//    wait on the Flight's Notification without holding the shard lock;
//  - a decision entry's `evaluating` is set while a caller evaluates it
//    (its first value, or again after a failure); a caller that comes
//    meanwhile sets `inflight` (once: one Flight for all of them) and waits
//    on it, and the evaluating caller answers it. An evaluation nobody
//    waits for allocates no Flight;
//  - an entry whose `has_value` is false has `inflight` (a name entry) or
//    `evaluating` (a decision entry) set, unless a timeout abandoned it.
// Decisions carry the earliest expiry of the name answers they were built
// from, so a decision goes stale when its names do.
#include "authcache/auth_cache.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "libshare/work_pool.h"

namespace authcache {
namespace {

using libshare::IpAddress;
using libshare::SecFlavor;
using libshare::ShareOptions;

// Fixed size and flat, so that a hit hashes and compares a few words and
// allocates nothing. `options` is the address of the compiled options the
// decision was made from: shares with one set of effective options (the
// shares of a group that have none of their own hold the group's one
// object) share their decisions. The entry keeps a weak reference to that
// object, so an address freed and reused by other options is told apart.
struct DecisionKey {
  uint64_t addr_hi = 0;  // IpAddress bytes 0-7
  uint64_t addr_lo = 0;  // IpAddress bytes 8-15
  uintptr_t options = 0;
  SecFlavor flavor = SecFlavor::kSys;
  bool root_uid = false;  // AUTH_SYS uid 0: only then does root= matter

  DecisionKey() = default;
  DecisionKey(const IpAddress& a, const ShareOptions* o, SecFlavor f,
              bool root)
      : options(reinterpret_cast<uintptr_t>(o)), flavor(f), root_uid(root) {
    std::memcpy(&addr_hi, a.bytes.data(), 8);
    std::memcpy(&addr_lo, a.bytes.data() + 8, 8);
  }
  IpAddress address() const {
    IpAddress a;
    std::memcpy(a.bytes.data(), &addr_hi, 8);
    std::memcpy(a.bytes.data() + 8, &addr_lo, 8);
    return a;
  }
  friend bool operator==(const DecisionKey& a, const DecisionKey& b) {
    return a.addr_lo == b.addr_lo && a.addr_hi == b.addr_hi &&
           a.options == b.options && a.flavor == b.flavor &&
           a.root_uid == b.root_uid;
  }
  template <typename H>
  friend H AbslHashValue(H h, const DecisionKey& k) {
    return H::combine(std::move(h), k.addr_hi, k.addr_lo, k.options,
                      static_cast<uint64_t>(k.flavor) << 1 | k.root_uid);
  }
};

// kNames: the address's PTR names, not yet confirmed (never enough to
// match an entry); kConfirm: whether one of them maps back to the address;
// kNetgroup: whether a (confirmed) host name is in a netgroup, for every
// address of that name.
enum class NameKind : uint8_t { kNames, kConfirm, kNetgroup, kNetwork };

struct NameKey {
  NameKind kind = NameKind::kNames;
  IpAddress address;  // kNames, kConfirm
  // kConfirm: the name; kNetgroup: "NETGROUP\0HOST"; kNetwork: the network
  // name

  std::string text;

  friend bool operator==(const NameKey& a, const NameKey& b) {
    return a.kind == b.kind && a.address == b.address && a.text == b.text;
  }
  template <typename H>
  friend H AbslHashValue(H h, const NameKey& k) {
    return H::combine(std::move(h), static_cast<uint8_t>(k.kind),
                      k.address.bytes, k.text);
  }
};

NameKey NetgroupKey(std::string_view netgroup, std::string_view host) {
  NameKey k;
  k.kind = NameKind::kNetgroup;
  k.text.reserve(netgroup.size() + 1 + host.size());
  k.text.append(netgroup.data(), netgroup.size());
  k.text.push_back('\0');
  k.text.append(host.data(), host.size());
  return k;
}

struct NameAnswer {
  absl::Status status;               // not ok: the lookup failed
  std::vector<std::string> names;    // kNames: PTR names, lower case
  bool member = false;               // kConfirm, kNetgroup
  std::optional<IpAddress> network;  // kNetwork

  bool negative() const { return names.empty() && !member && !network; }
};

// One lookup in progress; callers that need its answer wait on `done`.
struct Flight {
  absl::Notification done;
  absl::Time deadline;     // real time; waiters give up then (name lookups)
  bool abandoned = false;  // guarded by the shard lock: timed out
  NameAnswer answer;       // set before done.Notify()
  Decision decision;       // set before done.Notify()
};

// A decision or a name answer. Every field except the keys (immutable once
// the entry is published) is guarded by its shard's mu, which the compiler
// cannot be told: the annotations sit on Shard.
struct Entry {
  Entry* prev = nullptr;  // LRU list
  Entry* next = nullptr;
  bool cached = false;  // in its shard's map and LRU list
  bool is_decision = false;
  DecisionKey dkey;
  bool has_value = false;
  // Name entries only: kept out of line so that a decision entry (there is
  // one per client and options object) does not carry a name key and
  // answer.
  struct NameData {
    NameKey key;
    NameAnswer answer;
  };
  std::unique_ptr<NameData> name;
  // Decision entries only: shared with every other entry of its shard that
  // decided the same (clients of one share mostly do; see Shard::Intern).
  std::shared_ptr<const Decision> decision;
  // Decision entries only: the options dkey.options points to. Expired
  // once no share holds them: the entry is then dead (DropUnused), and a
  // key that meets it again is other options at the same address.
  std::weak_ptr<const ShareOptions> options;
  absl::Time expires;        // fresh until then (cache clock)
  absl::Time hard_deadline;  // served stale until then at most
  std::shared_ptr<Flight> inflight;
  bool evaluating = false;  // decisions: a caller is evaluating it
  bool refreshing = false;  // decisions: a background refresh is queued
};

// std::unordered_map, not absl::flat_hash_map: Abseil 20220623's resize
// is not exception-safe (it sets the new capacity before allocating), and
// an insert that meets std::bad_alloc must leave the map intact
// (tests/reliability alloc_failure found the names map corrupted).
using DecisionMap = std::unordered_map<DecisionKey, std::shared_ptr<Entry>,
                                       absl::Hash<DecisionKey>>;
using NameMap =
    std::unordered_map<NameKey, std::shared_ptr<Entry>, absl::Hash<NameKey>>;

// Distinct decisions held by a shard's entries, each once.
struct DecisionValueHash {
  std::size_t operator()(const std::shared_ptr<const Decision>& d) const {
    return absl::HashOf(static_cast<int>(d->access), d->root, d->option,
                        d->entry, d->reason, d->lookup_failed);
  }
};
struct DecisionValueEq {
  bool operator()(const std::shared_ptr<const Decision>& a,
                  const std::shared_ptr<const Decision>& b) const {
    return *a == *b && a->reason == b->reason &&
           a->lookup_failed == b->lookup_failed;
  }
};
// std::unordered_set for the same reason as the maps.
using DecisionSet = std::unordered_set<std::shared_ptr<const Decision>,
                                       DecisionValueHash, DecisionValueEq>;

// What dropping one entry lets go of, kept by the caller until after it
// releases the shard's lock and freed then: a miss that evicts the oldest
// entry does not call free() (and wait for the allocator's lock) while
// other clients of the shard wait for it.
struct Evicted {
  DecisionMap::node_type decision_node;
  NameMap::node_type name_node;
  DecisionSet::node_type value_node;
  std::shared_ptr<const Decision> value;
};

// A decision map node with a new entry in it, made before a miss takes the
// shard's lock (one per thread; a miss uses it and the thread's next check
// makes another). Empty if making it failed: the miss then allocates under
// the lock, as it would without one.
DecisionMap::node_type& SpareDecisionNode() {
  thread_local DecisionMap staging;
  thread_local DecisionMap::node_type spare;
  if (spare.empty()) {
    try {
      staging.emplace(DecisionKey(), std::make_shared<Entry>());
      spare = staging.extract(staging.begin());
    } catch (const std::bad_alloc&) {
      staging.clear();
    }
  }
  return spare;
}

struct alignas(64) Shard {
  absl::Mutex mu;
  DecisionMap decisions ABSL_GUARDED_BY(mu);
  NameMap names ABSL_GUARDED_BY(mu);
  Entry lru ABSL_GUARDED_BY(mu);  // sentinel: lru.next is the most recent
  std::size_t count ABSL_GUARDED_BY(mu) = 0;
  uint64_t hits ABSL_GUARDED_BY(mu) = 0;
  uint64_t misses ABSL_GUARDED_BY(mu) = 0;
  uint64_t coalesced ABSL_GUARDED_BY(mu) = 0;
  uint64_t refreshes ABSL_GUARDED_BY(mu) = 0;
  uint64_t reclaims ABSL_GUARDED_BY(mu) = 0;
  // Distinct decisions held by this shard's entries, each once.
  DecisionSet decision_values ABSL_GUARDED_BY(mu);

  Shard() {
    absl::MutexLock lock(&mu);
    lru.next = lru.prev = &lru;
  }
  void Unlink(Entry* e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    e->prev->next = e->next;
    e->next->prev = e->prev;
    e->prev = e->next = nullptr;
  }
  void PushFront(Entry* e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    e->next = lru.next;
    e->prev = &lru;
    lru.next->prev = e;
    lru.next = e;
  }
  void Touch(Entry* e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (lru.next == e) return;
    Unlink(e);
    PushFront(e);
  }
  // The held copy of `d`, shared with entries that decided the same.
  std::shared_ptr<const Decision> Intern(Decision d)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    // Looked up through a pointer that owns nothing: a decision already
    // held costs no allocation.
    auto it = decision_values.find(
        std::shared_ptr<const Decision>(std::shared_ptr<const Decision>(), &d));
    if (it != decision_values.end()) return *it;
    return *decision_values.insert(std::make_shared<const Decision>(std::move(d)))
                .first;
  }
  // Lets go of `d` (an entry's decision being replaced or dropped): the
  // held copy goes once no other entry uses it. With `out`, what would be
  // freed is moved there instead (if its places are free).
  void Release(std::shared_ptr<const Decision>& d, Evicted* out = nullptr)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (d == nullptr) return;
    if (d.use_count() == 2) {
      auto it = decision_values.find(d);
      if (it != decision_values.end() && it->get() == d.get()) {
        if (out != nullptr && out->value_node.empty()) {
          out->value_node = decision_values.extract(it);
        } else {
          decision_values.erase(it);
        }
      }
    }
    if (out != nullptr && out->value == nullptr) {
      out->value = std::move(d);
    } else {
      d.reset();
    }
  }
  // Replaces the decision of entry `e` (a decision entry).
  void SetDecision(Entry* e, Decision d) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    // An entry dropped meanwhile (reclaimed, invalidated) is not in the
    // map: its decision is not held here, or nothing would let go of it.
    std::shared_ptr<const Decision> held =
        e->cached ? Intern(std::move(d))
                  : std::make_shared<const Decision>(std::move(d));
    Release(e->decision);
    e->decision = std::move(held);
  }

  // Removes `e` from the map and the list. O(1). With `out`, its map node
  // (and decision) go there, to be freed by the caller after unlocking, if
  // those places are free; otherwise they are freed here.
  void Drop(Entry* e, Evicted* out = nullptr)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    Unlink(e);
    e->cached = false;
    --count;
    if (e->is_decision) Release(e->decision, out);
    // Erasing may destroy *e: the key is copied out first. Extracting
    // destroys nothing.
    if (e->is_decision) {
      if (out != nullptr && out->decision_node.empty()) {
        out->decision_node = decisions.extract(e->dkey);
        return;
      }
      DecisionKey k = e->dkey;
      decisions.erase(k);
    } else {
      if (out != nullptr && out->name_node.empty()) {
        out->name_node = names.extract(e->name->key);
        return;
      }
      NameKey k = e->name->key;
      names.erase(k);
    }
  }
  std::size_t DropOldest(std::size_t keep, Evicted* out = nullptr)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    std::size_t dropped = 0;
    while (count > keep && lru.prev != &lru) {
      Drop(lru.prev, out);
      ++dropped;
    }
    reclaims += dropped;
    return dropped;
  }
};

}  // namespace

// Never more shards than entries: each shard keeps at least one, so a
// small bound (--auth-cache-max 3) would otherwise be 16.
static std::size_t ShardCount(const AuthCacheConfig& c) {
  return std::clamp<std::size_t>(c.max_entries, 1,
                                 static_cast<std::size_t>(std::max(1, c.shards)));
}

struct AuthCache::Impl {
  Impl(std::shared_ptr<Resolver> r, AuthCacheConfig c, Clock* clk)
      : resolver(std::move(r)),
        config(c),
        clock(clk != nullptr ? clk : RealClock()),
        shards(ShardCount(c)),
        per_shard_max(std::max<std::size_t>(1, c.max_entries / shards.size())),
        lookup_pool(std::max(1, c.lookup_threads)),
        refresh_pool(std::max(1, c.lookup_threads / 2)) {}

  template <typename K>
  Shard& ShardFor(const K& key) {
    return shards[absl::Hash<K>{}(key) % shards.size()];
  }

  absl::Time TtlFor(const NameAnswer& a, absl::Time now) const {
    if (!a.status.ok()) return now + config.failure_ttl;
    return now + (a.negative() ? config.negative_ttl : config.positive_ttl);
  }

  class CachedIdentity;

  // Forward confirmation: whether `name` maps back to `address`. One
  // resolver call.
  absl::StatusOr<bool> Confirm(const std::string& name,
                               const IpAddress& address) {
    lookups.fetch_add(1, std::memory_order_relaxed);
    absl::StatusOr<std::vector<IpAddress>> fwd = resolver->AddressesOf(name);
    if (!fwd.ok()) return fwd.status();
    return std::find(fwd->begin(), fwd->end(), address) != fwd->end();
  }

  // Runs the resolver calls that answer `key`. Called on the lookup pool.
  NameAnswer Resolve(const NameKey& key);

  // Starts a lookup flight for `e` (whose shard lock is held).
  std::shared_ptr<Flight> StartFlight(Shard& shard, std::shared_ptr<Entry> e)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mu);

  // The answer for `key`. With `want_fresh`, an answer past its TTL is
  // refreshed and waited for (background refreshes); otherwise it is served
  // stale while a refresh runs. `expires`/`hard` report the answer's life.
  NameAnswer Lookup(const NameKey& key, bool want_fresh, absl::Time* expires,
                    absl::Time* hard);

  absl::Status TimeoutStatus() const {
    return absl::DeadlineExceededError(
        absl::StrCat("name lookup took longer than ",
                     absl::FormatDuration(config.lookup_timeout)));
  }

  void CheckInto(const DecisionKey& key,
                 const std::shared_ptr<const ShareOptions>& opts, uint32_t uid,
                 Decision* out);
  // Re-evaluates a stale decision on the refresh pool.
  void RefreshDecision(std::shared_ptr<Entry> e,
                       std::shared_ptr<const ShareOptions> opts, uint32_t uid);
  // Puts `e` (in the shard's map already) on the LRU list and drops the
  // oldest entries past the shard's bound into `evicted`.
  void InsertLocked(Shard& shard, const std::shared_ptr<Entry>& e,
                    Evicted* evicted) ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mu);

  const std::shared_ptr<Resolver> resolver;
  const AuthCacheConfig config;
  // Read under a shard's lock; swapped for the real clock (then every
  // shard lock taken once) when the owner leaves lookups running behind it,
  // since the owner's clock may die with the owner.
  std::atomic<Clock*> clock;
  absl::Time Now() const {
    return clock.load(std::memory_order_relaxed)->Now();
  }
  std::vector<Shard> shards;
  const std::size_t per_shard_max;
  std::atomic<uint64_t> lookups{0};
  std::atomic<uint64_t> lookup_failures{0};
  std::atomic<uint64_t> timeouts{0};
  // Declared last: destroyed first, so no task outlives the state above.
  // The refresh pool waits on lookups, so it goes before the lookup pool.
  libshare::WorkPool lookup_pool;
  libshare::WorkPool refresh_pool;
};

// The ClientIdentity evaluation sees inside the cache: every answer comes
// from the name layer, and the earliest expiry of those used is recorded.
class AuthCache::Impl::CachedIdentity : public ClientIdentity {
 public:
  CachedIdentity(AuthCache::Impl& impl, const IpAddress& address,
                 bool want_fresh)
      : impl_(impl), address_(address), want_fresh_(want_fresh) {}

  const IpAddress& address() const override { return address_; }

  absl::StatusOr<std::vector<std::string>> Names() override {
    return NamesMatching([](std::string_view) { return true; });
  }

  // Only the PTR names `wanted` accepts are looked up forward: a list
  // needing "h1" does not pay for confirming "h1.example.com" too.
  absl::StatusOr<std::vector<std::string>> NamesMatching(
      absl::FunctionRef<bool(std::string_view)> wanted) override {
    absl::StatusOr<const std::vector<std::string>*> raw = PtrNames();
    if (!raw.ok()) return raw.status();
    std::vector<std::string> out;
    for (const std::string& name : **raw) {
      if (!wanted(name)) continue;
      NameAnswer a = Get(NameKey{NameKind::kConfirm, address_, name});
      if (!a.status.ok()) return a.status;
      if (a.member) out.push_back(name);
    }
    return out;
  }

  // A PTR name in the netgroup counts once its forward lookup gives the
  // address back; only member names are looked up forward, so the usual
  // storm costs PTR, one netgroup call per name until a member, and one
  // forward call (a host with a full name and an alias: at most 3).
  absl::StatusOr<bool> InNetgroup(std::string_view netgroup) override {
    absl::StatusOr<const std::vector<std::string>*> raw = PtrNames();
    if (!raw.ok()) return raw.status();
    // Netgroups hold host names: a client without a name is in none.
    for (const std::string& name : **raw) {
      NameAnswer a = Get(NetgroupKey(netgroup, name));
      if (!a.status.ok()) return a.status;
      if (!a.member) continue;
      NameAnswer c = Get(NameKey{NameKind::kConfirm, address_, name});
      if (!c.status.ok()) return c.status;
      if (c.member) return true;
    }
    return false;
  }

  absl::StatusOr<std::optional<IpAddress>> NetworkNamed(
      std::string_view name) override {
    NameAnswer a =
        Get(NameKey{NameKind::kNetwork, IpAddress{}, std::string(name)});
    if (!a.status.ok()) return a.status;
    return a.network;
  }

  bool consulted() const { return consulted_; }

 private:
  // The PTR names (unconfirmed), fetched once per evaluation.
  absl::StatusOr<const std::vector<std::string>*> PtrNames() {
    if (!names_.has_value()) {
      NameAnswer a = Get(NameKey{NameKind::kNames, address_, ""});
      if (!a.status.ok()) return a.status;
      names_ = std::move(a.names);
    }
    return &*names_;
  }

 public:
  absl::Time expires() const { return expires_; }
  absl::Time hard() const { return hard_; }

 private:
  NameAnswer Get(const NameKey& key) {
    absl::Time e, h;
    NameAnswer a = impl_.Lookup(key, want_fresh_, &e, &h);
    consulted_ = true;
    expires_ = std::min(expires_, e);
    hard_ = std::min(hard_, h);
    return a;
  }

  AuthCache::Impl& impl_;
  const IpAddress address_;
  const bool want_fresh_;
  std::optional<std::vector<std::string>> names_;
  bool consulted_ = false;
  absl::Time expires_ = absl::InfiniteFuture();
  absl::Time hard_ = absl::InfiniteFuture();
};

NameAnswer AuthCache::Impl::Resolve(const NameKey& key) {
  NameAnswer out;
  switch (key.kind) {
    case NameKind::kNames: {
      lookups.fetch_add(1, std::memory_order_relaxed);
      absl::StatusOr<std::vector<std::string>> ptr =
          resolver->NamesOf(key.address);
      if (!ptr.ok()) {
        out.status = ptr.status();
        break;
      }
      // Confirmed later, one name at a time and only when a list needs
      // it (kConfirm): whoever controls the PTR zone cannot claim a name.
      for (const std::string& raw : *ptr) {
        std::string name = absl::AsciiStrToLower(raw);
        if (std::find(out.names.begin(), out.names.end(), name) ==
            out.names.end()) {
          out.names.push_back(std::move(name));
        }
      }
      break;
    }
    case NameKind::kConfirm: {
      absl::StatusOr<bool> confirmed = Confirm(key.text, key.address);
      if (!confirmed.ok()) {
        out.status = confirmed.status();
      } else {
        out.member = *confirmed;
      }
      break;
    }
    case NameKind::kNetgroup: {
      const std::size_t cut = key.text.find('\0');
      lookups.fetch_add(1, std::memory_order_relaxed);
      absl::StatusOr<bool> in = resolver->InNetgroup(
          std::string_view(key.text).substr(0, cut),
          std::string_view(key.text).substr(cut + 1));
      if (!in.ok()) {
        out.status = in.status();
      } else {
        out.member = *in;
      }
      break;
    }
    case NameKind::kNetwork: {
      lookups.fetch_add(1, std::memory_order_relaxed);
      absl::StatusOr<std::optional<IpAddress>> net =
          resolver->NetworkNamed(key.text);
      if (!net.ok()) {
        out.status = net.status();
      } else {
        out.network = *net;
      }
      break;
    }
  }
  if (!out.status.ok()) {
    lookup_failures.fetch_add(1, std::memory_order_relaxed);
  }
  return out;
}

void AuthCache::Impl::InsertLocked(Shard& shard,
                                   const std::shared_ptr<Entry>& e,
                                   Evicted* evicted) {
  e->cached = true;
  shard.PushFront(e.get());
  ++shard.count;
  shard.DropOldest(per_shard_max, evicted);
}

std::shared_ptr<Flight> AuthCache::Impl::StartFlight(Shard& shard,
                                                     std::shared_ptr<Entry> e) {
  auto flight = std::make_shared<Flight>();
  flight->deadline = absl::Now() + config.lookup_timeout;
  // Published after Submit (which may throw std::bad_alloc), so a failed
  // start leaves no flight behind; the task cannot look before we unlock.
  lookup_pool.Submit(
      [this, &shard, e, flight] {
        {
          absl::MutexLock lock(&shard.mu);
          // Its callers gave up while it queued: spare the name server.
          if (flight->abandoned) return;
        }
        NameAnswer a = Resolve(e->name->key);
        absl::MutexLock lock(&shard.mu);
        if (flight->abandoned) return;  // counted as a timeout already
        const absl::Time now = Now();
        if (e->inflight == flight) e->inflight = nullptr;
        if (a.status.ok() || !e->has_value || now >= e->hard_deadline) {
          e->name->answer = a;
          e->has_value = true;
          e->expires = TtlFor(a, now);
          e->hard_deadline =
              a.status.ok() ? e->expires + config.hard_limit : e->expires;
        } else {
          // A failed refresh keeps the old answer (until its hard deadline) and
          // is retried after failure_ttl.
          e->expires = now + config.failure_ttl;
        }
        flight->answer = e->name->answer;
        flight->done.Notify();
      });
  e->inflight = flight;
  return flight;
}

NameAnswer AuthCache::Impl::Lookup(const NameKey& key, bool want_fresh,
                                   absl::Time* expires, absl::Time* hard) {
  Shard& shard = ShardFor(key);
  std::shared_ptr<Entry> e;
  std::shared_ptr<Flight> flight;
  {
    Evicted evicted;  // freed after the lock is released
    absl::MutexLock lock(&shard.mu);
    const absl::Time now = Now();
    auto it = shard.names.find(key);
    if (it != shard.names.end()) {
      e = it->second;
      shard.Touch(e.get());
      if (e->has_value && now < e->expires) {
        *expires = e->expires;
        *hard = e->hard_deadline;
        return e->name->answer;
      }
      const bool stale_ok =
          e->has_value && e->name->answer.status.ok() && now < e->hard_deadline;
      if (stale_ok && !want_fresh) {
        if (e->inflight == nullptr) {
          ++shard.refreshes;
          StartFlight(shard, e);
        }
        *expires = e->expires;
        *hard = e->hard_deadline;
        return e->name->answer;
      }
      if (e->inflight != nullptr) {
        ++shard.coalesced;
        flight = e->inflight;
      } else {
        if (stale_ok) ++shard.refreshes;
        flight = StartFlight(shard, e);
      }
    } else {
      e = std::make_shared<Entry>();
      e->name = std::make_unique<Entry::NameData>();
      e->name->key = key;
      shard.names.emplace(key, e);
      InsertLocked(shard, e, &evicted);
      flight = StartFlight(shard, e);
    }
  }
  if (flight->done.WaitForNotificationWithDeadline(flight->deadline)) {
    absl::MutexLock lock(&shard.mu);
    *expires = e->expires;
    *hard = e->hard_deadline;
    return flight->answer;
  }
  // Timed out: the call goes on in the pool and finishes on its own; its
  // answer is dropped. The entry fails for failure_ttl unless an old answer
  // may still be served.
  absl::MutexLock lock(&shard.mu);
  const absl::Time now = Now();
  if (flight->done.HasBeenNotified()) {  // finished just at the deadline
    *expires = e->expires;
    *hard = e->hard_deadline;
    return flight->answer;
  }
  if (!flight->abandoned) {
    flight->abandoned = true;
    timeouts.fetch_add(1, std::memory_order_relaxed);
    lookup_failures.fetch_add(1, std::memory_order_relaxed);
    if (e->inflight == flight) e->inflight = nullptr;
    if (e->has_value && e->name->answer.status.ok() && now < e->hard_deadline) {
      e->expires = now + config.failure_ttl;
    } else {
      e->name->answer = NameAnswer{};
      e->name->answer.status = TimeoutStatus();
      e->has_value = true;
      e->expires = now + config.failure_ttl;
      e->hard_deadline = e->expires;
    }
  }
  *expires = e->expires;
  *hard = e->hard_deadline;
  if (e->has_value && e->name->answer.status.ok() && now < e->hard_deadline) {
    return e->name->answer;
  }
  NameAnswer failed;
  failed.status = TimeoutStatus();
  return failed;
}

void AuthCache::Impl::CheckInto(const DecisionKey& key,
                                const std::shared_ptr<const ShareOptions>& opts,
                                uint32_t uid, Decision* out) {
  Shard& shard = ShardFor(key);
  std::shared_ptr<Entry> e;
  std::shared_ptr<Flight> flight;
  DecisionMap::node_type& spare = SpareDecisionNode();
  {
    Evicted evicted;  // freed after the lock is released
    absl::MutexLock lock(&shard.mu);
    const absl::Time now = Now();
    auto it = shard.decisions.find(key);
    if (it != shard.decisions.end() && it->second->options.expired()) {
      // Made for options since freed; `opts` took their address.
      shard.Drop(it->second.get(), &evicted);
      it = shard.decisions.end();
    }
    if (it != shard.decisions.end()) {
      Entry* c = it->second.get();
      if (c->has_value && now < c->expires) {
        shard.Touch(c);
        ++shard.hits;
        *out = *c->decision;
        return;
      }
      e = it->second;
      shard.Touch(c);
      if (c->has_value && !c->decision->lookup_failed &&
          now < c->hard_deadline) {
        ++shard.hits;
        *out = *c->decision;
        if (!c->refreshing) {
          c->refreshing = true;
          ++shard.refreshes;
          refresh_pool.Submit(
              [this, e, opts, uid] { RefreshDecision(e, opts, uid); });
        }
        return;
      }
      ++shard.misses;
      if (c->evaluating) {
        ++shard.coalesced;
        if (c->inflight == nullptr) c->inflight = std::make_shared<Flight>();
        flight = c->inflight;
      }
    } else {
      ++shard.misses;
      if (!spare.empty()) {
        // Allocated before the lock: the map takes the node as it is.
        e = spare.mapped();
        e->is_decision = true;
        e->dkey = key;
        e->options = opts;
        spare.key() = key;
        shard.decisions.insert(std::move(spare));
      } else {
        e = std::make_shared<Entry>();
        e->is_decision = true;
        e->dkey = key;
        e->options = opts;
        shard.decisions.emplace(key, e);
      }
      InsertLocked(shard, e, &evicted);
    }
    if (flight == nullptr) e->evaluating = true;
  }
  if (flight != nullptr) {
    // The evaluating caller's work is bounded: it stops at the first failed
    // or timed-out lookup.
    flight->done.WaitForNotification();
    *out = flight->decision;
    return;
  }
  // Callers that came meanwhile wait with no deadline, so the evaluation
  // must end on every path: if evaluating throws (std::bad_alloc), they get
  // a refusal marked lookup_failed, and the entry, still without a value,
  // is evaluated again by the next check of its key.
  struct EndEvaluationOnThrow {
    Shard& shard;
    Entry& e;
    bool ended = false;
    ~EndEvaluationOnThrow() {
      if (ended) return;
      absl::MutexLock lock(&shard.mu);
      e.evaluating = false;
      std::shared_ptr<Flight> flight = std::move(e.inflight);
      if (flight == nullptr) return;
      flight->decision.access = Access::kNone;
      flight->decision.root = false;
      flight->decision.lookup_failed = true;
      try {
        flight->decision.reason = "out of memory while deciding";
      } catch (...) {
        // A refusal without its reason is still a refusal.
      }
      flight->done.Notify();
    }
  } end_evaluation{shard, *e};
  CachedIdentity identity(*this, key.address(), /*want_fresh=*/false);
  Decision d = Evaluate(*opts, identity, key.flavor, uid);
  const bool failed = d.lookup_failed;
  absl::MutexLock lock(&shard.mu);
  const absl::Time now = Now();
  e->evaluating = false;
  // Interned first: if that throws, the entry is still without a value.
  shard.SetDecision(e.get(), std::move(d));
  e->has_value = true;
  if (failed) {
    e->expires = now + config.failure_ttl;
    e->hard_deadline = e->expires;
  } else if (identity.consulted()) {
    e->expires = identity.expires();
    e->hard_deadline = identity.hard();
  } else {
    e->expires = now + config.positive_ttl;
    e->hard_deadline = e->expires + config.hard_limit;
  }
  if (e->inflight != nullptr) {
    e->inflight->decision = *e->decision;
    e->inflight->done.Notify();
    e->inflight = nullptr;
  }
  end_evaluation.ended = true;
  *out = *e->decision;
}

void AuthCache::Impl::RefreshDecision(std::shared_ptr<Entry> e,
                                      std::shared_ptr<const ShareOptions> opts,
                                      uint32_t uid) {
  CachedIdentity identity(*this, e->dkey.address(), /*want_fresh=*/true);
  Decision d = Evaluate(*opts, identity, e->dkey.flavor, uid);
  Shard& shard = ShardFor(e->dkey);
  absl::MutexLock lock(&shard.mu);
  const absl::Time now = Now();
  e->refreshing = false;
  if (d.lookup_failed && now < e->hard_deadline) {
    // Keep serving what we had; try again after failure_ttl.
    e->expires = now + config.failure_ttl;
    return;
  }
  const bool failed = d.lookup_failed;
  shard.SetDecision(e.get(), std::move(d));
  if (failed) {
    e->expires = now + config.failure_ttl;
    e->hard_deadline = e->expires;
  } else if (identity.consulted()) {
    e->expires = std::max(identity.expires(), now);
    e->hard_deadline = identity.hard();
  } else {
    e->expires = now + config.positive_ttl;
    e->hard_deadline = e->expires + config.hard_limit;
  }
}

AuthCache::AuthCache(std::shared_ptr<Resolver> resolver, AuthCacheConfig config,
                     Clock* clock)
    : impl_(std::make_unique<Impl>(std::move(resolver), config, clock)) {}

AuthCache::~AuthCache() {
  // A lookup stuck in a dead name server can take as long as the resolver
  // allows (minutes for NSS). The owner is going away (often the whole
  // process, on SIGTERM), and nobody can see the answer any more, so it
  // must not wait for it: the state those calls use is handed to a
  // detached thread, which frees it when they return (or never, if the
  // process exits first). An idle cache is freed here and now.
  // Refresh tasks submit lookups, so the refresh pool is checked first.
  if (impl_->refresh_pool.Idle() && impl_->lookup_pool.Idle()) return;
  impl_->clock.store(RealClock(), std::memory_order_relaxed);
  for (Shard& shard : impl_->shards) {
    // Waits out any task reading the old clock under this lock.
    absl::MutexLock lock(&shard.mu);
  }
  std::thread([impl = std::move(impl_)]() mutable { impl.reset(); }).detach();
}

Decision AuthCache::Check(const IpAddress& client,
                          const std::shared_ptr<const ShareOptions>& opts,
                          SecFlavor flavor, uint32_t uid) {
  Decision d;
  Check(client, opts, flavor, uid, &d);
  return d;
}

void AuthCache::Check(const IpAddress& client,
                      const std::shared_ptr<const ShareOptions>& opts,
                      SecFlavor flavor, uint32_t uid, Decision* out) {
  const DecisionKey key(client, opts.get(), flavor,
                        flavor == SecFlavor::kSys && uid == 0);
  impl_->CheckInto(key, opts, uid, out);
}

absl::StatusOr<IpAddress> AuthCache::AddressOf(std::string_view name) {
  if (std::optional<IpAddress> literal = IpAddress::Parse(name)) {
    return *literal;
  }
  struct Result {
    absl::Notification done;
    absl::StatusOr<std::vector<IpAddress>> addrs;
  };
  auto r = std::make_shared<Result>();
  Impl* impl = impl_.get();
  impl->lookup_pool.Submit([impl, r, n = std::string(name)] {
    impl->lookups.fetch_add(1, std::memory_order_relaxed);
    r->addrs = impl->resolver->AddressesOf(n);
    if (!r->addrs.ok()) {
      impl->lookup_failures.fetch_add(1, std::memory_order_relaxed);
    }
    r->done.Notify();
  });
  if (!r->done.WaitForNotificationWithTimeout(impl->config.lookup_timeout)) {
    impl->timeouts.fetch_add(1, std::memory_order_relaxed);
    impl->lookup_failures.fetch_add(1, std::memory_order_relaxed);
    return absl::DeadlineExceededError(absl::StrCat(
        "looking up \"", absl::string_view(name.data(), name.size()),
        "\" took longer than ",
        absl::FormatDuration(impl->config.lookup_timeout)));
  }
  if (!r->addrs.ok()) return r->addrs.status();
  if (r->addrs->empty()) {
    return absl::NotFoundError(
        absl::StrCat("host \"", absl::string_view(name.data(), name.size()),
                     "\" has no address"));
  }
  return r->addrs->front();
}

std::size_t AuthCache::DropUnused() {
  // A shard's lock is held for kBuckets buckets at a time (about as many
  // entries, some µs), not for the whole shard (1 ms at 100,000 entries):
  // checks of the shard wait at most that long. A rehash between two
  // holds moves entries to other buckets, and this pass may then miss a
  // dead one or look at one twice: it only frees memory, which the next
  // pass or the LRU frees otherwise.
  constexpr std::size_t kBuckets = 256;
  std::size_t dropped = 0;
  std::vector<Entry*> doomed;
  doomed.reserve(kBuckets);
  for (Shard& shard : impl_->shards) {
    for (std::size_t b = 0;;) {
      absl::MutexLock lock(&shard.mu);
      const std::size_t buckets = shard.decisions.bucket_count();
      if (b >= buckets) break;
      const std::size_t end = std::min(buckets, b + kBuckets);
      doomed.clear();
      for (; b < end; ++b) {
        for (auto it = shard.decisions.begin(b); it != shard.decisions.end(b);
             ++it) {
          if (it->second->options.expired()) doomed.push_back(it->second.get());
        }
      }
      // Erasing does not rehash: the buckets not yet looked at stay put.
      for (Entry* e : doomed) shard.Drop(e);
      dropped += doomed.size();
    }
  }
  return dropped;
}

std::size_t AuthCache::Reclaim(std::size_t target) {
  const std::size_t keep = target / impl_->shards.size();
  std::size_t dropped = 0;
  for (Shard& shard : impl_->shards) {
    absl::MutexLock lock(&shard.mu);
    dropped += shard.DropOldest(keep);
  }
  return dropped;
}

void AuthCache::Flush() {
  for (Shard& shard : impl_->shards) {
    absl::MutexLock lock(&shard.mu);
    while (shard.lru.next != &shard.lru) shard.Drop(shard.lru.next);
  }
}

absl::Status AuthCache::ReloadResolver() {
  absl::Status s = impl_->resolver->Reload();
  if (!s.ok()) return s;
  // Decisions were built from the old answers: they go too.
  Flush();
  return absl::OkStatus();
}

void AuthCache::WaitForBackgroundWork() {
  impl_->refresh_pool.WaitIdle();
  impl_->lookup_pool.WaitIdle();
}

AuthCacheCounters AuthCache::counters() const {
  AuthCacheCounters c;
  for (Shard& shard : impl_->shards) {
    absl::MutexLock lock(&shard.mu);
    c.entries += shard.count;
    c.hits += shard.hits;
    c.misses += shard.misses;
    c.coalesced += shard.coalesced;
    c.refreshes += shard.refreshes;
    c.reclaims += shard.reclaims;
  }
  c.lookups = impl_->lookups.load(std::memory_order_relaxed);
  c.lookup_failures = impl_->lookup_failures.load(std::memory_order_relaxed);
  c.timeouts = impl_->timeouts.load(std::memory_order_relaxed);
  return c;
}

}  // namespace authcache

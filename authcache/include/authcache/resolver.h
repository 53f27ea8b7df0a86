// Name-service lookups behind access checks, and the clock the cache reads.
//
// Resolver implementations must be thread-safe: the cache calls them from
// its lookup pool. A call may block (that is what the pool and its timeout
// are for); it must not call back into the AuthCache.
#ifndef AUTHCACHE_RESOLVER_H_
#define AUTHCACHE_RESOLVER_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "libshare/options.h"

namespace authcache {

class Resolver {
 public:
  virtual ~Resolver() = default;
  // Reverse lookup: the names (PTR / hosts entries) of an address. An
  // address with no name is an empty vector, not an error; an error means
  // the name service failed.
  [[nodiscard]] virtual absl::StatusOr<std::vector<std::string>> NamesOf(
      const libshare::IpAddress& address) = 0;
  // Forward lookup: the addresses of a name (empty if none).
  [[nodiscard]] virtual absl::StatusOr<std::vector<libshare::IpAddress>>
  AddressesOf(std::string_view name) = 0;
  // Whether `host` is a member of `netgroup` (as innetgr(3) with only the
  // host part given).
  [[nodiscard]] virtual absl::StatusOr<bool> InNetgroup(
      std::string_view netgroup, std::string_view host) = 0;
  // networks(5): the network number of a network name ("engnet"), as an
  // IPv4 address with the number left-aligned (10 -> 10.0.0.0); nullopt if
  // the name is unknown. Default: no network names.
  [[nodiscard]] virtual absl::StatusOr<std::optional<libshare::IpAddress>>
  NetworkNamed(std::string_view name) {
    (void)name;
    return std::nullopt;
  }
  // Re-reads configuration files (SIGHUP). Default: nothing to reload.
  [[nodiscard]] virtual absl::Status Reload() { return absl::OkStatus(); }
};

// getnameinfo/getaddrinfo/innetgr through NSS.
std::unique_ptr<Resolver> MakeSystemResolver();

// hosts(5) and netgroup(5) files; either path may be "" (no such source:
// lookups answer "no name" / "not a member"). Fails if a file is given but
// cannot be read or parsed; the error names the file and line.
[[nodiscard]] absl::StatusOr<std::unique_ptr<Resolver>> MakeFilesResolver(
    const std::string& hosts_path, const std::string& netgroup_path);

class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() = 0;
};
// The real clock (absl::Now()).
Clock* RealClock();

}  // namespace authcache

#endif  // AUTHCACHE_RESOLVER_H_

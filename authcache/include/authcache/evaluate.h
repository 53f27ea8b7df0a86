// Access-list evaluation with the semantics of illumos mountd (see
// DESIGN.md, "Option grammar"). Pure apart from the identity's lookups;
// thread-safe as far as the ClientIdentity is.
#ifndef AUTHCACHE_EVALUATE_H_
#define AUTHCACHE_EVALUATE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "libshare/options.h"

namespace authcache {

enum class Access : uint8_t { kNone, kRo, kRw };
std::string_view AccessName(Access a);  // "none", "ro", "rw"

struct Decision {
  Access access = Access::kNone;
  bool root = false;   // uid 0 keeps root (AUTH_SYS, client in root=)
  std::string option;  // the option that decided: "rw=", "ro", "none=", ...
  std::string entry;   // the entry that matched, canonical; "" if none
  std::string reason;  // one sentence for `sharectl check`
  // A name lookup failed or timed out while deciding: the decision is a
  // refusal made without full knowledge, to be cached only briefly.
  bool lookup_failed = false;
  bool operator==(const Decision& o) const {
    return access == o.access && root == o.root && option == o.option &&
           entry == o.entry;
  }
};

// What evaluation may learn about a client. Names and netgroup membership
// are asked for only when a list holds an entry that needs them.
class ClientIdentity {
 public:
  virtual ~ClientIdentity() = default;
  virtual const libshare::IpAddress& address() const = 0;
  // Forward-confirmed names of the address, lower case.
  [[nodiscard]] virtual absl::StatusOr<std::vector<std::string>> Names() = 0;
  // The forward-confirmed names for which `wanted` is true. Evaluation asks
  // this way so that an identity may confirm (look up forward) only the
  // names an entry could match. Default: Names() filtered.
  [[nodiscard]] virtual absl::StatusOr<std::vector<std::string>> NamesMatching(
      absl::FunctionRef<bool(std::string_view)> wanted) {
    absl::StatusOr<std::vector<std::string>> all = Names();
    if (!all.ok()) return all.status();
    std::vector<std::string> out;
    for (std::string& n : *all) {
      if (wanted(n)) out.push_back(std::move(n));
    }
    return out;
  }
  [[nodiscard]] virtual absl::StatusOr<bool> InNetgroup(
      std::string_view netgroup) = 0;
  // The network number of a networks(5) name (see Resolver::NetworkNamed);
  // nullopt if unknown. Default: no network names.
  [[nodiscard]] virtual absl::StatusOr<std::optional<libshare::IpAddress>>
  NetworkNamed(std::string_view name) {
    (void)name;
    return std::nullopt;
  }
};

// The decision for a client of a share with options `opts`, using security
// flavor `flavor` with credentials uid (AUTH_SYS; ignored otherwise).
Decision Evaluate(const libshare::ShareOptions& opts, ClientIdentity& client,
                  libshare::SecFlavor flavor, uint32_t uid);

}  // namespace authcache

#endif  // AUTHCACHE_EVALUATE_H_

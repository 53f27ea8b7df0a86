// A resolver for the MOUNT fuzz targets: every address is
// "client.example.com", which resolves to 127.0.0.1 and is in no
// netgroup, so decisions never wait on a name service.
#ifndef TESTS_FUZZ_FIXED_RESOLVER_H_
#define TESTS_FUZZ_FIXED_RESOLVER_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "authcache/resolver.h"
#include "libshare/options.h"

namespace fuzz {

class FixedResolver final : public authcache::Resolver {
 public:
  absl::StatusOr<std::vector<std::string>> NamesOf(
      const libshare::IpAddress&) override {
    return std::vector<std::string>{"client.example.com"};
  }
  absl::StatusOr<std::vector<libshare::IpAddress>> AddressesOf(
      std::string_view) override {
    return std::vector<libshare::IpAddress>{
        libshare::IpAddress::FromV4(0x7f000001)};
  }
  absl::StatusOr<bool> InNetgroup(std::string_view, std::string_view) override {
    return false;
  }
};

}  // namespace fuzz

#endif  // TESTS_FUZZ_FIXED_RESOLVER_H_

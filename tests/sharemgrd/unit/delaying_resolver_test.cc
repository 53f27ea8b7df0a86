// The --debug-resolver-delay wrapper must behave as the resolver it wraps,
// apart from the delay, so a test or benchmark run through it measures the
// same decisions.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "daemon.h"
#include "gtest/gtest.h"

namespace sharemgrd {
namespace {

using libshare::IpAddress;

// Knows one network name, "engnet" = 10.0.0.0.
class NetworkResolver final : public authcache::Resolver {
 public:
  absl::StatusOr<std::vector<std::string>> NamesOf(const IpAddress&) override {
    return std::vector<std::string>{};
  }
  absl::StatusOr<std::vector<IpAddress>> AddressesOf(
      std::string_view) override {
    return std::vector<IpAddress>{};
  }
  absl::StatusOr<bool> InNetgroup(std::string_view, std::string_view) override {
    return false;
  }
  absl::StatusOr<std::optional<IpAddress>> NetworkNamed(
      std::string_view name) override {
    if (name == "engnet") return IpAddress::Parse("10.0.0.0");
    return std::nullopt;
  }
};

TEST(DelayingResolverTest, ForwardsNetworkNames) {
  std::unique_ptr<authcache::Resolver> r = MakeDelayingResolver(
      std::make_unique<NetworkResolver>(), {{"127.0.9.9", 1}});
  absl::StatusOr<std::optional<IpAddress>> net = r->NetworkNamed("engnet");
  ASSERT_TRUE(net.ok()) << net.status();
  ASSERT_TRUE(net->has_value());
  EXPECT_EQ((*net)->ToString(), "10.0.0.0");
}

TEST(DelayingResolverTest, UnknownNetworkNameStaysUnknown) {
  std::unique_ptr<authcache::Resolver> r = MakeDelayingResolver(
      std::make_unique<NetworkResolver>(), {{"127.0.9.9", 1}});
  absl::StatusOr<std::optional<IpAddress>> net = r->NetworkNamed("nosuchnet");
  ASSERT_TRUE(net.ok()) << net.status();
  EXPECT_FALSE(net->has_value());
}

}  // namespace
}  // namespace sharemgrd

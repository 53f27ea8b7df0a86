// The system resolver: NSS through getnameinfo, getaddrinfo, innetgr and
// getnetbyname_r.
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "authcache/resolver.h"

namespace authcache {
namespace {

using libshare::IpAddress;

class SystemResolver : public Resolver {
 public:
  absl::StatusOr<std::vector<std::string>> NamesOf(
      const IpAddress& address) override {
    sockaddr_storage ss{};
    socklen_t len;
    if (address.is_v4()) {
      auto* sin = reinterpret_cast<sockaddr_in*>(&ss);
      sin->sin_family = AF_INET;
      std::memcpy(&sin->sin_addr, &address.bytes[12], 4);
      len = sizeof(sockaddr_in);
    } else {
      auto* sin6 = reinterpret_cast<sockaddr_in6*>(&ss);
      sin6->sin6_family = AF_INET6;
      std::memcpy(&sin6->sin6_addr, address.bytes.data(), 16);
      len = sizeof(sockaddr_in6);
    }
    char host[NI_MAXHOST];
    int rc = getnameinfo(reinterpret_cast<sockaddr*>(&ss), len, host,
                         sizeof(host), nullptr, 0, NI_NAMEREQD);
    if (rc == EAI_NONAME) return std::vector<std::string>{};
    if (rc != 0) {
      return absl::UnavailableError(absl::StrCat(
          "getnameinfo(", address.ToString(), "): ", gai_strerror(rc)));
    }
    return std::vector<std::string>{absl::AsciiStrToLower(host)};
  }

  absl::StatusOr<std::vector<IpAddress>> AddressesOf(
      std::string_view name) override {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    std::string n(name);
    int rc = getaddrinfo(n.c_str(), nullptr, &hints, &res);
    if (rc == EAI_NONAME
#ifdef EAI_NODATA
        || rc == EAI_NODATA
#endif
    ) {
      return std::vector<IpAddress>{};
    }
    if (rc != 0) {
      return absl::UnavailableError(
          absl::StrCat("getaddrinfo(\"", n, "\"): ", gai_strerror(rc)));
    }
    std::vector<IpAddress> out;
    for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
      IpAddress a;
      if (ai->ai_family == AF_INET) {
        uint32_t v;
        std::memcpy(&v, &reinterpret_cast<sockaddr_in*>(ai->ai_addr)->sin_addr,
                    4);
        a = IpAddress::FromV4(ntohl(v));
      } else if (ai->ai_family == AF_INET6) {
        std::memcpy(a.bytes.data(),
                    &reinterpret_cast<sockaddr_in6*>(ai->ai_addr)->sin6_addr,
                    16);
      } else {
        continue;
      }
      bool dup = false;
      for (const IpAddress& o : out) dup = dup || o == a;
      if (!dup) out.push_back(a);
    }
    freeaddrinfo(res);
    return out;
  }

  absl::StatusOr<bool> InNetgroup(std::string_view netgroup,
                                  std::string_view host) override {
    std::string ng(netgroup), h(host);
    // glibc's innetgr is MT-Unsafe (race:netgrent): it shares the
    // setnetgrent state, so calls are serialized.
    absl::MutexLock lock(&netgrent_mu_);
    return innetgr(ng.c_str(), h.c_str(), nullptr, nullptr) == 1;
  }

  absl::StatusOr<std::optional<IpAddress>> NetworkNamed(
      std::string_view name) override {
    std::string n(name);
    netent ne{};
    netent* result = nullptr;
    char buf[1024];
    int herr = 0;
    int rc = getnetbyname_r(n.c_str(), &ne, buf, sizeof(buf), &result, &herr);
    if (rc != 0 && rc != ENOENT) {
      return absl::UnavailableError(
          absl::StrCat("getnetbyname(\"", n, "\"): error ", rc));
    }
    if (result == nullptr || ne.n_addrtype != AF_INET) return std::nullopt;
    // n_net is right-aligned ("10" is 10, "10.1" is 0x0a01): left-align it.
    uint32_t net = ne.n_net;
    if (net != 0) {
      while ((net & 0xff000000u) == 0) net <<= 8;
    }
    return IpAddress::FromV4(net);
  }

 private:
  absl::Mutex netgrent_mu_;
};

class RealClockImpl : public Clock {
 public:
  absl::Time Now() override { return absl::Now(); }
};

}  // namespace

std::unique_ptr<Resolver> MakeSystemResolver() {
  return std::make_unique<SystemResolver>();
}

Clock* RealClock() {
  static RealClockImpl* clock = new RealClockImpl();
  return clock;
}

}  // namespace authcache

// Test doubles for authcache: a resolver that can stall, fail and count
// its calls, and a clock the test moves by hand.
#ifndef TESTS_SUPPORT_FAKES_H_
#define TESTS_SUPPORT_FAKES_H_

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "authcache/resolver.h"
#include "libshare/options.h"

namespace authcache::testing {

inline libshare::IpAddress Ip(std::string_view text) {
  std::optional<libshare::IpAddress> a = libshare::IpAddress::Parse(text);
  if (!a) abort();
  return *a;
}

class FakeClock : public Clock {
 public:
  absl::Time Now() override {
    absl::MutexLock lock(&mu_);
    return now_;
  }
  void Advance(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    now_ += d;
  }

 private:
  absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_) = absl::FromUnixSeconds(1700000000);
};

// Holds hosts (address <-> names, set separately so PTR and forward data
// can disagree), netgroups and networks. Calls are counted per kind and
// per key. A "gate" makes every call for one address (NamesOf) block until
// the gate opens or its time passes.
class FakeResolver : public Resolver {
 public:
  // A consistent host: PTR and forward records agree.
  void AddHost(std::string_view addr, std::string name) {
    AddPtr(addr, name);
    AddForward(name, addr);
  }
  void AddPtr(std::string_view addr, std::string name) {
    absl::MutexLock lock(&mu_);
    ptr_[Ip(addr).ToString()].push_back(std::move(name));
  }
  void AddForward(std::string name, std::string_view addr) {
    absl::MutexLock lock(&mu_);
    forward_[name].push_back(Ip(addr));
  }
  void ClearHosts() {
    absl::MutexLock lock(&mu_);
    ptr_.clear();
    forward_.clear();
  }
  void AddToNetgroup(std::string netgroup, std::string host) {
    absl::MutexLock lock(&mu_);
    netgroups_[netgroup].insert(std::move(host));
  }
  void AddNetwork(std::string name, std::string_view addr) {
    absl::MutexLock lock(&mu_);
    networks_[name] = Ip(addr);
  }
  void SetFailing(bool failing) {
    absl::MutexLock lock(&mu_);
    failing_ = failing;
  }
  // NamesOf(addr) blocks until OpenGate() or `max` has passed.
  void CloseGate(std::string_view addr, absl::Duration max) {
    absl::MutexLock lock(&mu_);
    gate_addr_ = Ip(addr).ToString();
    gate_max_ = max;
    gate_ = std::make_shared<absl::Notification>();
    gate_entered_ = std::make_shared<absl::Notification>();
  }
  void OpenGate() {
    std::shared_ptr<absl::Notification> g;
    {
      absl::MutexLock lock(&mu_);
      g = gate_;
    }
    if (g && !g->HasBeenNotified()) g->Notify();
  }
  // Blocks until a call has entered the closed gate.
  void WaitUntilGateEntered() {
    std::shared_ptr<absl::Notification> e;
    {
      absl::MutexLock lock(&mu_);
      e = gate_entered_;
    }
    e->WaitForNotification();
  }
  // True while a call is held at the gate.
  bool GateHolding() {
    absl::MutexLock lock(&mu_);
    return holding_ > 0;
  }

  int names_calls(std::string_view addr) {
    absl::MutexLock lock(&mu_);
    return names_calls_[Ip(addr).ToString()];
  }
  int forward_calls(const std::string& name) {
    absl::MutexLock lock(&mu_);
    return forward_calls_[name];
  }
  int netgroup_calls(const std::string& host) {
    absl::MutexLock lock(&mu_);
    return netgroup_calls_[host];
  }
  int total_calls() {
    absl::MutexLock lock(&mu_);
    return total_;
  }

  absl::StatusOr<std::vector<std::string>> NamesOf(
      const libshare::IpAddress& address) override {
    std::string key = address.ToString();
    std::shared_ptr<absl::Notification> gate;
    absl::Duration gate_max;
    {
      absl::MutexLock lock(&mu_);
      ++names_calls_[key];
      ++total_;
      if (gate_ && key == gate_addr_) {
        gate = gate_;
        gate_max = gate_max_;
        ++holding_;
        if (!gate_entered_->HasBeenNotified()) gate_entered_->Notify();
      }
    }
    if (gate) {
      gate->WaitForNotificationWithTimeout(gate_max);
      absl::MutexLock lock(&mu_);
      --holding_;
    }
    absl::MutexLock lock(&mu_);
    if (failing_) return absl::UnavailableError("fake name server down");
    auto it = ptr_.find(key);
    if (it == ptr_.end()) return std::vector<std::string>{};
    return it->second;
  }

  absl::StatusOr<std::vector<libshare::IpAddress>> AddressesOf(
      std::string_view name) override {
    absl::MutexLock lock(&mu_);
    ++forward_calls_[std::string(name)];
    ++total_;
    if (failing_) return absl::UnavailableError("fake name server down");
    auto it = forward_.find(std::string(name));
    if (it == forward_.end()) return std::vector<libshare::IpAddress>{};
    return it->second;
  }

  absl::StatusOr<bool> InNetgroup(std::string_view netgroup,
                                  std::string_view host) override {
    absl::MutexLock lock(&mu_);
    ++netgroup_calls_[std::string(host)];
    ++total_;
    if (failing_) return absl::UnavailableError("fake name server down");
    auto it = netgroups_.find(std::string(netgroup));
    return it != netgroups_.end() && it->second.count(std::string(host)) > 0;
  }

  absl::StatusOr<std::optional<libshare::IpAddress>> NetworkNamed(
      std::string_view name) override {
    absl::MutexLock lock(&mu_);
    ++total_;
    auto it = networks_.find(std::string(name));
    if (it == networks_.end()) return std::nullopt;
    return it->second;
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, std::vector<std::string>> ptr_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::vector<libshare::IpAddress>> forward_
      ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::set<std::string>> netgroups_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, libshare::IpAddress> networks_ ABSL_GUARDED_BY(mu_);
  bool failing_ ABSL_GUARDED_BY(mu_) = false;
  std::string gate_addr_ ABSL_GUARDED_BY(mu_);
  absl::Duration gate_max_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<absl::Notification> gate_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<absl::Notification> gate_entered_ ABSL_GUARDED_BY(mu_);
  int holding_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, int> names_calls_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> forward_calls_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> netgroup_calls_ ABSL_GUARDED_BY(mu_);
  int total_ ABSL_GUARDED_BY(mu_) = 0;
};

// Parses options or aborts: test inputs are known to be valid. Each call
// makes a new object, as a new group's options are: the cache keeps
// decisions by object, so a test that wants hits checks with one object.
inline std::shared_ptr<const libshare::ShareOptions> Opts(
    std::string_view text) {
  absl::StatusOr<libshare::ShareOptions> o = libshare::ParseOptions(text);
  if (!o.ok()) {
    fprintf(stderr, "bad test options \"%.*s\": %s\n",
            static_cast<int>(text.size()), text.data(),
            std::string(o.status().message()).c_str());
    abort();
  }
  return std::make_shared<const libshare::ShareOptions>(*std::move(o));
}

}  // namespace authcache::testing

#endif  // TESTS_SUPPORT_FAKES_H_

#include "fsid_index.h"

#include <algorithm>

namespace sharemgrd::kernel {
namespace {
uint64_t Device(const FsIdentity& id) {
  return (uint64_t{id.major} << 32) | id.minor;
}
}  // namespace

void FsidIndex::Set(const std::string& path,
                    const std::optional<FsIdentity>& id) {
  absl::MutexLock lock(&mu_);
  auto old = by_path_.find(path);
  if (old != by_path_.end()) {
    if (id.has_value() && old->second == *id) return;
    for (const FsidKey& k : FsidKeys(old->second)) {
      auto it = by_key_.find(FsidMapKey(k.type, k.bytes));
      if (it == by_key_.end()) continue;
      auto& v = it->second;
      v.erase(std::remove(v.begin(), v.end(), path), v.end());
      if (v.empty()) by_key_.erase(it);
    }
    auto d = per_device_.find(Device(old->second));
    if (d != per_device_.end() && --d->second == 0) per_device_.erase(d);
    by_path_.erase(old);
  }
  if (!id.has_value()) return;
  for (const FsidKey& k : FsidKeys(*id)) {
    by_key_[FsidMapKey(k.type, k.bytes)].push_back(path);
  }
  ++per_device_[Device(*id)];
  by_path_.emplace(path, *id);
}

std::optional<std::string> FsidIndex::Find(int type,
                                           std::string_view bytes) const {
  absl::MutexLock lock(&mu_);
  auto it = by_key_.find(FsidMapKey(type, bytes));
  if (it == by_key_.end() || it->second.empty()) return std::nullopt;
  return it->second.front();
}

void FsidIndex::BeginUpdate() {
  absl::MutexLock lock(&mu_);
  ++updating_;
}

void FsidIndex::EndUpdate() {
  absl::MutexLock lock(&mu_);
  --updating_;
}

std::optional<std::string> FsidIndex::FindSettled(
    int type, std::string_view bytes, absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  const std::string key = FsidMapKey(type, bytes);
  auto found = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto it = by_key_.find(key);
    return it == by_key_.end() || it->second.empty()
               ? std::nullopt
               : std::optional<std::string>(it->second.front());
  };
  std::optional<std::string> path = found();
  if (path.has_value() || updating_ == 0) return path;
  auto settled = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return updating_ == 0;
  };
  mu_.AwaitWithTimeout(absl::Condition(&settled), timeout);
  return found();
}

std::optional<FsIdentity> FsidIndex::IdentityOf(const std::string& path) const {
  absl::MutexLock lock(&mu_);
  auto it = by_path_.find(path);
  if (it == by_path_.end()) return std::nullopt;
  return it->second;
}

std::size_t FsidIndex::PathsOnDevice(uint32_t major, uint32_t minor) const {
  absl::MutexLock lock(&mu_);
  auto it = per_device_.find((uint64_t{major} << 32) | minor);
  return it == per_device_.end() ? 0 : it->second;
}

std::size_t FsidIndex::size() const {
  absl::MutexLock lock(&mu_);
  return by_path_.size();
}

void FsidIndex::MarkReady() {
  absl::MutexLock lock(&mu_);
  ready_ = true;
}

bool FsidIndex::WaitReady(absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  return mu_.AwaitWithTimeout(absl::Condition(&ready_), timeout);
}

}  // namespace sharemgrd::kernel

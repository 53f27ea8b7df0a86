#include "mirror.h"

#include "fsid.h"

namespace sharemgrd::kernel {
namespace {

template <typename Map>
void EraseInner(Map* m, const std::string& outer, const std::string& inner) {
  auto it = m->find(outer);
  if (it == m->end()) return;
  it->second.erase(inner);
  if (it->second.empty()) m->erase(it);
}

std::string ByPathKey(const std::string& fh_key, const std::string& domain) {
  std::string k = fh_key;
  k.push_back('\0');
  k += domain;
  return k;
}

}  // namespace

void Mirror::Touch(List::iterator it) { lru_.splice(lru_.end(), lru_, it); }

void Mirror::Unlink(List::iterator it) {
  if (it->kind == MirrorEntry::Kind::kExport) {
    EraseInner(&exports_, it->path, it->domain);
  } else {
    const std::string key = FsidMapKey(it->fsid_type, it->fsid);
    EraseInner(&fh_, key, it->domain);
    if (!it->path.empty()) {
      EraseInner(&fh_by_path_, it->path, ByPathKey(key, it->domain));
    }
  }
}

void Mirror::Evict(std::vector<MirrorEntry>* evicted) {
  while (lru_.size() > max_) {
    auto it = lru_.begin();
    Unlink(it);
    if (evicted != nullptr) evicted->push_back(std::move(*it));
    lru_.erase(it);
  }
}

void Mirror::RecordExport(const std::string& domain, const std::string& path,
                          uint64_t digest, std::vector<MirrorEntry>* evicted) {
  absl::MutexLock lock(&mu_);
  auto& per_domain = exports_[path];
  auto it = per_domain.find(domain);
  if (it != per_domain.end()) {
    it->second->digest = digest;
    Touch(it->second);
    return;
  }
  MirrorEntry e;
  e.kind = MirrorEntry::Kind::kExport;
  e.domain = domain;
  e.path = path;
  e.digest = digest;
  per_domain.emplace(domain, lru_.insert(lru_.end(), std::move(e)));
  Evict(evicted);
}

void Mirror::RecordFh(const std::string& domain, int fsid_type,
                      const std::string& fsid, const std::string& answer_path,
                      uint64_t digest, std::vector<MirrorEntry>* evicted) {
  absl::MutexLock lock(&mu_);
  const std::string key = FsidMapKey(fsid_type, fsid);
  auto& per_domain = fh_[key];
  auto it = per_domain.find(domain);
  List::iterator entry;
  if (it != per_domain.end()) {
    entry = it->second;
    if (!entry->path.empty() && entry->path != answer_path) {
      EraseInner(&fh_by_path_, entry->path, ByPathKey(key, domain));
    }
    entry->path = answer_path;
    entry->digest = digest;
    Touch(entry);
  } else {
    MirrorEntry e;
    e.kind = MirrorEntry::Kind::kFh;
    e.domain = domain;
    e.path = answer_path;
    e.fsid_type = fsid_type;
    e.fsid = fsid;
    e.digest = digest;
    entry = lru_.insert(lru_.end(), std::move(e));
    per_domain.emplace(domain, entry);
  }
  if (!answer_path.empty()) {
    fh_by_path_[answer_path][ByPathKey(key, domain)] = entry;
  }
  Evict(evicted);
}

std::vector<MirrorEntry> Mirror::ExportsOf(const std::string& path) const {
  std::vector<MirrorEntry> out;
  absl::MutexLock lock(&mu_);
  auto it = exports_.find(path);
  if (it == exports_.end()) return out;
  for (const auto& [domain, e] : it->second) out.push_back(*e);
  return out;
}

std::vector<MirrorEntry> Mirror::FhAnsweredWith(const std::string& path) const {
  std::vector<MirrorEntry> out;
  absl::MutexLock lock(&mu_);
  auto it = fh_by_path_.find(path);
  if (it == fh_by_path_.end()) return out;
  for (const auto& [k, e] : it->second) out.push_back(*e);
  return out;
}

std::vector<MirrorEntry> Mirror::FhOf(int fsid_type,
                                      const std::string& fsid) const {
  std::vector<MirrorEntry> out;
  absl::MutexLock lock(&mu_);
  auto it = fh_.find(FsidMapKey(fsid_type, fsid));
  if (it == fh_.end()) return out;
  for (const auto& [domain, e] : it->second) out.push_back(*e);
  return out;
}

std::optional<uint64_t> Mirror::ExportDigest(const std::string& domain,
                                             const std::string& path) const {
  absl::MutexLock lock(&mu_);
  auto it = exports_.find(path);
  if (it == exports_.end()) return std::nullopt;
  auto e = it->second.find(domain);
  if (e == it->second.end()) return std::nullopt;
  return e->second->digest;
}

std::optional<uint64_t> Mirror::FhDigest(const std::string& domain,
                                         int fsid_type,
                                         const std::string& fsid) const {
  absl::MutexLock lock(&mu_);
  auto it = fh_.find(FsidMapKey(fsid_type, fsid));
  if (it == fh_.end()) return std::nullopt;
  auto e = it->second.find(domain);
  if (e == it->second.end()) return std::nullopt;
  return e->second->digest;
}

void Mirror::Clear() {
  absl::MutexLock lock(&mu_);
  lru_.clear();
  exports_.clear();
  fh_.clear();
  fh_by_path_.clear();
}

std::size_t Mirror::size() const {
  absl::MutexLock lock(&mu_);
  return lru_.size();
}

}  // namespace sharemgrd::kernel

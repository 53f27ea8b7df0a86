// Fixture of the kernel-mode tests: a real Catalog (SQLite in a temporary
// folder) with shares on real folders, a real AuthCache and ShareAccess,
// and the kernel mode's indexes; a fake FsProbe gives each path a fixed
// identity, so reply lines are exact.
#ifndef TESTS_SHAREMGRD_KERNEL_KERNEL_FIXTURE_H_
#define TESTS_SHAREMGRD_KERNEL_KERNEL_FIXTURE_H_

#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "authcache/auth_cache.h"
#include "fakes.h"  // tests/support: FakeResolver
#include "gtest/gtest.h"
#include "kernel/fs_probe.h"
#include "kernel/fsid_index.h"
#include "kernel/responder.h"
#include "kernel/share_tree.h"
#include "libshare/catalog.h"
#include "share_access.h"
#include "share_test_dirs.h"

namespace sharemgrd::kernel::testing {

inline constexpr int64_t kNow = 1000000000;

// Every path gets device 8:1 and an inode counted from 100 in the order
// paths are first probed (or as set).
class FakeFsProbe : public FsProbe {
 public:
  absl::StatusOr<FsIdentity> Probe(const std::string& path) override {
    absl::MutexLock lock(&mu_);
    ++probes_;
    auto it = ids_.find(path);
    if (it != ids_.end()) return it->second;
    FsIdentity id;
    id.major = 8;
    id.minor = 1;
    id.inode = next_inode_++;
    ids_[path] = id;
    return id;
  }
  void Set(const std::string& path, FsIdentity id) {
    absl::MutexLock lock(&mu_);
    ids_[path] = id;
  }
  int probes() {
    absl::MutexLock lock(&mu_);
    return probes_;
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, FsIdentity> ids_ ABSL_GUARDED_BY(mu_);
  uint64_t next_inode_ ABSL_GUARDED_BY(mu_) = 100;
  int probes_ ABSL_GUARDED_BY(mu_) = 0;
};

inline libshare::IpAddress Ip(std::string_view text) {
  return authcache::testing::Ip(text);
}

class KernelFixture : public ::testing::Test {
 protected:
  // `resolver`: nullptr for the files resolver over hosts_ (written by
  // WriteHosts before the first call).
  void SetUp() override { Open(); }

  void Open(std::shared_ptr<authcache::Resolver> resolver = nullptr,
            authcache::AuthCacheConfig cache_config = {}) {
    access_.reset();
    cache_.reset();
    catalog_.reset();
    libshare::Catalog::Config c;
    c.db_path = dir_.path() + "/state/shares.db";
    auto cat = libshare::Catalog::Open(c);
    ASSERT_TRUE(cat.ok()) << cat.status();
    catalog_ = *std::move(cat);
    if (resolver == nullptr) {
      const std::string hosts = dir_.path() + "/hosts";
      std::ofstream(hosts, std::ios::app) << "";
      auto r = authcache::MakeFilesResolver(hosts, "");
      ASSERT_TRUE(r.ok()) << r.status();
      resolver = std::shared_ptr<authcache::Resolver>(*std::move(r));
    }
    cache_ = std::make_unique<authcache::AuthCache>(resolver, cache_config);
    access_ = std::make_unique<ShareAccess>(catalog_.get(), cache_.get());
  }

  void WriteHosts(const std::string& text) {
    std::ofstream(dir_.path() + "/hosts") << text;
  }

  // Makes the folder `rel`, adds it as a share of group "g" (created on
  // first use) and returns its path.
  std::string Share(const std::string& rel, const std::string& options = "") {
    const std::string path = dir_.Mkdir(rel);
    std::vector<libshare::Operation> ops;
    if (!group_made_) ops.push_back(libshare::testing::CreateGroup("g"));
    group_made_ = true;
    ops.push_back(libshare::testing::AddShare(path, "g", options));
    Apply(std::move(ops));
    return path;
  }

  void Apply(std::vector<libshare::Operation> ops) {
    libshare::Batch b;
    b.ops = std::move(ops);
    libshare::BatchResult r = catalog_->Apply(b);
    ASSERT_TRUE(r.ok()) << (r.errors.empty() ? r.commit_error
                                             : r.errors[0].message);
  }

  void SetOptions(const std::string& path, const std::string& options) {
    libshare::Operation op;
    op.type = libshare::Operation::Type::kSetOptions;
    op.group = "g";
    op.path = path;
    op.options = options;
    Apply({op});
  }

  // A responder over the current catalog; the tree and index are filled
  // from the catalog's active shares.
  std::unique_ptr<Responder> MakeResponder(ResponderConfig config = {}) {
    tree_ = std::make_unique<ShareTree>();
    index_ = std::make_unique<FsidIndex>();
    std::vector<std::string> paths;
    catalog_->ForEachActive(
        [&](const libshare::ShareInfo& s, const libshare::ShareOptions&) {
          paths.push_back(s.path);
        });
    for (const std::string& p : paths) {
      index_->Set(p, *probe_.Probe(p));
      for (const std::string& up : tree_->Add(p)) {
        index_->Set(up, *probe_.Probe(up));
      }
    }
    index_->MarkReady();
    return std::make_unique<Responder>(config, catalog_.get(), access_.get(),
                                       index_.get(), tree_.get(), &probe_,
                                       [] { return kNow; });
  }

  libshare::testing::TempDir dir_;
  std::unique_ptr<libshare::Catalog> catalog_;
  std::unique_ptr<authcache::AuthCache> cache_;
  std::unique_ptr<ShareAccess> access_;
  std::unique_ptr<ShareTree> tree_;
  std::unique_ptr<FsidIndex> index_;
  FakeFsProbe probe_;
  bool group_made_ = false;
};

}  // namespace sharemgrd::kernel::testing

#endif  // TESTS_SHAREMGRD_KERNEL_KERNEL_FIXTURE_H_

// The fixture shared by catalog_test.cc (the rules a batch is checked
// against) and catalog_listings_test.cc (reopening, listings, walks, the
// change lists and generations): a Catalog over a store in a fresh folder.
#ifndef TESTS_LIBSHARE_CATALOG_TEST_FIXTURE_H_
#define TESTS_LIBSHARE_CATALOG_TEST_FIXTURE_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "libshare/catalog.h"
#include "share_test_dirs.h"

namespace libshare::testing {

class CatalogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.path() + "/state/shares.db";
    Reopen();
  }

  void Reopen(int threads = 1) {
    catalog_.reset();
    Catalog::Config config;
    config.db_path = db_;
    config.load_threads = threads;
    config.busy_timeout_ms = 50;
    auto c = Catalog::Open(config);
    ASSERT_TRUE(c.ok()) << c.status();
    catalog_ = *std::move(c);
  }

  BatchResult Apply(std::vector<Operation> ops) {
    Batch b;
    b.ops = std::move(ops);
    return catalog_->Apply(b);
  }

  // Applies and expects success.
  void MustApply(std::vector<Operation> ops) {
    BatchResult r = Apply(std::move(ops));
    ASSERT_TRUE(r.ok()) << (r.errors.empty() ? r.commit_error
                                             : r.errors[0].message);
  }

  // Runs SQL on the closed store through a plain SQLite connection.
  void RawExec(const std::string& sql) {
    ::libshare::testing::RawExec(db_, sql);
  }

  std::vector<std::string> SharePaths() {
    auto shares = catalog_->ListShares({});
    EXPECT_TRUE(shares.ok());
    std::vector<std::string> out;
    for (const ShareInfo& s : *shares) out.push_back(s.path);
    return out;
  }

  TempDir dir_;
  std::string db_;
  std::unique_ptr<Catalog> catalog_;
};

}  // namespace libshare::testing

#endif  // TESTS_LIBSHARE_CATALOG_TEST_FIXTURE_H_

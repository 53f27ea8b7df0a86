// Catalog::ApplyGroup: group commit of independent batches.
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "libshare/catalog.h"
#include "libshare/store.h"
#include "share_test_dirs.h"

namespace libshare {
namespace {

using ::libshare::testing::AddShare;
using ::libshare::testing::CreateGroup;
using ::libshare::testing::RemoveShare;
using ::libshare::testing::TempDir;

Batch BatchOf(std::vector<Operation> ops, bool dry_run = false) {
  Batch b;
  b.ops = std::move(ops);
  b.dry_run = dry_run;
  return b;
}

Operation Describe(std::string path, std::string description) {
  Operation op;
  op.type = Operation::Type::kModifyShare;
  op.path = std::move(path);
  op.description = std::move(description);
  op.set_description = true;
  return op;
}

Operation Rename(std::string path, std::string resource) {
  Operation op;
  op.type = Operation::Type::kModifyShare;
  op.path = std::move(path);
  op.resource = std::move(resource);
  op.set_resource = true;
  return op;
}

class CatalogGroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.path() + "/shares.db";
    Reopen();
    ASSERT_TRUE(catalog_->Apply(BatchOf({CreateGroup("g")})).ok());
  }

  void Reopen() {
    catalog_.reset();
    Catalog::Config config;
    config.db_path = db_;
    config.busy_timeout_ms = 50;
    auto c = Catalog::Open(config);
    ASSERT_TRUE(c.ok()) << c.status();
    catalog_ = *std::move(c);
  }

  std::vector<BatchResult> ApplyGroup(const std::vector<Batch>& batches) {
    std::vector<const Batch*> ptrs;
    for (const Batch& b : batches) ptrs.push_back(&b);
    std::vector<BatchResult> results(batches.size());
    catalog_->ApplyGroup(ptrs, absl::MakeSpan(results));
    return results;
  }

  bool Shared(const std::string& path) {
    auto m = catalog_->FindNearest(path);
    return m.has_value() && m->path == path;
  }

  TempDir dir_;
  std::string db_;
  std::unique_ptr<Catalog> catalog_;
};

TEST_F(CatalogGroupTest, GroupOfBatchesIsOneTransactionWithAGenerationEach) {
  std::vector<Batch> batches;
  std::vector<std::string> paths;
  for (int i = 0; i < 8; ++i) {
    paths.push_back(dir_.Mkdir("d" + std::to_string(i)));
    batches.push_back(BatchOf({AddShare(paths.back(), "g")}));
  }
  const uint64_t commits = catalog_->commit_count();
  const uint64_t gen = catalog_->generation();
  std::vector<BatchResult> r = ApplyGroup(batches);
  ASSERT_EQ(r.size(), 8u);
  EXPECT_EQ(catalog_->commit_count(), commits + 1);
  for (std::size_t i = 0; i < r.size(); ++i) {
    ASSERT_TRUE(r[i].ok()) << i;
    EXPECT_EQ(r[i].applied, 1u);
    EXPECT_EQ(r[i].generation, gen + 1 + i);
    ASSERT_EQ(r[i].changes.size(), 1u) << i;
    EXPECT_EQ(r[i].changes[0].path, paths[i]);
    EXPECT_EQ(r[i].changes[0].kind, ShareChange::Kind::kAdded);
  }
  EXPECT_EQ(catalog_->generation(), gen + 8);
  Reopen();
  EXPECT_EQ(catalog_->share_count(), 8u);
  EXPECT_EQ(catalog_->generation(), gen + 8);
}

TEST_F(CatalogGroupTest, RefusedBatchIsNotCommittedAndDoesNotFailTheOthers) {
  std::string a = dir_.Mkdir("a");
  std::vector<Batch> batches;
  batches.push_back(BatchOf({CreateGroup("h")}));
  // Refused at its second operation: its group h2 must not exist after.
  batches.push_back(
      BatchOf({CreateGroup("h2"), AddShare(dir_.path() + "/missing", "h2")}));
  // Valid only if the refused batch left nothing behind.
  batches.push_back(BatchOf({CreateGroup("h2")}));
  // Valid only after the first batch.
  batches.push_back(BatchOf({AddShare(a, "h")}));
  const uint64_t commits = catalog_->commit_count();
  std::vector<BatchResult> r = ApplyGroup(batches);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_TRUE(r[0].ok());
  ASSERT_EQ(r[1].errors.size(), 1u);
  EXPECT_EQ(r[1].errors[0].index, 1u);
  EXPECT_NE(r[1].errors[0].message.find("/missing"), std::string::npos)
      << r[1].errors[0].message;
  EXPECT_EQ(r[1].applied, 0u);
  EXPECT_TRUE(r[1].changes.empty());
  EXPECT_TRUE(r[2].ok()) << (r[2].errors.empty() ? r[2].commit_error
                                                 : r[2].errors[0].message);
  EXPECT_TRUE(r[3].ok());
  EXPECT_EQ(catalog_->commit_count(), commits + 1);
  EXPECT_EQ(r[3].generation, r[0].generation + 2);
  Reopen();
  EXPECT_EQ(catalog_->group_count(), 3u);  // g, h, h2
  EXPECT_TRUE(Shared(a));
}

TEST_F(CatalogGroupTest, BatchIsValidatedAgainstTheOnesBeforeIt) {
  std::string a = dir_.Mkdir("a");
  std::vector<BatchResult> r =
      ApplyGroup({BatchOf({AddShare(a, "g")}), BatchOf({AddShare(a, "g")}),
                  BatchOf({RemoveShare(a)})});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_TRUE(r[0].ok());
  ASSERT_EQ(r[1].errors.size(), 1u);
  EXPECT_NE(r[1].errors[0].message.find("already shared"), std::string::npos)
      << r[1].errors[0].message;
  EXPECT_TRUE(r[2].ok());
  ASSERT_EQ(r[2].changes.size(), 1u);
  EXPECT_EQ(r[2].changes[0].kind, ShareChange::Kind::kRemoved);
  EXPECT_FALSE(Shared(a));
}

// Each call of a group brings the resource and public indexes up to
// date in its turn: a name a later call frees is free after the group,
// and one it takes is taken.
TEST_F(CatalogGroupTest, ResourceFreedOrTakenByALaterCallOfTheGroup) {
  std::string a = dir_.Mkdir("a");
  std::string b = dir_.Mkdir("b");
  std::string c = dir_.Mkdir("c");
  Operation add_a = AddShare(a, "g");
  add_a.resource = "proj";
  std::vector<BatchResult> r =
      ApplyGroup({BatchOf({add_a}), BatchOf({RemoveShare(a)}),
                  BatchOf({AddShare(b, "g")}), BatchOf({Rename(b, "proj")})});
  ASSERT_EQ(r.size(), 4u);
  for (const BatchResult& one : r) EXPECT_TRUE(one.ok());
  Operation add_c = AddShare(c, "g");
  add_c.resource = "proj";
  BatchResult refused = catalog_->Apply(BatchOf({add_c}));
  ASSERT_EQ(refused.errors.size(), 1u);
  EXPECT_EQ(refused.errors[0].message,
            c + ": resource name \"proj\" is already used by " + b);
  r = ApplyGroup({BatchOf({Rename(b, "")}), BatchOf({add_c})});
  EXPECT_TRUE(r[0].ok());
  EXPECT_TRUE(r[1].ok());
}

TEST_F(CatalogGroupTest, FailedCommitFailsTheWholeGroupAndChangesNothing) {
  std::string a = dir_.Mkdir("a");
  std::string b = dir_.Mkdir("b");
  const uint64_t gen = catalog_->generation();
  const uint64_t commits = catalog_->commit_count();
  // Another writer holds the store's write lock past the busy timeout.
  auto other = Store::Open(db_, 50);
  ASSERT_TRUE(other.ok()) << other.status();
  ASSERT_TRUE((*other)->Begin().ok());
  std::vector<BatchResult> r =
      ApplyGroup({BatchOf({AddShare(a, "g")}), BatchOf({CreateGroup("g")}),
                  BatchOf({AddShare(b, "g")})});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_TRUE(r[0].errors.empty());
  EXPECT_FALSE(r[0].commit_error.empty());
  EXPECT_EQ(r[1].errors.size(), 1u);  // refused on its own: group exists
  EXPECT_TRUE(r[2].errors.empty());
  EXPECT_FALSE(r[2].commit_error.empty());
  EXPECT_EQ(r[0].applied + r[2].applied, 0u);
  EXPECT_TRUE(r[0].changes.empty());
  EXPECT_EQ(catalog_->share_count(), 0u);
  EXPECT_EQ(catalog_->generation(), gen);
  EXPECT_EQ(catalog_->commit_count(), commits);
  (*other)->Rollback();
  // The next group commits.
  r = ApplyGroup({BatchOf({AddShare(a, "g")})});
  EXPECT_TRUE(r[0].ok());
  Reopen();
  EXPECT_EQ(catalog_->share_count(), 1u);
  EXPECT_FALSE(Shared(b));
}

TEST_F(CatalogGroupTest,
       DryRunInAGroupSeesTheBatchesBeforeItAndCommitsNothing) {
  std::string a = dir_.Mkdir("a");
  std::string b = dir_.Mkdir("b");
  std::vector<BatchResult> r = ApplyGroup(
      {BatchOf({AddShare(a, "g")}), BatchOf({AddShare(a, "g")}, true),
       BatchOf({AddShare(b, "g")}, true), BatchOf({RemoveShare(a)})});
  ASSERT_EQ(r.size(), 4u);
  EXPECT_TRUE(r[0].ok());
  EXPECT_EQ(r[1].errors.size(), 1u);  // a is shared by then
  EXPECT_TRUE(r[2].ok());
  EXPECT_EQ(r[2].applied, 0u);
  EXPECT_TRUE(r[3].ok());
  EXPECT_FALSE(Shared(a));
  EXPECT_FALSE(Shared(b));
}

TEST_F(CatalogGroupTest, ShareTextChangesOfTwoCallsBothStay) {
  std::string a = dir_.Mkdir("a");
  ASSERT_TRUE(catalog_->Apply(BatchOf({AddShare(a, "g")})).ok());
  std::vector<BatchResult> r = ApplyGroup(
      {BatchOf({Describe(a, "home of a")}), BatchOf({Rename(a, "res_a")})});
  ASSERT_TRUE(r[0].ok());
  ASSERT_TRUE(r[1].ok());
  Reopen();
  auto shares = catalog_->ListShares({});
  ASSERT_TRUE(shares.ok());
  ASSERT_EQ(shares->size(), 1u);
  EXPECT_EQ((*shares)[0].description, "home of a");
  EXPECT_EQ((*shares)[0].resource, "res_a");
}

TEST_F(CatalogGroupTest, ShareAddedByAnEarlierBatchIsChangedInALaterOne) {
  std::string a = dir_.Mkdir("a");
  Operation ro;
  ro.type = Operation::Type::kSetOptions;
  ro.group = "g";
  ro.options = "ro";
  std::vector<BatchResult> r =
      ApplyGroup({BatchOf({AddShare(a, "g")}), BatchOf({ro})});
  ASSERT_TRUE(r[0].ok());
  ASSERT_TRUE(r[1].ok());
  ASSERT_EQ(r[1].changes.size(), 1u);
  EXPECT_EQ(r[1].changes[0].kind, ShareChange::Kind::kChanged);
  auto m = catalog_->FindNearest(a);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->generation, r[1].generation);
  EXPECT_TRUE(m->options->scopes[0].ro_all);
}

// A share an earlier batch of the group added with its own options, and a
// later one returns to its group's: linked in turn, it ends with the
// group's options, not the ones the first batch linked.
TEST_F(CatalogGroupTest, OwnOptionsAnEarlierBatchGaveAreDroppedByALaterOne) {
  std::string a = dir_.Mkdir("a");
  Operation own;
  own.type = Operation::Type::kSetOptions;
  own.group = "g";
  own.path = a;
  own.options = "";
  std::vector<BatchResult> r =
      ApplyGroup({BatchOf({AddShare(a, "g", "ro")}), BatchOf({own})});
  ASSERT_TRUE(r[0].ok());
  ASSERT_TRUE(r[1].ok());
  auto m = catalog_->FindNearest(a);
  ASSERT_TRUE(m.has_value());
  EXPECT_FALSE(m->options->scopes[0].ro_all);
  std::vector<ShareInfo> shares = *catalog_->ListShares({});
  ASSERT_EQ(shares.size(), 1u);
  EXPECT_EQ(shares[0].options, "");
  EXPECT_EQ(shares[0].effective_options, "");  // group g's
}

}  // namespace
}  // namespace libshare

// The recorded file-system identity (libshare/fs_identity.h): its text
// form, and the Catalog recording it at add (Config::identify, or the
// operation's own), keeping it across a reopen and carrying it in the
// cluster's change records.
#include "libshare/fs_identity.h"

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "batch_codec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "libshare/catalog.h"
#include "share_test_dirs.h"

namespace libshare::testing {
namespace {

using ::testing::HasSubstr;

TEST(FsIdentityTest, TextRoundTripsAndBadTextIsRefusedQuotingIt) {
  FsUuid u{};
  for (int i = 0; i < 16; ++i) u[i] = static_cast<uint8_t>(i * 17);
  const std::string text = FormatFsIdentity(u);
  EXPECT_EQ(text, "uuid:00112233445566778899aabbccddeeff");
  absl::StatusOr<std::optional<FsUuid>> back = ParseFsIdentity(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(**back, u);
  absl::StatusOr<std::optional<FsUuid>> none = ParseFsIdentity("");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  for (const char* bad : {"uuid:0011", "00112233445566778899aabbccddeeff",
                          "uuid:00112233445566778899aabbccddeefg",
                          "fsid:7"}) {
    absl::StatusOr<std::optional<FsUuid>> r = ParseFsIdentity(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_THAT(r.status().message(), HasSubstr(bad));
  }
}

TEST(FsIdentityTest, UuidTextFoldsAsRpcMountdDoes) {
  EXPECT_EQ(FormatFsIdentity(FoldUuidText("1b4e28ba-2fa1-11d2-883f-0016d3cca427")),
            "uuid:1b4e28ba2fa111d2883f0016d3cca427");
  EXPECT_EQ(FormatFsIdentity(FoldUuidText("ABCD-1234")),
            "uuid:abcd1234000000000000000000000000");
}

class RecordedIdentityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.path() + "/state/shares.db";
    Open();
  }
  void Open() {
    catalog_.reset();
    Catalog::Config config;
    config.db_path = db_;
    config.identify = [this](const std::string& path, uint64_t dev) {
      ++asked_[dev];
      asked_paths_.push_back(path);
      Catalog::Config::FsIdentityAnswer a;
      FsUuid u{};
      u[0] = 0xab;
      u[15] = static_cast<uint8_t>(dev & 0xff);
      a.uuid = u;
      return a;
    };
    auto c = Catalog::Open(config);
    ASSERT_TRUE(c.ok()) << c.status();
    catalog_ = *std::move(c);
  }
  std::map<std::string, std::string> Identities() {
    std::map<std::string, std::string> out;
    auto shares = catalog_->ListShares({});
    EXPECT_TRUE(shares.ok());
    for (const ShareInfo& s : *shares) out[s.path] = s.fs_identity;
    return out;
  }

  TempDir dir_;
  std::string db_;
  std::map<uint64_t, int> asked_;
  std::vector<std::string> asked_paths_;
  std::unique_ptr<Catalog> catalog_;
};

TEST_F(RecordedIdentityTest, AddRecordsItsFileSystemsIdentityAskedOncePerDevice) {
  Batch b;
  b.ops.push_back(CreateGroup("g", "ro"));
  for (int i = 0; i < 50; ++i) {
    b.ops.push_back(AddShare(dir_.Mkdir("h/u" + std::to_string(i)), "g"));
  }
  BatchResult r = catalog_->Apply(b);
  ASSERT_TRUE(r.ok()) << (r.errors.empty() ? r.commit_error
                                           : r.errors[0].message);
  ASSERT_EQ(asked_.size(), 1u);  // one folder tree: one device
  EXPECT_EQ(asked_.begin()->second, 1);
  const std::map<std::string, std::string> ids = Identities();
  ASSERT_EQ(ids.size(), 50u);
  for (const auto& [path, id] : ids) {
    EXPECT_THAT(id, ::testing::StartsWith("uuid:ab")) << path;
  }
  // Kept in the store: a reopen answers the same without asking again.
  Open();
  EXPECT_EQ(Identities(), ids);
  EXPECT_EQ(asked_.begin()->second, 1);
}

TEST_F(RecordedIdentityTest, IdentityTheOperationGivesIsRecordedAsGiven) {
  Operation add = AddShare(dir_.Mkdir("a"), "g");
  add.fs_identity = "uuid:8c9a3e3a1c4d4b1e9f0e2a7b5d6c8e01";
  Batch b;
  b.ops = {CreateGroup("g", "ro"), add};
  ASSERT_TRUE(catalog_->Apply(b).ok());
  EXPECT_TRUE(asked_.empty());
  EXPECT_EQ(Identities()[add.path.str()], add.fs_identity);
}

TEST_F(RecordedIdentityTest, BadIdentityOrOneOnAnotherOperationChangesNothing) {
  Operation add = AddShare(dir_.Mkdir("a"), "g");
  add.fs_identity = "uuid:nothex";
  Operation create = CreateGroup("g", "ro");
  Operation other = CreateGroup("h", "ro");
  other.fs_identity = "uuid:00112233445566778899aabbccddeeff";
  Batch b;
  b.ops = {create, add, other};
  BatchResult r = catalog_->Apply(b);
  ASSERT_EQ(r.errors.size(), 2u);
  EXPECT_EQ(r.errors[0].index, 1u);
  EXPECT_THAT(r.errors[0].message, HasSubstr(add.path));
  EXPECT_THAT(r.errors[0].message, HasSubstr("\"uuid:nothex\""));
  EXPECT_EQ(r.errors[1].index, 2u);
  EXPECT_THAT(r.errors[1].message,
              HasSubstr("recorded only when a share is added"));
  EXPECT_EQ(catalog_->group_count(), 0u);
  EXPECT_EQ(catalog_->share_count(), 0u);
}

TEST(BatchCodecTest, AddsCarryTheirRecordedIdentityAndOldRecordsHaveNone) {
  Batch b;
  b.ops.push_back(CreateGroup("g"));
  b.ops.push_back(AddShare("/a", "g"));
  b.ops.push_back(AddShare("/b", "g"));
  b.ops[2].fs_identity = "uuid:00000000000000000000000000000001";
  // What the batch recorded wins over the operation's text.
  std::string rec = internal::EncodeBatch(
      b, 0, b.ops.size(), "", "o", [](std::size_t i) -> std::string_view {
        return i == 1 ? "uuid:ffffffffffffffffffffffffffffffff" : "";
      });
  absl::StatusOr<Batch> back = internal::DecodeBatch(rec);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->ops.size(), 3u);
  EXPECT_EQ(back->ops[1].fs_identity, "uuid:ffffffffffffffffffffffffffffffff");
  EXPECT_EQ(back->ops[2].fs_identity, "");
  // Without identity_of: the operations' own.
  back = internal::DecodeBatch(internal::EncodeBatch(b));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->ops[2].fs_identity, b.ops[2].fs_identity);
  // A record cut inside the identity is refused.
  rec = internal::EncodeBatch(b);
  EXPECT_FALSE(internal::DecodeBatch(rec.substr(0, rec.size() - 3)).ok());
}

}  // namespace
}  // namespace libshare::testing

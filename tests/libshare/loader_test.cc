#include "libshare/loader.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "libshare/share_table.h"
#include "libshare/store.h"
#include "share_test_dirs.h"

namespace libshare {
namespace {

using ::libshare::testing::TempDir;
using ::testing::HasSubstr;

constexpr int kGroups = 16;
constexpr int kSharesPerGroup = 120;

// A flat description of a table, for comparing two of them.
std::vector<std::string> Describe(const ShareTable& t) {
  std::vector<std::string> out;
  for (const ShareGroup* g : t.SortedGroups()) {
    out.push_back("group " + g->name + " " + (g->enabled ? "on " : "off ") +
                  g->options + " " + g->compiled->Canonical() + " " +
                  std::to_string(g->shares.size()));
  }
  t.ForEachShare([&](const Share& s) {
    out.push_back("share " + s.path.str() + " " + std::to_string(s.id) + " " +
                  std::to_string(s.dev) + " " + s.group->name + " " +
                  s.resource() + " " + s.description() + " " + s.options + " " +
                  s.effective_options()->Canonical() + " " +
                  std::to_string(s.generation));
  });
  std::sort(out.begin(), out.end());
  return out;
}

class LoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = Store::Open(path_);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }

  void Fill() {
    const char* opts[] = {"", "ro", "rw=@10.0.0.0/8,ro", "nosuid,sec=krb5"};
    ASSERT_TRUE(store_->Begin().ok());
    uint64_t id = 1;
    for (int g = 0; g < kGroups; ++g) {
      std::string name = "g" + std::to_string(g);
      ASSERT_TRUE(store_->InsertGroup({name, g % 5 != 4, opts[g % 4]}).ok());
      for (int i = 0; i < kSharesPerGroup; ++i) {
        ShareRow r;
        r.id = id++;
        r.path = "/export/" + name + "/s" + std::to_string(i);
        r.group = name;
        r.options = opts[i % 4];
        r.description = "d" + std::to_string(i);
        r.dev = 100 + i;
        ASSERT_TRUE(store_->InsertShare(r).ok());
      }
    }
    ASSERT_TRUE(store_->Commit().ok());
  }

  TempDir dir_;
  std::string path_ = dir_.path() + "/shares.db";
  std::unique_ptr<Store> store_;
};

TEST_F(LoaderTest, LoadsEveryGroupAndShare) {
  Fill();
  ShareTable t;
  auto stats = LoadShareTable(*store_, 2, &t);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->shares, static_cast<std::size_t>(kGroups * kSharesPerGroup));
  EXPECT_EQ(stats->groups, static_cast<std::size_t>(kGroups));
  EXPECT_EQ(stats->threads, 2);
  EXPECT_GE(stats->load_ms, 0);
  EXPECT_EQ(t.size(), stats->shares);
  const Share* s = t.Find("/export/g3/s5");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->group->name, "g3");
  EXPECT_EQ(s->dev, 105u);
  EXPECT_EQ(s->description(), "d5");
  EXPECT_EQ(s->generation, t.generation());
}

TEST_F(LoaderTest, OneThreadAndFourThreadsGiveEqualTables) {
  Fill();
  ShareTable one, four;
  ASSERT_TRUE(LoadShareTable(*store_, 1, &one).ok());
  ASSERT_TRUE(LoadShareTable(*store_, 4, &four).ok());
  std::vector<std::string> a = Describe(one);
  std::vector<std::string> b = Describe(four);
  EXPECT_EQ(a.size(),
            static_cast<std::size_t>(kGroups + kGroups * kSharesPerGroup));
  EXPECT_EQ(a, b);
}

TEST_F(LoaderTest, LoadedTableKnowsNesting) {
  Fill();
  ShareTable t;
  ASSERT_TRUE(LoadShareTable(*store_, 4, &t).ok());
  EXPECT_FALSE(t.CheckNesting("/export/g1/s7/x", 107).ok());
  EXPECT_EQ(t.CountBelow("/export", 100), static_cast<uint32_t>(kGroups));
}

TEST_F(LoaderTest, EmptyStoreLoadsEmptyTable) {
  ShareTable t;
  auto stats = LoadShareTable(*store_, 4, &t);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->shares, 0u);
  EXPECT_EQ(t.size(), 0u);
}

TEST_F(LoaderTest, BadStoredOptionsNameTheShare) {
  ASSERT_TRUE(store_->Begin().ok());
  ASSERT_TRUE(store_->InsertGroup({"g", true, ""}).ok());
  ShareRow r;
  r.id = 1;
  r.path = "/bad";
  r.group = "g";
  r.options = "frobnicate";
  ASSERT_TRUE(store_->InsertShare(r).ok());
  ASSERT_TRUE(store_->Commit().ok());
  ShareTable t;
  auto stats = LoadShareTable(*store_, 2, &t);
  ASSERT_FALSE(stats.ok());
  EXPECT_THAT(std::string(stats.status().message()), HasSubstr("/bad"));
}

// Issue 48, item 14: group rows are checked with create's rules, as share
// rows are with add-share's: a name edited into the store (ESC and a
// newline, a blank) would be printed raw by list and the log.
TEST_F(LoaderTest, TamperedGroupNameIsRefusedNamingTheRow) {
  for (const std::string& name : {std::string("bad name"),
                                 std::string("x\x1b[2J\nroot")}) {
    TempDir dir;
    auto store = Store::Open(dir.path() + "/s.db");
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->Begin().ok());
    ASSERT_TRUE((*store)->InsertGroup({name, true, ""}).ok());
    ASSERT_TRUE((*store)->Commit().ok());
    ShareTable t;
    auto stats = LoadShareTable(**store, 2, &t);
    ASSERT_FALSE(stats.ok()) << name;
    EXPECT_THAT(std::string(stats.status().message()),
                HasSubstr("store row of group"));
    EXPECT_THAT(std::string(stats.status().message()),
                HasSubstr("not allowed"));
  }
}

TEST_F(LoaderTest, ShareDescriptionWithAC1ControlIsRefused) {
  ASSERT_TRUE(store_->Begin().ok());
  ASSERT_TRUE(store_->InsertGroup({"g", true, ""}).ok());
  ShareRow r;
  r.id = 1;
  r.path = "/p";
  r.group = "g";
  r.description = "fake \xc2\x9b" "2J line";
  ASSERT_TRUE(store_->InsertShare(r).ok());
  ASSERT_TRUE(store_->Commit().ok());
  ShareTable t;
  auto stats = LoadShareTable(*store_, 1, &t);
  ASSERT_FALSE(stats.ok());
  EXPECT_THAT(std::string(stats.status().message()),
              HasSubstr("description contains the C1 control character U+009B"));
}

TEST_F(LoaderTest, ShareOfMissingGroupIsAnError) {
  ASSERT_TRUE(store_->Begin().ok());
  ShareRow r;
  r.id = 1;
  r.path = "/orphan";
  r.group = "gone";
  ASSERT_TRUE(store_->InsertShare(r).ok());
  ASSERT_TRUE(store_->Commit().ok());
  ShareTable t;
  auto stats = LoadShareTable(*store_, 1, &t);
  ASSERT_FALSE(stats.ok());
  EXPECT_THAT(std::string(stats.status().message()), HasSubstr("/orphan"));
  EXPECT_THAT(std::string(stats.status().message()), HasSubstr("gone"));
}

// Rows written behind the daemon's back (sqlite3) obey add-share's rules
// or the load fails naming the row: the daemon does not start with them.
class LoaderRevalidationTest : public LoaderTest {
 protected:
  absl::Status LoadRows(const std::vector<ShareRow>& rows) {
    EXPECT_TRUE(store_->Begin().ok());
    EXPECT_TRUE(store_->InsertGroup({"g", true, ""}).ok());
    for (const ShareRow& r : rows) EXPECT_TRUE(store_->InsertShare(r).ok());
    EXPECT_TRUE(store_->Commit().ok());
    ShareTable t;
    return LoadShareTable(*store_, 2, &t).status();
  }
  static ShareRow Row(uint64_t id, std::string path, uint64_t dev = 5) {
    ShareRow r;
    r.id = id;
    r.path = std::move(path);
    r.group = "g";
    r.dev = dev;
    return r;
  }
};

TEST_F(LoaderRevalidationTest, RelativePathRowRefusedNamingTheRow) {
  absl::Status s = LoadRows({Row(1, "/ok"), Row(7, "srv/rel")});
  EXPECT_THAT(std::string(s.message()), HasSubstr("store row 7"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("srv/rel"));
}

TEST_F(LoaderRevalidationTest, DotDotPathRowRefused) {
  EXPECT_FALSE(LoadRows({Row(3, "/srv/../etc")}).ok());
}

TEST_F(LoaderRevalidationTest, NewlineInDescriptionRefusedNamingTheField) {
  ShareRow r = Row(4, "/srv/a");
  r.description = "two\nlines";
  absl::Status s = LoadRows({r});
  EXPECT_THAT(std::string(s.message()), HasSubstr("store row 4"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("description"));
}

TEST_F(LoaderRevalidationTest, EscapeInResourceRefused) {
  ShareRow r = Row(4, "/srv/a");
  r.resource = "res\x1b[2J";
  absl::Status s = LoadRows({r});
  EXPECT_THAT(std::string(s.message()), HasSubstr("resource"));
}

TEST_F(LoaderRevalidationTest, SameDeviceNestedRowRefused) {
  absl::Status s = LoadRows({Row(1, "/"), Row(2, "/srv/a")});
  EXPECT_THAT(std::string(s.message()), HasSubstr("store row 2"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("inside share /"));
}

TEST_F(LoaderRevalidationTest, OtherDeviceNestedRowLoads) {
  EXPECT_TRUE(LoadRows({Row(1, "/srv", 5), Row(2, "/srv/a", 6)}).ok());
}

// The store has no index by path (schema 5): a path stored twice, in one
// group or in two loaded on different threads, fails the load naming both
// rows.
TEST_F(LoaderRevalidationTest, PathStoredTwiceRefusedNamingBothRows) {
  for (int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    ASSERT_TRUE(store_->Begin().ok());
    ASSERT_TRUE(store_->DeleteGroup("g").ok());
    ASSERT_TRUE(store_->DeleteGroup("h").ok());
    ASSERT_TRUE(store_->InsertGroup({"g", true, ""}).ok());
    ASSERT_TRUE(store_->InsertGroup({"h", true, ""}).ok());
    ShareRow again = Row(9, "/srv/a");
    again.group = threads == 1 ? "g" : "h";
    for (const ShareRow& r : {Row(1, "/srv/b"), Row(4, "/srv/a"), again}) {
      ASSERT_TRUE(store_->InsertShare(r).ok());
    }
    ASSERT_TRUE(store_->Commit().ok());
    ShareTable t;
    absl::Status s = LoadShareTable(*store_, threads, &t).status();
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(std::string(s.message()), HasSubstr("/srv/a"));
    EXPECT_THAT(std::string(s.message()),
                ::testing::AnyOf(HasSubstr("store row 9 (shares table): "
                                           "/srv/a: path is also row 4"),
                                 HasSubstr("store row 4 (shares table): "
                                           "/srv/a: path is also row 9")));
  }
}


// The warnings pass sorts only the shares that can warn; the warnings still
// come in path order among many shares that say nothing, a repeated
// resource names the first holder by path, and a long text is named.
TEST_F(LoaderRevalidationTest, WarningsInPathOrderAmongQuietShares) {
  std::vector<ShareRow> rows;
  uint64_t id = 1;
  for (int i = 0; i < 500; ++i) {
    rows.push_back(Row(id++, "/q/s" + std::to_string(i), 100 + i));
  }
  ShareRow z = Row(id++, "/z/res", 1);
  z.resource = "proj";
  ShareRow b = Row(id++, "/b/res", 2);
  b.resource = "proj";
  ShareRow m = Row(id++, "/m/res", 3);
  m.resource = "proj";
  ShareRow longd = Row(id++, "/c/long", 4);
  longd.description = std::string(1025, 'x');
  rows.insert(rows.begin() + 100, z);
  rows.insert(rows.begin() + 200, b);
  rows.push_back(m);
  rows.push_back(longd);
  EXPECT_TRUE(store_->Begin().ok());
  EXPECT_TRUE(store_->InsertGroup({"g", true, ""}).ok());
  for (const ShareRow& r : rows) EXPECT_TRUE(store_->InsertShare(r).ok());
  EXPECT_TRUE(store_->Commit().ok());
  ShareTable t;
  absl::StatusOr<LoadStats> stats = LoadShareTable(*store_, 2, &t);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(t.size(), 504u);
  EXPECT_THAT(
      stats->warnings,
      ::testing::ElementsAre(
          HasSubstr("/c/long: description longer than 1024 bytes (1025)"),
          "/m/res: resource name \"proj\" is already used by /b/res",
          "/z/res: resource name \"proj\" is already used by /b/res"));
}

// Rows are read one at a time into the shares: every field arrives, and
// the schema-1 mark counts only with own options (as before).
TEST_F(LoaderRevalidationTest, StreamedRowsKeepEveryField) {
  ShareRow a = Row(3, "/srv/a", 9);
  a.resource = "ra";
  a.description = "da";
  a.options = "ro";
  ShareRow b = Row(8, "/srv/b", 10);
  EXPECT_TRUE(store_->Begin().ok());
  EXPECT_TRUE(store_->InsertGroup({"g", true, "nosuid"}).ok());
  EXPECT_TRUE(store_->InsertShare(a).ok());
  EXPECT_TRUE(store_->InsertShare(b).ok());
  EXPECT_TRUE(store_->Commit().ok());
  ::libshare::testing::RawExec(path_, "UPDATE shares SET replaces_group = 1");
  ShareTable t;
  absl::StatusOr<LoadStats> stats = LoadShareTable(*store_, 1, &t);
  ASSERT_TRUE(stats.ok()) << stats.status();
  const Share* sa = t.Find("/srv/a");
  ASSERT_NE(sa, nullptr);
  EXPECT_EQ(sa->id, 3u);
  EXPECT_EQ(sa->dev, 9u);
  EXPECT_EQ(sa->resource(), "ra");
  EXPECT_EQ(sa->description(), "da");
  EXPECT_EQ(sa->options, "ro");
  EXPECT_TRUE(sa->replaces_group);
  EXPECT_EQ(sa->effective_options_text(), "ro");  // the group's replaced
  const Share* sb = t.Find("/srv/b");
  ASSERT_NE(sb, nullptr);
  EXPECT_FALSE(sb->replaces_group);  // no own options: inherits
  EXPECT_EQ(sb->effective_options_text(), "nosuid");
  EXPECT_THAT(stats->warnings,
              ::testing::ElementsAre(HasSubstr("1 share keeps own options")));
}

}  // namespace
}  // namespace libshare

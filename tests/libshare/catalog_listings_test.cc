#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "catalog_test_fixture.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "libshare/catalog.h"
#include "libshare/store.h"
#include "share_test_dirs.h"

namespace libshare {
namespace {

using ::libshare::testing::AddShare;
using ::libshare::testing::CreateGroup;
using ::libshare::testing::GroupOp;
using ::libshare::testing::RemoveShare;
using ::libshare::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using Type = Operation::Type;
using ::libshare::testing::CatalogTest;

TEST_F(CatalogTest, ReopenGivesSameTable) {
  std::vector<Operation> ops = {CreateGroup("g", "ro"), CreateGroup("h")};
  for (int i = 0; i < 50; ++i) {
    Operation op = AddShare(dir_.Mkdir("s/" + std::to_string(i)),
                            i % 2 ? "g" : "h", i % 3 ? "" : "rw,nosuid");
    op.description = "share " + std::to_string(i);
    op.resource = i % 5 ? "" : "r" + std::to_string(i);
    ops.push_back(op);
  }
  ops.push_back(GroupOp(Type::kDisableGroup, "h"));
  MustApply(ops);
  auto before = catalog_->ListShares({});
  auto groups_before = catalog_->ListGroups();
  Reopen(3);
  auto after = catalog_->ListShares({});
  ASSERT_TRUE(before.ok() && after.ok());
  ASSERT_EQ(before->size(), after->size());
  for (std::size_t i = 0; i < before->size(); ++i) {
    const ShareInfo& x = (*before)[i];
    const ShareInfo& y = (*after)[i];
    EXPECT_EQ(x.id, y.id);
    EXPECT_EQ(x.path, y.path);
    EXPECT_EQ(x.group, y.group);
    EXPECT_EQ(x.resource, y.resource);
    EXPECT_EQ(x.description, y.description);
    EXPECT_EQ(x.options, y.options);
    EXPECT_EQ(x.effective_options, y.effective_options);
    EXPECT_EQ(x.active, y.active);
  }
  auto groups_after = catalog_->ListGroups();
  ASSERT_EQ(groups_before.size(), groups_after.size());
  for (std::size_t i = 0; i < groups_before.size(); ++i) {
    EXPECT_EQ(groups_before[i].name, groups_after[i].name);
    EXPECT_EQ(groups_before[i].enabled, groups_after[i].enabled);
    EXPECT_EQ(groups_before[i].options, groups_after[i].options);
    EXPECT_EQ(groups_before[i].share_count, groups_after[i].share_count);
  }
}

TEST_F(CatalogTest, IdsAreNotReusedAfterReopen) {
  std::string a = dir_.Mkdir("a");
  std::string b = dir_.Mkdir("b");
  MustApply({CreateGroup("g"), AddShare(a, "g")});
  uint64_t id_a = catalog_->FindNearest(a)->id;
  Reopen();
  MustApply({AddShare(b, "g")});
  EXPECT_GT(catalog_->FindNearest(b)->id, id_a);
}

TEST_F(CatalogTest, FailedCommitLeavesMemoryAndDiskUnchanged) {
  MustApply({CreateGroup("g")});
  uint64_t gen = catalog_->generation();
  // Another writer holds the store's write lock past the busy timeout.
  auto other = Store::Open(db_, 50);
  ASSERT_TRUE(other.ok()) << other.status();
  ASSERT_TRUE((*other)->Begin().ok());
  BatchResult r = Apply({AddShare(dir_.Mkdir("a"), "g")});
  EXPECT_TRUE(r.errors.empty());
  EXPECT_FALSE(r.commit_error.empty());
  EXPECT_EQ(r.applied, 0u);
  EXPECT_EQ(catalog_->share_count(), 0u);
  EXPECT_EQ(catalog_->generation(), gen);
  (*other)->Rollback();
  Reopen();
  EXPECT_EQ(catalog_->share_count(), 0u);
}

TEST_F(CatalogTest, FindNearestFindsExactShareAndAncestor) {
  std::string a = dir_.Mkdir("a");
  dir_.Mkdir("a/sub/deeper");
  MustApply({CreateGroup("g", "ro"), AddShare(a, "g")});
  auto exact = catalog_->FindNearest(a);
  ASSERT_TRUE(exact.has_value());
  EXPECT_TRUE(exact->exact);
  EXPECT_EQ(exact->path, a);
  auto below = catalog_->FindNearest(a + "/sub/deeper");
  ASSERT_TRUE(below.has_value());
  EXPECT_FALSE(below->exact);
  EXPECT_EQ(below->path, a);
  ASSERT_NE(below->options, nullptr);
  EXPECT_TRUE(below->options->scopes[0].ro_all);
  EXPECT_FALSE(catalog_->FindNearest(dir_.path()).has_value());
  EXPECT_FALSE(catalog_->FindNearest(a + "x").has_value());
}

TEST_F(CatalogTest, SharetabEntriesAreActiveSharesInPathOrder) {
  std::string b = dir_.Mkdir("b");
  std::string a = dir_.Mkdir("a");
  std::string c = dir_.Mkdir("c");
  Operation add_b = AddShare(b, "g", "nosuid");
  add_b.description = "bee";
  add_b.resource = "res";
  MustApply({CreateGroup("g", "ro"), CreateGroup("off"), add_b,
             AddShare(a, "g"), AddShare(c, "off"),
             GroupOp(Type::kDisableGroup, "off")});
  std::vector<SharetabEntry> tab = catalog_->SharetabEntries();
  ASSERT_EQ(tab.size(), 2u);
  EXPECT_EQ(tab[0].path, a);
  EXPECT_EQ(tab[0].options, "ro");
  EXPECT_EQ(tab[1].path, b);
  EXPECT_EQ(tab[1].options, "ro,nosuid");  // the effective options
  EXPECT_EQ(tab[1].description, "bee");
  EXPECT_EQ(tab[1].resource, "res");
  std::vector<std::string> seen;
  catalog_->ForEachActive(
      [&](const ShareInfo& s, const ShareOptions&) { seen.push_back(s.path); });
  EXPECT_THAT(seen, ElementsAre(a, b));
}

// The entries carry the fields as the shares hold them, the text view the
// same lines: a resource of "-", which the file cannot tell from none,
// stays "-" in the entries.
TEST_F(CatalogTest, SharetabEntriesAndTextAgree) {
  const std::string a = dir_.Mkdir("a"), b = dir_.Mkdir("b");
  Operation add_a = AddShare(a, "g");
  add_a.resource = "-";
  Operation add_b = AddShare(b, "g", "nosuid");
  add_b.description = "bee";
  MustApply({CreateGroup("g", "ro"), add_b, add_a});
  std::vector<SharetabEntry> tab = catalog_->SharetabEntries();
  ASSERT_EQ(tab.size(), 2u);
  EXPECT_EQ(tab[0].resource, "-");
  const SharetabLines text = catalog_->SharetabText();
  ASSERT_EQ(text.size(), 2u);
  const std::string file = dir_.path() + "/sharetab";
  ASSERT_TRUE(
      text.Write(file, [](std::string_view, bool) { return true; }).ok());
  std::ifstream in(file);
  std::stringstream got;
  got << in.rdbuf();
  EXPECT_EQ(got.str(), FormatSharetabLine(tab[0]) + FormatSharetabLine(tab[1]));
}

// The compiled mountpoint flag rides with the records the daemon reads
// (its served-state probe): own options or the group's, never a list entry
// that happens to read "mountpoint".
TEST_F(CatalogTest, ListingsCarryTheCompiledMountpointFlag) {
  const std::string a = dir_.Mkdir("a"), b = dir_.Mkdir("b"),
                    c = dir_.Mkdir("c");
  MustApply({CreateGroup("m", "rw,mountpoint"), CreateGroup("p", "rw"),
             AddShare(a, "m"), AddShare(b, "p", "rw=mountpoint"),
             AddShare(c, "p", "ro,mountpoint")});
  absl::StatusOr<std::vector<ShareInfo>> shares = catalog_->ListShares({});
  ASSERT_TRUE(shares.ok());
  std::vector<std::string> flagged;
  for (const ShareInfo& s : *shares) {
    if (s.mountpoint) flagged.push_back(s.path);
  }
  EXPECT_THAT(flagged, ElementsAre(a, c));
  flagged.clear();
  for (const SharetabEntry& e : catalog_->SharetabEntries()) {
    if (e.mountpoint) flagged.push_back(e.path);
  }
  EXPECT_THAT(flagged, ElementsAre(a, c));
}

TEST_F(CatalogTest, ListSharesOfUnknownGroupIsNotFound) {
  auto r = catalog_->ListShares({"nope"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("nope"));
}

// The file-system probe's list: every share (a disabled group's too),
// with what ListShares says of its id, device and mount, and whether its
// effective options hold mountpoint (own or the group's).
TEST_F(CatalogTest, ListLocationsHasEveryShareAndItsMountpointOption) {
  std::string a = dir_.Mkdir("a");
  std::string b = dir_.Mkdir("b");
  std::string c = dir_.Mkdir("c");
  MustApply({CreateGroup("g", "rw,mountpoint"), CreateGroup("h", "ro"),
             AddShare(a, "g"), AddShare(b, "h", "ro,mountpoint"),
             AddShare(c, "h"), GroupOp(Type::kDisableGroup, "h")});
  std::vector<ShareLocation> got = catalog_->ListLocations();
  absl::StatusOr<std::vector<ShareInfo>> infos = catalog_->ListShares({});
  ASSERT_TRUE(infos.ok());
  ASSERT_EQ(got.size(), 3u);
  std::sort(got.begin(), got.end(),
            [](const ShareLocation& x, const ShareLocation& y) {
              return x.path < y.path;
            });
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].path, (*infos)[i].path);
    EXPECT_EQ(got[i].id, (*infos)[i].id);
    EXPECT_EQ(got[i].dev, (*infos)[i].dev);
    EXPECT_EQ(got[i].mount_root, (*infos)[i].mount_root);
  }
  EXPECT_TRUE(got[0].mountpoint) << "the group's mountpoint";
  EXPECT_TRUE(got[1].mountpoint) << "its own mountpoint, group disabled";
  EXPECT_FALSE(got[2].mountpoint);
}

// Walks over the whole table (ListLocations, SharetabEntries) hold it a
// slice at a time (Config::read_slice, 3 here): while other shares are
// added, removed and moved between the slices, every share in the table
// throughout is listed exactly once, the sharetab view lists no path
// twice and none of a disabled group, and nothing listed is a path that
// never was a share.
TEST_F(CatalogTest,
       WalksInSlicesListEveryUntouchedShareOnceWhileTheTableChanges) {
  catalog_.reset();
  std::atomic<int> changed_between{0};
  std::atomic<uint64_t> seen_generation{0};
  Catalog::Config config;
  config.db_path = db_;
  config.busy_timeout_ms = 5000;
  config.read_slice = 3;
  config.between_slices = [&] {
    const uint64_t g = catalog_->generation();
    if (seen_generation.exchange(g) != g) ++changed_between;
  };
  auto opened = Catalog::Open(config);
  ASSERT_TRUE(opened.ok()) << opened.status();
  catalog_ = *std::move(opened);
  // Stable shares in groups b, d (disabled) and f; the changing ones
  // start among them in b, and go to e and back, away and back again.
  std::vector<Operation> ops = {CreateGroup("b"), CreateGroup("d"),
                                CreateGroup("e"), CreateGroup("f")};
  std::vector<std::string> stable;
  std::vector<std::string> active;
  std::vector<std::string> changing;
  for (int i = 0; i < 300; ++i) {
    const std::string group = i % 3 == 0 ? "b" : i % 3 == 1 ? "d" : "f";
    stable.push_back(dir_.Mkdir("s/" + std::to_string(i)));
    ops.push_back(AddShare(stable.back(), group));
    if (group != "d") active.push_back(stable.back());
    if (i % 10 == 0) {
      changing.push_back(dir_.Mkdir("c/" + std::to_string(i)));
      ops.push_back(AddShare(changing.back(), "b"));
    }
  }
  ops.push_back(GroupOp(Type::kDisableGroup, "d"));
  MustApply(ops);
  auto known = [&](const std::string& path) {
    return std::find(stable.begin(), stable.end(), path) != stable.end() ||
           std::find(changing.begin(), changing.end(), path) != changing.end();
  };

  std::atomic<bool> stop{false};
  std::thread changer([&] {
    // Each changing share in turn: moved to e, back to b, removed, added
    // to b again.
    std::vector<int> step(changing.size(), 0);
    for (std::size_t i = 0; !stop.load(); ++i) {
      const std::size_t k = i % changing.size();
      Batch b;
      switch (step[k]) {
        case 2:
          b.ops.push_back(RemoveShare(changing[k]));
          break;
        case 3:
          b.ops.push_back(AddShare(changing[k], "b"));
          break;
        default: {
          Operation mv;
          mv.type = Type::kMoveShare;
          mv.path = changing[k];
          mv.group = step[k] == 0 ? "e" : "b";
          b.ops.push_back(mv);
        }
      }
      step[k] = (step[k] + 1) % 4;
      if (!catalog_->Apply(b).ok()) {
        ADD_FAILURE() << "cannot change " << changing[k];
        return;
      }
    }
  });
  struct Join {  // also when an assertion below returns early
    std::atomic<bool>& stop;
    std::thread& t;
    ~Join() {
      stop = true;
      t.join();
    }
  } join{stop, changer};
  // Until the table changed between two slices of a walk 100 times, or
  // 60 s.
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  int walks = 0;
  while (changed_between.load() < 100 &&
         std::chrono::steady_clock::now() < until) {
    ++walks;
    std::map<std::string, int> seen;
    seen_generation = catalog_->generation();  // count changes within walks
    for (const ShareLocation& l : catalog_->ListLocations()) {
      ++seen[l.path];
      ASSERT_TRUE(known(l.path)) << l.path;
    }
    for (const std::string& p : stable) {
      ASSERT_EQ(seen[p], 1) << p << " in ListLocations, walk " << walks;
    }
    seen.clear();
    seen_generation = catalog_->generation();
    for (const SharetabEntry& e : catalog_->SharetabEntries()) {
      ASSERT_EQ(++seen[e.path], 1) << e.path << " twice in the view";
      ASSERT_TRUE(known(e.path)) << e.path;
    }
    for (const std::string& p : active) {
      ASSERT_EQ(seen[p], 1) << p << " in SharetabEntries, walk " << walks;
    }
    for (int i = 1; i < 300; i += 3) {
      ASSERT_EQ(seen.count(stable[static_cast<std::size_t>(i)]), 0u)
          << "a share of the disabled group in the view";
    }
  }
  EXPECT_GE(changed_between.load(), 100);
}

// A walk in slices that stopped at a share removed, or removed and added
// again, before its next slice, or during which a share moved or a group
// was added, starts again: every share still there is listed once, the
// removed one not at all. A share added or removed elsewhere does not
// make it start again (either way, it lists what is expected).
TEST_F(CatalogTest, AWalkWhoseShareWasChangedBetweenSlicesStartsAgain) {
  std::vector<std::string> paths;
  for (int i = 0; i < 6; ++i) {
    paths.push_back(dir_.Mkdir("x" + std::to_string(i)));
  }
  paths.push_back(dir_.Mkdir("x5x"));  // added during the walk
  struct Case {
    const char* what;
    std::function<std::vector<Operation>()> change;
    std::vector<std::size_t> listed;  // indexes into paths, in order
  };
  Operation mv;
  mv.type = Type::kMoveShare;
  mv.path = paths[2];
  mv.group = "h";
  const std::vector<Case> cases = {
      {"removed",
       [&] { return std::vector<Operation>{RemoveShare(paths[2])}; },
       {0, 1, 3, 4, 5}},
      {"moved", [&] { return std::vector<Operation>{mv}; }, {0, 1, 2, 3, 4, 5}},
      {"removed and added again",
       [&] {
         return std::vector<Operation>{RemoveShare(paths[2]),
                                       AddShare(paths[2], "g")};
       },
       {0, 1, 2, 3, 4, 5}},
      {"another one removed",
       [&] { return std::vector<Operation>{RemoveShare(paths[4])}; },
       {0, 1, 2, 3, 5}},
      {"another one added",
       [&] { return std::vector<Operation>{AddShare(paths[5] + "x", "g")}; },
       {0, 1, 2, 3, 4, 5, 6}},
      {"moved away and back",
       [&] {
         Operation back = mv;
         back.group = "g";
         return std::vector<Operation>{mv, back};
       },
       {0, 1, 2, 3, 4, 5}},
      {"one walked moved away and back",
       [&] {
         Operation away = mv;
         away.path = paths[1];
         Operation back = away;
         back.group = "g";
         return std::vector<Operation>{away, back};
       },
       {0, 1, 2, 3, 4, 5}},
      {"a group added",
       [&] { return std::vector<Operation>{CreateGroup("a")}; },
       {0, 1, 2, 3, 4, 5}},
      {"a group removed",
       [&] { return std::vector<Operation>{GroupOp(Type::kDeleteGroup, "h")}; },
       {0, 1, 2, 3, 4, 5}},
  };
  // Each walk on a table made afresh, the change made during it.
  using Walk = std::function<std::vector<std::string>(const Catalog&)>;
  const std::vector<std::pair<const char*, Walk>> walks = {
      {"ListLocations",
       [](const Catalog& cat) {
         std::vector<std::string> got;
         for (const ShareLocation& l : cat.ListLocations()) {
           got.push_back(l.path);
         }
         std::sort(got.begin(), got.end());
         return got;
       }},
      {"SharetabEntries", [](const Catalog& cat) {
         std::vector<std::string> got;
         for (const SharetabEntry& e : cat.SharetabEntries()) {
           got.push_back(e.path);
         }
         return got;
       }}};
  for (const Case& c : cases) {
    for (const auto& [name, walk] : walks) {
      SCOPED_TRACE(absl::StrCat(c.what, ", ", name));
      catalog_.reset();
      std::filesystem::remove_all(dir_.path() + "/state");
      int slices = 0;
      bool changed = false;
      Catalog::Config config;
      config.db_path = db_;
      config.read_slice = 1;
      // After the third share (x2), once per walk.
      config.between_slices = [&] {
        if (++slices != 3 || changed) return;
        changed = true;
        Batch b;
        b.ops = c.change();
        BatchResult r = catalog_->Apply(b);
        ASSERT_TRUE(r.ok())
            << (r.errors.empty() ? r.commit_error : r.errors[0].message);
      };
      auto opened = Catalog::Open(config);
      ASSERT_TRUE(opened.ok()) << opened.status();
      catalog_ = *std::move(opened);
      std::vector<Operation> ops = {CreateGroup("g"), CreateGroup("h")};
      for (std::size_t i = 0; i < 6; ++i) {
        ops.push_back(AddShare(paths[i], "g"));
      }
      MustApply(ops);

      std::vector<std::string> want;
      for (std::size_t i : c.listed) want.push_back(paths[i]);
      EXPECT_EQ(walk(*catalog_), want);
      EXPECT_TRUE(changed);
    }
  }
}

TEST_F(CatalogTest, LocationsOfListsTheSharesAtThePathsInTheirOrder) {
  std::string a = dir_.Mkdir("a");
  std::string b = dir_.Mkdir("b");
  MustApply({CreateGroup("g", "rw"), AddShare(a, "g"),
             AddShare(b, "g", "ro,mountpoint")});
  std::vector<ShareLocation> all = catalog_->ListLocations();
  std::vector<ShareLocation> got =
      catalog_->LocationsOf({b, dir_.path() + "/none", a, b + "/below"});
  ASSERT_EQ(got.size(), 2u) << "a path with no share is left out";
  EXPECT_EQ(got[0].path, b);
  EXPECT_TRUE(got[0].mountpoint);
  EXPECT_EQ(got[1].path, a);
  EXPECT_FALSE(got[1].mountpoint);
  for (const ShareLocation& g : got) {
    auto same =
        std::find_if(all.begin(), all.end(),
                     [&](const ShareLocation& x) { return x.path == g.path; });
    ASSERT_NE(same, all.end());
    EXPECT_EQ(g.id, same->id);
    EXPECT_EQ(g.dev, same->dev);
    EXPECT_EQ(g.mount_root, same->mount_root);
  }
  EXPECT_TRUE(catalog_->LocationsOf({}).empty());
}

TEST_F(CatalogTest, MountRecordsSurviveReopen) {
  ASSERT_TRUE(
      catalog_
          ->RecordMounts(
              {{"10.0.0.1", "/a"}, {"10.0.0.2", "/b"}, {"10.0.0.1", "/c"}}, {})
          .ok());
  ASSERT_TRUE(catalog_->RecordMounts({}, {{"10.0.0.1", "/a"}}).ok());
  Reopen();
  auto mounts = catalog_->LoadMounts();
  ASSERT_TRUE(mounts.ok());
  EXPECT_THAT(*mounts, ElementsAre(MountRecord{"10.0.0.1", "/c"},
                                   MountRecord{"10.0.0.2", "/b"}));
}

// Batches add or remove 100 shares at a time; a reader that ever saw a
// count that is not a multiple of 100 saw a part of a batch.
TEST_F(CatalogTest, ConcurrentReadersSeeWholeBatchesOnly) {
  std::vector<std::string> paths;
  for (int i = 0; i < 100; ++i) {
    paths.push_back(dir_.Mkdir("c/" + std::to_string(i)));
  }
  MustApply({CreateGroup("g")});
  std::atomic<bool> stop{false};
  std::atomic<int> torn{0};
  std::atomic<int> reads{0};
  auto reader = [&] {
    while (!stop) {
      std::size_t n = 0;
      catalog_->ForEachActive(
          [&](const ShareInfo&, const ShareOptions&) { ++n; });
      if (n % 100 != 0) ++torn;
      std::size_t tab = catalog_->SharetabEntries().size();
      if (tab % 100 != 0) ++torn;
      ++reads;
    }
  };
  std::thread r1(reader), r2(reader);
  for (int round = 0; round < 20; ++round) {
    std::vector<Operation> ops;
    for (const std::string& p : paths) {
      ops.push_back(round % 2 == 0 ? AddShare(p, "g") : RemoveShare(p));
    }
    MustApply(ops);
  }
  stop = true;
  r1.join();
  r2.join();
  EXPECT_EQ(torn, 0);
  EXPECT_GT(reads, 0);
}

// The change list of a batch (BatchResult::changes).
using Kind = ShareChange::Kind;
MATCHER_P3(IsChange, kind, path, active, "") {
  return arg.kind == kind && arg.path == path && arg.active == active;
}

TEST_F(CatalogTest, ChangesListAddedSharesInPathOrder) {
  std::string a = dir_.Mkdir("a"), b = dir_.Mkdir("b");
  BatchResult r = Apply({CreateGroup("g"), AddShare(b, "g"), AddShare(a, "g")});
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r.changes, ElementsAre(IsChange(Kind::kAdded, a, true),
                                     IsChange(Kind::kAdded, b, true)));
  EXPECT_EQ(r.changes[0].id, catalog_->FindNearest(a)->id);
}

TEST_F(CatalogTest, ChangesListRemovedShareWithItsId) {
  std::string a = dir_.Mkdir("a");
  MustApply({CreateGroup("g"), AddShare(a, "g")});
  uint64_t id = catalog_->FindNearest(a)->id;
  BatchResult r = Apply({RemoveShare(a)});
  ASSERT_TRUE(r.ok());
  ASSERT_THAT(r.changes, ElementsAre(IsChange(Kind::kRemoved, a, false)));
  EXPECT_EQ(r.changes[0].id, id);
}

TEST_F(CatalogTest, ChangesExpandGroupStateToItsShares) {
  std::string a = dir_.Mkdir("a"), b = dir_.Mkdir("b"), c = dir_.Mkdir("c");
  MustApply({CreateGroup("g"), CreateGroup("h"), AddShare(a, "g"),
             AddShare(b, "g"), AddShare(c, "h")});
  BatchResult r = Apply({GroupOp(Type::kDisableGroup, "g")});
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r.changes, ElementsAre(IsChange(Kind::kChanged, a, false),
                                     IsChange(Kind::kChanged, b, false)));
  r = Apply({GroupOp(Type::kEnableGroup, "g")});
  EXPECT_THAT(r.changes, ElementsAre(IsChange(Kind::kChanged, a, true),
                                     IsChange(Kind::kChanged, b, true)));
}

TEST_F(CatalogTest, ChangesOfGroupOptionsSkipSharesWithTheirOwn) {
  std::string a = dir_.Mkdir("a"), b = dir_.Mkdir("b");
  MustApply({CreateGroup("g"), AddShare(a, "g"), AddShare(b, "g", "ro")});
  Operation set;
  set.type = Type::kSetOptions;
  set.group = "g";
  set.options = "ro";
  BatchResult r = Apply({set});
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r.changes, ElementsAre(IsChange(Kind::kChanged, a, true)));
}

TEST_F(CatalogTest, ChangesOfDeletedGroupAreRemovals) {
  std::string a = dir_.Mkdir("a"), b = dir_.Mkdir("b");
  MustApply({CreateGroup("g"), AddShare(a, "g"), AddShare(b, "g")});
  Operation del = GroupOp(Type::kDeleteGroup, "g");
  del.force = true;
  BatchResult r = Apply({del});
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r.changes, ElementsAre(IsChange(Kind::kRemoved, a, false),
                                     IsChange(Kind::kRemoved, b, false)));
}

// A change list of 70,000 entries: every path once, in order, for adds in
// path order (in order already) and for removals, re-adds and a group
// disabled in one batch (sorted first, each removal before the re-add of
// its path).
TEST_F(CatalogTest, BigChangeListsAreWholeAndInPathOrder) {
  constexpr int kShares = 70000;
  const std::string root = dir_.Mkdir("big");
  std::vector<std::string> paths;
  std::vector<Operation> adds = {CreateGroup("g")};
  for (int i = 0; i < kShares; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "/u%05d", i);
    paths.push_back(root + name);
    ASSERT_EQ(::mkdir(paths.back().c_str(), 0755), 0) << paths.back();
    adds.push_back(AddShare(paths.back(), "g"));
  }
  BatchResult r = Apply(adds);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.changes.size(), static_cast<std::size_t>(kShares));
  for (int i = 0; i < kShares; ++i) {
    ASSERT_EQ(r.changes[i].path, paths[i]);
    ASSERT_EQ(r.changes[i].kind, Kind::kAdded) << paths[i];
    ASSERT_TRUE(r.changes[i].active) << paths[i];
  }
  // Every 7th removed and added again, every 11th (not 7th) removed, and
  // the group disabled: each path once; the removed ones as removals.
  std::vector<Operation> mixed;
  for (int i = 0; i < kShares; ++i) {
    if (i % 7 == 0) {
      mixed.push_back(RemoveShare(paths[i]));
      mixed.push_back(AddShare(paths[i], "g"));
    } else if (i % 11 == 0) {
      mixed.push_back(RemoveShare(paths[i]));
    }
  }
  mixed.push_back(GroupOp(Type::kDisableGroup, "g"));
  r = Apply(mixed);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.changes.size(), static_cast<std::size_t>(kShares));
  for (int i = 0; i < kShares; ++i) {
    const bool removed = i % 7 != 0 && i % 11 == 0;
    ASSERT_EQ(r.changes[i].path, paths[i]);
    ASSERT_EQ(r.changes[i].kind, removed ? Kind::kRemoved : Kind::kChanged)
        << paths[i];
    ASSERT_FALSE(r.changes[i].active) << paths[i];
  }
}

TEST_F(CatalogTest, ChangesReportEachPathOnce) {
  std::string a = dir_.Mkdir("a"), b = dir_.Mkdir("b");
  MustApply({CreateGroup("g"), CreateGroup("h"), AddShare(a, "g")});
  Operation mv;
  mv.type = Type::kMoveShare;
  mv.path = b;
  mv.group = "h";
  // a: removed and added again (changed); b: added, then moved (added).
  BatchResult r = Apply({RemoveShare(a), AddShare(a, "h"), AddShare(b, "g"), mv,
                         GroupOp(Type::kDisableGroup, "h")});
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r.changes, ElementsAre(IsChange(Kind::kChanged, a, false),
                                     IsChange(Kind::kAdded, b, false)));
}

TEST_F(CatalogTest, ChangesIncludeSharesMovedIntoAGroupBeforeItsOperation) {
  std::string a = dir_.Mkdir("a"), b = dir_.Mkdir("b"), c = dir_.Mkdir("c");
  MustApply({CreateGroup("g"), CreateGroup("h"), AddShare(a, "g"),
             AddShare(b, "g"), AddShare(c, "h")});
  Operation mv_a;
  mv_a.type = Type::kMoveShare;
  mv_a.path = a;
  mv_a.group = "h";
  Operation mv_b = mv_a;
  mv_b.path = b;
  // No adds: the reservation must count the moves for h's disable.
  BatchResult r = Apply({mv_a, mv_b, GroupOp(Type::kDisableGroup, "h")});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.changes_complete);
  EXPECT_THAT(r.changes, ElementsAre(IsChange(Kind::kChanged, a, false),
                                     IsChange(Kind::kChanged, b, false),
                                     IsChange(Kind::kChanged, c, false)));
}

TEST_F(CatalogTest, RefusedBatchReportsNoChanges) {
  std::string a = dir_.Mkdir("a");
  BatchResult r = Apply({CreateGroup("g"), AddShare(a, "nope")});
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.changes.empty());
}

}  // namespace
}  // namespace libshare

namespace libshare {
namespace {

using ::libshare::testing::AddShare;
using ::libshare::testing::CreateGroup;
using ::libshare::testing::TempDir;

class CatalogGenerationTest : public ::testing::Test {
 protected:
  void Reopen() {
    catalog_.reset();
    auto c = Catalog::Open({dir_.path() + "/shares.db", 1, 50});
    ASSERT_TRUE(c.ok()) << c.status();
    catalog_ = *std::move(c);
  }
  BatchResult Apply(std::vector<Operation> ops, bool dry_run = false) {
    Batch b;
    b.ops = std::move(ops);
    b.dry_run = dry_run;
    return catalog_->Apply(b);
  }
  TempDir dir_;
  std::unique_ptr<Catalog> catalog_;
};

TEST_F(CatalogGenerationTest, GenerationsKeepGrowingAcrossReopens) {
  Reopen();
  ASSERT_TRUE(Apply({CreateGroup("a")}).ok());
  ASSERT_TRUE(Apply({CreateGroup("b")}).ok());
  const uint64_t before = catalog_->generation();
  Reopen();
  EXPECT_GE(catalog_->generation(), before);
  BatchResult r = Apply({CreateGroup("c")});
  ASSERT_TRUE(r.ok());
  EXPECT_GT(r.generation, before);
}

TEST_F(CatalogGenerationTest, SharesLoadedAtStartCarryTheStoredGeneration) {
  Reopen();
  ASSERT_TRUE(Apply({CreateGroup("g")}).ok());
  ASSERT_TRUE(Apply({AddShare(dir_.Mkdir("e/a"), "g")}).ok());
  ASSERT_TRUE(Apply({CreateGroup("h")}).ok());
  const uint64_t g = catalog_->generation();
  Reopen();
  auto shares = catalog_->ListShares({});
  ASSERT_TRUE(shares.ok());
  ASSERT_EQ(shares->size(), 1u);
  EXPECT_EQ((*shares)[0].generation, g);
}

TEST_F(CatalogGenerationTest, DryRunReportsTheSameErrorsAndChangesNothing) {
  Reopen();
  const uint64_t g = catalog_->generation();
  const std::string a = dir_.Mkdir("e/a");
  BatchResult bad = Apply(
      {CreateGroup("g"), AddShare(a + "/missing", "g"), AddShare(a, "nosuch")},
      /*dry_run=*/true);
  BatchResult real = Apply(
      {CreateGroup("g"), AddShare(a + "/missing", "g"), AddShare(a, "nosuch")});
  ASSERT_EQ(bad.errors.size(), 2u);
  ASSERT_EQ(real.errors.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(bad.errors[i].index, real.errors[i].index);
    EXPECT_EQ(bad.errors[i].message, real.errors[i].message);
  }
  BatchResult good = Apply({CreateGroup("g"), AddShare(a, "g")}, true);
  EXPECT_TRUE(good.ok());
  EXPECT_EQ(good.applied, 0u);
  EXPECT_EQ(good.generation, g);
  EXPECT_EQ(catalog_->generation(), g);
  EXPECT_EQ(catalog_->group_count(), 0u);
  Reopen();
  EXPECT_EQ(catalog_->group_count(), 0u);  // nothing reached the store
  EXPECT_EQ(catalog_->generation(), g);
}

}  // namespace
}  // namespace libshare

#include "mount_service.h"

#include <malloc.h>
#include <rpc/rpc.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "allocation_count.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "libshare/options.h"

namespace sharemgrd {
namespace {

using ::sharemgr_testing::StartCountingAllocations;
using ::sharemgr_testing::StopCountingAllocations;

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<std::string> GroupsOf(const char* options) {
  absl::StatusOr<libshare::ShareOptions> o = libshare::ParseOptions(options);
  EXPECT_TRUE(o.ok()) << options;
  return o.ok() ? ExportGroups(*o) : std::vector<std::string>{};
}

TEST(ExportGroupsTest, NoAccessOptionMeansEveryone) {
  EXPECT_THAT(GroupsOf(""), IsEmpty());
  EXPECT_THAT(GroupsOf("nosub"), IsEmpty());
}

TEST(ExportGroupsTest, BareRwOrRoMeansEveryone) {
  EXPECT_THAT(GroupsOf("rw"), IsEmpty());
  EXPECT_THAT(GroupsOf("rw,ro=hostb"), IsEmpty());
}

TEST(ExportGroupsTest, ListEntriesInOptionOrderWithoutDenies) {
  EXPECT_THAT(GroupsOf("rw=@10.0.0.0/8:-bad:hosta,ro=hostb:hosta"),
              ElementsAre("@10.0.0.0/8", "hosta", "hostb"));
}

// Decodes an `exports` list (RFC 1813) back into (dir, groups) pairs.
std::vector<std::pair<std::string, std::vector<std::string>>> DecodeExports(
    const std::string& body) {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  XDR x;
  xdrmem_create(&x, const_cast<char*>(body.data()),
                static_cast<u_int>(body.size()), XDR_DECODE);
  bool_t more = FALSE;
  while (xdr_bool(&x, &more) && more) {
    char* dir = nullptr;
    if (!xdr_string(&x, &dir, 1024)) break;
    std::pair<std::string, std::vector<std::string>> e{dir, {}};
    free(dir);
    bool_t g = FALSE;
    while (xdr_bool(&x, &g) && g) {
      char* name = nullptr;
      if (!xdr_string(&x, &name, 255)) break;
      e.second.push_back(name);
      free(name);
    }
    out.push_back(std::move(e));
  }
  EXPECT_EQ(xdr_getpos(&x), body.size());
  xdr_destroy(&x);
  return out;
}

TEST(ExportListEncoderTest, EncodesDirsAndGroupsAsRfc1813Lists) {
  ExportListEncoder enc;
  enc.Add("/export/a", {});
  enc.Add("/export/bb", {"@10.0.0.0/8", "host1"});
  std::string body = enc.Finish();
  auto decoded = DecodeExports(body);
  ASSERT_EQ(decoded.size(), 2u);
  EXPECT_EQ(decoded[0].first, "/export/a");
  EXPECT_THAT(decoded[0].second, IsEmpty());
  EXPECT_EQ(decoded[1].first, "/export/bb");
  EXPECT_THAT(decoded[1].second, ElementsAre("@10.0.0.0/8", "host1"));
}

TEST(ExportListEncoderTest, EmptyListIsOneFalse) {
  ExportListEncoder enc;
  EXPECT_EQ(enc.Finish(), std::string(4, '\0'));
}

TEST(FileHandleForTest, HandleIs32BytesAndStableForTheSameDirectory) {
  const std::string a = FileHandleFor(2049, 77);
  EXPECT_EQ(a.size(), kFhSize);
  EXPECT_EQ(a.substr(0, 4), "SMGR");
  EXPECT_EQ(a, FileHandleFor(2049, 77));
}

TEST(FileHandleForTest, OtherInodeOrDeviceGivesAnotherHandle) {
  EXPECT_NE(FileHandleFor(2049, 77), FileHandleFor(2049, 78));
  EXPECT_NE(FileHandleFor(2049, 77), FileHandleFor(2050, 77));
}

TEST(MountTableTest, ClientAtItsLimitKeepsNoNewRecord) {
  MountTable t(/*max_total=*/100, /*max_per_client=*/2);
  EXPECT_TRUE(t.Add({"10.0.0.1", "/a"}));
  EXPECT_TRUE(t.Add({"10.0.0.1", "/b"}));
  EXPECT_FALSE(t.Add({"10.0.0.1", "/c"}));
  EXPECT_TRUE(t.Add({"10.0.0.2", "/c"})) << "another client is not limited";
  EXPECT_EQ(t.size(), 3u);
  EXPECT_EQ(t.dropped(), 1u);
}

TEST(MountTableTest, TableAtItsLimitKeepsNoNewRecord) {
  MountTable t(/*max_total=*/2, /*max_per_client=*/100);
  EXPECT_TRUE(t.Add({"10.0.0.1", "/a"}));
  EXPECT_TRUE(t.Add({"10.0.0.2", "/a"}));
  EXPECT_FALSE(t.Add({"10.0.0.3", "/a"}));
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.dropped(), 1u);
}

// The table's limit is one count over the shards: MNTs of clients in
// different shards, at the same time, never keep more than max_total.
TEST(MountTableTest, TableLimitHoldsForConcurrentClientsOfAllShards) {
  MountTable t(/*max_total=*/1000, /*max_per_client=*/10);
  std::vector<std::thread> threads;
  for (int th = 0; th < 8; ++th) {
    threads.emplace_back([&t, th] {
      for (int c = 0; c < 250; ++c) {
        const std::string client = absl::StrCat("10.", th, ".", c / 256, ".",
                                                c % 256);
        t.Add({client, "/a"});
        t.Add({client, "/b"});
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(t.size(), 1000u);
  EXPECT_EQ(t.dropped(), 3000u);
  EXPECT_EQ(t.List().size(), 1000u);
  auto [added, removed] = t.TakeChanges();
  EXPECT_EQ(added.size(), 1000u);
}

TEST(MountTableTest, RemovalMakesRoomForTheClientAgain) {
  MountTable t(/*max_total=*/100, /*max_per_client=*/1);
  EXPECT_TRUE(t.Add({"10.0.0.1", "/a"}));
  EXPECT_TRUE(t.Remove({"10.0.0.1", "/a"}));
  EXPECT_TRUE(t.Add({"10.0.0.1", "/b"}));
  EXPECT_EQ(t.RemoveClient("10.0.0.1"), 1u);
  EXPECT_TRUE(t.Add({"10.0.0.1", "/c"}));
}

TEST(MountTableTest, RepeatedAddWritesNothingMore) {
  MountTable t;
  EXPECT_TRUE(t.Add({"10.0.0.1", "/a"}));
  EXPECT_FALSE(t.Add({"10.0.0.1", "/a"}));
  auto [added, removed] = t.TakeChanges();
  EXPECT_EQ(added.size(), 1u);
  EXPECT_TRUE(removed.empty());
  EXPECT_FALSE(t.Add({"10.0.0.1", "/a"}));
  EXPECT_FALSE(t.has_changes());
}

// What the flusher reads to tell a storm from a pause: each change a call
// made counts in its client's shard; a repeated MNT, records loaded from
// the store and changes put back after a failed write do not.
TEST(MountTableTest, LoggedPerShardCountsTheCallsChanges) {
  auto total = [](const std::array<uint64_t, MountTable::kShards>& n) {
    uint64_t sum = 0;
    for (uint64_t x : n) sum += x;
    return sum;
  };
  MountTable t;
  t.Load({{"10.0.0.9", "/z"}});
  EXPECT_EQ(total(t.LoggedPerShard()), 0u);
  EXPECT_TRUE(t.Add({"10.0.0.1", "/a"}));
  EXPECT_FALSE(t.Add({"10.0.0.1", "/a"}));
  const std::array<uint64_t, MountTable::kShards> one = t.LoggedPerShard();
  EXPECT_EQ(total(one), 1u);
  EXPECT_TRUE(t.Add({"10.0.0.1", "/b"}));
  EXPECT_TRUE(t.Remove({"10.0.0.1", "/a"}));
  const std::array<uint64_t, MountTable::kShards> three = t.LoggedPerShard();
  EXPECT_EQ(total(three), 3u);
  // All in the one shard of 10.0.0.1.
  int moved = 0;
  for (std::size_t i = 0; i < MountTable::kShards; ++i) {
    if (three[i] != one[i]) {
      ++moved;
      EXPECT_EQ(three[i] - one[i], 2u);
    }
  }
  EXPECT_EQ(moved, 1);
  auto [added, removed] = t.TakeChanges();
  t.Restore(std::move(added), std::move(removed));
  EXPECT_EQ(t.LoggedPerShard(), three);
  // UMNTALL: one change per record it removes.
  t.Load({{"10.0.0.9", "/y"}});
  EXPECT_EQ(t.RemoveClient("10.0.0.9"), 2u);
  EXPECT_EQ(total(t.LoggedPerShard()), 5u);
  // A MNT past the client's limit keeps no record: nothing to write.
  MountTable one_each(MountTable::kDefaultMaxTotal, 1);
  EXPECT_TRUE(one_each.Add({"10.0.0.1", "/a"}));
  EXPECT_FALSE(one_each.Add({"10.0.0.1", "/b"}));
  EXPECT_EQ(total(one_each.LoggedPerShard()), 1u);
}

TEST(MountTableTest, AddThenRemoveBeforeFlushIsOneRemoval) {
  MountTable t;
  t.Add({"10.0.0.1", "/a"});
  t.Remove({"10.0.0.1", "/a"});
  auto [added, removed] = t.TakeChanges();
  EXPECT_TRUE(added.empty());
  EXPECT_THAT(removed, ElementsAre(libshare::MountRecord{"10.0.0.1", "/a"}));
  EXPECT_EQ(t.size(), 0u);
}

TEST(MountTableTest, RemoveClientDropsOnlyThatClient) {
  MountTable t;
  t.Load({{"10.0.0.1", "/a"}, {"10.0.0.1", "/b"}, {"10.0.0.2", "/a"}});
  EXPECT_EQ(t.RemoveClient("10.0.0.1"), 2u);
  EXPECT_THAT(t.All(), ElementsAre(libshare::MountRecord{"10.0.0.2", "/a"}));
}

TEST(MountTableTest, LoadedRecordsAreNotRewritten) {
  MountTable t;
  t.Load({{"10.0.0.1", "/a"}});
  EXPECT_FALSE(t.has_changes());
  EXPECT_FALSE(t.Add({"10.0.0.1", "/a"}));
}

TEST(MountTableTest, RestoredChangesDoNotOverrideNewerOnes) {
  MountTable t;
  t.Add({"10.0.0.1", "/a"});
  auto [added, removed] = t.TakeChanges();
  t.Remove({"10.0.0.1", "/a"});
  t.Restore(added, removed);
  auto [added2, removed2] = t.TakeChanges();
  EXPECT_TRUE(added2.empty());
  EXPECT_EQ(removed2.size(), 1u);
}

// 50 clients, over all the client shards, hold the text once.
TEST(MountTableTest, PathTextIsHeldOnceAndFreedWithItsLastRecord) {
  MountTable t;
  for (int i = 1; i <= 50; ++i) {
    EXPECT_TRUE(t.Add({absl::StrCat("10.0.0.", i), "/export/home"}));
  }
  EXPECT_EQ(t.size(), 50u);
  EXPECT_EQ(t.path_count(), 1u);
  (void)t.TakeChanges();  // pending changes hold their paths too
  for (int i = 1; i <= 49; ++i) {
    EXPECT_EQ(t.RemoveClient(absl::StrCat("10.0.0.", i)), 1u);
  }
  (void)t.TakeChanges();
  EXPECT_EQ(t.path_count(), 1u);
  EXPECT_TRUE(t.Remove({"10.0.0.50", "/export/home"}));
  (void)t.TakeChanges();
  EXPECT_EQ(t.path_count(), 0u);
}

TEST(MountTableTest, ListGivesTimeOfMntAndZeroForLoadedRecords) {
  MountTable t;
  t.Load({{"10.0.0.9", "/b"}});
  ASSERT_TRUE(t.Add(*libshare::IpAddress::Parse("10.0.0.1"), "/a", 1234));
  std::vector<MountListing> l = t.List();
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(l[0].client.ToString(), "10.0.0.1");
  EXPECT_EQ(l[0].path, "/a");
  EXPECT_EQ(l[0].since, 1234);
  EXPECT_EQ(l[1].client.ToString(), "10.0.0.9");
  EXPECT_EQ(l[1].since, 0);
}

TEST(MountTableTest, ClientsOfBothFamiliesAreKeptApart) {
  MountTable t;
  EXPECT_TRUE(t.Add({"::1", "/a"}));
  EXPECT_TRUE(t.Add({"127.0.0.1", "/a"}));
  EXPECT_EQ(t.RemoveClient("::1"), 1u);
  EXPECT_THAT(t.All(), ElementsAre(libshare::MountRecord{"127.0.0.1", "/a"}));
}

// A change waiting for the flusher is appended to a log whose buffers the
// flushes hand back, not inserted into a map of pending keys: in a steady
// stream of changes written between them, a UMNT allocates nothing under
// the table's lock.
TEST(MountTableTest, RemovalsBetweenSteadyFlushesAllocateNothing) {
  MountTable t;
  const libshare::IpAddress client = *libshare::IpAddress::Parse("10.0.0.1");
  std::vector<std::string> paths;
  for (int p = 0; p < 300; ++p) paths.push_back(absl::StrCat("/export/u", p));
  for (int round = 0; round < 2; ++round) {  // both log buffers used once
    for (const std::string& p : paths) ASSERT_TRUE(t.Add(client, p, 1));
    (void)t.TakeChanges();
    ASSERT_EQ(t.RemoveClient(client), paths.size());
    (void)t.TakeChanges();
  }
  for (const std::string& p : paths) ASSERT_TRUE(t.Add(client, p, 1));
  (void)t.TakeChanges();

  StartCountingAllocations();
  for (int p = 0; p < 150; ++p) t.Remove(client, paths[p]);
  const std::size_t removed_by_client = t.RemoveClient(client);
  EXPECT_EQ(StopCountingAllocations(), 0);
  EXPECT_EQ(removed_by_client, 150u);
  auto [added, removed] = t.TakeChanges();
  EXPECT_TRUE(added.empty());
  EXPECT_EQ(removed.size(), paths.size());
  EXPECT_EQ(t.path_count(), 0u);
}

// From 16,384 changes of a shard without a flush (a store that keeps
// failing, a client mounting and unmounting in a loop) the log is folded
// under the lock: the last change of each key is what gets written, and
// the paths of the changes folded away are let go.
TEST(MountTableTest, LongLogWithoutFlushKeepsTheLastChangeOfEachKey) {
  MountTable t;
  const libshare::IpAddress a = *libshare::IpAddress::Parse("10.0.0.1");
  const libshare::IpAddress b = *libshare::IpAddress::Parse("10.0.0.2");
  ASSERT_TRUE(t.Add(b, "/kept", 1));
  for (int i = 0; i < 50000; ++i) {
    ASSERT_TRUE(t.Add(a, "/loop", 1));
    ASSERT_TRUE(t.Remove(a, "/loop"));
  }
  ASSERT_TRUE(t.Add(a, "/loop", 1));
  EXPECT_EQ(t.path_count(), 2u);
  auto [added, removed] = t.TakeChanges();
  EXPECT_THAT(added, ::testing::UnorderedElementsAre(
                         libshare::MountRecord{"10.0.0.1", "/loop"},
                         libshare::MountRecord{"10.0.0.2", "/kept"}));
  EXPECT_THAT(removed, IsEmpty());
  EXPECT_TRUE(t.Remove(a, "/loop"));
  (void)t.TakeChanges();
  EXPECT_EQ(t.path_count(), 1u) << "/loop is held by no record or change";
}

// DESIGN.md's memory budget: at most 300 bytes per mount record. The heap
// in use (glibc's mallinfo2, chunk headers and the B-tree's nodes
// included) before and after 64 clients x 900 paths each, once the
// records were flushed (pending changes taken), as a mount storm leaves
// them; each path's text is held once.
TEST(MountTableTest, MountRecordWithinThreeHundredBytes) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "the sanitizer's allocator keeps its own accounting";
#endif
  constexpr int kClients = 64;
  constexpr int kPaths = 900;
  std::vector<std::string> paths;
  for (int p = 0; p < kPaths; ++p) {
    paths.push_back(absl::StrCat("/export/home/u", 10000 + p));
  }
  std::vector<libshare::IpAddress> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.push_back(
        *libshare::IpAddress::Parse(absl::StrCat("127.100.0.", c + 1)));
  }
  MountTable t;
  const std::size_t before = mallinfo2().uordblks;
  for (const libshare::IpAddress& c : clients) {
    for (const std::string& p : paths) ASSERT_TRUE(t.Add(c, p, 1));
  }
  (void)t.TakeChanges();
  const std::size_t after = mallinfo2().uordblks;
  ASSERT_EQ(t.size(), static_cast<std::size_t>(kClients) * kPaths);
  const double per = static_cast<double>(after - before) / t.size();
  RecordProperty("bytes_per_record", static_cast<int>(per));
  std::printf("heap bytes per mount record: %.1f (budget 300)\n", per);
  EXPECT_LE(per, 300.0);
  EXPECT_GT(per, 0.0);
}

}  // namespace
}  // namespace sharemgrd

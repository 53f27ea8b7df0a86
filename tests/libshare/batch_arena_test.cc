#include "libshare/batch_arena.h"

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory_resource>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace libshare {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

std::size_t PageSize() {
  return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

bool Inside(const BatchArena& a, const void* p) {
  const auto b = reinterpret_cast<std::uintptr_t>(a.region());
  const auto q = reinterpret_cast<std::uintptr_t>(p);
  return q >= b && q < b + a.mapped();
}

// Whether every page of [p, p + bytes) is resident: 1 yes, 0 no, -1 the
// range is not mapped (ENOMEM).
int Resident(const void* p, std::size_t bytes) {
  std::vector<unsigned char> v((bytes + PageSize() - 1) / PageSize());
  if (::mincore(const_cast<void*>(p), bytes, v.data()) != 0) {
    return errno == ENOMEM ? -1 : 0;
  }
  for (unsigned char c : v) {
    if ((c & 1) == 0) return 0;
  }
  return 1;
}

TEST(BatchArena, MapsAResidentRegionAndServesFromIt) {
  constexpr std::size_t kBytes = std::size_t{8} << 20;
  BatchArena arena(kBytes);
  ASSERT_EQ(arena.mapped(), kBytes);
  EXPECT_EQ(Resident(arena.region(), kBytes), 1) << "made resident at once";
  std::pmr::vector<uint64_t> v(arena.resource());
  v.reserve(1000);
  for (uint64_t i = 0; i < 1000; ++i) v.push_back(i * i);
  EXPECT_TRUE(Inside(arena, v.data()));
  EXPECT_EQ(v[999], 999u * 999u);
}

TEST(BatchArena, GivesItsRegionBackWhenDestroyed) {
  constexpr std::size_t kBytes = std::size_t{4} << 20;
  const void* region = nullptr;
  {
    BatchArena arena(kBytes);
    ASSERT_EQ(arena.mapped(), kBytes);
    region = arena.region();
    void* p = arena.resource()->allocate(kBytes / 2, 64);
    EXPECT_TRUE(Inside(arena, p));
    ASSERT_NE(Resident(region, kBytes), -1);
  }
  EXPECT_EQ(Resident(region, kBytes), -1) << "still mapped";
}

// A batch bigger than its region: the rest comes from the heap, values
// intact, and is freed with the arena (AddressSanitizer finds a leak).
TEST(BatchArena, ABatchBiggerThanTheRegionStillWorks) {
  BatchArena arena(BatchArena::kMinMappedBytes);
  ASSERT_EQ(arena.mapped(), BatchArena::kMinMappedBytes);
  std::pmr::vector<uint64_t> v(arena.resource());
  const std::size_t n = 4 * BatchArena::kMinMappedBytes / sizeof(uint64_t);
  for (std::size_t i = 0; i < n; ++i) v.push_back(i);
  EXPECT_FALSE(Inside(arena, v.data())) << "grown past the region";
  for (std::size_t i = 0; i < n; i += 4097) ASSERT_EQ(v[i], i);
  EXPECT_EQ(v.back(), n - 1);
}

TEST(BatchArena, SmallArenaMapsNothingAndServesFromTheHeap) {
  BatchArena arena(BatchArena::kMinMappedBytes - 1);
  EXPECT_EQ(arena.mapped(), 0u);
  EXPECT_EQ(arena.region(), nullptr);
  std::pmr::vector<int> v({1, 2, 3}, arena.resource());
  EXPECT_EQ(v[2], 3);
  BatchArena none(0);
  EXPECT_EQ(none.mapped(), 0u);
}

// Where the region cannot be mapped (here: the address space is capped
// below it), the arena serves from the heap instead. In a child process,
// whose limit does not outlive it.
TEST(BatchArenaDeathTest, FailureToMapFallsBackToTheHeap) {
  if (kSanitized) GTEST_SKIP() << "AddressSanitizer maps its shadow";
  const std::string style = GTEST_FLAG_GET(death_test_style);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        // Room for the heap blocks below, not for a 1 GiB region.
        std::vector<char> warm(std::size_t{8} << 20, 1);  // heap grown first
        rlimit cap{};
        if (::getrlimit(RLIMIT_AS, &cap) != 0) std::_Exit(3);
        std::FILE* f = std::fopen("/proc/self/statm", "re");
        unsigned long pages = 0;
        if (f == nullptr || std::fscanf(f, "%lu", &pages) != 1) std::_Exit(3);
        std::fclose(f);
        cap.rlim_cur = pages * PageSize() + (std::size_t{256} << 20);
        if (::setrlimit(RLIMIT_AS, &cap) != 0) std::_Exit(3);
        BatchArena arena(std::size_t{1} << 30);
        if (arena.mapped() != 0 || arena.region() != nullptr) std::_Exit(4);
        std::pmr::vector<uint64_t> v(arena.resource());
        for (uint64_t i = 0; i < 100000; ++i) v.push_back(i);
        std::_Exit(v[99999] == 99999 && warm[0] == 1 ? 0 : 5);
      },
      ::testing::ExitedWithCode(0), "");
  GTEST_FLAG_SET(death_test_style, style);
}

}  // namespace
}  // namespace libshare

#include "libshare/heap_reserve.h"

#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/utsname.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
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

constexpr std::size_t kPage = 4096;

// MADV_POPULATE_WRITE came with Linux 5.14.
bool KernelPopulates() {
  utsname u;
  if (::uname(&u) != 0) return false;
  int major = 0;
  int minor = 0;
  if (std::sscanf(u.release, "%d.%d", &major, &minor) != 2) return false;
  return major > 5 || (major == 5 && minor >= 14);
}

// Page faults this thread has taken so far (the kernel counts the pages a
// populate call makes resident here too, so callers measure around what
// comes after it).
long ThreadFaults() {
  rusage u;
  ::getrusage(RUSAGE_THREAD, &u);
  return u.ru_minflt + u.ru_majflt;
}

// One write per page, not instrumented: under AddressSanitizer each
// instrumented write would also read its shadow memory, whose first touch
// faults as well (31 faults for 256 pages).
#if defined(__clang__) || defined(__GNUC__)
__attribute__((no_sanitize("address")))
#endif
void FlipOneBytePerPage(unsigned char* p, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; i += kPage) p[i + 1] ^= 1;
}

TEST(PopulateForWrite, MakesPagesResidentAndKeepsTheirContents) {
  if (!KernelPopulates()) GTEST_SKIP() << "kernel older than 5.14";
  constexpr std::size_t kBytes = 256 * kPage;
  void* m = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(m, MAP_FAILED);
  auto* p = static_cast<unsigned char*>(m);
  std::memset(p, 0xa5, 3 * kPage + 100);  // some pages already written

  ASSERT_TRUE(PopulateForWrite(p, kBytes));
  const long before = ThreadFaults();
  FlipOneBytePerPage(p, kBytes);
  const long taken = ThreadFaults() - before;
  EXPECT_LT(taken, 8) << "touching 256 populated pages faulted";
  for (std::size_t i = 0; i < 3 * kPage + 100; ++i) {
    const unsigned char want = i % kPage == 1 ? 0xa4 : 0xa5;
    ASSERT_EQ(p[i], want) << "byte " << i << " changed";
  }
  EXPECT_EQ(p[3 * kPage + 100], 0);
  ::munmap(m, kBytes);
}

TEST(PopulateForWrite, AnEmptyRangeIsNoError) {
  char c = 0;
  EXPECT_TRUE(PopulateForWrite(&c, 0));
  EXPECT_TRUE(PopulateForWrite(&c, 1));  // no whole page inside
}

TEST(HeapReserve, BelowTheMinimumReservesNothing) {
  HeapReserve reserve(HeapReserve::kMinBytes - 1);
  EXPECT_EQ(reserve.populated(), 0u);
  HeapReserve none(0);
  EXPECT_EQ(none.populated(), 0u);
}

// What the reserve is for: a burst of allocations on the reserving thread
// is carved from resident pages. 4 MiB of strings take 1,024 faults
// without it; with it, almost none.
TEST(HeapReserve, AllocationsAfterItTakeFewFaults) {
  if (!KernelPopulates()) GTEST_SKIP() << "kernel older than 5.14";
  if (kSanitized) GTEST_SKIP() << "AddressSanitizer's malloc: no reserve";
  constexpr std::size_t kBurst = std::size_t{4} << 20;
  long taken = -1;
  std::size_t populated = 0;
  std::thread t([&] {
    HeapReserve reserve(2 * kBurst);
    populated = reserve.populated();
    const long before = ThreadFaults();
    std::vector<std::unique_ptr<std::string>> strings;
    strings.reserve(kBurst / 1000);
    for (std::size_t i = 0; i < kBurst / 1000; ++i) {
      strings.push_back(std::make_unique<std::string>(1000, 'x'));
    }
    taken = ThreadFaults() - before;
    for (const auto& s : strings) ASSERT_EQ(s->size(), 1000u);
  });
  t.join();
  EXPECT_GE(populated, 2 * kBurst - (std::size_t{128} << 10));
  EXPECT_LT(taken, 64) << "of about " << kBurst / kPage << " pages";
}

// The reserve is an optimization only: memory is usable and freed as
// usual, and a reserve made and dropped over and over holds nothing.
TEST(HeapReserve, RepeatedReservesHoldNothing) {
  for (int i = 0; i < 50; ++i) {
    HeapReserve reserve(std::size_t{8} << 20);
    std::vector<char> v(std::size_t{1} << 20, 'y');
    EXPECT_EQ(v[12345], 'y');
  }
  HeapReserve huge(std::size_t{1} << 40);  // more than the machine has
  EXPECT_LE(huge.populated(), HeapReserve::kMaxBytes);
  std::string s(100, 'z');
  EXPECT_EQ(s.back(), 'z');
}

}  // namespace
}  // namespace libshare

#include "libshare/heap_reserve.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
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

// The size of a transparent huge page, or 0 without them.
std::size_t HugePageSize() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size");
  std::size_t v = 0;
  return f >> v ? v : 0;
}

// Whether the kernel makes huge pages on request here (MADV_COLLAPSE,
// Linux 6.1, and THP not off), tried on a mapping of its own.
bool KernelCollapses(std::size_t huge) {
  if (huge == 0) return false;
  void* m = ::mmap(nullptr, 2 * huge, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return false;
  const auto a = (reinterpret_cast<std::uintptr_t>(m) + huge - 1) & ~(huge - 1);
  *reinterpret_cast<char*>(a) = 1;  // only a range with a page collapses
  const bool ok =
      ::madvise(reinterpret_cast<void*>(a), huge, 25 /* MADV_COLLAPSE */) == 0;
  ::munmap(m, 2 * huge);
  return ok;
}

// The kB of anonymous huge pages in [p, p + bytes), from /proc/self/smaps.
long AnonHugeKbIn(const void* p, std::size_t bytes) {
  const auto lo = reinterpret_cast<std::uintptr_t>(p);
  const auto hi = lo + bytes;
  std::ifstream f("/proc/self/smaps");
  std::string line;
  bool inside = false;
  long kb = 0;
  while (std::getline(f, line)) {
    unsigned long long b = 0;
    unsigned long long e = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx ", &b, &e) == 2) {
      inside = b < hi && e > lo;
      continue;
    }
    long v = 0;
    if (inside && std::sscanf(line.c_str(), "AnonHugePages: %ld kB", &v) == 1) {
      kb += v;
    }
  }
  return kb;
}

// Where the kernel can, the whole huge pages of a big range become huge
// pages (one mapping for 512 pages: bench/JOURNAL.md, "Huge pages"), and
// what was written before is still there.
TEST(PopulateForWrite, MakesHugePagesOfWholeOnesAndKeepsContents) {
  const std::size_t huge = HugePageSize();
  if (!KernelCollapses(huge)) GTEST_SKIP() << "no huge pages on request here";
  const std::size_t bytes = 3 * huge;
  void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(m, MAP_FAILED);
  auto* p = static_cast<unsigned char*>(m);
  for (std::size_t i = 0; i < bytes; i += 3 * kPage + 17) p[i] = 0x5a;

  ASSERT_TRUE(PopulateForWrite(p, bytes));
  // 3 huge pages' worth from an unaligned start hold 2 whole ones.
  EXPECT_GE(AnonHugeKbIn(p, bytes), static_cast<long>(huge / 1024))
      << "no huge page made";
  for (std::size_t i = 0; i < bytes; ++i) {
    const unsigned char want = i % (3 * kPage + 17) == 0 ? 0x5a : 0;
    ASSERT_EQ(p[i], want) << "byte " << i << " changed";
  }
  ::munmap(m, bytes);
}

// Whether the mapping holding `p` carries MADV_HUGEPAGE's mark ("hg" in
// its VmFlags, /proc/self/smaps).
bool AdvisedHuge(const void* p) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  std::ifstream f("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(f, line)) {
    unsigned long long b = 0;
    unsigned long long e = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx ", &b, &e) == 2) {
      inside = b <= a && a < e;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) {
      return (line + " ").find(" hg ") != std::string::npos;
    }
  }
  return false;
}

// THP on request ("madvise" or "always"), as the advice needs.
bool KernelAdvisesHugePages() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  std::getline(f, mode);
  return !mode.empty() && mode.find("[never]") == std::string::npos;
}

// A big buffer not written yet takes its first writes as huge pages; one
// already resident is left as it is (the advice would only split its
// mapping), and a small one is not advised.
TEST(AdviseHugePages, FreshBigBufferFaultsInHugePages) {
  const std::size_t huge = HugePageSize();
  if (huge == 0 || !KernelAdvisesHugePages()) {
    GTEST_SKIP() << "no transparent huge pages here";
  }
  const std::size_t bytes = std::max(kAdviseHugeBytes, 3 * huge) + huge;
  void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(m, MAP_FAILED);
  auto* p = static_cast<unsigned char*>(m);
  AdviseHugePages(p, bytes);
  EXPECT_TRUE(AdvisedHuge(p + bytes / 2));
  for (std::size_t i = 0; i < bytes; i += kPage) p[i] = 1;
  EXPECT_GE(AnonHugeKbIn(p, bytes), static_cast<long>(huge / 1024))
      << "no huge page on first write";
  ::munmap(m, bytes);

  // The same buffer written first: not advised (its mapping keeps its
  // flags: no "hg", MADV_HUGEPAGE's mark, in /proc/self/smaps).
  m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(m, MAP_FAILED);
  p = static_cast<unsigned char*>(m);
  for (std::size_t i = 0; i < bytes; i += kPage) p[i] = 1;
  AdviseHugePages(p, bytes);
  EXPECT_FALSE(AdvisedHuge(p + bytes / 2)) << "a resident buffer was advised";
  ::munmap(m, bytes);
}

// Whether a fault in a range advised MADV_HUGEPAGE takes a huge page here:
// THP "always" or "madvise", and a defrag mode that compacts for it.
bool FaultsTakeHugePages() {
  const auto selected = [](const char* file) {
    std::ifstream f(file);
    std::string line;
    std::getline(f, line);
    const std::size_t open = line.find('[');
    const std::size_t close = line.find(']', open);
    return open == std::string::npos || close == std::string::npos
               ? std::string()
               : line.substr(open + 1, close - open - 1);
  };
  const std::string enabled =
      selected("/sys/kernel/mm/transparent_hugepage/enabled");
  const std::string defrag =
      selected("/sys/kernel/mm/transparent_hugepage/defrag");
  return (enabled == "always" || enabled == "madvise") &&
         (defrag == "always" || defrag == "madvise" ||
          defrag == "defer+madvise");
}

// A buffer of 64 MiB or more never written, mapped on its own (as glibc
// maps one), is populated in two halves on two threads, its huge pages
// advised (MADV_HUGEPAGE: "hg" in smaps, which the one-thread collapse does
// not leave) and made on the faults: resident whole, a huge page made, and
// a page written inside it before (its huge page then has a page table,
// and is populated page by page) keeps what was written. A smaller one
// (it may be a piece of a malloc arena, where advice would outlive it) is
// populated as before, and left unadvised.
TEST(PopulateForWrite, BigFreshBufferIsAdvisedAndPopulatedWhole) {
  const std::size_t huge = HugePageSize();
  if (!KernelPopulates() || huge == 0 || !FaultsTakeHugePages()) {
    GTEST_SKIP() << "no transparent huge pages taken on faults here";
  }
  for (const std::size_t mib : {66, 24}) {
    const bool advised = mib >= 64;
    SCOPED_TRACE(std::to_string(mib) + " MiB");
    const std::size_t bytes = (mib << 20) + 3 * kPage;
    void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(m, MAP_FAILED);
    // Not page-aligned, as after malloc's header.
    auto* p = static_cast<unsigned char*>(m) + 16;
    const std::size_t len = bytes - 16;
    const std::size_t marked = std::size_t{12} << 20;
    p[marked] = 0x5a;

    ASSERT_TRUE(PopulateForWrite(p, len));
    EXPECT_EQ(AdvisedHuge(p + len / 2), advised);
    if (advised || KernelCollapses(huge)) {
      EXPECT_GE(AnonHugeKbIn(p, len), static_cast<long>(huge / 1024))
          << "no huge page made";
    }
    const long before = ThreadFaults();
    FlipOneBytePerPage(p + kPage, len - 2 * kPage);
    EXPECT_LT(ThreadFaults() - before, 8) << "populated pages faulted";
    FlipOneBytePerPage(p + kPage, len - 2 * kPage);  // back as they were
    for (std::size_t i = 0; i < len; i += 509) {
      if (i != marked) {
        ASSERT_EQ(p[i], 0) << "byte " << i << " changed";
      }
    }
    EXPECT_EQ(p[marked], 0x5a);
    ::munmap(m, bytes);
  }
}

// A fresh buffer is made resident whole: writing it afterwards takes
// (almost) no fault. One written before, or a small one, is left alone.
TEST(PopulateIfFresh, MakesAFreshBufferResidentAndLeavesOthers) {
  if (!KernelPopulates()) GTEST_SKIP() << "kernel older than 5.14";
  const std::size_t bytes = 4 * HeapReserve::kMinBytes;
  void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(m, MAP_FAILED);
  auto* p = static_cast<unsigned char*>(m);
  EXPECT_EQ(PopulateIfFresh(p, bytes), bytes);
  std::vector<unsigned char> in(bytes / kPage);
  ASSERT_EQ(::mincore(p, bytes, in.data()), 0);
  EXPECT_TRUE(std::all_of(in.begin(), in.end(), [](unsigned char c) {
    return (c & 1) != 0;
  })) << "not every page resident";
  const long before = ThreadFaults();
  FlipOneBytePerPage(p, bytes);
  EXPECT_LT(ThreadFaults() - before, 8) << "of " << bytes / kPage << " pages";
  // Resident now: nothing more to do, and said so.
  EXPECT_EQ(PopulateIfFresh(p, bytes), bytes);
  ::munmap(m, bytes);

  m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(m, MAP_FAILED);
  p = static_cast<unsigned char*>(m);
  EXPECT_EQ(PopulateIfFresh(p, HeapReserve::kMinBytes - 1), 0u);
  unsigned char resident = 1;
  ASSERT_EQ(::mincore(p, kPage, &resident), 0);
  EXPECT_EQ(resident & 1, 0) << "a small buffer was populated";
  ::munmap(m, bytes);
}

// A vector too big for a thread's arena (64 MiB) is mapped afresh, beside
// any reserve: ReserveResident makes its room resident before it is
// filled, on any thread.
TEST(ReserveResident, ABigVectorsRoomIsResidentBeforeItIsFilled) {
  if (!KernelPopulates()) GTEST_SKIP() << "kernel older than 5.14";
  // Its instrumented writes also fault in their shadow memory.
  if (kSanitized) GTEST_SKIP() << "AddressSanitizer";
  constexpr std::size_t kCount = (std::size_t{80} << 20) / sizeof(uint64_t);
  long taken = -1;
  std::size_t room = 0;
  bool all_resident = false;
  std::thread t([&] {
    std::vector<uint64_t> v;
    room = ReserveResident(v, kCount);
    // Resident before the first write (also where every fault would take
    // a huge page: transparent huge pages "always").
    std::vector<unsigned char> in(room / kPage);
    const auto first =
        (reinterpret_cast<std::uintptr_t>(v.data()) + kPage - 1) &
        ~std::uintptr_t{kPage - 1};
    all_resident = ::mincore(reinterpret_cast<void*>(first), room - kPage,
                             in.data()) == 0 &&
                   std::all_of(in.begin(), in.end() - 1,
                               [](unsigned char c) { return (c & 1) != 0; });
    const long before = ThreadFaults();
    for (std::size_t i = 0; i < kCount; ++i) v.push_back(i);
    taken = ThreadFaults() - before;
    ASSERT_EQ(v[kCount - 1], kCount - 1);
  });
  t.join();
  EXPECT_EQ(room, kCount * sizeof(uint64_t));
  EXPECT_TRUE(all_resident) << "its room was not resident before writing";
  EXPECT_LT(taken, 64) << "of " << room / kPage << " pages";
}

// The room made resident stops at the bound given; the vector is whole.
TEST(ReserveResident, MakesAtMostTheBoundResident) {
  if (!KernelPopulates()) GTEST_SKIP() << "kernel older than 5.14";
  std::vector<char> v;
  const std::size_t n = 64 * HeapReserve::kMinBytes;
  EXPECT_EQ(ReserveResident(v, n, 2 * HeapReserve::kMinBytes),
            2 * HeapReserve::kMinBytes);
  EXPECT_GE(v.capacity(), n);
  const auto first = (reinterpret_cast<std::uintptr_t>(v.data()) + kPage - 1) &
                     ~std::uintptr_t{kPage - 1};
  // Well past the bound (and past any huge page it rounds to): untouched.
  unsigned char far = 1;
  ASSERT_EQ(
      ::mincore(reinterpret_cast<void*>(first + 32 * HeapReserve::kMinBytes),
                kPage, &far),
      0);
  EXPECT_EQ(far & 1, 0) << "past the bound was made resident";
  std::vector<char> small;
  EXPECT_EQ(ReserveResident(small, 1000), 0u);
}

// The process's anonymous resident memory (RssAnon), in KiB; -1 unknown.
long RssAnonKib() {
  std::ifstream f("/proc/self/status");
  std::string key;
  long kib = -1;
  while (f >> key) {
    if (key == "RssAnon:") {
      f >> kib;
      return kib;
    }
    f.ignore(1 << 10, '\n');
  }
  return -1;
}

constexpr std::size_t kWarmStep = std::size_t{2} << 20;

// RssAnon before a warm: once a thread has run and been joined, so that
// the warm thread's stack (glibc keeps it cached after the join, and it
// may be one huge page) is counted already.
// A burst of 1,000-byte strings, `bytes` in all, made on this thread;
// *faults is set to the page faults the burst took.
std::vector<std::unique_ptr<std::string>> BurstOfStrings(std::size_t bytes,
                                                         char c, long* faults) {
  const long before = ThreadFaults();
  std::vector<std::unique_ptr<std::string>> strings;
  strings.reserve(bytes / 1000);
  for (std::size_t i = 0; i < bytes / 1000; ++i) {
    strings.push_back(std::make_unique<std::string>(1000, c));
  }
  *faults = ThreadFaults() - before;
  return strings;
}

// Waits until the warm has populated `bytes` (a few ms; the deadline only
// stops a hang).
void WaitWarmed(const MemoryWarmer& w, std::size_t bytes) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (w.warmed() < bytes && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

long RssAnonBeforeWarming() {
  std::thread([] {}).join();
  return RssAnonKib();
}

// A warm populates what it was asked for, in whole 2 MiB steps, on a
// thread of its own, and gives it all back once done: the process holds
// no more memory afterwards than before.
TEST(MemoryWarmer, WarmsWhatItIsAskedAndGivesItBack) {
  if (!KernelPopulates()) GTEST_SKIP() << "kernel older than 5.14";
  constexpr std::size_t kBytes = 8 * kWarmStep;
  const long before = RssAnonBeforeWarming();
  MemoryWarmer w;
  const std::size_t planned = w.Start(kBytes + kWarmStep / 2);
  if (planned < kBytes) {
    (void)w.Stop();
    GTEST_SKIP() << "too little memory available for 16 MiB";
  }
  ASSERT_EQ(planned, kBytes) << "whole steps";
  // It ends by itself (a few ms; the deadline only stops a hang).
  WaitWarmed(w, kBytes);
  EXPECT_EQ(w.Stop(), kBytes);
  EXPECT_LT(RssAnonKib() - before, 2048) << "warmed memory kept";
  EXPECT_EQ(w.Stop(), 0u) << "nothing warmed since";
}

// One warm at a time; a stop asked for ends it after its current step,
// whatever was asked, and its memory is given back; then another starts.
TEST(MemoryWarmer, StopsWhenAskedAndWarmsOneAtATime) {
  if (!KernelPopulates()) GTEST_SKIP() << "kernel older than 5.14";
  MemoryWarmer w;
  EXPECT_EQ(w.Start(kWarmStep - 1), 0u) << "less than a step";
  EXPECT_EQ(w.Stop(), 0u);
  const long before = RssAnonBeforeWarming();
  const std::size_t planned = w.Start(MemoryWarmer::kMaxBytes);
  if (planned < std::size_t{512} << 20) {
    (void)w.Stop();
    GTEST_SKIP() << "too little memory available for a long warm";
  }
  EXPECT_EQ(w.Start(kWarmStep), 0u) << "a second warm while one runs";
  w.RequestStop();
  // It ends by itself after its current step: a new warm can start then.
  std::size_t last = 0;
  bool started = false;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!started && std::chrono::steady_clock::now() < deadline) {
    last = w.warmed();
    started = w.Start(kWarmStep) != 0;
    if (!started) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(started) << "no new warm after a stop";
  EXPECT_LT(last, planned / 2) << "did not stop when asked";
  EXPECT_EQ(last % kWarmStep, 0u);
  EXPECT_LE(w.Stop(), kWarmStep);
  EXPECT_LT(RssAnonKib() - before, 2048) << "warmed memory kept";
}

// Once its burst has come, a warm goes on beside it up to what the burst
// needs and no further, holds what it populated until it is given back (a
// step at a time, from its first, never past what is populated) or it is
// asked to stop, and then holds nothing. Stream() reports what was warmed
// ahead, at least a step, once per warm.
TEST(MemoryWarmer, StreamsBesideItsBurstUpToItsNeedAndHoldsUntilStopped) {
  if (!KernelPopulates()) GTEST_SKIP() << "kernel older than 5.14";
  MemoryWarmer w;
  EXPECT_FALSE(w.Holds());
  EXPECT_EQ(w.Stream(kWarmStep), 0u) << "no warm";
  EXPECT_EQ(w.GiveBack(kWarmStep), 0u) << "no warm";
  const long before = RssAnonBeforeWarming();
  constexpr std::size_t kBytes = 64 * kWarmStep;
  constexpr std::size_t kNeed = 24 * kWarmStep;
  const std::size_t planned = w.Start(kBytes);
  if (planned < kBytes) {
    (void)w.Stop();
    GTEST_SKIP() << "too little memory available for 128 MiB";
  }
  // Called at once: it waits for the first step.
  const std::size_t ahead = w.Stream(kNeed);
  EXPECT_GE(ahead, kWarmStep) << "a warm reports at least one step";
  EXPECT_EQ(ahead % kWarmStep, 0u);
  EXPECT_EQ(w.Stream(kNeed), 0u) << "reported once";
  if (ahead >= kNeed) {
    (void)w.Stop();
    GTEST_SKIP() << "the warm was past its need before it was told";
  }
  std::size_t given = 0;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (given < kNeed && std::chrono::steady_clock::now() < deadline) {
    const std::size_t g = w.GiveBack(kWarmStep);
    ASSERT_TRUE(g == 0 || g == kWarmStep) << g;
    given += g;
    ASSERT_LE(given, w.warmed()) << "given back before it was populated";
    if (g == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  EXPECT_EQ(given, kNeed) << "it did not go on up to its need";
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(w.warmed(), kNeed) << "it went on past its need";
  EXPECT_TRUE(w.Holds()) << "it did not wait to be stopped";
  EXPECT_EQ(w.GiveBack(kWarmStep), 0u) << "all of it was given back";
  w.RequestStop();
  while (w.Holds() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_FALSE(w.Holds()) << "a stop asked for did not end it";
  EXPECT_EQ(w.Stop(), kNeed);
  EXPECT_LT(RssAnonKib() - before, 2048) << "warmed memory kept";
}

// While its burst arrives a warm populates no more but holds what it has,
// until the burst says what it needs (then it goes on up to that), or for
// at most kKeptWarm (then it ends, holding nothing).
TEST(MemoryWarmer, PausedWhileItsBurstArrivesThenGoesOnOrEnds) {
  if (!KernelPopulates()) GTEST_SKIP() << "kernel older than 5.14";
  constexpr std::size_t kBytes = 256 * kWarmStep;
  for (const bool burst_comes : {true, false}) {
    MemoryWarmer w;
    if (w.Start(kBytes) < kBytes) {
      (void)w.Stop();
      GTEST_SKIP() << "too little memory available for 512 MiB";
    }
    WaitWarmed(w, 2 * kWarmStep);
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(60);
    w.RequestPause();
    // It pauses after its current step: once nothing moved for 100 ms.
    std::size_t paused = w.warmed();
    for (int still = 0;
         still < 100 && std::chrono::steady_clock::now() < deadline;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      const std::size_t now = w.warmed();
      still = now == paused ? still + 1 : 0;
      paused = now;
    }
    if (paused + 4 * kWarmStep > kBytes || !w.Holds()) {
      (void)w.Stop();
      GTEST_SKIP() << "the warm was (nearly) done before its pause";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(w.warmed(), paused) << "it populated while paused";
    EXPECT_TRUE(w.Holds()) << "it gave up what it has while paused";
    if (burst_comes) {
      const std::size_t need = paused + 4 * kWarmStep;
      EXPECT_EQ(w.Stream(need), paused);
      WaitWarmed(w, need);
      EXPECT_EQ(w.warmed(), need) << "it did not go on up to the need";
      EXPECT_EQ(w.GiveBack(need), need);
      EXPECT_EQ(w.Stop(), need);
    } else {
      while (w.Holds() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      EXPECT_FALSE(w.Holds()) << "a pause with no burst did not end";
      EXPECT_EQ(w.warmed(), paused);
      EXPECT_EQ(w.GiveBack(kWarmStep), 0u) << "a warm that ended holds nothing";
    }
  }
}

// Stream() returns whenever the warm is: paused before its first step, a
// pause ended by its time before any step, or asked for nothing. Each warm
// is asked 512 MiB, so that it is still going when its pause comes; a
// test whose thread was held up until the warm had done all of it skips.
constexpr std::size_t kLongWarm = 256 * kWarmStep;

bool StartLongWarm(MemoryWarmer& w) {
  if (w.Start(kLongWarm) == kLongWarm) return true;
  (void)w.Stop();
  return false;
}

TEST(MemoryWarmer, StreamReturnsForAWarmPausedBeforeItsFirstStep) {
  if (!KernelPopulates()) GTEST_SKIP() << "kernel older than 5.14";
  MemoryWarmer w;
  if (!StartLongWarm(w)) GTEST_SKIP() << "too little memory for 512 MiB";
  w.RequestPause();  // most likely before its first step
  const std::size_t got = w.Stream(4 * kWarmStep);
  // 0 is a documented answer too: the kernel populated nothing (memory
  // short) or the pause ended the warm before Stream came (this thread
  // held up for kKeptWarm on a busy machine). Returning at all is what
  // this test is for.
  if (got == 0 || !w.Holds()) {
    (void)w.Stop();
    GTEST_SKIP() << "the warm populated nothing, or was done before its "
                    "pause (got " << got << ")";
  }
  WaitWarmed(w, 4 * kWarmStep);
  // Past the need it gave back itself; up to it, it holds.
  EXPECT_EQ(w.GiveBack(8 * kWarmStep), 4 * kWarmStep);
  // A warm held up past its first steps before the pause (a busy machine)
  // finishes the step it was in after Stream returned: one more than got.
  EXPECT_LE(w.Stop(), std::max(got + kWarmStep, 5 * kWarmStep));
}

TEST(MemoryWarmer, StreamReturnsAfterAPauseEndedTheWarm) {
  if (!KernelPopulates()) GTEST_SKIP() << "kernel older than 5.14";
  MemoryWarmer w;
  if (!StartLongWarm(w)) GTEST_SKIP() << "too little memory for 512 MiB";
  w.RequestPause();
  // The pause ends the warm after kKeptWarm (2 s) without its burst.
  std::this_thread::sleep_for(MemoryWarmer::kKeptWarm +
                              std::chrono::milliseconds(300));
  if (w.warmed() == kLongWarm) {
    (void)w.Stop();
    GTEST_SKIP() << "the warm was done before its pause";
  }
  EXPECT_FALSE(w.Holds()) << "a pause with no burst did not end the warm";
  (void)w.Stream(4 * kWarmStep);  // returns: nothing to wait for
  EXPECT_EQ(w.GiveBack(kWarmStep), 0u);
}

TEST(MemoryWarmer, StreamOfANeedOfNothingHoldsNothing) {
  if (!KernelPopulates()) GTEST_SKIP() << "kernel older than 5.14";
  MemoryWarmer w;
  if (!StartLongWarm(w)) GTEST_SKIP() << "too little memory for 512 MiB";
  w.RequestPause();
  (void)w.Stream(0);  // a need of nothing
  EXPECT_EQ(w.GiveBack(kWarmStep), 0u) << "given past a need of nothing";
  (void)w.Stop();
  EXPECT_FALSE(w.Holds());
}

// A burst that fails before it asks for the warm stops it, unless another
// burst has streamed it meanwhile: that one's warm goes on and still gives.
TEST(MemoryWarmer, StopUnlessStreamedLeavesAStreamedWarmGoing) {
  if (!KernelPopulates()) GTEST_SKIP() << "kernel older than 5.14";
  for (const bool streamed : {false, true}) {
    MemoryWarmer w;
    if (!StartLongWarm(w)) GTEST_SKIP() << "too little memory for 512 MiB";
    WaitWarmed(w, kWarmStep);
    if (streamed) {
      EXPECT_GE(w.Stream(4 * kWarmStep), kWarmStep);
      w.RequestStopUnlessStreamed();
      WaitWarmed(w, 4 * kWarmStep);
      EXPECT_TRUE(w.Holds()) << "a streamed warm was stopped";
      EXPECT_EQ(w.GiveBack(4 * kWarmStep), 4 * kWarmStep);
      (void)w.Stop();
      continue;
    }
    // Paused, it would hold what it has for kKeptWarm (2 s); stopped, it
    // ends within a step.
    w.RequestPause();
    if (w.warmed() == kLongWarm) {
      (void)w.Stop();
      GTEST_SKIP() << "the warm was done before its pause";
    }
    w.RequestStopUnlessStreamed();
    const auto deadline =
        std::chrono::steady_clock::now() + MemoryWarmer::kKeptWarm / 2;
    while (w.Holds() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_FALSE(w.Holds()) << "a warm nobody streamed was not stopped";
    (void)w.Stop();
  }
}

// In a child process whose address space is capped just above what it
// uses: a warm is started (its thread's stack fits, its 64 MiB do not)
// and streamed. The exit code: 0 when Stream() said the warm populated
// nothing and it holds nothing; others say which step went wrong. An alarm
// turns a hang into a failure.
int StreamWithTheMappingRefused() {
  ::alarm(20);
  long vm_kib = 0;
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (std::sscanf(line.c_str(), "VmSize: %ld kB", &vm_kib) == 1) break;
  }
  const rlim_t cap = (static_cast<rlim_t>(vm_kib) << 10) + (rlim_t{32} << 20);
  const rlimit r{cap, cap};
  if (vm_kib == 0 || ::setrlimit(RLIMIT_AS, &r) != 0) return 3;
  // The warm's thread gets a stack of 1 MiB, whatever RLIMIT_STACK says
  // (a thread's default stack is its soft limit, often raised in CI).
  pthread_attr_t attr;
  if (::pthread_attr_init(&attr) != 0 ||
      ::pthread_attr_setstacksize(&attr, std::size_t{1} << 20) != 0 ||
      ::pthread_setattr_default_np(&attr) != 0) {
    return 6;
  }
  MemoryWarmer w;
  if (w.Start(32 * kWarmStep) == 0) return 4;  // no thread
  const std::size_t warmed = w.Stream(4 * kWarmStep);
  const bool held = w.Holds();
  (void)w.Stop();
  return warmed == 0 && !held ? 0 : 5;
}

// A warm whose mapping the kernel refuses populates nothing, and Stream()
// says so rather than wait for a first step that never comes.
TEST(MemoryWarmerDeathTest, StreamReturnsWhenTheWarmCannotMap) {
  if (kSanitized) GTEST_SKIP() << "AddressSanitizer maps its shadow";
  const std::string style = GTEST_FLAG_GET(death_test_style);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::_Exit(StreamWithTheMappingRefused()),
              ::testing::ExitedWithCode(0), "");
  GTEST_FLAG_SET(death_test_style, style);
}

// A warm further ahead than its burst needs gives back what is past the
// need itself: the burst is given no more than its need.
TEST(MemoryWarmer, AWarmPastItsNeedIsGivenBackNoMoreThanTheNeed) {
  if (!KernelPopulates()) GTEST_SKIP() << "kernel older than 5.14";
  MemoryWarmer w;
  if (w.Start(256 * kWarmStep) < 256 * kWarmStep) {
    (void)w.Stop();
    GTEST_SKIP() << "too little memory available for 512 MiB";
  }
  WaitWarmed(w, 8 * kWarmStep);
  EXPECT_GE(w.Stream(2 * kWarmStep + 1), 8 * kWarmStep);
  if (!w.Holds()) {
    (void)w.Stop();
    GTEST_SKIP() << "the warm was done before its burst came";
  }
  EXPECT_EQ(w.GiveBack(32 * kWarmStep), 3 * kWarmStep) << "the need, whole";
  EXPECT_EQ(w.GiveBack(kWarmStep), 0u);
  EXPECT_TRUE(w.Holds()) << "held until stopped";
  (void)w.Stop();
  EXPECT_FALSE(w.Holds());
}

// A reserve with a donor warm takes a step of the donor's for each huge
// page it collapses, and is a reserve as any: the burst after it takes few
// faults, and it holds huge pages where the kernel makes them on request.
TEST(HeapReserve, WithADonorWarmTakesItsStepsAndServesTheBurst) {
  if (!KernelPopulates()) GTEST_SKIP() << "kernel older than 5.14";
  if (kSanitized) GTEST_SKIP() << "AddressSanitizer's malloc: no reserve";
  constexpr std::size_t kBurst = std::size_t{8} << 20;
  MemoryWarmer w;
  // Long enough to be going on while the reserve is made, most likely.
  if (w.Start(128 * kWarmStep) < 128 * kWarmStep) {
    (void)w.Stop();
    GTEST_SKIP() << "too little memory available for 256 MiB";
  }
  // Steps enough for the reserve's whole huge pages, held until given.
  WaitWarmed(w, 10 * kWarmStep);
  (void)w.Stream(128 * kWarmStep);
  long taken = -1;
  long huge_kb = -1;
  std::size_t populated = 0;
  bool held = false;
  std::thread t([&] {
    HeapReserve reserve(2 * kBurst, &w);
    held = w.Holds();  // then it held its steps all along
    populated = reserve.populated();
    const auto strings = BurstOfStrings(kBurst, 'd', &taken);
    for (const auto& s : strings) ASSERT_EQ(s->size(), 1000u);
    huge_kb = AnonHugeKbIn(strings[strings.size() / 2]->data(), 1);
  });
  t.join();
  (void)w.Stop();
  EXPECT_GE(populated, 2 * kBurst - (std::size_t{128} << 10));
  EXPECT_LT(taken, 64) << "of about " << kBurst / kPage << " pages";
  if (KernelCollapses(HugePageSize())) {
    EXPECT_GT(huge_kb, 0) << "the reserve's memory is not on a huge page";
    // Each whole huge page of its runs took one step (7 or 8 in a fresh
    // 16 MiB run; fewer where earlier tests left this thread's arena in
    // pieces, but the huge page above was one).
    if (held) {
      EXPECT_GE(w.given(), kWarmStep) << "no step taken from the donor";
    }
  }
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
    const auto strings = BurstOfStrings(kBurst, 'x', &taken);
    for (const auto& s : strings) ASSERT_EQ(s->size(), 1000u);
  });
  t.join();
  EXPECT_GE(populated, 2 * kBurst - (std::size_t{128} << 10));
  EXPECT_LT(taken, 64) << "of about " << kBurst / kPage << " pages";
}

// A reserve big enough to hold whole huge pages is backed by some, where
// the kernel makes them on request: the burst after it then writes to
// pages the hypervisor maps 512 at a time.
TEST(HeapReserve, BigReservesAreHugePages) {
  if (kSanitized) GTEST_SKIP() << "AddressSanitizer's malloc: no reserve";
  const std::size_t huge = HugePageSize();
  if (!KernelCollapses(huge)) GTEST_SKIP() << "no huge pages on request here";
  long kb = -1;
  std::thread t([&] {
    HeapReserve reserve(4 * huge);
    ASSERT_GT(reserve.populated(), 0u);
    // The reserve's free block is what these are carved from.
    std::vector<std::unique_ptr<std::string>> strings;
    for (int i = 0; i < 64; ++i) {
      strings.push_back(std::make_unique<std::string>(1000, 'h'));
    }
    kb = AnonHugeKbIn(strings[32]->data(), 1);
  });
  t.join();
  EXPECT_GT(kb, 0) << "the reserve's memory is not on a huge page";
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

#include "libshare/heap_reserve.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older headers lack it
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25  // Linux 6.1
#endif

// Under AddressSanitizer malloc is its own, and a freed chunk waits in
// quarantine before reuse: nothing would be served from a reserve.
#if defined(__SANITIZE_ADDRESS__)
#define LIBSHARE_RESERVE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LIBSHARE_RESERVE 0
#endif
#endif
#if !defined(LIBSHARE_RESERVE) && defined(__GLIBC__)
#define LIBSHARE_RESERVE 1
#endif

extern char end;  // the program's end, where its break starts (end(3))

namespace libshare {
namespace {

// Below glibc's smallest mmap threshold (128 KiB), so each chunk comes from
// the arena, not from a mapping of its own that free() would unmap.
constexpr std::size_t kChunk = std::size_t{120} << 10;
// Two chunks taken one after the other from the arena's top lie this close
// or closer: malloc's header of the second between them.
constexpr std::uintptr_t kAdjacent = 64;

std::uintptr_t PageSize() {
  static const std::uintptr_t page =
      static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  return page;
}

// The size of a transparent huge page (2 MiB on x86-64), or 0 when the
// kernel has none to give (no THP, or an older kernel).
std::uintptr_t HugePageSize() {
  static const std::uintptr_t huge = [] {
    std::FILE* f =
        std::fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "re");
    if (f == nullptr) return std::uintptr_t{0};
    unsigned long long v = 0;
    const bool read = std::fscanf(f, "%llu", &v) == 1;
    std::fclose(f);
    // A power of two above the page size, or nothing.
    if (!read || v <= PageSize() || (v & (v - 1)) != 0)
      return std::uintptr_t{0};
    return static_cast<std::uintptr_t>(v);
  }();
  return huge;
}

bool PopulatePages(std::uintptr_t begin, std::uintptr_t end) {
  if (end <= begin) return true;
  return ::madvise(reinterpret_cast<void*>(begin), end - begin,
                   MADV_POPULATE_WRITE) == 0;
}

// Makes the pages that hold [begin, end) resident and writable. The whole
// huge pages inside are made huge pages (MADV_COLLAPSE), the rest
// populated page by page. On this project's VMs the first write to a page
// costs about 5 us even once the kernel has populated it (the hypervisor
// maps each page the guest maps; bench/JOURNAL.md, "Huge pages"), and a
// huge page is one such mapping for 512 pages: 16 MiB written for the
// first time took 21 ms after a populate and 1-2 ms as huge pages. Where
// the kernel cannot collapse (no THP, Linux before 6.1, no huge page free)
// those pages are populated instead. Contents are kept either way.
//
// With a `donor` (a warm going on beside, MemoryWarmer), each huge page is
// collapsed on its own, after the donor gave back one page of its as big:
// a huge page freed on a CPU tends to be the next one handed out there
// (the kernel's per-CPU lists), so that page is mostly taken at the cost
// of zeroing it, while the donor, on the other core, makes the next one
// ready from memory the guest handed back to the host. (Each collapse
// holds the address space's lock for writing while it fills its page;
// the donor's page faults, with per-VMA locks, Linux 6.4, take only their
// mapping's lock: TouchPages.)
bool Populate(std::uintptr_t begin, std::uintptr_t end,
              MemoryWarmer* donor = nullptr) {
  if (donor != nullptr && !donor->Holds()) donor = nullptr;  // no warm
  const std::uintptr_t page = PageSize();
  begin &= ~(page - 1);
  end = (end + page - 1) & ~(page - 1);
  if (end <= begin) return true;
  const std::uintptr_t huge = HugePageSize();
  if (huge != 0) {
    const std::uintptr_t a = (begin + huge - 1) & ~(huge - 1);
    const std::uintptr_t e = end & ~(huge - 1);
    // The kernel collapses only what has a page table already: one page
    // of each is made resident first (a page malloc wrote has one).
    bool tables = a < e;
    for (std::uintptr_t r = a; tables && r < e; r += huge) {
      tables = PopulatePages(r, r + page);
    }
    if (tables && donor == nullptr &&
        ::madvise(reinterpret_cast<void*>(a), e - a, MADV_COLLAPSE) == 0) {
      return PopulatePages(begin, a) && PopulatePages(e, end);
    }
    if (tables && donor != nullptr) {
      // A huge page the kernel cannot make is populated page by page, and
      // the next ones are still tried.
      for (std::uintptr_t r = a; r < e; r += huge) {
        (void)donor->GiveBack(huge);
        if (::madvise(reinterpret_cast<void*>(r), huge, MADV_COLLAPSE) != 0 &&
            !PopulatePages(r, r + huge)) {
          return false;
        }
      }
      return PopulatePages(begin, a) && PopulatePages(e, end);
    }
  }
  return PopulatePages(begin, end);
}

// Whether the page at `page_start` is resident: 1 yes, 0 no, -1 unknown
// (mincore failed).
int PageResident(std::uintptr_t page_start) {
  unsigned char resident = 0;
  if (::mincore(reinterpret_cast<void*>(page_start), PageSize(), &resident) !=
      0) {
    return -1;
  }
  return resident & 1;
}

// A buffer this big or bigger, outside the main arena's heap (the brk
// area), is a mapping of its own under glibc's malloc: a thread's arena
// grows by heaps of at most 64 MiB (HEAP_MAX_SIZE on 64-bit), each with
// its header, so no chunk this big fits in one. Advice given to its pages
// goes away with it (munmap); advice given to a piece of an arena would
// outlive the buffer there (a smaller buffer may be carved from one, past
// a raised mmap threshold or from memory trimmed before). Such a buffer,
// never written, is populated by two threads (PopulateFresh).
constexpr std::uintptr_t kOwnMappingBytes = std::uintptr_t{64} << 20;

// Whether a page fault in a range advised MADV_HUGEPAGE takes a huge page,
// compacting memory for it if need be: THP "always" or "madvise", and
// defrag "always", "madvise" or "defer+madvise". (Populate's MADV_COLLAPSE
// follows rules of its own; where it fails, the pages are populated as
// they are.)
bool FaultsTakeHugePages() {
  static const bool yes = [] {
    const auto selected = [](const char* file) {
      std::FILE* f = std::fopen(file, "re");
      if (f == nullptr) return std::string();
      char line[128] = {};
      const bool read = std::fgets(line, sizeof line, f) != nullptr;
      std::fclose(f);
      if (!read) return std::string();
      const char* open = std::strchr(line, '[');
      const char* close = open != nullptr ? std::strchr(open, ']') : nullptr;
      return close != nullptr ? std::string(open + 1, close) : std::string();
    };
    const std::string enabled =
        selected("/sys/kernel/mm/transparent_hugepage/enabled");
    const std::string defrag =
        selected("/sys/kernel/mm/transparent_hugepage/defrag");
    return (enabled == "always" || enabled == "madvise") &&
           (defrag == "always" || defrag == "madvise" ||
            defrag == "defer+madvise");
  }();
  return yes;
}

// Whether [p, p + bytes) lies in the main arena's heap: below the program
// break, above the program's end.
bool InBrkHeap(std::uintptr_t p, std::size_t bytes) {
  const auto brk = reinterpret_cast<std::uintptr_t>(::sbrk(0));
  return p + bytes > reinterpret_cast<std::uintptr_t>(&::end) && p < brk;
}

// Populate for [begin, end) whose whole huge pages [a, e) were never
// written, in a buffer that is a mapping of its own: they are
// advised as huge pages (MADV_HUGEPAGE), so that populating takes one
// 2 MiB page at a time, and populated in two halves on two threads. Where
// memory the guest gave back must be mapped again, that mapping is most of
// the cost, and it runs on both cores at once: 256 MiB after 5 s idle took
// 262-263 ms in halves against 443-502 ms on one thread collapsing
// (`scale_probe populate-cost 256 3 5`, two runs; MADV_COLLAPSE,
// Populate's way to huge pages, holds the address space's lock for
// writing: two threads collapsing take as long as one; bench/JOURNAL.md,
// "A big fresh buffer populated on both cores"). A huge page that has a
// page table after all is populated page by page, still correctly.
bool PopulateFresh(std::uintptr_t begin, std::uintptr_t a, std::uintptr_t e,
                   std::uintptr_t end) {
  (void)::madvise(reinterpret_cast<void*>(a), e - a, MADV_HUGEPAGE);
  const std::uintptr_t mid = a + ((e - a) / 2 & ~(HugePageSize() - 1));
  bool upper = false;
  std::thread helper;
  try {
    helper = std::thread([&upper, mid, e] { upper = PopulatePages(mid, e); });
  } catch (const std::exception&) {  // no thread (system_error, bad_alloc)
    upper = PopulatePages(mid, e);
  }
  const bool lower =
      PopulatePages(begin, a) && PopulatePages(a, mid) && PopulatePages(e, end);
  if (helper.joinable()) helper.join();
  return lower && upper;
}

// MemAvailable of /proc/meminfo in bytes; 0 when unknown.
std::size_t AvailableBytes() {
  std::FILE* f = std::fopen("/proc/meminfo", "re");
  if (f == nullptr) return 0;
  char line[128];
  unsigned long long kib = 0;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::sscanf(line, "MemAvailable: %llu kB", &kib) == 1) break;
  }
  std::fclose(f);
  return static_cast<std::size_t>(kib) << 10;
}

// What this process's memory cgroups (v2) still let it charge: the least
// of memory.max less memory.current over its cgroup and every parent
// (a systemd slice's MemoryMax= is a parent's); SIZE_MAX when none has a
// limit or none can be read (cgroup v1, no /sys/fs/cgroup).
std::size_t CgroupRoomBytes() {
  std::FILE* f = std::fopen("/proc/self/cgroup", "re");
  if (f == nullptr) return SIZE_MAX;
  char line[4096];
  std::string dir;
  bool found = false;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::strncmp(line, "0::", 3) == 0) {
      dir = line + 3;
      while (!dir.empty() && dir.back() == '\n') dir.pop_back();
      found = true;
      break;
    }
  }
  std::fclose(f);
  if (!found) return SIZE_MAX;
  const auto read_value = [](const std::string& d, const char* name,
                             unsigned long long* v) {
    std::FILE* g =
        std::fopen(("/sys/fs/cgroup" + d + "/" + name).c_str(), "re");
    if (g == nullptr) return false;
    const bool ok = std::fscanf(g, "%llu", v) == 1;  // "max": no number
    std::fclose(g);
    return ok;
  };
  std::size_t room = SIZE_MAX;
  while (!dir.empty() && dir != "/") {
    unsigned long long max = 0;
    unsigned long long current = 0;
    if (read_value(dir, "memory.max", &max) &&
        read_value(dir, "memory.current", &current)) {
      room =
          std::min(room, max > current ? static_cast<std::size_t>(max - current)
                                       : std::size_t{0});
    }
    dir.resize(dir.rfind('/'));
  }
  return room;
}

// Writes one byte of each page of [begin, end), a range mapped and not
// yet written: each first write takes its page (a huge page on the first
// write of each, in a range advised so). Where the kernel has per-VMA
// locks (Linux 6.4, CONFIG_PER_VMA_LOCK), such a page fault takes only the
// lock of the mapping it falls in (but for the first fault of a mapping,
// which falls back to the address space's lock), where
// MADV_POPULATE_WRITE takes the address space's lock for reading: it would
// wait for, and hold off, a MADV_COLLAPSE of another thread, which holds
// that lock for writing while it fills each huge page.
void TouchPages(std::uintptr_t begin, std::uintptr_t end) {
  for (std::uintptr_t p = begin; p < end; p += PageSize()) {
    *reinterpret_cast<volatile char*>(p) = 0;
  }
}

}  // namespace

// A warm populates this much at a time (one huge page on x86-64), and
// checks between steps whether it should stop.
constexpr std::size_t kWarmStep = std::size_t{2} << 20;

// The warm's thread: maps `bytes`, populates them kWarmStep at a time
// until done or stopped (at least one step, unless paused first or the
// kernel cannot), then unmaps what it still holds, once the burst it
// holds it for (Stream) is done with it (a page unmapped early would only
// be taken again by its next step; GiveBack hands them over one step at a
// time, from the first).
void MemoryWarmer::Run(std::size_t bytes) {
  (void)::pthread_setname_np(::pthread_self(), "sm-warm");
  void* m = ::mmap(nullptr, bytes + kWarmStep, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) {
    // Stream() may be waiting for a first step that will not come.
    {
      std::lock_guard<std::mutex> g(give_mu_);
      loop_over_ = true;
    }
    step_cv_.notify_all();
    return;
  }
  const auto a =
      (reinterpret_cast<std::uintptr_t>(m) + kWarmStep - 1) & ~(kWarmStep - 1);
  if (const std::uintptr_t huge = HugePageSize();
      huge != 0 && kWarmStep % huge == 0 && FaultsTakeHugePages()) {
    (void)::madvise(reinterpret_cast<void*>(a), bytes, MADV_HUGEPAGE);
  }
  {
    std::lock_guard<std::mutex> g(give_mu_);
    steps_ = a;
  }
  std::size_t off = 0;
  do {
    // Paused while the burst arrives (RequestPause), holding what it has,
    // until the burst says what it needs (Stream), for at most kKeptWarm.
    if (pause_.load() && !stream_.load()) {
      std::unique_lock<std::mutex> g(give_mu_);
      if (!step_cv_.wait_for(g, kKeptWarm, [this] {
            return stream_.load() || stop_.load();
          })) {
        break;
      }
      if (off >= limit_.load() || stop_.load()) break;
    }
    const std::uintptr_t step = a + off;
    if (stream_.load(std::memory_order_relaxed)) {
      TouchPages(step, step + kWarmStep);
    } else if (!PopulatePages(step, step + kWarmStep)) {
      break;
    }
    off += kWarmStep;
    warmed_.store(off);  // published after the step is resident
    if (off == kWarmStep) {
      // Stream() may be waiting for the first step (the empty section
      // orders this notice after its check of warmed_).
      { std::lock_guard<std::mutex> g(give_mu_); }
      step_cv_.notify_all();
    }
  } while (off < bytes && off < limit_.load(std::memory_order_relaxed) &&
           !stop_.load(std::memory_order_relaxed));
  std::unique_lock<std::mutex> g(give_mu_);
  // Stream() may be waiting for a first step that will not come.
  loop_over_ = true;
  step_cv_.notify_all();
  // What it populated past the burst's need (a warm further ahead than the
  // burst takes) goes back to the kernel's free lists at once, for the
  // burst's other allocations to take; GiveBack stops short of it.
  if (const std::size_t need = limit_.load(); need < off) {
    const std::size_t from = std::max(need, given_);
    g.unlock();
    (void)::madvise(reinterpret_cast<void*>(a + from), off - from,
                    MADV_DONTNEED);
    g.lock();
  }
  // For a burst that has come (Stream()), what is not given back yet is
  // held until the burst is done taking it (RequestStop(), Stop()); a warm
  // that populated nothing has nothing to hold.
  step_cv_.wait(
      g, [this, off] { return off == 0 || !stream_.load() || stop_.load(); });
  steps_ = 0;
  ::munmap(m, bytes + kWarmStep);
}

void MemoryWarmer::RequestStop() {
  stop_.store(true);
  { std::lock_guard<std::mutex> g(give_mu_); }  // after the warm's check
  step_cv_.notify_all();
}

void MemoryWarmer::RequestStopUnlessStreamed() {
  {
    // stream_ is set under give_mu_ (Stream()).
    std::lock_guard<std::mutex> g(give_mu_);
    if (stream_.load()) return;
    stop_.store(true);
  }
  step_cv_.notify_all();
}

bool PopulateForWrite(void* p, std::size_t bytes) {
  // Only whole pages inside the buffer: a page it shares with its
  // neighbours is theirs to touch.
  const std::uintptr_t page = PageSize();
  const auto b = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t begin = (b + page - 1) & ~(page - 1);
  const std::uintptr_t end = (b + bytes) & ~(page - 1);
  // A buffer that is a mapping of its own, whose first whole huge page was
  // never written: just mapped.
  if (const std::uintptr_t huge = HugePageSize();
      huge != 0 && bytes >= kOwnMappingBytes && FaultsTakeHugePages() &&
      !InBrkHeap(b, bytes)) {
    const std::uintptr_t a = (begin + huge - 1) & ~(huge - 1);
    const std::uintptr_t e = end & ~(huge - 1);
    if (a < e && PageResident(a) == 0) return PopulateFresh(begin, a, e, end);
  }
  return Populate(begin, end);
}

std::size_t PopulateIfFresh(void* p, std::size_t bytes) {
  if (bytes < HeapReserve::kMinBytes) return 0;
  const std::uintptr_t page = PageSize();
  const auto b = reinterpret_cast<std::uintptr_t>(p);
  switch (PageResident((b + page - 1) & ~(page - 1))) {
    case 1:
      return bytes;
    case 0:
      return PopulateForWrite(p, bytes) ? bytes : 0;
    default:
      return 0;
  }
}

void AdviseHugePages(void* p, std::size_t bytes) {
  const std::uintptr_t huge = HugePageSize();
  if (huge == 0 || bytes < kAdviseHugeBytes) return;
  const auto b = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t begin = (b + huge - 1) & ~(huge - 1);
  const std::uintptr_t end = (b + bytes) & ~(huge - 1);
  if (end <= begin) return;
  // Carved from a reserve (or any memory already written): its pages are
  // there, and the advice would only split the arena's mapping.
  if (PageResident(begin) != 0) return;
  (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

HeapReserve::HeapReserve(std::size_t bytes, MemoryWarmer* donor) {
#if LIBSHARE_RESERVE
  if (bytes < kMinBytes) return;
  const std::size_t count = std::min(bytes, kMaxBytes) / kChunk;
  std::vector<void*> chunks;
  try {
    chunks.reserve(count);
  } catch (const std::bad_alloc&) {
    return;
  }
  while (chunks.size() < count) {
    void* p = std::malloc(kChunk);
    if (p == nullptr) break;
    chunks.push_back(p);
  }
  // Chunks that follow each other in memory (taken from the arena's top,
  // they all do, a malloc header apart) are made resident as one run, so
  // that the whole huge pages inside it can become huge pages. (malloc
  // itself has written each chunk's header by then: one fault per chunk.)
  bool ok = true;
  std::uintptr_t run_begin = 0;
  std::uintptr_t run_end = 0;
  for (void* p : chunks) {
    const auto b = reinterpret_cast<std::uintptr_t>(p);
    if (run_end != 0 && b >= run_end && b - run_end <= kAdjacent) {
      run_end = b + kChunk;
      continue;
    }
    if (run_end != 0 && !(ok = Populate(run_begin, run_end, donor))) break;
    run_begin = b;
    run_end = b + kChunk;
  }
  if (ok && run_end != 0) ok = Populate(run_begin, run_end, donor);
  if (!ok || chunks.empty()) {
    for (void* p : chunks) std::free(p);
    return;
  }
  last_ = chunks.back();
  chunks.pop_back();
  for (void* p : chunks) std::free(p);
  populated_ = (chunks.size() + 1) * kChunk;
#else
  (void)bytes;
  (void)donor;
#endif
}

HeapReserve::~HeapReserve() { std::free(last_); }

std::size_t MemoryWarmer::Start(std::size_t bytes) {
  bytes = std::min(
              {bytes, kMaxBytes, AvailableBytes() / 4, CgroupRoomBytes() / 4}) &
          ~(kWarmStep - 1);
  if (bytes == 0) return 0;
  std::lock_guard<std::mutex> l(mu_);
  if (thread_.joinable()) {
    // One at a time; a warm asked to stop ends within a step (and its
    // unmapping), for the next to start.
    if (!done_.load() && !stop_.load()) return 0;
    thread_.join();  // ended, unmapped; its pages still warm for a while
  }
  stop_.store(false);
  pause_.store(false);
  stream_.store(false);
  limit_.store(SIZE_MAX);
  done_.store(false);
  warmed_.store(0);
  {
    std::lock_guard<std::mutex> g(give_mu_);
    given_ = 0;
    loop_over_ = false;
  }
  try {
    thread_ = std::thread([this, bytes] {
      Run(bytes);
      ended_ = std::chrono::steady_clock::now();  // read after done_
      done_.store(true);
    });
  } catch (const std::exception&) {  // no thread (system_error, bad_alloc)
    return 0;
  }
  return bytes;
}

bool MemoryWarmer::EndedLongAgo() const {
  return done_.load() && std::chrono::steady_clock::now() - ended_ > kKeptWarm;
}

std::size_t MemoryWarmer::Stream(std::size_t need) {
  std::lock_guard<std::mutex> l(mu_);
  if (!thread_.joinable() || stream_.load() || EndedLongAgo()) return 0;
  std::unique_lock<std::mutex> g(give_mu_);
  // Both under give_mu_: the warm reads them there once its loop is over,
  // and a paused warm waits for stream_ there. The need in whole steps
  // (the warm stops at the same step either way).
  limit_.store(need > SIZE_MAX - kWarmStep
                   ? SIZE_MAX
                   : (need + kWarmStep - 1) / kWarmStep * kWarmStep);
  stream_.store(true);
  step_cv_.notify_all();
  // At least its first step, as a warm stopped at once has (none if the
  // kernel could not populate it, or a pause ended it first).
  step_cv_.wait(g, [this] { return warmed_.load() != 0 || loop_over_; });
  return warmed_.load();
}

std::size_t MemoryWarmer::GiveBack(std::size_t bytes) {
  std::lock_guard<std::mutex> g(give_mu_);
  std::size_t given = 0;
  // Only while the warm's mapping is there (steps_, under give_mu_): its
  // range may be someone else's once it is unmapped.
  while (steps_ != 0 && given < bytes &&
         given_ < std::min(warmed_.load(), limit_.load())) {
    (void)::madvise(reinterpret_cast<void*>(steps_ + given_), kWarmStep,
                    MADV_DONTNEED);
    given_ += kWarmStep;
    given += kWarmStep;
  }
  return given;
}

bool MemoryWarmer::Holds() {
  std::lock_guard<std::mutex> g(give_mu_);
  return steps_ != 0;
}

std::size_t MemoryWarmer::given() {
  std::lock_guard<std::mutex> g(give_mu_);
  return given_;
}

std::size_t MemoryWarmer::Stop() {
  std::lock_guard<std::mutex> l(mu_);
  if (!thread_.joinable()) return 0;
  RequestStop();
  // A warm that ended by itself long ago helps no one now: the guest has
  // given its pages back again.
  const bool ended_long_ago = EndedLongAgo();
  thread_.join();
  const std::size_t warmed = warmed_.exchange(0);
  return ended_long_ago ? 0 : warmed;
}

}  // namespace libshare

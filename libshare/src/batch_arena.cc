#include "libshare/batch_arena.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older headers lack it
#endif

namespace libshare {
namespace {

// A transparent huge page on x86-64. The region starts on this boundary,
// so that each whole 2 MiB of it can be a huge page: on this project's VMs
// 16 MiB took 2 ms to map, advise and populate as huge pages, against
// 8-9 ms populated in 4 KiB pages (MAP_POPULATE) or faulted in as written
// (bench/JOURNAL.md, "A batch arena instead of the heap reserve").
constexpr std::size_t kHugeBytes = std::size_t{2} << 20;

}  // namespace

BatchArena::Region BatchArena::Map(std::size_t bytes) {
  if (bytes < kMinMappedBytes || bytes > SIZE_MAX / 2) return {};
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t size = (bytes + page - 1) & ~(page - 1);
  // One huge page more, to start on its boundary; the ends around the
  // aligned region are unmapped at once.
  void* m = ::mmap(nullptr, size + kHugeBytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return {};
  const auto base = reinterpret_cast<std::uintptr_t>(m);
  const std::uintptr_t start = (base + kHugeBytes - 1) & ~(kHugeBytes - 1);
  if (start > base) ::munmap(m, start - base);
  if (const std::uintptr_t end = base + size + kHugeBytes; end > start + size) {
    ::munmap(reinterpret_cast<void*>(start + size), end - (start + size));
  }
  void* region = reinterpret_cast<void*>(start);
  // Both best effort: without transparent huge pages the region is made
  // resident in 4 KiB pages, and a kernel older than 5.14 (or short of
  // memory) leaves its pages to fault in as they are used.
  (void)::madvise(region, size, MADV_HUGEPAGE);
  (void)::madvise(region, size, MADV_POPULATE_WRITE);
  return {region, size};
}

BatchArena::BatchArena(std::size_t bytes) : BatchArena(Map(bytes)) {}

BatchArena::BatchArena(Region r)
    : region_(r.start),
      size_(r.size),
      resource_(r.start, r.size, std::pmr::new_delete_resource()) {}

BatchArena::~BatchArena() {
  resource_.release();  // the heap blocks; none of it is in the region
  if (region_ != nullptr) ::munmap(region_, size_);
}

}  // namespace libshare

#include "libshare/batch_arena.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace libshare {

BatchArena::Region BatchArena::Map(std::size_t bytes) {
  if (bytes < kMinMappedBytes || bytes > SIZE_MAX / 2) return {};
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t size = (bytes + page - 1) & ~(page - 1);
  // In 4 KiB pages, not advised as huge pages: on this project's VMs a
  // region whose memory had gone back to the host (3 s idle) took 4-8x
  // longer to make resident as huge pages than page by page, though 1.5-2x
  // less once the memory was warm (bench/JOURNAL.md, "A batch arena
  // instead of the heap reserve"); a daemon is mostly idle between
  // batches. MAP_POPULATE is best effort: pages it could not populate
  // fault in as they are used.
  void* m = ::mmap(nullptr, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (m == MAP_FAILED) return {};
  return {m, size};
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

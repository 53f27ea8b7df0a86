// Memory for one batch's transient data: one region mapped and made
// resident in one call, handed out by a std::pmr::monotonic_buffer_resource
// and given back whole when the arena is destroyed.
//
// A batch's working structures (the overlay of catalog_overlay.h: its path
// map and its maps' nodes) are allocated in a burst, never freed one by one,
// and dropped together once the batch is validated. Taken from the heap,
// each of their pages is a page fault on first touch; from the arena they
// are mapped and made resident in one call (mmap with MAP_POPULATE), and
// unmapped in one call at the end, so nothing of them stays in the heap
// between the table's shares.
//
// A region under kMinMappedBytes is not mapped: a small batch (one
// add-share) takes its few pages from the heap as before, without a
// mapping made and unmapped for it.
//
// Allocations beyond the region, or all of them when the region could not
// be mapped, come from the heap (std::pmr::new_delete_resource), as a
// monotonic_buffer_resource does past its buffer; they too are released
// when the arena is destroyed. Not thread-safe (as
// monotonic_buffer_resource): one thread allocates from it.
//
//   BatchArena arena(n * sizeof(Entry));
//   std::pmr::vector<Entry> entries(arena.resource());
//   entries.reserve(n);
//   ...
//   // ~BatchArena: the region is unmapped, the heap blocks freed.
#ifndef LIBSHARE_BATCH_ARENA_H_
#define LIBSHARE_BATCH_ARENA_H_

#include <cstddef>
#include <memory_resource>

namespace libshare {

class BatchArena {
 public:
  // Below this, nothing is mapped.
  static constexpr std::size_t kMinMappedBytes = std::size_t{256} << 10;

  // Maps `bytes` (rounded up to whole pages) and makes them resident. Mapping
  // failures are not errors: the arena then allocates from the heap (mapped()
  // is 0).
  explicit BatchArena(std::size_t bytes);
  ~BatchArena();
  BatchArena(const BatchArena&) = delete;
  BatchArena& operator=(const BatchArena&) = delete;

  std::pmr::memory_resource* resource() { return &resource_; }
  // Bytes of the region (0: none mapped).
  std::size_t mapped() const { return size_; }
  // The region's first byte (nullptr: none mapped).
  const void* region() const { return region_; }

 private:
  struct Region {
    void* start = nullptr;
    std::size_t size = 0;
  };
  static Region Map(std::size_t bytes);
  explicit BatchArena(Region r);

  void* region_;
  std::size_t size_;
  std::pmr::monotonic_buffer_resource resource_;
};

}  // namespace libshare

#endif  // LIBSHARE_BATCH_ARENA_H_

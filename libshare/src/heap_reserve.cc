#include "libshare/heap_reserve.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older headers lack it
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

namespace libshare {
namespace {

// Below glibc's smallest mmap threshold (128 KiB), so each chunk comes from
// the arena, not from a mapping of its own that free() would unmap.
constexpr std::size_t kChunk = std::size_t{120} << 10;

std::uintptr_t PageSize() {
  static const std::uintptr_t page =
      static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  return page;
}

// Populates the pages that hold [begin, end).
bool Populate(std::uintptr_t begin, std::uintptr_t end) {
  const std::uintptr_t page = PageSize();
  begin &= ~(page - 1);
  end = (end + page - 1) & ~(page - 1);
  if (end <= begin) return true;
  return ::madvise(reinterpret_cast<void*>(begin), end - begin,
                   MADV_POPULATE_WRITE) == 0;
}

}  // namespace

bool PopulateForWrite(void* p, std::size_t bytes) {
  // Only whole pages inside the buffer: a page it shares with its
  // neighbours is theirs to touch.
  const std::uintptr_t page = PageSize();
  const auto b = reinterpret_cast<std::uintptr_t>(p);
  return Populate((b + page - 1) & ~(page - 1), (b + bytes) & ~(page - 1));
}

HeapReserve::HeapReserve(std::size_t bytes) {
#if LIBSHARE_RESERVE
  if (bytes < kMinBytes) return;
  const std::size_t count = std::min(bytes, kMaxBytes) / kChunk;
  std::vector<void*> chunks;
  try {
    chunks.reserve(count);
  } catch (const std::bad_alloc&) {
    return;
  }
  // Each chunk is populated as soon as it is taken. (malloc itself still
  // takes one fault per chunk: it writes the header of the free space after
  // the chunk, on a page the arena has just grown into.)
  bool ok = true;
  while (ok && chunks.size() < count) {
    void* p = std::malloc(kChunk);
    if (p == nullptr) break;
    chunks.push_back(p);
    const auto b = reinterpret_cast<std::uintptr_t>(p);
    ok = Populate(b, b + kChunk);
  }
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
#endif
}

HeapReserve::~HeapReserve() { std::free(last_); }

}  // namespace libshare

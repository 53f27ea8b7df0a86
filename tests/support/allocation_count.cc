#include "allocation_count.h"

#include <cstdlib>
#include <new>

namespace {
thread_local bool g_counting = false;
thread_local int g_allocations = 0;
}  // namespace

namespace sharemgr_testing {

void StartCountingAllocations() {
  g_allocations = 0;
  g_counting = true;
}

int StopCountingAllocations() {
  g_counting = false;
  return g_allocations;
}

}  // namespace sharemgr_testing

// GCC sees the malloc/free pairing through inlining and warns; it is
// intended.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  if (g_counting) ++g_allocations;
  return std::malloc(n == 0 ? 1 : n);
}
void* operator new(std::size_t n) {
  if (void* p = operator new(n, std::nothrow)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return operator new(n, std::nothrow);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}

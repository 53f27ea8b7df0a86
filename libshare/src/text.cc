#include "libshare/text.h"

#include <cstdint>
#include <cstring>
#include <new>
#include <ostream>
#include <stdexcept>

namespace libshare {

uintptr_t Text::Make(std::string_view s) {
  if (s.empty()) return 0;
  if (s.size() <= kInline) {
    // Tag byte (length << 1 | 1), the bytes, zeros after them: the last
    // byte is always a NUL.
    uintptr_t word = (uintptr_t{s.size()} << 1) | 1;
    std::memcpy(reinterpret_cast<char*>(&word) + 1, s.data(), s.size());
    return word;
  }
  if (s.size() > UINT32_MAX) throw std::length_error("libshare::Text");
  // operator new's blocks are aligned to at least 8: the low bit is free.
  void* p = ::operator new(offsetof(Block, bytes) + s.size() + 1);
  Block* b = static_cast<Block*>(p);
  b->size = static_cast<uint32_t>(s.size());
  std::memcpy(b->bytes, s.data(), s.size());
  b->bytes[s.size()] = '\0';
  return reinterpret_cast<uintptr_t>(p);
}

std::ostream& operator<<(std::ostream& os, const Text& t) {
  return os << t.view();
}

}  // namespace libshare

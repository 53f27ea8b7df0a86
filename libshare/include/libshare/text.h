// Text: a string in one machine word, for the text fields of a batch
// operation (batch.h). A batch of 1,000,000 add-shares holds six of them
// per operation, most empty: as std::string (32 bytes each) an operation
// took 208 bytes and the decoded operations 198 MiB, as Text 64 bytes and
// 61 MiB (their long paths beside, the same either way). Up to 6 bytes
// are kept in the word itself; longer texts in one heap block (their
// length and bytes). Any byte may appear, NUL included.
//
// It reads as a std::string_view (an implicit conversion; data() is
// NUL-terminated, so c_str() works), compares with strings, string views
// and C strings, and is assigned from any of them. What it does not do:
// change in place (append, resize): build a std::string and assign it.
// Plain value; not synchronized.
#ifndef LIBSHARE_TEXT_H_
#define LIBSHARE_TEXT_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iosfwd>
#include <string>
#include <string_view>

namespace libshare {

class Text {
 public:
  Text() noexcept = default;
  Text(std::string_view s) { Set(s); }    // NOLINT: implicit by design
  Text(const std::string& s) { Set(s); }  // NOLINT
  Text(const char* s) { Set(std::string_view(s)); }  // NOLINT
  Text(const Text& o) { Set(o.view()); }
  Text(Text&& o) noexcept : rep_(o.rep_) { o.rep_ = 0; }
  ~Text() { Free(); }

  Text& operator=(const Text& o) {
    if (this != &o) Assign(o.view());
    return *this;
  }
  Text& operator=(Text&& o) noexcept {
    if (this != &o) {
      Free();
      rep_ = o.rep_;
      o.rep_ = 0;
    }
    return *this;
  }
  Text& operator=(std::string_view s) {
    Assign(s);
    return *this;
  }
  Text& operator=(const std::string& s) { return *this = std::string_view(s); }
  Text& operator=(const char* s) { return *this = std::string_view(s); }

  const char* data() const noexcept {
    if (rep_ == 0) return kEmpty;
    if (rep_ & 1) return reinterpret_cast<const char*>(&rep_) + 1;
    return reinterpret_cast<const Block*>(rep_)->bytes;
  }
  const char* c_str() const noexcept { return data(); }
  std::size_t size() const noexcept {
    if (rep_ == 0) return 0;
    if (rep_ & 1) return (rep_ >> 1) & 7;
    return reinterpret_cast<const Block*>(rep_)->size;
  }
  std::size_t length() const noexcept { return size(); }
  bool empty() const noexcept { return rep_ == 0; }
  std::string_view view() const noexcept { return {data(), size()}; }
  operator std::string_view() const noexcept { return view(); }  // NOLINT
  std::string str() const { return std::string(view()); }
  const char* begin() const noexcept { return data(); }
  const char* end() const noexcept { return data() + size(); }
  char operator[](std::size_t i) const noexcept { return data()[i]; }
  void swap(Text& o) noexcept {
    const uintptr_t r = rep_;
    rep_ = o.rep_;
    o.rep_ = r;
  }
  void clear() noexcept {
    Free();
    rep_ = 0;
  }

  // Comparisons with each kind of string, either way round (C++17 does not
  // turn a == b around by itself).
  friend bool operator==(const Text& a, const Text& b) noexcept {
    return a.view() == b.view();
  }
  friend bool operator!=(const Text& a, const Text& b) noexcept {
    return a.view() != b.view();
  }
  friend bool operator<(const Text& a, const Text& b) noexcept {
    return a.view() < b.view();
  }
#define LIBSHARE_TEXT_COMPARE(T)                        \
  friend bool operator==(const Text& a, T b) noexcept { \
    return a.view() == std::string_view(b);             \
  }                                                     \
  friend bool operator==(T b, const Text& a) noexcept { \
    return a.view() == std::string_view(b);             \
  }                                                     \
  friend bool operator!=(const Text& a, T b) noexcept { \
    return a.view() != std::string_view(b);             \
  }                                                     \
  friend bool operator!=(T b, const Text& a) noexcept { \
    return a.view() != std::string_view(b);             \
  }
  LIBSHARE_TEXT_COMPARE(std::string_view)
  LIBSHARE_TEXT_COMPARE(const std::string&)
  LIBSHARE_TEXT_COMPARE(const char*)
#undef LIBSHARE_TEXT_COMPARE

 private:
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
                "Text keeps short texts in the bytes after its tag byte");
  static_assert(sizeof(uintptr_t) == 8, "Text is one 64-bit word");
  struct Block {
    uint32_t size;
    char bytes[1];  // size of them, then a NUL
  };
  static constexpr std::size_t kInline = 6;  // and a NUL in the last byte
  static constexpr const char* kEmpty = "";

  void Free() noexcept {
    if (rep_ != 0 && (rep_ & 1) == 0) {
      ::operator delete(reinterpret_cast<void*>(rep_));
    }
  }
  // The word for `s`; allocates (and may throw) for a long one.
  static uintptr_t Make(std::string_view s);
  void Set(std::string_view s) { rep_ = Make(s); }
  // Strong guarantee: the new word is made before the old one is freed
  // (`s` may view this very text).
  void Assign(std::string_view s) {
    const uintptr_t fresh = Make(s);
    Free();
    rep_ = fresh;
  }

  uintptr_t rep_ = 0;  // 0: empty; low bit set: inline; else a Block*
};

std::ostream& operator<<(std::ostream& os, const Text& t);

}  // namespace libshare

#endif  // LIBSHARE_TEXT_H_

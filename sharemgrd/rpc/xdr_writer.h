// XdrWriter: appends XDR (RFC 4506) items to a byte string. Used for the
// RPC reply header and the MOUNT replies, whose shapes are simple enough
// that a generated encoder would only add allocations (EXPORT of 15,000
// shares is encoded into one string, once per table generation).
// Not synchronized; a plain value.
#ifndef SHAREMGRD_XDR_WRITER_H_
#define SHAREMGRD_XDR_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sharemgrd {

class XdrWriter {
 public:
  explicit XdrWriter(std::string* out) : out_(out) {}

  void U32(uint32_t v) {
    char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                 static_cast<char>(v >> 8), static_cast<char>(v)};
    out_->append(b, 4);
  }
  void U64(uint64_t v) {
    U32(static_cast<uint32_t>(v >> 32));
    U32(static_cast<uint32_t>(v));
  }
  void Bool(bool v) { U32(v ? 1 : 0); }
  // Fixed-length opaque: the bytes and their padding.
  void FixedOpaque(std::string_view bytes) {
    out_->append(bytes.data(), bytes.size());
    out_->append(Pad(bytes.size()), '\0');
  }
  // Variable-length opaque or string: length, bytes, padding.
  void Opaque(std::string_view bytes) {
    U32(static_cast<uint32_t>(bytes.size()));
    FixedOpaque(bytes);
  }
  void String(std::string_view s) { Opaque(s); }
  void Raw(std::string_view bytes) { out_->append(bytes.data(), bytes.size()); }

  // Bytes an Opaque()/String() of n bytes takes.
  static std::size_t OpaqueSize(std::size_t n) { return 4 + n + Pad(n); }
  static std::size_t Pad(std::size_t n) { return (4 - (n & 3)) & 3; }

 private:
  std::string* out_;
};

}  // namespace sharemgrd

#endif  // SHAREMGRD_XDR_WRITER_H_

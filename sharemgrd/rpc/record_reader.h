// RecordReader: splits a byte stream into ONC RPC records (RFC 5531,
// section 11: 4-byte marks, high bit = last fragment, 31-bit length).
//
// Bytes arrive in arbitrary pieces; Feed() keeps what is incomplete. A
// record larger than max_record makes the stream malformed: the caller
// closes the connection, so a hostile client cannot make us buffer more.
// Not thread-safe: one per connection, used by one reader at a time.
#ifndef SHAREMGRD_RECORD_READER_H_
#define SHAREMGRD_RECORD_READER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sharemgrd {

class RecordReader {
 public:
  explicit RecordReader(std::size_t max_record) : max_record_(max_record) {}

  // Consumes n bytes, appending every record completed by them to
  // `records`. Returns false if the stream is malformed (a record over the
  // limit); the reader is then unusable.
  bool Feed(const char* data, std::size_t n, std::vector<std::string>* records);

  // True while part of a record (or of a mark) is buffered.
  bool partial() const {
    return header_len_ > 0 || in_fragment_ || !record_.empty();
  }
  std::size_t buffered() const { return record_.size(); }
  // Bytes of memory held for the record being received.
  std::size_t held() const { return record_.capacity(); }
  std::size_t max_record() const { return max_record_; }

 private:
  std::size_t max_record_;
  unsigned char header_[4] = {};
  int header_len_ = 0;
  bool in_fragment_ = false;
  bool last_ = false;
  uint32_t remaining_ = 0;  // bytes left in the current fragment
  std::string record_;
  bool broken_ = false;
};

}  // namespace sharemgrd

#endif  // SHAREMGRD_RECORD_READER_H_

#include "record_reader.h"

#include <algorithm>

namespace sharemgrd {
namespace {

// On a connection allowed calls bigger than this (root and the admin
// group over the management socket), a fragment of up to this size gets
// its whole buffer when its first bytes arrive: one buffer made, not five
// grown in turn (a 15,000-add batch is a 0.96 MB call; its transfer took
// 8-18 ms with the buffer doubled from 64 KiB, 4-9 ms with it whole), and a
// bigger one's buffer starts at this size. Other connections (readers,
// MOUNT clients) get buffers that grow only with what arrives: they cannot
// make the daemon hold a megabyte for 5 bytes.
constexpr std::size_t kWholeBytes = std::size_t{1} << 20;

}  // namespace

bool RecordReader::Feed(const char* data, std::size_t n,
                        std::vector<std::string>* records) {
  if (broken_) return false;
  while (n > 0) {
    if (!in_fragment_) {
      while (header_len_ < 4 && n > 0) {
        header_[header_len_++] = static_cast<unsigned char>(*data++);
        --n;
      }
      if (header_len_ < 4) break;
      header_len_ = 0;
      uint32_t mark = (uint32_t{header_[0]} << 24) |
                      (uint32_t{header_[1]} << 16) |
                      (uint32_t{header_[2]} << 8) | uint32_t{header_[3]};
      last_ = (mark & 0x80000000u) != 0;
      remaining_ = mark & 0x7fffffffu;
      if (record_.size() + remaining_ > max_record_) {
        broken_ = true;
        record_.clear();
        return false;
      }
      in_fragment_ = true;
    }
    std::size_t take = std::min<std::size_t>(n, remaining_);
    // Grows with what arrives, not with what the mark announces: a client
    // announcing a big record and sending little holds at most twice what
    // it sent (or kWholeBytes, above). The new buffer is made exactly that
    // big (std::string::reserve may double it), so held() is what the
    // connection costs, and what the listener's input budget counts. A
    // fragment that is not the last may be followed by more: its buffer
    // doubles past its end, so that many small fragments cost copies in
    // proportion to the record, not to its square.
    if (std::size_t need = record_.size() + take; need > record_.capacity()) {
      const std::size_t whole = max_record_ > kWholeBytes ? kWholeBytes : 0;
      const std::size_t end = last_ ? record_.size() + remaining_ : max_record_;
      std::string bigger;
      bigger.reserve(std::min<std::size_t>(
          end, std::max({need, record_.capacity() * 2, whole})));
      bigger.append(record_);
      record_.swap(bigger);
    }
    record_.append(data, take);
    data += take;
    n -= take;
    remaining_ -= static_cast<uint32_t>(take);
    if (remaining_ == 0) {
      in_fragment_ = false;
      if (last_) {
        records->push_back(std::move(record_));
        record_.clear();
      }
    }
  }
  return true;
}

}  // namespace sharemgrd

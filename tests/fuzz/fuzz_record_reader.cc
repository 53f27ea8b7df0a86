// Fuzz target: sharemgrd's record-marking reader (RecordReader, RFC 5531
// section 11) fed a stream in arbitrary pieces.
//
// Input: 2 bytes max_record (0-65535), 1 byte n (0-15), n bytes of piece
// sizes (used in turn; 0 feeds an empty piece), then the stream.
// Properties: the records and the malformed verdict are those of a
// reference reader that sees the whole stream at once (a record is
// refused as soon as a mark would take it over max_record); no record is
// longer than max_record; once Feed() returns false it keeps doing so;
// partial() tells whether the stream stopped inside a record or mark.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_check.h"
#include "record_reader.h"

namespace {

struct Reference {
  std::vector<std::string> records;
  bool broken = false;
  bool partial = false;
};

Reference ReadWhole(const uint8_t* p, size_t n, size_t max_record) {
  Reference r;
  std::string record;
  size_t i = 0;
  while (i < n) {
    if (n - i < 4) {
      r.partial = true;
      return r;
    }
    const uint32_t mark = (uint32_t{p[i]} << 24) | (uint32_t{p[i + 1]} << 16) |
                          (uint32_t{p[i + 2]} << 8) | uint32_t{p[i + 3]};
    i += 4;
    const bool last = (mark & 0x80000000u) != 0;
    const size_t len = mark & 0x7fffffffu;
    if (record.size() + len > max_record) {
      r.broken = true;
      return r;
    }
    const size_t take = std::min(len, n - i);
    record.append(reinterpret_cast<const char*>(p + i), take);
    i += take;
    if (take < len) {  // inside a fragment
      r.partial = true;
      return r;
    }
    if (last) {
      r.records.push_back(std::move(record));
      record.clear();
    }
  }
  // A record opened by empty fragments has no bytes buffered yet.
  r.partial = !record.empty();
  return r;
}

std::string Count(size_t n) { return std::to_string(n); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const size_t max_record = (size_t{data[0]} << 8) | data[1];
  const size_t nsizes = data[2] % 16;
  data += 3;
  size -= 3;
  if (size < nsizes) return 0;
  std::vector<size_t> pieces(data, data + nsizes);
  data += nsizes;
  size -= nsizes;
  bool any_nonzero = false;
  for (size_t s : pieces) any_nonzero |= s != 0;
  if (!any_nonzero) pieces.push_back(size == 0 ? 1 : size);

  const Reference want = ReadWhole(data, size, max_record);

  sharemgrd::RecordReader reader(max_record);
  std::vector<std::string> got;
  bool ok = true;
  size_t pos = 0;
  for (size_t k = 0; pos < size || k == 0; ++k) {
    const size_t piece = std::min(pieces[k % pieces.size()], size - pos);
    const bool fed =
        reader.Feed(reinterpret_cast<const char*>(data + pos), piece, &got);
    FUZZ_CHECK(ok || !fed, "Feed succeeded after reporting a malformed stream");
    ok = ok && fed;
    pos += piece;
  }
  FUZZ_CHECK(ok == !want.broken, std::string("malformed verdict ") +
                                     (ok ? "no" : "yes") + ", reference says " +
                                     (want.broken ? "yes" : "no") +
                                     " (max_record " + Count(max_record) + ")");
  FUZZ_CHECK(got.size() == want.records.size(), Count(got.size()) +
                                                    " records, reference has " +
                                                    Count(want.records.size()));
  for (size_t i = 0; i < got.size(); ++i) {
    FUZZ_CHECK(got[i] == want.records[i],
               "record " + Count(i) + " differs from the reference");
    FUZZ_CHECK(got[i].size() <= max_record,
               "record " + Count(i) + " longer than max_record");
  }
  if (ok) {
    FUZZ_CHECK(reader.partial() == want.partial,
               std::string("partial() is ") +
                   (reader.partial() ? "true" : "false") + ", reference " +
                   (want.partial ? "true" : "false"));
    // What is buffered is the incomplete record's bytes, within the limit.
    FUZZ_CHECK(reader.buffered() <= max_record, "buffered over max_record");
  }
  return 0;
}

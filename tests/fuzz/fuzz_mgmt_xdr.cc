// Fuzz target: XDR decoding of the management protocol (mgmt_prot.x, the
// rpcgen routines in target `share`): the arguments of every procedure
// (what sharemgrd decodes from a client) and every result (what the
// libshare client decodes from the daemon).
//
// The first input byte picks the type, the rest is the XDR stream; each
// decode runs as the daemon runs it (xdrmem_create + XDR_DECODE, then
// xdr_free). Property: a value that decodes re-encodes, and that encoding
// decodes and re-encodes to the same bytes (a fixed point: the first
// decode may normalize, e.g. a bool of 7 reads as TRUE).
//
// The xdr_mgmt_* routines are the ones daemon and client use: their arrays
// and strings go through libshare's bounded decoders (xdr_bounded.cc), so
// a declared count or length that the remaining bytes cannot hold fails
// at once instead of allocating for it (regressions/mgmt_xdr). Property:
// a failed decode leaves no array longer than the input could describe.
#include <rpc/rpc.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "fuzz_check.h"
#include "libshare/mgmt_prot.h"

namespace {

template <typename T>
std::string Encode(bool_t (*fn)(XDR*, T*), T* value) {
  const unsigned long size =
      ::xdr_sizeof(reinterpret_cast<xdrproc_t>(fn), value);
  std::string out(size, '\0');
  XDR x;
  ::xdrmem_create(&x, out.data(), static_cast<u_int>(out.size()), XDR_ENCODE);
  const bool ok = fn(&x, value);
  FUZZ_CHECK(ok, "a decoded value does not encode");
  FUZZ_CHECK(xdr_getpos(&x) == size, "xdr_sizeof disagrees with encoding");
  xdr_destroy(&x);
  return out;
}

// Array lengths left in a decoded value (the top-level arrays of the
// argument types; others have none at the top or sit inside unions).
template <typename T>
void CheckBounded(const T&, size_t) {}
inline void CheckBounded(const mgmt_batch_args& v, size_t size) {
  FUZZ_CHECK(v.ops.ops_len <= size / 2 + 256,
             "mgmt_batch_args: failed decode kept more ops than bytes");
}
inline void CheckBounded(const mgmt_list_shares_args& v, size_t size) {
  FUZZ_CHECK(
      v.groups.groups_len <= size / 2 + 256,
      "mgmt_list_shares_args: failed decode kept more groups than bytes");
}

// Decodes data as T; on success checks the encode/decode fixed point.
template <typename T>
void Decode(const char* name, bool_t (*fn)(XDR*, T*), const uint8_t* data,
            size_t size) {
  T value;
  std::memset(&value, 0, sizeof value);
  XDR x;
  ::xdrmem_create(&x, reinterpret_cast<char*>(const_cast<uint8_t*>(data)),
                  static_cast<u_int>(size), XDR_DECODE);
  const bool ok = fn(&x, &value);
  xdr_destroy(&x);
  if (ok) {
    const std::string first = Encode(fn, &value);
    T again;
    std::memset(&again, 0, sizeof again);
    XDR y;
    ::xdrmem_create(&y, const_cast<char*>(first.data()),
                    static_cast<u_int>(first.size()), XDR_DECODE);
    const bool ok2 = fn(&y, &again);
    FUZZ_CHECK(ok2 && xdr_getpos(&y) == first.size(),
               std::string(name) + ": own encoding does not decode fully");
    xdr_destroy(&y);
    const std::string second = Encode(fn, &again);
    FUZZ_CHECK(first == second,
               std::string(name) + ": encoding is not a fixed point");
    ::xdr_free(reinterpret_cast<xdrproc_t>(fn),
               reinterpret_cast<char*>(&again));
  }
  // The decoders allocate only for what arrived: whatever they left behind
  // is at most twice the items the input could hold (4 bytes each at
  // least) or the first 256.
  if (!ok) CheckBounded(value, size);
  // A failed decode leaves a partly filled value; xdr_free must release it.
  ::xdr_free(reinterpret_cast<xdrproc_t>(fn), reinterpret_cast<char*>(&value));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t which = data[0];
  ++data;
  --size;
  if (which == 0xff) {  // after the cases below, so their seeds keep theirs
    Decode("mgmt_follow_sync_res", xdr_mgmt_follow_sync_res, data, size);
    return 0;
  }
  if (which == 0xfe) {
    Decode("mgmt_prepare_res", xdr_mgmt_prepare_res, data, size);
    return 0;
  }
  if (which == 0xfd) {
    Decode("mgmt_prepare_args", xdr_mgmt_prepare_args, data, size);
    return 0;
  }
  switch (which % 11) {
    case 0:
      Decode("mgmt_batch_args", xdr_mgmt_batch_args, data, size);
      break;
    case 1:
      Decode("mgmt_list_shares_args", xdr_mgmt_list_shares_args, data, size);
      break;
    case 2:
      Decode("mgmt_check_args", xdr_mgmt_check_args, data, size);
      break;
    case 3:
      Decode("mgmt_batch_res", xdr_mgmt_batch_res, data, size);
      break;
    case 4:
      Decode("mgmt_list_groups_res", xdr_mgmt_list_groups_res, data, size);
      break;
    case 5:
      Decode("mgmt_list_shares_res", xdr_mgmt_list_shares_res, data, size);
      break;
    case 6:
      Decode("mgmt_sharetab_res", xdr_mgmt_sharetab_res, data, size);
      break;
    case 7:
      Decode("mgmt_check_res", xdr_mgmt_check_res, data, size);
      break;
    case 8:
      Decode("mgmt_stats_res", xdr_mgmt_stats_res, data, size);
      break;
    case 9:
      Decode("mgmt_flush_res", xdr_mgmt_flush_res, data, size);
      break;
    case 10:
      Decode("mgmt_op", xdr_mgmt_op, data, size);
      break;
  }
  return 0;
}

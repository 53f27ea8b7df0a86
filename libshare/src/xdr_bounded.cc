// Array and string decoders for the management protocol (mgmt_prot.x
// redirects rpcgen's xdr_array and xdr_string calls here; see the RPC_XDR
// block there).
//
// Why: libtirpc's xdr_array callocs count * element size from the count a
// peer declares, before reading a single element, and on failure xdr_free
// walks every one of them: a 5-byte request declaring 2^29 elements cost
// 4 GiB and 14-17 s of CPU in sharemgrd (tests/fuzz/regressions/mgmt_xdr).
// xdr_string mallocs the declared length the same way. These decoders
// refuse a count that cannot fit in what is left of an in-memory stream
// (every XDR item takes at least 4 bytes), and grow their buffer only as
// elements actually arrive, so memory and time follow the bytes received
// whatever the stream. Encoding and freeing are libtirpc's.
#include <rpc/rpc.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "libshare/mgmt_prot.h"

namespace {

// Ops of an xdrmem stream, to recognize one (its x_handy is then the
// number of bytes left).
using XdrOps = decltype(XDR::x_ops);

XdrOps MemOps() {
  static const XdrOps ops = [] {
    static char byte;
    XDR x;
    ::xdrmem_create(&x, &byte, 0, XDR_DECODE);
    return x.x_ops;
  }();
  return ops;
}

// Elements allocated before any arrives; doubled as they do.
constexpr u_int kFirstCapacity = 256;
// Bytes of a string read per step.
constexpr u_int kStringChunk = 64 * 1024;

}  // namespace

extern "C" bool_t sharemgr_xdr_fits(XDR* xdrs, u_int count, u_int min_bytes) {
  if (xdrs->x_op != XDR_DECODE || xdrs->x_ops != MemOps()) return TRUE;
  return static_cast<uint64_t>(count) * min_bytes <= xdrs->x_handy;
}

extern "C" bool_t sharemgr_xdr_array(XDR* xdrs, char** addrp, u_int* sizep,
                                     u_int maxsize, u_int elsize,
                                     xdrproc_t elproc) {
  if (xdrs->x_op != XDR_DECODE || *addrp != nullptr) {
    return ::xdr_array(xdrs, addrp, sizep, maxsize, elsize, elproc);
  }
  u_int count = 0;
  if (!::xdr_u_int(xdrs, &count)) return FALSE;
  if (count > maxsize || !sharemgr_xdr_fits(xdrs, count, 4)) return FALSE;
  *sizep = 0;
  if (count == 0) return TRUE;
  u_int capacity = 0;
  char* buf = nullptr;
  for (u_int i = 0; i < count; ++i) {
    if (i == capacity) {
      u_int grown = capacity == 0
                        ? std::min(count, kFirstCapacity)
                        : (capacity > count / 2 ? count : 2 * capacity);
      char* p = static_cast<char*>(
          std::realloc(buf, static_cast<std::size_t>(grown) * elsize));
      if (p == nullptr) return FALSE;  // *addrp, *sizep describe the rest
      std::memset(p + static_cast<std::size_t>(capacity) * elsize, 0,
                  static_cast<std::size_t>(grown - capacity) * elsize);
      buf = p;
      capacity = grown;
      // Kept current so that xdr_free releases whatever was decoded when a
      // later element fails.
      *addrp = buf;
      *sizep = capacity;
    }
    if (!elproc(xdrs, buf + static_cast<std::size_t>(i) * elsize, ~0u)) {
      return FALSE;
    }
  }
  return TRUE;
}

extern "C" bool_t sharemgr_xdr_string(XDR* xdrs, char** cpp, u_int maxsize) {
  if (xdrs->x_op != XDR_DECODE || *cpp != nullptr) {
    return ::xdr_string(xdrs, cpp, maxsize);
  }
  u_int size = 0;
  if (!::xdr_u_int(xdrs, &size)) return FALSE;
  if (size > maxsize || size == ~0u || !sharemgr_xdr_fits(xdrs, size, 1)) {
    return FALSE;
  }
  u_int have = 0;
  char* buf = static_cast<char*>(std::malloc(std::min(size, kStringChunk) + 1));
  if (buf == nullptr) return FALSE;
  *cpp = buf;  // xdr_free releases it if a later read fails
  buf[0] = '\0';
  while (have < size) {
    // Every step but the last reads a multiple of 4 bytes, so the padding
    // xdr_opaque reads after the last one is the string's.
    u_int step = std::min(size - have, kStringChunk);
    char* p = static_cast<char*>(std::realloc(buf, have + step + 1));
    if (p == nullptr) return FALSE;
    buf = p;
    *cpp = buf;
    buf[have] = '\0';
    if (!::xdr_opaque(xdrs, buf + have, step)) {
      buf[have] = '\0';
      return FALSE;
    }
    have += step;
    buf[have] = '\0';
  }
  // Callers read the result as a C string: a NUL inside would silently
  // drop the rest (`rw\0,none=HOST` read as "rw"), so it is refused.
  if (std::memchr(buf, '\0', size) != nullptr) return FALSE;
  return TRUE;
}

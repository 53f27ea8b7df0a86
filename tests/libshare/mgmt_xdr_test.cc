// Decoding of the management protocol (mgmt_prot.x): declared array and
// string sizes are bounded by the bytes received (found by the mgmt_xdr
// fuzz target: tests/fuzz/regressions/mgmt_xdr).
#include <rpc/rpc.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "libshare/mgmt_prot.h"

namespace {

// XDR words (big-endian) as bytes.
std::string Words(std::initializer_list<uint32_t> words) {
  std::string out;
  for (uint32_t w : words) {
    for (int shift = 24; shift >= 0; shift -= 8) {
      out.push_back(static_cast<char>((w >> shift) & 0xff));
    }
  }
  return out;
}

template <typename T>
class Decoded {
 public:
  explicit Decoded(bool_t (*fn)(XDR*, T*)) : fn_(fn) {
    std::memset(&v_, 0, sizeof v_);
  }
  ~Decoded() {
    ::xdr_free(reinterpret_cast<xdrproc_t>(fn_), reinterpret_cast<char*>(&v_));
  }
  bool Decode(const std::string& bytes) {
    XDR x;
    ::xdrmem_create(&x, const_cast<char*>(bytes.data()),
                    static_cast<u_int>(bytes.size()), XDR_DECODE);
    bool ok = fn_(&x, &v_);
    xdr_destroy(&x);
    return ok;
  }
  T* operator->() { return &v_; }
  T& value() { return v_; }

 private:
  bool_t (*fn_)(XDR*, T*);
  T v_;
};

template <typename T>
std::string Encode(bool_t (*fn)(XDR*, T*), T* value) {
  std::string out(::xdr_sizeof(reinterpret_cast<xdrproc_t>(fn), value), '\0');
  XDR x;
  ::xdrmem_create(&x, out.data(), static_cast<u_int>(out.size()), XDR_ENCODE);
  EXPECT_TRUE(fn(&x, value));
  xdr_destroy(&x);
  return out;
}

TEST(MgmtXdrTest, BatchDeclaringMoreOpsThanBytesIsRefused) {
  // The fuzz input batch_args_huge_count: 76,695,844 ops in 4 bytes.
  // libtirpc's own xdr_array would record the count and calloc for it.
  Decoded<mgmt_batch_args> a(xdr_mgmt_batch_args);
  EXPECT_FALSE(a.Decode(Words({76695844u})));
  EXPECT_EQ(a->ops.ops_len, 0u);
  EXPECT_EQ(a->ops.ops_val, nullptr);
}

TEST(MgmtXdrTest, ListSharesDeclaringHugeGroupCountIsRefused) {
  Decoded<mgmt_list_shares_args> a(xdr_mgmt_list_shares_args);
  EXPECT_FALSE(a.Decode(Words({536870911u, 0})));
  EXPECT_EQ(a->groups.groups_len, 0u);
  EXPECT_EQ(a->groups.groups_val, nullptr);
}

TEST(MgmtXdrTest, StringLongerThanTheBytesLeftIsRefused) {
  Decoded<mgmt_check_args> a(xdr_mgmt_check_args);
  EXPECT_FALSE(a.Decode(Words({0xfffffff0u, 0x41414141u})));
  EXPECT_EQ(a->client, nullptr);  // nothing allocated for the length
}

TEST(MgmtXdrTest, StringWithANulInsideIsRefused) {
  // "rw\0,n": read as a C string it would silently become "rw".
  Decoded<mgmt_check_args> a(xdr_mgmt_check_args);
  EXPECT_FALSE(a.Decode(Words({5, 0x7277002cu, 0x6e000000u, 0, 0})));
  // The same bytes with an "x" for the NUL decode.
  Decoded<mgmt_check_args> b(xdr_mgmt_check_args);
  EXPECT_TRUE(b.Decode(Words({5, 0x7277782cu, 0x6e000000u, 0, 0})));
  EXPECT_STREQ(b->client, "rwx,n");
}

TEST(MgmtXdrTest, TruncatedArrayFailsAndFreesWhatWasDecoded) {
  // Two groups declared, one sent: the decode fails, and the destructor's
  // xdr_free releases the first name (ASan reports a leak otherwise).
  Decoded<mgmt_list_shares_args> a(xdr_mgmt_list_shares_args);
  EXPECT_FALSE(a.Decode(Words({2, 1, 0x67000000u})));
}

TEST(MgmtXdrTest, BatchOfManyOpsRoundTrips) {
  constexpr u_int kOps = 100000;
  std::vector<mgmt_op> ops(kOps);
  std::vector<std::string> paths(kOps);
  char empty[] = "";
  char group[] = "g";
  for (u_int i = 0; i < kOps; ++i) {
    paths[i] = "/export/home/u" + std::to_string(i);
    ops[i].type = MGMT_OP_ADD_SHARE;
    ops[i].group = group;
    ops[i].path = paths[i].data();
    ops[i].options = empty;
    ops[i].description = empty;
    ops[i].resource = empty;
    ops[i].fs_identity = empty;
  }
  mgmt_batch_args in{};
  in.ops.ops_len = kOps;
  in.ops.ops_val = ops.data();
  in.origin = empty;
  std::string bytes = Encode(xdr_mgmt_batch_args, &in);

  Decoded<mgmt_batch_args> out(xdr_mgmt_batch_args);
  ASSERT_TRUE(out.Decode(bytes));
  ASSERT_EQ(out->ops.ops_len, kOps);
  EXPECT_STREQ(out->ops.ops_val[0].path, "/export/home/u0");
  EXPECT_STREQ(out->ops.ops_val[kOps - 1].path, "/export/home/u99999");
  EXPECT_EQ(Encode(xdr_mgmt_batch_args, &out.value()), bytes);
}

TEST(MgmtXdrTest, StringLongerThanOneReadStepRoundTrips) {
  std::string reason(200001, 'r');  // several 64 KiB steps, odd length
  char empty[] = "";
  mgmt_check_args in{};
  in.client = reason.data();
  in.path = empty;
  in.sec = empty;
  std::string bytes = Encode(xdr_mgmt_check_args, &in);
  Decoded<mgmt_check_args> out(xdr_mgmt_check_args);
  ASSERT_TRUE(out.Decode(bytes));
  EXPECT_EQ(std::string(out->client), reason);
  EXPECT_STREQ(out->path, "");
}

TEST(MgmtXdrTest, EmptyArrayDecodesToNoElements) {
  Decoded<mgmt_list_shares_args> a(xdr_mgmt_list_shares_args);
  ASSERT_TRUE(a.Decode(Words({0})));
  EXPECT_EQ(a->groups.groups_len, 0u);
  EXPECT_EQ(a->groups.groups_val, nullptr);
}

}  // namespace

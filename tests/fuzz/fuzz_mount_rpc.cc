// Fuzz target: one ONC RPC call record as sharemgrd's MOUNT listeners
// receive it: the call header (xdr_callmsg, AUTH_SYS credentials) and
// every MOUNT v1/v3 procedure's argument decoding and reply, through
// sharemgrd::HandleCallRecord and a real MountService over a real Catalog
// (SQLite store in a temporary folder) and AuthCache (with a fixed,
// instant resolver, so the target does not depend on DNS).
//
// Input: byte 0 picks the caller (bits 0-1: one of four peer addresses;
// bit 2: a non-reserved source port; bit 3: UDP), the rest is the record
// (no record mark). Property: when a reply is produced, it is a
// well-formed RPC reply (xdr_replymsg decodes its header) to the same xid.
//
// The shares are real directories every Linux system has (/usr, /var/tmp,
// /etc, /tmp), so MNT can succeed and the seed corpus can name them.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rpc/rpc.h>
#include <stdlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "authcache/auth_cache.h"
#include "authcache/resolver.h"
#include "fixed_resolver.h"
#include "fuzz_check.h"
#include "libshare/batch.h"
#include "libshare/catalog.h"
#include "libshare/options.h"
#include "mount_service.h"
#include "rpc_server.h"

namespace {

using libshare::IpAddress;

using fuzz::FixedResolver;

struct Env {
  std::string dir;
  std::unique_ptr<libshare::Catalog> catalog;
  std::unique_ptr<authcache::AuthCache> cache;
  std::unique_ptr<sharemgrd::MountService> mount;
};

Env* env = nullptr;

void RemoveDir() {
  if (env != nullptr) {
    std::error_code ec;
    std::filesystem::remove_all(env->dir, ec);
  }
}

[[noreturn]] void SetupFailed(const std::string& what) {
  std::fprintf(stderr, "fuzz_mount_rpc setup: %s\n", what.c_str());
  std::abort();
}

void Setup() {
  env = new Env;
  char tmpl[] = "/tmp/sharemgr-fuzz-mount.XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) SetupFailed("mkdtemp");
  env->dir = tmpl;
  std::atexit(RemoveDir);

  auto catalog = libshare::Catalog::Open({env->dir + "/shares.db", 1});
  if (!catalog.ok()) SetupFailed(std::string(catalog.status().message()));
  env->catalog = std::move(*catalog);
  libshare::Batch b;
  auto op = [&](libshare::Operation::Type t, std::string path,
                std::string options) {
    libshare::Operation o;
    o.type = t;
    o.group = "fuzz";
    o.path = std::move(path);
    o.options = std::move(options);
    b.ops.push_back(std::move(o));
  };
  using T = libshare::Operation::Type;
  op(T::kCreateGroup, "", "");
  op(T::kAddShare, "/usr", "");
  op(T::kAddShare, "/var/tmp",
     "rw=@10.0.0.0/8:client.example.com,root=@127.0.0.1/32");
  op(T::kAddShare, "/etc", "sec=krb5,ro,sec=sys,ro=-10.1.2.3:*");
  op(T::kAddShare, "/tmp", "ro=.example.com,rw=@fe80::/10,anon=-1");
  op(T::kEnableGroup, "", "");
  libshare::BatchResult r = env->catalog->Apply(b);
  if (!r.ok()) {
    SetupFailed("batch refused: " + r.commit_error +
                (r.errors.empty() ? "" : r.errors[0].message));
  }

  authcache::AuthCacheConfig cc;
  cc.lookup_threads = 2;
  cc.max_entries = 1000;
  env->cache = std::make_unique<authcache::AuthCache>(
      std::make_shared<FixedResolver>(), cc);
  env->mount = std::make_unique<sharemgrd::MountService>(
      env->catalog.get(), env->cache.get(), /*insecure=*/false);
}

sharemgrd::CallContext Caller(uint8_t flags) {
  sharemgrd::CallContext ctx;
  ctx.transport =
      (flags & 8) ? sharemgrd::Transport::kUdp : sharemgrd::Transport::kTcp;
  const uint16_t port = (flags & 4) ? 40000 : 700;
  static const char* const kPeers[] = {"127.0.0.1", "10.1.2.3", "192.0.2.7",
                                       "fe80::1"};
  const char* peer = kPeers[flags & 3];
  if (std::strchr(peer, ':') == nullptr) {
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_port = htons(port);
    ::inet_pton(AF_INET, peer, &sin.sin_addr);
    std::memcpy(&ctx.peer, &sin, sizeof sin);
    ctx.peer_len = sizeof sin;
  } else {
    sockaddr_in6 sin6{};
    sin6.sin6_family = AF_INET6;
    sin6.sin6_port = htons(port);
    ::inet_pton(AF_INET6, peer, &sin6.sin6_addr);
    std::memcpy(&ctx.peer, &sin6, sizeof sin6);
    ctx.peer_len = sizeof sin6;
  }
  return ctx;
}

void CheckReply(const uint8_t* call, size_t size, const std::string& reply) {
  FUZZ_CHECK(reply.size() % 4 == 0 && reply.size() >= 12,
             "reply of " + std::to_string(reply.size()) + " bytes");
  rpc_msg msg{};
  msg.acpted_rply.ar_results.where = nullptr;
  msg.acpted_rply.ar_results.proc = reinterpret_cast<xdrproc_t>(xdr_void);
  XDR x;
  ::xdrmem_create(&x, const_cast<char*>(reply.data()),
                  static_cast<u_int>(reply.size()), XDR_DECODE);
  const bool ok = ::xdr_replymsg(&x, &msg);
  xdr_destroy(&x);
  FUZZ_CHECK(
      ok, "reply header does not decode: " + fuzz::Escape(reply.substr(0, 64)));
  FUZZ_CHECK(size >= 4, "reply to a call without xid");
  const uint32_t xid = (uint32_t{call[0]} << 24) | (uint32_t{call[1]} << 16) |
                       (uint32_t{call[2]} << 8) | uint32_t{call[3]};
  FUZZ_CHECK(msg.rm_xid == xid, "reply xid differs from the call's");
  FUZZ_CHECK(msg.rm_direction == REPLY, "reply is not a REPLY");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  Setup();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const sharemgrd::CallContext ctx = Caller(data[0]);
  ++data;
  --size;
  std::string reply;
  if (sharemgrd::HandleCallRecord(*env->mount,
                                  reinterpret_cast<const char*>(data), size,
                                  ctx, &reply)) {
    CheckReply(data, size, reply);
  } else {
    FUZZ_CHECK(reply.empty(), "no reply due, but bytes were written");
  }
  return 0;
}

// Fuzz target: MNT below a share never leaves it (security issue 13,
// finding 1). A real MountService over a real Catalog serves two shares
// in a temporary tree T, each holding {d/e, f (file), locked (0700,
// root's)}: T/share (rw, root squashed) and T/rshare (rw, root kept for
// the caller by root=); T/outside/{o1/o2, g} is not shared.
//
// Each input plants five symlinks (l0..l3, d/l4) in one of the shares
// with targets picked from a table of escapes, cross-share and inside
// links (byte 0xff: no link), then sends one MNT (AUTH_SYS uid 0 or 1000,
// or AUTH_NONE) for a path built from components picked by the input.
// Root kept on T/rshare walks with the one-call openat2 path; the other
// callers with the component walk and its permission checks.
//
// Properties, against the tree as the kernel sees it (realpath, lstat):
//  - MNT OK only for a path with no symlink component whose every
//    directory lies in a share, none of them a `locked` the caller may
//    not search before the last; its handle is that directory's
//    (dev, ino);
//  - a path whose real location is outside every share gets exactly the
//    answer of an unshared path (ACCES);
//  - NOENT and NOTDIR only when the walk stopped on a name inside a share
//    reached without a symlink and without passing a `locked` it may not.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rpc/rpc.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "authcache/auth_cache.h"
#include "authcache/resolver.h"
#include "fixed_resolver.h"
#include "fuzz_check.h"
#include "libshare/batch.h"
#include "libshare/catalog.h"
#include "libshare/options.h"
#include "mount_prot.h"
#include "mount_service.h"
#include "rpc_server.h"
#include "xdr_writer.h"

namespace {

using libshare::IpAddress;

using fuzz::FixedResolver;

struct Env {
  std::string dir;        // T, canonical
  std::string shares[2];  // T/share (rw), T/rshare (rw, root kept)
  std::string share;      // the one this input plants links in and names
  std::unique_ptr<libshare::Catalog> catalog;
  std::unique_ptr<authcache::AuthCache> cache;
  std::unique_ptr<sharemgrd::MountService> mount;
  uint32_t unshared_status = 0;
};

Env* env = nullptr;

void RemoveDir() {
  if (env != nullptr) {
    std::error_code ec;
    std::filesystem::remove_all(env->dir, ec);
  }
}

[[noreturn]] void SetupFailed(const std::string& what) {
  std::fprintf(stderr, "fuzz_mnt_resolve setup: %s\n", what.c_str());
  std::abort();
}

const char* const kLinkNames[] = {"l0", "l1", "l2", "l3", "d/l4"};

// Link targets: escapes (absolute, relative, through ".."), links that
// stay inside, chains, dangling ones.
std::vector<std::string> LinkTargets() {
  return {"/etc",
          "/",
          "..",
          "../outside",
          "../outside/o1",
          "../..",
          "d",
          "d/e",
          "../share/d",
          "f",
          "missing",
          "l1",
          "l0",
          ".",
          "locked",
          env->dir + "/outside",
          env->share + "/d",
          "../share",
          "../../share/d",
          "../outside/g"};
}

const char* const kComponents[] = {
    "d",     "e",      "f",       "l0", "l1",  "l2",     "l3",
    "l4",    "locked", "missing", "o1", "o2",  "g",      "outside",
    "share", "..",     ".",       "",   "etc", "passwd", "rshare"};

void Mkdir(const std::string& p, mode_t mode) {
  if (::mkdir(p.c_str(), mode) != 0) SetupFailed("mkdir " + p);
  if (::chmod(p.c_str(), mode) != 0) SetupFailed("chmod " + p);
}

void Touch(const std::string& p) {
  FILE* f = std::fopen(p.c_str(), "w");
  if (f == nullptr) SetupFailed("create " + p);
  std::fclose(f);
}

std::string EncodeMnt(uint32_t xid, int caller, std::string_view path) {
  std::string out;
  sharemgrd::XdrWriter w(&out);
  w.U32(xid);
  w.U32(0);  // CALL
  w.U32(2);  // RPC version
  w.U32(sharemgrd::kMountProgram);
  w.U32(sharemgrd::kMountV3);
  w.U32(sharemgrd::kMountProcMnt);
  if (caller == 2) {
    w.U32(0);  // AUTH_NONE
    w.U32(0);
  } else {
    std::string body;
    sharemgrd::XdrWriter b(&body);
    b.U32(0);  // stamp
    b.String("fuzz");
    const uint32_t id = caller == 0 ? 0 : 1000;
    b.U32(id);
    b.U32(id);
    b.U32(0);  // no supplementary groups
    w.U32(1);  // AUTH_SYS
    w.Opaque(body);
  }
  w.U32(0);  // verifier AUTH_NONE
  w.U32(0);
  w.String(path);
  return out;
}

struct MntAnswer {
  uint32_t status = ~0u;
  std::string handle;
};

MntAnswer Mnt(int caller, std::string_view path) {
  sharemgrd::CallContext ctx;
  ctx.transport = sharemgrd::Transport::kTcp;
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(700);
  sin.sin_addr.s_addr = htonl(0x7f000001);
  std::memcpy(&ctx.peer, &sin, sizeof sin);
  ctx.peer_len = sizeof sin;
  const std::string call = EncodeMnt(0x1234, caller, path);
  std::string reply;
  FUZZ_CHECK(sharemgrd::HandleCallRecord(*env->mount, call.data(), call.size(),
                                         ctx, &reply),
             "no reply to MNT");
  // xid, REPLY, MSG_ACCEPTED, verifier (flavor, empty), SUCCESS: 24 bytes.
  MntAnswer a;
  if (reply.size() < 28 || path.size() > sharemgrd::kMntPathLen) return a;
  auto u32 = [&](std::size_t at) {
    uint32_t v;
    std::memcpy(&v, reply.data() + at, 4);
    return ntohl(v);
  };
  a.status = u32(24);
  if (a.status == sharemgrd::kMnt3Ok && reply.size() >= 32) {
    uint32_t len = u32(28);
    if (reply.size() >= 32 + len) a.handle = reply.substr(32, len);
  }
  return a;
}

void Setup() {
  env = new Env;
  char tmpl[] = "/tmp/sharemgr-fuzz-resolve.XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) SetupFailed("mkdtemp");
  char* real = ::realpath(tmpl, nullptr);
  if (real == nullptr) SetupFailed("realpath");
  env->dir = real;
  std::free(real);
  std::atexit(RemoveDir);
  env->shares[0] = env->dir + "/share";
  env->shares[1] = env->dir + "/rshare";
  env->share = env->shares[0];
  for (const std::string& share : env->shares) {
    Mkdir(share, 0755);
    Mkdir(share + "/d", 0755);
    Mkdir(share + "/d/e", 0755);
    Mkdir(share + "/locked", 0700);
    Mkdir(share + "/locked/in", 0755);
    Touch(share + "/f");
  }
  Mkdir(env->dir + "/outside", 0755);
  Mkdir(env->dir + "/outside/o1", 0755);
  Mkdir(env->dir + "/outside/o1/o2", 0755);
  Mkdir(env->dir + "/outside/g", 0755);

  auto catalog = libshare::Catalog::Open({env->dir + "/shares.db", 1});
  if (!catalog.ok()) SetupFailed(std::string(catalog.status().message()));
  env->catalog = std::move(*catalog);
  libshare::Batch b;
  using T = libshare::Operation::Type;
  for (auto [t, path, options] :
       {std::tuple{T::kCreateGroup, std::string(), std::string()},
        std::tuple{T::kAddShare, env->shares[0], std::string("rw")},
        std::tuple{T::kAddShare, env->shares[1],
                   std::string("rw,root=@127.0.0.1/32")},
        std::tuple{T::kEnableGroup, std::string(), std::string()}}) {
    libshare::Operation o;
    o.type = t;
    o.group = "fuzz";
    o.path = path;
    o.options = options;
    b.ops.push_back(std::move(o));
  }
  libshare::BatchResult r = env->catalog->Apply(b);
  if (!r.ok()) {
    SetupFailed("batch refused: " + r.commit_error +
                (r.errors.empty() ? "" : r.errors[0].message));
  }
  authcache::AuthCacheConfig cc;
  cc.lookup_threads = 1;
  cc.max_entries = 100;
  env->cache = std::make_unique<authcache::AuthCache>(
      std::make_shared<FixedResolver>(), cc);
  env->mount = std::make_unique<sharemgrd::MountService>(
      env->catalog.get(), env->cache.get(), /*insecure=*/false);
  env->unshared_status = Mnt(0, env->dir + "/outside/o1").status;
  if (env->unshared_status != sharemgrd::kMnt3ErrAcces) {
    SetupFailed("an unshared path is not answered ACCES");
  }
}

bool InsideOf(const std::string& share, const std::string& real) {
  return real == share || real.rfind(share + "/", 0) == 0;
}
bool InsideAnyShare(const std::string& real) {
  return InsideOf(env->shares[0], real) || InsideOf(env->shares[1], real);
}

// What the kernel says about `path` (absolute, may hold "." and ".."):
// the real location of its longest existing prefix (symlinks followed)
// with the rest appended, and what a no-follow walk meets on the way.
struct Truth {
  std::string real;               // "" if the prefix cannot be resolved
  bool link_before_stop = false;  // a symlink among the walked prefixes
  bool locked_passed = false;     // `locked` searched (not the last)
  bool dotdot = false;            // "." or ".." or "" component
};

Truth Examine(const std::string& path, int caller) {
  Truth t;
  std::vector<std::string> comps;
  for (std::size_t i = 1; i <= path.size();) {
    std::size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    comps.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  // Empty components vanish in NormalizePath: the last real one matters.
  std::size_t last = 0;
  for (std::size_t k = 0; k < comps.size(); ++k) {
    if (!comps[k].empty()) last = k;
  }
  std::string prefix;
  std::size_t existing = 0;
  for (std::size_t k = 0; k < comps.size(); ++k) {
    const std::string& c = comps[k];
    if (c == "." || c == "..") t.dotdot = true;
    if (c.empty()) continue;  // NormalizePath collapses "//"
    std::string next = prefix + "/" + c;
    struct stat st;
    if (::lstat(next.c_str(), &st) != 0) break;
    if (S_ISLNK(st.st_mode)) t.link_before_stop = true;
    // `locked` stops everyone but uid 0 on the root= share.
    if (k < last && (next == env->shares[0] + "/locked" ||
                     (next == env->shares[1] + "/locked" && caller != 0))) {
      t.locked_passed = true;
    }
    prefix = next;
    existing = k + 1;
  }
  char* r = ::realpath(prefix.empty() ? "/" : prefix.c_str(), nullptr);
  if (r != nullptr) {
    t.real = r;
    std::free(r);
    for (std::size_t k = existing; k < comps.size(); ++k) {
      t.real += "/" + comps[k];
    }
  }
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  Setup();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 7) return 0;
  static const std::vector<std::string> targets = LinkTargets();
  // Bytes 0-4: the links; 5: the caller; 6: the prefix (bit 0: start at T,
  // bit 1: the root= share); then components.
  const int caller = data[5] % 3;
  const uint8_t prefix = data[6];
  env->share = env->shares[(prefix >> 1) & 1];
  for (const std::string& share : env->shares) {
    for (const char* link : kLinkNames) {
      ::unlink((share + "/" + link).c_str());
    }
  }
  for (int i = 0; i < 5; ++i) {
    const uint8_t b = data[i];
    if (b == 0xff) continue;  // no link there
    std::string target = targets[b % targets.size()];
    ::symlink(target.c_str(), (env->share + "/" + kLinkNames[i]).c_str());
  }
  data += 7;
  size -= 7;
  std::string path = (prefix & 1) ? env->dir : env->share;
  for (size_t i = 0; i < size && i < 12; ++i) {
    path += "/";
    path += kComponents[data[i] % std::size(kComponents)];
  }

  const MntAnswer a = Mnt(caller, path);
  const Truth t = Examine(path, caller);
  const std::string what = "MNT " + fuzz::Escape(path) + " (caller " +
                           std::to_string(caller) +
                           ") = " + std::to_string(a.status);
  FUZZ_CHECK(a.status != ~0u, what + ": no MNT status in the reply");
  if (a.status == sharemgrd::kMnt3Ok) {
    FUZZ_CHECK(!t.link_before_stop, what + ": OK through a symlink");
    FUZZ_CHECK(!t.locked_passed, what +
                                     ": OK through a directory the "
                                     "squashed client may not search");
    FUZZ_CHECK(InsideAnyShare(t.real), what + ": OK for " + t.real);
    struct stat st;
    FUZZ_CHECK(::stat(t.real.c_str(), &st) == 0 && S_ISDIR(st.st_mode),
               what + ": OK for something not a directory");
    FUZZ_CHECK(a.handle == sharemgrd::FileHandleFor(st.st_dev, st.st_ino),
               what + ": handle is not " + t.real + "'s");
  }
  if (t.real.empty() || !InsideAnyShare(t.real)) {
    FUZZ_CHECK(a.status == env->unshared_status,
               what + ": real location " + t.real +
                   " is outside every share, yet the answer differs from "
                   "an unshared path's");
  }
  if (a.status == sharemgrd::kMnt3ErrNoent ||
      a.status == sharemgrd::kMnt3ErrNotdir) {
    FUZZ_CHECK(!t.link_before_stop && !t.locked_passed && !t.dotdot &&
                   InsideAnyShare(t.real),
               what + ": an answer that tells about " + t.real);
  }
  return 0;
}

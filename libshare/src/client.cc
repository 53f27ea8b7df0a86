// Client API of the management program: a small blocking ONC RPC client
// over the daemon's Unix stream socket.
//
// Why not clntunix_create: it cannot report why a connection failed in a
// form we can turn into a useful message, its timeouts are per call in a
// way that fights the big BATCH replies, and it keeps global state we do
// not need. Record marking plus xdr_callmsg/xdr_replymsg is a page.
#include "libshare/client.h"

#include <errno.h>
#include <poll.h>
#include <rpc/rpc.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "libshare/mgmt_codec.h"
#include "libshare/mgmt_prot.h"

namespace libshare {
namespace {

// Long enough for a BATCH of 100,000 shares on a slow disk and for a CHECK
// whose name lookup hits the cache's lookup timeout; short enough that a
// hung daemon does not hang scripts forever.
constexpr int kCallTimeoutMs = 120000;
// Largest reply we accept (a LIST of 100,000 shares is ~30 MiB).
constexpr uint32_t kMaxReplyBytes = 512u << 20;
// The most sharemgrd accepts in one call (its record limit for callers who
// may change shares, kMgmtMaxRecord in sharemgrd/daemon.cc). A bigger call
// is refused here, before sending: the daemon would close the connection
// half-way and the caller would see a broken pipe, as if it were down.
constexpr size_t kMaxCallBytes = 256u << 20;
constexpr uint32_t kLastFragment = 0x80000000u;
// Batch::origin is sent cut to this many bytes.
constexpr size_t kMaxOriginBytes = 512;

std::atomic<uint32_t> next_xid{static_cast<uint32_t>(::time(nullptr)) ^
                               (static_cast<uint32_t>(::getpid()) << 16)};

// XDR size of a string: its length word and its bytes padded to 4.
size_t XdrTextSize(std::string_view s) { return 4 + ((s.size() + 3) & ~3u); }

// XDR size of mgmt_batch_args (mgmt_prot.x) for these operations and origin,
// computed from the lengths: xdr_sizeof would run a whole encoding pass over
// a batch of 15,000 operations (about a tenth of sharectl's CPU).
size_t BatchArgsSize(const std::vector<Operation>& ops,
                     const std::string& origin) {
  size_t size = 4;  // ops<> count
  for (const Operation& o : ops) {
    // type, five texts, force, fields, fs_identity
    size += 4 + XdrTextSize(o.group) + XdrTextSize(o.path) +
            XdrTextSize(o.options) + XdrTextSize(o.description) +
            XdrTextSize(o.resource) + 4 + 4 + XdrTextSize(o.fs_identity);
  }
  return size + 4 + XdrTextSize(origin);  // dry_run, origin
}

// The arguments of EncodeBatchArgs.
struct BatchArgs {
  const std::vector<Operation>* ops;
  bool dry_run;
  const std::string* origin;  // at most kMaxOriginBytes, no NUL
  size_t size;                // BatchArgsSize(*ops, *origin)
};

char* PutWord(char* p, uint32_t v) {
  v = htonl(v);
  ::memcpy(p, &v, 4);
  return p + 4;
}

// An XDR string: its length, its bytes, zeros up to a multiple of 4.
char* PutText(char* p, std::string_view s) {
  p = PutWord(p, static_cast<uint32_t>(s.size()));
  ::memcpy(p, s.data(), s.size());
  p += s.size();
  for (size_t pad = (4 - (s.size() & 3)) & 3; pad > 0; --pad) *p++ = '\0';
  return p;
}

// mgmt_batch_args (mgmt_prot.x) straight from the Operations: the bytes
// rpcgen's xdr_mgmt_batch_args writes from mgmt_ops (a test holds them
// equal), in one pass over the stream's buffer, without the mgmt_op array,
// a strlen per text and a call per XDR item (rpcgen's encoding was a
// tenth of `sharectl batch`'s instructions for 15,000 shares). An xdrproc
// for Call(), whose aligned memory stream of args->size bytes always has
// them inline.
bool_t EncodeBatchArgs(XDR* x, void* args) {
  const BatchArgs& a = *static_cast<const BatchArgs*>(args);
  char* p = reinterpret_cast<char*>(XDR_INLINE(x, static_cast<u_int>(a.size)));
  if (p == nullptr) return FALSE;
  p = PutWord(p, static_cast<uint32_t>(a.ops->size()));
  for (const Operation& o : *a.ops) {
    p = PutWord(p, static_cast<uint32_t>(o.type));
    p = PutText(p, o.group);
    p = PutText(p, o.path);
    p = PutText(p, o.options);
    p = PutText(p, o.description);
    p = PutText(p, o.resource);
    p = PutWord(p, o.force ? 1 : 0);
    p = PutWord(p, (o.set_options ? MGMT_FIELD_OPTIONS : 0) |
                       (o.set_description ? MGMT_FIELD_DESCRIPTION : 0) |
                       (o.set_resource ? MGMT_FIELD_RESOURCE : 0));
    p = PutText(p, o.fs_identity);
  }
  p = PutWord(p, a.dry_run ? 1 : 0);
  PutText(p, *a.origin);
  return TRUE;
}

// libtirpc declares xdr_void without parameters; this one has xdrproc_t's.
bool_t XdrNoArgs(XDR*, void*) { return TRUE; }

// Deadline-bounded socket I/O; returns false with `err` set on failure.
class Conn {
 public:
  Conn(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~Conn() {
    if (fd_ >= 0) ::close(fd_);
  }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  const std::string& path() const { return path_; }
  bool broken() const { return fd_ < 0; }

  absl::Status Broken(const std::string& what) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    return absl::UnavailableError(
        absl::StrCat("sharemgrd at ", path_, ": ", what));
  }

  absl::Status WriteAll(const char* p, size_t n, int64_t deadline_ms) {
    while (n > 0) {
      if (!Wait(POLLOUT, deadline_ms)) return Broken("timed out sending");
      ssize_t w = ::send(fd_, p, n, MSG_NOSIGNAL);
      if (w < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        return Broken(absl::StrCat("send: ", ::strerror(errno)));
      }
      p += w;
      n -= static_cast<size_t>(w);
    }
    return absl::OkStatus();
  }

  absl::Status ReadAll(char* p, size_t n, int64_t deadline_ms) {
    while (n > 0) {
      if (!Wait(POLLIN, deadline_ms))
        return Broken("timed out waiting for a reply");
      ssize_t r = ::recv(fd_, p, n, 0);
      if (r == 0) return Broken("connection closed by the daemon");
      if (r < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        return Broken(absl::StrCat("recv: ", ::strerror(errno)));
      }
      p += r;
      n -= static_cast<size_t>(r);
    }
    return absl::OkStatus();
  }

 private:
  bool Wait(short events, int64_t deadline_ms) {
    for (;;) {
      int64_t left = deadline_ms - NowMs();
      if (left <= 0) return false;
      pollfd pfd{fd_, events, 0};
      int r = ::poll(&pfd, 1, static_cast<int>(left));
      if (r > 0) return true;
      if (r < 0 && errno != EINTR) return false;
    }
  }

 public:
  static int64_t NowMs() {
    timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t{ts.tv_sec} * 1000 + ts.tv_nsec / 1000000;
  }

 private:
  int fd_;
  std::string path_;
};

// Frees an rpcgen-decoded result when it goes out of scope.
template <typename T>
class Decoded {
 public:
  explicit Decoded(xdrproc_t fn) : fn_(fn) { ::memset(&v_, 0, sizeof v_); }
  ~Decoded() { ::xdr_free(fn_, reinterpret_cast<char*>(&v_)); }
  Decoded(const Decoded&) = delete;
  Decoded& operator=(const Decoded&) = delete;
  T* get() { return &v_; }
  T& operator*() { return v_; }
  T* operator->() { return &v_; }

 private:
  xdrproc_t fn_;
  T v_;
};

class RpcClient final : public Client {
 public:
  RpcClient(int fd, std::string path) : conn_(fd, std::move(path)) {}

  // `args_size`: the encoded size of `args` when the caller knows it
  // (0: measured with xdr_sizeof, a second encoding pass).
  absl::Status Call(uint32_t proc, xdrproc_t args_fn, void* args,
                    xdrproc_t res_fn, void* res, size_t args_size = 0);
  // The first half of Call(): sends the call, sets *xid; its reply is
  // read by Receive(), or skipped by the next Call() if it is added to
  // unanswered_.
  absl::Status Send(uint32_t proc, xdrproc_t args_fn, void* args,
                    size_t args_size, int64_t deadline, uint32_t* xid);
  absl::Status Receive(uint32_t xid, xdrproc_t res_fn, void* res, uint32_t proc,
                       int64_t deadline);
  // One whole reply record (its fragments joined) into buf_.
  absl::Status ReadRecord(int64_t deadline);

  absl::StatusOr<BatchResult> Apply(const Batch& batch) override;
  absl::Status PrepareBatch(std::size_t call_bytes) override;
  absl::StatusOr<std::vector<GroupInfo>> ListGroups() override;
  absl::StatusOr<std::vector<ShareInfo>> ListShares(
      const std::vector<std::string>& groups) override;
  absl::StatusOr<std::vector<SharetabEntry>> Sharetab() override;
  absl::StatusOr<CheckResult> Check(const std::string& client,
                                    const std::string& path,
                                    const std::string& sec) override;
  absl::StatusOr<DaemonStats> Stats() override;
  absl::Status FlushCache() override;
  absl::StatusOr<std::vector<MountInfo>> Mounts() override;
  absl::StatusOr<ChangeList> ChangesSince(uint64_t generation) override;
  absl::StatusOr<FollowSyncResult> FollowSync() override;
  absl::StatusOr<std::vector<std::string>> Rerecord(
      const std::vector<std::string>& paths) override;

 private:
  Conn conn_;
  std::vector<char> buf_;
  // Calls sent whose replies nobody waits for (PrepareBatch): skipped
  // when they come.
  std::vector<uint32_t> unanswered_;
};

absl::Status RpcClient::Call(uint32_t proc, xdrproc_t args_fn, void* args,
                             xdrproc_t res_fn, void* res, size_t args_size) {
  const int64_t deadline = Conn::NowMs() + kCallTimeoutMs;
  uint32_t xid = 0;
  if (absl::Status s = Send(proc, args_fn, args, args_size, deadline, &xid);
      !s.ok())
    return s;
  return Receive(xid, res_fn, res, proc, deadline);
}

absl::Status RpcClient::Send(uint32_t proc, xdrproc_t args_fn, void* args,
                             size_t args_size, int64_t deadline,
                             uint32_t* xid_out) {
  if (conn_.broken()) {
    return absl::UnavailableError(
        absl::StrCat("sharemgrd at ", conn_.path(), ": connection was lost"));
  }
  const uint32_t xid = next_xid.fetch_add(1, std::memory_order_relaxed);
  *xid_out = xid;
  rpc_msg call{};
  call.rm_xid = xid;
  call.rm_direction = CALL;
  call.rm_call.cb_rpcvers = RPC_MSG_VERSION;
  call.rm_call.cb_prog = SHAREMGR_MGMT_PROG;
  call.rm_call.cb_vers = SHAREMGR_MGMT_V1;
  call.rm_call.cb_proc = proc;
  call.rm_call.cb_cred = _null_auth;
  call.rm_call.cb_verf = _null_auth;

  // Header (xid .. verifier) is 40 bytes with AUTH_NONE; the record mark
  // precedes it.
  size_t body = 64 + (args_size != 0 ? args_size : ::xdr_sizeof(args_fn, args));
  if (body - 64 + 40 > kMaxCallBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the request is ", (body - 24) >> 20, " MiB, over the ",
        kMaxCallBytes >> 20, " MiB sharemgrd accepts in one call"));
  }
  buf_.clear();  // the last reply: not copied into a bigger buffer
  buf_.resize(4 + body);
  XDR x;
  ::xdrmem_create(&x, buf_.data() + 4, static_cast<u_int>(body), XDR_ENCODE);
  if (!::xdr_callmsg(&x, &call) || !args_fn(&x, args)) {
    xdr_destroy(&x);
    return absl::InternalError("cannot encode the request");
  }
  uint32_t len = xdr_getpos(&x);
  xdr_destroy(&x);
  uint32_t mark = htonl(kLastFragment | len);
  ::memcpy(buf_.data(), &mark, 4);
  return conn_.WriteAll(buf_.data(), 4 + len, deadline);
}

absl::Status RpcClient::ReadRecord(int64_t deadline) {
  for (;;) {
    uint32_t hdr;
    if (absl::Status s =
            conn_.ReadAll(reinterpret_cast<char*>(&hdr), 4, deadline);
        !s.ok())
      return s;
    hdr = ntohl(hdr);
    uint32_t flen = hdr & ~kLastFragment;
    if (buf_.size() + flen > kMaxReplyBytes)
      return conn_.Broken("reply too large");
    size_t old = buf_.size();
    buf_.resize(old + flen);
    if (absl::Status s = conn_.ReadAll(buf_.data() + old, flen, deadline);
        !s.ok())
      return s;
    if (hdr & kLastFragment) return absl::OkStatus();
  }
}

absl::Status RpcClient::Receive(uint32_t xid, xdrproc_t res_fn, void* res,
                                uint32_t proc, int64_t deadline) {
  // Records until this call's reply: the reply of a call nobody waits for
  // (PrepareBatch) is skipped; one with any other xid (cannot happen on
  // this private connection, but be strict) breaks it.
  for (;;) {
    buf_.clear();
    if (absl::Status s = ReadRecord(deadline); !s.ok()) return s;
    if (buf_.size() < 4) return conn_.Broken("malformed reply");
    uint32_t got;
    ::memcpy(&got, buf_.data(), 4);
    got = ntohl(got);
    auto it = std::find(unanswered_.begin(), unanswered_.end(), got);
    if (got == xid || it == unanswered_.end()) break;
    unanswered_.erase(it);  // a PrepareBatch's reply: nobody waits for it
  }

  rpc_msg reply{};
  reply.acpted_rply.ar_verf = _null_auth;
  reply.acpted_rply.ar_results.where = static_cast<caddr_t>(res);
  reply.acpted_rply.ar_results.proc = res_fn;
  XDR x;
  ::xdrmem_create(&x, buf_.data(), static_cast<u_int>(buf_.size()), XDR_DECODE);
  bool ok = ::xdr_replymsg(&x, &reply);
  xdr_destroy(&x);
  if (!ok) return conn_.Broken("malformed reply");
  if (reply.rm_xid != xid) return conn_.Broken("reply to another call");
  if (reply.rm_reply.rp_stat != MSG_ACCEPTED) {
    return absl::UnavailableError(
        absl::StrCat("sharemgrd at ", conn_.path(),
                     ": call rejected (RPC version or auth)"));
  }
  switch (reply.acpted_rply.ar_stat) {
    case SUCCESS:
      return absl::OkStatus();
    case PROG_UNAVAIL:
    case PROG_MISMATCH:
    case PROC_UNAVAIL:
      return absl::UnavailableError(
          absl::StrCat("sharemgrd at ", conn_.path(), ": procedure ", proc,
                       " not offered (version mismatch?)"));
    case GARBAGE_ARGS:
      return absl::InvalidArgumentError("daemon could not decode the request");
    default:
      return absl::InternalError(
          absl::StrCat("sharemgrd at ", conn_.path(), ": call failed"));
  }
}

absl::Status RpcClient::PrepareBatch(std::size_t call_bytes) {
  mgmt_prepare_args args{};
  args.bytes = call_bytes;
  uint32_t xid = 0;
  // Sent, not waited for: the daemon answers at once, but a round trip
  // (1.5 ms with a thread to start) would come before the client's parse.
  if (absl::Status s = Send(MGMTPROC_PREPARE_BATCH,
                            reinterpret_cast<xdrproc_t>(xdr_mgmt_prepare_args),
                            &args, 0, Conn::NowMs() + kCallTimeoutMs, &xid);
      !s.ok())
    return s;
  unanswered_.push_back(xid);
  return absl::OkStatus();
}

absl::StatusOr<BatchResult> RpcClient::Apply(const Batch& batch) {
  BatchResult refused;
  for (size_t i = 0; i < batch.ops.size(); ++i) {
    if (absl::Status s = CheckOperationText(batch.ops[i]); !s.ok()) {
      refused.errors.push_back({i, std::string(s.message())});
    }
  }
  if (!refused.ok()) return refused;  // nothing sent
  // The origin is a label: cut, not refused, when long or holding a NUL.
  std::string origin = batch.origin.substr(0, kMaxOriginBytes);
  origin = origin.substr(0, origin.find('\0'));
  BatchArgs args{&batch.ops, batch.dry_run, &origin,
                 BatchArgsSize(batch.ops, origin)};
  // Call header: 40 bytes with AUTH_NONE.
  if (size_t size = 40 + args.size; size > kMaxCallBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch of ", batch.ops.size(), " operations is ", size >> 20,
        " MiB encoded, over the ", kMaxCallBytes >> 20,
        " MiB sharemgrd accepts in one call; nothing was sent or changed: "
        "split it into batches under that size (each is its own "
        "transaction)"));
  }
  Decoded<mgmt_batch_res> res(reinterpret_cast<xdrproc_t>(xdr_mgmt_batch_res));
  if (absl::Status s =
          Call(MGMTPROC_BATCH, reinterpret_cast<xdrproc_t>(EncodeBatchArgs),
               &args, reinterpret_cast<xdrproc_t>(xdr_mgmt_batch_res),
               res.get(), args.size);
      !s.ok())
    return s;
  if (res->status != MGMT_OK)
    return StatusFromMgmt(res->status, res->mgmt_batch_res_u.message);
  return DecodeBatchResult(res->mgmt_batch_res_u.result);
}

absl::StatusOr<std::vector<GroupInfo>> RpcClient::ListGroups() {
  Decoded<mgmt_list_groups_res> res(
      reinterpret_cast<xdrproc_t>(xdr_mgmt_list_groups_res));
  if (absl::Status s = Call(
          MGMTPROC_LIST_GROUPS, reinterpret_cast<xdrproc_t>(XdrNoArgs), nullptr,
          reinterpret_cast<xdrproc_t>(xdr_mgmt_list_groups_res), res.get());
      !s.ok())
    return s;
  if (res->status != MGMT_OK)
    return StatusFromMgmt(res->status, res->mgmt_list_groups_res_u.message);
  const auto& g = res->mgmt_list_groups_res_u.groups;
  return DecodeAll(g.groups_val, g.groups_len, DecodeGroup);
}

absl::StatusOr<std::vector<ShareInfo>> RpcClient::ListShares(
    const std::vector<std::string>& groups) {
  TextsView names(groups);
  mgmt_list_shares_args args{};
  args.groups.groups_len = names.size();
  args.groups.groups_val = names.data();
  Decoded<mgmt_list_shares_res> res(
      reinterpret_cast<xdrproc_t>(xdr_mgmt_list_shares_res));
  if (absl::Status s = Call(
          MGMTPROC_LIST_SHARES,
          reinterpret_cast<xdrproc_t>(xdr_mgmt_list_shares_args), &args,
          reinterpret_cast<xdrproc_t>(xdr_mgmt_list_shares_res), res.get());
      !s.ok())
    return s;
  if (res->status != MGMT_OK)
    return StatusFromMgmt(res->status, res->mgmt_list_shares_res_u.message);
  const auto& l = res->mgmt_list_shares_res_u.shares;
  return DecodeAll(l.shares_val, l.shares_len, DecodeShare);
}

absl::StatusOr<std::vector<SharetabEntry>> RpcClient::Sharetab() {
  Decoded<mgmt_sharetab_res> res(
      reinterpret_cast<xdrproc_t>(xdr_mgmt_sharetab_res));
  if (absl::Status s = Call(
          MGMTPROC_SHARETAB, reinterpret_cast<xdrproc_t>(XdrNoArgs), nullptr,
          reinterpret_cast<xdrproc_t>(xdr_mgmt_sharetab_res), res.get());
      !s.ok())
    return s;
  if (res->status != MGMT_OK)
    return StatusFromMgmt(res->status, res->mgmt_sharetab_res_u.message);
  const auto& l = res->mgmt_sharetab_res_u.entries;
  return DecodeAll(l.entries_val, l.entries_len, DecodeSharetabEntry);
}

absl::StatusOr<CheckResult> RpcClient::Check(const std::string& client,
                                             const std::string& path,
                                             const std::string& sec) {
  const CheckArgs asked{client, path, sec};
  mgmt_check_args args = EncodeCheckArgs(asked);
  Decoded<mgmt_check_res> res(reinterpret_cast<xdrproc_t>(xdr_mgmt_check_res));
  if (absl::Status s = Call(
          MGMTPROC_CHECK, reinterpret_cast<xdrproc_t>(xdr_mgmt_check_args),
          &args, reinterpret_cast<xdrproc_t>(xdr_mgmt_check_res), res.get());
      !s.ok())
    return s;
  if (res->status != MGMT_OK)
    return StatusFromMgmt(res->status, res->mgmt_check_res_u.message);
  return DecodeCheckResult(res->mgmt_check_res_u.result);
}

absl::StatusOr<std::vector<MountInfo>> RpcClient::Mounts() {
  Decoded<mgmt_mounts_res> res(
      reinterpret_cast<xdrproc_t>(xdr_mgmt_mounts_res));
  if (absl::Status s =
          Call(MGMTPROC_MOUNTS, reinterpret_cast<xdrproc_t>(XdrNoArgs), nullptr,
               reinterpret_cast<xdrproc_t>(xdr_mgmt_mounts_res), res.get());
      !s.ok())
    return s;
  if (res->status != MGMT_OK)
    return StatusFromMgmt(res->status, res->mgmt_mounts_res_u.message);
  const auto& l = res->mgmt_mounts_res_u.mounts;
  return DecodeAll(l.mounts_val, l.mounts_len, DecodeMount);
}

absl::StatusOr<DaemonStats> RpcClient::Stats() {
  Decoded<mgmt_stats_res> res(reinterpret_cast<xdrproc_t>(xdr_mgmt_stats_res));
  if (absl::Status s =
          Call(MGMTPROC_STATS, reinterpret_cast<xdrproc_t>(XdrNoArgs), nullptr,
               reinterpret_cast<xdrproc_t>(xdr_mgmt_stats_res), res.get());
      !s.ok())
    return s;
  if (res->status != MGMT_OK)
    return StatusFromMgmt(res->status, res->mgmt_stats_res_u.message);
  return DecodeDaemonStats(res->mgmt_stats_res_u.stats);
}

absl::Status RpcClient::FlushCache() {
  Decoded<mgmt_flush_res> res(reinterpret_cast<xdrproc_t>(xdr_mgmt_flush_res));
  if (absl::Status s = Call(
          MGMTPROC_CACHE_FLUSH, reinterpret_cast<xdrproc_t>(XdrNoArgs), nullptr,
          reinterpret_cast<xdrproc_t>(xdr_mgmt_flush_res), res.get());
      !s.ok())
    return s;
  return StatusFromMgmt(res->status, res->mgmt_flush_res_u.message);
}

absl::StatusOr<ChangeList> RpcClient::ChangesSince(uint64_t generation) {
  mgmt_changes_args args{};
  args.since = generation;
  Decoded<mgmt_changes_res> res(
      reinterpret_cast<xdrproc_t>(xdr_mgmt_changes_res));
  if (absl::Status s =
          Call(MGMTPROC_CHANGES_SINCE,
               reinterpret_cast<xdrproc_t>(xdr_mgmt_changes_args), &args,
               reinterpret_cast<xdrproc_t>(xdr_mgmt_changes_res), res.get());
      !s.ok())
    return s;
  if (res->status != MGMT_OK)
    return StatusFromMgmt(res->status, res->mgmt_changes_res_u.message);
  const mgmt_changes_result& r = res->mgmt_changes_res_u.result;
  if (r.too_old) {
    return absl::OutOfRangeError(absl::StrCat(
        "the daemon's change log no longer reaches back to generation ",
        generation, " (it holds the changes after generation ", r.oldest,
        "; the table is at ", r.generation, "): list the shares instead"));
  }
  ChangeList out;
  out.generation = r.generation;
  out.oldest = r.oldest;
  out.batches.reserve(r.batches.batches_len);
  for (u_int i = 0; i < r.batches.batches_len; ++i) {
    out.batches.push_back(DecodeChangeBatch(r.batches.batches_val[i]));
  }
  return out;
}

absl::StatusOr<FollowSyncResult> RpcClient::FollowSync() {
  Decoded<mgmt_follow_sync_res> res(
      reinterpret_cast<xdrproc_t>(xdr_mgmt_follow_sync_res));
  if (absl::Status s = Call(
          MGMTPROC_FOLLOW_SYNC, reinterpret_cast<xdrproc_t>(XdrNoArgs), nullptr,
          reinterpret_cast<xdrproc_t>(xdr_mgmt_follow_sync_res), res.get());
      !s.ok())
    return s;
  if (res->status != MGMT_OK)
    return StatusFromMgmt(res->status, res->mgmt_follow_sync_res_u.message);
  return DecodeFollowSyncResult(res->mgmt_follow_sync_res_u.result);
}

absl::StatusOr<std::vector<std::string>> RpcClient::Rerecord(
    const std::vector<std::string>& paths) {
  TextsView texts(paths);
  mgmt_rerecord_args args{};
  args.paths.paths_len = texts.size();
  args.paths.paths_val = texts.data();
  Decoded<mgmt_rerecord_res> res(
      reinterpret_cast<xdrproc_t>(xdr_mgmt_rerecord_res));
  if (absl::Status s =
          Call(MGMTPROC_RERECORD,
               reinterpret_cast<xdrproc_t>(xdr_mgmt_rerecord_args), &args,
               reinterpret_cast<xdrproc_t>(xdr_mgmt_rerecord_res), res.get());
      !s.ok())
    return s;
  if (res->status != MGMT_OK)
    return StatusFromMgmt(res->status, res->mgmt_rerecord_res_u.message);
  const auto& l = res->mgmt_rerecord_res_u.lines;
  return DecodeTexts(l.lines_val, l.lines_len);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Client>> Client::Connect(
    const std::string& socket_path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.empty() || socket_path.size() >= sizeof addr.sun_path) {
    return absl::InvalidArgumentError(
        absl::StrCat("socket path \"", socket_path, "\": empty or too long"));
  }
  ::memcpy(addr.sun_path, socket_path.data(), socket_path.size());
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat("socket: ", ::strerror(errno)));
  }
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    int e = errno;
    ::close(fd);
    const std::string why = absl::StrCat(
        "cannot connect to sharemgrd at ", socket_path, ": ", ::strerror(e),
        e == ENOENT || e == ECONNREFUSED ? " (is sharemgrd running?)" : "");
    // The daemon may well be running: the caller may not use its socket
    // (sharemgrd --socket-group), which is a refusal, not an outage.
    if (e == EACCES || e == EPERM) return absl::PermissionDeniedError(why);
    return absl::UnavailableError(why);
  }
  return std::unique_ptr<Client>(new RpcClient(fd, socket_path));
}

}  // namespace libshare

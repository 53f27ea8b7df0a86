#include "mgmt_service.h"

#include <grp.h>
#include <malloc.h>
#include <pwd.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "libshare/fs_identity.h"
#include "libshare/mgmt_codec.h"
#include "libshare/path.h"
#include "libshare/sharetab.h"
#include "log.h"
#include "mgmt_audit.h"
#include "share_access.h"
#include "thread_name.h"

namespace sharemgrd {
namespace {

using libshare::Operation;

// At start, a table of at most this many shares has its view written before
// the first call is served; a bigger one in the background.
constexpr std::size_t kStartSharetabShares = 2000;
// A group commit takes the queued calls up to this many operations in all
// (the first call always): a big batch commits on its own.
constexpr std::size_t kGroupMaxOps = 1000;
constexpr std::size_t kTrimAfterOps = 1000;
// A committed batch of at most this many operations is logged operation by
// operation; a bigger one as counts per operation type.
constexpr std::size_t kAuditOpsListed = 20;
constexpr std::size_t kOriginLogBytes = 512;

char* Mutable(const std::string& s) { return const_cast<char*>(s.c_str()); }

// One mgmt_text straight into `out`, as sharemgr_xdr_string decodes it (a
// declared length past the bytes left, or a NUL inside, fails), without
// the malloc'd C string, its copy and its free.
// Into a std::string or a libshare::Text (an operation's fields).
template <typename T>
bool DecodeText(XDR* x, T* out) {
  u_int size = 0;
  if (!::xdr_u_int(x, &size)) return false;
  if (size == ~0u || !sharemgr_xdr_fits(x, size, 1)) return false;
  if (size == 0) {
    out->clear();
    return true;
  }
  // A memory stream (every call record) hands out the bytes in place: one
  // copy, no zero-filled resize. The padding is skipped unread, as
  // xdr_opaque does.
  const u_int padded = (size + 3) & ~3u;
  if (padded >= size) {
    if (const auto* p = reinterpret_cast<const char*>(
            xdr_inline(x, static_cast<int>(padded)))) {
      if (std::memchr(p, '\0', size) != nullptr) return false;
      *out = std::string_view(p, size);
      return true;
    }
  }
  std::string bytes(size, '\0');
  if (!::xdr_opaque(x, bytes.data(), size)) return false;
  if (std::memchr(bytes.data(), '\0', size) != nullptr) return false;
  *out = bytes;
  return true;
}

// Every XDR-encoded mgmt_op takes at least this many bytes: its type,
// five text lengths, force and fields.
constexpr u_int kMinOpBytes = 8 * 4;

// The number of operations mgmt_batch_args declares (its first field),
// bounded by the record's bytes: at most one per kMinOpBytes.
bool DecodeBatchCount(XDR* x, u_int* count) {
  return ::xdr_u_int(x, count) && sharemgr_xdr_fits(x, *count, kMinOpBytes);
}

// The rest of mgmt_batch_args, after DecodeBatchCount, straight into
// `batch`, field by field in the order rpcgen's xdr_mgmt_batch_args reads
// them: the same bytes are accepted and refused. Sets *bad_type to the
// index of the first operation whose type is unknown (the caller refuses
// the batch naming it), else leaves it.
bool DecodeBatchArgs(XDR* x, u_int count, libshare::Batch* batch,
                     std::size_t* bad_type, int* bad_type_value) {
  // All of them at once. Grown by doubling from 65,536, a vector of
  // 1,000,000 moved 983,040 operations on the way and touched the fresh
  // pages of each bigger copy.
  batch->ops.reserve(count);
  for (u_int i = 0; i < count; ++i) {
    Operation& o = batch->ops.emplace_back();
    enum_t type = 0;
    if (!::xdr_enum(x, &type)) return false;
    if (static_cast<uint32_t>(type) > MGMT_OP_UNSET_OPTION) {
      if (*bad_type == SIZE_MAX) {
        *bad_type = i;
        *bad_type_value = static_cast<int>(type);
      }
    } else {
      o.type = static_cast<Operation::Type>(type);
    }
    bool_t force = FALSE;
    u_int fields = 0;
    if (!DecodeText(x, &o.group) || !DecodeText(x, &o.path) ||
        !DecodeText(x, &o.options) || !DecodeText(x, &o.description) ||
        !DecodeText(x, &o.resource) || !::xdr_bool(x, &force) ||
        !::xdr_u_int(x, &fields) || !DecodeText(x, &o.fs_identity)) {
      return false;
    }
    o.force = force;
    o.set_options = (fields & MGMT_FIELD_OPTIONS) != 0;
    o.set_description = (fields & MGMT_FIELD_DESCRIPTION) != 0;
    o.set_resource = (fields & MGMT_FIELD_RESOURCE) != 0;
  }
  bool_t dry_run = FALSE;
  if (!::xdr_bool(x, &dry_run)) return false;
  batch->dry_run = dry_run;
  return DecodeText(x, &batch->origin);
}

template <typename T>
xdrproc_t Proc(bool_t (*fn)(XDR*, T*)) {
  return reinterpret_cast<xdrproc_t>(fn);
}

// Appends obj encoded by fn to out.
bool Encode(xdrproc_t fn, void* obj, std::string* out) {
  std::size_t size = ::xdr_sizeof(fn, obj);
  std::size_t old = out->size();
  out->resize(old + size);
  XDR x;
  ::xdrmem_create(&x, out->data() + old, static_cast<u_int>(size), XDR_ENCODE);
  bool ok = fn(&x, obj);
  out->resize(old + (ok ? xdr_getpos(&x) : 0));
  xdr_destroy(&x);
  return ok;
}

// An rpcgen-decoded argument, freed when it goes out of scope.
template <typename T>
class Args {
 public:
  explicit Args(xdrproc_t fn) : fn_(fn) { std::memset(&v_, 0, sizeof v_); }
  ~Args() { ::xdr_free(fn_, reinterpret_cast<char*>(&v_)); }
  Args(const Args&) = delete;
  Args& operator=(const Args&) = delete;
  bool Decode(XDR* x) { return fn_(x, &v_); }
  // Frees the decoded value early (big batches).
  void Free() {
    ::xdr_free(fn_, reinterpret_cast<char*>(&v_));
    std::memset(&v_, 0, sizeof v_);
  }
  T& operator*() { return v_; }
  T* operator->() { return &v_; }

 private:
  xdrproc_t fn_;
  T v_;
};

// Encodes a failure of any of the mgmt_*_res unions: they share the layout
// "status, then message unless MGMT_OK".
void EncodeFailure(mgmt_status st, const std::string& message,
                   std::string* out) {
  mgmt_flush_res r{};
  r.status = st;
  r.mgmt_flush_res_u.message = Mutable(message);
  Encode(Proc(xdr_mgmt_flush_res), &r, out);
}

}  // namespace

bool MayChange(uid_t uid, gid_t gid, std::optional<gid_t> admin_gid) {
  if (uid == 0) return true;
  if (!admin_gid.has_value()) return false;
  if (gid == *admin_gid) return true;
  // Supplementary groups of the caller's user (SO_PEERCRED gives only the
  // primary gid).
  std::vector<char> buf(16384);
  passwd pw;
  passwd* found = nullptr;
  if (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) != 0 ||
      found == nullptr) {
    return false;
  }
  int n = 64;
  std::vector<gid_t> groups(n);
  while (::getgrouplist(pw.pw_name, pw.pw_gid, groups.data(), &n) < 0) {
    groups.resize(static_cast<std::size_t>(n) * 2);
    n = static_cast<int>(groups.size());
  }
  for (int i = 0; i < n; ++i) {
    if (groups[static_cast<std::size_t>(i)] == *admin_gid) return true;
  }
  return false;
}

MgmtService::MgmtService(libshare::Catalog* catalog,
                         authcache::AuthCache* cache, MountService* mounts,
                         std::string sharetab_path,
                         std::optional<gid_t> admin_gid)
    : catalog_(catalog),
      cache_(cache),
      mounts_(mounts),
      admin_gid_(admin_gid),
      // Indexed by procedure number (11 is PREPARE_BATCH).
      stats_({"MGMT_NULL", "BATCH", "LIST_GROUPS", "LIST_SHARES", "SHARETAB",
              "CHECK", "STATS", "CACHE_FLUSH", "CHANGES_SINCE", "MOUNTS",
              "FOLLOW_SYNC", "PREPARE_BATCH"}),
      changes_(catalog->generation()),
      sharetab_(std::move(sharetab_path), cache,
                [this](const std::string& file) {
                  return WriteServedSharetab(file);
                }) {}

MgmtService::~MgmtService() { Stop(); }

void MgmtService::Stop() {
  sharetab_.Stop();
  absl::MutexLock l(&release_mu_);
  if (release_thread_.joinable()) release_thread_.join();
}

void MgmtService::WaitForSharetab() {
  sharetab_.Request(std::max<uint64_t>(1, catalog_->generation()),
                    /*wait=*/true);
}

void MgmtService::RefreshSharetab() {
  if (catalog_->share_count() <= kStartSharetabShares) {
    sharetab_.Write();
    return;
  }
  // The table's generation may be unchanged (a share stopped or started
  // being served): ask for a write of the table as it is.
  sharetab_.RequestRefresh();
}

bool MgmtService::Served(std::string_view path, bool mountpoint) const {
  if (served_ == nullptr) return true;
  thread_local std::string buffer;  // no allocation per share
  buffer.assign(path);
  return !served_->NotServed(buffer, false, mountpoint).has_value();
}

std::vector<libshare::SharetabEntry> MgmtService::ServedSharetabEntries()
    const {
  std::vector<libshare::SharetabEntry> entries = catalog_->SharetabEntries();
  entries.erase(std::remove_if(entries.begin(), entries.end(),
                               [&](const libshare::SharetabEntry& e) {
                                 return !Served(e.path, e.mountpoint);
                               }),
                entries.end());
  return entries;
}

absl::Status MgmtService::WriteServedSharetab(const std::string& file) const {
  return catalog_->SharetabText().Write(
      file, [this](std::string_view path, bool mountpoint) {
        return Served(path, mountpoint);
      });
}

void MgmtService::ClearSharetab() { sharetab_.Clear(); }

accept_stat MgmtService::Call(const CallContext& ctx, XDR* args,
                              std::string* out) {
  const auto start = std::chrono::steady_clock::now();
  bool error = false;
  accept_stat result = SUCCESS;
  // The listings whose replies grow with the table, for callers under the
  // budget of unread replies (daemon.cc, kMgmtReplyBudget): built a few
  // at a time (each holds the table's texts while it is built), and
  // refused rather than queued when their reply would pass the budget.
  const bool big_reply =
      ctx.proc == MGMTPROC_LIST_SHARES || ctx.proc == MGMTPROC_SHARETAB ||
      ctx.proc == MGMTPROC_CHANGES_SINCE || ctx.proc == MGMTPROC_MOUNTS;
  std::optional<ReaderListingSlot> slot;
  if (big_reply && ctx.replies_held != nullptr) {
    if (ReplyOverBudget(ctx, 0)) return ReplyBusy(ctx, out);
    slot.emplace(this);
  }
  switch (ctx.proc) {
    case MGMTPROC_NULL:
      break;
    case MGMTPROC_BATCH:
      result = Batch(ctx, args, out, &error);
      break;
    case MGMTPROC_LIST_GROUPS: {
      std::vector<libshare::GroupInfo> groups = catalog_->ListGroups();
      if (follow_error_) {
        for (libshare::GroupInfo& gi : groups) {
          gi.follow_error = follow_error_(gi);
        }
      }
      // Views into `groups`, which outlives the encoding.
      std::vector<mgmt_group> g =
          libshare::EncodeAll(groups, libshare::EncodeGroup);
      mgmt_list_groups_res r{};
      r.status = MGMT_OK;
      r.mgmt_list_groups_res_u.groups.groups_len = static_cast<u_int>(g.size());
      r.mgmt_list_groups_res_u.groups.groups_val = g.data();
      if (!Encode(Proc(xdr_mgmt_list_groups_res), &r, out)) result = SYSTEM_ERR;
      break;
    }
    case MGMTPROC_LIST_SHARES:
      result = ListShares(args, out, &error);
      break;
    case MGMTPROC_SHARETAB: {
      std::vector<libshare::SharetabEntry> entries = ServedSharetabEntries();
      // Views into `entries`, which outlives the encoding.
      std::vector<mgmt_sharetab_entry> e =
          libshare::EncodeAll(entries, libshare::EncodeSharetabEntry);
      mgmt_sharetab_res r{};
      r.status = MGMT_OK;
      r.mgmt_sharetab_res_u.entries.entries_len = static_cast<u_int>(e.size());
      r.mgmt_sharetab_res_u.entries.entries_val = e.data();
      if (!Encode(Proc(xdr_mgmt_sharetab_res), &r, out)) result = SYSTEM_ERR;
      break;
    }
    case MGMTPROC_CHECK:
      result = Check(args, out, &error);
      break;
    case MGMTPROC_STATS:
      result = Stats(out);
      break;
    case MGMTPROC_MOUNTS:
      result = Mounts(out);
      break;
    case MGMTPROC_CACHE_FLUSH: {
      if (!ctx.has_peer_cred ||
          !MayChange(ctx.peer_uid, ctx.peer_gid, admin_gid_)) {
        error = true;
        EncodeFailure(MGMT_ERR_PERM,
                      absl::StrCat("permission denied: flushing the cache "
                                   "needs root or the admin group (caller uid ",
                                   ctx.peer_uid, ")"),
                      out);
        break;
      }
      cache_->Flush();
      LogLine(absl::StrCat("authorization cache flushed by ", Caller(ctx)));
      if (kernel_.flush) {
        if (absl::Status s = kernel_.flush(); !s.ok()) {
          // The authorization cache was flushed; say why the kernel's
          // was not.
          error = true;
          EncodeFailure(MGMT_ERR_INTERNAL,
                        absl::StrCat("kernel caches: ", s.message()), out);
          break;
        }
        LogLine("kernel export caches flushed");
      }
      mgmt_flush_res r{};
      r.status = MGMT_OK;
      Encode(Proc(xdr_mgmt_flush_res), &r, out);
      break;
    }
    case MGMTPROC_CHANGES_SINCE:
      result = ChangesSince(args, out, &error);
      break;
    case MGMTPROC_FOLLOW_SYNC:
      result = FollowSync(ctx, out, &error);
      break;
    case MGMTPROC_PREPARE_BATCH:
      result = PrepareBatch(ctx, args, out, &error);
      break;
    case MGMTPROC_RERECORD:
      result = Rerecord(ctx, args, out, &error);
      break;
    default:
      result = PROC_UNAVAIL;
  }
  if (slot.has_value() && result == SUCCESS &&
      ReplyOverBudget(ctx, out->size())) {
    out->clear();
    return ReplyBusy(ctx, out);
  }
  if (result != PROC_UNAVAIL) {
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                  std::chrono::steady_clock::now() - start)
                  .count();
    stats_.Record(ctx.proc, static_cast<uint64_t>(us),
                  error || result != SUCCESS);
  }
  return result;
}

MgmtService::ReaderListingSlot::ReaderListingSlot(MgmtService* s) : s_(s) {
  s_->reader_listings_mu_.LockWhen(absl::Condition(
      +[](int* n) { return *n < kReaderListingsAtOnce; },
      &s_->reader_listings_));
  ++s_->reader_listings_;
  s_->reader_listings_mu_.Unlock();
}

MgmtService::ReaderListingSlot::~ReaderListingSlot() {
  absl::MutexLock l(&s_->reader_listings_mu_);
  --s_->reader_listings_;
}

accept_stat MgmtService::ReplyBusy(const CallContext& ctx, std::string* out) {
  EncodeFailure(MGMT_ERR_INTERNAL,
                "busy: callers without change rights have not read the "
                "replies the daemon holds for them (their limit together); "
                "try again in a few seconds",
                out);
  stats_.Record(ctx.proc, 0, true);
  return SUCCESS;
}

accept_stat MgmtService::ListShares(XDR* args, std::string* out, bool* error) {
  Args<mgmt_list_shares_args> a(Proc(xdr_mgmt_list_shares_args));
  if (!a.Decode(args)) return GARBAGE_ARGS;
  const std::vector<std::string> names =
      libshare::DecodeTexts(a->groups.groups_val, a->groups.groups_len);
  absl::StatusOr<std::vector<libshare::ShareInfo>> shares =
      catalog_->ListShares(names);
  if (!shares.ok()) {
    *error = true;
    EncodeFailure(libshare::MgmtStatusOf(shares.status()),
                  std::string(shares.status().message()), out);
    return SUCCESS;
  }
  // Why a share is not served, and its file system's identity where it
  // differs from the recorded one: the daemon's to say.
  for (libshare::ShareInfo& si : *shares) {
    si.not_served =
        served_ != nullptr
            ? served_->NotServed(si.path, false, si.mountpoint).value_or("")
            : std::string();
    si.live_fs_identity = !si.fs_identity.empty() && si.not_served.empty()
                              ? LiveIdentityDiffering(si.path, si.fs_identity)
                              : std::string();
  }
  // Views into *shares, which outlives the encoding.
  std::vector<mgmt_share> s =
      libshare::EncodeAll(*shares, libshare::EncodeShare);
  mgmt_list_shares_res r{};
  r.status = MGMT_OK;
  r.mgmt_list_shares_res_u.shares.shares_len = static_cast<u_int>(s.size());
  r.mgmt_list_shares_res_u.shares.shares_val = s.data();
  return Encode(Proc(xdr_mgmt_list_shares_res), &r, out) ? SUCCESS : SYSTEM_ERR;
}

std::string MgmtService::LiveIdentityDiffering(const std::string& path,
                                               const std::string& recorded) {
  if (!live_identity_) return "";
  std::string live = live_identity_(path);
  if (live == recorded) return "";
  return live.empty() ? "none" : live;
}

bool MgmtService::RefusedUnlessMayChange(const CallContext& ctx,
                                         absl::string_view what,
                                         std::string* out, bool* error) {
  if (ctx.has_peer_cred && MayChange(ctx.peer_uid, ctx.peer_gid, admin_gid_)) {
    return false;
  }
  *error = true;
  EncodeFailure(
      MGMT_ERR_PERM,
      absl::StrCat("permission denied: ", what, " needs root",
                   admin_gid_ ? " or membership of the admin group" : "",
                   " (caller uid ", ctx.peer_uid, ")"),
      out);
  return true;
}

accept_stat MgmtService::PrepareBatch(const CallContext& ctx, XDR* args,
                                      std::string* out, bool* error) {
  Args<mgmt_prepare_args> a(Proc(xdr_mgmt_prepare_args));
  if (!a.Decode(args)) return GARBAGE_ARGS;
  // The same rights as the batch it announces. The announcement is
  // answered and changes nothing: the batch's memory is made when the
  // batch comes (its overlay's BatchArena, libshare/batch_arena.h).
  if (RefusedUnlessMayChange(ctx, "preparing a batch", out, error)) {
    return SUCCESS;
  }
  mgmt_prepare_res r{};
  r.status = MGMT_OK;
  return Encode(Proc(xdr_mgmt_prepare_res), &r, out) ? SUCCESS : SYSTEM_ERR;
}

accept_stat MgmtService::Batch(const CallContext& ctx, XDR* args,
                               std::string* out, bool* error) {
  // Authorized before decoding: decoding a big batch costs several times
  // its size in memory, which a caller who may not change anything must
  // not be able to make us spend.
  if (RefusedUnlessMayChange(ctx, "changing shares", out, error)) {
    return SUCCESS;
  }
  using Clock = std::chrono::steady_clock;
  const Clock::time_point arrived = Clock::now();
  libshare::Batch batch;
  u_int count = 0;
  if (!DecodeBatchCount(args, &count)) return GARBAGE_ARGS;
  std::size_t bad_type = SIZE_MAX;
  int bad_type_value = 0;
  if (!DecodeBatchArgs(args, count, &batch, &bad_type, &bad_type_value)) {
    return GARBAGE_ARGS;
  }
  // Everything is in `batch` now: the record goes before the batch is
  // validated beside it.
  ReleaseCallRecord(ctx);
  const Clock::time_point decoded = Clock::now();
  if (bad_type != SIZE_MAX) {
    *error = true;
    EncodeFailure(
        MGMT_ERR_INVAL,
        absl::StrCat("operation ", bad_type, ": unknown type ", bad_type_value),
        out);
    return SUCCESS;
  }
  if (batch.origin.size() > kOriginLogBytes) {
    batch.origin.resize(kOriginLogBytes);
  }

  BatchCaller caller;
  caller.who = Caller(ctx);
  if (ctx.has_peer_cred) {
    caller.uid = ctx.peer_uid;
    caller.pid = ctx.peer_pid;
  }
  caller.arrived = arrived;
  caller.decode_ms =
      std::chrono::duration<double, std::milli>(decoded - arrived).count();
  libshare::BatchResult r = ApplyBatch(batch, caller);
  *error = !r.ok();
  const accept_stat encoded = EncodeBatchResult(r, out);
  if (batch.ops.size() >= kTrimAfterOps) {
    ReleaseAfterReply(std::move(batch), std::move(r));
  }
  return encoded;
}

void MgmtService::ReleaseAfterReply(libshare::Batch batch,
                                    libshare::BatchResult result) {
  // Freeing a big batch's operations and change list is a free() per text
  // (a million of each at 1,000,000 shares, a few hundred ms), and
  // malloc_trim then walks the heap: both on a thread of their own, so the
  // reply goes out first. The trim gives the freed megabytes back, so RSS
  // reflects the table, not the last batch.
  auto release = [](libshare::Batch b, libshare::BatchResult r) {
    b = libshare::Batch();
    r = libshare::BatchResult();
    ::malloc_trim(0);
  };
  absl::MutexLock l(&release_mu_);
  if (release_thread_.joinable()) release_thread_.join();  // long done
  try {
    release_thread_ = std::thread(
        [release, b = std::move(batch), r = std::move(result)]() mutable {
          NameThisThread("sm-release");
          release(std::move(b), std::move(r));
        });
  } catch (const std::system_error&) {
    release(std::move(batch), std::move(result));  // no thread: here
  }
}

libshare::BatchResult MgmtService::ApplyBatch(const libshare::Batch& batch) {
  return ApplyBatch(batch, BatchCaller());
}

libshare::BatchResult MgmtService::ApplyBatch(const libshare::Batch& batch,
                                              const BatchCaller& caller) {
  // Group commit, as LevelDB's DBImpl::Write: every call queues; the one
  // at the front leads, applying the calls queued by then in one
  // transaction, while the calls arriving meanwhile queue for the next.
  // A call returns once its group committed: durable, as alone.
  Writer w;
  w.batch = &batch;
  w.caller = &caller;
  w.start = caller.arrived.value_or(std::chrono::steady_clock::now());
  writers_mu_.Lock();
  writers_.push_back(&w);
  auto ready = [this, &w]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(writers_mu_) {
    return w.done || writers_.front() == &w;
  };
  writers_mu_.Await(absl::Condition(&ready));
  if (w.done) {
    writers_mu_.Unlock();
    return std::move(w.result);
  }
  // The leader: the calls queued now, up to kGroupMaxOps operations (a big
  // batch is a group of its own, so small calls do not wait behind it).
  std::vector<Writer*> group;
  std::size_t ops = 0;
  for (Writer* x : writers_) {
    if (!group.empty() && ops + x->batch->ops.size() > kGroupMaxOps) break;
    group.push_back(x);
    ops += x->batch->ops.size();
  }
  writers_mu_.Unlock();
  CommitGroup(group);
  writers_mu_.Lock();
  for (std::size_t i = 0; i < group.size(); ++i) {
    writers_.front()->done = true;
    writers_.pop_front();
  }
  writers_mu_.Unlock();
  return std::move(w.result);
}

void MgmtService::Replicated(const libshare::Batch& batch,
                             libshare::BatchResult& result,
                             std::string_view head) {
  BatchCaller caller;
  caller.who = head.empty() ? std::string("the cluster's engine")
                            : absl::StrCat("head ", EscapeForLog(absl::string_view(head.data(), head.size())));
  AfterBatch(batch, caller, std::chrono::steady_clock::now(), 1, result);
  if (result.changed) sharetab_.Request(result.generation, /*wait=*/false);
}

std::size_t MgmtService::queued_batches() {
  absl::MutexLock l(&writers_mu_);
  return writers_.size();
}

void MgmtService::CommitGroup(const std::vector<Writer*>& group) {
  std::vector<const libshare::Batch*> batches;
  batches.reserve(group.size());
  for (const Writer* w : group) batches.push_back(w->batch);
  std::vector<libshare::BatchResult> results(group.size());
  catalog_->ApplyGroup(batches, absl::MakeSpan(results));
  std::size_t committed = 0;
  for (const libshare::BatchResult& r : results) {
    committed += r.ok() && r.changed;
  }
  uint64_t sharetab_generation = 0;
  for (std::size_t i = 0; i < group.size(); ++i) {
    Writer& w = *group[i];
    w.result = std::move(results[i]);
    if (w.result.ok() && w.result.changed) {
      sharetab_generation = w.result.generation;
    }
    AfterBatch(*w.batch, *w.caller, w.start, committed, w.result);
  }
  // The view is rewritten after the replies, in the background, whatever
  // the table's size: no O(N) work on the reply path of a change.
  if (sharetab_generation > 0) {
    sharetab_.Request(sharetab_generation, /*wait=*/false);
  }
}

void MgmtService::AfterBatch(const libshare::Batch& batch,
                             const BatchCaller& caller,
                             std::chrono::steady_clock::time_point start,
                             std::size_t committed, libshare::BatchResult& r) {
  const std::string who =
      caller.who.empty() ? std::string("sharemgrd") : caller.who;
  // A followed exports file's batch names its file (--follow-exports).
  const std::string& said = batch.origin.empty() && !batch.manager.empty()
                                ? batch.manager
                                : batch.origin;
  const std::string origin =
      said.empty() ? std::string()
                   : absl::StrCat(" (",
                                  batch.origin.empty() && !batch.manager.empty()
                                      ? "--follow-exports "
                                      : "",
                                  EscapeForLog(said), ")");
  auto ms = [&start] {
    return static_cast<int64_t>(std::chrono::duration<double, std::milli>(
                                    std::chrono::steady_clock::now() - start)
                                    .count() +
                                0.5);
  };
  if (r.ok() && r.applied > 0) {
    // Decisions are kept by options object: a changed share's new options
    // are a new object, never answered from the old one's decisions. Those
    // made from options that no share holds any more (removed shares, the
    // options a change replaced) are dropped by the view's writer after
    // the reply (a pass over the whole cache: 6 ms at 100,000 entries),
    // rather than left for the LRU; an add leaves every decision valid.
    if (std::any_of(r.changes.begin(), r.changes.end(),
                    [](const libshare::ShareChange& c) {
                      return c.kind != libshare::ShareChange::Kind::kAdded;
                    })) {
      sharetab_.SweepCacheAfterNextWrite();
    }
    if (served_ != nullptr) served_->SharesChanged(r.changes);
    if (!r.changes_complete) {
      // Without the list, what the kernel holds cannot be rewritten
      // entry by entry: drop it all rather than serve stale grants.
      LogLine(
          "batch: out of memory listing its changes; flushing the "
          "kernel's export caches");
      if (kernel_.flush) {
        if (absl::Status s = kernel_.flush(); !s.ok()) {
          LogLine(absl::StrCat("kernel caches: ", s.message()));
        }
      }
    } else if (kernel_.changed) {
      kernel_.changed(r.changes);
    }
    // The audit trail: who, what made it, and what it did.
    const bool listed = batch.ops.size() <= kAuditOpsListed;
    const std::string counts = CountOperations(batch);
    // A batch whose every operation changed nothing (enabling an enabled
    // group, setting the options it has) says so, under the generation it
    // left as it was.
    const std::string head = absl::StrCat(
        r.changed ? "change generation " : "no change at generation ",
        r.generation);
    LogLine(absl::StrCat(
        head, " by ", who, origin, ": ", r.applied,
        r.applied == 1 ? " operation" : " operations",
        r.changed ? " applied in " : " changed nothing in ",
        ms(), " ms",
        committed > 1
            ? absl::StrCat(" (one commit with ", committed - 1,
                           committed == 2 ? " other call)" : " other calls)")
            : "",
        listed ? "" : ": ", listed ? "" : counts,
        // Where a big batch's time went (a call's decoding, validation,
        // the commit, linking, the change list; the rest is waiting for an
        // earlier group and this report).
        listed ? ""
               : absl::StrFormat(" (%svalidation %.0f ms, commit %.0f ms, "
                                 "linking %.0f ms, change list %.0f ms)",
                                 caller.arrived
                                     ? absl::StrFormat("decoding %.0f ms, ",
                                                       caller.decode_ms)
                                     : std::string(),
                                 r.times.validate_ms, r.times.commit_ms,
                                 r.times.link_ms, r.times.changes_ms)));
    std::vector<std::string> described;
    if (listed) {
      for (const Operation& op : batch.ops) {
        described.push_back(DescribeOperation(op));
        LogLine(absl::StrCat(head, ": ", described.back()));
      }
    }
    // The change log lists batches that made a generation; one that
    // changed nothing made none (sharectl changes never shows it).
    if (!r.changed) return;
    libshare::ChangeRecord record;
    record.generation = r.generation;
    record.time = absl::ToUnixSeconds(absl::Now());
    record.uid = caller.uid;
    record.pid = caller.pid;
    record.origin = said;
    record.operations = r.applied;
    record.summary = listed ? absl::StrJoin(described, "; ") : counts;
    // Moved, not copied: no one reads the result's list after this (a
    // copy of 15,000 changes cost a few ms before the reply). A list too
    // long to keep (a big batch) stays with the result, freed after it.
    const bool kept = changes_.Keeps(r.changes.size());
    if (kept) record.shares = std::move(r.changes);
    changes_.Add(std::move(record), r.changes_complete && kept);
  } else if (!r.ok() && !batch.dry_run) {
    LogLine(absl::StrCat(
        "batch by ", who, origin, " refused, nothing changed: ",
        r.errors.empty()
            ? absl::StrCat("commit failed: ", r.commit_error)
            : absl::StrCat(r.errors.size(), " of ", batch.ops.size(),
                           " operations refused"),
        " (", ms(), " ms)"));
  }
}

accept_stat MgmtService::EncodeBatchResult(const libshare::BatchResult& r,
                                           std::string* out) {
  // Views into `r`, which outlives the encoding.
  libshare::BatchResultView view(r);
  mgmt_batch_res res{};
  res.status = MGMT_OK;
  res.mgmt_batch_res_u.result = view.get();
  return Encode(Proc(xdr_mgmt_batch_res), &res, out) ? SUCCESS : SYSTEM_ERR;
}

accept_stat MgmtService::ChangesSince(XDR* args, std::string* out,
                                      bool* error) {
  Args<mgmt_changes_args> a(Proc(xdr_mgmt_changes_args));
  if (!a.Decode(args)) return GARBAGE_ARGS;
  const uint64_t since = a->since;
  const uint64_t now = catalog_->generation();
  if (since > now) {
    *error = true;
    EncodeFailure(MGMT_ERR_INVAL,
                  absl::StrCat("generation ", since,
                               " is ahead of the table's (", now, ")"),
                  out);
    return SUCCESS;
  }
  ChangeLog::Answer answer = changes_.Since(since);
  // Views into `answer`, which outlives the encoding.
  libshare::ChangeBatchesView batches(answer.batches);
  mgmt_changes_res res{};
  res.status = MGMT_OK;
  mgmt_changes_result& r = res.mgmt_changes_res_u.result;
  r.generation = now;
  r.oldest = answer.oldest;
  r.too_old = answer.too_old;
  r.batches.batches_len = batches.size();
  r.batches.batches_val = batches.data();
  return Encode(Proc(xdr_mgmt_changes_res), &res, out) ? SUCCESS : SYSTEM_ERR;
}

// Decides as MNT would (ShareAccess, with the on-disk walk) for an
// AUTH_SYS caller with uid 0, so that "root" in the answer says whether
// root= admits the client; without the reserved-port check. A name that
// does not exist inside the share keeps the lists' answer, the reason
// saying what MNT would answer; anything MNT refuses as unshared (a
// symlink out, a share path that became a link, no search right) is
// access none with its reason.
accept_stat MgmtService::Check(XDR* args, std::string* out, bool* error) {
  Args<mgmt_check_args> a(Proc(xdr_mgmt_check_args));
  if (!a.Decode(args)) return GARBAGE_ARGS;
  libshare::CheckArgs asked = libshare::DecodeCheckArgs(*a);
  const std::string& client = asked.client;
  const std::string& raw_path = asked.path;
  std::string& sec = asked.sec;
  if (sec.empty()) sec = "sys";
  std::optional<libshare::SecFlavor> flavor;
  for (libshare::SecFlavor f :
       {libshare::SecFlavor::kSys, libshare::SecFlavor::kNone,
        libshare::SecFlavor::kDh, libshare::SecFlavor::kKrb5,
        libshare::SecFlavor::kKrb5i, libshare::SecFlavor::kKrb5p}) {
    if (libshare::SecFlavorName(f) == sec) flavor = f;
  }
  if (!flavor.has_value()) {
    *error = true;
    EncodeFailure(MGMT_ERR_INVAL,
                  absl::StrCat("sec \"", sec,
                               "\": not a flavor (sys, none, dh, krb5, krb5i, "
                               "krb5p)"),
                  out);
    return SUCCESS;
  }

  std::optional<libshare::IpAddress> addr = libshare::IpAddress::Parse(client);
  if (!addr.has_value()) {
    absl::StatusOr<libshare::IpAddress> resolved = cache_->AddressOf(client);
    if (!resolved.ok()) {
      *error = true;
      EncodeFailure(MGMT_ERR_NOENT,
                    absl::StrCat("client \"", client,
                                 "\": ", resolved.status().message()),
                    out);
      return SUCCESS;
    }
    addr = *resolved;
  }
  AccessResult r = ShareAccess(catalog_, cache_, served_)
                       .Decide({.client = *addr,
                                .path = raw_path,
                                .flavor = *flavor,
                                .uid = 0,
                                .gid = 0,
                                .resolve = true,
                                .explain = true});
  if (r.outcome == AccessOutcome::kBadPath) {
    *error = true;
    EncodeFailure(MGMT_ERR_INVAL, r.reason, out);
    return SUCCESS;
  }

  libshare::CheckResult c;
  c.client = std::move(client);
  c.address = addr->ToString();
  c.access = "none";
  c.reason = r.reason;
  c.sec = std::move(sec);
  const std::optional<libshare::ShareMatch>& m = r.share;
  if (m.has_value()) c.share = m->path;
  switch (r.outcome) {
    case AccessOutcome::kNosub:
      c.option = "nosub";
      break;
    case AccessOutcome::kGranted:
    case AccessOutcome::kDenied:
    case AccessOutcome::kNoent:
    case AccessOutcome::kNotdir:
      c.access = std::string(authcache::AccessName(r.decision.access));
      c.root = r.decision.root;
      c.option = r.decision.option;
      c.entry = r.decision.entry;
      if (r.outcome == AccessOutcome::kNoent ||
          r.outcome == AccessOutcome::kNotdir) {
        c.reason = absl::StrCat(
            r.decision.reason, "; but MNT answers ",
            r.outcome == AccessOutcome::kNoent ? "NOENT: " : "NOTDIR: ",
            r.reason);
      }
      break;
    case AccessOutcome::kNotShared:
    case AccessOutcome::kBadPath:
      break;
  }
  // In kernel mode an option the kernel cannot apply is never dropped in
  // silence: say so with the decision.
  if (kernel_.stats && m.has_value()) {
    std::vector<std::string> notes =
        libshare::OptionsWithoutKernelEffect(*m->options);
    if (!notes.empty()) {
      absl::StrAppend(&c.reason,
                      "; in kernel mode these options have no "
                      "effect: ",
                      absl::StrJoin(notes, "; "));
    }
  }
  if (m.has_value() && m->fs_uuid) {
    c.fs_identity = libshare::FormatFsIdentity(*m->fs_uuid);
    // A share not served is not on its file system: the reason says so.
    if (served_ == nullptr ||
        !served_->NotServed(m->path, false, m->options->mountpoint)) {
      c.live_fs_identity = LiveIdentityDiffering(m->path, c.fs_identity);
    }
  }
  mgmt_check_res res{};
  res.status = MGMT_OK;
  // A view into `c`, which outlives the encoding.
  res.mgmt_check_res_u.result = libshare::EncodeCheckResult(c);
  return Encode(Proc(xdr_mgmt_check_res), &res, out) ? SUCCESS : SYSTEM_ERR;
}

void MgmtService::ShareCounts(libshare::DaemonStats* s) const {
  uint64_t disabled = 0;
  for (const libshare::GroupInfo& g : catalog_->ListGroups()) {
    if (!g.enabled) disabled += g.share_count;
  }
  uint64_t not_served = 0;
  if (served_ != nullptr) {
    for (const std::string& path : served_->NotServedPaths()) {
      std::optional<libshare::ShareMatch> m = catalog_->FindNearest(path);
      if (m.has_value() && m->path == path) ++not_served;  // active
    }
  }
  s->shares_disabled = std::min<uint64_t>(disabled, s->shares);
  s->shares_not_served =
      std::min<uint64_t>(not_served, s->shares - s->shares_disabled);
  s->shares_served = s->shares - s->shares_disabled - s->shares_not_served;
}

accept_stat MgmtService::Stats(std::string* out) {
  libshare::LoadStats load = catalog_->load_stats();
  libshare::DaemonStats d;
  d.cache = cache_->counters();
  std::vector<ProcedureStats> procs = mounts_->stats();
  for (ProcedureStats& p : stats_.Snapshot()) procs.push_back(std::move(p));
  d.requests.reserve(procs.size());
  for (ProcedureStats& p : procs) {
    d.requests.push_back(
        {std::move(p.name), p.count, p.errors, p.p50_us, p.p99_us});
  }
  d.sharetab_error = sharetab_.error();
  d.shares = catalog_->share_count();
  d.groups = catalog_->group_count();
  d.generation = catalog_->generation();
  d.load_ms = load.load_ms;
  d.load_threads = load.threads;
  d.mounts = mounts_->mount_count();
  d.mounts_dropped = mounts_->mounts_dropped();
  d.mount_limit = mounts_->mount_limit();
  d.mount_client_limit = mounts_->mount_client_limit();
  if (kernel_.stats) d.kernel = kernel_.stats();
  d.store = catalog_->store_status();
  if (follow_sync_.status) d.followed = follow_sync_.status();
  d.insecure = mounts_->insecure();
  ShareCounts(&d);
  // Views into `d`, which outlives the encoding.
  libshare::DaemonStatsView view(d);
  mgmt_stats_res res{};
  res.status = MGMT_OK;
  res.mgmt_stats_res_u.stats = view.get();
  return Encode(Proc(xdr_mgmt_stats_res), &res, out) ? SUCCESS : SYSTEM_ERR;
}

accept_stat MgmtService::FollowSync(const CallContext& ctx, std::string* out,
                                    bool* error) {
  if (RefusedUnlessMayChange(ctx, "re-reading the followed exports files", out,
                             error)) {
    return SUCCESS;
  }
  if (!follow_sync_.sync) {
    *error = true;
    EncodeFailure(MGMT_ERR_NOENT,
                  "sharemgrd follows no exports files: start it with "
                  "--follow-exports FILE (for example --follow-exports "
                  "/etc/exports --follow-exports '/etc/exports.d/*.exports')",
                  out);
    return SUCCESS;
  }
  LogLine(absl::StrCat("follow: re-reading the followed files now, asked by ",
                       Caller(ctx)));
  libshare::FollowSyncResult result;
  result.files = follow_sync_.sync();
  // Committed; in kernel mode, also wait until the kernel is told.
  if (kernel_.wait_pushed) kernel_.wait_pushed();
  for (const libshare::FollowedFile& f : result.files) {
    if (!f.error.empty()) *error = true;
  }
  result.patterns = follow_sync_.patterns;
  result.generation = catalog_->generation();
  // Views into `result`, which outlives the encoding.
  libshare::FollowSyncView view(result);
  mgmt_follow_sync_res res{};
  res.status = MGMT_OK;
  res.mgmt_follow_sync_res_u.result = view.get();
  return Encode(Proc(xdr_mgmt_follow_sync_res), &res, out) ? SUCCESS
                                                           : SYSTEM_ERR;
}

accept_stat MgmtService::Rerecord(const CallContext& ctx, XDR* args,
                                  std::string* out, bool* error) {
  Args<mgmt_rerecord_args> a(Proc(xdr_mgmt_rerecord_args));
  if (!a.Decode(args)) return GARBAGE_ARGS;
  if (RefusedUnlessMayChange(ctx, "recording file systems anew", out,
                             error)) {
    return SUCCESS;
  }
  const std::vector<std::string> paths =
      libshare::DecodeTexts(a->paths.paths_val, a->paths.paths_len);
  absl::StatusOr<std::vector<std::string>> lines =
      served_ != nullptr
          ? served_->Rerecord(paths)
          : absl::StatusOr<std::vector<std::string>>(absl::UnavailableError(
                "this daemon does not watch file systems"));
  if (!lines.ok()) {
    *error = true;
    EncodeFailure(libshare::MgmtStatusOf(lines.status()),
                  std::string(lines.status().message()), out);
    return SUCCESS;
  }
  LogLine(absl::StrCat("rerecord asked by ", Caller(ctx)));
  if (kernel_.wait_pushed) kernel_.wait_pushed();
  libshare::TextsView m(*lines);
  mgmt_rerecord_res res{};
  res.status = MGMT_OK;
  res.mgmt_rerecord_res_u.lines.lines_len = m.size();
  res.mgmt_rerecord_res_u.lines.lines_val = m.data();
  return Encode(Proc(xdr_mgmt_rerecord_res), &res, out) ? SUCCESS : SYSTEM_ERR;
}

accept_stat MgmtService::Mounts(std::string* out) {
  std::vector<MountListing> list = mounts_->ListMounts();
  std::vector<libshare::MountInfo> mounts(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    mounts[i].client = list[i].client.ToString();
    mounts[i].path = std::move(list[i].path);
    mounts[i].since = list[i].since;
  }
  // Views into `mounts`, which outlives the encoding.
  std::vector<mgmt_mount> m =
      libshare::EncodeAll(mounts, libshare::EncodeMount);
  mgmt_mounts_res res{};
  res.status = MGMT_OK;
  res.mgmt_mounts_res_u.mounts.mounts_len = static_cast<u_int>(m.size());
  res.mgmt_mounts_res_u.mounts.mounts_val = m.data();
  return Encode(Proc(xdr_mgmt_mounts_res), &res, out) ? SUCCESS : SYSTEM_ERR;
}

}  // namespace sharemgrd

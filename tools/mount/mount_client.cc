#include "mount_client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <rpc/rpc.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <random>
#include <utility>

#include "absl/strings/str_cat.h"

namespace mountclient {
namespace {

// MOUNT procedures (RFC 1813 appendix I; the same numbers in version 1).
constexpr uint32_t kProcNull = 0;
constexpr uint32_t kProcMnt = 1;
constexpr uint32_t kProcDump = 2;
constexpr uint32_t kProcUmnt = 3;
constexpr uint32_t kProcUmntall = 4;
constexpr uint32_t kProcExport = 5;

// Lists in replies are bounded so a broken server cannot make us allocate
// without limit.
constexpr uint32_t kMaxListEntries = 1 << 22;
constexpr uint32_t kMaxFlavors = 64;

// A large receive buffer: an EXPORT reply with 15,000 shares is about 1 MB,
// and libtirpc's default (about 9 KB) costs a read() per fragment piece.
constexpr u_int kTcpRecvSize = 1 << 20;

// The XDR routines below follow RFC 1813 appendix I; `obj` is the C++ value
// to encode or decode. libtirpc calls them through xdrproc_t with these two
// arguments, as it calls rpcgen's routines.
using XdrFn = bool_t (*)(XDR*, void*);

bool_t XdrDirpathEncode(XDR* xdrs, void* obj) {
  auto* path = static_cast<const std::string*>(obj);
  char* p = const_cast<char*>(path->c_str());
  return xdr_string(xdrs, &p, kMaxPathLen);
}

// Decodes an XDR string of at most `max` bytes into `out`.
bool DecodeString(XDR* xdrs, u_int max, std::string* out) {
  char buf[kMaxPathLen + 1];
  char* p = buf;
  if (max > kMaxPathLen) return false;
  if (!xdr_string(xdrs, &p, max)) return false;
  out->assign(p);
  return true;
}

bool_t XdrVoid(XDR*, void*) { return TRUE; }

// mountres3: status, then on MNT3_OK fhandle3 (opaque<64>) and int
// auth_flavors<>.
bool_t XdrMountres3Decode(XDR* xdrs, void* obj) {
  auto* r = static_cast<MntReply*>(obj);
  int status;
  if (!xdr_int(xdrs, &status)) return FALSE;
  r->status = status;
  if (status != kMnt3Ok) return TRUE;
  char fh[kFhSize3];
  char* p = fh;
  u_int len = 0;
  if (!xdr_bytes(xdrs, &p, &len, kFhSize3)) return FALSE;
  r->fh.assign(fh, fh + len);
  u_int n = 0;
  if (!xdr_u_int(xdrs, &n) || n > kMaxFlavors) return FALSE;
  r->flavors.resize(n);
  for (u_int i = 0; i < n; ++i) {
    if (!xdr_int(xdrs, &r->flavors[i])) return FALSE;
  }
  return TRUE;
}

// fhstatus (version 1): status, then on 0 a fixed 32-byte fhandle.
bool_t XdrFhstatusDecode(XDR* xdrs, void* obj) {
  auto* r = static_cast<MntReply*>(obj);
  u_int status;
  if (!xdr_u_int(xdrs, &status)) return FALSE;
  r->status = static_cast<int>(status);
  if (status != 0) return TRUE;
  char fh[kFhSize1];
  if (!xdr_opaque(xdrs, fh, kFhSize1)) return FALSE;
  r->fh.assign(fh, fh + kFhSize1);
  return TRUE;
}

// An XDR optional-data linked list: each element is preceded by TRUE, the
// list ends with FALSE.
bool NextListElement(XDR* xdrs, bool_t* more) { return xdr_bool(xdrs, more); }

// mountlist: *mountbody {name ml_hostname; dirpath ml_directory; next}.
bool_t XdrMountlistDecode(XDR* xdrs, void* obj) {
  auto* out = static_cast<std::vector<MountRecord>*>(obj);
  bool_t more;
  if (!NextListElement(xdrs, &more)) return FALSE;
  while (more) {
    if (out->size() >= kMaxListEntries) return FALSE;
    MountRecord m;
    if (!DecodeString(xdrs, kMaxNameLen, &m.host) ||
        !DecodeString(xdrs, kMaxPathLen, &m.dir)) {
      return FALSE;
    }
    out->push_back(std::move(m));
    if (!NextListElement(xdrs, &more)) return FALSE;
  }
  return TRUE;
}

// Where an EXPORT reply goes: into `entries`, or, when that is null, only
// counted (so a load generator times the server, not our allocations).
struct ExportSink {
  std::vector<ExportEntry>* entries = nullptr;
  size_t count = 0;
};

// exports: *exportnode {dirpath ex_dir; groups ex_groups; next}, where
// groups is *groupnode {name gr_name; next}.
bool_t XdrExportsDecode(XDR* xdrs, void* obj) {
  auto* sink = static_cast<ExportSink*>(obj);
  std::string dir, group;
  bool_t more;
  if (!NextListElement(xdrs, &more)) return FALSE;
  while (more) {
    if (sink->count >= kMaxListEntries) return FALSE;
    if (!DecodeString(xdrs, kMaxPathLen, &dir)) return FALSE;
    ExportEntry* e = nullptr;
    if (sink->entries != nullptr) {
      e = &sink->entries->emplace_back();
      e->dir = dir;
    }
    ++sink->count;
    bool_t more_groups;
    uint32_t groups = 0;
    if (!NextListElement(xdrs, &more_groups)) return FALSE;
    while (more_groups) {
      if (++groups >= kMaxListEntries) return FALSE;
      if (!DecodeString(xdrs, kMaxNameLen, &group)) return FALSE;
      if (e != nullptr) e->groups.push_back(group);
      if (!NextListElement(xdrs, &more_groups)) return FALSE;
    }
    if (!NextListElement(xdrs, &more)) return FALSE;
  }
  return TRUE;
}

absl::Status Call(CLIENT* client, int timeout_ms, uint32_t proc, XdrFn encode,
                  void* args, XdrFn decode, void* result, const char* what) {
  timeval tv;
  tv.tv_sec = timeout_ms / 1000;
  tv.tv_usec = (timeout_ms % 1000) * 1000;
  clnt_stat st =
      clnt_call(client, proc, reinterpret_cast<xdrproc_t>(encode),
                static_cast<char*>(args), reinterpret_cast<xdrproc_t>(decode),
                static_cast<char*>(result), tv);
  if (st == RPC_SUCCESS) return absl::OkStatus();
  std::string msg = absl::StrCat(what, ": ", clnt_sperrno(st));
  if (st == RPC_TIMEDOUT) return absl::DeadlineExceededError(msg);
  if (st == RPC_CANTDECODERES) return absl::DataLossError(msg);
  rpc_err err;
  clnt_geterr(client, &err);
  if (st == RPC_AUTHERROR) {
    absl::StrAppend(&msg, " (auth_stat ", static_cast<int>(err.re_why), ")");
  } else if ((st == RPC_CANTSEND || st == RPC_CANTRECV ||
              st == RPC_SYSTEMERROR) &&
             err.re_errno != 0) {
    // Only these carry an errno; for others the union holds other fields.
    absl::StrAppend(&msg, " (", strerror(err.re_errno), ")");
  }
  return absl::UnavailableError(msg);
}

// Binds `fd` to `source` and a port chosen per `mode`, then (for TCP)
// connects to `server`. Reserved ports are tried from a random start so that
// many clients in one process rarely collide; a port busy on this 4-tuple
// (EADDRINUSE at bind or EADDRNOTAVAIL at connect, e.g. in TIME_WAIT) is
// skipped.
// `text` (IPv4, or IPv6 with or without brackets) and `port` as a socket
// address; false if it is not an address.
bool ToSockaddr(std::string text, uint16_t port, sockaddr_storage* ss,
                socklen_t* len) {
  if (text.size() > 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
  }
  *ss = {};
  auto* sin = reinterpret_cast<sockaddr_in*>(ss);
  if (inet_pton(AF_INET, text.c_str(), &sin->sin_addr) == 1) {
    sin->sin_family = AF_INET;
    sin->sin_port = htons(port);
    *len = sizeof(sockaddr_in);
    return true;
  }
  auto* sin6 = reinterpret_cast<sockaddr_in6*>(ss);
  if (inet_pton(AF_INET6, text.c_str(), &sin6->sin6_addr) == 1) {
    sin6->sin6_family = AF_INET6;
    sin6->sin6_port = htons(port);
    *len = sizeof(sockaddr_in6);
    return true;
  }
  return false;
}

void SetPort(sockaddr_storage* ss, uint16_t port) {
  if (ss->ss_family == AF_INET6) {
    reinterpret_cast<sockaddr_in6*>(ss)->sin6_port = htons(port);
  } else {
    reinterpret_cast<sockaddr_in*>(ss)->sin_port = htons(port);
  }
}

absl::StatusOr<int> OpenSocket(const Options& o, const sockaddr_storage& server,
                               socklen_t server_len) {
  const bool tcp = o.transport == Transport::kTcp;
  const int family = server.ss_family;
  sockaddr_storage local{};
  socklen_t local_len = family == AF_INET6 ? sizeof(sockaddr_in6)
                                           : sizeof(sockaddr_in);
  local.ss_family = static_cast<sa_family_t>(family);
  if (!o.source.empty() &&
      (!ToSockaddr(o.source, 0, &local, &local_len) ||
       local.ss_family != family)) {
    return absl::InvalidArgumentError(
        absl::StrCat("source address \"", o.source,
                     "\": not an address of the server's family"));
  }
  constexpr int kLow = 600, kHigh = 1023;
  thread_local std::mt19937 rng(std::random_device{}());
  const int start = std::uniform_int_distribution<int>(kLow, kHigh)(rng);
  const int attempts =
      o.port_mode == PortMode::kReserved ? kHigh - kLow + 1 : 1;
  int last_errno = 0;
  for (int i = 0; i < attempts; ++i) {
    int fd =
        socket(family, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0);
    if (fd < 0)
      return absl::ResourceExhaustedError(
          absl::StrCat("socket: ", strerror(errno)));
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    const uint16_t lport =
        o.port_mode == PortMode::kReserved
            ? static_cast<uint16_t>(kLow + (start - kLow + i) % (kHigh - kLow + 1))
            : 0;
    SetPort(&local, lport);
    if (bind(fd, reinterpret_cast<sockaddr*>(&local), local_len) != 0) {
      last_errno = errno;
      close(fd);
      if (last_errno == EADDRINUSE) continue;
      return absl::InvalidArgumentError(
          absl::StrCat("bind to ", o.source.empty() ? "*" : o.source, ":",
                       lport, ": ", strerror(last_errno)));
    }
    if (tcp && connect(fd, reinterpret_cast<const sockaddr*>(&server),
                       server_len) != 0) {
      last_errno = errno;
      close(fd);
      if (last_errno == EADDRNOTAVAIL || last_errno == EADDRINUSE) continue;
      return absl::UnavailableError(absl::StrCat(
          "connect to ", o.server, ":", o.port, ": ", strerror(last_errno)));
    }
    return fd;
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      "no free reserved port on ", o.source.empty() ? "*" : o.source, ": ",
      strerror(last_errno)));
}

}  // namespace

std::string MountStatusName(int status) {
  switch (status) {
    case kMnt3Ok:
      return "MNT3_OK";
    case kMnt3ErrPerm:
      return "MNT3ERR_PERM";
    case kMnt3ErrNoent:
      return "MNT3ERR_NOENT";
    case kMnt3ErrIo:
      return "MNT3ERR_IO";
    case kMnt3ErrAcces:
      return "MNT3ERR_ACCES";
    case kMnt3ErrNotdir:
      return "MNT3ERR_NOTDIR";
    case kMnt3ErrInval:
      return "MNT3ERR_INVAL";
    case kMnt3ErrNametoolong:
      return "MNT3ERR_NAMETOOLONG";
    case kMnt3ErrNotsupp:
      return "MNT3ERR_NOTSUPP";
    case kMnt3ErrServerfault:
      return "MNT3ERR_SERVERFAULT";
  }
  return absl::StrCat("MNT3ERR_", status);
}

absl::StatusOr<std::unique_ptr<MountClient>> MountClient::Connect(
    const Options& o) {
  if (o.version != 1 && o.version != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("MOUNT version ", o.version, ": only 1 and 3 exist"));
  }
  // libtirpc's AUTH_NONE is one object made on first use, and made
  // without a lock: clients created at once on several threads (mount_load)
  // could each make one and lose all but the last (LeakSanitizer saw it).
  // Made here once, under C++'s guard of a local static, before any
  // clnt_*_create asks for it.
  static AUTH* const kNoAuth = authnone_create();
  sockaddr_storage server{};
  socklen_t server_len = 0;
  if (!ToSockaddr(o.server, o.port, &server, &server_len)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "server address \"", o.server, "\": not an IPv4 or IPv6 address"));
  }
  if (o.port == 0) {
    return absl::InvalidArgumentError("server port: 0 is not a port");
  }
  absl::StatusOr<int> fd = OpenSocket(o, server, server_len);
  if (!fd.ok()) return fd.status();

  std::unique_ptr<MountClient> c(new MountClient);
  c->fd_ = *fd;
  c->timeout_ms_ = o.timeout_ms;
  c->version_ = o.version;
  sockaddr_storage local{};
  socklen_t len = sizeof local;
  if (getsockname(c->fd_, reinterpret_cast<sockaddr*>(&local), &len) == 0) {
    char buf[INET6_ADDRSTRLEN];
    if (local.ss_family == AF_INET6) {
      const auto* l6 = reinterpret_cast<const sockaddr_in6*>(&local);
      inet_ntop(AF_INET6, &l6->sin6_addr, buf, sizeof buf);
      c->local_port_ = ntohs(l6->sin6_port);
    } else {
      const auto* l4 = reinterpret_cast<const sockaddr_in*>(&local);
      inet_ntop(AF_INET, &l4->sin_addr, buf, sizeof buf);
      c->local_port_ = ntohs(l4->sin_port);
    }
    c->local_address_ = buf;
  }

  netbuf raddr;
  raddr.buf = &server;
  raddr.len = raddr.maxlen = server_len;
  c->client_ =
      o.transport == Transport::kTcp
          ? clnt_vc_create(c->fd_, &raddr, kMountProgram, o.version, 0,
                           kTcpRecvSize)
          : clnt_dg_create(c->fd_, &raddr, kMountProgram, o.version, 0, 0);
  if (c->client_ == nullptr) {
    return absl::UnavailableError(absl::StrCat("RPC client for ", o.server, ":",
                                               o.port, ": ",
                                               clnt_spcreateerror("")));
  }
  if (o.transport == Transport::kUdp) {
    // Retransmit well before the overall timeout, as mount(8) does.
    timeval retry{0, 500 * 1000};
    clnt_control(c->client_, CLSET_RETRY_TIMEOUT,
                 reinterpret_cast<char*>(&retry));
  }
  auth_destroy(c->client_->cl_auth);
  c->client_->cl_auth =
      o.auth_sys ? authunix_create_default() : kNoAuth;
  return c;
}

MountClient::~MountClient() {
  if (client_ != nullptr) {
    if (client_->cl_auth != nullptr) auth_destroy(client_->cl_auth);
    clnt_destroy(client_);  // does not close fd_: we own it
  }
  if (fd_ >= 0) close(fd_);
}

absl::Status MountClient::Null() {
  return Call(client_, timeout_ms_, kProcNull, XdrVoid, nullptr, XdrVoid,
              nullptr, "NULL");
}

absl::StatusOr<MntReply> MountClient::Mnt(const std::string& path) {
  MntReply r;
  std::string p = path;
  absl::Status s =
      Call(client_, timeout_ms_, kProcMnt, XdrDirpathEncode, &p,
           version_ == 3 ? XdrMountres3Decode : XdrFhstatusDecode, &r, "MNT");
  if (!s.ok()) return s;
  return r;
}

absl::Status MountClient::Umnt(const std::string& path) {
  std::string p = path;
  return Call(client_, timeout_ms_, kProcUmnt, XdrDirpathEncode, &p, XdrVoid,
              nullptr, "UMNT");
}

absl::Status MountClient::Umntall() {
  return Call(client_, timeout_ms_, kProcUmntall, XdrVoid, nullptr, XdrVoid,
              nullptr, "UMNTALL");
}

absl::StatusOr<std::vector<MountRecord>> MountClient::Dump() {
  std::vector<MountRecord> out;
  absl::Status s = Call(client_, timeout_ms_, kProcDump, XdrVoid, nullptr,
                        XdrMountlistDecode, &out, "DUMP");
  if (!s.ok()) return s;
  return out;
}

absl::StatusOr<std::vector<ExportEntry>> MountClient::Export() {
  std::vector<ExportEntry> out;
  ExportSink sink;
  sink.entries = &out;
  absl::Status s = Call(client_, timeout_ms_, kProcExport, XdrVoid, nullptr,
                        XdrExportsDecode, &sink, "EXPORT");
  if (!s.ok()) return s;
  return out;
}

absl::StatusOr<size_t> MountClient::ExportCount() {
  ExportSink sink;
  absl::Status s = Call(client_, timeout_ms_, kProcExport, XdrVoid, nullptr,
                        XdrExportsDecode, &sink, "EXPORT");
  if (!s.ok()) return s;
  return sink.count;
}

}  // namespace mountclient

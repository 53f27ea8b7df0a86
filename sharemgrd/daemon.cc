#include "daemon.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <malloc.h>
#include <netconfig.h>
#include <netinet/in.h>
#include <rpc/rpc.h>
#include <rpc/rpcb_clnt.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <optional>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "file_safety.h"
#include "libshare/files.h"
#include "libshare/fs_identity.h"
#include "log.h"
#include "pg_engine.h"

namespace sharemgrd {
namespace {

// A BATCH of 1,000,000 add-share lines with paths of up to ~200 bytes, in
// one call (one transaction); only callers who may change shares get it.
constexpr std::size_t kMgmtMaxRecord = 256u << 20;
constexpr std::size_t kMountMaxRecord = 8192;      // path <= 1024, auth <= 800
// Callers who may not change anything send only reads (a list of group
// names, a CHECK): they get a small record limit, so that they cannot make
// the daemon buffer and decode a 256 MiB call.
constexpr std::size_t kMgmtReaderMaxRecord = 1u << 20;
// Calls buffered over all management connections together.
constexpr std::size_t kMgmtInputBudget = 2 * kMgmtMaxRecord;
// A single reply bigger than this closes its connection (see
// ListenerLimits); an EXPORT of a million shares is well below.
constexpr std::size_t kMountMaxQueued = 128u << 20;
constexpr std::size_t kMgmtMaxQueued = std::size_t{1} << 30;
// Unread replies all reader connections of the management socket may hold
// together (a LIST_SHARES or SHARETAB reply at 15,000 shares is about
// 1.5 MB): past it their listings are refused until clients read.
constexpr std::size_t kMgmtReplyBudget = 32u << 20;
// Management threads (the pool grows while they block). A changing call
// holds its thread while it waits for its group's commit, so this many
// callers can share one commit (group commit, mgmt_service.h).
constexpr int kMgmtThreads = 16;
// Tables up to this size have their sharetab view written before serving
// (MgmtService::RefreshSharetab writes those at once); bigger ones after
// fs_watch's first round.
constexpr std::size_t kViewBeforeServingShares = 2000;

std::string Errno(absl::string_view what, const std::string& path) {
  return absl::StrCat(path, ": ", what, ": ", ::strerror(errno));
}

// mkdir -p of the folder holding `path`.
absl::Status MakeParent(const std::string& path) {
  if (absl::Status s = libshare::MakeParentFolders(path); !s.ok()) {
    return absl::FailedPreconditionError(s.message());
  }
  return absl::OkStatus();
}

class DelayingResolver final : public authcache::Resolver {
 public:
  DelayingResolver(std::unique_ptr<authcache::Resolver> inner,
                   std::map<std::string, int> delays)
      : inner_(std::move(inner)), delays_(std::move(delays)) {}

  absl::StatusOr<std::vector<std::string>> NamesOf(
      const libshare::IpAddress& address) override {
    DelayFor(address);
    return inner_->NamesOf(address);
  }
  absl::StatusOr<std::vector<libshare::IpAddress>> AddressesOf(
      std::string_view name) override {
    absl::StatusOr<std::vector<libshare::IpAddress>> r =
        inner_->AddressesOf(name);
    if (r.ok()) DelayForAny(*r);
    return r;
  }
  absl::StatusOr<bool> InNetgroup(std::string_view netgroup,
                                  std::string_view host) override {
    if (std::optional<libshare::IpAddress> a =
            libshare::IpAddress::Parse(host)) {
      DelayFor(*a);
    } else if (auto r = inner_->AddressesOf(host); r.ok()) {
      DelayForAny(*r);
    }
    return inner_->InNetgroup(netgroup, host);
  }
  absl::StatusOr<std::optional<libshare::IpAddress>> NetworkNamed(
      std::string_view name) override {
    // Network names are not per client: no delay, but forwarded, so
    // @netname entries match through this wrapper as without it.
    return inner_->NetworkNamed(name);
  }
  absl::Status Reload() override { return inner_->Reload(); }

 private:
  void DelayFor(const libshare::IpAddress& a) {
    auto it = delays_.find(a.ToString());
    if (it != delays_.end()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(it->second));
    }
  }
  void DelayForAny(const std::vector<libshare::IpAddress>& as) {
    int ms = 0;
    for (const auto& a : as) {
      auto it = delays_.find(a.ToString());
      if (it != delays_.end()) ms = std::max(ms, it->second);
    }
    if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  }

  std::unique_ptr<authcache::Resolver> inner_;
  const std::map<std::string, int> delays_;
};

// The group's id; none when the group database has no such group (or
// cannot be read).
std::optional<gid_t> LookUpGroup(const std::string& name) {
  group gr;
  group* found = nullptr;
  std::vector<char> buf(16384);
  if (::getgrnam_r(name.c_str(), &gr, buf.data(), buf.size(), &found) != 0 ||
      found == nullptr) {
    return std::nullopt;
  }
  return gr.gr_gid;
}

int Cores() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

}  // namespace

std::unique_ptr<authcache::Resolver> MakeDelayingResolver(
    std::unique_ptr<authcache::Resolver> inner,
    std::map<std::string, int> delays_ms) {
  return std::make_unique<DelayingResolver>(std::move(inner),
                                            std::move(delays_ms));
}

Daemon::Daemon(DaemonConfig config) : config_(std::move(config)) {}

Daemon::~Daemon() {
  Stop();
  for (int fd : {unix_fd_, db_lock_fd_, socket_lock_fd_, sharetab_lock_fd_}) {
    if (fd >= 0) ::close(fd);
  }
  for (const auto* fds : {&tcp_fds_, &udp_fds_}) {
    for (int fd : *fds) ::close(fd);
  }
}

absl::Status Daemon::HoldReadOnly(const std::string& what,
                                  const std::string& lock_path, int* fd) {
  // The same file, read-only: a file open for writing would keep its file
  // system from being remounted read-only (the view's folder may be).
  const int ro = ::open(lock_path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  struct stat a, b;
  if (ro < 0 || ::fstat(ro, &a) != 0 || ::fstat(*fd, &b) != 0 ||
      a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
    if (ro >= 0) ::close(ro);
    return absl::OkStatus();  // keeps the writable one
  }
  ::close(*fd);  // lets go of its lock; the read-only one takes it now
  *fd = ro;
  if (::flock(ro, LOCK_EX | LOCK_NB) != 0) {
    return absl::AlreadyExistsError(
        absl::StrCat(what, " is in use by another sharemgrd"));
  }
  return absl::OkStatus();
}

absl::Status Daemon::TakeLock(const std::string& what,
                              const std::string& lock_path, int* fd) {
  if (absl::Status s = MakeParent(lock_path); !s.ok()) return s;
  // Ours (regular, our owner, one link) or refused: never truncated or
  // written through a link, nor read as a daemon's pid if someone else's.
  // A daemon whose start fails removes the lock file it made while it
  // holds the lock; whoever opened that file meanwhile locks a name that
  // is gone, so after locking, the name must still be the file locked.
  for (int attempt = 0;; ++attempt) {
    absl::StatusOr<int> opened = OpenLockFile(lock_path, ::geteuid());
    if (!opened.ok()) return opened.status();
    *fd = *opened;
    if (::flock(*fd, LOCK_EX | LOCK_NB) != 0) break;
    struct stat held, named;
    if (::fstat(*fd, &held) == 0 && ::stat(lock_path.c_str(), &named) == 0 &&
        held.st_dev == named.st_dev && held.st_ino == named.st_ino) {
      break;
    }
    ::close(*fd);
    *fd = -1;
    if (attempt == 10) {
      return absl::FailedPreconditionError(
          absl::StrCat(lock_path, ": keeps being replaced; refusing to start"));
    }
  }
  if (::flock(*fd, LOCK_EX | LOCK_NB) != 0) {
    char buf[32] = {};
    ssize_t n = ::pread(*fd, buf, sizeof buf - 1, 0);
    int pid = 0;
    std::string text(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
      text.pop_back();
    }
    // AlreadyExists: held by another daemon (every other failure is the
    // lock file's own).
    if (absl::SimpleAtoi(text, &pid)) {
      return absl::AlreadyExistsError(absl::StrCat(
          what, " is in use by another sharemgrd (pid ", pid, ")"));
    }
    return absl::AlreadyExistsError(
        absl::StrCat(what, " is in use by another sharemgrd"));
  }
  std::string pid = absl::StrCat(::getpid(), "\n");
  if (::ftruncate(*fd, 0) != 0 || ::pwrite(*fd, pid.data(), pid.size(), 0) !=
                                      static_cast<ssize_t>(pid.size())) {
    return absl::FailedPreconditionError(Errno("cannot write lock", lock_path));
  }
  return absl::OkStatus();
}

absl::Status Daemon::BindMount() {
  // With port 0, the first TCP socket picks a port and every other socket
  // must get the same number; retry from the start if one finds it taken.
  for (int attempt = 0; attempt < 20; ++attempt) {
    std::vector<int> tcps, udps;
    std::vector<std::string> bound_on;
    bool v4 = false, v6 = false;
    auto close_all = [&] {
      for (int fd : tcps) ::close(fd);
      for (int fd : udps) ::close(fd);
    };
    int port = config_.mount_port;
    bool retry = false;
    for (const std::string& text : config_.listen) {
      std::optional<libshare::IpAddress> a = libshare::IpAddress::Parse(text);
      if (!a.has_value()) {
        close_all();
        return absl::InvalidArgumentError(absl::StrCat(
            "--listen ", text, ": not an IPv4 or IPv6 address"));
      }
      const bool is6 = !a->is_v4();
      sockaddr_storage ss{};
      socklen_t len;
      if (is6) {
        auto* sin6 = reinterpret_cast<sockaddr_in6*>(&ss);
        sin6->sin6_family = AF_INET6;
        std::memcpy(&sin6->sin6_addr, a->bytes.data(), 16);
        sin6->sin6_port = htons(static_cast<uint16_t>(port));
        len = sizeof(sockaddr_in6);
      } else {
        auto* sin = reinterpret_cast<sockaddr_in*>(&ss);
        sin->sin_family = AF_INET;
        std::memcpy(&sin->sin_addr, &a->bytes[12], 4);
        sin->sin_port = htons(static_cast<uint16_t>(port));
        len = sizeof(sockaddr_in);
      }
      const int family = is6 ? AF_INET6 : AF_INET;
      // The default IPv6 wildcard is skipped on a host without IPv6; an
      // address given with --listen must work.
      auto no_ipv6 = [&](int err) {
        return is6 && !config_.listen_given &&
               (err == EAFNOSUPPORT || err == EADDRNOTAVAIL);
      };
      const std::string where =
          is6 ? absl::StrCat("[", text, "]") : std::string(text);
      int tcp = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (tcp < 0) {
        const int err = errno;
        if (no_ipv6(err)) {
          LogLine(absl::StrCat("MOUNT not on IPv6: ", ::strerror(err)));
          continue;
        }
        close_all();
        return absl::FailedPreconditionError(absl::StrCat(
            "cannot open a MOUNT socket for ", where, ": ", ::strerror(err)));
      }
      int udp = ::socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
      tcps.push_back(tcp);
      if (udp >= 0) udps.push_back(udp);
      int one = 1;
      ::setsockopt(tcp, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      if (is6) {
        // Each family has its own sockets: IPv4 clients never arrive as
        // ::ffff:a.b.c.d on the IPv6 one.
        ::setsockopt(tcp, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
        if (udp >= 0) {
          ::setsockopt(udp, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
        }
      }
      if (::bind(tcp, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
        const int err = errno;
        if (no_ipv6(err)) {
          LogLine(absl::StrCat("MOUNT not on IPv6: ", ::strerror(err)));
          ::close(tcp);
          tcps.pop_back();
          if (udp >= 0) {
            ::close(udp);
            udps.pop_back();
          }
          continue;
        }
        if (config_.mount_port == 0 && port != 0 && err == EADDRINUSE) {
          retry = true;
          break;
        }
        close_all();
        return absl::FailedPreconditionError(
            absl::StrCat("cannot bind MOUNT TCP port ", where, ":", port,
                         ": ", ::strerror(err)));
      }
      if (port == 0) {
        sockaddr_storage b{};
        socklen_t blen = sizeof b;
        ::getsockname(tcp, reinterpret_cast<sockaddr*>(&b), &blen);
        port = ntohs(is6 ? reinterpret_cast<sockaddr_in6*>(&b)->sin6_port
                         : reinterpret_cast<sockaddr_in*>(&b)->sin_port);
        if (is6) {
          reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port = htons(port);
        } else {
          reinterpret_cast<sockaddr_in*>(&ss)->sin_port = htons(port);
        }
      }
      if (udp < 0 || ::bind(udp, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
        const int err = errno;
        if (config_.mount_port == 0 && err == EADDRINUSE) {
          retry = true;
          break;
        }
        close_all();
        return absl::FailedPreconditionError(
            absl::StrCat("cannot bind MOUNT UDP port ", where, ":", port,
                         ": ", ::strerror(err)));
      }
      if (::listen(tcp, 1024) != 0) {
        std::string err = ::strerror(errno);
        close_all();
        return absl::FailedPreconditionError(absl::StrCat("listen: ", err));
      }
      (is6 ? v6 : v4) = true;
      bound_on.push_back(where);
    }
    if (retry) {
      close_all();
      continue;
    }
    if (tcps.empty()) {
      return absl::FailedPreconditionError("MOUNT has no address to listen on");
    }
    tcp_fds_ = std::move(tcps);
    udp_fds_ = std::move(udps);
    listens_v4_ = v4;
    listens_v6_ = v6;
    listening_ = std::move(bound_on);
    mount_port_ = port;
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(
      "cannot find a port free for both TCP and UDP");
}

absl::Status Daemon::BindManagement() {
  const std::string& path = config_.socket_path;
  if (path.empty() || path.size() >= sizeof(sockaddr_un::sun_path)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--socket \"", path, "\": empty or too long"));
  }
  if (absl::Status s = MakeParent(path); !s.ok()) return s;
  gid_t gid = static_cast<gid_t>(-1);
  if (!config_.admin_group.empty()) {
    std::optional<gid_t> found = LookUpGroup(config_.admin_group);
    if (!found.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--admin-group ", config_.admin_group, ": no such group"));
    }
    gid = *found;
  }
  // Owner root (when we are root); a non-root test daemon keeps its own.
  // We hold the socket's lock, so a file left at the path is stale: the
  // new socket replaces it (and anything planted there) by rename.
  uid_t owner = ::geteuid() == 0 ? 0 : static_cast<uid_t>(-1);
  absl::StatusOr<int> fd = BindSocket(path, owner, gid, 0660);
  if (!fd.ok()) return fd.status();
  unix_fd_ = *fd;
  socket_bound_ = true;
  return absl::OkStatus();
}

absl::Status Daemon::RegisterRpcbind() {
  UnregisterRpcbind();  // stale registrations of a previous daemon
  std::vector<const char*> netids;
  if (listens_v4_) netids.insert(netids.end(), {"tcp", "udp"});
  if (listens_v6_) netids.insert(netids.end(), {"tcp6", "udp6"});
  for (const char* proto : netids) {
    const bool is6 = proto[3] == '6';
    netconfig* nc = ::getnetconfigent(proto);
    if (nc == nullptr) {
      if (is6) {
        // MOUNT still answers on IPv6; only rpcbind cannot point to it.
        LogLine(absl::StrCat("no netconfig entry for ", proto,
                             ": MOUNT on IPv6 not registered with rpcbind"));
        continue;
      }
      return absl::FailedPreconditionError(
          absl::StrCat("no netconfig entry for ", proto));
    }
    sockaddr_storage ss{};
    socklen_t len;
    if (is6) {
      auto* sin6 = reinterpret_cast<sockaddr_in6*>(&ss);
      sin6->sin6_family = AF_INET6;
      sin6->sin6_port = htons(static_cast<uint16_t>(mount_port_));
      sin6->sin6_addr = in6addr_any;
      len = sizeof(sockaddr_in6);
    } else {
      auto* sin = reinterpret_cast<sockaddr_in*>(&ss);
      sin->sin_family = AF_INET;
      sin->sin_port = htons(static_cast<uint16_t>(mount_port_));
      sin->sin_addr.s_addr = htonl(INADDR_ANY);
      len = sizeof(sockaddr_in);
    }
    netbuf nb{len, len, &ss};
    for (rpcvers_t v : {kMountV1, kMountV3}) {
      if (!::rpcb_set(kMountProgram, v, nc, &nb)) {
        ::freenetconfigent(nc);
        if (is6) {
          // An rpcbind without IPv6: MOUNT is still served on IPv6 to
          // clients that know the port, and fully on IPv4.
          LogLine(absl::StrCat("cannot register MOUNT version ", v, "/",
                               proto, " with rpcbind: MOUNT on IPv6 is not "
                               "registered"));
          nc = nullptr;
          break;
        }
        UnregisterRpcbind();
        return absl::FailedPreconditionError(absl::StrCat(
            "cannot register MOUNT version ", v, "/", proto,
            " with rpcbind (is rpcbind running? --no-rpcbind skips this)"));
      }
    }
    if (nc != nullptr) ::freenetconfigent(nc);
  }
  registered_ = true;
  return absl::OkStatus();
}

void Daemon::UnregisterRpcbind() {
  for (rpcvers_t v : {kMountV1, kMountV3}) {
    ::rpcb_unset(kMountProgram, v, nullptr);
  }
  registered_ = false;
}

void Daemon::NoteMissingFiles() {
  auto missing = [](const std::string& path) {
    struct stat st;
    return ::lstat(path.c_str(), &st) != 0 && errno == ENOENT;
  };
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    std::string p = config_.db_path + suffix;
    if (missing(p)) missing_db_files_.push_back(p);
  }
  missing_db_lock_ = missing(config_.db_path + ".lock");
  missing_socket_lock_ = missing(config_.socket_path + ".lock");
  missing_sharetab_lock_ = missing(config_.sharetab_path + ".lock");
  missing_sharetab_ = missing(config_.sharetab_path);
  missing_pid_file_ = config_.writes_pid_file() && missing(config_.pid_file);
  for (const std::string& file :
       {config_.db_path, config_.socket_path, config_.sharetab_path,
        config_.writes_pid_file() ? config_.pid_file : std::string()}) {
    std::string dir = file;
    for (;;) {
      std::size_t slash = dir.rfind('/');
      if (slash == std::string::npos || slash == 0) break;
      dir.resize(slash);
      if (!missing(dir)) break;
      if (std::find(missing_folders_.begin(), missing_folders_.end(), dir) ==
          missing_folders_.end()) {
        missing_folders_.push_back(dir);
      }
    }
  }
}

void Daemon::Abandon() {
  const bool served = started_;
  Stop();
  // Lock files are removed while their locks are held (see TakeLock); the
  // store and the socket only when this run holds their locks: another
  // daemon's files are never touched.
  if (db_lock_fd_ >= 0) {
    for (const std::string& p : missing_db_files_) ::unlink(p.c_str());
    if (missing_db_lock_) ::unlink((config_.db_path + ".lock").c_str());
  }
  // A start that failed after binding the socket (a followed exports file
  // it cannot read, --kernel=on without nfsd) leaves no socket behind.
  if (socket_lock_fd_ >= 0 && socket_bound_ && !served) {
    ::unlink(config_.socket_path.c_str());
  }
  socket_bound_ = false;
  if (socket_lock_fd_ >= 0 && missing_socket_lock_) {
    ::unlink((config_.socket_path + ".lock").c_str());
  }
  if (sharetab_lock_fd_ >= 0 && missing_sharetab_lock_) {
    ::unlink((config_.sharetab_path + ".lock").c_str());
  }
  if (served && missing_sharetab_) ::unlink(config_.sharetab_path.c_str());
  if (socket_lock_fd_ >= 0 && missing_pid_file_) {
    ::unlink(config_.pid_file.c_str());
  }
  for (int* fd : {&db_lock_fd_, &socket_lock_fd_, &sharetab_lock_fd_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
  // Deepest first; a folder that is not empty stays.
  std::sort(missing_folders_.begin(), missing_folders_.end(),
            [](const std::string& a, const std::string& b) {
              return a.size() > b.size();
            });
  for (const std::string& d : missing_folders_) ::rmdir(d.c_str());
  missing_folders_.clear();
}

absl::Status Daemon::Start() {
  NoteMissingFiles();
  absl::Status s = StartServing();
  if (!s.ok()) Abandon();
  return s;
}

absl::Status Daemon::StartServing() {
  if (absl::Status s = CheckStartupFiles(
          config_.db_path, config_.socket_path,
          config_.writes_pid_file() ? config_.pid_file : std::string(),
          ::geteuid());
      !s.ok()) {
    return s;
  }
  if (absl::Status s = TakeLocks(); !s.ok()) return s;

  const int load_threads =
      config_.load_threads > 0 ? config_.load_threads : Cores();
  threads_ = config_.threads > 0 ? config_.threads : std::max(4, 2 * Cores());

  absl::StatusOr<std::unique_ptr<authcache::Resolver>> resolver =
      MakeResolver();
  if (!resolver.ok()) return resolver.status();
  absl::StatusOr<std::unique_ptr<FsWatch>> fs_watch = OpenCatalog(load_threads);
  if (!fs_watch.ok()) return fs_watch.status();

  authcache::AuthCacheConfig cc;
  cc.max_entries = config_.auth_cache_max;
  cache_ = std::make_unique<authcache::AuthCache>(
      std::shared_ptr<authcache::Resolver>(*std::move(resolver)), cc);

  if (absl::Status s = StartMountService(); !s.ok()) return s;
  if (absl::Status s = BindMount(); !s.ok()) return s;
  if (absl::Status s = BindManagement(); !s.ok()) return s;

  const std::optional<gid_t> admin_gid = config_.admin_group.empty()
                                             ? std::nullopt
                                             : LookUpGroup(config_.admin_group);
  mgmt_ =
      std::make_unique<MgmtService>(catalog_.get(), cache_.get(), mount_.get(),
                                    config_.sharetab_path, admin_gid);
  replicated_to_.store(mgmt_.get());
  ServeFromFsWatch(*std::move(fs_watch));
  if (absl::Status s = MakeParent(config_.sharetab_path); !s.ok()) {
    LogLine(s.message());
  }
  if (absl::Status s = StartKernelMode(); !s.ok()) return s;
  // A big table's view is written in the background; started before the
  // first round has probed every share, it would decide each one live
  // (an lstat apiece, a second probe of the whole table beside the round:
  // at 1,000,000 shares seconds of both cores, and a SIGTERM meanwhile
  // waited for it). So it waits for the round's end, or the start's if
  // that comes later.
  const bool view_before_serving =
      catalog_->share_count() <= kViewBeforeServingShares;
  WatchFileSystems(view_before_serving);
  if (absl::Status s = StartFollowingExports(); !s.ok()) return s;

  AddMountListeners();
  AddManagementListener(admin_gid);
  if (absl::Status s = StartServers(); !s.ok()) return s;
  started_ = true;
  WriteViewOnceServing(view_before_serving);
  if (!config_.no_rpcbind) {
    if (absl::Status s = RegisterRpcbind(); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status Daemon::TakeLocks() {
  if (absl::Status s =
          TakeLock(config_.db_path, config_.db_path + ".lock", &db_lock_fd_);
      !s.ok())
    return s;
  if (absl::Status s = TakeLock(
          config_.socket_path, config_.socket_path + ".lock", &socket_lock_fd_);
      !s.ok())
    return s;
  // The view is only a view: a folder it cannot be written in (a read-only
  // file system) does not stop the daemon (the view's writes fail and are
  // reported), nor does its lock file; another daemon holding it does.
  if (absl::Status s =
          TakeLock(config_.sharetab_path, config_.sharetab_path + ".lock",
                   &sharetab_lock_fd_);
      !s.ok()) {
    if (absl::IsAlreadyExists(s)) return s;
    if (sharetab_lock_fd_ >= 0) ::close(sharetab_lock_fd_);
    sharetab_lock_fd_ = -1;
    LogLine(absl::StrCat("the sharetab view has no lock (", s.message(),
                         "): a second daemon on the same view is not "
                         "refused"));
  } else if (absl::Status held = HoldReadOnly(config_.sharetab_path,
                                              config_.sharetab_path + ".lock",
                                              &sharetab_lock_fd_);
             !held.ok()) {
    return held;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<authcache::Resolver>> Daemon::MakeResolver()
    const {
  std::unique_ptr<authcache::Resolver> resolver;
  if (!config_.hosts_file.empty() || !config_.netgroups_file.empty()) {
    absl::StatusOr<std::unique_ptr<authcache::Resolver>> r =
        authcache::MakeFilesResolver(config_.hosts_file,
                                     config_.netgroups_file);
    if (!r.ok()) {
      return absl::Status(
          r.status().code(),
          absl::StrCat("--hosts/--netgroups: ", r.status().message()));
    }
    resolver = std::move(*r);
  } else {
    resolver = authcache::MakeSystemResolver();
  }
  if (!config_.resolver_delays.empty()) {
    resolver =
        MakeDelayingResolver(std::move(resolver), config_.resolver_delays);
  }
  return resolver;
}

absl::StatusOr<std::unique_ptr<FsWatch>> Daemon::OpenCatalog(int load_threads) {
  // Shares follow their file systems (fs_watch.h): the places recorded
  // for them are read while the table loads (a scan of every row of its
  // own: at 1,000,000 shares 0.5-1 s after the load, on the core the load
  // leaves idle most of its time), and probed before serving.
  absl::StatusOr<std::unique_ptr<FsWatch>> fs_watch =
      absl::InternalError("the recorded file systems were not read");
  libshare::Catalog::Config catalog_config{config_.db_path, load_threads};
  if (!config_.store_url.empty()) {
    // Several heads, one table (catalog_cluster.cc): the engine's, this
    // head's copy at --db.
    std::string head = config_.head_name;
    if (head.empty()) {
      char host[256] = {};
      head = ::gethostname(host, sizeof host - 1) == 0 && host[0] != '\0'
                 ? host
                 : "sharemgrd";
    }
    const std::string url = config_.store_url;
    const std::string app = absl::StrCat("sharemgrd ", head);
    catalog_config.engine = [url, app] {
      return libshare::ConnectPostgres(url, app);
    };
    catalog_config.engine_where = libshare::DescribePostgresUrl(url);
    catalog_config.head_name = head;
    catalog_config.on_replicated = [this](const libshare::Batch& b,
                                          libshare::BatchResult& r,
                                          std::string_view from) {
      if (MgmtService* m = replicated_to_.load()) m->Replicated(b, r, from);
    };
    catalog_config.log = [](std::string_view line) {
      LogLine(absl::StrCat("cluster: ", absl::string_view(line.data(), line.size())));
    };
    LogLine(absl::StrCat("table kept in ", catalog_config.engine_where,
                         " as head ", head, "; this head's copy: ",
                         config_.db_path));
  }
  // Each added share records the identity its file system has then, the
  // uuid rpc.mountd would give it (the kernel mode's probe): every head of
  // a cluster answers it, whatever its own copy of the file system says.
  catalog_config.identify = [identity_probe = identity_probe_](const std::string& path,
                                             uint64_t) {
    libshare::Catalog::Config::FsIdentityAnswer a;
    absl::StatusOr<kernel::FsIdentity> id = identity_probe->Probe(path);
    if (!id.ok() || !id->uuid) return a;  // none: the kernel's device fsid
    a.uuid = id->uuid;
    // Made from the path (a file system whose f_fsid is zero), not the
    // device's: asked again for each path.
    a.per_device = *id->uuid != kernel::PseudoRootUuid(path);
    return a;
  };
  catalog_config.beside_load = [&fs_watch](libshare::FsPlaceRecords* places) {
    try {
      fs_watch =
          FsWatch::Open({.log = [](const std::string& line) { LogLine(line); }},
                        nullptr, places);
    } catch (const std::bad_alloc&) {
      fs_watch = absl::ResourceExhaustedError(
          "out of memory reading the recorded file systems");
    }
  };
  absl::StatusOr<std::unique_ptr<libshare::Catalog>> catalog =
      libshare::Catalog::Open(catalog_config);
  if (!catalog.ok()) {
    // The store's messages begin with its path already.
    const absl::string_view m = catalog.status().message();
    return absl::FailedPreconditionError(
        absl::StartsWith(m, config_.db_path + ": ")
            ? absl::StrCat("cannot open ", m)
            : absl::StrCat("cannot open ", config_.db_path, ": ", m));
  }
  catalog_ = std::move(*catalog);
  if (!fs_watch.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot probe the shares' file systems: ",
                     fs_watch.status().message()));
  }
  // Rows a later rule would refuse are served; the log says which.
  for (const std::string& w : catalog_->load_stats().warnings) {
    LogLine(absl::StrCat("store: ", w));
  }
  return fs_watch;
}

absl::Status Daemon::StartMountService() {
  mount_ = std::make_unique<MountService>(catalog_.get(), cache_.get(),
                                          config_.insecure);
  if (absl::Status s = mount_->Start(); !s.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot load mount records from ", config_.db_path, ": ", s.message()));
  }
  return absl::OkStatus();
}

void Daemon::ServeFromFsWatch(std::unique_ptr<FsWatch> fs_watch) {
  fs_watch_ = std::move(fs_watch);
  fs_watch_->SetCatalog(catalog_.get());
  // Loading a big table frees as much as it keeps (SQLite's pages, the
  // scans' rows, the grown hash tables), in pieces malloc would keep.
  malloc_trim(0);
  mount_->SetServedShares(fs_watch_.get());
  mgmt_->SetServedShares(fs_watch_.get());
  mgmt_->SetLiveIdentity([identity_probe = identity_probe_](const std::string& path) {
    absl::StatusOr<kernel::FsIdentity> id = identity_probe->Probe(path);
    return id.ok() && id->uuid ? libshare::FormatFsIdentity(*id->uuid)
                               : std::string();
  });
}

void Daemon::WatchFileSystems(bool view_before_serving) {
  fs_watch_->Watch(
      [this](const std::vector<std::string>& paths) {
        mgmt_->RefreshSharetab();
        if (kernel_) kernel_->SharesChanged(paths);
      },
      [this, view_before_serving] {
        {
          absl::MutexLock l(&view_mu_);
          view_probed_ = true;
          if (!view_serving_ || view_before_serving) return;
        }
        mgmt_->RefreshSharetab();
      });
}

absl::Status Daemon::StartFollowingExports() {
  const std::vector<libshare::GroupInfo> groups = catalog_->ListGroups();
  if (config_.follow_exports.empty() &&
      std::none_of(
          groups.begin(), groups.end(),
          [](const libshare::GroupInfo& g) { return !g.managed_by.empty(); })) {
    return absl::OkStatus();
  }
  // After the kernel hooks: the first sync is a batch like any other.
  // Without --follow-exports it only releases the managed groups.
  ExportsFollower::Config fc;
  fc.patterns = config_.follow_exports;
  fc.catalog = catalog_.get();
  MgmtService* mgmt = mgmt_.get();
  fc.apply = [mgmt](const libshare::Batch& b) { return mgmt->ApplyBatch(b); };
  fc.log = [](const std::string& line) { LogLine(line); };
  absl::StatusOr<std::unique_ptr<ExportsFollower>> f =
      ExportsFollower::Start(std::move(fc));
  if (!f.ok()) return f.status();
  follower_ = *std::move(f);
  ExportsFollower* follower = follower_.get();
  mgmt_->SetFollowErrorSource([follower](const libshare::GroupInfo& g) {
    return follower->ErrorFor(g.name);
  });
  if (!config_.follow_exports.empty()) {
    MgmtService::FollowSyncHooks sync;
    sync.patterns = config_.follow_exports;
    sync.sync = [follower] {
      std::vector<libshare::FollowedFile> out;
      for (ExportsFollower::FileState& f : follower->SyncNow()) {
        out.push_back({std::move(f.path), std::move(f.group),
                       std::move(f.error), f.changed});
      }
      return out;
    };
    sync.status = [follower] { return follower->Files(); };
    mgmt_->SetFollowSync(std::move(sync));
  }
  return absl::OkStatus();
}

void Daemon::AddMountListeners() {
  server_ = std::make_unique<RpcServer>(
      threads_, static_cast<std::size_t>(config_.max_connections));
  ListenerLimits mount_limits;
  mount_limits.max_record = kMountMaxRecord;
  mount_limits.idle_timeout = absl::Seconds(config_.idle_timeout_seconds);
  mount_limits.max_queued = kMountMaxQueued;
  for (int fd : tcp_fds_) {
    server_->AddStreamListener(fd, Transport::kTcp, mount_.get(), mount_limits);
  }
  for (int fd : udp_fds_) server_->AddDatagramSocket(fd, mount_.get());
  tcp_fds_.clear();  // owned by the server now
  udp_fds_.clear();
}

void Daemon::AddManagementListener(std::optional<gid_t> admin_gid) {
  mgmt_server_ = std::make_unique<RpcServer>(
      kMgmtThreads, static_cast<std::size_t>(config_.max_mgmt_connections));
  ListenerLimits mgmt_limits;
  mgmt_limits.max_record = kMgmtMaxRecord;
  mgmt_limits.idle_timeout = absl::Seconds(config_.mgmt_idle_timeout_seconds);
  mgmt_limits.max_queued = kMgmtMaxQueued;
  mgmt_limits.input_budget = kMgmtInputBudget;
  // Callers without change rights (anyone who can open the socket) share
  // one budget of unread replies; those who may change shares are not
  // held back by them.
  mgmt_limits.output_budget = kMgmtReplyBudget;
  mgmt_limits.output_budget_applies = [admin_gid](const CallContext& c) {
    return !(c.has_peer_cred && MayChange(c.peer_uid, c.peer_gid, admin_gid));
  };
  mgmt_limits.record_limit = [admin_gid](const CallContext& c) {
    return c.has_peer_cred && MayChange(c.peer_uid, c.peer_gid, admin_gid)
               ? kMgmtMaxRecord
               : kMgmtReaderMaxRecord;
  };
  mgmt_server_->AddStreamListener(unix_fd_, Transport::kUnix, mgmt_.get(),
                                  mgmt_limits);
  unix_fd_ = -1;  // owned by the servers now
}

absl::Status Daemon::StartServers() {
  // Both pools' connections share the process's descriptors (each server
  // raises the limit for its own only; the limit is never lowered).
  RaiseDescriptorLimit(static_cast<std::size_t>(config_.max_connections) +
                       static_cast<std::size_t>(config_.max_mgmt_connections) +
                       RpcServer::kReservedDescriptors);
  if (absl::Status s = server_->Start(); !s.ok()) return s;
  return mgmt_server_->Start();
}

void Daemon::WriteViewOnceServing(bool view_before_serving) {
  // The view is rewritten at every start (it may be stale after a crash),
  // but a big one in the background: writing 15,000 lines and fsyncing
  // them doubled the time until the first MNT is answered.
  bool view_now;
  {
    absl::MutexLock l(&view_mu_);
    view_serving_ = true;
    view_now = view_before_serving || view_probed_;
  }
  if (view_now) mgmt_->RefreshSharetab();
}

absl::Status Daemon::StartKernelMode() {
  static constexpr char kProc[] = "/proc";
  std::string why;
  bool on = false;
  if (config_.kernel == KernelModeSetting::kOff) {
    why = "--kernel=off";
  } else {
    absl::StatusOr<bool> nfsd = kernel::NfsdAvailable(kProc);
    if (!nfsd.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("kernel mode: ", nfsd.status().message()));
    }
    if (*nfsd) {
      on = true;
      why = config_.kernel == KernelModeSetting::kOn
                ? "--kernel=on"
                : "--kernel=auto and nfsd is mounted at /proc/fs/nfsd";
    } else if (config_.kernel == KernelModeSetting::kOn) {
      return absl::FailedPreconditionError(
          "--kernel=on: the nfsd file system is not mounted at /proc/fs/nfsd "
          "(load and mount it with: modprobe nfsd && mount -t nfsd nfsd "
          "/proc/fs/nfsd), or use --kernel=off");
    } else {
      why = "--kernel=auto and /proc/fs/nfsd is not mounted";
    }
  }
  LogLine(absl::StrCat("kernel mode ", on ? "on" : "off", " (", why, ")"));
  if (!on) return absl::OkStatus();
  kernel_on_ = true;

  access_ = std::make_unique<ShareAccess>(catalog_.get(), cache_.get(),
                                          fs_watch_.get());
  kernel::KernelConfig kc;
  kc.manage_gids = config_.manage_gids;
  kc.insecure = config_.insecure;
  if (config_.ttl > 0) kc.positive_ttl = absl::Seconds(config_.ttl);
  kc.log = [](const std::string& line) { LogLine("kernel: " + line); };
  kc.probe = identity_probe_;  // one libblkid cache for the daemon
  absl::StatusOr<std::unique_ptr<kernel::KernelMode>> k =
      kernel::KernelMode::Start(kc, catalog_.get(), access_.get());
  if (!k.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("kernel mode: ", k.status().message()));
  }
  kernel_ = *std::move(k);
  kernel::KernelMode* km = kernel_.get();
  MgmtService::KernelHooks hooks;
  hooks.changed = [km](const std::vector<libshare::ShareChange>& changes) {
    std::vector<std::string> paths;
    paths.reserve(changes.size());
    for (const libshare::ShareChange& c : changes) paths.push_back(c.path);
    km->SharesChanged(paths);
  };
  hooks.flush = [km] { return km->Flush(); };
  hooks.wait_pushed = [km] { km->WaitPushed(); };
  hooks.stats = [km] {
    kernel::KernelStats k = km->stats();
    libshare::KernelStats s;
    s.mode = "on";
    s.upcalls = k.upcalls;
    s.negative = k.negative;
    s.pushed = k.pushed;
    s.flushes = k.flushes;
    s.answer_p99_us = static_cast<double>(k.answer_p99_us);
    return s;
  };
  mgmt_->SetKernelHooks(std::move(hooks));
  mount_->SetHandleSource(
      [km](const libshare::IpAddress& client, const AccessResult& decided,
           int max_size) { return km->FileHandle(client, decided, max_size); });
  return absl::OkStatus();
}

std::string Daemon::ServingLine() const {
  libshare::LoadStats ls = catalog_->load_stats();
  const std::size_t shares = catalog_->share_count();
  const std::size_t groups = catalog_->group_count();
  return absl::StrFormat(
      "serving %d share%s in %d group%s (loaded in %.1f ms with %d threads); "
      "mount port %d; socket %s; MOUNT on %s",
      shares, shares == 1 ? "" : "s", groups, groups == 1 ? "" : "s",
      ls.load_ms, ls.threads, mount_port_, config_.socket_path,
      absl::StrJoin(listening_, ", "));
}

void Daemon::ReloadResolver() {
  if (!cache_) return;
  absl::Status s = cache_->ReloadResolver();
  LogLine(s.ok() ? std::string("resolver reloaded")
                 : absl::StrCat("cannot reload the resolver: ", s.message()));
}

void Daemon::Stop() {
  if (fs_watch_) fs_watch_->Stop();  // no more pushes from its thread
  // No new calls; calls in progress finish.
  if (mgmt_server_) mgmt_server_->Stop();
  if (server_) server_->Stop();
  mgmt_server_.reset();
  server_.reset();
  if (follower_) follower_->Stop();  // before what its batches reach
  follower_.reset();
  // What the kernel holds keeps serving; what it asks meanwhile stays
  // queued for the next start.
  if (kernel_) kernel_->Stop();
  kernel_.reset();
  access_.reset();
  if (registered_) UnregisterRpcbind();
  if (mgmt_) {
    mgmt_->Stop();  // last sharetab view written
    // Without the kernel mode nothing is served once we stop: the view
    // says so. In kernel mode the kernel keeps serving what it cached
    // (and queues the rest for our next start), so the view stays.
    if (started_ && !kernel_on_) mgmt_->ClearSharetab();
  }
  if (mount_) mount_->Stop();  // last mount records reach the store
  mgmt_.reset();
  mount_.reset();
  cache_.reset();
  fs_watch_.reset();
  if (catalog_ && keep_memory_at_exit_) catalog_->KeepTableMemoryAtExit();
  catalog_.reset();  // closes the store
  if (started_) {
    ::unlink(config_.socket_path.c_str());
    started_ = false;
  }
}

}  // namespace sharemgrd

#include "daemon.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
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
#include <thread>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "file_safety.h"
#include "libshare/files.h"
#include "log.h"

namespace sharemgrd {
namespace {

constexpr std::size_t kMgmtMaxRecord = 64u << 20;  // a BATCH of 100,000 shares
constexpr std::size_t kMountMaxRecord = 8192;      // path <= 1024, auth <= 800
// Callers who may not change anything send only reads (a list of group
// names, a CHECK): they get a small record limit, so that they cannot make
// the daemon buffer and decode a 64 MiB call.
constexpr std::size_t kMgmtReaderMaxRecord = 1u << 20;
// Calls buffered over all management connections together.
constexpr std::size_t kMgmtInputBudget = 4 * kMgmtMaxRecord;
// A single reply bigger than this closes its connection (see
// ListenerLimits); an EXPORT of a million shares is well below.
constexpr std::size_t kMountMaxQueued = 128u << 20;
constexpr std::size_t kMgmtMaxQueued = std::size_t{1} << 30;
// Management threads: calls are few; the pool grows while they block.
constexpr int kMgmtThreads = 2;

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
  for (int fd : {tcp_fd_, udp_fd_, unix_fd_, db_lock_fd_, socket_lock_fd_}) {
    if (fd >= 0) ::close(fd);
  }
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
    if (absl::SimpleAtoi(text, &pid)) {
      return absl::FailedPreconditionError(absl::StrCat(
          what, " is in use by another sharemgrd (pid ", pid, ")"));
    }
    return absl::FailedPreconditionError(
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
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  if (::inet_pton(AF_INET, config_.listen.c_str(), &addr.sin_addr) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--listen ", config_.listen, ": not an IPv4 address"));
  }
  // With port 0, TCP picks a port and UDP must get the same number; retry
  // if UDP finds it taken.
  for (int attempt = 0; attempt < 20; ++attempt) {
    int tcp = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int udp = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(tcp, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    addr.sin_port = htons(static_cast<uint16_t>(config_.mount_port));
    if (::bind(tcp, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      std::string err = ::strerror(errno);
      ::close(tcp);
      ::close(udp);
      return absl::FailedPreconditionError(
          absl::StrCat("cannot bind MOUNT TCP port ", config_.listen, ":",
                       config_.mount_port, ": ", err));
    }
    sockaddr_in bound{};
    socklen_t len = sizeof bound;
    ::getsockname(tcp, reinterpret_cast<sockaddr*>(&bound), &len);
    addr.sin_port = bound.sin_port;
    if (::bind(udp, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      std::string err = ::strerror(errno);
      ::close(tcp);
      ::close(udp);
      if (config_.mount_port == 0 && errno == EADDRINUSE) continue;
      return absl::FailedPreconditionError(
          absl::StrCat("cannot bind MOUNT UDP port ", config_.listen, ":",
                       ntohs(addr.sin_port), ": ", err));
    }
    if (::listen(tcp, 1024) != 0) {
      std::string err = ::strerror(errno);
      ::close(tcp);
      ::close(udp);
      return absl::FailedPreconditionError(absl::StrCat("listen: ", err));
    }
    tcp_fd_ = tcp;
    udp_fd_ = udp;
    mount_port_ = ntohs(addr.sin_port);
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
    group gr;
    group* found = nullptr;
    std::vector<char> buf(16384);
    if (::getgrnam_r(config_.admin_group.c_str(), &gr, buf.data(), buf.size(),
                     &found) != 0 ||
        found == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--admin-group ", config_.admin_group, ": no such group"));
    }
    gid = gr.gr_gid;
  }
  // Owner root (when we are root); a non-root test daemon keeps its own.
  // We hold the socket's lock, so a file left at the path is stale: the
  // new socket replaces it (and anything planted there) by rename.
  uid_t owner = ::geteuid() == 0 ? 0 : static_cast<uid_t>(-1);
  absl::StatusOr<int> fd = BindSocket(path, owner, gid, 0660);
  if (!fd.ok()) return fd.status();
  unix_fd_ = *fd;
  return absl::OkStatus();
}

absl::Status Daemon::RegisterRpcbind() {
  UnregisterRpcbind();  // stale registrations of a previous daemon
  for (const char* proto : {"tcp", "udp"}) {
    netconfig* nc = ::getnetconfigent(proto);
    if (nc == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("no netconfig entry for ", proto));
    }
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_port = htons(static_cast<uint16_t>(mount_port_));
    sin.sin_addr.s_addr = htonl(INADDR_ANY);
    netbuf nb{sizeof sin, sizeof sin, &sin};
    for (rpcvers_t v : {kMountV1, kMountV3}) {
      if (!::rpcb_set(kMountProgram, v, nc, &nb)) {
        ::freenetconfigent(nc);
        UnregisterRpcbind();
        return absl::FailedPreconditionError(absl::StrCat(
            "cannot register MOUNT version ", v, "/", proto,
            " with rpcbind (is rpcbind running? --no-rpcbind skips this)"));
      }
    }
    ::freenetconfigent(nc);
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
  if (socket_lock_fd_ >= 0 && missing_socket_lock_) {
    ::unlink((config_.socket_path + ".lock").c_str());
  }
  if (served && missing_sharetab_) ::unlink(config_.sharetab_path.c_str());
  if (socket_lock_fd_ >= 0 && missing_pid_file_) {
    ::unlink(config_.pid_file.c_str());
  }
  for (int* fd : {&db_lock_fd_, &socket_lock_fd_}) {
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
  if (absl::Status s =
          TakeLock(config_.db_path, config_.db_path + ".lock", &db_lock_fd_);
      !s.ok())
    return s;
  if (absl::Status s = TakeLock(
          config_.socket_path, config_.socket_path + ".lock", &socket_lock_fd_);
      !s.ok())
    return s;

  const int load_threads =
      config_.load_threads > 0 ? config_.load_threads : Cores();
  threads_ = config_.threads > 0 ? config_.threads : std::max(4, 2 * Cores());

  std::unique_ptr<authcache::Resolver> resolver;
  if (!config_.hosts_file.empty() || !config_.netgroups_file.empty()) {
    absl::StatusOr<std::unique_ptr<authcache::Resolver>> r =
        authcache::MakeFilesResolver(config_.hosts_file,
                                     config_.netgroups_file);
    if (!r.ok()) return r.status();
    resolver = std::move(*r);
  } else {
    resolver = authcache::MakeSystemResolver();
  }
  if (!config_.resolver_delays.empty()) {
    resolver =
        MakeDelayingResolver(std::move(resolver), config_.resolver_delays);
  }

  absl::StatusOr<std::unique_ptr<libshare::Catalog>> catalog =
      libshare::Catalog::Open({config_.db_path, load_threads});
  if (!catalog.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot open ", config_.db_path, ": ", catalog.status().message()));
  }
  catalog_ = std::move(*catalog);

  authcache::AuthCacheConfig cc;
  cc.max_entries = config_.auth_cache_max;
  cache_ = std::make_unique<authcache::AuthCache>(
      std::shared_ptr<authcache::Resolver>(std::move(resolver)), cc);

  mount_ = std::make_unique<MountService>(catalog_.get(), cache_.get(),
                                          config_.insecure);
  if (absl::Status s = mount_->Start(); !s.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot load mount records from ", config_.db_path, ": ", s.message()));
  }
  if (absl::Status s = BindMount(); !s.ok()) return s;
  if (absl::Status s = BindManagement(); !s.ok()) return s;

  std::optional<gid_t> admin_gid;
  if (!config_.admin_group.empty()) {
    group gr;
    group* found = nullptr;
    std::vector<char> buf(16384);
    if (::getgrnam_r(config_.admin_group.c_str(), &gr, buf.data(), buf.size(),
                     &found) == 0 &&
        found != nullptr) {
      admin_gid = gr.gr_gid;
    }
  }
  mgmt_ =
      std::make_unique<MgmtService>(catalog_.get(), cache_.get(), mount_.get(),
                                    config_.sharetab_path, admin_gid);
  if (absl::Status s = MakeParent(config_.sharetab_path); !s.ok()) {
    LogLine(s.message());
  }
  if (absl::Status s = StartKernelMode(); !s.ok()) return s;

  server_ = std::make_unique<RpcServer>(
      threads_, static_cast<std::size_t>(config_.max_connections));
  ListenerLimits mount_limits;
  mount_limits.max_record = kMountMaxRecord;
  mount_limits.idle_timeout = absl::Seconds(config_.idle_timeout_seconds);
  mount_limits.max_queued = kMountMaxQueued;
  server_->AddStreamListener(tcp_fd_, Transport::kTcp, mount_.get(),
                             mount_limits);
  server_->AddDatagramSocket(udp_fd_, mount_.get());
  mgmt_server_ = std::make_unique<RpcServer>(
      kMgmtThreads, static_cast<std::size_t>(config_.max_mgmt_connections));
  ListenerLimits mgmt_limits;
  mgmt_limits.max_record = kMgmtMaxRecord;
  mgmt_limits.idle_timeout = absl::Seconds(config_.mgmt_idle_timeout_seconds);
  mgmt_limits.max_queued = kMgmtMaxQueued;
  mgmt_limits.input_budget = kMgmtInputBudget;
  mgmt_limits.record_limit = [admin_gid](const CallContext& c) {
    return c.has_peer_cred && MayChange(c.peer_uid, c.peer_gid, admin_gid)
               ? kMgmtMaxRecord
               : kMgmtReaderMaxRecord;
  };
  mgmt_server_->AddStreamListener(unix_fd_, Transport::kUnix, mgmt_.get(),
                                  mgmt_limits);
  tcp_fd_ = udp_fd_ = unix_fd_ = -1;  // owned by the servers now
  // Both pools' connections share the process's descriptors (each server
  // raises the limit for its own only; the limit is never lowered).
  RaiseDescriptorLimit(static_cast<std::size_t>(config_.max_connections) +
                       static_cast<std::size_t>(config_.max_mgmt_connections) +
                       RpcServer::kReservedDescriptors);
  if (absl::Status s = server_->Start(); !s.ok()) return s;
  if (absl::Status s = mgmt_server_->Start(); !s.ok()) return s;
  started_ = true;
  // The view is rewritten at every start (it may be stale after a crash),
  // but a big one in the background: writing 15,000 lines and fsyncing
  // them doubled the time until the first MNT is answered.
  mgmt_->RefreshSharetab();
  if (!config_.no_rpcbind) {
    if (absl::Status s = RegisterRpcbind(); !s.ok()) return s;
  }
  return absl::OkStatus();
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

  access_ = std::make_unique<ShareAccess>(catalog_.get(), cache_.get());
  kernel::KernelConfig kc;
  kc.manage_gids = config_.manage_gids;
  kc.insecure = config_.insecure;
  kc.log = [](const std::string& line) { LogLine("kernel: " + line); };
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
  return absl::StrFormat(
      "serving %d shares in %d groups (loaded in %.1f ms with %d threads); "
      "mount port %d; socket %s",
      catalog_->share_count(), catalog_->group_count(), ls.load_ms, ls.threads,
      mount_port_, config_.socket_path);
}

void Daemon::ReloadResolver() {
  if (!cache_) return;
  absl::Status s = cache_->ReloadResolver();
  LogLine(s.ok() ? std::string("resolver reloaded")
                 : absl::StrCat("cannot reload the resolver: ", s.message()));
}

void Daemon::Stop() {
  // No new calls; calls in progress finish.
  if (mgmt_server_) mgmt_server_->Stop();
  if (server_) server_->Stop();
  mgmt_server_.reset();
  server_.reset();
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
  catalog_.reset();  // closes the store
  if (started_) {
    ::unlink(config_.socket_path.c_str());
    started_ = false;
  }
}

}  // namespace sharemgrd

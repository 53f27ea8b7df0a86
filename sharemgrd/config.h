// DaemonConfig: sharemgrd's command line, completed from nfs-utils'
// configuration (nfs.conf) as rpc.mountd completes its own. One option
// table feeds the parser and --help (and is mirrored by man/sharemgrd.8).
// Plain values; not synchronized.
#ifndef SHAREMGRD_CONFIG_H_
#define SHAREMGRD_CONFIG_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "libshare/client.h"
#include "nfs_conf.h"

namespace sharemgrd {

inline constexpr char kDefaultDbPath[] = "/var/lib/sharemgr/shares.db";
// The management socket: where libshare's client API looks by default.
using libshare::kDefaultSocketPath;
inline constexpr char kDefaultSharetabPath[] = "/run/sharemgr/sharetab";
inline constexpr char kDefaultPidFile[] = "/run/sharemgr/sharemgrd.pid";
// MOUNT listens on both families unless --listen says where.
inline constexpr char kDefaultListenV4[] = "0.0.0.0";
inline constexpr char kDefaultListenV6[] = "::";
inline constexpr uint64_t kDefaultAuthCacheMax = 100000;
inline constexpr int kDefaultMaxConnections = 4096;         // MOUNT TCP
inline constexpr int kDefaultMaxMgmtConnections = 256;      // management
inline constexpr int kDefaultIdleTimeoutSeconds = 120;      // MOUNT TCP
inline constexpr int kDefaultMgmtIdleTimeoutSeconds = 600;  // management

// --kernel: serve the Linux nfsd's export caches (sharemgrd/kernel).
enum class KernelModeSetting : uint8_t {
  kAuto,  // on when the nfsd file system is mounted at /proc/fs/nfsd
  kOn,    // on; a start-up error if nfsd is not there
  kOff,
};
inline constexpr KernelModeSetting kDefaultKernelMode =
    KernelModeSetting::kAuto;

struct DaemonConfig {
  std::string db_path = kDefaultDbPath;
  // --store: "" (the SQLite store at db_path is the table) or a
  // PostgreSQL URL several heads share (db_path is then this head's copy).
  std::string store_url;
  std::string head_name;  // --head; "" = the host name
  std::string socket_path = kDefaultSocketPath;
  std::string sharetab_path = kDefaultSharetabPath;
  bool foreground = false;
  std::string pid_file = kDefaultPidFile;
  bool pid_file_given = false;
  int mount_port = 0;  // 0: any free port, same for TCP and UDP
  // Addresses MOUNT listens on (TCP and UDP each), as written without
  // brackets; by default both families' wildcards (the IPv6 one skipped,
  // with a log line, on a host without IPv6).
  std::vector<std::string> listen = {kDefaultListenV4, kDefaultListenV6};
  bool listen_given = false;
  bool no_rpcbind = false;
  bool insecure = false;
  std::string admin_group;  // "" = none
  std::string hosts_file;
  std::string netgroups_file;
  uint64_t auth_cache_max = kDefaultAuthCacheMax;
  int load_threads = 0;  // 0: number of cores
  int threads = 0;       // 0: max(4, 2 * cores)
  int max_connections = kDefaultMaxConnections;
  int max_mgmt_connections = kDefaultMaxMgmtConnections;
  int idle_timeout_seconds = kDefaultIdleTimeoutSeconds;
  int mgmt_idle_timeout_seconds = kDefaultMgmtIdleTimeoutSeconds;
  KernelModeSetting kernel = kDefaultKernelMode;
  bool manage_gids = false;
  // --follow-exports: files (or FOLDER/GLOB patterns) to mirror.
  std::vector<std::string> follow_exports;
  std::string log_file;  // --log-file: "" = none
  // --debug-resolver-delay: address text -> milliseconds.
  std::map<std::string, int> resolver_delays;
  // --nfs-conf, --no-nfs-conf: where ApplyNfsConf reads [mountd].
  std::string nfs_conf_path = kDefaultNfsConfPath;
  bool no_nfs_conf = false;
  // Set from nfs.conf only, as rpc.mountd's [mountd] descriptors and ttl:
  int descriptors = 0;  // soft RLIMIT_NOFILE set at start; 0: unchanged
  int ttl = 0;  // seconds the kernel mode's positive answers live; 0: its
                // own default (30 minutes, kernel/kernel_mode.h)
  // The options the command line gave (names without "--"): nfs.conf
  // does not override them.
  std::set<std::string> given;
  bool help = false;
  bool version = false;

  // The pid file is written when detached, or when --pid-file is given.
  bool writes_pid_file() const { return !foreground || pid_file_given; }
};

// Parses argv (without argv[0]). Errors name the option:
//   option --mount-port: "x" is not a port number
[[nodiscard]] absl::StatusOr<DaemonConfig> ParseCommandLine(
    const std::vector<std::string>& args);

// The --help text: every option with its argument, default and meaning.
std::string UsageText();

// What ApplyNfsConf took from nfs.conf and what it left, for the start's
// log. Each item names the key and its FILE:LINE.
struct NfsConfReport {
  bool read = false;               // false: --no-nfs-conf
  std::string path;                // the main file (--nfs-conf)
  std::vector<std::string> files;  // read, in order
  // "port=20048 (/etc/nfs.conf:12) -> --mount-port 20048"
  std::vector<std::string> taken;
  // Per section ("[mountd]"): "ha-callout (/etc/nfs.conf:9: no
  // equivalent)", in the sections' and keys' order.
  std::vector<std::pair<std::string, std::vector<std::string>>> ignored;
  std::vector<std::string> warnings;  // NfsConf::warnings()

  // One line saying what was taken from which files, one naming what was
  // ignored (when anything was), then one per warning:
  //   nfs.conf: took manage-gids=y (/etc/nfs.conf:48) -> --manage-gids
  //     (kernel mode only); read /etc/nfs.conf
  //   nfs.conf: ignored [general] pipefs-directory (/etc/nfs.conf:6: ...)
  std::vector<std::string> LogLines() const;
};

// Reads config->nfs_conf_path and its .d folder (NfsConf) unless
// --no-nfs-conf, and applies the [mountd] settings rpc.mountd takes to
// what the command line did not give: manage-gids, port (--mount-port),
// threads, ttl, descriptors. A missing default file is not an error
// (nothing is taken); a missing --nfs-conf FILE is. On error (a line that
// does not parse, a value the setting refuses: the message names FILE:LINE
// and the key) *config is unchanged.
[[nodiscard]] absl::StatusOr<NfsConfReport> ApplyNfsConf(DaemonConfig* config);

}  // namespace sharemgrd

#endif  // SHAREMGRD_CONFIG_H_

#include "config.h"

#include <functional>
#include <string_view>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "exports_follow.h"
#include "libshare/options.h"

namespace sharemgrd {
namespace {

struct OptionSpec {
  const char* name;  // without "--"
  const char* arg;   // nullptr for a flag
  const char* help;
  // Applies the value (ignored for flags); error text without the option.
  std::function<absl::Status(DaemonConfig&, const std::string&)> apply;
};

absl::Status Bad(const std::string& v, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("\"", v, "\" ", what));
}

absl::Status ParseSeconds(const std::string& v, int* out) {
  int n;
  if (!absl::SimpleAtoi(v, &n) || n < 1 || n > 86400) {
    return Bad(v, "is not a number of seconds from 1 to 86400");
  }
  *out = n;
  return absl::OkStatus();
}

const std::vector<OptionSpec>& Options() {
  static const auto* options = new std::vector<OptionSpec>{
      {"db", "PATH",
       "SQLite store of the share table (default /var/lib/sharemgr/shares.db)",
       [](DaemonConfig& c, const std::string& v) {
         c.db_path = v;
         return absl::OkStatus();
       }},
      {"socket", "PATH",
       "management socket (default /run/sharemgr/sharemgrd.sock)",
       [](DaemonConfig& c, const std::string& v) {
         c.socket_path = v;
         return absl::OkStatus();
       }},
      {"sharetab", "PATH",
       "sharetab view rewritten after each change (default "
       "/run/sharemgr/sharetab)",
       [](DaemonConfig& c, const std::string& v) {
         c.sharetab_path = v;
         return absl::OkStatus();
       }},
      {"foreground", nullptr,
       "stay in the foreground and log to stderr (default: detach, syslog)",
       [](DaemonConfig& c, const std::string&) {
         c.foreground = true;
         return absl::OkStatus();
       }},
      {"pid-file", "PATH",
       "pid file written when detached or when given "
       "(default /run/sharemgr/sharemgrd.pid)",
       [](DaemonConfig& c, const std::string& v) {
         c.pid_file = v;
         c.pid_file_given = true;
         return absl::OkStatus();
       }},
      {"mount-port", "N",
       "MOUNT port for TCP and UDP (default 0: any free port)",
       [](DaemonConfig& c, const std::string& v) {
         int p;
         if (!absl::SimpleAtoi(v, &p) || p < 0 || p > 65535) {
           return Bad(v, "is not a port number");
         }
         c.mount_port = p;
         return absl::OkStatus();
       }},
      {"listen", "ADDR",
       "address MOUNT listens on, IPv4 or IPv6 ([::1] or ::1); repeatable "
       "(default 0.0.0.0 and ::)",
       [](DaemonConfig& c, const std::string& v) {
         std::string text = v;
         if (text.size() > 2 && text.front() == '[' && text.back() == ']') {
           text = text.substr(1, text.size() - 2);
         }
         std::optional<libshare::IpAddress> a =
             libshare::IpAddress::Parse(text);
         if (!a.has_value()) {
           return Bad(v, "is not an IPv4 or IPv6 address");
         }
         if (!c.listen_given) c.listen.clear();
         c.listen_given = true;
         for (const std::string& l : c.listen) {
           if (l == text) return Bad(v, "is given twice");
         }
         c.listen.push_back(text);
         return absl::OkStatus();
       }},
      {"no-rpcbind", nullptr, "do not register MOUNT with rpcbind",
       [](DaemonConfig& c, const std::string&) {
         c.no_rpcbind = true;
         return absl::OkStatus();
       }},
      {"insecure", nullptr,
       "accept MNT from non-reserved source ports (>= 1024)",
       [](DaemonConfig& c, const std::string&) {
         c.insecure = true;
         return absl::OkStatus();
       }},
      {"admin-group", "G",
       "group whose members may change shares (default: root only)",
       [](DaemonConfig& c, const std::string& v) {
         if (v.empty()) return Bad(v, "is not a group name");
         c.admin_group = v;
         return absl::OkStatus();
       }},
      {"hosts", "FILE", "hosts(5) file for names (selects the files resolver)",
       [](DaemonConfig& c, const std::string& v) {
         c.hosts_file = v;
         return absl::OkStatus();
       }},
      {"netgroups", "FILE", "netgroup(5) file (selects the files resolver)",
       [](DaemonConfig& c, const std::string& v) {
         c.netgroups_file = v;
         return absl::OkStatus();
       }},
      {"auth-cache-max", "N",
       "most entries in the authorization cache (default 100000)",
       [](DaemonConfig& c, const std::string& v) {
         uint64_t n;
         if (!absl::SimpleAtoi(v, &n) || n == 0) {
           return Bad(v, "is not a positive number");
         }
         c.auth_cache_max = n;
         return absl::OkStatus();
       }},
      {"load-threads", "N",
       "threads loading groups at start (default: number of cores)",
       [](DaemonConfig& c, const std::string& v) {
         int n;
         if (!absl::SimpleAtoi(v, &n) || n < 1 || n > 256) {
           return Bad(v, "is not a number from 1 to 256");
         }
         c.load_threads = n;
         return absl::OkStatus();
       }},
      {"threads", "N",
       "threads serving requests; more start while calls wait on name "
       "lookups (default: max(4, 2 x cores))",
       [](DaemonConfig& c, const std::string& v) {
         int n;
         if (!absl::SimpleAtoi(v, &n) || n < 1 || n > 1024) {
           return Bad(v, "is not a number from 1 to 1024");
         }
         c.threads = n;
         return absl::OkStatus();
       }},
      {"max-connections", "N",
       "most open MOUNT TCP connections; at the limit a new one closes the "
       "connection idle longest (default 4096)",
       [](DaemonConfig& c, const std::string& v) {
         int n;
         if (!absl::SimpleAtoi(v, &n) || n < 1 || n > 1000000) {
           return Bad(v, "is not a number from 1 to 1000000");
         }
         c.max_connections = n;
         return absl::OkStatus();
       }},
      {"max-mgmt-connections", "N",
       "most open management connections, counted apart from MOUNT ones; at "
       "the limit a new one closes the management connection idle longest "
       "(default 256)",
       [](DaemonConfig& c, const std::string& v) {
         int n;
         if (!absl::SimpleAtoi(v, &n) || n < 1 || n > 100000) {
           return Bad(v, "is not a number from 1 to 100000");
         }
         c.max_mgmt_connections = n;
         return absl::OkStatus();
       }},
      {"idle-timeout", "SECONDS",
       "close a MOUNT TCP connection idle this long (default 120)",
       [](DaemonConfig& c, const std::string& v) {
         return ParseSeconds(v, &c.idle_timeout_seconds);
       }},
      {"mgmt-idle-timeout", "SECONDS",
       "close a management connection idle this long (default 600)",
       [](DaemonConfig& c, const std::string& v) {
         return ParseSeconds(v, &c.mgmt_idle_timeout_seconds);
       }},
      {"kernel", "auto|on|off",
       "serve the Linux kernel NFS server's export caches in place of "
       "rpc.mountd: auto (default) when nfsd is mounted at /proc/fs/nfsd",
       [](DaemonConfig& c, const std::string& v) {
         if (v == "auto") {
           c.kernel = KernelModeSetting::kAuto;
         } else if (v == "on") {
           c.kernel = KernelModeSetting::kOn;
         } else if (v == "off") {
           c.kernel = KernelModeSetting::kOff;
         } else {
           return Bad(v, "is not auto, on or off");
         }
         return absl::OkStatus();
       }},
      {"manage-gids", nullptr,
       "kernel mode: answer the kernel's auth.unix.gid upcalls from the "
       "system's group database (as rpc.mountd --manage-gids)",
       [](DaemonConfig& c, const std::string&) {
         c.manage_gids = true;
         return absl::OkStatus();
       }},
      {"follow-exports", "FILE",
       "mirror the exports(5) file FILE into the managed group named after "
       "it (exports, exports-NAME for NAME.exports), following its changes; "
       "the file name may be a glob (/etc/exports.d/*.exports); repeatable",
       [](DaemonConfig& c, const std::string& v) {
         absl::StatusOr<FollowPattern> p = ParseFollowPattern(v);
         if (!p.ok()) return p.status();
         c.follow_exports.push_back(v);
         return absl::OkStatus();
       }},
      {"log-file", "FILE",
       "also log to FILE (appended, with timestamps; reopened on SIGHUP); "
       "detached, FILE replaces syslog",
       [](DaemonConfig& c, const std::string& v) {
         if (v.empty() || v[0] != '/') return Bad(v, "is not an absolute path");
         c.log_file = v;
         return absl::OkStatus();
       }},
      {"debug-resolver-delay", "ADDR=MS",
       "for tests and benchmarks only: every resolver call about ADDR (or a "
       "name resolving to it) first sleeps MS milliseconds; repeatable",
       [](DaemonConfig& c, const std::string& v) {
         std::size_t eq = v.find('=');
         int ms;
         if (eq == std::string::npos ||
             !absl::SimpleAtoi(absl::string_view(v).substr(eq + 1), &ms) ||
             ms < 0) {
           return Bad(v, "is not ADDR=MS");
         }
         std::optional<libshare::IpAddress> a =
             libshare::IpAddress::Parse(v.substr(0, eq));
         if (!a.has_value()) return Bad(v, "does not start with an address");
         c.resolver_delays[a->ToString()] = ms;
         return absl::OkStatus();
       }},
      {"help", nullptr, "print this help and exit",
       [](DaemonConfig& c, const std::string&) {
         c.help = true;
         return absl::OkStatus();
       }},
      {"version", nullptr, "print the version and exit",
       [](DaemonConfig& c, const std::string&) {
         c.version = true;
         return absl::OkStatus();
       }},
  };
  return *options;
}

}  // namespace

absl::StatusOr<DaemonConfig> ParseCommandLine(
    const std::vector<std::string>& args) {
  DaemonConfig c;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.rfind("--", 0) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("unexpected argument \"", a, "\""));
    }
    std::string name = a.substr(2);
    std::string value;
    bool has_value = false;
    if (std::size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    const OptionSpec* spec = nullptr;
    for (const OptionSpec& o : Options()) {
      if (name == o.name) spec = &o;
    }
    if (spec == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown option \"--", name, "\""));
    }
    if (spec->arg == nullptr) {
      if (has_value) {
        return absl::InvalidArgumentError(
            absl::StrCat("option --", name, " takes no value"));
      }
    } else if (!has_value) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("option --", name, " needs ", spec->arg));
      }
      value = args[++i];
    }
    if (absl::Status s = spec->apply(c, value); !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("option --", name, ": ", s.message()));
    }
  }
  return c;
}

std::string UsageText() {
  std::string out =
      "Usage: sharemgrd [OPTION]...\n"
      "Owns the NFS share table: serves MOUNT (program 100005, versions 1 "
      "and 3)\nand the management socket used by sharectl.\n\nOptions:\n";
  for (const OptionSpec& o : Options()) {
    std::string left = absl::StrCat("  --", o.name);
    if (o.arg != nullptr) absl::StrAppend(&left, " ", o.arg);
    if (left.size() < 30)
      left.resize(30, ' ');
    else
      left += "\n" + std::string(30, ' ');
    absl::StrAppend(&out, left, o.help, "\n");
  }
  absl::StrAppend(&out,
                  "\nSignals: SIGTERM/SIGINT stop cleanly, SIGHUP reloads the "
                  "files resolver and reopens the log file.\nExit status: 0 "
                  "clean stop, 1 start "
                  "failure, 2 usage error.\nSee sharemgrd(8).\n");
  return out;
}

}  // namespace sharemgrd

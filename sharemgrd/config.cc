#include "config.h"

#include <sys/resource.h>

#include <climits>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "exports_follow.h"
#include "libshare/options.h"
#include "pg_engine.h"

namespace sharemgrd {
namespace {

struct OptionSpec {
  const char* name;  // without "--"
  const char* arg;   // nullptr for a flag
  const char* help;
  // Applies the value (ignored for flags); error text without the option.
  std::function<absl::Status(DaemonConfig&, const std::string&)> apply;
  // Test-only: accepted, but left out of --help and sharemgrd(8)
  // (documented for developers in tests/README.md).
  bool hidden = false;
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

// Where the store, the socket, the view and the pid file are; detaching.
std::vector<OptionSpec> StoreAndProcessOptions() {
  return {
      {"db", "PATH",
       "SQLite store of the share table (default /var/lib/sharemgr/shares.db)",
       [](DaemonConfig& c, const std::string& v) {
         c.db_path = v;
         return absl::OkStatus();
       }},
      {"store", "URL",
       "where the share table lives: sqlite:PATH (as --db PATH, the "
       "default) or a PostgreSQL URL several heads share (postgresql://... "
       "or key=value; no password in it), --db then naming this head's copy",
       [](DaemonConfig& c, const std::string& v) {
         if (absl::StartsWith(v, "sqlite:")) {
           if (v.size() == 7) return Bad(v, "names no SQLite file");
           c.db_path = v.substr(7);
           c.store_url.clear();
           return absl::OkStatus();
         }
         if (!libshare::IsPostgresUrl(v)) {
           return Bad(v,
                      "is neither sqlite:PATH nor a PostgreSQL URL "
                      "(postgresql://HOST/DB, or host=... dbname=...)");
         }
         if (absl::Status s = libshare::CheckPostgresUrl(v); !s.ok()) {
           return s;
         }
         c.store_url = v;
         return absl::OkStatus();
       }},
      {"head", "NAME",
       "this head's name in the cluster's change log (default: the host "
       "name)",
       [](DaemonConfig& c, const std::string& v) {
         if (v.empty() || v.size() > 64 ||
             v.find_first_of(" \t\n\r\\\"'") != std::string::npos) {
           return Bad(v, "is not a head name (1-64 characters, no blanks or "
                         "quotes)");
         }
         c.head_name = v;
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
  };
}

// Where MOUNT listens, and who may mount or change what.
std::vector<OptionSpec> MountAccessOptions() {
  return {
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
  };
}

// Threads, connection limits and idle timeouts.
std::vector<OptionSpec> CapacityOptions() {
  return {
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
  };
}

// What sharemgrd takes over from rpc.mountd: the kernel's caches, the
// exports files, nfs.conf.
std::vector<OptionSpec> MountdOptions() {
  return {
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
      {"nfs-conf", "FILE",
       "take rpc.mountd's settings ([mountd] manage-gids, port, threads, "
       "ttl, descriptors) from nfs-utils' configuration FILE and "
       "FILE.d/*.conf; options given here win (default /etc/nfs.conf)",
       [](DaemonConfig& c, const std::string& v) {
         if (v.empty()) return Bad(v, "is not a file name");
         c.nfs_conf_path = v;
         return absl::OkStatus();
       }},
      {"no-nfs-conf", nullptr,
       "read no nfs.conf: only these options and the defaults count",
       [](DaemonConfig& c, const std::string&) {
         c.no_nfs_conf = true;
         return absl::OkStatus();
       }},
  };
}

// The log file, the test-only resolver delay, --help and --version.
std::vector<OptionSpec> LogAndInfoOptions() {
  return {
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
       },
       /*hidden=*/true},
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
}

// The option table, in --help's order.
const std::vector<OptionSpec>& Options() {
  static const auto* options = [] {
    auto* all = new std::vector<OptionSpec>;
    for (const std::vector<OptionSpec>& group :
         {StoreAndProcessOptions(), MountAccessOptions(), CapacityOptions(),
          MountdOptions(), LogAndInfoOptions()}) {
      all->insert(all->end(), group.begin(), group.end());
    }
    return all;
  }();
  return *options;
}

const OptionSpec& Option(absl::string_view name) {
  for (const OptionSpec& o : Options()) {
    if (name == o.name) return o;
  }
  std::abort();  // a name this file spells wrong
}

// nfs.conf's booleans, as conffile.c's conf_get_bool reads them.
std::optional<bool> ParseConfBool(absl::string_view v) {
  for (const char* t : {"1", "t", "true", "y", "yes", "on"}) {
    if (absl::EqualsIgnoreCase(v, t)) return true;
  }
  for (const char* f : {"0", "f", "false", "n", "no", "off"}) {
    if (absl::EqualsIgnoreCase(v, f)) return false;
  }
  return std::nullopt;
}

// Applies one nfs.conf file set to a copy of the configuration.
class NfsConfApplier {
 public:
  NfsConfApplier(const NfsConf& conf, DaemonConfig config, NfsConfReport* r)
      : conf_(conf), c_(std::move(config)), r_(r) {}

  absl::Status Apply() {
    for (const NfsConfEntry* e : conf_.Section("mountd")) {
      if (absl::Status s = Mountd(*e); !s.ok()) return s;
    }
    for (const NfsConfEntry* e : conf_.Section("general")) {
      Ignore(*e, absl::EqualsIgnoreCase(e->key, "pipefs-directory")
                     ? "sharemgrd does not use rpc_pipefs"
                     : "no equivalent");
    }
    // What rpc.mountd reads from other sections, when set.
    for (const char* key : {"udp", "tcp", "vers2", "vers3"}) {
      if (const NfsConfEntry* e = conf_.Find("nfsd", key)) {
        Ignore(*e,
               "sharemgrd serves MOUNT versions 1 and 3 over TCP and UDP "
               "whatever [nfsd] says");
      }
    }
    if (const NfsConfEntry* e = conf_.Find("exports", "rootdir")) {
      Ignore(*e, "share paths are served as they are, with no prefix");
    }
    return absl::OkStatus();
  }

  DaemonConfig& config() { return c_; }

 private:
  absl::Status Mountd(const NfsConfEntry& e) {
    if (!e.subsection.empty()) {
      Ignore(e, "rpc.mountd reads no subsection");
      return absl::OkStatus();
    }
    std::optional<std::string> value = conf_.Expand(e);
    if (!value.has_value()) {
      Ignore(e, absl::StrCat(e.value,
                             " is set in neither the environment nor "
                             "[environment], so rpc.mountd takes it as unset"));
      return absl::OkStatus();
    }
    const std::string& v = *value;
    const std::string key = absl::AsciiStrToLower(e.key);
    auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(
          absl::StrCat(e.Where(), ": [mountd] ", e.key, ": ", why));
    };
    auto boolean = [&]() -> absl::StatusOr<bool> {
      std::optional<bool> b = ParseConfBool(v);
      if (!b.has_value()) {
        return bad(absl::StrCat("\"", v,
                                "\" is not a boolean (y, yes, true, on, 1 or "
                                "n, no, false, off, 0)"));
      }
      return *b;
    };
    if (key == "manage-gids") {
      absl::StatusOr<bool> b = boolean();
      if (!b.ok()) return b.status();
      if (c_.given.count("manage-gids") != 0) {
        Ignore(e, "--manage-gids given");
      } else {
        c_.manage_gids = *b;
        Take(e, v,
             *b ? "--manage-gids (kernel mode only)" : "no --manage-gids");
      }
    } else if (key == "port" || key == "threads") {
      // The option's own check, so the file and the flag take the same.
      const OptionSpec& o = Option(key == "port" ? "mount-port" : "threads");
      DaemonConfig scratch;
      const bool given = c_.given.count(o.name) != 0;
      if (absl::Status s = o.apply(given ? scratch : c_, v); !s.ok()) {
        return bad(s.message());
      }
      if (given) {
        Ignore(e, absl::StrCat("--", o.name, " given"));
      } else {
        Take(e, v, absl::StrCat("--", o.name, " ", v));
      }
    } else if (key == "ttl") {
      int n;
      if (!absl::SimpleAtoi(v, &n) || n < 1) {
        return bad(absl::StrCat(
            "\"", v, "\" is not a number of seconds from 1 to ", INT_MAX));
      }
      c_.ttl = n;
      Take(e, v,
           absl::StrCat("the kernel mode's positive answers live ", n, " s"));
    } else if (key == "descriptors") {
      int n;
      if (!absl::SimpleAtoi(v, &n) || n < 0) {
        return bad(absl::StrCat("\"", v, "\" is not a number of descriptors"));
      }
      rlimit rl{};
      if (n > 0 && ::getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
          rl.rlim_max != RLIM_INFINITY &&
          static_cast<rlim_t>(n) > rl.rlim_max) {
        return bad(absl::StrCat(n, " is above the hard RLIMIT_NOFILE of ",
                                rl.rlim_max));
      }
      c_.descriptors = n;
      if (n == 0) {
        Take(e, v, "descriptor limit unchanged");
      } else {
        Take(e, v,
             absl::StrCat("soft RLIMIT_NOFILE ", n,
                          " (raised further if the connection limits need "
                          "it)"));
      }
    } else if (key == "reverse-lookup") {
      absl::StatusOr<bool> b = boolean();
      if (!b.ok()) return b.status();
      Ignore(e,
             "sharemgrd looks client names up whenever an access list needs "
             "them, and records addresses");
    } else if (key == "state-directory-path") {
      Ignore(e, absl::StrCat("sharemgrd keeps its state in --db ", c_.db_path));
    } else if (key == "debug") {
      Ignore(e, "sharemgrd has no debug logging");
    } else if (key == "cache-use-ipaddr") {
      absl::StatusOr<bool> b = boolean();
      if (!b.ok()) return b.status();
      Ignore(e,
             "sharemgrd's kernel mode always gives each client address its "
             "own auth domain");
    } else if (key == "ha-callout") {
      Ignore(e, "no equivalent");
    } else {
      Ignore(e, "not an rpc.mountd setting");
    }
    return absl::OkStatus();
  }

  void Take(const NfsConfEntry& e, absl::string_view value,
            absl::string_view as) {
    r_->taken.push_back(
        absl::StrCat(e.key, "=", value, " (", e.Where(), ") -> ", as));
  }

  void Ignore(const NfsConfEntry& e, absl::string_view why) {
    std::string label =
        e.subsection.empty()
            ? absl::StrCat("[", e.section, "]")
            : absl::StrCat("[", e.section, " \"", e.subsection, "\"]");
    if (r_->ignored.empty() || r_->ignored.back().first != label) {
      r_->ignored.emplace_back(std::move(label), std::vector<std::string>());
    }
    r_->ignored.back().second.push_back(
        absl::StrCat(e.key, " (", e.Where(), ": ", why, ")"));
  }

  const NfsConf& conf_;
  DaemonConfig c_;
  NfsConfReport* r_;
};

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
    c.given.insert(spec->name);
  }
  if (c.no_nfs_conf && c.given.count("nfs-conf") != 0) {
    return absl::InvalidArgumentError(
        "options --nfs-conf and --no-nfs-conf exclude each other");
  }
  return c;
}

std::vector<std::string> NfsConfReport::LogLines() const {
  std::vector<std::string> lines;
  if (!read) {
    lines.push_back("nfs.conf: not read (--no-nfs-conf)");
    return lines;
  }
  if (files.empty()) {
    lines.push_back(absl::StrCat("nfs.conf: took nothing: no ", path, " nor ",
                                 path, ".d/*.conf"));
  } else {
    lines.push_back(
        absl::StrCat("nfs.conf: took ",
                     taken.empty() ? "nothing" : absl::StrJoin(taken, ", "),
                     "; read ", absl::StrJoin(files, ", ")));
  }
  if (!ignored.empty()) {
    std::vector<std::string> parts;
    for (const auto& [section, keys] : ignored) {
      parts.push_back(absl::StrCat(section, " ", absl::StrJoin(keys, ", ")));
    }
    lines.push_back(
        absl::StrCat("nfs.conf: ignored ", absl::StrJoin(parts, "; ")));
  }
  for (const std::string& w : warnings) {
    lines.push_back(absl::StrCat("nfs.conf: ", w));
  }
  return lines;
}

absl::StatusOr<NfsConfReport> ApplyNfsConf(DaemonConfig* config) {
  NfsConfReport r;
  r.path = config->nfs_conf_path;
  if (config->no_nfs_conf) return r;
  r.read = true;
  absl::StatusOr<NfsConf> conf = NfsConf::Load(config->nfs_conf_path);
  if (!conf.ok()) return conf.status();
  if (config->given.count("nfs-conf") != 0 &&
      (conf->files().empty() || conf->files().front() != r.path)) {
    return absl::NotFoundError(
        absl::StrCat("--nfs-conf ", r.path, ": no such file"));
  }
  r.files = conf->files();
  r.warnings = conf->warnings();
  NfsConfApplier applier(*conf, *config, &r);
  if (absl::Status s = applier.Apply(); !s.ok()) return s;
  *config = std::move(applier.config());
  return r;
}

std::string UsageText() {
  std::string out =
      "Usage: sharemgrd [OPTION]...\n"
      "Owns the NFS share table: serves MOUNT (program 100005, versions 1 "
      "and 3)\nand the management socket used by sharectl.\n\nOptions:\n";
  for (const OptionSpec& o : Options()) {
    if (o.hidden) continue;
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

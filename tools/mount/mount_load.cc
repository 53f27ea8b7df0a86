// mount_load: a MOUNT load generator. N client threads, each with its own
// loopback source address and (by default) reserved port, each over its own
// connection, send MNT for the given paths for D seconds or C calls each,
// and one JSON line reports throughput and latency.
//
//   mount_load --server 127.0.0.1 --port P --clients N
//              (--path PATH ... | --paths-file FILE)
//              [--duration S | --calls C] [--udp] [--vers 1|3]
//              [--source-base 127.0.2.1] [--unreserved] [--warmup K]
//              [--cold | --first-mounts | --mixed]
//              [--stall-source ADDR [--stall-path PATH]] [--timeout MS]
//              [--no-cleanup] [--proc mnt|null|export] [--settle MS]
//
// --settle MS: the timed calls start MS milliseconds after every client's
// warm-up ended, so that what the warm-up left the daemon to do (writing
// the records it made, which sharemgrd does once the calls pause) is not
// timed with the calls that follow.
// --proc null or export times that procedure instead of MNT (paths are then
// unused but one is still required); EXPORT's entry count is reported.
// Modes:
//  warm (default): each client first sends K untimed MNTs (default: one per
//    path, at most 1000) so its decisions are cached, then the timed run.
//  --cold: every timed MNT comes from a new connection from a source address
//    never used before in the run (client i's k-th call uses source-base +
//    i + k*N): each is a client's first mount, an authorization-cache miss.
//    Only the MNT call is timed, not the connection set-up.
//  --first-mounts: each client (its own address, as in warm mode) first
//    sends one untimed MNT so that its names are known, then every timed
//    MNT is of a path it has not mounted in this run: a new mount record
//    (and a new cached decision if the path's share holds options no
//    earlier MNT of the client used: decisions are cached per client and
//    options object), the cost a mount storm pays. Use a
//    --source-base not used before against this daemon, and --calls of at
//    most the number of paths minus one.
//  --mixed: the two kinds in one run, so that both meet the same load
//    (the record flusher's bursts, the other clients): each client first
//    sends K untimed MNTs (--warmup, as in warm mode), then its timed calls
//    alternate between a repeat (a path of its warm-up) and a first mount
//    (a path it never mounted). "first" and "repeat" report each kind's
//    p50, p99 and lat_hist. Use a --source-base not used before against
//    this daemon; K plus half of --calls must stay below the number of
//    paths.
//  --stall-source ADDR: one more client, from ADDR (the host the daemon was
//    told to stall on with --debug-resolver-delay), keeps one MNT in flight
//    during the whole run; its calls are reported apart under "stalled".
//
// The JSON line also holds "lat_hist", every timed call's latency as
// [microseconds, count] pairs (1 µs wide below 1 ms, 10 µs below 10 ms,
// 100 µs above), so that runs can be pooled into one distribution.
//
// Clients' addresses are source-base, source-base+1, ... (as a 32-bit
// number, skipping x.y.z.0 and x.y.z.255), so a hosts file can name them.
// The clients UMNTALL their mounts after the run unless --no-cleanup.
// Exit: 0 when the run completed with at least one successful call, 1
// otherwise, 2 on a usage error.
#include <arpa/inet.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "mount_client.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr char kUsage[] =
    "usage: mount_load --server ADDR --port PORT --clients N\n"
    "                  (--path PATH ... | --paths-file FILE)\n"
    "                  [--duration SECONDS | --calls C] [--udp] [--vers 1|3]\n"
    "                  [--source-base ADDR] [--unreserved] [--warmup K]\n"
    "                  [--cold | --first-mounts | --mixed]\n"
    "                  [--stall-source ADDR [--stall-path PATH]]\n"
    "                  [--timeout MS] [--no-cleanup] [--proc "
    "mnt|null|export]\n"
    "                  [--settle MS]\n";

struct Config {
  mountclient::Options base;  // server, port, transport, version, timeout
  int clients = 1;
  double duration_s = 0;  // 0: use calls
  long calls = 0;         // per client
  std::vector<std::string> paths;
  uint32_t source_base = 0;
  int warmup = -1;  // -1: one per path, at most 1000
  bool cold = false;
  bool first_mounts = false;
  bool mixed = false;
  std::string stall_source;
  std::string stall_path;
  bool cleanup = true;
  std::string proc = "mnt";  // mnt, null or export
  int settle_ms = 0;         // between the warm-up and the timed calls
};

// Per-thread results; merged after the run.
struct ThreadResult {
  std::vector<int64_t> latencies_ns;
  // --mixed: the same calls by kind.
  std::vector<int64_t> first_ns, repeat_ns;
  long ok = 0;
  long rpc_errors = 0;
  long connect_failures = 0;
  std::map<int, long> statuses;  // MNT status -> count (non-OK only)
  std::string first_error;
};

// The n-th usable address at or after `base` (skipping .0 and .255).
uint32_t NthAddress(uint32_t base, uint64_t n) {
  uint32_t a = base;
  auto usable = [](uint32_t x) {
    return (x & 0xff) != 0 && (x & 0xff) != 0xff;
  };
  while (!usable(a)) ++a;
  // 254 usable addresses per /24: step in whole blocks, then the rest.
  uint64_t offset_in_block = (a & 0xff) - 1;
  uint64_t k = offset_in_block + n;
  uint32_t block = (a >> 8) + static_cast<uint32_t>(k / 254);
  return (block << 8) | static_cast<uint32_t>(k % 254 + 1);
}

std::string AddressString(uint32_t host_order) {
  in_addr a;
  a.s_addr = htonl(host_order);
  char buf[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, &a, buf, sizeof buf);
  return buf;
}

int64_t Percentile(const std::vector<int64_t>& sorted, double q) {
  if (sorted.empty()) return 0;
  size_t i = static_cast<size_t>(q * (sorted.size() - 1) + 0.5);
  return sorted[std::min(i, sorted.size() - 1)];
}

// The latencies (sorted, ns) as [µs, count] pairs, in buckets 1 µs wide
// below 1 ms, 10 µs below 10 ms and 100 µs from there.
std::string LatencyHistogram(const std::vector<int64_t>& sorted) {
  std::string out = "[";
  int64_t bucket = -1;
  long count = 0;
  auto flush = [&] {
    if (count == 0) return;
    absl::StrAppend(&out, out.size() > 1 ? "," : "", "[", bucket, ",", count,
                    "]");
  };
  for (int64_t ns : sorted) {
    const int64_t us = ns / 1000;
    const int64_t b = us < 1000 ? us : us < 10000 ? us / 10 * 10 : us / 100 * 100;
    if (b != bucket) {
      flush();
      bucket = b;
      count = 0;
    }
    ++count;
  }
  flush();
  return out + "]";
}

void Record(ThreadResult* r, const absl::StatusOr<mountclient::MntReply>& m,
            int64_t ns) {
  if (!m.ok()) {
    ++r->rpc_errors;
    if (r->first_error.empty())
      r->first_error = std::string(m.status().message());
    return;
  }
  r->latencies_ns.push_back(ns);
  if (m->status == mountclient::kMnt3Ok) {
    ++r->ok;
  } else {
    ++r->statuses[m->status];
  }
}

absl::StatusOr<std::unique_ptr<mountclient::MountClient>> ConnectFrom(
    const Config& cfg, const std::string& source) {
  mountclient::Options o = cfg.base;
  o.source = source;
  return mountclient::MountClient::Connect(o);
}

class LoadRun {
 public:
  explicit LoadRun(const Config& cfg) : cfg_(cfg) {}

  // One timed call of the configured procedure. NULL and EXPORT succeed as
  // MNT3_OK; EXPORT also records how many entries it returned.
  absl::StatusOr<mountclient::MntReply> Call(mountclient::MountClient& c,
                                             const std::string& path) {
    if (cfg_.proc == "mnt") return c.Mnt(path);
    mountclient::MntReply ok;
    ok.status = mountclient::kMnt3Ok;
    if (cfg_.proc == "null") {
      absl::Status s = c.Null();
      if (!s.ok()) return s;
      return ok;
    }
    auto e = c.ExportCount();
    if (!e.ok()) return e.status();
    export_entries_ = static_cast<long>(*e);
    return ok;
  }

  // Warm clients: connect and warm up, wait for the start, then loop.
  void WarmClient(int index, ThreadResult* r) {
    const std::string source =
        AddressString(NthAddress(cfg_.source_base, index));
    auto c = ConnectFrom(cfg_, source);
    if (!c.ok()) {
      ++r->connect_failures;
      r->first_error = std::string(c.status().message());
      Ready();
      return;
    }
    const size_t np = cfg_.paths.size();
    size_t next = (static_cast<size_t>(index) * 7) % np;
    int warm = cfg_.warmup >= 0 ? cfg_.warmup
                                : static_cast<int>(std::min<size_t>(np, 1000));
    if (cfg_.first_mounts) {
      // The path just before this client's timed ones: its names are then
      // cached, and none of the timed paths was mounted by it.
      (void)Call(**c, cfg_.paths[(next + np - 1) % np]);
      warm = 0;
    }
    for (int i = 0; i < warm; ++i) {
      (void)Call(**c, cfg_.paths[(next + i) % np]);
    }
    Ready();
    WaitForStart();
    // --mixed: first mounts are of the paths after the warm-up's.
    size_t fresh = (next + static_cast<size_t>(warm)) % np;
    const size_t warm_start = next;
    for (long n = 0; !Done(n); ++n) {
      const bool first = cfg_.mixed && n % 2 == 1;
      const std::string* p;
      if (first) {
        p = &cfg_.paths[fresh];
        fresh = (fresh + 1) % np;
      } else {
        p = &cfg_.paths[next];
        next = (next + 1) % np;
        if (cfg_.mixed &&
            (next + np - warm_start) % np >= static_cast<size_t>(warm)) {
          next = warm_start;  // repeats stay within the warm-up's paths
        }
      }
      auto t0 = Clock::now();
      auto m = Call(**c, *p);
      const int64_t ns = (Clock::now() - t0).count();
      Record(r, m, ns);
      if (cfg_.mixed && m.ok()) (first ? r->first_ns : r->repeat_ns).push_back(ns);
    }
    if (cfg_.cleanup) (void)(*c)->Umntall();
  }

  // Cold clients: a new connection from a new address for every call.
  void ColdClient(int index, ThreadResult* r) {
    Ready();
    WaitForStart();
    const size_t np = cfg_.paths.size();
    for (long n = 0; !Done(n); ++n) {
      uint64_t k = static_cast<uint64_t>(index) +
                   static_cast<uint64_t>(n) * cfg_.clients;
      auto c =
          ConnectFrom(cfg_, AddressString(NthAddress(cfg_.source_base, k)));
      if (!c.ok()) {
        ++r->connect_failures;
        if (r->first_error.empty())
          r->first_error = std::string(c.status().message());
        continue;
      }
      auto t0 = Clock::now();
      auto m = Call(**c, cfg_.paths[k % np]);
      Record(r, m, (Clock::now() - t0).count());
      if (cfg_.cleanup) (void)(*c)->Umntall();
    }
  }

  // The stalled client keeps one MNT in flight until the others are done.
  void StalledClient(ThreadResult* r) {
    auto c = ConnectFrom(cfg_, cfg_.stall_source);
    if (!c.ok()) {
      ++r->connect_failures;
      r->first_error = std::string(c.status().message());
      Ready();
      return;
    }
    Ready();
    WaitForStart();
    while (!stop_stalled_.load()) {
      auto t0 = Clock::now();
      auto m = (*c)->Mnt(cfg_.stall_path);
      Record(r, m, (Clock::now() - t0).count());
    }
    if (cfg_.cleanup) (void)(*c)->Umntall();
  }

  int Run() {
    const bool stall = !cfg_.stall_source.empty();
    const int threads = cfg_.clients + (stall ? 1 : 0);
    std::vector<ThreadResult> results(cfg_.clients);
    ThreadResult stalled;
    {
      absl::MutexLock l(&mu_);
      expected_ready_ = threads;
    }
    std::vector<std::thread> pool;
    if (stall) pool.emplace_back([&] { StalledClient(&stalled); });
    for (int i = 0; i < cfg_.clients; ++i) {
      pool.emplace_back([this, i, &results] {
        if (cfg_.cold) {
          ColdClient(i, &results[i]);
        } else {
          WarmClient(i, &results[i]);
        }
      });
    }
    {
      absl::MutexLock l(&mu_);
      mu_.Await(absl::Condition(
          +[](LoadRun* r) ABSL_NO_THREAD_SAFETY_ANALYSIS {
            return r->ready_ == r->expected_ready_;
          },
          this));
    }
    if (cfg_.settle_ms > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(cfg_.settle_ms));
    }
    start_ = Clock::now();
    deadline_ = start_ + std::chrono::duration_cast<Clock::duration>(
                             std::chrono::duration<double>(cfg_.duration_s));
    {
      absl::MutexLock l(&mu_);
      started_ = true;
    }
    // The stalled thread is first; join the measured clients, then stop it.
    for (size_t i = stall ? 1 : 0; i < pool.size(); ++i) pool[i].join();
    const double elapsed =
        std::chrono::duration<double>(Clock::now() - start_).count();
    stop_stalled_ = true;
    if (stall) pool[0].join();

    ThreadResult all;
    for (auto& r : results) {
      all.latencies_ns.insert(all.latencies_ns.end(), r.latencies_ns.begin(),
                              r.latencies_ns.end());
      all.first_ns.insert(all.first_ns.end(), r.first_ns.begin(),
                          r.first_ns.end());
      all.repeat_ns.insert(all.repeat_ns.end(), r.repeat_ns.begin(),
                           r.repeat_ns.end());
      all.ok += r.ok;
      all.rpc_errors += r.rpc_errors;
      all.connect_failures += r.connect_failures;
      for (auto& [st, n] : r.statuses) all.statuses[st] += n;
      if (all.first_error.empty()) all.first_error = r.first_error;
    }
    std::sort(all.latencies_ns.begin(), all.latencies_ns.end());
    long refused = 0;
    std::vector<std::string> st;
    for (auto& [s, n] : all.statuses) {
      refused += n;
      st.push_back(
          absl::StrCat("\"", mountclient::MountStatusName(s), "\":", n));
    }
    const long calls = static_cast<long>(all.latencies_ns.size());
    auto us = [](int64_t ns) { return ns / 1000.0; };
    std::string json = absl::StrCat(
        "{\"mode\":\"",
        cfg_.cold           ? "cold"
        : cfg_.first_mounts ? "first-mounts"
        : cfg_.mixed        ? "mixed"
                            : "warm",
        "\",\"transport\":\"",
        cfg_.base.transport == mountclient::Transport::kTcp ? "tcp" : "udp",
        "\",\"proc\":\"", cfg_.proc, "\",\"version\":", cfg_.base.version,
        ",\"clients\":", cfg_.clients, ",\"paths\":", cfg_.paths.size(),
        ",\"duration_s\":", elapsed, ",\"calls\":", calls, ",\"ok\":", all.ok,
        ",\"refused\":", refused, ",\"rpc_errors\":", all.rpc_errors,
        ",\"connect_failures\":", all.connect_failures,
        ",\"errors\":", refused + all.rpc_errors + all.connect_failures,
        ",\"calls_per_s\":", elapsed > 0 ? calls / elapsed : 0.0,
        ",\"p50_us\":", us(Percentile(all.latencies_ns, 0.50)),
        ",\"p90_us\":", us(Percentile(all.latencies_ns, 0.90)),
        ",\"p99_us\":", us(Percentile(all.latencies_ns, 0.99)), ",\"max_us\":",
        us(all.latencies_ns.empty() ? 0 : all.latencies_ns.back()),
        ",\"statuses\":{", absl::StrJoin(st, ","), "}",
        ",\"lat_hist\":", LatencyHistogram(all.latencies_ns));
    if (cfg_.proc == "export") {
      absl::StrAppend(&json, ",\"export_entries\":", export_entries_.load());
    }
    if (cfg_.mixed) {
      for (auto* kind : {&all.first_ns, &all.repeat_ns}) {
        std::sort(kind->begin(), kind->end());
        absl::StrAppend(&json, ",\"", kind == &all.first_ns ? "first" : "repeat",
                        "\":{\"calls\":", kind->size(),
                        ",\"p50_us\":", us(Percentile(*kind, 0.50)),
                        ",\"p99_us\":", us(Percentile(*kind, 0.99)),
                        ",\"lat_hist\":", LatencyHistogram(*kind), "}");
      }
    }
    if (stall) {
      std::sort(stalled.latencies_ns.begin(), stalled.latencies_ns.end());
      absl::StrAppend(
          &json, ",\"stalled\":{\"source\":\"", cfg_.stall_source,
          "\",\"completed\":", stalled.latencies_ns.size(),
          ",\"rpc_errors\":", stalled.rpc_errors, ",\"max_us\":",
          us(stalled.latencies_ns.empty() ? 0 : stalled.latencies_ns.back()),
          "}");
    }
    std::string err = all.first_error;
    for (char& ch : err) {
      if (ch == '"' || ch == '\\' || static_cast<unsigned char>(ch) < 0x20)
        ch = ' ';
    }
    absl::StrAppend(&json, ",\"first_error\":\"", err, "\"}");
    puts(json.c_str());
    fflush(stdout);
    return all.ok > 0 ? 0 : 1;
  }

 private:
  void Ready() {
    absl::MutexLock l(&mu_);
    ++ready_;
  }
  void WaitForStart() {
    absl::MutexLock l(&mu_);
    mu_.Await(absl::Condition(&started_));
  }
  bool Done(long n) const {
    if (cfg_.duration_s > 0) return Clock::now() >= deadline_;
    return n >= cfg_.calls;
  }

  const Config& cfg_;
  absl::Mutex mu_;
  int ready_ ABSL_GUARDED_BY(mu_) = 0;
  int expected_ready_ ABSL_GUARDED_BY(mu_) = 0;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  // Written before started_ is set, read only after it is seen set.
  Clock::time_point start_, deadline_;
  std::atomic<bool> stop_stalled_{false};
  std::atomic<long> export_entries_{-1};
};

int Usage(const std::string& why) {
  if (!why.empty()) fprintf(stderr, "mount_load: %s\n", why.c_str());
  fputs(kUsage, stderr);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Config cfg;
  cfg.base.port_mode = mountclient::PortMode::kReserved;
  std::string source_base = "127.0.2.1";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    const char* v = nullptr;
    auto need = [&]() {
      v = i + 1 < argc ? argv[++i] : nullptr;
      return v != nullptr;
    };
    if (a == "--server" && need()) {
      cfg.base.server = v;
    } else if (a == "--port" && need()) {
      uint32_t p;
      if (!absl::SimpleAtoi(v, &p) || p == 0 || p > 65535)
        return Usage("bad --port");
      cfg.base.port = static_cast<uint16_t>(p);
    } else if (a == "--clients" && need()) {
      if (!absl::SimpleAtoi(v, &cfg.clients) || cfg.clients < 1 ||
          cfg.clients > 4096) {
        return Usage("--clients must be 1..4096");
      }
    } else if (a == "--duration" && need()) {
      if (!absl::SimpleAtod(v, &cfg.duration_s) || cfg.duration_s <= 0 ||
          cfg.duration_s > 3600) {
        return Usage("--duration must be 0 < S <= 3600");
      }
    } else if (a == "--calls" && need()) {
      if (!absl::SimpleAtoi(v, &cfg.calls) || cfg.calls < 1 ||
          cfg.calls > 100000000) {
        return Usage("--calls must be 1..100000000");
      }
    } else if (a == "--path" && need()) {
      cfg.paths.push_back(v);
    } else if (a == "--paths-file" && need()) {
      std::ifstream in(v);
      if (!in) return Usage(absl::StrCat("--paths-file ", v, ": cannot open"));
      for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line[0] != '#') cfg.paths.push_back(line);
      }
    } else if (a == "--udp") {
      cfg.base.transport = mountclient::Transport::kUdp;
    } else if (a == "--vers" && need()) {
      if (!absl::SimpleAtoi(v, &cfg.base.version) ||
          (cfg.base.version != 1 && cfg.base.version != 3)) {
        return Usage("--vers must be 1 or 3");
      }
    } else if (a == "--source-base" && need()) {
      source_base = v;
    } else if (a == "--unreserved") {
      cfg.base.port_mode = mountclient::PortMode::kEphemeral;
    } else if (a == "--warmup" && need()) {
      if (!absl::SimpleAtoi(v, &cfg.warmup) || cfg.warmup < 0) {
        return Usage("--warmup must be >= 0");
      }
    } else if (a == "--cold") {
      cfg.cold = true;
    } else if (a == "--first-mounts") {
      cfg.first_mounts = true;
    } else if (a == "--mixed") {
      cfg.mixed = true;
    } else if (a == "--stall-source" && need()) {
      cfg.stall_source = v;
    } else if (a == "--stall-path" && need()) {
      cfg.stall_path = v;
    } else if (a == "--timeout" && need()) {
      if (!absl::SimpleAtoi(v, &cfg.base.timeout_ms) ||
          cfg.base.timeout_ms <= 0) {
        return Usage("--timeout needs milliseconds");
      }
    } else if (a == "--proc" && need()) {
      cfg.proc = v;
      if (cfg.proc != "mnt" && cfg.proc != "null" && cfg.proc != "export") {
        return Usage("--proc must be mnt, null or export");
      }
    } else if (a == "--settle" && need()) {
      if (!absl::SimpleAtoi(v, &cfg.settle_ms) || cfg.settle_ms < 0) {
        return Usage("--settle needs milliseconds (>= 0)");
      }
    } else if (a == "--no-cleanup") {
      cfg.cleanup = false;
    } else if (a == "-h" || a == "--help") {
      fputs(kUsage, stdout);
      return 0;
    } else {
      return Usage(absl::StrCat("unknown or incomplete option ", a));
    }
  }
  if (cfg.base.port == 0) return Usage("--port is required");
  if (cfg.paths.empty()) return Usage("no --path or --paths-file");
  if ((cfg.duration_s > 0) == (cfg.calls > 0)) {
    return Usage("give exactly one of --duration and --calls");
  }
  if (cfg.cold + cfg.first_mounts + cfg.mixed > 1) {
    return Usage("--cold, --first-mounts and --mixed exclude each other");
  }
  if (cfg.mixed) {
    const size_t warm = cfg.warmup >= 0
                            ? static_cast<size_t>(cfg.warmup)
                            : std::min<size_t>(cfg.paths.size(), 1000);
    if (warm == 0 || cfg.calls <= 0 ||
        warm + static_cast<size_t>(cfg.calls) / 2 + 1 >= cfg.paths.size()) {
      return Usage(
          "--mixed needs --calls, a --warmup of at least 1, and the warm-up "
          "plus half the calls below the number of paths");
    }
  }
  if (cfg.first_mounts &&
      (cfg.calls <= 0 || static_cast<size_t>(cfg.calls) >= cfg.paths.size())) {
    return Usage("--first-mounts needs --calls below the number of paths");
  }
  in_addr a;
  if (inet_pton(AF_INET, source_base.c_str(), &a) != 1) {
    return Usage(absl::StrCat("--source-base \"", source_base,
                              "\": not an IPv4 address"));
  }
  cfg.source_base = ntohl(a.s_addr);
  if (cfg.stall_path.empty()) cfg.stall_path = cfg.paths[0];
  return LoadRun(cfg).Run();
}

// mountprobe: one MOUNT call from a chosen source address and port, with
// output meant for scripts.
//
//   mountprobe --server 127.0.0.1 --port P [--udp] [--source 127.0.0.5]
//              [--reserved|--unreserved] [--vers 1|3] [--timeout MS] [-v]
//              {null | mnt PATH | umnt PATH | umntall | dump | export}
//
// Output (stdout): null/umnt/umntall print "OK"; mnt prints
// "MNT3_OK fh=<hex> flavors=1[,6...]" or the error name ("MNT3ERR_ACCES");
// dump prints "HOST PATH" per record; export prints "PATH LIST,LIST" per
// share ("PATH" alone when open to everyone). With -v the local address
// and port go to stderr as "source ADDR:PORT".
// Exit: 0 when the RPC succeeded (whatever MNT's status), 1 on an RPC or
// connection failure, 2 on a usage error.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "mount_client.h"

namespace {

constexpr char kUsage[] =
    "usage: mountprobe --server ADDR --port PORT [--udp] [--source ADDR]\n"
    "                  [--reserved|--unreserved] [--vers 1|3] [--timeout MS] "
    "[-v]\n"
    "                  {null | mnt PATH | umnt PATH | umntall | dump | "
    "export}\n";

int Usage(const std::string& why) {
  if (!why.empty()) fprintf(stderr, "mountprobe: %s\n", why.c_str());
  fputs(kUsage, stderr);
  return 2;
}

int Fail(const absl::Status& s) {
  fprintf(stderr, "mountprobe: %s\n", std::string(s.message()).c_str());
  return 1;
}

std::string Hex(const std::vector<uint8_t>& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  mountclient::Options o;
  // Root gets a reserved port by default, as mount(8) does.
  o.port_mode = geteuid() == 0 ? mountclient::PortMode::kReserved
                               : mountclient::PortMode::kEphemeral;
  bool verbose = false;
  std::vector<std::string> words;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char* {
      return i + 1 < argc ? argv[++i] : nullptr;
    };
    if (a == "--server") {
      const char* v = value();
      if (v == nullptr) return Usage("--server needs an address");
      o.server = v;
    } else if (a == "--port") {
      const char* v = value();
      uint32_t p;
      if (v == nullptr || !absl::SimpleAtoi(v, &p) || p == 0 || p > 65535) {
        return Usage("--port needs a port number");
      }
      o.port = static_cast<uint16_t>(p);
    } else if (a == "--udp") {
      o.transport = mountclient::Transport::kUdp;
    } else if (a == "--tcp") {
      o.transport = mountclient::Transport::kTcp;
    } else if (a == "--source") {
      const char* v = value();
      if (v == nullptr) return Usage("--source needs an address");
      o.source = v;
    } else if (a == "--reserved") {
      o.port_mode = mountclient::PortMode::kReserved;
    } else if (a == "--unreserved") {
      o.port_mode = mountclient::PortMode::kEphemeral;
    } else if (a == "--vers") {
      const char* v = value();
      if (v == nullptr || !absl::SimpleAtoi(v, &o.version) ||
          (o.version != 1 && o.version != 3)) {
        return Usage("--vers must be 1 or 3");
      }
    } else if (a == "--timeout") {
      const char* v = value();
      if (v == nullptr || !absl::SimpleAtoi(v, &o.timeout_ms) ||
          o.timeout_ms <= 0) {
        return Usage("--timeout needs milliseconds");
      }
    } else if (a == "-v" || a == "--verbose") {
      verbose = true;
    } else if (a == "-h" || a == "--help") {
      fputs(kUsage, stdout);
      return 0;
    } else if (a.size() > 1 && a[0] == '-') {
      return Usage("unknown option " + a);
    } else {
      words.push_back(a);
    }
  }
  if (o.port == 0) return Usage("--port is required");
  if (words.empty()) return Usage("no command");
  const std::string& cmd = words[0];
  const bool needs_path = cmd == "mnt" || cmd == "umnt";
  if (words.size() != (needs_path ? 2u : 1u)) {
    return Usage("command \"" + cmd + "\": wrong number of arguments");
  }
  if (!needs_path && cmd != "null" && cmd != "umntall" && cmd != "dump" &&
      cmd != "export") {
    return Usage("unknown command \"" + cmd + "\"");
  }

  auto client = mountclient::MountClient::Connect(o);
  if (!client.ok()) return Fail(client.status());
  if (verbose) {
    fprintf(stderr, "source %s:%u\n", (*client)->local_address().c_str(),
            (*client)->local_port());
  }
  mountclient::MountClient& c = **client;

  if (cmd == "null" || cmd == "umnt" || cmd == "umntall") {
    absl::Status s = cmd == "null"   ? c.Null()
                     : cmd == "umnt" ? c.Umnt(words[1])
                                     : c.Umntall();
    if (!s.ok()) return Fail(s);
    puts("OK");
  } else if (cmd == "mnt") {
    auto r = c.Mnt(words[1]);
    if (!r.ok()) return Fail(r.status());
    std::string line = mountclient::MountStatusName(r->status);
    if (r->status == mountclient::kMnt3Ok) {
      line += " fh=" + Hex(r->fh);
      if (o.version == 3) line += " flavors=" + absl::StrJoin(r->flavors, ",");
    }
    puts(line.c_str());
  } else if (cmd == "dump") {
    auto r = c.Dump();
    if (!r.ok()) return Fail(r.status());
    for (const auto& m : *r) printf("%s %s\n", m.host.c_str(), m.dir.c_str());
  } else {
    auto r = c.Export();
    if (!r.ok()) return Fail(r.status());
    for (const auto& e : *r) {
      if (e.groups.empty()) {
        printf("%s\n", e.dir.c_str());
      } else {
        printf("%s %s\n", e.dir.c_str(), absl::StrJoin(e.groups, ",").c_str());
      }
    }
  }
  return fflush(stdout) == 0 ? 0 : 1;
}

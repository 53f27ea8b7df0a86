// A small MOUNT protocol client (program 100005, versions 1 and 3, RFC 1813
// appendix I), used by the integration tests (through mountprobe) and by the
// load generator mount_load.
//
// Unlike libtirpc's clnt_create(), MountClient opens and binds its own
// socket, so a caller chooses the source address (any 127.x.y.z on Linux
// loopback) and whether the source port is reserved (< 1024, what a MOUNT
// server demands unless it runs with --insecure). That lets one process act
// as many distinct clients.
//
// A MountClient is not thread-safe: use one per thread. Distinct clients may
// be used concurrently from different threads.
//
//   mountclient::Options o;
//   o.port = 20048;
//   o.source = "127.0.3.7";
//   o.port_mode = mountclient::PortMode::kReserved;
//   auto c = mountclient::MountClient::Connect(o);
//   if (!c.ok()) ...
//   absl::StatusOr<mountclient::MntReply> r = (*c)->Mnt("/export/home/u1");
//   if (r.ok() && r->status == mountclient::kMnt3Ok) ... r->fh ...
#ifndef BENCH_TOOLS_MOUNT_CLIENT_H_
#define BENCH_TOOLS_MOUNT_CLIENT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

struct __rpc_client;  // libtirpc's CLIENT

namespace mountclient {

inline constexpr uint32_t kMountProgram = 100005;
inline constexpr int kMaxPathLen = 1024;  // MNTPATHLEN
inline constexpr int kMaxNameLen = 255;   // MNTNAMLEN
inline constexpr int kFhSize3 = 64;       // FHSIZE3
inline constexpr int kFhSize1 = 32;       // FHSIZE (v1, fixed size)

// mountstat3 values (RFC 1813). Version 1 uses errno values, which agree
// for the codes a MOUNT server returns.
inline constexpr int kMnt3Ok = 0;
inline constexpr int kMnt3ErrPerm = 1;
inline constexpr int kMnt3ErrNoent = 2;
inline constexpr int kMnt3ErrIo = 5;
inline constexpr int kMnt3ErrAcces = 13;
inline constexpr int kMnt3ErrNotdir = 20;
inline constexpr int kMnt3ErrInval = 22;
inline constexpr int kMnt3ErrNametoolong = 63;
inline constexpr int kMnt3ErrNotsupp = 10004;
inline constexpr int kMnt3ErrServerfault = 10006;

// "MNT3_OK", "MNT3ERR_ACCES", ... or "MNT3ERR_<number>" for an unknown code.
std::string MountStatusName(int status);

enum class Transport { kTcp, kUdp };

enum class PortMode {
  kEphemeral,  // whatever the kernel picks (not reserved)
  kReserved,   // a port in [600, 1023]; needs root or CAP_NET_BIND_SERVICE
};

struct Options {
  std::string server = "127.0.0.1";  // IPv4 address of the MOUNT server
  uint16_t port = 0;                 // its MOUNT port (no rpcbind lookup)
  Transport transport = Transport::kTcp;
  std::string source;  // local IPv4 address to bind, "" for any
  PortMode port_mode = PortMode::kEphemeral;
  int version = 3;  // 1 or 3
  int timeout_ms = 10000;
  bool auth_sys = true;  // AUTH_SYS credentials (else AUTH_NONE)
};

struct MntReply {
  int status = -1;  // mountstat3 (or the v1 errno value)
  std::vector<uint8_t> fh;
  std::vector<int> flavors;  // v3 only
};

struct MountRecord {  // one DUMP entry
  std::string host;
  std::string dir;
};

struct ExportEntry {  // one EXPORT entry
  std::string dir;
  std::vector<std::string> groups;  // empty: everyone
};

class MountClient {
 public:
  // Opens the socket, binds it per `options`, connects (TCP) and sets up
  // the RPC client. kInvalidArgument for a bad address or version,
  // kUnavailable when the server cannot be reached, kResourceExhausted when
  // no reserved port is free.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<MountClient>> Connect(
      const Options& options);
  ~MountClient();
  MountClient(const MountClient&) = delete;
  MountClient& operator=(const MountClient&) = delete;

  // Each call returns a non-OK status only for a transport or RPC failure
  // (kDeadlineExceeded on timeout, kUnavailable otherwise, with libtirpc's
  // message); MOUNT's own errors are in MntReply::status.
  [[nodiscard]] absl::Status Null();
  [[nodiscard]] absl::StatusOr<MntReply> Mnt(const std::string& path);
  [[nodiscard]] absl::Status Umnt(const std::string& path);
  [[nodiscard]] absl::Status Umntall();
  [[nodiscard]] absl::StatusOr<std::vector<MountRecord>> Dump();
  [[nodiscard]] absl::StatusOr<std::vector<ExportEntry>> Export();
  // EXPORT, decoded and checked but only counted: the number of entries.
  [[nodiscard]] absl::StatusOr<size_t> ExportCount();

  uint16_t local_port() const { return local_port_; }
  const std::string& local_address() const { return local_address_; }

 private:
  MountClient() = default;

  int fd_ = -1;
  __rpc_client* client_ = nullptr;
  int timeout_ms_ = 0;
  int version_ = 3;
  uint16_t local_port_ = 0;
  std::string local_address_;
};

}  // namespace mountclient

#endif  // BENCH_TOOLS_MOUNT_CLIENT_H_

// NfsdAvailable and CheckNoOtherResponder (declared in kernel_mode.h).
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "channel.h"
#include "kernel_mode.h"

namespace sharemgrd::kernel {

absl::StatusOr<bool> NfsdAvailable(const std::string& proc_root) {
  // export_features exists only inside the mounted nfsd file system; an
  // unmounted /proc/fs/nfsd is an empty folder.
  const std::string f = proc_root + "/fs/nfsd/export_features";
  struct stat st;
  if (stat(f.c_str(), &st) == 0) return true;
  if (errno == ENOENT || errno == ENOTDIR) return false;
  return absl::FailedPreconditionError(absl::StrCat(f, ": ", strerror(errno)));
}

namespace {

// The network namespace of process `pid` ("net:[INODE]"), or "" if it
// cannot be read.
std::string NetNamespace(const std::string& proc_root, const std::string& pid) {
  char target[64];
  const std::string link = absl::StrCat(proc_root, "/", pid, "/ns/net");
  const ssize_t n = readlink(link.c_str(), target, sizeof target - 1);
  return n > 0 ? std::string(target, static_cast<size_t>(n)) : std::string();
}

}  // namespace

absl::Status CheckNoOtherResponder(const std::string& proc_root) {
  DIR* procs = opendir(proc_root.c_str());
  if (procs == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat(proc_root, ": ", strerror(errno)));
  }
  const std::string self = std::to_string(getpid());
  // Each network namespace has its own nfsd and cache channels (a second
  // head in a container or namespace): only a responder in ours is one.
  const std::string own_net = NetNamespace(proc_root, self);
  const std::string caches[] = {kIpCache, kGidCache, kFhCache, kExportCache};
  absl::Status result = absl::OkStatus();
  while (dirent* e = readdir(procs)) {
    const std::string pid = e->d_name;
    if (pid.empty() ||
        pid.find_first_not_of("0123456789") != std::string::npos ||
        pid == self) {
      continue;
    }
    if (!own_net.empty()) {
      const std::string net = NetNamespace(proc_root, pid);
      if (!net.empty() && net != own_net) continue;
    }
    const std::string fd_dir = absl::StrCat(proc_root, "/", pid, "/fd");
    DIR* fds = opendir(fd_dir.c_str());
    if (fds == nullptr) continue;  // gone, or not ours to read
    while (dirent* f = readdir(fds)) {
      if (f->d_name[0] == '.') continue;
      char target[512];
      const std::string link = fd_dir + "/" + f->d_name;
      ssize_t n = readlink(link.c_str(), target, sizeof target - 1);
      if (n <= 0) continue;
      const std::string t(target, static_cast<size_t>(n));
      for (const std::string& c : caches) {
        const std::string tail = absl::StrCat("/net/rpc/", c, "/channel");
        if (t.size() < tail.size() ||
            t.compare(t.size() - tail.size(), tail.size(), tail) != 0) {
          continue;
        }
        std::string comm;
        std::ifstream(absl::StrCat(proc_root, "/", pid, "/comm")) >> comm;
        result = absl::FailedPreconditionError(absl::StrCat(
            "process ", pid, " (", comm.empty() ? "?" : comm,
            ") answers the kernel's ", c,
            " upcalls; end it first (systemctl kill nfs-mountd, which "
            "leaves nfs-server running; see sharemgrd(8), \"Switching a "
            "server from rpc.mountd\"): two responders would overwrite "
            "each other"));
        break;
      }
      if (!result.ok()) break;
    }
    closedir(fds);
    if (!result.ok()) break;
  }
  closedir(procs);
  return result;
}

}  // namespace sharemgrd::kernel

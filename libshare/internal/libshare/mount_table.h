// The mount table as /proc/self/mountinfo tells it: the one parser of that
// file in the project (the share-path rule's listing of mount points in
// libshare/src/dir_walk.cc, the daemon's file-system watch in
// sharemgrd/access/fs_watch.cc).
//
//   MountTable t = MountTable::Parse(text);
//   if (const MountTableEntry* m = t.Containing("/tank/home/alice/x")) {
//     // m->mount_point "/tank/home/alice", m->fstype "zfs", ...
//   }
//
// Pure: nothing here reads a file. Thread-compatible.
#ifndef LIBSHARE_MOUNT_TABLE_H_
#define LIBSHARE_MOUNT_TABLE_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"

namespace libshare {

// One mounted file system: where, what type, from what source (escapes
// undone). Also what the daemon records per share (sharemgrd/access/fs_watch.h).
struct MountTableEntry {
  std::string mount_point;
  std::string fstype;
  std::string source;
  bool operator==(const MountTableEntry& o) const {
    return mount_point == o.mount_point && fstype == o.fstype &&
           source == o.source;
  }
};

// One line of mountinfo ("ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS
// [OPTIONAL...] - TYPE SOURCE SUPER_OPTIONS"), without its newline. False
// for a line that does not parse or whose mount point is not absolute
// (the kernel writes none); `*out` is then unspecified.
bool ParseMountinfoLine(std::string_view line, MountTableEntry* out);

// A field of /proc/self/mountinfo with its escapes undone (the kernel
// writes space, tab, newline and backslash as \ooo).
std::string UnescapeMountinfo(std::string_view field);

class MountTable {
 public:
  // Lines that do not parse are skipped.
  static MountTable Parse(std::string_view text);
  // The mount containing `path` (absolute, normalized): the longest mount
  // point at or above it, the last mounted if several share it (on top).
  const MountTableEntry* Containing(std::string_view path) const;
  // The mount at `path` itself (the last mounted there), or nullptr.
  const MountTableEntry* MountedAt(std::string_view path) const;
  std::size_t size() const { return by_point_.size(); }

 private:
  absl::flat_hash_map<std::string, MountTableEntry> by_point_;
};

}  // namespace libshare

#endif  // LIBSHARE_MOUNT_TABLE_H_

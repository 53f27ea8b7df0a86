// `sharectl mounts`: the daemon's mount records (who has what mounted) as
// text columns or JSON. Pure functions; thread-safe.
#ifndef SHARECTL_MOUNTS_H_
#define SHARECTL_MOUNTS_H_

#include <string>
#include <vector>

#include "libshare/client.h"

namespace sharectl {

// One line per record: CLIENT PATH SINCE, under a header, SINCE in UTC
// (ISO 8601) or "-" for a record from before the daemon's last start.
// Nothing at all when there are no records.
std::string FormatMounts(const std::vector<libshare::MountInfo>& mounts);
// {"mounts": [{"client", "path", "since"}]}, since as the text above or
// null for a record from before the daemon's last start.
std::string FormatMountsJson(const std::vector<libshare::MountInfo>& mounts);

}  // namespace sharectl

#endif  // SHARECTL_MOUNTS_H_

#include "mounts.h"

#include "absl/time/time.h"
#include "json_writer.h"
#include "output.h"

namespace sharectl {
namespace {

std::string SinceText(int64_t since) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixSeconds(since),
                          absl::UTCTimeZone());
}

}  // namespace

std::string FormatMounts(const std::vector<libshare::MountInfo>& mounts) {
  if (mounts.empty()) return "";
  std::vector<std::vector<std::string>> rows = {{"CLIENT", "PATH", "SINCE"}};
  for (const libshare::MountInfo& m : mounts) {
    rows.push_back({m.client, ShownForTerminal(m.path),
                    m.since > 0 ? SinceText(m.since) : "-"});
  }
  return FormatColumns(rows);
}

std::string FormatMountsJson(const std::vector<libshare::MountInfo>& mounts) {
  JsonWriter w;
  w.BeginObject();
  w.Key("mounts");
  w.BeginArray();
  for (const libshare::MountInfo& m : mounts) {
    w.BeginObject();
    w.Key("client");
    w.String(m.client);
    w.StringMember("path", m.path);
    w.Key("since");
    if (m.since > 0) {
      w.String(SinceText(m.since));
    } else {
      w.Null();
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.str() + "\n";
}

}  // namespace sharectl

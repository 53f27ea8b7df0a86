#include "mounts.h"

#include "json_writer.h"
#include "output.h"

namespace sharectl {

std::string FormatMounts(const std::vector<libshare::MountInfo>& mounts) {
  if (mounts.empty()) return "";
  std::vector<std::vector<std::string>> rows = {{"CLIENT", "PATH", "SINCE"}};
  for (const libshare::MountInfo& m : mounts) {
    rows.push_back({m.client, ShownForTerminal(m.path),
                    m.since > 0 ? IsoTime(m.since) : "-"});
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
      w.String(IsoTime(m.since));
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

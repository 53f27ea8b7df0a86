#include "dump.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "commands.h"
#include "libshare/batch.h"
#include "libshare/shell_words.h"

namespace sharectl {

using libshare::GroupInfo;
using libshare::Operation;
using libshare::ShareInfo;

std::string FormatDump(const std::vector<GroupInfo>& groups,
                       const std::vector<ShareInfo>& shares) {
  std::vector<const GroupInfo*> sorted_groups;
  for (const auto& g : groups) sorted_groups.push_back(&g);
  std::sort(
      sorted_groups.begin(), sorted_groups.end(),
      [](const GroupInfo* a, const GroupInfo* b) { return a->name < b->name; });
  std::map<std::string, std::vector<const ShareInfo*>> by_group;
  for (const auto& s : shares) by_group[s.group].push_back(&s);
  size_t share_count = 0;
  size_t group_count = 0;
  std::string body;
  std::string managed;
  const auto line = [&body](const Operation& op) {
    absl::StrAppend(&body, libshare::JoinShellWords(OperationWords(op)), "\n");
  };
  for (const GroupInfo* g : sorted_groups) {
    if (!g->managed_by.empty()) {
      // A followed exports file's group: the daemon that follows the file
      // makes it, and a batch may not (it would be refused: "group ...
      // already exists", or managed by the file).
      const size_t n = by_group[g->name].size();
      absl::StrAppend(
          &managed, "# group ", g->name, " (", n, n == 1 ? " share" : " shares",
          ") is made by sharemgrd --follow-exports from ",
          libshare::JoinShellWords({g->managed_by}),
          ": not dumped; follow that file to recreate it\n");
      continue;
    }
    ++group_count;
    Operation create;
    create.type = Operation::Type::kCreateGroup;
    create.group = g->name;
    create.options = g->options;
    line(create);
    std::vector<const ShareInfo*>& mine = by_group[g->name];
    std::sort(mine.begin(), mine.end(),
              [](const ShareInfo* a, const ShareInfo* b) {
                return a->path < b->path;
              });
    for (const ShareInfo* s : mine) {
      Operation add;
      add.type = Operation::Type::kAddShare;
      add.group = g->name;
      add.path = s->path;
      add.options = s->options;
      add.description = s->description;
      add.resource = s->resource;
      line(add);
      ++share_count;
    }
    if (!g->enabled) {
      Operation disable;
      disable.type = Operation::Type::kDisableGroup;
      disable.group = g->name;
      line(disable);
    }
  }
  return absl::StrCat("# sharectl dump: ", group_count,
                      group_count == 1 ? " group, " : " groups, ", share_count,
                      share_count == 1 ? " share\n" : " shares\n", managed,
                      body);
}

}  // namespace sharectl
